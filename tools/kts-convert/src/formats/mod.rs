//! One module per source format. Each turns the file's bytes into Markdown.
//!
//! A converter never reads anything but the bytes it is given (a document that
//! references an external file gets an `external-reference` error), never
//! panics on bad input, and keeps within `Limits`.

mod asciidoc;
mod csv;
mod doc;
mod docx;
mod epub;
mod html;
mod image;
mod image_size;
mod json;
mod latex;
mod mail;
mod notes;
mod number_format;
mod odf;
mod ods_parts;
mod omml;
mod ooxml;
mod pdf;
mod ppt;
mod pptx;
mod rtf;
mod sheet_layout;
mod spreadsheet;
mod table;
mod text;
mod vtt;
mod xls_formats;
mod xls_guard;
mod xlsx_parts;

use kts_record::{ErrorCode, Format};
use serde_json::{Map, Value};

use crate::images::{Image, ImageSink};
use crate::ocr::Ocr;

/// Bounds that keep a hostile or broken file from exhausting memory or time.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Total bytes a zip package (Office, OpenDocument, EPUB) may decompress to.
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

/// The Markdown a document's keywords are drawn from: all of it, but for an
/// e-mail's list of attachments (media types and file extensions say nothing
/// of what the message is about).
pub fn keyword_text(format: Format, markdown: &str) -> &str {
    match format {
        Format::Eml | Format::Msg => mail::without_attachment_list(markdown),
        _ => markdown,
    }
}

/// Collapses whitespace (line breaks included) to single spaces.
pub(crate) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Adds warnings to a document's properties (`warnings`, shown by kts-convert
/// with the file's name).
pub fn add_warnings(
    properties: &mut Map<String, Value>,
    warnings: impl IntoIterator<Item = String>,
) {
    let entry = properties
        .entry("warnings")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(list) = entry {
        list.extend(warnings.into_iter().map(Value::String));
    }
}

/// A document inside a file (an e-mail's attachment, a mailbox's message),
/// converted on its own. Its path is the file's path, `#`, and `anchor`.
#[derive(Debug)]
pub struct Part {
    /// Where it sits in the file: `attachment/report.pdf`, `message/3`,
    /// `message/3#attachment/report.pdf`. Every `/`-separated name in it is safe
    /// as a path component (no `..`, `/`, `#`, control characters).
    pub anchor: String,
    /// Its size in bytes, as stored in the file (decoded).
    pub size: u64,
    pub converted: Result<PartDocument, ConvertError>,
}

/// A part converted to Markdown.
#[derive(Debug)]
pub struct PartDocument {
    pub format: Format,
    pub converted: Converted,
    pub images: Vec<Image>,
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

/// Runs a reader built on a third party's parser (calamine, the compound-file
/// reader): its panic on a damaged file is that file's `Corrupt` error, "the
/// `what` could not be read", not the batch's.
pub(crate) fn read_guarded(
    what: &str,
    read: impl FnOnce() -> Result<Converted, ConvertError>,
) -> Result<Converted, ConvertError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(read)).unwrap_or_else(|panic| {
        Err(ConvertError::corrupt(format!(
            "the {what} could not be read: {}",
            panic_message(&panic)
        )))
    })
}

/// The message a panic was raised with.
pub(crate) fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".into())
}

/// Converts a file's bytes, already known to be of `format`.
pub fn convert(format: Format, bytes: &[u8], ctx: &mut Context) -> Result<Converted, ConvertError> {
    if let Some(kind) = misnamed_text(format, bytes) {
        return Err(ConvertError::new(
            ErrorCode::Unsupported,
            format!("the content is {kind}, not a {} file", format.as_str()),
        ));
    }
    match format {
        Format::Md => text::markdown(bytes),
        Format::Txt => text::plain(bytes),
        Format::Html => html::convert(bytes),
        Format::Json => json::convert(bytes),
        Format::Docx => docx::convert(bytes, ctx),
        Format::Doc => doc::convert(bytes),
        Format::Pptx => pptx::convert(bytes, ctx),
        Format::Ppt => ppt::convert(bytes),
        Format::Pdf => pdf::convert(bytes, ctx),
        Format::Csv => csv::convert(bytes),
        Format::Xlsx => spreadsheet::xlsx(bytes, ctx.limits),
        Format::Xls => spreadsheet::xls(bytes, ctx.limits),
        Format::Ods => spreadsheet::ods(bytes, ctx.limits),
        Format::Odt => odf::odt(bytes, ctx),
        Format::Odp => odf::odp(bytes, ctx),
        Format::Epub => epub::convert(bytes, ctx),
        Format::Rtf => rtf::convert(bytes),
        Format::Vtt => vtt::convert(bytes),
        Format::Adoc => asciidoc::convert(bytes),
        Format::Latex => latex::convert(bytes),
        Format::Png | Format::Jpg | Format::Tiff => image::convert(bytes, format.as_str(), ctx),
        Format::Eml | Format::Mbox | Format::Msg => {
            convert_with_parts(format, bytes, ctx).map(|(converted, _)| converted)
        }
    }
}

/// What the text is that a binary format's extension was given to (a
/// format the text announces is detected as that format before this).
fn misnamed_text(format: Format, bytes: &[u8]) -> Option<&'static str> {
    const HEAD_BYTES: usize = 8 << 10;
    format
        .is_binary()
        .then(|| kts_record::text_content_kind(&bytes[..bytes.len().min(HEAD_BYTES)]))
        .flatten()
}

/// Converts a file's bytes, with the documents found inside it in reading order.
pub fn convert_with_parts(
    format: Format,
    bytes: &[u8],
    ctx: &mut Context,
) -> Result<(Converted, Vec<Part>), ConvertError> {
    match format {
        Format::Eml => mail::eml(bytes, ctx),
        Format::Mbox => mail::mbox(bytes, ctx),
        Format::Msg => mail::msg(bytes, ctx),
        _ => Ok((convert(format, bytes, ctx)?, Vec::new())),
    }
}
