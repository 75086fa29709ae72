//! Word `.docx` to Markdown, with docx-rs doing the parsing.
//!
//! The package is vetted by [`Package::open`] first. docx-rs drops a few
//! things we want, so they are taken from the XML directly: equations (OMML
//! is rewritten to runs of LaTeX before docx-rs sees it), non-breaking
//! hyphens, footnote and endnote references, hyperlink fields, image alt
//! text and footnote/endnote text. Parts docx-rs insists on but a package
//! may go without (the main part's relationships) are given to it empty.

use std::collections::{HashMap, HashSet};
use std::panic::{AssertUnwindSafe, catch_unwind};

use docx_rs::{
    DocumentChild, Docx, DrawingData, Hyperlink, HyperlinkData, Paragraph, ParagraphChild, Run,
    RunChild, Shape, StructuredDataTag, StructuredDataTagChild, Table, TableCellContent,
    TableChild, TableRowChild, TextBoxContentChild,
};
use quick_xml::Reader;
use quick_xml::events::{BytesText, Event};
use serde_json::Value;

use super::ooxml::{self, Element, Package, Relationship};
use super::table;
use super::{Context, ConvertError, Converted};
use super::{omml, one_line};

pub fn convert(bytes: &[u8], ctx: &mut Context) -> Result<Converted, ConvertError> {
    // A .docx that is really a Word 97–2003 file (an encrypted package is a
    // compound file too, and is reported as such by `Package::open`).
    if ooxml::is_ole(bytes) && ooxml::encryption_error(bytes).is_none() {
        return super::doc::convert(bytes);
    }
    let mut package = Package::open(bytes, ctx.limits)?;
    let main = package
        .main_part("officeDocument")
        .unwrap_or_else(|| "word/document.xml".to_owned());
    let Some(document_xml) = package.part(&main) else {
        return Err(ConvertError::corrupt(format!(
            "not a Word document: the package has no {main}"
        )));
    };
    let root = ooxml::root_element(&document_xml).unwrap_or_default();
    if root != "document" {
        return Err(ConvertError::corrupt(format!(
            "not a Word document: its main part {main} holds <{root}>, not <document>"
        )));
    }
    if nesting_depth(&document_xml) > MAX_NESTING {
        return Err(ConvertError::corrupt(format!(
            "the Word document nests elements more than {MAX_NESTING} deep"
        )));
    }
    let (title, properties) = package.core_properties();
    let rels = package.relationships(&main);
    let alt_texts = alt_texts(&document_xml);
    let notes = notes(&mut package, &rels);
    let comments = comments(&mut package, &rels);
    let numbering = rels
        .iter()
        .find(|r| r.is("numbering") && !r.external)
        .and_then(|r| package.part(&r.target))
        .map(|xml| Numbering::parse(&xml))
        .unwrap_or_default();

    // docx-rs fails on entity declarations with a message that hides them,
    // loops forever on some syntax errors (an end tag that is not its start
    // tag's), and reads some parts (styles, relationships) until their root
    // element closes, looping forever when a part ends before it does or
    // has another root (a workbook's styles, say).
    let mut expected_roots: HashMap<String, &str> = rels
        .iter()
        .filter(|r| !r.external)
        .flat_map(|r| {
            let styles = r.is("styles").then(|| (r.target.clone(), "styles"));
            let own_rels = (r.is("header") || r.is("footer"))
                .then(|| (ooxml::relationships_part(&r.target), "Relationships"));
            styles.into_iter().chain(own_rels)
        })
        .collect();
    expected_roots.insert(ooxml::relationships_part(""), "Relationships");
    expected_roots.insert(ooxml::relationships_part(&main), "Relationships");
    let read_by_docx_rs: HashSet<&str> = expected_roots
        .keys()
        .map(String::as_str)
        .chain([main.as_str()])
        .chain(
            rels.iter()
                .filter(|r| !r.external)
                .map(|r| r.target.as_str()),
        )
        .collect();
    for name in package.xml_part_names() {
        let Some(xml) = package.part(&name) else {
            continue;
        };
        ooxml::refuse_entity_declarations(&name, &xml)?;
        if ooxml::is_cut_short(&xml) {
            return Err(ConvertError::corrupt(format!(
                "{name} is cut short: the file is damaged"
            )));
        }
        if read_by_docx_rs.contains(name.as_str()) && !ooxml::is_well_formed(&xml) {
            return Err(ConvertError::corrupt(format!(
                "{name} is not well-formed XML: the file is damaged"
            )));
        }
        let Some(&expected_root) = expected_roots.get(&name) else {
            continue;
        };
        let root = ooxml::root_element(&xml).unwrap_or_default();
        if root != expected_root {
            return Err(ConvertError::corrupt(format!(
                "{name} should hold <{expected_root}>, not <{root}>: the file is damaged"
            )));
        }
    }
    let mut replaced = stand_ins(&mut package, &main, &rels);
    if let Some(xml) = rewrite_document(&document_xml, &notes.numbers) {
        replaced.push((main.clone(), xml));
    }
    let rewritten;
    let docx_bytes = if replaced.is_empty() {
        bytes
    } else {
        let parts: Vec<(&str, &[u8])> = replaced
            .iter()
            .map(|(name, xml)| (name.as_str(), xml.as_slice()))
            .collect();
        rewritten = package.with_parts_replaced(&parts)?;
        rewritten.as_slice()
    };
    let docx = parse(docx_bytes)?;

    let mut writer = Writer::new(&docx, &mut package, rels, alt_texts, ctx);
    writer.numbering = numbering;
    writer.comments = comments;
    for child in &docx.document.children {
        writer.document_child(child);
    }
    writer.end();
    let numbered = notes
        .texts
        .into_iter()
        .enumerate()
        .map(|(i, text)| (i + 1, text));
    let markdown = super::notes::placed(&writer.finish(), numbered);
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

const PACKAGE_RELATIONSHIPS: &str = "http://schemas.openxmlformats.org/package/2006/relationships";
const CONTENT_TYPES: &str = "http://schemas.openxmlformats.org/package/2006/content-types";
const WORDPROCESSING: &str = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";

/// Empty stand-ins for the parts docx-rs will not read a document without
/// but the package lacks: the content types, the package's and the main
/// part's relationships (a part with nothing to relate may have none), and
/// the styles, numbering and settings parts the relationships name.
fn stand_ins(package: &mut Package, main: &str, rels: &[Relationship]) -> Vec<(String, Vec<u8>)> {
    let relationships =
        format!(r#"<Relationships xmlns="{PACKAGE_RELATIONSHIPS}"></Relationships>"#);
    let mut wanted = vec![
        (
            "[Content_Types].xml".to_owned(),
            format!(r#"<Types xmlns="{CONTENT_TYPES}"></Types>"#),
        ),
        (ooxml::relationships_part(""), relationships.clone()),
        (ooxml::relationships_part(main), relationships),
    ];
    for kind in ["styles", "numbering", "settings", "webSettings"] {
        if let Some(rel) = rels.iter().find(|r| r.is(kind) && !r.external) {
            let root = format!(r#"<w:{kind} xmlns:w="{WORDPROCESSING}"></w:{kind}>"#);
            wanted.push((rel.target.clone(), root));
        }
    }
    wanted
        .into_iter()
        .filter(|(name, _)| package.part(name).is_none())
        .map(|(name, xml)| (name, xml.into_bytes()))
        .collect()
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
    /// Image links already made, by relationship id.
    images: HashMap<String, Option<String>>,
    numbering: Numbering,
    /// Review comments: (id, rendered line), in the order of comments.xml.
    comments: Vec<(String, String)>,
    /// Comments and charts met in the text, placed after the paragraph (or
    /// the table) that holds them.
    pending: Vec<Anchored>,
    /// Comment ids and chart relationship ids already rendered.
    done: HashSet<String>,
    /// How many tables the writer is inside.
    table_depth: usize,
}

/// Something anchored in the text by a marker of [`rewrite_document`].
enum Anchored {
    Comment(String),
    Chart(String),
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
            images: HashMap::new(),
            numbering: Numbering::default(),
            comments: Vec::new(),
            pending: Vec::new(),
            done: HashSet::new(),
            table_depth: 0,
        }
    }

    /// Places what is still pending, then the comments no text referenced.
    fn end(&mut self) {
        self.table_depth = 0;
        self.place_pending();
        let unplaced: Vec<String> = self
            .comments
            .iter()
            .filter(|(id, _)| !self.done.contains(&format!("comment:{id}")))
            .map(|(_, line)| line.clone())
            .collect();
        self.blocks.extend(unplaced.into_iter().map(Block::Text));
    }

    /// Removes the markers of [`rewrite_document`] from a text, remembering
    /// the comments and charts they anchor and making hyperlink fields links.
    fn take_markers(&mut self, text: &str) -> String {
        if !text.contains([COMMENT_OPEN, CHART_OPEN, LINK_OPEN, LINK_END]) {
            return text.to_owned();
        }
        let mut out = String::with_capacity(text.len());
        // A hyperlink field being read: where its text starts, and its URL.
        let mut link: Option<(usize, String)> = None;
        let mut chars = text.chars();
        while let Some(c) = chars.next() {
            let close = match c {
                COMMENT_OPEN => COMMENT_CLOSE,
                CHART_OPEN => CHART_CLOSE,
                LINK_OPEN => LINK_CLOSE,
                LINK_END => {
                    if let Some((start, url)) = link.take()
                        && let Some(linked) = link_markdown(&out[start..], &url)
                    {
                        out.truncate(start);
                        out.push_str(&linked);
                    }
                    continue;
                }
                c => {
                    out.push(c);
                    continue;
                }
            };
            let value: String = chars.by_ref().take_while(|&x| x != close).collect();
            match c {
                COMMENT_OPEN => self.pending.push(Anchored::Comment(value)),
                CHART_OPEN => self.pending.push(Anchored::Chart(value)),
                _ => link = Some((out.len(), value)),
            }
        }
        out
    }

    /// Renders pending comments and charts as blocks, unless inside a table
    /// (they then follow the table).
    fn place_pending(&mut self) {
        if self.table_depth > 0 {
            return;
        }
        for anchored in std::mem::take(&mut self.pending) {
            match anchored {
                Anchored::Comment(id) => {
                    if !self.done.insert(format!("comment:{id}")) {
                        continue;
                    }
                    if let Some((_, line)) = self.comments.iter().find(|(c, _)| *c == id) {
                        self.blocks.push(Block::Text(line.clone()));
                    }
                }
                Anchored::Chart(rid) => {
                    if !self.done.insert(format!("chart:{rid}")) {
                        continue;
                    }
                    let Some(target) = self
                        .rels
                        .get(&rid)
                        .filter(|r| !r.external)
                        .map(|r| r.target.clone())
                    else {
                        continue;
                    };
                    let chart = self
                        .package
                        .part(&target)
                        .and_then(|xml| Element::parse(&xml))
                        .map(|root| ooxml::chart_markdown(&root))
                        .unwrap_or_default();
                    if !chart.is_empty() {
                        self.blocks.push(Block::Text(chart));
                    }
                }
            }
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
        let runs = self.take_markers(&runs);
        if !runs.trim().is_empty() {
            self.blocks.push(Block::Text(runs.trim().to_owned()));
        }
        self.place_pending();
    }

    fn paragraph(&mut self, p: &Paragraph) {
        let mut extra = Vec::new();
        let text = self.paragraph_text(p, &mut extra);
        let text = self.take_markers(&text);
        let text = text.trim();
        if !text.is_empty() {
            let block = self.format_paragraph(p, text);
            self.blocks.push(block);
        }
        // Text boxes anchored in the paragraph follow it, then its charts
        // and comments.
        self.blocks.extend(extra);
        self.place_pending();
    }

    fn format_paragraph(&mut self, p: &Paragraph, text: &str) -> Block {
        let kind = self.kind(p);
        let number = kind
            .list
            .and_then(|(num_id, level)| self.numbering.next(self.docx, num_id, level));
        if let Some(level) = kind.heading {
            let hashes = "#".repeat(level.clamp(1, 6));
            return match number.filter(|n| n.is_numbered() && !n.label.is_empty()) {
                Some(n) => Block::Text(format!("{hashes} {} {}", n.label, one_line(text))),
                None => Block::Text(format!("{hashes} {}", one_line(text))),
            };
        }
        let Some((_, level)) = kind.list else {
            return Block::Text(text.to_owned());
        };
        let indent = "    ".repeat(level.min(8));
        let Some(number) = number else {
            return Block::ListItem(format!("{indent}- {}", one_line(text)));
        };
        match number.format.as_str() {
            "none" => Block::Text(text.to_owned()),
            "bullet" => Block::ListItem(format!("{indent}- {}", one_line(text))),
            _ if number.simple => {
                Block::ListItem(format!("{indent}{}. {}", number.value, one_line(text)))
            }
            _ if number.label.is_empty() => {
                Block::ListItem(format!("{indent}- {}", one_line(text)))
            }
            _ => Block::ListItem(format!("{indent}- {} {}", number.label, one_line(text))),
        }
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
                kind.list = num.id.as_ref().map(|id| {
                    let level = num.level.as_ref().map(|l| l.val).unwrap_or_else(|| {
                        self.numbering
                            .level_of_style(self.docx, id.id, &style.style_id)
                            .unwrap_or(0)
                    });
                    (id.id, level)
                });
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
        match url.and_then(|url| link_markdown(&inner, &url)) {
            Some(linked) => text.push_str(&linked),
            None => text.push_str(&inner),
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
                RunChild::Sym(sym) => text.push_str(&symbol(&sym.font, &sym.char)),
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
            .map(|a| ooxml::clean_alt_text(a).replace(['[', ']'], ""))
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
        self.table_depth += 1;
        let rows = self.table_rows(table);
        self.table_depth -= 1;
        if !rows.iter().all(|r| r.iter().all(|c| c.trim().is_empty())) {
            self.blocks.push(Block::Text(
                table::markdown_table(&rows).trim_end().to_owned(),
            ));
        }
        self.place_pending();
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

/// `[text](url)`; `None` when the text is empty or holds an image.
fn link_markdown(text: &str, url: &str) -> Option<String> {
    let text = text.trim();
    (!text.is_empty() && !text.contains("!["))
        .then(|| format!("[{text}]({})", url.replace(' ', "%20").replace(')', "%29")))
}

/// The URL of a `HYPERLINK` field instruction (`HYPERLINK "https://…" \o
/// "tip"`); `None` for other fields and for links to a place in the
/// document (`HYPERLINK \l "bookmark"`).
fn hyperlink_target(instruction: &str) -> Option<String> {
    let mut words = field_words(instruction).into_iter();
    if !words.next()?.eq_ignore_ascii_case("HYPERLINK") {
        return None;
    }
    let mut url = None;
    while let Some(word) = words.next() {
        match word.as_str() {
            // Switches with an argument: a bookmark, a tip, a target frame.
            "\\l" | "\\o" | "\\t" => {
                words.next();
            }
            switch if switch.starts_with('\\') => {}
            _ => {
                url.get_or_insert(word);
            }
        }
    }
    url.filter(|url| !url.is_empty())
}

/// A field instruction's words; a quoted word loses its quotes.
fn field_words(instruction: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut chars = instruction.trim().chars().peekable();
    while let Some(c) = chars.next() {
        if c == '"' {
            words.push(chars.by_ref().take_while(|&x| x != '"').collect());
        } else if !c.is_whitespace() {
            let mut word = c.to_string();
            while let Some(next) = chars.next_if(|x| !x.is_whitespace()) {
                word.push(next);
            }
            words.push(word);
        }
    }
    words
}

fn string_of(v: Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s),
        _ => None,
    }
}

/// The character of a `w:sym`. In a symbol font the code names a glyph,
/// not a Unicode character: the common check boxes, check marks, bullets and
/// (in Symbol) letters and operators get their Unicode equivalents, other
/// glyphs a space, so that the words around them stay apart.
fn symbol(font: &str, hex: &str) -> String {
    let Ok(code) = u32::from_str_radix(hex, 16) else {
        return " ".to_owned();
    };
    // Symbol fonts are addressed at U+F0xx, or by their byte.
    let byte = match code {
        0xF000..=0xF0FF => Some((code - 0xF000) as u8),
        0..=0xFF => Some(code as u8),
        _ => None,
    };
    let font = font.trim().to_ascii_lowercase();
    let glyph = match byte {
        Some(byte) if font == "wingdings" => wingdings(byte).map(str::to_owned),
        Some(byte) if font == "symbol" => symbol_font(byte),
        Some(_) if is_symbol_font(&font) => None,
        Some(byte) if code >= 0xF000 => Some(char::from(byte).to_string()),
        _ => char::from_u32(code).map(String::from),
    };
    glyph
        .filter(|g| !g.chars().all(char::is_control))
        .unwrap_or_else(|| " ".to_owned())
}

fn is_symbol_font(font: &str) -> bool {
    [
        "wingdings",
        "webdings",
        "symbol",
        "zapf dingbats",
        "zapfdingbats",
        "marlett",
    ]
    .iter()
    .any(|symbols| font.starts_with(symbols))
}

/// The Unicode for a Wingdings glyph Word documents often hold.
fn wingdings(byte: u8) -> Option<&'static str> {
    Some(match byte {
        0xFE | 0xFD | 0x78 => CHECKED,
        0xA8 | 0x6F => UNCHECKED,
        0xFC => "✓",
        0xFB => "✗",
        0x9F => "•",
        0x6C => "●",
        0x6E => "■",
        0xA7 => "▪",
        0x71 => "❑",
        0x76 => "❖",
        0xD8 => "➢",
        0xA1 => "○",
        0x4A => "☺",
        0x4C => "☹",
        _ => return None,
    })
}

/// The Unicode for a glyph of the Symbol font: Greek letters where Latin
/// ones are, operators and bullets above.
fn symbol_font(byte: u8) -> Option<String> {
    const LOWER: &str = "αβχδεφγηιϕκλμνοπθρστυϖωξψζ";
    const UPPER: &str = "ΑΒΧΔΕΦΓΗΙϑΚΛΜΝΟΠΘΡΣΤΥςΩΞΨΖ";
    let c = match byte {
        b'a'..=b'z' => LOWER.chars().nth(usize::from(byte - b'a')),
        b'A'..=b'Z' => UPPER.chars().nth(usize::from(byte - b'A')),
        0x22 => Some('∀'),
        0x24 => Some('∃'),
        0x27 => Some('∋'),
        0x40 => Some('≅'),
        0x5E => Some('⊥'),
        0x7E => Some('∼'),
        0x20..=0x7F => Some(char::from(byte)),
        0xA2 => Some('′'),
        0xA3 => Some('≤'),
        0xA5 => Some('∞'),
        0xAC => Some('←'),
        0xAE => Some('→'),
        0xB0 => Some('°'),
        0xB1 => Some('±'),
        0xB3 => Some('≥'),
        0xB4 => Some('×'),
        0xB6 => Some('∂'),
        0xB7 => Some('•'),
        0xB8 => Some('÷'),
        0xB9 => Some('≠'),
        0xBB => Some('≈'),
        0xC7 => Some('∩'),
        0xC8 => Some('∪'),
        0xCE => Some('∈'),
        0xD1 => Some('∇'),
        0xD2 => Some('®'),
        0xD3 => Some('©'),
        0xD4 => Some('™'),
        0xD5 => Some('∏'),
        0xD6 => Some('√'),
        0xD7 => Some('⋅'),
        0xDE => Some('⇒'),
        0xE5 => Some('∑'),
        0xF2 => Some('∫'),
        _ => None,
    };
    c.map(String::from)
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

/// Footnotes and endnotes.
#[derive(Default)]
struct Notes {
    /// Note N's text at N - 1: footnotes then endnotes, in the order of their parts.
    texts: Vec<String>,
    /// Each note's number, by `footnote:ID` or `endnote:ID`.
    numbers: HashMap<String, usize>,
}

fn notes(package: &mut Package, rels: &[Relationship]) -> Notes {
    let mut notes = Notes::default();
    for kind in ["footnote", "endnote"] {
        let Some(rel) = rels
            .iter()
            .find(|r| r.is(&format!("{kind}s")) && !r.external)
        else {
            continue;
        };
        let Some(xml) = package.part(&rel.target) else {
            continue;
        };
        for (id, text) in notes_of(&xml) {
            notes.texts.push(text);
            let number = notes.texts.len();
            notes.numbers.insert(format!("{kind}:{id}"), number);
        }
    }
    notes
}

/// The id and text of each real note (separators have a `w:type`).
fn notes_of(xml: &[u8]) -> Vec<(String, String)> {
    let mut reader = Reader::from_reader(xml);
    let mut notes = Vec::new();
    let mut current: Option<(String, String)> = None;
    let mut in_text = false;
    loop {
        let event = reader.read_event();
        match &event {
            Ok(Event::Start(e)) => match e.local_name().as_ref() {
                b"footnote" | b"endnote" => {
                    current = ooxml::attr(e, b"type")
                        .is_none()
                        .then(|| (ooxml::attr(e, b"id").unwrap_or_default(), String::new()))
                }
                b"t" => in_text = true,
                b"p" => {
                    if let Some((_, note)) = current.as_mut().filter(|(_, n)| !n.is_empty()) {
                        note.push(' ');
                    }
                }
                _ => {}
            },
            Ok(Event::End(e)) => match e.local_name().as_ref() {
                b"footnote" | b"endnote" => {
                    if let Some((id, note)) = current
                        .take()
                        .map(|(id, n)| (id, one_line(&n)))
                        .filter(|(_, n)| !n.is_empty())
                    {
                        notes.push((id, note));
                    }
                }
                b"t" => in_text = false,
                _ => {}
            },
            Ok(Event::Eof) | Err(_) => break,
            Ok(other) => {
                if in_text
                    && let (Some((_, note)), Some(text)) = (current.as_mut(), event_text(other))
                {
                    note.push_str(&text);
                }
            }
        }
    }
    notes
}

/// One level of a list definition (`w:lvl`).
#[derive(Clone, Debug)]
struct LevelDef {
    start: i64,
    format: String,
    text: String,
    /// `w:lvlRestart`: restart after a use of a level above this 1-based one.
    restart: Option<usize>,
    legal: bool,
    style: Option<String>,
}

impl LevelDef {
    fn parse(lvl: &Element) -> LevelDef {
        let val = |name: &str| {
            lvl.child(name)
                .or_else(|| lvl.path(&["AlternateContent", "Fallback", name]))
                .and_then(|c| c.attr("val"))
        };
        LevelDef {
            start: val("start").and_then(|v| v.parse().ok()).unwrap_or(1),
            format: val("numFmt").unwrap_or("decimal").to_owned(),
            text: val("lvlText").unwrap_or("").to_owned(),
            restart: val("lvlRestart").and_then(|v| v.parse().ok()),
            legal: lvl.child("isLgl").is_some_and(|e| is_on(e.attr("val"))),
            style: val("pStyle").map(str::to_owned),
        }
    }
}

#[derive(Default)]
struct AbstractDef {
    levels: HashMap<usize, LevelDef>,
    num_style_link: Option<String>,
}

#[derive(Default)]
struct NumDef {
    abstract_id: String,
    /// Per level: a start override and a replacement level definition.
    overrides: HashMap<usize, (Option<i64>, Option<LevelDef>)>,
}

/// A list item's number as Word displays it.
#[derive(Debug)]
struct Number {
    format: String,
    /// The level's text with its counters filled in (`1.2.`, `a)`).
    label: String,
    /// The counter of the item's own level.
    value: i64,
    /// Whether the label is just `value.` (a Markdown ordered list item).
    simple: bool,
}

impl Number {
    fn is_numbered(&self) -> bool {
        !matches!(self.format.as_str(), "bullet" | "none")
    }
}

const LEVELS: usize = 9;

/// The list definitions of `word/numbering.xml` and the counters Word keeps
/// while laying the document out: one set per abstract definition, so
/// lists sharing one continue each other's numbers unless an instance
/// overrides its start.
#[derive(Default)]
struct Numbering {
    abstracts: HashMap<String, AbstractDef>,
    nums: HashMap<String, NumDef>,
    counters: HashMap<String, [Option<i64>; LEVELS]>,
    started: HashSet<String>,
}

impl Numbering {
    fn parse(xml: &[u8]) -> Numbering {
        let mut numbering = Numbering::default();
        let Some(root) = Element::parse(xml) else {
            return numbering;
        };
        for e in root.elements() {
            match e.name.as_str() {
                "abstractNum" => {
                    let Some(id) = e.attr("abstractNumId") else {
                        continue;
                    };
                    let mut def = AbstractDef {
                        num_style_link: e
                            .child("numStyleLink")
                            .and_then(|l| l.attr("val"))
                            .map(str::to_owned),
                        ..AbstractDef::default()
                    };
                    for lvl in e.elements().filter(|l| l.name == "lvl") {
                        if let Some(level) = lvl.attr("ilvl").and_then(|v| v.parse().ok())
                            && level < LEVELS
                        {
                            def.levels.insert(level, LevelDef::parse(lvl));
                        }
                    }
                    numbering.abstracts.insert(id.to_owned(), def);
                }
                "num" => {
                    let (Some(id), Some(abstract_id)) = (
                        e.attr("numId"),
                        e.child("abstractNumId").and_then(|a| a.attr("val")),
                    ) else {
                        continue;
                    };
                    let mut def = NumDef {
                        abstract_id: abstract_id.to_owned(),
                        ..NumDef::default()
                    };
                    for o in e.elements().filter(|o| o.name == "lvlOverride") {
                        if let Some(level) = o.attr("ilvl").and_then(|v| v.parse().ok())
                            && level < LEVELS
                        {
                            let start = o
                                .child("startOverride")
                                .and_then(|s| s.attr("val"))
                                .and_then(|v| v.parse().ok());
                            def.overrides
                                .insert(level, (start, o.child("lvl").map(LevelDef::parse)));
                        }
                    }
                    numbering.nums.insert(id.to_owned(), def);
                }
                _ => {}
            }
        }
        numbering
    }

    /// The abstract definition a list instance uses, following a
    /// `numStyleLink` to the numbering style's own list once.
    fn abstract_id(&self, docx: &Docx, num_id: usize) -> Option<String> {
        let num = self.nums.get(&num_id.to_string())?;
        let linked = self
            .abstracts
            .get(&num.abstract_id)
            .and_then(|a| a.num_style_link.as_deref())
            .and_then(|link| docx.styles.find_style_by_id(link))
            .and_then(|style| style.paragraph_property.numbering_property.as_ref())
            .and_then(|p| p.id.as_ref())
            .and_then(|id| self.nums.get(&id.id.to_string()))
            .map(|n| n.abstract_id.clone());
        Some(linked.unwrap_or_else(|| num.abstract_id.clone()))
    }

    fn level(&self, num_id: usize, abstract_id: &str, level: usize) -> Option<&LevelDef> {
        self.nums
            .get(&num_id.to_string())
            .and_then(|n| n.overrides.get(&level))
            .and_then(|(_, l)| l.as_ref())
            .or_else(|| self.abstracts.get(abstract_id)?.levels.get(&level))
    }

    /// The level a paragraph style stands for in a list (`w:lvl/w:pStyle`).
    fn level_of_style(&self, docx: &Docx, num_id: usize, style_id: &str) -> Option<usize> {
        let abstract_id = self.abstract_id(docx, num_id)?;
        self.abstracts
            .get(&abstract_id)?
            .levels
            .iter()
            .find(|(_, l)| l.style.as_deref() == Some(style_id))
            .map(|(level, _)| *level)
    }

    /// Counts a list item and returns its number.
    fn next(&mut self, docx: &Docx, num_id: usize, level: usize) -> Option<Number> {
        let level = level.min(LEVELS - 1);
        let abstract_id = self.abstract_id(docx, num_id)?;
        let def = self.level(num_id, &abstract_id, level)?.clone();
        let defs: Vec<Option<LevelDef>> = (0..LEVELS)
            .map(|l| self.level(num_id, &abstract_id, l).cloned())
            .collect();
        let mut counters = self
            .counters
            .get(&abstract_id)
            .copied()
            .unwrap_or([None; LEVELS]);
        if self.started.insert(num_id.to_string())
            && let Some(num) = self.nums.get(&num_id.to_string())
        {
            // An instance with start overrides begins its own numbering.
            for (l, (start, _)) in &num.overrides {
                if let (Some(start), Some(slot)) = (start, counters.get_mut(*l)) {
                    *slot = Some(start.saturating_sub(1));
                }
            }
        }
        let value = counters[level].map_or(def.start, |n| n.saturating_add(1));
        counters[level] = Some(value);
        // Skipped levels above count as used at their start value.
        for (l, slot) in counters.iter_mut().enumerate().take(level) {
            if slot.is_none() {
                *slot = Some(defs[l].as_ref().map_or(1, |d| d.start));
            }
        }
        for (deeper, slot) in counters.iter_mut().enumerate().skip(level + 1) {
            let restart = defs[deeper].as_ref().and_then(|d| d.restart);
            if restart.is_none_or(|r| r != 0 && level < r) {
                *slot = None;
            }
        }
        self.counters.insert(abstract_id, counters);

        let text = if def.text.is_empty() && def.format != "bullet" {
            format!("%{}.", level + 1)
        } else {
            def.text.clone()
        };
        let mut label = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            let index = chars
                .peek()
                .and_then(|d| d.to_digit(10))
                .filter(|d| (1..=LEVELS as u32).contains(d));
            match (c, index) {
                ('%', Some(d)) => {
                    chars.next();
                    let l = d as usize - 1;
                    let shown = defs[l].as_ref();
                    let n = counters[l].unwrap_or_else(|| shown.map_or(1, |s| s.start));
                    let format = if def.legal {
                        "decimal"
                    } else {
                        shown.map_or("decimal", |s| s.format.as_str())
                    };
                    label.push_str(&format_number(n, format));
                }
                (c, _) => label.push(c),
            }
        }
        let simple = def.format == "decimal" && text == format!("%{}.", level + 1);
        Some(Number {
            format: def.format,
            label: one_line(&label),
            value,
            simple,
        })
    }
}

/// A list counter in a `w:numFmt` style.
fn format_number(n: i64, format: &str) -> String {
    match format {
        "none" => String::new(),
        "bullet" => String::new(),
        "decimalZero" => format!("{n:02}"),
        "lowerLetter" | "upperLetter" if (1..=780).contains(&n) => {
            let letter = char::from(b'a' + ((n - 1) % 26) as u8);
            let text = letter.to_string().repeat(((n - 1) / 26 + 1) as usize);
            if format == "upperLetter" {
                text.to_uppercase()
            } else {
                text
            }
        }
        "lowerRoman" | "upperRoman" if (1..4000).contains(&n) => {
            let roman = roman(n);
            if format == "upperRoman" {
                roman
            } else {
                roman.to_lowercase()
            }
        }
        "ordinal" => {
            let suffix = match (n % 10, n % 100) {
                (_, 11..=13) => "th",
                (1, _) => "st",
                (2, _) => "nd",
                (3, _) => "rd",
                _ => "th",
            };
            format!("{n}{suffix}")
        }
        _ => n.to_string(),
    }
}

fn roman(mut n: i64) -> String {
    const DIGITS: [(i64, &str); 13] = [
        (1000, "M"),
        (900, "CM"),
        (500, "D"),
        (400, "CD"),
        (100, "C"),
        (90, "XC"),
        (50, "L"),
        (40, "XL"),
        (10, "X"),
        (9, "IX"),
        (5, "V"),
        (4, "IV"),
        (1, "I"),
    ];
    let mut out = String::new();
    for (value, digits) in DIGITS {
        while n >= value {
            out.push_str(digits);
            n -= value;
        }
    }
    out
}

/// Markers [`rewrite_document`] leaves in the text for docx-rs to carry:
/// a comment reference and a chart, each around its id, and hyperlink fields.
const COMMENT_OPEN: char = '\u{E000}';
const COMMENT_CLOSE: char = '\u{E001}';
const CHART_OPEN: char = '\u{E002}';
const CHART_CLOSE: char = '\u{E003}';
/// A hyperlink field: its URL between these two, then its text, then [`LINK_END`].
const LINK_OPEN: char = '\u{E004}';
const LINK_CLOSE: char = '\u{E005}';
const LINK_END: char = '\u{E006}';
const CHECKED: &str = "[x]";
const UNCHECKED: &str = "[ ]";

/// A complex field (`w:fldChar` begin … end) being read.
#[derive(Default)]
struct Field {
    instruction: String,
    /// Whether it is a hyperlink whose text was marked as one.
    link: bool,
}

/// Rewrites the main document for what docx-rs drops: each OMML equation
/// (`m:oMath`) becomes a run holding its LaTeX, check boxes (`w14:checkbox`
/// content controls, legacy `FORMCHECKBOX` fields) become `[x]` / `[ ]`, a
/// non-breaking hyphen becomes `-`, footnote and endnote references `[^N]`
/// (`notes` numbers them), and comment references, charts and hyperlink
/// fields become markers ([`COMMENT_OPEN`], [`CHART_OPEN`], [`LINK_OPEN`]).
/// `None` when nothing needed rewriting or the XML is bad.
fn rewrite_document(xml: &[u8], notes: &HashMap<String, usize>) -> Option<Vec<u8>> {
    let mut reader = Reader::from_reader(xml);
    let mut writer = quick_xml::Writer::new(Vec::with_capacity(xml.len() + 1024));
    let mut changed = false;
    let mut depth = 0usize;
    // Equations: how deep in one, where it starts, whether it is displayed.
    let mut math_depth = 0usize;
    let mut math_start = 0usize;
    let mut display = false;
    // Complex fields open, innermost last, and whether in an instruction.
    let mut fields: Vec<Field> = Vec::new();
    let mut in_instruction = false;
    // Open `w:r` runs: (depth, texts to add as runs after the run closes).
    let mut runs: Vec<(usize, Vec<String>)> = Vec::new();
    // Content controls: whether each open one is a check box (and checked).
    let mut sdts: Vec<Option<bool>> = Vec::new();
    let mut in_checkbox_props = false;
    // Inside a check box's content: (depth of w:sdtContent, glyph written).
    let mut checkbox_content: Option<(usize, bool, bool)> = None;
    let mut in_text = false;
    // A legacy form check box being read: (checked, default).
    let mut form_checkbox: Option<(Option<bool>, bool)> = None;
    // Events dropped until the element at this depth ends.
    let mut skip_to: Option<usize> = None;
    loop {
        let event_start = usize::try_from(reader.buffer_position()).ok()?;
        let event = reader.read_event().ok()?;
        if let Event::Eof = event {
            break;
        }
        // Depth of the element this event opens or closes.
        let here = match &event {
            Event::End(_) => depth.saturating_sub(1),
            _ => depth,
        };
        match &event {
            Event::Start(_) => depth += 1,
            Event::End(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
        if let Some(level) = skip_to {
            if matches!(event, Event::End(_)) && here == level {
                skip_to = None;
            }
            continue;
        }
        let local = match &event {
            Event::Start(e) | Event::Empty(e) => e.local_name().as_ref().to_vec(),
            Event::End(e) => e.local_name().as_ref().to_vec(),
            _ => Vec::new(),
        };
        let local = local.as_slice();
        let is_math = |name: &[u8]| name == b"oMath" || name == b"oMathPara";

        // Equations: read whole once they end, written as one run of LaTeX.
        match &event {
            Event::Start(_) if is_math(local) => {
                if math_depth == 0 {
                    display = local == b"oMathPara";
                    math_start = event_start;
                }
                math_depth += 1;
                changed = true;
                continue;
            }
            Event::End(_) if is_math(local) && math_depth > 0 => {
                math_depth -= 1;
                if math_depth == 0 {
                    let end = usize::try_from(reader.buffer_position()).ok()?;
                    let latex = xml
                        .get(math_start..end)
                        .and_then(Element::parse)
                        .map(|math| omml::latex(&math))
                        .unwrap_or_default();
                    let delimiter = if display { "$$" } else { "$" };
                    if !latex.is_empty() {
                        write_text_run(&mut writer, &format!(" {delimiter}{latex}{delimiter} "))?;
                    }
                }
                continue;
            }
            _ if math_depth > 0 => continue,
            _ => {}
        }

        match &event {
            Event::Start(e) if local == b"r" && is_w(e) => runs.push((here, Vec::new())),
            Event::Start(e) | Event::Empty(e) if local == b"commentReference" => {
                if let Some(id) = ooxml::attr(e, b"id") {
                    write_text(&mut writer, &format!("{COMMENT_OPEN}{id}{COMMENT_CLOSE}"))?;
                    changed = true;
                }
                if matches!(event, Event::Start(_)) {
                    skip_to = Some(here);
                }
                continue;
            }
            Event::Start(e) | Event::Empty(e)
                if local == b"footnoteReference" || local == b"endnoteReference" =>
            {
                let kind = if local == b"footnoteReference" {
                    "footnote"
                } else {
                    "endnote"
                };
                if let Some(number) =
                    ooxml::attr(e, b"id").and_then(|id| notes.get(&format!("{kind}:{id}")))
                {
                    write_text(&mut writer, &format!("[^{number}]"))?;
                    changed = true;
                }
                if matches!(event, Event::Start(_)) {
                    skip_to = Some(here);
                }
                continue;
            }
            Event::Start(_) | Event::Empty(_) if local == b"noBreakHyphen" => {
                write_text(&mut writer, "-")?;
                changed = true;
                if matches!(event, Event::Start(_)) {
                    skip_to = Some(here);
                }
                continue;
            }
            // Hyperlink fields: `HYPERLINK "url"`, then the text shown.
            Event::Start(e) | Event::Empty(e) if local == b"fldChar" => {
                match ooxml::attr(e, b"fldCharType").as_deref() {
                    Some("begin") => fields.push(Field::default()),
                    Some("separate") => {
                        if let Some(field) = fields.last_mut()
                            && let Some(url) = hyperlink_target(&field.instruction)
                        {
                            write_text(&mut writer, &format!("{LINK_OPEN}{url}{LINK_CLOSE}"))?;
                            field.link = true;
                            changed = true;
                        }
                    }
                    Some("end") => {
                        let ended = fields.pop();
                        if ended.is_some_and(|field| field.link) {
                            write_text(&mut writer, &LINK_END.to_string())?;
                        }
                    }
                    _ => {}
                }
            }
            Event::Start(_) if local == b"instrText" => in_instruction = true,
            Event::End(_) if local == b"instrText" => in_instruction = false,
            Event::Text(_) | Event::GeneralRef(_) | Event::CData(_) if in_instruction => {
                if let (Some(field), Some(text)) = (fields.last_mut(), event_text(&event)) {
                    field.instruction.push_str(&text);
                }
            }
            Event::Start(e) | Event::Empty(e) if local == b"chart" => {
                if let Some(id) = ooxml::attr(e, b"id")
                    && let Some((_, after)) = runs.last_mut()
                {
                    after.push(format!("{CHART_OPEN}{id}{CHART_CLOSE}"));
                    changed = true;
                }
            }
            // w14:checkbox content controls.
            Event::Start(_) if local == b"sdt" => sdts.push(None),
            Event::End(_) if local == b"sdt" => {
                sdts.pop();
            }
            Event::Start(_) | Event::Empty(_) if local == b"checkbox" => {
                if let Some(top) = sdts.last_mut() {
                    *top = Some(top.unwrap_or(false));
                    in_checkbox_props = matches!(event, Event::Start(_));
                }
            }
            Event::End(_) if local == b"checkbox" => in_checkbox_props = false,
            Event::Start(e) | Event::Empty(e) if local == b"checked" && in_checkbox_props => {
                if let Some(top) = sdts.last_mut() {
                    *top = Some(is_on(ooxml::attr(e, b"val").as_deref()));
                }
            }
            Event::Start(_) if local == b"sdtContent" => {
                if let Some(Some(checked)) = sdts.last() {
                    checkbox_content = Some((here, *checked, false));
                    changed = true;
                }
            }
            Event::End(_)
                if local == b"sdtContent" && checkbox_content.is_some_and(|(d, ..)| d == here) =>
            {
                checkbox_content = None;
            }
            // Legacy form check boxes (the field shows no text of its own).
            Event::Start(_) if local == b"checkBox" => form_checkbox = Some((None, false)),
            Event::Empty(_) if local == b"checkBox" => {
                if let Some((_, after)) = runs.last_mut() {
                    after.push(UNCHECKED.to_owned());
                    changed = true;
                }
            }
            Event::Start(e) | Event::Empty(e) if form_checkbox.is_some() => {
                let on = is_on(ooxml::attr(e, b"val").as_deref());
                if let Some(state) = form_checkbox.as_mut() {
                    match local {
                        b"checked" => state.0 = Some(on),
                        b"default" => state.1 = on,
                        _ => {}
                    }
                }
            }
            Event::End(_) if local == b"checkBox" => {
                if let Some((checked, default)) = form_checkbox.take()
                    && let Some((_, after)) = runs.last_mut()
                {
                    let glyph = if checked.unwrap_or(default) {
                        CHECKED
                    } else {
                        UNCHECKED
                    };
                    after.push(glyph.to_owned());
                    changed = true;
                }
            }
            _ => {}
        }

        // A check box's own content: its glyph becomes [x] / [ ].
        if let Some((_, checked, written)) = checkbox_content.as_mut() {
            let glyph = if *checked { CHECKED } else { UNCHECKED };
            match &event {
                Event::Start(_) if local == b"t" => in_text = true,
                Event::End(_) if local == b"t" => in_text = false,
                Event::Empty(_) if local == b"sym" => {
                    if !*written {
                        write_text(&mut writer, glyph)?;
                        *written = true;
                    }
                    continue;
                }
                Event::Text(_) | Event::GeneralRef(_) | Event::CData(_) if in_text => {
                    if !*written {
                        writer
                            .write_event(Event::Text(BytesText::new(glyph)))
                            .ok()?;
                        *written = true;
                    }
                    continue;
                }
                _ => {}
            }
        }

        writer.write_event(event.borrow()).ok()?;
        if let Event::End(_) = event
            && local == b"r"
            && runs.last().is_some_and(|(d, _)| *d == here)
            && let Some((_, after)) = runs.pop()
        {
            for text in after {
                write_text_run(&mut writer, &text)?;
            }
        }
    }
    changed.then(|| writer.into_inner())
}

/// Whether an element is in the `w` prefix (or unprefixed): `w:r`, not `a:r`.
fn is_w(e: &quick_xml::events::BytesStart) -> bool {
    e.name().prefix().is_none_or(|p| p.as_ref() == b"w")
}

/// An on/off value: absent means on.
fn is_on(val: Option<&str>) -> bool {
    !matches!(val, Some("0" | "false" | "off"))
}

fn write_text(writer: &mut quick_xml::Writer<Vec<u8>>, text: &str) -> Option<()> {
    let t = quick_xml::events::BytesStart::new("w:t").with_attributes([("xml:space", "preserve")]);
    writer.write_event(Event::Start(t)).ok()?;
    writer.write_event(Event::Text(BytesText::new(text))).ok()?;
    writer
        .write_event(Event::End(quick_xml::events::BytesEnd::new("w:t")))
        .ok()?;
    Some(())
}

fn write_text_run(writer: &mut quick_xml::Writer<Vec<u8>>, text: &str) -> Option<()> {
    writer
        .write_event(Event::Start(quick_xml::events::BytesStart::new("w:r")))
        .ok()?;
    write_text(writer, text)?;
    writer
        .write_event(Event::End(quick_xml::events::BytesEnd::new("w:r")))
        .ok()?;
    Some(())
}

/// The review comments of `word/comments.xml` as (id, rendered line).
fn comments(package: &mut Package, rels: &[Relationship]) -> Vec<(String, String)> {
    let Some(root) = rels
        .iter()
        .find(|r| r.is("comments") && !r.external)
        .and_then(|r| package.part(&r.target))
        .and_then(|xml| Element::parse(&xml))
    else {
        return Vec::new();
    };
    root.elements()
        .filter(|e| e.name == "comment")
        .filter_map(|c| {
            let id = c.attr("id")?.to_owned();
            let mut paragraphs = Vec::new();
            c.descendants("p", &mut paragraphs);
            let text: Vec<String> = paragraphs
                .iter()
                .map(|p| {
                    let mut texts = Vec::new();
                    p.descendants("t", &mut texts);
                    texts.iter().map(|t| t.text()).collect::<String>()
                })
                .collect();
            let text = one_line(&text.join(" "));
            (!text.is_empty()).then(|| {
                (
                    id,
                    ooxml::comment_line(c.attr("author").unwrap_or(""), &text),
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::Limits;
    use crate::formats::ooxml::tests::build_zip;
    use crate::images::ImageSink;

    const W: &str = r#"xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math" xmlns:w14="http://schemas.microsoft.com/office/word/2010/wordml" xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart""#;
    const REL: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

    fn docx(body: &str, extra_rels: &str) -> Vec<u8> {
        docx_with(body, extra_rels, &[])
    }

    fn docx_with(body: &str, extra_rels: &str, extra_parts: &[(&str, &[u8])]) -> Vec<u8> {
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
            r#"<w:numbering {W}><w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/></w:lvl><w:lvl w:ilvl="1"><w:numFmt w:val="bullet"/></w:lvl></w:abstractNum><w:abstractNum w:abstractNumId="1"><w:lvl w:ilvl="0"><w:numFmt w:val="decimal"/></w:lvl></w:abstractNum><w:abstractNum w:abstractNumId="2"><w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1."/></w:lvl><w:lvl w:ilvl="1"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="%1.%2"/></w:lvl></w:abstractNum><w:abstractNum w:abstractNumId="3"><w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="lowerLetter"/><w:lvlText w:val="%1)"/></w:lvl><w:lvl w:ilvl="1"><w:start w:val="4"/><w:numFmt w:val="lowerRoman"/><w:lvlText w:val="(%2)"/></w:lvl></w:abstractNum><w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num><w:num w:numId="2"><w:abstractNumId w:val="1"/></w:num><w:num w:numId="3"><w:abstractNumId w:val="2"/></w:num><w:num w:numId="4"><w:abstractNumId w:val="3"/></w:num><w:num w:numId="5"><w:abstractNumId w:val="2"/><w:lvlOverride w:ilvl="0"><w:startOverride w:val="7"/></w:lvlOverride></w:num></w:numbering>"#
        );
        let core = r#"<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Doc &amp; Title</dc:title><dc:creator>Ann</dc:creator></cp:coreProperties>"#;
        let document =
            format!(r#"<?xml version="1.0"?><w:document {W}><w:body>{body}</w:body></w:document>"#);
        let mut parts: Vec<(&str, &[u8])> = vec![
            ("[Content_Types].xml", content_types.as_bytes()),
            ("_rels/.rels", package_rels.as_bytes()),
            ("word/_rels/document.xml.rels", document_rels.as_bytes()),
            ("word/document.xml", document.as_bytes()),
            ("word/styles.xml", styles.as_bytes()),
            ("word/numbering.xml", numbering.as_bytes()),
            ("docProps/core.xml", core.as_bytes()),
        ];
        parts.extend_from_slice(extra_parts);
        build_zip(&parts)
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
                ocr: &crate::ocr::Ocr::default(),
            },
        )
    }

    #[test]
    fn a_part_cut_short_is_refused_not_looped_on() {
        let whole = docx(&p("", None, "text"), "");
        let limits = Limits::default();
        let mut package = Package::open(&whole, &limits).unwrap();
        let styles = package.part("word/styles.xml").unwrap();
        // Whole elements, but the root never closed: docx-rs's styles reader
        // would wait for its end forever.
        let unclosed = styles.strip_suffix(b"</w:styles>").unwrap();
        let cut = package
            .with_parts_replaced(&[("word/styles.xml", unclosed)])
            .unwrap();
        let error = run(&cut).unwrap_err();
        assert_eq!(error.code, kts_record::ErrorCode::Corrupt);
        assert!(
            error.message.contains("word/styles.xml is cut short"),
            "{error:?}"
        );
    }

    #[test]
    fn parts_with_another_root_are_refused_not_looped_on() {
        let whole = docx(&p("", None, "text"), "");
        let limits = Limits::default();
        let mut package = Package::open(&whole, &limits).unwrap();
        // Each of these, left to docx-rs, reads to the end of the part and
        // on forever, waiting for a root element that never closes.
        for (part, xml, said) in [
            (
                "word/styles.xml",
                r#"<styleSheet><fonts count="1"/></styleSheet>"#,
                "word/styles.xml should hold <styles>, not <styleSheet>",
            ),
            (
                "word/_rels/document.xml.rels",
                r#"<Types><Default Extension="xml"/></Types>"#,
                "word/_rels/document.xml.rels should hold <Relationships>, not <Types>",
            ),
            (
                "word/document.xml",
                r#"<workbook><sheets/></workbook>"#,
                "its main part word/document.xml holds <workbook>, not <document>",
            ),
        ] {
            let damaged = package
                .with_parts_replaced(&[(part, xml.as_bytes())])
                .unwrap();
            let error = run(&damaged).unwrap_err();
            assert_eq!(error.code, kts_record::ErrorCode::Corrupt, "{part}");
            assert!(error.message.contains(said), "{error:?}");
        }
    }

    #[test]
    fn entity_declarations_are_refused_with_a_message_that_says_so() {
        let whole = docx(&p("", None, "text"), "");
        let limits = Limits::default();
        let mut package = Package::open(&whole, &limits).unwrap();
        let document = String::from_utf8(package.part("word/document.xml").unwrap()).unwrap();
        let prolog_end = document.find("?>").unwrap() + 2;
        let bomb = format!(
            r#"{}<!DOCTYPE w:document [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]>{}"#,
            &document[..prolog_end],
            document[prolog_end..].replace(">text<", ">&b;<")
        );
        let declared = package
            .with_parts_replaced(&[("word/document.xml", bomb.as_bytes())])
            .unwrap();
        let error = run(&declared).unwrap_err();
        assert_eq!(error.code, kts_record::ErrorCode::Unsupported);
        assert!(
            error
                .message
                .contains("word/document.xml declares XML entities (a DTD)"),
            "{error:?}"
        );
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
                        See [the site](https://example.com/)\n\nArea  $A=\\pi r$\n";
        assert_eq!(out.markdown, expected);
    }

    #[test]
    fn equations_keep_their_structure() {
        let math = r#"<w:p><w:r><w:t xml:space="preserve">Mileage: </w:t></w:r><m:oMath><m:r><m:t>A=</m:t></m:r><m:f><m:num><m:r><m:t>km</m:t></m:r></m:num><m:den><m:r><m:t>100</m:t></m:r></m:den></m:f></m:oMath></w:p><w:p><m:oMathPara><m:oMath><m:sSup><m:e><m:r><m:t>x</m:t></m:r></m:e><m:sup><m:r><m:t>2</m:t></m:r></m:sup></m:sSup></m:oMath></m:oMathPara></w:p>"#;
        let out = run(&docx(math, "")).unwrap();
        assert_eq!(out.markdown, "Mileage:  $A=\\frac{km}{100}$\n\n$$x^{2}$$\n");
    }

    #[test]
    fn hyphens_and_symbols_keep_words_apart() {
        let paragraph = |inner: &str| format!("<w:p><w:r>{inner}</w:r></w:p>");
        let t = |text: &str| format!(r#"<w:t xml:space="preserve">{text}</w:t>"#);
        let sym = |font: &str, code: &str| format!(r#"<w:sym w:font="{font}" w:char="{code}"/>"#);
        let body = [
            paragraph(&format!("{}<w:noBreakHyphen/>{}", t("ISO"), t("9001"))),
            paragraph(&format!("{}<w:softHyphen/>{}", t("auto"), t("matic"))),
            paragraph(&format!("{}{}", t("Done: "), sym("Wingdings", "F0FC"))),
            paragraph(&format!("{}{}{}", t("2"), sym("Symbol", "F070"), t("r"))),
            paragraph(&format!(
                "{}{}{}",
                t("left"),
                sym("Webdings", "F021"),
                t("right")
            )),
            paragraph(&format!("{}{}{}", t("x"), sym("Arial", "2013"), t("y"))),
        ]
        .concat();
        let out = run(&docx(&body, "")).unwrap();
        assert_eq!(
            out.markdown,
            "ISO-9001\n\nautomatic\n\nDone: ✓\n\n2πr\n\nleft right\n\nx–y\n"
        );
    }

    #[test]
    fn note_references_stay_where_they_are_and_notes_end_their_section() {
        let notes = |kind: &str, texts: &[(&str, &str)]| {
            let notes: String = texts
                .iter()
                .map(|(id, text)| {
                    format!(r#"<w:{kind} w:id="{id}"><w:p><w:r><w:{kind}Ref/></w:r><w:r><w:t xml:space="preserve"> {text}</w:t></w:r></w:p></w:{kind}>"#)
                })
                .collect();
            format!(
                r#"<w:{kind}s {W}><w:{kind} w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:{kind}>{notes}</w:{kind}s>"#
            )
        };
        let footnotes = notes("footnote", &[("1", "Abroad: 60."), ("2", "Munich: 130.")]);
        let endnotes = notes("endnote", &[("1", "Rules of 2024.")]);
        let rels = format!(
            r#"<Relationship Id="rId8" Type="{REL}/footnotes" Target="footnotes.xml"/><Relationship Id="rId9" Type="{REL}/endnotes" Target="endnotes.xml"/>"#
        );
        let per_diem = r#"<w:p><w:r><w:t>Per diem is 45</w:t></w:r><w:r><w:footnoteReference w:id="1"/></w:r><w:r><w:t xml:space="preserve"> euros.</w:t></w:r></w:p>"#;
        let hotels = r#"<w:p><w:r><w:t>Hotels</w:t></w:r><w:r><w:footnoteReference w:id="2"/></w:r><w:r><w:t xml:space="preserve"> are capped</w:t></w:r><w:r><w:endnoteReference w:id="1"/></w:r><w:r><w:t>.</w:t></w:r></w:p>"#;
        let body = [per_diem, &p("Heading2", None, "Lodging"), hotels].concat();
        let out = run(&docx_with(
            &body,
            &rels,
            &[
                ("word/footnotes.xml", footnotes.as_bytes()),
                ("word/endnotes.xml", endnotes.as_bytes()),
            ],
        ))
        .unwrap();
        assert_eq!(
            out.markdown,
            "Per diem is 45[^1] euros.\n\n[^1]: Abroad: 60.\n\n## Lodging\n\n\
             Hotels[^2] are capped[^3].\n\n[^2]: Munich: 130.\n\n[^3]: Rules of 2024.\n"
        );
    }

    #[test]
    fn hyperlink_fields_are_links() {
        let field = |instruction: &str, text: &str| {
            format!(
                r#"<w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText xml:space="preserve">{instruction}</w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>{text}</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r>"#
            )
        };
        let body = format!(
            r#"<w:p><w:r><w:t xml:space="preserve">See </w:t></w:r>{}<w:r><w:t xml:space="preserve"> and </w:t></w:r>{}<w:r><w:t xml:space="preserve">, page </w:t></w:r>{}</w:p>"#,
            field(
                r#" HYPERLINK "https://example.com/a b" \o "tip" "#,
                "the guide"
            ),
            field(r#" HYPERLINK \l "_Toc1" "#, "Scope"),
            field(" PAGE ", "3"),
        );
        let out = run(&docx(&body, "")).unwrap();
        assert_eq!(
            out.markdown,
            "See [the guide](https://example.com/a%20b) and Scope, page 3\n"
        );
    }

    #[test]
    fn a_document_without_relationships_is_read() {
        let whole = docx(&p("", None, "Minimal text."), "");
        let limits = Limits::default();
        let mut package = Package::open(&whole, &limits).unwrap();
        let names = package.xml_part_names();
        let kept: Vec<(String, Vec<u8>)> = names
            .iter()
            .filter(|name| !name.ends_with(".rels") && !name.starts_with('['))
            .map(|name| (name.clone(), package.part(name).unwrap()))
            .collect();
        let parts: Vec<(&str, &[u8])> = kept
            .iter()
            .map(|(name, xml)| (name.as_str(), xml.as_slice()))
            .collect();
        let out = run(&build_zip(&parts)).unwrap();
        assert_eq!(out.markdown, "Minimal text.\n");
    }

    #[test]
    fn a_part_that_is_not_xml_is_named() {
        let whole = docx(&p("", None, "text"), "");
        let limits = Limits::default();
        let mut package = Package::open(&whole, &limits).unwrap();
        let broken = package
            .with_parts_replaced(&[(
                "word/numbering.xml",
                b"<w:numbering><w:num></w:nun></w:numbering>".as_slice(),
            )])
            .unwrap();
        let error = run(&broken).unwrap_err();
        assert_eq!(error.code, kts_record::ErrorCode::Corrupt);
        assert!(
            error
                .message
                .contains("word/numbering.xml is not well-formed XML"),
            "{error:?}"
        );
    }

    #[test]
    fn headings_and_lists_show_their_numbers() {
        let body = [
            p("Heading2", Some((3, 0)), "Intro"),
            p("", Some((3, 1)), "first point"),
            p("", Some((3, 1)), "second point"),
            p("Heading2", Some((3, 0)), "Method"),
            p("", Some((3, 1)), "restarted"),
            p("", Some((4, 0)), "letter"),
            p("", Some((4, 1)), "roman"),
            p("", Some((4, 0)), "letter again"),
            p("", Some((5, 0)), "overridden start"),
            p("", Some((5, 0)), "continues"),
        ]
        .concat();
        let out = run(&docx(&body, "")).unwrap();
        let expected = "## 1. Intro\n\n    - 1.1 first point\n    - 1.2 second point\n\n\
            ## 2. Method\n\n    - 2.1 restarted\n- a) letter\n    - (iv) roman\n- b) letter again\n\
            7. overridden start\n8. continues\n";
        assert_eq!(out.markdown, expected);
    }

    #[test]
    fn comments_follow_their_paragraph() {
        let comments = format!(
            r#"<w:comments {W}><w:comment w:id="0" w:author="Ann Lee"><w:p><w:r><w:annotationRef/></w:r><w:r><w:t>Check this.</w:t></w:r></w:p><w:p><w:r><w:t>Twice.</w:t></w:r></w:p></w:comment><w:comment w:id="1" w:author=""><w:p><w:r><w:t>Orphan note</w:t></w:r></w:p></w:comment></w:comments>"#
        );
        let rel =
            format!(r#"<Relationship Id="rId7" Type="{REL}/comments" Target="comments.xml"/>"#);
        let body = format!(
            r#"<w:p><w:commentRangeStart w:id="0"/><w:r><w:t>Claim.</w:t></w:r><w:commentRangeEnd w:id="0"/><w:r><w:commentReference w:id="0"/></w:r></w:p>{}"#,
            p("", None, "Next.")
        );
        let out = run(&docx_with(
            &body,
            &rel,
            &[("word/comments.xml", comments.as_bytes())],
        ))
        .unwrap();
        assert_eq!(
            out.markdown,
            "Claim.\n\n> Comment (Ann Lee): Check this. Twice.\n\nNext.\n\n> Comment: Orphan note\n"
        );
    }

    #[test]
    fn charts_become_tables() {
        let chart = r#"<c:chartSpace xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><c:chart><c:title><c:tx><c:rich><a:p><a:r><a:t>Sales</a:t></a:r></a:p></c:rich></c:tx></c:title><c:plotArea><c:lineChart><c:ser><c:tx><c:strRef><c:strCache><c:pt idx="0"><c:v>2024</c:v></c:pt></c:strCache></c:strRef></c:tx><c:cat><c:strRef><c:strCache><c:pt idx="0"><c:v>Q1</c:v></c:pt><c:pt idx="1"><c:v>Q2</c:v></c:pt></c:strCache></c:strRef></c:cat><c:val><c:numRef><c:numCache><c:pt idx="0"><c:v>4.4000000000000004</c:v></c:pt><c:pt idx="1"><c:v>5</c:v></c:pt></c:numCache></c:numRef></c:val></c:ser></c:lineChart></c:plotArea></c:chart></c:chartSpace>"#;
        let rel =
            format!(r#"<Relationship Id="rId8" Type="{REL}/chart" Target="charts/chart1.xml"/>"#);
        let body = r#"<w:p><w:r><w:t>Before</w:t></w:r><w:r><w:drawing><wp:inline><wp:docPr id="1" name="Chart 1"/><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/chart"><c:chart r:id="rId8"/></a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>"#;
        let out = run(&docx_with(
            body,
            &rel,
            &[("word/charts/chart1.xml", chart.as_bytes())],
        ))
        .unwrap();
        assert_eq!(
            out.markdown,
            "Before\n\nLine chart: Sales\n\n|  | 2024 |\n| --- | --- |\n| Q1 | 4.4 |\n| Q2 | 5 |\n"
        );
    }

    #[test]
    fn check_boxes_show_their_state() {
        let sdt = |checked: &str, glyph: &str| {
            format!(
                r#"<w:sdt><w:sdtPr><w14:checkbox><w14:checked w14:val="{checked}"/></w14:checkbox></w:sdtPr><w:sdtContent><w:r><w:t>{glyph}</w:t></w:r></w:sdtContent></w:sdt>"#
            )
        };
        let legacy = r#"<w:r><w:fldChar w:fldCharType="begin"><w:ffData><w:checkBox><w:sizeAuto/><w:default w:val="0"/><w:checked/></w:checkBox></w:ffData></w:fldChar></w:r><w:r><w:instrText xml:space="preserve"> FORMCHECKBOX </w:instrText></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r>"#;
        let body = format!(
            r#"<w:p>{}<w:r><w:t xml:space="preserve"> Tea</w:t></w:r></w:p><w:p>{}<w:r><w:t xml:space="preserve"> Milk</w:t></w:r></w:p><w:p>{legacy}<w:r><w:t xml:space="preserve"> Sugar</w:t></w:r></w:p>"#,
            sdt("1", "☒"),
            sdt("0", "☐")
        );
        let out = run(&docx(&body, "")).unwrap();
        assert_eq!(out.markdown, "[x] Tea\n\n[ ] Milk\n\n[x] Sugar\n");
    }

    #[test]
    fn numbers_in_every_format() {
        assert_eq!(format_number(28, "lowerLetter"), "bb");
        assert_eq!(format_number(3, "upperLetter"), "C");
        assert_eq!(format_number(1994, "upperRoman"), "MCMXCIV");
        assert_eq!(format_number(0, "lowerRoman"), "0");
        assert_eq!(format_number(12, "ordinal"), "12th");
        assert_eq!(format_number(22, "ordinal"), "22nd");
        assert_eq!(format_number(5, "decimalZero"), "05");
        assert_eq!(format_number(i64::MAX, "lowerLetter"), i64::MAX.to_string());
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
