//! Paragraph properties: the style (istd) and the properties (sprms) that
//! say whether a paragraph is in a table, ends a table row, is a list item
//! or has an outline level. They are found through the `PlcBtePapx` bin
//! table, whose 512-byte `PapxFkp` pages map file offsets (FCs) of paragraph
//! marks to `PAPX` records ([MS-DOC] 2.8.6, 2.9.175).

use std::collections::HashSet;

use super::fib::Span;
use super::{u16_at, u32_at};

const PAGE: usize = 512;
const BX_PAP_BYTES: usize = 13;

const SPRM_P_ISTD: u16 = 0x4600;
const SPRM_P_ILVL: u16 = 0x260A;
const SPRM_P_ILFO: u16 = 0x460B;
const SPRM_P_F_IN_TABLE: u16 = 0x2416;
const SPRM_P_F_TTP: u16 = 0x2417;
const SPRM_P_OUT_LVL: u16 = 0x2640;
const SPRM_P_ITAP: u16 = 0x6649;
const SPRM_P_DTAP: u16 = 0x664A;
const SPRM_P_F_INNER_TTP: u16 = 0x244C;
const SPRM_P_CHG_TABS: u16 = 0xC615;
const SPRM_T_DEF_TABLE: u16 = 0xD608;
const SPRM_T_DEF_TABLE_10: u16 = 0xD606;

/// What a paragraph's properties say, as far as they matter here.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Props {
    pub istd: u16,
    /// The table depth: 0 outside tables, 1 in a table, 2 in a table in a cell.
    pub depth: i32,
    /// Whether the paragraph is the mark that ends a table row.
    pub row_end: bool,
    /// The list (LFO index from 1) and level, if the paragraph sets them.
    pub list: Option<u16>,
    pub level: Option<u8>,
    /// The outline level (0 for a level-1 heading), if set.
    pub outline: Option<u8>,
}

impl Props {
    /// Applies the sprms of `grpprl`.
    pub fn apply(&mut self, grpprl: &[u8]) {
        for (sprm, operand) in sprms(grpprl) {
            let byte = operand.first().copied().unwrap_or(0);
            let word = u16_at(operand, 0).unwrap_or(0);
            match sprm {
                SPRM_P_ISTD => self.istd = word,
                SPRM_P_F_IN_TABLE => self.depth = self.depth.max(i32::from(byte != 0)),
                SPRM_P_F_TTP | SPRM_P_F_INNER_TTP => self.row_end = byte != 0,
                SPRM_P_ITAP => self.depth = u32_at(operand, 0).unwrap_or(0).min(64) as i32,
                SPRM_P_DTAP => {
                    let delta = u32_at(operand, 0).unwrap_or(0) as i32;
                    self.depth = self.depth.saturating_add(delta).clamp(0, 64);
                }
                SPRM_P_ILFO => self.list = Some(word),
                SPRM_P_ILVL => self.level = Some(byte.min(8)),
                SPRM_P_OUT_LVL => self.outline = Some(byte),
                _ => {}
            }
        }
    }
}

/// The sprms of a `grpprl`: each opcode with its operand. A sprm cut short
/// ends the list.
pub fn sprms(grpprl: &[u8]) -> impl Iterator<Item = (u16, &[u8])> {
    let mut at = 0;
    std::iter::from_fn(move || {
        let sprm = u16_at(grpprl, at)?;
        let rest = grpprl.get(at + 2..)?;
        let size = operand_size(sprm, rest)?;
        let operand = rest.get(..size)?;
        at += 2 + size;
        Some((sprm, operand))
    })
}

/// The size of a sprm's operand, told by its `spra` bits ([MS-DOC] 2.2.5.1).
fn operand_size(sprm: u16, operand: &[u8]) -> Option<usize> {
    Some(match sprm >> 13 {
        0 | 1 => 1,
        2 | 4 | 5 => 2,
        3 => 4,
        7 => 3,
        _ => match sprm {
            SPRM_T_DEF_TABLE | SPRM_T_DEF_TABLE_10 => 2 + usize::from(u16_at(operand, 0)?) - 1,
            SPRM_P_CHG_TABS if *operand.first()? == 255 => {
                let deleted = usize::from(*operand.get(1)?);
                let added = usize::from(*operand.get(2 + deleted * 4)?);
                1 + 1 + deleted * 4 + 1 + added * 3
            }
            _ => 1 + usize::from(*operand.first()?),
        },
    })
}

/// The properties of every paragraph mark, as runs of file offsets.
#[derive(Debug, Default)]
pub struct Paragraphs {
    /// (first FC, FC past the end, properties), in FC order.
    runs: Vec<(u32, u32, Props)>,
}

impl Paragraphs {
    /// Reads the bin table `bins` of the table stream and the pages it
    /// names in the `WordDocument` stream; damaged pages are left out, and
    /// a page named again is read once (so the runs are bounded by the
    /// stream's size).
    pub fn read(table: &[u8], bins: Span, word: &[u8]) -> Paragraphs {
        let Some(plc) = bins.of(table).filter(|plc| plc.len() >= 4) else {
            return Paragraphs::default();
        };
        let count = (plc.len() - 4) / 8;
        let mut runs = Vec::new();
        let mut read = HashSet::new();
        for i in 0..count {
            let pn = u32_at(plc, (count + 1) * 4 + i * 4).unwrap_or(0) & 0x003F_FFFF;
            if !read.insert(pn) {
                continue;
            }
            let start = pn as usize * PAGE;
            if let Some(page) = word.get(start..start + PAGE) {
                read_page(page, &mut runs);
            }
        }
        runs.sort_by_key(|run| run.0);
        Paragraphs { runs }
    }

    /// The properties of the paragraph whose mark is at `fc`.
    pub fn at(&self, fc: u32) -> Props {
        let index = self.runs.partition_point(|run| run.1 <= fc);
        self.runs
            .get(index)
            .filter(|run| run.0 <= fc)
            .map(|run| run.2.clone())
            .unwrap_or_default()
    }
}

/// The runs of one `PapxFkp` page.
fn read_page(page: &[u8], runs: &mut Vec<(u32, u32, Props)>) {
    let crun = usize::from(page[PAGE - 1]);
    let bx_start = (crun + 1) * 4;
    for i in 0..crun {
        let (Some(start), Some(end)) = (u32_at(page, i * 4), u32_at(page, i * 4 + 4)) else {
            return;
        };
        let Some(&offset) = page.get(bx_start + i * BX_PAP_BYTES) else {
            return;
        };
        let mut props = Props::default();
        if let Some(papx) = papx(page, usize::from(offset) * 2) {
            props.istd = u16_at(papx, 0).unwrap_or(0);
            props.apply(papx.get(2..).unwrap_or_default());
        }
        if start < end {
            runs.push((start, end, props));
        }
    }
}

/// The `istd` and `grpprl` of the `PapxInFkp` at `at` (0: none).
fn papx(page: &[u8], at: usize) -> Option<&[u8]> {
    if at == 0 {
        return None;
    }
    let cb = usize::from(*page.get(at)?);
    match cb {
        0 => {
            let words = usize::from(*page.get(at + 1)?);
            page.get(at + 2..at + 2 + words * 2)
        }
        _ => page.get(at + 1..at + 1 + cb * 2 - 1),
    }
}
