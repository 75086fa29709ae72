//! HTML5 writer.

use crate::outline::{Block, Outline};
use crate::png::base64;
use crate::xml::escape;

/// A complete HTML5 page: `<title>`, h1-h6, p, ul/ol, tables with `<th>`,
/// pre/code, and images as `data:` URIs with their alt text.
pub fn to_html(outline: &Outline) -> Vec<u8> {
    let title = escape(&outline.title);
    let mut body = Vec::new();
    if !outline.title.is_empty() {
        body.push(format!("<h1>{title}</h1>"));
    }
    body.extend(outline.blocks.iter().map(html_block));
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n</head>\n<body>\n{}\n</body>\n</html>\n",
        body.join("\n")
    )
    .into_bytes()
}

pub(crate) fn html_block(block: &Block) -> String {
    match block {
        Block::Heading { level, text } => {
            let level = (*level).clamp(1, 6);
            format!("<h{level}>{}</h{level}>", escape(text))
        }
        Block::Paragraph(text) => format!("<p>{}</p>", escape(text)),
        Block::Bullets(items) => format!("<ul>\n{}\n</ul>", list_items(items)),
        Block::Numbered(items) => format!("<ol>\n{}\n</ol>", list_items(items)),
        Block::Table(rows) => html_table(rows),
        Block::Code(code) => format!("<pre><code>{}</code></pre>", escape(code)),
        Block::Image { png, alt } => format!(
            "<p><img src=\"data:image/png;base64,{}\" alt=\"{}\"></p>",
            base64(png),
            escape(alt)
        ),
        Block::Notes(text) => format!(
            "<aside class=\"notes\"><p>Notes: {}</p></aside>",
            escape(text)
        ),
        Block::PageBreak => "<hr style=\"page-break-after: always\">".into(),
    }
}

fn list_items(items: &[String]) -> String {
    items
        .iter()
        .map(|i| format!("<li>{}</li>", escape(i)))
        .collect::<Vec<_>>()
        .join("\n")
}

fn html_table(rows: &[Vec<String>]) -> String {
    let row = |cells: &[String], tag: &str| {
        let cells: String = cells
            .iter()
            .map(|c| format!("<{tag}>{}</{tag}>", escape(c)))
            .collect();
        format!("<tr>{cells}</tr>")
    };
    let mut lines = vec!["<table>".to_string()];
    if let Some((header, body)) = rows.split_first() {
        lines.push(format!("<thead>{}</thead>", row(header, "th")));
        lines.push("<tbody>".into());
        lines.extend(body.iter().map(|r| row(r, "td")));
        lines.push("</tbody>".into());
    }
    lines.push("</table>".into());
    lines.join("\n")
}
