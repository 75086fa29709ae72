use kts_record::ErrorCode;

use super::writer::{BODY, OTHER, Presentation, Slide, TITLE, Text};
use super::*;
use crate::formats::doc::writer::Doc;

fn run(bytes: &[u8]) -> Result<Converted, ConvertError> {
    convert(bytes)
}

/// Two slides: titles and a body in the slide list (UTF-16 and 8-bit), a
/// text box of the drawing's own, notes on both.
fn deck() -> Presentation {
    let first = Slide {
        listed: vec![
            Text::new(TITLE, "Quarterly review"),
            Text::new(BODY, "Sales rose\rCosts fell\r").eight_bit(),
        ],
        boxes: vec![Text::new(OTHER, "Draft – do not share")],
        notes: Some("Say hello.\rThen go on.".into()),
        ..Slide::default()
    };
    let second = Slide {
        listed: vec![Text::new(TITLE, "Ausblick für 2027").eight_bit()],
        notes: Some("Ask for questions.".into()),
        ..Slide::default()
    };
    Presentation {
        slides: vec![first, second],
        ..Presentation::default()
    }
}

#[test]
fn slides_titles_bodies_text_boxes_and_notes() {
    let out = run(&deck().to_bytes()).unwrap();
    assert_eq!(
        out.markdown,
        "<!-- slide: 1 -->\n\n## Quarterly review\n\n\
         - Sales rose\n- Costs fell\n\n\
         Draft – do not share\n\n\
         ### Notes\n\nSay hello.\n\nThen go on.\n\n\
         <!-- slide: 2 -->\n\n## Ausblick für 2027\n\n\
         ### Notes\n\nAsk for questions.\n"
    );
    assert_eq!(out.title.as_deref(), Some("Quarterly review"));
    assert_eq!(out.properties["slides"], 2);
}

#[test]
fn field_characters_are_left_out_and_boxes_of_only_fields_with_them() {
    const SLIDE_NUMBER: u16 = 0x0FD8;
    const FOOTER: u16 = 0x0FFA;
    let deck = Presentation {
        slides: vec![Slide {
            listed: vec![Text::new(TITLE, "Scope")],
            boxes: vec![
                Text::new(OTHER, "*").field(FOOTER, 0),
                Text::new(OTHER, "Page * of 3").field(SLIDE_NUMBER, 5),
            ],
            notes: Some("Mention the budget.".into()),
            notes_boxes: vec![Text::new(OTHER, "*").field(SLIDE_NUMBER, 0)],
            ..Slide::default()
        }],
        ..Presentation::default()
    };
    assert_eq!(
        run(&deck.to_bytes()).unwrap().markdown,
        "<!-- slide: 1 -->\n\n## Scope\n\nPage of 3\n\n### Notes\n\nMention the budget.\n"
    );
}

#[test]
fn paragraph_styles_set_bullets_and_levels_and_line_breaks_are_kept() {
    // "Intro\rpoint\rdetail\r" in runs: no bullet; bullet; level 1.
    let body = Text::new(BODY, "Intro\rpoint\rdetail\r").runs(&[
        (6, 0, Some(false)),
        (6, 0, None),
        (8, 1, Some(true)),
    ]);
    let other = Text::new(OTHER, "One\u{0B}two\rthree").runs(&[(4, 0, None), (10, 0, Some(true))]);
    let deck = Presentation {
        slides: vec![Slide {
            listed: vec![body],
            boxes: vec![other],
            ..Slide::default()
        }],
        ..Presentation::default()
    };
    assert_eq!(
        run(&deck.to_bytes()).unwrap().markdown,
        "<!-- slide: 1 -->\n\n\
         Intro\n\n- point\n    - detail\n\n\
         One\ntwo\n\n- three\n"
    );
}

#[test]
fn tables_come_out_as_markdown_tables_with_merged_cells_repeated() {
    let cell = |left, top, right, bottom, text: &str| ([left, top, right, bottom], text.to_owned());
    let deck = Presentation {
        slides: vec![Slide {
            listed: vec![Text::new(TITLE, "Results")],
            tables: vec![vec![
                cell(0, 0, 200, 50, "Both years"),
                cell(0, 50, 100, 100, "2025"),
                cell(100, 50, 200, 100, "2026"),
                cell(0, 100, 100, 150, "12"),
                cell(100, 100, 200, 150, "15 | up"),
            ]],
            ..Slide::default()
        }],
        ..Presentation::default()
    };
    assert_eq!(
        run(&deck.to_bytes()).unwrap().markdown,
        "<!-- slide: 1 -->\n\n## Results\n\n\
         | Both years | Both years |\n| --- | --- |\n| 2025 | 2026 |\n| 12 | 15 \\| up |\n"
    );
}

#[test]
fn the_summary_gives_the_title_of_an_untitled_deck_and_a_deck_without_slides() {
    let summary = Doc {
        title: Some("From the properties".into()),
        author: Some("Zoë Müller".into()),
        ..Doc::default()
    }
    .summary();
    let mut untitled = Presentation {
        slides: vec![Slide {
            listed: vec![Text::new(BODY, "Only a body")],
            ..Slide::default()
        }],
        ..Presentation::default()
    };
    untitled
        .streams
        .push(("/\u{5}SummaryInformation".into(), summary));
    let out = run(&untitled.to_bytes()).unwrap();
    assert_eq!(out.title.as_deref(), Some("From the properties"));
    assert_eq!(out.properties["author"], "Zoë Müller");
    assert_eq!(out.markdown, "<!-- slide: 1 -->\n\n- Only a body\n");

    untitled.slides.clear();
    let out = run(&untitled.to_bytes()).unwrap();
    assert_eq!(out.markdown, "# From the properties\n");
    assert_eq!(out.properties["slides"], 0);
}

#[test]
fn without_a_current_user_stream_the_first_document_record_is_read() {
    let (document, _) = deck().streams();
    let out = read_streams(&[("/PowerPoint Document", &document)]).unwrap();
    // The slide list only: the text box and the notes need the persist directory.
    assert_eq!(
        out.markdown,
        "<!-- slide: 1 -->\n\n## Quarterly review\n\n- Sales rose\n- Costs fell\n\n\
         <!-- slide: 2 -->\n\n## Ausblick für 2027\n"
    );
}

#[test]
fn encrypted_presentations_get_their_error_code() {
    let locked = Presentation {
        encrypted: true,
        ..deck()
    };
    assert_eq!(
        run(&locked.to_bytes()).unwrap_err().code,
        ErrorCode::Encrypted
    );
    let mut summary_only = deck();
    summary_only
        .streams
        .push(("/EncryptedSummary".into(), vec![0; 64]));
    assert_eq!(
        run(&summary_only.to_bytes()).unwrap_err().code,
        ErrorCode::Encrypted
    );
}

#[test]
fn records_past_their_end_and_edits_that_loop_are_corrupt() {
    let (document, user) = deck().streams();
    // The document container claims more bytes than the stream holds.
    let mut long = document.clone();
    long[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
    // The edit names itself as the edit before it.
    let edit_at = u32::from_le_bytes(user[16..20].try_into().unwrap());
    let mut looping = document.clone();
    let last_edit = edit_at as usize + 8 + 8;
    looping[last_edit..last_edit + 4].copy_from_slice(&edit_at.to_le_bytes());
    for (document, needle) in [(long, "runs past"), (looping, "loop")] {
        let e = read_streams(&[
            ("/PowerPoint Document", &document),
            ("/Current User", &user),
        ])
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::Corrupt);
        assert!(e.message.contains(needle), "{}", e.message);
    }
}

#[test]
fn slides_pointing_at_one_drawing_cannot_repeat_its_text_without_end() {
    let mut slides = vec![Slide::default(); 50];
    slides[0]
        .boxes
        .push(Text::new(OTHER, &"many words ".repeat(200)));
    let (mut document, user) = Presentation {
        slides,
        ..Presentation::default()
    }
    .streams();
    // Every slide's persist id names the first slide's container.
    let u32_at =
        |bytes: &[u8], at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let edit_at = u32_at(&user, 16) as usize;
    let directory_at = u32_at(&document, edit_at + 8 + 12) as usize;
    let first_slide = u32_at(&document, directory_at + 8 + 8);
    for slide in 1..50 {
        let at = directory_at + 8 + 8 + 4 * slide;
        document[at..at + 4].copy_from_slice(&first_slide.to_le_bytes());
    }
    let e = read_streams(&[
        ("/PowerPoint Document", &document),
        ("/Current User", &user),
    ])
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::Corrupt);
    assert!(e.message.contains("repeat"), "{}", e.message);
}

#[test]
fn damaged_presentations_give_errors_never_a_panic() {
    // `read`, not `convert`: its own code must not panic, whatever the
    // guard around the compound-file reader would catch.
    let bytes = deck().to_bytes();
    for cut in (0..bytes.len()).step_by(97) {
        let _ = read(&bytes[..cut]);
    }
    assert_eq!(
        run(&bytes[..bytes.len() / 2]).unwrap_err().code,
        ErrorCode::Corrupt
    );
    for at in (512..bytes.len()).step_by(5) {
        let mut damaged = bytes.clone();
        damaged[at] ^= 0xFF;
        let _ = read(&damaged);
    }
    // The same within the streams, where the compound file stays whole.
    let (document, user) = deck().streams();
    for at in 0..document.len() {
        let mut damaged = document.clone();
        damaged[at] ^= 0x81;
        let _ = read_streams(&[("/PowerPoint Document", &damaged), ("/Current User", &user)]);
    }
}

/// Converts a compound file of these streams.
fn read_streams(streams: &[(&str, &[u8])]) -> Result<Converted, ConvertError> {
    use std::io::Write;
    let mut file = cfb::CompoundFile::create(Cursor::new(Vec::new())).unwrap();
    for (path, bytes) in streams {
        file.create_stream(path).unwrap().write_all(bytes).unwrap();
    }
    file.flush().unwrap();
    read(&file.into_inner().into_inner())
}
