//! PDF: text page by page with pdf-extract; metadata, page tree checks and
//! JPEG images with lopdf.
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
    safety::blank_images(&mut doc, page_images.into_values().flatten());

    let mut markdown = String::new();
    let mut has_text = false;
    let mut glyphs = 0;
    let mut unreadable_pages = 0;
    for (&number, page_id) in &pages {
        let page = page_text(&doc, number);
        glyphs += page.glyphs;
        unreadable_pages += usize::from(page.failed);
        let paragraphs = paragraphs(&page.text);
        has_text |= !paragraphs.is_empty();
        if !markdown.is_empty() {
            markdown.push('\n');
        }
        markdown.push_str(&format!("<!-- page: {number} -->\n"));
        for paragraph in paragraphs {
            markdown.push('\n');
            markdown.push_str(&paragraph);
            markdown.push('\n');
        }
        for link in image_links.get(page_id).into_iter().flatten() {
            markdown.push_str(&format!("\n![image]({link})\n"));
        }
    }
    // A page that draws no glyph at all is a valid page without text (vector
    // art, a scan); only glyphs that cannot be decoded, or pages that cannot
    // be read, make the document unusable.
    if !has_text && (glyphs > 0 || unreadable_pages > 0) {
        return Err(no_text_error(glyphs));
    }
    let (title, mut properties) = info_properties(&doc);
    properties.insert("pages".into(), Value::from(pages.len()));
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

/// A page's text as pdf-extract lays it out, and how many glyphs it drew
/// (glyphs without a Unicode mapping come out as nothing).
#[derive(Default)]
struct PageText {
    text: String,
    glyphs: usize,
    /// Neither pdf-extract nor lopdf could read the page.
    failed: bool,
}

/// The page's text, or nothing if the page breaks pdf-extract.
fn page_text(doc: &Document, number: u32) -> PageText {
    let result = catch_unwind(AssertUnwindSafe(|| {
        let mut text = String::new();
        let mut output = GlyphCounter {
            inner: pdf_extract::PlainTextOutput::new(&mut text),
            glyphs: 0,
        };
        pdf_extract::output_doc_page(doc, &mut output, number)?;
        let glyphs = output.glyphs;
        Ok::<_, pdf_extract::OutputError>(PageText {
            text,
            glyphs,
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
                text,
                failed: false,
            })
            .unwrap_or(PageText {
                failed: true,
                ..PageText::default()
            }),
    }
}

/// pdf-extract's plain-text layout, counting the glyphs drawn.
struct GlyphCounter<'a> {
    inner: pdf_extract::PlainTextOutput<&'a mut String>,
    glyphs: usize,
}

impl pdf_extract::OutputDev for GlyphCounter<'_> {
    fn begin_page(
        &mut self,
        page_num: u32,
        media_box: &pdf_extract::MediaBox,
        art_box: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), pdf_extract::OutputError> {
        self.inner.begin_page(page_num, media_box, art_box)
    }
    fn end_page(&mut self) -> Result<(), pdf_extract::OutputError> {
        self.inner.end_page()
    }
    fn output_character(
        &mut self,
        trm: &pdf_extract::Transform,
        width: f64,
        spacing: f64,
        font_size: f64,
        char: &str,
    ) -> Result<(), pdf_extract::OutputError> {
        self.glyphs += 1;
        self.inner
            .output_character(trm, width, spacing, font_size, char)
    }
    fn begin_word(&mut self) -> Result<(), pdf_extract::OutputError> {
        self.inner.begin_word()
    }
    fn end_word(&mut self) -> Result<(), pdf_extract::OutputError> {
        self.inner.end_word()
    }
    fn end_line(&mut self) -> Result<(), pdf_extract::OutputError> {
        self.inner.end_line()
    }
}

/// Rebuilds paragraphs from extracted lines: a blank line ends a paragraph,
/// wrapped lines are joined (a word hyphenated across lines is rejoined), and
/// a line that starts a list item starts a new line.
fn paragraphs(text: &str) -> Vec<String> {
    let text = expand_ligatures(text);
    let mut paragraphs = Vec::new();
    let mut current = String::new();
    for line in text
        .lines()
        .map(clean_line)
        .map(|line| logical_order(&line))
    {
        if line.is_empty() {
            push_paragraph(&mut paragraphs, &mut current);
        } else if current.is_empty() {
            current.push_str(&line);
        } else if starts_list_item(&line) {
            current.push('\n');
            current.push_str(&line);
        } else if let Some(stem) = hyphenated_stem(&current, &line) {
            current.truncate(stem);
            current.push_str(&line);
        } else {
            current.push(' ');
            current.push_str(&line);
        }
    }
    push_paragraph(&mut paragraphs, &mut current);
    paragraphs
}

fn push_paragraph(paragraphs: &mut Vec<String>, current: &mut String) {
    if !current.is_empty() {
        paragraphs.push(std::mem::take(current));
    }
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
    let is_rtl = |c: char| matches!(c, '\u{0590}'..='\u{08FF}' | '\u{FB1D}'..='\u{FDFF}' | '\u{FE70}'..='\u{FEFF}');
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
            && (ltr || matches!(c, ' ' | '.' | ',' | ':' | '-' | '/' | '%'));
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
    let mut chars = line.chars();
    match chars.next() {
        Some('•' | '◦' | '▪' | '‣' | '–' | '-' | '*' | '·' | '○' | '■' | '□' | '\u{F0B7}') => {
            true
        }
        Some(c) if c.is_ascii_digit() => {
            let rest = line.trim_start_matches(|c: char| c.is_ascii_digit());
            (rest.starts_with(". ") || rest.starts_with(") ")) && line.len() - rest.len() <= 3
        }
        _ => false,
    }
}

/// If `current` ends with `word-` and `next` continues in lowercase, the byte
/// length of `current` without the hyphen.
fn hyphenated_stem(current: &str, next: &str) -> Option<usize> {
    let stem = current.strip_suffix('-')?;
    let before_hyphen = stem.chars().next_back()?;
    let after = next.chars().next()?;
    (before_hyphen.is_alphabetic() && after.is_lowercase()).then_some(stem.len())
}

fn expand_ligatures(text: &str) -> String {
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

/// Stores each page's JPEG images; returns their links per page.
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
            images.filter_map(|&id| jpeg_link(doc, id, ctx)).collect(),
        );
    }
    links
}

/// Stores a JPEG image XObject and returns its Markdown link; other image
/// encodings would need re-encoding and are skipped.
fn jpeg_link(doc: &Document, id: ObjectId, ctx: &mut Context) -> Option<String> {
    let stream = doc.get_object(id).ok()?.as_stream().ok()?;
    let filters = stream.filters().ok()?;
    let is_jpeg = filters.len() == 1 && filters[0] == b"DCTDecode";
    (is_jpeg && !stream.content.is_empty()).then(|| ctx.images.add(&stream.content, "jpg"))
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

/// A last resort for files whose cross-reference table is wrong (hand-made or
/// edited PDFs): find every `N G obj` and append a fresh table and trailer.
mod xref {
    use regex::bytes::Regex;

    pub fn rebuilt(bytes: &[u8]) -> Option<Vec<u8>> {
        let fixed = fixed_lengths(bytes);
        let bytes = &fixed[..];
        let object = Regex::new(r"(?m)(?:^|[\r\n ])(\d{1,7})\s+(\d{1,5})\s+obj\b").ok()?;
        let root = Regex::new(r"/Root\s+(\d+\s+\d+\s+R)").ok()?;
        let info = Regex::new(r"/Info\s+(\d+\s+\d+\s+R)").ok()?;
        let root = text(root.captures_iter(bytes).last()?.get(1)?.as_bytes());
        let mut offsets = std::collections::BTreeMap::new();
        for captures in object.captures_iter(bytes) {
            let (number, generation) = (captures.get(1)?, captures.get(2)?);
            let number: u32 = text(number.as_bytes()).parse().ok()?;
            let generation: u16 = text(generation.as_bytes()).parse().ok()?;
            offsets.insert(number, (captures.get(1)?.start(), generation));
        }
        let size = offsets.keys().next_back()? + 1;
        let mut table = format!("\nxref\n0 {size}\n0000000000 65535 f\r\n");
        for number in 1..size {
            match offsets.get(&number) {
                Some((offset, generation)) => {
                    table.push_str(&format!("{offset:010} {generation:05} n\r\n"))
                }
                None => table.push_str("0000000000 65535 f\r\n"),
            }
        }
        let info = info
            .captures_iter(bytes)
            .last()
            .and_then(|c| c.get(1))
            .map(|m| format!(" /Info {}", text(m.as_bytes())));
        let start = bytes.len() + 1;
        table.push_str(&format!(
            "trailer\n<< /Size {size} /Root {root}{} >>\nstartxref\n{start}\n%%EOF\n",
            info.unwrap_or_default()
        ));
        let mut repaired = bytes.to_vec();
        repaired.extend_from_slice(table.as_bytes());
        Some(repaired)
    }

    fn text(bytes: &[u8]) -> String {
        String::from_utf8_lossy(bytes).into_owned()
    }

    /// Whether a page names a content stream the document does not hold (lopdf
    /// drops a stream object whose /Length is wrong).
    pub fn lost_contents(doc: &lopdf::Document) -> bool {
        doc.get_pages().values().any(|&page| {
            doc.get_page_contents(page)
                .iter()
                .any(|id| !matches!(doc.objects.get(id), Some(lopdf::Object::Stream(_))))
        })
    }

    /// The file with each direct stream `/Length` that does not end at an
    /// `endstream` replaced by the length up to the next `endstream`.
    pub fn fixed_lengths(bytes: &[u8]) -> Vec<u8> {
        let (Ok(stream), Ok(length)) = (
            Regex::new(r">>\s*stream(?:\r\n|\n|\r)"),
            Regex::new(r"/Length\s+(\d{1,12})(\s+\d+\s+\d+\s+R)?"),
        ) else {
            return bytes.to_vec();
        };
        let mut out = Vec::with_capacity(bytes.len() + 64);
        let mut copied = 0;
        let mut previous_end = 0;
        let mut at = 0;
        while let Some(found) = stream.find_at(bytes, at) {
            let data_start = found.end();
            let Some(end) = find(bytes, b"endstream", data_start) else {
                break;
            };
            let mut data_end = end;
            if bytes[..data_end].ends_with(b"\r\n") {
                data_end -= 2;
            } else if bytes[..data_end].ends_with(b"\n") || bytes[..data_end].ends_with(b"\r") {
                data_end -= 1;
            }
            let header = &bytes[previous_end..found.start()];
            let dict_from = previous_end + rfind(header, b"obj").unwrap_or(0);
            let declared = length
                .captures_iter(&bytes[dict_from..found.start()])
                .last()
                .filter(|c| c.get(2).is_none())
                .and_then(|c| c.get(1));
            if let Some(digits) = declared {
                let value: Option<usize> = text(digits.as_bytes()).parse().ok();
                let fits = value.is_some_and(|v| ends_stream(bytes, data_start.saturating_add(v)));
                if !fits && dict_from + digits.start() >= copied {
                    out.extend_from_slice(&bytes[copied..dict_from + digits.start()]);
                    out.extend_from_slice((data_end - data_start).to_string().as_bytes());
                    copied = dict_from + digits.end();
                }
            }
            previous_end = end + b"endstream".len();
            at = previous_end;
        }
        out.extend_from_slice(&bytes[copied..]);
        out
    }

    /// Whether `endstream` follows `at`, after at most an end of line.
    fn ends_stream(bytes: &[u8], at: usize) -> bool {
        let Some(rest) = bytes.get(at..) else {
            return false;
        };
        let skipped = rest
            .iter()
            .take(4)
            .take_while(|b| b.is_ascii_whitespace())
            .count();
        rest[skipped..].starts_with(b"endstream")
    }

    fn find(bytes: &[u8], needle: &[u8], from: usize) -> Option<usize> {
        bytes
            .get(from..)?
            .windows(needle.len())
            .position(|w| w == needle)
            .map(|i| from + i)
    }

    fn rfind(bytes: &[u8], needle: &[u8]) -> Option<usize> {
        bytes.windows(needle.len()).rposition(|w| w == needle)
    }
}

/// Rewrites the parts of a document that would make pdf-extract recurse
/// without bound or panic, and takes image XObjects out of its way.
mod safety {
    use std::collections::{BTreeMap, HashMap, HashSet};

    use lopdf::content::{Content, Operation};
    use lopdf::{Dictionary, Document, Object, ObjectId, Stream};

    /// Form XObjects nested deeper than this are not drawn.
    const MAX_FORM_DEPTH: usize = 16;
    /// Form XObject invocations followed per page (exponential fan-out guard).
    const MAX_FORM_CALLS: usize = 4000;
    const LETTER: [f32; 4] = [0.0, 0.0, 612.0, 792.0];

    /// Makes the document safe for pdf-extract and returns, per page, the image
    /// XObjects it draws (in drawing order).
    /// What [`make_safe`] found.
    pub struct Safe {
        /// Per page, the image XObjects it draws (in drawing order).
        pub images: HashMap<ObjectId, Vec<ObjectId>>,
        /// A form XObject draws itself, directly or through others (the
        /// drawing was cut there).
        pub recursive: bool,
    }

    pub fn make_safe(doc: &mut Document, pages: &BTreeMap<u32, ObjectId>) -> Safe {
        let mut images = HashMap::new();
        let mut removals = Removals::default();
        let mut recursive = false;
        for &page_id in pages.values() {
            materialise_inherited(doc, page_id);
            let mut walker = Walker {
                doc,
                removals: &mut removals,
                images: Vec::new(),
                calls: 0,
                decoded: HashMap::new(),
                recursive: false,
            };
            walker.walk_page(page_id);
            recursive |= walker.recursive;
            images.insert(page_id, walker.images);
        }
        apply(doc, &removals);
        Safe { images, recursive }
    }

    /// Copies `/Resources` and `/MediaBox` inherited through `/Parent` onto the
    /// page itself, so pdf-extract never follows a (possibly cyclic) parent chain.
    fn materialise_inherited(doc: &mut Document, page_id: ObjectId) {
        let resources = inherited(doc, page_id, b"Resources").filter(|o| o.as_dict().is_ok());
        let media_box = inherited(doc, page_id, b"MediaBox").filter(|o| is_rectangle(doc, o));
        let Ok(page) = doc.get_dictionary_mut(page_id) else {
            return;
        };
        page.set(
            "Resources",
            resources.unwrap_or_else(|| Object::Dictionary(Dictionary::new())),
        );
        let media_box = media_box.unwrap_or_else(|| {
            LETTER
                .iter()
                .map(|&v| Object::Real(v))
                .collect::<Vec<_>>()
                .into()
        });
        page.set("MediaBox", media_box);
    }

    /// The value of `key` on the page or its nearest ancestor, dereferenced.
    fn inherited(doc: &Document, page_id: ObjectId, key: &[u8]) -> Option<Object> {
        let mut seen = HashSet::new();
        let mut node = doc.get_dictionary(page_id).ok()?;
        loop {
            if let Ok(value) = node.get_deref(key, doc) {
                return Some(value.clone());
            }
            let parent = node.get(b"Parent").and_then(Object::as_reference).ok()?;
            if !seen.insert(parent) {
                return None;
            }
            node = doc.get_dictionary(parent).ok()?;
        }
    }

    fn is_rectangle(doc: &Document, object: &Object) -> bool {
        let Ok(values) = object.as_array() else {
            return false;
        };
        values.len() == 4
            && values.iter().all(|v| {
                doc.dereference(v)
                    .is_ok_and(|(_, v)| matches!(v, Object::Integer(_) | Object::Real(_)))
            })
    }

    /// Where a content stream comes from.
    #[derive(Clone, Copy, PartialEq, Eq, Hash)]
    enum Source {
        Page(ObjectId),
        Form(ObjectId),
    }

    /// `Do` operations (by index in the decoded content) to drop, per stream.
    #[derive(Default)]
    struct Removals(HashMap<Source, HashSet<usize>>);

    struct Walker<'d, 'r> {
        doc: &'d Document,
        removals: &'r mut Removals,
        images: Vec<ObjectId>,
        calls: usize,
        decoded: HashMap<Source, Option<Vec<Operation>>>,
        recursive: bool,
    }

    enum Target {
        Form(ObjectId),
        Image(ObjectId),
        Unusable,
    }

    impl<'d> Walker<'d, '_> {
        fn walk_page(&mut self, page_id: ObjectId) {
            let doc = self.doc;
            let Ok(resources) = doc
                .get_dictionary(page_id)
                .and_then(|p| p.get_deref(b"Resources", doc))
                .and_then(Object::as_dict)
            else {
                return;
            };
            self.walk(Source::Page(page_id), resources, &mut Vec::new());
        }

        fn walk(&mut self, source: Source, resources: &'d Dictionary, path: &mut Vec<ObjectId>) {
            let Some(operations) = self.operations(source) else {
                return;
            };
            for (index, name) in operations
                .iter()
                .enumerate()
                .filter_map(|(i, op)| Some((i, do_name(op)?)))
            {
                match self.resolve(resources, name) {
                    Target::Image(id) => {
                        if !self.images.contains(&id) {
                            self.images.push(id);
                        }
                    }
                    Target::Form(id) if self.may_enter(id, path) => {
                        self.calls += 1;
                        let form = self
                            .doc
                            .get_object(id)
                            .and_then(Object::as_stream)
                            .map(|s| &s.dict);
                        let inner = form
                            .and_then(|d| d.get_deref(b"Resources", self.doc))
                            .and_then(Object::as_dict);
                        path.push(id);
                        self.walk(Source::Form(id), inner.unwrap_or(resources), path);
                        path.pop();
                    }
                    Target::Form(id) => {
                        self.recursive |= path.contains(&id);
                        self.removals.0.entry(source).or_default().insert(index);
                    }
                    Target::Unusable => {
                        self.removals.0.entry(source).or_default().insert(index);
                    }
                }
            }
        }

        fn may_enter(&mut self, id: ObjectId, path: &[ObjectId]) -> bool {
            !path.contains(&id)
                && path.len() < MAX_FORM_DEPTH
                && self.calls < MAX_FORM_CALLS
                && self.operations(Source::Form(id)).is_some()
        }

        /// The decoded operations of a content stream; a form whose content does
        /// not decode is reported as `None` (pdf-extract would panic on it).
        fn operations(&mut self, source: Source) -> Option<Vec<Operation>> {
            let doc = self.doc;
            self.decoded
                .entry(source)
                .or_insert_with(|| decode(doc, source))
                .clone()
        }

        fn resolve(&self, resources: &Dictionary, name: &[u8]) -> Target {
            let doc = self.doc;
            let xobject = resources
                .get_deref(b"XObject", doc)
                .and_then(Object::as_dict)
                .and_then(|xobjects| xobjects.get(name))
                .and_then(|o| o.as_reference());
            let Ok(id) = xobject else {
                return Target::Unusable;
            };
            let Ok(stream) = doc.get_object(id).and_then(Object::as_stream) else {
                return Target::Unusable;
            };
            match stream.dict.get(b"Subtype").and_then(Object::as_name) {
                Ok(b"Form") => Target::Form(id),
                Ok(b"Image") => Target::Image(id),
                _ => Target::Unusable,
            }
        }
    }

    fn do_name(operation: &Operation) -> Option<&[u8]> {
        (operation.operator == "Do")
            .then(|| operation.operands.first()?.as_name().ok())
            .flatten()
    }

    fn decode(doc: &Document, source: Source) -> Option<Vec<Operation>> {
        let bytes = match source {
            Source::Page(id) => doc.get_page_content(id).ok()?,
            Source::Form(id) => {
                let stream = doc.get_object(id).and_then(Object::as_stream).ok()?;
                stream
                    .decompressed_content()
                    .unwrap_or_else(|_| stream.content.clone())
            }
        };
        Content::decode(&bytes)
            .ok()
            .map(|content| content.operations)
    }

    /// Re-encodes each stream that lost `Do` operations.
    fn apply(doc: &mut Document, removals: &Removals) {
        for (&source, drop) in &removals.0 {
            let Some(operations) = decode(doc, source) else {
                continue;
            };
            let kept: Vec<Operation> = operations
                .into_iter()
                .enumerate()
                .filter(|(i, _)| !drop.contains(i))
                .map(|(_, op)| op)
                .collect();
            let Ok(bytes) = (Content { operations: kept }).encode() else {
                continue;
            };
            match source {
                Source::Form(id) => {
                    if let Ok(stream) = doc.get_object_mut(id).and_then(Object::as_stream_mut) {
                        stream.set_plain_content(bytes);
                    }
                }
                Source::Page(id) => replace_page_content(doc, id, bytes),
            }
        }
    }

    fn replace_page_content(doc: &mut Document, page_id: ObjectId, bytes: Vec<u8>) {
        let stream_id = doc.add_object(Stream::new(Dictionary::new(), bytes));
        if let Ok(page) = doc.get_dictionary_mut(page_id) {
            page.set("Contents", stream_id);
        }
    }

    /// pdf-extract parses an image's pixel data as if it were a content stream
    /// (garbage text at best, a panic at worst): once the images have been
    /// taken, each becomes an empty form.
    pub fn blank_images(doc: &mut Document, ids: impl IntoIterator<Item = ObjectId>) {
        for id in ids {
            let mut dict = Dictionary::new();
            dict.set("Type", "XObject");
            dict.set("Subtype", "Form");
            dict.set(
                "BBox",
                vec![
                    Object::Integer(0),
                    Object::Integer(0),
                    Object::Integer(1),
                    Object::Integer(1),
                ],
            );
            doc.objects
                .insert(id, Object::Stream(Stream::new(dict, Vec::new())));
        }
    }
}

/// Stream filters lopdf cannot decode, and content streams that are damaged.
mod streams {
    use std::collections::BTreeMap;

    use lopdf::{Dictionary, Document, Object, ObjectId, Stream};

    /// Decoded streams larger than this are left encoded.
    const MAX_DECODED: usize = 256 << 20;

    /// Makes every stream readable with lopdf's `decompressed_content`, which
    /// pdf-extract relies on: an indirect /Filter or /DecodeParms becomes
    /// direct, and a stream whose filters lopdf lacks (ASCIIHex, RunLength,
    /// the TIFF predictor, abbreviated names) is decoded here. Images keep
    /// their encoding.
    pub fn normalise(doc: &mut Document) {
        let ids: Vec<ObjectId> = doc
            .objects
            .iter()
            .filter(|(_, o)| matches!(o, Object::Stream(_)))
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            let Some(Object::Stream(stream)) = doc.objects.get(&id) else {
                continue;
            };
            let filter = stream.dict.get(b"Filter").ok().map(|f| direct(doc, f));
            let parms = stream.dict.get(b"DecodeParms").ok().map(|p| direct(doc, p));
            let is_image = stream
                .dict
                .get(b"Subtype")
                .and_then(Object::as_name)
                .is_ok_and(|n| n == b"Image");
            let decoded = match (&filter, is_image) {
                (Some(filter), false) if needs_help(filter, parms.as_ref()) => {
                    decode(&stream.content, filter, parms.as_ref())
                }
                _ => None,
            };
            let Some(Object::Stream(stream)) = doc.objects.get_mut(&id) else {
                continue;
            };
            if let Some(content) = decoded {
                stream.dict.remove(b"Filter");
                stream.dict.remove(b"DecodeParms");
                stream.set_content(content);
                continue;
            }
            if let Some(filter) = filter {
                stream.dict.set("Filter", filter);
            }
            if let Some(parms) = parms {
                stream.dict.set("DecodeParms", parms);
            }
        }
    }

    /// The object with references (also inside an array) resolved.
    fn direct(doc: &Document, object: &Object) -> Object {
        let resolve = |o: &Object| {
            doc.dereference(o)
                .map(|(_, o)| o.clone())
                .unwrap_or(Object::Null)
        };
        match resolve(object) {
            Object::Array(items) => Object::Array(items.iter().map(resolve).collect()),
            other => other,
        }
    }

    fn names(filter: &Object) -> Vec<&[u8]> {
        match filter {
            Object::Name(name) => vec![name.as_slice()],
            Object::Array(items) => items.iter().filter_map(|o| o.as_name().ok()).collect(),
            _ => Vec::new(),
        }
    }

    fn parms_at(parms: Option<&Object>, index: usize) -> Option<&Dictionary> {
        match parms? {
            Object::Dictionary(dict) => (index == 0).then_some(dict),
            Object::Array(items) => items.get(index)?.as_dict().ok(),
            _ => None,
        }
    }

    fn predictor(parms: Option<&Dictionary>) -> i64 {
        parms
            .and_then(|p| p.get(b"Predictor").and_then(Object::as_i64).ok())
            .unwrap_or(1)
    }

    /// Whether lopdf's own decoding would get the stream wrong.
    fn needs_help(filter: &Object, parms: Option<&Object>) -> bool {
        let names = names(filter);
        let native = |n: &[u8]| matches!(n, b"FlateDecode" | b"LZWDecode" | b"ASCII85Decode");
        names.len() > 1 && matches!(parms, Some(Object::Array(_)))
            || names.iter().any(|n| !native(n))
            || (0..names.len()).any(|i| predictor(parms_at(parms, i)) == 2)
    }

    /// The stream decoded through all its filters; `None` if one of them is
    /// not known here (image codecs) or fails.
    fn decode(content: &[u8], filter: &Object, parms: Option<&Object>) -> Option<Vec<u8>> {
        let mut data = content.to_vec();
        for (index, name) in names(filter).into_iter().enumerate() {
            let parms = parms_at(parms, index);
            data = match name {
                b"FlateDecode" | b"Fl" => lopdf_decode(data, b"FlateDecode", parms)?,
                b"LZWDecode" | b"LZW" => lopdf_decode(data, b"LZWDecode", parms)?,
                b"ASCII85Decode" | b"A85" => {
                    let end = data
                        .iter()
                        .rposition(|b| !b.is_ascii_whitespace())
                        .map_or(0, |i| i + 1);
                    data.truncate(end);
                    lopdf_decode(data, b"ASCII85Decode", None)?
                }
                b"ASCIIHexDecode" | b"AHx" => ascii_hex(&data),
                b"RunLengthDecode" | b"RL" => run_length(&data)?,
                _ => return None,
            };
            if predictor(parms) == 2 {
                tiff_predictor(&mut data, parms);
            }
            if data.len() > MAX_DECODED {
                return None;
            }
        }
        Some(data)
    }

    fn lopdf_decode(data: Vec<u8>, filter: &[u8], parms: Option<&Dictionary>) -> Option<Vec<u8>> {
        let mut dict = Dictionary::new();
        dict.set("Filter", Object::Name(filter.to_vec()));
        if let Some(parms) = parms.filter(|p| predictor(Some(p)) != 2) {
            dict.set("DecodeParms", parms.clone());
        }
        Stream::new(dict, data).decompressed_content().ok()
    }

    fn ascii_hex(data: &[u8]) -> Vec<u8> {
        let digits: Vec<u8> = data
            .iter()
            .take_while(|&&b| b != b'>')
            .filter_map(|&b| (b as char).to_digit(16).map(|d| d as u8))
            .collect();
        digits
            .chunks(2)
            .map(|pair| pair[0] << 4 | pair.get(1).copied().unwrap_or(0))
            .collect()
    }

    fn run_length(data: &[u8]) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        let mut i = 0;
        while let Some(&length) = data.get(i) {
            match length {
                128 => break,
                0..=127 => {
                    let run = data.get(i + 1..i + 2 + length as usize)?;
                    out.extend_from_slice(run);
                    i += 2 + length as usize;
                }
                _ => {
                    let byte = *data.get(i + 1)?;
                    out.extend(std::iter::repeat_n(byte, 257 - length as usize));
                    i += 2;
                }
            }
            if out.len() > MAX_DECODED {
                return None;
            }
        }
        Some(out)
    }

    /// TIFF predictor 2 for 8-bit components: each byte is the difference to
    /// the same component of the pixel before it.
    fn tiff_predictor(data: &mut [u8], parms: Option<&Dictionary>) {
        let value = |key: &[u8], default: i64| {
            parms
                .and_then(|p| p.get(key).and_then(Object::as_i64).ok())
                .unwrap_or(default)
                .clamp(1, 1 << 16) as usize
        };
        if value(b"BitsPerComponent", 8) != 8 {
            return;
        }
        let colors = value(b"Colors", 1);
        let row = colors * value(b"Columns", 1);
        for line in data.chunks_mut(row) {
            for i in colors..line.len() {
                line[i] = line[i].wrapping_add(line[i - colors]);
            }
        }
    }

    /// The first page content stream, or form XObject, whose Flate data does
    /// not decompress intact (lopdf keeps what it could inflate and says
    /// nothing): the file is damaged.
    pub fn damaged_content(doc: &Document, pages: &BTreeMap<u32, ObjectId>) -> Option<String> {
        for (number, &page) in pages {
            for id in doc.get_page_contents(page) {
                if let Ok(stream) = doc.get_object(id).and_then(Object::as_stream)
                    && !inflates(stream)
                {
                    return Some(format!(
                        "page {number}: its content stream is damaged (it does not decompress)"
                    ));
                }
            }
        }
        doc.objects.iter().find_map(|(id, object)| {
            let stream = object.as_stream().ok()?;
            let is_form = stream
                .dict
                .get(b"Subtype")
                .and_then(Object::as_name)
                .is_ok_and(|n| n == b"Form");
            (is_form && !inflates(stream)).then(|| {
                format!(
                    "a drawing (form XObject {} {}) is damaged (it does not decompress)",
                    id.0, id.1
                )
            })
        })
    }

    /// Whether a stream that is only Flate-encoded decompresses to data whose
    /// Adler-32 checksum matches the one the stream ends with.
    fn inflates(stream: &Stream) -> bool {
        let flate_only = stream
            .filters()
            .is_ok_and(|f| f.len() == 1 && f[0] == b"FlateDecode");
        let plain = predictor(
            stream
                .dict
                .get(b"DecodeParms")
                .and_then(Object::as_dict)
                .ok(),
        ) == 1;
        let data = &stream.content;
        if !flate_only || !plain || data.iter().all(u8::is_ascii_whitespace) {
            return true;
        }
        let Some(inflated) = lopdf_decode(data.clone(), b"FlateDecode", None) else {
            return false;
        };
        let checksum = adler32(&inflated).to_be_bytes();
        // The checksum ends the zlib data; some writers pad the stream after it.
        let earliest = data.len().saturating_sub(20).max(6);
        (earliest..=data.len()).any(|end| data[end - 4..end] == checksum)
    }

    fn adler32(data: &[u8]) -> u32 {
        let (mut a, mut b) = (1u32, 0u32);
        for chunk in data.chunks(5552) {
            for &byte in chunk {
                a += u32::from(byte);
                b += a;
            }
            a %= 65521;
            b %= 65521;
        }
        b << 16 | a
    }
}

/// Composite (Type0) fonts pdf-extract cannot decode: it panics on predefined
/// CMaps other than Identity, misreads embedded CMaps and has no Unicode
/// source but a ToUnicode stream. Such a font gets an Identity encoding over
/// its own code space and a ToUnicode CMap built here from what the file
/// offers: its ToUnicode CMap (or the name Identity-H: codes are Unicode), a
/// Unicode CMap name (UniJIS-UCS2-H, ...), the JIS X 0208 CMaps H and V, the
/// cmap table of an embedded TrueType program, or Adobe-Japan1 CIDs.
mod fonts {
    use std::collections::BTreeMap;

    use lopdf::{Dictionary, Document, Object, ObjectId, Stream};

    /// A code space range: bytes per code, first and last code.
    type Range = (usize, u32, u32);

    pub fn normalise(doc: &mut Document) {
        let fonts: Vec<ObjectId> = doc
            .objects
            .iter()
            .filter(|(_, o)| {
                o.as_dict()
                    .and_then(|d| d.get(b"Subtype"))
                    .and_then(Object::as_name)
                    .is_ok_and(|n| n == b"Type0")
            })
            .map(|(id, _)| *id)
            .collect();
        for id in fonts {
            let Some((encoding, to_unicode)) = rebuild(doc, id) else {
                continue;
            };
            let encoding = doc.add_object(Stream::new(Dictionary::new(), encoding));
            let to_unicode = doc.add_object(Stream::new(Dictionary::new(), to_unicode));
            if let Ok(font) = doc.get_dictionary_mut(id) {
                font.set("Encoding", encoding);
                font.set("ToUnicode", to_unicode);
            }
        }
    }

    /// A new encoding CMap and ToUnicode CMap for a font pdf-extract would get
    /// wrong; `None` for a font it reads well.
    fn rebuild(doc: &mut Document, id: ObjectId) -> Option<(Vec<u8>, Vec<u8>)> {
        let font = doc.get_dictionary(id).ok()?;
        let encoding = font.get_deref(b"Encoding", doc).ok().cloned();
        let to_unicode = font.get_deref(b"ToUnicode", doc).ok().cloned();
        let descendant = font
            .get_deref(b"DescendantFonts", doc)
            .and_then(Object::as_array)
            .ok()
            .and_then(|a| a.first())
            .and_then(|d| doc.dereference(d).ok())
            .map(|(did, d)| (did, d.clone()));
        let identity = |name: &[u8]| matches!(name, b"Identity-H" | b"Identity-V");
        let encoding_name = encoding.as_ref().and_then(|e| e.as_name().ok());
        if encoding_name.is_some_and(identity) && matches!(to_unicode, Some(Object::Stream(_))) {
            return None;
        }
        let (_, descendant) = descendant?;
        let descendant = descendant.as_dict().ok()?.clone();

        let mut space: Vec<Range> = vec![(2, 0, 0xFFFF)];
        let mut cids: Vec<(u32, u32, u32)> = vec![(0, 0xFFFF, 0)];
        let mut unicode: BTreeMap<u32, String> = BTreeMap::new();
        let mut codes_are_unicode = false;
        let mut jis = false;
        match &encoding {
            Some(Object::Name(name)) if identity(name) => {}
            Some(Object::Name(name)) if matches!(name.as_slice(), b"H" | b"V") => {
                jis = true;
                space = vec![(2, 0x2121, 0x7E7E)];
            }
            Some(Object::Name(name)) if is_unicode_cmap(name) => codes_are_unicode = true,
            Some(Object::Stream(stream)) => {
                let cmap = parse_cmap(&content(stream));
                if !cmap.space.is_empty() {
                    space = cmap.space;
                }
                cids = cmap.cids;
            }
            // An encoding not known here: its codes stay undecoded, but the
            // rest of the page still reads.
            _ => {}
        }
        match &to_unicode {
            Some(Object::Stream(stream)) => unicode = parse_cmap(&content(stream)).unicode,
            Some(Object::Name(name)) if identity(name) => codes_are_unicode = true,
            _ => {}
        }
        if jis {
            for code in 0x2121..=0x7E7Eu32 {
                if let Some(text) = jis_text(code) {
                    unicode.entry(code).or_insert(text);
                }
            }
        }
        if !codes_are_unicode {
            let by_cid = cid_unicode(doc, &descendant);
            for &(low, high, cid) in &cids {
                for code in low..=high.min(low + 0xFFFF) {
                    if let Some(text) = by_cid.get(&(cid + code - low)) {
                        unicode.entry(code).or_insert_with(|| text.clone());
                    }
                }
            }
        }
        // pdf-extract needs a font descriptor on the CID font.
        if descendant.get(b"FontDescriptor").is_err() {
            let mut fixed = descendant.clone();
            fixed.set("FontDescriptor", Dictionary::new());
            let fixed = doc.add_object(fixed);
            if let Ok(font) = doc.get_dictionary_mut(id) {
                font.set("DescendantFonts", vec![Object::Reference(fixed)]);
            }
        }
        Some((
            encoding_cmap(&space),
            to_unicode_cmap(&unicode, codes_are_unicode),
        ))
    }

    fn is_unicode_cmap(name: &[u8]) -> bool {
        let name = String::from_utf8_lossy(name);
        name.starts_with("Uni") && (name.contains("-UCS2-") || name.contains("-UTF16-"))
    }

    fn content(stream: &Stream) -> Vec<u8> {
        stream
            .decompressed_content()
            .unwrap_or_else(|_| stream.content.clone())
    }

    /// The text of a JIS X 0208 code (row and cell bytes 0x21..=0x7E).
    fn jis_text(code: u32) -> Option<String> {
        let bytes = [(code >> 8) as u8 | 0x80, (code & 0xFF) as u8 | 0x80];
        encoding_rs::EUC_JP
            .decode_without_bom_handling_and_without_replacement(&bytes)
            .map(|t| t.into_owned())
    }

    /// CID → text from the CID font: the embedded TrueType program's cmap
    /// (through /CIDToGIDMap), or the Adobe-Japan1 character collection.
    fn cid_unicode(doc: &Document, cid_font: &Dictionary) -> BTreeMap<u32, String> {
        let mut by_cid = BTreeMap::new();
        let program = cid_font
            .get_deref(b"FontDescriptor", doc)
            .and_then(Object::as_dict)
            .and_then(|d| d.get_deref(b"FontFile2", doc))
            .and_then(Object::as_stream)
            .ok()
            .map(content);
        if let Some(by_glyph) = program.as_deref().and_then(truetype_cmap) {
            match cid_font
                .get_deref(b"CIDToGIDMap", doc)
                .and_then(Object::as_stream)
            {
                Ok(map) => {
                    for (cid, gid) in content(map).chunks_exact(2).enumerate() {
                        let gid = u16::from_be_bytes([gid[0], gid[1]]);
                        if let Some(&c) = by_glyph.get(&gid) {
                            by_cid.insert(cid as u32, c.to_string());
                        }
                    }
                }
                Err(_) => {
                    for (&gid, &c) in &by_glyph {
                        by_cid.insert(u32::from(gid), c.to_string());
                    }
                }
            }
        }
        let ordering = cid_font
            .get_deref(b"CIDSystemInfo", doc)
            .and_then(Object::as_dict)
            .and_then(|i| i.get_deref(b"Ordering", doc))
            .and_then(Object::as_str)
            .unwrap_or_default();
        if ordering == b"Japan1" {
            for (cid, text) in japan1::unicode() {
                by_cid.entry(cid).or_insert(text);
            }
        }
        by_cid
    }

    /// Glyph id → character from a TrueType program's Unicode cmap subtable
    /// (format 4 or 12).
    fn truetype_cmap(font: &[u8]) -> Option<BTreeMap<u16, char>> {
        let u16_at = |at: usize| Some(u16::from_be_bytes(font.get(at..at + 2)?.try_into().ok()?));
        let u32_at = |at: usize| Some(u32::from_be_bytes(font.get(at..at + 4)?.try_into().ok()?));
        let tables = u16_at(4)? as usize;
        let cmap = (0..tables).find_map(|i| {
            let record = 12 + 16 * i;
            (font.get(record..record + 4)? == b"cmap").then(|| u32_at(record + 8))?
        })? as usize;
        let mut best: Option<(u8, usize)> = None;
        for i in 0..u16_at(cmap + 2)? as usize {
            let record = cmap + 4 + 8 * i;
            let (platform, encoding) = (u16_at(record)?, u16_at(record + 2)?);
            let rank = match (platform, encoding) {
                (3, 10) => 4,
                (3, 1) => 3,
                (0, _) => 2,
                _ => continue,
            };
            if best.is_none_or(|(r, _)| rank > r) {
                best = Some((rank, cmap + u32_at(record + 4)? as usize));
            }
        }
        let (_, table) = best?;
        let mut glyphs = BTreeMap::new();
        let mut add = |code: u32, gid: u32| {
            if let (Some(c), Ok(gid)) = (char::from_u32(code), u16::try_from(gid))
                && gid != 0
            {
                glyphs.entry(gid).or_insert(c);
            }
        };
        match u16_at(table)? {
            4 => {
                let segments = u16_at(table + 6)? as usize / 2;
                let ends = table + 14;
                let starts = ends + 2 * segments + 2;
                let deltas = starts + 2 * segments;
                let offsets = deltas + 2 * segments;
                for s in 0..segments {
                    let (end, start) = (u16_at(ends + 2 * s)?, u16_at(starts + 2 * s)?);
                    let delta = u16_at(deltas + 2 * s)?;
                    let offset = u16_at(offsets + 2 * s)? as usize;
                    for code in start..=end.min(0xFFFE) {
                        let glyph = if offset == 0 {
                            code.wrapping_add(delta)
                        } else {
                            let at = offsets + 2 * s + offset + 2 * usize::from(code - start);
                            match u16_at(at) {
                                Some(0) | None => continue,
                                Some(g) => g.wrapping_add(delta),
                            }
                        };
                        add(u32::from(code), u32::from(glyph));
                    }
                }
            }
            12 => {
                let groups = (u32_at(table + 12)? as usize).min(1 << 16);
                for g in 0..groups {
                    let at = table + 16 + 12 * g;
                    let (start, end, glyph) = (u32_at(at)?, u32_at(at + 4)?, u32_at(at + 8)?);
                    for code in start..=end.min(start.saturating_add(0xFFFF)) {
                        add(code, glyph + (code - start));
                    }
                }
            }
            _ => return None,
        }
        Some(glyphs)
    }

    /// What a CMap file defines.
    #[derive(Default)]
    struct CMap {
        space: Vec<Range>,
        cids: Vec<(u32, u32, u32)>,
        unicode: BTreeMap<u32, String>,
    }

    #[derive(Debug, PartialEq)]
    enum Token {
        Hex(Vec<u8>),
        Int(u32),
        Word(String),
        Open,
        Close,
    }

    fn tokens(text: &[u8]) -> Vec<Token> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < text.len() {
            let c = text[i];
            match c {
                b'%' => {
                    while i < text.len() && text[i] != b'\n' && text[i] != b'\r' {
                        i += 1;
                    }
                }
                b'<' if text.get(i + 1) == Some(&b'<') => i += 2,
                b'>' if text.get(i + 1) == Some(&b'>') => i += 2,
                b'<' => {
                    let end = text[i..]
                        .iter()
                        .position(|&b| b == b'>')
                        .map_or(text.len(), |p| i + p);
                    let digits: Vec<u8> = text[i + 1..end]
                        .iter()
                        .filter_map(|&b| (b as char).to_digit(16).map(|d| d as u8))
                        .collect();
                    out.push(Token::Hex(
                        digits
                            .chunks(2)
                            .map(|p| p[0] << 4 | p.get(1).copied().unwrap_or(0))
                            .collect(),
                    ));
                    i = end + 1;
                }
                b'[' => {
                    out.push(Token::Open);
                    i += 1;
                }
                b']' => {
                    out.push(Token::Close);
                    i += 1;
                }
                b'(' => {
                    let mut depth = 0;
                    while i < text.len() {
                        match text[i] {
                            b'\\' => i += 1,
                            b'(' => depth += 1,
                            b')' => {
                                depth -= 1;
                                if depth == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                        i += 1;
                    }
                    i += 1;
                }
                _ if c.is_ascii_whitespace() || c == b'{' || c == b'}' || c == b'>' => i += 1,
                _ => {
                    let start = i;
                    while i < text.len() && !b" \t\r\n\x0c\0<>[]()/%{}".contains(&text[i])
                        || i == start
                    {
                        i += 1;
                    }
                    let word = String::from_utf8_lossy(&text[start..i]).into_owned();
                    match word.parse() {
                        Ok(n) => out.push(Token::Int(n)),
                        Err(_) => out.push(Token::Word(word)),
                    }
                }
            }
        }
        out
    }

    fn code(bytes: &[u8]) -> u32 {
        bytes
            .iter()
            .take(4)
            .fold(0, |acc, &b| acc << 8 | u32::from(b))
    }

    fn utf16(bytes: &[u8]) -> Option<String> {
        let units: Vec<u16> = bytes
            .chunks(2)
            .map(|p| u16::from_be_bytes([p[0], p.get(1).copied().unwrap_or(0)]))
            .collect();
        String::from_utf16(&units).ok().filter(|s| !s.is_empty())
    }

    fn parse_cmap(text: &[u8]) -> CMap {
        let tokens = tokens(text);
        let mut cmap = CMap::default();
        let mut section = "";
        let mut i = 0;
        while i < tokens.len() {
            match (&tokens[i], section) {
                (Token::Word(w), _) if w.starts_with("begin") => {
                    section = if w == "begincmap" { "" } else { &w[5..] }
                }
                (Token::Word(w), _) if w.starts_with("end") => section = "",
                (Token::Hex(low), "codespacerange") => {
                    if let Some(Token::Hex(high)) = tokens.get(i + 1) {
                        cmap.space
                            .push((low.len().clamp(1, 4), code(low), code(high)));
                        i += 1;
                    }
                }
                (Token::Hex(low), "cidrange") => {
                    if let (Some(Token::Hex(high)), Some(Token::Int(cid))) =
                        (tokens.get(i + 1), tokens.get(i + 2))
                    {
                        cmap.cids.push((code(low), code(high), *cid));
                        i += 2;
                    }
                }
                (Token::Hex(c), "cidchar") => {
                    if let Some(Token::Int(cid)) = tokens.get(i + 1) {
                        cmap.cids.push((code(c), code(c), *cid));
                        i += 1;
                    }
                }
                (Token::Hex(c), "bfchar") => {
                    if let Some(Token::Hex(dst)) = tokens.get(i + 1) {
                        if let Some(text) = utf16(dst) {
                            cmap.unicode.insert(code(c), text);
                        }
                        i += 1;
                    }
                }
                (Token::Hex(low), "bfrange") => {
                    let (low, high) = match tokens.get(i + 1) {
                        Some(Token::Hex(high)) => (code(low), code(high)),
                        _ => {
                            i += 1;
                            continue;
                        }
                    };
                    let high = high.min(low + 0xFFFF);
                    match tokens.get(i + 2) {
                        Some(Token::Hex(dst)) if dst.len() >= 2 => {
                            let last = u16::from_be_bytes([dst[dst.len() - 2], dst[dst.len() - 1]]);
                            for c in low..=high {
                                let mut dst = dst.clone();
                                let unit = last.wrapping_add((c - low) as u16).to_be_bytes();
                                let n = dst.len();
                                dst[n - 2..].copy_from_slice(&unit);
                                if let Some(text) = utf16(&dst) {
                                    cmap.unicode.insert(c, text);
                                }
                            }
                            i += 2;
                        }
                        Some(Token::Open) => {
                            let mut c = low;
                            i += 3;
                            while let Some(Token::Hex(dst)) = tokens.get(i) {
                                if let Some(text) = utf16(dst) {
                                    cmap.unicode.insert(c, text);
                                }
                                c += 1;
                                i += 1;
                            }
                        }
                        _ => i += 1,
                    }
                }
                _ => {}
            }
            i += 1;
        }
        cmap
    }

    /// An identity CMap (code = CID) over `space`, written for pdf-extract's
    /// CMap reader: it takes a code space bound of n bytes for codes of n/2
    /// bytes, and reads only the first range of a cidrange block.
    fn encoding_cmap(space: &[Range]) -> Vec<u8> {
        let hex = |value: u32, bytes: usize| format!("{value:0width$X}", width = bytes * 4);
        let mut out = String::from(
            "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n/CMapName /KtsIdentity def\n",
        );
        out.push_str(&format!("{} begincodespacerange\n", space.len()));
        for &(bytes, low, high) in space {
            out.push_str(&format!("<{}> <{}>\n", hex(low, bytes), hex(high, bytes)));
        }
        out.push_str("endcodespacerange\n1 begincidrange\n<00> <FFFFFFFF> 0\nendcidrange\n");
        out.push_str("endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n");
        out.into_bytes()
    }

    /// A ToUnicode CMap: code → text, or every two-byte code to itself.
    fn to_unicode_cmap(unicode: &BTreeMap<u32, String>, codes_are_unicode: bool) -> Vec<u8> {
        let mut out =
            String::from("/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n");
        if codes_are_unicode {
            let rows: Vec<u32> = (0..=0xFFu32)
                .filter(|r| !(0xD8..=0xDF).contains(r))
                .collect();
            for block in rows.chunks(100) {
                out.push_str(&format!("{} beginbfrange\n", block.len()));
                for row in block {
                    out.push_str(&format!("<{row:02X}00> <{row:02X}FF> <{row:02X}00>\n"));
                }
                out.push_str("endbfrange\n");
            }
        }
        let entries: Vec<(&u32, &String)> = unicode.iter().collect();
        for block in entries.chunks(100) {
            out.push_str(&format!("{} beginbfchar\n", block.len()));
            for (code, text) in block {
                let units: String = text.encode_utf16().map(|u| format!("{u:04X}")).collect();
                out.push_str(&format!("<{:04X}> <{units}>\n", code));
            }
            out.push_str("endbfchar\n");
        }
        out.push_str("endcmap\nend\nend\n");
        out.into_bytes()
    }

    /// Adobe-Japan1 CIDs of the JIS X 0208 characters (from Adobe's H and V
    /// CMaps) and of proportional ASCII.
    mod japan1 {
        pub fn unicode() -> Vec<(u32, String)> {
            let mut by_cid = Vec::new();
            for cid in 1..=95u32 {
                by_cid.push((cid, char::from_u32(0x1F + cid).unwrap_or(' ').to_string()));
            }
            for &(low, high, cid) in &JAPAN1_H {
                for code in low..=high {
                    if let Some(text) = super::jis_text(u32::from(code)) {
                        by_cid.push((u32::from(cid + code - low), text));
                    }
                }
            }
            for &(cid, code) in &JAPAN1_V {
                if let Some(text) = super::jis_text(u32::from(code)) {
                    by_cid.push((u32::from(cid), text));
                }
            }
            by_cid
        }

        const JAPAN1_H: [(u16, u16, u16); 118] = [
            (0x2121, 0x217E, 633),
            (0x2221, 0x222E, 727),
            (0x223A, 0x2241, 741),
            (0x224A, 0x2250, 749),
            (0x225C, 0x226A, 756),
            (0x2272, 0x2279, 771),
            (0x227E, 0x227E, 779),
            (0x2330, 0x2339, 780),
            (0x2341, 0x235A, 790),
            (0x2361, 0x237A, 816),
            (0x2421, 0x2473, 842),
            (0x2521, 0x2576, 925),
            (0x2621, 0x2638, 1011),
            (0x2641, 0x2658, 1035),
            (0x2721, 0x2741, 1059),
            (0x2751, 0x2771, 1092),
            (0x2821, 0x2821, 7479),
            (0x2822, 0x2822, 7481),
            (0x2823, 0x2823, 7491),
            (0x2824, 0x2824, 7495),
            (0x2825, 0x2825, 7503),
            (0x2826, 0x2826, 7499),
            (0x2827, 0x2827, 7507),
            (0x2828, 0x2828, 7523),
            (0x2829, 0x2829, 7515),
            (0x282A, 0x282A, 7531),
            (0x282B, 0x282B, 7539),
            (0x282C, 0x282C, 7480),
            (0x282D, 0x282D, 7482),
            (0x282E, 0x282E, 7494),
            (0x282F, 0x282F, 7498),
            (0x2830, 0x2830, 7506),
            (0x2831, 0x2831, 7502),
            (0x2832, 0x2832, 7514),
            (0x2833, 0x2833, 7530),
            (0x2834, 0x2834, 7522),
            (0x2835, 0x2835, 7538),
            (0x2836, 0x2836, 7554),
            (0x2837, 0x2837, 7511),
            (0x2838, 0x2838, 7526),
            (0x2839, 0x2839, 7519),
            (0x283A, 0x283A, 7534),
            (0x283B, 0x283B, 7542),
            (0x283C, 0x283C, 7508),
            (0x283D, 0x283D, 7527),
            (0x283E, 0x283E, 7516),
            (0x283F, 0x283F, 7535),
            (0x2840, 0x2840, 7545),
            (0x3021, 0x307E, 1125),
            (0x3121, 0x317E, 1219),
            (0x3221, 0x327E, 1313),
            (0x3321, 0x337E, 1407),
            (0x3421, 0x347E, 1501),
            (0x3521, 0x357E, 1595),
            (0x3621, 0x367E, 1689),
            (0x3721, 0x377E, 1783),
            (0x3821, 0x387E, 1877),
            (0x3921, 0x397E, 1971),
            (0x3A21, 0x3A7E, 2065),
            (0x3B21, 0x3B7E, 2159),
            (0x3C21, 0x3C7E, 2253),
            (0x3D21, 0x3D7E, 2347),
            (0x3E21, 0x3E7E, 2441),
            (0x3F21, 0x3F7E, 2535),
            (0x4021, 0x407E, 2629),
            (0x4121, 0x417E, 2723),
            (0x4221, 0x427E, 2817),
            (0x4321, 0x437E, 2911),
            (0x4421, 0x447E, 3005),
            (0x4521, 0x457E, 3099),
            (0x4621, 0x467E, 3193),
            (0x4721, 0x477E, 3287),
            (0x4821, 0x487E, 3381),
            (0x4921, 0x497E, 3475),
            (0x4A21, 0x4A7E, 3569),
            (0x4B21, 0x4B7E, 3663),
            (0x4C21, 0x4C7E, 3757),
            (0x4D21, 0x4D7E, 3851),
            (0x4E21, 0x4E7E, 3945),
            (0x4F21, 0x4F53, 4039),
            (0x5021, 0x507E, 4090),
            (0x5121, 0x517E, 4184),
            (0x5221, 0x527E, 4278),
            (0x5321, 0x537E, 4372),
            (0x5421, 0x547E, 4466),
            (0x5521, 0x557E, 4560),
            (0x5621, 0x567E, 4654),
            (0x5721, 0x577E, 4748),
            (0x5821, 0x587E, 4842),
            (0x5921, 0x597E, 4936),
            (0x5A21, 0x5A7E, 5030),
            (0x5B21, 0x5B7E, 5124),
            (0x5C21, 0x5C7E, 5218),
            (0x5D21, 0x5D7E, 5312),
            (0x5E21, 0x5E7E, 5406),
            (0x5F21, 0x5F7E, 5500),
            (0x6021, 0x607E, 5594),
            (0x6121, 0x617E, 5688),
            (0x6221, 0x627E, 5782),
            (0x6321, 0x637E, 5876),
            (0x6421, 0x647E, 5970),
            (0x6521, 0x657E, 6064),
            (0x6621, 0x667E, 6158),
            (0x6721, 0x677E, 6252),
            (0x6821, 0x687E, 6346),
            (0x6921, 0x697E, 6440),
            (0x6A21, 0x6A7E, 6534),
            (0x6B21, 0x6B7E, 6628),
            (0x6C21, 0x6C7E, 6722),
            (0x6D21, 0x6D7E, 6816),
            (0x6E21, 0x6E7E, 6910),
            (0x6F21, 0x6F7E, 7004),
            (0x7021, 0x707E, 7098),
            (0x7121, 0x717E, 7192),
            (0x7221, 0x727E, 7286),
            (0x7321, 0x737E, 7380),
            (0x7421, 0x7424, 7474),
            (0x7425, 0x7426, 8284),
        ];
        const JAPAN1_V: [(u16, u16); 53] = [
            (7887, 0x2122),
            (7888, 0x2123),
            (7889, 0x2131),
            (7890, 0x2132),
            (7891, 0x213C),
            (7892, 0x213D),
            (7893, 0x213E),
            (7894, 0x2141),
            (7895, 0x2142),
            (7896, 0x2143),
            (7897, 0x2144),
            (7898, 0x2145),
            (7899, 0x214A),
            (7900, 0x214B),
            (7901, 0x214C),
            (7902, 0x214D),
            (7903, 0x214E),
            (7904, 0x214F),
            (7905, 0x2150),
            (7906, 0x2151),
            (7907, 0x2152),
            (7908, 0x2153),
            (7909, 0x2154),
            (7910, 0x2155),
            (7911, 0x2156),
            (7912, 0x2157),
            (7913, 0x2158),
            (7914, 0x2159),
            (7915, 0x215A),
            (7916, 0x215B),
            (7917, 0x2161),
            (7918, 0x2421),
            (7919, 0x2423),
            (7920, 0x2425),
            (7921, 0x2427),
            (7922, 0x2429),
            (7923, 0x2443),
            (7924, 0x2463),
            (7925, 0x2465),
            (7926, 0x2467),
            (7927, 0x246E),
            (7928, 0x2521),
            (7929, 0x2523),
            (7930, 0x2525),
            (7931, 0x2527),
            (7932, 0x2529),
            (7933, 0x2543),
            (7934, 0x2563),
            (7935, 0x2565),
            (7936, 0x2567),
            (7937, 0x256E),
            (7938, 0x2575),
            (7939, 0x2576),
        ];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::Limits;
    use crate::images::ImageSink;
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

    fn run(bytes: &[u8], limits: &Limits) -> Result<Converted, ConvertError> {
        let mut images = ImageSink::default();
        convert(
            bytes,
            &mut Context {
                limits,
                images: &mut images,
            },
        )
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
        let pages_id = doc.new_object_id();
        let font_id = doc.add_object(font);
        let mut dict = dictionary! {};
        if let Some(filter) = filter {
            dict.set("Filter", Object::Name(filter.as_bytes().to_vec()));
        }
        let content_id = doc.add_object(Stream::new(dict, content));
        let page_id = doc.add_object(dictionary! {
            "Type" => "Page", "Parent" => pages_id, "Contents" => content_id,
            "Resources" => dictionary! { "Font" => dictionary! { "F1" => font_id } },
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
    fn right_to_left_lines_are_put_in_reading_order() {
        // "مرحبا Rust" as pdf-extract emits it: Arabic letters reversed, Latin not.
        let visual = "Rust ابحرم";
        assert_eq!(logical_order(visual), "مرحبا Rust");
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
