//! The streamable HTTP transport at `/mcp`: loopback only unless asked
//! otherwise, and then behind a bearer token.

use std::net::{Ipv4Addr, SocketAddr, ToSocketAddrs};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State as Expected};
use axum::http::request::Parts;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt;
use kts_cli::Messages;
use rmcp::model::{ClientNotification, JsonRpcMessage, JsonRpcNotification, RequestId};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::jsonrpc::{self, BATCH_VERSION, Checked, KEPT_OF_OVERSIZED, MAX_MESSAGE_BYTES, Refusal};
use crate::running::{Cancelled, Running};
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
        .with_json_response(true)
        .with_max_request_body_bytes(MAX_MESSAGE_BYTES);
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
    let served = Served {
        running: Arc::default(),
        state: Arc::clone(&state),
    };
    let mut app = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(middleware::from_fn_with_state(served, refuse_non_messages));
    if let Some(token) = token {
        app = app.layer(middleware::from_fn_with_state(
            Arc::new(token),
            require_bearer,
        ));
    }
    // Outermost: a browser's preflight carries no token.
    let app = app.layer(middleware::from_fn(answer_loopback_pages));
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

/// What the messages POSTed share: the requests running, for the
/// cancellations that name them.
#[derive(Clone)]
struct Served {
    running: Arc<Running>,
    state: Arc<State>,
}

/// A POSTed JSON body that is no MCP message is answered 400 with its
/// JSON-RPC error (see [`jsonrpc::check`]) and one that is a notification
/// that cannot be read 202, as a notification is; the others go on to rmcp
/// (which would answer the first 415, as if the content type were wrong):
/// a request so that a cancellation can stop it ([`cancellable`]), a batch
/// under protocol 2025-03-26 only ([`answer_batch`]).
async fn refuse_non_messages(
    Expected(served): Expected<Served>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != Method::POST || !is_json(&request) {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let bytes = match read_message(body).await {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(start)) => return refused(&Refusal::oversized(&start)),
        Err(e) => {
            return (
                StatusCode::BAD_REQUEST,
                format!("cannot read the body: {e}"),
            )
                .into_response();
        }
    };
    match jsonrpc::check(&bytes) {
        Checked::Batch(messages) => match protocol_version(&parts) {
            BATCH_VERSION => answer_batch(&served, &parts, messages, next).await,
            other => refused(&jsonrpc::batch_refused(Some(other))),
        },
        checked => {
            let request = Request::from_parts(parts, Body::from(bytes));
            answer(&served, request, checked, next).await
        }
    }
}

/// The answer to one message (`request` carries it, as `checked`).
async fn answer(served: &Served, request: Request, checked: Checked, next: Next) -> Response {
    match checked {
        Checked::Message(message) => match *message {
            JsonRpcMessage::Request(asked) => {
                cancellable(&served.running, &asked.id, next.run(request)).await
            }
            JsonRpcMessage::Notification(JsonRpcNotification {
                notification: ClientNotification::CancelledNotification(cancelled),
                ..
            }) => {
                if let Some(id) = &cancelled.params.request_id {
                    log_cancellation(served, id);
                }
                next.run(request).await
            }
            _ => next.run(request).await,
        },
        Checked::Ignored(_) => StatusCode::ACCEPTED.into_response(),
        Checked::Refused(refusal) => refused(&refusal),
        Checked::Batch(_) => unreachable!("a batch's messages are read one by one"),
    }
}

/// The protocol version a POST says it speaks: its MCP-Protocol-Version, or
/// without one 2025-03-26, as the protocol (2025-06-18) asks servers to assume.
fn protocol_version(parts: &Parts) -> &str {
    parts
        .headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())
        .unwrap_or(BATCH_VERSION)
}

/// A batch from a client of protocol 2025-03-26 (which requires servers to
/// take them; rmcp reads none): each message answered as if POSTed alone,
/// the answers together in one array (none: 202, as for notifications).
async fn answer_batch(
    served: &Served,
    parts: &Parts,
    messages: Vec<Value>,
    next: Next,
) -> Response {
    let answering: Vec<_> = messages
        .into_iter()
        .map(|message| {
            let mut request = Request::new(Body::from(message.to_string()));
            *request.method_mut() = parts.method.clone();
            *request.uri_mut() = parts.uri.clone();
            *request.headers_mut() = parts.headers.clone();
            request.headers_mut().remove(header::CONTENT_LENGTH);
            let (served, next) = (served.clone(), next.clone());
            tokio::spawn(async move {
                answer(&served, request, jsonrpc::check_value(message), next).await
            })
        })
        .collect();
    let mut answered = Vec::new();
    for answering in answering {
        if let Ok(response) = answering.await {
            answered.extend(responses_in(response).await);
        }
    }
    if answered.is_empty() {
        return StatusCode::ACCEPTED.into_response();
    }
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        Value::Array(answered).to_string(),
    )
        .into_response()
}

/// The JSON-RPC responses an HTTP response carries: its JSON body, or the
/// responses among the events of its stream.
async fn responses_in(response: Response) -> Vec<Value> {
    let Ok(body) = axum::body::to_bytes(response.into_body(), MAX_MESSAGE_BYTES).await else {
        return Vec::new();
    };
    if let Ok(value) = serde_json::from_slice::<Value>(&body) {
        return vec![value];
    }
    String::from_utf8_lossy(&body)
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .filter(|event| event.get("id").is_some() && event.get("method").is_none())
        .collect()
}

/// A body that is no message: 400, with its JSON-RPC error.
fn refused(refusal: &Refusal) -> Response {
    (
        StatusCode::BAD_REQUEST,
        [(header::CONTENT_TYPE, "application/json")],
        refusal.response().to_string(),
    )
        .into_response()
}

/// A POSTed body, as long as stdio takes a message; past that, the start of
/// it (to read its id from), the rest left unread.
async fn read_message(mut body: Body) -> Result<Result<Bytes, Vec<u8>>, axum::Error> {
    let mut read = Vec::new();
    while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
        let Ok(data) = frame?.into_data() else {
            continue;
        };
        if read.len() + data.len() > MAX_MESSAGE_BYTES {
            read.extend_from_slice(&data[..data.len().min(KEPT_OF_OVERSIZED)]);
            read.truncate(KEPT_OF_OVERSIZED);
            return Ok(Err(read));
        }
        read.extend_from_slice(&data);
    }
    Ok(Ok(read.into()))
}

/// The answer to the request `id`, unless a cancellation names it first:
/// then its work is dropped (and stops, as over stdio) and the POST is
/// answered with an event stream that ends without a response, as the
/// protocol asks of a request cancelled.
async fn cancellable(
    running: &Arc<Running>,
    id: &RequestId,
    answer: impl Future<Output = Response>,
) -> Response {
    let registered = running.start(id);
    tokio::select! {
        response = answer => response,
        () = registered.cancelled() => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "text/event-stream")],
        )
            .into_response(),
    }
}

fn log_cancellation(served: &Served, id: &RequestId) {
    match served.running.cancel(id) {
        Cancelled::Stopped => {}
        Cancelled::NotRunning => served.state.log(&format!(
            "cancellation of request {id}: no such request running"
        )),
        Cancelled::Ambiguous(count) => served.state.log(&format!(
            "cancellation of request {id}: ignored, {count} requests with this id are running"
        )),
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

/// The headers a page may send: the protocol's, and the token.
const CORS_ALLOWED_HEADERS: &str =
    "Content-Type, Accept, Authorization, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID";

/// CORS for the pages of this machine (a loopback origin), so that a page
/// served on localhost can speak to kts-mcp from a browser: its preflight
/// (OPTIONS) is answered, and the answers let it read them. A page of any
/// other origin gets no CORS headers (and its requests a 403 on loopback).
async fn answer_loopback_pages(request: Request, next: Next) -> Response {
    let Some(origin) = request
        .headers()
        .get(header::ORIGIN)
        .filter(|origin| origin.to_str().is_ok_and(is_loopback_origin))
        .cloned()
    else {
        return next.run(request).await;
    };
    let mut response = match request.method() == Method::OPTIONS {
        true => {
            let mut preflight = StatusCode::NO_CONTENT.into_response();
            let headers = preflight.headers_mut();
            headers.insert(
                header::ACCESS_CONTROL_ALLOW_METHODS,
                HeaderValue::from_static("GET, POST, DELETE, OPTIONS"),
            );
            headers.insert(
                header::ACCESS_CONTROL_ALLOW_HEADERS,
                HeaderValue::from_static(CORS_ALLOWED_HEADERS),
            );
            headers.insert(
                header::ACCESS_CONTROL_MAX_AGE,
                HeaderValue::from_static("600"),
            );
            preflight
        }
        false => next.run(request).await,
    };
    let headers = response.headers_mut();
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    headers.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static("Mcp-Session-Id, WWW-Authenticate"),
    );
    headers.append(header::VARY, HeaderValue::from_static("Origin"));
    response
}

/// Whether `origin` (`scheme://host[:port]`) is a page of this machine.
fn is_loopback_origin(origin: &str) -> bool {
    let Some(authority) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split_once(']').map(|(host, _)| host),
        None => authority.split(':').next(),
    };
    let port_ok = |rest: &str| {
        rest.is_empty()
            || rest
                .strip_prefix(':')
                .is_some_and(|p| p.parse::<u16>().is_ok())
    };
    match host {
        Some(host @ ("localhost" | "127.0.0.1")) => port_ok(&authority[host.len()..]),
        Some("::1") => port_ok(&authority["[::1]".len()..]),
        _ => false,
    }
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
    fn only_the_pages_of_this_machine_are_loopback_origins() {
        for origin in [
            "http://localhost:3000",
            "https://localhost",
            "http://127.0.0.1:8765",
            "http://[::1]:6274",
        ] {
            assert!(is_loopback_origin(origin), "{origin}");
        }
        for origin in [
            "http://localhost.evil.com",
            "http://127.0.0.1.evil.com:80",
            "http://localhost:80/x",
            "null",
            "file://localhost",
            "http://[::1]evil",
        ] {
            assert!(!is_loopback_origin(origin), "{origin}");
        }
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
