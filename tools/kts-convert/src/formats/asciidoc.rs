//! AsciiDoc to Markdown, line by line: section titles (`=`), lists (`*`,
//! `-`, `.`, nested by marker count or indentation), tables (`|===`),
//! delimited blocks (listings and literals as code, quotes as quotes, the
//! others unwrapped), admonitions (`NOTE:` paragraphs and `[NOTE]` blocks),
//! block titles and images (their alternative text). Attribute references
//! (`{name}`) are replaced by the values attribute entries (`:name: value`)
//! give, the header's first, then the others in order, outside code blocks;
//! an unknown one stays as it is, an escaped one (`\{name}`) loses its
//! backslash. Attribute entries, other block attributes and comments are
//! dropped. `include::` is never followed (kts reads only the file it is
//! given): each one is named in a warning.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Value};

use super::{ConvertError, Converted, table, text};

pub fn convert(bytes: &[u8]) -> Result<Converted, ConvertError> {
    let decoded = text::decode(bytes)?;
    let source = &decoded.text;
    let mut writer = Writer::default();
    let lines: Vec<&str> = source.lines().collect();
    writer.read_header_attributes(&lines);
    let mut i = 0;
    while i < lines.len() {
        i = writer.line(&lines, i);
    }
    writer.end_paragraph();
    let mut properties = Map::new();
    if !writer.warnings.is_empty() {
        properties.insert("warnings".into(), Value::from(writer.warnings));
    }
    decoded.note(&mut properties);
    let markdown = writer.blocks.join("\n\n");
    Ok(Converted {
        markdown: if markdown.is_empty() {
            markdown
        } else {
            markdown + "\n"
        },
        title: writer.title,
        properties,
    })
}

#[derive(Default)]
struct Writer {
    blocks: Vec<String>,
    paragraph: Vec<String>,
    /// The current list's lines, kept as one block.
    list: Vec<String>,
    /// Whether a blank line followed the list's last line.
    after_blank: bool,
    title: Option<String>,
    warnings: Vec<String>,
    attributes: Attributes,
    /// The label of a `[NOTE]` (or TIP, ...) block whose text is still to come.
    admonition: Option<String>,
}

/// Delimiters of blocks whose content is written as code.
const CODE_DELIMITERS: [&str; 2] = ["----", "...."];
/// Delimiters of blocks whose content is ordinary AsciiDoc.
const OPEN_DELIMITERS: [&str; 3] = ["====", "****", "--"];

impl Writer {
    /// The attribute entries of the header (the lines up to the first blank
    /// one), which hold for the document title above them too.
    fn read_header_attributes(&mut self, lines: &[&str]) {
        let header = lines
            .iter()
            .skip_while(|line| line.trim().is_empty())
            .take_while(|line| !line.trim().is_empty());
        for line in header {
            self.attributes.entry(line.trim());
        }
    }

    fn push(&mut self, block: String) {
        self.end_paragraph();
        if !block.trim().is_empty() {
            self.label_admonition();
            self.blocks.push(block);
        }
    }

    /// Ends the pending list, then the pending paragraph (a paragraph can
    /// only be pending beside a list when it follows it).
    fn end_paragraph(&mut self) {
        if !self.list.is_empty() {
            let list = std::mem::take(&mut self.list).join("\n");
            self.label_admonition();
            self.blocks.push(list);
        }
        if !self.paragraph.is_empty() {
            let text = inline(&self.paragraph.join("\n"));
            self.paragraph.clear();
            let text = match self.admonition.take() {
                Some(label) => quoted(&format!("**{label}:** {text}")),
                None => text,
            };
            self.blocks.push(text);
        }
    }

    /// Writes the label of an admonition block that opens with something
    /// other than a paragraph, before it.
    fn label_admonition(&mut self) {
        if let Some(label) = self.admonition.take() {
            self.blocks.push(format!("**{label}:**"));
        }
    }

    /// Reads the line at `i` (and the lines of the block it opens); returns
    /// the index of the next line to read.
    fn line(&mut self, lines: &[&str], i: usize) -> usize {
        let raw = lines[i].trim();
        if self.attributes.entry(raw) {
            return i + 1;
        }
        let substituted = self.attributes.substitute(lines[i]);
        let line = substituted.as_ref();
        let trimmed = line.trim();
        if trimmed.is_empty() {
            // A blank line between list items does not end the list.
            if self.paragraph.is_empty() {
                self.after_blank = true;
            } else {
                self.end_paragraph();
            }
            return i + 1;
        }
        let after_blank = std::mem::take(&mut self.after_blank);
        if trimmed == "////" {
            return delimited(lines, i, trimmed).1;
        }
        if trimmed.starts_with("//") && !trimmed.starts_with("///") {
            return i + 1;
        }
        if let Some(target) = trimmed.strip_prefix("include::") {
            self.warnings.push(format!(
                "include::{target} is not followed (only the file itself is read)"
            ));
            return i + 1;
        }
        if let Some(captures) = ADMONITION_BLOCK.captures(trimmed) {
            self.end_paragraph();
            self.admonition = Some(admonition_label(&captures[1]));
            return i + 1;
        }
        if trimmed == "+" || is_block_attribute(trimmed) {
            return i + 1;
        }
        if let Some((level, text)) = section_title(trimmed) {
            let text = inline(text);
            if level == 1 && self.title.is_none() {
                self.title = Some(text.clone());
            }
            self.push(format!("{} {text}", "#".repeat(level)));
            return i + 1;
        }
        if trimmed.starts_with("|===") {
            let (body, next) = delimited(lines, i, trimmed);
            let table = table_markdown(&self.attributes.substitute_all(body));
            self.push(table);
            return next;
        }
        if CODE_DELIMITERS.contains(&trimmed) {
            let (body, next) = delimited(lines, i, trimmed);
            self.push(format!("```\n{}\n```", body.join("\n")));
            return next;
        }
        if trimmed == "____" {
            let (body, next) = delimited(lines, i, trimmed);
            let quoted: Vec<String> = self
                .attributes
                .substitute_all(body)
                .iter()
                .map(|l| format!("> {}", inline(l.trim())))
                .collect();
            self.push(quoted.join("\n").replace("> \n", ">\n"));
            return next;
        }
        if trimmed == "++++" {
            // Passthrough content is raw output for another backend.
            return delimited(lines, i, trimmed).1;
        }
        if OPEN_DELIMITERS.contains(&trimmed) {
            self.end_paragraph();
            return i + 1;
        }
        if let Some(block_title) = trimmed.strip_prefix('.')
            && block_title.starts_with(|c: char| c.is_alphanumeric() || c == '_' || c == '*')
        {
            self.push(inline(block_title));
            return i + 1;
        }
        if let Some(captures) = IMAGE.captures(trimmed) {
            let alt = captures[1]
                .split(',')
                .next()
                .unwrap_or_default()
                .trim()
                .to_owned();
            self.push(inline(&alt));
            return i + 1;
        }
        if let Some(captures) = ADMONITION.captures(trimmed) {
            let label = admonition_label(&captures[1]);
            self.push(format!("> **{label}:** {}", inline(&captures[2])));
            return i + 1;
        }
        if let Some(item) = list_item(line) {
            // After a blank line, a top-level item of the other kind starts
            // a new list.
            let other_kind = |line: &str| line.starts_with('-') != item.starts_with('-');
            let new_list = after_blank
                && !item.starts_with(' ')
                && self.list.first().is_some_and(|first| other_kind(first));
            if !self.paragraph.is_empty() || new_list {
                self.end_paragraph();
            }
            self.list.push(item);
            return i + 1;
        }
        if let Some(captures) = LABELED.captures(trimmed) {
            self.push(format!(
                "**{}**: {}",
                inline(&captures[1]),
                inline(&captures[2])
            ));
            return i + 1;
        }
        if !self.list.is_empty() && self.paragraph.is_empty() && !after_blank {
            // A continuation line of the last item.
            if let Some(last) = self.list.last_mut() {
                last.push(' ');
                last.push_str(&inline(trimmed));
            }
            return i + 1;
        }
        self.paragraph.push(trimmed.to_owned());
        i + 1
    }
}

/// `:name: value`, `:name:` (set, empty), `:name!:` and `:!name:` (unset).
static ATTRIBUTE_ENTRY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^:(!)?(\w[\w-]*)(!)?:(?:\s+(.*))?$").expect("static regex"));
/// `{name}`, or `\{name}`, escaped.
static ATTRIBUTE_REFERENCE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(\\)?\{(\w[\w-]*)\}").expect("static regex"));
static ADMONITION_BLOCK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\[(NOTE|TIP|IMPORTANT|WARNING|CAUTION)(?:[,#.%][^\]]*)?\]$")
        .expect("static regex")
});
static IMAGE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^image::[^\[]*\[(.*)\]$").expect("static regex"));
static ADMONITION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(NOTE|TIP|IMPORTANT|WARNING|CAUTION):\s+(.*)$").expect("static regex")
});
static LABELED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(.+?)::\s+(.+)$").expect("static regex"));
static LIST_ITEM: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\s*)(\*+|-|\.+|\d+\.)\s+(.*)$").expect("static regex"));

/// Attribute values that AsciiDoc defines itself for characters hard to
/// type or to write without markup (those that could be read as markup
/// here, such as `{vbar}`, are left out).
const BUILT_IN_ATTRIBUTES: [(&str, &str); 18] = [
    ("empty", ""),
    ("sp", " "),
    ("nbsp", "\u{a0}"),
    ("zwsp", "\u{200b}"),
    ("wj", "\u{2060}"),
    ("apos", "'"),
    ("quot", "\""),
    ("lsquo", "\u{2018}"),
    ("rsquo", "\u{2019}"),
    ("ldquo", "\u{201c}"),
    ("rdquo", "\u{201d}"),
    ("deg", "\u{b0}"),
    ("plus", "+"),
    ("brvbar", "\u{a6}"),
    ("amp", "&"),
    ("lt", "<"),
    ("gt", ">"),
    ("cpp", "C++"),
];

/// The document's attributes by name (names are case-insensitive).
struct Attributes(HashMap<String, String>);

impl Default for Attributes {
    fn default() -> Self {
        Self(
            BUILT_IN_ATTRIBUTES
                .iter()
                .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
                .collect(),
        )
    }
}

impl Attributes {
    /// Sets or unsets the attribute an entry line names (its value's own
    /// references replaced); false when the line is no attribute entry.
    fn entry(&mut self, line: &str) -> bool {
        let Some(captures) = ATTRIBUTE_ENTRY.captures(line) else {
            return false;
        };
        let name = captures[2].to_lowercase();
        if captures.get(1).is_some() || captures.get(3).is_some() {
            self.0.remove(&name);
        } else {
            let value = captures.get(4).map_or("", |v| v.as_str().trim());
            let value = self.substitute(value).into_owned();
            self.0.insert(name, value);
        }
        true
    }

    /// The text with each reference to a known attribute replaced by its value.
    fn substitute<'t>(&self, text: &'t str) -> Cow<'t, str> {
        if !text.contains('{') {
            return Cow::Borrowed(text);
        }
        ATTRIBUTE_REFERENCE.replace_all(text, |c: &regex::Captures| {
            let name = &c[2];
            if c.get(1).is_some() {
                return format!("{{{name}}}");
            }
            match self.0.get(&name.to_lowercase()) {
                Some(value) => value.clone(),
                None => c[0].to_owned(),
            }
        })
    }

    fn substitute_all(&self, lines: &[&str]) -> Vec<String> {
        lines
            .iter()
            .map(|line| self.substitute(line).into_owned())
            .collect()
    }
}

/// `Note` for `NOTE`.
fn admonition_label(kind: &str) -> String {
    format!("{}{}", &kind[..1], kind[1..].to_lowercase())
}

/// Each line of the text as a Markdown quote.
fn quoted(text: &str) -> String {
    text.lines()
        .map(|line| format!("> {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The lines of the block opened at `start` and the index after the line
/// that closes it (a block never closed runs to the end of the file).
fn delimited<'l>(lines: &'l [&'l str], start: usize, delimiter: &str) -> (&'l [&'l str], usize) {
    let rest = &lines[start + 1..];
    match rest.iter().position(|l| l.trim_end() == delimiter) {
        Some(end) => (&rest[..end], start + end + 2),
        None => (rest, lines.len()),
    }
}

fn is_block_attribute(line: &str) -> bool {
    line.starts_with('[') && line.ends_with(']') && !line.starts_with("[[[")
}

/// `== Title` (or `## Title`) as (level, text).
fn section_title(line: &str) -> Option<(usize, &str)> {
    let marker = line.chars().next().filter(|c| *c == '=' || *c == '#')?;
    let level = line.chars().take_while(|c| *c == marker).count();
    let text = line[level..].strip_prefix(' ')?.trim();
    (level <= 6 && !text.is_empty()).then_some((level, text))
}

/// A list item as a Markdown list line, nested by its marker's length or
/// its indentation (two spaces a level).
fn list_item(line: &str) -> Option<String> {
    let captures = LIST_ITEM.captures(line)?;
    let indent = captures[1].len();
    let marker = &captures[2];
    let text = inline(captures[3].trim());
    let ordered = marker.starts_with('.') || marker.ends_with('.');
    let depth = if marker.starts_with('*') || marker.starts_with('.') {
        marker.len()
    } else {
        1
    }
    .max(indent / 2 + 1)
    .min(9);
    let bullet = if ordered { "1." } else { "-" };
    Some(format!("{}{bullet} {text}", "    ".repeat(depth - 1)))
}

/// A table's lines as a Markdown table: cells start at `|` (after an
/// optional specifier such as `2+^.^h`); the first line's cell count is the
/// number of columns, and the cells fill rows of that width whether they
/// were written one row a line or one cell a line.
fn table_markdown(lines: &[String]) -> String {
    let mut cells: Vec<String> = Vec::new();
    let mut columns = 0;
    for line in lines {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let segments: Vec<&str> = line.split('|').collect();
        // Before the first `|`: the first cell's specifier, or more of the
        // last cell when the line starts no cell.
        let head = if segments.len() > 1 {
            without_specifier(segments[0])
        } else {
            segments[0]
        };
        if !head.trim().is_empty()
            && let Some(last) = cells.last_mut()
        {
            last.push(' ');
            last.push_str(&inline(head.trim()));
        }
        let count = segments.len() - 1;
        let row = segments[1..].iter().enumerate().map(|(k, segment)| {
            let content = if k + 1 < count {
                without_specifier(segment)
            } else {
                segment
            };
            inline(content.trim())
        });
        let before = cells.len();
        cells.extend(row);
        if columns == 0 {
            columns = cells.len() - before;
        }
    }
    if columns == 0 {
        return String::new();
    }
    let rows: Vec<Vec<String>> = cells.chunks(columns).map(<[String]>::to_vec).collect();
    table::markdown_table(&rows).trim_end().to_owned()
}

static CELL_SPECIFIER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|\s)((?:\d+\*)?(?:\d*(?:\.\d+)?\+)?[<^>]?(?:\.[<^>])?[adehlmsv]?)$")
        .expect("static regex")
});

/// A segment without the next cell's specifier, which must touch the `|`.
fn without_specifier(segment: &str) -> &str {
    match CELL_SPECIFIER.captures(segment).and_then(|c| c.get(1)) {
        Some(spec) if !spec.is_empty() => &segment[..spec.start()],
        _ => segment,
    }
}

static STRONG: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(^|[^\w*])\*([^*\s][^*]*?)\*($|[^\w*])").expect("static regex"));
static EMPHASIS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(^|[^\w_])_([^_\s][^_]*?)_($|[^\w_])").expect("static regex"));
static LINK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:link:)?((?:https?|mailto):[^\s\[]+)\[([^\]]*)\]").expect("static regex")
});
static CROSS_REFERENCE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"<<([^,>]+)(?:,\s*([^>]+))?>>").expect("static regex"));
static MACRO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(?:btn|kbd|menu|footnote|xref|pass):([^\[\s]*)\[([^\]]*)\]")
        .expect("static regex")
});

/// Inline markup: `*strong*`, `_emphasis_`, links, cross references and
/// UI macros (`btn:[OK]` is its label).
fn inline(text: &str) -> String {
    let text = LINK.replace_all(text, |c: &regex::Captures| {
        if c[2].trim().is_empty() {
            c[1].to_owned()
        } else {
            format!("[{}]({})", &c[2], &c[1])
        }
    });
    let text = CROSS_REFERENCE.replace_all(&text, |c: &regex::Captures| {
        c.get(2).map_or(&c[1], |label| label.as_str()).to_owned()
    });
    let text = MACRO.replace_all(&text, |c: &regex::Captures| {
        if c[2].is_empty() {
            c[1].to_owned()
        } else {
            c[2].to_owned()
        }
    });
    let text = STRONG.replace_all(&text, "$1**$2**$3");
    EMPHASIS.replace_all(&text, "$1*$2*$3").into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn markdown(source: &str) -> String {
        convert(source.as_bytes()).unwrap().markdown
    }

    #[test]
    fn sections_lists_and_paragraphs() {
        let source = "= Guide\n:toc:\n\nAn *important* intro\nover two lines.\n\n== Steps\n\n. Open it\n. Click btn:[Save]\n\n* Top\n  * Nested\n** Deeper\n\n// a comment\nNOTE: Keep a copy.\n";
        assert_eq!(
            markdown(source),
            "# Guide\n\nAn **important** intro\nover two lines.\n\n## Steps\n\n1. Open it\n1. Click Save\n\n- Top\n    - Nested\n    - Deeper\n\n> **Note:** Keep a copy.\n"
        );
        assert_eq!(
            convert(source.as_bytes()).unwrap().title.as_deref(),
            Some("Guide")
        );
    }

    #[test]
    fn attribute_references_take_the_values_defined_before_them() {
        let source = "= {product} Guide\n:product: Stormbox\n:Version: 4.2\n\n\
            Welcome to {product} {version}.\n\n== Install {product}\n\n\
            Keep \\{product} and {unknown}{empty}.\n\n:version: 5.0\n:full: {product} {version}\n\
            Now {full}.\n\n:version!:\nGone {version}.\n\n\
            ----\n{product} in code\n----\n\n|===\n|Name |{product}\n|===\n";
        let converted = convert(source.as_bytes()).unwrap();
        assert_eq!(converted.title.as_deref(), Some("Stormbox Guide"));
        assert_eq!(
            converted.markdown,
            "# Stormbox Guide\n\nWelcome to Stormbox 4.2.\n\n## Install Stormbox\n\n\
             Keep {product} and {unknown}.\n\nNow Stormbox 5.0.\n\nGone {version}.\n\n\
             ```\n{product} in code\n```\n\n| Name | Stormbox |\n| --- | --- |\n"
        );
    }

    #[test]
    fn admonition_blocks_keep_their_label() {
        let source = "[NOTE]\nKeep a copy\nof the key.\n\n[WARNING]\n====\nDo not share it.\n\n\
            Ever.\n====\n\n[TIP]\n* one\n* two\n";
        assert_eq!(
            markdown(source),
            "> **Note:** Keep a copy\n> of the key.\n\n> **Warning:** Do not share it.\n\n\
             Ever.\n\n**Tip:**\n\n- one\n- two\n"
        );
    }

    #[test]
    fn tables_in_either_layout_and_code_blocks() {
        let source = ".Sizes\n|===\n^.^h|Name ^h| Size\n\n|a\n|1\n| s | 2\n|===\n\n[source,sh]\n----\nmake demo\n----\n";
        assert_eq!(
            markdown(source),
            "Sizes\n\n| Name | Size |\n| --- | --- |\n| a | 1 |\n| s | 2 |\n\n```\nmake demo\n```\n"
        );
    }

    #[test]
    fn includes_are_never_followed_and_unclosed_blocks_end_the_file() {
        let converted = convert(b"Text\n\ninclude::/etc/passwd[]\n\n----\nnever closed").unwrap();
        assert_eq!(converted.markdown, "Text\n\n```\nnever closed\n```\n");
        let warnings = converted.properties["warnings"].as_array().unwrap();
        assert!(warnings[0].as_str().unwrap().contains("/etc/passwd"));
    }

    #[test]
    fn links_and_cross_references() {
        assert_eq!(
            inline("See https://kts.dev[the site] and <<setup,Setup>> or <<other>>."),
            "See [the site](https://kts.dev) and Setup or other."
        );
    }
}
