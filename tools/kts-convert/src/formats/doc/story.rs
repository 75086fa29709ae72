//! A run of the document's text (the main text, a footnote) split into
//! paragraphs, with Word's special characters resolved ([MS-DOC] 2.4.3,
//! 2.8.25): fields keep their result and drop their instruction, note
//! references become `[^N]`, pictures and other anchors are dropped.

use std::collections::HashMap;
use std::ops::Range;

use super::paragraphs::{Paragraphs, Props};
use super::pieces::Text;

const PARAGRAPH_END: u16 = 0x0D;
const CELL_END: u16 = 0x07;
const LINE_BREAK: u16 = 0x0B;
const PAGE_BREAK: u16 = 0x0C;
const COLUMN_BREAK: u16 = 0x0E;
const TAB: u16 = 0x09;
const NOTE_REFERENCE: u16 = 0x02;
const FIELD_BEGIN: u16 = 0x13;
const FIELD_SEPARATOR: u16 = 0x14;
const FIELD_END: u16 = 0x15;
const NON_BREAKING_HYPHEN: u16 = 0x1E;
/// What LibreOffice writes for a non-breaking hyphen.
const UNICODE_NON_BREAKING_HYPHEN: u16 = 0x2011;

/// How a paragraph ends: with a paragraph mark or a table cell's mark.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum End {
    Paragraph,
    Cell,
}

#[derive(Debug)]
pub struct Paragraph {
    /// Its text, with `\n` where it has line breaks.
    pub text: String,
    pub end: End,
    pub props: Props,
}

/// The paragraphs of the CPs `range`; `notes` labels the note references
/// by their CP.
pub fn paragraphs(
    text: &Text,
    range: Range<u32>,
    properties: &Paragraphs,
    notes: &HashMap<u32, usize>,
) -> Vec<Paragraph> {
    let mut out = Vec::new();
    let mut units: Vec<u16> = Vec::new();
    // One entry per open field: whether its result (not its instruction) is
    // being read; and how many are in their instruction.
    let mut fields: Vec<bool> = Vec::new();
    let mut in_instruction = 0usize;
    let end = (range.end as usize).min(text.units.len());
    for (offset, &unit) in text.units[(range.start as usize).min(end)..end]
        .iter()
        .enumerate()
    {
        let cp = range.start + offset as u32;
        match unit {
            FIELD_BEGIN => {
                fields.push(false);
                in_instruction += 1;
            }
            FIELD_SEPARATOR => {
                if let Some(top) = fields.last_mut().filter(|result| !**result) {
                    *top = true;
                    in_instruction -= 1;
                }
            }
            FIELD_END => {
                if fields.pop() == Some(false) {
                    in_instruction -= 1;
                }
            }
            _ if in_instruction > 0 => {}
            PARAGRAPH_END | CELL_END | PAGE_BREAK | COLUMN_BREAK => {
                let props = text.fc(cp).map(|fc| properties.at(fc)).unwrap_or_default();
                out.push(Paragraph {
                    text: String::from_utf16_lossy(&units),
                    end: if unit == CELL_END {
                        End::Cell
                    } else {
                        End::Paragraph
                    },
                    props,
                });
                units.clear();
            }
            LINE_BREAK => units.push(u16::from(b'\n')),
            TAB => units.push(u16::from(b' ')),
            NON_BREAKING_HYPHEN | UNICODE_NON_BREAKING_HYPHEN => units.push(u16::from(b'-')),
            NOTE_REFERENCE => {
                if let Some(label) = notes.get(&cp) {
                    units.extend(format!("[^{label}]").encode_utf16());
                }
            }
            // Pictures, drawings, annotation marks, optional hyphens: no text.
            0..=0x1F => {}
            _ => units.push(unit),
        }
    }
    if units
        .iter()
        .any(|&u| !char::from_u32(u32::from(u)).is_some_and(char::is_whitespace))
    {
        out.push(Paragraph {
            text: String::from_utf16_lossy(&units),
            end: End::Paragraph,
            props: Props::default(),
        });
    }
    out
}
