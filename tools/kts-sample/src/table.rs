//! Tables as CSV: any delimiter, quoting where a field needs it, and the
//! encodings real exports come in.

use encoding_rs::Encoding;

/// How a CSV file is written.
#[derive(Clone, Copy, Debug)]
pub struct CsvDialect {
    pub delimiter: char,
    /// UTF-8 when `None`; UTF-16 encodings get a byte order mark.
    pub encoding: Option<&'static Encoding>,
}

impl Default for CsvDialect {
    fn default() -> Self {
        Self {
            delimiter: ',',
            encoding: None,
        }
    }
}

/// Writes rows as CSV with CRLF line ends; a field holding the delimiter,
/// a quote or a line break is quoted (quotes doubled).
pub fn to_csv(rows: &[Vec<&str>], dialect: CsvDialect) -> Vec<u8> {
    let mut text = String::new();
    for row in rows {
        let fields: Vec<String> = row
            .iter()
            .map(|field| {
                if field.contains([dialect.delimiter, '"', '\n', '\r']) {
                    format!("\"{}\"", field.replace('"', "\"\""))
                } else {
                    (*field).to_owned()
                }
            })
            .collect();
        text.push_str(&fields.join(&dialect.delimiter.to_string()));
        text.push_str("\r\n");
    }
    match dialect.encoding {
        None => text.into_bytes(),
        Some(encoding) if encoding == encoding_rs::UTF_16LE => [0xFF, 0xFE]
            .into_iter()
            .chain(text.encode_utf16().flat_map(u16::to_le_bytes))
            .collect(),
        Some(encoding) if encoding == encoding_rs::UTF_16BE => [0xFE, 0xFF]
            .into_iter()
            .chain(text.encode_utf16().flat_map(u16::to_be_bytes))
            .collect(),
        Some(encoding) => encoding.encode(&text).0.into_owned(),
    }
}
