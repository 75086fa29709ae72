//! Reading: BM25 and vector retrieval, and fetching the chunks they found.

use rusqlite::{OptionalExtension, params};

use crate::vector_file::VectorFile;
use crate::write::f32_bytes;
use crate::{Store, match_query, schema};

/// Restrictions on what a search may return.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Filters {
    /// Only chunks of documents of this type (e.g. `POLICY`).
    pub doc_type: Option<String>,
}

/// One retriever's result: a chunk (by its rowid), its score (higher is
/// better) and its rank in the retriever's list (from 1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scored {
    pub rowid: i64,
    pub score: f64,
    pub rank: usize,
}

/// A stored chunk with its document's citation fields.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    pub rowid: i64,
    pub chunk_id: String,
    pub doc_id: String,
    pub path: String,
    pub title: String,
    pub doc_type: String,
    pub text: String,
    pub heading_path: Vec<String>,
    pub start: usize,
    pub end: usize,
    pub page: Option<u32>,
    pub slide: Option<u32>,
}

fn ranked(rows: Vec<(i64, f64)>) -> Vec<Scored> {
    rows.into_iter()
        .enumerate()
        .map(|(i, (rowid, score))| Scored {
            rowid,
            score,
            rank: i + 1,
        })
        .collect()
}

fn id_and_score(r: &rusqlite::Row<'_>) -> rusqlite::Result<(i64, f64)> {
    Ok((r.get(0)?, r.get(1)?))
}

impl Store {
    /// The `k` chunks that best match the words of `query` by BM25 (FTS5);
    /// score is the negated FTS5 bm25 value. Any text is a valid query.
    pub fn search_bm25(
        &self,
        query: &str,
        k: usize,
        filters: &Filters,
    ) -> anyhow::Result<Vec<Scored>> {
        let Some(fts_query) = match_query(query) else {
            return Ok(Vec::new());
        };
        let sql = match filters.doc_type {
            None => {
                "SELECT rowid, -rank FROM chunks_fts WHERE chunks_fts MATCH ?1
                 ORDER BY rank LIMIT ?2"
            }
            Some(_) => {
                "SELECT rowid, -rank FROM chunks_fts WHERE chunks_fts MATCH ?1
                   AND rowid IN (SELECT c.id FROM chunks c JOIN documents d USING (doc_id)
                                 WHERE d.doc_type = ?3)
                 ORDER BY rank LIMIT ?2"
            }
        };
        let mut stmt = self.conn.prepare_cached(sql)?;
        let rows = match &filters.doc_type {
            None => stmt.query_map(params![fts_query, k as i64], id_and_score)?,
            Some(t) => stmt.query_map(params![fts_query, k as i64, t], id_and_score)?,
        }
        .collect::<Result<Vec<_>, _>>()?;
        Ok(ranked(rows))
    }

    /// The `k` chunks nearest to `embedding`: from `vectors.bin` when it is
    /// current, else by sqlite-vec KNN. Score is the cosine similarity for
    /// unit vectors. Empty on a store without vectors.
    pub fn search_vector(
        &self,
        embedding: &[f32],
        k: usize,
        filters: &Filters,
    ) -> anyhow::Result<Vec<Scored>> {
        if !schema::has_vector_table(&self.conn)? || k == 0 {
            return Ok(Vec::new());
        }
        if let Some(file) = self.vector_file()? {
            let rows = file.search(embedding, k, filters.doc_type.as_deref());
            return Ok(ranked(rows));
        }
        let sql = match filters.doc_type {
            None => "SELECT rowid, distance FROM chunks_vec WHERE embedding MATCH ?1 AND k = ?2",
            Some(_) => {
                "SELECT rowid, distance FROM chunks_vec
                 WHERE embedding MATCH ?1 AND k = ?2 AND doc_type = ?3"
            }
        };
        let blob = f32_bytes(embedding);
        let mut stmt = self.conn.prepare_cached(sql)?;
        let map = |r: &rusqlite::Row<'_>| -> rusqlite::Result<(i64, f64)> {
            let d: f64 = r.get(1)?;
            Ok((r.get(0)?, 1.0 - d * d / 2.0))
        };
        let rows = match &filters.doc_type {
            None => stmt.query_map(params![blob, k as i64], map)?,
            Some(t) => stmt.query_map(params![blob, k as i64, t], map)?,
        }
        .collect::<Result<Vec<_>, _>>()?;
        Ok(ranked(rows))
    }

    /// `vectors.bin` when it is current, opened once.
    fn vector_file(&self) -> anyhow::Result<Option<&VectorFile>> {
        if self.vector_file.get().is_none() {
            let version = self.meta()?.vectors_version;
            let file = VectorFile::open(&crate::vector_file_path(&self.scope), version)?;
            let _ = self.vector_file.set(file);
        }
        Ok(self.vector_file.get().and_then(Option::as_ref))
    }

    /// The document a chunk belongs to.
    pub fn doc_id_of(&self, rowid: i64) -> anyhow::Result<Option<String>> {
        Ok(self
            .conn
            .prepare_cached("SELECT doc_id FROM chunks WHERE id = ?1")?
            .query_row([rowid], |r| r.get(0))
            .optional()?)
    }

    /// The chunks with these rowids, in the same order (missing ones left out).
    pub fn fetch_hits(&self, rowids: &[i64]) -> anyhow::Result<Vec<Hit>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT c.id, c.chunk_id, c.doc_id, d.path, d.title, d.doc_type, c.text,
                    c.heading_path, c.start, c.\"end\", c.page, c.slide
             FROM chunks c JOIN documents d USING (doc_id) WHERE c.id = ?1",
        )?;
        let mut hits = Vec::with_capacity(rowids.len());
        for rowid in rowids {
            let hit = stmt
                .query_row([rowid], |r| {
                    let headings: String = r.get(7)?;
                    Ok(Hit {
                        rowid: r.get(0)?,
                        chunk_id: r.get(1)?,
                        doc_id: r.get(2)?,
                        path: r.get(3)?,
                        title: r.get(4)?,
                        doc_type: r.get(5)?,
                        text: r.get(6)?,
                        heading_path: serde_json::from_str(&headings).unwrap_or_default(),
                        start: r.get::<_, i64>(8)? as usize,
                        end: r.get::<_, i64>(9)? as usize,
                        page: r.get(10)?,
                        slide: r.get(11)?,
                    })
                })
                .optional()?;
            hits.extend(hit);
        }
        Ok(hits)
    }
}
