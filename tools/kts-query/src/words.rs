//! Words and word forms shared by planning, ranking, routing and the evidence check.

/// Lowercase words, split at anything that is not a letter or digit.
pub fn lowercase_words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// A crude stem: one common English suffix removed, at least 3 letters left.
pub fn stem(word: &str) -> &str {
    const SUFFIXES: &[&str] = &[
        "ations", "ation", "ments", "ment", "ings", "ing", "ies", "ied", "ed", "es", "s", "ly",
        "er", "e", "y",
    ];
    SUFFIXES
        .iter()
        .find_map(|suffix| {
            word.strip_suffix(suffix)
                .filter(|rest| rest.chars().count() >= 3)
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
}
