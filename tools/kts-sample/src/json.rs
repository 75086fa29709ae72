//! JSON writer: a readable object describing the document.

use serde_json::{Map, Value, json};

use crate::outline::{Block, Outline};

/// `{"title": ..., "sections": [{"heading", "level", "paragraphs", "lists",
/// "tables", "code", "images", "notes"}]}`; keys with nothing to say are left
/// out. Lists are `{"ordered": bool, "items": [...]}`, tables
/// `{"columns": [...], "rows": [[...]]}`, images their alt text.
pub fn to_json(outline: &Outline) -> Vec<u8> {
    let sections: Vec<Value> = outline
        .sections(6)
        .iter()
        .map(|s| section(s.heading, s.blocks))
        .collect();
    let doc = json!({ "title": outline.title, "sections": sections });
    let mut bytes = serde_json::to_vec_pretty(&doc).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

fn section(heading: Option<(u8, &str)>, blocks: &[Block]) -> Value {
    let mut obj = Map::new();
    if let Some((level, text)) = heading {
        obj.insert("heading".into(), json!(text));
        obj.insert("level".into(), json!(level));
    }
    for block in blocks {
        let (key, value) = match block {
            Block::Paragraph(text) => ("paragraphs", json!(text)),
            Block::Bullets(items) => ("lists", json!({ "ordered": false, "items": items })),
            Block::Numbered(items) => ("lists", json!({ "ordered": true, "items": items })),
            Block::Table(rows) => ("tables", table(rows)),
            Block::Code(code) => ("code", json!(code)),
            Block::Image { alt, .. } => ("images", json!(alt)),
            Block::Notes(text) => ("notes", json!(text)),
            Block::Heading { .. } | Block::PageBreak => continue,
        };
        if let Value::Array(values) = obj.entry(key).or_insert_with(|| Value::Array(Vec::new())) {
            values.push(value);
        }
    }
    Value::Object(obj)
}

fn table(rows: &[Vec<String>]) -> Value {
    match rows.split_first() {
        Some((header, body)) => json!({ "columns": header, "rows": body }),
        None => json!({ "columns": [], "rows": [] }),
    }
}
