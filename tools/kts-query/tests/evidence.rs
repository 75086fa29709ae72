//! `kts-query DIR QUESTION --evidence ANSWER`: answers checked against a
//! small scope indexed by the real chunker, embedder (the project's model:
//! run models/fetch first; without it these tests fail) and indexer; and
//! the claim splitting on its own.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

use kts_query::evidence::{self, claims, content_words, rewrite};
use serde_json::{Value, json};

/// The documents of the test scope: path, doc_type, Markdown.
const DOCS: &[(&str, &str, &str)] = &[
    (
        "hr/leave-policy.md",
        "POLICY",
        "# Leave policy\n\n## Annual leave\n\nEvery employee is entitled to 25 days of paid \
         holiday per calendar year. Unused days may be carried over until the end of March \
         of the following year.\n\n## Sick leave\n\nIf you are ill, tell your manager before \
         9:00 on the first day of absence. From the fourth day of illness a doctor's note is \
         required.\n\n## Parental leave\n\nParents may take up to 12 months of parental leave. \
         Apply to the HR office at least two months before the leave starts.",
    ),
    (
        "it/vpn-guide.md",
        "GUIDE",
        "# VPN guide\n\n## Installing the VPN client\n\nDownload the VPN client from the \
         software portal and install it with the default options. Installing the VPN client \
         requires administrator rights on the laptop.\n\n## Connecting\n\nStart the VPN \
         client, choose the nearest gateway and sign in with your hardware token. The \
         connection is established within a few seconds.\n\n## Lost tokens\n\nIf your \
         hardware token is lost, open a ticket with the service desk; the service desk \
         replaces the token within one working day.",
    ),
    (
        "finance/expenses.md",
        "POLICY",
        "# Travel expenses policy\n\n## Claims\n\nSubmit the receipts for hotels, trains and \
         meals within 30 days of the trip. Approved claims are reimbursed with the next \
         salary payment.\n\n## Limits\n\nHotel rooms are reimbursed up to 150 euros a night. \
         First-class train tickets need the approval of your department head.",
    ),
    (
        "facilities/parking.md",
        "GUIDE",
        "# Parking at the office\n\n## Parking spaces\n\nThe garage under building B has 80 \
         spaces for cars and a locked bicycle room. Electric cars can be charged on level -1.\
         \n\n## Visitors\n\nVisitors receive a one-day parking permit at the reception desk.",
    ),
    (
        "kitchen/coffee-machine.md",
        "GUIDE",
        "# Coffee machine\n\n## Descaling\n\nThe coffee machine is descaled every Friday by \
         the facilities team. Do not use it while the descaling light blinks.\n\n## Beans\n\n\
         Fresh coffee beans are stored in the cupboard above the sink.",
    ),
];

/// The test scope, built once per test run.
fn scope() -> &'static Path {
    static SCOPE: OnceLock<PathBuf> = OnceLock::new();
    SCOPE.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("kts-evidence-scope/Staff Handbook");
        common::index_scope(&dir, DOCS);
        dir
    })
}

/// Runs `kts-query SCOPE QUESTION --evidence - FLAGS` with the answer on stdin.
fn check(question: &str, answer: &str, flags: &[&str]) -> (Output, Vec<Value>) {
    let models = common::models_dir();
    let mut args = vec![
        scope().to_str().unwrap(),
        question,
        "--evidence",
        "-",
        "--models",
        models.to_str().unwrap(),
    ];
    args.extend_from_slice(flags);
    kts_tests::run_jsonl(
        Path::new(env!("CARGO_BIN_EXE_kts-query")),
        &args,
        answer.as_bytes(),
    )
}

/// The claim records and the summary of a successful check.
fn report(question: &str, answer: &str) -> (Vec<Value>, Value, String) {
    let (output, mut records) = check(question, answer, &[]);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    let summary = records.pop().expect("a summary record");
    assert_eq!(summary["kind"], "summary", "{summary}");
    assert!(records.iter().all(|r| r["kind"] == "claim"));
    for record in &records {
        eprintln!(
            "{:.3} {} {}  ← {}",
            record["support"].as_f64().unwrap(),
            if record["supported"] == true {
                "✓"
            } else {
                "✗"
            },
            record["claim"],
            record
                .get("nearest")
                .or(record["citations"].get(0))
                .map(|c| format!(
                    "{} (vector {}, lexical {})",
                    c["path"], c["vector"], c["lexical"]
                ))
                .unwrap_or_default()
        );
    }
    (records, summary, stderr)
}

/// The document text a citation points at (`start`..`end`, in characters).
fn cited_text(citation: &Value) -> String {
    let path = citation["path"].as_str().unwrap();
    let (_, _, markdown) = DOCS.iter().find(|(p, _, _)| *p == path).unwrap();
    let (start, end) = (
        citation["start"].as_u64().unwrap() as usize,
        citation["end"].as_u64().unwrap() as usize,
    );
    markdown.chars().skip(start).take(end - start).collect()
}

#[test]
fn claims_from_the_documents_are_all_supported_with_their_citations() {
    let answer = "## Leave\n\n\
        Every employee gets 25 days of paid holiday each calendar year [1]. Unused holiday \
        can be carried over until the end of March.\n\n\
        - If you are sick, tell your manager before 9:00 on the first day.\n\
        - A doctor's note is required from the fourth day of illness [2].\n\n\
        Sources: [1], [2]\n";
    let (claims, summary, stderr) = report("how do annual leave and sick leave work", answer);
    assert_eq!(claims.len(), 4, "{claims:#?}");
    assert_eq!(summary["claims"], 4);
    assert_eq!(summary["supported_claims"], 4, "{claims:#?}");
    assert_eq!(summary["coverage"], 1.0);
    assert_eq!(summary["retried"], false);
    assert_eq!(summary["low_confidence"], false);
    assert_eq!(summary["unsupported"], json!([]));
    assert!(!stderr.contains("low confidence"), "{stderr}");
    let expected = [
        ("Annual leave", "25 days"),
        ("Annual leave", "end of March"),
        ("Sick leave", "9:00"),
        ("Sick leave", "doctor's note"),
    ];
    for (claim, (heading, phrase)) in claims.iter().zip(expected) {
        assert_eq!(claim["supported"], true, "{claim:#}");
        assert!(claim["support"].as_f64().unwrap() >= evidence::SUPPORT_THRESHOLD);
        assert_eq!(claim["retried"], false);
        let best = &claim["citations"][0];
        assert_eq!(best["path"], "hr/leave-policy.md", "{claim:#}");
        assert_eq!(best["heading_path"][0], "Leave policy", "{claim:#}");
        // The section is the chunk's heading, or starts inside the chunk.
        let text = cited_text(best);
        assert!(
            best["heading_path"].get(1) == Some(&json!(heading))
                || text.contains(&format!("## {heading}")),
            "{claim:#}"
        );
        assert!(text.contains(phrase), "{claim:#}");
        assert_eq!(claim["citations"][0]["score"], claim["support"]);
    }
    assert!(!claims[0]["claim"].as_str().unwrap().contains("[1]"));
    assert_eq!(claims[0]["index"], 0);
    assert_eq!(claims[3]["index"], 3);
}

#[test]
fn a_fabricated_claim_is_reported_unsupported() {
    let answer = "Travel receipts must be submitted within 30 days of the trip. Hotel rooms \
        are reimbursed up to 150 euros a night. Every employee also receives a free \
        electric scooter after the first year.";
    let (claims, summary, _) = report("what are the rules for travel expenses", answer);
    assert_eq!(claims.len(), 3);
    let supported: Vec<&Value> = claims.iter().map(|c| &c["supported"]).collect();
    assert_eq!(supported, [true, true, false], "{claims:#?}");
    assert_eq!(claims[0]["citations"][0]["path"], "finance/expenses.md");
    assert_eq!(claims[1]["citations"][0]["path"], "finance/expenses.md");
    let fabricated = &claims[2];
    assert_eq!(fabricated["citations"], json!([]));
    assert!(fabricated["support"].as_f64().unwrap() < evidence::SUPPORT_THRESHOLD);
    assert!(fabricated["nearest"]["path"].is_string(), "{fabricated:#}");
    assert_eq!(summary["supported_claims"], 2);
    assert_eq!(
        summary["unsupported"],
        json!(["Every employee also receives a free electric scooter after the first year."])
    );
    // 2/3 is above the default --min-coverage: no retry.
    assert_eq!(summary["retried"], false);
    assert_eq!(summary["min_coverage"], evidence::MIN_COVERAGE);
}

#[test]
fn a_wrong_number_is_not_supported_by_the_right_passage() {
    let answer = "Every employee is entitled to 40 days of paid holiday per calendar year. \
        Hotel rooms are reimbursed up to 500 euros a night. The garage under building B \
        has 80 spaces for cars.";
    let (claims, _, _) = report("leave, hotels and parking", answer);
    let supported: Vec<&Value> = claims.iter().map(|c| &c["supported"]).collect();
    assert_eq!(supported, [false, false, true], "{claims:#?}");
    assert_eq!(claims[0]["nearest"]["path"], "hr/leave-policy.md");
    assert_eq!(claims[2]["citations"][0]["path"], "facilities/parking.md");
}

#[test]
fn low_coverage_retries_with_a_rewritten_query_and_warns() {
    let question = "How do I install the VPN client?";
    let answer = "Download the VPN client from the software portal. The client only runs \
        on laptops painted bright blue. Each installation must be approved by the CEO in person. \
        Afterwards the laptop plays a short song from the company choir.";
    let (claims, summary, stderr) = report(question, answer);
    assert_eq!(claims.len(), 4);
    assert_eq!(claims[0]["supported"], true, "{claims:#?}");
    assert_eq!(claims[0]["retried"], false);
    assert_eq!(summary["retried"], true);
    for claim in &claims[1..] {
        assert_eq!(claim["supported"], false, "{claim:#}");
        assert_eq!(claim["retried"], true);
        let query = claim["retry_query"].as_str().unwrap();
        assert!(query.starts_with(question), "{query}");
        assert_eq!(query, rewrite(question, claim["claim"].as_str().unwrap()));
    }
    assert_eq!(summary["coverage"], 0.25);
    assert_eq!(summary["low_confidence"], true);
    assert!(
        stderr.contains("kts-query: warning: low confidence: 1 of 4 claims supported")
            && stderr.contains("after retrying"),
        "{stderr}"
    );
}

#[test]
fn min_coverage_decides_when_to_retry() {
    let answer = "Visitors receive a one-day parking permit at the reception desk. \
        Visitors may park for free on the roof of building C.";
    let (output, records) = check("where can visitors park", answer, &["--min-coverage", "0"]);
    assert!(output.status.success());
    let summary = records.last().unwrap();
    assert_eq!(summary["coverage"], 0.5, "{records:#?}");
    assert_eq!(summary["retried"], false);
    assert_eq!(summary["low_confidence"], false);
    assert!(!String::from_utf8_lossy(&output.stderr).contains("low confidence"));

    let (output, records) = check("where can visitors park", answer, &["--min-coverage", "1"]);
    assert!(output.status.success());
    let summary = records.last().unwrap();
    assert_eq!(summary["retried"], true);
    assert_eq!(summary["low_confidence"], true);
    assert_eq!(records[0]["retried"], false);
    assert_eq!(records[1]["retried"], true);

    let (output, _) = check("x", answer, &["--min-coverage", "1.5"]);
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn an_empty_answer_is_a_clear_error() {
    for (answer, message) in [
        ("", "the answer to check is empty"),
        ("  \n\n", "the answer to check is empty"),
        (
            "# Heading\n\n```\nsome code here and more\n```\n\nYes, sure.\n",
            "the answer has no claims to check",
        ),
    ] {
        let (output, records) = check("what is the leave policy", answer, &[]);
        assert_eq!(output.status.code(), Some(2), "{answer:?}");
        assert!(records.is_empty());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.starts_with(&format!("kts-query: error: {message}")),
            "{stderr}"
        );
    }
}

#[test]
fn records_validate_against_the_schema_and_text_is_readable() {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas/kts.evidence.v1.schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let answer = "The coffee machine is descaled every Friday by the facilities team. \
        The coffee machine brews tea on Mondays for the whole department.";
    let (output, records) = check("when is the coffee machine descaled", answer, &[]);
    assert!(output.status.success());
    assert_eq!(records.len(), 3);
    for record in &records {
        assert_eq!(record["schema"], "kts.evidence/1");
        let errors: Vec<String> = validator
            .iter_errors(record)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{record}: {errors:?}");
    }

    let models = common::models_dir();
    let output = kts_tests::run_tool(
        Path::new(env!("CARGO_BIN_EXE_kts-query")),
        &[
            scope().to_str().unwrap(),
            "when is the coffee machine descaled",
            "--evidence",
            "-",
            "--format",
            "text",
            "--models",
            models.to_str().unwrap(),
        ],
        answer.as_bytes(),
        std::time::Duration::from_secs(300),
    );
    assert_eq!(output.code(), Some(0), "{}", output.stderr_text());
    let text = output.stdout_text();
    assert!(
        text.starts_with("1 of 2 claims supported (coverage 0.50, minimum 0.50)\n"),
        "{text}"
    );
    assert!(
        text.contains(" 1. supported (")
            && text.contains("  kitchen/coffee-machine.md#Coffee machine\n")
            && text.contains(" 2. NOT SUPPORTED (")
            && text.contains("nearest: "),
        "{text}"
    );
}

#[test]
fn evidence_is_refused_with_batch_and_context() {
    let models = common::models_dir();
    for flags in [
        vec!["--batch", "--evidence", "-"],
        vec!["question", "--context", "--evidence", "-"],
        vec!["question", "--min-coverage", "0.5"],
    ] {
        let mut args = vec![
            scope().to_str().unwrap(),
            "--models",
            models.to_str().unwrap(),
        ];
        args.extend(flags.iter().copied());
        let (output, _) =
            kts_tests::run_jsonl(Path::new(env!("CARGO_BIN_EXE_kts-query")), &args, b"");
        assert_eq!(output.status.code(), Some(2), "{flags:?}");
    }
}

#[test]
fn claims_are_the_sentences_outside_headings_code_and_tables() {
    let answer = "# Answer\n\
        \n\
        Every employee gets 25 days of leave [1]. Unused days expire in March [2, 3].\n\
        The policy, i.e. the HR rules, applies to all staff. See Dr. Smith for details!\n\
        \n\
        Details\n\
        -------\n\
        \n\
        - **Sick leave** starts on the first day of illness.\n\
        * Call `the manager` before 9:00 please.\n\
        1. Read the [leave policy](https://example.com/leave) first.\n\
        2) Short item.\n\
        - [x] A task item that has been done.\n\
        > Quoted text is also a claim here.\n\
        \n\
        ```sh\n\
        echo this is not a claim at all.\n\
        ```\n\
        \n\
        | Column one | column two has words |\n\
        |---|---|\n\
        \n\
        ![a diagram of the leave process](leave.png) Version 2.5 of the rules applies today.\n\
        <!-- page: 2 -->\n\
        Yes, it does.\n";
    assert_eq!(
        claims(answer),
        [
            "Every employee gets 25 days of leave.",
            "Unused days expire in March.",
            "The policy, i.e. the HR rules, applies to all staff.",
            "See Dr. Smith for details!",
            "Sick leave starts on the first day of illness.",
            "Call the manager before 9:00 please.",
            "Read the leave policy first.",
            "A task item that has been done.",
            "Quoted text is also a claim here.",
            "Version 2.5 of the rules applies today.",
        ]
    );
}

#[test]
fn claims_split_sentences_but_not_numbers_or_abbreviations() {
    assert_eq!(
        claims(
            "The limit is 3.5 GB per user. E.g. photos count too. Park in building B. The rest is free."
        ),
        [
            "The limit is 3.5 GB per user.",
            "E.g. photos count too.",
            "Park in building B.",
            "The rest is free."
        ]
    );
    assert_eq!(
        claims("Is the VPN required? Yes. It is required for all remote work!"),
        [
            "Is the VPN required?",
            "It is required for all remote work!"
        ]
    );
    assert_eq!(
        claims("A line that wraps\nacross two lines of the answer.\n\nToo short here."),
        ["A line that wraps across two lines of the answer."]
    );
    assert!(claims("").is_empty());
    assert!(claims("## Only a heading\n\n```\ncode only here\n```").is_empty());
    assert_eq!(
        claims(
            "The moon is made of green cheese and rock. kts-convert turns each file into \
             Markdown. Use it e.g. with-care as shown."
        ),
        [
            "The moon is made of green cheese and rock.",
            "kts-convert turns each file into Markdown.",
            "Use it e.g. with-care as shown."
        ],
        "a sentence may start with a command's name"
    );
}

#[test]
fn content_words_keep_numbers_and_drop_stopwords() {
    assert_eq!(
        content_words("Call the manager before 9:00 on the 1st day, error E-5."),
        ["call", "manager", "9:00", "1st", "day", "error", "e-5"]
    );
    assert_eq!(
        rewrite(
            "How do I install the VPN client?",
            "It needs administrator rights."
        ),
        "How do I install the VPN client? needs administrator rights"
    );
    assert_eq!(
        rewrite("install the VPN client", "Installing the VPN client."),
        "install the VPN client"
    );
}

#[test]
fn support_blends_cosine_and_words_and_needs_the_numbers_and_names() {
    let claim = "Hotel rooms are reimbursed up to 150 euros a night.";
    let (lexical, numbers) = evidence::lexical_coverage(
        claim,
        "Hotel room costs are reimbursement-capped: up to 150 euros per night.",
    );
    assert_eq!((lexical, numbers), (1.0, true));
    let (lexical, numbers) = evidence::lexical_coverage(claim, "Hotels: 200 euros a night.");
    assert!(lexical < 1.0 && !numbers);
    // One number of two missing is as bad as both.
    let (_, numbers) = evidence::lexical_coverage(
        "Hotel rooms are reimbursed up to 150 euros, 300 in Paris.",
        "Hotel room costs are reimbursement-capped: up to 150 euros per night.",
    );
    assert!(!numbers);
    // coffee, machine, descaled found; CEO, a name, counts twice.
    let (lexical, _) = evidence::lexical_coverage(
        "The coffee machine is descaled by the CEO.",
        "The coffee machine is descaled by the facilities team.",
    );
    assert_eq!(lexical, 3.0 / (3.0 + evidence::NAME_WEIGHT));
    assert_eq!(evidence::support(Some(0.8), 1.0, true), 0.9);
    assert_eq!(evidence::support(Some(0.8), 1.0, false), 0.0);
    assert_eq!(evidence::support(None, 0.7, true), 0.7);
    assert_eq!(evidence::parse_ratio("0.75"), Ok(0.75));
    assert!(evidence::parse_ratio("2").is_err() && evidence::parse_ratio("x").is_err());
}
