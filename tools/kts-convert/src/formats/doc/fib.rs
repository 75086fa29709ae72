//! The File Information Block at the start of the `WordDocument` stream:
//! where the document's text and tables are ([MS-DOC] 2.5.1).

use kts_record::ErrorCode;

use super::{u16_at, u32_at};
use crate::formats::ConvertError;

/// `wIdent` of every Word document from Word 6 on.
const WORD_IDENT: u16 = 0xA5EC;
/// The `nFib` of Word 97, the first version of the format read here.
const WORD_97: u16 = 0x00C1;

const F_ENCRYPTED: u16 = 1 << 8;
const F_WHICH_TBL_STM: u16 = 1 << 9;
const F_OBFUSCATED: u16 = 1 << 15;

/// Where the `FibRgW97` array begins (after `FibBase` and `csw`).
const RG_W_START: usize = 0x22;

/// Indexes of the (offset, length) pairs of `FibRgFcLcb97` read here.
const STSHF: usize = 1;
const PLCFFND_REF: usize = 2;
const PLCFFND_TXT: usize = 3;
const PLCF_BTE_PAPX: usize = 13;
const CLX: usize = 33;
const PLF_LST: usize = 73;
const PLF_LFO: usize = 74;

/// An (offset, length) pair naming bytes of the table stream.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Span {
    pub offset: u32,
    pub len: u32,
}

impl Span {
    /// The bytes it names in `stream`, if they are all there.
    pub fn of(self, stream: &[u8]) -> Option<&[u8]> {
        let start = self.offset as usize;
        stream.get(start..start.checked_add(self.len as usize)?)
    }
}

#[derive(Debug)]
pub struct Fib {
    /// Whether the table stream is `1Table` (else `0Table`).
    pub table_1: bool,
    /// Characters of the main document, then of the footnotes.
    pub ccp_text: u32,
    pub ccp_ftn: u32,
    pub styles: Span,
    pub footnote_refs: Span,
    pub footnote_texts: Span,
    pub paragraph_bins: Span,
    pub clx: Span,
    pub lists: Span,
    pub list_overrides: Span,
}

impl Fib {
    pub fn parse(stream: &[u8]) -> Result<Fib, ConvertError> {
        let truncated = || ConvertError::corrupt("the Word document's header (FIB) is truncated");
        let ident = u16_at(stream, 0).ok_or_else(truncated)?;
        if ident != WORD_IDENT {
            return Err(ConvertError::corrupt(format!(
                "not a Word document: its WordDocument stream starts with {ident:#06x}, not 0xa5ec"
            )));
        }
        let n_fib = u16_at(stream, 2).ok_or_else(truncated)?;
        if n_fib < WORD_97 {
            return Err(ConvertError::new(
                ErrorCode::Unsupported,
                format!(
                    "a {} document (nFib {n_fib:#06x}): only Word 97 and later are read; save it as .docx",
                    word_version(n_fib)
                ),
            ));
        }
        let flags = u16_at(stream, 0x0A).ok_or_else(truncated)?;
        if flags & (F_ENCRYPTED | F_OBFUSCATED) != 0 {
            return Err(ConvertError::new(
                ErrorCode::Encrypted,
                "password-protected Word document",
            ));
        }
        let csw = usize::from(u16_at(stream, RG_W_START - 2).ok_or_else(truncated)?);
        let lw_start = RG_W_START + csw * 2 + 2;
        let cslw = usize::from(u16_at(stream, lw_start - 2).ok_or_else(truncated)?);
        let long = |index: usize| {
            (index < cslw)
                .then(|| u32_at(stream, lw_start + index * 4))
                .flatten()
                .ok_or_else(truncated)
        };
        let fc_lcb_start = lw_start + cslw * 4 + 2;
        let pairs = usize::from(u16_at(stream, fc_lcb_start - 2).ok_or_else(truncated)?);
        let span = |index: usize| -> Span {
            let at = fc_lcb_start + index * 8;
            match (index < pairs, u32_at(stream, at), u32_at(stream, at + 4)) {
                (true, Some(offset), Some(len)) => Span { offset, len },
                _ => Span::default(),
            }
        };
        Ok(Fib {
            table_1: flags & F_WHICH_TBL_STM != 0,
            ccp_text: long(3)?,
            ccp_ftn: long(4)?,
            styles: span(STSHF),
            footnote_refs: span(PLCFFND_REF),
            footnote_texts: span(PLCFFND_TXT),
            paragraph_bins: span(PLCF_BTE_PAPX),
            clx: span(CLX),
            lists: span(PLF_LST),
            list_overrides: span(PLF_LFO),
        })
    }
}

/// The Word version that wrote a file of this `nFib`, for an error message.
fn word_version(n_fib: u16) -> &'static str {
    match n_fib {
        0..=100 => "Word 2 or earlier",
        101..=103 => "Word 6",
        _ => "Word 95",
    }
}
