//! `tabular` and its kin as Markdown tables: rows end at `\\`, cells at
//! `&`; rules (`\hline`, `\toprule`, `\cline`...) are dropped; a
//! `\multicolumn` cell's text is repeated into the columns it spans, as a
//! merged cell's is elsewhere in kts.

use super::{Converter, scan, table};

/// The arguments a table environment takes before its rows (`{lll}`,
/// `{\linewidth}{lX}`), `None` for an environment that is not a table.
pub fn argument_count(environment: &str) -> Option<usize> {
    Some(match environment {
        "tabular" | "longtable" | "longtable*" | "supertabular" | "tblr" | "longtblr" => 1,
        "tabular*" | "tabularx" | "tabulary" | "xltabular" => 2,
        _ => return None,
    })
}

/// Commands that draw rules between rows, with the arguments each takes.
const RULES: [(&str, usize); 14] = [
    ("hline", 0),
    ("toprule", 0),
    ("midrule", 0),
    ("bottomrule", 0),
    ("cline", 1),
    ("cmidrule", 1),
    ("hhline", 1),
    ("specialrule", 3),
    ("addlinespace", 0),
    ("endhead", 0),
    ("endfirsthead", 0),
    ("endfoot", 0),
    ("endlastfoot", 0),
    ("rowcolor", 1),
];

impl Converter {
    /// The table (and the caption a `longtable` holds) of a table
    /// environment whose arguments and rows are `content`.
    pub(super) fn tabular(
        &mut self,
        environment: &str,
        content: &str,
        depth: usize,
    ) -> Vec<String> {
        let count = argument_count(environment).unwrap_or(1);
        let start = scan::skip_arguments(content, scan::skip_options(content, 0), count);
        let body = &content[start.min(content.len())..];
        let mut rows = Vec::new();
        let mut blocks = Vec::new();
        for raw in split_rows(body) {
            let cells: Vec<&str> = raw.iter().map(|cell| without_rules(cell)).collect();
            if let [only] = cells.as_slice()
                && scan::is_command(only, 0, "caption")
            {
                blocks.push(self.caption(only, depth));
                continue;
            }
            let row = self.row(&cells, depth);
            if row.iter().any(|cell| !cell.is_empty()) {
                rows.push(row);
            }
        }
        blocks.push(table::markdown_table(&rows).trim_end().to_string());
        blocks.retain(|block| !block.is_empty());
        blocks
    }

    fn row(&mut self, cells: &[&str], depth: usize) -> Vec<String> {
        let mut row = Vec::new();
        for cell in cells {
            let (text, span) = multicolumn(cell);
            let text = super::inline::one_line(&self.inline(text, depth + 1));
            for _ in 0..span {
                row.push(text.clone());
            }
        }
        row
    }
}

/// The rows of a table body, each its cells' source.
fn split_rows(body: &str) -> Vec<Vec<&str>> {
    let mut rows = Vec::new();
    let mut cells = Vec::new();
    let mut cell_start = 0;
    scan::top_level(body, |mark, start, end| match mark {
        scan::Mark::Ampersand => {
            cells.push(&body[cell_start..start]);
            cell_start = end;
        }
        scan::Mark::Command("\\" | "tabularnewline") => {
            cells.push(&body[cell_start..start]);
            rows.push(std::mem::take(&mut cells));
            cell_start = scan::skip_options(body, end);
        }
        scan::Mark::Command(_) => {}
    });
    let last = &body[cell_start.min(body.len())..];
    if !cells.is_empty() || !without_rules(last).trim().is_empty() {
        cells.push(last);
        rows.push(cells);
    }
    rows
}

/// A cell's source without the rules before it.
fn without_rules(cell: &str) -> &str {
    let mut rest = cell.trim_start();
    while rest.starts_with('\\') {
        let (name, end) = scan::command(rest, 0);
        let Some(&(_, count)) = RULES.iter().find(|(rule, _)| *rule == name) else {
            break;
        };
        let mut after = scan::skip_options(rest, end);
        if rest[after..].starts_with('(') {
            after += rest[after..].find(')').map_or(0, |close| close + 1);
        }
        after = scan::skip_arguments(rest, after, count);
        rest = rest[after.min(rest.len())..].trim_start();
    }
    rest
}

/// The text of a `\multicolumn{n}{spec}{text}` cell and the columns it
/// spans; any other cell spans one.
fn multicolumn(cell: &str) -> (&str, usize) {
    let cell = cell.trim();
    if !scan::is_command(cell, 0, "multicolumn") {
        return (cell, 1);
    }
    let (count, after) = scan::argument_text(cell, "\\multicolumn".len());
    let span = count.trim().parse::<usize>().unwrap_or(1).clamp(1, 64);
    let (_, after) = scan::argument_text(cell, after);
    let (text, _) = scan::argument_text(cell, after);
    (text, span)
}
