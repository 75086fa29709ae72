//! Reciprocal Rank Fusion of the retrievers' lists, and the best chunk per document.

use std::collections::{BTreeMap, HashMap};

use kts_store::Scored;

/// The RRF constant: a hit at rank r of a list scores 1 / (K + r).
pub const RRF_K: f64 = 60.0;

/// A chunk found by one or more retrievers.
#[derive(Clone, Debug, PartialEq)]
pub struct Fused {
    pub rowid: i64,
    /// The score the results are ordered by (higher is better).
    pub score: f64,
    /// Each list's view of the chunk, by name, plus `rrf` when fused.
    pub signals: BTreeMap<String, Scored>,
}

/// Orders the chunks of one or more named lists. One list keeps its own
/// scores; several are fused with RRF, score = Σ weight / (60 + rank), each
/// list's weight given by `weight_of` its name.
pub fn fuse(lists: &[(String, Vec<Scored>)], weight_of: impl Fn(&str) -> f64) -> Vec<Fused> {
    let fusing = lists.iter().filter(|(_, list)| !list.is_empty()).count() > 1;
    let mut by_rowid: HashMap<i64, Fused> = HashMap::new();
    for (name, list) in lists {
        for scored in list {
            let entry = by_rowid.entry(scored.rowid).or_insert_with(|| Fused {
                rowid: scored.rowid,
                score: 0.0,
                signals: BTreeMap::new(),
            });
            entry.signals.insert(name.clone(), *scored);
            entry.score += if fusing {
                weight_of(name) / (RRF_K + scored.rank as f64)
            } else {
                scored.score
            };
        }
    }
    let mut fused: Vec<Fused> = by_rowid.into_values().collect();
    if fusing {
        for f in &mut fused {
            f.signals.insert(
                "rrf".to_string(),
                Scored {
                    rowid: f.rowid,
                    score: f.score,
                    rank: 0,
                },
            );
        }
    }
    fused.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.rowid.cmp(&b.rowid)));
    fused
}

/// The first `k` results, keeping only the best chunk of each document unless
/// `all_chunks`. `doc_of` names a chunk's document.
pub fn top_k(
    fused: Vec<Fused>,
    k: usize,
    all_chunks: bool,
    mut doc_of: impl FnMut(i64) -> anyhow::Result<Option<String>>,
) -> anyhow::Result<Vec<Fused>> {
    let mut seen = std::collections::HashSet::new();
    let mut kept = Vec::with_capacity(k);
    for f in fused {
        if kept.len() == k {
            break;
        }
        let Some(doc) = doc_of(f.rowid)? else {
            continue;
        };
        if all_chunks || seen.insert(doc) {
            kept.push(f);
        }
    }
    Ok(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(lists: Vec<(&str, Vec<Scored>)>) -> Vec<(String, Vec<Scored>)> {
        lists
            .into_iter()
            .map(|(name, list)| (name.to_string(), list))
            .collect()
    }

    fn list(rowids: &[i64]) -> Vec<Scored> {
        rowids
            .iter()
            .enumerate()
            .map(|(i, &rowid)| Scored {
                rowid,
                score: 10.0 - i as f64,
                rank: i + 1,
            })
            .collect()
    }

    #[test]
    fn rrf_rewards_agreement() {
        let fused = fuse(
            &named(vec![
                ("bm25", list(&[1, 2, 3])),
                ("vector", list(&[3, 1, 4])),
            ]),
            |_| 1.0,
        );
        let order: Vec<i64> = fused.iter().map(|f| f.rowid).collect();
        assert_eq!(order, vec![1, 3, 2, 4]);
        let expected = 1.0 / 61.0 + 1.0 / 62.0;
        assert!((fused[0].score - expected).abs() < 1e-12);
        assert_eq!(fused[0].signals["vector"].rank, 2);
        assert_eq!(fused[0].signals["rrf"].score, fused[0].score);
    }

    #[test]
    fn a_lighter_list_moves_results_less() {
        let lists = named(vec![("bm25", list(&[1, 2])), ("graph", list(&[2]))]);
        let order = |weight: f64| -> Vec<i64> {
            fuse(&lists, |name| if name == "graph" { weight } else { 1.0 })
                .iter()
                .map(|f| f.rowid)
                .collect()
        };
        assert_eq!(order(1.0), [2, 1]);
        assert_eq!(order(0.01), [1, 2]);
    }

    #[test]
    fn one_list_keeps_its_scores() {
        let fused = fuse(
            &named(vec![("bm25", list(&[7, 8])), ("vector", Vec::new())]),
            |_| 1.0,
        );
        assert_eq!(fused[0].score, 10.0);
        assert!(!fused[0].signals.contains_key("rrf"));
    }

    #[test]
    fn dedup_keeps_the_best_chunk_per_document() {
        let fused = fuse(&named(vec![("bm25", list(&[1, 2, 3, 4]))]), |_| 1.0);
        let doc = |rowid: i64| Ok(Some(if rowid <= 2 { "a" } else { "b" }.to_string()));
        let kept: Vec<i64> = top_k(fused.clone(), 10, false, doc)
            .unwrap()
            .iter()
            .map(|f| f.rowid)
            .collect();
        assert_eq!(kept, vec![1, 3]);
        assert_eq!(top_k(fused, 3, true, doc).unwrap().len(), 3);
    }
}
