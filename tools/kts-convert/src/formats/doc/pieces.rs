//! The piece table ([MS-DOC] 2.9.38 Clx, 2.8.35 PlcPcd): where each run of
//! character positions (CPs) keeps its text in the `WordDocument` stream,
//! as 8-bit "compressed" bytes (Windows-1252) or UTF-16LE.

use super::u32_at;
use crate::formats::ConvertError;

const CLXT_PRC: u8 = 0x01;
const CLXT_PCDT: u8 = 0x02;
const PCD_BYTES: usize = 8;
const F_COMPRESSED: u32 = 1 << 30;

#[derive(Clone, Copy, Debug)]
struct Piece {
    cp_start: u32,
    cp_end: u32,
    /// Byte offset of the piece's first character in the `WordDocument` stream.
    fc: u32,
    compressed: bool,
}

/// The document's text, one UTF-16 unit per CP, with the file offsets (FCs)
/// that paragraph properties are keyed by.
#[derive(Debug, Default)]
pub struct Text {
    pub units: Vec<u16>,
    pieces: Vec<Piece>,
}

impl Text {
    /// Reads the first `ccp` characters the CLX `clx` names in `stream`.
    pub fn read(clx: &[u8], stream: &[u8], ccp: u32) -> Result<Text, ConvertError> {
        let pieces = pieces(clx, stream)?;
        let mut units = Vec::with_capacity(ccp.min(stream.len() as u32) as usize);
        for piece in &pieces {
            if piece.cp_start >= ccp {
                break;
            }
            let count = (piece.cp_end.min(ccp) - piece.cp_start) as usize;
            let start = piece.fc as usize;
            if piece.compressed {
                // Windows-1252 as WHATWG defines it maps every byte to one
                // character of the BMP: one unit per CP.
                let (text, _) = encoding_rs::WINDOWS_1252
                    .decode_without_bom_handling(&stream[start..start + count]);
                units.extend(text.encode_utf16());
            } else {
                units.extend(
                    stream[start..start + count * 2]
                        .chunks_exact(2)
                        .map(|pair| u16::from_le_bytes([pair[0], pair[1]])),
                );
            }
        }
        Ok(Text { units, pieces })
    }

    /// The file offset of the character at `cp`.
    pub fn fc(&self, cp: u32) -> Option<u32> {
        let index = self.pieces.partition_point(|p| p.cp_end <= cp);
        let piece = self.pieces.get(index).filter(|p| p.cp_start <= cp)?;
        let width = if piece.compressed { 1 } else { 2 };
        Some(piece.fc + (cp - piece.cp_start) * width)
    }
}

/// The pieces of the CLX, checked: CPs rising, every piece's bytes inside
/// the stream, and no more characters than the stream has bytes (a piece
/// table that names the same bytes again and again is damaged, and would
/// otherwise make a small file a huge text).
fn pieces(clx: &[u8], stream: &[u8]) -> Result<Vec<Piece>, ConvertError> {
    let plc = piece_table(clx)?;
    let damaged = |what: &str| ConvertError::corrupt(format!("damaged piece table: {what}"));
    if plc.len() < 4 || (plc.len() - 4) % (4 + PCD_BYTES) != 0 {
        return Err(damaged("its size fits no number of pieces"));
    }
    let count = (plc.len() - 4) / (4 + PCD_BYTES);
    let cp = |i: usize| u32_at(plc, i * 4).unwrap_or(0);
    let mut pieces = Vec::with_capacity(count);
    let mut total: u64 = 0;
    for i in 0..count {
        let (cp_start, cp_end) = (cp(i), cp(i + 1));
        if cp_end <= cp_start {
            return Err(damaged("its character positions do not rise"));
        }
        let raw = u32_at(plc, (count + 1) * 4 + i * PCD_BYTES + 2).unwrap_or(0);
        let compressed = raw & F_COMPRESSED != 0;
        let fc = raw & !(F_COMPRESSED | 1 << 31);
        let (fc, bytes) = match compressed {
            true => (fc / 2, u64::from(cp_end - cp_start)),
            false => (fc, u64::from(cp_end - cp_start) * 2),
        };
        total += u64::from(cp_end - cp_start);
        if u64::from(fc) + bytes > stream.len() as u64 || total > stream.len() as u64 {
            return Err(damaged(
                "a piece lies past the end of the WordDocument stream",
            ));
        }
        pieces.push(Piece {
            cp_start,
            cp_end,
            fc,
            compressed,
        });
    }
    Ok(pieces)
}

/// The `PlcPcd` inside the CLX, after the `Prc` property runs it skips.
fn piece_table(clx: &[u8]) -> Result<&[u8], ConvertError> {
    let mut at = 0;
    loop {
        match clx.get(at) {
            Some(&CLXT_PRC) => {
                let size = clx
                    .get(at + 1..at + 3)
                    .map(|b| i16::from_le_bytes([b[0], b[1]]))
                    .filter(|&size| size >= 0)
                    .ok_or_else(|| ConvertError::corrupt("damaged piece table: a bad Prc"))?;
                at += 3 + size as usize;
            }
            Some(&CLXT_PCDT) => {
                let len = u32_at(clx, at + 1).unwrap_or(u32::MAX) as usize;
                return clx
                    .get(at + 5..)
                    .and_then(|rest| rest.get(..len))
                    .ok_or_else(|| ConvertError::corrupt("the piece table is truncated"));
            }
            _ => {
                return Err(ConvertError::corrupt(
                    "the Word document has no piece table",
                ));
            }
        }
    }
}
