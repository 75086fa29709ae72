//! The query benchmark's helpers (driven by pipelines/bench/query.sh):
//!
//!   bench stream N CORPUS OUT   writes OUT/stream.jsonl (documents of 10 chunks
//!                               of corpus text, random unit vectors), OUT/vectors.f32
//!                               (the same vectors) and OUT/queries.jsonl (200 queries)
//!   bench query SCOPE QUERIES [kts-query flags]
//!                               times each query in one process (p50/p95)
//!   bench floor VECTORS QUERIES a plain scan of the memory-mapped vectors, top 10
//!
//! Vectors are random, so figures are about speed, not quality.

use std::io::{BufRead, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Parser;
use serde_json::{Value, json};

const DIMS: usize = 384;
const QUERIES: usize = 200;
const MODEL: &str = "bench-random-384";
const CHUNKS_PER_DOC: usize = 10;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("stream") if args.len() == 4 => {
            stream(args[1].parse()?, Path::new(&args[2]), Path::new(&args[3]))
        }
        Some("query") if args.len() >= 3 => query(&args[1], Path::new(&args[2]), &args[3..]),
        Some("floor") if args.len() == 3 => floor(Path::new(&args[1]), Path::new(&args[2])),
        _ => anyhow::bail!(
            "usage: bench stream N CORPUS OUT | query SCOPE QUERIES [FLAGS] | floor VECTORS QUERIES"
        ),
    }
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

/// A question-like query: a run of 4 to 9 words from a paragraph.
fn question(rng: &mut fastrand::Rng, paragraph: &str) -> String {
    let words: Vec<&str> = paragraph
        .split_whitespace()
        .filter(|w| w.chars().all(|c| c.is_alphanumeric() || ",.?'".contains(c)))
        .collect();
    let len = rng.usize(4..10).min(words.len());
    let start = rng.usize(0..=words.len() - len);
    words[start..start + len].join(" ")
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
        let (doc_id, path) = (format!("{doc:016x}"), format!("doc{doc:06}.md"));
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
    let mut queries = BufWriter::new(std::fs::File::create(out.join("queries.jsonl"))?);
    for q in 0..QUERIES {
        let paragraph = &paragraphs[rng.usize(0..paragraphs.len().min(n))];
        let line = json!({"id": format!("q{q}"), "text": question(&mut rng, paragraph),
            "embedding": unit_vector(&mut rng), "model": MODEL});
        writeln!(queries, "{line}")?;
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

/// Times `Searcher::search` per query, in one process, as `kts-query --batch` runs it.
fn query(scope: &str, queries: &Path, flags: &[String]) -> anyhow::Result<()> {
    let argv = ["kts-query", scope, "--batch"]
        .into_iter()
        .map(String::from)
        .chain(flags.iter().cloned());
    let args = kts_query::Args::try_parse_from(argv)?;
    let messages = kts_cli::Messages::new("bench");
    let mut searcher = kts_query::Searcher::open(&args, &messages)?;
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
