//! Ranking signals after fusion: how well each candidate chunk fits the
//! question beyond the retrievers' ranks. Each signal is in [0, 1]; a
//! candidate's fused score is multiplied by 1 + Σ weight × signal, and
//! divided by 1 + weight × signal for each [`PENALTIES`] signal.

use std::collections::BTreeMap;

use kts_graph::extract::Extractor;
use kts_store::{Hit, query_terms};

use crate::plan::Plan;
use crate::words::{stem, stems};

/// Every weight of the ranking, with its default: the signals after fusion
/// and the weights of the lists fused. Tuned on SciFact's training queries
/// (kts-eval --split train, hybrid, nDCG@10): coverage 0.2 raised it
/// 0.7217 → 0.7260 (0.1: 0.7227, 0.3: 0.7214); title, entities and density
/// each lowered it (title 0.1: 0.7179, entities 0.1: 0.7160, density 0.2:
/// 0.7171), so they are 0 there, which is no proof they cannot help elsewhere.
/// Error code and intent weights are not measurable on that data (its claims
/// name no error codes and ask no how-to). Proximity 0.3 was measured later,
/// on all three evaluation sets (README, "Defaults follow make eval").
/// `--weight NAME=VALUE` overrides one.
pub const WEIGHTS: &[(&str, f64, &str)] = &[
    (
        "error_code",
        0.5,
        "the chunk contains an error code the question names",
    ),
    (
        "phrase",
        0.5,
        "share of the phrases the question puts in double quotes, or words it joins by dots and the like (1.2.3, a.b@c.com), that the chunk says word for word",
    ),
    (
        "definition",
        0.5,
        "the chunk spells out the acronym the question asks the meaning of",
    ),
    (
        "intent",
        0.1,
        "the document's type answers the question's intent",
    ),
    (
        "named",
        0.5,
        "the question is the document's title (its words, stop words aside)",
    ),
    (
        "title",
        0.0,
        "share of the question's words in the document's title",
    ),
    (
        "entities",
        0.0,
        "share of the question's known entities the chunk names",
    ),
    (
        "coverage",
        0.2,
        "share of the question's words the chunk contains",
    ),
    (
        "rare_coverage",
        0.0,
        "share of the question's words the chunk contains, each word counted by its rarity in the scope (BM25's inverse document frequency)",
    ),
    (
        "proximity",
        0.3,
        "share of the question's neighbouring words that stand close together in the chunk",
    ),
    (
        "density",
        0.0,
        "the question's words per word of the chunk (saturating)",
    ),
    (
        "superseded",
        0.3,
        "the document calls itself deprecated, obsolete, superseded, outdated or archived in its title or folder, and the question does not ask for such documents (divides the score by 1 + weight)",
    ),
    ("bm25", 1.0, "weight in fusion of the BM25 lists"),
    ("vector", 1.0, "weight in fusion of the vector lists"),
    ("part", 1.0, "weight in fusion of each part's lists"),
    (
        "step_back",
        0.5,
        "weight in fusion of the step-back query's lists",
    ),
    (
        "graph",
        0.1,
        "weight in fusion of the knowledge graph's list",
    ),
    (
        "feedback",
        0.5,
        "share of the best fused chunks' mean vector added to the question's (feedback step)",
    ),
];

/// The signals that lower a candidate's score rather than raise it.
const PENALTIES: &[&str] = &["superseded"];

/// Words by which a document says it is no longer current, in its title
/// ("Failover runbook (DEPRECATED, 2022)") or a folder's name.
const SUPERSEDED_MARKS: &[&str] = &["deprecated", "obsolete", "superseded", "outdated"];

/// Folders that hold documents no longer current (`docs/archive/`).
const ARCHIVE_FOLDERS: &[&str] = &["archive", "archived"];

/// The largest weight `--weight` takes: past it, scores overflow.
const MAX_WEIGHT: f64 = 100.0;

/// How many words apart two neighbouring question words may stand in a
/// chunk and still count as said together (one word between them, or two:
/// "prognosis for breast", "disk usage of a folder").
const PROXIMITY_WINDOW: usize = 3;

/// The density at which the density signal reaches one half.
const HALF_DENSITY: f64 = 0.05;

/// The ranking weights in use: the defaults with any overrides.
#[derive(Clone, Debug, PartialEq)]
pub struct Weights(BTreeMap<&'static str, f64>);

impl Default for Weights {
    fn default() -> Self {
        Weights(WEIGHTS.iter().map(|(name, w, _)| (*name, *w)).collect())
    }
}

impl Weights {
    /// The defaults with `NAME=VALUE` overrides; an unknown name is an error.
    pub fn with_overrides(overrides: &[String]) -> anyhow::Result<Weights> {
        let mut weights = Weights::default();
        for text in overrides {
            let (name, value) = text
                .split_once('=')
                .ok_or_else(|| anyhow::anyhow!("--weight {text}: expected NAME=VALUE"))?;
            let value: f64 = value
                .trim()
                .parse()
                .map_err(|_| anyhow::anyhow!("--weight {text}: {value} is not a number"))?;
            let known = WEIGHTS.iter().map(|(n, _, _)| *n).collect::<Vec<_>>();
            let Some(slot) = weights.0.get_mut(name.trim()) else {
                anyhow::bail!(
                    "--weight {text}: no weight {name} (known: {})",
                    known.join(", ")
                );
            };
            anyhow::ensure!(
                (0.0..=MAX_WEIGHT).contains(&value),
                "--weight {text}: a weight is a number from 0 to {MAX_WEIGHT}"
            );
            *slot = value;
        }
        Ok(weights)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&'static str, f64)> + '_ {
        self.0.iter().map(|(name, w)| (*name, *w))
    }

    pub fn get(&self, name: &str) -> f64 {
        self.0.get(name).copied().unwrap_or(0.0)
    }
}

/// The signals of one candidate (only those the question gives a basis for).
/// `rarities` weighs each of the plan's terms, in order (see
/// `Store::rarities`).
pub fn signals(
    plan: &Plan,
    rarities: &[f64],
    hit: &Hit,
    extractor: &Extractor,
) -> Vec<(&'static str, f64)> {
    let mut out = Vec::new();
    let chunk_lower = kts_store::normalized(&hit.text).to_lowercase();
    let chunk_words: Vec<&str> = stems(&chunk_lower).collect();
    if !plan.error_codes.is_empty() {
        let text = hit.text.to_uppercase();
        let found = plan
            .error_codes
            .iter()
            .any(|code| contains_token(&text, &code.to_uppercase()));
        out.push(("error_code", f64::from(u8::from(found))));
    }
    if !plan.asked_acronyms.is_empty() {
        let spelled = plan
            .asked_acronyms
            .iter()
            .any(|acronym| extractor.spells_out(&hit.text, acronym));
        out.push(("definition", f64::from(u8::from(spelled))));
    }
    if let Some(intent) = plan.intent {
        let matches = intent.doc_types.contains(&hit.doc_type.as_str());
        out.push(("intent", f64::from(u8::from(matches))));
    }
    let terms: Vec<&str> = plan.terms.iter().map(|t| stem(t)).collect();
    if !terms.is_empty() {
        // A chunk answering one part of a decomposed question covers that part.
        let term_sets: Vec<Vec<&str>> = std::iter::once(terms.clone())
            .chain(
                plan.part_terms
                    .iter()
                    .map(|part| part.iter().map(|t| stem(t)).collect()),
            )
            .filter(|set: &Vec<&str>| !set.is_empty())
            .collect();
        let best_share = |words: &[&str]| {
            term_sets
                .iter()
                .map(|set| share(set, words))
                .fold(0.0, f64::max)
        };
        let title_lower = kts_store::normalized(&hit.title).to_lowercase();
        let title_words: Vec<&str> = stems(&title_lower).collect();
        out.push(("title", best_share(&title_words)));
        out.push((
            "named",
            f64::from(u8::from(names_title(&terms, &hit.title))),
        ));
        out.push(("coverage", best_share(&chunk_words)));
        out.push((
            "rare_coverage",
            weighted_share(&terms, rarities, &chunk_words),
        ));
        if terms.len() > 1 {
            out.push(("proximity", proximity(&terms, &chunk_words)));
        }
        let hits = chunk_words.iter().filter(|w| terms.contains(w)).count() as f64;
        let density = hits / chunk_words.len().max(1) as f64;
        out.push(("density", density / (density + HALF_DENSITY)));
    }
    if is_superseded(hit) && !asks_for_superseded(plan) {
        out.push(("superseded", 1.0));
    }
    if !plan.phrases.is_empty() {
        let said = plan
            .phrases
            .iter()
            .filter(|phrase| {
                let phrase = kts_store::normalized(phrase);
                let words: Vec<&str> = stems(&phrase).collect();
                chunk_words.windows(words.len()).any(|w| w == words)
            })
            .count();
        out.push(("phrase", said as f64 / plan.phrases.len() as f64));
    }
    if !plan.entities.is_empty() {
        let text = format!(" {} ", chunk_words.join(" "));
        let named = plan
            .entities
            .iter()
            .filter(|e| {
                let lower = kts_store::normalized(e).to_lowercase();
                let words: Vec<&str> = stems(&lower).collect();
                text.contains(&format!(" {} ", words.join(" ")))
            })
            .count();
        out.push(("entities", named as f64 / plan.entities.len() as f64));
    }
    out
}

/// Whether the question's terms are the title's, no more and no fewer: the
/// question names the document, as one who types a page's name looks for it.
/// A title's numbers need not be typed beside its words: `0001 private
/// fields`, the title a file `0001-private-fields.md` gives, is named by
/// "private fields".
fn names_title(terms: &[&str], title: &str) -> bool {
    let title_terms = query_terms(title);
    let title_terms: Vec<&str> = title_terms.iter().map(|t| stem(t)).collect();
    let worded: Vec<&str> = (title_terms.iter().copied())
        .filter(|t| t.chars().any(char::is_alphabetic))
        .collect();
    let required = if worded.is_empty() {
        &title_terms
    } else {
        &worded
    };
    !required.is_empty() && share(terms, &title_terms) == 1.0 && share(required, terms) == 1.0
}

/// Whether the document marks itself as no longer current: its title says
/// so as a label (in capitals, in brackets, or before a colon: not "Deprecated
/// APIs", a list that is current), or a folder it is in is named so.
fn is_superseded(hit: &Hit) -> bool {
    let is_mark = |word: &str, marks: &[&str]| marks.iter().any(|m| word.eq_ignore_ascii_case(m));
    let folders = hit.path.rsplit_once('/').map_or("", |(folders, _)| folders);
    let in_folder = folders
        .split(|c: char| !c.is_alphanumeric())
        .any(|word| is_mark(word, SUPERSEDED_MARKS) || is_mark(word, ARCHIVE_FOLDERS));
    in_folder || labels_superseded(&hit.title, |word| is_mark(word, SUPERSEDED_MARKS))
}

/// Whether a title holds a mark as a label: in capitals, within brackets, or
/// followed by a colon.
fn labels_superseded(title: &str, is_mark: impl Fn(&str) -> bool) -> bool {
    let mut depth = 0usize;
    let mut word_start = None;
    for (at, c) in title.char_indices().chain([(title.len(), ' ')]) {
        if c.is_alphanumeric() {
            word_start.get_or_insert(at);
            continue;
        }
        if let Some(start) = word_start.take() {
            let word = &title[start..at];
            let labelled = depth > 0 || c == ':' || word.chars().all(|c| c.is_uppercase());
            if labelled && is_mark(word) {
                return true;
            }
        }
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// Whether the question asks for documents that are no longer current
/// ("which endpoints are deprecated", "the archived runbook").
fn asks_for_superseded(plan: &Plan) -> bool {
    let marks = || SUPERSEDED_MARKS.iter().chain(ARCHIVE_FOLDERS);
    plan.terms
        .iter()
        .any(|term| marks().any(|m| stem(term) == stem(m)))
}

/// The factor a candidate's fused score is multiplied by.
pub fn boost(signals: &[(&'static str, f64)], weights: &Weights) -> f64 {
    let sum = |penalties: bool| {
        signals
            .iter()
            .filter(|(name, _)| PENALTIES.contains(name) == penalties)
            .map(|(name, value)| weights.get(name) * value)
            .sum::<f64>()
    };
    (1.0 + sum(false)) / (1.0 + sum(true))
}

/// The share of `terms` found among `words` (a question has few terms: a
/// plain scan, where most words differ in length, beats hashing every word).
fn share(terms: &[&str], words: &[&str]) -> f64 {
    let found = terms.iter().filter(|t| words.contains(t)).count();
    found as f64 / terms.len() as f64
}

/// The share of `terms` found among `words`, each term counted by its
/// weight (the terms count alike when the weights are missing or all zero).
fn weighted_share(terms: &[&str], weights: &[f64], words: &[&str]) -> f64 {
    let weight = |i: usize| {
        if weights.len() == terms.len() && weights.iter().any(|w| *w > 0.0) {
            weights[i].max(0.0)
        } else {
            1.0
        }
    };
    let total: f64 = (0..terms.len()).map(weight).sum();
    let found: f64 = (0..terms.len())
        .filter(|&i| words.contains(&terms[i]))
        .map(weight)
        .sum();
    if total > 0.0 { found / total } else { 0.0 }
}

/// The share of the question's neighbouring pairs of terms that occur
/// within [`PROXIMITY_WINDOW`] words of each other (in either order) in
/// `words`: the chunk says them together, not only somewhere.
fn proximity(terms: &[&str], words: &[&str]) -> f64 {
    let positions: Vec<Vec<usize>> = terms
        .iter()
        .map(|term| {
            words
                .iter()
                .enumerate()
                .filter(|(_, word)| *word == term)
                .map(|(at, _)| at)
                .collect()
        })
        .collect();
    let close = positions
        .windows(2)
        .filter(|pair| {
            pair[0]
                .iter()
                .any(|a| pair[1].iter().any(|b| a.abs_diff(*b) <= PROXIMITY_WINDOW))
        })
        .count();
    close as f64 / (terms.len() - 1) as f64
}

/// Whether `token` occurs in `text` not glued to other letters or digits.
fn contains_token(text: &str, token: &str) -> bool {
    text.match_indices(token).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + token.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::intent::INTENTS;

    fn hit(title: &str, doc_type: &str, text: &str) -> Hit {
        Hit {
            rowid: 1,
            chunk_id: "c".into(),
            doc_id: "d".into(),
            path: "p.md".into(),
            title: title.into(),
            doc_type: doc_type.into(),
            text: text.into(),
            heading_path: Vec::new(),
            start: 0,
            end: text.len(),
            page: None,
            slide: None,
        }
    }

    fn plan() -> Plan {
        Plan {
            intent: INTENTS.iter().find(|i| i.name == "troubleshoot"),
            error_codes: vec!["AUTH401".into()],
            entities: vec!["token cache".into()],
            terms: vec!["fix".into(), "auth401".into(), "tokens".into()],
            ..Plan::default()
        }
    }

    /// One signal of a chunk of `text`, if the question gave it a basis.
    fn signal(plan: &Plan, text: &str, name: &str) -> Option<f64> {
        signals(
            plan,
            &[],
            &hit("", "GENERAL", text),
            &Extractor::new(&[], &[]),
        )
        .into_iter()
        .find(|(n, _)| *n == name)
        .map(|(_, value)| value)
    }

    #[test]
    fn proximity_counts_the_question_words_said_together() {
        let plan = Plan {
            terms: vec!["breast".into(), "cancer".into(), "prognosis".into()],
            ..Plan::default()
        };
        let proximity = |text: &str| signal(&plan, text, "proximity");
        assert_eq!(
            proximity("The prognosis of breast cancer patients."),
            Some(1.0)
        );
        assert_eq!(
            proximity(
                "Breast cancer is common; the prognosis, in a study of many thousands, was poor."
            ),
            Some(0.5),
            "breast cancer together, prognosis far from cancer"
        );
        assert_eq!(proximity("Cancer of the liver; breast tissue."), Some(0.0));
        let one_word = Plan {
            terms: vec!["cancer".into()],
            ..Plan::default()
        };
        assert_eq!(signal(&one_word, "cancer", "proximity"), None);
    }

    #[test]
    fn a_quoted_phrase_counts_where_the_chunk_says_it_word_for_word() {
        let plan = Plan {
            terms: vec!["rollout".into(), "stop".into(), "changes".into()],
            phrases: vec!["rollout stop".into()],
            ..Plan::default()
        };
        let phrase = |text: &str| signal(&plan, text, "phrase");
        assert_eq!(
            phrase("During a Rollout-Stops window no change ships."),
            Some(1.0)
        );
        assert_eq!(phrase("Stop the rollout: no change ships."), Some(0.0));
        let unquoted = Plan {
            phrases: Vec::new(),
            ..plan.clone()
        };
        assert_eq!(signal(&unquoted, "rollout stop", "phrase"), None);
    }

    #[test]
    fn a_question_that_is_a_documents_title_names_it() {
        let plan = |question: &str| Plan {
            terms: query_terms(question),
            ..Plan::default()
        };
        let named = |question: &str, title: &str| {
            signals(
                &plan(question),
                &[],
                &hit(title, "GENERAL", "text"),
                &Extractor::new(&[], &[]),
            )
            .into_iter()
            .find(|(n, _)| *n == "named")
            .map(|(_, value)| value)
        };
        assert_eq!(named("adb", "adb"), Some(1.0));
        assert_eq!(
            named("the ADB", "adb"),
            Some(1.0),
            "stop words and case aside"
        );
        assert_eq!(named("adb", "adb pair"), Some(0.0), "a longer title");
        assert_eq!(named("adb pair", "adb"), Some(0.0), "a longer question");
        assert_eq!(named("adb", ""), Some(0.0));
        assert_eq!(
            named("const generics", "2000 const generics"),
            Some(1.0),
            "a title's numbers need not be typed"
        );
        assert_eq!(
            named("2000 const generics", "2000 const generics"),
            Some(1.0)
        );
        assert_eq!(
            named("2001 const generics", "2000 const generics"),
            Some(0.0)
        );
        assert_eq!(named("404", "404"), Some(1.0), "a title of numbers alone");
    }

    #[test]
    fn a_chunk_spelling_out_the_acronym_asked_about_is_a_definition() {
        let plan = Plan {
            terms: vec!["rpit".into(), "stand".into()],
            asked_acronyms: vec!["RPIT".into()],
            ..Plan::default()
        };
        let definition = |text: &str| signal(&plan, text, "definition");
        assert_eq!(
            definition("Return position impl Trait (RPIT) hides the type."),
            Some(1.0)
        );
        assert_eq!(definition("RPIT captures every lifetime."), Some(0.0));
        let not_asked = Plan {
            asked_acronyms: Vec::new(),
            ..plan.clone()
        };
        assert_eq!(
            signal(
                &not_asked,
                "Return position impl Trait (RPIT)",
                "definition"
            ),
            None
        );
    }

    #[test]
    fn signals_measure_the_fit() {
        let good = hit(
            "Fixing AUTH401",
            "TROUBLESHOOT",
            "To fix AUTH401, clear the token cache: tokens expire.",
        );
        let seen: BTreeMap<_, _> = signals(&plan(), &[], &good, &Extractor::new(&[], &[]))
            .into_iter()
            .collect();
        assert_eq!(seen["error_code"], 1.0);
        assert_eq!(seen["intent"], 1.0);
        assert!(
            (seen["title"] - 2.0 / 3.0).abs() < 1e-9,
            "fix and AUTH401, not tokens: {seen:?}"
        );
        assert_eq!(seen["coverage"], 1.0);
        assert_eq!(seen["entities"], 1.0);

        let poor = hit("Lunch", "GENERAL", "AUTH4011 is a product number.");
        let seen = signals(&plan(), &[], &poor, &Extractor::new(&[], &[]));
        let by_name: BTreeMap<_, _> = seen.iter().cloned().collect();
        assert_eq!(by_name["error_code"], 0.0);
        assert_eq!(by_name["intent"], 0.0);
        assert_eq!(by_name["coverage"], 0.0);
        assert_eq!(
            boost(&seen, &Weights::default()),
            1.0,
            "nothing matched, nothing added: {seen:?}"
        );
    }

    #[test]
    fn a_document_marked_as_no_longer_current_is_ranked_lower() {
        let plan = |question: &str| Plan {
            terms: query_terms(question),
            ..Plan::default()
        };
        let factor = |question: &str, title: &str, path: &str| {
            let hit = Hit {
                path: path.into(),
                ..hit(title, "GENERAL", "Fail over the ledger database.")
            };
            boost(
                &signals(&plan(question), &[], &hit, &Extractor::new(&[], &[])),
                &Weights::default(),
            )
        };
        let current = factor(
            "ledger failover",
            "Ledger failover runbook",
            "runbooks/a.md",
        );
        for (title, path) in [
            (
                "Ledger failover runbook (DEPRECATED, 2022)",
                "runbooks/b.md",
            ),
            ("Ledger failover runbook", "docs/Archive/b.md"),
            ("Obsolete: ledger failover", "b.md"),
            ("[outdated] Ledger failover", "b.md"),
        ] {
            let marked = factor("ledger failover", title, path);
            assert!(
                (marked * 1.3 - current).abs() < 1e-9,
                "{title} in {path}: {marked} against {current}"
            );
        }
        for (title, path) in [
            ("Ledger failover runbook", "archives-of-2022/b.md"),
            ("Deprecated ledger failover settings", "b.md"),
            ("Ledger failover: what is deprecated", "b.md"),
        ] {
            assert_eq!(
                factor("ledger failover", title, path),
                current,
                "not a label: {title} in {path}"
            );
        }
        assert_eq!(
            factor(
                "deprecated ledger failover",
                "Failover (deprecated)",
                "b.md"
            ),
            factor("deprecated ledger failover", "Failover", "b.md"),
            "asked for"
        );
    }

    #[test]
    fn rare_coverage_counts_the_rare_words_more() {
        let plan = Plan {
            terms: vec!["request".into(), "new".into(), "monitor".into()],
            ..Plan::default()
        };
        let rare = |rarities: &[f64], text: &str| {
            signals(
                &plan,
                rarities,
                &hit("", "GENERAL", text),
                &Extractor::new(&[], &[]),
            )
            .into_iter()
            .find(|(n, _)| *n == "rare_coverage")
            .map(|(_, value)| value)
        };
        let text = "To request a new laptop, file a ticket.";
        assert_eq!(rare(&[1.0, 0.5, 2.5], text), Some(0.375));
        assert_eq!(
            rare(&[], text),
            Some(2.0 / 3.0),
            "without rarities, every word counts alike"
        );
        assert_eq!(rare(&[1.0, 0.5, 2.5], "A new monitor"), Some(0.75));
    }

    #[test]
    fn overrides_are_checked() {
        let weights = Weights::with_overrides(&["title=0.7".into()]).unwrap();
        assert_eq!(weights.get("title"), 0.7);
        assert!(Weights::with_overrides(&["nope=1".into()]).is_err());
        assert!(Weights::with_overrides(&["title".into()]).is_err());
        assert!(Weights::with_overrides(&["title=-1".into()]).is_err());
    }
}
