//! The style sheet (`STSH`, [MS-DOC] 2.9.271): each paragraph style's name,
//! built-in identifier (`sti`), parent, and the paragraph properties it
//! gives (a heading's outline level, a list style's list).

use super::paragraphs::Props;
use super::u16_at;

/// `sti` of the built-in styles that matter here.
const STI_HEADING_1: u16 = 1;
const STI_HEADING_9: u16 = 9;
const STI_TITLE: u16 = 62;
const ISTD_NONE: u16 = 0x0FFF;
const STK_PARAGRAPH: u16 = 1;
/// Styles based on styles deeper than this are damaged (or a loop).
const MAX_CHAIN: usize = 10;

/// "Heading" in the languages Word is sold in: a style named one of these
/// and a level ("Überschrift 1") is that heading, whatever its `sti` says.
const HEADING_NAMES: &[&str] = &[
    "heading",
    "überschrift",
    "titre",
    "título",
    "titulo",
    "titolo",
    "kop",
    "rubrik",
    "overskrift",
    "otsikko",
    "nagłówek",
    "nadpis",
    "címsor",
    "başlık",
    "naslov",
    "pealkiri",
    "virsraksts",
    "antraštė",
    "заголовок",
    "επικεφαλίδα",
    "כותרת",
    "عنوان",
    "見出し",
    "标题",
    "標題",
    "제목",
];

/// "Title" in the same languages.
const TITLE_NAMES: &[&str] = &[
    "title",
    "titel",
    "titre",
    "título",
    "titulo",
    "titolo",
    "tytuł",
    "název",
    "cím",
    "başlık",
    "название",
    "τίτλος",
    "表題",
    "标题",
    "標題",
    "제목",
];

#[derive(Debug, Default)]
struct Style {
    name: String,
    sti: u16,
    base: Option<u16>,
    props: Props,
}

/// What a paragraph style makes of its paragraphs.
#[derive(Debug, Default, PartialEq)]
pub struct Kind {
    /// The heading level, from 1.
    pub heading: Option<usize>,
    pub title: bool,
    /// The list (LFO index from 1) and level the style gives.
    pub list: Option<(u16, u8)>,
}

#[derive(Debug, Default)]
pub struct Styles {
    styles: Vec<Option<Style>>,
}

impl Styles {
    /// Reads the `STSH`; a damaged one gives the styles read before the damage.
    pub fn parse(stsh: &[u8]) -> Styles {
        let mut styles = Vec::new();
        let (Some(header), Some(count), Some(base_size)) =
            (u16_at(stsh, 0), u16_at(stsh, 2), u16_at(stsh, 4))
        else {
            return Styles { styles };
        };
        let mut at = 2 + usize::from(header);
        for _ in 0..count {
            let Some(size) = u16_at(stsh, at).map(usize::from) else {
                break;
            };
            let Some(std) = stsh.get(at + 2..at + 2 + size) else {
                break;
            };
            styles.push(
                (size > 0)
                    .then(|| style(std, usize::from(base_size)))
                    .flatten(),
            );
            at += 2 + size;
        }
        Styles { styles }
    }

    /// What the style `istd` and those it is based on make of a paragraph.
    pub fn kind(&self, istd: u16) -> Kind {
        let mut kind = Kind::default();
        for style in self.chain(istd) {
            if kind.heading.is_none() && !kind.title {
                kind.title = is_title(style);
                kind.heading = heading_level(style);
            }
            if kind.list.is_none()
                && let Some(list) = style.props.list
            {
                kind.list = Some((list, style.props.level.unwrap_or(0)));
            }
        }
        kind
    }

    fn chain(&self, istd: u16) -> impl Iterator<Item = &Style> {
        let mut next = Some(istd);
        std::iter::from_fn(move || {
            let style = self.styles.get(usize::from(next?))?.as_ref()?;
            next = style.base;
            Some(style)
        })
        .take(MAX_CHAIN)
    }
}

/// One `STD`: its fixed part is `base_size` bytes, then the name, then the
/// property records (UPX) of which a paragraph style's first is its PAPX.
fn style(std: &[u8], base_size: usize) -> Option<Style> {
    let sti = u16_at(std, 0)? & 0x0FFF;
    let kind_and_base = u16_at(std, 2)?;
    let base = kind_and_base >> 4;
    let name_len = usize::from(u16_at(std, base_size)?);
    let name_units: Vec<u16> = std
        .get(base_size + 2..base_size + 2 + name_len * 2)?
        .chunks_exact(2)
        .map(|pair| u16::from_le_bytes([pair[0], pair[1]]))
        .collect();
    let name = String::from_utf16_lossy(&name_units);
    let mut props = Props::default();
    if kind_and_base & 0x000F == STK_PARAGRAPH {
        let mut at = base_size + 2 + name_len * 2 + 2;
        at += at % 2;
        let upx_size = usize::from(u16_at(std, at).unwrap_or(0));
        if let Some(upx) = std.get(at + 2..at + 2 + upx_size) {
            props.apply(upx.get(2..).unwrap_or_default());
        }
    }
    Some(Style {
        name,
        sti,
        base: (base != ISTD_NONE).then_some(base),
        props,
    })
}

/// The name Word shows: a style's name may carry aliases after commas.
fn shown_name(style: &Style) -> String {
    let name = style.name.split(',').next().unwrap_or_default();
    name.trim().to_lowercase()
}

fn is_title(style: &Style) -> bool {
    style.sti == STI_TITLE || TITLE_NAMES.contains(&shown_name(style).as_str())
}

/// A built-in heading style, one named as a heading in some language, or
/// one with an outline level.
fn heading_level(style: &Style) -> Option<usize> {
    if (STI_HEADING_1..=STI_HEADING_9).contains(&style.sti) {
        return Some(usize::from(style.sti));
    }
    let name = shown_name(style);
    let by_name = name.rsplit_once(' ').and_then(|(word, level)| {
        let level = level
            .parse::<usize>()
            .ok()
            .filter(|l| (1..=9).contains(l))?;
        HEADING_NAMES.contains(&word).then_some(level)
    });
    by_name.or_else(|| {
        let outline = style.props.outline.filter(|&level| level < 9)?;
        Some(usize::from(outline) + 1)
    })
}
