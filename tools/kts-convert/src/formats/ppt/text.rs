//! A block of text: a `TextHeaderAtom` (its type), its characters (UTF-16
//! or 8-bit) and its paragraph styles (`StyleTextPropAtom`: indent level and
//! bullet of each run of paragraphs).

use super::super::doc::{u16_at, u32_at};
use super::records::{self, Record};

/// `TextHeaderAtom` types ([MS-PPT] 2.13.33).
const TITLE: u32 = 0;
const BODY: u32 = 1;
const CENTER_TITLE: u32 = 6;
const HALF_BODY: u32 = 7;
const QUARTER_BODY: u32 = 8;

/// What a field's character becomes: a control character, left out of the text.
const FIELD_MARK: u16 = 0x01;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Paragraph {
    pub text: String,
    pub level: usize,
    /// Whether it shows a bullet; `None` when its style does not say.
    pub bullet: Option<bool>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TextBlock {
    pub kind: u32,
    pub paragraphs: Vec<Paragraph>,
}

impl TextBlock {
    pub fn is_title(&self) -> bool {
        matches!(self.kind, TITLE | CENTER_TITLE)
    }

    /// Body placeholders show bullets unless a paragraph says otherwise.
    pub fn bulleted_by_default(&self) -> bool {
        matches!(self.kind, BODY | HALF_BODY | QUARTER_BODY)
    }

    /// The block's text on one line.
    pub fn one_line(&self) -> String {
        let texts: Vec<&str> = self.paragraphs.iter().map(|p| p.text.as_str()).collect();
        crate::formats::one_line(&texts.join(" "))
    }
}

/// The text blocks in a run of records (a `SlideListWithText` slide's, or a
/// text box's): each header opens one, its atoms follow.
pub fn blocks(records: &[Record]) -> Vec<TextBlock> {
    let mut blocks = Vec::new();
    let mut current: Option<(u32, Vec<u16>)> = None;
    let mut styles: &[u8] = &[];
    let mut finish = |current: &mut Option<(u32, Vec<u16>)>, styles: &[u8]| {
        if let Some((kind, units)) = current.take() {
            blocks.push(TextBlock {
                kind,
                paragraphs: paragraphs(&units, styles),
            });
        }
    };
    for record in records {
        match record.kind {
            records::TEXT_HEADER => {
                finish(&mut current, styles);
                styles = &[];
                current = Some((record.u32(0).unwrap_or(u32::MAX), Vec::new()));
            }
            records::TEXT_CHARS => {
                if let Some((_, units)) = current.as_mut() {
                    units.extend(
                        record
                            .body
                            .chunks_exact(2)
                            .map(|pair| u16::from_le_bytes([pair[0], pair[1]])),
                    );
                }
            }
            records::TEXT_BYTES => {
                if let Some((_, units)) = current.as_mut() {
                    units.extend(record.body.iter().map(|&b| u16::from(b)));
                }
            }
            records::STYLE_TEXT_PROP => styles = record.body,
            records::SLIDE_NUMBER_FIELD
            | records::DATE_TIME_FIELD
            | records::GENERIC_DATE_FIELD
            | records::HEADER_FIELD
            | records::FOOTER_FIELD
            | records::RTF_DATE_TIME_FIELD => {
                // The character a field stands at (`*`) is not text: it shows
                // the slide number, date, header or footer when drawn.
                let unit = current
                    .as_mut()
                    .zip(record.u32(0))
                    .and_then(|((_, units), at)| units.get_mut(at as usize));
                if let Some(unit) = unit {
                    *unit = FIELD_MARK;
                }
            }
            _ => {}
        }
    }
    finish(&mut current, styles);
    blocks
}

/// The paragraphs of a text (ended by `\r`), with their styles.
fn paragraphs(units: &[u16], styles: &[u8]) -> Vec<Paragraph> {
    let runs = paragraph_runs(styles, units.len() + 1);
    let mut start = 0;
    units
        .split(|&unit| unit == u16::from(b'\r'))
        .map(|paragraph| {
            let style = runs
                .iter()
                .find(|run| run.end > start)
                .map(|run| (run.level, run.bullet))
                .unwrap_or((0, None));
            start += paragraph.len() + 1;
            Paragraph {
                text: paragraph_text(paragraph),
                level: style.0,
                bullet: style.1,
            }
        })
        .collect()
}

/// A paragraph's characters: a vertical tab is a line break; other control
/// characters (field and placeholder marks) are left out.
fn paragraph_text(units: &[u16]) -> String {
    char::decode_utf16(units.iter().copied())
        .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
        .filter_map(|c| match c {
            '\u{0B}' => Some('\n'),
            '\t' => Some(' '),
            c if c.is_control() => None,
            c => Some(c),
        })
        .collect()
}

/// A run of paragraphs of one style, ending before character `end`.
struct Run {
    end: usize,
    level: usize,
    bullet: Option<bool>,
}

/// The paragraph runs of a `StyleTextPropAtom` ([MS-PPT] 2.9.44), which
/// cover `len` characters; as many as can be read.
fn paragraph_runs(styles: &[u8], len: usize) -> Vec<Run> {
    let mut runs = Vec::new();
    let (mut at, mut end) = (0, 0usize);
    while end < len {
        let (Some(count), Some(level)) = (u32_at(styles, at), u16_at(styles, at + 4)) else {
            break;
        };
        let Some((bullet, exception_len)) = paragraph_exception(styles, at + 6) else {
            break;
        };
        end = end.saturating_add(count as usize);
        runs.push(Run {
            end,
            level: usize::from(level).min(8),
            bullet,
        });
        at += 6 + exception_len;
    }
    runs
}

/// A `TextPFException` at `at` ([MS-PPT] 2.9.18): whether it sets a bullet,
/// and its length. Its fields are there as its mask says, in this order.
fn paragraph_exception(styles: &[u8], at: usize) -> Option<(Option<bool>, usize)> {
    const HAS_BULLET: u32 = 1;
    const BULLET_FLAGS: u32 = 0b1111;
    const TAB_STOPS: u32 = 1 << 20;
    const WRAP_FLAGS: u32 = 0b111 << 17;
    /// (mask bits, field length) after the bullet flags, before the tab stops.
    const FIELDS: [(u32, usize); 11] = [
        (1 << 7, 2),  // bulletChar
        (1 << 4, 2),  // bulletFontRef
        (1 << 6, 2),  // bulletSize
        (1 << 5, 4),  // bulletColor
        (1 << 11, 2), // textAlignment
        (1 << 12, 2), // lineSpacing
        (1 << 13, 2), // spaceBefore
        (1 << 14, 2), // spaceAfter
        (1 << 8, 2),  // leftMargin
        (1 << 10, 2), // indent
        (1 << 15, 2), // defaultTabSize
    ];
    let masks = u32_at(styles, at)?;
    let mut len = 4;
    let mut bullet = None;
    if masks & BULLET_FLAGS != 0 {
        let flags = u16_at(styles, at + len)?;
        if masks & HAS_BULLET != 0 {
            bullet = Some(flags & 1 != 0);
        }
        len += 2;
    }
    len += FIELDS
        .iter()
        .filter(|(bit, _)| masks & bit != 0)
        .map(|(_, field)| field)
        .sum::<usize>();
    if masks & TAB_STOPS != 0 {
        len += 2 + 4 * usize::from(u16_at(styles, at + len)?);
    }
    len += [1 << 16, WRAP_FLAGS, 1 << 21]
        .iter()
        .filter(|&&bits| masks & bits != 0)
        .count()
        * 2;
    (at + len <= styles.len()).then_some((bullet, len))
}
