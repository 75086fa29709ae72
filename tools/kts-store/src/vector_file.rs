//! `DIR/.kts/vectors.bin`: the store's embeddings laid out for a fast exact
//! search, memory-mapped by readers.
//!
//! SQLite (`chunks_vec`) stays the store of record. The writer derives this
//! file from it after its last commit, stamped with the store's
//! `vectors_version`; a reader uses the file only when that stamp is the
//! store's current version, and otherwise searches `chunks_vec`. A stale or
//! missing file (a writer killed before rewriting it) costs speed, never
//! correctness. The file is replaced by rename, never changed in place.
//!
//! The header carries a CRC-32 of the header, the type names, the rowids,
//! the codes and the scales (14 bytes a row, cheap to check), which readers
//! check when they open the file and the writer before it keeps the file,
//! rewriting it whole when it does not match. The vectors themselves are too
//! large to check at every open: a search checks the rows it scores exactly,
//! each f32 row against its int8 form (the one within half a step of the
//! other), and takes the file as damaged when one does not match. A damaged
//! file is left aside, readers answer from `chunks_vec` and say why.
//!
//! A search scores every row with int8 dot products (each row scaled to ±127
//! by its own largest component; a quarter of the memory traffic of f32), then
//! re-scores the best candidates exactly with the f32 rows.
//!
//! After an update of a few documents, the writer leaves this file as it is
//! and writes the changes beside it (`vectors.delta`, see vector_delta.rs):
//! a search then skips the rows the delta removed and scores its rows too.
//!
//! Layout, little-endian; every section starts at a multiple of 64 bytes and
//! the f32 rows at a page boundary:
//!
//! ```text
//! header   64 bytes: magic "KTSVEC02", dims u32, type count u32, rows u64, version u64,
//!          names length u64, checksum u32
//! types    doc type names, UTF-8, each followed by '\n'
//! rowids   i64 × rows       (chunks.id)
//! codes    u16 × rows       (index of the row's doc type in the names)
//! scales   f32 × rows       (int8 row × scale ≈ f32 row)
//! int8     i8 × rows × dims
//! f32      f32 × rows × dims
//! ```

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashSet};
use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::Path;

use anyhow::Context;
use memmap2::{Mmap, MmapOptions};
use rusqlite::Connection;

use crate::vector_delta::Delta;

const MAGIC: &[u8; 8] = b"KTSVEC02";
const HEADER: usize = 64;
const PAGE: usize = 4096;
/// Rows scanned per thread before a search is split across cores (a
/// thread costs tens of microseconds; this many rows take about a millisecond).
const ROWS_PER_THREAD: usize = 32_768;
/// Candidates re-scored with f32 beyond the k asked for: measured to give
/// recall@10 ≥ 0.99 against exact search (see examples/bench.rs `recall`).
const EXTRA_CANDIDATES: usize = 64;

fn align(offset: usize, to: usize) -> usize {
    offset.div_ceil(to) * to
}

/// Where each section of a file with these counts starts, and its length.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Layout {
    dims: usize,
    rows: usize,
    names_len: usize,
    rowids: usize,
    codes: usize,
    scales: usize,
    int8: usize,
    f32s: usize,
    len: usize,
}

impl Layout {
    fn new(dims: usize, rows: usize, names_len: usize) -> Layout {
        let rowids = align(HEADER + names_len, 64);
        let codes = align(rowids + rows * 8, 64);
        let scales = align(codes + rows * 2, 64);
        let int8 = align(scales + rows * 4, 64);
        let f32s = align(int8 + rows * dims, PAGE);
        Layout {
            dims,
            rows,
            names_len,
            rowids,
            codes,
            scales,
            int8,
            f32s,
            len: f32s + rows * dims * 4,
        }
    }
}

/// The header of a vector file: what it holds and which store version it was made from.
#[derive(Clone, Debug, PartialEq)]
struct Header {
    dims: usize,
    type_count: usize,
    rows: usize,
    version: u64,
    names_len: usize,
    /// See [`checksum`].
    checksum: u32,
}

/// Where the checksum sits in the header; the bytes before it are checked.
const CHECKSUM_AT: usize = 40;

impl Header {
    fn encode(&self) -> [u8; HEADER] {
        let mut out = [0u8; HEADER];
        out[..8].copy_from_slice(MAGIC);
        out[8..12].copy_from_slice(&(self.dims as u32).to_le_bytes());
        out[12..16].copy_from_slice(&(self.type_count as u32).to_le_bytes());
        out[16..24].copy_from_slice(&(self.rows as u64).to_le_bytes());
        out[24..32].copy_from_slice(&self.version.to_le_bytes());
        out[32..40].copy_from_slice(&(self.names_len as u64).to_le_bytes());
        out[CHECKSUM_AT..CHECKSUM_AT + 4].copy_from_slice(&self.checksum.to_le_bytes());
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
            rows: usize::try_from(u64_at(16)).ok()?,
            version: u64_at(24),
            names_len: usize::try_from(u64_at(32)).ok()?,
            checksum: u32_at(CHECKSUM_AT) as u32,
        })
    }
}

/// The CRC-32 of the header (before its checksum), the type names, the
/// rowids, the codes and the scales in `prefix`, the file's bytes up to its
/// int8 rows.
fn checksum(prefix: &[u8], layout: &Layout) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&prefix[..CHECKSUM_AT]);
    for (start, len) in [
        (HEADER, layout.names_len),
        (layout.rowids, layout.rows * 8),
        (layout.codes, layout.rows * 2),
        (layout.scales, layout.rows * 4),
    ] {
        hasher.update(&prefix[start..start + len]);
    }
    hasher.finalize()
}

/// The version and row count stamped on the vector file at `path`, if it is
/// a sound one: of its layout's length, its checksum matching.
pub(crate) fn file_version(path: &Path) -> Option<(u64, usize)> {
    let mut file = File::open(path).ok()?;
    let header = read_header(&file)?;
    let layout = Layout::new(header.dims, header.rows, header.names_len);
    if layout.len as u64 != file.metadata().ok()?.len() {
        return None;
    }
    let mut prefix = vec![0; layout.int8];
    file.seek(SeekFrom::Start(0)).ok()?;
    std::io::Read::read_exact(&mut file, &mut prefix).ok()?;
    (checksum(&prefix, &layout) == header.checksum).then_some((header.version, header.rows))
}

/// `vectors.delta`, beside the vector file at `path`.
pub(crate) fn delta_path(path: &Path) -> std::path::PathBuf {
    path.with_extension("delta")
}

/// The header at the start of `file`, if it is a vector file's.
fn read_header(file: &File) -> Option<Header> {
    let mut header = [0u8; HEADER];
    std::io::Read::read_exact(&mut &*file, &mut header).ok()?;
    Header::decode(&header)
}

/// Writes the vectors of `chunks_vec` to `path` (through a temporary file and
/// a rename), stamped with `version`. The caller holds the writer lock, so the
/// table does not change meanwhile.
pub(crate) fn write(
    conn: &Connection,
    path: &Path,
    dims: usize,
    version: u64,
) -> anyhow::Result<()> {
    let rows: i64 = conn.query_row("SELECT count(*) FROM chunks_vec", [], |r| r.get(0))?;
    let rows = rows as usize;
    let names: Vec<String> = conn
        .prepare("SELECT DISTINCT doc_type FROM documents ORDER BY doc_type")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    anyhow::ensure!(
        names.len() <= usize::from(u16::MAX),
        "too many document types"
    );
    let names_block: Vec<u8> = names
        .iter()
        .flat_map(|n| format!("{n}\n").into_bytes())
        .collect();
    let layout = Layout::new(dims, rows, names_block.len());
    let mut header = Header {
        dims,
        type_count: names.len(),
        rows,
        version,
        names_len: names_block.len(),
        checksum: 0,
    };

    let tmp = path.with_extension("bin.tmp");
    let file = File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    file.set_len(layout.len as u64)?;
    // One buffered writer per section, each on its own handle (own offset).
    let section = |offset: usize| -> anyhow::Result<BufWriter<File>> {
        let mut handle = std::fs::OpenOptions::new().write(true).open(&tmp)?;
        handle.seek(SeekFrom::Start(offset as u64))?;
        Ok(BufWriter::with_capacity(1 << 16, handle))
    };
    let mut head = section(0)?;
    head.write_all(&header.encode())?;
    head.write_all(&names_block)?;
    let (mut rowids, mut codes, mut scales) = (
        section(layout.rowids)?,
        section(layout.codes)?,
        section(layout.scales)?,
    );
    let (mut int8, mut f32s) = (section(layout.int8)?, section(layout.f32s)?);

    let mut statement = conn.prepare("SELECT rowid, embedding, doc_type FROM chunks_vec")?;
    let mut query = statement.query([])?;
    let mut written = 0usize;
    let mut quantised = vec![0i8; dims];
    while let Some(row) = query.next()? {
        let rowid: i64 = row.get(0)?;
        let blob = row.get_ref(1)?.as_blob()?;
        let doc_type: String = row.get(2)?;
        anyhow::ensure!(
            blob.len() == dims * 4,
            "vector {rowid} has {} bytes, not {}",
            blob.len(),
            dims * 4
        );
        anyhow::ensure!(written < rows, "chunks_vec grew while being read");
        let vector: Vec<f32> = blob
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        let scale = quantise(&vector, &mut quantised);
        let code = names.binary_search(&doc_type).unwrap_or(0) as u16;
        rowids.write_all(&rowid.to_le_bytes())?;
        codes.write_all(&code.to_le_bytes())?;
        scales.write_all(&scale.to_le_bytes())?;
        int8.write_all(bytemuck::cast_slice(&quantised))?;
        f32s.write_all(blob)?;
        written += 1;
    }
    anyhow::ensure!(written == rows, "chunks_vec changed while being read");
    for writer in [head, rowids, codes, scales, int8, f32s] {
        writer
            .into_inner()
            .map_err(|e| e.into_error())?
            .sync_all()?;
    }
    let mut prefix = vec![0; layout.int8];
    let mut handle = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&tmp)?;
    std::io::Read::read_exact(&mut handle, &mut prefix)?;
    header.checksum = checksum(&prefix, &layout);
    handle.seek(SeekFrom::Start(0))?;
    handle.write_all(&header.encode())?;
    handle.sync_all()?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming {}", tmp.display()))?;
    if let Some(dir) = path.parent() {
        File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// Scales `vector` to int8 (its largest component to ±127) into `out`;
/// returns the scale that maps it back.
fn quantise(vector: &[f32], out: &mut [i8]) -> f32 {
    let largest = vector.iter().fold(0f32, |m, x| m.max(x.abs()));
    if largest == 0.0 {
        out.fill(0);
        return 0.0;
    }
    let scale = largest / 127.0;
    for (q, x) in out.iter_mut().zip(vector) {
        *q = (x / scale).round() as i8;
    }
    scale
}

/// What [`VectorFile::open`] found.
pub(crate) enum Opened {
    File(Box<VectorFile>),
    /// No file, one of another format, or one behind the store without the
    /// delta to bring it up to date: the writer rewrites it.
    Stale,
    /// The file is not what its header says: why.
    Damaged(String),
}

/// A vector file opened for search, with the changes since it was written.
pub(crate) struct VectorFile {
    layout: Layout,
    names: Vec<String>,
    /// The rows added and removed since (when the file is older than the store).
    delta: Option<Delta>,
    /// Rows of the file that the delta removed (when it removed any).
    excluded: Option<Vec<bool>>,
    /// Header to int8 rows: read by every search, so paged in at open.
    scanned: Mmap,
    /// The f32 rows: only the candidates' pages are read.
    exact: Mmap,
}

impl VectorFile {
    /// Opens the file at `path` if it is a well-formed vector file of
    /// `version`, or of an earlier version with the delta to `version` beside it.
    pub(crate) fn open(path: &Path, version: u64) -> anyhow::Result<Opened> {
        let Ok(file) = File::open(path) else {
            return Ok(Opened::Stale);
        };
        let len = file.metadata()?.len() as usize;
        let mut start = [0u8; HEADER];
        if std::io::Read::read_exact(&mut &file, &mut start).is_err() {
            return Ok(Opened::Damaged(format!(
                "{len} bytes, fewer than its header"
            )));
        }
        let Some(header) = Header::decode(&start) else {
            return Ok(match start.starts_with(&MAGIC[..6]) {
                true => Opened::Stale,
                false => Opened::Damaged("its header is not a vector file's".into()),
            });
        };
        let layout = Layout::new(header.dims, header.rows, header.names_len);
        if header.dims == 0 {
            return Ok(Opened::Damaged("its header says 0 dimensions".into()));
        }
        if layout.len != len {
            return Ok(Opened::Damaged(format!(
                "{len} bytes where its header says {}",
                layout.len
            )));
        }
        let delta = if header.version == version {
            None
        } else {
            match Delta::open(&delta_path(path), header.version, version, header.dims)? {
                Some(delta) => Some(delta),
                None => return Ok(Opened::Stale),
            }
        };
        #[allow(unsafe_code)]
        // SAFETY: a vector file is written whole under a temporary name and
        // then renamed into place; it is never modified or truncated after
        // that, so the mapped bytes stay valid and unchanged for as long as
        // the maps live (a replaced file's inode survives until unmapped).
        let (scanned, exact) = unsafe {
            (
                MmapOptions::new().len(layout.f32s).populate().map(&file)?,
                MmapOptions::new()
                    .offset(layout.f32s as u64)
                    .len(len - layout.f32s)
                    .map(&file)?,
            )
        };
        if checksum(&scanned, &layout) != header.checksum {
            return Ok(Opened::Damaged("its checksum does not match".into()));
        }
        let names_bytes = &scanned[HEADER..HEADER + header.names_len];
        let names: Vec<String> = match std::str::from_utf8(names_bytes) {
            Ok(names) => names.split_terminator('\n').map(str::to_string).collect(),
            Err(_) => Vec::new(),
        };
        if names.len() != header.type_count {
            return Ok(Opened::Damaged(
                "its doc type names are not the ones its header counts".into(),
            ));
        }
        let mut file = VectorFile {
            layout,
            names,
            delta: None,
            excluded: None,
            scanned,
            exact,
        };
        file.excluded = delta.as_ref().filter(|d| !d.removed.is_empty()).map(|d| {
            let removed: HashSet<i64> = d.removed.iter().copied().collect();
            file.rowids().iter().map(|r| removed.contains(r)).collect()
        });
        file.delta = delta;
        Ok(Opened::File(Box::new(file)))
    }

    fn rowids(&self) -> &[i64] {
        bytemuck::cast_slice(
            &self.scanned[self.layout.rowids..self.layout.rowids + self.layout.rows * 8],
        )
    }

    fn codes(&self) -> &[u16] {
        bytemuck::cast_slice(
            &self.scanned[self.layout.codes..self.layout.codes + self.layout.rows * 2],
        )
    }

    fn scales(&self) -> &[f32] {
        bytemuck::cast_slice(
            &self.scanned[self.layout.scales..self.layout.scales + self.layout.rows * 4],
        )
    }

    fn int8_rows(&self) -> &[i8] {
        bytemuck::cast_slice(
            &self.scanned[self.layout.int8..self.layout.int8 + self.layout.rows * self.layout.dims],
        )
    }

    fn f32_row(&self, row: usize) -> &[f32] {
        let dims = self.layout.dims;
        bytemuck::cast_slice(&self.exact[row * dims * 4..(row + 1) * dims * 4])
    }

    /// The `k` rows nearest to `query` (a unit vector of the file's dims) as
    /// (rowid, cosine), best first; only rows of `doc_types` when not empty.
    /// `None` when a row scored is damaged (see [`sound`]).
    pub(crate) fn search(
        &self,
        query: &[f32],
        k: usize,
        doc_types: &[String],
    ) -> Option<Vec<(i64, f64)>> {
        if k == 0 || query.len() != self.layout.dims {
            return Some(Vec::new());
        }
        let allowed = (!doc_types.is_empty()).then(|| self.allowed_codes(doc_types));
        let mut found = if allowed.as_ref().is_some_and(|codes| !codes.contains(&true)) {
            Vec::new()
        } else {
            // The query's scale is a common factor of every score: only the order matters.
            let mut query8 = vec![0i8; query.len()];
            quantise(query, &mut query8);
            let pool = k + k.max(EXTRA_CANDIDATES);
            let scan = Scan {
                rows: self.int8_rows(),
                scales: self.scales(),
                codes: self.codes(),
                dims: self.layout.dims,
                query: &query8,
                allowed: allowed.as_deref(),
                excluded: self.excluded.as_deref(),
            };
            self.exact(query, scan.top(pool))?
        };
        if let Some(delta) = &self.delta {
            found.extend(
                (0..delta.rowids.len())
                    .filter(|&row| delta.allowed(row, doc_types))
                    .map(|row| (delta.rowids[row], f64::from(dot_f32(delta.row(row), query)))),
            );
        }
        sound(found).map(|found| crate::search::best_first(found, k))
    }

    /// The `k` of the rows with these rowids nearest to `query`, scored
    /// exactly (for searches restricted to a few documents); `None` as for
    /// [`VectorFile::search`].
    pub(crate) fn search_among(
        &self,
        query: &[f32],
        k: usize,
        rowids: &std::collections::HashSet<i64>,
    ) -> Option<Vec<(i64, f64)>> {
        if k == 0 || query.len() != self.layout.dims {
            return Some(Vec::new());
        }
        let rows = self
            .rowids()
            .iter()
            .enumerate()
            .filter(|&(row, rowid)| rowids.contains(rowid) && !self.is_excluded(row))
            .map(|(row, _)| row)
            .collect();
        let mut found = self.exact(query, rows)?;
        if let Some(delta) = &self.delta {
            found.extend(
                delta
                    .rowids
                    .iter()
                    .enumerate()
                    .filter(|(_, rowid)| rowids.contains(rowid))
                    .map(|(row, &rowid)| (rowid, f64::from(dot_f32(delta.row(row), query)))),
            );
        }
        sound(found).map(|found| crate::search::best_first(found, k))
    }

    fn is_excluded(&self, row: usize) -> bool {
        self.excluded.as_ref().is_some_and(|excluded| excluded[row])
    }

    fn allowed_codes(&self, doc_types: &[String]) -> Vec<bool> {
        self.names
            .iter()
            .map(|name| doc_types.contains(name))
            .collect()
    }

    /// The rows scored exactly, as (rowid, cosine); `None` when one of them
    /// is damaged (see [`VectorFile::row_is_sound`]).
    fn exact(&self, query: &[f32], rows: Vec<usize>) -> Option<Vec<(i64, f64)>> {
        let rowids = self.rowids();
        rows.into_iter()
            .map(|row| {
                self.row_is_sound(row)
                    .then(|| (rowids[row], f64::from(dot_f32(self.f32_row(row), query))))
            })
            .collect()
    }

    /// Whether the f32 row and its int8 form (with its scale) agree: each
    /// int8 component the f32 one rounded to the row's step. Damage to
    /// either (zeroed pages, stray writes) shows as a disagreement.
    fn row_is_sound(&self, row: usize) -> bool {
        let dims = self.layout.dims;
        let scale = self.scales()[row];
        let int8 = &self.int8_rows()[row * dims..(row + 1) * dims];
        // Half a step, and what f32 arithmetic may add to it.
        let tolerance = scale * 0.501 + f32::EPSILON;
        self.f32_row(row)
            .iter()
            .zip(int8)
            .all(|(&x, &q)| (x - f32::from(q) * scale).abs() <= tolerance)
    }
}

/// The scored rows, unless a score is not a number: a damaged vector (NaN
/// would otherwise sort out of sight, or be printed as a score).
fn sound(rows: Vec<(i64, f64)>) -> Option<Vec<(i64, f64)>> {
    rows.iter()
        .all(|(_, score)| score.is_finite())
        .then_some(rows)
}

/// The int8 pass of a search.
struct Scan<'a> {
    rows: &'a [i8],
    scales: &'a [f32],
    codes: &'a [u16],
    dims: usize,
    query: &'a [i8],
    /// Which doc type codes may be returned (all when `None`).
    allowed: Option<&'a [bool]>,
    /// Rows removed since the file was written (none when `None`).
    excluded: Option<&'a [bool]>,
}

impl Scan<'_> {
    /// The row numbers of the `pool` best approximate scores, split across
    /// cores when there are many rows.
    fn top(&self, pool: usize) -> Vec<usize> {
        let rows = self.scales.len();
        let threads = std::thread::available_parallelism()
            .map_or(1, usize::from)
            .min(rows.div_ceil(ROWS_PER_THREAD))
            .max(1);
        let per_thread = rows.div_ceil(threads);
        let mut best = if threads == 1 {
            self.range(0, rows, pool)
        } else {
            std::thread::scope(|s| {
                let parts: Vec<_> = (0..threads)
                    .map(|t| {
                        let (from, to) = (t * per_thread, ((t + 1) * per_thread).min(rows));
                        s.spawn(move || self.range(from, to, pool))
                    })
                    .collect();
                let mut all = TopK::new(pool);
                for part in parts {
                    for entry in part.join().expect("vector scan panicked").heap {
                        all.push(entry.0.score, entry.0.row);
                    }
                }
                all
            })
        };
        let mut entries: Vec<Entry> = best.heap.drain().map(|Reverse(e)| e).collect();
        entries.sort_by(|a, b| b.cmp(a));
        entries.into_iter().map(|e| e.row).collect()
    }

    /// The best `pool` rows of `from..to`, on the widest instructions this CPU has.
    fn range(&self, from: usize, to: usize, pool: usize) -> TopK {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            #[allow(unsafe_code)]
            // SAFETY: the CPU supports AVX2, checked just above.
            return unsafe { self.range_avx2(from, to, pool) };
        }
        self.range_portable(from, to, pool)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn range_avx2(&self, from: usize, to: usize, pool: usize) -> TopK {
        self.range_with(from, to, pool, |row, query| dot_i8_avx2(row, query))
    }

    fn range_portable(&self, from: usize, to: usize, pool: usize) -> TopK {
        self.range_with(from, to, pool, dot_i8)
    }

    #[inline(always)]
    fn range_with(
        &self,
        from: usize,
        to: usize,
        pool: usize,
        dot: impl Fn(&[i8], &[i8]) -> i32,
    ) -> TopK {
        let mut top = TopK::new(pool);
        let dims = self.dims;
        let rows = self.rows[from * dims..to * dims].chunks_exact(dims);
        for (row, vector) in (from..to).zip(rows) {
            if self
                .allowed
                .is_some_and(|allowed| allowed.get(usize::from(self.codes[row])) != Some(&true))
                || self.excluded.is_some_and(|excluded| excluded[row])
            {
                continue;
            }
            let score = dot(vector, self.query) as f32 * self.scales[row];
            if score > top.threshold() {
                top.push(score, row);
            }
        }
        top
    }
}

/// `dot_i8` with AVX2's byte multiply-add: |a| times b carrying a's sign,
/// adjacent pairs summed in i16 (`maddubs`), then in i32. A pair cannot
/// saturate: b is a quantised query, within ±127 (2 × 128 × 127 < 2^15).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dot_i8_avx2(a: &[i8], b: &[i8]) -> i32 {
    use std::arch::x86_64::*;
    assert_eq!(a.len(), b.len());
    let blocks = a.len() / 32;
    let ones = _mm256_set1_epi16(1);
    let mut sums = _mm256_setzero_si256();
    for block in 0..blocks {
        #[allow(unsafe_code)]
        // SAFETY: both slices hold `blocks` × 32 bytes; unaligned loads.
        let (x, y) = unsafe {
            (
                _mm256_loadu_si256(a.as_ptr().add(block * 32).cast()),
                _mm256_loadu_si256(b.as_ptr().add(block * 32).cast()),
            )
        };
        let pairs = _mm256_maddubs_epi16(_mm256_sign_epi8(x, x), _mm256_sign_epi8(y, x));
        sums = _mm256_add_epi32(sums, _mm256_madd_epi16(pairs, ones));
    }
    let half = _mm_add_epi32(
        _mm256_castsi256_si128(sums),
        _mm256_extracti128_si256::<1>(sums),
    );
    let quarter = _mm_add_epi32(half, _mm_shuffle_epi32::<0b01_00_11_10>(half));
    let total = _mm_add_epi32(quarter, _mm_shuffle_epi32::<0b10_11_00_01>(quarter));
    _mm_cvtsi128_si32(total) + dot_i8(&a[blocks * 32..], &b[blocks * 32..])
}

/// A dot product of int8 vectors the compiler vectorises (32 independent sums).
#[inline(always)]
fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    let mut sums = [0i32; 32];
    let (a_blocks, b_blocks) = (a.chunks_exact(32), b.chunks_exact(32));
    let tail: i32 = a_blocks
        .remainder()
        .iter()
        .zip(b_blocks.remainder())
        .map(|(x, y)| i32::from(*x) * i32::from(*y))
        .sum();
    for (x, y) in a_blocks.zip(b_blocks) {
        for ((sum, x), y) in sums.iter_mut().zip(x).zip(y) {
            *sum += i32::from(i16::from(*x) * i16::from(*y));
        }
    }
    sums.iter().sum::<i32>() + tail
}

fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    score: f32,
    row: usize,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// By score, then the earlier row first (so ties resolve the same way every time).
    fn cmp(&self, other: &Self) -> Ordering {
        self.score
            .total_cmp(&other.score)
            .then(other.row.cmp(&self.row))
    }
}

/// The `k` best entries seen so far (a min-heap of them).
struct TopK {
    k: usize,
    heap: BinaryHeap<Reverse<Entry>>,
}

impl TopK {
    fn new(k: usize) -> TopK {
        TopK {
            k,
            heap: BinaryHeap::with_capacity(k + 1),
        }
    }

    /// The score an entry must beat to enter.
    #[inline(always)]
    fn threshold(&self) -> f32 {
        if self.heap.len() < self.k {
            f32::NEG_INFINITY
        } else {
            self.heap
                .peek()
                .map_or(f32::NEG_INFINITY, |Reverse(e)| e.score)
        }
    }

    fn push(&mut self, score: f32, row: usize) {
        let entry = Entry { score, row };
        if self.heap.len() < self.k {
            self.heap.push(Reverse(entry));
        } else if self.heap.peek().is_some_and(|Reverse(min)| entry > *min) {
            self.heap.pop();
            self.heap.push(Reverse(entry));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_sections_are_aligned_and_in_order() {
        let l = Layout::new(384, 1001, 17);
        assert!(l.rowids >= HEADER + 17 && l.rowids.is_multiple_of(64));
        assert!(l.codes >= l.rowids + 1001 * 8 && l.codes.is_multiple_of(64));
        assert!(l.scales >= l.codes + 1001 * 2 && l.scales.is_multiple_of(64));
        assert!(l.int8 >= l.scales + 1001 * 4 && l.int8.is_multiple_of(64));
        assert!(l.f32s >= l.int8 + 1001 * 384 && l.f32s.is_multiple_of(PAGE));
        assert_eq!(l.len, l.f32s + 1001 * 384 * 4);
    }

    #[test]
    fn header_round_trips() {
        let h = Header {
            dims: 384,
            type_count: 3,
            rows: 12345,
            version: 99,
            names_len: 20,
            checksum: 0xdead_beef,
        };
        assert_eq!(Header::decode(&h.encode()), Some(h));
        assert_eq!(
            Header::decode(b"not a vector file, not at all, no no no no no no no no no no no"),
            None
        );
    }

    #[test]
    fn int8_dot_matches_the_plain_sum() {
        let a: Vec<i8> = (0..77).map(|i| (i * 37 % 255 - 127) as i8).collect();
        let b: Vec<i8> = (0..77).map(|i| (i * 91 % 255 - 127) as i8).collect();
        let plain: i32 = a
            .iter()
            .zip(&b)
            .map(|(x, y)| i32::from(*x) * i32::from(*y))
            .sum();
        assert_eq!(dot_i8(&a, &b), plain);
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn avx2_dot_equals_the_portable_one() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            eprintln!("this CPU has no AVX2: the portable dot product is the one in use");
            return;
        }
        let mut rng = fastrand::Rng::with_seed(7);
        for len in [0, 1, 31, 32, 100, 384, 1024] {
            for extremes in [false, true] {
                let value = |rng: &mut fastrand::Rng| {
                    if extremes {
                        *rng.choice(&[-127i8, 127]).unwrap()
                    } else {
                        rng.i8(-127..=127)
                    }
                };
                let a: Vec<i8> = (0..len).map(|_| value(&mut rng)).collect();
                let b: Vec<i8> = (0..len).map(|_| value(&mut rng)).collect();
                #[allow(unsafe_code)]
                // SAFETY: AVX2 was detected above.
                let fast = unsafe { dot_i8_avx2(&a, &b) };
                assert_eq!(fast, dot_i8(&a, &b), "length {len}");
            }
        }
    }

    #[test]
    fn quantised_rows_keep_their_shape() {
        let v = [0.5f32, -0.25, 0.0, 0.125];
        let mut q = [0i8; 4];
        let scale = quantise(&v, &mut q);
        assert_eq!(q[0], 127);
        for (x, q) in v.iter().zip(q) {
            assert!((f32::from(q) * scale - x).abs() <= scale / 2.0 + 1e-6);
        }
        assert_eq!(quantise(&[0.0; 4], &mut q), 0.0);
    }

    #[test]
    fn top_k_keeps_the_best_and_breaks_ties_by_row() {
        let mut top = TopK::new(3);
        for (row, score) in [0.1, 0.9, 0.5, 0.9, 0.3, 0.7].into_iter().enumerate() {
            if score > top.threshold() {
                top.push(score, row);
            }
        }
        let mut kept: Vec<Entry> = top.heap.into_iter().map(|Reverse(e)| e).collect();
        kept.sort_by(|a, b| b.cmp(a));
        let rows: Vec<usize> = kept.iter().map(|e| e.row).collect();
        assert_eq!(rows, [1, 3, 5]);
    }
}
