//! The content-hash cache of one model's vectors in a scope:
//! `<scope>/.kts/embeddings/<model-id>.bin`, so that no text is embedded twice.
//!
//! The file is a header then fixed-size records, appended and fsync'd in
//! batches:
//!
//! ```text
//! header: "KTSEMB01" | dims: u32 LE | fingerprint: [u8; 32]   (the model's settings)
//! record: sha256(text): [u8; 32] | dims × f32 LE | FNV-1a 64 of the preceding bytes: u64 LE
//! ```
//!
//! Loading stops at the first partial or damaged record (a crash mid-append):
//! what follows is ignored and cut off before the next append. A header for
//! other settings (another model file, max_tokens, ...) starts a new file,
//! written aside and renamed into place. So does [`EmbeddingCache::prune`],
//! which leaves out the vectors no one needs any more once they are most of
//! the file.

use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use sha2::{Digest, Sha256};

use crate::manifest::Manifest;

const MAGIC: &[u8; 8] = b"KTSEMB01";
const HEADER_LEN: usize = 8 + 4 + 32;
/// Records kept in memory before they are appended and fsync'd.
const FLUSH_EVERY: usize = 64;

/// The cache key of a text.
pub type Key = [u8; 32];

pub fn text_key(text: &str) -> Key {
    Sha256::digest(text.as_bytes()).into()
}

/// One model's vectors by text hash: loaded at start, appended as it grows.
/// Without a file it is a plain in-memory map (repeats within one run).
pub struct EmbeddingCache {
    vectors: HashMap<Key, Vec<f32>>,
    dims: usize,
    /// The texts this process asked for or added: [`Self::prune`] keeps them.
    used: HashSet<Key>,
    file: Option<CacheFile>,
}

struct CacheFile {
    path: PathBuf,
    header: Vec<u8>,
    /// Length of the file's good part: header and whole, checked records.
    good_len: u64,
    /// Whether the file on disk has our header (else it is (re)created).
    exists: bool,
    appender: Option<File>,
    pending: Vec<u8>,
    pending_records: usize,
}

impl EmbeddingCache {
    /// A cache that lives only as long as the process.
    pub fn in_memory(dims: usize) -> Self {
        EmbeddingCache {
            vectors: HashMap::new(),
            dims,
            used: HashSet::new(),
            file: None,
        }
    }

    /// Opens (or prepares to create) `<kts_dir>/embeddings/<model-id>.bin`.
    pub fn open(kts_dir: &Path, manifest: &Manifest) -> anyhow::Result<Self> {
        let path = kts_dir
            .join("embeddings")
            .join(format!("{}.bin", manifest.id));
        let header = header(manifest);
        remove_abandoned_rewrites(&path);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        let exists = bytes.starts_with(&header);
        let (vectors, good_len) = if exists {
            parse_records(&bytes[HEADER_LEN..], manifest.dims)
        } else {
            (HashMap::new(), 0)
        };
        Ok(EmbeddingCache {
            vectors,
            dims: manifest.dims,
            used: HashSet::new(),
            file: Some(CacheFile {
                path,
                header,
                good_len: (HEADER_LEN as u64) + good_len,
                exists,
                appender: None,
                pending: Vec::new(),
                pending_records: 0,
            }),
        })
    }

    pub fn get(&self, key: &Key) -> Option<&Vec<f32>> {
        self.vectors.get(key)
    }

    /// Whether the vector of a text this run needs is cached (the text is
    /// then one [`Self::prune`] keeps).
    pub fn has_for_use(&mut self, key: Key) -> bool {
        self.used.insert(key);
        self.vectors.contains_key(&key)
    }

    pub fn len(&self) -> usize {
        self.vectors.len()
    }

    pub fn is_empty(&self) -> bool {
        self.vectors.is_empty()
    }

    pub fn path(&self) -> Option<&Path> {
        self.file.as_ref().map(|f| f.path.as_path())
    }

    /// Adds a vector; it reaches the file in the next batch.
    pub fn insert(&mut self, key: Key, vector: Vec<f32>) -> anyhow::Result<()> {
        if vector.len() != self.dims || self.vectors.contains_key(&key) {
            return Ok(());
        }
        let record = encode_record(&key, &vector);
        self.used.insert(key);
        self.vectors.insert(key, vector);
        if let Some(file) = &mut self.file {
            file.pending.extend_from_slice(&record);
            file.pending_records += 1;
            if file.pending_records >= FLUSH_EVERY {
                file.flush()?;
            }
        }
        Ok(())
    }

    /// Stops writing to disk (after a write failed): the vectors stay in memory.
    pub fn keep_in_memory_only(&mut self) {
        self.file = None;
    }

    /// Appends the pending records and fsyncs them.
    pub fn flush(&mut self) -> anyhow::Result<()> {
        match &mut self.file {
            Some(file) => file.flush(),
            None => Ok(()),
        }
    }

    /// Rewrites the file without the vectors that neither this process used
    /// nor the scope's index holds, once they must be more than half of it:
    /// there are more than twice as many vectors as the index's chunks
    /// (`indexed_chunks`, asked only when the texts used leave it open; `None`:
    /// the index cannot be read, nothing is pruned) and the texts used
    /// together. Only then is `indexed_keys` asked for the keys of the index's
    /// texts. Returns how many vectors were left out.
    ///
    /// A vector is only ever copied with its own key, so a pruned file, or a
    /// process appending to the file it replaced, loses vectors at worst.
    pub fn prune(
        &mut self,
        indexed_chunks: impl FnOnce() -> Option<usize>,
        indexed_keys: impl FnOnce() -> anyhow::Result<HashSet<Key>>,
    ) -> anyhow::Result<usize> {
        let Some(file) = &mut self.file else {
            return Ok(0);
        };
        let mostly_dead = |indexed: usize| self.vectors.len() > 2 * (indexed + self.used.len());
        if !file.exists || !mostly_dead(0) || !indexed_chunks().is_some_and(mostly_dead) {
            return Ok(0);
        }
        file.flush()?;
        let indexed = indexed_keys()?;
        let before = self.vectors.len();
        self.vectors
            .retain(|key, _| self.used.contains(key) || indexed.contains(key));
        file.rewrite(self.vectors.iter())?;
        Ok(before - self.vectors.len())
    }
}

impl CacheFile {
    fn flush(&mut self) -> anyhow::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let pending = std::mem::take(&mut self.pending);
        let appender = self.appender()?;
        let written = appender
            .write_all(&pending)
            .and_then(|()| appender.sync_data());
        if let Err(e) = written {
            // Reopened next time: cut back to the good part before appending again.
            self.appender = None;
            self.pending = pending;
            return Err(e).with_context(|| format!("appending to {}", self.path.display()));
        }
        self.good_len += pending.len() as u64;
        self.pending_records = 0;
        Ok(())
    }

    /// The file opened for appending after its good part (created when needed).
    fn appender(&mut self) -> anyhow::Result<&mut File> {
        if self.appender.is_none() {
            if !self.exists {
                self.create()?;
            }
            let file = OpenOptions::new()
                .append(true)
                .open(&self.path)
                .with_context(|| format!("opening {}", self.path.display()))?;
            let len = file.metadata()?.len();
            if len > self.good_len {
                file.set_len(self.good_len).with_context(|| {
                    format!("cutting the damaged tail of {}", self.path.display())
                })?;
            }
            self.appender = Some(file);
        }
        self.appender.as_mut().context("cache file not open")
    }

    /// Writes a file with just the header in place of any other.
    fn create(&mut self) -> anyhow::Result<()> {
        let dir = self.path.parent().context("cache path has no folder")?;
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        self.rewrite(std::iter::empty())
    }

    /// Replaces the file with one of these records: written aside, then
    /// renamed into place, so that a reader or a kill meanwhile finds the old
    /// file or the new one, whole.
    fn rewrite<'a>(
        &mut self,
        records: impl Iterator<Item = (&'a Key, &'a Vec<f32>)>,
    ) -> anyhow::Result<()> {
        let temp = self
            .path
            .with_extension(format!("bin.tmp{}", std::process::id()));
        let written = write_file(&temp, &self.header, records)
            .and_then(|len| std::fs::rename(&temp, &self.path).map(|()| len));
        let len = match written {
            Ok(len) => len,
            Err(e) => {
                let _ = std::fs::remove_file(&temp);
                return Err(e).with_context(|| format!("writing {}", self.path.display()));
            }
        };
        self.exists = true;
        self.appender = None;
        self.good_len = len;
        Ok(())
    }
}

/// Removes the files that processes now gone (killed mid-rewrite) left
/// beside the cache file `path`: `<path>.tmp<pid>`.
fn remove_abandoned_rewrites(path: &Path) {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let prefix = format!("{name}.tmp");
    for entry in entries.flatten() {
        let pid = entry
            .file_name()
            .to_str()
            .and_then(|file| file.strip_prefix(&prefix))
            .and_then(|pid| pid.parse::<u32>().ok());
        if let Some(pid) = pid
            && pid != std::process::id()
            && !Path::new(&format!("/proc/{pid}")).exists()
        {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Writes `header` and the records to `path`, synced; returns its length.
fn write_file<'a>(
    path: &Path,
    header: &[u8],
    records: impl Iterator<Item = (&'a Key, &'a Vec<f32>)>,
) -> std::io::Result<u64> {
    let mut out = BufWriter::new(File::create(path)?);
    out.write_all(header)?;
    let mut len = header.len() as u64;
    for (key, vector) in records {
        let record = encode_record(key, vector);
        out.write_all(&record)?;
        len += record.len() as u64;
    }
    out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    Ok(len)
}

fn header(manifest: &Manifest) -> Vec<u8> {
    let mut header = Vec::with_capacity(HEADER_LEN);
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&(manifest.dims as u32).to_le_bytes());
    header.extend_from_slice(&manifest.fingerprint());
    header
}

fn record_len(dims: usize) -> usize {
    32 + 4 * dims + 8
}

fn encode_record(key: &Key, vector: &[f32]) -> Vec<u8> {
    let mut record = Vec::with_capacity(record_len(vector.len()));
    record.extend_from_slice(key);
    for x in vector {
        record.extend_from_slice(&x.to_le_bytes());
    }
    let check = fnv1a(&record);
    record.extend_from_slice(&check.to_le_bytes());
    record
}

/// The whole, checked records after the header, and their total length.
fn parse_records(bytes: &[u8], dims: usize) -> (HashMap<Key, Vec<f32>>, u64) {
    let len = record_len(dims);
    let mut vectors = HashMap::with_capacity(bytes.len() / len);
    let mut good = 0u64;
    for record in bytes.chunks_exact(len) {
        let (body, check) = record.split_at(len - 8);
        if check != fnv1a(body).to_le_bytes() {
            break;
        }
        let (key, floats) = body.split_at(32);
        let vector = floats
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let mut k = [0u8; 32];
        k.copy_from_slice(key);
        vectors.insert(k, vector);
        good += len as u64;
    }
    (vectors, good)
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(dims: usize) -> Manifest {
        let json = format!(
            r#"{{"id": "test-model", "dims": {dims}, "pooling": "mean", "normalize": true,
            "max_tokens": 16, "inputs": {{"input_ids": "a", "attention_mask": "b"}},
            "output": "c", "model": "m", "tokenizer": "t",
            "files": [{{"name": "m", "package": "p", "version": "1", "path": "m", "sha256": "00"}},
                      {{"name": "t", "package": "p", "version": "1", "path": "t", "sha256": "11"}}]}}"#
        );
        serde_json::from_str(&json).unwrap()
    }

    fn fill(dir: &Path, manifest: &Manifest, texts: &[&str]) {
        let mut cache = EmbeddingCache::open(dir, manifest).unwrap();
        for (i, text) in texts.iter().enumerate() {
            cache
                .insert(text_key(text), vec![i as f32; manifest.dims])
                .unwrap();
        }
        cache.flush().unwrap();
    }

    #[test]
    fn vectors_survive_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let m = manifest(3);
        fill(dir.path(), &m, &["a", "b"]);
        let cache = EmbeddingCache::open(dir.path(), &m).unwrap();
        assert_eq!(cache.len(), 2);
        assert_eq!(cache.get(&text_key("b")), Some(&vec![1.0; 3]));
    }

    #[test]
    fn a_torn_tail_is_ignored_and_cut_before_the_next_append() {
        let dir = tempfile::tempdir().unwrap();
        let m = manifest(3);
        fill(dir.path(), &m, &["a", "b"]);
        let path = dir.path().join("embeddings/test-model.bin");
        let whole = std::fs::metadata(&path).unwrap().len();
        // A crash mid-append: part of a record.
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(&[7u8; 20]).unwrap();
        drop(f);
        let cache = EmbeddingCache::open(dir.path(), &m).unwrap();
        assert_eq!(cache.len(), 2);
        drop(cache);
        fill(dir.path(), &m, &["c"]);
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            whole + record_len(3) as u64
        );
        let cache = EmbeddingCache::open(dir.path(), &m).unwrap();
        assert_eq!(cache.len(), 3);
        assert_eq!(cache.get(&text_key("c")), Some(&vec![0.0; 3]));
    }

    #[test]
    fn a_damaged_record_ends_the_good_part() {
        let dir = tempfile::tempdir().unwrap();
        let m = manifest(3);
        fill(dir.path(), &m, &["a", "b"]);
        let path = dir.path().join("embeddings/test-model.bin");
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 10;
        bytes[last] ^= 0xff;
        std::fs::write(&path, bytes).unwrap();
        assert_eq!(EmbeddingCache::open(dir.path(), &m).unwrap().len(), 1);
    }

    #[test]
    fn pruning_keeps_the_vectors_used_or_indexed_once_most_are_dead() {
        let dir = tempfile::tempdir().unwrap();
        let m = manifest(3);
        fill(dir.path(), &m, &["a", "b", "c", "d", "e"]);
        let path = dir.path().join("embeddings/test-model.bin");
        let indexed = || Ok(HashSet::from([text_key("b")]));

        let mut cache = EmbeddingCache::open(dir.path(), &m).unwrap();
        assert!(cache.has_for_use(text_key("a")));
        assert_eq!(
            cache.prune(|| Some(2), indexed).unwrap(),
            0,
            "5 of at most 3 live"
        );
        assert_eq!(
            cache.prune(|| Some(1), indexed).unwrap(),
            3,
            "5 of at most 2 live"
        );
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            (HEADER_LEN + 2 * record_len(3)) as u64
        );
        cache.insert(text_key("f"), vec![5.0; 3]).unwrap();
        cache.flush().unwrap();

        let cache = EmbeddingCache::open(dir.path(), &m).unwrap();
        assert_eq!(cache.len(), 3);
        assert_eq!(cache.get(&text_key("a")), Some(&vec![0.0; 3]));
        assert_eq!(cache.get(&text_key("b")), Some(&vec![1.0; 3]));
        assert_eq!(cache.get(&text_key("f")), Some(&vec![5.0; 3]));
    }

    #[test]
    fn a_rewrite_left_by_a_process_now_gone_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let m = manifest(3);
        let folder = dir.path().join("embeddings");
        std::fs::create_dir_all(&folder).unwrap();
        // pid_max is at most 2^22: no process has the first; 1 always runs.
        for pid in ["99999999", "1"] {
            std::fs::write(folder.join(format!("test-model.bin.tmp{pid}")), b"").unwrap();
        }
        EmbeddingCache::open(dir.path(), &m).unwrap();
        let left: Vec<String> = std::fs::read_dir(&folder)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(left, ["test-model.bin.tmp1"]);
    }

    #[test]
    fn other_model_settings_start_a_new_file() {
        let dir = tempfile::tempdir().unwrap();
        let m = manifest(3);
        fill(dir.path(), &m, &["a"]);
        let mut changed = m.clone();
        changed.max_tokens = 8;
        assert!(
            EmbeddingCache::open(dir.path(), &changed)
                .unwrap()
                .is_empty()
        );
        fill(dir.path(), &changed, &["b"]);
        let cache = EmbeddingCache::open(dir.path(), &changed).unwrap();
        assert_eq!(cache.len(), 1);
        assert!(cache.get(&text_key("b")).is_some());
    }
}
