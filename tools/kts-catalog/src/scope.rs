//! One catalog row from a scope's store: counts, doc types, years, the top
//! entities and keywords.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

use kts_store::{ScopeEntry, Store, is_stopword};
use rusqlite::Connection;
use serde_json::Value;

use crate::CatalogRow;

/// Entities and keywords a row keeps.
pub const TOP: usize = 20;

/// Document titles a row keeps.
pub const TITLES: usize = 100;

/// Reads the row of one scope of `root` from its store (`SCOPE/.kts/kts.db`),
/// in one read transaction so that every figure describes the same state.
/// Fails when the store cannot be read (missing, corrupt, unfinished first
/// run, another format).
pub fn read_scope(root: &Path, entry: &ScopeEntry) -> anyhow::Result<CatalogRow> {
    let store = Store::open_read(&entry.path)?;
    let conn = store.connection();
    conn.execute_batch("BEGIN")?;
    let row = read(root, entry, &store);
    // A read transaction: ending it cannot lose anything.
    let _ = conn.execute_batch("COMMIT");
    row
}

fn read(root: &Path, entry: &ScopeEntry, store: &Store) -> anyhow::Result<CatalogRow> {
    let conn = store.connection();
    let meta = store.meta()?;
    let (documents, chunks) = store.counts()?;
    let scanned = scan_documents(conn)?;
    let entities = if table_exists(conn, "graph_mentions")? {
        top_entities(conn)?
    } else {
        Vec::new()
    };
    let mut keywords = if table_exists(conn, "graph_keywords")? {
        graph_keywords(conn)?
    } else {
        Vec::new()
    };
    if keywords.is_empty() {
        keywords = scanned.keywords;
    }
    let path = entry
        .path
        .strip_prefix(root)
        .ok()
        .filter(|p| !p.as_os_str().is_empty())
        .or_else(|| entry.path.file_name().map(Path::new))
        .unwrap_or(&entry.path)
        .to_string_lossy()
        .into_owned();
    Ok(CatalogRow {
        slug: entry.slug.clone(),
        path,
        documents,
        chunks,
        doc_types: store.doc_types()?,
        years: scanned.years,
        entities,
        keywords,
        titles: scanned.titles,
        model_id: meta.model_id,
        last_indexed: meta.updated,
    })
}

fn table_exists(conn: &Connection, name: &str) -> anyhow::Result<bool> {
    Ok(conn.query_row(
        "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = ?1",
        [name],
        |r| r.get(0),
    )?)
}

/// The entities the most documents mention (then the most mentioned), each
/// under the name it is written with most often; one per name, ignoring case.
fn top_entities(conn: &Connection) -> anyhow::Result<Vec<String>> {
    let mut statement = conn.prepare(
        "WITH top AS (
             SELECT kind, key, count(DISTINCT doc_id) AS docs, sum(count) AS n
             FROM graph_mentions WHERE doc_id IN (SELECT doc_id FROM documents)
             GROUP BY kind, key ORDER BY docs DESC, n DESC, key LIMIT ?1)
         SELECT (SELECT name FROM graph_mentions m WHERE m.key = top.key AND m.kind = top.kind
                 GROUP BY name ORDER BY sum(count) DESC, name LIMIT 1)
         FROM top ORDER BY docs DESC, n DESC, key",
    )?;
    let names = statement
        .query_map([(TOP * 2) as i64], |r| r.get::<_, Option<String>>(0))?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(distinct(names.into_iter().flatten()))
}

/// The graph's per-document keywords used by the most documents.
fn graph_keywords(conn: &Connection) -> anyhow::Result<Vec<String>> {
    let mut statement = conn.prepare(
        "SELECT word FROM graph_keywords WHERE doc_id IN (SELECT doc_id FROM documents)
         GROUP BY word ORDER BY count(DISTINCT doc_id) DESC, sum(count) DESC, word LIMIT ?1",
    )?;
    let words = statement
        .query_map([TOP as i64], |r| r.get::<_, String>(0))?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(words)
}

fn distinct(names: impl Iterator<Item = String>) -> Vec<String> {
    let mut seen = HashSet::new();
    names
        .filter(|name| seen.insert(name.to_lowercase()))
        .take(TOP)
        .collect()
}

/// What one pass over the documents finds.
struct Scanned {
    years: Vec<i32>,
    /// Title words and the documents' own keywords, used by the most documents.
    keywords: Vec<String>,
    /// The first distinct titles, by path.
    titles: Vec<String>,
}

fn scan_documents(conn: &Connection) -> anyhow::Result<Scanned> {
    let mut years = BTreeSet::new();
    let mut words: HashMap<String, usize> = HashMap::new();
    let mut titles: Vec<String> = Vec::new();
    let mut statement =
        conn.prepare("SELECT path, title, metadata FROM documents ORDER BY path")?;
    let mut rows = statement.query([])?;
    while let Some(row) = rows.next()? {
        let path: String = row.get(0)?;
        let title: String = row.get(1)?;
        let metadata: String = row.get(2)?;
        let metadata: Value = serde_json::from_str(&metadata).unwrap_or(Value::Null);
        years.extend(years_in(&path));
        years.extend(years_in(&title));
        if titles.len() < TITLES && !title.trim().is_empty() && !titles.contains(&title) {
            titles.push(title.clone());
        }
        let strings = |key: &str| -> Vec<String> {
            metadata
                .get(key)
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default()
        };
        for date in strings("dates") {
            years.extend(years_in(&date));
        }
        let mut in_document: HashSet<String> = title
            .split(|c: char| !c.is_alphabetic())
            .filter(|w| w.chars().count() >= 3)
            .map(str::to_lowercase)
            .filter(|w| !is_stopword(w))
            .collect();
        in_document.extend(strings("keywords").into_iter().map(|w| w.to_lowercase()));
        for word in in_document {
            *words.entry(word).or_default() += 1;
        }
    }
    let mut ranked: Vec<(String, usize)> = words.into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Ok(Scanned {
        years: years.into_iter().collect(),
        keywords: ranked.into_iter().take(TOP).map(|(w, _)| w).collect(),
        titles,
    })
}

/// Years from 1900 to 2100 written in `text`: runs of exactly four digits.
pub fn years_in(text: &str) -> Vec<i32> {
    let mut found = Vec::new();
    for run in text.split(|c: char| !c.is_ascii_digit()) {
        if run.len() != 4 {
            continue;
        }
        match run.parse::<i32>() {
            Ok(year) if (1900..=2100).contains(&year) => found.push(year),
            _ => {}
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::years_in;

    #[test]
    fn years_are_four_digit_runs_in_range() {
        assert_eq!(
            years_in("Bear Stearns 2006-HE1, 2007_report 12006 1899 2100 v2024b"),
            [2006, 2007, 2100, 2024]
        );
        assert!(years_in("no year, 20061 or 190").is_empty());
    }
}
