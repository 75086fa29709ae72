//! Confidence: the probability that a hit is relevant, from everything the
//! ranking knows about it (the retrievers' ranks and scores, where the
//! retrievers agree, the signals, its position), by a logistic model fitted on
//! the evaluation data's training queries (`kts-eval --fit-confidence`).

use crate::rank::fuse::Fused;

/// The model's inputs, in the order of [`COEFFICIENTS`].
pub const FEATURES: [&str; 8] = [
    "vector_cosine",
    "vector_rank",
    "bm25_rank",
    "both_retrievers",
    "coverage",
    "title",
    "position",
    "rare_coverage",
];

/// A hit's values of [`FEATURES`].
pub type Features = [f64; FEATURES.len()];
/// A model: intercept, then one coefficient per feature.
pub type Coefficients = [f64; FEATURES.len() + 1];

/// Intercept, then one coefficient per feature: fitted by
/// `kts-eval ../shared/eval/scifact --split train --fit-confidence` (logistic
/// regression on the first 10 hits of its 809 queries, hybrid, default
/// steps). AUROC 0.9116 in sample, 0.9108 under two-fold cross-validation.
pub const COEFFICIENTS: Coefficients = [
    -5.8392, 2.0562, 1.5984, 1.5996, -0.5072, 0.2359, 0.1713, 1.5627, 2.0196,
];

/// The same model fitted on a `--mode bm25` run (`kts-eval
/// ../shared/eval/scifact --split train --modes bm25 --fit-confidence`), for
/// searches without vectors (BM25 mode, or an index without embeddings),
/// whose hits lack vector evidence because none was sought. AUROC 0.8988 in
/// sample, 0.8973 under two-fold cross-validation.
pub const KEYWORD_COEFFICIENTS: Coefficients = [
    -5.9244, 0.0, 0.0, 2.0201, 0.0, 0.2391, 0.9961, 2.195, 3.1057,
];

/// The features of a fused hit at `position` (from 1) of the results.
pub fn features(fused: &Fused, position: usize) -> Features {
    features_of(
        fused
            .signals
            .iter()
            .map(|(name, s)| (name.as_str(), s.rank, s.score)),
        position,
    )
}

/// The features from a hit's signals as (name, rank or 0, score), as
/// kts.hit/1 records carry them.
pub fn features_of<'a>(
    signals: impl Iterator<Item = (&'a str, usize, f64)> + Clone,
    position: usize,
) -> Features {
    let best = |suffix: &str| {
        signals
            .clone()
            .filter(|(name, rank, _)| name.ends_with(suffix) && *rank > 0)
            .min_by_key(|(_, rank, _)| *rank)
            .map(|(_, rank, score)| (rank, score))
    };
    let vector = best("vector");
    let bm25 = best("bm25");
    let signal = |wanted: &str| {
        signals
            .clone()
            .find(|(name, _, _)| *name == wanted)
            .map_or(0.0, |(_, _, score)| score)
    };
    [
        vector.map_or(0.0, |(_, score)| score),
        vector.map_or(0.0, |(rank, _)| 1.0 / rank as f64),
        bm25.map_or(0.0, |(rank, _)| 1.0 / rank as f64),
        f64::from(u8::from(vector.is_some() && bm25.is_some())),
        signal("coverage"),
        signal("title"),
        1.0 / position.max(1) as f64,
        signal("rare_coverage"),
    ]
}

/// The probability that a hit with these features is relevant, found by a
/// search that ran vector search (`vectors_searched`) or not.
pub fn confidence(features: &Features, vectors_searched: bool) -> f64 {
    logistic(coefficients(vectors_searched), features)
}

/// The model of a search that ran vector search or not.
pub fn coefficients(vectors_searched: bool) -> &'static Coefficients {
    match vectors_searched {
        true => &COEFFICIENTS,
        false => &KEYWORD_COEFFICIENTS,
    }
}

/// σ(c₀ + Σ cᵢ xᵢ).
pub fn logistic(coefficients: &Coefficients, features: &Features) -> f64 {
    let z = coefficients[0]
        + features
            .iter()
            .zip(&coefficients[1..])
            .map(|(x, c)| x * c)
            .sum::<f64>();
    1.0 / (1.0 + (-z).exp())
}

/// Confidences of hits in rank order made never to rise down the list: a hit
/// is trusted no more than the hits ranked above it (so that
/// `--min-confidence` keeps a prefix of the ranking). Each value depends on
/// the hits above it alone, not on how many are asked for.
pub fn never_rising(confidences: impl Iterator<Item = f64>) -> impl Iterator<Item = f64> {
    confidences.scan(f64::INFINITY, |ceiling, c| {
        *ceiling = c.min(*ceiling);
        Some(*ceiling)
    })
}

/// The confidence of an answer set: that of its best hit.
pub fn answer_confidence(hits: &[f64]) -> Option<f64> {
    hits.iter().copied().reduce(f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kts_store::Scored;

    fn fused(lists: &[(&str, usize, f64)]) -> Fused {
        Fused {
            rowid: 1,
            score: 0.0,
            signals: lists
                .iter()
                .map(|(name, rank, score)| {
                    (
                        name.to_string(),
                        Scored {
                            rowid: 1,
                            score: *score,
                            rank: *rank,
                        },
                    )
                })
                .collect(),
        }
    }

    #[test]
    fn agreement_and_similarity_raise_confidence() {
        let strong = fused(&[
            ("bm25", 1, 12.0),
            ("vector", 1, 0.8),
            ("coverage", 0, 1.0),
            ("rare_coverage", 0, 1.0),
        ]);
        let weak = fused(&[("bm25", 40, 2.0)]);
        let (strong, weak) = (
            confidence(&features(&strong, 1), true),
            confidence(&features(&weak, 9), true),
        );
        assert!(strong > 0.5 && weak < 0.2, "strong {strong}, weak {weak}");
        assert!((0.0..=1.0).contains(&strong));
    }

    #[test]
    fn a_keyword_search_is_not_blamed_for_the_vector_evidence_it_did_not_seek() {
        let found = features(
            &fused(&[
                ("bm25", 1, 12.0),
                ("coverage", 0, 1.0),
                ("rare_coverage", 0, 1.0),
            ]),
            1,
        );
        let (hybrid, keyword) = (confidence(&found, true), confidence(&found, false));
        assert!(keyword > hybrid, "keyword {keyword}, hybrid {hybrid}");
        assert!(keyword > 0.5, "{keyword}");
    }

    #[test]
    fn the_best_list_rank_counts() {
        let f = features(&fused(&[("bm25", 5, 3.0), ("part1_bm25", 2, 4.0)]), 3);
        assert_eq!(f[2], 0.5);
        assert_eq!(f[3], 0.0);
        assert!((f[6] - 1.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn confidences_never_rise_down_the_list() {
        let ranked = [0.47, 0.69, 0.3, 0.35, 0.1];
        let shown: Vec<f64> = never_rising(ranked.into_iter()).collect();
        assert_eq!(shown, [0.47, 0.47, 0.3, 0.3, 0.1]);
    }
}
