//! `--evidence ANSWER`: checks an answer against the scope it was written from.
//!
//! The answer is split into claims ([`claims`]); each claim is searched in
//! the scope as its own query, and every hit gets a support score
//! ([`support`]): how close the chunk is to the claim (the cosine of the
//! `vector` signal) and how many of the claim's content words it contains
//! ([`lexical_coverage`]), scaled down when the chunk lacks the claim's
//! numbers and codes. A claim is supported when its best chunk reaches
//! [`SUPPORT_THRESHOLD`]. When fewer than `--min-coverage` of the claims are
//! supported, each unsupported claim is searched once more with a rewritten
//! query ([`rewrite`]: the question, then the claim's content words; the
//! cosine of that search is the rewritten query's, the words counted stay
//! the claim's), and the report says so; still below, a low-confidence
//! warning goes to stderr.
//!
//! The search is the scope's ordinary one (`Searcher::search`, with the
//! flags given: `--mode`, `--top-k`, `--doc-type`, `--all-chunks`, ...), so
//! the chunks weighed are its results: one per document unless --all-chunks.

use std::collections::HashSet;
use std::io::Write;

use kts_record::{EvidenceCitation, EvidenceKind, EvidenceRecord, HitRecord, schema_id};

use crate::Searcher;
use crate::words::{ends_unspaced_sentence, script_runs, stem, unspaced, unspaced_words};

/// Default of `--min-coverage`: below half of the claims supported, the
/// answer is retried and then flagged. Answers carry sentences no document
/// states ("Here is how to do it."), so a stricter default flags good answers.
pub const MIN_COVERAGE: f64 = 0.5;

/// A claim is supported when its best chunk's support reaches this.
///
/// Calibrated on 82 claims written for the purpose against real text — 20
/// Rust RFCs (`../shared/corpora/rust-rfcs`: 0002, 0040, 0050, 0063, 0069,
/// 0141, 0160, 0198, 0214, 0221, 0230, 0236, 0246, 0342, 0403, 0430, 0446,
/// 0486, 0505, 0507) and the handbook of tests/evidence.rs — 42 true ones
/// (sentences of the documents, some verbatim, most reworded) and 40
/// fabricated ones on the same topics. 0.6 makes the fewest errors: 39 of
/// the 42 true claims supported, 32 of the 40 fabricated ones rejected (at
/// 0.55: 40 and 26; at 0.65: 32 and 33). What it cannot see: a paraphrase
/// that shares few words with its passage ("before nine in the morning" for
/// "before 9:00"), and a claim that reuses the passage's words with another
/// meaning ("from the first day" where the passage says "fourth"; "always
/// safe" beside "unsafe").
pub const SUPPORT_THRESHOLD: f64 = 0.6;

/// The cosine's weight in the support score; the lexical coverage weighs the
/// rest. On the calibration claims the cosine separates true from fabricated
/// claims less than the words do (both stay on topic, with cosines of 0.5 to
/// 0.8), and any weight from 0 to 0.5 makes about as many errors; half keeps
/// rewordings that share few words with their passage.
pub const VECTOR_WEIGHT: f64 = 0.5;

/// Sentences with fewer words are not claims (headings in disguise, "Yes.", "See below:").
pub const MIN_CLAIM_WORDS: usize = 4;

/// Supporting chunks cited per claim, at most.
pub const MAX_CITATIONS: usize = 3;

/// Words that carry no claim of their own.
const STOPWORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
    "been", "before", "being", "both", "but", "by", "can", "could", "did", "do", "does", "done",
    "each", "either", "for", "from", "had", "has", "have", "he", "her", "here", "his", "how", "i",
    "if", "in", "into", "is", "it", "its", "just", "may", "me", "might", "more", "most", "must",
    "my", "no", "not", "of", "on", "only", "or", "other", "our", "own", "she", "should", "so",
    "some", "such", "than", "that", "the", "their", "them", "then", "there", "these", "they",
    "this", "those", "to", "too", "us", "very", "was", "we", "were", "what", "when", "where",
    "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your",
];

/// Words before a period that do not end a sentence.
const ABBREVIATIONS: &[&str] = &[
    "e.g", "i.e", "etc", "vs", "cf", "dr", "mr", "mrs", "ms", "prof", "no", "fig", "approx", "st",
    "jr", "sr", "inc", "ltd", "al", "ca", "resp",
];

/// The claims of an answer: its sentences, in order.
///
/// Markdown headings (ATX and setext), fenced code blocks, tables, HTML
/// comments and horizontal rules are skipped. List markers, block-quote
/// markers, emphasis, inline-code backticks, images and link targets are
/// removed (a link keeps its text), and so are citations like `[1]`,
/// `[1, 2]`, `[2-4]` or `[^1]`. Each paragraph and list item is then split
/// into sentences after `.`, `!` or `?` followed by a space and a capital
/// letter, a digit or a name of code written in lowercase (`kts-convert`),
/// not after abbreviations such as "e.g." or "Dr.", and after `。`, `！` or
/// `？` of Chinese and Japanese. Sentences of fewer than [`MIN_CLAIM_WORDS`]
/// words are dropped (see [`word_count`] for text written without spaces).
pub fn claims(answer: &str) -> Vec<String> {
    blocks(answer)
        .iter()
        .flat_map(|block| sentences(&clean_inline(block)))
        .filter(|sentence| word_count(sentence) >= MIN_CLAIM_WORDS)
        .collect()
}

/// The answer's paragraphs and list items, each on one line, markers removed.
fn blocks(answer: &str) -> Vec<String> {
    let mut blocks: Vec<Vec<String>> = Vec::new();
    let mut current: Vec<String> = Vec::new();
    let mut fence: Option<&str> = None;
    let end = |current: &mut Vec<String>, blocks: &mut Vec<Vec<String>>| {
        if !current.is_empty() {
            blocks.push(std::mem::take(current));
        }
    };
    for line in answer.lines() {
        let trimmed = line.trim();
        if let Some(open) = fence {
            if trimmed.starts_with(open) {
                fence = None;
            }
            continue;
        }
        if let Some(open) = ["```", "~~~"].into_iter().find(|f| trimmed.starts_with(f)) {
            end(&mut current, &mut blocks);
            fence = Some(open);
            continue;
        }
        let mut line = trimmed;
        while let Some(rest) = line.strip_prefix('>') {
            line = rest.trim_start();
        }
        if line.is_empty() || is_rule(line) {
            // A setext underline makes the line above it a heading.
            if is_rule(line) && current.len() == 1 && !line.starts_with('*') {
                current.clear();
            }
            end(&mut current, &mut blocks);
            continue;
        }
        if is_heading(line)
            || line.starts_with('|')
            || (line.starts_with("<!--") && line.ends_with("-->"))
        {
            end(&mut current, &mut blocks);
            continue;
        }
        if let Some(item) = list_item(line) {
            end(&mut current, &mut blocks);
            current.push(item.to_string());
            continue;
        }
        current.push(line.to_string());
    }
    end(&mut current, &mut blocks);
    blocks.into_iter().map(|lines| lines.join(" ")).collect()
}

fn is_heading(line: &str) -> bool {
    let hashes = line.chars().take_while(|&c| c == '#').count();
    (1..=6).contains(&hashes)
        && line[hashes..]
            .chars()
            .next()
            .is_none_or(char::is_whitespace)
}

/// `---`, `***`, `===`, `___` (spaces allowed): a rule or a setext underline.
fn is_rule(line: &str) -> bool {
    let marks: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    marks.len() >= 3
        && ['-', '*', '_', '=']
            .iter()
            .any(|&m| marks.chars().all(|c| c == m))
}

/// The text of a list item (`- `, `* `, `+ `, `1. `, `1) `, with an optional
/// task box `[ ] ` / `[x] `), or `None`.
fn list_item(line: &str) -> Option<&str> {
    let rest = if let Some(rest) = ["- ", "* ", "+ "]
        .iter()
        .find_map(|marker| line.strip_prefix(marker))
    {
        rest
    } else {
        let digits = line.chars().take_while(char::is_ascii_digit).count();
        if digits == 0 || digits > 9 {
            return None;
        }
        let rest = &line[digits..];
        rest.strip_prefix(". ")
            .or_else(|| rest.strip_prefix(") "))?
    };
    let rest = rest.trim_start();
    Some(
        ["[ ] ", "[x] ", "[X] "]
            .iter()
            .find_map(|b| rest.strip_prefix(b))
            .unwrap_or(rest),
    )
}

/// One block's text without Markdown markup, links, images and citations.
fn clean_inline(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '!' if chars.get(i + 1) == Some(&'[') => {
                // An image: dropped with its alt text and target.
                match bracket_end(&chars, i + 1) {
                    Some(close) => i = link_target_end(&chars, close).unwrap_or(close) + 1,
                    None => {
                        out.push(c);
                        i += 1;
                    }
                }
            }
            '[' => match bracket_end(&chars, i) {
                Some(close) => {
                    let inner: String = chars[i + 1..close].iter().collect();
                    match link_target_end(&chars, close) {
                        // A link: its text stays.
                        Some(target_end) => {
                            out.push_str(&inner);
                            i = target_end + 1;
                        }
                        None if is_citation(&inner) => i = close + 1,
                        None => {
                            out.push_str(&inner);
                            i = close + 1;
                        }
                    }
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            },
            '*' | '`' => i += 1,
            '_' if chars.get(i + 1) == Some(&'_') => i += 2,
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    // Removed citations leave "holiday [1]." as "holiday .".
    let mut tidy = String::with_capacity(out.len());
    for word in out.split_whitespace() {
        let glued = word
            .chars()
            .all(|c| matches!(c, '.' | ',' | ';' | ':' | '!' | '?'));
        if !tidy.is_empty() && !glued {
            tidy.push(' ');
        }
        tidy.push_str(word);
    }
    tidy
}

/// The index of the `]` closing the `[` at `open` (no nesting, same block).
fn bracket_end(chars: &[char], open: usize) -> Option<usize> {
    chars[open + 1..]
        .iter()
        .position(|&c| c == ']' || c == '[')
        .map(|p| open + 1 + p)
        .filter(|&p| chars[p] == ']')
}

/// The index of the `)` closing a link target `(…)` right after `close`.
fn link_target_end(chars: &[char], close: usize) -> Option<usize> {
    if chars.get(close + 1) != Some(&'(') {
        return None;
    }
    chars[close + 2..]
        .iter()
        .position(|&c| c == ')')
        .map(|p| close + 2 + p)
}

/// `1`, `1, 2`, `2-4`, `^1`, `12`: what an answer cites its sources with.
fn is_citation(inner: &str) -> bool {
    let inner = inner.trim().trim_start_matches('^');
    !inner.is_empty()
        && inner.chars().any(|c| c.is_ascii_digit())
        && inner
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, ',' | '-' | '–' | ' ' | ';'))
}

/// A block split after sentence-ending punctuation.
fn sentences(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut found = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < chars.len() {
        if ends_unspaced_sentence(chars[i]) {
            let mut end = i + 1;
            while end < chars.len() && matches!(chars[end], '」' | '』' | '）' | '”' | '’') {
                end += 1;
            }
            push_sentence(&mut found, &chars[start..end]);
            start = end;
            i = end;
            continue;
        }
        if matches!(chars[i], '.' | '!' | '?') {
            // Closing quotes and brackets belong to the sentence they end.
            let mut end = i + 1;
            while end < chars.len() && matches!(chars[end], '"' | '\'' | ')' | '”' | '’') {
                end += 1;
            }
            let next = chars[end..].iter().position(|c| !c.is_whitespace());
            let breaks = match next {
                None => true,
                Some(0) => false,
                Some(gap) => {
                    let c = chars[end + gap];
                    let starts = c.is_uppercase()
                        || c.is_ascii_digit()
                        || matches!(c, '"' | '“' | '(')
                        || is_identifier(&chars[end + gap..]);
                    starts && !(chars[i] == '.' && is_abbreviation(&chars[start..i]))
                }
            };
            if breaks {
                push_sentence(&mut found, &chars[start..end]);
                start = end;
                i = end;
                continue;
            }
        }
        i += 1;
    }
    push_sentence(&mut found, &chars[start..]);
    found
}

/// Adds `sentence`, trimmed, unless it is blank.
fn push_sentence(found: &mut Vec<String>, sentence: &[char]) {
    let sentence: String = sentence.iter().collect();
    if !sentence.trim().is_empty() {
        found.push(sentence.trim().to_string());
    }
}

/// Whether the text starts with a word written as a name of code, which may
/// start a sentence in lowercase: `kts-convert`, `npm_config`, `v1.2`.
fn is_identifier(text: &[char]) -> bool {
    let word: Vec<char> = text
        .iter()
        .take_while(|c| !c.is_whitespace())
        .copied()
        .collect();
    let word = match word.last() {
        Some(',' | ';' | ':' | '.') => &word[..word.len() - 1],
        _ => &word[..],
    };
    word.first().is_some_and(|c| c.is_lowercase())
        && word
            .iter()
            .any(|c| matches!(c, '-' | '_' | '/' | '.') || c.is_ascii_digit())
        && word.last().is_some_and(|c| c.is_alphanumeric())
}

/// Whether the word before a period is an abbreviation ("e.g", "Dr").
/// Single letters are not taken for initials: "building B. The" ends a
/// sentence more often in answers than "J. Doe" continues one.
fn is_abbreviation(before: &[char]) -> bool {
    let word: String = before
        .iter()
        .rev()
        .take_while(|c| !c.is_whitespace() && **c != '(')
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let word = word.to_lowercase();
    // "250 ms." ends on a unit, not on the title "Ms.".
    if word == "ms" && previous_word_is_number(&before[..before.len() - 2]) {
        return false;
    }
    ABBREVIATIONS.contains(&word.as_str())
}

fn previous_word_is_number(before: &[char]) -> bool {
    let word: Vec<&char> = before
        .iter()
        .rev()
        .skip_while(|c| c.is_whitespace())
        .take_while(|c| !c.is_whitespace())
        .collect();
    !word.is_empty()
        && word
            .iter()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | ','))
}

/// The words of a text, a word of text written without spaces taken to be
/// [`UNSPACED_WORD_CHARACTERS`] characters.
fn word_count(text: &str) -> usize {
    text.split_whitespace()
        .map(|piece| {
            let unspaced = piece
                .chars()
                .filter(|&c| c.is_alphanumeric() && unspaced(c))
                .count();
            match unspaced {
                0 => usize::from(piece.chars().any(char::is_alphanumeric)),
                n => n.div_ceil(UNSPACED_WORD_CHARACTERS),
            }
        })
        .sum()
}

/// The length of a word of Chinese or Japanese, about: a sentence of
/// [`MIN_CLAIM_WORDS`] such words is a claim.
const UNSPACED_WORD_CHARACTERS: usize = 2;

/// The words of a text, lowercase. A word holding a digit keeps its inner
/// punctuation (`9:00`, `e-5`, `1,000`, `v1.2`); other words split at
/// anything that is not a letter or a digit. Text written without spaces
/// gives its [`unspaced_words`], and its numbers as words.
fn tokens(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for piece in text.split_whitespace() {
        let piece = piece.trim_matches(|c: char| !c.is_alphanumeric());
        if piece.is_empty() {
            continue;
        }
        if piece.chars().any(unspaced) {
            let words = piece.split(|c: char| !c.is_alphanumeric());
            for run in words.flat_map(script_runs).filter(|run| !run.is_empty()) {
                match run.chars().all(unspaced) {
                    true => found.extend(unspaced_words(run)),
                    false => found.push(run.to_lowercase()),
                }
            }
        } else if piece.chars().any(|c| c.is_ascii_digit()) {
            found.push(piece.to_lowercase());
        } else {
            found.extend(
                piece
                    .split(|c: char| !c.is_alphanumeric())
                    .filter(|w| !w.is_empty())
                    .map(str::to_lowercase),
            );
        }
    }
    found
}

fn is_number(word: &str) -> bool {
    word.chars().any(|c| c.is_ascii_digit())
}

/// The claim's content words: distinct, lowercase, without stopwords and
/// single letters. Words holding a digit (numbers, dates, codes) are kept.
pub fn content_words(text: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for word in tokens(text) {
        let keep =
            is_number(&word) || (word.chars().count() > 1 && !STOPWORDS.contains(&word.as_str()));
        if keep && !words.contains(&word) {
            words.push(word);
        }
    }
    words
}

/// Whether two words are forms of one word: equal stems, or a long common
/// prefix (`reimbursed` / `reimbursement`, `descaled` / `descaling`).
fn same_word(a: &str, b: &str) -> bool {
    if a == b || stem(a) == stem(b) {
        return true;
    }
    let common = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    let shorter = a.chars().count().min(b.chars().count());
    common >= 5 && common + 3 >= shorter
}

/// What a chunk's text offers for matching: its words, and the parts of its
/// words with digits (so a claim's `9` finds a chunk's `9:00`).
struct ChunkWords {
    words: HashSet<String>,
}

impl ChunkWords {
    fn new(text: &str) -> ChunkWords {
        let mut words = HashSet::new();
        for word in tokens(text) {
            if is_number(&word) {
                words.extend(
                    word.split(|c: char| !c.is_alphanumeric())
                        .filter(|p| !p.is_empty())
                        .map(str::to_string),
                );
            }
            words.insert(word);
        }
        ChunkWords { words }
    }

    /// Numbers and codes must be there as written; other words in any form.
    fn contains(&self, word: &str) -> bool {
        if is_number(word) {
            return self.words.contains(word);
        }
        self.words.contains(word) || self.words.iter().any(|w| same_word(word, w))
    }
}

/// Words a claim names: capitalised words other than the sentence's first
/// (`Friday`, `Cargo`) and acronyms (`CEO`, `VPN`), lowercase.
fn names(claim: &str) -> HashSet<String> {
    let mut found = HashSet::new();
    for (i, piece) in claim.split_whitespace().enumerate() {
        let piece = piece.trim_matches(|c: char| !c.is_alphanumeric());
        let letters = piece.chars().filter(|c| c.is_alphabetic()).count();
        let upper = piece.chars().filter(|c| c.is_uppercase()).count();
        let acronym = letters >= 2 && upper == letters;
        let capitalised = i > 0 && piece.chars().next().is_some_and(char::is_uppercase);
        if (acronym || capitalised) && !is_number(piece) {
            found.extend(tokens(piece));
        }
    }
    found
}

/// How much the names a claim states weigh in its lexical coverage, against 1
/// for its other content words: a passage that does not name what the claim
/// names ("the CEO", "on Mondays") rarely supports it.
pub const NAME_WEIGHT: f64 = 2.0;

/// The share of the claim's [`content_words`] that `text` contains, from 0
/// to 1, names counting [`NAME_WEIGHT`] times; and whether it contains every
/// number and code of the claim.
pub fn lexical_coverage(claim: &str, text: &str) -> (f64, bool) {
    let words = content_words(claim);
    if words.is_empty() {
        return (0.0, true);
    }
    let names = names(claim);
    let chunk = ChunkWords::new(text);
    let weight = |w: &String| if names.contains(w) { NAME_WEIGHT } else { 1.0 };
    let total: f64 = words.iter().map(weight).sum();
    let found: f64 = words.iter().filter(|w| chunk.contains(w)).map(weight).sum();
    let every_number = words
        .iter()
        .filter(|w| is_number(w))
        .all(|w| chunk.contains(w));
    (found / total, every_number)
}

/// The support score, from 0 to 1: `VECTOR_WEIGHT × cosine + (1 −
/// VECTOR_WEIGHT) × lexical` (the lexical coverage alone when there is no
/// cosine, in BM25 mode), times 1 when the chunk contains every number and
/// code of the claim, else 0: a chunk saying "25 days" does not support
/// "40 days", nor "25 days, 40 in the second year".
pub fn support(cosine: Option<f64>, lexical: f64, every_number: bool) -> f64 {
    let blended = match cosine {
        Some(cosine) => VECTOR_WEIGHT * cosine.clamp(0.0, 1.0) + (1.0 - VECTOR_WEIGHT) * lexical,
        None => lexical,
    };
    if every_number { blended } else { 0.0 }
}

/// The rewritten query of the retry: the question, then the claim's content
/// words the question does not already have. A claim that leans on the
/// question ("It needs administrator rights.") finds what the question is about.
pub fn rewrite(question: &str, claim: &str) -> String {
    let asked = content_words(question);
    let added: Vec<String> = content_words(claim)
        .into_iter()
        .filter(|w| !asked.iter().any(|a| same_word(a, w)))
        .collect();
    let question = question.trim();
    if added.is_empty() {
        question.to_string()
    } else {
        format!("{question} {}", added.join(" "))
    }
}

/// The verdict on one claim.
#[derive(Clone, Debug)]
pub struct ClaimCheck {
    pub claim: String,
    /// Every chunk found, best support first (one entry per chunk).
    pub candidates: Vec<Candidate>,
    /// The rewritten query the claim was searched again with, if it was.
    pub retry_query: Option<String>,
}

/// A chunk found for a claim, and the query it was found with.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub citation: EvidenceCitation,
    pub query: String,
}

impl ClaimCheck {
    pub fn support(&self) -> f64 {
        self.candidates.first().map_or(0.0, |c| c.citation.score)
    }

    pub fn supported(&self) -> bool {
        self.support() >= SUPPORT_THRESHOLD
    }

    /// Adds what a search found, keeping each chunk's best support.
    fn add(&mut self, hits: &[HitRecord], query: &str) {
        // Without any cosine, the search was lexical; with some, a hit
        // without one was not among the nearest chunks.
        let lexical_only = hits.iter().all(|h| !h.signals.contains_key("vector"));
        for hit in hits {
            let citation = citation(hit, &self.claim, lexical_only);
            match self
                .candidates
                .iter_mut()
                .find(|c| c.citation.chunk_id == hit.chunk_id)
            {
                Some(known) if known.citation.score >= citation.score => {}
                Some(known) => {
                    *known = Candidate {
                        citation,
                        query: query.to_string(),
                    }
                }
                None => self.candidates.push(Candidate {
                    citation,
                    query: query.to_string(),
                }),
            }
        }
        self.candidates
            .sort_by(|a, b| b.citation.score.total_cmp(&a.citation.score));
    }
}

fn citation(hit: &HitRecord, claim: &str, lexical_only: bool) -> EvidenceCitation {
    let cosine = match hit.signals.get("vector") {
        Some(signal) => Some(signal.score),
        None if lexical_only => None,
        None => Some(0.0),
    };
    let (lexical, every_number) = lexical_coverage(claim, &hit.text);
    EvidenceCitation {
        path: hit.path.clone(),
        chunk_id: hit.chunk_id.clone(),
        heading_path: hit.heading_path.clone(),
        start: hit.start,
        end: hit.end,
        page: hit.page,
        slide: hit.slide,
        score: round(support(cosine, lexical, every_number)),
        vector: cosine.map(round),
        lexical: round(lexical),
    }
}

/// Scores rounded to 4 decimals, as they are written. A tiny negative
/// cosine would round to -0.0, which JSON writes as `-0.0`; adding 0.0 makes
/// it 0.0.
fn round(x: f64) -> f64 {
    (x * 1e4).round() / 1e4 + 0.0
}

/// The evidence check of one answer.
#[derive(Clone, Debug)]
pub struct Report {
    pub question: String,
    pub claims: Vec<ClaimCheck>,
    pub min_coverage: f64,
    /// Whether the unsupported claims were searched again.
    pub retried: bool,
}

impl Report {
    pub fn supported(&self) -> usize {
        self.claims.iter().filter(|c| c.supported()).count()
    }

    /// Supported claims / claims.
    pub fn coverage(&self) -> f64 {
        coverage(&self.claims)
    }

    pub fn low_confidence(&self) -> bool {
        self.coverage() < self.min_coverage
    }

    /// What to tell when the coverage stays below the minimum.
    pub fn low_confidence_warning(&self) -> Option<String> {
        self.low_confidence().then(|| {
            format!(
                "low confidence: {} of {} claims supported (coverage {:.2} < --min-coverage {}){}",
                self.supported(),
                self.claims.len(),
                self.coverage(),
                self.min_coverage,
                if self.retried {
                    " after retrying with rewritten queries"
                } else {
                    ""
                }
            )
        })
    }

    /// One `kind: claim` record per claim, then the `kind: summary` record.
    pub fn records(&self) -> Vec<EvidenceRecord> {
        let mut records: Vec<EvidenceRecord> = self
            .claims
            .iter()
            .enumerate()
            .map(|(index, check)| {
                let supported = check.supported();
                let best = check.candidates.first();
                EvidenceRecord {
                    index: Some(index),
                    claim: Some(check.claim.clone()),
                    supported: Some(supported),
                    support: Some(check.support()),
                    citations: Some(
                        check
                            .candidates
                            .iter()
                            .take_while(|c| c.citation.score >= SUPPORT_THRESHOLD)
                            .take(MAX_CITATIONS)
                            .map(|c| c.citation.clone())
                            .collect(),
                    ),
                    nearest: best.filter(|_| !supported).map(|c| c.citation.clone()),
                    query: Some(best.map_or_else(|| check.claim.clone(), |c| c.query.clone())),
                    retried: Some(check.retry_query.is_some()),
                    retry_query: check.retry_query.clone(),
                    ..record(EvidenceKind::Claim)
                }
            })
            .collect();
        records.push(EvidenceRecord {
            retried: Some(self.retried),
            question: Some(self.question.clone()),
            claims: Some(self.claims.len()),
            supported_claims: Some(self.supported()),
            coverage: Some(round(self.coverage())),
            min_coverage: Some(self.min_coverage),
            low_confidence: Some(self.low_confidence()),
            unsupported: Some(
                self.claims
                    .iter()
                    .filter(|c| !c.supported())
                    .map(|c| c.claim.clone())
                    .collect(),
            ),
            ..record(EvidenceKind::Summary)
        });
        records
    }

    /// `--format text`: the verdict, then each claim with its citations
    /// (after the slug of their `scope`, when given).
    pub fn write_text(&self, out: &mut impl Write, scope: Option<&str>) -> std::io::Result<()> {
        writeln!(
            out,
            "{} of {} claims supported (coverage {:.2}, minimum {:.2}){}",
            self.supported(),
            self.claims.len(),
            self.coverage(),
            self.min_coverage,
            if self.low_confidence() {
                " — LOW CONFIDENCE"
            } else {
                ""
            }
        )?;
        if self.retried {
            writeln!(
                out,
                "retried: the unsupported claims were searched again with the question"
            )?;
        }
        for (i, check) in self.claims.iter().enumerate() {
            let verdict = if check.supported() {
                "supported"
            } else {
                "NOT SUPPORTED"
            };
            writeln!(
                out,
                "\n{:>2}. {verdict} ({:.2})  {}",
                i + 1,
                check.support(),
                check.claim
            )?;
            let cited: Vec<&Candidate> = check
                .candidates
                .iter()
                .take_while(|c| c.citation.score >= SUPPORT_THRESHOLD)
                .take(MAX_CITATIONS)
                .collect();
            for candidate in &cited {
                writeln!(
                    out,
                    "    {:.2}  {}",
                    candidate.citation.score,
                    cite(&candidate.citation, scope)
                )?;
            }
            if let (true, Some(nearest)) = (cited.is_empty(), check.candidates.first()) {
                writeln!(
                    out,
                    "    nearest: {:.2}  {}",
                    nearest.citation.score,
                    cite(&nearest.citation, scope)
                )?;
            }
            if let Some(query) = &check.retry_query {
                writeln!(out, "    retried with: {query}")?;
            }
        }
        Ok(())
    }
}

/// `path#Heading > Sub  (page N)`.
fn cite(citation: &EvidenceCitation, scope: Option<&str>) -> String {
    let mut text = match scope {
        Some(slug) => format!("{slug}: {}", citation.path),
        None => citation.path.clone(),
    };
    if !citation.heading_path.is_empty() {
        text.push('#');
        text.push_str(&citation.heading_path.join(" > "));
    }
    if let Some(page) = citation.page {
        text.push_str(&format!("  (page {page})"));
    } else if let Some(slide) = citation.slide {
        text.push_str(&format!("  (slide {slide})"));
    }
    text
}

fn record(kind: EvidenceKind) -> EvidenceRecord {
    EvidenceRecord {
        schema: schema_id::EVIDENCE.into(),
        kind,
        index: None,
        claim: None,
        supported: None,
        support: None,
        citations: None,
        nearest: None,
        query: None,
        retried: None,
        retry_query: None,
        question: None,
        claims: None,
        supported_claims: None,
        coverage: None,
        min_coverage: None,
        low_confidence: None,
        unsupported: None,
    }
}

fn coverage(claims: &[ClaimCheck]) -> f64 {
    if claims.is_empty() {
        return 0.0;
    }
    claims.iter().filter(|c| c.supported()).count() as f64 / claims.len() as f64
}

/// Checks `answer` against the scope: each claim searched as its own query;
/// below `min_coverage`, each unsupported claim once more with [`rewrite`].
pub fn check(
    searcher: &mut Searcher,
    question: &str,
    answer: &str,
    min_coverage: f64,
) -> anyhow::Result<Report> {
    if answer.trim().is_empty() {
        anyhow::bail!("the answer to check is empty");
    }
    let claims = claims(answer);
    if claims.is_empty() {
        anyhow::bail!(
            "the answer has no claims to check: no sentence of {MIN_CLAIM_WORDS} words or more \
             ({} characters in Chinese or Japanese) outside headings, code blocks and tables",
            MIN_CLAIM_WORDS * UNSPACED_WORD_CHARACTERS
        );
    }
    let mut checks = Vec::with_capacity(claims.len());
    for claim in claims {
        let mut check = ClaimCheck {
            claim,
            candidates: Vec::new(),
            retry_query: None,
        };
        let hits = searcher.search(&check.claim, None)?;
        check.add(&hits, &check.claim.clone());
        checks.push(check);
    }
    let retried = coverage(&checks) < min_coverage;
    if retried {
        for check in checks.iter_mut().filter(|c| !c.supported()) {
            let query = rewrite(question, &check.claim);
            let hits = searcher.search(&query, None)?;
            check.add(&hits, &query);
            check.retry_query = Some(query);
        }
    }
    Ok(Report {
        question: question.to_string(),
        claims: checks,
        min_coverage,
        retried,
    })
}

/// `--min-coverage`: a number from 0 to 1.
pub fn parse_ratio(text: &str) -> Result<f64, String> {
    let value: f64 = text
        .parse()
        .map_err(|_| format!("{text:?} is not a number"))?;
    if (0.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        Err(format!("{value} is not between 0 and 1"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_number_followed_by_ms_ends_a_sentence_and_the_title_does_not() {
        assert_eq!(
            sentences("Requests fail after 250 ms. The limit is 400. Ask Ms. Smith first."),
            [
                "Requests fail after 250 ms.",
                "The limit is 400.",
                "Ask Ms. Smith first."
            ]
        );
    }

    #[test]
    fn sentences_written_without_spaces_are_claims() {
        assert_eq!(
            claims("员工每年享有十五天带薪年假。病假需要提供医院证明！好的。"),
            ["员工每年享有十五天带薪年假。", "病假需要提供医院证明！"]
        );
        assert_eq!(
            claims("「始業時刻は午前九時です。」休憩時間は正午から一時間です。"),
            [
                "「始業時刻は午前九時です。」",
                "休憩時間は正午から一時間です。"
            ]
        );
    }

    #[test]
    fn words_written_without_spaces_are_matched_by_pairs_of_characters() {
        let passage = "# 年假政策\n\n员工每年享有15天带薪年假。请假申请需提前两周提交。";
        assert_eq!(
            lexical_coverage("员工每年享有15天带薪年假。", passage),
            (1.0, true)
        );
        let (coverage, every_number) = lexical_coverage("员工每年享有30天带薪年假。", passage);
        assert!(!every_number && coverage > 0.8, "{coverage}");
        let (coverage, _) = lexical_coverage("病假需要提供医院证明。", passage);
        assert!(coverage < 0.2, "{coverage}");
    }

    #[test]
    fn a_tiny_negative_score_is_written_as_zero() {
        let written = serde_json::to_string(&round(-0.00001)).unwrap();
        assert_eq!(written, "0.0");
        assert_eq!(round(0.123456), 0.1235);
    }
}
