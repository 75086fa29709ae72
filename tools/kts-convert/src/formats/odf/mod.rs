//! OpenDocument text (`.odt`) and presentations (`.odp`).
//!
//! The package is vetted by the same guards as Office files
//! ([`ooxml::Package::open`]: unpacked size, compression ratio, damaged
//! entries); a part that declares XML entities is refused before it is
//! parsed, and an encrypted package is reported as such. Title, author and
//! dates come from `meta.xml`. The body is written by [`body`]; slides by
//! [`slides`].

mod body;
mod slides;
mod styles;

use kts_record::ErrorCode;
use serde_json::{Map, Value};

use super::ooxml::{self, Element, Package};
use super::{Context, ConvertError, Converted, one_line};

use styles::Styles;

pub fn odt(bytes: &[u8], ctx: &mut Context) -> Result<Converted, ConvertError> {
    let mut document = Document::open(bytes, ctx, "text")?;
    let Some(text) = document.content.path(&["body", "text"]) else {
        return Err(ConvertError::corrupt(
            "not an OpenDocument text: content.xml has no office:text body",
        ));
    };
    let mut writer = body::Writer::new(&document.styles, &mut document.package, ctx);
    writer.blocks(text);
    let markdown = writer.finish();
    Ok(document.converted(markdown))
}

pub fn odp(bytes: &[u8], ctx: &mut Context) -> Result<Converted, ConvertError> {
    let mut document = Document::open(bytes, ctx, "presentation")?;
    let Some(presentation) = document.content.path(&["body", "presentation"]) else {
        return Err(ConvertError::corrupt(
            "not an OpenDocument presentation: content.xml has no office:presentation body",
        ));
    };
    let (markdown, count) =
        slides::render(presentation, &document.styles, &mut document.package, ctx);
    document
        .properties
        .insert("slides".to_owned(), Value::from(count));
    Ok(document.converted(markdown))
}

/// An opened package: its parsed content, styles and properties.
struct Document<'a> {
    package: Package<'a>,
    content: Element,
    styles: Styles,
    title: Option<String>,
    properties: Map<String, Value>,
}

impl<'a> Document<'a> {
    fn open(bytes: &'a [u8], ctx: &Context, kind: &str) -> Result<Self, ConvertError> {
        let mut package = Package::open(bytes, ctx.limits)?;
        if let Some(manifest) = package.part("META-INF/manifest.xml")
            && ooxml::contains(&manifest, b"encryption-data")
        {
            return Err(ConvertError::new(
                ErrorCode::Encrypted,
                "password-protected OpenDocument file",
            ));
        }
        let mimetype = package
            .part("mimetype")
            .map(|m| String::from_utf8_lossy(&m).trim().to_owned())
            .unwrap_or_default();
        let expected = format!("application/vnd.oasis.opendocument.{kind}");
        if !mimetype.is_empty() && !mimetype.starts_with(&expected) {
            return Err(ConvertError::new(
                ErrorCode::Unsupported,
                format!("an OpenDocument package of type {mimetype}, not {expected}"),
            ));
        }
        let content = package.xml_part("content.xml")?.ok_or_else(|| {
            ConvertError::corrupt("not an OpenDocument file: no readable content.xml")
        })?;
        let shared = package.xml_part("styles.xml")?;
        let styles = Styles::new(shared.as_ref(), &content);
        let meta = package.xml_part("meta.xml")?;
        let (title, properties) = meta.as_ref().map(meta_properties).unwrap_or_default();
        Ok(Self {
            package,
            content,
            styles,
            title,
            properties,
        })
    }

    fn converted(self, markdown: String) -> Converted {
        Converted {
            markdown,
            title: self.title,
            properties: self.properties,
        }
    }
}

/// Title and properties from `meta.xml` (`office:meta`).
pub(super) fn meta_properties(meta: &Element) -> (Option<String>, Map<String, Value>) {
    let mut title = None;
    let mut properties = Map::new();
    let Some(fields) = meta.child("meta") else {
        return (title, properties);
    };
    let mut keywords = Vec::new();
    for field in fields.elements() {
        let value = one_line(&field.text());
        if value.is_empty() {
            continue;
        }
        let key = match field.name.as_str() {
            "title" => {
                title = Some(value);
                continue;
            }
            "keyword" => {
                keywords.push(value);
                continue;
            }
            "initial-creator" => "author",
            "creator" => "last_modified_by",
            "creation-date" => "created",
            "date" => "modified",
            "subject" => "subject",
            "description" => "description",
            "language" => "language",
            _ => continue,
        };
        properties.insert(key.to_owned(), Value::String(value));
    }
    // A document written by one person names them only as dc:creator.
    if !properties.contains_key("author")
        && let Some(creator) = properties.get("last_modified_by").cloned()
    {
        properties.insert("author".to_owned(), creator);
    }
    if !keywords.is_empty() {
        properties.insert("keywords".to_owned(), Value::String(keywords.join(", ")));
    }
    (title, properties)
}

#[cfg(test)]
mod tests;
