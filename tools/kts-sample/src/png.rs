//! PNG images made in code (stored deflate blocks, hand-written zlib framing,
//! CRC-32 and Adler-32), plus the few byte helpers other writers share.

const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];

/// A valid RGB PNG of `width` x `height` pixels (each at least 1) with a
/// pattern derived from `seed`; distinct seeds give distinct bytes (the seed
/// is also recorded in a `tEXt` chunk).
pub fn tiny_png(width: u32, height: u32, seed: u64) -> Vec<u8> {
    let (width, height) = (width.max(1), height.max(1));
    let mut png = SIGNATURE.to_vec();
    let mut ihdr = Vec::with_capacity(13);
    ihdr.extend_from_slice(&width.to_be_bytes());
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]); // 8-bit RGB, deflate, no filter, no interlace
    push_chunk(&mut png, b"IHDR", &ihdr);
    push_chunk(
        &mut png,
        b"tEXt",
        format!("Comment\0kts-sample seed {seed}").as_bytes(),
    );
    push_chunk(
        &mut png,
        b"IDAT",
        &zlib_stored(&pixels(width, height, seed)),
    );
    push_chunk(&mut png, b"IEND", &[]);
    png
}

/// Raw scanlines: a filter byte (0) then RGB triples, a diagonal gradient
/// between two colours picked from the seed.
fn pixels(width: u32, height: u32, seed: u64) -> Vec<u8> {
    let a = splitmix64(seed).to_le_bytes();
    let b = splitmix64(seed ^ 0x5eed).to_le_bytes();
    let span = (width + height).max(2) - 1;
    let mut raw = Vec::with_capacity(height as usize * (width as usize * 3 + 1));
    for y in 0..height {
        raw.push(0);
        for x in 0..width {
            let t = (x + y) * 255 / span;
            for c in 0..3 {
                let mix = (u32::from(a[c]) * (255 - t) + u32::from(b[c]) * t) / 255;
                raw.push(mix as u8);
            }
        }
    }
    raw
}

fn push_chunk(png: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    png.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = png.len();
    png.extend_from_slice(kind);
    png.extend_from_slice(data);
    let crc = crc32(&png[start..]);
    png.extend_from_slice(&crc.to_be_bytes());
}

/// A zlib stream holding `data` in stored (uncompressed) deflate blocks.
pub(crate) fn zlib_stored(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x78, 0x01]; // deflate, 32 KiB window, no dictionary; (0x7801 % 31 == 0)
    let mut blocks = data.chunks(0xffff).peekable();
    if blocks.peek().is_none() {
        out.extend_from_slice(&[1, 0, 0, 0xff, 0xff]);
    }
    while let Some(block) = blocks.next() {
        let last = blocks.peek().is_none();
        let len = block.len() as u16;
        out.push(u8::from(last));
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(block);
    }
    out.extend_from_slice(&adler32(data).to_be_bytes());
    out
}

/// CRC-32 (IEEE, reflected, as PNG and zip use it), bit by bit with a table.
pub(crate) fn crc32(data: &[u8]) -> u32 {
    let table = crc_table();
    !data.iter().fold(!0u32, |crc, &b| {
        table[((crc ^ u32::from(b)) & 0xff) as usize] ^ (crc >> 8)
    })
}

fn crc_table() -> [u32; 256] {
    let mut table = [0u32; 256];
    for (n, entry) in table.iter_mut().enumerate() {
        let mut c = n as u32;
        for _ in 0..8 {
            c = if c & 1 == 1 {
                0xedb8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
        *entry = c;
    }
    table
}

pub(crate) fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for chunk in data.chunks(5552) {
        for &byte in chunk {
            a += u32::from(byte);
            b += a;
        }
        a %= 65521;
        b %= 65521;
    }
    (b << 16) | a
}

pub(crate) fn splitmix64(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Standard base64 with padding (for `data:` URIs).
pub(crate) fn base64(data: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// What the PDF writer needs to embed a PNG without decoding it.
pub(crate) struct PngInfo {
    pub width: u32,
    pub height: u32,
    /// 1 (grey) or 3 (RGB).
    pub colors: u8,
    /// The concatenated IDAT data: a zlib stream of PNG-filtered scanlines.
    pub idat: Vec<u8>,
}

/// Reads an 8-bit, non-interlaced grey or RGB PNG; anything else is `None`.
pub(crate) fn png_info(png: &[u8]) -> Option<PngInfo> {
    let mut rest = png.strip_prefix(&SIGNATURE)?;
    let mut info = PngInfo {
        width: 0,
        height: 0,
        colors: 0,
        idat: Vec::new(),
    };
    while rest.len() >= 12 {
        let len = u32::from_be_bytes(rest[..4].try_into().ok()?) as usize;
        let kind = &rest[4..8];
        let data = rest.get(8..8 + len)?;
        match kind {
            b"IHDR" if data.len() == 13 => {
                info.width = u32::from_be_bytes(data[..4].try_into().ok()?);
                info.height = u32::from_be_bytes(data[4..8].try_into().ok()?);
                let (depth, colour, interlace) = (data[8], data[9], data[12]);
                info.colors = match (depth, colour, interlace) {
                    (8, 0, 0) => 1,
                    (8, 2, 0) => 3,
                    _ => return None,
                };
            }
            b"IDAT" => info.idat.extend_from_slice(data),
            b"IEND" => break,
            _ => {}
        }
        rest = rest.get(12 + len..)?;
    }
    (info.colors != 0 && info.width > 0 && info.height > 0 && !info.idat.is_empty()).then_some(info)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_checksums() {
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
        assert_eq!(adler32(b"Wikipedia"), 0x11e6_0398);
        assert_eq!(base64(b"Man"), "TWFu");
        assert_eq!(base64(b"Ma"), "TWE=");
        assert_eq!(base64(b"M"), "TQ==");
    }

    #[test]
    fn png_info_reads_what_tiny_png_writes() {
        let info = png_info(&tiny_png(7, 5, 1)).expect("readable");
        assert_eq!((info.width, info.height, info.colors), (7, 5, 3));
        assert!(png_info(b"not a png").is_none());
    }
}
