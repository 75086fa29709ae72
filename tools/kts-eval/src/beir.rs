//! Reading a BEIR data set: `corpus.jsonl`, `queries.jsonl`, `qrels/<split>.tsv`.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use kts_record::{DocRecord, Format, schema_id, scope_path};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::metrics::Judgments;

/// The files of a BEIR data set folder.
#[derive(Clone, Debug)]
pub struct Dataset {
    pub dir: PathBuf,
}

/// One query of the split, with its judgments.
#[derive(Clone, Debug)]
pub struct Query {
    pub id: String,
    pub text: String,
    pub judgments: Judgments,
}

/// The queries of a split that can be evaluated, and what was left out.
#[derive(Debug)]
pub struct Split {
    /// Judged queries (at least one grade > 0), in `queries.jsonl` order.
    pub queries: Vec<Query>,
    /// Query ids in the qrels that `queries.jsonl` does not have.
    pub missing_queries: Vec<String>,
    /// Queries in the qrels whose judgments are all ≤ 0.
    pub without_relevant: usize,
}

impl Dataset {
    pub fn open(dir: &Path) -> anyhow::Result<Self> {
        for file in ["corpus.jsonl", "queries.jsonl"] {
            if !dir.join(file).is_file() {
                bail!(
                    "{} is not a BEIR data set folder: it has no {file}",
                    dir.display()
                );
            }
        }
        Ok(Self {
            dir: dir.to_path_buf(),
        })
    }

    pub fn corpus_path(&self) -> PathBuf {
        self.dir.join("corpus.jsonl")
    }

    /// The data set's name: its folder name.
    pub fn name(&self) -> String {
        let dir = self.dir.canonicalize().unwrap_or_else(|_| self.dir.clone());
        dir.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "dataset".into())
    }

    /// SHA-256 of `corpus.jsonl`, lowercase hex: the identity of the index built from it.
    pub fn corpus_digest(&self) -> anyhow::Result<String> {
        let path = self.corpus_path();
        let mut file =
            File::open(&path).with_context(|| format!("cannot open {}", path.display()))?;
        let mut hasher = Sha256::new();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = file
                .read(&mut buf)
                .with_context(|| format!("reading {}", path.display()))?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
        }
        Ok(hex(&hasher.finalize()))
    }

    /// The corpus as `kts.doc/1` records, in file order.
    pub fn documents(&self) -> anyhow::Result<Documents> {
        let path = self.corpus_path();
        let file = File::open(&path).with_context(|| format!("cannot open {}", path.display()))?;
        Ok(Documents {
            lines: BufReader::with_capacity(1 << 16, file).lines(),
            path,
            line_number: 0,
        })
    }

    /// The qrels of a split: query id → judgments.
    pub fn qrels(&self, split: &str) -> anyhow::Result<HashMap<String, Judgments>> {
        let path = self.dir.join("qrels").join(format!("{split}.tsv"));
        if !path.is_file() {
            let mut available: Vec<String> = std::fs::read_dir(self.dir.join("qrels"))
                .into_iter()
                .flatten()
                .flatten()
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    name.strip_suffix(".tsv").map(str::to_string)
                })
                .collect();
            available.sort();
            bail!(
                "{} has no split {split:?} (no {}); splits there: {}",
                self.dir.display(),
                path.display(),
                if available.is_empty() {
                    "none".to_string()
                } else {
                    available.join(", ")
                }
            );
        }
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        parse_qrels(&text).with_context(|| format!("in {}", path.display()))
    }

    /// All queries of `queries.jsonl`: (id, text), in file order.
    pub fn queries(&self) -> anyhow::Result<Vec<(String, String)>> {
        let path = self.dir.join("queries.jsonl");
        let file = File::open(&path).with_context(|| format!("cannot open {}", path.display()))?;
        let mut queries = Vec::new();
        for (n, line) in BufReader::new(file).lines().enumerate() {
            let line = line.with_context(|| format!("reading {}", path.display()))?;
            if line.trim().is_empty() {
                continue;
            }
            let at = || format!("{}:{}", path.display(), n + 1);
            let value: Value = serde_json::from_str(&line).with_context(at)?;
            let id = id_of(&value).with_context(at)?;
            let text = value
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            queries.push((id, text));
        }
        Ok(queries)
    }

    /// The judged queries of a split, in `queries.jsonl` order.
    pub fn split(&self, split: &str) -> anyhow::Result<Split> {
        let mut qrels = self.qrels(split)?;
        let mut queries = Vec::new();
        let mut without_relevant = 0;
        let mut seen = HashSet::new();
        for (id, text) in self.queries()? {
            if !seen.insert(id.clone()) {
                continue;
            }
            let Some(judgments) = qrels.remove(&id) else {
                continue;
            };
            if judgments.values().any(|&g| g > 0) {
                queries.push(Query {
                    id,
                    text,
                    judgments,
                });
            } else {
                without_relevant += 1;
            }
        }
        let mut missing_queries: Vec<String> = qrels.into_keys().collect();
        missing_queries.sort();
        Ok(Split {
            queries,
            missing_queries,
            without_relevant,
        })
    }
}

/// Parses BEIR qrels: `query-id<TAB>corpus-id<TAB>score` with an optional header
/// line (TREC's four columns `query-id iteration corpus-id score` are accepted too).
pub fn parse_qrels(text: &str) -> anyhow::Result<HashMap<String, Judgments>> {
    let mut qrels: HashMap<String, Judgments> = HashMap::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(['\t', ' ']).filter(|f| !f.is_empty()).collect();
        let (query, doc, score) = match fields.as_slice() {
            [q, d, s] | [q, _, d, s] => (*q, *d, *s),
            _ => bail!(
                "line {}: expected query-id, corpus-id and score separated by tabs",
                n + 1
            ),
        };
        let Ok(score) = score.parse::<i64>() else {
            if n == 0 {
                continue; // the header line
            }
            bail!("line {}: score {score:?} is not an integer", n + 1);
        };
        qrels
            .entry(query.to_string())
            .or_default()
            .insert(doc.to_string(), score);
    }
    Ok(qrels)
}

/// A record's `_id`, as a string (some data sets write numbers).
fn id_of(value: &Value) -> anyhow::Result<String> {
    match value.get("_id") {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Number(n)) => Ok(n.to_string()),
        _ => bail!("record has no \"_id\" string"),
    }
}

/// The `kts.doc/1` record of one BEIR corpus entry: its path is the `_id`
/// as one file name ([`path_of_id`]), its doc_id the one kts gives that path,
/// the Markdown is `# <title>` then the text.
pub fn doc_record(value: &Value) -> anyhow::Result<DocRecord> {
    let path = path_of_id(&id_of(value)?);
    let title = value
        .get("title")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .trim()
        .to_string();
    let text = value
        .get("text")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .trim();
    let markdown = if title.is_empty() {
        format!("{text}\n")
    } else {
        format!("# {title}\n\n{text}\n")
    };
    let metadata = match value.get("metadata") {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    };
    Ok(DocRecord {
        schema: schema_id::DOC.into(),
        doc_id: scope_path::doc_id(&path),
        path,
        root: None,
        title,
        doc_type: "GENERAL".into(),
        format: Format::Md,
        markdown,
        images: Vec::new(),
        metadata,
        chunks: None,
    })
}

/// A corpus `_id` as a path inside the scope: one file name, never `.`, `..`
/// or hidden, so any id is accepted downstream. `%`, `/` and a leading `.` are
/// percent-encoded; [`id_of_path`] reverses it.
pub fn path_of_id(id: &str) -> String {
    let mut path = String::with_capacity(id.len());
    for (i, c) in id.chars().enumerate() {
        match c {
            '%' => path.push_str("%25"),
            '/' => path.push_str("%2F"),
            '.' if i == 0 => path.push_str("%2E"),
            '\0' => path.push_str("%00"),
            _ => path.push(c),
        }
    }
    if path.is_empty() {
        path.push('%');
    }
    path
}

/// The corpus `_id` a hit's path names (see [`path_of_id`]).
pub fn id_of_path(path: &str) -> String {
    if path == "%" {
        return String::new();
    }
    let mut id = String::with_capacity(path.len());
    let mut rest = path;
    while let Some(at) = rest.find('%') {
        id.push_str(&rest[..at]);
        let code = rest.get(at + 1..at + 3);
        let decoded = match code {
            Some("25") => '%',
            Some("2F") => '/',
            Some("2E") => '.',
            Some("00") => '\0',
            _ => {
                id.push('%');
                rest = &rest[at + 1..];
                continue;
            }
        };
        id.push(decoded);
        rest = &rest[at + 3..];
    }
    id.push_str(rest);
    id
}

/// The corpus, one `kts.doc/1` record per line.
pub struct Documents {
    lines: std::io::Lines<BufReader<File>>,
    path: PathBuf,
    line_number: usize,
}

impl Iterator for Documents {
    type Item = anyhow::Result<DocRecord>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let line = match self.lines.next()? {
                Ok(line) => line,
                Err(e) => {
                    return Some(Err(
                        anyhow::Error::new(e).context(format!("reading {}", self.path.display()))
                    ));
                }
            };
            self.line_number += 1;
            if line.trim().is_empty() {
                continue;
            }
            let at = format!("{}:{}", self.path.display(), self.line_number);
            return Some(
                serde_json::from_str::<Value>(&line)
                    .map_err(anyhow::Error::new)
                    .and_then(|v| doc_record(&v))
                    .with_context(|| at),
            );
        }
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qrels_with_header_and_grades() {
        let q =
            parse_qrels("query-id\tcorpus-id\tscore\n1\td1\t1\n1\td2\t2\n2\td1\t0\n\n").unwrap();
        assert_eq!(q.len(), 2);
        assert_eq!(q["1"]["d2"], 2);
        assert_eq!(q["2"]["d1"], 0);
        // Without a header, and TREC's four columns.
        let q = parse_qrels("7 0 d9 1\n").unwrap();
        assert_eq!(q["7"]["d9"], 1);
        assert!(parse_qrels("1\td1\t1\n2\td1\tx\n").is_err());
        assert!(parse_qrels("1\td1\n").is_err());
    }

    #[test]
    fn corpus_entry_becomes_a_markdown_doc() {
        let v: Value =
            serde_json::from_str(r#"{"_id":"42","title":"A title","text":"Body.","metadata":{}}"#)
                .unwrap();
        let doc = doc_record(&v).unwrap();
        assert_eq!(doc.path, "42");
        assert_eq!(doc.doc_id, scope_path::doc_id("42"));
        assert_eq!(doc.title, "A title");
        assert_eq!(doc.markdown, "# A title\n\nBody.\n");
        let json = serde_json::to_value(&doc).unwrap();
        assert_eq!(json["schema"], "kts.doc/1");
        assert_eq!(json["format"], "md");
        // Numeric ids and no title.
        let v: Value = serde_json::from_str(r#"{"_id":7,"text":"Only text."}"#).unwrap();
        let doc = doc_record(&v).unwrap();
        assert_eq!(
            (doc.path.as_str(), doc.markdown.as_str()),
            ("7", "Only text.\n")
        );
        assert!(doc_record(&serde_json::json!({"text": "x"})).is_err());
    }

    #[test]
    fn every_id_becomes_one_file_name_and_back() {
        for id in [
            "42",
            "MED-10",
            "<dbpedia:AC/DC>",
            "..",
            ".",
            "",
            "100%",
            "a%2Fb",
            "x\0y",
            ".kts",
        ] {
            let path = path_of_id(id);
            assert_eq!(id_of_path(&path), id, "{id:?} → {path:?}");
            assert_eq!(
                scope_path::normalize(&path).as_deref(),
                Ok(path.as_str()),
                "{id:?}"
            );
        }
    }

    #[test]
    fn split_keeps_judged_queries_in_file_order() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("corpus.jsonl"), "{\"_id\":\"d1\",\"text\":\"x\"}\n").unwrap();
        std::fs::write(
            d.join("queries.jsonl"),
            "{\"_id\":\"3\",\"text\":\"three\"}\n{\"_id\":\"1\",\"text\":\"one\"}\n\
             {\"_id\":\"2\",\"text\":\"two\"}\n{\"_id\":\"4\",\"text\":\"four\"}\n",
        )
        .unwrap();
        std::fs::create_dir(d.join("qrels")).unwrap();
        std::fs::write(
            d.join("qrels/test.tsv"),
            "query-id\tcorpus-id\tscore\n1\td1\t1\n3\td1\t1\n2\td1\t0\n9\td1\t1\n",
        )
        .unwrap();
        let dataset = Dataset::open(d).unwrap();
        let split = dataset.split("test").unwrap();
        let ids: Vec<&str> = split.queries.iter().map(|q| q.id.as_str()).collect();
        assert_eq!(ids, ["3", "1"]);
        assert_eq!(split.queries[0].text, "three");
        assert_eq!(split.without_relevant, 1);
        assert_eq!(split.missing_queries, ["9"]);
        let err = dataset.split("train").unwrap_err().to_string();
        assert!(err.contains("splits there: test"), "{err}");
        let docs: Vec<DocRecord> = dataset.documents().unwrap().map(Result::unwrap).collect();
        assert_eq!(docs.len(), 1);
        assert_eq!(dataset.corpus_digest().unwrap().len(), 64);
    }
}
