//! The inputs fuzzing found a failure with (minimised, in
//! `fuzz/regressions/TARGET/`), run through the same checks, so that a fixed
//! failure stays fixed; and the fuzz targets and the checks stay in step.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

/// Some inputs once made a parser loop forever: each gets this long (the
/// fuzzer allowed 10 s, on an instrumented build).
const TIME_LIMIT: Duration = Duration::from_secs(60);

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn every_fuzz_target_has_a_check_and_every_check_a_target() {
    let files: Vec<String> = names_in(&fuzz_dir().join("fuzz_targets"))
        .into_iter()
        .filter_map(|name| name.strip_suffix(".rs").map(String::from))
        .collect();
    let mut checks: Vec<String> = kts_fuzz::TARGETS
        .iter()
        .map(|(name, _)| name.to_string())
        .collect();
    checks.sort();
    assert_eq!(files, checks);
}

#[test]
fn inputs_that_once_failed_pass() {
    let regressions = fuzz_dir().join("regressions");
    let mut ran = 0;
    for target in names_in(&regressions) {
        let check = kts_fuzz::target(&target)
            .unwrap_or_else(|| panic!("fuzz/regressions/{target}: no such fuzz target"));
        for input in names_in(&regressions.join(&target)) {
            let path = regressions.join(&target).join(&input);
            eprintln!("{target}: {input}");
            passes_in_time(
                check,
                std::fs::read(&path).unwrap(),
                &format!("{target}/{input}"),
            );
            ran += 1;
        }
    }
    assert!(ran > 0, "fuzz/regressions holds no input");
}

#[test]
fn the_checks_accept_ordinary_input() {
    for (name, check) in kts_fuzz::TARGETS {
        eprintln!("{name}");
        check(b"");
        check(b"# Fixing AUTH401\n\nHow do I clear the token cache?\n");
    }
}

/// The record-field check over the ways out of a scope that the tools must
/// refuse: `..`, absolute paths, symbolic links out of the scope and into
/// its index folder, and ids that are not kts's.
#[test]
fn the_record_field_check_holds_on_paths_that_leave_the_scope() {
    let check = kts_fuzz::target("record_paths").unwrap();
    for path in [
        "a.md",
        "sub/../a.md",
        "sub/a-link.md",
        "../outside/secret.md",
        "/etc/passwd",
        "escape/secret.md",
        "secret-link.md",
        ".kts/kts.db",
        "index-link/kts.db",
        "sub/../../outside/secret.md",
    ] {
        for id in ["0123456789abcdef", "../../../x", "0123456789ABCDEF"] {
            check(format!("{path}\n{id}").as_bytes());
        }
    }
}

/// Runs a check on its own thread; a panic in it is re-raised, and running
/// past [`TIME_LIMIT`] fails the test (the looping thread is left behind).
fn passes_in_time(check: kts_fuzz::Check, input: Vec<u8>, name: &str) {
    let (done_tx, done_rx) = mpsc::channel();
    let worker = std::thread::spawn(move || {
        check(&input);
        let _ = done_tx.send(());
    });
    match done_rx.recv_timeout(TIME_LIMIT) {
        Ok(()) => worker.join().unwrap(),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            std::panic::resume_unwind(worker.join().unwrap_err())
        }
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("fuzz/regressions/{name}: still running after {TIME_LIMIT:?}")
        }
    }
}
