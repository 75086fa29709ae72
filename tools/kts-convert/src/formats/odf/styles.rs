//! What the document's styles say about its paragraphs, spans and lists:
//! the named styles of `styles.xml` and the automatic styles of
//! `content.xml`, which usually only point at a named parent.

use std::collections::HashMap;

use super::Element;

#[derive(Default)]
struct Style {
    name: String,
    display_name: String,
    parent: Option<String>,
    bold: Option<bool>,
    italic: Option<bool>,
}

/// Styles by name, parents resolved on demand.
#[derive(Default)]
pub struct Styles {
    styles: HashMap<String, Style>,
    /// For each list style, whether each level (from 0) is numbered.
    lists: HashMap<String, Vec<bool>>,
}

/// Parent chains longer than this are cut (a style naming itself as an
/// ancestor would otherwise loop).
const MAX_CHAIN: usize = 16;

impl Styles {
    pub fn new(shared: Option<&Element>, content: &Element) -> Self {
        let mut styles = Styles::default();
        for root in shared.into_iter().chain([content]) {
            for section in root.elements().filter(|e| {
                matches!(
                    e.name.as_str(),
                    "styles" | "automatic-styles" | "master-styles"
                )
            }) {
                for element in section.elements() {
                    styles.add(element);
                }
            }
        }
        styles
    }

    fn add(&mut self, element: &Element) {
        let Some(name) = element.attr("name") else {
            return;
        };
        match element.name.as_str() {
            "style" => {
                let text = element.child("text-properties");
                let weight = text.and_then(|t| t.attr("font-weight"));
                let posture = text.and_then(|t| t.attr("font-style"));
                self.styles.insert(
                    name.to_owned(),
                    Style {
                        name: name.to_owned(),
                        display_name: element.attr("display-name").unwrap_or(name).to_owned(),
                        parent: element.attr("parent-style-name").map(str::to_owned),
                        bold: weight
                            .map(|w| w == "bold" || w.parse::<u32>().is_ok_and(|n| n >= 600)),
                        italic: posture.map(|p| p == "italic" || p == "oblique"),
                    },
                );
            }
            "list-style" => {
                let mut levels = Vec::new();
                for level in element.elements() {
                    let index = level
                        .attr("level")
                        .and_then(|l| l.parse::<usize>().ok())
                        .unwrap_or(1)
                        .clamp(1, 10)
                        - 1;
                    if levels.len() <= index {
                        levels.resize(index + 1, false);
                    }
                    levels[index] = level.name == "list-level-style-number"
                        && level.attr("num-format").is_some_and(|f| !f.is_empty());
                }
                self.lists.insert(name.to_owned(), levels);
            }
            _ => {}
        }
    }

    /// The style and its ancestors, nearest first.
    fn chain<'s>(&'s self, name: &str) -> impl Iterator<Item = &'s Style> {
        let mut next = self.styles.get(name);
        std::iter::from_fn(move || {
            let style = next?;
            next = style.parent.as_deref().and_then(|p| self.styles.get(p));
            Some(style)
        })
        .take(MAX_CHAIN)
    }

    /// The heading level a paragraph style gives (Title is 1, Heading N is N).
    pub fn heading_level(&self, name: &str) -> Option<usize> {
        self.chain(name).find_map(|style| {
            [&style.name, &style.display_name]
                .into_iter()
                .find_map(|n| {
                    let n = n.replace("_20_", " ");
                    if n == "Title" {
                        return Some(1);
                    }
                    n.strip_prefix("Heading ")
                        .and_then(|level| level.parse::<usize>().ok())
                        .filter(|level| (1..=10).contains(level))
                })
        })
    }

    /// Whether a paragraph style is for code (LibreOffice's Preformatted
    /// Text, or a style based on it).
    pub fn preformatted(&self, name: &str) -> bool {
        self.chain(name).any(|style| {
            [&style.name, &style.display_name]
                .iter()
                .any(|n| n.replace("_20_", " ") == "Preformatted Text")
        })
    }

    /// Whether a text style is bold and whether it is italic.
    pub fn emphasis(&self, name: &str) -> (bool, bool) {
        let bold = self.chain(name).find_map(|s| s.bold).unwrap_or(false);
        let italic = self.chain(name).find_map(|s| s.italic).unwrap_or(false);
        (bold, italic)
    }

    /// Whether level `level` (from 0) of a list style is numbered.
    pub fn numbered(&self, list_style: &str, level: usize) -> bool {
        self.lists
            .get(list_style)
            .and_then(|levels| levels.get(level))
            .copied()
            .unwrap_or(false)
    }
}
