//! What a hit cites. A chunk may run over a page break or hold several short
//! sections, and the heading path, page and slide stored with it are those of
//! its start. A hit cites instead the part of its chunk, from one heading or
//! page or slide marker to the next, that holds the most distinct words of
//! the question, each weighed by its rarity in the scope (the earliest of
//! equals); the chunk's start when none holds any.

use std::ops::Range;

use kts_chunk::blocks::{self, Kind};
use kts_record::HitRecord;
use kts_store::{Hit, normalized};

use unicode_segmentation::UnicodeSegmentation;

use crate::words::{ends_unspaced_sentence, searched_words, stems, unspaced};

/// One past the deepest Markdown heading level.
const BELOW_DEEPEST: usize = 7;

/// The place a hit cites.
#[derive(Debug)]
pub struct Citation {
    pub heading_path: Vec<String>,
    pub page: Option<u32>,
    pub slide: Option<u32>,
    /// Character offset of the cited part in the document's Markdown.
    pub start: usize,
}

/// A part of a chunk's text, from a heading or marker to the next one.
#[derive(Clone)]
struct Part {
    /// Bytes of the chunk's text: a heading's line is in its part, a marker
    /// in none. Empty while the part has no block.
    bytes: Range<usize>,
    /// The headings the chunk's text opened above the part, with their
    /// levels, outermost first.
    headings: Vec<(usize, String)>,
    /// Whether a slide marker in the text ended the sections the chunk
    /// started in.
    new_slide: bool,
    page: Option<u32>,
    slide: Option<u32>,
}

impl Part {
    /// The part that starts at `at` with what is in force at the end of this one.
    fn next_at(&self, at: usize) -> Part {
        Part {
            bytes: at..at,
            ..self.clone()
        }
    }

    fn extend(&mut self, block: Range<usize>) {
        match self.bytes.is_empty() {
            true => self.bytes = block,
            false => self.bytes.end = block.end,
        }
    }
}

/// The citation of `hit` for a question of these stemmed `terms`, weighed
/// by their `rarities` (in order; all alike when empty). `level_before(heading, below)` is the level of the nearest heading before
/// the chunk with that text and a level lower than `below` (see
/// [`heading_level`]), asked only when the cited part's headings leave open
/// which of the chunk's own headings enclose them.
pub fn cite(
    hit: &Hit,
    terms: &[&str],
    rarities: &[f64],
    level_before: impl FnMut(&str, usize) -> anyhow::Result<Option<usize>>,
) -> anyhow::Result<Citation> {
    let parts = parts(&hit.text, hit.page, hit.slide);
    let best = best_part(&hit.text, &parts, terms, rarities);
    if best == 0 {
        return Ok(Citation {
            heading_path: hit.heading_path.clone(),
            page: hit.page,
            slide: hit.slide,
            start: hit.start,
        });
    }
    let opening = (parts[0].bytes.start == 0)
        .then(|| parts[0].headings.first())
        .flatten();
    let part = &parts[best];
    Ok(Citation {
        heading_path: heading_path(&hit.heading_path, opening, part, level_before)?,
        page: part.page,
        slide: part.slide,
        start: hit.start + hit.text[..part.bytes.start].chars().count(),
    })
}

/// The chunk's text split at headings and page and slide markers, with what
/// is in force in each part.
fn parts(text: &str, page: Option<u32>, slide: Option<u32>) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut current = Part {
        bytes: 0..0,
        headings: Vec::new(),
        new_slide: false,
        page,
        slide,
    };
    for block in blocks::parse(text) {
        let next = match block.kind {
            Kind::Prose | Kind::Verbatim => {
                current.extend(block.range);
                continue;
            }
            Kind::Page(n) => Part {
                page: Some(n),
                ..current.next_at(block.range.end)
            },
            Kind::Slide(n) => Part {
                slide: Some(n),
                headings: Vec::new(),
                new_slide: true,
                ..current.next_at(block.range.end)
            },
            Kind::Heading { level, text } => {
                let mut next = current.next_at(block.range.start);
                next.headings.retain(|(above, _)| *above < level);
                next.headings.push((level, text));
                next.bytes = block.range;
                next
            }
        };
        let done = std::mem::replace(&mut current, next);
        if !done.bytes.is_empty() {
            parts.push(done);
        }
    }
    if !current.bytes.is_empty() || parts.is_empty() {
        parts.push(current);
    }
    parts
}

/// The part holding the most distinct `terms`, weighed by their `rarities`
/// (a cover page naming the document's subject does not outweigh the page
/// with the question's rarer words), the earliest of equals. A part holds
/// the words of the headings above it that the chunk's text opened: a
/// heading followed by a page marker names what the next page says.
fn best_part(text: &str, parts: &[Part], terms: &[&str], rarities: &[f64]) -> usize {
    if parts.len() < 2 {
        return 0;
    }
    let weighed = rarities.len() == terms.len() && rarities.iter().any(|r| *r > 0.0);
    let weight = |i: usize| if weighed { rarities[i].max(0.0) } else { 1.0 };
    let mut best = (0, 0.0);
    for (i, part) in parts.iter().enumerate() {
        let mut lower = normalized(&text[part.bytes.clone()]).to_lowercase();
        for (_, heading) in &part.headings {
            lower.push('\n');
            lower.push_str(&normalized(heading).to_lowercase());
        }
        let words: Vec<&str> = stems(&lower).collect();
        let found: f64 = (0..terms.len())
            .filter(|&t| words.contains(&terms[t]))
            .map(weight)
            .sum();
        if found > best.1 {
            best = (i, found);
        }
    }
    best.0
}

/// The heading path of `part`: the chunk's own heading path, cut where the
/// headings the chunk's text opened take over. `opening` is the heading the
/// text starts with, which is the last of the chunk's own.
fn heading_path(
    own: &[String],
    opening: Option<&(usize, String)>,
    part: &Part,
    mut level_before: impl FnMut(&str, usize) -> anyhow::Result<Option<usize>>,
) -> anyhow::Result<Vec<String>> {
    let opened = part.headings.iter().map(|(_, text)| text.clone());
    if part.new_slide {
        return Ok(opened.collect());
    }
    let Some(&(level, _)) = part.headings.first() else {
        return Ok(own.to_vec());
    };
    // A table's header row, ending the path of a chunk that starts in a
    // table, is over once a heading follows.
    let mut above = match own.last() {
        Some(last) if last.starts_with('|') => &own[..own.len() - 1],
        _ => own,
    };
    let mut ceiling = (BELOW_DEEPEST, above.len());
    if let Some((opening_level, opening_text)) = opening
        && above.last() == Some(opening_text)
    {
        above = &above[..above.len() - 1];
        ceiling = (*opening_level, above.len());
    }
    let kept = enclosing(above.len(), level, ceiling, |i, below| {
        level_before(&above[i], below)
    })?;
    Ok(above[..kept].iter().cloned().chain(opened).collect())
}

/// How many of `count` headings, outermost first, enclose a heading of
/// `level`: those of a lower level. Their levels are not stored, but they
/// rise by one at least from 1, and `ceiling` (a level and an index) says
/// that the headings before that index are of lower levels than that one;
/// `level_of(i, below)` finds the level of the `i`th, lower than `below`,
/// when that leaves it open (`None`: taken to be its lowest possible level,
/// `i + 1`).
fn enclosing(
    count: usize,
    level: usize,
    mut ceiling: (usize, usize),
    mut level_of: impl FnMut(usize, usize) -> anyhow::Result<Option<usize>>,
) -> anyhow::Result<usize> {
    if level <= 1 {
        return Ok(0);
    }
    for i in (0..count).rev() {
        let (ceiling_level, ceiling_at) = ceiling;
        if ceiling_level.saturating_sub(ceiling_at - i) < level {
            return Ok(i + 1);
        }
        // This heading and the one before it are of `level` or deeper:
        // knowing this one's level would tell nothing.
        if i >= level {
            continue;
        }
        let found = level_of(i, ceiling_level)?.unwrap_or(i + 1);
        if found < level {
            return Ok(i + 1);
        }
        ceiling = (found, i);
    }
    Ok(0)
}

/// The level of the last heading in `text`, a chunk starting at character
/// `start`, that has the text `heading`, a level lower than `below` and
/// starts before character `before`.
pub fn heading_level(
    text: &str,
    start: usize,
    before: usize,
    heading: &str,
    below: usize,
) -> Option<usize> {
    blocks::parse(text)
        .into_iter()
        .rev()
        .find_map(|block| match block.kind {
            Kind::Heading { level, text: found }
                if found == heading
                    && level < below
                    && start + text[..block.range.start].chars().count() < before =>
            {
                Some(level)
            }
            _ => None,
        })
}

/// The hit's text from the part it cites to its end, with page and slide
/// markers written as `(page N)` and `(slide N)`.
pub fn cited_text(hit: &HitRecord) -> String {
    let skip = hit.cited_start.map_or(0, |at| at.saturating_sub(hit.start));
    let from = (hit.text.char_indices().nth(skip)).map_or(hit.text.len(), |(at, _)| at);
    let text = &hit.text[from..];
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for block in blocks::parse(text) {
        let shown = match block.kind {
            Kind::Page(n) => format!("(page {n})"),
            Kind::Slide(n) => format!("(slide {n})"),
            _ => continue,
        };
        out.push_str(&text[copied..block.range.start]);
        out.push_str(&shown);
        copied = block.range.end;
    }
    out.push_str(&text[copied..]);
    out
}

/// `text` on one line, at most about `max` in `size` (characters, or
/// quarters of tokens): where it must be cut, the stretch of whole
/// [`pieces`] that holds most of the `question`'s words, each counted by how
/// rare it is in the text (a word said once outweighs one said throughout),
/// with `…` where text is left out.
pub fn snippet(text: &str, question: &str, max: usize, size: fn(&str) -> usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if size(&flat) <= max {
        return flat;
    }
    let pieces = pieces(&flat, max, size);
    let asked = searched_words(question);
    let found = found_in_pieces(&flat, &pieces, &asked);
    let mut said = vec![0usize; asked.len()];
    found.iter().flatten().for_each(|&i| said[i] += 1);
    let weight = |i: usize| 1.0 / said[i] as f64;

    // The window of whole pieces starting at each piece, and its worth.
    let gap = |i: usize| match i {
        0 => 0,
        _ => size(&flat[pieces[i - 1].end..pieces[i].start]),
    };
    let mut windows: Vec<(usize, usize, f64)> = Vec::new();
    for first in 0..pieces.len() {
        let (mut end, mut taken) = (first, 0);
        while end < pieces.len() {
            let space = if end > first { gap(end) } else { 0 };
            let more = space + size(&flat[pieces[end].clone()]);
            if taken + more > max {
                break;
            }
            taken += more;
            end += 1;
        }
        let mut held: Vec<usize> = found[first..end].iter().flatten().copied().collect();
        held.sort_unstable();
        held.dedup();
        windows.push((
            first,
            end.max(first + 1),
            held.into_iter().map(weight).sum(),
        ));
        if end == pieces.len() {
            break;
        }
    }
    let best = windows.iter().map(|w| w.2).fold(0.0, f64::max);
    // Of the equal best windows following the first, the middle one: the
    // words found sit inside the snippet rather than at its edge.
    let tied = windows.iter().position(|w| w.2 == best).unwrap_or(0);
    let run = windows[tied..].iter().take_while(|w| w.2 == best).count();
    let (first, end, _) = windows[if best > 0.0 { tied + run / 2 } else { 0 }];
    let shown = pieces[first].start..pieces[end - 1].end;
    format!(
        "{}{}{}",
        if first > 0 {
            ellipsis_before(gap(first))
        } else {
            ""
        },
        &flat[shown],
        if end < pieces.len() {
            ellipsis_after(gap(end))
        } else {
            ""
        }
    )
}

/// The `…` before a snippet cut where a space was (`gap` > 0) or not.
fn ellipsis_before(gap: usize) -> &'static str {
    if gap > 0 { "… " } else { "…" }
}

fn ellipsis_after(gap: usize) -> &'static str {
    if gap > 0 { " …" } else { "…" }
}

/// The size of a text in characters, as a snippet may measure it.
pub fn characters(text: &str) -> usize {
    text.chars().count()
}

/// The pieces a snippet is made of, as bytes of `flat` (text whose words are
/// one space apart): its words, but a word holding text written without
/// spaces or larger than `max` cut after each sentence, a sentence larger
/// than `max` cut after other punctuation, and a part still larger into
/// characters.
fn pieces(flat: &str, max: usize, size: fn(&str) -> usize) -> Vec<Range<usize>> {
    let mut pieces = Vec::new();
    let mut at = 0;
    for word in flat.split(' ') {
        let whole = at..at + word.len();
        at = whole.end + 1;
        if size(word) <= max && !word.chars().any(unspaced) {
            pieces.push(whole);
            continue;
        }
        for sentence in cut_after(flat, whole, is_sentence_end) {
            if size(&flat[sentence.clone()]) <= max {
                pieces.push(sentence);
                continue;
            }
            for clause in cut_after(flat, sentence, is_clause_end) {
                if size(&flat[clause.clone()]) <= max {
                    pieces.push(clause);
                    continue;
                }
                let start = clause.start;
                let characters = flat[clause].grapheme_indices(true);
                pieces.extend(characters.map(|(i, g)| start + i..start + i + g.len()));
            }
        }
    }
    pieces
}

fn is_sentence_end(c: char) -> bool {
    ends_unspaced_sentence(c) || matches!(c, '.' | '!' | '?')
}

fn is_clause_end(c: char) -> bool {
    matches!(
        c,
        '，' | '、' | '；' | '：' | '）' | '」' | '』' | '】' | '》' | ',' | ';' | ':' | ')' | '/'
    )
}

/// `range` of `text` cut after each character for which `ends` holds; the
/// closing brackets and quotes following one stay with it.
fn cut_after(text: &str, range: Range<usize>, ends: fn(char) -> bool) -> Vec<Range<usize>> {
    let mut cuts = Vec::new();
    let mut start = range.start;
    let mut ended = false;
    for (i, c) in text[range.clone()].char_indices() {
        let at = range.start + i;
        let closing = matches!(c, '」' | '』' | '）' | '”' | '’' | '"' | ')' | '】' | '》');
        if ended && !closing && !ends(c) {
            cuts.push(start..at);
            start = at;
        }
        ended = ends(c) || (ended && closing);
    }
    cuts.push(start..range.end);
    cuts
}

/// For each piece of `flat`, the indices of the `asked` words it holds: a
/// word of text written without spaces wherever it occurs (by its start),
/// another as a whole word of the piece, normalised and stemmed as the
/// question's words are (`Florø` is `floro` in both).
fn found_in_pieces(flat: &str, pieces: &[Range<usize>], asked: &[String]) -> Vec<Vec<usize>> {
    let mut found: Vec<Vec<usize>> = pieces
        .iter()
        .map(|piece| {
            let lower = normalized(&flat[piece.clone()]).to_lowercase();
            stems(&lower)
                .filter_map(|w| asked.iter().position(|a| a == w))
                .collect()
        })
        .collect();
    for (i, word) in asked.iter().enumerate() {
        if !word.chars().all(unspaced) {
            continue;
        }
        for (at, _) in flat.match_indices(word.as_str()) {
            let piece = pieces.partition_point(|p| p.end <= at);
            found[piece].push(i);
        }
    }
    for words in &mut found {
        words.sort_unstable();
        words.dedup();
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(text: &str, heading_path: &[&str], page: Option<u32>) -> Hit {
        Hit {
            rowid: 1,
            chunk_id: "c".into(),
            doc_id: "d".into(),
            path: "a.md".into(),
            title: String::new(),
            doc_type: "GENERAL".into(),
            text: text.into(),
            heading_path: heading_path.iter().map(|h| h.to_string()).collect(),
            start: 100,
            end: 100 + text.chars().count(),
            page,
            slide: None,
        }
    }

    /// The citation for a question's words, with the levels of the headings
    /// before the chunk from `levels` (a lookup that must not be needed
    /// fails the test).
    fn cited(hit: &Hit, question: &str, levels: &[(&str, usize)]) -> Citation {
        let terms: Vec<String> = kts_store::query_terms(question);
        let terms: Vec<&str> = terms.iter().map(|t| crate::words::stem(t)).collect();
        cite(hit, &terms, &[], |heading, _| {
            Ok(Some(
                levels
                    .iter()
                    .find(|(text, _)| *text == heading)
                    .unwrap_or_else(|| panic!("the level of {heading} was asked"))
                    .1,
            ))
        })
        .unwrap()
    }

    #[test]
    fn the_page_cited_is_the_one_that_says_it() {
        let text =
            "Keep this manual é.\n\n<!-- page: 4 -->\n\n## Troubleshooting\n\nCheck the fuse.";
        let hit = hit(text, &["Manual"], Some(3));
        let fuse = cited(&hit, "where is the fuse?", &[("Manual", 1)]);
        assert_eq!(fuse.page, Some(4));
        assert_eq!(fuse.heading_path, ["Manual", "Troubleshooting"]);
        assert_eq!(
            fuse.start,
            100 + "Keep this manual é.\n\n<!-- page: 4 -->\n\n"
                .chars()
                .count()
        );
        let manual = cited(&hit, "keep the manual", &[]);
        assert_eq!((manual.page, manual.start), (Some(3), 100));
        let nothing = cited(&hit, "unrelated words", &[]);
        assert_eq!(
            (nothing.page, nothing.heading_path),
            (Some(3), vec!["Manual".to_string()])
        );
    }

    #[test]
    fn the_page_with_the_rarer_words_of_the_question_is_cited() {
        let text = "SERVICE AGREEMENT between Halvorsen Marine and Kystvakt Service.\n\n\
                    <!-- page: 2 -->\n\nThe termination notice period is 120 days.";
        let hit = hit(text, &[], Some(1));
        let question = "how much notice to terminate the service agreement";
        assert_eq!(
            cited(&hit, question, &[]).page,
            Some(1),
            "equals: the earliest"
        );
        let terms: Vec<String> = kts_store::query_terms(question);
        let rarities: Vec<f64> = terms
            .iter()
            .map(|t| match t.as_str() {
                "service" | "agreement" => 0.3,
                _ => 2.0,
            })
            .collect();
        let terms: Vec<&str> = terms.iter().map(|t| crate::words::stem(t)).collect();
        let weighed = cite(&hit, &terms, &rarities, |_, _| Ok(None)).unwrap();
        assert_eq!(weighed.page, Some(2));
    }

    #[test]
    fn a_snippet_finds_the_questions_words_written_with_diacritics() {
        let mail = "# Crew change Tindholm - helicopter slot\n\n\
            - **From:** Ingrid Solberg <ingrid@halvorsen.example>\n\
            - **To:** Crew Tindholm <crew-tindholm@halvorsen.example>\n\
            - **Cc:** Lars Nygaard <lars@halvorsen.example>\n\
            - **Date:** 2025-06-12T08:15:00Z\n\nHi all,\n\n\
            The crew change helicopter from Florø departs at 07:40 on 19 June. \
            Check in at the heliport 60 minutes before.\n";
        let shown = snippet(
            mail,
            "what time does the crew change helicopter leave Florø",
            200,
            characters,
        );
        assert!(shown.contains("Florø departs at 07:40"), "{shown}");
    }

    #[test]
    fn a_heading_at_the_foot_of_a_page_counts_for_the_next_page() {
        let text = "## Troubleshooting\n\n<!-- page: 4 -->\n\nIf the display stays blank.";
        let hit = hit(text, &["Manual", "Troubleshooting"], Some(3));
        let cited = cited(&hit, "troubleshooting a blank display", &[]);
        assert_eq!(
            (cited.page, cited.heading_path),
            (
                Some(4),
                vec!["Manual".to_string(), "Troubleshooting".to_string()]
            )
        );
    }

    #[test]
    fn a_later_section_is_cited_by_its_own_heading() {
        let text = "## HTTP 429 Too Many Requests\n\nRate limiting.\n\n## HTTP 503 Service Unavailable\n\nPool exhausted.";
        let hit = hit(
            text,
            &["HTTP status codes", "HTTP 429 Too Many Requests"],
            None,
        );
        // The text opens with the path's last heading: its level is known.
        let path = cited(&hit, "503 service unavailable", &[]).heading_path;
        assert_eq!(path, ["HTTP status codes", "HTTP 503 Service Unavailable"]);
        let path = cited(&hit, "rate limiting", &[]).heading_path;
        assert_eq!(path, ["HTTP status codes", "HTTP 429 Too Many Requests"]);
    }

    #[test]
    fn headings_before_the_chunk_enclose_by_their_levels() {
        let text = "the end of a section.\n\n## Next\n\nThe answer.";
        let siblings = hit(text, &["Section"], None);
        assert_eq!(
            cited(&siblings, "answer", &[("Section", 2)]).heading_path,
            ["Next"]
        );
        let nested = hit(text, &["Title", "Section"], None);
        let path = cited(&nested, "answer", &[("Section", 2)]).heading_path;
        assert_eq!(path, ["Title", "Next"], "Title can only be of level 1");
        let table = hit(text, &["Section", "| a | b |"], None);
        assert_eq!(
            cited(&table, "answer", &[("Section", 1)]).heading_path,
            ["Section", "Next"]
        );
    }

    #[test]
    fn a_slide_marker_ends_the_sections_before_it() {
        let text = "Last words of slide one.\n\n<!-- slide: 2 -->\n\n## Pricing\n\nTen euros.";
        let mut slides = hit(text, &["Intro"], None);
        slides.slide = Some(1);
        let cited = cited(&slides, "ten euros", &[]);
        assert_eq!(
            (cited.slide, cited.heading_path),
            (Some(2), vec!["Pricing".to_string()])
        );
    }

    #[test]
    fn snippets_are_one_line_and_short() {
        assert_eq!(snippet("a\n\nb  c", "", 10, characters), "a b c");
        assert_eq!(
            snippet("one two three four", "", 9, characters),
            "one two …"
        );
    }

    #[test]
    fn a_snippet_cut_short_shows_the_rarest_words_of_the_question() {
        let filler = "The write path stores each record and its timestamp. ".repeat(12);
        let text = format!("{filler}The flux capacitor threshold is 1.21 gigawatts. {filler}");
        let shown = snippet(
            &text,
            "flux capacitor threshold of the write path",
            120,
            characters,
        );
        assert!(
            shown.contains("flux capacitor threshold is 1.21"),
            "{shown}"
        );
        assert!(shown.starts_with("… ") && shown.ends_with(" …"), "{shown}");
        assert!(shown.chars().count() <= 124, "{shown}");
        // Without a word of the question in it, the text's start.
        let shown = snippet(&text, "nothing here", 120, characters);
        assert!(
            shown.starts_with("The write path") && shown.ends_with(" …"),
            "{shown}"
        );
    }

    #[test]
    fn text_without_spaces_is_cut_to_size_after_its_sentences() {
        let rule = |i: usize| {
            format!("第{i}条：员工每年享有十五天带薪年假，请假申请需提前两周通过人力资源系统提交。")
        };
        let rules: String = (1..40).map(rule).collect();
        let shown = snippet(&format!("年假\n\n{rules}"), "年假", 200, characters);
        assert!((100..=202).contains(&shown.chars().count()), "{shown}");
        assert!(shown.contains("年假") && shown.ends_with("。…"), "{shown}");

        let parking = format!("{rules}停车场位于地下二层，请从东门进入。{rules}");
        let shown = snippet(&parking, "停车场在哪里？", 200, characters);
        assert!(shown.contains("停车场位于地下二层"), "{shown}");
        assert!(
            shown.starts_with("…第") && shown.ends_with("。…"),
            "{shown}"
        );
    }

    #[test]
    fn text_without_spaces_or_punctuation_is_cut_by_characters() {
        let minutes = "東京本社会議室にて定例会議を開催し各部門の進捗を確認した".repeat(30);
        let text = format!("{minutes}予算案を承認した{minutes}");
        let shown = snippet(&text, "予算案", 200, characters);
        assert!(shown.chars().count() <= 202, "{shown}");
        assert!(shown.contains("予算案を承認した"), "{shown}");
    }
}
