//! kts-spark in Spark's local mode (`local[2]`), against the one-machine
//! pipelines on copies of the same data: whole scopes against
//! pipelines/reindex (with a corrupt document and a locked scope), and one
//! scope split in two partitions against the plain pipeline. The indexes must
//! hold the same documents and chunk ids, and vectors within 1e-6. Needs
//! PySpark (`make spark`) and Java; fails, never skips, without them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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

fn kts_spark(args: &[&str]) -> Output {
    let python = workspace_root().join("pipelines/spark/.venv/bin/python");
    assert!(
        python.is_file(),
        "PySpark is needed for this suite: run make spark (looked for {})",
        python.display()
    );
    Command::new(python)
        .arg(workspace_root().join("pipelines/spark/kts-spark"))
        .args(["--master", "local[2]", "--bin"])
        .arg(profile_dir())
        .args(args)
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

/// Holds the scope's writer lock (as a running kts-index would) until dropped.
struct HeldLock(std::process::Child);

impl HeldLock {
    fn on(scope: &Path) -> HeldLock {
        std::fs::create_dir_all(scope.join(".kts")).unwrap();
        // -o: the lock stays with flock itself, so killing it releases the lock.
        let child = Command::new("flock")
            .arg("-o")
            .arg(scope.join(".kts/write.lock"))
            .args(["sleep", "600"])
            .spawn()
            .expect("flock (util-linux) runs");
        std::thread::sleep(std::time::Duration::from_millis(300));
        HeldLock(child)
    }
}

impl Drop for HeldLock {
    fn drop(&mut self) {
        let _ = self.0.kill();
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
        HeldLock::on(&ours.join("locked")),
        HeldLock::on(&reference.join("locked")),
    ];

    let reindexed = shell(&format!(
        "'{}' '{}' -j 2 --bin '{}'",
        workspace_root().join("pipelines/reindex").display(),
        reference.display(),
        profile_dir().display()
    ));
    assert_eq!(reindexed.status.code(), Some(2), "{reindexed:?}");
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
        stdout.contains("1 reindexed scopes have documents that could not be indexed"),
        "{stdout}"
    );
    for scope in ["rfcs", "common", "broken"] {
        assert_same_index(&ours.join(scope), &reference.join(scope));
    }
    assert!(ours.join(".kts-catalog.db").is_file());

    // Unchanged: nothing runs again.
    drop(_locks);
    let again = kts_spark(&[ours.to_str().unwrap(), "--no-graph"]);
    let stdout = String::from_utf8_lossy(&again.stdout);
    assert!(stdout.contains("0 failed"), "{stdout}");
}

#[test]
fn one_scope_split_on_spark_indexes_as_the_plain_pipeline_does() {
    let work = tempfile::tempdir().unwrap();
    let (ours, reference) = (work.path().join("split"), work.path().join("plain"));
    for scope in [&ours, &reference] {
        copy_files(&shared_path("corpora/rust-rfcs/text"), 8, scope);
        std::fs::write(scope.join("empty.md"), "").unwrap();
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
}
