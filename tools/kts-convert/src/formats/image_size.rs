//! An image's size in pixels, read from its header without decoding it, so a
//! huge image is refused before anything allocates memory for its pixels.

use std::collections::HashSet;

/// Width and height of a PNG, JPEG or TIFF image; for a multi-page TIFF, of
/// its largest page.
pub fn largest_page(bytes: &[u8]) -> Result<(u64, u64), String> {
    match bytes {
        [0x89, b'P', b'N', b'G', ..] => png(bytes),
        [0xFF, 0xD8, ..] => jpeg(bytes),
        [b'I', b'I', ..] | [b'M', b'M', ..] => tiff(bytes),
        _ => Err("not a PNG, JPEG or TIFF image".into()),
    }
}

fn png(bytes: &[u8]) -> Result<(u64, u64), String> {
    if bytes.get(12..16) != Some(b"IHDR") {
        return Err("the PNG header (IHDR) is missing".into());
    }
    Ok((u64::from(be32(bytes, 16)?), u64::from(be32(bytes, 20)?)))
}

fn jpeg(bytes: &[u8]) -> Result<(u64, u64), String> {
    let mut at = 2;
    while at + 4 <= bytes.len() {
        if bytes[at] != 0xFF {
            return Err(format!("the JPEG's marker at byte {at} is damaged"));
        }
        let marker = bytes[at + 1];
        match marker {
            // Fill bytes, and markers without a segment.
            0xFF => at += 1,
            0x01 | 0xD0..=0xD8 => at += 2,
            _ => {
                let length = usize::from(be16(bytes, at + 2)?);
                // Start of frame (any coding but DHT, JPG and DAC, which share the range).
                if matches!(marker, 0xC0..=0xCF) && !matches!(marker, 0xC4 | 0xC8 | 0xCC) {
                    let height = be16(bytes, at + 5)?;
                    let width = be16(bytes, at + 7)?;
                    return Ok((u64::from(width), u64::from(height)));
                }
                if marker == 0xDA || length < 2 {
                    break;
                }
                at += 2 + length;
            }
        }
    }
    Err("the JPEG has no frame header (SOF) before its image data".into())
}

fn tiff(bytes: &[u8]) -> Result<(u64, u64), String> {
    let little = bytes.starts_with(b"II");
    let u16_at = |at: usize| -> Result<u16, String> {
        let b = bytes.get(at..at + 2).ok_or_else(truncated)?;
        Ok(if little {
            u16::from_le_bytes([b[0], b[1]])
        } else {
            u16::from_be_bytes([b[0], b[1]])
        })
    };
    let u32_at = |at: usize| -> Result<u32, String> {
        let b = bytes.get(at..at + 4).ok_or_else(truncated)?;
        let b = [b[0], b[1], b[2], b[3]];
        Ok(if little {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        })
    };
    let mut largest: Option<(u64, u64)> = None;
    let mut seen = HashSet::new();
    let mut ifd = u32_at(4)? as usize;
    while ifd != 0 {
        if !seen.insert(ifd) {
            return Err("the TIFF's pages form a loop".into());
        }
        let entries = usize::from(u16_at(ifd)?);
        let (mut width, mut height) = (None, None);
        for entry in (0..entries).map(|i| ifd + 2 + 12 * i) {
            let value = match u16_at(entry + 2)? {
                3 => u64::from(u16_at(entry + 8)?),
                4 => u64::from(u32_at(entry + 8)?),
                _ => continue,
            };
            match u16_at(entry)? {
                256 => width = Some(value),
                257 => height = Some(value),
                _ => {}
            }
        }
        let (Some(w), Some(h)) = (width, height) else {
            return Err("a TIFF page does not give its width and height".into());
        };
        if largest.is_none_or(|(lw, lh)| w * h > lw * lh) {
            largest = Some((w, h));
        }
        ifd = u32_at(ifd + 2 + 12 * entries)? as usize;
    }
    largest.ok_or_else(|| "the TIFF has no pages".into())
}

fn truncated() -> String {
    "the image header is truncated".into()
}

fn be16(bytes: &[u8], at: usize) -> Result<u16, String> {
    let b = bytes.get(at..at + 2).ok_or_else(truncated)?;
    Ok(u16::from_be_bytes([b[0], b[1]]))
}

fn be32(bytes: &[u8], at: usize) -> Result<u32, String> {
    let b = bytes.get(at..at + 4).ok_or_else(truncated)?;
    Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png_header(width: u32, height: u32) -> Vec<u8> {
        let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        bytes.extend(width.to_be_bytes());
        bytes.extend(height.to_be_bytes());
        bytes
    }

    #[test]
    fn png_size() {
        assert_eq!(largest_page(&png_header(20_000, 300)), Ok((20_000, 300)));
        assert!(largest_page(&png_header(1, 1)[..18]).is_err());
    }

    #[test]
    fn jpeg_size_comes_from_the_frame_header() {
        let mut bytes = vec![0xFF, 0xD8, 0xFF, 0xE0, 0, 4, 0, 0];
        // SOF0: length 17, precision 8, height 480, width 640.
        bytes.extend([0xFF, 0xC0, 0, 17, 8, 0x01, 0xE0, 0x02, 0x80]);
        assert_eq!(largest_page(&bytes), Ok((640, 480)));
        assert!(largest_page(&[0xFF, 0xD8, 0xFF, 0xE0, 0, 4, 0, 0]).is_err());
        assert!(largest_page(&[0xFF, 0xD8, 0x00, 0x00, 0, 0]).is_err());
    }

    #[test]
    fn tiff_size_is_its_largest_page() {
        // Two pages (little-endian): 10 x 20 (SHORT), then 3000 x 4000 (LONG).
        let mut bytes = b"II*\0\x08\0\0\0".to_vec();
        let page = |bytes: &mut Vec<u8>, kind: u16, w: u32, h: u32, next: u32| {
            bytes.extend(2u16.to_le_bytes());
            for (tag, value) in [(256u16, w), (257, h)] {
                bytes.extend(tag.to_le_bytes());
                bytes.extend(kind.to_le_bytes());
                bytes.extend(1u32.to_le_bytes());
                bytes.extend(value.to_le_bytes());
            }
            bytes.extend(next.to_le_bytes());
        };
        page(&mut bytes, 3, 10, 20, 38);
        page(&mut bytes, 4, 3000, 4000, 0);
        assert_eq!(largest_page(&bytes), Ok((3000, 4000)));
        // A page that points back at the first one.
        let mut looping = bytes.clone();
        let last = looping.len() - 4;
        looping[last..].copy_from_slice(&8u32.to_le_bytes());
        assert!(largest_page(&looping).unwrap_err().contains("loop"));
        assert!(largest_page(&bytes[..30]).is_err());
    }
}
