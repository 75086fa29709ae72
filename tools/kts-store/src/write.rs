//! Writing: transactions, applying a document whole, deleting one whole.

use anyhow::Context;
use rusqlite::{OptionalExtension, params};
use sha2::{Digest, Sha256};

use crate::words::{indexed_text, indexed_title};
use crate::{Store, Synced, kts_dir, lexical, schema, vector_delta, vector_file};

/// The most changed chunks `vectors.delta` holds before `vectors.bin` is
/// rewritten whole (and at most a tenth of its rows): readers load the delta
/// whole and score each of its rows.
const MAX_DELTA_ROWS: usize = 20_000;

/// A document as the store keeps it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DocumentRow {
    pub doc_id: String,
    pub path: String,
    pub title: String,
    pub doc_type: String,
    pub format: Option<String>,
    pub source_sha256: Option<String>,
    /// The record's free-form metadata, as JSON.
    pub metadata: serde_json::Value,
}

/// A chunk as the store keeps it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChunkRow {
    pub chunk_id: String,
    pub index: usize,
    pub text: String,
    pub heading_path: Vec<String>,
    pub start: usize,
    pub end: usize,
    pub page: Option<u32>,
    pub slide: Option<u32>,
    pub embedding: Option<Vec<f32>>,
    /// Id of the model that made `embedding`.
    pub model: Option<String>,
    /// SHA-256 of that model's weights, when known.
    pub model_sha256: Option<String>,
}

/// What applying a document did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applied {
    Added,
    Updated,
    Unchanged,
}

/// Embeddings made with another model than the store's: refused, since
/// vectors of two models cannot be compared.
#[derive(Debug)]
pub struct ModelMismatch {
    pub store_model: String,
    pub store_dims: usize,
    pub store_sha256: Option<String>,
    pub model: String,
    pub dims: usize,
    pub sha256: Option<String>,
    pub scope: String,
}

impl ModelMismatch {
    /// Whether the two models differ only in their weights.
    fn same_name(&self) -> bool {
        self.store_model == self.model && self.store_dims == self.dims
    }
}

impl std::fmt::Display for ModelMismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let describe = |model: &str, dims: usize, sha256: &Option<String>| {
            let weights = match sha256 {
                Some(sha) if self.same_name() => format!(", weights sha256 {sha}"),
                _ => String::new(),
            };
            format!("{model} ({dims} dims{weights})")
        };
        write!(
            f,
            "the index of {scope} was built with model {}, not {}; \
             re-index the scope with this model: kts-index --reindex {scope} \
             (or remove {scope}/.kts/kts.db), or use model {}",
            describe(&self.store_model, self.store_dims, &self.store_sha256),
            describe(&self.model, self.dims, &self.sha256),
            self.store_model,
            scope = self.scope,
        )
    }
}

/// Whether two weight hashes disagree (an unknown one agrees with anything).
pub fn weights_differ(a: Option<&str>, b: Option<&str>) -> bool {
    matches!((a, b), (Some(a), Some(b)) if a != b)
}

impl std::error::Error for ModelMismatch {}

/// A fingerprint of everything the store keeps of a document: when it is the
/// same, re-applying the document would change nothing.
fn digest(doc: &DocumentRow, chunks: &[ChunkRow]) -> String {
    let mut h = Sha256::new();
    for part in [
        doc.path.as_str(),
        &doc.title,
        &doc.doc_type,
        doc.source_sha256.as_deref().unwrap_or(""),
    ] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    for chunk in chunks {
        h.update(chunk.chunk_id.as_bytes());
        h.update([1]);
        h.update(chunk.model.as_deref().unwrap_or("").as_bytes());
        h.update([2]);
        h.update(chunk.model_sha256.as_deref().unwrap_or("").as_bytes());
        h.update([u8::from(chunk.embedding.is_some())]);
    }
    h.finalize()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Store {
    /// Starts a write transaction (writers only).
    pub fn begin(&mut self) -> anyhow::Result<()> {
        self.conn.execute_batch("BEGIN IMMEDIATE")?;
        self.changes_at_begin = self.conn.total_changes();
        Ok(())
    }

    /// Commits the current transaction, then removes the folders of the
    /// documents it deleted (`.kts/documents/<doc_id>`). `meta.updated` is
    /// set only when the transaction changed something: a run with nothing
    /// to do leaves the database file as it was (backups, rsync and file
    /// watchers would see a change).
    pub fn commit(&mut self) -> anyhow::Result<()> {
        let vectors_changed = std::mem::take(&mut self.vectors_changed);
        if vectors_changed || self.conn.total_changes() != self.changes_at_begin {
            schema::touch(&self.conn)?;
        }
        if vectors_changed {
            schema::bump_vectors_version(&self.conn)?;
        }
        self.conn.execute_batch("COMMIT")?;
        for doc_id in std::mem::take(&mut self.removed_folders) {
            let folder = kts_dir(&self.scope).join("documents").join(&doc_id);
            match std::fs::remove_dir_all(&folder) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(e).with_context(|| format!("removing {}", folder.display()));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Abandons the current transaction.
    pub fn rollback(&mut self) -> anyhow::Result<()> {
        self.removed_folders.clear();
        self.vectors_changed = false;
        self.conn.execute_batch("ROLLBACK")?;
        Ok(())
    }

    /// Empties the store and forgets its model (inside the caller's transaction),
    /// so that it can be rebuilt with another model.
    pub fn clear(&mut self) -> anyhow::Result<()> {
        self.conn.execute_batch(
            "DELETE FROM chunks_fts; DELETE FROM chunks; DELETE FROM documents;
             DROP TABLE IF EXISTS chunks_vec;
             DELETE FROM meta WHERE key IN ('model_id', 'dims', 'model_sha256');",
        )?;
        self.vectors_changed = true;
        Ok(())
    }

    /// Brings `vectors.bin` up to date with the committed vectors (call it
    /// outside a transaction, after the last commit): nothing when it is
    /// current; else, when few chunks changed since it was written, writes
    /// those changes to `vectors.delta` beside it; else rewrites it whole.
    /// Removes both when the store has no vectors. Returns whether it wrote.
    pub fn refresh_vector_file(&mut self) -> anyhow::Result<bool> {
        let path = crate::vector_file_path(&self.scope);
        let delta = vector_file::delta_path(&path);
        let meta = self.meta()?;
        let version = meta.vectors_version;
        let (true, Some(dims)) = (schema::has_vector_table(&self.conn)?, meta.dims) else {
            vector_delta::remove(&delta)?;
            vector_delta::remove(&path)?;
            return Ok(false);
        };
        let base = vector_file::file_version(&path);
        if base.is_some_and(|(base_version, _)| base_version == version) {
            // Current (a writer may have stopped before emptying the log).
            if vector_delta::pending_count(&self.conn)? > 0
                || schema::vectors_log_base(&self.conn)? != Some(version)
            {
                schema::restart_vectors_log(&self.conn, version)?;
            }
            vector_delta::remove(&delta)?;
            return Ok(false);
        }
        if let Some((base_version, rows)) = base
            && schema::vectors_log_base(&self.conn)? == Some(base_version)
            && vector_delta::pending_count(&self.conn)? <= (rows / 10).min(MAX_DELTA_ROWS)
        {
            if vector_delta::file_versions(&delta) == Some((base_version, version)) {
                return Ok(false);
            }
            vector_delta::write(&self.conn, &delta, dims, base_version, version)?;
            return Ok(true);
        }
        vector_file::write(&self.conn, &path, dims, version)
            .with_context(|| format!("writing {}", path.display()))?;
        schema::restart_vectors_log(&self.conn, version)?;
        vector_delta::remove(&delta)?;
        Ok(true)
    }

    /// Brings `DIR/.kts/lexical/` up to date with the committed chunks (call
    /// it outside a transaction, after the last commit).
    pub fn refresh_lexical_index(&mut self) -> anyhow::Result<Synced> {
        let dir = crate::lexical_index_dir(&self.scope);
        let synced = lexical::sync(&self.conn, &self.scope)
            .with_context(|| format!("updating the lexical index {}", dir.display()))?;
        lexical::open_up_files(&dir);
        Ok(synced)
    }

    /// Whether the store already holds exactly this document and these chunks.
    pub fn is_unchanged(&self, doc: &DocumentRow, chunks: &[ChunkRow]) -> anyhow::Result<bool> {
        let stored: Option<String> = self
            .conn
            .prepare_cached("SELECT digest FROM documents WHERE doc_id = ?1")?
            .query_row([&doc.doc_id], |r| r.get(0))
            .optional()?;
        Ok(stored.as_deref() == Some(digest(doc, chunks).as_str()))
    }

    /// Whether the store holds this document found inside a file (an
    /// e-mail's attachment, a mailbox's message) as it is, only under the hash
    /// of the file's earlier bytes: a part's `source_sha256` is its file's, so
    /// appending a message to a mailbox gives every other message a new one.
    fn is_unchanged_part_of_changed_file(
        &self,
        doc: &DocumentRow,
        chunks: &[ChunkRow],
    ) -> anyhow::Result<bool> {
        if doc.metadata.get("parent").is_none() {
            return Ok(false);
        }
        let stored: Option<(String, Option<String>)> = self
            .conn
            .prepare_cached("SELECT digest, source_sha256 FROM documents WHERE doc_id = ?1")?
            .query_row([&doc.doc_id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        Ok(stored.is_some_and(|(stored_digest, source_sha256)| {
            let earlier = DocumentRow {
                source_sha256,
                ..doc.clone()
            };
            digest(&earlier, chunks) == stored_digest
        }))
    }

    /// Records the file hash and metadata of a document whose content is as stored.
    fn update_source(&mut self, doc: &DocumentRow, chunks: &[ChunkRow]) -> anyhow::Result<()> {
        self.conn
            .prepare_cached(
                "UPDATE documents SET source_sha256 = ?2, metadata = ?3, digest = ?4
                 WHERE doc_id = ?1",
            )?
            .execute(params![
                doc.doc_id,
                doc.source_sha256,
                doc.metadata.to_string(),
                digest(doc, chunks),
            ])?;
        Ok(())
    }

    /// Replaces the document (by doc_id or path) with this one and its chunks,
    /// inside the caller's transaction. Refuses embeddings of another model
    /// than the store's with [`ModelMismatch`], and chunks without embeddings
    /// once the store has vectors.
    /// A document that cannot be stored (say, a chunk id used twice) leaves
    /// the transaction as it was.
    pub fn apply(&mut self, doc: &DocumentRow, chunks: &[ChunkRow]) -> anyhow::Result<Applied> {
        if self.is_unchanged(doc, chunks)? {
            return Ok(Applied::Unchanged);
        }
        if self.is_unchanged_part_of_changed_file(doc, chunks)? {
            self.update_source(doc, chunks)?;
            return Ok(Applied::Unchanged);
        }
        self.check_model(doc, chunks)?;
        self.conn.execute_batch("SAVEPOINT apply_document")?;
        match self.replace(doc, chunks) {
            Ok(applied) => {
                self.conn.execute_batch("RELEASE apply_document")?;
                Ok(applied)
            }
            // On a full disk or an I/O error SQLite may have rolled the whole
            // transaction back, savepoint included: its error is the one to tell.
            Err(e) => match self
                .conn
                .execute_batch("ROLLBACK TO apply_document; RELEASE apply_document")
            {
                Ok(()) => Err(e),
                Err(_) if self.conn.is_autocommit() => Err(e),
                Err(rollback) => Err(e.context(format!("and its rollback failed: {rollback}"))),
            },
        }
    }

    fn replace(&mut self, doc: &DocumentRow, chunks: &[ChunkRow]) -> anyhow::Result<Applied> {
        let existed = self.delete_rows(&doc.doc_id)?;
        let replaced_path = self.doc_id_of_path(&doc.path)?;
        if let Some(other) = replaced_path {
            self.delete_rows(&other)?;
        }
        self.insert_document(doc, chunks)?;
        for chunk in chunks {
            self.insert_chunk(doc, chunk)?;
        }
        Ok(if existed {
            Applied::Updated
        } else {
            Applied::Added
        })
    }

    /// Deletes the document at `path` (relative to the scope) with its chunks,
    /// index entries, vectors and, after commit, its documents folder.
    pub fn delete_path(&mut self, path: &str) -> anyhow::Result<bool> {
        match self.doc_id_of_path(path)? {
            Some(doc_id) => self.delete_document(&doc_id),
            None => Ok(false),
        }
    }

    /// Deletes a document by id, like [`Store::delete_path`].
    pub fn delete_document(&mut self, doc_id: &str) -> anyhow::Result<bool> {
        let deleted = self.delete_rows(doc_id)?;
        // Only an id of kts's own form names a folder directly under .kts/documents.
        if deleted && kts_record::scope_path::check_doc_id(doc_id).is_ok() {
            self.removed_folders.push(doc_id.to_string());
        }
        Ok(deleted)
    }

    /// Deletes the documents found inside the file at `path` (an e-mail's
    /// attachments, a mailbox's messages: paths `path#...` whose
    /// `metadata.parent` is `path`), except those whose paths are in `keep`.
    /// Returns how many it deleted.
    pub fn delete_parts_of(&mut self, path: &str, keep: &[String]) -> anyhow::Result<usize> {
        let parts: Vec<(String, String)> = self
            .conn
            .prepare_cached(
                "SELECT doc_id, path FROM documents WHERE path >= ?1 AND path < ?2
                 AND json_extract(metadata, '$.parent') = ?3",
            )?
            // Every path that starts with `path#` sorts from `path#` up to `path$`.
            .query_map(params![format!("{path}#"), format!("{path}$"), path], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?
            .collect::<Result<_, _>>()?;
        let mut deleted = 0;
        for (doc_id, part_path) in parts {
            if !keep.contains(&part_path) && self.delete_document(&doc_id)? {
                deleted += 1;
            }
        }
        Ok(deleted)
    }

    fn doc_id_of_path(&self, path: &str) -> anyhow::Result<Option<String>> {
        Ok(self
            .conn
            .prepare_cached("SELECT doc_id FROM documents WHERE path = ?1")?
            .query_row([path], |r| r.get(0))
            .optional()?)
    }

    /// Deletes the rows of a document; true when it was stored.
    fn delete_rows(&mut self, doc_id: &str) -> anyhow::Result<bool> {
        let ids: Vec<i64> = self
            .conn
            .prepare_cached("SELECT id FROM chunks WHERE doc_id = ?1")?
            .query_map([doc_id], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        let vectors = schema::has_vector_table(&self.conn)?;
        for id in &ids {
            self.conn
                .prepare_cached("DELETE FROM chunks_fts WHERE rowid = ?1")?
                .execute([id])?;
            if vectors {
                self.conn
                    .prepare_cached("DELETE FROM chunks_vec WHERE rowid = ?1")?
                    .execute([id])?;
                self.vectors_changed = true;
            }
        }
        self.conn
            .prepare_cached("DELETE FROM chunks WHERE doc_id = ?1")?
            .execute([doc_id])?;
        let docs = self
            .conn
            .prepare_cached("DELETE FROM documents WHERE doc_id = ?1")?
            .execute([doc_id])?;
        Ok(docs > 0)
    }

    /// Sets the store's model from the first embedding, or refuses another
    /// one; once the store has vectors, refuses chunks without an embedding
    /// (a document of them would drop out of vector search), and a store
    /// holding other documents' chunks without vectors refuses embeddings
    /// (vector search would see only the new documents).
    fn check_model(&mut self, doc: &DocumentRow, chunks: &[ChunkRow]) -> anyhow::Result<()> {
        let meta = self.meta()?;
        let Some(chunk) = chunks.iter().find(|c| c.embedding.is_some()) else {
            return self.check_keyword_only(meta.model_id.as_deref(), chunks);
        };
        let model = chunk.model.clone().unwrap_or_else(|| "unknown".into());
        let dims = chunk.embedding.as_ref().map_or(0, Vec::len);
        let sha256 = chunk.model_sha256.clone();
        check_one_model(chunks, &model, dims)?;
        if let (Some(store_model), Some(store_dims)) = (meta.model_id, meta.dims) {
            if store_model != model
                || store_dims != dims
                || weights_differ(meta.model_sha256.as_deref(), sha256.as_deref())
            {
                return Err(ModelMismatch {
                    store_model,
                    store_dims,
                    store_sha256: meta.model_sha256,
                    model,
                    dims,
                    sha256,
                    scope: self.scope.display().to_string(),
                }
                .into());
            }
        } else {
            self.check_no_keyword_only_documents(doc, &model)?;
            schema::set_meta(&self.conn, "model_id", &model)?;
            schema::set_meta(&self.conn, "dims", &dims.to_string())?;
            if !schema::has_vector_table(&self.conn)? {
                schema::create_vector_table(&self.conn, dims)?;
            }
        }
        if let (None, Some(sha256)) = (meta.model_sha256, &sha256) {
            schema::set_meta(&self.conn, "model_sha256", sha256)?;
        }
        Ok(())
    }

    /// The first embeddings of a store: refused while other documents have
    /// chunks without them.
    fn check_no_keyword_only_documents(
        &self,
        doc: &DocumentRow,
        model: &str,
    ) -> anyhow::Result<()> {
        let others: i64 = self
            .conn
            .prepare_cached(
                "SELECT count(DISTINCT doc_id) FROM chunks JOIN documents USING (doc_id)
                 WHERE doc_id != ?1 AND path != ?2",
            )?
            .query_row(params![doc.doc_id, doc.path], |r| r.get(0))?;
        if others > 0 {
            anyhow::bail!(
                "its chunks have embeddings of model {model}, and the index of {scope} is \
                 keyword-only ({others} other documents without vectors): re-index the whole \
                 scope with embeddings to add vectors (kts-index --reindex {scope})",
                scope = self.scope.display()
            );
        }
        Ok(())
    }

    /// Chunks without embeddings: taken by a store without vectors only.
    fn check_keyword_only(
        &self,
        store_model: Option<&str>,
        chunks: &[ChunkRow],
    ) -> anyhow::Result<()> {
        match store_model {
            Some(store_model) if !chunks.is_empty() => anyhow::bail!(
                "its chunks have no embedding, and the index of {scope} holds vectors of \
                 model {store_model}: run kts-embed before kts-index, or re-index the scope \
                 without embeddings to make it keyword-only (kts-index --reindex {scope})",
                scope = self.scope.display()
            ),
            _ => Ok(()),
        }
    }

    fn insert_document(&mut self, doc: &DocumentRow, chunks: &[ChunkRow]) -> anyhow::Result<()> {
        self.conn
            .prepare_cached(
                "INSERT INTO documents (doc_id, path, title, doc_type, format, source_sha256,
                    metadata, digest, indexed_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
            )?
            .execute(params![
                doc.doc_id,
                doc.path,
                doc.title,
                doc.doc_type,
                doc.format,
                doc.source_sha256,
                doc.metadata.to_string(),
                digest(doc, chunks),
            ])?;
        Ok(())
    }

    fn insert_chunk(&mut self, doc: &DocumentRow, chunk: &ChunkRow) -> anyhow::Result<()> {
        let headings = serde_json::to_string(&chunk.heading_path)?;
        self.conn
            .prepare_cached(
                "INSERT INTO chunks (chunk_id, doc_id, idx, text, heading_path, start, \"end\", page, slide)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )?
            .execute(params![
                chunk.chunk_id,
                doc.doc_id,
                chunk.index as i64,
                chunk.text,
                headings,
                chunk.start as i64,
                chunk.end as i64,
                chunk.page,
                chunk.slide,
            ])
            .with_context(|| format!("storing chunk {}", chunk.chunk_id))?;
        let id = self.conn.last_insert_rowid();
        self.conn
            .prepare_cached(
                "INSERT INTO chunks_fts (rowid, text, title, headings) VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![
                id,
                indexed_text(&chunk.text),
                indexed_title(&doc.title, &doc.path),
                indexed_text(&chunk.heading_path.join(" > "))
            ])?;
        if let Some(embedding) = &chunk.embedding {
            self.conn
                .prepare_cached(
                    "INSERT INTO chunks_vec (rowid, embedding, doc_type) VALUES (?1, ?2, ?3)",
                )?
                .execute(params![id, f32_bytes(embedding), doc.doc_type])?;
            self.vectors_changed = true;
        }
        Ok(())
    }
}

/// Refuses a document whose chunks are not all embedded with `model`, at
/// `dims` dimensions: one model per index, and every chunk in vector search.
fn check_one_model(chunks: &[ChunkRow], model: &str, dims: usize) -> anyhow::Result<()> {
    for chunk in chunks {
        let Some(embedding) = &chunk.embedding else {
            anyhow::bail!(
                "chunk {} has no embedding, other chunks have one of {model}: embed every chunk",
                chunk.chunk_id
            );
        };
        let chunk_model = chunk.model.as_deref().unwrap_or("unknown");
        if chunk_model != model || embedding.len() != dims {
            anyhow::bail!(
                "chunk {} is embedded with {chunk_model} ({} dims), \
                 other chunks with {model} ({dims} dims): one model per index",
                chunk.chunk_id,
                embedding.len()
            );
        }
    }
    Ok(())
}

/// A vector as sqlite-vec reads it: little-endian f32s.
pub(crate) fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
