//! Messages checked as they arrive, before rmcp reads them: what is not
//! JSON, not a JSON-RPC 2.0 message or not one of MCP's is answered with
//! the JSON-RPC error saying what is wrong with it (-32700, -32600 or
//! -32602), carrying the message's id when one can be read; rmcp itself
//! drops unparsable input without a word and answers an invalid request
//! without its id, which leaves its client waiting.

use std::fmt;

use rmcp::model::{
    CallToolRequest, ClientJsonRpcMessage, CustomRequest, ErrorCode, ErrorData, GetPromptRequest,
    InitializeRequest, ListPromptsRequest, ListResourceTemplatesRequest, ListResourcesRequest,
    ListToolsRequest, PingRequest, ReadResourceRequest,
};
use serde::de::{DeserializeOwned, IgnoredAny, MapAccess, Visitor};
use serde::{Deserializer, de};
use serde_json::{Value, json};

/// Longest message taken, in bytes, on stdin and over HTTP.
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// Bytes kept of a message too long to take, to read its id from.
pub const KEPT_OF_OVERSIZED: usize = 4096;

/// The methods kts-mcp answers.
const METHODS: [&str; 9] = [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
];

/// The only protocol version with JSON-RPC batches: the next removed them.
pub const BATCH_VERSION: &str = "2025-03-26";

/// What is done with a message received.
pub enum Checked {
    /// A message for rmcp.
    Message(Box<ClientJsonRpcMessage>),
    /// A batch: its messages, each to be checked apart ([`check_value`]),
    /// when the client negotiated [`BATCH_VERSION`] (see [`batch_refused`]).
    Batch(Vec<Value>),
    /// A notification that cannot be read: no answer (JSON-RPC answers no
    /// notification), only a line in the log.
    Ignored(String),
    Refused(Refusal),
}

/// The error answering a message that is none.
#[derive(Debug)]
pub struct Refusal {
    /// The message's id, when it has one (else the error's id is null).
    pub id: Value,
    pub code: ErrorCode,
    pub message: String,
}

impl Refusal {
    fn new(id: Value, code: ErrorCode, message: impl Into<String>) -> Refusal {
        Refusal {
            id,
            code,
            message: message.into(),
        }
    }

    /// The JSON-RPC error response.
    pub fn response(&self) -> Value {
        json!({"jsonrpc": "2.0", "id": self.id,
               "error": {"code": self.code.0, "message": self.message}})
    }

    /// The refusal of a message longer than [`MAX_MESSAGE_BYTES`], of which
    /// `start` was kept: its id, when it comes first, is answered.
    pub fn oversized(start: &[u8]) -> Refusal {
        Refusal::new(
            leading_id(start).unwrap_or(Value::Null),
            ErrorCode::INVALID_REQUEST,
            format!(
                "Invalid request: the message is longer than {} MiB",
                MAX_MESSAGE_BYTES >> 20
            ),
        )
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.id {
            Value::Null => write!(f, "{} ({})", self.message, self.code.0),
            id => write!(f, "request {id}: {} ({})", self.message, self.code.0),
        }
    }
}

/// A message as it arrived (one line of stdin, or an HTTP body).
pub fn check(bytes: &[u8]) -> Checked {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(value) => value,
        Err(e) => {
            return Checked::Refused(Refusal::new(
                Value::Null,
                ErrorCode::PARSE_ERROR,
                format!("Parse error: not JSON: {e}"),
            ));
        }
    };
    match value {
        Value::Array(messages) if !messages.is_empty() => Checked::Batch(messages),
        value => check_value(value),
    }
}

/// A message read (one of a batch, or the only one).
pub fn check_value(value: Value) -> Checked {
    let notification = value.get("method").is_some() && value.get("id").is_none();
    match message(value) {
        Ok(message) => Checked::Message(Box::new(message)),
        Err(refusal) if notification => Checked::Ignored(refusal.message),
        Err(refusal) => Checked::Refused(refusal),
    }
}

/// The refusal of a batch from a client that negotiated `version` (or none yet).
pub fn batch_refused(version: Option<&str>) -> Refusal {
    Refusal::new(
        Value::Null,
        ErrorCode::INVALID_REQUEST,
        format!(
            "Invalid request: a batch (an array of messages), which only protocol \
             {BATCH_VERSION} takes and this client negotiated {}: send one message at a time",
            version.unwrap_or("none yet")
        ),
    )
}

fn message(value: Value) -> Result<ClientJsonRpcMessage, Refusal> {
    let object = match &value {
        Value::Object(object) => object,
        Value::Array(_) => {
            return Err(Refusal::new(
                Value::Null,
                ErrorCode::INVALID_REQUEST,
                "Invalid request: an empty batch, or a batch in a batch",
            ));
        }
        other => {
            return Err(Refusal::new(
                Value::Null,
                ErrorCode::INVALID_REQUEST,
                format!("Invalid request: a JSON-RPC message is an object, not {other}"),
            ));
        }
    };
    let id = match object.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    };
    let invalid = |why: String| Refusal::new(id.clone(), ErrorCode::INVALID_REQUEST, why);
    if object.get("jsonrpc") != Some(&json!("2.0")) {
        return Err(invalid(format!(
            "Invalid request: \"jsonrpc\" must be \"2.0\", not {}",
            shown(object.get("jsonrpc"))
        )));
    }
    if let Some(given) = object.get("id")
        && id.is_null()
    {
        return Err(invalid(format!(
            "Invalid request: \"id\" must be a string or a number, not {given}"
        )));
    }
    match object.get("method") {
        Some(Value::String(_)) => check_params(object.get("params"), &id)?,
        Some(other) => {
            return Err(invalid(format!(
                "Invalid request: \"method\" must be a string, not {other}"
            )));
        }
        None if object.contains_key("result") || object.contains_key("error") => {}
        None => {
            return Err(invalid(
                "Invalid request: no \"method\" (a request or a notification) nor \"result\" \
                 or \"error\" (a response)"
                    .into(),
            ));
        }
    }
    serde_json::from_value(value).map_err(|e| invalid(format!("Invalid request: {e}")))
}

/// MCP's params are an object, and their `_meta` too.
fn check_params(params: Option<&Value>, id: &Value) -> Result<(), Refusal> {
    let refuse = |why: String| Refusal::new(id.clone(), ErrorCode::INVALID_PARAMS, why);
    match params {
        None | Some(Value::Null) => Ok(()),
        Some(Value::Object(params)) => match params.get("_meta") {
            None | Some(Value::Object(_)) => Ok(()),
            Some(other) => Err(refuse(format!(
                "Invalid params: \"_meta\" must be an object, not {other}"
            ))),
        },
        Some(other) => Err(refuse(format!(
            "Invalid params: \"params\" must be an object, not {other}"
        ))),
    }
}

fn shown(value: Option<&Value>) -> String {
    value.map_or_else(|| "missing".into(), Value::to_string)
}

/// The error answering a request rmcp could not read as the method it
/// names (its params are not what the method takes) or whose method is
/// not one kts-mcp answers (rmcp hands both over as custom requests).
pub fn unanswered(request: &CustomRequest) -> ErrorData {
    let method = request.method.as_str();
    let typed = json!({"method": method, "params": request.params});
    let refused = match method {
        "initialize" => reason::<InitializeRequest>(typed),
        "ping" => reason::<PingRequest>(typed),
        "tools/list" => reason::<ListToolsRequest>(typed),
        "tools/call" => reason::<CallToolRequest>(typed),
        "prompts/list" => reason::<ListPromptsRequest>(typed),
        "prompts/get" => reason::<GetPromptRequest>(typed),
        "resources/list" => reason::<ListResourcesRequest>(typed),
        "resources/templates/list" => reason::<ListResourceTemplatesRequest>(typed),
        "resources/read" => reason::<ReadResourceRequest>(typed),
        _ => return method_not_found(method),
    };
    let why = refused.unwrap_or_else(|| "they are not what it takes".into());
    ErrorData::invalid_params(format!("Invalid params of {method}: {why}"), None)
}

/// The error answering a method kts-mcp does not answer, with those it does.
pub fn method_not_found(method: &str) -> ErrorData {
    ErrorData::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!(
            "Method not found: {method:?}; kts-mcp answers {}",
            METHODS.join(", ")
        ),
        None,
    )
}

/// Why `value` is not a `T`, in JSON's words rather than Rust's.
fn reason<T: DeserializeOwned>(value: Value) -> Option<String> {
    let why = serde_json::from_value::<T>(value).err()?.to_string();
    let rust_words = ["a map", "a sequence", "unit value"];
    let json_words = ["an object", "an array", "null"];
    Some(
        rust_words
            .iter()
            .zip(json_words)
            .fold(why, |why, (rust, json)| why.replace(rust, json)),
    )
}

/// The value of the `"id"` key of a JSON object cut short, when it comes
/// before the cut.
fn leading_id(start: &[u8]) -> Option<Value> {
    let mut id = None;
    // The object is cut short: its reading fails, after the id, if any, is read.
    let _ = serde_json::Deserializer::from_slice(start).deserialize_map(IdSeeker(&mut id));
    id.filter(|id| id.is_string() || id.is_number())
}

struct IdSeeker<'a>(&'a mut Option<Value>);

impl<'de> Visitor<'de> for IdSeeker<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON-RPC message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "id" {
                *self.0 = Some(map.next_value()?);
                return Err(de::Error::custom("the id is read"));
            }
            map.next_value::<IgnoredAny>()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(line: &str) -> Refusal {
        match check(line.as_bytes()) {
            Checked::Refused(refusal) => refusal,
            Checked::Message(m) => panic!("{line}: taken as {m:?}"),
            Checked::Ignored(why) => panic!("{line}: ignored ({why})"),
            Checked::Batch(messages) => panic!("{line}: a batch of {}", messages.len()),
        }
    }

    #[test]
    fn what_is_no_message_is_refused_with_its_id() {
        let not_json = refused("{not json");
        assert_eq!(
            (not_json.code, not_json.id.clone()),
            (ErrorCode::PARSE_ERROR, Value::Null)
        );
        assert_eq!(not_json.response()["error"]["code"], -32700);
        let empty = refused("[]");
        assert_eq!(empty.code, ErrorCode::INVALID_REQUEST);
        assert!(empty.message.contains("batch"), "{empty}");
        let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},[]]"#;
        assert!(matches!(check(batch.as_bytes()), Checked::Batch(m) if m.len() == 2));
        for (line, code, says) in [
            (
                r#"{"jsonrpc":"2.0","id":12,"method":"ping","params":[1,2]}"#,
                ErrorCode::INVALID_PARAMS,
                "must be an object",
            ),
            (
                r#"{"jsonrpc":"1.0","id":12,"method":"ping"}"#,
                ErrorCode::INVALID_REQUEST,
                "\"2.0\"",
            ),
            (
                r#"{"jsonrpc":"2.0","id":12}"#,
                ErrorCode::INVALID_REQUEST,
                "no \"method\"",
            ),
            (
                r#"{"jsonrpc":"2.0","id":12,"method":7}"#,
                ErrorCode::INVALID_REQUEST,
                "\"method\" must be a string",
            ),
            (
                r#"{"jsonrpc":"2.0","id":12,"method":"ping","params":{"_meta":"x"}}"#,
                ErrorCode::INVALID_PARAMS,
                "\"_meta\"",
            ),
        ] {
            let refusal = refused(line);
            assert_eq!(
                (refusal.code, &refusal.id),
                (code, &json!(12)),
                "{line}: {refusal}"
            );
            assert!(refusal.message.contains(says), "{line}: {refusal}");
        }
        let string_id = refused(r#"{"jsonrpc":"1.0","id":"a","method":"ping"}"#);
        assert_eq!(string_id.id, json!("a"));
    }

    #[test]
    fn a_message_or_a_notification_that_cannot_be_read_is_not_answered() {
        let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        assert!(matches!(check(ping.as_bytes()), Checked::Message(_)));
        let with_bom = format!("\u{feff}{ping}");
        assert!(matches!(check(with_bom.as_bytes()), Checked::Message(_)));
        let notification = r#"{"jsonrpc":"2.0","method":"notifications/initialized","params":[1]}"#;
        assert!(matches!(
            check(notification.as_bytes()),
            Checked::Ignored(_)
        ));
    }

    #[test]
    fn the_id_of_a_message_cut_short_is_read_when_it_comes_first() {
        let long = format!(
            r#"{{"jsonrpc":"2.0","id":"big","method":"ping","params":{{"pad":"{}"#,
            "x".repeat(1000)
        );
        assert_eq!(leading_id(long.as_bytes()), Some(json!("big")));
        assert_eq!(leading_id(br#"{"jsonrpc":"2.0","id":7,"#), Some(json!(7)));
        assert_eq!(leading_id(br#"{"params":{"id":3,"pad":"xx"#), None);
        assert_eq!(leading_id(br#"{"method":"ping","params":{"pad":"x"#), None);
        let refusal = Refusal::oversized(long.as_bytes());
        assert_eq!(refusal.response()["id"], "big");
        assert_eq!(refusal.code, ErrorCode::INVALID_REQUEST);
    }

    #[test]
    fn ill_typed_params_and_unknown_methods_are_told_apart() {
        let custom = |method: &str, params: Value| {
            CustomRequest::new(method, params.as_object().cloned().map(Value::Object))
        };
        let call = unanswered(&custom(
            "tools/call",
            json!({"name": "search", "arguments": "alpha"}),
        ));
        assert_eq!(call.code, ErrorCode::INVALID_PARAMS);
        assert!(
            call.message.ends_with("expected an object"),
            "{}",
            call.message
        );
        assert!(
            call.message.starts_with("Invalid params of tools/call: "),
            "{}",
            call.message
        );
        let read = unanswered(&custom("resources/read", json!({})));
        assert_eq!(read.code, ErrorCode::INVALID_PARAMS);
        assert!(read.message.contains("uri"), "{}", read.message);
        let unknown = unanswered(&custom("tools/destroy", json!({})));
        assert_eq!(unknown.code, ErrorCode::METHOD_NOT_FOUND);
        assert!(
            unknown.message.contains("\"tools/destroy\""),
            "{}",
            unknown.message
        );
        assert!(
            unknown.message.contains("tools/call"),
            "{}",
            unknown.message
        );
    }
}
