use kts_record::ErrorCode;

use super::writer::{CELL, Doc, IN_TABLE};
use super::*;

fn run(bytes: &[u8]) -> Result<Converted, ConvertError> {
    convert(bytes)
}

/// A report: a title, a localised heading, text with a field, a table, a
/// list, a footnote; 8-bit and UTF-16 pieces.
fn report() -> Doc {
    let mut doc = Doc::default();
    let title = doc.style(62, "Title");
    let heading = doc.style(1, "heading 1");
    let localised = doc.style(4094, "Επικεφαλίδα 2,Greek");
    doc.para("Quarterly report", title)
        .para("Überblick", heading)
        .para(
            "Sales rose 5% in \u{13} PAGE \u{14}3\u{15} weeks\u{1F} per \u{13}HYPERLINK \"http://x\"\u{14}region\u{15}.",
            0,
        )
        .para("Σύνοψη", localised)
        .para("Ελληνικά κείμενα και café", 0)
        .row(&["Region", "Sales"])
        .row(&["North", "12"])
        .row(&["South\u{0B}East", "7"])
        .item("first")
        .item("second")
        .para("The end\u{01}.", 0);
    doc.footnote = Some((2, "Unaudited figures.".into()));
    doc.title = Some("Report Q3".into());
    doc.author = Some("Zoë Müller".into());
    doc
}

#[test]
fn text_headings_tables_lists_fields_and_footnotes() {
    let out = run(&report().to_bytes()).unwrap();
    assert_eq!(
        out.markdown,
        "# Quarterly report\n\n\
         # Überblick\n\n\
         Sales rose 5% in 3 weeks per region.[^1]\n\n\
         [^1]: Unaudited figures.\n\n\
         ## Σύνοψη\n\n\
         Ελληνικά κείμενα και café\n\n\
         | Region | Sales |\n| --- | --- |\n| North | 12 |\n| South East | 7 |\n\n\
         1. first\n2. second\n\n\
         The end.\n"
    );
    assert_eq!(out.title.as_deref(), Some("Quarterly report"));
    assert_eq!(out.properties["author"], "Zoë Müller");
}

#[test]
fn bullets_line_breaks_and_the_summary_title() {
    let mut doc = Doc {
        list_format: 0x17,
        ..Doc::default()
    };
    doc.para("One\u{0B}two\u{1E}three\u{2011}four", 0)
        .item("a")
        .item("b");
    doc.title = Some("From the properties".into());
    let out = run(&doc.to_bytes()).unwrap();
    assert_eq!(out.markdown, "One\ntwo-three-four\n\n- a\n- b\n");
    assert_eq!(out.title.as_deref(), Some("From the properties"));
}

#[test]
fn nested_fields_keep_only_their_results() {
    let mut doc = Doc::default();
    doc.para(
        "A \u{13}IF \u{13}DATE\u{14}1 May\u{15} = x\u{14}outer \u{13}REF b\u{14}inner\u{15} result\u{15} B \u{13}TC \"no result\"\u{15}C",
        0,
    );
    assert_eq!(
        run(&doc.to_bytes()).unwrap().markdown,
        "A outer inner result B C\n"
    );
}

#[test]
fn a_nested_table_is_read_into_its_cell() {
    let mut doc = Doc::default();
    let nested = [IN_TABLE.to_vec(), vec![0x49, 0x66, 2, 0, 0, 0]].concat();
    doc.push("Outer", CELL, 0, IN_TABLE.to_vec())
        .push("inner", 0x0D, 0, nested.clone())
        .push("", CELL, 0, IN_TABLE.to_vec())
        .row(&[]);
    assert_eq!(
        run(&doc.to_bytes()).unwrap().markdown,
        "| Outer | inner |\n| --- | --- |\n"
    );
}

#[test]
fn encrypted_word6_and_empty_documents_get_their_error_codes() {
    let mut doc = report();
    doc.encrypted = true;
    let e = run(&doc.to_bytes()).unwrap_err();
    assert_eq!(e.code, ErrorCode::Encrypted);

    let mut doc = report();
    doc.n_fib = 0x0068;
    let e = run(&doc.to_bytes()).unwrap_err();
    assert_eq!(e.code, ErrorCode::Unsupported);
    assert!(e.message.contains("Word 95"), "{}", e.message);

    let mut doc = Doc::default();
    doc.para("  ", 0);
    assert_eq!(run(&doc.to_bytes()).unwrap_err().code, ErrorCode::Empty);
}

#[test]
fn damaged_documents_give_errors_never_a_panic() {
    // `read`, not `convert`: its own code must not panic, whatever the
    // guard around the compound-file reader would catch.
    let bytes = report().to_bytes();
    for cut in (0..bytes.len()).step_by(97) {
        let _ = read(&bytes[..cut]);
    }
    assert_eq!(
        run(&bytes[..bytes.len() / 2]).unwrap_err().code,
        ErrorCode::Corrupt
    );
    // Flip bytes all over the streams: every outcome is a clean result.
    for at in (512..bytes.len()).step_by(7) {
        let mut damaged = bytes.clone();
        damaged[at] ^= 0xFF;
        let _ = read(&damaged);
    }
}

#[test]
fn piece_tables_past_the_stream_or_going_backwards_are_corrupt() {
    let (word, table) = report().streams();
    let clx_at = 0x9A + 33 * 8;
    let at = u32::from_le_bytes(word[clx_at..clx_at + 4].try_into().unwrap()) as usize;
    // The first piece's FC far past the end.
    let mut past = table.clone();
    let first_pcd = at + 5 + 4 * (count_pieces(&table, at) + 1) + 2;
    past[first_pcd..first_pcd + 4].copy_from_slice(&0x3FFF_0000u32.to_le_bytes());
    // The second CP back below the first: a loop.
    let mut backwards = table.clone();
    backwards[at + 5 + 4..at + 5 + 8].copy_from_slice(&0u32.to_le_bytes());
    for table in [past, backwards] {
        let e = read_streams(&word, &table).unwrap_err();
        assert_eq!(e.code, ErrorCode::Corrupt);
        assert!(e.message.contains("piece table"), "{}", e.message);
    }
}

fn count_pieces(table: &[u8], at: usize) -> usize {
    let len = u32::from_le_bytes(table[at + 1..at + 5].try_into().unwrap()) as usize;
    (len - 4) / 12
}

/// Converts a compound file of these two streams.
fn read_streams(word: &[u8], table: &[u8]) -> Result<Converted, ConvertError> {
    use std::io::Write;
    let mut file = cfb::CompoundFile::create(Cursor::new(Vec::new())).unwrap();
    file.create_stream("/WordDocument")
        .unwrap()
        .write_all(word)
        .unwrap();
    file.create_stream("/0Table")
        .unwrap()
        .write_all(table)
        .unwrap();
    file.flush().unwrap();
    run(&file.into_inner().into_inner())
}
