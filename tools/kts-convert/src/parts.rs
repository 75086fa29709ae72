//! Documents found inside a file (an e-mail's attachments, a mailbox's
//! messages): their paths and records.
//!
//! A part's path is its file's path, `#`, and its anchor:
//! `mail.eml#attachment/report.pdf`, `box.mbox#message/3`. Each part names
//! its file in `metadata.parent`; the file's own document lists the paths of
//! its parts in `metadata.parts`, and those that failed in
//! `metadata.part_errors`. kts-index removes the parts a file no longer
//! lists, and every part with its file.

use kts_record::scope_path;
use kts_record::{DocRecord, ErrorRecord, FileRecord};
use serde_json::{Value, json};

use crate::formats::Part;
use crate::images::Image;
use crate::metadata;

const TOOL: &str = "kts-convert";

/// A part's document and its images, or why it could not be converted.
pub type PartOutcome = Result<(DocRecord, Vec<Image>), Box<ErrorRecord>>;

/// The records of a file's parts, in order; `doc` (the file's own) is
/// updated to list them.
pub fn describe(file: &FileRecord, doc: &mut DocRecord, parts: Vec<Part>) -> Vec<PartOutcome> {
    let outcomes: Vec<PartOutcome> = parts.into_iter().map(|part| one(file, part)).collect();
    let (mut paths, mut errors) = (Vec::new(), Vec::new());
    for outcome in &outcomes {
        match outcome {
            Ok((part, _)) => paths.push(Value::from(part.path.clone())),
            Err(e) => errors.push(json!({"path": e.path, "code": e.code, "message": e.message})),
        }
    }
    if !paths.is_empty() {
        doc.metadata.insert("parts".into(), paths.into());
    }
    if !errors.is_empty() {
        doc.metadata.insert("part_errors".into(), errors.into());
    }
    outcomes
}

fn one(file: &FileRecord, part: Part) -> PartOutcome {
    let path = format!("{}#{}", file.path, part.anchor);
    // Anchors are made of safe names; this keeps it so should one slip through.
    if scope_path::normalize(&path).as_deref() != Ok(path.as_str()) {
        return Err(Box::new(ErrorRecord::new(
            TOOL,
            &path,
            kts_record::ErrorCode::UnsafePath,
            "the part's name does not make a plain path inside the scope",
        )));
    }
    let converted = part
        .converted
        .map_err(|e| Box::new(ErrorRecord::new(TOOL, &path, e.code, e.message)))?;
    let part_file = FileRecord {
        path: path.clone(),
        size: part.size,
        format: converted.format,
        ..file.clone()
    };
    let mut doc = metadata::describe(
        &part_file,
        &scope_path::doc_id(&path),
        converted.format,
        converted.converted,
        &converted.images,
    );
    doc.metadata
        .insert("parent".into(), file.path.clone().into());
    Ok((doc, converted.images))
}

/// The paths a file's own document lists as its parts.
pub fn listed(doc: &DocRecord) -> impl Iterator<Item = &str> {
    doc.metadata
        .get("parts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// The error records of the parts that failed, as the file's document keeps them.
pub fn listed_errors(doc: &DocRecord) -> Vec<ErrorRecord> {
    doc.metadata
        .get("part_errors")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|e| {
            let code = serde_json::from_value(e.get("code")?.clone()).ok()?;
            Some(ErrorRecord::new(
                TOOL,
                e.get("path")?.as_str()?,
                code,
                e.get("message")?.as_str()?,
            ))
        })
        .collect()
}
