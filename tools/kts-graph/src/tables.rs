//! What extraction found, per document, in the scope's database
//! (`DIR/.kts/kts.db`, beside the tables of kts-store):
//!
//! ```text
//! graph_meta         key/value: settings (the extraction fingerprint the rows were made with),
//!                    generation (raised by triggers whenever graph_docs or documents change
//!                    what the graph is built from: the graph snapshot's staleness key)
//! graph_docs         doc_id PK, digest: the document version the rows below describe
//! graph_mentions     doc_id, chunk_id, kind, key, name, count
//! graph_definitions  doc_id, chunk_id, key, name, text
//! graph_expansions   doc_id, chunk_id, acronym, expansion
//! graph_relations    doc_id, chunk_id, from_kind, from_key, to_kind, to_key, label
//! graph_keywords     doc_id, word, count   (a document's most frequent content words)
//! ```
//!
//! Every row belongs to one document, so bringing the graph up to date after
//! kts-index changed or removed documents touches only those documents' rows.
//! Everything that depends on the whole scope (totals, the min-mentions
//! filter, edge weights, topics) is computed when the graph is built, and
//! kept in the graph snapshot (snapshot.rs) for the questions.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::Context;
use kts_store::Store;
use rusqlite::{Connection, OptionalExtension, params};

use crate::extract::{ChunkEntities, Extractor, keywords};
use crate::settings::Settings;

const TABLES: &str = "
CREATE TABLE IF NOT EXISTS graph_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS graph_docs (doc_id TEXT PRIMARY KEY, digest TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS graph_mentions (
    doc_id TEXT NOT NULL, chunk_id TEXT NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL,
    name TEXT NOT NULL, count INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS graph_mentions_by_doc ON graph_mentions(doc_id);
CREATE INDEX IF NOT EXISTS graph_mentions_by_key ON graph_mentions(key);
CREATE TABLE IF NOT EXISTS graph_definitions (
    doc_id TEXT NOT NULL, chunk_id TEXT NOT NULL, key TEXT NOT NULL, name TEXT NOT NULL,
    text TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS graph_definitions_by_doc ON graph_definitions(doc_id);
CREATE TABLE IF NOT EXISTS graph_expansions (
    doc_id TEXT NOT NULL, chunk_id TEXT NOT NULL, acronym TEXT NOT NULL, expansion TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS graph_expansions_by_doc ON graph_expansions(doc_id);
CREATE INDEX IF NOT EXISTS graph_expansions_by_acronym ON graph_expansions(acronym);
CREATE TABLE IF NOT EXISTS graph_relations (
    doc_id TEXT NOT NULL, chunk_id TEXT NOT NULL, from_kind TEXT NOT NULL, from_key TEXT NOT NULL,
    to_kind TEXT NOT NULL, to_key TEXT NOT NULL, label TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS graph_relations_by_doc ON graph_relations(doc_id);
CREATE TABLE IF NOT EXISTS graph_keywords (doc_id TEXT NOT NULL, word TEXT NOT NULL, count INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS graph_keywords_by_doc ON graph_keywords(doc_id);
INSERT OR IGNORE INTO graph_meta VALUES ('generation', 0);
CREATE TRIGGER IF NOT EXISTS graph_doc_added AFTER INSERT ON graph_docs
    BEGIN UPDATE graph_meta SET value = value + 1 WHERE key = 'generation'; END;
CREATE TRIGGER IF NOT EXISTS graph_doc_removed AFTER DELETE ON graph_docs
    BEGIN UPDATE graph_meta SET value = value + 1 WHERE key = 'generation'; END;
CREATE TRIGGER IF NOT EXISTS document_added_for_graph AFTER INSERT ON documents
    BEGIN UPDATE graph_meta SET value = value + 1 WHERE key = 'generation'; END;
CREATE TRIGGER IF NOT EXISTS document_removed_for_graph AFTER DELETE ON documents
    BEGIN UPDATE graph_meta SET value = value + 1 WHERE key = 'generation'; END;
CREATE TRIGGER IF NOT EXISTS document_renamed_for_graph AFTER UPDATE OF path, title ON documents
    BEGIN UPDATE graph_meta SET value = value + 1 WHERE key = 'generation'; END;
";

/// The tables holding rows of one document each.
const PER_DOCUMENT: [&str; 6] = [
    "graph_docs",
    "graph_mentions",
    "graph_definitions",
    "graph_expansions",
    "graph_relations",
    "graph_keywords",
];

/// Content words kept per document for keyword topics.
const KEYWORDS_PER_DOCUMENT: usize = 30;
/// Documents per transaction (a transaction also ends after a second).
const BATCH: usize = 64;

/// What bringing the graph up to date did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Synced {
    /// Documents whose entities were extracted (new or changed).
    pub extracted: usize,
    /// Documents whose rows were removed (gone from the index).
    pub removed: usize,
    pub unchanged: usize,
    /// Entity mentions found in the extracted documents.
    pub mentions: u64,
}

/// Whether the scope's database has graph tables.
pub fn exist(conn: &Connection) -> anyhow::Result<bool> {
    Ok(conn.query_row(
        "SELECT count(*) > 0 FROM sqlite_master WHERE name = 'graph_docs'",
        [],
        |r| r.get(0),
    )?)
}

/// Indexed documents the graph does not describe as they are now.
pub fn lagging(conn: &Connection) -> anyhow::Result<usize> {
    let n: i64 = conn.query_row(
        "SELECT count(*) FROM documents d LEFT JOIN graph_docs g USING (doc_id)
         WHERE g.digest IS NULL OR g.digest != d.digest",
        [],
        |r| r.get(0),
    )?;
    Ok(n as usize)
}

/// Brings the graph rows up to date with the store's documents: extracts
/// new and changed documents, removes rows of documents no longer indexed,
/// and leaves the rest alone. Every document is whole or absent after a crash.
pub fn sync(store: &mut Store, settings: &Settings) -> anyhow::Result<Synced> {
    let fingerprint = settings.extraction_fingerprint();
    store.begin()?;
    store.connection().execute_batch(TABLES)?;
    if stored_fingerprint(store.connection())?.as_deref() != Some(fingerprint.as_str()) {
        for table in PER_DOCUMENT {
            store
                .connection()
                .execute(&format!("DELETE FROM {table}"), [])?;
        }
        store.connection().execute(
            "INSERT INTO graph_meta VALUES ('settings', ?1)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [&fingerprint],
        )?;
    }
    store.commit()?;

    let indexed = digests(store.connection(), "SELECT doc_id, digest FROM documents")?;
    let graphed = digests(store.connection(), "SELECT doc_id, digest FROM graph_docs")?;
    let gone: Vec<&String> = graphed
        .keys()
        .filter(|id| !indexed.contains_key(*id))
        .collect();
    let stale: Vec<(&String, &String)> = indexed
        .iter()
        .filter(|(id, digest)| graphed.get(*id) != Some(*digest))
        .collect();
    let mut synced = Synced {
        unchanged: indexed.len() - stale.len(),
        ..Synced::default()
    };
    let extractor = Extractor::new(&settings.seeds, &settings.taxonomy);
    let mut batch = Batch::start(store)?;
    for doc_id in gone {
        delete_rows(batch.store.connection(), doc_id)?;
        synced.removed += 1;
        batch.step()?;
    }
    for group in stale.chunks(BATCH) {
        let texts = group
            .iter()
            .map(|(doc_id, _)| chunk_texts(batch.store.connection(), doc_id))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let extracted = extract_in_parallel(&extractor, texts);
        for ((doc_id, digest), document) in group.iter().zip(extracted) {
            let conn = batch.store.connection();
            delete_rows(conn, doc_id)?;
            synced.mentions += document.mentions();
            store_document(conn, doc_id, &document)?;
            conn.execute("INSERT INTO graph_docs VALUES (?1, ?2)", [doc_id, digest])?;
            synced.extracted += 1;
            batch.step()?;
        }
    }
    batch.finish()?;
    Ok(synced)
}

/// What extraction found in one document.
struct Extracted {
    chunks: Vec<(String, ChunkEntities)>,
    keywords: Vec<(String, u32)>,
}

impl Extracted {
    fn mentions(&self) -> u64 {
        self.chunks
            .iter()
            .flat_map(|(_, found)| &found.mentions)
            .map(|m| u64::from(m.count))
            .sum()
    }
}

/// A document's chunks (id, text), in order.
fn chunk_texts(conn: &Connection, doc_id: &str) -> anyhow::Result<Vec<(String, String)>> {
    Ok(conn
        .prepare_cached("SELECT chunk_id, text FROM chunks WHERE doc_id = ?1 ORDER BY idx")?
        .query_map([doc_id], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?)
}

/// Extracts documents on every core; results in input order.
fn extract_in_parallel(
    extractor: &Extractor,
    documents: Vec<Vec<(String, String)>>,
) -> Vec<Extracted> {
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let per_thread = documents.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let workers: Vec<_> = documents
            .chunks(per_thread)
            .map(|part| {
                s.spawn(move || {
                    part.iter()
                        .map(|d| extract(extractor, d))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("extraction panicked"))
            .collect()
    })
}

/// Extracts the entities of each chunk and the document's keywords.
fn extract(extractor: &Extractor, chunks: &[(String, String)]) -> Extracted {
    let mut words: BTreeMap<String, u32> = BTreeMap::new();
    let mut found = Vec::with_capacity(chunks.len());
    for (chunk_id, text) in chunks {
        found.push((chunk_id.clone(), extractor.extract(text)));
        for (word, count) in keywords(text) {
            *words.entry(word).or_default() += count;
        }
    }
    let mut ranked: Vec<(String, u32)> = words.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    ranked.truncate(KEYWORDS_PER_DOCUMENT);
    Extracted {
        chunks: found,
        keywords: ranked,
    }
}

/// A write transaction that commits every [`BATCH`] documents or second.
struct Batch<'a> {
    store: &'a mut Store,
    documents: usize,
    started: Instant,
}

impl<'a> Batch<'a> {
    fn start(store: &'a mut Store) -> anyhow::Result<Batch<'a>> {
        store.begin()?;
        Ok(Batch {
            store,
            documents: 0,
            started: Instant::now(),
        })
    }

    fn step(&mut self) -> anyhow::Result<()> {
        self.documents += 1;
        if self.documents >= BATCH || self.started.elapsed() > Duration::from_secs(1) {
            self.store.commit()?;
            self.store.begin()?;
            self.documents = 0;
            self.started = Instant::now();
        }
        Ok(())
    }

    fn finish(self) -> anyhow::Result<()> {
        self.store.commit()
    }
}

fn stored_fingerprint(conn: &Connection) -> anyhow::Result<Option<String>> {
    Ok(conn
        .query_row(
            "SELECT value FROM graph_meta WHERE key = 'settings'",
            [],
            |r| r.get(0),
        )
        .optional()?)
}

fn digests(conn: &Connection, sql: &str) -> anyhow::Result<BTreeMap<String, String>> {
    let mut statement = conn.prepare(sql)?;
    let rows = statement.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn delete_rows(conn: &Connection, doc_id: &str) -> anyhow::Result<()> {
    for table in PER_DOCUMENT {
        conn.prepare_cached(&format!("DELETE FROM {table} WHERE doc_id = ?1"))?
            .execute([doc_id])?;
    }
    Ok(())
}

/// Stores what extraction found in a document.
fn store_document(conn: &Connection, doc_id: &str, document: &Extracted) -> anyhow::Result<()> {
    for (chunk_id, found) in &document.chunks {
        insert_chunk(conn, doc_id, chunk_id, found)
            .with_context(|| format!("storing the entities of chunk {chunk_id}"))?;
    }
    for (word, count) in &document.keywords {
        conn.prepare_cached("INSERT INTO graph_keywords VALUES (?1, ?2, ?3)")?
            .execute(params![doc_id, word, count])?;
    }
    Ok(())
}

fn insert_chunk(
    conn: &Connection,
    doc_id: &str,
    chunk_id: &str,
    found: &ChunkEntities,
) -> anyhow::Result<()> {
    for m in &found.mentions {
        conn.prepare_cached("INSERT INTO graph_mentions VALUES (?1, ?2, ?3, ?4, ?5, ?6)")?
            .execute(params![
                doc_id,
                chunk_id,
                m.kind.as_str(),
                m.key,
                m.name,
                m.count
            ])?;
    }
    for d in &found.definitions {
        conn.prepare_cached("INSERT INTO graph_definitions VALUES (?1, ?2, ?3, ?4, ?5)")?
            .execute(params![doc_id, chunk_id, d.key, d.name, d.text])?;
    }
    for e in &found.expansions {
        conn.prepare_cached("INSERT INTO graph_expansions VALUES (?1, ?2, ?3, ?4)")?
            .execute(params![doc_id, chunk_id, e.acronym, e.expansion])?;
    }
    for r in &found.relations {
        conn.prepare_cached("INSERT INTO graph_relations VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")?
            .execute(params![
                doc_id,
                chunk_id,
                r.from.0.as_str(),
                r.from.1,
                r.to.0.as_str(),
                r.to.1,
                r.label
            ])?;
    }
    Ok(())
}
