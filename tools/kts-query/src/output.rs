//! Results as records or as text for humans, and the scope slug.

use std::io::Write;

use kts_record::{HitRecord, PlanRecord};
use serde::Serialize;

use crate::cite::{characters, cited_text, snippet};

/// A hit of a `--batch` query: the hit's fields and the query's id.
#[derive(Serialize)]
pub struct BatchHit<'a> {
    #[serde(flatten)]
    pub hit: &'a HitRecord,
    pub query_id: &'a str,
}

/// `--format text`: rank, confidence (the score of a hit without one),
/// citation (after the scope's slug, with `with_scope`) and a snippet of the cited part of the chunk showing the
/// `question`'s words, for humans.
pub fn write_text(
    out: &mut impl Write,
    hit: &HitRecord,
    question: &str,
    with_scope: bool,
) -> std::io::Result<()> {
    let mut citation = match with_scope {
        true => format!("{}: {}", hit.scope, hit.path),
        false => hit.path.clone(),
    };
    if !hit.heading_path.is_empty() {
        citation.push('#');
        citation.push_str(&hit.heading_path.join(" > "));
    }
    if let Some(page) = hit.page {
        citation.push_str(&format!("  (page {page})"));
    } else if let Some(slide) = hit.slide {
        citation.push_str(&format!("  (slide {slide})"));
    }
    match hit.confidence {
        Some(confidence) => writeln!(out, "{:>2}. {confidence:.2}  {citation}", hit.rank)?,
        None => writeln!(out, "{:>2}. {:.4}  {citation}", hit.rank, hit.score)?,
    }
    writeln!(out, "    {}", hit_snippet(hit, question))
}

/// The snippet [`write_text`] shows of a hit: the cited part of its chunk,
/// around the `question`'s words.
pub fn hit_snippet(hit: &HitRecord, question: &str) -> String {
    snippet(&cited_text(hit), question, 200, characters)
}

/// `--explain --format text`: the plan, for humans.
pub fn write_plan(out: &mut impl Write, plan: &PlanRecord) -> std::io::Result<()> {
    writeln!(
        out,
        "plan for {:?} (steps: {})",
        plan.question,
        plan.steps.join(", ")
    )?;
    for note in &plan.notes {
        writeln!(out, "  {}: {}", note.step, note.detail)?;
    }
    for query in &plan.queries {
        let mut filters = query.doc_types.clone();
        filters.extend(query.entities.iter().cloned());
        writeln!(
            out,
            "  {} query: {:?}{}{}",
            query.role,
            query.search_text,
            if filters.is_empty() {
                String::new()
            } else {
                format!(
                    " filtered to {} ({} documents)",
                    filters.join(", "),
                    query.documents
                )
            },
            if query.fell_back {
                ", with the unfiltered search"
            } else {
                ""
            }
        )?;
    }
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(confidence: Option<f64>) -> String {
        let mut hit: HitRecord = serde_json::from_value(serde_json::json!({"rank": 1,
            "score": 2.7187, "doc_id": "d", "chunk_id": "c", "scope": "docs",
            "path": "codes.xlsx", "heading_path": ["Error codes"], "text": "corrupt: damaged",
            "start": 0, "end": 16}))
        .unwrap();
        hit.confidence = confidence;
        let mut out = Vec::new();
        write_text(&mut out, &hit, "corrupt", true).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn text_shows_the_confidence_people_can_read() {
        assert!(
            text_of(Some(0.7412)).starts_with(" 1. 0.74  docs: codes.xlsx#Error codes\n"),
            "{}",
            text_of(Some(0.7412))
        );
        assert!(text_of(None).starts_with(" 1. 2.7187  docs: codes.xlsx#Error codes\n"));
    }
}
