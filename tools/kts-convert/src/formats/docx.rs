//! Word `.docx` to Markdown, with docx-rs doing the parsing.
//!
//! The package is vetted by [`Package::open`] first. docx-rs drops a few
//! things we want, so they are taken from the XML directly: equations (OMML
//! is rewritten to plain runs before docx-rs sees it), image alt text and
//! footnote/endnote text.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};

use docx_rs::{
    DocumentChild, Docx, DrawingData, Hyperlink, HyperlinkData, Paragraph, ParagraphChild, Run,
    RunChild, Shape, StructuredDataTag, StructuredDataTagChild, Table, TableCellContent,
    TableChild, TableRowChild, TextBoxContentChild,
};
use quick_xml::Reader;
use quick_xml::events::{BytesText, Event};
use serde_json::Value;

use super::ooxml::{self, Package, Relationship};
use super::{Context, ConvertError, Converted};

pub fn convert(bytes: &[u8], ctx: &mut Context) -> Result<Converted, ConvertError> {
    let mut package = Package::open(bytes, ctx.limits)?;
    let main = package
        .main_part("officeDocument")
        .unwrap_or_else(|| "word/document.xml".to_owned());
    let Some(document_xml) = package.part(&main) else {
        return Err(ConvertError::corrupt(format!(
            "not a Word document: the package has no {main}"
        )));
    };
    if nesting_depth(&document_xml) > MAX_NESTING {
        return Err(ConvertError::corrupt(format!(
            "the Word document nests elements more than {MAX_NESTING} deep"
        )));
    }
    let (title, properties) = package.core_properties();
    let rels = package.relationships(&main);
    let alt_texts = alt_texts(&document_xml);
    let notes = note_texts(&mut package, &rels);

    let rewritten;
    let docx_bytes = match rewrite_math(&document_xml) {
        Some(xml) => {
            rewritten = package.with_part_replaced(&main, &xml)?;
            rewritten.as_slice()
        }
        None => bytes,
    };
    let docx = parse(docx_bytes)?;

    let mut writer = Writer::new(&docx, &mut package, rels, alt_texts, ctx);
    for child in &docx.document.children {
        writer.document_child(child);
    }
    let mut markdown = writer.finish();
    if !notes.is_empty() {
        markdown.push_str("\n\n");
        markdown.push_str(&notes.join("\n\n"));
    }
    Ok(Converted {
        markdown: markdown.trim().to_owned() + "\n",
        title,
        properties,
    })
}

/// docx-rs parses recursively: hostile nesting would overflow the stack,
/// which cannot be caught, so such documents are refused up front.
const MAX_NESTING: usize = 256;

fn nesting_depth(xml: &[u8]) -> usize {
    let mut reader = Reader::from_reader(xml);
    let (mut depth, mut max) = (0usize, 0usize);
    loop {
        match reader.read_event() {
            Ok(Event::Start(_)) => {
                depth += 1;
                max = max.max(depth);
            }
            Ok(Event::End(_)) => depth = depth.saturating_sub(1),
            Ok(Event::Eof) | Err(_) => return max,
            _ => {}
        }
    }
}

/// Runs docx-rs, turning its errors (and panics: it has `expect`s on paths it
/// assumes well-formed) into `Corrupt`.
fn parse(bytes: &[u8]) -> Result<Docx, ConvertError> {
    let options = docx_rs::ReadDocxOptions::default().with_image_previews(false);
    match catch_unwind(AssertUnwindSafe(|| {
        docx_rs::read_docx_with_options(bytes, options)
    })) {
        Ok(Ok(docx)) => Ok(docx),
        Ok(Err(e)) => Err(ConvertError::corrupt(format!(
            "the Word document could not be parsed: {e}"
        ))),
        Err(_) => Err(ConvertError::corrupt(
            "the Word document could not be parsed (malformed XML)",
        )),
    }
}

/// A Markdown block; consecutive list items are kept together.
enum Block {
    Text(String),
    ListItem(String),
}

/// What a paragraph is, from its own properties or its style's.
#[derive(Default)]
struct ParagraphKind {
    heading: Option<usize>,
    list: Option<(usize, usize)>,
}

struct Writer<'d, 'p, 'c, 'i> {
    docx: &'d Docx,
    package: &'d mut Package<'p>,
    rels: HashMap<String, Relationship>,
    alt_texts: HashMap<String, String>,
    ctx: &'c mut Context<'i>,
    blocks: Vec<Block>,
    /// Counters of ordered lists by (numbering id, level).
    counters: HashMap<(usize, usize), usize>,
    /// Image links already made, by relationship id.
    images: HashMap<String, Option<String>>,
}

impl<'d, 'p, 'c, 'i> Writer<'d, 'p, 'c, 'i> {
    fn new(
        docx: &'d Docx,
        package: &'d mut Package<'p>,
        rels: Vec<Relationship>,
        alt_texts: HashMap<String, String>,
        ctx: &'c mut Context<'i>,
    ) -> Self {
        let rels = rels.into_iter().map(|r| (r.id.clone(), r)).collect();
        Self {
            docx,
            package,
            rels,
            alt_texts,
            ctx,
            blocks: Vec::new(),
            counters: HashMap::new(),
            images: HashMap::new(),
        }
    }

    fn finish(self) -> String {
        let mut out = String::new();
        let mut previous_was_item = false;
        for block in self.blocks {
            let (text, is_item) = match block {
                Block::Text(t) => (t, false),
                Block::ListItem(t) => (t, true),
            };
            if !out.is_empty() {
                out.push_str(if is_item && previous_was_item {
                    "\n"
                } else {
                    "\n\n"
                });
            }
            out.push_str(&text);
            previous_was_item = is_item;
        }
        out
    }

    fn document_child(&mut self, child: &DocumentChild) {
        match child {
            DocumentChild::Paragraph(p) => self.paragraph(p),
            DocumentChild::Table(t) => self.table(t),
            DocumentChild::StructuredDataTag(sdt) => self.sdt_blocks(sdt),
            DocumentChild::TableOfContents(toc) => {
                for content in toc.before_contents.iter().chain(&toc.after_contents) {
                    match content {
                        docx_rs::TocContent::Paragraph(p) => self.paragraph(p),
                        docx_rs::TocContent::Table(t) => self.table(t),
                    }
                }
            }
            _ => {}
        }
    }

    fn sdt_blocks(&mut self, sdt: &StructuredDataTag) {
        let mut runs = String::new();
        for child in &sdt.children {
            match child {
                StructuredDataTagChild::Paragraph(p) => self.paragraph(p),
                StructuredDataTagChild::Table(t) => self.table(t),
                StructuredDataTagChild::StructuredDataTag(inner) => self.sdt_blocks(inner),
                StructuredDataTagChild::Run(r) => runs.push_str(&self.run_text(r)),
                _ => {}
            }
        }
        if !runs.trim().is_empty() {
            self.blocks.push(Block::Text(runs.trim().to_owned()));
        }
    }

    fn paragraph(&mut self, p: &Paragraph) {
        let mut extra = Vec::new();
        let text = self.paragraph_text(p, &mut extra);
        let text = text.trim();
        if !text.is_empty() {
            let block = self.format_paragraph(p, text);
            self.blocks.push(block);
        }
        // Text boxes anchored in the paragraph follow it.
        self.blocks.extend(extra);
    }

    fn format_paragraph(&mut self, p: &Paragraph, text: &str) -> Block {
        let kind = self.kind(p);
        if let Some(level) = kind.heading {
            return Block::Text(format!(
                "{} {}",
                "#".repeat(level.clamp(1, 6)),
                one_line(text)
            ));
        }
        let Some((num_id, level)) = kind.list else {
            return Block::Text(text.to_owned());
        };
        let indent = "    ".repeat(level.min(8));
        match self.level_format(num_id, level).as_deref() {
            Some("none") => Block::Text(text.to_owned()),
            Some("bullet") | None => Block::ListItem(format!("{indent}- {}", one_line(text))),
            Some(_) => {
                let n = self.next_number(num_id, level);
                Block::ListItem(format!("{indent}{n}. {}", one_line(text)))
            }
        }
    }

    fn next_number(&mut self, num_id: usize, level: usize) -> usize {
        self.counters
            .retain(|(id, l), _| *id != num_id || *l <= level);
        let n = self.counters.entry((num_id, level)).or_insert(0);
        *n += 1;
        *n
    }

    /// The heading level or list membership of a paragraph, looking through
    /// its style and the styles it is based on.
    fn kind(&self, p: &Paragraph) -> ParagraphKind {
        let mut kind = ParagraphKind::default();
        if let Some(num) = &p.property.numbering_property {
            kind.list = num
                .id
                .as_ref()
                .map(|id| (id.id, num.level.as_ref().map_or(0, |l| l.val)));
        }
        if let Some(outline) = &p.property.outline_lvl {
            kind.heading = (outline.v < 9).then_some(outline.v + 1);
        }
        let mut style_id = p.property.style.as_ref().map(|s| s.val.clone());
        for _ in 0..10 {
            let Some(style) = style_id
                .as_deref()
                .and_then(|id| self.docx.styles.find_style_by_id(id))
            else {
                break;
            };
            if kind.heading.is_none() {
                if style.name.starts_with("Title") {
                    kind.heading = Some(1);
                } else if style.name.is_heading() {
                    kind.heading = style.name.get_heading_number();
                } else if let Some(outline) = &style.paragraph_property.outline_lvl {
                    kind.heading = (outline.v < 9).then_some(outline.v + 1);
                }
            }
            if kind.list.is_none()
                && let Some(num) = &style.paragraph_property.numbering_property
            {
                kind.list = num
                    .id
                    .as_ref()
                    .map(|id| (id.id, num.level.as_ref().map_or(0, |l| l.val)));
            }
            style_id = style
                .based_on
                .as_ref()
                .and_then(|b| serde_json::to_value(b).ok())
                .and_then(string_of);
        }
        // numId 0 means "no numbering" (it removes a style's list).
        if kind.list.is_some_and(|(id, _)| id == 0) {
            kind.list = None;
        }
        kind
    }

    /// The number format (`bullet`, `decimal`, ...) of a list level.
    fn level_format(&self, num_id: usize, level: usize) -> Option<String> {
        let numberings = &self.docx.numberings;
        let num = numberings.numberings.iter().find(|n| n.id == num_id)?;
        let abs = numberings
            .abstract_nums
            .iter()
            .find(|a| a.id == num.abstract_num_id)?;
        let lvl = abs.levels.iter().find(|l| l.level == level)?;
        Some(lvl.format.val.clone())
    }

    fn paragraph_text(&mut self, p: &Paragraph, extra: &mut Vec<Block>) -> String {
        let mut text = String::new();
        for child in &p.children {
            self.paragraph_child(child, &mut text, extra);
        }
        text
    }

    fn paragraph_child(
        &mut self,
        child: &ParagraphChild,
        text: &mut String,
        extra: &mut Vec<Block>,
    ) {
        match child {
            ParagraphChild::Run(r) => self.run(r, text, extra),
            ParagraphChild::Hyperlink(h) => self.hyperlink(h, text, extra),
            ParagraphChild::Insert(ins) => {
                for c in &ins.children {
                    if let docx_rs::InsertChild::Run(r) = c {
                        self.run(r, text, extra);
                    }
                }
            }
            ParagraphChild::MoveTo(mv) => {
                for c in &mv.children {
                    if let docx_rs::MoveToChild::Run(r) = c {
                        self.run(r, text, extra);
                    }
                }
            }
            ParagraphChild::StructuredDataTag(sdt) => {
                for c in &sdt.children {
                    match c {
                        StructuredDataTagChild::Run(r) => self.run(r, text, extra),
                        StructuredDataTagChild::Paragraph(p) => {
                            let inner = self.paragraph_text(p, extra);
                            text.push_str(&inner);
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }

    fn hyperlink(&mut self, h: &Hyperlink, text: &mut String, extra: &mut Vec<Block>) {
        let mut inner = String::new();
        for child in &h.children {
            self.paragraph_child(child, &mut inner, extra);
        }
        let url = match &h.link {
            HyperlinkData::External { rid, .. } => self
                .rels
                .get(rid)
                .filter(|r| r.external)
                .map(|r| r.target.clone()),
            HyperlinkData::Anchor { .. } => None,
        };
        match url {
            Some(url) if !inner.trim().is_empty() && !inner.contains("![") => {
                text.push_str(&format!(
                    "[{}]({})",
                    inner.trim(),
                    url.replace(' ', "%20").replace(')', "%29")
                ));
            }
            _ => text.push_str(&inner),
        }
    }

    /// Plain text of a run outside a paragraph (images and text boxes too).
    fn run_text(&mut self, r: &Run) -> String {
        let mut text = String::new();
        let mut extra = Vec::new();
        self.run(r, &mut text, &mut extra);
        for block in extra {
            let (Block::Text(t) | Block::ListItem(t)) = block;
            text.push(' ');
            text.push_str(&t);
        }
        text
    }

    fn run(&mut self, r: &Run, text: &mut String, extra: &mut Vec<Block>) {
        for child in &r.children {
            match child {
                RunChild::Text(t) => text.push_str(&t.text),
                RunChild::Tab(_) | RunChild::PTab(_) => text.push(' '),
                RunChild::Break(_) | RunChild::CarriageReturn(_) => text.push('\n'),
                RunChild::Sym(sym) => text.push_str(&symbol(&sym.char)),
                RunChild::Drawing(d) => match &d.data {
                    Some(DrawingData::Pic(pic)) => {
                        if let Some(link) = self.image(&pic.id) {
                            text.push_str(&link);
                        }
                    }
                    Some(DrawingData::TextBox(tb)) => self.text_box(&tb.children, extra),
                    None => {}
                },
                RunChild::Shape(shape) => self.shape(shape, text),
                _ => {}
            }
        }
    }

    fn shape(&mut self, shape: &Shape, text: &mut String) {
        if let Some(data) = &shape.image_data
            && let Some(link) = self.image(&data.id)
        {
            text.push_str(&link);
        }
    }

    fn text_box(&mut self, children: &[TextBoxContentChild], extra: &mut Vec<Block>) {
        let outer = std::mem::take(&mut self.blocks);
        for child in children {
            match child {
                TextBoxContentChild::Paragraph(p) => self.paragraph(p),
                TextBoxContentChild::Table(t) => self.table(t),
            }
        }
        let inner = std::mem::replace(&mut self.blocks, outer);
        extra.extend(inner);
    }

    /// The Markdown for the image a relationship points to, stored once.
    fn image(&mut self, rid: &str) -> Option<String> {
        if let Some(done) = self.images.get(rid) {
            return done.clone();
        }
        let alt = self
            .alt_texts
            .get(rid)
            .map(|a| one_line(a).replace(['[', ']'], ""))
            .unwrap_or_default();
        let link = match self.rels.get(rid) {
            Some(rel) if rel.external => (!alt.is_empty()).then(|| alt.clone()),
            Some(rel) => {
                let target = rel.target.clone();
                self.package
                    .part(&target)
                    .filter(|b| !b.is_empty())
                    .map(|bytes| {
                        let link = self.ctx.images.add(&bytes, ooxml::extension(&target));
                        format!("![{alt}]({link})")
                    })
            }
            None => None,
        };
        self.images.insert(rid.to_owned(), link.clone());
        link
    }

    fn table(&mut self, table: &Table) {
        let rows = self.table_rows(table);
        if rows.iter().all(|r| r.iter().all(|c| c.trim().is_empty())) {
            return;
        }
        self.blocks.push(Block::Text(
            ooxml::markdown_table(&rows).trim_end().to_owned(),
        ));
    }

    /// The table's cells as text, merged cells repeated into every grid
    /// column and row they cover.
    fn table_rows(&mut self, table: &Table) -> Vec<Vec<String>> {
        let mut rows: Vec<Vec<String>> = Vec::new();
        for TableChild::TableRow(row) in &table.rows {
            let mut cells = Vec::new();
            for TableRowChild::TableCell(cell) in &row.cells {
                let props = serde_json::to_value(&cell.property).unwrap_or_default();
                let span = props
                    .get("gridSpan")
                    .and_then(Value::as_u64)
                    .unwrap_or(1)
                    .clamp(1, 64) as usize;
                let continues =
                    props.get("verticalMerge").and_then(Value::as_str) == Some("continue");
                let text = if continues {
                    rows.last()
                        .and_then(|above| above.get(cells.len()))
                        .cloned()
                        .unwrap_or_default()
                } else {
                    self.cell_text(&cell.children)
                };
                for _ in 0..span {
                    cells.push(text.clone());
                }
            }
            rows.push(cells);
        }
        rows
    }

    fn cell_text(&mut self, children: &[TableCellContent]) -> String {
        let outer = std::mem::take(&mut self.blocks);
        for child in children {
            match child {
                TableCellContent::Paragraph(p) => self.paragraph(p),
                TableCellContent::Table(t) => {
                    // A nested table is flattened to its cells' text.
                    let rows = self.table_rows(t);
                    let text: Vec<String> = rows
                        .into_iter()
                        .flatten()
                        .filter(|c| !c.is_empty())
                        .collect();
                    self.blocks.push(Block::Text(text.join(" ")));
                }
                TableCellContent::StructuredDataTag(sdt) => self.sdt_blocks(sdt),
                TableCellContent::TableOfContents(_) => {}
            }
        }
        let inner = std::mem::replace(&mut self.blocks, outer);
        let parts: Vec<String> = inner
            .into_iter()
            .map(|b| match b {
                Block::Text(t) | Block::ListItem(t) => one_line(&t),
            })
            .collect();
        parts.join(" ")
    }
}

fn string_of(v: Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s),
        _ => None,
    }
}

/// Collapses whitespace (line breaks included) to single spaces.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The character of a `w:sym`; symbol-font code points (F0xx) have no
/// Unicode meaning, except the common check boxes.
fn symbol(hex: &str) -> String {
    let Ok(code) = u32::from_str_radix(hex, 16) else {
        return String::new();
    };
    match code {
        0xF0FE | 0xF078 => "☒".to_owned(),
        0xF0A8 | 0xF06F => "☐".to_owned(),
        0xF000..=0xF0FF => String::new(),
        _ => char::from_u32(code).map(String::from).unwrap_or_default(),
    }
}

/// Text of a text event, entity references included.
fn event_text(event: &Event) -> Option<String> {
    match event {
        Event::Text(t) => Some(t.decode().map(|s| s.into_owned()).unwrap_or_default()),
        Event::CData(t) => Some(t.decode().map(|s| s.into_owned()).unwrap_or_default()),
        Event::GeneralRef(r) => Some(ooxml::reference_text(r)),
        _ => None,
    }
}

/// Alt text (`wp:docPr` descr, else title) of pictures, by the relationship
/// id of their image.
fn alt_texts(xml: &[u8]) -> HashMap<String, String> {
    let mut reader = Reader::from_reader(xml);
    let mut out = HashMap::new();
    let mut current = String::new();
    loop {
        match reader.read_event() {
            Ok(Event::Start(e) | Event::Empty(e)) => match e.local_name().as_ref() {
                b"docPr" => {
                    current = ooxml::attr(&e, b"descr")
                        .filter(|d| !d.trim().is_empty())
                        .or_else(|| ooxml::attr(&e, b"title"))
                        .unwrap_or_default();
                }
                b"blip" => {
                    if let Some(id) = ooxml::attr(&e, b"embed").or_else(|| ooxml::attr(&e, b"link"))
                        && !current.is_empty()
                    {
                        out.entry(id).or_insert_with(|| current.clone());
                    }
                }
                b"imagedata" => {
                    if let (Some(id), Some(title)) =
                        (ooxml::attr(&e, b"id"), ooxml::attr(&e, b"title"))
                    {
                        out.entry(id).or_insert(title);
                    }
                }
                _ => {}
            },
            Ok(Event::Eof) | Err(_) => break,
            _ => {}
        }
    }
    out
}

/// Footnote and endnote texts, numbered in document order of their ids.
fn note_texts(package: &mut Package, rels: &[Relationship]) -> Vec<String> {
    let mut out = Vec::new();
    for kind in ["footnotes", "endnotes"] {
        let Some(rel) = rels.iter().find(|r| r.is(kind) && !r.external) else {
            continue;
        };
        let Some(xml) = package.part(&rel.target) else {
            continue;
        };
        for note in notes_of(&xml) {
            out.push(format!("[^{}]: {}", out.len() + 1, note));
        }
    }
    out
}

/// The text of each real note (separators have a `w:type`).
fn notes_of(xml: &[u8]) -> Vec<String> {
    let mut reader = Reader::from_reader(xml);
    let mut notes = Vec::new();
    let mut current: Option<String> = None;
    let mut in_text = false;
    loop {
        let event = reader.read_event();
        match &event {
            Ok(Event::Start(e)) => match e.local_name().as_ref() {
                b"footnote" | b"endnote" => {
                    current = ooxml::attr(e, b"type").is_none().then(String::new)
                }
                b"t" => in_text = true,
                b"p" => {
                    if let Some(note) = current.as_mut().filter(|n| !n.is_empty()) {
                        note.push(' ');
                    }
                }
                _ => {}
            },
            Ok(Event::End(e)) => match e.local_name().as_ref() {
                b"footnote" | b"endnote" => {
                    if let Some(note) = current
                        .take()
                        .map(|n| one_line(&n))
                        .filter(|n| !n.is_empty())
                    {
                        notes.push(note);
                    }
                }
                b"t" => in_text = false,
                _ => {}
            },
            Ok(Event::Eof) | Err(_) => break,
            Ok(other) => {
                if in_text && let (Some(note), Some(text)) = (current.as_mut(), event_text(other)) {
                    note.push_str(&text);
                }
            }
        }
    }
    notes
}

/// Rewrites each OMML equation (`m:oMath`) as a plain run holding its text,
/// since docx-rs drops equations. `None` when there is none.
fn rewrite_math(xml: &[u8]) -> Option<Vec<u8>> {
    if !xml.windows(6).any(|w| w == b":oMath") {
        return None;
    }
    let mut reader = Reader::from_reader(xml);
    let mut writer = quick_xml::Writer::new(Vec::with_capacity(xml.len()));
    let mut depth = 0usize;
    let mut math = String::new();
    let mut display = false;
    let mut in_text = false;
    loop {
        let event = reader.read_event().ok()?;
        let is_math = |name: &[u8]| name == b"oMath" || name == b"oMathPara";
        match &event {
            Event::Eof => break,
            Event::Start(e) if is_math(e.local_name().as_ref()) => {
                if depth == 0 {
                    display = e.local_name().as_ref() == b"oMathPara";
                }
                depth += 1;
            }
            Event::End(e) if is_math(e.local_name().as_ref()) => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    let delimiter = if display { "$$" } else { "$" };
                    if !math.trim().is_empty() {
                        write_math_run(
                            &mut writer,
                            &format!(" {delimiter}{}{delimiter} ", math.trim()),
                        )?;
                    }
                    math.clear();
                }
            }
            Event::Start(e) if depth > 0 && e.local_name().as_ref() == b"t" => in_text = true,
            Event::End(e) if depth > 0 && e.local_name().as_ref() == b"t" => in_text = false,
            _ if depth > 0 => {
                if in_text && let Some(text) = event_text(&event) {
                    math.push_str(&text);
                }
            }
            _ => writer.write_event(event.borrow()).ok()?,
        }
    }
    Some(writer.into_inner())
}

fn write_math_run(writer: &mut quick_xml::Writer<Vec<u8>>, math: &str) -> Option<()> {
    writer
        .write_event(Event::Start(quick_xml::events::BytesStart::new("w:r")))
        .ok()?;
    let t = quick_xml::events::BytesStart::new("w:t").with_attributes([("xml:space", "preserve")]);
    writer.write_event(Event::Start(t)).ok()?;
    writer.write_event(Event::Text(BytesText::new(math))).ok()?;
    writer
        .write_event(Event::End(quick_xml::events::BytesEnd::new("w:t")))
        .ok()?;
    writer
        .write_event(Event::End(quick_xml::events::BytesEnd::new("w:r")))
        .ok()?;
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::Limits;
    use crate::formats::ooxml::tests::build_zip;
    use crate::images::ImageSink;

    const W: &str = r#"xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math""#;
    const REL: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

    fn docx(body: &str, extra_rels: &str) -> Vec<u8> {
        let content_types = r#"<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/></Types>"#;
        let package_rels = format!(
            r#"<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="{REL}/officeDocument" Target="word/document.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/></Relationships>"#
        );
        let document_rels = format!(
            r#"<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="{REL}/styles" Target="styles.xml"/><Relationship Id="rId2" Type="{REL}/numbering" Target="numbering.xml"/><Relationship Id="rId3" Type="{REL}/hyperlink" Target="https://example.com/" TargetMode="External"/>{extra_rels}</Relationships>"#
        );
        let styles = format!(
            r#"<w:styles {W}><w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/></w:style><w:style w:type="paragraph" w:styleId="Heading2"><w:name w:val="heading 2"/></w:style><w:style w:type="paragraph" w:styleId="ListBullet"><w:name w:val="List Bullet"/><w:pPr><w:numPr><w:numId w:val="1"/></w:numPr></w:pPr></w:style></w:styles>"#
        );
        let numbering = format!(
            r#"<w:numbering {W}><w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/></w:lvl><w:lvl w:ilvl="1"><w:numFmt w:val="bullet"/></w:lvl></w:abstractNum><w:abstractNum w:abstractNumId="1"><w:lvl w:ilvl="0"><w:numFmt w:val="decimal"/></w:lvl></w:abstractNum><w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num><w:num w:numId="2"><w:abstractNumId w:val="1"/></w:num></w:numbering>"#
        );
        let core = r#"<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Doc &amp; Title</dc:title><dc:creator>Ann</dc:creator></cp:coreProperties>"#;
        let document =
            format!(r#"<?xml version="1.0"?><w:document {W}><w:body>{body}</w:body></w:document>"#);
        build_zip(&[
            ("[Content_Types].xml", content_types.as_bytes()),
            ("_rels/.rels", package_rels.as_bytes()),
            ("word/_rels/document.xml.rels", document_rels.as_bytes()),
            ("word/document.xml", document.as_bytes()),
            ("word/styles.xml", styles.as_bytes()),
            ("word/numbering.xml", numbering.as_bytes()),
            ("docProps/core.xml", core.as_bytes()),
        ])
    }

    fn p(style: &str, num: Option<(usize, usize)>, text: &str) -> String {
        let style = if style.is_empty() {
            String::new()
        } else {
            format!(r#"<w:pStyle w:val="{style}"/>"#)
        };
        let num = num.map_or(String::new(), |(id, lvl)| {
            format!(r#"<w:numPr><w:ilvl w:val="{lvl}"/><w:numId w:val="{id}"/></w:numPr>"#)
        });
        format!(
            r#"<w:p><w:pPr>{style}{num}</w:pPr><w:r><w:t xml:space="preserve">{text}</w:t></w:r></w:p>"#
        )
    }

    fn run(bytes: &[u8]) -> Result<Converted, ConvertError> {
        let limits = Limits::default();
        let mut images = ImageSink::default();
        convert(
            bytes,
            &mut Context {
                limits: &limits,
                images: &mut images,
            },
        )
    }

    #[test]
    fn headings_lists_and_paragraphs() {
        let body = [
            p("Title", None, "The Title"),
            p("Heading2", None, "Part two"),
            p("", None, "Plain &amp; simple."),
            p("ListBullet", None, "from the style"),
            p("", Some((1, 1)), "nested"),
            p("", Some((2, 0)), "first"),
            p("", Some((2, 0)), "second"),
        ]
        .concat();
        let out = run(&docx(&body, "")).unwrap();
        let expected = "# The Title\n\n## Part two\n\nPlain & simple.\n\n- from the style\n    - nested\n1. first\n2. second\n";
        assert_eq!(out.markdown, expected);
        assert_eq!(out.title.as_deref(), Some("Doc & Title"));
        assert_eq!(
            out.properties.get("author").and_then(Value::as_str),
            Some("Ann")
        );
    }

    #[test]
    fn tables_links_and_equations() {
        let cell = |t: &str| format!(r#"<w:tc><w:p><w:r><w:t>{t}</w:t></w:r></w:p></w:tc>"#);
        let merged = r#"<w:tc><w:tcPr><w:gridSpan w:val="2"/></w:tcPr><w:p><w:r><w:t>wide</w:t></w:r></w:p></w:tc>"#;
        let table = format!(
            "<w:tbl><w:tr>{}{}</w:tr><w:tr>{}{}</w:tr><w:tr>{merged}</w:tr></w:tbl>",
            cell("Name"),
            cell("Value"),
            cell("a|b"),
            cell("1")
        );
        let link = r#"<w:p><w:r><w:t xml:space="preserve">See </w:t></w:r><w:hyperlink r:id="rId3"><w:r><w:t>the site</w:t></w:r></w:hyperlink></w:p>"#;
        let math = r#"<w:p><w:r><w:t xml:space="preserve">Area </w:t></w:r><m:oMath><m:r><m:t>A=πr</m:t></m:r></m:oMath></w:p>"#;
        let out = run(&docx(&format!("{table}{link}{math}"), "")).unwrap();
        let expected = "| Name | Value |\n| --- | --- |\n| a\\|b | 1 |\n| wide | wide |\n\n\
                        See [the site](https://example.com/)\n\nArea  $A=πr$\n";
        assert_eq!(out.markdown, expected);
    }

    #[test]
    fn external_local_file_is_refused() {
        let rel = format!(
            r#"<Relationship Id="rId9" Type="{REL}/subDocument" Target="file:///C:/secret.docx" TargetMode="External"/>"#
        );
        let err = run(&docx(&p("", None, "x"), &rel)).unwrap_err();
        assert_eq!(err.code, kts_record::ErrorCode::ExternalReference);
        assert!(err.message.contains("file:///C:/secret.docx"));
    }

    #[test]
    fn damaged_packages_are_errors_not_panics() {
        let good = docx(&p("", None, "hello"), "");
        assert_eq!(
            run(&good[..good.len() / 2]).unwrap_err().code,
            kts_record::ErrorCode::Corrupt
        );
        let bad_xml = docx("<w:p><w:r><w:t>unclosed", "");
        assert!(run(&bad_xml).is_err());
        let deep = "<w:sdt><w:sdtContent>".repeat(300);
        assert_eq!(
            run(&docx(&deep, "")).unwrap_err().code,
            kts_record::ErrorCode::Corrupt
        );
    }
}
