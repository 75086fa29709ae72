//! Escaping shared by the XML and HTML writers.

/// Escapes text for XML/HTML content and attribute values, dropping the
/// control characters XML 1.0 does not allow.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if c < ' ' => {}
            c => out.push(c),
        }
    }
    out
}
