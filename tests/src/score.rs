//! The word-level quality scorer: Markdown is reduced to its visible text,
//! split into lowercase alphanumeric words, and compared as multisets.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;

static COMMENT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?s)<!--.*?-->").unwrap());
/// `![alt](url "title")`: the URL may hold one level of parentheses.
static IMAGE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"!\[([^\]]*)\]\((?:[^()]|\([^()]*\))*\)").unwrap());
static LINK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\[([^\]]*)\]\((?:[^()]|\([^()]*\))*\)").unwrap());
static AUTOLINK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"<((?:https?|ftp|mailto):[^>\s]+)>").unwrap());
static TAG: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>").unwrap());
static ENTITY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z]{2,8});").unwrap());

/// Is this line a Markdown table separator row (`| --- | :-: |`)?
fn is_table_separator(line: &str) -> bool {
    let t = line.trim();
    t.contains('-')
        && t.contains('|')
        && t.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ' | '\t'))
}

fn decode_entity(entity: &str) -> String {
    let named = match entity {
        "amp" => Some('&'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "quot" => Some('"'),
        "apos" => Some('\''),
        "nbsp" => Some(' '),
        _ => None,
    };
    let c = named.or_else(|| {
        let number = entity.strip_prefix('#')?;
        let code = match number.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => number.parse().ok()?,
        };
        char::from_u32(code)
    });
    c.map_or_else(|| format!("&{entity};"), String::from)
}

/// Markdown reduced to the text a reader sees: HTML comments (`<!-- page: 3 -->`,
/// `<!-- image -->`) and tags dropped, `![alt](url)` turned into `alt` and
/// `[text](url)` into `text`, table separator rows dropped, entities decoded,
/// and markup characters (`# * _ | > ` ~ \`) turned into spaces.
pub fn normalise(markdown: &str) -> String {
    let text = COMMENT.replace_all(markdown, " ");
    let text = IMAGE.replace_all(&text, "$1");
    let text = LINK.replace_all(&text, "$1");
    let text = AUTOLINK.replace_all(&text, "$1");
    let text = TAG.replace_all(&text, " ");
    let text = ENTITY.replace_all(&text, |c: &regex::Captures| decode_entity(&c[1]));
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        if is_table_separator(line) {
            continue;
        }
        out.extend(line.chars().map(|c| match c {
            '#' | '*' | '_' | '|' | '>' | '`' | '~' | '\\' => ' ',
            c => c,
        }));
        out.push('\n');
    }
    out
}

/// The lowercase alphanumeric words of a Markdown text's visible text, in order.
pub fn tokens(markdown: &str) -> Vec<String> {
    normalise(markdown)
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Does the visible text of `haystack` contain the words of `needle`, in order and adjacent?
pub fn visible_text_contains(haystack: &str, needle: &str) -> bool {
    let needle = tokens(needle);
    if needle.is_empty() {
        return true;
    }
    tokens(haystack)
        .windows(needle.len())
        .any(|w| w == needle.as_slice())
}

/// Word-level agreement of a conversion with its ground truth.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Score {
    /// Words of the truth.
    pub truth_words: usize,
    /// Words of our output.
    pub our_words: usize,
    /// Size of the multiset intersection.
    pub common: usize,
}

impl Score {
    /// Share of the truth's words that we produced (1 when the truth has none).
    pub fn recall(&self) -> f64 {
        if self.truth_words == 0 {
            1.0
        } else {
            self.common as f64 / self.truth_words as f64
        }
    }
    /// Share of our words that the truth has (1 when both are empty, 0 when
    /// ours is empty and the truth is not).
    pub fn precision(&self) -> f64 {
        match (self.our_words, self.truth_words) {
            (0, 0) => 1.0,
            (0, _) => 0.0,
            (ours, _) => self.common as f64 / ours as f64,
        }
    }
}

/// Scores our Markdown against the truth's (both Markdown; plain text works too).
pub fn score(ours: &str, truth: &str) -> Score {
    let count = |words: Vec<String>| {
        let mut counts: HashMap<String, usize> = HashMap::new();
        for w in words {
            *counts.entry(w).or_default() += 1;
        }
        counts
    };
    let ours = count(tokens(ours));
    let truth = count(tokens(truth));
    let common = truth
        .iter()
        .map(|(w, &n)| n.min(ours.get(w).copied().unwrap_or(0)))
        .sum();
    Score {
        truth_words: truth.values().sum(),
        our_words: ours.values().sum(),
        common,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_is_not_text() {
        let md = "# Title\n\n<!-- page: 3 -->\n| a | b |\n| --- | :-: |\n| **x** | [link text](http://e.com/a_(b)) |\n\n![alt words](img.png)\n<!-- image -->\n";
        assert_eq!(
            tokens(md),
            ["title", "a", "b", "x", "link", "text", "alt", "words"]
        );
        assert_eq!(tokens("A&amp;B <br> caf&#233;"), ["a", "b", "café"]);
    }

    #[test]
    fn recall_and_precision_are_multiset_ratios() {
        let s = score("the cat the cat extra", "The cat sat, the end");
        // truth: the×2 cat sat end (5); ours: the×2 cat×2 extra (5); common: the×2 cat = 3.
        assert_eq!(
            s,
            Score {
                truth_words: 5,
                our_words: 5,
                common: 3
            }
        );
        assert!((s.recall() - 0.6).abs() < 1e-9);
        assert!((s.precision() - 0.6).abs() < 1e-9);
        assert_eq!(score("", "").precision(), 1.0);
        assert_eq!(score("", "words").recall(), 0.0);
        assert_eq!(score("", "words").precision(), 0.0);
    }

    #[test]
    fn needles_match_on_visible_words() {
        assert!(visible_text_contains(
            "Founded by [Bill Gates](/wiki/Bill_Gates \"Bill Gates\") in 1975",
            "founded by Bill Gates"
        ));
        assert!(!visible_text_contains("Bill and Gates", "Bill Gates"));
    }
}
