//! Records about how kts-query answered: the plan of a query (`--explain`)
//! and the ledger entry kept for audit (`--ledger`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

fn plan_schema() -> String {
    crate::schema_id::PLAN.into()
}

fn scope_count_schema() -> String {
    crate::schema_id::SCOPE_COUNT.into()
}

fn ledger_schema() -> String {
    crate::schema_id::LEDGER.into()
}

/// `kts.plan/1`: what the steps of the query pipeline made of one question.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, Default, PartialEq)]
#[schemars(
    title = "kts.plan/1",
    description = "How kts-query searched for one question: the steps run, what each did, the queries and the ranking weights."
)]
pub struct PlanRecord {
    #[serde(default = "plan_schema")]
    #[schemars(extend("const" = "kts.plan/1"))]
    #[schemars(required)]
    pub schema: String,
    pub question: String,
    /// Slug of the scope searched.
    pub scope: String,
    /// The steps that ran (acronyms, synonyms, filters, decompose, step-back, signals, graph, feedback).
    pub steps: Vec<String>,
    /// The question's intent (troubleshoot, policy, procedure, definition), when its words show one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent: Option<String>,
    /// Error codes the question names.
    #[serde(default)]
    pub error_codes: Vec<String>,
    /// Names of the scope's known entities (from its graph) the question names.
    #[serde(default)]
    pub entities: Vec<String>,
    /// What the question puts in double quotes, and its words joined by dots
    /// and the like (`1.2.3`, `a.b@c.com`), lowercase: chunks that say them
    /// word for word rank higher (the `phrase` signal).
    #[serde(default)]
    pub phrases: Vec<String>,
    /// The queries run, the question's first.
    pub queries: Vec<PlannedQuery>,
    /// What each step did, in order.
    #[serde(default)]
    pub notes: Vec<PlanNote>,
    /// The ranking weights in use, by name.
    #[serde(default)]
    pub weights: BTreeMap<String, f64>,
}

/// One query of a plan.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, Default, PartialEq)]
pub struct PlannedQuery {
    /// `question`, `part` (of a multi-part question) or `step_back`.
    pub role: String,
    /// The words BM25 searched.
    pub search_text: String,
    /// The text embedded for vector search.
    pub embed_text: String,
    /// The document types it was filtered to (none: any).
    #[serde(default)]
    pub doc_types: Vec<String>,
    /// The entities whose documents it was filtered to (none: any).
    #[serde(default)]
    pub entities: Vec<String>,
    /// Documents its filtered search found (counted up to the fallback threshold).
    pub documents: usize,
    /// Whether too few were found, so the unfiltered search joined.
    pub fell_back: bool,
}

/// What one step did.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, Default, PartialEq)]
pub struct PlanNote {
    pub step: String,
    pub detail: String,
}

/// `kts.ledger/1`: one answered query, appended to `DIR/.kts/ledger.jsonl` for audit.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, Default, PartialEq)]
#[schemars(
    title = "kts.ledger/1",
    description = "One query kts-query answered, kept for audit: when, the plan, the hits and their confidence."
)]
pub struct LedgerRecord {
    #[serde(default = "ledger_schema")]
    #[schemars(extend("const" = "kts.ledger/1"))]
    #[schemars(required)]
    pub schema: String,
    /// When the query ran (RFC 3339, UTC).
    pub time: String,
    pub plan: PlanRecord,
    /// The hits returned, best first.
    pub hits: Vec<LedgerHit>,
    /// The answer set's confidence (that its best hit is relevant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// Whether hits were withheld for lack of confidence (`--min-confidence`).
    #[serde(default)]
    pub abstained: bool,
}

/// A hit as the ledger keeps it: enough to find it again.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, Default, PartialEq)]
pub struct LedgerHit {
    pub rank: usize,
    pub path: String,
    pub chunk_id: String,
    pub score: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
}

/// `kts.scope_count/1`: how many documents of one scope of a knowledge root
/// hold every word of a question (`kts-query ROOT --count-by-scope`).
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Debug, Default, PartialEq)]
#[schemars(
    title = "kts.scope_count/1",
    description = "The documents of one scope holding every word of a question."
)]
pub struct ScopeCountRecord {
    #[serde(default = "scope_count_schema")]
    #[schemars(extend("const" = "kts.scope_count/1"))]
    #[schemars(required)]
    pub schema: String,
    /// The scope's slug.
    pub scope: String,
    /// Documents holding every word.
    pub documents: usize,
    /// Their chunks holding every word.
    pub chunks: usize,
    /// The documents' paths, most matching chunks first.
    pub paths: Vec<String>,
}
