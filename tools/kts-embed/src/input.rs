//! What the model reads of a chunk: its text, preceded by the headings above
//! it that the text does not already start with. A chunk in the middle of a
//! section says little about its subject on its own ("It is disabled by
//! default."); its heading path says what "it" is, as a reader of the page
//! knows from the headings above.

use serde_json::Value;

/// The text to embed for a `kts.chunk/1` record with this `text`.
pub fn embedding_input(text: &str, chunk: &Value) -> String {
    let mut headings: Vec<&str> = chunk
        .get("heading_path")
        .and_then(Value::as_array)
        .map(|path| path.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    headings.retain(|heading| !heading.trim().is_empty());
    let opening = past_markers(text).trim_start_matches('#').trim_start();
    if headings
        .last()
        .is_some_and(|last| opening.starts_with(last.trim()))
    {
        headings.pop();
    }
    if headings.is_empty() {
        return text.to_string();
    }
    format!("{}\n\n{text}", headings.join(" > "))
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
            embedding_input("Run the installer.", &chunk),
            "Guide > Installing\n\nRun the installer."
        );
    }

    #[test]
    fn the_heading_a_chunk_starts_with_is_not_repeated() {
        let chunk = json!({"heading_path": ["Guide", "Installing"]});
        assert_eq!(
            embedding_input("## Installing\n\nRun the installer.", &chunk),
            "Guide\n\n## Installing\n\nRun the installer."
        );
        let top = json!({"heading_path": ["Guide"]});
        assert_eq!(
            embedding_input("# Guide\n\nIntro.", &top),
            "# Guide\n\nIntro."
        );
    }

    #[test]
    fn a_heading_after_a_marker_is_the_one_the_chunk_starts_with() {
        let chunk = json!({"heading_path": ["Roadmap"]});
        let text = "<!-- slide: 3 -->\n\n## Roadmap\n\n- Q1";
        assert_eq!(embedding_input(text, &chunk), text);
    }

    #[test]
    fn a_chunk_without_headings_is_read_as_it_is() {
        assert_eq!(embedding_input("Plain text.", &json!({})), "Plain text.");
        assert_eq!(
            embedding_input("Plain text.", &json!({"heading_path": []})),
            "Plain text."
        );
        assert_eq!(
            embedding_input("Plain text.", &json!({"heading_path": [" "]})),
            "Plain text."
        );
    }

    #[test]
    fn a_table_chunk_is_read_with_its_header_row() {
        let chunk = json!({"heading_path": ["Sales", "| Name | City |"]});
        assert_eq!(
            embedding_input("| Ada | Paris |", &chunk),
            "Sales > | Name | City |\n\n| Ada | Paris |"
        );
    }
}
