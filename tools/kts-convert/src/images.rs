//! Images found in a document, stored once by content hash.

use sha2::{Digest, Sha256};

/// An extracted image, not yet written to disk.
#[derive(Debug, Clone)]
pub struct Image {
    pub sha256: String,
    pub extension: String,
    pub bytes: Vec<u8>,
    /// What `--describe-images` said the image shows.
    pub description: Option<String>,
}

impl Image {
    pub fn file_name(&self) -> String {
        format!("{}.{}", self.sha256, self.extension)
    }
}

/// Collects a document's images; identical images are kept once.
#[derive(Debug, Default)]
pub struct ImageSink {
    images: Vec<Image>,
}

impl ImageSink {
    /// Adds an image and returns the link to put in the Markdown, relative to
    /// the document's `content.md`: `images/<sha256>.<ext>`.
    ///
    /// `extension` is a hint (from the part name); the bytes' signature wins.
    pub fn add(&mut self, bytes: &[u8], extension: &str) -> String {
        let sha256 = hex(&Sha256::digest(bytes));
        let extension = image_extension(bytes)
            .unwrap_or(extension)
            .to_ascii_lowercase();
        if !self.images.iter().any(|i| i.sha256 == sha256) {
            self.images.push(Image {
                sha256: sha256.clone(),
                extension: extension.clone(),
                bytes: bytes.to_vec(),
                description: None,
            });
        }
        format!("images/{sha256}.{extension}")
    }

    pub fn into_images(self) -> Vec<Image> {
        self.images
    }
}

/// The extension an image's signature names.
fn image_extension(bytes: &[u8]) -> Option<&'static str> {
    Some(match bytes {
        [0x89, b'P', b'N', b'G', ..] => "png",
        [0xFF, 0xD8, 0xFF, ..] => "jpg",
        [b'G', b'I', b'F', b'8', ..] => "gif",
        [b'B', b'M', ..] => "bmp",
        [
            b'R',
            b'I',
            b'F',
            b'F',
            _,
            _,
            _,
            _,
            b'W',
            b'E',
            b'B',
            b'P',
            ..,
        ] => "webp",
        [b'I', b'I', 0x2A, 0, ..] | [b'M', b'M', 0, 0x2A, ..] => "tiff",
        [0xD7, 0xCD, 0xC6, 0x9A, ..] => "wmf",
        [0x01, 0, 0, 0, ..] => "emf",
        _ => return None,
    })
}

/// Lowercase hex of a digest.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// The media type of an image extension.
pub fn media_type(extension: &str) -> &'static str {
    match extension {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "bmp" => "image/bmp",
        "webp" => "image/webp",
        "tiff" | "tif" => "image/tiff",
        "svg" => "image/svg+xml",
        "wmf" => "image/wmf",
        "emf" => "image/emf",
        _ => "application/octet-stream",
    }
}
