//! Documents in every format kts reads, written from one simple outline.
//!
//! Tests build an [`Outline`] (by hand or with [`Outline::from_markdown`]) and
//! render it with [`to_markdown`], [`to_text`], [`to_html`], [`to_json`],
//! [`to_docx`], [`to_pptx`], [`to_pdf`], [`to_odt`] or [`to_epub`] (or
//! [`render`] with a [`Format`]);
//! tables (rows of cells) are written with [`to_csv`] and [`to_xlsx`],
//! e-mail with [`Email`] and [`to_mbox`];
//! [`damage`] makes broken and hostile copies; [`tiny_png`] makes images.
//! Every writer is deterministic: the same outline gives the same bytes.
//!
//! The binary `kts-sample DIR` writes the demo scope: kts's own documentation
//! (the Markdown files in this crate's `docs/`) rendered in every format.

pub mod damage;
mod demo;
mod docx;
mod eml;
mod epub;
mod html;
mod json;
mod odt;
mod outline;
mod package;
mod pdf;
mod png;
mod pptx;
mod pptx_static;
mod table;
mod text;
mod xlsx;
mod xml;

use std::path::PathBuf;

pub use demo::{DEMO_FILES, DEMO_MAIL_FILES, DEMO_TABLE_FILES, write_demo};
pub use docx::to_docx;
pub use eml::{Email, EmailAttachment, to_mbox};
pub use epub::to_epub;
pub use html::to_html;
pub use json::to_json;
pub use odt::to_odt;
pub use outline::{Block, Outline};
pub use pdf::to_pdf;
pub use png::tiny_png;
pub use pptx::to_pptx;
pub use table::{CsvDialect, to_csv};
pub use text::{to_markdown, to_text};
pub use xlsx::{Cell, Comment, Sheet, to_xlsx};

pub use kts_record::Format;

/// Every document format kts reads, in the order the writers are listed above.
pub const ALL_FORMATS: [Format; 9] = [
    Format::Md,
    Format::Txt,
    Format::Html,
    Format::Json,
    Format::Docx,
    Format::Pptx,
    Format::Pdf,
    Format::Odt,
    Format::Epub,
];

/// Renders `outline` in `format`. Table formats (CSV, spreadsheets) hold
/// rows, not an outline: they are written with [`to_csv`] and [`to_xlsx`]
/// and refused here.
pub fn render(outline: &Outline, format: Format) -> anyhow::Result<Vec<u8>> {
    Ok(match format {
        Format::Md => to_markdown(outline),
        Format::Txt => to_text(outline),
        Format::Html => to_html(outline),
        Format::Json => to_json(outline),
        Format::Docx => to_docx(outline)?,
        Format::Pptx => to_pptx(outline)?,
        Format::Pdf => to_pdf(outline)?,
        Format::Odt => to_odt(outline)?,
        Format::Epub => to_epub(outline)?,
        Format::Doc
        | Format::Ppt
        | Format::Odp
        | Format::Rtf
        | Format::Vtt
        | Format::Adoc
        | Format::Latex => {
            anyhow::bail!("kts-sample has no writer for {}", format.as_str())
        }
        Format::Csv | Format::Xlsx | Format::Xls | Format::Ods => anyhow::bail!(
            "{} holds rows, not an outline: write it with to_csv or to_xlsx",
            format.as_str()
        ),
        Format::Eml | Format::Mbox | Format::Msg => anyhow::bail!(
            "{} holds messages, not an outline: write one with Email",
            format.as_str()
        ),
        Format::Png | Format::Jpg | Format::Tiff => {
            anyhow::bail!("kts-sample does not draw {} images", format.as_str())
        }
    })
}

const AFTER_HELP: &str = "\
Example:
  kts-sample sample && kts-crawl sample | kts-convert | kts-chunk | head

Writes kts's own documentation as .md, .txt, .html, .json, .docx, .pptx, .pdf,
.odt and .epub files, tables about kts as .csv and .xlsx, and an e-mail (.eml)
with a .docx attached, into DIR (created if needed), one line per file on stderr.";

/// Write a demo scope: kts's own documentation in every format kts reads.
#[derive(clap::Parser, Debug)]
#[command(
    name = "kts-sample",
    version,
    about = "Write a demo scope: kts's own documentation in every format kts reads",
    after_help = AFTER_HELP
)]
pub struct Args {
    /// Folder to write the demo documents into (created if missing).
    pub dir: PathBuf,
}

/// The clap command, for man pages and completions.
pub fn command() -> clap::Command {
    <Args as clap::CommandFactory>::command()
}

/// Writes the demo scope into `args.dir`, reporting each file on stderr.
pub fn run(args: Args) -> anyhow::Result<kts_cli::Exit> {
    for path in write_demo(&args.dir)? {
        eprintln!("kts-sample: wrote {}", path.display());
    }
    Ok(kts_cli::Exit::Ok)
}
