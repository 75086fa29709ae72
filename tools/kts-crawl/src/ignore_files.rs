//! The files a scope's ignore files leave out, as ripgrep and git read them:
//! `.ktsignore` and `.ignore` in any folder of the scope, and `.gitignore`
//! when the scope is in a git work tree (there also those of the folders
//! above it, up to the work tree's top). A nearer folder's rules come
//! first; within a folder `.ktsignore` outranks `.ignore`, which outranks
//! `.gitignore`; `!pattern` takes a path back.

use std::cell::Cell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use kts_cli::Messages;

/// A folder's ignore files, weakest first.
const IGNORE_FILES: [&str; 3] = [".gitignore", ".ignore", ".ktsignore"];

/// The rules of every folder met so far, and how many paths they left out.
pub struct IgnoreFiles<'a> {
    root: PathBuf,
    in_git: bool,
    /// The rules of the folders above the root, nearest first.
    above: Vec<Gitignore>,
    folders: HashMap<PathBuf, Gitignore>,
    messages: &'a Messages,
    /// Name each path left out (info messages).
    verbose: bool,
    left_out: &'a Cell<usize>,
}

impl<'a> IgnoreFiles<'a> {
    pub fn new(
        root: &Path,
        messages: &'a Messages,
        verbose: bool,
        left_out: &'a Cell<usize>,
    ) -> Self {
        let top = git_top(root);
        let above = match &top {
            Some(top) => root
                .ancestors()
                .skip(1)
                .take_while(|dir| dir.starts_with(top))
                .map(|dir| rules(dir, true, messages))
                .collect(),
            None => Vec::new(),
        };
        IgnoreFiles {
            root: root.to_path_buf(),
            in_git: top.is_some(),
            above,
            folders: HashMap::new(),
            messages,
            verbose,
            left_out,
        }
    }

    /// Whether the rules leave `path` (a file or folder under the root) out,
    /// counting it, and naming it with `verbose`.
    pub fn leave_out(&mut self, path: &Path, is_dir: bool) -> bool {
        if !self.ignores(path, is_dir) {
            return false;
        }
        self.left_out.set(self.left_out.get() + 1);
        if self.verbose {
            let relative = path.strip_prefix(&self.root).unwrap_or(path);
            self.messages.info(&format!(
                "skipped {}{}: left out by an ignore file",
                relative.display(),
                if is_dir { "/" } else { "" }
            ));
        }
        true
    }

    fn ignores(&mut self, path: &Path, is_dir: bool) -> bool {
        let in_scope = path
            .ancestors()
            .skip(1)
            .take_while(|dir| dir.starts_with(&self.root));
        for dir in in_scope {
            let (in_git, messages) = (self.in_git, self.messages);
            let rules = self
                .folders
                .entry(dir.to_path_buf())
                .or_insert_with(|| rules(dir, in_git, messages));
            match rules.matched(path, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        self.above
            .iter()
            .find_map(|rules| match rules.matched(path, is_dir) {
                Match::Ignore(_) => Some(true),
                Match::Whitelist(_) => Some(false),
                Match::None => None,
            })
            == Some(true)
    }
}

/// The rules of `dir`'s ignore files (`.gitignore` only in a git work tree);
/// a pattern that cannot be read is warned about and left aside.
fn rules(dir: &Path, in_git: bool, messages: &Messages) -> Gitignore {
    let mut builder = GitignoreBuilder::new(dir);
    for name in IGNORE_FILES {
        if name == ".gitignore" && !in_git {
            continue;
        }
        let file = dir.join(name);
        if file.is_file()
            && let Some(err) = builder.add(&file)
        {
            messages.warn(&format!("{}: {err}", file.display()));
        }
    }
    builder.build().unwrap_or_else(|err| {
        messages.warn(&format!("ignore files of {}: {err}", dir.display()));
        Gitignore::empty()
    })
}

/// The top of the git work tree holding `root`, if any.
fn git_top(root: &Path) -> Option<PathBuf> {
    root.ancestors()
        .find(|dir| dir.join(".git").exists())
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn left_out(root: &Path, paths: &[(&str, bool)]) -> Vec<String> {
        let messages = Messages::new("test");
        let count = Cell::new(0);
        let mut rules = IgnoreFiles::new(root, &messages, false, &count);
        paths
            .iter()
            .filter(|(path, is_dir)| rules.leave_out(&root.join(path), *is_dir))
            .map(|(path, _)| path.to_string())
            .collect()
    }

    #[test]
    fn gitignore_counts_only_in_a_git_work_tree() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("docs");
        std::fs::create_dir_all(root.join("build")).unwrap();
        std::fs::write(root.join(".gitignore"), "build/\n*.log\n").unwrap();
        let paths = [("build", true), ("a.log", false), ("a.md", false)];
        assert!(left_out(&root, &paths).is_empty());
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        assert_eq!(left_out(&root, &paths), ["build", "a.log"]);
    }

    #[test]
    fn nearer_and_stronger_rules_win() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("drafts/keep")).unwrap();
        std::fs::write(root.join(".gitignore"), "*.md\n").unwrap();
        std::fs::write(root.join(".ktsignore"), "!*.md\ndrafts/\n").unwrap();
        let paths = [("a.md", false), ("drafts", true), ("b.txt", false)];
        assert_eq!(left_out(root, &paths), ["drafts"]);
    }
}
