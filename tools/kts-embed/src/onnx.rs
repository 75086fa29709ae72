//! What every ONNX model of a manifest shares: the runtime (loaded once per
//! process), the session, the tokenizer, and a batch of encodings run as the
//! model's int64 inputs. The embedder and the cross-encoder are built on it.

use std::borrow::Cow;
use std::fmt::Display;
use std::path::Path;
use std::sync::Mutex;

use anyhow::{Context, anyhow, bail};
use ort::environment::Environment;
use ort::session::{Session, SessionInputValue};
use ort::value::Tensor;
use tokenizers::{Encoding, Tokenizer, TruncationParams};

use crate::manifest::{Manifest, runtime_library};

/// ONNX Runtime allows one environment per process: it is made once and shared.
static ENVIRONMENT: Mutex<Option<Environment>> = Mutex::new(None);

/// ort's errors do not all convert into anyhow (some carry a builder): keep the message.
fn ort_err<T, E: Display>(result: Result<T, E>) -> anyhow::Result<T> {
    result.map_err(|e| anyhow!("onnxruntime: {e}"))
}

fn environment(models_dir: &Path) -> anyhow::Result<Environment> {
    let mut shared = ENVIRONMENT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(environment) = shared.as_ref() {
        return Ok(environment.clone());
    }
    let library = runtime_library(models_dir)?;
    let builder = ort::init_from(&library)
        .map_err(|e| anyhow!("loading ONNX Runtime from {}: {e}", library.display()))?;
    let environment = ort_err(builder.with_name("kts-embed").with_telemetry(false).build())?;
    *shared = Some(environment.clone());
    Ok(environment)
}

/// How a session runs.
#[derive(Clone, Copy, Debug)]
pub struct SessionSettings {
    /// Intra-op threads.
    pub threads: usize,
    /// Whether the threads spin, waiting for the next run, once a run ends.
    pub spinning: bool,
}

/// Loads the manifest's ONNX model, checking it has the tensors the manifest names.
/// Every session is prepared alike (the graph optimised, the weights packed
/// the way the kernels read them), whatever it is for: both change the
/// arithmetic (an unoptimised graph moves a query's cosines by up to 0.004),
/// and a question must get one vector, in a one-question kts-query as in
/// kts-query --batch or kts-mcp, and the vector its text gets as a chunk.
pub fn open_session(manifest: &Manifest, settings: SessionSettings) -> anyhow::Result<Session> {
    let model_path = manifest.file(&manifest.model)?;
    let environment = environment(&manifest.models_dir)?;
    let builder = ort_err(Session::builder(&environment))?;
    let mut builder = ort_err(builder.with_intra_threads(settings.threads.max(1)))?;
    // ONNX Runtime 1.31's CPU kernel for SkipLayerNormalization, which this
    // fusion makes of an Add and a LayerNormalization, is several times
    // slower than the two (2.6 against 0.3 ms at 8 × 160 × 384 on one
    // thread): without it a BERT model's run is 15-20% shorter.
    builder = ort_err(builder.with_disabled_optimizers("SkipLayerNormFusion"))?;
    if !settings.spinning {
        builder = ort_err(builder.with_intra_op_spinning(false))?;
    }
    let session = ort_err(builder.commit_from_file(&model_path))
        .with_context(|| format!("loading {}", model_path.display()))?;
    check_tensor_names(manifest, &session)?;
    Ok(session)
}

/// The manifest's tokenizer with its truncation and no padding (the batch pads).
pub fn load_tokenizer(manifest: &Manifest) -> anyhow::Result<Tokenizer> {
    let path = manifest.file(&manifest.tokenizer)?;
    let mut tokenizer = Tokenizer::from_file(&path)
        .map_err(|e| anyhow!("reading tokenizer {}: {e}", path.display()))?;
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: manifest.max_tokens,
            ..TruncationParams::default()
        }))
        .map_err(|e| anyhow!("tokenizer {}: {e}", path.display()))?;
    tokenizer.with_padding(None);
    Ok(tokenizer)
}

/// Fails when the manifest names tensors the model does not have.
fn check_tensor_names(manifest: &Manifest, session: &Session) -> anyhow::Result<()> {
    let inputs: Vec<&str> = session.inputs().iter().map(|i| i.name()).collect();
    let outputs: Vec<&str> = session.outputs().iter().map(|o| o.name()).collect();
    let names = &manifest.inputs;
    let wanted = [
        Some(&names.input_ids),
        Some(&names.attention_mask),
        names.token_type_ids.as_ref(),
    ];
    for name in wanted.into_iter().flatten() {
        if !inputs.contains(&name.as_str()) {
            bail!(
                "model {}: no input tensor {name:?} (it has {inputs:?})",
                manifest.id
            );
        }
    }
    if !outputs.contains(&manifest.output.as_str()) {
        bail!(
            "model {}: no output tensor {:?} (it has {outputs:?})",
            manifest.id,
            manifest.output
        );
    }
    Ok(())
}

/// A batch as the model's int64 inputs, row-major `[rows, width]`.
pub struct BatchInput {
    pub rows: usize,
    pub width: usize,
    pub ids: Vec<i64>,
    pub mask: Vec<i64>,
    pub type_ids: Vec<i64>,
}

impl BatchInput {
    pub fn new(batch: &[&Encoding]) -> BatchInput {
        let rows = batch.len();
        let width = batch
            .iter()
            .map(|e| e.get_ids().len())
            .max()
            .unwrap_or(0)
            .max(1);
        let mut input = BatchInput {
            rows,
            width,
            ids: vec![0; rows * width],
            mask: vec![0; rows * width],
            type_ids: vec![0; rows * width],
        };
        for (row, encoding) in batch.iter().enumerate() {
            let at = row * width;
            for (t, (&id, &type_id)) in encoding
                .get_ids()
                .iter()
                .zip(encoding.get_type_ids())
                .enumerate()
            {
                input.ids[at + t] = i64::from(id);
                input.type_ids[at + t] = i64::from(type_id);
                input.mask[at + t] = 1;
            }
        }
        input
    }

    fn tensor(&self, data: &[i64]) -> anyhow::Result<SessionInputValue<'static>> {
        let tensor = ort_err(Tensor::from_array(([self.rows, self.width], data.to_vec())))?;
        Ok(tensor.into())
    }

    /// Runs the model on this batch and hands the manifest's output (its
    /// shape and data) to `read`.
    pub fn run<R>(
        &self,
        session: &mut Session,
        manifest: &Manifest,
        read: impl FnOnce(&[i64], &[f32]) -> anyhow::Result<R>,
    ) -> anyhow::Result<R> {
        let names = &manifest.inputs;
        let mut inputs: Vec<(Cow<'_, str>, SessionInputValue<'_>)> = vec![
            (names.input_ids.as_str().into(), self.tensor(&self.ids)?),
            (
                names.attention_mask.as_str().into(),
                self.tensor(&self.mask)?,
            ),
        ];
        if let Some(name) = &names.token_type_ids {
            inputs.push((name.as_str().into(), self.tensor(&self.type_ids)?));
        }
        let outputs = ort_err(session.run(inputs))?;
        let output = outputs
            .get(&manifest.output)
            .with_context(|| format!("the model has no output {:?}", manifest.output))?;
        let (shape, data) = ort_err(output.try_extract_tensor::<f32>())?;
        read(shape, data)
    }
}
