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
    fn a_decomposed_name_has_the_slug_of_the_composed_one() {
        let decomposed = "Re\u{301}sume\u{301}s";
        assert_eq!(scope_slug(decomposed), "résumés");
        assert_eq!(scope_slug(decomposed), scope_slug("Résumés"));
    }
}
