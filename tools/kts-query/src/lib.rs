//! kts-query: hybrid retrieval over a scope's index — BM25 (FTS5) and
//! vector search (sqlite-vec), fused with Reciprocal Rank Fusion.
//!
//! A [`Request`] says what a question asks; a [`Searcher`] (one scope) or a
//! [`federation::RootSearcher`] (a knowledge root) answers it, and
//! [`Knowledge`] keeps them open for a server. The command line
//! ([`Args`], [`run`]) only maps its flags into those.

mod cite;
mod cli;
mod context;
mod embedder;
pub mod evidence;
pub mod federation;
mod graph;
mod knowledge;
mod ledger;
mod output;
pub mod plan;
mod pool;
pub mod rank;
mod request;
mod searcher;
pub mod steps;
mod words;

use clap::ValueEnum;

pub use cli::{Args, command, run, unsearchable};
pub use embedder::{ModelChoice, SharedModel, mismatch};
pub use knowledge::Knowledge;
pub use kts_store::scope_slug;
pub use output::{BatchHit, hit_snippet, write_text};
pub use pool::SearcherPool;
pub use rank::fuse::{Fused, Fusion, RRF_K, fuse, top_k};
pub use rank::rerank::{RerankBy, Reranker};
pub use rank::signals::{WEIGHTS, Weights};
pub use request::{Cutoff, Request};
pub use searcher::Searcher;
pub use steps::{Step, Steps};

/// Default of `--min-filtered`.
pub const MIN_FILTERED: usize = 3;

/// Default of `--candidates`: as many as a 100-hit search uses, so that the
/// first hits do not depend on how many are asked for (fusion scales each
/// list over its length) and are the order the evaluation measures.
pub const DEFAULT_CANDIDATES: usize = 400;

/// Most chunks a retriever contributes (`--candidates`, and deeper searches).
pub const MAX_CANDIDATES: usize = 4096;

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
    /// Rank, score, citation and a snippet of the cited part, for humans.
    Text,
}
