//! kts-graph on real documents: Rust RFCs from `../shared/corpora/rust-rfcs`
//! and PDF, DOCX, PPTX and HTML files from `../shared/fixtures`, copied into
//! a scope under their shared-folder paths and indexed by the real pipeline.
//!
//! What the graph must find is derived from the documents themselves: an
//! entity's documents and source chunks are exactly those whose text (the
//! copied Markdown, or the Markdown kts-convert made of a binary file)
//! contains it. The few names and phrases written here were checked by
//! reading the documents. A second scope is changed and re-indexed to check
//! that the graph update touches exactly the changed and deleted documents.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

use regex::Regex;
use serde_json::Value;

/// RFCs from `corpora/rust-rfcs/text`, chosen for their error codes (E0277,
/// E0308, E0133, E0425, E0597), acronyms spelled out (UB, RLS, LSP, ABI,
/// FRU, FCP, MSRV), defined terms and CamelCase types.
const RFCS: [&str; 28] = [
    "0453-macro-reform.md",
    "0592-c-str-deref.md",
    "0736-privacy-respecting-fru.md",
    "0809-box-and-in-for-stdlib.md",
    "1122-language-semver.md",
    "1317-ide.md",
    "1682-field-init-shorthand.md",
    "1859-try-trait.md",
    "1869-eprintln.md",
    "2397-do-not-recommend.md",
    "2495-min-rust-version.md",
    "2532-associated-type-defaults.md",
    "2603-rust-symbol-name-mangling-v0.md",
    "2795-format-args-implicit-identifiers.md",
    "2834-cargo-report-future-incompat.md",
    "2873-inline-asm.md",
    "2912-rust-analyzer.md",
    "2992-cfg-target-abi.md",
    "3016-const-ub.md",
    "3216-closure-lifetime-binder.md",
    "3458-unsafe-fields.md",
    "3498-lifetime-capture-rules-2024.md",
    "3537-msrv-resolver.md",
    "3621-derive-smart-pointer.md",
    "3627-match-ergonomics-2024.md",
    "3654-return-type-notation.md",
    "3668-async-closures.md",
    "3721-homogeneous-try-blocks.md",
];

/// Fixtures (paths inside `fixtures/`) whose converted text holds acronyms
/// with expansions (RCAC, ITSO, LLM) and CamelCase product names.
const FIXTURES: [&str; 6] = [
    "docling-testdata/pdf/sources/redp5110_sampled.pdf",
    "docling-testdata/pdf/sources/multi_page.pdf",
    "docling-testdata/pdf/sources/2305.03393v1-pg9.pdf",
    "docling-testdata/html/sources/html_code_snippets.html",
    "markitdown-testdata/files/test.docx",
    "markitdown-testdata/files/test.pptx",
];

/// The scope path of an RFC.
fn rfc(name: &str) -> String {
    format!("corpora/rust-rfcs/text/{name}")
}

/// The scope path of a fixture.
fn fixture(name: &str) -> String {
    format!("fixtures/{name}")
}

// ---------------------------------------------------------------- running the tools

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A chunk as kts-chunk wrote it.
#[derive(Clone, Debug)]
struct Chunk {
    path: String,
    text: String,
}

/// A scope folder, with what the pipeline made of its documents.
struct Scope {
    dir: PathBuf,
    /// Beside the scope folder (kts-crawl must not see it): the streams kept by `tee`.
    work: PathBuf,
    /// The Markdown kts-convert made of each document, by path.
    markdown: BTreeMap<String, String>,
    /// Every chunk kts-chunk wrote, by chunk id.
    chunks: BTreeMap<String, Chunk>,
    runs: usize,
}

impl Scope {
    /// Copies the chosen documents into `work/scope` and indexes them.
    fn create(work: &Path) -> Scope {
        let dir = work.join("scope");
        let copies = RFCS
            .iter()
            .map(|name| (format!("corpora/rust-rfcs/text/{name}"), rfc(name)))
            .chain(
                FIXTURES
                    .iter()
                    .map(|name| (format!("fixtures/{name}"), fixture(name))),
            );
        for (shared, local) in copies {
            let from = kts_tests::shared_path(&shared);
            let to = dir.join(&local);
            std::fs::create_dir_all(to.parent().expect("a file path has a folder"))
                .unwrap_or_else(|e| panic!("cannot create the folder of {}: {e}", to.display()));
            std::fs::copy(&from, &to).unwrap_or_else(|e| {
                panic!("cannot copy {} to {}: {e}", from.display(), to.display())
            });
        }
        let mut scope = Scope {
            dir,
            work: work.to_path_buf(),
            markdown: BTreeMap::new(),
            chunks: BTreeMap::new(),
            runs: 0,
        };
        scope.index();
        scope
    }

    /// Runs kts-crawl | kts-convert | kts-chunk | kts-index, keeping the
    /// documents and chunks that went through.
    fn index(&mut self) {
        self.runs += 1;
        let stream = self.work.join(format!("stream-{}.jsonl", self.runs));
        let dir = self.dir.display();
        let output = kts_tests::succeeded(kts_tests::shell(&format!(
            "kts-crawl '{dir}' | kts-convert | kts-chunk | tee '{}' | kts-index '{dir}'",
            stream.display()
        )));
        assert!(
            stderr(&output).contains("0 failed"),
            "some documents failed to index:\n{}",
            stderr(&output)
        );
        let text = std::fs::read_to_string(&stream)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", stream.display()));
        // A document that went through again replaces all its chunks.
        let mut chunks: BTreeMap<String, Chunk> = BTreeMap::new();
        for line in text.lines() {
            let record: Value = serde_json::from_str(line).unwrap_or_else(|e| {
                panic!("the pipeline wrote a line that is not JSON ({e}): {line}")
            });
            let field = |name: &str| record[name].as_str().unwrap_or_default().to_string();
            match record["schema"].as_str() {
                Some("kts.doc/1") => {
                    let path = field("path");
                    self.chunks.retain(|_, chunk| chunk.path != path);
                    self.markdown.insert(path, field("markdown"));
                }
                Some("kts.chunk/1") => {
                    let chunk = Chunk {
                        path: field("path"),
                        text: field("text"),
                    };
                    chunks.insert(field("chunk_id"), chunk);
                }
                _ => {}
            }
        }
        self.chunks.extend(chunks);
    }

    /// The chunks of the documents in the scope now.
    fn current_chunks(&self) -> BTreeMap<String, Chunk> {
        let corpus = self.corpus();
        self.chunks
            .iter()
            .filter(|(_, chunk)| corpus.contains_key(&chunk.path))
            .map(|(id, chunk)| (id.clone(), chunk.clone()))
            .collect()
    }

    /// `kts-graph DIR ARGS`, which must succeed.
    fn graph(&self, args: &str) -> Output {
        kts_tests::succeeded(kts_tests::shell(&format!(
            "kts-graph '{}' {args}",
            self.dir.display()
        )))
    }

    /// Brings the graph up to date and exports it: (summary on stderr, graph).
    fn update(&self, args: &str) -> (String, Graph) {
        let output = self.graph(&format!("--export node-link {args}"));
        (stderr(&output), Graph::parse(&output.stdout))
    }

    /// The `entities --kind KIND` records.
    fn entities(&self, kind: &str) -> Vec<Value> {
        String::from_utf8_lossy(&self.graph(&format!("entities --kind {kind}")).stdout)
            .lines()
            .map(|line| {
                serde_json::from_str(line).unwrap_or_else(|e| {
                    panic!("kts-graph wrote a line that is not JSON ({e}): {line}")
                })
            })
            .collect()
    }

    /// The documents in the scope now, by path: a Markdown file's own text,
    /// else the Markdown kts-convert made of it.
    fn corpus(&self) -> BTreeMap<String, String> {
        let mut files = Vec::new();
        list_files(&self.dir, &self.dir, &mut files);
        files
            .into_iter()
            .map(|path| {
                let text = if path.ends_with(".md") {
                    std::fs::read_to_string(self.dir.join(&path))
                        .unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
                } else {
                    self.markdown
                        .get(&path)
                        .unwrap_or_else(|| panic!("kts-convert wrote no Markdown for {path}"))
                        .clone()
                };
                (path, text)
            })
            .collect()
    }
}

/// Paths (relative to `root`, `/`-separated) of the files under `dir`, but not under `.kts`.
fn list_files(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let entries =
        std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("a folder entry").path();
        if path.file_name().is_some_and(|n| n == ".kts") {
            continue;
        }
        if path.is_dir() {
            list_files(root, &path, out);
        } else {
            let relative = path.strip_prefix(root).expect("under the scope");
            let parts: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            out.push(parts.join("/"));
        }
    }
}

/// The scope the read-only tests share, built once, with its graph.
struct Built {
    scope: Scope,
    summary: String,
    graph: Graph,
}

fn built() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| {
        let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("graph_shared");
        if work.exists() {
            std::fs::remove_dir_all(&work)
                .unwrap_or_else(|e| panic!("cannot clear {}: {e}", work.display()));
        }
        std::fs::create_dir_all(&work)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", work.display()));
        let scope = Scope::create(&work);
        let (summary, graph) = scope.update("");
        Built {
            scope,
            summary,
            graph,
        }
    })
}

// ---------------------------------------------------------------- the exported graph

#[derive(Clone, Debug)]
struct Link {
    source: String,
    target: String,
    label: String,
    weight: f64,
}

/// The node-link export: nodes by id, and links.
struct Graph {
    nodes: BTreeMap<String, Value>,
    links: Vec<Link>,
}

impl Graph {
    fn parse(stdout: &[u8]) -> Graph {
        let export: Value = serde_json::from_slice(stdout).unwrap_or_else(|e| {
            panic!(
                "the node-link export is not JSON ({e}): {}",
                String::from_utf8_lossy(&stdout[..stdout.len().min(500)])
            )
        });
        let text = |value: &Value, field: &str| {
            value[field]
                .as_str()
                .unwrap_or_else(|| panic!("no {field} in {value}"))
                .to_string()
        };
        let nodes = export["nodes"]
            .as_array()
            .expect("the export has nodes")
            .iter()
            .map(|node| (text(node, "id"), node.clone()))
            .collect();
        let links = export["links"]
            .as_array()
            .expect("the export has links")
            .iter()
            .map(|link| Link {
                source: text(link, "source"),
                target: text(link, "target"),
                label: text(link, "type"),
                weight: link["weight"].as_f64().expect("a link has a weight"),
            })
            .collect();
        Graph { nodes, links }
    }

    fn kind(&self, id: &str) -> &str {
        self.nodes
            .get(id)
            .and_then(|n| n["kind"].as_str())
            .unwrap_or_else(|| panic!("a link names node {id}, which the export does not list"))
    }

    fn path(&self, id: &str) -> Option<&str> {
        self.nodes.get(id).and_then(|n| n["path"].as_str())
    }

    /// Ids (without `chunk:`) of the chunks with a MENTIONS link to `entity`.
    fn chunks_mentioning(&self, entity: &str) -> BTreeSet<String> {
        self.links
            .iter()
            .filter(|l| {
                l.target == entity && l.label == "MENTIONS" && self.kind(&l.source) == "CHUNK"
            })
            .map(|l| l.source.trim_start_matches("chunk:").to_string())
            .collect()
    }

    /// Paths of the documents with a mention link (MENTIONS, COVERS, ADDRESSES) to `entity`.
    fn documents_mentioning(&self, entity: &str) -> BTreeMap<String, String> {
        self.links
            .iter()
            .filter(|l| {
                l.target == entity && l.label != "DEFINES" && self.kind(&l.source) == "DOCUMENT"
            })
            .map(|l| {
                let path = self.path(&l.source).expect("a document node has a path");
                (path.to_string(), l.label.clone())
            })
            .collect()
    }

    fn has_link(&self, source: &str, target: &str, label: &str) -> bool {
        self.links
            .iter()
            .any(|l| l.source == source && l.target == target && l.label == label)
    }

    /// The `doc:<id>` node of the document at `path`.
    fn document(&self, path: &str) -> &str {
        self.nodes
            .iter()
            .find(|(_, n)| n["kind"] == "DOCUMENT" && n["path"] == path)
            .map(|(id, _)| id.as_str())
            .unwrap_or_else(|| panic!("the graph has no DOCUMENT node for {path}"))
    }

    /// The nodes and links that belong to the documents of `paths`: their
    /// DOCUMENT and CHUNK nodes, and every link from those nodes except to
    /// TOPIC nodes (topic weights are TF-IDF over the whole scope).
    fn owned_by(&self, paths: &BTreeSet<String>) -> (BTreeSet<String>, BTreeSet<String>) {
        let owned = |id: &str| {
            matches!(self.kind(id), "DOCUMENT" | "CHUNK")
                && self.path(id).is_some_and(|p| paths.contains(p))
        };
        let nodes = self
            .nodes
            .iter()
            .filter(|(id, _)| owned(id))
            .map(|(_, n)| n.to_string())
            .collect();
        let links = self
            .links
            .iter()
            .filter(|l| owned(&l.source) && self.kind(&l.target) != "TOPIC")
            .map(|l| format!("{} -{}-> {} {}", l.source, l.label, l.target, l.weight))
            .collect();
        (nodes, links)
    }
}

// ---------------------------------------------------------------- reading the documents

/// Whole-word, case-sensitive.
fn word(name: &str) -> Regex {
    Regex::new(&format!(r"\b{}\b", regex::escape(name)))
        .expect("an escaped name is a valid pattern")
}

/// An acronym, or its plural ("ABIs").
fn acronym(letters: &str) -> Regex {
    Regex::new(&format!(r"\b{}s?\b", regex::escape(letters))).expect("a valid pattern")
}

/// The text with fenced code blocks blanked, as kts-graph reads prose
/// (acronyms and quoted terms are only looked for outside code blocks).
fn prose(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut open: Option<(char, usize)> = None;
    for line in text.split_inclusive('\n') {
        let in_code = match (open, fence(line)) {
            (None, Some(marker)) => {
                open = Some(marker);
                true
            }
            (Some((c, n)), Some((close, m))) if c == close && m >= n => {
                open = None;
                true
            }
            (current, _) => current.is_some(),
        };
        if in_code {
            out.push_str(if line.ends_with('\n') { "\n" } else { "" });
        } else {
            out.push_str(line);
        }
    }
    out
}

/// The character and length of a ``` or ~~~ fence line.
fn fence(line: &str) -> Option<(char, usize)> {
    let unindented = line.trim_start_matches(' ');
    if line.len() - unindented.len() > 3 {
        return None;
    }
    let c = unindented
        .chars()
        .next()
        .filter(|c| matches!(c, '`' | '~'))?;
    let n = unindented.chars().take_while(|&x| x == c).count();
    (n >= 3).then_some((c, n))
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Where an entity occurs, in prose only or anywhere.
#[derive(Clone, Copy)]
enum Reading {
    Anywhere,
    Prose,
}

impl Reading {
    fn finds(self, pattern: &Regex, text: &str) -> bool {
        match self {
            Reading::Anywhere => pattern.is_match(text),
            Reading::Prose => pattern.is_match(&prose(text)),
        }
    }
}

fn documents_containing(
    corpus: &BTreeMap<String, String>,
    pattern: &Regex,
    reading: Reading,
) -> BTreeSet<String> {
    corpus
        .iter()
        .filter(|(_, text)| reading.finds(pattern, text))
        .map(|(path, _)| path.clone())
        .collect()
}

fn chunks_containing(
    chunks: &BTreeMap<String, Chunk>,
    pattern: &Regex,
    reading: Reading,
) -> BTreeSet<String> {
    chunks
        .iter()
        .filter(|(_, chunk)| reading.finds(pattern, &chunk.text))
        .map(|(id, _)| id.clone())
        .collect()
}

/// The record named `name` (case-insensitively) among `records`.
fn named<'a>(records: &'a [Value], kind: &str, name: &str) -> &'a Value {
    records
        .iter()
        .find(|n| {
            n["name"]
                .as_str()
                .is_some_and(|s| s.eq_ignore_ascii_case(name))
        })
        .unwrap_or_else(|| {
            let names: Vec<&str> = records.iter().filter_map(|n| n["name"].as_str()).collect();
            panic!("kts-graph lists no {kind} {name:?}; it lists {names:?}")
        })
}

fn documents(record: &Value) -> BTreeSet<String> {
    record["documents"]
        .as_array()
        .unwrap_or_else(|| panic!("no documents in {record}"))
        .iter()
        .map(|p| p.as_str().expect("a document path").to_string())
        .collect()
}

fn label_for(kind: &str) -> &'static str {
    match kind {
        "SYSTEM" => "COVERS",
        "ERROR_CODE" => "ADDRESSES",
        _ => "MENTIONS",
    }
}

/// Checks that the entity `record` is mentioned by exactly the documents
/// and chunks whose text contains `pattern`; returns those documents.
fn assert_found_where_it_occurs(
    scope: &Scope,
    graph: &Graph,
    record: &Value,
    pattern: &Regex,
    reading: Reading,
) -> BTreeSet<String> {
    let id = record["id"].as_str().expect("an entity has an id");
    let kind = record["kind"].as_str().expect("an entity has a kind");
    let corpus = scope.corpus();
    let expected = documents_containing(&corpus, pattern, reading);
    assert!(
        !expected.is_empty(),
        "no document contains {pattern}: the chosen documents changed?"
    );

    let listed = documents(record);
    if expected.len() <= 10 {
        assert_eq!(
            listed, expected,
            "{id}: `kts-graph entities` lists other documents than those containing {pattern}"
        );
    } else {
        assert!(
            listed.is_subset(&expected),
            "{id}: lists {listed:?}, not among {expected:?}"
        );
    }

    let by_document = graph.documents_mentioning(id);
    let linked: BTreeSet<String> = by_document.keys().cloned().collect();
    assert_eq!(
        linked, expected,
        "{id}: DOCUMENT links differ from the documents containing {pattern}"
    );
    for (path, label) in &by_document {
        assert_eq!(label, label_for(kind), "{id}: the link from {path}");
    }

    let mentioning = graph.chunks_mentioning(id);
    let containing = chunks_containing(&scope.current_chunks(), pattern, reading);
    assert_eq!(
        mentioning, containing,
        "{id}: the chunks with a MENTIONS link differ from the chunks whose text contains {pattern}"
    );
    let chunk_paths: BTreeSet<String> = mentioning
        .iter()
        .map(|c| {
            graph
                .path(&format!("chunk:{c}"))
                .expect("a chunk node has a path")
                .to_string()
        })
        .collect();
    assert_eq!(
        chunk_paths, expected,
        "{id}: the paths of its source chunks"
    );
    for chunk in &mentioning {
        let node_path = graph.path(&format!("chunk:{chunk}"));
        let written = scope.chunks.get(chunk).map(|c| c.path.as_str());
        assert_eq!(
            node_path, written,
            "chunk {chunk}: its path in the graph and from kts-chunk"
        );
    }
    expected
}

// ---------------------------------------------------------------- the tests

#[test]
fn every_copied_document_is_indexed_and_extracted() {
    let built = built();
    let total = RFCS.len() + FIXTURES.len();
    assert!(
        built
            .summary
            .contains(&format!("{total} documents extracted"))
            && built.summary.contains("0 removed"),
        "{}",
        built.summary
    );
    let paths: BTreeSet<String> = built
        .graph
        .nodes
        .values()
        .filter(|n| n["kind"] == "DOCUMENT")
        .map(|n| {
            n["path"]
                .as_str()
                .expect("a document has a path")
                .to_string()
        })
        .collect();
    let copied: BTreeSet<String> = built.scope.corpus().into_keys().collect();
    assert_eq!(paths, copied, "DOCUMENT nodes are the copied files");
    for fixture_path in FIXTURES.map(fixture) {
        let text = &built.scope.corpus()[&fixture_path];
        assert!(
            text.split_whitespace().count() > 50,
            "kts-convert made little text of {fixture_path}: {text:?}"
        );
    }
}

#[test]
fn rust_error_codes_are_found_in_exactly_the_chunks_that_contain_them() {
    let built = built();
    let codes = built.scope.entities("ERROR_CODE");
    // Each is in several RFCs (checked with grep): the graph must join them.
    for (code, at_least) in [
        ("E0277", 5),
        ("E0308", 4),
        ("E0133", 2),
        ("E0425", 2),
        ("E0597", 2),
    ] {
        let record = named(&codes, "ERROR_CODE", code);
        assert_eq!(record["id"], format!("error_code:{code}"));
        assert_eq!(record["kind"], "ERROR_CODE");
        let found = assert_found_where_it_occurs(
            &built.scope,
            &built.graph,
            record,
            &word(code),
            Reading::Anywhere,
        );
        assert!(
            found.len() >= at_least,
            "{code} is in {at_least} or more of the chosen RFCs, the graph has {found:?}"
        );
        assert!(
            record["mentions"].as_u64().unwrap_or(0) >= found.len() as u64,
            "{record}"
        );
    }
    // And so is every other error code the graph lists.
    for record in &codes {
        let name = record["name"].as_str().expect("a name");
        assert_found_where_it_occurs(
            &built.scope,
            &built.graph,
            record,
            &word(name),
            Reading::Anywhere,
        );
    }
}

#[test]
fn camel_case_types_and_product_names_are_systems_with_their_source_chunks() {
    let built = built();
    let systems = built.scope.entities("SYSTEM");
    // (name, a document that must be among its documents: one per format)
    let cases = [
        ("HashMap", rfc("3668-async-closures.md")),
        ("IntoIterator", rfc("3654-return-type-notation.md")),
        ("FnOnce", rfc("3668-async-closures.md")),
        ("PhantomData", rfc("3621-derive-smart-pointer.md")),
        ("AutoGen", fixture("markitdown-testdata/files/test.docx")),
        ("AutoGen", fixture("markitdown-testdata/files/test.pptx")),
        (
            "WordPerfect",
            fixture("docling-testdata/pdf/sources/multi_page.pdf"),
        ),
        (
            "PubTabNet",
            fixture("docling-testdata/pdf/sources/2305.03393v1-pg9.pdf"),
        ),
        (
            "HuggingFace",
            fixture("docling-testdata/html/sources/html_code_snippets.html"),
        ),
    ];
    for (name, source) in cases {
        let record = named(&systems, "SYSTEM", name);
        assert_eq!(record["id"], format!("system:{}", name.to_lowercase()));
        let found = assert_found_where_it_occurs(
            &built.scope,
            &built.graph,
            record,
            &word(name),
            Reading::Anywhere,
        );
        assert!(
            found.contains(&source),
            "SYSTEM {name}: {source} is not among {found:?}"
        );
    }
}

#[test]
fn acronyms_are_found_with_the_expansion_their_documents_spell_out() {
    let built = built();
    let acronyms = built.scope.entities("ACRONYM");
    let corpus = built.scope.corpus();
    // (acronym, expansion, a document spelling it out as "Expansion (ACR)",
    // whether the expansion is also a CONCEPT the acronym is defined_as)
    let cases = [
        (
            "UB",
            "Undefined Behavior",
            rfc("1122-language-semver.md"),
            true,
        ),
        ("UB", "Undefined Behavior", rfc("3016-const-ub.md"), true),
        (
            "FRU",
            "Functional Record Update",
            rfc("0736-privacy-respecting-fru.md"),
            true,
        ),
        ("RLS", "Rust Language Server", rfc("1317-ide.md"), false),
        (
            "LSP",
            "Language Server Protocol",
            rfc("2912-rust-analyzer.md"),
            false,
        ),
        (
            "ABI",
            "Application Binary Interface",
            rfc("2992-cfg-target-abi.md"),
            false,
        ),
        (
            "FCP",
            "Final Comment Period",
            rfc("3537-msrv-resolver.md"),
            false,
        ),
        (
            "RCAC",
            "Row and Column Access Control",
            fixture("docling-testdata/pdf/sources/redp5110_sampled.pdf"),
            true,
        ),
        (
            "ITSO",
            "International Technical Support Organization",
            fixture("docling-testdata/pdf/sources/redp5110_sampled.pdf"),
            true,
        ),
        (
            "LLM",
            "Large language models",
            fixture("markitdown-testdata/files/test.docx"),
            false,
        ),
    ];
    for (letters, expansion, source, is_concept) in cases {
        let record = named(&acronyms, "ACRONYM", letters);
        let id = format!("acronym:{}", letters.to_lowercase());
        assert_eq!(record["id"], id);
        assert_eq!(record["expansion"], expansion, "{record}");
        let found = assert_found_where_it_occurs(
            &built.scope,
            &built.graph,
            record,
            &acronym(letters),
            Reading::Prose,
        );

        // The documents spelling it out, read from their text.
        let spelled = Regex::new(&format!(
            r"{} \({}s?\)",
            regex::escape(expansion),
            regex::escape(letters)
        ))
        .expect("a valid pattern");
        let spelling = documents_containing(&corpus, &spelled, Reading::Prose);
        assert!(
            spelling.contains(&source),
            "{source} spells out {letters} as {expansion:?} (it did when this test was written); \
             the documents that do: {spelling:?}"
        );
        assert!(
            spelling.is_subset(&found),
            "{letters}: {spelling:?} not all in {found:?}"
        );
        let source_chunk = built.graph.chunks_mentioning(&id).into_iter().find(|c| {
            built.scope.chunks[c].path == source && spelled.is_match(&built.scope.chunks[c].text)
        });
        assert!(
            source_chunk.is_some(),
            "{letters}: no chunk of {source} spelling out {expansion:?} mentions it"
        );

        if is_concept {
            let concept = format!("concept:{}", expansion.to_lowercase());
            assert!(
                built.graph.has_link(&id, &concept, "defined_as"),
                "no {id} -defined_as-> {concept} link"
            );
            let concept_paths: BTreeSet<String> = built
                .graph
                .chunks_mentioning(&concept)
                .iter()
                .map(|c| built.scope.chunks[c].path.clone())
                .collect();
            assert!(
                concept_paths.contains(&source),
                "{concept} is not mentioned by a chunk of {source}: {concept_paths:?}"
            );
        }
    }

    // MSRV is spelled out in two ways ("Minimum Supported Rust Version" in
    // 2495, "minimum-supported Rust version" in 3537): either will do.
    let msrv = named(&acronyms, "ACRONYM", "MSRV");
    let expansion = msrv["expansion"].as_str().unwrap_or_default();
    assert_eq!(
        expansion.to_lowercase().replace('-', " "),
        "minimum supported rust version",
        "{msrv}"
    );
    let found = assert_found_where_it_occurs(
        &built.scope,
        &built.graph,
        msrv,
        &acronym("MSRV"),
        Reading::Prose,
    );
    for source in ["2495-min-rust-version.md", "3537-msrv-resolver.md"] {
        assert!(
            found.contains(&rfc(source)),
            "MSRV: {source} not in {found:?}"
        );
    }
}

#[test]
fn defined_terms_keep_their_definition_and_defining_document() {
    let built = built();
    let terms = built.scope.entities("TERM");
    let corpus = built.scope.corpus();
    // (term, the RFC defining it, words of its defining sentence), read in the RFCs.
    let cases = [
        (
            "syntax environment",
            "0453-macro-reform.md",
            "refers to the set of syntax extensions",
        ),
        (
            "Standard error",
            "1869-eprintln.md",
            "is defined as \"the same place",
        ),
        (
            "Unambiguous",
            "2603-rust-symbol-name-mangling-v0.md",
            "means that no two distinct",
        ),
        (
            "nomem",
            "2873-inline-asm.md",
            "does not read or write to memory",
        ),
        (
            "pure",
            "2873-inline-asm.md",
            "has no observable side effects",
        ),
        (
            "CStr",
            "0592-c-str-deref.md",
            "is defined as a newtype over a character slice",
        ),
    ];
    for (term, file, words) in cases {
        let path = rfc(file);
        let record = named(&terms, "TERM", term);
        let id = format!("term:{}", term.to_lowercase());
        assert_eq!(record["id"], id);
        assert_eq!(record["defined_in"], path.as_str(), "{record}");
        let definition = record["definition"]
            .as_str()
            .unwrap_or_else(|| panic!("TERM {term} has no definition: {record}"));
        assert!(
            definition.contains(term) && definition.contains(words),
            "TERM {term}: definition {definition:?} lacks {term:?} or {words:?}"
        );
        // The definition is a sentence of its document, whitespace collapsed.
        let sentence = definition.trim_end_matches('…');
        assert!(
            collapse(&corpus[&path]).contains(sentence),
            "TERM {term}: {definition:?} is not text of {path}"
        );

        let document = built.graph.document(&path);
        assert!(
            built.graph.has_link(document, &id, "DEFINES"),
            "no {document} ({path}) -DEFINES-> {id} link"
        );
        let listed = documents(record);
        assert!(
            listed.contains(&path),
            "TERM {term}: {path} not among {listed:?}"
        );
        for other in &listed {
            assert!(
                corpus[other].to_lowercase().contains(&term.to_lowercase()),
                "TERM {term} is listed for {other}, whose text does not contain it"
            );
        }
        // Its source chunk: a chunk of the defining document holding the sentence.
        let defining: Vec<String> = built
            .graph
            .chunks_mentioning(&id)
            .into_iter()
            .filter(|c| {
                let chunk = &built.scope.chunks[c];
                chunk.path == path && collapse(&chunk.text).contains(sentence)
            })
            .collect();
        assert!(
            !defining.is_empty(),
            "TERM {term}: no chunk of {path} holding its definition mentions it"
        );
    }
}

#[test]
fn changing_or_deleting_a_document_updates_exactly_its_nodes_and_edges() {
    let work = tempfile::tempdir().expect("a temporary folder");
    let mut scope = Scope::create(work.path());
    let changed = rfc("1682-field-init-shorthand.md");
    let deleted = rfc("2397-do-not-recommend.md");
    let touched: BTreeSet<String> = [changed.clone(), deleted.clone()].into();
    let untouched: BTreeSet<String> = scope
        .corpus()
        .into_keys()
        .filter(|p| !touched.contains(p))
        .collect();

    // --min-mentions 1 keeps every entity, so that no entity crosses the
    // threshold because of the change: links of untouched documents must
    // then stay exactly as they were, weights included.
    let (summary, before) = scope.update("--min-mentions 1");
    assert!(
        summary.contains(&format!("{} documents extracted", untouched.len() + 2)),
        "{summary}"
    );
    let codes = scope.entities("ERROR_CODE");
    assert!(
        documents(named(&codes, "ERROR_CODE", "E0425")).contains(&changed),
        "E0425 is in {changed} before the change"
    );
    assert_eq!(
        documents(named(&codes, "ERROR_CODE", "E0599")),
        BTreeSet::from([deleted.clone()]),
        "E0599 is only in {deleted}"
    );
    let deleted_nodes: BTreeSet<String> = before
        .nodes
        .iter()
        .filter(|(_, n)| n["path"] == deleted.as_str())
        .map(|(id, _)| id.clone())
        .collect();
    assert!(
        deleted_nodes.len() > 1,
        "{deleted} has a document node and chunks"
    );

    // Change: E0425 no longer occurs in the changed RFC; a new section
    // introduces error code E9999 (twice) and defines a quoted term.
    let file = scope.dir.join(&changed);
    let text = std::fs::read_to_string(&file).expect("the copied RFC");
    assert!(text.contains("E0425"));
    let text = format!(
        "{}\n## Appendix\n\n\"Shorthand drift\" means a field initializer that no longer names its field.\n\
         The compiler reports E9999 when it finds shorthand drift, and E9999 is never a warning.\n",
        text.replace("E0425", "an error")
    );
    std::fs::write(&file, text).expect("rewrite the RFC");
    std::fs::remove_file(scope.dir.join(&deleted)).expect("delete the RFC");
    scope.index();

    let (summary, after) = scope.update("--min-mentions 1");
    assert!(summary.contains("1 documents extracted"), "{summary}");
    assert!(summary.contains("1 removed"), "{summary}");
    assert!(
        summary.contains(&format!("{} unchanged", untouched.len())),
        "{summary}"
    );

    // The deleted document is gone from every node and link.
    for (id, node) in &after.nodes {
        assert!(
            node["path"] != deleted.as_str(),
            "node {id} still has the deleted path: {node}"
        );
        assert!(
            !deleted_nodes.contains(id),
            "node {id} of the deleted document is still there"
        );
    }
    for link in &after.links {
        assert!(
            !deleted_nodes.contains(&link.source) && !deleted_nodes.contains(&link.target),
            "a link of the deleted document is still there: {link:?}"
        );
    }
    assert!(
        !after.nodes.contains_key("error_code:E0599"),
        "E0599 was only in {deleted}"
    );
    for kind in ["TERM", "SYSTEM", "CONCEPT", "ACRONYM", "ERROR_CODE"] {
        for record in scope.entities(kind) {
            assert!(
                !documents(&record).contains(&deleted),
                "{kind} {} still lists the deleted {deleted}",
                record["name"]
            );
        }
    }

    // Untouched documents keep exactly their nodes and links.
    let (nodes_before, links_before) = before.owned_by(&untouched);
    let (nodes_after, links_after) = after.owned_by(&untouched);
    assert_eq!(
        nodes_before, nodes_after,
        "nodes of untouched documents changed"
    );
    let lost: Vec<&String> = links_before.difference(&links_after).collect();
    let gained: Vec<&String> = links_after.difference(&links_before).collect();
    assert!(
        lost.is_empty() && gained.is_empty(),
        "links of untouched documents changed: lost {lost:?}, gained {gained:?}"
    );
    assert!(links_after.len() > 1000, "{} links", links_after.len());

    // The changed document: new entities with exactly it, E0425 left it.
    let codes = scope.entities("ERROR_CODE");
    let e9999 = named(&codes, "ERROR_CODE", "E9999");
    assert_eq!(documents(e9999), BTreeSet::from([changed.clone()]));
    assert_eq!(e9999["mentions"], 2);
    let e9999_chunks = after.chunks_mentioning("error_code:E9999");
    assert!(!e9999_chunks.is_empty());
    for chunk in &e9999_chunks {
        assert_eq!(
            after.path(&format!("chunk:{chunk}")),
            Some(changed.as_str())
        );
    }
    for code in ["E9999", "E0425", "E0277", "E0308"] {
        let record = named(&codes, "ERROR_CODE", code);
        assert_found_where_it_occurs(&scope, &after, record, &word(code), Reading::Anywhere);
    }
    assert!(
        !documents(named(&codes, "ERROR_CODE", "E0425")).contains(&changed),
        "E0425 no longer occurs in {changed}"
    );
    let terms = scope.entities("TERM");
    let drift = named(&terms, "TERM", "Shorthand drift");
    assert_eq!(drift["defined_in"], changed.as_str(), "{drift}");
    assert!(
        after.has_link(after.document(&changed), "term:shorthand drift", "DEFINES"),
        "the changed document defines the new term"
    );
}
