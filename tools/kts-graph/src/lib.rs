//! kts-graph: builds a scope's knowledge graph from its indexed chunks and
//! answers graph questions about it.

pub mod export;
pub mod extract;
pub mod model;
pub mod queries;
pub mod settings;
pub mod snapshot;
pub mod tables;
pub mod view;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use kts_cli::{Exit, JsonlWriter, Messages};
use kts_store::Store;

use crate::extract::Seed;
use crate::model::{KnowledgeGraph, NodeKind};
use crate::settings::Settings;
use crate::snapshot::Snapshot;
use crate::view::GraphView;

/// Bumped when extraction rules change, so that every document is extracted again.
pub const EXTRACTION_VERSION: u32 = 2;

const ABOUT: &str = "Build a scope's knowledge graph from its index, and ask it questions";

const AFTER_HELP: &str = "\
Without a command, brings the graph of DIR up to date with its index
(DIR/.kts/kts.db, written by kts-index): documents that are new or changed
since the last run are extracted again, removed ones leave the graph, the
rest is left alone. Entities come from the text without any model: quoted
and defined terms (TERM), CamelCase names and the taxonomy (SYSTEM), Title
Case phrases (CONCEPT), acronyms with their expansions (ACRONYM), error codes
(ERROR_CODE), configured people (PERSON) and keyword topics (TOPIC).

Settings come from DIR/.kts/config.toml, section [graph] (min_mentions = 2,
depth = 2, edge_threshold = 0.15, seeds = [{name, kind}], taxonomy = [..]),
and the flags below override them.

The commands answer with kts.node/1 records on stdout (JSON lines):
  related PATH       documents sharing the most (and rarest) entities with PATH
  neighbors ENTITY   entities and documents within --hops edges of ENTITY
  central            the most connected entities and topics
  entities           the entities, most mentioned first (--kind to choose)

Examples:
  kts-crawl docs | kts-convert | kts-chunk | kts-embed | kts-index docs
  kts-graph docs --stats
  kts-graph docs entities --kind ACRONYM | head -3
  kts-graph docs related kts-faq.txt --top 3";

#[derive(Parser, Debug)]
#[command(name = "kts-graph", version, about = ABOUT, after_help = AFTER_HELP)]
pub struct Args {
    /// The scope folder (its index is DIR/.kts/kts.db).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,

    #[command(subcommand)]
    pub command: Option<Command>,

    /// After updating the graph, print it whole on stdout in this form.
    #[arg(long, value_name = "FORM")]
    pub export: Option<ExportForm>,

    /// Read the settings from this file instead of DIR/.kts/config.toml.
    #[arg(long, value_name = "FILE", global = true)]
    pub config: Option<PathBuf>,

    /// Leave out entities mentioned fewer times in the scope (seeds, defined terms and the
    /// concepts kept acronyms are spelled out as excepted).
    #[arg(long, value_name = "N", global = true, value_parser = clap::value_parser!(u64).range(1..))]
    pub min_mentions: Option<u64>,

    /// Do not follow edges lighter than this (weights are in (0, 1]).
    #[arg(long, value_name = "W", global = true)]
    pub edge_threshold: Option<f64>,

    /// An entity to extract wherever its name occurs, as KIND:NAME (e.g. PERSON:Jane Doe); repeatable.
    #[arg(long, value_name = "KIND:NAME", global = true, value_parser = settings::parse_seed)]
    pub seed: Vec<Seed>,

    /// A system or tool name to extract as SYSTEM wherever it occurs; repeatable.
    #[arg(long, value_name = "NAME", global = true)]
    pub taxonomy: Vec<String>,

    /// Fail at once when another writer is updating the scope, instead of waiting.
    #[arg(long)]
    pub no_wait: bool,

    /// Also print the graph's size (nodes and edges by kind) on stderr.
    #[arg(long)]
    pub stats: bool,

    /// Print no summary or warnings on stderr, only errors.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Documents related to the document at PATH (relative to DIR).
    Related {
        path: String,
        /// Documents to list, 1 or more.
        #[arg(long, default_value_t = 10, value_parser = kts_cli::at_least_one())]
        top: usize,
    },
    /// Entities and documents near ENTITY (a name, or a node id like system:authservice).
    Neighbors {
        entity: String,
        /// Edges to walk, 1 or more [default: the depth setting, 2].
        #[arg(long, value_parser = kts_cli::at_least_one())]
        hops: Option<usize>,
        /// Nodes to list, 1 or more.
        #[arg(long, default_value_t = 50, value_parser = kts_cli::at_least_one())]
        top: usize,
    },
    /// The most connected entities and topics (degree centrality).
    Central {
        /// Entities and topics to list, 1 or more.
        #[arg(long, default_value_t = 20, value_parser = kts_cli::at_least_one())]
        top: usize,
    },
    /// The entities, most mentioned first.
    Entities {
        /// Only entities of this kind (TERM, SYSTEM, CONCEPT, ACRONYM,
        /// ERROR_CODE, PERSON), or the keyword topics (TOPIC).
        #[arg(long, value_parser = settings::parse_listed_kind)]
        kind: Option<NodeKind>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExportForm {
    /// Node-link JSON: {"nodes": [...], "links": [...]}, as NetworkX reads it.
    NodeLink,
}

/// The clap definition, for man pages and completions.
pub fn command() -> clap::Command {
    Args::command()
}

/// The settings: the config file, then the flags.
pub fn settings(args: &Args) -> anyhow::Result<Settings> {
    let mut settings = match &args.config {
        Some(path) => Settings::load(path, true)?,
        None => Settings::load(&settings::config_path(&args.dir), false)?,
    };
    if let Some(n) = args.min_mentions {
        settings.min_mentions = n;
    }
    if let Some(w) = args.edge_threshold {
        settings.edge_threshold = w;
    }
    if let Some(Command::Neighbors { hops: Some(h), .. }) = &args.command {
        settings.depth = *h;
    }
    settings.seeds.extend(args.seed.iter().cloned());
    settings.taxonomy.extend(args.taxonomy.iter().cloned());
    settings.check()?;
    Ok(settings)
}

pub fn run(args: Args) -> anyhow::Result<Exit> {
    let messages = Messages::new("kts-graph").quiet(args.quiet);
    if !args.dir.is_dir() {
        anyhow::bail!("{} is not a folder", args.dir.display());
    }
    let settings = settings(&args)?;
    match &args.command {
        None => update(&args, &settings, &messages),
        Some(command) => answer(&args.dir, command, &settings, &messages),
    }
    .map_err(|e| kts_store::with_remedy(&args.dir, e))
}

/// Brings the graph up to date; prints the summary (and the export).
fn update(args: &Args, settings: &Settings, messages: &Messages) -> anyhow::Result<Exit> {
    let started = Instant::now();
    if !kts_store::is_scope(&args.dir) {
        // The graph is built from an index: without one, say so rather than make one.
        Store::open_read(&args.dir)?;
    }
    let mut store = kts_index::open(&args.dir, args.no_wait, messages)?;
    let synced = tables::sync(&mut store, settings)?;
    if synced.extracted + synced.removed > 0 {
        // The catalog lists the graph's top entities of each scope.
        kts_index::update_catalog(&args.dir, messages);
    }
    let summary = format!(
        "{} documents extracted ({} mentions), {} removed, {} unchanged in {:.2} s",
        synced.extracted,
        synced.mentions,
        synced.removed,
        synced.unchanged,
        started.elapsed().as_secs_f64()
    );
    if !args.quiet {
        messages.info(&summary);
    }
    let stale = !snapshot::is_current(store.connection(), settings)?;
    if stale || args.stats || args.export.is_some() {
        let loaded = Instant::now();
        let kg = KnowledgeGraph::load(store.connection(), settings)?;
        let built = loaded.elapsed().as_secs_f64();
        if stale {
            store.begin()?;
            snapshot::write(store.connection(), &kg)?;
            store.commit()?;
        }
        if args.stats {
            messages.info(&format!(
                "{} (built in {built:.2} s{})",
                size(&kg),
                if stale {
                    format!(
                        ", snapshot written in {:.2} s",
                        loaded.elapsed().as_secs_f64() - built
                    )
                } else {
                    String::new()
                }
            ));
        }
        if let Some(ExportForm::NodeLink) = args.export {
            let scope = scope_name(&args.dir);
            let mut out = std::io::stdout().lock();
            serde_json::to_writer_pretty(&mut out, &export::node_link(&kg, &scope))?;
            writeln!(out)?;
        }
    }
    Ok(Exit::Ok)
}

/// Answers a graph question from the graph as it is.
fn answer(
    dir: &Path,
    command: &Command,
    settings: &Settings,
    messages: &Messages,
) -> anyhow::Result<Exit> {
    let store = Store::open_read(dir)?;
    if !tables::exist(store.connection())? {
        anyhow::bail!(
            "{} has no graph yet: run kts-graph {}",
            dir.display(),
            dir.display()
        );
    }
    let lagging = tables::lagging(store.connection())?;
    if lagging > 0 {
        messages.warn(&format!(
            "the graph lags the index by {lagging} documents: run kts-graph {} to update it",
            dir.display()
        ));
    }
    let records = match (command, Snapshot::open(dir, settings)?) {
        (Command::Entities { kind }, _) => {
            queries::entities(&KnowledgeGraph::load(store.connection(), settings)?, *kind)
        }
        (_, Some(snapshot)) => snapshot.read(|view| ask(view, command, settings))?,
        // No snapshot, or one of another state or other settings: the graph whole.
        (_, None) => ask(
            &KnowledgeGraph::load(store.connection(), settings)?,
            command,
            settings,
        )?,
    };
    let mut out = JsonlWriter::new();
    for record in &records {
        out.write(record)?;
    }
    out.flush()?;
    Ok(Exit::Ok)
}

/// The answer to a question other than `entities`.
fn ask(
    view: &dyn GraphView,
    command: &Command,
    settings: &Settings,
) -> anyhow::Result<Vec<kts_record::NodeRecord>> {
    match command {
        Command::Related { path, top } => queries::related(view, path, *top),
        Command::Neighbors { entity, top, .. } => {
            queries::neighbors(view, entity, settings.depth, *top)
        }
        Command::Central { top } => queries::central(view, *top),
        Command::Entities { .. } => unreachable!("entities are listed from the whole graph"),
    }
}

/// "N nodes (..), M edges (..)", by kind and label.
fn size(kg: &KnowledgeGraph) -> String {
    let mut nodes = std::collections::BTreeMap::<&str, usize>::new();
    for (_, node) in kg.nodes() {
        *nodes.entry(node.kind.as_str()).or_default() += 1;
    }
    let mut edges = std::collections::BTreeMap::<&str, usize>::new();
    for edge in kg.graph.edge_weights() {
        *edges.entry(edge.label).or_default() += 1;
    }
    let list = |counts: &std::collections::BTreeMap<&str, usize>| {
        counts
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "graph: {} nodes ({}), {} edges ({})",
        kg.graph.node_count(),
        list(&nodes),
        kg.graph.edge_count(),
        list(&edges)
    )
}

fn scope_name(dir: &Path) -> String {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}
