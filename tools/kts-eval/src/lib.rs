//! kts-eval: measures retrieval quality on a BEIR data set by running it
//! through the real pipeline (`kts-chunk | kts-embed | kts-index`, then
//! `kts-query --batch`), and reports nDCG@10, recall@100 and MRR@10 per mode.

mod ablation;
pub mod beir;
pub mod calibration;
pub mod metrics;
pub mod pipeline;
mod report;
mod sets;

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::bail;
use clap::{CommandFactory, Parser};
use kts_cli::{Exit, Messages};

use beir::Dataset;
use pipeline::{IndexKey, Marker, Mode, Tools};
pub use report::{ModeReport, Report};

const ABOUT: &str = "Measure retrieval quality (nDCG@10, recall@100, MRR@10) on a BEIR data set";

const AFTER_HELP: &str = "\
Runs a BEIR data set (corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv) through
the real pipeline and reports, per mode, nDCG@10 (graded, as trec_eval),
recall@100 and MRR@10, with the index time and the query time per query.

Each corpus entry becomes a kts.doc/1 record (path: its _id, with %, / and
a leading dot percent-encoded; markdown: \"# <title>\", a blank line, its
text) fed to kts-chunk | kts-embed | kts-index WORK (kts-embed is left out
when only bm25 is asked). Then, per mode, the split's judged queries go to
kts-query WORK --batch; each hit is matched to the judgments by its path,
which names the BEIR _id. Queries without any hit score 0. The tools are run
from kts-eval's own folder.

WORK keeps the index (default: a folder named after the corpus digest in the
temporary folder): a later run on the same corpus, with the same tools and
chunking, reuses it. It also keeps kts-embed's vector cache, so a rebuild
embeds only new text. --keep also keeps WORK/docs.jsonl (the kts.doc/1
stream) and WORK/runs/SPLIT.MODE.jsonl (kts-query's output).

Several data sets (DIR:SPLIT gives one its own split) are measured one
after the other, then side by side: each mode's nDCG@10 per set and the
mean, and with --steps each step's effect per set, with the verdict of the
rule for default steps (lower no set by more than 0.002, raise the mean).

The report is one JSON object on stdout (or in --json FILE); a table of it
goes to stderr. With several sets: {\"sets\": [report, ...], \"side_by_side\": ...}.

Examples:
  kts-eval beir/scifact --split test --modes bm25 --json report.json
  kts-eval beir/scifact --split test --modes bm25,hybrid | jq .modes
  kts-eval beir/scifact beir/devset:dev --modes bm25 --steps";

#[derive(Parser, Debug)]
#[command(name = "kts-eval", version, about = ABOUT, after_help = AFTER_HELP)]
pub struct Args {
    /// The BEIR data set folders: corpus.jsonl, queries.jsonl,
    /// qrels/SPLIT.tsv. `DIR:SPLIT` measures that set on its own split.
    #[arg(value_name = "DATASET_DIR", required = true, num_args = 1..)]
    pub datasets: Vec<PathBuf>,

    /// The judgments to evaluate against: qrels/SPLIT.tsv.
    #[arg(long, value_name = "SPLIT", default_value = "test")]
    pub split: String,

    /// Retrieval modes to measure, comma-separated.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        value_name = "MODES",
        default_value = "bm25,vector,hybrid"
    )]
    pub modes: Vec<Mode>,

    /// Folder for the index [default: <temp>/kts-eval-<name>-<corpus
    /// digest>]; with several data sets, one folder per set inside it.
    #[arg(long, value_name = "DIR")]
    pub work: Option<PathBuf>,

    /// Also keep the doc stream and kts-query's output in WORK.
    #[arg(long)]
    pub keep: bool,

    /// Hits asked of kts-query per query (recall is cut at 100).
    #[arg(long, value_name = "N", default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    pub top_k: u32,

    /// Evaluate only the first N judged queries (in queries.jsonl order).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub queries: Option<u64>,

    /// Write the JSON report to FILE instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Rebuild the index even when WORK holds one that could be reused.
    #[arg(long)]
    pub reindex: bool,

    /// Reuse WORK's index even when kts-chunk, kts-embed or kts-index were
    /// rebuilt since it was made (same corpus and chunking): for measuring
    /// query-side changes while the rest of the workspace relinks.
    #[arg(long, conflicts_with = "reindex")]
    pub any_build: bool,

    /// Passed to kts-chunk as --size (target chunk size in characters).
    #[arg(long, value_name = "CHARS")]
    pub chunk_size: Option<u32>,

    /// Passed to kts-chunk as --overlap.
    #[arg(long, value_name = "CHARS")]
    pub chunk_overlap: Option<u32>,

    /// Also measure each step of kts-query's pipeline on and off (in the
    /// last mode given), against every step off and the default steps.
    #[arg(long)]
    pub steps: bool,

    /// Fit kts-query's confidence model on this run's first 10 hits per
    /// query and report its coefficients (for rank/confidence.rs).
    #[arg(long)]
    pub fit_confidence: bool,

    /// An extra argument for kts-query, e.g. --query-arg=--candidates=300
    /// (repeatable).
    #[arg(long, value_name = "ARG", allow_hyphen_values = true)]
    pub query_arg: Vec<String>,

    /// An extra argument for kts-embed, e.g. --embed-arg=--model=ID to measure
    /// another model (repeatable); an index made with other ones is rebuilt.
    #[arg(long, value_name = "ARG", allow_hyphen_values = true)]
    pub embed_arg: Vec<String>,
}

/// The clap definition, for man pages and completions.
pub fn command() -> clap::Command {
    Args::command()
}

/// The default work folder: named after the data set and its corpus digest.
pub fn default_work(name: &str, corpus_sha256: &str) -> PathBuf {
    let name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    std::env::temp_dir().join(format!(
        "kts-eval-{name}-{}",
        &corpus_sha256[..16.min(corpus_sha256.len())]
    ))
}

pub fn run(args: Args) -> anyhow::Result<Exit> {
    let messages = Messages::new("kts-eval");
    let mut modes: Vec<Mode> = Vec::new();
    for mode in &args.modes {
        if !modes.contains(mode) {
            modes.push(*mode);
        }
    }
    if modes.is_empty() {
        bail!("no mode to measure: give --modes bm25,vector,hybrid or a part of it");
    }
    // Every set is opened before the first (long) one is indexed.
    let sets = args
        .datasets
        .iter()
        .map(|given| {
            let (dir, split) = dataset_and_split(given, &args.split);
            Ok((Dataset::open(&dir)?, split))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut exit = Exit::Ok;
    let mut reports = Vec::new();
    for (dataset, split) in &sets {
        let work = match (&args.work, args.datasets.len()) {
            (Some(dir), 1) => Some(dir.clone()),
            (Some(dir), _) => Some(dir.join(dataset.name())),
            (None, _) => None,
        };
        let (report, set_exit) = evaluate(dataset, split, work, &modes, &args, &messages)?;
        eprint!("{}", report.table());
        if set_exit != Exit::Ok {
            exit = set_exit;
        }
        reports.push(report);
    }
    let json = match reports.as_slice() {
        [one] => one.to_json(),
        several => {
            eprint!("{}", sets::side_by_side(several));
            sets::sets_json(several)
        }
    };
    let json = serde_json::to_string_pretty(&json)? + "\n";
    match &args.json {
        Some(path) => std::fs::write(path, json)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?,
        None => {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            out.write_all(json.as_bytes())?;
            out.flush()?;
        }
    }
    Ok(exit)
}

/// `DIR:SPLIT` names a set and its split; a folder that exists as given is
/// a set measured on `--split`.
fn dataset_and_split(given: &Path, split: &str) -> (PathBuf, String) {
    match given.to_str().and_then(|g| g.rsplit_once(':')) {
        Some((dir, own)) if !given.is_dir() && Path::new(dir).is_dir() && !own.is_empty() => {
            (dir.into(), own.to_string())
        }
        _ => (given.to_path_buf(), split.to_string()),
    }
}

/// Indexes one data set in `work` (default: [`default_work`]), or reuses its
/// index there, and measures every mode on it.
fn evaluate(
    dataset: &Dataset,
    split_name: &str,
    work: Option<PathBuf>,
    modes: &[Mode],
    args: &Args,
    messages: &Messages,
) -> anyhow::Result<(Report, Exit)> {
    let started = Instant::now();
    let split = dataset.split(split_name)?;
    if !split.missing_queries.is_empty() {
        messages.warn(&format!(
            "{} judged queries of qrels/{}.tsv are not in queries.jsonl (left out): {}",
            split.missing_queries.len(),
            split_name,
            preview(&split.missing_queries)
        ));
    }
    if split.without_relevant > 0 {
        messages.warn(&format!(
            "{} queries have no judgment above 0 (left out)",
            split.without_relevant
        ));
    }
    let mut queries = split.queries;
    if let Some(n) = args.queries {
        queries.truncate(usize::try_from(n).unwrap_or(usize::MAX));
    }
    if queries.is_empty() {
        bail!("qrels/{split_name}.tsv judges none of the queries");
    }
    if args.top_k < metrics::RECALL_AT as u32 {
        messages.warn(&format!(
            "--top-k {} is below {}: recall@{} only sees the first {}",
            args.top_k,
            metrics::RECALL_AT,
            metrics::RECALL_AT,
            args.top_k
        ));
    }

    // Every tool must be there before the (long) index build starts.
    let tools = Tools::beside_current_exe()?;
    let embed = modes.iter().any(|m| m.needs_embeddings());
    for name in pipeline::ingest_stages(embed)
        .into_iter()
        .chain(["kts-graph", "kts-query"])
    {
        tools.path(name)?;
    }

    let corpus_sha256 = dataset.corpus_digest()?;
    let work = &work.unwrap_or_else(|| default_work(&dataset.name(), &corpus_sha256));
    let mut chunk_args = Vec::new();
    if let Some(size) = args.chunk_size {
        chunk_args.extend(["--size".to_string(), size.to_string()]);
    }
    if let Some(overlap) = args.chunk_overlap {
        chunk_args.extend(["--overlap".to_string(), overlap.to_string()]);
    }
    let key = IndexKey {
        corpus_sha256: corpus_sha256.clone(),
        chunk_args,
        embed_args: if embed {
            args.embed_arg.clone()
        } else {
            Vec::new()
        },
        embedded: embed,
        tools: pipeline::ingest_stages(embed)
            .into_iter()
            .map(|name| Ok((name.to_string(), tools.digest(name)?)))
            .collect::<anyhow::Result<_>>()?,
    };

    let mut exit = Exit::Ok;
    let reusable = Marker::read(work).filter(|m| {
        let serves = if args.any_build {
            m.serves_any_build(&key)
        } else {
            m.serves(&key)
        };
        !args.reindex && serves && work.join(".kts").is_dir()
    });
    let (marker, reused) = match reusable {
        Some(marker) => {
            messages.info(&format!(
                "reusing the index of {} documents in {} (built in {:.1} s; --reindex rebuilds it)",
                marker.documents,
                work.display(),
                marker.index_seconds
            ));
            (marker, true)
        }
        None => {
            pipeline::prepare_work(work)?;
            messages.info(&format!(
                "indexing {} into {} ({})",
                dataset.corpus_path().display(),
                work.display(),
                pipeline::ingest_stages(embed).join(" | ")
            ));
            let tee = args.keep.then(|| work.join("docs.jsonl"));
            let embed_args = key.tools.get("kts-embed").map(|digest| {
                let cache = work.join(pipeline::EMBED_CACHE).join(&digest[..16]);
                let cache = ["--cache".to_string(), cache.to_string_lossy().into_owned()];
                cache
                    .into_iter()
                    .chain(key.embed_args.clone())
                    .collect::<Vec<_>>()
            });
            let built = pipeline::build_index(
                &tools,
                work,
                dataset.documents()?,
                &key.chunk_args,
                embed_args.as_deref(),
                tee.as_deref(),
            )?;
            if !built.stages_with_rejects.is_empty() {
                messages.warn(&format!(
                    "{} rejected some records (see above): those documents cannot be found",
                    built.stages_with_rejects.join(", ")
                ));
                exit = Exit::SomeFailed;
            }
            let marker = Marker {
                kts_eval: env!("CARGO_PKG_VERSION").into(),
                key: key.clone(),
                documents: built.documents,
                index_seconds: built.seconds,
            };
            marker.write(work)?;
            messages.info(&format!(
                "indexed {} documents in {:.1} s",
                built.documents, built.seconds
            ));
            (marker, false)
        }
    };

    // The knowledge graph, which kts-query ranks with when given --graph
    // (pass it with --query-arg to measure with it).
    pipeline::build_graph(&tools, work)?;

    if args.keep {
        std::fs::create_dir_all(work.join("runs"))?;
    }
    let asked: Vec<(String, String)> = queries
        .iter()
        .map(|q| (q.id.clone(), q.text.clone()))
        .collect();
    let mut mode_reports = Vec::new();
    for mode in modes {
        let tee = args.keep.then(|| {
            work.join("runs")
                .join(format!("{split_name}.{}.jsonl", mode.name()))
        });
        let warn = |m: &str| messages.warn(m);
        let settings = pipeline::QuerySettings {
            mode: *mode,
            top_k: args.top_k,
            extra_args: args.query_arg.clone(),
        };
        let run = pipeline::run_queries(&tools, work, &settings, &asked, tee.as_deref(), &warn)?;
        if run.some_failed || run.errors > 0 {
            exit = Exit::SomeFailed;
        }
        let without_hits = queries
            .iter()
            .filter(|q| run.rankings.get(&q.id).is_none_or(Vec::is_empty))
            .count();
        if without_hits > 0 {
            messages.warn(&format!(
                "kts-query --mode {} returned no hit for {without_hits} of {} queries \
                 (they score 0)",
                mode.name(),
                queries.len()
            ));
        }
        if run.unknown_queries > 0 {
            messages.warn(&format!(
                "kts-query --mode {} returned {} hits for queries that were not asked",
                mode.name(),
                run.unknown_queries
            ));
        }
        let mut report = ModeReport::score(*mode, &queries, &run);
        if args.fit_confidence {
            report.confidence_fit = Some(calibration::fit(&calibration::labelled(&queries, &run)));
        }
        mode_reports.push(report);
    }

    let ablation = match (args.steps, modes.last()) {
        (true, Some(mode)) => {
            let settings = pipeline::QuerySettings {
                mode: *mode,
                top_k: args.top_k,
                extra_args: args.query_arg.clone(),
            };
            let warn = |m: &str| messages.warn(m);
            Some(ablation::measure(&tools, work, &settings, &queries, &warn)?)
        }
        _ => None,
    };

    let report = Report {
        dataset: dataset.name(),
        dataset_dir: absolute(&dataset.dir),
        split: split_name.to_string(),
        corpus_sha256,
        documents: marker.documents,
        queries: queries.len(),
        top_k: args.top_k,
        work: absolute(work),
        index_reused: reused,
        index_seconds: marker.index_seconds,
        embedded: marker.key.embedded,
        chunk_args: marker.key.chunk_args.clone(),
        query_args: args.query_arg.clone(),
        modes: mode_reports,
        ablation,
        wall_seconds: started.elapsed().as_secs_f64(),
    };
    Ok((report, exit))
}

fn absolute(path: &Path) -> String {
    path.canonicalize()
        .unwrap_or_else(|_| path.to_path_buf())
        .to_string_lossy()
        .into_owned()
}

fn preview(ids: &[String]) -> String {
    let mut shown = ids.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
    if ids.len() > 5 {
        shown.push_str(", ...");
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_example_fits_in_80_columns() {
        for line in AFTER_HELP.lines() {
            assert!(line.chars().count() <= 80, "too long: {line}");
        }
        command().debug_assert();
    }

    #[test]
    fn modes_parse_comma_separated() {
        let args = Args::try_parse_from(["kts-eval", "d", "--modes", "bm25,hybrid"]).unwrap();
        assert_eq!(args.modes, [Mode::Bm25, Mode::Hybrid]);
        let args = Args::try_parse_from(["kts-eval", "d"]).unwrap();
        assert_eq!(args.modes, [Mode::Bm25, Mode::Vector, Mode::Hybrid]);
        assert_eq!((args.split.as_str(), args.top_k), ("test", 100));
        assert!(Args::try_parse_from(["kts-eval", "d", "--modes", "bm25,nope"]).is_err());
        assert!(Args::try_parse_from(["kts-eval", "d", "--top-k", "0"]).is_err());
        let args =
            Args::try_parse_from(["kts-eval", "d", "--query-arg", "--candidates=300"]).unwrap();
        assert_eq!(args.query_arg, ["--candidates=300"]);
    }

    #[test]
    fn a_set_may_name_its_own_split() {
        let dir = tempfile::tempdir().unwrap();
        let set = dir.path().join("tldr");
        std::fs::create_dir(&set).unwrap();
        let given = |s: String| dataset_and_split(Path::new(&s), "test");
        let named = format!("{}:dev", set.display());
        assert_eq!(given(named), (set.clone(), "dev".to_string()));
        assert_eq!(
            given(set.display().to_string()),
            (set.clone(), "test".into())
        );
        // Not a folder either way: left as given, for Dataset::open to refuse.
        let missing = format!("{}/nope:dev", dir.path().display());
        assert_eq!(
            given(missing.clone()),
            (PathBuf::from(missing), "test".into())
        );
        let args = Args::try_parse_from(["kts-eval", "a", "b:dev"]).unwrap();
        assert_eq!(args.datasets, [PathBuf::from("a"), PathBuf::from("b:dev")]);
        assert!(Args::try_parse_from(["kts-eval"]).is_err());
    }

    #[test]
    fn default_work_is_named_after_the_digest() {
        let dir = default_work("sci fact", "0123456789abcdef0123");
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(name, "kts-eval-sci_fact-0123456789abcdef");
        assert!(dir.starts_with(std::env::temp_dir()));
    }
}
