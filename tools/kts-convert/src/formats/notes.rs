//! Footnotes and endnotes in Markdown: a `[^N]` reference in the text and a
//! `[^N]: text` definition at the end of the section that first cites it
//! (before the next heading of any level), so that a note is chunked, and
//! cited, with the text it belongs to.

use std::collections::{BTreeMap, HashMap};

/// `markdown` with the definition of each note, `(N, text)`, at the end of
/// the section where `[^N]` first appears; notes it never cites go at the
/// end. Its trailing line break, if any, is kept.
pub fn placed(markdown: &str, notes: impl IntoIterator<Item = (usize, String)>) -> String {
    let cited = first_citations(markdown);
    let headings = heading_starts(markdown);
    let mut by_section_end: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for (number, text) in notes {
        let end = cited
            .get(&number)
            .and_then(|&at| headings.iter().copied().find(|&start| start > at))
            .unwrap_or(markdown.len());
        by_section_end
            .entry(end)
            .or_default()
            .push(definition(number, &text));
    }
    if by_section_end.is_empty() {
        return markdown.to_owned();
    }
    let mut out = String::with_capacity(markdown.len());
    let mut from = 0;
    for (end, definitions) in by_section_end {
        let section = markdown[from..end].trim_end();
        out.push_str(section);
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str(&definitions.join("\n\n"));
        out.push_str("\n\n");
        from = end;
    }
    out.push_str(&markdown[from..]);
    let trailing = if markdown.ends_with('\n') { "\n" } else { "" };
    out.trim_end().to_owned() + trailing
}

/// A note's definition; the lines after its first are indented, so that
/// they stay in it.
fn definition(number: usize, text: &str) -> String {
    format!("[^{number}]: {}", text.trim().replace('\n', "\n    "))
}

/// Where each `[^N]` reference first appears.
fn first_citations(markdown: &str) -> HashMap<usize, usize> {
    let mut cited = HashMap::new();
    for (at, _) in markdown.match_indices("[^") {
        let rest = &markdown[at + 2..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if rest[digits..].starts_with(']')
            && let Ok(number) = rest[..digits].parse()
        {
            cited.entry(number).or_insert(at);
        }
    }
    cited
}

/// Where each ATX heading line starts, outside fenced code.
fn heading_starts(markdown: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut fence: Option<&str> = None;
    let mut at = 0;
    for line in markdown.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let marker = ["```", "~~~"]
            .into_iter()
            .find(|marker| trimmed.starts_with(marker));
        match (fence, marker) {
            (None, Some(marker)) => fence = Some(marker),
            (Some(open), Some(marker)) if open == marker => fence = None,
            (None, None) if is_heading(line) => starts.push(at),
            _ => {}
        }
        at += line.len();
    }
    starts
}

fn is_heading(line: &str) -> bool {
    let hashes = line.bytes().take_while(|&b| b == b'#').count();
    (1..=6).contains(&hashes) && line[hashes..].starts_with([' ', '\t', '\n'])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notes(texts: &[&str]) -> Vec<(usize, String)> {
        texts
            .iter()
            .enumerate()
            .map(|(i, text)| (i + 1, text.to_string()))
            .collect()
    }

    #[test]
    fn each_note_ends_the_section_that_first_cites_it() {
        let markdown = "# Travel\n\nPer diem is 45[^2] euros.\n\n## Domestic\n\nNorway: 30[^1].\n\n\
                        Again[^2].\n\n### Trains\n\nSecond class.\n\n# Other\n\nNothing.\n";
        assert_eq!(
            placed(markdown, notes(&["Within 50 km: none.", "Abroad: 60."])),
            "# Travel\n\nPer diem is 45[^2] euros.\n\n[^2]: Abroad: 60.\n\n## Domestic\n\n\
             Norway: 30[^1].\n\nAgain[^2].\n\n[^1]: Within 50 km: none.\n\n### Trains\n\n\
             Second class.\n\n# Other\n\nNothing.\n"
        );
    }

    #[test]
    fn a_note_cited_in_the_last_section_or_not_at_all_goes_at_the_end() {
        let markdown = "Intro.\n\n## End\n\nText[^1].";
        assert_eq!(
            placed(markdown, notes(&["Cited.", "Never cited.\nTwo lines."])),
            "Intro.\n\n## End\n\nText[^1].\n\n[^1]: Cited.\n\n[^2]: Never cited.\n    Two lines."
        );
        assert_eq!(placed("Text.\n", Vec::new()), "Text.\n");
        assert_eq!(placed("", notes(&["Alone."])), "[^1]: Alone.");
    }

    #[test]
    fn headings_in_code_and_longer_labels_do_not_mislead() {
        let markdown =
            "Text[^10].\n\n```\n# not a heading\n```\n\n#hashtag[^1]\n\n## Next\n\nMore.\n";
        let ten: Vec<(usize, String)> = (1..=10).map(|n| (n, format!("Note {n}."))).collect();
        let out = placed(markdown, ten);
        let next = out.find("## Next").unwrap();
        assert!(out.find("[^10]: Note 10.").unwrap() < next, "{out}");
        assert!(out.find("[^1]: Note 1.").unwrap() < next, "{out}");
        assert!(out.find("[^2]: Note 2.").unwrap() > next, "{out}");
    }
}
