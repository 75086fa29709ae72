//! kts-query with the scope's knowledge graph: the graph signal in ranking,
//! and the --context output. Keyword search only, so no model is needed.

use std::path::Path;

use serde_json::Value;

const AUTH: &str = "# Login troubleshooting

When the AuthService rejects a login it answers ERR-AUTH-401. To fix ERR-AUTH-401,
clear the TokenCache and sign in again through the Single Sign On (SSO) portal.
";

const FAQ: &str = "# Frequently asked questions

How do I fix a login failure? Most login failures are fixed by a new login.
A login failure after a password change needs a second login. Fix the login
by waiting a minute before the next login attempt.
";

const OTHER: &str = "# Release notes

The AuthService moved to a new cluster. The TokenCache is now larger.
";

fn scope() -> tempfile::TempDir {
    let scope = tempfile::tempdir().unwrap();
    for (name, text) in [("auth.md", AUTH), ("faq.md", FAQ), ("notes.md", OTHER)] {
        std::fs::write(scope.path().join(name), text).unwrap();
    }
    index(scope.path());
    kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-graph '{}' --quiet",
        scope.path().display()
    )));
    scope
}

/// Brings the scope's index (not its graph) up to date, keywords only.
fn index(scope: &Path) {
    let dir = scope.display();
    kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-crawl '{dir}' | kts-convert | kts-chunk | kts-index '{dir}' --quiet"
    )));
}

fn query(scope: &Path, flags: &str) -> Vec<Value> {
    let output = kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-query '{}' 'how do I fix a login failure with the AuthService' --mode bm25 {flags}",
        scope.display()
    )));
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn the_graph_signal_raises_documents_connected_to_the_question_entities() {
    let scope = scope();
    // The other steps off: this measures the graph signal alone.
    let plain = query(scope.path(), "--without filters,signals");
    assert_eq!(
        plain[0]["path"], "faq.md",
        "keywords alone prefer the FAQ: {plain:#?}"
    );
    assert!(plain.iter().all(|h| h["signals"].get("graph").is_none()));

    let with_graph = query(
        scope.path(),
        "--without filters,signals --graph --weight graph=2",
    );
    let paths = |hits: &[Value]| {
        let mut p: Vec<String> = hits.iter().map(|h| h["path"].to_string()).collect();
        p.sort();
        p
    };
    assert_eq!(
        paths(&with_graph),
        paths(&plain),
        "the graph only reorders what the retrievers found"
    );
    assert_eq!(
        with_graph.last().unwrap()["path"],
        "faq.md",
        "{with_graph:#?}"
    );
    for hit in &with_graph[..2] {
        let signal = &hit["signals"]["graph"];
        assert!(signal["rank"].as_u64().is_some(), "{hit}");
        assert!(signal["score"].as_f64().unwrap() > 0.0, "{hit}");
    }

    let explained = query(scope.path(), "--without filters,signals --graph --explain");
    let note = (explained[0]["notes"].as_array().unwrap().iter())
        .find(|note| note["step"] == "graph")
        .unwrap_or_else(|| panic!("no graph note: {}", explained[0]));
    let detail = note["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("entities ") && detail.contains("AuthService"),
        "{detail}"
    );
}

#[test]
fn the_context_holds_graph_facts_then_cited_passages_within_the_budget() {
    let scope = scope();
    let output = kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-query '{}' 'what does ERR-AUTH-401 mean' --mode bm25 --context --budget 300",
        scope.path().display()
    )));
    let context = String::from_utf8(output.stdout).unwrap();
    assert!(
        context.starts_with("## Knowledge Graph Context\n"),
        "{context}"
    );
    assert!(
        context.contains("**ERR-AUTH-401** (ERROR_CODE, 2 mentions)"),
        "{context}"
    );
    assert!(context.contains("Sources: auth.md"), "{context}");
    let passages = context
        .find("## Relevant Passages")
        .expect("passages follow");
    assert!(
        context[passages..].contains("[1] auth.md > Login troubleshooting"),
        "{context}"
    );
    assert!(
        context.chars().count().div_ceil(4) <= 300,
        "{} chars",
        context.len()
    );

    let output = kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-query '{}' 'login failure' --mode bm25 --context",
        scope.path().display()
    )));
    let context = String::from_utf8(output.stdout).unwrap();
    assert!(
        context.starts_with("## Relevant Passages\n\n[1] "),
        "no entity named: passages alone: {context}"
    );
}

#[test]
fn an_entity_names_each_source_once() {
    let scope = tempfile::tempdir().unwrap();
    // The glossary both defines and mentions the term: two edges to one document.
    std::fs::write(
        scope.path().join("glossary.md"),
        "# Glossary\n\nThe Cut-off Date means the first day of the month on which billing runs.\n",
    )
    .unwrap();
    index(scope.path());
    let dir = scope.path().display();
    kts_tests::succeeded(kts_tests::shell(&format!("kts-graph '{dir}' --quiet")));
    let output = kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-query '{dir}' 'what is the Cut-off Date' --mode bm25 --context"
    )));
    let context = String::from_utf8(output.stdout).unwrap();
    assert!(
        context.contains("**Cut-off Date** (TERM, 1 mention)\n"),
        "{context}"
    );
    assert!(context.contains("  - Sources: glossary.md\n"), "{context}");
}

#[test]
fn an_entity_names_each_neighbour_once() {
    let scope = tempfile::tempdir().unwrap();
    // Two documents spell the acronym out: two edges to one neighbour.
    for (name, text) in [
        (
            "a.md",
            "# A\n\nThe Service Level Agreement (SLA) for the payments API is 99.95% uptime.\n",
        ),
        (
            "b.md",
            "# B\n\nOur Service Level Agreement (SLA) is reviewed quarterly. The SLA binds Acme.\n",
        ),
    ] {
        std::fs::write(scope.path().join(name), text).unwrap();
    }
    index(scope.path());
    let dir = scope.path().display();
    kts_tests::succeeded(kts_tests::shell(&format!("kts-graph '{dir}' --quiet")));
    let output = kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-query '{dir}' 'what does SLA stand for' --mode bm25 --context"
    )));
    let context = String::from_utf8(output.stdout).unwrap();
    let related = (context.lines())
        .find(|line| line.starts_with("  - Related: "))
        .unwrap_or_else(|| panic!("{context}"));
    assert_eq!(
        related.matches("Service Level Agreement").count(),
        1,
        "{related}"
    );
}

#[test]
fn a_graph_that_lags_the_index_or_is_missing_is_a_warning() {
    let scope = scope();
    let dir = scope.path().display();
    std::fs::write(
        scope.path().join("notes.md"),
        "# Notes\n\nThe Warden replaced it.\n",
    )
    .unwrap();
    index(scope.path());
    let context = kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-query '{dir}' 'what is the AuthService' --mode bm25 --context"
    )));
    let stderr = String::from_utf8_lossy(&context.stderr);
    assert!(
        stderr.contains("the knowledge graph lags the index by 1 documents"),
        "{stderr}"
    );

    std::fs::remove_dir_all(scope.path().join(".kts")).unwrap();
    index(scope.path());
    let graph_step = kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-query '{dir}' 'AuthService' --mode bm25 --graph"
    )));
    let stderr = String::from_utf8_lossy(&graph_step.stderr);
    assert!(
        stderr.contains("the scope has no knowledge graph"),
        "{stderr}"
    );
}
