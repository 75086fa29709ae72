//! Helpers shared by the integration tests: unzipping, XML well-formedness
//! and OOXML package consistency checks, and an outline using every block.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{Cursor, Read};

use kts_sample::{Block, Outline, tiny_png};
use quick_xml::events::Event;

/// Every entry of a zip, by name, in archive order.
pub fn unzip(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).expect("a readable zip");
    (0..archive.len())
        .map(|i| {
            let mut file = archive.by_index(i).expect("an entry");
            let mut data = Vec::new();
            file.read_to_end(&mut data).expect("entry data");
            (file.name().to_string(), data)
        })
        .collect()
}

pub fn unzip_map(bytes: &[u8]) -> BTreeMap<String, Vec<u8>> {
    unzip(bytes).into_iter().collect()
}

pub fn text(parts: &BTreeMap<String, Vec<u8>>, name: &str) -> String {
    let bytes = parts
        .get(name)
        .unwrap_or_else(|| panic!("missing part {name}"));
    String::from_utf8(bytes.clone()).expect("UTF-8 XML")
}

/// Panics unless `xml` is well-formed with exactly one root element.
pub fn assert_well_formed(name: &str, xml: &str) {
    let mut reader = quick_xml::Reader::from_str(xml);
    let (mut depth, mut roots) = (0usize, 0usize);
    loop {
        match reader.read_event() {
            Ok(Event::Start(_)) => {
                roots += usize::from(depth == 0);
                depth += 1;
            }
            Ok(Event::Empty(_)) => roots += usize::from(depth == 0),
            Ok(Event::End(_)) => depth -= 1,
            Ok(Event::Eof) => break,
            Ok(_) => {}
            Err(e) => panic!("{name} is not well-formed XML: {e}"),
        }
    }
    assert_eq!(
        (depth, roots),
        (0, 1),
        "{name}: unbalanced or not one root element"
    );
}

/// All `.xml` and `.rels` parts are well-formed, every internal relationship
/// target exists, and every part has a content type.
pub fn assert_consistent_package(parts: &BTreeMap<String, Vec<u8>>) {
    for (name, bytes) in parts {
        if name.ends_with(".xml") || name.ends_with(".rels") {
            assert_well_formed(name, std::str::from_utf8(bytes).expect("UTF-8"));
        }
    }
    let types = text(parts, "[Content_Types].xml");
    for name in parts.keys().filter(|n| *n != "[Content_Types].xml") {
        let ext = name.rsplit('.').next().unwrap_or_default();
        let by_default = types.contains(&format!("Extension=\"{ext}\""));
        let by_override = types.contains(&format!("PartName=\"/{name}\""));
        assert!(by_default || by_override, "{name} has no content type");
    }
    for (name, bytes) in parts.iter().filter(|(n, _)| n.ends_with(".rels")) {
        for (target, external) in
            relationship_targets(std::str::from_utf8(bytes).unwrap_or_default())
        {
            if external {
                continue;
            }
            let resolved = resolve(name, &target);
            assert!(
                parts.contains_key(&resolved),
                "{name} points at missing part {resolved}"
            );
        }
    }
}

/// (Target, is external) of each relationship in a .rels part.
pub fn relationship_targets(rels: &str) -> Vec<(String, bool)> {
    rels.split("<Relationship ")
        .skip(1)
        .map(|rel| {
            let target = rel
                .split("Target=\"")
                .nth(1)
                .and_then(|t| t.split('"').next())
                .unwrap_or_default();
            (target.to_string(), rel.contains("TargetMode=\"External\""))
        })
        .collect()
}

/// Resolves a relationship target against the part that owns the .rels file.
fn resolve(rels_name: &str, target: &str) -> String {
    if let Some(absolute) = target.strip_prefix('/') {
        return absolute.to_string();
    }
    // "a/b/_rels/c.xml.rels" belongs to "a/b/c.xml": targets are relative to "a/b".
    let base = rels_name
        .split("_rels/")
        .next()
        .unwrap_or_default()
        .trim_end_matches('/');
    let mut segments: Vec<&str> = base.split('/').filter(|s| !s.is_empty()).collect();
    for segment in target.split('/') {
        match segment {
            ".." => {
                segments.pop();
            }
            "." | "" => {}
            s => segments.push(s),
        }
    }
    segments.join("/")
}

/// An OpenDocument package of `kind` (text, presentation): its uncompressed
/// `mimetype` entry first, every XML part well-formed, and every part it
/// holds listed in its manifest.
pub fn assert_opendocument(bytes: &[u8], kind: &str) {
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).expect("a readable zip");
    let first = archive.by_index(0).expect("an entry");
    assert_eq!(first.name(), "mimetype");
    assert_eq!(first.compression(), zip::CompressionMethod::Stored);
    drop(first);
    let parts = unzip_map(bytes);
    assert_eq!(
        text(&parts, "mimetype"),
        format!("application/vnd.oasis.opendocument.{kind}")
    );
    for (name, data) in &parts {
        if name.ends_with(".xml") {
            assert_well_formed(name, &String::from_utf8_lossy(data));
        }
    }
    let manifest = text(&parts, "META-INF/manifest.xml");
    for name in parts
        .keys()
        .filter(|n| *n != "mimetype" && *n != "META-INF/manifest.xml")
    {
        assert!(
            manifest.contains(&format!("manifest:full-path=\"{name}\"")),
            "{name} is not in the manifest"
        );
    }
}

/// An EPUB: its uncompressed `mimetype` entry first, every XML and XHTML
/// part well-formed, and every file of the package document's manifest present.
pub fn assert_epub(bytes: &[u8]) {
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).expect("a readable zip");
    let first = archive.by_index(0).expect("an entry");
    assert_eq!(first.name(), "mimetype");
    assert_eq!(first.compression(), zip::CompressionMethod::Stored);
    drop(first);
    let parts = unzip_map(bytes);
    assert_eq!(text(&parts, "mimetype"), "application/epub+zip");
    for (name, data) in &parts {
        if name.ends_with(".xml") || name.ends_with(".xhtml") || name.ends_with(".opf") {
            assert_well_formed(name, &String::from_utf8_lossy(data));
        }
    }
    let opf = text(&parts, "OEBPS/content.opf");
    for href in opf.split("href=\"").skip(1) {
        let href = href.split('"').next().unwrap();
        assert!(
            parts.contains_key(&format!("OEBPS/{href}")),
            "{href} is missing"
        );
    }
}

/// An outline with every kind of block, three slide-level sections, notes,
/// characters that need escaping, and a page break.
pub fn full_outline() -> Outline {
    Outline::new("Sample & <Test> Report")
        .paragraph("An introduction paragraph (with parentheses) and a back\\slash.")
        .heading(1, "First section")
        .paragraph("Alpha paragraph about kts-crawl.")
        .bullets(["bullet one", "bullet two"])
        .numbered(["step one", "step two"])
        .block(Block::Notes("Notes for the first section.".into()))
        .heading(2, "Second section")
        .table(&[
            &["Code", "Meaning"],
            &["bad-json", "not JSON"],
            &["io", "read failed"],
        ])
        .block(Block::Image {
            png: tiny_png(16, 12, 7),
            alt: "A gradient chart".into(),
        })
        .heading(3, "A subsection")
        .block(Block::Code("fn main() {\n    println!(\"hi\");\n}".into()))
        .block(Block::PageBreak)
        .heading(2, "Third section")
        .paragraph("Omega paragraph after the page break — café.")
        .block(Block::Notes("Closing notes.".into()))
}
