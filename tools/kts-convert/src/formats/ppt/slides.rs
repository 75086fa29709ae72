//! The slides' text. The `DocumentContainer`'s `SlideListWithText` lists
//! the slides in order, each a `SlidePersistAtom` and the text of its
//! placeholders; the rest of a slide's text sits in its drawing's text boxes
//! (`OfficeArtClientTextbox`), which point into the list where the text is
//! there, and in its tables (groups of cell shapes placed by their
//! anchors). The notes pages have a list of their own, whose entries name
//! their slide.

use std::collections::{HashMap, HashSet};

use super::super::ConvertError;
use super::persist::Persist;
use super::records::{self, Record};
use super::text::{self, TextBlock};

/// `SlideListWithText` instances: the slides', the notes pages'.
const SLIDE_LIST: u16 = 0;
const NOTES_LIST: u16 = 2;
/// Drawings nest shapes in groups; deeper ones are not read.
const MAX_DEPTH: usize = 32;
/// Records read in all the slides' drawings, at most: a damaged file may
/// point many slides at one large drawing.
const MAX_RECORDS: usize = 1 << 20;
/// Cells a table may have (rows times columns).
const MAX_TABLE_CELLS: usize = 1 << 16;
/// `SlidePersistAtom` field: the slide's id.
const SLIDE_ID_AT: usize = 12;

#[derive(Debug, Default)]
pub struct Slide {
    pub items: Vec<Item>,
    pub notes: Vec<Item>,
}

#[derive(Debug)]
pub enum Item {
    Text(TextBlock),
    /// A table's rows of cells; a merged cell's text fills every cell it spans.
    Table(Vec<Vec<String>>),
}

/// What a drawing holds that has text.
enum Shape<'a> {
    Textbox(Record<'a>),
    Table(Vec<Cell>),
}

/// A table's cell: its anchor (left, top, right, bottom) and text.
type Cell = ([i32; 4], String);

pub struct Reader<'a> {
    stream: &'a [u8],
    persist: Option<Persist>,
    records_read: usize,
    /// Characters the slides may still take (see [`Reader::spend_text`]).
    text_left: usize,
}

/// A slide's entry in a `SlideListWithText`: its persist id, its id, its records.
struct Entry<'a> {
    persist_id: u32,
    slide_id: u32,
    records: Vec<Record<'a>>,
}

impl<'a> Reader<'a> {
    pub fn new(stream: &'a [u8], persist: Option<Persist>) -> Self {
        Self {
            stream,
            persist,
            records_read: 0,
            text_left: stream.len(),
        }
    }

    pub fn slides(&mut self) -> Result<Vec<Slide>, ConvertError> {
        let document = self.document()?;
        let lists = document.children()?;
        let list = |instance| {
            lists
                .iter()
                .find(|r| r.kind == records::SLIDE_LIST_WITH_TEXT && r.instance == instance)
                .map(|r| r.children())
                .transpose()
                .map(Option::unwrap_or_default)
        };
        let mut notes = HashMap::new();
        for entry in entries(list(NOTES_LIST)?) {
            let (items, container) = self.entry_text(&entry, records::NOTES)?;
            let slide_id = container
                .map(|notes| notes.child(records::NOTES_ATOM))
                .transpose()?
                .flatten()
                .and_then(|atom| atom.u32(0));
            if let Some(slide_id) = slide_id {
                notes.insert(slide_id, items);
            }
        }
        entries(list(SLIDE_LIST)?)
            .iter()
            .map(|entry| {
                let (items, _) = self.entry_text(entry, records::SLIDE)?;
                Ok(Slide {
                    items,
                    notes: notes.remove(&entry.slide_id).unwrap_or_default(),
                })
            })
            .collect()
    }

    /// The live `DocumentContainer`: the one the persist directory names,
    /// else the first in the stream.
    fn document(&self) -> Result<Record<'a>, ConvertError> {
        let missing = || ConvertError::corrupt("the presentation has no document record");
        let document = match &self.persist {
            Some(persist) => {
                let at = persist.offset(persist.document).ok_or_else(missing)?;
                Record::at(self.stream, at)?
            }
            None => first_document(self.stream)?.ok_or_else(missing)?,
        };
        match document.kind {
            records::DOCUMENT => Ok(document),
            _ => Err(missing()),
        }
    }

    /// A slide's (or notes page's) text: its drawing's text boxes and
    /// tables in order, the list's text where a box points to it, then the
    /// list's text no box points to. Also the slide's container, when it
    /// can be found.
    fn entry_text(
        &mut self,
        entry: &Entry<'a>,
        kind: u16,
    ) -> Result<(Vec<Item>, Option<Record<'a>>), ConvertError> {
        let listed = text::blocks(&entry.records);
        let container = self
            .persist
            .as_ref()
            .and_then(|persist| persist.offset(entry.persist_id))
            .and_then(|at| Record::at(self.stream, at).ok())
            .filter(|r| r.kind == kind);
        let mut used = vec![false; listed.len()];
        let known: HashSet<&TextBlock> = listed.iter().collect();
        let mut items = Vec::new();
        let shapes = match container {
            Some(container) => self.shapes(container)?,
            None => Vec::new(),
        };
        for shape in shapes {
            let textbox = match shape {
                Shape::Table(cells) => {
                    items.push(Item::Table(table(&cells, self.text_left)?));
                    continue;
                }
                Shape::Textbox(textbox) => textbox,
            };
            let children = textbox.children()?;
            let reference = children
                .iter()
                .find(|r| r.kind == records::OUTLINE_TEXT_REF)
                .and_then(|r| r.u32(0));
            match reference {
                Some(index) => {
                    let index = index as usize;
                    if let Some(block) = listed.get(index).filter(|_| !used[index]) {
                        used[index] = true;
                        items.push(Item::Text(block.clone()));
                    }
                }
                // A box may repeat the list's text rather than point to it.
                None => items.extend(
                    text::blocks(&children)
                        .into_iter()
                        .filter(|block| !known.contains(block))
                        .map(Item::Text),
                ),
            }
        }
        let unused = listed
            .into_iter()
            .zip(used)
            .filter_map(|(block, used)| (!used).then_some(Item::Text(block)));
        items.extend(unused);
        self.spend_text(&items)?;
        Ok((items, container))
    }

    /// The text boxes and tables of a slide's drawing, in drawing order.
    fn shapes(&mut self, container: Record<'a>) -> Result<Vec<Shape<'a>>, ConvertError> {
        let mut found = Vec::new();
        let mut stack = vec![(container, 0)];
        while let Some((record, depth)) = stack.pop() {
            if record.kind == records::CLIENT_TEXTBOX {
                self.count_records(record.children()?.len())?;
                found.push(Shape::Textbox(record));
                continue;
            }
            if depth == MAX_DEPTH {
                continue;
            }
            let children = record.children()?;
            self.count_records(children.len())?;
            if record.kind == records::GROUP && is_table(&children)? {
                found.push(Shape::Table(self.cells(&children[1..])?));
                continue;
            }
            stack.extend(children.into_iter().rev().map(|child| (child, depth + 1)));
        }
        Ok(found)
    }

    /// A table's cells: the shapes of its group that are not lines (its
    /// borders), with their text.
    fn cells(&mut self, shapes: &[Record<'a>]) -> Result<Vec<Cell>, ConvertError> {
        const LINE: u16 = 20;
        let mut cells = Vec::new();
        for shape in shapes.iter().filter(|r| r.kind == records::SHAPE) {
            let children = shape.children()?;
            self.count_records(children.len())?;
            let line = children
                .iter()
                .any(|r| r.kind == records::SHAPE_ATOM && r.instance == LINE);
            let anchor = children
                .iter()
                .find(|r| r.kind == records::CHILD_ANCHOR)
                .and_then(|r| {
                    let at = |i: usize| r.u32(4 * i).map(|v| v as i32);
                    Some([at(0)?, at(1)?, at(2)?, at(3)?])
                });
            let (false, Some(anchor)) = (line, anchor) else {
                continue;
            };
            let mut text = Vec::new();
            if let Some(textbox) = children.iter().find(|r| r.kind == records::CLIENT_TEXTBOX) {
                let records = textbox.children()?;
                self.count_records(records.len())?;
                text.extend(text::blocks(&records).iter().map(TextBlock::one_line));
            }
            cells.push((anchor, text.join(" ")));
        }
        Ok(cells)
    }

    fn count_records(&mut self, count: usize) -> Result<(), ConvertError> {
        self.records_read += count;
        if self.records_read > MAX_RECORDS {
            return Err(ConvertError::corrupt(format!(
                "the presentation's drawings hold more than {MAX_RECORDS} records"
            )));
        }
        Ok(())
    }

    /// Takes the blocks' characters from what is left to read: a sound file
    /// holds each text once, a damaged one may point many slides at one.
    fn spend_text(&mut self, items: &[Item]) -> Result<(), ConvertError> {
        let texts_chars = |texts: &mut dyn Iterator<Item = &String>| {
            texts.map(|text| text.chars().count() + 1).sum::<usize>()
        };
        let chars: usize = items
            .iter()
            .map(|item| match item {
                Item::Text(block) => texts_chars(&mut block.paragraphs.iter().map(|p| &p.text)),
                Item::Table(rows) => texts_chars(&mut rows.iter().flatten()),
            })
            .sum();
        self.text_left = self.text_left.checked_sub(chars).ok_or_else(|| {
            ConvertError::corrupt("the presentation's slides repeat more text than it holds")
        })?;
        Ok(())
    }
}

/// The entries of a `SlideListWithText`: each `SlidePersistAtom` opens one.
fn entries(list: Vec<Record<'_>>) -> Vec<Entry<'_>> {
    let mut entries: Vec<Entry> = Vec::new();
    for record in list {
        if record.kind == records::SLIDE_PERSIST {
            entries.push(Entry {
                persist_id: record.u32(0).unwrap_or(0),
                slide_id: record.u32(SLIDE_ID_AT).unwrap_or(0),
                records: Vec::new(),
            });
        } else if let Some(entry) = entries.last_mut() {
            entry.records.push(record);
        }
    }
    entries
}

/// The first `DocumentContainer` among the stream's top-level records.
fn first_document(stream: &[u8]) -> Result<Option<Record<'_>>, ConvertError> {
    let mut at = 0;
    while at < stream.len() {
        let record = Record::at(stream, at)?;
        if record.kind == records::DOCUMENT {
            return Ok(Some(record));
        }
        at += 8 + record.body.len();
    }
    Ok(None)
}

/// Whether a group is a table: its own shape (its first) has table
/// properties (the OfficeArt property `tableProperties`, 0x039F).
fn is_table(group: &[Record]) -> Result<bool, ConvertError> {
    const TABLE_PROPERTIES: u16 = 0x039F;
    let Some(own) = group.first().filter(|r| r.kind == records::SHAPE) else {
        return Ok(false);
    };
    Ok(own.children()?.iter().any(|r| {
        matches!(r.kind, records::PROPERTIES | records::TERTIARY_PROPERTIES)
            && r.body
                .chunks_exact(6)
                .take(usize::from(r.instance))
                .any(|entry| u16::from_le_bytes([entry[0], entry[1]]) & 0x3FFF == TABLE_PROPERTIES)
    }))
}

/// The rows of a table whose cells are placed by their anchors: a row per
/// distinct top, a column per distinct left. Its text, merged cells'
/// repeated, may not pass `text_left` characters.
fn table(cells: &[Cell], mut text_left: usize) -> Result<Vec<Vec<String>>, ConvertError> {
    let edges = |side: usize| {
        let mut edges: Vec<i32> = cells.iter().map(|(anchor, _)| anchor[side]).collect();
        edges.sort_unstable();
        edges.dedup();
        edges
    };
    let (lefts, tops) = (edges(0), edges(1));
    if lefts.len().saturating_mul(tops.len()) > MAX_TABLE_CELLS {
        return Err(ConvertError::corrupt(format!(
            "a table of the presentation has more than {MAX_TABLE_CELLS} cells"
        )));
    }
    let mut rows = vec![vec![String::new(); lefts.len()]; tops.len()];
    for ([left, top, right, bottom], text) in cells {
        // The rows (columns) whose edge lies in [start, end); the cell's own at least.
        let spanned = |edges: &[i32], start: i32, end: i32| {
            let first = edges.partition_point(|&edge| edge < start);
            first..edges.partition_point(|&edge| edge < end.max(start.saturating_add(1)))
        };
        for row in spanned(&tops, *top, *bottom) {
            for column in spanned(&lefts, *left, *right) {
                text_left = text_left.checked_sub(text.len() + 1).ok_or_else(|| {
                    ConvertError::corrupt(
                        "a table of the presentation repeats more text than it holds",
                    )
                })?;
                rows[row][column] = text.clone();
            }
        }
    }
    Ok(rows)
}
