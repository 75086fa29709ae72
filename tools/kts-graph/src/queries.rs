//! Graph questions: related documents, neighbours of an entity, central
//! entities, entities of a kind. Each answers with `kts.node/1` records.

use std::cmp::Ordering;
use std::collections::{BTreeMap, VecDeque};

use kts_record::NodeRecord;
use petgraph::stable_graph::NodeIndex;
use unicode_normalization::UnicodeNormalization;

use crate::model::{KnowledgeGraph, Node, NodeKind};
use crate::view::GraphView;

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

/// The document at `path`; else the one whose path is the same text in
/// another Unicode normal form (a name from macOS is decomposed, `e` and `´`
/// for `é`, and typed composed).
fn document_at(view: &dyn GraphView, path: &str) -> anyhow::Result<Option<NodeIndex>> {
    if let Some(found) = view.document_with_path(path)? {
        return Ok(Some(found));
    }
    let composed: String = path.nfc().collect();
    Ok(view
        .document_paths()?
        .into_iter()
        .find(|(_, p)| p.nfc().eq(composed.chars()))
        .map(|(i, _)| i))
}

/// The first `top` of `items` in `order`, ties between them broken by their
/// nodes' ids, reading the ids of only the items that can be among them.
fn first_by<T>(
    view: &dyn GraphView,
    mut items: Vec<(NodeIndex, T)>,
    top: usize,
    order: impl Fn(&T, &T) -> Ordering,
) -> anyhow::Result<Vec<(NodeIndex, T)>> {
    items.sort_by(|a, b| order(&a.1, &b.1));
    if let Some((_, last)) = items.get(top.saturating_sub(1)) {
        let end = (items.iter())
            .position(|(_, item)| order(item, last) == Ordering::Greater)
            .unwrap_or(items.len());
        items.truncate(end);
    }
    let mut identified: Vec<(String, (NodeIndex, T))> = items
        .into_iter()
        .map(|(i, item)| Ok((view.node(i)?.id, (i, item))))
        .collect::<anyhow::Result<_>>()?;
    identified.sort_by(|a, b| order(&a.1.1, &b.1.1).then_with(|| a.0.cmp(&b.0)));
    Ok(identified
        .into_iter()
        .take(top)
        .map(|(_, item)| item)
        .collect())
}

/// A document's relatedness: the sum of what each shared entity contributes.
#[derive(Default)]
struct Relatedness {
    score: f64,
    shared: Vec<(f64, NodeIndex)>,
}

/// The documents that share the most (and the rarest) entities with the
/// document at `path`, best first.
pub fn related(view: &dyn GraphView, path: &str, top: usize) -> anyhow::Result<Vec<NodeRecord>> {
    let doc = document_at(view, path)?
        .ok_or_else(|| anyhow::anyhow!("{path} is not a document of this scope's index"))?;
    let documents = view.document_count() as f64;
    let mut scores: BTreeMap<NodeIndex, Relatedness> = BTreeMap::new();
    for link in view.links(doc)? {
        if !link.kind.is_named() {
            continue;
        }
        let entity = link.other;
        let naming = view.link_counts(entity)?.documents;
        let rarity = (1.0 + documents / naming.max(1) as f64).ln();
        for other in view.links(entity)? {
            if other.other == doc || other.kind != NodeKind::Document {
                continue;
            }
            let share = link.weight * other.weight * rarity;
            let entry = scores.entry(other.other).or_default();
            entry.score += share;
            entry.shared.push((share, entity));
        }
    }
    let ranked = first_by(view, scores.into_iter().collect(), top, |a, b| {
        b.score.total_cmp(&a.score)
    })?;
    ranked
        .into_iter()
        .map(|(i, Relatedness { score, mut shared })| {
            shared.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            let shared = (shared.iter().take(SHARED_LISTED))
                .map(|(_, e)| Ok(view.node(*e)?.name))
                .collect::<anyhow::Result<_>>()?;
            Ok(NodeRecord {
                score: Some(score),
                shared,
                ..record(&view.node(i)?)
            })
        })
        .collect()
}

/// The entity or topic an argument names: a node id (`system:authservice`),
/// else a name matched case-insensitively (the most mentioned such entity).
pub fn find_entity(view: &dyn GraphView, name: &str) -> anyhow::Result<NodeIndex> {
    if let Some(i) = view.find(name)?
        && view.node(i)?.kind.is_named()
    {
        return Ok(i);
    }
    let key = name
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase();
    let upper = key.to_uppercase();
    let mut candidates = view.named_by_lower_key(&key)?;
    candidates.extend(view.named_by_lower_key(&upper.to_lowercase())?);
    candidates.sort();
    candidates.dedup();
    let mut best: Option<(NodeIndex, Node)> = None;
    for i in candidates {
        let node = view.node(i)?;
        if node.key != key && node.key != upper {
            continue;
        }
        let better = best.as_ref().is_none_or(|(_, b)| {
            (node.mentions.cmp(&b.mentions)).then_with(|| b.id.cmp(&node.id)) == Ordering::Greater
        });
        if better {
            best = Some((i, node));
        }
    }
    best.map(|(i, _)| i).ok_or_else(|| {
        anyhow::anyhow!("no entity named {name:?} in the graph (see kts-graph DIR entities)")
    })
}

/// Everything within `hops` edges of the entity (edges at or above the
/// weight threshold, either direction, not through chunks), nearest first.
pub fn neighbors(
    view: &dyn GraphView,
    name: &str,
    hops: usize,
    top: usize,
) -> anyhow::Result<Vec<NodeRecord>> {
    let start = find_entity(view, name)?;
    let reached = walk(view, &[start], hops)?;
    let found: Vec<(NodeIndex, Reached)> =
        reached.into_iter().filter(|(i, _)| *i != start).collect();
    let nearest = first_by(view, found, top, |a, b| {
        a.hops.cmp(&b.hops).then(b.weight.total_cmp(&a.weight))
    })?;
    nearest
        .into_iter()
        .map(|(i, r)| {
            Ok(NodeRecord {
                score: Some(r.weight),
                hops: Some(r.hops),
                via: Some(r.via.to_string()),
                ..record(&view.node(i)?)
            })
        })
        .collect()
}

/// How a breadth-first walk reached a node.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reached {
    pub kind: NodeKind,
    pub hops: usize,
    /// The product of the edge weights along the path.
    pub weight: f64,
    pub via: &'static str,
}

/// Breadth-first walk from `starts` over edges at or above the threshold,
/// skipping chunks; each node keeps its best path of the fewest hops.
pub fn walk(
    view: &dyn GraphView,
    starts: &[NodeIndex],
    hops: usize,
) -> anyhow::Result<BTreeMap<NodeIndex, Reached>> {
    let threshold = view.settings().edge_threshold;
    let mut reached: BTreeMap<NodeIndex, Reached> = BTreeMap::new();
    for start in starts {
        let start_at = Reached {
            kind: view.node(*start)?.kind,
            hops: 0,
            weight: 1.0,
            via: "",
        };
        reached.insert(*start, start_at);
    }
    let mut queue: VecDeque<NodeIndex> = starts.iter().copied().collect();
    while let Some(node) = queue.pop_front() {
        let here = reached[&node];
        if here.hops >= hops {
            continue;
        }
        for link in view.links(node)? {
            if link.weight < threshold {
                continue;
            }
            let candidate = Reached {
                kind: link.kind,
                hops: here.hops + 1,
                weight: here.weight * link.weight,
                via: link.label,
            };
            match reached.get_mut(&link.other) {
                None => {
                    reached.insert(link.other, candidate);
                    queue.push_back(link.other);
                }
                Some(seen) if seen.hops == candidate.hops && seen.weight < candidate.weight => {
                    *seen = candidate;
                }
                Some(_) => {}
            }
        }
    }
    Ok(reached)
}

/// Entities and topics by degree centrality: the share of the other
/// documents, entities and topics they are linked to.
pub fn central(view: &dyn GraphView, top: usize) -> anyhow::Result<Vec<NodeRecord>> {
    let others = view.node_count().saturating_sub(1).max(1) as f64;
    view.most_linked(top)?
        .into_iter()
        .map(|(i, linked)| {
            Ok(NodeRecord {
                score: Some(linked as f64 / others),
                ..record(&view.node(i)?)
            })
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
