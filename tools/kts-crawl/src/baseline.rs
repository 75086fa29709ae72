//! What a file's status is measured against: the documents the scope's index
//! holds when there is one (a file is "unchanged" only once it is indexed, so
//! a pipeline that failed half-way is redone), else the previous crawl.

use std::collections::BTreeMap;
use std::path::Path;

use kts_cli::Messages;
use kts_record::{FileStatus, Format};

use crate::manifest::{Entry, Manifest};

pub struct Baseline {
    /// Path → what was there: the entry of the previous crawl, or one made
    /// from the index (size and mtime unknown, 0).
    known: BTreeMap<String, Entry>,
}

/// The index's documents if the scope has an index, else the previous crawl.
pub fn load(root: &Path, previous: &Manifest, messages: &Messages) -> Baseline {
    if !kts_store::db_path(root).is_file() {
        return from_crawl(previous);
    }
    match indexed(root, previous) {
        Ok(known) => Baseline { known },
        // The first kts-index run, started beside this crawl in the same pipeline.
        Err(err) if err.downcast_ref::<kts_store::NoIndexYet>().is_some() => from_crawl(previous),
        Err(err) => {
            messages.warn(&format!(
                "cannot read the index ({err:#}); comparing with the previous crawl"
            ));
            from_crawl(previous)
        }
    }
}

/// The index's documents; an error when the scope has no readable index.
pub fn from_index(root: &Path, previous: &Manifest) -> anyhow::Result<Baseline> {
    Ok(Baseline {
        known: indexed(root, previous)?,
    })
}

fn from_crawl(previous: &Manifest) -> Baseline {
    Baseline {
        known: previous
            .entries()
            .map(|(path, entry)| (path.clone(), entry.clone()))
            .collect(),
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
