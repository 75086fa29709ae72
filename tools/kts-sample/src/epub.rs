//! EPUB 3 writer.
//!
//! The outline is cut into chapters at its level-1 and level-2 headings,
//! each an XHTML file in the spine; the title opens the first chapter.
//! Images are files in `OEBPS/images/`; a navigation document lists the
//! chapters; the package document carries the title, creator, language and
//! a fixed modification date.

use crate::html::html_block;
use crate::outline::{Block, Outline};
use crate::package::{self, FIXED_DATE, Part};
use crate::xml::escape;

const MIMETYPE: &str = "application/epub+zip";

/// The outline as an .epub package.
pub fn to_epub(outline: &Outline) -> anyhow::Result<Vec<u8>> {
    let mut chapters: Vec<(String, Vec<String>)> = Vec::new();
    let mut images: Vec<Part> = Vec::new();
    let mut current = (outline.title.clone(), Vec::new());
    if !outline.title.is_empty() {
        current
            .1
            .push(format!("<h1>{}</h1>", escape(&outline.title)));
    }
    for block in &outline.blocks {
        if let Block::Heading { level, text } = block
            && *level <= 2
            && !current.1.is_empty()
        {
            chapters.push(std::mem::replace(&mut current, (text.clone(), Vec::new())));
        }
        current.1.push(match block {
            Block::Image { png, alt } => {
                let name = format!("images/image{}.png", images.len() + 1);
                images.push((format!("OEBPS/{name}"), png.clone()));
                format!(r#"<p><img src="{name}" alt="{}"/></p>"#, escape(alt))
            }
            Block::PageBreak => "<hr/>".into(),
            other => html_block(other),
        });
    }
    if !current.1.is_empty() {
        chapters.push(current);
    }
    let mut parts: Vec<Part> = vec![("META-INF/container.xml".into(), CONTAINER.into())];
    parts.push((
        "OEBPS/content.opf".into(),
        package_document(&outline.title, chapters.len(), &images),
    ));
    parts.push(("OEBPS/nav.xhtml".into(), navigation(&chapters)));
    for (i, (title, body)) in chapters.iter().enumerate() {
        parts.push((
            format!("OEBPS/chapter-{}.xhtml", i + 1),
            xhtml(title, &body.join("\n")),
        ));
    }
    parts.extend(images);
    Ok(package::zip_with_mimetype(MIMETYPE, &parts)?)
}

const CONTAINER: &str = concat!(
    r#"<?xml version="1.0" encoding="UTF-8"?>"#,
    "\n",
    r#"<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">"#,
    r#"<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>"#
);

fn xhtml(title: &str, body: &str) -> Vec<u8> {
    format!(
        concat!(
            r#"<?xml version="1.0" encoding="UTF-8"?>"#,
            "\n<!DOCTYPE html>\n",
            r#"<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" xml:lang="en" lang="en">"#,
            "\n<head><title>{title}</title></head>\n<body>\n{body}\n</body>\n</html>\n"
        ),
        title = escape(title),
        body = body
    )
    .into_bytes()
}

fn navigation(chapters: &[(String, Vec<String>)]) -> Vec<u8> {
    let items: String = chapters
        .iter()
        .enumerate()
        .map(|(i, (title, _))| {
            format!(
                r#"<li><a href="chapter-{}.xhtml">{}</a></li>"#,
                i + 1,
                escape(title)
            )
        })
        .collect();
    xhtml(
        "Contents",
        &format!(r#"<nav epub:type="toc" id="toc"><h1>Contents</h1><ol>{items}</ol></nav>"#),
    )
}

fn package_document(title: &str, chapters: usize, images: &[Part]) -> Vec<u8> {
    let mut manifest = vec![
        r#"<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>"#
            .to_owned(),
    ];
    let mut spine = Vec::new();
    for i in 1..=chapters {
        manifest.push(format!(
            r#"<item id="chapter-{i}" href="chapter-{i}.xhtml" media-type="application/xhtml+xml"/>"#
        ));
        spine.push(format!(r#"<itemref idref="chapter-{i}"/>"#));
    }
    for (i, (name, _)) in images.iter().enumerate() {
        let href = name.trim_start_matches("OEBPS/");
        manifest.push(format!(
            r#"<item id="image-{}" href="{href}" media-type="image/png"/>"#,
            i + 1
        ));
    }
    format!(
        concat!(
            r#"<?xml version="1.0" encoding="UTF-8"?>"#,
            "\n",
            r#"<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">"#,
            r#"<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">"#,
            r#"<dc:identifier id="id">urn:kts-sample:{id}</dc:identifier><dc:title>{title}</dc:title>"#,
            "<dc:creator>kts-sample</dc:creator><dc:language>en</dc:language>",
            r#"<meta property="dcterms:modified">{date}</meta></metadata>"#,
            "<manifest>{manifest}</manifest><spine>{spine}</spine></package>"
        ),
        id = escape(&title.to_lowercase().replace(' ', "-")),
        title = escape(title),
        date = FIXED_DATE,
        manifest = manifest.concat(),
        spine = spine.concat()
    )
    .into_bytes()
}
