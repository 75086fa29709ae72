//! Query understanding: a question becomes the queries the retrievers run.
//! Decomposition splits it into parts (plus a step-back question), self-query
//! filters turn intent words and known error codes or systems into metadata
//! filters, and expansion adds acronyms' expansions and synonyms. Each step
//! notes what it did, for `--explain`.

pub mod decompose;
pub mod intent;
pub mod lexicon;

use kts_graph::extract::{EntityKind, Extractor};
use kts_store::{Filters, query_terms};

use crate::steps::{Step, Steps};
use crate::words::lowercase_words;
use intent::{INTENTS, Intent, intent_of};
use lexicon::{KnownEntity, Lexicon};

/// Longest entity name looked up in the scope's graph, in words.
const MAX_NAME_WORDS: usize = 4;

/// Why a query runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The question as asked.
    Question,
    /// One part of a multi-part question.
    Part,
    /// A more general question about the question's main entity.
    StepBack,
}

/// One query the retrievers run.
#[derive(Clone, Debug, PartialEq)]
pub struct SubQuery {
    pub role: Role,
    /// The words searched by BM25: the query's words (without those turned
    /// into filters), plus expansions and synonyms.
    pub search_text: String,
    /// The words searched by BM25 when the filters are dropped (those turned
    /// into filters kept).
    pub unfiltered_text: String,
    /// The text embedded for vector search: the query plus acronym expansions.
    pub embed_text: String,
    /// Only these document types (from the question's intent), when not empty.
    pub doc_types: Vec<String>,
    /// Only documents naming these entities (error codes, systems), when not empty.
    pub entities: Vec<String>,
    pub filters: Filters,
}

/// What a step did.
#[derive(Clone, Debug, PartialEq)]
pub struct Note {
    pub step: &'static str,
    pub detail: String,
}

/// The queries for one question and what ranking needs to know about it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    pub queries: Vec<SubQuery>,
    /// The question's intent, when its words show one.
    pub intent: Option<&'static Intent>,
    /// Error codes the question names (as written, uppercase).
    pub error_codes: Vec<String>,
    /// Names (lowercase) of the scope's entities the question names.
    pub entities: Vec<String>,
    /// The question's content words.
    pub terms: Vec<String>,
    /// Each part's content words, when the question was decomposed.
    pub part_terms: Vec<Vec<String>>,
    /// What the question wants word for word (lowercase): what it puts in
    /// double quotes, and its words joined by dots and the like.
    pub phrases: Vec<String>,
    /// The acronyms the question asks the meaning of ("what does RPIT stand for").
    pub asked_acronyms: Vec<String>,
    pub notes: Vec<Note>,
}

impl Plan {
    fn note(&mut self, step: Step, detail: String) {
        self.notes.push(Note {
            step: step.name(),
            detail,
        });
    }
}

/// Everything planning reads besides the question.
pub struct Planner<'a> {
    pub lexicon: Lexicon<'a>,
    pub steps: &'a Steps,
    /// The filters the user gave (`--doc-type`); intent never overrides them.
    pub user_filters: &'a Filters,
    /// The document types the scope has.
    pub doc_types: &'a [String],
    pub extractor: &'a Extractor,
}

impl<'a> Planner<'a> {
    pub fn new(
        lexicon: Lexicon<'a>,
        steps: &'a Steps,
        user_filters: &'a Filters,
        doc_types: &'a [String],
        extractor: &'a Extractor,
    ) -> Planner<'a> {
        Planner {
            lexicon,
            steps,
            user_filters,
            doc_types,
            extractor,
        }
    }

    pub fn plan(&self, question: &str) -> anyhow::Result<Plan> {
        let mut plan = Plan {
            intent: intent_of(question).map(|(intent, _)| intent),
            terms: query_terms(question),
            phrases: wanted_word_for_word(question),
            asked_acronyms: acronyms(question)
                .into_iter()
                .filter(|acronym| asks_about(question, acronym))
                .collect(),
            ..Plan::default()
        };
        let known = self.lexicon.known(&candidate_names(question))?;
        plan.error_codes = self.error_codes(question, &known, plan.intent.is_some());
        plan.entities = known.iter().map(|e| e.words.to_lowercase()).collect();
        plan.entities.dedup();

        let mut texts = vec![(Role::Question, question.trim().to_string())];
        if self.steps.on(Step::Decompose) {
            let parts = decompose::parts(question);
            if parts.len() > 1 {
                plan.note(
                    Step::Decompose,
                    format!("{} parts: {}", parts.len(), parts.join(" | ")),
                );
                // The parts stand for the question: the whole of it would
                // favour documents touching every part a little.
                plan.part_terms = parts.iter().map(|part| query_terms(part)).collect();
                texts = parts.into_iter().map(|part| (Role::Part, part)).collect();
            }
        }
        if self.steps.on(Step::StepBack)
            && let Some(entity) = main_entity(&known)
        {
            let text = format!("what is {}", entity.words);
            plan.note(Step::StepBack, format!("\"{text}\""));
            texts.push((Role::StepBack, text));
        }
        for (role, text) in texts {
            let query = self.sub_query(&mut plan, role, &text, &known)?;
            plan.queries.push(query);
        }
        Ok(plan)
    }

    fn sub_query(
        &self,
        plan: &mut Plan,
        role: Role,
        text: &str,
        known: &[KnownEntity],
    ) -> anyhow::Result<SubQuery> {
        let mut filters = self.user_filters.clone();
        let mut removed = Vec::new();
        let mut doc_types = Vec::new();
        let mut entities = Vec::new();
        if self.steps.on(Step::Filters) {
            let intent = match role {
                Role::StepBack => INTENTS.iter().find(|i| i.name == "definition"),
                _ => intent_of(text).map(|(intent, _)| intent),
            };
            if let (Some(intent), true) = (intent, filters.doc_types.is_empty()) {
                doc_types = intent
                    .doc_types
                    .iter()
                    .filter(|t| self.doc_types.iter().any(|present| present == *t))
                    .map(|t| t.to_string())
                    .collect();
                if !doc_types.is_empty() {
                    plan.note(
                        Step::Filters,
                        format!("intent {} → doc_type {}", intent.name, doc_types.join("|")),
                    );
                    filters.doc_types = doc_types.clone();
                }
            }
            let named: Vec<&KnownEntity> = known
                .iter()
                .filter(|e| e.kind == "ERROR_CODE" || e.kind == "SYSTEM")
                .filter(|e| written_as_identifier(&e.words) && contains_words(text, &e.words))
                .collect();
            // Only a question (with an intent) about a code or system is
            // narrowed to it: a statement that names one ("APOE4 expression
            // in neurons ...") is about more than the documents naming it.
            if role != Role::StepBack && intent.is_some() && !named.is_empty() {
                let docs = self.lexicon.documents_naming(&named)?;
                entities = named.iter().map(|e| e.words.clone()).collect();
                plan.note(
                    Step::Filters,
                    format!(
                        "{} → {} document(s), removed from the words searched",
                        entities.join(", "),
                        docs.len()
                    ),
                );
                removed = named.iter().map(|e| e.words.clone()).collect();
                filters.doc_ids = Some(docs);
            }
        }
        let mut embed_text = text.to_string();
        let mut expansions = Vec::new();
        if self.steps.on(Step::Acronyms) {
            let mut added = Vec::new();
            for acronym in acronyms(text) {
                let asked = asks_about(text, &acronym);
                for expansion in self.lexicon.expansions(&acronym, asked)? {
                    if !contains_words(text, &expansion) {
                        plan.note(Step::Acronyms, format!("{acronym} → {expansion}"));
                        added.push(expansion);
                    }
                }
            }
            if !added.is_empty() {
                embed_text = format!("{embed_text} ({})", added.join("; "));
            }
            expansions.extend(added);
        }
        if self.steps.on(Step::Synonyms) {
            let mut added = Vec::new();
            for term in query_terms(text) {
                for synonym in self.lexicon.synonyms(&term)? {
                    if !contains_words(text, &synonym) && !added.contains(&synonym) {
                        plan.note(Step::Synonyms, format!("{term} → {synonym}"));
                        added.push(synonym);
                    }
                }
            }
            expansions.extend(added);
        }
        let unfiltered_text = [text.to_string()]
            .into_iter()
            .chain(expansions.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ");
        let search_text = removed.iter().fold(unfiltered_text.clone(), |text, words| {
            remove_words(&text, words)
        });
        Ok(SubQuery {
            role,
            search_text,
            unfiltered_text,
            embed_text,
            doc_types,
            entities,
            filters,
        })
    }

    /// Codes the question names: those the extractor recognises (an error
    /// word or prefix makes them codes) and, in a question with an intent,
    /// those the scope's documents know as error codes.
    fn error_codes(&self, question: &str, known: &[KnownEntity], asking: bool) -> Vec<String> {
        let mut codes: Vec<String> = self
            .extractor
            .extract(question)
            .mentions
            .into_iter()
            .filter(|m| m.kind == EntityKind::ErrorCode)
            .map(|m| m.name)
            .collect();
        for entity in known.iter().filter(|e| asking && e.kind == "ERROR_CODE") {
            if !codes.iter().any(|c| c.eq_ignore_ascii_case(&entity.words)) {
                codes.push(entity.words.clone());
            }
        }
        codes
    }
}

/// Names the question might use for a known entity: its word n-grams in
/// lowercase, tokens as written in uppercase (error code keys), and
/// plural tokens made singular (acronym keys).
fn candidate_names(question: &str) -> Vec<(String, String)> {
    let tokens: Vec<&str> = question
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|w| !w.is_empty())
        .collect();
    let mut names: Vec<(String, String)> = Vec::new();
    let mut push = |key: String, words: String| {
        if !names.iter().any(|(k, _)| *k == key) {
            names.push((key, words));
        }
    };
    for start in 0..tokens.len() {
        for len in 1..=MAX_NAME_WORDS.min(tokens.len() - start) {
            let words = tokens[start..start + len].join(" ");
            let lower = words.to_lowercase();
            if len == 1 && kts_store::is_stopword(&lower) {
                continue;
            }
            push(lower, words);
        }
        let token = tokens[start];
        push(token.to_uppercase(), token.to_string());
        if let Some(singular) = token.strip_suffix('s').filter(|s| s.len() >= 2) {
            push(singular.to_lowercase(), token.to_string());
        }
    }
    names
}

/// The most specific entity a step-back question is about: an error code,
/// system, term or acronym, the one in the fewest documents.
fn main_entity(known: &[KnownEntity]) -> Option<&KnownEntity> {
    known
        .iter()
        .filter(|e| {
            matches!(
                e.kind.as_str(),
                "ERROR_CODE" | "SYSTEM" | "TERM" | "ACRONYM"
            )
        })
        .min_by(|a, b| {
            a.documents
                .cmp(&b.documents)
                .then(b.words.len().cmp(&a.words.len()))
        })
}

/// Whether words look like a code or a product name rather than prose: a
/// capital after the first letter, or a digit (AuthService, AUTH401, ToolX),
/// so a question's "Activation" does not match a system written "ActIVatIOn".
fn written_as_identifier(words: &str) -> bool {
    words
        .chars()
        .skip(1)
        .any(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

/// Words written like acronyms: two to eight letters or digits, at least two
/// capitals and no lowercase letter except a plural `s` (SLA, VPNs, IL6).
fn acronyms(text: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(|c: char| c.is_alphanumeric()) {
        let tail = &rest[start..];
        let end = tail
            .find(|c: char| !c.is_alphanumeric())
            .unwrap_or(tail.len());
        let (word, after) = tail.split_at(end);
        rest = after;
        // "PD-1" names a protein, not the acronym PD; "(SLA)" after its expansion is defined.
        let glued_to_number =
            after.starts_with('-') && after[1..].starts_with(|c: char| c.is_ascii_digit());
        let defined_here =
            text[..text.len() - after.len() - word.len()].ends_with('(') && after.starts_with(')');
        if glued_to_number || defined_here {
            continue;
        }
        let stem = word.strip_suffix('s').unwrap_or(word);
        let capitals = stem.chars().filter(char::is_ascii_uppercase).count();
        let acronym = (2..=8).contains(&stem.len())
            && capitals >= 2
            && stem
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
            && stem.starts_with(|c: char| c.is_ascii_uppercase());
        if acronym && !found.iter().any(|f| f == stem) {
            found.push(stem.to_string());
        }
    }
    found
}

/// Whether the question asks what `acronym` is or stands for ("what does
/// TAIT stand for", "what is an SLA", "define CTFE", "meaning of UFCS").
/// Such a question's answer names the expansion; in any other question the
/// documents that answer it mostly write the acronym as the question does,
/// and an expansion pulls the search away from them (SciFact's claims: HIV,
/// LDL, MAPK).
fn asks_about(question: &str, acronym: &str) -> bool {
    const DETERMINERS: &[&str] = &["a", "an", "the", "our", "your", "my", "their", "this"];
    let words = lowercase_words(question);
    let acronym = acronym.to_lowercase();
    let is_acronym = |i: usize| {
        words
            .get(i)
            .is_some_and(|w| *w == acronym || w.strip_suffix('s') == Some(acronym.as_str()))
    };
    // The word at `i`, past an article or a possessive, is the acronym.
    let names_it = |i: usize| {
        let skip = words
            .get(i)
            .is_some_and(|w| DETERMINERS.contains(&w.as_str()));
        is_acronym(if skip { i + 1 } else { i })
    };
    (0..words.len()).any(|i| {
        let (word, next) = (words[i].as_str(), words.get(i + 1).map(String::as_str));
        match word {
            "what" | "whats" => {
                matches!(next, Some("is" | "are" | "does" | "do" | "s")) && names_it(i + 2)
            }
            "define" => names_it(i + 1),
            "meaning" | "definition" | "expansion" => next == Some("of") && names_it(i + 2),
            _ => {
                is_acronym(i)
                    && matches!(
                        next,
                        Some("stand" | "stands" | "means" | "mean" | "meaning")
                    )
            }
        }
    })
}

/// The phrases between pairs of double quotes (straight or curly), lowercase.
/// What the question wants said word for word: what it puts in double
/// quotes, and what it writes as one word of several joined by dots and the
/// like (`1.2.3`, `alice.smith@example.com`, `std::mem`), which the keyword
/// index splits into words that another order or company matches too.
/// Hyphens are left out: a hyphenated term ("TNF-alpha") has spellings
/// without one, and wanting it word for word lowered SciFact by 0.002.
fn wanted_word_for_word(question: &str) -> Vec<String> {
    let mut phrases = quoted(question);
    for compound in compounds(question) {
        if !phrases.contains(&compound) {
            phrases.push(compound);
        }
    }
    phrases
}

/// The question's words of several words joined without spaces by `.`,
/// `@`, `/`, `:` or `_` (lowercase).
fn compounds(question: &str) -> Vec<String> {
    const JOINERS: &[char] = &['.', '@', '/', ':', '_'];
    question
        .split_whitespace()
        .map(|token| token.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|token| {
            token.contains(JOINERS)
                && token
                    .chars()
                    .all(|c| c.is_alphanumeric() || JOINERS.contains(&c))
                && token
                    .split(|c: char| !c.is_alphanumeric())
                    .filter(|w| !w.is_empty())
                    .count()
                    > 1
        })
        .map(str::to_lowercase)
        .collect()
}

fn quoted(question: &str) -> Vec<String> {
    let pieces: Vec<&str> = question.split(['"', '\u{201C}', '\u{201D}']).collect();
    // Every other piece is between quotes; the last one only if a quote closes it.
    let closed = pieces.len().saturating_sub(1);
    pieces[..closed]
        .iter()
        .skip(1)
        .step_by(2)
        .map(|phrase| phrase.trim().to_lowercase())
        .filter(|phrase| phrase.chars().any(char::is_alphanumeric))
        .collect()
}

/// Whether `text` contains `words` as whole words, ignoring case.
fn contains_words(text: &str, words: &str) -> bool {
    let text = format!(" {} ", word_string(text));
    text.contains(&format!(" {} ", word_string(words)))
}

fn word_string(text: &str) -> String {
    lowercase_words(text).join(" ")
}

/// `text` without the whole-word occurrences of `words` (ignoring case).
fn remove_words(text: &str, words: &str) -> String {
    let target: Vec<String> = word_string(words).split(' ').map(str::to_string).collect();
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let bare = |t: &str| {
        t.trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase()
    };
    let mut kept = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let window = tokens.get(i..i + target.len());
        if window.is_some_and(|w| w.iter().map(|t| bare(t)).eq(target.iter().cloned())) {
            i += target.len();
        } else {
            kept.push(tokens[i]);
            i += 1;
        }
    }
    kept.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_joined_by_dots_and_hyphens_are_wanted_word_for_word() {
        assert_eq!(
            wanted_word_for_word(
                "is \"release 1.2.3\" out? mail alice.smith@example.com about E-5, or 1.2.3."
            ),
            ["release 1.2.3", "1.2.3", "alice.smith@example.com"]
        );
        assert!(wanted_word_for_word("don't use -v or 5GHz, (see below) TNF-alpha").is_empty());
    }

    #[test]
    fn quoted_phrases_are_wanted_word_for_word() {
        assert_eq!(
            quoted("why does \"Connection reset\" follow the \u{201C}rollout stop\u{201D}?"),
            ["connection reset", "rollout stop"]
        );
        assert!(
            quoted("a 12\" screen").is_empty(),
            "one quote is not a phrase"
        );
        assert!(quoted("no quotes at all").is_empty());
        assert!(quoted("an empty \"\" pair").is_empty());
    }

    #[test]
    fn only_a_question_about_an_acronym_asks_about_it() {
        for question in [
            "what does TAIT stand for?",
            "What is an SLA?",
            "what is our SLA",
            "what are GATs",
            "Define CTFE",
            "meaning of UFCS",
            "What's the ABI",
            "RPIT means what?",
        ] {
            let acronym = acronyms(question).remove(0);
            assert!(asks_about(question, &acronym), "{question}");
        }
        for question in [
            "LDL cholesterol has a causal role in cardiovascular disease.",
            "Having a main partner improves HIV outcomes.",
            "What is the role of MAPK in splenomegaly?",
            "how do I reset my VPN password",
        ] {
            let acronym = acronyms(question).remove(0);
            assert!(!asks_about(question, &acronym), "{question}");
        }
    }

    #[test]
    fn acronyms_are_capital_words() {
        assert_eq!(
            acronyms("Is the SLA for VPNs and IL6 in TNF-alpha E.g. Ok"),
            ["SLA", "VPN", "IL6", "TNF"]
        );
        assert!(acronyms("PD-1 blockade in acute myeloid leukemia (AML)").is_empty());
        assert!(acronyms("a Word in Title Case").is_empty());
    }

    #[test]
    fn words_are_matched_and_removed_whole() {
        assert!(contains_words("How do I fix AUTH401?", "auth401"));
        assert!(!contains_words("How do I fix AUTH4011?", "auth401"));
        assert_eq!(
            remove_words("fix AUTH401 on Tool X, then Tool X again", "tool x"),
            "fix AUTH401 on then again"
        );
    }

    #[test]
    fn candidates_cover_phrases_codes_and_plurals() {
        let names: Vec<String> = candidate_names("reset the Token Cache for HSCs")
            .into_iter()
            .map(|(key, _)| key)
            .collect();
        for expected in ["token cache", "hsc", "HSCS", "reset the token"] {
            assert!(
                names.iter().any(|n| n == expected),
                "{expected} in {names:?}"
            );
        }
        assert!(!names.iter().any(|n| n == "the"));
    }
}
