//! kts-mcp with real clients: the official Python MCP SDK over stdio and
//! HTTP (tests/python/client.py, installed by tests/python/setup, which
//! `make test` runs), on a knowledge root the real pipeline builds. Also:
//! many clients while kts-index rewrites the scope, and a SIGKILL mid-request.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

mod common;

use common::serve_http;
use kts_tests::{bin, shell, succeeded};

const SUPPORT_DOCS: [(&str, &str); 3] = [
    (
        "printer-faq.md",
        "# Printer FAQ\n\n## Why does the printer show error P-17?\n\nError P-17 means the paper \
         tray is empty. Refill the tray and press Resume.\n",
    ),
    (
        "vpn-guide.md",
        "# VPN setup guide\n\n## Connecting from home\n\nInstall the VPN client, sign in with your \
         badge number and choose the nearest gateway. A corrupt profile file is fixed by \
         deleting it and signing in again.\n",
    ),
    (
        "leave-policy.md",
        "# Leave policy\n\nEmployees accrue 2.5 days of annual leave per month. Unused days \
         are retained until the end of March.\n",
    ),
];

/// A knowledge root of two scopes, `handbook` (kts's own documentation in
/// every format) and `support`, indexed, with graphs and a catalog; built
/// once for the tests of this file.
fn root() -> &'static Path {
    static ROOT: OnceLock<tempfile::TempDir> = OnceLock::new();
    ROOT.get_or_init(|| {
        let root = tempfile::tempdir().unwrap();
        kts_sample::write_demo(&root.path().join("handbook")).unwrap();
        let support = root.path().join("support");
        std::fs::create_dir_all(&support).unwrap();
        for (name, text) in SUPPORT_DOCS {
            std::fs::write(support.join(name), text).unwrap();
        }
        succeeded(shell(&format!(
            "cd '{}' && for scope in handbook support; do \
               kts-crawl $scope | kts-convert | kts-chunk | kts-embed | kts-index $scope \
               && kts-graph $scope || exit 1; done && kts-catalog .",
            root.path().display()
        )));
        root
    })
    .path()
}

/// The client's Python, from tests/python/setup.
fn python() -> PathBuf {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/.venv/bin/python");
    assert!(
        python.is_file(),
        "the Python MCP SDK is needed for these tests: run tools/kts-mcp/tests/python/setup \
         (make test does); looked for {}",
        python.display()
    );
    python
}

/// Runs client.py with `args`; panics with its output unless it succeeds.
fn client(args: &[&str]) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/client.py");
    let output = Command::new(python())
        .arg(script)
        .args(args)
        .output()
        .expect("python runs");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    );
    assert!(
        output.status.success(),
        "client.py {args:?} failed:\n{stdout}\n{stderr}"
    );
    stdout
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 temporary path")
}

fn stop(mut server: Child) {
    succeeded(shell(&format!("kill -TERM {}", server.id())));
    let status = server.wait().unwrap();
    assert!(
        status.success(),
        "kts-mcp ended with {status} after SIGTERM"
    );
}

#[test]
fn a_stdio_client_on_a_scope_gets_what_kts_query_gives() {
    let scope = root().join("handbook");
    client(&[
        "check",
        path_str(&scope),
        "--server",
        path_str(&bin("kts-mcp")),
        "--query",
        path_str(&bin("kts-query")),
    ]);
}

#[test]
fn a_stdio_client_on_a_knowledge_root_gets_what_kts_query_gives() {
    client(&[
        "check",
        path_str(root()),
        "--server",
        path_str(&bin("kts-mcp")),
        "--query",
        path_str(&bin("kts-query")),
    ]);
}

#[test]
fn an_http_client_needs_the_token_and_then_gets_what_kts_query_gives() {
    let (server, url) = serve_http(root(), &["--token", "s3cret"]);
    client(&[
        "check",
        path_str(root()),
        "--http",
        &url,
        "--token",
        "s3cret",
        "--query",
        path_str(&bin("kts-query")),
    ]);
    client(&["unauthorised", "--http", &url]);
    stop(server);
}

#[test]
fn remote_listening_needs_a_token() {
    let refused = Command::new(bin("kts-mcp"))
        .arg(root())
        .args(["--http", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--allow-remote"));
    let refused = Command::new(bin("kts-mcp"))
        .arg(root())
        .args(["--http", "0.0.0.0:0", "--allow-remote"])
        .env_remove("KTS_MCP_TOKEN")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&refused.stderr).contains("requires --token"));
}

/// A copy of the handbook scope, and its chunk stream embedded: the same
/// stream kts-index may be fed again and again.
fn scope_copy(name: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let scope = dir.path().join(name);
    let stream = dir.path().join("chunks.jsonl");
    kts_sample::write_demo(&scope).unwrap();
    succeeded(shell(&format!(
        "kts-crawl '{0}' | kts-convert | kts-chunk | kts-embed > '{1}' && kts-index '{0}' < '{1}'",
        scope.display(),
        stream.display()
    )));
    (dir, scope, stream)
}

fn resident_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

#[test]
fn sixteen_clients_search_while_kts_index_rewrites_the_scope() {
    let (dir, scope, stream) = scope_copy("busy");
    // The stream without its last document, with that document deleted:
    // indexing the two in turn removes and adds it (and rewrites vectors.bin).
    let full = std::fs::read_to_string(&stream).unwrap();
    let last_doc = full
        .lines()
        .rfind(|l| l.contains("\"kts.doc/1\""))
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .unwrap();
    let without: String = full
        .lines()
        .filter(|l| !l.contains(last_doc["doc_id"].as_str().unwrap()))
        .map(|l| format!("{l}\n"))
        .chain(std::iter::once(format!(
            "{}\n",
            serde_json::json!({"schema": "kts.file/1", "path": last_doc["path"], "size": 0,
                "mtime": "2026-01-01T00:00:00Z", "sha256": "", "format": "md", "status": "deleted"})
        )))
        .collect();
    let smaller = dir.path().join("smaller.jsonl");
    std::fs::write(&smaller, without).unwrap();

    let (server, url) = serve_http(&scope, &["--quiet"]);
    let pid = server.id();
    let load = |searches: &str| {
        client(&[
            "load",
            "--http",
            &url,
            "--clients",
            "16",
            "--searches",
            searches,
            "how do I fix a corrupt file",
            "what is a kts.chunk/1 record",
            "how long are documents retained",
            "which stage embeds chunks",
        ])
    };
    // A first round warms the server up: its memory after it is the baseline.
    load("10");
    let warm = resident_kib(pid, "VmRSS:");
    // kts-index deletes only what is gone: the file is moved out in turn.
    let (last_file, moved_out) = (
        scope.join(last_doc["path"].as_str().unwrap()),
        dir.path().join("moved-out"),
    );
    let indexing = {
        let (scope, stream, smaller) = (scope.clone(), stream.clone(), smaller.clone());
        std::thread::spawn(move || {
            for round in 0..6 {
                let input = if round % 2 == 0 {
                    std::fs::rename(&last_file, &moved_out).unwrap();
                    &smaller
                } else {
                    std::fs::rename(&moved_out, &last_file).unwrap();
                    &stream
                };
                succeeded(shell(&format!(
                    "kts-index '{}' < '{}'",
                    scope.display(),
                    input.display()
                )));
            }
        })
    };
    let summary: serde_json::Value = serde_json::from_str(load("50").trim()).unwrap();
    indexing.join().unwrap();
    let peak = resident_kib(pid, "VmHWM:");
    let after = resident_kib(pid, "VmRSS:");
    println!(
        "16 clients x 50 searches beside kts-index: {summary}; RSS warm {warm} KiB, after {after} KiB, peak {peak} KiB"
    );
    assert_eq!(summary["requests"], 800);
    assert_eq!(summary["failures"], serde_json::json!([]), "{summary}");
    assert!(
        after < warm * 2 + 64 * 1024,
        "memory grew from {warm} KiB to {after} KiB"
    );
    stop(server);
}

/// Every file of the scope's index with its bytes' hash (SQLite's -shm and
/// -wal files, which readers may create, left out).
fn index_files(scope: &Path) -> BTreeMap<PathBuf, u64> {
    use std::hash::{Hash, Hasher};
    let mut files = BTreeMap::new();
    let mut pending = vec![scope.join(".kts")];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if !path.to_string_lossy().ends_with("-shm")
                && !path.to_string_lossy().ends_with("-wal")
            {
                let mut hasher = std::collections::hash_map::DefaultHasher::new();
                std::fs::read(&path).unwrap().hash(&mut hasher);
                files.insert(path, hasher.finish());
            }
        }
    }
    files
}

#[test]
fn a_sigkill_mid_request_leaves_the_scope_unchanged() {
    let (_dir, scope, _) = scope_copy("killed");
    let before = index_files(&scope);
    let documents = kts_store::Store::open_read(&scope)
        .unwrap()
        .counts()
        .unwrap()
        .0;
    assert!(documents > 0);
    for delay_ms in [0, 5, 20, 80] {
        let mut server = Command::new(bin("kts-mcp"))
            .arg(&scope)
            .arg("--quiet")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut input = server.stdin.take().unwrap();
        let mut output = BufReader::new(server.stdout.take().unwrap());
        let send = |input: &mut std::process::ChildStdin, message: serde_json::Value| {
            writeln!(input, "{message}").unwrap();
        };
        send(
            &mut input,
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "test", "version": "1"}}}),
        );
        let mut line = String::new();
        output.read_line(&mut line).unwrap();
        assert!(line.contains("kts-mcp"), "{line}");
        send(
            &mut input,
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        );
        for id in 2..6 {
            send(
                &mut input,
                serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "search", "arguments": {"question": "how do I fix a corrupt file"}}}),
            );
        }
        std::thread::sleep(Duration::from_millis(delay_ms));
        server.kill().unwrap();
        server.wait().unwrap();
        assert_eq!(index_files(&scope), before, "killed after {delay_ms} ms");
    }
    let store = kts_store::Store::open_read(&scope).unwrap();
    let check: String = store
        .connection()
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    assert_eq!(store.counts().unwrap().0, documents);
}
