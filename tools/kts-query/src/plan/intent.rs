//! What kind of document a question asks for, from its wording.

/// An intent: the phrases that signal it and the document types that answer it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Intent {
    pub name: &'static str,
    pub phrases: &'static [&'static str],
    pub doc_types: &'static [&'static str],
}

/// In order of precedence: "how do I fix E42" is a troubleshooting question.
/// FAQs may answer any of them.
pub const INTENTS: &[Intent] = &[
    Intent {
        name: "troubleshoot",
        phrases: &[
            "troubleshoot",
            "fix",
            "error",
            "fails",
            "failing",
            "failed",
            "not working",
            "doesn't work",
            "broken",
            "crash",
            "unable to",
            "cannot",
            "can't",
        ],
        doc_types: &["TROUBLESHOOT", "FAQ"],
    },
    Intent {
        name: "policy",
        phrases: &[
            "policy",
            "policies",
            "am i allowed",
            "are we allowed",
            "is it allowed",
            "permitted",
            "compliance",
            "mandatory",
        ],
        doc_types: &["POLICY", "FAQ"],
    },
    Intent {
        name: "procedure",
        phrases: &[
            "how do i",
            "how do you",
            "how can i",
            "how to",
            "how should i",
            "steps to",
            "procedure",
            "runbook",
            "checklist",
        ],
        doc_types: &["SOP", "GUIDE", "FAQ"],
    },
    Intent {
        name: "definition",
        phrases: &[
            "what is",
            "what are",
            "what does",
            "define",
            "definition of",
            "meaning of",
            "stand for",
            "stands for",
        ],
        doc_types: &["REFERENCE", "FAQ"],
    },
];

/// The first intent whose phrases the question contains (as whole words).
pub fn intent_of(question: &str) -> Option<(&'static Intent, &'static str)> {
    let text = format!(" {} ", normalise(question));
    INTENTS.iter().find_map(|intent| {
        intent
            .phrases
            .iter()
            .find(|phrase| text.contains(&format!(" {phrase} ")))
            .map(|phrase| (intent, *phrase))
    })
}

/// Lowercase words separated by single spaces (apostrophes kept).
fn normalise(text: &str) -> String {
    text.to_lowercase()
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(question: &str) -> Option<&'static str> {
        intent_of(question).map(|(intent, _)| intent.name)
    }

    #[test]
    fn intents_follow_the_wording() {
        assert_eq!(name("How do I fix AUTH401 on ToolX?"), Some("troubleshoot"));
        assert_eq!(name("How do I request a laptop?"), Some("procedure"));
        assert_eq!(name("What is the travel policy?"), Some("policy"));
        assert_eq!(name("What does SLA stand for"), Some("definition"));
        assert_eq!(name("quarterly revenue 2024"), None);
        assert_eq!(name("the prefix errorless"), None);
        assert_eq!(name("Login can't connect"), Some("troubleshoot"));
    }
}
