//! Questions to a knowledge root: a folder whose sub-folders are scopes.
//! `/slug question` (and `/slug /doctype question`) or `--scope SLUG` picks
//! the scopes; otherwise a question naming a scope's slug goes to it, and any
//! other fans out to every scope, in parallel, up to `--max-scopes`. The
//! scopes' hits are merged by RRF (ties: the more confident first), each
//! naming its scope; a scope that fails is reported and skipped.

use std::path::Path;

use kts_catalog::Catalog;
use kts_cli::{JsonlWriter, Messages};
use kts_record::{ErrorCode, HitRecord, ScopeCountRecord};
use kts_store::{ScopeEntry, Scopes, discover_scopes};

use crate::words::lowercase_words;
use crate::{Args, Mode, RRF_K, Searcher, emit};

/// Where a question goes, and what is left of it.
#[derive(Clone, Debug, PartialEq)]
pub struct Route {
    pub scopes: Vec<ScopeEntry>,
    /// A doc type from `/slug /doctype question`.
    pub doc_type: Option<String>,
    pub question: String,
    /// How the scopes were chosen, for messages.
    pub how: String,
}

/// Why a question cannot be routed: exit status 2 with this message.
#[derive(Debug)]
pub enum RouteError {
    /// `/slug` or `--scope` names no indexed scope.
    UnknownScope(String),
    /// The question would go to more than `--max-scopes` scopes.
    TooBroad(String),
    Other(String),
}

impl std::fmt::Display for RouteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RouteError::UnknownScope(m) | RouteError::TooBroad(m) | RouteError::Other(m) => {
                f.write_str(m)
            }
        }
    }
}

impl std::error::Error for RouteError {}

/// Whether `dir` is a knowledge root rather than a scope: it has a catalog,
/// or a sub-folder with an index.
pub fn is_root(dir: &Path) -> bool {
    if kts_store::is_scope(dir) {
        return false;
    }
    if kts_catalog::catalog_path(dir).is_file() {
        return true;
    }
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|entry| kts_store::is_scope(&entry.path()))
    })
}

/// Splits the leading `/word` tokens off a question: `/hr /policy how many
/// days` → (["hr", "policy"], "how many days").
pub fn scope_prefix(question: &str) -> (Vec<String>, String) {
    let mut names = Vec::new();
    let mut rest = question.trim_start();
    while let Some(after) = rest.strip_prefix('/') {
        let end = after.find(char::is_whitespace).unwrap_or(after.len());
        if end == 0 {
            break;
        }
        names.push(after[..end].to_string());
        rest = after[end..].trim_start();
    }
    (names, rest.to_string())
}

/// A scope the catalog matches with less than this share of the best
/// match's score is not asked: a question naming a deal also matches, less
/// well, every deal sharing one of its words.
pub const CATALOG_SHARE_OF_BEST: f64 = 0.5;

/// The scopes a question goes to.
pub fn route(
    found: &Scopes,
    question: &str,
    asked: &[String],
    max_scopes: usize,
    catalog: Option<&Catalog>,
) -> Result<Route, RouteError> {
    let indexed: Vec<&ScopeEntry> = found.scopes.iter().filter(|s| s.indexed).collect();
    let by_slug = |slug: &str| -> Result<ScopeEntry, RouteError> {
        indexed
            .iter()
            .find(|s| s.slug == slug.to_lowercase())
            .map(|s| (*s).clone())
            .ok_or_else(|| {
                RouteError::UnknownScope(format!(
                    "no indexed scope {slug:?} in this knowledge root (--list-scopes lists them)"
                ))
            })
    };
    let (prefix, rest) = scope_prefix(question);
    if !prefix.is_empty() {
        if prefix.len() > 2 {
            return Err(RouteError::Other(format!(
                "at most /scope /doctype before the question, not {} names",
                prefix.len()
            )));
        }
        return Ok(Route {
            scopes: vec![by_slug(&prefix[0])?],
            doc_type: prefix.get(1).map(|t| t.to_uppercase()),
            question: rest,
            how: format!("/{}", prefix[0]),
        });
    }
    if !asked.is_empty() {
        return Ok(Route {
            scopes: asked.iter().map(|s| by_slug(s)).collect::<Result<_, _>>()?,
            doc_type: None,
            question: rest,
            how: "--scope".into(),
        });
    }
    let words = lowercase_words(question);
    let named: Vec<&&ScopeEntry> = indexed
        .iter()
        .filter(|s| {
            let slug_words: Vec<&str> = s.slug.split('_').filter(|w| !w.is_empty()).collect();
            !slug_words.is_empty() && slug_words.iter().all(|w| words.iter().any(|q| q == w))
        })
        .collect();
    // The most specific slug named: the one with the most words.
    if let Some(most) = named.iter().map(|s| s.slug.split('_').count()).max() {
        let scopes: Vec<ScopeEntry> = named
            .iter()
            .filter(|s| s.slug.split('_').count() == most)
            .map(|s| (**s).clone())
            .collect();
        return Ok(Route {
            how: format!("the question names {}", slugs(&scopes)),
            scopes,
            doc_type: None,
            question: rest,
        });
    }
    if let Some(catalog) = catalog {
        let matches = catalog
            .search_slugs(question, max_scopes + 1)
            .map_err(|e| RouteError::Other(format!("cannot search the catalog: {e:#}")))?;
        let best = matches.first().map_or(0.0, |(_, score)| *score);
        let scopes: Vec<ScopeEntry> = matches
            .iter()
            .filter(|(_, score)| *score >= best * CATALOG_SHARE_OF_BEST)
            .filter_map(|(slug, _)| indexed.iter().find(|s| s.slug == *slug))
            .map(|s| (*s).clone())
            .collect();
        if scopes.len() > max_scopes {
            return Err(too_many(
                &format!("more than {max_scopes} scopes of the catalog match it"),
                max_scopes,
            ));
        }
        if !scopes.is_empty() {
            return Ok(Route {
                how: format!("the catalog matches {}", scopes.len()),
                scopes,
                doc_type: None,
                question: rest,
            });
        }
    }
    if indexed.len() > max_scopes {
        return Err(too_many(
            &format!("it would go to {} scopes", indexed.len()),
            max_scopes,
        ));
    }
    Ok(Route {
        scopes: indexed.into_iter().cloned().collect(),
        doc_type: None,
        question: rest,
        how: "every scope".into(),
    })
}

fn too_many(why: &str, max_scopes: usize) -> RouteError {
    RouteError::TooBroad(format!(
        "the question is too broad: {why}, more than --max-scopes {max_scopes}: \
         name a scope (/slug question or --scope SLUG), add words, or raise --max-scopes \
         (--count-by-scope tells in which scopes its words are)"
    ))
}

fn slugs(scopes: &[ScopeEntry]) -> String {
    scopes
        .iter()
        .map(|s| s.slug.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Answers a question, or `--batch` questions, over a knowledge root.
pub fn run(args: &Args, messages: &Messages, out: &mut JsonlWriter) -> anyhow::Result<()> {
    let one_scope_only = [
        ("--context", args.context),
        ("--evidence", args.evidence.is_some()),
        ("--explain", args.explain),
        ("--ledger", args.ledger),
    ];
    if let Some((flag, _)) = one_scope_only.iter().find(|(_, given)| *given) {
        anyhow::bail!(
            "{flag} works on one scope: give a scope folder ({}/SCOPE), not the knowledge root",
            args.dir.display()
        );
    }
    if args.list_scopes {
        return list_scopes(args, messages, &discover_scopes(&args.dir)?, out);
    }
    let mut root = RootSearcher::open(args, messages)?;
    let Some(question) = &args.question else {
        return crate::for_each_batch_query(messages, |query, id| {
            let route = match root.route(&query.text) {
                Ok(route) => route,
                Err(e) => {
                    messages.reject(&format!("query {id}"), ErrorCode::BadRecord, &e.to_string());
                    return Ok(());
                }
            };
            let given = query.embedding.map(|vector| (vector, query.model));
            let hits = root.search(&route, given)?;
            emit(out, args.format, &hits, Some(id), true)
        });
    };
    let route = match args.count_by_scope {
        true => root.every_scope(question)?,
        false => root.route(question)?,
    };
    if !args.quiet {
        messages.info(&format!(
            "asking {} scope(s) ({})",
            route.scopes.len(),
            route.how
        ));
    }
    if args.count_by_scope {
        return count_by_scope(args, messages, &route, out);
    }
    let hits = root.search(&route, None)?;
    emit(out, args.format, &hits, None, true)
}

/// A knowledge root opened for questions: its scopes, its catalog, and the
/// model that embeds the questions, loaded for the first one that needs it
/// and kept for the next.
pub struct RootSearcher<'a> {
    args: &'a Args,
    messages: &'a Messages,
    found: Scopes,
    /// Whether `found` was read from the catalog rather than from the folders.
    listed_by_catalog: bool,
    catalog: Option<Catalog>,
    embedder: QuestionEmbedder,
}

impl<'a> RootSearcher<'a> {
    /// Opens the root's catalog and takes the scopes it lists; without a
    /// catalog, finds them in the root's folders (reporting slug collisions).
    /// Reading 10,000 folders costs about 100 ms, the catalog's list 10.
    pub fn open(args: &'a Args, messages: &'a Messages) -> anyhow::Result<RootSearcher<'a>> {
        let catalog = open_catalog(&args.dir, messages);
        let listed = match &catalog {
            Some(catalog) => catalog
                .scope_entries()
                .inspect_err(|e| messages.warn(&format!("the catalog is not used: {e:#}")))
                .ok(),
            None => None,
        };
        let mut root = RootSearcher {
            listed_by_catalog: listed.is_some(),
            found: Scopes {
                scopes: listed.unwrap_or_default(),
                collisions: Default::default(),
            },
            catalog,
            args,
            messages,
            embedder: QuestionEmbedder::default(),
        };
        if !root.listed_by_catalog {
            root.discover()?;
        }
        Ok(root)
    }

    /// Finds the scopes in the root's folders.
    fn discover(&mut self) -> anyhow::Result<()> {
        self.found = discover_scopes(&self.args.dir)?;
        self.listed_by_catalog = false;
        for (slug, paths) in &self.found.collisions {
            self.messages.warn(&format!(
                "{} folders have the slug {slug}: {} (the later ones get _2, _3, ...)",
                paths.len(),
                paths
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Ok(())
    }

    /// The scopes a question goes to (see [`route`]). A scope asked by a
    /// slug the catalog does not list (indexed since, without updating it)
    /// is looked for in the root's folders.
    pub fn route(&mut self, question: &str) -> Result<Route, RouteError> {
        let routed = self.route_among_found(question);
        match routed {
            Err(RouteError::UnknownScope(_)) if self.listed_by_catalog => {
                self.discover()
                    .map_err(|e| RouteError::Other(format!("{e:#}")))?;
                self.route_among_found(question)
            }
            routed => routed,
        }
    }

    fn route_among_found(&self, question: &str) -> Result<Route, RouteError> {
        route(
            &self.found,
            question,
            &self.args.scope,
            self.args.max_scopes,
            self.catalog.as_ref(),
        )
    }

    /// Every indexed scope, or those the question names by `/slug` or
    /// `--scope` (`--count-by-scope` looks everywhere: it is no search).
    pub fn every_scope(&mut self, question: &str) -> Result<Route, RouteError> {
        if !self.args.scope.is_empty() || !scope_prefix(question).0.is_empty() {
            return self.route(question);
        }
        Ok(Route {
            scopes: self
                .found
                .scopes
                .iter()
                .filter(|s| s.indexed)
                .cloned()
                .collect(),
            doc_type: None,
            question: question.to_string(),
            how: "every scope".into(),
        })
    }

    /// The merged hits of the route's scopes, after `--min-confidence`; the
    /// question is embedded here unless its embedding is given.
    pub fn search(
        &mut self,
        route: &Route,
        given: Option<(Vec<f32>, Option<String>)>,
    ) -> anyhow::Result<Vec<HitRecord>> {
        let given = match given {
            Some(given) => Some(given),
            None => self.embedder.embed(self.args, self.messages, route)?,
        };
        let mut hits = search_scopes(self.args, self.messages, route, given)?;
        if let Some(min) = self.args.min_confidence {
            hits.retain(|h| h.confidence.is_some_and(|c| c >= min));
            if hits.is_empty() {
                self.messages.warn(&format!(
                    "no result for {:?} reaches confidence {min}",
                    route.question
                ));
            }
        }
        Ok(hits)
    }
}

/// The root's catalog, when it has one (a broken one is reported and ignored).
fn open_catalog(root: &Path, messages: &Messages) -> Option<Catalog> {
    if !kts_catalog::catalog_path(root).exists() {
        return None;
    }
    Catalog::open(root)
        .inspect_err(|e| messages.warn(&format!("the catalog is not used: {e:#}")))
        .ok()
}

/// `--list-scopes`: the catalog's rows, or each scope read now when the root has no catalog.
fn list_scopes(
    args: &Args,
    messages: &Messages,
    found: &Scopes,
    out: &mut JsonlWriter,
) -> anyhow::Result<()> {
    let rows = match open_catalog(&args.dir, messages) {
        Some(catalog) => catalog.scopes()?,
        None => found
            .scopes
            .iter()
            .filter(|s| s.indexed)
            .filter_map(|scope| {
                kts_catalog::read_scope(&args.dir, scope)
                    .inspect_err(|e| messages.warn(&format!("scope {} skipped: {e:#}", scope.slug)))
                    .ok()
            })
            .collect(),
    };
    for row in rows {
        match args.format {
            crate::OutputFormat::Jsonl => out.write(&row.to_record(None))?,
            crate::OutputFormat::Text => {
                use std::io::Write;
                writeln!(
                    std::io::stdout().lock(),
                    "{:<30} {:>6} documents  {:<30} {}",
                    row.slug,
                    row.documents,
                    row.doc_types.join(","),
                    row.path
                )?;
            }
        }
    }
    Ok(())
}

/// `--count-by-scope`: the scopes whose documents hold every word of the
/// question, most documents first, and a summary on stderr.
fn count_by_scope(
    args: &Args,
    messages: &Messages,
    route: &Route,
    out: &mut JsonlWriter,
) -> anyhow::Result<()> {
    let counted = in_parallel(&route.scopes, |scope| {
        let store = kts_store::Store::open_read(&scope.path)?;
        let documents = store.documents_matching_all(&route.question)?;
        Ok(ScopeCountRecord {
            schema: kts_record::schema_id::SCOPE_COUNT.into(),
            scope: scope.slug.clone(),
            documents: documents.len(),
            chunks: documents.iter().map(|(_, n)| n).sum(),
            paths: documents.into_iter().map(|(path, _)| path).collect(),
        })
    });
    let mut found = Vec::new();
    for (scope, result) in route.scopes.iter().zip(counted) {
        match result {
            Ok(count) if count.documents > 0 => found.push(count),
            Ok(_) => {}
            Err(e) => messages.warn(&format!("scope {} skipped: {e:#}", scope.slug)),
        }
    }
    found.sort_by(|a, b| b.documents.cmp(&a.documents).then(a.scope.cmp(&b.scope)));
    messages.info(&format!(
        "{:?} is in {} of {} scopes",
        route.question,
        found.len(),
        route.scopes.len()
    ));
    for count in &found {
        match args.format {
            crate::OutputFormat::Jsonl => out.write(count)?,
            crate::OutputFormat::Text => {
                use std::io::Write;
                writeln!(
                    std::io::stdout().lock(),
                    "{}: {} document(s), {} passage(s): {}",
                    count.scope,
                    count.documents,
                    count.chunks,
                    count.paths.join(", ")
                )?;
            }
        }
    }
    Ok(())
}

/// `work` on every scope, on at most one thread per core; the results in
/// the scopes' order.
fn in_parallel<T: Send>(
    scopes: &[ScopeEntry],
    work: impl Fn(&ScopeEntry) -> anyhow::Result<T> + Sync,
) -> Vec<anyhow::Result<T>> {
    let workers = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(scopes.len())
        .max(1);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut results: Vec<(usize, anyhow::Result<T>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(scope) = scopes.get(i) else {
                            return done;
                        };
                        done.push((i, work(scope)));
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a scope's work panicked"))
            .collect()
    });
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// Each scope searched in parallel for the question (embedded once, by the
/// caller); the hits merged.
fn search_scopes(
    args: &Args,
    messages: &Messages,
    route: &Route,
    given: Option<(Vec<f32>, Option<String>)>,
) -> anyhow::Result<Vec<HitRecord>> {
    let results = in_parallel(&route.scopes, |scope| {
        search_one(args, scope, route, given.clone())
    });
    let mut lists: Vec<Vec<HitRecord>> = Vec::new();
    for (scope, result) in route.scopes.iter().zip(results) {
        match result {
            Ok(hits) => lists.push(hits),
            Err(e) => messages.warn(&format!("scope {} skipped: {e:#}", scope.slug)),
        }
    }
    if lists.is_empty() && !route.scopes.is_empty() {
        anyhow::bail!("no scope could be searched (see the warnings above)");
    }
    Ok(merge(lists, args.top_k))
}

/// Embeds questions with the model of the scopes asked: every scope of a
/// root must share it (one that does not is skipped when searched). The
/// model is loaded once, for a quick start with one question and fully
/// optimised with `--batch`, and kept for the next question.
#[derive(Default)]
struct QuestionEmbedder {
    searcher: Option<Searcher>,
}

impl QuestionEmbedder {
    fn embed(
        &mut self,
        args: &Args,
        messages: &Messages,
        route: &Route,
    ) -> anyhow::Result<Option<(Vec<f32>, Option<String>)>> {
        if args.mode == Mode::Bm25 {
            return Ok(None);
        }
        if self.searcher.is_none() {
            self.searcher = route.scopes.iter().find_map(|scope| {
                let mut scope_args = scope_args(args, scope, route);
                scope_args.batch = args.batch;
                Searcher::open(&scope_args, messages)
                    .inspect_err(|e| messages.warn(&format!("scope {} skipped: {e:#}", scope.slug)))
                    .ok()
            });
        }
        match &mut self.searcher {
            Some(searcher) => searcher.embed_question(&route.question),
            None => Ok(None),
        }
    }
}

fn scope_args(args: &Args, scope: &ScopeEntry, route: &Route) -> Args {
    let mut scope_args = args.clone();
    scope_args.dir = scope.path.clone();
    // The model loads only if a query other than the question needs it.
    scope_args.batch = true;
    scope_args.question = None;
    if let Some(doc_type) = &route.doc_type {
        scope_args.doc_type = Some(doc_type.clone());
    }
    scope_args
}

fn search_one(
    args: &Args,
    scope: &ScopeEntry,
    route: &Route,
    given: Option<(Vec<f32>, Option<String>)>,
) -> anyhow::Result<Vec<HitRecord>> {
    let quiet = Messages::new("kts-query").quiet(true);
    let mut searcher = Searcher::open(&scope_args(args, scope, route), &quiet)?;
    searcher.set_scope_name(&scope.slug);
    searcher.one_connection();
    searcher.search(&route.question, given)
}

/// Reciprocal Rank Fusion of the scopes' lists (each hit is in one list);
/// equal ranks go to the more confident hit. Ranks are renumbered.
pub fn merge(lists: Vec<Vec<HitRecord>>, top_k: usize) -> Vec<HitRecord> {
    let mut all: Vec<(f64, f64, usize, HitRecord)> = lists
        .into_iter()
        .enumerate()
        .flat_map(|(list, hits)| {
            hits.into_iter().map(move |hit| {
                let rrf = 1.0 / (RRF_K + hit.rank as f64);
                (rrf, hit.confidence.unwrap_or(0.0), list, hit)
            })
        })
        .collect();
    all.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then(b.1.total_cmp(&a.1))
            .then(a.2.cmp(&b.2))
    });
    all.into_iter()
        .take(top_k)
        .enumerate()
        .map(|(i, (rrf, _, _, mut hit))| {
            hit.rank = i + 1;
            hit.score = rrf;
            hit
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn scopes(slugs: &[&str]) -> Scopes {
        Scopes {
            scopes: slugs
                .iter()
                .map(|s| ScopeEntry {
                    slug: s.to_string(),
                    path: PathBuf::from(s),
                    indexed: true,
                })
                .collect(),
            collisions: Default::default(),
        }
    }

    #[test]
    fn prefixes_name_the_scope_and_the_doc_type() {
        assert_eq!(
            scope_prefix("/hr /policy how many days?"),
            (
                vec!["hr".to_string(), "policy".to_string()],
                "how many days?".to_string()
            )
        );
        assert_eq!(scope_prefix("no prefix"), (vec![], "no prefix".to_string()));
        assert_eq!(scope_prefix("/ x"), (vec![], "/ x".to_string()));
    }

    #[test]
    fn routes_follow_prefix_flag_slug_words_then_everything() {
        let found = scopes(&["bear_stearns_2006_he1", "bear_stearns_2006_he2", "support"]);
        let slugs = |r: &Route| r.scopes.iter().map(|s| s.slug.clone()).collect::<Vec<_>>();
        let r = route(&found, "/support /faq printer error", &[], 100, None).unwrap();
        assert_eq!(
            (slugs(&r), r.doc_type.as_deref()),
            (vec!["support".into()], Some("FAQ"))
        );
        assert_eq!(r.question, "printer error");
        let r = route(
            &found,
            "Determination Date of Bear Stearns 2006-HE2?",
            &[],
            100,
            None,
        )
        .unwrap();
        assert_eq!(slugs(&r), ["bear_stearns_2006_he2"]);
        let r = route(&found, "dscr loans", &[], 100, None).unwrap();
        assert_eq!(slugs(&r).len(), 3);
        assert!(route(&found, "dscr loans", &[], 2, None).is_err());
        assert!(route(&found, "/nope question", &[], 100, None).is_err());
        let r = route(&found, "dscr", &["support".into()], 100, None).unwrap();
        assert_eq!(slugs(&r), ["support"]);
    }
}
