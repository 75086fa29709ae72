//! Document properties from the `\x05SummaryInformation` stream, an OLE
//! property set ([MS-OLEPS] 2.21): title, subject, author, keywords, last
//! author, creation and last-save times.

use serde_json::{Map, Value};

use super::{Cfb, stream, u16_at, u32_at};
use crate::formats::mail::filetime_to_rfc3339;
use crate::formats::rtf::code_page;

const PID_CODEPAGE: u32 = 1;
/// (property id, property name); the title is given apart.
const FIELDS: [(u32, &str); 7] = [
    (2, "title"),
    (3, "subject"),
    (4, "author"),
    (5, "keywords"),
    (8, "last_modified_by"),
    (12, "created"),
    (13, "modified"),
];
const VT_LPSTR: u32 = 0x1E;
const VT_LPWSTR: u32 = 0x1F;
const VT_FILETIME: u32 = 0x40;
const CODEPAGE_UTF16: u16 = 1200;
/// The first property set's offset sits after the stream header and its FMTID.
const FIRST_SET_OFFSET_AT: usize = 28 + 16;

/// The properties of a compound file's `SummaryInformation` stream (none
/// when it has none), less its title, which is returned beside them.
pub fn read(file: &mut Cfb, limit: usize) -> (Map<String, Value>, Option<String>) {
    let mut properties = stream(file, "/\u{5}SummaryInformation", limit)
        .map(|stream| properties(&stream))
        .unwrap_or_default();
    let title = properties
        .remove("title")
        .and_then(|t| t.as_str().map(str::to_owned));
    (properties, title)
}

/// The properties the stream holds, by kts's names.
pub fn properties(stream: &[u8]) -> Map<String, Value> {
    let mut out = Map::new();
    let Some(set) =
        u32_at(stream, FIRST_SET_OFFSET_AT).and_then(|offset| stream.get(offset as usize..))
    else {
        return out;
    };
    let count = u32_at(set, 4).unwrap_or(0) as usize;
    let value_at = |pid: u32| {
        (0..count.min(set.len() / 8))
            .map_while(|i| Some((u32_at(set, 8 + i * 8)?, u32_at(set, 12 + i * 8)?)))
            .find(|&(id, _)| id == pid)
            .map(|(_, offset)| offset as usize)
    };
    let code_page_number = value_at(PID_CODEPAGE)
        .and_then(|at| u16_at(set, at + 4))
        .unwrap_or(1252);
    for (pid, name) in FIELDS {
        let Some(at) = value_at(pid) else {
            continue;
        };
        let value = match u32_at(set, at) {
            Some(VT_LPSTR) => string8(set, at + 4, code_page_number),
            Some(VT_LPWSTR) => string16(set, at + 4),
            Some(VT_FILETIME) => {
                u32_at(set, at + 4)
                    .zip(u32_at(set, at + 8))
                    .and_then(|(low, high)| {
                        filetime_to_rfc3339(u64::from(high) << 32 | u64::from(low))
                    })
            }
            _ => None,
        };
        if let Some(value) = value
            .map(|v| crate::formats::one_line(&v))
            .filter(|v| !v.is_empty())
        {
            out.insert(name.into(), Value::String(value));
        }
    }
    out
}

/// A `CodePageString`: a byte count, then text (NUL-terminated) in the
/// set's code page.
fn string8(set: &[u8], at: usize, code_page_number: u16) -> Option<String> {
    let len = u32_at(set, at)? as usize;
    let bytes = set.get(at + 4..at.checked_add(4 + len)?)?;
    if code_page_number == CODEPAGE_UTF16 {
        return string_units(bytes);
    }
    let bytes = bytes.split(|&b| b == 0).next().unwrap_or_default();
    let encoding = code_page(i32::from(code_page_number)).unwrap_or(encoding_rs::WINDOWS_1252);
    Some(encoding.decode_without_bom_handling(bytes).0.into_owned())
}

/// A `UnicodeString`: a character count, then UTF-16LE.
fn string16(set: &[u8], at: usize) -> Option<String> {
    let len = u32_at(set, at)? as usize;
    string_units(set.get(at + 4..at.checked_add(4 + len.checked_mul(2)?)?)?)
}

fn string_units(bytes: &[u8]) -> Option<String> {
    let units: Vec<u16> = bytes
        .chunks_exact(2)
        .map(|pair| u16::from_le_bytes([pair[0], pair[1]]))
        .take_while(|&unit| unit != 0)
        .collect();
    Some(String::from_utf16_lossy(&units))
}
