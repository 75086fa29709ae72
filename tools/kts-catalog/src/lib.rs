//! kts-catalog: the catalog of a knowledge root (a folder whose immediate
//! sub-folders are scopes), `ROOT/.kts-catalog.db`: one row per indexed
//! scope — slug, folder, counts, doc types, years, top entities and
//! keywords, model, last indexed — searchable, for routing questions to
//! scopes.
//!
//! Built in full by `kts-catalog ROOT` ([`Catalog::rebuild`]); kts-index
//! keeps the row of the scope it indexed up to date ([`Catalog::update_scope`]).
//! Folders without an index are not listed; a scope that cannot be read is
//! reported and left out.

mod catalog;
mod scope;

use std::path::PathBuf;

use clap::{CommandFactory, Parser};
use kts_cli::{Exit, JsonlWriter, Messages};
use kts_record::{ScopeRecord, schema_id};

pub use catalog::{
    CATALOG_FILE, COMMON_ROWS, Catalog, FORMAT_VERSION, RANKED_ROWS, Rebuild, ScopeFailure,
    Summary, catalog_path, root_scopes,
};
pub use scope::{TITLES, TOP, read_scope, years_in};

/// One scope of a knowledge root, as the catalog describes it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CatalogRow {
    /// The name it is asked for by: the folder name's slug, made unique
    /// ([`root_scopes`]).
    pub slug: String,
    /// The scope folder, relative to the root.
    pub path: String,
    pub documents: usize,
    pub chunks: usize,
    /// Sorted.
    pub doc_types: Vec<String>,
    /// Years 1900–2100 written in the documents' titles, paths and dates, sorted.
    pub years: Vec<i32>,
    /// The graph's entities the most documents mention (at most [`TOP`]);
    /// empty when the scope has no graph.
    pub entities: Vec<String>,
    /// The graph's keywords the most documents use, else the title words and
    /// document keywords the most documents have (at most [`TOP`]).
    pub keywords: Vec<String>,
    /// The documents' distinct titles, in path order (at most [`TITLES`]):
    /// what a scope's documents call it ("MLMI 2007-FF4 Monthly Remittance
    /// Report") when its folder name says it otherwise. Searched, not listed
    /// in kts.scope/1 records.
    pub titles: Vec<String>,
    /// The embedding model of the index; `None` for a keyword-only index.
    pub model_id: Option<String>,
    /// The store's `meta.updated`: when its index last changed.
    pub last_indexed: String,
}

impl CatalogRow {
    /// The scope folder.
    pub fn dir(&self, root: &std::path::Path) -> PathBuf {
        root.join(&self.path)
    }

    /// The row as a `kts.scope/1` record.
    pub fn to_record(&self, score: Option<f64>) -> ScopeRecord {
        ScopeRecord {
            schema: schema_id::SCOPE.into(),
            slug: self.slug.clone(),
            path: self.path.clone(),
            documents: self.documents,
            chunks: self.chunks,
            doc_types: self.doc_types.clone(),
            years: self.years.clone(),
            entities: self.entities.clone(),
            keywords: self.keywords.clone(),
            model_id: self.model_id.clone(),
            last_indexed: self.last_indexed.clone(),
            score,
        }
    }
}

const ABOUT: &str = "Build and search the catalog of a knowledge root: one row per scope";

const AFTER_HELP: &str = "\
ROOT is a knowledge root: a folder whose sub-folders are scopes, each indexed
on its own (ROOT/NAME/.kts/kts.db). Without --list or --search, rebuilds the
catalog ROOT/.kts-catalog.db from every scope, in one transaction (a crash
leaves the previous catalog), and prints a summary on stderr. Each row holds
the scope's slug (its folder name in lowercase, spaces and hyphens as _,
letters and digits of any script kept, other characters dropped; folders
giving the same slug get _2, _3 in name order, but a scope keeps the slug the
catalog gave it: a folder added later takes the next free _2, _3), folder,
document and chunk counts, doc types, the years its titles, paths and dates
name, the entities of its knowledge graph (kts-graph) and the keywords the
most documents use, its model and when it was last indexed. Folders without an index are not
listed; a scope that cannot be read (corrupt, unfinished, another format) is
reported and left out (exit 1).

Once the catalog exists, kts-index updates the row of the scope it indexed.

--if-stale rebuilds only a catalog that is missing or does not list the
root's indexed folders as they are (a scope renamed, added or removed since):
pipelines/reindex runs it at the end of each run.

--list writes every row as a kts.scope/1 record on stdout; --search TEXT
writes the best matching scopes first, with a score: the scopes whose slug
words all occur in TEXT first, then by BM25 over each row's words (in a
large catalog, words a quarter of the scopes hold or more are left out).
When no scope matches, stdout stays empty and a warning says so.

Example:
  mkdir -p kb && cp -r docs kb/handbook
  kts-crawl kb/handbook | kts-convert | kts-chunk | kts-embed | kts-index kb/handbook
  kts-catalog kb
  kts-catalog kb --list
  kts-catalog kb --search \"handbook error codes\" --limit 3";

#[derive(Parser, Debug)]
#[command(name = "kts-catalog", version, about = ABOUT, after_help = AFTER_HELP)]
pub struct Args {
    /// The knowledge root: a folder whose sub-folders are scopes.
    #[arg(value_name = "ROOT")]
    pub root: PathBuf,

    /// Write the catalog's rows as kts.scope/1 records instead of rebuilding it.
    #[arg(long, conflicts_with = "search")]
    pub list: bool,

    /// Write the scopes matching TEXT, best first, as kts.scope/1 records
    /// with a score, instead of rebuilding the catalog.
    #[arg(long, value_name = "TEXT", value_parser = not_blank)]
    pub search: Option<String>,

    /// Scopes --search writes at most (1 or more).
    #[arg(long, value_name = "N", default_value_t = 10, requires = "search",
          value_parser = kts_cli::at_least_one())]
    pub limit: usize,

    /// Rebuild only when the catalog is missing or its scopes are not the
    /// indexed folders of the root as they are now (one renamed, added or
    /// removed since).
    #[arg(long, conflicts_with_all = ["list", "search"])]
    pub if_stale: bool,

    /// Print no warnings or per-scope errors (the summary and exit status still tell).
    #[arg(long, short)]
    pub quiet: bool,
}

/// The clap definition, for man pages and completions.
pub fn command() -> clap::Command {
    Args::command()
}

/// A text with something to search for (clap's check of --search).
fn not_blank(text: &str) -> Result<String, String> {
    if text.trim().is_empty() {
        Err("the text to search for is empty".into())
    } else {
        Ok(text.to_string())
    }
}

pub fn run(args: Args) -> anyhow::Result<Exit> {
    let messages = Messages::new("kts-catalog").quiet(args.quiet);
    if args.list {
        let catalog = Catalog::open(&args.root)?;
        let mut out = JsonlWriter::new();
        for row in catalog.scopes()? {
            out.write(&row.to_record(None))?;
        }
        return Ok(Exit::Ok);
    }
    if let Some(text) = &args.search {
        let catalog = Catalog::open(&args.root)?;
        let found = catalog.search(text, args.limit)?;
        if found.is_empty() {
            messages.warn(&format!("no scope of the catalog matches {text:?}"));
        }
        let mut out = JsonlWriter::new();
        for (row, score) in found {
            out.write(&row.to_record(Some(score)))?;
        }
        return Ok(Exit::Ok);
    }
    if kts_store::is_scope(&args.root) {
        anyhow::bail!(
            "{} is a scope (it has an index), not a knowledge root: give the folder that holds \
             the scopes",
            args.root.display()
        );
    }
    if args.if_stale && lists_the_scopes_there(&args.root)? {
        if !args.quiet {
            messages.info("the catalog lists the root's scopes as they are: not rebuilt");
        }
        return Ok(Exit::Ok);
    }
    let summary = Catalog::rebuild(&args.root)?;
    for (slug, folders) in &summary.collisions {
        let named: Vec<String> = folders
            .iter()
            .map(|f| {
                let name = f.path.file_name().unwrap_or_default().to_string_lossy();
                format!("{name} ({})", f.slug)
            })
            .collect();
        messages.warn(&format!(
            "the folders {} all give the slug {slug}",
            named.join(", ")
        ));
    }
    for failure in &summary.failed {
        messages.reject(&failure.path, failure.code, &failure.message);
    }
    if summary.scopes == 0 && summary.failed.is_empty() {
        messages.warn(&format!(
            "no indexed scope in {}: a knowledge root's sub-folders are scopes, each indexed with kts-index",
            args.root.display()
        ));
    }
    messages.info(&summary.to_string());
    Ok(messages.exit())
}

/// Whether the root's catalog exists and lists its indexed folders, no more
/// and no fewer.
fn lists_the_scopes_there(root: &std::path::Path) -> anyhow::Result<bool> {
    if !catalog_path(root).exists() {
        return Ok(false);
    }
    let Ok(listed) = Catalog::open(root).and_then(|catalog| catalog.scope_entries()) else {
        return Ok(false);
    };
    let mut listed: Vec<PathBuf> = listed.into_iter().map(|s| s.path).collect();
    let mut there: Vec<PathBuf> = kts_store::discover_scopes(root)?
        .scopes
        .into_iter()
        .filter(|s| s.indexed)
        .map(|s| s.path)
        .collect();
    listed.sort();
    there.sort();
    Ok(listed == there)
}
