//! The command line of kts-query: its flags, mapped into a [`Request`] and
//! a [`ModelChoice`], and its output (records, text, a context, a report).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::{CommandFactory, Parser};
use kts_catalog::CatalogRow;
use kts_cli::{Exit, JsonlWriter, Messages};
use kts_record::{ErrorCode, HitRecord, ScopeCountRecord};
use serde::Deserialize;

use crate::federation::{RootSearcher, RouteError};
use crate::output::{self, BatchHit, write_text};
use crate::rank::confidence::answer_confidence;
use crate::searcher::UnusableEmbedding;
use crate::{
    DEFAULT_CANDIDATES, Fusion, MAX_CANDIDATES, MIN_FILTERED, Mode, ModelChoice, OutputFormat,
    Request, RerankBy, Reranker, Searcher, Step, evidence, federation, ledger,
};

const ABOUT: &str =
    "Search a scope's index: a query pipeline, BM25 and vector retrieval fused, confidence";

const AFTER_HELP: &str = "\
Writes one kts.hit/1 record per result, best first: the chunk's text and its
citation (path, heading path, character offsets, page or slide), the fused
score, and each retriever's rank and score under `signals`. The heading path,
page and slide cited are those of the part of the chunk (from one heading or
page or slide marker to the next) holding the most distinct words of the
question, which starts at character cited_start; the chunk's start when it
holds none. --format text and --context show the chunk from that part on,
page and slide markers written as (page N) and (slide N); cut short (the
text's 200 characters, the last passage within --budget), the stretch
holding the question's rarest words is shown. Confidences never rise down
the list, so --min-confidence keeps the best hits. Hybrid mode runs
BM25 (FTS5) and vector search (the question embedded with the model the index
was built with) and fuses their top --candidates: by default each list's
scores are scaled to [0, 1] (its best 1, its last 0) and summed (--fusion
convex), or --fusion rrf sums 1 / (60 + rank). Only the best chunk of each
document is kept unless --all-chunks; when one long document fills the lists
and fewer documents than --top-k remain, the search runs again with four
times the candidates.
On an index without embeddings, hybrid falls back to BM25 with a warning.

Before retrieval the question goes through the query pipeline's steps:
signals (after fusion, score × (1 + Σ weight × signal); --weight NAME=VALUE),
feedback (the question's vector moved toward its best 3 fused chunks, vector
search run again) and, off by default, filters (intent words → doc types; error codes and
systems the scope knows → their documents; fewer than --min-filtered found →
the unfiltered search follows), decompose (a multi-part question searched
part by part), acronyms, synonyms, step-back and graph. --with/--without
switch them; --explain writes first a kts.plan/1 record of what each did.
--rerank-cmd CMD hands the best --rerank-top fused chunks to a command of
yours (a cross-encoder, an LLM): one JSON line per candidate on its stdin
({\"query\", \"id\", \"path\", \"title\", \"heading_path\", \"text\",
\"score\"}), one score per line back, in order (a number, or
{\"id\", \"score\"}); the order becomes (1 - W) x fused + W x its score, both
scaled to [0, 1] (W: --rerank-weight). A command that fails, answers wrongly
or takes longer than --rerank-timeout leaves the fused order, with a warning.
--rerank-model ID does the same in-process with a cross-encoder ONNX model
(a models/ID.json manifest with \"kind\": \"reranker\", fetched by
models/fetch; or the manifest's path), reading the title and text of each.
Each hit has a confidence (the probability it is relevant);
--min-confidence P drops those below P. --ledger appends a kts.ledger/1
record per query to DIR/.kts/ledger.jsonl.

--context prints, instead of records, a Markdown context for an LLM within
--budget tokens: \"## Knowledge Graph Context\" (the question's entities,
their definitions, strongest neighbours and sources) when the question names
any, then \"## Relevant Passages\", each cited.

DIR may be a knowledge root, a folder whose sub-folders are scopes (slugs
from their names: lowercase, spaces and hyphens to _). \"/slug question\" or
--scope SLUG asks that scope only (with --scope, a leading /word is a word),
\"/slug /doctype question\" also filters by doc type, and --evidence,
--explain and --ledger work on the scope so named (as on its folder); a question
naming every word of a scope's slug goes to it; any other to every scope
when there are at most --max-scopes, else to the scopes the root's catalog
(kts-catalog ROOT) matches with at least half the best match's score. All in
parallel; more than --max-scopes: exit 2. Hits are merged by
confidence (each scope's order kept; the score is that confidence) and name
their scope (in text, before the path); a scope that fails is
skipped with a warning; a reranker runs once, over the merged hits.
--context on a knowledge root cites each passage by scope and path
(hr: notes.md), after the graph facts of each scope a passage comes from.
--list-scopes lists the scopes, --count-by-scope counts the documents of each
holding every word of the question.

--batch reads {\"id\": \"q1\", \"text\": \"...\"} lines on stdin (optionally
with a precomputed \"embedding\" and its \"model\") and adds `query_id` to
each hit; the model is loaded once. On a knowledge root each question is
routed on its own; one that cannot be (an unknown scope, too broad) is
reported and fails alone.

--evidence ANSWER (a Markdown file, or - for stdin) checks an answer against
the scope instead: each sentence of 4 words or more (8 characters in Chinese or
Japanese; outside headings, code and tables; list markers and citations like
[1] removed) is a claim, searched
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
  kts-query docs 'corrupt file' --rerank-cmd \"awk '{print gsub(/corrupt/, 0)}'\" --format text
  echo 'kts-index writes the index.' | kts-query docs 'what does kts-index do' --evidence -";

#[derive(Parser, Debug, Clone)]
#[command(name = "kts-query", version, about = ABOUT, after_help = AFTER_HELP)]
pub struct Args {
    /// The scope folder whose index (DIR/.kts/kts.db) is searched, or a
    /// knowledge root: a folder whose sub-folders are scopes.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,

    /// The question (or keywords).
    #[arg(value_name = "QUESTION", required_unless_present_any = ["batch", "list_scopes"],
          value_parser = not_blank)]
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

    /// In a knowledge root: most scopes a question may fan out to; a root of
    /// more scopes is narrowed by its catalog.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub max_scopes: usize,

    /// Read queries as JSON lines on stdin: {"id": ..., "text": ...}.
    #[arg(long, conflicts_with = "question")]
    pub batch: bool,

    #[arg(long, value_enum, default_value_t = Mode::Hybrid)]
    pub mode: Mode,

    /// How hybrid search fuses its lists.
    #[arg(long, value_enum, default_value_t = Fusion::Convex)]
    pub fusion: Fusion,

    /// Number of results (at most 1000).
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub top_k: u32,

    /// Chunks each retriever contributes before fusion; at least 4 × --top-k,
    /// so that enough distinct documents remain after one chunk per document.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_CANDIDATES as u32, value_parser = clap::value_parser!(u32).range(1..=MAX_CANDIDATES as i64))]
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

    /// A command (run with sh -c) that scores the best candidates again: it
    /// reads one JSON line per candidate and prints one score per line.
    #[arg(long, value_name = "CMD", group = "reranker")]
    pub rerank_cmd: Option<String>,

    /// A cross-encoder that scores the best candidates again: the id of a
    /// "kind": "reranker" manifest in the models folder, or its file.
    #[arg(long, value_name = "ID|FILE", group = "reranker")]
    pub rerank_model: Option<String>,

    /// How many of the best fused chunks the reranker scores.
    #[arg(long, value_name = "N", default_value_t = 30, requires = "reranker", value_parser = clap::value_parser!(u32).range(2..=1000))]
    pub rerank_top: u32,

    /// The reranker's share of the final score (the fused score has the rest).
    #[arg(long, value_name = "SHARE", default_value_t = 0.5, requires = "reranker", value_parser = probability)]
    pub rerank_weight: f64,

    /// Seconds the --rerank-cmd has per question; then the fused order stands.
    #[arg(long, value_name = "SECS", default_value_t = 30, requires = "rerank_cmd", value_parser = clap::value_parser!(u32).range(1..))]
    pub rerank_timeout: u32,

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

    /// The --context's size, in tokens (estimated as characters / 4, a Chinese,
    /// Japanese or Korean character as one).
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

impl Args {
    /// What the flags ask (the question, or none with --batch).
    pub fn request(&self) -> Request {
        Request {
            question: self.question.clone().unwrap_or_default(),
            scopes: self.scope.clone(),
            doc_types: self.doc_type.iter().cloned().collect(),
            mode: self.mode,
            fusion: self.fusion,
            top_k: self.top_k as usize,
            candidates: self.candidates as usize,
            all_chunks: self.all_chunks,
            with: self
                .with
                .iter()
                .copied()
                .chain(self.graph.then_some(Step::Graph))
                .collect(),
            without: self.without.clone(),
            weights: self.weights.clone(),
            min_filtered: self.min_filtered,
            min_confidence: self.min_confidence,
            max_scopes: self.max_scopes,
            budget: self.budget,
            reranker: self.reranker(),
            cutoff: Default::default(),
        }
    }

    fn reranker(&self) -> Option<Reranker> {
        let by = match (&self.rerank_cmd, &self.rerank_model) {
            (Some(command), _) => RerankBy::Command {
                command: command.clone(),
                timeout: std::time::Duration::from_secs(self.rerank_timeout.into()),
            },
            (None, Some(model)) => RerankBy::Model {
                model: model.clone(),
                models_dir: self.models.clone(),
                threads: self.threads.map_or_else(default_threads, usize::from),
            },
            (None, None) => return None,
        };
        Some(Reranker {
            by,
            top: self.rerank_top as usize,
            weight: self.rerank_weight,
        })
    }

    /// The model the flags choose; loaded for a quick start unless --batch.
    pub fn model(&self) -> ModelChoice {
        ModelChoice::new(
            self.model.clone(),
            self.models.clone(),
            self.threads.map_or_else(default_threads, usize::from),
            !self.batch,
        )
    }
}

pub fn run(args: Args) -> anyhow::Result<Exit> {
    let messages = Messages::new("kts-query").quiet(args.quiet);
    let mut out = JsonlWriter::new();
    if let Some(reranker) = args.reranker() {
        reranker.by.prepare()?;
    }
    if federation::is_root(&args.dir) {
        if let Some(scoped) = asked_of_one_scope(&args, &messages)? {
            return run(scoped);
        }
        run_root(&args, &messages, &mut out)?;
        out.flush()?;
        return Ok(messages.exit());
    }
    if args.list_scopes || args.count_by_scope {
        anyhow::bail!(
            "{} is not a knowledge root (a folder whose sub-folders are indexed scopes)",
            args.dir.display()
        );
    }
    refuse_other_scopes(&args)?;
    // A damaged index or a full disk is said with the file and what to do.
    run_scope(&args, &messages, &mut out).map_err(|e| kts_store::with_remedy(&args.dir, e))?;
    Ok(messages.exit())
}

/// Answers the question (or the batch) from one scope.
fn run_scope(args: &Args, messages: &Messages, out: &mut JsonlWriter) -> anyhow::Result<()> {
    let mut searcher = Searcher::open(&args.dir, &args.request(), &args.model(), messages)?;
    searcher.warn_of_absent_doc_types(messages)?;
    match &args.question {
        Some(question) if args.evidence.is_some() => {
            run_evidence(&mut searcher, question, args, messages, out)?;
        }
        Some(question) if args.context => {
            let hits = answer(&mut searcher, args, messages, out, question, None)?;
            let text = searcher.context(question, &hits, args.budget)?;
            std::io::stdout().lock().write_all(text.as_bytes())?;
        }
        Some(question) => {
            let hits = answer(&mut searcher, args, messages, out, question, None)?;
            if hits.is_empty() {
                messages.warn("no results");
            }
            emit(out, args.format, &hits, question, None, false)?;
        }
        None => run_batch(&mut searcher, out, args, messages)?,
    }
    out.flush()?;
    searcher.release_at_exit();
    Ok(())
}

/// The flags that work on one scope.
fn one_scope_flags(args: &Args) -> [(&'static str, bool); 3] {
    [
        ("--evidence", args.evidence.is_some()),
        ("--explain", args.explain),
        ("--ledger", args.ledger),
    ]
}

/// A question over a knowledge root with a flag that works on one scope,
/// which the question names (`/slug question` or `--scope SLUG`): the same
/// arguments on that scope's folder.
fn asked_of_one_scope(args: &Args, messages: &Messages) -> anyhow::Result<Option<Args>> {
    if args.question.is_none() || !one_scope_flags(args).iter().any(|(_, given)| *given) {
        return Ok(None);
    }
    let mut routing = federation::Routing::open(&args.dir, messages)?;
    let Ok(route) = routing.route(&args.request(), messages) else {
        return Ok(None);
    };
    let named = route.how.starts_with('/') || route.how == "--scope";
    let [scope] = route.scopes.as_slice() else {
        return Ok(None);
    };
    if !named {
        return Ok(None);
    }
    Ok(Some(Args {
        dir: scope.path.clone(),
        question: Some(route.question.clone()),
        scope: Vec::new(),
        doc_type: route.doc_type.clone().or_else(|| args.doc_type.clone()),
        ..args.clone()
    }))
}

/// Answers a question, or `--batch` questions, over a knowledge root.
fn run_root(args: &Args, messages: &Messages, out: &mut JsonlWriter) -> anyhow::Result<()> {
    if let Some((flag, _)) = one_scope_flags(args).iter().find(|(_, given)| *given) {
        anyhow::bail!(
            "{flag} works on one scope: name it (/slug question or --scope SLUG) or give its \
             folder ({}/SCOPE)",
            args.dir.display()
        );
    }
    let mut root = RootSearcher::open(&args.dir, &args.request(), &args.model(), messages)?;
    if args.list_scopes {
        return write_scope_rows(&root.scope_rows()?, args.format, out);
    }
    let Some(question) = &args.question else {
        return for_each_batch_query(messages, out, args.format, |out, query, id| {
            let route = match root.route(&query.text) {
                Ok(route) => route,
                Err(e) => {
                    let at = format!("query {id}");
                    let mut error = messages.reject_record(&at, ErrorCode::BadRecord, &advised(&e));
                    error.query_id = Some(id.to_string());
                    return write_error(out, args.format, &error);
                }
            };
            let given = query.embedding.map(|vector| (vector, query.model));
            let hits = root.search(&route, given)?;
            emit(out, args.format, &hits, &route.question, Some(id), true)
        });
    };
    let route = match args.count_by_scope {
        true => root.every_scope(question),
        false => root.route(question),
    }
    .map_err(|e| anyhow::anyhow!(advised(&e)))?;
    if !args.quiet {
        messages.info(&format!(
            "asking {} scope(s) ({})",
            route.scopes.len(),
            route.how
        ));
    }
    if args.context {
        let text = root.context(&route)?;
        return Ok(std::io::stdout().lock().write_all(text.as_bytes())?);
    }
    if args.count_by_scope {
        let found = federation::count_by_scope(&route, messages);
        messages.info(&format!(
            "{:?} is in {} of {} scopes",
            route.question,
            found.len(),
            route.scopes.len()
        ));
        return write_scope_counts(&found, args.format, out);
    }
    let hits = root.search(&route, None)?;
    if hits.is_empty() {
        messages.warn("no results");
    }
    emit(out, args.format, &hits, &route.question, None, true)
}

/// `--list-scopes`: `kts.scope/1` records, or a line per scope.
fn write_scope_rows(
    rows: &[CatalogRow],
    format: OutputFormat,
    out: &mut JsonlWriter,
) -> anyhow::Result<()> {
    for row in rows {
        match format {
            OutputFormat::Jsonl => out.write(&row.to_record(None))?,
            OutputFormat::Text => writeln!(
                std::io::stdout().lock(),
                "{:<30} {:>6} documents  {:<30} {}",
                row.slug,
                row.documents,
                row.doc_types.join(","),
                row.path
            )?,
        }
    }
    Ok(())
}

/// `--count-by-scope`: `kts.scope_count/1` records, or a line per scope.
fn write_scope_counts(
    counts: &[ScopeCountRecord],
    format: OutputFormat,
    out: &mut JsonlWriter,
) -> anyhow::Result<()> {
    for count in counts {
        match format {
            OutputFormat::Jsonl => out.write(count)?,
            OutputFormat::Text => writeln!(
                std::io::stdout().lock(),
                "{}: {} document(s), {} passage(s): {}",
                count.scope,
                count.documents,
                count.chunks,
                count.paths.join(", ")
            )?,
        }
    }
    Ok(())
}

/// `kts-query DIR QUESTION --evidence ANSWER`: writes the report; warns on
/// stderr when the coverage stays below `--min-coverage` after the retry.
fn run_evidence(
    searcher: &mut Searcher,
    question: &str,
    args: &Args,
    messages: &Messages,
    out: &mut JsonlWriter,
) -> anyhow::Result<()> {
    let path = args
        .evidence
        .as_deref()
        .context("--evidence names no answer")?;
    let answer = read_answer(path)?;
    let report = evidence::check(searcher, question, &answer, args.min_coverage)?;
    match args.format {
        OutputFormat::Jsonl => {
            for record in report.records() {
                out.write(&record)?;
            }
        }
        OutputFormat::Text => {
            let mut text = Vec::new();
            report.write_text(&mut text, None)?;
            std::io::stdout().lock().write_all(&text)?;
        }
    }
    out.flush()?;
    if let Some(warning) = report.low_confidence_warning() {
        messages.warn(&warning);
    }
    Ok(())
}

/// The answer: a file's text, or stdin's for `-`.
fn read_answer(path: &Path) -> anyhow::Result<String> {
    if path == Path::new("-") {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read the answer from stdin")?;
        return Ok(text);
    }
    std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the answer {}", path.display()))
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
    for_each_batch_query(messages, out, args.format, |out, query, id| {
        let given = query.embedding.map(|e| (e, query.model));
        let hits = answer(searcher, args, messages, out, &query.text, given)?;
        emit(out, args.format, &hits, &query.text, Some(id), false)
    })
}

/// Reads `--batch` lines from stdin and calls `answer_one` with each query
/// and its id (a string id as is, any other JSON value as JSON); a line
/// that is not a query is reported, sent on as a `kts.error/1` record (in
/// JSONL output), and skipped, as is one whose embedding the index cannot use.
fn for_each_batch_query(
    messages: &Messages,
    out: &mut JsonlWriter,
    format: OutputFormat,
    mut answer_one: impl FnMut(&mut JsonlWriter, BatchQuery, &str) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut lines = std::io::stdin().lines();
    let mut number = 0;
    while let Some(line) = lines.next().transpose()? {
        number += 1;
        if line.trim().is_empty() {
            continue;
        }
        let rejected = match serde_json::from_str::<BatchQuery>(&line) {
            Err(e) if e.is_syntax() || e.is_eof() => Err((ErrorCode::BadJson, e.to_string(), None)),
            Err(e) => Err((ErrorCode::BadRecord, e.to_string(), None)),
            Ok(query) => match unsearchable(&query.text) {
                Some(why) => Err((ErrorCode::BadRecord, why, Some(query_id(&query)))),
                None => Ok(query),
            },
        };
        let query = match rejected {
            Ok(query) => query,
            Err((code, message, id)) => {
                let mut error = messages.reject_record(&format!("stdin:{number}"), code, &message);
                error.query_id = id;
                write_error(out, format, &error)?;
                continue;
            }
        };
        let id = query_id(&query);
        if let Err(error) = answer_one(out, query, &id) {
            let Some(unusable) = error.downcast_ref::<UnusableEmbedding>() else {
                return Err(error);
            };
            let at = format!("stdin:{number}");
            let mut error =
                messages.reject_record(&at, ErrorCode::BadRecord, &unusable.to_string());
            error.query_id = Some(id);
            write_error(out, format, &error)?;
        }
    }
    Ok(())
}

/// On a scope folder, `--scope` may only name that scope: another slug would
/// otherwise be ignored, and its question answered from the wrong scope.
fn refuse_other_scopes(args: &Args) -> anyhow::Result<()> {
    // The name as given ("." has none): a linked scope's slug is its link's.
    let name = match args.dir.file_name() {
        Some(name) => Some(name.to_owned()),
        None => args
            .dir
            .canonicalize()
            .ok()
            .and_then(|dir| dir.file_name().map(ToOwned::to_owned)),
    };
    let own = name.map(|n| kts_store::scope_slug(&n.to_string_lossy()));
    for asked in &args.scope {
        if own.as_deref() != Some(kts_store::scope_slug(asked).as_str()) {
            anyhow::bail!(
                "--scope {asked}: {} is a scope, not a knowledge root with scopes to choose from",
                args.dir.display()
            );
        }
    }
    Ok(())
}

/// A batch query's id: a string as is, any other JSON value as JSON.
fn query_id(query: &BatchQuery) -> String {
    match &query.id {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Why a question cannot be routed, and what the flags can do about it.
fn advised(error: &RouteError) -> String {
    match error {
        RouteError::UnknownScope(_) => format!("{error} (--list-scopes lists them)"),
        RouteError::TooBroad(_) => format!(
            "{error} (--max-scopes): name a scope (/slug question or --scope SLUG), add words, \
             or raise --max-scopes (--count-by-scope tells in which scopes its words are)"
        ),
        RouteError::Other(_) => error.to_string(),
    }
}

/// Sends a rejected query downstream in JSONL output (in text, stderr has it).
fn write_error(
    out: &mut JsonlWriter,
    format: OutputFormat,
    error: &kts_record::ErrorRecord,
) -> anyhow::Result<()> {
    if format == OutputFormat::Jsonl {
        out.write(error)?;
    }
    Ok(())
}

/// A question with something to search for (clap's check of QUESTION).
fn not_blank(question: &str) -> Result<String, String> {
    unsearchable(question).map_or(Ok(question.to_string()), Err)
}

/// Why a question cannot be searched: it is empty, or has no letter or
/// digit (the index keeps words of letters and digits only, so emoji,
/// symbols and punctuation alone find nothing). The question is shown as
/// typed, its control characters escaped.
pub fn unsearchable(question: &str) -> Option<String> {
    if question.trim().is_empty() {
        Some("the question is empty".into())
    } else if !question.chars().any(char::is_alphanumeric) {
        let shown: String = question
            .chars()
            .flat_map(|c| match c.is_control() {
                true => c.escape_default().collect::<Vec<_>>(),
                false => vec![c],
            })
            .collect();
        Some(format!(
            "the question \"{shown}\" has no words to search for: kts searches words of \
             letters and digits, not emoji, symbols or punctuation alone"
        ))
    } else {
        None
    }
}

/// Writes hits as records or text (snippets showing the `question`'s words);
/// `with_scope` puts each hit's scope before its citation in text (answers
/// from many scopes).
fn emit(
    out: &mut JsonlWriter,
    format: OutputFormat,
    hits: &[HitRecord],
    question: &str,
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
                write_text(&mut text, hit, question, with_scope)?;
            }
            // A single question's "no results" is a warning on stderr.
            if hits.is_empty() && query_id.is_some() {
                writeln!(text, "no results")?;
            }
            std::io::stdout().lock().write_all(&text)?;
        }
    }
    Ok(())
}

fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}
