//! The evaluation report: one JSON object, and a table for humans.

use serde_json::{Value, json};

use crate::ablation::Ablation;
use crate::beir::Query;
use crate::calibration::{self, Fit};
use crate::metrics::{self, MRR_AT, NDCG_AT, QueryScores, RECALL_AT};
use crate::pipeline::{Mode, Run};
use kts_query::rank::confidence;

/// The scores of one retrieval mode.
#[derive(Clone, Debug)]
pub struct ModeReport {
    pub mode: Mode,
    pub queries: usize,
    /// Means over all evaluated queries (a query without hits scores 0).
    pub scores: QueryScores,
    pub queries_without_hits: usize,
    pub errors: usize,
    /// Wall time of the kts-query batch run (start-up included).
    pub query_seconds: f64,
    /// How well the hits' confidence separates relevant from irrelevant
    /// ones among the first 10 of each query.
    pub confidence_auroc: Option<f64>,
    /// How well the answer set's confidence (its best hit's) tells the
    /// queries with a relevant document in their first 10 hits.
    pub answer_auroc: Option<f64>,
    /// How well the answer set's confidence tells each question from the
    /// same question with its relevant documents withheld.
    pub withheld_auroc: Option<f64>,
    /// With --fit-confidence: the confidence model fitted on this run.
    pub confidence_fit: Option<Fit>,
}

impl ModeReport {
    pub fn score(mode: Mode, queries: &[Query], run: &Run) -> Self {
        let mut without_hits = 0;
        let per_query: Vec<QueryScores> = queries
            .iter()
            .map(|q| match run.rankings.get(&q.id) {
                Some(ranking) if !ranking.is_empty() => metrics::evaluate(ranking, &q.judgments),
                _ => {
                    without_hits += 1;
                    QueryScores::default()
                }
            })
            .collect();
        Self {
            mode,
            queries: queries.len(),
            scores: metrics::mean(&per_query),
            queries_without_hits: without_hits,
            errors: run.errors,
            query_seconds: run.seconds,
            confidence_auroc: calibration::confidence_auroc(&calibration::labelled(queries, run)),
            answer_auroc: calibration::answer_auroc(queries, run),
            withheld_auroc: calibration::withheld_auroc(
                queries,
                run,
                confidence::coefficients(mode != Mode::Bm25),
            ),
            confidence_fit: None,
        }
    }

    pub fn ms_per_query(&self) -> f64 {
        if self.queries == 0 {
            0.0
        } else {
            self.query_seconds * 1000.0 / self.queries as f64
        }
    }
}

/// Everything one evaluation measured.
#[derive(Clone, Debug)]
pub struct Report {
    pub dataset: String,
    pub dataset_dir: String,
    pub split: String,
    pub corpus_sha256: String,
    pub documents: usize,
    pub queries: usize,
    pub top_k: u32,
    pub work: String,
    pub index_reused: bool,
    /// Time the index took to build (when reused: when it was built).
    pub index_seconds: f64,
    pub embedded: bool,
    pub chunk_args: Vec<String>,
    /// Extra arguments given to kts-query.
    pub query_args: Vec<String>,
    pub modes: Vec<ModeReport>,
    /// With --steps: each pipeline step on and off.
    pub ablation: Option<Ablation>,
    pub wall_seconds: f64,
}

fn round(x: f64, places: i32) -> f64 {
    let scale = 10f64.powi(places);
    (x * scale).round() / scale
}

impl Report {
    /// The JSON report: `.modes.<mode>["ndcg@10"]` and so on.
    pub fn to_json(&self) -> Value {
        let mut modes = serde_json::Map::new();
        for m in &self.modes {
            modes.insert(
                m.mode.name().into(),
                json!({
                    format!("ndcg@{NDCG_AT}"): round(m.scores.ndcg, 6),
                    format!("recall@{RECALL_AT}"): round(m.scores.recall, 6),
                    format!("mrr@{MRR_AT}"): round(m.scores.mrr, 6),
                    "queries": m.queries,
                    "queries_without_hits": m.queries_without_hits,
                    "errors": m.errors,
                    "query_seconds": round(m.query_seconds, 3),
                    "ms_per_query": round(m.ms_per_query(), 3),
                    "confidence_auroc": m.confidence_auroc.map(|a| round(a, 4)),
                    "answer_confidence_auroc": m.answer_auroc.map(|a| round(a, 4)),
                    "withheld_answer_auroc": m.withheld_auroc.map(|a| round(a, 4)),
                    "confidence_fit": m.confidence_fit.as_ref().map(|f| json!({
                        "coefficients": f.coefficients,
                        "features": kts_query::rank::confidence::FEATURES,
                        "auroc": f.auroc.map(|a| round(a, 4)),
                        "held_out_auroc": f.held_out_auroc.map(|a| round(a, 4)),
                        "hits": f.hits,
                    })),
                }),
            );
        }
        json!({
            "dataset": self.dataset,
            "dataset_dir": self.dataset_dir,
            "split": self.split,
            "corpus_sha256": self.corpus_sha256,
            "documents": self.documents,
            "queries": self.queries,
            "top_k": self.top_k,
            "index": {
                "work": self.work,
                "reused": self.index_reused,
                "seconds": round(self.index_seconds, 3),
                "embedded": self.embedded,
                "chunk_args": self.chunk_args,
            },
            "query_args": self.query_args,
            "modes": modes,
            "steps": self.ablation.as_ref().map(Ablation::to_json),
            "wall_seconds": round(self.wall_seconds, 3),
        })
    }

    /// The table printed on stderr.
    pub fn table(&self) -> String {
        let mut out = format!(
            "kts-eval: {} ({}): {} queries, {} documents; index {} {:.1} s; wall {:.1} s\n",
            self.dataset,
            self.split,
            self.queries,
            self.documents,
            if self.index_reused {
                "reused, built in"
            } else {
                "built in"
            },
            self.index_seconds,
            self.wall_seconds,
        );
        out.push_str(&format!(
            "{:<8} {:>8} {:>11} {:>8} {:>8} {:>9} {:>6} {:>9}\n",
            "mode",
            format!("nDCG@{NDCG_AT}"),
            format!("recall@{RECALL_AT}"),
            format!("MRR@{MRR_AT}"),
            "queries",
            "ms/query",
            "AUROC",
            "withheld"
        ));
        for m in &self.modes {
            out.push_str(&format!(
                "{:<8} {:>8.4} {:>11.4} {:>8.4} {:>8} {:>9.1} {:>6} {:>9}\n",
                m.mode.name(),
                m.scores.ndcg,
                m.scores.recall,
                m.scores.mrr,
                m.queries,
                m.ms_per_query(),
                m.confidence_auroc
                    .map_or("-".to_string(), |a| format!("{a:.3}")),
                m.withheld_auroc
                    .map_or("-".to_string(), |a| format!("{a:.3}"))
            ));
            if let Some(fit) = &m.confidence_fit {
                out.push_str(&format!(
                    "  confidence fit on {} hits (AUROC {}, held out {}): {:?}\n",
                    fit.hits,
                    fit.auroc.map_or("-".to_string(), |a| format!("{a:.4}")),
                    fit.held_out_auroc
                        .map_or("-".to_string(), |a| format!("{a:.4}")),
                    fit.coefficients
                ));
            }
        }
        if let Some(ablation) = &self.ablation {
            out.push_str(&ablation.table());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(id: &str, relevant: &[&str]) -> Query {
        Query {
            id: id.into(),
            text: format!("query {id}"),
            judgments: relevant.iter().map(|d| (d.to_string(), 1)).collect(),
        }
    }

    #[test]
    fn queries_without_hits_score_zero_and_are_counted() {
        let queries = [query("1", &["a"]), query("2", &["b"])];
        let mut run = Run {
            seconds: 2.0,
            ..Run::default()
        };
        run.rankings.insert("1".into(), vec!["a".into()]);
        let m = ModeReport::score(Mode::Bm25, &queries, &run);
        assert_eq!(m.queries, 2);
        assert_eq!(m.queries_without_hits, 1);
        assert!((m.scores.ndcg - 0.5).abs() < 1e-12);
        assert!((m.ms_per_query() - 1000.0).abs() < 1e-9);
        let report = Report {
            dataset: "d".into(),
            dataset_dir: "/d".into(),
            split: "test".into(),
            corpus_sha256: "c".into(),
            documents: 2,
            queries: 2,
            top_k: 100,
            work: "/w".into(),
            index_reused: false,
            index_seconds: 1.0,
            embedded: false,
            chunk_args: vec![],
            query_args: vec![],
            modes: vec![m],
            ablation: None,
            wall_seconds: 3.0,
        };
        let json = report.to_json();
        assert_eq!(json["modes"]["bm25"]["ndcg@10"], 0.5);
        assert_eq!(json["modes"]["bm25"]["queries_without_hits"], 1);
        assert_eq!(json["index"]["reused"], false);
        let table = report.table();
        assert!(table.contains("bm25       0.5000"), "{table}");
    }
}
