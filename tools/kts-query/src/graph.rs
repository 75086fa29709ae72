//! The graph signal and the graph context: the question's entities (known
//! entities of the scope's graph named in the question), what a walk from
//! them reaches, and the documents it reaches, ranked.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use kts_graph::model::{KnowledgeGraph, NodeKind};
use kts_graph::queries::{Reached, walk};
use kts_graph::settings::{Settings, config_path};
use kts_store::{Scored, Store};
use petgraph::stable_graph::NodeIndex;

/// Entities of the question the walk starts from (the most specific ones).
const MAX_SEEDS: usize = 5;
/// Longest entity name matched in a question, in words.
const MAX_NAME_WORDS: usize = 6;
/// The share of a document's score its connectedness may add (as the seeds' graph boost).
const CONNECTIVITY_BOOST_CAP: f64 = 0.5;
const CONNECTIVITY_BOOST_PER_LINK: f64 = 0.01;

/// A scope's graph, ready to match questions.
pub struct QueryGraph {
    pub kg: KnowledgeGraph,
    /// Entity names (keys, lower case) to their nodes.
    names: HashMap<String, Vec<NodeIndex>>,
    /// Documents named and linked to each entity (for specificity).
    documents_of: HashMap<NodeIndex, usize>,
}

impl QueryGraph {
    /// The scope's graph, or `None` when kts-graph has not built one.
    pub fn load(store: &Store, scope: &Path) -> anyhow::Result<Option<QueryGraph>> {
        if !kts_graph::tables::exist(store.connection())? {
            return Ok(None);
        }
        let settings = Settings::load(&config_path(scope), false)?;
        let kg = KnowledgeGraph::load(store.connection(), &settings)?;
        let mut names: HashMap<String, Vec<NodeIndex>> = HashMap::new();
        let mut documents_of = HashMap::new();
        for (index, node) in kg.nodes() {
            if !matches!(node.kind, NodeKind::Entity(_)) {
                continue;
            }
            names
                .entry(node.key.to_lowercase())
                .or_default()
                .push(index);
            let documents = kg
                .edges_of(index)
                .iter()
                .filter(|(other, _)| kg.graph[*other].kind == NodeKind::Document)
                .count();
            documents_of.insert(index, documents);
        }
        Ok(Some(QueryGraph {
            kg,
            names,
            documents_of,
        }))
    }

    /// The known entities the question names, the most specific (fewest
    /// documents, then longest name) first, at most [`MAX_SEEDS`].
    pub fn seeds(&self, question: &str) -> Vec<NodeIndex> {
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
                for &node in self.names.get(&name).into_iter().flatten() {
                    if !found.contains(&node) {
                        found.push(node);
                    }
                }
            }
        }
        found.sort_by(|a, b| {
            self.documents_of[a]
                .cmp(&self.documents_of[b])
                .then(
                    self.kg.graph[*b]
                        .key
                        .len()
                        .cmp(&self.kg.graph[*a].key.len()),
                )
                .then_with(|| self.kg.graph[*a].id.cmp(&self.kg.graph[*b].id))
        });
        found.truncate(MAX_SEEDS);
        found
    }

    /// Everything the walk from `seeds` reaches (the graph's depth and edge threshold).
    pub fn reach(&self, seeds: &[NodeIndex]) -> BTreeMap<NodeIndex, Reached> {
        walk(&self.kg, seeds, self.kg.settings.depth)
    }

    /// The documents reached, by doc_id, with their graph score: the path
    /// weight, raised by up to half for well-connected documents.
    pub fn document_scores(&self, reached: &BTreeMap<NodeIndex, Reached>) -> HashMap<String, f64> {
        reached
            .iter()
            .filter(|(node, _)| self.kg.graph[**node].kind == NodeKind::Document)
            .map(|(node, how)| {
                let links = self
                    .kg
                    .edges_of(*node)
                    .iter()
                    .filter(|(other, _)| self.kg.graph[*other].kind.is_named())
                    .count() as f64;
                let boost = (links * CONNECTIVITY_BOOST_PER_LINK).min(CONNECTIVITY_BOOST_CAP);
                (self.kg.graph[*node].key.clone(), how.weight * (1.0 + boost))
            })
            .collect()
    }
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
