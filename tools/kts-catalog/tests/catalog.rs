//! The catalog of a knowledge root of three scopes indexed by the real
//! pipeline (keyword search only, so no model is needed): rebuild, a corrupt
//! scope, search, the update after re-indexing, a rebuild that never commits,
//! and slugs that stay when a folder giving the same one is added.

use std::path::Path;

use kts_catalog::{Catalog, CatalogRow, Rebuild, catalog_path};
use kts_record::ErrorCode;
use kts_store::Store;
use serde_json::Value;

const DEAL_AGREEMENT: &str = "# Pooling and Servicing Agreement

Dated as of March 1, 2006, among the Depositor, EMC Mortgage Corporation as
Sponsor and Wells Fargo Bank as Trustee.

## Determination Date

The Determination Date is the 15th day of each month. The Trustee shall
forward the remittance report to EMC Mortgage Corporation on each
Distribution Date.
";

const DEAL_REPORT: &str = "# Remittance report

Monthly remittance report for the certificates. Wells Fargo Bank, as Trustee,
reports the pool balance. EMC Mortgage Corporation services the loans.
Report date: 2006-06-25.
";

const LEAVE: &str = "# Annual leave policy

Employees accrue 2.5 days of annual leave per month. Requests go to the
HR Portal at least two weeks ahead. This policy applies to all staff and
must be followed.
";

const ONBOARDING: &str = "# Onboarding guide

How to get started in your first week: collect your badge, sign in to the
HR Portal, and read the annual leave policy. This guide walks you through
each step.
";

const AUTH: &str = "# Login troubleshooting

When the AuthService rejects a login it answers ERR-AUTH-401. To fix
ERR-AUTH-401, clear the TokenCache and sign in again. If the AuthService is
down, the status page says so.
";

const FAQ: &str = "# Frequently asked questions

Why does the AuthService log me out? The TokenCache expires after an hour.
How do I reset my password? Use the self-service page.
";

/// A knowledge root holding three indexed scopes, each with its graph.
fn root() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let scopes: [(&str, &[(&str, &str)]); 3] = [
        (
            "Bear Stearns 2006-HE1",
            &[("agreement.md", DEAL_AGREEMENT), ("report.md", DEAL_REPORT)],
        ),
        (
            "HR Policies",
            &[("leave-policy.md", LEAVE), ("onboarding.md", ONBOARDING)],
        ),
        ("Support", &[("login.md", AUTH), ("faq.md", FAQ)]),
    ];
    for (folder, files) in scopes {
        let dir = root.path().join(folder);
        std::fs::create_dir(&dir).unwrap();
        for (name, text) in files {
            std::fs::write(dir.join(name), text).unwrap();
        }
        index(&dir);
    }
    root
}

/// Runs the pipeline on one scope: crawl, convert, chunk, index, graph.
fn index(dir: &Path) {
    let dir = dir.display();
    kts_tests::succeeded(kts_tests::shell(&format!(
        "kts-crawl '{dir}' | kts-convert | kts-chunk | kts-index '{dir}' && kts-graph '{dir}' --quiet"
    )));
}

fn catalog_cli(root: &Path, flags: &str) -> std::process::Output {
    kts_tests::shell(&format!("kts-catalog '{}' {flags}", root.display()))
}

fn records(output: &std::process::Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn slugs(rows: &[CatalogRow]) -> Vec<&str> {
    rows.iter().map(|r| r.slug.as_str()).collect()
}

#[test]
fn rebuild_lists_every_scope_with_its_counts_and_doc_types() {
    let root = root();
    std::fs::create_dir(root.path().join("not indexed yet")).unwrap();
    let out = kts_tests::succeeded(catalog_cli(root.path(), ""));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("kts-catalog: 3 scopes cataloged (6 documents,")
            && stderr.contains("0 failed, 1 folders not indexed"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());

    let catalog = Catalog::open(root.path()).unwrap();
    let rows = catalog.scopes().unwrap();
    assert_eq!(
        slugs(&rows),
        ["bear_stearns_2006_he1", "hr_policies", "support"]
    );
    for row in &rows {
        let store = Store::open_read(&row.dir(root.path())).unwrap();
        assert_eq!((row.documents, row.chunks), store.counts().unwrap());
        assert_eq!(row.doc_types, store.doc_types().unwrap());
        assert_eq!(row.last_indexed, store.meta().unwrap().updated);
        assert_eq!(row.model_id, None, "indexed without embeddings");
        assert_eq!(row.documents, 2);
        assert!(!row.keywords.is_empty());
    }
    let [deal, hr, support] = &rows[..] else {
        panic!()
    };
    assert_eq!(deal.path, "Bear Stearns 2006-HE1");
    assert_eq!(deal.years, [2006]);
    assert!(hr.doc_types.contains(&"POLICY".to_string()), "{hr:?}");
    assert!(hr.doc_types.contains(&"GUIDE".to_string()), "{hr:?}");
    assert!(hr.years.is_empty());
    assert!(
        deal.entities
            .iter()
            .any(|e| e == "EMC Mortgage Corporation"),
        "{deal:?}"
    );
    assert!(
        support.entities.iter().any(|e| e == "AuthService"),
        "{support:?}"
    );

    // --list writes the same rows as kts.scope/1 records.
    let listed = records(&kts_tests::succeeded(catalog_cli(root.path(), "--list")));
    assert_eq!(listed.len(), 3);
    assert!(listed.iter().all(|r| r["schema"] == "kts.scope/1"));
    assert_eq!(listed[2]["slug"], "support");
    assert_eq!(listed[2]["documents"], 2);
    assert!(listed[0].get("score").is_none());
}

#[test]
fn a_corrupt_scope_is_reported_and_skipped() {
    let root = root();
    let broken = root.path().join("broken");
    std::fs::create_dir_all(broken.join(".kts")).unwrap();
    std::fs::write(
        broken.join(".kts/kts.db"),
        "this is not an SQLite database, only garbage bytes".repeat(200),
    )
    .unwrap();

    let summary = Catalog::rebuild(root.path()).unwrap();
    assert_eq!(summary.scopes, 3);
    assert_eq!(summary.failed.len(), 1);
    assert_eq!(
        (summary.failed[0].path.as_str(), summary.failed[0].code),
        ("broken", ErrorCode::Corrupt)
    );

    let out = catalog_cli(root.path(), "");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("kts-catalog: error (at broken): corrupt:"),
        "{stderr}"
    );
    assert!(stderr.contains("3 scopes cataloged"), "{stderr}");
    let rows = Catalog::open(root.path()).unwrap().scopes().unwrap();
    assert_eq!(
        slugs(&rows),
        ["bear_stearns_2006_he1", "hr_policies", "support"]
    );
}

#[test]
fn search_finds_a_scope_by_its_slug_words_and_by_its_entities() {
    let root = root();
    Catalog::rebuild(root.path()).unwrap();
    let catalog = Catalog::open(root.path()).unwrap();

    let by_slug = catalog
        .search(
            "What is the determination date of Bear Stearns 2006-HE1?",
            10,
        )
        .unwrap();
    assert_eq!(by_slug[0].0.slug, "bear_stearns_2006_he1", "{by_slug:?}");
    assert_eq!(
        slugs(
            &catalog
                .slug_mentioned("bear stearns 2006-he1 trustee")
                .unwrap()
        ),
        ["bear_stearns_2006_he1"]
    );
    assert!(
        catalog
            .slug_mentioned("bear stearns 2006")
            .unwrap()
            .is_empty()
    );
    let one_word = catalog.search("support: how do I get a badge", 10).unwrap();
    assert_eq!(one_word[0].0.slug, "support", "{one_word:?}");

    let by_entity = catalog
        .search("why does the authservice reject me", 10)
        .unwrap();
    assert_eq!(by_entity[0].0.slug, "support", "{by_entity:?}");
    assert!(by_entity[0].1 > 0.0);
    let by_party = catalog.search("EMC Mortgage Corporation", 10).unwrap();
    assert_eq!(by_party[0].0.slug, "bear_stearns_2006_he1", "{by_party:?}");
    let by_keyword = catalog.search("annual leave", 1).unwrap();
    assert_eq!(slugs(&[by_keyword[0].0.clone()]), ["hr_policies"]);

    assert!(catalog.search("", 10).unwrap().is_empty());
    assert!(catalog.search("zebra", 10).unwrap().is_empty());
    assert!(catalog.search("support", 0).unwrap().is_empty());

    let found = records(&kts_tests::succeeded(catalog_cli(
        root.path(),
        "--search 'ERR-AUTH-401 AuthService' --limit 1",
    )));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0]["slug"], "support");
    assert!(found[0]["score"].as_f64().unwrap() > 0.0);
}

#[test]
fn re_indexing_one_scope_updates_only_its_row() {
    let root = root();
    Catalog::rebuild(root.path()).unwrap();
    let before = Catalog::open(root.path()).unwrap().scopes().unwrap();

    let hr = root.path().join("HR Policies");
    std::fs::write(
        hr.join("expenses.md"),
        "# Travel expenses policy 2024\n\nThe Expense Tool reimburses travel within 30 days.\n",
    )
    .unwrap();
    index(&hr);
    // kts-index updated the row; kts-graph ran after it, so the graph's
    // entities come with the next update.
    let hooked = Catalog::open(root.path()).unwrap().scopes().unwrap();
    assert_eq!(hooked[1].documents, 3);
    assert!(Catalog::update_scope(root.path(), &hr).unwrap());

    let after = Catalog::open(root.path()).unwrap().scopes().unwrap();
    assert_eq!(slugs(&after), slugs(&before));
    assert_eq!(after[0], before[0]);
    assert_eq!(after[2], before[2]);
    let (old, new) = (&before[1], &after[1]);
    assert_eq!((new.documents, new.years.as_slice()), (3, &[2024][..]));
    assert!(new.chunks > old.chunks);
    assert!(new.last_indexed > old.last_indexed);
    assert!(new.entities.iter().any(|e| e == "Expense Tool"), "{new:?}");

    // An update that changes nothing leaves the catalog file as it was.
    let file = catalog_path(root.path());
    let modified = || file.metadata().unwrap().modified().unwrap();
    let (was, was_modified) = (std::fs::read(&file).unwrap(), modified());
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert!(Catalog::update_scope(root.path(), &hr).unwrap());
    assert_eq!(modified(), was_modified);
    assert!(std::fs::read(&file).unwrap() == was);

    // Once the scope's index is gone, its row goes too.
    std::fs::remove_dir_all(hr.join(".kts")).unwrap();
    assert!(Catalog::update_scope(root.path(), &hr).unwrap());
    let rows = Catalog::open(root.path()).unwrap().scopes().unwrap();
    assert_eq!(slugs(&rows), ["bear_stearns_2006_he1", "support"]);

    // A root without a catalog gets none.
    let elsewhere = tempfile::tempdir().unwrap();
    let scope = elsewhere.path().join("s");
    std::fs::create_dir(&scope).unwrap();
    assert!(!Catalog::update_scope(elsewhere.path(), &scope).unwrap());
    assert!(!catalog_path(elsewhere.path()).exists());
    // A folder outside the root is refused.
    assert!(Catalog::update_scope(root.path(), &scope).is_err());
}

#[test]
fn a_rebuild_that_never_commits_leaves_the_previous_catalog() {
    let root = root();
    Catalog::rebuild(root.path()).unwrap();
    let before = Catalog::open(root.path()).unwrap().scopes().unwrap();

    let reader = Catalog::open(root.path()).unwrap();
    let mut rebuild = Rebuild::begin(root.path()).unwrap();
    let mut changed = before[0].clone();
    changed.documents = 999;
    rebuild.add(&changed).unwrap();
    // Readers see the previous catalog while the rebuild is under way...
    assert_eq!(reader.scopes().unwrap(), before);
    // ...and after it dies without committing (as in a crash).
    drop(rebuild);
    assert_eq!(
        Catalog::open(root.path()).unwrap().scopes().unwrap(),
        before
    );
    assert_eq!(reader.scopes().unwrap(), before);

    // The next rebuild writes normally.
    let summary = Catalog::rebuild(root.path()).unwrap();
    assert_eq!(summary.scopes, 3);
}

#[test]
fn a_catalog_that_is_missing_or_damaged() {
    let root = root();
    let err = Catalog::open(root.path()).err().unwrap().to_string();
    assert!(
        err.contains("no catalog at") && err.contains("kts-catalog"),
        "{err}"
    );
    let out = catalog_cli(root.path(), "--list");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("kts-catalog: error: no catalog"));

    // A damaged catalog is built anew.
    std::fs::write(catalog_path(root.path()), "garbage ".repeat(1000)).unwrap();
    assert!(Catalog::open(root.path()).is_err());
    assert_eq!(Catalog::rebuild(root.path()).unwrap().scopes, 3);
    assert_eq!(
        Catalog::open(root.path()).unwrap().scopes().unwrap().len(),
        3
    );

    // A root that is not a folder is fatal.
    let out = kts_tests::shell(&format!(
        "kts-catalog '{}'",
        root.path().join("nowhere").display()
    ));
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_scope_keeps_its_slug_when_a_folder_added_later_gives_it_too() {
    // "SUPPORT" sorts before "Support", "support" after: in name order
    // the first would take the slug `support`, and neither may.
    for newcomer in ["SUPPORT", "support"] {
        let root = root();
        Catalog::rebuild(root.path()).unwrap();
        let dir = root.path().join(newcomer);
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(
            dir.join("vpn.md"),
            "# VPN setup\n\nInstall the VPN client.\n",
        )
        .unwrap();
        index(&dir);
        let slug_of = |catalog: &Catalog, path: &str| {
            let rows = catalog.scopes().unwrap();
            rows.into_iter().find(|r| r.path == path).unwrap().slug
        };
        let catalog = Catalog::open(root.path()).unwrap();
        assert_eq!(slug_of(&catalog, "Support"), "support");
        assert_eq!(slug_of(&catalog, newcomer), "support_2");
        assert_eq!(catalog.get("support").unwrap().unwrap().documents, 2);
        assert_eq!(
            catalog.slug_mentioned("support 2").unwrap()[0].path,
            newcomer
        );
        // A full rebuild gives the slugs the catalog gave.
        let summary = Catalog::rebuild(root.path()).unwrap();
        assert_eq!(summary.collisions["support"].len(), 2);
        let catalog = Catalog::open(root.path()).unwrap();
        assert_eq!(slug_of(&catalog, "Support"), "support");
        assert_eq!(slug_of(&catalog, newcomer), "support_2");
    }
}

#[test]
fn words_most_scopes_share_are_left_out_of_the_ranking() {
    let root = tempfile::tempdir().unwrap();
    let rows = 2 * kts_catalog::COMMON_ROWS as usize + 10;
    let mut rebuild = Rebuild::begin(root.path()).unwrap();
    for i in 0..rows {
        let mut keywords = vec!["mortgage".to_string()];
        if i % 100 == 7 {
            keywords.push("multifamily".into());
        }
        if i == 507 {
            keywords.push("dscr".into());
        }
        rebuild
            .add(&CatalogRow {
                slug: format!("deal_{i}"),
                path: format!("Deal {i}"),
                documents: 1,
                keywords,
                ..CatalogRow::default()
            })
            .unwrap();
    }
    rebuild.commit().unwrap();
    let catalog = Catalog::open(root.path()).unwrap();

    let found = catalog.search("mortgage dscr multifamily", 5).unwrap();
    assert_eq!(found[0].0.slug, "deal_507", "{found:?}");
    assert!(
        found
            .iter()
            .all(|(row, score)| row.keywords.contains(&"multifamily".to_string()) && *score > 0.0)
    );
    // Only common words: their rows, unranked.
    let common = catalog.search("mortgage", 3).unwrap();
    assert_eq!(common.len(), 3);
    assert!(common.iter().all(|(_, score)| *score == 0.0));
    // A named scope comes first all the same.
    let named = catalog.search("mortgage of deal 42", 3).unwrap();
    assert_eq!(named[0].0.slug, "deal_42");
}

#[test]
fn a_catalog_of_an_older_format_is_refused_then_replaced_by_a_rebuild() {
    let root = root();
    Catalog::rebuild(root.path()).unwrap();
    let conn = rusqlite::Connection::open(catalog_path(root.path())).unwrap();
    conn.execute(
        "UPDATE catalog_meta SET value = '1' WHERE key = 'format_version'",
        [],
    )
    .unwrap();
    drop(conn);
    let err = format!("{:#}", Catalog::open(root.path()).err().unwrap());
    assert!(
        err.contains("catalog format 1") && err.contains("kts-catalog"),
        "{err}"
    );
    assert_eq!(Catalog::rebuild(root.path()).unwrap().scopes, 3);
    let catalog = Catalog::open(root.path()).unwrap();
    assert_eq!(catalog.scopes().unwrap().len(), 3);
}

#[test]
fn document_titles_find_a_scope_its_folder_names_otherwise() {
    let root = tempfile::tempdir().unwrap();
    let mut rebuild = Rebuild::begin(root.path()).unwrap();
    for (folder, title) in [
        (
            "merrill_lynch_2007_FF4",
            "MLMI 2007-FF4 Monthly Remittance Report",
        ),
        ("MLMI 2006-FF4", "MLMI 2006-FF4 Monthly Remittance Report"),
        (
            "Merrill Lynch 2007-FF5",
            "MLMI 2007-FF5 Monthly Remittance Report",
        ),
        ("Support", "Login troubleshooting"),
    ] {
        rebuild
            .add(&CatalogRow {
                slug: kts_store::scope_slug(folder),
                path: folder.into(),
                documents: 1,
                titles: vec![title.into()],
                ..CatalogRow::default()
            })
            .unwrap();
    }
    rebuild.commit().unwrap();
    let catalog = Catalog::open(root.path()).unwrap();
    let found = catalog
        .search("the trigger event of MLMI 2007-FF4", 4)
        .unwrap();
    assert_eq!(found[0].0.slug, "merrill_lynch_2007_ff4", "{found:?}");
    // The slugs alone, in the same order with the same scores.
    let slugs_only = catalog
        .search_slugs("the trigger event of MLMI 2007-FF4", 4)
        .unwrap();
    assert_eq!(
        slugs_only,
        found
            .iter()
            .map(|(row, score)| (row.slug.clone(), *score))
            .collect::<Vec<_>>()
    );
    // Titles are searched, not listed.
    assert_eq!(found[0].0.to_record(None).keywords, Vec::<String>::new());
    // Listed as discover_scopes lists folders: by name, byte order.
    let entries = catalog.scope_entries().unwrap();
    assert_eq!(
        entries
            .iter()
            .map(|e| (e.slug.as_str(), e.path.clone(), e.indexed))
            .collect::<Vec<_>>(),
        [
            ("mlmi_2006_ff4", root.path().join("MLMI 2006-FF4"), true),
            (
                "merrill_lynch_2007_ff5",
                root.path().join("Merrill Lynch 2007-FF5"),
                true
            ),
            ("support", root.path().join("Support"), true),
            (
                "merrill_lynch_2007_ff4",
                root.path().join("merrill_lynch_2007_FF4"),
                true
            ),
        ]
    );
}

#[test]
fn a_search_ranks_its_rarest_words_within_a_budget_of_rows() {
    let root = tempfile::tempdir().unwrap();
    let budget = kts_catalog::RANKED_ROWS as usize;
    let rows = 10 * budget;
    let mut rebuild = Rebuild::begin(root.path()).unwrap();
    for i in 0..rows {
        // "ledger" in a fifth of the rows (under a quarter: not common, but
        // more than the budget), "audit" in 3 (team_5 also holds "ledger").
        let mut keywords = Vec::new();
        if i % 5 == 0 {
            keywords.push("ledger".to_string());
        }
        if [5, 6, 7].contains(&i) {
            keywords.push("audit".into());
        }
        rebuild
            .add(&CatalogRow {
                slug: format!("team_{i}"),
                path: format!("Team {i}"),
                keywords,
                ..CatalogRow::default()
            })
            .unwrap();
    }
    rebuild.commit().unwrap();
    let catalog = Catalog::open(root.path()).unwrap();
    // "ledger" alone would pass the budget after "audit": only "audit" ranks,
    // so the rows holding both score no higher than the others with "audit".
    let found = catalog.search("ledger audit", 10).unwrap();
    let mut slugs: Vec<&str> = found.iter().map(|(row, _)| row.slug.as_str()).collect();
    slugs.sort();
    assert_eq!(slugs, ["team_5", "team_6", "team_7"], "{found:?}");
    // The rarest word is ranked even over the budget.
    let found = catalog.search("ledger", 3).unwrap();
    assert_eq!(found.len(), 3);
    assert!(found.iter().all(|(_, score)| *score > 0.0));
}

#[test]
fn a_scope_folder_is_refused_and_given_no_catalog() {
    let root = root();
    let scope = root.path().join("Support");
    let output = catalog_cli(&scope, "");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is a scope (it has an index)"), "{stderr}");
    assert!(!scope.join(".kts-catalog.db").exists());
}

#[test]
fn if_stale_rebuilds_only_when_the_scope_folders_changed() {
    let root = root();
    let rebuilt = |root: &Path| {
        let output = kts_tests::succeeded(catalog_cli(root, "--if-stale"));
        !String::from_utf8_lossy(&output.stderr).contains("not rebuilt")
    };
    assert!(rebuilt(root.path()), "no catalog yet");
    assert!(!rebuilt(root.path()), "nothing changed");
    std::fs::rename(root.path().join("Support"), root.path().join("Helpdesk")).unwrap();
    assert!(rebuilt(root.path()), "a scope renamed");
    let listed = records(&kts_tests::succeeded(catalog_cli(root.path(), "--list")));
    assert!(listed.iter().any(|r| r["slug"] == "helpdesk"), "{listed:?}");
    assert!(!rebuilt(root.path()));
}

#[test]
fn a_search_for_nothing_is_a_usage_error_and_no_match_is_said() {
    let root = tempfile::tempdir().unwrap();
    let scope = root.path().join("Support");
    std::fs::create_dir(&scope).unwrap();
    std::fs::write(scope.join("login.md"), AUTH).unwrap();
    index(&scope);
    kts_tests::succeeded(catalog_cli(root.path(), "--quiet"));

    for flags in ["--search ''", "--search '  '", "--search login --limit 0"] {
        let output = catalog_cli(root.path(), flags);
        assert_eq!(output.status.code(), Some(2), "{flags}");
        assert!(output.stdout.is_empty(), "{flags}");
    }
    let nothing = kts_tests::succeeded(catalog_cli(root.path(), "--search zebra"));
    assert!(nothing.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&nothing.stderr);
    assert!(
        stderr.contains("no scope of the catalog matches \"zebra\""),
        "{stderr}"
    );
}
