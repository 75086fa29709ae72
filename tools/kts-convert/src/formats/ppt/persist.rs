//! Where the live records are ([MS-PPT] 2.1.2): the `Current User` stream
//! points at the last `UserEditAtom`; each edit points at the one before and
//! at a persist directory that maps persist ids to stream offsets. The
//! newest edit's mapping of an id wins.

use std::collections::{HashMap, HashSet};

use kts_record::ErrorCode;

use super::super::ConvertError;
use super::records::{self, Record};

/// The `CurrentUserAtom` header token of an encrypted presentation.
const ENCRYPTED_TOKEN: u32 = 0xF3D1_C4DF;
/// `UserEditAtom` fields: offsets of the previous edit, of the persist
/// directory, the document's persist id, the encryption session's.
const LAST_EDIT_AT: usize = 8;
const PERSIST_DIRECTORY_AT: usize = 12;
const DOC_PERSIST_ID_AT: usize = 16;
const CRYPT_SESSION_ID_AT: usize = 28;

/// The live presentation's persist ids, by their record's offset.
pub struct Persist {
    pub document: u32,
    offsets: HashMap<u32, u32>,
}

impl Persist {
    /// Reads the edits from the one `current_user` names; `None` when the
    /// stream has no usable `Current User` pointer (the caller then takes
    /// the first `DocumentContainer`).
    pub fn read(stream: &[u8], current_user: &[u8]) -> Result<Option<Self>, ConvertError> {
        let Ok(atom) = Record::at(current_user, 0) else {
            return Ok(None);
        };
        if atom.u32(4) == Some(ENCRYPTED_TOKEN) {
            return Err(encrypted());
        }
        let Some(mut edit_at) = atom.u32(8) else {
            return Ok(None);
        };
        let mut persist: Option<Persist> = None;
        let mut seen = HashSet::new();
        // The directories are apart in a sound file: together no longer than it.
        let mut directory_bytes = 0usize;
        loop {
            if !seen.insert(edit_at) {
                return Err(ConvertError::corrupt(
                    "the presentation's edits loop back on themselves",
                ));
            }
            let edit = Record::at(stream, edit_at as usize)?;
            if edit.kind != records::USER_EDIT {
                return Err(ConvertError::corrupt(format!(
                    "no edit record at byte {edit_at} of the presentation"
                )));
            }
            if edit.u32(CRYPT_SESSION_ID_AT).is_some_and(|id| id != 0) {
                return Err(encrypted());
            }
            let directory_at = edit.u32(PERSIST_DIRECTORY_AT).unwrap_or(u32::MAX);
            let persist = persist.get_or_insert_with(|| Persist {
                document: edit.u32(DOC_PERSIST_ID_AT).unwrap_or(0),
                offsets: HashMap::new(),
            });
            let directory = Record::at(stream, directory_at as usize)?;
            directory_bytes += directory.body.len();
            if directory_bytes > stream.len() {
                return Err(ConvertError::corrupt(
                    "the presentation's persist directories overlap",
                ));
            }
            persist.add_directory(directory)?;
            match edit.u32(LAST_EDIT_AT) {
                Some(0) | None => break,
                Some(previous) => edit_at = previous,
            }
        }
        Ok(persist)
    }

    /// The offset of the record a persist id names.
    pub fn offset(&self, id: u32) -> Option<usize> {
        self.offsets.get(&id).map(|&at| at as usize)
    }

    /// Adds an older directory's entries ([MS-PPT] 2.3.6): a 20-bit first
    /// id and a 12-bit count, then that many offsets.
    fn add_directory(&mut self, directory: Record) -> Result<(), ConvertError> {
        if directory.kind != records::PERSIST_DIRECTORY {
            return Err(ConvertError::corrupt(
                "the presentation's persist directory is missing",
            ));
        }
        let mut at = 0;
        while let Some(entry) = directory.u32(at) {
            let (first, count) = (entry & 0xF_FFFF, entry >> 20);
            for n in 0..count {
                let offset = directory.u32(at + 4 + 4 * n as usize).ok_or_else(|| {
                    ConvertError::corrupt("the presentation's persist directory is truncated")
                })?;
                self.offsets.entry(first + n).or_insert(offset);
            }
            at += 4 + 4 * count as usize;
        }
        Ok(())
    }
}

pub fn encrypted() -> ConvertError {
    ConvertError::new(
        ErrorCode::Encrypted,
        "password-protected PowerPoint presentation",
    )
}
