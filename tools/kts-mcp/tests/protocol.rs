//! kts-mcp spoken to in raw JSON-RPC (stdio) and raw HTTP, for what an SDK
//! client never sends: messages out of order, a browser's Origin, odd
//! headers and arguments. On a small knowledge root the real pipeline builds.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::OnceLock;

mod common;

use kts_tests::{bin, shell, succeeded};
use serde_json::{Value, json};

const DOCUMENTS: [(&str, &str, &str); 4] = [
    (
        "alpha",
        "vacation.md",
        "# Vacation policy\n\nEmployees get 25 vacation days a year. Unused days expire at \
         the end of March.\n",
    ),
    (
        "alpha",
        "parking.md",
        "# Parking\n\nThe parking garage opens at 6am. Bicycles go in the basement.\n",
    ),
    (
        "beta",
        "rockets.md",
        "# Rocket engines\n\nA rocket engine burns liquid oxygen and kerosene. The Merlin \
         engine powers the Falcon 9.\n",
    ),
    (
        "café",
        "espresso.md",
        "# Espresso machine\n\nThe espresso machine is descaled every Friday.\n",
    ),
];

/// Writes the documents under `root` and indexes each scope.
fn build_root(root: &Path) {
    for (scope, name, text) in DOCUMENTS {
        std::fs::create_dir_all(root.join(scope)).unwrap();
        std::fs::write(root.join(scope).join(name), text).unwrap();
    }
    succeeded(shell(&format!(
        "cd '{}' && for scope in alpha beta café; do \
           kts-crawl $scope | kts-convert | kts-chunk | kts-embed | kts-index $scope || exit 1; done",
        root.display()
    )));
}

/// The knowledge root the tests only read, built once.
fn root() -> &'static Path {
    static ROOT: OnceLock<tempfile::TempDir> = OnceLock::new();
    ROOT.get_or_init(|| {
        let root = tempfile::tempdir().unwrap();
        build_root(root.path());
        root
    })
    .path()
}

/// A copy of the root that a test may damage.
fn root_copy() -> tempfile::TempDir {
    let copy = tempfile::tempdir().unwrap();
    succeeded(shell(&format!(
        "cp -a '{}/.' '{}'",
        root().display(),
        copy.path().display()
    )));
    copy
}

/// kts-mcp on stdio, spoken to line by line.
struct Session {
    server: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Session {
    fn start(dir: &Path) -> Session {
        Session::start_with(dir, &[])
    }

    fn start_with(dir: &Path, flags: &[&str]) -> Session {
        let mut server = Command::new(bin("kts-mcp"))
            .arg(dir)
            .arg("--quiet")
            .args(flags)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("kts-mcp starts");
        let input = server.stdin.take().unwrap();
        let output = BufReader::new(server.stdout.take().unwrap());
        Session {
            server,
            input,
            output,
        }
    }

    /// Starts kts-mcp and goes through the handshake.
    fn initialized(dir: &Path) -> Session {
        Session::initialized_with(dir, &[])
    }

    fn initialized_with(dir: &Path, flags: &[&str]) -> Session {
        let mut session = Session::start_with(dir, flags);
        session.send(initialize(0));
        assert!(session.answer(0).get("result").is_some());
        session.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        session
    }

    fn send(&mut self, message: Value) {
        writeln!(self.input, "{message}").unwrap();
    }

    /// Bytes as they are, a message or not.
    fn send_raw(&mut self, bytes: &[u8]) {
        self.input.write_all(bytes).unwrap();
        self.input.flush().unwrap();
    }

    /// The next message the server writes.
    fn next_message(&mut self) -> Value {
        let mut line = String::new();
        let read = self.output.read_line(&mut line).unwrap();
        assert!(read > 0, "kts-mcp ended instead of answering");
        serde_json::from_str(&line).unwrap()
    }

    /// The response to the request `id` (notifications skipped).
    fn answer(&mut self, id: u64) -> Value {
        loop {
            let mut line = String::new();
            let read = self.output.read_line(&mut line).unwrap();
            assert!(read > 0, "kts-mcp ended before answering request {id}");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return message;
            }
        }
    }

    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.answer(id)
    }

    /// A tool call's result (`isError` and all).
    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let answer = self.request(
            7,
            "tools/call",
            json!({"name": tool, "arguments": arguments}),
        );
        answer["result"].clone()
    }

    /// Ends the input and returns the exit status and stderr.
    fn finish(mut self) -> (std::process::ExitStatus, String) {
        drop(self.input);
        let mut stderr = String::new();
        self.server
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        (self.server.wait().unwrap(), stderr)
    }
}

fn initialize(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "1"}}})
}

/// The text of a tool's result (or of its error).
fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn messages_before_initialize_other_than_requests_are_ignored() {
    let early = [
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}),
        json!({"jsonrpc": "2.0", "method": "notifications/made_up"}),
        json!({"jsonrpc": "2.0", "id": 5, "result": {}}),
        json!({"jsonrpc": "2.0", "id": 5, "error": {"code": -1, "message": "no"}}),
    ];
    for message in early {
        let mut session = Session::start(root());
        session.send(message.clone());
        session.send(initialize(0));
        let started = session.answer(0);
        assert!(
            started["result"]["serverInfo"].is_object(),
            "after {message}: {started}"
        );
        session.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        let scopes = session.call("list_scopes", json!({}));
        assert_eq!(scopes["isError"], false, "after {message}: {scopes}");
        let (status, stderr) = session.finish();
        assert!(status.success(), "after {message}: {status}: {stderr}");
    }
}

#[test]
fn quiet_means_no_warning_on_stderr() {
    // Two folders with one slug: a warning at start, and at every routing.
    let copy = root_copy();
    succeeded(shell(&format!(
        "cp -a '{0}/alpha' '{0}/Alpha'",
        copy.path().display()
    )));
    let mut session = Session::initialized(copy.path());
    let search = session.call("search", json!({"question": "vacation days"}));
    assert_eq!(search["isError"], false, "{search}");
    let (status, stderr) = session.finish();
    assert!(status.success());
    assert_eq!(stderr, "", "--quiet");
}

/// The CPU seconds a process has used so far (Linux).
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // The fields after the command name, which is in parentheses.
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    ticks / 100.0
}

#[test]
fn work_past_its_time_limit_stops() {
    let mut session = Session::initialized_with(root(), &["--timeout", "1", "--concurrency", "1"]);
    let check = session.call(
        "check_answer",
        json!({"scope": "alpha", "answer": answer_of_many_claims()}),
    );
    assert_eq!(check["isError"], true, "{check}");
    assert!(
        text(&check).contains("took longer than the time limit"),
        "{check}"
    );
    // Claims are searched one after the other: the next search is refused.
    assert_idle_then_answering(&mut session, "the server went on working");
}

/// An answer of 1,500 claims, which takes `check_answer` many seconds.
fn answer_of_many_claims() -> String {
    answer_of_claims(1500)
}

fn answer_of_claims(count: usize) -> String {
    (0..count)
        .map(|i| format!("Employees receive {i} days of paid vacation per year number {i}. "))
        .collect()
}

/// The server spends under 0.5 CPU s in the next 2 s, then answers a search.
fn assert_idle_then_answering(session: &mut Session, otherwise: &str) {
    let pid = session.server.id();
    let before = cpu_seconds(pid);
    std::thread::sleep(std::time::Duration::from_secs(2));
    let spent = cpu_seconds(pid) - before;
    assert!(spent < 0.5, "{otherwise}: {spent:.2} CPU s in 2 s");
    let search = session.call(
        "search",
        json!({"question": "vacation days", "scope": "alpha"}),
    );
    assert_eq!(search["isError"], false, "{search}");
}

#[test]
fn work_the_client_cancelled_stops() {
    let mut session =
        Session::initialized_with(root(), &["--timeout", "600", "--concurrency", "1"]);
    session.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "check_answer",
                   "arguments": {"scope": "alpha", "answer": answer_of_many_claims()}}}));
    std::thread::sleep(std::time::Duration::from_millis(500));
    session.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 3, "reason": "the user moved on"}}),
    );
    std::thread::sleep(std::time::Duration::from_millis(200));
    // The permit went back too: the next call is answered at once.
    assert_idle_then_answering(&mut session, "the server went on with cancelled work");
}

/// The slugs of a search's hits.
fn hit_scopes(result: &Value) -> Vec<String> {
    result["structuredContent"]["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|hit| hit["scope"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_scope_argument_wins_over_a_slash_prefix_in_the_question() {
    let mut session = Session::initialized(root());
    let prefixed = "/beta rocket engine";

    let routed = session.call("search", json!({"question": prefixed}));
    assert_eq!(hit_scopes(&routed)[0], "beta", "{routed}");
    let search = session.call("search", json!({"question": prefixed, "scope": "alpha"}));
    assert_eq!(search["structuredContent"]["scopes"], json!(["alpha"]));
    let scopes = hit_scopes(&search);
    assert!(
        !scopes.is_empty() && scopes.iter().all(|s| s == "alpha"),
        "{search}"
    );

    let context = session.call("context", json!({"question": prefixed, "scope": "alpha"}));
    assert_eq!(context["isError"], false, "{context}");
    assert!(!text(&context).contains("rockets.md"), "{context}");

    let counts = session.call(
        "count_by_scope",
        json!({"question": prefixed, "scope": "alpha"}),
    );
    assert_eq!(counts["isError"], false, "{counts}");
    assert_eq!(counts["structuredContent"]["counts"], json!([]), "{counts}");

    let prompt = session.request(
        8,
        "prompts/get",
        json!({"name": "alpha", "arguments": {"question": prefixed}}),
    );
    let message = prompt["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no prompt: {prompt}"));
    assert!(!message.contains("rockets.md"), "{message}");
    assert!(message.contains("vacation.md"), "{message}");
}

#[test]
fn messages_speak_of_tools_and_say_what_is_wrong() {
    let mut session = Session::initialized(root());
    let unknown = session.call("search", json!({"question": "engine", "scope": "nope"}));
    assert_eq!(unknown["isError"], true);
    assert!(
        text(&unknown).contains("(list_scopes lists them)"),
        "{unknown}"
    );
    assert!(!text(&unknown).contains("--"), "{unknown}");

    let prompt = session.request(8, "prompts/get", json!({"name": "zzz"}));
    let message = prompt["error"]["message"].as_str().unwrap_or_default();
    assert!(message.starts_with("no prompt \"zzz\""), "{prompt}");

    let scopes = session.call("list_scopes", json!({"x": 1}));
    assert_eq!(text(&scopes), "list_scopes takes no arguments, not \"x\"");

    let related = session.call("related", json!({"path": "", "scope": "alpha"}));
    assert_eq!(text(&related), "related: the path is empty");
}

#[test]
fn a_scope_whose_index_went_away_says_why_and_is_left_out_of_the_resources() {
    let copy = root_copy();
    let mut session = Session::initialized(copy.path());
    std::fs::remove_dir_all(copy.path().join("beta/.kts")).unwrap();

    let search = session.call("search", json!({"question": "engine", "scope": "beta"}));
    assert_eq!(search["isError"], true, "{search}");
    // Said at once, or, once the root's folders were looked at again, as a
    // scope no longer indexed.
    let message = text(&search);
    assert!(
        message.starts_with("no scope could be searched: beta: ") && message.contains("no index")
            || message.starts_with("no indexed scope \"beta\""),
        "{message}"
    );

    let listed = session.request(8, "resources/list", json!({}));
    let uris: Vec<&str> = listed["result"]["resources"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"))
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert!(uris.contains(&"kts://alpha/vacation.md"), "{uris:?}");
    assert!(
        !uris.iter().any(|u| u.starts_with("kts://beta/")),
        "{uris:?}"
    );
}

#[test]
fn scopes_indexed_or_removed_while_serving_are_seen() {
    let copy = root_copy();
    let mut session = Session::initialized(copy.path());
    let slugs = |session: &mut Session| -> Vec<String> {
        let listed = session.call("list_scopes", json!({}));
        listed["structuredContent"]["scopes"]
            .as_array()
            .unwrap_or_else(|| panic!("{listed}"))
            .iter()
            .map(|s| s["slug"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(slugs(&mut session), ["alpha", "beta", "café"]);
    let gamma = copy.path().join("gamma");
    std::fs::create_dir(&gamma).unwrap();
    std::fs::write(
        gamma.join("garden.md"),
        "# Garden\n\nTomatoes want basil.\n",
    )
    .unwrap();
    succeeded(shell(&format!(
        "cd '{}' && kts-crawl gamma | kts-convert | kts-chunk | kts-embed | kts-index gamma",
        copy.path().display()
    )));
    std::fs::remove_dir_all(copy.path().join("beta/.kts")).unwrap();
    // The folders are looked at again at most once a second.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert_eq!(slugs(&mut session), ["alpha", "café", "gamma"]);
    let search = session.call("search", json!({"question": "tomatoes basil"}));
    assert_eq!(hit_scopes(&search)[0], "gamma", "{search}");
}

#[test]
fn the_scope_of_a_resource_uri_is_percent_decoded() {
    let mut session = Session::initialized(root());
    for (id, uri, says) in [
        (8, "kts://%61lpha/vacation.md", "25 vacation days"),
        (9, "kts://caf%C3%A9/espresso.md", "descaled every Friday"),
    ] {
        let read = session.request(id, "resources/read", json!({"uri": uri}));
        let markdown = read["result"]["contents"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{uri}: {read}"));
        assert!(markdown.contains(says), "{uri}: {markdown}");
    }
}

#[test]
fn a_document_named_in_decomposed_unicode_is_found_by_its_name_as_typed() {
    let copy = root_copy();
    // As macOS writes names: `e` and a combining accent for `é`.
    let decomposed = "Cafe\u{301} Cre\u{300}me.md";
    std::fs::write(
        copy.path().join("alpha").join(decomposed),
        "# Menu\n\nThe vacation espresso is served in March.\n",
    )
    .unwrap();
    succeeded(shell(&format!(
        "cd '{}' && kts-crawl alpha | kts-convert | kts-chunk | kts-embed | kts-index alpha \
         && kts-graph alpha",
        copy.path().display()
    )));
    let mut session = Session::initialized(copy.path());
    let typed = json!({"scope": "alpha", "path": "Café Crème.md"});
    let document = session.call("get_document", typed.clone());
    assert!(text(&document).contains("espresso is served"), "{document}");
    let related = session.call("related", typed);
    assert_eq!(related["isError"], false, "{related}");
    let uri = "kts://alpha/Caf%C3%A9%20Cr%C3%A8me.md";
    let read = session.request(8, "resources/read", json!({"uri": uri}));
    let markdown = read["result"]["contents"][0]["text"].as_str();
    assert!(
        markdown.is_some_and(|m| m.contains("espresso is served")),
        "{read}"
    );

    // A stored conversion changed since it was written is not served.
    let stored = std::fs::read_dir(copy.path().join("alpha/.kts/documents"))
        .unwrap()
        .map(|entry| entry.unwrap().path().join("content.md"))
        .find(|content| {
            std::fs::read_to_string(content).is_ok_and(|m| m.contains("espresso is served"))
        })
        .unwrap();
    std::fs::write(&stored, "# Menu\n\nTampered.\n").unwrap();
    let document = session.call(
        "get_document",
        json!({"scope": "alpha", "path": "Café Crème.md"}),
    );
    assert!(
        text(&document).contains("espresso is served") && !text(&document).contains("Tampered"),
        "{document}"
    );
}

/// A server stopped when the test ends, passed or failed.
struct Stopped(Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// kts-mcp serving the root over HTTP on a free loopback port, and the port.
fn serve_http(flags: &[&str]) -> (Stopped, u16) {
    let (server, url) = common::serve_http(root(), flags);
    let port = url
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap();
    (Stopped(server), port)
}

/// The status line and headers of an `initialize` POSTed to /mcp with `headers`.
fn post_initialize(port: u16, headers: &[&str]) -> String {
    let body = initialize(1).to_string();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for header in headers {
        request.push_str(&format!("{header}\r\n"));
    }
    request.push_str(&format!("\r\n{body}"));
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let head = response.split("\r\n\r\n").next().unwrap_or_default();
    head.to_string()
}

fn status(head: &str) -> &str {
    head.split(' ').nth(1).unwrap_or_default()
}

#[test]
fn over_http_a_page_from_another_origin_is_refused() {
    let (server, port) = serve_http(&[]);
    for origin in [
        "http://evil.com",
        "null",
        "http://localhost.evil.com",
        "https://127.0.0.1.evil.com:8765",
    ] {
        let head = post_initialize(port, &[&format!("Origin: {origin}")]);
        assert_eq!(status(&head), "403", "Origin: {origin}\n{head}");
    }
    for origin in [
        "http://localhost:3000",
        "https://localhost",
        "http://127.0.0.1:8765",
        "http://[::1]:9000",
    ] {
        let head = post_initialize(port, &[&format!("Origin: {origin}")]);
        assert_eq!(status(&head), "200", "Origin: {origin}\n{head}");
    }
    assert_eq!(status(&post_initialize(port, &[])), "200");
    drop(server);

    // Served to other machines, the token is the guard, whatever the page.
    let (server, port) = serve_http(&["--allow-remote", "--token", "s3cret"]);
    let head = post_initialize(
        port,
        &["Origin: http://evil.com", "Authorization: Bearer s3cret"],
    );
    assert_eq!(status(&head), "200", "{head}");
    drop(server);
}

#[test]
fn over_http_a_401_asks_for_a_bearer_token_whatever_the_case_of_its_scheme() {
    let (server, port) = serve_http(&["--token", "s3cret"]);
    let refused = post_initialize(port, &[]);
    assert_eq!(status(&refused), "401", "{refused}");
    let asks = refused
        .lines()
        .any(|l| l.eq_ignore_ascii_case("www-authenticate: Bearer"));
    assert!(asks, "{refused}");
    for scheme in ["Bearer", "bearer", "BEARER"] {
        let head = post_initialize(port, &[&format!("Authorization: {scheme} s3cret")]);
        assert_eq!(status(&head), "200", "{scheme}: {head}");
    }
    let wrong = post_initialize(port, &["Authorization: bearer nope"]);
    assert_eq!(status(&wrong), "401", "{wrong}");
    drop(server);
}

/// Asks kts-mcp to stop with a signal and returns its exit status.
fn signalled(server: &mut Child, signal: &str) -> std::process::ExitStatus {
    succeeded(shell(&format!("kill -{signal} {}", server.id())));
    server.wait().unwrap()
}

#[test]
fn a_signal_stops_cleanly_whenever_it_comes() {
    for signal in ["TERM", "INT"] {
        // While the model loads (a signal before kts-mcp's main has begun
        // would kill it, as any process).
        let mut session = Session::start(root());
        std::thread::sleep(std::time::Duration::from_millis(300));
        let status = signalled(&mut session.server, signal);
        assert!(status.success(), "SIG{signal} at start: {status}");
        // Before the client has spoken, and once it has.
        let mut session = Session::start(root());
        std::thread::sleep(std::time::Duration::from_millis(1500));
        let status = signalled(&mut session.server, signal);
        assert!(status.success(), "SIG{signal} before initialize: {status}");
        let mut session = Session::start(root());
        session.send(initialize(0));
        session.answer(0);
        let status = signalled(&mut session.server, signal);
        assert!(status.success(), "SIG{signal} after initialize: {status}");
        let mut session = Session::initialized(root());
        let search = session.call("search", json!({"question": "vacation days"}));
        assert_eq!(search["isError"], false, "{search}");
        let status = signalled(&mut session.server, signal);
        assert!(status.success(), "SIG{signal} after a search: {status}");
    }
}

#[test]
fn a_time_limit_past_a_day_is_refused_and_a_day_is_kept() {
    let refused = Command::new(bin("kts-mcp"))
        .arg(root())
        .args(["--timeout", "9223372036854775807"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("1..=86400"), "{stderr}");
    let mut session = Session::initialized_with(root(), &["--timeout", "86400"]);
    let search = session.call("search", json!({"question": "vacation days"}));
    assert_eq!(search["isError"], false, "{search}");
}

#[test]
fn a_folder_that_does_not_exist_is_said_so() {
    let missing = root().join("nonexistent");
    let output = Command::new(bin("kts-mcp"))
        .arg(&missing)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("nonexistent does not exist"), "{stderr}");
}

#[test]
fn what_is_no_message_is_answered_with_its_error_and_id() {
    let mut session = Session::initialized(root());
    session.send_raw(b"{not json\n");
    let not_json = session.next_message();
    assert_eq!(not_json["id"], Value::Null, "{not_json}");
    assert_eq!(not_json["error"]["code"], -32700, "{not_json}");
    for (line, code, says) in [
        (
            r#"{"jsonrpc":"2.0","id":12,"method":"ping","params":[1,2]}"#,
            -32602,
            "must be an object",
        ),
        (
            r#"{"jsonrpc":"1.0","id":13,"method":"ping"}"#,
            -32600,
            "\"2.0\"",
        ),
        (r#"{"jsonrpc":"2.0","id":14}"#, -32600, "no \"method\""),
        (
            r#"{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"search","arguments":"alpha"}}"#,
            -32602,
            "Invalid params of tools/call",
        ),
        (
            r#"{"jsonrpc":"2.0","id":16,"method":"resources/read","params":{}}"#,
            -32602,
            "uri",
        ),
        (
            r#"{"jsonrpc":"2.0","id":17,"method":"tools/destroy","params":{}}"#,
            -32601,
            "kts-mcp answers",
        ),
    ] {
        session.send_raw(format!("{line}\n").as_bytes());
        let id: u64 = serde_json::from_str::<Value>(line).unwrap()["id"]
            .as_u64()
            .unwrap();
        let answer = session.answer(id);
        assert_eq!(answer["error"]["code"], code, "{line}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{line}: {answer}");
    }
    // Too long to take, then a last message without its newline.
    let pad = "x".repeat(17 << 20);
    session.send_raw(
        format!(r#"{{"jsonrpc":"2.0","id":18,"method":"ping","params":{{"pad":"{pad}"}}}}"#)
            .as_bytes(),
    );
    session.send_raw(b"\n");
    let oversized = session.answer(18);
    assert_eq!(oversized["error"]["code"], -32600, "{oversized}");
    session.send_raw(br#"{"jsonrpc":"2.0","id":19,"method":"ping"}"#);
    let Session {
        mut server,
        input,
        mut output,
    } = session;
    drop(input);
    let mut line = String::new();
    output.read_line(&mut line).unwrap();
    let last: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(
        (last["id"].as_u64(), last.get("result").is_some()),
        (Some(19), true),
        "{last}"
    );
    assert!(server.wait().unwrap().success());
}

#[test]
fn over_http_a_body_that_is_no_message_is_a_400_with_its_error() {
    let (server, port) = serve_http(&[]);
    for (body, code) in [("{not json", -32700), ("[]", -32600)] {
        let (head, answer) = post(port, body);
        assert_eq!(status(&head), "400", "{body}: {head}");
        let answer: Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(answer["error"]["code"], code, "{body}: {answer}");
    }
    drop(server);
}

/// The status line and headers, and the body, of `body` POSTed to /mcp.
fn post(port: u16, body: &str) -> (String, String) {
    post_with(port, body, &[])
}

/// The same, with `headers` besides.
fn post_with(port: u16, body: &str, headers: &[&str]) -> (String, String) {
    let headers: String = headers.iter().map(|h| format!("{h}\r\n")).collect();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\
         {headers}\r\n{body}",
        body.len()
    );
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or_default();
    (head.to_string(), body.to_string())
}

#[test]
fn http_listens_on_a_host_name() {
    let mut server = Command::new(bin("kts-mcp"))
        .arg(root())
        .args(["--http", "localhost:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(server.stderr.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let _stopped = Stopped(server);
    assert!(
        first.starts_with("kts-mcp: serving MCP at http://127.0.0.1:"),
        "{first}"
    );
}

#[test]
fn a_scope_indexed_under_a_root_with_a_catalog_is_asked_at_once() {
    let copy = root_copy();
    let dir = copy.path().display().to_string();
    succeeded(shell(&format!("kts-catalog '{dir}' --quiet")));
    let mut session = Session::initialized(copy.path());
    let before = session.call("search", json!({"question": "pelican beaks"}));
    assert_eq!(
        before["structuredContent"]["scopes"],
        json!(["alpha", "beta", "café"])
    );
    let gamma = copy.path().join("gamma");
    std::fs::create_dir(&gamma).unwrap();
    std::fs::write(
        gamma.join("pelican.md"),
        "# Pelicans\n\nPelican beaks hold three gallons of water.\n",
    )
    .unwrap();
    // kts-index updates the catalog's row of the scope.
    succeeded(shell(&format!(
        "cd '{dir}' && kts-crawl gamma | kts-convert | kts-chunk | kts-embed | kts-index gamma"
    )));
    let search = session.call("search", json!({"question": "pelican beaks"}));
    assert_eq!(hit_scopes(&search)[0], "gamma", "{search}");
    let counts = session.call("count_by_scope", json!({"question": "pelican"}));
    assert_eq!(
        counts["structuredContent"]["counts"][0]["scope"], "gamma",
        "{counts}"
    );

    // A scope copied in, which no kts-index put in the catalog.
    succeeded(shell(&format!("cp -a '{dir}/gamma' '{dir}/delta'")));
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let search = session.call("search", json!({"question": "pelican beaks", "top_k": 2}));
    let mut scopes = hit_scopes(&search);
    scopes.sort();
    assert_eq!(scopes, ["delta", "gamma"], "{search}");
}

/// kts-query's hits for a question, as it writes them.
fn kts_query_hits(dir: &Path, question: &str) -> Vec<Value> {
    let output = succeeded(
        Command::new(bin("kts-query"))
            .arg(dir)
            .arg(question)
            .output()
            .unwrap(),
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn search_gives_kts_query_s_hits_with_its_scores() {
    let scope = root().join("alpha");
    let mut session = Session::initialized(&scope);
    for question in [
        "vacation days",
        "when does the parking garage open",
        "hotel laptop switch tray",
        "bicycles expire in march",
    ] {
        let search = session.call("search", json!({"question": question}));
        let served = search["structuredContent"]["hits"].as_array().unwrap();
        let queried = kts_query_hits(&scope, question);
        let key = |hit: &Value| {
            (
                hit["chunk_id"].clone(),
                hit["rank"].clone(),
                hit["score"].clone(),
            )
        };
        assert_eq!(
            served.iter().map(key).collect::<Vec<_>>(),
            queried.iter().map(key).collect::<Vec<_>>(),
            "{question}"
        );
        assert_eq!(served, &queried, "{question}");
    }
}

#[test]
fn a_root_context_cites_scope_and_path_and_get_document_takes_them() {
    let copy = root_copy();
    for (scope, text) in [
        (
            "alpha",
            "# Notes\n\nThe vacation allowance is 25 days per year.\n",
        ),
        (
            "beta",
            "# Notes\n\nThe vacation allowance of servers is 2 reboots per year.\n",
        ),
    ] {
        std::fs::write(copy.path().join(scope).join("notes.md"), text).unwrap();
        succeeded(shell(&format!(
            "cd '{}' && kts-crawl {scope} | kts-convert | kts-chunk | kts-embed | kts-index {scope}",
            copy.path().display()
        )));
    }
    let mut session = Session::initialized(copy.path());
    let context = session.call("context", json!({"question": "vacation allowance"}));
    let markdown = text(&context);
    assert!(
        markdown.contains("] alpha: notes.md > Notes\n"),
        "{markdown}"
    );
    assert!(
        markdown.contains("] beta: notes.md > Notes\n"),
        "{markdown}"
    );

    let prompt = session.request(
        8,
        "prompts/get",
        json!({"name": "ask", "arguments": {"question": "vacation allowance"}}),
    );
    let message = prompt["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{prompt}"));
    assert!(message.contains("by its scope and path"), "{message}");

    let document = session.call("get_document", json!({"path": "beta: notes.md"}));
    assert_eq!(document["isError"], false, "{document}");
    assert_eq!(document["structuredContent"]["scope"], "beta", "{document}");
    assert!(text(&document).contains("2 reboots"), "{document}");
    let unnamed = session.call("get_document", json!({"path": "notes.md"}));
    assert_eq!(unnamed["isError"], true, "{unnamed}");
}

#[test]
fn over_http_a_request_running_at_sigterm_is_answered() {
    let (mut server, port) = serve_http(&["--timeout", "600"]);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "check_answer",
                   "arguments": {"scope": "alpha", "answer": answer_of_claims(150)}}});
    let answering = std::thread::spawn(move || post(port, &call.to_string()));
    std::thread::sleep(std::time::Duration::from_millis(300));
    let status = signalled(&mut server.0, "TERM");
    let (head, body) = answering.join().unwrap();
    assert!(status.success(), "{status}");
    assert_eq!(self::status(&head), "200", "{head}\n{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["id"], 2, "{answer}");
    assert!(
        answer["result"]["content"][0]["text"].is_string(),
        "{answer}"
    );
}

#[test]
fn a_root_whose_catalog_lists_a_scope_gone_is_served_from_its_folders() {
    let copy = root_copy();
    let dir = copy.path().display().to_string();
    succeeded(shell(&format!("kts-catalog '{dir}' --quiet")));
    // The first scope by name: the one the model was warmed up on.
    std::fs::remove_dir_all(copy.path().join("alpha")).unwrap();
    let mut session = Session::initialized(copy.path());
    let listed = session.call("list_scopes", json!({}));
    assert_eq!(
        listed["structuredContent"]["scopes"]
            .as_array()
            .unwrap()
            .len(),
        2,
        "{listed}"
    );
    assert!(!text(&listed).contains("alpha"), "{listed}");
    let prompts = session.request(8, "prompts/list", json!({}));
    assert!(!prompts.to_string().contains("alpha"), "{prompts}");
    let search = session.call("search", json!({"question": "rocket engine"}));
    assert_eq!(hit_scopes(&search)[0], "beta", "{search}");
}

#[test]
fn over_http_work_the_client_cancelled_stops_and_its_post_ends_without_a_result() {
    let (server, port) = serve_http(&["--timeout", "600", "--concurrency", "1"]);
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "check_answer",
                   "arguments": {"scope": "alpha", "answer": answer_of_many_claims()}}});
    let (answered, answer) = std::sync::mpsc::channel();
    std::thread::spawn(move || answered.send(post(port, &call.to_string())));
    std::thread::sleep(std::time::Duration::from_millis(500));
    // As the TypeScript SDK sends it: a POST of its own.
    let (head, _) = post(
        port,
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 3, "reason": "the user moved on"}})
        .to_string(),
    );
    assert_eq!(status(&head), "202", "{head}");
    let (head, body) = answer
        .recv_timeout(std::time::Duration::from_secs(5))
        .expect("the cancelled request's POST ends");
    assert_eq!(status(&head), "200", "{head}");
    assert!(head.contains("text/event-stream"), "{head}");
    assert!(!body.contains("\"result\""), "{body}");

    let before = cpu_seconds(server.0.id());
    std::thread::sleep(std::time::Duration::from_secs(2));
    let spent = cpu_seconds(server.0.id()) - before;
    assert!(spent < 0.5, "the work went on: {spent:.2} CPU s in 2 s");
    // The permit went back too: the next call is answered.
    let search = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "search", "arguments": {"question": "vacation days", "scope": "alpha"}}});
    let (head, body) = post(port, &search.to_string());
    assert_eq!(status(&head), "200", "{head}");
    assert!(body.contains("\"isError\":false"), "{body}");
}

/// The first line of a tool's text.
fn first_line(result: &Value) -> String {
    text(result).lines().next().unwrap_or_default().to_string()
}

#[test]
fn search_s_text_shows_confidence_and_the_characters_get_document_takes() {
    for (dir, cited) in [
        (root().join("alpha"), "vacation.md#Vacation policy"),
        (root().to_path_buf(), "alpha: vacation.md#Vacation policy"),
    ] {
        let mut session = Session::initialized(&dir);
        let search = session.call("search", json!({"question": "vacation days", "top_k": 1}));
        let hit = &search["structuredContent"]["hits"][0];
        let expected = format!(
            " 1. confidence {:.2}  {cited}  (characters {}-{})",
            hit["confidence"].as_f64().unwrap(),
            hit["start"],
            hit["end"]
        );
        assert_eq!(first_line(&search), expected, "{search}");
    }
}

#[test]
fn every_citation_the_server_writes_names_its_document() {
    let copy = root_copy();
    succeeded(shell(&format!(
        "cd '{}' && kts-graph alpha --quiet",
        copy.path().display()
    )));
    let mut session = Session::initialized(copy.path());
    for citation in [
        "alpha: vacation.md#Vacation policy",
        "alpha: vacation.md > Vacation policy",
        "alpha:vacation.md",
        "kts://alpha/vacation.md",
    ] {
        for tool in ["get_document", "related"] {
            let result = session.call(tool, json!({"path": citation}));
            assert_eq!(result["isError"], false, "{tool} {citation}: {result}");
        }
        let document = session.call("get_document", json!({"path": citation}));
        assert_eq!(
            document["structuredContent"]["path"], "vacation.md",
            "{document}"
        );
    }
    let unknown = session.call("get_document", json!({"path": "alpha:nothing.md"}));
    assert!(!text(&unknown).contains("name one"), "{unknown}");

    let checked = session.call(
        "check_answer",
        json!({"answer": "Employees get 25 vacation days a year.", "scope": "alpha"}),
    );
    assert!(
        text(&checked).contains("  alpha: vacation.md#Vacation policy"),
        "{checked}"
    );
    let unscoped = session.call("check_answer", json!({"answer": "Employees get 25 days."}));
    assert!(
        text(&unscoped).contains("the argument scope names the one to check against"),
        "{unscoped}"
    );
    let listed = session.call("list_scopes", json!({}));
    assert!(text(&listed).contains("\n    keywords: "), "{listed}");
}

#[test]
fn count_by_scope_lists_the_first_paths_and_counts_them_all() {
    let copy = root_copy();
    for n in 1..=3 {
        std::fs::write(
            copy.path().join(format!("beta/zebra{n}.md")),
            format!("# Zebra {n}\n\nThe zebra crossing number {n}.\n"),
        )
        .unwrap();
    }
    succeeded(shell(&format!(
        "cd '{}' && kts-crawl beta | kts-convert | kts-chunk | kts-embed | kts-index beta",
        copy.path().display()
    )));
    let mut session = Session::initialized(copy.path());
    let all = session.call("count_by_scope", json!({"question": "zebra"}));
    assert_eq!(
        all["structuredContent"]["counts"][0]["paths"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    let two = session.call("count_by_scope", json!({"question": "zebra", "limit": 2}));
    let count = &two["structuredContent"]["counts"][0];
    assert_eq!(count["documents"], 3, "{two}");
    assert_eq!(count["paths"].as_array().unwrap().len(), 2, "{two}");
    assert!(text(&two).ends_with(" and 1 more\n"), "{two}");
}

#[test]
fn over_http_a_message_is_taken_up_to_16_mib_as_on_stdin() {
    let (_server, port) = serve_http(&[]);
    let padded = |id: &str, bytes: usize| {
        format!(
            r#"{{"jsonrpc":"2.0","id":"{id}","method":"ping","params":{{"_meta":{{"pad":"{}"}}}}}}"#,
            "x".repeat(bytes)
        )
    };
    let (head, body) = post(port, &padded("five", 5 << 20));
    assert_eq!(status(&head), "200", "{head}");
    assert!(body.contains(r#""id":"five","result""#), "{body}");

    let big = padded("big", 17 << 20);
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{big}",
        big.len()
    );
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mut writer = stream.try_clone().unwrap();
    // The server answers before reading it all, and may close on the rest.
    std::thread::spawn(move || writer.write_all(request.as_bytes()));
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    let response = String::from_utf8_lossy(&response);
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or_default();
    assert_eq!(status(head), "400", "{head}");
    let answer: Value = serde_json::from_str(body.trim()).unwrap_or_else(|_| panic!("{body}"));
    assert_eq!(answer["id"], "big", "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("longer than 16 MiB"),
        "{answer}"
    );
}

#[test]
fn a_scope_slugged_ask_has_a_prompt_beside_the_routed_one() {
    let copy = root_copy();
    std::fs::create_dir(copy.path().join("ask")).unwrap();
    std::fs::write(
        copy.path().join("ask/walrus.md"),
        "# Walrus\n\nThe walrus procedure is done on Mondays.\n",
    )
    .unwrap();
    succeeded(shell(&format!(
        "cd '{}' && kts-crawl ask | kts-convert | kts-chunk | kts-embed | kts-index ask",
        copy.path().display()
    )));
    let mut session = Session::initialized(copy.path());
    let listed = session.request(8, "prompts/list", json!({}));
    let names: Vec<&str> = listed["result"]["prompts"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"))
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ask", "alpha", "scope-ask", "beta", "café"]);
    let prompt = session.request(
        9,
        "prompts/get",
        json!({"name": "scope-ask", "arguments": {"question": "walrus procedure"}}),
    );
    let message = prompt["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{prompt}"));
    assert!(message.contains("Mondays"), "{message}");
    assert_eq!(
        prompt["result"]["description"], "the scope ask's context for \"walrus procedure\"",
        "{prompt}"
    );
}

/// A ping and a tools/list, in one batch.
const BATCH: &str = r#"[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"tools/list"},{"jsonrpc":"2.0","method":"notifications/initialized"}]"#;

/// The ids of the answers in a batch's answer.
fn answered_ids(answer: &Value) -> Vec<Value> {
    let mut ids: Vec<Value> = answer
        .as_array()
        .unwrap_or_else(|| panic!("no array: {answer}"))
        .iter()
        .map(|a| {
            assert!(a.get("result").is_some(), "{a}");
            a["id"].clone()
        })
        .collect();
    ids.sort_by_key(|id| id.as_u64());
    ids
}

#[test]
fn a_batch_is_answered_as_one_array_under_protocol_2025_03_26_only() {
    for (version, taken) in [("2025-03-26", true), ("2025-06-18", false)] {
        let mut session = Session::start(root());
        let mut hello = initialize(0);
        hello["params"]["protocolVersion"] = json!(version);
        session.send(hello);
        assert_eq!(session.answer(0)["result"]["protocolVersion"], version);
        session.send_raw(format!("{BATCH}\n").as_bytes());
        let answer = session.next_message();
        match taken {
            true => assert_eq!(answered_ids(&answer), [json!(2), json!(3)]),
            false => {
                assert_eq!(answer["error"]["code"], -32600, "{answer}");
                let message = answer["error"]["message"].as_str().unwrap();
                assert!(message.contains("negotiated 2025-06-18"), "{message}");
            }
        }
    }

    let (_server, port) = serve_http(&[]);
    let (head, body) = post_with(port, BATCH, &["MCP-Protocol-Version: 2025-03-26"]);
    assert_eq!(status(&head), "200", "{head}");
    assert_eq!(
        answered_ids(&serde_json::from_str(&body).unwrap()),
        [json!(2), json!(3)]
    );
    let (head, body) = post_with(port, BATCH, &["MCP-Protocol-Version: 2025-06-18"]);
    assert_eq!(status(&head), "400", "{head}");
    assert!(body.contains("negotiated 2025-06-18"), "{body}");
}

/// The status line and headers of a CORS preflight of a POST from `origin`.
fn preflight(port: u16, origin: &str) -> String {
    let request = format!(
        "OPTIONS /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: {origin}\r\n\
         Access-Control-Request-Method: POST\r\n\
         Access-Control-Request-Headers: content-type, mcp-protocol-version, authorization\r\n\
         Connection: close\r\n\r\n"
    );
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
        .split("\r\n\r\n")
        .next()
        .unwrap_or_default()
        .to_lowercase()
}

#[test]
fn over_http_a_page_of_this_machine_gets_cors_answers_and_no_other_does() {
    let (_server, port) = serve_http(&["--token", "s3cret"]);
    let local = "http://localhost:6274";
    // A preflight carries no token.
    let head = preflight(port, local);
    assert_eq!(status(&head), "204", "{head}");
    assert!(
        head.contains(&format!("access-control-allow-origin: {local}")),
        "{head}"
    );
    for allowed in ["mcp-protocol-version", "mcp-session-id", "authorization"] {
        assert!(
            head.lines()
                .any(|l| l.starts_with("access-control-allow-headers:") && l.contains(allowed)),
            "{allowed}: {head}"
        );
    }
    let head = post_initialize(
        port,
        &[&format!("Origin: {local}"), "Authorization: Bearer s3cret"],
    )
    .to_lowercase();
    assert_eq!(status(&head), "200", "{head}");
    assert!(
        head.contains(&format!("access-control-allow-origin: {local}")),
        "{head}"
    );

    let elsewhere = preflight(port, "http://evil.com");
    assert!(
        !elsewhere.contains("access-control-allow-origin"),
        "{elsewhere}"
    );
}

#[test]
fn lists_of_one_page_refuse_a_cursor_and_methods_not_offered_are_named() {
    let mut session = Session::initialized(root());
    for method in ["tools/list", "resources/templates/list"] {
        let listed = session.request(8, method, json!({"cursor": "bogus"}));
        assert_eq!(listed["error"]["code"], -32602, "{method}: {listed}");
    }
    let tools = session.request(9, "tools/list", json!({}));
    for tool in tools["result"]["tools"].as_array().unwrap() {
        assert_eq!(tool["annotations"]["openWorldHint"], false, "{tool}");
    }
    let level = session.request(10, "logging/setLevel", json!({"level": "debug"}));
    assert_eq!(level["error"]["code"], -32601, "{level}");
    let message = level["error"]["message"].as_str().unwrap();
    assert!(message.contains("kts-mcp answers initialize"), "{message}");
}
