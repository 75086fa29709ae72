//! kts-catalog's rebuild, and kts-index updating its scope's row, killed at
//! random moments: the catalog passes SQLite's integrity check and holds
//! either every row of before or every row of after, never a mix; the next
//! run completes.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use kts_catalog::{Catalog, CatalogRow, catalog_path};

const SCOPES: usize = 60;

fn index_all(root: &Path, scopes: impl Iterator<Item = usize>) {
    let script: String = scopes
        .map(|i| {
            let dir = root.join(format!("scope-{i:02}"));
            let dir = dir.display();
            format!("kts-crawl '{dir}' | kts-convert | kts-chunk | kts-index '{dir}' --quiet || exit 1\n")
        })
        .collect();
    kts_tests::succeeded(kts_tests::shell(&script));
}

fn write_scope(root: &Path, i: usize, documents: usize) {
    let dir = root.join(format!("scope-{i:02}"));
    std::fs::create_dir_all(&dir).unwrap();
    for d in 0..documents {
        let text = format!(
            "# Ledger {i} report {d}\n\nThe ledger of scope {i} was audited in 20{:02}. \
             Report {d} lists its entries.\n",
            10 + d
        );
        std::fs::write(dir.join(format!("report-{d}.md")), text).unwrap();
    }
}

fn rows(root: &Path) -> Vec<CatalogRow> {
    let check: String = rusqlite::Connection::open(catalog_path(root))
        .unwrap()
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    Catalog::open(root).unwrap().scopes().unwrap()
}

/// Puts a saved catalog file back in place (its WAL files removed).
fn restore(root: &Path, saved: &[u8]) {
    let path = catalog_path(root);
    for suffix in ["-wal", "-shm"] {
        let mut side = path.as_os_str().to_owned();
        side.push(suffix);
        let _ = std::fs::remove_file(side);
    }
    std::fs::write(&path, saved).unwrap();
}

fn rebuild(root: &Path) -> std::process::Child {
    Command::new(kts_tests::bin("kts-catalog"))
        .arg(root)
        .arg("--quiet")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn sigkill_during_a_rebuild_leaves_the_whole_catalog_of_before_or_after() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    for i in 0..SCOPES {
        write_scope(root, i, 2);
    }
    index_all(root, 0..SCOPES);
    assert!(rebuild(root).wait().unwrap().success());
    let before = rows(root);
    let saved = std::fs::read(catalog_path(root)).unwrap();

    // Every third scope gains documents, indexed while the catalog is away
    // (kts-index would otherwise update its row itself).
    let aside = root.join("catalog-aside");
    std::fs::rename(catalog_path(root), &aside).unwrap();
    for i in (0..SCOPES).step_by(3) {
        write_scope(root, i, 4);
    }
    index_all(root, (0..SCOPES).step_by(3));
    std::fs::remove_file(&aside).unwrap();
    restore(root, &saved);
    let started = Instant::now();
    assert!(rebuild(root).wait().unwrap().success());
    let window = started.elapsed();
    let after = rows(root);
    assert_ne!(before, after);

    let kills = kts_tests::Kills {
        seed: 7,
        window,
        rounds: 20,
        cut_off: 8,
    };
    kts_tests::kill_at_random_moments(
        kills,
        |_| {
            restore(root, &saved);
            rebuild(root)
        },
        |round| {
            let now = rows(root);
            assert!(
                now == before || now == after,
                "round {round}: the catalog holds a mix of before and after"
            );
        },
    );
    assert!(rebuild(root).wait().unwrap().success());
    assert_eq!(rows(root), after);
}

/// The stream kts-index reads for root/scope-00 holding `documents` reports
/// (made by the real pipeline from a copy, so the scope itself is left
/// alone, then given the scope's root, as kts-index refuses another's).
fn stream(root: &Path, documents: usize) -> String {
    let copy = root.join(format!("stream-{documents}"));
    std::fs::create_dir_all(&copy).unwrap();
    write_scope(&copy, 0, documents);
    let source = copy.join("scope-00").canonicalize().unwrap();
    let output = kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-crawl '{}' | kts-convert --no-store | kts-chunk",
        source.display()
    )));
    std::fs::remove_dir_all(&copy).unwrap();
    let scope = root.join("scope-00").canonicalize().unwrap();
    String::from_utf8(output.stdout).unwrap().replace(
        &format!("\"root\":\"{}\"", source.display()),
        &format!("\"root\":\"{}\"", scope.display()),
    )
}

fn kts_index(scope: &Path, stream: &str, reindex: bool) -> std::process::Child {
    let mut command = Command::new(kts_tests::bin("kts-index"));
    command.arg(scope).arg("--quiet").arg("--batch").arg("1");
    if reindex {
        command.arg("--reindex");
    }
    kts_tests::spawn_fed(command.stdout(Stdio::null()).stderr(Stdio::piped()), stream)
}

/// Waits for a run that must succeed, failing with what it said on stderr.
fn completes(run: std::process::Child) {
    kts_tests::succeeded(run.wait_with_output().unwrap());
}

#[test]
fn sigkill_while_kts_index_updates_its_row_leaves_the_row_of_before_or_after() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    for i in 0..20 {
        write_scope(root, i, 2);
    }
    index_all(root, 0..20);
    assert!(rebuild(root).wait().unwrap().success());
    let before = rows(root);
    let saved = std::fs::read(catalog_path(root)).unwrap();
    let (two, eight) = (stream(root, 2), stream(root, 8));
    let scope = root.join("scope-00");

    let started = Instant::now();
    completes(kts_index(&scope, &eight, true));
    let window = started.elapsed();
    // Each run stamps its row with its time: rows are compared without it.
    let unstamped = |mut rows: Vec<CatalogRow>| {
        rows.iter_mut().for_each(|row| row.last_indexed.clear());
        rows
    };
    let before = unstamped(before);
    let after = unstamped(rows(root));
    assert_eq!(after[0].documents, 8);
    assert_eq!(after[1..], before[1..]);

    let kills = kts_tests::Kills {
        seed: 9,
        window,
        rounds: 20,
        cut_off: 8,
    };
    kts_tests::kill_at_random_moments(
        kills,
        |_| {
            completes(kts_index(&scope, &two, true));
            restore(root, &saved);
            kts_index(&scope, &eight, true)
        },
        |round| {
            let now = unstamped(rows(root));
            assert!(
                now == before || now == after,
                "round {round}: scope-00's row is {:?}",
                now[0]
            );
        },
    );
    completes(kts_index(&scope, &eight, true));
    assert_eq!(unstamped(rows(root)), after);
}
