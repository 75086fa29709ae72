//! The query benchmark's helpers (driven by pipelines/bench/query.sh):
//!
//!   bench stream N CORPUS OUT   writes OUT/stream.jsonl (documents of 10 chunks
//!                               of corpus text, random unit vectors), OUT/vectors.f32
//!                               (the same vectors) and OUT/queries.jsonl (200 queries)
//!   bench query SCOPE QUERIES [kts-query flags]
//!                               times each query in one process (p50/p95)
//!   bench floor VECTORS QUERIES a plain scan of the memory-mapped vectors, top 10
//!   bench build N CORPUS OUT [--no-vectors]
//!                               like `stream`, but writes the scope OUT/scope through
//!                               kts-store directly (for sizes whose JSONL would not fit)
//!   bench recall SCOPE [QUERIES] vector top-10 from vectors.bin and from sqlite-vec,
//!                               timed, with recall@10 against an exact f32 scan; the
//!                               queries are QUERIES' embeddings, else 200 stored vectors
//!   bench fanout ROOT QUESTIONS [kts-query flags]
//!                               asks each question's text of the knowledge root in one
//!                               process, as `kts-query ROOT --batch` does (routed, embedded
//!                               by the model unless --mode bm25, fanned out): p50/p95
//!   bench route ROOT QUESTIONS  routes each question of QUESTIONS (routing_questions.py's
//!                               {"scope", "naming", "text"} lines) over the knowledge
//!                               root as kts-query does: time per question (p50/p95) and,
//!                               per naming, how often the named scope is the first
//!                               routed, is routed at all, and how many scopes are asked
//!   bench update SCOPE          replaces one document of a `build` scope (new vectors), as
//!                               kts-index does: the commit, the vectors (vectors.delta
//!                               beside vectors.bin), the lexical index, timed; then the
//!                               same vectors written as a whole vectors.bin, for the ratio
//!   bench embed-question THREADS QUESTIONS
//!                               embeds each line of QUESTIONS with the default model,
//!                               warm, THREADS intra-op threads: time per question
//!
//! Vectors are random, so figures are about speed, not quality.

use std::io::{BufRead, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Parser;
use serde_json::{Value, json};

const DIMS: usize = 384;
const QUERIES: usize = 200;
/// The vectors are random but carry the default model's id, so that
/// `kts-query SCOPE "question"` can embed a real question against them
/// (the cold-process figure with the model).
const MODEL: &str = kts_embed::DEFAULT_MODEL;
const CHUNKS_PER_DOC: usize = 10;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("stream") if args.len() == 4 => {
            stream(args[1].parse()?, Path::new(&args[2]), Path::new(&args[3]))
        }
        Some("query") if args.len() >= 3 => query(&args[1], Path::new(&args[2]), &args[3..]),
        Some("floor") if args.len() == 3 => floor(Path::new(&args[1]), Path::new(&args[2])),
        Some("lexical") if args.len() == 3 => lexical(Path::new(&args[1]), Path::new(&args[2])),
        Some("build") if args.len() == 4 || args.len() == 5 => build(
            args[1].parse()?,
            Path::new(&args[2]),
            Path::new(&args[3]),
            args.get(4).is_none_or(|flag| flag != "--no-vectors"),
        ),
        Some("recall") if args.len() == 2 || args.len() == 3 => {
            recall(Path::new(&args[1]), args.get(2).map(Path::new))
        }
        Some("fanout") if args.len() >= 3 => fanout(&args[1], Path::new(&args[2]), &args[3..]),
        Some("route") if args.len() == 3 => route(&args[1], Path::new(&args[2])),
        Some("update") if args.len() == 2 => update(Path::new(&args[1])),
        Some("embed-question") if args.len() == 3 => {
            embed_question(args[1].parse()?, Path::new(&args[2]))
        }
        _ => anyhow::bail!(
            "usage: bench stream N CORPUS OUT | query SCOPE QUERIES [FLAGS] | floor VECTORS QUERIES \
             | lexical SCOPE QUERIES | build N CORPUS OUT [--no-vectors] | recall SCOPE [QUERIES] \
             | fanout ROOT QUESTIONS [FLAGS] | route ROOT QUESTIONS | update SCOPE \
             | embed-question THREADS QUESTIONS"
        ),
    }
}

/// The time to embed one question with the default model, warm, with
/// THREADS intra-op threads (questions: one per line, cycled 300 times).
fn embed_question(threads: usize, questions: &Path) -> anyhow::Result<()> {
    let models = kts_embed::default_models_dir()
        .ok_or_else(|| anyhow::anyhow!("no models folder: run models/fetch"))?;
    let mut embedder = kts_embed::Embedder::load(&models, MODEL, threads)?;
    let questions = std::fs::read_to_string(questions)?;
    let questions: Vec<&str> = questions.lines().filter(|q| !q.trim().is_empty()).collect();
    anyhow::ensure!(!questions.is_empty(), "no questions");
    embedder.embed_query("load the model")?;
    let mut ms = Vec::new();
    for question in questions.iter().cycle().take(300) {
        let started = Instant::now();
        std::hint::black_box(embedder.embed_query(question)?);
        ms.push(started.elapsed().as_secs_f64() * 1e3);
    }
    report(&format!("question embedding, {threads} threads"), ms);
    Ok(())
}

fn update(scope: &Path) -> anyhow::Result<()> {
    let mut store = kts_store::Store::open_writer(scope, kts_store::LockWait::NoWait)?;
    let (documents, chunks) = store.counts()?;
    let mut rng = fastrand::Rng::new();
    let doc_id = format!("{:016x}", rng.usize(..documents));
    let row = kts_store::DocumentRow {
        doc_id: doc_id.clone(),
        path: format!("doc{:06}.md", usize::from_str_radix(&doc_id, 16)?),
        title: "Document updated".into(),
        doc_type: "GUIDE".into(),
        ..Default::default()
    };
    let new_chunks: Vec<kts_store::ChunkRow> = (0..CHUNKS_PER_DOC)
        .map(|c| {
            let text = format!("updated text {} of part {c}", rng.u64(..));
            kts_store::ChunkRow {
                chunk_id: format!("{doc_id}-u{}-{c}", rng.u32(..)),
                index: c,
                end: text.chars().count(),
                text,
                model: Some(MODEL.to_string()),
                embedding: Some(unit_vector(&mut rng)),
                ..Default::default()
            }
        })
        .collect();
    let started = Instant::now();
    store.begin()?;
    store.apply(&row, &new_chunks)?;
    store.commit()?;
    let committed = started.elapsed();
    store.refresh_vector_file()?;
    let vectors = started.elapsed();
    store.refresh_lexical_index()?;
    let total = started.elapsed();
    let reader = kts_store::Store::open_read(scope)?;
    anyhow::ensure!(
        reader.vectors_from_file()?,
        "the vector file does not answer after the update"
    );
    println!(
        "update of one document in {documents} documents ({chunks} chunks): {:.0} ms (commit {:.0} ms, vectors {:.0} ms, lexical index {:.0} ms)",
        total.as_secs_f64() * 1e3,
        committed.as_secs_f64() * 1e3,
        (vectors - committed).as_secs_f64() * 1e3,
        (total - vectors).as_secs_f64() * 1e3
    );
    let file = kts_store::vector_file_path(scope);
    std::fs::remove_file(&file)?;
    let started = Instant::now();
    store.refresh_vector_file()?;
    let whole = started.elapsed();
    println!(
        "vectors.bin written whole instead: {:.0} ms ({:.0}x the update's vectors)",
        whole.as_secs_f64() * 1e3,
        whole.as_secs_f64() / (vectors - committed).as_secs_f64()
    );
    Ok(())
}

fn unit_vector(rng: &mut fastrand::Rng) -> Vec<f32> {
    let v: Vec<f32> = (0..DIMS).map(|_| rng.f32() * 2.0 - 1.0).collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / norm).collect()
}

/// Paragraphs of the corpus's text files, long ones cut near 800 characters.
fn paragraphs(corpus: &Path) -> anyhow::Result<Vec<String>> {
    let mut files: Vec<PathBuf> = Vec::new();
    let mut dirs = vec![corpus.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        let mut current = String::new();
        for para in text.split("\n\n").map(str::trim).filter(|p| p.len() > 40) {
            current.push_str(para);
            current.push_str("\n\n");
            if current.len() > 600 {
                out.push(std::mem::take(&mut current));
            }
        }
        if current.len() > 100 {
            out.push(current);
        }
    }
    Ok(out)
}

/// A question-like query: a run of 4 to 9 words from a paragraph; `None`
/// when the paragraph has no plain word (a table's rule, say).
fn question(rng: &mut fastrand::Rng, paragraph: &str) -> Option<String> {
    let words: Vec<&str> = paragraph
        .split_whitespace()
        .filter(|w| w.chars().all(|c| c.is_alphanumeric() || ",.?'".contains(c)))
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .collect();
    if words.is_empty() {
        return None;
    }
    let len = rng.usize(4..10).min(words.len());
    let start = rng.usize(0..=words.len() - len);
    Some(words[start..start + len].join(" "))
}

fn stream(n: usize, corpus: &Path, out: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(out)?;
    let paragraphs = paragraphs(corpus)?;
    anyhow::ensure!(!paragraphs.is_empty(), "no text in {}", corpus.display());
    let mut rng = fastrand::Rng::with_seed(7);
    let mut jsonl = BufWriter::new(std::fs::File::create(out.join("stream.jsonl"))?);
    let mut vectors = BufWriter::new(std::fs::File::create(out.join("vectors.f32"))?);
    for i in 0..n {
        let (doc, c) = (i / CHUNKS_PER_DOC, i % CHUNKS_PER_DOC);
        let path = format!("doc{doc:06}.md");
        let doc_id = kts_record::scope_path::doc_id(&path);
        if c == 0 {
            let doc_type = ["GUIDE", "POLICY", "REFERENCE"][doc % 3];
            let record = json!({"schema": "kts.doc/1", "doc_id": doc_id, "path": path,
                "title": format!("Document {doc}"), "markdown": "",
                "doc_type": doc_type});
            writeln!(jsonl, "{record}")?;
        }
        let text = &paragraphs[i % paragraphs.len()];
        let embedding = unit_vector(&mut rng);
        for x in &embedding {
            vectors.write_all(&x.to_le_bytes())?;
        }
        let chunk = json!({"schema": "kts.chunk/1", "chunk_id": format!("{doc_id}-{c}"),
            "doc_id": doc_id, "path": path, "index": c, "text": text,
            "start": 0, "end": text.chars().count(), "embedding": embedding, "model": MODEL});
        writeln!(jsonl, "{chunk}")?;
    }
    write_queries(&mut rng, &paragraphs, n, out)
}

/// OUT/queries.jsonl: questions from the first `n` paragraphs, with random vectors.
fn write_queries(
    rng: &mut fastrand::Rng,
    paragraphs: &[String],
    n: usize,
    out: &Path,
) -> anyhow::Result<()> {
    let mut queries = BufWriter::new(std::fs::File::create(out.join("queries.jsonl"))?);
    let mut written = 0;
    while written < QUERIES {
        let paragraph = &paragraphs[rng.usize(0..paragraphs.len().min(n))];
        let Some(text) = question(rng, paragraph) else {
            continue;
        };
        let line = json!({"id": format!("q{written}"), "text": text,
            "embedding": unit_vector(rng), "model": MODEL});
        writeln!(queries, "{line}")?;
        written += 1;
    }
    Ok(())
}

/// The same content as `stream`, written to OUT/scope through kts-store.
fn build(n: usize, corpus: &Path, out: &Path, vectors: bool) -> anyhow::Result<()> {
    let paragraphs = paragraphs(corpus)?;
    anyhow::ensure!(!paragraphs.is_empty(), "no text in {}", corpus.display());
    let scope = out.join("scope");
    std::fs::create_dir_all(&scope)?;
    let mut rng = fastrand::Rng::with_seed(7);
    let mut raw = BufWriter::new(std::fs::File::create(out.join("vectors.f32"))?);
    let mut store = kts_store::Store::open_writer(&scope, kts_store::LockWait::NoWait)?;
    let started = Instant::now();
    store.begin()?;
    for doc in 0..n.div_ceil(CHUNKS_PER_DOC) {
        let doc_id = format!("{doc:016x}");
        let row = kts_store::DocumentRow {
            doc_id: doc_id.clone(),
            path: format!("doc{doc:06}.md"),
            title: format!("Document {doc}"),
            doc_type: ["GUIDE", "POLICY", "REFERENCE"][doc % 3].into(),
            ..Default::default()
        };
        let mut chunks = Vec::new();
        for c in 0..CHUNKS_PER_DOC.min(n - doc * CHUNKS_PER_DOC) {
            let text = paragraphs[(doc * CHUNKS_PER_DOC + c) % paragraphs.len()].clone();
            let embedding = vectors.then(|| unit_vector(&mut rng));
            for x in embedding.iter().flatten() {
                raw.write_all(&x.to_le_bytes())?;
            }
            chunks.push(kts_store::ChunkRow {
                chunk_id: format!("{doc_id}-{c}"),
                index: c,
                end: text.chars().count(),
                text,
                model: vectors.then(|| MODEL.to_string()),
                embedding,
                ..Default::default()
            });
        }
        store.apply(&row, &chunks)?;
        if doc % 1000 == 999 {
            store.commit()?;
            store.begin()?;
        }
    }
    store.commit()?;
    let stored = started.elapsed();
    store.refresh_vector_file()?;
    let vectors_written = started.elapsed();
    store.refresh_lexical_index()?;
    println!(
        "build: {n} chunks stored in {:.1} s, vectors.bin written in {:.1} s, lexical index in {:.1} s",
        stored.as_secs_f64(),
        (vectors_written - stored).as_secs_f64(),
        (started.elapsed() - vectors_written).as_secs_f64()
    );
    write_queries(&mut rng, &paragraphs, n, out)
}

/// Vector top-10 through kts-store (vectors.bin, then sqlite-vec with the
/// file moved aside), timed, and its recall against an exact f32 scan.
fn recall(scope: &Path, queries: Option<&Path>) -> anyhow::Result<()> {
    let store = kts_store::Store::open_read(scope)?;
    let stored: Vec<(i64, Vec<f32>)> = store
        .connection()
        .prepare("SELECT rowid, embedding FROM chunks_vec")?
        .query_map([], |r| {
            let blob: Vec<u8> = r.get(1)?;
            let vector = blob
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
                .collect();
            Ok((r.get(0)?, vector))
        })?
        .collect::<Result<_, _>>()?;
    anyhow::ensure!(!stored.is_empty(), "{} has no vectors", scope.display());
    let queries: Vec<Vec<f32>> = match queries {
        Some(path) => read_queries(path)?
            .into_iter()
            .map(|q| q.embedding)
            .collect(),
        None => stored
            .iter()
            .step_by(stored.len().div_ceil(QUERIES))
            .map(|(_, v)| v.clone())
            .collect(),
    };
    let exact: Vec<Vec<i64>> = queries
        .iter()
        .map(|q| {
            let mut scored: Vec<(f32, i64)> =
                stored.iter().map(|(id, v)| (dot(v, q), *id)).collect();
            scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            scored.iter().take(10).map(|(_, id)| *id).collect()
        })
        .collect();
    let file = kts_store::vector_file_path(scope);
    let aside = file.with_extension("bin.aside");
    let mut figures = Vec::new();
    for label in ["vectors.bin", "sqlite-vec"] {
        if label == "sqlite-vec" {
            std::fs::rename(&file, &aside)?;
        }
        let measured = (|| {
            let store = kts_store::Store::open_read(scope)?;
            let filters = kts_store::Filters::default();
            let (mut ms, mut found) = (Vec::new(), 0usize);
            for (q, truth) in queries.iter().zip(&exact) {
                let started = Instant::now();
                let hits = store.search_vector(q, 10, &filters)?;
                ms.push(started.elapsed().as_secs_f64() * 1e3);
                found += hits.iter().filter(|h| truth.contains(&h.rowid)).count();
            }
            anyhow::Ok((ms, found as f64 / (10 * queries.len()) as f64))
        })();
        if label == "sqlite-vec" {
            std::fs::rename(&aside, &file)?;
        }
        figures.push((label, measured?));
    }
    for (label, (ms, recall)) in figures {
        report(
            &format!(
                "vector top-10 of {} vectors via {label} (recall@10 {recall:.4})",
                stored.len()
            ),
            ms,
        );
    }
    Ok(())
}

struct Query {
    text: String,
    embedding: Vec<f32>,
}

fn read_queries(path: &Path) -> anyhow::Result<Vec<Query>> {
    let file = std::io::BufReader::new(std::fs::File::open(path)?);
    let mut queries = Vec::new();
    for line in file.lines() {
        let v: Value = serde_json::from_str(&line?)?;
        queries.push(Query {
            text: v["text"].as_str().unwrap_or_default().to_string(),
            embedding: serde_json::from_value(v["embedding"].clone())?,
        });
    }
    Ok(queries)
}

fn report(label: &str, mut ms: Vec<f64>) {
    ms.sort_by(f64::total_cmp);
    let at = |p: f64| ms[((ms.len() as f64 * p) as usize).min(ms.len() - 1)];
    println!(
        "{label}: p50 {:.2} ms, p95 {:.2} ms, mean {:.2} ms over {} queries",
        at(0.5),
        at(0.95),
        ms.iter().sum::<f64>() / ms.len() as f64,
        ms.len()
    );
}

/// kts-query's settings for `kts-query DIR --batch FLAGS`.
fn batch_args(dir: &str, flags: &[String]) -> anyhow::Result<kts_query::Args> {
    let argv = ["kts-query", dir, "--batch"]
        .into_iter()
        .map(String::from)
        .chain(flags.iter().cloned());
    Ok(kts_query::Args::try_parse_from(argv)?)
}

/// The knowledge root of `args`, opened as `kts-query ROOT --batch` opens it.
fn open_root<'a>(
    args: &kts_query::Args,
    messages: &'a kts_cli::Messages,
) -> anyhow::Result<kts_query::federation::RootSearcher<'a>> {
    kts_query::federation::RootSearcher::open(&args.dir, &args.request(), &args.model(), messages)
}

/// Times `Searcher::search` per query, in one process, as `kts-query --batch` runs it.
fn query(scope: &str, queries: &Path, flags: &[String]) -> anyhow::Result<()> {
    let args = batch_args(scope, flags)?;
    let messages = kts_cli::Messages::new("bench");
    let mut searcher =
        kts_query::Searcher::open(&args.dir, &args.request(), &args.model(), &messages)?;
    let mut ms = Vec::new();
    for q in read_queries(queries)? {
        let started = Instant::now();
        let hits = searcher.search(&q.text, Some((q.embedding, Some(MODEL.into()))))?;
        ms.push(started.elapsed().as_secs_f64() * 1e3);
        std::hint::black_box(hits);
    }
    report(&format!("in-process {}", flags.join(" ")), ms);
    Ok(())
}

/// BM25 top-10 through kts-store: the lexical index against FTS5, same
/// questions, same process, and how many of FTS5's top 10 the index finds.
fn lexical(scope: &Path, queries: &Path) -> anyhow::Result<()> {
    let store = kts_store::Store::open_read(scope)?;
    let state = store.lexical_state()?;
    anyhow::ensure!(
        state == kts_store::LexicalState::Current,
        "{}: {state}",
        scope.display()
    );
    let none = kts_store::Filters::default();
    let (mut index_ms, mut fts5_ms) = (Vec::new(), Vec::new());
    let (mut shared, mut expected) = (0, 0);
    for q in read_queries(queries)? {
        let started = Instant::now();
        let from_index = store.search_bm25(&q.text, 10, &none)?;
        index_ms.push(started.elapsed().as_secs_f64() * 1e3);
        let started = Instant::now();
        let from_fts5 = store.search_fts5(&q.text, 10, &none)?;
        fts5_ms.push(started.elapsed().as_secs_f64() * 1e3);
        // By text: large scopes repeat the corpus, and copies tie.
        let texts = |scored: &[kts_store::Scored]| -> anyhow::Result<Vec<String>> {
            let rowids: Vec<i64> = scored.iter().map(|s| s.rowid).collect();
            Ok(store
                .fetch_hits(&rowids)?
                .into_iter()
                .map(|h| h.text)
                .collect())
        };
        let (from_index, from_fts5) = (texts(&from_index)?, texts(&from_fts5)?);
        expected += from_fts5.len();
        shared += from_fts5.iter().filter(|t| from_index.contains(t)).count();
    }
    report("bm25 top-10, lexical index", index_ms);
    report("bm25 top-10, FTS5", fts5_ms);
    println!(
        "overlap of the two top-10 lists (by text): {:.3}",
        shared as f64 / expected.max(1) as f64
    );
    Ok(())
}

/// The memory-bandwidth floor: dot products over a memory-mapped f32 file, top 10.
fn floor(vectors: &Path, queries: &Path) -> anyhow::Result<()> {
    let file = std::fs::File::open(vectors)?;
    #[allow(unsafe_code)]
    // SAFETY: the file is written once by `bench stream` and not changed while mapped.
    let map = unsafe { memmap2::Mmap::map(&file)? };
    let floats: &[f32] = bytemuck_cast(&map);
    let mut ms = Vec::new();
    for q in read_queries(queries)? {
        let started = Instant::now();
        let mut top: Vec<(f32, usize)> = Vec::with_capacity(11);
        for (i, row) in floats.chunks_exact(DIMS).enumerate() {
            let dot = dot(row, &q.embedding);
            if top.len() < 10 || dot > top[top.len() - 1].0 {
                let at = top.partition_point(|(s, _)| *s >= dot);
                top.insert(at, (dot, i));
                top.truncate(10);
            }
        }
        ms.push(started.elapsed().as_secs_f64() * 1e3);
        std::hint::black_box(top);
    }
    report(
        &format!("floor scan of {} vectors", floats.len() / DIMS),
        ms,
    );
    Ok(())
}

/// The mapped bytes as f32s (the file is little-endian f32s; the map is page-aligned).
fn bytemuck_cast(bytes: &[u8]) -> &[f32] {
    #[allow(unsafe_code)]
    // SAFETY: every bit pattern is a valid f32, and align_to keeps alignment.
    let (head, floats, _) = unsafe { bytes.align_to::<f32>() };
    assert!(head.is_empty(), "the map is page-aligned");
    floats
}

/// A dot product the compiler can vectorise (16 independent sums).
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 16];
    for (x, y) in a.chunks_exact(16).zip(b.chunks_exact(16)) {
        for ((acc, x), y) in acc.iter_mut().zip(x).zip(y) {
            *acc += x * y;
        }
    }
    acc.iter().sum()
}

/// Times routing, embedding and the fan-out of each question, in one
/// process whose model stays loaded (the first question, which loads it, is
/// not counted).
fn fanout(root: &str, questions: &Path, flags: &[String]) -> anyhow::Result<()> {
    let args = batch_args(root, flags)?;
    let messages = kts_cli::Messages::new("bench");
    let mut searcher = open_root(&args, &messages)?;
    let mut ms = Vec::new();
    let mut scopes = 0;
    for q in read_queries(questions)? {
        let started = Instant::now();
        let route = searcher.route(&q.text)?;
        let hits = searcher.search(&route, None)?;
        ms.push(started.elapsed().as_secs_f64() * 1e3);
        scopes = route.scopes.len();
        std::hint::black_box(hits);
    }
    ms.remove(0);
    report(
        &format!("fan-out over {scopes} scopes {}", flags.join(" ")),
        ms,
    );
    Ok(())
}

/// How the questions of one naming were routed.
#[derive(Default)]
struct Routed {
    questions: usize,
    first: usize,
    among: usize,
    scopes_asked: usize,
    refused: usize,
}

/// Routes every question as `kts-query ROOT "question"` would (the root
/// opened once, as one process would).
fn route(root: &str, questions: &Path) -> anyhow::Result<()> {
    let started = Instant::now();
    let folders = kts_store::discover_scopes(Path::new(root))?.scopes.len();
    let read_folders = started.elapsed();
    let args = batch_args(root, &[])?;
    let messages = kts_cli::Messages::new("bench");
    let started = Instant::now();
    let mut searcher = open_root(&args, &messages)?;
    println!(
        "{folders} scope folders, read in {:.1} ms; the root opened from its catalog in {:.1} ms",
        read_folders.as_secs_f64() * 1e3,
        started.elapsed().as_secs_f64() * 1e3
    );
    let catalog = kts_catalog::Catalog::open(Path::new(root))?;
    let mut by_naming: std::collections::BTreeMap<String, Routed> = Default::default();
    let mut ms = Vec::new();
    let mut slowest: Option<(f64, String)> = None;
    let mut catalog_ms = Vec::new();
    for line in std::io::BufReader::new(std::fs::File::open(questions)?).lines() {
        let q: Value = serde_json::from_str(&line?)?;
        let (text, scope) = (q["text"].as_str(), q["scope"].as_str());
        let (Some(text), Some(scope)) = (text, scope) else {
            anyhow::bail!("{}: a line without text or scope", questions.display());
        };
        let naming = q["naming"].as_str().unwrap_or("any").to_string();
        let started = Instant::now();
        let routed = searcher.route(text);
        let took = started.elapsed().as_secs_f64() * 1e3;
        ms.push(took);
        let started = Instant::now();
        std::hint::black_box(catalog.search_slugs(text, 101)?);
        catalog_ms.push(started.elapsed().as_secs_f64() * 1e3);
        if slowest.as_ref().is_none_or(|(most, _)| took > *most) {
            slowest = Some((took, text.to_string()));
        }
        let tally = by_naming.entry(naming).or_default();
        tally.questions += 1;
        match routed {
            Ok(r) => {
                tally.first += usize::from(r.scopes.first().is_some_and(|s| s.slug == scope));
                tally.among += usize::from(r.scopes.iter().any(|s| s.slug == scope));
                tally.scopes_asked += r.scopes.len();
            }
            Err(_) => tally.refused += 1,
        }
    }
    report("route", ms);
    report(
        "of which a catalog search (whether used or not)",
        catalog_ms,
    );
    if let Some((took, text)) = slowest {
        println!("slowest: {took:.1} ms for {text:?}");
    }
    let mut all = Routed::default();
    for (naming, t) in &by_naming {
        print_routed(naming, t);
        all.questions += t.questions;
        all.first += t.first;
        all.among += t.among;
        all.scopes_asked += t.scopes_asked;
        all.refused += t.refused;
    }
    print_routed("all", &all);
    Ok(())
}

fn print_routed(naming: &str, t: &Routed) {
    let share = |n: usize| 100.0 * n as f64 / t.questions.max(1) as f64;
    println!(
        "{naming:>10}: {} questions, named scope first {:.1}%, routed {:.1}%, \
         {:.1} scopes asked on average, {} refused as too broad",
        t.questions,
        share(t.first),
        share(t.among),
        t.scopes_asked as f64 / (t.questions - t.refused).max(1) as f64,
        t.refused
    );
}
