//! What calamine does not read from an xlsx package: the number formats of
//! cells, cell comments and the charts of sheets, found through the
//! package's relationships.

use std::collections::HashMap;
use std::io::BufRead;

use calamine::Dimensions;
use quick_xml::Reader;
use quick_xml::events::Event;

use super::number_format::{NumberFormat, builtin_code};
use super::ooxml::{self, Element, Package};
use super::sheet_layout::CellComment;

/// The parts of an xlsx package's sheets, by sheet name, and its cell styles.
pub struct SheetParts {
    workbook: String,
    parts: HashMap<String, String>,
    /// The number format of each cell style, by style index (`None` for
    /// General and the formats shown as plain values).
    number_formats: Vec<Option<NumberFormat>>,
}

impl SheetParts {
    pub fn read(package: &mut Package) -> Self {
        let mut parts = HashMap::new();
        let workbook = package
            .main_part("officeDocument")
            .unwrap_or_else(|| "xl/workbook.xml".to_owned());
        let relationships = package.relationships(&workbook);
        let number_formats = relationships
            .iter()
            .find(|r| r.is("styles") && !r.external)
            .and_then(|styles| package.part(&styles.target))
            .and_then(|xml| Element::parse(&xml))
            .map(|styles| number_formats(&styles))
            .unwrap_or_default();
        let Some(root) = package.part(&workbook).and_then(|x| Element::parse(&x)) else {
            return Self {
                workbook,
                parts,
                number_formats,
            };
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
        Self {
            workbook,
            parts,
            number_formats,
        }
    }

    /// The number formats of a sheet's cells, read alongside calamine's
    /// reading of the same sheet. The sheet is read a second time only when
    /// the workbook has a format worth rendering.
    pub fn cell_formats<'s>(
        &'s self,
        package: &'s mut Package,
        sheet: &str,
    ) -> CellFormats<'s, impl BufRead + 's> {
        let wanted = self.number_formats.iter().any(Option::is_some);
        let xml = self
            .parts
            .get(sheet)
            .filter(|_| wanted)
            .and_then(|part| package.part_reader(part))
            .map(|part| {
                let mut xml = Reader::from_reader(part);
                xml.config_mut().expand_empty_elements = true;
                xml
            });
        CellFormats {
            formats: &self.number_formats,
            xml,
            buf: Vec::new(),
        }
    }

    /// The comments on a sheet's cells, in the order the package lists them.
    /// A modern (threaded) comment is read from its own part, replies
    /// included: the legacy copy Excel writes beside it only holds a notice
    /// that the reader's Excel is too old, and the thread flattened (read,
    /// without the notice, when the part is gone).
    pub fn comments(&self, package: &mut Package, sheet: &str) -> Vec<CellComment> {
        let Some(part) = self.parts.get(sheet) else {
            return Vec::new();
        };
        let relationships = package.relationships(part);
        let threaded = relationships
            .iter()
            .find(|r| r.is("threadedComment") && !r.external)
            .and_then(|r| package.part(&r.target))
            .and_then(|x| Element::parse(&x))
            .map(|root| self.threaded_comments(package, &root))
            .unwrap_or_default();
        let Some(root) = relationships
            .iter()
            .find(|r| r.is("comments") && !r.external)
            .and_then(|r| package.part(&r.target))
            .and_then(|x| Element::parse(&x))
        else {
            return threaded;
        };
        let authors: Vec<String> = root
            .child("authors")
            .map(|a| a.elements().map(Element::text).collect())
            .unwrap_or_default();
        let mut legacy = Vec::new();
        root.descendants("comment", &mut legacy);
        let mut comments: Vec<CellComment> = Vec::new();
        for comment in legacy {
            let Some((row, col)) = comment.attr("ref").and_then(parse_reference) else {
                continue;
            };
            let thread: Vec<&CellComment> = threaded
                .iter()
                .filter(|c| (c.row, c.col) == (row, col))
                .collect();
            let author = comment
                .attr("authorId")
                .and_then(|i| i.parse::<usize>().ok())
                .and_then(|i| authors.get(i).cloned())
                .unwrap_or_default();
            let text = comment.child("text").map(Element::text).unwrap_or_default();
            if !thread.is_empty() {
                comments.extend(thread.into_iter().cloned());
            } else if author.starts_with("tc=") || is_legacy_copy(&text) {
                // A copy that outlived its threaded comment (a round trip
                // through another program drops that part) keeps its thread.
                let author = if author.starts_with("tc=") {
                    String::new()
                } else {
                    author
                };
                comments.push(CellComment {
                    row,
                    col,
                    author,
                    text: thread_in_legacy_copy(&text).to_owned(),
                });
            } else {
                comments.push(CellComment {
                    row,
                    col,
                    author,
                    text,
                });
            }
        }
        for comment in threaded {
            if !comments
                .iter()
                .any(|c| (c.row, c.col) == (comment.row, comment.col))
            {
                comments.push(comment);
            }
        }
        comments
    }

    /// The comments of a threaded-comments part, each reply after what it
    /// answers, its author the person's display name and the comment's time.
    fn threaded_comments(&self, package: &mut Package, root: &Element) -> Vec<CellComment> {
        let people = self.people(package);
        let mut threaded = Vec::new();
        root.descendants("threadedComment", &mut threaded);
        threaded
            .iter()
            .filter_map(|comment| {
                let (row, col) = parse_reference(comment.attr("ref")?)?;
                let mut author = comment
                    .attr("personId")
                    .and_then(|id| people.get(id).cloned())
                    .unwrap_or_default();
                if let Some(time) = comment.attr("dT") {
                    let time = time.split('.').next().unwrap_or(time);
                    author = if author.is_empty() {
                        time.to_owned()
                    } else {
                        format!("{author}, {time}")
                    };
                }
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

    /// The display names of the workbook's people (threaded comments' authors), by id.
    fn people(&self, package: &mut Package) -> HashMap<String, String> {
        let Some(root) = package
            .relationships(&self.workbook)
            .iter()
            .find(|r| r.is("person") && !r.external)
            .and_then(|r| package.part(&r.target))
            .and_then(|x| Element::parse(&x))
        else {
            return HashMap::new();
        };
        let mut people = Vec::new();
        root.descendants("person", &mut people);
        people
            .iter()
            .filter_map(|p| Some((p.attr("id")?.to_owned(), p.attr("displayName")?.to_owned())))
            .collect()
    }

    /// A sheet's chart parts, through its drawing: a chart sheet's chart, or
    /// the charts anchored on a worksheet.
    pub fn charts(&self, package: &mut Package, sheet: &str) -> Vec<Element> {
        let Some(part) = self.parts.get(sheet) else {
            return Vec::new();
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
                    charts.push(root);
                }
            }
        }
        charts
    }
}

/// The number format of each cell of a sheet, in the order calamine reads
/// them: one per `<c>` element, empty ones included.
pub struct CellFormats<'s, R> {
    formats: &'s [Option<NumberFormat>],
    xml: Option<Reader<R>>,
    buf: Vec<u8>,
}

impl<'s, R: BufRead> CellFormats<'s, R> {
    /// The number format of the next cell, if it has one worth rendering.
    pub fn next_cell(&mut self) -> Option<&'s NumberFormat> {
        let xml = self.xml.as_mut()?;
        loop {
            self.buf.clear();
            match xml.read_event_into(&mut self.buf) {
                Ok(Event::Start(cell)) if cell.local_name().as_ref() == b"c" => {
                    let style = ooxml::attr(&cell, b"s")
                        .and_then(|s| s.parse::<usize>().ok())
                        .unwrap_or(0);
                    return self.formats.get(style)?.as_ref();
                }
                Ok(Event::Eof) | Err(_) => {
                    self.xml = None;
                    return None;
                }
                _ => {}
            }
        }
    }
}

/// The number format of each cell style (`cellXfs`): the workbook's own
/// format (`numFmts`) of that id, else Excel's built-in one.
fn number_formats(styles: &Element) -> Vec<Option<NumberFormat>> {
    let custom: HashMap<&str, &str> = styles
        .child("numFmts")
        .map(|formats| {
            formats
                .elements()
                .filter_map(|f| Some((f.attr("numFmtId")?, f.attr("formatCode")?)))
                .collect()
        })
        .unwrap_or_default();
    let Some(styles) = styles.child("cellXfs") else {
        return Vec::new();
    };
    styles
        .elements()
        .filter(|xf| xf.name == "xf")
        .map(|xf| {
            let id = xf.attr("numFmtId")?;
            let code = custom
                .get(id)
                .copied()
                .or_else(|| builtin_code(id.parse().ok()?))?;
            NumberFormat::parse(code)
        })
        .collect()
}

/// The sheet and the cells a chart's data reference names:
/// `'Sales 2024'!$B$2:$B$5`, `Data!$A$1`.
pub fn parse_range(reference: &str) -> Option<(String, Dimensions)> {
    let (sheet, cells) = reference.rsplit_once('!')?;
    let sheet = match sheet.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')) {
        Some(quoted) => quoted.replace("''", "'"),
        None => sheet.to_owned(),
    };
    let (first, last) = cells.split_once(':').unwrap_or((cells, cells));
    let (start, end) = (parse_reference(first)?, parse_reference(last)?);
    (start.0 <= end.0 && start.1 <= end.1).then(|| (sheet, Dimensions::new(start, end)))
}

/// Whether a legacy comment is Excel's copy of a threaded comment, by the
/// notice it opens with.
fn is_legacy_copy(text: &str) -> bool {
    text.trim_start().starts_with("[Threaded comment]") && text.contains("Comment:")
}

/// The thread in the legacy copy of a threaded comment, without the notice
/// before it: what follows its "Comment:" line.
fn thread_in_legacy_copy(text: &str) -> &str {
    text.split_once("Comment:")
        .map_or(text, |(_, thread)| thread)
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
    fn chart_ranges_name_a_sheet_and_its_cells() {
        assert_eq!(
            parse_range("'Bob''s data'!$B$2:$B$5"),
            Some(("Bob's data".into(), Dimensions::new((1, 1), (4, 1))))
        );
        assert_eq!(
            parse_range("Data!A1"),
            Some(("Data".into(), Dimensions::new((0, 0), (0, 0))))
        );
        assert_eq!(parse_range("$B$2:$B$5"), None);
        assert_eq!(parse_range("Data!B5:B2"), None);
    }

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
