//! Fusion of the retrievers' lists into one order, and the best chunk per
//! document.

use std::collections::{BTreeMap, HashMap};

use clap::ValueEnum;
use kts_store::Scored;

/// The RRF constant: a hit at rank r of a list scores 1 / (K + r).
pub const RRF_K: f64 = 60.0;

/// How several lists become one order.
#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Fusion {
    /// Each list's scores scaled to [0, 1] over the list (its best 1, its
    /// last 0), then summed with the lists' weights: a clear lead in one list
    /// counts, a near tie does not.
    #[default]
    Convex,
    /// As convex, but each list scaled by its scores' standard deviation
    /// instead of their range: a hit far above the rest of its list counts
    /// more than a near tie at the top of an even one.
    Zscore,
    /// Reciprocal Rank Fusion: Σ weight / (60 + rank), ranks only.
    Rrf,
}

impl Fusion {
    /// The name of the fused score among a hit's signals.
    pub fn name(self) -> &'static str {
        match self {
            Fusion::Convex => "convex",
            Fusion::Rrf => "rrf",
            Fusion::Zscore => "zscore",
        }
    }
}

/// A chunk found by one or more retrievers.
#[derive(Clone, Debug, PartialEq)]
pub struct Fused {
    pub rowid: i64,
    /// The score the results are ordered by (higher is better).
    pub score: f64,
    /// Each list's view of the chunk, by name, plus the fused score under
    /// the fusion's name when there were several lists.
    pub signals: BTreeMap<String, Scored>,
}

/// Orders the chunks of one or more named lists, each asked for `depth`
/// hits. One list keeps its own scores; several are fused by `fusion`, each
/// list's part multiplied by the weight `weight_of` gives its name.
pub fn fuse(
    lists: &[(String, Vec<Scored>)],
    fusion: Fusion,
    depth: usize,
    weight_of: impl Fn(&str) -> f64,
) -> Vec<Fused> {
    let fusing = lists.iter().filter(|(_, list)| !list.is_empty()).count() > 1;
    let mut by_rowid: HashMap<i64, Fused> = HashMap::new();
    for (name, list) in lists {
        let part = part_of(list, fusion, depth);
        for scored in list {
            let entry = by_rowid.entry(scored.rowid).or_insert_with(|| Fused {
                rowid: scored.rowid,
                score: 0.0,
                signals: BTreeMap::new(),
            });
            entry.signals.insert(name.clone(), *scored);
            entry.score += if fusing {
                weight_of(name) * part(scored)
            } else {
                scored.score
            };
        }
    }
    let mut fused: Vec<Fused> = by_rowid.into_values().collect();
    if fusing {
        for f in &mut fused {
            f.signals.insert(
                fusion.name().to_string(),
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

/// A hit's part in the fused score, before its list's weight.
///
/// Convex fusion scales a list from its best score down to a floor: its last
/// score when the retriever was cut off at `depth` (what it did not return
/// scores lower still), and 0 (no match at all) below a list that ended
/// sooner, having returned every match: its last hit matched, weakly or not.
fn part_of(list: &[Scored], fusion: Fusion, depth: usize) -> impl Fn(&Scored) -> f64 {
    let best = list.iter().map(|s| s.score).fold(f64::MIN, f64::max);
    let mut last = list.iter().map(|s| s.score).fold(f64::MAX, f64::min);
    if list.len() < depth {
        last = last.min(0.0);
    }
    // What a hit's distance above the floor is measured in.
    let spread = match fusion {
        Fusion::Convex => best - last,
        Fusion::Zscore => standard_deviation(list),
        Fusion::Rrf => 0.0,
    };
    move |scored| match fusion {
        Fusion::Rrf => 1.0 / (RRF_K + scored.rank as f64),
        _ if spread > 0.0 => (scored.score - last) / spread,
        _ => 1.0,
    }
}

fn standard_deviation(list: &[Scored]) -> f64 {
    let n = list.len().max(1) as f64;
    let mean = list.iter().map(|s| s.score).sum::<f64>() / n;
    (list.iter().map(|s| (s.score - mean).powi(2)).sum::<f64>() / n).sqrt()
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
            Fusion::Rrf,
            100,
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
            fuse(&lists, Fusion::Rrf, 100, |name| {
                if name == "graph" { weight } else { 1.0 }
            })
            .iter()
            .map(|f| f.rowid)
            .collect()
        };
        assert_eq!(order(1.0), [2, 1]);
        assert_eq!(order(0.01), [1, 2]);
    }

    #[test]
    fn one_list_keeps_its_scores() {
        for fusion in [Fusion::Convex, Fusion::Rrf] {
            let fused = fuse(
                &named(vec![("bm25", list(&[7, 8])), ("vector", Vec::new())]),
                fusion,
                100,
                |_| 1.0,
            );
            assert_eq!(fused[0].score, 10.0);
            assert!(!fused[0].signals.contains_key(fusion.name()));
        }
    }

    fn scored(pairs: &[(i64, f64)]) -> Vec<Scored> {
        pairs
            .iter()
            .enumerate()
            .map(|(i, &(rowid, score))| Scored {
                rowid,
                score,
                rank: i + 1,
            })
            .collect()
    }

    #[test]
    fn convex_fusion_counts_a_clear_lead_where_rrf_sees_only_ranks() {
        // BM25 finds chunk 1 far ahead of the rest; the vectors put it third
        // of a near tie.
        let lists = named(vec![
            ("bm25", scored(&[(1, 30.0), (2, 6.0), (3, 5.0), (4, 1.0)])),
            (
                "vector",
                scored(&[(2, 0.61), (3, 0.605), (1, 0.60), (4, 0.30)]),
            ),
        ]);
        let order = |fusion| -> Vec<i64> {
            fuse(&lists, fusion, 4, |_| 1.0)
                .iter()
                .map(|f| f.rowid)
                .collect()
        };
        assert_eq!(order(Fusion::Convex), [1, 2, 3, 4]);
        assert_eq!(order(Fusion::Rrf), [2, 1, 3, 4]);
        let fused = fuse(&lists, Fusion::Convex, 4, |_| 1.0);
        // Chunk 1: 1 from BM25 (its best), (0.60 − 0.30) / 0.31 from vectors.
        let expected = 1.0 + 0.30 / 0.31;
        assert!((fused[0].score - expected).abs() < 1e-9);
        assert_eq!(fused[0].signals["convex"].score, fused[0].score);
        assert_eq!(fused[3].score, 0.0, "last in both lists");
    }

    #[test]
    fn zscore_fusion_counts_a_lead_by_how_far_it_stands_out() {
        // BM25's list falls off evenly; the vectors' best (chunk 100) stands
        // far above the rest. Chunk 1 leads BM25 and is also among the vectors,
        // near their end.
        let bm25: Vec<(i64, f64)> = (0..20).map(|i| (1 + i, 1.0 - 0.01 * i as f64)).collect();
        let mut vector = vec![(100, 10.0)];
        vector.extend((0..19).map(|i| (if i == 17 { 1 } else { 101 + i }, 1.0 - 0.05 * i as f64)));
        let lists = named(vec![("bm25", scored(&bm25)), ("vector", scored(&vector))]);
        let first = |fusion| fuse(&lists, fusion, 20, |_| 1.0)[0].rowid;
        assert_eq!(first(Fusion::Convex), 1, "1 plus a little against 1");
        assert_eq!(first(Fusion::Zscore), 100, "4.8 deviations against 3.3");
    }

    #[test]
    fn convex_fusion_of_a_list_of_equal_scores_gives_each_a_whole_part() {
        let lists = named(vec![
            ("bm25", scored(&[(1, 2.0), (2, 2.0)])),
            ("vector", scored(&[(2, 0.9), (3, 0.5)])),
        ]);
        let fused = fuse(&lists, Fusion::Convex, 2, |_| 1.0);
        assert_eq!(fused[0].rowid, 2);
        assert_eq!(fused[0].score, 2.0);
        assert_eq!(fused[1].score, 1.0);
    }

    #[test]
    fn a_list_holding_every_match_scales_down_to_no_match() {
        // BM25 matched two chunks of a small scope, both: the second matched
        // too and keeps two thirds of the best one's part.
        let lists = named(vec![
            ("bm25", scored(&[(1, 6.0), (2, 4.0)])),
            ("vector", scored(&[(2, 0.5), (3, 0.45), (1, 0.2)])),
        ]);
        let fused = fuse(&lists, Fusion::Convex, 3, |_| 1.0);
        let score = |rowid| fused.iter().find(|f| f.rowid == rowid).unwrap().score;
        assert!((score(2) - (4.0 / 6.0 + 1.0)).abs() < 1e-9);
        assert!((score(1) - 1.0).abs() < 1e-9);
    }

    #[test]
    fn dedup_keeps_the_best_chunk_per_document() {
        let fused = fuse(
            &named(vec![("bm25", list(&[1, 2, 3, 4]))]),
            Fusion::Convex,
            100,
            |_| 1.0,
        );
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
