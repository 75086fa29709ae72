//! Shared reading of Office Open XML packages (docx, pptx, xlsx comments),
//! and of the other zip packages kts reads (OpenDocument, EPUB).
//!
//! [`Package::open`] vets a package before anything parses it: it refuses
//! legacy/encrypted OLE files, damaged zips, zip bombs (by decompressing every
//! entry under a hard cap, never trusting declared sizes) and relationships
//! that would pull in a local file. Afterwards parts can be read freely.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Cursor, Read};

use kts_record::ErrorCode;
use quick_xml::Reader;
use quick_xml::events::{BytesRef, BytesStart, Event};
use serde_json::{Map, Value};
use zip::ZipArchive;

use super::table::markdown_table;
use super::{ConvertError, Limits};

const OLE_MAGIC: [u8; 8] = [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1];
/// Entries smaller than this are never judged by their compression ratio:
/// small XML parts legitimately compress very well.
const RATIO_CHECK_MIN_BYTES: u64 = 1 << 20;

/// A vetted OOXML package.
pub struct Package<'a> {
    zip: ZipArchive<Cursor<&'a [u8]>>,
    /// The largest number of bytes one part may decompress to.
    part_cap: u64,
}

/// One relationship of a part.
#[derive(Clone, Debug, PartialEq)]
pub struct Relationship {
    pub id: String,
    /// The full type URI.
    pub rel_type: String,
    /// For an internal target, the part name resolved against the source part
    /// (no leading `/`); for an external one, the target as written.
    pub target: String,
    pub external: bool,
}

impl Relationship {
    /// Whether the relationship's type URI ends with `/<kind>` (namespace
    /// variants such as Strict OOXML differ only in the prefix).
    pub fn is(&self, kind: &str) -> bool {
        self.rel_type
            .rsplit('/')
            .next()
            .is_some_and(|last| last.eq_ignore_ascii_case(kind))
    }
}

impl<'a> Package<'a> {
    /// Opens and vets a package; see the module documentation.
    pub fn open(bytes: &'a [u8], limits: &Limits) -> Result<Self, ConvertError> {
        if bytes.is_empty() {
            return Err(ConvertError::new(ErrorCode::Empty, "the file is empty"));
        }
        if bytes.starts_with(&OLE_MAGIC) {
            return Err(ole_error(bytes));
        }
        let zip = ZipArchive::new(Cursor::new(bytes)).map_err(|e| {
            if bytes.starts_with(b"PK") {
                ConvertError::corrupt(format!("truncated zip: {e}"))
            } else {
                ConvertError::corrupt(format!("not a zip package: {e}"))
            }
        })?;
        let mut package = Package {
            zip,
            part_cap: limits.max_unpacked_bytes,
        };
        package.check_sizes(limits)?;
        package.check_external_relationships()?;
        Ok(package)
    }

    /// Decompresses every entry (discarding the bytes) to measure what the
    /// package really holds and to find damaged entries up front.
    fn check_sizes(&mut self, limits: &Limits) -> Result<(), ConvertError> {
        let mut total: u64 = 0;
        for index in 0..self.zip.len() {
            let mut entry = self
                .zip
                .by_index(index)
                .map_err(|e| ConvertError::corrupt(format!("damaged zip entry: {e}")))?;
            if entry.encrypted() {
                return Err(ConvertError::new(
                    ErrorCode::Encrypted,
                    "password-protected zip entry",
                ));
            }
            let name = entry.name().to_owned();
            // docx-rs preallocates by the declared size, so it must be sane too.
            if entry.size() > limits.max_unpacked_bytes {
                return Err(too_large(&name, limits));
            }
            let remaining = limits.max_unpacked_bytes.saturating_sub(total);
            let read = std::io::copy(
                &mut (&mut entry).take(remaining.saturating_add(1)),
                &mut std::io::sink(),
            )
            .map_err(|e| ConvertError::corrupt(format!("truncated zip: entry {name}: {e}")))?;
            total = total.saturating_add(read);
            if total > limits.max_unpacked_bytes {
                return Err(too_large(&name, limits));
            }
            if read != entry.size() {
                return Err(ConvertError::corrupt(format!(
                    "damaged zip: entry {name} declares {} bytes but holds {read}",
                    entry.size()
                )));
            }
            let compressed = entry.compressed_size().max(1);
            if read > RATIO_CHECK_MIN_BYTES && read / compressed > limits.max_compression_ratio {
                return Err(ConvertError::new(
                    ErrorCode::TooLarge,
                    format!(
                        "zip entry {name} expands {}x, over the limit of {}x (zip bomb?)",
                        read / compressed,
                        limits.max_compression_ratio
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Refuses a package whose relationships would pull in a local file.
    fn check_external_relationships(&mut self) -> Result<(), ConvertError> {
        let rels_parts: Vec<String> = self
            .zip
            .file_names()
            .filter(|n| n.to_ascii_lowercase().ends_with(".rels"))
            .map(str::to_owned)
            .collect();
        for name in rels_parts {
            let Some(xml) = self.read_part(&name) else {
                continue;
            };
            for rel in parse_relationships(&xml, "") {
                if rel.external && pulls_in_local_file(&rel) {
                    return Err(ConvertError::new(
                        ErrorCode::ExternalReference,
                        format!(
                            "the document links a local file it would load ({} relationship): {}",
                            short_type(&rel),
                            rel.target
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The bytes of a part, or `None` when it is missing or unreadable.
    /// A leading `/` and case differences in the name are tolerated.
    pub fn part(&mut self, name: &str) -> Option<Vec<u8>> {
        let name = self.entry_name(name)?;
        self.read_part(&name)
    }

    /// A part as a stream, for parts too large to hold whole (a worksheet);
    /// `None` when it is missing. Names are matched as by [`Self::part`].
    pub fn part_reader(&mut self, name: &str) -> Option<impl BufRead + '_> {
        let name = self.entry_name(name)?;
        let entry = self.zip.by_name(&name).ok()?;
        Some(BufReader::new(entry.take(self.part_cap)))
    }

    /// The zip entry of a part name, a leading `/` and case differences
    /// tolerated.
    fn entry_name(&self, name: &str) -> Option<String> {
        let name = name.trim_start_matches('/');
        if self.zip.index_for_name(name).is_some() {
            return Some(name.to_owned());
        }
        self.zip
            .file_names()
            .find(|n| n.eq_ignore_ascii_case(name))
            .map(str::to_owned)
    }

    /// A part parsed, `None` when it is missing; an error when it is not
    /// well-formed or declares entities.
    pub fn xml_part(&mut self, name: &str) -> Result<Option<Element>, ConvertError> {
        let Some(xml) = self.part(name) else {
            return Ok(None);
        };
        refuse_entity_declarations(name, &xml)?;
        Element::parse(&xml)
            .map(Some)
            .ok_or_else(|| ConvertError::corrupt(format!("{name} is not well-formed XML")))
    }

    /// The names of the package's XML parts (`.xml` and `.rels`).
    pub fn xml_part_names(&self) -> Vec<String> {
        self.zip
            .file_names()
            .filter(|n| {
                let lower = n.to_ascii_lowercase();
                lower.ends_with(".xml") || lower.ends_with(".rels")
            })
            .map(str::to_owned)
            .collect()
    }

    fn read_part(&mut self, name: &str) -> Option<Vec<u8>> {
        let entry = self.zip.by_name(name).ok()?;
        let mut data = Vec::new();
        entry.take(self.part_cap).read_to_end(&mut data).ok()?;
        Some(data)
    }

    /// A copy of the package with these parts' contents replaced, or added
    /// where the package lacks them (stored uncompressed); the other entries
    /// are copied without recompression.
    pub fn with_parts_replaced(
        &mut self,
        parts: &[(&str, &[u8])],
    ) -> Result<Vec<u8>, ConvertError> {
        let failed = |e: zip::result::ZipError| ConvertError::corrupt(format!("damaged zip: {e}"));
        let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        let parts: Vec<(&str, &[u8])> = parts
            .iter()
            .map(|(name, content)| (name.trim_start_matches('/'), *content))
            .collect();
        let mut written = vec![false; parts.len()];
        for index in 0..self.zip.len() {
            let entry = self.zip.by_index_raw(index).map_err(failed)?;
            match parts.iter().position(|(name, _)| *name == entry.name()) {
                Some(part) => {
                    drop(entry);
                    written[part] = true;
                    write_entry(&mut writer, parts[part], options)?;
                }
                None => writer.raw_copy_file(entry).map_err(failed)?,
            }
        }
        for (part, _) in parts.iter().zip(&written).filter(|(_, written)| !**written) {
            write_entry(&mut writer, *part, options)?;
        }
        Ok(writer.finish().map_err(failed)?.into_inner())
    }

    /// The relationships of a part (`""` for the package itself); empty when
    /// the part has none.
    pub fn relationships(&mut self, part: &str) -> Vec<Relationship> {
        let part = part.trim_start_matches('/');
        let dir = part.rsplit_once('/').map_or("", |(dir, _)| dir);
        match self.part(&relationships_part(part)) {
            Some(xml) => parse_relationships(&xml, dir),
            None => Vec::new(),
        }
    }

    /// The main part the package-level relationship of `kind` points to.
    pub fn main_part(&mut self, kind: &str) -> Option<String> {
        self.relationships("")
            .into_iter()
            .find(|r| r.is(kind) && !r.external)
            .map(|r| r.target)
    }

    /// Title and properties from `docProps/core.xml` (and `app.xml`).
    pub fn core_properties(&mut self) -> (Option<String>, Map<String, Value>) {
        let mut properties = Map::new();
        let mut title = None;
        let core = self
            .main_part("core-properties")
            .unwrap_or_else(|| "docProps/core.xml".to_owned());
        if let Some(xml) = self.part(&core) {
            for (key, value) in simple_elements(&xml) {
                let field = match key.as_str() {
                    "title" => {
                        title = Some(value);
                        continue;
                    }
                    "creator" => "author",
                    "lastModifiedBy" => "last_modified_by",
                    "created" => "created",
                    "modified" => "modified",
                    "subject" => "subject",
                    "description" => "description",
                    "keywords" => "keywords",
                    "category" => "category",
                    _ => continue,
                };
                properties.insert(field.to_owned(), Value::String(value));
            }
        }
        (title, properties)
    }
}

fn write_entry(
    writer: &mut zip::ZipWriter<Cursor<Vec<u8>>>,
    (name, content): (&str, &[u8]),
    options: zip::write::SimpleFileOptions,
) -> Result<(), ConvertError> {
    writer
        .start_file(name, options)
        .map_err(|e| ConvertError::corrupt(format!("damaged zip: {e}")))?;
    std::io::Write::write_all(writer, content).map_err(|e| ConvertError::corrupt(e.to_string()))
}

/// Whether the bytes are an OLE compound file (legacy Office, or encrypted OOXML).
pub fn is_ole(bytes: &[u8]) -> bool {
    bytes.starts_with(&OLE_MAGIC)
}

/// The error for a password-protected Office file: an OLE compound file
/// holding the streams of ECMA-376 encryption. `None` for anything else.
pub fn encryption_error(bytes: &[u8]) -> Option<ConvertError> {
    // Stream names sit in the directory as UTF-16LE.
    let needle: Vec<u8> = "EncryptionInfo"
        .encode_utf16()
        .flat_map(u16::to_le_bytes)
        .collect();
    (is_ole(bytes) && bytes.windows(needle.len()).any(|w| w == needle.as_slice())).then(|| {
        ConvertError::new(
            ErrorCode::Encrypted,
            "password-protected Office file (ECMA-376 encryption)",
        )
    })
}

/// Why an OLE compound file cannot be converted as a package.
fn ole_error(bytes: &[u8]) -> ConvertError {
    encryption_error(bytes).unwrap_or_else(|| {
        ConvertError::new(
            ErrorCode::Unsupported,
            "a compound file (a legacy binary Office format) where a zip package was expected; \
             kts reads .doc, .ppt and .xls files by their content",
        )
    })
}

fn too_large(name: &str, limits: &Limits) -> ConvertError {
    ConvertError::new(
        ErrorCode::TooLarge,
        format!(
            "package decompresses to more than {} bytes (at entry {name}; zip bomb?)",
            limits.max_unpacked_bytes
        ),
    )
}

fn short_type(rel: &Relationship) -> &str {
    rel.rel_type.rsplit('/').next().unwrap_or(&rel.rel_type)
}

/// Whether an external relationship would make Office load a local file.
/// Hyperlinks are only followed on a click, and remote URLs are not local.
fn pulls_in_local_file(rel: &Relationship) -> bool {
    // Hyperlinks are only followed by a reader who clicks; a template only lends styles.
    if rel.is("hyperlink") || rel.is("attachedTemplate") {
        return false;
    }
    let target = rel.target.trim().to_ascii_lowercase();
    let remote = ["http://", "https://", "mailto:", "ftp://", "ftps://"]
        .iter()
        .any(|s| target.starts_with(s));
    if remote || target.starts_with('#') {
        return false;
    }
    // A linked picture (Insert > Picture > Link to File) is ordinary and never read;
    // an "image" that is not an image file is a local file smuggled in as one.
    !(rel.is("image") && has_image_extension(&target))
}

fn has_image_extension(target: &str) -> bool {
    let name = target.rsplit(['/', '\\']).next().unwrap_or(target);
    let extension = name.rsplit_once('.').map_or("", |(_, e)| e);
    matches!(
        extension,
        "png" | "jpg" | "jpeg" | "gif" | "bmp" | "tif" | "tiff" | "emf" | "wmf" | "svg" | "webp"
    )
}

/// The part that holds a part's relationships (`""` for the package's):
/// `word/document.xml` has `word/_rels/document.xml.rels`.
pub fn relationships_part(part: &str) -> String {
    let part = part.trim_start_matches('/');
    match part.rsplit_once('/') {
        Some((dir, file)) => format!("{dir}/_rels/{file}.rels"),
        None => format!("_rels/{part}.rels"),
    }
}

/// Parses a `.rels` part. Internal targets are resolved against `base_dir`.
pub fn parse_relationships(xml: &[u8], base_dir: &str) -> Vec<Relationship> {
    let mut reader = Reader::from_reader(xml);
    let mut rels = Vec::new();
    loop {
        match reader.read_event() {
            Ok(Event::Start(e) | Event::Empty(e)) if e.local_name().as_ref() == b"Relationship" => {
                let (Some(id), Some(target)) = (attr(&e, b"Id"), attr(&e, b"Target")) else {
                    continue;
                };
                let rel_type = attr(&e, b"Type").unwrap_or_default();
                let external =
                    attr(&e, b"TargetMode").is_some_and(|m| m.eq_ignore_ascii_case("external"));
                let target = if external {
                    target
                } else {
                    resolve_target(base_dir, &target)
                };
                rels.push(Relationship {
                    id,
                    rel_type,
                    target,
                    external,
                });
            }
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
    }
    rels
}

/// Resolves a relative part reference (`../media/image1.png`) against a folder.
pub fn resolve_target(base_dir: &str, target: &str) -> String {
    let target = target.replace('\\', "/");
    let mut segments: Vec<&str> = Vec::new();
    if !target.starts_with('/') {
        segments.extend(base_dir.split('/').filter(|s| !s.is_empty()));
    }
    for segment in target.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            s => segments.push(s),
        }
    }
    segments.join("/")
}

/// The unescaped value of the attribute with this local name.
pub fn attr(e: &BytesStart, local: &[u8]) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| a.key.local_name().as_ref() == local)
        .map(|a| {
            let raw = String::from_utf8_lossy(&a.value);
            quick_xml::escape::unescape(&raw)
                .map(|s| s.into_owned())
                .unwrap_or_else(|_| raw.into_owned())
        })
}

/// Refuses a part whose DTD declares entities. The parser never expands
/// them (an undeclared reference reads as nothing), so an entity bomb or an
/// external entity pointing at a local file would be harmless; refusing
/// says clearly what the file tried.
pub fn refuse_entity_declarations(part: &str, xml: &[u8]) -> Result<(), ConvertError> {
    let mut reader = Reader::from_reader(xml);
    loop {
        match reader.read_event() {
            Ok(Event::DocType(doctype)) => {
                let declarations = String::from_utf8_lossy(&doctype).to_ascii_uppercase();
                let Some(at) = declarations.find("<!ENTITY") else {
                    return Ok(());
                };
                let entity = &declarations[at..];
                return Err(if entity.contains("SYSTEM") || entity.contains("PUBLIC") {
                    ConvertError::new(
                        ErrorCode::ExternalReference,
                        format!("{part} declares an external XML entity; it is never read"),
                    )
                } else {
                    ConvertError::new(
                        ErrorCode::Unsupported,
                        format!("{part} declares XML entities (a DTD); they are not expanded"),
                    )
                });
            }
            // The prolog ends at the first element: a DTD cannot follow it.
            Ok(Event::Start(_) | Event::Empty(_) | Event::Eof) | Err(_) => return Ok(()),
            _ => {}
        }
    }
}

/// Whether `needle` occurs in `haystack`.
pub fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

/// The text an entity or character reference stands for.
pub fn reference_text(r: &BytesRef) -> String {
    if let Ok(Some(c)) = r.resolve_char_ref() {
        return c.to_string();
    }
    let name = r.decode().unwrap_or_default();
    quick_xml::escape::resolve_predefined_entity(&name)
        .map(str::to_owned)
        .unwrap_or_default()
}

/// Leaf elements with text, as (local name, text): enough for docProps.
fn simple_elements(xml: &[u8]) -> Vec<(String, String)> {
    let mut reader = Reader::from_reader(xml);
    let mut out = Vec::new();
    let mut current: Option<(String, String)> = None;
    loop {
        match reader.read_event() {
            Ok(Event::Start(e)) => {
                current = Some((
                    String::from_utf8_lossy(e.local_name().as_ref()).into_owned(),
                    String::new(),
                ));
            }
            Ok(Event::Text(t)) => {
                if let Some((_, text)) = current.as_mut() {
                    text.push_str(&t.decode().unwrap_or_default());
                }
            }
            Ok(Event::GeneralRef(r)) => {
                if let Some((_, text)) = current.as_mut() {
                    text.push_str(&reference_text(&r));
                }
            }
            Ok(Event::End(_)) => {
                if let Some((name, text)) = current.take() {
                    let text = text.trim();
                    if !text.is_empty() {
                        out.push((name, text.to_owned()));
                    }
                }
            }
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
    }
    out
}

/// A parsed XML element: local names only, text and entity references merged.
#[derive(Debug, Default)]
pub struct Element {
    pub name: String,
    pub attrs: Vec<(String, String)>,
    pub children: Vec<Node>,
}

#[derive(Debug)]
pub enum Node {
    Element(Element),
    Text(String),
}

/// Elements nested deeper than this are dropped (hostile nesting would
/// otherwise exhaust the stack of the recursive walkers).
const MAX_DEPTH: usize = 200;

impl Element {
    /// Parses a part into a tree; `None` when it is not well-formed XML.
    pub fn parse(xml: &[u8]) -> Option<Element> {
        let mut reader = Reader::from_reader(xml);
        let mut stack: Vec<Element> = vec![Element::default()];
        loop {
            match reader.read_event().ok()? {
                Event::Start(e) => stack.push(Element::from_start(&e)),
                Event::Empty(e) => {
                    let element = Element::from_start(&e);
                    push_child(&mut stack, Node::Element(element));
                }
                Event::End(_) if stack.len() > 1 => {
                    let element = stack.pop()?;
                    push_child(&mut stack, Node::Element(element));
                }
                Event::Text(t) => push_text(&mut stack, &t.decode().unwrap_or_default()),
                Event::CData(t) => push_text(&mut stack, &t.decode().unwrap_or_default()),
                Event::GeneralRef(r) => push_text(&mut stack, &reference_text(&r)),
                Event::Eof => break,
                _ => {}
            }
        }
        while stack.len() > 1 {
            let element = stack.pop()?;
            push_child(&mut stack, Node::Element(element));
        }
        stack.pop()?.children.into_iter().find_map(|n| match n {
            Node::Element(e) => Some(e),
            Node::Text(_) => None,
        })
    }

    fn from_start(e: &BytesStart) -> Element {
        let name = String::from_utf8_lossy(e.local_name().as_ref()).into_owned();
        let attrs = e
            .attributes()
            .flatten()
            .map(|a| {
                let key = String::from_utf8_lossy(a.key.local_name().as_ref()).into_owned();
                let raw = String::from_utf8_lossy(&a.value);
                let value = quick_xml::escape::unescape(&raw)
                    .map(|s| s.into_owned())
                    .unwrap_or_else(|_| raw.into_owned());
                (key, value)
            })
            .collect();
        Element {
            name,
            attrs,
            children: Vec::new(),
        }
    }

    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn elements(&self) -> impl Iterator<Item = &Element> {
        self.children.iter().filter_map(|n| match n {
            Node::Element(e) => Some(e),
            Node::Text(_) => None,
        })
    }

    /// The first child element with this local name.
    pub fn child(&self, name: &str) -> Option<&Element> {
        self.elements().find(|e| e.name == name)
    }

    /// Follows a path of child names.
    pub fn path(&self, names: &[&str]) -> Option<&Element> {
        names.iter().try_fold(self, |e, name| e.child(name))
    }

    /// Every descendant element with this local name, in document order.
    pub fn descendants<'e>(&'e self, name: &str, out: &mut Vec<&'e Element>) {
        for e in self.elements() {
            if e.name == name {
                out.push(e);
            }
            e.descendants(name, out);
        }
    }

    /// All text below this element.
    pub fn text(&self) -> String {
        let mut out = String::new();
        self.collect_text(&mut out);
        out
    }

    fn collect_text(&self, out: &mut String) {
        for node in &self.children {
            match node {
                Node::Text(t) => out.push_str(t),
                Node::Element(e) => e.collect_text(out),
            }
        }
    }
}

fn push_child(stack: &mut [Element], node: Node) {
    if stack.len() <= MAX_DEPTH
        && let Some(parent) = stack.last_mut()
    {
        parent.children.push(node);
    }
}

fn push_text(stack: &mut [Element], text: &str) {
    if text.is_empty() {
        return;
    }
    if let Some(parent) = stack.last_mut() {
        if let Some(Node::Text(last)) = parent.children.last_mut() {
            last.push_str(text);
        } else {
            parent.children.push(Node::Text(text.to_owned()));
        }
    }
}

/// A chart part (`c:chartSpace`) as Markdown: a line naming the kind of
/// chart and its title, then its data as a table (categories by series, from
/// the values cached in the part). Empty when the chart holds nothing.
pub fn chart_markdown(root: &Element) -> String {
    chart_with_values(root, &HashMap::new())
}

/// A chart as [`chart_markdown`] writes it; the data the part caches no
/// values for is taken from `referenced`: the values of the cells each data
/// reference ([`uncached_references`]) names, in order.
pub fn chart_with_values(root: &Element, referenced: &HashMap<String, Vec<String>>) -> String {
    let mut lines = Vec::new();
    let title = root
        .path(&["chart", "title"])
        .map(drawing_text)
        .unwrap_or_default();
    let kind = chart_kind(root);
    match (kind, title.is_empty()) {
        (Some(kind), false) => lines.push(format!("{kind}: {title}")),
        (Some(kind), true) => lines.push(kind),
        (None, false) => lines.push(title),
        (None, true) => {}
    }
    let table = chart_table(root, referenced);
    if !table.is_empty() {
        lines.push(table);
    }
    lines.join("\n\n")
}

/// The data references (`c:f`, such as `'Data'!$B$1:$B$5`) of a chart's
/// series whose values the part does not cache.
pub fn uncached_references(root: &Element) -> Vec<String> {
    let mut series = Vec::new();
    root.descendants("ser", &mut series);
    series
        .iter()
        .flat_map(|ser| ser.elements())
        .filter(|data| matches!(data.name.as_str(), "tx" | "cat" | "val" | "xVal" | "yVal"))
        .filter(|data| cached_points(data).is_empty())
        .filter_map(data_reference)
        .collect()
}

/// "Bar chart", "Line chart", ... from the first plot of the plot area.
fn chart_kind(root: &Element) -> Option<String> {
    let plot = root
        .path(&["chart", "plotArea"])?
        .elements()
        .find(|e| e.name.ends_with("Chart") && e.name.len() > 5)?;
    let base = plot.name.trim_end_matches("Chart").trim_end_matches("3D");
    let mut chars = base.chars();
    let first = chars.next()?.to_uppercase().collect::<String>();
    Some(format!("{first}{} chart", chars.as_str()))
}

/// The text of DrawingML paragraphs (`a:p` / `a:t`) below an element, one line.
pub fn drawing_text(element: &Element) -> String {
    let mut paragraphs = Vec::new();
    element.descendants("p", &mut paragraphs);
    let texts: Vec<String> = paragraphs
        .iter()
        .map(|p| {
            let mut runs = Vec::new();
            p.descendants("t", &mut runs);
            runs.iter().map(|t| t.text()).collect::<String>()
        })
        .collect();
    texts
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// A chart's series as a Markdown table: one row per category, one column
/// per series (from the values cached in the chart part, else
/// `referenced`). Empty when no series has a name, a category or a value.
fn chart_table(root: &Element, referenced: &HashMap<String, Vec<String>>) -> String {
    let points = |data: &Element| {
        let cached = cached_points(data);
        if !cached.is_empty() {
            return cached;
        }
        data_reference(data)
            .and_then(|reference| referenced.get(&reference))
            .map(|values| values.iter().cloned().enumerate().collect())
            .unwrap_or_default()
    };
    let mut series = Vec::new();
    root.descendants("ser", &mut series);
    let mut header = vec![String::new()];
    let mut categories: Vec<String> = Vec::new();
    let mut columns: Vec<HashMap<usize, String>> = Vec::new();
    for ser in series.iter().take(64) {
        header.push(
            ser.child("tx")
                .map(|tx| {
                    points(tx)
                        .into_iter()
                        .map(|(_, v)| v)
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .unwrap_or_default(),
        );
        if categories.is_empty()
            && let Some(cat) = ser.child("cat").or_else(|| ser.child("xVal"))
        {
            let category_points = points(cat);
            let count = category_points
                .iter()
                .map(|(i, _)| i + 1)
                .max()
                .unwrap_or(0)
                .min(MAX_CHART_ROWS);
            categories = vec![String::new(); count];
            for (i, v) in category_points {
                if let Some(slot) = categories.get_mut(i) {
                    *slot = v;
                }
            }
        }
        let values = ser
            .child("val")
            .or_else(|| ser.child("yVal"))
            .map(points)
            .unwrap_or_default();
        columns.push(values.into_iter().collect());
    }
    if columns.is_empty() {
        return String::new();
    }
    let rows = categories
        .len()
        .max(
            columns
                .iter()
                .filter_map(|c| c.keys().max())
                .map(|m| m.saturating_add(1))
                .max()
                .unwrap_or(0),
        )
        .min(MAX_CHART_ROWS);
    let mut table = vec![header];
    for i in 0..rows {
        let mut row = vec![categories.get(i).cloned().unwrap_or_default()];
        row.extend(
            columns
                .iter()
                .map(|c| c.get(&i).cloned().unwrap_or_default()),
        );
        table.push(row);
    }
    if table.iter().flatten().all(String::is_empty) {
        return String::new();
    }
    markdown_table(&table).trim_end().to_owned()
}

const MAX_CHART_ROWS: usize = 10_000;

/// The cached points (`c:pt idx` / `c:v`) below a chart data reference.
fn cached_points(data: &Element) -> Vec<(usize, String)> {
    let one_line = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut points = Vec::new();
    data.descendants("pt", &mut points);
    if points.is_empty() {
        // A literal name has a bare `c:v`.
        let mut values = Vec::new();
        data.descendants("v", &mut values);
        return values
            .iter()
            .map(|v| one_line(&v.text()))
            .enumerate()
            .collect();
    }
    points
        .iter()
        .filter_map(|pt| {
            let idx = pt.attr("idx")?.parse().ok()?;
            Some((idx, tidy_number(&one_line(&pt.child("v")?.text()))))
        })
        .collect()
}

/// The formula of a chart data reference (`c:numRef/c:f`), as written.
fn data_reference(data: &Element) -> Option<String> {
    let mut formulas = Vec::new();
    data.descendants("f", &mut formulas);
    let formula = formulas.first()?.text().trim().to_owned();
    (!formula.is_empty()).then_some(formula)
}

/// A cached chart value without binary floating-point noise
/// (`4.4000000000000004` is shown as `4.4`, as Office does).
fn tidy_number(value: &str) -> String {
    let digits = value.chars().filter(char::is_ascii_digit).count();
    match value.parse::<f64>() {
        Ok(v) if digits > 15 && v.is_finite() && !value.contains(['e', 'E']) => {
            let fixed = format!("{v:.10}");
            let fixed = fixed.trim_end_matches('0').trim_end_matches('.');
            if fixed == "-0" || fixed.is_empty() {
                "0".to_owned()
            } else {
                fixed.to_owned()
            }
        }
        _ => value.to_owned(),
    }
}

/// Whether XML ends with elements still open (a part cut short). Syntax
/// errors are not counted: parsers report those; an unexpected end is what
/// some of them loop on.
pub fn is_cut_short(xml: &[u8]) -> bool {
    let mut reader = Reader::from_reader(xml);
    reader.config_mut().check_end_names = false;
    let mut depth = 0usize;
    loop {
        match reader.read_event() {
            Ok(Event::Start(_)) => depth += 1,
            Ok(Event::End(_)) => depth = depth.saturating_sub(1),
            Ok(Event::Eof) => return depth > 0,
            Err(_) => return false,
            Ok(_) => {}
        }
    }
}

/// Whether XML reads without a syntax error (an end tag that is not its
/// start tag's, say); XML cut short is [`is_cut_short`]'s to tell.
pub fn is_well_formed(xml: &[u8]) -> bool {
    let mut reader = Reader::from_reader(xml);
    loop {
        match reader.read_event() {
            Ok(Event::Eof) => return true,
            Err(_) => return false,
            Ok(_) => {}
        }
    }
}

/// The local name of a part's root element (`document` for `<w:document>`).
pub fn root_element(xml: &[u8]) -> Option<String> {
    let mut reader = Reader::from_reader(xml);
    loop {
        match reader.read_event() {
            Ok(Event::Start(e)) | Ok(Event::Empty(e)) => {
                return Some(String::from_utf8_lossy(e.local_name().as_ref()).into_owned());
            }
            Ok(Event::Eof) | Err(_) => return None,
            Ok(_) => {}
        }
    }
}

/// Alt text without the boilerplate Office appends to descriptions it
/// generated itself ("... Description automatically generated",
/// "AI-generated content may be incorrect."), and none at all when it is
/// only the picture's file name, which Office fills in and which describes
/// nothing.
pub fn clean_alt_text(alt: &str) -> String {
    if is_file_name(alt.trim()) {
        return String::new();
    }
    const BOILERPLATE: [&str; 6] = [
        "ai-generated content may be incorrect.",
        "ai-generated content may be incorrect",
        "description automatically generated with medium confidence",
        "description automatically generated with low confidence",
        "description automatically generated",
        "automatically generated",
    ];
    let mut text = alt.split_whitespace().collect::<Vec<_>>().join(" ");
    loop {
        let lower = text.to_lowercase();
        let Some(cut) = BOILERPLATE
            .iter()
            .find(|b| lower.ends_with(*b) && lower.len() == text.len())
            .map(|b| text.len() - b.len())
        else {
            break;
        };
        text.truncate(cut);
        text = text
            .trim_end_matches(|c: char| c.is_whitespace() || matches!(c, '.' | ',' | ';' | '-'))
            .to_owned();
    }
    text
}

/// One word ending in an image file's extension (`_good_picture.png`).
fn is_file_name(text: &str) -> bool {
    const EXTENSIONS: [&str; 10] = [
        "png", "jpg", "jpeg", "gif", "bmp", "tif", "tiff", "emf", "wmf", "svg",
    ];
    !text.contains(char::is_whitespace)
        && text.rsplit_once('.').is_some_and(|(stem, extension)| {
            !stem.is_empty() && EXTENSIONS.contains(&extension.to_ascii_lowercase().as_str())
        })
}

/// A review comment as one Markdown blockquote line.
pub fn comment_line(author: &str, text: &str) -> String {
    let one_line = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let (author, text) = (one_line(author), one_line(text));
    if author.is_empty() {
        format!("> Comment: {text}")
    } else {
        format!("> Comment ({author}): {text}")
    }
}

/// The extension of a part name, for an image's type hint.
pub fn extension(part: &str) -> &str {
    part.rsplit_once('.')
        .map(|(_, ext)| ext)
        .filter(|e| e.len() <= 5)
        .unwrap_or("bin")
}

#[cfg(test)]
pub mod tests {
    use std::io::Write;

    use zip::write::SimpleFileOptions;

    use super::*;

    /// Builds a zip package from (name, content) pairs.
    pub fn build_zip(parts: &[(&str, &[u8])]) -> Vec<u8> {
        let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for (name, content) in parts {
            writer
                .start_file(*name, SimpleFileOptions::default())
                .unwrap();
            writer.write_all(content).unwrap();
        }
        writer.finish().unwrap().into_inner()
    }

    fn code(result: Result<Package, ConvertError>) -> ErrorCode {
        match result {
            Ok(_) => panic!("expected an error"),
            Err(e) => e.code,
        }
    }

    const RELS_EXTERNAL_FILE: &str = r#"<?xml version="1.0"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="file:///etc/passwd" TargetMode="External"/>
</Relationships>"#;

    #[test]
    fn external_local_file_is_refused() {
        let zip = build_zip(&[(
            "word/_rels/document.xml.rels",
            RELS_EXTERNAL_FILE.as_bytes(),
        )]);
        let err = Package::open(&zip, &Limits::default()).err().unwrap();
        assert_eq!(err.code, ErrorCode::ExternalReference);
        assert!(
            err.message.contains("file:///etc/passwd"),
            "{}",
            err.message
        );
    }

    #[test]
    fn external_hyperlinks_and_remote_images_are_fine() {
        let rels = r#"<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink" Target="file:///C:/x.doc" TargetMode="External"/>
<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="https://example.com/a.png" TargetMode="External"/>
</Relationships>"#;
        let zip = build_zip(&[("word/_rels/document.xml.rels", rels.as_bytes())]);
        assert!(Package::open(&zip, &Limits::default()).is_ok());
        let subdoc = RELS_EXTERNAL_FILE
            .replace("/image\"", "/subDocument\"")
            .replace("file:///etc/passwd", r"\\server\share\x.docx");
        let zip = build_zip(&[("word/_rels/document.xml.rels", subdoc.as_bytes())]);
        assert_eq!(
            code(Package::open(&zip, &Limits::default())),
            ErrorCode::ExternalReference
        );
    }

    #[test]
    fn encrypted_compound_file_is_refused() {
        let mut cfb = OLE_MAGIC.to_vec();
        cfb.resize(512, 0);
        cfb.extend("EncryptionInfo".encode_utf16().flat_map(u16::to_le_bytes));
        cfb.resize(1024, 0);
        assert_eq!(
            code(Package::open(&cfb, &Limits::default())),
            ErrorCode::Encrypted
        );
        cfb.truncate(512);
        assert_eq!(
            code(Package::open(&cfb, &Limits::default())),
            ErrorCode::Unsupported
        );
    }

    #[test]
    fn zip_bomb_is_refused() {
        let zeros = vec![0u8; 4 << 20];
        let zip = build_zip(&[("word/document.xml", &zeros)]);
        let limits = Limits {
            max_compression_ratio: 100,
            ..Limits::default()
        };
        assert_eq!(code(Package::open(&zip, &limits)), ErrorCode::TooLarge);
        let limits = Limits {
            max_unpacked_bytes: 1 << 20,
            max_compression_ratio: 1 << 30,
            ..Limits::default()
        };
        assert_eq!(code(Package::open(&zip, &limits)), ErrorCode::TooLarge);
        let limits = Limits {
            max_compression_ratio: 1 << 30,
            ..Limits::default()
        };
        assert!(Package::open(&zip, &limits).is_ok());
    }

    #[test]
    fn truncated_and_foreign_files_are_corrupt() {
        let text = vec![b'x'; 3000];
        let zip = build_zip(&[("a.xml", &text), ("b.xml", b"<b/>")]);
        for cut in [10, zip.len() / 2, zip.len() - 5] {
            let err = Package::open(&zip[..cut], &Limits::default())
                .err()
                .unwrap();
            assert_eq!(err.code, ErrorCode::Corrupt, "cut at {cut}");
        }
        let err = Package::open(b"hello world", &Limits::default())
            .err()
            .unwrap();
        assert!(
            err.message.starts_with("not a zip package"),
            "{}",
            err.message
        );
    }

    #[test]
    fn generated_alt_text_boilerplate_is_dropped() {
        assert_eq!(
            clean_alt_text("A duck holding a paper\n\nDescription automatically generated"),
            "A duck holding a paper"
        );
        assert_eq!(
            clean_alt_text("A close-up of a duck. AI-generated content may be incorrect."),
            "A close-up of a duck"
        );
        assert_eq!(
            clean_alt_text("Chart Description automatically generated with medium confidence"),
            "Chart"
        );
        assert_eq!(clean_alt_text("Description automatically generated"), "");
        assert_eq!(clean_alt_text("A hand-drawn map"), "A hand-drawn map");
        assert_eq!(clean_alt_text(" _good_picture.PNG "), "");
        assert_eq!(clean_alt_text("Logo of v2.png"), "Logo of v2.png");
        assert_eq!(clean_alt_text("version 2.0"), "version 2.0");
    }

    #[test]
    fn chart_kind_title_and_data() {
        let xml = r#"<c:chartSpace xmlns:c="c" xmlns:a="a"><c:chart><c:plotArea><c:bar3DChart><c:ser><c:val><c:numRef><c:numCache><c:pt idx="1"><c:v>2</c:v></c:pt></c:numCache></c:numRef></c:val></c:ser></c:bar3DChart></c:plotArea></c:chart></c:chartSpace>"#;
        let root = Element::parse(xml.as_bytes()).unwrap();
        assert_eq!(
            chart_markdown(&root),
            "Bar chart\n\n|  |  |\n| --- | --- |\n|  |  |\n|  | 2 |"
        );
        // A hostile index does not allocate rows without bound.
        let xml = xml.replace(r#"idx="1""#, r#"idx="18446744073709551615""#);
        let root = Element::parse(xml.as_bytes()).unwrap();
        assert!(chart_markdown(&root).lines().count() <= MAX_CHART_ROWS + 4);
    }

    #[test]
    fn relationships_resolve_against_the_source_part() {
        let rels = r#"<Relationships><Relationship Id="rId1" Type="x/slide" Target="slides/slide2.xml"/>
<Relationship Id="rId2" Type="x/image" Target="../media/a&amp;b.png"/></Relationships>"#;
        let zip = build_zip(&[("ppt/_rels/presentation.xml.rels", rels.as_bytes())]);
        let mut package = Package::open(&zip, &Limits::default()).unwrap();
        let rels = package.relationships("ppt/presentation.xml");
        assert_eq!(rels[0].target, "ppt/slides/slide2.xml");
        assert_eq!(rels[1].target, "media/a&b.png");
        assert!(rels[0].is("slide") && !rels[0].is("slideLayout"));
    }
}
