//! Building a test scope the way the pipeline does, without running it:
//! documents chunked by kts-chunk, embedded by the project's model (run
//! models/fetch first; without it these tests fail) and indexed by kts-index.

use std::path::{Path, PathBuf};

use kts_record::DocRecord;
use serde_json::json;

/// The project's models folder.
pub fn models_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models")
}

pub use kts_record::scope_path::doc_id;

/// A fresh scope folder at `dir` holding `docs` (path, doc_type, Markdown),
/// chunked, embedded and indexed.
pub fn index_scope(dir: &Path, docs: &[(&str, &str, &str)]) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let summary = index_stream(dir, &embedded_stream(docs));
    assert_eq!(summary.added, docs.len());
}

/// kts-index on a JSONL stream.
pub fn index_stream(dir: &Path, input: &str) -> kts_index::Summary {
    let messages = kts_cli::Messages::new("kts-index");
    let mut store = kts_index::open(dir, true, &messages).unwrap();
    let reader = kts_cli::JsonlReader::new(input.as_bytes(), "test");
    kts_index::index(&mut store, reader, &Default::default(), &messages).unwrap()
}

/// The JSONL stream kts-chunk | kts-embed would write for `docs`.
fn embedded_stream(docs: &[(&str, &str, &str)]) -> String {
    let mut embedder = kts_embed::Embedder::load(&models_dir(), kts_embed::DEFAULT_MODEL, 2)
        .unwrap_or_else(|e| {
            panic!("the embedding model is needed for these tests: run models/fetch ({e:#})")
        });
    let settings = kts_chunk::ChunkSettings {
        size: 300,
        overlap: 0,
        min_size: 50,
    };
    let mut lines = String::new();
    for (path, doc_type, markdown) in docs {
        let doc: DocRecord = serde_json::from_value(json!({"schema": "kts.doc/1",
            "doc_id": doc_id(path), "path": path, "doc_type": doc_type, "markdown": markdown,
            "title": markdown.lines().next().unwrap().trim_start_matches("# "),
            "metadata": {"source_sha256": format!("sha-of-{path}")}}))
        .unwrap();
        lines.push_str(&format!("{}\n", serde_json::to_string(&doc).unwrap()));
        for mut chunk in kts_chunk::chunk_records(&doc, &settings) {
            chunk.embedding = Some(embedder.embed(&[&chunk.text]).unwrap().remove(0));
            chunk.model = Some(embedder.model_id().to_string());
            lines.push_str(&format!("{}\n", serde_json::to_string(&chunk).unwrap()));
        }
    }
    lines
}
