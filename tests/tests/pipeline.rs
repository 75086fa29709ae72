//! The README's pipeline over real pipes, on the demo scope the project writes itself.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn demo_scope() -> tempfile::TempDir {
    let scope = tempfile::tempdir().unwrap();
    let status = Command::new(kts_tests::bin("kts-sample"))
        .arg(scope.path())
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    scope
}

fn records(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect()
}

/// The committed JSON Schemas, by schema id.
fn validators() -> HashMap<String, jsonschema::Validator> {
    let dir = kts_tests::workspace_root().join("schemas");
    std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.to_string_lossy().ends_with(".schema.json"))
        .map(|path| {
            let schema: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            let id = schema["title"]
                .as_str()
                .expect("each schema has its id as title")
                .to_string();
            (id, jsonschema::validator_for(&schema).unwrap())
        })
        .collect()
}

fn assert_valid(records: &[Value]) {
    let validators = validators();
    for record in records {
        let id = record["schema"]
            .as_str()
            .expect("every record names its schema");
        let validator = validators
            .get(id)
            .unwrap_or_else(|| panic!("no committed schema for {id}"));
        let errors: Vec<String> = validator
            .iter_errors(record)
            .map(|e| e.to_string())
            .collect();
        assert!(
            errors.is_empty(),
            "{id} record does not match its schema: {errors:?}\n{record}"
        );
    }
}

#[test]
fn the_readme_pipeline_turns_the_demo_scope_into_valid_chunks() {
    let scope = demo_scope();
    let dir = scope.path().display();
    let output = kts_tests::shell(&format!("kts-crawl {dir} | kts-convert | kts-chunk"));
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let records = records(&output);
    assert_valid(&records);

    let docs: Vec<&Value> = records
        .iter()
        .filter(|r| r["schema"] == "kts.doc/1")
        .collect();
    let formats: Vec<&str> = docs.iter().map(|d| d["format"].as_str().unwrap()).collect();
    for format in [
        "md", "txt", "html", "json", "docx", "pptx", "pdf", "csv", "xlsx", "odt", "epub", "eml",
    ] {
        assert!(
            formats.contains(&format),
            "no {format} document in {formats:?}"
        );
    }
    let mut current: Option<&Value> = None;
    for record in &records {
        if record["schema"] == "kts.doc/1" {
            current = Some(record);
            continue;
        }
        let doc = current.expect("a document comes before its chunks");
        assert_eq!(record["doc_id"], doc["doc_id"]);
        let markdown: Vec<char> = doc["markdown"].as_str().unwrap().chars().collect();
        let (start, end) = (
            record["start"].as_u64().unwrap() as usize,
            record["end"].as_u64().unwrap() as usize,
        );
        assert_eq!(
            markdown[start..end].iter().collect::<String>(),
            record["text"].as_str().unwrap()
        );
    }
    let slides = records.iter().filter(|r| r["slide"].is_u64()).count();
    let pages = records.iter().filter(|r| r["page"].is_u64()).count();
    assert!(
        slides > 0 && pages > 0,
        "chunks cite slides ({slides}) and pages ({pages})"
    );
}

#[test]
fn a_rerun_sends_only_changes_and_deletions_down_the_pipeline() {
    let scope = demo_scope();
    let dir = scope.path().display();
    let full = format!("kts-crawl {dir} | kts-convert | kts-chunk");
    assert!(kts_tests::shell(&full).status.success());

    std::fs::write(
        scope.path().join("pipeline-overview.md"),
        "# Changed\n\nNew text.\n",
    )
    .unwrap();
    std::fs::remove_file(scope.path().join("kts-faq.txt")).unwrap();
    let output = kts_tests::shell(&format!(
        "kts-crawl {dir} --changed-only | kts-convert | kts-chunk"
    ));
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let records = records(&output);
    assert_valid(&records);
    let summary: Vec<(&str, &str)> = records
        .iter()
        .map(|r| (r["schema"].as_str().unwrap(), r["path"].as_str().unwrap()))
        .collect();
    assert_eq!(
        summary,
        [
            ("kts.doc/1", "pipeline-overview.md"),
            ("kts.chunk/1", "pipeline-overview.md"),
            ("kts.file/1", "kts-faq.txt")
        ]
    );
    assert_eq!(records[2]["status"], "deleted");
}

#[test]
fn every_stage_ends_quietly_when_its_reader_stops_early() {
    let scope = tempfile::tempdir().unwrap();
    let paragraph = "A line of text that makes the records long enough to fill a pipe. ".repeat(40);
    for i in 0..300 {
        std::fs::write(
            scope.path().join(format!("doc-{i:03}.md")),
            format!("# Doc {i}\n\n{paragraph}\n"),
        )
        .unwrap();
    }
    let dir = scope.path().display();
    for script in [
        format!("kts-crawl {dir} | head -1"),
        format!("kts-crawl {dir} | kts-convert --no-store | head -1"),
        format!("kts-crawl {dir} | kts-convert --no-store | kts-chunk | head -1"),
    ] {
        let output = kts_tests::shell(&script);
        assert!(output.status.success(), "{script}: {:?}", output.status);
        assert!(
            output.stderr.is_empty(),
            "{script}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(records(&output).len(), 1, "{script}");
    }
}

#[test]
fn a_damaged_file_is_reported_and_the_rest_is_indexed() {
    let scope = demo_scope();
    let docx = scope.path().join("troubleshooting-guide.docx");
    let bytes = std::fs::read(&docx).unwrap();
    std::fs::write(Path::new(&docx), &bytes[..bytes.len() / 3]).unwrap();
    let dir = scope.path().display();
    let crawled = kts_tests::succeeded(kts_tests::shell(&format!("kts-crawl {dir}")))
        .stdout
        .split(|b| *b == b'\n')
        .filter(|line| !line.is_empty())
        .count();
    let output = kts_tests::shell(&format!("kts-crawl {dir} | kts-convert | kts-chunk"));
    assert_eq!(
        output.status.code(),
        Some(1),
        "the damaged file sets exit status 1"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("kts-convert: error (at troubleshooting-guide.docx): corrupt: "),
        "{stderr}"
    );
    let records = records(&output);
    assert_valid(&records);
    let errors: Vec<&Value> = records
        .iter()
        .filter(|r| r["schema"] == "kts.error/1")
        .collect();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0]["path"], "troubleshooting-guide.docx");
    assert_eq!(
        records
            .iter()
            .filter(|r| r["schema"] == "kts.doc/1")
            .count(),
        crawled - 1 + 1,
        "every other document is converted, and the demo e-mail's attachment"
    );
}

/// The paths of the documents in a scope's index, and the folders under
/// `.kts/documents/` (one per stored document).
fn indexed(scope: &Path) -> (Vec<String>, usize) {
    let store = kts_store::Store::open_read(scope).unwrap();
    let paths = store
        .connection()
        .prepare("SELECT path FROM documents ORDER BY path")
        .unwrap()
        .query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let folders = std::fs::read_dir(scope.join(".kts/documents"))
        .map(|dir| {
            dir.filter(|e| {
                !e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with('.')
            })
            .count()
        })
        .unwrap_or(0);
    (paths, folders)
}

#[test]
fn an_attachment_leaves_the_index_with_its_message_or_when_the_message_drops_it() {
    let scope = tempfile::tempdir().unwrap();
    let dir = scope.path().display();
    let mail = |with_attachment: bool| {
        let mail = kts_sample::Email::new("Zebra census", "a@example.com", "b@example.com")
            .text("The census notes are attached.");
        let mail = if with_attachment {
            mail.attach(
                "census.md",
                "text/markdown",
                b"# Census notes\n\nWe counted 41 zebras at the waterhole.\n".to_vec(),
            )
        } else {
            mail
        };
        mail.to_bytes()
    };
    std::fs::write(scope.path().join("note.md"), "# Note\n\nNo zebras here.\n").unwrap();
    std::fs::write(scope.path().join("census.eml"), mail(true)).unwrap();
    let index = format!("kts-crawl {dir} | kts-convert | kts-chunk | kts-index {dir}");
    let search = format!("kts-query {dir} 'zebras waterhole' --mode bm25 --top-k 5");

    kts_tests::succeeded(kts_tests::shell(&index));
    assert_eq!(
        indexed(scope.path()),
        (
            vec![
                "census.eml".to_string(),
                "census.eml#attachment/census.md".into(),
                "note.md".into()
            ],
            3
        )
    );
    let hits = records(&kts_tests::succeeded(kts_tests::shell(&search)));
    assert_eq!(hits[0]["path"], "census.eml#attachment/census.md");

    // Unchanged: nothing is deleted, the attachment stays.
    kts_tests::succeeded(kts_tests::shell(&index));
    assert_eq!(indexed(scope.path()).0.len(), 3);

    // The message changes and no longer has the attachment.
    std::fs::write(scope.path().join("census.eml"), mail(false)).unwrap();
    kts_tests::succeeded(kts_tests::shell(&index));
    assert_eq!(
        indexed(scope.path()),
        (vec!["census.eml".to_string(), "note.md".into()], 2)
    );
    let hits = records(&kts_tests::succeeded(kts_tests::shell(&search)));
    assert!(
        hits.iter()
            .all(|h| h["path"] != "census.eml#attachment/census.md"),
        "{hits:?}"
    );

    // The message is deleted: nothing of it is left.
    std::fs::write(scope.path().join("census.eml"), mail(true)).unwrap();
    kts_tests::succeeded(kts_tests::shell(&index));
    assert_eq!(indexed(scope.path()).0.len(), 3);
    std::fs::remove_file(scope.path().join("census.eml")).unwrap();
    kts_tests::succeeded(kts_tests::shell(&index));
    assert_eq!(indexed(scope.path()), (vec!["note.md".to_string()], 1));
}

#[test]
fn deleting_a_file_leaves_a_folder_whose_name_only_starts_like_its_parts() {
    let scope = tempfile::tempdir().unwrap();
    let dir = scope.path().display();
    std::fs::write(
        scope.path().join("C"),
        "From: a@example.com\nSubject: C\n\nA mail.\n",
    )
    .unwrap();
    std::fs::create_dir(scope.path().join("C#notes")).unwrap();
    std::fs::write(scope.path().join("C#notes/a.md"), "# A\n\nNotes.\n").unwrap();
    let index = format!("kts-crawl {dir} | kts-convert | kts-chunk | kts-index {dir}");
    kts_tests::succeeded(kts_tests::shell(&index));
    assert_eq!(
        indexed(scope.path()).0,
        ["C".to_string(), "C#notes/a.md".into()]
    );
    std::fs::remove_file(scope.path().join("C")).unwrap();
    kts_tests::succeeded(kts_tests::shell(&index));
    assert_eq!(indexed(scope.path()).0, ["C#notes/a.md".to_string()]);
}

#[test]
fn once_a_scope_is_indexed_status_is_measured_against_the_index() {
    let scope = demo_scope();
    let dir = scope.path().display();
    let index = kts_tests::shell(&format!(
        "kts-crawl {dir} | kts-convert | kts-chunk | kts-index {dir}"
    ));
    assert!(
        index.status.success(),
        "{}",
        String::from_utf8_lossy(&index.stderr)
    );

    // A crawl whose output never reaches the index (a pipeline that failed later on).
    std::fs::write(
        scope.path().join("new-note.md"),
        "# New note\n\nNot indexed yet.\n",
    )
    .unwrap();
    std::fs::remove_file(scope.path().join("glossary.json")).unwrap();
    assert!(
        kts_tests::shell(&format!("kts-crawl {dir} > /dev/null"))
            .status
            .success()
    );

    let output = kts_tests::shell(&format!("kts-crawl {dir} --changed-only"));
    assert!(output.status.success());
    let statuses: Vec<(String, String)> = records(&output)
        .iter()
        .map(|r| {
            (
                r["path"].as_str().unwrap().into(),
                r["status"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        [
            ("new-note.md".into(), "new".into()),
            ("glossary.json".into(), "deleted".into())
        ],
        "still work to do until the index has it"
    );
}

#[test]
fn graph_answers_on_the_demo_scope_follow_their_schema() {
    let scope = demo_scope();
    let dir = scope.path().display();
    kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-crawl {dir} | kts-convert | kts-chunk | kts-index {dir} && kts-graph {dir}"
    )));
    let mut answers = Vec::new();
    for question in [
        "entities",
        "central --top 5",
        "related kts-faq.txt",
        "neighbors json --hops 2",
    ] {
        let output = kts_tests::succeeded(kts_tests::shell(&format!("kts-graph {dir} {question}")));
        let records = records(&output);
        assert!(!records.is_empty(), "kts-graph {question} answered nothing");
        answers.extend(records);
    }
    assert_valid(&answers);
    assert!(answers.iter().all(|r| r["schema"] == "kts.node/1"));
}

/// Each file of the scope's `.kts/` (not the locks and SQLite's WAL files)
/// with its modification time and content.
fn index_files(scope: &Path) -> Vec<(String, std::time::SystemTime, Vec<u8>)> {
    let mut files: Vec<_> = walkdir::WalkDir::new(scope.join(".kts"))
        .into_iter()
        .map(Result::unwrap)
        .filter(|entry| entry.file_type().is_file())
        .filter(|entry| {
            let name = entry.file_name().to_string_lossy();
            !name.ends_with(".lock") && !name.starts_with("kts.db-")
        })
        .map(|entry| {
            let modified = entry.metadata().unwrap().modified().unwrap();
            let content = std::fs::read(entry.path()).unwrap();
            (entry.path().display().to_string(), modified, content)
        })
        .collect();
    files.sort();
    files
}

#[test]
fn a_run_with_nothing_to_do_leaves_the_index_files_as_they_were() {
    let scope = demo_scope();
    let dir = scope.path().display();
    let stages = "kts-convert | kts-chunk | kts-embed";
    let full = format!("kts-crawl {dir} | {stages} | kts-index {dir} && kts-graph {dir}");
    kts_tests::succeeded(kts_tests::shell(&full));
    // The first crawl may run before the index exists: crawl once more to
    // settle what it records of that.
    kts_tests::succeeded(kts_tests::shell(&full));
    let before = index_files(scope.path());
    // Times a second apart would show a rewrite on any file system.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let update =
        format!("kts-crawl {dir} --changed-only | {stages} | kts-index {dir} && kts-graph {dir}");
    kts_tests::succeeded(kts_tests::shell(&update));
    kts_tests::succeeded(kts_tests::shell(&full));
    let after = index_files(scope.path());
    let names = |files: &[(String, std::time::SystemTime, Vec<u8>)]| -> Vec<String> {
        files.iter().map(|(name, ..)| name.clone()).collect()
    };
    assert_eq!(names(&after), names(&before));
    let rewritten: Vec<&String> = before
        .iter()
        .zip(&after)
        .filter(|(was, is)| was != is)
        .map(|(was, _)| &was.0)
        .collect();
    assert!(rewritten.is_empty(), "rewritten: {rewritten:?}");
}
