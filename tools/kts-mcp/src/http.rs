//! The streamable HTTP transport at `/mcp`: loopback only unless asked
//! otherwise, and then behind a bearer token.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Request, State as Expected};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::serve::ListenerExt;
use kts_cli::Messages;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::server::{KtsServer, State, stop_signal};

/// Refuses to expose the knowledge base beyond this machine unless asked to,
/// and then only behind a token.
pub fn check_exposure(
    addr: SocketAddr,
    allow_remote: bool,
    token: Option<&str>,
) -> anyhow::Result<()> {
    if !addr.ip().is_loopback() && !allow_remote {
        anyhow::bail!(
            "{addr} is not a loopback address: kts-mcp serves other machines only with \
             --allow-remote and --token"
        );
    }
    if allow_remote && token.is_none_or(|t| t.trim().is_empty()) {
        anyhow::bail!(
            "--allow-remote requires --token (or $KTS_MCP_TOKEN): clients send it as a bearer token"
        );
    }
    Ok(())
}

pub async fn serve(
    state: Arc<State>,
    addr: SocketAddr,
    token: Option<String>,
    allow_remote: bool,
    messages: &Messages,
) -> anyhow::Result<()> {
    let stop = CancellationToken::new();
    // Stateless, with plain JSON answers: every tool is a read that needs no
    // session, and a JSON body spares the client an event-stream parse on
    // each call (the protocol's next version drops sessions anyway).
    let mut config = StreamableHttpServerConfig::default()
        .with_cancellation_token(stop.child_token())
        .with_legacy_session_mode(false)
        .with_json_response(true);
    if allow_remote {
        // Clients name this machine as they like; the token is the guard.
        config = config.disable_allowed_hosts();
    }
    let service = StreamableHttpService::new(
        move || Ok(KtsServer::new(Arc::clone(&state))),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let mut app = axum::Router::new().nest_service("/mcp", service);
    if let Some(token) = token {
        app = app.layer(middleware::from_fn_with_state(
            Arc::new(token),
            require_bearer,
        ));
    }
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
    messages.info(&format!(
        "serving MCP at http://{}/mcp",
        listener.local_addr()?
    ));
    // Without it, a response's last small segment waits for the client's
    // delayed acknowledgement: tens of milliseconds on every call.
    let listener = listener.tap_io(|connection| {
        let _ = connection.set_nodelay(true);
    });
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            stop_signal().await;
            stop.cancel();
        })
        .await?;
    messages.info("stopped");
    Ok(())
}

async fn require_bearer(
    Expected(expected): Expected<Arc<String>>,
    request: Request,
    next: Next,
) -> Result<Response, StatusCode> {
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    match given {
        Some(token) if constant_time_equal(token.as_bytes(), expected.as_bytes()) => {
            Ok(next.run(request).await)
        }
        _ => Err(StatusCode::UNAUTHORIZED),
    }
}

/// Compares without returning early, so the time taken tells nothing of the token.
fn constant_time_equal(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_without_a_token() {
        let local: SocketAddr = "127.0.0.1:8765".parse().unwrap();
        let any: SocketAddr = "0.0.0.0:8765".parse().unwrap();
        assert!(check_exposure(local, false, None).is_ok());
        assert!(check_exposure(any, false, Some("t")).is_err());
        assert!(check_exposure(any, true, None).is_err());
        assert!(check_exposure(any, true, Some(" ")).is_err());
        assert!(check_exposure(any, true, Some("s3cret")).is_ok());
        assert!(constant_time_equal(b"abc", b"abc"));
        assert!(!constant_time_equal(b"abc", b"abd"));
        assert!(!constant_time_equal(b"abc", b"ab"));
    }
}
