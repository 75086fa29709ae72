//! The records a PowerPoint stream is made of ([MS-PPT] 2.3.1): an 8-byte
//! header (version and instance, type, length) and a body; a container's
//! body (version 0xF) is more records.

use super::super::ConvertError;
use super::super::doc::{u16_at, u32_at};

pub const DOCUMENT: u16 = 0x03E8;
pub const SLIDE: u16 = 0x03EE;
pub const NOTES: u16 = 0x03F0;
pub const NOTES_ATOM: u16 = 0x03F1;
pub const SLIDE_PERSIST: u16 = 0x03F3;
pub const OUTLINE_TEXT_REF: u16 = 0x0F9E;
pub const TEXT_HEADER: u16 = 0x0F9F;
pub const TEXT_CHARS: u16 = 0x0FA0;
pub const STYLE_TEXT_PROP: u16 = 0x0FA1;
pub const TEXT_BYTES: u16 = 0x0FA8;
pub const SLIDE_NUMBER_FIELD: u16 = 0x0FD8;
pub const SLIDE_LIST_WITH_TEXT: u16 = 0x0FF0;
pub const DATE_TIME_FIELD: u16 = 0x0FF7;
pub const GENERIC_DATE_FIELD: u16 = 0x0FF8;
pub const HEADER_FIELD: u16 = 0x0FF9;
pub const FOOTER_FIELD: u16 = 0x0FFA;
pub const RTF_DATE_TIME_FIELD: u16 = 0x1015;
pub const USER_EDIT: u16 = 0x0FF5;
pub const PERSIST_DIRECTORY: u16 = 0x1772;
pub const GROUP: u16 = 0xF003;
pub const SHAPE: u16 = 0xF004;
pub const SHAPE_ATOM: u16 = 0xF00A;
pub const PROPERTIES: u16 = 0xF00B;
pub const CLIENT_TEXTBOX: u16 = 0xF00D;
pub const CHILD_ANCHOR: u16 = 0xF00F;
pub const TERTIARY_PROPERTIES: u16 = 0xF122;

const HEADER_LEN: usize = 8;
const CONTAINER_VERSION: u8 = 0x0F;

#[derive(Clone, Copy, Debug)]
pub struct Record<'a> {
    version: u8,
    pub instance: u16,
    pub kind: u16,
    pub body: &'a [u8],
}

impl<'a> Record<'a> {
    /// The record whose header starts at `at`; its body must lie within `bytes`.
    pub fn at(bytes: &'a [u8], at: usize) -> Result<Self, ConvertError> {
        let damaged = || {
            ConvertError::corrupt(format!(
                "the presentation's record at byte {at} runs past its end"
            ))
        };
        let (Some(ver_inst), Some(kind), Some(len)) = (
            u16_at(bytes, at),
            u16_at(bytes, at + 2),
            u32_at(bytes, at + 4),
        ) else {
            return Err(damaged());
        };
        let start = at + HEADER_LEN;
        let body = start
            .checked_add(len as usize)
            .and_then(|end| bytes.get(start..end))
            .ok_or_else(damaged)?;
        Ok(Self {
            version: (ver_inst & 0x0F) as u8,
            instance: ver_inst >> 4,
            kind,
            body,
        })
    }

    pub fn is_container(&self) -> bool {
        self.version == CONTAINER_VERSION
    }

    /// The records of a container's body, in order; none for an atom.
    pub fn children(&self) -> Result<Vec<Record<'a>>, ConvertError> {
        if !self.is_container() {
            return Ok(Vec::new());
        }
        sequence(self.body)
    }

    /// The first child of this type, if the container has one.
    pub fn child(&self, kind: u16) -> Result<Option<Record<'a>>, ConvertError> {
        Ok(self.children()?.into_iter().find(|r| r.kind == kind))
    }

    pub fn u32(&self, at: usize) -> Option<u32> {
        u32_at(self.body, at)
    }
}

/// The records that fill `bytes`, one after another.
pub fn sequence(bytes: &[u8]) -> Result<Vec<Record<'_>>, ConvertError> {
    let mut records = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let record = Record::at(bytes, at)?;
        at += HEADER_LEN + record.body.len();
        records.push(record);
    }
    Ok(records)
}
