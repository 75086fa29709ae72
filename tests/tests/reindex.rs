//! The batch reindexing of a knowledge root (`pipelines/reindex.mk`), on a
//! root of small scopes the test writes itself: keyword-only indexes
//! (EMBED=0) with their graphs, the binaries of this build.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::SystemTime;

use serde_json::Value;

/// Scope folder → its documents (path, text). Each text has one word found
/// nowhere else.
const SCOPES: [(&str, &[(&str, &str)]); 3] = [
    (
        "alpha",
        &[
            (
                "leave.md",
                "# Leave policy\n\nAnnual leave is booked in the portal. The marmoset rule applies.\n",
            ),
            (
                "notes/travel.md",
                "# Travel\n\nBook trains before flights. Receipts go to the wombat mailbox.\n",
            ),
        ],
    ),
    (
        "Beta Team - EMEA",
        &[
            (
                "oncall.md",
                "# On-call\n\nThe pager rotates weekly. Escalate to the narwhal channel.\n",
            ),
            (
                "deploy.txt",
                "Deployments happen on Tuesdays after the axolotl review.\n",
            ),
        ],
    ),
    (
        "gamma_2006_HE1",
        &[(
            "report.md",
            "# Remittance report\n\nThe pool balance fell. Trigger event: pangolin.\n",
        )],
    ),
];

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn knowledge_root() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    for (scope, docs) in SCOPES {
        for (path, text) in docs {
            write(&root.path().join(scope).join(path), text);
        }
    }
    root
}

/// `make -f pipelines/reindex.mk ROOT=... -j2`, keyword-only, with the graph.
fn reindex(root: &Path) -> Output {
    let makefile = kts_tests::workspace_root().join("pipelines/reindex.mk");
    kts_tests::shell(&format!(
        "make -f '{}' ROOT='{}' BIN='{}' EMBED=0 GRAPH=1 -j2",
        makefile.display(),
        root.display(),
        kts_tests::profile_dir().display()
    ))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The summary line of the last run: "reindex ROOT: 3 scopes in ... s: ...".
fn summary(root: &Path) -> String {
    std::fs::read_to_string(root.join(".kts-reindex/summary.txt")).expect("the run wrote a summary")
}

/// `(result, folder)` of each scope in the last run, sorted by folder.
fn results(root: &Path) -> Vec<(String, String)> {
    let tsv = std::fs::read_to_string(root.join(".kts-reindex/results.tsv")).unwrap();
    let mut rows: Vec<(String, String)> = tsv
        .lines()
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            assert_eq!(fields.len(), 5, "result line: {line:?}");
            (fields[0].to_string(), fields[2].to_string())
        })
        .collect();
    rows.sort_by(|a, b| a.1.cmp(&b.1));
    rows
}

fn expect_results(root: &Path, expected: &[(&str, &str)]) {
    let mut expected: Vec<(String, String)> = expected
        .iter()
        .map(|(r, f)| (r.to_string(), f.to_string()))
        .collect();
    expected.sort_by(|a, b| a.1.cmp(&b.1));
    assert_eq!(results(root), expected, "summary:\n{}", summary(root));
}

/// The paths of the documents `kts-query SCOPE WORD --mode bm25` finds.
fn found(scope: &Path, word: &str) -> Vec<String> {
    let output = kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-query '{}' '{word}' --mode bm25",
        scope.display()
    )));
    text(&output.stdout)
        .lines()
        .map(|line| {
            let hit: Value = serde_json::from_str(line).unwrap();
            hit["path"].as_str().unwrap().to_string()
        })
        .collect()
}

fn modified(path: &Path) -> SystemTime {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .modified()
        .unwrap()
}

/// What shows that a scope was (or was not) written: its store and its stamps.
fn written(scope: &Path) -> [SystemTime; 3] {
    let kts = scope.join(".kts");
    [
        modified(&kts.join("kts.db")),
        modified(&kts.join("cache/index.stamp")),
        modified(&kts.join("cache/graph.stamp")),
    ]
}

fn scope_dirs(root: &Path) -> Vec<PathBuf> {
    SCOPES.iter().map(|(name, _)| root.join(name)).collect()
}

#[test]
fn a_knowledge_root_is_reindexed_incrementally_scope_by_scope() {
    let root = knowledge_root();
    let root = root.path();
    let [alpha, beta, gamma] = <[PathBuf; 3]>::try_from(scope_dirs(root)).unwrap();

    // First run: every scope is indexed, with its graph.
    let run = reindex(root);
    assert!(
        run.status.success(),
        "{}{}",
        text(&run.stdout),
        text(&run.stderr)
    );
    expect_results(
        root,
        &[
            ("reindexed", "alpha"),
            ("reindexed", "Beta Team - EMEA"),
            ("reindexed", "gamma_2006_HE1"),
        ],
    );
    assert!(
        summary(root).contains(": 3 scopes in "),
        "{}",
        summary(root)
    );
    assert!(text(&run.stdout).contains("3 reindexed, 0 unchanged, 0 failed"));
    // The root's catalog is built once, for routing questions.
    assert!(
        summary(root).contains("kts-catalog: 3 scopes cataloged"),
        "{}",
        summary(root)
    );
    assert!(root.join(".kts-catalog.db").is_file());
    assert_eq!(found(&alpha, "marmoset"), ["leave.md"]);
    assert_eq!(found(&alpha, "wombat"), ["notes/travel.md"]);
    assert_eq!(found(&beta, "axolotl"), ["deploy.txt"]);
    assert_eq!(found(&gamma, "pangolin"), ["report.md"]);
    assert!(found(&gamma, "marmoset").is_empty(), "scopes stay apart");
    for scope in [&alpha, &beta, &gamma] {
        let log = std::fs::read_to_string(scope.join(".kts/cache/reindex.log")).unwrap();
        assert!(log.contains("kts-index: "), "{log}");
        assert!(log.contains("kts-graph: "), "{log}");
        assert!(
            !log.contains("jobserver"),
            "the sub-make gets make's job slots: {log}"
        );
    }

    // Nothing changed: nothing is written, and no stage even starts (one
    // kts-crawl finds that the scopes have nothing to do: their logs stay).
    let before: Vec<_> = [&alpha, &beta, &gamma].map(|s| written(s)).to_vec();
    let log_times = || [&alpha, &beta, &gamma].map(|s| modified(&s.join(".kts/cache/reindex.log")));
    let logs = log_times();
    let run = reindex(root);
    assert!(run.status.success(), "{}", text(&run.stderr));
    expect_results(
        root,
        &[
            ("unchanged", "alpha"),
            ("unchanged", "Beta Team - EMEA"),
            ("unchanged", "gamma_2006_HE1"),
        ],
    );
    assert!(summary(root).contains("0 reindexed, 3 unchanged, 0 failed"));
    assert!(!summary(root).contains("kts-catalog"), "built only once");
    let after: Vec<_> = [&alpha, &beta, &gamma].map(|s| written(s)).to_vec();
    assert_eq!(before, after, "a run with nothing to do wrote a store");
    assert_eq!(
        log_times(),
        logs,
        "a scope with nothing to do ran its stages"
    );

    // A file touched, not changed: still nothing to do.
    let leave = alpha.join("leave.md");
    std::fs::File::options()
        .append(true)
        .open(&leave)
        .unwrap()
        .set_modified(SystemTime::now())
        .unwrap();
    let run = reindex(root);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(summary(root).contains("0 reindexed, 3 unchanged, 0 failed"));
    assert_eq!(log_times(), logs);

    // One file changed: that scope only, and the new text is found.
    write(
        &beta.join("oncall.md"),
        "# On-call\n\nThe pager rotates weekly. Escalate to the quetzal channel.\n",
    );
    let untouched = [written(&alpha), written(&gamma)];
    let quiet = kts_tests::succeeded(kts_tests::shell(&format!(
        "printf 'alpha\\nBeta Team - EMEA\\ngamma_2006_HE1\\nnot-a-scope\\n' \
         | kts-crawl '{}' --unchanged-scopes",
        root.display()
    )));
    assert_eq!(text(&quiet.stdout), "alpha\ngamma_2006_HE1\n");
    let run = reindex(root);
    assert!(run.status.success(), "{}", text(&run.stderr));
    expect_results(
        root,
        &[
            ("unchanged", "alpha"),
            ("reindexed", "Beta Team - EMEA"),
            ("unchanged", "gamma_2006_HE1"),
        ],
    );
    assert!(
        summary(root).contains("0 added, 1 updated, 0 deleted"),
        "{}",
        summary(root)
    );
    assert_eq!(found(&beta, "quetzal"), ["oncall.md"]);
    assert!(found(&beta, "narwhal").is_empty(), "the old text is gone");
    assert_eq!([written(&alpha), written(&gamma)], untouched);

    // One file deleted: it leaves the index.
    std::fs::remove_file(alpha.join("notes/travel.md")).unwrap();
    let run = reindex(root);
    assert!(run.status.success(), "{}", text(&run.stderr));
    expect_results(
        root,
        &[
            ("reindexed", "alpha"),
            ("unchanged", "Beta Team - EMEA"),
            ("unchanged", "gamma_2006_HE1"),
        ],
    );
    assert!(
        summary(root).contains("0 added, 0 updated, 1 deleted"),
        "{}",
        summary(root)
    );
    assert!(
        found(&alpha, "wombat").is_empty(),
        "the deleted file is still found"
    );
    assert_eq!(found(&alpha, "marmoset"), ["leave.md"]);

    // A document that cannot be converted is an error record, not a failed
    // scope: the rest of its scope is indexed, and the next run leaves it
    // alone, but the run fails, naming the scope, as long as it is not
    // indexed.
    write(&gamma.join("broken.docx"), "PK\u{3}\u{4} not really a zip");
    write(&gamma.join("extra.md"), "# Extra\n\nThe okapi appendix.\n");
    let not_indexed = "not indexed: gamma_2006_HE1: 1 of its documents";
    let run = reindex(root);
    assert!(!run.status.success(), "{}", text(&run.stderr));
    assert!(
        summary(root).contains("1 added, 0 updated, 0 deleted, 0 unchanged, 1 failed")
            && summary(root).contains(not_indexed),
        "{}",
        summary(root)
    );
    assert_eq!(found(&gamma, "okapi"), ["extra.md"]);
    let index_written = written(&gamma);
    let run = reindex(root);
    assert!(!run.status.success(), "{}", text(&run.stderr));
    assert!(
        summary(root).contains("0 reindexed, 3 unchanged, 0 failed")
            && summary(root).contains(not_indexed),
        "{}",
        summary(root)
    );
    assert_eq!(
        written(&gamma),
        index_written,
        "the document was tried again"
    );
    // Deleted, it no longer counts.
    std::fs::remove_file(gamma.join("broken.docx")).unwrap();
    let run = reindex(root);
    assert!(run.status.success(), "{}", summary(root));

    // A scope whose store is damaged fails; the run goes on with the others
    // and then exits non-zero, naming it.
    let delta = root.join("delta");
    write(&delta.join("a.md"), "# Delta\n\nThe ibis note.\n");
    write(&delta.join(".kts/kts.db"), "this is not an SQLite database");
    write(
        &gamma.join("report.md"),
        "# Remittance report\n\nTrigger event: dugong.\n",
    );
    let run = reindex(root);
    assert!(!run.status.success(), "a failed scope must fail the run");
    expect_results(
        root,
        &[
            ("unchanged", "alpha"),
            ("unchanged", "Beta Team - EMEA"),
            ("failed", "delta"),
            ("reindexed", "gamma_2006_HE1"),
        ],
    );
    let summary = summary(root);
    assert!(
        summary.contains("1 reindexed, 2 unchanged, 1 failed"),
        "{summary}"
    );
    assert!(
        summary.contains("failed: delta: ") && summary.contains("delta/.kts/cache/reindex.log"),
        "{summary}"
    );
    assert!(text(&run.stdout).contains("failed: delta: "));
    assert_eq!(found(&gamma, "dugong"), ["report.md"]);
    assert_eq!(found(&beta, "quetzal"), ["oncall.md"]);
}

#[test]
fn the_script_passes_its_flags_to_the_makefile() {
    let root = knowledge_root();
    let script = kts_tests::workspace_root().join("pipelines/reindex");
    let run = kts_tests::shell(&format!(
        "'{}' '{}' -j 2 --no-embed --no-graph --bin '{}'",
        script.display(),
        root.path().display(),
        kts_tests::profile_dir().display()
    ));
    assert!(
        run.status.success(),
        "{}{}",
        text(&run.stdout),
        text(&run.stderr)
    );
    assert!(text(&run.stdout).contains("3 reindexed, 0 unchanged, 0 failed"));
    let beta = root.path().join("Beta Team - EMEA");
    assert!(beta.join(".kts/cache/index.stamp").is_file());
    assert!(!beta.join(".kts/cache/graph.stamp").exists(), "--no-graph");
    assert!(!beta.join(".kts/cache/embed.jsonl").exists(), "--no-embed");
    assert_eq!(found(&beta, "narwhal"), ["oncall.md"]);

    // With the graph: only kts-graph runs, and each line says so (not the
    // counts of the run that indexed).
    let run = kts_tests::shell(&format!(
        "'{}' '{}' -j 2 --no-embed --bin '{}'",
        script.display(),
        root.path().display(),
        kts_tests::profile_dir().display()
    ));
    assert!(run.status.success(), "{}", text(&run.stderr));
    let stdout = text(&run.stdout);
    assert!(
        stdout.contains("3 reindexed, 0 unchanged, 0 failed"),
        "{stdout}"
    );
    assert!(
        stdout.contains(" s  Beta Team - EMEA  kts-graph: 2 documents extracted")
            && !stdout.contains(" added, "),
        "{stdout}"
    );
}

#[test]
fn the_script_exits_1_while_documents_are_not_indexed_and_2_when_the_root_is_held() {
    let root = knowledge_root();
    let root = root.path();
    write(
        &root.join("alpha/broken.docx"),
        "PK\u{3}\u{4} not really a zip",
    );
    let script = kts_tests::workspace_root().join("pipelines/reindex");
    let run = || {
        kts_tests::shell(&format!(
            "'{}' '{}' -j 2 --no-embed --no-graph --bin '{}'",
            script.display(),
            root.display(),
            kts_tests::profile_dir().display()
        ))
    };
    // The first run, and the next ones while the document is not indexed.
    for _ in 0..2 {
        let output = run();
        assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
        assert!(
            text(&output.stdout).contains("not indexed: alpha: 1 of its documents"),
            "{}",
            text(&output.stdout)
        );
        assert!(
            !text(&output.stderr).contains("make: ***"),
            "{}",
            text(&output.stderr)
        );
    }
    // Another run holds the root: this one stops at once.
    let held = kts_tests::shell(&format!(
        "flock -n '{}' '{}' '{}' --bin '{}'",
        root.join(".kts-reindex/lock").display(),
        script.display(),
        root.display(),
        kts_tests::profile_dir().display()
    ));
    assert_eq!(held.status.code(), Some(2), "{}", text(&held.stderr));
    assert!(
        text(&held.stderr).contains("another reindex of"),
        "{}",
        text(&held.stderr)
    );
    // Replaced by a document that can be read: the run succeeds.
    std::fs::remove_file(root.join("alpha/broken.docx")).unwrap();
    write(
        &root.join("alpha/fixed.md"),
        "# Fixed\n\nThe capybara note.\n",
    );
    let output = run();
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stdout));
    assert_eq!(found(&root.join("alpha"), "capybara"), ["fixed.md"]);
}

/// `make -f pipelines/reindex.mk ROOT=... -j2` with embeddings (no graph),
/// one shared kts-embed, the binaries in `bin`.
fn reindex_embedded(root: &Path, bin: &Path) -> Output {
    let makefile = kts_tests::workspace_root().join("pipelines/reindex.mk");
    kts_tests::shell(&format!(
        "make -f '{}' ROOT='{}' BIN='{}' EMBED=1 GRAPH=0 EMBEDDERS=1 -j2",
        makefile.display(),
        root.display(),
        bin.display()
    ))
}

/// The records of a JSONL file or output, parsed.
fn records(jsonl: &str) -> Vec<Value> {
    jsonl
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// Asserts that a scope's embed.jsonl holds what a kts-embed of that scope
/// alone gives for its chunk.jsonl: the same records, vectors within 1e-6.
fn assert_embedded_as_alone(scope: &Path) {
    let cache = scope.join(".kts/cache");
    let alone = kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-embed --no-cache < '{}'",
        cache.join("chunk.jsonl").display()
    )));
    let alone = records(&text(&alone.stdout));
    let shared = records(&std::fs::read_to_string(cache.join("embed.jsonl")).unwrap());
    assert_eq!(shared.len(), alone.len(), "{}", scope.display());
    assert!(
        alone.iter().any(|r| r["schema"] == "kts.chunk/1"),
        "{} has no chunks",
        scope.display()
    );
    for (mut ours, mut theirs) in shared.into_iter().zip(alone) {
        let vectors = [&mut ours, &mut theirs].map(|record| {
            record
                .as_object_mut()
                .and_then(|fields| fields.remove("embedding"))
                .map(|v| serde_json::from_value::<Vec<f32>>(v).unwrap())
        });
        assert_eq!(ours, theirs, "{}", scope.display());
        if let [Some(ours), Some(theirs)] = vectors {
            assert_eq!(ours.len(), theirs.len());
            let furthest = ours
                .iter()
                .zip(&theirs)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0f32, f32::max);
            assert!(furthest <= 1e-6, "vectors differ by {furthest}");
        } else {
            assert_eq!(vectors[0], vectors[1]);
        }
    }
}

#[test]
fn with_embeddings_the_scopes_share_one_embedder_and_get_their_own_vectors() {
    let root = knowledge_root();
    let root = root.path();
    let scopes = scope_dirs(root);
    let run = reindex_embedded(root, &kts_tests::profile_dir());
    assert!(
        run.status.success(),
        "{}{}",
        text(&run.stdout),
        text(&run.stderr)
    );
    assert!(
        summary(root).contains("3 reindexed, 0 unchanged, 0 failed"),
        "{}",
        summary(root)
    );
    for scope in &scopes {
        let log = std::fs::read_to_string(scope.join(".kts/cache/reindex.log")).unwrap();
        assert!(log.contains("# one kts-embed for 3 scopes"), "{log}");
        assert!(log.contains("kts-embed: "), "its --stats line: {log}");
        assert!(log.contains("kts-index: "), "{log}");
        assert!(
            !log.contains("jobserver"),
            "the sub-makes get make's job slots: {log}"
        );
        assert_embedded_as_alone(scope);
    }
    let nearest = kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-query '{}' 'which weekday are releases shipped' --mode vector --top-k 1",
        scopes[1].display()
    )));
    let nearest = records(&text(&nearest.stdout));
    assert_eq!(nearest[0]["path"], "deploy.txt", "{nearest:?}");

    // Nothing changed: no stage starts, kts-embed neither (the logs stay as
    // the first run left them).
    let logs = || {
        scopes
            .iter()
            .map(|s| std::fs::read_to_string(s.join(".kts/cache/reindex.log")).unwrap())
            .collect::<Vec<_>>()
    };
    let first_logs = logs();
    let run = reindex_embedded(root, &kts_tests::profile_dir());
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(summary(root).contains("0 reindexed, 3 unchanged, 0 failed"));
    assert_eq!(logs(), first_logs);

    // One scope changed: it alone goes through the shared embedder.
    write(
        &scopes[2].join("report.md"),
        "# Remittance report\n\nTrigger event: dugong.\n",
    );
    let run = reindex_embedded(root, &kts_tests::profile_dir());
    assert!(run.status.success(), "{}", text(&run.stderr));
    expect_results(
        root,
        &[
            ("unchanged", "alpha"),
            ("unchanged", "Beta Team - EMEA"),
            ("reindexed", "gamma_2006_HE1"),
        ],
    );
    let log = std::fs::read_to_string(scopes[2].join(".kts/cache/reindex.log")).unwrap();
    assert!(log.contains("# one kts-embed for 1 scopes"), "{log}");
    assert_embedded_as_alone(&scopes[2]);
    assert_eq!(found(&scopes[2], "dugong"), ["report.md"]);
}

#[test]
fn scopes_the_shared_embedder_cannot_serve_are_embedded_on_their_own() {
    // The kts binaries of this build, with a kts-embed that fails on a stream
    // of several scopes (as a damaged model file or a full disk would) and
    // embeds a single scope's stream as usual.
    let bin = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(kts_tests::profile_dir()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        if name.starts_with("kts-") && name != "kts-embed" && path.is_file() {
            std::os::unix::fs::symlink(&path, bin.path().join(&name)).unwrap();
        }
    }
    let embed = bin.path().join("kts-embed");
    write(
        &embed,
        &format!(
            "#!/usr/bin/env bash\n\
             input=$(cat)\n\
             if [[ $input == *reindex-embed.scope* ]]; then\n\
             \x20   echo 'kts-embed: error: the model file is damaged' >&2\n\
             \x20   exit 2\n\
             fi\n\
             printf '%s\\n' \"$input\" | exec '{}' \"$@\"\n",
            kts_tests::profile_dir().join("kts-embed").display()
        ),
    );
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&embed, std::fs::Permissions::from_mode(0o755)).unwrap();

    let root = knowledge_root();
    let root = root.path();
    let run = reindex_embedded(root, bin.path());
    assert!(
        run.status.success(),
        "{}{}",
        text(&run.stdout),
        text(&run.stderr)
    );
    assert!(
        text(&run.stderr).contains("they are embedded one by one"),
        "{}",
        text(&run.stderr)
    );
    assert!(summary(root).contains("3 reindexed, 0 unchanged, 0 failed"));
    for scope in scope_dirs(root) {
        let log = std::fs::read_to_string(scope.join(".kts/cache/reindex.log")).unwrap();
        assert!(log.contains("the model file is damaged"), "{log}");
        assert!(log.contains("the scope is embedded on its own"), "{log}");
        assert_embedded_as_alone(&scope);
    }
}

/// Each scope's documents and their chunk ids, read from its store.
fn index_contents(root: &Path) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let mut scopes: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() && !p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .collect();
    scopes.sort();
    for scope in scopes {
        let store = kts_store::Store::open_read(&scope).unwrap();
        let integrity: String = store
            .connection()
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(integrity, "ok", "{}", scope.display());
        let mut statement = store
            .connection()
            .prepare(
                "SELECT d.path, group_concat(c.chunk_id, ' ') FROM documents d
                 JOIN chunks c USING (doc_id) GROUP BY d.path ORDER BY d.path",
            )
            .unwrap();
        let rows = statement
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .unwrap()
            .map(Result::unwrap);
        let name = scope.file_name().unwrap().to_string_lossy().into_owned();
        for (path, chunks) in rows {
            let mut chunks: Vec<String> = chunks.split(' ').map(str::to_string).collect();
            chunks.sort();
            out.push((format!("{name}/{path}"), chunks));
        }
    }
    out
}

/// A root of 8 scopes of 12 documents each.
fn larger_root(root: &Path) {
    for s in 0..8 {
        for d in 0..12 {
            let words: String = (0..40)
                .map(|w| format!("word{} ", (s * 7 + d * 13 + w) % 97))
                .collect();
            write(
                &root.join(format!("scope{s}/doc{d}.md")),
                &format!(
                    "# Scope {s} document {d}\n\n{words}\n\n## Part two\n\nMore about topic{d}.\n"
                ),
            );
        }
    }
}

#[test]
fn a_run_killed_mid_root_is_finished_by_the_next() {
    use std::os::unix::process::CommandExt;

    let reference = tempfile::tempdir().unwrap();
    larger_root(reference.path());
    kts_tests::succeeded(reindex(reference.path()));
    let expected = index_contents(reference.path());
    assert_eq!(expected.len(), 96);

    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    larger_root(root);
    let makefile = kts_tests::workspace_root().join("pipelines/reindex.mk");
    let mut rng = fastrand::Rng::with_seed(5);
    let mut killed = 0;
    for _ in 0..4 {
        let results = root.join(".kts-reindex/results.tsv");
        std::fs::remove_file(&results).ok();
        // make and everything it started are one process group, killed at once.
        let mut child = std::process::Command::new("make")
            .arg("-f")
            .arg(&makefile)
            .arg(format!("ROOT={}", root.display()))
            .arg(format!("BIN={}", kts_tests::profile_dir().display()))
            .args(["EMBED=0", "GRAPH=1", "-j2"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        // Killed once a scope is done, a moment later: always mid-way.
        while child.try_wait().unwrap().is_none()
            && !std::fs::read_to_string(&results).is_ok_and(|r| r.contains("reindexed\t"))
        {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        std::thread::sleep(std::time::Duration::from_millis(rng.u64(0..300)));
        if child.try_wait().unwrap().is_none() {
            killed += 1;
        }
        std::process::Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", child.id())])
            .status()
            .unwrap();
        child.wait().unwrap();
    }
    assert!(killed >= 2, "only {killed} of 4 runs were killed mid-way");

    let run = reindex(root);
    assert!(
        run.status.success(),
        "{}{}",
        text(&run.stdout),
        text(&run.stderr)
    );
    assert_eq!(index_contents(root), expected);
    let again = reindex(root);
    assert!(again.status.success());
    assert!(
        summary(root).contains("0 reindexed, 8 unchanged, 0 failed"),
        "{}",
        summary(root)
    );
}

#[test]
fn a_renamed_scope_folder_has_the_catalog_rebuilt() {
    let root = knowledge_root();
    let root = root.path();
    kts_tests::succeeded(reindex(root));
    std::fs::rename(root.join("gamma_2006_HE1"), root.join("Delta")).unwrap();
    let run = reindex(root);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(
        summary(root).contains("kts-catalog: 3 scopes cataloged"),
        "{}",
        summary(root)
    );
    let listed = kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-catalog '{}' --list",
        root.display()
    )));
    let listed = text(&listed.stdout);
    assert!(listed.contains("\"slug\":\"delta\""), "{listed}");
    assert!(!listed.contains("gamma"), "{listed}");
}

#[test]
fn a_folder_whose_name_holds_a_newline_is_named_as_skipped_and_fails_the_run() {
    let root = knowledge_root();
    let root = root.path();
    write(
        &root.join("odd\nname/note.md"),
        "# Odd\n\nNot a scope name.\n",
    );
    let run = reindex(root);
    assert!(!run.status.success(), "{}", text(&run.stderr));
    let summary = summary(root);
    assert!(
        summary.contains("skipped: 1 folder(s) whose name holds a newline")
            && summary.contains("3 reindexed, 0 unchanged, 0 failed"),
        "{summary}"
    );
}

#[test]
fn a_scope_folder_removed_during_the_run_is_gone_and_not_created_again() {
    let root = knowledge_root();
    let root = root.path();
    // Listed as a scope, as a task of kts-spark gets it, but removed since.
    let state = root.join(".kts-reindex");
    write(&state.join("list"), "alpha\nremoved\n");
    for embed in ["0", "1"] {
        let run = kts_tests::shell(&format!(
            "make -f '{}' ROOT='{}' BIN='{}' LIST='{}' EMBED={embed} GRAPH=0 -j2",
            kts_tests::workspace_root()
                .join("pipelines/reindex.mk")
                .display(),
            root.display(),
            kts_tests::profile_dir().display(),
            state.join("list").display()
        ));
        assert!(
            run.status.success(),
            "EMBED={embed}: {}{}",
            text(&run.stdout),
            text(&run.stderr)
        );
        assert!(!root.join("removed").exists(), "EMBED={embed}");
        assert_eq!(
            results(root),
            [
                ("reindexed".to_string(), "alpha".to_string()),
                ("gone".to_string(), "removed".to_string())
            ],
            "EMBED={embed}"
        );
        let summary = summary(root);
        assert!(
            summary.contains("1 reindexed, 0 unchanged, 0 failed, 1 gone")
                && summary.contains("  gone: removed: the folder was removed during the run"),
            "EMBED={embed}: {summary}"
        );
        std::fs::remove_dir_all(root.join("alpha/.kts")).unwrap();
    }
}

#[test]
fn a_scope_another_run_is_indexing_fails_at_once() {
    let root = knowledge_root();
    let root = root.path();
    let lock = root.join("alpha/.kts/cache/reindex.lock");
    std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
    // The run goes on while `flock` holds the scope's lock, as kts-spark
    // --split does while it indexes the scope.
    let run = kts_tests::shell(&format!(
        "flock '{}' make -f '{}' ROOT='{}' BIN='{}' EMBED=0 GRAPH=0 -j2",
        lock.display(),
        kts_tests::workspace_root()
            .join("pipelines/reindex.mk")
            .display(),
        root.display(),
        kts_tests::profile_dir().display()
    ));
    assert!(!run.status.success(), "{}", text(&run.stdout));
    expect_results(
        root,
        &[
            ("failed", "alpha"),
            ("reindexed", "Beta Team - EMEA"),
            ("reindexed", "gamma_2006_HE1"),
        ],
    );
    let alpha = root.join("alpha");
    assert!(
        summary(root).contains(&format!(
            "  failed: alpha: reindex: another run is indexing {}",
            alpha.display()
        )),
        "{}",
        summary(root)
    );
    assert!(!alpha.join(".kts/kts.db").exists());
}

#[test]
fn a_folder_without_sub_folders_is_refused_and_files_beside_the_scopes_fail_the_run() {
    let script = kts_tests::workspace_root().join("pipelines/reindex");
    let run = |root: &Path| {
        kts_tests::shell(&format!(
            "'{}' '{}' --no-embed --no-graph --bin '{}'",
            script.display(),
            root.display(),
            kts_tests::profile_dir().display()
        ))
    };
    // A folder of documents, not a root: refused, and nothing written in it.
    let flat = tempfile::tempdir().unwrap();
    write(&flat.path().join("leave.md"), "# Leave\n\nThirty days.\n");
    write(&flat.path().join(".hidden/x.md"), "# Hidden\n");
    let refused = run(flat.path());
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stdout));
    let said = text(&refused.stderr);
    assert!(
        said.lines().count() == 1
            && said.starts_with(&format!(
                "reindex: {} has no sub-folder, so no scope",
                flat.path().display()
            ))
            && said.contains("index it as one scope: kts-crawl "),
        "{said}"
    );
    assert!(!flat.path().join(".kts-reindex").exists());

    // A scope with sub-folders, not a root: refused before anything is written.
    let scope = tempfile::tempdir().unwrap();
    write(&scope.path().join("guides/a.md"), "# Guide\n\nStep one.\n");
    let dir = scope.path().display();
    kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-crawl '{dir}' | kts-convert | kts-chunk | kts-index '{dir}' --quiet"
    )));
    let refused = run(scope.path());
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stdout));
    let said = text(&refused.stderr);
    assert!(
        said.contains("is a scope (it has an index), not a knowledge root"),
        "{said}"
    );
    assert!(!scope.path().join("guides/.kts").exists());
    assert!(!scope.path().join(".kts-reindex").exists());

    // Files beside the scopes are in none: the run says how many, exit 1.
    let root = knowledge_root();
    let root = root.path();
    write(&root.join("expenses.md"), "# Expenses\n\nReceipts.\n");
    write(&root.join(".notes.md"), "# Hidden\n");
    let output = run(root);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    let summary = summary(root);
    assert!(
        summary.contains("3 reindexed, 0 unchanged, 0 failed")
            && summary.contains(
                "  not indexed: 1 file(s) at the top level of the root: its scopes are its sub-folders"
            ),
        "{summary}"
    );
}

#[test]
fn shell_characters_in_the_root_and_scope_names_are_names_and_a_lost_link_is_named() {
    let parent = tempfile::tempdir().unwrap();
    let root = parent.path().join("-o'brien's \"docs\" $HOME `id`");
    write(
        &root.join("Alice's hr/leave.md"),
        "# Leave\n\nThe quokka rule.\n",
    );
    write(&root.join("notes/a.md"), "# Notes\n\nThe tapir note.\n");
    let gone = parent.path().join("unmounted/team");
    std::os::unix::fs::symlink(&gone, root.join("team")).unwrap();
    let run = std::process::Command::new(kts_tests::workspace_root().join("pipelines/reindex"))
        .args(["--no-embed", "--no-graph", "--bin"])
        .arg(kts_tests::profile_dir())
        .arg("--")
        .arg(root.file_name().unwrap())
        .current_dir(parent.path())
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}{}",
        text(&run.stdout),
        text(&run.stderr)
    );
    let summary = summary(&root);
    assert!(
        summary.starts_with(&format!("reindex {}: 2 scopes", root.display()))
            && summary.contains("2 reindexed, 0 unchanged, 0 failed")
            && summary.contains(&format!(
                "  left out: team: a link to {}, which is not there",
                gone.display()
            )),
        "{summary}"
    );
    let query = std::process::Command::new(kts_tests::bin("kts-query"))
        .arg(root.join("Alice's hr"))
        .args(["quokka", "--mode", "bm25"])
        .output()
        .unwrap();
    assert!(
        text(&query.stdout).contains("\"path\":\"leave.md\""),
        "{}",
        text(&query.stderr)
    );
}
