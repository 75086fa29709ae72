//! kts-embed: adds local ONNX sentence embeddings to `kts.chunk/1` records.
//!
//! The engine ([`Embedder`]) is a library API too: kts-query embeds its
//! questions in-process with [`Embedder::load`] and [`Embedder::embed_query`],
//! and reranks its candidates with a [`CrossEncoder`] (a `"kind": "reranker"`
//! manifest).

mod cache;
mod cross_encoder;
mod embedder;
mod input;
mod manifest;
mod onnx;
mod stream;

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use clap::{CommandFactory, Parser};
use kts_cli::{Exit, JsonlReader, JsonlWriter, Messages};
use kts_record::{QueryEmbeddingRecord, schema_id};

pub use cache::{EmbeddingCache, text_key};
pub use cross_encoder::CrossEncoder;
pub use embedder::{Embedder, EmbedderStats, normalize};
pub use manifest::{
    DEFAULT_MODEL, FileSpec, InputNames, Manifest, ModelKind, Pooling, default_models_dir,
    known_models,
};
use stream::ScopeModels;
pub use stream::{CacheChoice, Counts, json_vector};

const ABOUT: &str = "Add local ONNX sentence embeddings to kts.chunk/1 records";

const AFTER_HELP: &str = "\
Reads JSONL on stdin (a record without a `schema` field is taken as a
kts.chunk/1). Each kts.chunk/1 without an embedding of the model (or
with one of another model) gets `embedding` (L2-normalised floats) and `model`
(the model id); every other record passes through unchanged, in order. The
model reads a chunk's text after its document's title (from the kts.doc/1
record ahead of it) and the headings of its `heading_path`, less what the
text starts with. Models
are described by manifests in the project's models/ folder; their files are
fetched once by models/fetch, never at run time. Vectors are cached by text
hash in the scope's .kts/embeddings/<model>.bin (the scope is the `root` of
the kts.doc/1 record ahead of the chunks), so a re-run embeds only new text;
a cache that cannot be written (read-only media, a full disk) is a warning.
When a scope's cache holds more than twice as many vectors as the run used
and the scope's index has chunks, together, it is rewritten with just the
vectors of those texts (a --cache folder, which scopes may share, is not).
Without --model, a scope whose index was built with a model keeps it (read
from DIR/.kts/kts.db); a new scope gets the default model.

Examples:
  kts-crawl docs | kts-convert | kts-chunk | kts-embed | kts-index docs
  kts-embed --query 'how do I reset my password' | jq '.embedding | length'";

#[derive(Parser, Debug)]
#[command(name = "kts-embed", version, about = ABOUT, after_help = AFTER_HELP)]
pub struct Args {
    /// The model: a manifest id in the models folder [default: the model
    /// each scope's index was built with; for a new scope, and --query,
    /// all-minilm-l6-v2-q8].
    #[arg(long, value_name = "ID")]
    pub model: Option<String>,

    /// The models folder (manifests, and cache/ filled by models/fetch)
    /// [default: the project's models/ found from the executable].
    #[arg(long, value_name = "DIR")]
    pub models: Option<PathBuf>,

    /// Threads inside one model run [default: the number of cores].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,

    /// Texts per model run; above 1, texts of similar length are batched
    /// together: faster on several cores, but with a model computing in int8
    /// a text's vector then depends a little on its batch (the activations
    /// are quantised per run; cosine 0.986 at worst, 0.996 typically).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub batch: u16,

    /// Keep the vector cache in DIR/embeddings/, never pruned [default: the
    /// scope's .kts/ folder, from the `root` of the kts.doc/1 records; none
    /// without one].
    #[arg(long, value_name = "DIR", conflicts_with = "no_cache")]
    pub cache: Option<PathBuf>,

    /// Keep no vector cache on disk.
    #[arg(long)]
    pub no_cache: bool,

    /// Print the embedding of TEXT as a search query (one
    /// kts.query_embedding/1 record), and exit.
    #[arg(long, value_name = "TEXT")]
    pub query: Option<String>,

    #[command(flatten)]
    pub reporting: kts_cli::Reporting,
}

/// The clap definition, for man pages and completions.
pub fn command() -> clap::Command {
    Args::command()
}

pub fn run(args: Args) -> anyhow::Result<Exit> {
    let messages = args.reporting.messages("kts-embed");
    let models_dir = match &args.models {
        Some(dir) => dir.clone(),
        None => default_models_dir().context(
            "no models folder found next to the executable: pass --models DIR \
             (the project's models/ folder), after running models/fetch there",
        )?,
    };
    let threads = args.threads.map_or_else(default_threads, usize::from);
    let batch = usize::from(args.batch);
    let model = args.model.as_deref().unwrap_or(DEFAULT_MODEL);
    let embedder = Embedder::load(&models_dir, model, threads)?.with_batch(batch);
    let follow = args.model.is_none().then_some(ScopeModels {
        models_dir,
        threads,
        batch,
    });
    match &args.query {
        Some(query) => print_query(embedder, query),
        None => embed_stream(embedder, follow, &args, &messages),
    }
}

fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// `--query`: one `kts.query_embedding/1` record.
fn print_query(mut embedder: Embedder, query: &str) -> anyhow::Result<Exit> {
    let embedding = embedder.embed_query(query)?;
    let record = QueryEmbeddingRecord {
        schema: schema_id::QUERY_EMBEDDING.into(),
        model: embedder.model_id().into(),
        model_sha256: embedder.manifest().model_sha256().into(),
        dims: embedder.dims(),
        text: query.into(),
        embedding,
    };
    let mut out = JsonlWriter::new();
    out.write(&record)?;
    out.flush()?;
    Ok(Exit::Ok)
}

fn embed_stream(
    embedder: Embedder,
    follow: Option<ScopeModels>,
    args: &Args,
    messages: &Messages,
) -> anyhow::Result<Exit> {
    let choice = match (&args.cache, args.no_cache) {
        (Some(dir), _) => CacheChoice::Fixed(dir.clone()),
        (None, true) => CacheChoice::Off,
        (None, false) => CacheChoice::FromScope,
    };
    let started = Instant::now();
    let mut stream =
        stream::Stream::new(embedder, follow, usize::from(args.batch), choice, messages)?;
    stream.run(JsonlReader::stdin().with_default_schema(schema_id::CHUNK))?;
    if args.reporting.stats {
        messages.info(&summary(
            &stream.counts,
            stream.embedder().stats(),
            started,
            messages,
        ));
    }
    Ok(messages.exit())
}

fn summary(counts: &Counts, model: EmbedderStats, started: Instant, messages: &Messages) -> String {
    let seconds = started.elapsed().as_secs_f64().max(1e-9);
    format!(
        "{} chunks: {} embedded ({} tokens, {} model runs), {} from cache, {} already embedded, \
         {} rejected; {:.3} s, {:.1} embedded/s",
        counts.chunks,
        counts.embedded,
        model.tokens,
        model.runs,
        counts.cached,
        counts.kept,
        messages.failures(),
        seconds,
        counts.embedded as f64 / seconds,
    )
}
