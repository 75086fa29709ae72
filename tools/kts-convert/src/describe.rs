//! Image descriptions from a command of the user's (`--describe-images CMD`).
//!
//! The command gets an image's path as its argument and prints a description
//! on stdout. It runs once per image (an image file is a document of one
//! image, itself): the description is stored beside the
//! image (`images/<sha256>.txt`) and read from there the next time the
//! document is converted. The description becomes the image's alt text in the
//! Markdown, so it is chunked, embedded and searched with the text.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use kts_record::DocRecord;

use crate::images::Image;
use kts_cli::child::{self, ChildError};

/// Longer descriptions are cut here: alt text is a caption, not a document.
const MAX_DESCRIPTION_CHARS: usize = 2000;
const MAX_OUTPUT_BYTES: usize = 64 << 10;

#[derive(Clone, Debug)]
pub struct Describer {
    /// A shell command; the image's path is appended as its last argument.
    pub command: String,
    pub timeout: Duration,
}

impl Describer {
    /// Gives each image its description: the one stored in `stored` (the
    /// document's previous `images/` folder) if any, else the command's.
    /// Returns a warning for each image the command failed on.
    pub fn describe(&self, images: &mut [Image], stored: Option<&Path>) -> Vec<String> {
        let mut warnings = Vec::new();
        for image in images.iter_mut() {
            let cached = stored
                .and_then(|dir| std::fs::read_to_string(dir.join(description_file(image))).ok());
            let described = cached.map_or_else(|| self.run(image), Ok);
            match described {
                Ok(text) => image.description = Some(clean(&text)),
                Err(why) => warnings.push(format!(
                    "images/{}: the image description command failed: {why}",
                    image.file_name()
                )),
            }
        }
        warnings
    }

    fn run(&self, image: &Image) -> Result<String, String> {
        let dir =
            tempfile::tempdir().map_err(|e| format!("cannot make a temporary folder: {e}"))?;
        let path = dir.path().join(image.file_name());
        std::fs::write(&path, &image.bytes)
            .map_err(|e| format!("cannot write the image for it: {e}"))?;
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(format!("{} \"$1\"", self.command))
            .arg("kts-convert")
            .arg(&path);
        match child::output(&mut command, self.timeout, MAX_OUTPUT_BYTES) {
            Ok(out) => Ok(String::from_utf8_lossy(&out).into_owned()),
            Err(ChildError::TimedOut) => Err(format!(
                "it took longer than {} s (--describe-timeout)",
                self.timeout.as_secs()
            )),
            Err(ChildError::NotFound(e)) => Err(format!("cannot run sh: {e}")),
            Err(ChildError::Failed(why)) => Err(why),
        }
    }
}

/// `<sha256>.txt`, beside the image in the document's `images/` folder.
pub fn description_file(image: &Image) -> String {
    format!("{}.txt", image.sha256)
}

/// The metadata key that counts the images a document's Markdown describes.
pub const DESCRIBED: &str = "described_images";

/// Whether a stored conversion's Markdown describes every one of its images
/// (an image file, its own).
pub fn all_described(doc: &DocRecord) -> bool {
    if doc.images.is_empty() {
        return !doc.format.is_image();
    }
    doc.metadata.get(DESCRIBED).and_then(|n| n.as_u64()) == Some(doc.images.len() as u64)
}

/// An image file's Markdown (the text OCR read, if any) below a link to the
/// image itself, which then gets its description as alt text as an image
/// inside a document does.
pub fn with_image_file_link(markdown: &str, link: &str) -> String {
    if markdown.trim().is_empty() {
        format!("![]({link})\n")
    } else {
        format!("![]({link})\n\n{markdown}")
    }
}

/// Keeps the descriptions stored in `stored` with their images, without
/// using them, so that a run without `--describe-images` does not throw
/// away what an earlier run paid for.
pub fn carry_over(images: &mut [Image], stored: &Path) {
    for image in images {
        image.description = std::fs::read_to_string(stored.join(description_file(image))).ok();
    }
}

/// One line, without the brackets that would end the alt text, cut to length.
fn clean(text: &str) -> String {
    let line = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace(['[', ']'], "");
    match line.char_indices().nth(MAX_DESCRIPTION_CHARS) {
        Some((cut, _)) => line[..cut].to_string(),
        None => line,
    }
}

/// Puts each image's description into the alt text of its links, after the
/// document's own alt text when it has one.
pub fn into_alt_text(markdown: &str, images: &[Image]) -> String {
    let mut markdown = markdown.to_string();
    for image in images {
        let Some(description) = image.description.as_deref().filter(|d| !d.is_empty()) else {
            continue;
        };
        let link = format!("](images/{})", image.file_name());
        let mut out = String::with_capacity(markdown.len());
        let mut rest = markdown.as_str();
        while let Some(at) = rest.find(&link) {
            let before = &rest[..at];
            match before.rfind("![") {
                Some(open) if !before[open..].contains(']') => {
                    let alt = &before[open + 2..];
                    out.push_str(&before[..open + 2]);
                    if !alt.is_empty() && alt != "image" {
                        out.push_str(alt);
                        out.push_str(" — ");
                    }
                    out.push_str(description);
                }
                _ => out.push_str(before),
            }
            out.push_str(&link);
            rest = &rest[at + link.len()..];
        }
        out.push_str(rest);
        markdown = out;
    }
    markdown
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(sha256: &str, description: Option<&str>) -> Image {
        Image {
            sha256: sha256.into(),
            extension: "png".into(),
            bytes: Vec::new(),
            description: description.map(str::to_string),
        }
    }

    #[test]
    fn descriptions_become_alt_text() {
        let markdown = "![image](images/aa.png) and ![Logo](images/aa.png)\n![](images/bb.png)";
        let images = [image("aa", Some("A red circle")), image("bb", None)];
        assert_eq!(
            into_alt_text(markdown, &images),
            "![A red circle](images/aa.png) and ![Logo — A red circle](images/aa.png)\n![](images/bb.png)"
        );
    }

    #[test]
    fn descriptions_are_one_bounded_line() {
        assert_eq!(clean("  A [red]\n circle \n"), "A red circle");
        assert_eq!(
            clean(&"é".repeat(3000)).chars().count(),
            MAX_DESCRIPTION_CHARS
        );
    }
}
