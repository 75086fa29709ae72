//! kts-query: hybrid retrieval over a scope's index — BM25 (FTS5) and
//! vector search (sqlite-vec), fused with Reciprocal Rank Fusion.

mod context;
mod embedder;
mod fuse;
mod graph;
mod output;

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{CommandFactory, Parser, ValueEnum};
use kts_cli::{Exit, JsonlWriter, Messages};
use kts_record::{ErrorCode, HitRecord, Signal};
use kts_store::{Filters, Meta, Scored, Store};
use serde::Deserialize;

pub use embedder::{ModelChoice, QueryEmbedder, mismatch};
pub use fuse::{Fused, RRF_K, fuse, top_k};
pub use output::{BatchHit, scope_slug, write_text};

use graph::{QueryGraph, graph_list};
use petgraph::stable_graph::NodeIndex;

const ABOUT: &str = "Search a scope's index: BM25 and vector retrieval fused by RRF";

const AFTER_HELP: &str = "\
Writes one kts.hit/1 record per result, best first: the chunk's text and its
citation (path, heading path, character offsets, page or slide), the fused
score, and each retriever's rank and score under `signals`. Hybrid mode runs
BM25 (FTS5) and vector search (the question embedded with the model the index
was built with) and fuses their top --candidates with Reciprocal Rank Fusion
(k = 60); only the best chunk of each document is kept unless --all-chunks.
On an index without embeddings, hybrid falls back to BM25 with a warning.

With --graph (and a graph built by kts-graph), the known entities the
question names (error codes, systems, terms, acronyms, ...) start a walk over
the graph, and the documents it reaches are fused as one more list (`graph`
under `signals`, weight --graph-weight): among the chunks the retrievers
found, those of connected documents rank higher. It is off by default: on
the evaluation data (SciFact) it did not raise nDCG@10.

--context prints, instead of records, a Markdown context for an LLM within
--budget tokens: \"## Knowledge Graph Context\" (the question's entities,
their definitions, strongest neighbours and sources) when the question names
any, then \"## Relevant Passages\", each cited.

--batch reads {\"id\": \"q1\", \"text\": \"...\"} lines on stdin (optionally
with a precomputed \"embedding\" and its \"model\") and adds `query_id` to
each hit; the model is loaded once.

Examples:
  kts-crawl docs | kts-convert | kts-chunk | kts-embed | kts-index docs
  kts-query docs 'how do I fix a corrupt file' --format text
  kts-graph docs && kts-query docs 'what is a kts.chunk/1 record' --context --budget 600
  echo '{\"id\": \"q1\", \"text\": \"corrupt file\"}' | kts-query docs --batch";

/// The graph list's default weight in RRF: the best of those measured on the
/// eval data (0.05 to 1; hybrid nDCG@10 0.7221 against 0.7217 without).
pub const GRAPH_WEIGHT: f64 = 0.1;

/// Documents have several chunks: fetching this many chunks per wanted
/// result leaves enough distinct documents after deduplication.
const CHUNKS_PER_RESULT: usize = 4;

/// Which retrievers run.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Bm25,
    Vector,
    Hybrid,
}

/// How results are written.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    /// kts.hit/1 records, one per line.
    Jsonl,
    /// Rank, score, citation and a snippet, for humans.
    Text,
}

#[derive(Parser, Debug)]
#[command(name = "kts-query", version, about = ABOUT, after_help = AFTER_HELP)]
pub struct Args {
    /// The scope folder whose index (DIR/.kts/kts.db) is searched.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,

    /// The question (or keywords).
    #[arg(value_name = "QUESTION", required_unless_present = "batch")]
    pub question: Option<String>,

    /// Read queries as JSON lines on stdin: {"id": ..., "text": ...}.
    #[arg(long, conflicts_with = "question")]
    pub batch: bool,

    #[arg(long, value_enum, default_value_t = Mode::Hybrid)]
    pub mode: Mode,

    /// Number of results.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top_k: usize,

    /// Chunks each retriever contributes before fusion; at least 4 × --top-k,
    /// so that enough distinct documents remain after one chunk per document.
    #[arg(long, value_name = "N", default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub candidates: u32,

    /// Keep every matching chunk, not only the best one of each document.
    #[arg(long)]
    pub all_chunks: bool,

    /// Only documents of this type (POLICY, SOP, GUIDE, ...).
    #[arg(long, value_name = "TYPE")]
    pub doc_type: Option<String>,

    #[arg(long, value_enum, default_value_t = OutputFormat::Jsonl)]
    pub format: OutputFormat,

    /// Also rank by the scope's knowledge graph (built by kts-graph).
    #[arg(long)]
    pub graph: bool,

    /// The graph list's weight in the fusion (the retrievers' lists weigh 1).
    #[arg(long, value_name = "W", default_value_t = GRAPH_WEIGHT, requires = "graph")]
    pub graph_weight: f64,

    /// Print a Markdown context for an LLM (graph facts, then cited passages) instead of records.
    #[arg(long, conflicts_with = "batch")]
    pub context: bool,

    /// The --context's size, in tokens (estimated as characters / 4).
    #[arg(
        long,
        value_name = "TOKENS",
        default_value_t = 2000,
        requires = "context"
    )]
    pub budget: usize,

    /// The embedding model [default: the one the index was built with];
    /// another one is refused.
    #[arg(long, value_name = "ID")]
    pub model: Option<String>,

    /// The models folder (manifests, and cache/ filled by models/fetch)
    /// [default: the project's models/ found from the executable].
    #[arg(long, value_name = "DIR")]
    pub models: Option<PathBuf>,

    /// Threads for embedding the question [default: the number of cores].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,

    /// Do not print warnings and per-query errors (the exit status still tells).
    #[arg(long, short)]
    pub quiet: bool,
}

/// The clap definition, for man pages and completions.
pub fn command() -> clap::Command {
    Args::command()
}

pub fn run(args: Args) -> anyhow::Result<Exit> {
    let messages = Messages::new("kts-query").quiet(args.quiet);
    let mut searcher = Searcher::open(&args, &messages)?;
    let mut out = JsonlWriter::new();
    match &args.question {
        Some(question) if args.context => {
            let hits = searcher.search(question, None)?;
            let seeds = searcher.seeds(question)?;
            let graph = searcher.graph()?.map(|g| (g, seeds.as_slice()));
            let text = context::markdown(graph, &hits, args.budget);
            std::io::stdout().lock().write_all(text.as_bytes())?;
        }
        Some(question) => {
            let hits = searcher.search(question, None)?;
            emit(&mut out, args.format, &hits, None)?;
        }
        None => run_batch(&mut searcher, &mut out, args.format, &messages)?,
    }
    out.flush()?;
    Ok(messages.exit())
}

/// One `--batch` input line.
#[derive(Deserialize)]
struct BatchQuery {
    id: serde_json::Value,
    text: String,
    #[serde(default)]
    embedding: Option<Vec<f32>>,
    #[serde(default)]
    model: Option<String>,
}

fn run_batch(
    searcher: &mut Searcher,
    out: &mut JsonlWriter,
    format: OutputFormat,
    messages: &Messages,
) -> anyhow::Result<()> {
    let mut lines = std::io::stdin().lines();
    let mut number = 0;
    while let Some(line) = lines.next().transpose()? {
        number += 1;
        if line.trim().is_empty() {
            continue;
        }
        let at = format!("stdin:{number}");
        let query: BatchQuery = match serde_json::from_str(&line) {
            Ok(query) => query,
            Err(e) => {
                messages.reject(&at, ErrorCode::BadRecord, &e.to_string());
                continue;
            }
        };
        let id = match &query.id {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let given = query.embedding.map(|e| (e, query.model));
        let hits = searcher.search(&query.text, given)?;
        emit(out, format, &hits, Some(&id))?;
    }
    Ok(())
}

fn emit(
    out: &mut JsonlWriter,
    format: OutputFormat,
    hits: &[HitRecord],
    query_id: Option<&str>,
) -> anyhow::Result<()> {
    match format {
        OutputFormat::Jsonl => {
            for hit in hits {
                match query_id {
                    Some(query_id) => out.write(&BatchHit { hit, query_id })?,
                    None => out.write(hit)?,
                }
            }
        }
        OutputFormat::Text => {
            let mut text = Vec::new();
            if let Some(id) = query_id {
                writeln!(text, "query {id}")?;
            }
            for hit in hits {
                write_text(&mut text, hit)?;
            }
            if hits.is_empty() {
                writeln!(text, "no results")?;
            }
            std::io::stdout().lock().write_all(&text)?;
        }
    }
    Ok(())
}

/// An open index and, once needed, the model to embed questions with.
pub struct Searcher {
    store: Store,
    meta: Meta,
    scope: String,
    mode: Mode,
    filters: Filters,
    candidates: usize,
    top_k: usize,
    all_chunks: bool,
    model: ModelChoice,
    embedder: Option<Box<dyn QueryEmbedder>>,
    /// A second connection, for vector search beside BM25 in hybrid mode.
    vector_store: Option<Store>,
    /// Whether the graph joins the fusion; the graph once loaded (`None`
    /// when the scope has none).
    rank_with_graph: bool,
    graph_weight: f64,
    graph: std::cell::OnceCell<Option<QueryGraph>>,
}

impl Searcher {
    /// Opens the index; refuses a model other than the index's before loading anything.
    pub fn open(args: &Args, messages: &Messages) -> anyhow::Result<Searcher> {
        let store = Store::open_read(&args.dir)?;
        let meta = store.meta()?;
        let model = ModelChoice {
            model: args.model.clone(),
            models_dir: args.models.clone(),
            threads: args.threads.map_or_else(default_threads, usize::from),
            one_shot: !args.batch,
        };
        model.check(&meta, &args.dir)?;
        let mode = effective_mode(args.mode, store.has_vectors()?, messages)?;
        let mut searcher = Searcher {
            scope: scope_of(&args.dir),
            store,
            meta,
            mode,
            filters: Filters {
                doc_type: args.doc_type.as_ref().map(|t| t.to_uppercase()),
            },
            candidates: (args.candidates as usize).max(args.top_k * CHUNKS_PER_RESULT),
            top_k: args.top_k,
            all_chunks: args.all_chunks,
            model,
            embedder: None,
            vector_store: match mode {
                Mode::Hybrid => Some(Store::open_read(&args.dir)?),
                _ => None,
            },
            rank_with_graph: args.graph,
            graph_weight: args.graph_weight,
            graph: std::cell::OnceCell::new(),
        };
        if mode != Mode::Bm25 && !args.batch {
            searcher.embedder()?;
        }
        Ok(searcher)
    }

    fn embedder(&mut self) -> anyhow::Result<&mut Box<dyn QueryEmbedder>> {
        if self.embedder.is_none() {
            let scope = self.store.scope().to_path_buf();
            self.embedder = Some(self.model.load(&self.meta, &scope)?);
        }
        Ok(self.embedder.as_mut().expect("loaded above"))
    }

    /// The query's embedding: the one given (checked against the index's
    /// model), else the question embedded by the model.
    fn query_vector(
        &mut self,
        text: &str,
        given: Option<(Vec<f32>, Option<String>)>,
    ) -> anyhow::Result<Vec<f32>> {
        match given {
            Some((vector, model)) => {
                let model = model.unwrap_or_else(|| "unknown".into());
                if Some(&model) != self.meta.model_id.as_ref()
                    || Some(vector.len()) != self.meta.dims
                {
                    return Err(
                        mismatch(&self.meta, self.store.scope(), &model, vector.len()).into(),
                    );
                }
                Ok(vector)
            }
            None => self.embedder()?.embed_query(text),
        }
    }

    /// The scope's graph, loaded at first use (`None` when kts-graph built none).
    fn graph(&self) -> anyhow::Result<Option<&QueryGraph>> {
        if self.graph.get().is_none() {
            let loaded = QueryGraph::load(&self.store, self.store.scope())?;
            let _ = self.graph.set(loaded);
        }
        Ok(self.graph.get().and_then(Option::as_ref))
    }

    /// The scope's graph entities the question names (none without a graph).
    pub fn seeds(&self, text: &str) -> anyhow::Result<Vec<NodeIndex>> {
        Ok(self.graph()?.map(|g| g.seeds(text)).unwrap_or_default())
    }

    /// The results for one question, best first.
    pub fn search(
        &mut self,
        text: &str,
        given: Option<(Vec<f32>, Option<String>)>,
    ) -> anyhow::Result<Vec<HitRecord>> {
        let vector = match self.mode {
            Mode::Bm25 => None,
            _ => Some(self.query_vector(text, given)?),
        };
        let mut lists = self.retrieve(text, vector.as_deref())?;
        // Chunk → document, asked of the store once per chunk.
        let mut docs: HashMap<i64, Option<String>> = HashMap::new();
        let store = &self.store;
        let mut doc_of = |rowid: i64| -> anyhow::Result<Option<String>> {
            if let Some(doc) = docs.get(&rowid) {
                return Ok(doc.clone());
            }
            let doc = store.doc_id_of(rowid)?;
            docs.insert(rowid, doc.clone());
            Ok(doc)
        };
        if self.rank_with_graph {
            let seeds = self.seeds(text)?;
            if let (Some(graph), false) = (self.graph()?, seeds.is_empty()) {
                let scores = graph.document_scores(&graph.reach(&seeds));
                let list = graph_list(&lists, &scores, &mut doc_of)?;
                if !list.is_empty() {
                    lists.push(("graph", list));
                }
            }
        }
        let graph_weight = self.graph_weight;
        let weight_of = |name: &str| if name == "graph" { graph_weight } else { 1.0 };
        let kept = top_k(fuse(&lists, weight_of), self.top_k, self.all_chunks, doc_of)?;
        self.hit_records(&kept)
    }

    /// Each retriever's candidates; in hybrid mode BM25 and vector search
    /// run at the same time, on two connections.
    fn retrieve(
        &mut self,
        text: &str,
        vector: Option<&[f32]>,
    ) -> anyhow::Result<Vec<(&'static str, Vec<Scored>)>> {
        let (k, filters) = (self.candidates, &self.filters);
        match (self.mode, vector, self.vector_store.as_mut()) {
            (Mode::Hybrid, Some(vector), Some(vector_store)) => {
                let store = &self.store;
                std::thread::scope(|s| {
                    let near = s.spawn(move || vector_store.search_vector(vector, k, filters));
                    let bm25 = store.search_bm25(text, k, filters)?;
                    let near = near.join().expect("vector search panicked")?;
                    Ok(vec![("bm25", bm25), ("vector", near)])
                })
            }
            (Mode::Vector, Some(vector), _) => Ok(vec![(
                "vector",
                self.store.search_vector(vector, k, filters)?,
            )]),
            _ => Ok(vec![("bm25", self.store.search_bm25(text, k, filters)?)]),
        }
    }

    fn hit_records(&self, kept: &[Fused]) -> anyhow::Result<Vec<HitRecord>> {
        let rowids: Vec<i64> = kept.iter().map(|f| f.rowid).collect();
        let hits = self.store.fetch_hits(&rowids)?;
        Ok(kept
            .iter()
            .zip(hits)
            .enumerate()
            .map(|(i, (fused, hit))| HitRecord {
                schema: kts_record::schema_id::HIT.into(),
                rank: i + 1,
                score: fused.score,
                doc_id: hit.doc_id,
                chunk_id: hit.chunk_id,
                scope: self.scope.clone(),
                path: hit.path,
                title: hit.title,
                doc_type: hit.doc_type,
                text: hit.text,
                heading_path: hit.heading_path,
                start: hit.start,
                end: hit.end,
                page: hit.page,
                slide: hit.slide,
                signals: signals(fused),
            })
            .collect())
    }
}

fn signals(fused: &Fused) -> std::collections::BTreeMap<String, Signal> {
    fused
        .signals
        .iter()
        .map(|(name, scored)| {
            let rank = (*name != "rrf").then_some(scored.rank);
            (
                name.to_string(),
                Signal {
                    rank,
                    score: scored.score,
                },
            )
        })
        .collect()
}

/// Hybrid on an index without embeddings is BM25, with a warning; vector is an error.
fn effective_mode(mode: Mode, has_vectors: bool, messages: &Messages) -> anyhow::Result<Mode> {
    match (mode, has_vectors) {
        (Mode::Hybrid, false) => {
            messages.warn("the index has no embeddings: searching with BM25 only");
            Ok(Mode::Bm25)
        }
        (Mode::Vector, false) => anyhow::bail!(
            "the index has no embeddings: run kts-embed before kts-index, or use --mode bm25"
        ),
        _ => Ok(mode),
    }
}

fn scope_of(dir: &Path) -> String {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    dir.file_name()
        .map(|n| scope_slug(&n.to_string_lossy()))
        .unwrap_or_default()
}

fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}
