//! A tool call's arguments, read against what the tool takes: a missing,
//! unknown or ill-typed one is refused with a message naming it.

use std::ops::RangeInclusive;

use anyhow::bail;
use serde_json::{Map, Value};

/// Longest question taken, in bytes: a question, not a document (the
/// embedding model reads 256 tokens of it in any case).
pub const MAX_QUESTION_BYTES: usize = 8 * 1024;
/// Longest answer `check_answer` takes, in bytes.
pub const MAX_ANSWER_BYTES: usize = 256 * 1024;

pub struct Arguments<'a> {
    tool: &'a str,
    values: &'a Map<String, Value>,
}

impl<'a> Arguments<'a> {
    /// The arguments of `tool`, refusing any it does not take.
    pub fn new(
        tool: &'a str,
        values: &'a Map<String, Value>,
        takes: &[&str],
    ) -> anyhow::Result<Self> {
        if let Some(unknown) = values.keys().find(|k| !takes.contains(&k.as_str())) {
            if takes.is_empty() {
                bail!("{tool} takes no arguments, not {unknown:?}");
            }
            bail!(
                "{tool} takes no argument {unknown:?}; it takes: {}",
                takes.join(", ")
            );
        }
        Ok(Arguments { tool, values })
    }

    fn present(&self, name: &str) -> Option<&'a Value> {
        self.values.get(name).filter(|v| !v.is_null())
    }

    pub fn string(&self, name: &str) -> anyhow::Result<Option<&'a str>> {
        match self.present(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => bail!(
                "{}: {name} must be a string, not {}",
                self.tool,
                kind(other)
            ),
        }
    }

    pub fn required_string(&self, name: &str) -> anyhow::Result<&'a str> {
        self.string(name)?
            .ok_or_else(|| anyhow::anyhow!("{}: the argument {name} is required", self.tool))
    }

    /// A string that is not blank (a path, an id), if given.
    pub fn non_empty_string(&self, name: &str) -> anyhow::Result<Option<&'a str>> {
        match self.string(name)? {
            Some(given) if given.trim().is_empty() => bail!("{}: the {name} is empty", self.tool),
            given => Ok(given),
        }
    }

    /// A question: words to search for, at most [`MAX_QUESTION_BYTES`].
    pub fn question(&self, name: &str) -> anyhow::Result<&'a str> {
        let question = self.required_string(name)?;
        check_text(self.tool, name, question, MAX_QUESTION_BYTES)?;
        if let Some(why) = kts_query::unsearchable(question) {
            bail!("{}: {why}", self.tool);
        }
        Ok(question)
    }

    /// A long text (an answer to check), at most [`MAX_ANSWER_BYTES`].
    pub fn text(&self, name: &str) -> anyhow::Result<&'a str> {
        let text = self.required_string(name)?;
        check_text(self.tool, name, text, MAX_ANSWER_BYTES)?;
        Ok(text)
    }

    pub fn integer(&self, name: &str, range: RangeInclusive<u64>) -> anyhow::Result<Option<usize>> {
        let Some(value) = self.present(name) else {
            return Ok(None);
        };
        match whole_number(value) {
            Some(n) if range.contains(&n) => Ok(Some(n as usize)),
            _ => bail!(
                "{}: {name} must be an integer from {} to {}, not {value}",
                self.tool,
                range.start(),
                range.end()
            ),
        }
    }

    pub fn number(&self, name: &str, range: RangeInclusive<f64>) -> anyhow::Result<Option<f64>> {
        let Some(value) = self.present(name) else {
            return Ok(None);
        };
        match value.as_f64() {
            Some(x) if range.contains(&x) => Ok(Some(x)),
            _ => bail!(
                "{}: {name} must be a number from {} to {}, not {value}",
                self.tool,
                range.start(),
                range.end()
            ),
        }
    }

    /// One of `choices`, if given.
    pub fn choice(
        &self,
        name: &str,
        choices: &[&'static str],
    ) -> anyhow::Result<Option<&'static str>> {
        let Some(given) = self.string(name)? else {
            return Ok(None);
        };
        match choices.iter().find(|c| c.eq_ignore_ascii_case(given)) {
            Some(choice) => Ok(Some(choice)),
            None => bail!(
                "{}: {name} must be one of {}, not {given:?}",
                self.tool,
                choices.join(", ")
            ),
        }
    }
}

/// A non-negative integer, also written with a zero fraction (`5.0`), as
/// JSON Schema's "integer" takes it.
fn whole_number(value: &Value) -> Option<u64> {
    if let Some(n) = value.as_u64() {
        return Some(n);
    }
    let x = value.as_f64()?;
    // 2^64 itself is past u64::MAX, and `as` would saturate it silently.
    (x >= 0.0 && x.fract() == 0.0 && x < 18_446_744_073_709_551_616.0).then_some(x as u64)
}

fn check_text(tool: &str, name: &str, text: &str, max: usize) -> anyhow::Result<()> {
    if text.trim().is_empty() {
        bail!("{tool}: the {name} is empty");
    }
    if text.len() > max {
        bail!(
            "{tool}: the {name} is {} bytes long, more than the {max} taken",
            text.len()
        );
    }
    Ok(())
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn with(
        values: Value,
        takes: &[&str],
        check: impl FnOnce(&Arguments) -> anyhow::Result<()>,
    ) -> String {
        let map = values.as_object().unwrap().clone();
        match Arguments::new("search", &map, takes).and_then(|a| check(&a)) {
            Ok(()) => String::new(),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn bad_arguments_are_named_in_the_refusal() {
        let takes = ["question", "top_k", "mode"];
        assert!(
            with(json!({"question": "x", "bogus": 1}), &takes, |_| Ok(())).contains("\"bogus\"")
        );
        assert!(with(json!({}), &takes, |a| a.question("question").map(drop)).contains("required"));
        assert_eq!(
            with(json!({"x": 1}), &[], |_| Ok(())),
            "search takes no arguments, not \"x\""
        );
        assert_eq!(
            with(json!({"question": " "}), &takes, |a| a
                .non_empty_string("question")
                .map(drop)),
            "search: the question is empty"
        );
        assert!(
            with(json!({"question": 7}), &takes, |a| a
                .question("question")
                .map(drop))
            .contains("not a number")
        );
        let long = "word ".repeat(30_000);
        assert!(
            with(json!({"question": long}), &takes, |a| a
                .question("question")
                .map(drop))
            .contains("bytes long")
        );
        assert!(
            with(json!({"question": "\"*^:()"}), &takes, |a| a
                .question("question")
                .map(drop))
            .contains("no words")
        );
        assert!(
            with(json!({"top_k": 0}), &takes, |a| a
                .integer("top_k", 1..=100)
                .map(drop))
            .contains("from 1 to 100")
        );
        assert!(
            with(json!({"top_k": "3"}), &takes, |a| a
                .integer("top_k", 1..=100)
                .map(drop))
            .contains("not \"3\"")
        );
        assert!(
            with(json!({"mode": "fuzzy"}), &takes, |a| a
                .choice("mode", &["bm25", "hybrid"])
                .map(drop))
            .contains("one of bm25, hybrid")
        );
        assert_eq!(
            with(
                json!({"question": "leave policy", "top_k": 5, "mode": "BM25"}),
                &takes,
                |a| {
                    assert_eq!(a.question("question")?, "leave policy");
                    assert_eq!(a.integer("top_k", 1..=100)?, Some(5));
                    assert_eq!(a.choice("mode", &["bm25", "hybrid"])?, Some("bm25"));
                    Ok(())
                }
            ),
            ""
        );
    }

    #[test]
    fn an_integer_may_be_written_with_a_zero_fraction() {
        let top_k = |value: Value| {
            let map = json!({ "top_k": value }).as_object().unwrap().clone();
            let args = Arguments::new("search", &map, &["top_k"]).unwrap();
            args.integer("top_k", 1..=100).map_err(|e| e.to_string())
        };
        assert_eq!(top_k(json!(1.0)), Ok(Some(1)));
        assert_eq!(top_k(json!(100.0)), Ok(Some(100)));
        for refused in [
            json!(1.5),
            json!(0.0),
            json!(-1.0),
            json!(101.0),
            json!(1e300),
        ] {
            let message = top_k(refused.clone()).unwrap_err();
            assert!(
                message.contains("an integer from 1 to 100"),
                "{refused}: {message}"
            );
        }
    }
}
