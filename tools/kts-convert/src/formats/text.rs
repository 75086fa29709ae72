//! Markdown and plain text: decoded to UTF-8, line endings normalised.

use super::{ConvertError, Converted};
use kts_record::ErrorCode;

pub fn markdown(bytes: &[u8]) -> Result<Converted, ConvertError> {
    let text = decode(bytes)?;
    let (front_matter_title, body) = split_front_matter(&text);
    Ok(Converted {
        markdown: body.to_string(),
        title: front_matter_title,
        ..Default::default()
    })
}

pub fn plain(bytes: &[u8]) -> Result<Converted, ConvertError> {
    Ok(Converted {
        markdown: decode(bytes)?,
        ..Default::default()
    })
}

/// Decodes text: UTF-8 (with or without BOM), UTF-16 with a BOM, else Windows-1252.
/// Line endings become `\n`.
pub fn decode(bytes: &[u8]) -> Result<String, ConvertError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ConvertError::new(
            ErrorCode::Empty,
            "the file holds no text",
        ));
    }
    let text = match encoding_rs::Encoding::for_bom(bytes) {
        Some((encoding, bom_length)) => encoding
            .decode_without_bom_handling(&bytes[bom_length..])
            .0
            .into_owned(),
        None => match std::str::from_utf8(bytes) {
            Ok(text) => text.to_owned(),
            Err(_) => encoding_rs::WINDOWS_1252
                .decode_without_bom_handling(bytes)
                .0
                .into_owned(),
        },
    };
    if text.contains('\0') {
        return Err(ConvertError::new(
            ErrorCode::Unsupported,
            "binary content (NUL bytes) in a text file",
        ));
    }
    Ok(normalise_newlines(&text))
}

fn normalise_newlines(text: &str) -> String {
    if text.contains('\r') {
        text.replace("\r\n", "\n").replace('\r', "\n")
    } else {
        text.to_owned()
    }
}

/// Splits YAML front matter (`---` … `---`) off a Markdown file, returning its title.
fn split_front_matter(text: &str) -> (Option<String>, &str) {
    let Some(rest) = text.strip_prefix("---\n") else {
        return (None, text);
    };
    let Some(end) = rest
        .find("\n---\n")
        .or_else(|| rest.strip_suffix("\n---").map(|r| r.len()))
    else {
        return (None, text);
    };
    let title = rest[..end].lines().find_map(|line| {
        let value = line
            .strip_prefix("title:")?
            .trim()
            .trim_matches(|c| c == '"' || c == '\'');
        (!value.is_empty()).then(|| value.to_string())
    });
    let body_start = (4 + end + 5).min(text.len());
    (title, &text[body_start..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_bom_and_legacy_text() {
        assert_eq!(decode(b"\xEF\xBB\xBFhi\r\nthere").unwrap(), "hi\nthere");
        assert_eq!(decode(b"\xFF\xFEh\0i\0").unwrap(), "hi");
        assert_eq!(decode(b"caf\xE9").unwrap(), "caf\u{e9}");
        assert_eq!(decode(b"  \n").unwrap_err().code, ErrorCode::Empty);
    }

    #[test]
    fn front_matter_gives_the_title_and_is_removed() {
        let converted =
            markdown(b"---\ntitle: \"Leave policy\"\ntags: [hr]\n---\n# Leave\n").unwrap();
        assert_eq!(converted.title.as_deref(), Some("Leave policy"));
        assert_eq!(converted.markdown, "# Leave\n");
        assert_eq!(
            markdown(b"---\nnot closed\n").unwrap().markdown,
            "---\nnot closed\n"
        );
    }
}
