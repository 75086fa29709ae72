//! A scope or a knowledge root kept open to answer many requests, from many
//! threads at once: the model loads once, the scopes' searchers are kept
//! and reopened when an index changes (see [`SearcherPool`]), the root's
//! catalog is reread when it is updated or rebuilt, and the root's folders
//! are looked at again for scopes indexed, copied in or removed since. It is
//! the library behind kts-mcp; the answers are those of kts-query, made by
//! the same code.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use kts_catalog::CatalogRow;
use kts_cli::Messages;
use kts_record::{HitRecord, NodeRecord, ScopeCountRecord};
use kts_store::{ScopeEntry, StoredDocument};
use unicode_normalization::UnicodeNormalization;

use crate::evidence::{self, Report};
use crate::federation::{self, Route, Routing};
use crate::{ModelChoice, Request, SearcherPool, scope_slug};

/// Idle searchers kept open in all.
const POOLED: usize = 512;
/// How often, at most, a root has its folders read again (a request costs
/// one folder listing, about 10 µs a scope).
const RESCAN_FOLDERS_EVERY: Duration = Duration::from_secs(1);

/// An open scope or knowledge root.
pub struct Knowledge {
    dir: PathBuf,
    /// The name warnings are given under on stderr.
    tool: &'static str,
    /// Warnings are not printed.
    quiet: bool,
    pool: SearcherPool,
    /// `None` for a scope.
    root: Option<Mutex<RootState>>,
    /// The folder as a scope (what a scope answers for), read once at open.
    own: ScopeEntry,
}

struct RootState {
    routing: Routing,
    /// When the root's folders were last compared with the routing's scopes.
    folders_checked: Instant,
}

/// The hits of a request and where they were looked for.
pub struct Answer {
    pub hits: Vec<HitRecord>,
    /// The slugs of the scopes asked.
    pub scopes: Vec<String>,
}

/// A document read back, with the scope it belongs to.
pub struct Document {
    pub scope: String,
    pub stored: StoredDocument,
    pub markdown: String,
}

impl Knowledge {
    /// Opens `dir`, a scope (it has an index) or a knowledge root (its
    /// sub-folders do, or it has a catalog); `quiet` keeps its warnings off stderr.
    pub fn open(
        dir: &Path,
        model: ModelChoice,
        tool: &'static str,
        quiet: bool,
    ) -> anyhow::Result<Knowledge> {
        let messages = Messages::new(tool).quiet(quiet);
        if !dir.is_dir() {
            anyhow::bail!(match dir.exists() {
                true => format!("{} is not a folder", dir.display()),
                false => format!("{} does not exist", dir.display()),
            });
        }
        let root = if federation::is_root(dir) {
            Some(Mutex::new(RootState::open(dir, &messages)?))
        } else if kts_store::has_index(dir)? {
            kts_store::Store::open_read(dir)?;
            None
        } else {
            anyhow::bail!(
                "{} is neither a scope (it has no index .kts/kts.db) nor a knowledge root \
                 (no sub-folder has one): index it with kts-crawl DIR | kts-convert | kts-chunk \
                 | kts-embed | kts-index DIR",
                dir.display()
            );
        };
        let canonical = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        Ok(Knowledge {
            own: ScopeEntry {
                slug: canonical
                    .file_name()
                    .map(|n| scope_slug(&n.to_string_lossy()))
                    .unwrap_or_default(),
                path: dir.to_path_buf(),
                indexed: true,
            },
            dir: dir.to_path_buf(),
            tool,
            quiet,
            pool: SearcherPool::new(model, POOLED),
            root,
        })
    }

    /// Loads the model and opens the first scope's searcher now, so that the
    /// first question does not wait for them.
    pub fn warm_up(&self) -> anyhow::Result<()> {
        let Some(scope) = self.scopes()?.into_iter().next() else {
            return Ok(());
        };
        let request = Request::default();
        self.pool
            .with(&scope.path, &request, &self.messages(), |searcher| {
                searcher.embed_question("warm up").map(drop)
            })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn is_root(&self) -> bool {
        self.root.is_some()
    }

    fn messages(&self) -> Messages {
        Messages::new(self.tool).quiet(self.quiet)
    }

    /// The indexed scopes (a scope: itself). A catalog listing a scope whose
    /// index is gone is left for the folders, with a warning, as a question does.
    pub fn scopes(&self) -> anyhow::Result<Vec<ScopeEntry>> {
        match &self.root {
            Some(root) => {
                let mut state = self.routing(root)?;
                state.routing.forget_a_stale_catalog(&self.messages())?;
                Ok(state.routing.scopes().cloned().collect())
            }
            None => Ok(vec![self.own_scope()]),
        }
    }

    fn own_scope(&self) -> ScopeEntry {
        self.own.clone()
    }

    /// Each scope's catalog row (a scope's own, read now).
    pub fn scope_rows(&self) -> anyhow::Result<Vec<CatalogRow>> {
        match &self.root {
            Some(root) => self.routing(root)?.routing.scope_rows(&self.messages()),
            None => {
                let scope = self.own_scope();
                let parent = self.dir.parent().unwrap_or(Path::new("."));
                Ok(vec![kts_catalog::read_scope(parent, &scope)?])
            }
        }
    }

    /// The request's hits, best first, as `kts-query DIR QUESTION` finds them.
    pub fn search(&self, request: &Request) -> anyhow::Result<Answer> {
        let messages = self.messages();
        match &self.root {
            Some(root) => {
                let route = self.route(root, request)?;
                let hits = federation::search_routed(&self.pool, request, &route, None, &messages)?;
                Ok(Answer {
                    hits,
                    scopes: route.scopes.into_iter().map(|s| s.slug).collect(),
                })
            }
            None => {
                let scope = self.scope_asked(request)?;
                let mut hits = self
                    .pool
                    .with(&scope.path, request, &messages, |searcher| {
                        searcher.search(&request.question, None)
                    })?;
                request.keep_confident(&mut hits);
                Ok(Answer {
                    hits,
                    scopes: vec![scope.slug],
                })
            }
        }
    }

    /// A Markdown context for an LLM within the request's budget, as
    /// `kts-query DIR QUESTION --context`: the graph's facts, then the cited
    /// passages (in a knowledge root, by scope and path).
    pub fn context(&self, request: &Request) -> anyhow::Result<String> {
        let messages = self.messages();
        if let Some(root) = &self.root {
            let route = self.route(root, request)?;
            return federation::context_routed(&self.pool, request, &route, &messages);
        }
        let scope = self.scope_asked(request)?;
        self.pool.with(&scope.path, request, &messages, |searcher| {
            let mut hits = searcher.search(&request.question, None)?;
            request.keep_confident(&mut hits);
            searcher.context(&request.question, &hits, request.budget)
        })
    }

    /// The scopes whose documents hold every word of the question.
    pub fn count_by_scope(&self, request: &Request) -> anyhow::Result<Vec<ScopeCountRecord>> {
        let messages = self.messages();
        let route = match &self.root {
            Some(root) => self
                .routing(root)?
                .routing
                .every_scope(request, &messages)?,
            None => Route {
                scopes: vec![self.scope_asked(request)?],
                doc_type: None,
                question: request.question.clone(),
                how: "the scope".into(),
            },
        };
        Ok(federation::count_by_scope(&route, &messages))
    }

    /// An answer's claims checked against one scope, as `kts-query DIR
    /// QUESTION --evidence ANSWER`.
    pub fn check_answer(
        &self,
        request: &Request,
        answer: &str,
        min_coverage: f64,
    ) -> anyhow::Result<Report> {
        let scope = self.one_scope(request.scopes.first().map(String::as_str))?;
        self.pool
            .with(&scope.path, request, &self.messages(), |searcher| {
                evidence::check(searcher, &request.question, answer, min_coverage)
            })
    }

    /// The document with this path (or doc_id) in a scope, and its Markdown.
    /// In a knowledge root, the path may be cited as a context cites it,
    /// `scope: path`, instead of naming the scope.
    pub fn document(&self, scope: Option<&str>, path_or_id: &str) -> anyhow::Result<Document> {
        let (scope, path_or_id) = self.cited(scope, path_or_id);
        let scope = self.one_scope(scope)?;
        let request = Request::default();
        self.pool
            .with(&scope.path, &request, &self.messages(), |searcher| {
                let store = searcher.store();
                let mut stored = None;
                for spelling in cited_paths(path_or_id).iter().flat_map(|p| spellings(p)) {
                    stored = store.document(&spelling)?;
                    if stored.is_some() {
                        break;
                    }
                }
                let stored = stored.ok_or_else(|| {
                    anyhow::anyhow!("no document {path_or_id:?} in the scope {}", scope.slug)
                })?;
                let markdown = store.document_markdown(&stored)?;
                Ok(Document {
                    scope: scope.slug.clone(),
                    stored,
                    markdown,
                })
            })
    }

    /// Up to `limit` documents of a scope in path order, after the path `after`.
    pub fn documents(
        &self,
        scope: &ScopeEntry,
        after: Option<&str>,
        limit: usize,
    ) -> anyhow::Result<Vec<StoredDocument>> {
        self.pool.with(
            &scope.path,
            &Request::default(),
            &self.messages(),
            |searcher| searcher.store().documents_after(after, limit),
        )
    }

    /// The documents most related to the one at `path` (or `scope: path`,
    /// as in [`Knowledge::document`]), by the scope's graph.
    pub fn related(
        &self,
        scope: Option<&str>,
        path: &str,
        top: usize,
    ) -> anyhow::Result<Vec<NodeRecord>> {
        let (scope, path) = self.cited(scope, path);
        let scope = self.one_scope(scope)?;
        self.pool.with(
            &scope.path,
            &Request::default(),
            &self.messages(),
            |searcher| searcher.related(path, top),
        )
    }

    /// The scope a one-scope operation works on: the one named, or the only one.
    pub fn one_scope(&self, slug: Option<&str>) -> anyhow::Result<ScopeEntry> {
        let Some(root) = &self.root else {
            return self.scope_asked(&Request {
                scopes: slug.map(String::from).into_iter().collect(),
                ..Request::default()
            });
        };
        let state = self.routing(root)?;
        if let Some(slug) = slug {
            return state.routing.scope(slug).cloned().ok_or_else(|| {
                anyhow::anyhow!(
                    "no indexed scope {slug:?} in this knowledge root (list_scopes lists them)"
                )
            });
        }
        let mut scopes = state.routing.scopes();
        match (scopes.next(), scopes.next()) {
            (Some(only), None) => Ok(only.clone()),
            _ => anyhow::bail!(
                "this knowledge root has several scopes: name one (list_scopes lists them)"
            ),
        }
    }

    /// The scope and the path of a citation: `scope: path` (or `scope:path`)
    /// names an indexed scope of a knowledge root when no scope is given.
    fn cited<'a>(&self, scope: Option<&'a str>, path: &'a str) -> (Option<&'a str>, &'a str) {
        let Some(root) = self.root.as_ref().filter(|_| scope.is_none()) else {
            return (scope, path);
        };
        match path.split_once(':') {
            Some((slug, rest))
                if self
                    .routing(root)
                    .is_ok_and(|s| s.routing.scope(slug).is_some()) =>
            {
                (Some(slug), rest.trim_start())
            }
            _ => (scope, path),
        }
    }

    /// A scope's own scope, refusing any other one named.
    fn scope_asked(&self, request: &Request) -> anyhow::Result<ScopeEntry> {
        let own = self.own_scope();
        match request.scopes.iter().find(|s| s.to_lowercase() != own.slug) {
            Some(other) => anyhow::bail!(
                "no scope {other:?} here: {} is the scope {}",
                self.dir.display(),
                own.slug
            ),
            None => Ok(own),
        }
    }

    fn route(&self, root: &Mutex<RootState>, request: &Request) -> anyhow::Result<Route> {
        Ok(self
            .routing(root)?
            .routing
            .route(request, &self.messages())?)
    }

    /// The root's routing, reopened first when its catalog or its scope
    /// folders have changed.
    fn routing<'a>(
        &self,
        root: &'a Mutex<RootState>,
    ) -> anyhow::Result<std::sync::MutexGuard<'a, RootState>> {
        let mut state = root.lock().unwrap_or_else(|p| p.into_inner());
        let stale = state.routing.catalog_changed() || {
            let due = state.folders_checked.elapsed() >= RESCAN_FOLDERS_EVERY;
            if due {
                state.folders_checked = Instant::now();
            }
            due && state.routing.folders_changed()
        };
        if stale {
            *state = RootState::open(&self.dir, &self.messages())?;
        }
        Ok(state)
    }
}

impl RootState {
    fn open(dir: &Path, messages: &Messages) -> anyhow::Result<RootState> {
        Ok(RootState {
            routing: Routing::open(dir, messages)?,
            folders_checked: Instant::now(),
        })
    }
}

/// The paths a citation may name, most literal first: itself, then without
/// what a hit or a context writes after the path (`  (page 3)`, `#Heading >
/// Sub`, ` > Heading`). A path may hold `#` or ` > ` itself: each place the
/// path may end at is tried, the latest first.
fn cited_paths(citation: &str) -> Vec<String> {
    let mut paths = vec![citation.to_string()];
    let bare = strip_place(citation);
    let ends = bare
        .match_indices('#')
        .chain(bare.match_indices(" > "))
        .map(|(at, _)| at);
    let mut ends: Vec<usize> = std::iter::once(bare.len()).chain(ends).collect();
    ends.sort_unstable_by(|a, b| b.cmp(a));
    for end in ends {
        let path = bare[..end].trim_end();
        if !path.is_empty() && !paths.iter().any(|p| p == path) {
            paths.push(path.to_string());
        }
    }
    paths
}

/// A citation without the page or slide a hit writes after it.
fn strip_place(citation: &str) -> &str {
    let Some((before, place)) = citation.rsplit_once("  (") else {
        return citation;
    };
    let number = place
        .strip_suffix(')')
        .and_then(|p| p.strip_prefix("page ").or_else(|| p.strip_prefix("slide ")));
    match number {
        Some(n) if n.parse::<u32>().is_ok() => before,
        _ => citation,
    }
}

/// `path`, then its composed and decomposed Unicode forms where they differ
/// from it: a name from macOS is stored decomposed (`e` and `´` for `é`) and
/// typed composed.
fn spellings(path: &str) -> Vec<String> {
    let mut forms = vec![path.to_string()];
    for form in [path.nfc().collect::<String>(), path.nfd().collect()] {
        if !forms.contains(&form) {
            forms.push(form);
        }
    }
    forms
}

#[cfg(test)]
mod tests {
    use super::cited_paths;

    #[test]
    fn a_citation_names_its_path_with_or_without_heading_and_page() {
        for citation in [
            "proxy.html",
            "proxy.html#Corporate proxy",
            "proxy.html#Corporate proxy > Exceptions  (page 3)",
            "proxy.html > Corporate proxy",
            "proxy.html  (slide 2)",
        ] {
            assert!(
                cited_paths(citation).contains(&"proxy.html".to_string()),
                "{citation}: {:?}",
                cited_paths(citation)
            );
        }
        let hashed = cited_paths("notes #1.md#C# tips");
        assert_eq!(hashed[0], "notes #1.md#C# tips");
        assert!(hashed.contains(&"notes #1.md".to_string()), "{hashed:?}");
        assert_eq!(cited_paths("report (page 3).md"), ["report (page 3).md"]);
    }
}
