//! PowerPoint 97–2003 presentations (.ppt), read natively after [MS-PPT].
//!
//! The file is a compound file. Its `Current User` stream points at the
//! last edit of the `PowerPoint Document` stream, whose persist directories
//! say where the live records are ([`persist`]); the stream is made of
//! records ([`records`]). The slides' text comes from the document's slide
//! list and the slides' drawings, tables included ([`slides`]), split into
//! paragraphs with their bullets ([`text`]), and is written like a .pptx's: a
//! `<!-- slide: N -->` marker, the title as `## title`, the other text,
//! the speaker notes under `### Notes`. The `SummaryInformation` stream
//! gives the properties. Encrypted files are refused with their own error.

mod persist;
mod records;
mod slides;
#[cfg(test)]
mod tests;
mod text;
#[cfg(test)]
pub(crate) mod writer;

use std::io::Cursor;

use cfb::CompoundFile;
use kts_record::ErrorCode;
use serde_json::Value;

use self::persist::Persist;
use self::slides::{Item, Reader, Slide};
use self::text::TextBlock;
use super::doc::{stream, summary};
use super::table::markdown_table;
use super::{ConvertError, Converted, one_line};

const DOCUMENT_STREAM: &str = "/PowerPoint Document";
const CURRENT_USER_STREAM: &str = "/Current User";

pub fn convert(bytes: &[u8]) -> Result<Converted, ConvertError> {
    super::read_guarded("presentation", || read(bytes))
}

fn read(bytes: &[u8]) -> Result<Converted, ConvertError> {
    let mut file = CompoundFile::open(Cursor::new(bytes))
        .map_err(|e| ConvertError::corrupt(format!("not a readable compound file (.ppt): {e}")))?;
    if file.is_stream("/EncryptedSummary") {
        return Err(persist::encrypted());
    }
    if !file.is_stream(DOCUMENT_STREAM) {
        return Err(ConvertError::new(
            ErrorCode::Unsupported,
            "a compound file without a PowerPoint Document stream: not a PowerPoint 97–2003 presentation",
        ));
    }
    let document = stream(&mut file, DOCUMENT_STREAM, bytes.len())?;
    let current_user = stream(&mut file, CURRENT_USER_STREAM, bytes.len()).unwrap_or_default();
    let persist = Persist::read(&document, &current_user)?;
    let slides = Reader::new(&document, persist).slides()?;

    let (mut properties, summary_title) = summary::read(&mut file, bytes.len());
    properties.insert("slides".to_owned(), Value::from(slides.len()));
    let first_title = slides
        .first()
        .and_then(|slide| slide.items.iter().find_map(title_of))
        .filter(|t| !t.is_empty());
    let title = first_title.or(summary_title);
    let markdown = match slides.is_empty() {
        // Masters and properties only: a valid, if bare, document.
        true => title
            .as_deref()
            .map(|t| format!("# {t}\n"))
            .unwrap_or_default(),
        false => markdown(&slides),
    };
    Ok(Converted {
        markdown,
        title,
        properties,
    })
}

fn markdown(slides: &[Slide]) -> String {
    let mut out = String::new();
    for (index, slide) in slides.iter().enumerate() {
        out.push_str(&format!("<!-- slide: {} -->\n\n", index + 1));
        let title = slide.items.iter().position(|item| title_of(item).is_some());
        let title_text = title.and_then(|at| title_of(&slide.items[at]));
        if let Some(title_text) = title_text.filter(|t| !t.is_empty()) {
            out.push_str(&format!("## {title_text}\n\n"));
        }
        for (at, item) in slide.items.iter().enumerate() {
            let text = item_markdown(item);
            if Some(at) != title && !text.is_empty() {
                out.push_str(&text);
                out.push_str("\n\n");
            }
        }
        let notes: Vec<String> = slide
            .notes
            .iter()
            .map(item_markdown)
            .filter(|text| !text.is_empty())
            .collect();
        if !notes.is_empty() {
            out.push_str("### Notes\n\n");
            out.push_str(&notes.join("\n\n"));
            out.push_str("\n\n");
        }
    }
    out.trim_end().to_owned() + "\n"
}

/// A title placeholder's text, on one line.
fn title_of(item: &Item) -> Option<String> {
    match item {
        Item::Text(block) if block.is_title() => Some(block.one_line()),
        _ => None,
    }
}

fn item_markdown(item: &Item) -> String {
    match item {
        Item::Text(block) => block_markdown(block),
        Item::Table(rows) => markdown_table(rows).trim_end().to_owned(),
    }
}

/// A block's paragraphs: bulleted ones as list items (indented by level),
/// the others as paragraphs whose line breaks are kept.
fn block_markdown(block: &TextBlock) -> String {
    let mut out = String::new();
    let mut previous_item = false;
    for paragraph in &block.paragraphs {
        let item = paragraph.bullet.unwrap_or(block.bulleted_by_default());
        let text = match item {
            true => one_line(&paragraph.text),
            false => paragraph
                .text
                .lines()
                .map(one_line)
                .filter(|line| !line.is_empty())
                .collect::<Vec<_>>()
                .join("\n"),
        };
        if text.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push_str(if item && previous_item { "\n" } else { "\n\n" });
        }
        if item {
            out.push_str(&format!("{}- ", "    ".repeat(paragraph.level)));
        }
        out.push_str(&text);
        previous_item = item;
    }
    out
}
