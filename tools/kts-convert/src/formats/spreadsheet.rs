//! Spreadsheets: xlsx/xlsm, xls and ods, read with calamine.
//!
//! Each sheet becomes a `## name` heading followed by its blocks of data as
//! Markdown tables (see `sheet_layout`). Cells show what the spreadsheet
//! shows: a formula's cached value (its formula, `=SUM(B2:B3)`, when the
//! file caches none, as scripts write them), dates as ISO dates, numbers through
//! their number format (`25%`, `$1,234.50`; see `number_format`) or, in an
//! ods file, as the text the file stores beside the value; other numbers
//! without binary noise. Merged cells repeat their value into the cells they
//! cover. What calamine does not read comes from the file itself: xlsx number
//! formats, cell comments and charts, on chart sheets or after a worksheet's
//! tables (`xlsx_parts`), xls number formats
//! (`xls_formats`), the text ods cells show and ods comments (`ods_parts`).
//!
//! Memory: an xlsx sheet is streamed cell by cell (its cells' number formats
//! from a second stream of the same part, in step) and only cells holding
//! something are kept, so a sheet's declared size costs nothing; xls and ods
//! sheets are read whole by calamine (an xls sheet holds at most 65,536 rows).
//! At most `Limits::max_sheet_cells` cells are read per workbook; past that
//! the rest is left out and the document says so in a warning.

use std::collections::HashMap;
use std::io::{Cursor, Read, Seek};
use std::sync::LazyLock;

use calamine::{Data, Dimensions, Ods, Reader, SheetType, Xls, Xlsx, XlsxFormulaMetadata};
use kts_record::ErrorCode;
use regex::{Captures, Regex};
use serde_json::{Map, Value};

use super::number_format::NumberFormat;
use super::ooxml::{self, Element, Package};
use super::sheet_layout::{CellComment, SheetCell, sheet_markdown};
use super::xlsx_parts::{SheetParts, parse_range};
use super::{ConvertError, Converted, Limits, odf, ods_parts, xls_formats, xls_guard};

/// Merged ranges larger than this keep their value in the first cell only
/// (repeating it would cost memory for nothing a reader needs).
const MAX_MERGE_FILL: u64 = 10_000;

/// The most cells a chart's data reference is read for.
const MAX_CHART_CELLS: u64 = 10_000;

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
    fn take_cell(&mut self) -> bool {
        if self.cells_left > 0 {
            self.cells_left -= 1;
            return true;
        }
        self.cut_short = true;
        false
    }

    /// Whether the cell budget ran out: the sheets after the one it ran out
    /// in are left out.
    fn is_full(&self) -> bool {
        self.cut_short
    }

    /// Adds a sheet's section; a sheet the budget ran out in is cut short,
    /// or left out when none of its cells fit.
    fn add_sheet(&mut self, name: &str, body: String) {
        let empty = body.trim().is_empty();
        if self.cut_short {
            let what = if empty { "and" } else { "is cut short and" };
            self.warnings.push(format!(
                "more than {} cells: sheet {name:?} {what} the sheets after it are left out",
                self.cell_limit
            ));
            if empty {
                return;
            }
        }
        self.sheets += 1;
        let heading = format!(
            "## {}",
            name.split_whitespace().collect::<Vec<_>>().join(" ")
        );
        if empty {
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
    super::read_guarded("workbook", || read_xlsx(bytes, limits))
}

pub fn xls(bytes: &[u8], limits: &Limits) -> Result<Converted, ConvertError> {
    super::read_guarded("workbook", || read_xls(bytes, limits))
}

pub fn ods(bytes: &[u8], limits: &Limits) -> Result<Converted, ConvertError> {
    super::read_guarded("workbook", || read_ods(bytes, limits))
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
        if workbook.is_full() {
            break;
        }
        let charts = parts.charts(&mut package, &sheet.name);
        if sheet.typ == SheetType::ChartSheet {
            workbook.add_sheet(&sheet.name, charts_markdown(&mut reader, &charts));
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
            let mut formats = parts.cell_formats(&mut package, &sheet.name);
            while let Some(cell) = cell_reader
                .next_cell_with_formula_metadata()
                .map_err(|e| calamine_error(&e))?
            {
                let value = Data::from(cell.value);
                let text = match (&value, cell.formula) {
                    (Data::Empty, Some(formula)) => uncached_formula(formula),
                    _ => None,
                };
                let format = formats.next_cell();
                let text = text.unwrap_or_else(|| {
                    format
                        .and_then(|format| formatted(format, &value))
                        .unwrap_or_else(|| cell_text(&value))
                });
                if text.is_empty() {
                    continue;
                }
                if !workbook.take_cell() {
                    break;
                }
                let (row, col) = cell.pos;
                cells.push(SheetCell::new(row, col, text));
            }
        }
        let comments = parts.comments(&mut package, &sheet.name);
        let body = [
            sheet_body(cells, &merges, &comments),
            charts_markdown(&mut reader, &charts),
        ];
        let body: Vec<String> = body.into_iter().filter(|b| !b.is_empty()).collect();
        workbook.add_sheet(&sheet.name, body.join("\n\n"));
    }
    Ok(workbook.finish(title, properties))
}

fn read_xls(bytes: &[u8], limits: &Limits) -> Result<Converted, ConvertError> {
    if let Some(error) = ooxml::encryption_error(bytes) {
        return Err(error);
    }
    let formats = xls_formats::CellFormats::read(&xls_guard::vet(bytes)?);
    let mut reader: Xls<_> = Xls::new(Cursor::new(bytes)).map_err(|e| calamine_error(&e))?;
    let mut workbook = Workbook::new(limits);
    for (index, sheet) in reader.sheets_metadata().to_vec().into_iter().enumerate() {
        if workbook.is_full() {
            break;
        }
        let merges = reader
            .merge_cells_by_sheet_name(&sheet.name)
            .unwrap_or_default();
        let range = reader
            .worksheet_range(&sheet.name)
            .map_err(|e| calamine_error(&e))?;
        // A formula written without a value (by xlwt) reads as empty text.
        let formulas = Formulas {
            range: formula_range(|| reader.worksheet_formula(&sheet.name).ok()),
            uncached: |value| cell_text(value).is_empty(),
        };
        let shown = |at, value: &Data| formatted(formats.get(index, at)?, value);
        let cells = range_cells(&range, &formulas, &mut workbook, shown);
        workbook.add_sheet(&sheet.name, sheet_body(cells, &merges, &[]));
    }
    Ok(workbook.finish(None, Map::new()))
}

fn read_ods(bytes: &[u8], limits: &Limits) -> Result<Converted, ConvertError> {
    // The guarded opening refuses zip bombs before calamine inflates anything.
    let mut package = Package::open(bytes, limits)?;
    let (title, properties) = match package.xml_part("meta.xml") {
        Ok(Some(meta)) => odf::meta_properties(&meta),
        _ => (None, Map::new()),
    };
    let extras = ods_parts::read(&mut package, limits.max_sheet_cells);
    let mut reader: Ods<_> = Ods::new(Cursor::new(bytes)).map_err(|e| calamine_error(&e))?;
    let mut workbook = Workbook::new(limits);
    for sheet in reader.sheets_metadata().to_vec() {
        if workbook.is_full() {
            break;
        }
        let range = reader
            .worksheet_range(&sheet.name)
            .map_err(|e| calamine_error(&e))?;
        let extras = extras.get(&sheet.name);
        let shown = |at, value: &Data| match value {
            Data::Float(_) => extras?.shown.get(&at).cloned(),
            _ => None,
        };
        let formulas = Formulas {
            range: formula_range(|| reader.worksheet_formula(&sheet.name).ok()),
            uncached: |value| matches!(value, Data::Empty),
        };
        let cells = range_cells(&range, &formulas, &mut workbook, shown);
        let comments = extras.map(|e| e.comments.as_slice()).unwrap_or_default();
        workbook.add_sheet(&sheet.name, sheet_body(cells, &[], comments));
    }
    Ok(workbook.finish(title, properties))
}

/// A sheet's charts; the data a chart caches no values for is read from the
/// cells its references name.
fn charts_markdown<RS: Read + Seek>(reader: &mut Xlsx<RS>, charts: &[Element]) -> String {
    let references: Vec<String> = charts.iter().flat_map(ooxml::uncached_references).collect();
    let values = referenced_values(reader, &references);
    let charts: Vec<String> = charts
        .iter()
        .map(|chart| ooxml::chart_with_values(chart, &values))
        .filter(|chart| !chart.is_empty())
        .collect();
    charts.join("\n\n")
}

/// The values of the cells each chart data reference names, row by row,
/// by reference; references to more than `MAX_CHART_CELLS` cells are left out.
fn referenced_values<RS: Read + Seek>(
    reader: &mut Xlsx<RS>,
    references: &[String],
) -> HashMap<String, Vec<String>> {
    let ranges: Vec<(&String, String, Dimensions)> = references
        .iter()
        .filter_map(|reference| {
            let (sheet, cells) = parse_range(reference)?;
            (cells.len() <= MAX_CHART_CELLS).then_some((reference, sheet, cells))
        })
        .collect();
    let mut sheets: Vec<&str> = ranges.iter().map(|(_, sheet, _)| sheet.as_str()).collect();
    sheets.sort_unstable();
    sheets.dedup();
    let mut found: HashMap<(&str, u32, u32), String> = HashMap::new();
    for sheet in sheets {
        let Ok(mut cells) = reader.worksheet_cells_reader(sheet) else {
            continue;
        };
        while let Ok(Some(cell)) = cells.next_cell() {
            let (row, col) = cell.get_position();
            if ranges
                .iter()
                .any(|(_, name, range)| name == sheet && range.contains(row, col))
            {
                let text = cell_text(&Data::from(cell.get_value().clone()));
                found.insert((sheet, row, col), text);
            }
        }
    }
    ranges
        .iter()
        .map(|(reference, sheet, range)| {
            let values = (range.start.0..=range.end.0)
                .flat_map(|row| (range.start.1..=range.end.1).map(move |col| (row, col)))
                .map(|(row, col)| {
                    found
                        .get(&(sheet.as_str(), row, col))
                        .cloned()
                        .unwrap_or_default()
                })
                .collect();
            ((*reference).clone(), values)
        })
        .collect()
}

/// A sheet's formulas, and which values stand for none cached.
struct Formulas {
    range: calamine::Range<String>,
    uncached: fn(&Data) -> bool,
}

/// The cells of a range that hold something, at their sheet positions, and
/// the formulas whose cells have no cached value, as their text; `shown`
/// gives the text a cell shows when it is not its value's.
fn range_cells(
    range: &calamine::Range<Data>,
    formulas: &Formulas,
    workbook: &mut Workbook,
    shown: impl Fn((u32, u32), &Data) -> Option<String>,
) -> Vec<SheetCell> {
    let (top, left) = range.start().unwrap_or((0, 0));
    let mut cells = Vec::new();
    for (row, col, value) in range.used_cells() {
        let (row, col) = (top + row as u32, left + col as u32);
        let text = shown((row, col), value).unwrap_or_else(|| cell_text(value));
        if text.is_empty() {
            continue;
        }
        if !workbook.take_cell() {
            return cells;
        }
        cells.push(SheetCell::new(row, col, text));
    }
    let (top, left) = formulas.range.start().unwrap_or((0, 0));
    for (row, col, formula) in formulas.range.used_cells() {
        let (row, col) = (top + row as u32, left + col as u32);
        let uncached = range
            .get_value((row, col))
            .is_none_or(|value| (formulas.uncached)(value));
        let Some(text) = uncached.then(|| formula_text(formula)).flatten() else {
            continue;
        };
        if !workbook.take_cell() {
            break;
        }
        cells.push(SheetCell::new(row, col, text));
    }
    cells
}

/// A sheet's formulas, as calamine reads them; none when it cannot (its
/// formula decoder may fail, or panic, where the values read well).
fn formula_range(
    read: impl FnOnce() -> Option<calamine::Range<String>>,
) -> calamine::Range<String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(read))
        .ok()
        .flatten()
        .unwrap_or_else(calamine::Range::empty)
}

/// What a cell whose formula has no cached value shows: the formula, as
/// files written by scripts (openpyxl, xlwt) leave it for the spreadsheet
/// program to compute. A cell of a shared formula other than its first
/// stays empty (its text would need the formula moved to it).
fn uncached_formula(formula: XlsxFormulaMetadata) -> Option<String> {
    match formula {
        XlsxFormulaMetadata::Normal { formula } | XlsxFormulaMetadata::Shared { formula, .. } => {
            formula_text(&formula)
        }
        _ => None,
    }
}

/// A formula as a spreadsheet's formula bar shows it, `=SUM(B2:B3)`: an
/// OpenDocument formula (`of:=SUM([.B2:.B3])`) without its namespace and
/// its references' brackets and dots.
fn formula_text(formula: &str) -> Option<String> {
    let formula = formula.trim();
    let formula = match formula.split_once(":=") {
        Some((namespace, rest)) if namespace.chars().all(|c| c.is_ascii_alphabetic()) => {
            OPENDOCUMENT_REFERENCE
                .replace_all(rest, |caps: &Captures| caps[1].replace(":.", ":"))
                .into_owned()
        }
        _ => formula.trim_start_matches('=').to_owned(),
    };
    (!formula.is_empty()).then(|| format!("={formula}"))
}

/// An OpenDocument cell or range reference, `[.B2:.B3]` or `[Sheet2.A1]`.
static OPENDOCUMENT_REFERENCE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\[\.?([^\]\[]*)\]").expect("static regex"));

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
                            merged: true,
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

/// A number as its number format shows it; `None` for other values, and for
/// numbers the format does not render.
fn formatted(format: &NumberFormat, value: &Data) -> Option<String> {
    match value {
        Data::Float(f) => format.render(*f),
        Data::Int(i) => format.render(*i as f64),
        _ => None,
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
/// a time of day as `14:30` (`14:30:05` with seconds), a duration as `36:00`.
fn date_text(date: &calamine::ExcelDateTime) -> String {
    let serial = date.as_f64();
    if date.is_duration() {
        // Hours past 24 are kept (`[h]:mm`); seconds only when there are any,
        // as for times of day.
        let seconds = (serial * 86_400.0).round() as i64;
        let (hours, minutes) = (seconds / 3600, (seconds % 3600) / 60);
        return match seconds % 60 {
            0 => format!("{hours}:{minutes:02}"),
            seconds => format!("{hours}:{minutes:02}:{seconds:02}"),
        };
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
    use crate::formats::ooxml::tests::build_zip;

    const MAIN: &str = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
    const RELS: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

    /// An xlsx package: worksheets given as (name, `sheetData` rows), the
    /// `styleSheet` content, and chart sheets as (name, chart part).
    fn xlsx_package(sheets: &[(&str, &str)], styles: &str, charts: &[(&str, &str)]) -> Vec<u8> {
        let mut names = String::new();
        let mut rels = String::new();
        let mut parts: Vec<(String, String)> = Vec::new();
        for (i, (name, rows)) in sheets.iter().enumerate() {
            let n = i + 1;
            names.push_str(&format!(
                r#"<sheet name="{name}" sheetId="{n}" r:id="rId{n}"/>"#
            ));
            rels.push_str(&format!(
                r#"<Relationship Id="rId{n}" Type="{RELS}/worksheet" Target="worksheets/sheet{n}.xml"/>"#
            ));
            parts.push((
                format!("xl/worksheets/sheet{n}.xml"),
                format!(r#"<worksheet xmlns="{MAIN}"><sheetData>{rows}</sheetData></worksheet>"#),
            ));
        }
        let package_rels = "http://schemas.openxmlformats.org/package/2006/relationships";
        for (i, (name, chart)) in charts.iter().enumerate() {
            let (n, id) = (i + 1, sheets.len() + i + 1);
            names.push_str(&format!(
                r#"<sheet name="{name}" sheetId="{id}" r:id="rId{id}"/>"#
            ));
            rels.push_str(&format!(
                r#"<Relationship Id="rId{id}" Type="{RELS}/chartsheet" Target="chartsheets/sheet{n}.xml"/>"#
            ));
            let link = |kind: &str, target: String| {
                format!(
                    r#"<Relationships xmlns="{package_rels}"><Relationship Id="rId1" Type="{RELS}/{kind}" Target="{target}"/></Relationships>"#
                )
            };
            parts.extend([
                (
                    format!("xl/chartsheets/sheet{n}.xml"),
                    format!(r#"<chartsheet xmlns="{MAIN}" xmlns:r="{RELS}"><drawing r:id="rId1"/></chartsheet>"#),
                ),
                (
                    format!("xl/chartsheets/_rels/sheet{n}.xml.rels"),
                    link("drawing", format!("../drawings/drawing{n}.xml")),
                ),
                (format!("xl/drawings/drawing{n}.xml"), "<wsDr/>".into()),
                (
                    format!("xl/drawings/_rels/drawing{n}.xml.rels"),
                    link("chart", format!("../charts/chart{n}.xml")),
                ),
                (format!("xl/charts/chart{n}.xml"), chart.to_string()),
            ]);
        }
        parts.push((
            "_rels/.rels".into(),
            format!(
                r#"<Relationships xmlns="{package_rels}"><Relationship Id="rId1" Type="{RELS}/officeDocument" Target="xl/workbook.xml"/></Relationships>"#
            ),
        ));
        parts.push((
            "xl/workbook.xml".into(),
            format!(
                r#"<workbook xmlns="{MAIN}" xmlns:r="{RELS}"><sheets>{names}</sheets></workbook>"#
            ),
        ));
        parts.push((
            "xl/_rels/workbook.xml.rels".into(),
            format!(
                r#"<Relationships xmlns="{package_rels}">{rels}<Relationship Id="rIdS" Type="{RELS}/styles" Target="styles.xml"/></Relationships>"#
            ),
        ));
        parts.push((
            "xl/styles.xml".into(),
            format!(r#"<styleSheet xmlns="{MAIN}">{styles}</styleSheet>"#),
        ));
        let parts: Vec<(&str, &[u8])> = parts
            .iter()
            .map(|(n, x)| (n.as_str(), x.as_bytes()))
            .collect();
        build_zip(&parts)
    }

    fn xlsx_markdown(bytes: &[u8]) -> String {
        xlsx(bytes, &Limits::default()).unwrap().markdown
    }

    #[test]
    fn a_chart_without_cached_values_reads_the_cells_it_names() {
        let rows = r#"<row r="1"><c r="A1" t="inlineStr"><is><t>Units</t></is></c></row><row r="2"><c r="A2" t="inlineStr"><is><t>m1</t></is></c><c r="B2"><v>10</v></c></row><row r="3"><c r="A3" t="inlineStr"><is><t>m2</t></is></c><c r="B3"><v>20</v></c></row>"#;
        let chart = |series: &str| {
            format!(
                r#"<chartSpace xmlns:a="a"><chart><title><tx><rich><a:p><a:r><a:t>Units chart</a:t></a:r></a:p></rich></tx></title><plotArea><barChart>{series}</barChart></plotArea></chart></chartSpace>"#
            )
        };
        let referenced = chart(
            "<ser><tx><strRef><f>'Data'!$A$1</f></strRef></tx><cat><numRef><f>'Data'!$A$2:$A$3</f></numRef></cat><val><numRef><f>Data!$B$2:$B$3</f></numRef></val></ser>",
        );
        let unresolved = chart("<ser><val><numRef><f>Gone!$B$2:$B$3</f></numRef></val></ser>");
        let bytes = xlsx_package(
            &[("Data", rows)],
            "",
            &[("Chart", &referenced), ("Lost", &unresolved)],
        );
        let markdown = xlsx_markdown(&bytes);
        assert!(
            markdown.ends_with(
                "## Chart\n\nBar chart: Units chart\n\n\
                 |  | Units |\n| --- | --- |\n| m1 | 10 |\n| m2 | 20 |\n\n\
                 ## Lost\n\nBar chart: Units chart\n"
            ),
            "{markdown}"
        );
    }

    #[test]
    fn threaded_comments_are_read_with_their_replies_and_people() {
        let rows = r#"<row r="1"><c r="A1" t="inlineStr"><is><t>Ducks</t></is></c></row><row r="2"><c r="A2"><v>80</v></c></row>"#;
        let notice = "[Threaded comment]\n\nYour version of Excel allows you to read this threaded comment; however, any edits to it will get removed if the file is opened in a newer version of Excel. Learn more: https://go.microsoft.com/fwlink/?linkid=870924\n\nComment:\n    ";
        let legacy = format!(
            r#"<comments xmlns="{MAIN}"><authors><author>tc={{T1}}</author><author>tc={{T3}}</author><author>Ada</author></authors><commentList><comment ref="A2" authorId="0"><text><t>{notice}Too low?</t></text></comment><comment ref="A1" authorId="1"><text><t>{notice}Count ducks only</t></text></comment><comment ref="B1" authorId="2"><text><t>Plain note</t></text></comment></commentList></comments>"#
        );
        let threads = r#"<ThreadedComments xmlns="t"><threadedComment ref="A2" dT="2026-06-18T17:12:37.41" personId="{P1}" id="{T1}"><text>Too low?</text></threadedComment><threadedComment ref="A2" dT="2026-06-18T17:15:52.31" personId="{P2}" id="{T2}" parentId="{T1}"><text>It was a cold year</text></threadedComment></ThreadedComments>"#;
        let people = r#"<personList xmlns="t"><person displayName="Jane Smith (JS)" id="{P1}"/><person displayName="Marcus Sterling" id="{P2}"/></personList>"#;
        let sheet_rels = format!(
            r#"<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId2" Type="http://schemas.microsoft.com/office/2017/10/relationships/threadedComment" Target="../threadedComments/threadedComment1.xml"/><Relationship Id="rId1" Type="{RELS}/comments" Target="../comments1.xml"/></Relationships>"#
        );
        let bytes = xlsx_package(&[("Data", rows)], "", &[]);
        let limits = Limits::default();
        let mut package = Package::open(&bytes, &limits).unwrap();
        let workbook_rels = String::from_utf8(package.part("xl/_rels/workbook.xml.rels").unwrap())
            .unwrap()
        .replace(
            "</Relationships>",
            r#"<Relationship Id="rIdP" Type="http://schemas.microsoft.com/office/2017/10/relationships/person" Target="persons/person.xml"/></Relationships>"#,
        );
        let with_comments = package
            .with_parts_replaced(&[
                ("xl/worksheets/_rels/sheet1.xml.rels", sheet_rels.as_bytes()),
                ("xl/comments1.xml", legacy.as_bytes()),
                (
                    "xl/threadedComments/threadedComment1.xml",
                    threads.as_bytes(),
                ),
                ("xl/persons/person.xml", people.as_bytes()),
                ("xl/_rels/workbook.xml.rels", workbook_rels.as_bytes()),
            ])
            .unwrap();
        assert_eq!(
            xlsx_markdown(&with_comments),
            "## Data\n\n| Ducks |\n| --- |\n| 80 |\n\n\
             > Comment (Jane Smith (JS), 2026-06-18T17:12:37) on A2: Too low?\n\
             > Comment (Marcus Sterling, 2026-06-18T17:15:52) on A2: It was a cold year\n\
             > Comment on A1: Count ducks only\n\n\
             > Comment (Ada) on B1: Plain note\n"
        );
    }

    #[test]
    fn a_legacy_copy_without_its_threaded_comment_keeps_the_thread_without_the_notice() {
        let rows = r#"<row r="1"><c r="A1" t="inlineStr"><is><t>Ducks</t></is></c></row><row r="2"><c r="A2"><v>80</v></c></row>"#;
        let notice = "[Threaded comment]\n\nYour version of Excel allows you to read this threaded comment; however, any edits to it will get removed if the file is opened in a newer version of Excel. Learn more: https://go.microsoft.com/fwlink/?linkid=870924\n\nComment:\n    ";
        let reply = "\nReply:\n    It was a cold year";
        let legacy = format!(
            r#"<comments xmlns="{MAIN}"><authors><author>Jane Smith</author></authors><commentList><comment ref="A2" authorId="0"><text><t>{notice}Too low?{reply}</t></text></comment></commentList></comments>"#
        );
        let sheet_rels = format!(
            r#"<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="{RELS}/comments" Target="../comments1.xml"/></Relationships>"#
        );
        let bytes = xlsx_package(&[("Data", rows)], "", &[]);
        let limits = Limits::default();
        let with_comments = Package::open(&bytes, &limits)
            .unwrap()
            .with_parts_replaced(&[
                ("xl/worksheets/_rels/sheet1.xml.rels", sheet_rels.as_bytes()),
                ("xl/comments1.xml", legacy.as_bytes()),
            ])
            .unwrap();
        assert_eq!(
            xlsx_markdown(&with_comments),
            "## Data\n\n| Ducks |\n| --- |\n| 80 |\n\n\
             > Comment (Jane Smith) on A2: Too low? Reply: It was a cold year\n"
        );
    }

    #[test]
    fn a_chart_on_a_worksheet_follows_its_tables() {
        let rows = r#"<row r="1"><c r="A1" t="inlineStr"><is><t>Month</t></is></c><c r="B1" t="inlineStr"><is><t>Signups</t></is></c></row><row r="2"><c r="A2" t="inlineStr"><is><t>Jan</t></is></c><c r="B2"><v>5</v></c></row>"#;
        let chart = r#"<chartSpace xmlns:a="a"><chart><title><tx><rich><a:p><a:r><a:t>Signups trend</a:t></a:r></a:p></rich></tx></title><plotArea><lineChart><ser><tx><strRef><f>Data!$B$1</f></strRef></tx><cat><strRef><f>Data!$A$2</f></strRef></cat><val><numRef><f>Data!$B$2</f></numRef></val></ser></lineChart></plotArea></chart></chartSpace>"#;
        let link = |kind: &str, target: &str| {
            format!(
                r#"<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="{RELS}/{kind}" Target="{target}"/></Relationships>"#
            )
        };
        let (to_drawing, to_chart) = (
            link("drawing", "../drawings/drawing1.xml"),
            link("chart", "../charts/chart1.xml"),
        );
        let bytes = xlsx_package(&[("Data", rows)], "", &[]);
        let limits = Limits::default();
        let with_chart = Package::open(&bytes, &limits)
            .unwrap()
            .with_parts_replaced(&[
                ("xl/worksheets/_rels/sheet1.xml.rels", to_drawing.as_bytes()),
                ("xl/drawings/drawing1.xml", b"<wsDr/>"),
                ("xl/drawings/_rels/drawing1.xml.rels", to_chart.as_bytes()),
                ("xl/charts/chart1.xml", chart.as_bytes()),
            ])
            .unwrap();
        assert_eq!(
            xlsx_markdown(&with_chart),
            "## Data\n\n| Month | Signups |\n| --- | --- |\n| Jan | 5 |\n\n\
             Line chart: Signups trend\n\n|  | Signups |\n| --- | --- |\n| Jan | 5 |\n"
        );
    }

    #[test]
    fn xlsx_numbers_show_through_their_number_formats() {
        let styles = r#"<numFmts count="2"><numFmt numFmtId="164" formatCode="&quot;$&quot;#,##0.00"/><numFmt numFmtId="165" formatCode="[$€-407] #,##0.00"/></numFmts>
            <cellXfs count="7"><xf numFmtId="0"/><xf numFmtId="9"/><xf numFmtId="10"/><xf numFmtId="164"/><xf numFmtId="165"/><xf numFmtId="14"/><xf numFmtId="11"/></cellXfs>"#;
        let head: String = ["Pct", "Rate", "Price", "Euro", "Day", "Big", "Pi"]
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let at = kts_record::cell_reference(0, i as u32);
                format!(r#"<c r="{at}" t="inlineStr"><is><t>{h}</t></is></c>"#)
            })
            .collect();
        // Cells without a reference, and an empty styled one, still line up.
        let rows = format!(
            r#"<row r="1">{head}</row><row r="2"><c s="1"><v>0.25</v></c><c s="2"><v>0.0725</v></c><c r="C2" s="3"><v>1234.5</v></c><c r="J2" s="2"/><c r="D2" s="4"><v>99.9</v></c><c s="5"><v>45352</v></c><c s="6"><v>12345.678</v></c><c><v>3.14159</v></c></row>"#
        );
        assert_eq!(
            xlsx_markdown(&xlsx_package(&[("Rates", &rows)], styles, &[])),
            "## Rates\n\n| Pct | Rate | Price | Euro | Day | Big | Pi |\n\
             | --- | --- | --- | --- | --- | --- | --- |\n\
             | 25% | 7.25% | $1,234.50 | € 99.90 | 2024-03-01 | 12345.678 | 3.14159 |\n"
        );
    }

    const ODS_NAMESPACES: &str = r#"xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:dc="http://purl.org/dc/elements/1.1/""#;

    /// An ods package of tables (`table:table` elements) and, when given,
    /// the content of `meta.xml`'s `office:meta`.
    fn ods_package(tables: &str, meta: Option<&str>) -> Vec<u8> {
        let content = format!(
            r#"<?xml version="1.0" encoding="UTF-8"?><office:document-content {ODS_NAMESPACES}><office:body><office:spreadsheet>{tables}</office:spreadsheet></office:body></office:document-content>"#
        );
        let meta = meta.map(|meta| {
            format!(
                r#"<office:document-meta {ODS_NAMESPACES}><office:meta>{meta}</office:meta></office:document-meta>"#
            )
        });
        let mut parts: Vec<(&str, &[u8])> = vec![
            (
                "mimetype",
                b"application/vnd.oasis.opendocument.spreadsheet",
            ),
            ("META-INF/manifest.xml", b"<manifest:manifest/>"),
            ("content.xml", content.as_bytes()),
        ];
        if let Some(meta) = &meta {
            parts.push(("meta.xml", meta.as_bytes()));
        }
        build_zip(&parts)
    }

    fn ods_markdown(bytes: &[u8]) -> String {
        ods(bytes, &Limits::default()).unwrap().markdown
    }

    /// An ods cell: a string, or a value of `kind` showing `shown`.
    fn ods_cell(kind: &str, value: &str, shown: &str) -> String {
        let value = match kind {
            "string" => String::new(),
            "date" => format!(r#" office:date-value="{value}""#),
            _ => format!(r#" office:value="{value}""#),
        };
        format!(
            r#"<table:table-cell office:value-type="{kind}"{value}><text:p>{shown}</text:p></table:table-cell>"#
        )
    }

    #[test]
    fn formulas_without_a_cached_value_show_the_formula() {
        let rows = r#"<row r="1"><c r="A1" t="inlineStr"><is><t>Area</t></is></c><c r="B1" t="inlineStr"><is><t>Q1</t></is></c></row><row r="2"><c r="A2" t="inlineStr"><is><t>Opex</t></is></c><c r="B2"><f>B3*2</f><v>1600</v></c></row><row r="3"><c r="A3" t="inlineStr"><is><t>Capex</t></is></c><c r="B3"><v>800</v></c></row><row r="4"><c r="A4" t="inlineStr"><is><t>Total</t></is></c><c r="B4"><f>SUM(B2:B3)</f><v></v></c></row><row r="5"><c r="A5" t="inlineStr"><is><t>Note</t></is></c><c r="B5" t="str"><f>IF(B4&gt;0,"","low")</f><v></v></c></row>"#;
        assert_eq!(
            xlsx_markdown(&xlsx_package(&[("Summary", rows)], "", &[])),
            "## Summary\n\n| Area | Q1 |\n| --- | --- |\n| Opex | 1600 |\n| Capex | 800 |\n\
             | Total | =SUM(B2:B3) |\n| Note |  |\n"
        );
        let table = format!(
            r#"<table:table table:name="Leases"><table:table-row>{}{}</table:table-row><table:table-row>{}<table:table-cell table:formula="of:=[.A2]*1.25"/></table:table-row><table:table-row>{}<table:table-cell table:formula="of:=SUM([.A2:.A3])" office:value-type="float" office:value="82500"><text:p>82500</text:p></table:table-cell></table:table-row></table:table>"#,
            ods_cell("string", "", "Cost"),
            ods_cell("string", "", "Incl. VAT"),
            ods_cell("float", "41250", "41250"),
            ods_cell("float", "41250", "41250"),
        );
        assert_eq!(
            ods_markdown(&ods_package(&table, None)),
            "## Leases\n\n| Cost | Incl. VAT |\n| --- | --- |\n| 41250 | =A2*1.25 |\n| 41250 | 82500 |\n"
        );
    }

    #[test]
    fn ods_numbers_show_the_text_the_file_shows() {
        let text = |s| ods_cell("string", "", s);
        let table = format!(
            r#"<table:table table:name="Rates">
            <table:table-row table:number-rows-repeated="2"><table:table-cell table:number-columns-repeated="3"/></table:table-row>
            <table:table-row>{}{}{}</table:table-row>
            <table:table-row>{}{}</table:table-row>
            <table:table-row>{}{}</table:table-row>
            <table:table-row table:number-rows-repeated="2">{}<table:table-cell office:value-type="float" office:value="3.14159" table:number-columns-repeated="2"><text:p>3.14</text:p></table:table-cell></table:table-row>
            <table:table-row>{}{}<table:table-cell office:value-type="float" office:value="7"/></table:table-row>
            </table:table>"#,
            text("Metric"),
            text("Value"),
            text("Also"),
            text("rate"),
            ods_cell("percentage", "0.25", "25%"),
            text("price"),
            ods_cell("currency", "1234.5", "1.234,50 €"),
            text("pi"),
            text("day"),
            ods_cell("date", "2024-02-29", "29.02.2024"),
        );
        assert_eq!(
            ods_markdown(&ods_package(&table, None)),
            "## Rates\n\n| Metric | Value | Also |\n| --- | --- | --- |\n\
             | rate | 25% |  |\n| price | 1.234,50 € |  |\n\
             | pi | 3.14 | 3.14 |\n| pi | 3.14 | 3.14 |\n| day | 2024-02-29 | 7 |\n"
        );
    }

    fn biff_record(kind: u16, body: &[u8]) -> Vec<u8> {
        let mut record = kind.to_le_bytes().to_vec();
        record.extend((body.len() as u16).to_le_bytes());
        record.extend(body);
        record
    }

    /// A BIFF8 workbook of one sheet: the workbook's number formats (id,
    /// code) and cell styles (a format id each), then the sheet's records.
    fn xls_workbook(formats: &[(u16, &str)], styles: &[u16], sheet: &[Vec<u8>]) -> Vec<u8> {
        let bof = |kind: u16| {
            let mut body = vec![0x00, 0x06];
            body.extend(kind.to_le_bytes());
            body.resize(16, 0);
            biff_record(0x0809, &body)
        };
        let mut globals = bof(0x0005);
        for (id, code) in formats {
            let mut body = id.to_le_bytes().to_vec();
            body.extend((code.len() as u16).to_le_bytes());
            body.push(0);
            body.extend(code.as_bytes());
            globals.extend(biff_record(0x041E, &body));
        }
        for format in styles {
            let mut body = vec![0, 0];
            body.extend(format.to_le_bytes());
            body.resize(20, 0);
            globals.extend(biff_record(0x00E0, &body));
        }
        let sheet_offset = globals.len() + 4 + 10 + 4;
        let mut bound_sheet = (sheet_offset as u32).to_le_bytes().to_vec();
        bound_sheet.extend([0, 0, 2, 0]);
        bound_sheet.extend(b"S1");
        globals.extend(biff_record(0x0085, &bound_sheet));
        globals.extend(biff_record(0x000A, &[]));
        assert_eq!(globals.len(), sheet_offset);
        let mut stream = globals;
        stream.extend(bof(0x0010));
        stream.extend(sheet.concat());
        stream.extend(biff_record(0x000A, &[]));
        let mut file = cfb::CompoundFile::create(Cursor::new(Vec::new())).unwrap();
        std::io::Write::write_all(&mut file.create_stream("/Workbook").unwrap(), &stream).unwrap();
        file.into_inner().into_inner()
    }

    #[test]
    fn xls_numbers_show_through_their_number_formats() {
        let at = |row: u16, col: u16, style: u16| {
            [row, col, style]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect::<Vec<u8>>()
        };
        let label = |row, col, text: &str| {
            let mut body = at(row, col, 0);
            body.extend((text.len() as u16).to_le_bytes());
            body.push(0);
            body.extend(text.as_bytes());
            biff_record(0x0204, &body)
        };
        // An RK value holding an integer: the integer shifted left by two, flag 2.
        let rk_int = |value: u32| ((value << 2) | 2).to_le_bytes();
        let mut number = at(1, 0, 1);
        number.extend(0.125f64.to_le_bytes());
        let mut rk = at(1, 1, 3);
        rk.extend(rk_int(1234));
        let mut mul_rk = [2u16, 0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<u8>>();
        for (style, value) in [(2u16, 1), (0, 7)] {
            mul_rk.extend(style.to_le_bytes());
            mul_rk.extend(rk_int(value));
        }
        mul_rk.extend(1u16.to_le_bytes());
        let sheet = [
            label(0, 0, "Share"),
            label(0, 1, "Count"),
            biff_record(0x0203, &number),
            biff_record(0x027E, &rk),
            biff_record(0x00BD, &mul_rk),
        ];
        let bytes = xls_workbook(&[(164, "0.0%")], &[0, 164, 10, 3], &sheet);
        assert_eq!(
            xls(&bytes, &Limits::default()).unwrap().markdown,
            "## S1\n\n| Share | Count |\n| --- | --- |\n| 12.5% | 1,234 |\n| 100.00% | 7 |\n"
        );
    }

    #[test]
    fn ods_comments_follow_their_table() {
        let comment = r#"<office:annotation><dc:creator>Bob</dc:creator><dc:date>2024-01-02T10:00:00</dc:date><text:p>Reorder</text:p><text:p>soon</text:p></office:annotation>"#;
        let table = format!(
            r#"<table:table table:name="Inventory"><table:table-row><table:table-cell office:value-type="string"><text:p>Item</text:p></table:table-cell><table:table-cell office:value-type="string"><text:p>Qty</text:p></table:table-cell></table:table-row>
            <table:table-row table:number-rows-repeated="2"><table:table-cell table:number-columns-repeated="2"/></table:table-row>
            <table:table-row><table:table-cell office:value-type="string">{comment}<text:p>Washer</text:p></table:table-cell><table:table-cell office:value-type="float" office:value="0"><text:p>0</text:p></table:table-cell></table:table-row></table:table>"#
        );
        assert_eq!(
            ods_markdown(&ods_package(&table, None)),
            "## Inventory\n\n| Item | Qty |\n| --- | --- |\n\n| Washer | 0 |\n| --- | --- |\n\n\
             > Comment (Bob) on A4: Reorder soon\n"
        );
    }

    #[test]
    fn an_ods_title_and_author_come_from_its_meta() {
        let table = r#"<table:table table:name="Sheet1"><table:table-row><table:table-cell office:value-type="string"><text:p>x</text:p></table:table-cell></table:table-row></table:table>"#;
        let meta = "<dc:title>Stock 2024</dc:title><dc:creator>Bob</dc:creator>";
        let bytes = ods_package(table, Some(meta));
        let converted = ods(&bytes, &Limits::default()).unwrap();
        assert_eq!(converted.title.as_deref(), Some("Stock 2024"));
        assert_eq!(converted.properties["author"], "Bob");
    }

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
        let duration = |v| ExcelDateTime::new(v, ExcelDateTimeType::TimeDelta, false);
        assert_eq!(date_text(&duration(1.5)), "36:00");
        assert_eq!(date_text(&duration(1.5 + 30.0 / 86_400.0)), "36:00:30");
    }

    #[test]
    fn merged_cells_repeat_their_value() {
        let cells = vec![
            SheetCell::new(0, 0, "North".into()),
            SheetCell::new(0, 1, "10".into()),
            SheetCell::new(1, 1, "12".into()),
        ];
        let merge = Dimensions::new((0, 0), (1, 0));
        assert_eq!(
            sheet_body(cells, &[merge], &[]),
            "| North | 10 |\n| --- | --- |\n| North | 12 |"
        );
    }
}
