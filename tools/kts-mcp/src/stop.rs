//! SIGTERM and SIGINT, listened for before anything else is done, so that
//! either stops kts-mcp cleanly (status 0) whenever it comes: while the
//! model loads, before a client speaks, or while requests run.

use std::sync::{Arc, OnceLock};

use tokio::runtime::Runtime;
use tokio::signal::unix::{SignalKind, signal};
use tokio_util::sync::CancellationToken;

/// The stop asked for by a signal.
#[derive(Clone)]
pub struct Stop {
    requested: CancellationToken,
    signal: Arc<OnceLock<&'static str>>,
}

impl Stop {
    /// Installs the handlers of SIGTERM and SIGINT (from now on neither kills
    /// the process) and waits for them on `runtime`.
    pub fn listen(runtime: &Runtime) -> anyhow::Result<Stop> {
        let _inside = runtime.enter();
        let mut terminate = signal(SignalKind::terminate())?;
        let mut interrupt = signal(SignalKind::interrupt())?;
        let stop = Stop {
            requested: CancellationToken::new(),
            signal: Arc::default(),
        };
        let raised = stop.clone();
        runtime.spawn(async move {
            let name = tokio::select! {
                _ = terminate.recv() => "SIGTERM",
                _ = interrupt.recv() => "SIGINT",
            };
            let _ = raised.signal.set(name);
            raised.requested.cancel();
        });
        Ok(stop)
    }

    /// Returns once a signal asks to stop.
    pub async fn requested(&self) {
        self.requested.cancelled().await;
    }

    /// The signal that asked to stop, if one did.
    pub fn signal(&self) -> Option<&'static str> {
        self.signal.get().copied()
    }

    /// What the log says once a signal stopped the server.
    pub fn stopped(&self) -> String {
        format!("stopped by {}", self.signal().unwrap_or("a signal"))
    }
}
