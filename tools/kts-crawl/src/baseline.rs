//! What a file's status is measured against: the documents the scope's index
//! holds when there is one (a file is "unchanged" only once it is indexed, so
//! a pipeline that failed half-way is redone), else the previous crawl, as
//! long as the scope was never indexed.

use std::collections::BTreeMap;
use std::path::Path;

use kts_record::{FileStatus, Format};

use crate::manifest::{Entry, Manifest};

pub struct Baseline {
    /// Path → what was there: the entry of the previous crawl, or one made
    /// from the index (size and mtime unknown, 0).
    known: BTreeMap<String, Entry>,
    /// Whether the scope has or had an index.
    had_index: bool,
}

/// The index's documents if the scope has an index, else the previous crawl
/// as long as the scope never had one. An index that cannot be read (damaged,
/// of another format, out of this user's reach) is an error: measured against
/// nothing, every file would be new, and a pipeline would redo them all only
/// to fail at kts-index.
pub fn load(root: &Path, previous: &Manifest) -> anyhow::Result<Baseline> {
    let had_index = previous.indexed() || has_index_files(root);
    if !kts_store::has_index(root)? {
        return Ok(without_index(previous, had_index));
    }
    match indexed(root, previous) {
        Ok(known) => Ok(Baseline {
            known,
            had_index: true,
        }),
        // The first kts-index run, started beside this crawl in the same pipeline.
        Err(err) if err.downcast_ref::<kts_store::NoIndexYet>().is_some() => {
            Ok(without_index(previous, had_index))
        }
        Err(err) => Err(err
            .context("cannot read the index, which tells which files are new, changed or deleted")),
    }
}

/// What an index leaves in `.kts/`: its database, or its keyword index
/// beside it (still there when the database was moved aside).
pub fn has_index_files(root: &Path) -> bool {
    kts_store::db_path(root).is_file() || kts_store::lexical_index_dir(root).is_dir()
}

/// With no readable index: the previous crawl, unless the scope had an index
/// (moved aside, removed, being rebuilt): the crawls told what that index
/// held, so nothing is known and every file is new.
fn without_index(previous: &Manifest, had_index: bool) -> Baseline {
    if had_index {
        return Baseline {
            known: BTreeMap::new(),
            had_index,
        };
    }
    from_crawl(previous)
}

/// The index's documents; an error when the scope has no readable index.
pub fn from_index(root: &Path, previous: &Manifest) -> anyhow::Result<Baseline> {
    Ok(Baseline {
        known: indexed(root, previous)?,
        had_index: true,
    })
}

fn from_crawl(previous: &Manifest) -> Baseline {
    Baseline {
        known: previous
            .entries()
            .map(|(path, entry)| (path.clone(), entry.clone()))
            .collect(),
        had_index: false,
    }
}

fn indexed(root: &Path, previous: &Manifest) -> anyhow::Result<BTreeMap<String, Entry>> {
    let store = kts_store::Store::open_read(root)?;
    let known = store
        .indexed_sources()?
        .into_iter()
        .map(|source| {
            let crawled = previous.get(&source.path);
            let format = source
                .format
                .and_then(|f| serde_json::from_value::<Format>(f.into()).ok())
                .or(crawled.map(|e| e.format))
                .unwrap_or(Format::Md);
            let entry = Entry {
                size: crawled.map_or(0, |e| e.size),
                mtime_ns: crawled.map_or(0, |e| e.mtime_ns),
                ctime_ns: crawled.map_or(0, |e| e.ctime_ns),
                inode: crawled.map_or(0, |e| e.inode),
                // A document indexed without its source hash (a hand-made stream)
                // never matches, so the file counts as changed and is redone.
                sha256: source.source_sha256.unwrap_or_default(),
                format,
            };
            (source.path, entry)
        })
        .collect();
    Ok(known)
}

impl Baseline {
    pub fn had_index(&self) -> bool {
        self.had_index
    }

    pub fn status(&self, path: &str, sha256: &str) -> FileStatus {
        match self.known.get(path) {
            None => FileStatus::New,
            Some(known) if known.sha256 == sha256 => FileStatus::Unchanged,
            Some(_) => FileStatus::Changed,
        }
    }

    /// What was known but is no longer found: the deletions, in path order.
    pub fn missing_from(&self, found: &Manifest) -> Vec<(String, Entry)> {
        self.known
            .iter()
            .filter(|(path, _)| !found.contains(path))
            .map(|(path, entry)| (path.clone(), entry.clone()))
            .collect()
    }
}
