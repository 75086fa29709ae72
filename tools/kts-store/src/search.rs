//! Reading: BM25 and vector retrieval, and fetching the chunks they found.

use anyhow::Context;
use rusqlite::{OptionalExtension, params};

use crate::fts::search_terms;
use crate::lexical::{LexicalIndex, LexicalState};
use crate::vector_file::{Opened, VectorFile};
use crate::write::f32_bytes;
use crate::{Store, match_query, schema};

/// Restrictions on what a search may return.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Filters {
    /// Only chunks of documents of these types (e.g. `POLICY`); any type when empty.
    pub doc_types: Vec<String>,
    /// Only chunks of these documents, when given.
    pub doc_ids: Option<Vec<String>>,
}

impl Filters {
    /// Only documents of one type.
    pub fn doc_type(doc_type: &str) -> Filters {
        Filters {
            doc_types: vec![doc_type.to_string()],
            doc_ids: None,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.doc_types.is_empty() && self.doc_ids.is_none()
    }

    /// The filters as SQL parameters: JSON arrays, or NULL for no restriction.
    fn sql_params(&self) -> (Option<String>, Option<String>) {
        let json = |values: &[String]| serde_json::to_string(values).expect("strings serialise");
        (
            (!self.doc_types.is_empty()).then(|| json(&self.doc_types)),
            self.doc_ids.as_deref().map(json),
        )
    }
}

/// The chunks the filters allow (parameters 1 and 2: [`Filters::sql_params`]).
const ALLOWED_CHUNKS: &str = "SELECT c.id FROM chunks c JOIN documents d USING (doc_id)
     WHERE (?1 IS NULL OR d.doc_type IN (SELECT value FROM json_each(?1)))
       AND (?2 IS NULL OR c.doc_id IN (SELECT value FROM json_each(?2)))";

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

/// The `k` best (rowid, score) rows, best first, ties by rowid.
pub(crate) fn best_first(mut rows: Vec<(i64, f64)>, k: usize) -> Vec<(i64, f64)> {
    rows.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    rows.truncate(k);
    rows
}

fn id_and_score(r: &rusqlite::Row<'_>) -> rusqlite::Result<(i64, f64)> {
    Ok((r.get(0)?, r.get(1)?))
}

impl Store {
    /// The `k` chunks that best match the words of `query` by BM25: from the
    /// lexical index while it is current, else from FTS5 (score: the negated
    /// FTS5 bm25 value). Any text is a valid query.
    pub fn search_bm25(
        &self,
        query: &str,
        k: usize,
        filters: &Filters,
    ) -> anyhow::Result<Vec<Scored>> {
        if let (Some(index), _) = self.lexical()? {
            match index.search(&search_terms(query), k, filters) {
                Ok(rows) => return Ok(ranked(rows)),
                Err(e) => self.lexical_is_damaged(&e),
            }
        }
        self.search_fts5(query, k, filters)
    }

    /// How rare each word is among the chunks: BM25's inverse document
    /// frequency, ln(1 + (N − n + 0.5) / (n + 0.5)) for a word n of N chunks
    /// hold (a word no chunk holds is the rarest).
    pub fn rarities(&self, words: &[String]) -> anyhow::Result<Vec<f64>> {
        let (total, frequencies) = self.document_frequencies(words)?;
        let total = total as f64;
        Ok(frequencies
            .into_iter()
            .map(|n| {
                let n = n as f64;
                (1.0 + (total - n + 0.5) / (n + 0.5)).ln()
            })
            .collect())
    }

    fn document_frequencies(&self, words: &[String]) -> anyhow::Result<(u64, Vec<u64>)> {
        if let (Some(index), _) = self.lexical()? {
            match index.document_frequencies(words) {
                Ok(found) => return Ok(found),
                Err(e) => self.lexical_is_damaged(&e),
            }
        }
        let count = |sql: &str, word: Option<String>| -> anyhow::Result<u64> {
            let mut stmt = self.conn.prepare_cached(sql)?;
            let n: i64 = match word {
                Some(word) => stmt.query_row([word], |r| r.get(0))?,
                None => stmt.query_row([], |r| r.get(0))?,
            };
            Ok(n.max(0) as u64)
        };
        let total = count("SELECT count(*) FROM chunks", None)?;
        let frequencies = words
            .iter()
            .map(|word| match match_query(word) {
                Some(query) => count(
                    "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?1",
                    Some(query),
                ),
                None => Ok(0),
            })
            .collect::<anyhow::Result<_>>()?;
        Ok((total, frequencies))
    }

    /// Leaves the lexical index aside until another connection commits.
    fn lexical_is_damaged(&self, e: &anyhow::Error) {
        if let Some((_, index, state)) = &mut *self.lexical.borrow_mut() {
            *index = None;
            *state = LexicalState::unreadable(&self.scope, e);
        }
    }

    /// Whether BM25 searches use the lexical index, and if not, why.
    pub fn lexical_state(&self) -> anyhow::Result<LexicalState> {
        Ok(self.lexical()?.1)
    }

    /// The lexical index if it is current, checked again whenever another
    /// connection has committed since it was opened.
    fn lexical(&self) -> anyhow::Result<(Option<LexicalIndex>, LexicalState)> {
        let data_version: i64 = self
            .conn
            .prepare_cached("PRAGMA data_version")?
            .query_row([], |r| r.get(0))?;
        let mut cached = self.lexical.borrow_mut();
        match &*cached {
            Some((version, index, state)) if *version == data_version => {
                Ok((index.clone(), state.clone()))
            }
            _ => {
                let (index, state) = LexicalIndex::open(&self.conn, &self.scope);
                *cached = Some((data_version, index.clone(), state.clone()));
                Ok((index, state))
            }
        }
    }

    /// BM25 by FTS5, the store of record's own index.
    pub fn search_fts5(
        &self,
        query: &str,
        k: usize,
        filters: &Filters,
    ) -> anyhow::Result<Vec<Scored>> {
        let Some(fts_query) = match_query(query) else {
            return Ok(Vec::new());
        };
        let rows = if filters.is_empty() {
            let mut stmt = self.conn.prepare_cached(
                "SELECT rowid, -rank FROM chunks_fts WHERE chunks_fts MATCH ?1
                 ORDER BY rank LIMIT ?2",
            )?;
            stmt.query_map(params![fts_query, k as i64], id_and_score)?
                .collect::<Result<Vec<_>, _>>()?
        } else {
            let (types, docs) = filters.sql_params();
            // `+rowid`: the allowed chunks filter FTS5's matches. Given to FTS5
            // as a rowid constraint, they would each run the whole query again
            // (30 s for a common-word question at 100k chunks).
            let mut stmt = self.conn.prepare_cached(&format!(
                "SELECT rowid, -rank FROM chunks_fts WHERE chunks_fts MATCH ?3
                   AND +rowid IN ({ALLOWED_CHUNKS})
                 ORDER BY rank LIMIT ?4"
            ))?;
            stmt.query_map(params![types, docs, fts_query, k as i64], id_and_score)?
                .collect::<Result<Vec<_>, _>>()?
        };
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
        if filters.doc_ids.is_some() {
            return self.search_vector_among(embedding, k, filters);
        }
        if let Some(file) = self.vector_file()?
            && let Some(rows) = self.unless_damaged(file.search(embedding, k, &filters.doc_types))
        {
            return Ok(ranked(rows));
        }
        let blob = f32_bytes(embedding);
        let map = |r: &rusqlite::Row<'_>| -> rusqlite::Result<(i64, f64)> {
            let d: f64 = r.get(1)?;
            Ok((r.get(0)?, 1.0 - d * d / 2.0))
        };
        let mut rows = Vec::new();
        if filters.doc_types.is_empty() {
            let mut stmt = self.conn.prepare_cached(
                "SELECT rowid, distance FROM chunks_vec WHERE embedding MATCH ?1 AND k = ?2",
            )?;
            for row in stmt.query_map(params![blob, k as i64], map)? {
                rows.push(row?);
            }
        } else {
            // One KNN per type (sqlite-vec filters metadata by equality), merged.
            let mut stmt = self.conn.prepare_cached(
                "SELECT rowid, distance FROM chunks_vec
                 WHERE embedding MATCH ?1 AND k = ?2 AND doc_type = ?3",
            )?;
            for doc_type in &filters.doc_types {
                for row in stmt.query_map(params![blob, k as i64, doc_type], map)? {
                    rows.push(row?);
                }
            }
            return Ok(ranked(best_first(rows, k)));
        }
        Ok(ranked(rows))
    }

    /// Vector search restricted to some documents: their chunks scored exactly.
    fn search_vector_among(
        &self,
        embedding: &[f32],
        k: usize,
        filters: &Filters,
    ) -> anyhow::Result<Vec<Scored>> {
        let (types, docs) = filters.sql_params();
        let allowed: std::collections::HashSet<i64> = self
            .conn
            .prepare_cached(ALLOWED_CHUNKS)?
            .query_map(params![types, docs], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        if let Some(file) = self.vector_file()?
            && let Some(rows) = self.unless_damaged(file.search_among(embedding, k, &allowed))
        {
            return Ok(ranked(rows));
        }
        let mut stmt = self
            .conn
            .prepare_cached("SELECT embedding FROM chunks_vec WHERE rowid = ?1")?;
        let mut rows = Vec::with_capacity(allowed.len());
        for rowid in allowed {
            let blob: Option<Vec<u8>> = stmt.query_row([rowid], |r| r.get(0)).optional()?;
            if let Some(blob) = blob {
                let score: f32 = blob
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
                    .zip(embedding)
                    .map(|(x, y)| x * y)
                    .sum();
                rows.push((rowid, f64::from(score)));
            }
        }
        Ok(ranked(best_first(rows, k)))
    }

    /// The stored embeddings of these chunks (those that have one), in order.
    pub fn embeddings(&self, rowids: &[i64]) -> anyhow::Result<Vec<Vec<f32>>> {
        if !schema::has_vector_table(&self.conn)? {
            return Ok(Vec::new());
        }
        let mut stmt = self
            .conn
            .prepare_cached("SELECT embedding FROM chunks_vec WHERE rowid = ?1")?;
        let mut out = Vec::with_capacity(rowids.len());
        for &rowid in rowids {
            let blob: Option<Vec<u8>> = stmt.query_row([rowid], |r| r.get(0)).optional()?;
            if let Some(blob) = blob {
                out.push(
                    blob.chunks_exact(4)
                        .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
                        .collect(),
                );
            }
        }
        Ok(out)
    }

    /// Whether vector searches are answered from `vectors.bin` (with its
    /// delta), rather than by sqlite-vec while the file is stale or missing.
    pub fn vectors_from_file(&self) -> anyhow::Result<bool> {
        Ok(self.vector_file()?.is_some())
    }

    /// `vectors.bin` (with its delta) when it is current and sound, opened once.
    fn vector_file(&self) -> anyhow::Result<Option<&VectorFile>> {
        if self.vector_file.get().is_none() {
            let version = self.meta()?.vectors_version;
            let path = crate::vector_file_path(&self.scope);
            let opened = VectorFile::open(&path, version)
                .with_context(|| format!("reading {}", path.display()))?;
            let file = match opened {
                Opened::File(file) => Some(file),
                Opened::Stale => None,
                Opened::Damaged(why) => {
                    self.vector_file_damage.replace(Some(why));
                    None
                }
            };
            let _ = self.vector_file.set(file);
        }
        if self.vector_file_damage.borrow().is_some() {
            return Ok(None);
        }
        Ok(self.vector_file.get().and_then(Option::as_deref))
    }

    /// The rows `vectors.bin` scored; when they show its vectors damaged,
    /// none, and the file is left aside.
    fn unless_damaged(&self, rows: Option<Vec<(i64, f64)>>) -> Option<Vec<(i64, f64)>> {
        if rows.is_none() {
            self.vector_file_damage
                .replace(Some("a vector it holds is not what its check says".into()));
        }
        rows
    }

    /// What to tell of `vectors.bin` when a search found it damaged and
    /// answered from the store's own vectors instead: the file, why, and
    /// what to do.
    pub fn vector_file_damage(&self) -> Option<String> {
        let why = self.vector_file_damage.borrow().clone()?;
        let path = crate::vector_file_path(&self.scope);
        Some(format!(
            "{} is damaged ({why}): vector searches use the index's own vectors, more slowly; \
             remove it and run kts-index {} < /dev/null to write it anew",
            path.display(),
            self.scope.display()
        ))
    }

    /// The documents with chunks holding every word of `text` (stopwords
    /// aside), as (path, matching chunks), most chunks first.
    pub fn documents_matching_all(&self, text: &str) -> anyhow::Result<Vec<(String, usize)>> {
        let Some(query) = crate::match_all_query(text) else {
            return Ok(Vec::new());
        };
        let mut stmt = self.conn.prepare_cached(
            "SELECT d.path, count(*) FROM chunks_fts f
               JOIN chunks c ON c.id = f.rowid JOIN documents d USING (doc_id)
             WHERE chunks_fts MATCH ?1
             GROUP BY d.path ORDER BY count(*) DESC, d.path",
        )?;
        let rows = stmt
            .query_map([query], |r| Ok((r.get(0)?, r.get::<_, i64>(1)? as usize)))?
            .collect::<Result<_, _>>()?;
        Ok(rows)
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

    /// Goes back through the chunks of `doc_id` that start before the
    /// character offset `before` and contain `needle`, nearest first, until
    /// `found` answers; it is given each chunk's start and text.
    pub fn find_in_earlier_chunks<T>(
        &self,
        doc_id: &str,
        before: usize,
        needle: &str,
        mut found: impl FnMut(usize, &str) -> Option<T>,
    ) -> anyhow::Result<Option<T>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT start, text FROM chunks
             WHERE doc_id = ?1 AND start < ?2 AND instr(text, ?3) > 0 ORDER BY idx DESC",
        )?;
        let mut rows = stmt.query(params![doc_id, before as i64, needle])?;
        while let Some(row) = rows.next()? {
            let text: String = row.get(1)?;
            if let Some(answer) = found(row.get::<_, i64>(0)? as usize, &text) {
                return Ok(Some(answer));
            }
        }
        Ok(None)
    }
}
