//! kts-index killed at random moments: the store must always open, pass
//! SQLite's integrity check, and hold every document whole or not at all.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use kts_store::{Filters, LexicalState, Store};
use serde_json::json;

const DIMS: usize = 384;
const DOCS: usize = 200;

/// A document of a generated stream: its path and its chunk ids.
type Versions = BTreeMap<String, BTreeSet<String>>;

fn unit_vector(rng: &mut fastrand::Rng) -> Vec<f32> {
    let v: Vec<f32> = (0..DIMS).map(|_| rng.f32() - 0.5).collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / norm).collect()
}

fn doc_id(i: usize) -> String {
    kts_record::scope_path::doc_id(&format!("docs/doc{i:03}.md"))
}

/// Writes a stream of `DOCS` documents; `version` changes the text (and the
/// chunk count) of every third document, and `deleted` documents are sent as
/// deletions instead. Returns the chunk ids each document has in it.
fn write_stream(file: &Path, seed: u64, version: usize, deleted: &[usize]) -> Versions {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut out = String::new();
    let mut versions = Versions::new();
    for i in 0..DOCS {
        let path = format!("docs/doc{i:03}.md");
        if deleted.contains(&i) {
            let file = json!({"schema": "kts.file/1", "path": path, "size": 0,
                "mtime": "2026-01-01T00:00:00Z", "sha256": "", "format": "md", "status": "deleted"});
            out.push_str(&format!("{file}\n"));
            continue;
        }
        let v = if i % 3 == 0 { version } else { 0 };
        let chunks = 1 + (i * 7 + v * 3) % 8;
        let doc = json!({"schema": "kts.doc/1", "doc_id": doc_id(i), "path": path,
            "title": format!("Document {i}"), "doc_type": "GUIDE", "format": "md",
            "markdown": "…", "metadata": {"source_sha256": format!("sha{i}v{v}")}});
        out.push_str(&format!("{doc}\n"));
        let mut ids = BTreeSet::new();
        for c in 0..chunks {
            let chunk_id = format!("{i:04}v{v}c{c}");
            let text = format!(
                "docmark{i} chunk {c} of version {v}: {}",
                "words about leave and policy ".repeat(20)
            );
            let chunk = json!({"schema": "kts.chunk/1", "chunk_id": chunk_id, "doc_id": doc_id(i),
                "path": path, "index": c, "text": text, "heading_path": ["Doc", format!("Part {c}")],
                "start": 0, "end": text.chars().count(), "embedding": unit_vector(&mut rng),
                "model": "fake-minilm"});
            out.push_str(&format!("{chunk}\n"));
            ids.insert(chunk_id);
        }
        versions.insert(doc_id(i), ids);
    }
    std::fs::write(file, out).unwrap();
    versions
}

fn kts_index(scope: &Path, stream: &Path) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_kts-index"))
        .arg(scope)
        .env_clear()
        .stdin(std::fs::File::open(stream).unwrap())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn count_matching(store: &Store, sql: &str, param: &str) -> i64 {
    store
        .connection()
        .query_row(sql, [param], |r| r.get(0))
        .unwrap()
}

fn count_rowid(store: &Store, sql: &str, rowid: i64) -> i64 {
    store
        .connection()
        .query_row(sql, [rowid], |r| r.get(0))
        .unwrap()
}

/// Every stored document matches one of the stream versions exactly, with
/// one FTS entry and one vector per chunk. Returns the number of documents.
fn check_whole_or_absent(scope: &Path, versions: &[&Versions]) -> usize {
    let store = Store::open_read(scope).expect("the store opens after a kill");
    let integrity: String = store
        .connection()
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(integrity, "ok");
    let docs: Vec<String> = store
        .connection()
        .prepare("SELECT doc_id FROM documents")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for doc in &docs {
        let chunk_ids: BTreeSet<String> = store
            .connection()
            .prepare("SELECT chunk_id FROM chunks WHERE doc_id = ?1")
            .unwrap()
            .query_map([doc], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert!(
            versions.iter().any(|v| v.get(doc) == Some(&chunk_ids)),
            "document {doc} is partial: {chunk_ids:?}"
        );
        let i = (0..DOCS)
            .find(|&i| doc_id(i) == *doc)
            .expect("a document of the stream");
        let fts = count_matching(
            &store,
            "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?1",
            &format!("docmark{i}"),
        );
        assert_eq!(fts as usize, chunk_ids.len(), "FTS rows of {doc}");
        if store.lexical_state().unwrap() == LexicalState::Current {
            let found = store
                .search_bm25(&format!("docmark{i}"), 1000, &Filters::default())
                .unwrap();
            assert_eq!(found.len(), chunk_ids.len(), "lexical index rows of {doc}");
        }
        let rowids: Vec<i64> = store
            .connection()
            .prepare("SELECT id FROM chunks WHERE doc_id = ?1")
            .unwrap()
            .query_map([doc], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        for rowid in rowids {
            let n = count_rowid(
                &store,
                "SELECT count(*) FROM chunks_vec WHERE rowid = ?1",
                rowid,
            );
            assert_eq!(n, 1, "vector of chunk {rowid} of {doc}");
        }
    }
    let (_, chunks) = store.counts().unwrap();
    let all_fts = count_matching(
        &store,
        "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?1",
        "chunk",
    );
    assert_eq!(all_fts as usize, chunks, "no stray FTS rows");
    let all_vec: i64 = store
        .connection()
        .query_row("SELECT count(*) FROM chunks_vec", [], |r| r.get(0))
        .unwrap();
    assert_eq!(all_vec as usize, chunks, "no stray vectors");
    if store.vectors_from_file().unwrap() {
        assert_file_answers_as_sqlite_vec(scope);
    }
    docs.len()
}

/// vectors.bin (with its delta) gives the answers sqlite-vec gives.
fn assert_file_answers_as_sqlite_vec(scope: &Path) {
    let mut rng = fastrand::Rng::with_seed(7);
    let queries: Vec<Vec<f32>> = (0..3).map(|_| unit_vector(&mut rng)).collect();
    let answers = || {
        let store = Store::open_read(scope).unwrap();
        queries
            .iter()
            .map(|q| {
                let hits = store.search_vector(q, 10, &Filters::default()).unwrap();
                // As sets: scores a rounding apart may come in either order.
                hits.into_iter().map(|h| h.rowid).collect::<BTreeSet<_>>()
            })
            .collect::<Vec<_>>()
    };
    let from_file = answers();
    let file = kts_store::vector_file_path(scope);
    let aside = file.with_extension("aside");
    std::fs::rename(&file, &aside).unwrap();
    let from_sqlite = answers();
    std::fs::rename(&aside, &file).unwrap();
    assert_eq!(
        from_file, from_sqlite,
        "vectors.bin answers as sqlite-vec does"
    );
}

#[test]
fn sigkill_at_random_moments_leaves_whole_documents() {
    let dir = tempfile::tempdir().unwrap();
    let scope = dir.path().join("scope");
    std::fs::create_dir(&scope).unwrap();
    let (a_file, b_file) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    let deleted: Vec<usize> = (0..DOCS).step_by(10).collect();
    let a = write_stream(&a_file, 1, 0, &[]);
    let b = write_stream(&b_file, 2, 1, &deleted);

    // How long a full run takes here, to spread the kills over it.
    let timing = dir.path().join("timing");
    std::fs::create_dir(&timing).unwrap();
    let started = Instant::now();
    assert!(kts_index(&timing, &a_file).wait().unwrap().success());
    let window = started.elapsed();

    // An empty first run: from here on there is always a store to open.
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    assert!(kts_index(&scope, &empty).wait().unwrap().success());

    let kills = kts_tests::Kills {
        seed: 42,
        window,
        rounds: 30,
        cut_off: 10,
    };
    kts_tests::kill_at_random_moments(
        kills,
        // Alternating streams: every run has documents to update or delete.
        |round| kts_index(&scope, if round % 2 == 0 { &b_file } else { &a_file }),
        |round| {
            let docs = check_whole_or_absent(&scope, &[&a, &b]);
            eprintln!("round {round}: {docs} documents whole");
        },
    );

    assert!(kts_index(&scope, &a_file).wait().unwrap().success());
    assert_eq!(check_whole_or_absent(&scope, &[&a]), DOCS);
    let store = Store::open_read(&scope).unwrap();
    let expected: usize = a.values().map(BTreeSet::len).sum();
    assert_eq!(store.counts().unwrap(), (DOCS, expected));
    assert_eq!(store.lexical_state().unwrap(), LexicalState::Current);
    assert_eq!(
        store
            .search_bm25("chunk", 100_000, &Filters::default())
            .unwrap()
            .len(),
        expected,
        "the lexical index holds every chunk once"
    );
}

#[test]
fn reruns_leave_unchanged_documents_alone() {
    let dir = tempfile::tempdir().unwrap();
    let stream = dir.path().join("a.jsonl");
    write_stream(&stream, 1, 0, &[]);
    let run = || {
        let out = Command::new(env!("CARGO_BIN_EXE_kts-index"))
            .arg(dir.path())
            .env_clear()
            .stdin(std::fs::File::open(&stream).unwrap())
            .output()
            .unwrap();
        assert!(out.status.success());
        assert!(out.stdout.is_empty(), "stdout stays empty");
        String::from_utf8(out.stderr).unwrap()
    };
    assert_eq!(
        run(),
        "kts-index: 200 added, 0 updated, 0 deleted, 0 unchanged, 0 failed\n"
    );
    assert_eq!(
        run(),
        "kts-index: 0 added, 0 updated, 0 deleted, 200 unchanged, 0 failed\n"
    );
    let changed = dir.path().join("b.jsonl");
    write_stream(&changed, 2, 1, &[5, 7]);
    let stream = changed;
    let out = Command::new(env!("CARGO_BIN_EXE_kts-index"))
        .arg(dir.path())
        .env_clear()
        .stdin(std::fs::File::open(&stream).unwrap())
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "kts-index: 0 added, 67 updated, 2 deleted, 131 unchanged, 0 failed\n"
    );
}
