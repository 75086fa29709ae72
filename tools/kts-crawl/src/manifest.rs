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
    pub sha256: String,
    pub format: Format,
}

#[derive(Serialize, Deserialize, Default)]
pub struct Manifest {
    version: u32,
    files: BTreeMap<String, Entry>,
}

impl Manifest {
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
        let temporary = dir.join(format!(".{FILE_NAME}.{}.tmp", std::process::id()));
        let bytes = serde_json::to_vec(&Manifest {
            version: VERSION,
            files: self.files.clone(),
        })?;
        std::fs::write(&temporary, bytes)
            .with_context(|| format!("cannot write {}", temporary.display()))?;
        std::fs::rename(&temporary, dir.join(FILE_NAME)).context("cannot replace the manifest")?;
        Ok(())
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

#[cfg(test)]
mod tests {
    use super::Manifest;

    #[test]
    fn saving_never_creates_the_scope_folder() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("removed-scope");
        let err = Manifest::default().save(&gone).unwrap_err();
        assert!(format!("{err:#}").contains("cannot create"), "{err:#}");
        assert!(!gone.exists());
    }
}
