//! What a question asks, whoever asks it: kts-query maps its flags into a
//! [`Request`], kts-mcp a tool call's arguments. A [`Searcher`](crate::Searcher)
//! opened once answers any number of requests.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use kts_cli::Messages;
use kts_record::HitRecord;
use kts_store::Filters;

use crate::rank::fuse::Fusion;
use crate::rank::rerank::Reranker;
use crate::rank::signals::Weights;
use crate::steps::{Step, Steps};
use crate::{MIN_FILTERED, Mode};

/// Documents have several chunks: fetching this many chunks per wanted
/// result leaves enough distinct documents after deduplication.
const CHUNKS_PER_RESULT: usize = 4;

/// One question and how to answer it.
#[derive(Clone, Debug)]
pub struct Request {
    pub question: String,
    /// In a knowledge root: the scopes to ask, by slug (none: routed).
    pub scopes: Vec<String>,
    /// Only documents of these types (any when empty).
    pub doc_types: Vec<String>,
    pub mode: Mode,
    /// How the retrievers' lists are fused.
    pub fusion: Fusion,
    pub top_k: usize,
    /// Chunks each retriever contributes before fusion (at least 4 × `top_k`).
    pub candidates: usize,
    /// Keep every matching chunk, not only the best one of each document.
    pub all_chunks: bool,
    /// Steps of the query pipeline besides the default ones, and those not to run.
    pub with: Vec<Step>,
    pub without: Vec<Step>,
    /// Ranking weight overrides, `NAME=VALUE`.
    pub weights: Vec<String>,
    /// A filtered search returning fewer documents than this is joined by the unfiltered one.
    pub min_filtered: usize,
    /// Hits below this confidence are left out.
    pub min_confidence: Option<f64>,
    /// In a knowledge root: most scopes a question may fan out to.
    pub max_scopes: usize,
    /// The size of a context for an LLM, in tokens (characters / 4, a
    /// Chinese, Japanese or Korean character as one).
    pub budget: usize,
    /// An outside command that scores the best candidates again.
    pub reranker: Option<Reranker>,
    /// When the answer stops being awaited; searches are refused from then on.
    pub cutoff: Cutoff,
}

impl Default for Request {
    fn default() -> Self {
        Request {
            question: String::new(),
            scopes: Vec::new(),
            doc_types: Vec::new(),
            mode: Mode::Hybrid,
            fusion: Fusion::default(),
            top_k: 10,
            candidates: crate::DEFAULT_CANDIDATES,
            all_chunks: false,
            with: Vec::new(),
            without: Vec::new(),
            weights: Vec::new(),
            min_filtered: MIN_FILTERED,
            min_confidence: None,
            max_scopes: 100,
            budget: 2000,
            reranker: None,
            cutoff: Cutoff::default(),
        }
    }
}

impl Request {
    /// Leaves out the hits below `min_confidence`.
    pub fn keep_confident(&self, hits: &mut Vec<HitRecord>) {
        if let Some(min) = self.min_confidence {
            hits.retain(|h| h.confidence.is_some_and(|c| c >= min));
        }
    }

    /// The same settings for another question.
    pub fn asking(&self, question: &str) -> Request {
        Request {
            question: question.to_string(),
            ..self.clone()
        }
    }
}

/// When the answer to a request stops being awaited: past a moment (a
/// server's time limit) or once a flag is raised (the client cancelled or
/// went away). From then on searches are refused (an error), so that the
/// work stops between searches instead of holding the CPU.
#[derive(Clone, Debug, Default)]
pub struct Cutoff {
    pub deadline: Option<Instant>,
    pub cancelled: Option<Arc<AtomicBool>>,
}

impl Cutoff {
    /// Why searches are refused now, if they are.
    pub fn reached(&self) -> Option<&'static str> {
        if let Some(cancelled) = &self.cancelled
            && cancelled.load(Ordering::Relaxed)
        {
            return Some("the request was cancelled before this search could run");
        }
        if self
            .deadline
            .is_some_and(|deadline| Instant::now() >= deadline)
        {
            return Some("the time limit passed before this search could run");
        }
        None
    }
}

/// How one scope's searcher runs a request.
#[derive(Clone, Debug)]
pub(crate) struct Settings {
    pub mode: Mode,
    pub fusion: Fusion,
    pub filters: Filters,
    pub candidates: usize,
    pub top_k: usize,
    pub all_chunks: bool,
    pub steps: Steps,
    pub weights: Weights,
    pub min_filtered: usize,
    pub reranker: Option<Reranker>,
    pub cutoff: Cutoff,
}

impl Settings {
    /// The settings of `request` on a scope with or without vectors; the
    /// fall-back to BM25 of hybrid search without vectors is told to `messages`.
    pub fn new(request: &Request, has_vectors: bool, messages: &Messages) -> anyhow::Result<Self> {
        Ok(Settings {
            mode: effective_mode(request.mode, has_vectors, messages)?,
            fusion: request.fusion,
            filters: Filters {
                doc_types: request.doc_types.iter().map(|t| t.to_uppercase()).collect(),
                doc_ids: None,
            },
            candidates: request.candidates.max(request.top_k * CHUNKS_PER_RESULT),
            top_k: request.top_k,
            all_chunks: request.all_chunks,
            steps: Steps::new(&request.with, &request.without),
            weights: Weights::with_overrides(&request.weights)?,
            min_filtered: request.min_filtered,
            reranker: request.reranker.clone(),
            cutoff: request.cutoff.clone(),
        })
    }
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
