//! What a legacy `.xls` must pass before calamine reads it.
//!
//! calamine trusts the sizes a workbook declares: it reserves memory for as
//! many FAT sectors as the compound file's header claims, walks the sector
//! chains without looking for cycles, and reserves a cell for every cell of a
//! sheet's declared dimensions. A damaged file can claim terabytes, and a
//! failed allocation aborts the whole process, which no panic guard catches.
//! So the container is opened first by the `cfb` crate, which checks its
//! header and chains against the file, and the sheets' dimension records are
//! checked against what an `.xls` sheet can hold.

use std::io::{Cursor, Read};

use cfb::CompoundFile;

use super::ConvertError;

/// The largest sheet the xls format (BIFF8) can describe: 65,536 rows of 256
/// columns. Earlier BIFF versions hold less.
const MAX_SHEET_CELLS: u64 = 65_536 * 256;

/// The DIMENSIONS record of a sheet: its used range.
const DIMENSIONS: u16 = 0x0200;

/// Vets a workbook; its Workbook stream, for what calamine does not read.
pub fn vet(bytes: &[u8]) -> Result<Vec<u8>, ConvertError> {
    let damaged = |what: String| ConvertError::corrupt(format!("damaged workbook: {what}"));
    let mut file = CompoundFile::open(Cursor::new(bytes)).map_err(|e| damaged(format!("{e}")))?;
    let Some(name) = ["/Workbook", "/Book"]
        .into_iter()
        .find(|name| file.is_stream(name))
    else {
        return Err(damaged("it holds no Workbook stream".into()));
    };
    let mut stream = Vec::new();
    file.open_stream(name)
        .and_then(|s| s.take(bytes.len() as u64).read_to_end(&mut stream))
        .map_err(|e| damaged(format!("its {} stream cannot be read: {e}", &name[1..])))?;
    for (kind, body) in records(&stream) {
        if kind == DIMENSIONS {
            let cells = declared_cells(body);
            if cells > MAX_SHEET_CELLS {
                return Err(damaged(format!(
                    "a sheet claims {cells} cells; an .xls sheet holds at most {MAX_SHEET_CELLS}"
                )));
            }
        }
    }
    Ok(stream)
}

/// The BIFF records of a stream: a 2-byte type, a 2-byte length, the body.
pub fn records(stream: &[u8]) -> impl Iterator<Item = (u16, &[u8])> {
    let mut rest = stream;
    std::iter::from_fn(move || {
        let kind = u16::from_le_bytes(rest.get(0..2)?.try_into().ok()?);
        let len = u16::from_le_bytes(rest.get(2..4)?.try_into().ok()?) as usize;
        let body = rest.get(4..4 + len)?;
        rest = &rest[4 + len..];
        Some((kind, body))
    })
}

/// How many cells calamine reserves for a DIMENSIONS record: it computes the
/// used range with 32-bit arithmetic that wraps when the first row lies past
/// the last, so the count follows the same arithmetic.
fn declared_cells(body: &[u8]) -> u64 {
    let u16_at = |at: usize| u16::from_le_bytes([body[at], body[at + 1]]) as u32;
    let u32_at = |at: usize| u32::from_le_bytes(body[at..at + 4].try_into().unwrap());
    let (first_row, rows_end, mut first_col, cols_end) = match body.len() {
        10 => (u16_at(0), u16_at(2), u16_at(4), u16_at(6)),
        14 => (u32_at(0), u32_at(4), u16_at(8), u16_at(10)),
        _ => return 0,
    };
    if first_col > 0xFF || cols_end < first_col {
        first_col = 0;
    }
    if rows_end == 0 || cols_end == 0 {
        return 1;
    }
    let rows = (rows_end - 1).wrapping_sub(first_row) as u64 + 1;
    let cols = (cols_end - 1).wrapping_sub(first_col) as u64 + 1;
    rows.saturating_mul(cols)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dimensions(first_row: u32, rows_end: u32, first_col: u16, cols_end: u16) -> Vec<u8> {
        let mut body = Vec::new();
        body.extend(first_row.to_le_bytes());
        body.extend(rows_end.to_le_bytes());
        body.extend(first_col.to_le_bytes());
        body.extend(cols_end.to_le_bytes());
        body.extend([0, 0]);
        body
    }

    #[test]
    fn declared_cells_follow_the_used_range() {
        assert_eq!(declared_cells(&dimensions(0, 10, 0, 4)), 40);
        assert_eq!(
            declared_cells(&dimensions(0, 65_536, 0, 256)),
            MAX_SHEET_CELLS
        );
        assert_eq!(declared_cells(&dimensions(0, 0, 0, 0)), 1);
        // A first row past the last wraps around to four billion rows.
        assert!(declared_cells(&dimensions(10, 5, 0, 1)) > 4_000_000_000);
    }

    #[test]
    fn records_stop_at_a_cut_short_one() {
        let stream = [0x09, 0x08, 2, 0, 0xAA, 0xBB, 0x00, 0x02, 14, 0];
        let all: Vec<(u16, &[u8])> = records(&stream).collect();
        assert_eq!(all, vec![(0x0809, &[0xAA, 0xBB][..])]);
    }

    #[test]
    fn a_sheet_larger_than_the_format_allows_is_refused() {
        let mut stream = Vec::new();
        let body = dimensions(0, 4_000_000, 0, 200);
        stream.extend(DIMENSIONS.to_le_bytes());
        stream.extend((body.len() as u16).to_le_bytes());
        stream.extend(body);
        let mut file = CompoundFile::create(Cursor::new(Vec::new())).unwrap();
        std::io::Write::write_all(&mut file.create_stream("/Workbook").unwrap(), &stream).unwrap();
        let bytes = file.into_inner().into_inner();
        let error = vet(&bytes).unwrap_err();
        assert!(
            error.message.contains("a sheet claims 800000000 cells"),
            "{error:?}"
        );
        assert!(vet(b"not a compound file at all, just text").is_err());
    }
}
