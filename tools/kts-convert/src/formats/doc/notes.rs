//! Footnotes: `PlcffndRef` gives the CP of each reference in the main text,
//! `PlcffndTxt` the bounds of each note's text, which follows the main text
//! ([MS-DOC] 2.8.10, 2.8.11).

use std::collections::HashMap;
use std::ops::Range;

use super::fib::{Fib, Span};
use super::paragraphs::Paragraphs;
use super::pieces::Text;
use super::story;
use crate::formats::one_line;

/// Bytes of a `PlcffndRef` per note besides its CP: its `FRD`.
const FRD_BYTES: usize = 2;

#[derive(Default)]
pub struct Footnotes {
    /// The label of each reference, by its CP.
    pub labels: HashMap<u32, usize>,
    texts: Vec<Range<u32>>,
}

impl Footnotes {
    /// The notes of the table stream. Their texts' bounds must rise, so
    /// that no text is read twice.
    pub fn read(table: &[u8], fib: &Fib) -> Footnotes {
        let references = cps(table, fib.footnote_refs);
        let count = (fib.footnote_refs.len as usize).saturating_sub(4) / (4 + FRD_BYTES);
        let bounds = cps(table, fib.footnote_texts);
        let end = fib.ccp_text.saturating_add(fib.ccp_ftn);
        let mut notes = Footnotes::default();
        let rising = bounds.windows(2).take_while(|pair| pair[0] <= pair[1]);
        for (label, (&cp, pair)) in references.iter().take(count).zip(rising).enumerate() {
            let start = fib.ccp_text.saturating_add(pair[0]).min(end);
            let stop = fib.ccp_text.saturating_add(pair[1]).min(end);
            notes.labels.insert(cp, label + 1);
            notes.texts.push(start..stop);
        }
        notes
    }

    /// Each note's number and text.
    pub fn texts(&self, text: &Text, paragraphs: &Paragraphs) -> Vec<(usize, String)> {
        let mut out = Vec::new();
        for (label, range) in self.texts.iter().enumerate() {
            let note = story::paragraphs(text, range.clone(), paragraphs, &HashMap::new())
                .iter()
                .map(|p| one_line(&p.text))
                .filter(|p| !p.is_empty())
                .collect::<Vec<_>>()
                .join(" ");
            if !note.is_empty() {
                out.push((label + 1, note));
            }
        }
        out
    }
}

/// The CPs a PLC starts with (the data after them read as CPs too; callers
/// take only as many as there are).
fn cps(table: &[u8], span: Span) -> Vec<u32> {
    span.of(table)
        .map(|plc| {
            plc.chunks_exact(4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect()
        })
        .unwrap_or_default()
}
