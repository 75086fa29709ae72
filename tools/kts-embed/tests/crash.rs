//! kts-embed killed at random moments while it appends to a scope's vector
//! cache: the next run reads the cache's whole records, ignores a torn tail,
//! and gives the vectors an uninterrupted run gives (needs models/fetch).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const TEXTS: usize = 300;

fn input(root: &Path, round: usize) -> String {
    let doc = json!({"schema": "kts.doc/1", "doc_id": "d", "path": "d.md",
                     "root": root.to_str().unwrap(), "markdown": "..."});
    let mut lines = format!("{doc}\n");
    // Each round adds new texts, so every run has appending to do.
    for i in 0..TEXTS {
        let text = format!("Entry {i} of round {round}: the ledger was audited and archived.");
        let chunk = json!({"schema": "kts.chunk/1", "chunk_id": format!("c{i}"), "doc_id": "d",
                           "path": "d.md", "index": i, "text": text, "start": 0,
                           "end": text.chars().count()});
        lines.push_str(&format!("{chunk}\n"));
    }
    lines
}

fn kts_embed(input: &str) -> std::process::Child {
    kts_tests::spawn_fed(
        Command::new(env!("CARGO_BIN_EXE_kts-embed"))
            .args(["--threads", "1", "--batch", "8"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
        input,
    )
}

/// The embeddings of a run that finished, by chunk text.
fn embeddings(child: std::process::Child) -> Vec<(String, Vec<f64>)> {
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|record| record["schema"] == "kts.chunk/1")
        .map(|record| {
            let vector = record["embedding"].as_array().unwrap();
            (
                record["text"].as_str().unwrap().to_string(),
                vector.iter().map(|x| x.as_f64().unwrap()).collect(),
            )
        })
        .collect()
}

#[test]
fn sigkill_while_appending_to_the_cache_loses_nothing_whole() {
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models");
    assert!(
        models
            .join("cache")
            .join(kts_embed::DEFAULT_MODEL)
            .join("model.onnx")
            .is_file(),
        "the model files are missing: run models/fetch first"
    );
    let scope = tempfile::tempdir().unwrap();
    let scope = scope.path();
    let cache = scope
        .join(".kts/embeddings")
        .join(format!("{}.bin", kts_embed::DEFAULT_MODEL));
    let started = Instant::now();
    let first = embeddings(kts_embed(&input(scope, 0)));
    let window = started.elapsed().as_millis() as u64;

    let mut rng = fastrand::Rng::with_seed(5);
    let (mut killed, mut grown) = (0, 0);
    for round in 1..=6 {
        let before = std::fs::metadata(&cache).unwrap().len();
        let mut child = kts_embed(&input(scope, round));
        std::thread::sleep(Duration::from_millis(rng.u64(window / 3..window)));
        killed += usize::from(child.try_wait().unwrap().is_none());
        child.kill().ok(); // SIGKILL
        child.wait().unwrap();
        let after = std::fs::metadata(&cache).unwrap().len();
        assert!(after >= before, "round {round}: the cache shrank");
        grown += usize::from(after > before);
    }
    assert!(
        killed >= 3 && grown >= 1,
        "{killed} of 6 runs killed mid-way, {grown} appended before"
    );
    // A torn last record, as a power cut mid-append leaves it (a kill does
    // not tear one write).
    let len = std::fs::metadata(&cache).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&cache)
        .unwrap()
        .set_len(len - 100)
        .unwrap();

    // Every text seen so far is embedded again or read back: the same vectors.
    let again = embeddings(kts_embed(&input(scope, 0)));
    assert_eq!(again.len(), first.len());
    for ((text, vector), (_, expected)) in again.iter().zip(&first) {
        let cosine: f64 = vector.iter().zip(expected).map(|(a, b)| a * b).sum();
        assert!(cosine > 0.9999, "{text}: cosine {cosine}");
    }
    embeddings(kts_embed(&input(scope, 999)));
    let len = std::fs::metadata(&cache).unwrap().len();
    assert_eq!(
        (len - 44) % (32 + 384 * 4 + 8),
        0,
        "a run after a torn tail cuts it off before appending"
    );
}
