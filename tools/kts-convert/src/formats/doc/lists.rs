//! Lists: a paragraph's list (`ilfo`) names an `LFO` of the `PlfLfo`, which
//! names a list (`lsid`) of the `PlfLst`, whose levels (`LVL`) give each
//! level's number format and start ([MS-DOC] 2.9.147, 2.9.150, 2.9.131).

use std::collections::HashMap;

use super::fib::Span;
use super::{u16_at, u32_at};

const LSTF_BYTES: usize = 28;
const LVLF_BYTES: usize = 28;
const LFO_BYTES: usize = 16;
const F_SIMPLE_LIST: u8 = 1;
const NFC_BULLET: u8 = 0x17;
const NFC_NONE: u8 = 0xFF;

/// One level of a list: how its items are marked.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Marker {
    Bullet,
    /// Numbered, from this number.
    Number(u32),
    None,
}

#[derive(Debug, Default)]
pub struct Lists {
    /// The `lsid` of each LFO, by `ilfo - 1`.
    overrides: Vec<u32>,
    levels: HashMap<u32, Vec<Marker>>,
}

impl Lists {
    /// Reads the lists of the table stream; a damaged list is left out.
    pub fn read(table: &[u8], lists: Span, overrides: Span) -> Lists {
        Lists {
            overrides: read_overrides(table, overrides),
            levels: read_lists(table, lists),
        }
    }

    /// How items of list `ilfo` at `level` are marked (a bullet when the
    /// list cannot be read).
    pub fn marker(&self, ilfo: u16, level: u8) -> Marker {
        usize::from(ilfo)
            .checked_sub(1)
            .and_then(|index| self.overrides.get(index))
            .and_then(|lsid| self.levels.get(lsid))
            .and_then(|levels| levels.get(usize::from(level)).or(levels.last()))
            .copied()
            .unwrap_or(Marker::Bullet)
    }

    /// The list `lsid` of `ilfo`, to keep each list's count apart.
    pub fn list_id(&self, ilfo: u16) -> u32 {
        usize::from(ilfo)
            .checked_sub(1)
            .and_then(|index| self.overrides.get(index))
            .copied()
            .unwrap_or(u32::from(ilfo))
    }
}

fn read_overrides(table: &[u8], span: Span) -> Vec<u32> {
    let Some(plf) = span.of(table) else {
        return Vec::new();
    };
    let count = u32_at(plf, 0).unwrap_or(0) as usize;
    (0..count.min(plf.len() / LFO_BYTES))
        .map_while(|i| u32_at(plf, 4 + i * LFO_BYTES))
        .collect()
}

/// Each list's levels, by `lsid`. The `LVL`s follow the `LSTF` array.
fn read_lists(table: &[u8], span: Span) -> HashMap<u32, Vec<Marker>> {
    let mut lists = HashMap::new();
    let Some(start) = usize::try_from(span.offset).ok().filter(|_| span.len > 0) else {
        return lists;
    };
    let count = (u16_at(table, start).unwrap_or(0) as i16).max(0) as usize;
    let mut at = start + 2 + count * LSTF_BYTES;
    for i in 0..count {
        let lstf = start + 2 + i * LSTF_BYTES;
        let (Some(lsid), Some(&flags)) = (u32_at(table, lstf), table.get(lstf + 26)) else {
            return lists;
        };
        let level_count = if flags & F_SIMPLE_LIST != 0 { 1 } else { 9 };
        let mut levels = Vec::with_capacity(level_count);
        for _ in 0..level_count {
            let Some((marker, size)) = level(table, at) else {
                return lists;
            };
            levels.push(marker);
            at += size;
        }
        lists.insert(lsid, levels);
    }
    lists
}

/// The `LVL` at `at`: its marker and its size in bytes.
fn level(table: &[u8], at: usize) -> Option<(Marker, usize)> {
    let lvlf = table.get(at..at + LVLF_BYTES)?;
    let start = u32_at(lvlf, 0)?;
    let marker = match lvlf[4] {
        NFC_BULLET => Marker::Bullet,
        NFC_NONE => Marker::None,
        _ => Marker::Number(start),
    };
    let grpprls = usize::from(lvlf[24]) + usize::from(lvlf[25]);
    let text_at = at + LVLF_BYTES + grpprls;
    let text_len = usize::from(u16_at(table, text_at)?);
    Some((marker, LVLF_BYTES + grpprls + 2 + text_len * 2))
}
