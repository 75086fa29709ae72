//! Word (.docx) writer, built with docx-rs and packaged with fixed ids and
//! timestamps.
//!
//! Headings use the paragraph styles `Heading1`..`Heading6` (declared in
//! styles.xml, named "heading 1".., with outline levels), the title the
//! `Title` style; bullets and numbered lists are real Word numbering (one
//! bullet definition, one restarting decimal definition per numbered list);
//! tables have a bold header row; images are inline pictures in word/media
//! with their alt text in `wp:docPr/@descr`; core properties carry the title.

use docx_rs::{
    AbstractNumbering, BreakType, Docx, IndentLevel, Level, LevelJc, LevelText, NumberFormat,
    Numbering, NumberingId, Paragraph, Pic, Run, RunFonts, SpecialIndentType, Start, Style,
    StyleType, Table, TableCell, TableRow,
};

use crate::outline::{Block, Outline};
use crate::package::{self, Part, display_emu};
use crate::xml::escape;

/// Numbering id of the shared bullet definition (docx-rs reserves 1).
const BULLETS: usize = 2;
/// Largest picture width: 6 inches.
const MAX_IMAGE_EMU: u64 = 6 * 914_400;

/// The outline as a .docx package.
pub fn to_docx(outline: &Outline) -> anyhow::Result<Vec<u8>> {
    Ok(package::zip_parts(&docx_parts(outline))?)
}

/// The package's parts, in order, ready to zip (damage functions edit them).
pub(crate) fn docx_parts(outline: &Outline) -> Vec<Part> {
    let mut builder = Builder::new();
    if !outline.title.is_empty() {
        builder.add(
            Paragraph::new()
                .style("Title")
                .add_run(Run::new().add_text(&outline.title)),
        );
    }
    for block in &outline.blocks {
        builder.block(block);
    }
    let Builder { docx, alts, .. } = builder;
    let xml = docx.build();
    let document = with_alt_texts(&String::from_utf8_lossy(&xml.document), &alts);
    let mut parts: Vec<Part> = vec![
        ("[Content_Types].xml".into(), xml.content_type),
        ("_rels/.rels".into(), xml.rels),
        ("docProps/app.xml".into(), xml.doc_props.app),
        (
            "docProps/core.xml".into(),
            package::core_xml(&outline.title),
        ),
        ("docProps/custom.xml".into(), xml.doc_props.custom),
        ("word/_rels/document.xml.rels".into(), xml.document_rels),
        ("word/document.xml".into(), document.into_bytes()),
        (
            "word/styles.xml".into(),
            with_default_paragraph_style(&xml.styles),
        ),
        ("word/settings.xml".into(), xml.settings),
        ("word/fontTable.xml".into(), xml.font_table),
        ("word/comments.xml".into(), xml.comments),
        ("word/numbering.xml".into(), xml.numberings),
        ("word/commentsExtended.xml".into(), xml.comments_extended),
        ("word/footnotes.xml".into(), xml.footnotes),
    ];
    parts.extend(
        xml.media
            .into_iter()
            .map(|(id, png)| (format!("word/media/{id}.png"), png)),
    );
    parts
}

/// docx-rs writes every picture as `<wp:docPr id="1" name="Figure" />`;
/// give each a unique id and its alt text, in document order.
fn with_alt_texts(document: &str, alts: &[String]) -> String {
    const DOC_PR: &str = r#"<wp:docPr id="1" name="Figure" />"#;
    let mut pieces = document.split(DOC_PR);
    let mut out = pieces.next().unwrap_or_default().to_string();
    for (i, piece) in pieces.enumerate() {
        let alt = alts.get(i).map_or(String::new(), |a| escape(a));
        out.push_str(&format!(
            r#"<wp:docPr id="{}" name="Picture {}" descr="{alt}" />"#,
            i + 1,
            i + 1
        ));
        out.push_str(piece);
    }
    out
}

/// Marks docx-rs's Normal style as the default paragraph style, so readers
/// resolve paragraphs without a `w:pStyle` to it.
fn with_default_paragraph_style(styles: &[u8]) -> Vec<u8> {
    String::from_utf8_lossy(styles)
        .replacen(
            r#"<w:style w:type="paragraph" w:styleId="Normal">"#,
            r#"<w:style w:type="paragraph" w:default="1" w:styleId="Normal">"#,
            1,
        )
        .into_bytes()
}

struct Builder {
    docx: Docx,
    next_para: u32,
    next_list: usize,
    alts: Vec<String>,
}

impl Builder {
    fn new() -> Self {
        let docx = styles(Docx::new())
            .add_abstract_numbering(bullet_definition(BULLETS))
            .add_numbering(Numbering::new(BULLETS, BULLETS))
            .created_at(package::FIXED_DATE)
            .updated_at(package::FIXED_DATE);
        Self {
            docx,
            next_para: 1,
            next_list: BULLETS + 1,
            alts: Vec::new(),
        }
    }

    /// A paragraph with a fixed id (docx-rs would otherwise number
    /// paragraphs from a per-thread counter, so bytes would vary).
    fn para(&mut self) -> Paragraph {
        let id = format!("{:08X}", self.next_para);
        self.next_para += 1;
        Paragraph::new().id(id)
    }

    fn add(&mut self, paragraph: Paragraph) {
        let paragraph = paragraph.id(format!("{:08X}", self.next_para));
        self.next_para += 1;
        self.docx = std::mem::take(&mut self.docx).add_paragraph(paragraph);
    }

    fn block(&mut self, block: &Block) {
        match block {
            Block::Heading { level, text } => {
                let style = format!("Heading{}", (*level).clamp(1, 6));
                self.add(
                    Paragraph::new()
                        .style(&style)
                        .add_run(Run::new().add_text(text)),
                );
            }
            Block::Paragraph(text) => self.add(Paragraph::new().add_run(Run::new().add_text(text))),
            Block::Bullets(items) => self.list(items, BULLETS),
            Block::Numbered(items) => {
                let id = self.next_list;
                self.next_list += 1;
                self.docx = std::mem::take(&mut self.docx)
                    .add_abstract_numbering(decimal_definition(id))
                    .add_numbering(Numbering::new(id, id));
                self.list(items, id);
            }
            Block::Table(rows) => self.table(rows),
            Block::Code(code) => self.add(code_paragraph(code)),
            Block::Image { png, alt } => self.image(png, alt),
            Block::Notes(text) => self.add(
                Paragraph::new().add_run(Run::new().italic().add_text(format!("Notes: {text}"))),
            ),
            Block::PageBreak => {
                self.add(Paragraph::new().add_run(Run::new().add_break(BreakType::Page)))
            }
        }
    }

    fn list(&mut self, items: &[String], numbering: usize) {
        for item in items {
            let p = Paragraph::new()
                .style("ListParagraph")
                .numbering(NumberingId::new(numbering), IndentLevel::new(0))
                .add_run(Run::new().add_text(item));
            self.add(p);
        }
    }

    fn table(&mut self, rows: &[Vec<String>]) {
        let rows: Vec<TableRow> = rows
            .iter()
            .enumerate()
            .map(|(i, cells)| {
                let cells = cells
                    .iter()
                    .map(|text| {
                        let run = if i == 0 {
                            Run::new().bold()
                        } else {
                            Run::new()
                        };
                        TableCell::new().add_paragraph(self.para().add_run(run.add_text(text)))
                    })
                    .collect();
                TableRow::new(cells)
            })
            .collect();
        self.docx = std::mem::take(&mut self.docx).add_table(Table::new(rows));
    }

    fn image(&mut self, png: &[u8], alt: &str) {
        let Some((w, h)) = package::png_size(png) else {
            return self
                .add(Paragraph::new().add_run(Run::new().add_text(format!("[Image: {alt}]"))));
        };
        self.alts.push(alt.to_string());
        let (cx, cy) = display_emu(png, MAX_IMAGE_EMU);
        let pic = Pic::new_with_dimensions(png.to_vec(), w, h)
            .id(format!("rIdImage{}", self.alts.len()))
            .size(cx as u32, cy as u32);
        self.add(Paragraph::new().add_run(Run::new().add_image(pic)));
    }
}

fn code_paragraph(code: &str) -> Paragraph {
    let mut run = Run::new();
    for (i, line) in code.lines().enumerate() {
        if i > 0 {
            run = run.add_break(BreakType::TextWrapping);
        }
        run = run.add_text(line);
    }
    Paragraph::new().style("Code").add_run(run)
}

/// Title, Heading1..6, ListParagraph and Code paragraph styles (docx-rs adds Normal).
fn styles(mut docx: Docx) -> Docx {
    let para = |id: &str, name: &str| Style::new(id, StyleType::Paragraph).name(name);
    docx = docx
        .add_style(para("Title", "Title").size(56).bold())
        .add_style(para("ListParagraph", "List Paragraph"))
        .add_style(
            para("Code", "Code")
                .fonts(RunFonts::new().ascii("Courier New").hi_ansi("Courier New"))
                .size(20),
        );
    for level in 1..=6usize {
        let size = [32, 28, 26, 24, 22, 22][level - 1];
        let style = para(&format!("Heading{level}"), &format!("heading {level}"));
        docx = docx.add_style(style.size(size).bold().outline_lvl(level - 1));
    }
    docx
}

fn bullet_definition(id: usize) -> AbstractNumbering {
    let level = Level::new(
        0,
        Start::new(1),
        NumberFormat::new("bullet"),
        LevelText::new("\u{2022}"),
        LevelJc::new("left"),
    );
    AbstractNumbering::new(id).add_level(level.indent(
        Some(720),
        Some(SpecialIndentType::Hanging(360)),
        None,
        None,
    ))
}

fn decimal_definition(id: usize) -> AbstractNumbering {
    let level = Level::new(
        0,
        Start::new(1),
        NumberFormat::new("decimal"),
        LevelText::new("%1."),
        LevelJc::new("left"),
    );
    AbstractNumbering::new(id).add_level(level.indent(
        Some(720),
        Some(SpecialIndentType::Hanging(360)),
        None,
        None,
    ))
}
