//! kts-index keeps its scope's row in the knowledge root's catalog
//! (`ROOT/.kts-catalog.db`) up to date, creates no catalog, and never fails
//! because of one.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use kts_catalog::{Catalog, catalog_path};
use kts_record::scope_path::doc_id;
use serde_json::json;

fn doc_lines(name: &str, title: &str, doc_type: &str) -> String {
    let path = format!("{name}.md");
    let id = doc_id(&path);
    let doc = json!({"schema": "kts.doc/1", "doc_id": id, "path": path,
        "title": title, "doc_type": doc_type, "markdown": title});
    let chunk = json!({"schema": "kts.chunk/1", "chunk_id": format!("c-{name}"), "doc_id": id,
        "path": path, "index": 0, "text": title, "start": 0, "end": 1});
    format!("{doc}\n{chunk}\n")
}

fn index(scope: &Path, input: &str) -> Output {
    index_in(Path::new("."), scope, input)
}

/// Runs kts-index from the folder `cwd`.
fn index_in(cwd: &Path, scope: &Path, input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kts-index"))
        .arg(scope)
        .current_dir(cwd)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn indexing_a_scope_updates_its_catalog_row_only() {
    let root = tempfile::tempdir().unwrap();
    let alpha = root.path().join("Alpha Deal");
    let beta = root.path().join("beta");
    for dir in [&alpha, &beta] {
        std::fs::create_dir(dir).unwrap();
    }
    // No catalog yet: indexing creates none.
    assert!(
        index(
            &alpha,
            &doc_lines("a1", "Alpha servicing report 2006", "REPORT")
        )
        .status
        .success()
    );
    assert!(
        index(&beta, &doc_lines("b1", "Beta leave policy", "POLICY"))
            .status
            .success()
    );
    assert!(!catalog_path(root.path()).exists());

    Catalog::rebuild(root.path()).unwrap();
    let before = Catalog::open(root.path()).unwrap().scopes().unwrap();
    assert_eq!(before.len(), 2);
    assert_eq!(
        (before[0].slug.as_str(), before[0].documents),
        ("alpha_deal", 1)
    );

    let out = index(
        &alpha,
        &doc_lines("a2", "Alpha trustee agreement 2007", "AGREEMENT"),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after = Catalog::open(root.path()).unwrap().scopes().unwrap();
    assert_eq!(after[0].slug, "alpha_deal");
    assert_eq!((after[0].documents, after[0].chunks), (2, 2));
    assert_eq!(after[0].doc_types, ["AGREEMENT", "REPORT"]);
    assert_eq!(after[0].years, [2006, 2007]);
    assert_ne!(after[0].last_indexed, before[0].last_indexed);
    assert_eq!(after[1], before[1], "the other scope's row is left alone");

    // Run from inside the scope, as `kts-index .`: the same row.
    let out = index_in(
        &beta,
        Path::new("."),
        &doc_lines("b2", "Beta travel policy", "POLICY"),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last = Catalog::open(root.path()).unwrap().scopes().unwrap();
    assert_eq!((last[1].slug.as_str(), last[1].documents), ("beta", 2));
    assert_eq!(last[0], after[0]);
}

#[test]
fn a_catalog_that_cannot_be_updated_is_a_warning_only() {
    let root = tempfile::tempdir().unwrap();
    let scope = root.path().join("gamma");
    std::fs::create_dir(&scope).unwrap();
    std::fs::write(
        catalog_path(root.path()),
        "not a database, just garbage bytes",
    )
    .unwrap();
    let out = index(&scope, &doc_lines("g1", "Gamma notes", "GENERAL"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("kts-index: warning: the catalog of") && stderr.contains("not updated"),
        "{stderr}"
    );
    assert!(stderr.ends_with("1 added, 0 updated, 0 deleted, 0 unchanged, 0 failed\n"));
}
