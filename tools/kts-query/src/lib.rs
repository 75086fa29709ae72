//! kts-query: hybrid retrieval over a scope's index — BM25 (FTS5) and
//! vector search (sqlite-vec), fused with Reciprocal Rank Fusion.

mod context;
mod embedder;
pub mod evidence;
pub mod federation;
mod graph;
mod ledger;
mod output;
pub mod plan;
pub mod rank;
pub mod steps;
mod words;

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{CommandFactory, Parser, ValueEnum};
use kts_cli::{Exit, JsonlWriter, Messages};
use kts_record::{ErrorCode, HitRecord, PlanNote, PlanRecord, PlannedQuery, Signal};
use kts_store::{Filters, Meta, Scored, Store};
use serde::Deserialize;

pub use embedder::{ModelChoice, QueryEmbedder, mismatch};
pub use rank::fuse::{Fused, RRF_K, fuse, top_k};
pub use rank::signals::{WEIGHTS, Weights};
pub use steps::{Step, Steps};

use rank::confidence::{answer_confidence, confidence, features as confidence_features};

pub use kts_store::scope_slug;
pub use output::{BatchHit, write_text};
use plan::lexicon::{Lexicon, QueryConfig};
use plan::{Plan, Planner, Role, SubQuery};

use graph::{QueryGraph, graph_list};
use petgraph::stable_graph::NodeIndex;

const ABOUT: &str =
    "Search a scope's index: a query pipeline, BM25 and vector retrieval fused by RRF, confidence";

const AFTER_HELP: &str = "\
Writes one kts.hit/1 record per result, best first: the chunk's text and its
citation (path, heading path, character offsets, page or slide), the fused
score, and each retriever's rank and score under `signals`. Hybrid mode runs
BM25 (FTS5) and vector search (the question embedded with the model the index
was built with) and fuses their top --candidates with Reciprocal Rank Fusion
(k = 60); only the best chunk of each document is kept unless --all-chunks.
On an index without embeddings, hybrid falls back to BM25 with a warning.

Before retrieval the question goes through the query pipeline's steps:
filters (intent words → doc types; error codes and systems the scope knows →
their documents; fewer than --min-filtered found → the unfiltered search
follows), decompose (a multi-part question searched part by part), signals
(after fusion, score × (1 + Σ weight × signal); --weight NAME=VALUE), and,
off by default, acronyms, synonyms, step-back and graph. --with/--without
switch them; --explain writes first a kts.plan/1 record of what each did.
Each hit has a confidence (the probability it is relevant);
--min-confidence P drops those below P. --ledger appends a kts.ledger/1
record per query to DIR/.kts/ledger.jsonl.

--context prints, instead of records, a Markdown context for an LLM within
--budget tokens: \"## Knowledge Graph Context\" (the question's entities,
their definitions, strongest neighbours and sources) when the question names
any, then \"## Relevant Passages\", each cited.

DIR may be a knowledge root, a folder whose sub-folders are scopes (slugs
from their names: lowercase, spaces and hyphens to _). \"/slug question\" or
--scope SLUG asks that scope only, \"/slug /doctype question\" also filters
by doc type; a question naming every word of a scope's slug goes to it;
otherwise, when the root has a catalog (kts-catalog ROOT), to the scopes the
catalog matches with at least half the best match's score; else to every
scope. All in parallel; more than --max-scopes: exit 2. Hits are merged by
RRF and name their scope (in text, before the path); a scope that fails is
skipped with a warning. --list-scopes lists the scopes, --count-by-scope
counts the documents of each holding every word of the question.

--batch reads {\"id\": \"q1\", \"text\": \"...\"} lines on stdin (optionally
with a precomputed \"embedding\" and its \"model\") and adds `query_id` to
each hit; the model is loaded once. On a knowledge root each question is
routed on its own; one that cannot be (an unknown scope, too broad) is
reported and fails alone.

--evidence ANSWER (a Markdown file, or - for stdin) checks an answer against
the scope instead: each sentence of 4 words or more (outside headings, code
and tables; list markers and citations like [1] removed) is a claim, searched
as its own query. A chunk's support is the mean of its cosine to the claim and
the share of the claim's words it contains (names count twice), and zero when
it lacks a number the claim states; a claim is supported at 0.6. One
kts.evidence/1 record per claim (supported, support, citations), then a
summary (coverage, unsupported claims). Below --min-coverage (default 0.5),
the unsupported claims are searched once more with the question and their own
words (`retried`, `retry_query`); still below, a low-confidence warning goes
to stderr. The exit status stays 0.

Examples:
  kts-crawl docs | kts-convert | kts-chunk | kts-embed | kts-index docs
  kts-query docs 'how do I fix a corrupt file' --format text
  kts-graph docs && kts-query docs 'what is a kts.chunk/1 record' --context --budget 600
  kts-query docs 'how do I fix error E-5?' --with acronyms --explain --format text
  echo '{\"id\": \"q1\", \"text\": \"corrupt file\"}' | kts-query docs --batch
  echo 'kts-index writes the index.' | kts-query docs 'what does kts-index do' --evidence -";

/// Default of `--min-filtered`.
pub const MIN_FILTERED: usize = 3;

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

#[derive(Parser, Debug, Clone)]
#[command(name = "kts-query", version, about = ABOUT, after_help = AFTER_HELP)]
pub struct Args {
    /// The scope folder whose index (DIR/.kts/kts.db) is searched, or a
    /// knowledge root: a folder whose sub-folders are scopes.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,

    /// The question (or keywords).
    #[arg(value_name = "QUESTION", required_unless_present_any = ["batch", "list_scopes"])]
    pub question: Option<String>,

    /// In a knowledge root: list its scopes (kts.scope/1 records, from its
    /// catalog when it has one).
    #[arg(long, conflicts_with_all = ["question", "batch"])]
    pub list_scopes: bool,

    /// In a knowledge root: ask this scope (by slug; repeatable).
    #[arg(long, value_name = "SLUG")]
    pub scope: Vec<String>,

    /// In a knowledge root: instead of hits, one kts.scope_count/1 record per
    /// scope whose documents hold every word of the question (in how many
    /// scopes, and where).
    #[arg(long, conflicts_with_all = ["batch", "context", "evidence"])]
    pub count_by_scope: bool,

    /// In a knowledge root: most scopes a question may fan out to.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub max_scopes: usize,

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

    /// Also rank by the scope's knowledge graph (built by kts-graph); the same as --with graph.
    #[arg(long)]
    pub graph: bool,

    /// Steps of the query pipeline to run besides the default ones.
    #[arg(long, value_name = "STEP", value_enum, value_delimiter = ',')]
    pub with: Vec<Step>,

    /// Steps of the query pipeline not to run.
    #[arg(long, value_name = "STEP", value_enum, value_delimiter = ',')]
    pub without: Vec<Step>,

    /// Override a ranking weight (repeatable); `--explain` lists them.
    #[arg(long = "weight", value_name = "NAME=VALUE")]
    pub weights: Vec<String>,

    /// A filtered search returning fewer documents than this is joined by the unfiltered one.
    #[arg(long, value_name = "N", default_value_t = MIN_FILTERED)]
    pub min_filtered: usize,

    /// Write first a kts.plan/1 record: what each step of the pipeline did.
    #[arg(long)]
    pub explain: bool,

    /// Leave out hits whose confidence is below this; with none left, say so
    /// on stderr (the answer abstains).
    #[arg(long, value_name = "P", value_parser = probability)]
    pub min_confidence: Option<f64>,

    /// Append a kts.ledger/1 record per query to DIR/.kts/ledger.jsonl.
    #[arg(long)]
    pub ledger: bool,

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

    /// Check an answer (a Markdown file, or - for stdin) against the scope:
    /// kts.evidence/1 records, one per claim, then a summary.
    #[arg(long, value_name = "ANSWER", conflicts_with_all = ["batch", "context"])]
    pub evidence: Option<PathBuf>,

    /// With --evidence: the share of supported claims below which the
    /// unsupported claims are searched again, and the answer flagged.
    #[arg(
        long,
        value_name = "RATIO",
        default_value_t = evidence::MIN_COVERAGE,
        value_parser = evidence::parse_ratio,
        requires = "evidence"
    )]
    pub min_coverage: f64,
}

/// The clap definition, for man pages and completions.
pub fn command() -> clap::Command {
    Args::command()
}

pub fn run(args: Args) -> anyhow::Result<Exit> {
    let messages = Messages::new("kts-query").quiet(args.quiet);
    let mut out = JsonlWriter::new();
    if federation::is_root(&args.dir) {
        federation::run(&args, &messages, &mut out)?;
        out.flush()?;
        return Ok(messages.exit());
    }
    if args.list_scopes || args.count_by_scope {
        anyhow::bail!(
            "{} is not a knowledge root (a folder whose sub-folders are indexed scopes)",
            args.dir.display()
        );
    }
    let mut searcher = Searcher::open(&args, &messages)?;
    match &args.question {
        Some(question) if args.evidence.is_some() => {
            evidence::run(&mut searcher, question, &args, &messages, &mut out)?;
        }
        Some(question) if args.context => {
            let hits = answer(&mut searcher, &args, &messages, &mut out, question, None)?;
            let seeds = searcher.seeds(question)?;
            let graph = searcher.graph()?.map(|g| (g, seeds.as_slice()));
            let text = context::markdown(graph, &hits, args.budget);
            std::io::stdout().lock().write_all(text.as_bytes())?;
        }
        Some(question) => {
            let hits = answer(&mut searcher, &args, &messages, &mut out, question, None)?;
            emit(&mut out, args.format, &hits, None, false)?;
        }
        None => run_batch(&mut searcher, &mut out, &args, &messages)?,
    }
    out.flush()?;
    Ok(messages.exit())
}

/// One question's hits, after `--min-confidence`; writes the plan first with
/// `--explain` and appends to the ledger with `--ledger`.
fn answer(
    searcher: &mut Searcher,
    args: &Args,
    messages: &Messages,
    out: &mut JsonlWriter,
    question: &str,
    given: Option<(Vec<f32>, Option<String>)>,
) -> anyhow::Result<Vec<HitRecord>> {
    let (mut hits, plan) = searcher.search_explained(question, given)?;
    let best = answer_confidence(&hits.iter().filter_map(|h| h.confidence).collect::<Vec<_>>());
    let mut abstained = false;
    if let Some(min) = args.min_confidence {
        hits.retain(|h| h.confidence.is_some_and(|c| c >= min));
        abstained = hits.is_empty() && best.is_some();
        if abstained {
            messages.warn(&format!(
                "no result for {question:?} reaches confidence {min} (best {:.3})",
                best.unwrap_or(0.0)
            ));
        }
    }
    if args.explain {
        match args.format {
            OutputFormat::Jsonl => out.write(&plan)?,
            OutputFormat::Text => output::write_plan(&mut std::io::stdout().lock(), &plan)?,
        }
    }
    if args.ledger {
        ledger::append(&args.dir, &plan, &hits, best, abstained)?;
    }
    Ok(hits)
}

fn probability(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(p) if (0.0..=1.0).contains(&p) => Ok(p),
        _ => Err(format!("{text} is not a probability between 0 and 1")),
    }
}

/// One `--batch` input line.
#[derive(Deserialize)]
pub(crate) struct BatchQuery {
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
    args: &Args,
    messages: &Messages,
) -> anyhow::Result<()> {
    for_each_batch_query(messages, |query, id| {
        let given = query.embedding.map(|e| (e, query.model));
        let hits = answer(searcher, args, messages, out, &query.text, given)?;
        emit(out, args.format, &hits, Some(id), false)
    })
}

/// Reads `--batch` lines from stdin and calls `answer_one` with each query
/// and its id (a string id as is, any other JSON value as JSON); a line
/// that is not a query is reported and skipped.
fn for_each_batch_query(
    messages: &Messages,
    mut answer_one: impl FnMut(BatchQuery, &str) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut lines = std::io::stdin().lines();
    let mut number = 0;
    while let Some(line) = lines.next().transpose()? {
        number += 1;
        if line.trim().is_empty() {
            continue;
        }
        let query: BatchQuery = match serde_json::from_str(&line) {
            Ok(query) => query,
            Err(e) => {
                messages.reject(
                    &format!("stdin:{number}"),
                    ErrorCode::BadRecord,
                    &e.to_string(),
                );
                continue;
            }
        };
        let id = match &query.id {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        answer_one(query, &id)?;
    }
    Ok(())
}

/// Writes hits as records or text; `with_scope` puts each hit's scope before
/// its citation in text (answers from many scopes).
fn emit(
    out: &mut JsonlWriter,
    format: OutputFormat,
    hits: &[HitRecord],
    query_id: Option<&str>,
    with_scope: bool,
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
                write_text(&mut text, hit, with_scope)?;
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
    /// A second connection, for vector search beside BM25 in hybrid mode
    /// (opened at first use, unless the retrievers run one after the other).
    vector_store: Option<Store>,
    concurrent: bool,
    steps: Steps,
    weights: Weights,
    min_filtered: usize,
    config: QueryConfig,
    /// Whether the scope has graph tables (read once, at open).
    has_graph: bool,
    /// The document types the scope has.
    doc_types: Vec<String>,
    /// The graph once loaded (`None` when the scope has none).
    graph: std::cell::OnceCell<Option<QueryGraph>>,
}

/// One query's lists: its filtered and, when those found too little,
/// unfiltered retrieval, each retriever's list named after the query.
struct Retrieved {
    lists: Vec<(String, Vec<Scored>)>,
    documents: usize,
    fell_back: bool,
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
        let mut with = args.with.clone();
        if args.graph {
            with.push(Step::Graph);
        }
        let mut searcher = Searcher {
            scope: scope_of(&args.dir),
            doc_types: store.doc_types()?,
            config: QueryConfig::load(&args.dir)?,
            has_graph: kts_graph::tables::exist(store.connection())?,
            store,
            meta,
            mode,
            filters: Filters {
                doc_types: args.doc_type.iter().map(|t| t.to_uppercase()).collect(),
                doc_ids: None,
            },
            candidates: (args.candidates as usize).max(args.top_k * CHUNKS_PER_RESULT),
            top_k: args.top_k,
            all_chunks: args.all_chunks,
            model,
            embedder: None,
            vector_store: None,
            concurrent: true,
            steps: Steps::new(&with, &args.without),
            weights: Weights::with_overrides(&args.weights)?,
            min_filtered: args.min_filtered,
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

    /// A given embedding, checked against the index's model.
    fn checked(&self, vector: Vec<f32>, model: Option<String>) -> anyhow::Result<Vec<f32>> {
        let model = model.unwrap_or_else(|| "unknown".into());
        if Some(&model) != self.meta.model_id.as_ref() || Some(vector.len()) != self.meta.dims {
            return Err(mismatch(&self.meta, self.store.scope(), &model, vector.len()).into());
        }
        Ok(vector)
    }

    /// Runs BM25 and vector search one after the other on one connection
    /// (when many scopes are searched in parallel already).
    pub fn one_connection(&mut self) {
        self.concurrent = false;
    }

    /// The slug hits name their scope by (the folder name's, unless a
    /// knowledge root had to make it unique).
    pub fn set_scope_name(&mut self, slug: &str) {
        self.scope = slug.to_string();
    }

    /// The question embedded by the index's model, with the model's id;
    /// `None` when the search runs without vectors.
    pub fn embed_question(
        &mut self,
        text: &str,
    ) -> anyhow::Result<Option<(Vec<f32>, Option<String>)>> {
        if self.mode == Mode::Bm25 {
            return Ok(None);
        }
        let model = self.meta.model_id.clone();
        Ok(Some((self.embedder()?.embed_query(text)?, model)))
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

    /// The queries the pipeline's steps make of a question.
    pub fn plan(&self, question: &str) -> anyhow::Result<Plan> {
        let lexicon = Lexicon::new(self.store.connection(), &self.config, self.has_graph);
        let planner = Planner::new(
            lexicon,
            &self.steps,
            &self.filters,
            &self.doc_types,
            plain_extractor(),
        );
        planner.plan(question)
    }

    /// The results for one question, best first.
    pub fn search(
        &mut self,
        text: &str,
        given: Option<(Vec<f32>, Option<String>)>,
    ) -> anyhow::Result<Vec<HitRecord>> {
        Ok(self.search_explained(text, given)?.0)
    }

    /// The results for one question and the record of how they were found.
    pub fn search_explained(
        &mut self,
        text: &str,
        given: Option<(Vec<f32>, Option<String>)>,
    ) -> anyhow::Result<(Vec<HitRecord>, PlanRecord)> {
        let plan = self.plan(text)?;
        let mut given = match given {
            Some((vector, model)) => Some(self.checked(vector, model)?),
            None => None,
        };
        let mut lists = Vec::new();
        let mut planned = Vec::new();
        let mut parts = 0;
        for query in &plan.queries {
            // A given embedding is the question's; other texts need the model.
            let vector = match self.mode {
                Mode::Bm25 => None,
                _ if query.role == Role::Question && query.embed_text == text.trim() => {
                    match given.take() {
                        Some(vector) => Some(vector),
                        None => Some(self.embedder()?.embed_query(&query.embed_text)?),
                    }
                }
                _ => Some(self.embedder()?.embed_query(&query.embed_text)?),
            };
            let prefix = match query.role {
                Role::Question => String::new(),
                Role::Part => {
                    parts += 1;
                    format!("part{parts}_")
                }
                Role::StepBack => "step_back_".to_string(),
            };
            let retrieved = self.retrieve_query(query, vector.as_deref(), &prefix)?;
            planned.push(planned_query(query, &retrieved));
            lists.extend(retrieved.lists);
        }
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
        if self.steps.on(Step::Graph) {
            let seeds = self.seeds(text)?;
            if let (Some(graph), false) = (self.graph()?, seeds.is_empty()) {
                let scores = graph.document_scores(&graph.reach(&seeds));
                let list = graph_list(&lists, &scores, &mut doc_of)?;
                if !list.is_empty() {
                    lists.push(("graph".to_string(), list));
                }
            }
        }
        let weights = &self.weights;
        let weight_of = |name: &str| {
            if name == "graph" {
                weights.get("graph")
            } else if name.starts_with("part") {
                weights.get("part")
            } else if name.starts_with("step_back") {
                weights.get("step_back")
            } else {
                1.0
            }
        };
        let mut fused = fuse(&lists, weight_of);
        if self.steps.on(Step::Signals) {
            self.apply_signals(&plan, &mut fused)?;
        }
        let kept = top_k(fused, self.top_k, self.all_chunks, doc_of)?;
        let hits = self.hit_records(&kept)?;
        let record = PlanRecord {
            schema: kts_record::schema_id::PLAN.into(),
            question: text.to_string(),
            scope: self.scope.clone(),
            steps: self.steps.names().iter().map(|s| s.to_string()).collect(),
            intent: plan.intent.map(|i| i.name.to_string()),
            error_codes: plan.error_codes.clone(),
            entities: plan.entities.clone(),
            queries: planned,
            notes: plan
                .notes
                .iter()
                .map(|n| PlanNote {
                    step: n.step.to_string(),
                    detail: n.detail.clone(),
                })
                .collect(),
            weights: self
                .weights
                .iter()
                .map(|(n, w)| (n.to_string(), w))
                .collect(),
        };
        Ok((hits, record))
    }

    /// Multiplies the fused score of the best candidates by their signals'
    /// boost and orders them again.
    fn apply_signals(&self, plan: &Plan, fused: &mut [Fused]) -> anyhow::Result<()> {
        let considered = fused.len().min(self.candidates);
        let rowids: Vec<i64> = fused[..considered].iter().map(|f| f.rowid).collect();
        let hits = self.store.fetch_hits(&rowids)?;
        let by_rowid: HashMap<i64, &kts_store::Hit> = hits.iter().map(|h| (h.rowid, h)).collect();
        for f in fused[..considered].iter_mut() {
            let Some(hit) = by_rowid.get(&f.rowid) else {
                continue;
            };
            let signals = rank::signals::signals(plan, hit);
            f.score *= rank::signals::boost(&signals, &self.weights);
            for (name, value) in signals {
                f.signals.insert(
                    name.to_string(),
                    Scored {
                        rowid: f.rowid,
                        score: value,
                        rank: 0,
                    },
                );
            }
        }
        fused[..considered].sort_by(|a, b| b.score.total_cmp(&a.score).then(a.rowid.cmp(&b.rowid)));
        Ok(())
    }

    /// One query's lists, a list per retriever: the filtered search's hits,
    /// followed, when it found fewer than `--min-filtered` documents, by the
    /// unfiltered search's other hits.
    fn retrieve_query(
        &mut self,
        query: &SubQuery,
        vector: Option<&[f32]>,
        prefix: &str,
    ) -> anyhow::Result<Retrieved> {
        let mut lists = self.retrieve(&query.search_text, vector, &query.filters)?;
        let documents = self.count_documents(&lists)?;
        let filtered = query.filters != self.filters;
        let fell_back = filtered && documents < self.min_filtered;
        if fell_back {
            let unfiltered = self.filters.clone();
            let more = self.retrieve(&query.unfiltered_text, vector, &unfiltered)?;
            for ((_, list), (_, more)) in lists.iter_mut().zip(more) {
                append_new(list, more);
            }
        }
        Ok(Retrieved {
            lists: lists
                .into_iter()
                .map(|(name, list)| (format!("{prefix}{name}"), list))
                .collect(),
            documents,
            fell_back,
        })
    }

    fn count_documents(&self, lists: &[(&str, Vec<Scored>)]) -> anyhow::Result<usize> {
        let mut docs = std::collections::HashSet::new();
        for (_, list) in lists {
            for scored in list {
                if let Some(doc) = self.store.doc_id_of(scored.rowid)? {
                    docs.insert(doc);
                    if docs.len() >= self.min_filtered {
                        return Ok(docs.len());
                    }
                }
            }
        }
        Ok(docs.len())
    }

    /// Each retriever's candidates; in hybrid mode BM25 and vector search
    /// run at the same time, on two connections.
    fn retrieve(
        &mut self,
        text: &str,
        vector: Option<&[f32]>,
        filters: &Filters,
    ) -> anyhow::Result<Vec<(&'static str, Vec<Scored>)>> {
        let k = self.candidates;
        if self.mode == Mode::Hybrid && self.concurrent && self.vector_store.is_none() {
            self.vector_store = Some(Store::open_read(self.store.scope())?);
        }
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
            (Mode::Hybrid, Some(vector), None) => Ok(vec![
                ("bm25", self.store.search_bm25(text, k, filters)?),
                ("vector", self.store.search_vector(vector, k, filters)?),
            ]),
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
                confidence: Some(confidence(&confidence_features(fused, i + 1))),
            })
            .collect())
    }
}

/// `list` followed by the entries of `more` it lacks, ranked again.
fn append_new(list: &mut Vec<Scored>, more: Vec<Scored>) {
    let seen: std::collections::HashSet<i64> = list.iter().map(|s| s.rowid).collect();
    list.extend(more.into_iter().filter(|s| !seen.contains(&s.rowid)));
    for (i, scored) in list.iter_mut().enumerate() {
        scored.rank = i + 1;
    }
}

/// What one query of the plan was and found, for the plan record.
fn planned_query(query: &SubQuery, retrieved: &Retrieved) -> PlannedQuery {
    PlannedQuery {
        role: match query.role {
            Role::Question => "question",
            Role::Part => "part",
            Role::StepBack => "step_back",
        }
        .to_string(),
        search_text: query.search_text.clone(),
        embed_text: query.embed_text.clone(),
        doc_types: query.doc_types.clone(),
        entities: query.entities.clone(),
        documents: retrieved.documents,
        fell_back: retrieved.fell_back,
    }
}

fn signals(fused: &Fused) -> std::collections::BTreeMap<String, Signal> {
    fused
        .signals
        .iter()
        .map(|(name, scored)| {
            let rank = (scored.rank > 0).then_some(scored.rank);
            (
                name.clone(),
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

/// The entity extractor without seeds or taxonomy, built once per process
/// (its patterns take milliseconds to compile; a knowledge root opens many scopes).
fn plain_extractor() -> &'static kts_graph::extract::Extractor {
    static EXTRACTOR: std::sync::OnceLock<kts_graph::extract::Extractor> =
        std::sync::OnceLock::new();
    EXTRACTOR.get_or_init(|| kts_graph::extract::Extractor::new(&[], &[]))
}

fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}
