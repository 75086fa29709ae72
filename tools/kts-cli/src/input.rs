use std::io::{BufRead, BufReader, Read};

use kts_record::{ErrorCode, schema_id};
use serde_json::{Map, Value};

/// One input line, classified by its `schema`.
pub enum Incoming {
    File(Value),
    Doc(Value),
    Chunk(Value),
    Error(Value),
    /// A record of a kind this version does not know: passed through unchanged.
    Other(Value),
}

impl Incoming {
    /// Sorts a record by its `schema`; a record without one is taken as one
    /// of `default` (given that field, first) when the reader has a default.
    fn classify(value: Value, default: Option<&str>) -> Result<Incoming, String> {
        let value = match (value, default) {
            (Value::Object(fields), Some(default)) if !fields.contains_key("schema") => {
                let mut named = Map::with_capacity(fields.len() + 1);
                named.insert("schema".into(), default.into());
                named.extend(fields);
                Value::Object(named)
            }
            (value, _) => value,
        };
        let Some(schema) = value.get("schema").and_then(Value::as_str) else {
            return Err("record has no \"schema\" field".into());
        };
        Ok(match schema {
            schema_id::FILE => Incoming::File(value),
            schema_id::DOC => Incoming::Doc(value),
            schema_id::CHUNK => Incoming::Chunk(value),
            schema_id::ERROR => Incoming::Error(value),
            _ => Incoming::Other(value),
        })
    }
}

/// Reads JSON Lines, naming each line's position (`stdin:12`) for messages.
/// Blank lines are skipped.
pub struct JsonlReader<R> {
    lines: std::io::Lines<BufReader<R>>,
    source: String,
    line_number: usize,
    /// The schema of a record that names none.
    default_schema: Option<&'static str>,
}

impl JsonlReader<std::io::Stdin> {
    pub fn stdin() -> Self {
        Self::new(std::io::stdin(), "stdin")
    }
}

impl<R: Read> JsonlReader<R> {
    pub fn new(reader: R, source: &str) -> Self {
        Self {
            lines: BufReader::with_capacity(1 << 16, reader).lines(),
            source: source.into(),
            line_number: 0,
            default_schema: None,
        }
    }

    /// Takes a record without a `schema` field as one of `schema` (the
    /// records this input expects: the schemas make the field optional).
    /// Without it, such a record is a `bad-record`.
    pub fn with_default_schema(mut self, schema: &'static str) -> Self {
        self.default_schema = Some(schema);
        self
    }

    /// The position of the line read last, as `source:line`.
    pub fn position(&self) -> String {
        format!("{}:{}", self.source, self.line_number)
    }
}

impl<R: Read> Iterator for JsonlReader<R> {
    /// A classified record, or the reason the line is not one.
    type Item = anyhow::Result<Result<Incoming, (ErrorCode, String)>>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let line = match self.lines.next()? {
                Ok(line) => line,
                Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                    self.line_number += 1;
                    return Some(Ok(Err((
                        ErrorCode::BadJson,
                        "line is not valid UTF-8".into(),
                    ))));
                }
                Err(e) => {
                    return Some(Err(
                        anyhow::Error::new(e).context(format!("reading {}", self.source))
                    ));
                }
            };
            self.line_number += 1;
            if line.trim().is_empty() {
                continue;
            }
            let parsed = serde_json::from_str::<Value>(&line)
                .map_err(|e| (ErrorCode::BadJson, e.to_string()))
                .and_then(|v| {
                    Incoming::classify(v, self.default_schema)
                        .map_err(|m| (ErrorCode::BadRecord, m))
                });
            return Some(Ok(parsed));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_classified_and_positioned() {
        let input =
            "{\"schema\":\"kts.file/1\"}\n\nnot json\n{\"x\":1}\n{\"schema\":\"other/9\"}\n";
        let mut reader = JsonlReader::new(input.as_bytes(), "stdin");
        assert!(matches!(reader.next(), Some(Ok(Ok(Incoming::File(_))))));
        assert!(matches!(
            reader.next(),
            Some(Ok(Err((ErrorCode::BadJson, _))))
        ));
        assert_eq!(reader.position(), "stdin:3");
        assert!(matches!(
            reader.next(),
            Some(Ok(Err((ErrorCode::BadRecord, _))))
        ));
        assert!(matches!(reader.next(), Some(Ok(Ok(Incoming::Other(_))))));
        assert!(reader.next().is_none());
    }

    #[test]
    fn a_record_without_a_schema_is_taken_as_the_default_one() {
        let input = "{\"path\":\"a.md\"}\n{\"schema\":\"kts.chunk/1\"}\n{\"schema\":7}\n";
        let mut reader =
            JsonlReader::new(input.as_bytes(), "stdin").with_default_schema("kts.doc/1");
        let Some(Ok(Ok(Incoming::Doc(doc)))) = reader.next() else {
            panic!("not taken as a kts.doc/1");
        };
        assert_eq!(doc.to_string(), r#"{"schema":"kts.doc/1","path":"a.md"}"#);
        assert!(matches!(reader.next(), Some(Ok(Ok(Incoming::Chunk(_))))));
        assert!(matches!(
            reader.next(),
            Some(Ok(Err((ErrorCode::BadRecord, _))))
        ));
    }
}
