//! Spreadsheets: xlsx/xlsm, xls and ods, read with calamine.
//!
//! Each sheet becomes a `## name` heading followed by its blocks of data as
//! Markdown tables (see `sheet_layout`). Cells show what the spreadsheet
//! shows: a formula's cached value, dates as ISO dates, numbers without
//! binary noise. Merged cells repeat their value into the cells they cover.
//! xlsx cell comments and chart sheets are read from the package itself.
//!
//! Memory: an xlsx sheet is streamed cell by cell and only cells holding
//! something are kept, so a sheet's declared size costs nothing; xls and ods
//! sheets are read whole by calamine (an xls sheet holds at most 65,536 rows).
//! At most `Limits::max_sheet_cells` cells are read per workbook; past that
//! the rest is left out and the document says so in a warning.

use std::collections::HashMap;
use std::io::Cursor;
use std::panic::{AssertUnwindSafe, catch_unwind};

use calamine::{Data, Dimensions, Ods, Reader, SheetType, Xls, Xlsx};
use kts_record::ErrorCode;
use serde_json::{Map, Value};

use super::ooxml::{self, Package};
use super::sheet_layout::{CellComment, SheetCell, sheet_markdown};
use super::xls_guard;
use super::xlsx_parts::SheetParts;
use super::{ConvertError, Converted, Limits};

/// Merged ranges larger than this keep their value in the first cell only
/// (repeating it would cost memory for nothing a reader needs).
const MAX_MERGE_FILL: u64 = 10_000;

/// The sheets read so far and what is said about them.
#[derive(Default)]
struct Workbook {
    sections: Vec<String>,
    warnings: Vec<String>,
    cell_limit: usize,
    cells_left: usize,
    cut_short: bool,
    sheets: usize,
}

impl Workbook {
    fn new(limits: &Limits) -> Self {
        Self {
            cell_limit: limits.max_sheet_cells,
            cells_left: limits.max_sheet_cells,
            ..Self::default()
        }
    }

    /// Takes a cell if the budget allows; false once it is spent.
    fn take_cell(&mut self, sheet: &str) -> bool {
        if self.cells_left > 0 {
            self.cells_left -= 1;
            return true;
        }
        if !self.cut_short {
            self.cut_short = true;
            self.warnings.push(format!(
                "more than {} cells: sheet {sheet:?} is cut short and the sheets after it are left out",
                self.cell_limit
            ));
        }
        false
    }

    fn add_sheet(&mut self, name: &str, body: String) {
        self.sheets += 1;
        let heading = format!(
            "## {}",
            name.split_whitespace().collect::<Vec<_>>().join(" ")
        );
        if body.trim().is_empty() {
            self.sections.push(heading);
        } else {
            self.sections.push(format!("{heading}\n\n{body}"));
        }
    }

    fn finish(self, title: Option<String>, mut properties: Map<String, Value>) -> Converted {
        properties.insert("sheets".into(), self.sheets.into());
        if !self.warnings.is_empty() {
            properties.insert("warnings".into(), Value::from(self.warnings));
        }
        let mut markdown = self.sections.join("\n\n");
        markdown.push('\n');
        Converted {
            markdown,
            title,
            properties,
        }
    }
}

pub fn xlsx(bytes: &[u8], limits: &Limits) -> Result<Converted, ConvertError> {
    guarded(|| read_xlsx(bytes, limits))
}

pub fn xls(bytes: &[u8], limits: &Limits) -> Result<Converted, ConvertError> {
    guarded(|| read_xls(bytes, limits))
}

pub fn ods(bytes: &[u8], limits: &Limits) -> Result<Converted, ConvertError> {
    guarded(|| read_ods(bytes, limits))
}

/// Runs a calamine reader; its panics on damaged files (a slice past the end
/// of a compound file's stream, for one) become `Corrupt`, like its errors.
fn guarded(
    read: impl FnOnce() -> Result<Converted, ConvertError>,
) -> Result<Converted, ConvertError> {
    catch_unwind(AssertUnwindSafe(read)).unwrap_or_else(|panic| {
        Err(ConvertError::corrupt(format!(
            "the workbook could not be read: {}",
            super::panic_message(&panic)
        )))
    })
}

fn read_xlsx(bytes: &[u8], limits: &Limits) -> Result<Converted, ConvertError> {
    // An .xlsx that is really an OLE file: encrypted OOXML, or a legacy workbook.
    if ooxml::is_ole(bytes) {
        return read_xls(bytes, limits);
    }
    let mut package = Package::open(bytes, limits)?;
    let (title, properties) = package.core_properties();
    let parts = SheetParts::read(&mut package);
    let mut reader: Xlsx<_> = Xlsx::new(Cursor::new(bytes)).map_err(|e| calamine_error(&e))?;
    let mut workbook = Workbook::new(limits);
    for sheet in reader.sheets_metadata().to_vec() {
        if sheet.typ == SheetType::ChartSheet {
            workbook.add_sheet(&sheet.name, parts.chart_sheet(&mut package, &sheet.name));
            continue;
        }
        let merges = reader
            .merge_cells_by_sheet_name(&sheet.name)
            .unwrap_or_default();
        let mut cells = Vec::new();
        {
            let mut cell_reader = match reader.worksheet_cells_reader(&sheet.name) {
                Ok(cell_reader) => cell_reader,
                Err(calamine::XlsxError::NotAWorksheet(_)) => continue,
                Err(e) => return Err(calamine_error(&e)),
            };
            while let Some(cell) = cell_reader.next_cell().map_err(|e| calamine_error(&e))? {
                let text = cell_text(&Data::from(cell.get_value().clone()));
                if text.is_empty() {
                    continue;
                }
                if !workbook.take_cell(&sheet.name) {
                    break;
                }
                let (row, col) = cell.get_position();
                cells.push(SheetCell { row, col, text });
            }
        }
        let comments = parts.comments(&mut package, &sheet.name);
        workbook.add_sheet(&sheet.name, sheet_body(cells, &merges, &comments));
    }
    Ok(workbook.finish(title, properties))
}

fn read_xls(bytes: &[u8], limits: &Limits) -> Result<Converted, ConvertError> {
    if let Some(error) = ooxml::encryption_error(bytes) {
        return Err(error);
    }
    xls_guard::vet(bytes)?;
    let mut reader: Xls<_> = Xls::new(Cursor::new(bytes)).map_err(|e| calamine_error(&e))?;
    let mut workbook = Workbook::new(limits);
    for sheet in reader.sheets_metadata().to_vec() {
        let merges = reader
            .merge_cells_by_sheet_name(&sheet.name)
            .unwrap_or_default();
        let range = reader
            .worksheet_range(&sheet.name)
            .map_err(|e| calamine_error(&e))?;
        let cells = range_cells(&range, &sheet.name, &mut workbook);
        workbook.add_sheet(&sheet.name, sheet_body(cells, &merges, &[]));
    }
    Ok(workbook.finish(None, Map::new()))
}

fn read_ods(bytes: &[u8], limits: &Limits) -> Result<Converted, ConvertError> {
    // The guarded opening refuses zip bombs before calamine inflates anything.
    Package::open(bytes, limits)?;
    let mut reader: Ods<_> = Ods::new(Cursor::new(bytes)).map_err(|e| calamine_error(&e))?;
    let mut workbook = Workbook::new(limits);
    for sheet in reader.sheets_metadata().to_vec() {
        let range = reader
            .worksheet_range(&sheet.name)
            .map_err(|e| calamine_error(&e))?;
        let cells = range_cells(&range, &sheet.name, &mut workbook);
        workbook.add_sheet(&sheet.name, sheet_body(cells, &[], &[]));
    }
    Ok(workbook.finish(None, Map::new()))
}

/// The cells of a range that hold something, at their sheet positions.
fn range_cells(
    range: &calamine::Range<Data>,
    sheet: &str,
    workbook: &mut Workbook,
) -> Vec<SheetCell> {
    let (top, left) = range.start().unwrap_or((0, 0));
    let mut cells = Vec::new();
    for (row, col, value) in range.used_cells() {
        let text = cell_text(value);
        if text.is_empty() {
            continue;
        }
        if !workbook.take_cell(sheet) {
            break;
        }
        cells.push(SheetCell {
            row: top + row as u32,
            col: left + col as u32,
            text,
        });
    }
    cells
}

/// A sheet's Markdown, merged cells' values repeated into the cells they cover.
fn sheet_body(
    mut cells: Vec<SheetCell>,
    merges: &[Dimensions],
    comments: &[CellComment],
) -> String {
    if !merges.is_empty() {
        let at: HashMap<(u32, u32), String> = cells
            .iter()
            .map(|c| ((c.row, c.col), c.text.clone()))
            .collect();
        for merge in merges.iter().filter(|m| m.len() <= MAX_MERGE_FILL) {
            let Some(text) = at.get(&merge.start) else {
                continue;
            };
            for row in merge.start.0..=merge.end.0 {
                for col in merge.start.1..=merge.end.1 {
                    if !at.contains_key(&(row, col)) {
                        cells.push(SheetCell {
                            row,
                            col,
                            text: text.clone(),
                        });
                    }
                }
            }
        }
    }
    sheet_markdown(cells, comments)
}

/// A cell's value as the spreadsheet shows it (empty for an empty cell).
fn cell_text(value: &Data) -> String {
    match value {
        Data::Empty => String::new(),
        Data::String(s) | Data::DateTimeIso(s) | Data::DurationIso(s) => s.trim().to_owned(),
        Data::Int(i) => i.to_string(),
        Data::Float(f) => number_text(*f),
        Data::Bool(b) => if *b { "TRUE" } else { "FALSE" }.to_owned(),
        Data::Error(e) => e.to_string(),
        Data::DateTime(date) => date_text(date),
    }
}

/// A number with at most 15 significant digits, as spreadsheets show them
/// (`0.1 + 0.2` is `0.3`), integers without a decimal point.
fn number_text(value: f64) -> String {
    if !value.is_finite() {
        return value.to_string();
    }
    let rounded: f64 = format!("{value:.14e}").parse().unwrap_or(value);
    if rounded.fract() == 0.0 && rounded.abs() < 1e15 {
        format!("{}", rounded as i64)
    } else {
        rounded.to_string()
    }
}

/// A date as `2024-03-01`, with the time (`2024-03-01 14:30`) when it has one;
/// a time of day or a duration as `14:30:00`.
fn date_text(date: &calamine::ExcelDateTime) -> String {
    let serial = date.as_f64();
    if date.is_duration() {
        let seconds = (serial * 86_400.0).round() as i64;
        return format!(
            "{}:{:02}:{:02}",
            seconds / 3600,
            (seconds % 3600) / 60,
            seconds % 60
        );
    }
    let (year, month, day, hour, minute, second, _) = date.to_ymd_hms_milli();
    let time = if second == 0 {
        format!("{hour:02}:{minute:02}")
    } else {
        format!("{hour:02}:{minute:02}:{second:02}")
    };
    if (0.0..1.0).contains(&serial) {
        time
    } else if serial.fract() == 0.0 {
        format!("{year:04}-{month:02}-{day:02}")
    } else {
        format!("{year:04}-{month:02}-{day:02} {time}")
    }
}

/// A calamine error as a conversion error: password protection is
/// `encrypted`, anything else means the file is damaged.
fn calamine_error(error: &dyn std::fmt::Display) -> ConvertError {
    let message = error.to_string();
    if message.to_ascii_lowercase().contains("password") {
        ConvertError::new(
            ErrorCode::Encrypted,
            "password-protected workbook".to_owned(),
        )
    } else {
        ConvertError::corrupt(format!("damaged workbook: {message}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_show_as_a_spreadsheet_shows_them() {
        assert_eq!(number_text(0.1 + 0.2), "0.3");
        assert_eq!(number_text(120.0), "120");
        assert_eq!(number_text(-2.5), "-2.5");
        assert_eq!(number_text(1e20), "100000000000000000000");
        assert_eq!(number_text(1.1 * 4.0), "4.4");
    }

    #[test]
    fn dates_times_and_durations() {
        use calamine::{ExcelDateTime, ExcelDateTimeType};
        let date = |v| ExcelDateTime::new(v, ExcelDateTimeType::DateTime, false);
        assert_eq!(date_text(&date(45352.0)), "2024-03-01");
        assert_eq!(date_text(&date(45352.5)), "2024-03-01 12:00");
        assert_eq!(date_text(&date(0.75)), "18:00");
        let duration = ExcelDateTime::new(1.5, ExcelDateTimeType::TimeDelta, false);
        assert_eq!(date_text(&duration), "36:00:00");
    }

    #[test]
    fn merged_cells_repeat_their_value() {
        let cells = vec![
            SheetCell {
                row: 0,
                col: 0,
                text: "North".into(),
            },
            SheetCell {
                row: 0,
                col: 1,
                text: "10".into(),
            },
            SheetCell {
                row: 1,
                col: 1,
                text: "12".into(),
            },
        ];
        let merge = Dimensions::new((0, 0), (1, 0));
        assert_eq!(
            sheet_body(cells, &[merge], &[]),
            "| North | 10 |\n| --- | --- |\n| North | 12 |"
        );
    }
}
