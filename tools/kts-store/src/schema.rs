//! The tables, created once in a transaction, and the `meta` table.

use rusqlite::{Connection, OptionalExtension};

use crate::words::{FTS5_TOKENIZER, WORD_ANALYSIS, indexed_text, indexed_title};
use crate::{FORMAT_VERSION, Meta};

const TABLES: &str = "
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE documents (
    doc_id TEXT PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL DEFAULT '',
    doc_type TEXT NOT NULL DEFAULT 'GENERAL',
    format TEXT,
    source_sha256 TEXT,
    metadata TEXT NOT NULL DEFAULT '{}',
    digest TEXT NOT NULL,
    indexed_at TEXT NOT NULL
);
CREATE TABLE chunks (
    id INTEGER PRIMARY KEY,
    chunk_id TEXT NOT NULL UNIQUE,
    doc_id TEXT NOT NULL REFERENCES documents(doc_id),
    idx INTEGER NOT NULL,
    text TEXT NOT NULL,
    heading_path TEXT NOT NULL DEFAULT '[]',
    start INTEGER NOT NULL,
    \"end\" INTEGER NOT NULL,
    page INTEGER,
    slide INTEGER
);
CREATE INDEX chunks_by_doc ON chunks(doc_id, idx);
";

/// The document types a store holds are read by every query: from this
/// index, not the documents table (hundreds of MB at 100,000 documents).
const DOCUMENTS_BY_TYPE: &str =
    "CREATE INDEX IF NOT EXISTS documents_by_type ON documents(doc_type);";

/// The keyword index of the chunks: contentless, given [`indexed_text`].
fn fts_table() -> String {
    format!(
        "CREATE VIRTUAL TABLE chunks_fts USING fts5(
             text, title, headings,
             content = '', contentless_delete = 1,
             tokenize = \"{FTS5_TOKENIZER}\"
         );"
    )
}

/// The log of chunk rows added or removed since the lexical index was last
/// brought up to date (see lexical/mod.rs), kept by triggers so that every
/// way of writing chunks records its rows.
const LEXICAL_LOG: &str = "
CREATE TABLE IF NOT EXISTS lexical_pending (chunk INTEGER PRIMARY KEY);
CREATE TRIGGER IF NOT EXISTS chunk_added_for_lexical AFTER INSERT ON chunks
    BEGIN INSERT OR IGNORE INTO lexical_pending VALUES (new.id); END;
CREATE TRIGGER IF NOT EXISTS chunk_removed_for_lexical AFTER DELETE ON chunks
    BEGIN INSERT OR IGNORE INTO lexical_pending VALUES (old.id); END;
";

/// Chunk rows added or removed since `vectors.bin` was written (see vector_delta.rs).
const VECTOR_LOG: &str = "
CREATE TABLE IF NOT EXISTS vectors_pending (chunk INTEGER PRIMARY KEY);
CREATE TRIGGER IF NOT EXISTS chunk_added_for_vectors AFTER INSERT ON chunks
    BEGIN INSERT OR IGNORE INTO vectors_pending VALUES (new.id); END;
CREATE TRIGGER IF NOT EXISTS chunk_removed_for_vectors AFTER DELETE ON chunks
    BEGIN INSERT OR IGNORE INTO vectors_pending VALUES (old.id); END;
";

const NOW: &str = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

/// Creates the tables of a new store; does nothing to an existing one.
pub(crate) fn create(conn: &Connection) -> anyhow::Result<()> {
    let exists: bool = conn.query_row(
        "SELECT count(*) > 0 FROM sqlite_master WHERE name = 'meta'",
        [],
        |r| r.get(0),
    )?;
    if exists {
        return Ok(());
    }
    conn.execute_batch(&format!(
        "BEGIN IMMEDIATE;
         {TABLES}
         {fts_table}
         {LEXICAL_LOG}
         {DOCUMENTS_BY_TYPE}
         {VECTOR_LOG}
         INSERT INTO meta VALUES ('format_version', '{FORMAT_VERSION}');
         INSERT INTO meta VALUES ('word_analysis', '{WORD_ANALYSIS}');
         INSERT INTO meta VALUES ('created', {NOW});
         INSERT INTO meta VALUES ('updated', {NOW});
         COMMIT;",
        fts_table = fts_table()
    ))?;
    Ok(())
}

/// Adds what a store written by an earlier kts lacks (the writer, once at open).
pub(crate) fn upgrade(conn: &Connection) -> anyhow::Result<()> {
    conn.execute_batch(&format!(
        "BEGIN IMMEDIATE; {LEXICAL_LOG} {VECTOR_LOG} {DOCUMENTS_BY_TYPE} COMMIT;"
    ))?;
    upgrade_word_analysis(conn)
}

/// Indexes the chunks' words again when the store's were cut by an older
/// word analysis (see words.rs): FTS5 now, the lexical index at its next
/// sync. Its chunks, titles and headings are all in the store.
fn upgrade_word_analysis(conn: &Connection) -> anyhow::Result<()> {
    let analysis: Option<String> = conn
        .query_row(
            "SELECT value FROM meta WHERE key = 'word_analysis'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    if analysis.and_then(|v| v.parse::<u32>().ok()) >= Some(WORD_ANALYSIS) {
        return Ok(());
    }
    let tx = conn.unchecked_transaction()?;
    tx.execute_batch(&format!("DROP TABLE chunks_fts; {}", fts_table()))?;
    {
        let mut rows = tx.prepare(
            "SELECT c.id, c.text, d.title, c.heading_path, d.path
             FROM chunks c JOIN documents d USING (doc_id)",
        )?;
        let mut insert = tx.prepare(
            "INSERT INTO chunks_fts (rowid, text, title, headings) VALUES (?1, ?2, ?3, ?4)",
        )?;
        let mut rows = rows.query([])?;
        while let Some(row) = rows.next()? {
            let headings: Vec<String> =
                serde_json::from_str(row.get_ref(3)?.as_str()?).unwrap_or_default();
            insert.execute(rusqlite::params![
                row.get::<_, i64>(0)?,
                indexed_text(row.get_ref(1)?.as_str()?),
                indexed_title(row.get_ref(2)?.as_str()?, row.get_ref(4)?.as_str()?),
                indexed_text(&headings.join(" > ")),
            ])?;
        }
    }
    tx.execute_batch("INSERT OR IGNORE INTO lexical_pending SELECT id FROM chunks")?;
    set_meta(&tx, "word_analysis", &WORD_ANALYSIS.to_string())?;
    tx.commit()?;
    Ok(())
}

/// The version of the `vectors.bin` that `vectors_pending` logs changes
/// since, if any.
pub(crate) fn vectors_log_base(conn: &Connection) -> anyhow::Result<Option<u64>> {
    let value: Option<String> = conn
        .query_row(
            "SELECT value FROM meta WHERE key = 'vectors_log_base'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    Ok(value.and_then(|v| v.parse().ok()))
}

/// Empties the vector log: it now counts from the `vectors.bin` of `version`.
pub(crate) fn restart_vectors_log(conn: &Connection, version: u64) -> anyhow::Result<()> {
    conn.execute_batch(&format!(
        "BEGIN IMMEDIATE;
         DELETE FROM vectors_pending;
         INSERT OR REPLACE INTO meta VALUES ('vectors_log_base', '{version}');
         COMMIT;"
    ))?;
    Ok(())
}

/// The generation of the lexical index the store last synced, if any.
pub(crate) fn lexical_generation(conn: &Connection) -> anyhow::Result<Option<u64>> {
    let value: Option<String> = conn
        .query_row(
            "SELECT value FROM meta WHERE key = 'lexical_generation'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    Ok(value.and_then(|v| v.parse().ok()))
}

/// Whether chunk rows changed since the lexical index was last synced.
pub(crate) fn lexical_pending(conn: &Connection) -> anyhow::Result<bool> {
    Ok(
        conn.query_row("SELECT EXISTS (SELECT 1 FROM lexical_pending)", [], |r| {
            r.get(0)
        })?,
    )
}

/// The store's metadata; all defaults (format 0) when it has no tables yet.
pub(crate) fn read_meta(conn: &Connection) -> anyhow::Result<Meta> {
    let created: bool = conn.query_row(
        "SELECT count(*) > 0 FROM sqlite_master WHERE name = 'meta'",
        [],
        |r| r.get(0),
    )?;
    if !created {
        return Ok(Meta::default());
    }
    let get = |key: &str| -> anyhow::Result<Option<String>> {
        Ok(conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()?)
    };
    Ok(Meta {
        format_version: get("format_version")?
            .and_then(|v| v.parse().ok())
            .unwrap_or(0),
        model_id: get("model_id")?,
        dims: get("dims")?.and_then(|v| v.parse().ok()),
        model_sha256: get("model_sha256")?,
        vectors_version: get("vectors_version")?
            .and_then(|v| v.parse().ok())
            .unwrap_or(0),
        created: get("created")?.unwrap_or_default(),
        updated: get("updated")?.unwrap_or_default(),
    })
}

pub(crate) fn set_meta(conn: &Connection, key: &str, value: &str) -> anyhow::Result<()> {
    conn.execute(
        "INSERT INTO meta VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [key, value],
    )?;
    Ok(())
}

pub(crate) fn touch(conn: &Connection) -> anyhow::Result<()> {
    conn.execute(
        &format!("UPDATE meta SET value = {NOW} WHERE key = 'updated'"),
        [],
    )?;
    Ok(())
}

/// Records that this transaction changed vectors (`vectors.bin` is now stale).
pub(crate) fn bump_vectors_version(conn: &Connection) -> anyhow::Result<()> {
    conn.execute(
        "INSERT INTO meta VALUES ('vectors_version', '1')
         ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
        [],
    )?;
    Ok(())
}

pub(crate) fn has_vector_table(conn: &Connection) -> anyhow::Result<bool> {
    Ok(conn.query_row(
        "SELECT count(*) > 0 FROM sqlite_master WHERE name = 'chunks_vec'",
        [],
        |r| r.get(0),
    )?)
}

/// Creates the vector table for embeddings of `dims` dimensions.
pub(crate) fn create_vector_table(conn: &Connection, dims: usize) -> anyhow::Result<()> {
    conn.execute_batch(&format!(
        "CREATE VIRTUAL TABLE chunks_vec USING vec0(embedding float[{dims}], doc_type text)"
    ))?;
    Ok(())
}
