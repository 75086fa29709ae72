//! PowerPoint `.pptx` (and `.pptm`) to Markdown.
//!
//! Slides come in the order of the presentation's slide list, each as a
//! `<!-- slide: N -->` marker, a `## title`, the other shapes' text in reading
//! order (top to bottom, left to right), then its speaker notes.

use std::collections::HashMap;

use serde_json::Value;

use super::one_line;
use super::ooxml::{self, Element, Package, Relationship};
use super::table;
use super::{Context, ConvertError, Converted};

pub fn convert(bytes: &[u8], ctx: &mut Context) -> Result<Converted, ConvertError> {
    // A .pptx that is really a PowerPoint 97–2003 file (an encrypted package
    // is a compound file too, and is reported as such by `Package::open`).
    if ooxml::is_ole(bytes) && ooxml::encryption_error(bytes).is_none() {
        return super::ppt::convert(bytes);
    }
    let mut package = Package::open(bytes, ctx.limits)?;
    for name in package.xml_part_names() {
        if let Some(xml) = package.part(&name) {
            ooxml::refuse_entity_declarations(&name, &xml)?;
        }
    }
    let main = package
        .main_part("officeDocument")
        .unwrap_or_else(|| "ppt/presentation.xml".to_owned());
    let presentation = package
        .part(&main)
        .and_then(|xml| Element::parse(&xml))
        .ok_or_else(|| {
            ConvertError::corrupt(format!("not a PowerPoint presentation: no readable {main}"))
        })?;
    let slides = slide_parts(&presentation, &package.relationships(&main));
    let (title, mut properties) = package.core_properties();
    properties.insert("slides".to_owned(), Value::from(slides.len()));
    if slides.is_empty() {
        // Masters, layouts and properties only: a valid, if bare, document.
        let markdown = title
            .as_deref()
            .map(one_line)
            .filter(|t| !t.is_empty())
            .map(|t| format!("# {t}\n"))
            .unwrap_or_default();
        return Ok(Converted {
            markdown,
            title,
            properties,
        });
    }
    let authors = comment_authors(&mut package);

    let mut markdown = String::new();
    for (index, part) in slides.iter().enumerate() {
        let mut slide = SlideWriter {
            package: &mut package,
            ctx,
            rels: HashMap::new(),
            part: part.clone(),
            authors: &authors,
        };
        markdown.push_str(&slide.render(index + 1));
    }
    Ok(Converted {
        markdown: markdown.trim_end().to_owned() + "\n",
        title,
        properties,
    })
}

/// The slide parts in presentation order (`p:sldIdLst`), skipping ids whose
/// relationship is missing.
fn slide_parts(presentation: &Element, rels: &[Relationship]) -> Vec<String> {
    let Some(list) = presentation.child("sldIdLst") else {
        return Vec::new();
    };
    list.elements()
        .filter(|e| e.name == "sldId")
        .filter_map(rel_id)
        .filter_map(|rid| {
            rels.iter()
                .find(|r| r.id == rid && !r.external)
                .map(|r| r.target.clone())
        })
        .collect()
}

/// The `r:id` of an element (the only attribute named `id` besides the
/// numeric slide id, which has no prefix; the relationship id is the one
/// starting with a letter).
fn rel_id(e: &Element) -> Option<String> {
    e.attrs
        .iter()
        .filter(|(k, _)| k == "id")
        .map(|(_, v)| v.clone())
        .find(|v| !v.chars().all(|c| c.is_ascii_digit()))
}

/// One piece of a slide, placed for sorting.
struct Item {
    y: i64,
    x: i64,
    markdown: String,
}

struct SlideWriter<'a, 'p, 'c, 'i> {
    package: &'a mut Package<'p>,
    ctx: &'c mut Context<'i>,
    rels: HashMap<String, Relationship>,
    part: String,
    authors: &'a Authors,
}

impl SlideWriter<'_, '_, '_, '_> {
    fn render(&mut self, number: usize) -> String {
        let mut out = format!("<!-- slide: {number} -->\n\n");
        self.rels = self
            .package
            .relationships(&self.part)
            .into_iter()
            .map(|r| (r.id.clone(), r))
            .collect();
        let Some(slide) = self
            .package
            .part(&self.part)
            .and_then(|xml| Element::parse(&xml))
        else {
            return out;
        };
        let tree = slide.path(&["cSld", "spTree"]);
        let title = tree
            .and_then(find_title)
            .map(|t| one_line(&t))
            .filter(|t| !t.is_empty());
        // An untitled slide gets no heading of kts's making: its marker says
        // where it starts, and kts-chunk ends the previous slide's headings there.
        if let Some(title) = title {
            out.push_str(&format!("## {title}\n\n"));
        }
        if let Some(tree) = tree {
            for item in self.shapes(tree, true) {
                out.push_str(&item.markdown);
                out.push_str("\n\n");
            }
        }
        if let Some(notes) = self.notes() {
            out.push_str("### Notes\n\n");
            out.push_str(&notes);
            out.push_str("\n\n");
        }
        let comments = self.comments();
        if !comments.is_empty() {
            out.push_str("### Comments\n\n");
            out.push_str(&comments.join("\n\n"));
            out.push_str("\n\n");
        }
        out
    }

    /// The review comments on the slide, legacy (`p:cmLst`) and modern
    /// (`p188:cmLst`, replies included), in the order of their parts.
    fn comments(&mut self) -> Vec<String> {
        let mut targets: Vec<String> = self
            .rels
            .values()
            .filter(|r| r.is("comments") && !r.external)
            .map(|r| r.target.clone())
            .collect();
        targets.sort();
        targets.dedup();
        let mut out = Vec::new();
        for target in targets {
            let Some(root) = self.package.part(&target).and_then(|x| Element::parse(&x)) else {
                continue;
            };
            for cm in root.elements().filter(|e| e.name == "cm") {
                self.comment(cm, &mut out);
                if let Some(replies) = cm.child("replyLst") {
                    for reply in replies.elements().filter(|e| e.name == "reply") {
                        self.comment(reply, &mut out);
                    }
                }
            }
        }
        out
    }

    fn comment(&self, cm: &Element, out: &mut Vec<String>) {
        let text = match cm.child("text") {
            Some(legacy) => one_line(&legacy.text()),
            None => cm
                .child("txBody")
                .map(ooxml::drawing_text)
                .unwrap_or_default(),
        };
        if text.is_empty() {
            return;
        }
        let (name, initials) = cm
            .attr("authorId")
            .and_then(|id| self.authors.get(id))
            .cloned()
            .unwrap_or_default();
        let mut author = name;
        if !initials.is_empty() {
            author = if author.is_empty() {
                initials
            } else {
                format!("{author} ({initials})")
            };
        }
        if let Some(date) = cm.attr("dt").or_else(|| cm.attr("created")) {
            author = if author.is_empty() {
                one_line(date)
            } else {
                format!("{author}, {}", one_line(date))
            };
        }
        out.push(ooxml::comment_line(&author, &text));
    }

    /// The shapes of a tree or group, in reading order.
    fn shapes(&mut self, tree: &Element, skip_title: bool) -> Vec<Item> {
        let mut items = Vec::new();
        for shape in tree.elements() {
            if let Some(item) = self.shape(shape, skip_title) {
                items.push(item);
            }
        }
        items.sort_by_key(|i| (i.y, i.x));
        items
    }

    fn shape(&mut self, shape: &Element, skip_title: bool) -> Option<Item> {
        let markdown = match shape.name.as_str() {
            "sp" => {
                let ph = placeholder_type(shape);
                if skip_title && is_title(ph.as_deref()) || ph.as_deref() == Some("sldNum") {
                    return None;
                }
                text_body(
                    shape.child("txBody")?,
                    is_body_placeholder(shape, ph.as_deref()),
                )
            }
            "grpSp" => {
                let inner: Vec<String> = self
                    .shapes(shape, skip_title)
                    .into_iter()
                    .map(|i| i.markdown)
                    .collect();
                inner.join("\n\n")
            }
            "graphicFrame" => self.graphic_frame(shape),
            "pic" => self.picture(shape)?,
            "AlternateContent" => {
                let choice = shape
                    .child("Choice")
                    .map(|c| self.shapes(c, skip_title))
                    .unwrap_or_default();
                let items = if choice.is_empty() {
                    shape
                        .child("Fallback")
                        .map(|c| self.shapes(c, skip_title))
                        .unwrap_or_default()
                } else {
                    choice
                };
                let (y, x) = items.first().map_or((0, 0), |i| (i.y, i.x));
                let markdown: Vec<String> = items.into_iter().map(|i| i.markdown).collect();
                return Some(Item {
                    y,
                    x,
                    markdown: markdown.join("\n\n"),
                })
                .filter(|i| !i.markdown.is_empty());
            }
            _ => return None,
        };
        let (x, y) = offset(shape);
        (!markdown.trim().is_empty()).then_some(Item { y, x, markdown })
    }

    fn graphic_frame(&mut self, frame: &Element) -> String {
        let Some(data) = frame.path(&["graphic", "graphicData"]) else {
            return String::new();
        };
        if let Some(table) = data.child("tbl") {
            return table::markdown_table(&table_rows(table))
                .trim_end()
                .to_owned();
        }
        if let Some(chart) = data.child("chart") {
            return self.chart(chart);
        }
        String::new()
    }

    /// A chart's title and its data as a table (categories by series).
    fn chart(&mut self, chart: &Element) -> String {
        let Some(rel) = rel_id(chart)
            .and_then(|id| self.rels.get(&id))
            .filter(|r| !r.external)
        else {
            return String::new();
        };
        let target = rel.target.clone();
        let Some(root) = self
            .package
            .part(&target)
            .and_then(|xml| Element::parse(&xml))
        else {
            return String::new();
        };
        ooxml::chart_markdown(&root)
    }

    fn picture(&mut self, pic: &Element) -> Option<String> {
        let alt = pic
            .path(&["nvPicPr", "cNvPr"])
            .and_then(|c| c.attr("descr"))
            .map(ooxml::clean_alt_text)
            .unwrap_or_default();
        let alt = alt.replace(['[', ']'], "");
        let blip = pic.path(&["blipFill", "blip"]);
        let rel = blip
            .and_then(|b| b.attr("embed"))
            .and_then(|id| self.rels.get(id))
            .filter(|r| !r.external)
            .cloned();
        let bytes = rel
            .as_ref()
            .and_then(|r| self.package.part(&r.target))
            .filter(|b| !b.is_empty());
        match (rel, bytes) {
            (Some(rel), Some(bytes)) => {
                let link = self.ctx.images.add(&bytes, ooxml::extension(&rel.target));
                Some(format!("![{alt}]({link})"))
            }
            _ => (!alt.is_empty()).then_some(alt),
        }
    }

    /// The speaker notes of the slide, without the slide image and number.
    fn notes(&mut self) -> Option<String> {
        let rel = self
            .rels
            .values()
            .find(|r| r.is("notesSlide") && !r.external)?
            .target
            .clone();
        let notes = Element::parse(&self.package.part(&rel)?)?;
        let tree = notes.path(&["cSld", "spTree"])?;
        let mut parts = Vec::new();
        for shape in tree.elements().filter(|e| e.name == "sp") {
            let ph = placeholder_type(shape);
            if matches!(
                ph.as_deref(),
                Some("sldImg" | "sldNum" | "hdr" | "ftr" | "dt")
            ) {
                continue;
            }
            if let Some(body) = shape.child("txBody") {
                let text = text_body(body, false);
                if !text.trim().is_empty() {
                    parts.push(text);
                }
            }
        }
        (!parts.is_empty()).then(|| parts.join("\n\n"))
    }
}

/// Comment authors by id: (name, initials), from the legacy
/// `commentAuthors.xml` and the modern `authors.xml`.
type Authors = HashMap<String, (String, String)>;

fn comment_authors(package: &mut Package) -> Authors {
    let mut authors = Authors::new();
    let main = package
        .main_part("officeDocument")
        .unwrap_or_else(|| "ppt/presentation.xml".to_owned());
    let mut parts: Vec<String> = package
        .relationships(&main)
        .into_iter()
        .filter(|r| !r.external && (r.is("commentAuthors") || r.is("authors")))
        .map(|r| r.target)
        .collect();
    for usual in ["ppt/commentAuthors.xml", "ppt/authors.xml"] {
        if !parts.iter().any(|p| p.eq_ignore_ascii_case(usual)) {
            parts.push(usual.to_owned());
        }
    }
    for part in parts {
        let Some(root) = package.part(&part).and_then(|x| Element::parse(&x)) else {
            continue;
        };
        for author in root
            .elements()
            .filter(|e| e.name == "cmAuthor" || e.name == "author")
        {
            if let Some(id) = author.attr("id") {
                authors.insert(
                    id.to_owned(),
                    (
                        one_line(author.attr("name").unwrap_or("")),
                        one_line(author.attr("initials").unwrap_or("")),
                    ),
                );
            }
        }
    }
    authors
}

/// The placeholder type of a shape (`Some("")` for an untyped placeholder).
fn placeholder_type(shape: &Element) -> Option<String> {
    let ph = shape.path(&["nvSpPr", "nvPr", "ph"])?;
    Some(ph.attr("type").unwrap_or("").to_owned())
}

fn is_title(ph: Option<&str>) -> bool {
    matches!(ph, Some("title" | "ctrTitle"))
}

/// Body placeholders are bulleted by the master unless a paragraph says not.
fn is_body_placeholder(shape: &Element, ph: Option<&str>) -> bool {
    match ph {
        Some("body" | "obj") => true,
        Some("") => shape
            .path(&["nvSpPr", "nvPr", "ph"])
            .and_then(|p| p.attr("idx"))
            .is_some(),
        _ => false,
    }
}

/// The text of the slide's title placeholder, looking into groups too.
fn find_title(tree: &Element) -> Option<String> {
    for shape in tree.elements() {
        match shape.name.as_str() {
            "sp" if is_title(placeholder_type(shape).as_deref()) => {
                return shape.child("txBody").map(paragraphs_text);
            }
            "grpSp" => {
                if let Some(title) = find_title(shape) {
                    return Some(title);
                }
            }
            _ => {}
        }
    }
    None
}

/// The `a:off` of a shape's transform, in EMU; (0, 0) when absent.
fn offset(shape: &Element) -> (i64, i64) {
    let off = shape
        .path(&["spPr", "xfrm", "off"])
        .or_else(|| shape.path(&["grpSpPr", "xfrm", "off"]))
        .or_else(|| shape.path(&["xfrm", "off"]));
    let coord = |name| {
        off.and_then(|o| o.attr(name))
            .and_then(|v| v.parse::<i64>().ok())
            .unwrap_or(0)
    };
    (coord("x"), coord("y"))
}

/// The paragraphs of a text body as Markdown: list items by `a:pPr`, plain
/// paragraphs otherwise.
fn text_body(body: &Element, bulleted_by_default: bool) -> String {
    let mut out = String::new();
    let mut previous_item = false;
    let mut counters: Vec<usize> = Vec::new();
    for p in body.elements().filter(|e| e.name == "p") {
        let text = one_line(&paragraph_text(p));
        if text.is_empty() {
            continue;
        }
        let props = p.child("pPr");
        let level = props
            .and_then(|p| p.attr("lvl"))
            .and_then(|l| l.parse::<usize>().ok())
            .unwrap_or(0)
            .min(8);
        let numbered = props.and_then(|p| p.child("buAutoNum")).is_some();
        let bulleted = props
            .and_then(|p| p.child("buChar").or_else(|| p.child("buBlip")))
            .is_some();
        let none = props.and_then(|p| p.child("buNone")).is_some();
        let item = if numbered {
            counters.resize(level + 1, 0);
            if let Some(n) = counters.get_mut(level) {
                *n += 1;
            }
            Some(format!("{}.", counters.get(level).copied().unwrap_or(1)))
        } else if bulleted || (bulleted_by_default && !none) {
            Some("-".to_owned())
        } else {
            None
        };
        if !out.is_empty() {
            out.push_str(if item.is_some() && previous_item {
                "\n"
            } else {
                "\n\n"
            });
        }
        match &item {
            Some(marker) => out.push_str(&format!("{}{marker} {text}", "    ".repeat(level))),
            None => out.push_str(&text),
        }
        if !numbered {
            counters.truncate(level);
        }
        previous_item = item.is_some();
    }
    out
}

/// The text of all paragraphs of a body, joined by spaces.
fn paragraphs_text(body: &Element) -> String {
    let parts: Vec<String> = body
        .elements()
        .filter(|e| e.name == "p")
        .map(paragraph_text)
        .collect();
    parts.join(" ")
}

/// The text of one `a:p`: runs, fields and line breaks.
fn paragraph_text(p: &Element) -> String {
    let mut text = String::new();
    for child in p.elements() {
        match child.name.as_str() {
            "r" | "fld" => {
                if let Some(t) = child.child("t") {
                    text.push_str(&t.text());
                }
            }
            "br" => text.push(' '),
            _ => {}
        }
    }
    text
}

/// A table's cells as text; merged cells repeat the text they are merged with.
fn table_rows(table: &Element) -> Vec<Vec<String>> {
    let mut rows: Vec<Vec<String>> = Vec::new();
    for tr in table.elements().filter(|e| e.name == "tr") {
        let mut cells: Vec<String> = Vec::new();
        for tc in tr.elements().filter(|e| e.name == "tc") {
            let text = if tc.attr("hMerge").is_some_and(is_true) {
                cells.last().cloned().unwrap_or_default()
            } else if tc.attr("vMerge").is_some_and(is_true) {
                rows.last()
                    .and_then(|above| above.get(cells.len()))
                    .cloned()
                    .unwrap_or_default()
            } else {
                tc.child("txBody")
                    .map(paragraphs_text)
                    .map(|t| one_line(&t))
                    .unwrap_or_default()
            };
            cells.push(text);
        }
        rows.push(cells);
    }
    rows
}

fn is_true(v: &str) -> bool {
    v == "1" || v.eq_ignore_ascii_case("true")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::Limits;
    use crate::formats::ooxml::tests::build_zip;
    use crate::images::ImageSink;
    use kts_record::ErrorCode;

    const NS: &str = r#"xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main""#;
    const REL: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

    fn rels(items: &[(&str, &str, &str)]) -> String {
        let items: String = items
            .iter()
            .map(|(id, kind, target)| {
                format!(r#"<Relationship Id="{id}" Type="{REL}/{kind}" Target="{target}"/>"#)
            })
            .collect();
        format!(
            r#"<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">{items}</Relationships>"#
        )
    }

    fn shape(ph: &str, y: i64, paragraphs: &str) -> String {
        format!(
            r#"<p:sp><p:nvSpPr><p:cNvPr id="2" name="s"/><p:cNvSpPr/><p:nvPr>{ph}</p:nvPr></p:nvSpPr><p:spPr><a:xfrm><a:off x="0" y="{y}"/></a:xfrm></p:spPr><p:txBody>{paragraphs}</p:txBody></p:sp>"#
        )
    }

    fn para(text: &str, ppr: &str) -> String {
        format!("<a:p>{ppr}<a:r><a:t>{text}</a:t></a:r></a:p>")
    }

    fn slide(shapes: &str) -> String {
        format!(r#"<p:sld {NS}><p:cSld><p:spTree>{shapes}</p:spTree></p:cSld></p:sld>"#)
    }

    fn title(text: &str) -> String {
        shape(r#"<p:ph type="title"/>"#, 0, &para(text, ""))
    }

    /// A deck whose slide list shows slide2.xml before slide1.xml.
    fn deck() -> Vec<u8> {
        let presentation = format!(
            r#"<p:presentation {NS}><p:sldIdLst><p:sldId id="257" r:id="rId3"/><p:sldId id="256" r:id="rId2"/><p:sldId id="258" r:id="rId9"/></p:sldIdLst></p:presentation>"#
        );
        let body = [
            para("Intro &amp; more", r#"<a:pPr><a:buNone/></a:pPr>"#),
            para("point", r#"<a:pPr><a:buChar char="•"/></a:pPr>"#),
            para("detail", r#"<a:pPr lvl="1"><a:buChar char="•"/></a:pPr>"#),
            para(
                "step",
                r#"<a:pPr><a:buAutoNum type="arabicPeriod"/></a:pPr>"#,
            ),
        ]
        .concat();
        // The lower shape comes first in the file; reading order puts it last.
        let first = slide(&format!(
            "{}{}{}",
            shape("", 5000, &para("bottom text", "")),
            title("Shown first"),
            shape("", 1000, &body)
        ));
        let cell = |t: &str, attrs: &str| {
            format!(
                r#"<a:tc{attrs}><a:txBody><a:p><a:r><a:t>{t}</a:t></a:r></a:p></a:txBody></a:tc>"#
            )
        };
        let table = format!(
            r#"<p:graphicFrame><p:xfrm><a:off x="0" y="100"/></p:xfrm><a:graphic><a:graphicData><a:tbl><a:tr>{}{}</a:tr><a:tr>{}{}</a:tr></a:tbl></a:graphicData></a:graphic></p:graphicFrame>"#,
            cell("H1", ""),
            cell("H2", ""),
            cell("merged", r#" gridSpan="2""#),
            cell("", r#" hMerge="1""#)
        );
        let second = slide(&format!("{}{table}", title("Shown second")));
        let notes = format!(
            r#"<p:notes {NS}><p:cSld><p:spTree>{}{}</p:spTree></p:cSld></p:notes>"#,
            shape(r#"<p:ph type="sldImg"/>"#, 0, &para("slide image", "")),
            shape(r#"<p:ph type="body" idx="1"/>"#, 0, &para("Say hello.", ""))
        );
        build_zip(&[
            (
                "_rels/.rels",
                rels(&[("rId1", "officeDocument", "ppt/presentation.xml")]).as_bytes(),
            ),
            ("ppt/presentation.xml", presentation.as_bytes()),
            (
                "ppt/_rels/presentation.xml.rels",
                rels(&[
                    ("rId2", "slide", "slides/slide1.xml"),
                    ("rId3", "slide", "slides/slide2.xml"),
                    ("rId9", "slide", "slides/missing.xml"),
                ])
                .as_bytes(),
            ),
            ("ppt/slides/slide1.xml", second.as_bytes()),
            ("ppt/slides/slide2.xml", first.as_bytes()),
            (
                "ppt/slides/_rels/slide2.xml.rels",
                rels(&[("rId1", "notesSlide", "../notesSlides/notesSlide1.xml")]).as_bytes(),
            ),
            ("ppt/notesSlides/notesSlide1.xml", notes.as_bytes()),
        ])
    }

    fn run(bytes: &[u8]) -> Result<Converted, ConvertError> {
        let limits = Limits::default();
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

    #[test]
    fn slides_follow_the_presentation_order_with_notes() {
        let out = run(&deck()).unwrap();
        let expected = "<!-- slide: 1 -->\n\n## Shown first\n\n\
            Intro & more\n\n- point\n    - detail\n1. step\n\nbottom text\n\n\
            ### Notes\n\nSay hello.\n\n\
            <!-- slide: 2 -->\n\n## Shown second\n\n\
            | H1 | H2 |\n| --- | --- |\n| merged | merged |\n\n\
            <!-- slide: 3 -->\n";
        assert_eq!(out.markdown, expected);
        assert_eq!(
            out.properties.get("slides").and_then(Value::as_u64),
            Some(3)
        );
    }

    #[test]
    fn a_slide_declaring_entities_is_refused_with_a_message_that_says_so() {
        let limits = Limits::default();
        let deck = deck();
        let mut package = Package::open(&deck, &limits).unwrap();
        let slide = String::from_utf8(package.part("ppt/slides/slide1.xml").unwrap()).unwrap();
        let declared = format!(r#"<!DOCTYPE p:sld [<!ENTITY a "aaaa">]>{slide}"#);
        let bytes = package
            .with_parts_replaced(&[("ppt/slides/slide1.xml", declared.as_bytes())])
            .unwrap();
        let error = run(&bytes).unwrap_err();
        assert_eq!(error.code, kts_record::ErrorCode::Unsupported);
        assert!(
            error
                .message
                .contains("ppt/slides/slide1.xml declares XML entities"),
            "{error:?}"
        );
    }

    #[test]
    fn missing_presentation_and_empty_decks_are_errors() {
        let zip = build_zip(&[("_rels/.rels", rels(&[]).as_bytes())]);
        assert_eq!(run(&zip).unwrap_err().code, ErrorCode::Corrupt);
    }

    #[test]
    fn a_deck_without_slides_is_a_document() {
        let empty = format!(r#"<p:presentation {NS}><p:sldIdLst/></p:presentation>"#);
        let zip = build_zip(&[("ppt/presentation.xml", empty.as_bytes())]);
        let out = run(&zip).unwrap();
        assert_eq!(out.markdown, "");
        assert_eq!(
            out.properties.get("slides").and_then(Value::as_u64),
            Some(0)
        );
        let core = r#"<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Masters  only</dc:title></cp:coreProperties>"#;
        let zip = build_zip(&[
            ("ppt/presentation.xml", empty.as_bytes()),
            ("docProps/core.xml", core.as_bytes()),
        ]);
        let out = run(&zip).unwrap();
        assert_eq!(out.markdown, "# Masters only\n");
        assert_eq!(out.title.as_deref(), Some("Masters  only"));
    }

    #[test]
    fn comments_follow_the_notes() {
        let presentation = format!(
            r#"<p:presentation {NS}><p:sldIdLst><p:sldId id="256" r:id="rId2"/></p:sldIdLst></p:presentation>"#
        );
        let legacy = format!(
            r#"<p:cmLst {NS}><p:cm authorId="0" dt="2026-01-01T00:00:00" idx="1"><p:pos x="0" y="0"/><p:text>Old style</p:text></p:cm></p:cmLst>"#
        );
        let modern = r#"<p188:cmLst xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:p188="http://schemas.microsoft.com/office/powerpoint/2018/8/main"><p188:cm id="{1}" authorId="{A}" created="2026-02-02T10:00:00"><p188:replyLst><p188:reply id="{2}" authorId="{B}"><p188:txBody><a:bodyPr/><a:p><a:r><a:t>A reply</a:t></a:r></a:p></p188:txBody></p188:reply></p188:replyLst><p188:txBody><a:bodyPr/><a:p><a:r><a:t>New style</a:t></a:r></a:p></p188:txBody></p188:cm></p188:cmLst>"#;
        let legacy_authors = format!(
            r#"<p:cmAuthorLst {NS}><p:cmAuthor id="0" name="John Reviewer" initials="JR" lastIdx="1" clrIdx="0"/></p:cmAuthorLst>"#
        );
        let authors = r#"<p188:authorLst xmlns:p188="http://schemas.microsoft.com/office/powerpoint/2018/8/main"><p188:author id="{A}" name="Ann" initials="" userId="a" providerId="None"/></p188:authorLst>"#;
        let modern_rel = r#"<Relationship Id="rId8" Type="http://schemas.microsoft.com/office/2018/10/relationships/comments" Target="../comments/modernComment_100_1.xml"/>"#;
        let slide_rels = rels(&[("rId7", "comments", "../comments/comment1.xml")])
            .replace("</Relationships>", &format!("{modern_rel}</Relationships>"));
        let zip = build_zip(&[
            ("ppt/presentation.xml", presentation.as_bytes()),
            (
                "ppt/_rels/presentation.xml.rels",
                rels(&[
                    ("rId2", "slide", "slides/slide1.xml"),
                    ("rId3", "commentAuthors", "commentAuthors.xml"),
                ])
                .as_bytes(),
            ),
            ("ppt/slides/slide1.xml", slide(&title("Hello")).as_bytes()),
            ("ppt/slides/_rels/slide1.xml.rels", slide_rels.as_bytes()),
            ("ppt/comments/comment1.xml", legacy.as_bytes()),
            ("ppt/comments/modernComment_100_1.xml", modern.as_bytes()),
            ("ppt/commentAuthors.xml", legacy_authors.as_bytes()),
            ("ppt/authors.xml", authors.as_bytes()),
        ]);
        let out = run(&zip).unwrap();
        assert_eq!(
            out.markdown,
            "<!-- slide: 1 -->\n\n## Hello\n\n### Comments\n\n\
             > Comment (John Reviewer (JR), 2026-01-01T00:00:00): Old style\n\n\
             > Comment (Ann, 2026-02-02T10:00:00): New style\n\n\
             > Comment: A reply\n"
        );
    }
}
