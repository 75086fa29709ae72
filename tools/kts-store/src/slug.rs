//! Scope slugs: the names scopes are asked for by (`/slug question`).

use unicode_normalization::UnicodeNormalization;

/// A scope's slug from its folder name: lowercase; spaces and hyphens become
/// `_` (runs of them one `_`); other characters that are not letters or
/// digits are dropped. `Customer Support - EMEA` → `customer_support_emea`.
pub fn scope_slug(folder_name: &str) -> String {
    let mut slug = String::new();
    // Composed first: a name written decomposed (as macOS writes file names,
    // "e" + U+0301) would otherwise lose its accents' marks and not match
    // the same name typed composed.
    for c in folder_name.nfc() {
        if c == ' ' || c == '-' || c == '_' {
            if !slug.is_empty() && !slug.ends_with('_') {
                slug.push('_');
            }
        } else if c.is_alphanumeric() {
            slug.extend(c.to_lowercase());
        }
    }
    slug.trim_end_matches('_').to_string()
}

/// Whether a slug typed by a user names a scope's slug: accents need not be
/// typed (`/reseau_docs` names `réseau_docs`), as the search ignores them too.
pub fn names_slug(typed: &str, slug: &str) -> bool {
    let unaccented = |s: &str| -> String {
        s.nfd()
            .filter(|c| !unicode_normalization::char::is_combining_mark(*c))
            .collect()
    };
    let typed = scope_slug(typed);
    typed == slug || unaccented(&typed) == unaccented(slug)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_follow_the_folder_name() {
        assert_eq!(
            scope_slug("Customer Support - EMEA"),
            "customer_support_emea"
        );
        assert_eq!(scope_slug("hr-policies (2024)!"), "hr_policies_2024");
        assert_eq!(scope_slug("Ünternehmen"), "ünternehmen");
    }

    #[test]
    fn a_slug_may_be_typed_without_its_accents() {
        assert!(names_slug("reseau_docs", "réseau_docs"));
        assert!(names_slug("Réseau-Docs", "réseau_docs"));
        assert!(!names_slug("reseau", "réseau_docs"));
    }

    #[test]
    fn a_decomposed_name_has_the_slug_of_the_composed_one() {
        let decomposed = "Re\u{301}sume\u{301}s";
        assert_eq!(scope_slug(decomposed), "résumés");
        assert_eq!(scope_slug(decomposed), scope_slug("Résumés"));
    }
}
