//! One scope's index opened for questions: the query pipeline's plan, the
//! retrievers, fusion, ranking signals and the `kts.hit/1` records.

use std::collections::HashMap;
use std::path::Path;
use std::thread::JoinHandle;

use kts_cli::Messages;
use kts_record::{HitRecord, NodeRecord, PlanNote, PlanRecord, PlannedQuery, Signal};
use kts_store::{ChangeStamp, Filters, Hit, LexicalState, Meta, Scored, Store};
use petgraph::stable_graph::NodeIndex;

use crate::MAX_CANDIDATES;
use crate::cite::{Citation, cite, heading_level};
use crate::context::{self, Citing};
use crate::embedder::{ModelChoice, SharedModel};
use crate::graph::{QueryGraph, graph_list};
use crate::plan::lexicon::{Lexicon, QueryConfig};
use crate::plan::{Plan, Planner, Role, SubQuery};
use crate::rank::confidence::{confidence, features as confidence_features, never_rising};
use crate::rank::feedback::{FEEDBACK_CHUNKS, moved_toward};
use crate::rank::fuse::{Fused, fuse, top_k};
use crate::request::{Request, Settings};
use crate::steps::Step;
use crate::words::stem;
use crate::{Mode, rank, scope_slug};

/// A question's given embedding that the index cannot use (another model):
/// in a `--batch`, that question fails alone.
#[derive(Debug)]
pub struct UnusableEmbedding(String);

impl std::fmt::Display for UnusableEmbedding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UnusableEmbedding {}

/// An open index and, once needed, the model to embed questions with.
pub struct Searcher {
    store: Store,
    meta: Meta,
    scope: String,
    has_vectors: bool,
    /// How the current request runs.
    settings: Settings,
    model: ModelChoice,
    embedder: Option<SharedModel>,
    /// The model being loaded in the background, for one question (see
    /// [`Searcher::open`]).
    model_loading: ModelLoading,
    /// A second connection, for vector search beside BM25 in hybrid mode
    /// (opened at first use, unless the retrievers run one after the other).
    vector_store: Option<Store>,
    concurrent: bool,
    config: QueryConfig,
    /// The index's state when opened (see [`Searcher::is_current`]).
    opened: ChangeStamp,
    /// Whether the scope has graph tables (read once, at open).
    has_graph: bool,
    /// The document types the scope has, read when the filters step first
    /// needs them (a scan of every document: 27 ms at 100k).
    doc_types: std::cell::OnceCell<Vec<String>>,
    /// The graph once loaded (`None` when the scope has none).
    graph: std::cell::OnceCell<Option<QueryGraph>>,
    /// The tool whose name prefixes warnings.
    tool: &'static str,
    /// Whether warnings are silenced (a failed reranker is one).
    quiet: bool,
    /// Whether a damaged lexical index was warned of.
    warned_of_lexical: std::cell::Cell<bool>,
    /// Whether a damaged `vectors.bin` was warned of.
    warned_of_vectors: bool,
}

/// One query's lists: its filtered and, when those found too little,
/// unfiltered retrieval, each retriever's list named after the query.
/// How a search went: its plan record, and whether a retriever's list was
/// full (it may have left out documents).
struct Searched {
    record: PlanRecord,
    lists_full: bool,
}

struct Retrieved {
    lists: Vec<(String, Vec<Scored>)>,
    documents: usize,
    fell_back: bool,
}

/// A model loading on another thread. Dropping it waits for the thread: ONNX
/// Runtime must not be torn down by the process's exit while a thread is
/// inside it.
struct ModelLoading(Option<JoinHandle<anyhow::Result<SharedModel>>>);

impl ModelLoading {
    /// Waits for the model, if one is loading.
    fn wait(&mut self) -> Option<anyhow::Result<SharedModel>> {
        let loading = self.0.take()?;
        Some(loading.join().expect("loading the model panicked"))
    }
}

impl Drop for ModelLoading {
    fn drop(&mut self) {
        let _ = self.wait();
    }
}

impl Searcher {
    /// Lets the process exit without tearing the searcher down: dropping
    /// ONNX Runtime's session and thread pool costs a one-question process
    /// about 5 ms, and the operating system frees them anyway.
    pub fn release_at_exit(mut self) {
        let _ = self.model_loading.wait();
        std::mem::forget(self);
    }

    /// Opens the index of the scope `dir` for `request`; refuses a model
    /// other than the index's before loading anything.
    pub fn open(
        dir: &Path,
        request: &Request,
        model: &ModelChoice,
        messages: &Messages,
    ) -> anyhow::Result<Searcher> {
        let store = Store::open_read(dir)?;
        let meta = store.meta()?;
        model.check(&meta, dir)?;
        let has_vectors = store.has_vectors()?;
        let settings = Settings::new(request, has_vectors, messages)?;
        // A process that answers one question loads the model while it
        // opens the rest of the index and plans the question.
        let model_loading =
            ModelLoading((model.one_shot && settings.mode != Mode::Bm25).then(|| {
                let (model, meta, dir) = (model.clone(), meta.clone(), dir.to_path_buf());
                std::thread::spawn(move || model.load(&meta, &dir))
            }));
        Ok(Searcher {
            opened: store.change_stamp()?,
            scope: scope_of(dir),
            doc_types: std::cell::OnceCell::new(),
            config: QueryConfig::load(dir)?,
            has_graph: kts_graph::tables::exist(store.connection())?,
            settings,
            has_vectors,
            store,
            meta,
            model: model.clone(),
            embedder: None,
            model_loading,
            vector_store: None,
            concurrent: true,
            graph: std::cell::OnceCell::new(),
            tool: messages.tool(),
            quiet: messages.is_quiet(),
            warned_of_lexical: std::cell::Cell::new(false),
            warned_of_vectors: false,
        })
    }

    /// Whether the index is as it was when this searcher opened it (nothing
    /// committed since, `vectors.bin` not rewritten): a searcher kept open is
    /// reopened otherwise, since it holds the graph, the doc types and the
    /// vector file of that moment.
    pub fn is_current(&self) -> bool {
        self.store
            .change_stamp()
            .is_ok_and(|now| now == self.opened)
    }

    /// Takes the settings of another request (a hybrid one on an index
    /// without vectors runs with BM25, silently: the open said so).
    pub fn configure(&mut self, request: &Request) -> anyhow::Result<()> {
        let quiet = Messages::new("kts-query").quiet(true);
        self.settings = Settings::new(request, self.has_vectors, &quiet)?;
        Ok(())
    }

    /// Where warnings go: stderr, with the tool's name.
    fn messages(&self) -> Messages {
        Messages::new(self.tool).quiet(self.quiet)
    }

    fn embedder(&mut self) -> anyhow::Result<&SharedModel> {
        if self.embedder.is_none() {
            let loaded = match self.model_loading.wait() {
                Some(loaded) => loaded?,
                None => self.model.load(&self.meta, self.store.scope())?,
            };
            self.embedder = Some(loaded);
        }
        Ok(self.embedder.as_ref().expect("loaded above"))
    }

    /// Whether a question embedded by `model` into `dims` dimensions can be
    /// searched in this index (built with that model).
    pub fn takes_embedding_of(&self, model: Option<&str>, dims: usize) -> bool {
        model.is_some() && model == self.meta.model_id.as_deref() && Some(dims) == self.meta.dims
    }

    /// A given embedding, checked against the index's model.
    fn checked(&self, vector: Vec<f32>, model: Option<String>) -> anyhow::Result<Vec<f32>> {
        let model = model.unwrap_or_else(|| "unknown".into());
        if Some(&model) != self.meta.model_id.as_ref() || Some(vector.len()) != self.meta.dims {
            return Err(UnusableEmbedding(format!(
                "the embedding is from model {model} ({} dims), and the index of {} was built \
                 with {} ({} dims): embed the question with kts-embed --query and that model, \
                 or give the text alone",
                vector.len(),
                self.store.scope().display(),
                self.meta.model_id.as_deref().unwrap_or("no model"),
                self.meta.dims.unwrap_or(0),
            ))
            .into());
        }
        Ok(vector)
    }

    /// Runs BM25 and vector search one after the other on one connection
    /// (when many scopes are searched in parallel already).
    pub fn one_connection(&mut self) {
        self.concurrent = false;
    }

    /// The slug hits name their scope by (the folder name's, unless a
    /// knowledge root had to make it unique).
    pub fn set_scope_name(&mut self, slug: &str) {
        self.scope = slug.to_string();
    }

    /// The question embedded by the index's model, with the model's id;
    /// `None` when the search runs without vectors.
    pub fn embed_question(
        &mut self,
        text: &str,
    ) -> anyhow::Result<Option<(Vec<f32>, Option<String>)>> {
        if self.settings.mode == Mode::Bm25 {
            return Ok(None);
        }
        let model = self.meta.model_id.clone();
        Ok(Some((self.embedder()?.embed_query(text)?, model)))
    }

    /// The document types the scope holds, read at first use.
    fn doc_types(&self) -> anyhow::Result<&[String]> {
        if self.doc_types.get().is_none() {
            let _ = self.doc_types.set(self.store.doc_types()?);
        }
        Ok(self.doc_types.get().map(Vec::as_slice).unwrap_or_default())
    }

    /// The scope's knowledge graph, loaded on first use; one that lags the
    /// index (or is missing when the graph step asks for it) is a warning.
    fn graph(&self) -> anyhow::Result<Option<&QueryGraph>> {
        if self.graph.get().is_none() {
            let loaded = QueryGraph::load(&self.store, self.store.scope())?;
            let messages = self.messages();
            let scope = self.store.scope().display();
            match &loaded {
                Some(_) => {
                    let lagging = kts_graph::tables::lagging(self.store.connection())?;
                    if lagging > 0 {
                        messages.warn(&format!(
                            "the knowledge graph lags the index by {lagging} documents: \
                             run kts-graph {scope} to update it"
                        ));
                    }
                }
                None if self.settings.steps.on(Step::Graph) => messages.warn(&format!(
                    "the scope has no knowledge graph, so the graph step does nothing: \
                     run kts-graph {scope}"
                )),
                None => {}
            }
            let _ = self.graph.set(loaded);
        }
        Ok(self.graph.get().and_then(Option::as_ref))
    }

    /// A Markdown context for an LLM: what the graph knows of the question's
    /// entities, then the hits' passages, cited, within `budget` tokens.
    pub fn context(
        &self,
        question: &str,
        hits: &[HitRecord],
        budget: usize,
    ) -> anyhow::Result<String> {
        let facts = self.graph_facts(question, None)?;
        Ok(context::markdown(
            question,
            &facts,
            hits,
            budget,
            Citing::Paths,
        ))
    }

    /// What the scope's graph knows of the question's entities (see
    /// [`context::graph_facts`]); none without a graph.
    pub fn graph_facts(&self, question: &str, scope: Option<&str>) -> anyhow::Result<Vec<String>> {
        let seeds = self.seeds(question)?;
        match self.graph()? {
            Some(graph) => graph.read(|view| context::graph_facts(view, &seeds, scope)),
            None => Ok(Vec::new()),
        }
    }

    /// The documents sharing the most (and the rarest) entities with the
    /// document at `path`, from the scope's graph.
    pub fn related(&self, path: &str, top: usize) -> anyhow::Result<Vec<NodeRecord>> {
        match self.graph()? {
            Some(graph) => graph.read(|view| kts_graph::queries::related(view, path, top)),
            None => anyhow::bail!(
                "the scope {} has no knowledge graph: build it with kts-graph DIR",
                self.scope
            ),
        }
    }

    /// Says so when none of the scope's documents has a type the filters ask
    /// for (a typo in `--doc-type` would otherwise only give no results).
    pub fn warn_of_absent_doc_types(&self, messages: &Messages) -> anyhow::Result<()> {
        let absent = self.absent_doc_types()?;
        if !absent.is_empty() {
            messages.warn(&format!(
                "no document of the scope {} has the type {} (its types: {})",
                self.scope,
                absent.join(", "),
                self.doc_types()?.join(", ")
            ));
        }
        Ok(())
    }

    /// The types the filters ask for that no document of the scope has.
    pub fn absent_doc_types(&self) -> anyhow::Result<Vec<String>> {
        let present = self.doc_types()?;
        Ok((self.settings.filters.doc_types.iter())
            .filter(|t| !present.iter().any(|p| p.eq_ignore_ascii_case(t)))
            .cloned()
            .collect())
    }

    /// The open store, for reading documents back.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The scope's graph entities the question names (none without a graph).
    pub fn seeds(&self, text: &str) -> anyhow::Result<Vec<NodeIndex>> {
        match self.graph()? {
            Some(graph) => graph.seeds(text),
            None => Ok(Vec::new()),
        }
    }

    /// The queries the pipeline's steps make of a question.
    pub fn plan(&self, question: &str) -> anyhow::Result<Plan> {
        let lexicon = Lexicon::new(self.store.connection(), &self.config, self.has_graph);
        let doc_types = if self.settings.steps.on(Step::Filters) {
            self.doc_types()?
        } else {
            &[]
        };
        let planner = Planner::new(
            lexicon,
            &self.settings.steps,
            &self.settings.filters,
            doc_types,
            plain_extractor(),
        );
        planner.plan(question)
    }

    /// The results for one question, best first.
    pub fn search(
        &mut self,
        text: &str,
        given: Option<(Vec<f32>, Option<String>)>,
    ) -> anyhow::Result<Vec<HitRecord>> {
        Ok(self.search_explained(text, given)?.0)
    }

    /// The results for one question and the record of how they were found,
    /// all read from one state of the store.
    pub fn search_explained(
        &mut self,
        text: &str,
        given: Option<(Vec<f32>, Option<String>)>,
    ) -> anyhow::Result<(Vec<HitRecord>, PlanRecord)> {
        if let Some(reason) = self.settings.cutoff.reached() {
            anyhow::bail!(reason);
        }
        self.store.begin_read()?;
        let result = self.search_deep_enough(text, given);
        self.store.end_read()?;
        result
    }

    /// One long document can fill every candidate list, and only its best
    /// chunk is kept: when fewer documents than asked came back though a list
    /// was full and the scope holds more, the search runs again with four
    /// times the candidates (up to [`MAX_CANDIDATES`]).
    fn search_deep_enough(
        &mut self,
        text: &str,
        given: Option<(Vec<f32>, Option<String>)>,
    ) -> anyhow::Result<(Vec<HitRecord>, PlanRecord)> {
        let asked = self.settings.candidates;
        let mut searched = self.search_in_one_state(text, given.clone());
        while let Ok((hits, plan)) = &mut searched
            && self.worth_searching_deeper(hits.len(), plan.lists_full)?
        {
            self.settings.candidates = (self.settings.candidates * 4).min(MAX_CANDIDATES);
            searched = self.search_in_one_state(text, given.clone());
            if let Ok((_, plan)) = &mut searched {
                plan.record.notes.push(PlanNote {
                    step: "deeper".to_string(),
                    detail: format!(
                        "searched again with {} candidates: the lists were full of fewer \
                         documents than asked",
                        self.settings.candidates
                    ),
                });
            }
        }
        self.settings.candidates = asked;
        searched.map(|(hits, plan)| (hits, plan.record))
    }

    fn worth_searching_deeper(&self, found: usize, lists_full: bool) -> anyhow::Result<bool> {
        if self.settings.all_chunks
            || !lists_full
            || found >= self.settings.top_k
            || self.settings.candidates >= MAX_CANDIDATES
        {
            return Ok(false);
        }
        Ok(self.store.document_count()? > found)
    }

    fn search_in_one_state(
        &mut self,
        text: &str,
        given: Option<(Vec<f32>, Option<String>)>,
    ) -> anyhow::Result<(Vec<HitRecord>, Searched)> {
        let plan = self.plan(text)?;
        let mut given = match given {
            Some((vector, model)) => Some(self.checked(vector, model)?),
            None => None,
        };
        let mut lists = Vec::new();
        // The question's own vector search, for the feedback step.
        let mut question_search: Option<(Vec<f32>, Filters)> = None;
        let mut planned = Vec::new();
        let mut parts = 0;
        for query in &plan.queries {
            // A given embedding is the question's; other texts need the model.
            let vector = match self.settings.mode {
                Mode::Bm25 => None,
                _ if query.role == Role::Question && query.embed_text == text.trim() => {
                    match given.take() {
                        Some(vector) => Some(vector),
                        None => Some(self.embedder()?.embed_query(&query.embed_text)?),
                    }
                }
                _ => Some(self.embedder()?.embed_query(&query.embed_text)?),
            };
            let prefix = match query.role {
                Role::Question => String::new(),
                Role::Part => {
                    parts += 1;
                    format!("part{parts}_")
                }
                Role::StepBack => "step_back_".to_string(),
            };
            if let (Role::Question, Some(vector)) = (query.role, &vector) {
                question_search = Some((vector.clone(), query.filters.clone()));
            }
            let retrieved = self.retrieve_query(query, vector.as_deref(), &prefix)?;
            planned.push(planned_query(query, &retrieved));
            lists.extend(retrieved.lists);
        }
        // Chunk → document, asked of the store once per chunk.
        let mut docs: HashMap<i64, Option<String>> = HashMap::new();
        let store = &self.store;
        let mut doc_of = |rowid: i64| -> anyhow::Result<Option<String>> {
            if let Some(doc) = docs.get(&rowid) {
                return Ok(doc.clone());
            }
            let doc = store.doc_id_of(rowid)?;
            docs.insert(rowid, doc.clone());
            Ok(doc)
        };
        let mut graph_note = None;
        if self.settings.steps.on(Step::Graph) {
            let seeds = self.seeds(text)?;
            let detail = match self.graph()? {
                None => "no knowledge graph (kts-graph DIR builds it)".to_string(),
                Some(_) if seeds.is_empty() => "the question names no entity of the graph".into(),
                Some(graph) => {
                    let scores = graph.document_scores(&seeds)?;
                    let list = graph_list(&lists, &scores, &mut doc_of)?;
                    let detail = format!(
                        "entities {} → {} of the chunks found",
                        graph.names(&seeds)?.join(", "),
                        list.len()
                    );
                    if !list.is_empty() {
                        lists.push(("graph".to_string(), list));
                    }
                    detail
                }
            };
            graph_note = Some(PlanNote {
                step: Step::Graph.name().to_string(),
                detail,
            });
        }
        let weights = &self.settings.weights;
        let weight_of = |name: &str| {
            let query = if name.starts_with("part") {
                weights.get("part")
            } else if name.starts_with("step_back") {
                weights.get("step_back")
            } else {
                1.0
            };
            let retriever = if name == "graph" {
                weights.get("graph")
            } else if name.ends_with("bm25") {
                weights.get("bm25")
            } else if name.ends_with("vector") {
                weights.get("vector")
            } else {
                1.0
            };
            query * retriever
        };
        let lists_full = lists
            .iter()
            .any(|(_, list)| list.len() >= self.settings.candidates);
        let mut fused = fuse(
            &lists,
            self.settings.fusion,
            self.settings.candidates,
            weight_of,
        );
        let mut feedback_note = None;
        if let (true, Some((vector, filters))) =
            (self.settings.steps.on(Step::Feedback), &question_search)
        {
            let best: Vec<i64> = fused
                .iter()
                .take(FEEDBACK_CHUNKS)
                .map(|f| f.rowid)
                .collect();
            let chunks = self.store.embeddings(&best)?;
            let weight = weights.get("feedback");
            if let Some(moved) = moved_toward(vector, &chunks, weight) {
                let again = self
                    .store
                    .search_vector(&moved, self.settings.candidates, filters)?;
                if let Some((_, list)) = lists.iter_mut().find(|(name, _)| name == "vector") {
                    *list = again;
                }
                fused = fuse(
                    &lists,
                    self.settings.fusion,
                    self.settings.candidates,
                    weight_of,
                );
                feedback_note = Some(PlanNote {
                    step: Step::Feedback.name().to_string(),
                    detail: format!(
                        "vector search again, moved toward the best {} (weight {weight})",
                        match chunks.len() {
                            1 => "chunk".to_string(),
                            n => format!("{n} chunks"),
                        }
                    ),
                });
            }
        }
        let rarities = self.store.rarities(&plan.terms)?;
        if self.settings.steps.on(Step::Signals) {
            self.apply_signals(&plan, &rarities, &mut fused)?;
        }
        let reranked = self.rerank(text, &mut fused)?;
        let kept = top_k(fused, self.settings.top_k, self.settings.all_chunks, doc_of)?;
        let hits = self.hit_records(&kept, &plan.terms, &rarities)?;
        let record = PlanRecord {
            schema: kts_record::schema_id::PLAN.into(),
            question: text.to_string(),
            scope: self.scope.clone(),
            steps: self
                .settings
                .steps
                .names()
                .iter()
                .map(|s| s.to_string())
                .collect(),
            intent: plan.intent.map(|i| i.name.to_string()),
            error_codes: plan.error_codes.clone(),
            entities: plan.entities.clone(),
            phrases: plan.phrases.clone(),
            queries: planned,
            notes: plan
                .notes
                .iter()
                .map(|n| PlanNote {
                    step: n.step.to_string(),
                    detail: n.detail.clone(),
                })
                .chain(self.lexical_note())
                .chain(graph_note)
                .chain(feedback_note)
                .chain(reranked)
                .collect(),
            weights: self
                .settings
                .weights
                .iter()
                .map(|(n, w)| (n.to_string(), w))
                .collect(),
        };
        Ok((hits, Searched { record, lists_full }))
    }

    /// Orders the best candidates again by the request's reranker, if any;
    /// the note tells what it did, and a failure is a warning.
    fn rerank(&self, question: &str, fused: &mut [Fused]) -> anyhow::Result<Option<PlanNote>> {
        let Some(reranker) = &self.settings.reranker else {
            return Ok(None);
        };
        let count = fused.len().min(reranker.top);
        let rowids: Vec<i64> = fused[..count].iter().map(|f| f.rowid).collect();
        let hits = self.store.fetch_hits(&rowids)?;
        let detail = match reranker.rerank(question, fused, &hits) {
            Ok(0) => "not run: fewer than 2 candidates".to_string(),
            Ok(scored) => format!("{scored} candidates scored by {}", reranker.by),
            Err(why) => {
                let warning = format!(
                    "the reranker ({}): {why}; the fused order stands",
                    reranker.by
                );
                self.messages().warn(&warning);
                warning
            }
        };
        Ok(Some(PlanNote {
            step: "rerank".to_string(),
            detail,
        }))
    }

    /// Multiplies the fused score of the best candidates by their signals'
    /// boost (`rarities` weigh the plan's terms) and orders them again.
    fn apply_signals(
        &self,
        plan: &Plan,
        rarities: &[f64],
        fused: &mut [Fused],
    ) -> anyhow::Result<()> {
        let considered = fused.len().min(self.settings.candidates);
        let rowids: Vec<i64> = fused[..considered].iter().map(|f| f.rowid).collect();
        let hits = self.store.fetch_hits(&rowids)?;
        let by_rowid: HashMap<i64, &kts_store::Hit> = hits.iter().map(|h| (h.rowid, h)).collect();
        for f in fused[..considered].iter_mut() {
            let Some(hit) = by_rowid.get(&f.rowid) else {
                continue;
            };
            let signals = rank::signals::signals(plan, rarities, hit, plain_extractor());
            f.score *= rank::signals::boost(&signals, &self.settings.weights);
            for (name, value) in signals {
                f.signals.insert(
                    name.to_string(),
                    Scored {
                        rowid: f.rowid,
                        score: value,
                        rank: 0,
                    },
                );
            }
        }
        fused[..considered].sort_by(|a, b| b.score.total_cmp(&a.score).then(a.rowid.cmp(&b.rowid)));
        Ok(())
    }

    /// One query's lists, a list per retriever: the filtered search's hits,
    /// followed, when it found fewer than `--min-filtered` documents, by the
    /// unfiltered search's other hits.
    fn retrieve_query(
        &mut self,
        query: &SubQuery,
        vector: Option<&[f32]>,
        prefix: &str,
    ) -> anyhow::Result<Retrieved> {
        let mut lists = self.retrieve(&query.search_text, vector, &query.filters)?;
        let documents = self.count_documents(&lists)?;
        let filtered = query.filters != self.settings.filters;
        let fell_back = filtered && documents < self.settings.min_filtered;
        if fell_back {
            let unfiltered = self.settings.filters.clone();
            let more = self.retrieve(&query.unfiltered_text, vector, &unfiltered)?;
            for ((_, list), (_, more)) in lists.iter_mut().zip(more) {
                append_new(list, more);
            }
        }
        self.warn_of_damaged_vectors();
        Ok(Retrieved {
            lists: lists
                .into_iter()
                .map(|(name, list)| (format!("{prefix}{name}"), list))
                .collect(),
            documents,
            fell_back,
        })
    }

    fn count_documents(&self, lists: &[(&str, Vec<Scored>)]) -> anyhow::Result<usize> {
        let mut docs = std::collections::HashSet::new();
        for (_, list) in lists {
            for scored in list {
                if let Some(doc) = self.store.doc_id_of(scored.rowid)? {
                    docs.insert(doc);
                    if docs.len() >= self.settings.min_filtered {
                        return Ok(docs.len());
                    }
                }
            }
        }
        Ok(docs.len())
    }

    /// Says once that `vectors.bin` is damaged, when a vector search found it so.
    fn warn_of_damaged_vectors(&mut self) {
        if self.warned_of_vectors {
            return;
        }
        let damage = (self.store.vector_file_damage())
            .or_else(|| self.vector_store.as_ref()?.vector_file_damage());
        if let Some(damage) = damage {
            self.messages().warn(&damage);
            self.warned_of_vectors = true;
        }
    }

    /// Each retriever's candidates; in hybrid mode BM25 and vector search
    /// run at the same time, on two connections.
    fn retrieve(
        &mut self,
        text: &str,
        vector: Option<&[f32]>,
        filters: &Filters,
    ) -> anyhow::Result<Vec<(&'static str, Vec<Scored>)>> {
        let k = self.settings.candidates;
        if self.settings.mode == Mode::Hybrid && self.concurrent && self.vector_store.is_none() {
            self.vector_store = Some(Store::open_read(self.store.scope())?);
        }
        match (self.settings.mode, vector, self.vector_store.as_mut()) {
            (Mode::Hybrid, Some(vector), Some(vector_store)) => {
                let store = &self.store;
                std::thread::scope(|s| {
                    let near = s.spawn(move || vector_store.search_vector(vector, k, filters));
                    let bm25 = store.search_bm25(text, k, filters)?;
                    let near = near.join().expect("vector search panicked")?;
                    Ok(vec![("bm25", bm25), ("vector", near)])
                })
            }
            (Mode::Hybrid, Some(vector), None) => Ok(vec![
                ("bm25", self.store.search_bm25(text, k, filters)?),
                ("vector", self.store.search_vector(vector, k, filters)?),
            ]),
            (Mode::Vector, Some(vector), _) => Ok(vec![(
                "vector",
                self.store.search_vector(vector, k, filters)?,
            )]),
            _ => Ok(vec![("bm25", self.store.search_bm25(text, k, filters)?)]),
        }
    }

    /// Where BM25 came from, when it ran.
    fn lexical_note(&self) -> Option<PlanNote> {
        if self.settings.mode == Mode::Vector {
            return None;
        }
        let state = (self.store.lexical_state())
            .unwrap_or_else(|e| LexicalState::Unreadable(format!("{e:#}")));
        let unreadable = matches!(
            state,
            LexicalState::Unreadable(_) | LexicalState::Forbidden(_)
        );
        if unreadable && !self.warned_of_lexical.replace(true) {
            self.messages().warn(&format!("BM25 ran on FTS5: {state}"));
        }
        let detail = match state {
            LexicalState::Current => "from the lexical index".to_string(),
            other => format!("from FTS5: {other}"),
        };
        Some(PlanNote {
            step: "bm25".to_string(),
            detail,
        })
    }

    /// The kept chunks as hits, each citing the part of its chunk that best
    /// matches the question's `terms` (weighed by `term_rarities`, in order).
    fn hit_records(
        &self,
        kept: &[Fused],
        terms: &[String],
        term_rarities: &[f64],
    ) -> anyhow::Result<Vec<HitRecord>> {
        let rowids: Vec<i64> = kept.iter().map(|f| f.rowid).collect();
        let mut hits: HashMap<i64, Hit> = (self.store.fetch_hits(&rowids)?)
            .into_iter()
            .map(|hit| (hit.rowid, hit))
            .collect();
        let mut stemmed: Vec<&str> = Vec::new();
        let mut rarities: Vec<f64> = Vec::new();
        for (term, &rarity) in terms.iter().zip(term_rarities) {
            let term = stem(term);
            match stemmed.iter().position(|seen| *seen == term) {
                Some(i) => rarities[i] = rarities[i].max(rarity),
                None => {
                    stemmed.push(term);
                    rarities.push(rarity);
                }
            }
        }
        let kept: Vec<(&Fused, Hit)> = kept
            .iter()
            .filter_map(|fused| Some((fused, hits.remove(&fused.rowid)?)))
            .collect();
        let vectors_searched = self.settings.mode != Mode::Bm25;
        let confidences: Vec<f64> = never_rising(kept.iter().enumerate().map(|(i, (fused, _))| {
            confidence(&confidence_features(fused, i + 1), vectors_searched)
        }))
        .collect();
        kept.into_iter()
            .enumerate()
            .map(|(i, (fused, hit))| {
                let cited = self.citation(&hit, &stemmed, &rarities)?;
                Ok(HitRecord {
                    schema: kts_record::schema_id::HIT.into(),
                    rank: i + 1,
                    score: fused.score,
                    doc_id: hit.doc_id,
                    chunk_id: hit.chunk_id,
                    scope: self.scope.clone(),
                    path: hit.path,
                    title: hit.title,
                    doc_type: hit.doc_type,
                    text: hit.text,
                    heading_path: cited.heading_path,
                    start: hit.start,
                    end: hit.end,
                    cited_start: Some(cited.start),
                    page: cited.page,
                    slide: cited.slide,
                    signals: signals(fused),
                    confidence: Some(confidences[i]),
                })
            })
            .collect()
    }

    /// What `hit` cites (its question's `terms` weighed by their
    /// `rarities`); the levels of headings before its chunk are read
    /// from the document's earlier chunks.
    fn citation(&self, hit: &Hit, terms: &[&str], rarities: &[f64]) -> anyhow::Result<Citation> {
        cite(hit, terms, rarities, |heading, below| {
            self.store
                .find_in_earlier_chunks(&hit.doc_id, hit.start, heading, |start, text| {
                    heading_level(text, start, hit.start, heading, below)
                })
        })
    }
}

/// `list` followed by the entries of `more` it lacks, ranked again.
fn append_new(list: &mut Vec<Scored>, more: Vec<Scored>) {
    let seen: std::collections::HashSet<i64> = list.iter().map(|s| s.rowid).collect();
    list.extend(more.into_iter().filter(|s| !seen.contains(&s.rowid)));
    for (i, scored) in list.iter_mut().enumerate() {
        scored.rank = i + 1;
    }
}

/// What one query of the plan was and found, for the plan record.
fn planned_query(query: &SubQuery, retrieved: &Retrieved) -> PlannedQuery {
    PlannedQuery {
        role: match query.role {
            Role::Question => "question",
            Role::Part => "part",
            Role::StepBack => "step_back",
        }
        .to_string(),
        search_text: query.search_text.clone(),
        embed_text: query.embed_text.clone(),
        // The types asked for (--doc-type, /slug /type) and those the intent gave.
        doc_types: query.filters.doc_types.clone(),
        entities: query.entities.clone(),
        documents: retrieved.documents,
        fell_back: retrieved.fell_back,
    }
}

fn signals(fused: &Fused) -> std::collections::BTreeMap<String, Signal> {
    fused
        .signals
        .iter()
        .map(|(name, scored)| {
            let rank = (scored.rank > 0).then_some(scored.rank);
            (
                name.clone(),
                Signal {
                    rank,
                    score: scored.score,
                },
            )
        })
        .collect()
}

fn scope_of(dir: &Path) -> String {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    dir.file_name()
        .map(|n| scope_slug(&n.to_string_lossy()))
        .unwrap_or_default()
}

/// The entity extractor without seeds or taxonomy, built once per process
/// (its patterns take milliseconds to compile; a knowledge root opens many scopes).
fn plain_extractor() -> &'static kts_graph::extract::Extractor {
    static EXTRACTOR: std::sync::OnceLock<kts_graph::extract::Extractor> =
        std::sync::OnceLock::new();
    EXTRACTOR.get_or_init(|| kts_graph::extract::Extractor::new(&[], &[]))
}
