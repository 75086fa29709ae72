//! The record stream: chunks get their embeddings, everything else passes
//! through, all in input order.
//!
//! Records wait in a queue while the chunks among them that need the model
//! (cache misses) gather into a window; the window is embedded in one call
//! (batched by similar length when `--batch` > 1), then the queue is written.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::Context;
use indicatif::ProgressBar;
use kts_cli::{Incoming, JsonlReader, JsonlWriter, Messages};
use kts_record::ErrorCode;
use serde_json::Value;

use crate::cache::{EmbeddingCache, Key, text_key};
use crate::embedder::Embedder;
use crate::input::embedding_input;
use crate::manifest::DEFAULT_MODEL;

/// How a stream run without `--model` loads a model: the one each scope's
/// index was built with (so that a scope keeps its model, whatever the
/// default), else the default.
#[derive(Clone, Debug)]
pub struct ScopeModels {
    pub models_dir: PathBuf,
    pub threads: usize,
    pub batch: usize,
}

impl ScopeModels {
    /// The model for the scope whose `.kts` folder is `kts_dir`.
    fn model_of(kts_dir: Option<&Path>) -> String {
        kts_dir
            .and_then(index_model)
            .unwrap_or_else(|| DEFAULT_MODEL.to_string())
    }

    fn load(&self, id: &str) -> anyhow::Result<Embedder> {
        Ok(Embedder::load(&self.models_dir, id, self.threads)?.with_batch(self.batch))
    }
}

/// The model id the index in a `.kts` folder was built with, if it has one.
fn index_model(kts_dir: &Path) -> Option<String> {
    let conn = open_index(kts_dir).ok()??;
    conn.query_row("SELECT value FROM meta WHERE key = 'model_id'", [], |row| {
        row.get(0)
    })
    .ok()
}

/// The index in a `.kts` folder, read-only; `None` when there is none.
fn open_index(kts_dir: &Path) -> rusqlite::Result<Option<rusqlite::Connection>> {
    let db = kts_dir.join("kts.db");
    if !db.is_file() {
        return Ok(None);
    }
    let flags =
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
    rusqlite::Connection::open_with_flags(db, flags).map(Some)
}

/// How many chunks the index in a `.kts` folder holds (0 without one).
fn indexed_chunk_count(kts_dir: &Path) -> rusqlite::Result<usize> {
    match open_index(kts_dir)? {
        Some(conn) => conn.query_row("SELECT count(*) FROM chunks", [], |row| {
            row.get::<_, i64>(0).map(|count| count as usize)
        }),
        None => Ok(0),
    }
}

/// The cache keys of the texts of the index's chunks: what the model read of
/// each, as [`Stream::chunk`] makes it from the records kts-index stored.
fn indexed_text_keys(kts_dir: &Path) -> anyhow::Result<HashSet<Key>> {
    let Some(conn) = open_index(kts_dir)? else {
        return Ok(HashSet::new());
    };
    let mut statement = conn.prepare(
        "SELECT c.text, c.heading_path, d.title FROM chunks c JOIN documents d USING (doc_id)",
    )?;
    let mut rows = statement.query([])?;
    let mut keys = HashSet::new();
    while let Some(row) = rows.next()? {
        let text: String = row.get(0)?;
        let headings: String = row.get(1)?;
        let title: String = row.get(2)?;
        let chunk =
            serde_json::json!({ "heading_path": serde_json::from_str::<Value>(&headings)? });
        keys.insert(text_key(&embedding_input(&text, &chunk, &title)));
    }
    Ok(keys)
}

/// Where the vectors of already embedded texts are kept.
pub enum CacheChoice {
    /// `<DIR>/embeddings/<model>.bin`, whatever the records say.
    Fixed(PathBuf),
    /// `<root>/.kts/embeddings/<model>.bin` for the scope root of the
    /// `kts.doc/1` record before the chunks; in memory when there is none.
    FromScope,
    /// In memory only (repeats within one run are still embedded once).
    Off,
}

/// What happened to the chunks, for `--stats`.
#[derive(Default, Debug)]
pub struct Counts {
    pub chunks: u64,
    /// Chunks whose vector came from the model in this run.
    pub embedded: u64,
    /// Chunks whose vector came from the cache (or a repeat earlier in the run).
    pub cached: u64,
    /// Chunks that already carried an embedding of this model.
    pub kept: u64,
}

enum Queued {
    Ready(Value),
    /// A chunk waiting for the vector of this text hash.
    Chunk(Value, Key),
}

pub struct Stream<'a> {
    embedder: Embedder,
    /// Without `--model`: how to load each scope's model.
    follow: Option<ScopeModels>,
    /// The `.kts` folder of the scope whose chunks come now (for `follow`).
    scope: Option<PathBuf>,
    messages: &'a Messages,
    choice: CacheChoice,
    /// The cache of the scope whose chunks come now. Only one is open at a
    /// time: a stream of many scopes keeps one scope's vectors in memory.
    cache: EmbeddingCache,
    /// The `.kts` folder `cache` belongs to (empty: in memory).
    current: PathBuf,
    window: usize,
    queue: Vec<Queued>,
    /// Distinct texts of the queued chunks that need the model.
    misses: Vec<(Key, String)>,
    /// The id and title of the last `kts.doc/1` record: the document of
    /// the chunks that follow it.
    document: Option<(String, String)>,
    out: JsonlWriter,
    bar: ProgressBar,
    pub counts: Counts,
}

impl<'a> Stream<'a> {
    pub fn new(
        embedder: Embedder,
        follow: Option<ScopeModels>,
        batch: usize,
        choice: CacheChoice,
        messages: &'a Messages,
    ) -> anyhow::Result<Self> {
        let fixed = match &choice {
            CacheChoice::Fixed(dir) => Some(dir.clone()),
            _ => None,
        };
        Ok(Stream {
            cache: open_cache(&embedder, messages, fixed.as_deref()),
            current: fixed.unwrap_or_default(),
            embedder,
            follow,
            scope: None,
            messages,
            choice,
            window: batch.max(1) * 8,
            queue: Vec::new(),
            misses: Vec::new(),
            document: None,
            out: JsonlWriter::new(),
            bar: kts_cli::progress_bar(messages.tool(), None, "chunks"),
            counts: Counts::default(),
        })
    }

    pub fn embedder(&self) -> &Embedder {
        &self.embedder
    }

    /// Reads every record of `reader` and writes the stream out.
    pub fn run<R: std::io::Read>(&mut self, mut reader: JsonlReader<R>) -> anyhow::Result<()> {
        while let Some(item) = reader.next() {
            match item? {
                Ok(Incoming::Doc(value)) => self.doc(value)?,
                Ok(Incoming::Chunk(value)) => self.chunk(value, &reader.position()),
                Ok(Incoming::File(value) | Incoming::Error(value) | Incoming::Other(value)) => {
                    self.queue.push(Queued::Ready(value))
                }
                Err((code, message)) => {
                    let error = self
                        .messages
                        .reject_record(&reader.position(), code, &message);
                    self.queue.push(Queued::Ready(serde_json::to_value(error)?));
                }
            }
            self.advance()?;
        }
        self.embed_window()?;
        self.bar.finish_and_clear();
        self.out.flush()?;
        self.close_cache();
        Ok(())
    }

    /// A document: its title goes before its chunks' text, and its scope
    /// root picks the model (without `--model`) and the cache for the chunks
    /// that follow.
    fn doc(&mut self, value: Value) -> anyhow::Result<()> {
        let text_of = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_string);
        self.document = text_of("doc_id").map(|id| (id, text_of("title").unwrap_or_default()));
        let root = value.get("root").and_then(Value::as_str).map(Path::new);
        let kts_dir = root.map(|r| r.join(".kts"));
        self.follow_scope_model(kts_dir.as_deref())?;
        if matches!(self.choice, CacheChoice::FromScope)
            && kts_dir.as_deref().unwrap_or(Path::new("")) != self.current
        {
            self.embed_window()?;
            self.select_cache(kts_dir.as_deref());
        }
        self.queue.push(Queued::Ready(value));
        Ok(())
    }

    /// Switches to the model a new scope's index was built with (the default
    /// for a scope without one), after embedding what waits for the old one.
    fn follow_scope_model(&mut self, kts_dir: Option<&Path>) -> anyhow::Result<()> {
        let Some(models) = self.follow.clone() else {
            return Ok(());
        };
        if kts_dir == self.scope.as_deref() {
            return Ok(());
        }
        self.scope = kts_dir.map(Path::to_path_buf);
        let wanted = ScopeModels::model_of(kts_dir);
        if wanted == self.embedder.model_id() {
            return Ok(());
        }
        self.embed_window()?;
        self.embedder = models.load(&wanted).with_context(|| {
            format!(
                "the index in {} was built with model {wanted} (give --model to embed with another, then re-index)",
                kts_dir.map_or(String::new(), |d| d.display().to_string())
            )
        })?;
        self.close_cache();
        let cache_dir = (!self.current.as_os_str().is_empty()).then(|| self.current.clone());
        self.cache = open_cache(&self.embedder, self.messages, cache_dir.as_deref());
        Ok(())
    }

    fn chunk(&mut self, mut value: Value, position: &str) {
        self.counts.chunks += 1;
        let Some(text) = value.get("text").and_then(Value::as_str) else {
            let path = value.get("path").and_then(Value::as_str).unwrap_or("?");
            let at = format!("{position} ({path})");
            let error = self.messages.reject_record(
                &at,
                ErrorCode::BadRecord,
                "chunk has no \"text\" string",
            );
            self.queue.push(Queued::Ready(
                serde_json::to_value(error).unwrap_or(Value::Null),
            ));
            return;
        };
        if self.has_own_embedding(&value) {
            self.counts.kept += 1;
            self.queue.push(Queued::Ready(value));
            return;
        }
        let title = match (&self.document, value.get("doc_id").and_then(Value::as_str)) {
            (Some((doc_id, title)), Some(id)) if doc_id == id => title.as_str(),
            _ => "",
        };
        let text = embedding_input(text, &value, title);
        let key = text_key(&text);
        let cached = self.cache.has_for_use(key) || self.misses.iter().any(|(k, _)| *k == key);
        if cached {
            self.counts.cached += 1;
        } else {
            self.misses.push((key, text));
        }
        if let Some(object) = value.as_object_mut() {
            object.remove("embedding");
            object.remove("model");
            object.remove("model_sha256");
        }
        self.queue.push(Queued::Chunk(value, key));
    }

    /// Whether a chunk already has a vector of this model (of the right size).
    fn has_own_embedding(&self, value: &Value) -> bool {
        let model = value.get("model").and_then(Value::as_str);
        let dims = value
            .get("embedding")
            .and_then(Value::as_array)
            .map(Vec::len);
        let sha256 = value.get("model_sha256").and_then(Value::as_str);
        model == Some(self.embedder.model_id())
            && dims == Some(self.embedder.dims())
            && sha256.is_none_or(|s| s == self.embedder.manifest().model_sha256())
    }

    /// Writes out what can be written: everything when no chunk waits for the
    /// model, else once the window is full.
    fn advance(&mut self) -> anyhow::Result<()> {
        if self.misses.is_empty() || self.misses.len() >= self.window {
            self.embed_window()?;
        }
        Ok(())
    }

    /// Embeds the window's misses, then writes the queue in order.
    fn embed_window(&mut self) -> anyhow::Result<()> {
        if !self.misses.is_empty() {
            let misses = std::mem::take(&mut self.misses);
            let texts: Vec<&str> = misses.iter().map(|(_, t)| t.as_str()).collect();
            let vectors = self.embedder.embed(&texts)?;
            self.counts.embedded += misses.len() as u64;
            for ((key, _), vector) in misses.into_iter().zip(vectors) {
                let written = self.cache.insert(key, vector);
                self.cache_written(written);
            }
        }
        self.write_queue()
    }

    fn write_queue(&mut self) -> anyhow::Result<()> {
        let model = self.embedder.model_id().to_string();
        let sha256 = self.embedder.manifest().model_sha256().to_string();
        let queue = std::mem::take(&mut self.queue);
        let wrote = !queue.is_empty();
        for item in queue {
            match item {
                Queued::Ready(value) => self.out.write(&value)?,
                Queued::Chunk(mut value, key) => {
                    let vector = self.cache.get(&key).map(|v| json_vector(v));
                    if let (Some(object), Some(vector)) = (value.as_object_mut(), vector) {
                        object.insert("embedding".into(), vector);
                        object.insert("model".into(), Value::String(model.clone()));
                        if !sha256.is_empty() {
                            object.insert("model_sha256".into(), Value::String(sha256.clone()));
                        }
                    }
                    self.out.write(&value)?;
                    self.bar.inc(1);
                }
            }
        }
        if wrote {
            self.out.flush()?;
        }
        Ok(())
    }

    fn flush_cache(&mut self) {
        let written = self.cache.flush();
        self.cache_written(written);
    }

    /// The cache saves work, it is not needed: one that cannot be written
    /// (a read-only scope, a full disk) is warned about and kept in memory.
    fn cache_written(&mut self, written: anyhow::Result<()>) {
        if let Err(e) = written {
            self.messages.warn(&format!(
                "the embedding cache cannot be written ({e:#}): this run's vectors are not cached"
            ));
            self.cache.keep_in_memory_only();
        }
    }

    /// Done with the current cache: its last vectors written, and, when it
    /// is a scope's own (not a --cache folder, which other scopes may share),
    /// pruned of the vectors neither this run nor the scope's index needs.
    fn close_cache(&mut self) {
        self.flush_cache();
        if !matches!(self.choice, CacheChoice::FromScope) || self.current.as_os_str().is_empty() {
            return;
        }
        let kts_dir = self.current.clone();
        let pruned = self.cache.prune(
            || indexed_chunk_count(&kts_dir).ok(),
            || indexed_text_keys(&kts_dir),
        );
        if let Err(e) = pruned {
            self.messages
                .warn(&format!("the embedding cache was not pruned ({e:#})"));
        }
    }

    /// Makes the cache of a `.kts` folder (or the in-memory one) current,
    /// after closing the one it replaces.
    fn select_cache(&mut self, kts_dir: Option<&Path>) {
        let key = kts_dir.map(Path::to_path_buf).unwrap_or_default();
        if key != self.current {
            self.close_cache();
            self.cache = open_cache(&self.embedder, self.messages, kts_dir);
            self.current = key;
        }
    }
}

fn open_cache(embedder: &Embedder, messages: &Messages, kts_dir: Option<&Path>) -> EmbeddingCache {
    let manifest = embedder.manifest();
    let Some(dir) = kts_dir else {
        return EmbeddingCache::in_memory(manifest.dims);
    };
    match EmbeddingCache::open(dir, manifest) {
        Ok(cache) => cache,
        Err(e) => {
            messages.warn(&format!(
                "no embedding cache ({e:#}): every text is embedded"
            ));
            EmbeddingCache::in_memory(manifest.dims)
        }
    }
}

/// A vector as JSON numbers, each written with the shortest decimal that
/// reads back as the same f32 (not the 17 digits of its f64 widening).
pub fn json_vector(vector: &[f32]) -> Value {
    Value::Array(
        vector
            .iter()
            .map(|&x| {
                let shortest = x.to_string().parse::<f64>().unwrap_or(f64::from(x));
                serde_json::Number::from_f64(shortest).map_or(Value::Null, Value::Number)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_vector_is_short_and_reads_back_exactly() {
        let v = [0.1f32, -0.032837093, 1.0 / 3.0];
        let json = json_vector(&v).to_string();
        assert_eq!(json, "[0.1,-0.032837093,0.33333334]");
        let back: Vec<f32> = serde_json::from_str(&json).unwrap();
        assert_eq!(back, v);
    }
}
