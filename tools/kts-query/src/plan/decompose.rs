//! Rule-based decomposition: a question with several parts becomes one
//! sub-question per part.

/// Words that start a new question inside a sentence ("... and what is ...").
const QUESTION_STARTS: &[&str] = &[
    "what", "how", "who", "when", "where", "why", "which", "is", "are", "can", "does", "do",
    "should", "whom",
];
/// Most parts a question is split into.
const MAX_PARTS: usize = 3;
/// Fewest words a part needs to stand alone.
const MIN_PART_WORDS: usize = 2;

/// The parts of a multi-part question, or the question alone. Parts are
/// split at `?` and `;`, and at "and"/"also"/"then" followed by a question word.
pub fn parts(question: &str) -> Vec<String> {
    let mut parts = Vec::new();
    for sentence in question.split(['?', ';']) {
        let words: Vec<&str> = sentence.split_whitespace().collect();
        let mut start = 0;
        for i in 0..words.len() {
            let joiner = words[i].trim_end_matches(',').to_lowercase();
            let next = words.get(i + 1).map(|w| w.to_lowercase());
            let starts_question = next
                .as_deref()
                .is_some_and(|n| QUESTION_STARTS.contains(&n.trim_matches(',')));
            if matches!(joiner.as_str(), "and" | "also" | "then") && starts_question && i > start {
                parts.push(words[start..i].join(" "));
                start = i + 1;
            }
        }
        parts.push(words[start..].join(" "));
    }
    let parts: Vec<String> = parts
        .into_iter()
        .map(|p| without_joiner(p.trim_matches(|c: char| c == ',' || c.is_whitespace())))
        .filter(|p| p.split_whitespace().count() >= MIN_PART_WORDS)
        .take(MAX_PARTS)
        .collect();
    if parts.len() < 2 {
        return vec![question.trim().to_string()];
    }
    parts
}

/// A part without the "and", "also" or "then" it starts with.
fn without_joiner(part: &str) -> String {
    let first = part.split_whitespace().next().unwrap_or("");
    if matches!(first.to_lowercase().as_str(), "and" | "also" | "then") {
        part[first.len()..].trim_start().to_string()
    } else {
        part.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_questions_become_parts() {
        assert_eq!(
            parts("How do I fix AUTH401 on ToolX and what is the escalation path?"),
            [
                "How do I fix AUTH401 on ToolX",
                "what is the escalation path"
            ]
        );
        assert_eq!(
            parts("Who approves leave? How long does it take?"),
            ["Who approves leave", "How long does it take"]
        );
        assert_eq!(
            parts("reset the VPN token; then how do I log in"),
            ["reset the VPN token", "how do I log in"]
        );
    }

    #[test]
    fn one_question_stays_whole() {
        let q = "What are the terms and conditions of the loan?";
        assert_eq!(parts(q), [q]);
        assert_eq!(parts("salt and pepper"), ["salt and pepper"]);
        assert_eq!(parts("What? Why"), ["What? Why"]);
    }
}
