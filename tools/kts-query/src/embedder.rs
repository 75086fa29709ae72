//! Query embeddings: the model the index was built with, loaded only when needed.

use std::path::{Path, PathBuf};

use anyhow::Context;
use kts_store::{Meta, ModelMismatch, weights_differ};

/// What vector search needs from an embedding model.
pub trait QueryEmbedder {
    fn model_id(&self) -> &str;
    fn dims(&self) -> usize;
    fn embed_query(&mut self, text: &str) -> anyhow::Result<Vec<f32>>;
}

impl QueryEmbedder for kts_embed::Embedder {
    fn model_id(&self) -> &str {
        kts_embed::Embedder::model_id(self)
    }
    fn dims(&self) -> usize {
        kts_embed::Embedder::dims(self)
    }
    fn embed_query(&mut self, text: &str) -> anyhow::Result<Vec<f32>> {
        kts_embed::Embedder::embed_query(self, text)
    }
}

/// Where the model comes from.
#[derive(Clone, Debug)]
pub struct ModelChoice {
    /// The model asked for; `None` means the index's own.
    pub model: Option<String>,
    /// The models folder; `None` means the project's, found from the executable.
    pub models_dir: Option<PathBuf>,
    pub threads: usize,
    /// Only one question will be embedded: load the model for a quick start.
    pub one_shot: bool,
}

impl ModelChoice {
    fn models_dir(&self) -> anyhow::Result<PathBuf> {
        match &self.models_dir {
            Some(dir) => Ok(dir.clone()),
            None => kts_embed::default_models_dir().context(
                "no models folder found next to the executable: pass --models DIR \
                 (the project's models/ folder), after running models/fetch there",
            ),
        }
    }

    /// Refuses a model other than the index's, before anything is loaded.
    pub fn check(&self, meta: &Meta, scope: &Path) -> anyhow::Result<()> {
        let (Some(store_model), Some(asked)) = (&meta.model_id, &self.model) else {
            return Ok(());
        };
        if store_model != asked {
            let dims = kts_embed::Manifest::load(&self.models_dir()?, asked)
                .map(|m| m.dims)
                .unwrap_or(0);
            return Err(mismatch(meta, scope, asked, dims).into());
        }
        Ok(())
    }

    /// Loads the index's model.
    pub fn load(&self, meta: &Meta, scope: &Path) -> anyhow::Result<Box<dyn QueryEmbedder>> {
        self.check(meta, scope)?;
        let id = meta
            .model_id
            .as_deref()
            .context("the index has no embeddings: use --mode bm25")?;
        let mut embedder = kts_embed::Embedder::load(&self.models_dir()?, id, self.threads)
            .with_context(|| format!("loading model {id}, which the index was built with"))?;
        if self.one_shot {
            embedder = embedder.with_quick_start();
        }
        let sha256 = Some(embedder.manifest().model_sha256()).filter(|s| !s.is_empty());
        if Some(embedder.dims()) != meta.dims
            || weights_differ(meta.model_sha256.as_deref(), sha256)
        {
            let mut error = mismatch(meta, scope, id, embedder.dims());
            error.sha256 = sha256.map(str::to_string);
            return Err(error.into());
        }
        Ok(Box::new(embedder))
    }
}

/// The error for a query embedded with another model than the index's.
pub fn mismatch(meta: &Meta, scope: &Path, model: &str, dims: usize) -> ModelMismatch {
    ModelMismatch {
        store_model: meta.model_id.clone().unwrap_or_default(),
        store_dims: meta.dims.unwrap_or(0),
        store_sha256: meta.model_sha256.clone(),
        model: model.to_string(),
        dims,
        sha256: None,
        scope: scope.display().to_string(),
    }
}
