//! kts-convert killed at random moments while it fills the scope's document
//! store: every document folder found is whole (its Markdown is the one its
//! metadata's source hash gives), and the next run finishes the job and
//! clears what the killed ones left aside.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

const DOCUMENTS: usize = 300;

fn text(i: usize, version: usize) -> String {
    let sentence = format!("Entry {i} of version {version} was audited and archived. ");
    format!("# Entry {i} v{version}\n\n{}\n", sentence.repeat(300))
}

fn sha256(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Writes every document at `version` and returns their file records.
fn write_version(scope: &Path, version: usize) -> String {
    let mut records = String::new();
    for i in 0..DOCUMENTS {
        let path = format!("entry-{i:03}.md");
        let text = text(i, version);
        std::fs::write(scope.join(&path), &text).unwrap();
        let record = json!({"schema": "kts.file/1", "path": path, "root": scope.to_str().unwrap(),
            "size": text.len(), "mtime": "2026-01-01T00:00:00Z", "sha256": sha256(&text),
            "format": "md", "status": "new"});
        records.push_str(&format!("{record}\n"));
    }
    records
}

fn kts_convert(input: &str) -> std::process::Child {
    kts_tests::spawn_fed(
        Command::new(env!("CARGO_BIN_EXE_kts-convert"))
            .args(["--threads", "2"])
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
        input,
    )
}

/// Checks every stored document is whole; returns how many there are.
fn stored_documents_are_whole(scope: &Path, texts: &HashMap<String, String>) -> usize {
    let documents = scope.join(".kts/documents");
    let mut count = 0;
    for entry in std::fs::read_dir(&documents).unwrap() {
        let dir = entry.unwrap().path();
        if dir.file_name().unwrap() == ".staging" {
            continue;
        }
        let metadata: Value =
            serde_json::from_slice(&std::fs::read(dir.join("metadata.json")).unwrap())
                .unwrap_or_else(|e| panic!("{}: metadata.json: {e}", dir.display()));
        let source = metadata["metadata"]["source_sha256"].as_str().unwrap();
        let content = std::fs::read_to_string(dir.join("content.md")).unwrap();
        assert_eq!(
            Some(&content),
            texts.get(source),
            "{}: its Markdown is not the one its source hash gives",
            dir.display()
        );
        count += 1;
    }
    count
}

#[test]
fn sigkill_at_random_moments_leaves_only_whole_stored_documents() {
    let scope = tempfile::tempdir().unwrap();
    let scope = scope.path();
    let texts: HashMap<String, String> = (0..DOCUMENTS)
        .flat_map(|i| [text(i, 0), text(i, 1)])
        .map(|text| (sha256(&text), text))
        .collect();

    let records = write_version(scope, 0);
    let started = Instant::now();
    assert!(kts_convert(&records).wait().unwrap().success());
    let window = started.elapsed();
    assert_eq!(stored_documents_are_whole(scope, &texts), DOCUMENTS);

    let kills = kts_tests::Kills {
        seed: 3,
        window,
        rounds: 12,
        cut_off: 6,
    };
    kts_tests::kill_at_random_moments(
        kills,
        |round| kts_convert(&write_version(scope, (round + 1) % 2)),
        |_| {
            stored_documents_are_whole(scope, &texts);
        },
    );

    let records = write_version(scope, 1);
    assert!(kts_convert(&records).wait().unwrap().success());
    assert_eq!(stored_documents_are_whole(scope, &texts), DOCUMENTS);
    let left: Vec<_> = std::fs::read_dir(scope.join(".kts/documents/.staging"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "left in the staging area: {left:?}");
}
