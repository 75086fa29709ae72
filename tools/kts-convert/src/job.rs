//! Converting documents on worker threads while keeping the input order.

use std::collections::BTreeMap;
use std::io::Read;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context as _;
use crossbeam_channel::{RecvTimeoutError, bounded, unbounded};
use kts_cli::JsonlReader;
use kts_record::scope_path::{self, ResolveError};
use kts_record::{DocRecord, ErrorCode, ErrorRecord, FileRecord, Format, detect_format};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::formats::{self, Context, ConvertError, Converted, Part};
use crate::images::{Image, ImageSink};
use crate::ocr::Ocr;
use crate::{Settings, describe, metadata, parts, store};

const TOOL: &str = "kts-convert";
/// Name of the threads that run one conversion each (see `quiet_panics_in_converters`).
const CONVERTER_THREAD: &str = "kts-convert-document";
/// Converters recurse over document trees; hostile nesting must not overflow the stack.
const CONVERTER_STACK_BYTES: usize = 256 << 20;

/// One input record, classified.
pub enum Work {
    Convert(Box<FileRecord>),
    Pass(Value),
    /// The input line was not a usable record: (code, position, reason).
    Reject(ErrorCode, String, String),
}

/// One output record.
pub enum Output {
    Doc(Box<DocRecord>),
    Failed(ErrorRecord),
    Pass(Value),
    /// Said on stderr, not written to the stream.
    Warning(String),
}

/// Reads records on a thread, converts files on `threads` workers and hands
/// every output to `emit` in input order. `emit` returns false to stop early.
pub fn run_in_order<R: Read + Send + 'static>(
    mut reader: JsonlReader<R>,
    threads: usize,
    settings: &Settings,
    emit: &mut dyn FnMut(Output) -> anyhow::Result<bool>,
) -> anyhow::Result<()> {
    quiet_panics_in_converters();
    let settings = Arc::new(settings.clone());
    // Bounds how far reading may run ahead of writing, so memory stays bounded
    // even when one slow document holds back the ones after it.
    let (window_tx, window_rx) = bounded::<()>(threads * 8);
    let (job_tx, job_rx) = bounded::<(usize, Box<FileRecord>)>(threads * 2);
    // A file gives several outputs when documents are found inside it.
    let (out_tx, out_rx) = unbounded::<(usize, Vec<Output>)>();

    let reader_out = out_tx.clone();
    let reading = std::thread::spawn(move || -> anyhow::Result<()> {
        let mut sequence = 0;
        while let Some(item) = reader.next() {
            let at = reader.position();
            if window_tx.send(()).is_err() {
                break;
            }
            let sent = match crate::classify(item?, &at) {
                Work::Convert(file) => job_tx.send((sequence, file)).is_ok(),
                Work::Pass(value) => reader_out
                    .send((sequence, vec![Output::Pass(value)]))
                    .is_ok(),
                Work::Reject(code, at, message) => {
                    let error = ErrorRecord::new(TOOL, &at, code, message);
                    reader_out
                        .send((sequence, vec![Output::Failed(error)]))
                        .is_ok()
                }
            };
            if !sent {
                break;
            }
            sequence += 1;
        }
        Ok(())
    });
    for _ in 0..threads {
        let (jobs, results, settings) = (job_rx.clone(), out_tx.clone(), Arc::clone(&settings));
        std::thread::spawn(move || {
            for (sequence, file) in jobs {
                if results
                    .send((sequence, convert_file(&file, &settings)))
                    .is_err()
                {
                    break;
                }
            }
        });
    }
    drop(out_tx);

    let mut pending = BTreeMap::new();
    let mut next = 0;
    for (sequence, outputs) in out_rx {
        pending.insert(sequence, outputs);
        while let Some(outputs) = pending.remove(&next) {
            for output in outputs {
                if !emit(output)? {
                    return Ok(());
                }
            }
            let _ = window_rx.recv();
            next += 1;
        }
    }
    if !pending.is_empty() {
        anyhow::bail!(
            "a worker thread died: the records after input record {next} were not written"
        );
    }
    match reading.join() {
        Ok(result) => result.context("reading stdin"),
        Err(_) => anyhow::bail!("the input reader failed"),
    }
}

/// The bytes of a regular file; a FIFO, socket or device (which a crawled
/// file may have been replaced with) is refused rather than waited on.
fn read_regular_file(path: &Path) -> Result<Vec<u8>, ConvertError> {
    let io_error = |e: std::io::Error| {
        ConvertError::new(
            ErrorCode::Io,
            format!("cannot read {}: {e}", path.display()),
        )
    };
    if !std::fs::metadata(path).map_err(io_error)?.is_file() {
        return Err(ConvertError::new(
            ErrorCode::Io,
            format!(
                "{} is not a regular file (a pipe, socket or device): not read",
                path.display()
            ),
        ));
    }
    std::fs::read(path).map_err(io_error)
}

/// Converts one file into its document record and those of the documents
/// inside it (each, or the file, an error record when it cannot be converted).
/// The outputs of one input file. A panic outside the guarded converter (in
/// the cache, metadata or image handling) fails that file alone: a worker that
/// died would leave a hole in the output order and hold back every later file.
fn convert_file(file: &FileRecord, settings: &Settings) -> Vec<Output> {
    let result = catch_unwind(AssertUnwindSafe(|| try_convert_file(file, settings)))
        .unwrap_or_else(|panic| {
            Err(ConvertError::new(
                ErrorCode::Internal,
                format!("kts-convert failed: {}", formats::panic_message(&panic)),
            ))
        });
    match result {
        Ok(outputs) => outputs,
        Err(error) => vec![Output::Failed(ErrorRecord::new(
            TOOL,
            &file.path,
            error.code,
            error.message,
        ))],
    }
}

fn try_convert_file(file: &FileRecord, settings: &Settings) -> Result<Vec<Output>, ConvertError> {
    let root = scope_root(file, settings);
    let file = &FileRecord {
        path: scope_path::normalize(&file.path)
            .map_err(|e| ConvertError::new(ErrorCode::UnsafePath, e.0))?,
        ..file.clone()
    };
    let full_path = scope_path::resolve_in_scope(&root, &file.path).map_err(|e| match e {
        ResolveError::Unsafe(why) => ConvertError::new(ErrorCode::UnsafePath, why.0),
        ResolveError::Io(why) => ConvertError::new(ErrorCode::Io, why),
    })?;
    let doc_id = scope_path::doc_id(&file.path);
    let mut warnings = Vec::new();
    if settings.use_store {
        match cached(&root, &doc_id, &file.sha256) {
            Ok(Some(outputs)) if settings.describer.is_none() || all_described(&outputs) => {
                return Ok(outputs);
            }
            Ok(_) => {}
            Err(altered) => warnings.push(Output::Warning(format!(
                "{}: {} was changed since it was written, so it is not trusted: converted again",
                file.path,
                altered.display()
            ))),
        }
    }
    if is_text_sized(file.format) && file.size > settings.max_markdown_bytes {
        return Err(too_large(file.size, settings));
    }
    let bytes = read_regular_file(&full_path)?;
    if bytes.is_empty() {
        return Err(ConvertError::new(ErrorCode::Empty, "the file is empty"));
    }
    // The file may have changed since it was crawled: the document then says
    // what was read, so that the index never holds one content under another's hash.
    let sha256 = crate::images::hex(&Sha256::digest(&bytes));
    let file = &FileRecord {
        size: bytes.len() as u64,
        sha256,
        ..file.clone()
    };
    let extension = Path::new(&file.path).extension().and_then(|e| e.to_str());
    let tail = &bytes[bytes.len().saturating_sub(256 << 10)..];
    let format = detect_format(&bytes, tail, extension).ok_or_else(|| {
        ConvertError::new(
            ErrorCode::Unsupported,
            "not a document format kts converts (judged by its content)",
        )
    })?;
    let mut image_file = ImageSink::default();
    let image_file_link = (settings.describer.is_some() && format.is_image())
        .then(|| image_file.add(&bytes, format.as_str()));
    let (mut converted, found, mut images) = convert_guarded(format, bytes, settings)?;
    if converted.markdown.len() as u64 > settings.max_markdown_bytes {
        return Err(too_large(converted.markdown.len() as u64, settings));
    }
    let stored_images = store::documents_dir(&root).join(&doc_id).join("images");
    if let Some(link) = image_file_link {
        converted.markdown = describe::with_image_file_link(&converted.markdown, &link);
        images.extend(image_file.into_images());
    }
    if let Some(describer) = &settings.describer {
        let stored = settings.use_store.then_some(stored_images.as_path());
        let warnings = describer.describe(&mut images, stored);
        converted.markdown = describe::into_alt_text(&converted.markdown, &images);
        let described = images.iter().filter(|i| i.description.is_some()).count();
        converted
            .properties
            .insert(describe::DESCRIBED.into(), Value::from(described));
        formats::add_warnings(&mut converted.properties, warnings);
    } else if settings.use_store {
        describe::carry_over(&mut images, &stored_images);
    }
    let mut doc = metadata::describe(file, &doc_id, format, converted, &images);
    let mut outputs = vec![];
    // Parts are stored before their file's document, so a stored file
    // document means its parts are stored too (see `cached`).
    for part in parts::describe(file, &mut doc, found) {
        outputs.push(match part {
            Ok((part, _)) if part.markdown.len() as u64 > settings.max_markdown_bytes => {
                let error = too_large(part.markdown.len() as u64, settings);
                Output::Failed(ErrorRecord::new(
                    TOOL,
                    &part.path,
                    error.code,
                    error.message,
                ))
            }
            Ok((mut part, images)) => {
                keep(&root, &mut part, &images, settings)?;
                Output::Doc(Box::new(part))
            }
            Err(error) => Output::Failed(*error),
        });
    }
    keep(&root, &mut doc, &images, settings)?;
    outputs.insert(0, Output::Doc(Box::new(doc)));
    warnings.extend(outputs);
    Ok(warnings)
}

/// Stores a converted document, or (with --no-store) drops its image links.
fn keep(
    root: &Path,
    doc: &mut DocRecord,
    images: &[Image],
    settings: &Settings,
) -> Result<(), ConvertError> {
    if settings.use_store {
        store::save(root, doc, images).map_err(|e| {
            let read_only = e.chain().any(|cause| {
                cause.downcast_ref::<std::io::Error>().is_some_and(|io| {
                    matches!(
                        io.kind(),
                        std::io::ErrorKind::ReadOnlyFilesystem
                            | std::io::ErrorKind::PermissionDenied
                    )
                })
            });
            let hint = if read_only {
                " (the scope cannot be written: convert with --no-store to read it without storing)"
            } else {
                ""
            };
            ConvertError::new(
                ErrorCode::Io,
                format!("cannot store the converted document: {e:#}{hint}"),
            )
        })
    } else {
        // Nothing is written, so there are no stored image files to point at.
        doc.images.clear();
        Ok(())
    }
}

/// A file's stored conversion with its parts', if every one of them was
/// made from the same bytes by this converter revision; `Err` names a stored
/// `content.md` changed since.
fn cached(root: &Path, doc_id: &str, source_sha256: &str) -> Result<Option<Vec<Output>>, PathBuf> {
    let Some(doc) = store::cached(root, doc_id, source_sha256)? else {
        return Ok(None);
    };
    let mut outputs = Vec::new();
    for path in parts::listed(&doc) {
        let Some(part) = store::cached(root, &scope_path::doc_id(path), source_sha256)? else {
            return Ok(None);
        };
        outputs.push(Output::Doc(Box::new(part)));
    }
    outputs.extend(parts::listed_errors(&doc).into_iter().map(Output::Failed));
    outputs.insert(0, Output::Doc(Box::new(doc)));
    Ok(Some(outputs))
}

/// Whether every stored document's images have descriptions.
fn all_described(outputs: &[Output]) -> bool {
    outputs.iter().all(|output| match output {
        Output::Doc(doc) => describe::all_described(doc),
        _ => true,
    })
}

fn scope_root(file: &FileRecord, settings: &Settings) -> PathBuf {
    file.root
        .as_ref()
        .map(PathBuf::from)
        .or_else(|| settings.default_root.clone())
        .unwrap_or_else(|| ".".into())
}

/// Runs a converter on its own thread, with a large stack, a panic guard and a
/// time limit. A converter that runs past the limit is abandoned (it cannot be
/// stopped from outside) and the file is reported as timed out.
fn convert_guarded(
    format: kts_record::Format,
    bytes: Vec<u8>,
    settings: &Settings,
) -> Result<(Converted, Vec<Part>, Vec<Image>), ConvertError> {
    let (done_tx, done_rx) = bounded(1);
    let limits = settings.limits.clone();
    let ocr = Ocr {
        deadline: Instant::now().checked_add(settings.timeout),
        ..settings.ocr.clone()
    };
    let spawned = std::thread::Builder::new()
        .name(CONVERTER_THREAD.into())
        .stack_size(CONVERTER_STACK_BYTES)
        .spawn(move || {
            let result = catch_unwind(AssertUnwindSafe(|| {
                let mut images = ImageSink::default();
                let converted = formats::convert_with_parts(
                    format,
                    &bytes,
                    &mut Context {
                        limits: &limits,
                        images: &mut images,
                        ocr: &ocr,
                    },
                );
                converted.map(|(c, parts)| (c, parts, images.into_images()))
            }));
            let _ = done_tx.send(result);
        });
    if let Err(e) = spawned {
        return Err(ConvertError::new(
            ErrorCode::Internal,
            format!("cannot start a converter thread: {e}"),
        ));
    }
    match done_rx.recv_timeout(settings.timeout) {
        Ok(Ok(result)) => result,
        Ok(Err(panic)) => Err(ConvertError::new(
            ErrorCode::Internal,
            format!(
                "the {} converter failed: {}",
                format.as_str(),
                formats::panic_message(&panic)
            ),
        )),
        Err(RecvTimeoutError::Timeout) => Err(ConvertError::new(
            ErrorCode::Timeout,
            format!(
                "conversion took longer than {} s",
                settings.timeout.as_secs()
            ),
        )),
        Err(RecvTimeoutError::Disconnected) => Err(ConvertError::new(
            ErrorCode::Internal,
            "the converter thread ended without a result",
        )),
    }
}

/// A converter's panic is reported as the document's error record; the default
/// hook would also print a backtrace notice for it on stderr.
fn quiet_panics_in_converters() {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().name() != Some(CONVERTER_THREAD) {
            default_hook(info);
        }
    }));
}

/// Formats whose Markdown is about as large as the file.
fn is_text_sized(format: Format) -> bool {
    matches!(
        format,
        Format::Md
            | Format::Txt
            | Format::Json
            | Format::Csv
            | Format::Vtt
            | Format::Adoc
            | Format::Latex
    )
}

fn too_large(bytes: u64, settings: &Settings) -> ConvertError {
    ConvertError::new(
        ErrorCode::TooLarge,
        format!(
            "{} MiB of text, more than --max-markdown-mib {}",
            bytes.div_ceil(1 << 20),
            settings.max_markdown_bytes >> 20
        ),
    )
}
