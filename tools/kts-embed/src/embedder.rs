//! The embedding engine: a model's tokenizer and ONNX session, as its manifest
//! describes them. kts-embed's stream and kts-query both use it in-process.

use std::borrow::Cow;
use std::path::Path;

use anyhow::{Context, anyhow, bail};
use ort::session::Session;
use tokenizers::{Encoding, Tokenizer};

use crate::manifest::{Manifest, ModelKind, Pooling};
use crate::onnx::{BatchInput, SessionSettings, load_tokenizer, open_session};

/// What the embedder has done so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EmbedderStats {
    /// Texts embedded (each one ran through the model).
    pub texts: u64,
    /// Tokens those texts had, special tokens included, after truncation.
    pub tokens: u64,
    /// Model runs (one per batch).
    pub runs: u64,
}

/// A loaded sentence-embedding model.
pub struct Embedder {
    manifest: Manifest,
    tokenizer: Tokenizer,
    /// Made at the first model run: a stream served from the cache never
    /// loads ONNX Runtime (hundreds of MB).
    session: Option<Session>,
    threads: usize,
    spinning: bool,
    batch: usize,
    stats: EmbedderStats,
}

impl Embedder {
    /// Loads model `id` from a models folder (`<dir>/<id>.json`, files in
    /// `<dir>/cache/<id>/`), with `threads` intra-op threads.
    pub fn load(models_dir: &Path, id: &str, threads: usize) -> anyhow::Result<Embedder> {
        Self::from_manifest(Manifest::load(models_dir, id)?, threads)
    }

    /// Loads the model a manifest file describes; its folder is the models folder.
    pub fn load_manifest(path: &Path, threads: usize) -> anyhow::Result<Embedder> {
        Self::from_manifest(Manifest::load_file(path)?, threads)
    }

    /// Reads the tokenizer and checks the model file is there; the model
    /// itself is loaded when first needed.
    pub fn from_manifest(manifest: Manifest, threads: usize) -> anyhow::Result<Embedder> {
        manifest.expect_kind(ModelKind::Embedding)?;
        manifest.file(&manifest.model)?;
        let tokenizer = load_tokenizer(&manifest)?;
        Ok(Embedder {
            manifest,
            tokenizer,
            session: None,
            threads: threads.max(1),
            spinning: true,
            batch: 1,
            stats: EmbedderStats::default(),
        })
    }

    /// Loads model `id` for a process that embeds one question and exits:
    /// the tokenizer is read while ONNX Runtime loads the model, side by
    /// side, and its threads do not spin (see [`Embedder::without_spinning`]).
    /// The model is prepared as for many runs, though loading it unprepared
    /// would be quicker: the vectors would differ (see `open_session`).
    pub fn load_for_one_question(
        models_dir: &Path,
        id: &str,
        threads: usize,
    ) -> anyhow::Result<Embedder> {
        let manifest = Manifest::load(models_dir, id)?;
        manifest.expect_kind(ModelKind::Embedding)?;
        let threads = threads.max(1);
        let settings = SessionSettings {
            threads,
            spinning: false,
        };
        let (tokenizer, session) = std::thread::scope(|s| {
            let tokenizer = s.spawn(|| load_tokenizer(&manifest));
            let session = open_session(&manifest, settings);
            (
                tokenizer.join().expect("loading the tokenizer panicked"),
                session,
            )
        });
        Ok(Embedder {
            tokenizer: tokenizer?,
            session: Some(session?),
            threads,
            spinning: settings.spinning,
            batch: 1,
            stats: EmbedderStats::default(),
            manifest,
        })
    }

    /// Lets ONNX Runtime's threads sleep as soon as a run ends, for a process
    /// that embeds a question and then searches with it: by default they
    /// spin, waiting for the next run, on the cores the search needs. A warm
    /// search at 100k chunks measured about 1.5 ms faster without spinning,
    /// though the embedding itself is about 0.8 ms slower.
    pub fn without_spinning(mut self) -> Self {
        self.spinning = false;
        self
    }

    /// Loads the ONNX model unless it is loaded.
    fn load_session(&mut self) -> anyhow::Result<()> {
        if self.session.is_some() {
            return Ok(());
        }
        let session = open_session(
            &self.manifest,
            SessionSettings {
                threads: self.threads,
                spinning: self.spinning,
            },
        )?;
        self.session = Some(session);
        Ok(())
    }

    /// Texts per model run in [`Embedder::embed`] (default 1). With more than
    /// one, texts of similar length are batched together.
    pub fn with_batch(mut self, batch: usize) -> Self {
        self.batch = batch.max(1);
        self
    }

    pub fn model_id(&self) -> &str {
        &self.manifest.id
    }

    pub fn dims(&self) -> usize {
        self.manifest.dims
    }

    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    pub fn stats(&self) -> EmbedderStats {
        self.stats
    }

    /// The token ids the model sees for a document text (prefix, special
    /// tokens and truncation applied).
    pub fn token_ids(&self, text: &str) -> anyhow::Result<Vec<u32>> {
        let prefixed = prefixed(&self.manifest.document_prefix, text);
        Ok(self.encode(&prefixed)?.get_ids().to_vec())
    }

    /// Embeds documents (chunks): one vector of `dims()` floats per text, in order.
    pub fn embed(&mut self, texts: &[&str]) -> anyhow::Result<Vec<Vec<f32>>> {
        let prefix = self.manifest.document_prefix.clone();
        let encodings = texts
            .iter()
            .map(|text| self.encode(&prefixed(&prefix, text)))
            .collect::<anyhow::Result<Vec<_>>>()?;
        self.embed_encodings(&encodings)
    }

    /// Embeds a search query (with the model's query prefix).
    pub fn embed_query(&mut self, query: &str) -> anyhow::Result<Vec<f32>> {
        let encoding = self.encode(&prefixed(&self.manifest.query_prefix, query))?;
        let mut vectors = self.embed_encodings(&[encoding])?;
        vectors.pop().context("the model returned no vector")
    }

    fn encode(&self, text: &str) -> anyhow::Result<Encoding> {
        self.tokenizer
            .encode(text, true)
            .map_err(|e| anyhow!("tokenizing: {e}"))
    }

    /// Runs the encodings in batches of similar length; vectors in input order.
    fn embed_encodings(&mut self, encodings: &[Encoding]) -> anyhow::Result<Vec<Vec<f32>>> {
        let mut order: Vec<usize> = (0..encodings.len()).collect();
        if self.batch > 1 {
            order.sort_by_key(|&i| encodings[i].get_ids().len());
        }
        let mut vectors = vec![Vec::new(); encodings.len()];
        for group in order.chunks(self.batch) {
            let batch: Vec<&Encoding> = group.iter().map(|&i| &encodings[i]).collect();
            for (&i, vector) in group.iter().zip(self.run(&batch)?) {
                vectors[i] = vector;
            }
        }
        Ok(vectors)
    }

    /// One model run over a batch, padded to its longest input.
    fn run(&mut self, batch: &[&Encoding]) -> anyhow::Result<Vec<Vec<f32>>> {
        self.load_session()?;
        let session = self.session.as_mut().expect("loaded above");
        let input = BatchInput::new(batch);
        let vectors = input.run(session, &self.manifest, |shape, data| {
            pool(&self.manifest, &input, shape, data)
        })?;
        self.stats.runs += 1;
        self.stats.texts += batch.len() as u64;
        self.stats.tokens += input.mask.iter().sum::<i64>() as u64;
        Ok(vectors)
    }
}

pub(crate) fn prefixed<'t>(prefix: &str, text: &'t str) -> Cow<'t, str> {
    if prefix.is_empty() {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(format!("{prefix}{text}"))
    }
}

/// Turns the model's output into one (normalised) vector per row.
fn pool(
    manifest: &Manifest,
    input: &BatchInput,
    shape: &[i64],
    data: &[f32],
) -> anyhow::Result<Vec<Vec<f32>>> {
    let dims = manifest.dims;
    let expected: Vec<i64> = match manifest.pooling {
        Pooling::None => vec![input.rows as i64, dims as i64],
        Pooling::Mean | Pooling::Cls => vec![input.rows as i64, input.width as i64, dims as i64],
    };
    if shape != expected.as_slice() || data.len() != expected.iter().product::<i64>() as usize {
        bail!(
            "model {}: output {:?} has shape {shape:?}, expected {expected:?} (check dims and pooling in its manifest)",
            manifest.id,
            manifest.output
        );
    }
    let vectors = (0..input.rows).map(|row| {
        let mut vector = match manifest.pooling {
            Pooling::None => data[row * dims..(row + 1) * dims].to_vec(),
            Pooling::Cls => {
                let at = row * input.width * dims;
                data[at..at + dims].to_vec()
            }
            Pooling::Mean => mean_pool(
                data,
                &input.mask[row * input.width..(row + 1) * input.width],
                row,
                dims,
            ),
        };
        if manifest.normalize {
            normalize(&mut vector);
        }
        vector
    });
    Ok(vectors.collect())
}

/// The mean of a row's token vectors over its attention mask.
fn mean_pool(data: &[f32], mask: &[i64], row: usize, dims: usize) -> Vec<f32> {
    let width = mask.len();
    let mut sum = vec![0f32; dims];
    let mut count = 0f32;
    for (t, _) in mask.iter().enumerate().filter(|(_, m)| **m != 0) {
        let at = (row * width + t) * dims;
        for (s, x) in sum.iter_mut().zip(&data[at..at + dims]) {
            *s += x;
        }
        count += 1.0;
    }
    let count = count.max(1e-9);
    sum.iter_mut().for_each(|s| *s /= count);
    sum
}

/// Scales a vector to unit length (a zero vector stays zero).
pub fn normalize(vector: &mut [f32]) {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        vector.iter_mut().for_each(|x| *x /= norm);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_gives_unit_length_and_leaves_zero_alone() {
        let mut v = vec![3.0, 4.0];
        normalize(&mut v);
        assert_eq!(v, vec![0.6, 0.8]);
        let mut zero = vec![0.0; 3];
        normalize(&mut zero);
        assert_eq!(zero, vec![0.0; 3]);
    }

    #[test]
    fn mean_pool_ignores_padding() {
        // One row of width 3 (last token padding), dims 2.
        let data = [1.0, 2.0, 3.0, 4.0, 100.0, 100.0];
        assert_eq!(mean_pool(&data, &[1, 1, 0], 0, 2), vec![2.0, 3.0]);
    }

    #[test]
    fn prefix_is_added_only_when_set() {
        assert!(matches!(prefixed("", "x"), Cow::Borrowed("x")));
        assert_eq!(prefixed("query: ", "x"), "query: x");
    }
}
