//! How well kts-query's confidence separates relevant from irrelevant hits
//! (AUROC over the first hits of every query), and the fit of its model.

use crate::beir::Query;
use crate::metrics::NDCG_AT;
use crate::pipeline::{HitConfidence, Run};
use kts_query::rank::confidence::{Coefficients, answer_confidence, logistic};

/// Hits per query whose confidence is judged: those nDCG@10 sees.
pub const JUDGED_HITS: usize = NDCG_AT;

/// A query's ranked documents and their hits' confidence records, in the
/// same order.
fn ranked<'a>(query: &Query, run: &'a Run) -> Option<(&'a [String], &'a [HitConfidence])> {
    Some((
        run.rankings.get(&query.id)?,
        run.confidences.get(&query.id)?,
    ))
}

fn is_relevant(query: &Query, doc: &str) -> bool {
    query.judgments.get(doc).is_some_and(|&g| g > 0)
}

/// Every judged hit's confidence record and whether it is relevant.
pub fn labelled(queries: &[Query], run: &Run) -> Vec<(HitConfidence, bool)> {
    let mut out = Vec::new();
    for query in queries {
        let Some((docs, confidences)) = ranked(query, run) else {
            continue;
        };
        let mut seen = std::collections::HashSet::new();
        for (doc, confidence) in docs.iter().zip(confidences) {
            if !seen.insert(doc) {
                continue;
            }
            if seen.len() > JUDGED_HITS {
                break;
            }
            let relevant = is_relevant(query, doc);
            out.push((confidence.clone(), relevant));
        }
    }
    out
}

/// What each query's first hits would have been had the scope not held its
/// relevant documents: the question of a user whose answer is not there, in
/// a folder on its subject, whose hits still come first in both lists. The
/// relevant documents' hits are taken out and the others' ranks closed up
/// (position, and the rank in each retriever's list among these hits).
pub fn withheld(queries: &[Query], run: &Run) -> Vec<Vec<HitConfidence>> {
    let mut out = Vec::new();
    for query in queries {
        let Some((docs, confidences)) = ranked(query, run) else {
            continue;
        };
        let (removed, kept): (Vec<_>, Vec<_>) = docs
            .iter()
            .zip(confidences)
            .partition(|(doc, _)| is_relevant(query, doc));
        if removed.is_empty() {
            continue;
        }
        let removed: Vec<&HitConfidence> = removed.into_iter().map(|(_, c)| c).collect();
        let mut seen = std::collections::HashSet::new();
        let hits: Vec<HitConfidence> = kept
            .into_iter()
            .filter(|(doc, _)| seen.insert(*doc))
            .take(JUDGED_HITS)
            .enumerate()
            .map(|(i, (_, hit))| closed_up(hit, &removed, i + 1))
            .collect();
        out.push(hits);
    }
    out
}

/// `hit` at `position`, its retriever ranks raised by the `removed` hits
/// that stood above it (features 1 and 2 are the reciprocal vector and BM25
/// ranks, 6 the reciprocal position).
fn closed_up(hit: &HitConfidence, removed: &[&HitConfidence], position: usize) -> HitConfidence {
    let mut features = hit.features;
    for feature in [1, 2] {
        let Some(rank) = rank_of(features[feature]) else {
            continue;
        };
        let above = removed
            .iter()
            .filter_map(|r| rank_of(r.features[feature]))
            .filter(|&r| r < rank)
            .count();
        features[feature] = 1.0 / (rank - above).max(1) as f64;
    }
    features[6] = 1.0 / position as f64;
    HitConfidence {
        confidence: None,
        features,
    }
}

fn rank_of(reciprocal: f64) -> Option<usize> {
    (reciprocal > 0.0).then(|| (1.0 / reciprocal).round() as usize)
}

/// AUROC of the best hit's confidence, by the model `coefficients`, for
/// telling each question asked of its scope from the same question with its
/// answers withheld ([`withheld`]).
pub fn withheld_auroc(queries: &[Query], run: &Run, coefficients: &Coefficients) -> Option<f64> {
    let best = |hits: &[HitConfidence]| {
        let scores: Vec<f64> = hits
            .iter()
            .take(JUDGED_HITS)
            .map(|h| logistic(coefficients, &h.features))
            .collect();
        answer_confidence(&scores)
    };
    let mut scored = Vec::new();
    for query in queries {
        if let Some(hits) = run.confidences.get(&query.id) {
            scored.extend(best(hits).map(|b| (b, true)));
        }
    }
    for hits in withheld(queries, run) {
        scored.extend(best(&hits).map(|b| (b, false)));
    }
    auroc(&scored)
}

/// The area under the ROC curve of `scores` for telling the `true` ones:
/// the chance a random relevant hit scores above a random irrelevant one
/// (ties count half). `None` without both kinds.
pub fn auroc(scored: &[(f64, bool)]) -> Option<f64> {
    let positives = scored.iter().filter(|(_, p)| *p).count();
    let negatives = scored.len() - positives;
    if positives == 0 || negatives == 0 {
        return None;
    }
    let mut sorted: Vec<(f64, bool)> = scored.to_vec();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    // Sum of the positives' ranks (1-based, ties averaged): Mann–Whitney U.
    let mut rank_sum = 0.0;
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j < sorted.len() && sorted[j].0 == sorted[i].0 {
            j += 1;
        }
        let average_rank = (i + 1 + j) as f64 / 2.0;
        rank_sum += average_rank * sorted[i..j].iter().filter(|(_, p)| *p).count() as f64;
        i = j;
    }
    let p = positives as f64;
    Some((rank_sum - p * (p + 1.0) / 2.0) / (p * negatives as f64))
}

/// AUROC of the confidences kts-query reported.
pub fn confidence_auroc(labelled: &[(HitConfidence, bool)]) -> Option<f64> {
    let scored: Vec<(f64, bool)> = labelled
        .iter()
        .filter_map(|(c, relevant)| c.confidence.map(|c| (c, *relevant)))
        .collect();
    auroc(&scored)
}

/// A fitted logistic model: intercept then one coefficient per feature, and
/// the AUROC it reaches on the data it was fitted on.
#[derive(Clone, Debug, PartialEq)]
pub struct Fit {
    pub coefficients: Coefficients,
    pub auroc: Option<f64>,
    /// AUROC of two-fold cross-validation: each half of the queries scored
    /// by the model fitted on the other half.
    pub held_out_auroc: Option<f64>,
    pub hits: usize,
}

/// Logistic regression by full-batch gradient descent with a little L2
/// (features are all in [0, 1], so no scaling is needed), with its AUROC in
/// sample and under two-fold cross-validation (`labelled` in query order).
pub fn fit(labelled: &[(HitConfidence, bool)]) -> Fit {
    let coefficients = coefficients(labelled);
    let (first, second) = labelled.split_at(labelled.len() / 2);
    let mut held_out = scored(first, &self::coefficients(second));
    held_out.extend(scored(second, &self::coefficients(first)));
    Fit {
        coefficients: coefficients.map(|x| (x * 1e4).round() / 1e4),
        auroc: auroc(&scored(labelled, &coefficients)),
        held_out_auroc: auroc(&held_out),
        hits: labelled.len(),
    }
}

fn coefficients(labelled: &[(HitConfidence, bool)]) -> Coefficients {
    const STEPS: usize = 4000;
    const LEARNING_RATE: f64 = 0.5;
    const L2: f64 = 1e-4;
    let n = labelled.len().max(1) as f64;
    let mut c = Coefficients::default();
    for _ in 0..STEPS {
        let mut gradient = Coefficients::default();
        for (hit, relevant) in labelled {
            let p = logistic(&c, &hit.features);
            let error = p - f64::from(u8::from(*relevant));
            gradient[0] += error;
            for (g, x) in gradient[1..].iter_mut().zip(&hit.features) {
                *g += error * x;
            }
        }
        for (i, (ci, g)) in c.iter_mut().zip(gradient).enumerate() {
            let penalty = if i == 0 { 0.0 } else { L2 * *ci };
            *ci -= LEARNING_RATE * (g / n + penalty);
        }
    }
    c
}

fn scored(labelled: &[(HitConfidence, bool)], c: &Coefficients) -> Vec<(f64, bool)> {
    labelled
        .iter()
        .map(|(hit, relevant)| (logistic(c, &hit.features), *relevant))
        .collect()
}

/// AUROC of the answer sets' confidence (their best hit's) for telling the
/// queries with a relevant document among their first 10 hits.
pub fn answer_auroc(queries: &[Query], run: &Run) -> Option<f64> {
    let mut scored = Vec::new();
    for query in queries {
        let Some((docs, confidences)) = ranked(query, run) else {
            continue;
        };
        let best = confidences
            .iter()
            .take(JUDGED_HITS)
            .filter_map(|c| c.confidence)
            .reduce(f64::max);
        let answered = docs.iter().take(JUDGED_HITS).any(|d| is_relevant(query, d));
        scored.extend(best.map(|b| (b, answered)));
    }
    auroc(&scored)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kts_query::rank::confidence::Features;

    #[test]
    fn auroc_by_hand() {
        assert_eq!(auroc(&[(0.9, true), (0.1, false)]), Some(1.0));
        assert_eq!(auroc(&[(0.1, true), (0.9, false)]), Some(0.0));
        assert_eq!(auroc(&[(0.5, true), (0.5, false)]), Some(0.5));
        // 2 positives, 2 negatives, one pair out of order: 3 of 4 pairs right.
        let scored = [(0.9, true), (0.3, true), (0.5, false), (0.1, false)];
        assert_eq!(auroc(&scored), Some(0.75));
        assert_eq!(auroc(&[(0.5, true)]), None);
    }

    #[test]
    fn a_withheld_answer_leaves_the_other_hits_closed_up() {
        // Features: cosine, 1/vector rank, 1/BM25 rank, both, coverage, title, 1/position,
        // rare coverage.
        let hit = |vector: f64, bm25: f64, position: f64| HitConfidence {
            confidence: Some(0.5),
            features: [0.7, 1.0 / vector, bm25, 1.0, 0.5, 0.0, 1.0 / position, 0.4],
        };
        let query = Query {
            id: "q".into(),
            text: "question".into(),
            judgments: [("answer".to_string(), 1)].into_iter().collect(),
        };
        let mut run = Run::default();
        run.rankings.insert(
            "q".into(),
            ["answer", "other", "answer", "third"]
                .map(String::from)
                .to_vec(),
        );
        run.confidences.insert(
            "q".into(),
            vec![
                hit(1.0, 1.0, 1.0),
                hit(3.0, 0.0, 2.0),
                hit(2.0, 0.5, 3.0),
                hit(5.0, 1.0 / 3.0, 4.0),
            ],
        );
        let withheld = withheld(std::slice::from_ref(&query), &run);
        assert_eq!(withheld.len(), 1);
        let features: Vec<Features> = withheld[0].iter().map(|h| h.features).collect();
        // "other": vector rank 3 behind both answer chunks → 1, no BM25 rank, first.
        assert_eq!(features[0], [0.7, 1.0, 0.0, 1.0, 0.5, 0.0, 1.0, 0.4]);
        // "third": vector 5 → 3, BM25 3 → 1, second.
        assert_eq!(features[1], [0.7, 1.0 / 3.0, 1.0, 1.0, 0.5, 0.0, 0.5, 0.4]);
    }

    #[test]
    fn the_fit_learns_a_separating_feature() {
        let hit = |x: f64| HitConfidence {
            confidence: None,
            features: [x, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 0.0],
        };
        let data: Vec<(HitConfidence, bool)> = (0..40)
            .map(|i| {
                let x = i as f64 / 40.0;
                (hit(x), x > 0.6)
            })
            .collect();
        let fit = fit(&data);
        assert!(fit.coefficients[1] > 1.0, "{fit:?}");
        assert_eq!(fit.auroc, Some(1.0));
    }
}
