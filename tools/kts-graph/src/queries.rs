//! Graph questions: related documents, neighbours of an entity, central
//! entities, entities of a kind. Each answers with `kts.node/1` records.

use std::collections::{BTreeMap, HashMap, VecDeque};

use kts_record::NodeRecord;
use petgraph::stable_graph::NodeIndex;
use unicode_normalization::UnicodeNormalization;

use crate::model::{KnowledgeGraph, Node, NodeKind};

/// Paths of documents listed per entity.
const DOCUMENTS_LISTED: usize = 10;
/// Shared entities listed per related document.
const SHARED_LISTED: usize = 10;

fn record(node: &Node) -> NodeRecord {
    NodeRecord {
        schema: kts_record::schema_id::NODE.into(),
        id: node.id.clone(),
        kind: node.kind.as_str().into(),
        name: node.name.clone(),
        mentions: node.kind.is_named().then_some(node.mentions),
        path: node
            .path
            .clone()
            .filter(|_| node.kind == NodeKind::Document),
        definition: node.definition.as_ref().map(|(text, _)| text.clone()),
        defined_in: node.definition.as_ref().map(|(_, path)| path.clone()),
        expansion: node.expansion.clone(),
        ..NodeRecord::default()
    }
}

/// How many documents name each entity or topic (for weighting rare ones up).
fn document_counts(kg: &KnowledgeGraph) -> HashMap<NodeIndex, usize> {
    kg.nodes()
        .filter(|(_, n)| n.kind.is_named())
        .map(|(i, _)| {
            let documents = kg
                .edges_of(i)
                .iter()
                .filter(|(other, _)| kg.graph[*other].kind == NodeKind::Document)
                .count();
            (i, documents)
        })
        .collect()
}

/// The document at `path`; else the one whose path is the same text in
/// another Unicode normal form (a name from macOS is decomposed, `e` and `´`
/// for `é`, and typed composed).
fn document_at(kg: &KnowledgeGraph, path: &str) -> Option<NodeIndex> {
    let documents = || kg.nodes().filter(|(_, n)| n.kind == NodeKind::Document);
    let found = documents()
        .find(|(_, n)| n.path.as_deref() == Some(path))
        .or_else(|| {
            let composed: String = path.nfc().collect();
            documents()
                .find(|(_, n)| (n.path.as_deref()).is_some_and(|p| p.nfc().eq(composed.chars())))
        });
    found.map(|(i, _)| i)
}

/// A document's relatedness: the sum of what each shared entity contributes.
#[derive(Default)]
struct Relatedness {
    score: f64,
    shared: Vec<(f64, NodeIndex)>,
}

/// The documents that share the most (and the rarest) entities with the
/// document at `path`, best first.
pub fn related(kg: &KnowledgeGraph, path: &str, top: usize) -> anyhow::Result<Vec<NodeRecord>> {
    let doc = document_at(kg, path)
        .ok_or_else(|| anyhow::anyhow!("{path} is not a document of this scope's index"))?;
    let documents = kg
        .nodes()
        .filter(|(_, n)| n.kind == NodeKind::Document)
        .count() as f64;
    let counts = document_counts(kg);
    let mut scores: BTreeMap<NodeIndex, Relatedness> = BTreeMap::new();
    for (entity, edge) in kg.edges_of(doc) {
        if !kg.graph[entity].kind.is_named() {
            continue;
        }
        let rarity = (1.0 + documents / counts[&entity].max(1) as f64).ln();
        for (other, other_edge) in kg.edges_of(entity) {
            if other == doc || kg.graph[other].kind != NodeKind::Document {
                continue;
            }
            let share = edge.weight * other_edge.weight * rarity;
            let entry = scores.entry(other).or_default();
            entry.score += share;
            entry.shared.push((share, entity));
        }
    }
    let mut ranked: Vec<(NodeIndex, Relatedness)> = scores.into_iter().collect();
    ranked.sort_by(|a, b| {
        b.1.score
            .total_cmp(&a.1.score)
            .then_with(|| kg.graph[a.0].id.cmp(&kg.graph[b.0].id))
    });
    Ok(ranked
        .into_iter()
        .take(top)
        .map(|(i, Relatedness { score, mut shared })| {
            shared.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            NodeRecord {
                score: Some(score),
                shared: shared
                    .iter()
                    .take(SHARED_LISTED)
                    .map(|(_, e)| kg.graph[*e].name.clone())
                    .collect(),
                ..record(&kg.graph[i])
            }
        })
        .collect())
}

/// The entity or topic an argument names: a node id (`system:authservice`),
/// else a name matched case-insensitively (the most mentioned such entity).
pub fn find_entity(kg: &KnowledgeGraph, name: &str) -> anyhow::Result<NodeIndex> {
    if let Some(i) = kg.node(name).filter(|i| kg.graph[*i].kind.is_named()) {
        return Ok(i);
    }
    let key = name
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase();
    kg.nodes()
        .filter(|(_, n)| n.kind.is_named() && (n.key == key || n.key == key.to_uppercase()))
        .max_by(|a, b| {
            a.1.mentions
                .cmp(&b.1.mentions)
                .then_with(|| b.1.id.cmp(&a.1.id))
        })
        .map(|(i, _)| i)
        .ok_or_else(|| {
            anyhow::anyhow!("no entity named {name:?} in the graph (see kts-graph DIR entities)")
        })
}

/// Everything within `hops` edges of the entity (edges at or above the
/// weight threshold, either direction, not through chunks), nearest first.
pub fn neighbors(
    kg: &KnowledgeGraph,
    name: &str,
    hops: usize,
    top: usize,
) -> anyhow::Result<Vec<NodeRecord>> {
    let start = find_entity(kg, name)?;
    let reached = walk(kg, &[start], hops);
    let mut found: Vec<(NodeIndex, Reached)> =
        reached.into_iter().filter(|(i, _)| *i != start).collect();
    found.sort_by(|a, b| {
        a.1.hops
            .cmp(&b.1.hops)
            .then(b.1.weight.total_cmp(&a.1.weight))
            .then_with(|| kg.graph[a.0].id.cmp(&kg.graph[b.0].id))
    });
    Ok(found
        .into_iter()
        .take(top)
        .map(|(i, r)| NodeRecord {
            score: Some(r.weight),
            hops: Some(r.hops),
            via: Some(r.via.to_string()),
            ..record(&kg.graph[i])
        })
        .collect())
}

/// How a breadth-first walk reached a node.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reached {
    pub hops: usize,
    /// The product of the edge weights along the path.
    pub weight: f64,
    pub via: &'static str,
}

/// Breadth-first walk from `starts` over edges at or above the threshold,
/// skipping chunks; each node keeps its best path of the fewest hops.
pub fn walk(
    kg: &KnowledgeGraph,
    starts: &[NodeIndex],
    hops: usize,
) -> BTreeMap<NodeIndex, Reached> {
    let threshold = kg.settings.edge_threshold;
    let mut reached: BTreeMap<NodeIndex, Reached> = starts
        .iter()
        .map(|s| {
            (
                *s,
                Reached {
                    hops: 0,
                    weight: 1.0,
                    via: "",
                },
            )
        })
        .collect();
    let mut queue: VecDeque<NodeIndex> = starts.iter().copied().collect();
    while let Some(node) = queue.pop_front() {
        let here = reached[&node];
        if here.hops >= hops {
            continue;
        }
        for (other, edge) in kg.edges_of(node) {
            if edge.weight < threshold || kg.graph[other].kind == NodeKind::Chunk {
                continue;
            }
            let candidate = Reached {
                hops: here.hops + 1,
                weight: here.weight * edge.weight,
                via: edge.label,
            };
            match reached.get_mut(&other) {
                None => {
                    reached.insert(other, candidate);
                    queue.push_back(other);
                }
                Some(seen) if seen.hops == candidate.hops && seen.weight < candidate.weight => {
                    *seen = candidate;
                }
                Some(_) => {}
            }
        }
    }
    reached
}

/// Entities and topics by degree centrality: the share of the other
/// documents, entities and topics they are linked to.
pub fn central(kg: &KnowledgeGraph, top: usize) -> Vec<NodeRecord> {
    let others = kg
        .nodes()
        .filter(|(_, n)| n.kind != NodeKind::Chunk)
        .count()
        .saturating_sub(1)
        .max(1) as f64;
    let mut scored: Vec<(NodeIndex, f64)> = kg
        .nodes()
        .filter(|(_, n)| n.kind.is_named())
        .map(|(i, _)| {
            let mut linked: Vec<NodeIndex> = kg
                .edges_of(i)
                .into_iter()
                .filter(|(o, _)| kg.graph[*o].kind != NodeKind::Chunk)
                .map(|(o, _)| o)
                .collect();
            linked.dedup();
            (i, linked.len() as f64 / others)
        })
        .collect();
    scored.sort_by(|a, b| {
        b.1.total_cmp(&a.1)
            .then_with(|| kg.graph[a.0].id.cmp(&kg.graph[b.0].id))
    });
    scored
        .into_iter()
        .take(top)
        .map(|(i, score)| NodeRecord {
            score: Some(score),
            ..record(&kg.graph[i])
        })
        .collect()
}

/// The entities (of one kind, or all) or the topics, most mentioned first,
/// with the documents that mention them most.
pub fn entities(kg: &KnowledgeGraph, kind: Option<NodeKind>) -> Vec<NodeRecord> {
    let mut chosen: Vec<(NodeIndex, &Node)> = kg
        .nodes()
        .filter(|(_, n)| match kind {
            Some(wanted) => n.kind == wanted,
            None => matches!(n.kind, NodeKind::Entity(_)),
        })
        .collect();
    chosen.sort_by(|a, b| {
        b.1.mentions
            .cmp(&a.1.mentions)
            .then_with(|| a.1.id.cmp(&b.1.id))
    });
    chosen
        .into_iter()
        .map(|(i, node)| {
            let mut documents: Vec<(f64, &str)> = kg
                .edges_of(i)
                .into_iter()
                .filter_map(|(o, e)| {
                    let other = &kg.graph[o];
                    (other.kind == NodeKind::Document && e.label != "DEFINES")
                        .then(|| (e.weight, other.path.as_deref().unwrap_or_default()))
                })
                .collect();
            documents.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
            NodeRecord {
                documents: documents
                    .into_iter()
                    .take(DOCUMENTS_LISTED)
                    .map(|(_, p)| p.to_string())
                    .collect(),
                ..record(node)
            }
        })
        .collect()
}
