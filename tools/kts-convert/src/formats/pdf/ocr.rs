//! OCR of the pages that need it: in `auto` mode the pages without text and
//! the scans with a few words of text on them, in `always` mode every page
//! (its text layer is kept where OCR finds nothing).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use kts_record::ErrorCode;
use lopdf::{Document, Object, ObjectId};

use super::paragraphs;
use crate::formats::ConvertError;
use crate::ocr::{Ocr, OcrMode};

/// An image this large can be a page scanned for reading: a letter or A4
/// page at 100 dpi, about the least OCR reads well, is 0.9 megapixels.
const SCAN_PIXELS: i64 = 800_000;
/// A text layer of fewer words over such an image is a stamp, a header or a
/// page number put on a scan, not the page's text (which runs to hundreds
/// of words, also in the invisible layer OCR software adds).
const FEW_WORDS: usize = 20;

/// The pages that draw an image large enough to be a scan.
pub fn scan_sized_pages(
    doc: &Document,
    pages: &BTreeMap<u32, ObjectId>,
    page_images: &HashMap<ObjectId, Vec<ObjectId>>,
) -> BTreeSet<u32> {
    let pixels = |id: ObjectId| {
        let dict = &doc.get_object(id).and_then(Object::as_stream).ok()?.dict;
        let side = |key: &[u8]| dict.get(key).and_then(Object::as_i64).ok();
        side(b"Width")?.checked_mul(side(b"Height")?)
    };
    pages
        .iter()
        .filter(|(_, page)| {
            let images = page_images.get(page).into_iter().flatten();
            images
                .filter_map(|&id| pixels(id))
                .any(|n| n >= SCAN_PIXELS)
        })
        .map(|(&number, _)| number)
        .collect()
}

/// Whether `--ocr auto` reads a page: one without text, or a scan whose
/// text layer holds only a few words.
fn needs_ocr(paragraphs: &[String], scan_sized: bool) -> bool {
    let words = || paragraphs.iter().flat_map(|p| p.split_whitespace()).count();
    paragraphs.is_empty() || (scan_sized && words() < FEW_WORDS)
}

/// Reads the pages that need OCR (`scan_sized`: from [`scan_sized_pages`])
/// and returns how many it read. OCR text replaces a page's text layer in
/// `always` mode and is added to it in `auto` mode; with `never`, the pages
/// `auto` would read are named in a warning. A page OCR cannot read
/// keeps its text and gets a warning; a missing OCR program or a page over
/// the time limit fails the document.
pub fn read_pages(
    pdf: &[u8],
    pages: &mut BTreeMap<u32, Vec<String>>,
    scan_sized: &BTreeSet<u32>,
    ocr: &Ocr,
    warnings: &mut Vec<String>,
) -> Result<usize, ConvertError> {
    let wanted: Vec<u32> = pages
        .iter()
        .filter(|(number, paragraphs)| {
            ocr.mode == OcrMode::Always || needs_ocr(paragraphs, scan_sized.contains(number))
        })
        .map(|(&number, _)| number)
        .collect();
    if ocr.mode == OcrMode::Never && !wanted.is_empty() {
        warnings.push(format!(
            "OCR is off (--ocr never): the text of {} is not read (no text layer, or a \
             few words over a scan)",
            page_list(&wanted)
        ));
    }
    if ocr.mode == OcrMode::Never || wanted.is_empty() {
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
                if ocr.mode == OcrMode::Always && !found.is_empty() {
                    pages.insert(number, found);
                } else {
                    let page = pages.entry(number).or_default();
                    // OCR reads the text layer's visible words again.
                    let new: Vec<String> =
                        found.into_iter().filter(|p| !page.contains(p)).collect();
                    page.extend(new);
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

/// "page 2", or "pages 1-3, 7": runs of pages as ranges.
fn page_list(numbers: &[u32]) -> String {
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for &n in numbers {
        match runs.last_mut() {
            Some((_, last)) if *last + 1 == n => *last = n,
            _ => runs.push((n, n)),
        }
    }
    let runs: Vec<String> = runs
        .iter()
        .map(|&(first, last)| {
            if first == last {
                first.to_string()
            } else {
                format!("{first}-{last}")
            }
        })
        .collect();
    let noun = if numbers.len() == 1 { "page" } else { "pages" };
    format!("{noun} {}", runs.join(", "))
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    #[test]
    fn pages_without_text_and_scans_with_a_few_words_need_ocr() {
        let stamp = vec!["Scanned by ACME".to_string()];
        let text = vec!["word ".repeat(FEW_WORDS)];
        assert!(needs_ocr(&[], false));
        assert!(needs_ocr(&stamp, true));
        assert!(!needs_ocr(&stamp, false), "a short page without a scan");
        assert!(!needs_ocr(&text, true), "a page of text over a picture");
    }

    #[test]
    fn with_ocr_off_one_warning_names_the_pages_left_unread() {
        let text = vec!["Digital page".to_string()];
        let mut pages = BTreeMap::from([
            (1, text.clone()),
            (2, Vec::new()),
            (3, Vec::new()),
            (4, text),
            (5, Vec::new()),
        ]);
        let ocr = Ocr {
            mode: OcrMode::Never,
            ..Ocr::default()
        };
        let mut warnings = Vec::new();
        let read = read_pages(b"", &mut pages, &BTreeSet::new(), &ocr, &mut warnings).unwrap();
        assert_eq!(read, 0);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].contains("--ocr never") && warnings[0].contains("of pages 2-3, 5 is"),
            "{warnings:?}"
        );
        assert_eq!(page_list(&[4]), "page 4");
    }

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
        let error = read_pages(
            b"%PDF-1.4",
            &mut pages,
            &BTreeSet::new(),
            &ocr,
            &mut Vec::new(),
        )
        .unwrap_err();
        assert_eq!(error.code, ErrorCode::Timeout, "{error:?}");
        assert!(error.message.contains("--timeout"), "{error:?}");
    }
}
