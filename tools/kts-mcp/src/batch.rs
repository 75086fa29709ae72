//! JSON-RPC batches on stdio, which protocol 2025-03-26 requires servers to
//! take (the later versions have none, and rmcp reads none): the messages of
//! a batch are handed to rmcp one by one, and the answers to its requests
//! held until the last is in, then written as one array.

use std::collections::VecDeque;

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage, RequestId};
use rmcp::service::TxJsonRpcMessage;
use serde_json::Value;

use crate::jsonrpc::{self, Checked};

#[derive(Default)]
pub struct Batches {
    /// The messages of the batches read, not yet handed to rmcp.
    pub unread: VecDeque<ClientJsonRpcMessage>,
    open: Vec<Batch>,
}

struct Batch {
    /// The requests not answered yet.
    waiting: Vec<RequestId>,
    answers: Vec<Value>,
}

impl Batches {
    /// Takes the messages of a batch; returns the array to write at once
    /// when no request of it awaits an answer (an array of the errors of the
    /// messages refused, if any).
    pub fn start(&mut self, messages: Vec<Value>) -> Option<Value> {
        let mut batch = Batch {
            waiting: Vec::new(),
            answers: Vec::new(),
        };
        for message in messages {
            match jsonrpc::check_value(message) {
                Checked::Message(message) => {
                    if let JsonRpcMessage::Request(request) = message.as_ref() {
                        batch.waiting.push(request.id.clone());
                    }
                    self.unread.push_back(*message);
                }
                Checked::Refused(refusal) => batch.answers.push(refusal.response()),
                Checked::Ignored(_) | Checked::Batch(_) => {}
            }
        }
        if batch.waiting.is_empty() {
            return batch.done();
        }
        self.open.push(batch);
        None
    }

    /// What to write for `message`: nothing while it is held for its batch,
    /// the batch's array once it is the last answer, else itself.
    pub fn answer(&mut self, message: &TxJsonRpcMessage<RoleServer>) -> Option<Value> {
        let id = match message {
            JsonRpcMessage::Response(response) => Some(&response.id),
            JsonRpcMessage::Error(error) => error.id.as_ref(),
            _ => None,
        };
        let value = serde_json::to_value(message).ok()?;
        let Some(at) = id.and_then(|id| self.open.iter().position(|b| b.waiting.contains(id)))
        else {
            return Some(value);
        };
        let batch = &mut self.open[at];
        batch.waiting.retain(|waiting| Some(waiting) != id);
        batch.answers.push(value);
        match batch.waiting.is_empty() {
            true => self.open.remove(at).done(),
            false => None,
        }
    }
}

impl Batch {
    /// The array answering the batch, if it has any answer.
    fn done(self) -> Option<Value> {
        (!self.answers.is_empty()).then_some(Value::Array(self.answers))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{EmptyResult, JsonRpcResponse, JsonRpcVersion2_0, ServerResult};
    use serde_json::json;

    fn answer_to(id: i64) -> TxJsonRpcMessage<RoleServer> {
        JsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: JsonRpcVersion2_0,
            id: RequestId::Number(id),
            result: ServerResult::EmptyResult(EmptyResult {}),
        })
    }

    #[test]
    fn a_batch_is_answered_once_all_its_requests_are() {
        let mut batches = Batches::default();
        let written = batches.start(vec![
            json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "1.0", "id": 9, "method": "ping"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
        ]);
        assert_eq!(written, None);
        assert_eq!(batches.unread.len(), 3);
        assert_eq!(batches.answer(&answer_to(2)), None);
        assert_eq!(batches.answer(&answer_to(7)).unwrap()["id"], 7);
        let array = batches.answer(&answer_to(1)).unwrap();
        let ids: Vec<&Value> = array.as_array().unwrap().iter().map(|a| &a["id"]).collect();
        assert_eq!(ids, [&json!(9), &json!(2), &json!(1)]);
        let only_notifications =
            batches.start(vec![json!({"jsonrpc": "2.0", "method": "notifications/x"})]);
        assert_eq!(only_notifications, None);
    }
}
