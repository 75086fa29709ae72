//! OpenDocument text (.odt) writer.
//!
//! The title is a `Title` paragraph, headings are `text:h` with their
//! outline level, bullets and numbered lists are `text:list`s of a bullet
//! and a numbered list style, tables have a header row, code (Preformatted Text) keeps its
//! spaces and line breaks, images are pictures in `Pictures/` with their alt
//! text as the frame's title; `meta.xml` carries the title and fixed dates.

use crate::outline::{Block, Outline};
use crate::package::{self, FIXED_DATE, Part, png_size};
use crate::xml::escape;

const MIMETYPE: &str = "application/vnd.oasis.opendocument.text";

const NAMESPACES: &str = concat!(
    r#"xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" "#,
    r#"xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" "#,
    r#"xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" "#,
    r#"xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" "#,
    r#"xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" "#,
    r#"xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" "#,
    r#"xmlns:xlink="http://www.w3.org/1999/xlink" "#,
    r#"xmlns:dc="http://purl.org/dc/elements/1.1/" "#,
    r#"xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0" "#,
    r#"xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" "#,
    r#"office:version="1.3""#
);

/// The outline as an .odt package.
pub fn to_odt(outline: &Outline) -> anyhow::Result<Vec<u8>> {
    let mut body = String::new();
    if !outline.title.is_empty() {
        body.push_str(&format!(
            r#"<text:p text:style-name="Title">{}</text:p>"#,
            escape(&outline.title)
        ));
    }
    let mut pictures: Vec<Part> = Vec::new();
    for block in &outline.blocks {
        body.push_str(&block_xml(block, &mut pictures));
    }
    let content = format!(
        concat!(
            r#"<?xml version="1.0" encoding="UTF-8"?>"#,
            "\n",
            r#"<office:document-content {ns}><office:automatic-styles>"#,
            r#"<text:list-style style:name="Bullets"><text:list-level-style-bullet text:level="1" text:bullet-char="•"/></text:list-style>"#,
            r#"<text:list-style style:name="Numbers"><text:list-level-style-number text:level="1" style:num-format="1" style:num-suffix="."/></text:list-style>"#,
            r#"<style:style style:name="Break" style:family="paragraph"><style:paragraph-properties fo:break-before="page"/></style:style>"#,
            r#"</office:automatic-styles><office:body><office:text>{body}</office:text></office:body></office:document-content>"#
        ),
        ns = NAMESPACES,
        body = body
    );
    let mut parts: Vec<Part> = vec![
        ("content.xml".into(), content.into_bytes()),
        ("styles.xml".into(), styles_xml()),
        ("meta.xml".into(), meta_xml(&outline.title)),
    ];
    parts.push(("META-INF/manifest.xml".into(), manifest_xml(&pictures)));
    parts.extend(pictures);
    Ok(package::zip_with_mimetype(MIMETYPE, &parts)?)
}

fn block_xml(block: &Block, pictures: &mut Vec<Part>) -> String {
    match block {
        Block::Heading { level, text } => format!(
            r#"<text:h text:style-name="Heading_20_{level}" text:outline-level="{level}">{}</text:h>"#,
            escape(text),
            level = (*level).clamp(1, 6)
        ),
        Block::Paragraph(text) => format!("<text:p>{}</text:p>", escape(text)),
        Block::Bullets(items) => list("Bullets", items),
        Block::Numbered(items) => list("Numbers", items),
        Block::Table(rows) => table(rows),
        Block::Code(code) => {
            let lines: Vec<String> = code.lines().map(preformatted).collect();
            format!(
                r#"<text:p text:style-name="Preformatted_20_Text">{}</text:p>"#,
                lines.join("<text:line-break/>")
            )
        }
        Block::Image { png, alt } => {
            let name = format!("Pictures/image{}.png", pictures.len() + 1);
            let (width, height) = png_size(png).unwrap_or((4, 3));
            pictures.push((name.clone(), png.clone()));
            // Four times the pixel size at 96 dpi, as the other writers show it.
            format!(
                r#"<text:p><draw:frame text:anchor-type="as-char" svg:width="{w:.3}in" svg:height="{h:.3}in"><draw:image xlink:href="{name}" xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/><svg:title>{alt}</svg:title></draw:frame></text:p>"#,
                w = f64::from(width) * 4.0 / 96.0,
                h = f64::from(height) * 4.0 / 96.0,
                alt = escape(alt)
            )
        }
        Block::Notes(text) => format!("<text:p>Notes: {}</text:p>", escape(text)),
        Block::PageBreak => r#"<text:p text:style-name="Break"/>"#.into(),
    }
}

fn list(style: &str, items: &[String]) -> String {
    let items: String = items
        .iter()
        .map(|item| {
            format!(
                "<text:list-item><text:p>{}</text:p></text:list-item>",
                escape(item)
            )
        })
        .collect();
    format!(r#"<text:list text:style-name="{style}">{items}</text:list>"#)
}

fn table(rows: &[Vec<String>]) -> String {
    let width = rows.iter().map(Vec::len).max().unwrap_or(0);
    let row = |cells: &[String]| {
        let cells: String = (0..width)
            .map(|i| {
                let text = escape(cells.get(i).map(String::as_str).unwrap_or(""));
                format!(r#"<table:table-cell office:value-type="string"><text:p>{text}</text:p></table:table-cell>"#)
            })
            .collect();
        format!("<table:table-row>{cells}</table:table-row>")
    };
    let Some((header, body)) = rows.split_first() else {
        return String::new();
    };
    let body: String = body.iter().map(|r| row(r)).collect();
    format!(
        r#"<table:table><table:table-column table:number-columns-repeated="{width}"/><table:table-header-rows>{}</table:table-header-rows>{body}</table:table>"#,
        row(header)
    )
}

/// A line of code with its runs of spaces kept (`text:s`).
fn preformatted(line: &str) -> String {
    let mut out = String::new();
    let mut spaces = 0;
    let flush = |out: &mut String, spaces: &mut usize| {
        match *spaces {
            0 => {}
            1 if !out.is_empty() => out.push(' '),
            n => out.push_str(&format!(r#"<text:s text:c="{n}"/>"#)),
        }
        *spaces = 0;
    };
    for c in line.chars() {
        if c == ' ' {
            spaces += 1;
        } else {
            flush(&mut out, &mut spaces);
            out.push_str(&escape(&c.to_string()));
        }
    }
    flush(&mut out, &mut spaces);
    out
}

fn styles_xml() -> Vec<u8> {
    let headings: String = (1..=6)
        .map(|level| {
            format!(
                r#"<style:style style:name="Heading_20_{level}" style:display-name="Heading {level}" style:family="paragraph" style:default-outline-level="{level}"><style:text-properties fo:font-weight="bold"/></style:style>"#
            )
        })
        .collect();
    format!(
        concat!(
            r#"<?xml version="1.0" encoding="UTF-8"?>"#,
            "\n",
            r#"<office:document-styles {ns}><office:styles>"#,
            r#"<style:style style:name="Title" style:family="paragraph"><style:text-properties fo:font-size="28pt"/></style:style>"#,
            r#"<style:style style:name="Preformatted_20_Text" style:display-name="Preformatted Text" style:family="paragraph"><style:text-properties style:font-name="Liberation Mono"/></style:style>"#,
            "{headings}</office:styles></office:document-styles>"
        ),
        ns = NAMESPACES,
        headings = headings
    )
    .into_bytes()
}

fn meta_xml(title: &str) -> Vec<u8> {
    format!(
        concat!(
            r#"<?xml version="1.0" encoding="UTF-8"?>"#,
            "\n",
            r#"<office:document-meta {ns}><office:meta><meta:generator>kts-sample</meta:generator>"#,
            "<dc:title>{title}</dc:title><meta:initial-creator>kts-sample</meta:initial-creator><dc:creator>kts-sample</dc:creator>",
            "<meta:creation-date>{date}</meta:creation-date><dc:date>{date}</dc:date></office:meta></office:document-meta>"
        ),
        ns = NAMESPACES,
        title = escape(title),
        date = FIXED_DATE.trim_end_matches('Z')
    )
    .into_bytes()
}

fn manifest_xml(pictures: &[Part]) -> Vec<u8> {
    let entry = |path: &str, media_type: &str| {
        format!(
            r#"<manifest:file-entry manifest:full-path="{path}" manifest:media-type="{media_type}"/>"#
        )
    };
    let mut entries = vec![
        entry("/", MIMETYPE),
        entry("content.xml", "text/xml"),
        entry("styles.xml", "text/xml"),
        entry("meta.xml", "text/xml"),
    ];
    entries.extend(pictures.iter().map(|(name, _)| entry(name, "image/png")));
    format!(
        concat!(
            r#"<?xml version="1.0" encoding="UTF-8"?>"#,
            "\n",
            r#"<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.3">{}</manifest:manifest>"#
        ),
        entries.concat()
    )
    .into_bytes()
}
