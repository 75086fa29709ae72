//! The node-link JSON form of the graph (as NetworkX reads and writes it).

use serde_json::{Map, Value, json};

use crate::model::KnowledgeGraph;

pub fn node_link(kg: &KnowledgeGraph, scope: &str) -> Value {
    let nodes: Vec<Value> = kg
        .nodes()
        .map(|(_, n)| {
            let mut node = Map::new();
            node.insert("id".into(), json!(n.id));
            node.insert("kind".into(), json!(n.kind.as_str()));
            node.insert("name".into(), json!(n.name));
            if n.kind.is_named() {
                node.insert("mentions".into(), json!(n.mentions));
            }
            if let Some(path) = &n.path {
                node.insert("path".into(), json!(path));
            }
            if let Some((text, path)) = &n.definition {
                node.insert("definition".into(), json!(text));
                node.insert("defined_in".into(), json!(path));
            }
            if let Some(expansion) = &n.expansion {
                node.insert("expansion".into(), json!(expansion));
            }
            Value::Object(node)
        })
        .collect();
    let links: Vec<Value> = kg
        .graph
        .edge_indices()
        .filter_map(|e| {
            let (from, to) = kg.graph.edge_endpoints(e)?;
            let edge = &kg.graph[e];
            Some(json!({
                "source": kg.graph[from].id,
                "target": kg.graph[to].id,
                "type": edge.label,
                "weight": (edge.weight * 1e6).round() / 1e6,
            }))
        })
        .collect();
    json!({
        "directed": true,
        "multigraph": true,
        "graph": {
            "scope": scope,
            "min_mentions": kg.settings.min_mentions,
            "edge_threshold": kg.settings.edge_threshold,
        },
        "nodes": nodes,
        "links": links,
    })
}
