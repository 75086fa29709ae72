//! The MCP server: what it says of itself, and each request run on the
//! blocking pool (the query library is synchronous), within the time limit
//! and the concurrency limit, with a panic reported as that request's error.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use kts_query::federation::RouteError;
use kts_query::{Cutoff, Knowledge};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    ContentBlock, CustomRequest, CustomResult, GetPromptRequestParams, GetPromptResponse,
    Implementation, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, ServerInitializeError};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::early_messages::DropEarlyMessages;
use crate::stdio::StdioTransport;
use crate::stop::Stop;
use crate::{jsonrpc, prompts, resources, tools};

/// What every request shares: the open knowledge base and the limits.
pub struct State {
    pub knowledge: Knowledge,
    limit: Duration,
    permits: Semaphore,
    quiet: bool,
    /// Raised when the server stops without waiting for the requests running.
    given_up: CancellationToken,
}

impl State {
    pub fn new(knowledge: Knowledge, limit: Duration, concurrency: usize, quiet: bool) -> State {
        State {
            knowledge,
            limit,
            permits: Semaphore::new(concurrency),
            quiet,
            given_up: CancellationToken::new(),
        }
    }

    /// Ends the requests still running, each with an error saying why.
    pub fn give_up(&self) {
        self.given_up.cancel();
    }

    pub fn log(&self, text: &str) {
        if !self.quiet {
            kts_cli::say(format_args!("kts-mcp: {text}"));
        }
    }
}

/// One client's view of the server (HTTP makes one per request).
#[derive(Clone)]
pub struct KtsServer {
    state: Arc<State>,
}

impl KtsServer {
    pub fn new(state: Arc<State>) -> Self {
        KtsServer { state }
    }

    /// Runs `work` on the blocking pool, once a concurrency permit is free,
    /// within the time limit. A failure, a panic, the time running out or
    /// the client cancelling becomes the message of the request's error.
    /// `work` is given the cutoff past which its searches are refused: work
    /// whose answer is no longer awaited (the time ran out, the client
    /// cancelled or went away) stops instead of holding the CPU.
    async fn run<T: Send + 'static>(
        &self,
        what: String,
        cancel: CancellationToken,
        work: impl FnOnce(&State, Cutoff) -> anyhow::Result<T> + Send + 'static,
    ) -> Result<T, String> {
        let state = Arc::clone(&self.state);
        let limit = state.limit;
        let started = Instant::now();
        let abandoned = RaisedOnDrop(Arc::new(AtomicBool::new(false)));
        let cutoff = Cutoff {
            deadline: started.checked_add(limit),
            cancelled: Some(Arc::clone(&abandoned.0)),
        };
        let job = async move {
            let _permit = state.permits.acquire().await.ok();
            let worker = Arc::clone(&state);
            tokio::task::spawn_blocking(move || work(&worker, cutoff)).await
        };
        let too_long = || {
            format!(
                "{what} took longer than the time limit ({} s)",
                limit.as_secs()
            )
        };
        let outcome = tokio::select! {
            finished = tokio::time::timeout(limit, job) => match finished {
                Err(_) => Err(too_long()),
                // The work saw the time run out before the timer did.
                Ok(Ok(Err(_))) if started.elapsed() >= limit => Err(too_long()),
                Ok(Err(join)) => Err(format!(
                    "{what} failed: internal error ({}); please report it",
                    panic_message(join)
                )),
                Ok(Ok(Err(error))) => Err(advised(&error)),
                Ok(Ok(Ok(value))) => Ok(value),
            },
            () = cancel.cancelled() => Err(format!("{what} was cancelled")),
            () = self.state.given_up.cancelled() => {
                Err(format!("{what} was cut short: kts-mcp is stopping"))
            }
        };
        drop(abandoned);
        let elapsed = started.elapsed().as_secs_f64() * 1e3;
        match &outcome {
            Ok(_) => self.state.log(&format!("{what}: {elapsed:.1} ms")),
            Err(message) => self.state.log(&format!("{what}: error: {message}")),
        }
        outcome
    }

    /// A method of MCP that kts-mcp does not offer (rmcp's own error names
    /// only the method), logged.
    fn not_answered(&self, method: &str) -> ErrorData {
        let error = jsonrpc::method_not_found(method);
        self.state
            .log(&format!("{method}: error: {}", error.message));
        error
    }
}

/// An error as an MCP client reads it: a question that cannot be routed
/// with what the tools and arguments can do about it.
fn advised(error: &anyhow::Error) -> String {
    match error.downcast_ref::<RouteError>() {
        Some(route @ RouteError::UnknownScope(_)) => format!("{route} (list_scopes lists them)"),
        Some(route @ RouteError::TooBroad(_)) => format!(
            "{route}: name a scope (the argument scope, or /slug question) or add words \
             (count_by_scope tells in which scopes its words are)"
        ),
        _ => format!("{error:#}"),
    }
}

/// A flag raised when the request it belongs to is over, however it ended
/// (answered, timed out, cancelled, or its future dropped with its client).
struct RaisedOnDrop(Arc<AtomicBool>);

impl Drop for RaisedOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

fn panic_message(join: tokio::task::JoinError) -> String {
    if !join.is_panic() {
        return "cancelled".into();
    }
    let payload = join.into_panic();
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into())
}

impl ServerHandler for KtsServer {
    fn get_info(&self) -> ServerConfig {
        let knowledge = &self.state.knowledge;
        let what = match knowledge.is_root() {
            true => "knowledge root (a folder of scopes)",
            false => "scope",
        };
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("kts-mcp", env!("CARGO_PKG_VERSION")))
        .with_instructions(format!(
            "A local knowledge base: the {what} {}. Use `search` to find passages with \
             citations (path, headings, page), `context` for an LLM-ready context, and \
             `get_document` to read around a hit. Cite the {} you use.",
            knowledge.dir().display(),
            match knowledge.is_root() {
                true => "scope and path (scope: path) of each source",
                false => "paths",
            }
        ))
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let error = jsonrpc::unanswered(&request);
        self.state
            .log(&format!("{}: error: {}", request.method, error.message));
        Err(error)
    }

    // Logging is deprecated in the protocol's next version; clients of this
    // one (the Inspector) still send it.
    #[allow(deprecated)]
    async fn set_level(
        &self,
        _request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Err(self.not_answered("logging/setLevel"))
    }

    async fn complete(
        &self,
        _request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        Err(self.not_answered("completion/complete"))
    }

    async fn list_tools(
        &self,
        params: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        one_page("tools/list", params)?;
        Ok(ListToolsResult::with_all_items(tools::definitions()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        if !tools::exists(&name) {
            return Err(ErrorData::invalid_params(
                format!(
                    "no tool {name:?}: the tools are {}",
                    tools::NAMES.join(", ")
                ),
                None,
            ));
        }
        let arguments = request.arguments.unwrap_or_default();
        let what = format!("tool {name}");
        let result = match self
            .run(what, context.ct, move |state, cutoff| {
                tools::call(state, &name, &arguments, cutoff)
            })
            .await
        {
            Ok(output) => {
                let mut result = CallToolResult::success(vec![ContentBlock::text(output.text)]);
                result.structured_content = Some(output.structured);
                result
            }
            Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]),
        };
        Ok(result.into())
    }

    async fn list_prompts(
        &self,
        params: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let cursor = params.and_then(|p| p.cursor);
        self.run("list_prompts".into(), context.ct, move |state, _| {
            prompts::list(state, cursor.as_deref())
        })
        .await
        .map_err(|message| ErrorData::invalid_params(message, None))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let what = format!("prompt {}", request.name);
        self.run(what, context.ct, move |state, cutoff| {
            prompts::get(state, &request, cutoff)
        })
        .await
        .map(Into::into)
        .map_err(|message| ErrorData::invalid_params(message, None))
    }

    async fn list_resources(
        &self,
        params: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let cursor = params.and_then(|p| p.cursor);
        self.run("list_resources".into(), context.ct, move |state, _| {
            resources::list(state, cursor.as_deref())
        })
        .await
        .map_err(|message| ErrorData::invalid_params(message, None))
    }

    async fn list_resource_templates(
        &self,
        params: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        one_page("resources/templates/list", params)?;
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            resources::template(),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri;
        let what = format!("resource {uri}");
        self.run(what, context.ct, move |state, _| {
            resources::read(state, &uri)
        })
        .await
        .map(Into::into)
        .map_err(|message| ErrorData::resource_not_found(message, None))
    }
}

/// Refuses a cursor for a list that has one page: no cursor names a next one.
fn one_page(method: &str, params: Option<PaginatedRequestParams>) -> Result<(), ErrorData> {
    match params.and_then(|p| p.cursor) {
        Some(cursor) => Err(ErrorData::invalid_params(
            format!("not a cursor {method} gave: {cursor:?} ({method} answers in one page)"),
            None,
        )),
        None => Ok(()),
    }
}

/// Serves one client on stdin and stdout until the input ends, or a signal
/// asks to stop.
pub async fn serve_stdio(state: Arc<State>, stop: &Stop) -> anyhow::Result<()> {
    let log = Arc::clone(&state);
    let (input, output) = rmcp::transport::stdio();
    let transport = DropEarlyMessages::new(
        StdioTransport::new(input, output, Arc::clone(&state)),
        Arc::clone(&state),
    );
    let starting = KtsServer::new(state).serve(transport);
    let running = tokio::select! {
        started = starting => match started {
            Ok(running) => running,
            Err(ServerInitializeError::ConnectionClosed(_)) => {
                log.log("the input ended before a client spoke: nothing to serve");
                return Ok(());
            }
            Err(e) => anyhow::bail!("the MCP session did not start: {e}"),
        },
        () = stop.requested() => {
            log.log(&format!("{} before a client spoke", stop.stopped()));
            return Ok(());
        }
    };
    let cancel = running.cancellation_token();
    let stopping = stop.clone();
    tokio::spawn(async move {
        stopping.requested().await;
        cancel.cancel();
    });
    let reason = running.waiting().await?;
    match stop.signal() {
        Some(_) => log.log(&stop.stopped()),
        None => log.log(&format!("stopped ({reason:?})")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_that_cannot_be_routed_is_advised_in_tools_and_arguments() {
        let unknown = kts_query::federation::route(
            &kts_store::Scopes::default(),
            "/nope question",
            &[],
            100,
            None,
        )
        .unwrap_err();
        assert_eq!(
            advised(&unknown.into()),
            "no indexed scope \"nope\" in this knowledge root (list_scopes lists them)"
        );
        let scope = |slug: &str| kts_store::ScopeEntry {
            slug: slug.into(),
            path: slug.into(),
            indexed: true,
        };
        let three = kts_store::Scopes {
            scopes: vec![scope("a"), scope("b"), scope("c")],
            ..Default::default()
        };
        let too_broad = kts_query::federation::route(&three, "loans", &[], 2, None).unwrap_err();
        let message = advised(&too_broad.into());
        assert!(!message.contains("--"), "{message}");
        assert!(
            message
                .contains("more than the 2 a question may ask: name a scope (the argument scope"),
            "{message}"
        );
    }
}
