//! kts-chunk: splits each `kts.doc/1` document's Markdown into `kts.chunk/1` records.

pub mod blocks;
mod splitter;

use clap::{CommandFactory, Parser};
use kts_cli::{Exit, Incoming, JsonlReader, JsonlWriter};
use kts_record::{ChunkRecord, DocRecord, ErrorCode, schema_id};
use serde::Deserialize;
use serde_json::Value;

pub use splitter::{Chunk, ChunkSettings, split};

const ABOUT: &str =
    "Split kts.doc/1 Markdown into kts.chunk/1 records at headings, paragraphs and sentences";

const AFTER_HELP: &str = "\
Reads kts.doc/1 records on stdin (a record without a `schema` field is taken
as one). Each document is passed through, with the
number of its chunks in `chunks` (kts-index keeps a document only when that many
arrive), followed by its chunks: spans of its Markdown of about --size characters that end at
sentence boundaries. A chunk starts with the whole paragraphs (or, in a
paragraph split for length, the sentences) that end the chunk before it in
its section and fit in --overlap characters; a longer last paragraph is not
repeated. Headings start new chunks; tables and code blocks are kept whole when they fit, and a table
that does not is split between rows. Each chunk carries its heading path (for
a chunk that starts below a table's header, ending with that header row), its character offsets into the Markdown (text equals
markdown[start:end], counted in Unicode scalar values as Python does), and the
page or slide it starts on. chunk_id is stable: the same text in the same
document keeps its id. Other records pass through unchanged.

Example:
  kts-crawl docs | kts-convert | kts-chunk --chunks-only | jq -c '{path, heading_path}'";

#[derive(Parser, Debug)]
#[command(name = "kts-chunk", version, about = ABOUT, after_help = AFTER_HELP)]
pub struct Args {
    /// Target chunk size in characters; no chunk is longer, except a short
    /// trailing fragment merged into the chunk before it.
    #[arg(long, value_name = "CHARS", default_value_t = 1000, value_parser = clap::value_parser!(u32).range(50..))]
    pub size: u32,

    /// Most characters a chunk repeats from the end of the chunk before it
    /// (whole paragraphs or sentences that fit; none when the last is longer).
    #[arg(long, value_name = "CHARS", default_value_t = 200)]
    pub overlap: u32,

    /// A trailing fragment shorter than this is merged into the chunk before it.
    #[arg(long, value_name = "CHARS", default_value_t = 100)]
    pub min_size: u32,

    /// Write only chunks: do not pass the kts.doc/1 records through.
    #[arg(long)]
    pub chunks_only: bool,

    #[command(flatten)]
    pub reporting: kts_cli::Reporting,
}

/// The clap definition, for man pages and completions.
pub fn command() -> clap::Command {
    Args::command()
}

pub fn run(args: Args) -> anyhow::Result<Exit> {
    let messages = args.reporting.messages("kts-chunk");
    let settings = ChunkSettings {
        size: args.size as usize,
        overlap: (args.overlap as usize).min(args.size as usize / 2),
        min_size: (args.min_size as usize).min(args.size as usize / 2),
    };
    let mut reader = JsonlReader::stdin().with_default_schema(schema_id::DOC);
    let mut out = JsonlWriter::new();
    let (mut documents, mut chunks) = (0usize, 0usize);
    while let Some(item) = reader.next() {
        match item? {
            Ok(Incoming::Doc(mut value)) => {
                let path = value.get("path").and_then(|p| p.as_str()).map(String::from);
                // The Markdown is moved, not copied, out of the record and back:
                // a document is held once.
                let markdown = match value.get_mut("markdown") {
                    Some(Value::String(markdown)) => std::mem::take(markdown),
                    _ => String::new(),
                };
                match DocRecord::deserialize(&value) {
                    Ok(mut doc) => {
                        doc.markdown = markdown;
                        let doc_chunks = chunk_records(&doc, &settings);
                        if !args.chunks_only {
                            value["markdown"] = Value::String(doc.markdown);
                            value["chunks"] = doc_chunks.len().into();
                            out.write(&value)?;
                        }
                        drop(value);
                        chunks += doc_chunks.len();
                        for chunk in doc_chunks {
                            out.write(&chunk)?;
                        }
                        documents += 1;
                    }
                    Err(e) => {
                        // The record names the document when it can; the line is in the message.
                        let at = path.unwrap_or_else(|| reader.position());
                        let error = messages.reject_record(
                            &at,
                            ErrorCode::BadRecord,
                            &format!("{}: {e}", reader.position()),
                        );
                        out.write(&error)?;
                    }
                }
            }
            Ok(
                Incoming::File(value)
                | Incoming::Chunk(value)
                | Incoming::Error(value)
                | Incoming::Other(value),
            ) => out.write(&value)?,
            Err((code, message)) => {
                let error = messages.reject_record(&reader.position(), code, &message);
                out.write(&error)?;
            }
        }
    }
    out.flush()?;
    if args.reporting.stats {
        messages.info(&format!(
            "{documents} documents, {chunks} chunks, {} rejected",
            messages.failures()
        ));
    }
    Ok(messages.exit())
}

/// The chunk records of one document.
pub fn chunk_records(doc: &DocRecord, settings: &ChunkSettings) -> Vec<ChunkRecord> {
    split(&doc.markdown, settings)
        .into_iter()
        .enumerate()
        .map(|(index, chunk)| ChunkRecord {
            schema: kts_record::schema_id::CHUNK.into(),
            chunk_id: chunk.id(&doc.doc_id),
            doc_id: doc.doc_id.clone(),
            path: doc.path.clone(),
            index,
            text: chunk.text,
            heading_path: chunk.heading_path,
            start: chunk.start,
            end: chunk.end,
            page: chunk.page,
            slide: chunk.slide,
            embedding: None,
            model: None,
            model_sha256: None,
        })
        .collect()
}
