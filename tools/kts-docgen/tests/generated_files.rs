//! The committed schemas, man pages and completions match the code, and
//! `kts-docgen --check` catches the ones that do not.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use kts_docgen::{REGENERATE, WORKSPACE_ROOT, generate, problems};

#[test]
fn committed_files_are_up_to_date() {
    let files = generate().expect("generation works");
    let found = problems(Path::new(WORKSPACE_ROOT), &files).expect("the workspace is readable");
    let listed: Vec<String> = found.iter().map(ToString::to_string).collect();
    assert!(
        found.is_empty(),
        "{} generated files are out of date; run `{REGENERATE}` and commit the result:\n\n{}",
        found.len(),
        listed.join("\n")
    );
}

#[test]
fn generation_is_deterministic() {
    assert_eq!(generate().unwrap(), generate().unwrap());
}

#[test]
fn check_lists_stale_missing_and_orphaned_files_and_writes_nothing() {
    let root = tempfile::tempdir().unwrap();
    let written = docgen(&[root.path().to_str().unwrap()]);
    assert!(written.status.success(), "{}", stderr(&written));
    assert!(
        docgen(&["--check", root.path().to_str().unwrap()])
            .status
            .success()
    );

    let man = root.path().join("man/kts-chunk.1");
    let edited = fs::read_to_string(&man)
        .unwrap()
        .replacen("EXIT STATUS", "EXIT CODES", 1);
    fs::write(&man, &edited).unwrap();
    fs::remove_file(root.path().join("schemas/kts.doc.v1.schema.json")).unwrap();
    fs::write(root.path().join("completions/kts-old.bash"), "").unwrap();
    fs::write(root.path().join("schemas/README.md"), "handwritten").unwrap();

    let checked = docgen(&["--check", root.path().to_str().unwrap()]);
    let report = stderr(&checked);
    assert_eq!(checked.status.code(), Some(1), "{report}");
    assert!(report.contains("stale: man/kts-chunk.1"), "{report}");
    assert!(report.contains("-.SH \"EXIT CODES\""), "{report}");
    assert!(report.contains("+.SH \"EXIT STATUS\""), "{report}");
    assert!(
        report.contains("missing: schemas/kts.doc.v1.schema.json"),
        "{report}"
    );
    assert!(
        report.contains("no longer generated: completions/kts-old.bash"),
        "{report}"
    );
    assert!(!report.contains("README"), "{report}");
    assert!(report.contains(REGENERATE), "{report}");
    assert_eq!(
        fs::read_to_string(&man).unwrap(),
        edited,
        "--check wrote a file"
    );

    let rewritten = docgen(&[root.path().to_str().unwrap()]);
    assert!(rewritten.status.success(), "{}", stderr(&rewritten));
    assert!(
        docgen(&["--check", root.path().to_str().unwrap()])
            .status
            .success()
    );
    assert!(root.path().join("schemas/README.md").exists());
}

fn docgen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kts-docgen"))
        .args(args)
        .env_clear()
        .output()
        .expect("kts-docgen runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}
