//! PDF writer (lopdf): a real text PDF in the standard Helvetica fonts.
//!
//! US Letter pages with 1-inch margins; text in Helvetica (WinAnsiEncoding,
//! characters outside it become `?`), headings in Helvetica-Bold at larger
//! sizes, code in Courier. Lines are word-wrapped with the fonts' real widths;
//! a page ends when it is full and at `Block::PageBreak`. Tables are rows of
//! text (cells joined by ` | `, header row bold). Images that are 8-bit grey
//! or RGB PNGs are drawn as image XObjects (the PNG's own zlib data with the
//! PNG predictor, not re-encoded); other images are skipped. The Info
//! dictionary carries /Title. Output is deterministic (no dates, no /ID).

use lopdf::content::{Content, Operation};
use lopdf::{Dictionary, Document, Object, ObjectId, Stream, StringFormat, dictionary};

use crate::outline::{Block, Outline};
use crate::png::png_info;

const PAGE_WIDTH: f32 = 612.0;
const PAGE_HEIGHT: f32 = 792.0;
const MARGIN: f32 = 72.0;
const TEXT_WIDTH: f32 = PAGE_WIDTH - 2.0 * MARGIN;
const BODY_SIZE: f32 = 11.0;
const LIST_INDENT: f32 = 18.0;

/// The three fonts used, by resource name.
#[derive(Clone, Copy, PartialEq)]
enum Font {
    Regular,
    Bold,
    Mono,
}

impl Font {
    fn resource(self) -> &'static str {
        match self {
            Font::Regular => "F1",
            Font::Bold => "F2",
            Font::Mono => "F3",
        }
    }

    fn base_font(self) -> &'static str {
        match self {
            Font::Regular => "Helvetica",
            Font::Bold => "Helvetica-Bold",
            Font::Mono => "Courier",
        }
    }

    /// Width of `text` at `size` points.
    fn width(self, text: &str, size: f32) -> f32 {
        let units: u32 = text.chars().map(|c| self.char_units(c)).sum();
        units as f32 * size / 1000.0
    }

    fn char_units(self, c: char) -> u32 {
        let table = match self {
            Font::Mono => return 600,
            Font::Regular => &HELVETICA,
            Font::Bold => &HELVETICA_BOLD,
        };
        match c {
            ' '..='~' => u32::from(table[c as usize - 32]),
            _ => 556,
        }
    }
}

/// Advance widths (1/1000 em) of ASCII 32..=126, from the Adobe AFM files.
#[rustfmt::skip]
const HELVETICA: [u16; 95] = [
    278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556, 556,
    556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556, 1015, 667, 667, 722, 722, 667, 611, 778,
    722, 278, 500, 667, 556, 833, 722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278,
    278, 278, 469, 556, 333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556,
    556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584,
];
#[rustfmt::skip]
const HELVETICA_BOLD: [u16; 95] = [
    278, 333, 474, 556, 556, 889, 722, 238, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556, 556,
    556, 556, 556, 556, 556, 556, 333, 333, 584, 584, 584, 611, 975, 722, 722, 722, 722, 667, 611, 778,
    722, 278, 556, 722, 611, 833, 722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 333,
    278, 333, 584, 556, 333, 556, 611, 556, 611, 556, 333, 611, 611, 278, 278, 556, 278, 889, 611, 611,
    611, 611, 389, 556, 333, 611, 556, 778, 556, 556, 500, 389, 280, 389, 584,
];

/// The outline as a PDF.
pub fn to_pdf(outline: &Outline) -> anyhow::Result<Vec<u8>> {
    let mut layout = Layout::default();
    if !outline.title.is_empty() {
        layout.wrapped(&outline.title, Font::Bold, 22.0, 0.0);
        layout.gap(10.0);
    }
    for block in &outline.blocks {
        layout.block(block);
    }
    let pages = layout.finish();
    let mut bytes = Vec::new();
    assemble(&outline.title, pages)?.save_to(&mut bytes)?;
    Ok(bytes)
}

/// An image placed on a page.
struct PlacedImage {
    name: String,
    png: crate::png::PngInfo,
}

#[derive(Default)]
struct Page {
    ops: Vec<Operation>,
    images: Vec<PlacedImage>,
}

/// Flows blocks onto pages, top to bottom.
struct Layout {
    pages: Vec<Page>,
    current: Page,
    y: f32,
    image_count: usize,
}

impl Default for Layout {
    fn default() -> Self {
        Self {
            pages: Vec::new(),
            current: Page::default(),
            y: PAGE_HEIGHT - MARGIN,
            image_count: 0,
        }
    }
}

impl Layout {
    fn block(&mut self, block: &Block) {
        match block {
            Block::Heading { level, text } => {
                let size =
                    [18.0, 15.0, 13.0, 12.0, 11.0, 11.0][usize::from((*level).clamp(1, 6)) - 1];
                self.gap(8.0);
                self.ensure_space(size * 3.0); // keep a heading with what follows
                self.wrapped(text, Font::Bold, size, 0.0);
                self.gap(4.0);
            }
            Block::Paragraph(text) => self.paragraph(text),
            Block::Notes(text) => self.paragraph(&format!("Notes: {text}")),
            Block::Bullets(items) => self.list(items.iter().map(|i| ("\u{2022}".to_string(), i))),
            Block::Numbered(items) => self.list(
                items
                    .iter()
                    .enumerate()
                    .map(|(n, i)| (format!("{}.", n + 1), i)),
            ),
            Block::Table(rows) => self.table(rows),
            Block::Code(code) => self.code(code),
            Block::Image { png, .. } => self.image(png),
            Block::PageBreak => self.new_page(),
        }
    }

    fn paragraph(&mut self, text: &str) {
        self.wrapped(text, Font::Regular, BODY_SIZE, 0.0);
        self.gap(6.0);
    }

    fn list<'a>(&mut self, items: impl Iterator<Item = (String, &'a String)>) {
        for (marker, item) in items {
            let lines = wrap(item, Font::Regular, BODY_SIZE, TEXT_WIDTH - LIST_INDENT);
            for (i, line) in lines.iter().enumerate() {
                self.ensure_space(leading(BODY_SIZE));
                if i == 0 {
                    self.text_at(&marker, Font::Regular, BODY_SIZE, 4.0);
                }
                self.text_at(line, Font::Regular, BODY_SIZE, LIST_INDENT);
                self.y -= leading(BODY_SIZE);
            }
        }
        self.gap(6.0);
    }

    fn table(&mut self, rows: &[Vec<String>]) {
        for (i, row) in rows.iter().enumerate() {
            let font = if i == 0 { Font::Bold } else { Font::Regular };
            self.wrapped(&row.join(" | "), font, 10.0, 0.0);
        }
        self.gap(6.0);
    }

    fn code(&mut self, code: &str) {
        let size = 9.0;
        let max_chars = (TEXT_WIDTH / (0.6 * size)) as usize;
        for line in code.lines() {
            let chars: Vec<char> = line.chars().collect();
            for piece in chars.chunks(max_chars.max(1)) {
                self.line(&piece.iter().collect::<String>(), Font::Mono, size, 0.0);
            }
            if chars.is_empty() {
                self.y -= leading(size);
            }
        }
        self.gap(6.0);
    }

    fn image(&mut self, png: &[u8]) {
        let Some(info) = png_info(png) else { return };
        let scale = (TEXT_WIDTH / info.width as f32).min(3.0);
        let (w, h) = (info.width as f32 * scale, info.height as f32 * scale);
        let h = h.min(PAGE_HEIGHT - 2.0 * MARGIN);
        self.ensure_space(h);
        self.image_count += 1;
        let name = format!("Im{}", self.image_count);
        let bottom = self.y - h;
        self.current.ops.extend([
            Operation::new("q", vec![]),
            Operation::new(
                "cm",
                vec![
                    w.into(),
                    0.into(),
                    0.into(),
                    h.into(),
                    MARGIN.into(),
                    bottom.into(),
                ],
            ),
            Operation::new("Do", vec![Object::Name(name.clone().into_bytes())]),
            Operation::new("Q", vec![]),
        ]);
        self.current.images.push(PlacedImage { name, png: info });
        self.y = bottom - 8.0;
    }

    /// Word-wraps `text` to the text width and writes it line by line.
    fn wrapped(&mut self, text: &str, font: Font, size: f32, indent: f32) {
        for line in wrap(text, font, size, TEXT_WIDTH - indent) {
            self.line(&line, font, size, indent);
        }
    }

    fn line(&mut self, text: &str, font: Font, size: f32, indent: f32) {
        self.ensure_space(leading(size));
        self.text_at(text, font, size, indent);
        self.y -= leading(size);
    }

    /// Writes one line whose top is at the current y (baseline below it).
    fn text_at(&mut self, text: &str, font: Font, size: f32, indent: f32) {
        let baseline = self.y - size;
        self.current.ops.extend([
            Operation::new("BT", vec![]),
            Operation::new(
                "Tf",
                vec![Object::Name(font.resource().into()), size.into()],
            ),
            Operation::new("Td", vec![(MARGIN + indent).into(), baseline.into()]),
            Operation::new(
                "Tj",
                vec![Object::String(win_ansi(text), StringFormat::Literal)],
            ),
            Operation::new("ET", vec![]),
        ]);
    }

    fn gap(&mut self, points: f32) {
        self.y -= points;
    }

    fn ensure_space(&mut self, height: f32) {
        if self.y - height < MARGIN && !self.current.ops.is_empty() {
            self.new_page();
        }
    }

    fn new_page(&mut self) {
        if !self.current.ops.is_empty() {
            self.pages.push(std::mem::take(&mut self.current));
        }
        self.y = PAGE_HEIGHT - MARGIN;
    }

    fn finish(mut self) -> Vec<Page> {
        if !self.current.ops.is_empty() || self.pages.is_empty() {
            self.pages.push(self.current);
        }
        self.pages
    }
}

fn leading(size: f32) -> f32 {
    size * 1.3
}

/// Greedy word wrap; words wider than the line are split by characters.
fn wrap(text: &str, font: Font, size: f32, width: f32) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let candidate = if line.is_empty() {
            word.to_string()
        } else {
            format!("{line} {word}")
        };
        if font.width(&candidate, size) <= width {
            line = candidate;
            continue;
        }
        if !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        for c in word.chars() {
            if !line.is_empty() && font.width(&format!("{line}{c}"), size) > width {
                lines.push(std::mem::take(&mut line));
            }
            line.push(c);
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// Encodes text in WinAnsiEncoding; characters it lacks become `?`.
fn win_ansi(text: &str) -> Vec<u8> {
    text.chars().map(win_ansi_byte).collect()
}

fn win_ansi_byte(c: char) -> u8 {
    const HIGH: [(char, u8); 27] = [
        ('€', 0x80),
        ('‚', 0x82),
        ('ƒ', 0x83),
        ('„', 0x84),
        ('…', 0x85),
        ('†', 0x86),
        ('‡', 0x87),
        ('ˆ', 0x88),
        ('‰', 0x89),
        ('Š', 0x8a),
        ('‹', 0x8b),
        ('Œ', 0x8c),
        ('Ž', 0x8e),
        ('‘', 0x91),
        ('’', 0x92),
        ('“', 0x93),
        ('”', 0x94),
        ('•', 0x95),
        ('–', 0x96),
        ('—', 0x97),
        ('˜', 0x98),
        ('™', 0x99),
        ('š', 0x9a),
        ('›', 0x9b),
        ('œ', 0x9c),
        ('ž', 0x9e),
        ('Ÿ', 0x9f),
    ];
    match c {
        ' '..='~' | '\u{a0}'..='\u{ff}' => c as u32 as u8,
        '\t' => b' ',
        _ => HIGH
            .iter()
            .find(|(ch, _)| *ch == c)
            .map_or(b'?', |(_, b)| *b),
    }
}

/// A PDF text string: PDFDocEncoding-compatible ASCII as is, else UTF-16BE with a BOM.
fn text_string(text: &str) -> Object {
    if text.is_ascii() {
        return Object::String(text.as_bytes().to_vec(), StringFormat::Literal);
    }
    let mut bytes = vec![0xfe, 0xff];
    bytes.extend(text.encode_utf16().flat_map(u16::to_be_bytes));
    Object::String(bytes, StringFormat::Hexadecimal)
}

fn assemble(title: &str, pages: Vec<Page>) -> anyhow::Result<Document> {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let mut fonts = Dictionary::new();
    for font in [Font::Regular, Font::Bold, Font::Mono] {
        let id = doc.add_object(dictionary! {
            "Type" => "Font", "Subtype" => "Type1", "BaseFont" => font.base_font(), "Encoding" => "WinAnsiEncoding",
        });
        fonts.set(font.resource(), id);
    }
    let fonts_id = doc.add_object(fonts);
    let mut kids = Vec::new();
    for page in pages {
        kids.push(add_page(&mut doc, page, pages_id, fonts_id)?.into());
    }
    let count = kids.len() as i64;
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! { "Type" => "Pages", "Kids" => kids, "Count" => count }),
    );
    let catalog_id = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    let info_id = doc.add_object(dictionary! { "Title" => text_string(title), "Producer" => Object::string_literal("kts-sample") });
    doc.trailer.set("Root", catalog_id);
    doc.trailer.set("Info", info_id);
    doc.compress();
    Ok(doc)
}

fn add_page(
    doc: &mut Document,
    page: Page,
    parent: ObjectId,
    fonts: ObjectId,
) -> anyhow::Result<ObjectId> {
    let mut xobjects = Dictionary::new();
    for image in page.images {
        let id = doc.add_object(image_xobject(image.png));
        xobjects.set(image.name.into_bytes(), id);
    }
    let content = Content {
        operations: page.ops,
    }
    .encode()?;
    let content_id = doc.add_object(Stream::new(Dictionary::new(), content));
    let media_box: Vec<Object> = vec![0.into(), 0.into(), PAGE_WIDTH.into(), PAGE_HEIGHT.into()];
    Ok(doc.add_object(dictionary! {
        "Type" => "Page",
        "Parent" => parent,
        "MediaBox" => media_box,
        "Contents" => content_id,
        "Resources" => dictionary! { "Font" => fonts, "XObject" => xobjects },
    }))
}

/// The PNG's zlib data as is: FlateDecode with the PNG predictor undoes the
/// per-row filters, so no decoding is needed here.
fn image_xobject(png: crate::png::PngInfo) -> Stream {
    let colour_space = if png.colors == 1 {
        "DeviceGray"
    } else {
        "DeviceRGB"
    };
    let dict = dictionary! {
        "Type" => "XObject",
        "Subtype" => "Image",
        "Width" => i64::from(png.width),
        "Height" => i64::from(png.height),
        "ColorSpace" => colour_space,
        "BitsPerComponent" => 8,
        "Filter" => "FlateDecode",
        "DecodeParms" => dictionary! {
            "Predictor" => 15, "Colors" => i64::from(png.colors), "BitsPerComponent" => 8, "Columns" => i64::from(png.width),
        },
    };
    let mut stream = Stream::new(dict, png.idat);
    stream.allows_compression = false;
    stream
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_within_the_width() {
        let text = "word ".repeat(200);
        let lines = wrap(&text, Font::Regular, 11.0, 200.0);
        assert!(lines.len() > 5);
        assert!(lines.iter().all(|l| Font::Regular.width(l, 11.0) <= 200.0));
        assert_eq!(wrap("", Font::Regular, 11.0, 100.0), vec![String::new()]);
        assert!(wrap(&"x".repeat(500), Font::Bold, 11.0, 100.0).len() > 1);
    }

    #[test]
    fn win_ansi_maps_or_replaces() {
        assert_eq!(
            win_ansi("a(é)—•✓"),
            vec![b'a', b'(', 0xe9, b')', 0x97, 0x95, b'?']
        );
    }
}
