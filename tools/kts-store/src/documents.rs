//! Reading whole documents back: what the store holds of one, its Markdown,
//! and the documents page by page.

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

    /// `.kts/documents/<doc_id>/content.md`, if its metadata names the source
    /// the index holds.
    fn converted_markdown(&self, document: &StoredDocument) -> Option<String> {
        kts_record::scope_path::check_doc_id(&document.doc_id).ok()?;
        let folder = kts_dir(&self.scope)
            .join("documents")
            .join(&document.doc_id);
        let metadata: Value =
            serde_json::from_slice(&std::fs::read(folder.join("metadata.json")).ok()?).ok()?;
        let converted_from = metadata.get("metadata")?.get("source_sha256")?.as_str()?;
        if Some(converted_from) != document.source_sha256.as_deref() {
            return None;
        }
        std::fs::read_to_string(folder.join("content.md")).ok()
    }
}
