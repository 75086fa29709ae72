//! The catalog database, `ROOT/.kts-catalog.db`: one row per scope, an FTS5
//! index over each row's searchable text, and the words of each slug.
//!
//! ```text
//! catalog_meta  key/value: format_version, created, rebuilt (last full rebuild), updated
//! scopes        id INTEGER PK, slug UNIQUE, path UNIQUE (relative to the root),
//!               documents, chunks, doc_types, years, entities, keywords, titles (JSON arrays),
//!               model_id, last_indexed (the store's meta.updated), cataloged_at,
//!               anchor (the slug's rarest word: a text names the slug only if it holds it)
//! slug_words    word, scope_id: the distinct words of each slug (split at `_`)
//! scopes_fts    FTS5 keyed by scopes.id: slug, folder, doc_types, entities, keywords, years,
//!               titles, as `kts_store::indexed_text` gives them, cut by
//!               `kts_store::FTS5_TOKENIZER`;
//!               rank = bm25(8, 4, 0.5, 2, 1, 1, 2)
//! ```
//!
//! Every change is one transaction (WAL): a full rebuild replaces every row
//! at once, an update replaces one row, and a crash leaves the previous
//! catalog.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use anyhow::Context;
use kts_store::{FTS5_TOKENIZER, ScopeEntry, Scopes, discover_scopes_keeping, indexed_text};
use rusqlite::{Connection, OptionalExtension, params};

use crate::{CatalogRow, read_scope};

/// The catalog format this code reads and writes (`catalog_meta.format_version`).
pub const FORMAT_VERSION: u32 = 2;

/// A file name starting with a dot: kts-crawl and scope discovery skip it.
pub const CATALOG_FILE: &str = ".kts-catalog.db";

/// `ROOT/.kts-catalog.db`.
pub fn catalog_path(root: &Path) -> PathBuf {
    root.join(CATALOG_FILE)
}

fn tables() -> String {
    format!(
        "
CREATE TABLE catalog_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE scopes (
    id INTEGER PRIMARY KEY,
    slug TEXT NOT NULL UNIQUE,
    path TEXT NOT NULL UNIQUE,
    documents INTEGER NOT NULL,
    chunks INTEGER NOT NULL,
    doc_types TEXT NOT NULL DEFAULT '[]',
    years TEXT NOT NULL DEFAULT '[]',
    entities TEXT NOT NULL DEFAULT '[]',
    keywords TEXT NOT NULL DEFAULT '[]',
    titles TEXT NOT NULL DEFAULT '[]',
    model_id TEXT,
    last_indexed TEXT NOT NULL DEFAULT '',
    cataloged_at TEXT NOT NULL,
    anchor TEXT
);
CREATE INDEX scopes_by_anchor ON scopes(anchor);
CREATE TABLE slug_words (
    word TEXT NOT NULL,
    scope_id INTEGER NOT NULL,
    PRIMARY KEY (word, scope_id)
) WITHOUT ROWID;
CREATE INDEX slug_words_by_scope ON slug_words(scope_id);
CREATE VIRTUAL TABLE scopes_fts USING fts5(
    slug, folder, doc_types, entities, keywords, years, titles,
    tokenize = \"{FTS5_TOKENIZER}\"
);
INSERT INTO scopes_fts(scopes_fts, rank) VALUES ('rank', 'bm25(8.0, 4.0, 0.5, 2.0, 1.0, 1.0, 2.0)');
"
    )
}
const NOW: &str = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

const ROW_COLUMNS: &str = "slug, path, documents, chunks, doc_types, years, entities, keywords, \
                           titles, model_id, last_indexed";

/// A word held by more rows than this, and by at least a quarter of them,
/// is left out of a search's ranking (see [`Catalog::search`]).
pub const COMMON_ROWS: i64 = 500;

/// The most rows a search ranks, about: its words, rarest first, are left
/// out once their rows would pass this (the rarest one is always ranked).
pub const RANKED_ROWS: i64 = 2000;

/// How long a writer waits for another one (a rebuild holds the catalog
/// only while it writes the rows it has already read).
const BUSY_TIMEOUT_MS: u32 = 10_000;

/// A scope of the root that could not be read: reported and left out.
#[derive(Clone, Debug, PartialEq)]
pub struct ScopeFailure {
    /// The folder, relative to the root.
    pub path: String,
    pub slug: String,
    pub code: kts_record::ErrorCode,
    pub message: String,
}

/// What a rebuild did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// Rows written: the scopes read.
    pub scopes: usize,
    /// Their documents and chunks, in all.
    pub documents: usize,
    pub chunks: usize,
    /// Sub-folders without an index (`.kts/kts.db`): not listed.
    pub not_indexed: Vec<String>,
    /// Scopes that could not be read: not listed.
    pub failed: Vec<ScopeFailure>,
    /// Slugs several folders give ([`Scopes::collisions`]).
    pub collisions: BTreeMap<String, Vec<ScopeEntry>>,
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} scopes cataloged ({} documents, {} chunks), {} failed, {} folders not indexed",
            self.scopes,
            self.documents,
            self.chunks,
            self.failed.len(),
            self.not_indexed.len()
        )
    }
}

/// A knowledge root's catalog, open for reading.
pub struct Catalog {
    conn: Connection,
    root: PathBuf,
}

impl Catalog {
    /// Opens the catalog of `root` read-only. Fails, saying how to build one,
    /// when the root has none.
    pub fn open(root: &Path) -> anyhow::Result<Catalog> {
        let path = catalog_path(root);
        let missing = || {
            anyhow::anyhow!(
                "no catalog at {}: build it with kts-catalog {}",
                path.display(),
                root.display()
            )
        };
        if !path.is_file() {
            return Err(missing());
        }
        let conn = kts_store::open_read_only(&path)?;
        conn.execute_batch("PRAGMA busy_timeout = 5000; PRAGMA query_only = 1;")
            .with_context(|| format!("opening {}", path.display()))?;
        match format_version(&conn).with_context(|| format!("reading {}", path.display()))? {
            0 => return Err(missing()),
            FORMAT_VERSION => {}
            other => anyhow::bail!(
                "{} has catalog format {other}, this kts reads format {FORMAT_VERSION}: \
                 rebuild it with kts-catalog {}",
                path.display(),
                root.display()
            ),
        }
        Ok(Catalog {
            conn,
            root: root.to_path_buf(),
        })
    }

    /// The knowledge root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Rebuilds the catalog of `root` from every scope: each indexed
    /// sub-folder is read (a scope that cannot be read is reported in the
    /// summary and left out; folders without an index are not listed), then
    /// every row is replaced in one transaction, so a crash leaves the
    /// previous catalog. Creates the catalog when there is none (and
    /// replaces one that is not an SQLite database). The scopes keep the
    /// slugs the previous catalog gave them ([`root_scopes`]).
    pub fn rebuild(root: &Path) -> anyhow::Result<Summary> {
        let found = root_scopes(root)?;
        let mut summary = Summary {
            collisions: found.collisions.clone(),
            ..Summary::default()
        };
        let mut rows = Vec::new();
        for entry in &found.scopes {
            if !entry.indexed {
                summary.not_indexed.push(relative(root, &entry.path));
                continue;
            }
            match read_scope(root, entry) {
                Ok(row) => rows.push(row),
                Err(e) => summary.failed.push(ScopeFailure {
                    path: relative(root, &entry.path),
                    slug: entry.slug.clone(),
                    code: error_code(&e),
                    message: format!("{e:#}"),
                }),
            }
        }
        let mut rebuild = Rebuild::begin(root)?;
        for row in &rows {
            rebuild.add(row)?;
            summary.scopes += 1;
            summary.documents += row.documents;
            summary.chunks += row.chunks;
        }
        rebuild.commit()?;
        Ok(summary)
    }

    /// Brings the row of one scope (`scope_dir`, a sub-folder of `root`) up
    /// to date, in its own transaction: replaced when the scope is indexed
    /// (the catalog is not written when the row is the same), removed when
    /// it is not. Rows whose folder is gone are removed, and rows whose slug
    /// changed are renamed, so the slugs stay those [`root_scopes`] gives.
    /// Returns `Ok(false)`, and creates nothing, when the root has no
    /// catalog. Fails, leaving the catalog as it was, when the scope cannot
    /// be read.
    pub fn update_scope(root: &Path, scope_dir: &Path) -> anyhow::Result<bool> {
        if !catalog_path(root).is_file() {
            return Ok(false);
        }
        let found = root_scopes(root)?;
        let entry = entry_of(root, scope_dir, &found.scopes)?;
        let mut row = match entry.indexed {
            true => Some(read_scope(root, entry)?),
            false => None,
        };
        let conn = open_writer(root)?;
        conn.execute_batch("BEGIN IMMEDIATE")?;
        let now_slugs: HashMap<String, &ScopeEntry> = found
            .scopes
            .iter()
            .map(|s| (relative(root, &s.path), s))
            .collect();
        let mut renamed = Vec::new();
        let target = relative(root, &entry.path);
        let mut deleted = false;
        for (id, slug, path) in ids(&conn)? {
            let keep = match now_slugs.get(&path) {
                // Replaced below, unless it is the same.
                _ if path == target => {
                    let same = row.as_ref() == Some(&read_row(&conn, id)?);
                    if same {
                        row = None;
                    }
                    same
                }
                // Its folder is gone, or its index.
                None => false,
                Some(now) if !now.indexed => false,
                Some(now) if now.slug != slug => {
                    let mut old = read_row(&conn, id)?;
                    old.slug = now.slug.clone();
                    renamed.push(old);
                    false
                }
                Some(_) => true,
            };
            if !keep {
                delete_row(&conn, id)?;
                deleted = true;
            }
        }
        if !deleted && row.is_none() {
            // Nothing changed: the catalog file stays as it was.
            conn.execute_batch("ROLLBACK")?;
            return Ok(true);
        }
        for row in renamed.iter().chain(row.as_ref()) {
            insert_row(&conn, row, true)?;
        }
        set_meta(&conn, "updated")?;
        conn.execute_batch("COMMIT")?;
        Ok(true)
    }

    /// A number that changes whenever another connection commits to the
    /// catalog (SQLite's `PRAGMA data_version`): a reader kept open tells by
    /// it that the catalog was updated or rebuilt since it read it.
    pub fn data_version(&self) -> anyhow::Result<i64> {
        Ok(self
            .conn
            .query_row("PRAGMA data_version", [], |r| r.get(0))?)
    }

    /// Every row, in folder name order.
    pub fn scopes(&self) -> anyhow::Result<Vec<CatalogRow>> {
        let mut statement = self
            .conn
            .prepare_cached(&format!("SELECT {ROW_COLUMNS} FROM scopes ORDER BY path"))?;
        let rows = statement
            .query_map([], row_from_sql)?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(rows)
    }

    /// Every scope the catalog lists, as [`root_scopes`] would find it
    /// (the slugs made unique, the paths under the root), in folder name
    /// order, without reading the root's folders.
    pub fn scope_entries(&self) -> anyhow::Result<Vec<ScopeEntry>> {
        let mut statement = self
            .conn
            .prepare_cached("SELECT slug, path FROM scopes ORDER BY path")?;
        let entries = statement
            .query_map([], |r| {
                Ok(ScopeEntry {
                    slug: r.get(0)?,
                    path: self.root.join(r.get::<_, String>(1)?),
                    indexed: true,
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(entries)
    }

    /// The slug of each scope the catalog lists, by folder name: the slugs
    /// it gave, which the folders keep ([`kts_store::discover_scopes_keeping`]).
    pub fn slugs_given(&self) -> anyhow::Result<BTreeMap<String, String>> {
        let mut statement = self.conn.prepare_cached("SELECT path, slug FROM scopes")?;
        let given = statement
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        Ok(given)
    }

    /// The row of the scope with this slug.
    pub fn get(&self, slug: &str) -> anyhow::Result<Option<CatalogRow>> {
        Ok(self
            .conn
            .prepare_cached(&format!("SELECT {ROW_COLUMNS} FROM scopes WHERE slug = ?1"))?
            .query_row([slug], row_from_sql)
            .optional()?)
    }

    /// The scopes whose slug the text names: every word of the slug (split at
    /// `_`) is a word of the text (lowercase letters and digits; "Bear
    /// Stearns 2006-HE1" names `bear_stearns_2006_he1`). The slugs with the
    /// most words come first (the most specific), then by slug.
    pub fn slug_mentioned(&self, text: &str) -> anyhow::Result<Vec<CatalogRow>> {
        let named = self.mentioned_ids(text)?;
        let mut rows = Vec::with_capacity(named.len());
        for (id, words) in named {
            rows.push((words, self.row(id)?));
        }
        rows.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.slug.cmp(&b.1.slug)));
        Ok(rows.into_iter().map(|(_, row)| row).collect())
    }

    /// The scopes matching `text`, best first, at most `limit`, each with
    /// its BM25 score over the row's searchable text (slug words, folder
    /// name, doc types, entities, keywords, years; higher is better).
    ///
    /// The scopes whose slug the text names ([`Catalog::slug_mentioned`])
    /// come first, the most specific first, whatever their score; the others
    /// follow by score. So the score decreases within each group, not
    /// necessarily across them: use `slug_mentioned` to tell them apart.
    ///
    /// A word held by at least a quarter of the rows (and by more than
    /// [`COMMON_ROWS`]) is left out: BM25 gives it little weight (an IDF
    /// under ln 3, against 3 to 9 for the words that tell scopes apart),
    /// and ranking every row it matches would cost the most.
    /// A text made only of such words matches their rows unranked (score 0).
    pub fn search(&self, text: &str, limit: usize) -> anyhow::Result<Vec<(CatalogRow, f64)>> {
        self.ranked(text, limit)?
            .into_iter()
            .map(|(id, score)| Ok((self.row(id)?, score)))
            .collect()
    }

    /// [`Catalog::search`]'s slugs and scores only, without reading the rows.
    pub fn search_slugs(&self, text: &str, limit: usize) -> anyhow::Result<Vec<(String, f64)>> {
        let mut slug = self
            .conn
            .prepare_cached("SELECT slug FROM scopes WHERE id = ?1")?;
        self.ranked(text, limit)?
            .into_iter()
            .map(|(id, score)| Ok((slug.query_row([id], |r| r.get(0))?, score)))
            .collect()
    }

    /// The ids and scores [`Catalog::search`] returns, in its order.
    fn ranked(&self, text: &str, limit: usize) -> anyhow::Result<Vec<(i64, f64)>> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let terms = kts_store::query_terms(text);
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let rows: i64 = self
            .conn
            .prepare_cached("SELECT count(*) FROM scopes")?
            .query_row([], |r| r.get(0))?;
        let mut kept = Vec::new();
        let mut common = Vec::new();
        for term in &terms {
            let quoted = format!("\"{term}\"");
            let held: i64 = self
                .conn
                .prepare_cached("SELECT count(*) FROM scopes_fts WHERE scopes_fts MATCH ?1")?
                .query_row([&quoted], |r| r.get(0))?;
            match held {
                0 => {}
                n if 4 * n >= rows && n > COMMON_ROWS => common.push(quoted),
                n => kept.push((n, quoted)),
            }
        }
        // The rarest words tell scopes apart the most, and ranking costs a
        // step per row matched: words are ranked rarest first, within budget.
        kept.sort();
        let mut budget = RANKED_ROWS;
        let kept: Vec<String> = kept
            .into_iter()
            .enumerate()
            .take_while(|(i, (held, _))| {
                let fits = *i == 0 || *held <= budget;
                budget -= held;
                fits
            })
            .map(|(_, (_, quoted))| quoted)
            .collect();
        let mentioned = self.mentioned_ids(text)?;
        let wanted = limit.saturating_add(mentioned.len()).min(i64::MAX as usize) as i64;
        let (query, ranked) = match (kept.is_empty(), common.is_empty()) {
            (false, _) => (kept.join(" OR "), true),
            (true, false) => (common.join(" OR "), false),
            (true, true) => (String::new(), false),
        };
        let mut scored: HashMap<i64, f64> = HashMap::new();
        let mut order_found: Vec<i64> = Vec::new();
        if !query.is_empty() {
            let sql = match ranked {
                true => {
                    "SELECT rowid, -rank FROM scopes_fts WHERE scopes_fts MATCH ?1 ORDER BY rank LIMIT ?2"
                }
                false => "SELECT rowid, 0.0 FROM scopes_fts WHERE scopes_fts MATCH ?1 LIMIT ?2",
            };
            let mut statement = self.conn.prepare_cached(sql)?;
            let mut found = statement.query(params![query, wanted])?;
            while let Some(row) = found.next()? {
                let id: i64 = row.get(0)?;
                scored.insert(id, row.get(1)?);
                order_found.push(id);
            }
        }
        let mut first: Vec<(i64, usize, f64)> = Vec::with_capacity(mentioned.len());
        for &(id, words) in &mentioned {
            let score = match scored.get(&id) {
                Some(&score) => score,
                None if ranked => self.score_of(&query, id)?,
                None => 0.0,
            };
            first.push((id, words, score));
        }
        first.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| b.2.total_cmp(&a.2)));
        let mut order: Vec<(i64, f64)> = first.iter().map(|&(id, _, s)| (id, s)).collect();
        order.extend(
            order_found
                .iter()
                .filter(|id| !mentioned.iter().any(|(m, _)| m == *id))
                .map(|id| (*id, scored[id])),
        );
        order.truncate(limit);
        Ok(order)
    }

    /// (scope id, slug word count) of the rows whose slug words all occur in
    /// `text`: only the rows anchored on one of its words can be.
    fn mentioned_ids(&self, text: &str) -> anyhow::Result<Vec<(i64, usize)>> {
        let words = words(text);
        if words.is_empty() {
            return Ok(Vec::new());
        }
        let mut statement = self.conn.prepare_cached(
            "SELECT id, slug FROM scopes WHERE anchor IN (SELECT value FROM json_each(?1))",
        )?;
        let mut rows = statement.query([serde_json::to_string(&words)?])?;
        let mut found = Vec::new();
        while let Some(row) = rows.next()? {
            let slug: String = row.get(1)?;
            let slug_words = slug_words(&slug);
            if slug_words.iter().all(|w| words.contains(w)) {
                found.push((row.get(0)?, slug_words.len()));
            }
        }
        Ok(found)
    }

    fn score_of(&self, query: &str, id: i64) -> anyhow::Result<f64> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT -rank FROM scopes_fts WHERE scopes_fts MATCH ?1 AND rowid = ?2",
            )?
            .query_row(params![query, id], |r| r.get(0))
            .optional()?
            .unwrap_or(0.0))
    }

    fn row(&self, id: i64) -> anyhow::Result<CatalogRow> {
        read_row(&self.conn, id)
    }
}

/// The scopes of a knowledge root: its sub-folders, each listed by its
/// catalog keeping the slug the catalog gave it (a folder added since whose
/// name gives the same slug gets `_2`, `_3`), the others slugged in name
/// order. A catalog that cannot be read gives no slugs.
pub fn root_scopes(root: &Path) -> anyhow::Result<Scopes> {
    let given = match catalog_path(root).is_file() {
        true => Catalog::open(root)
            .and_then(|catalog| catalog.slugs_given())
            .unwrap_or_default(),
        false => BTreeMap::new(),
    };
    discover_scopes_keeping(root, &given)
}

/// A full rebuild under way: one write transaction that emptied the
/// catalog. Dropping it without [`Rebuild::commit`] (or a crash) leaves the
/// previous catalog as it was.
pub struct Rebuild {
    conn: Connection,
}

impl Rebuild {
    /// Opens the catalog of `root` for writing (creating it when missing,
    /// replacing a file that is not an SQLite database or is in another
    /// format), waits for other writers, begins the transaction and removes
    /// every row.
    pub fn begin(root: &Path) -> anyhow::Result<Rebuild> {
        let conn = match open_writer(root) {
            Err(e)
                if error_code(&e) == kts_record::ErrorCode::Corrupt
                    || e.downcast_ref::<OtherFormat>().is_some() =>
            {
                remove_catalog(root)?;
                open_writer(root)?
            }
            other => other?,
        };
        conn.execute_batch(
            "BEGIN IMMEDIATE;
             DELETE FROM scopes;
             DELETE FROM slug_words;
             DELETE FROM scopes_fts;",
        )?;
        set_meta(&conn, "rebuilt")?;
        set_meta(&conn, "updated")?;
        Ok(Rebuild { conn })
    }

    /// Adds one row (its slug and path must be new to this rebuild).
    pub fn add(&mut self, row: &CatalogRow) -> anyhow::Result<()> {
        insert_row(&self.conn, row, false)
    }

    /// Commits: the new rows replace the previous catalog at once.
    pub fn commit(self) -> anyhow::Result<()> {
        set_anchors(&self.conn)?;
        self.conn.execute_batch("COMMIT")?;
        Ok(())
    }
}

/// A catalog written in another format: a rebuild replaces it.
#[derive(Debug)]
struct OtherFormat(u32);

impl std::fmt::Display for OtherFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "catalog format {}, this kts writes format {FORMAT_VERSION}: rebuild it with kts-catalog",
            self.0
        )
    }
}

impl std::error::Error for OtherFormat {}

/// Opens (creating when needed) the catalog for writing.
fn open_writer(root: &Path) -> anyhow::Result<Connection> {
    let path = catalog_path(root);
    let conn = Connection::open(&path).with_context(|| format!("opening {}", path.display()))?;
    let setup = || -> anyhow::Result<()> {
        conn.execute_batch(&format!(
            "PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}; PRAGMA journal_mode = WAL; \
             PRAGMA synchronous = NORMAL;"
        ))?;
        conn.execute_batch("BEGIN IMMEDIATE")?;
        let created = match format_version(&conn) {
            Ok(0) => conn
                .execute_batch(&format!(
                    "{tables}
                     INSERT INTO catalog_meta VALUES ('format_version', '{FORMAT_VERSION}');
                     INSERT INTO catalog_meta VALUES ('created', {NOW});",
                    tables = tables()
                ))
                .map_err(anyhow::Error::from),
            Ok(FORMAT_VERSION) => Ok(()),
            Ok(other) => Err(OtherFormat(other).into()),
            Err(e) => Err(e),
        };
        match created {
            Ok(()) => conn.execute_batch("COMMIT")?,
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK");
                return Err(e);
            }
        }
        Ok(())
    };
    setup().with_context(|| format!("opening {}", path.display()))?;
    Ok(conn)
}

/// The catalog and its WAL files, so that a damaged one can be built anew.
fn remove_catalog(root: &Path) -> anyhow::Result<()> {
    let path = catalog_path(root);
    for suffix in ["", "-wal", "-shm"] {
        let file = PathBuf::from(format!("{}{suffix}", path.display()));
        match std::fs::remove_file(&file) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).with_context(|| format!("removing {}", file.display()));
            }
            _ => {}
        }
    }
    Ok(())
}

/// 0 when the catalog has no tables yet.
fn format_version(conn: &Connection) -> anyhow::Result<u32> {
    let created: bool = conn.query_row(
        "SELECT count(*) > 0 FROM sqlite_master WHERE name = 'catalog_meta'",
        [],
        |r| r.get(0),
    )?;
    if !created {
        return Ok(0);
    }
    let version: Option<String> = conn
        .query_row(
            "SELECT value FROM catalog_meta WHERE key = 'format_version'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    Ok(version.and_then(|v| v.parse().ok()).unwrap_or(0))
}

fn set_meta(conn: &Connection, key: &str) -> anyhow::Result<()> {
    conn.execute(
        &format!(
            "INSERT INTO catalog_meta VALUES (?1, {NOW})
             ON CONFLICT(key) DO UPDATE SET value = excluded.value"
        ),
        [key],
    )?;
    Ok(())
}

/// Inserts a row; `anchor` says whether to choose its anchor now (from the
/// slugs already there) or leave it to [`set_anchors`].
fn insert_row(conn: &Connection, row: &CatalogRow, anchor: bool) -> anyhow::Result<()> {
    let slug_words = slug_words(&row.slug);
    conn.prepare_cached(&format!(
        "INSERT INTO scopes ({ROW_COLUMNS}, cataloged_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, {NOW})"
    ))?
    .execute(params![
        row.slug,
        row.path,
        row.documents as i64,
        row.chunks as i64,
        json(&row.doc_types),
        json(&row.years),
        json(&row.entities),
        json(&row.keywords),
        json(&row.titles),
        row.model_id,
        row.last_indexed,
    ])
    .with_context(|| format!("cataloging {}", row.slug))?;
    let id = conn.last_insert_rowid();
    let mut insert_word =
        conn.prepare_cached("INSERT OR IGNORE INTO slug_words (word, scope_id) VALUES (?1, ?2)")?;
    for word in &slug_words {
        insert_word.execute(params![word, id])?;
    }
    if anchor {
        let mut rarest: Option<(i64, &String)> = None;
        let mut count = conn.prepare_cached("SELECT count(*) FROM slug_words WHERE word = ?1")?;
        for word in &slug_words {
            let n: i64 = count.query_row([word], |r| r.get(0))?;
            if rarest.is_none_or(|(least, _)| n < least) {
                rarest = Some((n, word));
            }
        }
        conn.prepare_cached("UPDATE scopes SET anchor = ?1 WHERE id = ?2")?
            .execute(params![rarest.map(|(_, w)| w), id])?;
    }
    let years: Vec<String> = row.years.iter().map(i32::to_string).collect();
    conn.prepare_cached(
        "INSERT INTO scopes_fts (rowid, slug, folder, doc_types, entities, keywords, years, titles)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        id,
        indexed_text(&row.slug.replace('_', " ")),
        indexed_text(&row.path),
        indexed_text(&row.doc_types.join(" ")),
        indexed_text(&row.entities.join(". ")),
        indexed_text(&row.keywords.join(" ")),
        years.join(" "),
        indexed_text(&row.titles.join(". ")),
    ])?;
    Ok(())
}

/// Anchors every row on the word of its slug the fewest slugs share.
fn set_anchors(conn: &Connection) -> anyhow::Result<()> {
    let mut shared: HashMap<String, i64> = HashMap::new();
    {
        let mut statement = conn.prepare("SELECT word, count(*) FROM slug_words GROUP BY word")?;
        let mut rows = statement.query([])?;
        while let Some(row) = rows.next()? {
            shared.insert(row.get(0)?, row.get(1)?);
        }
    }
    let mut update = conn.prepare("UPDATE scopes SET anchor = ?1 WHERE id = ?2")?;
    for (id, slug, _) in ids(conn)? {
        let words = slug_words(&slug);
        let anchor = words
            .iter()
            .min_by_key(|w| (shared.get(*w).copied().unwrap_or(0), w.len()));
        update.execute(params![anchor, id])?;
    }
    Ok(())
}

fn delete_row(conn: &Connection, id: i64) -> anyhow::Result<()> {
    for table in [
        "DELETE FROM scopes WHERE id = ?1",
        "DELETE FROM slug_words WHERE scope_id = ?1",
        "DELETE FROM scopes_fts WHERE rowid = ?1",
    ] {
        conn.prepare_cached(table)?.execute([id])?;
    }
    Ok(())
}

fn ids(conn: &Connection) -> anyhow::Result<Vec<(i64, String, String)>> {
    let mut statement = conn.prepare("SELECT id, slug, path FROM scopes")?;
    let rows = statement
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

fn read_row(conn: &Connection, id: i64) -> anyhow::Result<CatalogRow> {
    Ok(conn
        .prepare_cached(&format!("SELECT {ROW_COLUMNS} FROM scopes WHERE id = ?1"))?
        .query_row([id], row_from_sql)?)
}

fn row_from_sql(r: &rusqlite::Row) -> rusqlite::Result<CatalogRow> {
    fn list<T: serde::de::DeserializeOwned>(text: String) -> Vec<T> {
        serde_json::from_str(&text).unwrap_or_default()
    }
    Ok(CatalogRow {
        slug: r.get(0)?,
        path: r.get(1)?,
        documents: r.get::<_, i64>(2)? as usize,
        chunks: r.get::<_, i64>(3)? as usize,
        doc_types: list(r.get(4)?),
        years: list(r.get(5)?),
        entities: list(r.get(6)?),
        keywords: list(r.get(7)?),
        titles: list(r.get(8)?),
        model_id: r.get(9)?,
        last_indexed: r.get(10)?,
    })
}

fn json<T: serde::Serialize>(list: &[T]) -> String {
    serde_json::to_string(list).expect("a list of strings or numbers serialises")
}

/// The distinct words of a slug (split at `_`).
fn slug_words(slug: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for word in slug.split('_').filter(|w| !w.is_empty()) {
        if !words.iter().any(|w| w == word) {
            words.push(word.to_string());
        }
    }
    words
}

/// The distinct words of a text, as slugs are made of: lowercase runs of
/// letters and digits.
fn words(text: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for word in text
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        if !words.iter().any(|w| w == word) {
            words.push(word.to_string());
        }
    }
    words
}

/// The folder of a scope, relative to the root (its name).
fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .ok()
        .filter(|p| !p.as_os_str().is_empty())
        .or_else(|| path.file_name().map(Path::new))
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// The entry of `scope_dir` among the root's scopes: a sub-folder of `root`.
fn entry_of<'a>(
    root: &Path,
    scope_dir: &Path,
    scopes: &'a [ScopeEntry],
) -> anyhow::Result<&'a ScopeEntry> {
    let not_under = || {
        anyhow::anyhow!(
            "{} is not a scope folder of the knowledge root {}",
            scope_dir.display(),
            root.display()
        )
    };
    let absolute = std::path::absolute(scope_dir)?;
    let (Some(parent), Some(name)) = (absolute.parent(), absolute.file_name()) else {
        return Err(not_under());
    };
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if !same(parent, root) {
        return Err(not_under());
    }
    scopes
        .iter()
        .find(|s| s.path.file_name() == Some(name))
        .ok_or_else(not_under)
}

/// The error code a scope failure is reported with.
pub(crate) fn error_code(e: &anyhow::Error) -> kts_record::ErrorCode {
    use rusqlite::ffi::ErrorCode as Sqlite;
    let damaged = e.chain().any(|cause| {
        matches!(
            cause.downcast_ref::<rusqlite::Error>(),
            Some(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error {
                    code: Sqlite::NotADatabase | Sqlite::DatabaseCorrupt,
                    ..
                },
                _
            ))
        )
    });
    if damaged {
        kts_record::ErrorCode::Corrupt
    } else {
        kts_record::ErrorCode::Io
    }
}
