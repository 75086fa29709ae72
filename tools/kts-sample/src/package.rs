//! Zip packaging shared by the package writers (OOXML, OpenDocument,
//! EPUB): fixed timestamps and fixed entry order, so the same outline always
//! gives the same bytes.

use std::io::{Cursor, Write};

use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, DateTime, ZipWriter};

use crate::xml::escape;

/// One file of a package: its path inside the zip and its bytes.
pub(crate) type Part = (String, Vec<u8>);

/// The date written into every zip entry and core-properties file.
pub(crate) const FIXED_DATE: &str = "2024-01-01T00:00:00Z";

/// Writes `parts` in order into a deflated zip with 1980-01-01 timestamps.
pub(crate) fn zip_parts(parts: &[Part]) -> zip::result::ZipResult<Vec<u8>> {
    let options = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Deflated)
        .compression_level(Some(6))
        .last_modified_time(DateTime::default())
        .unix_permissions(0o644);
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
    for (name, bytes) in parts {
        zip.start_file(name.as_str(), options)?;
        zip.write_all(bytes)?;
    }
    Ok(zip.finish()?.into_inner())
}

/// A package that names its type in a first, uncompressed `mimetype`
/// entry (OpenDocument, EPUB), so that its first bytes say what it is; the
/// other parts follow, deflated, as [`zip_parts`] writes them.
pub(crate) fn zip_with_mimetype(mimetype: &str, parts: &[Part]) -> zip::result::ZipResult<Vec<u8>> {
    let stored = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Stored)
        .last_modified_time(DateTime::default())
        .unix_permissions(0o644);
    let options = stored
        .compression_method(CompressionMethod::Deflated)
        .compression_level(Some(6));
    let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
    zip.start_file("mimetype", stored)?;
    zip.write_all(mimetype.as_bytes())?;
    for (name, bytes) in parts {
        zip.start_file(name.as_str(), options)?;
        zip.write_all(bytes)?;
    }
    Ok(zip.finish()?.into_inner())
}

/// `docProps/core.xml` with the title and fixed dates.
pub(crate) fn core_xml(title: &str) -> Vec<u8> {
    format!(
        concat!(
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>"#,
            "\n",
            r#"<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" "#,
            r#"xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" "#,
            r#"xmlns:dcmitype="http://purl.org/dc/dcmitype/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">"#,
            "<dc:title>{title}</dc:title><dc:creator>kts-sample</dc:creator><cp:lastModifiedBy>kts-sample</cp:lastModifiedBy>",
            r#"<cp:revision>1</cp:revision><dcterms:created xsi:type="dcterms:W3CDTF">{date}</dcterms:created>"#,
            r#"<dcterms:modified xsi:type="dcterms:W3CDTF">{date}</dcterms:modified></cp:coreProperties>"#
        ),
        title = escape(title),
        date = FIXED_DATE
    )
    .into_bytes()
}

/// Pixel size of a PNG from its IHDR chunk.
pub(crate) fn png_size(png: &[u8]) -> Option<(u32, u32)> {
    let ihdr = png.get(16..24)?;
    let w = u32::from_be_bytes(ihdr[..4].try_into().ok()?);
    let h = u32::from_be_bytes(ihdr[4..].try_into().ok()?);
    (png.starts_with(b"\x89PNG") && w > 0 && h > 0).then_some((w, h))
}

/// The size an image is shown at, in EMU: 4 times its pixel size at 96 dpi,
/// at most `max_width` wide, keeping the aspect ratio.
pub(crate) fn display_emu(png: &[u8], max_width: u64) -> (u64, u64) {
    let (w, h) = png_size(png).unwrap_or((4, 3));
    let (w, h) = (u64::from(w) * 9525 * 4, u64::from(h) * 9525 * 4);
    if w > max_width {
        (max_width, h * max_width / w)
    } else {
        (w, h)
    }
}
