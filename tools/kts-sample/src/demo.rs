//! The demo scope: kts's own documentation rendered in every format.

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::{Block, Format, Outline, render};

/// (file name, format, Markdown source) of every demo file.
pub const DEMO_FILES: [(&str, Format, &str); 7] = [
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
];

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
