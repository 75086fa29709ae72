//! What the kts-mcp test files share.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use kts_tests::bin;

/// kts-mcp serving `dir` over HTTP on a free loopback port, and its URL.
pub fn serve_http(dir: &Path, flags: &[&str]) -> (Child, String) {
    let mut server = Command::new(bin("kts-mcp"))
        .arg(dir)
        .args(["--http", "127.0.0.1:0"])
        .args(flags)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kts-mcp starts");
    let stderr = server.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let url = loop {
        let line = lines
            .next()
            .expect("kts-mcp said where it serves before ending")
            .unwrap();
        if let Some(url) = line.strip_prefix("kts-mcp: serving MCP at ") {
            break url.to_string();
        }
    };
    // Keep reading its log, so that it never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    (server, url)
}
