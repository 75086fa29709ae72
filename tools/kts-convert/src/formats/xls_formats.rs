//! What calamine does not read from an `.xls` workbook: the number formats
//! of its cells, from the records of its Workbook stream (BIFF8, Excel 97
//! and later; earlier versions keep their plain values).

use std::collections::HashMap;

use super::number_format::{NumberFormat, builtin_code};
use super::xls_guard::records;

const BOF: u16 = 0x0809;
const EOF: u16 = 0x000A;
const FORMAT: u16 = 0x041E;
const XF: u16 = 0x00E0;
const BOUND_SHEET: u16 = 0x0085;
const NUMBER: u16 = 0x0203;
const RK: u16 = 0x027E;
const MUL_RK: u16 = 0x00BD;
const FORMULA: u16 = 0x0006;
const BIFF8: u16 = 0x0600;

/// The number formats of a workbook's cells that have one worth rendering.
#[derive(Debug, Default)]
pub struct CellFormats {
    /// By cell style (XF record) index.
    styles: Vec<Option<NumberFormat>>,
    /// For each sheet, in the order the workbook lists them: the style of
    /// each number cell, by (row, column).
    sheets: Vec<HashMap<(u32, u32), usize>>,
}

impl CellFormats {
    pub fn read(stream: &[u8]) -> Self {
        let mut codes: HashMap<u16, String> = HashMap::new();
        let mut style_formats: Vec<u16> = Vec::new();
        let mut sheet_offsets = Vec::new();
        for (kind, body) in records(stream) {
            match kind {
                BOF if u16_at(body, 0) != Some(BIFF8) => return Self::default(),
                FORMAT => {
                    let code = body.get(2..).and_then(unicode_string);
                    if let (Some(id), Some(code)) = (u16_at(body, 0), code) {
                        codes.insert(id, code);
                    }
                }
                XF => style_formats.extend(u16_at(body, 2)),
                BOUND_SHEET => sheet_offsets.extend(u32_at(body, 0)),
                EOF => break,
                _ => {}
            }
        }
        let styles: Vec<Option<NumberFormat>> = style_formats
            .iter()
            .map(|id| match codes.get(id) {
                Some(code) => NumberFormat::parse(code),
                None => NumberFormat::parse(builtin_code(u32::from(*id))?),
            })
            .collect();
        let sheets = sheet_offsets
            .iter()
            .map(|&offset| {
                let sheet = stream.get(offset as usize..).unwrap_or_default();
                number_styles(sheet, &styles)
            })
            .collect();
        Self { styles, sheets }
    }

    /// The number format of the cell at (row, column) of the sheet at `index`.
    pub fn get(&self, index: usize, at: (u32, u32)) -> Option<&NumberFormat> {
        let style = *self.sheets.get(index)?.get(&at)?;
        self.styles.get(style)?.as_ref()
    }
}

/// The style of each number cell of a sheet's records whose style has a
/// format worth rendering.
fn number_styles(sheet: &[u8], styles: &[Option<NumberFormat>]) -> HashMap<(u32, u32), usize> {
    let mut cells = HashMap::new();
    let mut add = |row: u16, col: u16, style: u16| {
        if styles.get(style as usize).is_some_and(Option::is_some) {
            cells.insert((u32::from(row), u32::from(col)), style as usize);
        }
    };
    for (kind, body) in records(sheet) {
        match kind {
            NUMBER | RK | FORMULA => {
                if let (Some(row), Some(col), Some(style)) =
                    (u16_at(body, 0), u16_at(body, 2), u16_at(body, 4))
                {
                    add(row, col, style);
                }
            }
            // A row, a first column, then a style and a value per column.
            MUL_RK => {
                let (Some(row), Some(first)) = (u16_at(body, 0), u16_at(body, 2)) else {
                    continue;
                };
                let values = body
                    .get(4..body.len().saturating_sub(2))
                    .unwrap_or_default();
                for (i, value) in values.chunks_exact(6).enumerate() {
                    if let Some(style) = u16_at(value, 0) {
                        add(row, first.saturating_add(i as u16), style);
                    }
                }
            }
            EOF => break,
            _ => {}
        }
    }
    cells
}

/// An `XLUnicodeString`: a length, a flag for 2-byte characters, the
/// characters.
fn unicode_string(body: &[u8]) -> Option<String> {
    let length = u16_at(body, 0)? as usize;
    let wide = body.get(2)? & 1 == 1;
    let chars = &body[3..];
    if wide {
        let units: Vec<u16> = chars
            .get(..length * 2)?
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        Some(String::from_utf16_lossy(&units))
    } else {
        Some(
            chars
                .get(..length)?
                .iter()
                .map(|&b| char::from(b))
                .collect(),
        )
    }
}

fn u16_at(body: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(body.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(body: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(body.get(at..at + 4)?.try_into().ok()?))
}
