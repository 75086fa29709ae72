mod common;

use std::io::{Cursor, Read};
use std::time::Instant;

use common::{assert_well_formed, relationship_targets, text, unzip_map};
use kts_sample::damage::{self, ZIP_BOMB_ENTRY_SIZE};
use kts_sample::{Outline, to_pdf};

#[test]
fn truncated_is_a_shorter_prefix() {
    let pdf = to_pdf(&Outline::new("T").paragraph("text")).unwrap();
    let half = damage::truncated(&pdf, 0.5);
    assert_eq!(half.len(), pdf.len() / 2);
    assert!(pdf.starts_with(&half));
    assert_eq!(damage::truncated(&pdf, 1.0).len(), pdf.len() - 1);
    assert!(damage::truncated(&pdf, 0.0).is_empty());
    assert!(damage::truncated(&[], 0.5).is_empty());
}

#[test]
fn bit_flipped_is_deterministic_and_flips_exactly_count_bits() {
    let original: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
    let a = damage::bit_flipped(&original, 9, 20);
    assert_eq!(a, damage::bit_flipped(&original, 9, 20));
    assert_ne!(a, damage::bit_flipped(&original, 10, 20));
    let flipped: u32 = a
        .iter()
        .zip(&original)
        .map(|(x, y)| (x ^ y).count_ones())
        .sum();
    assert_eq!(flipped, 20);
    assert_eq!(a[..8], original[..8], "signature kept");
    assert_eq!(
        damage::bit_flipped(b"abc", 1, 100)
            .iter()
            .zip(b"abc")
            .map(|(x, y)| (x ^ y).count_ones())
            .sum::<u32>(),
        24
    );
}

#[test]
fn zip_bomb_is_small_but_inflates_to_a_gibibyte() {
    let start = Instant::now();
    let bomb = damage::zip_bomb_docx();
    let built_in = start.elapsed();
    assert!(built_in.as_secs_f64() < 10.0, "took {built_in:?}");
    assert!(bomb.len() < 2 << 20, "{} bytes on disk", bomb.len());
    const { assert!(ZIP_BOMB_ENTRY_SIZE > 1 << 30) };

    let mut archive = zip::ZipArchive::new(Cursor::new(&bomb)).expect("a valid zip");
    assert!(archive.by_name("[Content_Types].xml").is_ok());
    let entry = archive.by_name("word/document.xml").unwrap();
    assert_eq!(entry.size(), ZIP_BOMB_ENTRY_SIZE, "declared size");

    // Stream with a cap, as a careful reader would: it never stops on its own.
    let mut capped = Vec::new();
    entry.take(1 << 20).read_to_end(&mut capped).unwrap();
    assert_eq!(capped.len(), 1 << 20);
    assert!(capped.starts_with(b"<?xml") && capped.ends_with(b"    "));
}

#[test]
fn zip_bomb_full_inflation_matches_declared_size_and_crc() {
    let bomb = damage::zip_bomb_docx();
    let mut archive = zip::ZipArchive::new(Cursor::new(&bomb)).unwrap();
    let mut entry = archive.by_name("word/document.xml").unwrap();
    let mut buf = vec![0u8; 1 << 20];
    let (mut total, mut tail) = (0u64, Vec::new());
    loop {
        // The zip crate checks the CRC at the end of the entry and errors if it is wrong.
        let n = entry.read(&mut buf).expect("inflates with a correct CRC");
        if n == 0 {
            break;
        }
        total += n as u64;
        tail = buf[n.saturating_sub(64)..n].to_vec();
    }
    assert_eq!(total, ZIP_BOMB_ENTRY_SIZE);
    assert!(String::from_utf8_lossy(&tail).ends_with("</w:t></w:r></w:p></w:body></w:document>"));
}

#[test]
fn encrypted_office_looks_like_a_protected_ooxml_file() {
    let file = damage::encrypted_office();
    assert!(file.starts_with(&[0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]));
    assert_eq!(file.len() % 512, 0);
    for name in ["EncryptionInfo", "EncryptedPackage"] {
        let utf16: Vec<u8> = name.encode_utf16().flat_map(u16::to_le_bytes).collect();
        assert!(
            file.windows(utf16.len()).any(|w| w == utf16.as_slice()),
            "no {name}"
        );
    }
    assert!(
        zip::ZipArchive::new(Cursor::new(&file)).is_err(),
        "not a zip"
    );
    assert_eq!(file, damage::encrypted_office());
}

#[test]
fn external_reference_docx_points_at_a_local_file() {
    let parts = unzip_map(&damage::external_reference_docx());
    let rels = text(&parts, "word/_rels/document.xml.rels");
    assert_well_formed("rels", &rels);
    assert!(relationship_targets(&rels).contains(&("file:///etc/passwd".to_string(), true)));
    assert!(rels.contains("relationships/subDocument"));
    let document = text(&parts, "word/document.xml");
    assert_well_formed("document", &document);
    assert!(document.contains("<w:subDoc r:id=\"rIdExternal1\" />"));
}
