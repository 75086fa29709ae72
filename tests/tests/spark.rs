//! kts-spark in Spark's local mode (`local[2]`), against the one-machine
//! pipelines on copies of the same data: whole scopes against
//! pipelines/reindex (with a corrupt document and a locked scope), and one
//! scope split in two partitions against the plain pipeline; the binaries
//! shipped as an archive, in local mode and on a standalone cluster on
//! loopback (a master and two workers, one killed mid-job), against local
//! mode; an archive with a damaged model or none shipped, the errors that
//! stop a run before Spark starts, what a root run leaves out and a root
//! run with nothing to do (no Spark at all). The indexes must hold the same
//! documents and chunk ids, and vectors within 1e-6. Needs PySpark (`make
//! spark`) and Java; fails, never skips, without them.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use kts_tests::{profile_dir, shared_path, shell, succeeded, workspace_root};

fn copy_files(from: &Path, count: usize, to: &Path) {
    let mut files: Vec<PathBuf> = std::fs::read_dir(from)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    std::fs::create_dir_all(to).unwrap();
    for file in files.into_iter().take(count) {
        std::fs::copy(&file, to.join(file.file_name().unwrap())).unwrap();
    }
}

/// A knowledge root of four small scopes of real documents; `broken` also
/// holds a corrupt PDF.
fn knowledge_root(root: &Path) {
    let tldr = shared_path("corpora/tldr-pages-en/pages");
    copy_files(
        &shared_path("corpora/rust-rfcs/text"),
        4,
        &root.join("rfcs"),
    );
    copy_files(&tldr.join("common"), 20, &root.join("common"));
    copy_files(&tldr.join("linux"), 12, &root.join("broken"));
    std::fs::write(
        root.join("broken/scan.pdf"),
        b"%PDF-1.7\n1 0 obj\n<< /Broken",
    )
    .unwrap();
    copy_files(&tldr.join("osx"), 5, &root.join("locked"));
}

/// The folder of the PySpark virtual environment's programs (python,
/// spark-submit, spark-class).
fn venv_bin() -> PathBuf {
    let bin = workspace_root().join("pipelines/spark/.venv/bin");
    assert!(
        bin.join("python").is_file() && bin.join("spark-class").is_file(),
        "PySpark is needed for this suite: run make spark (looked in {})",
        bin.display()
    );
    bin
}

/// kts-spark in local mode with the binaries of this build, `python_options`
/// given to the environment's Python.
fn kts_spark_command(python_options: &[&str], args: &[&str]) -> Command {
    let mut command = Command::new(venv_bin().join("python"));
    command
        .args(python_options)
        .arg(workspace_root().join("pipelines/spark/kts-spark"))
        .args(["--master", "local[2]", "--bin"])
        .arg(profile_dir())
        .args(args);
    command
}

fn kts_spark(args: &[&str]) -> Output {
    kts_spark_command(&[], args)
        .output()
        .expect("kts-spark starts")
}

/// What an index holds: documents (path → doc_id, title, doc_type) and
/// chunks (chunk_id → doc_id, text, vector).
type Documents = BTreeMap<String, (String, String, String)>;
type Chunks = BTreeMap<String, (String, String, Vec<f32>)>;

fn index_contents(scope: &Path) -> (Documents, Chunks) {
    let store = kts_store::Store::open_read(scope).unwrap();
    let conn = store.connection();
    let mut documents = Documents::new();
    let mut rows = conn
        .prepare("SELECT path, doc_id, title, doc_type FROM documents")
        .unwrap();
    for row in rows
        .query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?, r.get(3)?))))
        .unwrap()
    {
        let (path, document) = row.unwrap();
        documents.insert(path, document);
    }
    let mut chunks = Chunks::new();
    let mut rows = conn
        .prepare(
            "SELECT c.chunk_id, c.doc_id, c.text, v.embedding FROM chunks c
             JOIN chunks_vec v ON v.rowid = c.id",
        )
        .unwrap();
    for row in rows
        .query_map([], |r| {
            let bytes: Vec<u8> = r.get(3)?;
            let vector = bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            Ok((r.get(0)?, (r.get(1)?, r.get(2)?, vector)))
        })
        .unwrap()
    {
        let (id, chunk) = row.unwrap();
        chunks.insert(id, chunk);
    }
    (documents, chunks)
}

fn assert_same_index(ours: &Path, reference: &Path) {
    let (our_documents, our_chunks) = index_contents(ours);
    let (documents, chunks) = index_contents(reference);
    assert!(!documents.is_empty(), "{} is empty", reference.display());
    assert_eq!(our_documents, documents, "{}", ours.display());
    assert_eq!(
        our_chunks.keys().collect::<Vec<_>>(),
        chunks.keys().collect::<Vec<_>>(),
        "{}",
        ours.display()
    );
    for (id, (doc_id, text, vector)) in &chunks {
        let (our_doc_id, our_text, our_vector) = &our_chunks[id];
        assert_eq!((our_doc_id, our_text), (doc_id, text));
        let furthest = vector
            .iter()
            .zip(our_vector)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(furthest <= 1e-6, "chunk {id}: vectors differ by {furthest}");
    }
}

/// Holds a lock file (a scope's writer lock, as a running kts-index would;
/// a root's, as a running reindex would) until dropped.
struct HeldLock(std::process::Child);

impl HeldLock {
    fn on(file: &Path) -> HeldLock {
        use std::os::unix::process::CommandExt;

        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        // -o: the lock stays with flock itself, so killing it releases the
        // lock; a process group of its own, so that its sleep goes with it.
        let child = Command::new("flock")
            .arg("-o")
            .arg(file)
            .args(["sleep", "600"])
            .process_group(0)
            .spawn()
            .expect("flock (util-linux) runs");
        std::thread::sleep(std::time::Duration::from_millis(300));
        HeldLock(child)
    }
}

impl Drop for HeldLock {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.0.id())])
            .status();
        let _ = self.0.wait();
    }
}

#[test]
fn whole_scopes_on_spark_index_as_pipelines_reindex_does() {
    let work = tempfile::tempdir().unwrap();
    let (ours, reference) = (work.path().join("spark"), work.path().join("reindex"));
    knowledge_root(&ours);
    knowledge_root(&reference);
    let _locks = [
        HeldLock::on(&ours.join("locked/.kts/write.lock")),
        HeldLock::on(&reference.join("locked/.kts/write.lock")),
    ];

    let reindexed = shell(&format!(
        "'{}' '{}' -j 2 --bin '{}'",
        workspace_root().join("pipelines/reindex").display(),
        reference.display(),
        profile_dir().display()
    ));
    // A failed scope, and a document not indexed: exit 1, as kts-spark's.
    assert_eq!(reindexed.status.code(), Some(1), "{reindexed:?}");
    // Two tasks of two scopes each: each task's scopes share one kts-embed.
    let output = kts_spark(&[ours.to_str().unwrap(), "--tasks", "2"]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("4 scopes of ") && stderr.contains(" in 2 tasks"),
        "{stderr}"
    );
    assert!(
        stdout.contains("4 scopes") && stdout.contains("3 reindexed, 0 unchanged, 1 failed"),
        "{stdout}"
    );
    for scope in ["rfcs", "common", "broken", "locked"] {
        let log = std::fs::read_to_string(ours.join(scope).join(".kts/cache/reindex.log")).unwrap();
        assert!(
            log.contains("# one kts-embed for 2 scopes"),
            "{scope}: {log}"
        );
    }
    assert!(
        stdout.contains("failed: locked: kts-index: error: another writer is updating this scope"),
        "{stdout}"
    );
    assert!(
        stdout.contains("not indexed: broken: 1 of its documents"),
        "{stdout}"
    );
    for scope in ["rfcs", "common", "broken"] {
        assert_same_index(&ours.join(scope), &reference.join(scope));
    }
    assert!(ours.join(".kts-catalog.db").is_file());

    // A line per scope that did something, ahead of the summary, which
    // counts the root's documents and chunks.
    let summary = stdout.find("kts-spark ").expect("a summary line");
    for (result, scope) in [
        ("reindexed", "rfcs"),
        ("reindexed", "common"),
        ("reindexed", "broken"),
        ("failed", "locked"),
    ] {
        let line = stdout
            .lines()
            .position(|l| l.starts_with(result) && l.contains(&format!(" s  {scope}  ")))
            .unwrap_or_else(|| panic!("no {result} line for {scope}: {stdout}"));
        assert!(
            stdout
                .lines()
                .take(line + 1)
                .map(|l| l.len() + 1)
                .sum::<usize>()
                <= summary
        );
    }
    let (documents, chunks) = ["rfcs", "common", "broken"]
        .iter()
        .map(|scope| index_contents(&ours.join(scope)))
        .fold((0, 0), |(d, c), (documents, chunks)| {
            (d + documents.len(), c + chunks.len())
        });
    assert!(
        stdout.contains(&format!("; {documents} documents, {chunks} chunks")),
        "{stdout}"
    );
    let progress = || -> Vec<_> {
        std::fs::read_dir(ours.join(".kts-reindex"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|name| name.to_string_lossy().starts_with("spark-"))
            .collect()
    };
    assert!(
        progress().is_empty(),
        "the run's progress files are left: {:?}",
        progress()
    );

    // While another run holds the root, a run stops at once.
    let held = HeldLock::on(&ours.join(".kts-reindex/lock"));
    let output = kts_spark(&[ours.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("kts-spark: another reindex of "),
        "{stderr}"
    );
    drop(held);

    // Unchanged: nothing runs again, but the document that could not be
    // indexed still counts. A killed run's progress files are removed.
    drop(_locks);
    std::fs::create_dir_all(ours.join(".kts-reindex/spark-20000101T000000-1/task-0-0")).unwrap();
    let again = kts_spark(&[ours.to_str().unwrap(), "--no-graph"]);
    let stdout = String::from_utf8_lossy(&again.stdout);
    assert_eq!(again.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("0 failed") && stdout.contains("not indexed: broken: 1 of its documents"),
        "{stdout}"
    );
    assert!(progress().is_empty(), "left: {:?}", progress());
}

#[test]
fn one_scope_split_on_spark_indexes_as_the_plain_pipeline_does() {
    use std::os::unix::ffi::OsStrExt;

    let work = tempfile::tempdir().unwrap();
    let (ours, reference) = (work.path().join("split"), work.path().join("plain"));
    let outside = work.path().join("outside.md");
    std::fs::write(&outside, "# Outside\n\nNot in the scope.\n").unwrap();
    for scope in [&ours, &reference] {
        copy_files(&shared_path("corpora/rust-rfcs/text"), 8, scope);
        std::fs::write(scope.join("empty.md"), "").unwrap();
        // Not indexed: a file whose name is not UTF-8 (an error), and a link
        // leading outside (skipped, with a warning).
        let latin1 = std::ffi::OsStr::from_bytes(b"r\xe9sum\xe9.txt");
        std::fs::write(scope.join(latin1), "Curriculum.\n").unwrap();
        std::os::unix::fs::symlink(&outside, scope.join("outside.txt")).unwrap();
    }
    succeeded(shell(&format!(
        "kts-crawl '{0}' | kts-convert | kts-chunk | kts-embed | kts-index '{0}'; \
         (($? <= 1)) && kts-graph '{0}'",
        reference.display()
    )));
    let output = kts_spark(&[ours.to_str().unwrap(), "--split", "2"]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    // The empty file is reported and counted: exit 1, and the rest indexed.
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stderr.contains("2 partitions"), "{stderr}");
    assert_same_index(&ours, &reference);
    // The files kts-crawl did not take are named, and the one skipped counted.
    assert!(
        stderr.contains(
            "kts-crawl: error (at r\u{fffd}sum\u{fffd}.txt): io: file name is not valid UTF-8"
        ) && stderr
            .contains("kts-crawl: warning: skipped outside.txt: symbolic link leads outside"),
        "{stderr}"
    );
    assert!(
        stdout.contains("; 1 files skipped by kts-crawl (its warnings above)"),
        "{stdout}"
    );
    // The chunk records went under the scope's stage folder, and are gone.
    let temporary = || -> Vec<_> {
        std::fs::read_dir(ours.join(".kts/cache"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|name| name.to_string_lossy().starts_with("spark-"))
            .collect()
    };
    assert!(temporary().is_empty(), "left: {:?}", temporary());

    // Without --split, a scope is refused: it is not a knowledge root.
    let output = kts_spark(&[ours.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(" is a scope (it has an index"), "{stderr}");

    // A file changed, split keyword-only: the embedded index is rebuilt
    // without vectors (not left with some chunks that have one), in at most
    // one partition per file; the empty file still counts.
    let changed = std::fs::read_dir(&ours)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "md") && !p.ends_with("empty.md"))
        .unwrap();
    std::fs::File::options()
        .append(true)
        .open(&changed)
        .unwrap()
        .write_all(b"\n\nThe tapir addendum.\n")
        .unwrap();
    // A killed run's chunk records are removed by the next run.
    let killed = ours.join(".kts/cache/spark-20000101T000000-1/chunks");
    std::fs::create_dir_all(&killed).unwrap();
    std::fs::write(killed.join("part-00000"), "{}\n").unwrap();
    let output = kts_spark(&[ours.to_str().unwrap(), "--split", "20", "--no-embed"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("is indexed with embeddings: rebuilt without them")
            && stderr.contains("--split 20: 9 partitions, one per file"),
        "{stderr}"
    );
    let store = kts_store::Store::open_read(&ours).unwrap();
    let count = |sql: &str| -> i64 { store.connection().query_row(sql, [], |r| r.get(0)).unwrap() };
    assert_eq!(count("SELECT count(*) FROM meta WHERE key = 'model_id'"), 0);
    assert_eq!(
        count("SELECT count(*) FROM sqlite_master WHERE name = 'chunks_vec'"),
        0
    );
    assert_eq!(
        count("SELECT count(*) FROM documents") as usize,
        index_contents(&reference).0.len()
    );
    assert_eq!(
        count("SELECT count(*) FROM chunks WHERE text LIKE '%tapir addendum%'"),
        1
    );
    assert!(temporary().is_empty(), "left: {:?}", temporary());
}

/// A process started as the leader of a session of its own (`setsid`), with
/// everything it starts in turn: a Spark daemon, its executors, their Python
/// workers and the stages they run. Dropping it kills them all.
struct Session {
    leader: Child,
    name: String,
    /// Killed already: its id may since name someone else's session.
    gone: bool,
}

impl Session {
    /// Starts `command` in a new session, its output appended to `log`.
    fn start(name: &str, program: &Path, args: &[&str], env: &[(&str, &Path)], log: &Path) -> Self {
        let log = std::fs::File::create(log).unwrap();
        let mut command = Command::new("setsid");
        command
            .arg(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log);
        for (key, value) in env {
            command.env(key, value);
        }
        let leader = command.spawn().expect("setsid (util-linux) runs");
        Session {
            leader,
            name: name.to_string(),
            gone: false,
        }
    }

    fn id(&self) -> String {
        self.leader.id().to_string()
    }

    /// Whether a process named `name` runs in this session.
    fn runs(&self, name: &str) -> bool {
        Command::new("pgrep")
            .args(["-s", &self.id(), "-x", name])
            .stdout(Stdio::null())
            .status()
            .expect("pgrep (procps) runs")
            .success()
    }

    /// SIGKILL to every process of the session, as when a machine goes down;
    /// returns once they are all gone.
    fn kill(&mut self) {
        if self.gone {
            return;
        }
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let _ = Command::new("pkill")
                .args(["-KILL", "-s", &self.id()])
                .status();
            let _ = self.leader.try_wait();
            let left = Command::new("pgrep")
                .args(["-s", &self.id()])
                .output()
                .expect("pgrep (procps) runs");
            if left.stdout.is_empty() {
                let _ = self.leader.wait();
                self.gone = true;
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the processes of {} outlive SIGKILL: {}",
                self.name,
                String::from_utf8_lossy(&left.stdout)
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A port free on the loopback interface right now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until `done` holds, or panics after `seconds`, showing `log`.
fn wait_for(what: &str, seconds: u64, log: &Path, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    while !done() {
        assert!(
            Instant::now() < deadline,
            "gave up waiting for {what} after {seconds} s; {}:\n{}",
            log.display(),
            std::fs::read_to_string(log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A Spark standalone cluster on loopback: a master and two workers of one
/// core each, started from the PySpark of the virtual environment. Its files
/// (logs, work and temporary folders) are under `dir`. The sessions are
/// dropped, so every process killed, before the folder is removed.
struct Cluster {
    workers: Vec<Session>,
    /// Held for its drop, which stops the master.
    _master: Session,
    url: String,
    dir: PathBuf,
}

impl Cluster {
    /// The environment of every Spark process: loopback only, this
    /// environment's Python, and every file under the cluster's folder.
    fn environment(dir: &Path) -> Vec<(&'static str, PathBuf)> {
        let java_tmpdir = PathBuf::from(format!("-Djava.io.tmpdir={}", dir.join("tmp").display()));
        vec![
            ("SPARK_LOCAL_IP", PathBuf::from("127.0.0.1")),
            ("SPARK_LOCAL_DIRS", dir.join("local")),
            ("SPARK_DAEMON_MEMORY", PathBuf::from("512m")),
            ("PYSPARK_PYTHON", venv_bin().join("python")),
            ("TMPDIR", dir.join("tmp")),
            // The JVMs' own temporary files: the daemons', the driver's.
            ("SPARK_DAEMON_JAVA_OPTS", java_tmpdir.clone()),
            ("SPARK_SUBMIT_OPTS", java_tmpdir),
        ]
    }

    fn start(dir: &Path) -> Cluster {
        for folder in ["local", "tmp"] {
            std::fs::create_dir_all(dir.join(folder)).unwrap();
        }
        let spark_class = venv_bin().join("spark-class");
        let environment = Self::environment(dir);
        let env: Vec<(&str, &Path)> = environment.iter().map(|(k, v)| (*k, v.as_path())).collect();
        let port = free_port().to_string();
        let master_log = dir.join("master.log");
        let master = Session::start(
            "the Spark master",
            &spark_class,
            &[
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                &port,
                "--webui-port",
                &free_port().to_string(),
            ],
            &env,
            &master_log,
        );
        let url = format!("spark://127.0.0.1:{port}");
        let mut cluster = Cluster {
            workers: Vec::new(),
            _master: master,
            url,
            dir: dir.to_path_buf(),
        };
        for n in 1..=2 {
            let work = dir.join(format!("worker{n}"));
            std::fs::create_dir_all(&work).unwrap();
            let worker = Session::start(
                &format!("Spark worker {n}"),
                &spark_class,
                &[
                    "org.apache.spark.deploy.worker.Worker",
                    "--host",
                    "127.0.0.1",
                    "--cores",
                    "1",
                    "--memory",
                    "1500m",
                    "--webui-port",
                    &free_port().to_string(),
                    "--work-dir",
                    work.to_str().unwrap(),
                    &cluster.url,
                ],
                &env,
                &dir.join(format!("worker{n}.log")),
            );
            cluster.workers.push(worker);
        }
        wait_for("two workers to register", 90, &master_log, || {
            std::fs::read_to_string(&master_log)
                .unwrap_or_default()
                .matches("Registering worker ")
                .count()
                == 2
        });
        cluster
    }

    /// `spark-submit kts-spark` to this cluster, the kts binaries, models and
    /// stages shipped as `archive`, the driver's own binaries from `bin`; the
    /// driver (client mode, this machine) waits until both executors are up
    /// before the first task.
    fn submit(&self, archive: &Path, bin: &Path, args: &[&str]) -> Session {
        let environment = Self::environment(&self.dir);
        let env: Vec<(&str, &Path)> = environment.iter().map(|(k, v)| (*k, v.as_path())).collect();
        let shipped = format!("{}#kts", archive.display());
        let executor_tmpdir = format!(
            "spark.executor.extraJavaOptions=-Djava.io.tmpdir={}",
            self.dir.join("tmp").display()
        );
        let mut submit: Vec<&str> = vec![
            "--master",
            &self.url,
            "--archives",
            &shipped,
            "--conf",
            "spark.ui.enabled=false",
            "--conf",
            "spark.cores.max=2",
            "--conf",
            "spark.executor.memory=1g",
            "--conf",
            &executor_tmpdir,
            "--conf",
            "spark.scheduler.minRegisteredResourcesRatio=1.0",
            "--conf",
            "spark.scheduler.maxRegisteredResourcesWaitingTime=90s",
        ];
        let script = workspace_root().join("pipelines/spark/kts-spark.py");
        submit.push(script.to_str().unwrap());
        submit.extend(["--archive", "kts", "--bin", bin.to_str().unwrap()]);
        submit.extend(args);
        Session::start(
            "spark-submit",
            &venv_bin().join("spark-submit"),
            &submit,
            &env,
            &self.dir.join("driver.log"),
        )
    }
}

/// A folder of links to the `tools` of this build only: the binaries the
/// driver runs when the executors take theirs from an archive.
fn driver_bin(dir: &Path, tools: &[&str]) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    for tool in tools {
        std::os::unix::fs::symlink(profile_dir().join(tool), dir.join(tool)).unwrap();
    }
    dir.to_path_buf()
}

/// `spark-submit --master local[2] kts-spark.py`, the binaries, models and
/// stages shipped as `archive` (where Spark unpacks them in local mode is
/// not the driver's working folder), the driver's own binaries from `bin`.
/// Its output goes to `log`; it must end within `seconds`.
fn submit_locally(
    archive: &Path,
    bin: &Path,
    args: &[&str],
    log: &Path,
    seconds: u64,
) -> std::process::ExitStatus {
    let (shipped, script) = (
        format!("{}#kts", archive.display()),
        workspace_root().join("pipelines/spark/kts-spark.py"),
    );
    let mut submit = vec![
        "--master",
        "local[2]",
        "--conf",
        "spark.ui.enabled=false",
        "--archives",
        &shipped,
        script.to_str().unwrap(),
        "--archive",
        "kts",
        "--bin",
        bin.to_str().unwrap(),
    ];
    submit.extend(args);
    let python = venv_bin().join("python");
    let env: [(&str, &Path); 2] = [
        ("PYSPARK_PYTHON", &python),
        ("SPARK_LOCAL_IP", Path::new("127.0.0.1")),
    ];
    let mut driver = Session::start(
        "spark-submit",
        &venv_bin().join("spark-submit"),
        &submit,
        &env,
        log,
    );
    wait_for("kts-spark to end", seconds, log, || {
        matches!(driver.leader.try_wait(), Ok(Some(_)))
    });
    driver.leader.wait().unwrap()
}

/// The files of a --pack archive: the binaries, the stages, and of the
/// models only the manifests and the files of models they name.
fn assert_packed_for_kts_embed(archive: &Path) {
    let listed = succeeded(shell(&format!("tar tzf '{}'", archive.display())));
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    let manifests: BTreeSet<String> = std::fs::read_dir(workspace_root().join("models"))
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".json").map(str::to_string)
        })
        .collect();
    for entry in listed.lines() {
        let model = entry
            .strip_prefix("models/cache/")
            .map(|f| f.split('/').next().unwrap());
        assert!(
            ["bin/", "pipelines/", "models/"]
                .iter()
                .any(|top| entry.starts_with(top))
                && model.is_none_or(|id| manifests.contains(id))
                && !entry.ends_with("source.onnx"),
            "{entry} is packed: {listed}"
        );
    }
    for needed in [
        "bin/kts-embed",
        "pipelines/reindex.mk",
        "models/onnxruntime.json",
    ] {
        assert!(
            listed.lines().any(|l| l == needed),
            "{needed} is not packed: {listed}"
        );
    }
}

/// A knowledge root of four small scopes of real documents.
fn small_root(root: &Path) {
    let tldr = shared_path("corpora/tldr-pages-en/pages");
    for (scope, from) in [
        ("a", "common"),
        ("b", "linux"),
        ("c", "osx"),
        ("d", "sunos"),
    ] {
        copy_files(&tldr.join(from), 6, &root.join(scope));
    }
}

#[test]
fn a_standalone_cluster_with_the_binaries_in_an_archive_survives_a_lost_worker() {
    let work = tempfile::tempdir().unwrap();
    let (ours, local) = (work.path().join("cluster"), work.path().join("local"));
    small_root(&ours);
    small_root(&local);
    let archive = work.path().join("kts.tar.gz");
    let packed = Command::new(venv_bin().join("python"))
        .arg(workspace_root().join("pipelines/spark/kts-spark"))
        .arg("--pack")
        .arg(&archive)
        .arg("--bin")
        .arg(profile_dir())
        .output()
        .unwrap();
    assert!(packed.status.success(), "{packed:?}");
    assert_packed_for_kts_embed(&archive);

    let output = kts_spark(&[local.to_str().unwrap(), "--tasks", "2"]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");

    // In local mode, a scope split with the archive's binaries (the driver
    // has no others for the stages) indexes as a root's scope does.
    let split = work.path().join("split");
    copy_files(
        &shared_path("corpora/tldr-pages-en/pages/common"),
        6,
        &split,
    );
    let split_bin = driver_bin(
        &work.path().join("split-bin"),
        &["kts-crawl", "kts-index", "kts-graph"],
    );
    let log = work.path().join("split.log");
    let status = submit_locally(
        &archive,
        &split_bin,
        &[split.to_str().unwrap(), "--split", "2"],
        &log,
        180,
    );
    assert!(
        status.success(),
        "{}",
        std::fs::read_to_string(&log).unwrap()
    );
    assert_same_index(&split, &local.join("a"));

    let mut cluster = Cluster::start(&work.path().join("spark"));
    let driver_bin = driver_bin(
        &work.path().join("driver-bin"),
        &["kts-crawl", "kts-catalog"],
    );
    let mut driver = cluster.submit(
        &archive,
        &driver_bin,
        &[ours.to_str().unwrap(), "--tasks", "2"],
    );
    // As soon as worker 2 runs a task's stages, it goes down with them.
    let worker_log = cluster.dir.join("worker2.log");
    wait_for("worker 2 to run a task", 120, &worker_log, || {
        cluster.workers[1].runs("make")
    });
    cluster.workers[1].kill();
    let driver_log = cluster.dir.join("driver.log");
    wait_for("the job to end", 180, &driver_log, || {
        matches!(driver.leader.try_wait(), Ok(Some(_)))
    });
    let status = driver.leader.wait().unwrap();
    let log = std::fs::read_to_string(&driver_log).unwrap();
    assert!(status.success(), "{log}");
    assert!(
        log.contains("4 scopes") && log.contains("0 failed"),
        "{log}"
    );
    assert!(log.contains("Lost executor"), "no executor was lost: {log}");
    // The lost task ran again on worker 1 (a task's attempt 1 is its retry).
    let retried = Command::new("grep")
        .args(["-rlE", r"Running task [0-9]+\.1 in stage"])
        .arg(cluster.dir.join("worker1"))
        .output()
        .unwrap();
    assert!(!retried.stdout.is_empty(), "no task ran again on worker 1");
    for scope in ["a", "b", "c", "d"] {
        assert_same_index(&ours.join(scope), &local.join(scope));
    }
    assert!(ours.join(".kts-catalog.db").is_file());
    // The executors ran the binaries of the archive they were sent.
    let unpacked = Command::new("find")
        .arg(cluster.dir.join("worker1"))
        .args(["-path", "*/kts/bin/kts-embed"])
        .output()
        .unwrap();
    assert!(
        !unpacked.stdout.is_empty(),
        "no archive unpacked on worker 1"
    );
}

#[test]
fn a_damaged_or_missing_archive_stops_the_run_with_exit_2() {
    let work = tempfile::tempdir().unwrap();
    // An archive whose one model file is not the one its manifest pins.
    let shipped = work.path().join("shipped");
    for folder in ["models/cache/tiny", "bin", "pipelines"] {
        std::fs::create_dir_all(shipped.join(folder)).unwrap();
    }
    std::fs::write(
        shipped.join("models/tiny.json"),
        format!(
            r#"{{"id": "tiny", "model": "model.onnx", "tokenizer": "model.onnx",
                "files": [{{"name": "model.onnx", "sha256": "{}"}}]}}"#,
            "0".repeat(64)
        ),
    )
    .unwrap();
    std::fs::write(shipped.join("models/cache/tiny/model.onnx"), "damaged").unwrap();
    let archive = work.path().join("damaged.tar.gz");
    succeeded(shell(&format!(
        "tar czf '{}' -C '{}' models bin pipelines",
        archive.display(),
        shipped.display()
    )));
    let root = work.path().join("root");
    let tldr = shared_path("corpora/tldr-pages-en/pages");
    copy_files(&tldr.join("common"), 3, &root.join("a"));
    copy_files(&tldr.join("linux"), 3, &root.join("b"));

    // Split (the stages never start, nothing waits on them) and whole scopes.
    let split = root.join("a");
    for (name, args) in [
        ("split", vec![split.to_str().unwrap(), "--split", "2"]),
        ("root", vec![root.to_str().unwrap()]),
    ] {
        let log = work.path().join(format!("{name}.log"));
        let status = submit_locally(&archive, &profile_dir(), &args, &log, 180);
        let log = std::fs::read_to_string(&log).unwrap();
        assert_eq!(status.code(), Some(2), "{name}: {log}");
        let said = log
            .lines()
            .find(|l| l.starts_with("kts-spark: the Spark job failed: "))
            .unwrap_or_else(|| panic!("{name}: {log}"));
        assert!(
            said.ends_with("/kts/models/cache/tiny/model.onnx arrived damaged: its SHA-256 is not the manifest's"),
            "{name}: {said}"
        );
    }

    // An archive spark-submit did not ship (no --archives, or another alias).
    for (name, args) in [
        ("split", vec![split.to_str().unwrap(), "--split", "2"]),
        ("root", vec![root.to_str().unwrap()]),
    ] {
        let mut args = args;
        args.extend(["--archive", "nothere"]);
        let output = kts_spark(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{name}: {stderr}");
        assert!(
            stderr.lines().any(|l| l
                == "kts-spark: the Spark job failed: no archive nothere reached the executor: \
                    ship it with spark-submit --archives kts.tar.gz#nothere (see --pack)"),
            "{name}: {stderr}"
        );
    }
}

#[test]
fn errors_that_stop_a_run_are_one_line_and_exit_2() {
    let work = tempfile::tempdir().unwrap();
    let scope = work.path().join("scope");
    copy_files(&shared_path("corpora/rust-rfcs/text"), 1, &scope);
    let (file, missing) = (work.path().join("a-file"), work.path().join("missing"));
    std::fs::write(&file, "").unwrap();
    let archive = missing.join("kts.tar.gz");
    let [root, scope, file, missing, archive] =
        [work.path(), &scope, &file, &missing, &archive].map(|p| p.to_str().unwrap());
    for (args, says) in [
        (
            vec![scope, "--split", "2", "--work", file],
            format!("kts-spark: --work {file} is not a folder"),
        ),
        (
            vec![root, "--bin", missing],
            format!(
                "kts-spark: kts-crawl, kts-convert, kts-chunk, kts-embed, kts-index, kts-graph, \
                     kts-catalog not in {missing}: build them (cargo build --release --bins) or give --bin"
            ),
        ),
        (
            vec!["--pack", archive],
            format!("kts-spark: cannot write {archive}: No such file or directory"),
        ),
    ] {
        let output = kts_spark(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end(), says, "{args:?}");
    }
    let output = kts_spark(&[missing]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("{missing} is not a folder")),
        "{stderr}"
    );
}

#[test]
fn a_run_that_cannot_start_stops_at_once_with_one_line_and_leaves_nothing() {
    let work = tempfile::tempdir().unwrap();
    let (root, flat) = (work.path().join("root"), work.path().join("flat"));
    copy_files(
        &shared_path("corpora/tldr-pages-en/pages/common"),
        2,
        &root.join("a"),
    );
    copy_files(&shared_path("corpora/rust-rfcs/text"), 2, &flat);
    let scope = root.join("a");
    let [root_text, flat_text, scope_text] = [&root, &flat, &scope].map(|p| p.to_str().unwrap());
    let stops = |mut command: Command, says: &str| {
        let output = command.output().expect("kts-spark starts");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.starts_with(says), "{stderr}");
    };

    // A folder of documents with no sub-folder is one scope, not a root.
    stops(
        kts_spark_command(&[], &[flat_text]),
        &format!(
            "kts-spark: {flat_text} has no sub-folder, so no scope (a knowledge root's scopes are its \
             sub-folders): index it as one scope, kts-spark {flat_text} --split N"
        ),
    );
    // No PySpark for this Python (-S: without its site-packages).
    stops(
        kts_spark_command(&["-S"], &[root_text]),
        "kts-spark: PySpark is not installed for ",
    );
    // No Java.
    let mut no_java = kts_spark_command(&[], &[root_text]);
    no_java.env_remove("JAVA_HOME").env("PATH", work.path());
    stops(
        no_java,
        "kts-spark: Spark needs Java 17 or later: put its java on PATH, or set JAVA_HOME",
    );
    assert!(!flat.join(".kts-reindex").exists() && !root.join(".kts-reindex").exists());

    // A knowledge root is not split: nothing is written in it.
    succeeded(shell(&format!("kts-index '{scope_text}' < /dev/null")));
    stops(
        kts_spark_command(&[], &[root_text, "--split", "2"]),
        &format!(
            "kts-spark: {root_text} is a knowledge root (indexed scopes under it: a): give it without --split"
        ),
    );
    assert!(!root.join(".kts").exists());

    // Another run holds the scope (a split run, or a root's run working on it).
    let _held = HeldLock::on(&scope.join(".kts/cache/reindex.lock"));
    stops(
        kts_spark_command(&[], &[scope_text, "--split", "2"]),
        &format!("kts-spark: another run is indexing {scope_text}"),
    );
}

#[test]
fn a_root_run_names_what_is_in_no_scope_and_starts_no_spark_when_nothing_changed() {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("root");
    let tldr = shared_path("corpora/tldr-pages-en/pages");
    copy_files(&tldr.join("common"), 3, &root.join("a"));
    copy_files(&tldr.join("linux"), 3, &root.join("b"));
    copy_files(&tldr.join("osx"), 2, &root.join("odd\nname"));
    std::fs::write(root.join("loose.md"), "# Loose\n\nIn no scope.\n").unwrap();
    let run = || kts_spark(&[root.to_str().unwrap(), "--no-embed"]);

    let output = run();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains(": 2 scopes in ") && stdout.contains("2 reindexed, 0 unchanged, 0 failed;"),
        "{stdout}"
    );
    assert!(
        stdout.contains("  skipped: 1 folder(s) whose name holds a newline")
            && stdout.contains(
                "  not indexed: 1 file(s) at the top level of the root: its scopes are its sub-folders"
            ),
        "{stdout}"
    );

    // Nothing changed: the scopes are unchanged without Spark, and the
    // catalog is not rewritten.
    std::fs::remove_dir_all(root.join("odd\nname")).unwrap();
    std::fs::remove_file(root.join("loose.md")).unwrap();
    let catalog = || {
        std::fs::metadata(root.join(".kts-catalog.db"))
            .unwrap()
            .modified()
            .unwrap()
    };
    let cataloged = catalog();
    let output = run();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("0 reindexed, 2 unchanged, 0 failed;"),
        "{stdout}"
    );
    assert!(
        stderr.contains("2 of the 2 scopes of ")
            && stderr.contains(" unchanged: Spark is not started"),
        "{stderr}"
    );
    assert_eq!(catalog(), cataloged);
}
