//! Ranking: the lists of every query fused into one order, signals after
//! fusion, an outside reranker if one is given, and the best chunk per document.

pub mod confidence;
pub mod feedback;
pub mod fuse;
pub mod rerank;
pub mod signals;
