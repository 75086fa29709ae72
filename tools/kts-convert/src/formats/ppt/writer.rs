//! Writes small PowerPoint 97 presentations for tests: the slide list with
//! the placeholders' text (UTF-16 or 8-bit, with paragraph styles), each
//! slide's drawing with text boxes pointing into the list or holding their
//! own text, notes pages, the persist directory, the edit and the
//! `Current User` stream. Shared by the unit tests and the CLI test
//! (included by path, so it uses nothing of the crate).

use std::io::{Cursor, Write};

pub const TITLE: u32 = 0;
pub const BODY: u32 = 1;
pub const NOTES: u32 = 2;
pub const OTHER: u32 = 4;

#[derive(Clone, Default)]
pub struct Text {
    pub kind: u32,
    pub text: String,
    /// Written as a `TextBytesAtom` (Latin-1) rather than a `TextCharsAtom`.
    pub eight_bit: bool,
    /// Paragraph runs: (characters, indent level, bullet shown or not).
    pub runs: Vec<(u32, u16, Option<bool>)>,
    /// Fields: (record type, character position), e.g. a slide number's.
    pub fields: Vec<(u16, u32)>,
}

impl Text {
    pub fn new(kind: u32, text: &str) -> Self {
        Self {
            kind,
            text: text.into(),
            ..Self::default()
        }
    }

    pub fn eight_bit(mut self) -> Self {
        self.eight_bit = true;
        self
    }

    pub fn runs(mut self, runs: &[(u32, u16, Option<bool>)]) -> Self {
        self.runs = runs.to_vec();
        self
    }

    pub fn field(mut self, kind: u16, at: u32) -> Self {
        self.fields.push((kind, at));
        self
    }
}

#[derive(Clone, Default)]
pub struct Slide {
    /// Placeholder text, in the slide list, pointed to by the drawing.
    pub listed: Vec<Text>,
    /// Text boxes of the drawing that hold their own text.
    pub boxes: Vec<Text>,
    /// Tables after the boxes: each cell's anchor (left, top, right,
    /// bottom) and text; each table also gets a border line.
    pub tables: Vec<Vec<([i32; 4], String)>>,
    pub notes: Option<String>,
    /// More text boxes on the notes page (with `notes` only).
    pub notes_boxes: Vec<Text>,
}

#[derive(Clone, Default)]
pub struct Presentation {
    pub slides: Vec<Slide>,
    /// The `Current User` header token and the edit say so.
    pub encrypted: bool,
    /// More streams: (path, bytes).
    pub streams: Vec<(String, Vec<u8>)>,
}

const DOCUMENT: u16 = 0x03E8;
const SLIDE: u16 = 0x03EE;
const SLIDE_ATOM: u16 = 0x03EF;
const NOTES_CONTAINER: u16 = 0x03F0;
const NOTES_ATOM: u16 = 0x03F1;
const SLIDE_PERSIST: u16 = 0x03F3;
const DRAWING: u16 = 0x040C;
const OUTLINE_TEXT_REF: u16 = 0x0F9E;
const TEXT_HEADER: u16 = 0x0F9F;
const TEXT_CHARS: u16 = 0x0FA0;
const STYLE_TEXT_PROP: u16 = 0x0FA1;
const TEXT_BYTES: u16 = 0x0FA8;
const SLIDE_LIST_WITH_TEXT: u16 = 0x0FF0;
const USER_EDIT: u16 = 0x0FF5;
const CURRENT_USER: u16 = 0x0FF6;
const PERSIST_DIRECTORY: u16 = 0x1772;
const DG_CONTAINER: u16 = 0xF002;
const SPGR_CONTAINER: u16 = 0xF003;
const SP_CONTAINER: u16 = 0xF004;
const SHAPE_ATOM: u16 = 0xF00A;
const CLIENT_TEXTBOX: u16 = 0xF00D;
const CHILD_ANCHOR: u16 = 0xF00F;
const TERTIARY_PROPERTIES: u16 = 0xF122;
const FIRST_SLIDE_ID: u32 = 256;

impl Presentation {
    pub fn to_bytes(&self) -> Vec<u8> {
        let (document, current_user) = self.streams();
        let mut file = cfb::CompoundFile::create(Cursor::new(Vec::new())).unwrap();
        let own = [
            ("/PowerPoint Document".to_owned(), document),
            ("/Current User".to_owned(), current_user),
        ];
        for (path, bytes) in own.iter().chain(&self.streams) {
            file.create_stream(path).unwrap().write_all(bytes).unwrap();
        }
        file.flush().unwrap();
        file.into_inner().into_inner()
    }

    /// The `PowerPoint Document` and `Current User` streams. Persist ids:
    /// 1 the document, then each slide, then each notes page.
    pub fn streams(&self) -> (Vec<u8>, Vec<u8>) {
        let slide_id = |i: usize| FIRST_SLIDE_ID + i as u32;
        let slide_persist = |i: usize| 2 + i as u32;
        let notes_persist = |i: usize| 2 + (self.slides.len() + i) as u32;
        let mut slide_list = Vec::new();
        let mut notes_list = Vec::new();
        for (i, slide) in self.slides.iter().enumerate() {
            slide_list.extend(slide_persist_atom(slide_persist(i), slide_id(i)));
            slide.listed.iter().for_each(|t| slide_list.extend(text(t)));
            if slide.notes.is_some() {
                notes_list.extend(slide_persist_atom(notes_persist(i), 0x1000 + i as u32));
            }
        }
        let mut document = container(
            DOCUMENT,
            0,
            &[
                container(SLIDE_LIST_WITH_TEXT, 0, &[slide_list]),
                container(SLIDE_LIST_WITH_TEXT, 2, &[notes_list]),
            ],
        );
        let mut offsets = vec![0u32];
        for slide in &self.slides {
            offsets.push(document.len() as u32);
            let refs = (0..slide.listed.len()).map(|i| atom(OUTLINE_TEXT_REF, &u32le(i as u32)));
            let boxes = refs.chain(slide.boxes.iter().map(text));
            let shapes = boxes
                .map(textbox_shape)
                .chain(slide.tables.iter().map(|cells| table(cells)))
                .collect();
            let slide_atom = atom(SLIDE_ATOM, &[0; 24]);
            document.extend(container(SLIDE, 0, &[slide_atom, drawing(shapes)]));
        }
        for (i, slide) in self.slides.iter().enumerate() {
            if let Some(notes) = &slide.notes {
                offsets.push(document.len() as u32);
                let notes_atom = atom(NOTES_ATOM, &[u32le(slide_id(i)), vec![0; 4]].concat());
                let body = text(&Text::new(NOTES, notes));
                let boxes = slide.notes_boxes.iter().map(text);
                let shapes = std::iter::once(body).chain(boxes).map(textbox_shape);
                document.extend(container(
                    NOTES_CONTAINER,
                    0,
                    &[notes_atom, drawing(shapes.collect())],
                ));
            }
        }
        let directory_at = document.len() as u32;
        let entry = 1 | (offsets.len() as u32) << 20;
        let directory: Vec<u8> = [u32le(entry)]
            .into_iter()
            .chain(offsets.iter().map(|&o| u32le(o)))
            .flatten()
            .collect();
        document.extend(atom(PERSIST_DIRECTORY, &directory));
        let edit_at = document.len() as u32;
        let mut edit = [
            u32le(0),
            vec![0, 0, 0, 3],
            u32le(0),
            u32le(directory_at),
            u32le(1),
        ]
        .concat();
        edit.extend([0; 8]);
        if self.encrypted {
            edit.extend(u32le(offsets.len() as u32 + 1));
        }
        document.extend(atom(USER_EDIT, &edit));
        let token: u32 = if self.encrypted {
            0xF3D1_C4DF
        } else {
            0xE391_C05F
        };
        let user = [u32le(0x14), u32le(token), u32le(edit_at), vec![0; 8]].concat();
        (document, atom(CURRENT_USER, &user))
    }
}

fn slide_persist_atom(persist_id: u32, slide_id: u32) -> Vec<u8> {
    let body = [
        u32le(persist_id),
        u32le(0),
        u32le(0),
        u32le(slide_id),
        u32le(0),
    ]
    .concat();
    atom(SLIDE_PERSIST, &body)
}

/// A text header, its characters and its paragraph styles.
fn text(text: &Text) -> Vec<u8> {
    let mut out = atom(TEXT_HEADER, &u32le(text.kind));
    if text.eight_bit {
        let bytes: Vec<u8> = text.text.chars().map(|c| c as u8).collect();
        out.extend(atom(TEXT_BYTES, &bytes));
    } else {
        let units: Vec<u8> = text
            .text
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        out.extend(atom(TEXT_CHARS, &units));
    }
    if !text.runs.is_empty() {
        let mut styles = Vec::new();
        for &(count, level, bullet) in &text.runs {
            styles.extend(u32le(count));
            styles.extend(level.to_le_bytes());
            // Masks: hasBullet, then an alignment, to step over.
            match bullet {
                Some(shown) => {
                    styles.extend(u32le(1 | 1 << 11));
                    styles.extend(u16::from(shown).to_le_bytes());
                }
                None => styles.extend(u32le(1 << 11)),
            }
            styles.extend([0, 0]);
        }
        // One character run over it all.
        styles.extend(u32le(text.text.encode_utf16().count() as u32 + 1));
        styles.extend(u32le(0));
        out.extend(atom(STYLE_TEXT_PROP, &styles));
    }
    for &(kind, at) in &text.fields {
        out.extend(atom(kind, &u32le(at)));
    }
    out
}

/// A drawing of one group of these shapes.
fn drawing(shapes: Vec<Vec<u8>>) -> Vec<u8> {
    let group = container(SPGR_CONTAINER, 0, &shapes);
    container(DRAWING, 0, &[container(DG_CONTAINER, 0, &[group])])
}

fn textbox_shape(content: Vec<u8>) -> Vec<u8> {
    container(SP_CONTAINER, 0, &[container(CLIENT_TEXTBOX, 0, &[content])])
}

/// A table: a group whose own shape has table properties, a rectangle per
/// cell, and a line along its top.
fn table(cells: &[([i32; 4], String)]) -> Vec<u8> {
    const RECTANGLE: u16 = 1;
    const LINE: u16 = 20;
    let table_properties = [0x039Fu16.to_le_bytes().to_vec(), u32le(0)].concat();
    let own_properties = record(3 | 1 << 4, TERTIARY_PROPERTIES, &table_properties);
    let own = container(SP_CONTAINER, 0, &[own_properties]);
    let shape = |kind: u16, anchor: [i32; 4], text: Option<&str>| {
        let anchor: Vec<u8> = anchor.iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut children = vec![
            record(2 | kind << 4, SHAPE_ATOM, &[0; 8]),
            atom(CHILD_ANCHOR, &anchor),
        ];
        if let Some(text) = text {
            let content = self::text(&Text::new(OTHER, text));
            children.push(container(CLIENT_TEXTBOX, 0, &[content]));
        }
        container(SP_CONTAINER, 0, &children)
    };
    let mut shapes = vec![own];
    shapes.extend(
        cells
            .iter()
            .map(|(anchor, text)| shape(RECTANGLE, *anchor, Some(text))),
    );
    shapes.push(shape(LINE, [0, -10, 1000, -10], None));
    container(SPGR_CONTAINER, 0, &shapes)
}

fn container(kind: u16, instance: u16, children: &[Vec<u8>]) -> Vec<u8> {
    record(0x0F | instance << 4, kind, &children.concat())
}

fn atom(kind: u16, body: &[u8]) -> Vec<u8> {
    record(0, kind, body)
}

fn record(version_instance: u16, kind: u16, body: &[u8]) -> Vec<u8> {
    let mut out = version_instance.to_le_bytes().to_vec();
    out.extend(kind.to_le_bytes());
    out.extend(u32le(body.len() as u32));
    out.extend(body);
    out
}

fn u32le(n: u32) -> Vec<u8> {
    n.to_le_bytes().to_vec()
}
