//! Outlook messages (.msg): a compound file whose streams hold MAPI
//! properties. A property `pppp` of type `tttt` is the stream
//! `__substg1.0_pppptttt` (text, binary) or a 16-byte entry of the
//! `__properties_version1.0` stream (numbers, times). Recipients and
//! attachments are storages of their own; an attached message is a storage
//! laid out like the message itself.

use std::io::{Cursor, Read};

use cfb::CompoundFile;

use super::{Attachment, Content, Mail, within_nesting};
use crate::formats::ConvertError;

const SUBJECT: u16 = 0x0037;
const CLIENT_SUBMIT_TIME: u16 = 0x0039;
const SENDER_NAME: u16 = 0x0C1A;
const SENDER_EMAIL: u16 = 0x0C1F;
const SENDER_SMTP: u16 = 0x5D01;
const RECIPIENT_TYPE: u16 = 0x0C15;
const DELIVERY_TIME: u16 = 0x0E06;
const BODY: u16 = 0x1000;
const HTML_BODY: u16 = 0x1013;
const DISPLAY_NAME: u16 = 0x3001;
const EMAIL_ADDRESS: u16 = 0x3003;
const SMTP_ADDRESS: u16 = 0x39FE;
const ATTACH_DATA: u16 = 0x3701;
const ATTACH_FILENAME: u16 = 0x3704;
const ATTACH_LONG_FILENAME: u16 = 0x3707;
const ATTACH_MIME_TAG: u16 = 0x370E;

const UNICODE: u16 = 0x001F;
const STRING8: u16 = 0x001E;
const BINARY: u16 = 0x0102;
const OBJECT: u16 = 0x000D;

/// Bytes before the first property entry of `__properties_version1.0`.
const TOP_HEADER: usize = 32;
const EMBEDDED_HEADER: usize = 24;
const PART_HEADER: usize = 8;

type Cfb<'a> = CompoundFile<Cursor<&'a [u8]>>;

/// Reads an Outlook message at `depth` (the file's own at 0).
pub fn parse(bytes: &[u8], depth: usize) -> Result<Mail, ConvertError> {
    let mut file = CompoundFile::open(Cursor::new(bytes))
        .map_err(|e| ConvertError::corrupt(format!("not a readable compound file (.msg): {e}")))?;
    let is_message = file
        .read_root_storage()
        .any(|entry| entry.name().starts_with("__substg1.0_"));
    if !is_message {
        return Err(ConvertError::corrupt(
            "a compound file without Outlook message properties (not an .msg)",
        ));
    }
    Ok(read_message(&mut file, "", TOP_HEADER, depth, bytes.len()))
}

/// The message stored under `base` ("" for the file's own). `limit` bounds
/// every stream read: none can hold more than the file.
fn read_message(file: &mut Cfb, base: &str, header: usize, depth: usize, limit: usize) -> Mail {
    let mut props = Properties { file, limit };
    let fixed = props.fixed(base, header);
    let sender = props
        .text(base, SENDER_SMTP)
        .or_else(|| props.text(base, SENDER_EMAIL));
    let sender_name = props.text(base, SENDER_NAME);
    let html_body = props
        .binary(base, HTML_BODY)
        .or_else(|| props.text(base, HTML_BODY).map(String::into_bytes));
    let mut mail = Mail {
        subject: props.text(base, SUBJECT),
        from: person(sender_name, sender).into_iter().collect(),
        date: [CLIENT_SUBMIT_TIME, DELIVERY_TIME]
            .iter()
            .find_map(|id| fixed.iter().find(|(i, _)| i == id))
            .and_then(|(_, value)| filetime_to_rfc3339(*value)),
        text_body: props.text(base, BODY),
        html_body,
        ..Mail::default()
    };
    let children: Vec<String> = props
        .file
        .read_storage(if base.is_empty() { "/" } else { base })
        .map(|entries| {
            entries
                .filter(|e| e.is_storage())
                .map(|e| e.name().to_string())
                .collect()
        })
        .unwrap_or_default();
    for child in children {
        let path = format!("{base}/{child}");
        if child.starts_with("__recip_version1.0_") {
            let kind = props
                .fixed(&path, PART_HEADER)
                .iter()
                .find(|(id, _)| *id == RECIPIENT_TYPE)
                .map_or(1, |(_, value)| *value as u32);
            let address = props
                .text(&path, SMTP_ADDRESS)
                .or_else(|| props.text(&path, EMAIL_ADDRESS));
            if let Some(who) = person(props.text(&path, DISPLAY_NAME), address) {
                match kind {
                    2 => mail.cc.push(who),
                    3 => {} // Bcc: not shown to the other recipients, not shown here.
                    _ => mail.to.push(who),
                }
            }
        } else if child.starts_with("__attach_version1.0_") {
            mail.attachments
                .push(read_attachment(&mut props, &path, depth));
        }
    }
    mail
}

fn read_attachment(props: &mut Properties, path: &str, depth: usize) -> Attachment {
    let name = props
        .text(path, ATTACH_LONG_FILENAME)
        .or_else(|| props.text(path, ATTACH_FILENAME))
        .or_else(|| props.text(path, DISPLAY_NAME));
    let media_type = props.text(path, ATTACH_MIME_TAG);
    let embedded = format!("{path}/{}", stream_name(ATTACH_DATA, OBJECT));
    if props.file.is_storage(&embedded) {
        let content = if within_nesting(depth + 1) {
            let limit = props.limit;
            Content::Message(Box::new(read_message(
                props.file,
                &embedded,
                EMBEDDED_HEADER,
                depth + 1,
                limit,
            )))
        } else {
            Content::TooDeep
        };
        let size = props.file.entry(&embedded).map_or(0, |e| e.len());
        return Attachment {
            name,
            media_type,
            size,
            content,
        };
    }
    let bytes = props.binary(path, ATTACH_DATA).unwrap_or_default();
    Attachment {
        name,
        media_type,
        size: bytes.len() as u64,
        content: Content::Bytes(bytes),
    }
}

/// `Name <address>`, or whichever of the two is known.
fn person(name: Option<String>, address: Option<String>) -> Option<String> {
    match (name, address.filter(|a| a.contains('@'))) {
        (Some(name), Some(address)) if name != address => Some(format!("{name} <{address}>")),
        (_, Some(address)) => Some(address),
        (Some(name), None) => Some(name),
        (None, None) => None,
    }
}

struct Properties<'f, 'a> {
    file: &'f mut Cfb<'a>,
    limit: usize,
}

impl Properties<'_, '_> {
    fn read(&mut self, path: &str) -> Option<Vec<u8>> {
        let mut stream = self.file.open_stream(path).ok()?;
        let mut bytes = Vec::new();
        (&mut stream)
            .take(self.limit as u64)
            .read_to_end(&mut bytes)
            .ok()?;
        Some(bytes)
    }

    /// A text property, stored as UTF-16 or as 8-bit text.
    fn text(&mut self, base: &str, id: u16) -> Option<String> {
        let text = match self.read(&format!("{base}/{}", stream_name(id, UNICODE))) {
            Some(utf16) => {
                let units: Vec<u16> = utf16
                    .chunks_exact(2)
                    .map(|pair| u16::from_le_bytes([pair[0], pair[1]]))
                    .collect();
                String::from_utf16_lossy(&units)
            }
            None => {
                let bytes = self.read(&format!("{base}/{}", stream_name(id, STRING8)))?;
                match String::from_utf8(bytes) {
                    Ok(text) => text,
                    Err(e) => encoding_rs::WINDOWS_1252
                        .decode_without_bom_handling(e.as_bytes())
                        .0
                        .into_owned(),
                }
            }
        };
        let text = text.trim_end_matches('\0').to_string();
        (!text.trim().is_empty()).then_some(text)
    }

    fn binary(&mut self, base: &str, id: u16) -> Option<Vec<u8>> {
        self.read(&format!("{base}/{}", stream_name(id, BINARY)))
            .filter(|bytes| !bytes.is_empty())
    }

    /// The fixed-size properties (id, 8-byte value) of `__properties_version1.0`.
    fn fixed(&mut self, base: &str, header: usize) -> Vec<(u16, u64)> {
        let bytes = self
            .read(&format!("{base}/__properties_version1.0"))
            .unwrap_or_default();
        bytes
            .get(header..)
            .unwrap_or_default()
            .chunks_exact(16)
            .map(|entry| {
                let tag = u32::from_le_bytes([entry[0], entry[1], entry[2], entry[3]]);
                let mut value = [0; 8];
                value.copy_from_slice(&entry[8..16]);
                ((tag >> 16) as u16, u64::from_le_bytes(value))
            })
            .collect()
    }
}

fn stream_name(id: u16, kind: u16) -> String {
    format!("__substg1.0_{id:04X}{kind:04X}")
}

/// A FILETIME (100 ns ticks since 1601) as RFC 3339 UTC, if it is a plausible date.
pub(crate) fn filetime_to_rfc3339(ticks: u64) -> Option<String> {
    const UNIX_EPOCH_SECONDS: u64 = 11_644_473_600;
    let seconds = (ticks / 10_000_000).checked_sub(UNIX_EPOCH_SECONDS)?;
    let (days, time) = (seconds / 86_400, seconds % 86_400);
    let (year, month, day) = kts_cli::time::civil_from_days(days as i64);
    (1970..=2200).contains(&year).then(|| {
        format!(
            "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
            time / 3600,
            time % 3600 / 60,
            time % 60
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filetimes_become_utc_dates() {
        // 2026-03-03T09:00:00Z
        let ticks = (1_772_528_400 + 11_644_473_600) * 10_000_000;
        assert_eq!(
            filetime_to_rfc3339(ticks).as_deref(),
            Some("2026-03-03T09:00:00Z")
        );
        assert_eq!(filetime_to_rfc3339(0), None);
    }

    #[test]
    fn a_compound_file_that_is_no_message_is_refused() {
        let mut file = CompoundFile::create(Cursor::new(Vec::new())).unwrap();
        file.create_stream("/WordDocument").unwrap();
        let bytes = file.into_inner().into_inner();
        let error = parse(&bytes, 0).unwrap_err();
        assert!(error.message.contains("not an .msg"), "{}", error.message);
        let error = parse(&bytes[..600], 0).unwrap_err();
        assert!(error.message.contains("compound file"), "{}", error.message);
    }
}
