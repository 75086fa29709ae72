//! Ranking: the lists of every query fused by RRF, signals after fusion,
//! and the best chunk per document.

pub mod confidence;
pub mod fuse;
pub mod signals;
