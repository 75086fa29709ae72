//! A sheet's cells as Markdown: each block of data (cells separated from
//! others by empty rows or columns) becomes its own table. Blocks side by
//! side whose tables span the same rows are one table cut by empty spacer
//! columns, and stay one table without them.
//!
//! Only cells that hold something are kept, so an empty row or column never
//! shows up as a wall of empty pipes. The leading rows of a block that hold
//! a single cell, alone or merged across the block (a title above a table),
//! are written as paragraphs, and a block of one cell is a paragraph; a row
//! of cells that merely hold the same value stays a row of the table.
//! Comments come from the caller (calamine does not read them).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::table::{markdown_table, row_title, table_cell};
use kts_record::cell_reference;

/// A cell with content, at its (row, column) from 0.
#[derive(Clone, Debug, PartialEq)]
pub struct SheetCell {
    pub row: u32,
    pub col: u32,
    pub text: String,
    /// Whether the text is a merged range's, repeated into a cell the range
    /// covers (not its first).
    pub merged: bool,
}

impl SheetCell {
    pub fn new(row: u32, col: u32, text: String) -> Self {
        Self {
            row,
            col,
            text,
            merged: false,
        }
    }
}

/// A review comment on a cell.
#[derive(Clone, Debug, PartialEq)]
pub struct CellComment {
    pub row: u32,
    pub col: u32,
    pub author: String,
    pub text: String,
}

/// The Markdown of one sheet's cells (any order) and comments; empty when
/// the sheet holds neither. A comment follows the block holding its cell,
/// or comes at the end when its cell is in no block.
pub fn sheet_markdown(cells: Vec<SheetCell>, comments: &[CellComment]) -> String {
    let mut blocks: Vec<String> = Vec::new();
    let mut placed = vec![false; comments.len()];
    for region in regions(cells) {
        blocks.extend(region_markdown(&region));
        let (top, bottom, left, right) = bounds(&region);
        let mut notes = Vec::new();
        for (comment, placed) in comments.iter().zip(&mut placed) {
            if !*placed
                && (top..=bottom).contains(&comment.row)
                && (left..=right).contains(&comment.col)
            {
                notes.push(comment_line(comment));
                *placed = true;
            }
        }
        if !notes.is_empty() {
            blocks.push(notes.join("\n"));
        }
    }
    let unplaced: Vec<String> = comments
        .iter()
        .zip(&placed)
        .filter(|(_, placed)| !**placed)
        .map(|(comment, _)| comment_line(comment))
        .collect();
    if !unplaced.is_empty() {
        blocks.push(unplaced.join("\n"));
    }
    blocks.join("\n\n")
}

/// `> Comment (author) on B2: text`, one line.
fn comment_line(comment: &CellComment) -> String {
    let one_line = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let reference = cell_reference(comment.row, comment.col);
    let (author, text) = (one_line(&comment.author), one_line(&comment.text));
    if author.is_empty() {
        format!("> Comment on {reference}: {text}")
    } else {
        format!("> Comment ({author}) on {reference}: {text}")
    }
}

fn bounds(cells: &[SheetCell]) -> (u32, u32, u32, u32) {
    let rows = cells.iter().map(|c| c.row);
    let cols = cells.iter().map(|c| c.col);
    (
        rows.clone().min().unwrap_or(0),
        rows.max().unwrap_or(0),
        cols.clone().min().unwrap_or(0),
        cols.max().unwrap_or(0),
    )
}

/// Splits cells into blocks no empty row or column crosses, but for the
/// spacer columns of one table (see `split_blocks`), top to bottom, then
/// left to right.
fn regions(cells: Vec<SheetCell>) -> Vec<Vec<SheetCell>> {
    let mut done = Vec::new();
    // Each entry: cells, and whether the last split tried was by rows.
    let mut pending = vec![(cells, false)];
    while let Some((cells, split_rows_next)) = pending.pop() {
        if cells.is_empty() {
            continue;
        }
        let mut parts = split_blocks(cells.clone(), !split_rows_next);
        if parts.len() == 1 {
            parts = split_blocks(cells, split_rows_next);
            if parts.len() == 1 {
                done.extend(parts);
                continue;
            }
            // Pushed in reverse so that the first part is taken next.
            pending.extend(parts.into_iter().rev().map(|p| (p, !split_rows_next)));
        } else {
            pending.extend(parts.into_iter().rev().map(|p| (p, split_rows_next)));
        }
    }
    done
}

/// Splits cells at empty rows (`by_rows`) or columns; column blocks that
/// are one table with spacer columns between them stay together.
fn split_blocks(cells: Vec<SheetCell>, by_rows: bool) -> Vec<Vec<SheetCell>> {
    let parts = split_at_gaps(cells, by_rows);
    if by_rows {
        parts
    } else {
        join_side_by_side(parts)
    }
}

/// Joins each column block to the one before it when their tables span the
/// same rows, so every row keeps all its cells.
fn join_side_by_side(parts: Vec<Vec<SheetCell>>) -> Vec<Vec<SheetCell>> {
    let mut joined: Vec<Vec<SheetCell>> = Vec::new();
    let mut previous_span = None;
    for part in parts {
        let span = table_span(&part);
        match joined.last_mut() {
            Some(block) if span.is_some() && span == previous_span => {
                block.extend(part);
                block.sort_by_key(|c| (c.row, c.col));
            }
            _ => joined.push(part),
        }
        previous_span = span;
    }
    joined
}

/// The first and last rows of a block's table (its rows below any title
/// rows); `None` when the block is titles only.
fn table_span(cells: &[SheetCell]) -> Option<(u32, u32)> {
    let rows = rows_of(cells);
    let table = &rows[title_rows(cells, &rows)..];
    Some((table.first()?[0].row, table.last()?[0].row))
}

/// A block's cells row by row, top to bottom.
fn rows_of(cells: &[SheetCell]) -> Vec<Vec<&SheetCell>> {
    let mut rows: BTreeMap<u32, Vec<&SheetCell>> = BTreeMap::new();
    for cell in cells {
        rows.entry(cell.row).or_default().push(cell);
    }
    rows.into_values().collect()
}

/// How many of a block's leading rows are titles: a single cell, alone or
/// merged across the block, holding a word. A block of one column has
/// none, unless it is a single cell.
fn title_rows(cells: &[SheetCell], rows: &[Vec<&SheetCell>]) -> usize {
    let (_, _, left, right) = bounds(cells);
    let wide = right > left;
    rows.iter()
        .take_while(|row| {
            let title = row_title(row.iter().map(|c| (c.text.as_str(), c.merged)));
            title.is_some() && (wide || rows.len() == 1)
        })
        .count()
}

/// Groups cells into runs of consecutive rows (`by_rows`) or columns that
/// hold something, in order.
fn split_at_gaps(mut cells: Vec<SheetCell>, by_rows: bool) -> Vec<Vec<SheetCell>> {
    let key = |c: &SheetCell| {
        if by_rows {
            (c.row, c.col)
        } else {
            (c.col, c.row)
        }
    };
    cells.sort_by_key(key);
    let mut parts: Vec<Vec<SheetCell>> = Vec::new();
    let mut last: Option<u32> = None;
    for cell in cells {
        let line = key(&cell).0;
        match last {
            Some(previous) if line <= previous + 1 => {}
            _ => parts.push(Vec::new()),
        }
        last = Some(line);
        if let Some(part) = parts.last_mut() {
            part.push(cell);
        }
    }
    if by_rows {
        parts
    } else {
        // Within a column band, keep reading order: row by row.
        parts
            .into_iter()
            .map(|mut p| {
                p.sort_by_key(|c| (c.row, c.col));
                p
            })
            .collect()
    }
}

/// One block: title rows as paragraphs, then the rest as a table of the
/// columns that hold something.
fn region_markdown(cells: &[SheetCell]) -> Vec<String> {
    let rows = rows_of(cells);
    let titles = title_rows(cells, &rows);
    let mut blocks: Vec<String> = rows[..titles]
        .iter()
        .map(|row| table_cell(&row[0].text))
        .collect();
    let table_rows = &rows[titles..];
    let columns: BTreeSet<u32> = table_rows.iter().flatten().map(|c| c.col).collect();
    let position: HashMap<u32, usize> = columns.iter().enumerate().map(|(i, &c)| (c, i)).collect();
    let table: Vec<Vec<String>> = table_rows
        .iter()
        .map(|row| {
            let mut line = vec![String::new(); columns.len()];
            for cell in row {
                line[position[&cell.col]] = cell.text.clone();
            }
            line
        })
        .collect();
    if !table.is_empty() {
        blocks.push(markdown_table(&table).trim_end().to_owned());
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells(grid: &[(u32, u32, &str)]) -> Vec<SheetCell> {
        grid.iter()
            .map(|&(row, col, text)| SheetCell::new(row, col, text.into()))
            .collect()
    }

    #[test]
    fn references_count_columns_like_a_spreadsheet() {
        assert_eq!(cell_reference(0, 0), "A1");
        assert_eq!(cell_reference(1, 25), "Z2");
        assert_eq!(cell_reference(9, 26), "AA10");
        assert_eq!(cell_reference(0, 16383), "XFD1");
    }

    #[test]
    fn blocks_apart_become_separate_tables_and_titles_paragraphs() {
        let mut sheet = cells(&[
            (0, 0, "Ducks per year"),
            (0, 1, "Ducks per year"),
            (1, 0, "Year"),
            (1, 1, "Ducks"),
            (2, 0, "2019"),
            (2, 1, "120"),
            (3, 1, "135"),
            // Columns apart from the first table, on the same rows.
            (1, 4, "Pond"),
            (2, 4, "North"),
            // Rows below, after an empty row.
            (6, 2, "Total"),
            (6, 3, "255"),
        ]);
        sheet[1].merged = true;
        assert_eq!(
            sheet_markdown(sheet, &[]),
            "Ducks per year\n\n| Year | Ducks |\n| --- | --- |\n| 2019 | 120 |\n|  | 135 |\n\n\
             | Pond |\n| --- |\n| North |\n\n| Total | 255 |\n| --- | --- |"
        );
    }

    #[test]
    fn a_spacer_column_does_not_split_a_table() {
        let sheet = cells(&[
            (0, 0, "Staff"),
            (1, 0, "Employee"),
            (1, 1, "Dept"),
            (1, 3, "Phone"),
            (1, 4, "Room"),
            (2, 0, "Ada"),
            (2, 1, "Sales"),
            (2, 3, "555-0150"),
            (2, 4, "R1"),
            (3, 0, "Bob"),
            (3, 3, "555-0151"),
        ]);
        assert_eq!(
            sheet_markdown(sheet, &[]),
            "Staff\n\n| Employee | Dept | Phone | Room |\n| --- | --- | --- | --- |\n\
             | Ada | Sales | 555-0150 | R1 |\n| Bob |  | 555-0151 |  |"
        );
    }

    #[test]
    fn a_row_of_equal_values_stays_a_row_only_one_cell_is_a_title() {
        let sheet = cells(&[(0, 0, "same"), (0, 1, "same"), (0, 2, "same")]);
        assert_eq!(
            sheet_markdown(sheet, &[]),
            "| same | same | same |\n| --- | --- | --- |"
        );
        let sheet = cells(&[(0, 1, "Stock list"), (1, 0, "Item"), (1, 1, "Qty")]);
        assert_eq!(
            sheet_markdown(sheet, &[]),
            "Stock list\n\n| Item | Qty |\n| --- | --- |"
        );
    }

    #[test]
    fn far_apart_cells_do_not_make_walls_of_empty_pipes() {
        let sheet = cells(&[(0, 0, "top left"), (500, 300, "far away")]);
        assert_eq!(sheet_markdown(sheet, &[]), "top left\n\nfar away");
    }

    #[test]
    fn comments_follow_the_block_they_annotate() {
        let sheet = cells(&[(0, 0, "Item"), (1, 0, "Pens")]);
        let comment = CellComment {
            row: 1,
            col: 0,
            author: "Ada".into(),
            text: "blue\nonly".into(),
        };
        assert_eq!(
            sheet_markdown(sheet, &[comment]),
            "| Item |\n| --- |\n| Pens |\n\n> Comment (Ada) on A2: blue only"
        );
    }
}
