//! Markdown as a sequence of blocks: headings, paragraphs, list items,
//! tables, code blocks and the page/slide markers kts-convert writes.

use std::ops::Range;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    Heading {
        level: usize,
        text: String,
    },
    /// Paragraphs and list items: text that may be split at sentences.
    Prose,
    /// Tables and fenced code: kept whole when they fit, else split at lines.
    Verbatim,
    Page(u32),
    Slide(u32),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub kind: Kind,
    /// Byte range in the Markdown, without surrounding blank space.
    pub range: Range<usize>,
}

/// A line with its byte range (without the line break).
#[derive(Clone, Copy)]
struct Line<'a> {
    text: &'a str,
    start: usize,
}

impl Line<'_> {
    fn end(&self) -> usize {
        self.start + self.text.len()
    }
}

fn lines(markdown: &str) -> Vec<Line<'_>> {
    let mut start = 0;
    markdown
        .split_inclusive('\n')
        .map(|raw| {
            let text = raw.trim_end_matches(['\n', '\r']);
            let line = Line { text, start };
            start += raw.len();
            line
        })
        .collect()
}

fn fence(line: &str) -> Option<&str> {
    let trimmed = line.trim_start();
    (line.len() - trimmed.len() <= 3)
        .then(|| ["```", "~~~"].into_iter().find(|f| trimmed.starts_with(f)))
        .flatten()
}

fn heading(line: &str) -> Option<(usize, String)> {
    let trimmed = line.trim_start();
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let text = trimmed.trim_start_matches('#');
    let level = trimmed.len() - text.len();
    if !(1..=6).contains(&level) || !(text.is_empty() || text.starts_with([' ', '\t'])) {
        return None;
    }
    let text = text.trim().trim_end_matches('#').trim();
    Some((level, text.to_string()))
}

/// The level of a setext heading's underline: 1 for `===`, 2 for `---`.
fn setext_underline(line: &str) -> Option<usize> {
    let trimmed = line.trim();
    if line.len() - line.trim_start().len() > 3 || trimmed.is_empty() {
        return None;
    }
    [('=', 1), ('-', 2)]
        .into_iter()
        .find(|(c, _)| trimmed.chars().all(|t| t == *c))
        .map(|(_, level)| level)
}

fn marker(line: &str) -> Option<Kind> {
    let inner = line
        .trim()
        .strip_prefix("<!--")?
        .strip_suffix("-->")?
        .trim();
    let (name, number) = inner.split_once(':')?;
    let number = number.trim().parse().ok()?;
    match name.trim() {
        "page" => Some(Kind::Page(number)),
        "slide" => Some(Kind::Slide(number)),
        _ => None,
    }
}

fn is_table_row(line: &str) -> bool {
    line.trim_start().starts_with('|')
}

/// The byte range of a table's header row (its first line, trimmed) when the
/// block is a table whose second line is the `| --- |` separator row.
pub fn table_header(markdown: &str, block: &Range<usize>) -> Option<Range<usize>> {
    let text = &markdown[block.clone()];
    let mut lines = text.lines();
    let header = lines.next()?;
    let separator = lines.next()?.trim();
    let is_separator = separator.starts_with('|')
        && separator.contains('-')
        && separator
            .chars()
            .all(|c| matches!(c, '|' | '-' | ':' | ' ' | '\t'));
    if !is_table_row(header) || !is_separator {
        return None;
    }
    let start = block.start + (header.len() - header.trim_start().len());
    Some(start..block.start + header.trim_end().len())
}

fn is_list_item(line: &str) -> bool {
    let trimmed = line.trim_start();
    if trimmed.starts_with("- ") || trimmed.starts_with("* ") || trimmed.starts_with("+ ") {
        return true;
    }
    let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0
        && digits < 10
        && (trimmed[digits..].starts_with(". ") || trimmed[digits..].starts_with(") "))
}

/// Splits Markdown into blocks, in order. Blank lines separate blocks and
/// belong to none.
pub fn parse(markdown: &str) -> Vec<Block> {
    let lines = lines(markdown);
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.text.trim().is_empty() {
            i += 1;
            continue;
        }
        let (kind, last) = if let Some(open) = fence(line.text) {
            let close = lines[i + 1..]
                .iter()
                .position(|l| l.text.trim_start().starts_with(open));
            (Kind::Verbatim, close.map_or(lines.len() - 1, |c| i + 1 + c))
        } else if let Some((level, text)) = heading(line.text) {
            (Kind::Heading { level, text }, i)
        } else if let Some(marker) = marker(line.text) {
            (marker, i)
        } else if is_table_row(line.text) {
            let rows = lines[i..]
                .iter()
                .take_while(|l| is_table_row(l.text))
                .count();
            (Kind::Verbatim, i + rows - 1)
        } else {
            let end = prose_end(&lines, i);
            match lines.get(end + 1).and_then(|l| setext_underline(l.text)) {
                Some(level) if !is_list_item(line.text) => {
                    let text = joined(&lines[i..=end]);
                    (Kind::Heading { level, text }, end + 1)
                }
                _ => (Kind::Prose, end),
            }
        };
        blocks.push(trimmed_block(markdown, kind, line.start, lines[last].end()));
        i = last + 1;
    }
    blocks
}

/// The last line of the paragraph or list item starting at `first` (for a
/// paragraph, the line above a setext underline when one follows).
fn prose_end(lines: &[Line], first: usize) -> usize {
    let paragraph = !is_list_item(lines[first].text);
    let mut last = first;
    for (i, line) in lines.iter().enumerate().skip(first + 1) {
        let text = line.text;
        let interrupts = text.trim().is_empty()
            || (paragraph && setext_underline(text).is_some())
            || fence(text).is_some()
            || heading(text).is_some()
            || marker(text).is_some()
            || is_table_row(text)
            || is_list_item(text);
        if interrupts {
            break;
        }
        last = i;
    }
    last
}

/// Lines trimmed and joined by single spaces.
fn joined(lines: &[Line]) -> String {
    let words: Vec<&str> = lines.iter().map(|l| l.text.trim()).collect();
    words.join(" ")
}

fn trimmed_block(markdown: &str, kind: Kind, start: usize, end: usize) -> Block {
    let text = &markdown[start..end];
    let leading = text.len() - text.trim_start().len();
    let trailing = text.len() - text.trim_end().len();
    Block {
        kind,
        range: start + leading..end - trailing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(markdown: &str) -> Vec<(Kind, &str)> {
        parse(markdown)
            .into_iter()
            .map(|b| (b.kind, &markdown[b.range]))
            .collect()
    }

    #[test]
    fn blocks_of_a_small_document() {
        let markdown = "# Title\n\nIntro line one\nline two.\n\n- item one\n- item two\n\n| a | b |\n| --- | --- |\n| 1 | 2 |\n\n<!-- page: 2 -->\n```rust\nfn main() {}\n\n```\n## Next ##\n";
        assert_eq!(
            kinds(markdown),
            [
                (
                    Kind::Heading {
                        level: 1,
                        text: "Title".into()
                    },
                    "# Title"
                ),
                (Kind::Prose, "Intro line one\nline two."),
                (Kind::Prose, "- item one"),
                (Kind::Prose, "- item two"),
                (Kind::Verbatim, "| a | b |\n| --- | --- |\n| 1 | 2 |"),
                (Kind::Page(2), "<!-- page: 2 -->"),
                (Kind::Verbatim, "```rust\nfn main() {}\n\n```"),
                (
                    Kind::Heading {
                        level: 2,
                        text: "Next".into()
                    },
                    "## Next ##"
                ),
            ]
        );
    }

    #[test]
    fn a_table_header_is_its_first_row_above_a_separator() {
        let markdown = "x\n\n| a | b |\n| :-- | --: |\n| 1 | 2 |";
        let table = parse(markdown).pop().unwrap();
        let header = table_header(markdown, &table.range).unwrap();
        assert_eq!(&markdown[header], "| a | b |");
        let no_separator = "| a | b |\n| 1 | 2 |";
        assert_eq!(table_header(no_separator, &(0..no_separator.len())), None);
    }

    #[test]
    fn an_unclosed_fence_runs_to_the_end() {
        assert_eq!(
            kinds("```\ncode\n\nmore"),
            [(Kind::Verbatim, "```\ncode\n\nmore")]
        );
    }

    #[test]
    fn setext_underlines_make_headings_of_the_paragraph_above() {
        let heading = |level, text: &str| Kind::Heading {
            level,
            text: text.into(),
        };
        assert_eq!(
            kinds("Main\nheading\n====\n\nBody.\n\nSub heading\n  --- \n- item\n---\n"),
            [
                (heading(1, "Main heading"), "Main\nheading\n===="),
                (Kind::Prose, "Body."),
                (heading(2, "Sub heading"), "Sub heading\n  ---"),
                (Kind::Prose, "- item\n---"),
            ]
        );
        assert_eq!(kinds("= x\n"), [(Kind::Prose, "= x")]);
    }

    #[test]
    fn hashes_without_a_space_are_not_headings() {
        assert_eq!(kinds("#hashtag here"), [(Kind::Prose, "#hashtag here")]);
    }
}
