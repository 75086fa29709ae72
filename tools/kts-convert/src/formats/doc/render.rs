//! Paragraphs to Markdown: headings by style, list items by list, table
//! cells and rows into Markdown tables.

use std::collections::HashMap;

use super::lists::{Lists, Marker};
use super::story::{End, Paragraph};
use super::styles::Styles;
use crate::formats::{one_line, table};

const LEVELS: usize = 9;

enum Block {
    Text(String),
    ListItem(String),
}

pub struct Writer<'a> {
    styles: &'a Styles,
    lists: &'a Lists,
    blocks: Vec<Block>,
    /// The text of the Title-styled paragraph, if any.
    pub title: Option<String>,
    cell: String,
    row: Vec<String>,
    rows: Vec<Vec<String>>,
    /// The number of the last item at each level of each list (by `lsid`).
    counters: HashMap<u32, [Option<u32>; LEVELS]>,
}

impl<'a> Writer<'a> {
    pub fn new(styles: &'a Styles, lists: &'a Lists) -> Self {
        Self {
            styles,
            lists,
            blocks: Vec::new(),
            title: None,
            cell: String::new(),
            row: Vec::new(),
            rows: Vec::new(),
            counters: HashMap::new(),
        }
    }

    pub fn paragraph(&mut self, p: &Paragraph) {
        if p.props.depth > 0 {
            return self.table_paragraph(p);
        }
        self.end_table();
        let text = p
            .text
            .lines()
            .map(one_line)
            .filter(|line| !line.is_empty())
            .collect::<Vec<_>>()
            .join("\n");
        if text.is_empty() {
            return;
        }
        let kind = self.styles.kind(p.props.istd);
        let heading = match p.props.outline.filter(|&level| level < 9) {
            Some(level) => Some(usize::from(level) + 1),
            None => kind.heading,
        };
        if let Some(level) = heading {
            return self.push_text(format!("{} {}", "#".repeat(level.min(6)), one_line(&text)));
        }
        if kind.title {
            self.title.get_or_insert_with(|| one_line(&text));
            return self.push_text(format!("# {}", one_line(&text)));
        }
        let list = match p.props.list {
            Some(ilfo) => Some((ilfo, p.props.level.unwrap_or(0))),
            None => kind
                .list
                .map(|(ilfo, level)| (ilfo, p.props.level.unwrap_or(level))),
        };
        match list.filter(|&(ilfo, _)| ilfo > 0) {
            Some((ilfo, level)) => self.list_item(ilfo, level, &text),
            None => self.push_text(text),
        }
    }

    /// Adds a block of text, after the last block.
    fn push_text(&mut self, text: String) {
        self.blocks.push(Block::Text(text));
    }

    fn list_item(&mut self, ilfo: u16, level: u8, text: &str) {
        let level = usize::from(level).min(LEVELS - 1);
        let counters = self
            .counters
            .entry(self.lists.list_id(ilfo))
            .or_insert([None; LEVELS]);
        counters[level + 1..].fill(None);
        let indent = "    ".repeat(level);
        let item = match self.lists.marker(ilfo, level as u8) {
            Marker::None => return self.push_text(text.to_owned()),
            Marker::Bullet => format!("{indent}- {}", one_line(text)),
            Marker::Number(start) => {
                let number = counters[level].map_or(start, |n| n.saturating_add(1));
                counters[level] = Some(number);
                format!("{indent}{number}. {}", one_line(text))
            }
        };
        self.blocks.push(Block::ListItem(item));
    }

    /// A paragraph in a table: a cell's text, the end of a cell, or the
    /// mark that ends a row. A table nested in a cell is read as that
    /// cell's text.
    fn table_paragraph(&mut self, p: &Paragraph) {
        if p.props.depth == 1 && p.props.row_end {
            self.end_cell_if_open();
            let row = std::mem::take(&mut self.row);
            if row.iter().any(|cell| !cell.is_empty()) {
                self.rows.push(row);
            }
            return;
        }
        self.cell.push(' ');
        self.cell.push_str(&p.text);
        if p.props.depth == 1 && p.end == End::Cell {
            self.row.push(one_line(&std::mem::take(&mut self.cell)));
        }
    }

    fn end_cell_if_open(&mut self) {
        if !self.cell.trim().is_empty() {
            self.row.push(one_line(&std::mem::take(&mut self.cell)));
        }
        self.cell.clear();
    }

    /// Writes the table being read, if any.
    pub fn end_table(&mut self) {
        self.end_cell_if_open();
        if self.row.iter().any(|cell| !cell.is_empty()) {
            self.rows.push(std::mem::take(&mut self.row));
        }
        self.row.clear();
        let rows = std::mem::take(&mut self.rows);
        let table = table::markdown_table(&rows);
        if !table.is_empty() {
            self.push_text(table.trim_end().to_owned());
        }
    }

    /// The Markdown: blocks apart by a blank line, list items by a line break.
    pub fn finish(mut self) -> (String, Option<String>) {
        self.end_table();
        let mut markdown = String::new();
        let mut previous_item = false;
        for block in &self.blocks {
            let (text, item) = match block {
                Block::Text(text) => (text, false),
                Block::ListItem(text) => (text, true),
            };
            if !markdown.is_empty() {
                markdown.push_str(if item && previous_item { "\n" } else { "\n\n" });
            }
            markdown.push_str(text);
            previous_item = item;
        }
        if !markdown.is_empty() {
            markdown.push('\n');
        }
        (markdown, self.title)
    }
}
