//! Retrieval metrics, as trec_eval (and so BEIR, through pytrec_eval) defines them.
//!
//! - nDCG@k: graded gain (the qrels score itself, not 2^g - 1), discount
//!   log2(rank + 1); the ideal list is every positive judgment of the query,
//!   best grade first, cut at k.
//! - recall@k: relevant documents (grade > 0) in the first k, over all relevant ones.
//! - MRR@k: 1 / rank of the first relevant document in the first k, else 0.
//!
//! A retrieved document without a judgment counts as not relevant. A ranking
//! is taken in the order the system gave it (ties in score are not re-sorted,
//! unlike trec_eval, which breaks them by document id); a document listed twice
//! counts at its first position only, and its repeats take no place.

use std::collections::{HashMap, HashSet};

/// The judgments of one query: document id → graded relevance (≤ 0: not relevant).
pub type Judgments = HashMap<String, i64>;

/// Where the metrics are cut.
pub const NDCG_AT: usize = 10;
pub const RECALL_AT: usize = 100;
pub const MRR_AT: usize = 10;

/// The metrics of one query.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct QueryScores {
    pub ndcg: f64,
    pub recall: f64,
    pub mrr: f64,
}

/// The ranking with repeated documents removed (first position kept).
pub fn dedup<S: AsRef<str>>(ranking: &[S]) -> Vec<&str> {
    let mut seen = HashSet::new();
    ranking
        .iter()
        .map(AsRef::as_ref)
        .filter(|id| seen.insert(*id))
        .collect()
}

fn gain(judgments: &Judgments, doc: &str) -> f64 {
    judgments.get(doc).copied().unwrap_or(0).max(0) as f64
}

fn discount(position: usize) -> f64 {
    // position from 0: rank 1 has discount log2(2) = 1.
    ((position + 2) as f64).log2()
}

/// nDCG@k of a ranking (best first, without repeats). 0 when the query has no
/// relevant document.
pub fn ndcg_at(ranking: &[&str], judgments: &Judgments, k: usize) -> f64 {
    let dcg: f64 = ranking
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, doc)| gain(judgments, doc) / discount(i))
        .sum();
    let mut ideal: Vec<f64> = judgments
        .values()
        .filter(|&&g| g > 0)
        .map(|&g| g as f64)
        .collect();
    ideal.sort_by(|a, b| b.total_cmp(a));
    let idcg: f64 = ideal
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, g)| g / discount(i))
        .sum();
    if idcg > 0.0 { dcg / idcg } else { 0.0 }
}

/// Recall@k: the share of the relevant documents found in the first k.
pub fn recall_at(ranking: &[&str], judgments: &Judgments, k: usize) -> f64 {
    let relevant = judgments.values().filter(|&&g| g > 0).count();
    if relevant == 0 {
        return 0.0;
    }
    let found = ranking
        .iter()
        .take(k)
        .filter(|doc| gain(judgments, doc) > 0.0)
        .count();
    found as f64 / relevant as f64
}

/// Reciprocal rank of the first relevant document within the first k (0 if none).
pub fn reciprocal_rank_at(ranking: &[&str], judgments: &Judgments, k: usize) -> f64 {
    ranking
        .iter()
        .take(k)
        .position(|doc| gain(judgments, doc) > 0.0)
        .map_or(0.0, |i| 1.0 / (i + 1) as f64)
}

/// All metrics of one query, from the ranking as the system returned it.
pub fn evaluate<S: AsRef<str>>(ranking: &[S], judgments: &Judgments) -> QueryScores {
    let ranking = dedup(ranking);
    QueryScores {
        ndcg: ndcg_at(&ranking, judgments, NDCG_AT),
        recall: recall_at(&ranking, judgments, RECALL_AT),
        mrr: reciprocal_rank_at(&ranking, judgments, MRR_AT),
    }
}

/// The mean of each metric over queries (all zero for no query).
pub fn mean(scores: &[QueryScores]) -> QueryScores {
    if scores.is_empty() {
        return QueryScores::default();
    }
    let n = scores.len() as f64;
    QueryScores {
        ndcg: scores.iter().map(|s| s.ndcg).sum::<f64>() / n,
        recall: scores.iter().map(|s| s.recall).sum::<f64>() / n,
        mrr: scores.iter().map(|s| s.mrr).sum::<f64>() / n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged(pairs: &[(&str, i64)]) -> Judgments {
        pairs.iter().map(|(d, g)| (d.to_string(), *g)).collect()
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn perfect_ranking_scores_one() {
        let j = judged(&[("a", 1), ("b", 1)]);
        let s = evaluate(&["a", "b", "x"], &j);
        assert!(close(s.ndcg, 1.0) && close(s.recall, 1.0) && close(s.mrr, 1.0));
    }

    #[test]
    fn binary_ndcg_by_hand() {
        // Relevant: a, b. Ranking: x a y b.
        // DCG = 1/log2(3) + 1/log2(5) = 0.630930 + 0.430677 = 1.061606
        // IDCG = 1 + 1/log2(3) = 1.630930; nDCG = 0.650921
        let j = judged(&[("a", 1), ("b", 1)]);
        let r = ["x", "a", "y", "b"];
        let expected = (1.0 / 3f64.log2() + 1.0 / 5f64.log2()) / (1.0 + 1.0 / 3f64.log2());
        assert!(close(ndcg_at(&dedup(&r), &j, 10), expected));
        assert!((expected - 0.650_921).abs() < 1e-6);
        assert!(close(reciprocal_rank_at(&dedup(&r), &j, 10), 0.5));
        assert!(close(recall_at(&dedup(&r), &j, 100), 1.0));
    }

    #[test]
    fn graded_ndcg_uses_linear_gain_and_ideal_from_all_judgments() {
        // Grades a=2, b=1, c=1 (c never retrieved), d=0. Ranking: b a d.
        // DCG = 1/1 + 2/log2(3) + 0 = 2.261860
        // IDCG = 2/1 + 1/log2(3) + 1/log2(4) = 2 + 0.630930 + 0.5 = 3.130930
        let j = judged(&[("a", 2), ("b", 1), ("c", 1), ("d", 0)]);
        let r = dedup(&["b", "a", "d"]);
        let expected = (1.0 + 2.0 / 3f64.log2()) / (2.0 + 1.0 / 3f64.log2() + 0.5);
        assert!(close(ndcg_at(&r, &j, 10), expected));
        assert!((expected - 0.722_424).abs() < 1e-6);
        // Recall counts grade > 0 only: 2 of 3.
        assert!(close(recall_at(&r, &j, 100), 2.0 / 3.0));
    }

    #[test]
    fn ideal_is_cut_at_k() {
        // 3 relevant documents, k = 2: the ideal list is the best 2 only,
        // so finding 2 of them at the top is perfect.
        let j = judged(&[("a", 1), ("b", 1), ("c", 1)]);
        assert!(close(ndcg_at(&dedup(&["a", "b"]), &j, 2), 1.0));
        assert!(close(recall_at(&dedup(&["a", "b"]), &j, 2), 2.0 / 3.0));
    }

    #[test]
    fn fewer_than_k_hits() {
        // One hit only, not relevant, then nothing: all zero, no panic.
        let j = judged(&[("a", 1)]);
        let s = evaluate(&["x"], &j);
        assert_eq!(s, QueryScores::default());
        // No hits at all.
        let s = evaluate::<&str>(&[], &j);
        assert_eq!(s, QueryScores::default());
        // A relevant document at rank 3 of 3 (k = 10 and 100).
        let s = evaluate(&["x", "y", "a"], &j);
        assert!(close(s.ndcg, 1.0 / 4f64.log2()) && close(s.ndcg, 0.5));
        assert!(close(s.mrr, 1.0 / 3.0) && close(s.recall, 1.0));
    }

    #[test]
    fn unjudged_and_non_positive_judgments_count_as_not_relevant() {
        // "n" is judged -1 and "z" is judged 0: neither adds gain nor hurts.
        let j = judged(&[("a", 1), ("n", -1), ("z", 0)]);
        let s = evaluate(&["n", "z", "unjudged", "a"], &j);
        assert!(close(s.ndcg, 1.0 / 5f64.log2()));
        assert!(close(s.mrr, 0.25));
        assert!(close(s.recall, 1.0));
    }

    #[test]
    fn query_without_relevant_documents_scores_zero() {
        let j = judged(&[("a", 0)]);
        assert_eq!(evaluate(&["a"], &j), QueryScores::default());
        assert_eq!(evaluate(&["a"], &Judgments::new()), QueryScores::default());
    }

    #[test]
    fn ties_in_grade_and_order() {
        // Two documents of equal grade: either order is ideal.
        let j = judged(&[("a", 2), ("b", 2), ("c", 1)]);
        let ab = evaluate(&["a", "b", "c"], &j);
        let ba = evaluate(&["b", "a", "c"], &j);
        assert!(close(ab.ndcg, 1.0) && close(ba.ndcg, 1.0));
        // Swapping unequal grades costs: c first.
        // DCG = 1 + 2/log2(3) + 2/log2(4) = 1 + 1.261860 + 1 = 3.261860
        // IDCG = 2 + 2/log2(3) + 1/log2(4) = 2 + 1.261860 + 0.5 = 3.761860
        let cab = evaluate(&["c", "a", "b"], &j);
        let expected = (1.0 + 2.0 / 3f64.log2() + 1.0) / (2.0 + 2.0 / 3f64.log2() + 0.5);
        assert!(close(cab.ndcg, expected));
        assert!((expected - 0.867_087).abs() < 1e-6);
    }

    #[test]
    fn repeated_documents_count_once_and_take_no_place() {
        // Two chunks of "x" then "a": "a" is at rank 2, not 3.
        let j = judged(&[("a", 1)]);
        let s = evaluate(&["x", "x", "a", "a"], &j);
        assert!(close(s.mrr, 0.5));
        assert!(close(s.ndcg, 1.0 / 3f64.log2()));
        assert!(close(s.recall, 1.0));
    }

    #[test]
    fn cutoffs_apply() {
        // Relevant document at rank 11: outside nDCG@10 and MRR@10, inside recall@100.
        let j = judged(&[("a", 1)]);
        let mut r: Vec<String> = (0..10).map(|i| format!("x{i}")).collect();
        r.push("a".into());
        let s = evaluate(&r, &j);
        assert_eq!((s.ndcg, s.mrr), (0.0, 0.0));
        assert!(close(s.recall, 1.0));
        // And at rank 101: outside recall@100 too.
        let mut r: Vec<String> = (0..100).map(|i| format!("x{i}")).collect();
        r.push("a".into());
        assert!(close(evaluate(&r, &j).recall, 0.0));
    }

    #[test]
    fn mean_over_queries() {
        let m = mean(&[
            QueryScores {
                ndcg: 1.0,
                recall: 1.0,
                mrr: 1.0,
            },
            QueryScores {
                ndcg: 0.0,
                recall: 0.5,
                mrr: 0.25,
            },
        ]);
        assert!(close(m.ndcg, 0.5) && close(m.recall, 0.75) && close(m.mrr, 0.625));
        assert_eq!(mean(&[]), QueryScores::default());
    }
}
