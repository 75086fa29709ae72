//! `--describe-images CMD`: a script stands in for an image describer and
//! counts its calls, to show that an image is described once and that its
//! description is searchable text in the Markdown.

use std::path::{Path, PathBuf};
use std::process::Output;

use kts_sample::{Block, Format, Outline, render, tiny_png};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

fn policy(extra: &str) -> Vec<u8> {
    let outline = Outline::new("Claims Guide")
        .paragraph("Open the claims portal and attach the receipts.")
        .block(Block::Image {
            png: tiny_png(8, 8, 11),
            alt: "portal screenshot".into(),
        })
        .paragraph(extra);
    render(&outline, Format::Docx).unwrap()
}

/// A describer that appends the image's name to `calls` and prints `said`.
fn describer(dir: &Path, said: &str) -> PathBuf {
    let script = dir.join("describe.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nbasename \"$1\" >> '{}'\n{said}\n",
            dir.join("calls").display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

fn calls(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("calls"))
        .map(|text| text.lines().count())
        .unwrap_or(0)
}

fn convert(root: &Path, flags: &[&str]) -> (Output, Value) {
    convert_file(root, "guide.docx", flags)
}

fn convert_file(root: &Path, path: &str, flags: &[&str]) -> (Output, Value) {
    let bytes = std::fs::read(root.join(path)).unwrap();
    let record = json!({
        "schema": "kts.file/1", "path": path, "root": root.to_str().unwrap(),
        "size": bytes.len(), "mtime": "2026-01-01T00:00:00.000000000Z",
        "sha256": Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect::<String>(),
        "format": "docx", "status": "new",
    });
    let (output, mut records) = kts_tests::run_jsonl(
        Path::new(env!("CARGO_BIN_EXE_kts-convert")),
        flags,
        format!("{record}\n").as_bytes(),
    );
    assert_eq!(records.len(), 1, "{output:?}");
    (output, records.remove(0))
}

#[test]
fn each_image_is_described_once_and_the_description_is_its_alt_text() {
    let scope = tempfile::tempdir().unwrap();
    let root = scope.path();
    let tools = tempfile::tempdir().unwrap();
    let script = describer(
        tools.path(),
        "echo 'A login form with a [blue] Submit button'",
    );
    let flags = ["--describe-images", script.to_str().unwrap()];
    std::fs::write(root.join("guide.docx"), policy("First version.")).unwrap();

    let (output, doc) = convert(root, &flags);
    assert!(output.status.success(), "{output:?}");
    let markdown = doc["markdown"].as_str().unwrap();
    let described = "![portal screenshot — A login form with a blue Submit button](images/";
    assert!(markdown.contains(described), "{markdown}");
    assert_eq!(calls(tools.path()), 1);
    let image = root.join(doc["images"][0]["path"].as_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(image.with_extension("txt")).unwrap(),
        "A login form with a blue Submit button"
    );

    // The document changes, its image does not: the stored description is used.
    std::fs::write(root.join("guide.docx"), policy("Second version.")).unwrap();
    let (_, doc) = convert(root, &flags);
    let markdown = doc["markdown"].as_str().unwrap();
    assert!(markdown.contains("Second version."), "{markdown}");
    assert!(markdown.contains(described), "{markdown}");
    assert_eq!(
        calls(tools.path()),
        1,
        "an unchanged image was described again"
    );

    // An unchanged document converted earlier without descriptions gets them.
    std::fs::write(root.join("guide.docx"), policy("Third version.")).unwrap();
    convert(root, &[]);
    let (_, doc) = convert(root, &flags);
    assert!(doc["markdown"].as_str().unwrap().contains(described));
    assert_eq!(calls(tools.path()), 1, "the stored description was lost");
}

#[test]
fn an_image_file_is_described_above_the_text_ocr_reads() {
    let scope = tempfile::tempdir().unwrap();
    let root = scope.path();
    let tools = tempfile::tempdir().unwrap();
    let script = describer(tools.path(), "echo 'A rack of servers'");
    let photo = tiny_png(64, 48, 5);
    std::fs::write(root.join("server_room.png"), &photo).unwrap();
    // A tesseract that finds no text in it.
    let no_text = ["--tesseract", "true"];

    let (_, doc) = convert_file(root, "server_room.png", &no_text);
    assert_eq!(doc["markdown"], "", "{doc}");
    let described = [
        &no_text[..],
        &["--describe-images", script.to_str().unwrap()],
    ]
    .concat();
    let (output, doc) = convert_file(root, "server_room.png", &described);
    assert!(output.status.success(), "{output:?}");
    let sha256: String = Sha256::digest(&photo)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        doc["markdown"],
        format!("![A rack of servers](images/{sha256}.png)\n")
    );
    assert_eq!(doc["metadata"]["described_images"], 1);
    assert_eq!(calls(tools.path()), 1);

    let (_, again) = convert_file(root, "server_room.png", &described);
    assert_eq!(again["markdown"], doc["markdown"]);
    assert_eq!(calls(tools.path()), 1, "the image file was described again");
}

#[test]
fn a_failing_or_slow_describer_costs_the_description_not_the_document() {
    let scope = tempfile::tempdir().unwrap();
    let root = scope.path();
    std::fs::write(root.join("guide.docx"), policy("Text.")).unwrap();
    for (said, why) in [
        ("echo 'no model here' >&2; exit 3", "no model here"),
        ("sleep 30", "--describe-timeout"),
    ] {
        let tools = tempfile::tempdir().unwrap();
        let script = describer(tools.path(), said);
        let (output, doc) = convert(
            root,
            &[
                "--no-store",
                "--describe-images",
                script.to_str().unwrap(),
                "--describe-timeout",
                "1",
            ],
        );
        assert!(output.status.success(), "{output:?}");
        assert!(
            doc["markdown"]
                .as_str()
                .unwrap()
                .contains("![portal screenshot](images/"),
            "{doc}"
        );
        let warnings = doc["metadata"]["warnings"].to_string();
        assert!(
            warnings.contains("image description command failed") && warnings.contains(why),
            "{warnings}"
        );
        assert!(
            String::from_utf8_lossy(&output.stderr).contains(why),
            "{output:?}"
        );
    }
}
