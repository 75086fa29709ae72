//! A mailbox file: messages one after another, each opened by a `From `
//! line (mboxo/mboxrd: a body line starting `>From ` loses one `>`).

use std::io::Cursor;

use mail_parser::mailbox::mbox::MessageIterator;

/// The raw messages of a mailbox, in order. Text before the first `From `
/// line is not a message.
pub fn split(bytes: &[u8]) -> Vec<Vec<u8>> {
    MessageIterator::new(Cursor::new(bytes))
        .filter_map(Result::ok)
        .map(|message| message.unwrap_contents())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_split_at_from_lines_and_quoted_froms_are_unquoted() {
        let mbox = b"From a@x Thu Jan  1 00:00:00 2026\nSubject: one\n\n>From the start\n\nFrom b@x Thu Jan  1 00:00:00 2026\nSubject: two\n\nbody\n";
        let messages = split(mbox);
        assert_eq!(messages.len(), 2);
        assert_eq!(
            String::from_utf8_lossy(&messages[0]),
            "Subject: one\n\nFrom the start\n\n"
        );
        assert!(split(b"no mailbox here\n").is_empty());
    }
}
