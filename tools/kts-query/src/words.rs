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
}
