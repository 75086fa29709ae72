//! Every committed schema is a valid JSON Schema that accepts the records the
//! Rust types serialise to, and rejects broken ones.

use std::path::Path;

use kts_record::{
    ChunkRecord, DocRecord, ErrorCode, ErrorRecord, EvidenceCitation, EvidenceKind, EvidenceRecord,
    FileRecord, FileStatus, Format, HitRecord, ImageRef, QueryEmbeddingRecord, Record, ScopeRecord,
    Signal,
};
use serde_json::{Map, Value, json};

#[test]
fn file_schema() {
    check(FileRecord {
        schema: FileRecord::SCHEMA.into(),
        path: "policies/leave.docx".into(),
        root: Some("/srv/scopes/hr".into()),
        size: 48_213,
        mtime: "2025-03-14T09:26:53.589793238Z".into(),
        sha256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08".into(),
        format: Format::Docx,
        status: FileStatus::New,
    });
}

#[test]
fn doc_schema() {
    let mut metadata = Map::new();
    metadata.insert("pages".into(), json!(12));
    metadata.insert("keywords".into(), json!(["leave", "holiday"]));
    check(DocRecord {
        schema: DocRecord::SCHEMA.into(),
        doc_id: "3f1a9c0e5b7d2a44".into(),
        path: "policies/leave.docx".into(),
        root: Some("/srv/scopes/hr".into()),
        title: "Annual leave policy".into(),
        doc_type: "POLICY".into(),
        format: Format::Docx,
        markdown: "# Annual leave policy\n\nStaff accrue 2.5 days per month.\n".into(),
        images: vec![ImageRef {
            path: ".kts/documents/3f1a9c0e5b7d2a44/images/ab12.png".into(),
            sha256: "ab12".into(),
            media_type: "image/png".into(),
        }],
        metadata,
        chunks: Some(1),
    });
}

#[test]
fn chunk_schema() {
    check(ChunkRecord {
        schema: ChunkRecord::SCHEMA.into(),
        chunk_id: "5e3a0c1d2a3f4e67".into(),
        doc_id: "3f1a9c0e5b7d2a44".into(),
        path: "policies/leave.docx".into(),
        index: 0,
        text: "Staff accrue 2.5 days per month.".into(),
        heading_path: vec!["Annual leave policy".into()],
        start: 23,
        end: 55,
        page: Some(1),
        slide: None,
        embedding: Some(vec![0.6, 0.8]),
        model: Some("all-minilm-l6-v2-int8".into()),
        model_sha256: Some(
            "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6".into(),
        ),
    });
}

#[test]
fn query_embedding_schema() {
    check(QueryEmbeddingRecord {
        schema: QueryEmbeddingRecord::SCHEMA.into(),
        model: "all-minilm-l6-v2-q8".into(),
        model_sha256: "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6".into(),
        dims: 2,
        text: "how do I reset my password".into(),
        embedding: vec![0.6, 0.8],
    });
}

#[test]
fn hit_schema() {
    let signals = [
        (
            "bm25".to_string(),
            Signal {
                rank: Some(1),
                score: 7.25,
            },
        ),
        (
            "vector".to_string(),
            Signal {
                rank: Some(3),
                score: 0.61,
            },
        ),
    ];
    check(HitRecord {
        schema: HitRecord::SCHEMA.into(),
        rank: 1,
        score: 0.032,
        doc_id: "3f1a9c0e5b7d2a44".into(),
        chunk_id: "5e0b9c1d2a3f4e67".into(),
        scope: "hr".into(),
        path: "policies/leave.docx".into(),
        title: "Annual leave policy".into(),
        doc_type: "POLICY".into(),
        text: "Staff accrue 2.5 days per month.".into(),
        heading_path: vec!["Annual leave policy".into()],
        start: 23,
        end: 55,
        cited_start: Some(23),
        page: Some(1),
        slide: None,
        signals: signals.into_iter().collect(),
        confidence: Some(0.87),
    });
}

#[test]
fn evidence_schema() {
    let citation = EvidenceCitation {
        path: "policies/leave.docx".into(),
        chunk_id: "5e0b9c1d2a3f4e67".into(),
        heading_path: vec!["Annual leave policy".into()],
        start: 23,
        end: 55,
        page: Some(1),
        slide: None,
        score: 0.81,
        vector: Some(0.62),
        lexical: 1.0,
    };
    // One record with every field, so that the check sees them all.
    check(EvidenceRecord {
        schema: EvidenceRecord::SCHEMA.into(),
        kind: EvidenceKind::Claim,
        index: Some(0),
        claim: Some("Staff accrue 2.5 days per month.".into()),
        supported: Some(true),
        support: Some(0.81),
        citations: Some(vec![citation.clone()]),
        nearest: Some(citation),
        query: Some("Staff accrue 2.5 days per month.".into()),
        retried: Some(true),
        retry_query: Some("how much leave accrue staff 2.5 days per month".into()),
        question: Some("how much leave do I get".into()),
        claims: Some(1),
        supported_claims: Some(1),
        coverage: Some(1.0),
        min_coverage: Some(0.5),
        low_confidence: Some(false),
        unsupported: Some(vec![]),
    });
}

#[test]
fn scope_schema() {
    check(ScopeRecord {
        schema: ScopeRecord::SCHEMA.into(),
        slug: "bear_stearns_2006_he1".into(),
        path: "Bear Stearns 2006-HE1".into(),
        documents: 7,
        chunks: 412,
        doc_types: vec!["AGREEMENT".into(), "REPORT".into()],
        years: vec![2006, 2007],
        entities: vec!["EMC Mortgage Corporation".into(), "Wells Fargo Bank".into()],
        keywords: vec!["certificates".into(), "trustee".into()],
        model_id: Some("all-MiniLM-L6-v2".into()),
        last_indexed: "2026-03-02T09:14:05.120Z".into(),
        score: Some(12.5),
    });
}

#[test]
fn error_schema() {
    check(ErrorRecord::new(
        "kts-convert",
        "scans/contract.pdf",
        ErrorCode::Encrypted,
        "the PDF is password-protected",
    ));
}

/// Runs every check on one record type, starting from a full sample.
fn check<R: Record>(sample: R) {
    let schema = committed_schema::<R>();
    if let Err(e) = jsonschema::meta::validate(&schema) {
        panic!("{} is not a valid JSON Schema: {e}", R::schema_file_name());
    }
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let accepts = |record: &Value| validator.is_valid(record);
    let full = serde_json::to_value(&sample).unwrap();
    let name = R::schema_file_name();

    assert_valid(&validator, &full, &name);
    let minimal = only_required(&full, &schema);
    assert_valid(&validator, &minimal, &name);
    serde_json::from_value::<R>(minimal.clone())
        .unwrap_or_else(|e| panic!("{name}: a record with only the required fields: {e}"));

    let mut extended = full.clone();
    extended["added_by_a_later_tool"] = json!(true);
    assert!(
        accepts(&extended),
        "{name} must accept fields it does not name"
    );

    for field in required(&schema) {
        let mut missing = full.clone();
        missing.as_object_mut().unwrap().remove(field);
        assert!(
            !accepts(&missing),
            "{name} accepts a record without {field:?}"
        );
    }
    let mut wrong = full.clone();
    wrong["schema"] = json!("kts.other/9");
    assert!(!accepts(&wrong), "{name} accepts another schema id");
}

fn committed_schema<R: Record>() -> Value {
    let path = Path::new(kts_docgen::WORKSPACE_ROOT)
        .join("schemas")
        .join(R::schema_file_name());
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e}; run `{}`",
            path.display(),
            kts_docgen::REGENERATE
        )
    });
    serde_json::from_str(&text).expect("the schema is JSON")
}

fn required(schema: &Value) -> Vec<&str> {
    let fields = schema["required"]
        .as_array()
        .expect("the schema lists required fields");
    fields.iter().map(|f| f.as_str().unwrap()).collect()
}

fn only_required(record: &Value, schema: &Value) -> Value {
    let required = required(schema);
    let kept = record
        .as_object()
        .unwrap()
        .iter()
        .filter(|(key, _)| required.contains(&key.as_str()))
        .map(|(key, value)| (key.clone(), value.clone()));
    Value::Object(kept.collect())
}

fn assert_valid(validator: &jsonschema::Validator, record: &Value, name: &str) {
    let errors: Vec<String> = validator
        .iter_errors(record)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{name} rejects {record}: {errors:?}");
}
