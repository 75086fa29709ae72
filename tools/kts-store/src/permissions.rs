//! Who may read and write the files of a `.kts` folder: as the umask allows,
//! like every other file its users make. A team folder (setgid, umask 002)
//! is indexed by each member in turn, and git makes such repositories the
//! same way.
//!
//! Two kinds of files would escape the umask: SQLite makes a database 0644
//! whatever the umask (and gives its `-wal` and `-shm` files the database's
//! mode), and tantivy writes some of its files through temporary files,
//! which are 0600.

use std::fs::OpenOptions;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Creates the database file `path`, empty, unless it exists: `open(2)`
/// gives it 0666 less the umask, and SQLite then uses it as a new database.
pub fn create_database_file(path: &Path) -> std::io::Result<()> {
    match OpenOptions::new().create_new(true).write(true).open(path) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        created => created.map(drop),
    }
}

/// Gives each of `files` that this process owns the mode a new file gets
/// (0666 less the umask) when its mode is narrower, as a file written
/// through a temporary file is. Best effort: a file it cannot change stays
/// as it is.
pub(crate) fn open_up_as_umask_allows(files: &[PathBuf]) {
    let Some(status) = ProcessStatus::read() else {
        return;
    };
    let wanted = 0o666 & !status.umask;
    for file in files {
        let Ok(metadata) = std::fs::metadata(file) else {
            continue;
        };
        let mode = metadata.mode() & 0o777;
        if metadata.uid() == status.uid && mode & wanted != wanted {
            let widened = std::fs::Permissions::from_mode(mode | wanted);
            let _ = std::fs::set_permissions(file, widened);
        }
    }
}

/// Why this process may not write `file`, when it may not: who owns it and
/// its mode, and what to do about it.
pub(crate) fn why_not_writable(file: &Path) -> Option<String> {
    if crate::read_only::can_write(file) {
        return None;
    }
    Some(format!(
        "it is {}: its owner can let the group write it (chmod g+w {}; kts makes its files as the \
         umask allows, so a shared scope is indexed under umask 002), or index the scope as \
         its owner",
        shut_out(file, "write")?,
        file.display()
    ))
}

/// Why this process may not enter the folder `dir` (a `.kts` made under
/// umask 077, say): who owns it and its mode, and what to do about it.
pub(crate) fn why_not_enterable(dir: &Path) -> Option<String> {
    Some(format!(
        "{} is {}: its owner can let others read the index (chmod -R go+rX {}), or index it \
         under a umask that does (022, or 002 for a group)",
        dir.display(),
        shut_out(dir, "enter")?,
        dir.display()
    ))
}

/// "owned by uid 2001 (group 3000) with mode 0700, which does not let uid
/// 2002 enter it".
fn shut_out(path: &Path, verb: &str) -> Option<String> {
    let metadata = std::fs::metadata(path).ok()?;
    let me = ProcessStatus::read().map_or_else(|| "this user".into(), |s| format!("uid {}", s.uid));
    Some(format!(
        "owned by uid {} (group {}) with mode {:04o}, which does not let {me} {verb} it",
        metadata.uid(),
        metadata.gid(),
        metadata.mode() & 0o7777,
    ))
}

/// What the kernel says of this process: its effective user and its umask.
struct ProcessStatus {
    uid: u32,
    umask: u32,
}

impl ProcessStatus {
    /// From `/proc/self/status` (`None` where there is none).
    fn read() -> Option<ProcessStatus> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        Self::parse(&status)
    }

    fn parse(status: &str) -> Option<ProcessStatus> {
        let field = |name: &str| {
            status
                .lines()
                .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
                .map(str::split_whitespace)
        };
        // Uid: real, effective, saved, filesystem.
        let uid = field("Uid")?.nth(1)?.parse().ok()?;
        let umask = u32::from_str_radix(field("Umask")?.next()?, 8).ok()?;
        Some(ProcessStatus { uid, umask })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_gives_the_effective_user_and_the_umask() {
        let status = ProcessStatus::parse(
            "Name:\tkts-index\nUmask:\t0002\nState:\tR\nUid:\t1000\t2001\t2001\t2001\n",
        )
        .unwrap();
        assert_eq!((status.uid, status.umask), (2001, 0o002));
    }

    #[test]
    fn a_file_written_through_a_temporary_file_is_opened_up_as_the_umask_allows() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("meta.json");
        std::fs::write(&file, "{}").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        open_up_as_umask_allows(std::slice::from_ref(&file));
        let umask = ProcessStatus::read().unwrap().umask;
        let mode = std::fs::metadata(&file).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o600 | (0o666 & !umask));
    }
}
