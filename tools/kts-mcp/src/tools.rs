//! The tools: their input schemas, and each call answered by the query
//! library, as structured content (kts-query's records) and text.

use std::fmt::Write as _;

use kts_query::{Cutoff, Mode, Request};
use kts_record::HitRecord;
use rmcp::model::{Tool, ToolAnnotations};
use serde_json::{Map, Value, json};

use crate::arguments::Arguments;
use crate::resources;
use crate::server::State;

pub const NAMES: [&str; 7] = [
    "search",
    "context",
    "get_document",
    "list_scopes",
    "count_by_scope",
    "related",
    "check_answer",
];

/// What a tool call answers: structured content and its text rendering.
pub struct ToolOutput {
    pub structured: Value,
    pub text: String,
}

pub fn exists(name: &str) -> bool {
    NAMES.contains(&name)
}

/// Paths count_by_scope lists per scope unless told otherwise.
const PATHS_PER_SCOPE: usize = 20;

/// The entities, and the keywords, of a scope that list_scopes' text shows.
const LISTED_NAMES: usize = 10;

const SCOPE: &str = "In a knowledge root: the scope (its slug, as list_scopes gives it). \
                     Without it, the question is routed like `kts-query ROOT`, and `/slug question` \
                     works too; with it, a leading `/word` is only a word.";

/// Every tool, with the JSON Schema of its input and of its structured output.
pub fn definitions() -> Vec<Tool> {
    let question = json!({"type": "string", "description": "The question, or keywords; chunks that say a phrase in double quotes word for word rank higher."});
    let scope = json!({"type": "string", "description": SCOPE});
    let records = |schema: &str| {
        json!({"type": "array", "items": {"type": "object"},
        "description": format!("{schema} records")})
    };
    vec![
        tool(
            "search",
            "Search the knowledge base: hybrid BM25 and vector retrieval through kts's query \
             pipeline. Returns the best passages, each with its citation (path, title, heading \
             path, character offsets, page or slide) and a confidence.",
            json!({
                "question": question,
                "scope": scope,
                "doc_type": {"type": "string", "description": "Only documents of this type (POLICY, SOP, GUIDE, REFERENCE, TROUBLESHOOT, FAQ, ...)."},
                "top_k": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10, "description": "Number of results."},
                "mode": {"type": "string", "enum": ["hybrid", "bm25", "vector"], "default": "hybrid"},
                "min_confidence": {"type": "number", "minimum": 0, "maximum": 1, "description": "Leave out hits less likely than this to be relevant."}
            }),
            &["question"],
            json!({"hits": records("kts.hit/1"), "scopes": {"type": "array", "items": {"type": "string"}, "description": "The scopes asked."}}),
        ),
        tool(
            "context",
            "An LLM-ready Markdown context for a question, within a token budget: what the \
             knowledge graph knows of the entities it names, then the cited passages (in a \
             knowledge root, each cited by scope and path: `hr: notes.md`).",
            json!({
                "question": question,
                "scope": scope,
                "budget": {"type": "integer", "minimum": 100, "maximum": 32000, "default": 2000, "description": "Size in tokens (characters / 4, a Chinese, Japanese or Korean character as one)."}
            }),
            &["question"],
            json!({"context": {"type": "string"}}),
        ),
        tool(
            "get_document",
            "A document's Markdown, whole or a part of it (characters start..end, as a hit's \
             offsets, or one page or slide), with its title, doc_type and path: to read around a hit. \
             Name it by path or by doc_id.",
            json!({
                "path": {"type": "string", "description": "The document's path in its scope, or its citation as a hit or a context gives it (`scope: path#Heading`, `scope: path > Heading`), or its resource URI (`kts://scope/path`)."},
                "doc_id": {"type": "string", "description": "Or the document's id."},
                "scope": {"type": "string", "description": "In a knowledge root: the document's scope."},
                "start": {"type": "integer", "minimum": 0, "description": "First character (Unicode characters, from 0)."},
                "end": {"type": "integer", "minimum": 0, "description": "Character after the last."},
                "page": {"type": "integer", "minimum": 1, "description": "Only this page (PDF) or slide (PowerPoint)."}
            }),
            &[],
            json!({
                "scope": {"type": "string"}, "doc_id": {"type": "string"}, "path": {"type": "string"},
                "title": {"type": "string"}, "doc_type": {"type": "string"},
                "start": {"type": "integer"}, "end": {"type": "integer"}, "length": {"type": "integer"},
                "markdown": {"type": "string"}
            }),
        ),
        tool(
            "list_scopes",
            "The scopes of the knowledge base: slug, folder, documents, chunks, doc types, \
             years, main entities and keywords.",
            json!({}),
            &[],
            json!({"scopes": records("kts.scope/1")}),
        ),
        tool(
            "count_by_scope",
            "In how many scopes, and in which documents, every word of the question occurs: \
             per scope, the documents and passages holding them all (counted in full) and the \
             paths of the first documents (most passages first).",
            json!({
                "question": {"type": "string", "description": "The words to count (every one must occur in a document for it to count); not a search: no ranking."},
                "scope": {"type": "string", "description": "In a knowledge root: count in this scope only (its slug, as list_scopes gives it); without it, every scope is counted."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": PATHS_PER_SCOPE, "description": "Paths listed per scope, most matching passages first."}
            }),
            &["question"],
            json!({"counts": records("kts.scope_count/1 (paths: the first `limit`)")}),
        ),
        tool(
            "related",
            "The documents most related to one, by the entities they share in the knowledge graph.",
            json!({
                "path": {"type": "string", "description": "The document's path in its scope, or its citation or resource URI, as get_document takes them."},
                "scope": {"type": "string", "description": "In a knowledge root: the document's scope."},
                "top_k": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10}
            }),
            &["path"],
            json!({"related": records("kts.node/1")}),
        ),
        tool(
            "check_answer",
            "Check an answer against one scope of the knowledge base (on a knowledge root, name \
             it with `scope`): each claim (sentence) is searched and marked supported or not, \
             with the passages that support it, then a summary with the coverage.",
            json!({
                "answer": {"type": "string", "description": "The answer, in Markdown."},
                "question": {"type": "string", "description": "The question it answers (helps the retry of unsupported claims)."},
                "scope": {"type": "string", "description": "The scope to check against (its slug, as list_scopes gives it): required on a knowledge root of several scopes."},
                "min_coverage": {"type": "number", "minimum": 0, "maximum": 1, "default": kts_query::evidence::MIN_COVERAGE}
            }),
            &["answer"],
            json!({"evidence": records("kts.evidence/1")}),
        ),
    ]
}

fn tool(
    name: &'static str,
    description: &'static str,
    properties: Value,
    required: &[&str],
    output: Value,
) -> Tool {
    let input = json!({"type": "object", "properties": properties, "required": required,
        "additionalProperties": false});
    let output = json!({"type": "object", "properties": output});
    Tool::new(name, description, object(input))
        .with_raw_output_schema(object(output).into())
        .with_annotations(
            // It reads a local knowledge base, not the open world.
            ToolAnnotations::new()
                .read_only(true)
                .idempotent(true)
                .open_world(false),
        )
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => unreachable!("schemas are objects"),
    }
}

/// Answers one call of the tool `name`; its searches are refused once
/// `cutoff` is reached.
pub fn call(
    state: &State,
    name: &str,
    values: &Map<String, Value>,
    cutoff: Cutoff,
) -> anyhow::Result<ToolOutput> {
    match name {
        "search" => search(state, values, cutoff),
        "context" => context(state, values, cutoff),
        "get_document" => get_document(state, values),
        "list_scopes" => list_scopes(state, values),
        "count_by_scope" => count_by_scope(state, values, cutoff),
        "related" => related(state, values),
        "check_answer" => check_answer(state, values, cutoff),
        other => anyhow::bail!("no tool {other:?}"),
    }
}

fn search(
    state: &State,
    values: &Map<String, Value>,
    cutoff: Cutoff,
) -> anyhow::Result<ToolOutput> {
    let args = Arguments::new(
        "search",
        values,
        &[
            "question",
            "scope",
            "doc_type",
            "top_k",
            "mode",
            "min_confidence",
        ],
    )?;
    let mut request = request(&args, cutoff)?;
    request.doc_types = args
        .string("doc_type")?
        .map(String::from)
        .into_iter()
        .collect();
    request.top_k = args.integer("top_k", 1..=100)?.unwrap_or(request.top_k);
    request.mode = match args.choice("mode", &["hybrid", "bm25", "vector"])? {
        Some("bm25") => Mode::Bm25,
        Some("vector") => Mode::Vector,
        _ => Mode::Hybrid,
    };
    request.min_confidence = args.number("min_confidence", 0.0..=1.0)?;
    let answer = state.knowledge.search(&request)?;
    let mut text = String::new();
    for hit in &answer.hits {
        write_hit(&mut text, hit, &request.question, state.knowledge.is_root())?;
    }
    if answer.hits.is_empty() {
        text.push_str("no results\n");
    }
    Ok(ToolOutput {
        structured: json!({"hits": answer.hits, "scopes": answer.scopes}),
        text,
    })
}

/// A hit as the text shows it: its rank and confidence, its citation (on a
/// knowledge root after its scope), the characters of the document it holds
/// (as get_document takes them) and its page or slide, then a snippet.
fn write_hit(
    text: &mut String,
    hit: &HitRecord,
    question: &str,
    with_scope: bool,
) -> std::fmt::Result {
    let mut citation = match with_scope {
        true => format!("{}: {}", hit.scope, hit.path),
        false => hit.path.clone(),
    };
    if !hit.heading_path.is_empty() {
        write!(citation, "#{}", hit.heading_path.join(" > "))?;
    }
    let mut place = format!("characters {}-{}", hit.start, hit.end);
    if let Some(page) = hit.page {
        write!(place, ", page {page}")?;
    } else if let Some(slide) = hit.slide {
        write!(place, ", slide {slide}")?;
    }
    let confidence = hit.confidence.unwrap_or(hit.score);
    writeln!(
        text,
        "{:>2}. confidence {confidence:.2}  {citation}  ({place})",
        hit.rank
    )?;
    writeln!(text, "    {}", kts_query::hit_snippet(hit, question))
}

/// The question and the scope asked, answered until `cutoff`.
fn request(args: &Arguments, cutoff: Cutoff) -> anyhow::Result<Request> {
    let question = args.question("question")?;
    let scope = args.string("scope")?;
    Ok(Request {
        question: question.to_string(),
        scopes: scope.map(String::from).into_iter().collect(),
        cutoff,
        ..Request::default()
    })
}

fn context(
    state: &State,
    values: &Map<String, Value>,
    cutoff: Cutoff,
) -> anyhow::Result<ToolOutput> {
    let args = Arguments::new("context", values, &["question", "scope", "budget"])?;
    let mut request = request(&args, cutoff)?;
    request.budget = args
        .integer("budget", 100..=32_000)?
        .unwrap_or(request.budget);
    let markdown = state.knowledge.context(&request)?;
    Ok(ToolOutput {
        structured: json!({"context": markdown}),
        text: markdown,
    })
}

fn get_document(state: &State, values: &Map<String, Value>) -> anyhow::Result<ToolOutput> {
    let args = Arguments::new(
        "get_document",
        values,
        &["path", "doc_id", "scope", "start", "end", "page"],
    )?;
    let scope = args.string("scope")?;
    let (scope, key) = match (
        args.non_empty_string("path")?,
        args.non_empty_string("doc_id")?,
    ) {
        (Some(path), None) => cited(scope, path)?,
        (None, Some(doc_id)) => (scope.map(String::from), doc_id.to_string()),
        (Some(_), Some(_)) => anyhow::bail!("get_document: give path or doc_id, not both"),
        (None, None) => anyhow::bail!("get_document: the argument path (or doc_id) is required"),
    };
    let document = state.knowledge.document(scope.as_deref(), &key)?;
    let length = document.markdown.chars().count();
    let (start, end) = match args.integer("page", 1..=1_000_000)? {
        Some(page) => {
            if args.integer("start", 0..=u64::MAX)?.is_some()
                || args.integer("end", 0..=u64::MAX)?.is_some()
            {
                anyhow::bail!("get_document: give a page or start and end, not both");
            }
            page_range(&document.markdown, page).ok_or_else(|| {
                anyhow::anyhow!(
                    "get_document: {} has no page or slide {page}",
                    document.stored.path
                )
            })?
        }
        None => {
            let start = args
                .integer("start", 0..=u64::MAX)?
                .unwrap_or(0)
                .min(length);
            let end = args
                .integer("end", 0..=u64::MAX)?
                .unwrap_or(length)
                .min(length);
            if end < start {
                anyhow::bail!("get_document: end {end} is before start {start}");
            }
            (start, end)
        }
    };
    let part: String = document
        .markdown
        .chars()
        .skip(start)
        .take(end - start)
        .collect();
    let stored = &document.stored;
    let text = format!(
        "<!-- {} ({}), {}: characters {start}-{end} of {length} -->\n{part}",
        stored.path, stored.doc_type, document.scope
    );
    Ok(ToolOutput {
        structured: json!({
            "scope": document.scope, "doc_id": stored.doc_id, "path": stored.path,
            "title": stored.title, "doc_type": stored.doc_type,
            "start": start, "end": end, "length": length, "markdown": part,
        }),
        text,
    })
}

/// The scope and the path a citation names: a resource's URI
/// (`kts://SCOPE/PATH`) is read as its scope and path, unless `scope` is
/// given; the other forms (`scope: path#Heading`, ...) are the query
/// library's to read.
fn cited(scope: Option<&str>, path: &str) -> anyhow::Result<(Option<String>, String)> {
    match resources::parse(path) {
        Some(named) => {
            let (named_scope, path) = named?;
            Ok((Some(scope.map_or(named_scope, String::from)), path))
        }
        None => Ok((scope.map(String::from), path.to_string())),
    }
}

/// The characters of one page or slide: from its marker to the next one.
fn page_range(markdown: &str, page: usize) -> Option<(usize, usize)> {
    let markers = [
        format!("<!-- page: {page} -->"),
        format!("<!-- slide: {page} -->"),
    ];
    let byte_start = markers.iter().find_map(|m| markdown.find(m.as_str()))?;
    let after = &markdown[byte_start + 1..];
    let byte_end = ["<!-- page: ", "<!-- slide: "]
        .iter()
        .filter_map(|m| after.find(m))
        .min()
        .map_or(markdown.len(), |i| byte_start + 1 + i);
    let start = markdown[..byte_start].chars().count();
    Some((
        start,
        start + markdown[byte_start..byte_end].chars().count(),
    ))
}

fn list_scopes(state: &State, values: &Map<String, Value>) -> anyhow::Result<ToolOutput> {
    Arguments::new("list_scopes", values, &[])?;
    let rows = state.knowledge.scope_rows()?;
    let mut text = String::new();
    for row in &rows {
        writeln!(
            text,
            "{}: {} documents ({}), {}",
            row.slug,
            row.documents,
            row.doc_types.join(", "),
            row.path
        )?;
        for (what, names) in [("entities", &row.entities), ("keywords", &row.keywords)] {
            if !names.is_empty() {
                let shown = &names[..names.len().min(LISTED_NAMES)];
                writeln!(text, "    {what}: {}", shown.join(", "))?;
            }
        }
    }
    let records: Vec<_> = rows.iter().map(|r| r.to_record(None)).collect();
    Ok(ToolOutput {
        structured: json!({"scopes": records}),
        text,
    })
}

fn count_by_scope(
    state: &State,
    values: &Map<String, Value>,
    cutoff: Cutoff,
) -> anyhow::Result<ToolOutput> {
    let args = Arguments::new("count_by_scope", values, &["question", "scope", "limit"])?;
    let limit = args.integer("limit", 1..=1000)?.unwrap_or(PATHS_PER_SCOPE);
    let mut counts = state.knowledge.count_by_scope(&request(&args, cutoff)?)?;
    let mut text = String::new();
    for count in &mut counts {
        count.paths.truncate(limit);
        let more = match count.documents.saturating_sub(count.paths.len()) {
            0 => String::new(),
            more => format!(" and {more} more"),
        };
        writeln!(
            text,
            "{}: {} document(s), {} passage(s): {}{more}",
            count.scope,
            count.documents,
            count.chunks,
            count.paths.join(", ")
        )?;
    }
    if counts.is_empty() {
        text.push_str("in no scope\n");
    }
    Ok(ToolOutput {
        structured: json!({"counts": counts}),
        text,
    })
}

fn related(state: &State, values: &Map<String, Value>) -> anyhow::Result<ToolOutput> {
    let args = Arguments::new("related", values, &["path", "scope", "top_k"])?;
    let path = args
        .non_empty_string("path")?
        .ok_or_else(|| anyhow::anyhow!("related: the argument path is required"))?;
    let top = args.integer("top_k", 1..=100)?.unwrap_or(10);
    let (scope, path) = cited(args.string("scope")?, path)?;
    // Read as get_document reads it, so that the same citations name it.
    let document = state.knowledge.document(scope.as_deref(), &path)?;
    let related = state
        .knowledge
        .related(Some(&document.scope), &document.stored.path, top)?;
    let mut text = String::new();
    for node in &related {
        let path = node.path.as_deref().unwrap_or("");
        let citation = match state.knowledge.is_root() {
            true => format!("{}: {path}", document.scope),
            false => path.to_string(),
        };
        writeln!(
            text,
            "{:.3}  {}  {citation} (shared: {})",
            node.score.unwrap_or(0.0),
            node.name,
            node.shared.join(", ")
        )?;
    }
    if related.is_empty() {
        text.push_str("no related documents\n");
    }
    Ok(ToolOutput {
        structured: json!({"related": related}),
        text,
    })
}

fn check_answer(
    state: &State,
    values: &Map<String, Value>,
    cutoff: Cutoff,
) -> anyhow::Result<ToolOutput> {
    let args = Arguments::new(
        "check_answer",
        values,
        &["answer", "question", "scope", "min_coverage"],
    )?;
    let answer = args.text("answer")?;
    let scope = state
        .knowledge
        .one_scope(args.string("scope")?)
        .map_err(|e| match args.string("scope") {
            Ok(None) => anyhow::anyhow!(
                "check_answer: on a knowledge root of several scopes, the argument scope names \
                 the one to check against (list_scopes lists them)"
            ),
            _ => e,
        })?;
    let request = Request {
        question: args.string("question")?.unwrap_or_default().to_string(),
        scopes: vec![scope.slug.clone()],
        cutoff,
        ..Request::default()
    };
    let min_coverage = args
        .number("min_coverage", 0.0..=1.0)?
        .unwrap_or(kts_query::evidence::MIN_COVERAGE);
    let report = state
        .knowledge
        .check_answer(&request, answer, min_coverage)?;
    let mut text = Vec::new();
    let cited_scope = state.knowledge.is_root().then_some(scope.slug.as_str());
    report.write_text(&mut text, cited_scope)?;
    Ok(ToolOutput {
        structured: json!({"evidence": report.records()}),
        text: String::from_utf8_lossy(&text).into_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_runs_from_its_marker_to_the_next() {
        let markdown = "intro\n<!-- page: 1 -->\nfirst é\n<!-- page: 2 -->\nsecond\n";
        let (start, end) = page_range(markdown, 1).unwrap();
        let part: String = markdown.chars().skip(start).take(end - start).collect();
        assert_eq!(part, "<!-- page: 1 -->\nfirst é\n");
        let (start, end) = page_range(markdown, 2).unwrap();
        assert_eq!(end, markdown.chars().count());
        assert!(
            markdown
                .chars()
                .skip(start)
                .collect::<String>()
                .starts_with("<!-- page: 2")
        );
        assert_eq!(page_range(markdown, 3), None);
    }

    #[test]
    fn every_tool_takes_an_object_and_says_what_it_returns() {
        let tools = definitions();
        assert_eq!(
            tools.iter().map(|t| t.name.to_string()).collect::<Vec<_>>(),
            NAMES
        );
        for tool in tools {
            assert_eq!(tool.input_schema["type"], "object", "{}", tool.name);
            assert_eq!(tool.output_schema.unwrap()["type"], "object");
        }
    }
}
