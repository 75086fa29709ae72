//! `--steps`: each step of kts-query's pipeline measured on and off, against
//! the plain search (every step off) and the default pipeline.

use std::path::Path;

use clap::ValueEnum;
use kts_query::Step;
use serde_json::{Value, json};

use crate::beir::Query;
use crate::metrics::{self, NDCG_AT, QueryScores};
use crate::pipeline::{Mode, QuerySettings, Tools, run_queries};

/// One step's effect.
#[derive(Clone, Debug, PartialEq)]
pub struct StepEffect {
    pub step: Step,
    pub on_by_default: bool,
    /// nDCG@10 of the default pipeline with the step on, and with it off.
    pub on: f64,
    pub off: f64,
    /// Added time per query of having the step on, in milliseconds.
    pub ms_per_query: f64,
}

/// The ablation of one mode.
#[derive(Clone, Debug, PartialEq)]
pub struct Ablation {
    pub mode: Mode,
    /// nDCG@10 with every step off: plain retrieval, fused.
    pub plain: f64,
    pub plain_ms_per_query: f64,
    /// nDCG@10 with the default steps.
    pub default: f64,
    pub default_ms_per_query: f64,
    pub steps: Vec<StepEffect>,
}

/// Every step's flag value, comma-separated.
fn all_steps() -> String {
    Step::value_variants()
        .iter()
        .map(|s| s.name())
        .collect::<Vec<_>>()
        .join(",")
}

/// Runs the queries once per variant: plain, default, and each step switched.
pub fn measure(
    tools: &Tools,
    work: &Path,
    base: &QuerySettings,
    queries: &[Query],
    warn: &dyn Fn(&str),
) -> anyhow::Result<Ablation> {
    let asked: Vec<(String, String)> = queries
        .iter()
        .map(|q| (q.id.clone(), q.text.clone()))
        .collect();
    let score = |extra: Vec<String>| -> anyhow::Result<(f64, f64)> {
        let mut settings = base.clone();
        settings.extra_args.extend(extra);
        let run = run_queries(tools, work, &settings, &asked, None, warn)?;
        let per_query: Vec<QueryScores> = queries
            .iter()
            .map(|q| match run.rankings.get(&q.id) {
                Some(ranking) => metrics::evaluate(ranking, &q.judgments),
                None => QueryScores::default(),
            })
            .collect();
        let ms = run.seconds * 1000.0 / queries.len().max(1) as f64;
        Ok((metrics::mean(&per_query).ndcg, ms))
    };
    let (plain, plain_ms) = score(vec![format!("--without={}", all_steps())])?;
    let (default, default_ms) = score(Vec::new())?;
    let mut steps = Vec::new();
    for &step in Step::value_variants() {
        let on_by_default = step.on_by_default();
        let switch = if on_by_default { "--without" } else { "--with" };
        let (switched, switched_ms) = score(vec![format!("{switch}={}", step.name())])?;
        let (on, off, ms_on, ms_off) = if on_by_default {
            (default, switched, default_ms, switched_ms)
        } else {
            (switched, default, switched_ms, default_ms)
        };
        steps.push(StepEffect {
            step,
            on_by_default,
            on,
            off,
            ms_per_query: ms_on - ms_off,
        });
    }
    Ok(Ablation {
        mode: base.mode,
        plain,
        plain_ms_per_query: plain_ms,
        default,
        default_ms_per_query: default_ms,
        steps,
    })
}

impl Ablation {
    pub fn to_json(&self) -> Value {
        let round = |x: f64| (x * 1e4).round() / 1e4;
        json!({
            "mode": self.mode.name(),
            "metric": format!("ndcg@{NDCG_AT}"),
            "plain": round(self.plain),
            "plain_ms_per_query": round(self.plain_ms_per_query),
            "default": round(self.default),
            "default_ms_per_query": round(self.default_ms_per_query),
            "steps": self.steps.iter().map(|s| json!({
                "step": s.step.name(),
                "default": if s.on_by_default { "on" } else { "off" },
                "on": round(s.on),
                "off": round(s.off),
                "delta": round(s.on - s.off),
                "ms_per_query": round(s.ms_per_query),
            })).collect::<Vec<_>>(),
        })
    }

    pub fn table(&self) -> String {
        let mut out = format!(
            "steps ({}, nDCG@{NDCG_AT}): plain {:.4} ({:.1} ms/query), default {:.4} ({:.1} ms/query)\n",
            self.mode.name(),
            self.plain,
            self.plain_ms_per_query,
            self.default,
            self.default_ms_per_query
        );
        out.push_str(&format!(
            "  {:<10} {:>7} {:>8} {:>8} {:>8} {:>9}\n",
            "step", "default", "on", "off", "delta", "+ms/query"
        ));
        for s in &self.steps {
            out.push_str(&format!(
                "  {:<10} {:>7} {:>8.4} {:>8.4} {:>+8.4} {:>+9.1}\n",
                s.step.name(),
                if s.on_by_default { "on" } else { "off" },
                s.on,
                s.off,
                s.on - s.off,
                s.ms_per_query
            ));
        }
        out
    }
}
