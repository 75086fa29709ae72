//! RFC 822 / MIME messages, read with mail-parser: encoded words (RFC 2047),
//! charsets (through encoding_rs), quoted-printable and base64 are decoded
//! there (the headers kts shows are read again from their raw bytes, see
//! [`RawHeaders`]); this module picks out what a [`Mail`] holds.

use mail_parser::decoders::charsets::map::charset_decoder;
use mail_parser::parsers::MessageStream;
use mail_parser::{
    Address, Encoding, HeaderName, Message, MessageParser, MessagePart, MimeHeaders, PartType,
};

use super::headers::RawHeaders;
use super::{Attachment, Content, Mail, within_nesting};
use crate::formats::ConvertError;

/// Reads a message at `depth` (the file's own at 0).
pub fn parse(bytes: &[u8], depth: usize) -> Result<Mail, ConvertError> {
    let message = MessageParser::default()
        .parse(bytes)
        .filter(|m| !m.headers().is_empty())
        .ok_or_else(|| ConvertError::corrupt("no e-mail header found at the start"))?;
    Ok(read(&message, depth))
}

fn read(message: &Message, depth: usize) -> Mail {
    let headers = RawHeaders::new(message);
    let mut mail = Mail {
        subject: headers.text(HeaderName::Subject),
        from: addresses(headers.address(HeaderName::From).as_ref()),
        to: addresses(headers.address(HeaderName::To).as_ref()),
        cc: addresses(headers.address(HeaderName::Cc).as_ref()),
        date: message.date().map(|d| d.to_rfc3339()),
        ..Mail::default()
    };
    // A text part whose boundary or encoding is broken is kept as body text:
    // it is what a reader would still want to see.
    let damaged = message
        .attachments()
        .filter(|part| part.is_encoding_problem && part.attachment_name().is_none());
    let texts: Vec<&str> = message
        .text_bodies()
        .chain(damaged)
        .filter_map(|part| match &part.body {
            PartType::Text(text) => Some(text.as_ref()),
            _ => None,
        })
        .collect();
    if !texts.is_empty() {
        mail.text_body = Some(texts.join("\n\n"));
    }
    let htmls: Vec<&str> = message
        .html_bodies()
        .filter_map(|part| match &part.body {
            PartType::Html(html) => Some(html.as_ref()),
            _ => None,
        })
        .collect();
    if !htmls.is_empty() {
        mail.html_body = Some(htmls.join("\n").into_bytes());
    }
    if message.parts.iter().any(|p| p.is_encoding_problem) {
        mail.warnings.push(format!(
            "{}: a MIME part is damaged (a broken boundary or encoding); its raw text is kept",
            mail.subject.as_deref().unwrap_or("a message")
        ));
    }
    for part in message.attachments() {
        if part.is_encoding_problem
            && part.attachment_name().is_none()
            && matches!(part.body, PartType::Text(_))
        {
            continue; // kept as body text above
        }
        let (content, size) = match &part.body {
            PartType::Message(nested) if within_nesting(depth + 1) => (
                Content::Message(Box::new(read(nested, depth + 1))),
                part.len() as u64,
            ),
            PartType::Message(_) => (Content::TooDeep, part.len() as u64),
            PartType::Multipart(_) => continue,
            PartType::Text(_) | PartType::Html(_) => text_attachment(message, part),
            _ => (Content::Bytes(part.contents().to_vec()), part.len() as u64),
        };
        mail.attachments.push(Attachment {
            name: part.attachment_name().map(str::to_string),
            media_type: part.content_type().map(|ct| match ct.subtype() {
                Some(subtype) => format!("{}/{subtype}", ct.ctype()),
                None => ct.ctype().to_string(),
            }),
            size,
            content,
        });
    }
    mail
}

/// A text attachment and its size as the mail carried it (its transfer
/// encoding undone). mail-parser reads a text part without a charset it
/// knows as UTF-8, replacing the bytes of a legacy encoding: such a part
/// keeps the bytes it was sent as, so that its converter tells their
/// encoding as it does a file's. A declared charset wins: that part is the
/// text mail-parser read in it.
fn text_attachment(message: &Message, part: &MessagePart) -> (Content, u64) {
    let sent = transfer_decoded(message, part);
    let size = sent.as_ref().map_or(part.len(), Vec::len) as u64;
    let declared = part
        .content_type()
        .and_then(|ct| ct.attribute("charset"))
        .and_then(|label| charset_decoder(label.as_bytes()))
        .is_some();
    let bytes = match sent {
        Some(bytes) if !declared => bytes,
        _ => part.contents().to_vec(),
    };
    (Content::Bytes(bytes), size)
}

/// A part's body bytes, base64 or quoted-printable decoded.
fn transfer_decoded(message: &Message, part: &MessagePart) -> Option<Vec<u8>> {
    let raw = message
        .raw_message
        .get(part.raw_body_offset() as usize..part.raw_end_offset() as usize)?;
    let mut stream = MessageStream::new(raw);
    let (end, bytes) = match part.encoding {
        Encoding::Base64 => stream.decode_base64_mime(b""),
        Encoding::QuotedPrintable => stream.decode_quoted_printable_mime(b""),
        Encoding::None => return Some(raw.to_vec()),
    };
    (end != usize::MAX).then(|| bytes.into_owned())
}

/// `Name <address>` (or the bare address) for each address of a header.
fn addresses(address: Option<&Address>) -> Vec<String> {
    address
        .into_iter()
        .flat_map(|a| a.iter())
        .filter_map(|addr| match (addr.name(), addr.address()) {
            (Some(name), Some(address)) if name != address => Some(format!("{name} <{address}>")),
            (_, Some(address)) => Some(address.to_string()),
            (Some(name), None) => Some(name.to_string()),
            (None, None) => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoded_headers_charsets_and_transfer_encodings_are_decoded() {
        let raw = "From: =?ISO-8859-1?Q?Andr=E9?= <andre@example.com>\r\n\
                   To: a@example.com, \"Bea B\" <bea@example.com>\r\n\
                   Subject: =?UTF-8?B?UXVhcnRhbHNiZXJpY2h0IMOEbmRlcnVuZw==?=\r\n\
                   Date: Tue, 3 Mar 2026 10:00:00 +0100\r\n\
                   MIME-Version: 1.0\r\n\
                   Content-Type: text/plain; charset=iso-8859-1\r\n\
                   Content-Transfer-Encoding: quoted-printable\r\n\r\n\
                   Gr=FC=DFe aus M=FCnchen\r\n";
        let mail = parse(raw.as_bytes(), 0).unwrap();
        assert_eq!(mail.subject.as_deref(), Some("Quartalsbericht Änderung"));
        assert_eq!(mail.from, ["André <andre@example.com>"]);
        assert_eq!(mail.to, ["a@example.com", "Bea B <bea@example.com>"]);
        assert_eq!(mail.date.as_deref(), Some("2026-03-03T10:00:00+01:00"));
        assert_eq!(
            mail.text_body.as_deref().map(str::trim),
            Some("Grüße aus München")
        );
    }

    #[test]
    fn raw_8bit_headers_are_read_in_the_body_charset_else_a_guessed_legacy_one() {
        let declared = b"From: J\xfcrgen <j@example.de>\r\nSubject: Gr\xf6\xdfen\xe4nderung\r\n\
            Content-Type: text/plain; charset=windows-1252\r\n\r\nText.\r\n";
        let mail = parse(declared, 0).unwrap();
        assert_eq!(mail.subject.as_deref(), Some("Größenänderung"));
        assert_eq!(mail.from, ["Jürgen <j@example.de>"]);
        let undeclared = b"From: j@example.de\r\n\
            Subject: Gr\xfc\xdfe aus M\xfcnchen und \xc4nderungen f\xfcr die B\xfccher\r\n\r\nText.\r\n";
        assert_eq!(
            parse(undeclared, 0).unwrap().subject.as_deref(),
            Some("Grüße aus München und Änderungen für die Bücher")
        );
        let utf8 = "From: Jürgen <j@example.de>\r\nSubject: Größe\r\n\
            Content-Type: text/plain; charset=windows-1252\r\n\r\nText.\r\n";
        let mail = parse(utf8.as_bytes(), 0).unwrap();
        assert_eq!(mail.subject.as_deref(), Some("Größe"));
        assert_eq!(mail.from, ["Jürgen <j@example.de>"]);
    }

    #[test]
    fn a_character_split_across_two_encoded_words_is_whole() {
        let raw = b"From: =?UTF-8?Q?J=C3?=\r\n =?UTF-8?B?vHJnZW4=?= <j@example.de>\r\n\
            Subject: =?UTF-8?B?WnVzYW1tZW5mYXNzdW5nIA==?=\r\n =?UTF-8?Q?f=C3=BCr_M=C3?= =?UTF-8?Q?=A4rz?=\r\n\
            \r\nText.\r\n";
        let mail = parse(raw, 0).unwrap();
        assert_eq!(mail.subject.as_deref(), Some("Zusammenfassung für März"));
        assert_eq!(mail.from, ["Jürgen <j@example.de>"]);
    }

    #[test]
    fn text_without_headers_is_not_a_message() {
        assert!(parse(b"\r\n\r\njust text", 0).is_err());
    }
}
