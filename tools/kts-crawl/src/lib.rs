//! kts-crawl: walks a scope folder and emits one `kts.file/1` record per document.

mod baseline;
mod ignore_files;
mod manifest;
mod unchanged;
mod walk;

use std::cell::Cell;
use std::path::PathBuf;

use anyhow::Context;
use clap::{CommandFactory, Parser};
use kts_cli::{Exit, JsonlWriter};
use kts_record::{FileRecord, FileStatus, schema_id};

use ignore_files::IgnoreFiles;
use manifest::{Entry, Manifest};
use walk::Walked;

const ABOUT: &str =
    "List a scope's documents as kts.file/1 records, with their status since the last crawl";

const AFTER_HELP: &str = "\
Each supported file (md, txt, html, json, docx, doc, pptx, ppt/pps/pot, pdf, csv/tsv, xlsx/xlsm,
xls, ods, odt, odp, epub, rtf, vtt, adoc, tex, eml, mbox, msg, png, jpg, tiff; format detected from the content) becomes one kts.file/1 line with its path relative to DIR, size,
mtime, sha256, format and status: new, changed, unchanged or deleted against
what the scope's index holds (DIR/.kts/kts.db), or against the previous crawl
when there is no index yet (so before a scope's first index, a crawl that was
not indexed makes the next --changed-only skip its files: look with --dry-run,
and index a new scope without --changed-only; once a scope has had an index, a
crawl that finds none reports every file new; one that cannot be read, being
damaged, of another format or out of this user's reach, stops the crawl with
exit status 2). Files whose size, mtime, ctime
and inode match the previous crawl (DIR/.kts/manifest.json) are not read
again. Hidden files, Office lock files (~$x.docx) and the
.kts folder are skipped, and so, with a warning, is a folder named FILE#attachment
or FILE#message beside an e-mail FILE (its files would have the paths of the
documents inside FILE), and so is what ignore files leave out, as ripgrep
reads them: .ktsignore and .ignore in any folder, and .gitignore when DIR is
in a git work tree (--no-ignore reads everything); symbolic links are followed only within DIR, and one
whose target is gone is skipped (its documents are deleted). A file or folder
that cannot be read, or a file whose name is not valid UTF-8, is a kts.error/1
record (exit status 1), and the documents under it are not deleted. Files of
other formats are skipped as unsupported: their number is said on stderr, and
--verbose names each one. A knowledge root (a folder whose sub-folders are
indexed scopes) is refused, before anything is written: crawl each scope
(except with --unchanged-scopes, which takes the root); so is a folder inside
a scope's .kts folder.

Example:
  kts-crawl docs | kts-convert | kts-chunk | head -3
  kts-crawl docs --changed-only --dry-run | jq -r '[.status, .path] | @tsv'
  kts-crawl docs --verbose --dry-run > /dev/null";

#[derive(Parser, Debug)]
#[command(name = "kts-crawl", version, about = ABOUT, after_help = AFTER_HELP)]
pub struct Args {
    /// The scope folder to crawl.
    pub dir: PathBuf,

    /// Emit only files that need work: new and changed ones, and deletions.
    #[arg(long)]
    pub changed_only: bool,

    /// Report without recording: the manifest is left as it was.
    #[arg(long)]
    pub dry_run: bool,

    /// DIR is a knowledge root: read scope folder names on stdin, one a line,
    /// and print those with nothing to do (every file indexed as it is, none
    /// deleted).
    #[arg(long, conflicts_with_all = ["changed_only", "dry_run"])]
    pub unchanged_scopes: bool,
    /// Name each file skipped because kts does not read its format or an
    /// ignore file leaves it out.
    #[arg(long, short)]
    pub verbose: bool,

    /// Read every file, whatever .ktsignore, .ignore and .gitignore files say.
    #[arg(long)]
    pub no_ignore: bool,

    #[command(flatten)]
    pub reporting: kts_cli::Reporting,
}

/// The clap definition, for man pages and completions.
pub fn command() -> clap::Command {
    Args::command()
}

pub fn run(args: Args) -> anyhow::Result<Exit> {
    let messages = args.reporting.messages("kts-crawl");
    let root = args
        .dir
        .canonicalize()
        .with_context(|| format!("cannot open scope folder {}", args.dir.display()))?;
    anyhow::ensure!(root.is_dir(), "{} is not a folder", root.display());
    if args.unchanged_scopes {
        let stdin = std::io::stdin().lock();
        unchanged::list(&root, stdin, &mut std::io::stdout().lock())?;
        return Ok(Exit::Ok);
    }
    kts_store::refuse_index_folder(&root)?;
    kts_store::refuse_knowledge_root(&args.dir)?;
    let root_text = root
        .to_str()
        .context("the scope folder's path is not valid UTF-8")?
        .to_string();

    let previous = Manifest::load(&root)?;
    let baseline = baseline::load(&root, &previous)?;
    let mut next = Manifest::default();
    let mut out = JsonlWriter::new();
    let mut counts = [0usize; 4];
    let mut unsupported = 0usize;
    let mut names_not_utf8 = 0usize;

    // Files and folders that could not be read: their documents are not deleted.
    let mut unreadable: Vec<String> = Vec::new();
    let left_out = Cell::new(0);
    let ignore_files =
        (!args.no_ignore).then(|| IgnoreFiles::new(&root, &messages, args.verbose, &left_out));
    for walked in walk::documents(&root, &messages, ignore_files) {
        let found = match walked {
            Walked::File(found) => found,
            Walked::Unreadable { path, reason } => {
                let at = if path.is_empty() { "." } else { &path };
                let error = messages.reject_record(at, kts_record::ErrorCode::Io, &reason);
                out.write(&error)?;
                unreadable.push(path);
                continue;
            }
            Walked::NameNotUtf8 { path } => {
                let error = messages.reject_record(
                    &path,
                    kts_record::ErrorCode::Io,
                    "file name is not valid UTF-8: no record can name it (rename the file to index it)",
                );
                out.write(&error)?;
                names_not_utf8 += 1;
                continue;
            }
        };
        let entry = match describe(&previous, &found) {
            Ok(Some(entry)) => entry,
            Ok(None) => {
                unsupported += 1;
                if args.verbose {
                    messages.info(&format!("skipped {}: not a format kts reads", found.path));
                }
                continue;
            }
            Err(err) => {
                let error = messages.reject_record(
                    &found.path,
                    kts_record::ErrorCode::Io,
                    &format!("{err:#}"),
                );
                out.write(&error)?;
                unreadable.push(found.path);
                continue;
            }
        };
        let status = baseline.status(&found.path, &entry.sha256);
        counts[status as usize] += 1;
        if !(args.changed_only && status == FileStatus::Unchanged) {
            out.write(&record(&root_text, &found.path, &entry, status))?;
        }
        next.insert(found.path, entry);
    }

    for (path, entry) in baseline.missing_from(&next) {
        if unreadable.iter().any(|place| is_within(&path, place)) {
            // Still there as far as anyone knows: remembered for the next crawl.
            if let Some(previous_entry) = previous.get(&path) {
                next.insert(path, previous_entry.clone());
            }
            continue;
        }
        counts[FileStatus::Deleted as usize] += 1;
        out.write(&record(&root_text, &path, &entry, FileStatus::Deleted))?;
    }
    out.flush()?;

    if !args.dry_run {
        // Looked at again: the first kts-index run of a pipeline makes its
        // index while the crawl runs.
        next.set_indexed(baseline.had_index() || baseline::has_index_files(&root));
        next.save(&root)?;
    }
    if args.reporting.stats {
        let [new, changed, unchanged, deleted] = counts;
        messages.info(&format!(
            "{new} new, {changed} changed, {unchanged} unchanged, {deleted} deleted, {} unreadable, \
             {names_not_utf8} not indexed (file name not valid UTF-8), {unsupported} skipped as \
             unsupported, {} left out by ignore files",
            messages.failures() - names_not_utf8,
            left_out.get()
        ));
    } else if !args.verbose && !args.reporting.quiet {
        if unsupported > 0 {
            messages.info(&format!(
                "skipped {unsupported} file(s) of formats kts does not read (--verbose names them)"
            ));
        }
        if left_out.get() > 0 {
            messages.info(&format!(
                "left out {} file(s) or folder(s) that ignore files name (--verbose names them, \
                 --no-ignore reads them)",
                left_out.get()
            ));
        }
    }
    Ok(messages.exit())
}

/// Whether `path` is `place` or lies in the folder `place` ("" is the root).
fn is_within(path: &str, place: &str) -> bool {
    place.is_empty()
        || path == place
        || path
            .strip_prefix(place)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The file's manifest entry: from the previous crawl when the file is as
/// that crawl found it (no need to read it), else read afresh.
/// `None` when it is not a document kts handles.
fn describe(previous: &Manifest, found: &walk::Found) -> anyhow::Result<Option<Entry>> {
    let unchanged = previous.get(&found.path).filter(|old| found.is_as_in(old));
    match unchanged {
        Some(old) => Ok(Some(old.clone())),
        None => found.describe(),
    }
}

fn record(root: &str, path: &str, entry: &Entry, status: FileStatus) -> FileRecord {
    FileRecord {
        schema: schema_id::FILE.into(),
        path: path.to_string(),
        root: Some(root.to_string()),
        size: entry.size,
        mtime: kts_cli::time::rfc3339_from_nanos(entry.mtime_ns),
        sha256: entry.sha256.clone(),
        format: entry.format,
        status,
    }
}
