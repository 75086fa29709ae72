mod common;

use common::{assert_consistent_package, assert_well_formed, full_outline, text, unzip, unzip_map};
use kts_sample::{
    Outline, render, tiny_png, to_docx, to_epub, to_html, to_json, to_markdown, to_odt, to_pdf,
    to_pptx, to_text,
};

#[test]
fn markdown_and_text_carry_every_block() {
    let md = String::from_utf8(to_markdown(&full_outline())).unwrap();
    assert!(md.starts_with("# Sample & <Test> Report\n"));
    for needle in [
        "## Second section",
        "- bullet two",
        "2. step two",
        "| bad-json | not JSON |",
        "```",
        "![A gradient chart](data:image/png;base64,",
    ] {
        assert!(md.contains(needle), "markdown lacks {needle:?}");
    }
    let txt = String::from_utf8(to_text(&full_outline())).unwrap();
    assert!(
        txt.contains("* bullet one\n* bullet two")
            && txt.contains("Code\tMeaning")
            && txt.contains("[Image: A gradient chart]")
    );
    assert!(!txt.contains('#') && !txt.contains("```"));
}

#[test]
fn html_is_a_full_page_with_structure() {
    let html = String::from_utf8(to_html(&full_outline())).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("<title>Sample &amp; &lt;Test&gt; Report</title>"));
    for needle in [
        "<h1>First section</h1>",
        "<h3>A subsection</h3>",
        "<ul>\n<li>bullet one</li>",
        "<ol>",
        "<th>Code</th>",
        "<td>bad-json</td>",
        "<pre><code>fn main()",
        "alt=\"A gradient chart\"",
        "src=\"data:image/png;base64,iVBORw0KGgo",
    ] {
        assert!(html.contains(needle), "html lacks {needle:?}");
    }
    assert!(html.ends_with("</html>\n"));
}

#[test]
fn json_describes_sections() {
    let value: serde_json::Value =
        serde_json::from_slice(&to_json(&full_outline())).expect("valid JSON");
    assert_eq!(value["title"], "Sample & <Test> Report");
    let sections = value["sections"].as_array().unwrap();
    assert_eq!(
        sections[0]["paragraphs"][0],
        "An introduction paragraph (with parentheses) and a back\\slash."
    );
    assert_eq!(sections[1]["heading"], "First section");
    assert_eq!(sections[1]["lists"][1]["ordered"], true);
    assert_eq!(sections[1]["lists"][1]["items"][1], "step two");
    assert_eq!(sections[2]["tables"][0]["columns"][1], "Meaning");
    assert_eq!(sections[2]["tables"][0]["rows"][1][0], "io");
    assert_eq!(sections[2]["images"][0], "A gradient chart");
}

#[test]
fn docx_has_styles_numbering_table_image_and_title() {
    let bytes = to_docx(&full_outline()).unwrap();
    let parts = unzip_map(&bytes);
    assert_consistent_package(&parts);
    let styles = text(&parts, "word/styles.xml");
    assert_eq!(styles.matches("w:styleId=\"Normal\"").count(), 1);
    assert!(styles.contains(r#"<w:style w:type="paragraph" w:default="1" w:styleId="Normal">"#));
    for level in 1..=6 {
        assert!(
            styles.contains(&format!("w:styleId=\"Heading{level}\"")),
            "no Heading{level} style"
        );
    }
    let document = text(&parts, "word/document.xml");
    for needle in [
        "w:val=\"Title\"",
        "w:val=\"Heading1\"",
        "w:val=\"Heading3\"",
        "<w:numId w:val=\"2\"",
        "<w:numId w:val=\"3\"",
        "<w:tbl>",
        "descr=\"A gradient chart\"",
        "w:type=\"page\"",
    ] {
        assert!(document.contains(needle), "document.xml lacks {needle:?}");
    }
    let numbering = text(&parts, "word/numbering.xml");
    assert!(numbering.contains("w:val=\"bullet\"") && numbering.contains("w:val=\"decimal\""));
    assert!(
        text(&parts, "docProps/core.xml")
            .contains("<dc:title>Sample &amp; &lt;Test&gt; Report</dc:title>")
    );
    let media: Vec<_> = parts
        .iter()
        .filter(|(n, _)| n.starts_with("word/media/"))
        .collect();
    assert_eq!(media.len(), 1);
    assert_eq!(media[0].1, &tiny_png(16, 12, 7));
    let docx = docx_rs::read_docx(&bytes).expect("docx-rs reads it back");
    assert!(!docx.document.children.is_empty());
}

#[test]
fn pptx_slides_are_listed_in_reverse_file_order() {
    let parts = unzip_map(&to_pptx(&full_outline()).unwrap());
    assert_consistent_package(&parts);
    let presentation = text(&parts, "ppt/presentation.xml");
    assert_eq!(
        presentation.matches("<p:sldId ").count(),
        4,
        "title slide + 3 sections"
    );
    let rels = text(&parts, "ppt/_rels/presentation.xml.rels");
    let first = rels.find("Target=\"slides/slide4.xml\"").unwrap();
    let last = rels.find("Target=\"slides/slide1.xml\"").unwrap();
    assert!(first < last);
    assert!(rels.contains(r#"<Relationship Id="rId10" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/slide" Target="slides/slide4.xml"/>"#));
    // Presentation order: title slide (slide4.xml), First, Second, Third (slide1.xml).
    let titles = [
        ("slide4", "Sample &amp; &lt;Test&gt; Report"),
        ("slide3", "First section"),
        ("slide2", "Second section"),
        ("slide1", "Third section"),
    ];
    for (file, title) in titles {
        let slide = text(&parts, &format!("ppt/slides/{file}.xml"));
        let title_shape = slide
            .split("<p:ph type=\"title\"/>")
            .nth(1)
            .expect("a title placeholder");
        assert!(
            title_shape.split("</p:sp>").next().unwrap().contains(title),
            "{file} should be titled {title}"
        );
    }
    assert_eq!(
        text(&parts, "docProps/core.xml")
            .matches("<dc:title>Sample &amp; &lt;Test&gt; Report</dc:title>")
            .count(),
        1
    );
}

#[test]
fn pptx_slides_hold_lists_tables_pictures_and_notes() {
    let parts = unzip_map(&to_pptx(&full_outline()).unwrap());
    let first = text(&parts, "ppt/slides/slide3.xml");
    assert!(first.contains("<a:buChar char=\"&#8226;\"/></a:pPr><a:r><a:rPr lang=\"en-US\" dirty=\"0\" sz=\"1800\"/><a:t>bullet one</a:t>"));
    assert!(first.contains("<a:buAutoNum type=\"arabicPeriod\"/>") && first.contains("lvl=\"0\""));
    assert!(
        !first.contains("Notes for the first section"),
        "notes stay off the slide"
    );
    let notes_rel = text(&parts, "ppt/slides/_rels/slide3.xml.rels");
    assert!(notes_rel.contains("Target=\"../notesSlides/notesSlide3.xml\""));
    assert!(
        text(&parts, "ppt/notesSlides/notesSlide3.xml").contains("Notes for the first section.")
    );
    assert!(
        text(&parts, "ppt/notesSlides/_rels/notesSlide3.xml.rels").contains("../slides/slide3.xml")
    );

    let second = text(&parts, "ppt/slides/slide2.xml");
    assert!(second.contains("<a:tbl>") && second.contains("<a:t>bad-json</a:t>"));
    assert!(second.contains("descr=\"A gradient chart\"") && second.contains("r:embed=\"rId3\""));
    assert!(second.contains("<a:t>A subsection</a:t>") && second.contains("Courier New"));
    assert!(
        text(&parts, "ppt/slides/_rels/slide2.xml.rels").contains("Target=\"../media/image1.png\"")
    );
    assert_eq!(parts["ppt/media/image1.png"], tiny_png(16, 12, 7));
    assert!(
        !parts.contains_key("ppt/notesSlides/notesSlide2.xml"),
        "no notes, no notes slide"
    );
    assert!(text(&parts, "ppt/notesSlides/notesSlide1.xml").contains("Closing notes."));
}

#[test]
fn pptx_with_one_untitled_section_still_has_a_slide() {
    let parts = unzip_map(&to_pptx(&Outline::default()).unwrap());
    assert_consistent_package(&parts);
    assert!(parts.contains_key("ppt/slides/slide1.xml"));
}

#[test]
fn pdf_text_is_extractable_page_by_page() {
    let bytes = to_pdf(&full_outline()).unwrap();
    let doc = lopdf::Document::load_mem(&bytes).expect("lopdf parses it");
    assert_eq!(doc.get_pages().len(), 2);
    let info = doc
        .trailer
        .get(b"Info")
        .and_then(|r| doc.get_dictionary(r.as_reference()?))
        .unwrap();
    assert!(matches!(info.get(b"Title"), Ok(lopdf::Object::String(..))));
    let pages = pdf_extract::extract_text_from_mem_by_pages(&bytes).expect("pdf-extract reads it");
    assert_eq!(pages.len(), 2);
    for needle in [
        "Alpha paragraph about kts-crawl.",
        "(with parentheses) and a back\\slash.",
        "bullet two",
        "step one",
        "bad-json | not JSON",
        "println!(\"hi\");",
        "Notes: Notes for the first section.",
    ] {
        assert!(
            pages[0].contains(needle),
            "page 1 lacks {needle:?}: {}",
            pages[0]
        );
    }
    assert!(
        pages[1].contains("Omega paragraph after the page break — café."),
        "page 2: {}",
        pages[1]
    );
    assert!(!pages[1].contains("Alpha"));
}

#[test]
fn pdf_flows_long_text_over_many_pages_in_order() {
    let mut outline = Outline::new("Long");
    for i in 0..120 {
        outline = outline.paragraph(format!("Paragraph number {i} says something long enough to wrap across the line at least once, maybe twice."));
    }
    let bytes = to_pdf(&outline).unwrap();
    let pages = pdf_extract::extract_text_from_mem_by_pages(&bytes).unwrap();
    assert!(pages.len() >= 4, "{} pages", pages.len());
    let all: String = pages
        .concat()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let mut at = 0;
    for i in 0..120 {
        let needle = format!("Paragraph number {i} says");
        at += all[at..]
            .find(&needle)
            .unwrap_or_else(|| panic!("paragraph {i} missing or out of order"));
    }
}

#[test]
fn pdf_draws_png_images_as_xobjects() {
    let bytes = to_pdf(&full_outline()).unwrap();
    let doc = lopdf::Document::load_mem(&bytes).unwrap();
    let images: Vec<_> = doc
        .objects
        .values()
        .filter_map(|o| o.as_stream().ok())
        .filter(|s| {
            s.dict.get(b"Subtype").and_then(|v| v.as_name()).ok() == Some(b"Image".as_slice())
        })
        .collect();
    assert_eq!(images.len(), 1);
    let decoded = images[0]
        .decompressed_content()
        .expect("PNG predictor data decodes");
    assert_eq!(decoded.len(), 16 * 12 * 3);
}

#[test]
fn every_writer_is_deterministic() {
    for format in kts_sample::ALL_FORMATS {
        let first = render(&full_outline(), format).unwrap();
        render(
            &Outline::new("Something else")
                .paragraph("in between")
                .heading(2, "x"),
            format,
        )
        .unwrap();
        let second = render(&full_outline(), format).unwrap();
        assert!(first == second, "{format:?} output changed between runs");
    }
}

#[test]
fn zip_entries_have_fixed_timestamps() {
    let bytes = to_docx(&full_outline()).unwrap();
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    for i in 0..archive.len() {
        let file = archive.by_index(i).unwrap();
        let time = file.last_modified().expect("a timestamp");
        assert_eq!(
            (time.year(), time.month(), time.day()),
            (1980, 1, 1),
            "{}",
            file.name()
        );
    }
    let names: Vec<String> = unzip(&to_pptx(&full_outline()).unwrap())
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(names[0], "[Content_Types].xml");
}

#[test]
fn tiny_png_is_valid() {
    let png = tiny_png(33, 7, 42);
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let mut rest = &png[8..];
    let mut idat = Vec::new();
    let mut kinds = Vec::new();
    while !rest.is_empty() {
        let len = u32::from_be_bytes(rest[..4].try_into().unwrap()) as usize;
        let (kind_and_data, crc) = (
            &rest[4..8 + len],
            u32::from_be_bytes(rest[8 + len..12 + len].try_into().unwrap()),
        );
        assert_eq!(crc32fast::hash(kind_and_data), crc, "bad CRC");
        kinds.push(String::from_utf8_lossy(&kind_and_data[..4]).to_string());
        if &kind_and_data[..4] == b"IDAT" {
            idat.extend_from_slice(&kind_and_data[4..]);
        }
        rest = &rest[12 + len..];
    }
    assert_eq!(kinds.first().map(String::as_str), Some("IHDR"));
    assert_eq!(kinds.last().map(String::as_str), Some("IEND"));
    let mut raw = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::ZlibDecoder::new(&idat[..]), &mut raw)
        .expect("zlib with a valid Adler-32");
    assert_eq!(raw.len(), 7 * (33 * 3 + 1));
    assert_ne!(tiny_png(33, 7, 42), tiny_png(33, 7, 43));
    assert_eq!(tiny_png(33, 7, 42), png);
    let big = tiny_png(300, 200, 1); // more than one stored block
    assert!(big.len() > 180_000);
}

#[test]
fn xml_helpers_catch_bad_xml() {
    let result = std::panic::catch_unwind(|| assert_well_formed("x", "<a><b></a>"));
    assert!(result.is_err());
}

#[test]
fn odt_is_a_valid_opendocument_text_with_every_block() {
    let bytes = to_odt(&full_outline()).unwrap();
    common::assert_opendocument(&bytes, "text");
    let parts = unzip_map(&bytes);
    let content = text(&parts, "content.xml");
    for needle in [
        r#"<text:p text:style-name="Title">Sample &amp; &lt;Test&gt; Report</text:p>"#,
        r#"<text:h text:style-name="Heading_20_2" text:outline-level="2">Second section</text:h>"#,
        r#"<text:list text:style-name="Numbers"><text:list-item><text:p>step one</text:p>"#,
        "<table:table-header-rows>",
        r#"<text:s text:c="4"/>println!"#,
        r#"<draw:image xlink:href="Pictures/image1.png""#,
        "<svg:title>A gradient chart</svg:title>",
        "<text:p>Notes: Closing notes.</text:p>",
    ] {
        assert!(content.contains(needle), "content.xml lacks {needle}");
    }
    assert_eq!(parts["Pictures/image1.png"], tiny_png(16, 12, 7));
    assert!(
        text(&parts, "meta.xml").contains("<dc:title>Sample &amp; &lt;Test&gt; Report</dc:title>")
    );
}

#[test]
fn epub_chapters_follow_the_outline_in_the_spine() {
    let bytes = to_epub(&full_outline()).unwrap();
    common::assert_epub(&bytes);
    let parts = unzip_map(&bytes);
    let opf = text(&parts, "OEBPS/content.opf");
    assert!(opf.contains("<dc:title>Sample &amp; &lt;Test&gt; Report</dc:title>"));
    // The title's chapter, then one per level-1 or level-2 heading.
    assert!(opf.contains(
        r#"<spine><itemref idref="chapter-1"/><itemref idref="chapter-2"/><itemref idref="chapter-3"/><itemref idref="chapter-4"/></spine>"#
    ));
    let chapter = |n: usize| text(&parts, &format!("OEBPS/chapter-{n}.xhtml"));
    assert!(chapter(1).contains("<h1>Sample &amp; &lt;Test&gt; Report</h1>"));
    assert!(chapter(2).contains("<h1>First section</h1>"));
    assert!(chapter(3).contains(r#"<img src="images/image1.png" alt="A gradient chart"/>"#));
    assert!(chapter(4).contains("café"));
    assert_eq!(parts["OEBPS/images/image1.png"], tiny_png(16, 12, 7));
    assert!(
        text(&parts, "OEBPS/nav.xhtml").contains(r#"<a href="chapter-3.xhtml">Second section</a>"#)
    );
}
