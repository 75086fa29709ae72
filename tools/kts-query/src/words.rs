//! Words and word forms shared by planning, ranking, routing and the evidence check.

/// Lowercase words, cut as the keyword indexes cut them (see
/// `kts_store::normalized` and `kts_store::words`).
pub fn lowercase_words(text: &str) -> Vec<String> {
    kts_store::words(&kts_store::normalized(text).to_lowercase())
        .map(str::to_string)
        .collect()
}

/// The stemmed words of lowercase, normalised text, borrowed from it (for text read
/// often, such as every candidate of every question: no word is copied).
pub fn stems(lower: &str) -> impl Iterator<Item = &str> {
    kts_store::words(lower).map(stem)
}

/// Whether `c` is of a script written without spaces between words
/// (Chinese, Japanese, Thai, Lao, Khmer, Myanmar), or is their punctuation.
pub fn unspaced(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF // Thai, Lao
        | 0x1000..=0x109F // Myanmar
        | 0x1780..=0x17FF // Khmer
        | 0x2E80..=0x2FDF // CJK radicals
        | 0x3000..=0x31FF // CJK punctuation, kana, bopomofo
        | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF // Han
        | 0xFF00..=0xFFEF // full-width forms, half-width kana
        | 0x20000..=0x3FFFF // Han, supplementary
    )
}

/// Whether `c` ends a sentence in text written without spaces.
pub fn ends_unspaced_sentence(c: char) -> bool {
    matches!(c, '。' | '！' | '？' | '．' | '｡')
}

/// The words of a question as a snippet looks for them in a text: cut as
/// the keyword indexes cut them ([`lowercase_words`]: text without spaces as
/// pairs of characters), stemmed, stopwords left out, each said once.
pub fn searched_words(question: &str) -> Vec<String> {
    let mut distinct: Vec<String> = Vec::new();
    for word in lowercase_words(question) {
        if kts_store::is_stopword(&word) {
            continue;
        }
        let word = stem(&word).to_string();
        if !distinct.contains(&word) {
            distinct.push(word);
        }
    }
    distinct
}

/// The words matched in a run of text written without spaces, which does not
/// show where its words end: its pairs of neighbouring characters (`年假制度`
/// → `年假`, `假制`, `制度`), or its one character.
pub fn unspaced_words(run: &str) -> Vec<String> {
    let chars: Vec<char> = run.chars().collect();
    match chars.len() {
        0 | 1 => vec![run.to_string()],
        _ => chars.windows(2).map(|pair| pair.iter().collect()).collect(),
    }
}

/// `word` cut where it passes between a script written without spaces and another.
pub fn script_runs(word: &str) -> impl Iterator<Item = &str> {
    let mut rest = word;
    std::iter::from_fn(move || {
        let first = rest.chars().next()?;
        let end = rest
            .char_indices()
            .find(|&(_, c)| unspaced(c) != unspaced(first))
            .map_or(rest.len(), |(at, _)| at);
        let (run, after) = rest.split_at(end);
        rest = after;
        Some(run)
    })
}

/// A crude stem: one common English suffix removed, at least 3 letters left.
pub fn stem(word: &str) -> &str {
    const SUFFIXES: &[&str] = &[
        "ations", "ation", "ments", "ment", "ings", "ing", "ies", "ied", "ed", "es", "s", "ly",
        "er", "e", "y",
    ];
    // Compared byte by byte: this runs on every word of every candidate, and
    // a library comparison call per suffix would cost more than the comparison.
    let bytes = word.as_bytes();
    SUFFIXES
        .iter()
        .find_map(|suffix| {
            let suffix = suffix.as_bytes();
            let cut = bytes.len().checked_sub(suffix.len())?;
            if !bytes[cut..].iter().zip(suffix).all(|(a, b)| a == b) {
                return None;
            }
            // The suffix matched and is ASCII: `cut` is a character boundary.
            let rest = &word[..cut];
            (rest.chars().count() >= 3).then_some(rest)
        })
        .unwrap_or(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_of_a_word_meet() {
        for family in [
            ["approves", "approved", "approve"],
            ["fixing", "fixes", "fix"],
            ["tokens", "token", "token"],
        ] {
            assert!(
                family.iter().all(|w| stem(w) == stem(family[2])),
                "{family:?}"
            );
        }
    }

    #[test]
    fn words_of_other_scripts_are_cut_only_at_a_suffix() {
        assert_eq!(stem("전문"), "전문");
        assert_eq!(stem("전문가s"), "전문가");
        assert_eq!(stem("café"), "café");
    }

    #[test]
    fn text_without_spaces_is_searched_by_pairs_of_characters() {
        assert_eq!(
            searched_words("Wie viele Tage 年假制度 gibt es? 假"),
            [
                "wie", "viel", "tag", "年假", "假制", "制度", "gibt", "es", "假"
            ]
        );
        assert_eq!(searched_words("the API接口s"), ["api", "接口", "s"]);
    }
}
