//! Conversion quality against the ground truth in the shared fixtures.
//!
//! The ground-truth sets:
//! - docling: `docling-testdata/<fmt>/groundtruth/<name>.md` for `<fmt>/sources/<name>`
//!   (docx, pptx, html, pdf, csv, epub, webvtt, asciidoc, and the ods, odt and odp
//!   files of `odf`) — scored by word recall and precision;
//! - pdfminer: `pdfminer-samples/expected_text.json` (exact text pdfminer extracts;
//!   a prefix for the corrupted file, where only recall is measured);
//! - markitdown: `markitdown-testdata/expected_outputs/<stem>.md` for the PDFs of
//!   `markitdown-testdata/files`, and the must-include / must-not-include strings of
//!   `markitdown-testdata/test_vectors.json`.
//!
//! One scorer serves every converter: [`evaluate`] takes a function from a fixture
//! to its Markdown ([`kts_conversion`] runs kts-convert; [`folder_conversion`]
//! reads another converter's output from a folder).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Value, json};

use crate::{ManifestEntry, Score, convert_fixture, fixtures_dir, score, visible_text_contains};

/// What a case is measured against.
#[derive(Clone, Debug)]
pub enum Truth {
    /// Markdown or plain text of the whole document.
    Text { text: String, prefix: bool },
    /// Strings that must / must not appear in the Markdown.
    Strings {
        must_include: Vec<String>,
        must_not_include: Vec<String>,
    },
}

/// One file measured against one piece of ground truth.
#[derive(Clone, Debug)]
pub struct Case {
    /// Path relative to the fixtures folder.
    pub file: String,
    /// docx, pptx, html, pdf, or `markitdown-vectors`.
    pub group: String,
    /// Where the truth comes from (relative to the fixtures folder).
    pub truth_from: String,
    pub truth: Truth,
}

/// A converter's answer for one file.
#[derive(Clone, Debug)]
pub enum Conversion {
    Markdown(String),
    Failed(String),
}

/// The group name for string-vector cases.
pub const VECTORS: &str = "markitdown-vectors";

fn read_json(fixtures: &Path, relative: &str) -> Value {
    let path = fixtures.join(relative);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read ground truth {}: {e} (the shared fixtures are incomplete)",
            path.display()
        )
    });
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// Every case of every ground-truth set, plus notes on ground truth that is
/// deliberately not used (so that nothing is skipped silently).
pub fn cases(fixtures: &Path, manifest: &[ManifestEntry]) -> (Vec<Case>, Vec<String>) {
    let mut cases = Vec::new();
    let mut notes = Vec::new();
    let known: BTreeSet<&str> = manifest.iter().map(|e| e.file.as_str()).collect();

    // docling: <fmt>/sources/<name> -> <fmt>/groundtruth/<name>.md (PDFs: <stem>.md).
    for entry in manifest.iter().filter(|e| e.role == "source") {
        let Some(rest) = entry.file.strip_prefix("docling-testdata/") else {
            continue;
        };
        let Some((format, name)) = rest.split_once("/sources/") else {
            continue;
        };
        // The odf folder mixes formats, and holds PDF renderings of its
        // documents that have no ground truth of their own.
        let group = match format {
            "docx" | "pptx" | "html" | "pdf" | "csv" | "epub" | "asciidoc" => format,
            "webvtt" => "vtt",
            "odf" if name.ends_with(".ods") => "ods",
            "odf" if name.ends_with(".odt") => "odt",
            "odf" if name.ends_with(".odp") => "odp",
            _ => continue,
        };
        let stem = Path::new(name)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or(name);
        let candidates = [
            format!("docling-testdata/{format}/groundtruth/{name}.md"),
            format!("docling-testdata/{format}/groundtruth/{stem}.md"),
        ];
        match candidates.iter().find(|c| fixtures.join(c).is_file()) {
            Some(truth) => cases.push(Case {
                file: entry.file.clone(),
                group: group.to_string(),
                truth_from: truth.clone(),
                truth: Truth::Text {
                    text: std::fs::read_to_string(fixtures.join(truth))
                        .unwrap_or_else(|e| panic!("cannot read {truth}: {e}")),
                    prefix: false,
                },
            }),
            None => notes.push(format!(
                "{}: no docling ground truth (looked for {})",
                entry.file, candidates[0]
            )),
        }
    }

    // pdfminer: exact extracted text.
    let pdfminer = read_json(fixtures, "pdfminer-samples/expected_text.json");
    let note = pdfminer.get("note").and_then(Value::as_str).unwrap_or("");
    let expected = pdfminer
        .get("expected")
        .and_then(Value::as_object)
        .expect("pdfminer-samples/expected_text.json has an \"expected\" object");
    for (key, text) in expected {
        let file = format!("pdfminer-samples/{key}");
        if !known.contains(file.as_str()) {
            notes.push(format!(
                "pdfminer expected text {key:?}: a variant of the same file with another \
                 pdfminer layout option, not scored separately"
            ));
            continue;
        }
        cases.push(Case {
            file,
            group: "pdf".into(),
            truth_from: format!("pdfminer-samples/expected_text.json[{key}]"),
            truth: Truth::Text {
                text: text.as_str().unwrap_or_default().to_string(),
                prefix: note.contains(&format!("{key} is a prefix match")),
            },
        });
    }

    // markitdown: expected Markdown, where the manifest names it for a source file.
    let mut used = BTreeSet::new();
    for entry in manifest.iter().filter(|e| e.role == "source") {
        let Some(at) = entry.ground_truth.find("expected_outputs/") else {
            continue;
        };
        let name: String = entry.ground_truth[at..]
            .chars()
            .take_while(|c| !c.is_whitespace() && *c != ';' && *c != ',')
            .collect();
        let dir = Path::new(&entry.file)
            .parent()
            .and_then(Path::parent)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let truth = format!("{dir}/{name}");
        let text = std::fs::read_to_string(fixtures.join(&truth)).unwrap_or_else(|e| {
            panic!(
                "cannot read {truth}, the ground truth manifest.tsv names for {}: {e}",
                entry.file
            )
        });
        used.insert(truth.clone());
        cases.push(Case {
            file: entry.file.clone(),
            group: Path::new(&entry.file)
                .extension()
                .and_then(|e| e.to_str())
                .unwrap_or("other")
                .to_string(),
            truth_from: truth,
            truth: Truth::Text {
                text,
                prefix: false,
            },
        });
    }
    for entry in manifest.iter().filter(|e| e.role == "groundtruth") {
        if entry.file.contains("/expected_outputs/") && !used.contains(&entry.file) {
            notes.push(format!(
                "{}: no source file in manifest.tsv names it as its ground truth: not used",
                entry.file
            ));
        }
    }

    // markitdown: must / must-not strings.
    let vectors = read_json(fixtures, "markitdown-testdata/test_vectors.json");
    for set in ["GENERAL_TEST_VECTORS", "EXTRA_ASSERTIONS"] {
        let list = vectors
            .get(set)
            .and_then(Value::as_array)
            .unwrap_or_else(|| panic!("test_vectors.json has no {set} list"));
        for (i, vector) in list.iter().enumerate() {
            let name = vector
                .get("filename")
                .and_then(Value::as_str)
                .unwrap_or_else(|| panic!("test_vectors.json {set}[{i}] has no filename"));
            cases.push(Case {
                file: format!("markitdown-testdata/files/{name}"),
                group: VECTORS.into(),
                truth_from: format!("markitdown-testdata/test_vectors.json {set}[{i}]"),
                truth: Truth::Strings {
                    must_include: strings(vector.get("must_include")),
                    must_not_include: strings(vector.get("must_not_include")),
                },
            });
        }
    }
    if let Some(list) = vectors
        .get("DATA_URI_TEST_VECTORS")
        .and_then(Value::as_array)
    {
        notes.push(format!(
            "test_vectors.json DATA_URI_TEST_VECTORS ({} vectors): markitdown's keep_data_uris \
             mode (images inlined as data: URIs), which kts has no counterpart for: not scored",
            list.len()
        ));
    }
    for case in &cases {
        assert!(
            known.contains(case.file.as_str()),
            "ground truth names {} but the manifest does not list it",
            case.file
        );
    }
    (cases, notes)
}

/// Converts a fixture with kts-convert (`--no-store`, alone).
pub fn kts_conversion(fixtures: &Path, entry: &ManifestEntry) -> Conversion {
    let run = convert_fixture(fixtures, entry);
    let stdout = run.stdout_text();
    let lines: Vec<&str> = stdout.lines().filter(|l| !l.trim().is_empty()).collect();
    let record: Option<Value> = match lines.as_slice() {
        [line] => serde_json::from_str(line).ok(),
        _ => None,
    };
    let schema = record
        .as_ref()
        .and_then(|r| r.get("schema"))
        .and_then(Value::as_str);
    match (schema, &record) {
        (Some("kts.doc/1"), Some(r)) => match r.get("markdown").and_then(Value::as_str) {
            Some(md) => Conversion::Markdown(md.to_string()),
            None => Conversion::Failed("kts.doc/1 record without markdown".into()),
        },
        (Some("kts.error/1"), Some(r)) => Conversion::Failed(format!(
            "{}: {}",
            r.get("code").and_then(Value::as_str).unwrap_or("?"),
            r.get("message").and_then(Value::as_str).unwrap_or("")
        )),
        _ => Conversion::Failed(format!(
            "kts-convert {} with {} output line(s); stderr: {}",
            run.describe_end(),
            lines.len(),
            run.stderr_text().trim()
        )),
    }
}

/// Reads another converter's output: `<dir>/<file>.md`, or the failure message
/// in `<dir>/<file>.err`.
pub fn folder_conversion(dir: &Path, entry: &ManifestEntry) -> Conversion {
    let md = dir.join(format!("{}.md", entry.file));
    let err = dir.join(format!("{}.err", entry.file));
    if let Ok(text) = std::fs::read_to_string(&md) {
        Conversion::Markdown(text)
    } else if let Ok(text) = std::fs::read_to_string(&err) {
        let last = text
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        Conversion::Failed(format!("failed: {}", last.trim()))
    } else {
        Conversion::Failed(format!("no output: neither {} nor .err", md.display()))
    }
}

/// The result of one case.
#[derive(Clone, Debug)]
pub struct CaseResult {
    pub case: Case,
    pub bad_input: String,
    /// The converter's failure message, if it failed.
    pub failure: Option<String>,
    /// Word score (text truth); a failed normal file scores 0.
    pub score: Option<Score>,
    /// Must-include strings found verbatim in the Markdown.
    pub include_hits: usize,
    /// Must-include strings whose visible words appear in the visible text.
    pub include_text_hits: usize,
    pub include_total: usize,
    /// Must-include strings not found verbatim.
    pub missing: Vec<String>,
    /// Must-not-include strings that were found.
    pub violations: Vec<String>,
}

impl CaseResult {
    /// A failure the manifest announces (bad, encrypted or edge input): listed,
    /// but left out of the means.
    pub fn excused(&self) -> bool {
        self.failure.is_some() && !self.bad_input.is_empty()
    }
    pub fn recall(&self) -> Option<f64> {
        self.score.map(|s| s.recall())
    }
    /// `None` for prefix truth, where precision means nothing.
    pub fn precision(&self) -> Option<f64> {
        match self.case.truth {
            Truth::Text { prefix: true, .. } => None,
            _ => self.score.map(|s| s.precision()),
        }
    }
}

/// Means of one format.
#[derive(Clone, Debug)]
pub struct GroupSummary {
    pub group: String,
    /// Files in the means (excused failures left out).
    pub files: usize,
    /// Of them, files whose conversion failed (scored 0).
    pub failed: usize,
    pub mean_recall: f64,
    pub mean_precision: f64,
    /// The worst files by recall (then precision): (file, recall, precision).
    pub worst: Vec<(String, f64, Option<f64>)>,
}

/// Totals of the string vectors.
#[derive(Clone, Copy, Debug, Default)]
pub struct VectorSummary {
    pub include_total: usize,
    pub include_hits: usize,
    pub include_text_hits: usize,
    pub violations: usize,
}

/// Every result of one converter.
#[derive(Clone, Debug)]
pub struct Report {
    pub label: String,
    pub results: Vec<CaseResult>,
    pub notes: Vec<String>,
}

/// The formats of the table, in order.
pub const GROUPS: [&str; 11] = [
    "docx", "pptx", "html", "pdf", "csv", "ods", "odt", "odp", "epub", "vtt", "asciidoc",
];

/// Runs `convert` once per file that has ground truth and scores every case.
pub fn evaluate(label: &str, convert: impl Fn(&ManifestEntry) -> Conversion + Sync) -> Report {
    let fixtures = fixtures_dir();
    let manifest = crate::manifest();
    let (cases, mut notes) = cases(&fixtures, &manifest);
    let by_file: HashMap<&str, &ManifestEntry> =
        manifest.iter().map(|e| (e.file.as_str(), e)).collect();
    let files: Vec<&ManifestEntry> = cases
        .iter()
        .map(|c| c.file.as_str())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .map(|f| by_file[f])
        .collect();
    let converted: HashMap<String, Conversion> = files
        .iter()
        .zip(crate::parallel_map(&files, |e| convert(e)))
        .map(|(e, c)| (e.file.clone(), c))
        .collect();

    let results = cases
        .into_iter()
        .map(|case| {
            let conversion = &converted[&case.file];
            let (markdown, failure) = match conversion {
                Conversion::Markdown(md) => (md.as_str(), None),
                Conversion::Failed(why) => ("", Some(why.clone())),
            };
            let mut result = CaseResult {
                bad_input: by_file[case.file.as_str()].bad_input.clone(),
                failure,
                score: None,
                include_hits: 0,
                include_text_hits: 0,
                include_total: 0,
                missing: Vec::new(),
                violations: Vec::new(),
                case,
            };
            match &result.case.truth {
                // With prefix truth only recall counts (see `CaseResult::precision`).
                Truth::Text { text, .. } => result.score = Some(score(markdown, text)),
                Truth::Strings {
                    must_include,
                    must_not_include,
                } => {
                    result.include_total = must_include.len();
                    for needle in must_include {
                        if markdown.contains(needle.as_str()) {
                            result.include_hits += 1;
                        } else {
                            result.missing.push(needle.clone());
                        }
                        if visible_text_contains(markdown, needle) {
                            result.include_text_hits += 1;
                        }
                    }
                    result.violations = must_not_include
                        .iter()
                        .filter(|n| markdown.contains(n.as_str()))
                        .cloned()
                        .collect();
                }
            }
            result
        })
        .collect::<Vec<_>>();

    // Ground truth the manifest announces for files no case uses.
    let scored: BTreeSet<&str> = results.iter().map(|r| r.case.file.as_str()).collect();
    for entry in manifest.iter().filter(|e| e.role == "source") {
        let mentioned = notes
            .iter()
            .any(|n| n.starts_with(&format!("{}:", entry.file)));
        let unscored = !entry.ground_truth.starts_with("none") || entry.bad_input == "encrypted";
        if !scored.contains(entry.file.as_str()) && unscored && !mentioned {
            notes.push(format!(
                "{}: not scored (ground truth: {:?}; bad_input: {:?})",
                entry.file,
                entry.ground_truth,
                if entry.bad_input.is_empty() {
                    "-"
                } else {
                    &entry.bad_input
                }
            ));
        }
    }
    Report {
        label: label.to_string(),
        results,
        notes,
    }
}

impl Report {
    /// The means of one format (`None` when it has no file).
    pub fn group(&self, group: &str) -> Option<GroupSummary> {
        let mut rows: Vec<&CaseResult> = self
            .results
            .iter()
            .filter(|r| r.case.group == group && r.score.is_some() && !r.excused())
            .collect();
        if rows.is_empty() {
            return None;
        }
        let n = rows.len() as f64;
        let mean_recall = rows.iter().filter_map(|r| r.recall()).sum::<f64>() / n;
        let precisions: Vec<f64> = rows.iter().filter_map(|r| r.precision()).collect();
        let mean_precision = if precisions.is_empty() {
            1.0
        } else {
            precisions.iter().sum::<f64>() / precisions.len() as f64
        };
        rows.sort_by(|a, b| {
            let key = |r: &CaseResult| (r.recall().unwrap_or(0.0), r.precision().unwrap_or(1.0));
            key(a).partial_cmp(&key(b)).expect("scores are not NaN")
        });
        Some(GroupSummary {
            group: group.to_string(),
            files: rows.len(),
            failed: rows.iter().filter(|r| r.failure.is_some()).count(),
            mean_recall,
            mean_precision,
            worst: rows
                .iter()
                .take(3)
                .map(|r| {
                    (
                        r.case.file.clone(),
                        r.recall().unwrap_or(0.0),
                        r.precision(),
                    )
                })
                .collect(),
        })
    }

    /// Totals of the markitdown string vectors.
    pub fn vectors(&self) -> VectorSummary {
        let mut v = VectorSummary::default();
        for r in self.results.iter().filter(|r| r.case.group == VECTORS) {
            v.include_total += r.include_total;
            v.include_hits += r.include_hits;
            v.include_text_hits += r.include_text_hits;
            v.violations += r.violations.len();
        }
        v
    }

    /// Failures the manifest announces (bad / encrypted / edge input), one per file.
    pub fn excused_failures(&self) -> BTreeMap<String, String> {
        self.results
            .iter()
            .filter(|r| r.excused())
            .map(|r| {
                (
                    r.case.file.clone(),
                    format!(
                        "{} input: {}",
                        r.bad_input,
                        r.failure.as_deref().unwrap_or("")
                    ),
                )
            })
            .collect()
    }

    /// The Markdown report: per-format table, vectors, failures, notes.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let short = |f: &str| {
            Path::new(f)
                .file_name()
                .map_or(f.to_string(), |n| n.to_string_lossy().into_owned())
        };
        let _ = writeln!(out, "\n## Conversion quality: {}\n", self.label);
        let _ = writeln!(
            out,
            "| format | files | failed (scored 0) | mean recall | mean precision | worst 3 (recall/precision) |"
        );
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---|");
        for group in GROUPS {
            match self.group(group) {
                Some(g) => {
                    let worst: Vec<String> = g
                        .worst
                        .iter()
                        .map(|(f, r, p)| match p {
                            Some(p) => format!("{} {r:.2}/{p:.2}", short(f)),
                            None => format!("{} {r:.2}/-", short(f)),
                        })
                        .collect();
                    let _ = writeln!(
                        out,
                        "| {group} | {} | {} | {:.3} | {:.3} | {} |",
                        g.files,
                        g.failed,
                        g.mean_recall,
                        g.mean_precision,
                        worst.join("; ")
                    );
                }
                None => {
                    let _ = writeln!(out, "| {group} | 0 | 0 | - | - | |");
                }
            }
        }
        let v = self.vectors();
        let _ = writeln!(
            out,
            "\nmarkitdown test vectors: must-include {}/{} verbatim, {}/{} as visible words; \
             must-not-include violations: {}",
            v.include_hits, v.include_total, v.include_text_hits, v.include_total, v.violations
        );
        for r in self.results.iter().filter(|r| r.case.group == VECTORS) {
            for m in &r.missing {
                let _ = writeln!(out, "  - missing in {}: {m:?}", short(&r.case.file));
            }
            for m in &r.violations {
                let _ = writeln!(out, "  - VIOLATION in {}: {m:?}", short(&r.case.file));
            }
            if let Some(why) = &r.failure {
                let _ = writeln!(
                    out,
                    "  - {} failed to convert ({}): {why}",
                    short(&r.case.file),
                    if r.bad_input.is_empty() {
                        "not bad input"
                    } else {
                        &r.bad_input
                    }
                );
            }
        }
        let counted: Vec<&CaseResult> = self
            .results
            .iter()
            .filter(|r| r.failure.is_some() && !r.excused() && r.case.group != VECTORS)
            .collect();
        if !counted.is_empty() {
            let _ = writeln!(out, "\nConversions that failed on good input (scored 0):");
            for r in counted {
                let _ = writeln!(
                    out,
                    "  - {}: {}",
                    r.case.file,
                    r.failure.as_deref().unwrap_or("")
                );
            }
        }
        let excused = self.excused_failures();
        if !excused.is_empty() {
            let _ = writeln!(
                out,
                "\nNot in the means: conversions that failed on input the manifest marks bad/encrypted/edge:"
            );
            for (file, why) in excused {
                let _ = writeln!(out, "  - {file}: {why}");
            }
        }
        if !self.notes.is_empty() {
            let _ = writeln!(out, "\nNotes:");
            for note in &self.notes {
                let _ = writeln!(out, "  - {note}");
            }
        }
        out
    }

    /// Per-file scores, for `target/quality-report*.json`.
    pub fn to_json(&self) -> Value {
        let groups: Vec<Value> = GROUPS
            .iter()
            .filter_map(|g| self.group(g))
            .map(|g| {
                json!({
                    "format": g.group, "files": g.files, "failed": g.failed,
                    "mean_recall": g.mean_recall, "mean_precision": g.mean_precision,
                    "worst": g.worst.iter().map(|(f, r, p)| json!({"file": f, "recall": r, "precision": p})).collect::<Vec<_>>(),
                })
            })
            .collect();
        let v = self.vectors();
        let files: Vec<Value> = self
            .results
            .iter()
            .map(|r| {
                let mut o = json!({
                    "file": r.case.file,
                    "format": r.case.group,
                    "truth": r.case.truth_from,
                    "bad_input": r.bad_input,
                    "failure": r.failure,
                    "excused": r.excused(),
                });
                if let Some(s) = r.score {
                    o["recall"] = json!(s.recall());
                    o["precision"] = json!(r.precision());
                    o["truth_words"] = json!(s.truth_words);
                    o["our_words"] = json!(s.our_words);
                    o["common_words"] = json!(s.common);
                }
                if r.case.group == VECTORS {
                    o["must_include"] = json!(r.include_total);
                    o["must_include_hits"] = json!(r.include_hits);
                    o["must_include_text_hits"] = json!(r.include_text_hits);
                    o["missing"] = json!(r.missing);
                    o["violations"] = json!(r.violations);
                }
                o
            })
            .collect();
        json!({
            "converter": self.label,
            "formats": groups,
            "vectors": {
                "must_include": v.include_total,
                "must_include_hits": v.include_hits,
                "must_include_text_hits": v.include_text_hits,
                "must_not_violations": v.violations,
            },
            "files": files,
            "notes": self.notes,
        })
    }

    /// Writes [`Report::to_json`] to `path` (creating its folder).
    pub fn write_json(&self, path: &Path) {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        }
        let text = serde_json::to_string_pretty(&self.to_json()).expect("report serialises");
        std::fs::write(path, text + "\n")
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    }
}
