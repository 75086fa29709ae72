//! `DIR/.kts/lexical/`: a tantivy index of the chunks' words, for BM25 that
//! stays fast on large scopes (block-max WAND skips the documents that cannot
//! reach the top k; FTS5 scores every matching row).
//!
//! SQLite stays the store of record, as for `vectors.bin`. Triggers on
//! `chunks` log every row added or removed in `lexical_pending`. After its
//! last commit the writer brings the index up to date ([`sync`]): it replaces
//! the pending rows in the index, commits it with a new generation number as
//! its payload, then clears `lexical_pending` and records that generation in
//! `meta.lexical_generation`, in one SQLite transaction. A reader uses the
//! index only while it is current: nothing pending, and the index's
//! generation is the store's. Otherwise BM25 runs on FTS5, which gives the
//! same ranking up to the scoring formulas' small differences.
//!
//! A writer killed between the two commits leaves the index one generation
//! ahead with the pending rows still logged; applying them again is harmless,
//! so the next writer resumes from there. One killed inside the index's own
//! commit leaves files no generation names: the next writer deletes them first. Any other disagreement (a missing,
//! damaged or foreign index) makes the next writer rebuild it from SQLite.
//!
//! Damage is found by the files' checksums: the writer checks every file
//! before it uses the index; a reader checks the small ones when it opens
//! the index, and takes an error or a panic of tantivy's, or a score no
//! sound index gives, as damage. A reader that finds damage runs BM25 on
//! FTS5 and says so ([`LexicalState::Unreadable`]).
//!
//! Deleted chunks count in the words' statistics until tantivy merges their
//! segment: a segment is merged once a share of its documents is deleted
//! ([`DELETED_SHARE_BEFORE_MERGE`]), which bounds how far BM25 scores drift
//! from those of a fresh index.
//!
//! Each chunk is one tantivy document whose one text field holds the chunk's
//! text, its document's title and its heading path: FTS5's BM25 sums term
//! counts over those three columns and measures length over all three, which
//! is BM25 on their concatenation.

mod analysis;

use std::cell::Cell;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::Once;

use crate::words::{indexed_text, indexed_title};
use anyhow::Context;
use rusqlite::{Connection, params};
use tantivy::collector::TopDocs;
use tantivy::columnar::Column;
use tantivy::directory::MmapDirectory;
use tantivy::index::SegmentComponent;
use tantivy::indexer::LogMergePolicy;
use tantivy::query::{BooleanQuery, ConstScoreQuery, Occur, Query, TermQuery, TermSetQuery};
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STRING, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::{DocAddress, Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

use crate::read_only::ReadOnlyDirectory;
use crate::search::Filters;
use crate::{kts_dir, schema};

pub use analysis::term;

/// Bumped when the index's fields or analysis change: an index of another
/// format is rebuilt.
const FORMAT: u32 = 1;
/// The writer's memory for buffered documents, shared by its threads.
const WRITER_MEMORY: usize = 64 << 20;

/// `DIR/.kts/lexical`.
pub fn index_dir(scope: &Path) -> PathBuf {
    kts_dir(scope).join("lexical")
}

/// What a commit of the index carries: its format and generation.
#[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
struct Payload {
    format: u32,
    generation: u64,
}

impl Payload {
    fn of(index: &Index) -> Option<Payload> {
        let metas = index.load_metas().ok()?;
        serde_json::from_str(metas.payload.as_deref()?).ok()
    }
}

#[derive(Clone, Copy)]
struct Fields {
    rowid: Field,
    doc_id: Field,
    doc_type: Field,
    body: Field,
}

impl Fields {
    fn schema() -> (Schema, Fields) {
        let mut builder = Schema::builder();
        let body_indexing = TextFieldIndexing::default()
            .set_tokenizer(analysis::NAME)
            .set_index_option(IndexRecordOption::WithFreqs);
        let fields = Fields {
            rowid: builder.add_i64_field("rowid", INDEXED | FAST),
            doc_id: builder.add_text_field("doc_id", STRING),
            doc_type: builder.add_text_field("doc_type", STRING),
            body: builder.add_text_field(
                "body",
                TextOptions::default().set_indexing_options(body_indexing),
            ),
        };
        (builder.build(), fields)
    }

    /// The fields of an existing index, if it has ours.
    fn of(index: &Index) -> Option<Fields> {
        let schema = index.schema();
        let (expected, fields) = Fields::schema();
        (schema == expected).then_some(fields)
    }
}

fn register_analyzer(index: &Index) {
    index
        .tokenizers()
        .register(analysis::NAME, analysis::Analyzer::default());
}

/// Whether the index can answer for the store now, and if not, why.
#[derive(Clone, Debug, PartialEq)]
pub enum LexicalState {
    Current,
    /// No index yet (a store written before it existed, or never synced).
    Missing,
    /// Rows changed since the index was last brought up to date.
    Stale,
    /// The index cannot be opened or searched (damaged files): the why
    /// names its folder.
    Unreadable(String),
    /// This user may not read the index's files: the why names the file.
    Forbidden(String),
}

impl LexicalState {
    pub(crate) fn unreadable(scope: &Path, e: &anyhow::Error) -> LexicalState {
        LexicalState::Unreadable(format!("{}: {e:#}", index_dir(scope).display()))
    }
}

impl std::fmt::Display for LexicalState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Current => write!(f, "the lexical index is current"),
            Self::Missing => write!(f, "no lexical index yet: kts-index DIR builds it"),
            Self::Stale => write!(
                f,
                "the lexical index is behind the store (a write is under way or was cut off): \
                 the next kts-index DIR brings it up to date"
            ),
            Self::Unreadable(why) => write!(
                f,
                "the lexical index cannot be read ({why}): the next kts-index DIR rebuilds it"
            ),
            Self::Forbidden(why) => write!(
                f,
                "this user may not read the lexical index ({why}): kts-index DIR, run by the \
                 index's owner, lets its files be read as the owner's umask allows"
            ),
        }
    }
}

/// Refuses an index whose files this user may not read.
fn forbidden(dir: &Path) -> Option<LexicalState> {
    WRITTEN_ATOMICALLY.iter().find_map(|name| {
        let file = dir.join(name);
        match std::fs::File::open(&file) {
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                Some(LexicalState::Forbidden(format!("{}: {e}", file.display())))
            }
            _ => None,
        }
    })
}

/// The files tantivy writes through temporary files, which are 0600 (see
/// permissions.rs).
const WRITTEN_ATOMICALLY: [&str; 2] = ["meta.json", ".managed.json"];

/// Lets the index's files be read as the umask allows. Run after every
/// sync, so that the next kts-index also mends an index written before.
pub(crate) fn open_up_files(dir: &Path) {
    let files = WRITTEN_ATOMICALLY.map(|name| dir.join(name));
    crate::permissions::open_up_as_umask_allows(&files);
}

/// A reader's view of the index, opened only when current (cheap to clone).
#[derive(Clone)]
pub struct LexicalIndex {
    reader: IndexReader,
    fields: Fields,
    /// The rowid column of each segment, by segment ordinal.
    rowids: Vec<Column<i64>>,
}

impl LexicalIndex {
    /// The index of `scope` if it is current for the store on `conn`.
    pub(crate) fn open(conn: &Connection, scope: &Path) -> (Option<LexicalIndex>, LexicalState) {
        match contained(|| Self::try_open(conn, scope)) {
            Ok(Ok(index)) => (Some(index), LexicalState::Current),
            Ok(Err(state)) => (None, state),
            Err(e) => (None, LexicalState::unreadable(scope, &e)),
        }
    }

    fn try_open(
        conn: &Connection,
        scope: &Path,
    ) -> anyhow::Result<Result<LexicalIndex, LexicalState>> {
        let dir = index_dir(scope);
        let Some(generation) = schema::lexical_generation(conn)? else {
            return Ok(Err(LexicalState::Missing));
        };
        if schema::lexical_pending(conn)? {
            return Ok(Err(LexicalState::Stale));
        }
        if !dir.join("meta.json").is_file() {
            return Ok(Err(LexicalState::Missing));
        }
        if let Some(forbidden) = forbidden(&dir) {
            return Ok(Err(forbidden));
        }
        let index = if crate::read_only::can_write(&dir.join("meta.json")) {
            Index::open_in_dir(&dir)?
        } else {
            Index::open(ReadOnlyDirectory(MmapDirectory::open(&dir)?))?
        };
        if Payload::of(&index)
            != Some(Payload {
                format: FORMAT,
                generation,
            })
        {
            return Ok(Err(LexicalState::Stale));
        }
        let fields = Fields::of(&index).context("its fields are not this kts's")?;
        check_small_files(&index)?;
        register_analyzer(&index);
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        let rowids = reader
            .searcher()
            .segment_readers()
            .iter()
            .map(|segment| segment.fast_fields().i64("rowid"))
            .collect::<Result<_, _>>()?;
        Ok(Ok(LexicalIndex {
            reader,
            fields,
            rowids,
        }))
    }

    /// The `k` best chunks for these query words by BM25, as (rowid, score),
    /// best first (ties by rowid). An error (a panic of tantivy's included)
    /// or a score no sound index gives means the index is damaged.
    pub fn search(
        &self,
        words: &[String],
        k: usize,
        filters: &Filters,
    ) -> anyhow::Result<Vec<(i64, f64)>> {
        let rows = contained(|| self.try_search(words, k, filters))?;
        // BM25 gives every match a positive score: each query word's weight
        // and term frequency part are positive.
        if let Some((_, score)) = rows
            .iter()
            .find(|(_, score)| !score.is_finite() || *score <= 0.0)
        {
            anyhow::bail!("it scores a match {score}: its files are damaged");
        }
        Ok(rows)
    }

    fn try_search(
        &self,
        words: &[String],
        k: usize,
        filters: &Filters,
    ) -> anyhow::Result<Vec<(i64, f64)>> {
        let terms: Vec<Box<dyn Query>> = words
            .iter()
            .filter_map(|word| term(word))
            .map(|word| {
                Box::new(TermQuery::new(
                    Term::from_field_text(self.fields.body, &word),
                    IndexRecordOption::WithFreqs,
                )) as Box<dyn Query>
            })
            .collect();
        if terms.is_empty() || k == 0 {
            return Ok(Vec::new());
        }
        let mut clauses = vec![(
            Occur::Must,
            Box::new(BooleanQuery::union(terms)) as Box<dyn Query>,
        )];
        let only = |field: Field, values: &[String]| -> (Occur, Box<dyn Query>) {
            let set = TermSetQuery::new(values.iter().map(|v| Term::from_field_text(field, v)));
            (
                Occur::Must,
                Box::new(ConstScoreQuery::new(Box::new(set), 0.0)),
            )
        };
        if !filters.doc_types.is_empty() {
            clauses.push(only(self.fields.doc_type, &filters.doc_types));
        }
        if let Some(doc_ids) = &filters.doc_ids {
            clauses.push(only(self.fields.doc_id, doc_ids));
        }
        let query = BooleanQuery::new(clauses);
        let searcher = self.reader.searcher();
        let found = searcher.search(&query, &TopDocs::with_limit(k).order_by_score())?;
        let mut rows = Vec::with_capacity(found.len());
        for (
            score,
            DocAddress {
                segment_ord,
                doc_id,
            },
        ) in found
        {
            let rowid = self.rowids[segment_ord as usize]
                .first(doc_id)
                .context("a lexical index entry without its rowid")?;
            rows.push((rowid, f64::from(score)));
        }
        Ok(crate::search::best_first(rows, k))
    }
}

impl LexicalIndex {
    /// How many chunks there are, and how many hold each of these words.
    pub fn document_frequencies(&self, words: &[String]) -> anyhow::Result<(u64, Vec<u64>)> {
        contained(|| {
            let searcher = self.reader.searcher();
            let frequencies = words
                .iter()
                .map(|word| match term(word) {
                    Some(word) => {
                        Ok(searcher.doc_freq(&Term::from_field_text(self.fields.body, &word))?)
                    }
                    None => Ok(0),
                })
                .collect::<anyhow::Result<_>>()?;
            Ok((searcher.num_docs(), frequencies))
        })
    }
}

thread_local! {
    /// Whether this thread runs a tantivy call under [`contained`].
    static CONTAINING: Cell<bool> = const { Cell::new(false) };
}

/// Runs a tantivy call with its panics turned into errors: tantivy's
/// decoders panic on damaged files (an index out of bounds), and the index
/// is only derived from the store, so damage must not end the process. The
/// panic's own report is kept off stderr; the error carries its message.
fn contained<T>(call: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<T> {
    static QUIET_HOOK: Once = Once::new();
    QUIET_HOOK.call_once(|| {
        let report = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !CONTAINING.get() {
                report(info);
            }
        }));
    });
    let outer = CONTAINING.replace(true);
    let result = std::panic::catch_unwind(AssertUnwindSafe(call));
    CONTAINING.set(outer);
    result.unwrap_or_else(|panic| {
        let message = (panic.downcast_ref::<&str>().copied())
            .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("no message");
        Err(anyhow::anyhow!("tantivy panicked: {message}"))
    })
}

/// Checks the checksums of the files a search reads besides the postings
/// and the term dictionary (those are the bulk of the index: a reader
/// cannot afford to read them whole, and [`LexicalIndex::search`] checks
/// what it finds there): each segment's field norms, fast fields and
/// deletions, which are small.
fn check_small_files(index: &Index) -> anyhow::Result<()> {
    let components = [
        SegmentComponent::FieldNorms,
        SegmentComponent::FastFields,
        SegmentComponent::Delete,
    ];
    for segment in index.searchable_segment_metas()? {
        for component in &components {
            if *component == SegmentComponent::Delete && !segment.has_deletes() {
                continue;
            }
            check_file(index, &segment.relative_path(component.clone()))?;
        }
    }
    Ok(())
}

fn check_file(index: &Index, file: &Path) -> anyhow::Result<()> {
    if !index.directory().validate_checksum(file)? {
        anyhow::bail!("{} does not match its checksum", file.display());
    }
    Ok(())
}

/// Checks every file of the index against its checksum (a missing file
/// fails too).
fn check_all_files(index: &Index) -> anyhow::Result<()> {
    let damaged = index.validate_checksum()?;
    if let Some(file) = damaged.iter().next() {
        anyhow::bail!("{} does not match its checksum", file.display());
    }
    Ok(())
}

/// What [`sync`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Synced {
    /// Nothing had changed.
    Current,
    /// The pending rows were replaced.
    Updated { rows: usize },
    /// The index was built anew from every chunk.
    Rebuilt { rows: usize },
}

/// Brings the lexical index of `scope` up to date with the committed store
/// (the writer, outside a transaction). See the module comment.
pub(crate) fn sync(conn: &Connection, scope: &Path) -> anyhow::Result<Synced> {
    let dir = index_dir(scope);
    let generation = schema::lexical_generation(conn)?;
    let next = generation.map_or(1, |g| g + 1);
    if let (Some((index, payload)), Some(generation)) = (open_for_writing(&dir), generation)
        && payload.format == FORMAT
        && (payload.generation == generation || payload.generation == generation + 1)
    {
        if payload.generation == generation && !schema::lexical_pending(conn)? {
            return Ok(Synced::Current);
        }
        // Damage the checksums miss can still fail the update: rebuilt then.
        if let Ok(rows) = contained(|| update(conn, &index, next)) {
            record_generation(conn, next)?;
            return Ok(Synced::Updated { rows });
        }
    }
    let rows = contained(|| rebuild(conn, &dir, next))?;
    record_generation(conn, next)?;
    Ok(Synced::Rebuilt { rows })
}

/// Replaces the pending rows in `index` and commits it as generation `next`.
fn update(conn: &Connection, index: &Index, next: u64) -> anyhow::Result<usize> {
    let fields = Fields::of(index).expect("checked when opened");
    let writer = writer(index)?;
    let rows = replace_pending(conn, &writer, fields)?;
    commit(writer, next)?;
    Ok(rows)
}

/// Builds the index anew in `dir` from every chunk, as generation `next`.
fn rebuild(conn: &Connection, dir: &Path, next: u64) -> anyhow::Result<usize> {
    let index = create(dir)?;
    let writer = writer(&index)?;
    let rows = add_all(conn, &writer, Fields::schema().1)?;
    commit(writer, next)?;
    Ok(rows)
}

/// The share of a segment's documents that may be deleted before the
/// segment is merged away. Until then a deleted chunk still counts in the
/// words' statistics, so BM25 scores drift from those of a fresh index by
/// at most what this share of stale documents makes; merging only the
/// segments past it keeps a small update small.
const DELETED_SHARE_BEFORE_MERGE: f32 = 0.15;

fn writer(index: &Index) -> anyhow::Result<IndexWriter<TantivyDocument>> {
    let writer: IndexWriter<TantivyDocument> = index.writer(WRITER_MEMORY)?;
    let mut policy = LogMergePolicy::default();
    policy.set_del_docs_ratio_before_merge(DELETED_SHARE_BEFORE_MERGE);
    writer.set_merge_policy(Box::new(policy));
    // A writer killed inside tantivy's commit leaves files that the commit's
    // meta.json never named; some are named by operation number, which the
    // same operations run again reuse, and tantivy will not overwrite them.
    writer.garbage_collect_files().wait()?;
    Ok(writer)
}

/// Commits the index with generation `next` as its payload, and waits for
/// the merges the commit starts.
fn commit(mut writer: IndexWriter<TantivyDocument>, next: u64) -> anyhow::Result<()> {
    let mut commit = writer.prepare_commit()?;
    commit.set_payload(&serde_json::to_string(&Payload {
        format: FORMAT,
        generation: next,
    })?);
    commit.commit()?;
    writer.wait_merging_threads()?;
    Ok(())
}

/// Records in the store that the index holds generation `next`.
fn record_generation(conn: &Connection, next: u64) -> anyhow::Result<()> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let recorded = conn
        .execute("DELETE FROM lexical_pending", [])
        .map_err(anyhow::Error::from)
        .and_then(|_| schema::set_meta(conn, "lexical_generation", &next.to_string()));
    match recorded {
        Ok(()) => conn.execute_batch("COMMIT")?,
        Err(e) => {
            conn.execute_batch("ROLLBACK")?;
            return Err(e);
        }
    }
    Ok(())
}

/// The index in `dir` with its payload, when it opens, has our fields and
/// every file matches its checksum.
fn open_for_writing(dir: &Path) -> Option<(Index, Payload)> {
    contained(|| {
        let index = Index::open_in_dir(dir)?;
        Fields::of(&index).context("its fields are not this kts's")?;
        check_all_files(&index)?;
        register_analyzer(&index);
        let payload = Payload::of(&index).context("it has no generation")?;
        Ok((index, payload))
    })
    .ok()
}

/// A new, empty index in `dir`, replacing whatever was there.
fn create(dir: &Path) -> anyhow::Result<Index> {
    match std::fs::remove_dir_all(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(e).with_context(|| format!("removing {}", dir.display()));
        }
        _ => {}
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let index = Index::create_in_dir(dir, Fields::schema().0)
        .with_context(|| format!("creating the lexical index in {}", dir.display()))?;
    register_analyzer(&index);
    Ok(index)
}

/// What the index holds of one chunk.
const CHUNK_ROWS: &str =
    "SELECT c.id, c.doc_id, d.doc_type, c.text, d.title, c.heading_path, d.path
     FROM chunks c JOIN documents d USING (doc_id)";

fn add_row(
    writer: &IndexWriter<TantivyDocument>,
    fields: Fields,
    row: &rusqlite::Row<'_>,
) -> anyhow::Result<()> {
    let headings: String = row.get(5)?;
    let headings: Vec<String> = serde_json::from_str(&headings).unwrap_or_default();
    let body = format!(
        "{}\n{}\n{}",
        indexed_text(row.get_ref(3)?.as_str()?),
        indexed_title(row.get_ref(4)?.as_str()?, row.get_ref(6)?.as_str()?),
        indexed_text(&headings.join(" > "))
    );
    let mut doc = TantivyDocument::default();
    doc.add_i64(fields.rowid, row.get(0)?);
    doc.add_text(fields.doc_id, row.get_ref(1)?.as_str()?);
    doc.add_text(fields.doc_type, row.get_ref(2)?.as_str()?);
    doc.add_text(fields.body, &body);
    writer.add_document(doc)?;
    Ok(())
}

fn add_all(
    conn: &Connection,
    writer: &IndexWriter<TantivyDocument>,
    fields: Fields,
) -> anyhow::Result<usize> {
    let mut statement = conn.prepare(CHUNK_ROWS)?;
    let mut rows = statement.query([])?;
    let mut count = 0;
    while let Some(row) = rows.next()? {
        add_row(writer, fields, row)?;
        count += 1;
    }
    Ok(count)
}

/// Replaces each pending row: removed from the index, and added again with
/// what the store holds now, if it still holds it.
fn replace_pending(
    conn: &Connection,
    writer: &IndexWriter<TantivyDocument>,
    fields: Fields,
) -> anyhow::Result<usize> {
    let pending: Vec<i64> = conn
        .prepare("SELECT chunk FROM lexical_pending")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let mut statement = conn.prepare(&format!("{CHUNK_ROWS} WHERE c.id = ?1"))?;
    for &rowid in &pending {
        writer.delete_term(Term::from_field_i64(fields.rowid, rowid));
        let mut rows = statement.query(params![rowid])?;
        if let Some(row) = rows.next()? {
            add_row(writer, fields, row)?;
        }
    }
    Ok(pending.len())
}
