//! kts-convert on e-mail (eml, mbox, msg) the tests write themselves, with
//! attachments, and on damaged and hostile messages.

use kts_tests::record_for;
use std::io::{Cursor, Write};
use std::path::Path;
use std::process::Output;

use kts_sample::{Email, Format, Outline, render, to_mbox};
use serde_json::{Value, json};

fn file_record(root: &Path, path: &str) -> Value {
    kts_tests::new_file_record(root, path, "eml")
}

/// Writes the files into a new scope and converts them, in this order.
fn convert_files(files: &[(&str, Vec<u8>)], flags: &[&str]) -> (Output, Vec<Value>) {
    let scope = tempfile::tempdir().unwrap();
    for (name, bytes) in files {
        std::fs::write(scope.path().join(name), bytes).unwrap();
    }
    convert_in(scope.path(), files, flags)
}

fn convert_in(root: &Path, files: &[(&str, Vec<u8>)], flags: &[&str]) -> (Output, Vec<Value>) {
    let lines: String = files
        .iter()
        .map(|(name, _)| format!("{}\n", file_record(root, name)))
        .collect();
    kts_tests::run_jsonl(
        Path::new(env!("CARGO_BIN_EXE_kts-convert")),
        flags,
        lines.as_bytes(),
    )
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn guide_docx() -> Vec<u8> {
    let outline = Outline::new("Onboarding Checklist")
        .heading(2, "First day")
        .paragraph("Collect the badge at the front desk.");
    render(&outline, Format::Docx).unwrap()
}

fn team_mail() -> Vec<u8> {
    Email::new(
        "Quartalsbericht für März",
        "André Martin <andre@example.com>",
        "Bea Berg <bea@example.com>",
    )
    .cc("carl@example.com")
    .text("Hello Bea,\n\nthe onboarding checklist and the budget are attached.\n\nAndré")
    .html(
        "<p>Hello Bea,</p><p>the <b>onboarding checklist</b> and the budget are attached.</p>\
         <ul><li>André</li></ul>",
    )
    .attach(
        "onboarding.docx",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        guide_docx(),
    )
    .attach(
        "budget.csv",
        "text/csv",
        b"Item,Cost\nDesk,200\nChair,90\n".to_vec(),
    )
    .attach(
        "logo.gif",
        "image/gif",
        b"GIF89a\x01\0\x01\0\0\0\0;".to_vec(),
    )
    .to_bytes()
}

#[test]
fn a_message_and_each_attachment_kts_reads_become_documents() {
    let (output, records) = convert_files(&[("team.eml", team_mail())], &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let paths: Vec<&str> = records
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "team.eml",
            "team.eml#attachment/onboarding.docx",
            "team.eml#attachment/budget.csv"
        ]
    );
    let mail = &records[0];
    assert_eq!(mail["format"], "eml");
    assert_eq!(mail["title"], "Quartalsbericht für März");
    let metadata = &mail["metadata"];
    assert_eq!(
        metadata["from"],
        json!(["André Martin <andre@example.com>"])
    );
    assert_eq!(metadata["to"], json!(["Bea Berg <bea@example.com>"]));
    assert_eq!(metadata["cc"], json!(["carl@example.com"]));
    assert_eq!(metadata["date"], "2026-03-03T10:00:00Z");
    assert_eq!(metadata["parts"], json!(&paths[1..]));
    let markdown = mail["markdown"].as_str().unwrap();
    for text in [
        "# Quartalsbericht für März",
        "- **From:** André Martin <andre@example.com>",
        "**onboarding checklist**",
        "## Attachments",
        "- onboarding.docx (",
        "- budget.csv (text/csv, 28 B)",
        "- logo.gif (image/gif, ",
        "not converted: not a format kts reads",
    ] {
        assert!(
            markdown.contains(text),
            "{text:?} missing from:\n{markdown}"
        );
    }

    let docx = &records[1];
    assert_eq!(docx["format"], "docx");
    assert_eq!(docx["title"], "Onboarding Checklist");
    assert_eq!(docx["metadata"]["parent"], "team.eml");
    assert_eq!(
        docx["doc_id"],
        kts_record::scope_path::doc_id("team.eml#attachment/onboarding.docx")
    );
    assert_eq!(
        docx["metadata"]["source_sha256"], mail["metadata"]["source_sha256"],
        "a part comes from its file's bytes"
    );
    assert!(
        records[2]["markdown"]
            .as_str()
            .unwrap()
            .contains("| Desk | 200 |")
    );
}

#[test]
fn a_mailbox_becomes_a_document_per_message() {
    let first = Email::new("Kick-off", "a@example.com", "b@example.com")
        .text("From now on we meet on Mondays.")
        .attach(
            "agenda.md",
            "text/markdown",
            b"# Agenda\n\n- Budget\n".to_vec(),
        )
        .to_bytes();
    let second = Email::new("Minutes", "b@example.com", "a@example.com")
        .text("We agreed on the budget.")
        .to_bytes();
    let (output, records) = convert_files(&[("team.mbox", to_mbox(&[first, second]))], &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let paths: Vec<&str> = records
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "team.mbox",
            "team.mbox#message/1",
            "team.mbox#message/1#attachment/agenda.md",
            "team.mbox#message/2"
        ]
    );
    assert_eq!(records[0]["format"], "mbox");
    assert_eq!(records[0]["metadata"]["messages"], 2);
    let listing = records[0]["markdown"].as_str().unwrap();
    assert!(
        listing.contains("| 2 | 2026-03-03T10:00:00Z | b@example.com | Minutes |"),
        "{listing}"
    );
    assert_eq!(records[1]["title"], "Kick-off");
    assert!(
        records[1]["markdown"]
            .as_str()
            .unwrap()
            .contains("From now on we meet on Mondays."),
        "a body line opening with `From ` survives the mailbox's quoting"
    );
    assert_eq!(records[2]["metadata"]["parent"], "team.mbox");
    assert_eq!(records[3]["title"], "Minutes");
}

#[test]
fn attachment_names_are_safe_file_names_and_each_renaming_is_a_warning() {
    let reply = Email::new("Re: budget", "cfo@example.com", "team@example.com")
        .text("The budget is frozen.")
        .to_bytes();
    let mail = Email::new("Notes", "a@example.com", "b@example.com")
        .text("Two notes and a reply.")
        .attach("notes.txt", "text/plain", b"First notes.".to_vec())
        .attach("notes.txt", "text/plain", b"Second notes.".to_vec())
        .attach("Q3: plan?.txt", "text/plain", b"The plan.".to_vec())
        .attach_message(reply)
        .to_bytes();
    let (output, records) = convert_files(&[("m.eml", mail)], &[]);
    let err = stderr(&output);
    assert!(output.status.success(), "{err}");
    let paths: Vec<&str> = records
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "m.eml",
            "m.eml#attachment/notes.txt",
            "m.eml#attachment/notes-2.txt",
            "m.eml#attachment/Q3- plan-.txt",
            "m.eml#attachment/Re- budget.eml"
        ]
    );
    assert!(
        err.contains(
            "m.eml: the attachment name \"notes.txt\" is repeated: this one is \"notes-2.txt\""
        ),
        "{err}"
    );
    assert!(
        err.contains("the attachment name \"Q3: plan?.txt\" was made safe as \"Q3- plan-.txt\""),
        "{err}"
    );
    assert_eq!(err.matches("warning").count(), 2, "{err}");
}

#[test]
fn a_message_keywords_leave_out_its_list_of_attachments() {
    let mail = Email::new("Harbour survey", "a@example.com", "b@example.com")
        .text("The harbour survey found the harbour walls sound.")
        .attach("walls.txt", "text/plain", b"Walls.".to_vec())
        .attach("piers.txt", "text/plain", b"Piers.".to_vec())
        .attach("cranes.json", "application/json", br#"{"n": 1}"#.to_vec())
        .attach("boats.json", "application/json", br#"{"n": 1}"#.to_vec())
        .to_bytes();
    let (output, records) = convert_files(&[("survey.eml", mail)], &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let keywords = &records[0]["metadata"]["keywords"];
    assert_eq!(keywords[0], "harbour", "{keywords}");
    for word in ["text", "plain", "txt", "application", "json"] {
        assert!(
            !keywords.as_array().unwrap().contains(&json!(word)),
            "{word} in {keywords}"
        );
    }
}

#[test]
fn a_text_attachment_without_a_charset_is_read_as_the_same_file_on_disk_is() {
    let shift_jis = encoding_rs::SHIFT_JIS
        .encode("商品名,価格\nりんご,120\nみかん,80\n")
        .0
        .into_owned();
    let windows_1252 = encoding_rs::WINDOWS_1252
        .encode("Grüße aus Köln, café crème\n")
        .0
        .into_owned();
    let mail = Email::new("Prices", "a@example.com", "b@example.com")
        .text("See attached.")
        .attach("prices.csv", "text/csv", shift_jis.clone())
        .attach("note.txt", "text/plain", windows_1252.clone())
        .attach(
            "declared.txt",
            "text/plain; charset=iso-8859-2",
            windows_1252.clone(),
        )
        .to_bytes();
    let (output, records) = convert_files(&[("prices.eml", mail)], &[]);
    assert!(output.status.success(), "{}", stderr(&output));

    let csv = record_for(&records, "prices.eml#attachment/prices.csv");
    assert!(
        csv["markdown"]
            .as_str()
            .unwrap()
            .contains("| りんご | 120 |"),
        "{csv}"
    );
    assert_eq!(csv["metadata"]["encoding"], "Shift_JIS");
    assert_eq!(csv["metadata"]["size"], shift_jis.len());
    let note = record_for(&records, "prices.eml#attachment/note.txt");
    assert_eq!(note["markdown"], "Grüße aus Köln, café crème\n");
    assert_eq!(note["metadata"]["encoding"], "windows-1252");
    let warnings = note["metadata"]["warnings"].to_string();
    assert!(warnings.contains("windows-1252"), "{warnings}");
    // A declared charset wins: in ISO-8859-2 the byte of "è" is "č".
    let declared = record_for(&records, "prices.eml#attachment/declared.txt");
    assert_eq!(declared["markdown"], "Grüße aus Köln, café crčme\n");

    // The list gives each attachment's size as the mail carried it.
    let listing = records[0]["markdown"].as_str().unwrap();
    for line in [
        format!("- prices.csv (text/csv, {} B)", shift_jis.len()),
        format!("- note.txt (text/plain, {} B)", windows_1252.len()),
        format!("- declared.txt (text/plain, {} B)", windows_1252.len()),
    ] {
        assert!(listing.contains(&line), "{line} not in:\n{listing}");
    }
}

#[test]
fn a_message_without_a_subject_is_titled_by_its_file_name() {
    let with_attachment = "From: a@example.com\r\nTo: b@example.com\r\n\
        Date: Mon, 04 Mar 2024 10:00:00 +0000\r\nMIME-Version: 1.0\r\n\
        Content-Type: multipart/mixed; boundary=\"B\"\r\n\r\n\
        --B\r\nContent-Type: text/plain\r\n\r\nPlease review the file.\r\n\r\n\
        --B\r\nContent-Type: text/plain\r\nContent-Disposition: attachment; filename=\"notes.txt\"\r\n\r\n\
        some notes\r\n--B--\r\n";
    let reply = "From: a@example.com\r\nTo: b@example.com\r\n\
        Date: Mon, 04 Mar 2024 10:00:00 +0000\r\n\r\nok thanks, see you then.\r\n";
    let mailbox = to_mbox(&[reply.as_bytes().to_vec()]);
    let (output, records) = convert_files(
        &[
            ("scan-2024-03-04.eml", with_attachment.as_bytes().to_vec()),
            ("reply.eml", reply.as_bytes().to_vec()),
            ("old.mbox", mailbox),
        ],
        &[],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let titles: Vec<(&str, &str)> = records
        .iter()
        .map(|r| (r["path"].as_str().unwrap(), r["title"].as_str().unwrap()))
        .collect();
    assert_eq!(
        titles,
        [
            ("scan-2024-03-04.eml", "scan 2024 03 04"),
            ("scan-2024-03-04.eml#attachment/notes.txt", "notes"),
            ("reply.eml", "reply"),
            ("old.mbox", "old"),
            ("old.mbox#message/1", "old message 1"),
        ]
    );
}

/// An Outlook message: property streams in a compound file.
fn outlook_message(subject: &str, attachment: Option<(&str, &[u8])>) -> Vec<u8> {
    let mut file = cfb::CompoundFile::create(Cursor::new(Vec::new())).unwrap();
    let stream = |file: &mut cfb::CompoundFile<Cursor<Vec<u8>>>, path: &str, bytes: &[u8]| {
        file.create_stream(path).unwrap().write_all(bytes).unwrap();
    };
    let utf16 =
        |text: &str| -> Vec<u8> { text.encode_utf16().flat_map(u16::to_le_bytes).collect() };
    let fixed = |header: usize, tag: u32, value: u64| -> Vec<u8> {
        let mut bytes = vec![0; header];
        bytes.extend_from_slice(&tag.to_le_bytes());
        bytes.extend_from_slice(&6u32.to_le_bytes());
        bytes.extend_from_slice(&value.to_le_bytes());
        bytes
    };
    stream(&mut file, "/__substg1.0_0037001F", &utf16(subject));
    stream(
        &mut file,
        "/__substg1.0_1000001F",
        &utf16("The figures are in the notes."),
    );
    stream(&mut file, "/__substg1.0_0C1A001F", &utf16("Ann Lee"));
    stream(
        &mut file,
        "/__substg1.0_5D01001F",
        &utf16("ann@example.com"),
    );
    // Submitted 2026-03-03T09:00:00Z.
    let submitted = (1_772_528_400u64 + 11_644_473_600) * 10_000_000;
    stream(
        &mut file,
        "/__properties_version1.0",
        &fixed(32, 0x0039_0040, submitted),
    );
    for (n, (name, address, kind)) in [
        ("Bo Chen", "bo@example.com", 1),
        ("Cy", "cy@example.com", 2),
    ]
    .into_iter()
    .enumerate()
    {
        let dir = format!("/__recip_version1.0_#{n:08X}");
        file.create_storage(&dir).unwrap();
        stream(
            &mut file,
            &format!("{dir}/__substg1.0_3001001F"),
            &utf16(name),
        );
        stream(
            &mut file,
            &format!("{dir}/__substg1.0_39FE001F"),
            &utf16(address),
        );
        stream(
            &mut file,
            &format!("{dir}/__properties_version1.0"),
            &fixed(8, 0x0C15_0003, kind),
        );
    }
    if let Some((name, bytes)) = attachment {
        let dir = "/__attach_version1.0_#00000000";
        file.create_storage(dir).unwrap();
        stream(
            &mut file,
            &format!("{dir}/__substg1.0_3707001F"),
            &utf16(name),
        );
        stream(&mut file, &format!("{dir}/__substg1.0_37010102"), bytes);
    }
    file.flush().unwrap();
    file.into_inner().into_inner()
}

#[test]
fn an_outlook_message_gives_its_subject_people_body_and_attachments() {
    let msg = outlook_message(
        "Q1 figures",
        Some(("notes.md", b"# Notes\n\nRevenue grew.\n")),
    );
    // No extension: the property streams tell it from other compound files.
    let (output, records) = convert_files(&[("q1", msg)], &[]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(records.len(), 2, "{records:#?}");
    let mail = &records[0];
    assert_eq!(mail["format"], "msg");
    assert_eq!(mail["title"], "Q1 figures");
    assert_eq!(
        mail["metadata"]["from"],
        json!(["Ann Lee <ann@example.com>"])
    );
    assert_eq!(mail["metadata"]["to"], json!(["Bo Chen <bo@example.com>"]));
    assert_eq!(mail["metadata"]["cc"], json!(["Cy <cy@example.com>"]));
    assert_eq!(mail["metadata"]["date"], "2026-03-03T09:00:00Z");
    assert!(
        mail["markdown"]
            .as_str()
            .unwrap()
            .contains("The figures are in the notes.")
    );
    assert_eq!(records[1]["path"], "q1#attachment/notes.md");
    assert_eq!(records[1]["title"], "Notes");
}

/// A message attached to a message, `depth` times over.
fn nested_mail(depth: usize) -> Vec<u8> {
    let mut message =
        b"From: a@example.com\r\nSubject: Level 0\r\n\r\nThe innermost text.\r\n".to_vec();
    for level in 1..=depth {
        let mut outer = format!(
            "From: a@example.com\r\nSubject: Level {level}\r\nMIME-Version: 1.0\r\n\
             Content-Type: message/rfc822\r\n\r\n"
        )
        .into_bytes();
        outer.extend_from_slice(&message);
        message = outer;
    }
    message
}

#[test]
fn hostile_messages_give_error_records_or_warnings_and_the_stream_goes_on() {
    let huge = Email::new("Big export", "a@example.com", "b@example.com")
        .text("The export is attached.")
        .attach("export.csv", "text/csv", b"id,value\n1,2\n".repeat(200_000))
        .to_bytes();
    let broken_boundaries = b"From: a@example.com\r\nSubject: Broken\r\nMIME-Version: 1.0\r\n\
        Content-Type: multipart/mixed; boundary=\"XYZ\"\r\n\r\n--XYZ\r\nContent-Type: text/plain\r\n\r\n\
        Visible text before the damage.\r\n--XY\r\nContent-Type: multipart/alternative; boundary=\"\"\r\n\r\n\
        --\r\nno end\r\n"
        .to_vec();
    let escaping = Email::new("Names", "a@example.com", "b@example.com")
        .text("Hostile names.")
        .attach(
            "../../etc/passwd.md",
            "text/markdown",
            b"# One\n\ntext\n".to_vec(),
        )
        .attach("/abs/two.md", "text/markdown", b"# Two\n\ntext\n".to_vec())
        .attach(
            "a#b\u{1}c.md",
            "text/markdown",
            b"# Three\n\ntext\n".to_vec(),
        )
        .attach(
            &format!("{}.md", "n".repeat(3000)),
            "text/markdown",
            b"# Four\n\ntext\n".to_vec(),
        )
        .attach("../../etc/passwd", "text/plain", b"root:x:0:0\n".to_vec())
        .to_bytes();
    let msg = outlook_message("Truncated", None);
    let truncated_msg = msg[..msg.len() / 2].to_vec();
    let files = [
        ("deep.eml", nested_mail(1000)),
        ("huge.eml", huge),
        ("broken.eml", broken_boundaries),
        ("names.eml", escaping),
        ("truncated.msg", truncated_msg),
        ("after.eml", team_mail()),
    ];
    let (output, records) = convert_files(&files, &["--max-unpacked-mib", "1"]);
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");

    // 1,000 messages deep: the first levels are documents, the rest a warning.
    let deep = record_for(&records, "deep.eml");
    assert_eq!(deep["title"], "Level 1000");
    let deep_parts: Vec<&Value> = records
        .iter()
        .filter(|r| r["metadata"]["parent"] == "deep.eml")
        .collect();
    assert_eq!(
        deep_parts.len(),
        7,
        "seven attached messages below the file's own"
    );
    assert_eq!(deep_parts[0]["path"], "deep.eml#attachment/Level 999.eml");
    assert_eq!(deep_parts[6]["title"], "Level 993");
    assert!(
        deep_parts[6]["markdown"]
            .as_str()
            .unwrap()
            .contains("- message-1.eml (message/rfc822, 89.1 KB) — not converted: nested too deep"),
        "{}",
        deep_parts[6]["markdown"]
    );
    assert!(err.contains("kts-convert: warning: deep.eml: "), "{err}");
    assert!(
        err.contains("nested 8 deep is listed, not converted"),
        "{err}"
    );

    // An attachment beyond the limit: its own error record; the message is converted.
    let too_large = record_for(&records, "huge.eml#attachment/export.csv");
    assert_eq!(too_large["schema"], "kts.error/1");
    assert_eq!(too_large["code"], "too-large");
    assert!(
        too_large["message"]
            .as_str()
            .unwrap()
            .contains("--max-unpacked-mib")
    );
    let huge_doc = record_for(&records, "huge.eml");
    assert!(
        huge_doc["markdown"]
            .as_str()
            .unwrap()
            .contains("export.csv (text/csv, 2.5 MB) — not converted: the attachment")
    );
    assert_eq!(huge_doc["metadata"]["part_errors"][0]["code"], "too-large");

    // Broken boundaries: what can be read is kept.
    let broken = record_for(&records, "broken.eml");
    assert_eq!(broken["schema"], "kts.doc/1");
    assert!(
        broken["markdown"]
            .as_str()
            .unwrap()
            .contains("Visible text before the damage.")
    );

    // Escaping names: plain names inside the message's path, each a warning.
    let named: Vec<&str> = records
        .iter()
        .filter(|r| r["metadata"]["parent"] == "names.eml")
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(named.len(), 5, "{named:?}");
    assert_eq!(named[0], "names.eml#attachment/passwd.md");
    assert_eq!(named[1], "names.eml#attachment/two.md");
    assert_eq!(named[2], "names.eml#attachment/a_b_c.md");
    assert!(
        named[3].len() < 140 && named[3].ends_with("nnn.md"),
        "{}",
        named[3]
    );
    assert_eq!(
        named[4], "names.eml#attachment/passwd",
        "read as text/plain"
    );
    for path in &named {
        assert_eq!(
            kts_record::scope_path::normalize(path).as_deref(),
            Ok(*path)
        );
    }
    assert!(
        err.contains("the attachment name \"../../etc/passwd.md\" was made safe as \"passwd.md\""),
        "{err}"
    );

    // A truncated Outlook file: an error record naming it.
    let truncated = record_for(&records, "truncated.msg");
    assert_eq!(truncated["schema"], "kts.error/1");
    assert_eq!(truncated["code"], "corrupt");
    assert!(
        err.contains("kts-convert: error (at truncated.msg): corrupt: "),
        "{err}"
    );

    assert_eq!(
        record_for(&records, "after.eml")["title"],
        "Quartalsbericht für März"
    );
}

#[test]
fn a_stored_message_serves_its_parts_and_their_errors_again() {
    let scope = tempfile::tempdir().unwrap();
    let mail = Email::new("Two files", "a@example.com", "b@example.com")
        .text("One is fine, one is broken.")
        .attach(
            "fine.md",
            "text/markdown",
            b"# Fine\n\nAll good.\n".to_vec(),
        )
        .attach(
            "broken.docx",
            "application/octet-stream",
            b"PK\x03\x04broken".to_vec(),
        )
        .to_bytes();
    std::fs::write(scope.path().join("m.eml"), &mail).unwrap();
    let files = [("m.eml", mail)];
    let (first_output, first) = convert_in(scope.path(), &files, &[]);
    assert_eq!(
        first_output.status.code(),
        Some(1),
        "{}",
        stderr(&first_output)
    );
    let (second_output, second) = convert_in(scope.path(), &files, &[]);
    assert_eq!(second_output.status.code(), Some(1));
    assert_eq!(first, second, "the second run is served from the store");
    assert_eq!(first.len(), 3);
    assert_eq!(first[1]["path"], "m.eml#attachment/fine.md");
    assert_eq!(first[2]["schema"], "kts.error/1");
    assert_eq!(first[2]["path"], "m.eml#attachment/broken.docx");
    let stored = kts_record::scope_path::doc_id("m.eml#attachment/fine.md");
    assert!(
        scope
            .path()
            .join(".kts/documents")
            .join(stored)
            .join("content.md")
            .is_file()
    );
}
