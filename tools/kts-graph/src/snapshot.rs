//! The graph's snapshot: the graph kts-graph built, materialised in the
//! scope's database so that a question reads only the part of it it walks,
//! instead of building the whole graph from the extraction rows (seconds and
//! hundreds of MB at 100,000 documents).
//!
//! ```text
//! graph_snapshot        one row: stamp, nodes (chunks not counted), documents
//! graph_snapshot_nodes  idx PK (the node's index in the built graph), id UNIQUE, kind, name,
//!                       key, lower_key (entities and topics), mentions, path, definition,
//!                       defined_in, expansion; document_links, named_links (edges to documents,
//!                       to entities and topics), degree (entities and topics)
//! graph_snapshot_links  node, position, other, other_kind, label, weight: each edge from both
//!                       of its ends, in the order KnowledgeGraph::edges_of lists them; no chunks
//! ```
//!
//! A snapshot is used only while its stamp is the one the store and the
//! settings call for: the snapshot format, the generation in `graph_meta`
//! (which triggers raise whenever documents or their extraction rows
//! change, see tables.rs) and the settings that shape the graph. Otherwise
//! readers build the graph whole, as before, until kts-graph writes a new
//! snapshot (in one transaction with its stamp).

use std::path::Path;

use anyhow::Context;
use petgraph::stable_graph::NodeIndex;
use rusqlite::{Connection, OptionalExtension, params};

use crate::extract::{EntityKind, RELATION_LABELS};
use crate::model::{KnowledgeGraph, Node, NodeKind};
use crate::settings::Settings;
use crate::view::{GraphView, Link, LinkCounts, degree};

/// Bumped when the snapshot's tables or the way the graph is built change.
const FORMAT: u32 = 1;

const TABLES: &str = "
DROP TABLE IF EXISTS graph_snapshot;
DROP TABLE IF EXISTS graph_snapshot_nodes;
DROP TABLE IF EXISTS graph_snapshot_links;
CREATE TABLE graph_snapshot (stamp TEXT NOT NULL, nodes INTEGER NOT NULL, documents INTEGER NOT NULL);
CREATE TABLE graph_snapshot_nodes (
    idx INTEGER PRIMARY KEY, id TEXT NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL,
    key TEXT NOT NULL, lower_key TEXT, mentions INTEGER NOT NULL, path TEXT, definition TEXT,
    defined_in TEXT, expansion TEXT, document_links INTEGER NOT NULL,
    named_links INTEGER NOT NULL, degree INTEGER);
CREATE TABLE graph_snapshot_links (
    node INTEGER NOT NULL, position INTEGER NOT NULL, other INTEGER NOT NULL,
    other_kind INTEGER NOT NULL, label INTEGER NOT NULL, weight REAL NOT NULL,
    PRIMARY KEY (node, position)) WITHOUT ROWID;
";

/// Made once the nodes are in (faster than keeping them up to date row by row).
const INDEXES: &str = "
CREATE UNIQUE INDEX graph_snapshot_nodes_by_id ON graph_snapshot_nodes(id);
CREATE INDEX graph_snapshot_nodes_by_lower_key ON graph_snapshot_nodes(lower_key)
    WHERE lower_key IS NOT NULL;
CREATE INDEX graph_snapshot_nodes_by_path ON graph_snapshot_nodes(path) WHERE kind = 'DOCUMENT';
CREATE INDEX graph_snapshot_nodes_by_degree ON graph_snapshot_nodes(degree DESC, id)
    WHERE degree IS NOT NULL;
";

const NODE_COLUMNS: &str = "id, kind, name, key, mentions, path, definition, defined_in, expansion";

/// The labels of edges, stored by their position here.
fn labels() -> impl Iterator<Item = &'static str> {
    [
        "PART_OF",
        "MENTIONS",
        "COVERS",
        "ADDRESSES",
        "DEFINES",
        "defined_as",
        "relates_to",
    ]
    .into_iter()
    .chain(RELATION_LABELS)
}

/// The kinds of nodes, stored by their position here.
fn kinds() -> impl Iterator<Item = NodeKind> {
    [NodeKind::Document, NodeKind::Chunk, NodeKind::Topic]
        .into_iter()
        .chain(EntityKind::ALL.into_iter().map(NodeKind::Entity))
}

fn code<T: PartialEq>(mut all: impl Iterator<Item = T>, wanted: T) -> i64 {
    all.position(|x| x == wanted)
        .expect("every label and kind is listed") as i64
}

fn decode<T>(mut all: impl Iterator<Item = T>, code: i64) -> anyhow::Result<T> {
    usize::try_from(code)
        .ok()
        .and_then(|c| all.nth(c))
        .with_context(|| format!("the graph snapshot holds an unknown code {code}"))
}

fn parse_kind(text: &str) -> anyhow::Result<NodeKind> {
    kinds()
        .find(|k| k.as_str() == text)
        .with_context(|| format!("the graph snapshot holds an unknown kind {text:?}"))
}

/// The stamp a current snapshot of the scope carries for `settings`.
fn expected_stamp(conn: &Connection, settings: &Settings) -> anyhow::Result<String> {
    let generation: String = conn
        .query_row(
            "SELECT value FROM graph_meta WHERE key = 'generation'",
            [],
            |r| r.get(0),
        )
        .optional()?
        .unwrap_or_default();
    Ok(format!(
        "{FORMAT} {generation} {}",
        settings.graph_fingerprint()
    ))
}

fn stored_stamp(conn: &Connection) -> anyhow::Result<Option<String>> {
    let exists: bool = conn.query_row(
        "SELECT count(*) > 0 FROM sqlite_master WHERE name = 'graph_snapshot'",
        [],
        |r| r.get(0),
    )?;
    if !exists {
        return Ok(None);
    }
    Ok(conn
        .query_row("SELECT stamp FROM graph_snapshot", [], |r| r.get(0))
        .optional()?)
}

/// Whether the scope's snapshot is current for `settings`.
pub fn is_current(conn: &Connection, settings: &Settings) -> anyhow::Result<bool> {
    Ok(stored_stamp(conn)? == Some(expected_stamp(conn, settings)?))
}

/// Replaces the snapshot with one of `kg` (built from the rows as they are
/// in this transaction), inside the caller's transaction.
pub fn write(conn: &Connection, kg: &KnowledgeGraph) -> anyhow::Result<()> {
    conn.execute_batch(TABLES)?;
    let mut node_row = conn.prepare(
        "INSERT INTO graph_snapshot_nodes VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11,
         ?12, ?13, ?14)",
    )?;
    let mut link_row =
        conn.prepare("INSERT INTO graph_snapshot_links VALUES (?1, ?2, ?3, ?4, ?5, ?6)")?;
    let (mut nodes, mut documents) = (0, 0);
    for (index, node) in kg.nodes().filter(|(_, n)| n.kind != NodeKind::Chunk) {
        let links = kg.links_of(index);
        let counts = LinkCounts::of(&links);
        let named = node.kind.is_named();
        node_row.execute(params![
            index.index() as i64,
            node.id,
            node.kind.as_str(),
            node.name,
            node.key,
            named.then(|| node.key.to_lowercase()),
            node.mentions as i64,
            node.path,
            node.definition.as_ref().map(|(text, _)| text),
            node.definition.as_ref().map(|(_, path)| path),
            node.expansion,
            counts.documents as i64,
            counts.named as i64,
            named.then(|| degree(&links) as i64),
        ])?;
        for (position, link) in links.iter().enumerate() {
            link_row.execute(params![
                index.index() as i64,
                position as i64,
                link.other.index() as i64,
                code(kinds(), link.kind),
                code(labels(), link.label),
                link.weight,
            ])?;
        }
        nodes += 1;
        documents += usize::from(node.kind == NodeKind::Document);
    }
    conn.execute_batch(INDEXES)?;
    conn.execute(
        "INSERT INTO graph_snapshot VALUES (?1, ?2, ?3)",
        params![
            expected_stamp(conn, &kg.settings)?,
            nodes as i64,
            documents as i64
        ],
    )?;
    Ok(())
}

/// A current snapshot, read through a connection of its own.
pub struct Snapshot {
    conn: Connection,
    settings: Settings,
    stamp: String,
    nodes: usize,
    documents: usize,
}

impl Snapshot {
    /// The snapshot of the scope, when it is current for `settings`.
    pub fn open(scope: &Path, settings: &Settings) -> anyhow::Result<Option<Snapshot>> {
        let conn = kts_store::open_read_only(&kts_store::db_path(scope))?;
        conn.execute_batch("BEGIN")?;
        let current = Self::current(&conn, settings);
        conn.execute_batch("COMMIT")?;
        let Some((stamp, nodes, documents)) = current? else {
            return Ok(None);
        };
        Ok(Some(Snapshot {
            conn,
            settings: settings.clone(),
            stamp,
            nodes,
            documents,
        }))
    }

    /// The stamp and the counts of a current snapshot.
    fn current(
        conn: &Connection,
        settings: &Settings,
    ) -> anyhow::Result<Option<(String, usize, usize)>> {
        if !crate::tables::exist(conn)? || !is_current(conn, settings)? {
            return Ok(None);
        }
        Ok(Some(conn.query_row(
            "SELECT stamp, nodes, documents FROM graph_snapshot",
            [],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get::<_, i64>(1)? as usize,
                    r.get::<_, i64>(2)? as usize,
                ))
            },
        )?))
    }

    /// Runs `read` on one state of the database, the one this snapshot was
    /// opened in (an error if kts-graph has written another since).
    pub fn read<T>(&self, read: impl FnOnce(&Snapshot) -> anyhow::Result<T>) -> anyhow::Result<T> {
        self.conn.execute_batch("BEGIN")?;
        let result = stored_stamp(&self.conn).and_then(|stamp| {
            anyhow::ensure!(
                stamp.as_deref() == Some(self.stamp.as_str()),
                "the knowledge graph was rebuilt while it was being read: ask again"
            );
            read(self)
        });
        self.conn.execute_batch("COMMIT")?;
        result
    }

    fn indices(&self, sql: &str, param: &str) -> anyhow::Result<Vec<NodeIndex>> {
        Ok(self
            .conn
            .prepare_cached(sql)?
            .query_map([param], |r| {
                Ok(NodeIndex::new(r.get::<_, i64>(0)? as usize))
            })?
            .collect::<Result<_, _>>()?)
    }
}

/// A node of a `SELECT {NODE_COLUMNS}` row.
fn node_of(r: &rusqlite::Row) -> rusqlite::Result<Node> {
    let kind: String = r.get(1)?;
    let kind = parse_kind(&kind).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(1, rusqlite::types::Type::Text, e.into())
    })?;
    let definition: Option<String> = r.get(6)?;
    let defined_in: Option<String> = r.get(7)?;
    Ok(Node {
        id: r.get(0)?,
        kind,
        name: r.get(2)?,
        key: r.get(3)?,
        mentions: r.get::<_, i64>(4)? as u64,
        path: r.get(5)?,
        definition: definition.zip(defined_in),
        expansion: r.get(8)?,
    })
}

impl GraphView for Snapshot {
    fn settings(&self) -> &Settings {
        &self.settings
    }

    fn node(&self, index: NodeIndex) -> anyhow::Result<Node> {
        self.conn
            .prepare_cached(&format!(
                "SELECT {NODE_COLUMNS} FROM graph_snapshot_nodes WHERE idx = ?1"
            ))?
            .query_row([index.index() as i64], node_of)
            .with_context(|| format!("node {} is not in the graph snapshot", index.index()))
    }

    fn links(&self, index: NodeIndex) -> anyhow::Result<Vec<Link>> {
        let mut statement = self.conn.prepare_cached(
            "SELECT other, other_kind, label, weight FROM graph_snapshot_links
             WHERE node = ?1 ORDER BY position",
        )?;
        let rows = statement.query_map([index.index() as i64], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, f64>(3)?,
            ))
        })?;
        rows.map(|row| {
            let (other, kind, label, weight) = row?;
            Ok(Link {
                other: NodeIndex::new(other as usize),
                kind: decode(kinds(), kind)?,
                label: decode(labels(), label)?,
                weight,
            })
        })
        .collect()
    }

    fn link_counts(&self, index: NodeIndex) -> anyhow::Result<LinkCounts> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT document_links, named_links FROM graph_snapshot_nodes WHERE idx = ?1",
            )?
            .query_row([index.index() as i64], |r| {
                Ok(LinkCounts {
                    documents: r.get::<_, i64>(0)? as usize,
                    named: r.get::<_, i64>(1)? as usize,
                })
            })?)
    }

    fn find(&self, id: &str) -> anyhow::Result<Option<NodeIndex>> {
        Ok(self
            .indices("SELECT idx FROM graph_snapshot_nodes WHERE id = ?1", id)?
            .pop())
    }

    fn named_by_lower_key(&self, lower_key: &str) -> anyhow::Result<Vec<NodeIndex>> {
        self.indices(
            "SELECT idx FROM graph_snapshot_nodes WHERE lower_key = ?1 ORDER BY idx",
            lower_key,
        )
    }

    fn document_with_path(&self, path: &str) -> anyhow::Result<Option<NodeIndex>> {
        Ok(self
            .indices(
                "SELECT idx FROM graph_snapshot_nodes WHERE kind = 'DOCUMENT' AND path = ?1
                 ORDER BY idx LIMIT 1",
                path,
            )?
            .pop())
    }

    fn document_paths(&self) -> anyhow::Result<Vec<(NodeIndex, String)>> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT idx, path FROM graph_snapshot_nodes WHERE kind = 'DOCUMENT' ORDER BY idx",
            )?
            .query_map([], |r| {
                Ok((NodeIndex::new(r.get::<_, i64>(0)? as usize), r.get(1)?))
            })?
            .collect::<Result<_, _>>()?)
    }

    fn document_count(&self) -> usize {
        self.documents
    }

    fn node_count(&self) -> usize {
        self.nodes
    }

    fn most_linked(&self, top: usize) -> anyhow::Result<Vec<(NodeIndex, usize)>> {
        Ok(self
            .conn
            .prepare_cached(
                "SELECT idx, degree FROM graph_snapshot_nodes WHERE degree IS NOT NULL
                 ORDER BY degree DESC, id LIMIT ?1",
            )?
            .query_map([top as i64], |r| {
                Ok((
                    NodeIndex::new(r.get::<_, i64>(0)? as usize),
                    r.get::<_, i64>(1)? as usize,
                ))
            })?
            .collect::<Result<_, _>>()?)
    }
}
