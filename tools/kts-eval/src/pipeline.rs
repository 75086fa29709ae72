//! Running the real pipeline: `kts-chunk | kts-embed | kts-index WORK` fed
//! with the corpus, then `kts-query WORK --batch` per retrieval mode.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::time::Instant;

use anyhow::{Context, bail};
use kts_record::{DocRecord, schema_id};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::beir::hex;
use kts_query::rank::confidence::Features;

/// The command that builds the tools kts-eval runs.
pub const BUILD_HINT: &str =
    "cargo build --release -p kts-chunk -p kts-embed -p kts-index -p kts-query -p kts-eval";

/// Where the pipeline's executables are: the folder of kts-eval's own executable.
#[derive(Clone, Debug)]
pub struct Tools {
    dir: PathBuf,
}

impl Tools {
    pub fn beside_current_exe() -> anyhow::Result<Self> {
        let exe = std::env::current_exe().context("cannot find kts-eval's own executable")?;
        let dir = exe
            .parent()
            .context("kts-eval's executable is in no folder")?
            .to_path_buf();
        Ok(Self { dir })
    }

    pub fn in_dir(dir: &Path) -> Self {
        Self {
            dir: dir.to_path_buf(),
        }
    }

    /// The path of one tool, which must exist.
    pub fn path(&self, name: &str) -> anyhow::Result<PathBuf> {
        let path = self
            .dir
            .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
        if !path.is_file() {
            bail!(
                "{} is missing: kts-eval runs the pipeline tools from its own folder; \
                 build them with `{BUILD_HINT}`",
                path.display()
            );
        }
        Ok(path)
    }

    /// SHA-256 of a tool's executable: an index is reused only when the tools
    /// that built it are the same.
    pub fn digest(&self, name: &str) -> anyhow::Result<String> {
        let path = self.path(name)?;
        let mut file =
            File::open(&path).with_context(|| format!("cannot open {}", path.display()))?;
        let mut hasher = Sha256::new();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = file.read(&mut buf)?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
        }
        Ok(hex(&hasher.finalize()))
    }
}

/// What the index in a work folder was built from; written as
/// `WORK/kts-eval.json` once the index is complete.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct IndexKey {
    /// SHA-256 of corpus.jsonl.
    pub corpus_sha256: String,
    /// Extra arguments given to kts-chunk.
    pub chunk_args: Vec<String>,
    /// Extra arguments given to kts-embed (`--embed-arg`).
    #[serde(default)]
    pub embed_args: Vec<String>,
    /// Whether the chunks went through kts-embed (vector and hybrid need it).
    pub embedded: bool,
    /// SHA-256 of each stage's executable.
    pub tools: BTreeMap<String, String>,
}

/// The marker file of a complete index.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct Marker {
    pub kts_eval: String,
    #[serde(flatten)]
    pub key: IndexKey,
    pub documents: usize,
    pub index_seconds: f64,
}

pub const MARKER: &str = "kts-eval.json";

/// The folder of kts-embed's vector caches in WORK, one per kts-embed build
/// (`embed-cache/<digest prefix>`): kept across index rebuilds, so that a
/// change to chunking or indexing re-embeds only new text.
pub const EMBED_CACHE: &str = "embed-cache";

impl Marker {
    pub fn read(work: &Path) -> Option<Marker> {
        let text = std::fs::read_to_string(work.join(MARKER)).ok()?;
        serde_json::from_str(&text).ok()
    }

    pub fn write(&self, work: &Path) -> anyhow::Result<()> {
        let tmp = work.join(format!("{MARKER}.tmp"));
        std::fs::write(&tmp, serde_json::to_string_pretty(self)? + "\n")
            .with_context(|| format!("cannot write {}", tmp.display()))?;
        std::fs::rename(&tmp, work.join(MARKER))
            .with_context(|| format!("cannot write {}", work.join(MARKER).display()))?;
        Ok(())
    }

    /// Like [`Marker::serves`], whatever builds of the tools made the index.
    pub fn serves_any_build(&self, wanted: &IndexKey) -> bool {
        let have = &self.key;
        have.corpus_sha256 == wanted.corpus_sha256
            && have.chunk_args == wanted.chunk_args
            && (!wanted.embedded || (have.embedded && have.embed_args == wanted.embed_args))
    }

    /// Whether the index this marker describes serves a run that needs `wanted`.
    pub fn serves(&self, wanted: &IndexKey) -> bool {
        let have = &self.key;
        let same_tool = |name: &str| have.tools.get(name) == wanted.tools.get(name);
        have.corpus_sha256 == wanted.corpus_sha256
            && have.chunk_args == wanted.chunk_args
            && same_tool("kts-chunk")
            && same_tool("kts-index")
            && (!wanted.embedded
                || (have.embedded
                    && same_tool("kts-embed")
                    && have.embed_args == wanted.embed_args))
    }
}

/// The stages of the ingest pipeline a key needs.
pub fn ingest_stages(embed: bool) -> Vec<&'static str> {
    if embed {
        vec!["kts-chunk", "kts-embed", "kts-index"]
    } else {
        vec!["kts-chunk", "kts-index"]
    }
}

/// Makes `work` ready for a fresh index: refuses a folder that holds other
/// things than a previous kts-eval index; removes that previous index.
pub fn prepare_work(work: &Path) -> anyhow::Result<()> {
    if work.exists() {
        let ours = [MARKER, ".kts", EMBED_CACHE]
            .iter()
            .any(|name| work.join(name).exists());
        let empty = std::fs::read_dir(work)
            .with_context(|| format!("cannot read {}", work.display()))?
            .next()
            .is_none();
        if !ours && !empty {
            bail!(
                "work folder {} is not empty and holds no kts-eval index: \
                 give an empty or new folder with --work",
                work.display()
            );
        }
        let _ = std::fs::remove_file(work.join(MARKER));
        for name in [".kts", "runs", "docs.jsonl"] {
            let path = work.join(name);
            if path.is_dir() {
                std::fs::remove_dir_all(&path)
                    .with_context(|| format!("cannot remove {}", path.display()))?;
            } else if path.exists() {
                std::fs::remove_file(&path)
                    .with_context(|| format!("cannot remove {}", path.display()))?;
            }
        }
    }
    std::fs::create_dir_all(work).with_context(|| format!("cannot create {}", work.display()))?;
    Ok(())
}

fn spawn(program: &Path, args: &[String], stdin: Stdio) -> anyhow::Result<Child> {
    Command::new(program)
        .args(args)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("cannot start {}", program.display()))
}

/// How a stage ended, for messages.
fn describe(status: ExitStatus) -> String {
    match status.code() {
        Some(code) => format!("exit status {code}"),
        None => "killed by a signal".into(),
    }
}

/// What building the index did.
#[derive(Debug)]
pub struct Built {
    pub documents: usize,
    pub seconds: f64,
    /// Stages that ended with status 1 (some records rejected, each reported).
    pub stages_with_rejects: Vec<String>,
}

/// Feeds `docs` through `kts-chunk CHUNK_ARGS | [kts-embed EMBED_ARGS |] kts-index WORK`
/// (kts-embed only with `embed_args`).
/// With `tee`, the `kts.doc/1` stream is also written to that file.
pub fn build_index(
    tools: &Tools,
    work: &Path,
    docs: impl Iterator<Item = anyhow::Result<DocRecord>> + Send,
    chunk_args: &[String],
    embed_args: Option<&[String]>,
    tee: Option<&Path>,
) -> anyhow::Result<Built> {
    let started = Instant::now();
    let mut children: Vec<(&str, Child)> = Vec::new();
    let mut chunk = spawn(&tools.path("kts-chunk")?, chunk_args, Stdio::piped())?;
    let mut feed = chunk.stdin.take().expect("piped stdin");
    let mut upstream: ChildStdout = chunk.stdout.take().expect("piped stdout");
    children.push(("kts-chunk", chunk));
    if let Some(embed_args) = embed_args {
        let mut child = spawn(&tools.path("kts-embed")?, embed_args, Stdio::from(upstream))?;
        upstream = child.stdout.take().expect("piped stdout");
        children.push(("kts-embed", child));
    }
    let work_arg = work.to_string_lossy().into_owned();
    let mut index = spawn(
        &tools.path("kts-index")?,
        &[work_arg],
        Stdio::from(upstream),
    )?;
    // kts-index's stdout (its summary) goes to our stderr: our stdout is the report.
    let mut summary = index.stdout.take().expect("piped stdout");
    let forward = std::thread::spawn(move || {
        let _ = std::io::copy(&mut summary, &mut std::io::stderr());
    });
    children.push(("kts-index", index));

    let mut tee = match tee {
        Some(path) => {
            Some(BufWriter::new(File::create(path).with_context(|| {
                format!("cannot create {}", path.display())
            })?))
        }
        None => None,
    };
    // Feed on this thread; a stage that dies closes the pipe, which ends the
    // feeding quietly: its exit status tells the story below.
    let mut documents = 0usize;
    let mut feed_error = None;
    {
        let mut out = BufWriter::with_capacity(1 << 16, &mut feed);
        let mut line = Vec::with_capacity(1 << 14);
        for doc in docs {
            let doc = match doc {
                Ok(doc) => doc,
                Err(e) => {
                    feed_error = Some(e);
                    break;
                }
            };
            line.clear();
            serde_json::to_writer(&mut line, &doc)?;
            line.push(b'\n');
            if let Some(tee) = tee.as_mut() {
                tee.write_all(&line)?;
            }
            if out.write_all(&line).is_err() {
                break;
            }
            documents += 1;
        }
        let _ = out.flush();
    }
    drop(feed);
    if let Some(mut tee) = tee {
        tee.flush()?;
    }

    let mut failures = Vec::new();
    let mut stages_with_rejects = Vec::new();
    for (name, mut child) in children {
        let status = child
            .wait()
            .with_context(|| format!("waiting for {name}"))?;
        match status.code() {
            Some(0) => {}
            Some(1) => stages_with_rejects.push(name.to_string()),
            _ => failures.push(format!("{name} ({})", describe(status))),
        }
    }
    let _ = forward.join();
    if let Some(e) = feed_error {
        return Err(e.context("reading the corpus"));
    }
    if !failures.is_empty() {
        bail!(
            "building the index in {} failed: {} (see the messages above)",
            work.display(),
            failures.join(", ")
        );
    }
    Ok(Built {
        documents,
        seconds: started.elapsed().as_secs_f64(),
        stages_with_rejects,
    })
}

/// Brings the knowledge graph of the index in `work` up to date (kts-graph).
pub fn build_graph(tools: &Tools, work: &Path) -> anyhow::Result<()> {
    let program = tools.path("kts-graph")?;
    let status = Command::new(&program)
        .arg(work)
        .arg("--quiet")
        .stdout(Stdio::null())
        .status()
        .with_context(|| format!("cannot start {}", program.display()))?;
    if !status.success() {
        bail!("kts-graph {} failed ({})", work.display(), describe(status));
    }
    Ok(())
}

/// The retrieval modes of kts-query.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Mode {
    Bm25,
    Vector,
    Hybrid,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Bm25 => "bm25",
            Mode::Vector => "vector",
            Mode::Hybrid => "hybrid",
        }
    }

    pub fn needs_embeddings(self) -> bool {
        self != Mode::Bm25
    }
}

/// What one batch run of kts-query returned.
#[derive(Debug, Default)]
pub struct Run {
    /// query_id → document ids, best first (as ranked by kts-query; repeats kept).
    pub rankings: HashMap<String, Vec<String>>,
    /// query_id → each hit's confidence and confidence features, in the same order.
    pub confidences: HashMap<String, Vec<HitConfidence>>,
    pub seconds: f64,
    /// kts.error/1 records and lines that were not hits.
    pub errors: usize,
    /// Hits naming a query_id that was not asked.
    pub unknown_queries: usize,
    /// kts-query ended with status 1 (some queries failed, each reported).
    pub some_failed: bool,
}

/// One hit of a batch run, as far as the evaluation needs it.
#[derive(Deserialize)]
struct BatchHit {
    query_id: Value,
    /// The corpus `_id`, encoded as in [`crate::beir::path_of_id`].
    path: String,
    #[serde(default)]
    rank: Option<usize>,
    #[serde(default)]
    signals: std::collections::BTreeMap<String, kts_record::Signal>,
    #[serde(default)]
    confidence: Option<f64>,
}

/// What kts-query said of a hit's relevance.
#[derive(Clone, Debug, PartialEq)]
pub struct HitConfidence {
    pub confidence: Option<f64>,
    /// The inputs of kts-query's confidence model (see `kts_query::rank::confidence`).
    pub features: Features,
}

fn id_string(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Collects the batch output of kts-query: `kts.hit/1` lines with a `query_id`.
/// Hits are ordered per query by `rank` (the order of the lines when equal or missing).
pub fn read_hits(
    output: impl BufRead,
    asked: &HashMap<String, usize>,
    mut tee: Option<&mut dyn Write>,
    run: &mut Run,
    warn: &dyn Fn(&str),
) -> anyhow::Result<()> {
    let mut ranked: HashMap<String, Vec<(usize, usize, String, HitConfidence)>> = HashMap::new();
    for (n, line) in output.lines().enumerate() {
        let line = line.context("reading kts-query's output")?;
        if let Some(tee) = tee.as_mut() {
            tee.write_all(line.as_bytes())?;
            tee.write_all(b"\n")?;
        }
        if line.trim().is_empty() {
            continue;
        }
        let value: Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(e) => {
                run.errors += 1;
                warn(&format!("kts-query output line {}: not JSON: {e}", n + 1));
                continue;
            }
        };
        match value.get("schema").and_then(Value::as_str) {
            Some(schema_id::HIT) => {}
            Some(schema_id::ERROR) => {
                run.errors += 1;
                let message = value.get("message").and_then(Value::as_str).unwrap_or("");
                let query = value
                    .get("query_id")
                    .and_then(id_string)
                    .or_else(|| value.get("path").and_then(id_string))
                    .unwrap_or_default();
                warn(&format!("kts-query error for query {query}: {message}"));
                continue;
            }
            _ => continue, // other records (summaries, ...) are not results
        }
        let hit: BatchHit = match serde_json::from_value(value) {
            Ok(hit) => hit,
            Err(e) => {
                run.errors += 1;
                warn(&format!(
                    "kts-query output line {}: not a batch hit: {e}",
                    n + 1
                ));
                continue;
            }
        };
        let Some(query) = id_string(&hit.query_id) else {
            run.errors += 1;
            continue;
        };
        if !asked.contains_key(&query) {
            run.unknown_queries += 1;
            continue;
        }
        let rank = hit.rank.unwrap_or(usize::MAX);
        let signals = hit
            .signals
            .iter()
            .map(|(name, s)| (name.as_str(), s.rank.unwrap_or(0), s.score));
        let confidence = HitConfidence {
            confidence: hit.confidence,
            features: kts_query::rank::confidence::features_of(signals, rank),
        };
        ranked.entry(query).or_default().push((
            rank,
            n,
            crate::beir::id_of_path(&hit.path),
            confidence,
        ));
    }
    for (query, mut hits) in ranked {
        hits.sort_by_key(|(rank, line, _, _)| (*rank, *line));
        let (docs, confidences) = hits.into_iter().map(|(_, _, doc, c)| (doc, c)).unzip();
        run.rankings.insert(query.clone(), docs);
        run.confidences.insert(query, confidences);
    }
    Ok(())
}

/// How kts-query is asked.
#[derive(Clone, Debug)]
pub struct QuerySettings {
    pub mode: Mode,
    pub top_k: u32,
    /// Extra arguments, after the others.
    pub extra_args: Vec<String>,
}

/// Runs `kts-query WORK --batch --mode M --top-k K EXTRA_ARGS` over `queries` (id, text).
/// With `tee`, its raw output is also written to that file.
pub fn run_queries(
    tools: &Tools,
    work: &Path,
    settings: &QuerySettings,
    queries: &[(String, String)],
    tee: Option<&Path>,
    warn: &dyn Fn(&str),
) -> anyhow::Result<Run> {
    let program = tools.path("kts-query")?;
    let mode = settings.mode;
    let started = Instant::now();
    let mut child = Command::new(&program)
        .arg(work)
        .args(["--batch", "--mode", mode.name(), "--top-k"])
        .arg(settings.top_k.to_string())
        .args(&settings.extra_args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("cannot start {}", program.display()))?;
    let stdin = child.stdin.take().expect("piped stdin");
    let lines: Vec<Vec<u8>> = queries
        .iter()
        .map(|(id, text)| {
            let mut line = serde_json::to_vec(&serde_json::json!({"id": id, "text": text}))
                .expect("a query serialises");
            line.push(b'\n');
            line
        })
        .collect();
    let feeder = std::thread::spawn(move || {
        let mut out = BufWriter::new(stdin);
        for line in lines {
            if out.write_all(&line).is_err() {
                return;
            }
        }
        let _ = out.flush();
    });
    let asked: HashMap<String, usize> = queries
        .iter()
        .enumerate()
        .map(|(i, (id, _))| (id.clone(), i))
        .collect();
    let mut tee_file = match tee {
        Some(path) => {
            Some(BufWriter::new(File::create(path).with_context(|| {
                format!("cannot create {}", path.display())
            })?))
        }
        None => None,
    };
    let mut run = Run::default();
    let stdout = BufReader::with_capacity(1 << 16, child.stdout.take().expect("piped stdout"));
    let read = read_hits(
        stdout,
        &asked,
        tee_file.as_mut().map(|f| f as &mut dyn Write),
        &mut run,
        warn,
    );
    let status = child.wait().context("waiting for kts-query")?;
    let _ = feeder.join();
    run.seconds = started.elapsed().as_secs_f64();
    if let Some(mut f) = tee_file {
        f.flush()?;
    }
    read?;
    match status.code() {
        Some(0) => {}
        Some(1) => run.some_failed = true,
        _ => bail!(
            "kts-query --mode {} failed ({}; see the messages above)",
            mode.name(),
            describe(status)
        ),
    }
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(embedded: bool) -> IndexKey {
        IndexKey {
            corpus_sha256: "c".into(),
            chunk_args: vec![],
            embed_args: vec![],
            embedded,
            tools: [("kts-chunk", "1"), ("kts-embed", "2"), ("kts-index", "3")]
                .into_iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
        }
    }

    fn marker(key: IndexKey) -> Marker {
        Marker {
            kts_eval: "0".into(),
            key,
            documents: 1,
            index_seconds: 1.0,
        }
    }

    #[test]
    fn an_index_is_reused_only_for_the_same_corpus_tools_and_embeddings() {
        assert!(marker(key(true)).serves(&key(true)));
        assert!(marker(key(true)).serves(&key(false)));
        assert!(!marker(key(false)).serves(&key(true)));
        let mut other = key(true);
        other.corpus_sha256 = "d".into();
        assert!(!marker(key(true)).serves(&other));
        let mut other = key(true);
        other.tools.insert("kts-index".into(), "9".into());
        assert!(!marker(key(true)).serves(&other));
        assert!(marker(key(true)).serves_any_build(&other));
        assert!(!marker(key(false)).serves_any_build(&key(true)));
        let mut other = key(false);
        other.tools.insert("kts-embed".into(), "9".into());
        assert!(marker(key(false)).serves(&other), "bm25 needs no kts-embed");
        let mut other = key(true);
        other.chunk_args = vec!["--size".into(), "500".into()];
        assert!(!marker(key(true)).serves(&other));
        let mut other = key(true);
        other.embed_args = vec!["--model=other".into()];
        assert!(!marker(key(true)).serves(&other), "another model");
        assert!(!marker(key(true)).serves_any_build(&other), "another model");
    }

    #[test]
    fn marker_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        marker(key(true)).write(dir.path()).unwrap();
        let back = Marker::read(dir.path()).unwrap();
        assert_eq!(back.key, key(true));
    }

    #[test]
    fn work_folder_with_other_files_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("precious.txt"), "x").unwrap();
        assert!(prepare_work(dir.path()).is_err());
        assert!(dir.path().join("precious.txt").exists());
        // A previous index is cleared; a new folder is created.
        let ours = dir.path().join("ours");
        std::fs::create_dir_all(ours.join(".kts")).unwrap();
        std::fs::write(ours.join(".kts/kts.db"), "x").unwrap();
        prepare_work(&ours).unwrap();
        assert!(!ours.join(".kts").exists());
        prepare_work(&dir.path().join("new/sub")).unwrap();
        assert!(dir.path().join("new/sub").is_dir());
    }

    #[test]
    fn hits_are_grouped_by_query_and_ordered_by_rank() {
        let out = [
            r#"{"schema":"kts.hit/1","query_id":"q1","rank":2,"path":"b","score":0.5}"#,
            r#"{"schema":"kts.hit/1","query_id":"q1","rank":1,"path":"a","score":0.9}"#,
            r#"{"schema":"kts.hit/1","query_id":7,"rank":1,"path":"c","score":0.9}"#,
            r#"{"schema":"kts.error/1","query_id":"q2","stage":"kts-query","path":"q2","code":"x","message":"boom"}"#,
            r#"{"schema":"kts.hit/1","query_id":"zz","rank":1,"path":"c","score":0.9}"#,
            r#"{"schema":"kts.hit/1","rank":1,"path":"c"}"#,
            "not json",
            "",
        ]
        .join("\n");
        let asked: HashMap<String, usize> = [("q1", 0), ("7", 1), ("q2", 2)]
            .into_iter()
            .map(|(a, b)| (a.to_string(), b))
            .collect();
        let mut run = Run::default();
        let warnings = std::cell::RefCell::new(Vec::new());
        let mut tee = Vec::new();
        read_hits(
            out.as_bytes(),
            &asked,
            Some(&mut tee),
            &mut run,
            &|w: &str| warnings.borrow_mut().push(w.to_string()),
        )
        .unwrap();
        assert_eq!(run.rankings["q1"], ["a", "b"]);
        assert_eq!(run.rankings["7"], ["c"]);
        assert!(!run.rankings.contains_key("q2"));
        assert_eq!(run.unknown_queries, 1);
        assert_eq!(run.errors, 3);
        assert_eq!(warnings.borrow().len(), 3);
        assert_eq!(String::from_utf8(tee).unwrap(), out);
    }

    #[test]
    fn missing_tools_are_named_with_the_build_command() {
        let dir = tempfile::tempdir().unwrap();
        let err = Tools::in_dir(dir.path())
            .path("kts-query")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("kts-query") && err.contains("cargo build"),
            "{err}"
        );
    }
}
