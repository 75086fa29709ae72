//! JSON: rendered as Markdown for reading and retrieval. Objects become
//! `key: value` lists (nested objects nest), arrays of flat objects become
//! tables, and every string value is kept. Keys come out sorted (serde_json
//! is built without `preserve_order`).

use kts_record::ErrorCode;
use serde_json::{Map, Value};

use super::{ConvertError, Converted};

/// Arrays of flat objects with more keys than this read better as lists.
const MAX_TABLE_COLUMNS: usize = 12;

pub fn convert(bytes: &[u8]) -> Result<Converted, ConvertError> {
    let decoded = super::text::decode(bytes)?;
    let value: Value = serde_json::from_str(&decoded.text).map_err(|e| {
        ConvertError::corrupt(format!(
            "invalid JSON at line {}, column {}: {e}",
            e.line(),
            e.column()
        ))
    })?;
    let markdown = render(&value);
    if markdown.trim().is_empty() {
        return Err(ConvertError::new(
            ErrorCode::Empty,
            "the JSON document holds no values",
        ));
    }
    Ok(Converted {
        markdown,
        title: title(&value),
        properties: {
            let mut properties = Map::new();
            decoded.note(&mut properties);
            properties
        },
    })
}

/// A top-level `title` or `name` string, if the document has one.
fn title(value: &Value) -> Option<String> {
    let object = value.as_object()?;
    ["title", "name"]
        .iter()
        .find_map(|key| object.get(*key)?.as_str())
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
}

fn render(value: &Value) -> String {
    let mut lines = Vec::new();
    match value {
        Value::Array(items) if table_columns(items).is_some() => lines.push(table(items)),
        Value::Array(_) | Value::Object(_) => block(value, 0, &mut lines),
        scalar => lines.push(scalar_text(scalar)),
    }
    let mut markdown = lines.join("\n");
    markdown.push('\n');
    markdown
}

/// Writes an object or array as a nested Markdown list at `depth`.
fn block(value: &Value, depth: usize, lines: &mut Vec<String>) {
    let indent = "  ".repeat(depth);
    match value {
        Value::Object(object) => {
            for (key, value) in object {
                entry(
                    &format!("{indent}- **{}**", inline(key)),
                    value,
                    depth,
                    lines,
                );
            }
        }
        Value::Array(items) => {
            for (i, value) in items.iter().enumerate() {
                entry(&format!("{indent}- [{}]", i + 1), value, depth, lines);
            }
        }
        scalar => lines.push(format!("{indent}- {}", scalar_text(scalar))),
    }
}

/// One list entry: `label: value` for scalars, the label then a nested list otherwise.
fn entry(label: &str, value: &Value, depth: usize, lines: &mut Vec<String>) {
    match value {
        Value::Object(o) if o.is_empty() => lines.push(format!("{label}: {{}}")),
        Value::Array(a) if a.is_empty() => lines.push(format!("{label}: []")),
        Value::Array(items) if items.iter().all(is_scalar) => {
            let values: Vec<String> = items.iter().map(scalar_text).collect();
            lines.push(format!("{label}: {}", values.join(", ")));
        }
        Value::Array(items) if table_columns(items).is_some() => {
            lines.push(format!("{label}:"));
            lines.push(String::new());
            let table_indent = "  ".repeat(depth + 1);
            lines.extend(table(items).lines().map(|l| format!("{table_indent}{l}")));
            lines.push(String::new());
        }
        Value::Object(_) | Value::Array(_) => {
            lines.push(format!("{label}:"));
            block(value, depth + 1, lines);
        }
        scalar => lines.push(format!("{label}: {}", scalar_text(scalar))),
    }
}

fn is_scalar(value: &Value) -> bool {
    !matches!(value, Value::Object(_) | Value::Array(_))
}

/// The columns of a table for an array of at least two flat objects.
fn table_columns(items: &[Value]) -> Option<Vec<&String>> {
    if items.len() < 2 {
        return None;
    }
    let mut columns: Vec<&String> = Vec::new();
    for item in items {
        let object = item.as_object()?;
        for (key, value) in object {
            if !is_scalar(value) {
                return None;
            }
            if !columns.contains(&key) {
                columns.push(key);
            }
        }
    }
    (!columns.is_empty() && columns.len() <= MAX_TABLE_COLUMNS).then_some(columns)
}

fn table(items: &[Value]) -> String {
    let Some(columns) = table_columns(items) else {
        return String::new();
    };
    let cell = |text: String| text.replace('|', "\\|");
    let header: Vec<String> = columns.iter().map(|c| cell(inline(c))).collect();
    let mut lines = vec![
        format!("| {} |", header.join(" | ")),
        format!("|{}", " --- |".repeat(columns.len())),
    ];
    for item in items {
        let row: Vec<String> = columns
            .iter()
            .map(|c| {
                item.get(c.as_str())
                    .map(|v| cell(scalar_text(v)))
                    .unwrap_or_default()
            })
            .collect();
        lines.push(format!("| {} |", row.join(" | ")));
    }
    lines.join("\n")
}

fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(s) => inline(s),
        Value::Null => "null".into(),
        other => other.to_string(),
    }
}

/// A string on one line (line breaks in values become spaces).
fn inline(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_become_nested_key_value_lists_in_file_order() {
        let converted = convert(br#"{"title": "Config", "server": {"host": "a.example", "ports": [80, 443]}, "tags": []}"#).unwrap();
        assert_eq!(converted.title.as_deref(), Some("Config"));
        assert_eq!(
            converted.markdown,
            "- **title**: Config\n- **server**:\n  - **host**: a.example\n  - **ports**: 80, 443\n- **tags**: []\n"
        );
    }

    #[test]
    fn arrays_of_flat_objects_become_tables() {
        let markdown = convert(br#"[{"name": "a|b", "n": 1}, {"name": "c", "extra": null}]"#)
            .unwrap()
            .markdown;
        assert_eq!(
            markdown,
            "| name | n | extra |\n| --- | --- | --- |\n| a\\|b | 1 |  |\n| c |  | null |\n"
        );
    }

    #[test]
    fn every_string_is_kept_in_mixed_arrays() {
        let markdown = convert(br#"{"items": [{"id": "x1", "sub": {"deep": "kept"}}, "loose"]}"#)
            .unwrap()
            .markdown;
        for word in ["x1", "kept", "loose"] {
            assert!(markdown.contains(word), "{word} missing from {markdown}");
        }
    }

    #[test]
    fn invalid_json_is_corrupt_with_its_position() {
        let error = convert(b"{\n  \"a\": 1,\n  oops\n}").unwrap_err();
        assert_eq!(error.code, ErrorCode::Corrupt);
        assert!(error.message.contains("line 3"), "{}", error.message);
        assert_eq!(convert(b"  ").unwrap_err().code, ErrorCode::Empty);
    }
}
