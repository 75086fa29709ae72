//! Markdown and plain-text writers.

use crate::outline::{Block, Outline};
use crate::png::base64;

/// Markdown that [`Outline::from_markdown`] reads back to the same outline
/// (images become `data:` URIs, notes `> Notes:` quotes, page breaks `<!-- page -->`).
pub fn to_markdown(outline: &Outline) -> Vec<u8> {
    let mut parts = Vec::new();
    if !outline.title.is_empty() {
        parts.push(format!("# {}", outline.title));
    }
    parts.extend(outline.blocks.iter().map(markdown_block));
    join_blocks(parts)
}

fn markdown_block(block: &Block) -> String {
    match block {
        Block::Heading { level, text } => {
            format!("{} {text}", "#".repeat(usize::from((*level).clamp(1, 6))))
        }
        Block::Paragraph(text) => text.clone(),
        Block::Bullets(items) => items
            .iter()
            .map(|i| format!("- {i}"))
            .collect::<Vec<_>>()
            .join("\n"),
        Block::Numbered(items) => numbered_lines(items).join("\n"),
        Block::Table(rows) => markdown_table(rows),
        Block::Code(code) => format!("```\n{code}\n```"),
        Block::Image { png, alt } => format!("![{alt}](data:image/png;base64,{})", base64(png)),
        Block::Notes(text) => format!("> Notes: {text}"),
        Block::PageBreak => "<!-- page -->".into(),
    }
}

fn markdown_table(rows: &[Vec<String>]) -> String {
    let width = table_width(rows);
    let line = |cells: &[String]| {
        let cells: Vec<String> = (0..width)
            .map(|i| {
                cells
                    .get(i)
                    .map_or(String::new(), |c| c.replace('|', "\\|"))
            })
            .collect();
        format!("| {} |", cells.join(" | "))
    };
    let mut lines: Vec<String> = Vec::new();
    if let Some((header, body)) = rows.split_first() {
        lines.push(line(header));
        lines.push(format!("|{}", "---|".repeat(width)));
        lines.extend(body.iter().map(|r| line(r)));
    }
    lines.join("\n")
}

/// Plain text: the title underlined, headings on their own lines, bullets as
/// `* `, tables as tab-separated rows, page breaks as form feeds.
pub fn to_text(outline: &Outline) -> Vec<u8> {
    let mut parts = Vec::new();
    if !outline.title.is_empty() {
        parts.push(format!(
            "{}\n{}",
            outline.title,
            "=".repeat(outline.title.chars().count())
        ));
    }
    parts.extend(outline.blocks.iter().filter_map(text_block));
    join_blocks(parts)
}

fn text_block(block: &Block) -> Option<String> {
    Some(match block {
        Block::Heading { text, .. } => text.clone(),
        Block::Paragraph(text) => text.clone(),
        Block::Bullets(items) => items
            .iter()
            .map(|i| format!("* {i}"))
            .collect::<Vec<_>>()
            .join("\n"),
        Block::Numbered(items) => numbered_lines(items).join("\n"),
        Block::Table(rows) => rows
            .iter()
            .map(|r| r.join("\t"))
            .collect::<Vec<_>>()
            .join("\n"),
        Block::Code(code) => code
            .lines()
            .map(|l| format!("    {l}"))
            .collect::<Vec<_>>()
            .join("\n"),
        Block::Image { alt, .. } => format!("[Image: {alt}]"),
        Block::Notes(text) => format!("Notes: {text}"),
        Block::PageBreak => "\u{c}".into(),
    })
}

pub(crate) fn numbered_lines(items: &[String]) -> Vec<String> {
    items
        .iter()
        .enumerate()
        .map(|(i, item)| format!("{}. {item}", i + 1))
        .collect()
}

pub(crate) fn table_width(rows: &[Vec<String>]) -> usize {
    rows.iter().map(Vec::len).max().unwrap_or(0).max(1)
}

fn join_blocks(parts: Vec<String>) -> Vec<u8> {
    let mut text = parts.join("\n\n");
    text.push('\n');
    text.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_round_trips_through_the_parser() {
        let outline = Outline::new("Round trip")
            .heading(2, "Section")
            .paragraph("Some text with a | pipe.")
            .bullets(["one", "two"])
            .numbered(["first", "second"])
            .table(&[&["Code", "Meaning"], &["a|b", "c"]])
            .block(Block::Code("let x = 1;\nlet y = 2;".into()))
            .block(Block::Image {
                png: crate::tiny_png(48, 32, crate::outline::fnv1a(b"pic")),
                alt: "pic".into(),
            })
            .block(Block::Notes("speaker notes".into()))
            .block(Block::PageBreak);
        let md = String::from_utf8(to_markdown(&outline)).unwrap();
        // The parser regenerates images from their alt text, as the outline above does.
        assert_eq!(Outline::from_markdown(&md), outline);
    }

    #[test]
    fn text_has_no_markup() {
        let outline = Outline::new("T")
            .heading(2, "H")
            .bullets(["x"])
            .table(&[&["a", "b"], &["c", "d"]]);
        let text = String::from_utf8(to_text(&outline)).unwrap();
        assert_eq!(text, "T\n=\n\nH\n\n* x\n\na\tb\nc\td\n");
    }
}
