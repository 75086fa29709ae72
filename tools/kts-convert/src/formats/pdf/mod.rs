//! PDF: text page by page with pdf-extract; metadata, page tree checks and
//! images (see [`image_files`]) with lopdf; pages without text read with
//! OCR (see [`ocr`]).
//!
//! pdf-extract trusts the file: it follows form XObjects recursively without a
//! depth limit, follows `/Parent` links without cycle checks and panics on many
//! malformed objects. Before handing it a document we therefore make the
//! document safe to walk (see [`safety`]) and extract each page under
//! `catch_unwind`, so one broken page costs only that page.

use std::collections::{BTreeMap, HashMap};
use std::panic::{AssertUnwindSafe, catch_unwind};

use kts_record::ErrorCode;
use lopdf::{Document, Object, ObjectId};
use serde_json::{Map, Value};

use super::{Context, ConvertError, Converted};
use crate::ocr::OcrMode;
use layout::{Line, PageLayout};

pub fn convert(bytes: &[u8], ctx: &mut Context) -> Result<Converted, ConvertError> {
    let mut doc = load(bytes)?;
    let pages = doc.get_pages();
    if pages.is_empty() {
        return Err(ConvertError::corrupt(
            "the PDF has no readable pages (damaged page tree?)",
        ));
    }
    if pages.len() > ctx.limits.max_pdf_pages {
        return Err(ConvertError::new(
            ErrorCode::TooLarge,
            format!(
                "the PDF has {} pages, more than the limit of {}",
                pages.len(),
                ctx.limits.max_pdf_pages
            ),
        ));
    }
    streams::normalise(&mut doc);
    if let Some(damage) = streams::damaged_content(&doc, &pages) {
        return Err(ConvertError::corrupt(damage));
    }
    fonts::normalise(&mut doc);
    let safe = safety::make_safe(&mut doc, &pages);
    if safe.recursive {
        return Err(ConvertError::corrupt(
            "recursive XObjects (a drawing that contains itself)",
        ));
    }
    let page_images = safe.images;
    let image_links = image_links(&doc, &pages, &page_images, ctx);
    let scan_sized = ocr::scan_sized_pages(&doc, &pages, &page_images);
    safety::blank_images(&mut doc, page_images.into_values().flatten());

    let mut glyphs = 0;
    let mut unreadable_pages = 0;
    let mut page_lines = BTreeMap::new();
    for &number in pages.keys() {
        let page = page_text(&doc, number);
        glyphs += page.glyphs;
        unreadable_pages += usize::from(page.failed);
        page_lines.insert(number, page.lines);
    }
    headings::mark(&mut page_lines, &outline::entries(&doc, &pages));
    let mut page_paragraphs: BTreeMap<u32, Vec<String>> = page_lines
        .iter()
        .map(|(&number, lines)| (number, line_paragraphs(lines)))
        .collect();
    let mut warnings = Vec::new();
    let ocr_pages = ocr::read_pages(
        bytes,
        &mut page_paragraphs,
        &scan_sized,
        ctx.ocr,
        &mut warnings,
    )?;

    let mut markdown = String::new();
    let mut has_text = false;
    for (&number, page_id) in &pages {
        let paragraphs = &page_paragraphs[&number];
        has_text |= !paragraphs.is_empty();
        if !markdown.is_empty() {
            markdown.push('\n');
        }
        markdown.push_str(&format!("<!-- page: {number} -->\n"));
        for paragraph in paragraphs {
            markdown.push('\n');
            markdown.push_str(paragraph);
            markdown.push('\n');
        }
        for link in image_links.get(page_id).into_iter().flatten() {
            markdown.push_str(&format!("\n![image]({link})\n"));
        }
    }
    // A page that draws no glyph at all is a valid page without text (vector
    // art, a scan); only glyphs that cannot be decoded, or pages that cannot
    // be read, make the document unusable.
    if !has_text && ocr_pages == 0 && (glyphs > 0 || unreadable_pages > 0) {
        return Err(no_text_error(glyphs));
    }
    let (title, mut properties) = info_properties(&doc);
    properties.insert("pages".into(), Value::from(pages.len()));
    if ocr_pages > 0 {
        properties.insert("ocr_pages".into(), Value::from(ocr_pages));
    }
    // With OCR off, the pages without text have had their warning.
    if !has_text && ctx.ocr.mode != OcrMode::Never {
        warnings.push("no text, neither in a text layer nor found by OCR".into());
    }
    if !warnings.is_empty() {
        properties.insert("warnings".into(), Value::from(warnings));
    }
    Ok(Converted {
        markdown,
        title,
        properties,
    })
}

fn no_text_error(glyphs: usize) -> ConvertError {
    let message = if glyphs == 0 {
        "the PDF's pages cannot be read (their content is malformed)"
    } else {
        "the PDF's text cannot be decoded (its fonts have no Unicode mapping)"
    };
    ConvertError::new(ErrorCode::Empty, message)
}

/// Parses the file (rebuilding a broken cross-reference table if need be)
/// and removes an empty-password encryption.
fn load(bytes: &[u8]) -> Result<Document, ConvertError> {
    let header_at = bytes.windows(5).take(1024).position(|w| w == b"%PDF-");
    if header_at.is_none() {
        return Err(ConvertError::corrupt("not a PDF file (no %PDF header)"));
    }
    let repaired = || {
        xref::rebuilt(bytes)
            .and_then(|repaired| Document::load_mem(&repaired).ok())
            .filter(|doc| !doc.get_pages().is_empty())
    };
    let doc = match Document::load_mem(bytes) {
        // A wrong stream /Length makes lopdf drop the object: prefer a repaired
        // copy when the direct load lost page contents.
        Ok(doc) if xref::lost_contents(&doc) => repaired().unwrap_or(doc),
        Ok(doc) => doc,
        Err(error) if is_password_error(&error) => return Err(password_protected()),
        Err(error) => repaired()
            .ok_or_else(|| ConvertError::corrupt(format!("the PDF cannot be parsed: {error}")))?,
    };
    // lopdf decrypts a document whose user password is empty while loading;
    // one it could not decrypt still names an /Encrypt dictionary.
    if doc.trailer.has(b"Encrypt") && !doc.was_encrypted() {
        return Err(password_protected());
    }
    Ok(doc)
}

fn is_password_error(error: &lopdf::Error) -> bool {
    matches!(
        error,
        lopdf::Error::InvalidPassword | lopdf::Error::Decryption(_)
    )
}

fn password_protected() -> ConvertError {
    ConvertError::new(
        ErrorCode::Encrypted,
        "password-protected PDF: it cannot be opened without its password",
    )
}

/// A page's lines as laid out from pdf-extract's glyphs, and how many glyphs
/// it drew (glyphs without a Unicode mapping come out as nothing).
#[derive(Default)]
struct PageText {
    lines: Vec<Line>,
    glyphs: usize,
    /// Neither pdf-extract nor lopdf could read the page.
    failed: bool,
}

/// The page's text, or nothing if the page breaks pdf-extract.
fn page_text(doc: &Document, number: u32) -> PageText {
    let result = catch_unwind(AssertUnwindSafe(|| {
        let mut layout = PageLayout::default();
        pdf_extract::output_doc_page(doc, &mut layout, number)?;
        Ok::<_, pdf_extract::OutputError>(PageText {
            glyphs: layout.glyphs,
            lines: layout.into_lines(),
            failed: false,
        })
    }));
    match result {
        Ok(Ok(page)) => page,
        // pdf-extract gave up on the page: lopdf's plainer extraction.
        _ => catch_unwind(AssertUnwindSafe(|| doc.extract_text(&[number])))
            .ok()
            .and_then(Result::ok)
            .map(|text| PageText {
                glyphs: text.chars().filter(|c| !c.is_whitespace()).count(),
                lines: text.lines().map(Line::plain).collect(),
                failed: false,
            })
            .unwrap_or(PageText {
                failed: true,
                ..PageText::default()
            }),
    }
}

/// Rebuilds paragraphs from extracted text (see [`line_paragraphs`]).
pub(crate) fn paragraphs(text: &str) -> Vec<String> {
    let lines: Vec<Line> = text.lines().map(Line::plain).collect();
    line_paragraphs(&lines)
}

/// Rebuilds paragraphs from extracted lines: a blank line ends a paragraph,
/// wrapped lines are joined (a word hyphenated across lines is rejoined), a
/// line that starts a list item starts a new line, and the lines of a
/// heading become a Markdown heading of their own.
fn line_paragraphs(lines: &[Line]) -> Vec<String> {
    let mut paragraphs = Vec::new();
    let mut current = String::new();
    let mut heading = None;
    for line in lines {
        let text = logical_order(&clean_line(&expand_ligatures(&line.text)));
        if text.is_empty() || line.heading != heading {
            push_paragraph(&mut paragraphs, &mut current, heading);
            heading = line.heading;
        }
        if text.is_empty() {
            continue;
        }
        if current.is_empty() {
            current.push_str(&text);
        } else if heading.is_none() && starts_list_item(&text) {
            current.push('\n');
            current.push_str(&text);
        } else if let Some(stem) = hyphenated_stem(&current, &text) {
            current.truncate(stem);
            current.push_str(&text);
        } else {
            current.push(' ');
            current.push_str(&text);
        }
    }
    push_paragraph(&mut paragraphs, &mut current, heading);
    paragraphs
}

/// Ends the paragraph being built, as a Markdown heading of `heading`'s
/// level if it is one; other text that starts with `#` (a table's "# of
/// items" column) is escaped so as not to read as a heading.
fn push_paragraph(paragraphs: &mut Vec<String>, current: &mut String, heading: Option<usize>) {
    if current.is_empty() {
        return;
    }
    let text = std::mem::take(current);
    paragraphs.push(match heading {
        Some(level) => format!("{} {text}", "#".repeat(level)),
        None if text.starts_with('#') => format!("\\{text}"),
        None => text,
    });
}

/// Collapses runs of whitespace and drops control characters.
fn clean_line(line: &str) -> String {
    let visible: String = line
        .chars()
        .filter(|c| !c.is_control() || *c == '\t')
        .collect();
    visible.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// pdf-extract emits right-to-left script in visual order (each word's
/// letters reversed, words right to left); reverse such a line, then put the
/// left-to-right runs inside it (numbers, Latin words) back in order.
fn logical_order(line: &str) -> String {
    if !line.chars().any(is_rtl) {
        return line.to_string();
    }
    let reversed: Vec<char> = line.chars().rev().collect();
    let mut out = String::with_capacity(line.len());
    let mut run: Vec<char> = Vec::new();
    for &c in &reversed {
        let ltr = c.is_alphanumeric() && !is_rtl(c);
        let joins_run = !run.is_empty()
            && !is_rtl(c)
            && (ltr
                || matches!(
                    c,
                    ' ' | '.' | ',' | ':' | '-' | '_' | '/' | '%' | '@' | '+' | '#' | '&' | '='
                ));
        if ltr || joins_run {
            run.push(c);
        } else {
            flush_ltr_run(&mut out, &mut run);
            out.push(c);
        }
    }
    flush_ltr_run(&mut out, &mut run);
    out
}

/// A letter of a right-to-left script (Hebrew, Arabic, Syriac, Thaana, ...).
pub(super) fn is_rtl(c: char) -> bool {
    matches!(c, '\u{0590}'..='\u{08FF}' | '\u{FB1D}'..='\u{FDFF}' | '\u{FE70}'..='\u{FEFF}')
}

/// Writes a left-to-right run back in reading order; separators it picked up
/// after its last letter stay where they were.
fn flush_ltr_run(out: &mut String, run: &mut Vec<char>) {
    let letters = run
        .iter()
        .rposition(|c| c.is_alphanumeric())
        .map_or(0, |i| i + 1);
    out.extend(run[..letters].iter().rev());
    out.extend(&run[letters..]);
    run.clear();
}

fn starts_list_item(line: &str) -> bool {
    let digits = line.trim_start_matches(|c: char| c.is_ascii_digit());
    let numbered = digits.len() < line.len()
        && line.len() - digits.len() <= 3
        && (digits.starts_with(". ") || digits.starts_with(") "));
    numbered || starts_with_bullet(line)
}

/// A bullet, dash or box, as list items start with.
pub(super) fn starts_with_bullet(line: &str) -> bool {
    line.starts_with([
        '•', '◦', '▪', '‣', '–', '-', '*', '·', '○', '■', '□', '\u{F0B7}',
    ])
}

const SOFT_HYPHEN: char = '\u{AD}';

/// If `current` ends with a soft hyphen (U+00AD, a hyphenation point by
/// definition), or with `word-` and `next` continues in lowercase, the byte
/// length of `current` without the hyphen.
fn hyphenated_stem(current: &str, next: &str) -> Option<usize> {
    if let Some(stem) = current.strip_suffix(SOFT_HYPHEN) {
        return Some(stem.len());
    }
    let stem = current.strip_suffix('-')?;
    let before_hyphen = stem.chars().next_back()?;
    let after = next.chars().next()?;
    (before_hyphen.is_alphabetic() && after.is_lowercase()).then_some(stem.len())
}

pub(super) fn expand_ligatures(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\u{FB00}' => out.push_str("ff"),
            '\u{FB01}' => out.push_str("fi"),
            '\u{FB02}' => out.push_str("fl"),
            '\u{FB03}' => out.push_str("ffi"),
            '\u{FB04}' => out.push_str("ffl"),
            '\u{FB05}' | '\u{FB06}' => out.push_str("st"),
            _ => out.push(c),
        }
    }
    out
}

/// Stores each page's images (those [`image_files`] keeps); returns their
/// links per page.
fn image_links(
    doc: &Document,
    pages: &BTreeMap<u32, ObjectId>,
    page_images: &HashMap<ObjectId, Vec<ObjectId>>,
    ctx: &mut Context,
) -> HashMap<ObjectId, Vec<String>> {
    let mut links = HashMap::new();
    for page in pages.values() {
        let images = page_images.get(page).into_iter().flatten();
        links.insert(
            *page,
            images.filter_map(|&id| image_link(doc, id, ctx)).collect(),
        );
    }
    links
}

fn image_link(doc: &Document, id: ObjectId, ctx: &mut Context) -> Option<String> {
    let (bytes, extension) = image_files::encoded(doc, id, ctx.ocr.max_pixels)?;
    Some(ctx.images.add(&bytes, extension))
}

/// Title and properties from the document information dictionary.
fn info_properties(doc: &Document) -> (Option<String>, Map<String, Value>) {
    let mut properties = Map::new();
    let Some(info) = doc
        .trailer
        .get_deref(b"Info", doc)
        .and_then(Object::as_dict)
        .ok()
    else {
        return (None, properties);
    };
    let text = |key: &[u8]| {
        let value = info.get_deref(key, doc).ok()?;
        let text = lopdf::decode_text_string(value).ok()?;
        let text = text.trim_matches(|c: char| c.is_whitespace() || c == '\0');
        (!text.is_empty()).then(|| text.to_string())
    };
    for (key, name) in [
        (&b"Author"[..], "author"),
        (b"Creator", "creator"),
        (b"Producer", "producer"),
        (b"Subject", "description"),
        (b"Keywords", "keywords"),
    ] {
        if let Some(value) = text(key) {
            properties.insert(name.into(), Value::String(value));
        }
    }
    for (key, name) in [(&b"CreationDate"[..], "created"), (b"ModDate", "modified")] {
        if let Some(date) = text(key).and_then(|raw| pdf_date(&raw)) {
            properties.insert(name.into(), Value::String(date));
        }
    }
    (text(b"Title"), properties)
}

/// `D:YYYYMMDDHHmmSS+HH'mm'` (any tail may be missing) as ISO 8601.
fn pdf_date(raw: &str) -> Option<String> {
    let raw = raw.strip_prefix("D:").unwrap_or(raw);
    let digits: String = raw.chars().take_while(char::is_ascii_digit).collect();
    if digits.len() < 4 {
        return None;
    }
    let part = |from: usize, default: &'static str| {
        digits.get(from..from + 2).unwrap_or(default).to_string()
    };
    let date = format!("{}-{}-{}", &digits[..4], part(4, "01"), part(6, "01"));
    if digits.len() < 12 {
        return Some(date);
    }
    let time = format!("{}:{}:{}", part(8, "00"), part(10, "00"), part(12, "00"));
    let zone = match raw[digits.len()..].chars().next() {
        Some('Z') => "Z".to_string(),
        Some(sign @ ('+' | '-')) => {
            let zone: String = raw[digits.len() + 1..]
                .chars()
                .filter(char::is_ascii_digit)
                .collect();
            match (zone.get(..2), zone.get(2..4)) {
                (Some(h), Some(m)) => format!("{sign}{h}:{m}"),
                (Some(h), None) => format!("{sign}{h}:00"),
                _ => String::new(),
            }
        }
        _ => String::new(),
    };
    Some(format!("{date}T{time}{zone}"))
}

mod image_files;

mod layout;

mod headings;

mod outline;

mod ocr;

mod xref;

mod safety;

mod streams;

mod fonts;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::Limits;
    use crate::images::{Image, ImageSink};
    use crate::ocr::Ocr;
    use lopdf::content::{Content, Operation};
    use lopdf::{Dictionary, Stream, dictionary};

    /// A PDF with one page per text, each drawn in Helvetica; `form_cycle`
    /// makes page 1 draw a form XObject that draws itself.
    fn pdf(texts: &[&str], form_cycle: bool) -> Vec<u8> {
        let mut doc = Document::with_version("1.5");
        let pages_id = doc.new_object_id();
        let font_id = doc.add_object(dictionary! {
            "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
        });
        let form_id = doc.new_object_id();
        let form_content = b"BT /F1 12 Tf 72 600 Td (looping form) Tj ET /X1 Do".to_vec();
        let form = Stream::new(
            dictionary! {
                "Type" => "XObject", "Subtype" => "Form", "BBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
                "Resources" => dictionary! { "Font" => dictionary! { "F1" => font_id }, "XObject" => dictionary! { "X1" => form_id } },
            },
            form_content,
        );
        doc.objects.insert(form_id, Object::Stream(form));
        let mut kids = Vec::new();
        for (i, text) in texts.iter().enumerate() {
            let mut operations = vec![
                Operation::new("BT", vec![]),
                Operation::new("Tf", vec!["F1".into(), 12.into()]),
                Operation::new("Td", vec![72.into(), 700.into()]),
                Operation::new("Tj", vec![Object::string_literal(*text)]),
                Operation::new("ET", vec![]),
            ];
            if form_cycle && i == 0 {
                operations.push(Operation::new("Do", vec!["X1".into()]));
            }
            let content = Content { operations }.encode().unwrap();
            let content_id = doc.add_object(Stream::new(dictionary! {}, content));
            let page_id = doc.add_object(dictionary! {
                "Type" => "Page", "Parent" => pages_id, "Contents" => content_id,
                "Resources" => dictionary! { "Font" => dictionary! { "F1" => font_id }, "XObject" => dictionary! { "X1" => form_id } },
            });
            kids.push(page_id.into());
        }
        doc.objects.insert(
            pages_id,
            Object::Dictionary(dictionary! {
                "Type" => "Pages", "Count" => texts.len() as i64, "Kids" => kids,
                "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
            }),
        );
        let catalog_id = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
        let info_id =
            doc.add_object(dictionary! { "Title" => Object::string_literal("Two pages") });
        doc.trailer.set("Root", catalog_id);
        doc.trailer.set("Info", info_id);
        let mut bytes = Vec::new();
        doc.save_to(&mut bytes).unwrap();
        bytes
    }

    /// Converts without OCR: these tests are about the text layer.
    fn run(bytes: &[u8], limits: &Limits) -> Result<Converted, ConvertError> {
        let mut images = ImageSink::default();
        convert(
            bytes,
            &mut Context {
                limits,
                images: &mut images,
                ocr: &Ocr {
                    mode: OcrMode::Never,
                    ..Ocr::default()
                },
            },
        )
    }

    /// Converts without OCR, reading images of up to `max_pixels` samples,
    /// and returns the images stored.
    fn run_keeping_images(bytes: &[u8], max_pixels: u64) -> (String, Vec<Image>) {
        let mut images = ImageSink::default();
        let converted = convert(
            bytes,
            &mut Context {
                limits: &Limits::default(),
                images: &mut images,
                ocr: &Ocr {
                    mode: OcrMode::Never,
                    max_pixels,
                    ..Ocr::default()
                },
            },
        )
        .unwrap();
        (converted.markdown, images.into_images())
    }

    /// A one-page PDF with a line of text that draws `images` through a
    /// form XObject.
    fn pdf_drawing_through_a_form(images: Vec<Stream>) -> Vec<u8> {
        let mut doc = Document::with_version("1.5");
        let mut xobjects = dictionary! {};
        let mut form_content = String::new();
        for (i, image) in images.into_iter().enumerate() {
            let name = format!("Im{i}");
            form_content.push_str(&format!("q 100 0 0 100 0 0 cm /{name} Do Q\n"));
            xobjects.set(name, doc.add_object(image));
        }
        let form_id = doc.add_object(Stream::new(
            dictionary! {
                "Type" => "XObject", "Subtype" => "Form", "BBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
                "Resources" => dictionary! { "XObject" => xobjects },
            },
            form_content.into_bytes(),
        ));
        let font_id = doc.add_object(helvetica());
        let content = b"BT /F1 12 Tf 72 700 Td (Figure below) Tj ET /Fm1 Do".to_vec();
        let resources = dictionary! {
            "Font" => dictionary! { "F1" => font_id }, "XObject" => dictionary! { "Fm1" => form_id },
        };
        page_pdf(doc, Stream::new(dictionary! {}, content), resources)
    }

    fn image(width: i64, height: i64, colour_space: Object, samples: Vec<u8>) -> Stream {
        let mut stream = Stream::new(
            dictionary! {
                "Type" => "XObject", "Subtype" => "Image", "Width" => width, "Height" => height,
                "ColorSpace" => colour_space, "BitsPerComponent" => 8,
            },
            samples,
        );
        stream.compress().unwrap();
        stream
    }

    /// A PNG's width, height, bit depth, colour type, palette and inflated
    /// scanlines.
    fn read_png(png: &[u8]) -> (u32, u32, u8, u8, Vec<u8>, Vec<u8>) {
        use std::io::Read;
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
        let (mut header, mut palette, mut idat) = (Vec::new(), Vec::new(), Vec::new());
        let mut at = 8;
        while at + 8 <= png.len() {
            let length = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
            let data = &png[at + 8..at + 8 + length];
            match &png[at + 4..at + 8] {
                b"IHDR" => header = data.to_vec(),
                b"PLTE" => palette = data.to_vec(),
                b"IDAT" => idat.extend_from_slice(data),
                _ => {}
            }
            at += 12 + length;
        }
        let mut scanlines = Vec::new();
        flate2::read::ZlibDecoder::new(&idat[..])
            .read_to_end(&mut scanlines)
            .unwrap();
        let number = |i: usize| u32::from_be_bytes(header[i..i + 4].try_into().unwrap());
        (
            number(0),
            number(4),
            header[8],
            header[9],
            palette,
            scanlines,
        )
    }

    #[test]
    fn images_drawn_through_forms_are_stored_as_jpeg_or_png() {
        let rgb: Vec<u8> = (0..40 * 40 * 3).map(|i| (i % 251) as u8).collect();
        let fake_jpeg = b"\xFF\xD8\xFF\xE0 JPEG data".to_vec();
        let jpeg_hex: String = fake_jpeg.iter().map(|b| format!("{b:02x}")).collect();
        let jpeg = Stream::new(
            dictionary! {
                "Type" => "XObject", "Subtype" => "Image", "Width" => 40, "Height" => 40,
                "ColorSpace" => "DeviceRGB", "BitsPerComponent" => 8,
                "Filter" => vec!["ASCIIHexDecode".into(), "DCTDecode".into()],
            },
            format!("{jpeg_hex}>").into_bytes(),
        );
        let palette = Object::string_literal(vec![255, 0, 0, 0, 0, 255]);
        let indexed_space = vec!["Indexed".into(), "DeviceRGB".into(), 1.into(), palette];
        let indexes: Vec<u8> = (0..40 * 40).map(|i| (i % 2) as u8).collect();
        let bytes = pdf_drawing_through_a_form(vec![
            image(40, 40, "DeviceRGB".into(), rgb.clone()),
            jpeg,
            image(40, 40, indexed_space.into(), indexes.clone()),
            image(8, 8, "DeviceGray".into(), vec![0; 64]), // an icon
            image(40, 40, "DeviceCMYK".into(), vec![0; 40 * 40 * 4]),
        ]);

        let (markdown, images) = run_keeping_images(&bytes, 50_000_000);
        let extensions: Vec<&str> = images.iter().map(|i| i.extension.as_str()).collect();
        assert_eq!(extensions, ["png", "jpg", "png"], "{markdown}");
        assert_eq!(
            markdown.matches("![image](images/").count(),
            3,
            "{markdown}"
        );
        assert!(markdown.contains("Figure below"), "{markdown}");

        let (width, height, depth, colour_type, _, scanlines) = read_png(&images[0].bytes);
        assert_eq!((width, height, depth, colour_type), (40, 40, 8, 2));
        let rows: Vec<u8> = rgb
            .chunks(40 * 3)
            .flat_map(|row| std::iter::once(0).chain(row.iter().copied()))
            .collect();
        assert_eq!(scanlines, rows);
        assert_eq!(images[1].bytes, fake_jpeg);
        let (_, _, _, colour_type, palette, scanlines) = read_png(&images[2].bytes);
        assert_eq!(colour_type, 3);
        assert_eq!(palette, [255, 0, 0, 0, 0, 255]);
        assert_eq!(scanlines[1..41], indexes[..40]);

        // Samples beyond the limit are not decoded; JPEG data is kept as it is.
        let (_, images) = run_keeping_images(&bytes, 40 * 40 * 3 - 1);
        let extensions: Vec<&str> = images.iter().map(|i| i.extension.as_str()).collect();
        assert_eq!(extensions, ["jpg", "png"]);
    }

    #[test]
    fn png_predicted_images_come_out_with_their_pixels() {
        let png = kts_sample::tiny_png(64, 48, 3);
        let outline = kts_sample::Outline::new("Picture").block(kts_sample::Block::Image {
            png: png.clone(),
            alt: "gradient".into(),
        });
        let pdf = kts_sample::render(&outline, kts_sample::Format::Pdf).unwrap();
        let (_, images) = run_keeping_images(&pdf, 50_000_000);
        assert_eq!(images.len(), 1);
        let (width, height, _, colour_type, _, scanlines) = read_png(&images[0].bytes);
        assert_eq!((width, height, colour_type), (64, 48, 2));
        assert_eq!(scanlines, read_png(&png).5);
    }

    #[test]
    fn each_page_gets_a_marker_and_its_own_text() {
        let converted = run(
            &pdf(&["Hello first page", "Second page text"], false),
            &Limits::default(),
        )
        .unwrap();
        let markdown = converted.markdown;
        let second = markdown
            .find("<!-- page: 2 -->")
            .expect("second page marker");
        assert!(markdown.starts_with("<!-- page: 1 -->\n"), "{markdown}");
        assert!(
            markdown[..second].contains("Hello first page"),
            "{markdown}"
        );
        assert!(
            markdown[second..].contains("Second page text"),
            "{markdown}"
        );
        assert_eq!(markdown.matches("<!-- page:").count(), 2);
        assert_eq!(converted.title.as_deref(), Some("Two pages"));
        assert_eq!(converted.properties["pages"], 2);
    }

    #[test]
    fn a_self_drawing_form_is_corrupt() {
        let error = run(&pdf(&["Cover"], true), &Limits::default()).unwrap_err();
        assert_eq!(error.code, ErrorCode::Corrupt);
        assert!(error.message.contains("recursive XObjects"), "{error:?}");
    }

    /// A one-page PDF whose page content is `content` under `filter`, drawn
    /// with `font` as /F1.
    fn one_page(content: Vec<u8>, filter: Option<&str>, font: Dictionary) -> Vec<u8> {
        let mut doc = Document::with_version("1.5");
        let font_id = doc.add_object(font);
        let mut dict = dictionary! {};
        if let Some(filter) = filter {
            dict.set("Filter", Object::Name(filter.as_bytes().to_vec()));
        }
        let resources = dictionary! { "Font" => dictionary! { "F1" => font_id } };
        page_pdf(doc, Stream::new(dict, content), resources)
    }

    /// `doc` with one page that draws `content` with `resources`, saved.
    fn page_pdf(mut doc: Document, content: Stream, resources: Dictionary) -> Vec<u8> {
        let pages_id = doc.new_object_id();
        let content_id = doc.add_object(content);
        let page_id = doc.add_object(dictionary! {
            "Type" => "Page", "Parent" => pages_id, "Contents" => content_id,
            "Resources" => resources,
        });
        doc.objects.insert(
            pages_id,
            Object::Dictionary(dictionary! {
                "Type" => "Pages", "Count" => 1, "Kids" => vec![page_id.into()],
                "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
            }),
        );
        let catalog_id = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
        doc.trailer.set("Root", catalog_id);
        let mut bytes = Vec::new();
        doc.save_to(&mut bytes).unwrap();
        bytes
    }

    fn helvetica() -> Dictionary {
        dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica" }
    }

    #[test]
    fn a_pdf_without_xref_and_with_a_wrong_length_still_converts() {
        let content = "BT /F1 24 Tf 100 700 Td (Hello repaired world) Tj ET";
        let bytes = format!(
            "%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n\
             2 0 obj\n<< /Type /Pages /Kids [ 3 0 R ] /Count 1 >>\nendobj\n\
             3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [ 0 0 612 792 ] /Contents 4 0 R\n\
             /Resources << /Font << /F1 5 0 R >> >> >>\nendobj\n\
             4 0 obj\n<< /Length 12 >>\nstream\n{content}\nendstream\nendobj\n\
             5 0 obj\n<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>\nendobj\n\
             trailer\n<< /Size 6 /Root 1 0 R >>\n%%EOF\n"
        );
        let markdown = run(bytes.as_bytes(), &Limits::default()).unwrap().markdown;
        assert!(markdown.contains("Hello repaired world"), "{markdown}");
    }

    #[test]
    fn filters_lopdf_lacks_are_decoded() {
        let content = b"BT /F1 12 Tf 72 700 Td (Hex encoded text) Tj ET";
        let hex: String = content.iter().map(|b| format!("{b:02x}")).collect();
        let bytes = one_page(
            format!("{hex}>").into_bytes(),
            Some("ASCIIHexDecode"),
            helvetica(),
        );
        let markdown = run(&bytes, &Limits::default()).unwrap().markdown;
        assert!(markdown.contains("Hex encoded text"), "{markdown}");
    }

    #[test]
    fn a_content_stream_that_does_not_inflate_is_corrupt() {
        let mut stream = Stream::new(
            dictionary! {},
            b"BT /F1 12 Tf 72 700 Td (Damaged text) Tj ET".to_vec(),
        );
        stream.compress().unwrap();
        let mut data = stream.content.clone();
        let last = data.len() - 1;
        data[last] ^= 0xFF; // a wrong Adler-32 checksum, as in a damaged file
        let error = run(
            &one_page(data, Some("FlateDecode"), helvetica()),
            &Limits::default(),
        )
        .unwrap_err();
        assert_eq!(error.code, ErrorCode::Corrupt);
        assert!(error.message.starts_with("page 1:"), "{error:?}");
    }

    #[test]
    fn a_page_without_text_is_a_document_without_text() {
        let bytes = one_page(b"0 0 m 100 100 l S".to_vec(), None, helvetica());
        let markdown = run(&bytes, &Limits::default()).unwrap().markdown;
        assert_eq!(markdown.trim(), "<!-- page: 1 -->");
    }

    #[test]
    fn identity_fonts_without_a_unicode_cmap_are_decoded() {
        // Two-byte codes that are Unicode (/ToUnicode /Identity-H), and JIS
        // X 0208 codes under the predefined CMap /H.
        for (encoding, to_unicode, codes, expected) in [
            (
                "Identity-H",
                Some("Identity-H"),
                vec![0x00, 0x50, 0x01, 0x42],
                "Pł",
            ),
            ("H", None, vec![0x24, 0x22, 0x24, 0x24], "あい"),
        ] {
            let mut font = dictionary! {
                "Type" => "Font", "Subtype" => "Type0", "BaseFont" => "Test",
                "Encoding" => Object::Name(encoding.as_bytes().to_vec()),
                "DescendantFonts" => vec![Object::Dictionary(dictionary! {
                    "Type" => "Font", "Subtype" => "CIDFontType2", "BaseFont" => "Test",
                })],
            };
            if let Some(name) = to_unicode {
                font.set("ToUnicode", Object::Name(name.as_bytes().to_vec()));
            }
            let content = Content {
                operations: vec![
                    Operation::new("BT", vec![]),
                    Operation::new("Tf", vec!["F1".into(), 12.into()]),
                    Operation::new("Td", vec![72.into(), 700.into()]),
                    Operation::new(
                        "Tj",
                        vec![Object::String(codes, lopdf::StringFormat::Hexadecimal)],
                    ),
                    Operation::new("ET", vec![]),
                ],
            };
            let bytes = one_page(content.encode().unwrap(), None, font);
            let markdown = run(&bytes, &Limits::default()).unwrap().markdown;
            assert!(markdown.contains(expected), "{encoding}: {markdown}");
        }
    }

    #[test]
    fn too_many_pages_is_too_large() {
        let limits = Limits {
            max_pdf_pages: 1,
            ..Limits::default()
        };
        assert_eq!(
            run(&pdf(&["a", "b"], false), &limits).unwrap_err().code,
            ErrorCode::TooLarge
        );
    }

    #[test]
    fn broken_files_are_errors_not_panics() {
        let bytes = pdf(&["Hello first page", "Second page text"], false);
        for cut in [20, bytes.len() / 3, bytes.len() / 2] {
            let result = run(&bytes[..cut], &Limits::default());
            assert!(result.is_err(), "a PDF cut at {cut} bytes converted");
        }
        // Cut near the end, lopdf may recover the objects: any outcome but a panic.
        let _ = run(&bytes[..bytes.len() - 40], &Limits::default());
        let garbage = run(
            b"%PDF-1.4\n1 0 obj << /Encrypt 2 0 R >> garbage",
            &Limits::default(),
        )
        .unwrap_err();
        assert_eq!(garbage.code, ErrorCode::Corrupt);
        assert_eq!(
            run(b"not a pdf at all", &Limits::default())
                .unwrap_err()
                .code,
            ErrorCode::Corrupt
        );
    }

    #[test]
    fn paragraphs_join_wrapped_lines_and_keep_breaks() {
        let text = "The quick brown\nfox jumps over the\nlazy dog.\n\nA hyphen-\nated word and \u{FB01}ne print\n• first\n• second\n";
        assert_eq!(
            paragraphs(text),
            vec![
                "The quick brown fox jumps over the lazy dog.",
                "A hyphenated word and fine print\n• first\n• second"
            ]
        );
    }

    #[test]
    fn a_line_ending_in_a_soft_hyphen_joins_the_next() {
        let text = "Die Arbeitszeit\u{AD}\nerfassung im Zeit\u{AD}\nKonto.\n";
        assert_eq!(
            paragraphs(text),
            vec!["Die Arbeitszeiterfassung im ZeitKonto."]
        );
    }

    /// The paragraphs of a one-page PDF whose content is `content`, drawn
    /// with Helvetica as /F1.
    fn page_paragraphs(content: &str) -> Vec<String> {
        let bytes = one_page(content.as_bytes().to_vec(), None, helvetica());
        let markdown = run(&bytes, &Limits::default()).unwrap().markdown;
        markdown_paragraphs(&markdown)
    }

    fn markdown_paragraphs(markdown: &str) -> Vec<String> {
        markdown
            .split("\n\n")
            .map(str::trim)
            .filter(|p| !p.is_empty() && !p.starts_with("<!--"))
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn rotated_text_is_a_paragraph_of_its_own() {
        let paragraphs = page_paragraphs(
            "BT /F1 12 Tf 72 740 Td (Second line ends with fluffy) Tj ET \
             BT /F1 12 Tf 0 1 -1 0 300 500 Tm (Rotated label) Tj 90 0 Td (VERTICAL-9) Tj ET \
             BT /F1 12 Tf 72 726 Td (and the body goes on.) Tj ET",
        );
        assert_eq!(
            paragraphs,
            [
                "Second line ends with fluffy",
                "Rotated label VERTICAL-9",
                "and the body goes on."
            ]
        );
    }

    #[test]
    fn double_spaced_lines_join_and_paragraphs_end_at_short_lines_indents_and_wider_gaps() {
        let paragraphs = page_paragraphs(
            "BT /F1 12 Tf 72 700 Td (In case of fire leave the building by the nearest emergency exit and then walk to) Tj \
             0 -24 Td (the assembly point in the north car park, which is next to the main gate of the) Tj \
             0 -24 Td (site.) Tj \
             0 -24 Td (Fire extinguishers are located next to every lift on all floors of the building,) Tj \
             0 -24 Td (and a fire blanket is kept in every kitchen, next to the door, for small fires in) Tj \
             24 -24 Td (A drill takes place every quarter and is announced in advance by the facilities) Tj \
             -24 -24 Td (team, one day before it takes place, by mail to everyone who works in the house.) Tj \
             0 -40 Td (Questions go to the safety officer of each floor.) Tj ET",
        );
        assert_eq!(
            paragraphs,
            [
                "In case of fire leave the building by the nearest emergency exit and then walk \
                 to the assembly point in the north car park, which is next to the main gate of \
                 the site.",
                "Fire extinguishers are located next to every lift on all floors of the \
                 building, and a fire blanket is kept in every kitchen, next to the door, for \
                 small fires in",
                "A drill takes place every quarter and is announced in advance by the facilities \
                 team, one day before it takes place, by mail to everyone who works in the house.",
                "Questions go to the safety officer of each floor.",
            ]
        );
        // Lines less than half the page wide are not wrapped prose.
        let lines = "BT /F1 12 Tf 72 700 Td (Hello World) Tj 0 -24 Td (Hello World) Tj \
                     0 -24 Td (Hello World) Tj ET";
        assert_eq!(page_paragraphs(lines), ["Hello World"; 3]);
    }

    #[test]
    fn text_drawn_back_along_the_line_is_another_word() {
        let paragraphs = page_paragraphs(
            "BT /F1 12 Tf 300 700 Td (fluffy) Tj -228 0 Td (Kitten) Tj ET \
             BT /F1 12 Tf 72 686 Td [(Wa) 120 (ter)] TJ ET",
        );
        assert_eq!(paragraphs, ["fluffy Kitten Water"]);
    }

    /// A PDF with a page per content stream, in Helvetica, whose outline is
    /// made by `outline` from the document and its page ids.
    fn pdf_with_outline(
        contents: &[&str],
        outline: impl FnOnce(&mut Document, &[ObjectId]) -> Dictionary,
    ) -> Vec<u8> {
        let mut doc = Document::with_version("1.5");
        let pages_id = doc.new_object_id();
        let font_id = doc.add_object(helvetica());
        let page_ids: Vec<ObjectId> = contents
            .iter()
            .map(|content| {
                let content_id =
                    doc.add_object(Stream::new(dictionary! {}, content.as_bytes().to_vec()));
                doc.add_object(dictionary! {
                    "Type" => "Page", "Parent" => pages_id, "Contents" => content_id,
                    "Resources" => dictionary! { "Font" => dictionary! { "F1" => font_id } },
                })
            })
            .collect();
        doc.objects.insert(
            pages_id,
            Object::Dictionary(dictionary! {
                "Type" => "Pages", "Count" => page_ids.len() as i64,
                "Kids" => page_ids.iter().map(|&id| id.into()).collect::<Vec<Object>>(),
                "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
            }),
        );
        let mut catalog = outline(&mut doc, &page_ids);
        catalog.set("Type", "Catalog");
        catalog.set("Pages", pages_id);
        let catalog_id = doc.add_object(catalog);
        doc.trailer.set("Root", catalog_id);
        let mut bytes = Vec::new();
        doc.save_to(&mut bytes).unwrap();
        bytes
    }

    #[test]
    fn outline_titles_become_headings_at_their_depth() {
        let bytes =
            pdf_with_outline(
                &[
                    "BT /F1 20 Tf 72 740 Td (Security) Tj ET \
                 BT /F1 11 Tf 72 700 Td (Rotate keys every 90 days.) Tj ET \
                 BT /F1 11 Tf 72 686 Td (Key rotation) Tj ET \
                 BT /F1 11 Tf 72 672 Td (Key vault VAULT-4.) Tj ET",
                    "BT /F1 20 Tf 72 740 Td (Price) Tj 0 -22 Td (list) Tj ET \
                 BT /F1 11 Tf 72 704 Td (Prices exclude VAT.) Tj ET \
                 BT /F1 20 Tf 72 600 Td (Notice) Tj ET \
                 BT /F1 11 Tf 72 560 Td (Prices change yearly.) Tj ET",
                ],
                |doc, pages| {
                    let outlines = doc.new_object_id();
                    let (security, rotation, prices) = (
                        doc.new_object_id(),
                        doc.new_object_id(),
                        doc.new_object_id(),
                    );
                    let fit = |page: ObjectId| Object::Array(vec![page.into(), "Fit".into()]);
                    doc.objects.insert(
                        security,
                        Object::Dictionary(dictionary! {
                            "Title" => Object::string_literal("Security"), "Parent" => outlines,
                            "Dest" => fit(pages[0]), "First" => rotation, "Next" => prices,
                        }),
                    );
                    doc.objects.insert(rotation, Object::Dictionary(dictionary! {
                    "Title" => Object::string_literal("Key  rotation"), "Parent" => security,
                    "Dest" => Object::string_literal("rotation"),
                }));
                    // A damaged outline whose last entry leads back to the first.
                    doc.objects.insert(
                        prices,
                        Object::Dictionary(dictionary! {
                            "Title" => Object::string_literal("Price list"), "Parent" => outlines,
                            "A" => dictionary! { "S" => "GoTo", "D" => fit(pages[1]) },
                            "Next" => security,
                        }),
                    );
                    doc.objects.insert(
                        outlines,
                        Object::Dictionary(dictionary! {
                            "Type" => "Outlines", "First" => security, "Last" => prices,
                        }),
                    );
                    let names = vec![Object::string_literal("rotation"), fit(pages[0])];
                    dictionary! {
                        "Outlines" => outlines,
                        "Names" => dictionary! { "Dests" => dictionary! { "Names" => names } },
                    }
                },
            );
        let markdown = run(&bytes, &Limits::default()).unwrap().markdown;
        assert_eq!(
            markdown_paragraphs(&markdown),
            [
                "# Security",
                "Rotate keys every 90 days.",
                "## Key rotation",
                "Key vault VAULT-4.",
                "# Price list",
                "Prices exclude VAT.",
                // Not in the outline: not a heading, however large.
                "Notice",
                "Prices change yearly."
            ]
        );
    }

    #[test]
    fn short_lines_larger_than_the_body_text_become_headings_by_size() {
        let body = |y: i32, text: &str| format!("BT /F1 11 Tf 72 {y} Td ({text}) Tj ET ");
        let content = [
            "BT /F1 24 Tf 72 740 Td (Handbook) Tj ET ".to_string(),
            body(700, "Every team keeps this handbook at hand."),
            body(686, "It is read once a year by everyone."),
            "BT /F1 16 Tf 72 660 Td (Price list) Tj ET ".to_string(),
            body(645, "Prices exclude VAT and change yearly."),
            "BT /F1 16 Tf 72 600 Td (A pull quote set large runs) Tj 0 -18 Td (over three lines, which) Tj \
             0 -18 Td (makes it a paragraph.) Tj ET "
                .to_string(),
            "BT /F1 16 Tf 72 480 Td (42) Tj ET ".to_string(),
            body(440, "The end of the handbook."),
        ]
        .concat();
        assert_eq!(
            page_paragraphs(&content),
            [
                "# Handbook",
                "Every team keeps this handbook at hand. It is read once a year by everyone.",
                "## Price list",
                "Prices exclude VAT and change yearly.",
                "A pull quote set large runs over three lines, which makes it a paragraph.",
                "42",
                "The end of the handbook."
            ]
        );
    }

    #[test]
    fn text_that_starts_with_a_hash_is_not_a_heading() {
        assert_eq!(
            paragraphs("# of layers\n\n#hashtag"),
            ["\\# of layers", "\\#hashtag"]
        );
    }

    #[test]
    fn right_to_left_lines_are_put_in_reading_order() {
        // "مرحبا Rust" as pdf-extract emits it: Arabic letters reversed, Latin not.
        let visual = "Rust ابحرم";
        assert_eq!(logical_order(visual), "مرحبا Rust");
    }

    #[test]
    fn identifiers_in_right_to_left_lines_keep_their_order() {
        let logical = "يجب تعديل max_retry_count في الملف config.toml";
        let visual: String = logical.chars().rev().collect();
        let visual = visual
            .replace("tnuoc_yrter_xam", "max_retry_count")
            .replace("lmot.gifnoc", "config.toml");
        assert_eq!(logical_order(&visual), logical);
    }

    #[test]
    fn a_glyph_of_several_right_to_left_letters_keeps_their_order() {
        use pdf_extract::OutputDev;
        // "الأمن" drawn from the left: ن, م, the lam-alef ligature (its text "لأ"), ا.
        let mut layout = PageLayout::default();
        for (i, glyph) in ["ن", "م", "لأ", "ا"].into_iter().enumerate() {
            let x = 72.0 + 6.0 * i as f64;
            let trm = pdf_extract::Transform::row_major(12.0, 0.0, 0.0, 12.0, x, 700.0);
            layout.begin_word().unwrap();
            layout.output_character(&trm, 0.5, 0.0, 1.0, glyph).unwrap();
        }
        let lines = layout.into_lines();
        assert_eq!(logical_order(&lines[0].text), "الأمن");
    }

    #[test]
    fn pdf_dates_become_iso_8601() {
        assert_eq!(
            pdf_date("D:20230105143000+01'00'").as_deref(),
            Some("2023-01-05T14:30:00+01:00")
        );
        assert_eq!(pdf_date("D:2023").as_deref(), Some("2023-01-01"));
        assert_eq!(pdf_date("garbage"), None);
    }
}
