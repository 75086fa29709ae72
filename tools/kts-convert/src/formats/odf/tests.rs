use kts_record::ErrorCode;

use super::*;
use crate::formats::Limits;
use crate::formats::ooxml::tests::build_zip;
use crate::images::ImageSink;

const NS: &str = r#"xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0""#;

const TEXT: &str = "application/vnd.oasis.opendocument.text";
const PRESENTATION: &str = "application/vnd.oasis.opendocument.presentation";

fn package(mimetype: &str, content: &str, extra: &[(&str, &[u8])]) -> Vec<u8> {
    let mut parts: Vec<(&str, &[u8])> = vec![
        ("mimetype", mimetype.as_bytes()),
        ("content.xml", content.as_bytes()),
    ];
    parts.extend_from_slice(extra);
    build_zip(&parts)
}

fn content(automatic_styles: &str, body: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><office:document-content {NS}><office:automatic-styles>{automatic_styles}</office:automatic-styles><office:body>{body}</office:body></office:document-content>"#
    )
}

fn run(
    kind: fn(&[u8], &mut Context) -> Result<Converted, ConvertError>,
    bytes: &[u8],
) -> Result<Converted, ConvertError> {
    let limits = Limits::default();
    let mut images = ImageSink::default();
    kind(
        bytes,
        &mut Context {
            limits: &limits,
            images: &mut images,
            ocr: &crate::ocr::Ocr::default(),
        },
    )
}

fn error(
    kind: fn(&[u8], &mut Context) -> Result<Converted, ConvertError>,
    bytes: &[u8],
) -> ConvertError {
    match run(kind, bytes) {
        Ok(converted) => panic!("expected an error, got {:?}", converted.markdown),
        Err(e) => e,
    }
}

const STYLES: &str = r#"<office:document-styles xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"><office:styles><style:style style:name="Title" style:family="paragraph"/><style:style style:name="Strong_20_Emphasis" style:display-name="Strong Emphasis" style:family="text"><style:text-properties fo:font-weight="bold"/></style:style></office:styles></office:document-styles>"#;

const META: &str = r#"<office:document-meta xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0"><office:meta><dc:title>Leave policy</dc:title><meta:initial-creator>Ann Lee</meta:initial-creator><dc:creator>Bo Chan</dc:creator><meta:creation-date>2024-03-01T09:00:00</meta:creation-date><dc:date>2024-04-02T10:00:00</dc:date><meta:keyword>leave</meta:keyword><meta:keyword>hr</meta:keyword></office:meta></office:document-meta>"#;

fn text_document() -> Vec<u8> {
    let automatic = r#"<style:style style:name="P1" style:family="paragraph" style:parent-style-name="Title"/><style:style style:name="T1" style:family="text"><style:text-properties fo:font-style="italic"/></style:style><text:list-style style:name="L1"><text:list-level-style-number text:level="1" style:num-format="1"/><text:list-level-style-bullet text:level="2" text:bullet-char="•"/></text:list-style>"#;
    let body = r#"<office:text><text:sequence-decls/><text:p text:style-name="P1">Leave <text:span text:style-name="T1">policy</text:span></text:p><text:h text:outline-level="2">Sick&#160;leave</text:h><text:p>Call <text:span text:style-name="Strong_20_Emphasis">your manager</text:span> before 9:00<text:note text:note-class="footnote"><text:note-citation>1</text:note-citation><text:note-body><text:p>Or the duty desk.</text:p></text:note-body></text:note>.<office:annotation><dc:creator>Ann Lee</dc:creator><text:p>Check the time.</text:p></office:annotation> See <text:a xlink:href="https://example.com/leave">the portal</text:a> or <text:a xlink:href="file:///etc/passwd">this</text:a>.<text:line-break/>Second<text:s text:c="3"/>line.</text:p><text:list text:style-name="L1"><text:list-item><text:p>Report</text:p><text:list><text:list-item><text:p>by phone</text:p></text:list-item></text:list></text:list-item><text:list-item><text:p>Rest</text:p></text:list-item></text:list><text:h text:outline-level="2">Pay</text:h><text:table-of-content><text:index-body><text:p>Sick leave 1</text:p></text:index-body></text:table-of-content><table:table><table:table-header-rows><table:table-row><table:table-cell><text:p>Days</text:p></table:table-cell><table:table-cell><text:p>Pay</text:p></table:table-cell></table:table-row></table:table-header-rows><table:table-row><table:table-cell table:number-columns-spanned="2"><text:p>1-3 | full</text:p></table:table-cell><table:covered-table-cell/></table:table-row><table:table-row><table:table-cell table:number-rows-spanned="2"><text:p>4+</text:p></table:table-cell><table:table-cell><text:p>half</text:p></table:table-cell></table:table-row><table:table-row><table:covered-table-cell/><table:table-cell><text:p>none</text:p></table:table-cell></table:table-row><table:table-row table:number-rows-repeated="1000000"><table:table-cell table:number-columns-repeated="1000000"/></table:table-row></table:table><text:tracked-changes><text:changed-region><text:deletion><text:p>removed words</text:p></text:deletion></text:changed-region></text:tracked-changes></office:text>"#;
    package(
        TEXT,
        &content(automatic, body),
        &[
            ("styles.xml", STYLES.as_bytes()),
            ("meta.xml", META.as_bytes()),
        ],
    )
}

#[test]
fn text_document_headings_lists_tables_notes_and_comments() {
    let converted = run(odt, &text_document()).unwrap();
    assert_eq!(
        converted.markdown,
        "# Leave *policy*\n\n\
         ## Sick leave\n\n\
         Call **your manager** before 9:00[^1]. See [the portal](https://example.com/leave) or this.\n\
         Second   line.\n\n\
         > Comment (Ann Lee): Check the time.\n\n\
         1. Report\n    - by phone\n2. Rest\n\n\
         [^1]: Or the duty desk.\n\n\
         ## Pay\n\n\
         | Days | Pay |\n| --- | --- |\n| 1-3 \\| full | 1-3 \\| full |\n| 4+ | half |\n| 4+ | none |\n"
    );
    assert_eq!(converted.title.as_deref(), Some("Leave policy"));
    let p = &converted.properties;
    assert_eq!(p["author"], "Ann Lee");
    assert_eq!(p["last_modified_by"], "Bo Chan");
    assert_eq!(p["created"], "2024-03-01T09:00:00");
    assert_eq!(p["modified"], "2024-04-02T10:00:00");
    assert_eq!(p["keywords"], "leave, hr");
}

#[test]
fn pictures_are_stored_and_previews_left_out() {
    let png = kts_sample::tiny_png(4, 4, 7);
    let body = r#"<office:text><text:p>Logo: <draw:frame><draw:image xlink:href="Pictures/logo.pdf"/><draw:image xlink:href="Pictures/logo.png"/><svg:title>The [kts] logo</svg:title></draw:frame></text:p><text:p><draw:frame><draw:image xlink:href="../outside.png"/><svg:desc>Outside</svg:desc></draw:frame></text:p><draw:frame><draw:object xlink:href="./Object 1"/><draw:image xlink:href="./ObjectReplacements/Object 1"/></draw:frame></office:text>"#;
    let chart = format!(
        r#"<office:document-content {NS} xmlns:chart="urn:oasis:names:tc:opendocument:xmlns:chart:1.0"><office:body><office:chart><chart:chart chart:class="chart:line"><chart:title><text:p>Visits</text:p></chart:title><table:table><table:table-row><table:table-cell/><table:table-cell><text:p>2024</text:p></table:table-cell></table:table-row><table:table-row><table:table-cell><text:p>May</text:p></table:table-cell><table:table-cell><text:p>7</text:p></table:table-cell></table:table-row></table:table></chart:chart></office:chart></office:body></office:document-content>"#
    );
    let bytes = package(
        TEXT,
        &content("", body),
        &[
            ("Pictures/logo.pdf", b"%PDF-1.4 not a picture"),
            ("Pictures/logo.png", &png),
            ("Object 1/content.xml", chart.as_bytes()),
            ("ObjectReplacements/Object 1", b"preview"),
        ],
    );
    let limits = Limits::default();
    let mut images = ImageSink::default();
    let converted = odt(
        &bytes,
        &mut Context {
            limits: &limits,
            images: &mut images,
            ocr: &crate::ocr::Ocr::default(),
        },
    )
    .unwrap();
    let images = images.into_images();
    assert_eq!(images.len(), 1);
    assert_eq!(images[0].bytes, png);
    assert_eq!(
        converted.markdown,
        format!(
            "Logo: ![The kts logo](images/{})\n\nOutside\n\nLine chart: Visits\n\n|  | 2024 |\n| --- | --- |\n| May | 7 |\n",
            images[0].file_name()
        )
    );
}

fn frame(class: &str, x: &str, y: &str, inner: &str) -> String {
    format!(
        r#"<draw:frame presentation:class="{class}" svg:x="{x}" svg:y="{y}"><draw:text-box>{inner}</draw:text-box></draw:frame>"#
    )
}

#[test]
fn presentation_slides_in_reading_order_with_notes_and_comments() {
    let first = format!(
        r#"<draw:page draw:name="Slide1">{}{}{}{}<draw:frame presentation:class="page-number" svg:y="0cm"><draw:text-box><text:p>1</text:p></draw:text-box></draw:frame><presentation:notes><draw:page-thumbnail presentation:class="page"/>{}</presentation:notes><officeooo:annotation xmlns:officeooo="http://openoffice.org/2009/office"><dc:creator>Ann</dc:creator><text:p>Shorter?</text:p></officeooo:annotation></draw:page>"#,
        frame("outline", "1cm", "12cm", "<text:p>bottom</text:p>"),
        frame("title", "1cm", "1cm", "<text:p>Getting started</text:p>"),
        frame(
            "outline",
            "10cm",
            "4cm",
            "<text:list><text:list-item><text:p>right</text:p></text:list-item></text:list>"
        ),
        frame("outline", "1in", "40mm", "<text:p>left</text:p>"),
        frame("notes", "0cm", "0cm", "<text:p>Say hello.</text:p>"),
    );
    // No title placeholder: the topmost one-line shape is the title.
    let second = r#"<draw:page draw:name="Slide2"><draw:custom-shape svg:x="1cm" svg:y="6cm"><text:p>Body text</text:p></draw:custom-shape><draw:custom-shape svg:x="1cm" svg:y="1cm"><text:p>Install</text:p></draw:custom-shape></draw:page><draw:page draw:name="Slide3"/>"#;
    let body = format!("<office:presentation>{first}{second}</office:presentation>");
    let converted = run(odp, &package(PRESENTATION, &content("", &body), &[])).unwrap();
    assert_eq!(
        converted.markdown,
        "<!-- slide: 1 -->\n\n## Getting started\n\nleft\n\n- right\n\nbottom\n\n\
         ### Notes\n\nSay hello.\n\n### Comments\n\n> Comment (Ann): Shorter?\n\n\
         <!-- slide: 2 -->\n\n## Install\n\nBody text\n\n\
         <!-- slide: 3 -->\n"
    );
    assert_eq!(converted.properties["slides"], 3);
}

#[test]
fn entity_declarations_are_refused() {
    let bomb = format!(
        r#"<?xml version="1.0"?><!DOCTYPE office:document-content [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><office:document-content {NS}><office:body><office:text><text:p>&c;</text:p></office:text></office:body></office:document-content>"#
    );
    let e = error(odt, &package(TEXT, &bomb, &[]));
    assert_eq!(e.code, ErrorCode::Unsupported);
    assert!(
        e.message.contains("content.xml declares XML entities"),
        "{}",
        e.message
    );

    let external = bomb.replace(
        r#"<!ENTITY a "aaaaaaaaaa">"#,
        r#"<!ENTITY a SYSTEM "file:///etc/passwd">"#,
    );
    let e = error(odt, &package(TEXT, &external, &[]));
    assert_eq!(e.code, ErrorCode::ExternalReference);

    // In meta.xml too, and in a presentation.
    let plain = content("", "<office:presentation/>");
    let meta = r#"<!DOCTYPE m [<!ENTITY x "y">]><office:document-meta/>"#;
    let e = error(
        odp,
        &package(PRESENTATION, &plain, &[("meta.xml", meta.as_bytes())]),
    );
    assert!(e.message.contains("meta.xml"), "{}", e.message);
}

#[test]
fn damaged_encrypted_and_foreign_packages_give_clear_errors() {
    let good = text_document();
    for cut in (0..good.len()).step_by(97) {
        if let Ok(converted) = run(odt, &good[..cut]) {
            panic!("a package cut at {cut} converted: {:?}", converted.markdown);
        }
    }
    let e = error(odt, &good[..good.len() / 2]);
    assert_eq!(e.code, ErrorCode::Corrupt, "{}", e.message);

    let e = error(odt, &build_zip(&[("mimetype", TEXT.as_bytes())]));
    assert_eq!(e.code, ErrorCode::Corrupt);
    assert!(
        e.message.contains("no readable content.xml"),
        "{}",
        e.message
    );

    let e = error(
        odt,
        &package(TEXT, "<office:document-content><unclosed", &[]),
    );
    assert_eq!(e.code, ErrorCode::Corrupt);

    let manifest = r#"<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"><manifest:file-entry manifest:full-path="content.xml"><manifest:encryption-data/></manifest:file-entry></manifest:manifest>"#;
    let encrypted = package(
        TEXT,
        "binary",
        &[("META-INF/manifest.xml", manifest.as_bytes())],
    );
    assert_eq!(error(odt, &encrypted).code, ErrorCode::Encrypted);

    // A presentation handed to the text reader says what it is.
    let e = error(
        odt,
        &package(PRESENTATION, &content("", "<office:presentation/>"), &[]),
    );
    assert_eq!(e.code, ErrorCode::Unsupported);
    assert!(e.message.contains("presentation"), "{}", e.message);
}

#[test]
fn zip_bombs_are_refused() {
    let zeros = vec![b' '; 8 << 20];
    let bytes = package(
        TEXT,
        &content("", "<office:text/>"),
        &[("Pictures/big.png", &zeros)],
    );
    let e = error(odt, &bytes);
    assert_eq!(e.code, ErrorCode::TooLarge);
    assert!(e.message.contains("zip bomb"), "{}", e.message);
}
