//! Record fields that name files: a `path` must stay inside its scope and a
//! `doc_id` must have the form kts gives it. Records are input too, and may be
//! written by hand; every tool that turns such a field into a file path checks
//! it here first and reports a failure as `unsafe-path`.

use std::path::{Component, Path, PathBuf};

/// The scope's own folder, which no document path may name.
const INDEX_FOLDER: &str = ".kts";
/// Hex digits in a `doc_id` (a prefix of the SHA-256 of the document's path).
pub const DOC_ID_LEN: usize = 16;

/// Why a record field cannot name a file of the scope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsafePath(pub String);

impl std::fmt::Display for UnsafePath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UnsafePath {}

/// The path relative to the scope root in the form kts-crawl writes it
/// (`/`-separated, no `.` or `..` parts), or why it names nothing inside the
/// scope: empty, absolute, escaping the root through `..`, or inside `.kts/`.
/// Checks the text only; [`resolve_in_scope`] also follows symbolic links.
pub fn normalize(path: &str) -> Result<String, UnsafePath> {
    let refuse = |why: &str| Err(UnsafePath(format!("path {path:?} {why}")));
    if path.is_empty() {
        return refuse("is empty");
    }
    if path.contains('\0') {
        return refuse("contains a NUL byte");
    }
    if path.starts_with('/') {
        return refuse("is absolute; a record's path is relative to its scope root");
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return refuse("leaves the scope root through '..'");
                }
            }
            _ => parts.push(part),
        }
    }
    match parts.first() {
        None => refuse("names the scope root itself, not a file"),
        Some(&INDEX_FOLDER) => refuse("is inside the scope's index folder .kts/"),
        Some(_) => Ok(parts.join("/")),
    }
}

/// The file a record's path names under `root`, once symbolic links are
/// resolved, or why it is not inside the scope. The file must exist.
pub fn resolve_in_scope(root: &Path, path: &str) -> Result<PathBuf, ResolveError> {
    let relative = normalize(path).map_err(ResolveError::Unsafe)?;
    let root = root.canonicalize().map_err(|e| {
        ResolveError::Io(format!(
            "cannot open the scope root {}: {e}",
            root.display()
        ))
    })?;
    let joined = root.join(&relative);
    let resolved = joined
        .canonicalize()
        .map_err(|e| ResolveError::Io(format!("cannot read {}: {e}", joined.display())))?;
    let inside = resolved.strip_prefix(&root).is_ok_and(|rest| {
        rest.components().next() != Some(Component::Normal(INDEX_FOLDER.as_ref()))
    });
    if !inside {
        return Err(ResolveError::Unsafe(UnsafePath(format!(
            "path {path:?} resolves through a symbolic link to {}, outside the scope {}",
            resolved.display(),
            root.display()
        ))));
    }
    Ok(resolved)
}

/// Why [`resolve_in_scope`] gave no file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResolveError {
    /// The path leaves the scope (`unsafe-path`).
    Unsafe(UnsafePath),
    /// The root or the file cannot be read (`io`).
    Io(String),
}

/// A document's id: stable for its path within the scope, whatever its
/// content. The first 16 hex digits of the SHA-256 of the path.
pub fn doc_id(path: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(path.as_bytes())[..DOC_ID_LEN / 2]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Checks that `doc_id` has the form kts gives it: 16 lowercase hex digits.
pub fn check_doc_id(doc_id: &str) -> Result<(), UnsafePath> {
    let well_formed = doc_id.len() == DOC_ID_LEN
        && doc_id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if well_formed {
        Ok(())
    } else {
        Err(UnsafePath(format!(
            "doc_id {doc_id:?} is not one kts gives ({DOC_ID_LEN} lowercase hex digits)"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_inside_the_scope_are_normalised() {
        assert_eq!(normalize("hr/leave.docx").unwrap(), "hr/leave.docx");
        assert_eq!(normalize("./hr//a/../leave.docx").unwrap(), "hr/leave.docx");
        assert_eq!(normalize("notes..md").unwrap(), "notes..md");
        assert_eq!(normalize(".kts-notes/a.md").unwrap(), ".kts-notes/a.md");
    }

    #[test]
    fn paths_leaving_the_scope_are_refused() {
        for path in [
            "",
            ".",
            "a/..",
            "/etc/passwd",
            "../outside/secret.md",
            "a/../../secret.md",
            "a/../../../x",
            ".kts/kts.db",
            "./.kts/documents/x/content.md",
            "a\0b",
        ] {
            assert!(normalize(path).is_err(), "{path:?} was accepted");
        }
        let why = normalize("../outside/secret.md").unwrap_err().to_string();
        assert!(
            why.contains("../outside/secret.md") && why.contains("'..'"),
            "{why}"
        );
    }

    #[test]
    fn doc_ids_have_one_form() {
        assert!(check_doc_id("0123456789abcdef").is_ok());
        assert!(check_doc_id(&doc_id("a/b.md")).is_ok());
        assert_ne!(doc_id("a/b.md"), doc_id("a/c.md"));
        for bad in [
            "../../../x",
            "0123456789ABCDEF",
            "0123456789abcde",
            "",
            "0123456789abcdef0",
        ] {
            assert!(check_doc_id(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[cfg(unix)]
    #[test]
    fn symbolic_links_must_stay_inside_the_scope() {
        let base = std::env::temp_dir().join(format!("kts-scope-path-{}", std::process::id()));
        let (scope, outside) = (base.join("scope"), base.join("outside"));
        std::fs::create_dir_all(scope.join("docs")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret.md"), "secret").unwrap();
        std::fs::write(scope.join("docs/a.md"), "a").unwrap();
        std::os::unix::fs::symlink(outside.join("secret.md"), scope.join("docs/link.md")).unwrap();
        std::os::unix::fs::symlink(scope.join("docs/a.md"), scope.join("inner.md")).unwrap();

        assert!(resolve_in_scope(&scope, "docs/a.md").is_ok());
        assert!(resolve_in_scope(&scope, "inner.md").is_ok());
        assert!(matches!(
            resolve_in_scope(&scope, "docs/link.md"),
            Err(ResolveError::Unsafe(_))
        ));
        assert!(matches!(
            resolve_in_scope(&scope, "docs/missing.md"),
            Err(ResolveError::Io(_))
        ));
        std::fs::remove_dir_all(&base).unwrap();
    }
}
