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

pub(crate) fn acquire(path: &Path, wait: LockWait) -> anyhow::Result<File> {
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
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
