//! Read access to a knowledge graph: whole in memory ([`KnowledgeGraph`]),
//! or read by neighbourhood from its snapshot in the database
//! ([`crate::snapshot::Snapshot`]). The graph questions (queries.rs) and
//! kts-query's graph step and context are asked of either, and both give
//! the same answers: nodes keep their indices, and each node's edges their
//! order.

use std::collections::HashMap;

use petgraph::stable_graph::NodeIndex;

use crate::model::{KnowledgeGraph, Node, NodeKind};
use crate::settings::Settings;

/// An edge seen from one of its ends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Link {
    /// The node at the other end, and its kind.
    pub other: NodeIndex,
    pub kind: NodeKind,
    pub label: &'static str,
    pub weight: f64,
}

/// How many of a node's edges lead to documents, and to entities or topics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkCounts {
    pub documents: usize,
    pub named: usize,
}

impl LinkCounts {
    pub fn of(links: &[Link]) -> LinkCounts {
        LinkCounts {
            documents: links
                .iter()
                .filter(|l| l.kind == NodeKind::Document)
                .count(),
            named: links.iter().filter(|l| l.kind.is_named()).count(),
        }
    }
}

/// The nodes other than chunks that a node's links reach (its degree).
pub fn degree(links: &[Link]) -> usize {
    let mut others: Vec<NodeIndex> = links.iter().map(|l| l.other).collect();
    others.dedup();
    others.len()
}

pub trait GraphView {
    fn settings(&self) -> &Settings;

    /// The node at `index` (a copy: a snapshot has none to lend).
    fn node(&self, index: NodeIndex) -> anyhow::Result<Node>;

    /// The edges touching the node, in either direction, except those to
    /// chunks (no question follows them), in [`KnowledgeGraph::edges_of`]'s order.
    fn links(&self, index: NodeIndex) -> anyhow::Result<Vec<Link>>;

    fn link_counts(&self, index: NodeIndex) -> anyhow::Result<LinkCounts>;

    /// The node with this id.
    fn find(&self, id: &str) -> anyhow::Result<Option<NodeIndex>>;

    /// The entities and topics whose key, in lower case, is `lower_key`, in node order.
    fn named_by_lower_key(&self, lower_key: &str) -> anyhow::Result<Vec<NodeIndex>>;

    /// The document at exactly this path.
    fn document_with_path(&self, path: &str) -> anyhow::Result<Option<NodeIndex>>;

    /// Every document and its path, in node order.
    fn document_paths(&self) -> anyhow::Result<Vec<(NodeIndex, String)>>;

    fn document_count(&self) -> usize;

    /// The nodes other than chunks.
    fn node_count(&self) -> usize;

    /// The `top` entities and topics of the highest degree, then of the
    /// smallest id, with their degrees.
    fn most_linked(&self, top: usize) -> anyhow::Result<Vec<(NodeIndex, usize)>>;
}

impl KnowledgeGraph {
    /// [`GraphView::links`] of the whole graph.
    pub fn links_of(&self, index: NodeIndex) -> Vec<Link> {
        self.edges_of(index)
            .into_iter()
            .map(|(other, edge)| Link {
                other,
                kind: self.graph[other].kind,
                label: edge.label,
                weight: edge.weight,
            })
            .filter(|l| l.kind != NodeKind::Chunk)
            .collect()
    }

    /// Entities and topics by their keys in lower case, made at first use.
    fn lower_keys(&self) -> &HashMap<String, Vec<NodeIndex>> {
        self.by_lower_key.get_or_init(|| {
            let mut keys: HashMap<String, Vec<NodeIndex>> = HashMap::new();
            for (index, node) in self.nodes().filter(|(_, n)| n.kind.is_named()) {
                keys.entry(node.key.to_lowercase()).or_default().push(index);
            }
            keys
        })
    }
}

impl GraphView for KnowledgeGraph {
    fn settings(&self) -> &Settings {
        &self.settings
    }

    fn node(&self, index: NodeIndex) -> anyhow::Result<Node> {
        Ok(self.graph[index].clone())
    }

    fn links(&self, index: NodeIndex) -> anyhow::Result<Vec<Link>> {
        Ok(self.links_of(index))
    }

    fn link_counts(&self, index: NodeIndex) -> anyhow::Result<LinkCounts> {
        Ok(LinkCounts::of(&self.links_of(index)))
    }

    fn find(&self, id: &str) -> anyhow::Result<Option<NodeIndex>> {
        Ok(KnowledgeGraph::node(self, id))
    }

    fn named_by_lower_key(&self, lower_key: &str) -> anyhow::Result<Vec<NodeIndex>> {
        Ok(self
            .lower_keys()
            .get(lower_key)
            .cloned()
            .unwrap_or_default())
    }

    fn document_with_path(&self, path: &str) -> anyhow::Result<Option<NodeIndex>> {
        Ok(self
            .nodes()
            .find(|(_, n)| n.kind == NodeKind::Document && n.path.as_deref() == Some(path))
            .map(|(i, _)| i))
    }

    fn document_paths(&self) -> anyhow::Result<Vec<(NodeIndex, String)>> {
        Ok(self
            .nodes()
            .filter(|(_, n)| n.kind == NodeKind::Document)
            .map(|(i, n)| (i, n.path.clone().unwrap_or_default()))
            .collect())
    }

    fn document_count(&self) -> usize {
        self.nodes()
            .filter(|(_, n)| n.kind == NodeKind::Document)
            .count()
    }

    fn node_count(&self) -> usize {
        self.nodes()
            .filter(|(_, n)| n.kind != NodeKind::Chunk)
            .count()
    }

    fn most_linked(&self, top: usize) -> anyhow::Result<Vec<(NodeIndex, usize)>> {
        let mut scored: Vec<(NodeIndex, usize)> = self
            .nodes()
            .filter(|(_, n)| n.kind.is_named())
            .map(|(i, _)| (i, degree(&self.links_of(i))))
            .collect();
        scored.sort_by(|a, b| {
            b.1.cmp(&a.1)
                .then_with(|| self.graph[a.0].id.cmp(&self.graph[b.0].id))
        });
        scored.truncate(top);
        Ok(scored)
    }
}
