//! Composite (Type0) fonts pdf-extract cannot decode: it panics on predefined
//! CMaps other than Identity, misreads embedded CMaps and has no Unicode
//! source but a ToUnicode stream. Such a font gets an Identity encoding over
//! its own code space and a ToUnicode CMap built here from what the file
//! offers: its ToUnicode CMap (or the name Identity-H: codes are Unicode), a
//! Unicode CMap name (UniJIS-UCS2-H, ...), the JIS X 0208 CMaps H and V, the
//! cmap table of an embedded TrueType program, or Adobe-Japan1 CIDs.
use std::collections::BTreeMap;

use lopdf::{Dictionary, Document, Object, ObjectId, Stream};

/// A code space range: bytes per code, first and last code.
type Range = (usize, u32, u32);

pub fn normalise(doc: &mut Document) {
    let fonts: Vec<ObjectId> = doc
        .objects
        .iter()
        .filter(|(_, o)| {
            o.as_dict()
                .and_then(|d| d.get(b"Subtype"))
                .and_then(Object::as_name)
                .is_ok_and(|n| n == b"Type0")
        })
        .map(|(id, _)| *id)
        .collect();
    for id in fonts {
        let Some((encoding, to_unicode)) = rebuild(doc, id) else {
            continue;
        };
        let encoding = doc.add_object(Stream::new(Dictionary::new(), encoding));
        let to_unicode = doc.add_object(Stream::new(Dictionary::new(), to_unicode));
        if let Ok(font) = doc.get_dictionary_mut(id) {
            font.set("Encoding", encoding);
            font.set("ToUnicode", to_unicode);
        }
    }
}

/// A new encoding CMap and ToUnicode CMap for a font pdf-extract would get
/// wrong; `None` for a font it reads well.
fn rebuild(doc: &mut Document, id: ObjectId) -> Option<(Vec<u8>, Vec<u8>)> {
    let font = doc.get_dictionary(id).ok()?;
    let encoding = font.get_deref(b"Encoding", doc).ok().cloned();
    let to_unicode = font.get_deref(b"ToUnicode", doc).ok().cloned();
    let descendant = font
        .get_deref(b"DescendantFonts", doc)
        .and_then(Object::as_array)
        .ok()
        .and_then(|a| a.first())
        .and_then(|d| doc.dereference(d).ok())
        .map(|(did, d)| (did, d.clone()));
    let identity = |name: &[u8]| matches!(name, b"Identity-H" | b"Identity-V");
    let encoding_name = encoding.as_ref().and_then(|e| e.as_name().ok());
    if encoding_name.is_some_and(identity) && matches!(to_unicode, Some(Object::Stream(_))) {
        return None;
    }
    let (_, descendant) = descendant?;
    let descendant = descendant.as_dict().ok()?.clone();

    let mut space: Vec<Range> = vec![(2, 0, 0xFFFF)];
    let mut cids: Vec<(u32, u32, u32)> = vec![(0, 0xFFFF, 0)];
    let mut unicode: BTreeMap<u32, String> = BTreeMap::new();
    let mut codes_are_unicode = false;
    let mut jis = false;
    match &encoding {
        Some(Object::Name(name)) if identity(name) => {}
        Some(Object::Name(name)) if matches!(name.as_slice(), b"H" | b"V") => {
            jis = true;
            space = vec![(2, 0x2121, 0x7E7E)];
        }
        Some(Object::Name(name)) if is_unicode_cmap(name) => codes_are_unicode = true,
        Some(Object::Stream(stream)) => {
            let cmap = parse_cmap(&content(stream));
            if !cmap.space.is_empty() {
                space = cmap.space;
            }
            cids = cmap.cids;
        }
        // An encoding not known here: its codes stay undecoded, but the
        // rest of the page still reads.
        _ => {}
    }
    match &to_unicode {
        Some(Object::Stream(stream)) => unicode = parse_cmap(&content(stream)).unicode,
        Some(Object::Name(name)) if identity(name) => codes_are_unicode = true,
        _ => {}
    }
    if jis {
        for code in 0x2121..=0x7E7Eu32 {
            if let Some(text) = jis_text(code) {
                unicode.entry(code).or_insert(text);
            }
        }
    }
    if !codes_are_unicode {
        let by_cid = cid_unicode(doc, &descendant);
        for &(low, high, cid) in &cids {
            for code in low..=high.min(low + 0xFFFF) {
                if let Some(text) = by_cid.get(&(cid + code - low)) {
                    unicode.entry(code).or_insert_with(|| text.clone());
                }
            }
        }
    }
    // pdf-extract needs a font descriptor on the CID font.
    if descendant.get(b"FontDescriptor").is_err() {
        let mut fixed = descendant.clone();
        fixed.set("FontDescriptor", Dictionary::new());
        let fixed = doc.add_object(fixed);
        if let Ok(font) = doc.get_dictionary_mut(id) {
            font.set("DescendantFonts", vec![Object::Reference(fixed)]);
        }
    }
    Some((
        encoding_cmap(&space),
        to_unicode_cmap(&unicode, codes_are_unicode),
    ))
}

fn is_unicode_cmap(name: &[u8]) -> bool {
    let name = String::from_utf8_lossy(name);
    name.starts_with("Uni") && (name.contains("-UCS2-") || name.contains("-UTF16-"))
}

fn content(stream: &Stream) -> Vec<u8> {
    stream
        .decompressed_content()
        .unwrap_or_else(|_| stream.content.clone())
}

/// The text of a JIS X 0208 code (row and cell bytes 0x21..=0x7E).
fn jis_text(code: u32) -> Option<String> {
    let bytes = [(code >> 8) as u8 | 0x80, (code & 0xFF) as u8 | 0x80];
    encoding_rs::EUC_JP
        .decode_without_bom_handling_and_without_replacement(&bytes)
        .map(|t| t.into_owned())
}

/// CID → text from the CID font: the embedded TrueType program's cmap
/// (through /CIDToGIDMap), or the Adobe-Japan1 character collection.
fn cid_unicode(doc: &Document, cid_font: &Dictionary) -> BTreeMap<u32, String> {
    let mut by_cid = BTreeMap::new();
    let program = cid_font
        .get_deref(b"FontDescriptor", doc)
        .and_then(Object::as_dict)
        .and_then(|d| d.get_deref(b"FontFile2", doc))
        .and_then(Object::as_stream)
        .ok()
        .map(content);
    if let Some(by_glyph) = program.as_deref().and_then(truetype_cmap) {
        match cid_font
            .get_deref(b"CIDToGIDMap", doc)
            .and_then(Object::as_stream)
        {
            Ok(map) => {
                for (cid, gid) in content(map).chunks_exact(2).enumerate() {
                    let gid = u16::from_be_bytes([gid[0], gid[1]]);
                    if let Some(&c) = by_glyph.get(&gid) {
                        by_cid.insert(cid as u32, c.to_string());
                    }
                }
            }
            Err(_) => {
                for (&gid, &c) in &by_glyph {
                    by_cid.insert(u32::from(gid), c.to_string());
                }
            }
        }
    }
    let ordering = cid_font
        .get_deref(b"CIDSystemInfo", doc)
        .and_then(Object::as_dict)
        .and_then(|i| i.get_deref(b"Ordering", doc))
        .and_then(Object::as_str)
        .unwrap_or_default();
    if ordering == b"Japan1" {
        for (cid, text) in japan1::unicode() {
            by_cid.entry(cid).or_insert(text);
        }
    }
    by_cid
}

/// Glyph id → character from a TrueType program's Unicode cmap subtable
/// (format 4 or 12).
fn truetype_cmap(font: &[u8]) -> Option<BTreeMap<u16, char>> {
    let u16_at = |at: usize| Some(u16::from_be_bytes(font.get(at..at + 2)?.try_into().ok()?));
    let u32_at = |at: usize| Some(u32::from_be_bytes(font.get(at..at + 4)?.try_into().ok()?));
    let tables = u16_at(4)? as usize;
    let cmap = (0..tables).find_map(|i| {
        let record = 12 + 16 * i;
        (font.get(record..record + 4)? == b"cmap").then(|| u32_at(record + 8))?
    })? as usize;
    let mut best: Option<(u8, usize)> = None;
    for i in 0..u16_at(cmap + 2)? as usize {
        let record = cmap + 4 + 8 * i;
        let (platform, encoding) = (u16_at(record)?, u16_at(record + 2)?);
        let rank = match (platform, encoding) {
            (3, 10) => 4,
            (3, 1) => 3,
            (0, _) => 2,
            _ => continue,
        };
        if best.is_none_or(|(r, _)| rank > r) {
            best = Some((rank, cmap + u32_at(record + 4)? as usize));
        }
    }
    let (_, table) = best?;
    let mut glyphs = BTreeMap::new();
    let mut add = |code: u32, gid: u32| {
        if let (Some(c), Ok(gid)) = (char::from_u32(code), u16::try_from(gid))
            && gid != 0
        {
            glyphs.entry(gid).or_insert(c);
        }
    };
    match u16_at(table)? {
        4 => {
            let segments = u16_at(table + 6)? as usize / 2;
            let ends = table + 14;
            let starts = ends + 2 * segments + 2;
            let deltas = starts + 2 * segments;
            let offsets = deltas + 2 * segments;
            for s in 0..segments {
                let (end, start) = (u16_at(ends + 2 * s)?, u16_at(starts + 2 * s)?);
                let delta = u16_at(deltas + 2 * s)?;
                let offset = u16_at(offsets + 2 * s)? as usize;
                for code in start..=end.min(0xFFFE) {
                    let glyph = if offset == 0 {
                        code.wrapping_add(delta)
                    } else {
                        let at = offsets + 2 * s + offset + 2 * usize::from(code - start);
                        match u16_at(at) {
                            Some(0) | None => continue,
                            Some(g) => g.wrapping_add(delta),
                        }
                    };
                    add(u32::from(code), u32::from(glyph));
                }
            }
        }
        12 => {
            let groups = (u32_at(table + 12)? as usize).min(1 << 16);
            for g in 0..groups {
                let at = table + 16 + 12 * g;
                let (start, end, glyph) = (u32_at(at)?, u32_at(at + 4)?, u32_at(at + 8)?);
                for code in start..=end.min(start.saturating_add(0xFFFF)) {
                    add(code, glyph + (code - start));
                }
            }
        }
        _ => return None,
    }
    Some(glyphs)
}

/// What a CMap file defines.
#[derive(Default)]
struct CMap {
    space: Vec<Range>,
    cids: Vec<(u32, u32, u32)>,
    unicode: BTreeMap<u32, String>,
}

#[derive(Debug, PartialEq)]
enum Token {
    Hex(Vec<u8>),
    Int(u32),
    Word(String),
    Open,
    Close,
}

fn tokens(text: &[u8]) -> Vec<Token> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let c = text[i];
        match c {
            b'%' => {
                while i < text.len() && text[i] != b'\n' && text[i] != b'\r' {
                    i += 1;
                }
            }
            b'<' if text.get(i + 1) == Some(&b'<') => i += 2,
            b'>' if text.get(i + 1) == Some(&b'>') => i += 2,
            b'<' => {
                let end = text[i..]
                    .iter()
                    .position(|&b| b == b'>')
                    .map_or(text.len(), |p| i + p);
                let digits: Vec<u8> = text[i + 1..end]
                    .iter()
                    .filter_map(|&b| (b as char).to_digit(16).map(|d| d as u8))
                    .collect();
                out.push(Token::Hex(
                    digits
                        .chunks(2)
                        .map(|p| p[0] << 4 | p.get(1).copied().unwrap_or(0))
                        .collect(),
                ));
                i = end + 1;
            }
            b'[' => {
                out.push(Token::Open);
                i += 1;
            }
            b']' => {
                out.push(Token::Close);
                i += 1;
            }
            b'(' => {
                let mut depth = 0;
                while i < text.len() {
                    match text[i] {
                        b'\\' => i += 1,
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
                i += 1;
            }
            _ if c.is_ascii_whitespace() || c == b'{' || c == b'}' || c == b'>' => i += 1,
            _ => {
                let start = i;
                while i < text.len() && !b" \t\r\n\x0c\0<>[]()/%{}".contains(&text[i]) || i == start
                {
                    i += 1;
                }
                let word = String::from_utf8_lossy(&text[start..i]).into_owned();
                match word.parse() {
                    Ok(n) => out.push(Token::Int(n)),
                    Err(_) => out.push(Token::Word(word)),
                }
            }
        }
    }
    out
}

fn code(bytes: &[u8]) -> u32 {
    bytes
        .iter()
        .take(4)
        .fold(0, |acc, &b| acc << 8 | u32::from(b))
}

fn utf16(bytes: &[u8]) -> Option<String> {
    let units: Vec<u16> = bytes
        .chunks(2)
        .map(|p| u16::from_be_bytes([p[0], p.get(1).copied().unwrap_or(0)]))
        .collect();
    String::from_utf16(&units).ok().filter(|s| !s.is_empty())
}

fn parse_cmap(text: &[u8]) -> CMap {
    let tokens = tokens(text);
    let mut cmap = CMap::default();
    let mut section = "";
    let mut i = 0;
    while i < tokens.len() {
        match (&tokens[i], section) {
            (Token::Word(w), _) if w.starts_with("begin") => {
                section = if w == "begincmap" { "" } else { &w[5..] }
            }
            (Token::Word(w), _) if w.starts_with("end") => section = "",
            (Token::Hex(low), "codespacerange") => {
                if let Some(Token::Hex(high)) = tokens.get(i + 1) {
                    cmap.space
                        .push((low.len().clamp(1, 4), code(low), code(high)));
                    i += 1;
                }
            }
            (Token::Hex(low), "cidrange") => {
                if let (Some(Token::Hex(high)), Some(Token::Int(cid))) =
                    (tokens.get(i + 1), tokens.get(i + 2))
                {
                    cmap.cids.push((code(low), code(high), *cid));
                    i += 2;
                }
            }
            (Token::Hex(c), "cidchar") => {
                if let Some(Token::Int(cid)) = tokens.get(i + 1) {
                    cmap.cids.push((code(c), code(c), *cid));
                    i += 1;
                }
            }
            (Token::Hex(c), "bfchar") => {
                if let Some(Token::Hex(dst)) = tokens.get(i + 1) {
                    if let Some(text) = utf16(dst) {
                        cmap.unicode.insert(code(c), text);
                    }
                    i += 1;
                }
            }
            (Token::Hex(low), "bfrange") => {
                let (low, high) = match tokens.get(i + 1) {
                    Some(Token::Hex(high)) => (code(low), code(high)),
                    _ => {
                        i += 1;
                        continue;
                    }
                };
                let high = high.min(low + 0xFFFF);
                match tokens.get(i + 2) {
                    Some(Token::Hex(dst)) if dst.len() >= 2 => {
                        let last = u16::from_be_bytes([dst[dst.len() - 2], dst[dst.len() - 1]]);
                        for c in low..=high {
                            let mut dst = dst.clone();
                            let unit = last.wrapping_add((c - low) as u16).to_be_bytes();
                            let n = dst.len();
                            dst[n - 2..].copy_from_slice(&unit);
                            if let Some(text) = utf16(&dst) {
                                cmap.unicode.insert(c, text);
                            }
                        }
                        i += 2;
                    }
                    Some(Token::Open) => {
                        let mut c = low;
                        i += 3;
                        while let Some(Token::Hex(dst)) = tokens.get(i) {
                            if let Some(text) = utf16(dst) {
                                cmap.unicode.insert(c, text);
                            }
                            c += 1;
                            i += 1;
                        }
                    }
                    _ => i += 1,
                }
            }
            _ => {}
        }
        i += 1;
    }
    cmap
}

/// An identity CMap (code = CID) over `space`, written for pdf-extract's
/// CMap reader: it takes a code space bound of n bytes for codes of n/2
/// bytes, and reads only the first range of a cidrange block.
fn encoding_cmap(space: &[Range]) -> Vec<u8> {
    let hex = |value: u32, bytes: usize| format!("{value:0width$X}", width = bytes * 4);
    let mut out = String::from(
        "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n/CMapName /KtsIdentity def\n",
    );
    out.push_str(&format!("{} begincodespacerange\n", space.len()));
    for &(bytes, low, high) in space {
        out.push_str(&format!("<{}> <{}>\n", hex(low, bytes), hex(high, bytes)));
    }
    out.push_str("endcodespacerange\n1 begincidrange\n<00> <FFFFFFFF> 0\nendcidrange\n");
    out.push_str("endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n");
    out.into_bytes()
}

/// A ToUnicode CMap: code → text, or every two-byte code to itself.
fn to_unicode_cmap(unicode: &BTreeMap<u32, String>, codes_are_unicode: bool) -> Vec<u8> {
    let mut out = String::from("/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n");
    if codes_are_unicode {
        let rows: Vec<u32> = (0..=0xFFu32)
            .filter(|r| !(0xD8..=0xDF).contains(r))
            .collect();
        for block in rows.chunks(100) {
            out.push_str(&format!("{} beginbfrange\n", block.len()));
            for row in block {
                out.push_str(&format!("<{row:02X}00> <{row:02X}FF> <{row:02X}00>\n"));
            }
            out.push_str("endbfrange\n");
        }
    }
    let entries: Vec<(&u32, &String)> = unicode.iter().collect();
    for block in entries.chunks(100) {
        out.push_str(&format!("{} beginbfchar\n", block.len()));
        for (code, text) in block {
            let units: String = text.encode_utf16().map(|u| format!("{u:04X}")).collect();
            out.push_str(&format!("<{:04X}> <{units}>\n", code));
        }
        out.push_str("endbfchar\n");
    }
    out.push_str("endcmap\nend\nend\n");
    out.into_bytes()
}

/// Adobe-Japan1 CIDs of the JIS X 0208 characters (from Adobe's H and V
/// CMaps) and of proportional ASCII.
mod japan1 {
    pub fn unicode() -> Vec<(u32, String)> {
        let mut by_cid = Vec::new();
        for cid in 1..=95u32 {
            by_cid.push((cid, char::from_u32(0x1F + cid).unwrap_or(' ').to_string()));
        }
        for &(low, high, cid) in &JAPAN1_H {
            for code in low..=high {
                if let Some(text) = super::jis_text(u32::from(code)) {
                    by_cid.push((u32::from(cid + code - low), text));
                }
            }
        }
        for &(cid, code) in &JAPAN1_V {
            if let Some(text) = super::jis_text(u32::from(code)) {
                by_cid.push((u32::from(cid), text));
            }
        }
        by_cid
    }

    const JAPAN1_H: [(u16, u16, u16); 118] = [
        (0x2121, 0x217E, 633),
        (0x2221, 0x222E, 727),
        (0x223A, 0x2241, 741),
        (0x224A, 0x2250, 749),
        (0x225C, 0x226A, 756),
        (0x2272, 0x2279, 771),
        (0x227E, 0x227E, 779),
        (0x2330, 0x2339, 780),
        (0x2341, 0x235A, 790),
        (0x2361, 0x237A, 816),
        (0x2421, 0x2473, 842),
        (0x2521, 0x2576, 925),
        (0x2621, 0x2638, 1011),
        (0x2641, 0x2658, 1035),
        (0x2721, 0x2741, 1059),
        (0x2751, 0x2771, 1092),
        (0x2821, 0x2821, 7479),
        (0x2822, 0x2822, 7481),
        (0x2823, 0x2823, 7491),
        (0x2824, 0x2824, 7495),
        (0x2825, 0x2825, 7503),
        (0x2826, 0x2826, 7499),
        (0x2827, 0x2827, 7507),
        (0x2828, 0x2828, 7523),
        (0x2829, 0x2829, 7515),
        (0x282A, 0x282A, 7531),
        (0x282B, 0x282B, 7539),
        (0x282C, 0x282C, 7480),
        (0x282D, 0x282D, 7482),
        (0x282E, 0x282E, 7494),
        (0x282F, 0x282F, 7498),
        (0x2830, 0x2830, 7506),
        (0x2831, 0x2831, 7502),
        (0x2832, 0x2832, 7514),
        (0x2833, 0x2833, 7530),
        (0x2834, 0x2834, 7522),
        (0x2835, 0x2835, 7538),
        (0x2836, 0x2836, 7554),
        (0x2837, 0x2837, 7511),
        (0x2838, 0x2838, 7526),
        (0x2839, 0x2839, 7519),
        (0x283A, 0x283A, 7534),
        (0x283B, 0x283B, 7542),
        (0x283C, 0x283C, 7508),
        (0x283D, 0x283D, 7527),
        (0x283E, 0x283E, 7516),
        (0x283F, 0x283F, 7535),
        (0x2840, 0x2840, 7545),
        (0x3021, 0x307E, 1125),
        (0x3121, 0x317E, 1219),
        (0x3221, 0x327E, 1313),
        (0x3321, 0x337E, 1407),
        (0x3421, 0x347E, 1501),
        (0x3521, 0x357E, 1595),
        (0x3621, 0x367E, 1689),
        (0x3721, 0x377E, 1783),
        (0x3821, 0x387E, 1877),
        (0x3921, 0x397E, 1971),
        (0x3A21, 0x3A7E, 2065),
        (0x3B21, 0x3B7E, 2159),
        (0x3C21, 0x3C7E, 2253),
        (0x3D21, 0x3D7E, 2347),
        (0x3E21, 0x3E7E, 2441),
        (0x3F21, 0x3F7E, 2535),
        (0x4021, 0x407E, 2629),
        (0x4121, 0x417E, 2723),
        (0x4221, 0x427E, 2817),
        (0x4321, 0x437E, 2911),
        (0x4421, 0x447E, 3005),
        (0x4521, 0x457E, 3099),
        (0x4621, 0x467E, 3193),
        (0x4721, 0x477E, 3287),
        (0x4821, 0x487E, 3381),
        (0x4921, 0x497E, 3475),
        (0x4A21, 0x4A7E, 3569),
        (0x4B21, 0x4B7E, 3663),
        (0x4C21, 0x4C7E, 3757),
        (0x4D21, 0x4D7E, 3851),
        (0x4E21, 0x4E7E, 3945),
        (0x4F21, 0x4F53, 4039),
        (0x5021, 0x507E, 4090),
        (0x5121, 0x517E, 4184),
        (0x5221, 0x527E, 4278),
        (0x5321, 0x537E, 4372),
        (0x5421, 0x547E, 4466),
        (0x5521, 0x557E, 4560),
        (0x5621, 0x567E, 4654),
        (0x5721, 0x577E, 4748),
        (0x5821, 0x587E, 4842),
        (0x5921, 0x597E, 4936),
        (0x5A21, 0x5A7E, 5030),
        (0x5B21, 0x5B7E, 5124),
        (0x5C21, 0x5C7E, 5218),
        (0x5D21, 0x5D7E, 5312),
        (0x5E21, 0x5E7E, 5406),
        (0x5F21, 0x5F7E, 5500),
        (0x6021, 0x607E, 5594),
        (0x6121, 0x617E, 5688),
        (0x6221, 0x627E, 5782),
        (0x6321, 0x637E, 5876),
        (0x6421, 0x647E, 5970),
        (0x6521, 0x657E, 6064),
        (0x6621, 0x667E, 6158),
        (0x6721, 0x677E, 6252),
        (0x6821, 0x687E, 6346),
        (0x6921, 0x697E, 6440),
        (0x6A21, 0x6A7E, 6534),
        (0x6B21, 0x6B7E, 6628),
        (0x6C21, 0x6C7E, 6722),
        (0x6D21, 0x6D7E, 6816),
        (0x6E21, 0x6E7E, 6910),
        (0x6F21, 0x6F7E, 7004),
        (0x7021, 0x707E, 7098),
        (0x7121, 0x717E, 7192),
        (0x7221, 0x727E, 7286),
        (0x7321, 0x737E, 7380),
        (0x7421, 0x7424, 7474),
        (0x7425, 0x7426, 8284),
    ];
    const JAPAN1_V: [(u16, u16); 53] = [
        (7887, 0x2122),
        (7888, 0x2123),
        (7889, 0x2131),
        (7890, 0x2132),
        (7891, 0x213C),
        (7892, 0x213D),
        (7893, 0x213E),
        (7894, 0x2141),
        (7895, 0x2142),
        (7896, 0x2143),
        (7897, 0x2144),
        (7898, 0x2145),
        (7899, 0x214A),
        (7900, 0x214B),
        (7901, 0x214C),
        (7902, 0x214D),
        (7903, 0x214E),
        (7904, 0x214F),
        (7905, 0x2150),
        (7906, 0x2151),
        (7907, 0x2152),
        (7908, 0x2153),
        (7909, 0x2154),
        (7910, 0x2155),
        (7911, 0x2156),
        (7912, 0x2157),
        (7913, 0x2158),
        (7914, 0x2159),
        (7915, 0x215A),
        (7916, 0x215B),
        (7917, 0x2161),
        (7918, 0x2421),
        (7919, 0x2423),
        (7920, 0x2425),
        (7921, 0x2427),
        (7922, 0x2429),
        (7923, 0x2443),
        (7924, 0x2463),
        (7925, 0x2465),
        (7926, 0x2467),
        (7927, 0x246E),
        (7928, 0x2521),
        (7929, 0x2523),
        (7930, 0x2525),
        (7931, 0x2527),
        (7932, 0x2529),
        (7933, 0x2543),
        (7934, 0x2563),
        (7935, 0x2565),
        (7936, 0x2567),
        (7937, 0x256E),
        (7938, 0x2575),
        (7939, 0x2576),
    ];
}
