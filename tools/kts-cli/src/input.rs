use std::io::{BufRead, BufReader, Read};

use kts_record::{ErrorCode, schema_id};
use serde_json::Value;

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
    fn classify(value: Value) -> Result<Incoming, String> {
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
        }
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
                .and_then(|v| Incoming::classify(v).map_err(|m| (ErrorCode::BadRecord, m)));
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
}
