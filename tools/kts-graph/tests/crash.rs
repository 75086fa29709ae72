//! kts-graph killed at random moments: the store must pass SQLite's
//! integrity check, every document's graph rows must be whole (those of one
//! version of the document) or absent, and the next run must finish the job.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

const DOCS: usize = 120;

/// Every table holding rows of one document each (see src/tables.rs).
const PER_DOCUMENT: [&str; 6] = [
    "graph_docs",
    "graph_mentions",
    "graph_definitions",
    "graph_expansions",
    "graph_relations",
    "graph_keywords",
];

/// A document's graph rows, table by table, each row as text, sorted.
type Rows = Vec<Vec<String>>;

/// The text of document `i`; `version` changes every third one.
fn text(i: usize, version: usize) -> String {
    let v = if i.is_multiple_of(3) { version } else { 0 };
    format!(
        "# Service {i}\n\nThe Service{i}Gateway depends on the AuthService{v}. \
         When login fails with ERR-{i:03}-{v} the client retries.\n\n\
         \"Token {i}\" means the signed value the AuthService{v} returns.\n\n\
         Staff use the Single Sign On (SSO) portal; ask Jane Doe{i} for access. \
         The Queue{i}Worker uses the TokenCache{v} and the Cache{i}Store.\n"
    )
}

fn write_version(scope: &Path, version: usize) {
    for i in 0..DOCS {
        let path = scope.join(format!("doc{i:03}.md"));
        let text = text(i, version);
        if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            std::fs::write(path, text).unwrap();
        }
    }
}

fn index(scope: &Path) {
    let dir = scope.display();
    kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-crawl '{dir}' | kts-convert | kts-chunk | kts-index '{dir}'"
    )));
}

fn kts_graph(scope: &Path) -> std::process::Child {
    Command::new(kts_tests::profile_dir().join("kts-graph"))
        .arg(scope)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Each document's graph rows (by path), after checking the store's integrity.
fn graph_rows(scope: &Path) -> BTreeMap<String, Rows> {
    let db = rusqlite::Connection::open(scope.join(".kts/kts.db")).unwrap();
    let integrity: String = db
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(integrity, "ok");
    let documents: Vec<(String, String)> = db
        .prepare("SELECT doc_id, path FROM documents")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut out = BTreeMap::new();
    for (doc_id, path) in documents {
        let rows: Rows = PER_DOCUMENT
            .iter()
            .map(|table| {
                let mut statement = db
                    .prepare(&format!("SELECT * FROM {table} WHERE doc_id = ?1"))
                    .unwrap();
                let columns = statement.column_count();
                let mut rows: Vec<String> = statement
                    .query_map([&doc_id], |r| {
                        Ok((0..columns)
                            .map(|c| format!("{:?}", r.get_ref(c).unwrap()))
                            .collect::<Vec<_>>()
                            .join("|"))
                    })
                    .unwrap()
                    .collect::<Result<_, _>>()
                    .unwrap();
                rows.sort();
                rows
            })
            .collect();
        out.insert(path, rows);
    }
    out
}

/// The graph rows of a scope holding `version`, built without interruption.
fn reference(version: usize) -> BTreeMap<String, Rows> {
    let scope = tempfile::tempdir().unwrap();
    write_version(scope.path(), version);
    index(scope.path());
    assert!(kts_graph(scope.path()).wait().unwrap().success());
    graph_rows(scope.path())
}

#[test]
fn sigkill_at_random_moments_leaves_each_documents_graph_whole() {
    let versions = [reference(0), reference(1)];
    assert!(
        versions[0].values().all(|rows| !rows[1].is_empty()),
        "every document has mentions"
    );

    let scope = tempfile::tempdir().unwrap();
    let scope = scope.path();
    write_version(scope, 0);
    index(scope);
    let started = Instant::now();
    let mut timing = kts_graph(scope);
    assert!(timing.wait().unwrap().success());
    let kills = kts_tests::Kills {
        seed: 11,
        window: started.elapsed(),
        rounds: 20,
        cut_off: 8,
    };
    let rounds = kts_tests::kill_at_random_moments(
        kills,
        |round| {
            // Every run has a third of the documents to extract again.
            write_version(scope, 1 - round % 2);
            index(scope);
            kts_graph(scope)
        },
        |round| {
            for (path, rows) in graph_rows(scope) {
                let absent = rows.iter().all(Vec::is_empty);
                assert!(
                    absent || versions.iter().any(|v| v.get(&path) == Some(&rows)),
                    "round {round}: the graph rows of {path} are partial: {rows:?}"
                );
            }
        },
    );

    // The next run finishes the job: the graph of an uninterrupted build.
    assert!(kts_graph(scope).wait().unwrap().success());
    let version = 1 - (rounds - 1) % 2;
    assert_eq!(graph_rows(scope), versions[version]);
}
