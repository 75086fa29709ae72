//! The scope's crawl manifest: what each file looked like at the last crawl.
//! Stored as JSON in `DIR/.kts/manifest.json`, replaced atomically.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;
use kts_record::Format;
use serde::{Deserialize, Serialize};

const FILE_NAME: &str = "manifest.json";
const VERSION: u32 = 1;

#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct Entry {
    pub size: u64,
    pub mtime_ns: i128,
    /// The status change time and inode (0 in a manifest from before they
    /// were kept: such a file is read once more).
    #[serde(default)]
    pub ctime_ns: i128,
    #[serde(default)]
    pub inode: u64,
    pub sha256: String,
    pub format: Format,
}

#[derive(Serialize, Deserialize, Default)]
pub struct Manifest {
    version: u32,
    /// Whether the scope had an index at this crawl or an earlier one: a
    /// crawl that finds none then cannot take these files for indexed.
    #[serde(default)]
    indexed: bool,
    files: BTreeMap<String, Entry>,
}

impl Manifest {
    pub fn indexed(&self) -> bool {
        self.indexed
    }

    pub fn set_indexed(&mut self, indexed: bool) {
        self.indexed = indexed;
    }

    /// The previous manifest, or an empty one on the first crawl. A damaged
    /// manifest is treated as absent: every file is then reported new.
    pub fn load(root: &Path) -> anyhow::Result<Manifest> {
        let path = root.join(".kts").join(FILE_NAME);
        match std::fs::read(&path) {
            Ok(bytes) => Ok(serde_json::from_slice::<Manifest>(&bytes)
                .ok()
                .filter(|m| m.version == VERSION)
                .unwrap_or_default()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Manifest::default()),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
        }
    }

    pub fn save(&self, root: &Path) -> anyhow::Result<()> {
        let dir = root.join(".kts");
        // Not create_dir_all: a scope folder removed during the crawl stays gone.
        match std::fs::create_dir(&dir) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                return Err(e).with_context(|| format!("cannot create {}", dir.display()));
            }
            _ => {}
        }
        remove_abandoned_temporaries(&dir);
        let bytes = serde_json::to_vec(&Manifest {
            version: VERSION,
            indexed: self.indexed,
            files: self.files.clone(),
        })?;
        // A crawl that found nothing new leaves the file (and its time) as it was.
        if std::fs::read(dir.join(FILE_NAME)).is_ok_and(|saved| saved == bytes) {
            return Ok(());
        }
        let temporary = dir.join(format!(".{FILE_NAME}.{}.tmp", std::process::id()));
        let saved = std::fs::write(&temporary, bytes)
            .with_context(|| format!("cannot write {}", temporary.display()))
            .and_then(|()| {
                std::fs::rename(&temporary, dir.join(FILE_NAME))
                    .context("cannot replace the manifest")
            });
        if saved.is_err() {
            let _ = std::fs::remove_file(&temporary);
        }
        saved
    }

    pub fn get(&self, path: &str) -> Option<&Entry> {
        self.files.get(path)
    }

    pub fn contains(&self, path: &str) -> bool {
        self.files.contains_key(path)
    }

    pub fn insert(&mut self, path: String, entry: Entry) {
        self.files.insert(path, entry);
    }

    pub fn entries(&self) -> impl Iterator<Item = (&String, &Entry)> {
        self.files.iter()
    }
}

/// Removes the temporary manifests of crawls that are gone (killed, or
/// stopped by a full disk before they could remove theirs):
/// `.manifest.json.<pid>.tmp` of a process that no longer runs.
fn remove_abandoned_temporaries(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|name| name.strip_prefix(&format!(".{FILE_NAME}.")))
            .and_then(|rest| rest.strip_suffix(".tmp"))
            .and_then(|pid| pid.parse::<u32>().ok());
        if let Some(pid) = pid
            && pid != std::process::id()
            && !Path::new(&format!("/proc/{pid}")).exists()
        {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Manifest;

    #[test]
    fn temporary_files_never_outlive_their_crawl() {
        let scope = tempfile::tempdir().unwrap();
        let kts = scope.path().join(".kts");
        std::fs::create_dir_all(kts.join("manifest.json/occupied")).unwrap();
        // pid_max is at most 2^22: no process has this one.
        let abandoned = kts.join(".manifest.json.99999999.tmp");
        std::fs::write(&abandoned, b"").unwrap();
        let running = kts.join(".manifest.json.1.tmp");
        std::fs::write(&running, b"").unwrap();

        // The manifest cannot replace a folder: the save fails after writing.
        let err = Manifest::default().save(scope.path()).unwrap_err();
        assert!(format!("{err:#}").contains("cannot replace"), "{err:#}");
        let mut left: Vec<String> = std::fs::read_dir(&kts)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, [".manifest.json.1.tmp", "manifest.json"]);
    }

    #[test]
    fn saving_never_creates_the_scope_folder() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("removed-scope");
        let err = Manifest::default().save(&gone).unwrap_err();
        assert!(format!("{err:#}").contains("cannot create"), "{err:#}");
        assert!(!gone.exists());
    }
}
