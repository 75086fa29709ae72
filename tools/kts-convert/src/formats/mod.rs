//! One module per source format. Each turns the file's bytes into Markdown.
//!
//! A converter never reads anything but the bytes it is given (a document that
//! references an external file gets an `external-reference` error), never
//! panics on bad input, and keeps within `Limits`.

mod csv;
mod docx;
mod html;
mod image;
mod image_size;
mod json;
mod ooxml;
mod pdf;
mod pptx;
mod sheet_layout;
mod spreadsheet;
mod table;
mod text;
mod xlsx_parts;

use kts_record::{ErrorCode, Format};
use serde_json::{Map, Value};

use crate::images::ImageSink;
use crate::ocr::Ocr;

/// Bounds that keep a hostile or broken file from exhausting memory or time.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Total bytes a zip package may decompress to.
    pub max_unpacked_bytes: u64,
    /// Largest compression ratio a zip entry may have (zip bombs exceed it).
    pub max_compression_ratio: u64,
    pub max_pdf_pages: usize,
    /// Cells a workbook may hold before the rest is left out (with a warning).
    pub max_sheet_cells: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_unpacked_bytes: 512 << 20,
            max_compression_ratio: 200,
            max_pdf_pages: 5000,
            max_sheet_cells: 5_000_000,
        }
    }
}

/// What a converter gives back.
#[derive(Debug, Default)]
pub struct Converted {
    pub markdown: String,
    /// The title the document's own properties give, if any.
    pub title: Option<String>,
    /// Properties found in the file: author, created, modified, pages, slides, ...
    pub properties: Map<String, Value>,
}

/// Why a file could not be converted.
#[derive(Debug, Clone, PartialEq)]
pub struct ConvertError {
    pub code: ErrorCode,
    pub message: String,
}

impl ConvertError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
    pub fn corrupt(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Corrupt, message)
    }
}

/// Everything a converter may use besides the bytes.
pub struct Context<'a> {
    pub limits: &'a Limits,
    pub images: &'a mut ImageSink,
    pub ocr: &'a Ocr,
}

/// Converts a file's bytes, already known to be of `format`.
pub fn convert(format: Format, bytes: &[u8], ctx: &mut Context) -> Result<Converted, ConvertError> {
    match format {
        Format::Md => text::markdown(bytes),
        Format::Txt => text::plain(bytes),
        Format::Html => html::convert(bytes),
        Format::Json => json::convert(bytes),
        Format::Docx => docx::convert(bytes, ctx),
        Format::Pptx => pptx::convert(bytes, ctx),
        Format::Pdf => pdf::convert(bytes, ctx),
        Format::Csv => csv::convert(bytes),
        Format::Xlsx => spreadsheet::xlsx(bytes, ctx.limits),
        Format::Xls => spreadsheet::xls(bytes, ctx.limits),
        Format::Ods => spreadsheet::ods(bytes, ctx.limits),
        Format::Png | Format::Jpg | Format::Tiff => image::convert(bytes, format.as_str(), ctx),
    }
}
