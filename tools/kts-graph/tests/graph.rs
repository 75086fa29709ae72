//! kts-graph on a scope indexed by the real pipeline: what it finds, what
//! it answers, and that updates touch only the documents that changed.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

const AUTH: &str = "# Authentication service

Every request passes through the `AuthService`. The AuthService uses the TokenCache
to store sessions, and the TokenCache is flushed nightly.

\"Session Token\" means the signed value the AuthService returns after login.

When login fails with ERR-AUTH-401 the client must refresh its Session Token;
ERR-AUTH-401 is also written to the audit log.
Error E-5 means the token expired; retry after E-5 once.

Staff sign in through the Single Sign On (SSO) portal, which calls the AuthService.
The SSO portal is required for every employee.
";

const PAYMENTS: &str = "# Payments

The PaymentGateway depends on the AuthService. Errors such as ERR-AUTH-401 reach the
PaymentGateway when tokens expire, and ERR-AUTH-401 is then shown to the customer.

Requests from staff go through the SSO portal. Ask Jane Doe for access: Jane Doe
owns the PaymentGateway.
";

const GARDEN: &str = "# Tomatoes

Tomato plants need water every morning in summer. Mulch keeps the soil moist,
and tomato plants grown in pots need more water than tomato plants in beds.
";

fn index(scope: &Path) {
    let dir = scope.display();
    kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-crawl '{dir}' | kts-convert | kts-chunk | kts-index '{dir}'"
    )));
}

fn graph(scope: &Path, args: &str) -> Output {
    kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-graph '{}' --seed 'PERSON:Jane Doe' {args}",
        scope.display()
    )))
}

fn nodes(scope: &Path, args: &str) -> Vec<Value> {
    String::from_utf8_lossy(&graph(scope, args).stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn named<'a>(nodes: &'a [Value], name: &str) -> &'a Value {
    nodes
        .iter()
        .find(|n| {
            n["name"]
                .as_str()
                .is_some_and(|s| s.eq_ignore_ascii_case(name))
        })
        .unwrap_or_else(|| panic!("no {name} in {nodes:#?}"))
}

fn documents(node: &Value) -> Vec<&str> {
    let mut paths: Vec<&str> = node["documents"]
        .as_array()
        .map(|a| a.iter().map(|p| p.as_str().unwrap()).collect())
        .unwrap_or_default();
    paths.sort();
    paths
}

fn scope_with(files: &[(&str, &str)]) -> tempfile::TempDir {
    let scope = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(scope.path().join(name), text).unwrap();
    }
    index(scope.path());
    scope
}

fn rows_of(scope: &Path, doc_path: &str) -> Vec<String> {
    let db = rusqlite::Connection::open(scope.join(".kts/kts.db")).unwrap();
    let mut statement = db
        .prepare(
            "SELECT m.chunk_id || ' ' || m.kind || ' ' || m.key || ' ' || m.count
             FROM graph_mentions m JOIN documents d USING (doc_id) WHERE d.path = ?1
             ORDER BY 1",
        )
        .unwrap();
    statement
        .query_map([doc_path], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn entities_are_found_with_their_sources() {
    let scope = scope_with(&[
        ("auth.md", AUTH),
        ("payments.md", PAYMENTS),
        ("garden.md", GARDEN),
    ]);
    let built = graph(scope.path(), "--stats");
    assert!(
        stderr(&built).contains("3 documents extracted"),
        "{}",
        stderr(&built)
    );
    assert!(stderr(&built).contains("DOCUMENT 3"), "{}", stderr(&built));

    let codes = nodes(scope.path(), "entities --kind ERROR_CODE");
    let auth_error = named(&codes, "ERR-AUTH-401");
    assert_eq!(auth_error["id"], "error_code:ERR-AUTH-401");
    assert_eq!(documents(auth_error), ["auth.md", "payments.md"]);
    assert_eq!(auth_error["mentions"], 4);
    assert_eq!(documents(named(&codes, "E-5")), ["auth.md"]);

    let acronyms = nodes(scope.path(), "entities --kind ACRONYM");
    assert_eq!(named(&acronyms, "SSO")["expansion"], "Single Sign On");
    let concepts = nodes(scope.path(), "entities --kind CONCEPT");
    assert_eq!(
        named(&concepts, "Single Sign On")["mentions"],
        1,
        "the concept a kept acronym is spelled out as, though said once"
    );

    let terms = nodes(scope.path(), "entities --kind TERM");
    let token = named(&terms, "Session Token");
    assert!(
        token["definition"]
            .as_str()
            .unwrap()
            .contains("means the signed value"),
        "{token}"
    );
    assert_eq!(token["defined_in"], "auth.md");

    let systems = nodes(scope.path(), "entities --kind SYSTEM");
    for system in ["AuthService", "TokenCache", "PaymentGateway"] {
        named(&systems, system);
    }
    assert_eq!(
        documents(named(&systems, "PaymentGateway")),
        ["payments.md"]
    );

    let people = nodes(scope.path(), "entities --kind PERSON");
    assert_eq!(documents(named(&people, "Jane Doe")), ["payments.md"]);
    assert!(
        nodes(scope.path(), "entities")
            .iter()
            .all(|n| n["name"] != "5"),
        "numbers alone are not entities"
    );
}

#[test]
fn graph_questions_are_answered() {
    let scope = scope_with(&[
        ("auth.md", AUTH),
        ("payments.md", PAYMENTS),
        ("garden.md", GARDEN),
    ]);
    graph(scope.path(), "");

    let related = nodes(scope.path(), "related auth.md");
    assert_eq!(related[0]["path"], "payments.md", "{related:#?}");
    assert!(related[0]["score"].as_f64().unwrap() > 0.0);
    let shared: Vec<&str> = related[0]["shared"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert!(
        shared.contains(&"AuthService") && shared.contains(&"ERR-AUTH-401"),
        "{shared:?}"
    );
    assert!(
        related.iter().all(|n| n["path"] != "garden.md"),
        "{related:#?}"
    );

    let near = nodes(scope.path(), "neighbors authservice --hops 1");
    let cache = named(&near, "TokenCache");
    assert_eq!(
        (cache["hops"].as_u64(), cache["via"].as_str()),
        (Some(1), Some("uses"))
    );
    assert_eq!(named(&near, "PaymentGateway")["via"], "depends_on");
    let two_hops = nodes(scope.path(), "neighbors system:authservice --hops 2");
    assert!(two_hops.len() > near.len());
    assert!(two_hops.iter().all(|n| n["hops"].as_u64().unwrap() <= 2));

    let central = nodes(scope.path(), "central --top 3");
    assert_eq!(central.len(), 3);
    assert!(
        central.iter().any(|n| n["name"] == "AuthService"),
        "{central:#?}"
    );

    let missing = kts_tests::shell(&format!(
        "kts-graph '{}' neighbors Nobody",
        scope.path().display()
    ));
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("Nobody"), "{}", stderr(&missing));
}

#[test]
fn the_snapshot_holds_each_node_and_its_edges_in_order_as_built() {
    use kts_graph::view::GraphView;

    let scope = scope_with(&[
        ("auth.md", AUTH),
        ("payments.md", PAYMENTS),
        ("garden.md", GARDEN),
    ]);
    graph(scope.path(), "");
    let mut settings = kts_graph::settings::Settings::default();
    settings
        .seeds
        .push(kts_graph::settings::parse_seed("PERSON:Jane Doe").unwrap());
    let store = kts_store::Store::open_read(scope.path()).unwrap();
    let kg = kts_graph::model::KnowledgeGraph::load(store.connection(), &settings).unwrap();
    let snapshot = kts_graph::snapshot::Snapshot::open(scope.path(), &settings)
        .unwrap()
        .expect("kts-graph wrote a current snapshot");
    snapshot
        .read(|snapshot| {
            for (index, node) in kg.nodes() {
                if node.kind == kts_graph::model::NodeKind::Chunk {
                    continue;
                }
                assert_eq!(&snapshot.node(index)?, node);
                assert_eq!(snapshot.links(index)?, kg.links_of(index), "{}", node.id);
                assert_eq!(snapshot.link_counts(index)?, kg.link_counts(index)?);
                assert_eq!(snapshot.find(&node.id)?, Some(index));
            }
            assert_eq!(snapshot.most_linked(1000)?, kg.most_linked(1000)?);
            assert_eq!(
                (snapshot.node_count(), snapshot.document_count()),
                (kg.node_count(), 3)
            );
            Ok(())
        })
        .unwrap();

    let mut other = settings.clone();
    other.min_mentions = 3;
    assert!(
        kts_graph::snapshot::Snapshot::open(scope.path(), &other)
            .unwrap()
            .is_none(),
        "a snapshot built with other settings is not used"
    );
}

#[test]
fn a_document_named_in_decomposed_unicode_is_found_by_its_name_as_typed() {
    // As macOS writes names: `e` and a combining accent for `é`.
    let decomposed = "Cafe\u{301} Cre\u{300}me.md";
    let scope = scope_with(&[(decomposed, AUTH), ("payments.md", PAYMENTS)]);
    graph(scope.path(), "");
    let related = nodes(scope.path(), "related 'Café Crème.md'");
    assert_eq!(related[0]["path"], "payments.md", "{related:#?}");
    let back = nodes(scope.path(), "related payments.md");
    assert_eq!(back[0]["path"], decomposed, "{back:#?}");
}

#[test]
fn updates_touch_only_the_documents_that_changed() {
    let scope = scope_with(&[
        ("auth.md", AUTH),
        ("payments.md", PAYMENTS),
        ("garden.md", GARDEN),
    ]);
    graph(scope.path(), "");
    let auth_rows = rows_of(scope.path(), "auth.md");
    assert!(!auth_rows.is_empty());

    let again = graph(scope.path(), "");
    assert!(
        stderr(&again).contains("0 documents extracted"),
        "{}",
        stderr(&again)
    );
    assert!(stderr(&again).contains("3 unchanged"), "{}", stderr(&again));

    std::fs::write(
        scope.path().join("payments.md"),
        PAYMENTS.replace("ERR-AUTH-401", "ERR-PAY-402"),
    )
    .unwrap();
    std::fs::remove_file(scope.path().join("garden.md")).unwrap();
    index(scope.path());
    let lagging = kts_tests::shell(&format!("kts-graph '{}' central", scope.path().display()));
    assert!(
        stderr(&lagging).contains("lags the index by 1 documents"),
        "{}",
        stderr(&lagging)
    );
    let updated = graph(scope.path(), "");
    let summary = stderr(&updated);
    assert!(summary.contains("1 documents extracted"), "{summary}");
    assert!(
        summary.contains("1 removed") && summary.contains("1 unchanged"),
        "{summary}"
    );

    assert_eq!(
        rows_of(scope.path(), "auth.md"),
        auth_rows,
        "auth.md was not touched"
    );
    assert!(rows_of(scope.path(), "garden.md").is_empty());
    let codes = nodes(scope.path(), "entities --kind ERROR_CODE");
    assert_eq!(documents(named(&codes, "ERR-AUTH-401")), ["auth.md"]);
    assert_eq!(documents(named(&codes, "ERR-PAY-402")), ["payments.md"]);
}

#[test]
fn the_same_documents_give_the_same_graph() {
    let files = [
        ("auth.md", AUTH),
        ("payments.md", PAYMENTS),
        ("garden.md", GARDEN),
    ];
    let first = scope_with(&files);
    let second = scope_with(&files);
    let export = |scope: &Path| -> Value {
        let mut graph: Value =
            serde_json::from_slice(&graph(scope, "--export node-link").stdout).unwrap();
        graph["graph"]["scope"] = Value::Null;
        graph
    };
    let (a, b) = (export(first.path()), export(second.path()));
    assert_eq!(a, b);
    assert!(a["nodes"].as_array().unwrap().len() > 10);
    let kinds: Vec<&str> = a["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["type"].as_str().unwrap())
        .collect();
    for kind in [
        "PART_OF",
        "MENTIONS",
        "COVERS",
        "ADDRESSES",
        "DEFINES",
        "uses",
        "relates_to",
    ] {
        assert!(kinds.contains(&kind), "no {kind} edge in {kinds:?}");
    }
    assert!(
        a["links"].as_array().unwrap().iter().all(|l| {
            let w = l["weight"].as_f64().unwrap();
            w > 0.0 && w <= 1.0
        }),
        "weights are in (0, 1]"
    );
}

#[test]
fn a_folder_without_an_index_is_refused_and_left_as_it_was() {
    let root = tempfile::tempdir().unwrap();
    let scope = root.path().join("garden");
    std::fs::create_dir(&scope).unwrap();
    std::fs::write(scope.join("tomatoes.md"), GARDEN).unwrap();
    index(&scope);

    let empty = tempfile::tempdir().unwrap();
    for (folder, said) in [
        (
            root.path(),
            "is a knowledge root (indexed scopes under it: garden)",
        ),
        (empty.path(), "no index at"),
    ] {
        let output = kts_tests::shell(&format!("kts-graph '{}'", folder.display()));
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert!(stderr(&output).contains(said), "{}", stderr(&output));
        assert!(!folder.join(".kts").exists(), "kts-graph made an index");
    }
    // The root still routes to its scope.
    let hits = kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-query '{}' tomato --format jsonl",
        root.path().display()
    )));
    assert!(String::from_utf8_lossy(&hits.stdout).contains("tomatoes.md"));
}

/// `kts-graph DIR ARGS` writing into a pipe whose reader has gone.
fn into_closed_pipe(scope: &Path, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kts-graph"))
        .arg(scope)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    child.wait_with_output().unwrap()
}

#[test]
fn a_closed_pipe_ends_every_output_quietly_with_status_zero() {
    let scope = scope_with(&[("auth.md", AUTH), ("payments.md", PAYMENTS)]);
    graph(scope.path(), "");
    for args in [
        &["-q", "--export", "node-link"][..],
        &["related", "auth.md"],
        &["neighbors", "AuthService"],
        &["central"],
        &["entities"],
    ] {
        let output = into_closed_pipe(scope.path(), args);
        assert!(
            output.status.success() && output.stderr.is_empty(),
            "kts-graph {args:?}: {:?}: {}",
            output.status,
            stderr(&output)
        );
    }
}

#[test]
fn topics_are_listed_by_kind_and_a_count_of_zero_is_a_usage_error() {
    let scope = scope_with(&[
        ("auth.md", AUTH),
        ("payments.md", PAYMENTS),
        ("garden.md", GARDEN),
    ]);
    graph(scope.path(), "");
    let topics = nodes(scope.path(), "entities --kind topic");
    assert!(!topics.is_empty());
    assert!(
        topics
            .iter()
            .all(|t| t["kind"] == "TOPIC" && t["documents"].is_array()),
        "{topics:#?}"
    );

    for args in [
        "neighbors AuthService --hops 0",
        "neighbors AuthService --top 0",
        "related auth.md --top 0",
        "central --top 0",
    ] {
        let output = kts_tests::shell(&format!("kts-graph '{}' {args}", scope.path().display()));
        assert_eq!(output.status.code(), Some(2), "{args}");
        assert!(
            stderr(&output).contains("invalid value '0'"),
            "{}",
            stderr(&output)
        );
    }
}

#[test]
fn a_damaged_database_is_named_with_what_to_do() {
    let numbers: Vec<String> = (1..=200).map(|i| i.to_string()).collect();
    let texts: Vec<(String, String)> = (1..=40)
        .map(|i| {
            (
                format!("d{i}.md"),
                format!("# Doc {i}\n\nword{i} {}\n", numbers.join(" ")),
            )
        })
        .collect();
    let files: Vec<(&str, &str)> = texts
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    let scope = scope_with(&files);
    let db = scope.path().join(".kts/kts.db");
    let mut bytes = std::fs::read(&db).unwrap();
    for byte in &mut bytes[4096 * 3..4096 * 3 + 3000] {
        *byte ^= 0xA5;
    }
    std::fs::write(&db, bytes).unwrap();
    let output = kts_tests::shell(&format!("kts-graph '{}'", scope.path().display()));
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).starts_with(&format!(
            "kts-graph: error: {} cannot be read (move it aside to rebuild the scope)",
            db.display()
        )),
        "{}",
        stderr(&output)
    );
}
