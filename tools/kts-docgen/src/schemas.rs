//! `schemas/<kind>.v<version>.schema.json`, from the record types.

use std::path::Path;

use kts_record::{
    ChunkRecord, DocRecord, ErrorRecord, EvidenceRecord, FileRecord, HitRecord, LedgerRecord,
    NodeRecord, PlanRecord, QueryEmbeddingRecord, Record, ScopeCountRecord, ScopeRecord,
    json_schema,
};

use crate::Generated;

pub(crate) fn files() -> Vec<Generated> {
    vec![
        file::<FileRecord>(),
        file::<DocRecord>(),
        file::<ChunkRecord>(),
        file::<QueryEmbeddingRecord>(),
        file::<ErrorRecord>(),
        file::<HitRecord>(),
        file::<NodeRecord>(),
        file::<EvidenceRecord>(),
        file::<PlanRecord>(),
        file::<LedgerRecord>(),
        file::<ScopeCountRecord>(),
        file::<ScopeRecord>(),
    ]
}

fn file<R: Record>() -> Generated {
    let schema = json_schema::<R>();
    let mut contents = serde_json::to_string_pretty(&schema).expect("a JSON value serialises");
    contents.push('\n');
    Generated {
        path: Path::new("schemas").join(R::schema_file_name()),
        contents,
    }
}
