//! Scopes on media that will not take writes: read-only mounts and full
//! disks. Readers answer as before; writers stop with one clear message and
//! leave the store as it was; with space again, a run completes.
//!
//! As root the tests mount what they need (a read-only bind mount, a small
//! tmpfs). Without root they use what a user has: a folder without write
//! permission, and RLIMIT_FSIZE (`ulimit -f`) for a disk that fills up.

use std::path::Path;
use std::process::{Command, Output};

use kts_tests::{shell, succeeded};

fn is_root() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().next())
        == Some("0")
}

fn run(program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program} does not run: {e}"))
}

/// The bundled sample in `dir`, indexed with embeddings and a graph.
fn indexed_sample(dir: &Path) {
    succeeded(run(
        kts_tests::bin("kts-sample").to_str().unwrap(),
        &[dir.to_str().unwrap()],
    ));
    let dir = dir.display();
    succeeded(shell(&format!(
        "kts-crawl {dir} | kts-convert | kts-chunk | kts-embed | kts-index {dir} && kts-graph {dir}"
    )));
}

/// The hits' (path, chunk) for a question, hybrid and bm25.
fn answers(dir: &Path) -> Vec<Vec<(String, String)>> {
    ["hybrid", "bm25"]
        .iter()
        .map(|mode| {
            let output = succeeded(shell(&format!(
                "kts-query {} 'which formats does kts read' --mode {mode} --top-k 5",
                dir.display()
            )));
            let hits: Vec<(String, String)> = String::from_utf8_lossy(&output.stdout)
                .lines()
                .map(|line| {
                    let hit: serde_json::Value = serde_json::from_str(line).unwrap();
                    (
                        hit["path"].as_str().unwrap().to_string(),
                        hit["chunk_id"].as_str().unwrap().to_string(),
                    )
                })
                .collect();
            assert!(!hits.is_empty(), "no {mode} hits in {}", dir.display());
            hits
        })
        .collect()
}

fn store_is_whole(dir: &Path) -> usize {
    let store = kts_store::Store::open_read(dir).unwrap();
    let check: String = store
        .connection()
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    store.counts().unwrap().0
}

/// Unmounts on drop, so a failing test leaves no mount behind.
struct Mount(std::path::PathBuf);

impl Mount {
    fn new(args: &[&str], at: &Path) -> Mount {
        let mut all = args.to_vec();
        all.push(at.to_str().unwrap());
        let output = run("mount", &all);
        assert!(
            output.status.success(),
            "running as root, this test needs `mount {}`: {}",
            all.join(" "),
            String::from_utf8_lossy(&output.stderr)
        );
        Mount(at.to_path_buf())
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = run("umount", &[self.0.to_str().unwrap()]);
    }
}

/// Sets a folder tree's write permission bits off (`on` false) or back on.
fn writable(dir: &Path, on: bool) {
    let mode = if on { "u+w" } else { "a-w" };
    succeeded(run("chmod", &["-R", mode, dir.to_str().unwrap()]));
}

#[test]
fn a_scope_on_read_only_media_answers_and_writers_refuse_with_one_message() {
    let work = tempfile::tempdir().unwrap();
    let scope = work.path().join("scope");
    indexed_sample(&scope);
    let before = answers(&scope);
    let db = std::fs::read(kts_store::db_path(&scope)).unwrap();

    // The scope as a reader finds it: a read-only mount, or without root a
    // folder this user cannot write.
    let read_only = work.path().join("read-only");
    std::fs::create_dir(&read_only).unwrap();
    let _mount = is_root().then(|| {
        let mount = Mount::new(&["--bind", scope.to_str().unwrap()], &read_only);
        let remount = run(
            "mount",
            &["-o", "remount,bind,ro", read_only.to_str().unwrap()],
        );
        succeeded(remount);
        mount
    });
    let read_only = if is_root() {
        read_only
    } else {
        writable(&scope, false);
        scope.clone()
    };

    assert_eq!(answers(&read_only), before);
    let explained = succeeded(shell(&format!(
        "kts-query {} 'formats' --mode bm25 --explain",
        read_only.display()
    )));
    assert!(
        String::from_utf8_lossy(&explained.stdout).contains("from the lexical index"),
        "BM25 should come from the lexical index, read without its lock file"
    );
    for writer in [
        format!("kts-index {} </dev/null", read_only.display()),
        format!("kts-graph {}", read_only.display()),
    ] {
        let output = shell(&writer);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{writer} succeeded");
        assert_eq!(stderr.lines().count(), 1, "{writer}: {stderr}");
        assert!(
            stderr.contains("can be queried here but not indexed"),
            "{writer}: {stderr}"
        );
    }
    if !is_root() {
        writable(&scope, true);
    }
    drop(_mount);
    assert_eq!(std::fs::read(kts_store::db_path(&scope)).unwrap(), db);
}

#[test]
fn writers_stop_cleanly_on_a_full_disk_and_a_later_run_completes() {
    let work = tempfile::tempdir().unwrap();
    let disk = work.path().join("disk");
    std::fs::create_dir(&disk).unwrap();
    let _tmpfs = is_root().then(|| Mount::new(&["-t", "tmpfs", "-o", "size=32m", "tmpfs"], &disk));
    let scope = disk.join("scope");
    indexed_sample(&scope);
    let before = answers(&scope);
    let documents = store_is_whole(&scope);

    for i in 0..30 {
        let words: Vec<String> = (0..600)
            .map(|w| format!("ledger{} audit{}", (i * 7 + w) % 97, w % 13))
            .collect();
        let text = format!("# Quarterly ledger {i}\n\n{}\n", words.join(" "));
        std::fs::write(scope.join(format!("ledger-{i}.md")), text).unwrap();
    }
    let dir = scope.display();
    let pipeline = format!(
        "kts-crawl {dir} | kts-convert | kts-chunk | kts-embed | kts-index {dir} && kts-graph {dir}"
    );
    // As root a real ENOSPC: the tmpfs filled up to its last few KB. Else
    // no file may grow past 64 KB (SIGXFSZ ignored, so writes fail).
    let filler = disk.join("filler");
    let limited = if is_root() {
        let free = fs_free(&disk);
        std::fs::write(&filler, vec![0u8; free.saturating_sub(48 << 10) as usize]).unwrap();
        pipeline.clone()
    } else {
        format!("ulimit -f 128; trap '' XFSZ; {pipeline}")
    };
    let output = shell(&limited);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "the pipeline ran on a full disk");
    assert!(
        ["No space left", "is full", "File too large", "disk is full"]
            .iter()
            .any(|said| stderr.contains(said)),
        "the error says what happened: {stderr}"
    );

    // The previous state (and whatever was committed before the disk
    // filled): whole, and answering as before, the disk still full.
    assert!(store_is_whole(&scope) >= documents);
    assert_eq!(answers(&scope), before);

    let _ = std::fs::remove_file(&filler);
    succeeded(shell(&pipeline));
    assert_eq!(store_is_whole(&scope), documents + 30);
}

/// Free bytes on the file system holding `dir` (`df`).
fn fs_free(dir: &Path) -> u64 {
    let output = succeeded(run("df", &["-B1", "--output=avail", dir.to_str().unwrap()]));
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .nth(1)
        .and_then(|line| line.trim().parse().ok())
        .expect("df prints the free bytes")
}
