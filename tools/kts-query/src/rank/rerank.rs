//! Reranking: the best fused candidates are scored again, by an outside
//! command (they go to it as JSON lines, it answers one score per candidate)
//! or by a cross-encoder model (a `"kind": "reranker"` manifest, run
//! in-process through ONNX Runtime), and the final order blends those scores
//! with the fused ones. Any failure (the command missing, failing, slow, or
//! answering the wrong number of scores; the model failing) leaves the fused
//! order and is reported, never fatal: a reranker improves an answer, it does
//! not gate it.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use anyhow::Context;
use kts_cli::child::{self, ChildError};
use kts_embed::{CrossEncoder, Manifest};
use kts_record::{HitRecord, Signal};
use kts_store::{Hit, Scored};
use serde::Serialize;
use serde_json::Value;

use crate::rank::fuse::Fused;

/// The most a reranker may print: far more than scores need.
const MAX_OUTPUT_BYTES: usize = 16 << 20;

/// A reranker and how its scores are used.
#[derive(Clone, Debug, PartialEq)]
pub struct Reranker {
    pub by: RerankBy,
    /// How many of the best fused chunks it scores.
    pub top: usize,
    /// Its share of the final score, in [0, 1]; the fused score has the rest.
    pub weight: f64,
}

/// What scores the candidates.
#[derive(Clone, Debug, PartialEq)]
pub enum RerankBy {
    /// A command, run with `sh -c`, and the time it has per question.
    Command { command: String, timeout: Duration },
    /// A cross-encoder: a manifest's id in the models folder (`None`: the
    /// project's), or the path of a manifest file.
    Model {
        model: String,
        models_dir: Option<PathBuf>,
        threads: usize,
    },
}

impl fmt::Display for RerankBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RerankBy::Command { command, .. } => write!(f, "the command {command:?}"),
            RerankBy::Model { model, .. } => write!(f, "the model {model}"),
        }
    }
}

/// The cross-encoders this process has loaded, by the models folder and the
/// model asked: a model is loaded once however many questions, scopes and
/// threads use it.
type Loaded = HashMap<(Option<PathBuf>, String), Arc<Mutex<CrossEncoder>>>;
static LOADED: LazyLock<Mutex<Loaded>> = LazyLock::new(Mutex::default);

impl RerankBy {
    /// Loads the model (once per process); a command needs nothing. An
    /// error here is the user's to fix (a wrong id, files not fetched).
    pub fn prepare(&self) -> anyhow::Result<()> {
        self.cross_encoder().map(|_| ())
    }

    fn cross_encoder(&self) -> anyhow::Result<Option<Arc<Mutex<CrossEncoder>>>> {
        let RerankBy::Model {
            model,
            models_dir,
            threads,
        } = self
        else {
            return Ok(None);
        };
        let key = (models_dir.clone(), model.clone());
        let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(encoder) = loaded.get(&key) {
            return Ok(Some(encoder.clone()));
        }
        let encoder = manifest(model, models_dir.as_deref())
            .and_then(|manifest| CrossEncoder::from_manifest(manifest, *threads))
            .with_context(|| format!("loading the reranker {model}"))?;
        let encoder = Arc::new(Mutex::new(encoder));
        loaded.insert(key, encoder.clone());
        Ok(Some(encoder))
    }
}

/// The reranker's manifest: a file named by its path, or an id in the models folder.
fn manifest(model: &str, models_dir: Option<&Path>) -> anyhow::Result<Manifest> {
    if model.ends_with(".json") || model.contains('/') {
        return Manifest::load_file(Path::new(model));
    }
    let dir = match models_dir {
        Some(dir) => dir.to_path_buf(),
        None => kts_embed::default_models_dir().context(
            "no models folder found next to the executable: pass --models DIR, \
             or the reranker's manifest file",
        )?,
    };
    Manifest::load(&dir, model)
}

/// One candidate as the reranker reads it (a command, as a JSON line).
#[derive(Serialize)]
struct Candidate<'a> {
    query: &'a str,
    id: &'a str,
    /// Over a knowledge root: the hit's scope.
    #[serde(skip_serializing_if = "str::is_empty")]
    scope: &'a str,
    path: &'a str,
    title: &'a str,
    heading_path: &'a [String],
    text: &'a str,
    score: f64,
}

impl Candidate<'_> {
    /// What a cross-encoder reads: the document's title, then the text.
    fn passage(&self) -> String {
        if self.title.is_empty() || self.text.starts_with(self.title) {
            self.text.to_string()
        } else {
            format!("{}\n{}", self.title, self.text)
        }
    }
}

impl Reranker {
    /// Reorders the first `top` of `fused` (best first, `hits` holding their
    /// text) by the blend of the reranker's scores and the fused ones; the
    /// rest follow. Returns how many it scored (none when there are fewer
    /// than two: one order is as good as another), or what went wrong,
    /// leaving `fused` as it was.
    pub fn rerank(
        &self,
        question: &str,
        fused: &mut [Fused],
        hits: &[Hit],
    ) -> Result<usize, String> {
        let by_rowid: HashMap<i64, &Hit> = hits.iter().map(|h| (h.rowid, h)).collect();
        let count = fused.len().min(self.top);
        let seen: Vec<(usize, &Hit)> = fused[..count]
            .iter()
            .enumerate()
            .filter_map(|(i, f)| Some((i, *by_rowid.get(&f.rowid)?)))
            .collect();
        let candidates: Vec<Candidate> = seen
            .iter()
            .map(|&(i, hit)| Candidate {
                query: question,
                id: &hit.chunk_id,
                scope: "",
                path: &hit.path,
                title: &hit.title,
                heading_path: &hit.heading_path,
                text: &hit.text,
                score: fused[i].score,
            })
            .collect();
        let Some(scores) = self.scores(&candidates)? else {
            return Ok(0);
        };
        let mut reranked = vec![None; fused.len()];
        for (&(i, _), score) in seen.iter().zip(scores) {
            reranked[i] = Some(score);
        }
        let fused_scores: Vec<f64> = fused.iter().map(|f| f.score).collect();
        let blended = blend(&fused_scores, &reranked, self.weight);
        for ((f, score), raw) in fused.iter_mut().zip(blended).zip(&reranked) {
            f.score = score;
            if let Some(raw) = *raw {
                let signal = Scored {
                    rowid: f.rowid,
                    score: raw,
                    rank: 0,
                };
                f.signals.insert("rerank".to_string(), signal);
            }
        }
        fused.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.rowid.cmp(&b.rowid)));
        Ok(seen.len())
    }

    /// The same over hits merged from several scopes (their `score` the
    /// merged one), so that the reranker's scores, which mean the same in
    /// every scope, order them all; ranks are numbered again.
    pub fn rerank_records(&self, question: &str, hits: &mut [HitRecord]) -> Result<usize, String> {
        let count = hits.len().min(self.top);
        let candidates: Vec<Candidate> = hits[..count]
            .iter()
            .map(|hit| Candidate {
                query: question,
                id: &hit.chunk_id,
                scope: &hit.scope,
                path: &hit.path,
                title: &hit.title,
                heading_path: &hit.heading_path,
                text: &hit.text,
                score: hit.score,
            })
            .collect();
        let Some(scores) = self.scores(&candidates)? else {
            return Ok(0);
        };
        let mut reranked: Vec<Option<f64>> = scores.into_iter().map(Some).collect();
        reranked.resize(hits.len(), None);
        let merged: Vec<f64> = hits.iter().map(|h| h.score).collect();
        let blended = blend(&merged, &reranked, self.weight);
        for ((hit, score), raw) in hits.iter_mut().zip(blended).zip(&reranked) {
            hit.score = score;
            if let Some(raw) = *raw {
                let signal = Signal {
                    rank: None,
                    score: raw,
                };
                hit.signals.insert("rerank".to_string(), signal);
            }
        }
        hits.sort_by(|a, b| b.score.total_cmp(&a.score));
        for (i, hit) in hits.iter_mut().enumerate() {
            hit.rank = i + 1;
        }
        Ok(count)
    }

    /// The reranker's scores for the candidates, in their order; none for
    /// fewer than two.
    fn scores(&self, candidates: &[Candidate]) -> Result<Option<Vec<f64>>, String> {
        if candidates.len() < 2 {
            return Ok(None);
        }
        let scores = match &self.by {
            RerankBy::Command { command, timeout } => {
                command_scores(command, *timeout, candidates)?
            }
            RerankBy::Model { .. } => self
                .model_scores(candidates)
                .map_err(|e| format!("{e:#}"))?,
        };
        Ok(Some(scores))
    }

    /// The model's scores for the candidates, in their order.
    fn model_scores(&self, candidates: &[Candidate]) -> anyhow::Result<Vec<f64>> {
        let encoder = self.by.cross_encoder()?.context("not a model")?;
        let mut encoder = encoder.lock().unwrap_or_else(|e| e.into_inner());
        let passages: Vec<String> = candidates.iter().map(Candidate::passage).collect();
        let passages: Vec<&str> = passages.iter().map(String::as_str).collect();
        let question = candidates.first().map_or("", |c| c.query);
        let scores = encoder.score(question, &passages)?;
        if let Some(bad) = scores.iter().find(|s| !s.is_finite()) {
            anyhow::bail!("it gave a score of {bad}");
        }
        Ok(scores.into_iter().map(f64::from).collect())
    }
}

/// A command's scores for the candidates, in their order.
fn command_scores(
    command: &str,
    timeout: Duration,
    candidates: &[Candidate],
) -> Result<Vec<f64>, String> {
    let mut input = Vec::new();
    for candidate in candidates {
        serde_json::to_writer(&mut input, candidate).map_err(|e| e.to_string())?;
        input.push(b'\n');
    }
    let mut child = Command::new("sh");
    child.arg("-c").arg(command);
    let output = child::output_fed(&mut child, Some(input), timeout, MAX_OUTPUT_BYTES).map_err(
        |e| match e {
            ChildError::NotFound(e) => format!("cannot run sh: {e}"),
            ChildError::TimedOut => format!("no answer within {timeout:?}"),
            ChildError::Failed(why) => format!("it failed ({why})"),
        },
    )?;
    let text = String::from_utf8_lossy(&output);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.len() != candidates.len() {
        return Err(format!(
            "it answered {} scores for {} candidates",
            lines.len(),
            candidates.len()
        ));
    }
    lines
        .iter()
        .zip(candidates)
        .enumerate()
        .map(|(i, (line, candidate))| {
            parse_score(line, candidate.id).map_err(|why| format!("line {}: {why}", i + 1))
        })
        .collect()
}

/// A score line: a number, or an object with a numeric `score` (and, if it
/// has an `id`, the candidate's).
fn parse_score(line: &str, id: &str) -> Result<f64, String> {
    let value: Value = serde_json::from_str(line.trim())
        .map_err(|_| format!("{line:?} is neither a number nor a JSON object"))?;
    let score = match &value {
        Value::Number(n) => n.as_f64(),
        Value::Object(object) => {
            if let Some(given) = object.get("id")
                && given.as_str() != Some(id)
            {
                return Err(format!("the score of {given} came where {id:?} was asked"));
            }
            object.get("score").and_then(Value::as_f64)
        }
        _ => None,
    };
    score
        .filter(|s| s.is_finite())
        .ok_or_else(|| format!("{line:?} holds no finite score"))
}

/// The blended scores: (1 − weight) × the fused score + weight × the
/// reranker's, each scaled to [0, 1] over the reranked candidates; one the
/// reranker did not see counts as given its lowest score, so it stays below
/// those it did.
fn blend(fused: &[f64], reranked: &[Option<f64>], weight: f64) -> Vec<f64> {
    let scale = |values: &mut dyn Iterator<Item = f64>| {
        let (low, high) = values.fold((f64::MAX, f64::MIN), |(l, h), v| (l.min(v), h.max(v)));
        move |v: f64| {
            if high > low {
                (v - low) / (high - low)
            } else {
                1.0
            }
        }
    };
    let in_fused = scale(
        &mut fused
            .iter()
            .zip(reranked)
            .filter(|(_, r)| r.is_some())
            .map(|(f, _)| *f),
    );
    let in_reranker = scale(&mut reranked.iter().flatten().copied());
    fused
        .iter()
        .zip(reranked)
        .map(|(&f, r)| (1.0 - weight) * in_fused(f) + weight * r.map_or(0.0, &in_reranker))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The order (indexes, best first) the blended scores give.
    fn order(scores: &[f64]) -> Vec<usize> {
        let mut order: Vec<usize> = (0..scores.len()).collect();
        order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
        order
    }

    #[test]
    fn the_blend_weighs_the_reranker_against_the_fused_order() {
        let fused = [2.0, 1.5, 1.0, 0.9];
        let reranked = [Some(-3.0), Some(5.0), Some(1.0), None];
        assert_eq!(order(&blend(&fused, &reranked, 1.0)), [1, 2, 0, 3]);
        assert_eq!(order(&blend(&fused, &reranked, 0.0)), [0, 1, 2, 3]);
        // Half and half: the second gets 0.5 × 0.5 + 0.5 × 1, the first 0.5 × 1 + 0.
        let half = blend(&fused, &reranked, 0.5);
        assert_eq!(order(&half), [1, 0, 2, 3]);
        assert!((half[1] - 0.75).abs() < 1e-12);
        assert!(half[3] < half[2], "the unseen chunk stays last");
    }

    #[test]
    fn score_lines_are_numbers_or_objects_naming_their_candidate() {
        assert_eq!(parse_score(" 0.25 ", "a"), Ok(0.25));
        assert_eq!(parse_score(r#"{"id": "a", "score": -1}"#, "a"), Ok(-1.0));
        assert_eq!(parse_score(r#"{"score": 3}"#, "a"), Ok(3.0));
        assert!(parse_score(r#"{"id": "b", "score": 3}"#, "a").is_err());
        assert!(parse_score("high", "a").is_err());
        assert!(parse_score(r#"{"id": "a"}"#, "a").is_err());
    }
}
