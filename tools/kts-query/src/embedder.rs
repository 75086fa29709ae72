//! Query embeddings: the model the index was built with, loaded only when
//! needed and once per process, however many scopes and threads use it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use anyhow::Context;
use kts_embed::Embedder;
use kts_store::{Meta, ModelMismatch, weights_differ};

/// A loaded model, shared by every searcher that needs it.
#[derive(Clone)]
pub struct SharedModel {
    embedder: Arc<Mutex<Embedder>>,
    dims: usize,
    sha256: Option<String>,
}

impl SharedModel {
    /// The text's embedding (one at a time: the model runs on every core).
    pub fn embed_query(&self, text: &str) -> anyhow::Result<Vec<f32>> {
        lock(&self.embedder).embed_query(text)
    }
}

/// Where the model comes from, and the models this process has loaded
/// (clones share them).
#[derive(Clone)]
pub struct ModelChoice {
    /// The model asked for; `None` means the index's own.
    pub model: Option<String>,
    /// The models folder; `None` means the project's, found from the executable.
    pub models_dir: Option<PathBuf>,
    pub threads: usize,
    /// Only one question will be embedded: load the model for a quick start.
    pub one_shot: bool,
    loaded: Arc<Mutex<HashMap<String, SharedModel>>>,
}

impl ModelChoice {
    pub fn new(
        model: Option<String>,
        models_dir: Option<PathBuf>,
        threads: usize,
        one_shot: bool,
    ) -> Self {
        ModelChoice {
            model,
            models_dir,
            threads,
            one_shot,
            loaded: Arc::default(),
        }
    }

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
            let dims = kts_embed::Manifest::load(&self.models_dir()?, asked)?.dims;
            return Err(mismatch(meta, scope, asked, dims).into());
        }
        Ok(())
    }

    /// The index's model, loaded at the first call for it.
    pub fn load(&self, meta: &Meta, scope: &Path) -> anyhow::Result<SharedModel> {
        self.check(meta, scope)?;
        let id = meta
            .model_id
            .as_deref()
            .context("the index has no embeddings: use --mode bm25")?;
        let model = {
            let mut loaded = lock(&self.loaded);
            match loaded.get(id) {
                Some(model) => model.clone(),
                None => {
                    let model = self.load_model(id)?;
                    loaded.insert(id.to_string(), model.clone());
                    model
                }
            }
        };
        if Some(model.dims) != meta.dims
            || weights_differ(meta.model_sha256.as_deref(), model.sha256.as_deref())
        {
            let mut error = mismatch(meta, scope, id, model.dims);
            error.sha256 = model.sha256.clone();
            return Err(error.into());
        }
        Ok(model)
    }

    fn load_model(&self, id: &str) -> anyhow::Result<SharedModel> {
        let models_dir = self.models_dir()?;
        let embedder = match self.one_shot {
            true => Embedder::load_for_one_question(&models_dir, id, self.threads),
            false => Embedder::load(&models_dir, id, self.threads).map(Embedder::without_spinning),
        }
        .with_context(|| format!("loading model {id}, which the index was built with"))?;
        let sha256 = Some(embedder.manifest().model_sha256())
            .filter(|s| !s.is_empty())
            .map(str::to_string);
        Ok(SharedModel {
            dims: embedder.dims(),
            sha256,
            embedder: Arc::new(Mutex::new(embedder)),
        })
    }
}

/// A poisoned lock only means another request panicked mid-embedding; the
/// model itself holds no state between calls.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
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
