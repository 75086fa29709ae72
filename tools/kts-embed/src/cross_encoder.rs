//! The reranking engine: a cross-encoder reads a question and a passage
//! together (one input, `[CLS] question [SEP] passage [SEP]`) and gives the
//! pair one relevance score. Its manifest has `"kind": "reranker"`; kts-query
//! runs it over its best candidates.

use std::path::Path;

use anyhow::{anyhow, bail};
use ort::session::Session;
use tokenizers::{Encoding, Tokenizer};

use crate::embedder::prefixed;
use crate::manifest::{Manifest, ModelKind};
use crate::onnx::{BatchInput, SessionSettings, load_tokenizer, open_session};

/// Pairs per model run: passages are similar in length, so little is padded.
const BATCH: usize = 8;

/// A loaded cross-encoder.
pub struct CrossEncoder {
    manifest: Manifest,
    tokenizer: Tokenizer,
    /// Made at the first scoring, so that a failed question costs no load.
    session: Option<Session>,
    threads: usize,
}

impl CrossEncoder {
    /// Loads reranker `id` from a models folder (`<dir>/<id>.json`).
    pub fn load(models_dir: &Path, id: &str, threads: usize) -> anyhow::Result<CrossEncoder> {
        Self::from_manifest(Manifest::load(models_dir, id)?, threads)
    }

    /// Loads the reranker a manifest file describes; its folder is the models folder.
    pub fn load_manifest(path: &Path, threads: usize) -> anyhow::Result<CrossEncoder> {
        Self::from_manifest(Manifest::load_file(path)?, threads)
    }

    /// Reads the tokenizer and checks the model file is there.
    pub fn from_manifest(manifest: Manifest, threads: usize) -> anyhow::Result<CrossEncoder> {
        manifest.expect_kind(ModelKind::Reranker)?;
        manifest.file(&manifest.model)?;
        let tokenizer = load_tokenizer(&manifest)?;
        Ok(CrossEncoder {
            manifest,
            tokenizer,
            session: None,
            threads: threads.max(1),
        })
    }

    pub fn model_id(&self) -> &str {
        &self.manifest.id
    }

    /// One score per passage, in order: higher is more relevant to the question.
    pub fn score(&mut self, question: &str, passages: &[&str]) -> anyhow::Result<Vec<f32>> {
        let question = prefixed(&self.manifest.query_prefix, question);
        let encodings = passages
            .iter()
            .map(|passage| {
                let passage = prefixed(&self.manifest.document_prefix, passage);
                self.tokenizer
                    .encode((question.as_ref(), passage.as_ref()), true)
                    .map_err(|e| anyhow!("tokenizing: {e}"))
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let mut order: Vec<usize> = (0..encodings.len()).collect();
        order.sort_by_key(|&i| encodings[i].get_ids().len());
        let mut scores = vec![0f32; encodings.len()];
        for group in order.chunks(BATCH) {
            let batch: Vec<&Encoding> = group.iter().map(|&i| &encodings[i]).collect();
            for (&i, score) in group.iter().zip(self.run(&batch)?) {
                scores[i] = score;
            }
        }
        Ok(scores)
    }

    fn run(&mut self, batch: &[&Encoding]) -> anyhow::Result<Vec<f32>> {
        if self.session.is_none() {
            let settings = SessionSettings {
                threads: self.threads,
                spinning: false,
            };
            self.session = Some(open_session(&self.manifest, settings)?);
        }
        let session = self.session.as_mut().expect("loaded above");
        let input = BatchInput::new(batch);
        input.run(session, &self.manifest, |shape, data| {
            let one_per_row = match shape {
                [rows] | [rows, 1] => *rows == input.rows as i64,
                _ => false,
            };
            if !one_per_row || data.len() != input.rows {
                bail!(
                    "model {}: output {:?} has shape {shape:?}, expected [{rows}] or [{rows}, 1] (one score per pair)",
                    self.manifest.id,
                    self.manifest.output,
                    rows = input.rows
                );
            }
            Ok(data.to_vec())
        })
    }
}
