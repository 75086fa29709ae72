use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde::{Deserialize, Serialize};

/// A document format kts converts.
#[derive(Serialize, Deserialize, schemars::JsonSchema, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Md,
    Txt,
    Html,
    Json,
    Docx,
    // Word 97–2003 (.doc): a compound file with a `WordDocument` stream.
    Doc,
    Pptx,
    // PowerPoint 97–2003 (.ppt): a compound file with a `PowerPoint Document` stream.
    Ppt,
    Pdf,
    // Delimiter-separated values: .csv and .tsv (comma, semicolon, tab or pipe).
    Csv,
    Xlsx,
    Xls,
    Ods,
    // One e-mail message (RFC 822 / MIME).
    Eml,
    // A mailbox: messages one after another, each opened by a `From ` line.
    Mbox,
    // An Outlook message: a compound file of MAPI property streams.
    Msg,
    // OpenDocument text and presentations.
    Odt,
    Odp,
    Epub,
    Rtf,
    // WebVTT subtitles and transcripts.
    Vtt,
    // AsciiDoc: .adoc and .asciidoc.
    Adoc,
    // LaTeX sources: .tex, .latex and .ltx.
    Latex,
    // Images, read with OCR.
    Png,
    Jpg,
    Tiff,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Md => "md",
            Self::Txt => "txt",
            Self::Html => "html",
            Self::Json => "json",
            Self::Docx => "docx",
            Self::Doc => "doc",
            Self::Pptx => "pptx",
            Self::Ppt => "ppt",
            Self::Pdf => "pdf",
            Self::Csv => "csv",
            Self::Xlsx => "xlsx",
            Self::Xls => "xls",
            Self::Ods => "ods",
            Self::Eml => "eml",
            Self::Mbox => "mbox",
            Self::Msg => "msg",
            Self::Odt => "odt",
            Self::Odp => "odp",
            Self::Epub => "epub",
            Self::Rtf => "rtf",
            Self::Vtt => "vtt",
            Self::Adoc => "adoc",
            Self::Latex => "latex",
            Self::Png => "png",
            Self::Jpg => "jpg",
            Self::Tiff => "tiff",
        }
    }

    /// Whether the file is a picture, read with OCR.
    pub fn is_image(self) -> bool {
        matches!(self, Self::Png | Self::Jpg | Self::Tiff)
    }

    /// Whether the format's files are binary (a package, a compound file, a
    /// PDF, an image), never text.
    pub fn is_binary(self) -> bool {
        is_office(self) || self == Self::Msg || self.is_image()
    }

    /// The format an extension names, if kts handles it.
    pub fn from_extension(ext: &str) -> Option<Format> {
        Some(match ext.to_ascii_lowercase().as_str() {
            "md" | "markdown" | "mdown" | "mkd" => Self::Md,
            "txt" | "text" => Self::Txt,
            "html" | "htm" | "xhtml" => Self::Html,
            "json" => Self::Json,
            "docx" | "docm" => Self::Docx,
            "doc" | "dot" => Self::Doc,
            "pptx" | "pptm" => Self::Pptx,
            "ppt" | "pps" | "pot" => Self::Ppt,
            "pdf" => Self::Pdf,
            "csv" | "tsv" | "tab" => Self::Csv,
            "xlsx" | "xlsm" => Self::Xlsx,
            "xls" => Self::Xls,
            "ods" => Self::Ods,
            "eml" => Self::Eml,
            "mbox" | "mbx" => Self::Mbox,
            "msg" => Self::Msg,
            "odt" | "ott" => Self::Odt,
            "odp" | "otp" => Self::Odp,
            "epub" => Self::Epub,
            "rtf" => Self::Rtf,
            "vtt" => Self::Vtt,
            "adoc" | "asciidoc" => Self::Adoc,
            "tex" | "latex" | "ltx" => Self::Latex,
            "png" => Self::Png,
            "jpg" | "jpeg" => Self::Jpg,
            "tif" | "tiff" => Self::Tiff,
            _ => return None,
        })
    }
}

/// What the first bytes of a file say it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Magic {
    Pdf,
    /// A zip package: which Office part it holds, if any.
    Zip(Option<Format>),
    /// An OLE compound file: legacy Office, an encrypted OOXML package, or
    /// an Outlook message (when its directory names property streams), a
    /// Word document (when it names a `WordDocument` stream), a presentation
    /// (when it names a `PowerPoint Document` stream).
    Compound {
        outlook: bool,
        word: bool,
        powerpoint: bool,
    },
    Image(Format),
    Binary,
    Text,
}

fn sniff(head: &[u8], zip_names: &[u8]) -> Magic {
    if head.starts_with(b"%PDF-")
        || head
            .get(..1024)
            .unwrap_or(head)
            .windows(5)
            .any(|w| w == b"%PDF-")
    {
        return Magic::Pdf;
    }
    if head.starts_with(b"PK\x03\x04") {
        let office = if contains(zip_names, b"word/document.xml") {
            Some(Format::Docx)
        } else if contains(zip_names, b"ppt/presentation.xml") {
            Some(Format::Pptx)
        } else if contains(zip_names, b"xl/workbook.xml") {
            Some(Format::Xlsx)
        } else {
            package_mimetype(head)
        };
        return Magic::Zip(office);
    }
    if let Some(image) = image_format(head) {
        return Magic::Image(image);
    }
    if head.starts_with(&[0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1]) {
        return Magic::Compound {
            outlook: contains(zip_names, OUTLOOK_STREAM_PREFIX),
            word: contains(zip_names, WORD_STREAM),
            powerpoint: contains(zip_names, POWERPOINT_STREAM),
        };
    }
    let sample = &head[..head.len().min(8192)];
    let utf16 = sample.starts_with(&[0xFF, 0xFE])
        || sample.starts_with(&[0xFE, 0xFF])
        || utf16_without_bom(sample).is_some();
    if !utf16 && sample.contains(&0) {
        return Magic::Binary;
    }
    // Text (UTF-8 or a legacy code page) has few control bytes besides line breaks.
    let control = sample
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x0C | 0x1B))
        .count();
    if !utf16 && control * 20 > sample.len() {
        return Magic::Binary;
    }
    Magic::Text
}

/// The byte order of UTF-16 text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Utf16 {
    Le,
    Be,
}

/// The byte order of UTF-16 text that has no byte order mark, told by its
/// first KiB: in text of Latin script nearly every character's high byte is
/// NUL and its low byte is not; in text of another script only the spaces,
/// digits and line breaks between its letters have a NUL high byte, and its
/// letters are of that one script. Binary data with as many NULs is told
/// apart by the characters the pairs make: text has no control characters
/// besides line breaks, tabs and form feeds.
pub fn utf16_without_bom(head: &[u8]) -> Option<Utf16> {
    const SAMPLE_BYTES: usize = 1024;
    let sample = &head[..head.len().min(SAMPLE_BYTES)];
    let pairs = sample.len() / 2;
    if pairs < 2 {
        return None;
    }
    let nuls_at = |offset: usize| {
        sample
            .chunks_exact(2)
            .filter(|pair| pair[offset] == 0)
            .count()
    };
    let (even, odd) = (nuls_at(0), nuls_at(1));
    let order = if odd > even * 4 {
        Utf16::Le
    } else if even > odd * 4 {
        Utf16::Be
    } else {
        return None;
    };
    let (high_nuls, low_nuls) = (odd.max(even), odd.min(even));
    let latin = high_nuls * 2 > pairs && low_nuls * 10 < pairs;
    if !latin && (high_nuls < 2 || high_nuls * 64 < pairs) {
        return None;
    }
    let units = sample.chunks_exact(2).map(|pair| match order {
        Utf16::Le => u16::from_le_bytes([pair[0], pair[1]]),
        Utf16::Be => u16::from_be_bytes([pair[0], pair[1]]),
    });
    let chars: Vec<char> = char::decode_utf16(units)
        .filter_map(Result::ok)
        .filter(|c| !c.is_control() || matches!(c, '\n' | '\r' | '\t' | '\x0c'))
        .collect();
    let textual = chars.len() * 20 >= pairs * 19;
    (textual && (latin || of_one_script(&chars))).then_some(order)
}

/// Whether nine in ten of the characters beyond ASCII and punctuation are
/// letters of one script (Chinese characters and Japanese kana count as one).
fn of_one_script(chars: &[char]) -> bool {
    let mut counts = [0usize; SCRIPTS.len() + 1];
    let mut letters = 0;
    for &c in chars {
        let common = matches!(c as u32, 0..=0xBF | 0x2000..=0x206F | 0x20A0..=0x20CF);
        if !common {
            letters += 1;
            let script = SCRIPTS
                .iter()
                .position(|ranges| ranges.iter().any(|range| range.contains(&(c as u32))));
            counts[script.unwrap_or(SCRIPTS.len())] += 1;
        }
    }
    let most = counts[..SCRIPTS.len()].iter().max().copied().unwrap_or(0);
    letters > 0 && most * 10 >= letters * 9
}

/// Scripts by their Unicode blocks.
const SCRIPTS: [&[std::ops::RangeInclusive<u32>]; 11] = [
    &[0xC0..=0x24F, 0x1E00..=0x1EFF],
    &[0x370..=0x3FF, 0x1F00..=0x1FFF],
    &[0x400..=0x52F],
    &[0x530..=0x58F],
    &[0x590..=0x5FF],
    &[0x600..=0x6FF, 0x750..=0x77F],
    &[0x900..=0xDFF],
    &[0xE00..=0xEFF],
    &[0x10A0..=0x10FF],
    &[
        0x3000..=0x30FF,
        0x3400..=0x4DBF,
        0x4E00..=0x9FFF,
        0xFF00..=0xFFEF,
    ],
    &[0x1100..=0x11FF, 0x3130..=0x318F, 0xAC00..=0xD7AF],
];

/// `__substg1.0_` in UTF-16LE, as a compound file's directory spells the
/// names of an Outlook message's property streams.
const OUTLOOK_STREAM_PREFIX: &[u8] = b"_\0_\0s\0u\0b\0s\0t\0g\x001\0.\x000\0_\0";

/// The name of a Word document's main stream, as a compound file's
/// directory holds it (UTF-16LE).
const WORD_STREAM: &[u8] = b"W\0o\0r\0d\0D\0o\0c\0u\0m\0e\0n\0t\0";

/// The name of a presentation's main stream, `PowerPoint Document`, as a
/// compound file's directory holds it (UTF-16LE).
const POWERPOINT_STREAM: &[u8] = b"P\0o\0w\0e\0r\0P\0o\0i\0n\0t\0 \0D\0o\0c\0u\0m\0e\0n\0t\0";

/// The format the `mimetype` entry names: ODF and EPUB store it first and
/// uncompressed, so its content follows its name in the first bytes.
fn package_mimetype(head: &[u8]) -> Option<Format> {
    let start = &head[..head.len().min(128)];
    let kinds = [
        (
            &b"mimetypeapplication/vnd.oasis.opendocument.spreadsheet"[..],
            Format::Ods,
        ),
        (
            b"mimetypeapplication/vnd.oasis.opendocument.text",
            Format::Odt,
        ),
        (
            b"mimetypeapplication/vnd.oasis.opendocument.presentation",
            Format::Odp,
        ),
        (b"mimetypeapplication/epub+zip", Format::Epub),
    ];
    kinds
        .iter()
        .find(|(mimetype, _)| contains(start, mimetype))
        .map(|(_, format)| *format)
}

/// The image format a file's signature names.
fn image_format(head: &[u8]) -> Option<Format> {
    match head {
        [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1A, b'\n', ..] => Some(Format::Png),
        [0xFF, 0xD8, 0xFF, ..] => Some(Format::Jpg),
        [b'I', b'I', 0x2A, 0, ..] | [b'M', b'M', 0, 0x2A, ..] => Some(Format::Tiff),
        _ => None,
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Bytes read from each end of a file to tell its format.
const HEAD_BYTES: usize = 8 << 10;
const TAIL_BYTES: u64 = 256 << 10;

/// The format of an open file of `size` bytes named `path`, told by its
/// first and last bytes and its extension (see [`detect_format`]); `None`
/// when it is not a document kts handles.
pub fn sniff_file_format(
    file: &mut File,
    size: u64,
    path: &Path,
) -> std::io::Result<Option<Format>> {
    let extension = path.extension().and_then(|e| e.to_str());
    let mut head = Vec::with_capacity(HEAD_BYTES);
    file.by_ref()
        .take(HEAD_BYTES as u64)
        .read_to_end(&mut head)?;
    let mut tail = Vec::new();
    if size > HEAD_BYTES as u64 {
        file.seek(SeekFrom::Start(
            size.saturating_sub(TAIL_BYTES).max(HEAD_BYTES as u64),
        ))?;
        file.read_to_end(&mut tail)?;
    }
    Ok(detect_format(&head, &tail, extension))
}

/// Detects a file's format from its content, using the extension only to tell
/// plain-text formats apart (and to claim files whose content is unrecognisable,
/// so that the converter can report them).
///
/// `head` is the start of the file; `tail` its last bytes (where a zip keeps its
/// directory of entry names). Returns `None` for files kts does not handle.
pub fn detect_format(head: &[u8], tail: &[u8], extension: Option<&str>) -> Option<Format> {
    let by_extension = extension.and_then(Format::from_extension);
    let mut names = head.to_vec();
    names.extend_from_slice(tail);
    let magic = sniff(head, &names);
    if let Magic::Compound {
        outlook,
        word,
        powerpoint,
    } = magic
    {
        let document = legacy_document(word, powerpoint, outlook, by_extension);
        if document.is_some() {
            return document;
        }
    }
    match magic {
        Magic::Pdf => Some(Format::Pdf),
        Magic::Zip(Some(office)) => Some(office),
        // A legacy Office extension keeps its format: a workbook may embed a message.
        Magic::Compound { outlook: true, .. } if !by_extension.is_some_and(is_office) => {
            Some(Format::Msg)
        }
        Magic::Image(image) => Some(image),
        Magic::Zip(None) | Magic::Compound { .. } | Magic::Binary => {
            by_extension.filter(|&f| f.is_binary())
        }
        Magic::Text => match by_extension {
            // RTF and WebVTT announce themselves: plain text is the only other
            // extension such a file is commonly given.
            None | Some(Format::Txt) if sniff_announced(head).is_some() => sniff_announced(head),
            Some(
                Format::Md
                | Format::Txt
                | Format::Html
                | Format::Json
                | Format::Csv
                | Format::Eml
                | Format::Mbox
                | Format::Rtf
                | Format::Vtt
                | Format::Adoc
                | Format::Latex,
            ) => by_extension,
            // A binary format's extension on text content: the format the text
            // announces (RTF saved as .doc, an HTML table exported as .xls), else
            // the extension's, for the converter to report.
            Some(binary) => sniff_misnamed(head).or(Some(binary)),
            None => sniff_text(head),
        },
    }
}

/// The Word document or presentation a compound file is, by the main
/// streams its directory names, unless it is a file embedding one: a
/// workbook may embed either, an Outlook message too (as an attachment),
/// and a Word document a presentation. The extension tells which when the
/// directory names both.
fn legacy_document(
    word: bool,
    powerpoint: bool,
    outlook: bool,
    by_extension: Option<Format>,
) -> Option<Format> {
    let mut named = [(word, Format::Doc), (powerpoint, Format::Ppt)]
        .into_iter()
        .filter_map(|(present, format)| present.then_some(format));
    match by_extension {
        Some(format) if named.clone().any(|n| n == format) => Some(format),
        Some(Format::Xls) => None,
        _ if outlook => None,
        _ => named.next(),
    }
}

fn is_office(format: Format) -> bool {
    matches!(
        format,
        Format::Docx
            | Format::Doc
            | Format::Pptx
            | Format::Ppt
            | Format::Pdf
            | Format::Xlsx
            | Format::Xls
            | Format::Ods
            | Format::Odt
            | Format::Odp
            | Format::Epub
    )
}

/// RTF and WebVTT, by the opening every such file has.
fn sniff_announced(head: &[u8]) -> Option<Format> {
    let text = String::from_utf8_lossy(&head[..head.len().min(64)]);
    let start = text.trim_start_matches('\u{feff}').trim_start();
    if start.starts_with("{\\rtf") {
        Some(Format::Rtf)
    } else if start.starts_with("WEBVTT")
        && (start.len() == 6 || start[6..].starts_with(char::is_whitespace))
    {
        Some(Format::Vtt)
    } else {
        None
    }
}

/// Recognises HTML, LaTeX, mailboxes and e-mail messages by their opening,
/// for files without a telling extension.
fn sniff_text(head: &[u8]) -> Option<Format> {
    let text = String::from_utf8_lossy(&head[..head.len().min(4096)]);
    let lower = text.to_ascii_lowercase();
    if starts_like_html(&lower) {
        Some(Format::Html)
    } else if starts_like_latex(&text) {
        Some(Format::Latex)
    } else if text.starts_with("From ") && starts_with_mail_headers(text.split_once('\n')?.1) {
        Some(Format::Mbox)
    } else if starts_with_mail_headers(&text) {
        Some(Format::Eml)
    } else {
        None
    }
}

/// The tag lowercased `text` opens with after an XML declaration and
/// comments: `<!doctype html` gives `!doctype html`, `<table border=1>` `table`.
fn first_tag(lower: &str) -> Option<&str> {
    let mut rest = lower.trim_start_matches('\u{feff}').trim_start();
    while let Some(skipped) = rest
        .strip_prefix("<?xml")
        .and_then(|r| r.split_once("?>"))
        .or_else(|| rest.strip_prefix("<!--").and_then(|r| r.split_once("-->")))
        .map(|(_, after)| after.trim_start())
    {
        rest = skipped;
    }
    let tag = rest.strip_prefix('<')?;
    let end = tag
        .find(|c: char| c == '>' || c == '/' || c.is_whitespace() && !tag.starts_with("!doctype"))
        .unwrap_or(tag.len());
    Some(&tag[..end])
}

/// Whether lowercased `text` opens as a web page does.
fn starts_like_html(lower: &str) -> bool {
    first_tag(lower).is_some_and(|tag| tag == "html" || tag.starts_with("!doctype html"))
}

/// Whether lowercased `text` opens as a web page or a fragment of one: Word's
/// "Web Page" and the table a web application exports "to Excel" may begin
/// with the page's head or its table.
fn starts_like_html_export(lower: &str) -> bool {
    starts_like_html(lower)
        || first_tag(lower).is_some_and(|tag| ["head", "body", "meta", "table"].contains(&tag))
}

/// Recognises what text under a binary format's extension is, when its
/// opening says so clearly.
fn sniff_misnamed(head: &[u8]) -> Option<Format> {
    let lower = String::from_utf8_lossy(&head[..head.len().min(4096)]).to_ascii_lowercase();
    if starts_like_html_export(&lower) {
        Some(Format::Html)
    } else if starts_like_mhtml(&lower) {
        Some(Format::Eml)
    } else {
        sniff_announced(head).or_else(|| sniff_text(head))
    }
}

/// Whether lowercased `text` opens with the MIME headers of a web archive
/// (MHTML, as "Single File Web Page" saves it): a `multipart/related` content type.
fn starts_like_mhtml(lower: &str) -> bool {
    let text = lower.replace("\r\n", "\n");
    let headers = text
        .trim_start_matches('\u{feff}')
        .split("\n\n")
        .next()
        .unwrap_or_default();
    headers.starts_with(|c: char| c.is_ascii_alphabetic())
        && headers.contains("mime-version:")
        && headers
            .split("content-type:")
            .nth(1)
            .is_some_and(|value| value.trim_start().starts_with("multipart/related"))
}

/// What text content is, named for a message when its file's extension names
/// a binary format (`None` when the content is not text, or is the remains
/// of a PDF whose header is lost: a damaged file, not a misnamed one).
pub fn text_content_kind(head: &[u8]) -> Option<&'static str> {
    if sniff(head, b"") != Magic::Text {
        return None;
    }
    let text = String::from_utf8_lossy(&head[..head.len().min(4096)]);
    let has = |needle: &str| text.contains(needle);
    if has("endobj") || has("startxref") {
        None
    } else if has("urn:schemas-microsoft-com:office:spreadsheet") {
        Some("an Excel 2003 XML spreadsheet")
    } else if has("schemas.microsoft.com/office/word/2003/wordml") {
        Some("a Word 2003 XML document")
    } else if text
        .trim_start_matches('\u{feff}')
        .trim_start()
        .starts_with('<')
    {
        Some("XML or other markup")
    } else {
        Some("plain text")
    }
}

/// Whether `text` opens, after blank and comment lines, with what only a
/// LaTeX document opens with.
fn starts_like_latex(text: &str) -> bool {
    let first = text
        .trim_start_matches('\u{feff}')
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty() && !line.starts_with('%'));
    first.is_some_and(|line| {
        ["\\documentclass", "\\documentstyle", "\\begin{document}"]
            .iter()
            .any(|opening| line.starts_with(opening))
    })
}

/// Whether `text` opens with an RFC 822 header block naming at least two of
/// the fields every mail carries (one `Key: value` line is too common in
/// plain notes to count).
fn starts_with_mail_headers(text: &str) -> bool {
    const MAIL_FIELDS: [&str; 8] = [
        "from",
        "to",
        "subject",
        "date",
        "message-id",
        "received",
        "mime-version",
        "return-path",
    ];
    let mut fields = 0;
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        if line.is_empty() {
            break;
        }
        if line.starts_with([' ', '\t']) {
            continue; // a folded header line
        }
        let Some((name, _)) = line.split_once(':') else {
            return false;
        };
        let is_field_name =
            !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
        if !is_field_name {
            return false;
        }
        if MAIL_FIELDS.contains(&name.to_ascii_lowercase().as_str()) {
            fields += 1;
        }
    }
    fields >= 2
}

/// A spreadsheet cell's name, `B2` for (row 1, column 1), counted from 0.
pub fn cell_reference(row: u32, col: u32) -> String {
    let mut letters = Vec::new();
    let mut n = col + 1;
    while n > 0 {
        letters.push(b'A' + ((n - 1) % 26) as u8);
        n = (n - 1) / 26;
    }
    letters.reverse();
    format!("{}{}", String::from_utf8_lossy(&letters), row + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_wins_over_extension() {
        assert_eq!(
            detect_format(b"%PDF-1.7\n", b"", Some("docx")),
            Some(Format::Pdf)
        );
        let docx = b"PK\x03\x04....[Content_Types].xml....word/document.xml";
        assert_eq!(detect_format(docx, b"", Some("pdf")), Some(Format::Docx));
        let pptx_tail = b"PK\x01\x02ppt/presentation.xml";
        assert_eq!(
            detect_format(b"PK\x03\x04xx", pptx_tail, None),
            Some(Format::Pptx)
        );
    }

    #[test]
    fn text_formats_follow_the_extension() {
        assert_eq!(detect_format(b"# Title", b"", Some("md")), Some(Format::Md));
        assert_eq!(
            detect_format(b"{\"a\":1}", b"", Some("json")),
            Some(Format::Json)
        );
        assert_eq!(
            detect_format(b"<!DOCTYPE html><p>", b"", None),
            Some(Format::Html)
        );
        assert_eq!(detect_format(b"fn main() {}", b"", Some("rs")), None);
        assert_eq!(
            detect_format(b"a\tb\n1\t2\n", b"", Some("TSV")),
            Some(Format::Csv)
        );
        let shift_jis = b"\x96\xbc\x91\x4f,\x94\x4e\x97\xee\n";
        assert_eq!(
            detect_format(shift_jis, b"", Some("csv")),
            Some(Format::Csv)
        );
        assert_eq!(detect_format(&[0, 1, 2, 3, 0xff], b"", Some("csv")), None);
    }

    #[test]
    fn utf16_without_a_byte_order_mark_is_text_and_binary_with_nuls_is_not() {
        let text = "Name,City\nZoë,Köln\nJosé,São Paulo\n";
        let le: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let be: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
        assert_eq!(utf16_without_bom(&le), Some(Utf16::Le));
        assert_eq!(utf16_without_bom(&be), Some(Utf16::Be));
        assert_eq!(detect_format(&le, b"", Some("csv")), Some(Format::Csv));
        assert_eq!(detect_format(&be, b"", Some("txt")), Some(Format::Txt));
        assert_eq!(utf16_without_bom(text.as_bytes()), None);

        // 16-bit numbers: every high byte NUL, the low bytes no text.
        let samples: Vec<u8> = (0..512u16).flat_map(|n| (n % 251).to_le_bytes()).collect();
        // A record layout: small integers and NUL padding.
        let records: Vec<u8> = (0..64u32)
            .flat_map(|n| [n.to_le_bytes(), [b'A' + (n % 26) as u8, 0, 0, 0]].concat())
            .collect();
        // UTF-32 text: NUL in every other byte of its even positions too.
        let utf32: Vec<u8> = text
            .chars()
            .flat_map(|c| (c as u32).to_le_bytes())
            .collect();
        for binary in [&samples, &records, &utf32] {
            assert_eq!(utf16_without_bom(binary), None);
            assert_eq!(detect_format(binary, b"", Some("txt")), None);
        }
    }

    #[test]
    fn utf16_without_a_byte_order_mark_in_other_scripts_is_text() {
        for text in [
            "Техническое обслуживание\n\nОкно обслуживания базы данных каждое воскресенье с 2 до 4 часов.\n",
            "Συντήρηση\n\nΤο παράθυρο συντήρησης της βάσης δεδομένων είναι κάθε Κυριακή.\n",
            "保守作業\n\nデータベースの保守作業は毎週日曜日の午前二時から四時までです。\n",
        ] {
            let le: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
            let be: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
            assert_eq!(utf16_without_bom(&le), Some(Utf16::Le), "{text}");
            assert_eq!(utf16_without_bom(&be), Some(Utf16::Be), "{text}");
            assert_eq!(detect_format(&le, b"", Some("txt")), Some(Format::Txt));
        }
        // Pairs of a NUL and any byte but NUL, as in a table of 16-bit numbers:
        // a few NUL high bytes, and characters of every script.
        let numbers: Vec<u8> = (0..512u32)
            .flat_map(|n| match n % 16 {
                0 => [b' ', 0],
                _ => [(n * 37 % 255 + 1) as u8, (n * 101 % 255 + 1) as u8],
            })
            .collect();
        assert_eq!(utf16_without_bom(&numbers), None);
    }

    #[test]
    fn binary_junk_is_not_claimed_without_a_document_extension() {
        assert_eq!(detect_format(&[0, 1, 2, 3, 0xff], b"", Some("bin")), None);
        assert_eq!(detect_format(&[0, 1, 2, 3, 0xff], b"", Some("md")), None);
        assert_eq!(
            detect_format(&[0, 1, 2, 3, 0xff], b"", Some("pdf")),
            Some(Format::Pdf)
        );
        let ole = [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1, 0];
        assert_eq!(detect_format(&ole, b"", Some("docx")), Some(Format::Docx));
        assert_eq!(detect_format(&ole, b"", Some("ppt")), Some(Format::Ppt));
        assert_eq!(detect_format(&ole, b"", Some("xls")), Some(Format::Xls));
        let xlsx_tail = b"PK\x01\x02xl/workbook.xml";
        assert_eq!(
            detect_format(b"PK\x03\x04xx", xlsx_tail, Some("zip")),
            Some(Format::Xlsx)
        );
        let ods = b"PK\x03\x04........mimetypeapplication/vnd.oasis.opendocument.spreadsheetPK";
        assert_eq!(detect_format(ods, b"", None), Some(Format::Ods));
    }

    #[test]
    fn mail_is_told_by_its_headers_and_outlook_messages_by_their_streams() {
        let eml = b"Received: by mx\r\nFrom: a@example.com\r\nSubject: Hi\r\n\r\nBody";
        assert_eq!(detect_format(eml, b"", None), Some(Format::Eml));
        assert_eq!(detect_format(eml, b"", Some("eml")), Some(Format::Eml));
        assert_eq!(detect_format(eml, b"", Some("txt")), Some(Format::Txt));
        let mbox = b"From a@example.com Thu Jan  1 00:00:00 2026\nFrom: a@example.com\nTo: b@example.com\n\nHi\n";
        assert_eq!(detect_format(mbox, b"", None), Some(Format::Mbox));
        assert_eq!(
            detect_format(b"Note: buy milk\nand bread", b"", None),
            None,
            "one header-like line is not a mail"
        );
        assert_eq!(detect_format(b"From here on\nwe walk", b"", None), None);

        let ole = [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1, 0];
        let mut msg = ole.to_vec();
        msg.extend_from_slice(OUTLOOK_STREAM_PREFIX);
        assert_eq!(detect_format(&msg, b"", None), Some(Format::Msg));
        assert_eq!(detect_format(&msg, b"", Some("xls")), Some(Format::Xls));
        assert_eq!(detect_format(&ole, b"", Some("msg")), Some(Format::Msg));
        assert_eq!(
            detect_format(&ole, b"", None),
            None,
            "a compound file without property streams is not a message"
        );
    }

    #[test]
    fn word_documents_by_their_stream_content_first() {
        let mut doc = vec![0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1, 0];
        doc.extend_from_slice(WORD_STREAM);
        assert_eq!(detect_format(&doc, b"", None), Some(Format::Doc));
        assert_eq!(detect_format(&doc, b"", Some("docx")), Some(Format::Doc));
        assert_eq!(detect_format(&doc, b"", Some("txt")), Some(Format::Doc));
        // A workbook or a message may embed a Word document.
        assert_eq!(detect_format(&doc, b"", Some("xls")), Some(Format::Xls));
        let mut msg = doc.clone();
        msg.extend_from_slice(OUTLOOK_STREAM_PREFIX);
        assert_eq!(detect_format(&msg, b"", None), Some(Format::Msg));
        assert_eq!(detect_format(&msg, b"", Some("doc")), Some(Format::Doc));
        // Its directory out of reach: the extension claims it.
        let ole = [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1, 0];
        assert_eq!(detect_format(&ole, b"", Some("DOC")), Some(Format::Doc));
        assert_eq!(Format::from_extension("dot"), Some(Format::Doc));
        assert_eq!(Format::Doc.as_str(), "doc");
    }

    #[test]
    fn presentations_by_their_stream_and_the_extension_when_a_document_embeds_one() {
        let ole = [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1, 0];
        let ppt = [&ole[..], POWERPOINT_STREAM].concat();
        assert_eq!(detect_format(&ppt, b"", None), Some(Format::Ppt));
        assert_eq!(detect_format(&ppt, b"", Some("pptx")), Some(Format::Ppt));
        assert_eq!(detect_format(&ppt, b"", Some("xls")), Some(Format::Xls));
        // A Word document embedding a presentation, and the reverse by name.
        let both = [&ppt[..], WORD_STREAM].concat();
        assert_eq!(detect_format(&both, b"", None), Some(Format::Doc));
        assert_eq!(detect_format(&both, b"", Some("doc")), Some(Format::Doc));
        assert_eq!(detect_format(&both, b"", Some("pps")), Some(Format::Ppt));
        // A Word document named .ppt is still one.
        let doc = [&ole[..], WORD_STREAM].concat();
        assert_eq!(detect_format(&doc, b"", Some("ppt")), Some(Format::Doc));
        assert_eq!(detect_format(&ole, b"", Some("POT")), Some(Format::Ppt));
        assert_eq!(Format::Ppt.as_str(), "ppt");
    }

    #[test]
    fn opendocument_and_epub_by_their_mimetype_entry() {
        let package = |mimetype: &str| format!("PK\x03\x04......mimetype{mimetype}PK\x03\x04");
        let odt = package("application/vnd.oasis.opendocument.text");
        assert_eq!(
            detect_format(odt.as_bytes(), b"", Some("zip")),
            Some(Format::Odt)
        );
        let odp = package("application/vnd.oasis.opendocument.presentation");
        assert_eq!(detect_format(odp.as_bytes(), b"", None), Some(Format::Odp));
        let epub = package("application/epub+zip");
        assert_eq!(
            detect_format(epub.as_bytes(), b"", Some("odt")),
            Some(Format::Epub)
        );
        // A zip without a telling entry is claimed only by its extension.
        assert_eq!(
            detect_format(b"PK\x03\x04xx", b"", Some("epub")),
            Some(Format::Epub)
        );
        assert_eq!(detect_format(b"PK\x03\x04xx", b"", Some("zip")), None);
    }

    #[test]
    fn rtf_and_webvtt_by_their_opening() {
        let rtf = b"{\\rtf1\\ansi Hello}";
        assert_eq!(detect_format(rtf, b"", None), Some(Format::Rtf));
        assert_eq!(detect_format(rtf, b"", Some("txt")), Some(Format::Rtf));
        assert_eq!(detect_format(rtf, b"", Some("md")), Some(Format::Md));
        let vtt = "\u{feff}WEBVTT\n\n00:01.000 --> 00:02.000\nHi\n".as_bytes();
        assert_eq!(detect_format(vtt, b"", None), Some(Format::Vtt));
        assert_eq!(detect_format(b"WEBVTTX", b"", None), None);
        assert_eq!(
            detect_format(b"= Title", b"", Some("adoc")),
            Some(Format::Adoc)
        );
        assert_eq!(detect_format(b"= Title", b"", Some("asc")), None);
    }

    #[test]
    fn text_under_a_binary_extension_is_what_it_opens_as() {
        let rtf = b"{\\rtf1\\ansi{\\pard Governing law.\\par}}";
        assert_eq!(detect_format(rtf, b"", Some("doc")), Some(Format::Rtf));
        let web_page = b"\xEF\xBB\xBF\r\n  <!DOCTYPE html><html><body><p>Hi</p></body></html>";
        assert_eq!(
            detect_format(web_page, b"", Some("pdf")),
            Some(Format::Html)
        );
        let word_web_page = b"<html xmlns:o=\"urn:schemas-microsoft-com:office:office\"><head><meta name=ProgId content=Word.Document></head>";
        assert_eq!(
            detect_format(word_web_page, b"", Some("doc")),
            Some(Format::Html)
        );
        let excel_export = b"<?xml version=\"1.0\"?>\n<!-- exported -->\n<table border=1><tr><td>Hose kit</td></tr></table>";
        assert_eq!(
            detect_format(excel_export, b"", Some("xls")),
            Some(Format::Html)
        );
        let mhtml =
            b"MIME-Version: 1.0\r\nContent-Type: multipart/related; boundary=\"b\"\r\n\r\n--b\r\n";
        assert_eq!(detect_format(mhtml, b"", Some("doc")), Some(Format::Eml));
        // Other text keeps the extension's claim, for the converter to report.
        let note = b"Plain text saved as docx\n";
        assert_eq!(detect_format(note, b"", Some("docx")), Some(Format::Docx));
        assert_eq!(text_content_kind(note), Some("plain text"));
        let spreadsheet_ml = b"<?xml version=\"1.0\"?><Workbook xmlns=\"urn:schemas-microsoft-com:office:spreadsheet\">";
        assert_eq!(
            detect_format(spreadsheet_ml, b"", Some("xls")),
            Some(Format::Xls)
        );
        assert_eq!(
            text_content_kind(spreadsheet_ml),
            Some("an Excel 2003 XML spreadsheet")
        );
        // A PDF's remains without its header, a compound file, binary junk: damaged, not text.
        assert_eq!(
            text_content_kind(b"1 0 obj\n<< /Type /Catalog >>\nendobj\n"),
            None
        );
        assert_eq!(
            text_content_kind(&[0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1, 0]),
            None
        );
        assert_eq!(text_content_kind(&[0, 1, 2, 3, 0xff]), None);
        // A text format's extension still decides.
        assert_eq!(detect_format(web_page, b"", Some("md")), Some(Format::Md));
        assert_eq!(
            detect_format(b"<table><tr><td>1</td></tr></table>", b"", Some("xml")),
            None
        );
    }

    #[test]
    fn latex_by_its_extension_or_its_opening() {
        for extension in ["tex", "latex", "LTX"] {
            assert_eq!(
                detect_format(b"Some text", b"", Some(extension)),
                Some(Format::Latex)
            );
        }
        let paper = b"% main file\n\n\\documentclass[11pt]{article}\n\\begin{document}\n";
        assert_eq!(detect_format(paper, b"", None), Some(Format::Latex));
        assert_eq!(
            detect_format(b"\\begin{document}\nHi", b"", None),
            Some(Format::Latex)
        );
        assert_eq!(detect_format(paper, b"", Some("md")), Some(Format::Md));
        assert_eq!(detect_format(b"Use \\documentclass first", b"", None), None);
    }

    #[test]
    fn images_are_known_by_their_signature() {
        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
        assert_eq!(detect_format(png, b"", Some("jpg")), Some(Format::Png));
        assert_eq!(detect_format(png, b"", None), Some(Format::Png));
        assert_eq!(
            detect_format(&[0xFF, 0xD8, 0xFF, 0xE0, 0], b"", None),
            Some(Format::Jpg)
        );
        assert_eq!(
            detect_format(b"II*\0\x08\0\0\0", b"", Some("bin")),
            Some(Format::Tiff)
        );
        assert_eq!(
            detect_format(b"MM\0*\0\0\0\x08", b"", None),
            Some(Format::Tiff)
        );
        // A damaged image keeps its extension's claim, so the converter reports it.
        assert_eq!(
            detect_format(&[0, 1, 2], b"", Some("PNG")),
            Some(Format::Png)
        );
        assert_eq!(detect_format(&[0, 1, 2], b"", Some("gif")), None);
    }
}
