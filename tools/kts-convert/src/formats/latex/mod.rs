//! LaTeX sources (.tex) to Markdown, as a reader of the typeset paper sees
//! them: the title, authors and date `\maketitle` prints, sections as
//! headings, running text without its commands, lists, tables, captions,
//! display math as `$$` blocks (inline `$...$` as written), code, quotes,
//! theorems, footnotes and the bibliography.
//!
//! The source is read in passes: comments are dropped and code set aside
//! (`prepare`), user macros expanded (`macros`), then the body (what
//! `\begin{document}` holds; the whole file when it has none, as a chapter
//! `\input` by another has not) is walked block by block here, its running
//! text by `inline` and its tables by `tabular`. The preamble gives only
//! the title, authors and date. Unknown commands are dropped and the text
//! of their braced arguments kept. `\input` and `\include` are never
//! followed (kts reads only the file it is given): a marker names the file.
//!
//! Nesting deeper than [`MAX_DEPTH`] is read as plain text, unclosed groups
//! and environments end with the file, and macro expansion has a budget, so
//! any input converts in time and memory bounded by its size.

mod inline;
mod macros;
mod prepare;
mod scan;
mod tabular;
#[cfg(test)]
mod tests;

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::{ConvertError, Converted, table, text};
use prepare::Code;

/// Groups, environments and lists nested deeper than this are read as
/// plain text.
const MAX_DEPTH: usize = 32;

/// Sectioning commands, from the highest level.
const SECTIONS: [&str; 7] = [
    "part",
    "chapter",
    "section",
    "subsection",
    "subsubsection",
    "paragraph",
    "subparagraph",
];

/// Theorem-like environments LaTeX packages commonly define.
const THEOREMS: [&str; 20] = [
    "theorem",
    "lemma",
    "proposition",
    "corollary",
    "definition",
    "remark",
    "example",
    "proof",
    "claim",
    "conjecture",
    "assumption",
    "hypothesis",
    "observation",
    "note",
    "fact",
    "problem",
    "exercise",
    "solution",
    "question",
    "notation",
];

pub fn convert(bytes: &[u8]) -> Result<Converted, ConvertError> {
    let decoded = text::decode(bytes)?;
    let prepared = prepare::prepare(&decoded.text);
    let (source, macros) = macros::collect(&prepared.text, inline::is_known);
    let mut warnings = Vec::new();
    let source = macros::expand(source, &macros, &mut warnings);
    let body = document_body(&source);
    let mut converter = Converter {
        code: prepared.code,
        footnotes: Vec::new(),
        warnings,
        theorems: macros.theorems,
        top_section: top_section(body),
        float: None,
    };
    let front = converter.front_matter(&source);
    let mut blocks = front.blocks;
    blocks.extend(converter.blocks(body, 0));
    let mut properties = Map::new();
    if let Some(author) = front.author {
        properties.insert("author".into(), Value::from(author));
    }
    if let Some(date) = front.date {
        properties.insert("date".into(), Value::from(date));
    }
    if !converter.warnings.is_empty() {
        super::add_warnings(&mut properties, converter.warnings);
    }
    decoded.note(&mut properties);
    let numbered = converter
        .footnotes
        .into_iter()
        .enumerate()
        .map(|(i, note)| (i + 1, note));
    let markdown = super::notes::placed(&blocks.join("\n\n"), numbered);
    Ok(Converted {
        markdown: if markdown.is_empty() {
            markdown
        } else {
            markdown + "\n"
        },
        title: front.title,
        properties,
    })
}

/// What `\begin{document}` holds, or all of the text when it has none.
fn document_body(source: &str) -> &str {
    const BEGIN: &str = "\\begin{document}";
    match source.find(BEGIN) {
        Some(start) => {
            let from = start + BEGIN.len();
            let (end, _) = scan::environment_end(source, "document", from);
            &source[from..end]
        }
        None => source,
    }
}

/// The index in [`SECTIONS`] of the highest level the body uses: it
/// becomes `##`, below the title's `#`.
fn top_section(body: &str) -> usize {
    SECTIONS
        .iter()
        .position(|name| {
            let command = format!("\\{name}");
            body.match_indices(&command)
                .any(|(at, _)| body[at + command.len()..].starts_with(['{', '*', '[']))
        })
        .unwrap_or(2)
}

struct Converter {
    code: Vec<Code>,
    footnotes: Vec<String>,
    warnings: Vec<String>,
    /// Theorem-like environments the document declares, with their labels.
    theorems: HashMap<String, String>,
    top_section: usize,
    /// "Figure" or "Table" inside a float: the label of its caption.
    float: Option<&'static str>,
}

/// What the title commands give.
#[derive(Default)]
struct FrontMatter {
    title: Option<String>,
    author: Option<String>,
    date: Option<String>,
    blocks: Vec<String>,
}

/// What a block-level environment becomes.
enum Environment {
    List(ListKind),
    Table,
    Math(Option<&'static str>),
    Quote,
    Abstract,
    Bibliography,
    Dropped,
    Float(Option<&'static str>, usize),
    Theorem(String),
    Transparent(usize),
}

#[derive(Clone, Copy, PartialEq)]
enum ListKind {
    Bullets,
    Numbers,
    Terms,
}

impl Converter {
    /// The title, authors and date, wherever their commands are. Their
    /// `\thanks` notes are footnotes, left out of the properties.
    fn front_matter(&mut self, source: &str) -> FrontMatter {
        // Each argument is read after the one before (an unclosed one ends
        // the search), so no text is read twice.
        let arguments = |name: &str| -> Vec<&str> {
            let command = format!("\\{name}");
            let mut found = Vec::new();
            let mut from = 0;
            while let Some(offset) = source[from..].find(&command) {
                let end = from + offset + command.len();
                from = end;
                if source[end..].starts_with(|c: char| c.is_ascii_alphabetic()) {
                    continue;
                }
                let (argument, after) =
                    scan::argument_text(source, scan::skip_spaced_options(source, end));
                found.push(argument);
                from = after.max(end);
            }
            found
        };
        let mut front = FrontMatter::default();
        if let Some(title) = arguments("title").first() {
            let title = inline::one_line(&self.inline(title, 1));
            if !title.is_empty() {
                front.title = Some(without_note_marks(&title));
                front.blocks.push(format!("# {title}"));
            }
        }
        let mut names = Vec::new();
        for author in arguments("author") {
            for part in split_authors(author) {
                let text = self.inline(part, 1);
                if let Some(name) = text.lines().next() {
                    names.push(
                        without_note_marks(name)
                            .trim_matches([',', ' '])
                            .to_string(),
                    );
                    front.blocks.push(text);
                }
            }
        }
        names.retain(|name| !name.is_empty());
        front.author = (!names.is_empty()).then(|| names.join(", "));
        if let Some(date) = arguments("date").first() {
            let date = inline::one_line(&self.inline(date, 1));
            if !date.is_empty() {
                front.date = Some(without_note_marks(&date));
                front.blocks.push(date);
            }
        }
        front
    }

    /// Converts a run of LaTeX to Markdown blocks.
    fn blocks(&mut self, text: &str, depth: usize) -> Vec<String> {
        let mut blocks = Vec::new();
        if depth > MAX_DEPTH {
            blocks.push(inline::tidy(&inline::plain(text)));
            blocks.retain(|block| !block.is_empty());
            return blocks;
        }
        let bytes = text.as_bytes();
        let mut paragraph = String::new();
        let mut i = 0;
        while i < bytes.len() {
            let run = bytes[i..]
                .iter()
                .position(|b| b"\\{}$\n".contains(b))
                .map_or(bytes.len(), |offset| i + offset);
            paragraph.push_str(&text[i..run]);
            i = run;
            let Some(&byte) = bytes.get(i) else { break };
            i = match byte {
                b'\n' => {
                    let next = i + 1 + text[i + 1..].len()
                        - text[i + 1..].trim_start_matches([' ', '\t', '\r']).len();
                    if text[next..].starts_with('\n') {
                        self.end_paragraph(&mut paragraph, &mut blocks, depth);
                        text.len() - text[next..].trim_start().len()
                    } else {
                        paragraph.push('\n');
                        i + 1
                    }
                }
                b'$' if text[i..].starts_with("$$") => {
                    match scan::math_end(text, i + 2, "$$", "$$") {
                        Some(close) => {
                            self.end_paragraph(&mut paragraph, &mut blocks, depth);
                            blocks.extend(display_math(&text[i + 2..close], None));
                            close + 2
                        }
                        None => {
                            paragraph.push_str("$$");
                            i + 2
                        }
                    }
                }
                b'$' => {
                    let end =
                        scan::math_end(text, i + 1, "$", "$").map_or(i + 1, |close| close + 1);
                    paragraph.push_str(&text[i..end]);
                    end
                }
                b'\\' => self.block_command(text, i, depth, &mut paragraph, &mut blocks),
                b'{' => {
                    let (close, after) = scan::group(text, i);
                    let inner = &text[i + 1..close];
                    if holds_blocks(inner) {
                        self.end_paragraph(&mut paragraph, &mut blocks, depth);
                        blocks.extend(self.blocks(inner, depth + 1));
                    } else {
                        paragraph.push_str(&text[i..after]);
                    }
                    after
                }
                _ => i + 1,
            };
        }
        self.end_paragraph(&mut paragraph, &mut blocks, depth);
        blocks
    }

    fn end_paragraph(&mut self, paragraph: &mut String, blocks: &mut Vec<String>, depth: usize) {
        let text = self.inline(paragraph, depth + 1);
        paragraph.clear();
        if !text.is_empty() {
            blocks.push(text);
        }
    }

    /// Reads the command at `i` where blocks may start; returns the offset
    /// after what was read.
    fn block_command(
        &mut self,
        text: &str,
        i: usize,
        depth: usize,
        paragraph: &mut String,
        blocks: &mut Vec<String>,
    ) -> usize {
        let (name, end) = scan::command(text, i);
        let mut block = |converter: &mut Self, paragraph: &mut String, produced: Vec<String>| {
            converter.end_paragraph(paragraph, blocks, depth);
            blocks.extend(produced);
        };
        match name {
            "[" => match scan::math_end(text, end, "\\[", "\\]") {
                Some(close) => {
                    block(
                        self,
                        paragraph,
                        display_math(&text[end..close], None).into_iter().collect(),
                    );
                    close + 2
                }
                None => end,
            },
            _ if SECTIONS.contains(&name) => {
                let (heading, after) = self.heading(text, name, end, depth);
                block(self, paragraph, heading.into_iter().collect());
                after
            }
            "begin" => {
                let (environment, after_name) = scan::argument_text(text, end);
                let environment = environment.trim();
                let (content_end, after) = scan::environment_end(text, environment, after_name);
                let produced = self.environment(environment, &text[after_name..content_end], depth);
                block(self, paragraph, produced);
                after
            }
            "end" => scan::argument_text(text, end).1,
            "par" | "item" | "bibitem" => {
                block(self, paragraph, Vec::new());
                if name == "bibitem" {
                    scan::skip_arguments(text, end, 1)
                } else {
                    scan::skip_options(text, end)
                }
            }
            "caption" | "captionof" => {
                let count = if name == "caption" { 1 } else { 2 };
                let after = scan::skip_arguments(text, end, count);
                let caption = self.caption(&text[i..after], depth);
                block(self, paragraph, vec![caption]);
                after
            }
            "input" | "include" | "subfile" => {
                let (file, after) = scan::argument_text(text, end);
                let marker = self.included(file);
                block(self, paragraph, vec![marker]);
                after
            }
            // Boxes around a table or a figure: their settings are dropped
            // and their content read as blocks.
            "resizebox" | "scalebox" | "rotatebox" | "adjustbox" | "parbox" | "makebox"
            | "framebox" | "fbox" | "mbox" | "centerline" | "colorbox" => {
                let count = match name {
                    "resizebox" => 2,
                    "scalebox" | "rotatebox" | "adjustbox" | "parbox" | "colorbox" => 1,
                    _ => 0,
                };
                scan::skip_arguments(text, scan::skip_options(text, end), count)
            }
            _ => {
                let mut after = scan::skip_options(text, end);
                while text[after..].starts_with('{') {
                    after = scan::group(text, after).1;
                }
                paragraph.push_str(&text[i..after]);
                after
            }
        }
    }

    /// `\section*[short]{Title}` as a Markdown heading.
    fn heading(
        &mut self,
        text: &str,
        name: &str,
        end: usize,
        depth: usize,
    ) -> (Option<String>, usize) {
        let (title, after) = scan::argument_text(text, scan::skip_spaced_options(text, end));
        let title = inline::one_line(&self.inline(title, depth + 1));
        let level = SECTIONS
            .iter()
            .position(|section| *section == name)
            .unwrap_or(2);
        let hashes = (level.saturating_sub(self.top_section) + 2).min(6);
        let heading = (!title.is_empty()).then(|| format!("{} {title}", "#".repeat(hashes)));
        (heading, after)
    }

    /// `\caption[short]{text}` (or `\captionof{table}{text}`) as a
    /// paragraph, labelled inside a float.
    fn caption(&mut self, source: &str, depth: usize) -> String {
        let (name, end) = scan::command(source, 0);
        let mut start = scan::skip_spaced_options(source, end);
        let mut label = self.float;
        if name == "captionof" {
            let (kind, after) = scan::argument_text(source, start);
            label = match kind.trim() {
                "figure" => Some("Figure"),
                "table" => Some("Table"),
                _ => None,
            };
            start = scan::skip_spaced_options(source, after);
        }
        let (caption, _) = scan::argument_text(source, start);
        let caption = self.inline(caption, depth + 1);
        match label {
            Some(label) if !caption.is_empty() => format!("{label}: {caption}"),
            _ => caption,
        }
    }

    fn environment(&mut self, name: &str, content: &str, depth: usize) -> Vec<String> {
        if depth > MAX_DEPTH {
            return self.blocks(content, depth + 1);
        }
        match self.environment_kind(name) {
            Environment::List(kind) => self.list(content, kind, depth).into_iter().collect(),
            Environment::Table => self.tabular(name, content, depth),
            Environment::Math(wrapper) => display_math(content, wrapper).into_iter().collect(),
            Environment::Quote => {
                let inner = self.blocks(content, depth + 1);
                let quoted = inner
                    .join("\n\n")
                    .lines()
                    .map(|line| {
                        if line.is_empty() {
                            ">".to_string()
                        } else {
                            format!("> {line}")
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
                (!quoted.is_empty()).then_some(quoted).into_iter().collect()
            }
            Environment::Abstract => {
                let mut blocks = vec!["## Abstract".to_string()];
                blocks.extend(self.blocks(content, depth + 1));
                blocks
            }
            Environment::Bibliography => {
                let content = &content[scan::skip_arguments(content, 0, 1).min(content.len())..];
                let mut blocks = vec!["## References".to_string()];
                blocks.extend(self.bibliography(content, depth));
                blocks
            }
            Environment::Dropped => Vec::new(),
            Environment::Float(label, arguments) => {
                let saved = self.float;
                self.float = label.or(saved);
                let start =
                    scan::skip_arguments(content, scan::skip_options(content, 0), arguments);
                let blocks = self.blocks(&content[start.min(content.len())..], depth + 1);
                self.float = saved;
                blocks
            }
            Environment::Theorem(label) => {
                let (note, start) = match scan::optional(content, 0, true) {
                    Some((note, after)) => (
                        format!(
                            " ({})",
                            inline::one_line(&self.inline(&content[note], depth + 1))
                        ),
                        after,
                    ),
                    None => (String::new(), 0),
                };
                let mut blocks = self.blocks(&content[start..], depth + 1);
                let label = format!("**{label}{note}.**");
                match blocks.first_mut() {
                    Some(first) if !first.starts_with(['#', '|', '$', '`', '-', '>', '[']) => {
                        *first = format!("{label} {first}");
                    }
                    _ => blocks.insert(0, label),
                }
                blocks
            }
            Environment::Transparent(arguments) => {
                let start =
                    scan::skip_arguments(content, scan::skip_options(content, 0), arguments);
                self.blocks(&content[start.min(content.len())..], depth + 1)
            }
        }
    }

    fn environment_kind(&self, name: &str) -> Environment {
        let base = name.trim_end_matches('*');
        if tabular::argument_count(name).is_some() {
            return Environment::Table;
        }
        match base {
            "itemize" | "compactitem" | "asparaitem" | "inparaitem" => {
                Environment::List(ListKind::Bullets)
            }
            "enumerate" | "compactenum" | "asparaenum" | "inparaenum" => {
                Environment::List(ListKind::Numbers)
            }
            "description" | "compactdesc" | "asparadesc" => Environment::List(ListKind::Terms),
            "equation" | "displaymath" | "math" | "dmath" | "multline" => Environment::Math(None),
            "align" | "flalign" | "eqnarray" | "IEEEeqnarray" => Environment::Math(Some("aligned")),
            "alignat" => Environment::Math(Some("alignedat")),
            "gather" => Environment::Math(Some("gathered")),
            "quote" | "quotation" | "verse" => Environment::Quote,
            "abstract" => Environment::Abstract,
            "thebibliography" => Environment::Bibliography,
            "tikzpicture" | "pgfpicture" | "picture" | "pspicture" | "filecontents"
            | "titlepage" => Environment::Dropped,
            "figure" | "SCfigure" => Environment::Float(Some("Figure"), 0),
            "wrapfigure" => Environment::Float(Some("Figure"), 2),
            "table" | "SCtable" => Environment::Float(Some("Table"), 0),
            "wraptable" => Environment::Float(Some("Table"), 2),
            "subfigure" | "subtable" | "minipage" => Environment::Float(None, 1),
            "multicols" | "adjustbox" => Environment::Transparent(1),
            _ => {
                if let Some(label) = self.theorems.get(base) {
                    return Environment::Theorem(label.clone());
                }
                if THEOREMS.contains(&base) {
                    let mut label = base.to_string();
                    label[..1].make_ascii_uppercase();
                    return Environment::Theorem(label);
                }
                Environment::Transparent(0)
            }
        }
    }

    /// A list environment as a Markdown list, nested lists indented.
    fn list(&mut self, content: &str, kind: ListKind, depth: usize) -> Option<String> {
        let mut items = Vec::new();
        for (number, (label, body)) in split_items(content, "item").into_iter().enumerate() {
            let mut blocks = self.blocks(body, depth + 1);
            let label = label.map(|label| inline::one_line(&self.inline(label, depth + 1)));
            if let Some(label) = label.filter(|label| !label.is_empty()) {
                let label = if kind == ListKind::Terms {
                    format!("**{label}**")
                } else {
                    label
                };
                match blocks.first_mut() {
                    Some(first) if !first.starts_with(['|', '$', '`']) => {
                        *first = format!("{label} {first}")
                    }
                    _ => blocks.insert(0, label),
                }
            }
            let marker = match kind {
                ListKind::Numbers => format!("{}. ", number + 1),
                _ => "- ".to_string(),
            };
            items.push(list_item(&marker, &blocks));
        }
        (!items.is_empty()).then(|| items.join("\n"))
    }

    /// `\bibitem[label]{key} text` entries as a list, each with its key.
    fn bibliography(&mut self, content: &str, depth: usize) -> Vec<String> {
        let mut entries = Vec::new();
        for (label, body) in split_items(content, "bibitem") {
            let (key, start) = scan::argument_text(body, 0);
            let entry = self.inline(&body[start..], depth + 1);
            let key = label
                .filter(|label| !label.trim().is_empty())
                .unwrap_or(key);
            let key = inline::one_line(&self.inline(key, depth + 1));
            entries.push(format!("- [{key}] {}", entry.replace('\n', " ")));
        }
        (!entries.is_empty())
            .then(|| entries.join("\n"))
            .into_iter()
            .collect()
    }
}

/// The items of a list (`\item`) or bibliography (`\bibitem`): each one's
/// optional label and the source after it.
fn split_items<'a>(content: &'a str, command: &str) -> Vec<(Option<&'a str>, &'a str)> {
    let mut starts = Vec::new();
    scan::top_level(content, |mark, start, end| {
        if matches!(mark, scan::Mark::Command(name) if name == command) {
            starts.push((start, end));
        }
    });
    let mut items = Vec::new();
    for (n, &(_, end)) in starts.iter().enumerate() {
        let stop = starts.get(n + 1).map_or(content.len(), |&(start, _)| start);
        let (label, body_start) = match scan::optional(content, end, false) {
            Some((label, after)) if after <= stop => (Some(&content[label]), after),
            _ => (None, end),
        };
        items.push((label, &content[body_start..stop]));
    }
    items
}

/// One list item: the marker before its first block, the rest of its
/// lines and blocks indented under it.
fn list_item(marker: &str, blocks: &[String]) -> String {
    let indent = " ".repeat(marker.len());
    let mut out = marker.trim_end().to_string();
    for (n, block) in blocks.iter().enumerate() {
        for (line_number, line) in block.lines().enumerate() {
            if n == 0 && line_number == 0 {
                out = format!("{marker}{line}");
                continue;
            }
            if line_number == 0 {
                out.push('\n');
            }
            out.push('\n');
            if !line.is_empty() {
                out.push_str(&indent);
                out.push_str(line);
            }
        }
    }
    out
}

/// A display-math block: `$$`, the math without its labels, `$$`; the
/// rows of `align` and its kin inside the environment KaTeX knows them by.
fn display_math(math: &str, wrapper: Option<&str>) -> Option<String> {
    let mut cleaned = String::with_capacity(math.len());
    let mut i = 0;
    while let Some(offset) = math[i..].find('\\') {
        let start = i + offset;
        cleaned.push_str(&math[i..start]);
        let (name, end) = scan::command(math, start);
        i = match name {
            "label" => scan::argument_text(math, end).1,
            "nonumber" | "notag" => end,
            _ => {
                cleaned.push_str(&math[start..end]);
                end
            }
        };
    }
    cleaned.push_str(&math[i..]);
    let body = cleaned.trim();
    if body.is_empty() {
        return None;
    }
    let body = match wrapper {
        Some(environment) => format!("\\begin{{{environment}}}\n{body}\n\\end{{{environment}}}"),
        None => body.to_string(),
    };
    Some(format!("$$\n{body}\n$$"))
}

/// Whether a group holds blocks (braces around a table or a list only
/// scope its settings) rather than running text.
fn holds_blocks(group: &str) -> bool {
    let lines: Vec<&str> = group.split('\n').collect();
    let blank_line = lines.len() > 2
        && lines[1..lines.len() - 1]
            .iter()
            .any(|line| line.trim().is_empty());
    blank_line
        || ["\\begin{", "\\item", "\\caption", "\\[", "$$", "\\par"]
            .iter()
            .any(|pattern| group.contains(pattern))
        || SECTIONS
            .iter()
            .any(|name| group.contains(&format!("\\{name}")))
}

/// The authors an `\author{}` names, split at `\and`.
fn split_authors(author: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    scan::top_level(author, |mark, at, end| {
        if let scan::Mark::Command("and" | "And" | "AND") = mark {
            parts.push(&author[start..at]);
            start = end;
        }
    });
    parts.push(&author[start..]);
    parts
}

/// Text without the `[^N]` marks of its footnotes.
fn without_note_marks(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("[^") {
        out.push_str(&rest[..open]);
        let after = &rest[open + 2..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && after[digits..].starts_with(']') {
            rest = &after[digits + 1..];
        } else {
            out.push_str("[^");
            rest = after;
        }
    }
    out.push_str(rest);
    inline::one_line(&out)
}
