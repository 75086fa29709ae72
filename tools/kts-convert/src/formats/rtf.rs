//! RTF: a control-word reader that keeps the text and drops the rest.
//!
//! Groups are tracked on an explicit stack (no recursion, so hostile
//! nesting costs memory in proportion to the file, never the call stack).
//! Destinations that hold no document text — `{\*...}`, font, colour and
//! style tables, pictures, objects, headers and footers, field
//! instructions — are skipped; `\info` gives the title, author and subject.
//! `\'hh` bytes are decoded in the document's code page (`\ansicpgN`), `\uN`
//! is a UTF-16 code unit followed by `\ucN` fallback characters that are
//! skipped. `\par` ends a paragraph, `\outlinelevelN` makes it a heading,
//! `\cell` and `\row` build Markdown tables.

use encoding_rs::Encoding;
use kts_record::ErrorCode;
use serde_json::{Map, Value};

use super::{ConvertError, Converted, table};

/// Destinations whose content is never document text.
const SKIPPED: &[&str] = &[
    "fonttbl",
    "colortbl",
    "stylesheet",
    "listtable",
    "listoverridetable",
    "revtbl",
    "rsidtbl",
    "pict",
    "object",
    "objdata",
    "themedata",
    "colorschememapping",
    "datastore",
    "latentstyles",
    "xmlnstbl",
    "generator",
    "fldinst",
    "header",
    "headerl",
    "headerr",
    "headerf",
    "footer",
    "footerl",
    "footerr",
    "footerf",
    "filetbl",
    "pgdsctbl",
    "mmathPr",
    "bkmkstart",
    "bkmkend",
];

/// `\info` fields kept as properties: (control word, property).
const INFO_FIELDS: [(&str, &str); 5] = [
    ("title", "title"),
    ("author", "author"),
    ("subject", "subject"),
    ("keywords", "keywords"),
    ("operator", "last_modified_by"),
];

/// Where the text of the current group goes.
#[derive(Clone, Copy, PartialEq)]
enum Sink {
    Body,
    /// A `\footnote` group: its text is written at the end as `[^N]: …`.
    Footnote,
    Skip,
    /// An `\info` field, by its index in [`INFO_FIELDS`].
    Info(usize),
    /// Inside `\info` but not in a field kept.
    InfoOther,
}

#[derive(Clone, Copy)]
struct GroupState {
    sink: Sink,
    /// Fallback characters to skip after `\uN`.
    unicode_skip: usize,
}

struct Reader {
    encoding: &'static Encoding,
    /// Bytes of the current run, decoded when the run ends.
    pending: Vec<u8>,
    paragraph: String,
    heading: Option<usize>,
    /// Whether the paragraph is in a table (`\intbl`, until `\pard`).
    in_table: bool,
    /// Whether a row is open (`\trowd` to `\row`): its text is in the table
    /// whether or not its paragraphs say `\intbl`.
    row_open: bool,
    row: Vec<String>,
    rows: Vec<Vec<String>>,
    blocks: Vec<String>,
    info: Vec<String>,
    /// The footnote being read, and the texts of those read.
    footnote: String,
    footnotes: Vec<String>,
    /// The first half of a surrogate pair, waiting for the second.
    high_surrogate: Option<u32>,
}

impl Reader {
    fn new() -> Self {
        Self {
            encoding: encoding_rs::WINDOWS_1252,
            pending: Vec::new(),
            paragraph: String::new(),
            heading: None,
            in_table: false,
            row_open: false,
            row: Vec::new(),
            rows: Vec::new(),
            blocks: Vec::new(),
            info: vec![String::new(); INFO_FIELDS.len()],
            footnote: String::new(),
            footnotes: Vec::new(),
            high_surrogate: None,
        }
    }

    fn is_in_table(&self) -> bool {
        self.in_table || self.row_open
    }

    fn decode_pending(&mut self) -> String {
        if self.pending.is_empty() {
            return String::new();
        }
        let text = self
            .encoding
            .decode_without_bom_handling(&self.pending)
            .0
            .into_owned();
        self.pending.clear();
        text
    }

    fn text(&mut self, sink: Sink, text: &str) {
        match sink {
            Sink::Body => {
                if !self.is_in_table() && !text.trim().is_empty() && !self.rows.is_empty() {
                    self.flush_table();
                }
                self.paragraph.push_str(text);
            }
            Sink::Footnote => self.footnote.push_str(text),
            Sink::Info(field) => self.info[field].push_str(text),
            Sink::Skip | Sink::InfoOther => {}
        }
    }

    /// Ends a `\footnote` group: its mark goes where the group stood, in the
    /// text of the group around it.
    fn end_footnote(&mut self, outer: Sink) {
        self.flush_bytes(Sink::Footnote);
        let text = std::mem::take(&mut self.footnote);
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if text.is_empty() {
            return;
        }
        self.footnotes.push(text);
        self.text(outer, &format!("[^{}]", self.footnotes.len()));
    }

    fn byte(&mut self, sink: Sink, byte: u8) {
        if sink != Sink::Skip && sink != Sink::InfoOther {
            self.pending.push(byte);
        }
    }

    fn flush_bytes(&mut self, sink: Sink) {
        let text = self.decode_pending();
        self.text(sink, &text);
    }

    fn end_paragraph(&mut self) {
        let text = self
            .paragraph
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("\n");
        self.paragraph.clear();
        if text.is_empty() {
            return;
        }
        if !self.is_in_table() && !self.rows.is_empty() {
            self.flush_table();
        }
        self.blocks.push(match self.heading {
            Some(level) => format!("{} {}", "#".repeat(level), text.replace('\n', " ")),
            None => text,
        });
    }

    fn end_cell(&mut self) {
        let text = self
            .paragraph
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        self.paragraph.clear();
        self.row.push(text);
    }

    fn end_row(&mut self) {
        if !self.paragraph.trim().is_empty() {
            self.end_cell();
        }
        let row = std::mem::take(&mut self.row);
        if row.iter().any(|c| !c.is_empty()) {
            self.rows.push(row);
        }
    }

    fn flush_table(&mut self) {
        let rows = std::mem::take(&mut self.rows);
        let table = table::markdown_table(&rows);
        if !table.is_empty() {
            self.blocks.push(table.trim_end().to_owned());
        }
    }

    fn control(&mut self, state: &mut GroupState, word: &str, parameter: Option<i32>) {
        let sink = state.sink;
        let symbol = |s: &str| Some(s.to_owned());
        let text = match word {
            "par" | "sect" | "page" => {
                self.flush_bytes(sink);
                match sink {
                    Sink::Body if self.is_in_table() => self.paragraph.push(' '),
                    Sink::Body => self.end_paragraph(),
                    Sink::Footnote => self.footnote.push(' '),
                    _ => {}
                }
                None
            }
            "pard" => {
                self.flush_bytes(sink);
                if sink == Sink::Body {
                    self.heading = None;
                    self.in_table = false;
                }
                None
            }
            "intbl" => {
                if sink == Sink::Body {
                    self.in_table = true;
                }
                None
            }
            "trowd" => {
                if sink == Sink::Body {
                    self.row_open = true;
                }
                None
            }
            "outlinelevel" => {
                if sink == Sink::Body {
                    self.heading = parameter
                        .and_then(|p| usize::try_from(p).ok())
                        .filter(|p| *p < 9)
                        .map(|p| (p + 1).min(6));
                }
                None
            }
            "cell" | "nestcell" => {
                self.flush_bytes(sink);
                if sink == Sink::Body {
                    self.end_cell();
                }
                None
            }
            "row" | "nestrow" => {
                self.flush_bytes(sink);
                if sink == Sink::Body {
                    self.end_row();
                    if word == "row" {
                        self.row_open = false;
                    }
                }
                None
            }
            "ansicpg" => {
                if let Some(encoding) = parameter.and_then(code_page) {
                    self.encoding = encoding;
                }
                None
            }
            "uc" => {
                state.unicode_skip = parameter
                    .and_then(|p| usize::try_from(p).ok())
                    .unwrap_or(1)
                    .min(8);
                None
            }
            "line" => symbol("\n"),
            "tab" => symbol(" "),
            "emdash" => symbol("\u{2014}"),
            "endash" => symbol("\u{2013}"),
            "bullet" => symbol("\u{2022}"),
            "lquote" => symbol("\u{2018}"),
            "rquote" => symbol("\u{2019}"),
            "ldblquote" => symbol("\u{201c}"),
            "rdblquote" => symbol("\u{201d}"),
            "emspace" | "enspace" | "qmspace" => symbol(" "),
            _ => None,
        };
        if let Some(text) = text {
            self.flush_bytes(sink);
            self.text(sink, &text);
        }
    }

    /// Appends a UTF-16 code unit (`\uN`); a surrogate pair arrives as two.
    fn utf16(&mut self, sink: Sink, unit: u32) {
        let c = match (self.high_surrogate.take(), unit) {
            (_, 0xD800..=0xDBFF) => {
                self.high_surrogate = Some(unit);
                return;
            }
            (Some(high), 0xDC00..=0xDFFF) => {
                char::from_u32(0x10000 + ((high - 0xD800) << 10) + (unit - 0xDC00))
            }
            _ => char::from_u32(unit),
        };
        self.text(sink, &c.unwrap_or('\u{fffd}').to_string());
    }

    /// The Markdown, empty when there is no text, and the `\info` fields.
    fn finish(mut self, sink: Sink) -> (String, Vec<String>) {
        match sink {
            Sink::Footnote => self.end_footnote(Sink::Body),
            _ => self.flush_bytes(sink),
        }
        self.in_table = false;
        self.row_open = false;
        if !self.row.is_empty() || !self.paragraph.trim().is_empty() && !self.rows.is_empty() {
            self.end_row();
        }
        self.end_paragraph();
        if !self.rows.is_empty() {
            self.flush_table();
        }
        let numbered = self
            .footnotes
            .into_iter()
            .enumerate()
            .map(|(i, text)| (i + 1, text));
        let markdown = super::notes::placed(&self.blocks.join("\n\n"), numbered);
        (markdown, self.info)
    }
}

pub fn convert(bytes: &[u8]) -> Result<Converted, ConvertError> {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    let body = &bytes[start..];
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    if body.is_empty() {
        return Err(ConvertError::new(ErrorCode::Empty, "the file is empty"));
    }
    if !body.starts_with(b"{\\rtf") {
        return Err(ConvertError::corrupt(
            "not an RTF document: it does not start with {\\rtf",
        ));
    }
    let (markdown, info, unbalanced) = read(body);
    let mut properties = Map::new();
    let mut title = None;
    for ((_, key), value) in INFO_FIELDS.iter().zip(info) {
        let value = value.split_whitespace().collect::<Vec<_>>().join(" ");
        if value.is_empty() {
            continue;
        }
        if *key == "title" {
            title = Some(value);
        } else {
            properties.insert((*key).into(), Value::String(value));
        }
    }
    if markdown.is_empty() {
        return Err(ConvertError::new(
            ErrorCode::Empty,
            "the RTF document holds no text",
        ));
    }
    if unbalanced {
        properties.insert(
            "warnings".into(),
            Value::from(vec![
                "the RTF groups are not balanced: the file may be truncated".to_owned(),
            ]),
        );
    }
    Ok(Converted {
        markdown: markdown + "\n",
        title,
        properties,
    })
}

/// The Markdown, the `\info` fields, and whether the braces were unbalanced.
fn read(rtf: &[u8]) -> (String, Vec<String>, bool) {
    let mut reader = Reader::new();
    let mut stack: Vec<GroupState> = Vec::new();
    let mut state = GroupState {
        sink: Sink::Body,
        unicode_skip: 1,
    };
    // Fallback characters still to skip after a `\uN`.
    let mut skip_fallback = 0usize;
    // Whether the group just opened may still name its destination.
    let mut group_start = false;
    let mut unbalanced = false;
    let mut i = 0;
    while i < rtf.len() {
        let byte = rtf[i];
        match byte {
            b'{' => {
                reader.flush_bytes(state.sink);
                stack.push(state);
                group_start = true;
                skip_fallback = 0;
                i += 1;
                continue;
            }
            b'}' => {
                reader.flush_bytes(state.sink);
                match stack.pop() {
                    Some(outer) => {
                        if state.sink == Sink::Footnote && outer.sink != Sink::Footnote {
                            reader.end_footnote(outer.sink);
                        }
                        state = outer;
                    }
                    None => unbalanced = true,
                }
                skip_fallback = 0;
                i += 1;
            }
            b'\\' => {
                let (token, next) = control_token(rtf, i);
                i = next;
                // `\*` keeps the group open to its destination word.
                let ignorable = matches!(token, Token::Ignorable);
                match token {
                    Token::Word(word, parameter) => {
                        let word = word.as_str();
                        if word == "bin" {
                            let count =
                                parameter.and_then(|p| usize::try_from(p).ok()).unwrap_or(0);
                            i = i.saturating_add(count).min(rtf.len());
                        } else if skip_fallback > 0 && word != "u" {
                            skip_fallback -= 1;
                        } else if group_start && SKIPPED.contains(&word) {
                            state.sink = Sink::Skip;
                        } else if group_start && word == "info" {
                            state.sink = Sink::InfoOther;
                        } else if group_start && word == "footnote" && state.sink == Sink::Body {
                            state.sink = Sink::Footnote;
                        } else if let (true, Sink::InfoOther) = (group_start, state.sink)
                            && let Some(field) = INFO_FIELDS.iter().position(|(w, _)| *w == word)
                        {
                            state.sink = Sink::Info(field);
                        } else if state.sink == Sink::InfoOther {
                            // Dates and counts of \info hold no text.
                        } else if word == "u" {
                            reader.flush_bytes(state.sink);
                            if let Some(unit) = parameter {
                                let unit = if unit < 0 { unit + 65_536 } else { unit };
                                reader.utf16(state.sink, unit.unsigned_abs());
                            }
                            skip_fallback = state.unicode_skip;
                        } else {
                            reader.control(&mut state, word, parameter);
                        }
                    }
                    Token::Hex(value) => {
                        if skip_fallback > 0 {
                            skip_fallback -= 1;
                        } else {
                            reader.byte(state.sink, value);
                        }
                    }
                    Token::Ignorable => {
                        if group_start {
                            state.sink = Sink::Skip;
                        }
                    }
                    Token::Symbol(text) => {
                        reader.flush_bytes(state.sink);
                        reader.text(state.sink, text);
                    }
                    Token::Paragraph => reader.control(&mut state, "par", None),
                    Token::Nothing => {}
                }
                group_start = group_start && ignorable;
                continue;
            }
            b'\r' | b'\n' => i += 1,
            _ => {
                if skip_fallback > 0 {
                    skip_fallback -= 1;
                } else {
                    reader.byte(state.sink, byte);
                }
                i += 1;
            }
        }
        group_start = false;
    }
    let unbalanced = unbalanced || !stack.is_empty();
    let (markdown, info) = reader.finish(state.sink);
    (markdown, info, unbalanced)
}

enum Token {
    Word(String, Option<i32>),
    Hex(u8),
    Ignorable,
    Symbol(&'static str),
    Paragraph,
    Nothing,
}

/// The control at `at` (a backslash) and the index after it.
fn control_token(rtf: &[u8], at: usize) -> (Token, usize) {
    let Some(&first) = rtf.get(at + 1) else {
        return (Token::Nothing, rtf.len());
    };
    if first.is_ascii_alphabetic() {
        let mut end = at + 1;
        while end < rtf.len() && end - at <= 32 && rtf[end].is_ascii_alphabetic() {
            end += 1;
        }
        let word = String::from_utf8_lossy(&rtf[at + 1..end]).into_owned();
        let digits_start = end;
        if end < rtf.len() && rtf[end] == b'-' {
            end += 1;
        }
        while end < rtf.len() && end - digits_start < 10 && rtf[end].is_ascii_digit() {
            end += 1;
        }
        let parameter = std::str::from_utf8(&rtf[digits_start..end])
            .ok()
            .and_then(|p| p.parse::<i32>().ok());
        // One space ends a control word and belongs to it.
        if end < rtf.len() && rtf[end] == b' ' {
            end += 1;
        }
        return (Token::Word(word, parameter), end);
    }
    let token = match first {
        b'\'' => {
            let value = rtf
                .get(at + 2..at + 4)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            return match value {
                Some(value) => (Token::Hex(value), at + 4),
                None => (Token::Nothing, (at + 2).min(rtf.len())),
            };
        }
        b'*' => Token::Ignorable,
        b'\\' => Token::Symbol("\\"),
        b'{' => Token::Symbol("{"),
        b'}' => Token::Symbol("}"),
        b'~' => Token::Symbol("\u{a0}"),
        b'_' => Token::Symbol("-"),
        b'\r' | b'\n' => Token::Paragraph,
        _ => Token::Nothing,
    };
    (token, at + 2)
}

/// The encoding of a Windows code page number.
pub(crate) fn code_page(number: i32) -> Option<&'static Encoding> {
    let label = match number {
        65001 => "utf-8".to_owned(),
        932 => "shift_jis".to_owned(),
        936 => "gbk".to_owned(),
        949 => "euc-kr".to_owned(),
        950 => "big5".to_owned(),
        10000 => "macintosh".to_owned(),
        n => format!("windows-{n}"),
    };
    Encoding::for_label(label.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOCUMENT: &str = r#"{\rtf1\ansi\ansicpg1252\deff0
{\fonttbl{\f0\fswiss Helvetica;}{\f1 Courier;}}
{\colortbl;\red0\green0\blue0;}
{\stylesheet{\s1 heading 1;}}
{\info{\title Leave policy}{\author Ann Lee}{\creatim\yr2024\mo3\dy1}}
{\*\generator Writer 1.0;}
\pard\outlinelevel0\b Leave\b0\par
\pard Staff get 25 days\'97paid in full.\par
Caf\'e9 \u8364?5 a day \u-10179?\u-8704? ok.\line Next line\tab end.\par
{\pict\pngblip 89504e470d0a}
{\field{\*\fldinst HYPERLINK "https://x.test"}{\fldrslt the portal}}\par
\trowd\cellx1000\cellx2000
\pard\intbl Days\cell Pay\cell\row
\pard\intbl 1\{3\}\cell full\cell\row
\pard After the table.\par
}"#;

    #[test]
    fn text_headings_tables_and_info() {
        let converted = convert(DOCUMENT.as_bytes()).unwrap();
        assert_eq!(
            converted.markdown,
            "# Leave\n\n\
             Staff get 25 days\u{2014}paid in full.\n\n\
             Caf\u{e9} \u{20ac}5 a day \u{1f600} ok.\nNext line end.\n\n\
             the portal\n\n\
             | Days | Pay |\n| --- | --- |\n| 1{3} | full |\n\n\
             After the table.\n"
        );
        assert_eq!(converted.title.as_deref(), Some("Leave policy"));
        assert_eq!(converted.properties["author"], "Ann Lee");
        assert!(converted.properties.get("warnings").is_none());
    }

    #[test]
    fn rows_without_intbl_form_one_table() {
        let rtf = br"{\rtf1\ansi\deff0
{\pard Parts list:\par}
\trowd\cellx2000\cellx4000 Part\cell Qty\cell\row
\trowd\cellx2000\cellx4000 Valve\cell 2\cell\row
{\trowd\cellx2000\cellx4000 Gasket\cell 5\cell\row}
{\pard End.\par}
}";
        assert_eq!(
            convert(rtf).unwrap().markdown,
            "Parts list:\n\n| Part | Qty |\n| --- | --- |\n| Valve | 2 |\n| Gasket | 5 |\n\nEnd.\n"
        );
    }

    #[test]
    fn footnotes_are_marked_in_the_text_and_written_at_the_end_of_their_section() {
        let rtf = br"{\rtf1\ansi Leave is 25 days{\super\chftn}{\footnote\pard\plain{\super\chftn} Pro rata in the first year.\par Ask HR.} a year.\par
\pard\outlinelevel1 Carry-over\par
\pard Carry-over is allowed{\super\chftn}{\footnote {\super\chftn} Up to 5 days.}.\par}";
        assert_eq!(
            convert(rtf).unwrap().markdown,
            "Leave is 25 days[^1] a year.\n\n[^1]: Pro rata in the first year. Ask HR.\n\n\
             ## Carry-over\n\nCarry-over is allowed[^2].\n\n[^2]: Up to 5 days.\n"
        );
        let cut = br"{\rtf1\ansi Text{\footnote Cut short";
        assert!(
            convert(cut)
                .unwrap()
                .markdown
                .contains("Text[^1]\n\n[^1]: Cut short")
        );
    }

    #[test]
    fn code_pages_decode_escaped_bytes() {
        let cyrillic = br"{\rtf1\ansi\ansicpg1251 \'cf\'f0\'e8\'e2\'e5\'f2\par}";
        assert_eq!(
            convert(cyrillic).unwrap().markdown,
            "\u{41f}\u{440}\u{438}\u{432}\u{435}\u{442}\n"
        );
        let japanese = br"{\rtf1\ansi\ansicpg932 \'93\'fa\'96\'7b\par}";
        assert_eq!(convert(japanese).unwrap().markdown, "\u{65e5}\u{672c}\n");
    }

    #[test]
    fn damaged_and_hostile_input_gives_errors_or_warnings_never_a_panic() {
        let whole = DOCUMENT.as_bytes();
        for cut in 0..whole.len() {
            let _ = convert(&whole[..cut]);
        }
        let truncated = convert(&whole[..whole.len() / 2]).unwrap();
        let warnings = truncated.properties["warnings"].as_array().unwrap();
        assert!(warnings[0].as_str().unwrap().contains("truncated"));

        let e = convert(b"Just text").unwrap_err();
        assert_eq!(e.code, ErrorCode::Corrupt);
        assert!(e.message.contains("{\\rtf"), "{}", e.message);
        assert_eq!(convert(b"  \n").unwrap_err().code, ErrorCode::Empty);
        let e = convert(br"{\rtf1{\fonttbl{\f0 Arial;}}}").unwrap_err();
        assert_eq!(e.code, ErrorCode::Empty);

        // Deep nesting, a \bin longer than the file, huge parameters, a lone
        // surrogate, a backslash at the very end.
        let deep = format!(
            "{{\\rtf1 {}deep{}}}",
            "{".repeat(200_000),
            "}".repeat(200_000)
        );
        assert_eq!(convert(deep.as_bytes()).unwrap().markdown, "deep\n");
        let odd = convert(br"{\rtf1 a\bin99999999 b}").unwrap();
        assert_eq!(odd.markdown, "a\n");
        assert!(odd.properties.contains_key("warnings"));
        let odd = br"{\rtf1 x\uc99999999999\u99999999999 \u-55296 y\'zz\";
        assert!(convert(odd).is_ok());
    }
}
