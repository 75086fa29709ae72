//! The process chores every kts tool shares, written once: reading and writing
//! JSON Lines, messages on stderr, exit status, broken pipes, progress, and
//! outside programs run with a time limit.
//!
//! Exit status, for every tool: 0 all records processed; 1 some records were
//! rejected (each reported); 2 fatal or usage error; 130 interrupted.

pub mod child;
mod input;
mod messages;
mod output;
mod progress;
pub mod time;

pub use input::{Incoming, JsonlReader};
pub use messages::{Messages, say};
pub use output::JsonlWriter;
pub use progress::progress_bar;

/// The reporting flags of every stream tool, flattened into its clap `Args`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct Reporting {
    /// Print a one-line summary on stderr at the end.
    #[arg(long)]
    pub stats: bool,

    /// Do not print per-record errors and warnings (the exit status still tells).
    #[arg(long, short)]
    pub quiet: bool,
}

impl Reporting {
    /// The tool's messages, quiet or not as the flags say.
    pub fn messages(&self, tool: &'static str) -> Messages {
        Messages::new(tool).quiet(self.quiet)
    }
}

/// The clap parser of a count flag that must be 1 or more (a number of
/// results, of threads, a limit): 0 would answer nothing or refuse everything.
pub fn at_least_one() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::new().range(1..)
}

/// Longest time limit a tool accepts, in seconds (a day): larger values would
/// overflow a deadline and mean no limit anyway.
pub const LONGEST_TIME_LIMIT_SECS: u64 = 86_400;

/// Parses a time limit in seconds: 1 to [`LONGEST_TIME_LIMIT_SECS`].
pub fn time_limit_seconds() -> clap::builder::RangedU64ValueParser<u64> {
    clap::builder::RangedU64ValueParser::new().range(1..=LONGEST_TIME_LIMIT_SECS)
}

/// The documented exit statuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    Ok = 0,
    SomeFailed = 1,
    Fatal = 2,
}

/// Runs a tool's body and turns its outcome into the process exit status.
///
/// The body returns the number of rejected records (each already reported);
/// an `Err` is fatal and printed as `<tool>: error: <cause chain>`.
pub fn main_with(
    tool: &str,
    body: impl FnOnce() -> anyhow::Result<Exit>,
) -> std::process::ExitCode {
    match body() {
        Ok(exit) => std::process::ExitCode::from(exit as u8),
        Err(err) => {
            if output::is_broken_pipe(&err) {
                return std::process::ExitCode::SUCCESS;
            }
            say(format_args!("{tool}: error: {err:#}"));
            std::process::ExitCode::from(Exit::Fatal as u8)
        }
    }
}

/// Sets what the process environment must say before any library reads it:
/// ONNX Runtime, which kts-embed and kts-query load, otherwise persists a
/// telemetry device id under `~/.cache/Microsoft/` at every start (about
/// 10 ms of a cold query, and a write outside the scope).
pub fn prepare_environment() {
    // SAFETY: called first thing in `main`, while the process has one thread.
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var("ORT_DISABLE_TELEMETRY", "1");
    }
}

/// Defines a tool's `main`: parse the flags with clap, then run the library.
#[macro_export]
macro_rules! tool_main {
    ($tool:literal, $args:ty, $run:path) => {
        fn main() -> std::process::ExitCode {
            $crate::prepare_environment();
            let args = <$args as clap::Parser>::parse();
            $crate::main_with($tool, || $run(args))
        }
    };
}
