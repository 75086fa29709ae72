//! Images (PNG, JPEG, TIFF): their text, read with OCR; each page of a
//! multi-page TIFF under its page marker. An image whose header claims more
//! pixels than the limit is refused before it is decoded.

use kts_record::ErrorCode;
use serde_json::{Map, Value};

use super::image_size::largest_page;
use super::{Context, ConvertError, Converted, pdf::paragraphs};
use crate::ocr::OcrMode;

pub fn convert(
    bytes: &[u8],
    extension: &str,
    ctx: &mut Context,
) -> Result<Converted, ConvertError> {
    let (width, height) = largest_page(bytes).map_err(ConvertError::corrupt)?;
    if width == 0 || height == 0 {
        return Err(ConvertError::corrupt(format!(
            "the image is {width} × {height} pixels"
        )));
    }
    let pixels = width.saturating_mul(height);
    if pixels > ctx.ocr.max_pixels {
        return Err(ConvertError::new(
            ErrorCode::TooLarge,
            format!(
                "the image is {width} × {height} pixels ({:.0} megapixels), more than the \
                 limit of {:.0} (--max-megapixels)",
                pixels as f64 / 1e6,
                ctx.ocr.max_pixels as f64 / 1e6
            ),
        ));
    }
    let mut properties = Map::new();
    properties.insert("width".into(), Value::from(width));
    properties.insert("height".into(), Value::from(height));
    let text = if ctx.ocr.mode == OcrMode::Never {
        warn(
            &mut properties,
            "OCR is off (--ocr never): the image's text is not read",
        );
        String::new()
    } else {
        ocr_text(bytes, extension, ctx)?
    };
    // Tesseract puts a form feed between the pages of a multi-page image.
    let pages: Vec<Vec<String>> = text.split('\x0c').map(paragraphs).collect();
    if pages.iter().all(Vec::is_empty) && ctx.ocr.mode != OcrMode::Never {
        warn(&mut properties, "OCR found no text in the image");
    }
    if pages.len() > 1 {
        properties.insert("pages".into(), Value::from(pages.len()));
    }
    let markdown = match pages.as_slice() {
        [page] => page.join("\n\n"),
        _ => with_page_markers(&pages),
    };
    Ok(Converted {
        markdown,
        title: None,
        properties,
    })
}

fn ocr_text(bytes: &[u8], extension: &str, ctx: &Context) -> Result<String, ConvertError> {
    let io_error = |e: std::io::Error| {
        ConvertError::new(
            ErrorCode::Io,
            format!("cannot write a temporary copy of the image: {e}"),
        )
    };
    let dir = tempfile::tempdir().map_err(io_error)?;
    let path = dir.path().join(format!("image.{extension}"));
    std::fs::write(&path, bytes).map_err(io_error)?;
    ctx.ocr.image_text(&path)
}

/// Each page under a `<!-- page: N -->` marker, as in a PDF's Markdown.
fn with_page_markers(pages: &[Vec<String>]) -> String {
    let pages: Vec<String> = pages
        .iter()
        .enumerate()
        .map(|(i, paragraphs)| {
            let mut page = format!("<!-- page: {} -->\n", i + 1);
            for paragraph in paragraphs {
                page.push('\n');
                page.push_str(paragraph);
                page.push('\n');
            }
            page
        })
        .collect();
    pages.join("\n")
}

fn warn(properties: &mut Map<String, Value>, warning: &str) {
    properties.insert("warnings".into(), Value::from(vec![warning]));
}
