//! kts-convert on PowerPoint 97–2003 presentations (.ppt) the tests write
//! themselves: converted, also when named .pptx, and refused cleanly when
//! encrypted or damaged.

use kts_tests::record_for;
use std::path::Path;
use std::process::Output;

use serde_json::Value;

#[path = "../src/formats/ppt/writer.rs"]
mod writer;

use writer::{BODY, OTHER, Presentation, Slide, TITLE, Text};

/// `SlideNumberMCAtom`.
const SLIDE_NUMBER_FIELD: u16 = 0x0FD8;

/// Writes the files into a new scope and converts them, in this order; a
/// file's format is its extension's.
fn convert_files(files: &[(&str, Vec<u8>)]) -> (Output, Vec<Value>) {
    let scope = tempfile::tempdir().unwrap();
    let lines: String = files
        .iter()
        .map(|(name, bytes)| {
            std::fs::write(scope.path().join(name), bytes).unwrap();
            let format = name.rsplit('.').next().unwrap();
            format!(
                "{}\n",
                kts_tests::new_file_record(scope.path(), name, format)
            )
        })
        .collect();
    kts_tests::run_jsonl(
        Path::new(env!("CARGO_BIN_EXE_kts-convert")),
        &[],
        lines.as_bytes(),
    )
}

fn briefing() -> Presentation {
    Presentation {
        slides: vec![
            Slide {
                listed: vec![
                    Text::new(TITLE, "Reisekosten"),
                    Text::new(BODY, "Hotels bis 120 €\rBelege aufheben")
                        .runs(&[(17, 0, None), (15, 1, None)]),
                ],
                boxes: vec![Text::new(OTHER, "Entwurf")],
                notes: Some("Nur für das Team.".into()),
                // The notes page's slide number, as LibreOffice writes it: a
                // field whose character is `*`.
                notes_boxes: vec![Text::new(OTHER, "*").field(SLIDE_NUMBER_FIELD, 0)],
                ..Slide::default()
            },
            Slide {
                listed: vec![Text::new(TITLE, "Fragen").eight_bit()],
                ..Slide::default()
            },
        ],
        ..Presentation::default()
    }
}

#[test]
fn presentations_are_read_also_when_misnamed_and_refused_cleanly_when_locked_or_damaged() {
    let bytes = briefing().to_bytes();
    let locked = Presentation {
        encrypted: true,
        ..briefing()
    };
    let (output, records) = convert_files(&[
        ("briefing.ppt", bytes.clone()),
        ("misnamed.pptx", bytes.clone()),
        ("locked.ppt", locked.to_bytes()),
        ("truncated.ppt", bytes[..bytes.len() / 2].to_vec()),
    ]);
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{err}");

    let expected = "<!-- slide: 1 -->\n\n## Reisekosten\n\n- Hotels bis 120 €\n    - Belege aufheben\n\n\
                    Entwurf\n\n\
                    ### Notes\n\nNur für das Team.\n\n<!-- slide: 2 -->\n\n## Fragen\n";
    for path in ["briefing.ppt", "misnamed.pptx"] {
        let doc = record_for(&records, path);
        assert_eq!(doc["schema"], "kts.doc/1", "{doc}");
        assert_eq!(doc["markdown"], expected);
        assert_eq!(doc["title"], "Reisekosten");
        assert_eq!(doc["metadata"]["slides"], 2);
    }
    assert_eq!(record_for(&records, "briefing.ppt")["format"], "ppt");

    for (path, code) in [("locked.ppt", "encrypted"), ("truncated.ppt", "corrupt")] {
        let error = record_for(&records, path);
        assert_eq!(error["schema"], "kts.error/1");
        assert_eq!(error["code"], code);
        assert!(
            err.contains(&format!("kts-convert: error (at {path}): {code}: ")),
            "{err}"
        );
    }
}
