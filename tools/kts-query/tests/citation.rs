//! A hit cites the part of its chunk that answers: the page and the section
//! of the best match, in the records, the text output and the context.
//! Keyword search only, so no model is needed.

use std::path::Path;

use serde_json::Value;

/// Pages 3 and 4 of a converted PDF: the chunk holding the answer at the top
/// of page 4 starts with the last notes of page 3.
fn manual() -> String {
    let notes: String = (0..12)
        .map(|k| format!("Note {k}: keep this manual with the device for later reference.\n\n"))
        .collect();
    format!(
        "# Thermo X200 manual\n\n<!-- page: 3 -->\n\nFirmware update. Hold the reset button \
         for 10 seconds.\n\n{notes}<!-- page: 4 -->\n\nTroubleshooting. If the display stays \
         blank, check the fuse (T 2A).\n\n{notes}"
    )
}

/// Short sections, merged into one chunk with the section before them.
const STATUS_CODES: &str = "# HTTP status codes we return

## HTTP 404 Not Found

The gateway returns 404 when the route is unknown or the tenant id does not exist.

## HTTP 429 Too Many Requests

Rate limiting: each API key may send 120 requests per minute.

## HTTP 503 Service Unavailable

Returned when a backend connection pool is exhausted.
";

/// Two sibling sections (no title above them): the second chunk starts with
/// the last sentence of the first section, then holds the second.
fn runbook() -> String {
    let long = |step: usize| {
        format!(
            "Step {step} installs the agent{}.",
            " and checks the host".repeat(15)
        )
    };
    format!(
        "## Setup\n\n{} {} {} Finally, restart the agent so that the new settings take \
         effect.\n\n## Backups\n\nBackups run nightly at 02:00 and are kept for 30 days.\n",
        long(1),
        long(2),
        long(3)
    )
}

fn scope() -> tempfile::TempDir {
    let scope = tempfile::tempdir().unwrap();
    let manual = manual();
    let runbook = runbook();
    for (name, text) in [
        ("manual.md", manual.as_str()),
        ("http-status.md", STATUS_CODES),
        ("runbook.md", runbook.as_str()),
        ("notes.md", "# Notes\n\nUnrelated text about deployments.\n"),
    ] {
        std::fs::write(scope.path().join(name), text).unwrap();
    }
    let dir = scope.path().display();
    kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-crawl '{dir}' | kts-convert | kts-chunk | kts-index '{dir}' --quiet"
    )));
    scope
}

fn run(scope: &Path, question: &str, flags: &str) -> String {
    let output = kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-query '{}' '{question}' --mode bm25 --top-k 1 {flags}",
        scope.display()
    )));
    String::from_utf8(output.stdout).unwrap()
}

fn best_hit(scope: &Path, question: &str) -> Value {
    serde_json::from_str(run(scope, question, "").lines().next().unwrap()).unwrap()
}

/// The hit's text from character `at` of the document on.
fn text_from(hit: &Value, at: &Value) -> String {
    let skip = at.as_u64().unwrap() - hit["start"].as_u64().unwrap();
    (hit["text"].as_str().unwrap().chars())
        .skip(skip as usize)
        .collect()
}

#[test]
fn a_hit_cites_the_page_its_answer_is_on() {
    let scope = scope();
    let hit = best_hit(scope.path(), "fuse");
    let text = hit["text"].as_str().unwrap();
    let marker = text
        .find("<!-- page: 4 -->")
        .expect("the chunk runs over the page break");
    assert!(
        text[..marker].contains("Note 11"),
        "it starts on page 3: {text}"
    );
    assert_eq!(hit["page"], 4, "{hit}");
    assert!(
        text_from(&hit, &hit["cited_start"]).starts_with("Troubleshooting. If the display"),
        "{hit}"
    );

    let shown = run(scope.path(), "fuse", "--format text");
    let lines: Vec<&str> = shown.lines().collect();
    assert!(
        lines[0].ends_with("manual.md#Thermo X200 manual  (page 4)"),
        "{shown}"
    );
    assert!(
        lines[1]
            .trim_start()
            .starts_with("Troubleshooting. If the display"),
        "{shown}"
    );
    assert!(!shown.contains("<!--"), "{shown}");

    let context = run(scope.path(), "fuse", "--context");
    assert!(
        context.contains("[1] manual.md > Thermo X200 manual (page 4)\nTroubleshooting."),
        "{context}"
    );
    assert!(!context.contains("<!--"), "{context}");
}

#[test]
fn a_hit_cites_the_section_its_answer_is_in() {
    let scope = scope();
    let hit = best_hit(scope.path(), "HTTP 503 Service Unavailable");
    let text = hit["text"].as_str().unwrap();
    assert!(
        text.starts_with("## HTTP 429") && text.contains("## HTTP 503"),
        "one chunk holds both sections: {text}"
    );
    assert_eq!(
        hit["heading_path"],
        serde_json::json!([
            "HTTP status codes we return",
            "HTTP 503 Service Unavailable"
        ])
    );
    let earlier = best_hit(scope.path(), "rate limiting requests per minute");
    assert_eq!(
        earlier["heading_path"],
        serde_json::json!(["HTTP status codes we return", "HTTP 429 Too Many Requests"])
    );
    let context = run(scope.path(), "HTTP 503 Service Unavailable", "--context");
    assert!(
        context.contains(
            "[1] http-status.md > HTTP status codes we return > HTTP 503 Service Unavailable\n\
             ## HTTP 503 Service Unavailable\n\nReturned when"
        ),
        "{context}"
    );

    // The chunk starts inside "Setup", whose level only an earlier chunk
    // shows: "Backups" is its sibling, not below it.
    let backups = best_hit(scope.path(), "when do backups run");
    let text = backups["text"].as_str().unwrap();
    assert!(
        text.starts_with("Finally, restart") && text.contains("## Backups"),
        "{text}"
    );
    assert_eq!(
        backups["heading_path"],
        serde_json::json!(["Backups"]),
        "{backups}"
    );
}
