//! Headings in a PDF's text. A PDF marks none: they are the lines that carry
//! the titles of the document's outline (its bookmarks), at the outline's
//! depth; without an outline whose titles are found in the text, the short
//! runs of lines set clearly larger than the body text, a level per size.

use std::collections::BTreeMap;
use std::ops::Range;

use super::layout::Line;
use super::outline::Entry;
use super::{expand_ligatures, starts_with_bullet};

/// Text at least this much larger than the body text can be a heading.
const LARGER_THAN_BODY: f64 = 1.1;
/// A heading is a line or two; more lines of large text are a paragraph
/// (a pull quote, a slide's text).
const MAX_HEADING_LINES: usize = 2;
const MAX_HEADING_CHARS: usize = 150;
/// A title and a subtitle, or a chapter's and its first section's heading
/// at one size; more in a row are a list.
const MAX_HEADINGS_IN_A_ROW: usize = 2;
/// Markdown's deepest heading.
const MAX_LEVEL: usize = 6;

/// Sets the heading level of the lines that are headings.
pub fn mark(pages: &mut BTreeMap<u32, Vec<Line>>, outline: &[Entry]) {
    if !mark_outline_titles(pages, outline) {
        mark_large_lines(pages);
    }
}

/// Marks, for each outline entry, the first line (or two lines) on its
/// page whose text is its title; whether any title was found.
fn mark_outline_titles(pages: &mut BTreeMap<u32, Vec<Line>>, outline: &[Entry]) -> bool {
    let mut by_page: BTreeMap<u32, Vec<&Entry>> = BTreeMap::new();
    for entry in outline {
        by_page.entry(entry.page).or_default().push(entry);
    }
    let mut found = false;
    for (number, entries) in by_page {
        let Some(lines) = pages.get_mut(&number) else {
            continue;
        };
        let texts: Vec<String> = lines.iter().map(|line| comparable(&line.text)).collect();
        for entry in entries {
            let title = comparable(&entry.title);
            if let Some(at) = title_lines(lines, &texts, &title) {
                for line in &mut lines[at] {
                    line.heading = Some(entry.depth.min(MAX_LEVEL));
                }
                found = true;
            }
        }
    }
    found
}

/// The first line, or pair of lines, not yet a heading whose text (as
/// `texts` has it) is `title`, or a section number and `title` (outlines
/// often leave the numbers out).
fn title_lines(lines: &[Line], texts: &[String], title: &str) -> Option<Range<usize>> {
    let is_title = |text: &str| {
        !title.is_empty()
            && (text == title || text.trim_start_matches(|c: char| c.is_ascii_digit()) == title)
    };
    let free = |i: usize| lines[i].heading.is_none() && !texts[i].is_empty();
    (0..lines.len()).filter(|&i| free(i)).find_map(|i| {
        if is_title(&texts[i]) {
            return Some(i..i + 1);
        }
        let second = (i + 1 < lines.len() && free(i + 1)).then(|| &texts[i + 1])?;
        is_title(&(texts[i].clone() + second)).then_some(i..i + 2)
    })
}

/// Text as compared with an outline title: letters and digits, lowercase
/// (spacing, punctuation and ligatures vary between the two).
fn comparable(text: &str) -> String {
    expand_ligatures(text)
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Marks short runs of lines of one size clearly larger than the body
/// text's; the largest size is level 1.
fn mark_large_lines(pages: &mut BTreeMap<u32, Vec<Line>>) {
    let Some(body) = body_size(pages.values().flatten()) else {
        return;
    };
    let mut headings = Vec::new();
    for (&number, lines) in pages.iter() {
        for run in heading_runs(lines, body) {
            headings.push((number, lines[run.start].size, run));
        }
    }
    let mut sizes: Vec<f64> = headings.iter().map(|(_, size, _)| *size).collect();
    sizes.sort_by(|a, b| b.total_cmp(a));
    sizes.dedup();
    for (number, size, run) in headings {
        let rank = sizes.iter().position(|&s| s == size).unwrap_or(0);
        let level = (rank + 1).min(MAX_LEVEL);
        for line in &mut pages.get_mut(&number).expect("a page of the headings")[run] {
            line.heading = Some(level);
        }
    }
}

/// The runs of a page's lines that are headings by their size.
fn heading_runs(lines: &[Line], body: f64) -> Vec<Range<usize>> {
    let runs = same_size_runs(lines);
    let size = |run: &Range<usize>| lines[run.start].size;
    let mut headings = Vec::new();
    let mut at = 0;
    while at < runs.len() {
        let in_a_row = runs[at..]
            .iter()
            .take_while(|run| size(run) == size(&runs[at]))
            .count();
        let next = at + in_a_row;
        // A heading leads into text, not into smaller print (large words
        // followed by small ones are a figure's labels); several runs of
        // one size in a row are a list's items.
        let leads_into_text = runs.get(next).is_none_or(|run| size(run) >= body);
        if size(&runs[at]) >= body * LARGER_THAN_BODY
            && in_a_row <= MAX_HEADINGS_IN_A_ROW
            && leads_into_text
        {
            headings.extend(
                runs[at..next]
                    .iter()
                    .filter(|run| looks_like_heading(&lines[(*run).clone()]))
                    .cloned(),
            );
        }
        at = next;
    }
    headings
}

/// The size most of the text is set in (by visible characters).
fn body_size<'a>(lines: impl Iterator<Item = &'a Line>) -> Option<f64> {
    let mut counts: Vec<(f64, usize)> = Vec::new();
    for line in lines.filter(|l| l.size > 0.0) {
        let chars = line.text.chars().filter(|c| !c.is_whitespace()).count();
        match counts.iter_mut().find(|(size, _)| *size == line.size) {
            Some((_, count)) => *count += chars,
            None => counts.push((line.size, chars)),
        }
    }
    counts
        .into_iter()
        .max_by_key(|(_, count)| *count)
        .map(|(size, _)| size)
}

/// Runs of consecutive non-blank lines of the same size.
fn same_size_runs(lines: &[Line]) -> Vec<Range<usize>> {
    let mut runs: Vec<Range<usize>> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.text.trim().is_empty() {
            continue;
        }
        match runs.last_mut() {
            Some(run) if run.end == i && lines[run.start].size == line.size => run.end += 1,
            _ => runs.push(i..i + 1),
        }
    }
    runs
}

/// A line or two of words, not a paragraph, a list item or a number.
fn looks_like_heading(lines: &[Line]) -> bool {
    let chars = || lines.iter().flat_map(|l| l.text.chars());
    lines.len() <= MAX_HEADING_LINES
        && !starts_with_bullet(lines[0].text.trim_start())
        && chars().filter(|c| !c.is_whitespace()).count() <= MAX_HEADING_CHARS
        && chars().filter(|c| c.is_alphabetic()).count() >= 2
}
