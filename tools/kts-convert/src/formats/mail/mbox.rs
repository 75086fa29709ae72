//! A mailbox file: messages one after another, each opened by a `From `
//! line (mboxo/mboxrd: a body line starting `>From ` loses one `>`).

use std::sync::LazyLock;

use regex::bytes::Regex;

/// The separator line of RFC 4155: `From `, the sender, then the date the
/// message was delivered. Dates come in several forms (`Mon Jan  1 00:00:00
/// 2024`, with a zone before or after the year, or `Mon, 1 Jan 2024 00:00:00
/// +0000`); one must be there, so that a body line an mboxo writer left
/// unquoted (`From the desk of ...`) does not open a message.
static SEPARATOR: LazyLock<Regex> = LazyLock::new(|| {
    let month = "(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*";
    let day_and_month = format!(r"(?:{month}[ \t]+\d{{1,2}}|\d{{1,2}}[ \t]+{month})");
    let time = r"\d{1,2}:\d{2}(?::\d{2})?";
    let zone = r"(?:[ \t]+[a-z+-][a-z0-9+-]*)?";
    let time_and_year = format!(r"(?:\d{{4}}[ \t]+{time}|{time}{zone}[ \t]+\d{{4}})");
    Regex::new(&format!(
        r"^From [^ \t\r\n]+[ \t]+(?i:(?:[a-z]{{3}},?[ \t]+)?{day_and_month}[ \t]+{time_and_year}\b)"
    ))
    .expect("a valid regex")
});

/// The raw messages of a mailbox, in order. Text before the first `From `
/// line is not a message.
pub fn split(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut messages: Vec<Vec<u8>> = Vec::new();
    for line in bytes.split_inclusive(|&b| b == b'\n') {
        if SEPARATOR.is_match(line) {
            messages.push(Vec::new());
        } else if let Some(message) = messages.last_mut() {
            message.extend_from_slice(unquoted(line));
        }
    }
    messages
}

/// A body line as it was before the mailbox quoted it: `>From ` (or
/// `>>From `, ...) loses one `>`.
fn unquoted(line: &[u8]) -> &[u8] {
    let quotes = line.iter().take_while(|&&b| b == b'>').count();
    if quotes > 0 && line[quotes..].starts_with(b"From ") {
        &line[1..]
    } else {
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_split_at_from_lines_and_quoted_froms_are_unquoted() {
        let mbox = b"From a@x Thu Jan  1 00:00:00 2026\nSubject: one\n\n>From the start\n>>From here\n\nFrom b@x Thu Jan  1 00:00:00 2026\nSubject: two\n\nbody\n";
        let messages = split(mbox);
        assert_eq!(messages.len(), 2);
        assert_eq!(
            String::from_utf8_lossy(&messages[0]),
            "Subject: one\n\nFrom the start\n>From here\n\n"
        );
        assert!(split(b"no mailbox here\n").is_empty());
    }

    #[test]
    fn only_a_from_line_with_a_date_opens_a_message() {
        for separator in [
            "From alice@example.com Mon Mar  4 09:00:00 2024",
            "From MAILER-DAEMON Fri Jul  8 12:08:34 2011\r",
            "From a@x Mon Jan 1 00:00:00 +0000 2024",
            "From a@x Mon Jan  1 00:00:00 GMT 2024",
            "From a@x Mon Jan  1 00:00 2024 remote from host",
            "From a@x Sat, 01 Jan 2024 00:00:00 +0000",
            "From 1234@xxx Sat Jan 01 00:00:00 +0000 2024",
        ] {
            assert!(SEPARATOR.is_match(separator.as_bytes()), "{separator}");
        }
        for body in [
            "From the desk of Carol (unquoted)",
            "From now on we meet at 10:00 in 2024",
            "From a@x",
            "From: a@x Mon Jan  1 00:00:00 2024",
            "from a@x Mon Jan  1 00:00:00 2024",
        ] {
            assert!(!SEPARATOR.is_match(body.as_bytes()), "{body}");
        }
        let mbox =
            b"From a@x Mon Mar  4 11:00:00 2024\nSubject: three\n\nBody.\nFrom the desk of Carol\n\
                     \nFrom b@x Mon Mar  4 12:00:00 2024\nSubject: four\n\nBody.\n";
        let messages = split(mbox);
        assert_eq!(messages.len(), 2);
        assert_eq!(
            String::from_utf8_lossy(&messages[0]),
            "Subject: three\n\nBody.\nFrom the desk of Carol\n\n"
        );
    }
}
