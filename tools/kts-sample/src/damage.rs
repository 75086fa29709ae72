//! Damaged and hostile documents, for testing that readers fail safely.

use std::collections::BTreeSet;

use crate::outline::Outline;
use crate::package::{self, Part};
use crate::png::{crc32, splitmix64};

/// The first `keep_fraction` of `bytes` (clamped to 0..=1). A non-empty input
/// always loses at least its last byte, so the result is truly truncated.
pub fn truncated(bytes: &[u8], keep_fraction: f64) -> Vec<u8> {
    let keep = (bytes.len() as f64 * keep_fraction.clamp(0.0, 1.0)) as usize;
    bytes[..keep.min(bytes.len().saturating_sub(1))].to_vec()
}

/// `bytes` with `count` distinct bits flipped at positions chosen from `seed`
/// (deterministic). The first 8 bytes (a format's signature) are left alone
/// when the input is longer than that, so the copy is still recognised as its
/// format and has to be rejected as corrupt.
pub fn bit_flipped(bytes: &[u8], seed: u64, count: usize) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let skip = if bytes.len() > 8 { 8 } else { 0 };
    let bits = (bytes.len() - skip) * 8;
    let mut chosen = BTreeSet::new();
    let mut state = seed;
    while chosen.len() < count.min(bits) {
        state = splitmix64(state);
        chosen.insert((state % bits as u64) as usize);
    }
    for bit in chosen {
        out[skip + bit / 8] ^= 1 << (bit % 8);
    }
    out
}

/// Where the bomb's text run starts and ends inside word/document.xml.
const BOMB_PREFIX: &str = concat!(
    r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>"#,
    r#"<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t xml:space="preserve">"#
);
const BOMB_SUFFIX: &str = "</w:t></w:r></w:p></w:body></w:document>";
/// Deflate matches of 258 bytes in the bomb: about 1 GiB of spaces.
const BOMB_MATCHES: u64 = (1 << 30) / 258;

/// The uncompressed size of word/document.xml in [`zip_bomb_docx`].
pub const ZIP_BOMB_ENTRY_SIZE: u64 =
    BOMB_PREFIX.len() as u64 + 1 + 258 * BOMB_MATCHES + BOMB_SUFFIX.len() as u64;

/// A docx-shaped zip (about 1 MiB) whose word/document.xml inflates to about
/// 1 GiB ([`ZIP_BOMB_ENTRY_SIZE`] bytes): well-formed XML whose one text run
/// is a billion spaces. The deflate stream is written by hand (deflate's best
/// case: two bits per 258-byte match) and the zip's headers declare the true
/// sizes and CRC, so a reader must enforce its own decompression limit.
pub fn zip_bomb_docx() -> Vec<u8> {
    let content_types = concat!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">"#,
        r#"<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>"#,
        r#"<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>"#
    );
    let rels = concat!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">"#,
        r#"<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>"#
    );
    let mut zip = RawZip::default();
    zip.stored("[Content_Types].xml", content_types.as_bytes());
    zip.stored("_rels/.rels", rels.as_bytes());
    zip.deflated(
        "word/document.xml",
        &bomb_deflate(),
        bomb_crc(),
        ZIP_BOMB_ENTRY_SIZE as u32,
    );
    zip.finish()
}

/// CRC-32 of the bomb's document.xml, computed by streaming it through crc32fast.
fn bomb_crc() -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(BOMB_PREFIX.as_bytes());
    let spaces = vec![b' '; 1 << 16];
    let mut left = 1 + 258 * BOMB_MATCHES;
    while left > 0 {
        let n = left.min(spaces.len() as u64);
        hasher.update(&spaces[..n as usize]);
        left -= n;
    }
    hasher.update(BOMB_SUFFIX.as_bytes());
    hasher.finalize()
}

/// Raw deflate: the prefix as fixed-Huffman literals, then a dynamic-Huffman
/// block of one space and [`BOMB_MATCHES`] (length 258, distance 1) matches,
/// then the suffix as fixed-Huffman literals.
fn bomb_deflate() -> Vec<u8> {
    let mut bits = BitWriter::default();
    fixed_literals(&mut bits, BOMB_PREFIX.as_bytes(), false);
    // Dynamic block header: BFINAL=0, BTYPE=10, HLIT=286-257, HDIST=1-1, HCLEN=18-4.
    bits.put(0, 1);
    bits.put(2, 2);
    bits.put(29, 5);
    bits.put(0, 5);
    bits.put(14, 4);
    // Code-length code lengths in the order 16,17,18,0,8,7,9,6,10,5,11,4,12,3,13,2,14,1:
    // symbol 18 gets 1 bit, symbols 1 and 2 get 2 bits.
    for len in [0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 2] {
        bits.put(len, 3);
    }
    // Canonical code-length codes: 18 -> 0, 1 -> 10, 2 -> 11.
    // Literal/length lengths: ' ' (32) -> 2, 256 (end) -> 2, 285 (length 258) -> 1.
    zero_lengths(&mut bits, 32);
    bits.huffman(0b11, 2);
    zero_lengths(&mut bits, 138);
    zero_lengths(&mut bits, 85);
    bits.huffman(0b11, 2);
    zero_lengths(&mut bits, 28);
    bits.huffman(0b10, 2);
    bits.huffman(0b10, 2); // the single distance code (distance 1) -> 1 bit
    // Codes: 285 -> 0, ' ' -> 10, 256 -> 11; distance 0 -> 0.
    bits.huffman(0b10, 2);
    bits.zeros(2 * BOMB_MATCHES); // each match is "0" (length 258) + "0" (distance 1)
    bits.huffman(0b11, 2);
    fixed_literals(&mut bits, BOMB_SUFFIX.as_bytes(), true);
    bits.finish()
}

/// Code-length symbol 18: a run of `n` (11..=138) zero lengths.
fn zero_lengths(bits: &mut BitWriter, n: u32) {
    bits.huffman(0, 1);
    bits.put(n - 11, 7);
}

/// A fixed-Huffman block of ASCII literals (all below 144: 8-bit codes 0x30 + byte).
fn fixed_literals(bits: &mut BitWriter, bytes: &[u8], last: bool) {
    bits.put(u32::from(last), 1);
    bits.put(1, 2);
    for &b in bytes {
        bits.huffman(0x30 + u32::from(b), 8);
    }
    bits.huffman(0, 7); // end of block
}

/// Deflate's bit order: values least significant bit first, Huffman codes
/// most significant bit first.
#[derive(Default)]
struct BitWriter {
    out: Vec<u8>,
    acc: u32,
    count: u32,
}

impl BitWriter {
    fn put(&mut self, value: u32, bits: u32) {
        for i in 0..bits {
            self.acc |= ((value >> i) & 1) << self.count;
            self.count += 1;
            if self.count == 8 {
                self.out.push(self.acc as u8);
                self.acc = 0;
                self.count = 0;
            }
        }
    }

    fn huffman(&mut self, code: u32, bits: u32) {
        let reversed = (0..bits).fold(0, |r, i| r | ((code >> i) & 1) << (bits - 1 - i));
        self.put(reversed, bits);
    }

    fn zeros(&mut self, mut n: u64) {
        while n > 0 && self.count != 0 {
            self.put(0, 1);
            n -= 1;
        }
        self.out.resize(self.out.len() + (n / 8) as usize, 0);
        self.put(0, (n % 8) as u32);
    }

    fn finish(mut self) -> Vec<u8> {
        if self.count > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}

/// A minimal zip writer for entries whose data is already prepared.
#[derive(Default)]
struct RawZip {
    out: Vec<u8>,
    central: Vec<u8>,
    entries: u16,
}

impl RawZip {
    fn stored(&mut self, name: &str, data: &[u8]) {
        self.entry(name, 0, data, crc32(data), data.len() as u32);
    }

    fn deflated(&mut self, name: &str, data: &[u8], crc: u32, size: u32) {
        self.entry(name, 8, data, crc, size);
    }

    fn entry(&mut self, name: &str, method: u16, data: &[u8], crc: u32, size: u32) {
        let offset = self.out.len() as u32;
        // version, flags, method, time, date (1980-01-01), crc, sizes, name length, extra length
        let fields = |buf: &mut Vec<u8>| {
            for v in [20u16, 0, method, 0, 0x21] {
                buf.extend_from_slice(&v.to_le_bytes());
            }
            for v in [crc, data.len() as u32, size] {
                buf.extend_from_slice(&v.to_le_bytes());
            }
            buf.extend_from_slice(&(name.len() as u16).to_le_bytes());
            buf.extend_from_slice(&0u16.to_le_bytes());
        };
        self.out.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        fields(&mut self.out);
        self.out.extend_from_slice(name.as_bytes());
        self.out.extend_from_slice(data);
        self.central
            .extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        self.central.extend_from_slice(&20u16.to_le_bytes()); // made by
        fields(&mut self.central);
        for v in [0u16, 0, 0] {
            self.central.extend_from_slice(&v.to_le_bytes()); // comment, disk, internal attrs
        }
        self.central.extend_from_slice(&0u32.to_le_bytes()); // external attrs
        self.central.extend_from_slice(&offset.to_le_bytes());
        self.central.extend_from_slice(name.as_bytes());
        self.entries += 1;
    }

    fn finish(mut self) -> Vec<u8> {
        let offset = self.out.len() as u32;
        let size = self.central.len() as u32;
        self.out.append(&mut self.central);
        self.out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
        for v in [0u16, 0, self.entries, self.entries] {
            self.out.extend_from_slice(&v.to_le_bytes());
        }
        self.out.extend_from_slice(&size.to_le_bytes());
        self.out.extend_from_slice(&offset.to_le_bytes());
        self.out.extend_from_slice(&0u16.to_le_bytes());
        self.out
    }
}

/// An OLE compound file as Office writes for a password-protected OOXML
/// document: a CFB header (`D0 CF 11 E0 A1 B1 1A E1`), a FAT, a directory
/// with "Root Entry", "EncryptionInfo" and "EncryptedPackage" (UTF-16LE
/// names), and the two streams (4 KiB each, so no mini stream is needed).
/// The encryption data is a stub; nothing can be decrypted.
pub fn encrypted_office() -> Vec<u8> {
    const SECTOR: usize = 512;
    const STREAM_SECTORS: u32 = 8; // 4096 bytes per stream
    let mut file = cfb_header();
    // Sector 0: the FAT. Sector 1: the directory. Sectors 2..10: EncryptionInfo, 10..18: EncryptedPackage.
    let mut fat = vec![0xffff_fffdu32, 0xffff_fffe];
    for first in [2, 2 + STREAM_SECTORS] {
        fat.extend((first + 1..first + STREAM_SECTORS).chain([0xffff_fffe]));
    }
    fat.resize(SECTOR / 4, 0xffff_ffff);
    file.extend(fat.iter().flat_map(|v| v.to_le_bytes()));
    let mut directory = Vec::new();
    directory.extend(dir_entry(
        "Root Entry",
        5,
        [u32::MAX, u32::MAX, 1],
        0xffff_fffe,
        0,
    ));
    directory.extend(dir_entry(
        "EncryptionInfo",
        2,
        [u32::MAX, 2, u32::MAX],
        2,
        4096,
    ));
    directory.extend(dir_entry(
        "EncryptedPackage",
        2,
        [u32::MAX, u32::MAX, u32::MAX],
        2 + STREAM_SECTORS,
        4096,
    ));
    directory.extend(dir_entry("", 0, [u32::MAX; 3], 0, 0));
    file.extend(directory);
    file.extend(padded(encryption_info(), 4096));
    file.extend(padded(encrypted_package(), 4096));
    file
}

fn cfb_header() -> Vec<u8> {
    let mut h = vec![0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];
    h.extend([0u8; 16]); // CLSID
    for v in [0x003eu16, 3, 0xfffe, 9, 6] {
        h.extend(v.to_le_bytes()); // minor, major version, byte order, sector shift, mini sector shift
    }
    h.extend([0u8; 6]); // reserved
    // directory sectors (0 in v3), FAT sectors, first directory sector, transaction,
    // mini stream cutoff, first mini FAT, mini FAT sectors, first DIFAT, DIFAT sectors
    for v in [0u32, 1, 1, 0, 4096, 0xffff_fffe, 0, 0xffff_fffe, 0] {
        h.extend(v.to_le_bytes());
    }
    h.extend(0u32.to_le_bytes()); // DIFAT[0]: the FAT is sector 0
    h.resize(512, 0xff);
    h
}

/// A 128-byte directory entry; `links` = [left sibling, right sibling, child].
fn dir_entry(name: &str, kind: u8, links: [u32; 3], start: u32, size: u32) -> Vec<u8> {
    let mut e: Vec<u8> = name.encode_utf16().flat_map(u16::to_le_bytes).collect();
    let name_len = if name.is_empty() {
        0
    } else {
        e.len() as u16 + 2
    };
    e.resize(64, 0);
    e.extend(name_len.to_le_bytes());
    e.extend([kind, 1]); // object type, colour black
    links.iter().for_each(|l| e.extend(l.to_le_bytes()));
    e.extend([0u8; 16 + 4 + 16]); // CLSID, state bits, creation and modification times
    e.extend(start.to_le_bytes());
    e.extend(u64::from(size).to_le_bytes());
    e
}

/// Agile encryption header (version 4.4) with a stub XML descriptor.
fn encryption_info() -> Vec<u8> {
    let mut info = Vec::new();
    info.extend(4u16.to_le_bytes());
    info.extend(4u16.to_le_bytes());
    info.extend(0x40u32.to_le_bytes());
    info.extend_from_slice(concat!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>"#,
        r#"<encryption xmlns="http://schemas.microsoft.com/office/2006/encryption" "#,
        r#"xmlns:p="http://schemas.microsoft.com/office/2006/keyEncryptor/password">"#,
        r#"<keyData saltSize="16" blockSize="16" keyBits="256" hashSize="64" cipherAlgorithm="AES" cipherChaining="ChainingModeCBC" hashAlgorithm="SHA512" saltValue="AAAAAAAAAAAAAAAAAAAAAA=="/>"#,
        "</encryption>"
    ).as_bytes());
    info
}

fn encrypted_package() -> Vec<u8> {
    let mut package = 4000u64.to_le_bytes().to_vec();
    let mut state = 0x6b74_7321;
    while package.len() < 4096 {
        state = splitmix64(state);
        package.extend(state.to_le_bytes());
    }
    package
}

fn padded(mut bytes: Vec<u8>, len: usize) -> Vec<u8> {
    bytes.resize(len, 0);
    bytes
}

/// A valid docx whose document.xml.rels has a `subDocument` relationship with
/// `TargetMode="External"` to `file:///etc/passwd`, used by a `w:subDoc` in
/// the body: a reader must never follow it.
pub fn external_reference_docx() -> Vec<u8> {
    let outline = Outline::new("External reference")
        .paragraph("This document pulls in a local file by reference.");
    let parts: Vec<Part> = crate::docx::docx_parts(&outline)
        .into_iter()
        .map(|(name, bytes)| {
            let bytes = match name.as_str() {
                "word/_rels/document.xml.rels" => with_external_rel(&bytes),
                "word/document.xml" => with_sub_doc(&bytes),
                _ => bytes,
            };
            (name, bytes)
        })
        .collect();
    package::zip_parts(&parts).unwrap_or_default()
}

const EXTERNAL_REL: &str = concat!(
    r#"<Relationship Id="rIdExternal1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/subDocument" "#,
    r#"Target="file:///etc/passwd" TargetMode="External" />"#
);

fn with_external_rel(rels: &[u8]) -> Vec<u8> {
    String::from_utf8_lossy(rels)
        .replacen(
            "</Relationships>",
            &format!("{EXTERNAL_REL}</Relationships>"),
            1,
        )
        .into_bytes()
}

fn with_sub_doc(document: &[u8]) -> Vec<u8> {
    String::from_utf8_lossy(document)
        .replacen(
            "<w:body>",
            r#"<w:body><w:p><w:subDoc r:id="rIdExternal1" /></w:p>"#,
            1,
        )
        .into_bytes()
}
