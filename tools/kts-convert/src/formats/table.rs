//! Markdown tables, shared by every converter that meets a table.

/// Escapes a cell's text for a Markdown table row: one line, `|` escaped.
pub fn table_cell(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

/// A row's title, when the row is a title above a table rather than a row
/// of it: its cells (empty ones left out) hold one text with a letter in it,
/// once, or repeated into the cells a merged cell covers (`copy` tells which
/// cells are such repeats).
pub fn row_title<'a>(cells: impl IntoIterator<Item = (&'a str, bool)>) -> Option<&'a str> {
    let mut title = None;
    let mut own_cells = 0;
    for (text, copy) in cells {
        if text.is_empty() {
            continue;
        }
        if title.is_some_and(|title| title != text) {
            return None;
        }
        title = Some(text);
        own_cells += usize::from(!copy);
    }
    title.filter(|title| own_cells <= 1 && title.chars().any(char::is_alphabetic))
}

/// Renders rows as a Markdown table, the first row as the header. Short rows
/// are padded with empty cells to the width of the longest.
pub fn markdown_table(rows: &[Vec<String>]) -> String {
    let width = rows.iter().map(Vec::len).max().unwrap_or(0);
    if width == 0 {
        return String::new();
    }
    let mut out = String::new();
    for (i, row) in rows.iter().enumerate() {
        out.push('|');
        for col in 0..width {
            out.push(' ');
            out.push_str(&table_cell(row.get(col).map(String::as_str).unwrap_or("")));
            out.push_str(" |");
        }
        out.push('\n');
        if i == 0 {
            out.push('|');
            out.push_str(&" --- |".repeat(width));
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ragged_rows_are_padded_and_pipes_escaped() {
        let rows = vec![
            vec!["a".to_string(), "b".to_string()],
            vec!["x|y".to_string()],
            vec!["1".to_string(), "two\nlines".to_string(), "3".to_string()],
        ];
        assert_eq!(
            markdown_table(&rows),
            "| a | b |  |\n| --- | --- | --- |\n| x\\|y |  |  |\n| 1 | two lines | 3 |\n"
        );
        assert_eq!(markdown_table(&[]), "");
    }
}
