//! Attachment names, made safe as the last component of a document path.
//!
//! A name comes from the sender and is untrusted: `../../etc/passwd`, an
//! absolute path, NUL and other control characters, `#` (which separates a
//! file's path from a part's anchor), characters Windows refuses in file
//! names (`Re: budget.eml`) or a name of thousands of characters must all
//! end as one plain, short, unique file name.

use std::collections::HashSet;

/// Characters kept of a name; a longer one keeps its end (the extension).
const MAX_NAME_CHARS: usize = 100;

/// The names given out within one message, so no two parts share a path.
#[derive(Default)]
pub struct Unique {
    taken: HashSet<String>,
}

/// Why an attachment is not at the name its sender gave.
#[derive(Debug, PartialEq)]
pub enum Renamed {
    /// The name was not a safe file name.
    MadeSafe,
    /// An earlier attachment of the message has the name.
    Numbered,
}

impl Unique {
    /// A safe, unused name for an attachment named `given` (or `fallback`
    /// when it has none), and why it is not the given name, if it is not.
    pub fn claim(&mut self, given: Option<&str>, fallback: &str) -> (String, Option<Renamed>) {
        let safe = given.and_then(safe_name);
        let made_safe = given.is_some() && safe.as_deref() != given;
        let base = safe
            .or_else(|| safe_name(fallback))
            .unwrap_or_else(|| "attachment".into());
        let mut name = base.clone();
        let mut n = 1;
        while !self.taken.insert(name.clone()) {
            n += 1;
            name = numbered(&base, n);
        }
        let renamed = if made_safe {
            Some(Renamed::MadeSafe)
        } else {
            (given.is_some() && n > 1).then_some(Renamed::Numbered)
        };
        (name, renamed)
    }
}

/// Characters that Windows refuses in a file name (besides the path
/// separators and control characters).
const NOT_IN_FILE_NAMES: [char; 7] = ['<', '>', ':', '"', '|', '?', '*'];

/// The name as a single safe path component, or `None` when nothing of it is left.
fn safe_name(given: &str) -> Option<String> {
    // Only the last component of a path counts, as a mail client saving it would do.
    let last = given.rsplit(['/', '\\']).next().unwrap_or(given);
    let cleaned: String = last
        .chars()
        .map(|c| match c {
            c if c.is_control() || c == '#' => '_',
            c if NOT_IN_FILE_NAMES.contains(&c) => '-',
            c => c,
        })
        .collect();
    let cleaned = cleaned.trim().trim_end_matches('.').to_string();
    if cleaned.is_empty() || cleaned.chars().all(|c| c == '.' || c == '_') {
        return None;
    }
    let count = cleaned.chars().count();
    Some(if count > MAX_NAME_CHARS {
        cleaned.chars().skip(count - MAX_NAME_CHARS).collect()
    } else {
        cleaned
    })
}

/// `report-2.pdf` for the second `report.pdf`.
fn numbered(name: &str, n: usize) -> String {
    match name.rsplit_once('.') {
        Some((stem, extension)) if !stem.is_empty() => format!("{stem}-{n}.{extension}"),
        _ => format!("{name}-{n}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_names_become_one_plain_component() {
        let mut names = Unique::default();
        assert_eq!(
            names.claim(Some("../../etc/passwd"), "attachment-1"),
            ("passwd".into(), Some(Renamed::MadeSafe))
        );
        assert_eq!(
            names.claim(Some("/abs/x.pdf"), "attachment-2"),
            ("x.pdf".into(), Some(Renamed::MadeSafe))
        );
        assert_eq!(
            names.claim(Some("C:\\Users\\a\\y.docx"), "attachment-3"),
            ("y.docx".into(), Some(Renamed::MadeSafe))
        );
        assert_eq!(
            names.claim(Some("a\0b#c.txt"), "attachment-4"),
            ("a_b_c.txt".into(), Some(Renamed::MadeSafe))
        );
        assert_eq!(
            names.claim(Some(".."), "attachment-5"),
            ("attachment-5".into(), Some(Renamed::MadeSafe))
        );
        assert_eq!(
            names.claim(None, "attachment-6"),
            ("attachment-6".into(), None)
        );
        let (long, renamed) = names.claim(Some(&format!("{}.pdf", "x".repeat(5000))), "a");
        assert!(
            renamed.is_some() && long.ends_with(".pdf") && long.chars().count() == MAX_NAME_CHARS
        );
        for name in [&long, "passwd", "x.pdf", "y.docx", "a_b_c.txt"] {
            assert_eq!(
                kts_record::scope_path::normalize(&format!("m.eml#attachment/{name}")).unwrap(),
                format!("m.eml#attachment/{name}")
            );
        }
    }

    #[test]
    fn characters_windows_refuses_become_dashes() {
        let mut names = Unique::default();
        assert_eq!(
            names.claim(None, "Re: budget.eml"),
            ("Re- budget.eml".into(), None)
        );
        assert_eq!(
            names.claim(Some("Q3 <draft> \"final\" a|b?*.txt"), "a"),
            (
                "Q3 -draft- -final- a-b--.txt".into(),
                Some(Renamed::MadeSafe)
            )
        );
    }

    #[test]
    fn repeated_names_are_numbered() {
        let mut names = Unique::default();
        assert_eq!(names.claim(Some("r.pdf"), "a"), ("r.pdf".into(), None));
        assert_eq!(
            names.claim(Some("r.pdf"), "a"),
            ("r-2.pdf".into(), Some(Renamed::Numbered))
        );
        assert_eq!(names.claim(Some("r.pdf"), "a").0, "r-3.pdf");
        assert_eq!(names.claim(Some("notes"), "a").0, "notes");
        assert_eq!(names.claim(Some("notes"), "a").0, "notes-2");
        assert_eq!(names.claim(None, "m.eml"), ("m.eml".into(), None));
        assert_eq!(
            names.claim(None, "m.eml"),
            ("m-2.eml".into(), None),
            "a name the sender did not give is no renaming"
        );
    }
}
