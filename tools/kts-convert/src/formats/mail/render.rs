//! The Markdown of a message (subject, header lines, body, attachments) and
//! of a mailbox (a table of its messages).

use super::super::html;
use super::super::table::markdown_table;
use super::Mail;
use crate::formats::one_line;

pub struct Headers<'a> {
    pub from: &'a [String],
    pub to: &'a [String],
    pub cc: &'a [String],
    pub date: Option<&'a str>,
}

/// What became of an attachment.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Converted as a document of its own.
    Document,
    /// Not a format kts reads (an image, an archive, ...).
    NotRead,
    /// A message nested too deep to be read.
    TooDeep,
    /// Its conversion failed, for this reason.
    Failed(String),
}

pub struct AttachmentLine {
    pub name: String,
    pub media_type: Option<String>,
    pub size: u64,
    pub outcome: Outcome,
}

pub fn message(
    subject: Option<&str>,
    headers: &Headers,
    body: &str,
    attachments: &[AttachmentLine],
) -> String {
    let mut out = String::new();
    if let Some(subject) = subject.map(str::trim).filter(|s| !s.is_empty()) {
        out.push_str(&format!("# {}\n\n", one_line(subject)));
    }
    for (label, values) in [
        ("From", headers.from),
        ("To", headers.to),
        ("Cc", headers.cc),
    ] {
        if !values.is_empty() {
            out.push_str(&format!(
                "- **{label}:** {}\n",
                one_line(&values.join(", "))
            ));
        }
    }
    if let Some(date) = headers.date {
        out.push_str(&format!("- **Date:** {date}\n"));
    }
    if !out.is_empty() {
        out.push('\n');
    }
    let body = body.trim();
    if !body.is_empty() {
        out.push_str(body);
        out.push_str("\n\n");
    }
    if !attachments.is_empty() {
        out.push_str(ATTACHMENTS_HEADING);
        for line in attachments {
            out.push_str(&attachment_line(line));
        }
    }
    let trimmed = out.trim_end().len();
    out.truncate(trimmed);
    out.push('\n');
    out
}

const ATTACHMENTS_HEADING: &str = "## Attachments\n\n";

/// A message's Markdown without the list of attachments [`message`] ends it
/// with (their media types, sizes and extensions).
pub fn without_attachment_list(markdown: &str) -> &str {
    let Some(at) = markdown.rfind(ATTACHMENTS_HEADING) else {
        return markdown;
    };
    let (before, list) = markdown.split_at(at);
    let is_the_list = (before.is_empty() || before.ends_with('\n'))
        && list[ATTACHMENTS_HEADING.len()..]
            .lines()
            .all(|line| line.starts_with("- "));
    if is_the_list { before } else { markdown }
}

fn attachment_line(line: &AttachmentLine) -> String {
    let mut about = Vec::new();
    if let Some(media_type) = &line.media_type {
        about.push(media_type.clone());
    }
    about.push(human_size(line.size));
    let note = match &line.outcome {
        Outcome::Document => String::new(),
        Outcome::NotRead => " — not converted: not a format kts reads".into(),
        Outcome::TooDeep => " — not converted: nested too deep".into(),
        Outcome::Failed(why) => format!(" — not converted: {}", one_line(why)),
    };
    format!("- {} ({}){note}\n", one_line(&line.name), about.join(", "))
}

fn human_size(bytes: u64) -> String {
    match bytes {
        0..1024 => format!("{bytes} B"),
        1024..1_048_576 => format!("{:.1} KB", bytes as f64 / 1024.0),
        _ => format!("{:.1} MB", bytes as f64 / 1_048_576.0),
    }
}

/// The body as a reader would want it. An HTML body is converted to Markdown
/// and preferred when it carries (nearly) every word of the plain one: then
/// it adds headings, lists and tables. When it carries much less (an HTML
/// part that is a picture with a caption, say), the plain text wins.
pub fn body(text: Option<&str>, html: Option<&[u8]>) -> String {
    const HTML_SHARE_OF_PLAIN_WORDS: f64 = 0.8;
    let from_html = html
        .and_then(|bytes| html::convert(bytes).ok())
        .map(|c| c.markdown);
    match (text.filter(|t| !t.trim().is_empty()), from_html) {
        (Some(text), Some(html))
            if words(&html) as f64 >= HTML_SHARE_OF_PLAIN_WORDS * words(text) as f64 =>
        {
            html
        }
        (Some(text), _) => text.replace("\r\n", "\n"),
        (None, Some(html)) => html,
        (None, None) => String::new(),
    }
}

fn words(text: &str) -> usize {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .count()
}

/// One row of a mailbox's table of messages.
pub struct MessageLine {
    number: usize,
    date: String,
    from: String,
    subject: String,
}

impl MessageLine {
    pub fn of(number: usize, mail: &Mail) -> Self {
        Self {
            number,
            date: mail.date.clone().unwrap_or_default(),
            from: mail.from.join(", "),
            subject: mail.subject.clone().unwrap_or_default(),
        }
    }

    pub fn unreadable(number: usize, why: &str) -> Self {
        Self {
            number,
            date: String::new(),
            from: String::new(),
            subject: format!("(not converted: {why})"),
        }
    }
}

pub fn mailbox(lines: &[MessageLine]) -> String {
    let mut rows = vec![vec![
        "Message".to_string(),
        "Date".into(),
        "From".into(),
        "Subject".into(),
    ]];
    rows.extend(lines.iter().map(|line| {
        vec![
            line.number.to_string(),
            line.date.clone(),
            line.from.clone(),
            line.subject.clone(),
        ]
    }));
    let count = lines.len();
    let noun = if count == 1 { "message" } else { "messages" };
    format!("{count} {noun}.\n\n{}", markdown_table(&rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_wins_only_when_it_carries_the_plain_words() {
        let plain = "Hello team, the report is attached. Regards, Ann";
        let full =
            b"<p>Hello <b>team</b>, the report is attached.</p><ul><li>Regards, Ann</li></ul>";
        assert!(body(Some(plain), Some(full)).contains("- Regards, Ann"));
        let picture = b"<p><img src=\"cid:1\" alt=\"\">Ann</p>";
        assert_eq!(body(Some(plain), Some(picture)), plain);
        assert_eq!(
            body(None, Some(full)).lines().next(),
            Some("Hello **team**, the report is attached.")
        );
        assert_eq!(body(Some("  \n"), None), "");
    }

    #[test]
    fn the_list_of_attachments_is_told_from_the_body() {
        let listed = "# Q3\n\nBody.\n\n## Attachments\n\n- q3.pdf (application/pdf, 2.0 KB)\n";
        assert_eq!(without_attachment_list(listed), "# Q3\n\nBody.\n\n");
        let heading_in_body = "# Q3\n\n## Attachments\n\nSee the shared folder.\n";
        assert_eq!(without_attachment_list(heading_in_body), heading_in_body);
        assert_eq!(without_attachment_list("## Attachments\n\n- a (1 B)\n"), "");
    }

    #[test]
    fn a_message_lists_its_headers_and_attachments() {
        let from = vec!["Ann <ann@example.com>".to_string()];
        let markdown = message(
            Some("Q3 | figures"),
            &Headers {
                from: &from,
                to: &[],
                cc: &[],
                date: Some("2026-01-02T03:04:05Z"),
            },
            "Body text.",
            &[
                AttachmentLine {
                    name: "q3.pdf".into(),
                    media_type: Some("application/pdf".into()),
                    size: 2048,
                    outcome: Outcome::Document,
                },
                AttachmentLine {
                    name: "logo.png".into(),
                    media_type: None,
                    size: 10,
                    outcome: Outcome::NotRead,
                },
            ],
        );
        assert_eq!(
            markdown,
            "# Q3 | figures\n\n- **From:** Ann <ann@example.com>\n- **Date:** 2026-01-02T03:04:05Z\n\n\
             Body text.\n\n## Attachments\n\n- q3.pdf (application/pdf, 2.0 KB)\n\
             - logo.png (10 B) — not converted: not a format kts reads\n"
        );
    }
}
