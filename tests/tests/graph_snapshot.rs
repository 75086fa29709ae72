//! The graph snapshot kts-graph writes into kts.db (the built graph, read by
//! neighbourhood): on a generated scope, the questions read it while it is
//! current and give exactly the answers of the graph built whole (kts-query
//! --context and --with graph, kts-graph neighbors, related and central);
//! when the index or the settings changed since, or the store predates
//! snapshots, the questions build the graph whole instead.

use std::fmt::Write;
use std::path::Path;

/// Systems, error codes and acronyms the documents share.
const SYSTEMS: [&str; 8] = [
    "AuthService",
    "TokenCache",
    "PaymentGateway",
    "LedgerStore",
    "AuditQueue",
    "ReportEngine",
    "SearchIndex",
    "BillingProxy",
];
const CODES: [&str; 5] = [
    "ERR-AUTH-401",
    "ERR-PAY-502",
    "ERR-LEDGER-409",
    "ERR-AUDIT-300",
    "ERR-SEARCH-404",
];
const ACRONYMS: [(&str, &str); 3] = [
    ("SSO", "Single Sign On"),
    ("RBAC", "Role Based Access Control"),
    ("SLA", "Service Level Agreement"),
];
const WORDS: [&str; 12] = [
    "request", "session", "retry", "client", "deploy", "backup", "invoice", "cluster", "metric",
    "alert", "policy", "schedule",
];

/// A document naming a few of the shared names, the first ones most often.
fn document(i: usize) -> String {
    let pick = |n: usize, salt: usize| ((i * 7 + salt * 13) % (n * n)).isqrt();
    let mut text = format!("# Note {i}\n\n");
    for part in 0..3 {
        let (a, b) = (SYSTEMS[pick(8, part)], SYSTEMS[pick(8, part + 5)]);
        let code = CODES[pick(5, part + 2)];
        let (short, long) = ACRONYMS[pick(3, part + i)];
        let word = WORDS[(i + part) % WORDS.len()];
        let _ = write!(
            text,
            "The {a} uses the {b} for every {word}. When it fails with {code} the {a} \
             retries; {code} is logged. "
        );
        if (i + part).is_multiple_of(4) {
            let _ = write!(text, "The {long} ({short}) guards the {word}. ");
        } else {
            let _ = write!(text, "The {short} team reviews the {a}. ");
        }
        if (i + part).is_multiple_of(9) {
            let _ = write!(
                text,
                "\"Retry Budget\" means the {word} retries the {b} allows. "
            );
        }
        text.push_str("\n\n");
    }
    text
}

fn run(script: &str) -> String {
    let output = kts_tests::succeeded(kts_tests::shell(script));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Brings the scope's index (not its graph) up to date, keywords only.
fn index(scope: &Path) {
    let dir = scope.display();
    run(&format!(
        "kts-crawl '{dir}' | kts-convert | kts-chunk | kts-index '{dir}' --quiet"
    ));
}

fn update_graph(scope: &Path) {
    run(&format!("kts-graph '{}' --quiet", scope.display()));
}

fn scope() -> tempfile::TempDir {
    let scope = tempfile::tempdir().unwrap();
    for i in 0..60 {
        std::fs::write(scope.path().join(format!("note{i:02}.md")), document(i)).unwrap();
    }
    index(scope.path());
    update_graph(scope.path());
    scope
}

/// What every question asked of the graph answers, one block per question.
fn answers(scope: &Path) -> Vec<String> {
    let dir = scope.display();
    let questions = [
        "why does the AuthService fail with ERR-AUTH-401",
        "what is the Single Sign On (SSO) portal",
        "what does retry budget mean for the PaymentGateway",
        "LedgerStore ERR-LEDGER-409 and the AuditQueue",
    ];
    let mut out = Vec::new();
    for question in questions {
        out.push(run(&format!(
            "kts-query '{dir}' '{question}' --mode bm25 --context --budget 2000"
        )));
        out.push(run(&format!(
            "kts-query '{dir}' '{question}' --mode bm25 --with graph --explain --top-k 20"
        )));
    }
    for entity in [
        "AuthService",
        "err-pay-502",
        "SSO",
        "retry budget",
        "system:tokencache",
    ] {
        out.push(run(&format!(
            "kts-graph '{dir}' neighbors '{entity}' --top 40"
        )));
        out.push(run(&format!(
            "kts-graph '{dir}' neighbors '{entity}' --hops 1"
        )));
    }
    for path in ["note00.md", "note07.md", "note33.md"] {
        out.push(run(&format!("kts-graph '{dir}' related {path} --top 15")));
    }
    out.push(run(&format!("kts-graph '{dir}' central --top 40")));
    out
}

fn db(scope: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(scope.join(".kts/kts.db")).unwrap()
}

fn drop_snapshot(scope: &Path) {
    db(scope)
        .execute_batch(
            "DROP TABLE graph_snapshot; DROP TABLE graph_snapshot_nodes;
             DROP TABLE graph_snapshot_links;",
        )
        .unwrap();
}

/// Renames every entity in the snapshot only: answers that show the new
/// names were read from it.
fn tamper_with_snapshot(scope: &Path) {
    db(scope)
        .execute(
            "UPDATE graph_snapshot_nodes SET name = 'Tampered' || name WHERE degree IS NOT NULL",
            [],
        )
        .unwrap();
}

fn from_snapshot(answers: &[String]) -> bool {
    answers.iter().any(|a| a.contains("Tampered"))
}

/// The answers of the scope as it is, from the graph built whole.
fn whole_graph_answers(scope: &Path) -> Vec<String> {
    let copy = tempfile::tempdir().unwrap();
    let twin = copy.path().join(scope.file_name().unwrap());
    run(&format!("cp -r '{}' '{}'", scope.display(), twin.display()));
    drop_snapshot(&twin);
    answers(&twin)
}

#[test]
fn questions_read_the_current_snapshot_and_answer_as_the_whole_graph() {
    let scope = scope();
    let from_the_snapshot = answers(scope.path());
    assert!(
        from_the_snapshot[0].contains("## Knowledge Graph Context")
            && from_the_snapshot[0].contains("AuthService")
            && from_the_snapshot[1].contains("\"graph\""),
        "the questions reach the graph: {from_the_snapshot:#?}"
    );
    let whole = whole_graph_answers(scope.path());
    for (snapshot, whole) in from_the_snapshot.iter().zip(&whole) {
        assert_eq!(snapshot, whole);
    }
    tamper_with_snapshot(scope.path());
    assert!(
        from_snapshot(&answers(scope.path())),
        "a current snapshot is what the questions read"
    );
}

#[test]
fn a_snapshot_the_index_or_the_settings_moved_past_is_not_read() {
    let scope = scope();
    tamper_with_snapshot(scope.path());
    // The index changes without kts-graph: the graph lags, and is built whole.
    std::fs::remove_file(scope.path().join("note08.md")).unwrap();
    std::fs::write(scope.path().join("note61.md"), document(61)).unwrap();
    index(scope.path());
    let stale = answers(scope.path());
    assert!(!from_snapshot(&stale), "a stale snapshot is not read");
    assert_eq!(stale, whole_graph_answers(scope.path()));

    update_graph(scope.path());
    let rebuilt = answers(scope.path());
    assert!(!from_snapshot(&rebuilt), "kts-graph rebuilt the snapshot");
    assert_eq!(rebuilt, whole_graph_answers(scope.path()));

    // A config that keeps other entities calls for another snapshot.
    tamper_with_snapshot(scope.path());
    std::fs::write(
        scope.path().join(".kts/config.toml"),
        "[graph]\nmin_mentions = 3\n",
    )
    .unwrap();
    let other_settings = answers(scope.path());
    assert!(!from_snapshot(&other_settings));
    assert_eq!(other_settings, whole_graph_answers(scope.path()));
}

#[test]
fn an_older_store_without_a_snapshot_answers_from_the_whole_graph_then_gains_one() {
    let scope = scope();
    let expected = answers(scope.path());
    drop_snapshot(scope.path());
    db(scope.path())
        .execute_batch(
            "DROP TRIGGER graph_doc_added; DROP TRIGGER graph_doc_removed;
             DROP TRIGGER document_added_for_graph; DROP TRIGGER document_removed_for_graph;
             DROP TRIGGER document_renamed_for_graph;
             DELETE FROM graph_meta WHERE key = 'generation';",
        )
        .unwrap();
    assert_eq!(answers(scope.path()), expected);

    update_graph(scope.path());
    tamper_with_snapshot(scope.path());
    assert!(
        from_snapshot(&answers(scope.path())),
        "the next kts-graph run wrote a snapshot"
    );
}
