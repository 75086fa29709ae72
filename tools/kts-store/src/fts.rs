//! Free text to a safe FTS5 query.

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

/// Turns free text into an FTS5 query that cannot be a syntax error: the
/// distinct words of the text (letters and digits only), each quoted, joined
/// with OR; stopwords are dropped unless the text has nothing else. `None`
/// when the text has no words at all.
pub fn match_query(text: &str) -> Option<String> {
    let mut words: Vec<String> = Vec::new();
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let word = word.to_lowercase();
        if !words.contains(&word) {
            words.push(word);
        }
    }
    let content: Vec<&String> = words
        .iter()
        .filter(|w| !STOPWORDS.contains(&w.as_str()))
        .collect();
    let chosen: Vec<&String> = if content.is_empty() {
        words.iter().collect()
    } else {
        content
    };
    if chosen.is_empty() {
        return None;
    }
    let quoted: Vec<String> = chosen
        .into_iter()
        .take(MAX_TERMS)
        .map(|w| format!("\"{w}\""))
        .collect();
    Some(quoted.join(" OR "))
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
    fn words_keep_their_letters_and_are_deduplicated() {
        assert_eq!(
            match_query("Café café naïve").as_deref(),
            Some("\"café\" OR \"naïve\"")
        );
    }
}
