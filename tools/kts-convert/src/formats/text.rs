//! Markdown and plain text: decoded to UTF-8, line endings normalised.

use encoding_rs::Encoding;
use kts_record::{ErrorCode, Utf16, utf16_without_bom};
use serde_json::{Map, Value};

use super::{ConvertError, Converted};

pub fn markdown(bytes: &[u8]) -> Result<Converted, ConvertError> {
    let decoded = decode(bytes)?;
    let (front_matter_title, body) = split_front_matter(&decoded.text);
    let mut converted = Converted {
        markdown: body.to_string(),
        title: front_matter_title,
        ..Default::default()
    };
    decoded.note(&mut converted.properties);
    Ok(converted)
}

pub fn plain(bytes: &[u8]) -> Result<Converted, ConvertError> {
    let decoded = decode(bytes)?;
    let mut converted = Converted::default();
    decoded.note(&mut converted.properties);
    converted.markdown = decoded.text;
    Ok(converted)
}

/// How much of the bytes a legacy encoding is judged on.
const DETECT_BYTES: usize = 1 << 20;

/// Text read from bytes, and, when they were not UTF-8, what was made of them.
#[derive(Debug)]
pub struct Decoded {
    pub text: String,
    /// The encoding the text was read in, when it was not UTF-8.
    pub encoding: Option<&'static Encoding>,
    /// Whether that encoding is a guess (no byte order mark named it).
    pub guessed: bool,
    /// Whether bytes that are not UTF-8 were replaced by U+FFFD.
    pub replaced: bool,
}

impl Decoded {
    /// Records the encoding the text was read in, when it was not UTF-8, in
    /// the document's properties (`encoding`), with a warning when it was
    /// guessed or bytes were replaced.
    pub fn note(&self, properties: &mut Map<String, Value>) {
        if let Some(encoding) = self.encoding {
            properties.insert("encoding".into(), encoding.name().into());
        }
        let warning = if self.replaced {
            "the file is not valid UTF-8: the bytes that are not were replaced by U+FFFD"
                .to_string()
        } else if let Some(encoding) = self.encoding.filter(|_| self.guessed) {
            format!(
                "the file is not UTF-8: read as {} (the most likely encoding)",
                encoding.name()
            )
        } else {
            return;
        };
        super::add_warnings(properties, [warning]);
    }
}

/// Decodes text and normalises line endings to `\n`.
pub fn decode(bytes: &[u8]) -> Result<Decoded, ConvertError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ConvertError::new(
            ErrorCode::Empty,
            "the file holds no text",
        ));
    }
    let decoded = detect(bytes);
    if decoded.text.contains('\0') {
        return Err(ConvertError::new(
            ErrorCode::Unsupported,
            "binary content (NUL bytes) in a text file",
        ));
    }
    Ok(Decoded {
        text: normalise_newlines(&decoded.text),
        ..decoded
    })
}

/// Reads bytes as text: UTF-8 or UTF-16 with a BOM; else UTF-16 when every
/// other byte is NUL (see [`utf16_without_bom`]); else UTF-8; else, when
/// most of the non-ASCII bytes form UTF-8 characters, UTF-8 with the others
/// replaced; else the legacy encoding `chardetng` judges most likely
/// (Windows-1252, Shift-JIS, ...).
pub fn detect(bytes: &[u8]) -> Decoded {
    if let Some((encoding, bom_length)) = Encoding::for_bom(bytes) {
        return Decoded {
            text: encoding
                .decode_without_bom_handling(&bytes[bom_length..])
                .0
                .into_owned(),
            encoding: (encoding != encoding_rs::UTF_8).then_some(encoding),
            guessed: false,
            replaced: false,
        };
    }
    if let Some(order) = utf16_without_bom(bytes) {
        let encoding = match order {
            Utf16::Le => encoding_rs::UTF_16LE,
            Utf16::Be => encoding_rs::UTF_16BE,
        };
        return Decoded {
            text: encoding.decode_without_bom_handling(bytes).0.into_owned(),
            encoding: Some(encoding),
            guessed: true,
            replaced: false,
        };
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Decoded {
            text: text.to_owned(),
            encoding: None,
            guessed: false,
            replaced: false,
        };
    }
    if mostly_utf8(bytes) {
        return Decoded {
            text: String::from_utf8_lossy(bytes).into_owned(),
            encoding: None,
            guessed: false,
            replaced: true,
        };
    }
    let mut detector = chardetng::EncodingDetector::new();
    let sample = &bytes[..bytes.len().min(DETECT_BYTES)];
    detector.feed(sample, sample.len() == bytes.len());
    let encoding = detector.guess(None, false);
    Decoded {
        text: encoding.decode_without_bom_handling(bytes).0.into_owned(),
        encoding: Some(encoding),
        guessed: true,
        replaced: false,
    }
}

/// Do the bytes hold more well-formed UTF-8 characters beyond ASCII than
/// sequences that are not UTF-8? Text in a legacy encoding almost never forms
/// a UTF-8 character; UTF-8 damaged in places still forms many.
fn mostly_utf8(bytes: &[u8]) -> bool {
    let (mut characters, mut errors) = (0usize, 0usize);
    for chunk in bytes.utf8_chunks() {
        characters += chunk.valid().chars().filter(|c| !c.is_ascii()).count();
        errors += usize::from(!chunk.invalid().is_empty());
    }
    characters > errors
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
        let text = |bytes: &[u8]| decode(bytes).unwrap().text;
        assert_eq!(text(b"\xEF\xBB\xBFhi\r\nthere"), "hi\nthere");
        assert_eq!(text(b"\xFF\xFEh\0i\0"), "hi");
        assert_eq!(text(b"h\0i\0\n\0"), "hi\n");
        assert_eq!(text(b"\0h\0i\0\r\0\n"), "hi\n");
        assert_eq!(text(b"caf\xE9"), "caf\u{e9}");
        assert_eq!(decode(b"  \n").unwrap_err().code, ErrorCode::Empty);
    }

    #[test]
    fn text_that_is_not_utf8_is_read_and_said_so() {
        let mut properties = Map::new();
        let utf8 = decode("caf\u{e9} na\u{ef}ve".as_bytes()).unwrap();
        utf8.note(&mut properties);
        let utf8_bom = decode("\u{feff}caf\u{e9}".as_bytes()).unwrap();
        utf8_bom.note(&mut properties);
        assert!(properties.is_empty(), "{properties:?}");

        // UTF-8 with a few damaged bytes: those become U+FFFD, the rest stays.
        let damaged =
            decode(b"caf\xC3\xA9, na\xC3\xAFve, r\xC3\xA9sum\xC3\xA9, \xC3\x28 bad \xFF").unwrap();
        assert_eq!(
            damaged.text,
            "caf\u{e9}, na\u{ef}ve, r\u{e9}sum\u{e9}, \u{fffd}( bad \u{fffd}"
        );
        damaged.note(&mut properties);
        let warnings = properties["warnings"].as_array().unwrap();
        assert!(
            warnings[0].as_str().unwrap().contains("U+FFFD"),
            "{warnings:?}"
        );

        // A legacy encoding: read as the likeliest, and named.
        let mut properties = Map::new();
        let legacy = decode(b"Le caf\xE9 est ferm\xE9 le lundi, \xE0 cause des f\xEAtes.").unwrap();
        assert_eq!(
            legacy.text,
            "Le caf\u{e9} est ferm\u{e9} le lundi, \u{e0} cause des f\u{ea}tes."
        );
        legacy.note(&mut properties);
        assert_eq!(properties["encoding"], "windows-1252");
        assert!(
            properties["warnings"][0]
                .as_str()
                .unwrap()
                .contains("windows-1252")
        );
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
