//! A client's notifications and responses sent before the session starts
//! are dropped on the way in. rmcp's handshake answers a request that comes
//! before `initialize` (a ping, a discover, an error for any other), but
//! gives up the whole session on a notification or a response, though the
//! protocol only asks clients not to send them.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

use crate::server::State;

/// A transport that drops the client's notifications and responses until
/// the session starts.
pub struct DropEarlyMessages<T> {
    inner: T,
    started: bool,
    state: Arc<State>,
}

impl<T> DropEarlyMessages<T> {
    pub fn new(inner: T, state: Arc<State>) -> Self {
        DropEarlyMessages {
            inner,
            started: false,
            state,
        }
    }
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for DropEarlyMessages<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let message = self.inner.receive().await?;
            if self.started || starts_session(&message) {
                self.started = true;
                return Some(message);
            }
            if !is_request(&message) {
                let ignored = describe(&message);
                self.state
                    .log(&format!("{ignored} before initialize: ignored"));
                continue;
            }
            // A ping or a discover: rmcp answers it, and the session is yet to start.
            return Some(message);
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// Whether rmcp starts the session on this message: `initialize`, or (from
/// protocol 2026-07-28 on, which has no handshake) any request but a ping
/// or a discover.
fn starts_session(message: &ClientJsonRpcMessage) -> bool {
    match message {
        JsonRpcMessage::Request(request) => !matches!(
            request.request,
            ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_)
        ),
        _ => false,
    }
}

fn is_request(message: &ClientJsonRpcMessage) -> bool {
    matches!(message, JsonRpcMessage::Request(_))
}

fn describe(message: &ClientJsonRpcMessage) -> &'static str {
    match message {
        JsonRpcMessage::Notification(_) => "a notification",
        JsonRpcMessage::Response(_) => "a response",
        JsonRpcMessage::Error(_) => "an error response",
        JsonRpcMessage::Request(_) => "a request",
    }
}
