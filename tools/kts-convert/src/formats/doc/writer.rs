//! Writes small Word 97 documents for tests: a FIB, the text in pieces
//! (8-bit where the text allows, else UTF-16), one page of paragraph
//! properties, a style sheet, a list, a footnote and summary properties.
//! Shared by the unit tests and the CLI test (included by path, so it uses
//! nothing of the crate).

use std::io::{Cursor, Write};

pub const MARK: u16 = 0x0D;
pub const CELL: u16 = 0x07;
/// sprms: in a table, a row's end, a list (ilfo 1).
pub const IN_TABLE: [u8; 3] = [0x16, 0x24, 1];
pub const ROW_END: [u8; 3] = [0x17, 0x24, 1];
pub const LIST: [u8; 4] = [0x0B, 0x46, 1, 0];

const TEXT_AT: usize = 0x400;
const FC_LCB_PAIRS: usize = 93;

pub struct Style {
    pub sti: u16,
    pub name: String,
}

pub struct Para {
    pub text: String,
    pub mark: u16,
    pub istd: u16,
    pub grpprl: Vec<u8>,
}

pub struct Doc {
    pub styles: Vec<Style>,
    pub paragraphs: Vec<Para>,
    pub n_fib: u16,
    pub encrypted: bool,
    /// The number format of the one list (0 decimal, 0x17 bullet).
    pub list_format: u8,
    /// A footnote: the paragraph whose end gets its reference, and its text.
    pub footnote: Option<(usize, String)>,
    pub title: Option<String>,
    pub author: Option<String>,
}

impl Default for Doc {
    fn default() -> Self {
        Self {
            styles: vec![Style {
                sti: 0,
                name: "Normal".into(),
            }],
            paragraphs: Vec::new(),
            n_fib: 0x00C1,
            encrypted: false,
            list_format: 0,
            footnote: None,
            title: None,
            author: None,
        }
    }
}

impl Doc {
    /// Adds a paragraph style; returns its istd.
    pub fn style(&mut self, sti: u16, name: &str) -> u16 {
        self.styles.push(Style {
            sti,
            name: name.into(),
        });
        (self.styles.len() - 1) as u16
    }

    pub fn para(&mut self, text: &str, istd: u16) -> &mut Self {
        self.push(text, MARK, istd, Vec::new())
    }

    pub fn item(&mut self, text: &str) -> &mut Self {
        self.push(text, MARK, 0, LIST.to_vec())
    }

    /// A table row of `cells`, then its row-end mark.
    pub fn row(&mut self, cells: &[&str]) -> &mut Self {
        for cell in cells {
            self.push(cell, CELL, 0, IN_TABLE.to_vec());
        }
        self.push("", CELL, 0, [IN_TABLE, ROW_END].concat())
    }

    pub fn push(&mut self, text: &str, mark: u16, istd: u16, grpprl: Vec<u8>) -> &mut Self {
        self.paragraphs.push(Para {
            text: text.into(),
            mark,
            istd,
            grpprl,
        });
        self
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let (word, table) = self.streams();
        let mut file = cfb::CompoundFile::create(Cursor::new(Vec::new())).unwrap();
        for (path, bytes) in [("/WordDocument", &word), ("/0Table", &table)] {
            file.create_stream(path).unwrap().write_all(bytes).unwrap();
        }
        if self.title.is_some() || self.author.is_some() {
            let summary = self.summary();
            let mut stream = file.create_stream("/\u{5}SummaryInformation").unwrap();
            stream.write_all(&summary).unwrap();
        }
        file.flush().unwrap();
        file.into_inner().into_inner()
    }

    /// The units of each paragraph (its mark included), main text first,
    /// then the footnote's; and the CP of the footnote reference.
    fn paragraph_units(&self) -> (Vec<Vec<u16>>, Option<u32>) {
        let mut units: Vec<Vec<u16>> = Vec::new();
        let mut reference = None;
        let mut cp = 0u32;
        for (i, p) in self.paragraphs.iter().enumerate() {
            let mut para: Vec<u16> = p.text.encode_utf16().collect();
            if self.footnote.as_ref().is_some_and(|(at, _)| *at == i) {
                reference = Some(cp + para.len() as u32);
                para.push(0x02);
            }
            para.push(p.mark);
            cp += para.len() as u32;
            units.push(para);
        }
        if let Some((_, text)) = &self.footnote {
            let mut note = vec![0x02, u16::from(b' ')];
            note.extend(text.encode_utf16());
            note.push(MARK);
            units.push(note);
        }
        (units, reference)
    }

    /// The `WordDocument` and `0Table` streams.
    pub fn streams(&self) -> (Vec<u8>, Vec<u8>) {
        let (paragraphs, reference) = self.paragraph_units();
        let main_paragraphs = self.paragraphs.len();
        let ccp_text: usize = paragraphs[..main_paragraphs].iter().map(Vec::len).sum();
        let ccp_ftn: usize = paragraphs[main_paragraphs..].iter().map(Vec::len).sum();
        let mut word = vec![0u8; TEXT_AT];
        // One piece per paragraph: 8-bit when it is all Latin-1 letters.
        let mut pieces = Vec::new();
        let mut cp = 0u32;
        for units in &paragraphs {
            let compressed = units
                .iter()
                .all(|&u| u < 0x80 || (0xA0..0x100).contains(&u));
            let fc = word.len() as u32;
            for &unit in units {
                match compressed {
                    true => word.push(unit as u8),
                    false => word.extend_from_slice(&unit.to_le_bytes()),
                }
            }
            pieces.push((cp, fc, compressed, word.len() as u32));
            cp += units.len() as u32;
        }
        let text_end = word.len() as u32;
        word.resize(word.len().div_ceil(512) * 512, 0);
        let page_number = (word.len() / 512) as u32;
        word.extend(self.papx_page(&pieces));

        let mut table = Vec::new();
        let mut spans = vec![(0u32, 0u32); FC_LCB_PAIRS];
        let mut put = |table: &mut Vec<u8>, index: usize, bytes: Vec<u8>| {
            spans[index] = (table.len() as u32, bytes.len() as u32);
            table.extend(bytes);
        };
        put(&mut table, 1, self.style_sheet());
        let bins = [u32le(TEXT_AT as u32), u32le(text_end), u32le(page_number)].concat();
        put(&mut table, 13, bins);
        put(&mut table, 33, clx(&pieces, cp));
        put(&mut table, 73, self.list());
        put(&mut table, 74, [u32le(1), u32le(1), vec![0; 12]].concat());
        if let Some(reference) = reference {
            let note_len = (ccp_ftn - 1) as u32;
            put(
                &mut table,
                2,
                [u32le(reference), u32le(ccp_text as u32), vec![1, 0]].concat(),
            );
            put(
                &mut table,
                3,
                [u32le(0), u32le(note_len), u32le(note_len + 1)].concat(),
            );
        }
        self.write_fib(&mut word, ccp_text as u32, ccp_ftn as u32, &spans);
        (word, table)
    }

    fn write_fib(&self, word: &mut [u8], ccp_text: u32, ccp_ftn: u32, spans: &[(u32, u32)]) {
        let mut fib = Vec::new();
        fib.extend(u16le(0xA5EC));
        fib.extend(u16le(self.n_fib));
        fib.extend([0; 6]);
        fib.extend(u16le(if self.encrypted { 1 << 8 } else { 0 }));
        fib.resize(32, 0);
        fib.extend(u16le(14));
        fib.extend([0; 28]);
        fib.extend(u16le(22));
        let mut longs = [0u32; 22];
        longs[3] = ccp_text;
        longs[4] = ccp_ftn;
        longs.iter().for_each(|l| fib.extend(u32le(*l)));
        fib.extend(u16le(FC_LCB_PAIRS as u16));
        for (offset, len) in spans {
            fib.extend(u32le(*offset));
            fib.extend(u32le(*len));
        }
        word[..fib.len()].copy_from_slice(&fib);
    }

    /// One `PapxFkp`: a run per paragraph (the footnote's too).
    fn papx_page(&self, pieces: &[(u32, u32, bool, u32)]) -> Vec<u8> {
        let mut page = vec![0u8; 512];
        let runs = pieces.len();
        page[511] = runs as u8;
        let mut papx_at = 510;
        for (i, &(_, fc, _, end)) in pieces.iter().enumerate() {
            page[i * 4..i * 4 + 4].copy_from_slice(&u32le(fc));
            page[i * 4 + 4..i * 4 + 8].copy_from_slice(&u32le(end));
            let (istd, grpprl) = match self.paragraphs.get(i) {
                Some(p) => (p.istd, p.grpprl.clone()),
                None => (0, Vec::new()),
            };
            let mut data = [u16le(istd), grpprl].concat();
            if data.len() % 2 == 1 {
                data.push(0);
            }
            let record = [vec![0, (data.len() / 2) as u8], data].concat();
            papx_at -= record.len();
            papx_at -= papx_at % 2;
            page[papx_at..papx_at + record.len()].copy_from_slice(&record);
            page[(runs + 1) * 4 + i * 13] = (papx_at / 2) as u8;
        }
        page
    }

    fn style_sheet(&self) -> Vec<u8> {
        let mut stsh = u16le(18);
        stsh.extend(u16le(self.styles.len() as u16));
        stsh.extend(u16le(10));
        stsh.extend([0; 14]);
        for (istd, style) in self.styles.iter().enumerate() {
            let base: u16 = if istd == 0 { 0x0FFF } else { 0 };
            let mut std = u16le(style.sti);
            std.extend(u16le(1 | base << 4));
            std.extend(u16le(2));
            std.extend([0; 4]);
            let name: Vec<u16> = style.name.encode_utf16().collect();
            std.extend(u16le(name.len() as u16));
            name.iter().for_each(|u| std.extend(u16le(*u)));
            std.extend(u16le(0));
            std.extend(u16le(2));
            std.extend(u16le(istd as u16));
            std.extend(u16le(0));
            stsh.extend(u16le(std.len() as u16));
            stsh.extend(std);
        }
        stsh
    }

    /// One simple list (lsid 1) of one level, in `list_format`.
    fn list(&self) -> Vec<u8> {
        let mut plf = u16le(1);
        let mut lstf = u32le(1);
        lstf.resize(26, 0);
        lstf.extend([1, 0]);
        plf.extend(lstf);
        let mut lvlf = u32le(1);
        lvlf.extend([self.list_format]);
        lvlf.resize(28, 0);
        plf.extend(lvlf);
        plf.extend(u16le(0));
        plf
    }

    /// A property set of the title and author, in code page 1252.
    pub fn summary(&self) -> Vec<u8> {
        let texts: Vec<(u32, &str)> = [(2, &self.title), (4, &self.author)]
            .into_iter()
            .filter_map(|(id, text)| Some((id, text.as_deref()?)))
            .collect();
        let mut values = Vec::new();
        let mut entries = Vec::new();
        let header = 8 + 8 * texts.len();
        for (id, text) in texts {
            entries.extend(u32le(id));
            entries.extend(u32le((header + values.len()) as u32));
            let (bytes, _, _) = encoding_rs::WINDOWS_1252.encode(text);
            let mut value = [u32le(0x1E), u32le(bytes.len() as u32 + 1)].concat();
            value.extend(bytes.iter());
            value.push(0);
            value.resize(value.len().div_ceil(4) * 4, 0);
            values.extend(value);
        }
        let set = [
            u32le((header + values.len()) as u32),
            u32le((entries.len() / 8) as u32),
            entries,
            values,
        ]
        .concat();
        let mut stream = vec![0xFE, 0xFF, 0, 0];
        stream.resize(24, 0);
        stream.extend(u32le(1));
        stream.extend([0; 16]);
        stream.extend(u32le(48));
        stream.extend(set);
        stream
    }
}

fn clx(pieces: &[(u32, u32, bool, u32)], cp_end: u32) -> Vec<u8> {
    let mut plc = Vec::new();
    pieces.iter().for_each(|p| plc.extend(u32le(p.0)));
    plc.extend(u32le(cp_end));
    for &(_, fc, compressed, _) in pieces {
        plc.extend(u16le(0));
        plc.extend(u32le(if compressed { (fc * 2) | (1 << 30) } else { fc }));
        plc.extend(u16le(0));
    }
    [vec![0x02], u32le(plc.len() as u32), plc].concat()
}

fn u16le(n: u16) -> Vec<u8> {
    n.to_le_bytes().to_vec()
}

fn u32le(n: u32) -> Vec<u8> {
    n.to_le_bytes().to_vec()
}
