//! kts-convert on Word 97–2003 documents (.doc) the tests write themselves:
//! told by their content, converted, and refused cleanly when encrypted or
//! damaged.

use kts_tests::record_for;
use std::path::Path;
use std::process::Output;

use serde_json::Value;

#[path = "../src/formats/doc/writer.rs"]
mod writer;

use writer::Doc;

/// Writes the files into a new scope and converts them, in this order.
fn convert_files(files: &[(&str, Vec<u8>)]) -> (Output, Vec<Value>) {
    let scope = tempfile::tempdir().unwrap();
    let lines: String = files
        .iter()
        .map(|(name, bytes)| {
            std::fs::write(scope.path().join(name), bytes).unwrap();
            format!(
                "{}\n",
                kts_tests::new_file_record(scope.path(), name, "doc")
            )
        })
        .collect();
    kts_tests::run_jsonl(
        Path::new(env!("CARGO_BIN_EXE_kts-convert")),
        &[],
        lines.as_bytes(),
    )
}

fn policy() -> Doc {
    let mut doc = Doc::default();
    let heading = doc.style(4094, "Überschrift 1");
    doc.para("Reisekosten", heading)
        .para("Hotels bis 120 € pro Nacht.", 0)
        .row(&["Kategorie", "Grenze"])
        .row(&["Hotel", "120 €"])
        .item("Belege aufheben");
    doc.author = Some("Ann Lee".into());
    doc
}

#[test]
fn word_documents_are_read_by_content_and_refused_cleanly_when_locked_or_damaged() {
    let bytes = policy().to_bytes();
    let mut locked = policy();
    locked.encrypted = true;
    let (output, records) = convert_files(&[
        ("policy.doc", bytes.clone()),
        ("misnamed.docx", bytes.clone()),
        ("locked.doc", locked.to_bytes()),
        ("truncated.doc", bytes[..bytes.len() / 2].to_vec()),
    ]);
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{err}");

    let expected = "# Reisekosten\n\nHotels bis 120 € pro Nacht.\n\n\
                    | Kategorie | Grenze |\n| --- | --- |\n| Hotel | 120 € |\n\n1. Belege aufheben\n";
    for path in ["policy.doc", "misnamed.docx"] {
        let doc = record_for(&records, path);
        assert_eq!(doc["schema"], "kts.doc/1", "{doc}");
        assert_eq!(doc["markdown"], expected);
        assert_eq!(doc["title"], "Reisekosten");
        assert_eq!(doc["metadata"]["author"], "Ann Lee");
    }
    assert_eq!(record_for(&records, "policy.doc")["format"], "doc");

    for (path, code) in [("locked.doc", "encrypted"), ("truncated.doc", "corrupt")] {
        let error = record_for(&records, path);
        assert_eq!(error["schema"], "kts.error/1");
        assert_eq!(error["code"], code);
        assert!(
            err.contains(&format!("kts-convert: error (at {path}): {code}: ")),
            "{err}"
        );
    }
}
