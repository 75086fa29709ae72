//! E-mail: a message (eml, Outlook msg) becomes a document titled by its
//! subject, with from, to, cc and date as properties; each attachment kts
//! reads becomes a document of its own (a [`Part`] at `attachment/<name>`),
//! and an attached message recurses, up to [`MAX_NESTING`] messages deep.
//! A mailbox (mbox) becomes a list of its messages, each message a part at
//! `message/<n>`: a search hit then names the one message it is in.

mod headers;
mod mbox;
mod mime;
mod names;
mod outlook;
mod render;

use kts_record::{ErrorCode, Format, detect_format};
use serde_json::{Map, Value};

use self::names::Renamed;
use super::{Context, ConvertError, Converted, Part, PartDocument};
use crate::images::ImageSink;

pub(crate) use outlook::filetime_to_rfc3339;
pub use render::without_attachment_list;

/// Messages inside messages deeper than this are listed, not converted.
const MAX_NESTING: usize = 8;

/// A message, whatever file it came from.
#[derive(Debug, Default)]
pub struct Mail {
    pub subject: Option<String>,
    pub from: Vec<String>,
    pub to: Vec<String>,
    pub cc: Vec<String>,
    /// RFC 3339.
    pub date: Option<String>,
    pub text_body: Option<String>,
    /// The HTML body's bytes (their charset is the HTML converter's to find).
    pub html_body: Option<Vec<u8>>,
    pub attachments: Vec<Attachment>,
    /// What was damaged and how it was read anyway.
    pub warnings: Vec<String>,
}

#[derive(Debug)]
pub struct Attachment {
    /// The name the sender gave, untrusted.
    pub name: Option<String>,
    pub media_type: Option<String>,
    /// Its size in bytes as the mail carried it: transfer encoding undone,
    /// no charset read.
    pub size: u64,
    pub content: Content,
}

#[derive(Debug)]
pub enum Content {
    Bytes(Vec<u8>),
    /// An attached message, already read.
    Message(Box<Mail>),
    /// An attached message nested [`MAX_NESTING`] deep, not read.
    TooDeep,
}

/// Whether a message at `depth` (the file's own at 0) is read.
fn within_nesting(depth: usize) -> bool {
    depth < MAX_NESTING
}

pub fn eml(bytes: &[u8], ctx: &mut Context) -> Result<(Converted, Vec<Part>), ConvertError> {
    let mail = mime::parse(bytes, 0)?;
    let mut parts = Parts::new(ctx);
    let converted = parts.message(mail, "", 0);
    Ok((converted, parts.found))
}

pub fn msg(bytes: &[u8], ctx: &mut Context) -> Result<(Converted, Vec<Part>), ConvertError> {
    let mail = outlook::parse(bytes, 0)?;
    let mut parts = Parts::new(ctx);
    let converted = parts.message(mail, "", 0);
    Ok((converted, parts.found))
}

/// A mailbox: one part per message; its own document lists them.
pub fn mbox(bytes: &[u8], ctx: &mut Context) -> Result<(Converted, Vec<Part>), ConvertError> {
    let messages = mbox::split(bytes);
    if messages.is_empty() {
        return Err(ConvertError::new(
            ErrorCode::Empty,
            "the mailbox holds no message (each one opens with a `From ` line)",
        ));
    }
    let mut parts = Parts::new(ctx);
    let mut listing = Vec::new();
    for (n, raw) in messages.iter().enumerate() {
        let anchor = format!("message/{}", n + 1);
        let at = parts.found.len();
        let size = raw.len() as u64;
        let converted = match mime::parse(raw, 0) {
            Ok(mail) => {
                listing.push(render::MessageLine::of(n + 1, &mail));
                let converted = parts.message(mail, &format!("{anchor}#"), 0);
                Ok(PartDocument {
                    format: Format::Eml,
                    converted,
                    images: Vec::new(),
                })
            }
            Err(e) => {
                listing.push(render::MessageLine::unreadable(n + 1, &e.message));
                Err(e)
            }
        };
        parts.found.insert(
            at,
            Part {
                anchor,
                size,
                converted,
            },
        );
    }
    let mut properties = Map::new();
    properties.insert("messages".into(), messages.len().into());
    parts.add_warnings(&mut properties);
    Ok((
        Converted {
            markdown: render::mailbox(&listing),
            title: None,
            properties,
        },
        parts.found,
    ))
}

/// The extension that tells a text format apart, for an attachment whose
/// name has none (binary formats are told by their content).
fn media_type_extension(media_type: &str) -> Option<&'static str> {
    Some(match media_type.to_ascii_lowercase().as_str() {
        "text/plain" => "txt",
        "text/markdown" => "md",
        "text/html" => "html",
        "text/csv" => "csv",
        "text/tab-separated-values" => "tsv",
        "application/json" => "json",
        "application/x-tex" | "application/x-latex" | "text/x-tex" => "tex",
        "message/rfc822" => "eml",
        _ => return None,
    })
}

/// Collects the parts of one file while its messages are written.
struct Parts<'c, 'a> {
    ctx: &'c mut Context<'a>,
    /// Attachment bytes still allowed (the file's share of `max_unpacked_bytes`).
    budget: u64,
    found: Vec<Part>,
    warnings: Vec<String>,
}

impl<'c, 'a> Parts<'c, 'a> {
    fn new(ctx: &'c mut Context<'a>) -> Self {
        let budget = ctx.limits.max_unpacked_bytes;
        Self {
            ctx,
            budget,
            found: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// Writes a message's document and adds its attachments as parts at
    /// `<prefix>attachment/<name>`. The file's own message (no prefix)
    /// carries the warnings of the whole file.
    fn message(&mut self, mail: Mail, prefix: &str, depth: usize) -> Converted {
        let Mail {
            subject,
            from,
            to,
            cc,
            date,
            text_body,
            html_body,
            attachments,
            warnings,
        } = mail;
        self.warnings.extend(warnings);
        let mut names = names::Unique::default();
        let mut listed = Vec::new();
        for (n, attachment) in attachments.into_iter().enumerate() {
            let fallback = match &attachment.content {
                Content::Message(mail) => mail
                    .subject
                    .as_deref()
                    .map_or_else(|| format!("message-{}.eml", n + 1), |s| format!("{s}.eml")),
                Content::TooDeep => format!("message-{}.eml", n + 1),
                _ => format!("attachment-{}", n + 1),
            };
            let (name, renamed) = names.claim(attachment.name.as_deref(), &fallback);
            if let (Some(renamed), Some(given)) = (renamed, &attachment.name) {
                self.warnings.push(match renamed {
                    Renamed::MadeSafe => {
                        format!("the attachment name {given:?} was made safe as {name:?}")
                    }
                    Renamed::Numbered => {
                        format!("the attachment name {given:?} is repeated: this one is {name:?}")
                    }
                });
            }
            let anchor = format!("{prefix}attachment/{name}");
            let extension = name.rsplit_once('.').map(|(_, e)| e).or_else(|| {
                attachment
                    .media_type
                    .as_deref()
                    .and_then(media_type_extension)
            });
            let outcome = self.attachment(
                attachment.content,
                attachment.size,
                extension,
                &anchor,
                depth,
            );
            listed.push(render::AttachmentLine {
                name,
                media_type: attachment.media_type,
                size: attachment.size,
                outcome,
            });
        }
        let headers = render::Headers {
            from: &from,
            to: &to,
            cc: &cc,
            date: date.as_deref(),
        };
        let markdown = render::message(
            subject.as_deref(),
            &headers,
            &render::body(text_body.as_deref(), html_body.as_deref()),
            &listed,
        );
        let mut properties = Map::new();
        let list = |values: &[String]| Value::from(values.to_vec());
        if !from.is_empty() {
            properties.insert("from".into(), list(&from));
        }
        if !to.is_empty() {
            properties.insert("to".into(), list(&to));
        }
        if !cc.is_empty() {
            properties.insert("cc".into(), list(&cc));
        }
        if let Some(date) = date {
            properties.insert("date".into(), date.into());
        }
        if !listed.is_empty() {
            properties.insert("attachments".into(), listed.len().into());
        }
        if prefix.is_empty() {
            self.add_warnings(&mut properties);
        }
        Converted {
            markdown,
            title: subject,
            properties,
        }
    }

    /// Converts one attachment of a message at `depth` into a part (or says
    /// why not), returning what the message's list of attachments says of it.
    fn attachment(
        &mut self,
        content: Content,
        size: u64,
        extension: Option<&str>,
        anchor: &str,
        depth: usize,
    ) -> render::Outcome {
        let bytes = match content {
            Content::Message(mail) => return self.nested(*mail, size, anchor, depth),
            Content::TooDeep => return self.too_deep(anchor),
            Content::Bytes(bytes) => bytes,
        };
        let tail = &bytes[bytes.len().saturating_sub(256 << 10)..];
        let Some(format) = detect_format(&bytes, tail, extension) else {
            return render::Outcome::NotRead;
        };
        if size > self.budget {
            let limit = self.ctx.limits.max_unpacked_bytes;
            return self.failed(
                anchor,
                size,
                ConvertError::new(
                    ErrorCode::TooLarge,
                    format!(
                        "the attachment ({size} bytes) is beyond what is left of the limit \
                         on the attachments of one file ({limit} bytes, --max-unpacked-mib)"
                    ),
                ),
            );
        }
        self.budget -= size;
        let nested = match format {
            Format::Eml => mime::parse(&bytes, depth + 1),
            Format::Msg => outlook::parse(&bytes, depth + 1),
            Format::Mbox => return render::Outcome::NotRead,
            _ => return self.document(format, &bytes, size, anchor),
        };
        match nested {
            Ok(_) if !within_nesting(depth + 1) => self.too_deep(anchor),
            Ok(mail) => self.nested(mail, size, anchor, depth),
            Err(e) => self.failed(anchor, size, e),
        }
    }

    /// An attachment in a format of its own, converted by that format's
    /// converter; `size` is what the mail carried, before any charset was read.
    fn document(
        &mut self,
        format: Format,
        bytes: &[u8],
        size: u64,
        anchor: &str,
    ) -> render::Outcome {
        let mut images = ImageSink::default();
        let converted = super::convert(
            format,
            bytes,
            &mut Context {
                limits: self.ctx.limits,
                images: &mut images,
                ocr: self.ctx.ocr,
            },
        );
        match converted {
            Ok(converted) => {
                self.found.push(Part {
                    anchor: anchor.into(),
                    size,
                    converted: Ok(PartDocument {
                        format,
                        converted,
                        images: images.into_images(),
                    }),
                });
                render::Outcome::Document
            }
            Err(e) => self.failed(anchor, size, e),
        }
    }

    /// An attached message of a message at `depth`: a part of its own,
    /// followed by its attachments.
    fn nested(&mut self, mail: Mail, size: u64, anchor: &str, depth: usize) -> render::Outcome {
        let at = self.found.len();
        let converted = self.message(mail, &format!("{anchor}#"), depth + 1);
        self.found.insert(
            at,
            Part {
                anchor: anchor.into(),
                size,
                converted: Ok(PartDocument {
                    format: Format::Eml,
                    converted,
                    images: Vec::new(),
                }),
            },
        );
        render::Outcome::Document
    }

    fn too_deep(&mut self, anchor: &str) -> render::Outcome {
        self.warnings.push(format!(
            "{anchor}: a message nested {MAX_NESTING} deep is listed, not converted"
        ));
        render::Outcome::TooDeep
    }

    fn failed(&mut self, anchor: &str, size: u64, error: ConvertError) -> render::Outcome {
        let outcome = render::Outcome::Failed(error.message.clone());
        self.found.push(Part {
            anchor: anchor.into(),
            size,
            converted: Err(error),
        });
        outcome
    }

    fn add_warnings(&mut self, properties: &mut Map<String, Value>) {
        if !self.warnings.is_empty() {
            properties.insert("warnings".into(), std::mem::take(&mut self.warnings).into());
        }
    }
}
