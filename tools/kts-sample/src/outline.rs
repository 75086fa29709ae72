//! The one simple document model every writer renders, and a small Markdown
//! parser that builds it.

use crate::png::tiny_png;

/// A document: a title and a flat sequence of blocks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outline {
    /// Rendered as the document title (H1, Title style, first slide, /Title).
    /// Empty means "no title".
    pub title: String,
    pub blocks: Vec<Block>,
}

/// One block of a document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Block {
    /// `level` 1..=6 (values outside are clamped by the writers).
    Heading {
        level: u8,
        text: String,
    },
    Paragraph(String),
    Bullets(Vec<String>),
    Numbered(Vec<String>),
    /// The first row is the header.
    Table(Vec<Vec<String>>),
    Code(String),
    Image {
        png: Vec<u8>,
        alt: String,
    },
    /// Speaker notes for the current slide; other formats render them as a
    /// paragraph starting with "Notes:".
    Notes(String),
    PageBreak,
}

/// A run of blocks under one heading (or before the first heading).
pub(crate) struct Section<'a> {
    pub heading: Option<(u8, &'a str)>,
    pub blocks: &'a [Block],
}

impl Outline {
    pub fn new(title: impl Into<String>) -> Self {
        Self {
            title: title.into(),
            blocks: Vec::new(),
        }
    }

    /// Builder helpers, so tests can write `Outline::new("T").heading(2, "A").paragraph("x")`.
    pub fn block(mut self, block: Block) -> Self {
        self.blocks.push(block);
        self
    }

    pub fn heading(self, level: u8, text: impl Into<String>) -> Self {
        self.block(Block::Heading {
            level,
            text: text.into(),
        })
    }

    pub fn paragraph(self, text: impl Into<String>) -> Self {
        self.block(Block::Paragraph(text.into()))
    }

    pub fn bullets<S: Into<String>>(self, items: impl IntoIterator<Item = S>) -> Self {
        self.block(Block::Bullets(items.into_iter().map(Into::into).collect()))
    }

    pub fn numbered<S: Into<String>>(self, items: impl IntoIterator<Item = S>) -> Self {
        self.block(Block::Numbered(items.into_iter().map(Into::into).collect()))
    }

    pub fn table(self, rows: &[&[&str]]) -> Self {
        let rows = rows
            .iter()
            .map(|row| row.iter().map(|c| c.to_string()).collect())
            .collect();
        self.block(Block::Table(rows))
    }

    /// Parses ordinary Markdown: ATX headings, paragraphs, `-`/`*`/`+` bullets,
    /// `1.` lists, pipe tables, fenced code, `![alt](any)` images (a generated
    /// PNG, the path is not read), `> Notes: ...` speaker notes and
    /// `<!-- page -->` page breaks. The first level-1 heading becomes the title.
    pub fn from_markdown(markdown: &str) -> Outline {
        let blocks = MarkdownParser::new(markdown).parse();
        let mut outline = Outline::default();
        for block in blocks {
            match block {
                Block::Heading { level: 1, text } if outline.title.is_empty() => {
                    outline.title = text
                }
                other => outline.blocks.push(other),
            }
        }
        outline
    }

    /// Splits the blocks at every heading of `max_level` or higher rank.
    pub(crate) fn sections(&self, max_level: u8) -> Vec<Section<'_>> {
        let mut sections = Vec::new();
        let mut start = 0;
        let mut heading = None;
        for (i, block) in self.blocks.iter().enumerate() {
            if let Block::Heading { level, text } = block
                && *level <= max_level
            {
                if i > start || heading.is_some() {
                    sections.push(Section {
                        heading,
                        blocks: &self.blocks[start..i],
                    });
                }
                heading = Some((*level, text.as_str()));
                start = i + 1;
            }
        }
        if start < self.blocks.len() || heading.is_some() {
            sections.push(Section {
                heading,
                blocks: &self.blocks[start..],
            });
        }
        sections
    }
}

/// Line-by-line Markdown reader producing blocks (the title is not split off here).
struct MarkdownParser<'a> {
    lines: Vec<&'a str>,
    pos: usize,
    blocks: Vec<Block>,
    paragraph: Vec<String>,
}

impl<'a> MarkdownParser<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            lines: text.lines().collect(),
            pos: 0,
            blocks: Vec::new(),
            paragraph: Vec::new(),
        }
    }

    fn parse(mut self) -> Vec<Block> {
        while self.pos < self.lines.len() {
            let line = self.lines[self.pos];
            if !self.parse_structural(line) {
                self.paragraph.push(inline_plain(line.trim()));
                self.pos += 1;
            }
        }
        self.flush_paragraph();
        self.blocks
    }

    /// Handles a line that starts (or ends) a non-paragraph construct.
    /// Returns false when the line is ordinary paragraph text.
    fn parse_structural(&mut self, line: &str) -> bool {
        let trimmed = line.trim();
        if trimmed.is_empty() || is_rule(trimmed) {
            self.flush_paragraph();
            self.pos += 1;
        } else if let Some(fence) = fence_marker(trimmed) {
            self.push(|p| p.code_block(fence));
        } else if trimmed.starts_with("<!--") {
            self.push(|p| p.comment());
        } else if let Some((level, text)) = atx_heading(trimmed) {
            self.push(|p| {
                p.pos += 1;
                Some(Block::Heading { level, text })
            });
        } else if trimmed.starts_with('>') {
            self.push(|p| Some(p.quote()));
        } else if let Some(block) = image(trimmed) {
            self.push(|p| {
                p.pos += 1;
                Some(block)
            });
        } else if bullet_item(line).is_some() || numbered_item(line).is_some() {
            self.push(|p| Some(p.list()));
        } else if trimmed.starts_with('|') && self.next_is_table_separator() {
            self.push(|p| Some(p.table()));
        } else {
            return false;
        }
        true
    }

    fn push(&mut self, parse: impl FnOnce(&mut Self) -> Option<Block>) {
        self.flush_paragraph();
        if let Some(block) = parse(self) {
            self.blocks.push(block);
        }
    }

    fn flush_paragraph(&mut self) {
        if !self.paragraph.is_empty() {
            let text = self.paragraph.join(" ");
            self.paragraph.clear();
            self.blocks.push(Block::Paragraph(text));
        }
    }

    fn code_block(&mut self, fence: &str) -> Option<Block> {
        self.pos += 1;
        let mut code = Vec::new();
        while let Some(line) = self.lines.get(self.pos) {
            self.pos += 1;
            if line.trim_start().starts_with(fence) {
                break;
            }
            code.push(*line);
        }
        Some(Block::Code(code.join("\n")))
    }

    fn comment(&mut self) -> Option<Block> {
        let mut text = String::new();
        while let Some(line) = self.lines.get(self.pos) {
            self.pos += 1;
            text.push_str(line);
            if line.contains("-->") {
                break;
            }
        }
        let inner = text
            .trim_start_matches("<!--")
            .trim_end_matches("-->")
            .trim();
        inner
            .eq_ignore_ascii_case("page")
            .then_some(Block::PageBreak)
    }

    fn quote(&mut self) -> Block {
        let mut lines = Vec::new();
        while let Some(rest) = self
            .lines
            .get(self.pos)
            .and_then(|l| l.trim().strip_prefix('>'))
        {
            lines.push(inline_plain(rest.trim()));
            self.pos += 1;
        }
        let text = lines.join(" ");
        match text.strip_prefix("Notes:") {
            Some(notes) => Block::Notes(notes.trim().to_string()),
            None => Block::Paragraph(text),
        }
    }

    fn list(&mut self) -> Block {
        let numbered = numbered_item(self.lines[self.pos]).is_some();
        let mut items: Vec<String> = Vec::new();
        while let Some(line) = self.lines.get(self.pos) {
            let item = if numbered {
                numbered_item(line)
            } else {
                bullet_item(line)
            };
            if let Some(text) = item {
                items.push(inline_plain(text));
            } else if line.starts_with(' ') && !line.trim().is_empty() && !items.is_empty() {
                let last = items.len() - 1;
                items[last].push(' ');
                items[last].push_str(&inline_plain(line.trim()));
            } else {
                break;
            }
            self.pos += 1;
        }
        if numbered {
            Block::Numbered(items)
        } else {
            Block::Bullets(items)
        }
    }

    fn next_is_table_separator(&self) -> bool {
        self.lines.get(self.pos + 1).is_some_and(|l| {
            let t = l.trim();
            t.starts_with('|')
                && t.contains('-')
                && t.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '))
        })
    }

    fn table(&mut self) -> Block {
        let mut rows = vec![table_cells(self.lines[self.pos])];
        self.pos += 2; // header and separator
        while let Some(line) = self
            .lines
            .get(self.pos)
            .filter(|l| l.trim().starts_with('|'))
        {
            rows.push(table_cells(line));
            self.pos += 1;
        }
        Block::Table(rows)
    }
}

fn is_rule(line: &str) -> bool {
    line.len() >= 3
        && ["-", "*", "_"]
            .iter()
            .any(|c| line.chars().all(|x| x.to_string() == *c))
}

fn fence_marker(line: &str) -> Option<&'static str> {
    ["```", "~~~"].into_iter().find(|f| line.starts_with(f))
}

fn atx_heading(line: &str) -> Option<(u8, String)> {
    let level = line.chars().take_while(|&c| c == '#').count();
    let rest = &line[level..];
    if !(1..=6).contains(&level) || !(rest.is_empty() || rest.starts_with(' ')) {
        return None;
    }
    let text = rest.trim().trim_end_matches('#').trim();
    Some((level as u8, inline_plain(text)))
}

fn image(line: &str) -> Option<Block> {
    let rest = line.strip_prefix("![")?;
    let (alt, rest) = rest.split_once("](")?;
    rest.ends_with(')').then(|| Block::Image {
        png: tiny_png(48, 32, fnv1a(alt.as_bytes())),
        alt: alt.to_string(),
    })
}

fn bullet_item(line: &str) -> Option<&str> {
    let t = line.trim_start();
    ["- ", "* ", "+ "]
        .iter()
        .find_map(|m| t.strip_prefix(m))
        .map(str::trim)
}

fn numbered_item(line: &str) -> Option<&str> {
    let t = line.trim_start();
    let digits = t.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let rest = &t[digits..];
    rest.strip_prefix(". ")
        .or_else(|| rest.strip_prefix(") "))
        .map(str::trim)
}

fn table_cells(line: &str) -> Vec<String> {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t.strip_suffix('|').unwrap_or(t);
    let mut cells = vec![String::new()];
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                chars.next();
                cells.last_mut().into_iter().for_each(|cell| cell.push('|'));
            }
            '|' => cells.push(String::new()),
            _ => cells.last_mut().into_iter().for_each(|cell| cell.push(c)),
        }
    }
    cells.iter().map(|c| inline_plain(c.trim())).collect()
}

/// Strips the inline markup that would show as noise in other formats:
/// `**strong**`, `__strong__` and `[text](url)` links (kept: `code` backticks).
fn inline_plain(text: &str) -> String {
    let text = text.replace("**", "").replace("__", "");
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(open) = rest.find('[') {
        let Some((label, after)) = rest[open + 1..].split_once("](") else {
            break;
        };
        let Some(close) = after.find(')') else { break };
        out.push_str(&rest[..open]);
        out.push_str(label);
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}

/// A stable 64-bit hash (FNV-1a), used to derive image seeds from alt texts.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_block_kind() {
        let md = "# Title\n\nIntro **bold** [link](http://x).\nsecond line\n\n## Part\n\n- a\n- b\n  more\n\n1. one\n2. two\n\n\
                  | H1 | H2 |\n|----|---:|\n| x \\| y | z |\n\n```rust\nfn main() {}\n```\n\n![A chart](chart.png)\n\n> Notes: say hi\n\n<!-- page -->\n\n# Second H1\n";
        let o = Outline::from_markdown(md);
        assert_eq!(o.title, "Title");
        let expected = [
            Block::Paragraph("Intro bold link. second line".into()),
            Block::Heading {
                level: 2,
                text: "Part".into(),
            },
            Block::Bullets(vec!["a".into(), "b more".into()]),
            Block::Numbered(vec!["one".into(), "two".into()]),
            Block::Table(vec![
                vec!["H1".into(), "H2".into()],
                vec!["x | y".into(), "z".into()],
            ]),
            Block::Code("fn main() {}".into()),
        ];
        assert_eq!(&o.blocks[..6], &expected[..]);
        assert!(
            matches!(&o.blocks[6], Block::Image { alt, png } if alt == "A chart" && !png.is_empty())
        );
        assert_eq!(o.blocks[7], Block::Notes("say hi".into()));
        assert_eq!(o.blocks[8], Block::PageBreak);
        assert_eq!(
            o.blocks[9],
            Block::Heading {
                level: 1,
                text: "Second H1".into()
            }
        );
    }

    #[test]
    fn sections_split_at_headings() {
        let o = Outline::new("T")
            .paragraph("intro")
            .heading(2, "A")
            .paragraph("a")
            .heading(3, "A.1")
            .heading(2, "B");
        let s = o.sections(2);
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].heading, None);
        assert_eq!(s[1].heading, Some((2, "A")));
        assert_eq!(s[1].blocks.len(), 2);
        assert_eq!(s[2].heading, Some((2, "B")));
        assert!(s[2].blocks.is_empty());
    }
}
