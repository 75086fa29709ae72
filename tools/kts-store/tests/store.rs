//! The store's contract: whole documents, model guard, safe queries, filters.

use std::path::Path;

use kts_record::scope_path::doc_id;
use kts_store::{Applied, ChunkRow, DocumentRow, Filters, LockWait, ModelMismatch, Store};

fn doc(id: &str, path: &str, doc_type: &str) -> DocumentRow {
    DocumentRow {
        doc_id: id.into(),
        path: path.into(),
        title: format!("Title of {path}"),
        doc_type: doc_type.into(),
        source_sha256: Some(format!("sha-{id}")),
        metadata: serde_json::json!({}),
        ..Default::default()
    }
}

fn unit(seed: usize, dims: usize) -> Vec<f32> {
    let v: Vec<f32> = (0..dims)
        .map(|i| ((i * 7 + seed * 13) % 11) as f32 - 5.0)
        .collect();
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / n).collect()
}

fn chunk(id: &str, index: usize, text: &str, embedding: Option<Vec<f32>>) -> ChunkRow {
    ChunkRow {
        chunk_id: id.into(),
        index,
        text: text.into(),
        heading_path: vec!["Top".into()],
        end: text.chars().count(),
        model: embedding.as_ref().map(|_| "test-model".into()),
        embedding,
        ..Default::default()
    }
}

#[test]
fn documents_are_replaced_whole_and_deleted_whole() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open_writer(dir.path(), LockWait::NoWait).unwrap();
    let d = doc(&doc_id("a.md"), "a.md", "POLICY");
    let chunks = vec![
        chunk("c1", 0, "annual leave is 25 days", Some(unit(1, 8))),
        chunk("c2", 1, "sick leave needs a call", Some(unit(2, 8))),
    ];
    store.begin().unwrap();
    assert_eq!(store.apply(&d, &chunks).unwrap(), Applied::Added);
    assert_eq!(store.apply(&d, &chunks).unwrap(), Applied::Unchanged);
    store.commit().unwrap();
    assert_eq!(store.counts().unwrap(), (1, 2));

    store.begin().unwrap();
    let fewer = vec![chunk("c3", 0, "leave rules changed", Some(unit(3, 8)))];
    assert_eq!(store.apply(&d, &fewer).unwrap(), Applied::Updated);
    store.commit().unwrap();
    assert_eq!(store.counts().unwrap(), (1, 1));
    assert!(
        store
            .search_bm25("annual", 10, &Filters::default())
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store
            .search_bm25("changed", 10, &Filters::default())
            .unwrap()
            .len(),
        1
    );

    std::fs::create_dir_all(dir.path().join(".kts/documents").join(doc_id("a.md"))).unwrap();
    store.begin().unwrap();
    assert!(store.delete_path("a.md").unwrap());
    store.commit().unwrap();
    assert_eq!(store.counts().unwrap(), (0, 0));
    assert!(
        !dir.path()
            .join(".kts/documents")
            .join(doc_id("a.md"))
            .exists()
    );
    let vec_rows: i64 = store
        .connection()
        .query_row("SELECT count(*) FROM chunks_vec", [], |r| r.get(0))
        .unwrap();
    assert_eq!(vec_rows, 0);
}

#[test]
fn a_part_whose_file_changed_around_it_is_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open_writer(dir.path(), LockWait::NoWait).unwrap();
    let message = |file_sha: &str, text: &str| {
        let path = "box.mbox#message/1";
        let row = DocumentRow {
            source_sha256: Some(file_sha.into()),
            metadata: serde_json::json!({"parent": "box.mbox", "source_sha256": file_sha}),
            ..doc(&doc_id(path), path, "GENERAL")
        };
        // A chunk id follows the text, as kts-chunk's do.
        (row, vec![chunk(text, 0, text, Some(unit(1, 8)))])
    };
    store.begin().unwrap();
    let (first, chunks) = message("sha-of-one-message", "the first message");
    assert_eq!(store.apply(&first, &chunks).unwrap(), Applied::Added);
    let (appended_to, chunks) = message("sha-of-two-messages", "the first message");
    assert_eq!(
        store.apply(&appended_to, &chunks).unwrap(),
        Applied::Unchanged
    );
    assert_eq!(
        store.source_sha256(&first.doc_id).unwrap(),
        Some(Some("sha-of-two-messages".into())),
        "the stored hash is the file's new one"
    );
    assert_eq!(
        store.apply(&appended_to, &chunks).unwrap(),
        Applied::Unchanged
    );
    let (edited, chunks) = message("sha-of-an-edit", "the first message, edited");
    assert_eq!(store.apply(&edited, &chunks).unwrap(), Applied::Updated);

    let file = doc(&doc_id("a.md"), "a.md", "GENERAL");
    let chunks = vec![chunk("a1", 0, "text", Some(unit(2, 8)))];
    assert_eq!(store.apply(&file, &chunks).unwrap(), Applied::Added);
    let resaved = DocumentRow {
        source_sha256: Some("sha-of-new-bytes".into()),
        ..file.clone()
    };
    assert_eq!(
        store.apply(&resaved, &chunks).unwrap(),
        Applied::Updated,
        "a file with new bytes is updated"
    );
    store.commit().unwrap();
}

#[test]
fn another_model_is_refused_with_the_reindex_advice() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open_writer(dir.path(), LockWait::NoWait).unwrap();
    store.begin().unwrap();
    store
        .apply(
            &doc("d1", "a.md", "GUIDE"),
            &[chunk("c1", 0, "x", Some(unit(1, 8)))],
        )
        .unwrap();
    store.commit().unwrap();
    let mut other = chunk("c2", 0, "y", Some(unit(2, 8)));
    other.model = Some("other-model".into());
    store.begin().unwrap();
    let err = store
        .apply(&doc("d2", "b.md", "GUIDE"), &[other])
        .unwrap_err();
    assert!(err.downcast_ref::<ModelMismatch>().is_some());
    assert!(err.to_string().contains("--reindex"), "{err}");
    store.rollback().unwrap();
    assert_eq!(
        store.meta().unwrap().model_id.as_deref(),
        Some("test-model")
    );
}

#[test]
fn embedded_and_keyword_only_documents_never_share_a_store() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open_writer(dir.path(), LockWait::NoWait).unwrap();
    store.begin().unwrap();
    let half_embedded = [
        chunk("c1", 0, "x", Some(unit(1, 8))),
        chunk("c2", 1, "y", None),
    ];
    let err = store
        .apply(&doc("d1", "a.md", "GUIDE"), &half_embedded)
        .unwrap_err();
    assert!(
        err.to_string().contains("chunk c2 has no embedding"),
        "{err}"
    );
    assert_eq!(store.meta().unwrap().model_id, None, "no model set by it");
    let bare = [chunk("c3", 0, "z", None)];
    store
        .apply(&doc("d2", "b.md", "GUIDE"), &bare)
        .expect("a store without vectors takes chunks without embeddings");
    let embedded = [chunk("c1", 0, "x", Some(unit(1, 8)))];
    let err = store
        .apply(&doc("d1", "a.md", "GUIDE"), &embedded)
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("is keyword-only (1 other documents without vectors)"),
        "{err}"
    );
    assert_eq!(store.meta().unwrap().model_id, None, "no model set by it");
    store
        .apply(&doc("d2", "b.md", "GUIDE"), &embedded)
        .expect("a document replacing the only keyword-only one brings the first vectors");
    let err = store.apply(&doc("d3", "c.md", "GUIDE"), &bare).unwrap_err();
    assert!(
        err.to_string()
            .contains("holds vectors of model test-model: run kts-embed"),
        "{err}"
    );
    store.commit().unwrap();
    assert_eq!(store.counts().unwrap(), (1, 1));
}

#[test]
fn the_same_model_id_with_other_weights_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open_writer(dir.path(), LockWait::NoWait).unwrap();
    let with_weights = |id: &str, sha: &str| {
        let mut c = chunk(id, 0, "x", Some(unit(1, 8)));
        c.model_sha256 = Some(sha.into());
        c
    };
    store.begin().unwrap();
    store
        .apply(&doc("d1", "a.md", "GUIDE"), &[with_weights("c1", "aaaa")])
        .unwrap();
    store.commit().unwrap();
    assert_eq!(store.meta().unwrap().model_sha256.as_deref(), Some("aaaa"));
    store.begin().unwrap();
    let err = store
        .apply(&doc("d2", "b.md", "GUIDE"), &[with_weights("c2", "bbbb")])
        .unwrap_err();
    assert!(err.downcast_ref::<ModelMismatch>().is_some());
    let message = err.to_string();
    assert!(
        message.contains("aaaa") && message.contains("bbbb"),
        "{message}"
    );
    let unknown_weights = chunk("c3", 0, "y", Some(unit(2, 8)));
    store
        .apply(&doc("d3", "c.md", "GUIDE"), &[unknown_weights])
        .expect("a record that does not say its weights is not refused");
    store.commit().unwrap();
}

#[test]
fn searches_filter_by_doc_type_and_accept_any_text() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open_writer(dir.path(), LockWait::NoWait).unwrap();
    store.begin().unwrap();
    for (i, doc_type) in ["POLICY", "GUIDE"].iter().enumerate() {
        let d = doc(&format!("d{i}"), &format!("{i}.md"), doc_type);
        let c = chunk(&format!("c{i}"), 0, "reset the VPN token", Some(unit(i, 8)));
        store.apply(&d, &[c]).unwrap();
    }
    store.commit().unwrap();
    let reader = Store::open_read(dir.path()).unwrap();
    let all = reader
        .search_bm25("\"VPN\" AND (NEAR* ^reset", 10, &Filters::default())
        .unwrap();
    assert_eq!(all.len(), 2);
    let guides = Filters::doc_type("GUIDE");
    let hits = reader.search_bm25("vpn", 10, &guides).unwrap();
    assert_eq!(hits.len(), 1);
    let hit = &reader.fetch_hits(&[hits[0].rowid]).unwrap()[0];
    assert_eq!(hit.doc_type, "GUIDE");
    let near = reader.search_vector(&unit(0, 8), 10, &guides).unwrap();
    assert_eq!(near.len(), 1);
    let nearest = reader
        .search_vector(&unit(0, 8), 1, &Filters::default())
        .unwrap();
    assert!((nearest[0].score - 1.0).abs() < 1e-5, "{nearest:?}");
}

#[test]
fn searches_filter_by_several_types_and_by_document() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open_writer(dir.path(), LockWait::NoWait).unwrap();
    store.begin().unwrap();
    for (i, doc_type) in ["POLICY", "GUIDE", "FAQ", "GUIDE"].iter().enumerate() {
        let d = doc(&format!("d{i}"), &format!("{i}.md"), doc_type);
        let c = chunk(&format!("c{i}"), 0, "reset the VPN token", Some(unit(i, 8)));
        store.apply(&d, &[c]).unwrap();
    }
    store.commit().unwrap();
    let docs_of = |reader: &Store, hits: Vec<kts_store::Scored>| -> Vec<String> {
        let rowids: Vec<i64> = hits.iter().map(|h| h.rowid).collect();
        let mut docs: Vec<String> = reader
            .fetch_hits(&rowids)
            .unwrap()
            .into_iter()
            .map(|h| h.doc_id)
            .collect();
        docs.sort();
        docs
    };
    let types = Filters {
        doc_types: vec!["FAQ".into(), "POLICY".into()],
        doc_ids: None,
    };
    let named = Filters {
        doc_types: vec!["GUIDE".into()],
        doc_ids: Some(vec!["d1".into(), "d2".into()]),
    };
    // The vector search reads sqlite-vec until kts-index writes vectors.bin, then the file.
    for with_vector_file in [false, true] {
        if with_vector_file {
            assert!(store.refresh_vector_file().unwrap());
        }
        let reader = Store::open_read(dir.path()).unwrap();
        assert_eq!(
            docs_of(&reader, reader.search_bm25("vpn", 10, &types).unwrap()),
            ["d0", "d2"]
        );
        assert_eq!(
            docs_of(
                &reader,
                reader.search_vector(&unit(0, 8), 10, &types).unwrap()
            ),
            ["d0", "d2"]
        );
        // Documents named and of the type: d1 only.
        assert_eq!(
            docs_of(&reader, reader.search_bm25("vpn", 10, &named).unwrap()),
            ["d1"]
        );
        let near = reader.search_vector(&unit(1, 8), 10, &named).unwrap();
        assert_eq!(docs_of(&reader, near.clone()), ["d1"]);
        assert!((near[0].score - 1.0).abs() < 1e-5, "exact cosine: {near:?}");
    }
}

#[test]
fn a_second_writer_is_refused_while_the_first_holds_the_lock() {
    let dir = tempfile::tempdir().unwrap();
    let first = Store::open_writer(dir.path(), LockWait::NoWait).unwrap();
    let err = Store::open_writer(dir.path(), LockWait::NoWait)
        .err()
        .unwrap();
    assert!(err.downcast_ref::<kts_store::Locked>().is_some());
    drop(first);
    Store::open_writer(dir.path(), LockWait::NoWait).unwrap();
}

#[test]
fn a_writer_never_creates_the_scope_folder() {
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("removed-scope");
    let err = Store::open_writer(&gone, LockWait::NoWait).err().unwrap();
    assert!(
        format!("{err:#}").contains(&format!("the scope folder {} is not there", gone.display())),
        "{err:#}"
    );
    assert!(!gone.exists());
}

#[test]
fn readers_get_clear_messages_when_there_is_no_index() {
    let dir = tempfile::tempdir().unwrap();
    let err = Store::open_read(dir.path()).err().unwrap().to_string();
    assert!(
        err.starts_with("no index at") && err.contains("kts-index"),
        "{err}"
    );
    std::fs::create_dir(dir.path().join(".kts")).unwrap();
    std::fs::write(dir.path().join(".kts/kts.db"), "").unwrap();
    let err = Store::open_read(dir.path()).err().unwrap().to_string();
    assert!(err.starts_with("no index yet at"), "{err}");
}

#[test]
fn a_damaged_database_is_named_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open_writer(dir.path(), LockWait::NoWait).unwrap();
    store.begin().unwrap();
    let chunks = vec![chunk("c1", 0, "annual leave is 25 days", None)];
    store
        .apply(&doc(&doc_id("a.md"), "a.md", "POLICY"), &chunks)
        .unwrap();
    store.commit().unwrap();
    drop(store);
    let db = dir.path().join(".kts/kts.db");
    let mut bytes = std::fs::read(&db).unwrap();
    bytes[100..].fill(0xa5);
    std::fs::write(&db, bytes).unwrap();
    for err in [
        Store::open_read(dir.path()).err().unwrap(),
        Store::open_writer(dir.path(), LockWait::NoWait)
            .err()
            .unwrap(),
    ] {
        let err = format!("{err:#}");
        assert!(
            err.starts_with(&format!("{} cannot be read", db.display()))
                && err.contains("move it aside to rebuild the scope"),
            "{err}"
        );
    }
}

#[test]
fn a_full_disk_is_named_with_what_to_do() {
    let full =
        rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_FULL), None);
    let err = kts_store::with_remedy(Path::new("/data/s"), anyhow::Error::new(full));
    assert!(
        err.to_string()
            .starts_with("the disk holding /data/s/.kts is full")
            && err.to_string().contains("free some space and run again"),
        "{err}"
    );
    let io = std::io::Error::from(std::io::ErrorKind::StorageFull);
    let err = kts_store::with_remedy(Path::new("/data/s"), anyhow::Error::new(io));
    assert!(err.to_string().contains("/data/s/.kts is full"), "{err}");
}

#[test]
fn words_are_found_however_they_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open_writer(dir.path(), LockWait::NoWait).unwrap();
    store.begin().unwrap();
    let texts = [
        "東京都の天気は晴れです",
        "Die Stra\u{00DF}e nach Zu\u{0308}rich",
        "BİLGİ İŞLEM ＶＰＮ ﬁnancial docu\u{00AD}mentation",
        "मुख्य कार्यालय",
    ];
    for (i, text) in texts.iter().enumerate() {
        let d = doc(&format!("d{i}"), &format!("{i}.md"), "GUIDE");
        store
            .apply(&d, &[chunk(&format!("c{i}"), 0, text, None)])
            .unwrap();
    }
    let named = doc("d9", "runbooks/failover-drill.md", "GUIDE");
    store
        .apply(&named, &[chunk("c9", 0, "Steps follow.", None)])
        .unwrap();
    store.commit().unwrap();
    drop(store);
    let found = |question: &str| -> Vec<String> {
        let reader = Store::open_read(dir.path()).unwrap();
        let hits = reader
            .search_bm25(question, 10, &Filters::default())
            .unwrap();
        let rowids: Vec<i64> = hits.iter().map(|h| h.rowid).collect();
        let mut paths: Vec<String> = reader
            .fetch_hits(&rowids)
            .unwrap()
            .into_iter()
            .map(|h| h.path)
            .collect();
        paths.sort();
        paths
    };
    let all_forms = |paths: &[&str]| {
        for (question, path) in [
            ("天気", "0.md"),
            ("strasse zürich", "1.md"),
            ("bilgi islem vpn financial documentation", "2.md"),
            ("मुख्य", "3.md"),
            // A file is found by its name and folder's words.
            ("failover drill runbook", "runbooks/failover-drill.md"),
        ] {
            assert_eq!(found(question), [path], "{question} in {paths:?}");
        }
    };
    all_forms(&["written now"]);

    // A store cut by the earlier analysis is re-cut by its next writer.
    let conn = rusqlite::Connection::open(dir.path().join(".kts/kts.db")).unwrap();
    conn.execute_batch(
        "DROP TABLE chunks_fts;
         CREATE VIRTUAL TABLE chunks_fts USING fts5(text, title, headings, content = '',
             contentless_delete = 1, tokenize = 'porter unicode61 remove_diacritics 2');
         INSERT INTO chunks_fts (rowid, text, title, headings) SELECT id, text, '', '' FROM chunks;
         DELETE FROM meta WHERE key = 'word_analysis';",
    )
    .unwrap();
    drop(conn);
    assert!(found("天気").is_empty());
    drop(Store::open_writer(dir.path(), LockWait::NoWait).unwrap());
    all_forms(&["re-cut"]);
}

#[test]
fn document_types_are_read_from_an_index_not_the_documents() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open_writer(dir.path(), LockWait::NoWait).unwrap();
    store.begin().unwrap();
    for (i, doc_type) in ["GUIDE", "SOP", "GUIDE"].iter().enumerate() {
        let d = doc(&format!("d{i}"), &format!("{i}.md"), doc_type);
        store
            .apply(&d, &[chunk(&format!("c{i}"), 0, "Text.", None)])
            .unwrap();
    }
    store.commit().unwrap();
    assert_eq!(store.doc_types().unwrap(), ["GUIDE", "SOP"]);
    let conn = rusqlite::Connection::open(dir.path().join(".kts/kts.db")).unwrap();
    let plan: String = conn
        .query_row(
            "EXPLAIN QUERY PLAN SELECT DISTINCT doc_type FROM documents ORDER BY doc_type",
            [],
            |r| r.get(3),
        )
        .unwrap();
    assert!(plan.contains("documents_by_type"), "{plan}");
}

#[test]
fn a_document_the_full_disk_refuses_is_a_database_failure() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open_writer(dir.path(), LockWait::NoWait).unwrap();
    store.begin().unwrap();
    let small = doc(&doc_id("a.md"), "a.md", "POLICY");
    store
        .apply(&small, &[chunk("a1", 0, "a short text", None)])
        .unwrap();
    let pages: i64 = store
        .connection()
        .query_row("PRAGMA page_count", [], |r| r.get(0))
        .unwrap();
    store
        .connection()
        .execute_batch(&format!("PRAGMA max_page_count = {}", pages + 2))
        .unwrap();
    let big = doc(&doc_id("b.md"), "b.md", "POLICY");
    let chunks: Vec<ChunkRow> = (0..50)
        .map(|i| {
            chunk(
                &format!("b{i}"),
                i,
                &"words that fill pages ".repeat(400),
                None,
            )
        })
        .collect();
    let err = store.apply(&big, &chunks).unwrap_err();
    assert!(kts_store::is_database_failure(&err), "{err:#}");
}
