//! What the model reads of a chunk: its text, preceded by its document's
//! title and the headings above it that the text does not already start
//! with. A chunk in the middle of a section says little about its subject on
//! its own ("It is disabled by default."); the title and the heading path say
//! what "it" is, as a reader of the page knows from its top.

use serde_json::Value;

/// The text to embed for a `kts.chunk/1` record with this `text`, in a
/// document with this `title` (empty: unknown).
pub fn embedding_input(text: &str, chunk: &Value, title: &str) -> String {
    let mut context: Vec<&str> = chunk
        .get("heading_path")
        .and_then(Value::as_array)
        .map(|path| path.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let title = title.trim();
    let titled = context
        .first()
        .is_some_and(|first| first.trim().eq_ignore_ascii_case(title));
    if !title.is_empty() && !titled {
        context.insert(0, title);
    }
    context.retain(|heading| !heading.trim().is_empty());
    let opening = past_markers(text).trim_start_matches('#').trim_start();
    // What the text starts with is not said twice: its own heading, or a
    // title it opens with (no headings above it).
    if context
        .last()
        .is_some_and(|last| opening.starts_with(last.trim()))
    {
        context.pop();
    }
    if context.is_empty() {
        return text.to_string();
    }
    format!("{}\n\n{text}", context.join(" > "))
}

/// The text past its leading whitespace and markers (`<!-- slide: 3 -->`).
fn past_markers(text: &str) -> &str {
    let mut rest = text.trim_start();
    while let Some(comment) = rest.strip_prefix("<!--") {
        match comment.find("-->") {
            Some(end) => rest = comment[end + 3..].trim_start(),
            None => break,
        }
    }
    rest
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_chunk_inside_a_section_is_read_with_its_headings() {
        let chunk = json!({"heading_path": ["Guide", "Installing"]});
        assert_eq!(
            embedding_input("Run the installer.", &chunk, ""),
            "Guide > Installing\n\nRun the installer."
        );
    }

    #[test]
    fn the_heading_a_chunk_starts_with_is_not_repeated() {
        let chunk = json!({"heading_path": ["Guide", "Installing"]});
        assert_eq!(
            embedding_input("## Installing\n\nRun the installer.", &chunk, ""),
            "Guide\n\n## Installing\n\nRun the installer."
        );
        let top = json!({"heading_path": ["Guide"]});
        assert_eq!(
            embedding_input("# Guide\n\nIntro.", &top, "Guide"),
            "# Guide\n\nIntro."
        );
    }

    #[test]
    fn a_heading_after_a_marker_is_the_one_the_chunk_starts_with() {
        let chunk = json!({"heading_path": ["Roadmap"]});
        let text = "<!-- slide: 3 -->\n\n## Roadmap\n\n- Q1";
        assert_eq!(embedding_input(text, &chunk, ""), text);
    }

    #[test]
    fn a_chunk_without_headings_is_read_as_it_is() {
        assert_eq!(
            embedding_input("Plain text.", &json!({}), ""),
            "Plain text."
        );
        assert_eq!(
            embedding_input("Plain text.", &json!({"heading_path": []}), ""),
            "Plain text."
        );
        assert_eq!(
            embedding_input("Plain text.", &json!({"heading_path": [" "]}), " "),
            "Plain text."
        );
    }

    #[test]
    fn a_table_chunk_is_read_with_its_header_row() {
        let chunk = json!({"heading_path": ["Sales", "| Name | City |"]});
        assert_eq!(
            embedding_input("| Ada | Paris |", &chunk, ""),
            "Sales > | Name | City |\n\n| Ada | Paris |"
        );
    }

    #[test]
    fn the_title_comes_first_unless_the_headings_or_the_text_start_with_it() {
        let chunk = json!({"heading_path": ["Summary"]});
        assert_eq!(
            embedding_input("It adds bounds.", &chunk, "0192-bounds-on-object-types"),
            "0192-bounds-on-object-types > Summary\n\nIt adds bounds."
        );
        let titled = json!({"heading_path": ["Guide", "Installing"]});
        assert_eq!(
            embedding_input("Run it.", &titled, "guide"),
            "Guide > Installing\n\nRun it."
        );
        let none = json!({"heading_path": []});
        assert_eq!(
            embedding_input("Quarterly report\n\nSales rose.", &none, "Quarterly report"),
            "Quarterly report\n\nSales rose."
        );
        assert_eq!(
            embedding_input("Sales rose.", &none, "Quarterly report"),
            "Quarterly report\n\nSales rose."
        );
    }
}
