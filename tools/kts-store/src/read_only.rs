//! Opening an SQLite database for reading, also where it cannot be written.
//!
//! kts keeps its databases in WAL mode, and SQLite reads a WAL database only
//! if it can open (creating them if need be) the `-wal` and `-shm` files
//! beside it for writing. On read-only media (a mounted snapshot, a
//! read-only share) or a full disk that fails. There, and only there, the
//! database is opened as immutable: sound because no writer can run there
//! either (a writer needs those files too), provided the WAL holds nothing
//! (kts's writers fold it back into the database when they finish). The
//! lexical index, for its part, takes a lock file to read; there it reads
//! without one.
//!
//! A writer killed while SQLite was making the file leaves a rollback
//! journal that a read-only connection may not undo; where the file can be
//! written, the reader lets SQLite undo it, so a kill never leaves a store
//! that readers refuse.

use std::io;
use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use rusqlite::{Connection, OpenFlags};
use tantivy::directory::error::{DeleteError, LockError, OpenReadError, OpenWriteError};
use tantivy::directory::{
    Directory, DirectoryLock, FileHandle, Lock, MmapDirectory, WatchCallback, WatchHandle, WritePtr,
};

use crate::BUSY_TIMEOUT;

/// Opens `path` read-only, as immutable when SQLite cannot set up its WAL
/// files because the file cannot be written or the disk is full.
pub fn open_read_only(path: &Path) -> anyhow::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let opening = || format!("opening {}", path.display());
    let conn = Connection::open_with_flags(path, flags).with_context(opening)?;
    conn.busy_timeout(BUSY_TIMEOUT).with_context(opening)?;
    // SQLite opens the WAL at the first read, not at the open.
    let error = match conn.query_row("PRAGMA schema_version", [], |_| Ok(())) {
        Ok(()) => return Ok(conn),
        Err(error) => error,
    };
    if hot_journal(&error) && can_write(path) {
        drop(conn);
        roll_back_hot_journal(path).with_context(opening)?;
        return open_read_only(path);
    }
    if !(disk_full(&error) || cannot_open(&error) && !can_write(path)) {
        return Err(error).with_context(opening);
    }
    drop(conn);
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    if std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0) {
        anyhow::bail!(
            "{} cannot be written (read-only media or a full disk) and its write-ahead log \
             still holds changes: run kts-index once where the scope can be written",
            path.display()
        );
    }
    let uri = format!("file:{}?immutable=1", uri_path(path));
    Connection::open_with_flags(uri, flags | OpenFlags::SQLITE_OPEN_URI).with_context(opening)
}

/// SQLite could not make its shared-memory file (`-shm`): the disk is full.
fn disk_full(error: &rusqlite::Error) -> bool {
    use rusqlite::ffi;
    matches!(
        error,
        rusqlite::Error::SqliteFailure(e, _)
            if [ffi::SQLITE_IOERR_SHMOPEN, ffi::SQLITE_IOERR_SHMSIZE, ffi::SQLITE_FULL]
                .contains(&e.extended_code)
    )
}

/// A writer was killed in a transaction of rollback-journal mode, which kts
/// uses only while SQLite makes a new file (before `journal_mode = WAL`
/// takes effect): the journal must be rolled back, and a read-only
/// connection may not.
fn hot_journal(error: &rusqlite::Error) -> bool {
    matches!(
        error,
        rusqlite::Error::SqliteFailure(e, _) if e.extended_code == rusqlite::ffi::SQLITE_READONLY_ROLLBACK
    )
}

/// Lets SQLite roll the journal back, as any connection that can write does
/// at its first read. It takes SQLite's locks: a live writer's journal is
/// not hot, and is left alone.
fn roll_back_hot_journal(path: &Path) -> rusqlite::Result<()> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.query_row("PRAGMA schema_version", [], |_| Ok(()))
}

fn cannot_open(error: &rusqlite::Error) -> bool {
    matches!(
        error.sqlite_error_code(),
        Some(rusqlite::ErrorCode::CannotOpen | rusqlite::ErrorCode::ReadOnly)
    )
}

/// Whether this process may write the file (opening it for writing changes
/// nothing in it).
pub(crate) fn can_write(path: &Path) -> bool {
    std::fs::OpenOptions::new().write(true).open(path).is_ok()
}

/// A lexical index's folder where nothing can be written: read as usual,
/// without the lock that keeps a writer's clean-up from deleting files being
/// opened (no writer can run there).
#[derive(Clone, Debug)]
pub(crate) struct ReadOnlyDirectory(pub MmapDirectory);

fn read_only_error() -> io::Error {
    io::Error::new(
        io::ErrorKind::ReadOnlyFilesystem,
        "the index is read-only here",
    )
}

impl Directory for ReadOnlyDirectory {
    fn get_file_handle(&self, path: &Path) -> Result<Arc<dyn FileHandle>, OpenReadError> {
        self.0.get_file_handle(path)
    }

    fn delete(&self, path: &Path) -> Result<(), DeleteError> {
        Err(DeleteError::IoError {
            io_error: Arc::new(read_only_error()),
            filepath: path.to_path_buf(),
        })
    }

    fn exists(&self, path: &Path) -> Result<bool, OpenReadError> {
        self.0.exists(path)
    }

    fn open_write(&self, path: &Path) -> Result<WritePtr, OpenWriteError> {
        Err(OpenWriteError::wrap_io_error(
            read_only_error(),
            path.to_path_buf(),
        ))
    }

    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        self.0.atomic_read(path)
    }

    fn atomic_write(&self, _path: &Path, _data: &[u8]) -> io::Result<()> {
        Err(read_only_error())
    }

    fn sync_directory(&self) -> io::Result<()> {
        Ok(())
    }

    fn acquire_lock(&self, _lock: &Lock) -> Result<DirectoryLock, LockError> {
        Ok(DirectoryLock::from(Box::new(())))
    }

    fn watch(&self, watch_callback: WatchCallback) -> tantivy::Result<WatchHandle> {
        self.0.watch(watch_callback)
    }
}

/// The path as a URI's path: bytes other than unreserved ones and `/`
/// percent-encoded, so that `?`, `#` and `%` in folder names stay names.
fn uri_path(path: &Path) -> String {
    let mut out = String::new();
    for &byte in path.as_os_str().as_encoded_bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_paths_keep_names_with_uri_characters() {
        assert_eq!(
            uri_path(Path::new("/data/a b/50%?#x/kts.db")),
            "/data/a%20b/50%25%3F%23x/kts.db"
        );
    }

    #[test]
    fn a_writable_database_is_opened_as_usual() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "PRAGMA journal_mode = WAL; CREATE TABLE t(x); INSERT INTO t VALUES (1);",
        )
        .unwrap();
        let reader = open_read_only(&path).unwrap();
        let x: i64 = reader
            .query_row("SELECT x FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(x, 1);
    }

    #[test]
    fn a_hot_journal_left_by_a_killed_writer_is_rolled_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let writer = Connection::open(&path).unwrap();
        // A transaction bigger than the page cache: SQLite writes into the file
        // before it commits, having saved the pages it overwrites in the journal.
        writer
            .execute_batch(
                "PRAGMA journal_mode = DELETE; PRAGMA cache_size = 2;
                 CREATE TABLE t(x); INSERT INTO t VALUES (1);
                 BEGIN;
                 INSERT INTO t
                 WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
                 SELECT zeroblob(1000) FROM n;",
            )
            .unwrap();
        // What a kill leaves: the file mid-transaction and its journal, with no
        // process holding a lock on them.
        let killed = tempfile::tempdir().unwrap();
        let copy = killed.path().join("t.db");
        std::fs::copy(&path, &copy).unwrap();
        std::fs::copy(
            dir.path().join("t.db-journal"),
            killed.path().join("t.db-journal"),
        )
        .unwrap();
        let reader = open_read_only(&copy).unwrap();
        let rows: i64 = reader
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 1);
        assert!(!killed.path().join("t.db-journal").exists());
    }
}
