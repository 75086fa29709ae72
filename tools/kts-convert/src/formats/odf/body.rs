//! OpenDocument text content (`text:h`, `text:p`, `text:list`,
//! `table:table`, frames) as Markdown blocks. Used for a text document's
//! body and for each frame of a slide.
//!
//! Footnotes and endnotes become `[^N]` references with their texts at the
//! end of the section citing them; annotations (review comments) follow their paragraph as
//! `> Comment (author): ...`; embedded pictures are stored by content hash.

use super::super::ooxml::{self, Element, Node, Package};
use super::super::{Context, notes, table};
use super::Styles;
use super::one_line;

/// Repeated rows and cells (a table's `number-rows-repeated`) are written
/// out at most this many times.
const MAX_REPEAT: usize = 100;

pub struct Writer<'a, 'p, 'i> {
    styles: &'a Styles,
    package: &'a mut Package<'p>,
    ctx: &'a mut Context<'i>,
    blocks: Vec<String>,
    notes: Vec<String>,
    /// How many table cells the writer is inside: a table in a cell is
    /// written as its text, a Markdown table cannot hold one.
    cell_depth: usize,
}

impl<'a, 'p, 'i> Writer<'a, 'p, 'i> {
    pub fn new(styles: &'a Styles, package: &'a mut Package<'p>, ctx: &'a mut Context<'i>) -> Self {
        Self {
            styles,
            package,
            ctx,
            blocks: Vec::new(),
            notes: Vec::new(),
            cell_depth: 0,
        }
    }

    /// The blocks written so far and the note texts, as one Markdown text.
    pub fn finish(self) -> String {
        let numbered = self
            .notes
            .into_iter()
            .enumerate()
            .map(|(i, note)| (i + 1, note));
        let markdown = notes::placed(&self.blocks.join("\n\n"), numbered);
        let markdown = markdown.trim();
        if markdown.is_empty() {
            String::new()
        } else {
            format!("{markdown}\n")
        }
    }

    /// Writes the block-level content of `container` (a body, section,
    /// text box, cell or shape).
    pub fn blocks(&mut self, container: &Element) {
        for element in container.elements() {
            self.block(element);
        }
    }

    /// The blocks of one element, written aside (for a slide's shapes, a
    /// table cell, a note body).
    pub fn blocks_of(&mut self, element: &Element) -> Vec<String> {
        let outer = std::mem::take(&mut self.blocks);
        self.block(element);
        std::mem::replace(&mut self.blocks, outer)
    }

    fn push(&mut self, block: String) {
        if !block.trim().is_empty() {
            self.blocks.push(block);
        }
    }

    fn block(&mut self, element: &Element) {
        match element.name.as_str() {
            "h" => {
                let level = element
                    .attr("outline-level")
                    .and_then(|l| l.parse::<usize>().ok())
                    .unwrap_or(1);
                self.paragraph(element, Some(level));
            }
            "p" => {
                let style = element.attr("style-name").unwrap_or_default();
                if self.styles.preformatted(style) {
                    self.code(element);
                } else {
                    let level = self.styles.heading_level(style);
                    self.paragraph(element, level);
                }
            }
            "list" => {
                let mut lines = Vec::new();
                let mut after = Vec::new();
                let style = element.attr("style-name").unwrap_or_default().to_owned();
                self.list(element, 0, &style, &mut lines, &mut after);
                self.push(lines.join("\n"));
                for block in after {
                    self.push(block);
                }
            }
            "table" => {
                let table = self.table(element);
                self.push(table);
            }
            "frame" => {
                for block in self.frame(element) {
                    self.push(block);
                }
            }
            // Sections, shapes and groups hold paragraphs of their own.
            "section" | "text-box" | "g" | "custom-shape" | "rect" | "ellipse" | "polygon"
            | "polyline" | "path" | "regular-polygon" | "caption" | "measure" | "line"
            | "connector" => self.blocks(element),
            // Tables of contents and indexes repeat the headings; tracked
            // changes hold deleted text; the rest is layout.
            _ => {}
        }
    }

    fn paragraph(&mut self, element: &Element, heading: Option<usize>) {
        let mut text = String::new();
        let mut after = Vec::new();
        self.inline(element, &mut text, &mut after);
        let block = match heading {
            Some(level) => {
                let text = one_line(&text);
                if text.is_empty() {
                    String::new()
                } else {
                    format!("{} {text}", "#".repeat(level.clamp(1, 6)))
                }
            }
            None => text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join("\n"),
        };
        self.push(block);
        for block in after {
            self.push(block);
        }
    }

    /// A paragraph of code as a fenced block, its spaces and line breaks
    /// kept; consecutive code paragraphs join one block.
    fn code(&mut self, element: &Element) {
        let mut text = String::new();
        let mut after = Vec::new();
        self.inline(element, &mut text, &mut after);
        let text = text.trim_end();
        let open_block = self
            .blocks
            .last()
            .is_some_and(|last| last.starts_with("```\n") && last.ends_with("\n```"));
        if text.is_empty() && !open_block {
            return;
        }
        match self.blocks.last_mut() {
            Some(last) if open_block => {
                last.truncate(last.len() - 3);
                last.push_str(text);
                last.push_str("\n```");
            }
            _ => self.blocks.push(format!("```\n{text}\n```")),
        }
        for block in after {
            self.push(block);
        }
    }

    /// The text of a paragraph's content; blocks anchored in it (comments,
    /// text frames) go to `after`.
    fn inline(&mut self, element: &Element, out: &mut String, after: &mut Vec<String>) {
        for node in &element.children {
            let child = match node {
                Node::Text(text) => {
                    out.push_str(text);
                    continue;
                }
                Node::Element(child) => child,
            };
            match child.name.as_str() {
                "span" => {
                    let mut inner = String::new();
                    self.inline(child, &mut inner, after);
                    let (bold, italic) = child
                        .attr("style-name")
                        .map(|s| self.styles.emphasis(s))
                        .unwrap_or_default();
                    let marker = match (bold, italic) {
                        (true, true) => "***",
                        (true, false) => "**",
                        (false, true) => "*",
                        (false, false) => "",
                    };
                    out.push_str(&emphasised(&inner, marker));
                }
                "a" => {
                    let mut inner = String::new();
                    self.inline(child, &mut inner, after);
                    out.push_str(&link(&inner, child.attr("href").unwrap_or_default()));
                }
                "s" => {
                    let count = child
                        .attr("c")
                        .and_then(|c| c.parse::<usize>().ok())
                        .unwrap_or(1);
                    out.push_str(&" ".repeat(count.clamp(1, MAX_REPEAT)));
                }
                "tab" => out.push(' '),
                "line-break" => out.push('\n'),
                "note" => {
                    let text = child
                        .child("note-body")
                        .map(|body| self.flat_text(body))
                        .unwrap_or_default();
                    if !text.is_empty() {
                        self.notes.push(text);
                        out.push_str(&format!("[^{}]", self.notes.len()));
                    }
                }
                "annotation" => {
                    let author = child.child("creator").map(|c| c.text()).unwrap_or_default();
                    let paragraphs: Vec<String> = child
                        .elements()
                        .filter(|e| matches!(e.name.as_str(), "p" | "list"))
                        .map(|e| self.flat_text(e))
                        .collect();
                    let text = one_line(&paragraphs.join(" "));
                    if !text.is_empty() {
                        after.push(ooxml::comment_line(&author, &text));
                    }
                }
                "frame" => {
                    for block in self.frame(child) {
                        if block.starts_with("![") {
                            out.push_str(&block);
                        } else {
                            after.push(block);
                        }
                    }
                }
                "ruby" => {
                    if let Some(base) = child.child("ruby-base") {
                        self.inline(base, out, after);
                    }
                }
                "annotation-end"
                | "bookmark"
                | "bookmark-start"
                | "bookmark-end"
                | "reference-mark-start"
                | "reference-mark-end"
                | "soft-page-break"
                | "change"
                | "change-start"
                | "change-end"
                | "sequence-decls" => {}
                // Fields (dates, page numbers, references) show their text.
                _ => self.inline(child, out, after),
            }
        }
    }

    /// All the text below an element, on one line (for notes and cells).
    fn flat_text(&mut self, element: &Element) -> String {
        let outer = std::mem::take(&mut self.blocks);
        if matches!(element.name.as_str(), "p" | "h" | "list") {
            self.block(element);
        } else {
            self.blocks(element);
        }
        let blocks = std::mem::replace(&mut self.blocks, outer);
        one_line(&blocks.join(" "))
    }

    /// A list's items as Markdown lines, nested lists indented by four
    /// spaces per level.
    fn list(
        &mut self,
        list: &Element,
        depth: usize,
        style: &str,
        lines: &mut Vec<String>,
        after: &mut Vec<String>,
    ) {
        let style = list.attr("style-name").unwrap_or(style).to_owned();
        let numbered = self.styles.numbered(&style, depth);
        let indent = "    ".repeat(depth.min(8));
        let mut number = 0usize;
        for item in list
            .elements()
            .filter(|e| matches!(e.name.as_str(), "list-item" | "list-header"))
        {
            if let Some(start) = item
                .attr("start-value")
                .and_then(|s| s.parse::<usize>().ok())
            {
                number = start.saturating_sub(1);
            }
            let mut wrote_item = false;
            for child in item.elements() {
                match child.name.as_str() {
                    "list" => self.list(child, depth + 1, &style, lines, after),
                    "p" | "h" => {
                        let mut text = String::new();
                        self.inline(child, &mut text, after);
                        let text = one_line(&text);
                        if text.is_empty() {
                            continue;
                        }
                        if wrote_item {
                            lines.push(format!("{indent}    {text}"));
                        } else if numbered {
                            number += 1;
                            lines.push(format!("{indent}{number}. {text}"));
                        } else {
                            lines.push(format!("{indent}- {text}"));
                        }
                        wrote_item = true;
                    }
                    _ => after.extend(self.blocks_of(child)),
                }
            }
        }
    }

    /// A table as a Markdown table, the first row as its header; each cell's
    /// content on one line.
    fn table(&mut self, table: &Element) -> String {
        let mut rows = Vec::new();
        self.cell_depth += 1;
        self.rows(table, &mut rows, &mut Vec::new());
        self.cell_depth -= 1;
        if self.cell_depth > 0 {
            return one_line(&rows.concat().join(" "));
        }
        while rows
            .last()
            .is_some_and(|r: &Vec<String>| r.iter().all(String::is_empty))
        {
            rows.pop();
        }
        table::markdown_table(&rows).trim_end().to_owned()
    }

    /// The rows below `group`. A merged cell's text is repeated into every
    /// cell it covers, as the spreadsheet and pptx converters do, so that
    /// each row reads on its own.
    fn rows(&mut self, group: &Element, rows: &mut Vec<Vec<String>>, below: &mut Vec<Span>) {
        for element in group.elements() {
            match element.name.as_str() {
                "table-header-rows" | "table-rows" | "table-row-group" => {
                    self.rows(element, rows, below);
                }
                "table-row" => {
                    let row = self.row(element, below);
                    let repeat = if row.is_empty() {
                        1
                    } else {
                        repeat_count(element, "number-rows-repeated")
                    };
                    for _ in 0..repeat {
                        rows.push(row.clone());
                    }
                }
                _ => {}
            }
        }
    }

    /// One row's cells; `below` holds, by column, the text of merged cells
    /// reaching down into the rows that follow.
    fn row(&mut self, row: &Element, below: &mut Vec<Span>) -> Vec<String> {
        let mut cells: Vec<String> = Vec::new();
        // The text of a cell merged across, and how many cells it still covers.
        let mut across = Span::default();
        for cell in row
            .elements()
            .filter(|e| matches!(e.name.as_str(), "table-cell" | "covered-table-cell"))
        {
            let repeat = repeat_count(cell, "number-columns-repeated");
            if cell.name == "covered-table-cell" {
                for _ in 0..repeat {
                    let column = cells.len();
                    let text = across
                        .take()
                        .or_else(|| below.get_mut(column).and_then(Span::take))
                        .unwrap_or_default();
                    cells.push(text);
                }
                continue;
            }
            let text = self.flat_text(cell);
            let span = |name| repeat_count(cell, name) - 1;
            let (columns, rows) = (span("number-columns-spanned"), span("number-rows-spanned"));
            for _ in 0..repeat {
                let column = cells.len();
                if rows > 0 && !text.is_empty() {
                    if below.len() < column + columns + 1 {
                        below.resize(column + columns + 1, Span::default());
                    }
                    for slot in &mut below[column..=column + columns] {
                        *slot = Span::new(&text, rows);
                    }
                }
                across = Span::new(&text, columns);
                cells.push(text.clone());
            }
        }
        while cells.last().is_some_and(String::is_empty) {
            cells.pop();
        }
        cells
    }

    /// A frame's content: a text box's blocks, a table, or a picture.
    fn frame(&mut self, frame: &Element) -> Vec<String> {
        if let Some(object) = frame.child("object") {
            return self.chart(object).into_iter().collect();
        }
        let content = |name: &str| matches!(name, "text-box" | "table" | "object-ole");
        if frame.elements().any(|e| content(&e.name)) {
            // The pictures beside a table or a text box are only previews of it.
            return frame
                .elements()
                .filter(|e| e.name == "text-box" || e.name == "table")
                .flat_map(|e| self.blocks_of(e))
                .collect();
        }
        // A frame may hold one picture in several renderings (a PDF and a
        // PNG of it): the first one in a picture format is kept.
        let images: Vec<&Element> = frame.elements().filter(|e| e.name == "image").collect();
        let picture = images
            .iter()
            .find(|image| is_picture(image.attr("href").unwrap_or_default()))
            .or(images.first());
        picture
            .and_then(|image| self.image(frame, image))
            .into_iter()
            .collect()
    }

    /// An embedded chart (a sub-document holding `chart:chart`): its kind,
    /// its title and its data table. Other embedded objects (formulas,
    /// spreadsheets) are left out.
    fn chart(&mut self, object: &Element) -> Option<String> {
        let href = object.attr("href")?.trim_start_matches("./");
        if href.is_empty() || href.contains(':') || href.starts_with("../") {
            return None;
        }
        let xml = self.package.part(&format!("{href}/content.xml"))?;
        ooxml::refuse_entity_declarations(href, &xml).ok()?;
        let root = Element::parse(&xml)?;
        let mut charts = Vec::new();
        root.descendants("chart", &mut charts);
        let chart = charts.into_iter().find(|c| c.attr("class").is_some())?;
        let kind = chart
            .attr("class")
            .map(|c| c.rsplit(':').next().unwrap_or(c))
            .filter(|c| !c.is_empty())
            .map(|c| format!("{}{} chart", c[..1].to_uppercase(), &c[1..]));
        let title = chart
            .child("title")
            .map(|t| one_line(&t.text()))
            .filter(|t| !t.is_empty());
        let mut lines: Vec<String> = match (kind, title) {
            (Some(kind), Some(title)) => vec![format!("{kind}: {title}")],
            (Some(line), None) | (None, Some(line)) => vec![line],
            (None, None) => Vec::new(),
        };
        if let Some(data) = chart.child("table") {
            lines.push(self.table(data));
        }
        let markdown = lines.join("\n\n");
        (!markdown.trim().is_empty()).then_some(markdown)
    }

    /// A picture stored by content hash; its alternative text alone when it
    /// is not inside the package.
    fn image(&mut self, frame: &Element, image: &Element) -> Option<String> {
        let alt = ["title", "desc"]
            .iter()
            .find_map(|name| frame.child(name).map(|e| one_line(&e.text())))
            .filter(|alt| !alt.is_empty())
            .unwrap_or_default()
            .replace(['[', ']'], "");
        let href = image.attr("href").unwrap_or_default();
        let internal = !href.is_empty() && !href.contains(':') && !href.starts_with("../");
        let bytes = internal
            .then(|| self.package.part(href.trim_start_matches("./")))
            .flatten()
            .filter(|b| !b.is_empty());
        match bytes {
            Some(bytes) => {
                let link = self.ctx.images.add(&bytes, ooxml::extension(href));
                Some(format!("![{alt}]({link})"))
            }
            None => (!alt.is_empty()).then_some(alt),
        }
    }
}

/// A merged cell's text and how many more cells it covers.
#[derive(Clone, Default)]
struct Span {
    text: String,
    left: usize,
}

impl Span {
    fn new(text: &str, left: usize) -> Self {
        Self {
            text: text.to_owned(),
            left,
        }
    }

    /// The text for one more covered cell, if the span reaches it.
    fn take(&mut self) -> Option<String> {
        (self.left > 0).then(|| {
            self.left -= 1;
            self.text.clone()
        })
    }
}

/// Whether a part name is in a picture format (not a PDF or a metafile
/// preview).
fn is_picture(href: &str) -> bool {
    let extension = ooxml::extension(href).to_ascii_lowercase();
    matches!(
        extension.as_str(),
        "png" | "jpg" | "jpeg" | "gif" | "bmp" | "svg" | "webp" | "tif" | "tiff"
    )
}

fn repeat_count(element: &Element, attribute: &str) -> usize {
    element
        .attr(attribute)
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(1)
        .clamp(1, MAX_REPEAT)
}

/// `text` wrapped in an emphasis marker, the marker inside its surrounding
/// spaces (`**a** `, not `**a **`).
fn emphasised(text: &str, marker: &str) -> String {
    let trimmed = text.trim();
    if marker.is_empty() || trimmed.is_empty() || text.contains('\n') {
        return text.to_owned();
    }
    let start = &text[..text.len() - text.trim_start().len()];
    let end = &text[text.trim_end().len()..];
    format!("{start}{marker}{trimmed}{marker}{end}")
}

/// A link to the web (or mail) as a Markdown link; anything else, such as a
/// link to a local file or a place in the document, as its text.
fn link(text: &str, href: &str) -> String {
    let href = href.trim();
    let web = ["http://", "https://", "mailto:"]
        .iter()
        .any(|s| href.to_ascii_lowercase().starts_with(s));
    if !web || text.trim().is_empty() {
        return text.to_owned();
    }
    format!(
        "[{}]({})",
        text.trim().replace(['[', ']'], ""),
        href.replace(' ', "%20").replace(')', "%29")
    )
}
