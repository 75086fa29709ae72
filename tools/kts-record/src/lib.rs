//! The records kts tools exchange as JSON Lines.
//!
//! Every record carries `"schema": "kts.<kind>/<version>"`. Fields named here
//! are a contract: tools may add fields, but never rename or remove these.
//! A record carrying only the required fields must be accepted downstream.

mod error_code;
mod format;
pub mod function_words;
mod percent;
mod query_records;
mod records;
pub mod scope_path;
pub mod stored_document;

pub use error_code::ErrorCode;
pub use format::{
    Format, Utf16, cell_reference, detect_format, sniff_file_format, text_content_kind,
    utf16_without_bom,
};
pub use percent::percent_decoded;
pub use query_records::{
    LedgerHit, LedgerRecord, PlanNote, PlanRecord, PlannedQuery, ScopeCountRecord,
};
pub use records::{
    ChunkRecord, DocRecord, ErrorRecord, EvidenceCitation, EvidenceKind, EvidenceRecord,
    FileRecord, FileStatus, HitRecord, ImageRef, NodeRecord, QueryEmbeddingRecord, ScopeRecord,
    Signal,
};

/// Schema ids of the current record versions.
pub mod schema_id {
    pub const FILE: &str = "kts.file/1";
    pub const DOC: &str = "kts.doc/1";
    pub const CHUNK: &str = "kts.chunk/1";
    pub const ERROR: &str = "kts.error/1";
    pub const HIT: &str = "kts.hit/1";
    pub const NODE: &str = "kts.node/1";
    pub const PLAN: &str = "kts.plan/1";
    pub const LEDGER: &str = "kts.ledger/1";
    pub const SCOPE_COUNT: &str = "kts.scope_count/1";
    pub const SCOPE: &str = "kts.scope/1";
    pub const EVIDENCE: &str = "kts.evidence/1";
    pub const QUERY_EMBEDDING: &str = "kts.query_embedding/1";
}

/// A record type with a schema id, so generic code can name and check it.
pub trait Record: serde::Serialize + serde::de::DeserializeOwned + schemars::JsonSchema {
    const SCHEMA: &'static str;
    /// The file name of its JSON Schema in `schemas/`.
    fn schema_file_name() -> String {
        format!("{}.schema.json", Self::SCHEMA.replace('/', ".v"))
    }
}

impl Record for FileRecord {
    const SCHEMA: &'static str = schema_id::FILE;
}
impl Record for DocRecord {
    const SCHEMA: &'static str = schema_id::DOC;
}
impl Record for ChunkRecord {
    const SCHEMA: &'static str = schema_id::CHUNK;
}
impl Record for HitRecord {
    const SCHEMA: &'static str = schema_id::HIT;
}
impl Record for PlanRecord {
    const SCHEMA: &'static str = schema_id::PLAN;
}
impl Record for LedgerRecord {
    const SCHEMA: &'static str = schema_id::LEDGER;
}
impl Record for ScopeCountRecord {
    const SCHEMA: &'static str = schema_id::SCOPE_COUNT;
}
impl Record for NodeRecord {
    const SCHEMA: &'static str = schema_id::NODE;
}
impl Record for ScopeRecord {
    const SCHEMA: &'static str = schema_id::SCOPE;
}
impl Record for EvidenceRecord {
    const SCHEMA: &'static str = schema_id::EVIDENCE;
}
impl Record for QueryEmbeddingRecord {
    const SCHEMA: &'static str = schema_id::QUERY_EMBEDDING;
}
impl Record for ErrorRecord {
    const SCHEMA: &'static str = schema_id::ERROR;
}

/// The JSON Schema of a record type, as committed in `schemas/`.
pub fn json_schema<R: Record>() -> serde_json::Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(R)).expect("schema serialises");
    if let Some(object) = schema.as_object_mut() {
        object.insert(
            "$id".into(),
            format!("https://kts.invalid/schemas/{}", R::schema_file_name()).into(),
        );
    }
    schema
}
