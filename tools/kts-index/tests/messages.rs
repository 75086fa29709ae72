//! kts-index's messages when the scope or stderr cannot be written or read.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use kts_record::scope_path::doc_id;
use serde_json::json;

fn doc_lines(name: &str) -> String {
    let path = format!("{name}.md");
    let doc = json!({"schema": "kts.doc/1", "doc_id": doc_id(&path), "path": path,
        "markdown": "x"});
    let chunk = json!({"schema": "kts.chunk/1", "chunk_id": format!("c-{name}"),
        "doc_id": doc_id(&path), "path": path, "index": 0, "text": "printer error",
        "start": 0, "end": 1});
    format!("{doc}\n{chunk}\n")
}

/// kts-index SCOPE on `input`, its stderr going to `stderr`.
fn index(scope: &std::path::Path, input: &str, stderr: Stdio) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kts-index"))
        .arg(scope)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .unwrap();
    // kts-index may stop before it reads its input (a store it cannot open).
    let written = (child.stdin.take().unwrap()).write_all(input.as_bytes());
    if let Err(e) = written {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_stderr_that_cannot_be_written_does_not_end_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = index(dir.path(), &doc_lines("a"), Stdio::from(full));
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn a_damaged_database_is_named_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let first = index(dir.path(), &doc_lines("a"), Stdio::piped());
    assert!(first.status.success());
    let db = dir.path().join(".kts/kts.db");
    let len = std::fs::metadata(&db).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&db)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    let out = index(dir.path(), &doc_lines("b"), Stdio::piped());
    assert_eq!(out.status.code(), Some(2));
    let message = String::from_utf8_lossy(&out.stderr);
    assert!(
        message.starts_with(&format!(
            "kts-index: error: {} cannot be read",
            db.display()
        )) && message.contains("move it aside to rebuild the scope"),
        "{message}"
    );
}

#[test]
fn a_database_damaged_inside_is_one_error_not_one_per_record() {
    let dir = tempfile::tempdir().unwrap();
    let numbers: Vec<String> = (1..=200).map(|i| i.to_string()).collect();
    let input: String = (1..=40)
        .map(|i| doc_lines(&format!("d{i}")).replace("printer error", &numbers.join(" ")))
        .collect();
    assert!(index(dir.path(), &input, Stdio::piped()).status.success());
    let db = dir.path().join(".kts/kts.db");
    let mut bytes = std::fs::read(&db).unwrap();
    for byte in &mut bytes[4096 * 3..4096 * 3 + 3000] {
        *byte ^= 0xA5;
    }
    std::fs::write(&db, bytes).unwrap();
    let changed = input.replace(" 200\"", " 200 more\"");
    let out = index(dir.path(), &changed, Stdio::piped());
    assert_eq!(out.status.code(), Some(2));
    let message = String::from_utf8_lossy(&out.stderr);
    assert!(!message.contains("bad-record"), "{message}");
    assert!(
        message.starts_with(&format!(
            "kts-index: error: {} cannot be read",
            db.display()
        )),
        "{message}"
    );
}
