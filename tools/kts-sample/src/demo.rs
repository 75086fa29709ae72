//! The demo scope: kts's own documentation rendered in every format, and
//! tables about kts as CSV.

use std::path::{Path, PathBuf};

use anyhow::Context;

use kts_record::ErrorCode;

use crate::{
    Block, Cell, Comment, CsvDialect, Email, Format, Outline, Sheet, render, to_csv, to_xlsx,
};

/// (file name, format, Markdown source) of every demo file.
pub const DEMO_FILES: [(&str, Format, &str); 9] = [
    (
        "pipeline-overview.md",
        Format::Md,
        include_str!("../docs/pipeline.md"),
    ),
    ("kts-faq.txt", Format::Txt, include_str!("../docs/faq.md")),
    (
        "record-types.html",
        Format::Html,
        include_str!("../docs/records.md"),
    ),
    (
        "glossary.json",
        Format::Json,
        include_str!("../docs/glossary.md"),
    ),
    (
        "troubleshooting-guide.docx",
        Format::Docx,
        include_str!("../docs/troubleshooting.md"),
    ),
    (
        "getting-started.pptx",
        Format::Pptx,
        include_str!("../docs/getting-started.md"),
    ),
    (
        "document-retention-policy.pdf",
        Format::Pdf,
        include_str!("../docs/policy.md"),
    ),
    (
        "document-formats.odt",
        Format::Odt,
        include_str!("../docs/formats.md"),
    ),
    (
        "chunking-handbook.epub",
        Format::Epub,
        include_str!("../docs/chunking.md"),
    ),
];

/// The demo's table files, written from rows rather than from an outline.
pub const DEMO_TABLE_FILES: [&str; 2] = ["file-formats.csv", "error-codes.xlsx"];

/// The demo's e-mail: a message with a guide of its own attached (a docx).
pub const DEMO_MAIL_FILES: [&str; 1] = ["e-mail-support-announcement.eml"];

fn announcement_eml() -> anyhow::Result<Vec<u8>> {
    let guide = render(
        &Outline::from_markdown(include_str!("../docs/mail.md")),
        Format::Docx,
    )?;
    let text = "Hello everyone,\n\n\
        kts now reads saved e-mail: .eml messages, .mbox mailboxes and Outlook .msg files. \
        Attachments are searchable as documents of their own.\n\n\
        The attached guide explains how messages and attachments are kept up to date in the index.\n\n\
        The documentation team";
    let html = "<p>Hello everyone,</p>\
        <p>kts now reads saved e-mail: <b>.eml</b> messages, <b>.mbox</b> mailboxes and Outlook \
        <b>.msg</b> files. Attachments are searchable as documents of their own.</p>\
        <p>The attached guide explains how messages and attachments are kept up to date in the index.</p>\
        <p>The documentation team</p>";
    Ok(Email::new(
        "E-mail is searchable now",
        "Documentation Team <docs@kts.example>",
        "All Users <users@kts.example>",
    )
    .text(text)
    .html(html)
    .attach(
        "searching-e-mail.docx",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        guide,
    )
    .to_bytes())
}

/// The formats kts reads, as a semicolon-separated export (as a spreadsheet
/// set to a European locale writes it), with a quoted field holding the delimiter.
fn file_formats_csv() -> Vec<u8> {
    let rows = [
        vec!["Extension", "Format", "What kts keeps"],
        vec![".md", "Markdown", "the text; front matter gives the title"],
        vec![".txt", "Plain text", "the text, in any common encoding"],
        vec![".html", "HTML", "headings, lists, tables, links"],
        vec![".json", "JSON", "keys as headings; values as text"],
        vec![".docx", "Word", "headings, lists, tables, comments, images"],
        vec![
            ".pptx",
            "PowerPoint",
            "slides; titles, notes, tables, charts",
        ],
        vec![".pdf", "PDF", "text per page; headings by font size"],
        vec![
            ".csv; .tsv",
            "CSV",
            "one table; delimiter and encoding sniffed",
        ],
        vec![
            ".xlsx; .xls; .ods",
            "Spreadsheet",
            "each sheet: a heading, then its tables",
        ],
    ];
    to_csv(
        &rows,
        CsvDialect {
            delimiter: ';',
            ..CsvDialect::default()
        },
    )
}

/// kts's error codes and conversion limits as a workbook: a title merged
/// over its table, a comment, a formula with its cached value and a date.
fn error_codes_xlsx() -> anyhow::Result<Vec<u8>> {
    let mut codes = Sheet::new("Error codes")
        .row(["kts error codes".into(), Cell::Empty])
        .row(["Code".into(), "Meaning".into()]);
    for code in ErrorCode::ALL {
        codes = codes.row([code.as_str().into(), code.description().into()]);
    }
    codes.merges.push((0, 0, 0, 1));
    codes.comments.push(Comment {
        row: 2,
        col: 0,
        author: "kts".into(),
        text: "Every stage uses these codes in kts.error/1 records.".into(),
    });
    let limits = Sheet::new("Limits")
        .row(["Setting".into(), "Default".into(), "Flag".into()])
        .row([
            "Largest unpacked package (bytes)".into(),
            Cell::Formula {
                formula: "512*1024*1024".into(),
                cached: 536_870_912.0,
            },
            "--max-unpacked-mib".into(),
        ])
        .row(["Most PDF pages".into(), 5000.0.into(), "--max-pages".into()])
        .row([
            "Time limit per document (s)".into(),
            120.0.into(),
            "--timeout".into(),
        ])
        .row([Cell::Empty, Cell::Empty, Cell::Empty])
        .row(["Last reviewed".into(), Cell::Date(45292.0), Cell::Empty]);
    Ok(to_xlsx("kts error codes and limits", &[codes, limits])?)
}

/// Writes every demo file into `dir` (created if needed); returns their paths.
pub fn write_demo(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut written = Vec::new();
    for (name, format, markdown) in DEMO_FILES {
        let bytes = render(&demo_outline(markdown, format), format)?;
        let path = dir.join(name);
        std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
        written.push(path);
    }
    let tables = [file_formats_csv(), error_codes_xlsx()?];
    let mails = [announcement_eml()?];
    let written_whole = DEMO_TABLE_FILES.iter().zip(tables);
    for (name, bytes) in written_whole.chain(DEMO_MAIL_FILES.iter().zip(mails)) {
        let path = dir.join(name);
        std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

/// Text formats get no images (they would be long `data:` URIs).
fn demo_outline(markdown: &str, format: Format) -> Outline {
    let mut outline = Outline::from_markdown(markdown);
    if matches!(format, Format::Md | Format::Txt) {
        outline.blocks.retain(|b| !matches!(b, Block::Image { .. }));
    }
    outline
}
