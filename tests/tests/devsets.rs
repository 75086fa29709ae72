//! The development sets `pipelines/eval/devsets.py` writes from the shared
//! corpora (`make eval-dev` measures on them): well formed, answerable, not
//! giving their answer away by name, and the same on every run.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::process::Command;

use kts_tests::{shared_path, succeeded, workspace_root};
use serde_json::Value;

fn write_sets(out: &Path) {
    succeeded(
        Command::new("python3")
            .arg(workspace_root().join("pipelines/eval/devsets.py"))
            .arg("--corpora")
            .arg(shared_path("corpora"))
            .arg("--out")
            .arg(out)
            .output()
            .expect("python3 runs"),
    );
}

fn json_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn both_sets_are_well_formed_answerable_and_reproducible() {
    let first = tempfile::tempdir().unwrap();
    let second = tempfile::tempdir().unwrap();
    write_sets(first.path());
    write_sets(second.path());
    for set in ["tldr", "rfcs"] {
        let dir = first.path().join(set);
        let corpus: HashMap<String, String> = json_lines(&dir.join("corpus.jsonl"))
            .into_iter()
            .map(|doc| {
                let id = doc["_id"].as_str().unwrap().to_string();
                (id, doc["title"].as_str().unwrap().to_lowercase())
            })
            .collect();
        let queries: HashMap<String, String> = json_lines(&dir.join("queries.jsonl"))
            .into_iter()
            .map(|q| {
                let text = q["text"].as_str().unwrap().to_lowercase();
                (q["_id"].as_str().unwrap().to_string(), text)
            })
            .collect();
        assert!(
            queries.len() >= 200,
            "{set}: only {} questions",
            queries.len()
        );
        let qrels = std::fs::read_to_string(dir.join("qrels/dev.tsv")).unwrap();
        let mut judged = HashSet::new();
        for line in qrels.lines().skip(1) {
            let fields: Vec<&str> = line.split('\t').collect();
            let (query, doc) = (fields[0], fields[1]);
            assert!(
                corpus.contains_key(doc),
                "{set}: {doc} is not in the corpus"
            );
            let question = &queries[query];
            // The tldr questions must not name their command.
            if set == "tldr" {
                let title = &corpus[doc];
                let named = question
                    .split(|c: char| !c.is_alphanumeric() && c != '-')
                    .any(|word| word == title);
                assert!(
                    !named,
                    "{set}: {query} names its answer {title}: {question}"
                );
            }
            judged.insert(query.to_string());
        }
        assert_eq!(
            judged.len(),
            queries.len(),
            "{set}: a question has no answer"
        );
        for file in ["corpus.jsonl", "queries.jsonl", "qrels/dev.tsv"] {
            let again = second.path().join(set).join(file);
            assert!(
                std::fs::read(dir.join(file)).unwrap() == std::fs::read(&again).unwrap(),
                "{set}/{file} differs between two runs"
            );
        }
    }
}
