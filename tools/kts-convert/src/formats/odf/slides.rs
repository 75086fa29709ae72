//! An OpenDocument presentation's slides, written as pptx slides are: a
//! `<!-- slide: N -->` marker, a `## title`, the other shapes' content in
//! reading order (top to bottom, left to right), then the speaker notes and
//! the comments.

use super::super::Context;
use super::super::ooxml::{self, Element, Package};
use super::body::Writer;
use super::{Styles, one_line};

/// Placeholders that repeat on every slide and say nothing about it.
const FURNITURE: [&str; 6] = [
    "page-number",
    "footer",
    "header",
    "date-time",
    "handout",
    "page",
];

/// The slides as Markdown, and how many there are.
pub fn render(
    presentation: &Element,
    styles: &Styles,
    package: &mut Package,
    ctx: &mut Context,
) -> (String, usize) {
    let mut writer = Writer::new(styles, package, ctx);
    let mut out = String::new();
    let pages: Vec<&Element> = presentation
        .elements()
        .filter(|e| e.name == "page")
        .collect();
    for (index, page) in pages.iter().enumerate() {
        out.push_str(&slide(&mut writer, page, index + 1));
    }
    let trimmed = out.trim_end();
    let markdown = if trimmed.is_empty() {
        String::new()
    } else {
        format!("{trimmed}\n")
    };
    (markdown, pages.len())
}

fn slide(writer: &mut Writer, page: &Element, number: usize) -> String {
    let mut out = format!("<!-- slide: {number} -->\n\n");
    let title_shape = find_title(page).or_else(|| title_like_shape(page));
    let title = title_shape
        .map(|shape| one_line(&shape.text()))
        .filter(|t| !t.is_empty());
    // Untitled: no heading of kts's making (see pptx.rs).
    if let Some(title) = title {
        out.push_str(&format!("## {title}\n\n"));
    }
    let mut items: Vec<((i64, i64), String)> = Vec::new();
    for shape in page.elements() {
        if matches!(
            shape.name.as_str(),
            "notes" | "annotation" | "forms" | "animations" | "par" | "seq"
        ) || is_title(shape)
            || title_shape.is_some_and(|t| std::ptr::eq(t, shape))
            || shape.attr("class").is_some_and(|c| FURNITURE.contains(&c))
        {
            continue;
        }
        let markdown = writer.blocks_of(shape).join("\n\n");
        if !markdown.trim().is_empty() {
            items.push((position(shape), markdown));
        }
    }
    items.sort_by_key(|(at, _)| *at);
    for (_, markdown) in items {
        out.push_str(&markdown);
        out.push_str("\n\n");
    }
    let notes = page
        .child("notes")
        .map(|notes| {
            notes
                .elements()
                .filter(|e| e.attr("class") == Some("notes"))
                .flat_map(|frame| writer.blocks_of(frame))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    if !notes.is_empty() {
        out.push_str("### Notes\n\n");
        out.push_str(&notes.join("\n\n"));
        out.push_str("\n\n");
    }
    let comments: Vec<String> = page
        .elements()
        .filter(|e| e.name == "annotation")
        .filter_map(|annotation| {
            let author = annotation
                .child("creator")
                .map(|c| c.text())
                .unwrap_or_default();
            let text: Vec<String> = annotation
                .elements()
                .filter(|e| e.name == "p")
                .map(|p| one_line(&p.text()))
                .filter(|t| !t.is_empty())
                .collect();
            (!text.is_empty()).then(|| ooxml::comment_line(&author, &text.join(" ")))
        })
        .collect();
    if !comments.is_empty() {
        out.push_str("### Comments\n\n");
        out.push_str(&comments.join("\n\n"));
        out.push_str("\n\n");
    }
    out
}

fn is_title(shape: &Element) -> bool {
    shape.attr("class") == Some("title")
}

/// The slide's title frame, looking into groups too.
fn find_title(container: &Element) -> Option<&Element> {
    container.elements().find_map(|shape| {
        if is_title(shape) {
            Some(shape)
        } else if shape.name == "g" {
            find_title(shape)
        } else {
            None
        }
    })
}

/// On a slide without a title placeholder, the topmost shape when it holds
/// one short line of text: slides converted from other programs often
/// carry their title in a plain text shape.
fn title_like_shape(page: &Element) -> Option<&Element> {
    const MAX_TITLE_CHARS: usize = 100;
    let topmost = page
        .elements()
        .filter(|e| !matches!(e.name.as_str(), "notes" | "annotation" | "forms"))
        .filter(|e| !e.text().trim().is_empty())
        .min_by_key(|e| position(e))?;
    let mut paragraphs = Vec::new();
    topmost.descendants("p", &mut paragraphs);
    let mut lists = Vec::new();
    topmost.descendants("list", &mut lists);
    let lines = paragraphs
        .iter()
        .filter(|p| !p.text().trim().is_empty())
        .count();
    let text = one_line(&topmost.text());
    (lines == 1 && lists.is_empty() && text.chars().count() <= MAX_TITLE_CHARS).then_some(topmost)
}

/// A shape's (y, x) in micrometres, for reading order; a group's is its
/// first member's.
fn position(shape: &Element) -> (i64, i64) {
    let coordinate = |name: &str| shape.attr(name).and_then(length).unwrap_or(0);
    if shape.name == "g" && shape.attr("y").is_none() {
        return shape.elements().next().map(position).unwrap_or((0, 0));
    }
    (coordinate("y"), coordinate("x"))
}

/// An ODF length (`4.233cm`, `12mm`, `1.5in`, `36pt`) in micrometres.
fn length(value: &str) -> Option<i64> {
    let value = value.trim();
    let split = value
        .find(|c: char| c.is_ascii_alphabetic())
        .unwrap_or(value.len());
    let (number, unit) = value.split_at(split);
    let number: f64 = number.trim().parse().ok()?;
    let micrometres_per_unit = match unit {
        "cm" => 10_000.0,
        "mm" => 1_000.0,
        "in" => 25_400.0,
        "pt" => 352.78,
        "pc" => 4_233.3,
        "px" => 264.58,
        _ => return None,
    };
    let micrometres = number * micrometres_per_unit;
    micrometres.is_finite().then_some(micrometres as i64)
}

#[cfg(test)]
mod tests {
    use super::length;

    #[test]
    fn lengths_in_any_unit() {
        assert_eq!(length("4.233cm"), Some(42_330));
        assert_eq!(length("1in"), Some(25_400));
        assert_eq!(length("-2mm"), Some(-2_000));
        assert_eq!(length("12"), None);
        assert_eq!(length("1e400cm"), None);
    }
}
