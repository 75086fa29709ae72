//! kts-convert on every source file of the shared fixtures, one at a time.
//!
//! Per file: no crash (exit 0 or 1, not 2, not a signal, within 60 s), exactly
//! one output line of valid JSON that matches its record's JSON Schema;
//! bad or encrypted input → a `kts.error/1` naming the file, with a message,
//! and exit 1; good input → a `kts.doc/1` and exit 0; edge input → either.
//! Every failure is collected and reported together.

use std::path::Path;

use kts_tests::{ManifestEntry, ToolOutput, convert_fixture, fixtures_dir, parallel_map, sources};
use serde_json::Value;

/// Rules kts-convert breaks today, each a converter bug to fix: (file, the
/// start of the broken rule). A listed file that breaks another rule, or that
/// no longer breaks its rule, fails the test, so the list only shrinks.
const KNOWN_FAILURES: &[(&str, &str)] = &[];

/// What the manifest says a file must become.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Expect {
    Doc,
    Error,
    Either,
}

fn expectation(entry: &ManifestEntry) -> Expect {
    match entry.bad_input.as_str() {
        "bad" | "encrypted" => Expect::Error,
        "edge" => Expect::Either,
        // An empty file (docling's test data has a 0-byte PDF) is refused as `empty`.
        "" if entry.bytes == 0 => Expect::Error,
        "" => {
            // A good file of a format kts does not convert (an image asset of
            // the HTML fixtures) must be refused as unsupported.
            let known = Path::new(&entry.file)
                .extension()
                .and_then(|e| e.to_str())
                .and_then(kts_record::Format::from_extension)
                .is_some();
            if known { Expect::Doc } else { Expect::Error }
        }
        other => panic!(
            "manifest.tsv: {} has an unknown bad_input value {other:?}",
            entry.file
        ),
    }
}

/// The record schemas: the committed files in `schemas/` when present, else
/// generated from kts-record (and said so).
struct Schemas {
    doc: jsonschema::Validator,
    error: jsonschema::Validator,
    notes: Vec<String>,
}

fn load_schemas() -> Schemas {
    let mut notes = Vec::new();
    let mut load = |file: &str, generated: Value| {
        let path = kts_tests::workspace_root().join("schemas").join(file);
        let schema = match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display())),
            Err(_) => {
                notes.push(format!(
                    "{} is missing: validated against the schema generated from kts-record instead",
                    path.display()
                ));
                generated
            }
        };
        jsonschema::validator_for(&schema)
            .unwrap_or_else(|e| panic!("{} is not a valid JSON Schema: {e}", path.display()))
    };
    let doc = load(
        "kts.doc.v1.schema.json",
        kts_record::json_schema::<kts_record::DocRecord>(),
    );
    let error = load(
        "kts.error.v1.schema.json",
        kts_record::json_schema::<kts_record::ErrorRecord>(),
    );
    Schemas { doc, error, notes }
}

/// Every rule a file broke (empty when it passed).
fn check(entry: &ManifestEntry, run: &ToolOutput, schemas: &Schemas) -> Vec<String> {
    let mut broken = Vec::new();
    let expect = expectation(entry);
    let code = run.code();
    if !matches!(code, Some(0 | 1)) {
        broken.push(format!(
            "crashed: {} (stderr: {})",
            run.describe_end(),
            run.stderr_text().trim()
        ));
        return broken;
    }
    let stdout = run.stdout_text();
    let lines: Vec<&str> = stdout.lines().collect();
    if lines.len() != 1 {
        broken.push(format!(
            "{} output lines instead of exactly one",
            lines.len()
        ));
        return broken;
    }
    let record: Value = match serde_json::from_str(lines[0]) {
        Ok(v) => v,
        Err(e) => {
            broken.push(format!("output is not valid JSON: {e}"));
            return broken;
        }
    };
    let schema = record.get("schema").and_then(Value::as_str).unwrap_or("");
    let path = record.get("path").and_then(Value::as_str).unwrap_or("");
    if path != entry.file {
        broken.push(format!("record path is {path:?}, not {:?}", entry.file));
    }
    let validator = match schema {
        "kts.doc/1" => {
            if let Err(e) = serde_json::from_value::<kts_record::DocRecord>(record.clone()) {
                broken.push(format!("kts.doc/1 does not parse as DocRecord: {e}"));
            }
            if code != Some(0) {
                broken.push(format!("kts.doc/1 but {}", run.describe_end()));
            }
            if expect == Expect::Error {
                broken.push(format!(
                    "{} input converted to a kts.doc/1 instead of a kts.error/1",
                    if entry.bad_input.is_empty() {
                        "unsupported"
                    } else {
                        &entry.bad_input
                    }
                ));
            }
            &schemas.doc
        }
        "kts.error/1" => {
            if let Err(e) = serde_json::from_value::<kts_record::ErrorRecord>(record.clone()) {
                broken.push(format!("kts.error/1 does not parse as ErrorRecord: {e}"));
            }
            let message = record.get("message").and_then(Value::as_str).unwrap_or("");
            if message.trim().is_empty() {
                broken.push("kts.error/1 with an empty message".into());
            }
            if code != Some(1) {
                broken.push(format!("kts.error/1 but {}", run.describe_end()));
            }
            if expect == Expect::Doc {
                broken.push(format!(
                    "good input refused: {}: {message}",
                    record.get("code").and_then(Value::as_str).unwrap_or("?")
                ));
            }
            &schemas.error
        }
        other => {
            broken.push(format!("unexpected record schema {other:?}"));
            return broken;
        }
    };
    for error in validator.iter_errors(&record) {
        broken.push(format!(
            "does not match the {schema} JSON Schema at {}: {error}",
            error.instance_path()
        ));
    }
    broken
}

#[test]
fn every_fixture_converts_or_fails_cleanly() {
    let fixtures = fixtures_dir();
    let sources = sources();
    let schemas = load_schemas();
    for note in &schemas.notes {
        eprintln!("NOTE: {note}");
    }
    let runs = parallel_map(&sources, |entry| convert_fixture(&fixtures, entry));
    let mut failures = Vec::new();
    let mut known = Vec::new();
    let mut passed = 0;
    for (entry, run) in sources.iter().zip(&runs) {
        let broken = check(entry, run, &schemas);
        let kind = match expectation(entry) {
            Expect::Doc => "doc expected",
            Expect::Error => "error expected",
            Expect::Either => "edge: doc or error",
        };
        let excuse = KNOWN_FAILURES
            .iter()
            .find(|(file, _)| *file == entry.file)
            .map(|(_, rule)| *rule);
        if broken.is_empty() {
            passed += 1;
            if excuse.is_some() {
                failures.push(format!(
                    "{} [{kind}]: passes now: remove it from KNOWN_FAILURES",
                    entry.file
                ));
            }
        }
        for rule in broken {
            let line = format!("{} [{kind}]: {rule}", entry.file);
            match excuse {
                Some(prefix) if rule.starts_with(prefix) => known.push(line),
                _ => failures.push(line),
            }
        }
    }
    for (file, _) in KNOWN_FAILURES {
        assert!(
            sources.iter().any(|e| e.file == *file),
            "KNOWN_FAILURES names {file}, which manifest.tsv does not list"
        );
    }
    if !known.is_empty() {
        eprintln!(
            "{} known converter bug(s) (KNOWN_FAILURES):\n  {}",
            known.len(),
            known.join("\n  ")
        );
    }
    let slowest = sources
        .iter()
        .zip(&runs)
        .max_by_key(|(_, r)| r.elapsed)
        .map(|(e, r)| format!("{} ({:.1} s)", e.file, r.elapsed.as_secs_f64()))
        .unwrap_or_default();
    eprintln!(
        "{} fixtures: {passed} passed; {} known failures; {} new failures; slowest: {slowest}",
        sources.len(),
        known.len(),
        failures.len()
    );
    assert!(
        sources.len() > 200,
        "only {} source files in the manifest: the fixtures look incomplete",
        sources.len()
    );
    assert!(
        failures.is_empty(),
        "{} rule(s) broken by kts-convert on the shared fixtures:\n  {}",
        failures.len(),
        failures.join("\n  ")
    );
}
