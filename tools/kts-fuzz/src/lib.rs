//! What each fuzz target checks, shared by the targets in `fuzz_targets/`.
//!
//! The invariants are the tools' own: no panic, no hang (libFuzzer's
//! `-timeout`), and output the next stage can rely on: a conversion's
//! Markdown chunks into pieces whose offsets slice it exactly; a search
//! returns ranked hits with finite scores.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use clap::Parser;

use kts_convert::formats::{self, Context, Limits};
use kts_convert::images::ImageSink;
use kts_convert::ocr::{Ocr, OcrMode};
use kts_record::Format;

/// What a fuzz target runs on one input.
pub type Check = fn(&[u8]);

/// Every fuzz target by name (`fuzz/fuzz_targets/NAME.rs`) and what it runs.
pub const TARGETS: &[(&str, Check)] = &[
    ("convert_md", |data| convert(Format::Md, data)),
    ("convert_txt", |data| convert(Format::Txt, data)),
    ("convert_html", |data| convert(Format::Html, data)),
    ("convert_json", |data| convert(Format::Json, data)),
    ("convert_docx", |data| convert(Format::Docx, data)),
    ("convert_doc", |data| convert(Format::Doc, data)),
    ("convert_pptx", |data| convert(Format::Pptx, data)),
    ("convert_ppt", |data| convert(Format::Ppt, data)),
    ("convert_pdf", |data| convert(Format::Pdf, data)),
    ("convert_csv", |data| convert(Format::Csv, data)),
    ("convert_xlsx", |data| convert(Format::Xlsx, data)),
    ("convert_xls", |data| convert(Format::Xls, data)),
    ("convert_ods", |data| convert(Format::Ods, data)),
    ("convert_eml", |data| convert(Format::Eml, data)),
    ("convert_mbox", |data| convert(Format::Mbox, data)),
    ("convert_msg", |data| convert(Format::Msg, data)),
    ("convert_odt", |data| convert(Format::Odt, data)),
    ("convert_odp", |data| convert(Format::Odp, data)),
    ("convert_epub", |data| convert(Format::Epub, data)),
    ("convert_rtf", |data| convert(Format::Rtf, data)),
    ("convert_vtt", |data| convert(Format::Vtt, data)),
    ("convert_adoc", |data| convert(Format::Adoc, data)),
    ("convert_latex", |data| convert(Format::Latex, data)),
    ("convert_png", |data| convert(Format::Png, data)),
    ("detect", detect),
    ("records", records),
    ("record_paths", record_paths),
    ("chunk", chunk),
    ("question", question),
    ("catalog", catalog),
    ("config", config),
];

/// The check of the target `name`.
///
/// libFuzzer's panic hook aborts at any panic, even one the code catches on
/// purpose (kts-convert catches a third-party parser's panic on a broken PDF
/// page and goes on with the next page). So the hook only reports: a panic
/// that reaches the fuzz target still aborts the run there.
pub fn target(name: &str) -> Option<Check> {
    static REPORT_ONLY: std::sync::Once = std::sync::Once::new();
    REPORT_ONLY.call_once(|| std::panic::set_hook(Box::new(|info| eprintln!("{info}"))));
    TARGETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, check)| *check)
}

/// Converts `data` as a file of `format`, in process, without OCR (which runs
/// other programs), within limits small enough for thousands of runs a second.
pub fn convert(format: Format, data: &[u8]) {
    let limits = Limits {
        max_unpacked_bytes: 16 << 20,
        max_compression_ratio: 200,
        max_pdf_pages: 50,
        max_sheet_cells: 100_000,
    };
    let ocr = Ocr {
        mode: OcrMode::Never,
        ..Ocr::default()
    };
    let mut images = ImageSink::default();
    let mut ctx = Context {
        limits: &limits,
        images: &mut images,
        ocr: &ocr,
    };
    let converted = match format {
        Format::Eml | Format::Mbox | Format::Msg => {
            formats::convert_with_parts(format, data, &mut ctx).map(|(document, parts)| {
                for part in parts {
                    assert!(
                        part.anchor.split('/').all(|name| !name.is_empty()
                            && name != ".."
                            && !name.contains(['#', '\\'])
                            && !name.chars().any(char::is_control)),
                        "unsafe part anchor {:?}",
                        part.anchor
                    );
                    if let Ok(part) = part.converted {
                        chunks_slice_the_markdown(&part.converted.markdown);
                    }
                }
                document
            })
        }
        _ => formats::convert(format, data, &mut ctx),
    };
    if let Ok(converted) = converted {
        chunks_slice_the_markdown(&converted.markdown);
    }
}

/// Chunks Markdown with settings taken from the first bytes of `data`.
pub fn chunk(data: &[u8]) {
    let Some((settings, text)) = data.split_first_chunk::<3>() else {
        return;
    };
    let size = 20 + usize::from(settings[0]) * 8;
    let settings = kts_chunk::ChunkSettings {
        size,
        overlap: usize::from(settings[1]).min(size / 2),
        min_size: usize::from(settings[2]).min(size / 2),
    };
    check_chunks(&String::from_utf8_lossy(text), &settings);
}

fn chunks_slice_the_markdown(markdown: &str) {
    check_chunks(markdown, &kts_chunk::ChunkSettings::default());
}

/// Every chunk is the exact character range of the Markdown it names, and
/// chunks come in the order of their starts.
fn check_chunks(markdown: &str, settings: &kts_chunk::ChunkSettings) {
    let chars: Vec<char> = markdown.chars().collect();
    let mut previous_start = 0;
    for chunk in kts_chunk::split(markdown, settings) {
        assert!(
            chunk.start < chunk.end && chunk.end <= chars.len(),
            "chunk {}..{} of {} characters",
            chunk.start,
            chunk.end,
            chars.len()
        );
        let slice: String = chars[chunk.start..chunk.end].iter().collect();
        assert_eq!(slice, chunk.text, "chunk {}..{}", chunk.start, chunk.end);
        assert!(chunk.start >= previous_start, "chunks out of order");
        previous_start = chunk.start;
    }
}

/// Reads `data` as a JSONL stream of records, as every stage reads its input.
pub fn records(data: &[u8]) {
    for item in kts_cli::JsonlReader::new(data, "fuzz") {
        let _ = item;
    }
}

thread_local! {
    /// A scope beside a file outside it, with symbolic links that lead out
    /// of the scope and into its index folder (the folder lives as long).
    static SANDBOX: (tempfile::TempDir, PathBuf, PathBuf) = {
        let dir = tempfile::tempdir().expect("temporary folder");
        let (scope, outside) = (dir.path().join("scope"), dir.path().join("outside"));
        make_sandbox(&scope, &outside).expect("building the sandbox");
        let scope = scope.canonicalize().expect("the scope folder");
        let outside = outside.canonicalize().expect("the outside folder");
        (dir, scope, outside)
    };
}

fn make_sandbox(scope: &Path, outside: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::symlink;
    std::fs::create_dir_all(scope.join("sub"))?;
    std::fs::create_dir_all(scope.join(".kts"))?;
    std::fs::create_dir_all(outside)?;
    std::fs::write(outside.join("secret.md"), "outside the scope")?;
    std::fs::write(scope.join("a.md"), "inside")?;
    std::fs::write(scope.join("sub/b.md"), "inside")?;
    std::fs::write(scope.join(".kts/kts.db"), "the index")?;
    symlink("../outside", scope.join("escape"))?;
    symlink("../outside/secret.md", scope.join("secret-link.md"))?;
    symlink(".kts", scope.join("index-link"))?;
    symlink("a.md", scope.join("sub/a-link.md"))
}

/// The record fields that name files: the first line of `data` as a
/// document's `path`, the second as its `doc_id`. A path accepted names a
/// file inside the scope and outside its index folder, after `..` and
/// symbolic links; a `doc_id` accepted has the form kts gives.
pub fn record_paths(data: &[u8]) {
    use kts_record::scope_path::{DOC_ID_LEN, check_doc_id, doc_id, normalize, resolve_in_scope};
    let text = String::from_utf8_lossy(data);
    let mut lines = text.splitn(2, '\n');
    let (path, id) = (lines.next().unwrap_or(""), lines.next().unwrap_or(""));
    if let Ok(relative) = normalize(path) {
        let parts: Vec<&str> = relative.split('/').collect();
        assert!(
            !relative.contains('\0') && parts[0] != ".kts",
            "{path:?} accepted as {relative:?}"
        );
        assert!(
            parts.iter().all(|part| !matches!(*part, "" | "." | "..")),
            "{path:?} accepted as {relative:?}"
        );
    }
    SANDBOX.with(|(_, scope, outside)| {
        if let Ok(file) = resolve_in_scope(scope, path) {
            let index = scope.join(".kts");
            assert!(
                file.starts_with(scope) && !file.starts_with(&index) && !file.starts_with(outside),
                "{path:?} resolved to {} (scope {})",
                file.display(),
                scope.display()
            );
        }
    });
    if check_doc_id(id).is_ok() {
        assert!(id.len() == DOC_ID_LEN && id.bytes().all(|b| b.is_ascii_hexdigit()));
        assert!(!id.bytes().any(|b| b.is_ascii_uppercase()), "{id:?}");
    }
    assert!(
        check_doc_id(&doc_id(path)).is_ok(),
        "kts's own id of {path:?}"
    );
}

/// Detects the format of `data` given the extension its first byte picks.
pub fn detect(data: &[u8]) {
    const EXTENSIONS: [Option<&str>; 12] = [
        None,
        Some("md"),
        Some("txt"),
        Some("csv"),
        Some("tsv"),
        Some("eml"),
        Some("msg"),
        Some("json"),
        Some("html"),
        Some("vtt"),
        Some("docx"),
        Some("pdf"),
    ];
    let Some((pick, content)) = data.split_first() else {
        return;
    };
    let extension = EXTENSIONS[usize::from(*pick) % EXTENSIONS.len()];
    let head = &content[..content.len().min(8192)];
    let tail = &content[content.len().saturating_sub(8192)..];
    let _ = kts_record::detect_format(head, tail, extension);
}

thread_local! {
    /// A small scope and a searcher kept open on it (the folder lives as long).
    static SCOPE: RefCell<(tempfile::TempDir, kts_query::Searcher)> = {
        let dir = tempfile::tempdir().expect("temporary folder");
        build_scope(dir.path()).expect("building the fuzz scope");
        let searcher = open_searcher(dir.path()).expect("opening the fuzz scope");
        RefCell::new((dir, searcher))
    };
}

/// Asks `data` as a question of a small scope (BM25, every step of the query
/// pipeline on): the planner, the FTS5 and lexical-index queries it writes,
/// fusion and the ranking signals.
pub fn question(data: &[u8]) {
    let question = String::from_utf8_lossy(data);
    SCOPE.with_borrow_mut(|(_, searcher)| {
        let hits = searcher
            .search(&question, None)
            .unwrap_or_else(|e| panic!("search failed: {e:#}"));
        for (rank, hit) in hits.iter().enumerate() {
            assert_eq!(hit.rank, rank + 1);
            assert!(hit.score.is_finite(), "score {}", hit.score);
        }
    });
}

const DOCUMENTS: [(&str, &str, &str); 4] = [
    (
        "auth.md",
        "TROUBLESHOOT",
        "# Fixing AUTH401\n\nError AUTH401 means the token cache (TC) is stale. \
         Restart the Gateway service, then clear the token cache.",
    ),
    (
        "policy.md",
        "POLICY",
        "# Retention policy\n\nDocuments are retained for 7 years. The DPO approves \
         deletions; the Records Office keeps the register.",
    ),
    (
        "guide.md",
        "GUIDE",
        "# How to install kts\n\nRun make demo, then kts-query DIR \"question\". \
         The Gateway service and the Scheduler talk over HTTP.",
    ),
    (
        "notes.md",
        "GENERAL",
        "Meeting notes, 2024-03-05: E-5 and ERR_TIMEOUT seen on the Scheduler; \
         see RFC 2119 and ISO 8601.",
    ),
];

fn build_scope(dir: &Path) -> anyhow::Result<()> {
    let mut store = kts_store::Store::open_writer(dir, kts_store::LockWait::NoWait)?;
    store.begin()?;
    for (n, (path, doc_type, text)) in DOCUMENTS.iter().enumerate() {
        let doc_id = format!("{n:016x}");
        let title = text
            .lines()
            .next()
            .unwrap_or_default()
            .trim_start_matches("# ");
        let row = kts_store::DocumentRow {
            doc_id: doc_id.clone(),
            path: path.to_string(),
            title: title.to_string(),
            doc_type: doc_type.to_string(),
            ..Default::default()
        };
        let chunk = kts_store::ChunkRow {
            chunk_id: format!("{doc_id}-0"),
            index: 0,
            end: text.chars().count(),
            text: text.to_string(),
            ..Default::default()
        };
        store.apply(&row, &[chunk])?;
    }
    store.commit()?;
    store.refresh_lexical_index()?;
    drop(store);
    let graph = kts_graph::Args::try_parse_from(["kts-graph", &dir.to_string_lossy(), "--quiet"])?;
    kts_graph::run(graph)?;
    Ok(())
}

fn open_searcher(dir: &Path) -> anyhow::Result<kts_query::Searcher> {
    let request = kts_query::Request {
        mode: kts_query::Mode::Bm25,
        with: <kts_query::Step as clap::ValueEnum>::value_variants().to_vec(),
        ..Default::default()
    };
    let model = kts_query::ModelChoice::new(None, None, 1, true);
    let messages = kts_cli::Messages::new("fuzz").quiet(true);
    kts_query::Searcher::open(dir, &request, &model, &messages)
}

thread_local! {
    /// A knowledge root's catalog of a few scopes (the folder lives as long).
    static CATALOG: (tempfile::TempDir, kts_catalog::Catalog) = {
        let root = tempfile::tempdir().expect("temporary folder");
        let catalog = build_catalog(root.path()).expect("building the fuzz catalog");
        (root, catalog)
    };
}

/// Routes `data` as a question over a knowledge root's catalog.
pub fn catalog(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    CATALOG.with(|(_, catalog)| {
        let found = catalog
            .search(&text, 10)
            .unwrap_or_else(|e| panic!("catalog search failed: {e:#}"));
        assert!(found.iter().all(|(_, score)| score.is_finite()));
        catalog
            .slug_mentioned(&text)
            .unwrap_or_else(|e| panic!("slug lookup failed: {e:#}"));
    });
}

fn build_catalog(root: &Path) -> anyhow::Result<kts_catalog::Catalog> {
    let mut rebuild = kts_catalog::Rebuild::begin(root)?;
    for (slug, doc_types, keywords, titles, years) in [
        (
            "hr",
            vec!["POLICY"],
            vec!["leave", "payroll"],
            vec!["Leave policy 2023"],
            vec![2023],
        ),
        (
            "support",
            vec!["TROUBLESHOOT"],
            vec!["error", "token"],
            vec!["Fixing AUTH401"],
            vec![],
        ),
        (
            "mlmi-2007-ff4",
            vec!["REPORT"],
            vec!["remittance"],
            vec!["MLMI 2007-FF4 Monthly Remittance Report"],
            vec![2007],
        ),
    ] {
        rebuild.add(&kts_catalog::CatalogRow {
            slug: slug.to_string(),
            path: slug.to_string(),
            documents: 3,
            chunks: 9,
            doc_types: doc_types.into_iter().map(String::from).collect(),
            years,
            keywords: keywords.into_iter().map(String::from).collect(),
            titles: titles.into_iter().map(String::from).collect(),
            ..Default::default()
        })?;
    }
    rebuild.commit()?;
    kts_catalog::Catalog::open(root)
}

/// Reads `data` as a scope's `.kts/config.toml`, then, when it is a valid
/// one, asks a question that its acronyms and synonyms expand, every step on:
/// whatever a config says, a search with it answers or names the file.
pub fn config(data: &[u8]) {
    thread_local! {
        static SCOPE: tempfile::TempDir = {
            let dir = tempfile::tempdir().expect("temporary folder");
            build_scope(dir.path()).expect("building the fuzz scope");
            dir
        };
    }
    SCOPE.with(|scope| {
        let path = kts_graph::settings::config_path(scope.path());
        std::fs::write(&path, data).expect("writing config.toml");
        let _ = kts_graph::settings::Settings::load(&path, false);
        let Ok(mut searcher) = open_searcher(scope.path()) else {
            return;
        };
        // A section only the graph reads is read when the graph is: a bad one
        // fails the search then, with the file named.
        if let Err(e) = searcher.search(
            "What does TC mean for AUTH401 tokens? Then restart the gateway",
            None,
        ) {
            let message = format!("{e:#}");
            assert!(message.contains("config.toml"), "search failed: {message}");
        }
    });
}
