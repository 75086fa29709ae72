//! Reranking by an outside command: the best fused candidates go to it as
//! JSON lines, it answers one score per candidate, and the final order blends
//! its scores with the fused ones. Any failure (the command missing, failing,
//! slow, or answering the wrong number of scores) leaves the fused order and
//! is reported, never fatal: a reranker improves an answer, it does not gate it.

use std::collections::HashMap;
use std::process::Command;
use std::time::Duration;

use kts_cli::child::{self, ChildError};
use kts_store::{Hit, Scored};
use serde::Serialize;
use serde_json::Value;

use crate::rank::fuse::Fused;

/// The most a reranker may print: far more than scores need.
const MAX_OUTPUT_BYTES: usize = 16 << 20;

/// A reranking command and how its scores are used.
#[derive(Clone, Debug, PartialEq)]
pub struct Reranker {
    /// Run with `sh -c`.
    pub command: String,
    /// How many of the best fused chunks it scores.
    pub top: usize,
    /// Its share of the final score, in [0, 1]; the fused score has the rest.
    pub weight: f64,
    pub timeout: Duration,
}

/// One candidate as the command reads it.
#[derive(Serialize)]
struct Candidate<'a> {
    query: &'a str,
    id: &'a str,
    path: &'a str,
    title: &'a str,
    heading_path: &'a [String],
    text: &'a str,
    score: f64,
}

impl Reranker {
    /// Reorders the first `top` of `fused` (best first, `hits` holding their
    /// text) by the blend of the command's scores and the fused ones; the
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
        let candidates: Vec<(&Fused, &Hit)> = fused[..count]
            .iter()
            .filter_map(|f| Some((f, *by_rowid.get(&f.rowid)?)))
            .collect();
        if candidates.len() < 2 {
            return Ok(0);
        }
        let mut input = Vec::new();
        for (f, hit) in &candidates {
            let candidate = Candidate {
                query: question,
                id: &hit.chunk_id,
                path: &hit.path,
                title: &hit.title,
                heading_path: &hit.heading_path,
                text: &hit.text,
                score: f.score,
            };
            serde_json::to_writer(&mut input, &candidate).map_err(|e| e.to_string())?;
            input.push(b'\n');
        }
        let ids: Vec<&str> = candidates
            .iter()
            .map(|(_, h)| h.chunk_id.as_str())
            .collect();
        let scores = self.scores(input, &ids)?;
        let reranked: HashMap<i64, f64> = candidates
            .iter()
            .zip(scores)
            .map(|((f, _), score)| (f.rowid, score))
            .collect();
        blend(fused, &reranked, self.weight);
        Ok(reranked.len())
    }

    /// The command's scores for the candidates `ids`, in their order.
    fn scores(&self, input: Vec<u8>, ids: &[&str]) -> Result<Vec<f64>, String> {
        let mut command = Command::new("sh");
        command.arg("-c").arg(&self.command);
        let output = child::output_fed(&mut command, Some(input), self.timeout, MAX_OUTPUT_BYTES)
            .map_err(|e| match e {
            ChildError::NotFound(e) => format!("cannot run sh: {e}"),
            ChildError::TimedOut => format!("no answer within {:?}", self.timeout),
            ChildError::Failed(why) => format!("it failed ({why})"),
        })?;
        let text = String::from_utf8_lossy(&output);
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        if lines.len() != ids.len() {
            return Err(format!(
                "it answered {} scores for {} candidates",
                lines.len(),
                ids.len()
            ));
        }
        lines
            .iter()
            .zip(ids)
            .enumerate()
            .map(|(i, (line, id))| {
                parse_score(line, id).map_err(|why| format!("line {}: {why}", i + 1))
            })
            .collect()
    }
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

/// Orders `fused` by (1 − weight) × its fused score + weight × the reranker's,
/// each scaled to [0, 1] over the reranked candidates; a chunk the reranker did
/// not see counts as given its lowest score, so it stays below those it did.
fn blend(fused: &mut [Fused], reranked: &HashMap<i64, f64>, weight: f64) {
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
            .filter(|f| reranked.contains_key(&f.rowid))
            .map(|f| f.score),
    );
    let in_reranker = scale(&mut reranked.values().copied());
    for f in fused.iter_mut() {
        let rerank = reranked.get(&f.rowid).map_or(0.0, |&s| in_reranker(s));
        if let Some(&raw) = reranked.get(&f.rowid) {
            f.signals.insert(
                "rerank".to_string(),
                Scored {
                    rowid: f.rowid,
                    score: raw,
                    rank: 0,
                },
            );
        }
        f.score = (1.0 - weight) * in_fused(f.score) + weight * rerank;
    }
    fused.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.rowid.cmp(&b.rowid)));
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn fused(scores: &[(i64, f64)]) -> Vec<Fused> {
        scores
            .iter()
            .map(|&(rowid, score)| Fused {
                rowid,
                score,
                signals: BTreeMap::new(),
            })
            .collect()
    }

    fn order(fused: &[Fused]) -> Vec<i64> {
        fused.iter().map(|f| f.rowid).collect()
    }

    #[test]
    fn the_blend_weighs_the_reranker_against_the_fused_order() {
        let reranked: HashMap<i64, f64> = [(1, -3.0), (2, 5.0), (3, 1.0)].into();
        let start = fused(&[(1, 2.0), (2, 1.5), (3, 1.0), (4, 0.9)]);
        let mut all_reranker = start.clone();
        blend(&mut all_reranker, &reranked, 1.0);
        assert_eq!(order(&all_reranker), [2, 3, 1, 4]);
        assert_eq!(all_reranker[0].signals["rerank"].score, 5.0);
        let mut none = start.clone();
        blend(&mut none, &reranked, 0.0);
        assert_eq!(order(&none), [1, 2, 3, 4]);
        // Half and half: 2 gets 0.5 × 0.5 + 0.5 × 1, 1 gets 0.5 × 1 + 0.
        let mut half = start;
        blend(&mut half, &reranked, 0.5);
        assert_eq!(order(&half), [2, 1, 3, 4]);
        assert!((half[0].score - 0.75).abs() < 1e-12);
        assert!(half[3].score < half[2].score, "the unseen chunk stays last");
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
