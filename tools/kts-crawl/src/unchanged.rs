//! `--unchanged-scopes`: which scopes of a knowledge root have nothing to do,
//! found in one process. A batch over thousands of scopes would otherwise
//! start a crawl per scope only to learn that nothing changed.

use std::io::{BufRead, Write};
use std::path::Path;

use anyhow::Context;
use kts_cli::Messages;
use kts_record::FileStatus;

use crate::ignore_files::IgnoreFiles;
use crate::manifest::Manifest;
use crate::walk::{self, Walked};
use crate::{baseline, describe};

/// Reads scope folder names (relative to `root`), one a line, and prints
/// those where a `--changed-only` crawl would write nothing: every file
/// indexed as it is now, nothing deleted. A scope without a readable index,
/// or with anything that cannot be read, is not printed (its own crawl will
/// say what is wrong). Only the crawl manifest of an unchanged scope is
/// written, when a file was touched without changing.
pub fn list(root: &Path, names: impl BufRead, out: &mut impl Write) -> anyhow::Result<()> {
    let silent = Messages::new("kts-crawl").quiet(true);
    for name in names.lines() {
        let name = name.context("reading the scope names on stdin")?;
        if name.is_empty() {
            continue;
        }
        if has_nothing_to_do(&root.join(&name), &silent) {
            writeln!(out, "{name}")?;
        }
    }
    out.flush()?;
    Ok(())
}

fn has_nothing_to_do(scope: &Path, silent: &Messages) -> bool {
    let Ok(scope) = scope.canonicalize() else {
        return false;
    };
    if !kts_store::db_path(&scope).is_file() {
        return false;
    }
    let Ok(previous) = Manifest::load(&scope) else {
        return false;
    };
    let Ok(baseline) = baseline::from_index(&scope, &previous) else {
        return false;
    };
    let mut found = Manifest::default();
    found.set_indexed(true);
    let mut reread = false;
    let left_out = std::cell::Cell::new(0);
    let ignore_files = IgnoreFiles::new(&scope, silent, false, &left_out);
    for walked in walk::documents(&scope, silent, Some(ignore_files)) {
        let Walked::File(file) = walked else {
            return false;
        };
        reread |= previous
            .get(&file.path)
            .is_none_or(|old| !file.is_as_in(old));
        match describe(&previous, &file) {
            Ok(Some(entry))
                if baseline.status(&file.path, &entry.sha256) == FileStatus::Unchanged =>
            {
                found.insert(file.path, entry)
            }
            Ok(None) => {}
            _ => return false,
        }
    }
    if !baseline.missing_from(&found).is_empty() {
        return false;
    }
    // A file touched but not changed was read again: record its new time, as
    // a crawl would, so that the next check need not read it.
    !reread || found.save(&scope).is_ok()
}
