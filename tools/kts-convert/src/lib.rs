//! kts-convert: reads `kts.file/1` records, writes `kts.doc/1` records.
//!
//! Files are converted in parallel by worker threads and written out in input
//! order. A file that cannot be converted becomes a `kts.error/1` record and
//! the stream goes on; other records pass through unchanged.

mod describe;
pub mod formats;
pub mod images;
mod job;
mod metadata;
pub mod ocr;
mod parts;
mod store;

use std::path::PathBuf;
use std::time::Duration;

use clap::{CommandFactory, Parser};
use kts_cli::{Exit, Incoming, JsonlReader, JsonlWriter};
use ocr::{Ocr, OcrMode};

const ABOUT: &str = "Convert documents (md, txt, html, json, docx, doc, pptx, ppt, pdf, csv, xlsx, xls, ods, odt, odp, epub, rtf, vtt, adoc, tex, eml, mbox, msg; png, jpg, tiff and scanned pages by OCR) to Markdown kts.doc/1 records";

const AFTER_HELP: &str = "\
Reads kts.file/1 records (from kts-crawl; a record without a `schema` field is
taken as one) on stdin and writes one kts.doc/1 record per document: its
Markdown (headings, lists, tables, slide titles and notes, <!-- page: N -->
and <!-- slide: N --> markers; a CSV or TSV file as one table, its delimiter
and encoding sniffed; each sheet of a workbook as a heading and its blocks
of data as tables; an EPUB's chapters in reading order; a WebVTT
transcript's cues, one paragraph per speaker turn; an e-mail's subject as
title, its from/to/cc/date and body), title, doc_type, dates, keywords and
images. Each attachment of an e-mail that kts reads
follows as a kts.doc/1 of its own, at FILE#attachment/NAME (a text one
without a charset read as the file would be, its encoding guessed); each
message of a mailbox at FILE#message/N. The Markdown, metadata and images are also kept in
ROOT/.kts/documents/<doc_id>/ (content.md, metadata.json, images/<sha256>.<ext>);
an unchanged file is served from there without converting it again.

Images (png, jpg, tiff) and PDF pages without a text layer (or with a few
words over a scan) are read with OCR: tesseract reads them, pdftoppm
(poppler-utils) renders the pages, each run with a time limit per page
(--ocr-timeout). An image larger than --max-megapixels is refused before it
is decoded. Without those programs, a file that needs OCR
becomes an ocr-unavailable error record. --describe-images CMD runs CMD IMAGE
once per image a document holds (an image file holds one: itself, linked
above its OCR text); what it prints becomes the image's alt text, and is
kept beside the image (images/<sha256>.txt) for later runs.

A file that cannot be converted (corrupt, encrypted, unsupported, empty, too
large, referencing local files) becomes a kts.error/1 record; conversion goes on
and the exit status is 1. Other records (deletions, errors) pass through.

Example:
  kts-crawl docs | kts-convert | kts-chunk | head -3
  kts-crawl docs | kts-convert | jq -r 'select(.title) | [.doc_type, .title] | @tsv'
  kts-crawl docs | kts-convert --ocr never --no-store --stats > /dev/null";

#[derive(Parser, Debug, Clone)]
#[command(name = "kts-convert", version, about = ABOUT, after_help = AFTER_HELP)]
pub struct Args {
    /// Scope root for records that do not name one (paths are relative to it).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,

    /// Worker threads, 1 or more [default: the number of cores].
    #[arg(long, short = 'j', value_name = "N", value_parser = kts_cli::at_least_one())]
    pub threads: Option<usize>,

    /// Give up on a document after this many seconds, 1 to 86400 (OCR
    /// included: raise it for long scans).
    #[arg(long, value_name = "SECONDS", default_value_t = 120, value_parser = kts_cli::time_limit_seconds())]
    pub timeout: u64,

    /// Refuse a document whose Markdown would pass this many MiB, 1 or more
    /// (a text file that large is refused before it is read): the later
    /// stages hold a document whole.
    #[arg(long, value_name = "MIB", default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_markdown_mib: u64,

    /// Largest total a zip package (docx, pptx, xlsx, ods, odt, odp, epub) may
    /// decompress to, and the attachments of one e-mail file may add up to, in
    /// MiB, 1 or more.
    #[arg(long, value_name = "MIB", default_value_t = 512, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_unpacked_mib: u64,

    /// Refuse PDFs with more pages than this (1 or more).
    #[arg(long, value_name = "N", default_value_t = 5000, value_parser = kts_cli::at_least_one())]
    pub max_pages: usize,

    /// Read at most this many non-empty cells of a workbook, 1 or more; the
    /// rest is left out with a warning.
    #[arg(long, value_name = "N", default_value_t = 5_000_000, value_parser = kts_cli::at_least_one())]
    pub max_cells: usize,

    /// Which pages to read with OCR: auto (images, PDF pages without text,
    /// and scans with fewer than 20 words of text), always (every PDF page
    /// too), never.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = OcrMode::Auto)]
    pub ocr: OcrMode,

    /// Tesseract's languages for OCR, joined by '+' (each needs its
    /// tesseract-ocr-LANG package).
    #[arg(long, value_name = "LANGS", default_value = "eng")]
    pub ocr_languages: String,

    /// Give up on a page (rendering or OCR) after this many seconds, 1 to 86400.
    #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = kts_cli::time_limit_seconds())]
    pub ocr_timeout: u64,

    /// Refuse images larger than this many megapixels, 1 or more, before
    /// decoding them (and re-encode an image of a PDF as PNG only if its
    /// pixels × colour components stay within it).
    #[arg(long, value_name = "N", default_value_t = 50, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_megapixels: u64,

    /// The tesseract program.
    #[arg(
        long,
        value_name = "CMD",
        env = "KTS_TESSERACT",
        default_value = "tesseract"
    )]
    pub tesseract: String,

    /// The pdftoppm program (poppler-utils).
    #[arg(
        long,
        value_name = "CMD",
        env = "KTS_PDFTOPPM",
        default_value = "pdftoppm"
    )]
    pub pdftoppm: String,

    /// Describe each image with this shell command: it gets the image's path
    /// as its last argument and prints a description, which becomes the
    /// image's alt text.
    #[arg(long, value_name = "CMD")]
    pub describe_images: Option<String>,

    /// Give up on describing an image after this many seconds, 1 to 86400.
    #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = kts_cli::time_limit_seconds())]
    pub describe_timeout: u64,

    /// Do not write ROOT/.kts/documents (and do not reuse earlier conversions).
    #[arg(long)]
    pub no_store: bool,

    /// Stop at the first document that fails.
    #[arg(long)]
    pub fail_fast: bool,

    #[command(flatten)]
    pub reporting: kts_cli::Reporting,
}

/// The clap definition, for man pages and completions.
pub fn command() -> clap::Command {
    Args::command()
}

/// What the workers need to know, built once from the flags.
#[derive(Clone)]
pub(crate) struct Settings {
    pub default_root: Option<PathBuf>,
    pub limits: formats::Limits,
    pub max_markdown_bytes: u64,
    pub timeout: Duration,
    pub use_store: bool,
    pub ocr: Ocr,
    pub describer: Option<describe::Describer>,
}

pub fn run(args: Args) -> anyhow::Result<Exit> {
    let messages = args.reporting.messages("kts-convert");
    let settings = Settings {
        default_root: args.root.clone(),
        limits: formats::Limits {
            max_unpacked_bytes: args.max_unpacked_mib << 20,
            max_pdf_pages: args.max_pages,
            max_sheet_cells: args.max_cells,
            ..formats::Limits::default()
        },
        max_markdown_bytes: args.max_markdown_mib << 20,
        timeout: Duration::from_secs(args.timeout),
        use_store: !args.no_store,
        ocr: Ocr {
            mode: args.ocr,
            tesseract: args.tesseract.clone(),
            pdftoppm: args.pdftoppm.clone(),
            languages: args.ocr_languages.clone(),
            page_timeout: Duration::from_secs(args.ocr_timeout),
            max_pixels: args.max_megapixels.saturating_mul(1_000_000),
            deadline: None,
        },
        describer: args
            .describe_images
            .clone()
            .map(|command| describe::Describer {
                command,
                timeout: Duration::from_secs(args.describe_timeout),
            }),
    };
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let mut out = JsonlWriter::new();
    let mut converted = 0usize;
    let mut told_ocr_unavailable = false;
    let progress = kts_cli::progress_bar("kts-convert", None, "files");

    let mut emit = |output: job::Output| -> anyhow::Result<bool> {
        if !matches!(output, job::Output::Warning(_)) {
            progress.inc(1);
        }
        match output {
            job::Output::Doc(doc) => {
                converted += 1;
                for warning in doc
                    .metadata
                    .get("warnings")
                    .and_then(|w| w.as_array())
                    .into_iter()
                    .flatten()
                {
                    messages.warn(&format!(
                        "{}: {}",
                        doc.path,
                        warning.as_str().unwrap_or_default()
                    ));
                }
                out.write(&doc)?;
            }
            job::Output::Failed(error) => {
                if error.code == kts_record::ErrorCode::OcrUnavailable && !told_ocr_unavailable {
                    told_ocr_unavailable = true;
                    messages.warn(&format!(
                        "OCR is unavailable, so files that need it become ocr-unavailable \
                         errors: {}",
                        error.message
                    ));
                }
                messages.reject(&error.path, error.code, &error.message);
                out.write(&error)?;
                if args.fail_fast {
                    return Ok(false);
                }
            }
            job::Output::Pass(value) => out.write(&value)?,
            job::Output::Warning(text) => messages.warn(&text),
        }
        Ok(true)
    };
    let input = JsonlReader::stdin().with_default_schema(kts_record::schema_id::FILE);
    job::run_in_order(input, threads, &settings, &mut emit)?;
    progress.finish_and_clear();
    out.flush()?;
    if args.reporting.stats {
        messages.info(&format!(
            "{converted} converted, {} failed",
            messages.failures()
        ));
    }
    Ok(messages.exit())
}

/// Reads records and classifies them for [`job::run_in_order`].
pub(crate) fn classify(
    item: Result<Incoming, (kts_record::ErrorCode, String)>,
    at: &str,
) -> job::Work {
    match item {
        Ok(Incoming::File(value)) => {
            match serde_json::from_value::<kts_record::FileRecord>(value.clone()) {
                Ok(file) if file.status == kts_record::FileStatus::Deleted => {
                    job::Work::Pass(value)
                }
                Ok(file) => job::Work::Convert(Box::new(file)),
                Err(e) => job::Work::Reject(
                    kts_record::ErrorCode::BadRecord,
                    at.to_string(),
                    e.to_string(),
                ),
            }
        }
        Ok(
            Incoming::Doc(value)
            | Incoming::Chunk(value)
            | Incoming::Error(value)
            | Incoming::Other(value),
        ) => job::Work::Pass(value),
        Err((code, message)) => job::Work::Reject(code, at.to_string(), message),
    }
}
