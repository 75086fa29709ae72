//! kts-crawl, run as a user runs it.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn crawl(dir: &Path, flags: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kts-crawl"))
        .arg(dir)
        .args(flags)
        .env_clear()
        .output()
        .expect("kts-crawl runs")
}

fn records(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("every line is JSON"))
        .collect()
}

fn statuses(output: &Output) -> Vec<(String, String)> {
    records(output)
        .iter()
        .map(|r| {
            (
                r["path"].as_str().unwrap().to_string(),
                r["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn write(path: &Path, content: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

#[test]
fn reports_new_unchanged_changed_and_deleted_files() {
    let scope = tempfile::tempdir().unwrap();
    write(&scope.path().join("a.md"), b"# A\n");
    write(&scope.path().join("sub/b.txt"), b"plain text\n");
    write(&scope.path().join("c.html"), b"<html><body>c</body></html>");

    let first = crawl(scope.path(), &[]);
    assert!(first.status.success());
    assert_eq!(
        statuses(&first),
        [
            ("a.md".into(), "new".into()),
            ("c.html".into(), "new".into()),
            ("sub/b.txt".into(), "new".into())
        ]
    );
    let record = &records(&first)[0];
    assert_eq!(record["schema"], "kts.file/1");
    assert_eq!(record["format"], "md");
    assert_eq!(record["size"], 4);
    assert_eq!(record["sha256"], sha256_hex(b"# A\n"));
    assert!(record["root"].as_str().unwrap().starts_with('/'));
    assert!(scope.path().join(".kts/manifest.json").is_file());

    write(&scope.path().join("a.md"), b"# A changed\n");
    std::fs::remove_file(scope.path().join("c.html")).unwrap();
    let second = crawl(scope.path(), &[]);
    assert_eq!(
        statuses(&second),
        [
            ("a.md".into(), "changed".into()),
            ("sub/b.txt".into(), "unchanged".into()),
            ("c.html".into(), "deleted".into())
        ]
    );

    let third = crawl(scope.path(), &["--changed-only"]);
    assert!(
        third.stdout.is_empty(),
        "nothing changed since the last crawl"
    );
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn changed_only_emits_work_and_deletions() {
    let scope = tempfile::tempdir().unwrap();
    write(&scope.path().join("keep.md"), b"keep");
    write(&scope.path().join("gone.md"), b"gone");
    crawl(scope.path(), &[]);
    write(&scope.path().join("new.md"), b"new");
    std::fs::remove_file(scope.path().join("gone.md")).unwrap();
    let output = crawl(scope.path(), &["--changed-only"]);
    assert_eq!(
        statuses(&output),
        [
            ("new.md".into(), "new".into()),
            ("gone.md".into(), "deleted".into())
        ]
    );
}

#[test]
fn once_a_scope_was_indexed_a_missing_index_makes_every_file_new() {
    let scope = tempfile::tempdir().unwrap();
    write(&scope.path().join("a.md"), b"# A\n");
    assert!(crawl(scope.path(), &[]).status.success());
    // Indexed after the crawl, as kts-index does at the end of the pipeline.
    let mut store =
        kts_store::Store::open_writer(scope.path(), kts_store::LockWait::NoWait).unwrap();
    store.refresh_lexical_index().unwrap();
    drop(store);

    // Moved aside (a damaged one, to rebuild it): the crawl knew what it held.
    std::fs::rename(
        scope.path().join(".kts/kts.db"),
        scope.path().join(".kts/kts.db.damaged"),
    )
    .unwrap();
    let output = crawl(scope.path(), &["--changed-only"]);
    assert_eq!(statuses(&output), [("a.md".into(), "new".into())]);
    assert_eq!(
        statuses(&crawl(scope.path(), &["--changed-only"])),
        [("a.md".into(), "new".into())],
        "still new until an index holds it"
    );
}

#[test]
fn an_index_that_cannot_be_read_stops_the_crawl() {
    let scope = tempfile::tempdir().unwrap();
    write(&scope.path().join("a.md"), b"# A\n");
    drop(kts_store::Store::open_writer(scope.path(), kts_store::LockWait::NoWait).unwrap());
    let db = scope.path().join(".kts/kts.db");
    write(&db, b"this is not an SQLite database");
    let output = crawl(scope.path(), &["--changed-only"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty(), "no file reported new");
    let message = String::from_utf8_lossy(&output.stderr);
    assert!(
        message.starts_with("kts-crawl: error: cannot read the index")
            && message.contains("move it aside to rebuild the scope"),
        "{message}"
    );

    // Out of reach: a .kts linked to a disk that is not mounted.
    std::fs::remove_dir_all(scope.path().join(".kts")).unwrap();
    let unmounted = scope.path().join("disk/kts");
    std::os::unix::fs::symlink(&unmounted, scope.path().join(".kts")).unwrap();
    let output = crawl(scope.path(), &["--changed-only", "--dry-run"]);
    assert_eq!(output.status.code(), Some(2));
    let message = String::from_utf8_lossy(&output.stderr);
    assert!(
        message.contains(&format!(
            "is a link to {}, which is not there",
            unmounted.display()
        )),
        "{message}"
    );
}

#[test]
fn a_folder_inside_an_index_folder_is_refused() {
    let scope = tempfile::tempdir().unwrap();
    write(&scope.path().join(".kts/documents/x/content.md"), b"# X\n");
    let output = crawl(&scope.path().join(".kts/documents"), &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let message = String::from_utf8_lossy(&output.stderr);
    assert!(
        message.contains("the index folder of the scope"),
        "{message}"
    );
    assert!(!scope.path().join(".kts/documents/.kts").exists());
}

#[test]
fn dry_run_leaves_the_manifest_alone() {
    let scope = tempfile::tempdir().unwrap();
    write(&scope.path().join("a.md"), b"a");
    crawl(scope.path(), &["--dry-run"]);
    assert!(!scope.path().join(".kts/manifest.json").exists());
    assert_eq!(
        statuses(&crawl(scope.path(), &[])),
        [("a.md".into(), "new".into())]
    );
}

#[test]
fn format_comes_from_content_and_junk_is_skipped() {
    let scope = tempfile::tempdir().unwrap();
    write(&scope.path().join("report.pdf.txt"), b"%PDF-1.4\n...");
    write(
        &scope.path().join("notes.bin"),
        &[0, 159, 146, 150, 0, 1, 2],
    );
    write(&scope.path().join("source.rs"), b"fn main() {}");
    write(&scope.path().join(".hidden.md"), b"hidden");
    write(&scope.path().join("~$lock.docx"), b"lock");
    write(&scope.path().join(".git/HEAD.md"), b"ref");
    write(&scope.path().join(".kts/documents/x/content.md"), b"stored");
    write(&scope.path().join("draft.md~"), b"backup");
    write(&scope.path().join("staff.csv"), b"name;city\nAda;Oslo\n");
    write(&scope.path().join("export.TSV"), b"a\tb\n1\t2\n");
    write(&scope.path().join("dump.csv"), &[0, 1, 2, 0, 255]);
    let output = crawl(scope.path(), &[]);
    let found: Vec<(String, String)> = records(&output)
        .iter()
        .map(|r| {
            (
                r["path"].as_str().unwrap().into(),
                r["format"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            ("export.TSV".into(), "csv".into()),
            ("report.pdf.txt".into(), "pdf".into()),
            ("staff.csv".into(), "csv".into()),
        ]
    );
}

#[test]
fn a_folder_named_for_the_parts_of_an_email_beside_it_is_skipped_and_named() {
    let scope = tempfile::tempdir().unwrap();
    let mail = b"From: a@example.com\nTo: b@example.com\nSubject: s\n\nbody\n";
    write(&scope.path().join("mail.eml"), mail);
    write(&scope.path().join("mail.eml#attachment/x.txt"), b"on disk");
    write(
        &scope.path().join("box.mbox"),
        b"From a@x Mon Jan  1 00:00:00 2024\nSubject: s\n\nhi\n",
    );
    write(&scope.path().join("box.mbox#message/1"), b"on disk");
    // Only beside an e-mail would its paths be those of documents inside one.
    write(&scope.path().join("notes.txt"), b"plain notes");
    write(&scope.path().join("notes.txt#attachment/y.txt"), b"kept");
    write(&scope.path().join("gone.eml#message/z.txt"), b"kept");

    let output = crawl(scope.path(), &[]);
    assert!(output.status.success(), "{output:?}");
    let paths: Vec<(String, String)> = statuses(&output);
    let paths: Vec<&str> = paths.iter().map(|(path, _)| path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "box.mbox",
            "gone.eml#message/z.txt",
            "mail.eml",
            "notes.txt",
            "notes.txt#attachment/y.txt"
        ]
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    for folder in ["mail.eml#attachment/", "box.mbox#message/"] {
        assert!(
            stderr.contains(&format!("skipped {folder}: its files would have the paths")),
            "{folder} not named in: {stderr}"
        );
    }
}

#[test]
fn images_are_documents_and_skipped_files_are_counted_and_named() {
    let scope = tempfile::tempdir().unwrap();
    write(
        &scope.path().join("scan.png"),
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR",
    );
    write(
        &scope.path().join("photo.jpeg"),
        &[0xFF, 0xD8, 0xFF, 0xE0, 0],
    );
    write(&scope.path().join("fax"), b"II*\0\x08\0\0\0");
    write(&scope.path().join("source.rs"), b"fn main() {}");
    write(
        &scope.path().join("data/notes.bin"),
        &[0, 159, 146, 150, 0, 1, 2],
    );
    write(&scope.path().join(".hidden.md"), b"hidden");

    let output = crawl(scope.path(), &[]);
    let formats: Vec<(String, String)> = records(&output)
        .iter()
        .map(|r| {
            (
                r["path"].as_str().unwrap().into(),
                r["format"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        formats,
        [
            ("fax".into(), "tiff".into()),
            ("photo.jpeg".into(), "jpg".into()),
            ("scan.png".into(), "png".into()),
        ]
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("skipped 2 file(s) of formats kts does not read"),
        "{stderr}"
    );
    assert!(!stderr.contains("source.rs"), "{stderr}");

    let stats = crawl(scope.path(), &["--stats"]);
    let stderr = String::from_utf8_lossy(&stats.stderr);
    assert!(stderr.contains("2 skipped as unsupported"), "{stderr}");

    let verbose = crawl(scope.path(), &["--verbose"]);
    let stderr = String::from_utf8_lossy(&verbose.stderr);
    for named in [
        "skipped source.rs: not a format kts reads",
        "skipped data/notes.bin:",
    ] {
        assert!(stderr.contains(named), "{named} missing from: {stderr}");
    }
    // Hidden files are left out by design, not reported as unsupported.
    assert!(!stderr.contains(".hidden.md"), "{stderr}");
}

#[cfg(unix)]
#[test]
fn symbolic_links_never_leave_the_scope_or_loop() {
    use std::os::unix::fs::symlink;
    let outside = tempfile::tempdir().unwrap();
    write(&outside.path().join("secret.md"), b"secret");
    let scope = tempfile::tempdir().unwrap();
    write(&scope.path().join("docs/a.md"), b"a");
    symlink(outside.path(), scope.path().join("docs/out")).unwrap();
    symlink(
        outside.path().join("secret.md"),
        scope.path().join("secret-link.md"),
    )
    .unwrap();
    symlink(scope.path().join("docs"), scope.path().join("docs/loop")).unwrap();
    symlink(
        scope.path().join("docs/a.md"),
        scope.path().join("alias.md"),
    )
    .unwrap();
    let output = crawl(scope.path(), &[]);
    assert!(output.status.success());
    let paths: Vec<String> = statuses(&output).into_iter().map(|(p, _)| p).collect();
    assert_eq!(paths, ["alias.md", "docs/a.md"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "kts-crawl: warning: skipped docs/out: symbolic link leads outside the scope"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("symbolic link loop"), "{stderr}");
}

#[cfg(unix)]
#[test]
fn a_link_whose_target_is_deleted_is_a_deleted_document() {
    use std::os::unix::fs::symlink;
    let scope = tempfile::tempdir().unwrap();
    write(&scope.path().join("secret.md"), b"# Secret\n");
    write(&scope.path().join("real/r1.md"), b"# R1\n");
    symlink("secret.md", scope.path().join("alias.md")).unwrap();
    symlink("real", scope.path().join("folder")).unwrap();
    assert!(crawl(scope.path(), &[]).status.success());

    std::fs::remove_file(scope.path().join("secret.md")).unwrap();
    std::fs::remove_dir_all(scope.path().join("real")).unwrap();
    let output = crawl(scope.path(), &[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(
        statuses(&output),
        [
            ("alias.md".into(), "deleted".into()),
            ("folder/r1.md".into(), "deleted".into()),
            ("real/r1.md".into(), "deleted".into()),
            ("secret.md".into(), "deleted".into()),
        ]
    );
    assert!(
        stderr.contains("skipped alias.md: broken symbolic link (to secret.md)")
            && stderr.contains("skipped folder: broken symbolic link (to real)"),
        "{stderr}"
    );
    assert!(
        crawl(scope.path(), &["--changed-only"]).stdout.is_empty(),
        "deleted once"
    );
}

#[cfg(unix)]
#[test]
fn a_file_whose_name_is_not_utf8_is_an_error_and_counted() {
    use std::os::unix::ffi::OsStrExt;
    let scope = tempfile::tempdir().unwrap();
    write(&scope.path().join("ok.md"), b"# Ok\n");
    let latin1 = std::ffi::OsStr::from_bytes(b"r\xe9sum\xe9.md");
    write(&scope.path().join(latin1), b"# Report\n");

    let output = crawl(scope.path(), &["--stats"]);
    assert_eq!(output.status.code(), Some(1));
    let files: Vec<String> = records(&output)
        .iter()
        .filter(|r| r["schema"] == "kts.file/1")
        .map(|r| r["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(files, ["ok.md"]);
    let errors: Vec<String> = records(&output)
        .iter()
        .filter(|r| r["schema"] == "kts.error/1")
        .map(|r| format!("{} {}", r["path"], r["code"]))
        .collect();
    assert_eq!(errors, ["\"r\u{fffd}sum\u{fffd}.md\" \"io\""]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("file name is not valid UTF-8")
            && stderr.contains(
                "0 unreadable, 1 not indexed (file name not valid UTF-8), 0 skipped as unsupported"
            ),
        "{stderr}"
    );
}

#[cfg(unix)]
#[test]
fn a_change_that_keeps_size_and_mtime_is_seen() {
    use std::os::unix::fs::symlink;
    let scope = tempfile::tempdir().unwrap();
    let fixed = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_704_067_200);
    let write_dated = |name: &str, content: &[u8]| {
        let path = scope.path().join(name);
        write(&path, content);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(fixed)
            .unwrap();
    };
    write_dated("v1.md", b"# 1.2.3 AAAA\n");
    write_dated("v2.md", b"# 1.2.4 BBBB\n");
    write_dated("install.md", b"# version 1.2.3\n");
    symlink("v1.md", scope.path().join("current.md")).unwrap();
    assert!(crawl(scope.path(), &[]).status.success());

    // A link repointed, and a file unpacked again with the old mtime (a
    // tick of the kernel's coarse clock later, so that its ctime differs).
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::remove_file(scope.path().join("current.md")).unwrap();
    symlink("v2.md", scope.path().join("current.md")).unwrap();
    write_dated("install.md", b"# version 1.2.4\n");
    let output = crawl(scope.path(), &["--changed-only"]);
    assert_eq!(
        statuses(&output),
        [
            ("current.md".into(), "changed".into()),
            ("install.md".into(), "changed".into()),
        ]
    );
    let current = &records(&output)[0];
    assert_eq!(current["sha256"], sha256_hex(b"# 1.2.4 BBBB\n"));
}

#[test]
fn a_closed_pipe_ends_quietly_with_status_zero() {
    let scope = tempfile::tempdir().unwrap();
    for i in 0..2000 {
        write(&scope.path().join(format!("doc{i:04}.md")), b"# doc\n");
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_kts-crawl"))
        .arg(scope.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 10];
    std::io::Read::read_exact(&mut stdout, &mut first).unwrap();
    drop(stdout);
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "status {:?}", output.status);
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn a_missing_folder_is_a_fatal_error() {
    let output = crawl(Path::new("/nonexistent/scope"), &[]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("kts-crawl: error: cannot open scope folder /nonexistent/scope"),
        "{stderr}"
    );
}

/// kts-crawl run as a user without root's power to read anything: as
/// `nobody` through setpriv when the tests run as root.
fn crawl_unprivileged(dir: &Path) -> Output {
    let uid = Command::new("id").arg("-u").output().expect("id runs");
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return crawl(dir, &[]);
    }
    Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_kts-crawl"))
        .arg(dir)
        .env_clear()
        .output()
        .expect("setpriv (util-linux) runs")
}

#[cfg(unix)]
#[test]
fn what_cannot_be_read_is_an_error_and_never_taken_for_deleted() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |path: &Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    let scope = tempfile::tempdir().unwrap();
    write(&scope.path().join("locked/x.md"), b"# Peaches\n");
    write(&scope.path().join("secret.md"), b"# Pears\n");
    write(&scope.path().join("open.md"), b"# Plums\n");
    write(&scope.path().join("gone.md"), b"# Figs\n");
    mode(scope.path(), 0o777);
    for path in ["locked", "locked/x.md", "secret.md", "open.md", "gone.md"] {
        mode(&scope.path().join(path), 0o777);
    }
    assert!(crawl_unprivileged(scope.path()).status.success());

    mode(&scope.path().join("locked"), 0o000);
    // Edited, so that the crawl must read it again (an unchanged one is not read).
    write(&scope.path().join("secret.md"), b"# Pears, ripe\n");
    mode(&scope.path().join("secret.md"), 0o000);
    std::fs::remove_file(scope.path().join("gone.md")).unwrap();
    let second = crawl_unprivileged(scope.path());
    mode(&scope.path().join("locked"), 0o777);
    assert_eq!(second.status.code(), Some(1));
    let errors: Vec<String> = records(&second)
        .iter()
        .filter(|r| r["schema"] == "kts.error/1")
        .map(|r| {
            format!(
                "{} {}",
                r["path"].as_str().unwrap(),
                r["code"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(errors, ["locked io", "secret.md io"]);
    let deleted: Vec<String> = records(&second)
        .iter()
        .filter(|r| r["status"] == "deleted")
        .map(|r| r["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(deleted, ["gone.md"], "only what is really gone");

    // Readable again: the folder's file unchanged (remembered), the edited one changed.
    mode(&scope.path().join("secret.md"), 0o777);
    let third = crawl_unprivileged(scope.path());
    assert!(third.status.success());
    assert_eq!(
        statuses(&third),
        [
            ("locked/x.md".to_string(), "unchanged".to_string()),
            ("open.md".to_string(), "unchanged".to_string()),
            ("secret.md".to_string(), "changed".to_string()),
        ]
    );
}

#[test]
fn a_knowledge_root_is_refused_before_anything_is_written() {
    let root = tempfile::tempdir().unwrap();
    write(&root.path().join("handbook/guide.md"), b"# Guide\n");
    write(&root.path().join("handbook/.kts/kts.db"), b"");
    write(&root.path().join("drafts/note.md"), b"# Note\n");

    let output = crawl(root.path(), &[]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("kts-crawl: error: ")
            && stderr.contains("is a knowledge root (indexed scopes under it: handbook)"),
        "{stderr}"
    );
    assert!(output.stdout.is_empty());
    assert!(
        !root.path().join(".kts").exists(),
        "the root has a manifest"
    );

    // --unchanged-scopes takes the root on purpose.
    let mut child = Command::new(env!("CARGO_BIN_EXE_kts-crawl"))
        .arg(root.path())
        .arg("--unchanged-scopes")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), b"handbook\ndrafts\n").unwrap();
    let listed = child.wait_with_output().unwrap();
    assert!(
        listed.status.success(),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
}

#[test]
fn what_ignore_files_name_is_left_out_and_deleted_once_indexed() {
    let repo = tempfile::tempdir().unwrap();
    std::fs::create_dir(repo.path().join(".git")).unwrap();
    write(&repo.path().join(".gitignore"), b"node_modules/\n");
    let scope = repo.path().join("docs");
    write(&scope.join("guide.md"), b"# Guide\n");
    write(&scope.join("drafts/old.md"), b"# Old\n");
    write(&scope.join("node_modules/pkg/README.md"), b"# Vendored\n");
    write(&scope.join("build.log.txt"), b"log\n");
    write(&scope.join("keep.log.txt"), b"kept\n");
    write(&scope.join(".ktsignore"), b"*.log.txt\n!keep.log.txt\n");

    let all = crawl(&scope, &["--no-ignore", "--dry-run"]);
    assert_eq!(records(&all).len(), 5);

    let first = crawl(&scope, &["--dry-run"]);
    let paths: Vec<String> = statuses(&first).into_iter().map(|(p, _)| p).collect();
    assert_eq!(paths, ["drafts/old.md", "guide.md", "keep.log.txt"]);
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert!(
        stderr.contains("left out 2 file(s) or folder(s)"),
        "{stderr}"
    );

    assert!(crawl(&scope, &[]).status.success());
    write(&scope.join(".ignore"), b"drafts/\n");
    let later = crawl(&scope, &[]);
    assert!(statuses(&later).contains(&("drafts/old.md".into(), "deleted".into())));
}
