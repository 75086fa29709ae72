//! Finding a scope's documents: what is skipped, and reading what is kept.

use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use kts_cli::Messages;
use kts_record::{Format, sniff_file_format};
use sha2::{Digest, Sha256};
use walkdir::WalkDir;

use crate::ignore_files::IgnoreFiles;
use crate::manifest::Entry;
use kts_cli::time::nanos_since_epoch;

/// A regular file under the root, before it is read.
pub struct Found {
    /// Relative to the root, `/`-separated.
    pub path: String,
    pub full_path: PathBuf,
    pub size: u64,
    pub mtime_ns: i128,
    pub ctime_ns: i128,
    pub inode: u64,
}

/// What the walk meets: a file, a file or folder it cannot read (whose
/// documents must not be taken for deleted), or a file whose name is not
/// UTF-8 (no record can name it; `path` has U+FFFD for the bad bytes).
pub enum Walked {
    File(Found),
    Unreadable { path: String, reason: String },
    NameNotUtf8 { path: String },
}

/// Whether the walk leaves out a file or folder of this name: hidden ones,
/// and files that are never documents (editor and OS junk, Office lock
/// files). A folder is left out only when hidden: `v2~/` or `~/` holds
/// documents, whatever an editor names its backup files.
fn is_left_out(name: &str, is_dir: bool) -> bool {
    name.starts_with('.') || (!is_dir && is_junk(name))
}

/// Files that are never documents: editor and OS junk, Office lock files.
fn is_junk(name: &str) -> bool {
    name.starts_with("~$")
        || name.starts_with(".~lock")
        || name.ends_with('~')
        || (name.starts_with('#') && name.ends_with('#'))
        || name.ends_with(".tmp")
        || name.ends_with(".swp")
        || name.eq_ignore_ascii_case("thumbs.db")
        || name.eq_ignore_ascii_case("desktop.ini")
}

/// Walks the root in path order, following symbolic links that stay inside
/// it, leaving out what `ignore_files` (if any) rule out.
pub fn documents<'a>(
    root: &'a Path,
    messages: &'a Messages,
    mut ignore_files: Option<IgnoreFiles<'a>>,
) -> impl Iterator<Item = Walked> + 'a {
    WalkDir::new(root)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(move |entry| {
            if entry.depth() == 0 {
                return true;
            }
            let is_dir = entry.file_type().is_dir();
            if (entry.file_name().to_str()).is_some_and(|name| is_left_out(name, is_dir)) {
                return false;
            }
            if let Some(rules) = &mut ignore_files
                && rules.leave_out(entry.path(), is_dir)
            {
                return false;
            }
            // Checked before descending: a link to a folder outside would leave the scope.
            if entry.path_is_symlink() && !stays_inside(root, entry.path()) {
                messages.warn(&format!(
                    "skipped {}: symbolic link leads outside the scope",
                    relative(root, entry.path())
                ));
                return false;
            }
            if entry.file_type().is_dir()
                && let Some(mail) = mail_whose_parts_it_would_hold(entry.path())
            {
                messages.warn(&format!(
                    "skipped {}/: its files would have the paths of the documents inside \
                     the e-mail {mail} (its attachments or messages)",
                    relative(root, entry.path())
                ));
                return false;
            }
            true
        })
        .filter_map(move |entry| {
            let entry = match entry {
                Ok(entry) => entry,
                Err(err) => {
                    let path = err.path().map(|p| relative(root, p)).unwrap_or_default();
                    if err.loop_ancestor().is_some() {
                        messages.warn(&format!("skipped {path}: symbolic link loop"));
                        return None;
                    }
                    // A dangling link is no document: what it led to is deleted.
                    if let Some(target) = err.path().and_then(broken_link_target) {
                        messages.warn(&format!(
                            "skipped {path}: broken symbolic link (to {})",
                            target.display()
                        ));
                        return None;
                    }
                    return Some(Walked::Unreadable {
                        path,
                        reason: err.to_string(),
                    });
                }
            };
            if !entry.file_type().is_file() {
                return None;
            }
            let path = relative(root, entry.path());
            if entry.path().to_str().is_none() {
                return Some(Walked::NameNotUtf8 { path });
            }
            // A link into a skipped folder (such as .kts) would smuggle it back in.
            if entry.path_is_symlink() && resolves_into_junk(root, entry.path()) {
                return None;
            }
            let metadata = match entry.metadata() {
                Ok(metadata) => metadata,
                Err(err) => {
                    return Some(Walked::Unreadable {
                        path,
                        reason: err.to_string(),
                    });
                }
            };
            let mtime_ns = metadata.modified().map(nanos_since_epoch).unwrap_or(0);
            Some(Walked::File(Found {
                path,
                full_path: entry.into_path(),
                size: metadata.len(),
                mtime_ns,
                ctime_ns: i128::from(metadata.ctime()) * 1_000_000_000
                    + i128::from(metadata.ctime_nsec()),
                inode: metadata.ino(),
            }))
        })
}

/// The name of the e-mail file beside a folder named after it plus
/// `#attachment` or `#message`: the paths of the files in such a folder are
/// those kts-convert gives the documents inside that e-mail, and would
/// replace them in the index.
fn mail_whose_parts_it_would_hold(folder: &Path) -> Option<String> {
    let name = folder.file_name()?.to_str()?;
    let mail = name
        .strip_suffix("#attachment")
        .or_else(|| name.strip_suffix("#message"))?;
    let path = folder.with_file_name(mail);
    let size = std::fs::metadata(&path).ok().filter(|m| m.is_file())?.len();
    let format = sniff_file_format(&mut File::open(&path).ok()?, size, &path).ok()??;
    matches!(format, Format::Eml | Format::Msg | Format::Mbox).then(|| mail.to_string())
}

fn relative(root: &Path, path: &Path) -> String {
    let relative = path.strip_prefix(root).unwrap_or(path);
    relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

fn stays_inside(root: &Path, path: &Path) -> bool {
    path.canonicalize()
        .is_ok_and(|target| target.starts_with(root))
}

/// The target of a symbolic link that leads nowhere (to a file or folder
/// that does not exist); `None` for anything else.
fn broken_link_target(path: &Path) -> Option<PathBuf> {
    let target = std::fs::read_link(path).ok()?;
    let dangling = std::fs::metadata(path).is_err_and(|err| {
        matches!(
            err.kind(),
            std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
        )
    });
    dangling.then_some(target)
}

fn resolves_into_junk(root: &Path, path: &Path) -> bool {
    let Ok(target) = path.canonicalize() else {
        return true;
    };
    let inside = target.strip_prefix(root).unwrap_or(&target);
    inside
        .components()
        .any(|c| c.as_os_str().to_str().is_some_and(is_junk))
}

/// Files at least this large are hashed through a memory map.
const MAP_THRESHOLD: u64 = 4 << 20;

impl Found {
    /// Whether the file is as the crawl that made `old` found it, by what
    /// git's index compares: size, modification and status change times,
    /// inode. Unpacking or copying with the old mtime (tar, cp -p), or
    /// repointing a link, changes the status change time or the inode.
    pub fn is_as_in(&self, old: &Entry) -> bool {
        old.size == self.size
            && old.mtime_ns == self.mtime_ns
            && old.ctime_ns == self.ctime_ns
            && old.inode == self.inode
    }

    /// Reads the file: its format and hash. `None` when it is not a document kts handles.
    pub fn describe(&self) -> anyhow::Result<Option<Entry>> {
        let mut file = File::open(&self.full_path)?;
        let Some(format) = sniff_file_format(&mut file, self.size, &self.full_path)? else {
            return Ok(None);
        };
        file.seek(SeekFrom::Start(0))?;
        let sha256 = hash(&file, self.size)?;
        Ok(Some(Entry {
            size: self.size,
            mtime_ns: self.mtime_ns,
            ctime_ns: self.ctime_ns,
            inode: self.inode,
            sha256,
            format,
        }))
    }
}

fn hash(file: &File, size: u64) -> anyhow::Result<String> {
    let mut hasher = Sha256::new();
    if size >= MAP_THRESHOLD {
        #[allow(unsafe_code)]
        // SAFETY: the map is read-only and dropped before return; a file truncated
        // by another process meanwhile can fault, the same risk every mmap reader takes.
        let map = unsafe { memmap2::Mmap::map(file)? };
        hasher.update(&map[..]);
    } else {
        std::io::copy(&mut (&*file), &mut hasher)?;
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::is_left_out;

    #[test]
    fn junk_names() {
        for junk in [
            ".DS_Store",
            "~$report.docx",
            "notes.md~",
            "#draft#",
            "a.tmp",
            "Thumbs.db",
        ] {
            assert!(is_left_out(junk, false), "{junk}");
        }
        for kept in ["report.docx", "README.md", "a~b.txt"] {
            assert!(!is_left_out(kept, false), "{kept}");
        }
        for (folder, left_out) in [(".kts", true), (".git", true), ("~", false), ("v2~", false)] {
            assert_eq!(is_left_out(folder, true), left_out, "{folder}/");
        }
    }
}
