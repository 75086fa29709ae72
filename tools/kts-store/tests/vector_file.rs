//! vectors.bin: the same answers as sqlite-vec, used only while current.

use std::path::Path;

use kts_store::{ChunkRow, DocumentRow, Filters, LockWait, Scored, Store, vector_file_path};

const DIMS: usize = 48;
const TYPES: [&str; 3] = ["GUIDE", "POLICY", "REFERENCE"];

/// A deterministic pseudo-random unit vector.
fn unit(seed: u64) -> Vec<f32> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let v: Vec<f32> = (0..DIMS)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) as f32 / (1u64 << 31) as f32) - 0.5
        })
        .collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / norm).collect()
}

/// A store of 300 documents of 2 chunks, three doc types, vectors file written.
fn indexed_store(dir: &Path) -> Store {
    let mut store = Store::open_writer(dir, LockWait::NoWait).unwrap();
    store.begin().unwrap();
    for d in 0..300u64 {
        let doc = DocumentRow {
            doc_id: format!("d{d}"),
            path: format!("{d}.md"),
            doc_type: TYPES[d as usize % 3].into(),
            ..Default::default()
        };
        let chunks: Vec<ChunkRow> = (0..2u64)
            .map(|c| ChunkRow {
                chunk_id: format!("d{d}-{c}"),
                index: c as usize,
                text: format!("chunk {c} of document {d}"),
                end: 10,
                embedding: Some(unit(d * 2 + c)),
                model: Some("test-model".into()),
                ..Default::default()
            })
            .collect();
        store.apply(&doc, &chunks).unwrap();
    }
    store.commit().unwrap();
    assert!(store.refresh_vector_file().unwrap(), "the file is written");
    assert!(
        !store.refresh_vector_file().unwrap(),
        "and left alone when current"
    );
    store
}

/// Search results of a fresh reader for a few queries and filters.
fn answers(dir: &Path) -> Vec<Vec<Scored>> {
    let reader = Store::open_read(dir).unwrap();
    let mut out = Vec::new();
    for q in 0..12u64 {
        let query = unit(10_000 + q);
        for doc_type in [None, Some("POLICY"), Some("NONE-OF-THESE")] {
            let filters = Filters {
                doc_types: doc_type.into_iter().map(str::to_string).collect(),
                doc_ids: None,
            };
            out.push(reader.search_vector(&query, 10, &filters).unwrap());
        }
        // Restricted to some documents (changed, untouched and new ones).
        let filters = Filters {
            doc_types: Vec::new(),
            doc_ids: Some(
                ["d1", "d2", "d7", "d150", "new3"]
                    .map(str::to_string)
                    .to_vec(),
            ),
        };
        out.push(reader.search_vector(&query, 3, &filters).unwrap());
    }
    out
}

/// Replaces, deletes and adds documents (`round` varies the new vectors).
fn change_documents(store: &mut Store, replaced: &[u64], deleted: &[u64], added: u64, round: u64) {
    store.begin().unwrap();
    let mut write = |doc_id: String, doc_type: &str, chunks: u64, seed: u64| {
        let doc = DocumentRow {
            doc_id: doc_id.clone(),
            path: format!("{doc_id}.md"),
            doc_type: doc_type.into(),
            ..Default::default()
        };
        let chunks: Vec<ChunkRow> = (0..chunks)
            .map(|c| ChunkRow {
                chunk_id: format!("{doc_id}-r{round}-{c}"),
                index: c as usize,
                text: format!("chunk {c} of {doc_id}, round {round}"),
                end: 10,
                embedding: Some(unit(seed + c)),
                model: Some("test-model".into()),
                ..Default::default()
            })
            .collect();
        store.apply(&doc, &chunks).unwrap();
    };
    for &d in replaced {
        write(
            format!("d{d}"),
            "REFERENCE",
            3,
            50_000 + round * 1000 + d * 4,
        );
    }
    for n in 0..added {
        write(format!("new{n}"), "FAQ", 2, 90_000 + round * 1000 + n * 4);
    }
    for &d in deleted {
        assert!(store.delete_document(&format!("d{d}")).unwrap());
    }
    store.commit().unwrap();
}

/// The answers of sqlite-vec alone: the same search with vectors.bin moved aside.
fn answers_without_the_file(dir: &Path) -> Vec<Vec<Scored>> {
    let file = vector_file_path(dir);
    let aside = file.with_extension("aside");
    std::fs::rename(&file, &aside).unwrap();
    let out = answers(dir);
    std::fs::rename(&aside, &file).unwrap();
    out
}

fn assert_same(fast: &[Vec<Scored>], reference: &[Vec<Scored>]) {
    assert_eq!(fast.len(), reference.len());
    for (f, r) in fast.iter().zip(reference) {
        let ids = |list: &[Scored]| list.iter().map(|s| s.rowid).collect::<Vec<_>>();
        assert_eq!(ids(f), ids(r), "same chunks in the same order");
        for (a, b) in f.iter().zip(r) {
            assert!((a.score - b.score).abs() < 1e-4, "{a:?} vs {b:?}");
            assert_eq!(a.rank, b.rank);
        }
    }
}

#[test]
fn the_vector_file_answers_as_sqlite_vec_does() {
    let dir = tempfile::tempdir().unwrap();
    drop(indexed_store(dir.path()));
    let fast = answers(dir.path());
    assert!(fast[0].len() == 10 && fast[1].len() == 10 && fast[2].is_empty());
    assert_same(&fast, &answers_without_the_file(dir.path()));
}

#[test]
fn a_stale_vector_file_is_not_used() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = indexed_store(dir.path());
    let before = answers(dir.path());
    let nearest = before[0][0].rowid;
    let doc_id = Store::open_read(dir.path())
        .unwrap()
        .doc_id_of(nearest)
        .unwrap()
        .unwrap();
    store.begin().unwrap();
    assert!(store.delete_document(&doc_id).unwrap());
    store.commit().unwrap();

    // Committed but not refreshed, as after a writer killed at the end of its run.
    let after = answers(dir.path());
    assert!(
        after[0].iter().all(|s| s.rowid != nearest),
        "{:?}",
        after[0]
    );
    assert_same(&after, &answers_without_the_file(dir.path()));

    assert!(store.refresh_vector_file().unwrap());
    assert_same(&answers(dir.path()), &after);
}

#[test]
fn a_damaged_vector_file_is_ignored_and_said() {
    let dir = tempfile::tempdir().unwrap();
    drop(indexed_store(dir.path()));
    let reference = answers_without_the_file(dir.path());
    let file = vector_file_path(dir.path());
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
    assert_same(&answers(dir.path()), &reference);
    assert_damage_said(dir.path(), "bytes where its header says");
    std::fs::write(&file, vec![0xa5u8; bytes.len()]).unwrap();
    assert_same(&answers(dir.path()), &reference);
    assert_damage_said(dir.path(), "its header is not a vector file's");
}

/// Asserts that a vector search of a fresh reader finds `vectors.bin`
/// damaged, and says so naming the file, why and what to do.
fn assert_damage_said(dir: &Path, why: &str) {
    let reader = Store::open_read(dir).unwrap();
    assert_eq!(
        reader.vector_file_damage(),
        None,
        "not known before a search"
    );
    reader
        .search_vector(&unit(1), 10, &Filters::default())
        .unwrap();
    let said = reader.vector_file_damage().unwrap();
    let file = vector_file_path(dir).display().to_string();
    assert!(said.starts_with(&format!("{file} is damaged (")), "{said}");
    assert!(said.contains(why), "{said}");
    assert!(said.ends_with("< /dev/null to write it anew"), "{said}");
}

#[test]
fn zeroed_vectors_are_taken_for_damage() {
    let dir = tempfile::tempdir().unwrap();
    drop(indexed_store(dir.path()));
    let reference = answers_without_the_file(dir.path());
    // Zeroes are numbers: without a check they would score every row 0.
    let len = std::fs::metadata(vector_file_path(dir.path()))
        .unwrap()
        .len() as usize;
    overwrite(dir.path(), len - 600 * DIMS * 4..len, 0);
    assert_same(&answers(dir.path()), &reference);
    assert_damage_said(dir.path(), "a vector it holds is not what its check says");
}

/// Overwrites the bytes of `vectors.bin` in `range` with `byte`.
fn overwrite(dir: &Path, range: std::ops::Range<usize>, byte: u8) {
    let file = vector_file_path(dir);
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[range].fill(byte);
    std::fs::write(&file, bytes).unwrap();
}

#[test]
fn a_vector_file_with_damaged_rowids_is_ignored_then_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = indexed_store(dir.path());
    let reference = answers_without_the_file(dir.path());
    // The rowids start at the first multiple of 64 after the header and names.
    overwrite(dir.path(), 128..160, 0x7f);
    assert!(
        !Store::open_read(dir.path())
            .unwrap()
            .vectors_from_file()
            .unwrap()
    );
    assert_same(&answers(dir.path()), &reference);
    assert!(
        store.refresh_vector_file().unwrap(),
        "rewritten with nothing changed"
    );
    assert!(
        Store::open_read(dir.path())
            .unwrap()
            .vectors_from_file()
            .unwrap()
    );
    assert_same(&answers(dir.path()), &reference);
}

#[test]
fn vectors_that_are_not_numbers_never_give_a_score() {
    let dir = tempfile::tempdir().unwrap();
    drop(indexed_store(dir.path()));
    let reference = answers_without_the_file(dir.path());
    // 0xff bytes make every f32 of the file's last rows a NaN.
    let len = std::fs::metadata(vector_file_path(dir.path()))
        .unwrap()
        .len() as usize;
    overwrite(dir.path(), len - 100 * DIMS * 4..len, 0xff);
    let reader = Store::open_read(dir.path()).unwrap();
    let mut damaged = Vec::new();
    for q in 0..12u64 {
        damaged.push(
            reader
                .search_vector(&unit(10_000 + q), 10, &Filters::default())
                .unwrap(),
        );
    }
    assert!(!reader.vectors_from_file().unwrap());
    let undamaged: Vec<_> = reference.iter().step_by(4).cloned().collect();
    assert_same(&damaged, &undamaged);
}

#[test]
fn a_store_without_vectors_has_no_vector_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = indexed_store(dir.path());
    assert!(vector_file_path(dir.path()).is_file());
    store.begin().unwrap();
    store.clear().unwrap();
    store.commit().unwrap();
    assert!(!store.refresh_vector_file().unwrap());
    assert!(!vector_file_path(dir.path()).exists());
}

#[test]
fn a_few_changed_documents_go_to_a_delta_beside_the_vector_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = indexed_store(dir.path());
    let file = vector_file_path(dir.path());
    let delta = file.with_extension("delta");
    let base = std::fs::read(&file).unwrap();

    // Nearest neighbours of the queries among those changed, so that the
    // answers must come from the delta and must skip the rows it removed.
    change_documents(&mut store, &[1, 2, 7], &[4, 5], 4, 1);
    assert!(store.refresh_vector_file().unwrap());
    assert_eq!(
        std::fs::read(&file).unwrap(),
        base,
        "vectors.bin is left as it was"
    );
    assert!(delta.is_file());
    let from_file = || {
        Store::open_read(dir.path())
            .unwrap()
            .vectors_from_file()
            .unwrap()
    };
    assert!(from_file(), "vectors.bin and its delta answer");
    let fast = answers(dir.path());
    assert!(
        fast.iter().flatten().any(|s| s.rowid > 600),
        "rows of the delta are found"
    );
    assert_same(&fast, &answers_without_the_file(dir.path()));
    assert!(
        !store.refresh_vector_file().unwrap(),
        "current: nothing to write"
    );

    // A second update is added to the same delta.
    change_documents(&mut store, &[2, 150], &[9], 0, 2);
    assert!(store.refresh_vector_file().unwrap());
    assert_eq!(std::fs::read(&file).unwrap(), base);
    assert_same(&answers(dir.path()), &answers_without_the_file(dir.path()));

    // A damaged delta is not used: the answers come from sqlite-vec.
    let bytes = std::fs::read(&delta).unwrap();
    std::fs::write(&delta, &bytes[..bytes.len() - 7]).unwrap();
    assert!(!from_file());
    assert_same(&answers(dir.path()), &answers_without_the_file(dir.path()));
    std::fs::write(&delta, &bytes).unwrap();
    assert!(from_file());

    // Many changes: vectors.bin is written whole again and the delta goes.
    let many: Vec<u64> = (20..60).collect();
    change_documents(&mut store, &many, &[], 0, 3);
    assert!(store.refresh_vector_file().unwrap());
    assert_ne!(std::fs::read(&file).unwrap(), base);
    assert!(!delta.exists());
    assert!(from_file());
    assert_same(&answers(dir.path()), &answers_without_the_file(dir.path()));

    // And the next small change starts a delta from the new file.
    change_documents(&mut store, &[100], &[], 1, 4);
    assert!(store.refresh_vector_file().unwrap());
    assert!(delta.is_file());
    assert_same(&answers(dir.path()), &answers_without_the_file(dir.path()));
}
