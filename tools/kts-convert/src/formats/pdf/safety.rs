//! Rewrites the parts of a document that would make pdf-extract recurse
//! without bound or panic, and takes image XObjects out of its way.
use std::collections::{BTreeMap, HashMap, HashSet};

use lopdf::content::{Content, Operation};
use lopdf::{Dictionary, Document, Object, ObjectId, Stream};

/// Form XObjects nested deeper than this are not drawn.
const MAX_FORM_DEPTH: usize = 16;
/// Form XObject invocations followed per page (exponential fan-out guard).
const MAX_FORM_CALLS: usize = 4000;
const LETTER: [f32; 4] = [0.0, 0.0, 612.0, 792.0];

/// Makes the document safe for pdf-extract and returns, per page, the image
/// XObjects it draws (in drawing order).
/// What [`make_safe`] found.
pub struct Safe {
    /// Per page, the image XObjects it draws (in drawing order).
    pub images: HashMap<ObjectId, Vec<ObjectId>>,
    /// A form XObject draws itself, directly or through others (the
    /// drawing was cut there).
    pub recursive: bool,
}

pub fn make_safe(doc: &mut Document, pages: &BTreeMap<u32, ObjectId>) -> Safe {
    let mut images = HashMap::new();
    let mut removals = Removals::default();
    let mut recursive = false;
    for &page_id in pages.values() {
        materialise_inherited(doc, page_id);
        let mut walker = Walker {
            doc,
            removals: &mut removals,
            images: Vec::new(),
            calls: 0,
            decoded: HashMap::new(),
            recursive: false,
        };
        walker.walk_page(page_id);
        recursive |= walker.recursive;
        images.insert(page_id, walker.images);
    }
    apply(doc, &removals);
    Safe { images, recursive }
}

/// Copies `/Resources` and `/MediaBox` inherited through `/Parent` onto the
/// page itself, so pdf-extract never follows a (possibly cyclic) parent chain.
fn materialise_inherited(doc: &mut Document, page_id: ObjectId) {
    let resources = inherited(doc, page_id, b"Resources").filter(|o| o.as_dict().is_ok());
    let media_box = inherited(doc, page_id, b"MediaBox").filter(|o| is_rectangle(doc, o));
    let Ok(page) = doc.get_dictionary_mut(page_id) else {
        return;
    };
    page.set(
        "Resources",
        resources.unwrap_or_else(|| Object::Dictionary(Dictionary::new())),
    );
    let media_box = media_box.unwrap_or_else(|| {
        LETTER
            .iter()
            .map(|&v| Object::Real(v))
            .collect::<Vec<_>>()
            .into()
    });
    page.set("MediaBox", media_box);
}

/// The value of `key` on the page or its nearest ancestor, dereferenced.
fn inherited(doc: &Document, page_id: ObjectId, key: &[u8]) -> Option<Object> {
    let mut seen = HashSet::new();
    let mut node = doc.get_dictionary(page_id).ok()?;
    loop {
        if let Ok(value) = node.get_deref(key, doc) {
            return Some(value.clone());
        }
        let parent = node.get(b"Parent").and_then(Object::as_reference).ok()?;
        if !seen.insert(parent) {
            return None;
        }
        node = doc.get_dictionary(parent).ok()?;
    }
}

fn is_rectangle(doc: &Document, object: &Object) -> bool {
    let Ok(values) = object.as_array() else {
        return false;
    };
    values.len() == 4
        && values.iter().all(|v| {
            doc.dereference(v)
                .is_ok_and(|(_, v)| matches!(v, Object::Integer(_) | Object::Real(_)))
        })
}

/// Where a content stream comes from.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Source {
    Page(ObjectId),
    Form(ObjectId),
}

/// `Do` operations (by index in the decoded content) to drop, per stream.
#[derive(Default)]
struct Removals(HashMap<Source, HashSet<usize>>);

struct Walker<'d, 'r> {
    doc: &'d Document,
    removals: &'r mut Removals,
    images: Vec<ObjectId>,
    calls: usize,
    decoded: HashMap<Source, Option<Vec<Operation>>>,
    recursive: bool,
}

enum Target {
    Form(ObjectId),
    Image(ObjectId),
    Unusable,
}

impl<'d> Walker<'d, '_> {
    fn walk_page(&mut self, page_id: ObjectId) {
        let doc = self.doc;
        let Ok(resources) = doc
            .get_dictionary(page_id)
            .and_then(|p| p.get_deref(b"Resources", doc))
            .and_then(Object::as_dict)
        else {
            return;
        };
        self.walk(Source::Page(page_id), resources, &mut Vec::new());
    }

    fn walk(&mut self, source: Source, resources: &'d Dictionary, path: &mut Vec<ObjectId>) {
        let Some(operations) = self.operations(source) else {
            return;
        };
        for (index, name) in operations
            .iter()
            .enumerate()
            .filter_map(|(i, op)| Some((i, do_name(op)?)))
        {
            match self.resolve(resources, name) {
                Target::Image(id) => {
                    if !self.images.contains(&id) {
                        self.images.push(id);
                    }
                }
                Target::Form(id) if self.may_enter(id, path) => {
                    self.calls += 1;
                    let form = self
                        .doc
                        .get_object(id)
                        .and_then(Object::as_stream)
                        .map(|s| &s.dict);
                    let inner = form
                        .and_then(|d| d.get_deref(b"Resources", self.doc))
                        .and_then(Object::as_dict);
                    path.push(id);
                    self.walk(Source::Form(id), inner.unwrap_or(resources), path);
                    path.pop();
                }
                Target::Form(id) => {
                    self.recursive |= path.contains(&id);
                    self.removals.0.entry(source).or_default().insert(index);
                }
                Target::Unusable => {
                    self.removals.0.entry(source).or_default().insert(index);
                }
            }
        }
    }

    fn may_enter(&mut self, id: ObjectId, path: &[ObjectId]) -> bool {
        !path.contains(&id)
            && path.len() < MAX_FORM_DEPTH
            && self.calls < MAX_FORM_CALLS
            && self.operations(Source::Form(id)).is_some()
    }

    /// The decoded operations of a content stream; a form whose content does
    /// not decode is reported as `None` (pdf-extract would panic on it).
    fn operations(&mut self, source: Source) -> Option<Vec<Operation>> {
        let doc = self.doc;
        self.decoded
            .entry(source)
            .or_insert_with(|| decode(doc, source))
            .clone()
    }

    fn resolve(&self, resources: &Dictionary, name: &[u8]) -> Target {
        let doc = self.doc;
        let xobject = resources
            .get_deref(b"XObject", doc)
            .and_then(Object::as_dict)
            .and_then(|xobjects| xobjects.get(name))
            .and_then(|o| o.as_reference());
        let Ok(id) = xobject else {
            return Target::Unusable;
        };
        let Ok(stream) = doc.get_object(id).and_then(Object::as_stream) else {
            return Target::Unusable;
        };
        match stream.dict.get(b"Subtype").and_then(Object::as_name) {
            Ok(b"Form") => Target::Form(id),
            Ok(b"Image") => Target::Image(id),
            _ => Target::Unusable,
        }
    }
}

fn do_name(operation: &Operation) -> Option<&[u8]> {
    (operation.operator == "Do")
        .then(|| operation.operands.first()?.as_name().ok())
        .flatten()
}

fn decode(doc: &Document, source: Source) -> Option<Vec<Operation>> {
    let bytes = match source {
        Source::Page(id) => doc.get_page_content(id).ok()?,
        Source::Form(id) => {
            let stream = doc.get_object(id).and_then(Object::as_stream).ok()?;
            stream
                .decompressed_content()
                .unwrap_or_else(|_| stream.content.clone())
        }
    };
    Content::decode(&bytes)
        .ok()
        .map(|content| content.operations)
}

/// Re-encodes each stream that lost `Do` operations.
fn apply(doc: &mut Document, removals: &Removals) {
    for (&source, drop) in &removals.0 {
        let Some(operations) = decode(doc, source) else {
            continue;
        };
        let kept: Vec<Operation> = operations
            .into_iter()
            .enumerate()
            .filter(|(i, _)| !drop.contains(i))
            .map(|(_, op)| op)
            .collect();
        let Ok(bytes) = (Content { operations: kept }).encode() else {
            continue;
        };
        match source {
            Source::Form(id) => {
                if let Ok(stream) = doc.get_object_mut(id).and_then(Object::as_stream_mut) {
                    stream.set_plain_content(bytes);
                }
            }
            Source::Page(id) => replace_page_content(doc, id, bytes),
        }
    }
}

fn replace_page_content(doc: &mut Document, page_id: ObjectId, bytes: Vec<u8>) {
    let stream_id = doc.add_object(Stream::new(Dictionary::new(), bytes));
    if let Ok(page) = doc.get_dictionary_mut(page_id) {
        page.set("Contents", stream_id);
    }
}

/// pdf-extract parses an image's pixel data as if it were a content stream
/// (garbage text at best, a panic at worst): once the images have been
/// taken, each becomes an empty form.
pub fn blank_images(doc: &mut Document, ids: impl IntoIterator<Item = ObjectId>) {
    for id in ids {
        let mut dict = Dictionary::new();
        dict.set("Type", "XObject");
        dict.set("Subtype", "Form");
        dict.set(
            "BBox",
            vec![
                Object::Integer(0),
                Object::Integer(0),
                Object::Integer(1),
                Object::Integer(1),
            ],
        );
        doc.objects
            .insert(id, Object::Stream(Stream::new(dict, Vec::new())));
    }
}
