//! kts-chunk, run as a user runs it.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

fn chunk(input: &str, flags: &[&str]) -> (Output, Vec<Value>) {
    kts_tests::run_jsonl(
        Path::new(env!("CARGO_BIN_EXE_kts-chunk")),
        flags,
        input.as_bytes(),
    )
}

#[test]
fn a_minimal_doc_record_is_passed_through_then_chunked() {
    let markdown = format!(
        "# Leave\n\n## Annual leave\n\n{}\n\n## Sick leave\n\nCall your manager.",
        "Staff get 25 days of annual leave each year. ".repeat(40)
    );
    let doc =
        json!({"schema": "kts.doc/1", "doc_id": "d1", "path": "hr/leave.md", "markdown": markdown});
    let (output, records) = chunk(&format!("{doc}\n"), &["--size", "500", "--overlap", "100"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let chunks = &records[1..];
    let mut counted = doc.clone();
    counted["chunks"] = chunks.len().into();
    assert_eq!(
        records[0], counted,
        "the document comes first, unchanged but for the number of its chunks"
    );
    assert!(chunks.len() >= 4);
    let chars: Vec<char> = markdown.chars().collect();
    for (i, c) in chunks.iter().enumerate() {
        assert_eq!(c["schema"], "kts.chunk/1");
        assert_eq!(
            (
                c["doc_id"].as_str(),
                c["path"].as_str(),
                c["index"].as_u64()
            ),
            (Some("d1"), Some("hr/leave.md"), Some(i as u64))
        );
        let (start, end) = (
            c["start"].as_u64().unwrap() as usize,
            c["end"].as_u64().unwrap() as usize,
        );
        assert_eq!(
            chars[start..end].iter().collect::<String>(),
            c["text"].as_str().unwrap()
        );
        assert!(end - start <= 500 + 100);
    }
    assert_eq!(chunks[1]["heading_path"], json!(["Leave", "Annual leave"]));
    assert_eq!(
        chunks.last().unwrap()["heading_path"],
        json!(["Leave", "Sick leave"])
    );
}

#[test]
fn chunk_ids_survive_a_rerun_and_an_edit_elsewhere() {
    let section = |n: usize, text: &str| format!("## Part {n}\n\n{}", text.repeat(30));
    let before = format!(
        "{}\n\n{}",
        section(1, "Alpha beta gamma. "),
        section(2, "Delta epsilon. ")
    );
    let after = format!(
        "{}\n\n{}",
        section(1, "Alpha beta gamma. "),
        section(2, "Zeta eta theta. ")
    );
    let ids = |markdown: &str| -> Vec<String> {
        let doc =
            json!({"schema": "kts.doc/1", "doc_id": "d", "path": "p.md", "markdown": markdown});
        chunk(&format!("{doc}\n"), &["--chunks-only", "--size", "400"])
            .1
            .iter()
            .map(|c| c["chunk_id"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(ids(&before), ids(&before));
    assert_eq!(
        ids(&before)[0],
        ids(&after)[0],
        "the unchanged first part keeps its id"
    );
    assert_ne!(ids(&before).last(), ids(&after).last());
}

#[test]
fn pages_are_cited_and_other_records_pass_through() {
    let doc = json!({"schema": "kts.doc/1", "doc_id": "p", "path": "r.pdf", "format": "pdf",
        "markdown": "<!-- page: 1 -->\nIntro.\n\n<!-- page: 2 -->\nDetails on page two are here."});
    let deleted = json!({"schema": "kts.file/1", "path": "gone.md", "status": "deleted"});
    let input =
        format!("{deleted}\n{doc}\n[1,2\n{{\"schema\":\"kts.doc/1\",\"path\":\"bad.md\"}}\n");
    let (output, records) = chunk(
        &input,
        &["--size", "50", "--min-size", "5", "--overlap", "0"],
    );
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(records[0], deleted);
    let mut counted = doc.clone();
    counted["chunks"] = 2.into();
    assert_eq!(records[1], counted);
    assert_eq!(
        (records[2]["page"].as_u64(), records[3]["page"].as_u64()),
        (Some(1), Some(2))
    );
    assert_eq!(records[3]["text"], "Details on page two are here.");
    assert_eq!(
        (records[4]["schema"].as_str(), records[4]["code"].as_str()),
        (Some("kts.error/1"), Some("bad-json"))
    );
    assert_eq!(
        (records[5]["code"].as_str(), records[5]["path"].as_str()),
        (Some("bad-record"), Some("bad.md"))
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("kts-chunk: error (at stdin:3): bad-json:"),
        "{stderr}"
    );
    assert!(
        stderr.contains("kts-chunk: error (at bad.md): bad-record: stdin:4: missing field"),
        "{stderr}"
    );
}

#[test]
fn a_record_without_a_schema_is_taken_as_a_doc_and_passed_on_naming_it() {
    let doc = json!({"doc_id": "3f1a5f0e2e8c1b7a", "path": "a.md", "markdown": "# A\n\nHello."});
    let (output, records) = chunk(&format!("{doc}\n"), &[]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        records[0].to_string(),
        r##"{"schema":"kts.doc/1","doc_id":"3f1a5f0e2e8c1b7a","path":"a.md","markdown":"# A\n\nHello.","chunks":1}"##
    );
    assert_eq!(
        (records[1]["schema"].as_str(), records[1]["text"].as_str()),
        (Some("kts.chunk/1"), Some("# A\n\nHello."))
    );
}

#[test]
fn bad_flags_are_usage_errors() {
    let output = Command::new(env!("CARGO_BIN_EXE_kts-chunk"))
        .args(["--size", "10"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
}

/// Runs kts-chunk on `input` and returns its peak resident memory in bytes
/// (from wait4, so other tests' processes do not count).
#[allow(unsafe_code)]
#[allow(clippy::zombie_processes)] // reaped by wait4, not by std
fn peak_memory(input: &std::path::Path) -> u64 {
    let child = Command::new(env!("CARGO_BIN_EXE_kts-chunk"))
        .arg("--chunks-only")
        .stdin(std::fs::File::open(input).unwrap())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value for wait4 to fill in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: the pid is our child's, not yet waited for; the pointers are valid.
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as libc::pid_t);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    usage.ru_maxrss as u64 * 1024
}

#[test]
fn a_document_of_one_40_mb_line_is_chunked_in_at_most_four_times_its_size() {
    let dir = tempfile::tempdir().unwrap();
    let words = [
        "ledger",
        "audit",
        "retention",
        "archive",
        "quarterly",
        "réunion",
    ];
    let mut markdown = String::with_capacity(41 << 20);
    let mut i = 0usize;
    while markdown.len() < 40 << 20 {
        markdown.push_str(words[i % words.len()]);
        markdown.push(' ');
        i = i.wrapping_mul(31).wrapping_add(7);
    }
    let doc = json!({"schema": "kts.doc/1", "doc_id": "d1", "path": "one-line.txt", "markdown": markdown});
    let input = dir.path().join("doc.jsonl");
    std::fs::write(&input, format!("{doc}\n")).unwrap();
    let peak = peak_memory(&input);
    assert!(
        peak <= 4 * markdown.len() as u64 + (32 << 20),
        "kts-chunk peaked at {} MiB for a {} MiB document",
        peak >> 20,
        markdown.len() >> 20
    );
}
