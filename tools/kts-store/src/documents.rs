//! Reading whole documents back: what the store holds of one, its Markdown,
//! and the documents page by page.

use std::path::Path;

use anyhow::Context;
use kts_record::scope_path;
use kts_record::stored_document::{CONTENT_SHA256, content_sha256};
use rusqlite::{OptionalExtension, Row};
use serde_json::Value;

use crate::{Store, kts_dir};

/// A document as the store holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredDocument {
    pub doc_id: String,
    pub path: String,
    pub title: String,
    pub doc_type: String,
    pub format: Option<String>,
    pub source_sha256: Option<String>,
}

const COLUMNS: &str = "doc_id, path, title, doc_type, format, source_sha256";

fn stored(row: &Row) -> rusqlite::Result<StoredDocument> {
    Ok(StoredDocument {
        doc_id: row.get(0)?,
        path: row.get(1)?,
        title: row.get(2)?,
        doc_type: row.get(3)?,
        format: row.get(4)?,
        source_sha256: row.get(5)?,
    })
}

impl Store {
    /// The document with this path, else with this doc_id.
    pub fn document(&self, path_or_id: &str) -> anyhow::Result<Option<StoredDocument>> {
        Ok(self
            .conn
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM documents WHERE path = ?1
                 UNION ALL SELECT {COLUMNS} FROM documents WHERE doc_id = ?1 LIMIT 1"
            ))?
            .query_row([path_or_id], stored)
            .optional()?)
    }

    /// Up to `limit` documents in path order, after the path `after`.
    pub fn documents_after(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> anyhow::Result<Vec<StoredDocument>> {
        let mut statement = self.conn.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM documents WHERE ?1 IS NULL OR path > ?1 ORDER BY path LIMIT ?2"
        ))?;
        let rows = statement.query_map(rusqlite::params![after, limit as i64], stored)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The document's Markdown as it was indexed: kts-convert's stored
    /// `content.md` when it was made from the same source, else the text put
    /// back together from the chunks, at their offsets (characters no chunk
    /// covers, such as blank lines between them, become spaces).
    pub fn document_markdown(&self, document: &StoredDocument) -> anyhow::Result<String> {
        if let Some(markdown) = self.converted_markdown(document) {
            return Ok(markdown);
        }
        let mut statement = self
            .conn
            .prepare_cached("SELECT text, start FROM chunks WHERE doc_id = ?1 ORDER BY start")?;
        let chunks = statement.query_map([&document.doc_id], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
        })?;
        let mut markdown = String::new();
        let mut length = 0usize;
        for chunk in chunks {
            let (text, start) = chunk?;
            let start = start.max(0) as usize;
            if start >= length {
                markdown.extend(std::iter::repeat_n(' ', start - length));
                markdown.push_str(&text);
                length = start + text.chars().count();
            } else {
                // Overlapping chunks: only what goes past the text so far.
                let overlap = length - start;
                let rest: String = text.chars().skip(overlap).collect();
                length += rest.chars().count();
                markdown.push_str(&rest);
            }
        }
        Ok(markdown)
    }

    /// Removes the folders under `.kts/documents` of the documents the index
    /// does not hold and whose file is no longer in the scope: kts-convert
    /// stores a document before kts-index sees it, so a file deleted before
    /// it was indexed would leave its text there. The folder of a file still
    /// there is kept: a pipeline may be converting it for its kts-index to
    /// come. Call it as the writer, outside a transaction. Returns how many
    /// it removed.
    pub fn remove_stray_document_folders(&self) -> anyhow::Result<usize> {
        let documents = kts_dir(&self.scope).join("documents");
        let entries = match std::fs::read_dir(&documents) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            entries => entries.with_context(|| format!("reading {}", documents.display()))?,
        };
        let indexed = self.document_ids()?;
        let mut removed = 0;
        for entry in entries {
            let folder = entry?.path();
            let Some(doc_id) = folder.file_name().and_then(|name| name.to_str()) else {
                continue;
            };
            if scope_path::check_doc_id(doc_id).is_err()
                || indexed.contains(doc_id)
                || self.source_file_remains(&folder)
            {
                continue;
            }
            match std::fs::remove_dir_all(&folder) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                result => result.with_context(|| format!("removing {}", folder.display()))?,
            }
            removed += 1;
        }
        Ok(removed)
    }

    /// Whether the file a stored document was converted from (a part's, its
    /// parent file) is still in the scope; true when the folder does not say.
    fn source_file_remains(&self, folder: &Path) -> bool {
        let Some(record) = std::fs::read(folder.join("metadata.json"))
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
        else {
            return true;
        };
        let parent = record.get("metadata").and_then(|m| m.get("parent"));
        let Some(file) = parent.or(record.get("path")).and_then(Value::as_str) else {
            return true;
        };
        scope_path::normalize(file).map_or(true, |file| self.scope.join(file).exists())
    }

    /// `.kts/documents/<doc_id>/content.md`, if its metadata names the source
    /// the index holds.
    fn converted_markdown(&self, document: &StoredDocument) -> Option<String> {
        scope_path::check_doc_id(&document.doc_id).ok()?;
        let folder = kts_dir(&self.scope)
            .join("documents")
            .join(&document.doc_id);
        let metadata: Value =
            serde_json::from_slice(&std::fs::read(folder.join("metadata.json")).ok()?).ok()?;
        let converted_from = metadata.get("metadata")?.get("source_sha256")?.as_str()?;
        if Some(converted_from) != document.source_sha256.as_deref() {
            return None;
        }
        let markdown = std::fs::read_to_string(folder.join("content.md")).ok()?;
        // Changed since kts-convert wrote it (by hand, or damaged): not served.
        let written = metadata.get(CONTENT_SHA256).and_then(Value::as_str);
        written
            .is_none_or(|written| written == content_sha256(&markdown))
            .then_some(markdown)
    }
}
