//! OCR of images and scanned PDF pages, on pages the tests render themselves
//! from known text (kts-sample's PDF writer, then poppler's pdftoppm), and
//! the ways OCR can fail: programs missing, an image too large, a page that
//! takes too long.
//!
//! These tests need tesseract (with its English data) and pdftoppm. They fail,
//! and say how to install them, when they are missing.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use kts_sample::{Block, Format, Outline, render, to_text};
use lopdf::content::{Content, Operation};
use lopdf::{Document, Object, Stream, dictionary};
use serde_json::Value;

/// Letter size at 200 dpi, the scan every image test starts from.
const SCAN_WIDTH: u32 = 1700;
const SCAN_HEIGHT: u32 = 2200;

fn outline() -> Outline {
    Outline::new("Scanned Travel Policy")
        .paragraph(
            "Employees who travel for work book their trains and hotels through the \
             travel desk at least two weeks before they leave.",
        )
        .heading(2, "Receipts")
        .paragraph(
            "Keep every receipt and submit the claim within thirty days of your return. \
             Claims without receipts are refused with error code E-5.",
        )
        .bullets([
            "Hotels up to two hundred euros a night",
            "Meals up to sixty euros a day",
        ])
}

/// Fails the test, saying how to install it, when `program` is not on PATH.
fn require(program: &str) {
    let found = Command::new(program).arg("-v").output().is_ok();
    assert!(
        found,
        "{program} is not installed: the OCR tests need it. Install it with \
         `apt-get install tesseract-ocr tesseract-ocr-eng poppler-utils`"
    );
}

/// Renders page 1 of `pdf` into `dir/name.<ext>` with pdftoppm (`kind`:
/// png, jpeg, tiff) at the scan size, and returns its path.
fn scan(pdf: &Path, dir: &Path, name: &str, kind: &str) -> PathBuf {
    require("pdftoppm");
    let stem = dir.join(name);
    let output = Command::new("pdftoppm")
        .args(["-f", "1", "-l", "1", "-singlefile", &format!("-{kind}")])
        .args(["-scale-to-x", &SCAN_WIDTH.to_string()])
        .args(["-scale-to-y", &SCAN_HEIGHT.to_string()])
        .arg(pdf)
        .arg(&stem)
        .output()
        .unwrap();
    assert!(output.status.success(), "pdftoppm: {output:?}");
    let extension = match kind {
        "jpeg" => "jpg",
        "tiff" => "tif",
        other => other,
    };
    let path = stem.with_extension(extension);
    assert!(path.is_file(), "pdftoppm wrote no {}", path.display());
    path
}

/// The known text as a PDF with a text layer, saved in `dir`.
fn text_pdf(dir: &Path) -> PathBuf {
    let path = dir.join("source.pdf");
    std::fs::write(&path, render(&outline(), Format::Pdf).unwrap()).unwrap();
    path
}

/// A PDF without any text layer: page 1 says `first_page_text` in Helvetica
/// (unless empty), and the last page is the JPEG scan drawn over the whole
/// page, with `stamp` in 6-point type at its foot (unless empty).
fn scanned_pdf(jpeg: &[u8], first_page_text: &str, stamp: &str) -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
    });
    let image_id = doc.add_object(Stream::new(
        dictionary! {
            "Type" => "XObject", "Subtype" => "Image",
            "Width" => SCAN_WIDTH as i64, "Height" => SCAN_HEIGHT as i64,
            "ColorSpace" => "DeviceRGB", "BitsPerComponent" => 8, "Filter" => "DCTDecode",
        },
        jpeg.to_vec(),
    ));
    let mut contents = Vec::new();
    if !first_page_text.is_empty() {
        contents.push(vec![
            Operation::new("BT", vec![]),
            Operation::new("Tf", vec!["F1".into(), 14.into()]),
            Operation::new("Td", vec![72.into(), 700.into()]),
            Operation::new("Tj", vec![Object::string_literal(first_page_text)]),
            Operation::new("ET", vec![]),
        ]);
    }
    let mut scan_page = vec![
        Operation::new("q", vec![]),
        Operation::new(
            "cm",
            vec![
                612.into(),
                0.into(),
                0.into(),
                792.into(),
                0.into(),
                0.into(),
            ],
        ),
        Operation::new("Do", vec!["Im1".into()]),
        Operation::new("Q", vec![]),
    ];
    if !stamp.is_empty() {
        scan_page.extend([
            Operation::new("BT", vec![]),
            Operation::new("Tf", vec!["F1".into(), 6.into()]),
            Operation::new("Td", vec![20.into(), 20.into()]),
            Operation::new("Tj", vec![Object::string_literal(stamp)]),
            Operation::new("ET", vec![]),
        ]);
    }
    contents.push(scan_page);
    let mut kids = Vec::new();
    for operations in contents {
        let content = Content { operations }.encode().unwrap();
        let content_id = doc.add_object(Stream::new(dictionary! {}, content));
        let page_id = doc.add_object(dictionary! {
            "Type" => "Page", "Parent" => pages_id, "Contents" => content_id,
            "Resources" => dictionary! {
                "Font" => dictionary! { "F1" => font_id },
                "XObject" => dictionary! { "Im1" => image_id },
            },
        });
        kids.push(page_id.into());
    }
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages", "Count" => kids.len() as i64, "Kids" => kids,
            "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
        }),
    );
    let catalog_id = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog_id);
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).unwrap();
    bytes
}

fn file_record(root: &Path, path: &str) -> Value {
    kts_tests::new_file_record(root, path, "png")
}

/// Converts `paths` under `root` with `flags`; one output record per path.
fn convert(root: &Path, paths: &[&str], flags: &[&str]) -> (Output, Vec<Value>) {
    let input: String = paths
        .iter()
        .map(|p| format!("{}\n", file_record(root, p)))
        .collect();
    let mut args = vec!["--no-store"];
    args.extend_from_slice(flags);
    let (output, records) = kts_tests::run_jsonl(
        Path::new(env!("CARGO_BIN_EXE_kts-convert")),
        &args,
        input.as_bytes(),
    );
    assert_eq!(records.len(), paths.len(), "{output:?}");
    (output, records)
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The share of the known text's words (counted with repeats) found in `text`.
fn word_recall(text: &str) -> f64 {
    let truth = words(&String::from_utf8(to_text(&outline())).unwrap());
    let mut found: HashMap<String, usize> = HashMap::new();
    for word in words(text) {
        *found.entry(word).or_default() += 1;
    }
    let hits = truth
        .iter()
        .filter(|word| match found.get_mut(*word) {
            Some(n) if *n > 0 => {
                *n -= 1;
                true
            }
            _ => false,
        })
        .count();
    hits as f64 / truth.len() as f64
}

fn markdown(record: &Value) -> &str {
    assert_eq!(record["schema"], "kts.doc/1", "{record}");
    record["markdown"].as_str().unwrap()
}

fn warnings(record: &Value) -> String {
    record["metadata"]["warnings"].to_string()
}

#[test]
fn images_and_scanned_pdf_pages_are_read_with_ocr() {
    require("tesseract");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let pdf = text_pdf(root);
    scan(&pdf, root, "scan", "png");
    scan(&pdf, root, "photo", "jpeg");
    scan(&pdf, root, "fax", "tiff");
    let jpeg = std::fs::read(root.join("photo.jpg")).unwrap();
    std::fs::write(
        root.join("scanned.pdf"),
        scanned_pdf(&jpeg, "Cover page from the text layer", ""),
    )
    .unwrap();

    let paths = ["scan.png", "photo.jpg", "fax.tif", "scanned.pdf"];
    let (output, records) = convert(root, &paths, &[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    for (path, record) in paths.iter().zip(&records) {
        let text = markdown(record);
        let recall = word_recall(text);
        eprintln!("{path}: word recall {recall:.3}");
        assert!(recall >= 0.9, "{path}: word recall {recall:.3}:\n{text}");
    }
    assert_eq!(records[0]["format"], "png");
    assert_eq!(records[0]["metadata"]["width"], SCAN_WIDTH);
    assert_eq!(records[1]["format"], "jpg");
    assert_eq!(records[2]["format"], "tiff");

    // Page 1 keeps its text layer, page 2 is read with OCR; both keep their marker.
    let scanned = markdown(&records[3]);
    let second = scanned.find("<!-- page: 2 -->").expect("page 2 marker");
    assert!(scanned.starts_with("<!-- page: 1 -->"), "{scanned}");
    assert!(
        scanned[..second].contains("Cover page from the text layer"),
        "{scanned}"
    );
    assert!(word_recall(&scanned[second..]) >= 0.9, "{scanned}");
    assert_eq!(records[3]["metadata"]["ocr_pages"], 1);
}

#[test]
fn a_scan_with_a_few_words_of_text_on_it_is_read_with_ocr_too() {
    require("tesseract");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let pdf = text_pdf(root);
    let jpeg = std::fs::read(scan(&pdf, root, "photo", "jpeg")).unwrap();
    std::fs::write(
        root.join("stamped.pdf"),
        scanned_pdf(&jpeg, "", "Scanned by ACME"),
    )
    .unwrap();

    let (output, records) = convert(root, &["stamped.pdf"], &[]);
    assert!(output.status.success(), "{output:?}");
    let page = markdown(&records[0]);
    assert!(page.starts_with("<!-- page: 1 -->"), "{page}");
    assert!(page.contains("Scanned by ACME"), "{page}");
    assert!(word_recall(page) >= 0.9, "{page}");
    assert_eq!(records[0]["metadata"]["ocr_pages"], 1);
}

/// Renders each page of `pdf` as 8-bit grey at 150 dpi: (width, height, pixels).
fn grey_pages(pdf: &Path, dir: &Path) -> Vec<(u32, u32, Vec<u8>)> {
    require("pdftoppm");
    let stem = dir.join("grey");
    let output = Command::new("pdftoppm")
        .args(["-gray", "-r", "150"])
        .arg(pdf)
        .arg(&stem)
        .output()
        .unwrap();
    assert!(output.status.success(), "pdftoppm: {output:?}");
    let mut pages: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "pgm"))
        .collect();
    pages.sort();
    pages
        .iter()
        .map(|path| {
            // Binary PGM: "P5\n<width> <height>\n255\n", then the pixels.
            let bytes = std::fs::read(path).unwrap();
            let mut fields = bytes.splitn(5, |b| b.is_ascii_whitespace());
            let mut number = || -> u32 {
                let field = fields.find(|f| !f.is_empty() && f != b"P5").unwrap();
                std::str::from_utf8(field).unwrap().parse().unwrap()
            };
            let (width, height, _max) = (number(), number(), number());
            let pixels = bytes[bytes.len() - (width * height) as usize..].to_vec();
            (width, height, pixels)
        })
        .collect()
}

/// An uncompressed multi-page TIFF of 8-bit grey pages.
fn multi_page_tiff(pages: &[(u32, u32, Vec<u8>)]) -> Vec<u8> {
    // The header, then for each page its pixels and its directory (IFD);
    // the header and each directory end with the offset of the next one.
    let mut tiff = b"II*\0\0\0\0\0".to_vec();
    let mut next_ifd_at = 4;
    for (width, height, pixels) in pages {
        let strip_at = tiff.len() as u32;
        tiff.extend(pixels);
        if tiff.len() % 2 == 1 {
            tiff.push(0); // directories start on a word boundary
        }
        let ifd_at = tiff.len() as u32;
        tiff[next_ifd_at..next_ifd_at + 4].copy_from_slice(&ifd_at.to_le_bytes());
        let entries: [(u16, u16, u32); 9] = [
            (256, 4, *width),
            (257, 4, *height),
            (258, 3, 8), // bits per sample
            (259, 3, 1), // no compression
            (262, 3, 1), // black is zero
            (273, 4, strip_at),
            (277, 3, 1),       // samples per pixel
            (278, 4, *height), // rows per strip
            (279, 4, pixels.len() as u32),
        ];
        tiff.extend((entries.len() as u16).to_le_bytes());
        for (tag, kind, value) in entries {
            tiff.extend(tag.to_le_bytes());
            tiff.extend(kind.to_le_bytes());
            tiff.extend(1u32.to_le_bytes());
            tiff.extend(value.to_le_bytes());
        }
        next_ifd_at = tiff.len();
        tiff.extend(0u32.to_le_bytes());
    }
    tiff
}

#[test]
fn each_page_of_a_multi_page_tiff_gets_its_marker() {
    require("tesseract");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let outline = Outline::new("")
        .paragraph("The first page is about lighthouses.")
        .block(Block::PageBreak)
        .paragraph("The second page is about windmills.");
    let pdf = root.join("two.pdf");
    std::fs::write(&pdf, render(&outline, Format::Pdf).unwrap()).unwrap();
    let pages = grey_pages(&pdf, root);
    assert_eq!(pages.len(), 2);
    std::fs::write(root.join("fax.tiff"), multi_page_tiff(&pages)).unwrap();

    let (output, records) = convert(root, &["fax.tiff"], &[]);
    assert!(output.status.success(), "{output:?}");
    let text = markdown(&records[0]);
    let second = text.find("<!-- page: 2 -->").expect("page 2 marker");
    assert!(text.starts_with("<!-- page: 1 -->"), "{text}");
    assert!(text[..second].contains("lighthouses"), "{text}");
    assert!(text[second..].contains("windmills"), "{text}");
    assert_eq!(records[0]["metadata"]["pages"], 2);
}

#[test]
fn sideways_and_upside_down_scans_are_turned_upright_before_they_are_read() {
    require("tesseract");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let source = text_pdf(root);
    let mut paths = Vec::new();
    for degrees in [90, 180, 270] {
        // The known text on a page shown turned by `degrees` clockwise.
        let mut doc = Document::load(&source).unwrap();
        let page = *doc.get_pages().values().next().unwrap();
        doc.get_dictionary_mut(page).unwrap().set("Rotate", degrees);
        let turned = root.join(format!("turned-{degrees}.pdf"));
        doc.save(&turned).unwrap();
        let renders = tempfile::tempdir().unwrap();
        let pages = grey_pages(&turned, renders.path());
        let path = format!("turned-{degrees}.tiff");
        std::fs::write(root.join(&path), multi_page_tiff(&pages)).unwrap();
        paths.push(path);
    }

    let paths: Vec<&str> = paths.iter().map(String::as_str).collect();
    let (output, records) = convert(root, &paths, &[]);
    assert!(output.status.success(), "{output:?}");
    for (path, record) in paths.iter().zip(&records) {
        let text = markdown(record);
        assert!(word_recall(text) >= 0.9, "{path}:\n{text}");
    }
}

#[test]
fn a_short_text_upside_down_is_turned_upright_before_it_is_read() {
    require("tesseract");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let memo = Outline::new("Upside down memo")
        .paragraph("Fire drill at ten on Friday.")
        .paragraph("Assembly point Bison.");
    let pdf = root.join("memo.pdf");
    std::fs::write(&pdf, render(&memo, Format::Pdf).unwrap()).unwrap();
    let renders = tempfile::tempdir().unwrap();
    let (width, height, pixels) = grey_pages(&pdf, renders.path()).remove(0);
    // The page's top, where the memo is, turned by 180 degrees: its rows
    // and the pixels in each row in reverse order.
    let rows = height / 5;
    let mut turned = pixels[..(width * rows) as usize].to_vec();
    turned.reverse();
    std::fs::write(
        root.join("memo.tiff"),
        multi_page_tiff(&[(width, rows, turned)]),
    )
    .unwrap();

    let (output, records) = convert(root, &["memo.tiff"], &[]);
    assert!(output.status.success(), "{output:?}");
    let text = markdown(&records[0]);
    for words in ["Upside down memo", "Fire drill", "Assembly point"] {
        assert!(text.contains(words), "{words} not in:\n{text}");
    }
}

/// Tesseract's data folder, as `tesseract --list-langs` names it.
fn tessdata_dir() -> PathBuf {
    let output = Command::new("tesseract")
        .arg("--list-langs")
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&output.stdout);
    let quoted = listing.split('"').nth(1).expect("no tessdata folder named");
    PathBuf::from(quoted)
}

#[test]
fn without_orientation_data_pages_are_read_as_they_lie() {
    require("tesseract");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    scan(&text_pdf(root), root, "scan", "png");
    // A tesseract whose data folder holds English but not osd.traineddata.
    let tessdata = tempfile::tempdir().unwrap();
    let english = "eng.traineddata";
    std::fs::copy(tessdata_dir().join(english), tessdata.path().join(english)).unwrap();
    let tesseract = root.join("tesseract-without-osd");
    std::fs::write(
        &tesseract,
        format!(
            "#!/bin/sh\nTESSDATA_PREFIX='{}' exec tesseract \"$@\"\n",
            tessdata.path().display()
        ),
    )
    .unwrap();
    make_executable(&tesseract);

    let (output, records) = convert(
        root,
        &["scan.png"],
        &["--tesseract", tesseract.to_str().unwrap()],
    );
    assert!(output.status.success(), "{output:?}");
    let text = markdown(&records[0]);
    assert!(word_recall(text) >= 0.9, "{text}");
}

#[test]
fn ocr_never_leaves_scanned_pages_and_images_empty_and_always_reads_every_page() {
    require("tesseract");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let pdf = text_pdf(root);
    scan(&pdf, root, "scan", "png");
    let jpeg = std::fs::read(scan(&pdf, root, "photo", "jpeg")).unwrap();
    std::fs::write(root.join("scanned.pdf"), scanned_pdf(&jpeg, "", "")).unwrap();

    let (output, records) = convert(root, &["scanned.pdf", "scan.png"], &["--ocr", "never"]);
    assert!(output.status.success(), "{output:?}");
    let page = markdown(&records[0]);
    assert_eq!(word_recall(page), 0.0, "{page}");
    assert!(page.starts_with("<!-- page: 1 -->"), "{page}");
    assert!(
        warnings(&records[0]).contains("--ocr never"),
        "{}",
        records[0]
    );
    assert!(records[0]["metadata"].get("ocr_pages").is_none());
    assert_eq!(markdown(&records[1]), "");
    assert!(
        warnings(&records[1]).contains("--ocr never"),
        "{}",
        records[1]
    );

    // `always` reads the page even though it has a text layer; `auto` keeps the layer.
    let (_, auto) = convert(root, &["source.pdf"], &[]);
    assert!(
        auto[0]["metadata"].get("ocr_pages").is_none(),
        "{}",
        auto[0]
    );
    let (output, always) = convert(root, &["source.pdf"], &["--ocr", "always"]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(always[0]["metadata"]["ocr_pages"], 1, "{}", always[0]);
    assert!(word_recall(markdown(&always[0])) >= 0.9);
}

#[test]
fn an_image_without_text_is_an_empty_document_with_a_warning() {
    require("tesseract");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let blank = dir.path().join("blank.pdf");
    std::fs::write(&blank, render(&Outline::new(""), Format::Pdf).unwrap()).unwrap();
    scan(&blank, root, "blank", "png");
    let (output, records) = convert(root, &["blank.png"], &[]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(markdown(&records[0]).trim(), "");
    assert!(
        warnings(&records[0]).contains("OCR found no text"),
        "{}",
        records[0]
    );
}

#[test]
fn without_tesseract_each_file_that_needs_ocr_is_ocr_unavailable_with_one_warning() {
    require("tesseract"); // the images are read while only pdftoppm is missing
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let pdf = text_pdf(root);
    scan(&pdf, root, "scan", "png");
    let jpeg = std::fs::read(scan(&pdf, root, "photo", "jpeg")).unwrap();
    std::fs::write(root.join("scanned.pdf"), scanned_pdf(&jpeg, "", "")).unwrap();
    let paths = ["scan.png", "source.pdf", "scanned.pdf", "photo.jpg"];

    for missing in [
        ["--tesseract", "/nonexistent/tesseract"],
        ["--pdftoppm", "/nonexistent/pdftoppm"],
    ] {
        let (output, records) = convert(root, &paths, &missing);
        assert_eq!(output.status.code(), Some(1), "{output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            stderr.matches("warning: OCR is unavailable").count(),
            1,
            "{stderr}"
        );
        assert!(stderr.contains("apt-get install tesseract-ocr"), "{stderr}");
        // pdftoppm is only needed for PDF pages; the images still need tesseract.
        let expect_unavailable: &[&str] = if missing[0] == "--pdftoppm" {
            &["scanned.pdf"]
        } else {
            &["scan.png", "scanned.pdf", "photo.jpg"]
        };
        for (path, record) in paths.iter().zip(&records) {
            if expect_unavailable.contains(path) {
                assert_eq!(record["schema"], "kts.error/1", "{path}: {record}");
                assert_eq!(record["code"], "ocr-unavailable", "{path}: {record}");
                assert_eq!(record["path"], *path);
                assert!(
                    record["message"]
                        .as_str()
                        .unwrap()
                        .contains("/nonexistent/"),
                    "{record}"
                );
            } else {
                assert_eq!(record["schema"], "kts.doc/1", "{path}: {record}");
            }
        }
    }
}

/// A script standing in for tesseract: it logs each call to `calls`, then
/// runs `body`.
fn fake_tesseract(dir: &Path, body: &str) -> PathBuf {
    let script = dir.join("fake-tesseract");
    let calls = dir.join("calls");
    std::fs::write(
        &script,
        format!("#!/bin/sh\necho \"$1\" >> '{}'\n{body}\n", calls.display()),
    )
    .unwrap();
    make_executable(&script);
    script
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A PNG whose header says `width` × `height`, followed by junk instead of pixels.
fn png_header(width: u32, height: u32) -> Vec<u8> {
    let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    bytes.extend(width.to_be_bytes());
    bytes.extend(height.to_be_bytes());
    bytes.extend([8, 2, 0, 0, 0, 0, 0, 0, 0]);
    bytes.extend(std::iter::repeat_n(0xAB, 4096));
    bytes
}

#[test]
fn huge_and_damaged_images_are_refused_before_ocr() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let tesseract = fake_tesseract(root, "echo should not run");
    std::fs::write(root.join("huge.png"), png_header(20_000, 20_000)).unwrap();
    std::fs::write(root.join("zero.png"), png_header(0, 100)).unwrap();
    std::fs::write(root.join("cut.png"), &png_header(10, 10)[..14]).unwrap();
    std::fs::write(root.join("cut.jpg"), [0xFF, 0xD8, 0xFF, 0xE0, 0, 16, 1]).unwrap();
    std::fs::write(root.join("text.tiff"), b"this is no image at all").unwrap();
    let paths = ["huge.png", "zero.png", "cut.png", "cut.jpg", "text.tiff"];
    let (output, records) = convert(root, &paths, &["--tesseract", tesseract.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let codes: Vec<&str> = records
        .iter()
        .map(|r| r["code"].as_str().unwrap())
        .collect();
    // Text named .tiff is no damaged image: it is refused for what it is.
    assert_eq!(
        codes,
        ["too-large", "corrupt", "corrupt", "corrupt", "unsupported"]
    );
    let huge = records[0]["message"].as_str().unwrap();
    assert!(
        huge.contains("20000 × 20000") && huge.contains("--max-megapixels"),
        "{huge}"
    );
    assert!(
        !root.join("calls").exists(),
        "tesseract ran on an image that should have been refused"
    );

    // The limit is the user's to raise.
    let (_, records) = convert(
        root,
        &["huge.png"],
        &[
            "--tesseract",
            tesseract.to_str().unwrap(),
            "--max-megapixels",
            "500",
        ],
    );
    assert_eq!(records[0]["schema"], "kts.doc/1", "{}", records[0]);
    assert!(markdown(&records[0]).contains("should not run"));
}

#[test]
fn a_failing_tesseract_is_reported_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // What tesseract prints on a truncated JPEG.
    let tesseract = fake_tesseract(
        root,
        "echo 'Premature end of JPEG file' >&2\n\
         echo 'Error in pixReadStreamJpeg: read error at scanline 160; nwarn = 2' >&2\n\
         echo 'Error in pixRead: pix not read' >&2\n\
         echo 'Error during processing.' >&2\n\
         exit 1",
    );
    std::fs::write(root.join("cut.png"), png_header(100, 100)).unwrap();
    let (_, records) = convert(
        root,
        &["cut.png"],
        &["--tesseract", tesseract.to_str().unwrap()],
    );
    assert_eq!(records[0]["code"], "corrupt", "{}", records[0]);
    assert_eq!(
        records[0]["message"],
        "tesseract cannot read it: Premature end of JPEG file"
    );
}

#[test]
fn a_page_that_takes_too_long_is_killed_and_reported_as_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let tesseract = fake_tesseract(root, "sleep 30");
    std::fs::write(root.join("slow.png"), png_header(100, 100)).unwrap();
    let pdf = text_pdf(root);
    let jpeg = std::fs::read(scan(&pdf, root, "photo", "jpeg")).unwrap();
    std::fs::write(root.join("scanned.pdf"), scanned_pdf(&jpeg, "", "")).unwrap();

    let started = Instant::now();
    let (output, records) = convert(
        root,
        &["slow.png", "scanned.pdf"],
        &[
            "--tesseract",
            tesseract.to_str().unwrap(),
            "--ocr-timeout",
            "1",
        ],
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the timeout did not stop tesseract: {:?}",
        started.elapsed()
    );
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    for record in &records {
        assert_eq!(record["code"], "timeout", "{record}");
        assert!(
            record["message"]
                .as_str()
                .unwrap()
                .contains("--ocr-timeout"),
            "{record}"
        );
    }
    assert!(
        records[1]["message"]
            .as_str()
            .unwrap()
            .starts_with("page 1:")
    );
}

#[test]
fn missing_language_data_is_named_in_the_warning_as_in_the_record() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // What tesseract prints when it has no data for a language.
    let tesseract = fake_tesseract(
        root,
        "echo \"Error opening data file /usr/share/tessdata/xyz.traineddata\" >&2\n\
         echo \"Failed loading language 'xyz'\" >&2\n\
         echo \"Tesseract couldn't load any languages!\" >&2\n\
         exit 1",
    );
    std::fs::write(root.join("scan.png"), png_header(100, 100)).unwrap();
    let (output, records) = convert(
        root,
        &["scan.png"],
        &[
            "--tesseract",
            tesseract.to_str().unwrap(),
            "--ocr-languages",
            "xyz",
        ],
    );
    assert_eq!(records[0]["code"], "ocr-unavailable", "{}", records[0]);
    let message = records[0]["message"].as_str().unwrap();
    assert!(
        message.contains("no data for the language(s) xyz"),
        "{message}"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    let warning = stderr
        .lines()
        .find(|line| line.contains("warning: OCR is unavailable"))
        .unwrap_or_else(|| panic!("no warning in {stderr}"));
    assert!(warning.ends_with(message), "{warning}");
}
