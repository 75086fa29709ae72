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
    let page_images = safety::make_safe(&mut doc, &pages);
    let image_links = image_links(&doc, &pages, &page_images, ctx);
    safety::blank_images(&mut doc, page_images.into_values().flatten());

    let mut markdown = String::new();
    let mut has_text = false;
    let mut glyphs = 0;
    for (&number, page_id) in &pages {
        let page = page_text(&doc, number);
        glyphs += page.glyphs;
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
    if !has_text {
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
        "the PDF has no text layer (a scanned image?); OCR is not supported"
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
    let doc = match Document::load_mem(bytes) {
        Ok(doc) => doc,
        Err(error) if is_password_error(&error) => return Err(password_protected()),
        Err(error) => xref::rebuilt(bytes)
            .and_then(|repaired| Document::load_mem(&repaired).ok())
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
        Ok::<_, pdf_extract::OutputError>(PageText { text, glyphs })
    }));
    match result {
        Ok(Ok(page)) => page,
        _ => PageText::default(),
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
    pub fn make_safe(
        doc: &mut Document,
        pages: &BTreeMap<u32, ObjectId>,
    ) -> HashMap<ObjectId, Vec<ObjectId>> {
        let mut images = HashMap::new();
        let mut removals = Removals::default();
        for &page_id in pages.values() {
            materialise_inherited(doc, page_id);
            let mut walker = Walker {
                doc,
                removals: &mut removals,
                images: Vec::new(),
                calls: 0,
                decoded: HashMap::new(),
            };
            walker.walk_page(page_id);
            images.insert(page_id, walker.images);
        }
        apply(doc, &removals);
        images
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
                    Target::Form(_) | Target::Unusable => {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::Limits;
    use crate::images::ImageSink;
    use lopdf::content::{Content, Operation};
    use lopdf::{Stream, dictionary};

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
    fn a_self_drawing_form_is_drawn_once_instead_of_forever() {
        let markdown = run(&pdf(&["Cover"], true), &Limits::default())
            .unwrap()
            .markdown;
        assert_eq!(markdown.matches("looping form").count(), 1, "{markdown}");
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
