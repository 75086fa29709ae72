//! kts-index run as a user runs it: the stream, the summary, the lock, the model guard.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use kts_record::scope_path::doc_id;
use kts_store::{Filters, Store};
use serde_json::json;

fn doc_lines(i: usize) -> String {
    let path = format!("{i}.md");
    let doc = json!({"schema": "kts.doc/1", "doc_id": doc_id(&path), "path": path,
        "markdown": "x"});
    let chunk = json!({"schema": "kts.chunk/1", "chunk_id": format!("c{i}"), "doc_id": doc_id(&path),
        "path": path, "index": 0, "text": format!("tunnel number {i}"), "start": 0, "end": 1});
    format!("{doc}\n{chunk}\n")
}

/// kts-index SCOPE FLAGS on `input`, run to its end.
fn index_input(scope: &std::path::Path, flags: &[&str], input: &str) -> std::process::Output {
    let mut child = writer(scope, flags);
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// How many chunks a BM25 search for `word` finds (at most 5).
fn bm25_hits(store: &Store, word: &str) -> usize {
    store
        .search_bm25(word, 5, &Filters::default())
        .unwrap()
        .len()
}

fn writer(scope: &std::path::Path, flags: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_kts-index"))
        .arg(scope)
        .args(flags)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn a_second_writer_waits_or_fails_and_readers_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let scope = dir.path();
    // A first run so that readers have something to read.
    let mut seed = writer(scope, &[]);
    seed.stdin
        .take()
        .unwrap()
        .write_all(doc_lines(0).as_bytes())
        .unwrap();
    assert!(seed.wait().unwrap().success());

    // The first writer holds the lock, mid-transaction, waiting for input.
    let mut first = writer(scope, &["--batch", "1000"]);
    let mut first_in = first.stdin.take().unwrap();
    first_in.write_all(doc_lines(1).as_bytes()).unwrap();
    first_in.write_all(doc_lines(2).as_bytes()).unwrap();
    first_in.flush().unwrap();
    std::thread::sleep(Duration::from_millis(300));

    let refused = writer(scope, &["--no-wait"]).wait_with_output().unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let message = String::from_utf8_lossy(&refused.stderr);
    assert!(
        message.starts_with("kts-index: error: another writer") && message.contains("write.lock"),
        "{message}"
    );

    // A reader is not blocked, and sees the last committed state.
    let reader = Store::open_read(scope).unwrap();
    let hits = reader
        .search_bm25("tunnel", 10, &Filters::default())
        .unwrap();
    assert_eq!(hits.len(), 1);

    // A writer without --no-wait waits for the first one, then runs.
    let mut second = writer(scope, &[]);
    second
        .stdin
        .take()
        .unwrap()
        .write_all(doc_lines(3).as_bytes())
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        second.try_wait().unwrap().is_none(),
        "the second writer waits"
    );
    drop(first_in);
    assert!(first.wait().unwrap().success());
    let second = second.wait_with_output().unwrap();
    assert!(second.status.success());
    assert!(String::from_utf8_lossy(&second.stderr).contains("waiting"));
    let hits = reader
        .search_bm25("tunnel", 10, &Filters::default())
        .unwrap();
    assert_eq!(hits.len(), 4);
}

#[test]
fn readers_keep_the_old_index_while_a_reindex_runs_and_after_it_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let scope = dir.path();
    let old: String = (0..3).map(doc_lines).collect();
    assert!(index_input(scope, &[], &old).status.success());
    let reader = Store::open_read(scope).unwrap();
    let paths = || -> Vec<String> {
        let rowids: Vec<i64> = reader
            .search_bm25("tunnel", 10, &Filters::default())
            .unwrap()
            .iter()
            .map(|scored| scored.rowid)
            .collect();
        let mut paths: Vec<String> = reader
            .fetch_hits(&rowids)
            .unwrap()
            .into_iter()
            .map(|hit| hit.path)
            .collect();
        paths.sort();
        paths
    };
    let old_paths = vec!["0.md", "1.md", "2.md"];

    // Past the batch size and the one-second commit of an ordinary run.
    let rebuild = |count: usize| -> (std::process::Child, std::process::ChildStdin) {
        let mut child = writer(scope, &["--reindex", "--batch", "1"]);
        let mut stdin = child.stdin.take().unwrap();
        let new: String = (10..10 + count).map(doc_lines).collect();
        stdin.write_all(new.as_bytes()).unwrap();
        stdin.flush().unwrap();
        std::thread::sleep(Duration::from_millis(1500));
        (child, stdin)
    };
    let (mut killed, _stdin) = rebuild(3);
    assert_eq!(paths(), old_paths, "readers see the old index mid-reindex");
    killed.kill().unwrap();
    killed.wait().unwrap();
    assert_eq!(
        paths(),
        old_paths,
        "a killed --reindex leaves the old index"
    );

    let (finished, stdin) = rebuild(2);
    assert_eq!(paths(), old_paths);
    drop(stdin);
    assert!(finished.wait_with_output().unwrap().status.success());
    assert_eq!(paths(), vec!["10.md", "11.md"]);
}

#[test]
fn chunks_without_their_document_are_indexed_and_errors_counted() {
    let dir = tempfile::tempdir().unwrap();
    let chunk = json!({"schema": "kts.chunk/1", "chunk_id": "c1", "doc_id": doc_id("notes/a.txt"),
        "path": "notes/a.txt", "index": 0, "text": "orphan chunk", "start": 0, "end": 12});
    let error = json!({"schema": "kts.error/1", "stage": "kts-convert", "path": "bad.pdf",
        "code": "corrupt", "message": "not a PDF"});
    let input = format!("{chunk}\n{error}\nnot json\n");
    let out = index_input(dir.path(), &[], &input);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("kts-convert failed on bad.pdf"), "{stderr}");
    assert!(
        stderr.ends_with("kts-index: 1 added, 0 updated, 0 deleted, 0 unchanged, 2 failed\n"),
        "{stderr}"
    );
    let store = Store::open_read(dir.path()).unwrap();
    let hit = store.search_bm25("orphan", 1, &Filters::default()).unwrap();
    let hit = &store.fetch_hits(&[hit[0].rowid]).unwrap()[0];
    assert_eq!(
        (hit.doc_id.as_str(), hit.path.as_str()),
        (doc_id("notes/a.txt").as_str(), "notes/a.txt")
    );
}

#[test]
fn a_second_model_is_refused_with_the_reindex_advice() {
    let dir = tempfile::tempdir().unwrap();
    let line = |id: &str, model: &str| {
        json!({"schema": "kts.chunk/1", "chunk_id": id, "doc_id": doc_id(id), "path": id, "index": 0,
            "text": "t", "start": 0, "end": 1, "embedding": [0.6, 0.8], "model": model})
    };
    let run = |input: String, flags: &[&str]| index_input(dir.path(), flags, &input);
    assert!(run(format!("{}\n", line("a", "m1")), &[]).status.success());
    let refused = run(format!("{}\n", line("b", "m2")), &[]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--reindex"));
    let mixed = run(format!("{}\n{}\n", line("c", "m1"), line("d", "m3")), &[]);
    assert_eq!(mixed.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&mixed.stderr).contains("mixes embedding models"));
    let rebuilt = run(format!("{}\n", line("b", "m2")), &["--reindex"]);
    assert!(rebuilt.status.success());
    let store = Store::open_read(dir.path()).unwrap();
    assert_eq!(store.meta().unwrap().model_id.as_deref(), Some("m2"));
    assert_eq!(store.counts().unwrap(), (1, 1));
}

#[test]
fn a_document_whose_chunks_did_not_all_arrive_is_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let version = |words: &str, sent: usize| {
        let path = "cut.md";
        let doc = json!({"schema": "kts.doc/1", "doc_id": doc_id(path), "path": path,
            "markdown": words, "chunks": 2});
        let chunks = (0..sent).map(|i| {
            json!({"schema": "kts.chunk/1", "chunk_id": format!("{words}{i}"), "doc_id": doc_id(path),
                "path": path, "index": i, "text": format!("{words} part {i}"), "start": 0, "end": 1})
                .to_string()
        });
        std::iter::once(doc.to_string())
            .chain(chunks)
            .collect::<Vec<_>>()
            .join("\n")
            + "\n"
    };
    assert!(
        index_input(dir.path(), &[], &version("apricot", 2))
            .status
            .success()
    );
    // The stream of the next version stops after its first chunk: upstream died.
    let out = index_input(dir.path(), &[], &version("raspberry", 1));
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("error (at cut.md): incomplete: 1 of its 2 chunks arrived"),
        "{stderr}"
    );
    let store = Store::open_read(dir.path()).unwrap();
    assert_eq!(
        (bm25_hits(&store, "apricot"), bm25_hits(&store, "raspberry")),
        (2, 0)
    );
}

#[test]
fn records_crawled_in_another_scope_are_refused() {
    let (dir, other) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let from = |root: &std::path::Path, path: &str| {
        json!({"schema": "kts.doc/1", "doc_id": doc_id(path), "path": path,
            "root": root.to_str().unwrap(), "markdown": "x"})
    };
    let chunk = json!({"schema": "kts.chunk/1", "chunk_id": "w0", "doc_id": doc_id("secret.md"),
        "path": "secret.md", "index": 0, "text": "walnuts", "start": 0, "end": 1});
    let own = from(&dir.path().join("."), "own.md");
    let deletion = json!({"schema": "kts.file/1", "path": "1.md", "root": other.path().to_str().unwrap(),
        "size": 0, "mtime": "2026-01-01T00:00:00Z", "sha256": "", "format": "md", "status": "deleted"});
    let input = format!(
        "{}{}\n{chunk}\n{own}\n{deletion}\n",
        doc_lines(1),
        from(other.path(), "secret.md")
    );
    let out = index_input(dir.path(), &[], &input);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("unsafe-path").count(), 2, "{stderr}");
    assert!(
        stderr.contains("secret.md belongs to the scope") && stderr.contains("1.md belongs"),
        "{stderr}"
    );
    let store = Store::open_read(dir.path()).unwrap();
    assert_eq!(
        (bm25_hits(&store, "walnuts"), bm25_hits(&store, "tunnel")),
        (0, 1)
    );
    assert_eq!(store.counts().unwrap().0, 2, "1.md and own.md");
}

#[test]
fn a_doc_id_that_is_not_its_paths_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    assert!(index_input(dir.path(), &[], &doc_lines(1)).status.success());
    // The second document claims the first one's id.
    let doc = json!({"schema": "kts.doc/1", "doc_id": doc_id("1.md"), "path": "2.md",
        "markdown": "x"});
    let out = index_input(dir.path(), &[], &format!("{doc}\n"));
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "unsafe-path: doc_id {} is not the one kts gives the path \"2.md\"",
            doc_id("1.md")
        )),
        "{stderr}"
    );
    let store = Store::open_read(dir.path()).unwrap();
    let hit = store.search_bm25("tunnel", 1, &Filters::default()).unwrap();
    assert_eq!(store.fetch_hits(&[hit[0].rowid]).unwrap()[0].path, "1.md");
}

#[test]
fn a_document_that_cannot_be_stored_fails_alone() {
    let dir = tempfile::tempdir().unwrap();
    let doc = json!({"schema": "kts.doc/1", "doc_id": doc_id("twice.md"), "path": "twice.md",
        "markdown": "x"});
    let chunk = json!({"schema": "kts.chunk/1", "chunk_id": "same", "doc_id": doc_id("twice.md"),
        "path": "twice.md", "index": 0, "text": "duplicated id", "start": 0, "end": 1});
    let input = format!("{doc}\n{chunk}\n{chunk}\n{}", doc_lines(1));
    let out = index_input(dir.path(), &[], &input);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("error (at twice.md)"), "{stderr}");
    assert!(stderr.ends_with("1 added, 0 updated, 0 deleted, 0 unchanged, 1 failed\n"));
    let store = Store::open_read(dir.path()).unwrap();
    assert_eq!(store.counts().unwrap(), (1, 1));
}

#[test]
fn records_naming_files_outside_the_scope_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let escaping = json!({"schema": "kts.doc/1", "doc_id": doc_id("/etc/passwd"),
        "path": "/etc/passwd", "markdown": "x"});
    let chunk = json!({"schema": "kts.chunk/1", "chunk_id": "p0", "doc_id": doc_id("/etc/passwd"),
        "path": "/etc/passwd", "index": 0, "text": "root entry", "start": 0, "end": 1});
    let bad_id = json!({"schema": "kts.chunk/1", "chunk_id": "x0", "doc_id": "../../../x",
        "path": "x.md", "index": 0, "text": "traversal", "start": 0, "end": 1});
    let deletion = json!({"schema": "kts.file/1", "path": "../1.md", "size": 0,
        "mtime": "2026-01-01T00:00:00Z", "sha256": "", "format": "md", "status": "deleted"});
    let input = format!(
        "{}{escaping}\n{chunk}\n{bad_id}\n{deletion}\n{}",
        doc_lines(1),
        doc_lines(2)
    );
    let out = index_input(dir.path(), &[], &input);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.matches("unsafe-path").count(), 3, "{stderr}");
    assert!(stderr.contains("\"/etc/passwd\" is absolute"), "{stderr}");
    assert!(
        stderr.contains("\"../../../x\" is not one kts gives"),
        "{stderr}"
    );
    assert!(
        stderr.contains("\"../1.md\" leaves the scope root"),
        "{stderr}"
    );
    assert!(
        stderr.ends_with("2 added, 0 updated, 0 deleted, 0 unchanged, 3 failed\n"),
        "{stderr}"
    );
    let store = Store::open_read(dir.path()).unwrap();
    assert_eq!(store.counts().unwrap(), (2, 2));
    assert!(
        store
            .search_bm25("traversal root", 5, &Filters::default())
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_knowledge_root_is_not_made_a_scope() {
    let root = tempfile::tempdir().unwrap();
    let scope = root.path().join("tunnels");
    std::fs::create_dir(&scope).unwrap();
    assert!(index_input(&scope, &[], &doc_lines(1)).status.success());

    let output = index_input(root.path(), &[], "");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("is a knowledge root (indexed scopes under it: tunnels)"),
        "{stderr}"
    );
    assert!(
        !root.path().join(".kts").exists(),
        "the root became a scope"
    );
}

#[test]
fn a_file_converted_empty_leaves_the_index_and_other_failures_keep_theirs() {
    let dir = tempfile::tempdir().unwrap();
    let input = format!("{}{}", doc_lines(1), doc_lines(2));
    assert!(index_input(dir.path(), &[], &input).status.success());
    let failed = |path: &str, code: &str| {
        json!({"schema": "kts.error/1", "stage": "kts-convert", "path": path, "code": code,
            "message": "…"})
        .to_string()
            + "\n"
    };
    let input = failed("1.md", "empty") + &failed("2.md", "corrupt");
    let out = index_input(dir.path(), &[], &input);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("1.md is empty now"), "{stderr}");
    assert!(
        stderr.ends_with("kts-index: 0 added, 0 updated, 1 deleted, 0 unchanged, 2 failed\n"),
        "{stderr}"
    );
    let store = Store::open_read(dir.path()).unwrap();
    assert_eq!(
        bm25_hits(&store, "1"),
        0,
        "the emptied file's old text is gone"
    );
    assert_eq!(
        bm25_hits(&store, "2"),
        1,
        "a file that failed otherwise keeps its old text"
    );
}

#[test]
fn an_index_with_vectors_refuses_documents_without_embeddings() {
    let dir = tempfile::tempdir().unwrap();
    let lines = |path: &str, text: &str, embedding: Option<[f32; 2]>| {
        let doc = json!({"schema": "kts.doc/1", "doc_id": doc_id(path), "path": path,
            "markdown": text, "chunks": 1});
        let mut chunk = json!({"schema": "kts.chunk/1", "chunk_id": format!("{path} {text}"),
            "doc_id": doc_id(path), "path": path, "index": 0, "text": text, "start": 0, "end": 1});
        if let Some(embedding) = embedding {
            chunk["embedding"] = json!(embedding);
            chunk["model"] = json!("m1");
        }
        format!("{doc}\n{chunk}\n")
    };
    let embedded = lines("a.md", "budget review", Some([0.6, 0.8]))
        + &lines("b.md", "holiday policy", Some([0.8, 0.6]));
    assert!(index_input(dir.path(), &[], &embedded).status.success());

    // The same documents without kts-embed (a.md as it was, b.md changed),
    // then one with an embedding: the stream goes on past the refused ones.
    let without = lines("a.md", "budget review", None)
        + &lines("b.md", "holiday leave policy", None)
        + &lines("c.md", "canteen menu", Some([0.0, 1.0]));
    let out = index_input(dir.path(), &[], &without);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for path in ["a.md", "b.md"] {
        assert!(
            stderr.contains(&format!(
                "error (at {path}): bad-record: its chunks have no embedding"
            )),
            "{stderr}"
        );
    }
    assert!(
        stderr.contains("run kts-embed before kts-index") && stderr.contains("kts-index --reindex"),
        "{stderr}"
    );
    assert!(
        stderr.ends_with("1 added, 0 updated, 0 deleted, 0 unchanged, 2 failed\n"),
        "{stderr}"
    );
    let store = Store::open_read(dir.path()).unwrap();
    let nearest = store
        .search_vector(&[0.6, 0.8], 10, &Filters::default())
        .unwrap();
    assert_eq!(nearest.len(), 3, "every document keeps its vector");
    assert_eq!(
        (bm25_hits(&store, "holiday"), bm25_hits(&store, "leave")),
        (1, 0),
        "b.md as it was"
    );
    drop(store);

    // Rebuilt without embeddings, the scope is keyword-only and stays so.
    let keyword_only = lines("a.md", "budget review", None);
    assert!(
        index_input(dir.path(), &["--reindex"], &keyword_only)
            .status
            .success()
    );
    let again = lines("b.md", "holiday leave policy", None);
    assert!(index_input(dir.path(), &[], &again).status.success());
    let store = Store::open_read(dir.path()).unwrap();
    assert_eq!(store.meta().unwrap().model_id, None);
    assert_eq!(store.counts().unwrap(), (2, 2));
}

/// A mailbox of `messages` messages as kts-convert and kts-chunk write it,
/// every text and hash made of `words`, cut after the first `sent` messages.
fn mailbox_lines(words: &str, messages: usize, sent: usize) -> String {
    let lines = |path: &str, metadata: serde_json::Value| {
        let doc = json!({"schema": "kts.doc/1", "doc_id": doc_id(path), "path": path,
            "markdown": words, "chunks": 1, "metadata": metadata});
        let chunk = json!({"schema": "kts.chunk/1", "chunk_id": format!("{path} {words}"),
            "doc_id": doc_id(path), "path": path, "index": 0, "text": format!("{words} {path}"),
            "start": 0, "end": 1});
        format!("{doc}\n{chunk}\n")
    };
    let parts: Vec<String> = (1..=messages)
        .map(|i| format!("box.mbox#message/{i}"))
        .collect();
    let file = lines("box.mbox", json!({"source_sha256": words, "parts": parts}));
    let sent_parts = parts[..sent]
        .iter()
        .map(|part| lines(part, json!({"source_sha256": words, "parent": "box.mbox"})));
    file + &sent_parts.collect::<String>()
}

#[test]
fn a_file_counts_as_indexed_only_once_all_its_parts_are() {
    let dir = tempfile::tempdir().unwrap();
    let stored_hash = || {
        let store = Store::open_read(dir.path()).unwrap();
        store.source_sha256(&doc_id("box.mbox")).unwrap().flatten()
    };
    assert!(
        index_input(dir.path(), &[], &mailbox_lines("apricot", 3, 3))
            .status
            .success()
    );
    // The next version's stream stops after its first message.
    let out = index_input(
        dir.path(),
        &["--batch", "1"],
        &mailbox_lines("raspberry", 3, 1),
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "error (at box.mbox): incomplete: 2 of the 3 documents found inside it were not indexed"
        ),
        "{stderr}"
    );
    assert_eq!(
        stored_hash().as_deref(),
        Some("apricot"),
        "the file still counts as changed"
    );
    assert!(
        index_input(dir.path(), &[], &mailbox_lines("raspberry", 3, 3))
            .status
            .success()
    );
    assert_eq!(stored_hash().as_deref(), Some("raspberry"));
    let store = Store::open_read(dir.path()).unwrap();
    assert_eq!(
        (bm25_hits(&store, "apricot"), bm25_hits(&store, "raspberry")),
        (0, 4)
    );
}

#[test]
fn a_reindex_that_receives_no_document_is_refused_and_removals_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let input: String = (0..3).map(doc_lines).collect();
    assert!(index_input(dir.path(), &[], &input).status.success());
    let error = json!({"schema": "kts.error/1", "stage": "kts-embed", "path": "0.md",
        "code": "internal", "message": "…"});
    for nothing in [String::new(), format!("{error}\n")] {
        let out = index_input(dir.path(), &["--reindex"], &nothing);
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("--reindex received no document"),
            "{stderr}"
        );
        let store = Store::open_read(dir.path()).unwrap();
        assert_eq!(store.counts().unwrap(), (3, 3));
    }
    let out = index_input(dir.path(), &["--reindex"], &doc_lines(0));
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.ends_with("kts-index: 0 added, 1 updated, 2 deleted, 0 unchanged, 0 failed\n"),
        "{stderr}"
    );
    // Every file deleted: the stream is its deletions.
    let deleted = json!({"schema": "kts.file/1", "path": "0.md", "size": 0,
        "mtime": "2026-01-01T00:00:00Z", "sha256": "", "format": "md", "status": "deleted"});
    let out = index_input(dir.path(), &["--reindex"], &format!("{deleted}\n"));
    assert!(out.status.success());
    assert_eq!(
        Store::open_read(dir.path()).unwrap().counts().unwrap(),
        (0, 0)
    );
    // An empty index has nothing to lose.
    let empty = tempfile::tempdir().unwrap();
    assert!(
        index_input(empty.path(), &["--reindex"], "")
            .status
            .success()
    );
}

#[test]
fn interleaved_chunks_are_refused_and_the_stored_versions_kept() {
    let dir = tempfile::tempdir().unwrap();
    let doc = |path: &str, title: &str| {
        json!({"schema": "kts.doc/1", "doc_id": doc_id(path), "path": path, "title": title,
            "markdown": "x", "chunks": 2})
        .to_string()
            + "\n"
    };
    let chunk = |path: &str, words: &str, i: usize| {
        json!({"schema": "kts.chunk/1", "chunk_id": format!("{path} {words} {i}"),
            "doc_id": doc_id(path), "path": path, "index": i, "text": format!("{words} {i}"),
            "start": 0, "end": 1})
        .to_string()
            + "\n"
    };
    let together = doc("a.md", "A") + &chunk("a.md", "apricot", 0) + &chunk("a.md", "apricot", 1);
    assert!(index_input(dir.path(), &[], &together).status.success());
    let interleaved = doc("a.md", "A")
        + &doc("b.md", "B")
        + &chunk("a.md", "raspberry", 0)
        + &chunk("b.md", "cherry", 0)
        + &chunk("a.md", "raspberry", 1)
        + &chunk("b.md", "cherry", 1);
    let out = index_input(dir.path(), &[], &interleaved);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("a chunk of a.md comes after records of other documents"),
        "{stderr}"
    );
    assert!(
        stderr.ends_with("0 added, 0 updated, 0 deleted, 0 unchanged, 4 failed\n"),
        "{stderr}"
    );
    let store = Store::open_read(dir.path()).unwrap();
    assert_eq!(
        (bm25_hits(&store, "apricot"), bm25_hits(&store, "raspberry")),
        (2, 0)
    );
    assert_eq!(store.counts().unwrap(), (1, 2));
}

#[test]
fn a_repeated_chunk_is_said_to_have_come_more_than_once() {
    let dir = tempfile::tempdir().unwrap();
    let doc = json!({"schema": "kts.doc/1", "doc_id": doc_id("a.md"), "path": "a.md",
        "markdown": "x", "chunks": 1});
    let chunk = json!({"schema": "kts.chunk/1", "chunk_id": "a0", "doc_id": doc_id("a.md"),
        "path": "a.md", "index": 0, "text": "alpha", "start": 0, "end": 1});
    let out = index_input(dir.path(), &[], &format!("{doc}\n{chunk}\n{chunk}\n"));
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("incomplete: 2 chunks arrived for its 1 (a chunk came more than once"),
        "{stderr}"
    );
}

#[test]
fn records_of_other_schema_versions_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let input = doc_lines(1)
        .replace("kts.doc/1", "kts.doc/2")
        .replace("kts.chunk/1", "kts.chunk/2");
    let out = index_input(dir.path(), &[], &input);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "error (at stdin:1): bad-record: cannot read a record of schema \"kts.doc/2\": \
             kts-index reads kts.doc/1, kts.chunk/1, kts.file/1 and kts.error/1"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("(at stdin:2)"), "{stderr}");
    assert!(stderr.ends_with("2 failed\n"), "{stderr}");
}

#[test]
fn a_deleted_record_of_a_file_still_there_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("1.md"), "# Kept\n\ntunnel\n").unwrap();
    let input = doc_lines(1) + &doc_lines(2);
    assert!(index_input(dir.path(), &[], &input).status.success());
    let deleted = |path: &str| {
        json!({"schema": "kts.file/1", "path": path, "size": 0,
            "mtime": "2026-01-01T00:00:00Z", "sha256": "", "format": "md", "status": "deleted"})
        .to_string()
            + "\n"
    };
    let out = index_input(dir.path(), &[], &(deleted("1.md") + &deleted("2.md")));
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("1.md is said to be deleted, but the file is still in"),
        "{stderr}"
    );
    assert!(
        stderr.ends_with("0 added, 0 updated, 1 deleted, 0 unchanged, 1 failed\n"),
        "{stderr}"
    );
    let store = Store::open_read(dir.path()).unwrap();
    assert_eq!(store.counts().unwrap(), (1, 1));
}

#[test]
fn converted_documents_of_files_deleted_before_indexing_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    let folder = |path: &str| dir.path().join(".kts/documents").join(doc_id(path));
    let store_converted = |path: &str, metadata: serde_json::Value| {
        std::fs::create_dir_all(folder(path)).unwrap();
        let record = json!({"schema": "kts.doc/1", "doc_id": doc_id(path), "path": path,
            "metadata": metadata});
        std::fs::write(folder(path).join("metadata.json"), record.to_string()).unwrap();
        std::fs::write(folder(path).join("content.md"), "secret draft").unwrap();
    };
    std::fs::write(dir.path().join("box.mbox"), "From a\n\nbody\n").unwrap();
    std::fs::write(dir.path().join("converting.md"), "# Next\n").unwrap();
    store_converted("1.md", json!({}));
    store_converted("gone.md", json!({}));
    store_converted("converting.md", json!({}));
    store_converted("box.mbox#message/1", json!({"parent": "box.mbox"}));
    store_converted("old.mbox#message/1", json!({"parent": "old.mbox"}));
    assert!(index_input(dir.path(), &[], &doc_lines(1)).status.success());
    let kept = |path: &str| folder(path).exists();
    assert_eq!(
        [
            "1.md",
            "gone.md",
            "converting.md",
            "box.mbox#message/1",
            "old.mbox#message/1"
        ]
        .map(kept),
        [true, false, true, true, false]
    );
}

#[test]
fn a_failed_file_after_a_mailbox_leaves_the_mailbox_indexed_whole() {
    let dir = tempfile::tempdir().unwrap();
    let error = json!({"schema": "kts.error/1", "stage": "kts-convert", "path": "c.md",
        "code": "corrupt", "message": "…"});
    let input = format!("{}{error}\n", mailbox_lines("apricot", 2, 2));
    let out = index_input(dir.path(), &[], &input);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("incomplete"), "{stderr}");
    let store = Store::open_read(dir.path()).unwrap();
    assert_eq!(
        store
            .source_sha256(&doc_id("box.mbox"))
            .unwrap()
            .flatten()
            .as_deref(),
        Some("apricot"),
        "the mailbox's own document is indexed"
    );
    assert_eq!(bm25_hits(&store, "apricot"), 3);
}
