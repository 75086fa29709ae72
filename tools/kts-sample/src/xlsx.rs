//! Workbooks as xlsx: sheets of text, numbers and formulas with their cached
//! values, merged cells, cell comments and one date style.

use crate::package::{Part, core_xml, zip_parts};
use crate::xml::escape;
use kts_record::cell_reference;

/// A cell of a sheet.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Empty,
    Text(String),
    Number(f64),
    /// A date as its spreadsheet serial number (days since 1899-12-30).
    Date(f64),
    /// A formula and the value it last computed, as Excel saves both.
    Formula {
        formula: String,
        cached: f64,
    },
}

impl From<&str> for Cell {
    fn from(text: &str) -> Self {
        if text.is_empty() {
            Cell::Empty
        } else {
            Cell::Text(text.to_owned())
        }
    }
}

impl From<f64> for Cell {
    fn from(value: f64) -> Self {
        Cell::Number(value)
    }
}

/// A comment on a cell, at (row, column) from 0.
#[derive(Clone, Debug, PartialEq)]
pub struct Comment {
    pub row: u32,
    pub col: u32,
    pub author: String,
    pub text: String,
}

/// One worksheet.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sheet {
    pub name: String,
    pub rows: Vec<Vec<Cell>>,
    /// Merged ranges as (first row, first column, last row, last column), from 0.
    pub merges: Vec<(u32, u32, u32, u32)>,
    pub comments: Vec<Comment>,
}

impl Sheet {
    pub fn new(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            ..Self::default()
        }
    }

    pub fn row(mut self, cells: impl IntoIterator<Item = Cell>) -> Self {
        self.rows.push(cells.into_iter().collect());
        self
    }
}

/// Writes a workbook (deterministically) with `title` in its properties.
pub fn to_xlsx(title: &str, sheets: &[Sheet]) -> zip::result::ZipResult<Vec<u8>> {
    let mut parts: Vec<Part> = vec![
        ("[Content_Types].xml".into(), content_types(sheets)),
        ("_rels/.rels".into(), ROOT_RELS.as_bytes().to_vec()),
        ("docProps/core.xml".into(), core_xml(title)),
        ("xl/workbook.xml".into(), workbook_xml(sheets)),
        ("xl/_rels/workbook.xml.rels".into(), workbook_rels(sheets)),
        ("xl/styles.xml".into(), STYLES.as_bytes().to_vec()),
    ];
    for (i, sheet) in sheets.iter().enumerate() {
        let n = i + 1;
        parts.push((format!("xl/worksheets/sheet{n}.xml"), sheet_xml(sheet)));
        if !sheet.comments.is_empty() {
            parts.push((
                format!("xl/worksheets/_rels/sheet{n}.xml.rels"),
                format!(
                    r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="{PACKAGE_RELS}"><Relationship Id="rId1" Type="{OFFICE_RELS}/comments" Target="../comments{n}.xml"/></Relationships>"#
                )
                .into_bytes(),
            ));
            parts.push((format!("xl/comments{n}.xml"), comments_xml(&sheet.comments)));
        }
    }
    zip_parts(&parts)
}

const PACKAGE_RELS: &str = "http://schemas.openxmlformats.org/package/2006/relationships";
const OFFICE_RELS: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
const MAIN: &str = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";

const ROOT_RELS: &str = concat!(
    r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">"#,
    r#"<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/>"#,
    r#"<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/>"#,
    "</Relationships>"
);

/// Style 0 is the default; style 1 shows a number as a date (format 14).
const STYLES: &str = concat!(
    r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">"#,
    r#"<fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts>"#,
    r#"<fills count="1"><fill><patternFill patternType="none"/></fill></fills>"#,
    r#"<borders count="1"><border/></borders>"#,
    r#"<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>"#,
    r#"<cellXfs count="2"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>"#,
    r#"<xf numFmtId="14" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/></cellXfs>"#,
    "</styleSheet>"
);

fn content_types(sheets: &[Sheet]) -> Vec<u8> {
    let mut xml = String::from(concat!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">"#,
        r#"<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>"#,
        r#"<Default Extension="xml" ContentType="application/xml"/>"#,
        r#"<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>"#,
        r#"<Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>"#,
        r#"<Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/>"#,
    ));
    for (i, sheet) in sheets.iter().enumerate() {
        let n = i + 1;
        xml.push_str(&format!(
            r#"<Override PartName="/xl/worksheets/sheet{n}.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>"#
        ));
        if !sheet.comments.is_empty() {
            xml.push_str(&format!(
                r#"<Override PartName="/xl/comments{n}.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.comments+xml"/>"#
            ));
        }
    }
    xml.push_str("</Types>");
    xml.into_bytes()
}

fn workbook_xml(sheets: &[Sheet]) -> Vec<u8> {
    let mut xml = format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><workbook xmlns="{MAIN}" xmlns:r="{OFFICE_RELS}"><sheets>"#
    );
    for (i, sheet) in sheets.iter().enumerate() {
        let n = i + 1;
        xml.push_str(&format!(
            r#"<sheet name="{}" sheetId="{n}" r:id="rId{n}"/>"#,
            escape(&sheet.name)
        ));
    }
    xml.push_str("</sheets></workbook>");
    xml.into_bytes()
}

fn workbook_rels(sheets: &[Sheet]) -> Vec<u8> {
    let mut xml = format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="{PACKAGE_RELS}">"#
    );
    for n in 1..=sheets.len() {
        xml.push_str(&format!(
            r#"<Relationship Id="rId{n}" Type="{OFFICE_RELS}/worksheet" Target="worksheets/sheet{n}.xml"/>"#
        ));
    }
    let styles = sheets.len() + 1;
    xml.push_str(&format!(
        r#"<Relationship Id="rId{styles}" Type="{OFFICE_RELS}/styles" Target="styles.xml"/></Relationships>"#
    ));
    xml.into_bytes()
}

fn sheet_xml(sheet: &Sheet) -> Vec<u8> {
    let mut xml = format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet xmlns="{MAIN}"><sheetData>"#
    );
    for (r, row) in sheet.rows.iter().enumerate() {
        let r = r as u32;
        if row.iter().all(|c| *c == Cell::Empty) {
            continue;
        }
        xml.push_str(&format!(r#"<row r="{}">"#, r + 1));
        for (c, cell) in row.iter().enumerate() {
            let at = cell_reference(r, c as u32);
            match cell {
                Cell::Empty => {}
                Cell::Text(text) => xml.push_str(&format!(
                    r#"<c r="{at}" t="inlineStr"><is><t xml:space="preserve">{}</t></is></c>"#,
                    escape(text)
                )),
                Cell::Number(value) => xml.push_str(&format!(r#"<c r="{at}"><v>{value}</v></c>"#)),
                Cell::Date(serial) => {
                    xml.push_str(&format!(r#"<c r="{at}" s="1"><v>{serial}</v></c>"#))
                }
                Cell::Formula { formula, cached } => xml.push_str(&format!(
                    r#"<c r="{at}"><f>{}</f><v>{cached}</v></c>"#,
                    escape(formula)
                )),
            }
        }
        xml.push_str("</row>");
    }
    xml.push_str("</sheetData>");
    if !sheet.merges.is_empty() {
        xml.push_str(&format!(r#"<mergeCells count="{}">"#, sheet.merges.len()));
        for &(r1, c1, r2, c2) in &sheet.merges {
            xml.push_str(&format!(
                r#"<mergeCell ref="{}:{}"/>"#,
                cell_reference(r1, c1),
                cell_reference(r2, c2)
            ));
        }
        xml.push_str("</mergeCells>");
    }
    xml.push_str("</worksheet>");
    xml.into_bytes()
}

fn comments_xml(comments: &[Comment]) -> Vec<u8> {
    let mut authors: Vec<&str> = Vec::new();
    for comment in comments {
        if !authors.contains(&comment.author.as_str()) {
            authors.push(&comment.author);
        }
    }
    let mut xml = format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><comments xmlns="{MAIN}"><authors>"#
    );
    for author in &authors {
        xml.push_str(&format!("<author>{}</author>", escape(author)));
    }
    xml.push_str("</authors><commentList>");
    for comment in comments {
        let author = authors
            .iter()
            .position(|a| *a == comment.author)
            .unwrap_or(0);
        xml.push_str(&format!(
            r#"<comment ref="{}" authorId="{author}"><text><r><t xml:space="preserve">{}</t></r></text></comment>"#,
            cell_reference(comment.row, comment.col),
            escape(&comment.text)
        ));
    }
    xml.push_str("</commentList></comments>");
    xml.into_bytes()
}
