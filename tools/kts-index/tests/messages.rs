//! kts-index's messages when the scope or stderr cannot be written or read.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use kts_record::scope_path::doc_id;
use serde_json::json;

fn doc_lines(name: &str) -> String {
    let path = format!("{name}.md");
    let doc = json!({"schema": "kts.doc/1", "doc_id": doc_id(&path), "path": path,
        "markdown": "x"});
    let chunk = json!({"schema": "kts.chunk/1", "chunk_id": format!("c-{name}"),
        "doc_id": doc_id(&path), "path": path, "index": 0, "text": "printer error",
        "start": 0, "end": 1});
    format!("{doc}\n{chunk}\n")
}

/// kts-index SCOPE on `input`, its stderr going to `stderr`.
fn index(scope: &std::path::Path, input: &str, stderr: Stdio) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kts-index"))
        .arg(scope)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .unwrap();
    // kts-index may stop before it reads its input (a store it cannot open).
    let written = (child.stdin.take().unwrap()).write_all(input.as_bytes());
    if let Err(e) = written {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_stderr_that_cannot_be_written_does_not_end_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = index(dir.path(), &doc_lines("a"), Stdio::from(full));
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn a_damaged_database_is_named_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let first = index(dir.path(), &doc_lines("a"), Stdio::piped());
    assert!(first.status.success());
    let db = dir.path().join(".kts/kts.db");
    let len = std::fs::metadata(&db).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&db)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    let out = index(dir.path(), &doc_lines("b"), Stdio::piped());
    assert_eq!(out.status.code(), Some(2));
    let message = String::from_utf8_lossy(&out.stderr);
    assert!(
        message.starts_with(&format!(
            "kts-index: error: {} cannot be read",
            db.display()
        )) && message.contains("move it aside to rebuild the scope"),
        "{message}"
    );
}

#[test]
fn a_database_damaged_inside_is_one_error_not_one_per_record() {
    let dir = tempfile::tempdir().unwrap();
    let numbers: Vec<String> = (1..=200).map(|i| i.to_string()).collect();
    let input: String = (1..=40)
        .map(|i| doc_lines(&format!("d{i}")).replace("printer error", &numbers.join(" ")))
        .collect();
    assert!(index(dir.path(), &input, Stdio::piped()).status.success());
    let db = dir.path().join(".kts/kts.db");
    let mut bytes = std::fs::read(&db).unwrap();
    for byte in &mut bytes[4096 * 3..4096 * 3 + 3000] {
        *byte ^= 0xA5;
    }
    std::fs::write(&db, bytes).unwrap();
    let changed = input.replace(" 200\"", " 200 more\"");
    let out = index(dir.path(), &changed, Stdio::piped());
    assert_eq!(out.status.code(), Some(2));
    let message = String::from_utf8_lossy(&out.stderr);
    assert!(!message.contains("bad-record"), "{message}");
    assert!(
        message.starts_with(&format!(
            "kts-index: error: {} cannot be read",
            db.display()
        )),
        "{message}"
    );
}

fn mode(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Runs `script` with `$KTS_INDEX` and `$SCOPE` set, the records on its stdin.
fn index_in_shell(scope: &std::path::Path, script: &str, input: &str) -> Output {
    let mut child = Command::new("sh")
        .args(["-c", script])
        .env_clear()
        .env("KTS_INDEX", env!("CARGO_BIN_EXE_kts-index"))
        .env("SCOPE", scope)
        .env("PATH", "/usr/bin:/bin")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _ = (child.stdin.take().unwrap()).write_all(input.as_bytes());
    child.wait_with_output().unwrap()
}

#[test]
fn the_index_files_are_made_as_the_umask_allows() {
    let dir = tempfile::tempdir().unwrap();
    let script = "umask 002; exec \"$KTS_INDEX\" \"$SCOPE\"";
    let out = index_in_shell(dir.path(), script, &doc_lines("a"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // SQLite would make the database 0644, tantivy its atomic writes 0600:
    // a group sharing the scope could neither update nor search it.
    let kts = dir.path().join(".kts");
    for file in ["kts.db", "lexical/meta.json", "lexical/.managed.json"] {
        assert_eq!(mode(&kts.join(file)), 0o664, "{file}");
    }
}

#[test]
fn a_database_this_user_may_not_write_is_named_with_its_owner_and_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    assert!(
        index(dir.path(), &doc_lines("a"), Stdio::piped())
            .status
            .success()
    );
    let kts = dir.path().join(".kts");
    let db = kts.join("kts.db");
    let set_mode = |path: &std::path::Path, mode| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    // Another user of the scope, who may write its folder but not its database.
    set_mode(&db, 0o444);
    let as_other_user = "if [ \"$(id -u)\" = 0 ]; then \
            exec setpriv --reuid=65534 --regid=65534 --clear-groups \"$KTS_INDEX\" \"$SCOPE\"; \
        fi; exec \"$KTS_INDEX\" \"$SCOPE\"";
    set_mode(dir.path(), 0o755);
    set_mode(&kts, 0o777);
    set_mode(&kts.join("write.lock"), 0o666);
    let out = index_in_shell(dir.path(), as_other_user, &doc_lines("b"));
    assert_eq!(out.status.code(), Some(2));
    let message = String::from_utf8_lossy(&out.stderr);
    assert!(
        message.starts_with(&format!(
            "kts-index: error: cannot write {}: it is owned by uid ",
            db.display()
        )) && message.contains("with mode 0444, which does not let uid ")
            && message.contains(&format!("chmod g+w {}", db.display())),
        "{message}"
    );
}

#[test]
fn a_store_of_another_format_says_what_gets_out_of_it() {
    let dir = tempfile::tempdir().unwrap();
    assert!(
        index(dir.path(), &doc_lines("a"), Stdio::piped())
            .status
            .success()
    );
    let db = dir.path().join(".kts/kts.db");
    let edit = |sql: &str| {
        rusqlite::Connection::open(&db)
            .unwrap()
            .execute_batch(sql)
            .unwrap()
    };
    edit("UPDATE meta SET value = '2' WHERE key = 'format_version'");
    let out = index(dir.path(), &doc_lines("b"), Stdio::piped());
    assert_eq!(out.status.code(), Some(2));
    let message = String::from_utf8_lossy(&out.stderr);
    let way_out = format!(
        "move it aside (mv {} {}.old) and index the scope again: kts-crawl {}",
        db.display(),
        db.display(),
        dir.path().display()
    );
    assert!(
        message.starts_with(&format!(
            "kts-index: error: {} has store format 2, written by a newer kts",
            db.display()
        )) && message.contains(&way_out),
        "{message}"
    );

    edit("DELETE FROM meta WHERE key = 'format_version'");
    let out = index(dir.path(), &doc_lines("b"), Stdio::piped());
    assert_eq!(out.status.code(), Some(2));
    let message = String::from_utf8_lossy(&out.stderr);
    assert!(
        message.starts_with(&format!(
            "kts-index: error: {} has no store format",
            db.display()
        )) && message.contains(&way_out),
        "{message}"
    );

    // The way out works.
    std::fs::rename(&db, dir.path().join(".kts/kts.db.old")).unwrap();
    assert!(
        index(dir.path(), &doc_lines("b"), Stdio::piped())
            .status
            .success()
    );
}

#[test]
fn an_index_that_cannot_be_reached_is_not_taken_for_none() {
    let dir = tempfile::tempdir().unwrap();
    let unmounted = dir.path().join("disk/scope-kts");
    let scope = dir.path().join("scope");
    std::fs::create_dir(&scope).unwrap();
    std::os::unix::fs::symlink(&unmounted, scope.join(".kts")).unwrap();
    let out = index(&scope, &doc_lines("a"), Stdio::piped());
    assert_eq!(out.status.code(), Some(2));
    let message = String::from_utf8_lossy(&out.stderr);
    assert!(
        message.starts_with(&format!(
            "kts-index: error: cannot reach the index {}: {} is a link to {}, which is not there",
            scope.join(".kts/kts.db").display(),
            scope.join(".kts").display(),
            unmounted.display()
        )),
        "{message}"
    );
    assert!(!unmounted.exists());
}

#[test]
fn a_folder_inside_an_index_folder_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let documents = dir.path().join(".kts/documents");
    std::fs::create_dir_all(&documents).unwrap();
    let out = index(&documents, &doc_lines("a"), Stdio::piped());
    assert_eq!(out.status.code(), Some(2));
    let message = String::from_utf8_lossy(&out.stderr);
    assert!(
        message.contains("the index folder of the scope"),
        "{message}"
    );
    assert!(!documents.join(".kts").exists());
}
