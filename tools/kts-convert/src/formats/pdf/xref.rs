//! A last resort for files whose cross-reference table is wrong (hand-made or
//! edited PDFs): find every `N G obj` and append a fresh table and trailer.
use regex::bytes::Regex;

pub fn rebuilt(bytes: &[u8]) -> Option<Vec<u8>> {
    let fixed = fixed_lengths(bytes);
    let bytes = &fixed[..];
    let object = Regex::new(r"(?m)(?:^|[\r\n ])(\d{1,7})\s+(\d{1,5})\s+obj\b").ok()?;
    let root = Regex::new(r"/Root\s+(\d+\s+\d+\s+R)").ok()?;
    let info = Regex::new(r"/Info\s+(\d+\s+\d+\s+R)").ok()?;
    let root = text(root.captures_iter(bytes).last()?.get(1)?.as_bytes());
    let mut offsets = std::collections::BTreeMap::new();
    for captures in object.captures_iter(bytes) {
        let (number, generation) = (captures.get(1)?, captures.get(2)?);
        let number: u32 = text(number.as_bytes()).parse().ok()?;
        let generation: u16 = text(generation.as_bytes()).parse().ok()?;
        offsets.insert(number, (captures.get(1)?.start(), generation));
    }
    let size = offsets.keys().next_back()? + 1;
    let mut table = format!("\nxref\n0 {size}\n0000000000 65535 f\r\n");
    for number in 1..size {
        match offsets.get(&number) {
            Some((offset, generation)) => {
                table.push_str(&format!("{offset:010} {generation:05} n\r\n"))
            }
            None => table.push_str("0000000000 65535 f\r\n"),
        }
    }
    let info = info
        .captures_iter(bytes)
        .last()
        .and_then(|c| c.get(1))
        .map(|m| format!(" /Info {}", text(m.as_bytes())));
    let start = bytes.len() + 1;
    table.push_str(&format!(
        "trailer\n<< /Size {size} /Root {root}{} >>\nstartxref\n{start}\n%%EOF\n",
        info.unwrap_or_default()
    ));
    let mut repaired = bytes.to_vec();
    repaired.extend_from_slice(table.as_bytes());
    Some(repaired)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Whether a page names a content stream the document does not hold (lopdf
/// drops a stream object whose /Length is wrong).
pub fn lost_contents(doc: &lopdf::Document) -> bool {
    doc.get_pages().values().any(|&page| {
        doc.get_page_contents(page)
            .iter()
            .any(|id| !matches!(doc.objects.get(id), Some(lopdf::Object::Stream(_))))
    })
}

/// The file with each direct stream `/Length` that does not end at an
/// `endstream` replaced by the length up to the next `endstream`.
pub fn fixed_lengths(bytes: &[u8]) -> Vec<u8> {
    let (Ok(stream), Ok(length)) = (
        Regex::new(r">>\s*stream(?:\r\n|\n|\r)"),
        Regex::new(r"/Length\s+(\d{1,12})(\s+\d+\s+\d+\s+R)?"),
    ) else {
        return bytes.to_vec();
    };
    let mut out = Vec::with_capacity(bytes.len() + 64);
    let mut copied = 0;
    let mut previous_end = 0;
    let mut at = 0;
    while let Some(found) = stream.find_at(bytes, at) {
        let data_start = found.end();
        let Some(end) = find(bytes, b"endstream", data_start) else {
            break;
        };
        let mut data_end = end;
        if bytes[..data_end].ends_with(b"\r\n") {
            data_end -= 2;
        } else if bytes[..data_end].ends_with(b"\n") || bytes[..data_end].ends_with(b"\r") {
            data_end -= 1;
        }
        let header = &bytes[previous_end..found.start()];
        let dict_from = previous_end + rfind(header, b"obj").unwrap_or(0);
        let declared = length
            .captures_iter(&bytes[dict_from..found.start()])
            .last()
            .filter(|c| c.get(2).is_none())
            .and_then(|c| c.get(1));
        if let Some(digits) = declared {
            let value: Option<usize> = text(digits.as_bytes()).parse().ok();
            let fits = value.is_some_and(|v| ends_stream(bytes, data_start.saturating_add(v)));
            if !fits && dict_from + digits.start() >= copied {
                out.extend_from_slice(&bytes[copied..dict_from + digits.start()]);
                out.extend_from_slice((data_end - data_start).to_string().as_bytes());
                copied = dict_from + digits.end();
            }
        }
        previous_end = end + b"endstream".len();
        at = previous_end;
    }
    out.extend_from_slice(&bytes[copied..]);
    out
}

/// Whether `endstream` follows `at`, after at most an end of line.
fn ends_stream(bytes: &[u8], at: usize) -> bool {
    let Some(rest) = bytes.get(at..) else {
        return false;
    };
    let skipped = rest
        .iter()
        .take(4)
        .take_while(|b| b.is_ascii_whitespace())
        .count();
    rest[skipped..].starts_with(b"endstream")
}

fn find(bytes: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|i| from + i)
}

fn rfind(bytes: &[u8], needle: &[u8]) -> Option<usize> {
    bytes.windows(needle.len()).rposition(|w| w == needle)
}
