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

use super::one_line;
use super::ooxml::{Element, Package};
use super::{Context, ConvertError, Converted, html};

/// One entry of the package document's manifest.
struct Item {
    href: String,
    media_type: String,
    properties: String,
}

pub fn convert(bytes: &[u8], ctx: &mut Context) -> Result<Converted, ConvertError> {
    let mut package = Package::open(bytes, ctx.limits)?;
    let container = package
        .xml_part("META-INF/container.xml")?
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
    let opf = package.xml_part(&opf_path)?.ok_or_else(|| {
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
    let Some(encryption) = package.xml_part("META-INF/encryption.xml")? else {
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
    let href = kts_record::percent_decoded(href);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::Limits;
    use crate::formats::ooxml::tests::build_zip;
    use crate::images::ImageSink;

    const CONTAINER: &str = r#"<?xml version="1.0"?><container xmlns="urn:oasis:names:tc:opendocument:xmlns:container" version="1.0"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>"#;

    fn opf(manifest: &str, spine: &str) -> String {
        format!(
            r#"<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>The kts Handbook</dc:title><dc:creator>Ann Lee</dc:creator><dc:creator>Bo Chan</dc:creator><dc:language>en</dc:language><dc:date>2024-03-01</dc:date><meta property="dcterms:modified">2024-04-02T10:00:00Z</meta></metadata><manifest>{manifest}</manifest><spine>{spine}</spine></package>"#
        )
    }

    fn chapter(title: &str, text: &str) -> String {
        format!(
            r#"<?xml version="1.0"?><!DOCTYPE html><html xmlns="http://www.w3.org/1999/xhtml"><head><title>{title}</title></head><body><h1>{title}</h1><p>{text}</p></body></html>"#
        )
    }

    fn epub(manifest: &str, spine: &str, files: &[(&str, &[u8])]) -> Vec<u8> {
        let opf = opf(manifest, spine);
        let mut parts: Vec<(&str, &[u8])> = vec![
            ("mimetype", b"application/epub+zip"),
            ("META-INF/container.xml", CONTAINER.as_bytes()),
            ("OEBPS/content.opf", opf.as_bytes()),
        ];
        parts.extend_from_slice(files);
        build_zip(&parts)
    }

    fn item(id: &str, href: &str) -> String {
        format!(r#"<item id="{id}" href="{href}" media-type="application/xhtml+xml"/>"#)
    }

    fn run(bytes: &[u8]) -> Result<Converted, ConvertError> {
        let limits = Limits {
            max_compression_ratio: 100,
            ..Limits::default()
        };
        let mut images = ImageSink::default();
        convert(
            bytes,
            &mut Context {
                limits: &limits,
                images: &mut images,
                ocr: &crate::ocr::Ocr::default(),
            },
        )
    }

    fn book() -> Vec<u8> {
        let manifest = [
            item("one", "text/one.xhtml"),
            item("two", "text/chapter%20two.xhtml"),
            r#"<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>"#.to_owned(),
        ]
        .concat();
        let spine = r#"<itemref idref="nav"/><itemref idref="two"/><itemref idref="one"/><itemref idref="one" linear="no"/>"#;
        epub(
            &manifest,
            spine,
            &[
                (
                    "OEBPS/text/one.xhtml",
                    chapter("Install", "Run make demo.").as_bytes(),
                ),
                (
                    "OEBPS/text/chapter two.xhtml",
                    chapter("Welcome", "Read this first &amp; enjoy.").as_bytes(),
                ),
                (
                    "OEBPS/nav.xhtml",
                    chapter("Contents", "Welcome Install").as_bytes(),
                ),
            ],
        )
    }

    #[test]
    fn chapters_follow_the_spine_with_the_book_metadata() {
        let converted = run(&book()).unwrap();
        assert_eq!(
            converted.markdown,
            "# Welcome\n\nRead this first & enjoy.\n\n# Install\n\nRun make demo.\n"
        );
        assert_eq!(converted.title.as_deref(), Some("The kts Handbook"));
        let p = &converted.properties;
        assert_eq!(p["author"], "Ann Lee, Bo Chan");
        assert_eq!(p["language"], "en");
        assert_eq!(p["created"], "2024-03-01");
        assert_eq!(p["modified"], "2024-04-02T10:00:00Z");
        assert!(p.get("warnings").is_none());
    }

    #[test]
    fn spine_entries_outside_the_package_or_missing_are_left_out_with_warnings() {
        let manifest = [
            item("escape", "../../etc/passwd"),
            item("absolute", "/etc/passwd"),
            item("remote", "https://example.com/x.xhtml"),
            item("missing", "gone.xhtml"),
            item("good", "good.xhtml"),
        ]
        .concat();
        let spine = r#"<itemref idref="escape"/><itemref idref="absolute"/><itemref idref="remote"/><itemref idref="missing"/><itemref idref="unlisted"/><itemref idref="good"/>"#;
        let good = chapter("Kept", "Text.");
        let files: [(&str, &[u8]); 2] = [
            ("OEBPS/good.xhtml", good.as_bytes()),
            ("etc/passwd", b"root:x:0:0"),
        ];
        let converted = run(&epub(&manifest, spine, &files)).unwrap();
        assert_eq!(converted.markdown, "# Kept\n\nText.\n");
        let warnings: Vec<&str> = converted.properties["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert_eq!(warnings.len(), 5, "{warnings:?}");
        assert!(warnings[0].contains("../../etc/passwd points outside the package"));
        assert!(warnings[3].contains("OEBPS/gone.xhtml is missing"));
        assert!(warnings[4].contains("\"unlisted\""));

        // Nothing readable at all: an error naming why.
        let spine = r#"<itemref idref="escape"/><itemref idref="missing"/>"#;
        let e = run(&epub(&manifest, spine, &[])).unwrap_err();
        assert_eq!(e.code, ErrorCode::Corrupt);
        assert!(
            e.message.contains("points outside the package"),
            "{}",
            e.message
        );
        let e = run(&epub(&manifest, "", &[])).unwrap_err();
        assert_eq!(e.code, ErrorCode::Empty);
    }

    #[test]
    fn damaged_hostile_and_protected_books_give_clear_errors() {
        let good = book();
        for cut in (0..good.len()).step_by(61) {
            assert!(run(&good[..cut]).is_err(), "a book cut at {cut} converted");
        }
        let e = run(&good[..good.len() - 30]).unwrap_err();
        assert_eq!(e.code, ErrorCode::Corrupt, "{}", e.message);

        let e = run(&build_zip(&[("mimetype", b"application/epub+zip")])).unwrap_err();
        assert!(e.message.contains("container.xml"), "{}", e.message);

        let bomb = vec![b'a'; 8 << 20];
        let e = run(&epub(
            &item("one", "one.xhtml"),
            r#"<itemref idref="one"/>"#,
            &[("OEBPS/one.xhtml", &bomb)],
        ))
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::TooLarge);

        let entities = opf("", "").replace(
            r#"<?xml version="1.0"?>"#,
            r#"<?xml version="1.0"?><!DOCTYPE package [<!ENTITY x SYSTEM "file:///etc/passwd">]>"#,
        );
        let bytes = build_zip(&[
            ("META-INF/container.xml", CONTAINER.as_bytes()),
            ("OEBPS/content.opf", entities.as_bytes()),
        ]);
        assert_eq!(run(&bytes).unwrap_err().code, ErrorCode::ExternalReference);

        let encryption = r#"<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData><enc:CipherData><enc:CipherReference URI="OEBPS/one.xhtml"/></enc:CipherData></enc:EncryptedData></encryption>"#;
        let bytes = epub(
            &item("one", "one.xhtml"),
            r#"<itemref idref="one"/>"#,
            &[
                ("OEBPS/one.xhtml", b"\x01\x02 encrypted bytes"),
                ("META-INF/encryption.xml", encryption.as_bytes()),
            ],
        );
        assert_eq!(run(&bytes).unwrap_err().code, ErrorCode::Encrypted);
    }

    #[test]
    fn hrefs_resolve_inside_the_package_only() {
        assert_eq!(
            package_path("OEBPS", "text/a%20b.xhtml#part").as_deref(),
            Some("OEBPS/text/a b.xhtml")
        );
        assert_eq!(
            package_path("OEBPS/text", "../x.xhtml").as_deref(),
            Some("OEBPS/x.xhtml")
        );
        assert_eq!(package_path("OEBPS", "../../x.xhtml"), None);
        assert_eq!(package_path("", "C:\\x.xhtml"), None);
        assert_eq!(kts_record::percent_decoded("%zz%4"), "%zz%4");
    }
}
