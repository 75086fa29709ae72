//! kts-mcp: a scope or a knowledge root served over the Model Context
//! Protocol, to agents and editors. Its tools, prompts and resources answer
//! with the query library of kts-query ([`kts_query::Knowledge`]); it holds
//! no search logic of its own and only reads.

mod arguments;
mod batch;
mod early_messages;
mod http;
mod jsonrpc;
mod prompts;
mod resources;
mod running;
mod server;
mod stdio;
mod stop;
mod tools;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::{CommandFactory, Parser};
use kts_cli::{Exit, Messages};
use kts_query::{Knowledge, ModelChoice};

use server::State;
use stop::Stop;

const ABOUT: &str = "Serve a scope or a knowledge root to agents and editors over MCP";

const AFTER_HELP: &str = "\
Serves DIR (a scope, or a knowledge root whose sub-folders are scopes) over
the Model Context Protocol: on stdin/stdout by default, or with --http
ADDR:PORT (ADDR an IP address or a host name) over the streamable HTTP
transport at /mcp. It only reads: kts-index may run beside it, each scope is
reopened when its index changes, and a knowledge root's scopes are looked
at again when its catalog or its folders change.

Tools, each returning structured content (the same fields as kts-query's
records) and a text rendering with citations: search (the kts.hit/1 records
of kts-query DIR QUESTION), context (the --context Markdown: graph facts and
cited passages, on a knowledge root cited by scope and path), get_document
(a document's Markdown, or a range or page of it; its path may be given as a
context cites it), list_scopes (the kts.scope/1 records of the scopes),
count_by_scope (the kts.scope_count/1 records: in how many scopes, and
where), related (the kts.node/1 records of the documents most related to
one) and check_answer (the kts.evidence/1 records of an answer's claims).

Prompts: one per scope (named by its slug, argument `question`) carrying the
scope's context for the question, and `ask`, routed like kts-query ROOT (a
scope slugged ask has the prompt scope-ask).

Resources: kts://SCOPE/PATH, one per document, as Markdown.

HTTP listens on loopback only, and answers a web page (a request with an
Origin header) only from a loopback origin, with CORS headers, unless
--allow-remote, which requires a bearer --token (or $KTS_MCP_TOKEN). Logs
go to stderr. It stops on end of input (stdio), SIGTERM or SIGINT: a signal
stops it cleanly whenever it comes, with status 0 (over HTTP, the requests
then running have 5 s to finish). Each request has a time limit
(--timeout); past it, or once the client cancels the request (over HTTP
too), its work stops at its next search. A message that is no JSON-RPC
message, or over 16 MiB, is answered with the JSON-RPC error saying why,
with its id when it has one (over HTTP, with status 400).
Served over HTTP, here or to other machines: kts-mcp ROOT --http
127.0.0.1:8765, or KTS_MCP_TOKEN=s3cret kts-mcp ROOT --http 0.0.0.0:8765
--allow-remote.

A client starts kts-mcp and speaks on its input; at the end of the input,
kts-mcp stops. A client's configuration is an mcpServers entry (VS Code:
.vscode/mcp.json, under \"servers\", with \"type\": \"stdio\"):
{\"mcpServers\": {\"docs\": {\"command\": \"kts-mcp\", \"args\": [\"/data/docs\"]}}}

Examples:
  kts-crawl docs | kts-convert | kts-chunk | kts-embed | kts-index docs
  kts-mcp docs";

#[derive(Parser, Debug, Clone)]
#[command(name = "kts-mcp", version, about = ABOUT, after_help = AFTER_HELP)]
pub struct Args {
    /// The scope folder (DIR/.kts/kts.db), or a knowledge root: a folder
    /// whose sub-folders are scopes.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,

    /// Serve the streamable HTTP transport at http://ADDR:PORT/mcp instead of
    /// stdio. ADDR is an IP address or a host name (localhost is 127.0.0.1).
    #[arg(long, value_name = "ADDR:PORT", value_parser = http::listen_address)]
    pub http: Option<SocketAddr>,

    /// Let --http listen on an address other than loopback (requires --token).
    #[arg(long, requires = "http")]
    pub allow_remote: bool,

    /// The bearer token HTTP clients must send (Authorization: Bearer TOKEN).
    #[arg(
        long,
        value_name = "TOKEN",
        env = "KTS_MCP_TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,

    /// Time limit of one request, in seconds (at most 86400, a day).
    #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = kts_cli::time_limit_seconds())]
    pub timeout: u64,

    /// Requests answered at the same time; more wait their turn
    /// [default: twice the number of cores].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub concurrency: Option<u16>,

    /// The models folder (manifests, and cache/ filled by models/fetch)
    /// [default: the project's models/ found from the executable].
    #[arg(long, value_name = "DIR")]
    pub models: Option<PathBuf>,

    /// Threads for embedding a question [default: the number of cores].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,

    /// Do not log requests and warnings.
    #[arg(long, short)]
    pub quiet: bool,
}

/// The clap definition, for man pages and completions.
pub fn command() -> clap::Command {
    Args::command()
}

pub fn run(args: Args) -> anyhow::Result<Exit> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    // Before anything that takes time: from here on a signal stops cleanly.
    let stop = Stop::listen(&runtime)?;
    let messages = Messages::new("kts-mcp").quiet(args.quiet);
    if let Some(addr) = args.http {
        http::check_exposure(addr, args.allow_remote, args.token.as_deref())?;
    }
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let opening = {
        let args = args.clone();
        runtime.spawn_blocking(move || open(&args, cores))
    };
    let served = runtime.block_on(async {
        let state = tokio::select! {
            opened = opening => opened??,
            () = stop.requested() => {
                if !args.quiet {
                    messages.info(&format!("{} before serving", stop.stopped()));
                }
                return Ok(());
            }
        };
        match args.http {
            Some(addr) => {
                http::serve(
                    state,
                    addr,
                    args.token.clone(),
                    args.allow_remote,
                    &stop,
                    &messages,
                )
                .await
            }
            None => server::serve_stdio(state, &stop).await,
        }
    });
    // A request still running on the blocking pool (or the model still
    // loading) is not waited for.
    runtime.shutdown_timeout(Duration::from_secs(1));
    served?;
    Ok(messages.exit())
}

/// The knowledge base open, its model loaded, and the limits of requests.
fn open(args: &Args, cores: usize) -> anyhow::Result<Arc<State>> {
    let model = ModelChoice::new(
        None,
        args.models.clone(),
        args.threads.map_or(cores, usize::from),
        false,
    );
    let knowledge = Knowledge::open(&args.dir, model, "kts-mcp", args.quiet)?;
    knowledge.warm_up()?;
    Ok(Arc::new(State::new(
        knowledge,
        Duration::from_secs(args.timeout),
        args.concurrency.map_or(2 * cores, usize::from),
        args.quiet,
    )))
}

#[cfg(test)]
mod tests {
    use super::AFTER_HELP;

    /// The man page (kts-docgen) joins the lines of each paragraph: an
    /// indented line (a column of a table, a command) would run into the
    /// others. Only the Examples paragraph keeps its lines.
    #[test]
    fn each_paragraph_of_the_help_reads_as_prose() {
        for paragraph in AFTER_HELP.split("\n\n") {
            if paragraph.starts_with("Examples:") {
                continue;
            }
            for line in paragraph.lines() {
                assert!(
                    !line.starts_with(' '),
                    "an indented line in prose: {line:?}"
                );
            }
        }
    }
}
