//! Image XObjects as files of their own: JPEG data as it is, uncompressed or
//! Flate-compressed grey, RGB and indexed-colour samples as PNG. Other
//! encodings (JPEG 2000, CCITT fax, JBIG2) and colour spaces (CMYK, Lab,
//! separations), stencil masks and images too small to show anything are
//! left out.

use std::io::{Read, Write};

use flate2::{Compression, Crc, read::ZlibDecoder, write::ZlibEncoder};
use lopdf::{Document, Object, ObjectId, Stream};

use super::streams;

/// Images narrower or lower than this many pixels (icons, bullets, rules)
/// are not kept.
const MIN_SIDE: usize = 32;
/// PNG's largest palette.
const MAX_PALETTE: usize = 256;

/// The image XObject `id` as the bytes of an image file and their
/// extension; `None` for an image that is not kept. Samples are decoded only
/// for an image of at most `max_samples` (pixels × colour components).
pub fn encoded(doc: &Document, id: ObjectId, max_samples: u64) -> Option<(Vec<u8>, &'static str)> {
    let stream = doc.get_object(id).and_then(Object::as_stream).ok()?;
    let dimension = |key: &[u8]| {
        let value = stream.dict.get(key).and_then(Object::as_i64).ok()?;
        usize::try_from(value).ok().filter(|&v| v >= MIN_SIDE)
    };
    let (width, height) = (dimension(b"Width")?, dimension(b"Height")?);
    let is_mask = stream
        .dict
        .get(b"ImageMask")
        .and_then(Object::as_bool)
        .unwrap_or(false);
    if is_mask {
        return None;
    }
    let filters = stream.filters().unwrap_or_default();
    match filters.split_last() {
        Some((&(b"DCTDecode" | b"DCT"), transport)) => {
            // JPEG data is kept as it is; it is smaller than the samples it
            // codes, so more than that is not a JPEG.
            let limit = usize::try_from(max_samples).unwrap_or(usize::MAX);
            let jpeg = unfiltered(stream, transport, limit)?;
            (jpeg.len() < limit).then_some((jpeg, "jpg"))
        }
        _ => {
            let samples = Samples::of(doc, stream, width, height, max_samples)?;
            Some((samples.png(stream, &filters)?, "png"))
        }
    }
}

/// How an image's samples are laid out.
struct Samples {
    width: usize,
    height: usize,
    bits: u8,
    colour: Colour,
}

enum Colour {
    Grey,
    Rgb,
    /// Indexes into a palette of RGB triples.
    Indexed(Vec<u8>),
}

impl Colour {
    fn of(doc: &Document, space: &Object) -> Option<Colour> {
        let (_, space) = doc.dereference(space).ok()?;
        if let Ok(name) = space.as_name() {
            return Colour::device(name);
        }
        let items = space.as_array().ok()?;
        match items.first()?.as_name().ok()? {
            b"ICCBased" => {
                let profile = doc.dereference(items.get(1)?).ok()?.1.as_stream().ok()?;
                match profile.dict.get(b"N").and_then(Object::as_i64).ok()? {
                    1 => Some(Colour::Grey),
                    3 => Some(Colour::Rgb),
                    _ => None,
                }
            }
            b"Indexed" | b"I" => Colour::indexed(doc, items),
            name => Colour::device(name),
        }
    }

    fn device(name: &[u8]) -> Option<Colour> {
        match name {
            b"DeviceGray" | b"G" | b"CalGray" => Some(Colour::Grey),
            b"DeviceRGB" | b"RGB" | b"CalRGB" => Some(Colour::Rgb),
            _ => None,
        }
    }

    /// `[/Indexed base hival lookup]` with a grey or RGB base.
    fn indexed(doc: &Document, items: &[Object]) -> Option<Colour> {
        let [_, base, hival, lookup] = items else {
            return None;
        };
        let base = Colour::of(doc, base)?;
        let entries = usize::try_from(doc.dereference(hival).ok()?.1.as_i64().ok()?)
            .ok()?
            .checked_add(1)
            .filter(|&n| n <= MAX_PALETTE)?;
        let table = match doc.dereference(lookup).ok()?.1 {
            Object::String(bytes, _) => bytes.clone(),
            Object::Stream(stream) => {
                let filters = stream.filters().unwrap_or_default();
                unfiltered(stream, &filters, 3 * MAX_PALETTE)?
            }
            _ => return None,
        };
        let palette = match base {
            Colour::Grey => table.get(..entries)?.iter().flat_map(|&v| [v; 3]).collect(),
            Colour::Rgb => table.get(..3 * entries)?.to_vec(),
            Colour::Indexed(_) => return None,
        };
        Some(Colour::Indexed(palette))
    }

    fn components(&self) -> usize {
        match self {
            Colour::Rgb => 3,
            Colour::Grey | Colour::Indexed(_) => 1,
        }
    }

    /// PNG's colour type, if PNG has this depth for it.
    fn png_type(&self, bits: u8) -> Option<u8> {
        match (self, bits) {
            (Colour::Grey, 1 | 2 | 4 | 8 | 16) => Some(0),
            (Colour::Rgb, 8 | 16) => Some(2),
            (Colour::Indexed(_), 1 | 2 | 4 | 8) => Some(3),
            _ => None,
        }
    }
}

impl Samples {
    fn of(
        doc: &Document,
        stream: &Stream,
        width: usize,
        height: usize,
        max_samples: u64,
    ) -> Option<Samples> {
        let colour = Colour::of(doc, stream.dict.get(b"ColorSpace").ok()?)?;
        let bits = u8::try_from(stream.dict.get(b"BitsPerComponent").ok()?.as_i64().ok()?).ok()?;
        colour.png_type(bits)?;
        let count = (width as u64)
            .saturating_mul(height as u64)
            .saturating_mul(colour.components() as u64);
        let samples = Samples {
            width,
            height,
            bits,
            colour,
        };
        (count <= max_samples && !samples.remapped(stream)).then_some(samples)
    }

    /// Whether a /Decode array maps the samples to other colours (a
    /// negative, say): kept as they are they would mislead.
    fn remapped(&self, stream: &Stream) -> bool {
        let Ok(decode) = stream.dict.get(b"Decode").and_then(Object::as_array) else {
            return false;
        };
        let top = match self.colour {
            Colour::Indexed(_) => f32::from(u16::MAX >> (16 - self.bits)),
            _ => 1.0,
        };
        let default = [0.0, top].repeat(self.colour.components());
        let values: Vec<f32> = decode.iter().filter_map(|v| v.as_float().ok()).collect();
        values != default
    }

    fn row_bytes(&self) -> usize {
        (self.width * self.colour.components() * usize::from(self.bits)).div_ceil(8)
    }

    /// The image as a PNG file: PDF lays samples out as PNG does, and the
    /// PNG predictor's rows are PNG's filtered scanlines.
    fn png(&self, stream: &Stream, filters: &[&[u8]]) -> Option<Vec<u8>> {
        let parms = stream.dict.get(b"DecodeParms").ok();
        let last = filters.len().checked_sub(1);
        let predictor = last.and_then(|i| streams::parms_at(parms, i));
        let filtered = match streams::predictor(predictor) {
            1 => false,
            10..=15 if self.predicted_alike(predictor?) => true,
            _ => return None,
        };
        let row = self.row_bytes() + usize::from(filtered);
        let expected = row.checked_mul(self.height)?;
        let data = unfiltered(stream, filters, expected)?;
        let rows = data.get(..expected)?.chunks(row);
        let scanlines: Vec<u8> = if filtered {
            // Filter types beyond 4 do not exist: the data is damaged.
            if rows.clone().any(|row| row[0] > 4) {
                return None;
            }
            data[..expected].to_vec()
        } else {
            rows.flat_map(|row| std::iter::once(&0).chain(row))
                .copied()
                .collect()
        };
        self.encode(&scanlines)
    }

    /// Whether the predictor's rows are the image's rows.
    fn predicted_alike(&self, parms: &lopdf::Dictionary) -> bool {
        let value =
            |key: &[u8], default: i64| parms.get(key).and_then(Object::as_i64).unwrap_or(default);
        value(b"Colors", 1) == self.colour.components() as i64
            && value(b"BitsPerComponent", 8) == i64::from(self.bits)
            && value(b"Columns", 1) == self.width as i64
    }

    fn encode(&self, scanlines: &[u8]) -> Option<Vec<u8>> {
        let mut header = Vec::with_capacity(13);
        header.extend(u32::try_from(self.width).ok()?.to_be_bytes());
        header.extend(u32::try_from(self.height).ok()?.to_be_bytes());
        // Depth, colour type, deflate, adaptive filtering, no interlace.
        header.extend([self.bits, self.colour.png_type(self.bits)?, 0, 0, 0]);
        let mut zlib = ZlibEncoder::new(Vec::new(), Compression::default());
        zlib.write_all(scanlines).ok()?;
        let compressed = zlib.finish().ok()?;

        let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
        push_chunk(&mut png, b"IHDR", &header);
        if let Colour::Indexed(palette) = &self.colour {
            push_chunk(&mut png, b"PLTE", palette);
        }
        for part in compressed.chunks(1 << 20) {
            push_chunk(&mut png, b"IDAT", part);
        }
        push_chunk(&mut png, b"IEND", &[]);
        Some(png)
    }
}

fn push_chunk(png: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    png.extend((data.len() as u32).to_be_bytes());
    let mut crc = Crc::new();
    crc.update(kind);
    crc.update(data);
    png.extend(kind);
    png.extend(data);
    png.extend(crc.sum().to_be_bytes());
}

/// The stream's data with `filters` undone (predictors aside), Flate data
/// inflated to at most `limit` bytes; `None` if one of them is an image
/// codec or fails.
fn unfiltered(stream: &Stream, filters: &[&[u8]], limit: usize) -> Option<Vec<u8>> {
    let mut data = stream.content.clone();
    for &name in filters {
        data = match name {
            b"FlateDecode" | b"Fl" => inflate(&data, limit)?,
            b"ASCII85Decode" | b"A85" | b"ASCIIHexDecode" | b"AHx" | b"RunLengthDecode" | b"RL" => {
                streams::decode(&data, &Object::Name(name.to_vec()), None)?
            }
            _ => return None,
        };
    }
    Some(data)
}

/// Zlib data inflated up to `limit` bytes: a small stream that would
/// inflate to gigabytes costs no more than the image it claims to be.
fn inflate(data: &[u8], limit: usize) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    ZlibDecoder::new(data)
        .take(limit as u64)
        .read_to_end(&mut out)
        .ok()?;
    Some(out)
}
