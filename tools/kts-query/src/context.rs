//! `--context`: an LLM-ready Markdown context within a token budget — what
//! the graph knows about the question's entities, then the cited passages.
//! Over several scopes of a knowledge root, each citation names its scope
//! (`hr: notes.md`): two scopes may hold the same path.

use std::fmt::Write;

use kts_graph::model::NodeKind;
use kts_graph::view::GraphView;
use kts_record::HitRecord;
use petgraph::stable_graph::NodeIndex;

use crate::cite::{cited_text, snippet};
use crate::words::unspaced;

/// Neighbours listed per entity.
const NEIGHBOURS: usize = 5;
/// Source documents listed per entity.
const SOURCES: usize = 3;
/// The share of the budget the graph section may take.
const GRAPH_SHARE: f64 = 0.4;

/// Tokens of a text, estimated as one per four characters (the usual rule
/// for English with BPE tokenizers; no tokenizer is loaded for this), but one
/// per character of Chinese, Japanese, Korean and other scripts whose
/// characters are about a word each.
pub fn tokens(text: &str) -> usize {
    quarter_tokens(text).div_ceil(4)
}

/// Tokens of a text in quarters (see [`tokens`]).
fn quarter_tokens(text: &str) -> usize {
    text.chars().map(|c| if wide(c) { 4 } else { 1 }).sum()
}

/// Whether `c` is of a script whose characters are about a token each.
fn wide(c: char) -> bool {
    (unspaced(c) && !c.is_whitespace()) || matches!(c as u32, 0x1100..=0x11FF | 0xAC00..=0xD7AF)
}

/// How a context cites what it quotes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Citing {
    /// By path: the context comes from one scope.
    Paths,
    /// By scope and path (`hr: notes.md`).
    ScopesAndPaths,
}

/// The context for the graph's `facts` on the `question`'s entities (see
/// [`graph_facts`]) and the `hits`, within `budget` tokens. Without facts,
/// the passages alone.
pub fn markdown(
    question: &str,
    facts: &[String],
    hits: &[HitRecord],
    budget: usize,
    citing: Citing,
) -> String {
    let mut out = String::new();
    let heading = "## Knowledge Graph Context\n\n";
    let limit = (budget as f64 * GRAPH_SHARE) as usize;
    let mut section = String::from(heading);
    for entry in facts {
        if tokens(&section) + tokens(entry) > limit {
            break;
        }
        section.push_str(entry);
    }
    // A heading without a fact under it (none, or none fits) is left out.
    if section.len() > heading.len() {
        section.push('\n');
        out.push_str(&section);
    }
    out.push_str("## Relevant Passages\n\n");
    for (i, hit) in hits.iter().enumerate() {
        let (citation, text) = passage(i + 1, hit, citing);
        let left = budget.saturating_sub(tokens(&out));
        let whole = format!("{citation}\n{text}\n\n");
        if tokens(&whole) <= left {
            out.push_str(&whole);
            continue;
        }
        // The last passage that fits in part: the stretch of it that holds
        // the question's words.
        let room = (left.saturating_mul(4)).saturating_sub(quarter_tokens(&citation) + 8);
        if room > 80 {
            let shown = snippet(&text, question, room, quarter_tokens);
            let _ = writeln!(out, "{citation}\n{shown}");
        }
        break;
    }
    out
}

/// What the graph knows of the question's entities `seeds`, an entry each;
/// from a scope of a knowledge root (`scope`), the entry names it and its
/// paths are cited by scope and path.
pub fn graph_facts(
    view: &dyn GraphView,
    seeds: &[NodeIndex],
    scope: Option<&str>,
) -> anyhow::Result<Vec<String>> {
    seeds
        .iter()
        .map(|&seed| entity_entry(view, seed, scope))
        .collect()
}

/// One entity: kind, mentions, definition or expansion, strongest neighbours, sources.
fn entity_entry(
    view: &dyn GraphView,
    seed: NodeIndex,
    scope: Option<&str>,
) -> anyhow::Result<String> {
    let node = view.node(seed)?;
    let mut entry = format!(
        "- **{}** ({}, {} mention{}{})",
        node.name,
        node.kind.as_str(),
        node.mentions,
        if node.mentions == 1 { "" } else { "s" },
        scope.map(|s| format!(" in {s}")).unwrap_or_default()
    );
    let cite = |path: &str| match scope {
        Some(scope) => format!("{scope}: {path}"),
        None => path.to_string(),
    };
    if let Some(expansion) = &node.expansion {
        let _ = write!(entry, ": stands for {expansion}");
    }
    if let Some((definition, path)) = &node.definition {
        let _ = write!(entry, "\n  - Definition ({}): {definition}", cite(path));
    }
    let mut links = view.links(seed)?;
    links.sort_by(|a, b| b.weight.total_cmp(&a.weight).then(a.other.cmp(&b.other)));
    // Several edges may join two entities (one per document saying so, or
    // of several kinds): each neighbour is listed once, with its kinds.
    let mut neighbours: Vec<(NodeIndex, Vec<&str>)> = Vec::new();
    for link in links
        .iter()
        .filter(|l| matches!(l.kind, NodeKind::Entity(_)))
    {
        if let Some((_, labels)) = neighbours.iter_mut().find(|(node, _)| *node == link.other) {
            if !labels.contains(&link.label) {
                labels.push(link.label);
            }
        } else if neighbours.len() < NEIGHBOURS {
            neighbours.push((link.other, vec![link.label]));
        }
    }
    let neighbours: Vec<String> = neighbours
        .iter()
        .map(|(other, labels)| {
            Ok(format!(
                "{} ({})",
                view.node(*other)?.name,
                labels.join(", ")
            ))
        })
        .collect::<anyhow::Result<_>>()?;
    if !neighbours.is_empty() {
        let _ = write!(entry, "\n  - Related: {}", neighbours.join(", "));
    }
    // A document that both defines and mentions the entity has two edges to it.
    let mut sources: Vec<String> = Vec::new();
    for link in links.iter().filter(|l| l.kind == NodeKind::Document) {
        if sources.len() == SOURCES {
            break;
        }
        if let Some(path) = view.node(link.other)?.path
            && !sources.contains(&path)
        {
            sources.push(path);
        }
    }
    if !sources.is_empty() {
        let sources: Vec<String> = sources.iter().map(|p| cite(p)).collect();
        let _ = write!(entry, "\n  - Sources: {}", sources.join(", "));
    }
    entry.push('\n');
    Ok(entry)
}

/// `[n] path > heading (page p)` (`[n] scope: path > ...` citing scopes),
/// and the chunk's text from the part cited.
fn passage(number: usize, hit: &HitRecord, citing: Citing) -> (String, String) {
    let mut citation = match citing {
        Citing::Paths => hit.path.clone(),
        Citing::ScopesAndPaths => format!("{}: {}", hit.scope, hit.path),
    };
    if !hit.heading_path.is_empty() {
        citation.push_str(" > ");
        citation.push_str(&hit.heading_path.join(" > "));
    }
    if let Some(page) = hit.page {
        let _ = write!(citation, " (page {page})");
    } else if let Some(slide) = hit.slide {
        let _ = write!(citation, " (slide {slide})");
    }
    (
        format!("[{number}] {citation}"),
        cited_text(hit).trim().to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(path: &str, text: &str) -> HitRecord {
        HitRecord {
            schema: "kts.hit/1".into(),
            rank: 1,
            score: 1.0,
            doc_id: "d".into(),
            chunk_id: "c".into(),
            scope: "s".into(),
            path: path.into(),
            title: String::new(),
            doc_type: "GENERAL".into(),
            text: text.into(),
            heading_path: vec!["Errors".into()],
            start: 0,
            end: text.chars().count(),
            cited_start: None,
            page: Some(2),
            slide: None,
            signals: Default::default(),
            confidence: None,
        }
    }

    #[test]
    fn passages_are_cited_and_kept_within_the_budget() {
        let long = "word ".repeat(400);
        let hits = [
            hit("a.pdf", "E-5 means the token expired."),
            hit("b.md", &long),
        ];
        let context = markdown("", &[], &hits, 200, Citing::Paths);
        assert!(
            context.starts_with("## Relevant Passages\n\n[1] a.pdf > Errors (page 2)\nE-5 means")
        );
        assert!(!context.contains("Knowledge Graph"));
        assert!(
            context.contains("[2] b.md"),
            "the second passage starts, cut: {context}"
        );
        assert!(tokens(&context) <= 200, "{} tokens", tokens(&context));
    }

    #[test]
    fn a_graph_fact_too_long_for_the_budget_leaves_no_empty_heading() {
        let fact = format!("- **Proxy**: {}\n", "word ".repeat(400));
        let hits = [hit("a.pdf", "E-5 means the token expired.")];
        let context = markdown("", &[fact], &hits, 200, Citing::Paths);
        assert!(context.starts_with("## Relevant Passages"), "{context}");
    }

    #[test]
    fn passages_from_several_scopes_are_cited_by_scope_and_path() {
        let mut hr = hit("notes.md", "25 days a year.");
        hr.scope = "hr".into();
        let mut it = hit("notes.md", "2 reboots a year.");
        it.scope = "it".into();
        let context = markdown("", &[], &[hr, it], 200, Citing::ScopesAndPaths);
        assert!(
            context.contains("[1] hr: notes.md > Errors (page 2)\n25 days")
                && context.contains("[2] it: notes.md > Errors (page 2)\n2 reboots"),
            "{context}"
        );
    }

    #[test]
    fn a_passage_starts_at_the_part_its_citation_names() {
        let text = "End of page one.\n\n<!-- page: 2 -->\nThe fuse é.\n\n<!-- page: 3 -->\nMore.";
        let mut cited = hit("a.pdf", text);
        cited.start = 10;
        cited.cited_start = Some(10 + "End of page one.\n\n<!-- page: 2 -->\n".chars().count());
        assert_eq!(
            passage(1, &cited, Citing::Paths),
            (
                "[1] a.pdf > Errors (page 2)".to_string(),
                "The fuse é.\n\n(page 3)\nMore.".to_string()
            )
        );
        cited.cited_start = Some(10);
        let (_, text) = passage(1, &cited, Citing::Paths);
        assert!(text.starts_with("End of page one.\n\n(page 2)\nThe fuse"));
    }

    #[test]
    fn a_character_of_chinese_japanese_or_korean_is_a_token() {
        assert_eq!(tokens("Urlaubsantrag"), 4);
        assert_eq!(tokens("年假申请"), 4);
        assert_eq!(tokens("휴가 신청"), 5);
    }

    #[test]
    fn a_passage_without_spaces_is_cut_to_the_budget() {
        let rules: String = (1..40)
            .map(|i| {
                format!(
                    "第{i}条：员工每年享有十五天带薪年假，请假申请需提前两周通过人力资源系统提交。"
                )
            })
            .collect();
        let context = markdown("年假", &[], &[hit("leave.txt", &rules)], 100, Citing::Paths);
        assert!(
            tokens(&context) <= 100,
            "{} tokens: {context}",
            tokens(&context)
        );
        assert!(context.contains("带薪年假"), "{context}");
    }
}
