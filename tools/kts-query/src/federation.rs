//! Questions to a knowledge root: a folder whose sub-folders are scopes.
//! `/slug question` (and `/slug /doctype question`) or `--scope SLUG` picks
//! the scopes; otherwise a question naming a scope's slug goes to it, and any
//! other fans out to every scope, in parallel, up to `--max-scopes`. The
//! scopes' hits are merged by RRF (ties: the more confident first), each
//! naming its scope, then reranked once if the request has a reranker; a
//! scope that fails is reported and skipped.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use kts_catalog::{Catalog, CatalogRow};
use kts_cli::Messages;
use kts_record::{HitRecord, ScopeCountRecord};
use kts_store::{ScopeEntry, Scopes, discover_scopes_keeping, is_scope, names_slug, scope_slug};

use crate::context::{self, Citing};
use crate::pool::SearcherPool;
use crate::words::lowercase_words;
use crate::{Mode, ModelChoice, Request};

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

/// Why a question cannot be routed. The messages name no flag or tool:
/// each front end adds its own advice (kts-query's flags, kts-mcp's tools).
#[derive(Debug)]
pub enum RouteError {
    /// `/slug` or the scope asked for names no indexed scope.
    UnknownScope(String),
    /// The question would go to more scopes than allowed.
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
        named_by(slug, indexed.iter().copied())
            .cloned()
            .ok_or_else(|| {
                RouteError::UnknownScope(format!(
                    "no indexed scope {slug:?} in this knowledge root"
                ))
            })
    };
    if !asked.is_empty() {
        // The scopes are named: a leading `/word` is a word (a path, say).
        return Ok(Route {
            scopes: asked.iter().map(|s| by_slug(s)).collect::<Result<_, _>>()?,
            doc_type: None,
            question: question.to_string(),
            how: "--scope".into(),
        });
    }
    let (prefix, rest) = scope_prefix(question);
    if !prefix.is_empty() {
        if rest.trim().is_empty() {
            return Err(RouteError::Other(format!(
                "nothing is asked after /{}: write the question after the scope's name",
                prefix.join(" /")
            )));
        }
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
    if indexed.len() > max_scopes {
        // The catalog narrows only what cannot all be asked: it knows a
        // scope's titles, keywords and entities, not every word of its
        // documents, so it misses answers that asking every scope finds.
        if let Some(catalog) = catalog {
            return route_by_catalog(catalog, &indexed, question, rest, max_scopes);
        }
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

/// The scopes the catalog matches with at least [`CATALOG_SHARE_OF_BEST`]
/// of the best match's score.
fn route_by_catalog(
    catalog: &Catalog,
    indexed: &[&ScopeEntry],
    question: &str,
    rest: String,
    max_scopes: usize,
) -> Result<Route, RouteError> {
    let matches = catalog
        .search_slugs(question, max_scopes + 1)
        .map_err(|e| RouteError::Other(format!("cannot search the catalog: {e:#}")))?;
    let best = matches.first().map_or(0.0, |(_, score)| *score);
    let mut scopes: Vec<ScopeEntry> = Vec::new();
    let mut gone = false;
    for (slug, _) in matches
        .iter()
        .filter(|(_, score)| *score >= best * CATALOG_SHARE_OF_BEST)
    {
        match indexed.iter().find(|s| s.slug == *slug) {
            Some(scope) => scopes.push((*scope).clone()),
            None => gone = true,
        }
    }
    if gone {
        // A scope matched has been renamed or moved since the catalog was
        // built, most likely to one the catalog does not list: those are asked.
        let listed: HashSet<String> = (catalog.scope_entries())
            .map_err(|e| RouteError::Other(format!("cannot read the catalog: {e:#}")))?
            .into_iter()
            .map(|entry| entry.slug)
            .collect();
        scopes.extend(
            (indexed.iter())
                .filter(|s| !listed.contains(&s.slug))
                .map(|s| (*s).clone()),
        );
    }
    if scopes.len() > max_scopes {
        return Err(too_many(
            &format!("more than {max_scopes} scopes of the catalog match it"),
            max_scopes,
        ));
    }
    if scopes.is_empty() {
        return Err(too_many(
            &format!(
                "the catalog places it in no scope, so it would go to {} scopes",
                indexed.len()
            ),
            max_scopes,
        ));
    }
    Ok(Route {
        how: format!("the catalog matches {}", scopes.len()),
        scopes,
        doc_type: None,
        question: rest,
    })
}

/// The scope a typed slug names: the one it spells exactly, else the one
/// it spells without accents.
fn named_by<'a>(
    typed: &str,
    scopes: impl Iterator<Item = &'a ScopeEntry>,
) -> Option<&'a ScopeEntry> {
    let scopes: Vec<&ScopeEntry> = scopes.collect();
    let exact = scope_slug(typed);
    let found = scopes.iter().find(|s| s.slug == exact);
    found
        .or_else(|| scopes.iter().find(|s| names_slug(typed, &s.slug)))
        .copied()
}

fn too_many(why: &str, max_scopes: usize) -> RouteError {
    RouteError::TooBroad(format!(
        "the question is too broad: {why}, more than the {max_scopes} a question may ask"
    ))
}

fn slugs(scopes: &[ScopeEntry]) -> String {
    scopes
        .iter()
        .map(|s| s.slug.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A knowledge root's scopes and catalog, for routing questions. The
/// catalog's list is used when there is one; a scope asked by a slug it does
/// not list (indexed since, without updating it) is looked for in the folders.
pub struct Routing {
    dir: PathBuf,
    found: Scopes,
    /// Whether `found` was read from the catalog rather than from the folders.
    listed_by_catalog: bool,
    catalog: Option<Catalog>,
    /// The catalog as it was when opened.
    catalog_version: CatalogVersion,
}

/// What tells that a catalog changed: its file's modification time (a
/// catalog built, replaced or removed) and SQLite's count of the commits of
/// other connections (an update lands in the write-ahead log, not in the file
/// while a reader keeps it open).
#[derive(Debug, PartialEq)]
struct CatalogVersion {
    modified: Option<SystemTime>,
    commits: Option<i64>,
}

impl Routing {
    /// Opens the root's catalog and takes the scopes it lists; without a
    /// catalog, finds them in the root's folders (reporting slug collisions).
    /// Reading 10,000 folders costs about 100 ms, the catalog's list 10.
    pub fn open(dir: &Path, messages: &Messages) -> anyhow::Result<Routing> {
        let catalog = open_catalog(dir, messages);
        let listed = match &catalog {
            Some(catalog) => catalog
                .scope_entries()
                .inspect_err(|e| messages.warn(&format!("the catalog is not used: {e:#}")))
                .ok(),
            None => None,
        };
        let mut routing = Routing {
            dir: dir.to_path_buf(),
            listed_by_catalog: listed.is_some(),
            found: Scopes {
                scopes: listed.unwrap_or_default(),
                collisions: Default::default(),
            },
            catalog_version: catalog_version(dir, catalog.as_ref()),
            catalog,
        };
        let unlisted = routing.unlisted_scopes();
        if routing.listed_by_catalog && !unlisted.is_empty() {
            messages.warn(&format!(
                "the catalog does not list {}: the folders are read instead \
                 (kts-catalog {} brings the catalog up to date)",
                unlisted.join(", "),
                dir.display()
            ));
        }
        if !routing.listed_by_catalog || !unlisted.is_empty() {
            routing.discover(messages)?;
        }
        Ok(routing)
    }

    /// The root's folders holding an index that the catalog does not list
    /// (renamed, copied in or restored since it was built). Listing the
    /// root's names is cheap; only a name the catalog lacks is looked into.
    fn unlisted_scopes(&self) -> Vec<String> {
        if !self.listed_by_catalog {
            return Vec::new();
        }
        let listed: HashSet<&std::ffi::OsStr> = self
            .found
            .scopes
            .iter()
            .filter_map(|s| s.path.file_name())
            .collect();
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        entries
            .filter_map(Result::ok)
            .map(|entry| entry.file_name())
            .filter(|name| {
                !name.to_string_lossy().starts_with('.') && !listed.contains(name.as_os_str())
            })
            .filter(|name| is_scope(&self.dir.join(name)))
            .map(|name| name.to_string_lossy().into_owned())
            .collect()
    }

    /// Reads the folders instead when the catalog lists a scope whose index
    /// is gone, with a warning; whether it did.
    pub fn forget_a_stale_catalog(&mut self, messages: &Messages) -> anyhow::Result<bool> {
        if !self.listed_by_catalog {
            return Ok(false);
        }
        let gone: Vec<&str> = self
            .scopes()
            .filter(|scope| !is_scope(&scope.path))
            .map(|scope| scope.slug.as_str())
            .collect();
        if gone.is_empty() {
            return Ok(false);
        }
        self.warn_gone(&gone, messages);
        self.discover(messages)?;
        Ok(true)
    }

    fn warn_gone(&self, gone: &[&str], messages: &Messages) {
        messages.warn(&format!(
            "the catalog lists {}, whose index is gone: the folders are read instead \
             (kts-catalog {} brings the catalog up to date)",
            gone.join(", "),
            self.dir.display()
        ));
    }

    /// Finds the scopes in the root's folders.
    fn discover(&mut self, messages: &Messages) -> anyhow::Result<()> {
        self.found = self.scopes_in_folders()?;
        self.listed_by_catalog = false;
        for (slug, folders) in &self.found.collisions {
            messages.warn(&format!(
                "{} folders give the slug {slug}: {}",
                folders.len(),
                folders
                    .iter()
                    .map(|f| format!("{} ({})", f.path.display(), f.slug))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Ok(())
    }

    /// Whether the root's folders no longer hold the scopes found: one
    /// indexed, removed or renamed since, or, under a catalog, a folder with
    /// an index that the catalog does not list (copied in, say).
    pub fn folders_changed(&self) -> bool {
        match self.listed_by_catalog {
            true => !self.unlisted_scopes().is_empty(),
            false => self
                .scopes_in_folders()
                .map_or(true, |now| now != self.found),
        }
    }

    /// The scopes of the root's folders, each the catalog lists keeping the
    /// slug it gave ([`kts_catalog::root_scopes`]).
    fn scopes_in_folders(&self) -> anyhow::Result<Scopes> {
        let given = self
            .catalog
            .as_ref()
            .and_then(|catalog| catalog.slugs_given().ok())
            .unwrap_or_default();
        discover_scopes_keeping(&self.dir, &given)
    }

    /// Whether the root's catalog was built, updated (kts-index updates a
    /// scope's row), rebuilt or removed since the routing was opened.
    pub fn catalog_changed(&self) -> bool {
        catalog_version(&self.dir, self.catalog.as_ref()) != self.catalog_version
    }

    /// The indexed scopes.
    pub fn scopes(&self) -> impl Iterator<Item = &ScopeEntry> {
        self.found.scopes.iter().filter(|s| s.indexed)
    }

    /// The scope of a slug, if indexed.
    pub fn scope(&self, slug: &str) -> Option<&ScopeEntry> {
        named_by(slug, self.scopes())
    }

    /// The scopes the request's question goes to (see [`route`]).
    /// A catalog that lists a scope no longer there (or names none asked) is
    /// left for the folders, with a warning.
    pub fn route(&mut self, request: &Request, messages: &Messages) -> Result<Route, RouteError> {
        let routed = self.route_among_found(request);
        if !self.listed_by_catalog {
            return routed;
        }
        let gone: Vec<&str> = match &routed {
            Ok(route) => route
                .scopes
                .iter()
                .filter(|scope| !is_scope(&scope.path))
                .map(|scope| scope.slug.as_str())
                .collect(),
            Err(RouteError::UnknownScope(_)) => Vec::new(),
            Err(_) => return routed,
        };
        if routed.is_ok() && gone.is_empty() {
            return routed;
        }
        if !gone.is_empty() {
            self.warn_gone(&gone, messages);
        }
        self.discover(messages)
            .map_err(|e| RouteError::Other(format!("{e:#}")))?;
        self.route_among_found(request)
    }

    fn route_among_found(&self, request: &Request) -> Result<Route, RouteError> {
        route(
            &self.found,
            &request.question,
            &request.scopes,
            request.max_scopes,
            self.catalog.as_ref(),
        )
    }

    /// Every indexed scope, or those the question names by `/slug` or
    /// `--scope` (`--count-by-scope` looks everywhere: it is no search).
    pub fn every_scope(
        &mut self,
        request: &Request,
        messages: &Messages,
    ) -> Result<Route, RouteError> {
        if !request.scopes.is_empty() || !scope_prefix(&request.question).0.is_empty() {
            return self.route(request, messages);
        }
        self.forget_a_stale_catalog(messages)
            .map_err(|e| RouteError::Other(format!("{e:#}")))?;
        Ok(Route {
            scopes: self.scopes().cloned().collect(),
            doc_type: None,
            question: request.question.clone(),
            how: "every scope".into(),
        })
    }

    /// The scope rows: the catalog's, or each scope read now when the root
    /// has none.
    pub fn scope_rows(&mut self, messages: &Messages) -> anyhow::Result<Vec<CatalogRow>> {
        self.forget_a_stale_catalog(messages)?;
        if let Some(catalog) = self.catalog.as_ref().filter(|_| self.listed_by_catalog) {
            return catalog.scopes();
        }
        Ok(self
            .scopes()
            .filter_map(|scope| {
                kts_catalog::read_scope(&self.dir, scope)
                    .inspect_err(|e| messages.warn(&format!("scope {} skipped: {e:#}", scope.slug)))
                    .ok()
            })
            .collect())
    }
}

/// A knowledge root opened for questions: its routing, and the scopes'
/// searchers and the model, kept open for the next question.
pub struct RootSearcher<'a> {
    request: Request,
    messages: &'a Messages,
    routing: Routing,
    pool: SearcherPool,
}

impl<'a> RootSearcher<'a> {
    /// Opens the root for questions asked like `request`.
    pub fn open(
        dir: &Path,
        request: &Request,
        model: &ModelChoice,
        messages: &'a Messages,
    ) -> anyhow::Result<RootSearcher<'a>> {
        Ok(RootSearcher {
            routing: Routing::open(dir, messages)?,
            request: request.clone(),
            messages,
            pool: SearcherPool::new(model.clone(), POOLED_PER_ROOT),
        })
    }

    /// The scopes a question goes to (see [`route`]).
    pub fn route(&mut self, question: &str) -> Result<Route, RouteError> {
        self.routing
            .route(&self.request.asking(question), self.messages)
    }

    /// See [`Routing::every_scope`].
    pub fn every_scope(&mut self, question: &str) -> Result<Route, RouteError> {
        self.routing
            .every_scope(&self.request.asking(question), self.messages)
    }

    /// The context of the route's scopes (see [`context_routed`]).
    pub fn context(&mut self, route: &Route) -> anyhow::Result<String> {
        context_routed(&self.pool, &self.request, route, self.messages)
    }

    /// The merged hits of the route's scopes (see [`search_routed`]).
    pub fn search(
        &mut self,
        route: &Route,
        given: Option<(Vec<f32>, Option<String>)>,
    ) -> anyhow::Result<Vec<HitRecord>> {
        search_routed(&self.pool, &self.request, route, given, self.messages)
    }

    /// The scope rows (see [`Routing::scope_rows`]).
    pub fn scope_rows(&mut self) -> anyhow::Result<Vec<CatalogRow>> {
        self.routing.scope_rows(self.messages)
    }
}

/// Searchers a command-line root search keeps open between `--batch`
/// questions.
const POOLED_PER_ROOT: usize = 256;

fn catalog_version(root: &Path, catalog: Option<&Catalog>) -> CatalogVersion {
    CatalogVersion {
        modified: std::fs::metadata(kts_catalog::catalog_path(root))
            .and_then(|m| m.modified())
            .ok(),
        commits: catalog.and_then(|c| c.data_version().ok()),
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

/// The scopes whose documents hold every word of the question, most
/// documents first; a scope that cannot be read is skipped with a warning.
pub fn count_by_scope(route: &Route, messages: &Messages) -> Vec<ScopeCountRecord> {
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
    found
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

/// The route's scopes searched in parallel, with the question embedded
/// once (here, unless `given`), the hits merged by RRF and those below the
/// request's `min_confidence` left out. A scope that fails is skipped with a
/// warning; all failing is an error.
pub fn search_routed(
    pool: &SearcherPool,
    request: &Request,
    route: &Route,
    given: Option<(Vec<f32>, Option<String>)>,
    messages: &Messages,
) -> anyhow::Result<Vec<HitRecord>> {
    let given = match given {
        Some(given) => Some(given),
        None => embed_question(pool.model(), request, route, messages)?,
    };
    let mut scope_request = scope_request(request, route);
    // A reranker runs once, over the merged hits (its scores mean the same
    // in every scope): each scope sends enough of its best for it.
    if let Some(reranker) = scope_request.reranker.take() {
        scope_request.top_k = scope_request.top_k.max(reranker.top);
    }
    let results = in_parallel(&route.scopes, |scope| {
        let quiet = Messages::new("kts-query").quiet(true);
        pool.with(&scope.path, &scope_request, &quiet, |searcher| {
            searcher.set_scope_name(&scope.slug);
            searcher.one_connection();
            // A scope of another model embeds the question itself; one
            // without vectors searches by keywords.
            let given = (given.clone()).filter(|(vector, model)| {
                searcher.takes_embedding_of(model.as_deref(), vector.len())
            });
            let hits = searcher.search(&route.question, given)?;
            Ok((hits, searcher.absent_doc_types()?))
        })
    });
    let mut lists: Vec<Vec<HitRecord>> = Vec::new();
    let mut failures: Vec<String> = Vec::new();
    // The types asked for that no scope searched has (a typo, most likely).
    let mut absent_everywhere: Option<Vec<String>> = None;
    for (scope, result) in route.scopes.iter().zip(results) {
        match result {
            Ok((hits, absent)) => {
                lists.push(hits);
                let everywhere = absent_everywhere.get_or_insert_with(|| absent.clone());
                everywhere.retain(|t| absent.contains(t));
            }
            Err(e) => {
                messages.warn(&format!("scope {} skipped: {e:#}", scope.slug));
                failures.push(format!("{}: {e:#}", scope.slug));
            }
        }
    }
    if let Some(absent) = absent_everywhere.filter(|absent| !absent.is_empty()) {
        messages.warn(&format!(
            "no document of the {} scope(s) asked has the type {}",
            lists.len(),
            absent.join(", ")
        ));
    }
    if lists.is_empty() && !failures.is_empty() {
        // Said in full: a caller over MCP never sees the warnings.
        anyhow::bail!("no scope could be searched: {}", failures.join("; "));
    }
    let mut hits = match &request.reranker {
        Some(reranker) => {
            let mut hits = merge(lists, request.top_k.max(reranker.top));
            if let Err(why) = reranker.rerank_records(&route.question, &mut hits) {
                messages.warn(&format!(
                    "the reranker ({}): {why}; the merged order stands",
                    reranker.by
                ));
            }
            hits.truncate(request.top_k);
            hits
        }
        None => merge(lists, request.top_k),
    };
    if let Some(min) = request.min_confidence {
        request.keep_confident(&mut hits);
        if hits.is_empty() {
            messages.warn(&format!(
                "no result for {:?} reaches confidence {min}",
                route.question
            ));
        }
    }
    Ok(hits)
}

/// The Markdown context of a question over several scopes (`--context`):
/// the route's merged hits, each passage cited by scope and path, after
/// what the graph of each scope they come from knows of the question's
/// entities (the scope of the best hit first). A scope whose graph cannot be
/// read gives no facts, with a warning.
pub fn context_routed(
    pool: &SearcherPool,
    request: &Request,
    route: &Route,
    messages: &Messages,
) -> anyhow::Result<String> {
    let hits = search_routed(pool, request, route, None, messages)?;
    let scope_request = scope_request(request, route);
    let mut facts = Vec::new();
    for scope in scopes_of(&hits, route) {
        let quiet = Messages::new("kts-query").quiet(true);
        let found = pool.with(&scope.path, &scope_request, &quiet, |searcher| {
            searcher.graph_facts(&route.question, Some(&scope.slug))
        });
        match found {
            Ok(found) => facts.extend(found),
            Err(e) => messages.warn(&format!("scope {}: no graph facts: {e:#}", scope.slug)),
        }
    }
    Ok(context::markdown(
        &route.question,
        &facts,
        &hits,
        request.budget,
        Citing::ScopesAndPaths,
    ))
}

/// The route's scopes the hits come from, in the order of their best hit.
fn scopes_of<'a>(hits: &[HitRecord], route: &'a Route) -> Vec<&'a ScopeEntry> {
    let mut scopes: Vec<&ScopeEntry> = Vec::new();
    for hit in hits {
        if let Some(scope) = route.scopes.iter().find(|s| s.slug == hit.scope)
            && !scopes.iter().any(|s| s.slug == scope.slug)
        {
            scopes.push(scope);
        }
    }
    scopes
}

/// The question embedded once with the model of the first scope asked that
/// has vectors; a scope of another model embeds it again, one without
/// vectors searches by keywords.
fn embed_question(
    model: &ModelChoice,
    request: &Request,
    route: &Route,
    messages: &Messages,
) -> anyhow::Result<Option<(Vec<f32>, Option<String>)>> {
    if request.mode == Mode::Bm25 {
        return Ok(None);
    }
    for scope in &route.scopes {
        let meta = match kts_store::Store::open_read(&scope.path).and_then(|s| s.meta()) {
            Ok(meta) => meta,
            Err(e) => {
                messages.warn(&format!("scope {} skipped: {e:#}", scope.slug));
                continue;
            }
        };
        if meta.model_id.is_none() {
            continue;
        }
        let loaded = model.load(&meta, &scope.path)?;
        return Ok(Some((loaded.embed_query(&route.question)?, meta.model_id)));
    }
    Ok(None)
}

/// The request as each scope of the route runs it.
pub(crate) fn scope_request(request: &Request, route: &Route) -> Request {
    let mut scope_request = request.asking(&route.question);
    if let Some(doc_type) = &route.doc_type {
        scope_request.doc_types = vec![doc_type.clone()];
    }
    scope_request
}

/// The scopes' lists (each hit is in one list) merged by confidence, which
/// means the same in every scope, where fused scores and ranks do not (each
/// scope's best hit is its rank 1, however poor). A hit counts no more than
/// the hits above it in its scope, so each scope's own order is kept; equal
/// ones go by rank, then by list. A hit's score becomes that confidence, and
/// ranks are renumbered.
pub fn merge(lists: Vec<Vec<HitRecord>>, top_k: usize) -> Vec<HitRecord> {
    let mut all: Vec<(f64, usize, usize, HitRecord)> = Vec::new();
    for (list, mut hits) in lists.into_iter().enumerate() {
        hits.sort_by_key(|hit| hit.rank);
        let mut ceiling = f64::INFINITY;
        for hit in hits {
            ceiling = ceiling.min(hit.confidence.unwrap_or(0.0));
            all.push((ceiling, hit.rank, list, hit));
        }
    }
    all.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    all.into_iter()
        .take(top_k)
        .enumerate()
        .map(|(i, (confidence, _, _, mut hit))| {
            hit.rank = i + 1;
            hit.score = confidence;
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
        let nothing_asked = route(&found, "/support ", &[], 100, None).unwrap_err();
        assert!(
            nothing_asked
                .to_string()
                .contains("nothing is asked after /support")
        );
        let r = route(&found, "dscr", &["support".into()], 100, None).unwrap();
        assert_eq!(slugs(&r), ["support"]);
    }

    fn hit(scope: &str, rank: usize, confidence: f64) -> HitRecord {
        serde_json::from_value(serde_json::json!({"rank": rank, "score": 2.0,
            "doc_id": "d", "chunk_id": "c", "scope": scope, "path": format!("{scope}{rank}.md"),
            "text": "t", "start": 0, "end": 1, "confidence": confidence}))
        .unwrap()
    }

    #[test]
    fn scopes_are_merged_by_confidence_each_keeping_its_order() {
        let tools = vec![
            hit("tools", 1, 0.94),
            hit("tools", 2, 0.8),
            hit("tools", 3, 0.3),
        ];
        let cooking = vec![hit("cooking", 1, 0.45), hit("cooking", 2, 0.5)];
        let merged = merge(vec![cooking, tools], 10);
        let paths: Vec<&str> = merged.iter().map(|h| h.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "tools1.md",
                "tools2.md",
                "cooking1.md",
                "cooking2.md",
                "tools3.md"
            ],
            "a scope's rank 1 does not tie another's; cooking2 counts no more than cooking1"
        );
        let ranks: Vec<usize> = merged.iter().map(|h| h.rank).collect();
        assert_eq!(ranks, [1, 2, 3, 4, 5]);
        assert_eq!(merged[3].score, 0.45);
        assert_eq!(merge(vec![merged], 2).len(), 2);
    }

    #[test]
    fn a_scope_is_found_by_its_name_written_either_way() {
        let found = scopes(&["résumés", "customer_support"]);
        let first = |question: &str| {
            route(&found, question, &[], 100, None).unwrap().scopes[0]
                .slug
                .clone()
        };
        assert_eq!(first("/Re\u{301}sume\u{301}s who knows Rust"), "résumés");
        assert_eq!(first("/Résumés who knows Rust"), "résumés");
        assert_eq!(first("/Customer-Support printers"), "customer_support");
    }
}
