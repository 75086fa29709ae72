//! What calamine does not read from an xlsx package: cell comments and the
//! charts of chart sheets, found through the package's relationships.

use std::collections::HashMap;

use super::ooxml::{self, Element, Package};
use super::sheet_layout::CellComment;

/// The parts of an xlsx package's sheets, by sheet name.
pub struct SheetParts {
    parts: HashMap<String, String>,
}

impl SheetParts {
    pub fn read(package: &mut Package) -> Self {
        let mut parts = HashMap::new();
        let workbook = package
            .main_part("officeDocument")
            .unwrap_or_else(|| "xl/workbook.xml".to_owned());
        let relationships = package.relationships(&workbook);
        let Some(root) = package.part(&workbook).and_then(|x| Element::parse(&x)) else {
            return Self { parts };
        };
        let mut sheets = Vec::new();
        root.descendants("sheet", &mut sheets);
        for sheet in sheets {
            let (Some(name), Some(id)) = (sheet.attr("name"), sheet.attr("id")) else {
                continue;
            };
            if let Some(rel) = relationships.iter().find(|r| r.id == id && !r.external) {
                parts.insert(name.to_owned(), rel.target.clone());
            }
        }
        Self { parts }
    }

    /// The comments on a sheet's cells, in the order the package lists them.
    pub fn comments(&self, package: &mut Package, sheet: &str) -> Vec<CellComment> {
        let Some(part) = self.parts.get(sheet) else {
            return Vec::new();
        };
        let Some(comments_part) = package
            .relationships(part)
            .into_iter()
            .find(|r| r.is("comments") && !r.external)
        else {
            return Vec::new();
        };
        let Some(root) = package
            .part(&comments_part.target)
            .and_then(|x| Element::parse(&x))
        else {
            return Vec::new();
        };
        let authors: Vec<String> = root
            .child("authors")
            .map(|a| a.elements().map(Element::text).collect())
            .unwrap_or_default();
        let mut comments = Vec::new();
        root.descendants("comment", &mut comments);
        comments
            .iter()
            .filter_map(|comment| {
                let (row, col) = parse_reference(comment.attr("ref")?)?;
                let author = comment
                    .attr("authorId")
                    .and_then(|i| i.parse::<usize>().ok())
                    .and_then(|i| authors.get(i).cloned())
                    .unwrap_or_default();
                let text = comment.child("text").map(Element::text).unwrap_or_default();
                Some(CellComment {
                    row,
                    col,
                    author,
                    text,
                })
            })
            .collect()
    }

    /// A chart sheet's charts (title, kind and data), through its drawing.
    pub fn chart_sheet(&self, package: &mut Package, sheet: &str) -> String {
        let Some(part) = self.parts.get(sheet) else {
            return String::new();
        };
        let mut charts = Vec::new();
        for drawing in package.relationships(part) {
            if !drawing.is("drawing") || drawing.external {
                continue;
            }
            for chart in package.relationships(&drawing.target) {
                if chart.is("chart")
                    && !chart.external
                    && let Some(root) = package.part(&chart.target).and_then(|x| Element::parse(&x))
                {
                    charts.push(ooxml::chart_markdown(&root));
                }
            }
        }
        charts.retain(|c| !c.is_empty());
        charts.join("\n\n")
    }
}

/// (row, column) from 0 of a reference such as `B2` (absolute `$B$2` too).
fn parse_reference(reference: &str) -> Option<(u32, u32)> {
    let reference = reference.replace('$', "");
    let split = reference.find(|c: char| c.is_ascii_digit())?;
    let (letters, digits) = reference.split_at(split);
    if letters.is_empty() || letters.len() > 3 {
        return None;
    }
    let mut col: u32 = 0;
    for c in letters.chars() {
        if !c.is_ascii_alphabetic() {
            return None;
        }
        col = col * 26 + (c.to_ascii_uppercase() as u32 - 'A' as u32 + 1);
    }
    let row: u32 = digits.parse().ok()?;
    Some((row.checked_sub(1)?, col - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_parse_to_zero_based_positions() {
        assert_eq!(parse_reference("A1"), Some((0, 0)));
        assert_eq!(parse_reference("$AA$10"), Some((9, 26)));
        assert_eq!(parse_reference("b2"), Some((1, 1)));
        assert_eq!(parse_reference("A0"), None);
        assert_eq!(parse_reference("12"), None);
        assert_eq!(parse_reference("ABCD1"), None);
    }
}
