//! The requests running over HTTP, by id, so that a `notifications/cancelled`
//! POSTed on its own stops the request it names. The server is stateless:
//! rmcp serves each POST apart and drops a notification unread, and no
//! session tells one client's ids from another's, so an id that two running
//! requests share cancels neither.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::RequestId;
use tokio_util::sync::CancellationToken;

#[derive(Default)]
pub struct Running {
    serial: AtomicU64,
    /// By the id as JSON (the string "7" is not the number 7): each request
    /// running with it, by serial number.
    requests: Mutex<HashMap<String, Vec<(u64, CancellationToken)>>>,
}

/// What a cancellation did.
#[derive(Debug, PartialEq)]
pub enum Cancelled {
    Stopped,
    NotRunning,
    /// More than one request runs with this id.
    Ambiguous(usize),
}

impl Running {
    /// Registers a request with `id` until the returned guard is dropped.
    pub fn start(self: &Arc<Self>, id: &RequestId) -> Registered {
        let key = key(id);
        let serial = self.serial.fetch_add(1, Ordering::Relaxed);
        let token = CancellationToken::new();
        self.lock()
            .entry(key.clone())
            .or_default()
            .push((serial, token.clone()));
        Registered {
            running: Arc::clone(self),
            key,
            serial,
            token,
        }
    }

    /// Cancels the request running with `id`, if it is the only one.
    pub fn cancel(&self, id: &RequestId) -> Cancelled {
        match self.lock().get(&key(id)).map(Vec::as_slice) {
            None | Some([]) => Cancelled::NotRunning,
            Some([(_, token)]) => {
                token.cancel();
                Cancelled::Stopped
            }
            Some(several) => Cancelled::Ambiguous(several.len()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<(u64, CancellationToken)>>> {
        self.requests.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn key(id: &RequestId) -> String {
    serde_json::to_string(id).unwrap_or_default()
}

/// A request registered while it runs.
pub struct Registered {
    running: Arc<Running>,
    key: String,
    serial: u64,
    token: CancellationToken,
}

impl Registered {
    /// Returns once a cancellation names this request.
    pub async fn cancelled(&self) {
        self.token.cancelled().await;
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        let mut requests = self.running.lock();
        if let Some(same_id) = requests.get_mut(&self.key) {
            same_id.retain(|(serial, _)| *serial != self.serial);
            if same_id.is_empty() {
                requests.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::NumberOrString;

    #[test]
    fn only_the_one_request_running_with_an_id_is_cancelled() {
        let running = Arc::new(Running::default());
        let seven = NumberOrString::Number(7);
        let text_seven = NumberOrString::String("7".into());
        assert_eq!(running.cancel(&seven), Cancelled::NotRunning);
        let first = running.start(&seven);
        assert_eq!(running.cancel(&text_seven), Cancelled::NotRunning);
        let second = running.start(&seven);
        assert_eq!(running.cancel(&seven), Cancelled::Ambiguous(2));
        assert!(!first.token.is_cancelled() && !second.token.is_cancelled());
        drop(first);
        assert_eq!(running.cancel(&seven), Cancelled::Stopped);
        assert!(second.token.is_cancelled());
        drop(second);
        assert_eq!(running.cancel(&seven), Cancelled::NotRunning);
        assert!(running.lock().is_empty());
    }
}
