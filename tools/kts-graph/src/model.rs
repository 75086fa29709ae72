//! The knowledge graph as a `petgraph` graph, built from the per-document
//! rows of the scope's database (see tables.rs) and the settings.
//!
//! Nodes: DOCUMENT, CHUNK (those naming a kept entity), one per kept entity
//! (TERM, SYSTEM, CONCEPT, ACRONYM, ERROR_CODE, PERSON) and TOPIC.
//! Edges, each with a weight in (0, 1]:
//!
//! ```text
//! CHUNK    PART_OF   DOCUMENT  1
//! CHUNK    MENTIONS  entity    mentions in the chunk / the chunk's most mentioned entity
//! DOCUMENT MENTIONS  entity    likewise per document; COVERS for a SYSTEM, ADDRESSES for an ERROR_CODE
//! DOCUMENT DEFINES   TERM      1
//! DOCUMENT MENTIONS  TOPIC     TF-IDF of the keyword in the document / the document's best
//! ACRONYM  defined_as CONCEPT  1 (the expansion a document spells out)
//! entity   <label>   entity    0.5 + 0.5 × occurrences / the most frequent typed relation
//! entity   relates_to entity   chunks naming both / chunks naming the rarer one
//! ```

use std::cell::OnceCell;
use std::collections::{BTreeMap, HashMap};

use petgraph::stable_graph::{NodeIndex, StableGraph};
use petgraph::visit::EdgeRef;
use rusqlite::Connection;

use crate::extract::{EntityKind, RELATION_LABELS};
use crate::settings::Settings;

/// Keyword topics kept per document.
const TOPICS_PER_DOCUMENT: usize = 5;
/// Entities of a chunk paired for co-occurrence (its most mentioned ones).
const COOCCURRING_PER_CHUNK: usize = 20;

/// Rows of indexed documents only (the graph may lag behind the index).
const INDEXED: &str = "doc_id IN (SELECT doc_id FROM documents)";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NodeKind {
    Document,
    Chunk,
    Entity(EntityKind),
    Topic,
}

impl NodeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::Document => "DOCUMENT",
            NodeKind::Chunk => "CHUNK",
            NodeKind::Entity(kind) => kind.as_str(),
            NodeKind::Topic => "TOPIC",
        }
    }

    /// Whether the node is a named thing (an entity or a topic).
    pub fn is_named(self) -> bool {
        matches!(self, NodeKind::Entity(_) | NodeKind::Topic)
    }
}

/// The id of an entity or topic node: `<kind>:<key>`, kind in lower case.
pub fn entity_id(kind: NodeKind, key: &str) -> String {
    format!("{}:{key}", kind.as_str().to_lowercase())
}

#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub id: String,
    pub kind: NodeKind,
    /// Entity: its most frequent surface form; document: its title (else path); chunk: its id.
    pub name: String,
    /// The normalised key of an entity or topic; a document's or chunk's id.
    pub key: String,
    pub mentions: u64,
    /// A document's path, or the path of a chunk's document.
    pub path: Option<String>,
    /// The defining sentence and the path of its document.
    pub definition: Option<(String, String)>,
    pub expansion: Option<String>,
}

impl Node {
    /// A node with no mentions, path, definition or expansion yet.
    fn new(id: String, kind: NodeKind, name: String, key: String) -> Node {
        Node {
            id,
            kind,
            name,
            key,
            mentions: 0,
            path: None,
            definition: None,
            expansion: None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Edge {
    pub label: &'static str,
    pub weight: f64,
}

pub struct KnowledgeGraph {
    pub graph: StableGraph<Node, Edge>,
    by_id: HashMap<String, NodeIndex>,
    /// Entities and topics by their keys in lower case (see view.rs), made at first use.
    pub(crate) by_lower_key: OnceCell<HashMap<String, Vec<NodeIndex>>>,
    pub settings: Settings,
}

impl KnowledgeGraph {
    pub fn node(&self, id: &str) -> Option<NodeIndex> {
        self.by_id.get(id).copied()
    }

    /// Nodes in id order (the graph's own order is insertion order, also deterministic).
    pub fn nodes(&self) -> impl Iterator<Item = (NodeIndex, &Node)> {
        self.graph.node_indices().map(|i| (i, &self.graph[i]))
    }

    /// Every edge touching `node`, in either direction, with the node at its other end.
    pub fn edges_of(&self, node: NodeIndex) -> Vec<(NodeIndex, &Edge)> {
        let mut out: Vec<(NodeIndex, &Edge)> = self
            .graph
            .edges_directed(node, petgraph::Direction::Outgoing)
            .map(|e| (e.target(), e.weight()))
            .chain(
                self.graph
                    .edges_directed(node, petgraph::Direction::Incoming)
                    .map(|e| (e.source(), e.weight())),
            )
            .collect();
        out.sort_by_key(|(other, _)| *other);
        out
    }

    /// Reads the graph of a scope database.
    pub fn load(conn: &Connection, settings: &Settings) -> anyhow::Result<KnowledgeGraph> {
        let mut builder = Builder {
            kg: KnowledgeGraph {
                graph: StableGraph::new(),
                by_id: HashMap::new(),
                by_lower_key: OnceCell::new(),
                settings: settings.clone(),
            },
        };
        builder.documents(conn)?;
        let entities = builder.entities(conn, settings)?;
        builder.mentions(conn, &entities)?;
        builder.definitions(conn)?;
        builder.expansions(conn)?;
        builder.relations(conn)?;
        builder.cooccurrence(settings.min_mentions);
        builder.topics(conn)?;
        Ok(builder.kg)
    }
}

struct Builder {
    kg: KnowledgeGraph,
}

/// The kept entities' nodes by (kind, key).
type Entities = BTreeMap<(String, String), NodeIndex>;

/// The kept entities a chunk mentions, with their counts.
struct ChunkMentions {
    doc_id: String,
    chunk_id: String,
    entities: Vec<(NodeIndex, u64)>,
}

impl Builder {
    fn add(&mut self, node: Node) -> NodeIndex {
        let id = node.id.clone();
        let index = self.kg.graph.add_node(node);
        self.kg.by_id.insert(id, index);
        index
    }

    fn link(&mut self, from: NodeIndex, to: NodeIndex, label: &'static str, weight: f64) {
        self.kg.graph.add_edge(from, to, Edge { label, weight });
    }

    fn documents(&mut self, conn: &Connection) -> anyhow::Result<()> {
        let mut statement =
            conn.prepare("SELECT doc_id, path, title FROM documents ORDER BY doc_id")?;
        let rows = statement.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
            ))
        })?;
        for row in rows {
            let (doc_id, path, title) = row?;
            let name = if title.is_empty() {
                path.clone()
            } else {
                title
            };
            self.add(Node {
                path: Some(path),
                ..Node::new(format!("doc:{doc_id}"), NodeKind::Document, name, doc_id)
            });
        }
        Ok(())
    }

    /// Entity nodes for every entity mentioned at least `min_mentions` times
    /// in the scope, seeded, a term a document defines, or the concept a
    /// document spells a kept acronym out as (its definition, said once).
    fn entities(&mut self, conn: &Connection, settings: &Settings) -> anyhow::Result<Entities> {
        let mut statement = conn.prepare(&format!(
            "SELECT kind, key, name, sum(count) FROM graph_mentions WHERE {INDEXED}
             GROUP BY kind, key, name ORDER BY kind, key, name"
        ))?;
        let rows = statement.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, i64>(3)?,
            ))
        })?;
        // (kind, key) -> (total, most frequent name, its count)
        let mut totals: BTreeMap<(String, String), (u64, String, u64)> = BTreeMap::new();
        for row in rows {
            let (kind, key, name, count) = row?;
            let count = count as u64;
            let entry = totals.entry((kind, key)).or_insert((0, name.clone(), 0));
            entry.0 += count;
            if count > entry.2 {
                (entry.1, entry.2) = (name, count);
            }
        }
        let seeded: Vec<(&'static str, String)> = settings
            .seeds
            .iter()
            .map(|s| (s.kind.as_str(), s.name.to_lowercase()))
            .collect();
        let defined: std::collections::BTreeSet<String> = conn
            .prepare(&format!(
                "SELECT DISTINCT key FROM graph_definitions WHERE {INDEXED}"
            ))?
            .query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        let acronym_kind = EntityKind::Acronym.as_str();
        let expansions: Vec<(String, String)> = conn
            .prepare(&format!(
                "SELECT DISTINCT acronym, expansion FROM graph_expansions WHERE {INDEXED}"
            ))?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        let spelled_out: std::collections::BTreeSet<String> = expansions
            .into_iter()
            .filter(|(acronym, _)| {
                totals
                    .get(&(acronym_kind.to_string(), acronym.clone()))
                    .is_some_and(|(total, _, _)| *total >= settings.min_mentions)
            })
            .map(|(_, expansion)| expansion.to_lowercase())
            .collect();
        let mut kept = Entities::new();
        for ((kind_name, key), (total, name, _)) in totals {
            let Some(kind) = EntityKind::parse(&kind_name) else {
                continue;
            };
            let is_seed = seeded.iter().any(|(k, n)| *k == kind.as_str() && *n == key);
            let is_defined = (kind == EntityKind::Term && defined.contains(&key))
                || (kind == EntityKind::Concept && spelled_out.contains(&key));
            if total < settings.min_mentions && !is_seed && !is_defined {
                continue;
            }
            let node_kind = NodeKind::Entity(kind);
            let index = self.add(Node {
                mentions: total,
                ..Node::new(entity_id(node_kind, &key), node_kind, name, key.clone())
            });
            kept.insert((kind_name, key), index);
        }
        Ok(kept)
    }

    /// CHUNK nodes and the chunk and document mention edges.
    fn mentions(&mut self, conn: &Connection, entities: &Entities) -> anyhow::Result<()> {
        let mut statement = conn.prepare(&format!(
            "SELECT m.doc_id, m.chunk_id, m.kind, m.key, m.count FROM graph_mentions m
             JOIN chunks c ON c.chunk_id = m.chunk_id
             WHERE m.{INDEXED} ORDER BY m.doc_id, c.idx, m.kind, m.key"
        ))?;
        let rows = statement.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, i64>(4)?,
            ))
        })?;
        let mut per_chunk: Vec<ChunkMentions> = Vec::new();
        for row in rows {
            let (doc_id, chunk_id, kind, key, count) = row?;
            let Some(&entity) = entities.get(&(kind, key)) else {
                continue;
            };
            match per_chunk.last_mut() {
                Some(last) if last.chunk_id == chunk_id => {
                    last.entities.push((entity, count as u64))
                }
                _ => per_chunk.push(ChunkMentions {
                    doc_id,
                    chunk_id,
                    entities: vec![(entity, count as u64)],
                }),
            }
        }
        let mut per_doc: BTreeMap<String, BTreeMap<NodeIndex, u64>> = BTreeMap::new();
        for ChunkMentions {
            doc_id,
            chunk_id,
            entities: list,
        } in per_chunk
        {
            let Some(doc) = self.kg.node(&format!("doc:{doc_id}")) else {
                continue;
            };
            let path = self.kg.graph[doc].path.clone();
            let id = format!("chunk:{chunk_id}");
            let chunk = self.add(Node {
                path,
                ..Node::new(id, NodeKind::Chunk, chunk_id.clone(), chunk_id)
            });
            self.link(chunk, doc, "PART_OF", 1.0);
            let most = list.iter().map(|(_, c)| *c).max().unwrap_or(1) as f64;
            for &(entity, count) in &list {
                self.link(chunk, entity, "MENTIONS", count as f64 / most);
                *per_doc
                    .entry(doc_id.clone())
                    .or_default()
                    .entry(entity)
                    .or_default() += count;
            }
        }
        for (doc_id, counts) in per_doc {
            let doc = self
                .kg
                .node(&format!("doc:{doc_id}"))
                .expect("documents come first");
            let most = counts.values().copied().max().unwrap_or(1) as f64;
            for (entity, count) in counts {
                let label = match self.kg.graph[entity].kind {
                    NodeKind::Entity(EntityKind::System) => "COVERS",
                    NodeKind::Entity(EntityKind::ErrorCode) => "ADDRESSES",
                    _ => "MENTIONS",
                };
                self.link(doc, entity, label, count as f64 / most);
            }
        }
        Ok(())
    }

    /// DEFINES edges, and each term's first definition (by document path).
    fn definitions(&mut self, conn: &Connection) -> anyhow::Result<()> {
        let mut statement = conn.prepare(&format!(
            "SELECT g.doc_id, g.key, g.text, d.path FROM graph_definitions g
             JOIN documents d USING (doc_id) JOIN chunks c ON c.chunk_id = g.chunk_id
             WHERE g.{INDEXED} ORDER BY d.path, c.idx, g.key"
        ))?;
        let rows = statement.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
            ))
        })?;
        let mut linked = std::collections::BTreeSet::new();
        for row in rows {
            let (doc_id, key, text, path) = row?;
            let (Some(term), Some(doc)) = (
                self.kg
                    .node(&entity_id(NodeKind::Entity(EntityKind::Term), &key)),
                self.kg.node(&format!("doc:{doc_id}")),
            ) else {
                continue;
            };
            let node = &mut self.kg.graph[term];
            if node.definition.is_none() {
                node.definition = Some((text, path));
            }
            if linked.insert((doc, term)) {
                self.link(doc, term, "DEFINES", 1.0);
            }
        }
        Ok(())
    }

    /// Each acronym's most frequent expansion, linked to its CONCEPT node.
    fn expansions(&mut self, conn: &Connection) -> anyhow::Result<()> {
        let mut statement = conn.prepare(&format!(
            "SELECT acronym, expansion, count(*) AS n FROM graph_expansions WHERE {INDEXED}
             GROUP BY acronym, expansion ORDER BY acronym, n DESC, expansion"
        ))?;
        let rows =
            statement.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
        let mut previous = String::new();
        for row in rows {
            let (acronym, expansion) = row?;
            if acronym == previous {
                continue;
            }
            previous = acronym.clone();
            let Some(node) = self
                .kg
                .node(&entity_id(NodeKind::Entity(EntityKind::Acronym), &acronym))
            else {
                continue;
            };
            let concept_key = expansion.to_lowercase();
            self.kg.graph[node].expansion = Some(expansion);
            if let Some(concept) = self.kg.node(&entity_id(
                NodeKind::Entity(EntityKind::Concept),
                &concept_key,
            )) {
                self.link(node, concept, "defined_as", 1.0);
            }
        }
        Ok(())
    }

    /// Typed relations between kept entities.
    fn relations(&mut self, conn: &Connection) -> anyhow::Result<()> {
        let mut statement = conn.prepare(&format!(
            "SELECT from_kind, from_key, to_kind, to_key, label, count(*) FROM graph_relations
             WHERE {INDEXED} GROUP BY from_kind, from_key, to_kind, to_key, label
             ORDER BY from_kind, from_key, to_kind, to_key, label"
        ))?;
        let rows = statement.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, i64>(5)?,
            ))
        })?;
        let mut found = Vec::new();
        for row in rows {
            let (from_kind, from_key, to_kind, to_key, label, count) = row?;
            let node = |kind: &str, key: &str| {
                EntityKind::parse(kind)
                    .and_then(|k| self.kg.node(&entity_id(NodeKind::Entity(k), key)))
            };
            let (Some(from), Some(to), Some(label)) = (
                node(&from_kind, &from_key),
                node(&to_kind, &to_key),
                RELATION_LABELS.iter().find(|l| **l == label),
            ) else {
                continue;
            };
            found.push((from, to, *label, count as f64));
        }
        let most = found.iter().map(|f| f.3).fold(1.0, f64::max);
        for (from, to, label, count) in found {
            self.link(from, to, label, 0.5 + 0.5 * count / most);
        }
        Ok(())
    }

    /// `relates_to` between entities named together in at least
    /// `min_together` chunks.
    fn cooccurrence(&mut self, min_together: u64) {
        let chunks: Vec<NodeIndex> = self
            .kg
            .nodes()
            .filter(|(_, n)| n.kind == NodeKind::Chunk)
            .map(|(i, _)| i)
            .collect();
        let mut chunks_naming: HashMap<NodeIndex, u64> = HashMap::new();
        let mut together: BTreeMap<(NodeIndex, NodeIndex), u64> = BTreeMap::new();
        for chunk in chunks {
            let mut named: Vec<(NodeIndex, f64)> = self
                .kg
                .graph
                .edges_directed(chunk, petgraph::Direction::Outgoing)
                .filter(|e| e.weight().label == "MENTIONS")
                .map(|e| (e.target(), e.weight().weight))
                .collect();
            named.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            named.truncate(COOCCURRING_PER_CHUNK);
            let mut ids: Vec<NodeIndex> = named.into_iter().map(|(i, _)| i).collect();
            ids.sort();
            for (i, a) in ids.iter().enumerate() {
                *chunks_naming.entry(*a).or_default() += 1;
                for b in &ids[i + 1..] {
                    *together.entry((*a, *b)).or_default() += 1;
                }
            }
        }
        for ((a, b), count) in together {
            if count < min_together.max(1) {
                continue;
            }
            let rarer = chunks_naming[&a].min(chunks_naming[&b]) as f64;
            self.link(a, b, "relates_to", count as f64 / rarer);
        }
    }

    /// TOPIC nodes: each document's keywords of highest TF-IDF that are
    /// also keywords of another document.
    fn topics(&mut self, conn: &Connection) -> anyhow::Result<()> {
        let mut statement = conn.prepare(&format!(
            "SELECT doc_id, word, count FROM graph_keywords WHERE {INDEXED} ORDER BY doc_id, word"
        ))?;
        let rows = statement.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
            ))
        })?;
        let mut per_doc: BTreeMap<String, Vec<(String, u64)>> = BTreeMap::new();
        let mut document_frequency: HashMap<String, u64> = HashMap::new();
        for row in rows {
            let (doc_id, word, count) = row?;
            *document_frequency.entry(word.clone()).or_default() += 1;
            per_doc
                .entry(doc_id)
                .or_default()
                .push((word, count as u64));
        }
        let documents = per_doc.len() as f64;
        let mut chosen: BTreeMap<String, Vec<(String, f64)>> = BTreeMap::new();
        for (doc_id, words) in per_doc {
            let mut scored: Vec<(String, f64)> = words
                .into_iter()
                .filter(|(w, _)| document_frequency[w] >= 2)
                .map(|(w, c)| {
                    let idf = (documents / document_frequency[&w] as f64).ln();
                    (w, c as f64 * idf)
                })
                .filter(|(_, s)| *s > 0.0)
                .collect();
            scored.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            scored.truncate(TOPICS_PER_DOCUMENT);
            chosen.insert(doc_id, scored);
        }
        let mut topic_nodes: BTreeMap<String, NodeIndex> = BTreeMap::new();
        let mut words: Vec<&String> = chosen.values().flatten().map(|(w, _)| w).collect();
        words.sort();
        words.dedup();
        for word in words {
            let index = self.add(Node::new(
                entity_id(NodeKind::Topic, word),
                NodeKind::Topic,
                word.clone(),
                word.clone(),
            ));
            topic_nodes.insert(word.clone(), index);
        }
        for (doc_id, scored) in &chosen {
            let Some(doc) = self.kg.node(&format!("doc:{doc_id}")) else {
                continue;
            };
            let best = scored.first().map_or(1.0, |(_, s)| *s);
            for (word, score) in scored {
                let topic = topic_nodes[word];
                self.kg.graph[topic].mentions += 1;
                self.link(doc, topic, "MENTIONS", score / best);
            }
        }
        Ok(())
    }
}
