//! `DIR/.kts/vectors.delta`: what changed in the store's vectors since
//! `vectors.bin` was written, so that updating a few documents of a large
//! scope does not rewrite the whole file.
//!
//! Triggers on `chunks` log every chunk row added or removed in
//! `vectors_pending`, relative to the `vectors.bin` whose version
//! `meta.vectors_log_base` names. The writer turns the log into this file:
//! the rowids whose row in `vectors.bin` no longer counts (removed or
//! replaced chunks) and the rows added since, with their vectors. A reader
//! uses `vectors.bin` with this file when the file says it is the delta of
//! that `vectors.bin` to the store's current `vectors_version`. When the log
//! grows past a share of the base, the writer rewrites `vectors.bin` whole
//! and empties the log. Written aside and renamed, like `vectors.bin`.
//!
//! Layout, little-endian:
//!
//! ```text
//! header   64 bytes: magic "KTSVDL01", dims u32, type count u32, base version u64,
//!          version u64, removed u64, rows u64, names length u64
//! types    doc type names, UTF-8, each followed by '\n'
//! removed  i64 × removed    (rowids whose vectors.bin row no longer counts), ascending
//! rowids   i64 × rows       (the rows added since the base)
//! codes    u16 × rows       (index of the row's doc type in the names)
//! f32      f32 × rows × dims
//! ```

use std::fs::File;
use std::io::Write;
use std::path::Path;

use anyhow::Context;
use rusqlite::{Connection, OptionalExtension};

const MAGIC: &[u8; 8] = b"KTSVDL01";
const HEADER: usize = 64;

/// The changes since a `vectors.bin`, read whole (it is small by design).
pub(crate) struct Delta {
    pub dims: usize,
    pub names: Vec<String>,
    /// Ascending.
    pub removed: Vec<i64>,
    pub rowids: Vec<i64>,
    pub codes: Vec<u16>,
    /// `rowids.len() × dims`.
    pub vectors: Vec<f32>,
}

struct Header {
    dims: usize,
    type_count: usize,
    base_version: u64,
    version: u64,
    removed: usize,
    rows: usize,
    names_len: usize,
}

impl Header {
    fn encode(&self) -> [u8; HEADER] {
        let mut out = [0u8; HEADER];
        out[..8].copy_from_slice(MAGIC);
        out[8..12].copy_from_slice(&(self.dims as u32).to_le_bytes());
        out[12..16].copy_from_slice(&(self.type_count as u32).to_le_bytes());
        for (i, value) in [
            self.base_version,
            self.version,
            self.removed as u64,
            self.rows as u64,
            self.names_len as u64,
        ]
        .into_iter()
        .enumerate()
        {
            out[16 + i * 8..24 + i * 8].copy_from_slice(&value.to_le_bytes());
        }
        out
    }

    fn decode(bytes: &[u8]) -> Option<Header> {
        if bytes.len() < HEADER || &bytes[..8] != MAGIC {
            return None;
        }
        let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap()) as usize;
        let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap());
        Some(Header {
            dims: u32_at(8),
            type_count: u32_at(12),
            base_version: u64_at(16),
            version: u64_at(24),
            removed: usize::try_from(u64_at(32)).ok()?,
            rows: usize::try_from(u64_at(40)).ok()?,
            names_len: usize::try_from(u64_at(48)).ok()?,
        })
    }

    /// The file length these counts give (None when it overflows).
    fn len(&self) -> Option<usize> {
        let rows_bytes = self.rows.checked_mul(8 + 2 + self.dims.checked_mul(4)?)?;
        HEADER
            .checked_add(self.names_len)?
            .checked_add(self.removed.checked_mul(8)?)?
            .checked_add(rows_bytes)
    }
}

/// The changes logged since the base, in chunk id order.
pub(crate) fn pending_count(conn: &Connection) -> anyhow::Result<usize> {
    let n: i64 = conn.query_row("SELECT count(*) FROM vectors_pending", [], |r| r.get(0))?;
    Ok(n as usize)
}

/// Writes the delta of the logged changes from the `vectors.bin` of
/// `base_version` to the store's `version` (aside, then renamed into place).
pub(crate) fn write(
    conn: &Connection,
    path: &Path,
    dims: usize,
    base_version: u64,
    version: u64,
) -> anyhow::Result<()> {
    let removed: Vec<i64> = conn
        .prepare("SELECT chunk FROM vectors_pending ORDER BY chunk")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let mut row = conn.prepare("SELECT embedding, doc_type FROM chunks_vec WHERE rowid = ?1")?;
    let (mut rowids, mut types, mut vectors) = (Vec::new(), Vec::new(), Vec::new());
    for &rowid in &removed {
        let found: Option<(Vec<u8>, String)> = row
            .query_row([rowid], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let Some((blob, doc_type)) = found else {
            continue;
        };
        anyhow::ensure!(
            blob.len() == dims * 4,
            "vector {rowid} has {} bytes, not {}",
            blob.len(),
            dims * 4
        );
        rowids.push(rowid);
        types.push(doc_type);
        vectors.extend_from_slice(&blob);
    }
    let mut names = types.clone();
    names.sort();
    names.dedup();
    anyhow::ensure!(
        names.len() <= usize::from(u16::MAX),
        "too many document types"
    );
    let names_block: Vec<u8> = names
        .iter()
        .flat_map(|n| format!("{n}\n").into_bytes())
        .collect();
    let header = Header {
        dims,
        type_count: names.len(),
        base_version,
        version,
        removed: removed.len(),
        rows: rowids.len(),
        names_len: names_block.len(),
    };
    let mut bytes = Vec::with_capacity(header.len().context("delta too large")?);
    bytes.extend_from_slice(&header.encode());
    bytes.extend_from_slice(&names_block);
    removed
        .iter()
        .for_each(|r| bytes.extend_from_slice(&r.to_le_bytes()));
    rowids
        .iter()
        .for_each(|r| bytes.extend_from_slice(&r.to_le_bytes()));
    for doc_type in &types {
        let code = names.binary_search(doc_type).unwrap_or(0) as u16;
        bytes.extend_from_slice(&code.to_le_bytes());
    }
    bytes.extend_from_slice(&vectors);

    let tmp = path.with_extension("delta.tmp");
    let written = File::create(&tmp).and_then(|mut file| {
        file.write_all(&bytes)?;
        file.sync_all()
    });
    written.with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming {}", tmp.display()))?;
    if let Some(dir) = path.parent() {
        File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// The (base version, version) stamped on the delta at `path`, if it is one.
pub(crate) fn file_versions(path: &Path) -> Option<(u64, u64)> {
    let mut header = [0u8; HEADER];
    std::io::Read::read_exact(&mut File::open(path).ok()?, &mut header).ok()?;
    Header::decode(&header).map(|h| (h.base_version, h.version))
}

/// Removes the delta at `path`, if there is one.
pub(crate) fn remove(path: &Path) -> anyhow::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("removing {}", path.display()))
        }
        _ => Ok(()),
    }
}

impl Delta {
    /// Reads the delta at `path` if it is a well-formed one from the base of
    /// `base_version` to `version`, with vectors of `dims`.
    pub(crate) fn open(
        path: &Path,
        base_version: u64,
        version: u64,
        dims: usize,
    ) -> anyhow::Result<Option<Delta>> {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        let Some(header) = Header::decode(&bytes) else {
            return Ok(None);
        };
        if header.base_version != base_version
            || header.version != version
            || header.dims != dims
            || header.len() != Some(bytes.len())
        {
            return Ok(None);
        }
        let mut at = HEADER;
        let mut take = |len: usize| {
            let part = &bytes[at..at + len];
            at += len;
            part
        };
        let Ok(names) = std::str::from_utf8(take(header.names_len)) else {
            return Ok(None);
        };
        let names: Vec<String> = names.split_terminator('\n').map(str::to_string).collect();
        if names.len() != header.type_count {
            return Ok(None);
        }
        let i64s = |part: &[u8]| -> Vec<i64> {
            part.chunks_exact(8)
                .map(|b| i64::from_le_bytes(b.try_into().unwrap()))
                .collect()
        };
        let removed = i64s(take(header.removed * 8));
        let rowids = i64s(take(header.rows * 8));
        let codes = take(header.rows * 2)
            .chunks_exact(2)
            .map(|b| u16::from_le_bytes(b.try_into().unwrap()))
            .collect();
        let vectors = take(header.rows * dims * 4)
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        Ok(Some(Delta {
            dims,
            names,
            removed,
            rowids,
            codes,
            vectors,
        }))
    }

    pub(crate) fn row(&self, row: usize) -> &[f32] {
        &self.vectors[row * self.dims..(row + 1) * self.dims]
    }

    /// Whether the row's doc type is one of `doc_types` (any when empty).
    pub(crate) fn allowed(&self, row: usize, doc_types: &[String]) -> bool {
        doc_types.is_empty()
            || self
                .names
                .get(usize::from(self.codes[row]))
                .is_some_and(|name| doc_types.contains(name))
    }
}
