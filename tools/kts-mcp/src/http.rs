//! The streamable HTTP transport at `/mcp`: loopback only unless asked
//! otherwise, and then behind a bearer token.

use std::net::{Ipv4Addr, SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State as Expected};
use axum::http::{Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt;
use kts_cli::Messages;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::jsonrpc::{self, Checked};
use crate::server::{KtsServer, State};
use crate::stop::Stop;

/// The address `--http` names: `IP:PORT`, or `HOST:PORT` with the host's
/// first address (`localhost` is 127.0.0.1, whatever the resolver says).
pub fn listen_address(given: &str) -> Result<SocketAddr, String> {
    if let Ok(addr) = given.parse() {
        return Ok(addr);
    }
    let (host, port) = given
        .rsplit_once(':')
        .ok_or_else(|| format!("{given:?} is not ADDR:PORT (say 127.0.0.1:8765)"))?;
    let port: u16 = port
        .parse()
        .map_err(|_| format!("{port:?} is not a port number (0 to 65535)"))?;
    if host.eq_ignore_ascii_case("localhost") {
        return Ok(SocketAddr::from((Ipv4Addr::LOCALHOST, port)));
    }
    (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {host:?}: {e}"))?
        .next()
        .ok_or_else(|| format!("{host:?} has no address"))
}

/// How long the requests running when a signal asks to stop have to finish
/// (no new connection is taken meanwhile); those still running then end
/// with an error saying the server is stopping.
const GRACE: Duration = Duration::from_secs(5);

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

/// The browser origins a loopback server answers (a request without an
/// Origin, from a client that is no browser, is answered too): a page from
/// elsewhere must not reach a server on the user's machine (the transport's
/// guard against DNS rebinding).
const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "https://localhost:*",
    "http://127.0.0.1:*",
    "https://127.0.0.1:*",
    "http://[::1]:*",
    "https://[::1]:*",
];

pub async fn serve(
    state: Arc<State>,
    addr: SocketAddr,
    token: Option<String>,
    allow_remote: bool,
    stop: &Stop,
    messages: &Messages,
) -> anyhow::Result<()> {
    let requests = CancellationToken::new();
    // Stateless, with plain JSON answers: every tool is a read that needs no
    // session, and a JSON body spares the client an event-stream parse on
    // each call (the protocol's next version drops sessions anyway).
    let mut config = StreamableHttpServerConfig::default()
        .with_cancellation_token(requests.child_token())
        .with_legacy_session_mode(false)
        .with_json_response(true);
    config = match allow_remote {
        // Clients name this machine as they like; the token is the guard.
        true => config.disable_allowed_hosts(),
        false => config.with_allowed_origins(LOOPBACK_ORIGINS),
    };
    let serving = Arc::clone(&state);
    let service = StreamableHttpService::new(
        move || Ok(KtsServer::new(Arc::clone(&serving))),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let mut app = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(middleware::from_fn(refuse_non_messages));
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
    let stopping = stop.clone();
    tokio::spawn(async move {
        stopping.requested().await;
        tokio::time::sleep(GRACE).await;
        state.give_up();
        // Time to send the errors that say so, before the connections close.
        tokio::time::sleep(Duration::from_secs(1)).await;
        requests.cancel();
    });
    let stopping = stop.clone();
    axum::serve(listener, app)
        .with_graceful_shutdown(async move { stopping.requested().await })
        .await?;
    messages.info(&stop.stopped());
    Ok(())
}

/// Longest request body taken, in bytes (rmcp's own limit).
const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// A POSTed JSON body that is no MCP message is answered 400 with its
/// JSON-RPC error (see [`jsonrpc::check`]) and one that is a notification
/// that cannot be read 202, as a notification is; the others go on to rmcp
/// (which would answer the first 415, as if the content type were wrong).
async fn refuse_non_messages(request: Request, next: Next) -> Response {
    if request.method() != Method::POST || !is_json(&request) {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY_BYTES).await else {
        return (
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("Payload Too Large: request body exceeds {MAX_BODY_BYTES} bytes"),
        )
            .into_response();
    };
    match jsonrpc::check(&bytes) {
        Checked::Message(_) => {
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
        Checked::Ignored(_) => StatusCode::ACCEPTED.into_response(),
        Checked::Refused(refusal) => (
            StatusCode::BAD_REQUEST,
            [(header::CONTENT_TYPE, "application/json")],
            refusal.response().to_string(),
        )
            .into_response(),
    }
}

fn is_json(request: &Request) -> bool {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

async fn require_bearer(
    Expected(expected): Expected<Arc<String>>,
    request: Request,
    next: Next,
) -> Response {
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer_token);
    match given {
        Some(token) if constant_time_equal(token.as_bytes(), expected.as_bytes()) => {
            next.run(request).await
        }
        _ => unauthorized(),
    }
}

/// The token of an `Authorization: Bearer TOKEN` header (the scheme's case
/// does not matter).
fn bearer_token(authorization: &str) -> Option<&str> {
    let (scheme, token) = authorization.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim_start())
}

/// 401, saying which scheme to authenticate with (RFC 7235 requires it).
fn unauthorized() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, "Bearer")],
    )
        .into_response()
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

    #[test]
    fn a_host_name_is_taken_for_the_address() {
        let local = listen_address("localhost:8765").unwrap();
        assert_eq!(local, "127.0.0.1:8765".parse().unwrap());
        assert_eq!(listen_address("LOCALHOST:0").unwrap().port(), 0);
        assert_eq!(
            listen_address("[::1]:8765").unwrap(),
            "[::1]:8765".parse().unwrap()
        );
        assert!(
            listen_address("localhost")
                .unwrap_err()
                .contains("ADDR:PORT")
        );
        assert!(
            listen_address("localhost:99999")
                .unwrap_err()
                .contains("not a port")
        );
        assert!(listen_address("no-such-host.invalid:80").is_err());
    }

    #[test]
    fn the_bearer_scheme_is_read_in_any_case() {
        assert_eq!(bearer_token("Bearer s3cret"), Some("s3cret"));
        assert_eq!(bearer_token("bearer s3cret"), Some("s3cret"));
        assert_eq!(bearer_token("BEARER  s3cret"), Some("s3cret"));
        assert_eq!(bearer_token("Basic s3cret"), None);
        assert_eq!(bearer_token("Bearers3cret"), None);
    }
}
