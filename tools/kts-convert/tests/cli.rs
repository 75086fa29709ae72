//! kts-convert, run as a user runs it, on documents the tests write themselves.

use std::path::Path;
use std::process::Output;

use kts_sample::{ALL_FORMATS, Format, Outline, damage, render, tiny_png};
use serde_json::{Value, json};

fn outline() -> Outline {
    Outline::new("Expense Reimbursement Policy")
        .heading(2, "Scope")
        .paragraph("This policy applies to every employee who travels for work.")
        .bullets(["Keep every receipt", "Submit claims within 30 days"])
        .numbered(["Open the claims portal", "Attach the receipts"])
        .table(&[
            &["Category", "Limit"],
            &["Hotel", "200 EUR"],
            &["Meals", "60 EUR"],
        ])
        .heading(2, "Exceptions")
        .paragraph("Error code E-5 means the claim is missing a receipt.")
        .block(kts_sample::Block::Image {
            png: tiny_png(4, 4, 7),
            alt: "claims portal screenshot".into(),
        })
}

fn file_record(root: &Path, path: &str) -> Value {
    kts_tests::new_file_record(root, path, "txt")
}

fn run_convert(input: &[u8], flags: &[&str]) -> (Output, Vec<Value>) {
    kts_tests::run_jsonl(Path::new(env!("CARGO_BIN_EXE_kts-convert")), flags, input)
}

fn convert(input: &[Value], flags: &[&str]) -> (Output, Vec<Value>) {
    let lines: String = input.iter().map(|record| format!("{record}\n")).collect();
    run_convert(lines.as_bytes(), flags)
}

fn write_every_format(root: &Path) -> Vec<String> {
    ALL_FORMATS
        .iter()
        .map(|&format| {
            let name = format!("policy.{}", format.as_str());
            std::fs::write(root.join(&name), render(&outline(), format).unwrap()).unwrap();
            name
        })
        .collect()
}

#[test]
fn every_format_keeps_headings_lists_tables_and_text() {
    let scope = tempfile::tempdir().unwrap();
    let names = write_every_format(scope.path());
    let input: Vec<Value> = names.iter().map(|n| file_record(scope.path(), n)).collect();
    let (output, docs) = convert(&input, &[]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(docs.len(), names.len());
    for (doc, name) in docs.iter().zip(&names) {
        assert_eq!(doc["schema"], "kts.doc/1", "{name}: {doc}");
        assert_eq!(doc["path"], name.as_str());
        assert_eq!(doc["title"], "Expense Reimbursement Policy", "{name}");
        assert_eq!(doc["doc_type"], "POLICY", "{name}");
        let markdown = doc["markdown"].as_str().unwrap();
        for text in [
            "Scope",
            "Keep every receipt",
            "Attach the receipts",
            "Hotel",
            "200 EUR",
            "E-5 means",
        ] {
            assert!(markdown.contains(text), "{name} lost {text:?}:\n{markdown}");
        }
        let structured = !matches!(name.rsplit('.').next(), Some("txt" | "pdf" | "json"));
        if structured {
            assert!(
                markdown.contains("# ") && markdown.contains("Scope\n"),
                "{name} lost its headings:\n{markdown}"
            );
            assert!(
                markdown.contains("| Hotel | 200 EUR |"),
                "{name} lost its table:\n{markdown}"
            );
            assert!(
                markdown.contains("- Keep every receipt"),
                "{name} lost its list:\n{markdown}"
            );
        }
        let stored = scope
            .path()
            .join(".kts/documents")
            .join(doc["doc_id"].as_str().unwrap());
        assert_eq!(
            std::fs::read_to_string(stored.join("content.md")).unwrap(),
            markdown
        );
        assert!(stored.join("metadata.json").is_file());
        for image in doc["images"].as_array().unwrap() {
            assert!(
                scope.path().join(image["path"].as_str().unwrap()).is_file(),
                "{name}: {image}"
            );
        }
    }
    let images_of = |n: &str| {
        docs.iter().find(|d| d["path"] == n).unwrap()["images"]
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(images_of("policy.docx"), 1);
    assert_eq!(images_of("policy.pptx"), 1);
    assert_eq!(images_of("policy.odt"), 1);
    let pdf = docs.iter().find(|d| d["path"] == "policy.pdf").unwrap();
    assert!(
        pdf["markdown"]
            .as_str()
            .unwrap()
            .starts_with("<!-- page: 1 -->")
    );
}

#[test]
fn damaged_and_hostile_files_become_error_records_and_the_stream_goes_on() {
    let scope = tempfile::tempdir().unwrap();
    let docx = render(&outline(), Format::Docx).unwrap();
    let pptx = render(&outline(), Format::Pptx).unwrap();
    let pdf = render(&outline(), Format::Pdf).unwrap();
    let odt = render(&outline(), Format::Odt).unwrap();
    let noise: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("truncated.docx", damage::truncated(&docx, 0.5), "corrupt"),
        ("truncated.pptx", damage::truncated(&pptx, 0.5), "corrupt"),
        ("truncated.pdf", damage::truncated(&pdf, 0.3), "corrupt"),
        ("truncated.odt", damage::truncated(&odt, 0.5), "corrupt"),
        ("empty.docx", Vec::new(), "empty"),
        ("empty.md", b"  \n".to_vec(), "empty"),
        ("bomb.docx", damage::zip_bomb_docx(), "too-large"),
        ("locked.docx", damage::encrypted_office(), "encrypted"),
        (
            "linked.docx",
            damage::external_reference_docx(),
            "external-reference",
        ),
        ("random.pdf", noise, "corrupt"),
        (
            "good.md",
            b"# Still here\n\nThe stream goes on.".to_vec(),
            "",
        ),
    ];
    for (name, bytes, _) in &cases {
        std::fs::write(scope.path().join(name), bytes).unwrap();
    }
    let mut input: Vec<Value> = cases
        .iter()
        .map(|(name, _, _)| file_record(scope.path(), name))
        .collect();
    let missing = json!({"schema": "kts.file/1", "path": "missing.pdf", "root": scope.path().to_str().unwrap(),
        "size": 1, "mtime": "2026-01-01T00:00:00Z", "sha256": "00", "format": "pdf", "status": "new"});
    input.insert(3, missing);
    let (output, records) = convert(&input, &[]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(records.len(), input.len());
    let mut expected: Vec<(&str, &str)> =
        cases.iter().map(|(name, _, code)| (*name, *code)).collect();
    expected.insert(3, ("missing.pdf", "io"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    for (record, (name, code)) in records.iter().zip(expected) {
        assert_eq!(record["path"], name);
        if code.is_empty() {
            assert_eq!(record["schema"], "kts.doc/1");
            continue;
        }
        let got = (record["schema"].as_str(), record["code"].as_str());
        assert_eq!(got, (Some("kts.error/1"), Some(code)), "{name}: {record}");
        assert_eq!(record["stage"], "kts-convert");
        assert!(
            stderr.contains(&format!("kts-convert: error (at {name}): {code}: ")),
            "{stderr}"
        );
    }
}

#[test]
fn bit_flipped_copies_never_crash_the_converter() {
    let scope = tempfile::tempdir().unwrap();
    let mut input = Vec::new();
    for format in [
        Format::Docx,
        Format::Pptx,
        Format::Pdf,
        Format::Html,
        Format::Json,
    ] {
        let original = render(&outline(), format).unwrap();
        for seed in 0..8u64 {
            let name = format!("flipped-{seed}.{}", format.as_str());
            let damaged = damage::bit_flipped(&original, seed, 1 + seed as usize * 3);
            std::fs::write(scope.path().join(&name), damaged).unwrap();
            input.push(file_record(scope.path(), &name));
        }
    }
    let (output, records) = convert(&input, &["--no-store"]);
    assert!(matches!(output.status.code(), Some(0 | 1)), "{output:?}");
    assert_eq!(records.len(), input.len(), "one record per file");
    for (record, file) in records.iter().zip(&input) {
        assert_eq!(record["path"], file["path"], "in input order");
        assert!(matches!(
            record["schema"].as_str(),
            Some("kts.doc/1" | "kts.error/1")
        ));
        assert_ne!(record["code"], "internal", "a converter panicked: {record}");
    }
}

#[test]
fn wrong_extensions_do_not_fool_format_detection() {
    let scope = tempfile::tempdir().unwrap();
    std::fs::write(
        scope.path().join("actually-a-docx.pdf"),
        render(&outline(), Format::Docx).unwrap(),
    )
    .unwrap();
    std::fs::write(
        scope.path().join("actually-a-pdf.docx"),
        render(&outline(), Format::Pdf).unwrap(),
    )
    .unwrap();
    let input = [
        file_record(scope.path(), "actually-a-docx.pdf"),
        file_record(scope.path(), "actually-a-pdf.docx"),
    ];
    let (output, docs) = convert(&input, &["--no-store"]);
    assert!(output.status.success());
    assert_eq!(docs[0]["format"], "docx");
    assert_eq!(docs[1]["format"], "pdf");
    assert!(
        !scope.path().join(".kts").exists(),
        "--no-store writes nothing"
    );
}

#[test]
fn text_saved_under_a_binary_extension_is_converted_as_what_it_is() {
    let scope = tempfile::tempdir().unwrap();
    let pdf = render(&outline(), Format::Pdf).unwrap();
    let pdf_without_header = pdf[pdf.len() / 2..].to_vec();
    let mut damaged_doc = vec![0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1];
    damaged_doc.extend_from_slice(&[0x3E; 600]);
    let cases: Vec<(&str, Vec<u8>, &str, &str)> = vec![
        (
            "nda.doc",
            br"{\rtf1\ansi{\pard Governing law: the courts of Bergen.\par}}".to_vec(),
            "rtf",
            "courts of Bergen",
        ),
        (
            "export.xls",
            b"<table><tr><th>Item</th><th>Qty</th></tr><tr><td>Hose kit</td><td>40</td></tr></table>"
                .to_vec(),
            "html",
            "| Hose kit | 40 |",
        ),
        (
            "minutes.doc",
            b"\xEF\xBB\xBF<html><head><meta name=ProgId content=Word.Document></head><body><h1>Minutes</h1></body></html>"
                .to_vec(),
            "html",
            "# Minutes",
        ),
        (
            "report.pdf",
            b"\n<!DOCTYPE html><p>HTML saved as .pdf</p>".to_vec(),
            "html",
            "HTML saved as .pdf",
        ),
        (
            "archive.doc",
            b"MIME-Version: 1.0\r\nContent-Type: multipart/related; boundary=\"b\"\r\n\r\n--b\r\n\
              Content-Type: text/html\r\n\r\n<p>Lifeboat drill every 21 days.</p>\r\n--b--\r\n"
                .to_vec(),
            "eml",
            "Lifeboat drill",
        ),
        ("note.docx", b"Plain text saved as docx\n".to_vec(), "unsupported", "plain text"),
        ("damaged.doc", damaged_doc, "corrupt", ""),
        ("headless.pdf", pdf_without_header, "corrupt", ""),
    ];
    for (name, bytes, _, _) in &cases {
        std::fs::write(scope.path().join(name), bytes).unwrap();
    }
    let input: Vec<Value> = cases
        .iter()
        .map(|(name, ..)| file_record(scope.path(), name))
        .collect();
    let (_, records) = convert(&input, &["--no-store"]);
    assert_eq!(records.len(), cases.len());
    for (record, (name, _, format_or_code, text)) in records.iter().zip(&cases) {
        assert_eq!(record["path"], *name, "the path is kept");
        if record["schema"] == "kts.doc/1" {
            assert_eq!(record["format"], *format_or_code, "{name}");
            let markdown = record["markdown"].as_str().unwrap();
            assert!(markdown.contains(text), "{name}: {markdown}");
        } else {
            assert_eq!(record["code"], *format_or_code, "{name}: {record}");
            assert!(
                record["message"].as_str().unwrap().contains(text),
                "{record}"
            );
        }
    }
}

#[test]
fn other_records_pass_through_and_bad_lines_are_reported_in_place() {
    let deleted = json!({"schema": "kts.file/1", "path": "old.md", "size": 1, "mtime": "2026-01-01T00:00:00Z",
        "sha256": "ab", "format": "md", "status": "deleted"});
    let error = json!({"schema": "kts.error/1", "stage": "kts-crawl", "path": "x", "code": "io", "message": "m"});
    let future = json!({"schema": "kts.thing/9", "extra": [1, 2]});
    let input = format!("{deleted}\nnot json at all\n{error}\n{{\"no\": \"schema\"}}\n{future}\n");
    let (output, lines) = run_convert(input.as_bytes(), &[]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(lines[0], deleted);
    assert_eq!(
        (lines[1]["code"].as_str(), lines[1]["path"].as_str()),
        (Some("bad-json"), Some("stdin:2"))
    );
    assert_eq!(lines[2], error);
    assert_eq!(
        (lines[3]["code"].as_str(), lines[3]["path"].as_str()),
        (Some("bad-record"), Some("stdin:4"))
    );
    assert_eq!(lines[4], future);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("kts-convert: error (at stdin:2): bad-json: "),
        "{stderr}"
    );
}

#[test]
fn a_record_without_a_schema_is_taken_as_a_file() {
    let scope = tempfile::tempdir().unwrap();
    std::fs::write(scope.path().join("note.md"), "# Note\n\nHello.").unwrap();
    let mut record = file_record(scope.path(), "note.md");
    record.as_object_mut().unwrap().remove("schema");
    let (output, docs) = convert(&[record], &["--no-store"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        (docs[0]["schema"].as_str(), docs[0]["title"].as_str()),
        (Some("kts.doc/1"), Some("Note"))
    );
}

#[test]
fn an_unchanged_file_is_served_from_the_store() {
    let scope = tempfile::tempdir().unwrap();
    std::fs::write(scope.path().join("note.md"), "# Note\n\nFirst version.").unwrap();
    let record = file_record(scope.path(), "note.md");
    let (_, first) = convert(std::slice::from_ref(&record), &[]);
    let doc_id = first[0]["doc_id"].as_str().unwrap();
    let stored = scope
        .path()
        .join(".kts/documents")
        .join(doc_id)
        .join("content.md");
    let written = std::fs::metadata(&stored).unwrap().modified().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let (_, second) = convert(std::slice::from_ref(&record), &[]);
    assert_eq!(first, second);
    assert_eq!(
        std::fs::metadata(&stored).unwrap().modified().unwrap(),
        written,
        "not converted again"
    );

    std::fs::write(scope.path().join("note.md"), "# Note\n\nSecond version.").unwrap();
    let (_, third) = convert(&[file_record(scope.path(), "note.md")], &[]);
    assert!(
        third[0]["markdown"]
            .as_str()
            .unwrap()
            .contains("Second version.")
    );
    assert_eq!(
        std::fs::read_to_string(&stored).unwrap(),
        "# Note\n\nSecond version."
    );

    // A stored conversion changed since it was written is not trusted.
    std::fs::write(&stored, "# Note\n\nTampered.").unwrap();
    let (output, fourth) = convert(&[file_record(scope.path(), "note.md")], &[]);
    assert!(
        fourth[0]["markdown"]
            .as_str()
            .unwrap()
            .contains("Second version.")
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!(
            "{} was changed since it was written, so it is not trusted: converted again",
            stored.display()
        )),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(&stored).unwrap(),
        "# Note\n\nSecond version."
    );
}

#[test]
fn a_file_edited_after_its_crawl_is_indexed_under_the_hash_of_what_was_read() {
    let scope = tempfile::tempdir().unwrap();
    std::fs::write(scope.path().join("note.md"), "# Note\n\nOriginal apricots.").unwrap();
    let crawled = file_record(scope.path(), "note.md");
    std::fs::write(
        scope.path().join("note.md"),
        "# Note\n\nEdited raspberries.",
    )
    .unwrap();
    let now = file_record(scope.path(), "note.md");
    let (_, records) = convert(&[crawled], &[]);
    assert!(
        records[0]["markdown"]
            .as_str()
            .unwrap()
            .contains("raspberries")
    );
    assert_eq!(records[0]["metadata"]["source_sha256"], now["sha256"]);
    assert_eq!(records[0]["metadata"]["size"], now["size"]);
}

#[cfg(unix)]
#[test]
fn a_file_replaced_by_a_pipe_is_an_error_not_a_wait() {
    let scope = tempfile::tempdir().unwrap();
    std::fs::write(scope.path().join("pipe.md"), "text").unwrap();
    std::fs::write(scope.path().join("after.md"), "# After\n\nStill converted.").unwrap();
    let records = [
        file_record(scope.path(), "pipe.md"),
        file_record(scope.path(), "after.md"),
    ];
    std::fs::remove_file(scope.path().join("pipe.md")).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(scope.path().join("pipe.md"))
        .status()
        .unwrap();
    assert!(made.success());
    let (output, out) = convert(&records, &["--timeout", "5"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        (out[0]["code"].as_str(), out[0]["path"].as_str()),
        (Some("io"), Some("pipe.md"))
    );
    assert!(
        out[0]["message"]
            .as_str()
            .unwrap()
            .contains("is not a regular file"),
        "{}",
        out[0]
    );
    assert_eq!(out[1]["path"], "after.md");
}

#[test]
fn many_documents_on_many_threads_keep_their_input_order() {
    let scope = tempfile::tempdir().unwrap();
    let input: Vec<Value> = (0..60)
        .map(|i| {
            let (name, bytes) = if i % 3 == 0 {
                let outline = Outline::new(format!("Doc {i}")).paragraph("Body.");
                (
                    format!("doc-{i:02}.docx"),
                    render(&outline, Format::Docx).unwrap(),
                )
            } else {
                (
                    format!("doc-{i:02}.md"),
                    format!("# Doc {i}\n").into_bytes(),
                )
            };
            std::fs::write(scope.path().join(&name), bytes).unwrap();
            file_record(scope.path(), &name)
        })
        .collect();
    let (output, docs) = convert(&input, &["--threads", "4", "--no-store"]);
    assert!(output.status.success());
    let titles: Vec<&str> = docs.iter().map(|d| d["title"].as_str().unwrap()).collect();
    let expected: Vec<String> = (0..60).map(|i| format!("Doc {i}")).collect();
    assert_eq!(titles, expected);
}

#[test]
fn records_naming_files_outside_the_scope_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (scope, outside) = (dir.path().join("scope"), dir.path().join("outside"));
    std::fs::create_dir_all(scope.join("docs")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(
        outside.join("secret.md"),
        "# Secret\n\nThe vault code is 0451.\n",
    )
    .unwrap();
    std::fs::write(
        scope.join("docs/notes.md"),
        "# Notes\n\nInside the scope.\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.join("secret.md"), scope.join("docs/link.md")).unwrap();

    let with_path = |path: &str| {
        let mut record = file_record(&scope, "docs/notes.md");
        record["path"] = path.into();
        record
    };
    let records = [
        with_path("../outside/secret.md"),
        with_path(outside.join("secret.md").to_str().unwrap()),
        with_path("docs/link.md"),
        with_path(".kts/kts.db"),
        with_path("./docs/../docs/notes.md"),
    ];
    let (output, out) = convert(&records, &["--no-store"]);
    assert_eq!(output.status.code(), Some(1));
    let codes: Vec<&str> = out
        .iter()
        .map(|r| r["code"].as_str().unwrap_or("doc"))
        .collect();
    assert_eq!(
        codes,
        [
            "unsafe-path",
            "unsafe-path",
            "unsafe-path",
            "unsafe-path",
            "doc"
        ]
    );
    for record in &out {
        assert!(!record.to_string().contains("0451"), "{record}");
    }
    assert!(
        out[0]["message"]
            .as_str()
            .unwrap()
            .contains("../outside/secret.md")
    );
    assert!(
        out[2]["message"]
            .as_str()
            .unwrap()
            .contains("symbolic link")
    );
    // A path inside the scope is taken in the form kts-crawl writes.
    assert_eq!(out[4]["path"], "docs/notes.md");
    assert_eq!(
        out[4]["doc_id"],
        kts_record::scope_path::doc_id("docs/notes.md")
    );
}

#[test]
fn csv_exports_in_any_dialect_become_one_table() {
    let scope = tempfile::tempdir().unwrap();
    let rows = [
        vec!["Name", "City", "Note"],
        vec!["佐藤太郎", "東京", "first; \"quoted\""],
        vec!["Ana", "Lisboa"],
        vec!["Lin", "Oslo", "line one\nline two", "extra"],
    ];
    let dialects = [
        ("comma.csv", ',', None),
        ("semicolon.csv", ';', Some(encoding_rs::UTF_16LE)),
        ("tab.tsv", '\t', Some(encoding_rs::SHIFT_JIS)),
        ("pipe.csv", '|', None),
    ];
    for (name, delimiter, encoding) in dialects {
        let dialect = kts_sample::CsvDialect {
            delimiter,
            encoding,
        };
        std::fs::write(scope.path().join(name), kts_sample::to_csv(&rows, dialect)).unwrap();
    }
    let latin = [vec!["Name", "City"], vec!["Zoë", "Malmö"]];
    let windows_1252 = kts_sample::CsvDialect {
        delimiter: ';',
        encoding: Some(encoding_rs::WINDOWS_1252),
    };
    std::fs::write(
        scope.path().join("latin.csv"),
        kts_sample::to_csv(&latin, windows_1252),
    )
    .unwrap();
    let names = [
        "comma.csv",
        "semicolon.csv",
        "tab.tsv",
        "pipe.csv",
        "latin.csv",
    ];
    let input: Vec<Value> = names.iter().map(|n| file_record(scope.path(), n)).collect();
    let (output, docs) = convert(&input, &["--no-store"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for doc in &docs[..4] {
        assert_eq!(doc["format"], "csv", "{doc}");
        assert_eq!(
            doc["markdown"],
            "| Name | City | Note |  |\n| --- | --- | --- | --- |\n\
             | 佐藤太郎 | 東京 | first; \"quoted\" |  |\n| Ana | Lisboa |  |  |\n\
             | Lin | Oslo | line one line two | extra |\n",
            "{}",
            doc["path"]
        );
    }
    assert_eq!(docs[2]["metadata"]["encoding"], "Shift_JIS");
    assert_eq!(docs[1]["metadata"]["delimiter"], ";");
    assert_eq!(
        docs[4]["markdown"],
        "| Name | City |\n| --- | --- |\n| Zoë | Malmö |\n"
    );
    assert_eq!(docs[4]["title"], "latin");
}

fn workbook() -> Vec<u8> {
    use kts_sample::{Cell, Comment, Sheet};
    let mut sales = Sheet::new("Sales 2024")
        .row(["Units sold per region".into(), Cell::Empty, Cell::Empty])
        .row(["Region".into(), "Month".into(), "Units".into()])
        .row(["North".into(), Cell::Date(45292.0), 120.0.into()])
        .row([Cell::Empty, Cell::Date(45323.0), 0.1.into()])
        .row([
            "Total".into(),
            Cell::Empty,
            Cell::Formula {
                formula: "C3+C4".into(),
                cached: 120.1,
            },
        ]);
    sales.merges.push((0, 0, 0, 2));
    sales.merges.push((2, 0, 3, 0));
    sales.comments.push(Comment {
        row: 3,
        col: 2,
        author: "Ada".into(),
        text: "Estimate | to be confirmed".into(),
    });
    // A second block beside the first, after an empty column, and a cell far away.
    sales.rows[1].extend([Cell::Empty, "Pond".into()]);
    sales.rows[2].extend([Cell::Empty, "Lake Ness".into()]);
    let mut far = vec![Cell::Empty; 40];
    far.push("Checked by the audit team".into());
    let mut sparse = Sheet::new("Notes");
    sparse.rows = vec![vec![]; 900];
    sparse.rows.push(far);
    kts_sample::to_xlsx("Regional sales", &[sales, Sheet::new("Empty"), sparse]).unwrap()
}

#[test]
fn a_workbook_becomes_a_heading_per_sheet_and_a_table_per_block() {
    let scope = tempfile::tempdir().unwrap();
    std::fs::write(scope.path().join("sales.xlsx"), workbook()).unwrap();
    // Without a title of its own, a workbook is titled by its file name, not
    // by its first sheet's name.
    let untitled = kts_sample::Sheet::new("Sheet").row(["Quarterly figures".into()]);
    std::fs::write(
        scope.path().join("q3_sales.xlsx"),
        kts_sample::to_xlsx("", &[untitled]).unwrap(),
    )
    .unwrap();
    let input = [
        file_record(scope.path(), "sales.xlsx"),
        file_record(scope.path(), "q3_sales.xlsx"),
    ];
    let (output, docs) = convert(&input, &["--no-store"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(docs[1]["title"], "q3 sales");
    assert_eq!(docs[0]["format"], "xlsx");
    assert_eq!(docs[0]["title"], "Regional sales");
    assert_eq!(docs[0]["metadata"]["sheets"], 3);
    assert_eq!(
        docs[0]["markdown"],
        "## Sales 2024\n\n\
         Units sold per region\n\n\
         | Region | Month | Units |\n| --- | --- | --- |\n\
         | North | 2024-01-01 | 120 |\n| North | 2024-02-01 | 0.1 |\n| Total |  | 120.1 |\n\n\
         > Comment (Ada) on C4: Estimate | to be confirmed\n\n\
         | Pond |\n| --- |\n| Lake Ness |\n\n\
         ## Empty\n\n\
         ## Notes\n\n\
         Checked by the audit team\n"
    );
}

#[test]
fn damaged_encrypted_and_oversized_workbooks_are_error_records() {
    let scope = tempfile::tempdir().unwrap();
    let good = workbook();
    let write = |name: &str, bytes: &[u8]| std::fs::write(scope.path().join(name), bytes).unwrap();
    write("truncated.xlsx", &damage::truncated(&good, 0.6));
    write("locked.xlsx", &damage::encrypted_office());
    write("garbage.xls", &damage::bit_flipped(&good, 7, 4000));
    // A sheet padded with 8 MiB of blanks compresses over 1000 to 1: a zip bomb.
    let bomb_sheet = kts_sample::Sheet::new("Bomb").row(["x".repeat(8 << 20).as_str().into()]);
    write(
        "bomb.xlsx",
        &kts_sample::to_xlsx("bomb", &[bomb_sheet]).unwrap(),
    );
    write("good.xlsx", &good);
    let names = [
        "truncated.xlsx",
        "locked.xlsx",
        "garbage.xls",
        "bomb.xlsx",
        "good.xlsx",
    ];
    let input: Vec<Value> = names.iter().map(|n| file_record(scope.path(), n)).collect();
    let (output, records) = convert(&input, &["--no-store"]);
    assert_eq!(output.status.code(), Some(1));
    let codes: Vec<&str> = records
        .iter()
        .map(|r| r["code"].as_str().unwrap_or("converted"))
        .collect();
    assert_eq!(
        codes,
        ["corrupt", "encrypted", "corrupt", "too-large", "converted"],
        "{records:#?}"
    );
    for (record, name) in records.iter().zip(names) {
        assert_eq!(record["path"], name);
    }
}

#[test]
fn a_sheet_of_100000_rows_converts_and_the_cell_limit_is_a_warning() {
    let scope = tempfile::tempdir().unwrap();
    let mut sheet = kts_sample::Sheet::new("Readings").row(["Sensor".into(), "Value".into()]);
    for i in 0..100_000 {
        sheet = sheet.row([format!("s{i}").as_str().into(), (i as f64).into()]);
    }
    std::fs::write(
        scope.path().join("big.xlsx"),
        kts_sample::to_xlsx("Readings", &[sheet]).unwrap(),
    )
    .unwrap();
    let input = [file_record(scope.path(), "big.xlsx")];
    let (output, docs) = convert(&input, &["--no-store"]);
    assert!(output.status.success());
    let markdown = docs[0]["markdown"].as_str().unwrap();
    assert_eq!(markdown.lines().count(), 2 + 100_002);
    assert!(markdown.ends_with("| s99999 | 99999 |\n"));

    let (output, docs) = convert(&input, &["--no-store", "--max-cells", "1000"]);
    assert!(output.status.success());
    let markdown = docs[0]["markdown"].as_str().unwrap();
    assert!(
        markdown.ends_with("| s498 | 498 |\n"),
        "{}",
        &markdown[markdown.len() - 100..]
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("big.xlsx: more than 1000 cells"),
        "{stderr}"
    );
}

#[test]
fn the_sheets_after_the_cell_limit_leave_no_heading_behind() {
    use kts_sample::Sheet;
    let scope = tempfile::tempdir().unwrap();
    std::fs::write(scope.path().join("sales.xlsx"), workbook()).unwrap();
    let exactly_three = Sheet::new("Data").row(["a".into(), "b".into(), "c".into()]);
    let limits = Sheet::new("Limits").row(["Hotel".into(), "200 EUR".into()]);
    std::fs::write(
        scope.path().join("full.xlsx"),
        kts_sample::to_xlsx("Full", &[exactly_three, limits]).unwrap(),
    )
    .unwrap();
    let input = [
        file_record(scope.path(), "sales.xlsx"),
        file_record(scope.path(), "full.xlsx"),
    ];
    let (output, docs) = convert(&input, &["--no-store", "--max-cells", "3"]);
    assert!(output.status.success());
    let cut = docs[0]["markdown"].as_str().unwrap();
    assert!(
        cut.starts_with("## Sales 2024\n\nUnits sold per region\n\n| Region | Month |"),
        "{cut}"
    );
    assert_eq!(cut.matches("## ").count(), 1, "{cut}");
    assert_eq!(docs[0]["metadata"]["sheets"], 1);
    assert_eq!(
        docs[1]["markdown"],
        "## Data\n\n| a | b | c |\n| --- | --- | --- |\n"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "sales.xlsx: more than 3 cells: sheet \"Sales 2024\" is cut short and the sheets \
             after it are left out"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "full.xlsx: more than 3 cells: sheet \"Limits\" and the sheets after it are left out"
        ),
        "{stderr}"
    );
}

#[test]
fn text_that_is_not_utf8_is_read_with_a_warning_naming_the_file() {
    let scope = tempfile::tempdir().unwrap();
    std::fs::write(
        scope.path().join("damaged.md"),
        b"# Caf\xC3\xA9 na\xC3\xAFve r\xC3\xA9sum\xC3\xA9\n\nbroken \xFF\xFE\xC3( bytes\n",
    )
    .unwrap();
    std::fs::write(
        scope.path().join("legacy.txt"),
        b"Le caf\xE9 est ferm\xE9 le lundi, \xE0 cause des f\xEAtes.\n",
    )
    .unwrap();
    let input = [
        file_record(scope.path(), "damaged.md"),
        file_record(scope.path(), "legacy.txt"),
    ];
    let (output, docs) = convert(&input, &["--no-store"]);
    assert!(output.status.success());
    assert_eq!(
        docs[0]["markdown"],
        "# Caf\u{e9} na\u{ef}ve r\u{e9}sum\u{e9}\n\nbroken \u{fffd}\u{fffd}\u{fffd}( bytes\n"
    );
    assert_eq!(
        docs[1]["markdown"],
        "Le caf\u{e9} est ferm\u{e9} le lundi, \u{e0} cause des f\u{ea}tes.\n"
    );
    assert_eq!(docs[1]["metadata"]["encoding"], "windows-1252");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("damaged.md: the file is not valid UTF-8"),
        "{stderr}"
    );
    assert!(
        stderr.contains("legacy.txt: the file is not UTF-8: read as windows-1252"),
        "{stderr}"
    );
}

#[test]
fn soft_hyphens_are_dropped_from_the_text_and_the_title() {
    let scope = tempfile::tempdir().unwrap();
    std::fs::write(
        scope.path().join("shy.html"),
        "<html><head><title>Docu&shy;mentation</title></head>\
         <body><p>The docu&shy;men&shy;ta&shy;tion portal moved.</p></body></html>",
    )
    .unwrap();
    std::fs::write(
        scope.path().join("shy.md"),
        "# Zeit\u{AD}konto\n\nArbeits\u{AD}zeit.\n",
    )
    .unwrap();
    let input = [
        file_record(scope.path(), "shy.html"),
        file_record(scope.path(), "shy.md"),
    ];
    let (output, docs) = convert(&input, &["--no-store"]);
    assert!(output.status.success());
    assert_eq!(docs[0]["title"], "Documentation");
    assert_eq!(docs[0]["markdown"], "The documentation portal moved.\n");
    assert_eq!(docs[1]["title"], "Zeitkonto");
    assert_eq!(docs[1]["markdown"], "# Zeitkonto\n\nArbeitszeit.\n");
}

#[test]
fn a_document_past_the_markdown_limit_is_a_too_large_error_and_the_stream_goes_on() {
    let scope = tempfile::tempdir().unwrap();
    let line = "The ledger is audited every quarter. ".repeat(30_000);
    std::fs::write(scope.path().join("big.md"), &line).unwrap();
    let table: String = (0..40_000)
        .map(|i| format!("row {i},ledger entry {i},audited\n"))
        .collect();
    std::fs::write(scope.path().join("big.csv"), &table).unwrap();
    // HTML is read first and its Markdown measured.
    let page = format!("<html><body><p>{line}</p></body></html>");
    std::fs::write(scope.path().join("big.html"), page).unwrap();
    std::fs::write(scope.path().join("small.md"), "# Small\n\nFits.\n").unwrap();
    let mut html = file_record(scope.path(), "big.html");
    html["format"] = "html".into();
    let input = [
        file_record(scope.path(), "big.md"),
        file_record(scope.path(), "big.csv"),
        html,
        file_record(scope.path(), "small.md"),
    ];
    let (output, records) = convert(&input, &["--no-store", "--max-markdown-mib", "1"]);
    assert!(!output.status.success(), "failures set the exit status");
    for (record, path) in records[..3].iter().zip(["big.md", "big.csv", "big.html"]) {
        assert_eq!(record["schema"], "kts.error/1");
        assert_eq!(record["path"], path);
        assert_eq!(record["code"], "too-large");
        assert!(
            record["message"]
                .as_str()
                .unwrap()
                .contains("--max-markdown-mib 1"),
            "{record}"
        );
    }
    assert_eq!(records[3]["path"], "small.md");
    assert_eq!(records[3]["schema"], "kts.doc/1");

    let (output, records) = convert(&input[..1], &["--no-store"]);
    assert!(output.status.success());
    assert_eq!(records[0]["schema"], "kts.doc/1");
}

#[test]
fn a_limit_or_count_of_zero_is_a_usage_error() {
    for flag in [
        "--threads",
        "--timeout",
        "--ocr-timeout",
        "--describe-timeout",
        "--max-markdown-mib",
        "--max-unpacked-mib",
        "--max-pages",
        "--max-cells",
        "--max-megapixels",
    ] {
        let (output, records) = run_convert(b"", &[flag, "0"]);
        assert_eq!(output.status.code(), Some(2), "{flag} 0");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(&format!("invalid value '0' for '{flag}")),
            "{stderr}"
        );
        assert!(records.is_empty());
    }
}

#[test]
fn a_time_limit_of_a_day_converts_and_a_longer_one_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a note\n").unwrap();
    let limits = ["--timeout", "--ocr-timeout", "--describe-timeout"];
    for flag in limits {
        let (output, records) = convert(
            &[file_record(dir.path(), "a.txt")],
            &[flag, "86400", "--no-store"],
        );
        assert!(output.status.success(), "{flag} 86400: {output:?}");
        assert_eq!(records[0]["schema"], "kts.doc/1", "{flag} 86400");

        let (output, records) = run_convert(b"", &[flag, "18446744073709551615"]);
        assert_eq!(output.status.code(), Some(2), "{flag} u64::MAX");
        assert!(String::from_utf8_lossy(&output.stderr).contains("1..=86400"));
        assert!(records.is_empty());
    }
}

#[test]
fn a_latex_paper_becomes_markdown_with_its_title_and_authors() {
    let scope = tempfile::tempdir().unwrap();
    let paper = r"\documentclass{article}
\newcommand{\product}{Stormbox}
\title{Servicing the \product{} Pump}
\author{Ann Lee \and Bo Chan}
\begin{document}
\maketitle
\begin{abstract}
How to service the \product. % internal: check with Bo
\end{abstract}
\section{Limits}
Pressure stays under $p_{max}$\footnote{See the data sheet.}.
\begin{itemize}
\item Drain the tank
\item Replace the seal
\end{itemize}
\begin{table}
\begin{tabular}{ll}
\hline
Part & Interval \\ \hline
Seal & 6 months \\
\end{tabular}
\caption{Service intervals}
\end{table}
\begin{equation}
Q = v A
\end{equation}
\input{appendix}
\end{document}
";
    std::fs::write(scope.path().join("pump.tex"), paper).unwrap();
    std::fs::write(
        scope.path().join("unterminated.ltx"),
        r"\begin{document}\begin{itemize}\item {open",
    )
    .unwrap();
    let input: Vec<Value> = ["pump.tex", "unterminated.ltx"]
        .iter()
        .map(|name| file_record(scope.path(), name))
        .collect();
    let (output, docs) = convert(&input, &["--no-store"]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let doc = &docs[0];
    assert_eq!(doc["format"], "latex");
    assert_eq!(doc["title"], "Servicing the Stormbox Pump");
    assert_eq!(doc["metadata"]["author"], "Ann Lee, Bo Chan");
    assert_eq!(
        doc["markdown"],
        "# Servicing the Stormbox Pump\n\nAnn Lee\n\nBo Chan\n\n## Abstract\n\nHow to service the Stormbox.\n\n\
         ## Limits\n\nPressure stays under $p_{max}$[^1].\n\n- Drain the tank\n- Replace the seal\n\n\
         | Part | Interval |\n| --- | --- |\n| Seal | 6 months |\n\nTable: Service intervals\n\n$$\nQ = v A\n$$\n\n\
         [included file: appendix.tex]\n\n[^1]: See the data sheet.\n"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("pump.tex: \\input{appendix.tex} is not followed"),
        "{stderr}"
    );
    assert_eq!(docs[1]["format"], "latex");
    assert_eq!(docs[1]["markdown"], "- open\n");
}
