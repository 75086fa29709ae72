//! A knowledge root: scopes asked by `/slug`, by `--scope`, by naming them,
//! or all at once; neighbouring scopes share template text, and no hit may
//! come from a scope that was not asked. Keyword indexes (no model needed).

use std::path::Path;
use std::process::Output;
use std::sync::OnceLock;

use serde_json::Value;

/// A pooling agreement's template, as two deals fill it in.
fn agreement(deal: &str, day: &str) -> String {
    format!(
        "# Pooling and Servicing Agreement — {deal}\n\nThis agreement is made between the \
         Depositor, the Master Servicer and the Trustee of {deal}. The Determination Date is \
         the {day} day of each month. The Distribution Date follows the Determination Date by \
         five business days. The Trustee shall remit all collections on the Distribution Date.\n"
    )
}

/// The root, indexed once per test run: two deals sharing the template, and a help desk.
fn root() -> &'static Path {
    static ROOT: OnceLock<tempfile::TempDir> = OnceLock::new();
    ROOT.get_or_init(|| {
        let root = tempfile::tempdir().unwrap();
        let files: [(&str, &str, String); 4] = [
            (
                "Bear Stearns 2006-HE1",
                "psa.md",
                agreement("Bear Stearns 2006-HE1", "15th"),
            ),
            (
                "Bear Stearns 2006-HE2",
                "psa.md",
                agreement("Bear Stearns 2006-HE2", "18th"),
            ),
            (
                "Support",
                "printers.md",
                "# Printer troubleshooting\n\nWhen a printer shows error E-5 the paper tray \
                 is open. Close the tray and press Resume.\n"
                    .to_string(),
            ),
            (
                "Support",
                "agreement-faq.md",
                "# Service agreement questions\n\nThe support agreement covers printers and \
                 laptops; the Determination Date of a repair is the day the ticket is closed.\n"
                    .to_string(),
            ),
        ];
        for (scope, name, text) in &files {
            let dir = root.path().join(scope);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join(name), text).unwrap();
        }
        for scope in ["Bear Stearns 2006-HE1", "Bear Stearns 2006-HE2", "Support"] {
            let dir = root.path().join(scope);
            let dir = dir.display();
            kts_tests::succeeded(kts_tests::shell(&format!(
                "kts-crawl '{dir}' | kts-convert | kts-chunk | kts-index '{dir}' --quiet"
            )));
        }
        root
    })
    .path()
}

fn ask(root: &Path, question: &str, flags: &str) -> (Output, Vec<Value>) {
    let output = kts_tests::shell(&format!(
        "kts-query '{}' '{question}' --mode bm25 {flags}",
        root.display()
    ));
    let hits = records(&output);
    (output, hits)
}

/// The JSON lines a command wrote on stdout.
fn records(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn hits(question: &str, flags: &str) -> Vec<Value> {
    let (output, hits) = ask(root(), question, flags);
    kts_tests::succeeded(output);
    hits
}

fn scopes_of(hits: &[Value]) -> Vec<&str> {
    let mut scopes: Vec<&str> = hits.iter().map(|h| h["scope"].as_str().unwrap()).collect();
    scopes.dedup();
    scopes
}

#[test]
fn a_scoped_question_never_gets_a_hit_from_another_scope() {
    for (slug, day, other_day) in [
        ("bear_stearns_2006_he1", "15th", "18th"),
        ("bear_stearns_2006_he2", "18th", "15th"),
    ] {
        let found = hits(&format!("/{slug} what is the Determination Date"), "");
        assert!(!found.is_empty());
        assert_eq!(scopes_of(&found), [slug], "{found:#?}");
        for hit in &found {
            let text = hit["text"].as_str().unwrap();
            assert!(text.contains(day) && !text.contains(other_day), "{text}");
        }
        let flagged = hits("what is the Determination Date", &format!("--scope {slug}"));
        assert_eq!(scopes_of(&flagged), [slug]);
    }
}

#[test]
fn a_question_naming_a_scope_goes_to_it() {
    let found = hits(
        "What is the Determination Date of Bear Stearns 2006-HE2?",
        "",
    );
    assert_eq!(scopes_of(&found), ["bear_stearns_2006_he2"], "{found:#?}");
}

#[test]
fn the_doc_type_narrows_within_the_scope() {
    let all = hits("/support determination date agreement", "");
    assert!(!all.is_empty());
    let doc_type = all[0]["doc_type"].as_str().unwrap().to_lowercase();
    let narrowed = hits(
        &format!("/support /{doc_type} determination date agreement"),
        "",
    );
    assert!(
        narrowed
            .iter()
            .all(|h| h["doc_type"].as_str().unwrap().to_lowercase() == doc_type)
    );
    let none = hits("/support /meeting determination date agreement", "");
    assert!(none.is_empty(), "{none:#?}");
    let (output, none) = ask(root(), "determination date", "--doc-type polcy");
    assert!(output.status.success() && none.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("scope(s) asked has the type POLCY"),
        "{stderr}"
    );
}

#[test]
fn other_questions_fan_out_and_name_each_hit_s_scope() {
    let found = hits("determination date", "");
    let mut scopes: Vec<&str> = found.iter().map(|h| h["scope"].as_str().unwrap()).collect();
    scopes.sort();
    scopes.dedup();
    assert_eq!(
        scopes,
        ["bear_stearns_2006_he1", "bear_stearns_2006_he2", "support"]
    );
    let ranks: Vec<u64> = found.iter().map(|h| h["rank"].as_u64().unwrap()).collect();
    assert_eq!(ranks, (1..=found.len() as u64).collect::<Vec<_>>());
    let printers = hits("printer error E-5", "");
    assert_eq!(printers[0]["scope"], "support");
    assert_eq!(printers[0]["path"], "printers.md");
}

#[test]
fn a_reranker_orders_the_merged_hits_of_every_scope_once() {
    let seen = tempfile::tempdir().unwrap();
    let (runs, given) = (seen.path().join("runs"), seen.path().join("given"));
    // Scores a candidate by whether it names the 18th, and notes each run.
    let command = format!(
        "echo run >> {}; tee {} | awk '{{print gsub(/18th/, 0)}}'",
        runs.display(),
        given.display()
    );
    let question = "Determination Date agreement";
    let fused = hits(question, "");
    assert_eq!(scopes_of(&fused).len(), 3, "every scope answers: {fused:?}");
    let reranked = hits(
        question,
        &format!("--rerank-cmd \"{command}\" --rerank-weight 1"),
    );
    assert_eq!(std::fs::read_to_string(&runs).unwrap(), "run\n");
    assert_eq!(reranked[0]["scope"], "bear_stearns_2006_he2");
    assert!(reranked[0]["signals"]["rerank"]["score"].as_f64().unwrap() >= 1.0);
    let ranks: Vec<u64> = reranked
        .iter()
        .map(|h| h["rank"].as_u64().unwrap())
        .collect();
    assert_eq!(ranks, (1..=reranked.len() as u64).collect::<Vec<_>>());
    let given: Vec<Value> = std::fs::read_to_string(&given)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let mut scopes: Vec<&str> = given.iter().map(|c| c["scope"].as_str().unwrap()).collect();
    scopes.sort();
    scopes.dedup();
    assert_eq!(scopes.len(), 3, "one run saw the candidates of every scope");
}

#[test]
fn too_many_scopes_or_an_unknown_one_is_a_usage_error() {
    let (output, _) = ask(root(), "determination date", "--max-scopes 2");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--max-scopes"));
    let (output, _) = ask(root(), "/nowhere determination date", "");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("\"nowhere\" in this knowledge root (--list-scopes lists them)"),
        "{stderr}"
    );
}

#[test]
fn a_broken_scope_is_skipped_and_the_others_answer() {
    let root = tempfile::tempdir().unwrap();
    for scope in ["good", "broken"] {
        let dir = root.path().join(scope);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("a.md"),
            "# Notes\n\nThe quarterly report is due in March.\n",
        )
        .unwrap();
        let dir = dir.display();
        kts_tests::succeeded(kts_tests::shell(&format!(
            "kts-crawl '{dir}' | kts-convert | kts-chunk | kts-index '{dir}' --quiet"
        )));
    }
    std::fs::write(root.path().join("broken/.kts/kts.db"), "not a database").unwrap();
    let (output, found) = ask(root.path(), "quarterly report", "");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("scope broken skipped"), "{stderr}");
    assert_eq!(scopes_of(&found), ["good"]);
}

#[test]
fn a_hybrid_fan_out_embeds_the_question_once_and_skips_a_scope_of_another_model() {
    let root = tempfile::tempdir().unwrap();
    for (scope, text) in [
        (
            "hr",
            "# Leave\n\nEvery employee gets 25 days of paid holiday a year.\n",
        ),
        (
            "it",
            "# Printers\n\nA printer showing E-5 has its paper tray open.\n",
        ),
    ] {
        let dir = root.path().join(scope);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.md"), text).unwrap();
        let dir = dir.display();
        kts_tests::succeeded(kts_tests::shell(&format!(
            "kts-crawl '{dir}' | kts-convert | kts-chunk | kts-embed | kts-index '{dir}' --quiet"
        )));
    }
    let output = kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-query '{}' 'how many vacation days do staff get'",
        root.path().display()
    )));
    let found = records(&output);
    assert_eq!(found[0]["scope"], "hr", "{found:#?}");
    assert!(found[0]["signals"]["vector"]["score"].as_f64().unwrap() > 0.3);
    let mut scopes = scopes_of(&found);
    scopes.sort();
    assert_eq!(scopes, ["hr", "it"]);

    // A scope indexed with another model is reported and skipped.
    let store = rusqlite::Connection::open(root.path().join("it/.kts/kts.db")).unwrap();
    store
        .execute(
            "UPDATE meta SET value = 'another-model' WHERE key = 'model_id'",
            [],
        )
        .unwrap();
    drop(store);
    let output = kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-query '{}' 'how many vacation days do staff get'",
        root.path().display()
    )));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("scope it skipped") && stderr.contains("another-model"),
        "{stderr}"
    );
    let found = records(&output);
    assert_eq!(scopes_of(&found), ["hr"]);
}

#[test]
fn a_keyword_only_scope_answers_beside_embedded_ones() {
    let root = tempfile::tempdir().unwrap();
    for (scope, text, embed) in [
        ("fruit", "# Fruit\n\nBananas are yellow.\n", "| kts-embed"),
        (
            "tools",
            "# Tools\n\nThe gizudex escalation tool holds for 4561 hours.\n",
            "",
        ),
        ("colours", "# Colours\n\nThe sky is blue.\n", "| kts-embed"),
    ] {
        let dir = root.path().join(scope);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.md"), text).unwrap();
        let dir = dir.display();
        kts_tests::succeeded(kts_tests::shell(&format!(
            "kts-crawl '{dir}' | kts-convert | kts-chunk {embed} | kts-index '{dir}' --quiet"
        )));
    }
    let output = kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-query '{}' 'how long does the gizudex tool hold'",
        root.path().display()
    )));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("skipped"), "{stderr}");
    let found = records(&output);
    assert_eq!(found[0]["scope"], "tools", "{found:#?}");
    let mut scopes = scopes_of(&found);
    scopes.sort();
    assert_eq!(scopes, ["colours", "fruit", "tools"]);
}

#[test]
fn count_by_scope_says_in_how_many_scopes_and_where() {
    let (output, counts) = ask(root(), "distribution date", "--count-by-scope");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("is in 2 of 3 scopes"), "{stderr}");
    let scopes: Vec<&str> = counts
        .iter()
        .map(|c| c["scope"].as_str().unwrap())
        .collect();
    assert_eq!(scopes, ["bear_stearns_2006_he1", "bear_stearns_2006_he2"]);
    for count in &counts {
        assert_eq!(count["schema"], "kts.scope_count/1");
        assert_eq!(count["documents"], 1);
        assert_eq!(count["paths"], serde_json::json!(["psa.md"]));
    }
    // Counting looks at every scope, whatever --max-scopes.
    let (output, all) = ask(
        root(),
        "distribution date",
        "--count-by-scope --max-scopes 1",
    );
    assert!(output.status.success());
    assert_eq!(all, counts);
    // Every word must be there: the help desk has "date" but not "distribution".
    let (_, narrowed) = ask(root(), "/support distribution date", "--count-by-scope");
    assert!(narrowed.is_empty(), "{narrowed:#?}");
}

#[test]
fn batch_questions_over_a_root_are_routed_one_by_one() {
    let output = kts_tests::shell(&format!(
        r#"kts-query '{}' --batch --mode bm25 <<'EOF'
{{"id": "named", "text": "determination date of Bear Stearns 2006-HE2"}}
{{"id": "unknown", "text": "/nowhere determination date"}}
{{"id": 3, "text": "printer error E-5"}}
EOF"#,
        root().display()
    ));
    let stderr = String::from_utf8_lossy(&output.stderr);
    // The unknown scope fails its query alone: the exit status says one failed.
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("query unknown") && stderr.contains("nowhere"),
        "{stderr}"
    );
    let found = records(&output);
    let scopes_for = |id: &str| -> Vec<&str> {
        found
            .iter()
            .filter(|h| h["query_id"] == id && h["schema"] == "kts.hit/1")
            .map(|h| h["scope"].as_str().unwrap())
            .collect()
    };
    assert!(!scopes_for("named").is_empty());
    assert!(
        scopes_for("named")
            .iter()
            .all(|s| *s == "bear_stearns_2006_he2")
    );
    assert!(scopes_for("unknown").is_empty());
    let failed = found.iter().find(|r| r["schema"] == "kts.error/1").unwrap();
    assert_eq!(failed["query_id"], "unknown", "{failed}");
    assert_eq!(scopes_for("3").first(), Some(&"support"));
}

#[test]
fn text_results_from_a_root_name_their_scope() {
    let output = kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-query '{}' '/bear_stearns_2006_he1 determination date' --mode bm25 --format text",
        root().display()
    )));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("bear_stearns_2006_he1: psa.md"), "{text}");
}

#[test]
fn one_scope_flags_ask_for_a_scope_and_take_the_one_named() {
    for flag in ["--explain", "--ledger"] {
        let (output, _) = ask(root(), "determination date", flag);
        assert_eq!(output.status.code(), Some(2), "{flag}");
        assert!(
            String::from_utf8_lossy(&output.stderr).contains("works on one scope"),
            "{flag}"
        );
    }
    let named = [
        "'/bear_stearns_2006_he1 determination date' --explain",
        "'determination date' --scope bear_stearns_2006_he1 --explain",
    ];
    for asked in named {
        let output = kts_tests::succeeded(kts_tests::shell(&format!(
            "kts-query '{}' {asked} --mode bm25",
            root().display()
        )));
        let records = records(&output);
        assert_eq!(records[0]["schema"], "kts.plan/1", "{asked}");
        assert_eq!(records[0]["question"], "determination date", "{asked}");
        assert_eq!(records[1]["scope"], "bear_stearns_2006_he1", "{asked}");
    }
}

#[test]
fn a_context_over_a_root_cites_each_passage_and_fact_by_scope_and_path() {
    let root = small_root(&[
        (
            "hr",
            "# Leave\n\nError ERR-LEAVE-401 means the vacation allowance is used up. To clear \
             ERR-LEAVE-401, ask HR.\n",
        ),
        (
            "it",
            "# Servers\n\nError ERR-LEAVE-401 means the server left the cluster. To clear \
             ERR-LEAVE-401, reboot it.\n",
        ),
    ]);
    let output = kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-query '{}' 'what does ERR-LEAVE-401 mean' --mode bm25 --context",
        root.path().display()
    )));
    let context = String::from_utf8(output.stdout).unwrap();
    for (scope, heading) in [("hr", "Leave"), ("it", "Servers")] {
        assert!(
            context.contains(&format!(
                "**ERR-LEAVE-401** (ERROR_CODE, 2 mentions in {scope})"
            )),
            "{context}"
        );
        assert!(
            context.contains(&format!("Sources: {scope}: a.md\n")),
            "{context}"
        );
        assert!(
            context.contains(&format!("] {scope}: a.md > {heading}\n")),
            "{context}"
        );
    }
    let named = kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-query '{}' '/it what does ERR-LEAVE-401 mean' --mode bm25 --context",
        root.path().display()
    )));
    let context = String::from_utf8(named.stdout).unwrap();
    assert!(context.contains("[1] it: a.md > Servers\n"), "{context}");
    assert!(!context.contains("hr: a.md"), "{context}");
}

#[test]
fn a_slug_may_be_typed_without_its_accents() {
    let root = small_root(&[
        (
            "Réseau-Docs",
            "# Routeur\n\nLe routeur redémarre la nuit.\n",
        ),
        ("Other", "# Routeur\n\nAnother router.\n"),
    ]);
    let (output, found) = ask(root.path(), "/reseau_docs routeur", "");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(scopes_of(&found), ["réseau_docs"]);
}

#[test]
fn a_scope_renamed_since_the_catalog_was_built_is_still_asked_listed_and_counted() {
    let root = small_root(&[
        ("hr", "# Leave\n\nAnnual leave needs the zebracode form.\n"),
        ("support", "# Printers\n\nRestart the printer.\n"),
    ]);
    kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-catalog '{}' --quiet",
        root.path().display()
    )));
    std::fs::rename(root.path().join("hr"), root.path().join("people")).unwrap();
    let (output, found) = ask(root.path(), "zebracode", "");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("the catalog does not list people"),
        "{stderr}"
    );
    assert_eq!(scopes_of(&found), ["people"]);
    // Routed by the catalog (more scopes than a question may ask), the
    // scope matched under its old name is asked under its new one.
    let (output, found) = ask(root.path(), "zebracode", "--max-scopes 1");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(scopes_of(&found), ["people"]);
    let (_, counted) = ask(root.path(), "zebracode", "--count-by-scope");
    assert_eq!(counted.len(), 1);
    assert_eq!(counted[0]["scope"], "people");
    let listed = kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-query '{}' --list-scopes",
        root.path().display()
    )));
    let slugs: Vec<String> = records(&listed)
        .iter()
        .map(|r| r["slug"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(slugs, ["people", "support"]);
}

#[test]
fn a_scope_folder_refuses_another_scope_s_slug() {
    let root = small_root(&[("Sys Admin", "# Hosts\n\nThe file /etc/hosts maps names.\n")]);
    let scope = root.path().join("Sys Admin");
    let (output, found) = ask(&scope, "hosts", "--scope finance");
    assert_eq!(output.status.code(), Some(2));
    assert!(found.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--scope finance") && stderr.contains("is a scope"),
        "{stderr}"
    );
    let (output, found) = ask(&scope, "hosts", "--scope sys_admin");
    assert!(output.status.success());
    assert_eq!(found.len(), 1);
}

#[test]
fn with_its_scope_named_a_question_may_start_with_a_path() {
    let root = small_root(&[("sys", "# Hosts\n\nThe file /etc/hosts maps names.\n")]);
    let (output, found) = ask(root.path(), "/etc/hosts mapping", "--scope sys");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(scopes_of(&found), ["sys"]);
}

/// A root of keyword-indexed scopes, each with one Markdown file.
fn small_root(scopes: &[(&str, &str)]) -> tempfile::TempDir {
    let scopes: Vec<(&str, Vec<(String, &str)>)> = scopes
        .iter()
        .map(|(scope, text)| (*scope, vec![("a.md".to_string(), *text)]))
        .collect();
    root_of(&scopes)
}

/// A root of keyword-indexed scopes, each with its files (name, text).
fn root_of(scopes: &[(&str, Vec<(String, &str)>)]) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    for (scope, files) in scopes {
        let dir = root.path().join(scope);
        std::fs::create_dir_all(&dir).unwrap();
        for (name, text) in files {
            std::fs::write(dir.join(name), text).unwrap();
        }
        let dir = dir.display();
        kts_tests::succeeded(kts_tests::shell(&format!(
            "kts-crawl '{dir}' | kts-convert | kts-chunk | kts-index '{dir}' --quiet && kts-graph '{dir}' --quiet"
        )));
    }
    root
}

#[test]
fn scopes_are_listed_and_the_catalog_routes_questions() {
    let root = small_root(&[
        (
            "Printers",
            "# Printer tray\n\nA printer showing E-5 has its paper tray open.\n",
        ),
        (
            "Payroll",
            "# Salary runs\n\nSalaries are paid on the 25th; payslips follow.\n",
        ),
        (
            "Travel",
            "# Trips\n\nTrain tickets are booked through the travel desk.\n",
        ),
    ]);
    let list = |root: &Path| -> Vec<Value> {
        let output = kts_tests::succeeded(kts_tests::shell(&format!(
            "kts-query '{}' --list-scopes",
            root.display()
        )));
        records(&output)
    };
    let read_directly = list(root.path());
    let slugs: Vec<&str> = read_directly
        .iter()
        .map(|r| r["slug"].as_str().unwrap())
        .collect();
    assert_eq!(slugs, ["payroll", "printers", "travel"]);
    assert!(
        read_directly
            .iter()
            .all(|r| r["schema"] == "kts.scope/1" && r["documents"] == 1)
    );

    // Without a catalog a question goes everywhere.
    let (output, _) = ask(root.path(), "when are salaries paid", "");
    assert!(String::from_utf8_lossy(&output.stderr).contains("every scope"));
    kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-catalog '{}'",
        root.path().display()
    )));
    assert_eq!(list(root.path()), read_directly);
    // With one, still everywhere while every scope may be asked...
    let (output, _) = ask(root.path(), "when are salaries paid", "");
    assert!(String::from_utf8_lossy(&output.stderr).contains("every scope"));
    // ... and beyond --max-scopes, to the scopes it matches.
    let (output, found) = ask(root.path(), "when are salaries paid", "--max-scopes 2");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("the catalog matches 1"), "{stderr}");
    assert_eq!(scopes_of(&found), ["payroll"]);
    // A question the catalog cannot place is then too broad.
    let (output, _) = ask(root.path(), "zebra", "--max-scopes 2");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("places it in no scope"), "{stderr}");

    // kts-index and kts-graph keep the catalog's row of their scope current.
    let payroll = root.path().join("Payroll");
    std::fs::write(
        payroll.join("b.md"),
        "# Payroll system\n\nThe PayrollService computes salaries. The PayrollService runs monthly.\n",
    )
    .unwrap();
    let dir = payroll.display();
    kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-crawl '{dir}' | kts-convert | kts-chunk | kts-index '{dir}' --quiet && kts-graph '{dir}' --quiet"
    )));
    let row = list(root.path())
        .into_iter()
        .find(|r| r["slug"] == "payroll")
        .unwrap();
    assert_eq!(row["documents"], 2);
    let entities = row["entities"].to_string().to_lowercase();
    assert!(entities.contains("payrollservice"), "{row:#}");
}

#[test]
fn a_root_that_may_be_asked_whole_is_asked_whole_though_it_has_a_catalog() {
    let limits: Vec<(String, String)> = (0..6)
        .map(|i| {
            let text = format!(
                "# Limit note {i}\n\nThe upload limit is {} MB per request, enforced by the proxy.\n",
                5 * i + 5
            );
            (format!("limit-{i}.md"), text)
        })
        .collect();
    let mut wiki: Vec<(String, String)> = (0..8)
        .map(|i| {
            let text = format!(
                "# Service notes {i}\n\nBefore you restart the cluster, check the runbook.\n"
            );
            (format!("notes-{i}.md"), text)
        })
        .collect();
    wiki.push((
        "http-status.html".into(),
        "<html><head><title>HTTP status codes we return</title></head><body>\
         <h1>HTTP status codes we return</h1><h2>HTTP 429 Too Many Requests</h2>\
         <p>Rate limiting: each API key may send 120 requests per minute.</p></body></html>"
            .into(),
    ));
    fn borrowed(files: &[(String, String)]) -> Vec<(String, &str)> {
        files.iter().map(|(n, t)| (n.clone(), t.as_str())).collect()
    }
    let root = root_of(&[("uploads", borrowed(&limits)), ("wiki", borrowed(&wiki))]);
    kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-catalog '{}' --quiet",
        root.path().display()
    )));
    // The catalog knows titles and keywords, not the body of every page: it
    // routes only a question that cannot go to every scope.
    let question = "rate limit too many requests";
    let (output, _) = ask(root.path(), question, "--max-scopes 1");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("of the catalog"), "{stderr}");
    let (output, found) = ask(root.path(), question, "");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("every scope"), "{stderr}");
    assert_eq!(found[0]["scope"], "wiki", "{found:#?}");
}

#[test]
fn the_catalog_sends_a_question_to_the_scopes_matching_it_best() {
    let payroll =
        |city: &str| format!("# Salary runs\n\nSalaries are paid on the 25th in {city}.\n");
    let travel = "# Trips\n\nTrain tickets are booked through the travel desk.\n".to_string();
    let rooms = "# Meeting rooms\n\nRooms are booked in the calendar.\n".to_string();
    let root = small_root(&[
        ("Payroll Berlin", &payroll("Berlin")),
        ("Payroll Madrid", &payroll("Madrid")),
        ("Payroll Paris", &payroll("Paris")),
        ("Travel Berlin", &travel),
        ("Travel Lisbon", &travel),
        ("Facilities Rome", &rooms),
        ("Facilities Oslo", &rooms),
        ("Facilities Vienna", &rooms),
    ]);
    kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-catalog '{}' --quiet",
        root.path().display()
    )));
    // Berlin is in two slugs, salaries in three scopes' titles: the scope
    // with both, and the other Berlin one (a slug word weighs the most), are
    // asked; the other payrolls match too little.
    let (output, found) = ask(
        root.path(),
        "when are Berlin salaries paid",
        "--max-scopes 4",
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("the catalog matches 2"), "{stderr}");
    assert_eq!(found[0]["scope"], "payroll_berlin");
    assert!(
        found
            .iter()
            .all(|h| ["payroll_berlin", "travel_berlin"].contains(&h["scope"].as_str().unwrap())),
        "{found:#?}"
    );
}

#[test]
fn a_scope_the_catalog_does_not_list_yet_is_found_by_its_slug() {
    let root = small_root(&[(
        "Payroll",
        "# Salary runs\n\nSalaries are paid on the 25th.\n",
    )]);
    kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-catalog '{}' --quiet",
        root.path().display()
    )));
    // A copy of an indexed scope: its index was not built here, so nothing
    // told the catalog.
    kts_tests::succeeded(kts_tests::shell(&format!(
        "cp -r '{0}/Payroll' '{0}/Payroll Copy'",
        root.path().display()
    )));
    let (output, found) = ask(root.path(), "/payroll_copy salaries", "");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(scopes_of(&found), ["payroll_copy"]);
}

#[test]
fn a_scope_the_catalog_lists_but_that_went_away_leaves_the_question_to_the_others() {
    let root = small_root(&[
        (
            "ops",
            "# Runbook\n\nRestart the frobulator with systemctl.\n",
        ),
        ("misc", "# Misc\n\nThe frobulator also appears here.\n"),
    ]);
    kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-catalog '{}' --quiet",
        root.path().display()
    )));
    std::fs::remove_dir_all(root.path().join("ops")).unwrap();
    let (output, found) = ask(root.path(), "frobulator restart systemctl", "");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("the catalog lists ops, whose index is gone"),
        "{stderr}"
    );
    assert_eq!(scopes_of(&found), ["misc"]);
}

#[test]
fn an_open_root_asks_the_scopes_its_catalog_gains() {
    let root = small_root(&[
        ("hr", "# Leave\n\nAnnual leave needs a form.\n"),
        ("support", "# Printers\n\nRestart the printer.\n"),
    ]);
    let dir = root.path().display().to_string();
    kts_tests::succeeded(kts_tests::shell(&format!("kts-catalog '{dir}' --quiet")));
    let model = kts_query::ModelChoice::new(None, None, 1, false);
    let knowledge = kts_query::Knowledge::open(root.path(), model, "kts-query", true).unwrap();
    let request = kts_query::Request {
        question: "pelican beaks".into(),
        mode: kts_query::Mode::Bm25,
        ..kts_query::Request::default()
    };
    let asked = |knowledge: &kts_query::Knowledge| {
        let answer = knowledge.search(&request).unwrap();
        let found: Vec<String> = answer.hits.iter().map(|h| h.scope.clone()).collect();
        (answer.scopes, found)
    };
    assert_eq!(
        asked(&knowledge),
        (vec!["hr".into(), "support".into()], vec![])
    );
    std::fs::create_dir(root.path().join("birds")).unwrap();
    std::fs::write(
        root.path().join("birds/a.md"),
        "# Pelicans\n\nPelican beaks hold three gallons.\n",
    )
    .unwrap();
    // kts-index puts the new scope in the catalog.
    kts_tests::succeeded(kts_tests::shell(&format!(
        "cd '{dir}' && kts-crawl birds | kts-convert | kts-chunk | kts-index birds --quiet"
    )));
    let (scopes, found) = asked(&knowledge);
    assert_eq!(scopes, ["birds", "hr", "support"]);
    assert_eq!(found, ["birds"]);
    let counted = knowledge.count_by_scope(&request).unwrap();
    assert_eq!(counted.len(), 1);
    assert_eq!(counted[0].scope, "birds");
}
