//! Free text to a safe FTS5 query.

use crate::words::{code_parts, joined_words, normalized, words};

/// Words too common to help a keyword search; dropped unless nothing else is left.
const STOPWORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
    "been", "before", "but", "by", "can", "could", "did", "do", "does", "for", "from", "had",
    "has", "have", "he", "her", "his", "how", "i", "if", "in", "into", "is", "it", "its", "me",
    "my", "no", "not", "of", "on", "or", "our", "she", "should", "so", "some", "than", "that",
    "the", "their", "them", "then", "there", "these", "they", "this", "those", "to", "us", "was",
    "we", "were", "what", "when", "where", "which", "who", "whom", "why", "will", "with", "would",
    "you", "your",
];

/// Most terms a query keeps.
const MAX_TERMS: usize = 32;

/// The words of `text` a keyword search uses: distinct, lowercase, cut as
/// the indexes cut them ([`normalized`], [`words`]), stopwords dropped unless the text has
/// nothing else, at most [`MAX_TERMS`].
pub fn query_terms(text: &str) -> Vec<String> {
    let mut terms: Vec<String> = Vec::new();
    for word in words(&normalized(text)) {
        let word = word.to_lowercase();
        if !terms.contains(&word) {
            terms.push(word);
        }
    }
    let content: Vec<String> = terms.iter().filter(|w| !is_stopword(w)).cloned().collect();
    let mut chosen = if content.is_empty() { terms } else { content };
    chosen.truncate(MAX_TERMS);
    chosen
}

/// The words a BM25 search looks for: [`query_terms`], plus each word written
/// with inner punctuation also as one word (`Wi-Fi` → `wifi`, `IL-6` → `il6`,
/// `U.S.A.` → `usa`: see [`joined_words`]), as texts spell such terms both ways.
pub fn search_terms(text: &str) -> Vec<String> {
    let mut terms = query_terms(text);
    let normalized = normalized(text);
    for extra in joined_words(&normalized).chain(code_parts(&normalized)) {
        if !terms.contains(&extra) {
            terms.push(extra);
        }
    }
    terms.truncate(MAX_TERMS);
    terms
}

pub fn is_stopword(word: &str) -> bool {
    STOPWORDS.contains(&word)
}

/// An FTS5 query matching only text holding every [`query_terms`] word of
/// `text`; `None` when it has no words.
pub fn match_all_query(text: &str) -> Option<String> {
    let terms = query_terms(text);
    (!terms.is_empty()).then(|| {
        terms
            .iter()
            .map(|w| format!("\"{w}\""))
            .collect::<Vec<_>>()
            .join(" AND ")
    })
}

/// Turns free text into an FTS5 query that cannot be a syntax error: the
/// [`search_terms`] of the text, each quoted, joined with OR. `None` when the
/// text has no words at all.
pub fn match_query(text: &str) -> Option<String> {
    let terms = search_terms(text);
    (!terms.is_empty()).then(|| {
        terms
            .iter()
            .map(|w| format!("\"{w}\""))
            .collect::<Vec<_>>()
            .join(" OR ")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_characters_never_reach_fts() {
        assert_eq!(
            match_query("What is \"NEAR(x y)\" AND -foo* ^bar: E1234?").as_deref(),
            Some("\"near\" OR \"x\" OR \"y\" OR \"foo\" OR \"bar\" OR \"e1234\"")
        );
        assert_eq!(match_query("  ()\"*:^ ").as_deref(), None);
    }

    #[test]
    fn stopwords_are_dropped_unless_nothing_is_left() {
        assert_eq!(
            match_query("how do I reset the VPN").as_deref(),
            Some("\"reset\" OR \"vpn\"")
        );
        assert_eq!(
            match_query("what is it").as_deref(),
            Some("\"what\" OR \"is\" OR \"it\"")
        );
    }

    #[test]
    fn a_code_typed_without_its_separator_is_also_searched_in_parts() {
        assert_eq!(
            match_query("LDG4012 inc2291 camt053").as_deref(),
            Some(
                "\"ldg4012\" OR \"inc2291\" OR \"camt053\" OR \"ldg\" OR \"4012\" OR \"inc\" \
                 OR \"2291\" OR \"camt\" OR \"053\""
            )
        );
        // Units, genes and one-letter codes stay whole.
        assert_eq!(
            match_query("5GHz p53 E0277 CD4").as_deref(),
            Some("\"5ghz\" OR \"p53\" OR \"e0277\" OR \"cd4\"")
        );
    }

    #[test]
    fn a_word_written_with_inner_punctuation_is_also_searched_as_one() {
        assert_eq!(
            match_query("Is Wi-Fi 6 on IL-6 e.g. U.S.A. wifi").as_deref(),
            Some(
                "\"wi\" OR \"fi\" OR \"6\" OR \"il\" OR \"e\" OR \"g\" OR \"u\" OR \"s\" \
                 OR \"wifi\" OR \"il6\" OR \"usa\""
            )
        );
        // Only a search for any word gets them: all the words are wanted as written.
        assert_eq!(
            match_all_query("Wi-Fi").as_deref(),
            Some("\"wi\" AND \"fi\"")
        );
    }

    #[test]
    fn words_are_searched_as_the_indexes_hold_them() {
        assert_eq!(
            match_query("Café cafe\u{301} naïve 東京都").as_deref(),
            Some("\"cafe\" OR \"naive\" OR \"東京\" OR \"京都\"")
        );
    }
}
