//! What kts-convert keeps of a converted document in
//! `.kts/documents/<doc_id>/` and readers check: `metadata.json` records
//! the SHA-256 of the `content.md` it wrote, so that one changed since (by
//! hand, or damaged) is not trusted.

use sha2::{Digest, Sha256};

/// The field of `metadata.json` holding [`content_sha256`] of `content.md`.
pub const CONTENT_SHA256: &str = "content_sha256";

/// The SHA-256 of a stored document's Markdown, in lowercase hex.
pub fn content_sha256(markdown: &str) -> String {
    Sha256::digest(markdown.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
