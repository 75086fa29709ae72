//! PowerPoint (.pptx) writer: a hand-written OOXML package.
//!
//! One slide per level-1/level-2 heading section (plus a title slide for the
//! outline title and any blocks before the first such heading). Each slide has
//! a title placeholder (`type="title"`) and, in block order, text boxes
//! (paragraphs, bullets `a:buChar`, numbered items `a:buAutoNum`, all
//! `a:pPr lvl="0"`; lower headings as bold paragraphs), tables as
//! `graphicFrame`/`a:tbl` with a header row, and images as `p:pic` embedding
//! `ppt/media/imageN.png` with `descr` = alt text. `Block::Notes` become the
//! slide's notes slide, linked from the slide's rels.
//!
//! Slide order comes only from `ppt/presentation.xml` (`p:sldIdLst`): slide
//! files are numbered in REVERSE, so with n slides the first slide shown is
//! `ppt/slides/slide{n}.xml` and the last `slide1.xml` (notes slides follow
//! their slide's number). Tests use this to check that readers do not take
//! the order from file names.

use crate::outline::{Block, Outline};
use crate::package::{self, Part, display_emu};
use crate::pptx_static::{self as fixed, DECL, NS, TREE_HEADER, rels};
use crate::xml::escape;

const CONTENT_TYPES_NS: &str = "http://schemas.openxmlformats.org/package/2006/content-types";
const PML: &str = "application/vnd.openxmlformats-officedocument.presentationml";
const BODY_LEFT: u64 = fixed::BODY_BOX.0;
const BODY_WIDTH: u64 = fixed::BODY_BOX.2;
const LINE_EMU: u64 = 457_200;
const ROW_EMU: u64 = 370_840;

/// The outline as a .pptx package.
pub fn to_pptx(outline: &Outline) -> anyhow::Result<Vec<u8>> {
    Ok(package::zip_parts(&pptx_parts(outline))?)
}

/// A slide's title and the blocks shown on it.
struct SlideSource<'a> {
    title: &'a str,
    blocks: &'a [Block],
}

fn slide_sources(outline: &Outline) -> Vec<SlideSource<'_>> {
    let sections = outline.sections(2);
    let (intro, rest) = match sections.split_first() {
        Some((first, rest)) if first.heading.is_none() => (first.blocks, rest),
        _ => (&[][..], &sections[..]),
    };
    let mut slides = Vec::new();
    if !outline.title.is_empty() || !intro.is_empty() || rest.is_empty() {
        slides.push(SlideSource {
            title: &outline.title,
            blocks: intro,
        });
    }
    slides.extend(rest.iter().map(|s| SlideSource {
        title: s.heading.map_or("", |(_, text)| text),
        blocks: s.blocks,
    }));
    slides
}

/// A rendered slide: its XML, notes text and images (in `r:embed` order).
struct RenderedSlide {
    xml: String,
    notes: Vec<String>,
    images: Vec<Vec<u8>>,
}

fn pptx_parts(outline: &Outline) -> Vec<Part> {
    let sources = slide_sources(outline);
    let n = sources.len();
    let mut parts: Vec<Part> = Vec::new();
    let mut slide_parts: Vec<Part> = Vec::new();
    let mut image_count = 0;
    let mut notes_numbers = Vec::new();
    for (index, source) in sources.iter().enumerate() {
        let number = n - index; // reverse file numbering, see the module docs
        let slide = render_slide(source, image_count);
        let mut slide_rels = vec![(
            "rId1".to_string(),
            "slideLayout",
            "../slideLayouts/slideLayout1.xml".to_string(),
        )];
        if !slide.notes.is_empty() {
            notes_numbers.push(number);
            slide_rels.push((
                "rId2".into(),
                "notesSlide",
                format!("../notesSlides/notesSlide{number}.xml"),
            ));
            slide_parts.push((
                format!("ppt/notesSlides/notesSlide{number}.xml"),
                notes_slide(&slide.notes).into_bytes(),
            ));
            slide_parts.push((
                format!("ppt/notesSlides/_rels/notesSlide{number}.xml.rels"),
                rels(&[
                    (
                        "rId1".into(),
                        "notesMaster",
                        "../notesMasters/notesMaster1.xml".into(),
                    ),
                    (
                        "rId2".into(),
                        "slide",
                        format!("../slides/slide{number}.xml"),
                    ),
                ])
                .into_bytes(),
            ));
        }
        for (i, png) in slide.images.into_iter().enumerate() {
            image_count += 1;
            slide_rels.push((
                format!("rId{}", i + 3),
                "image",
                format!("../media/image{image_count}.png"),
            ));
            slide_parts.push((format!("ppt/media/image{image_count}.png"), png));
        }
        slide_parts.push((
            format!("ppt/slides/slide{number}.xml"),
            slide.xml.into_bytes(),
        ));
        slide_parts.push((
            format!("ppt/slides/_rels/slide{number}.xml.rels"),
            rels(&slide_rels).into_bytes(),
        ));
    }
    parts.push((
        "[Content_Types].xml".into(),
        content_types(n, &notes_numbers).into_bytes(),
    ));
    parts.push(("_rels/.rels".into(), root_rels().into_bytes()));
    parts.push((
        "docProps/core.xml".into(),
        package::core_xml(&outline.title),
    ));
    parts.push(("docProps/app.xml".into(), fixed::app_xml(n).into_bytes()));
    parts.push(("ppt/presentation.xml".into(), presentation(n).into_bytes()));
    parts.push((
        "ppt/_rels/presentation.xml.rels".into(),
        presentation_rels(n).into_bytes(),
    ));
    parts.extend(fixed_parts());
    parts.extend(slide_parts);
    parts
}

fn fixed_parts() -> Vec<Part> {
    let master_rels = rels(&[
        (
            "rId1".into(),
            "slideLayout",
            "../slideLayouts/slideLayout1.xml".into(),
        ),
        ("rId2".into(), "theme", "../theme/theme1.xml".into()),
    ]);
    let layout_rels = rels(&[(
        "rId1".into(),
        "slideMaster",
        "../slideMasters/slideMaster1.xml".into(),
    )]);
    let notes_master_rels = rels(&[("rId1".into(), "theme", "../theme/theme2.xml".into())]);
    [
        ("ppt/slideMasters/slideMaster1.xml", fixed::slide_master()),
        ("ppt/slideMasters/_rels/slideMaster1.xml.rels", master_rels),
        ("ppt/slideLayouts/slideLayout1.xml", fixed::slide_layout()),
        ("ppt/slideLayouts/_rels/slideLayout1.xml.rels", layout_rels),
        ("ppt/notesMasters/notesMaster1.xml", fixed::notes_master()),
        (
            "ppt/notesMasters/_rels/notesMaster1.xml.rels",
            notes_master_rels,
        ),
        ("ppt/theme/theme1.xml", fixed::theme()),
        ("ppt/theme/theme2.xml", fixed::theme()),
        ("ppt/presProps.xml", fixed::pres_props()),
        ("ppt/viewProps.xml", fixed::view_props()),
        ("ppt/tableStyles.xml", fixed::table_styles()),
    ]
    .into_iter()
    .map(|(name, xml)| (name.to_string(), xml.into_bytes()))
    .collect()
}

fn content_types(slides: usize, notes: &[usize]) -> String {
    let mut overrides = vec![
        (
            "/ppt/presentation.xml".to_string(),
            format!("{PML}.presentation.main+xml"),
        ),
        (
            "/ppt/slideMasters/slideMaster1.xml".into(),
            format!("{PML}.slideMaster+xml"),
        ),
        (
            "/ppt/slideLayouts/slideLayout1.xml".into(),
            format!("{PML}.slideLayout+xml"),
        ),
        (
            "/ppt/notesMasters/notesMaster1.xml".into(),
            format!("{PML}.notesMaster+xml"),
        ),
        (
            "/ppt/theme/theme1.xml".into(),
            "application/vnd.openxmlformats-officedocument.theme+xml".into(),
        ),
        (
            "/ppt/theme/theme2.xml".into(),
            "application/vnd.openxmlformats-officedocument.theme+xml".into(),
        ),
        ("/ppt/presProps.xml".into(), format!("{PML}.presProps+xml")),
        ("/ppt/viewProps.xml".into(), format!("{PML}.viewProps+xml")),
        (
            "/ppt/tableStyles.xml".into(),
            format!("{PML}.tableStyles+xml"),
        ),
        (
            "/docProps/core.xml".into(),
            "application/vnd.openxmlformats-package.core-properties+xml".into(),
        ),
        (
            "/docProps/app.xml".into(),
            "application/vnd.openxmlformats-officedocument.extended-properties+xml".into(),
        ),
    ];
    overrides.extend((1..=slides).map(|i| {
        (
            format!("/ppt/slides/slide{i}.xml"),
            format!("{PML}.slide+xml"),
        )
    }));
    overrides.extend(notes.iter().map(|i| {
        (
            format!("/ppt/notesSlides/notesSlide{i}.xml"),
            format!("{PML}.notesSlide+xml"),
        )
    }));
    let overrides: String = overrides
        .iter()
        .map(|(part, kind)| format!(r#"<Override PartName="{part}" ContentType="{kind}"/>"#))
        .collect();
    format!(
        concat!(
            r#"{decl}<Types xmlns="{ns}"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>"#,
            r#"<Default Extension="xml" ContentType="application/xml"/><Default Extension="png" ContentType="image/png"/>{overrides}</Types>"#
        ),
        decl = DECL,
        ns = CONTENT_TYPES_NS,
        overrides = overrides
    )
}

fn root_rels() -> String {
    rels(&[
        (
            "rId1".into(),
            "officeDocument",
            "ppt/presentation.xml".into(),
        ),
        (
            "rId2".into(),
            "http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties",
            "docProps/core.xml".into(),
        ),
        (
            "rId3".into(),
            "extended-properties",
            "docProps/app.xml".into(),
        ),
    ])
}

/// Slide ids 256.. in presentation order, pointing at rId10.. (see [`presentation_rels`]).
fn presentation(slides: usize) -> String {
    let ids: String = (0..slides)
        .map(|i| format!(r#"<p:sldId id="{}" r:id="rId{}"/>"#, 256 + i, 10 + i))
        .collect();
    format!(
        concat!(
            r#"{decl}<p:presentation {ns} saveSubsetFonts="1"><p:sldMasterIdLst><p:sldMasterId id="2147483648" r:id="rId1"/></p:sldMasterIdLst>"#,
            r#"<p:notesMasterIdLst><p:notesMasterId r:id="rId3"/></p:notesMasterIdLst><p:sldIdLst>{ids}</p:sldIdLst>"#,
            r#"<p:sldSz cx="12192000" cy="6858000"/><p:notesSz cx="6858000" cy="9144000"/></p:presentation>"#
        ),
        decl = DECL,
        ns = NS,
        ids = ids
    )
}

/// rId10 + i is the i-th slide in presentation order: file slide{n - i}.xml.
fn presentation_rels(slides: usize) -> String {
    let mut entries = vec![
        (
            "rId1".to_string(),
            "slideMaster",
            "slideMasters/slideMaster1.xml".to_string(),
        ),
        ("rId2".into(), "theme", "theme/theme1.xml".into()),
        (
            "rId3".into(),
            "notesMaster",
            "notesMasters/notesMaster1.xml".into(),
        ),
        ("rId4".into(), "presProps", "presProps.xml".into()),
        ("rId5".into(), "viewProps", "viewProps.xml".into()),
        ("rId6".into(), "tableStyles", "tableStyles.xml".into()),
    ];
    entries.extend((0..slides).map(|i| {
        (
            format!("rId{}", 10 + i),
            "slide",
            format!("slides/slide{}.xml", slides - i),
        )
    }));
    rels(&entries)
}

/// Lays out one slide top to bottom; `images_before` numbers the media files.
fn render_slide(source: &SlideSource<'_>, images_before: usize) -> RenderedSlide {
    let mut shapes = Shapes::default();
    let mut text: Vec<String> = Vec::new();
    let mut notes = Vec::new();
    let mut images = Vec::new();
    for block in source.blocks {
        match block {
            Block::Table(rows) => {
                shapes.text_box(&mut text);
                shapes.table(rows);
            }
            Block::Image { png, alt } => {
                shapes.text_box(&mut text);
                images.push(png.clone());
                shapes.picture(png, alt, images.len() + 2, images_before + images.len());
            }
            Block::Notes(note) => notes.push(note.clone()),
            other => text.extend(text_paragraphs(other)),
        }
    }
    shapes.text_box(&mut text);
    let title = shape_title(source.title);
    let xml = format!(
        "{DECL}<p:sld {NS}><p:cSld><p:spTree>{TREE_HEADER}{title}{}</p:spTree></p:cSld><p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sld>",
        shapes.xml
    );
    RenderedSlide { xml, notes, images }
}

fn shape_title(title: &str) -> String {
    format!(
        concat!(
            r#"<p:sp><p:nvSpPr><p:cNvPr id="2" name="Title 1"/><p:cNvSpPr><a:spLocks noGrp="1"/></p:cNvSpPr><p:nvPr><p:ph type="title"/></p:nvPr></p:nvSpPr>"#,
            r#"<p:spPr/><p:txBody><a:bodyPr/><a:lstStyle/>{}</p:txBody></p:sp>"#
        ),
        text_paragraph(title, "", "")
    )
}

/// The `a:p` elements for a text block.
fn text_paragraphs(block: &Block) -> Vec<String> {
    const PLAIN: &str = r#"<a:pPr marL="0" lvl="0" indent="0"><a:buNone/></a:pPr>"#;
    const BULLET: &str = r#"<a:pPr marL="342900" lvl="0" indent="-342900"><a:buFont typeface="Arial"/><a:buChar char="&#8226;"/></a:pPr>"#;
    const NUMBER: &str = r#"<a:pPr marL="342900" lvl="0" indent="-342900"><a:buFont typeface="+mj-lt"/><a:buAutoNum type="arabicPeriod"/></a:pPr>"#;
    match block {
        Block::Heading { text, .. } => vec![text_paragraph(text, PLAIN, r#" b="1" sz="2200""#)],
        Block::Paragraph(text) => vec![text_paragraph(text, PLAIN, r#" sz="1800""#)],
        Block::Bullets(items) => items
            .iter()
            .map(|i| text_paragraph(i, BULLET, r#" sz="1800""#))
            .collect(),
        Block::Numbered(items) => items
            .iter()
            .map(|i| text_paragraph(i, NUMBER, r#" sz="1800""#))
            .collect(),
        Block::Code(code) => {
            let attrs = r#" sz="1400"><a:latin typeface="Courier New"/></a:rPr"#;
            code.lines()
                .map(|line| text_paragraph_raw(line, PLAIN, attrs))
                .collect()
        }
        _ => Vec::new(),
    }
}

fn text_paragraph(text: &str, ppr: &str, rpr_attrs: &str) -> String {
    text_paragraph_raw(text, ppr, &format!("{rpr_attrs}/"))
}

/// `rpr_tail` completes `<a:rPr lang="en-US"` (attributes, then `/` or `>...</a:rPr`).
fn text_paragraph_raw(text: &str, ppr: &str, rpr_tail: &str) -> String {
    if text.is_empty() {
        return format!(r#"<a:p>{ppr}<a:endParaRPr lang="en-US"/></a:p>"#);
    }
    format!(
        r#"<a:p>{ppr}<a:r><a:rPr lang="en-US" dirty="0"{rpr_tail}><a:t>{}</a:t></a:r></a:p>"#,
        escape(text)
    )
}

/// Shapes of a slide body, stacked top to bottom.
struct Shapes {
    xml: String,
    next_id: u32,
    y: u64,
}

impl Default for Shapes {
    fn default() -> Self {
        Self {
            xml: String::new(),
            next_id: 3,
            y: fixed::BODY_BOX.1,
        }
    }
}

impl Shapes {
    fn id(&mut self) -> u32 {
        self.next_id += 1;
        self.next_id - 1
    }

    /// Flushes pending paragraphs into one text box.
    fn text_box(&mut self, paragraphs: &mut Vec<String>) {
        if paragraphs.is_empty() {
            return;
        }
        let id = self.id();
        let height = LINE_EMU * paragraphs.len() as u64;
        self.xml.push_str(&format!(
            concat!(
                r#"<p:sp><p:nvSpPr><p:cNvPr id="{id}" name="TextBox {id}"/><p:cNvSpPr txBox="1"/><p:nvPr/></p:nvSpPr>"#,
                r#"<p:spPr><a:xfrm><a:off x="{x}" y="{y}"/><a:ext cx="{cx}" cy="{cy}"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom><a:noFill/></p:spPr>"#,
                r#"<p:txBody><a:bodyPr wrap="square" rtlCol="0"><a:normAutofit/></a:bodyPr><a:lstStyle/>{paras}</p:txBody></p:sp>"#
            ),
            id = id,
            x = BODY_LEFT,
            y = self.y,
            cx = BODY_WIDTH,
            cy = height,
            paras = paragraphs.concat()
        ));
        self.y += height;
        paragraphs.clear();
    }

    fn table(&mut self, rows: &[Vec<String>]) {
        let id = self.id();
        let columns = crate::text::table_width(rows);
        let col_width = BODY_WIDTH / columns as u64;
        let grid: String = (0..columns)
            .map(|_| format!(r#"<a:gridCol w="{col_width}"/>"#))
            .collect();
        let body: String = rows
            .iter()
            .enumerate()
            .map(|(i, row)| table_row(row, columns, i == 0))
            .collect();
        let height = ROW_EMU * rows.len() as u64;
        self.xml.push_str(&format!(
            concat!(
                r#"<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="{id}" name="Table {id}"/><p:cNvGraphicFramePr><a:graphicFrameLocks noGrp="1"/></p:cNvGraphicFramePr><p:nvPr/></p:nvGraphicFramePr>"#,
                r#"<p:xfrm><a:off x="{x}" y="{y}"/><a:ext cx="{cx}" cy="{cy}"/></p:xfrm><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/table">"#,
                r#"<a:tbl><a:tblPr firstRow="1" bandRow="1"/><a:tblGrid>{grid}</a:tblGrid>{body}</a:tbl></a:graphicData></a:graphic></p:graphicFrame>"#
            ),
            id = id,
            x = BODY_LEFT,
            y = self.y,
            cx = col_width * columns as u64,
            cy = height,
            grid = grid,
            body = body
        ));
        self.y += height + LINE_EMU / 2;
    }

    fn picture(&mut self, png: &[u8], alt: &str, rel: usize, number: usize) {
        let id = self.id();
        let (cx, cy) = display_emu(png, 4 * 914_400);
        self.xml.push_str(&format!(
            concat!(
                r#"<p:pic><p:nvPicPr><p:cNvPr id="{id}" name="Picture {number}" descr="{alt}"/><p:cNvPicPr><a:picLocks noChangeAspect="1"/></p:cNvPicPr><p:nvPr/></p:nvPicPr>"#,
                r#"<p:blipFill><a:blip r:embed="rId{rel}"/><a:stretch><a:fillRect/></a:stretch></p:blipFill>"#,
                r#"<p:spPr><a:xfrm><a:off x="{x}" y="{y}"/><a:ext cx="{cx}" cy="{cy}"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr></p:pic>"#
            ),
            id = id,
            number = number,
            alt = escape(alt),
            rel = rel,
            x = BODY_LEFT,
            y = self.y,
            cx = cx,
            cy = cy
        ));
        self.y += cy + LINE_EMU / 2;
    }
}

fn table_row(row: &[String], columns: usize, header: bool) -> String {
    let bold = if header { r#" b="1""# } else { "" };
    let cells: String = (0..columns)
        .map(|i| {
            let text = row.get(i).map_or("", String::as_str);
            let para = text_paragraph(text, "", &format!(r#" sz="1400"{bold}"#));
            format!("<a:tc><a:txBody><a:bodyPr/><a:lstStyle/>{para}</a:txBody><a:tcPr/></a:tc>")
        })
        .collect();
    format!(r#"<a:tr h="{ROW_EMU}">{cells}</a:tr>"#)
}

fn notes_slide(notes: &[String]) -> String {
    let paras: String = notes.iter().map(|n| text_paragraph(n, "", "")).collect();
    format!(
        concat!(
            "{decl}<p:notes {ns}><p:cSld><p:spTree>{tree}",
            r#"<p:sp><p:nvSpPr><p:cNvPr id="2" name="Slide Image Placeholder 1"/><p:cNvSpPr><a:spLocks noGrp="1" noRot="1" noChangeAspect="1"/></p:cNvSpPr>"#,
            r#"<p:nvPr><p:ph type="sldImg"/></p:nvPr></p:nvSpPr><p:spPr/></p:sp>"#,
            r#"<p:sp><p:nvSpPr><p:cNvPr id="3" name="Notes Placeholder 2"/><p:cNvSpPr><a:spLocks noGrp="1"/></p:cNvSpPr>"#,
            r#"<p:nvPr><p:ph type="body" idx="1"/></p:nvPr></p:nvSpPr><p:spPr/><p:txBody><a:bodyPr/><a:lstStyle/>{paras}</p:txBody></p:sp>"#,
            "</p:spTree></p:cSld><p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:notes>"
        ),
        decl = DECL,
        ns = NS,
        tree = TREE_HEADER,
        paras = paras
    )
}
