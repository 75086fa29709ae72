//! Readers never wait for writers and never see half a change: 16 kts-query
//! processes at a time ask a scope while kts-index replaces its 5,000
//! documents and kts-graph runs after it.

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use kts_tests::{shell, succeeded};

const DOCUMENTS: usize = 5000;
const READERS: usize = 16;

/// Document `i` at `version`: the version is in its title and in every
/// sentence of its text, so a hit whose title and text disagree was read
/// from two states.
fn write_documents(scope: &Path, version: &str) {
    for i in 0..DOCUMENTS {
        let sentence = format!(
            "Ledger{} entry {i} was audited in {version} of the records. ",
            i % 50
        );
        let text = format!("# Entry {i} {version}\n\n{}\n", sentence.repeat(3));
        std::fs::write(scope.join(format!("entry-{i:04}.md")), text).unwrap();
    }
}

fn index(scope: &Path) -> String {
    let dir = scope.display();
    format!("kts-crawl {dir} | kts-convert | kts-chunk | kts-index {dir} && kts-graph {dir}")
}

/// One question's hits, checked: each hit's title and text name the same
/// version. Returns the versions seen.
fn ask(scope: &Path, ledger: usize) -> Vec<String> {
    let output = Command::new(kts_tests::bin("kts-query"))
        .arg(scope)
        .arg(format!("ledger{ledger} audited records"))
        .args(["--mode", "bm25", "--top-k", "10"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "a reader failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let hits: Vec<serde_json::Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(hits.len(), 10, "a reader got {} hits", hits.len());
    hits.iter()
        .map(|hit| {
            let title = hit["title"].as_str().unwrap();
            let version = title.rsplit(' ').next().unwrap().to_string();
            let text = hit["text"].as_str().unwrap();
            assert!(
                text.contains(&format!("audited in {version} of")),
                "title {title:?} but text {text:?}"
            );
            version
        })
        .collect()
}

#[test]
fn sixteen_readers_answer_from_whole_states_while_5000_documents_are_replaced() {
    let folder = tempfile::tempdir().unwrap();
    let scope = folder.path();
    write_documents(scope, "v1");
    succeeded(shell(&index(scope)));
    write_documents(scope, "v2");

    let done = AtomicBool::new(false);
    let during = AtomicUsize::new(0);
    let writer = std::thread::scope(|threads| {
        let writer = threads.spawn(|| {
            let output = shell(&index(scope));
            done.store(true, Ordering::SeqCst);
            output
        });
        for reader in 0..READERS {
            let (done, during) = (&done, &during);
            threads.spawn(move || {
                let mut ledger = reader;
                while !done.load(Ordering::SeqCst) {
                    ask(scope, ledger % 50);
                    during.fetch_add(1, Ordering::SeqCst);
                    ledger += READERS;
                }
            });
        }
        writer.join().unwrap()
    });
    let answered = during.load(Ordering::SeqCst);
    succeeded(writer);
    assert!(
        answered >= 2 * READERS,
        "only {answered} answers came while the index was rewritten"
    );
    for ledger in 0..5 {
        assert!(ask(scope, ledger).iter().all(|v| v == "v2"));
    }
}
