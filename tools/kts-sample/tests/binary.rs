mod common;

use std::process::Command;

use kts_sample::{Block, DEMO_FILES, DEMO_MAIL_FILES, DEMO_TABLE_FILES, Format, Outline};

#[test]
fn writes_every_format_and_reports_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("sample");
    let out = Command::new(env!("CARGO_BIN_EXE_kts-sample"))
        .arg(&target)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty(), "nothing on stdout");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        stderr.lines().count(),
        DEMO_FILES.len() + DEMO_TABLE_FILES.len() + DEMO_MAIL_FILES.len()
    );
    for name in DEMO_TABLE_FILES.iter().chain(&DEMO_MAIL_FILES) {
        assert!(target.join(name).is_file(), "{name} was not written");
    }
    assert!(stderr.lines().all(|l| l.starts_with("kts-sample: ")));
    for format in kts_sample::ALL_FORMATS {
        let ext = format!(".{}", format.as_str());
        let (name, ..) = DEMO_FILES
            .iter()
            .find(|(n, ..)| n.ends_with(&ext))
            .unwrap_or_else(|| panic!("no {ext} file"));
        let bytes = std::fs::read(target.join(name)).unwrap();
        assert!(!bytes.is_empty(), "{name} is empty");
        match format {
            Format::Docx | Format::Pptx => {
                common::assert_consistent_package(&common::unzip_map(&bytes))
            }
            Format::Odt => common::assert_opendocument(&bytes, "text"),
            Format::Epub => common::assert_epub(&bytes),
            Format::Pdf => assert!(
                !pdf_extract::extract_text_from_mem(&bytes)
                    .unwrap()
                    .trim()
                    .is_empty()
            ),
            Format::Json => {
                drop(serde_json::from_slice::<serde_json::Value>(&bytes).expect("JSON"))
            }
            _ => assert!(String::from_utf8(bytes).is_ok()),
        }
    }
}

#[test]
fn demo_sources_have_headings_lists_tables_and_images() {
    for (name, format, markdown) in DEMO_FILES {
        let outline = Outline::from_markdown(markdown);
        assert!(!outline.title.is_empty(), "{name}");
        let has = |f: fn(&Block) -> bool| outline.blocks.iter().any(f);
        assert!(
            has(|b| matches!(b, Block::Heading { .. })),
            "{name} has no heading"
        );
        assert!(
            has(|b| matches!(b, Block::Bullets(_) | Block::Numbered(_))),
            "{name} has no list"
        );
        assert!(has(|b| matches!(b, Block::Table(_))), "{name} has no table");
        if matches!(format, Format::Docx | Format::Pptx) {
            assert!(
                has(|b| matches!(b, Block::Image { .. })),
                "{name} has no image"
            );
        }
        if format == Format::Pptx {
            assert!(has(|b| matches!(b, Block::Notes(_))), "{name} has no notes");
        }
    }
}

#[test]
fn usage_errors_exit_with_2() {
    let out = Command::new(env!("CARGO_BIN_EXE_kts-sample"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let help = Command::new(env!("CARGO_BIN_EXE_kts-sample"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&help.stdout)
            .contains("kts-sample sample && kts-crawl sample | kts-convert | kts-chunk | head")
    );
}

#[test]
fn command_is_exposed_for_man_pages() {
    assert_eq!(kts_sample::command().get_name(), "kts-sample");
}
