//! EPUB (2 and 3): the chapters in spine order, each through the HTML
//! converter; title, author, language and dates from the package document.
//!
//! The zip is vetted as Office packages are ([`Package::open`]). A spine
//! entry that is missing, points outside the package or cannot be read is
//! left out with a warning; a book none of whose chapters can be read is an
//! error. The navigation document (a table of contents that repeats the
//! headings) is not read as a chapter. A chapter listed in
//! `META-INF/encryption.xml` (DRM) makes the book `encrypted`.

use std::collections::HashMap;

use kts_record::ErrorCode;
use serde_json::{Map, Value};

use super::ooxml::{self, Element, Package};
use super::{Context, ConvertError, Converted, html};

/// One entry of the package document's manifest.
struct Item {
    href: String,
    media_type: String,
    properties: String,
}

pub fn convert(bytes: &[u8], ctx: &mut Context) -> Result<Converted, ConvertError> {
    let mut package = Package::open(bytes, ctx.limits)?;
    let container = read_xml(&mut package, "META-INF/container.xml")?
        .ok_or_else(|| ConvertError::corrupt("not an EPUB: no META-INF/container.xml"))?;
    let mut rootfiles = Vec::new();
    container.descendants("rootfile", &mut rootfiles);
    let opf_path = rootfiles
        .iter()
        .find_map(|r| r.attr("full-path"))
        .map(str::to_owned)
        .ok_or_else(|| {
            ConvertError::corrupt("not an EPUB: container.xml names no package document")
        })?;
    let opf = read_xml(&mut package, &opf_path)?.ok_or_else(|| {
        ConvertError::corrupt(format!("the package document {opf_path} is missing"))
    })?;
    let base = opf_path.rsplit_once('/').map_or("", |(dir, _)| dir);
    let (title, mut properties) = metadata(&opf);
    let manifest = manifest(&opf);
    let encrypted = encrypted_parts(&mut package)?;

    let mut chapters = Vec::new();
    let mut warnings = Vec::new();
    let spine = opf.child("spine").map(|s| {
        s.elements()
            .filter(|e| e.name == "itemref" && e.attr("linear") != Some("no"))
            .filter_map(|e| e.attr("idref"))
            .collect::<Vec<_>>()
    });
    for idref in spine.unwrap_or_default() {
        let Some(item) = manifest.get(idref) else {
            warnings.push(format!(
                "the spine names {idref:?}, which the manifest does not list"
            ));
            continue;
        };
        if item.properties.split_whitespace().any(|p| p == "nav") {
            continue;
        }
        if !item.media_type.contains("html") {
            warnings.push(format!(
                "spine item {} is {}, not (X)HTML: left out",
                item.href, item.media_type
            ));
            continue;
        }
        let Some(path) = package_path(base, &item.href) else {
            warnings.push(format!(
                "spine item {} points outside the package: left out",
                item.href
            ));
            continue;
        };
        if encrypted.contains(&path) {
            return Err(ConvertError::new(
                ErrorCode::Encrypted,
                format!("the chapter {path} is encrypted (DRM-protected EPUB)"),
            ));
        }
        let Some(xhtml) = package.part(&path) else {
            warnings.push(format!(
                "spine item {path} is missing from the package: left out"
            ));
            continue;
        };
        match html::convert(&xhtml) {
            Ok(chapter) => chapters.push(chapter.markdown.trim().to_owned()),
            // A cover or a page holding only a picture.
            Err(e) if e.code == ErrorCode::Empty => {}
            Err(e) => warnings.push(format!("chapter {path}: {}", e.message)),
        }
    }
    if chapters.is_empty() {
        return Err(if warnings.is_empty() {
            ConvertError::new(ErrorCode::Empty, "the EPUB has no chapter with text")
        } else {
            ConvertError::corrupt(format!("no chapter could be read: {}", warnings.join("; ")))
        });
    }
    if !warnings.is_empty() {
        properties.insert("warnings".into(), Value::from(warnings));
    }
    Ok(Converted {
        markdown: chapters.join("\n\n") + "\n",
        title,
        properties,
    })
}

/// A part parsed; `None` when missing, an error when it is not well-formed
/// or declares entities.
fn read_xml(package: &mut Package, name: &str) -> Result<Option<Element>, ConvertError> {
    let Some(xml) = package.part(name) else {
        return Ok(None);
    };
    ooxml::refuse_entity_declarations(name, &xml)?;
    Element::parse(&xml)
        .map(Some)
        .ok_or_else(|| ConvertError::corrupt(format!("{name} is not well-formed XML")))
}

/// Title and properties from the package document's `metadata`.
fn metadata(opf: &Element) -> (Option<String>, Map<String, Value>) {
    let mut properties = Map::new();
    let Some(metadata) = opf.child("metadata") else {
        return (None, properties);
    };
    let texts = |name: &str| -> Vec<String> {
        metadata
            .elements()
            .filter(|e| e.name == name)
            .map(|e| one_line(&e.text()))
            .filter(|t| !t.is_empty())
            .collect()
    };
    let title = texts("title").into_iter().next();
    for (element, key) in [
        ("creator", "author"),
        ("language", "language"),
        ("date", "created"),
        ("publisher", "publisher"),
        ("description", "description"),
        ("subject", "keywords"),
    ] {
        let values = texts(element);
        if !values.is_empty() {
            properties.insert(key.into(), Value::String(values.join(", ")));
        }
    }
    let modified = metadata
        .elements()
        .find(|e| e.name == "meta" && e.attr("property") == Some("dcterms:modified"))
        .map(|e| one_line(&e.text()))
        .filter(|t| !t.is_empty());
    if let Some(modified) = modified {
        properties.insert("modified".into(), Value::String(modified));
    }
    (title, properties)
}

fn manifest(opf: &Element) -> HashMap<String, Item> {
    let mut items = HashMap::new();
    for item in opf
        .child("manifest")
        .into_iter()
        .flat_map(|m| m.elements())
        .filter(|e| e.name == "item")
    {
        if let (Some(id), Some(href)) = (item.attr("id"), item.attr("href")) {
            items.insert(
                id.to_owned(),
                Item {
                    href: href.to_owned(),
                    media_type: item.attr("media-type").unwrap_or_default().to_owned(),
                    properties: item.attr("properties").unwrap_or_default().to_owned(),
                },
            );
        }
    }
    items
}

/// The parts `META-INF/encryption.xml` lists as encrypted.
fn encrypted_parts(package: &mut Package) -> Result<Vec<String>, ConvertError> {
    let Some(encryption) = read_xml(package, "META-INF/encryption.xml")? else {
        return Ok(Vec::new());
    };
    let mut references = Vec::new();
    encryption.descendants("CipherReference", &mut references);
    Ok(references
        .iter()
        .filter_map(|r| r.attr("URI"))
        .filter_map(|uri| package_path("", uri))
        .collect())
}

/// The part an `href` names, resolved against the folder of the package
/// document; `None` when it is absolute, remote or climbs out of the package.
fn package_path(base: &str, href: &str) -> Option<String> {
    let href = href.split(['#', '?']).next().unwrap_or_default();
    let href = percent_decode(href);
    if href.is_empty() || href.starts_with('/') || href.contains(':') || href.contains('\\') {
        return None;
    }
    let mut segments: Vec<&str> = base.split('/').filter(|s| !s.is_empty()).collect();
    for segment in href.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop()?;
            }
            s => segments.push(s),
        }
    }
    Some(segments.join("/"))
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
