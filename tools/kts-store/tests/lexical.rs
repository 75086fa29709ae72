//! The lexical index: built by the writer, used only while current, kept up
//! to date incrementally, resumed or rebuilt after a cut-off write, and
//! ranking as FTS5 does.

use std::path::Path;

use kts_store::{
    ChunkRow, DocumentRow, Filters, LexicalState, LockWait, Scored, Store, Synced,
    lexical_index_dir,
};

const TOPICS: [&str; 8] = [
    "vpn tunnel resets after the gateway update",
    "annual leave accrues monthly for every employee",
    "error E-5 means the licence server is unreachable",
    "the printer queue stalls when the spooler restarts",
    "expense claims need receipts within thirty days",
    "rotate the database credentials every quarter",
    "café menus list allergens beside each dish",
    "running backups nightly keeps restores quick",
];

fn document(n: usize, doc_type: &str, words: &str) -> (DocumentRow, Vec<ChunkRow>) {
    let path = format!("doc-{n:03}.md");
    let doc = DocumentRow {
        doc_id: kts_record::scope_path::doc_id(&path),
        title: format!("Note {n}"),
        path,
        doc_type: doc_type.into(),
        source_sha256: Some(format!("{n}-{words}")),
        metadata: serde_json::json!({}),
        ..Default::default()
    };
    let chunks = (0..3)
        .map(|i| {
            let text = format!(
                "{} {words}; part {i} of note {n}. {}",
                TOPICS[(n + i) % TOPICS.len()],
                TOPICS[(n * 3 + i) % TOPICS.len()]
            );
            ChunkRow {
                chunk_id: format!("{n:03}-{i}-{}", words.len()),
                index: i,
                end: text.chars().count(),
                text,
                heading_path: vec![format!("Section {}", n % 4)],
                ..Default::default()
            }
        })
        .collect();
    (doc, chunks)
}

fn write(scope: &Path, documents: impl IntoIterator<Item = (DocumentRow, Vec<ChunkRow>)>) {
    let mut store = Store::open_writer(scope, LockWait::NoWait).unwrap();
    store.begin().unwrap();
    for (doc, chunks) in documents {
        store.apply(&doc, &chunks).unwrap();
    }
    store.commit().unwrap();
}

fn sync(scope: &Path) -> Synced {
    Store::open_writer(scope, LockWait::NoWait)
        .unwrap()
        .refresh_lexical_index()
        .unwrap()
}

fn rowids(scored: &[Scored]) -> Vec<i64> {
    scored.iter().map(|s| s.rowid).collect()
}

const QUESTIONS: [&str; 6] = [
    "why does the VPN tunnel reset?",
    "how many days of annual leave",
    "E-5 licence server",
    "cafe allergens",
    "back up nightly",
    "Section 2 note",
];

/// The lexical index and FTS5 agree on what matches; their orders may differ
/// only where the two BM25 formulas weigh common words differently.
fn assert_same_matches(reader: &Store, filters: &Filters) {
    assert_eq!(reader.lexical_state().unwrap(), LexicalState::Current);
    for question in QUESTIONS {
        let lexical = reader.search_bm25(question, 1000, filters).unwrap();
        let fts5 = reader.search_fts5(question, 1000, filters).unwrap();
        let mut a = rowids(&lexical);
        let mut b = rowids(&fts5);
        assert!(!a.is_empty() || !filters.is_empty(), "{question}: no hits");
        if let (Some(first), Some(fts5_first)) = (lexical.first(), fts5.first()) {
            assert_eq!(first.rowid, fts5_first.rowid, "{question}: best hit");
        }
        a.sort();
        b.sort();
        assert_eq!(a, b, "{question}: matching chunks");
    }
}

#[test]
fn the_writer_builds_it_and_readers_use_it_while_current() {
    let dir = tempfile::tempdir().unwrap();
    let scope = dir.path();
    write(scope, (0..40).map(|n| document(n, "GENERAL", "first")));
    assert_eq!(
        Store::open_read(scope).unwrap().lexical_state().unwrap(),
        LexicalState::Missing
    );
    assert_eq!(sync(scope), Synced::Rebuilt { rows: 120 });
    assert_eq!(sync(scope), Synced::Current, "nothing changed");
    let reader = Store::open_read(scope).unwrap();
    assert_same_matches(&reader, &Filters::default());

    // Replace ten documents and delete five: the index is stale until synced.
    let mut store = Store::open_writer(scope, LockWait::NoWait).unwrap();
    store.begin().unwrap();
    for n in 0..10 {
        let (doc, chunks) = document(n, "POLICY", "second edition words");
        store.apply(&doc, &chunks).unwrap();
    }
    for n in 30..35 {
        store.delete_path(&format!("doc-{n:03}.md")).unwrap();
    }
    store.commit().unwrap();
    let stale = Store::open_read(scope).unwrap();
    assert_eq!(stale.lexical_state().unwrap(), LexicalState::Stale);
    let fts5 = stale
        .search_fts5("edition", 100, &Filters::default())
        .unwrap();
    assert_eq!(
        stale
            .search_bm25("edition", 100, &Filters::default())
            .unwrap(),
        fts5,
        "a stale index is not used"
    );
    assert!(matches!(store.refresh_lexical_index().unwrap(), Synced::Updated { rows } if rows > 0));
    drop(store);
    assert_eq!(
        stale.lexical_state().unwrap(),
        LexicalState::Current,
        "a reader kept open sees the index catch up"
    );
    assert_eq!(
        stale
            .search_bm25("edition", 100, &Filters::default())
            .unwrap()
            .len(),
        30
    );

    let reader = Store::open_read(scope).unwrap();
    assert_same_matches(&reader, &Filters::default());
    assert_eq!(
        reader
            .search_bm25("edition", 100, &Filters::default())
            .unwrap()
            .len(),
        30
    );
    assert!(
        reader
            .search_bm25("\"note 31\" OR (NEAR*", 100, &Filters::default())
            .unwrap()
            .iter()
            .all(|s| reader.doc_id_of(s.rowid).unwrap().is_some()),
        "deleted documents are gone from the index"
    );
}

#[test]
fn filters_by_type_and_document_hold_on_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let scope = dir.path();
    write(
        scope,
        (0..30).map(|n| document(n, ["POLICY", "GUIDE", "GENERAL"][n % 3], "words")),
    );
    sync(scope);
    let reader = Store::open_read(scope).unwrap();
    let types = Filters {
        doc_types: vec!["POLICY".into(), "GUIDE".into()],
        doc_ids: None,
    };
    assert_same_matches(&reader, &types);
    let named = Filters {
        doc_types: Vec::new(),
        doc_ids: Some(vec![
            kts_record::scope_path::doc_id("doc-004.md"),
            kts_record::scope_path::doc_id("doc-017.md"),
        ]),
    };
    let hits = reader.search_bm25("note", 100, &named).unwrap();
    assert_eq!(hits.len(), 6);
    assert_same_matches(&reader, &named);
}

/// A synced scope of 20 notes, then 5 of them changed and not yet synced;
/// returns a copy of the store as it is then (changes pending, generation 1;
/// no connection is open, so the database is one file), kept beside `scope`.
fn changes_pending(scope: &Path) -> std::path::PathBuf {
    write(scope, (0..20).map(|n| document(n, "GENERAL", "first")));
    sync(scope);
    write(
        scope,
        (0..5).map(|n| document(n, "GENERAL", "changed text")),
    );
    let saved = scope.join("saved.db");
    std::fs::copy(scope.join(".kts/kts.db"), &saved).unwrap();
    saved
}

/// The index is current and holds the changes of [`changes_pending`].
fn assert_changes_indexed(scope: &Path) {
    let reader = Store::open_read(scope).unwrap();
    assert_same_matches(&reader, &Filters::default());
    assert_eq!(
        reader
            .search_bm25("changed", 100, &Filters::default())
            .unwrap()
            .len(),
        15
    );
}

#[test]
fn a_write_cut_off_between_its_two_commits_is_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let scope = dir.path();
    let saved = changes_pending(scope);
    sync(scope);
    // Cut off after the index committed generation 2, before the store recorded it.
    std::fs::rename(&saved, scope.join(".kts/kts.db")).unwrap();
    assert_eq!(
        Store::open_read(scope).unwrap().lexical_state().unwrap(),
        LexicalState::Stale
    );
    assert_eq!(sync(scope), Synced::Updated { rows: 30 });
    assert_changes_indexed(scope);
}

#[test]
fn a_write_cut_off_inside_the_index_commit_is_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let scope = dir.path();
    let saved_db = changes_pending(scope);
    let index = lexical_index_dir(scope);
    let before = files(&index);
    sync(scope);
    // Cut off after the index wrote its new files (deletion bitsets named by
    // the operation's number among them), before it replaced meta.json: the
    // files of before are back, the new ones stay, and the index's list of
    // its own files names both. The same operations, run again, must not
    // trip over the files they left.
    let managed = |files: &[(String, Vec<u8>)]| -> Vec<String> {
        let (_, json) = files
            .iter()
            .find(|(name, _)| name == ".managed.json")
            .unwrap();
        serde_json::from_slice(json).unwrap()
    };
    let mut both = managed(&before);
    both.extend(managed(&files(&index)));
    for (name, bytes) in &before {
        std::fs::write(index.join(name), bytes).unwrap();
    }
    std::fs::write(
        index.join(".managed.json"),
        serde_json::to_vec(&both).unwrap(),
    )
    .unwrap();
    std::fs::rename(&saved_db, scope.join(".kts/kts.db")).unwrap();

    assert!(matches!(sync(scope), Synced::Updated { .. }));
    assert_changes_indexed(scope);
}

/// Every file in `dir`, by name, with its bytes.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect()
}

#[test]
fn a_damaged_index_is_not_used_and_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let scope = dir.path();
    write(scope, (0..10).map(|n| document(n, "GENERAL", "words")));
    sync(scope);
    std::fs::write(lexical_index_dir(scope).join("meta.json"), b"{ not json").unwrap();
    let reader = Store::open_read(scope).unwrap();
    assert!(matches!(
        reader.lexical_state().unwrap(),
        LexicalState::Unreadable(_)
    ));
    assert_eq!(
        reader.search_bm25("vpn", 10, &Filters::default()).unwrap(),
        reader.search_fts5("vpn", 10, &Filters::default()).unwrap()
    );
    assert_eq!(sync(scope), Synced::Rebuilt { rows: 30 });
    assert_same_matches(&Store::open_read(scope).unwrap(), &Filters::default());
}

/// Overwrites a share of the bytes of the index files with this extension.
fn damage(scope: &Path, extension: &str, share: usize) {
    let mut random = fastrand::Rng::with_seed(1);
    for entry in std::fs::read_dir(lexical_index_dir(scope)).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == extension) {
            let mut bytes = std::fs::read(&path).unwrap();
            for _ in 0..(bytes.len() * share / 100).max(1) {
                let at = random.usize(..bytes.len());
                bytes[at] = random.u8(..);
            }
            std::fs::write(&path, bytes).unwrap();
        }
    }
}

/// BM25 on `reader` falls back to FTS5, which the state says, naming the folder.
fn assert_falls_back(reader: &Store, scope: &Path) {
    for question in QUESTIONS {
        assert_eq!(
            reader
                .search_bm25(question, 10, &Filters::default())
                .unwrap(),
            reader
                .search_fts5(question, 10, &Filters::default())
                .unwrap(),
            "{question}"
        );
    }
    match reader.lexical_state().unwrap() {
        LexicalState::Unreadable(why) => assert!(
            why.contains(&lexical_index_dir(scope).display().to_string()),
            "{why}"
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn damaged_postings_are_not_used_and_are_rebuilt_even_with_nothing_changed() {
    let dir = tempfile::tempdir().unwrap();
    let scope = dir.path();
    write(scope, (0..40).map(|n| document(n, "GENERAL", "words")));
    sync(scope);
    damage(scope, "idx", 100);
    assert_falls_back(&Store::open_read(scope).unwrap(), scope);
    assert_eq!(sync(scope), Synced::Rebuilt { rows: 120 });
    assert_same_matches(&Store::open_read(scope).unwrap(), &Filters::default());

    damage(scope, "idx", 2);
    write(scope, [document(1, "GENERAL", "changed text")]);
    assert!(
        matches!(sync(scope), Synced::Rebuilt { .. }),
        "a change on a damaged index"
    );
    assert_same_matches(&Store::open_read(scope).unwrap(), &Filters::default());
}

#[test]
fn damaged_field_norms_are_found_when_a_reader_opens_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let scope = dir.path();
    write(scope, (0..40).map(|n| document(n, "GENERAL", "words")));
    sync(scope);
    damage(scope, "fieldnorm", 2);
    assert_falls_back(&Store::open_read(scope).unwrap(), scope);
    assert_eq!(sync(scope), Synced::Rebuilt { rows: 120 });
}

#[test]
fn after_most_documents_are_deleted_bm25_scores_as_a_fresh_index_does() {
    let dir = tempfile::tempdir().unwrap();
    let (scope, fresh) = (dir.path().join("updated"), dir.path().join("fresh"));
    for folder in [&scope, &fresh] {
        std::fs::create_dir(folder).unwrap();
    }
    let notes = |range: std::ops::Range<usize>| range.map(|n| document(n, "GENERAL", "words"));
    write(&scope, notes(0..50));
    sync(&scope);
    let mut store = Store::open_writer(&scope, LockWait::NoWait).unwrap();
    store.begin().unwrap();
    for n in 5..50 {
        store.delete_path(&format!("doc-{n:03}.md")).unwrap();
    }
    store.commit().unwrap();
    store.refresh_lexical_index().unwrap();
    drop(store);
    write(&fresh, notes(0..5));
    sync(&fresh);

    let (updated, fresh) = (
        Store::open_read(&scope).unwrap(),
        Store::open_read(&fresh).unwrap(),
    );
    for question in QUESTIONS {
        let scores = |store: &Store| -> Vec<(String, String)> {
            let hits = store
                .search_bm25(question, 20, &Filters::default())
                .unwrap();
            let found = store.fetch_hits(&rowids(&hits)).unwrap();
            found
                .iter()
                .zip(&hits)
                .map(|(hit, scored)| (hit.chunk_id.clone(), format!("{:.4}", scored.score)))
                .collect()
        };
        assert_eq!(scores(&updated), scores(&fresh), "{question}");
    }
}

#[test]
fn a_hyphenated_question_word_finds_the_word_written_whole_in_both_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let scope = dir.path();
    write(
        scope,
        (0..4).map(|n| document(n, "GENERAL", "the office wifi")),
    );
    sync(scope);
    let reader = Store::open_read(scope).unwrap();
    assert_eq!(reader.lexical_state().unwrap(), LexicalState::Current);
    let lexical = reader
        .search_bm25("Wi-Fi", 100, &Filters::default())
        .unwrap();
    let fts5 = reader
        .search_fts5("Wi-Fi", 100, &Filters::default())
        .unwrap();
    assert_eq!(lexical.len(), 12, "every chunk says wifi");
    assert_eq!(rowids(&lexical).len(), rowids(&fts5).len());
}

#[test]
fn rarities_are_the_same_from_the_index_and_from_fts5() {
    let dir = tempfile::tempdir().unwrap();
    let scope = dir.path();
    write(scope, (0..20).map(|n| document(n, "GENERAL", "first")));
    let words: Vec<String> = ["vpn", "Cafés", "part", "monitor", "the"]
        .map(String::from)
        .to_vec();
    let from_fts5 = Store::open_read(scope).unwrap().rarities(&words).unwrap();
    sync(scope);
    let reader = Store::open_read(scope).unwrap();
    assert_eq!(reader.lexical_state().unwrap(), LexicalState::Current);
    let from_index = reader.rarities(&words).unwrap();
    for (a, b) in from_fts5.iter().zip(&from_index) {
        assert!((a - b).abs() < 1e-9, "{from_fts5:?} against {from_index:?}");
    }
    let [vpn, cafe, part, monitor, _] = from_index[..] else {
        panic!("one rarity per word: {from_index:?}");
    };
    assert!(part < vpn, "every chunk says part: {from_index:?}");
    assert!(cafe < monitor && vpn < monitor, "Cafés is found as café");
    let chunks = 60.0f64;
    assert!(
        (monitor - (1.0 + (chunks + 0.5) / 0.5).ln()).abs() < 1e-9,
        "a word no chunk says is the rarest: {monitor}"
    );
}
