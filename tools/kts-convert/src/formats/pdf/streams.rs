//! Stream filters lopdf cannot decode, and content streams that are damaged.
use std::collections::BTreeMap;

use lopdf::{Dictionary, Document, Object, ObjectId, Stream};

/// Decoded streams larger than this are left encoded.
const MAX_DECODED: usize = 256 << 20;

/// Makes every stream readable with lopdf's `decompressed_content`, which
/// pdf-extract relies on: an indirect /Filter or /DecodeParms becomes
/// direct, and a stream whose filters lopdf lacks (ASCIIHex, RunLength,
/// the TIFF predictor, abbreviated names) is decoded here. Images keep
/// their encoding.
pub fn normalise(doc: &mut Document) {
    let ids: Vec<ObjectId> = doc
        .objects
        .iter()
        .filter(|(_, o)| matches!(o, Object::Stream(_)))
        .map(|(id, _)| *id)
        .collect();
    for id in ids {
        let Some(Object::Stream(stream)) = doc.objects.get(&id) else {
            continue;
        };
        let filter = stream.dict.get(b"Filter").ok().map(|f| direct(doc, f));
        let parms = stream.dict.get(b"DecodeParms").ok().map(|p| direct(doc, p));
        let is_image = stream
            .dict
            .get(b"Subtype")
            .and_then(Object::as_name)
            .is_ok_and(|n| n == b"Image");
        let decoded = match (&filter, is_image) {
            (Some(filter), false) if needs_help(filter, parms.as_ref()) => {
                decode(&stream.content, filter, parms.as_ref())
            }
            _ => None,
        };
        let Some(Object::Stream(stream)) = doc.objects.get_mut(&id) else {
            continue;
        };
        if let Some(content) = decoded {
            stream.dict.remove(b"Filter");
            stream.dict.remove(b"DecodeParms");
            stream.set_content(content);
            continue;
        }
        if let Some(filter) = filter {
            stream.dict.set("Filter", filter);
        }
        if let Some(parms) = parms {
            stream.dict.set("DecodeParms", parms);
        }
    }
}

/// The object with references (also inside an array) resolved.
fn direct(doc: &Document, object: &Object) -> Object {
    let resolve = |o: &Object| {
        doc.dereference(o)
            .map(|(_, o)| o.clone())
            .unwrap_or(Object::Null)
    };
    match resolve(object) {
        Object::Array(items) => Object::Array(items.iter().map(resolve).collect()),
        other => other,
    }
}

fn names(filter: &Object) -> Vec<&[u8]> {
    match filter {
        Object::Name(name) => vec![name.as_slice()],
        Object::Array(items) => items.iter().filter_map(|o| o.as_name().ok()).collect(),
        _ => Vec::new(),
    }
}

pub(super) fn parms_at(parms: Option<&Object>, index: usize) -> Option<&Dictionary> {
    match parms? {
        Object::Dictionary(dict) => (index == 0).then_some(dict),
        Object::Array(items) => items.get(index)?.as_dict().ok(),
        _ => None,
    }
}

pub(super) fn predictor(parms: Option<&Dictionary>) -> i64 {
    parms
        .and_then(|p| p.get(b"Predictor").and_then(Object::as_i64).ok())
        .unwrap_or(1)
}

/// Whether lopdf's own decoding would get the stream wrong.
fn needs_help(filter: &Object, parms: Option<&Object>) -> bool {
    let names = names(filter);
    let native = |n: &[u8]| matches!(n, b"FlateDecode" | b"LZWDecode" | b"ASCII85Decode");
    names.len() > 1 && matches!(parms, Some(Object::Array(_)))
        || names.iter().any(|n| !native(n))
        || (0..names.len()).any(|i| predictor(parms_at(parms, i)) == 2)
}

/// The stream decoded through all its filters; `None` if one of them is
/// not known here (image codecs) or fails.
pub(super) fn decode(content: &[u8], filter: &Object, parms: Option<&Object>) -> Option<Vec<u8>> {
    let mut data = content.to_vec();
    for (index, name) in names(filter).into_iter().enumerate() {
        let parms = parms_at(parms, index);
        data = match name {
            b"FlateDecode" | b"Fl" => lopdf_decode(data, b"FlateDecode", parms)?,
            b"LZWDecode" | b"LZW" => lopdf_decode(data, b"LZWDecode", parms)?,
            b"ASCII85Decode" | b"A85" => {
                let end = data
                    .iter()
                    .rposition(|b| !b.is_ascii_whitespace())
                    .map_or(0, |i| i + 1);
                data.truncate(end);
                lopdf_decode(data, b"ASCII85Decode", None)?
            }
            b"ASCIIHexDecode" | b"AHx" => ascii_hex(&data),
            b"RunLengthDecode" | b"RL" => run_length(&data)?,
            _ => return None,
        };
        if predictor(parms) == 2 {
            tiff_predictor(&mut data, parms);
        }
        if data.len() > MAX_DECODED {
            return None;
        }
    }
    Some(data)
}

fn lopdf_decode(data: Vec<u8>, filter: &[u8], parms: Option<&Dictionary>) -> Option<Vec<u8>> {
    let mut dict = Dictionary::new();
    dict.set("Filter", Object::Name(filter.to_vec()));
    if let Some(parms) = parms.filter(|p| predictor(Some(p)) != 2) {
        dict.set("DecodeParms", parms.clone());
    }
    Stream::new(dict, data).decompressed_content().ok()
}

fn ascii_hex(data: &[u8]) -> Vec<u8> {
    let digits: Vec<u8> = data
        .iter()
        .take_while(|&&b| b != b'>')
        .filter_map(|&b| (b as char).to_digit(16).map(|d| d as u8))
        .collect();
    digits
        .chunks(2)
        .map(|pair| pair[0] << 4 | pair.get(1).copied().unwrap_or(0))
        .collect()
}

fn run_length(data: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&length) = data.get(i) {
        match length {
            128 => break,
            0..=127 => {
                let run = data.get(i + 1..i + 2 + length as usize)?;
                out.extend_from_slice(run);
                i += 2 + length as usize;
            }
            _ => {
                let byte = *data.get(i + 1)?;
                out.extend(std::iter::repeat_n(byte, 257 - length as usize));
                i += 2;
            }
        }
        if out.len() > MAX_DECODED {
            return None;
        }
    }
    Some(out)
}

/// TIFF predictor 2 for 8-bit components: each byte is the difference to
/// the same component of the pixel before it.
fn tiff_predictor(data: &mut [u8], parms: Option<&Dictionary>) {
    let value = |key: &[u8], default: i64| {
        parms
            .and_then(|p| p.get(key).and_then(Object::as_i64).ok())
            .unwrap_or(default)
            .clamp(1, 1 << 16) as usize
    };
    if value(b"BitsPerComponent", 8) != 8 {
        return;
    }
    let colors = value(b"Colors", 1);
    let row = colors * value(b"Columns", 1);
    for line in data.chunks_mut(row) {
        for i in colors..line.len() {
            line[i] = line[i].wrapping_add(line[i - colors]);
        }
    }
}

/// The first page content stream, or form XObject, whose Flate data does
/// not decompress intact (lopdf keeps what it could inflate and says
/// nothing): the file is damaged.
pub fn damaged_content(doc: &Document, pages: &BTreeMap<u32, ObjectId>) -> Option<String> {
    for (number, &page) in pages {
        for id in doc.get_page_contents(page) {
            if let Ok(stream) = doc.get_object(id).and_then(Object::as_stream)
                && !inflates(stream)
            {
                return Some(format!(
                    "page {number}: its content stream is damaged (it does not decompress)"
                ));
            }
        }
    }
    doc.objects.iter().find_map(|(id, object)| {
        let stream = object.as_stream().ok()?;
        let is_form = stream
            .dict
            .get(b"Subtype")
            .and_then(Object::as_name)
            .is_ok_and(|n| n == b"Form");
        (is_form && !inflates(stream)).then(|| {
            format!(
                "a drawing (form XObject {} {}) is damaged (it does not decompress)",
                id.0, id.1
            )
        })
    })
}

/// Whether a stream that is only Flate-encoded decompresses to data whose
/// Adler-32 checksum matches the one the stream ends with.
fn inflates(stream: &Stream) -> bool {
    let flate_only = stream
        .filters()
        .is_ok_and(|f| f.len() == 1 && f[0] == b"FlateDecode");
    let plain = predictor(
        stream
            .dict
            .get(b"DecodeParms")
            .and_then(Object::as_dict)
            .ok(),
    ) == 1;
    let data = &stream.content;
    if !flate_only || !plain || data.iter().all(u8::is_ascii_whitespace) {
        return true;
    }
    let Some(inflated) = lopdf_decode(data.clone(), b"FlateDecode", None) else {
        return false;
    };
    let checksum = adler32(&inflated).to_be_bytes();
    // The checksum ends the zlib data; some writers pad the stream after it.
    let earliest = data.len().saturating_sub(20).max(6);
    (earliest..=data.len()).any(|end| data[end - 4..end] == checksum)
}

fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for chunk in data.chunks(5552) {
        for &byte in chunk {
            a += u32::from(byte);
            b += a;
        }
        a %= 65521;
        b %= 65521;
    }
    b << 16 | a
}
