//! The recursive splitter: Markdown blocks, then sentences, then words, then
//! characters, packed greedily into chunks of at most `size` characters.

use std::collections::HashMap;
use std::ops::Range;

use sha2::{Digest, Sha256};
use unicode_segmentation::UnicodeSegmentation;

use crate::blocks::{self, Kind};

/// Sizes in characters (Unicode scalar values).
#[derive(Clone, Debug)]
pub struct ChunkSettings {
    pub size: usize,
    pub overlap: usize,
    pub min_size: usize,
}

impl Default for ChunkSettings {
    fn default() -> Self {
        Self {
            size: 1000,
            overlap: 200,
            min_size: 100,
        }
    }
}

/// A chunk of a document's Markdown.
#[derive(Clone, Debug, PartialEq)]
pub struct Chunk {
    pub text: String,
    /// Character offsets into the Markdown: `text` is `markdown[start..end]`.
    pub start: usize,
    pub end: usize,
    pub heading_path: Vec<String>,
    pub page: Option<u32>,
    pub slide: Option<u32>,
    /// How many earlier chunks of the document have the same text.
    occurrence: usize,
}

impl Chunk {
    /// Stable id: the same text in the same document (the n-th time it occurs) keeps its id.
    pub fn id(&self, doc_id: &str) -> String {
        let mut hasher = Sha256::new();
        hasher.update(doc_id.as_bytes());
        hasher.update([0]);
        hasher.update(self.text.as_bytes());
        hasher.update([0]);
        hasher.update(self.occurrence.to_le_bytes());
        hasher.finalize()[..8]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

/// The smallest piece the packer moves: a block, or part of one too large to keep whole.
struct Unit {
    bytes: Range<usize>,
    /// Starts a sentence, line or block: a chunk may begin here.
    clean_start: bool,
    heading: bool,
    /// Index into the contexts (heading path, page, slide) in force at the unit.
    context: usize,
}

#[derive(Clone, Default)]
struct Context {
    heading_path: Vec<String>,
    page: Option<u32>,
    slide: Option<u32>,
}

/// Character offsets of byte positions, so sizes count characters, not bytes.
/// ASCII text needs no table; other text keeps the count at every
/// [`CHAR_BLOCK`]th byte and counts the rest of the way (a table entry per
/// byte would take four times the document's size).
struct CharIndex<'a> {
    text: &'a [u8],
    /// Characters before byte `k * CHAR_BLOCK`, unless the text is ASCII.
    blocks: Option<Vec<u32>>,
}

const CHAR_BLOCK: usize = 64;

impl<'a> CharIndex<'a> {
    fn new(text: &'a str) -> Self {
        let bytes = text.as_bytes();
        let blocks = (!text.is_ascii()).then(|| {
            let mut count = 0u32;
            let mut blocks = Vec::with_capacity(bytes.len() / CHAR_BLOCK + 2);
            for block in bytes.chunks(CHAR_BLOCK) {
                blocks.push(count);
                count += char_starts(block);
            }
            // The end of a text whose length is a multiple of the block.
            blocks.push(count);
            blocks
        });
        Self {
            text: bytes,
            blocks,
        }
    }

    fn at(&self, byte: usize) -> usize {
        match &self.blocks {
            None => byte,
            Some(blocks) => {
                let block = byte / CHAR_BLOCK;
                (blocks[block] + char_starts(&self.text[block * CHAR_BLOCK..byte])) as usize
            }
        }
    }

    fn len(&self, bytes: &Range<usize>) -> usize {
        self.at(bytes.end) - self.at(bytes.start)
    }
}

/// The characters that start in these bytes (those that are not UTF-8
/// continuation bytes).
fn char_starts(bytes: &[u8]) -> u32 {
    bytes.iter().filter(|&&b| b & 0xC0 != 0x80).count() as u32
}

/// Splits a document's Markdown into chunks.
pub fn split(markdown: &str, settings: &ChunkSettings) -> Vec<Chunk> {
    let chars = CharIndex::new(markdown);
    let (units, contexts) = units(markdown, &chars, settings.size);
    let groups = pack(&units, &chars, settings);
    let mut seen: HashMap<&str, usize> = HashMap::new();
    groups
        .into_iter()
        .map(|(first, last)| {
            let bytes = units[first].bytes.start..units[last].bytes.end;
            let text = &markdown[bytes.clone()];
            let occurrence = seen.entry(text).or_default();
            let context = &contexts[units[first].context];
            let chunk = Chunk {
                text: text.to_string(),
                start: chars.at(bytes.start),
                end: chars.at(bytes.end),
                heading_path: context.heading_path.clone(),
                page: context.page,
                slide: context.slide,
                occurrence: *occurrence,
            };
            *occurrence += 1;
            chunk
        })
        .collect()
}

/// Turns blocks into units no longer than `size`, tracking headings and markers.
///
/// A table too long for one chunk is cut into rows; the rows below its header
/// get a context whose heading path ends with the header row, so that every
/// chunk of the table says what its columns mean while its text stays an
/// exact slice of the Markdown.
fn units(markdown: &str, chars: &CharIndex<'_>, size: usize) -> (Vec<Unit>, Vec<Context>) {
    let mut units = Vec::new();
    let mut contexts = vec![Context::default()];
    let mut current = 0;
    let mut headings: Vec<(usize, String)> = Vec::new();
    for block in blocks::parse(markdown) {
        let mut context = contexts[current].clone();
        match &block.kind {
            Kind::Page(n) => context.page = Some(*n),
            Kind::Slide(n) => {
                // A slide's headings are its own: an untitled slide is not
                // part of the previous slide's section.
                context.slide = Some(*n);
                headings.clear();
                context.heading_path.clear();
            }
            Kind::Heading { level, text } => {
                headings.retain(|(l, _)| l < level);
                headings.push((*level, text.clone()));
                context.heading_path = headings.iter().map(|(_, t)| t.clone()).collect();
            }
            Kind::Prose | Kind::Verbatim => {}
        }
        if matches!(
            block.kind,
            Kind::Page(_) | Kind::Slide(_) | Kind::Heading { .. }
        ) {
            contexts.push(context);
            current = contexts.len() - 1;
        }
        if matches!(block.kind, Kind::Page(_) | Kind::Slide(_)) {
            continue;
        }
        let heading = matches!(block.kind, Kind::Heading { .. });
        let mut pieces = Vec::new();
        let level = if block.kind == Kind::Verbatim {
            Level::Lines
        } else {
            Level::Sentences
        };
        cut(
            markdown,
            block.range.clone(),
            level,
            chars,
            size,
            true,
            &mut pieces,
        );
        let table_rows = match blocks::table_header(markdown, &block.range) {
            Some(header) if pieces.len() > 1 => {
                let mut rows = contexts[current].clone();
                rows.heading_path.push(markdown[header.clone()].to_string());
                contexts.push(rows);
                Some((header.end, contexts.len() - 1))
            }
            _ => None,
        };
        units.extend(pieces.into_iter().map(|(bytes, clean_start)| {
            let context = match table_rows {
                Some((header_end, rows)) if bytes.start > header_end => rows,
                _ => current,
            };
            Unit {
                bytes,
                clean_start,
                heading,
                context,
            }
        }));
    }
    (units, contexts)
}

#[derive(Clone, Copy)]
enum Level {
    Lines,
    Sentences,
    Words,
    Characters,
}

/// Cuts a range into pieces of at most `size` characters at the coarsest level
/// that works: the whole range, else its lines or sentences, else words, else characters.
fn cut(
    text: &str,
    range: Range<usize>,
    level: Level,
    chars: &CharIndex<'_>,
    size: usize,
    clean_start: bool,
    pieces: &mut Vec<(Range<usize>, bool)>,
) {
    if chars.len(&range) <= size {
        pieces.push((range, clean_start));
        return;
    }
    let slice = &text[range.clone()];
    let (parts, finer, parts_are_clean): (Vec<usize>, Level, bool) = match level {
        Level::Lines => (
            slice.match_indices('\n').map(|(i, _)| i + 1).collect(),
            Level::Words,
            true,
        ),
        Level::Sentences => (
            slice
                .split_sentence_bound_indices()
                .map(|(i, _)| i)
                .collect(),
            Level::Words,
            true,
        ),
        Level::Words => {
            cut_at_words(text, range, chars, size, clean_start, pieces);
            return;
        }
        Level::Characters => {
            let mut start = range.start;
            for (i, _) in slice.char_indices().skip(size).step_by(size) {
                pieces.push((start..range.start + i, clean_start && start == range.start));
                start = range.start + i;
            }
            pieces.push((start..range.end, clean_start && start == range.start));
            return;
        }
    };
    let mut bounds: Vec<usize> = parts
        .into_iter()
        .filter(|&i| i > 0 && i < slice.len())
        .collect();
    bounds.insert(0, 0);
    bounds.push(slice.len());
    // Each part becomes its own unit (the packer joins them again); parts still too long are cut finer.
    for pair in bounds.windows(2) {
        let piece = trim(text, range.start + pair[0]..range.start + pair[1]);
        if !piece.is_empty() {
            let clean = if pair[0] == 0 {
                clean_start
            } else {
                parts_are_clean
            };
            cut(text, piece, finer, chars, size, clean, pieces);
        }
    }
}

/// Cuts a range without sentence or line ends into pieces of whole words of
/// about `size / 16` characters: chunks still end within a few words of
/// their limit, and a long run of such text (minified or one-line data) does
/// not become a unit per word. A word longer than `size` is cut by characters.
fn cut_at_words(
    text: &str,
    range: Range<usize>,
    chars: &CharIndex<'_>,
    size: usize,
    clean_start: bool,
    pieces: &mut Vec<(Range<usize>, bool)>,
) {
    let grain = (size / 16).max(1);
    let mut piece = range.start..range.start;
    let emit = |piece: Range<usize>, pieces: &mut Vec<(Range<usize>, bool)>| {
        let piece = trim(text, piece);
        if !piece.is_empty() {
            let clean = clean_start && piece.start == range.start;
            cut(text, piece, Level::Characters, chars, size, clean, pieces);
        }
    };
    for (i, word) in text[range.clone()].split_word_bound_indices() {
        let (start, end) = (range.start + i, range.start + i + word.len());
        if piece.end > piece.start && chars.len(&(piece.start..end)) > grain {
            emit(piece.clone(), pieces);
            piece = start..start;
        }
        piece.end = end;
    }
    emit(piece, pieces);
}

fn trim(text: &str, range: Range<usize>) -> Range<usize> {
    let slice = &text[range.clone()];
    let start = range.start + (slice.len() - slice.trim_start().len());
    let end = range.end - (slice.len() - slice.trim_end().len());
    start..end.max(start)
}

/// Groups consecutive units into chunks: (first unit, last unit) per chunk.
fn pack(units: &[Unit], chars: &CharIndex<'_>, settings: &ChunkSettings) -> Vec<(usize, usize)> {
    let span =
        |first: usize, last: usize| chars.len(&(units[first].bytes.start..units[last].bytes.end));
    let mut groups: Vec<(usize, usize)> = Vec::new();
    let mut current: Option<(usize, usize)> = None;
    for (i, unit) in units.iter().enumerate() {
        let Some((first, last)) = current else {
            current = Some((i, i));
            continue;
        };
        let only_headings = units[first..=last].iter().all(|u| u.heading);
        let new_section = unit.heading && !only_headings && span(first, last) >= settings.min_size;
        if !new_section && span(first, i) <= settings.size {
            current = Some((first, i));
            continue;
        }
        groups.push((first, last));
        let start = if new_section {
            i
        } else {
            overlap_start(units, chars, settings, first, last, i)
        };
        current = Some((start, i));
    }
    groups.extend(current);
    merge_short_tail(&mut groups, span, |first| units[first].heading, settings);
    groups
}

/// Where the chunk that follows units `first..=last` starts, so that it repeats
/// the whole sentences at the end of that chunk that fit in `overlap`.
fn overlap_start(
    units: &[Unit],
    chars: &CharIndex<'_>,
    settings: &ChunkSettings,
    first: usize,
    last: usize,
    next: usize,
) -> usize {
    let mut start = next;
    let end_of_previous = units[last].bytes.end;
    let end_of_next = units[next].bytes.end;
    for j in (first + 1..=last).rev() {
        let repeated = chars.len(&(units[j].bytes.start..end_of_previous));
        if repeated > settings.overlap
            || chars.len(&(units[j].bytes.start..end_of_next)) > settings.size
        {
            break;
        }
        if units[j].clean_start {
            start = j;
        }
    }
    start
}

/// A last chunk shorter than `min_size` joins the chunk before it, unless it
/// is a section of its own (its heading path would then be wrong) or the
/// joined chunk would pass `size + min_size` (markers between the two, which
/// belong to neither chunk, count too).
fn merge_short_tail(
    groups: &mut Vec<(usize, usize)>,
    span: impl Fn(usize, usize) -> usize,
    starts_section: impl Fn(usize) -> bool,
    settings: &ChunkSettings,
) {
    if let [.., (previous_first, _), (last_first, last_last)] = groups[..]
        && !starts_section(last_first)
        && span(last_first, last_last) < settings.min_size
        && span(previous_first, last_last) <= settings.size + settings.min_size
    {
        groups.truncate(groups.len() - 2);
        groups.push((previous_first, last_last));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(size: usize, overlap: usize, min_size: usize) -> ChunkSettings {
        ChunkSettings {
            size,
            overlap,
            min_size,
        }
    }

    #[test]
    fn a_small_document_is_one_chunk_with_its_heading_path() {
        let chunks = split(
            "# Guide\n\n## Install\n\nRun the installer.\n",
            &ChunkSettings::default(),
        );
        assert_eq!(chunks.len(), 1);
        assert_eq!(
            chunks[0].text,
            "# Guide\n\n## Install\n\nRun the installer."
        );
        assert_eq!(chunks[0].heading_path, ["Guide"]);
    }

    #[test]
    fn long_prose_splits_at_sentences_with_whole_sentence_overlap() {
        let sentence = |i: usize| format!("Sentence number {i:02} says a little. ");
        let text: String = (0..40).map(sentence).collect();
        let chunks = split(&text, &settings(200, 80, 20));
        assert!(chunks.len() > 5);
        for pair in chunks.windows(2) {
            assert!(pair[0].text.ends_with('.'), "{:?}", pair[0].text);
            assert!(pair[1].text.starts_with("Sentence"), "{:?}", pair[1].text);
            assert!(pair[1].start < pair[0].end, "consecutive chunks overlap");
            assert!(pair[0].end - pair[1].start <= 80);
        }
    }

    #[test]
    fn headings_start_new_chunks_and_set_the_path() {
        let body = "Some words here. ".repeat(10);
        let markdown = format!("# A\n\n{body}\n\n## B\n\n{body}\n\n# C\n\n{body}\n");
        let chunks = split(&markdown, &settings(400, 50, 50));
        let paths: Vec<_> = chunks.iter().map(|c| c.heading_path.join(" > ")).collect();
        assert_eq!(paths, ["A", "A > B", "C"]);
        assert!(chunks[1].text.starts_with("## B"));
    }

    #[test]
    fn tables_stay_whole_when_they_fit() {
        let table = "| a | b |\n| --- | --- |\n| 1 | 2 |\n| 3 | 4 |";
        let before = "Intro sentence that is long enough to matter. ".repeat(3);
        let markdown = format!("{before}\n\n{table}\n\nAfter.");
        let chunks = split(&markdown, &settings(170, 0, 10));
        assert!(chunks.iter().any(|c| c.text.contains(table)), "{chunks:#?}");
    }

    #[test]
    fn a_long_table_is_split_at_rows_and_each_part_names_its_columns() {
        let rows: String = (0..40)
            .map(|i| format!("| 2024-{i:02} | {} |\n", i * 7))
            .collect();
        let markdown =
            format!("## Sales\n\n| Month | Units |\n| --- | --- |\n{rows}\nAfter the table.");
        let chunks = split(&markdown, &settings(200, 40, 20));
        assert!(chunks.len() > 3, "{chunks:#?}");
        assert!(chunks[0].text.contains("| Month | Units |\n| --- | --- |"));
        assert_eq!(chunks[0].heading_path, ["Sales"]);
        for chunk in &chunks[1..] {
            if chunk.text.starts_with("| 2024-") {
                assert_eq!(
                    chunk.heading_path,
                    ["Sales", "| Month | Units |"],
                    "{chunk:#?}"
                );
                assert!(
                    chunk.text.lines().all(|l| l.starts_with("| 2024-")
                        || l.is_empty()
                        || l == "After the table.")
                );
            }
        }
        let last = chunks.last().unwrap();
        assert!(last.text.ends_with("After the table."));
        // A table that fits keeps the plain heading path.
        let small = split(
            "## S\n\n| a | b |\n| --- | --- |\n| 1 | 2 |",
            &settings(200, 40, 20),
        );
        assert_eq!(small[0].heading_path, ["S"]);
    }

    #[test]
    fn pages_and_slides_come_from_markers() {
        let markdown = "<!-- page: 1 -->\nFirst page text.\n\n<!-- page: 2 -->\nSecond page text.";
        let chunks = split(markdown, &settings(50, 0, 5));
        assert_eq!(
            chunks.iter().map(|c| c.page).collect::<Vec<_>>(),
            [Some(1), Some(2)]
        );
        assert_eq!(chunks[1].text, "Second page text.");
        let slides = split(
            "<!-- slide: 3 -->\n## Title\n\nBody.",
            &ChunkSettings::default(),
        );
        assert_eq!(slides[0].slide, Some(3));
    }

    #[test]
    fn an_untitled_slide_is_not_under_the_previous_slides_title() {
        let markdown = "<!-- slide: 1 -->\n## Intro\n\nFirst slide text.\n\n\
                        <!-- slide: 2 -->\nSecond slide text.";
        let chunks = split(markdown, &settings(50, 0, 5));
        assert_eq!(chunks.len(), 2, "{chunks:?}");
        assert_eq!(chunks[0].heading_path, ["Intro"]);
        assert_eq!(chunks[1].slide, Some(2));
        assert!(chunks[1].heading_path.is_empty(), "{chunks:?}");
    }

    #[test]
    fn a_short_tail_joins_the_chunk_before() {
        let markdown = format!("{}\n\nEnd.", "Word ".repeat(30).trim());
        let chunks = split(&markdown, &settings(150, 0, 20));
        assert_eq!(chunks.len(), 1);
        assert!(chunks[0].text.ends_with("End."));
    }

    #[test]
    fn a_short_tail_beyond_a_marker_stays_apart_when_joining_would_pass_the_limit() {
        let first =
            "the the aaA00Aa0AAAAAa0AAa0aaAa0000AA00aaaA0AAAAaaa0a0AAAA0A00AAAaAaa0aA2YUBES3lv;";
        let markdown = format!("{first}\n<!-- page: 36 -->\nphnvwjjg E-5 bpn!");
        let chunks = split(&markdown, &settings(97, 35, 20));
        assert_eq!(chunks.len(), 2, "{chunks:#?}");
        assert_eq!(chunks[1].text, "phnvwjjg E-5 bpn!");
        assert_eq!(chunks[1].page, Some(36));
    }

    #[test]
    fn repeated_text_gets_distinct_stable_ids() {
        let markdown = "# Same\n\nSame text here.\n\n# Same\n\nSame text here.";
        let chunks = split(markdown, &settings(50, 0, 1));
        assert_eq!(chunks.len(), 2);
        assert_eq!(chunks[0].text, chunks[1].text);
        assert_ne!(chunks[0].id("d"), chunks[1].id("d"));
        assert_eq!(
            split(markdown, &settings(50, 0, 1))[1].id("d"),
            chunks[1].id("d")
        );
    }

    #[test]
    fn offsets_count_characters_not_bytes() {
        let markdown = "Überschrift für Ärzte. ".repeat(20);
        for chunk in split(&markdown, &settings(100, 20, 10)) {
            let slice: String = markdown
                .chars()
                .skip(chunk.start)
                .take(chunk.end - chunk.start)
                .collect();
            assert_eq!(slice, chunk.text);
        }
    }
}
