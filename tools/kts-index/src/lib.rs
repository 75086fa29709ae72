//! kts-index: brings a scope's store (`DIR/.kts/kts.db`) up to date from a
//! stream of documents, chunks, deletions and errors.

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::{CommandFactory, Parser};
use kts_cli::{Exit, Incoming, JsonlReader, Messages};
use kts_record::scope_path::{self, UnsafePath};
use kts_record::{ChunkRecord, DocRecord, ErrorCode, FileRecord, FileStatus, Format, schema_id};
use kts_store::{Applied, ChunkRow, DocumentRow, LockWait, Locked, ModelMismatch, Store};
use serde_json::Value;

const ABOUT: &str = "Bring a scope's index up to date from kts.doc/1 and kts.chunk/1 records";

const AFTER_HELP: &str = "\
Reads the stream on stdin: each kts.doc/1 record followed by its kts.chunk/1
records (with embeddings when kts-embed ran), kts.file/1 records with status
\"deleted\", and kts.error/1 records. Writes DIR/.kts/kts.db: a document whose
content and chunks are unchanged is left alone, others replace their old
version, deleted ones are removed. A file that failed keeps the document it
had, except one kts-convert found empty: it has no text now, and its old
text is removed. Documents found inside a file (an
e-mail's attachments at FILE#attachment/NAME, a mailbox's messages at
FILE#message/N) go with it: those the file's kts.doc/1 no longer lists in
metadata.parts are removed, and all of them when the file is deleted. The
file's own document (whose hash tells kts-crawl the file is indexed) is
written once all the parts it lists are: until then the file counts as
changed. A \"deleted\" record of a file still in DIR is refused. A
document's chunks follow its kts.doc/1 record: a document missing some or
with more, or chunks coming after other documents' records, are refused
(it stays as it was). Chunks whose kts.doc/1 never came are
indexed under a minimal document. Records of other schemas (such as
kts.doc/2, from another kts version) are errors. Chunks without embeddings are indexed for
keyword search only, in an index without vectors: an index with vectors
refuses such a document (it stays as it was; run kts-embed before kts-index,
or rebuild the scope keyword-only with --reindex), and a keyword-only index
holding documents refuses embedded ones (rebuild it with --reindex). Writes are committed in
batches; a document is always whole or absent, and a killed run leaves the
last batch committed. With --reindex the whole stream is one transaction:
readers see the old index until the new one is complete, and a killed
--reindex leaves the old one; a --reindex that receives no document nor
deletion (a stage before it failed) is refused (exit 2) and changes nothing.
At the end it rewrites DIR/.kts/vectors.bin, the embeddings laid out for
fast search, when they changed, and brings DIR/.kts/lexical/, the keyword
index, up to date with the chunks added and removed (kts-query falls back
to slower search in SQLite while either is stale, e.g. after a killed run),
and removes the converted documents (DIR/.kts/documents/) of files deleted
before they were indexed.
One writer per scope: a second one waits (or fails with --no-wait).
An index built with one embedding model refuses another (exit 2): re-index
with --reindex. Prints a summary on stderr; stdout stays empty.

Example:
  kts-crawl docs | kts-convert | kts-chunk | kts-embed | kts-index docs";

#[derive(Parser, Debug)]
#[command(name = "kts-index", version, about = ABOUT, after_help = AFTER_HELP)]
pub struct Args {
    /// The scope folder whose index (DIR/.kts/kts.db) is updated.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,

    /// Rebuild the index from this stream alone (needed to change the
    /// embedding model; give it every document), in one transaction: readers
    /// keep the old index until the stream ends, and a killed run leaves it.
    #[arg(long)]
    pub reindex: bool,

    /// Fail at once when another writer is updating the scope, instead of waiting.
    #[arg(long)]
    pub no_wait: bool,

    /// Commit after this many documents (or after a second); --reindex
    /// commits once, at the end.
    #[arg(long, value_name = "DOCS", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..))]
    pub batch: u32,

    /// Do not print per-record errors (the summary and exit status still tell).
    #[arg(long, short)]
    pub quiet: bool,
}

/// The clap definition, for man pages and completions.
pub fn command() -> clap::Command {
    Args::command()
}

/// What a run did, as printed in the summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub added: usize,
    pub updated: usize,
    pub deleted: usize,
    pub unchanged: usize,
    pub failed: usize,
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} added, {} updated, {} deleted, {} unchanged, {} failed",
            self.added, self.updated, self.deleted, self.unchanged, self.failed
        )
    }
}

pub fn run(args: Args) -> anyhow::Result<Exit> {
    let messages = Messages::new("kts-index").quiet(args.quiet);
    let mut store = open(&args.dir, args.no_wait, &messages)?;
    let options = Options {
        reindex: args.reindex,
        batch_docs: args.batch as usize,
    };
    let summary = index(&mut store, JsonlReader::stdin(), &options, &messages)
        .map_err(|e| kts_store::with_remedy(&args.dir, e))?;
    drop(store);
    update_catalog(&args.dir, &messages);
    messages.info(&summary.to_string());
    Ok(if summary.failed > 0 {
        Exit::SomeFailed
    } else {
        Exit::Ok
    })
}

/// Updates the scope's row in the catalog of its knowledge root (the parent
/// folder), when that root has one; a failure is only a warning.
pub fn update_catalog(dir: &Path, messages: &Messages) {
    let Some(root) = std::path::absolute(dir)
        .ok()
        .and_then(|d| d.parent().map(PathBuf::from))
    else {
        return;
    };
    if let Err(e) = kts_catalog::Catalog::update_scope(&root, dir) {
        messages.warn(&format!(
            "the catalog of {} was not updated: {e:#}",
            root.display()
        ));
    }
}

/// Opens the scope's store as its writer, saying so when it has to wait.
pub fn open(dir: &Path, no_wait: bool, messages: &Messages) -> anyhow::Result<Store> {
    if !dir.is_dir() {
        anyhow::bail!("{} is not a folder", dir.display());
    }
    kts_store::refuse_knowledge_root(dir)?;
    match Store::open_writer(dir, LockWait::NoWait) {
        Err(e) if !no_wait && e.downcast_ref::<Locked>().is_some() => {
            messages.warn(&format!("{e}; waiting"));
            Store::open_writer(dir, LockWait::Wait)
        }
        other => other,
    }
}

/// How [`index`] writes.
#[derive(Clone, Debug)]
pub struct Options {
    /// Empty the store and rebuild it in one transaction, committed at the
    /// stream's end: readers never see it half built.
    pub reindex: bool,
    /// Documents per transaction (a transaction also ends after a second);
    /// not used with `reindex`.
    pub batch_docs: usize,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            reindex: false,
            batch_docs: 64,
        }
    }
}

/// Applies a stream to the store; failures are reported through `messages`.
pub fn index<R: Read>(
    store: &mut Store,
    reader: JsonlReader<R>,
    options: &Options,
    messages: &Messages,
) -> anyhow::Result<Summary> {
    let mut indexer = Indexer::new(store, options, messages)?;
    indexer.consume(reader)?;
    indexer.finish()
}

/// A document whose chunks are still arriving.
struct Pending {
    doc: DocumentRow,
    chunks: Vec<ChunkRow>,
    /// How many chunks kts-chunk wrote for the document, when its record says.
    expected_chunks: Option<usize>,
    /// A record of this document was rejected: it is not applied.
    poisoned: bool,
    /// For a file's own kts.doc/1: the paths of the documents found inside
    /// it (`metadata.parts`), which are all it keeps. `None` for a part, and
    /// for a document known only from its chunks.
    parts: Option<Vec<String>>,
}

/// A file's own document held back until every document found inside it
/// is indexed: it carries the file's hash, by which kts-crawl takes the file
/// as indexed.
struct HeldFile {
    pending: Pending,
    /// The paths of the parts it lists that are not indexed yet.
    awaiting: HashSet<String>,
}

struct Indexer<'a> {
    store: &'a mut Store,
    /// With --reindex: the documents the index held before, less those the
    /// stream indexed again (at the end, the ones it removed).
    before_reindex: Option<HashSet<String>>,
    /// Whether any document, chunk or deletion came: a --reindex without
    /// one would empty the index.
    received_files: bool,
    /// The scope folder, resolved, which a record's `root` must name.
    scope: PathBuf,
    /// The last `root` found to name it (a stream names one root throughout:
    /// it is resolved once, not once per document).
    own_root: Option<String>,
    messages: &'a Messages,
    /// Documents per transaction; `None` commits only at the end.
    batch_docs: Option<usize>,
    pending: Option<Pending>,
    held_file: Option<HeldFile>,
    /// The documents whose records have ended: a chunk of one of them comes
    /// out of order.
    done: HashSet<String>,
    /// The documents whose out-of-order chunks were reported.
    scattered: HashSet<String>,
    in_batch: usize,
    batch_started: Instant,
    stream_model: Option<(String, usize)>,
    summary: Summary,
    /// Documents written, for a human watching.
    progress: indicatif::ProgressBar,
}

impl<'a> Indexer<'a> {
    fn new(
        store: &'a mut Store,
        options: &Options,
        messages: &'a Messages,
    ) -> anyhow::Result<Self> {
        store.begin()?;
        let mut before_reindex = None;
        if options.reindex {
            before_reindex = Some(store.document_ids()?);
            store.clear()?;
        }
        let scope = resolved(store.scope());
        Ok(Self {
            store,
            before_reindex,
            received_files: false,
            scope,
            own_root: None,
            messages,
            batch_docs: (!options.reindex).then_some(options.batch_docs),
            pending: None,
            held_file: None,
            done: HashSet::new(),
            scattered: HashSet::new(),
            in_batch: 0,
            batch_started: Instant::now(),
            stream_model: None,
            summary: Summary::default(),
            progress: kts_cli::progress_bar(messages.tool(), None, "documents"),
        })
    }

    fn consume<R: Read>(&mut self, mut reader: JsonlReader<R>) -> anyhow::Result<()> {
        while let Some(item) = reader.next() {
            match item? {
                Ok(Incoming::Doc(value)) => self.on_doc(value, &reader.position())?,
                Ok(Incoming::Chunk(value)) => self.on_chunk(value, &reader.position())?,
                Ok(Incoming::File(value)) => self.on_file(value, &reader.position())?,
                Ok(Incoming::Error(value)) => self.on_error(&value)?,
                Ok(Incoming::Other(value)) => self.on_other(&value, &reader.position()),
                Err((code, message)) => self.reject(&reader.position(), code, &message),
            }
        }
        Ok(())
    }

    fn finish(mut self) -> anyhow::Result<Summary> {
        self.flush_pending()?;
        self.progress.finish_and_clear();
        self.give_up_held_file();
        if let Some(removed) = self.before_reindex.take() {
            if !self.received_files && !removed.is_empty() {
                self.store.rollback()?;
                anyhow::bail!(
                    "--reindex received no document (the stream was empty, or held only errors: \
                     did a stage before kts-index fail?); the index of {} is left as it was",
                    self.scope.display()
                );
            }
            self.summary.deleted += removed.len();
        }
        self.store.commit()?;
        self.store.refresh_vector_file()?;
        self.store.refresh_lexical_index()?;
        if let Err(e) = self.store.remove_stray_document_folders() {
            self.messages.warn(&format!(
                "the converted documents of deleted files were not all removed: {e:#}"
            ));
        }
        Ok(self.summary)
    }

    /// Refuses a record whose `root` names another folder than this scope
    /// (a stream crawled elsewhere); a record without one is taken as this scope's.
    fn check_root(&mut self, path: &str, root: Option<&str>) -> Result<(), UnsafePath> {
        let Some(root) = root else {
            return Ok(());
        };
        if self.own_root.as_deref() == Some(root) {
            return Ok(());
        }
        if resolved(Path::new(root)) != self.scope {
            return Err(UnsafePath(format!(
                "{path} belongs to the scope {root} (its root), not to {}: kts-index indexes \
                 its own scope's documents",
                self.scope.display()
            )));
        }
        self.own_root = Some(root.to_string());
        Ok(())
    }

    fn reject(&mut self, at: &str, code: ErrorCode, message: &str) {
        self.messages.reject(at, code, message);
        self.summary.failed += 1;
    }

    fn on_doc(&mut self, value: Value, at: &str) -> anyhow::Result<()> {
        self.flush_pending()?;
        self.received_files = true;
        let path = value.get("path").and_then(Value::as_str).unwrap_or("");
        self.settle_held_file_before(path);
        match serde_json::from_value::<DocRecord>(value.clone()) {
            Ok(mut doc) => match self
                .check_root(&doc.path, doc.root.as_deref())
                .and_then(|()| scope_fields(&doc.path, &doc.doc_id))
            {
                Ok(path) => {
                    doc.path = path;
                    self.pending = Some(Pending::from_doc(doc));
                }
                Err(why) => {
                    self.reject(at, ErrorCode::UnsafePath, &why.0);
                    let mut pending = Pending::minimal(&doc.doc_id);
                    pending.poisoned = true;
                    self.pending = Some(pending);
                }
            },
            Err(e) => {
                self.reject(at, ErrorCode::BadRecord, &e.to_string());
                if let Some(doc_id) = value.get("doc_id").and_then(Value::as_str) {
                    let mut pending = Pending::minimal(doc_id);
                    pending.poisoned = true;
                    self.pending = Some(pending);
                }
            }
        }
        Ok(())
    }

    fn on_chunk(&mut self, value: Value, at: &str) -> anyhow::Result<()> {
        let doc_id = value.get("doc_id").and_then(Value::as_str).unwrap_or("");
        if self.pending.as_ref().map(|p| p.doc.doc_id.as_str()) != Some(doc_id) {
            self.flush_pending()?;
            self.received_files = true;
            let path = value.get("path").and_then(Value::as_str).unwrap_or("");
            self.settle_held_file_before(path);
            if self.done.contains(doc_id) {
                self.reject_scattered_chunk(at, doc_id, path);
                return Ok(());
            }
            let mut pending = Pending::minimal(doc_id);
            match scope_fields(path, doc_id) {
                Ok(path) => pending.doc.path = path,
                Err(why) => {
                    self.reject(at, ErrorCode::UnsafePath, &why.0);
                    pending.poisoned = true;
                }
            }
            self.pending = Some(pending);
        }
        match serde_json::from_value::<ChunkRecord>(value) {
            Ok(chunk) => {
                self.check_stream_model(&chunk)?;
                if let Some(pending) = self.pending.as_mut() {
                    pending.chunks.push(chunk_row(chunk));
                }
            }
            Err(e) => {
                self.reject(at, ErrorCode::BadRecord, &e.to_string());
                if let Some(pending) = self.pending.as_mut() {
                    pending.poisoned = true;
                }
            }
        }
        Ok(())
    }

    fn on_file(&mut self, value: Value, at: &str) -> anyhow::Result<()> {
        match serde_json::from_value::<FileRecord>(value) {
            Ok(file) if file.status == FileStatus::Deleted => {
                self.flush_pending()?;
                self.received_files = true;
                self.settle_held_file_before(&file.path);
                if let Err(why) = self.check_root(&file.path, file.root.as_deref()) {
                    self.reject(at, ErrorCode::UnsafePath, &why.0);
                    return Ok(());
                }
                let path = match scope_path::normalize(&file.path) {
                    Ok(path) => path,
                    Err(why) => {
                        self.reject(at, ErrorCode::UnsafePath, &why.0);
                        return Ok(());
                    }
                };
                if self.is_still_a_document(&path) {
                    let message = format!(
                        "{path} is said to be deleted, but the file is still in {}: its \
                         document is kept (a stream crawled earlier, replayed?)",
                        self.scope.display()
                    );
                    self.reject(at, ErrorCode::BadRecord, &message);
                    return Ok(());
                }
                if self.store.delete_path(&path)? {
                    self.summary.deleted += 1;
                    self.count_document()?;
                }
                self.delete_parts(&path, &[])?;
            }
            Ok(_) => {}
            Err(e) => self.reject(at, ErrorCode::BadRecord, &e.to_string()),
        }
        Ok(())
    }

    /// An upstream failure: counted, and its message repeated. A file that
    /// kts-convert found empty has no text now, so its old text leaves the
    /// index (a file emptied to redact it must not stay searchable).
    fn on_error(&mut self, value: &Value) -> anyhow::Result<()> {
        let field = |name: &str| value.get(name).and_then(Value::as_str).unwrap_or("?");
        self.messages.warn(&format!(
            "{} failed on {}: {}: {}",
            field("stage"),
            field("path"),
            field("code"),
            field("message")
        ));
        self.summary.failed += 1;
        // The document before the error is over, unless the error is about it
        // (a chunk a later stage refused): the last part of a held file must
        // count as indexed before the held file is settled.
        if self
            .pending
            .as_ref()
            .is_some_and(|pending| pending.doc.path != field("path"))
        {
            self.flush_pending()?;
        }
        self.settle_held_file_before(field("path"));
        let emptied = field("stage") == "kts-convert" && field("code") == ErrorCode::Empty.as_str();
        if let (true, Ok(path)) = (emptied, scope_path::normalize(field("path"))) {
            self.flush_pending()?;
            if self.store.delete_path(&path)? {
                self.messages.warn(&format!(
                    "{path} is empty now: its old text is removed from the index"
                ));
                self.summary.deleted += 1;
                self.count_document()?;
            }
            self.delete_parts(&path, &[])?;
        }
        Ok(())
    }

    /// One model per stream: a second one is fatal.
    fn check_stream_model(&mut self, chunk: &ChunkRecord) -> anyhow::Result<()> {
        let Some(embedding) = &chunk.embedding else {
            return Ok(());
        };
        let model = chunk.model.clone().unwrap_or_else(|| "unknown".into());
        let dims = embedding.len();
        match &self.stream_model {
            None => self.stream_model = Some((model, dims)),
            Some((m, d)) if *m == model && *d == dims => {}
            Some((m, d)) => anyhow::bail!(
                "the stream mixes embedding models: {m} ({d} dims), then {model} ({dims} dims) \
                 at chunk {}; embed every chunk with one model (re-index with --reindex to change it)",
                chunk.chunk_id
            ),
        }
        Ok(())
    }

    /// Deletes the parts of the file at `path` that are not in `keep`.
    fn delete_parts(&mut self, path: &str, keep: &[String]) -> anyhow::Result<()> {
        for _ in 0..self.store.delete_parts_of(path, keep)? {
            self.summary.deleted += 1;
            self.count_document()?;
        }
        Ok(())
    }

    fn flush_pending(&mut self) -> anyhow::Result<()> {
        let Some(pending) = self.pending.take() else {
            return Ok(());
        };
        self.done.insert(pending.doc.doc_id.clone());
        if !self.is_whole(&pending) {
            return Ok(());
        }
        if pending
            .parts
            .as_ref()
            .is_some_and(|parts| !parts.is_empty())
        {
            self.hold_file(pending);
            return Ok(());
        }
        if self.store_document(&pending)? {
            self.part_indexed(&pending.doc.path)?;
        }
        Ok(())
    }

    /// Whether every record of the document arrived and was taken; if not,
    /// says so.
    fn is_whole(&mut self, pending: &Pending) -> bool {
        if pending.poisoned {
            self.messages.warn(&format!(
                "{} not indexed: one of its records was rejected",
                pending.doc.path
            ));
            return false;
        }
        let arrived = pending.chunks.len();
        let Some(expected) = pending.expected_chunks.filter(|&n| n != arrived) else {
            return true;
        };
        let message = if arrived < expected {
            format!(
                "{arrived} of its {expected} chunks arrived (the stream was cut short or \
                 filtered upstream); the document is left as it was"
            )
        } else {
            format!(
                "{arrived} chunks arrived for its {expected} (a chunk came more than once: the \
                 stream was repeated or merged upstream); the document is left as it was"
            )
        };
        self.reject(&pending.doc.path, ErrorCode::Incomplete, &message);
        false
    }

    /// Writes a whole document, then removes the parts its file no longer
    /// lists; false when the store refused it.
    fn store_document(&mut self, pending: &Pending) -> anyhow::Result<bool> {
        let doc_id = &pending.doc.doc_id;
        match self.store.apply(&pending.doc, &pending.chunks) {
            Ok(Applied::Added) if self.take_from_before_reindex(doc_id) => {
                self.summary.updated += 1
            }
            Ok(Applied::Added) => self.summary.added += 1,
            Ok(Applied::Updated) => self.summary.updated += 1,
            Ok(Applied::Unchanged) => self.summary.unchanged += 1,
            Err(e)
                if e.downcast_ref::<ModelMismatch>().is_some()
                    || kts_store::is_database_failure(&e) =>
            {
                return Err(e);
            }
            Err(e) => {
                let message = format!("{e:#}");
                self.reject(&pending.doc.path, ErrorCode::BadRecord, &message);
                return Ok(false);
            }
        }
        self.count_document()?;
        if let Some(parts) = &pending.parts {
            self.delete_parts(&pending.doc.path, parts)?;
        }
        Ok(true)
    }

    /// Whether a --reindex found the document in the index it replaces.
    fn take_from_before_reindex(&mut self, doc_id: &str) -> bool {
        self.before_reindex
            .as_mut()
            .is_some_and(|before| before.remove(doc_id))
    }

    /// Holds a file's document until its parts are indexed (see [`HeldFile`]).
    fn hold_file(&mut self, pending: Pending) {
        self.give_up_held_file();
        let awaiting = pending.parts.iter().flatten().cloned().collect();
        self.held_file = Some(HeldFile { pending, awaiting });
    }

    /// Writes the held file's document once the part at `path` was its last.
    fn part_indexed(&mut self, path: &str) -> anyhow::Result<()> {
        let Some(held) = self.held_file.as_mut() else {
            return Ok(());
        };
        held.awaiting.remove(path);
        if let Some(held) = self.held_file.take_if(|held| held.awaiting.is_empty()) {
            self.store_document(&held.pending)?;
        }
        Ok(())
    }

    /// Gives up the held file unless `path` is one of its parts: its parts'
    /// records are over.
    fn settle_held_file_before(&mut self, path: &str) {
        if self
            .held_file
            .as_ref()
            .is_some_and(|held| !is_part_of(path, &held.pending.doc.path))
        {
            self.give_up_held_file();
        }
    }

    /// Leaves the held file's document as it was: some of its parts are not
    /// indexed, so kts-crawl must go on taking the file as changed.
    fn give_up_held_file(&mut self) {
        let Some(held) = self.held_file.take() else {
            return;
        };
        let listed = held.pending.parts.as_ref().map_or(0, Vec::len);
        let message = format!(
            "{} of the {listed} documents found inside it were not indexed (the stream was cut \
             short, or they failed); its own document is left as it was, so that the file \
             counts as changed until they are",
            held.awaiting.len()
        );
        self.reject(&held.pending.doc.path, ErrorCode::Incomplete, &message);
    }

    /// A chunk of a document whose records ended before: reported once per
    /// document, and not indexed.
    fn reject_scattered_chunk(&mut self, at: &str, doc_id: &str, path: &str) {
        if self.scattered.insert(doc_id.to_string()) {
            let message = format!(
                "a chunk of {path} comes after records of other documents: a document's chunks \
                 must follow its kts.doc/1 record with nothing between (the stream was \
                 reordered or interleaved upstream); this chunk and its later ones are not \
                 indexed"
            );
            self.reject(at, ErrorCode::BadRecord, &message);
        }
    }

    /// A record kts-index cannot read: at the end of the pipeline, skipping
    /// it would lose it.
    fn on_other(&mut self, value: &Value, at: &str) {
        let schema = value.get("schema").map_or(Value::Null, Value::clone);
        let message = format!(
            "cannot read a record of schema {schema}: kts-index reads {}, {}, {} and {} (was \
             it written by another version of kts?)",
            schema_id::DOC,
            schema_id::CHUNK,
            schema_id::FILE,
            schema_id::ERROR
        );
        self.reject(at, ErrorCode::BadRecord, &message);
    }

    /// Whether the file at `path` is still in the scope, as a file kts reads.
    fn is_still_a_document(&self, path: &str) -> bool {
        self.scope
            .join(path)
            .canonicalize()
            .is_ok_and(|file| file.starts_with(&self.scope) && is_readable_format(&file))
    }

    /// Commits when the batch is full or old enough.
    fn count_document(&mut self) -> anyhow::Result<()> {
        self.progress.inc(1);
        let Some(batch_docs) = self.batch_docs else {
            return Ok(());
        };
        self.in_batch += 1;
        if self.in_batch >= batch_docs || self.batch_started.elapsed() >= Duration::from_secs(1) {
            self.store.commit()?;
            self.store.begin()?;
            self.in_batch = 0;
            self.batch_started = Instant::now();
        }
        Ok(())
    }
}

impl Pending {
    fn from_doc(doc: DocRecord) -> Self {
        let source_sha256 = doc
            .metadata
            .get("source_sha256")
            .and_then(Value::as_str)
            .map(String::from);
        let format = serde_json::to_value(doc.format)
            .ok()
            .and_then(|v| v.as_str().map(String::from));
        let parts = (!doc.metadata.contains_key("parent")).then(|| {
            doc.metadata
                .get("parts")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|p| p.as_str().map(String::from))
                .collect()
        });
        Self {
            doc: DocumentRow {
                doc_id: doc.doc_id,
                path: doc.path,
                title: doc.title,
                doc_type: doc.doc_type,
                format,
                source_sha256,
                metadata: Value::Object(doc.metadata),
            },
            chunks: Vec::new(),
            expected_chunks: doc.chunks,
            poisoned: false,
            parts,
        }
    }

    /// A document known only from its chunks (its path is set once checked).
    fn minimal(doc_id: &str) -> Self {
        Self {
            doc: DocumentRow {
                doc_id: doc_id.into(),
                path: doc_id.into(),
                doc_type: "GENERAL".into(),
                metadata: Value::Object(Default::default()),
                ..Default::default()
            },
            chunks: Vec::new(),
            expected_chunks: None,
            poisoned: false,
            parts: None,
        }
    }
}

/// Whether `path` names a document found inside the file at `file`.
fn is_part_of(path: &str, file: &str) -> bool {
    path.strip_prefix(file)
        .is_some_and(|rest| rest.starts_with('#'))
}

/// Whether the file at `path` is one of a format kts reads, told as kts-crawl
/// tells it.
fn is_readable_format(path: &Path) -> bool {
    let sniffed = || -> std::io::Result<Option<Format>> {
        let mut file = std::fs::File::open(path)?;
        let size = file.metadata()?.len();
        kts_record::sniff_file_format(&mut file, size, path)
    };
    path.is_file() && matches!(sniffed(), Ok(Some(_)))
}

/// A folder with its symbolic links resolved, when it can be.
fn resolved(folder: &Path) -> PathBuf {
    folder
        .canonicalize()
        .unwrap_or_else(|_| folder.to_path_buf())
}

/// A record's path in the form kts gives it, once it is known to name a
/// document inside the scope and the doc_id to be the one kts gives that path
/// (another would replace whichever document has it).
fn scope_fields(path: &str, doc_id: &str) -> Result<String, UnsafePath> {
    scope_path::check_doc_id(doc_id)?;
    let path = scope_path::normalize(path)?;
    let expected = scope_path::doc_id(&path);
    if doc_id != expected {
        return Err(UnsafePath(format!(
            "doc_id {doc_id} is not the one kts gives the path {path:?} ({expected})"
        )));
    }
    Ok(path)
}

fn chunk_row(chunk: ChunkRecord) -> ChunkRow {
    ChunkRow {
        chunk_id: chunk.chunk_id,
        index: chunk.index,
        text: chunk.text,
        heading_path: chunk.heading_path,
        start: chunk.start,
        end: chunk.end,
        page: chunk.page,
        slide: chunk.slide,
        embedding: chunk.embedding,
        model: chunk.model,
        model_sha256: chunk.model_sha256,
    }
}
