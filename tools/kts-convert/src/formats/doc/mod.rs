//! Word 97–2003 documents (.doc), read natively after [MS-DOC].
//!
//! The file is a compound file. Its `WordDocument` stream starts with the
//! FIB ([`fib`]), which says which table stream (`0Table` or `1Table`) holds
//! the piece table ([`pieces`]: where the text is), the paragraph
//! properties ([`paragraphs`]), the styles ([`styles`]) and the lists
//! ([`lists`]). The main text and then the footnotes ([`notes`]) are split
//! into paragraphs ([`story`]) and written as Markdown ([`render`]); the
//! `SummaryInformation` stream gives the properties ([`summary`]).
//! Word 6/95 files and encrypted files are refused with their own error.

mod fib;
mod lists;
mod notes;
mod paragraphs;
mod pieces;
mod render;
mod story;
mod styles;
pub(super) mod summary;
#[cfg(test)]
mod tests;
#[cfg(test)]
pub(crate) mod writer;

use std::io::{Cursor, Read};

use cfb::CompoundFile;
use kts_record::ErrorCode;

use self::fib::Fib;
use self::lists::Lists;
use self::notes::Footnotes;
use self::paragraphs::Paragraphs;
use self::pieces::Text;
use self::render::Writer;
use self::styles::Styles;
use super::{ConvertError, Converted};

pub(super) type Cfb<'a> = CompoundFile<Cursor<&'a [u8]>>;

pub fn convert(bytes: &[u8]) -> Result<Converted, ConvertError> {
    super::read_guarded("Word document", || read(bytes))
}

fn read(bytes: &[u8]) -> Result<Converted, ConvertError> {
    let mut file = CompoundFile::open(Cursor::new(bytes))
        .map_err(|e| ConvertError::corrupt(format!("not a readable compound file (.doc): {e}")))?;
    if !file.is_stream("/WordDocument") {
        return Err(ConvertError::new(
            ErrorCode::Unsupported,
            "a compound file without a WordDocument stream: not a Word 97–2003 document",
        ));
    }
    let word = stream(&mut file, "/WordDocument", bytes.len())?;
    let fib = Fib::parse(&word)?;
    let table_name = if fib.table_1 { "/1Table" } else { "/0Table" };
    let table = stream(&mut file, table_name, bytes.len())?;
    let clx = fib
        .clx
        .of(&table)
        .ok_or_else(|| ConvertError::corrupt("the piece table lies outside the table stream"))?;
    let text = Text::read(clx, &word, fib.ccp_text.saturating_add(fib.ccp_ftn))?;
    let styles = fib.styles.of(&table).map(Styles::parse).unwrap_or_default();
    let lists = Lists::read(&table, fib.lists, fib.list_overrides);
    let paragraphs = Paragraphs::read(&table, fib.paragraph_bins, &word);

    let notes = Footnotes::read(&table, &fib);
    let mut writer = Writer::new(&styles, &lists);
    for paragraph in story::paragraphs(&text, 0..fib.ccp_text, &paragraphs, &notes.labels) {
        writer.paragraph(&paragraph);
    }
    writer.end_table();
    let (markdown, styled_title) = writer.finish();
    let markdown = super::notes::placed(&markdown, notes.texts(&text, &paragraphs));
    if markdown.trim().is_empty() {
        return Err(ConvertError::new(
            ErrorCode::Empty,
            "the Word document holds no text",
        ));
    }
    let (properties, summary_title) = summary::read(&mut file, bytes.len());
    Ok(Converted {
        markdown,
        title: styled_title.or(summary_title),
        properties,
    })
}

/// A stream's bytes; no stream holds more than the file (`limit`).
pub(super) fn stream(file: &mut Cfb, path: &str, limit: usize) -> Result<Vec<u8>, ConvertError> {
    let mut stream = file
        .open_stream(path)
        .map_err(|e| ConvertError::corrupt(format!("the {path} stream cannot be read: {e}")))?;
    let mut bytes = Vec::new();
    (&mut stream)
        .take(limit as u64)
        .read_to_end(&mut bytes)
        .map_err(|e| ConvertError::corrupt(format!("the {path} stream is truncated: {e}")))?;
    Ok(bytes)
}

/// A little-endian `u16` at `at`, if the bytes are there.
pub(super) fn u16_at(bytes: &[u8], at: usize) -> Option<u16> {
    let b = bytes.get(at..at.checked_add(2)?)?;
    Some(u16::from_le_bytes([b[0], b[1]]))
}

/// A little-endian `u32` at `at`, if the bytes are there.
pub(super) fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}
