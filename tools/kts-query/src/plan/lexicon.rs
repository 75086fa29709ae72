//! What a scope knows about its own words: acronyms with their expansions,
//! synonyms, and the error codes and systems its documents name. It comes
//! from the scope's config (`DIR/.kts/config.toml`, section `[query]`), the
//! graph tables kts-graph fills, and a small built-in synonym list.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;
use rusqlite::{Connection, params};
use serde::Deserialize;

/// Synonyms every scope gets: groups of words a question and a document use
/// for the same thing.
const BUILT_IN_SYNONYMS: &[&[&str]] = &[
    &["error", "failure", "fault"],
    &["fix", "resolve", "repair"],
    &["delete", "remove"],
    &["login", "logon", "signin"],
    &["password", "passphrase"],
    &["setup", "install", "installation"],
    &["configure", "configuration", "settings"],
    &["start", "launch"],
    &["stop", "halt"],
    &["restart", "reboot"],
    &["crash", "panic"],
    &["slow", "latency"],
    &["employee", "staff"],
    &["manager", "supervisor"],
    &["vacation", "leave", "holiday"],
    &["reimbursement", "expense"],
    &["contract", "agreement"],
];

/// Expansions of one acronym taken from the documents, at most.
const MAX_EXPANSIONS: usize = 2;
/// The share of an acronym's expanding documents (2/3) a reading needs to be used.
const DOMINANT_SHARE_NUMERATOR: i64 = 2;
const DOMINANT_SHARE_DENOMINATOR: i64 = 3;
/// Corpus definitions this short (in words) count as synonyms of the term.
const SYNONYM_DEFINITION_WORDS: usize = 4;

/// The `[query]` section of a scope's config file.
#[derive(Deserialize, Default, Debug, Clone, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct QueryConfig {
    /// Acronym → its expansion (or several).
    pub acronyms: BTreeMap<String, OneOrMany>,
    /// Groups of words or phrases that mean the same.
    pub synonyms: Vec<Vec<String>>,
}

#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn as_slice(&self) -> &[String] {
        match self {
            OneOrMany::One(one) => std::slice::from_ref(one),
            OneOrMany::Many(many) => many,
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ConfigFile {
    query: Option<QueryConfig>,
}

impl QueryConfig {
    /// The `[query]` section of `DIR/.kts/config.toml`; empty when there is none.
    pub fn load(scope: &Path) -> anyhow::Result<QueryConfig> {
        let path = kts_graph::settings::config_path(scope);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(QueryConfig::default()),
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        let file: ConfigFile =
            toml::from_str(&text).with_context(|| format!("reading {}", path.display()))?;
        Ok(file.query.unwrap_or_default())
    }
}

/// An entity of the scope's graph that a question names.
#[derive(Clone, Debug, PartialEq)]
pub struct KnownEntity {
    /// ERROR_CODE, SYSTEM, TERM, CONCEPT, ACRONYM, PERSON.
    pub kind: String,
    pub key: String,
    /// The words of the question that name it.
    pub words: String,
    /// How many documents mention it.
    pub documents: usize,
}

/// The scope's vocabulary, looked up per question (no graph is loaded).
pub struct Lexicon<'a> {
    conn: &'a Connection,
    config: &'a QueryConfig,
    /// Whether kts-graph has filled the graph tables.
    has_graph: bool,
}

impl<'a> Lexicon<'a> {
    pub fn new(conn: &'a Connection, config: &'a QueryConfig, has_graph: bool) -> Lexicon<'a> {
        Lexicon {
            conn,
            config,
            has_graph,
        }
    }

    /// The expansions of an acronym (as written in a question): the config's
    /// first, then, when `from_documents`, the ones the documents give most often.
    pub fn expansions(&self, acronym: &str, from_documents: bool) -> anyhow::Result<Vec<String>> {
        let mut found: Vec<String> = self
            .config
            .acronyms
            .iter()
            .filter(|(name, _)| name.eq_ignore_ascii_case(acronym))
            .flat_map(|(_, expansions)| expansions.as_slice().iter().cloned())
            .collect();
        if self.has_graph && from_documents {
            let mut stmt = self.conn.prepare_cached(
                "SELECT expansion, count(DISTINCT doc_id) FROM graph_expansions
                 WHERE acronym IN (?1, ?2)
                 GROUP BY lower(replace(expansion, '-', ' '))
                 ORDER BY count(DISTINCT doc_id) DESC, expansion",
            )?;
            let key = acronym.to_lowercase();
            let singular = key.strip_suffix('s').unwrap_or(&key).to_string();
            let rows: Vec<(String, i64)> = stmt
                .query_map(params![key, singular], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<Result<_, _>>()?;
            let total: i64 = rows.iter().map(|(_, n)| n).sum();
            // Only a dominant reading: an acronym the documents expand in
            // several ways (PD: Parkinson disease, peritoneal dialysis) is ambiguous.
            for (expansion, documents) in rows.into_iter().take(MAX_EXPANSIONS) {
                if documents * DOMINANT_SHARE_DENOMINATOR >= total * DOMINANT_SHARE_NUMERATOR {
                    push_new(&mut found, expansion);
                }
            }
        }
        Ok(found)
    }

    /// The synonyms of a word or phrase (lowercase): built-in groups, the
    /// config's groups, and short definitions the documents give for it.
    pub fn synonyms(&self, phrase: &str) -> anyhow::Result<Vec<String>> {
        let mut found = Vec::new();
        for group in BUILT_IN_SYNONYMS {
            if group.contains(&phrase) {
                for word in group.iter().filter(|w| **w != phrase) {
                    push_new(&mut found, word.to_string());
                }
            }
        }
        for group in &self.config.synonyms {
            if group.iter().any(|w| w.eq_ignore_ascii_case(phrase)) {
                for word in group.iter().filter(|w| !w.eq_ignore_ascii_case(phrase)) {
                    push_new(&mut found, word.to_lowercase());
                }
            }
        }
        if self.has_graph {
            let mut stmt = self.conn.prepare_cached(
                "SELECT DISTINCT name, text FROM graph_definitions WHERE key = ?1",
            )?;
            for row in stmt.query_map([phrase], |r| Ok((r.get(0)?, r.get(1)?)))? {
                let (name, text): (String, String) = row?;
                if let Some(meaning) = short_meaning(&name, &text) {
                    push_new(&mut found, meaning);
                }
            }
        }
        Ok(found)
    }

    /// The graph's entities named by these candidate names (lowercase
    /// phrases and, for error codes, the uppercase forms).
    pub fn known(&self, candidates: &[(String, String)]) -> anyhow::Result<Vec<KnownEntity>> {
        if !self.has_graph || candidates.is_empty() {
            return Ok(Vec::new());
        }
        let keys: Vec<&str> = candidates.iter().map(|(key, _)| key.as_str()).collect();
        let mut stmt = self.conn.prepare_cached(
            "SELECT kind, key, count(DISTINCT doc_id) FROM graph_mentions
             WHERE key IN (SELECT value FROM json_each(?1))
             GROUP BY kind, key ORDER BY kind, key",
        )?;
        let rows = stmt.query_map([serde_json::to_string(&keys)?], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get::<_, i64>(2)?))
        })?;
        let mut known = Vec::new();
        for row in rows {
            let (kind, key, documents): (String, String, i64) = row?;
            let words = candidates
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, words)| words.clone())
                .unwrap_or_else(|| key.clone());
            known.push(KnownEntity {
                kind,
                key,
                words,
                documents: documents as usize,
            });
        }
        Ok(known)
    }

    /// The documents that mention any of these entities.
    pub fn documents_naming(&self, entities: &[&KnownEntity]) -> anyhow::Result<Vec<String>> {
        let pairs: Vec<(&str, &str)> = entities
            .iter()
            .map(|e| (e.kind.as_str(), e.key.as_str()))
            .collect();
        let mut stmt = self.conn.prepare_cached(
            "SELECT DISTINCT m.doc_id FROM graph_mentions m
             JOIN json_each(?1) p
               ON m.key = json_extract(p.value, '$[1]') AND m.kind = json_extract(p.value, '$[0]')
             ORDER BY m.doc_id",
        )?;
        let docs = stmt
            .query_map([serde_json::to_string(&pairs)?], |r| r.get(0))?
            .collect::<Result<Vec<String>, _>>()?;
        Ok(docs)
    }
}

/// A definition short enough to be another name for the term: "`X` means
/// the rollout freeze." → "rollout freeze".
fn short_meaning(name: &str, text: &str) -> Option<String> {
    let lower = text.to_lowercase();
    let after = lower.split_once(&name.to_lowercase())?.1;
    let meaning = [
        "means",
        "is defined as",
        "refers to",
        "is also known as",
        "stands for",
    ]
    .iter()
    .find_map(|verb| after.split_once(verb).map(|(_, rest)| rest))?;
    let words: Vec<&str> = meaning
        .trim_matches(|c: char| !c.is_alphanumeric())
        .split_whitespace()
        .filter(|w| !matches!(*w, "a" | "an" | "the"))
        .collect();
    let clean: Vec<String> = words
        .iter()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()).to_string())
        .filter(|w| !w.is_empty())
        .collect();
    (!clean.is_empty() && clean.len() <= SYNONYM_DEFINITION_WORDS && words.len() == clean.len())
        .then(|| clean.join(" "))
}

fn push_new(list: &mut Vec<String>, item: String) {
    if !list.iter().any(|x| x.eq_ignore_ascii_case(&item)) {
        list.push(item);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_definitions_are_synonyms() {
        assert_eq!(
            short_meaning("freeze", "A \"freeze\" means the rollout stop.").as_deref(),
            Some("rollout stop")
        );
        assert_eq!(
            short_meaning(
                "freeze",
                "A \"freeze\" means that no change may be deployed before the audit ends."
            ),
            None
        );
    }

    #[test]
    fn config_acronyms_take_one_or_many() {
        let config: ConfigFile = toml::from_str(
            "[query.acronyms]\nSLA = \"service level agreement\"\nMFA = [\"multi-factor authentication\", \"two-factor authentication\"]\n[query]\nsynonyms = [[\"sign in\", \"log in\"]]\n",
        )
        .unwrap();
        let query = config.query.unwrap();
        assert_eq!(query.acronyms["MFA"].as_slice().len(), 2);
        assert_eq!(query.synonyms[0][1], "log in");
    }
}
