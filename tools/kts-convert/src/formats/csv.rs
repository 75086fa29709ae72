//! CSV and TSV: one Markdown table, the first record as its header.
//!
//! The encoding (BOM, else UTF-16 told by its NUL bytes, else UTF-8, else
//! what `chardetng` judges most likely: Shift-JIS, Windows-1252, ...) and
//! the delimiter (comma, semicolon, tab or
//! pipe) are sniffed from the content, not taken from the extension; an
//! encoding other than UTF-8 is named in the `encoding` property. A first
//! line `sep=;` (as Excel writes it) names the delimiter and is not data.
//! Leading records of a single field above a wider table (a title, `Report
//! generated 2024-01-01`) are paragraphs before it, as a spreadsheet's title
//! rows are. Quoted fields may hold delimiters and line breaks; short rows
//! are padded.

use kts_record::ErrorCode;

use super::table::{markdown_table, row_title, table_cell};
use super::{ConvertError, Converted, text};

const DELIMITERS: [u8; 4] = [b',', b';', b'\t', b'|'];
/// How much of the text the delimiter is judged on.
const SNIFF_BYTES: usize = 64 << 10;

pub fn convert(bytes: &[u8]) -> Result<Converted, ConvertError> {
    let decoded = text::detect(bytes);
    let text = &decoded.text;
    if text.trim().is_empty() {
        return Err(ConvertError::new(
            ErrorCode::Empty,
            "the file holds no text",
        ));
    }
    if text.contains('\0') {
        return Err(ConvertError::new(
            ErrorCode::Unsupported,
            "binary content (NUL bytes) in a CSV file",
        ));
    }
    let (delimiter, text) = match declared_delimiter(text) {
        Some(declared) => declared,
        None => (sniff_delimiter(text), text.as_str()),
    };
    let mut rows = records(text, delimiter)?;
    let titles: Vec<String> = rows
        .drain(..title_records(&rows))
        .map(|row| table_cell(row.iter().find(|f| !f.trim().is_empty()).map_or("", |f| f)))
        .collect();
    let mut properties = serde_json::Map::new();
    decoded.note(&mut properties);
    properties.insert("delimiter".into(), (delimiter as char).to_string().into());
    properties.insert("rows".into(), rows.len().into());
    let mut markdown: String = titles.iter().map(|t| format!("{t}\n\n")).collect();
    markdown.push_str(&markdown_table(&rows));
    Ok(Converted {
        markdown,
        title: None,
        properties,
    })
}

/// The delimiter a first line `sep=X` names, and the text after that line.
fn declared_delimiter(text: &str) -> Option<(u8, &str)> {
    let (line, rest) = text.split_once('\n').unwrap_or((text, ""));
    let line = line.strip_suffix('\r').unwrap_or(line);
    let line = line
        .strip_prefix('"')
        .and_then(|l| l.strip_suffix('"'))
        .unwrap_or(line);
    let (key, delimiter) = line.split_at_checked(4)?;
    match delimiter.as_bytes() {
        [delimiter] if key.eq_ignore_ascii_case("sep=") => Some((*delimiter, rest)),
        _ => None,
    }
}

/// How many leading records are titles above the table: a single field
/// (see [`row_title`]), followed by a record of more than one.
fn title_records(rows: &[Vec<String>]) -> usize {
    let is_title = |row: &Vec<String>| row_title(row.iter().map(|f| (f.trim(), false))).is_some();
    let titles = rows.iter().take_while(|row| is_title(row)).count();
    let wider_below = rows
        .get(titles)
        .is_some_and(|row| row.iter().filter(|f| !f.trim().is_empty()).count() > 1);
    if wider_below { titles } else { 0 }
}

/// The delimiter that splits the first records into the most consistent
/// number of fields (more than one); a comma when none does.
fn sniff_delimiter(text: &str) -> u8 {
    let mut end = text.len().min(SNIFF_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let sample = &text[..end];
    let mut best = (b',', 0.0, 0);
    for delimiter in DELIMITERS {
        let counts: Vec<usize> = reader(sample, delimiter)
            .records()
            .take(50)
            .map_while(Result::ok)
            .map(|r| r.len())
            .collect();
        let Some(mode) = most_common(&counts).filter(|&m| m > 1) else {
            continue;
        };
        let consistency =
            counts.iter().filter(|&&c| c == mode).count() as f64 / counts.len() as f64;
        if (consistency, mode) > (best.1, best.2) {
            best = (delimiter, consistency, mode);
        }
    }
    best.0
}

fn most_common(counts: &[usize]) -> Option<usize> {
    let mut sorted = counts.to_vec();
    sorted.sort_unstable();
    sorted
        .chunk_by(|a, b| a == b)
        .max_by_key(|run| (run.len(), run[0]))
        .map(|run| run[0])
}

fn reader(text: &str, delimiter: u8) -> ::csv::Reader<&[u8]> {
    ::csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes())
}

/// Every record as its fields, blank records left out.
fn records(text: &str, delimiter: u8) -> Result<Vec<Vec<String>>, ConvertError> {
    let mut rows = Vec::new();
    for record in reader(text, delimiter).records() {
        let record = record.map_err(|e| ConvertError::corrupt(format!("unreadable CSV: {e}")))?;
        if record.iter().any(|field| !field.trim().is_empty()) {
            rows.push(record.iter().map(str::to_owned).collect());
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn markdown(bytes: &[u8]) -> String {
        convert(bytes).unwrap().markdown
    }

    #[test]
    fn each_delimiter_is_recognised() {
        for delimiter in [",", ";", "\t", "|"] {
            let csv = format!("name{delimiter}city\nAda{delimiter}London\nLin{delimiter}Oslo\n");
            assert_eq!(
                markdown(csv.as_bytes()),
                "| name | city |\n| --- | --- |\n| Ada | London |\n| Lin | Oslo |\n",
                "delimiter {delimiter:?}"
            );
        }
    }

    #[test]
    fn quoted_fields_keep_delimiters_and_line_breaks() {
        let csv = "item;note\n\"a;b\";\"first line\nsecond | line\"\nc;\"say \"\"hi\"\"\"\n";
        assert_eq!(
            markdown(csv.as_bytes()),
            "| item | note |\n| --- | --- |\n| a;b | first line second \\| line |\n| c | say \"hi\" |\n"
        );
    }

    #[test]
    fn ragged_rows_are_padded_not_dropped() {
        let csv = "1,2,3\na,b\na,b,c,d\n\n";
        assert_eq!(
            markdown(csv.as_bytes()),
            "| 1 | 2 | 3 |  |\n| --- | --- | --- | --- |\n| a | b |  |  |\n| a | b | c | d |\n"
        );
    }

    #[test]
    fn encodings_are_detected() {
        let utf16: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain("a\tb\n1\t2\n".encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        let converted = convert(&utf16).unwrap();
        assert_eq!(converted.markdown, "| a | b |\n| --- | --- |\n| 1 | 2 |\n");
        // Named, though not guessed: the byte order mark says it.
        assert_eq!(converted.properties["encoding"], "UTF-16LE");
        assert!(!converted.properties.contains_key("warnings"));
        let (shift_jis, ..) = encoding_rs::SHIFT_JIS.encode("名前,年齢,住所\n佐藤太郎,30,東京\n");
        let converted = convert(&shift_jis).unwrap();
        assert!(
            converted.markdown.contains("| 佐藤太郎 | 30 | 東京 |"),
            "{}",
            converted.markdown
        );
        assert_eq!(converted.properties["encoding"], "Shift_JIS");
        let (latin, ..) = encoding_rs::WINDOWS_1252.encode("Straße;Größe\nCafé;Thé\n");
        assert_eq!(
            markdown(&latin),
            "| Straße | Größe |\n| --- | --- |\n| Café | Thé |\n"
        );
    }

    #[test]
    fn a_sep_line_names_the_delimiter_and_titles_are_paragraphs() {
        let csv = "sep=;\r\nName;Dept;Phone\r\nAda;Sales;555-0150\r\n";
        let converted = convert(csv.as_bytes()).unwrap();
        assert_eq!(
            converted.markdown,
            "| Name | Dept | Phone |\n| --- | --- | --- |\n| Ada | Sales | 555-0150 |\n"
        );
        assert_eq!(converted.properties["delimiter"], ";");
        let csv = "Staff list\nReport generated 2024-01-01,,\nName,Dept\nAda,Sales\n";
        assert_eq!(
            markdown(csv.as_bytes()),
            "Staff list\n\nReport generated 2024-01-01\n\n| Name | Dept |\n| --- | --- |\n| Ada | Sales |\n"
        );
    }

    #[test]
    fn a_single_column_and_empty_files() {
        assert_eq!(
            markdown(b"Industry\nSales\n"),
            "| Industry |\n| --- |\n| Sales |\n"
        );
        assert_eq!(convert(b" \n\n").unwrap_err().code, ErrorCode::Empty);
    }
}
