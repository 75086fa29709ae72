//! The provenance ledger: one kts.ledger/1 line per answered query, appended
//! to `DIR/.kts/ledger.jsonl` for audit.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use kts_record::{HitRecord, LedgerHit, LedgerRecord, PlanRecord};

/// `DIR/.kts/ledger.jsonl`.
pub fn ledger_path(scope: &Path) -> PathBuf {
    kts_store::kts_dir(scope).join("ledger.jsonl")
}

/// Appends one record. The line is written with a single append, so
/// concurrent queries never interleave their lines.
pub fn append(
    scope: &Path,
    plan: &PlanRecord,
    hits: &[HitRecord],
    confidence: Option<f64>,
    abstained: bool,
) -> anyhow::Result<()> {
    let now = kts_cli::time::nanos_since_epoch(std::time::SystemTime::now());
    let record = LedgerRecord {
        schema: kts_record::schema_id::LEDGER.into(),
        time: kts_cli::time::rfc3339_from_nanos(now),
        plan: plan.clone(),
        hits: hits
            .iter()
            .map(|h| LedgerHit {
                rank: h.rank,
                path: h.path.clone(),
                chunk_id: h.chunk_id.clone(),
                score: h.score,
                confidence: h.confidence,
            })
            .collect(),
        confidence,
        abstained,
    };
    let mut line = serde_json::to_vec(&record)?;
    line.push(b'\n');
    let path = ledger_path(scope);
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(|| format!("cannot open the ledger {}", path.display()))?;
    file.write_all(&line)
        .with_context(|| format!("cannot append to the ledger {}", path.display()))?;
    Ok(())
}
