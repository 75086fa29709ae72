//! Comparing the generated files with the ones under the root: reporting the
//! differences (`--check`), or writing the files that differ.

use std::collections::BTreeSet;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::Context;
use kts_cli::{Exit, Messages};

use crate::{Generated, REGENERATE};

/// Lines of the committed and generated text shown after the first difference.
const DIFF_LINES: usize = 4;
/// Unchanged lines shown before the first difference.
const CONTEXT_LINES: usize = 2;

/// A committed file that does not match what the code generates.
#[derive(Debug, PartialEq, Eq)]
pub enum Problem {
    Missing(PathBuf),
    Stale {
        path: PathBuf,
        diff: String,
    },
    /// In a generated folder but no longer generated.
    Orphan(PathBuf),
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Missing(path) => write!(f, "missing: {}", path.display()),
            Problem::Stale { path, diff } => write!(f, "stale: {}\n{diff}", path.display()),
            Problem::Orphan(path) => write!(f, "no longer generated: {}", path.display()),
        }
    }
}

/// Every difference between `files` and what is under `root`.
pub fn problems(root: &Path, files: &[Generated]) -> anyhow::Result<Vec<Problem>> {
    let mut found = Vec::new();
    for file in files {
        match read_if_exists(&root.join(&file.path))? {
            None => found.push(Problem::Missing(file.path.clone())),
            Some(committed) if committed != file.contents => found.push(Problem::Stale {
                path: file.path.clone(),
                diff: first_difference(&committed, &file.contents),
            }),
            Some(_) => {}
        }
    }
    found.extend(orphans(root, files)?.into_iter().map(Problem::Orphan));
    Ok(found)
}

/// Prints every problem and returns the exit status `--check` ends with.
pub(crate) fn report(
    root: &Path,
    files: &[Generated],
    messages: &Messages,
) -> anyhow::Result<Exit> {
    let found = problems(root, files)?;
    if found.is_empty() {
        messages.info(&format!("{} generated files are up to date", files.len()));
        return Ok(Exit::Ok);
    }
    for problem in &found {
        messages.info(&problem.to_string());
    }
    messages.info(&format!(
        "{} generated files are out of date; run `{REGENERATE}` and commit the result",
        found.len()
    ));
    Ok(Exit::SomeFailed)
}

/// Writes the files that differ, removes orphans, and says what it did.
pub(crate) fn write(root: &Path, files: &[Generated]) -> anyhow::Result<Vec<String>> {
    let mut done = Vec::new();
    for problem in problems(root, files)? {
        match problem {
            Problem::Missing(path) | Problem::Stale { path, .. } => {
                let file = files
                    .iter()
                    .find(|f| f.path == path)
                    .expect("a generated path");
                let target = root.join(&path);
                if let Some(parent) = target.parent() {
                    fs::create_dir_all(parent)
                        .with_context(|| format!("cannot create {}", parent.display()))?;
                }
                fs::write(&target, &file.contents)
                    .with_context(|| format!("cannot write {}", target.display()))?;
                done.push(format!("wrote {}", path.display()));
            }
            Problem::Orphan(path) => {
                let target = root.join(&path);
                fs::remove_file(&target)
                    .with_context(|| format!("cannot remove {}", target.display()))?;
                done.push(format!("removed {}", path.display()));
            }
        }
    }
    if done.is_empty() {
        done.push(format!("{} generated files are up to date", files.len()));
    }
    Ok(done)
}

fn read_if_exists(path: &Path) -> anyhow::Result<Option<String>> {
    match fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Files in the generated folders that the generator does not produce.
/// `schemas/` also holds handwritten files, so only `*.schema.json` counts there.
fn orphans(root: &Path, files: &[Generated]) -> anyhow::Result<Vec<PathBuf>> {
    let generated: BTreeSet<&Path> = files.iter().map(|f| f.path.as_path()).collect();
    let mut found = Vec::new();
    for (folder, suffix) in [
        ("schemas", ".schema.json"),
        ("man", ".1"),
        ("completions", ""),
    ] {
        for path in files_in(&root.join(folder))? {
            let relative = Path::new(folder).join(path.file_name().expect("a file name"));
            let name = relative.to_string_lossy();
            if name.ends_with(suffix) && !generated.contains(relative.as_path()) {
                found.push(relative);
            }
        }
    }
    Ok(found)
}

fn files_in(folder: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let entries = match fs::read_dir(folder) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("cannot list {}", folder.display())),
    };
    let mut paths = Vec::new();
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot list {}", folder.display()))?;
        if entry.file_type()?.is_file() {
            paths.push(entry.path());
        }
    }
    paths.sort();
    Ok(paths)
}

/// A short unified-style diff from the first line that differs.
fn first_difference(committed: &str, generated: &str) -> String {
    let old: Vec<&str> = committed.lines().collect();
    let new: Vec<&str> = generated.lines().collect();
    let first = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let context = first.saturating_sub(CONTEXT_LINES);
    let mut diff = format!("  @@ line {} @@ (- committed, + generated)\n", first + 1);
    for line in &old[context..first] {
        diff.push_str(&format!("   {line}\n"));
    }
    for line in old.iter().skip(first).take(DIFF_LINES) {
        diff.push_str(&format!("  -{line}\n"));
    }
    for line in new.iter().skip(first).take(DIFF_LINES) {
        diff.push_str(&format!("  +{line}\n"));
    }
    if old.len() == new.len() && first == old.len() {
        diff.push_str("  (the files differ only in line endings or the final newline)\n");
    }
    diff.truncate(diff.trim_end().len());
    diff
}

#[cfg(test)]
mod tests {
    use super::first_difference;

    #[test]
    fn diff_shows_context_and_both_sides() {
        let diff = first_difference("a\nb\nc\nd\n", "a\nb\nc\nX\n");
        assert_eq!(
            diff,
            "  @@ line 4 @@ (- committed, + generated)\n   b\n   c\n  -d\n  +X"
        );
    }
}
