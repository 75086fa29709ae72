//! The scope store: `DIR/.kts/kts.db`, one SQLite database holding a scope's
//! documents, chunks, an FTS5 index over the chunks and a sqlite-vec table of
//! their embeddings.
//!
//! Readers open it read-only and never block (WAL). One writer at a time holds
//! `DIR/.kts/write.lock` (flock: a killed writer's lock vanishes with it) and
//! writes in transactions, so a crash leaves the last committed state.
//!
//! ```text
//! meta       key/value: format_version, word_analysis, model_id, dims, model_sha256,
//!            created, updated
//! documents  doc_id PK, path UNIQUE, title, doc_type, format, source_sha256,
//!            metadata (JSON), digest, indexed_at
//! chunks     id INTEGER PK (the rowid FTS and vectors are keyed by), chunk_id UNIQUE,
//!            doc_id, idx, text, heading_path (JSON), start, end, page, slide
//! chunks_fts FTS5, contentless with deletes: text, title (with its path's words), headings, as
//!            words.rs gives them; tokenize='porter unicode61 remove_diacritics 2'
//! chunks_vec vec0(embedding float[dims], doc_type text), created with the first embedding
//! ```
//!
//! Beside it, `DIR/.kts/vectors.bin` holds the same vectors laid out for a
//! fast scan (see vector_file.rs), and `vectors.delta` the changes since it
//! was written (vector_delta.rs); `meta.vectors_version` says whether they
//! are current. `DIR/.kts/lexical/` is a tantivy index of the chunks' words for
//! BM25 at scale (see lexical/mod.rs), current while `lexical_pending` is
//! empty and its generation is `meta.lexical_generation`.

mod documents;
mod fts;
mod lexical;
mod lock;
mod permissions;
mod read_only;
mod root;
mod schema;
mod search;
mod slug;
mod vector_delta;
mod vector_file;
mod words;
mod write;

use std::cell::{OnceCell, RefCell};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Once;

use anyhow::Context;
use rusqlite::{Connection, OptionalExtension};

pub use documents::StoredDocument;
pub use fts::{is_stopword, match_all_query, match_query, query_terms};
pub use lexical::{LexicalState, Synced, index_dir as lexical_index_dir};
pub use lock::{LockWait, Locked};
pub use permissions::create_database_file;
pub use read_only::open_read_only;
pub use root::{
    ScopeEntry, Scopes, discover_scopes, discover_scopes_keeping, is_scope, refuse_index_folder,
    refuse_knowledge_root,
};
pub use search::{Filters, Hit, Scored};
pub use slug::{names_slug, scope_slug};
pub use words::{
    FTS5_TOKENIZER, WORD_ANALYSIS, indexed_text, indexed_title, is_cjk, normalized, words,
};
pub use write::{Applied, ChunkRow, DocumentRow, ModelMismatch, weights_differ};

use lexical::LexicalIndex;
use vector_file::VectorFile;

/// The store format this code reads and writes (`meta.format_version`).
pub const FORMAT_VERSION: u32 = 1;

/// `DIR/.kts`.
pub fn kts_dir(scope: &Path) -> PathBuf {
    scope.join(".kts")
}

/// Makes `DIR/.kts` (`dir`), but never the scope folder itself: a scope
/// removed while it was being indexed is an error naming it, not an empty
/// index in a folder brought back.
fn create_kts_dir(scope: &Path, dir: &Path) -> anyhow::Result<()> {
    match std::fs::create_dir(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            anyhow::bail!("the scope folder {} is not there", scope.display())
        }
        Err(e) => Err(lock::cannot_write(dir, e)),
    }
}

/// How long a connection waits while another briefly holds the database
/// (a writer's commit, WAL recovery after a crash).
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// `DIR/.kts/kts.db`.
pub fn db_path(scope: &Path) -> PathBuf {
    kts_dir(scope).join("kts.db")
}

/// `DIR/.kts/vectors.bin`.
pub fn vector_file_path(scope: &Path) -> PathBuf {
    kts_dir(scope).join("vectors.bin")
}

/// Whether `scope` has an index (`DIR/.kts/kts.db`): an error, naming the
/// path and the reason, when one may be there but cannot be reached (a
/// `.kts` this user may not enter, a `.kts` link to a disk not mounted),
/// rather than "no index", which would have it built again.
pub fn has_index(scope: &Path) -> anyhow::Result<bool> {
    let db = db_path(scope);
    let kts = kts_dir(scope);
    match std::fs::metadata(&db) {
        Ok(metadata) => Ok(metadata.is_file()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => match std::fs::read_link(&kts) {
            Ok(target) if !kts.exists() => anyhow::bail!(
                "cannot reach the index {}: {} is a link to {}, which is not there (a disk \
                 not mounted?)",
                db.display(),
                kts.display(),
                target.display()
            ),
            _ => Ok(false),
        },
        Err(e) => match permissions::why_not_enterable(&kts) {
            Some(why) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                anyhow::bail!("cannot reach the index {} ({e}): {why}", db.display())
            }
            _ => anyhow::bail!("cannot reach the index {}: {e}", db.display()),
        },
    }
}

/// The index metadata of a store.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Meta {
    pub format_version: u32,
    /// The embedding model the vectors were made with; `None` for a lexical-only store.
    pub model_id: Option<String>,
    pub dims: Option<usize>,
    pub model_sha256: Option<String>,
    /// Counts the commits that changed a vector: `vectors.bin` is current when
    /// it carries this number.
    pub vectors_version: u64,
    pub created: String,
    pub updated: String,
}

/// A stored document's source, as [`Store::indexed_sources`] lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexedSource {
    pub path: String,
    pub source_sha256: Option<String>,
    pub format: Option<String>,
}

/// An open scope store: a reader, or the scope's one writer.
pub struct Store {
    conn: Connection,
    scope: PathBuf,
    /// Held for as long as the writer lives; `None` for readers.
    _lock: Option<std::fs::File>,
    /// Document folders to remove once the current transaction commits.
    removed_folders: Vec<String>,
    /// Whether the current transaction changed a vector.
    vectors_changed: bool,
    /// The connection's count of changed rows when the current transaction began.
    changes_at_begin: u64,
    /// `vectors.bin`, opened at the first vector search (`None` when missing, stale or damaged).
    vector_file: OnceCell<Option<Box<VectorFile>>>,
    /// Why `vectors.bin` was found damaged, at its opening or by a search.
    vector_file_damage: RefCell<Option<String>>,
    /// The lexical index as of a `data_version`: opened at the first BM25
    /// search, and again after another connection commits.
    lexical: RefCell<Option<(i64, Option<LexicalIndex>, LexicalState)>>,
}

/// See [`Store::change_stamp`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChangeStamp {
    data_version: i64,
    vectors_modified: Option<std::time::SystemTime>,
    delta_modified: Option<std::time::SystemTime>,
}

impl Store {
    /// Opens the store of `scope` for reading. Never waits for a writer.
    pub fn open_read(scope: &Path) -> anyhow::Result<Store> {
        Self::try_open_read(scope).map_err(|e| with_remedy(scope, e))
    }

    fn try_open_read(scope: &Path) -> anyhow::Result<Store> {
        let path = db_path(scope);
        if !has_index(scope)? {
            // A knowledge root has no index of its own: its scopes do.
            refuse_knowledge_root(scope)?;
            anyhow::bail!(
                "no index at {}: build it with kts-crawl DIR | kts-convert | kts-chunk | kts-embed | kts-index DIR",
                path.display()
            );
        }
        register_sqlite_vec();
        let conn = open_read_only(&path)?;
        conn.execute_batch("PRAGMA mmap_size = 4294967296; PRAGMA query_only = 1;")?;
        let store = Store {
            conn,
            scope: scope.to_path_buf(),
            _lock: None,
            removed_folders: Vec::new(),
            vectors_changed: false,
            changes_at_begin: 0,
            vector_file: OnceCell::new(),
            vector_file_damage: RefCell::new(None),
            lexical: RefCell::new(None),
        };
        store.check_format()?;
        Ok(store)
    }

    /// Opens (creating if needed) the store of `scope` as its one writer,
    /// taking `DIR/.kts/write.lock`. Fails with [`Locked`] under
    /// [`LockWait::NoWait`] when another writer holds it.
    pub fn open_writer(scope: &Path, wait: LockWait) -> anyhow::Result<Store> {
        Self::try_open_writer(scope, wait).map_err(|e| with_remedy(scope, e))
    }

    fn try_open_writer(scope: &Path, wait: LockWait) -> anyhow::Result<Store> {
        let dir = kts_dir(scope);
        refuse_index_folder(scope)?;
        has_index(scope)?;
        create_kts_dir(scope, &dir)?;
        let lock = lock::acquire(&dir.join("write.lock"), wait)?;
        register_sqlite_vec();
        let path = db_path(scope);
        create_database_file(&path).map_err(|e| lock::cannot_write(&path, e))?;
        let conn =
            Connection::open(&path).with_context(|| format!("opening {}", path.display()))?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;")
            .map_err(|e| lock::when_full(&dir, e.into()))?;
        schema::create(&conn)?;
        let store = Store {
            conn,
            scope: scope.to_path_buf(),
            _lock: Some(lock),
            removed_folders: Vec::new(),
            vectors_changed: false,
            changes_at_begin: 0,
            vector_file: OnceCell::new(),
            vector_file_damage: RefCell::new(None),
            lexical: RefCell::new(None),
        };
        store.check_format()?;
        schema::upgrade(&store.conn)?;
        Ok(store)
    }

    /// The scope folder.
    pub fn scope(&self) -> &Path {
        &self.scope
    }

    /// Starts a read transaction: until [`Store::end_read`], every read sees
    /// one state of the store, whatever writers commit meanwhile (they never
    /// wait for it). A transaction a failed search left open is ended first.
    pub fn begin_read(&self) -> anyhow::Result<()> {
        if !self.conn.is_autocommit() {
            self.conn.execute_batch("ROLLBACK")?;
        }
        self.conn.execute_batch("BEGIN")?;
        Ok(())
    }

    /// Ends the read transaction [`Store::begin_read`] started.
    pub fn end_read(&self) -> anyhow::Result<()> {
        if !self.conn.is_autocommit() {
            self.conn.execute_batch("COMMIT")?;
        }
        Ok(())
    }

    /// The SQLite connection, for diagnostics and tests.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    pub fn meta(&self) -> anyhow::Result<Meta> {
        schema::read_meta(&self.conn)
    }

    /// Number of documents and chunks in the store.
    pub fn counts(&self) -> anyhow::Result<(usize, usize)> {
        let chunks: i64 = self
            .conn
            .query_row("SELECT count(*) FROM chunks", [], |r| r.get(0))?;
        Ok((self.document_count()?, chunks as usize))
    }

    /// Number of documents in the store (without counting the chunks).
    pub fn document_count(&self) -> anyhow::Result<usize> {
        let docs: i64 = self
            .conn
            .query_row("SELECT count(*) FROM documents", [], |r| r.get(0))?;
        Ok(docs as usize)
    }

    /// What changes whenever the index does, for a reader kept open: SQLite's
    /// `data_version` (another connection has committed) and the modification
    /// time of `vectors.bin` and of its delta (written after the commit).
    pub fn change_stamp(&self) -> anyhow::Result<ChangeStamp> {
        let data_version = self
            .conn
            .query_row("PRAGMA data_version", [], |r| r.get(0))?;
        let modified = |path: &Path| std::fs::metadata(path).and_then(|m| m.modified()).ok();
        let vectors = vector_file_path(&self.scope);
        Ok(ChangeStamp {
            data_version,
            vectors_modified: modified(&vectors),
            delta_modified: modified(&vector_file::delta_path(&vectors)),
        })
    }

    /// Whether the store holds any embeddings.
    pub fn has_vectors(&self) -> anyhow::Result<bool> {
        schema::has_vector_table(&self.conn)
    }

    /// The document types the store holds, sorted.
    pub fn doc_types(&self) -> anyhow::Result<Vec<String>> {
        let mut statement = self
            .conn
            .prepare("SELECT DISTINCT doc_type FROM documents ORDER BY doc_type")?;
        let types = statement
            .query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        Ok(types)
    }

    /// Every stored file's path with its `source_sha256` and format: what
    /// the index holds, for telling which files need work. Documents found
    /// inside a file (with a `metadata.parent`) have no file of their own and
    /// are left out.
    pub fn indexed_sources(&self) -> anyhow::Result<Vec<IndexedSource>> {
        let mut statement = self.conn.prepare(
            "SELECT path, source_sha256, format FROM documents
             WHERE json_extract(metadata, '$.parent') IS NULL",
        )?;
        let rows = statement.query_map([], |r| {
            Ok(IndexedSource {
                path: r.get(0)?,
                source_sha256: r.get(1)?,
                format: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The doc_ids of every stored document.
    pub fn document_ids(&self) -> anyhow::Result<HashSet<String>> {
        let mut statement = self.conn.prepare("SELECT doc_id FROM documents")?;
        let ids = statement.query_map([], |r| r.get(0))?;
        Ok(ids.collect::<Result<_, _>>()?)
    }

    /// The stored `source_sha256` of a document, if the document is stored.
    pub fn source_sha256(&self, doc_id: &str) -> anyhow::Result<Option<Option<String>>> {
        Ok(self
            .conn
            .query_row(
                "SELECT source_sha256 FROM documents WHERE doc_id = ?1",
                [doc_id],
                |r| r.get(0),
            )
            .optional()?)
    }

    fn check_format(&self) -> anyhow::Result<()> {
        let meta = self.meta()?;
        // The meta table and its rows are made in the store's first transaction.
        if meta.format_version == 0 && meta.created.is_empty() {
            return Err(NoIndexYet {
                scope: self.scope.clone(),
            }
            .into());
        }
        let db = db_path(&self.scope);
        let found = match meta.format_version {
            FORMAT_VERSION => return Ok(()),
            0 => format!(
                "{} has no store format (kts did not write it so, or it was edited):",
                db.display()
            ),
            newer if newer > FORMAT_VERSION => format!(
                "{} has store format {newer}, written by a newer kts (this one reads format \
                 {FORMAT_VERSION}): read it with that kts, or",
                db.display()
            ),
            older => format!(
                "{} has store format {older}, this kts reads format {FORMAT_VERSION}:",
                db.display()
            ),
        };
        let dir = self.scope.display();
        anyhow::bail!(
            "{found} move it aside (mv {} {}.old) and index the scope again: kts-crawl {dir} | \
             kts-convert | kts-chunk | kts-embed | kts-index {dir} (an index is made from the \
             documents alone: kts-index --reindex does not replace a store of another format)",
            db.display(),
            db.display()
        )
    }
}

/// An error about the store of `scope`, said with the file and what to do
/// when it is a damaged database or a full disk; other errors as they are.
pub fn with_remedy(scope: &Path, error: anyhow::Error) -> anyhow::Error {
    use rusqlite::ErrorCode::{DatabaseCorrupt, DiskFull, NotADatabase, ReadOnly};
    let sqlite = sqlite_code(&error);
    let io_full = error
        .chain()
        .filter_map(|e| e.downcast_ref::<std::io::Error>())
        .any(|e| e.kind() == std::io::ErrorKind::StorageFull);
    if error.downcast_ref::<Remedy>().is_some() {
        return error;
    }
    // The cause stays in the chain, for callers that tell errors apart by it.
    match sqlite {
        Some(DatabaseCorrupt | NotADatabase) => error.context(Remedy(format!(
            "{} cannot be read (move it aside to rebuild the scope)",
            db_path(scope).display()
        ))),
        Some(DiskFull) => disk_full(scope, error),
        Some(ReadOnly) => not_writable(scope, error),
        _ if io_full => disk_full(scope, error),
        _ => error,
    }
}

/// The file and what to do, as [`with_remedy`] says them (once).
#[derive(Debug)]
struct Remedy(String);

impl std::fmt::Display for Remedy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Whether a write failed because of the database (damaged, full, not
/// writable) rather than because of what was written: such a failure is the
/// same for every document.
pub fn is_database_failure(error: &anyhow::Error) -> bool {
    use rusqlite::ErrorCode::{
        CannotOpen, DatabaseBusy, DatabaseCorrupt, DatabaseLocked, DiskFull, NotADatabase,
        OutOfMemory, ReadOnly, SystemIoFailure,
    };
    matches!(
        sqlite_code(error),
        Some(
            DatabaseCorrupt
                | NotADatabase
                | DiskFull
                | SystemIoFailure
                | ReadOnly
                | CannotOpen
                | DatabaseBusy
                | DatabaseLocked
                | OutOfMemory
        )
    )
}

fn sqlite_code(error: &anyhow::Error) -> Option<rusqlite::ErrorCode> {
    error
        .chain()
        .find_map(|e| e.downcast_ref::<rusqlite::Error>())
        .and_then(rusqlite::Error::sqlite_error_code)
}

fn disk_full(scope: &Path, error: anyhow::Error) -> anyhow::Error {
    error.context(Remedy(format!(
        "the disk holding {} is full (what was committed before is kept; free some space and \
         run again)",
        kts_dir(scope).display()
    )))
}

/// SQLite's "attempt to write a readonly database", said with the file this
/// user may not write and why.
fn not_writable(scope: &Path, error: anyhow::Error) -> anyhow::Error {
    let db = db_path(scope);
    let files = ["", "-wal", "-shm"].map(|suffix| {
        let mut file = db.clone().into_os_string();
        file.push(suffix);
        PathBuf::from(file)
    });
    let why = |file: &PathBuf| {
        let why = permissions::why_not_writable(file)?;
        Some(format!("cannot write {}: {why}", file.display()))
    };
    match files.iter().find_map(why) {
        Some(why) => error.context(Remedy(why)),
        None => error.context(Remedy(format!("{} cannot be written", db.display()))),
    }
}

/// A store file whose first transaction has not committed: the first
/// kts-index run is under way, or was killed before its first commit.
#[derive(Debug)]
pub struct NoIndexYet {
    pub scope: PathBuf,
}

impl std::fmt::Display for NoIndexYet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "no index yet at {} (its first run did not finish): run kts-index {}",
            db_path(&self.scope).display(),
            self.scope.display()
        )
    }
}

impl std::error::Error for NoIndexYet {}

/// Makes sqlite-vec's functions and `vec0` available on every connection
/// this process opens.
fn register_sqlite_vec() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        type EntryPoint = unsafe extern "C" fn(
            *mut rusqlite::ffi::sqlite3,
            *mut *mut std::os::raw::c_char,
            *const rusqlite::ffi::sqlite3_api_routines,
        ) -> std::os::raw::c_int;
        #[allow(unsafe_code)]
        // SAFETY: `sqlite3_vec_init` is sqlite-vec's extension entry point, which
        // has exactly the `EntryPoint` signature SQLite calls auto extensions with
        // (the crate declares it without arguments only for linking). It is
        // statically linked, so the pointer stays valid for the whole process,
        // and `sqlite3_auto_extension` is thread-safe; `Once` registers it once.
        unsafe {
            let entry: EntryPoint = std::mem::transmute(sqlite_vec::sqlite3_vec_init as *const ());
            rusqlite::ffi::sqlite3_auto_extension(Some(entry));
        }
    });
}
