//! Helpers shared by the end-to-end tests and by the suites that measure
//! against the shared data (`<workspace>/../shared`, or `$KTS_SHARED_DIR`).
//!
//! - where things are: [`workspace_root`], [`shared_dir`], [`fixtures_dir`], [`bin`], [`target_dir`];
//! - running a tool: [`run_tool`] (stdin bytes in; stdout, stderr, status out; a time limit);
//!   running a shell pipeline of tools: [`shell`], [`succeeded`];
//! - crash tests: [`kill_at_random_moments`];
//! - the fixtures: [`manifest`], [`file_record`], [`convert_fixture`];
//! - the word-level quality scorer: [`score`] (and [`quality`] for the ground-truth sets);
//! - a cross-encoder written as ONNX for the reranker tests: [`tiny_reranker`].

pub mod quality;
mod score;
pub mod tiny_reranker;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

pub use score::{Score, normalise, score, tokens, visible_text_contains};

/// The Cargo workspace root (the folder holding the top-level `Cargo.toml`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("kts-tests lives one level below the workspace root")
        .to_path_buf()
}

/// Runs a shell pipeline with `set -o pipefail`, the kts binaries of this
/// build first on PATH and nothing else from the environment.
pub fn shell(script: &str) -> Output {
    let path = format!("{}:/usr/bin:/bin", profile_dir().display());
    Command::new("bash")
        .args(["-o", "pipefail", "-c", script])
        .env_clear()
        .env("PATH", path)
        .output()
        .expect("bash runs")
}

/// The output of a command that must have succeeded (else a panic with its stderr).
pub fn succeeded(output: Output) -> Output {
    assert!(
        output.status.success(),
        "exit {:?}: {}",
        output.status.code(),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The shared data folder: `$KTS_SHARED_DIR`, else `<workspace root>/../shared`.
///
/// Panics with the path it looked for when the folder is missing: the suites
/// that use it must fail loudly, never skip.
pub fn shared_dir() -> PathBuf {
    let (dir, how) = match std::env::var_os("KTS_SHARED_DIR") {
        Some(dir) if !dir.is_empty() => (PathBuf::from(dir), "from $KTS_SHARED_DIR"),
        _ => (
            workspace_root().join("..").join("shared"),
            "<workspace root>/../shared; set KTS_SHARED_DIR to use another folder",
        ),
    };
    if !dir.is_dir() {
        panic!(
            "shared data folder {} is missing ({how}): the suites behind the `shared-data` \
             feature measure against it and cannot run without it",
            dir.display()
        );
    }
    dir.canonicalize().unwrap_or(dir)
}

/// A path inside the shared folder that must exist (panics naming it otherwise).
pub fn shared_path(relative: &str) -> PathBuf {
    let path = shared_dir().join(relative);
    if !path.exists() {
        panic!(
            "{} is missing from the shared data folder: these suites need it",
            path.display()
        );
    }
    path
}

/// `<shared>/fixtures`, panicking loudly when missing.
pub fn fixtures_dir() -> PathBuf {
    shared_path("fixtures")
}

/// The `target/<profile>` folder this executable was built into.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the path of the running executable");
    let mut dir = exe
        .parent()
        .expect("the executable is in a folder")
        .to_path_buf();
    // Test binaries live in target/<profile>/deps.
    if dir.file_name().is_some_and(|n| n == "deps") {
        dir.pop();
    }
    dir
}

/// The Cargo target folder (parent of the profile folder).
pub fn target_dir() -> PathBuf {
    let profile = profile_dir();
    profile.parent().map(Path::to_path_buf).unwrap_or(profile)
}

/// A workspace binary, `target/<profile>/<name>`, built by the same profile as the caller.
pub fn bin(name: &str) -> PathBuf {
    let path = profile_dir().join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    if !path.is_file() {
        panic!(
            "binary {name} not built: run `cargo build --workspace` (looked for {})",
            path.display()
        );
    }
    path
}

/// What a tool run produced.
#[derive(Debug)]
pub struct ToolOutput {
    /// `None` when the tool was killed for running past its time limit.
    pub status: Option<ExitStatus>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub elapsed: Duration,
}

impl ToolOutput {
    pub fn timed_out(&self) -> bool {
        self.status.is_none()
    }
    /// The exit code; `None` when killed by a signal or for the time limit.
    pub fn code(&self) -> Option<i32> {
        self.status.and_then(|s| s.code())
    }
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
    /// How the run ended, for messages: `exit 0`, `signal 9`, `timed out after 60 s`.
    pub fn describe_end(&self) -> String {
        match self.status {
            None => format!("timed out after {:.0} s", self.elapsed.as_secs_f64()),
            Some(s) => match s.code() {
                Some(code) => format!("exit {code}"),
                None => {
                    #[cfg(unix)]
                    {
                        use std::os::unix::process::ExitStatusExt;
                        format!("killed by signal {}", s.signal().unwrap_or(0))
                    }
                    #[cfg(not(unix))]
                    {
                        "killed".to_string()
                    }
                }
            },
        }
    }
}

/// Runs a JSON Lines tool on `stdin` and parses every line it writes.
/// Panics if the tool runs past five minutes or writes a line that is not JSON.
pub fn run_jsonl(
    program: &Path,
    args: &[&str],
    stdin: &[u8],
) -> (std::process::Output, Vec<serde_json::Value>) {
    let run = run_tool(program, args, stdin, Duration::from_secs(300));
    let status = run
        .status
        .unwrap_or_else(|| panic!("{} ran past its time limit", program.display()));
    let records = String::from_utf8_lossy(&run.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect();
    (
        std::process::Output {
            status,
            stdout: run.stdout,
            stderr: run.stderr,
        },
        records,
    )
}

/// Starts `command` with `input` fed to its stdin from a thread, for a test
/// that kills it mid-way (its stdout is piped unless the command set it).
pub fn spawn_fed(command: &mut Command, input: &str) -> std::process::Child {
    let mut child = command
        .stdin(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
    let mut stdin = child.stdin.take().expect("piped stdin");
    let input = input.to_string();
    std::thread::spawn(move || {
        // A tool killed mid-way closes its stdin: that is the point.
        let _ = stdin.write_all(input.as_bytes());
    });
    child
}

/// Runs `program args` with `stdin` as its input, the environment cleared
/// except PATH, HOME and LANG, and kills it after `limit`.
pub fn run_tool(program: &Path, args: &[&str], stdin: &[u8], limit: Duration) -> ToolOutput {
    run_tool_in(program, args, stdin, limit, None)
}

/// [`run_tool`] in a given working folder.
pub fn run_tool_in(
    program: &Path,
    args: &[&str],
    stdin: &[u8],
    limit: Duration,
    cwd: Option<&Path>,
) -> ToolOutput {
    let mut command = Command::new(program);
    command
        .args(args)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for key in ["PATH", "HOME", "LANG"] {
        if let Some(value) = std::env::var_os(key) {
            command.env(key, value);
        }
    }
    if let Some(dir) = cwd {
        command.current_dir(dir);
    }
    let started = Instant::now();
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", program.display()));
    let mut input = child.stdin.take().expect("piped stdin");
    let mut out = child.stdout.take().expect("piped stdout");
    let mut err = child.stderr.take().expect("piped stderr");
    let stdin = stdin.to_vec();
    // Feed and drain on threads so that neither side can block the other.
    let writer = std::thread::spawn(move || {
        // A tool that exits early closes its stdin: that is not our failure.
        let _ = input.write_all(&stdin);
    });
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = out.read_to_end(&mut buf);
        buf
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = err.read_to_end(&mut buf);
        buf
    });
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() >= limit => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => panic!("waiting for {}: {e}", program.display()),
        }
    };
    let elapsed = started.elapsed();
    let _ = writer.join();
    ToolOutput {
        status,
        stdout: out_reader.join().unwrap_or_default(),
        stderr: err_reader.join().unwrap_or_default(),
        elapsed,
    }
}

/// One row of `fixtures/manifest.tsv`.
#[derive(Clone, Debug)]
pub struct ManifestEntry {
    /// Path relative to the fixtures folder.
    pub file: String,
    /// `source`, `groundtruth`, `doc`.
    pub role: String,
    pub format: String,
    pub bytes: u64,
    pub sha256: String,
    pub ground_truth: String,
    /// Empty, `bad`, `edge` or `encrypted`.
    pub bad_input: String,
    pub note: String,
}

fn unquote(field: &str) -> String {
    let field = field.trim();
    match field.strip_prefix('"').and_then(|f| f.strip_suffix('"')) {
        Some(inner) => inner.replace("\"\"", "\""),
        None => field.to_string(),
    }
}

/// All rows of `fixtures/manifest.tsv` (panics loudly if it is missing or malformed).
pub fn manifest() -> Vec<ManifestEntry> {
    let path = fixtures_dir().join("manifest.tsv");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .unwrap_or_else(|| panic!("{} is empty", path.display()))
        .split('\t')
        .map(unquote)
        .collect();
    let column = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("{} has no column {name:?}", path.display()))
    };
    let [
        file,
        role,
        format,
        bytes,
        sha256,
        ground_truth,
        bad_input,
        note,
    ] = [
        "file",
        "role",
        "format",
        "bytes",
        "sha256",
        "ground_truth",
        "bad_input",
        "note",
    ]
    .map(column);
    let mut entries = Vec::new();
    for (n, line) in lines.enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<String> = line.split('\t').map(unquote).collect();
        let get = |i: usize| fields.get(i).cloned().unwrap_or_default();
        entries.push(ManifestEntry {
            file: get(file),
            role: get(role),
            format: get(format),
            bytes: get(bytes)
                .parse()
                .unwrap_or_else(|_| panic!("{} line {}: bad byte count", path.display(), n + 2)),
            sha256: get(sha256),
            ground_truth: get(ground_truth),
            bad_input: get(bad_input),
            note: get(note),
        });
    }
    assert!(
        !entries.is_empty(),
        "{} lists no files: the fixtures are missing",
        path.display()
    );
    entries
}

/// The manifest's source files (the documents to convert).
pub fn sources() -> Vec<ManifestEntry> {
    manifest()
        .into_iter()
        .filter(|e| e.role == "source")
        .collect()
}

/// The `kts.file/1` record kts-crawl would write for a fixture, with its format
/// taken from the extension ("txt" when kts does not know it: kts-convert
/// detects the format from the content anyway).
pub fn file_record(fixtures: &Path, entry: &ManifestEntry) -> serde_json::Value {
    let format = Path::new(&entry.file)
        .extension()
        .and_then(|e| e.to_str())
        .and_then(kts_record::Format::from_extension)
        .unwrap_or(kts_record::Format::Txt);
    serde_json::json!({
        "schema": kts_record::schema_id::FILE,
        "path": entry.file,
        "root": fixtures.to_string_lossy(),
        "size": entry.bytes,
        "mtime": "2024-01-01T00:00:00.000000000Z",
        "sha256": entry.sha256,
        "format": format,
        "status": "new",
    })
}

/// The `kts.file/1` record kts-crawl would write for a new file at `path`
/// under `root` (its size and sha256 read from the file), of `format`.
pub fn new_file_record(root: &Path, path: &str, format: &str) -> serde_json::Value {
    use sha2::{Digest, Sha256};
    let bytes = std::fs::read(root.join(path))
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", root.join(path).display()));
    let sha256: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    serde_json::json!({
        "schema": kts_record::schema_id::FILE, "path": path, "root": root.to_string_lossy(),
        "size": bytes.len(), "mtime": "2026-01-01T00:00:00.000000000Z", "sha256": sha256,
        "format": format, "status": "new",
    })
}

/// The record of `records` for `path`; fails the test naming them all when
/// there is none.
pub fn record_for<'a>(records: &'a [serde_json::Value], path: &str) -> &'a serde_json::Value {
    records
        .iter()
        .find(|r| r["path"] == path)
        .unwrap_or_else(|| panic!("no record for {path}: {records:#?}"))
}

/// The time limit for converting one fixture.
pub const CONVERT_LIMIT: Duration = Duration::from_secs(60);

/// Runs `kts-convert --no-store` on one fixture, alone.
pub fn convert_fixture(fixtures: &Path, entry: &ManifestEntry) -> ToolOutput {
    let mut line = serde_json::to_vec(&file_record(fixtures, entry)).expect("record serialises");
    line.push(b'\n');
    run_tool(
        &bin("kts-convert"),
        &["--no-store", "--threads", "1"],
        &line,
        CONVERT_LIMIT,
    )
}

/// Runs `work` over `items` on a few threads (the machines are small and
/// shared), returning the results in input order.
pub fn parallel_map<T: Sync, R: Send>(items: &[T], work: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::env::var("KTS_TEST_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get().min(4)))
        .max(1);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(HashMap::new());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let result = work(item);
                    results
                        .lock()
                        .expect("no panic holds the lock")
                        .insert(i, result);
                }
            });
        }
    });
    let mut results = results.into_inner().expect("no panic holds the lock");
    (0..items.len())
        .map(|i| results.remove(&i).expect("every item was processed"))
        .collect()
}

/// How a crash test kills its runs: see [`kill_at_random_moments`].
pub struct Kills {
    /// Seeds the moments, so that a failure can be replayed.
    pub seed: u64,
    /// How long one whole run took here, timed by the test.
    pub window: Duration,
    /// At least this many runs...
    pub rounds: usize,
    /// ...of which at least this many were cut off before they ended.
    pub cut_off: usize,
}

/// Starts runs with `start(round)` and SIGKILLs each at a random moment within
/// the window, then calls `check(round)` on what it left. Runs go on until
/// `kills.rounds` ran and `kills.cut_off` of them were killed before they
/// ended, for at most four times `kills.rounds`; panics when too few were.
/// Returns how many runs there were.
///
/// A run that ends before its kill narrows the window: later runs can be
/// faster than the one timed (warm caches, a machine less busy), and a test
/// that rarely kills mid-way tests little.
pub fn kill_at_random_moments(
    kills: Kills,
    mut start: impl FnMut(usize) -> std::process::Child,
    mut check: impl FnMut(usize),
) -> usize {
    let mut rng = fastrand::Rng::with_seed(kills.seed);
    let mut window = kills.window.as_millis().max(20) as u64;
    let (mut round, mut cut_off) = (0, 0);
    while round < kills.rounds || (cut_off < kills.cut_off && round < 4 * kills.rounds) {
        let mut child = start(round);
        std::thread::sleep(Duration::from_millis(rng.u64(0..window)));
        if child.try_wait().unwrap().is_none() {
            cut_off += 1;
        } else {
            window = (window * 3 / 4).max(4);
        }
        child.kill().ok(); // SIGKILL
        child.wait().unwrap();
        check(round);
        round += 1;
    }
    assert!(
        cut_off >= kills.cut_off,
        "only {cut_off} of {round} runs were killed before they ended"
    );
    eprintln!("{cut_off} of {round} runs killed before they ended");
    round
}
