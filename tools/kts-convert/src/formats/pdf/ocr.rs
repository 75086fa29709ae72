//! OCR of the pages that need it: in `auto` mode the pages without text, in
//! `always` mode every page (its text layer is kept where OCR finds nothing).

use std::collections::BTreeMap;

use kts_record::ErrorCode;

use super::paragraphs;
use crate::formats::ConvertError;
use crate::ocr::{Ocr, OcrMode};

/// Replaces the paragraphs of the pages that need OCR with the text OCR
/// reads there, and returns how many pages it read. A page OCR cannot read
/// keeps its text and gets a warning; a missing OCR program or a page over
/// the time limit fails the document.
pub fn read_pages(
    pdf: &[u8],
    pages: &mut BTreeMap<u32, Vec<String>>,
    ocr: &Ocr,
    warnings: &mut Vec<String>,
) -> Result<usize, ConvertError> {
    let wanted: Vec<u32> = pages
        .iter()
        .filter(|(_, paragraphs)| match ocr.mode {
            OcrMode::Always => true,
            OcrMode::Auto => paragraphs.is_empty(),
            OcrMode::Never => false,
        })
        .map(|(&number, _)| number)
        .collect();
    if wanted.is_empty() {
        return Ok(0);
    }
    let io_error = |e: std::io::Error| {
        ConvertError::new(
            ErrorCode::Io,
            format!("cannot write a temporary copy of the PDF for OCR: {e}"),
        )
    };
    let dir = tempfile::tempdir().map_err(io_error)?;
    let copy = dir.path().join("document.pdf");
    std::fs::write(&copy, pdf).map_err(io_error)?;
    let mut read = 0;
    for number in wanted {
        match ocr.pdf_page_text(&copy, number, dir.path()) {
            Ok(text) => {
                read += 1;
                let found = paragraphs(&text);
                if !found.is_empty() {
                    pages.insert(number, found);
                }
            }
            Err(error) if error.code == ErrorCode::Corrupt => {
                warnings.push(format!("page {number}: OCR failed: {}", error.message));
            }
            Err(error) if error.code == ErrorCode::OcrUnavailable => {
                return Err(ConvertError::new(
                    error.code,
                    format!(
                        "page {number} needs OCR, which is unavailable: {} (or convert \
                         with --ocr never to keep only the text layer)",
                        error.message
                    ),
                ));
            }
            Err(error) => {
                return Err(ConvertError::new(
                    error.code,
                    format!("page {number}: {}", error.message),
                ));
            }
        }
    }
    Ok(read)
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    #[test]
    fn no_page_is_started_after_the_document_ran_out_of_time() {
        let mut pages = BTreeMap::from([(1, Vec::new()), (2, Vec::new())]);
        // Programs that cannot run: reaching them would say ocr-unavailable.
        let ocr = Ocr {
            tesseract: "/nonexistent/tesseract".into(),
            pdftoppm: "/nonexistent/pdftoppm".into(),
            deadline: Some(Instant::now()),
            ..Ocr::default()
        };
        let error = read_pages(b"%PDF-1.4", &mut pages, &ocr, &mut Vec::new()).unwrap_err();
        assert_eq!(error.code, ErrorCode::Timeout, "{error:?}");
        assert!(error.message.contains("--timeout"), "{error:?}");
    }
}
