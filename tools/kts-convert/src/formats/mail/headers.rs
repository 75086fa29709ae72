//! Header values read again from their raw bytes, where mail-parser loses
//! text: it reads 8-bit header bytes as UTF-8 (those of a legacy charset
//! become U+FFFD), and it decodes each encoded-word (RFC 2047) on its own (a
//! character a sender split across two words becomes U+FFFD).

use std::borrow::Cow;
use std::cell::OnceCell;
use std::sync::LazyLock;

use encoding_rs::{Encoding, UTF_8};
use mail_parser::decoders::base64::base64_decode;
use mail_parser::decoders::charsets::map::charset_decoder;
use mail_parser::decoders::quoted_printable::quoted_printable_decode_char;
use mail_parser::parsers::MessageStream;
use mail_parser::{Address, HeaderName, Message, MimeHeaders};
use regex::Regex;

/// `=?charset?Q?text?=` or `=?charset?B?text?=` (a language after `*` is ignored).
static ENCODED_WORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"=\?([^?*\s]+)(?:\*[^?\s]*)?\?([QqBb])\?([^?\s]*)\?=").expect("a valid regex")
});

/// The headers of one message, as their raw bytes say.
pub struct RawHeaders<'m, 'x> {
    message: &'m Message<'x>,
    /// How header bytes that are not UTF-8 are read, found when first needed.
    legacy: OnceCell<&'static Encoding>,
}

impl<'m, 'x> RawHeaders<'m, 'x> {
    pub fn new(message: &'m Message<'x>) -> Self {
        Self {
            message,
            legacy: OnceCell::new(),
        }
    }

    /// An unstructured header (the subject).
    pub fn text(&self, name: HeaderName) -> Option<String> {
        let value = self.value(name)?;
        MessageStream::new(value.as_bytes())
            .parse_unstructured()
            .into_text()
            .map(Cow::into_owned)
    }

    /// An address header (from, to, cc).
    pub fn address(&self, name: HeaderName) -> Option<Address<'static>> {
        let value = self.value(name)?;
        MessageStream::new(value.as_bytes())
            .parse_address()
            .into_address()
            .map(Address::into_owned)
    }

    /// The raw value of the header (its last occurrence, as mail-parser
    /// reads it) as UTF-8, its split encoded-words joined.
    fn value(&self, name: HeaderName) -> Option<String> {
        let header = self
            .message
            .headers()
            .iter()
            .rev()
            .find(|h| h.name == name)?;
        let raw = self
            .message
            .raw_message
            .get(header.offset_start as usize..header.offset_end as usize)?;
        let text = match std::str::from_utf8(raw) {
            Ok(text) => Cow::Borrowed(text),
            Err(_) => self.legacy().decode_without_bom_handling(raw).0,
        };
        let mut value = join_split_words(&text);
        // mail-parser's readers end a value at its line break.
        if !value.ends_with('\n') {
            value.push('\n');
        }
        Some(value)
    }

    /// The charset the message declares for its body, else the legacy
    /// encoding chardetng judges likeliest for its header bytes.
    fn legacy(&self) -> &'static Encoding {
        self.legacy.get_or_init(|| {
            self.declared_charset().unwrap_or_else(|| {
                let header = self
                    .message
                    .parts
                    .first()
                    .and_then(|part| {
                        let raw = &self.message.raw_message;
                        raw.get(part.raw_header_offset() as usize..part.raw_body_offset() as usize)
                    })
                    .unwrap_or_default();
                let mut detector = chardetng::EncodingDetector::new();
                detector.feed(header, true);
                detector.guess(None, false)
            })
        })
    }

    /// A legacy charset a body part declares (UTF-8 says nothing of bytes
    /// that are not UTF-8).
    fn declared_charset(&self) -> Option<&'static Encoding> {
        self.message
            .text_bodies()
            .chain(self.message.html_bodies())
            .filter_map(|part| part.content_type()?.attribute("charset"))
            .filter_map(|label| Encoding::for_label(label.trim().as_bytes()))
            .find(|encoding| encoding.output_encoding() != UTF_8)
    }
}

/// An encoded-word of a header value.
struct Word<'v> {
    charset: &'v str,
    base64: bool,
    text: &'v str,
    start: usize,
    end: usize,
}

impl Word<'_> {
    fn bytes(&self) -> Option<Vec<u8>> {
        if self.base64 {
            return base64_decode(self.text.as_bytes());
        }
        let mut bytes = Vec::with_capacity(self.text.len());
        let mut rest = self.text.as_bytes();
        while let Some((&byte, tail)) = rest.split_first() {
            rest = tail;
            bytes.push(match byte {
                b'_' => b' ',
                b'=' => {
                    let [high, low, ..] = *rest else { return None };
                    rest = &rest[2..];
                    quoted_printable_decode_char(high, low)?
                }
                _ => byte,
            });
        }
        Some(bytes)
    }
}

/// The value with each run of encoded-words in one charset, with only
/// whitespace between them, made one word: their bytes are joined before
/// they are decoded, so that a character split between two words is whole.
fn join_split_words(value: &str) -> String {
    let words: Vec<Word> = ENCODED_WORD
        .captures_iter(value)
        .map(|c| {
            let whole = c.get(0).expect("group 0 is the match");
            Word {
                charset: c.get(1).map_or("", |m| m.as_str()),
                base64: c[2].eq_ignore_ascii_case("b"),
                text: c.get(3).map_or("", |m| m.as_str()),
                start: whole.start(),
                end: whole.end(),
            }
        })
        .collect();
    let mut joined = String::with_capacity(value.len());
    let mut copied = 0;
    let same_run = |a: &Word, b: &Word| {
        a.charset.eq_ignore_ascii_case(b.charset) && value[a.end..b.start].trim().is_empty()
    };
    for run in words.chunk_by(same_run).filter(|run| run.len() > 1) {
        let Some(text) = decode_run(run) else {
            continue;
        };
        joined.push_str(&value[copied..run[0].start]);
        joined.push_str(&utf8_word(&text));
        copied = run[run.len() - 1].end;
    }
    joined.push_str(&value[copied..]);
    joined
}

/// The text of encoded-words in one charset, their bytes joined.
fn decode_run(run: &[Word]) -> Option<String> {
    let mut bytes = Vec::new();
    for word in run {
        bytes.extend(word.bytes()?);
    }
    Some(match charset_decoder(run[0].charset.as_bytes()) {
        Some(decode) => decode(&bytes),
        None => String::from_utf8_lossy(&bytes).into_owned(),
    })
}

/// `text` as one UTF-8 encoded-word, which any header can hold.
fn utf8_word(text: &str) -> String {
    let mut word = String::from("=?UTF-8?Q?");
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() {
            word.push(char::from(byte));
        } else {
            word.push_str(&format!("={byte:02X}"));
        }
    }
    word.push_str("?=");
    word
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_adjacent_words_in_one_charset_are_joined() {
        assert_eq!(
            join_split_words("=?UTF-8?Q?f=C3=BCr_M=C3?=\r\n =?utf-8?B?pHJ6?= x"),
            "=?UTF-8?Q?f=C3=BCr=20M=C3=A4rz?= x"
        );
        let apart = "=?utf-8?q?a?= =?ISO-8859-1?Q?b?= plain =?utf-8?q?c?=";
        assert_eq!(join_split_words(apart), apart);
        let undecodable = "=?utf-8?q?a=ZZ?= =?utf-8?q?b?=";
        assert_eq!(join_split_words(undecodable), undecodable);
    }
}
