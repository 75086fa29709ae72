//! The graph signal and the graph context: the question's entities (known
//! entities of the scope's graph named in the question), what a walk from
//! them reaches, and the documents it reaches, ranked.

use std::collections::HashMap;
use std::path::Path;

use kts_graph::model::{KnowledgeGraph, NodeKind};
use kts_graph::queries::walk;
use kts_graph::settings::{Settings, config_path};
use kts_graph::snapshot::Snapshot;
use kts_graph::view::GraphView;
use kts_store::{Scored, Store};
use petgraph::stable_graph::NodeIndex;

/// Entities of the question the walk starts from (the most specific ones).
const MAX_SEEDS: usize = 5;
/// Longest entity name matched in a question, in words.
const MAX_NAME_WORDS: usize = 6;
/// The share of a document's score its connectedness may add (as the seeds' graph boost).
const CONNECTIVITY_BOOST_CAP: f64 = 0.5;
const CONNECTIVITY_BOOST_PER_LINK: f64 = 0.01;

/// A scope's graph, ready to match questions: its snapshot, read by
/// neighbourhood, when it is current; else the graph built whole.
pub enum QueryGraph {
    Snapshot(Snapshot),
    Whole(KnowledgeGraph),
}

impl QueryGraph {
    /// The scope's graph, or `None` when kts-graph has not built one.
    pub fn load(store: &Store, scope: &Path) -> anyhow::Result<Option<QueryGraph>> {
        if !kts_graph::tables::exist(store.connection())? {
            return Ok(None);
        }
        let settings = Settings::load(&config_path(scope), false)?;
        Ok(Some(match Snapshot::open(scope, &settings)? {
            Some(snapshot) => QueryGraph::Snapshot(snapshot),
            None => QueryGraph::Whole(KnowledgeGraph::load(store.connection(), &settings)?),
        }))
    }

    /// Runs `read` on one state of the graph (node indices stay valid
    /// from one read to the next).
    pub fn read<T>(
        &self,
        read: impl FnOnce(&dyn GraphView) -> anyhow::Result<T>,
    ) -> anyhow::Result<T> {
        match self {
            QueryGraph::Snapshot(snapshot) => snapshot.read(|view| read(view)),
            QueryGraph::Whole(kg) => read(kg),
        }
    }

    /// The known entities the question names, the most specific (fewest
    /// documents, then longest name) first, at most [`MAX_SEEDS`].
    pub fn seeds(&self, question: &str) -> anyhow::Result<Vec<NodeIndex>> {
        self.read(|view| seeds(view, question))
    }

    /// The names of `nodes`.
    pub fn names(&self, nodes: &[NodeIndex]) -> anyhow::Result<Vec<String>> {
        self.read(|view| nodes.iter().map(|&i| Ok(view.node(i)?.name)).collect())
    }

    /// The documents a walk from `seeds` reaches (the graph's depth and
    /// edge threshold), by doc_id, with their graph score: the path weight,
    /// raised by up to half for well-connected documents.
    pub fn document_scores(&self, seeds: &[NodeIndex]) -> anyhow::Result<HashMap<String, f64>> {
        self.read(|view| {
            let reached = walk(view, seeds, view.settings().depth)?;
            (reached.iter())
                .filter(|(_, how)| how.kind == NodeKind::Document)
                .map(|(node, how)| {
                    let links = view.link_counts(*node)?.named as f64;
                    let boost = (links * CONNECTIVITY_BOOST_PER_LINK).min(CONNECTIVITY_BOOST_CAP);
                    Ok((view.node(*node)?.key, how.weight * (1.0 + boost)))
                })
                .collect()
        })
    }
}

/// See [`QueryGraph::seeds`].
fn seeds(view: &dyn GraphView, question: &str) -> anyhow::Result<Vec<NodeIndex>> {
    let words: Vec<String> = question
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect();
    let mut found: Vec<NodeIndex> = Vec::new();
    for start in 0..words.len() {
        for len in 1..=MAX_NAME_WORDS.min(words.len() - start) {
            let name = words[start..start + len].join(" ");
            for node in view.named_by_lower_key(&name)? {
                if !found.contains(&node) {
                    found.push(node);
                }
            }
        }
    }
    // (documents, key length, id) of each entity found: topics are not seeds.
    let mut ranked: Vec<((usize, usize, String), NodeIndex)> = Vec::new();
    for node in found {
        let entity = view.node(node)?;
        if matches!(entity.kind, NodeKind::Entity(_)) {
            let documents = view.link_counts(node)?.documents;
            ranked.push(((documents, entity.key.len(), entity.id), node));
        }
    }
    ranked.sort_by(|(a, _), (b, _)| {
        a.0.cmp(&b.0)
            .then(b.1.cmp(&a.1))
            .then_with(|| a.2.cmp(&b.2))
    });
    Ok(ranked
        .into_iter()
        .take(MAX_SEEDS)
        .map(|(_, node)| node)
        .collect())
}

/// The graph's list for fusion: for each reached document, best score first,
/// its best-placed candidate chunk from the other lists. Documents without a
/// candidate chunk are left out, so the graph reorders what the retrievers
/// found and never brings in a document they did not.
pub fn graph_list(
    lists: &[(String, Vec<Scored>)],
    scores: &HashMap<String, f64>,
    mut doc_of: impl FnMut(i64) -> anyhow::Result<Option<String>>,
) -> anyhow::Result<Vec<Scored>> {
    let mut best_chunk: HashMap<String, (usize, i64)> = HashMap::new();
    for (_, list) in lists {
        for scored in list {
            let Some(doc) = doc_of(scored.rowid)? else {
                continue;
            };
            if !scores.contains_key(&doc) {
                continue;
            }
            let entry = best_chunk.entry(doc).or_insert((scored.rank, scored.rowid));
            if scored.rank < entry.0 {
                *entry = (scored.rank, scored.rowid);
            }
        }
    }
    let mut ranked: Vec<(f64, i64)> = best_chunk
        .iter()
        .map(|(doc, (_, rowid))| (scores[doc], *rowid))
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    Ok(ranked
        .into_iter()
        .enumerate()
        .map(|(i, (score, rowid))| Scored {
            rowid,
            score,
            rank: i + 1,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(rowids: &[i64]) -> Vec<Scored> {
        rowids
            .iter()
            .enumerate()
            .map(|(i, &rowid)| Scored {
                rowid,
                score: 1.0,
                rank: i + 1,
            })
            .collect()
    }

    #[test]
    fn the_graph_list_ranks_candidate_chunks_of_reached_documents() {
        let lists = [
            ("bm25".to_string(), list(&[1, 2, 3, 4])),
            ("vector".to_string(), list(&[5, 3, 6])),
        ];
        let doc = |rowid: i64| {
            Ok(Some(
                ["a", "a", "b", "c", "d", "e"][rowid as usize - 1].to_string(),
            ))
        };
        let scores: HashMap<String, f64> = [
            ("b".to_string(), 0.5),
            ("d".to_string(), 0.9),
            ("z".to_string(), 1.0),
        ]
        .into();
        let ranked = graph_list(&lists, &scores, doc).unwrap();
        let rowids: Vec<i64> = ranked.iter().map(|s| s.rowid).collect();
        assert_eq!(
            rowids,
            [5, 3],
            "d first (higher score), z has no candidate chunk"
        );
        assert_eq!(ranked[0].rank, 1);
        assert_eq!(ranked[1].score, 0.5);
    }
}
