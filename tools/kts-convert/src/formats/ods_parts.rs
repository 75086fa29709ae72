//! What calamine does not read from an ods package: the text a number's
//! cell shows (`25%`, `1.234,50 €`), which the file stores beside the value,
//! and the comments on cells (`office:annotation`). `content.xml` is read as
//! a stream, its cells placed as calamine places them: rows and columns
//! counted with their repeats.

use std::collections::HashMap;
use std::io::BufRead;

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

use super::one_line;
use super::ooxml::{self, Package};
use super::sheet_layout::CellComment;

/// What one sheet's cells show beyond calamine's values.
#[derive(Debug, Default)]
pub struct SheetExtras {
    /// The text a number's cell shows, by (row, column) from 0.
    pub shown: HashMap<(u32, u32), String>,
    pub comments: Vec<CellComment>,
}

/// Each sheet's extras, by sheet name. At most `max_cells` shown texts are
/// kept in all (a repeated row repeats its cells).
pub fn read(package: &mut Package, max_cells: usize) -> HashMap<String, SheetExtras> {
    let Some(content) = package.part_reader("content.xml") else {
        return HashMap::new();
    };
    let mut walker = Walker {
        cells_left: max_cells,
        ..Walker::default()
    };
    walker.walk(content);
    walker.sheets
}

/// The state of the walk through `content.xml`.
#[derive(Default)]
struct Walker {
    sheets: HashMap<String, SheetExtras>,
    sheet: Option<(String, SheetExtras)>,
    row: u32,
    row_repeat: u32,
    col: u32,
    /// The current row's numbers with their shown text: (column, repeat, text).
    row_cells: Vec<(u32, u32, String)>,
    cell: Option<Cell>,
    cells_left: usize,
}

/// The cell being read.
struct Cell {
    repeat: u32,
    number: bool,
    /// How deep the walk is inside the cell (1: its direct children).
    depth: usize,
    paragraphs: Vec<String>,
    annotation: Option<Annotation>,
}

/// The comment being read in a cell.
struct Annotation {
    /// The depth of the `office:annotation` element in its cell.
    depth: usize,
    author: String,
    paragraphs: Vec<String>,
    /// Where its text goes: the author's name, nowhere (a date), or the comment.
    field: Field,
}

#[derive(Clone, Copy, PartialEq)]
enum Field {
    Author,
    Date,
    Comment,
}

impl Walker {
    fn walk(&mut self, content: impl BufRead) {
        let mut xml = Reader::from_reader(content);
        xml.config_mut().expand_empty_elements = true;
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match xml.read_event_into(&mut buf) {
                Ok(Event::Start(e)) => self.start(&e),
                Ok(Event::End(e)) => self.end(e.local_name().as_ref()),
                Ok(Event::Text(t)) => self.text(&t.decode().unwrap_or_default()),
                Ok(Event::GeneralRef(r)) => self.text(&ooxml::reference_text(&r)),
                Ok(Event::Eof) | Err(_) => break,
                _ => {}
            }
        }
    }

    fn start(&mut self, e: &BytesStart) {
        let name = e.local_name();
        if let Some(cell) = &mut self.cell {
            cell.depth += 1;
            if let Some(annotation) = &mut cell.annotation {
                annotation.start(name.as_ref(), cell.depth);
            }
            match name.as_ref() {
                b"annotation" if cell.annotation.is_none() => {
                    cell.annotation = Some(Annotation {
                        depth: cell.depth,
                        author: String::new(),
                        paragraphs: Vec::new(),
                        field: Field::Comment,
                    });
                }
                b"p" if cell.depth == 1 => cell.paragraphs.push(String::new()),
                b"s" => {
                    let count = count_attr(e, b"c").min(100) as usize;
                    self.text(&" ".repeat(count));
                }
                b"tab" | b"line-break" => self.text(" "),
                _ => {}
            }
            return;
        }
        match name.as_ref() {
            b"table" if self.sheet.is_none() => {
                if let Some(name) = ooxml::attr(e, b"name") {
                    self.sheet = Some((name, SheetExtras::default()));
                    self.row = 0;
                }
            }
            b"table-row" => {
                self.row_repeat = count_attr(e, b"number-rows-repeated");
                self.col = 0;
            }
            b"table-cell" | b"covered-table-cell" => {
                let number = ooxml::attr(e, b"value-type")
                    .is_some_and(|t| matches!(t.as_str(), "float" | "percentage" | "currency"));
                self.cell = Some(Cell {
                    repeat: count_attr(e, b"number-columns-repeated"),
                    number,
                    depth: 0,
                    paragraphs: Vec::new(),
                    annotation: None,
                });
            }
            _ => {}
        }
    }

    fn end(&mut self, name: &[u8]) {
        if let Some(cell) = &mut self.cell {
            if cell.depth > 0 {
                if let Some(annotation) = &mut cell.annotation {
                    if annotation.depth == cell.depth {
                        let comment = cell.annotation.take().and_then(Annotation::finish);
                        if let (Some((author, text)), Some((_, extras))) =
                            (comment, &mut self.sheet)
                        {
                            extras.comments.push(CellComment {
                                row: self.row,
                                col: self.col,
                                author,
                                text,
                            });
                        }
                    } else if annotation.depth + 1 == cell.depth {
                        annotation.field = Field::Comment;
                    }
                }
                cell.depth -= 1;
                return;
            }
            let text = one_line(&cell.paragraphs.join(" "));
            if cell.number && !text.is_empty() {
                self.row_cells.push((self.col, cell.repeat, text));
            }
            self.col = self.col.saturating_add(cell.repeat);
            self.cell = None;
            return;
        }
        match name {
            b"table-row" => self.finish_row(),
            b"table" => {
                if let Some((name, extras)) = self.sheet.take() {
                    self.sheets.entry(name).or_insert(extras);
                }
            }
            _ => {}
        }
    }

    fn text(&mut self, text: &str) {
        let Some(cell) = &mut self.cell else {
            return;
        };
        match &mut cell.annotation {
            Some(annotation) => annotation.text(text),
            None => {
                if let Some(paragraph) = cell.paragraphs.last_mut() {
                    paragraph.push_str(text);
                }
            }
        }
    }

    /// Places the row's shown texts in every row and column it repeats over.
    fn finish_row(&mut self) {
        let cells = std::mem::take(&mut self.row_cells);
        let rows = self.row..self.row.saturating_add(self.row_repeat);
        self.row = rows.end;
        let Some((_, extras)) = &mut self.sheet else {
            return;
        };
        for (col, repeat, text) in cells {
            for row in rows.clone() {
                for col in col..col.saturating_add(repeat) {
                    if self.cells_left == 0 {
                        return;
                    }
                    self.cells_left -= 1;
                    extras.shown.insert((row, col), text.clone());
                }
            }
        }
    }
}

impl Annotation {
    /// An element opens at `depth` of the cell, inside the annotation.
    fn start(&mut self, name: &[u8], depth: usize) {
        if depth == self.depth + 1 {
            self.field = match name {
                b"creator" => Field::Author,
                b"date" | b"date-string" => Field::Date,
                _ => Field::Comment,
            };
        }
        if name == b"p" {
            self.paragraphs.push(String::new());
        }
    }

    fn text(&mut self, text: &str) {
        match self.field {
            Field::Author => self.author.push_str(text),
            Field::Date => {}
            Field::Comment => match self.paragraphs.last_mut() {
                Some(paragraph) => paragraph.push_str(text),
                None => self.paragraphs.push(text.to_owned()),
            },
        }
    }

    /// The author and the text, when the comment says something.
    fn finish(self) -> Option<(String, String)> {
        let text = one_line(&self.paragraphs.join(" "));
        (!text.is_empty()).then(|| (one_line(&self.author), text))
    }
}

/// A repeat count attribute (`number-rows-repeated`, `c`), 1 when absent.
fn count_attr(e: &BytesStart, name: &[u8]) -> u32 {
    ooxml::attr(e, name)
        .and_then(|n| n.parse::<u32>().ok())
        .unwrap_or(1)
        .max(1)
}
