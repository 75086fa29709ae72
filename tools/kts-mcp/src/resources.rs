//! The resources: `kts://SCOPE/PATH`, one per document, as Markdown, listed
//! page by page (a knowledge root holds thousands).

use rmcp::model::{
    ListResourcesResult, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
};

use crate::server::State;

const SCHEME: &str = "kts://";
/// Resources listed per page.
const PAGE: usize = 200;

pub fn template() -> ResourceTemplate {
    // `+`: RFC 6570's reserved expansion, whose value may hold `/`, so that
    // clients match the paths of documents in sub-folders.
    ResourceTemplate::new(format!("{SCHEME}{{scope}}/{{+path}}"), "document")
        .with_description("A document of a scope as Markdown (path as in a hit's citation)")
        .with_mime_type("text/markdown")
}

/// The URI of a document: its scope, then its path, each part percent-encoded.
pub fn uri(scope: &str, path: &str) -> String {
    let parts: Vec<String> = path.split('/').map(encode).collect();
    format!("{SCHEME}{}/{}", encode(scope), parts.join("/"))
}

/// A page of documents, in scope then path order. The cursor is
/// `<scope index>:<last path>`.
pub fn list(state: &State, cursor: Option<&str>) -> anyhow::Result<ListResourcesResult> {
    let (mut index, mut after) = match cursor {
        None => (0, None),
        Some(cursor) => {
            let (index, path) = cursor
                .split_once(':')
                .and_then(|(i, p)| Some((i.parse::<usize>().ok()?, p.to_string())))
                .ok_or_else(|| anyhow::anyhow!("not a cursor list_resources gave: {cursor:?}"))?;
            (index, Some(path))
        }
    };
    let scopes = state.knowledge.scopes()?;
    let mut resources = Vec::new();
    let mut next = None;
    while let Some(scope) = scopes.get(index) {
        let wanted = PAGE - resources.len();
        let documents = match state.knowledge.documents(scope, after.as_deref(), wanted) {
            Ok(documents) => documents,
            Err(e) => {
                // As list_scopes does, a scope whose index cannot be read is left out.
                state.log(&format!(
                    "list_resources: scope {} left out: {e:#}",
                    scope.slug
                ));
                Vec::new()
            }
        };
        let full = documents.len() == wanted;
        for document in &documents {
            let mut resource =
                Resource::new(uri(&scope.slug, &document.path), document.path.clone())
                    .with_mime_type("text/markdown")
                    .with_description(format!("{} in the scope {}", document.doc_type, scope.slug));
            if !document.title.is_empty() {
                resource = resource.with_title(document.title.clone());
            }
            resources.push(resource);
        }
        if full {
            let last = documents.last().map(|d| d.path.clone()).unwrap_or_default();
            next = Some(format!("{index}:{last}"));
            break;
        }
        index += 1;
        after = None;
    }
    let mut page = ListResourcesResult::with_all_items(resources);
    page.next_cursor = next;
    Ok(page)
}

/// The Markdown of the document a `kts://SCOPE/PATH` URI names.
pub fn read(state: &State, uri: &str) -> anyhow::Result<ReadResourceResult> {
    let (scope, path) = parse(uri)
        .ok_or_else(|| anyhow::anyhow!("not a kts resource: {uri:?} (kts://SCOPE/PATH)"))??;
    let document = state.knowledge.document(Some(&scope), &path)?;
    Ok(ReadResourceResult::new(vec![
        ResourceContents::text(document.markdown, uri).with_mime_type("text/markdown"),
    ]))
}

/// The scope and the path a `kts://SCOPE/PATH` URI names; `None` when
/// `uri` is no such URI.
pub fn parse(uri: &str) -> Option<anyhow::Result<(String, String)>> {
    let (scope, path) = uri.strip_prefix(SCHEME)?.split_once('/')?;
    let decoded = decode(scope).zip(decode(path));
    Some(decoded.ok_or_else(|| anyhow::anyhow!("bad percent-encoding in {uri:?}")))
}

fn encode(part: &str) -> String {
    let mut encoded = String::with_capacity(part.len());
    for byte in part.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                encoded.push(byte as char)
            }
            _ => encoded.push_str(&format!("%{byte:02X}")),
        }
    }
    encoded
}

fn decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            decoded.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            decoded.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(decoded).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_survive_the_uri() {
        for path in ["hr/leave policy.docx", "a/ä/100%.md", "plain.md"] {
            let uri = uri("hr", path);
            let (_, encoded) = uri.strip_prefix(SCHEME).unwrap().split_once('/').unwrap();
            assert!(!encoded.contains(' '), "{uri}");
            assert_eq!(decode(encoded).as_deref(), Some(path));
        }
        assert_eq!(decode("%zz"), None);
    }

    #[test]
    fn the_template_takes_a_path_in_sub_folders_whole() {
        // `{path}` would stop at the first `/` of the path.
        assert_eq!(template().uri_template, "kts://{scope}/{+path}");
        assert_eq!(uri("odd", "a b/c.md"), "kts://odd/a%20b/c.md");
    }

    #[test]
    fn the_scope_survives_the_uri() {
        let uri = uri("café", "b.md");
        assert_eq!(uri, "kts://caf%C3%A9/b.md");
        let (scope, _) = uri.strip_prefix(SCHEME).unwrap().split_once('/').unwrap();
        assert_eq!(decode(scope).as_deref(), Some("café"));
    }
}
