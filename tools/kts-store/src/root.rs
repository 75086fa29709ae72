//! Knowledge roots: folders whose immediate sub-folders are scopes, each
//! with its own `.kts/`.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::scope_slug;

/// A sub-folder of a knowledge root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScopeEntry {
    /// The name it is asked for by: the folder name's slug, made unique.
    pub slug: String,
    pub path: PathBuf,
    /// Whether it holds an index (`.kts/kts.db`).
    pub indexed: bool,
}

/// The scopes of a root, and the slugs several folders share.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scopes {
    /// Sorted by folder name.
    pub scopes: Vec<ScopeEntry>,
    /// Slug → the folders whose names give it (in name order), when two or
    /// more do: one has it, the others `_2`, `_3`, ...
    pub collisions: BTreeMap<String, Vec<ScopeEntry>>,
}

/// Whether `dir` is a scope: it holds an index.
pub fn is_scope(dir: &Path) -> bool {
    crate::kts_dir(dir).join("kts.db").is_file()
}

/// The immediate sub-folders of `root` (hidden ones and `.kts` left out), in
/// name order, with unique slugs given in name order. A link to a folder is a
/// scope too: linking a folder into a root is how one adds it without moving it.
pub fn discover_scopes(root: &Path) -> anyhow::Result<Scopes> {
    discover_scopes_keeping(root, &BTreeMap::new())
}

/// [`discover_scopes`], where each folder named in `given` (folder name →
/// slug, as a root's catalog records them) keeps the slug it was given while
/// its name still gives it: a folder added later, whose name gives the same
/// slug, gets the next free `_2`, `_3` rather than taking it.
pub fn discover_scopes_keeping(
    root: &Path,
    given: &BTreeMap<String, String>,
) -> anyhow::Result<Scopes> {
    let folders = sub_folders(root)?;
    let bases: Vec<String> = folders.iter().map(|(name, _)| base_slug(name)).collect();
    let mut taken: HashSet<String> = HashSet::new();
    let kept: Vec<Option<String>> = folders
        .iter()
        .zip(&bases)
        .map(|((name, _), base)| {
            given
                .get(name)
                .filter(|slug| numbered_from(slug, base) && taken.insert(slug.to_string()))
                .cloned()
        })
        .collect();
    let mut scopes = Vec::with_capacity(folders.len());
    for (((_, path), base), kept) in folders.into_iter().zip(&bases).zip(kept) {
        let slug = kept.unwrap_or_else(|| first_free(base, &mut taken));
        scopes.push(ScopeEntry {
            indexed: is_scope(&path),
            slug,
            path,
        });
    }
    let mut collisions: BTreeMap<String, Vec<ScopeEntry>> = BTreeMap::new();
    for (scope, base) in scopes.iter().zip(bases) {
        collisions.entry(base).or_default().push(scope.clone());
    }
    collisions.retain(|_, folders| folders.len() > 1);
    Ok(Scopes { scopes, collisions })
}

/// The sub-folders of `root` that may be scopes, as (name, path), sorted.
fn sub_folders(root: &Path) -> anyhow::Result<Vec<(String, PathBuf)>> {
    let mut folders: Vec<(String, PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(root)
        .with_context(|| format!("cannot read the knowledge root {}", root.display()))?
    {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || !entry.path().is_dir() {
            continue;
        }
        folders.push((name, entry.path()));
    }
    folders.sort();
    Ok(folders)
}

/// The slug a folder name gives before it is made unique.
fn base_slug(name: &str) -> String {
    match scope_slug(name) {
        slug if slug.is_empty() => "scope".to_string(),
        slug => slug,
    }
}

/// Whether `slug` is `base` or `base` numbered (`base_2`, `base_3`, ...).
fn numbered_from(slug: &str, base: &str) -> bool {
    match slug.strip_prefix(base) {
        Some("") => true,
        Some(rest) => rest
            .strip_prefix('_')
            .and_then(|n| n.parse::<u32>().ok())
            .is_some_and(|n| n >= 2 && rest == format!("_{n}")),
        None => false,
    }
}

/// `base`, else the first of `base_2`, `base_3`, ... not taken; taken now.
fn first_free(base: &str, taken: &mut HashSet<String>) -> String {
    let slug = std::iter::once(base.to_string())
        .chain((2..).map(|n| format!("{base}_{n}")))
        .find(|slug| !taken.contains(slug))
        .expect("a free number: finitely many slugs are taken");
    taken.insert(slug.clone());
    slug
}

/// Refuses a folder inside a scope's `.kts` (or that folder itself) where a
/// scope is wanted: its index would be made of kts's own files, and nest a
/// `.kts` in the scope's.
pub fn refuse_index_folder(dir: &Path) -> anyhow::Result<()> {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let inside = dir
        .ancestors()
        .find(|folder| folder.file_name() == Some(".kts".as_ref()));
    if let Some(kts) = inside {
        let scope = kts.parent().unwrap_or(kts);
        anyhow::bail!(
            "{} is in {}, the index folder of the scope {}: crawl and index the scope itself",
            dir.display(),
            kts.display(),
            scope.display()
        );
    }
    Ok(())
}

/// Refuses a knowledge root (a folder holding indexed scopes, not itself one)
/// where a scope is wanted: an index made there would turn the root into one
/// scope and hide its scopes from every question asked of it.
pub fn refuse_knowledge_root(dir: &Path) -> anyhow::Result<()> {
    if is_scope(dir) {
        return Ok(());
    }
    let Ok(found) = discover_scopes(dir) else {
        return Ok(());
    };
    let scopes: Vec<&str> = found
        .scopes
        .iter()
        .filter(|scope| scope.indexed)
        .map(|scope| scope.slug.as_str())
        .collect();
    // A few names show what is meant; a root's thousands would bury the advice.
    const NAMED: usize = 3;
    if !scopes.is_empty() {
        let more = match scopes.len().saturating_sub(NAMED) {
            0 => String::new(),
            more => format!(" and {more} more"),
        };
        anyhow::bail!(
            "{} is a knowledge root (indexed scopes under it: {}{more}): \
             crawl and index each scope (pipelines/reindex ROOT does them all), not the root",
            dir.display(),
            scopes[..scopes.len().min(NAMED)].join(", ")
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_in_an_index_folder_is_no_scope() {
        let scope = tempfile::tempdir().unwrap();
        let documents = scope.path().join(".kts/documents");
        std::fs::create_dir_all(&documents).unwrap();
        let refused = refuse_index_folder(&documents).unwrap_err().to_string();
        assert!(
            refused.ends_with(&format!(
                "the index folder of the scope {}: crawl and index the scope itself",
                scope.path().canonicalize().unwrap().display()
            )),
            "{refused}"
        );
        assert!(refuse_index_folder(&scope.path().join(".kts")).is_err());
        assert!(refuse_index_folder(scope.path()).is_ok());
    }

    #[test]
    fn scopes_get_unique_slugs_in_name_order() {
        let root = tempfile::tempdir().unwrap();
        for name in [
            "HR Policies",
            "hr-policies",
            "Support",
            ".hidden",
            "hr_policies",
        ] {
            std::fs::create_dir(root.path().join(name)).unwrap();
        }
        std::fs::write(root.path().join("notes.txt"), "not a scope").unwrap();
        std::fs::create_dir_all(root.path().join("Support/.kts")).unwrap();
        std::fs::write(root.path().join("Support/.kts/kts.db"), "").unwrap();
        let found = discover_scopes(root.path()).unwrap();
        let slugs: Vec<&str> = found.scopes.iter().map(|s| s.slug.as_str()).collect();
        assert_eq!(
            slugs,
            ["hr_policies", "support", "hr_policies_2", "hr_policies_3"]
        );
        assert_eq!(found.collisions["hr_policies"].len(), 3);
        assert!(found.scopes[1].indexed && !found.scopes[0].indexed);
    }

    #[test]
    fn a_folder_keeps_the_slug_it_was_given_when_another_gives_it_too() {
        // "HR docs" sorts before "hr-docs": in name order it would take hr_docs.
        for (had, newcomer) in [("hr-docs", "HR docs"), ("HR docs", "hr-docs")] {
            let root = tempfile::tempdir().unwrap();
            std::fs::create_dir(root.path().join(had)).unwrap();
            let given = discover_scopes(root.path()).unwrap();
            assert_eq!(given.scopes[0].slug, "hr_docs");
            let given: BTreeMap<String, String> = [(had.to_string(), "hr_docs".to_string())].into();
            std::fs::create_dir(root.path().join(newcomer)).unwrap();
            let found = discover_scopes_keeping(root.path(), &given).unwrap();
            let slug_of = |name: &str| {
                let scope = found.scopes.iter().find(|s| s.path.ends_with(name));
                scope.unwrap().slug.clone()
            };
            assert_eq!(slug_of(had), "hr_docs");
            assert_eq!(slug_of(newcomer), "hr_docs_2");
            assert_eq!(found.collisions["hr_docs"].len(), 2);
        }
    }

    #[test]
    fn a_newcomer_takes_the_first_free_slug_and_a_stale_one_is_not_kept() {
        let root = tempfile::tempdir().unwrap();
        for name in ["A-B", "a b", "a_b", "c"] {
            std::fs::create_dir(root.path().join(name)).unwrap();
        }
        let given: BTreeMap<String, String> = [
            // Given when "a-b" was there too: the one between is gone.
            ("a_b".to_string(), "a_b_3".to_string()),
            // Another name's slug, or a slug made otherwise: given anew.
            ("c".to_string(), "a_b".to_string()),
            ("a b".to_string(), "a_b_02".to_string()),
        ]
        .into();
        let found = discover_scopes_keeping(root.path(), &given).unwrap();
        let slugs: Vec<&str> = found.scopes.iter().map(|s| s.slug.as_str()).collect();
        assert_eq!(slugs, ["a_b", "a_b_2", "a_b_3", "c"]);
    }

    #[test]
    fn a_linked_folder_is_a_scope_and_a_linked_file_is_not() {
        let root = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::create_dir(elsewhere.path().join("Legal")).unwrap();
        std::fs::write(elsewhere.path().join("notes.txt"), "").unwrap();
        std::os::unix::fs::symlink(elsewhere.path().join("Legal"), root.path().join("Legal"))
            .unwrap();
        std::os::unix::fs::symlink(
            elsewhere.path().join("notes.txt"),
            root.path().join("notes"),
        )
        .unwrap();
        std::os::unix::fs::symlink(root.path().join("gone"), root.path().join("Dangling")).unwrap();
        let found = discover_scopes(root.path()).unwrap();
        let slugs: Vec<&str> = found.scopes.iter().map(|s| s.slug.as_str()).collect();
        assert_eq!(slugs, ["legal"]);
    }

    #[test]
    fn a_root_of_many_scopes_is_refused_naming_a_few() {
        let root = tempfile::tempdir().unwrap();
        for name in ["a", "b", "c", "d", "e"] {
            std::fs::create_dir_all(root.path().join(name).join(".kts")).unwrap();
            std::fs::write(root.path().join(name).join(".kts/kts.db"), "").unwrap();
        }
        let refused = refuse_knowledge_root(root.path()).unwrap_err().to_string();
        assert!(
            refused.contains("(indexed scopes under it: a, b, c and 2 more)"),
            "{refused}"
        );
    }
}
