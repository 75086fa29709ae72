//! kts-docgen: writes the files derived from the code — the records' JSON
//! Schemas, the tools' man pages and shell completions — or checks that the
//! committed copies are up to date.
//!
//! Everything is generated in memory first ([`generate`]); writing and
//! checking are two ways of comparing that with the files under the root.

mod check;
mod completions;
mod man;
mod schemas;

use std::path::PathBuf;

use clap::Parser;
use kts_cli::{Exit, Messages};

pub use check::{Problem, problems};

/// The command that brings the generated files up to date.
pub const REGENERATE: &str = "cargo run -p kts-docgen";

/// The workspace this crate was built in: where the generated files live.
pub const WORKSPACE_ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

const ABOUT: &str = "Generate the JSON Schemas, man pages and shell completions from the code";

const AFTER_HELP: &str = "\
Writes schemas/*.schema.json (from the record types in kts-record), man/*.1 and
completions/ (from each tool's clap definition) under ROOT, and removes
generated files that are no longer produced. Only files whose content changes
are rewritten.

With --check nothing is written: every missing or stale file is listed with the
first lines that differ, and the exit status is 1.

Example:
  cargo run -p kts-docgen
  cargo run -p kts-docgen -- --check";

#[derive(Parser, Debug)]
#[command(name = "kts-docgen", version, about = ABOUT, after_help = AFTER_HELP)]
pub struct Args {
    /// Write nothing; exit 1 if a generated file is missing or stale.
    #[arg(long)]
    pub check: bool,

    /// The workspace root [default: the workspace kts-docgen was built in].
    pub root: Option<PathBuf>,
}

/// A file derived from the code, with its path relative to the workspace root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Generated {
    pub path: PathBuf,
    pub contents: String,
}

/// A kts tool whose man page and completions are generated.
pub struct Tool {
    pub name: &'static str,
    pub command: fn() -> clap::Command,
    pub rejects: Rejects,
}

/// What a tool does with an input it cannot process; this decides what its
/// man page says under EXIT STATUS and DIAGNOSTICS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rejects {
    /// Reported on stderr and sent downstream as a `kts.error/1` record.
    ReportedAndForwarded,
    /// Reported on stderr and skipped; the rest is processed (kts-catalog's scopes).
    ReportedAndSkipped,
    /// The tool processes no records.
    Nothing,
}

/// The tools, in pipeline order.
pub const TOOLS: [Tool; 11] = [
    Tool {
        name: "kts-crawl",
        command: kts_crawl::command,
        rejects: Rejects::ReportedAndForwarded,
    },
    Tool {
        name: "kts-convert",
        command: kts_convert::command,
        rejects: Rejects::ReportedAndForwarded,
    },
    Tool {
        name: "kts-chunk",
        command: kts_chunk::command,
        rejects: Rejects::ReportedAndForwarded,
    },
    Tool {
        name: "kts-embed",
        command: kts_embed::command,
        rejects: Rejects::ReportedAndForwarded,
    },
    Tool {
        name: "kts-index",
        command: kts_index::command,
        rejects: Rejects::ReportedAndForwarded,
    },
    Tool {
        name: "kts-graph",
        command: kts_graph::command,
        rejects: Rejects::Nothing,
    },
    Tool {
        name: "kts-catalog",
        command: kts_catalog::command,
        rejects: Rejects::ReportedAndSkipped,
    },
    Tool {
        name: "kts-query",
        command: kts_query::command,
        rejects: Rejects::ReportedAndForwarded,
    },
    Tool {
        name: "kts-mcp",
        command: kts_mcp::command,
        rejects: Rejects::Nothing,
    },
    Tool {
        name: "kts-eval",
        command: kts_eval::command,
        rejects: Rejects::Nothing,
    },
    Tool {
        name: "kts-sample",
        command: kts_sample::command,
        rejects: Rejects::Nothing,
    },
];

/// Every generated file, in a stable order.
pub fn generate() -> anyhow::Result<Vec<Generated>> {
    let mut files = schemas::files();
    for tool in &TOOLS {
        files.push(man::file(tool)?);
        files.extend(completions::files(tool));
    }
    Ok(files)
}

pub fn run(args: Args) -> anyhow::Result<Exit> {
    let messages = Messages::new("kts-docgen");
    let root = args.root.unwrap_or_else(|| PathBuf::from(WORKSPACE_ROOT));
    let files = generate()?;
    if args.check {
        return check::report(&root, &files, &messages);
    }
    for change in check::write(&root, &files)? {
        messages.info(&change);
    }
    Ok(Exit::Ok)
}
