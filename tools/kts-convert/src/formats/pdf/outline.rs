//! The document outline (bookmarks): each entry's title, depth and the page
//! it leads to. The outline is read defensively: its links may form cycles
//! and its destinations may be missing or malformed.

use std::collections::{BTreeMap, HashMap, HashSet};

use lopdf::{Dictionary, Document, Object, ObjectId};

/// More entries than any real outline has; the walk stops there.
const MAX_ENTRIES: usize = 10_000;

#[derive(Debug, PartialEq)]
pub struct Entry {
    pub title: String,
    /// 1 for a top-level entry.
    pub depth: usize,
    pub page: u32,
}

/// The outline's entries that lead to a page of the document, in outline
/// order.
pub fn entries(doc: &Document, pages: &BTreeMap<u32, ObjectId>) -> Vec<Entry> {
    let Some(first) = doc
        .catalog()
        .ok()
        .and_then(|catalog| catalog.get_deref(b"Outlines", doc).ok())
        .and_then(|outlines| outlines.as_dict().ok())
        .and_then(|outlines| outlines.get(b"First").ok())
    else {
        return Vec::new();
    };
    let page_numbers: HashMap<ObjectId, u32> = pages.iter().map(|(&n, &id)| (id, n)).collect();
    let names = named_destinations(doc);
    let mut entries = Vec::new();
    let mut seen = HashSet::new();
    // Items still to visit, each with its depth, in outline order.
    let mut stack = vec![(first, 1)];
    while let Some((item, depth)) = stack.pop() {
        if seen.len() >= MAX_ENTRIES {
            break;
        }
        if let Object::Reference(id) = item
            && !seen.insert(*id)
        {
            continue;
        }
        let Ok(dict) = doc.dereference(item).and_then(|(_, o)| o.as_dict()) else {
            continue;
        };
        if let Ok(next) = dict.get(b"Next") {
            stack.push((next, depth));
        }
        if let Ok(child) = dict.get(b"First") {
            stack.push((child, depth + 1));
        }
        let title = dict
            .get_deref(b"Title", doc)
            .ok()
            .and_then(|t| lopdf::decode_text_string(t).ok());
        let page = destination_page(doc, dict, &names)
            .and_then(|id| page_numbers.get(&id))
            .copied();
        if let (Some(title), Some(page)) = (title, page) {
            entries.push(Entry { title, depth, page });
        }
    }
    entries
}

/// The page an outline item leads to: its /Dest, or the /D of a GoTo action.
fn destination_page(
    doc: &Document,
    item: &Dictionary,
    names: &HashMap<Vec<u8>, Object>,
) -> Option<ObjectId> {
    let destination = match item.get_deref(b"Dest", doc) {
        Ok(destination) => destination,
        Err(_) => {
            let action = item.get_deref(b"A", doc).ok()?.as_dict().ok()?;
            if action.get(b"S").and_then(Object::as_name).ok()? != b"GoTo" {
                return None;
            }
            action.get_deref(b"D", doc).ok()?
        }
    };
    let destination = match destination {
        Object::Name(name) | Object::String(name, _) => names.get(name)?,
        explicit => explicit,
    };
    explicit_page(doc, destination)
}

/// The page of an explicit destination: `[page /XYZ ...]`, or a dictionary
/// holding it under /D (as named destinations may).
fn explicit_page(doc: &Document, destination: &Object) -> Option<ObjectId> {
    let destination = doc.dereference(destination).ok()?.1;
    let array = match destination {
        Object::Dictionary(dict) => dict.get_deref(b"D", doc).ok()?.as_array().ok()?,
        other => other.as_array().ok()?,
    };
    array.first()?.as_reference().ok()
}

/// Named destinations: the catalog's /Dests dictionary and its /Names /Dests
/// name tree.
fn named_destinations(doc: &Document) -> HashMap<Vec<u8>, Object> {
    let mut names = HashMap::new();
    let Ok(catalog) = doc.catalog() else {
        return names;
    };
    if let Ok(dests) = catalog.get_deref(b"Dests", doc).and_then(Object::as_dict) {
        for (name, destination) in dests.iter() {
            names.insert(name.clone(), destination.clone());
        }
    }
    let tree = catalog
        .get_deref(b"Names", doc)
        .and_then(Object::as_dict)
        .and_then(|n| n.get(b"Dests"));
    let mut stack: Vec<&Object> = tree.into_iter().collect();
    let mut seen = HashSet::new();
    while let Some(node) = stack.pop() {
        if names.len() >= MAX_ENTRIES || seen.len() >= MAX_ENTRIES {
            break;
        }
        if let Object::Reference(id) = node
            && !seen.insert(*id)
        {
            continue;
        }
        let Ok(node) = doc.dereference(node).and_then(|(_, o)| o.as_dict()) else {
            continue;
        };
        if let Ok(kids) = node.get_deref(b"Kids", doc).and_then(Object::as_array) {
            stack.extend(kids);
        }
        if let Ok(pairs) = node.get_deref(b"Names", doc).and_then(Object::as_array) {
            for pair in pairs.chunks_exact(2) {
                if let Ok(name) = pair[0].as_str() {
                    names.insert(name.to_vec(), pair[1].clone());
                }
            }
        }
    }
    names
}
