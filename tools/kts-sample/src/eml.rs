//! E-mail messages (RFC 822 / MIME) and mailboxes (mbox).
//!
//! An [`Email`] has a subject, addresses, a plain and/or HTML body,
//! attachments (base64) and attached messages (`message/rfc822`). A
//! non-ASCII subject is written as an RFC 2047 encoded word; bodies are
//! UTF-8 in quoted-printable.

/// One attachment of an [`Email`].
#[derive(Clone, Debug)]
pub enum EmailAttachment {
    /// A file, sent base64-encoded.
    File {
        name: String,
        media_type: String,
        bytes: Vec<u8>,
    },
    /// A whole message, attached as `message/rfc822`.
    Message(Vec<u8>),
}

/// A message to write with [`Email::to_bytes`].
#[derive(Clone, Debug, Default)]
pub struct Email {
    pub subject: String,
    pub from: String,
    pub to: Vec<String>,
    pub cc: Vec<String>,
    /// RFC 2822 form, e.g. `Tue, 3 Mar 2026 10:00:00 +0000`.
    pub date: String,
    pub text: Option<String>,
    pub html: Option<String>,
    pub attachments: Vec<EmailAttachment>,
}

impl Email {
    pub fn new(subject: &str, from: &str, to: &str) -> Self {
        Self {
            subject: subject.into(),
            from: from.into(),
            to: vec![to.into()],
            date: "Tue, 3 Mar 2026 10:00:00 +0000".into(),
            ..Self::default()
        }
    }

    pub fn text(mut self, text: &str) -> Self {
        self.text = Some(text.into());
        self
    }

    pub fn html(mut self, html: &str) -> Self {
        self.html = Some(html.into());
        self
    }

    pub fn cc(mut self, cc: &str) -> Self {
        self.cc.push(cc.into());
        self
    }

    pub fn attach(mut self, name: &str, media_type: &str, bytes: Vec<u8>) -> Self {
        self.attachments.push(EmailAttachment::File {
            name: name.into(),
            media_type: media_type.into(),
            bytes,
        });
        self
    }

    pub fn attach_message(mut self, message: Vec<u8>) -> Self {
        self.attachments.push(EmailAttachment::Message(message));
        self
    }

    /// The message as it would be saved to an `.eml` file (CRLF line ends).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut header = |name: &str, value: &str| {
            out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
        };
        header("From", &self.from);
        header("To", &self.to.join(", "));
        if !self.cc.is_empty() {
            header("Cc", &self.cc.join(", "));
        }
        header("Subject", &encoded_word(&self.subject));
        header("Date", &self.date);
        header(
            "Message-ID",
            &format!("<{:016x}@kts.example>", fnv(&self.subject)),
        );
        header("MIME-Version", "1.0");
        let body = self.body_part();
        if self.attachments.is_empty() {
            out.extend_from_slice(&body);
            return out;
        }
        let boundary = format!("kts-mixed-{:016x}", fnv(&self.subject));
        out.extend_from_slice(
            format!("Content-Type: multipart/mixed; boundary=\"{boundary}\"\r\n\r\n").as_bytes(),
        );
        out.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
        out.extend_from_slice(&body);
        for attachment in &self.attachments {
            out.extend_from_slice(format!("\r\n--{boundary}\r\n").as_bytes());
            match attachment {
                EmailAttachment::File {
                    name,
                    media_type,
                    bytes,
                } => {
                    out.extend_from_slice(
                        format!(
                            "Content-Type: {media_type}; name=\"{name}\"\r\n\
                             Content-Disposition: attachment; filename=\"{name}\"\r\n\
                             Content-Transfer-Encoding: base64\r\n\r\n"
                        )
                        .as_bytes(),
                    );
                    out.extend_from_slice(base64_lines(bytes).as_bytes());
                }
                EmailAttachment::Message(message) => {
                    out.extend_from_slice(
                        b"Content-Type: message/rfc822\r\nContent-Disposition: attachment\r\n\r\n",
                    );
                    out.extend_from_slice(message);
                }
            }
        }
        out.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
        out
    }

    /// The body's headers and content: one part, or both in multipart/alternative.
    fn body_part(&self) -> Vec<u8> {
        let text = |media_type: &str, body: &str| {
            format!(
                "Content-Type: {media_type}; charset=utf-8\r\n\
                 Content-Transfer-Encoding: quoted-printable\r\n\r\n{}\r\n",
                quoted_printable(body)
            )
        };
        match (&self.text, &self.html) {
            (Some(plain), Some(html)) => {
                let boundary = format!("kts-alt-{:016x}", fnv(plain));
                format!(
                    "Content-Type: multipart/alternative; boundary=\"{boundary}\"\r\n\r\n\
                     --{boundary}\r\n{}\r\n--{boundary}\r\n{}\r\n--{boundary}--\r\n",
                    text("text/plain", plain),
                    text("text/html", html)
                )
                .into_bytes()
            }
            (None, Some(html)) => text("text/html", html).into_bytes(),
            (plain, None) => text("text/plain", plain.as_deref().unwrap_or("")).into_bytes(),
        }
    }
}

/// A mailbox of `messages`, each opened by a `From ` line; body lines that
/// start with `From ` are quoted as `>From `.
pub fn to_mbox(messages: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for message in messages {
        out.extend_from_slice(b"From sender@kts.example Tue Mar  3 10:00:00 2026\n");
        let text = String::from_utf8_lossy(message).replace("\r\n", "\n");
        for line in text.lines() {
            if line.trim_start_matches('>').starts_with("From ") {
                out.push(b'>');
            }
            out.extend_from_slice(line.as_bytes());
            out.push(b'\n');
        }
        out.push(b'\n');
    }
    out
}

fn encoded_word(text: &str) -> String {
    if text.is_ascii() {
        text.into()
    } else {
        format!("=?UTF-8?B?{}?=", base64(text.as_bytes()))
    }
}

fn quoted_printable(text: &str) -> String {
    let mut out = String::new();
    for line in text.replace("\r\n", "\n").split('\n') {
        let mut width = 0;
        for &byte in line.as_bytes() {
            let piece = match byte {
                b'=' => "=3D".to_string(),
                b' ' | b'!'..=b'~' => (byte as char).to_string(),
                _ => format!("={byte:02X}"),
            };
            if width + piece.len() > 75 {
                out.push_str("=\r\n");
                width = 0;
            }
            width += piece.len();
            out.push_str(&piece);
        }
        out.push_str("\r\n");
    }
    out
}

fn base64_lines(bytes: &[u8]) -> String {
    let encoded = base64(bytes);
    let mut out = String::with_capacity(encoded.len() + encoded.len() / 38);
    for line in encoded.as_bytes().chunks(76) {
        out.push_str(std::str::from_utf8(line).unwrap_or_default());
        out.push_str("\r\n");
    }
    out
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A stable 64-bit hash, for message ids and boundaries.
fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_and_quoted_printable_follow_the_rfcs() {
        assert_eq!(base64(b"Man"), "TWFu");
        assert_eq!(base64(b"Ma"), "TWE=");
        assert_eq!(base64(b"M"), "TQ==");
        assert_eq!(quoted_printable("a=b é"), "a=3Db =C3=A9\r\n");
        assert_eq!(encoded_word("Grüße"), "=?UTF-8?B?R3LDvMOfZQ==?=");
    }

    #[test]
    fn a_message_with_an_attachment_is_multipart_mixed() {
        let mail = Email::new("Report", "a@kts.example", "b@kts.example")
            .text("See attached.")
            .attach("r.csv", "text/csv", b"a,b\n1,2\n".to_vec())
            .to_bytes();
        let text = String::from_utf8(mail).unwrap();
        assert!(text.contains("Content-Type: multipart/mixed"));
        assert!(text.contains("filename=\"r.csv\""));
        assert!(text.contains(&base64(b"a,b\n1,2\n")));
        let mbox =
            String::from_utf8(to_mbox(&[b"Subject: x\r\n\r\nFrom here\r\n".to_vec()])).unwrap();
        assert!(mbox.starts_with("From sender@kts.example "));
        assert!(mbox.contains("\n>From here\n"));
    }
}
