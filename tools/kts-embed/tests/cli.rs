//! kts-embed, run as a user runs it, on the real model (run models/fetch first:
//! without the model these tests fail and say so).

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

const MODEL: &str = kts_embed::DEFAULT_MODEL;

fn models_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models");
    assert!(
        dir.join("cache").join(MODEL).join("model.onnx").is_file(),
        "the model files are missing from {}/cache: run models/fetch first",
        dir.display()
    );
    dir
}

fn embed(input: &str, flags: &[&str]) -> (Output, Vec<Value>) {
    let args: Vec<&str> = ["--threads", "1"].iter().chain(flags).copied().collect();
    kts_tests::run_jsonl(
        Path::new(env!("CARGO_BIN_EXE_kts-embed")),
        &args,
        input.as_bytes(),
    )
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn chunk(doc: &str, index: usize, text: &str) -> Value {
    json!({"schema": "kts.chunk/1", "chunk_id": format!("{doc}-{index}"), "doc_id": doc,
           "path": format!("{doc}.md"), "index": index, "text": text, "start": 0,
           "end": text.chars().count()})
}

fn doc(root: &Path, doc_id: &str) -> Value {
    json!({"schema": "kts.doc/1", "doc_id": doc_id, "path": format!("{doc_id}.md"),
           "root": root.to_str().unwrap(), "markdown": "..."})
}

fn lines(records: &[Value]) -> String {
    records.iter().map(|r| format!("{r}\n")).collect()
}

/// Indexes embedded records into the scope with kts-index.
fn index(scope: &std::path::Path, records: &[Value]) {
    let index = kts_tests::run_tool(
        &kts_tests::bin("kts-index"),
        &[scope.to_str().unwrap(), "--quiet"],
        lines(records).as_bytes(),
        std::time::Duration::from_secs(60),
    );
    assert!(
        index.status.is_some_and(|s| s.success()),
        "{}",
        String::from_utf8_lossy(&index.stderr)
    );
}

fn assert_embedded(record: &Value) {
    assert_eq!(record["model"], MODEL, "{record}");
    let manifest = kts_embed::Manifest::load(&models_dir(), MODEL).unwrap();
    assert_eq!(record["model_sha256"], manifest.model_sha256(), "{record}");
    let vector = record["embedding"].as_array().expect("an embedding");
    assert_eq!(vector.len(), 384);
    let norm: f64 = vector.iter().map(|x| x.as_f64().unwrap().powi(2)).sum();
    assert!((norm - 1.0).abs() < 1e-4);
}

/// The `--stats` summary line's count for `what` ("embedded", "from cache", ...).
fn stat(output: &Output, what: &str) -> u64 {
    let text = stderr(output);
    let line = text
        .lines()
        .find(|l| l.starts_with("kts-embed: ") && l.contains(" chunks: "))
        .unwrap_or_else(|| panic!("no --stats line in {text}"));
    let at = line
        .find(&format!(" {what}"))
        .unwrap_or_else(|| panic!("no {what:?} in {line}"));
    let number = line[..at].rsplit([' ', '(']).next().unwrap();
    number.parse().unwrap()
}

#[test]
fn every_record_passes_through_in_order_and_chunks_get_embeddings() {
    let models = models_dir();
    let scope = tempfile::tempdir().unwrap();
    let mut foreign = chunk("d1", 2, "Already embedded by another model.");
    foreign["embedding"] = json!([1.0, 0.0]);
    foreign["model"] = json!("other-model");
    let mut own = chunk("d1", 3, "Already embedded by this model.");
    own["embedding"] = json!(vec![0.05; 384]);
    own["model"] = json!(MODEL);
    let file = json!({"schema": "kts.file/1", "path": "d1.md", "size": 3, "mtime": "x",
                      "sha256": "00", "format": "md", "status": "new"});
    let error = json!({"schema": "kts.error/1", "stage": "kts-convert", "path": "x.pdf",
                       "code": "corrupt", "message": "bad"});
    let other = json!({"schema": "some.other/7", "anything": [1, 2]});
    let input = [
        file.clone(),
        doc(scope.path(), "d1"),
        chunk("d1", 0, "Staff get 25 days of annual leave."),
        other.clone(),
        chunk("d1", 1, "Staff get 25 days of annual leave."),
        error.clone(),
        foreign,
        own.clone(),
    ];
    let text = format!("{}not json\n", lines(&input));
    let (output, records) = embed(&text, &["--models", models.to_str().unwrap(), "--stats"]);
    assert_eq!(
        output.status.code(),
        Some(1),
        "the bad line fails: {}",
        stderr(&output)
    );
    assert_eq!(records.len(), input.len() + 1);
    assert_eq!(records[0], file);
    assert_eq!(records[1], input[1]);
    assert_embedded(&records[2]);
    assert_eq!(records[3], other);
    assert_eq!(
        records[4]["embedding"], records[2]["embedding"],
        "same text, same vector"
    );
    assert_eq!(records[5], error);
    assert_embedded(&records[6]);
    assert_eq!(records[7], own, "a vector of this model is kept as it is");
    assert_eq!(records[8]["schema"], "kts.error/1");
    for (before, after) in input
        .iter()
        .zip(&records)
        .filter(|(b, _)| b["schema"] == "kts.chunk/1")
    {
        for field in [
            "chunk_id", "doc_id", "path", "index", "text", "start", "end",
        ] {
            assert_eq!(before[field], after[field]);
        }
    }
    assert_eq!(
        stat(&output, "embedded"),
        2,
        "the repeated text is embedded once"
    );
    assert_eq!(stat(&output, "from cache"), 1);
    assert_eq!(stat(&output, "already embedded"), 1);
}

#[test]
fn a_rerun_embeds_only_new_text() {
    let models = models_dir();
    let scope = tempfile::tempdir().unwrap();
    let texts = [
        "The VPN must be used on public networks.",
        "Passwords are rotated every ninety days.",
        "Backups run nightly at 02:00 UTC.",
    ];
    let mut input = vec![doc(scope.path(), "policy")];
    input.extend(texts.iter().enumerate().map(|(i, t)| chunk("policy", i, t)));
    let flags = [
        "--models",
        models.to_str().unwrap(),
        "--stats",
        "--batch",
        "2",
    ];

    let (first, first_records) = embed(&lines(&input), &flags);
    assert!(first.status.success(), "{}", stderr(&first));
    assert_eq!(stat(&first, "embedded"), 3);
    let cache = scope
        .path()
        .join(".kts/embeddings")
        .join(format!("{MODEL}.bin"));
    assert!(cache.is_file(), "the cache is kept in the scope's .kts/");

    let (second, second_records) = embed(&lines(&input), &flags);
    assert!(second.status.success(), "{}", stderr(&second));
    assert_eq!(stat(&second, "embedded"), 0, "{}", stderr(&second));
    assert_eq!(stat(&second, "model runs"), 0);
    assert_eq!(stat(&second, "from cache"), 3);
    assert_eq!(
        first_records, second_records,
        "cached vectors are the same vectors"
    );

    input.push(chunk(
        "policy",
        3,
        "Laptops are encrypted with full-disk encryption.",
    ));
    let (third, third_records) = embed(&lines(&input), &flags);
    assert_eq!(stat(&third, "embedded"), 1);
    assert_eq!(stat(&third, "from cache"), 3);
    assert_embedded(&third_records[4]);
}

#[test]
fn each_scope_of_a_stream_keeps_its_own_cache_when_scopes_come_back() {
    let models = models_dir();
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let input = lines(&[
        doc(a.path(), "a1"),
        chunk("a1", 0, "Scope A: the VPN must be used on public networks."),
        doc(b.path(), "b1"),
        chunk("b1", 0, "Scope B: invoices are paid within thirty days."),
        doc(a.path(), "a2"),
        chunk("a2", 0, "Scope A again: backups run nightly at 02:00 UTC."),
    ]);
    let flags = ["--models", models.to_str().unwrap(), "--stats"];
    let (first, _) = embed(&input, &flags);
    assert!(first.status.success(), "{}", stderr(&first));
    assert_eq!(stat(&first, "embedded"), 3);

    let cache_len = |scope: &Path| {
        let path = scope.join(".kts/embeddings").join(format!("{MODEL}.bin"));
        let manifest = kts_embed::Manifest::load(&models, MODEL).unwrap();
        kts_embed::EmbeddingCache::open(&scope.join(".kts"), &manifest)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .len()
    };
    assert_eq!(
        cache_len(a.path()),
        2,
        "scope A's cache has both of its texts"
    );
    assert_eq!(
        cache_len(b.path()),
        1,
        "scope B's cache has its own text only"
    );

    let (second, _) = embed(&input, &flags);
    assert_eq!(stat(&second, "embedded"), 0, "{}", stderr(&second));
    assert_eq!(stat(&second, "from cache"), 3);
}

#[test]
fn chunks_without_a_scope_are_embedded_without_a_disk_cache() {
    let models = models_dir();
    let input = lines(&[
        chunk("d", 0, "No doc record ahead of me."),
        chunk("d", 1, "Nor me."),
    ]);
    let (output, records) = embed(&input, &["--models", models.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    records.iter().for_each(assert_embedded);
}

#[test]
fn a_cache_that_cannot_be_written_is_a_warning_and_the_vectors_still_come() {
    let models = models_dir();
    let scope = tempfile::tempdir().unwrap();
    // The cache's folder is one that no one may create files in, root included
    // (as in a scope on read-only media), though it reads as an empty cache.
    std::fs::create_dir(scope.path().join(".kts")).unwrap();
    std::os::unix::fs::symlink("/proc", scope.path().join(".kts/embeddings")).unwrap();
    let input = lines(&[
        doc(scope.path(), "d"),
        chunk("d", 0, "A read-only scope is still embedded."),
        chunk("d", 1, "Its vectors are not cached."),
    ]);
    let (output, records) = embed(&input, &["--models", models.to_str().unwrap()]);
    let message = stderr(&output);
    assert!(output.status.success(), "{message}");
    assert!(
        message.contains("the embedding cache cannot be written")
            && message.contains(".kts/embeddings"),
        "{message}"
    );
    assert_eq!(message.matches("cannot be written").count(), 1, "{message}");
    assert_eq!(records.len(), 3);
    records[1..].iter().for_each(assert_embedded);
}

#[test]
fn a_record_without_a_schema_is_taken_as_a_chunk() {
    let models = models_dir();
    let mut unnamed = chunk("d", 0, "Nothing says what I am.");
    unnamed.as_object_mut().unwrap().remove("schema");
    let (output, records) = embed(&lines(&[unnamed]), &["--models", models.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(records[0]["schema"], "kts.chunk/1");
    assert_embedded(&records[0]);
}

#[test]
fn query_mode_prints_one_line_with_the_embedding() {
    let models = models_dir();
    let (output, records) = embed(
        "",
        &[
            "--models",
            models.to_str().unwrap(),
            "--query",
            "reset password",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["schema"], "kts.query_embedding/1");
    assert_eq!(records[0]["dims"], 384);
    assert_eq!(records[0]["text"], "reset password");
    assert_embedded(&records[0]);
}

#[test]
fn an_unknown_model_is_a_fatal_error_naming_the_known_ones() {
    let models = models_dir();
    let (output, records) = embed(
        "",
        &[
            "--models",
            models.to_str().unwrap(),
            "--model",
            "no-such-model",
        ],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(records.is_empty());
    let message = stderr(&output);
    assert!(message.contains("no-such-model.json"), "{message}");
    assert!(message.contains(MODEL), "names the known models: {message}");
}

#[test]
fn missing_model_files_are_a_fatal_error_saying_to_run_fetch() {
    let models = tempfile::tempdir().unwrap();
    for name in [format!("{MODEL}.json"), "onnxruntime.json".into()] {
        std::fs::copy(models_dir().join(&name), models.path().join(&name)).unwrap();
    }
    let input = lines(&[chunk("d", 0, "text")]);
    let (output, records) = embed(&input, &["--models", models.path().to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(records.is_empty());
    let message = stderr(&output);
    assert!(message.contains("model.onnx is missing"), "{message}");
    assert!(message.contains("models/fetch"), "{message}");
}

#[test]
fn a_stream_served_from_the_cache_does_not_load_the_model() {
    // A models folder with the model and tokenizer but no ONNX Runtime library.
    let models = tempfile::tempdir().unwrap();
    std::fs::copy(
        models_dir().join(format!("{MODEL}.json")),
        models.path().join(format!("{MODEL}.json")),
    )
    .unwrap();
    std::fs::copy(
        models_dir().join("onnxruntime.json"),
        models.path().join("onnxruntime.json"),
    )
    .unwrap();
    std::fs::create_dir(models.path().join("cache")).unwrap();
    std::os::unix::fs::symlink(
        models_dir()
            .join("cache")
            .join(MODEL)
            .canonicalize()
            .unwrap(),
        models.path().join("cache").join(MODEL),
    )
    .unwrap();
    let scope = tempfile::tempdir().unwrap();
    let input = lines(&[
        doc(scope.path(), "d"),
        chunk("d", 0, "Cached once, reused."),
    ]);
    let full = models_dir();
    let (first, first_records) = embed(&input, &["--models", full.to_str().unwrap()]);
    assert!(first.status.success(), "{}", stderr(&first));

    let no_runtime = ["--models", models.path().to_str().unwrap(), "--stats"];
    let (cached, records) = embed(&input, &no_runtime);
    assert!(cached.status.success(), "{}", stderr(&cached));
    assert_eq!(records, first_records);
    assert_eq!(stat(&cached, "from cache"), 1);

    let new_text = lines(&[doc(scope.path(), "d"), chunk("d", 1, "Never seen before.")]);
    let (uncached, _) = embed(&new_text, &no_runtime);
    assert_eq!(uncached.status.code(), Some(2), "{}", stderr(&uncached));
    assert!(
        stderr(&uncached).contains("onnxruntime"),
        "{}",
        stderr(&uncached)
    );
}

#[test]
fn without_model_a_scope_keeps_the_model_its_index_was_built_with() {
    let other = ["all-minilm-l6-v2-int8", "all-minilm-l6-v2-q8"]
        .into_iter()
        .find(|m| *m != MODEL)
        .unwrap();
    let models = models_dir();
    let models = models.to_str().unwrap();
    let built = tempfile::tempdir().unwrap();
    // kts-index takes only the doc ids kts gives.
    let id = kts_record::scope_path::doc_id("d.md");
    let mut record = doc(built.path(), &id);
    record["path"] = json!("d.md");
    let mut text = chunk(&id, 0, "The first text.");
    text["path"] = json!("d.md");
    text["chunk_id"] = json!(format!("{id}-0"));
    let first = lines(&[record, text]);
    let (output, records) = embed(&first, &["--models", models, "--model", other]);
    assert!(output.status.success(), "{}", stderr(&output));
    index(built.path(), &records);

    // The scope built with the other model, then a new one: each gets its own.
    let fresh = tempfile::tempdir().unwrap();
    let input = lines(&[
        doc(built.path(), "e"),
        chunk("e", 0, "A second text."),
        doc(fresh.path(), "f"),
        chunk("f", 0, "A third text."),
    ]);
    let (output, records) = embed(&input, &["--models", models]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(records[1]["model"], other, "{}", records[1]);
    assert_embedded(&records[3]);
    // --model still decides when it is given.
    let (_, records) = embed(&input, &["--models", models, "--model", MODEL]);
    assert_embedded(&records[1]);
}

#[test]
fn a_chunk_is_read_after_its_documents_title_and_headings() {
    let models = models_dir();
    let scope = tempfile::tempdir().unwrap();
    let mut titled = doc(scope.path(), "d1");
    titled["title"] = json!("Okapi guide");
    let mut under = chunk("d1", 0, "It ranks documents by term frequency.");
    under["heading_path"] = json!(["Scoring"]);
    let input = lines(&[titled, under]);
    let (output, records) = embed(&input, &["--models", models.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let read = "Okapi guide > Scoring\n\nIt ranks documents by term frequency.";
    let vector_of = |text: &str| -> Vec<f64> {
        let (output, records) = embed("", &["--models", models.to_str().unwrap(), "--query", text]);
        assert!(output.status.success(), "{}", stderr(&output));
        to_floats(&records[0]["embedding"])
    };
    let cosine = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let embedded = to_floats(&records[1]["embedding"]);
    assert!(cosine(&embedded, &vector_of(read)) > 0.999);
    assert!(
        cosine(
            &embedded,
            &vector_of("It ranks documents by term frequency.")
        ) < 0.99
    );
}

fn to_floats(vector: &Value) -> Vec<f64> {
    vector
        .as_array()
        .expect("an embedding")
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

#[test]
fn the_cache_keeps_what_the_run_or_the_index_needs_once_most_of_it_is_dead() {
    let models = models_dir();
    let models = models.to_str().unwrap();
    let scope = tempfile::tempdir().unwrap();
    let cache_len = || {
        let manifest = kts_embed::Manifest::load(Path::new(models), MODEL).unwrap();
        kts_embed::EmbeddingCache::open(&scope.path().join(".kts"), &manifest)
            .unwrap()
            .len()
    };
    // One document indexed, read after its title and headings.
    let id = kts_record::scope_path::doc_id("guide.md");
    let mut guide = doc(scope.path(), &id);
    guide["path"] = json!("guide.md");
    guide["title"] = json!("Okapi guide");
    let mut text = chunk(&id, 0, "It ranks documents by term frequency.");
    text["path"] = json!("guide.md");
    text["chunk_id"] = json!(format!("{id}-0"));
    text["heading_path"] = json!(["Scoring"]);
    let indexed = lines(&[guide, text]);
    let (output, records) = embed(&indexed, &["--models", models]);
    assert!(output.status.success(), "{}", stderr(&output));
    index(scope.path(), &records);

    // A draft rewritten again and again, never indexed: its old texts die.
    for round in 0..3 {
        let draft = lines(&[
            doc(scope.path(), "draft"),
            chunk("draft", 0, &format!("Draft {round}: the first paragraph.")),
            chunk("draft", 1, &format!("Draft {round}: the second paragraph.")),
        ]);
        let (output, _) = embed(&draft, &["--models", models]);
        assert!(output.status.success(), "{}", stderr(&output));
    }
    // 7 vectors, more than twice the 1 indexed and 2 used: the 4 of older drafts go.
    assert_eq!(cache_len(), 3);

    let (again, _) = embed(&indexed, &["--models", models, "--stats"]);
    assert_eq!(
        stat(&again, "from cache"),
        1,
        "the indexed text is kept: {}",
        stderr(&again)
    );
}
