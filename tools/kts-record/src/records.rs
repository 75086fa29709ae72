use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::{ErrorCode, Format, schema_id};

fn file_schema() -> String {
    schema_id::FILE.into()
}
fn doc_schema() -> String {
    schema_id::DOC.into()
}
fn chunk_schema() -> String {
    schema_id::CHUNK.into()
}
fn query_embedding_schema() -> String {
    schema_id::QUERY_EMBEDDING.into()
}
fn hit_schema() -> String {
    schema_id::HIT.into()
}
fn node_schema() -> String {
    schema_id::NODE.into()
}
fn error_schema() -> String {
    schema_id::ERROR.into()
}
fn evidence_schema() -> String {
    schema_id::EVIDENCE.into()
}

/// Where a file stands against the scope's previous crawl.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum FileStatus {
    New,
    Changed,
    Unchanged,
    Deleted,
}

/// `kts.file/1`: one file of a scope, as found by kts-crawl.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, PartialEq)]
#[schemars(
    title = "kts.file/1",
    description = "One file of a scope, as found by kts-crawl."
)]
pub struct FileRecord {
    #[serde(default = "file_schema")]
    #[schemars(extend("const" = "kts.file/1"))]
    #[schemars(required)]
    pub schema: String,
    /// Path relative to the scope root, with `/` separators.
    pub path: String,
    /// Absolute path of the scope root the file belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    /// Size in bytes.
    pub size: u64,
    /// Modification time, RFC 3339 in UTC with nanoseconds.
    pub mtime: String,
    /// SHA-256 of the content, lowercase hex.
    pub sha256: String,
    /// Format detected from the content (and the extension where content is plain text).
    pub format: Format,
    pub status: FileStatus,
}

/// An image extracted from a document, stored once by content hash.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, PartialEq)]
pub struct ImageRef {
    /// Path relative to the scope root: `.kts/documents/<doc_id>/images/<sha256>.<ext>`.
    pub path: String,
    pub sha256: String,
    pub media_type: String,
}

/// `kts.doc/1`: one document converted to Markdown.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, PartialEq)]
#[schemars(
    title = "kts.doc/1",
    description = "One document converted to Markdown."
)]
pub struct DocRecord {
    #[serde(default = "doc_schema")]
    #[schemars(extend("const" = "kts.doc/1"))]
    #[schemars(required)]
    pub schema: String,
    /// Stable id of the document: the first 16 hex digits of the SHA-256 of
    /// its path (kts-index refuses any other form).
    #[schemars(regex(pattern = r"^[0-9a-f]{16}$"))]
    pub doc_id: String,
    /// Path relative to the scope root, `/`-separated; never absolute, never
    /// leaving the scope through `..`, never inside `.kts/`. A document found
    /// inside a file has the file's path, `#`, and where it sits in the file:
    /// `mail.eml#attachment/report.pdf`, `box.mbox#message/3`.
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    #[serde(default)]
    pub title: String,
    /// POLICY, SOP, REFERENCE, GUIDE, TROUBLESHOOT, ... or GENERAL.
    #[serde(default = "general")]
    pub doc_type: String,
    #[serde(default = "markdown_format")]
    pub format: Format,
    pub markdown: String,
    #[serde(default)]
    pub images: Vec<ImageRef>,
    /// Free-form metadata: dates, keywords, author, pages, source_sha256, ...
    /// A document found inside a file names the file's path in `parent`; the
    /// file's own document lists their paths in `parts` (and those that could
    /// not be converted in `part_errors`: path, code, message). kts-index
    /// removes the documents a file no longer lists, and all with the file.
    #[serde(default)]
    pub metadata: Map<String, Value>,
    /// How many `kts.chunk/1` records follow (written by kts-chunk). kts-index
    /// keeps the document only when all of them arrive, so a stream cut short
    /// upstream leaves the document as it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunks: Option<usize>,
}

fn general() -> String {
    "GENERAL".into()
}
fn markdown_format() -> Format {
    Format::Md
}

/// `kts.chunk/1`: a span of a document's Markdown, ready to embed and index.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, PartialEq)]
#[schemars(
    title = "kts.chunk/1",
    description = "A span of a document's Markdown."
)]
pub struct ChunkRecord {
    #[serde(default = "chunk_schema")]
    #[schemars(extend("const" = "kts.chunk/1"))]
    #[schemars(required)]
    pub schema: String,
    /// Stable id: the same text at the same place in the same document keeps its id.
    pub chunk_id: String,
    /// The document's id (see `kts.doc/1`).
    #[schemars(regex(pattern = r"^[0-9a-f]{16}$"))]
    pub doc_id: String,
    pub path: String,
    /// Position of the chunk within its document, from 0.
    pub index: usize,
    /// Exactly the document's Markdown between `start` and `end`.
    pub text: String,
    /// Headings above the chunk, outermost first. A chunk that starts inside
    /// a table, below its header, ends the path with that header row as
    /// written (`| Name | City |`), so it still says what its columns mean.
    #[serde(default)]
    pub heading_path: Vec<String>,
    /// Offset of the first character, in Unicode scalar values (as Python's `str`).
    pub start: usize,
    /// Offset one past the last character, in Unicode scalar values.
    pub end: usize,
    /// PDF page the chunk starts on, from 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    /// Slide the chunk starts on, from 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slide: Option<u32>,
    /// The chunk's embedding (L2-normalised), added by kts-embed: of its text
    /// read after its document's title and its heading path, less what the
    /// text starts with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedding: Option<Vec<f32>>,
    /// Id of the model that made `embedding`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// SHA-256 of that model's weights file, as its manifest pins it: two
    /// models with one id but other weights do not mix in an index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_sha256: Option<String>,
}

/// `kts.query_embedding/1`: a search query's embedding, as `kts-embed --query`
/// prints it.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, PartialEq)]
#[schemars(
    title = "kts.query_embedding/1",
    description = "A search query's embedding, made by kts-embed --query."
)]
pub struct QueryEmbeddingRecord {
    #[serde(default = "query_embedding_schema")]
    #[schemars(extend("const" = "kts.query_embedding/1"))]
    #[schemars(required)]
    pub schema: String,
    /// Id of the model that made `embedding`.
    pub model: String,
    /// SHA-256 of that model's weights file, as its manifest pins it.
    pub model_sha256: String,
    /// Length of `embedding`.
    pub dims: usize,
    /// The query as given.
    pub text: String,
    /// The query's embedding (L2-normalised), made with the model's query
    /// prefix: compare it with the chunks' embeddings of the same model.
    pub embedding: Vec<f32>,
}

/// How one retriever or ranking signal saw a hit.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, PartialEq)]
pub struct Signal {
    /// Rank in that retriever's own list, from 1 (absent for pure score signals).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<usize>,
    pub score: f64,
}

/// `kts.hit/1`: one search result, with what is needed to cite it.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, PartialEq)]
#[schemars(
    title = "kts.hit/1",
    description = "One search result, with its citation."
)]
pub struct HitRecord {
    #[serde(default = "hit_schema")]
    #[schemars(extend("const" = "kts.hit/1"))]
    #[schemars(required)]
    pub schema: String,
    /// Position in the result list, from 1.
    pub rank: usize,
    /// The score the list is ordered by (higher is better): the fused score,
    /// or over a knowledge root the confidence the scopes' hits are merged by.
    pub score: f64,
    pub doc_id: String,
    pub chunk_id: String,
    /// Slug of the scope the hit comes from.
    pub scope: String,
    pub path: String,
    #[serde(default)]
    pub title: String,
    #[serde(default = "general")]
    pub doc_type: String,
    /// The chunk's text.
    pub text: String,
    /// Headings above the cited part of `text` (see `cited_start`),
    /// outermost first.
    #[serde(default)]
    pub heading_path: Vec<String>,
    /// Character offsets of `text` in the document's Markdown.
    pub start: usize,
    pub end: usize,
    /// Character offset in the document's Markdown where the part of `text`
    /// that `heading_path`, `page` and `slide` cite begins. A chunk can run
    /// over a page break or hold several short sections: the part cited, from
    /// one heading or page or slide marker to the next, is the one holding
    /// the most distinct words of the question (the earliest of equals), and
    /// `start` when `text` holds none of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cited_start: Option<usize>,
    /// PDF page of the cited part, from 1 (not necessarily the page the chunk
    /// starts on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    /// Slide of the cited part, from 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slide: Option<u32>,
    /// Each retriever's and signal's view of the hit, by name (`bm25`, `vector`, ...).
    #[serde(default)]
    pub signals: std::collections::BTreeMap<String, Signal>,
    /// The probability that the hit is relevant, from its signals (calibrated
    /// on the evaluation data).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
}

/// `kts.node/1`: a node of a scope's knowledge graph, as a graph question
/// (`kts-graph DIR related|neighbors|central|entities`) answers with it.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, Default, PartialEq)]
#[schemars(
    title = "kts.node/1",
    description = "A node of a scope's knowledge graph: a document or an entity its text names."
)]
pub struct NodeRecord {
    #[serde(default = "node_schema")]
    #[schemars(extend("const" = "kts.node/1"))]
    #[schemars(required)]
    pub schema: String,
    /// Stable node id: `doc:<doc_id>`, `chunk:<chunk_id>` or `<kind>:<key>` (e.g. `error_code:ERR-AUTH-401`).
    pub id: String,
    /// DOCUMENT, CHUNK, TERM, SYSTEM, CONCEPT, ACRONYM, ERROR_CODE, PERSON or TOPIC.
    pub kind: String,
    /// The entity as written most often, or the document's title.
    pub name: String,
    /// The answer's own measure (relatedness, centrality, path weight), higher is closer or more central.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// Edges from the asked entity (neighbors).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hops: Option<usize>,
    /// Label of the edge the node was reached by (neighbors).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// Occurrences of the entity in the scope's chunks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mentions: Option<u64>,
    /// A document's path (DOCUMENT nodes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The sentence that defines the term, and the document it is in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub definition: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub defined_in: Option<String>,
    /// What an acronym stands for, when a document spells it out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expansion: Option<String>,
    /// Paths of the documents that mention the entity (most mentions first, at most 10).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub documents: Vec<String>,
    /// Entities a related document shares with the asked one (strongest first, at most 10).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shared: Vec<String>,
}

/// Which kind of `kts.evidence/1` record: one per claim, then one summary.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum EvidenceKind {
    /// One claim (sentence) of the answer and the chunks that support it.
    Claim,
    /// The whole answer: coverage, the unsupported claims, whether a retry ran.
    Summary,
}

/// `kts.evidence/1`: the evidence check of an answer against a scope
/// (`kts-query DIR QUESTION --evidence ANSWER`). The check writes one
/// `"kind": "claim"` record per claim, in the answer's order, then one
/// `"kind": "summary"` record, so `jq 'select(.kind == "summary")'` gives the
/// verdict and `jq 'select(.supported == false) | .claim'` the claims the
/// scope does not support. Fields are present only on the kind noted.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, PartialEq)]
#[schemars(
    title = "kts.evidence/1",
    description = "An answer's claim and the chunks supporting it, or the answer's summary."
)]
pub struct EvidenceRecord {
    #[serde(default = "evidence_schema")]
    #[schemars(extend("const" = "kts.evidence/1"))]
    #[schemars(required)]
    pub schema: String,
    /// `claim` or `summary`.
    pub kind: EvidenceKind,
    /// claim: position of the claim among the answer's claims, from 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    /// claim: the sentence, as checked (Markdown markers and citations like `[1]` removed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim: Option<String>,
    /// claim: whether the best chunk's `support` reaches the support threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supported: Option<bool>,
    /// claim: the best chunk's support score, from 0 to 1 (0 when nothing was found).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub support: Option<f64>,
    /// claim: the supporting chunks, best first (at most 3); empty when unsupported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub citations: Option<Vec<EvidenceCitation>>,
    /// claim, when unsupported: the chunk that came closest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nearest: Option<EvidenceCitation>,
    /// claim: the search query whose results gave `support` (the claim itself,
    /// or the retry's rewritten query).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// claim: whether the claim was searched again with a rewritten query;
    /// summary: whether the retry ran (coverage was below `min_coverage`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retried: Option<bool>,
    /// claim, when retried: the rewritten query it was searched again with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_query: Option<String>,
    /// summary: the question the answer answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
    /// summary: the number of claims.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claims: Option<usize>,
    /// summary: the number of supported claims.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supported_claims: Option<usize>,
    /// summary: `supported_claims / claims`, after the retry if one ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<f64>,
    /// summary: the coverage threshold (`--min-coverage`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_coverage: Option<f64>,
    /// summary: whether the final coverage is below `min_coverage`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub low_confidence: Option<bool>,
    /// summary: the unsupported claims, in the answer's order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsupported: Option<Vec<String>>,
}

/// A chunk cited as evidence for a claim: where it is, and how well it supports the claim.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, PartialEq)]
pub struct EvidenceCitation {
    pub path: String,
    pub chunk_id: String,
    /// Headings above the part of the chunk that best matches the search
    /// that found it, as a hit's (`kts.hit/1`).
    #[serde(default)]
    pub heading_path: Vec<String>,
    /// Character offsets of the chunk in the document's Markdown.
    pub start: usize,
    pub end: usize,
    /// PDF page of that part, from 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
    /// Slide of that part, from 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slide: Option<u32>,
    /// The support score, from 0 to 1: the weighted mean of `vector` and `lexical`,
    /// scaled by the share of the claim's numbers the chunk contains.
    pub score: f64,
    /// Cosine similarity of the query and the chunk (absent in BM25 mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector: Option<f64>,
    /// Share of the claim's content words found in the chunk, from 0 to 1.
    pub lexical: f64,
}

/// `kts.error/1`: an input a stage could not process. The stream goes on.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, PartialEq)]
#[schemars(
    title = "kts.error/1",
    description = "An input a stage could not process."
)]
pub struct ErrorRecord {
    #[serde(default = "error_schema")]
    #[schemars(extend("const" = "kts.error/1"))]
    #[schemars(required)]
    pub schema: String,
    /// The tool that failed, e.g. `kts-convert`.
    pub stage: String,
    /// The file (relative to the scope root) or input position, e.g. `stdin:12`.
    pub path: String,
    pub code: ErrorCode,
    pub message: String,
    /// The `id` of the `--batch` query that failed, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query_id: Option<String>,
}

impl ErrorRecord {
    pub fn new(stage: &str, path: &str, code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            schema: error_schema(),
            stage: stage.into(),
            path: path.into(),
            code,
            message: message.into(),
            query_id: None,
        }
    }
}

fn scope_schema() -> String {
    schema_id::SCOPE.into()
}

/// `kts.scope/1`: one scope of a knowledge root, as its catalog
/// (`ROOT/.kts-catalog.db`, written by kts-catalog) describes it.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, Default, PartialEq)]
#[schemars(
    title = "kts.scope/1",
    description = "One scope of a knowledge root, as its catalog describes it."
)]
pub struct ScopeRecord {
    #[serde(default = "scope_schema")]
    #[schemars(extend("const" = "kts.scope/1"))]
    #[schemars(required)]
    pub schema: String,
    /// The name the scope is asked for by (`/slug question`): its folder
    /// name's slug, made unique within the root.
    pub slug: String,
    /// The scope folder, relative to the knowledge root.
    pub path: String,
    /// Documents and chunks in the scope's index.
    pub documents: usize,
    #[serde(default)]
    pub chunks: usize,
    /// The documents' types, sorted.
    #[serde(default)]
    pub doc_types: Vec<String>,
    /// Years (1900–2100) named in the documents' titles, paths and dates, sorted.
    #[serde(default)]
    pub years: Vec<i32>,
    /// The entities of the scope's knowledge graph named by the most documents (when it has a graph).
    #[serde(default)]
    pub entities: Vec<String>,
    /// The words the most documents use (from the graph, else from titles and document keywords).
    #[serde(default)]
    pub keywords: Vec<String>,
    /// The embedding model of the index; absent for a keyword-only index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_id: Option<String>,
    /// When the index last changed (its `updated` time, RFC 3339).
    #[serde(default)]
    pub last_indexed: String,
    /// How well the scope matches a catalog search (BM25, higher is better; `--search` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
}
