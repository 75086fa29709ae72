//! One writer per scope: an exclusive flock on `DIR/.kts/write.lock`.
//! The kernel drops the lock when its holder exits, killed or not.

use std::fs::{File, OpenOptions};
use std::path::Path;

use anyhow::Context;
use fs4::fs_std::FileExt;

/// What to do when another writer holds the lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockWait {
    /// Block until the other writer is done.
    Wait,
    /// Fail at once with [`Locked`].
    NoWait,
}

/// Another process is writing this scope.
#[derive(Debug)]
pub struct Locked {
    pub lock_file: String,
}

impl std::fmt::Display for Locked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "another writer is updating this scope (it holds {}); try again when it is done",
            self.lock_file
        )
    }
}

impl std::error::Error for Locked {}

/// An error writing in a scope's `.kts` folder; read-only media and missing
/// permissions get a message that says what to do.
pub(crate) fn cannot_write(path: &Path, error: std::io::Error) -> anyhow::Error {
    use std::io::ErrorKind::{PermissionDenied, ReadOnlyFilesystem};
    if error.kind() == PermissionDenied
        && let Some(why) = crate::permissions::why_not_writable(path)
    {
        return anyhow::anyhow!("cannot write {}: {why}", path.display());
    }
    match error.kind() {
        ReadOnlyFilesystem | PermissionDenied => anyhow::anyhow!(
            "cannot write {} ({error}): the index lives in the scope's .kts folder, so this \
             scope can be queried here but not indexed; index a writable copy of it",
            path.display()
        ),
        _ => anyhow::Error::new(error).context(format!("opening {}", path.display())),
    }
}

/// An error writing in `dir`, said to be a full disk when it is one (SQLite
/// reports a disk that cannot hold its `-shm` file as a mere I/O error).
pub(crate) fn when_full(dir: &Path, error: anyhow::Error) -> anyhow::Error {
    match fs4::available_space(dir) {
        Ok(free) if free < FULL_BELOW => error.context(format!(
            "the disk holding {} is full ({free} bytes free): nothing was changed; free some \
             space and run again",
            dir.display()
        )),
        _ => error,
    }
}

/// Less free space than this is a full disk for [`when_full`].
const FULL_BELOW: u64 = 1 << 20;

pub(crate) fn acquire(path: &Path, wait: LockWait) -> anyhow::Result<File> {
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| cannot_write(path, e))?;
    match wait {
        LockWait::Wait => {
            FileExt::lock_exclusive(&file).with_context(|| format!("locking {}", path.display()))?
        }
        LockWait::NoWait => {
            let taken = FileExt::try_lock_exclusive(&file)
                .with_context(|| format!("locking {}", path.display()))?;
            if !taken {
                return Err(Locked {
                    lock_file: path.display().to_string(),
                }
                .into());
            }
        }
    }
    Ok(file)
}
