//! The query pipeline, step by step, on a help-desk scope: what each step
//! finds that the search without it does not, what `--explain` says, the
//! confidence, and the ledger. Keyword search (BM25) only, so no model is
//! needed and every ranking is exact.

use std::path::Path;
use std::sync::OnceLock;

use serde_json::Value;

const DOCS: &[(&str, &str)] = &[
    (
        "glossary.md",
        "# Glossary\n\nService Level Agreement (SLA): the response times the help desk promises.\n\
         Multi-Factor Authentication (MFA): a second proof of identity at sign-in.\n\
         A \"freeze\" means the rollout stop.\n\
         AUTH401: the answer of the AuthService to an expired or unknown token.\n",
    ),
    (
        "priority-tickets.md",
        "# Priority tickets\n\nPriority one tickets fall under the service level agreement: the help desk\n\
         answers within one hour and resolves within four hours. Priority two tickets\n\
         are answered within one working day.\n",
    ),
    (
        "accounts.md",
        "# Managing accounts\n\nTo delete a user account, open the admin console, select the user and press\n\
         Delete. The account is kept for thirty days before it is purged.\n",
    ),
    (
        "auth-troubleshooting.md",
        "# Troubleshooting sign-in errors\n\nWhen the AuthService rejects a sign-in it answers AUTH401. To fix AUTH401,\n\
         clear the TokenCache and sign in again. If AUTH401 persists, the account is locked.\n",
    ),
    (
        "sign-in-faq.md",
        "# Sign-in questions\n\nSign-in problems? Most sign-in problems go away after a new sign-in. A sign-in\n\
         after a password change needs a second sign-in. The usual fix is to try the sign-in again.\n",
    ),
    (
        "release-notes.md",
        "# Release notes\n\nThe AuthService moved to a new cluster. The TokenCache is now larger. ToolX 2.0\n\
         ships a new dashboard.\n",
    ),
    (
        "deployments.md",
        "# Deployments\n\nDuring a rollout stop no change reaches production; the stop ends when the\n\
         release manager lifts it.\n",
    ),
    (
        "time-off.md",
        "# Paid time off\n\nPaid time off is booked in the HR portal two weeks ahead.\n",
    ),
    (
        "hardware.md",
        "# Hardware\n\nEvery notebook is encrypted before it is handed out.\n",
    ),
    (
        "vpn-reset.md",
        "# Resetting a VPN token\n\nTo reset a VPN token, open the VPN portal, choose Reset token and confirm. The\n\
         new VPN token is valid at once; reset the token again if the VPN rejects it.\n",
    ),
    (
        "vpn-hardware.md",
        "# VPN hardware tokens\n\nHardware VPN tokens show a new code every minute. A VPN token that is lost\n\
         must be reported; a broken VPN token is replaced, not reset.\n",
    ),
    (
        "travel.md",
        "# Travel costs\n\nTravel expenses are approved by your line manager before the trip; receipts\n\
         are due within thirty days of your return.\n",
    ),
    (
        "canteen.md",
        "# Canteen\n\nThe canteen opens at noon. Lunch is served until two; coffee all day.\n",
    ),
    (
        "parking.md",
        "# Parking\n\nStaff park in the north garage; visitors use the marked spaces at the front.\n",
    ),
];

const CONFIG: &str = "[query.acronyms]\nPTO = \"paid time off\"\n\n[query]\nsynonyms = [[\"laptop\", \"notebook\"]]\n";

/// The scope, indexed (keywords only) with its graph, once per test run.
fn scope() -> &'static Path {
    static SCOPE: OnceLock<tempfile::TempDir> = OnceLock::new();
    SCOPE
        .get_or_init(|| {
            let scope = tempfile::tempdir().unwrap();
            for (name, text) in DOCS {
                std::fs::write(scope.path().join(name), text).unwrap();
            }
            let dir = scope.path().display();
            kts_tests::succeeded(kts_tests::shell(&format!(
                "kts-crawl '{dir}' | kts-convert | kts-chunk | kts-index '{dir}' --quiet && kts-graph '{dir}' --quiet"
            )));
            std::fs::write(scope.path().join(".kts/config.toml"), CONFIG).unwrap();
            scope
        })
        .path()
}

/// kts-query's records for a question (BM25), and its stderr.
fn query_full(question: &str, flags: &str) -> (Vec<Value>, String) {
    let output = kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-query '{}' '{question}' --mode bm25 {flags}",
        scope().display()
    )));
    let records = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    (
        records,
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The hits' paths, best first.
fn paths(question: &str, flags: &str) -> Vec<String> {
    hits(question, flags)
        .iter()
        .map(|h| h["path"].as_str().unwrap().to_string())
        .collect()
}

fn hits(question: &str, flags: &str) -> Vec<Value> {
    query_full(question, flags)
        .0
        .into_iter()
        .filter(|r| r["schema"] == "kts.hit/1")
        .collect()
}

/// The kts.plan/1 record of a question.
fn plan(question: &str, flags: &str) -> Value {
    let (records, _) = query_full(question, &format!("{flags} --explain"));
    assert_eq!(records[0]["schema"], "kts.plan/1", "{records:#?}");
    records[0].clone()
}

fn notes(plan: &Value, step: &str) -> Vec<String> {
    plan["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["step"] == step)
        .map(|n| n["detail"].as_str().unwrap().to_string())
        .collect()
}

fn validator(schema: &str) -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../schemas/{schema}"));
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

#[test]
fn acronyms_find_the_documents_that_only_spell_them_out() {
    let question = "what is our SLA";
    let unexpanded = paths(question, "--without acronyms");
    assert!(!unexpanded.contains(&"priority-tickets.md".into()));
    let expanded = paths(question, "");
    assert!(
        expanded.contains(&"priority-tickets.md".into()),
        "{expanded:?}"
    );
    let asked = plan(question, "");
    assert_eq!(notes(&asked, "acronyms"), ["SLA → Service Level Agreement"]);
    // A question that uses the acronym without asking about it is searched
    // as written: the documents' expansion is for questions about it.
    let used = plan("the SLA was breached twice", "");
    assert!(notes(&used, "acronyms").is_empty(), "{used:#}");

    // From the scope's config: PTO is spelled out only there, and a
    // configured acronym is expanded wherever it occurs.
    assert!(paths("PTO", "--without acronyms").is_empty());
    assert_eq!(paths("PTO", "")[0], "time-off.md");
    assert_eq!(paths("PTO for parents", "")[0], "time-off.md");
}

#[test]
fn synonyms_find_documents_in_other_words() {
    // Built in: remove → delete.
    assert!(paths("remove", "").is_empty());
    assert_eq!(paths("remove", "--with synonyms"), ["accounts.md"]);
    // From the scope's config: laptop → notebook.
    assert!(paths("laptop", "").is_empty());
    assert_eq!(paths("laptop", "--with synonyms"), ["hardware.md"]);
    // Defined by the documents: a "freeze" means the rollout stop.
    let defined = paths("freeze", "--with synonyms");
    assert!(defined.contains(&"deployments.md".into()), "{defined:?}");
    assert_eq!(paths("freeze", ""), ["glossary.md"]);
    let plan = plan("freeze", "--with synonyms");
    assert!(
        notes(&plan, "synonyms").contains(&"freeze → rollout stop".to_string()),
        "{plan:#}"
    );
}

#[test]
fn filters_narrow_to_the_error_code_and_the_intent() {
    let question = "how do I fix AUTH401";
    let plan = plan(question, "--with filters");
    assert_eq!(plan["intent"], "troubleshoot");
    let query = &plan["queries"][0];
    assert_eq!(query["entities"], serde_json::json!(["AUTH401"]));
    assert_eq!(
        query["doc_types"],
        serde_json::json!(["TROUBLESHOOT", "FAQ"])
    );
    assert!(
        !query["search_text"].as_str().unwrap().contains("AUTH401"),
        "the code is a filter, not a search word: {query}"
    );
    // One document is both of a troubleshooting type and names AUTH401.
    assert_eq!(query["documents"], 1);
    assert_eq!(
        paths(question, "--with filters --min-filtered 1"),
        ["auth-troubleshooting.md"]
    );
    // Too few: the unfiltered search's hits follow the filtered one.
    assert_eq!(query["fell_back"], true);
    let fallen = paths(question, "--with filters");
    assert_eq!(fallen[0], "auth-troubleshooting.md");
    assert!(fallen.len() > 1, "{fallen:?}");
    // Without the step (the default) nothing is filtered.
    let plain = plan_queries(question, "");
    assert!(plain[0]["doc_types"].as_array().unwrap().is_empty());
    assert!(plain[0]["entities"].as_array().unwrap().is_empty());
}

fn plan_queries(question: &str, flags: &str) -> Vec<Value> {
    plan(question, flags)["queries"].as_array().unwrap().clone()
}

#[test]
fn a_statement_naming_a_system_is_not_filtered() {
    // No intent: "ToolX ships a dashboard" is about more than the documents naming ToolX.
    let queries = plan_queries("ToolX dashboard cluster", "--with filters");
    assert!(queries[0]["entities"].as_array().unwrap().is_empty());
}

#[test]
fn decomposition_finds_an_answer_for_each_part() {
    let question = "How do I reset my VPN token and who approves travel expenses?";
    let queries = plan_queries(question, "--with decompose");
    let roles: Vec<&str> = queries
        .iter()
        .map(|q| q["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["part", "part"]);
    let answers_both = |paths: &[String]| {
        paths[..2].contains(&"travel.md".to_string())
            && paths[..2].iter().any(|p| p.starts_with("vpn-"))
    };
    let parts = paths(question, "--with decompose");
    assert!(answers_both(&parts), "each part's answer first: {parts:?}");
    let whole = plan_queries(question, "");
    assert_eq!(whole.len(), 1);
    assert_eq!(whole[0]["role"], "question");
}

#[test]
fn the_step_back_query_adds_the_definition() {
    let question = "how do I fix AUTH401";
    let queries = plan_queries(question, "--with step-back");
    let step_back = queries.iter().find(|q| q["role"] == "step_back").unwrap();
    assert_eq!(step_back["search_text"], "what is AUTH401");
    let hits = hits(question, "--with step-back,filters --min-filtered 1");
    let glossary = hits.iter().find(|h| h["path"] == "glossary.md").unwrap();
    assert!(
        glossary["signals"].get("step_back_bm25").is_some(),
        "{glossary:#}"
    );
    assert!(
        !paths(question, "--with filters --min-filtered 1").contains(&"glossary.md".to_string()),
        "the filtered search alone does not reach the glossary"
    );
}

#[test]
fn signals_score_each_hit_and_can_be_switched_off() {
    let question = "how do I fix AUTH401";
    let hits = hits(question, "");
    let first = &hits[0];
    assert_eq!(first["signals"]["error_code"]["score"], 1.0);
    assert_eq!(first["signals"]["intent"]["score"], 1.0);
    assert!(first["signals"]["coverage"]["score"].as_f64().unwrap() > 0.5);
    let others: Vec<&Value> = hits[1..]
        .iter()
        .filter(|h| h["signals"]["error_code"]["score"] == 0.0)
        .collect();
    assert!(!others.is_empty(), "{hits:#?}");
    for hit in self::hits(question, "--without signals") {
        assert!(hit["signals"].get("coverage").is_none(), "{hit}");
    }
    // The weights are the documented table's unless overridden.
    let plan = plan(question, "--weight coverage=0.7");
    assert_eq!(plan["weights"]["coverage"], 0.7);
    assert_eq!(plan["weights"]["error_code"], 0.5);
}

#[test]
fn a_quoted_phrase_moves_up_the_chunks_that_say_it() {
    // The travel page holds the three words apart, the account page together.
    let plain = paths("thirty days before", "");
    assert_eq!(plain[..2], ["travel.md", "accounts.md"]);
    let hits = hits("\"thirty days before\"", "");
    assert_eq!(hits[0]["path"], "accounts.md", "{hits:#?}");
    assert_eq!(hits[0]["signals"]["phrase"]["score"], 1.0);
    assert_eq!(hits[1]["signals"]["phrase"]["score"], 0.0);
    let plan = plan("\"Thirty days before\"", "");
    assert_eq!(plan["phrases"], serde_json::json!(["thirty days before"]));
}

#[test]
fn confidence_is_a_probability_and_can_make_the_answer_abstain() {
    let hits = hits("how do I fix AUTH401", "");
    let confidences: Vec<f64> = hits
        .iter()
        .map(|h| h["confidence"].as_f64().unwrap())
        .collect();
    assert!(confidences.iter().all(|c| (0.0..=1.0).contains(c)));
    assert!(
        confidences[0] > *confidences.last().unwrap(),
        "{confidences:?}"
    );
    let (records, stderr) = query_full("how do I fix AUTH401", "--min-confidence 0.999");
    assert!(records.is_empty(), "{records:#?}");
    assert!(stderr.contains("reaches confidence 0.999"), "{stderr}");
    let kept = self::hits(
        "how do I fix AUTH401",
        &format!("--min-confidence {}", confidences[1]),
    );
    assert!(kept.len() >= 2 && kept.len() < hits.len(), "{kept:#?}");
}

#[test]
fn explain_and_ledger_records_follow_their_schemas() {
    let plan = plan(
        "how do I fix AUTH401 on ToolX and what is the escalation path?",
        "--with filters,decompose",
    );
    let errors: Vec<String> = validator("kts.plan.v1.schema.json")
        .iter_errors(&plan)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}\n{plan:#}");
    assert!(!notes(&plan, "decompose").is_empty(), "{plan:#}");

    let ledger = scope().join(".kts/ledger.jsonl");
    let before = std::fs::read_to_string(&ledger)
        .unwrap_or_default()
        .lines()
        .count();
    query_full("remove", "--ledger --with synonyms");
    query_full("what is our SLA", "--ledger");
    let text = std::fs::read_to_string(&ledger).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .skip(before)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{text}");
    let validator = validator("kts.ledger.v1.schema.json");
    for line in &lines {
        assert!(validator.is_valid(line), "{line:#}");
    }
    assert_eq!(lines[0]["plan"]["question"], "remove");
    assert_eq!(lines[0]["hits"][0]["path"], "accounts.md");
    assert!(
        lines[0]["plan"]["steps"]
            .as_array()
            .unwrap()
            .contains(&Value::from("synonyms"))
    );
    assert!(lines[1]["confidence"].as_f64().is_some());
}

#[test]
fn bm25_comes_from_the_lexical_index_and_from_fts5_when_it_is_gone() {
    let question = "how do I reset my VPN token";
    let from_index = plan(question, "");
    assert_eq!(
        notes(&from_index, "bm25"),
        ["from the lexical index"],
        "{from_index:#}"
    );

    let copy = tempfile::tempdir().unwrap();
    kts_tests::succeeded(kts_tests::shell(&format!(
        "cp -r '{}/.' '{}' && rm -r '{}/.kts/lexical'",
        scope().display(),
        copy.path().display(),
        copy.path().display()
    )));
    let run = |dir: &Path| {
        let output = kts_tests::succeeded(kts_tests::shell(&format!(
            "kts-query '{}' '{question}' --mode bm25 --explain",
            dir.display()
        )));
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).unwrap())
            .collect::<Vec<_>>()
    };
    let records = run(copy.path());
    let fallback = notes(&records[0], "bm25");
    assert_eq!(fallback.len(), 1);
    assert!(
        fallback[0].starts_with("from FTS5: no lexical index yet"),
        "{fallback:?}"
    );
    let top = |records: &[Value]| records[1]["path"].clone();
    assert_eq!(top(&records), top(&run(scope())));
    assert_eq!(top(&records), "vpn-reset.md");
}
