//! The converted documents kept in the scope: `.kts/documents/<doc_id>/`
//! holds `content.md`, `metadata.json` (the `kts.doc/1` record without its
//! Markdown), `images/<sha256>.<ext>` and the images' descriptions,
//! `images/<sha256>.txt`. A document folder is built aside and
//! renamed into place, so a reader never sees half of one.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::Context;
use kts_record::DocRecord;
use kts_record::stored_document::{CONTENT_SHA256, content_sha256};
use serde_json::Value;

use crate::images::Image;

/// Changes whenever conversion output changes, so stored conversions are redone.
const CONVERTER_REVISION: &str = concat!(env!("CARGO_PKG_VERSION"), "/2");

pub fn documents_dir(root: &Path) -> PathBuf {
    root.join(".kts").join("documents")
}

/// The stored conversion of a document, if it was made from the same source
/// bytes by this converter revision; `Err` names a `content.md` changed since
/// it was written (by hand, or damaged), which is not to be trusted.
pub fn cached(
    root: &Path,
    doc_id: &str,
    source_sha256: &str,
) -> Result<Option<DocRecord>, PathBuf> {
    let dir = documents_dir(root).join(doc_id);
    let Some(mut stored) = fs::read(dir.join("metadata.json"))
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
    else {
        return Ok(None);
    };
    let Some(object) = stored.as_object_mut() else {
        return Ok(None);
    };
    let made_here =
        object.remove("converter").as_ref().and_then(Value::as_str) == Some(CONVERTER_REVISION);
    let from_these_bytes = object
        .get("metadata")
        .and_then(|m| m.get("source_sha256"))
        .and_then(Value::as_str)
        == Some(source_sha256);
    let Some(markdown) = (made_here && from_these_bytes)
        .then(|| fs::read_to_string(dir.join("content.md")).ok())
        .flatten()
    else {
        return Ok(None);
    };
    // Folders written before the check have no hash and are taken as they are.
    if let Some(written) = object.remove(CONTENT_SHA256)
        && written.as_str() != Some(content_sha256(&markdown).as_str())
    {
        return Err(dir.join("content.md"));
    }
    object.insert("markdown".into(), markdown.into());
    // The scope may have moved since: the record names where it is now.
    object.insert("root".into(), root.to_string_lossy().into());
    Ok(serde_json::from_value(stored).ok())
}

/// Writes a document's folder, replacing the previous one.
pub fn save(root: &Path, doc: &DocRecord, images: &[Image]) -> anyhow::Result<()> {
    static SERIAL: AtomicUsize = AtomicUsize::new(0);
    let documents = documents_dir(root);
    let staging_area = documents.join(".staging");
    fs::create_dir_all(&staging_area).map_err(|e| cannot_create(root, &staging_area, e))?;
    // Once per scope and process: a stream may span several scopes.
    static CLEANED: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());
    let first = (CLEANED.lock().unwrap_or_else(|e| e.into_inner())).insert(staging_area.clone());
    if first {
        remove_abandoned(&staging_area);
    }
    let unique = format!(
        "{}-{}-{}",
        doc.doc_id,
        std::process::id(),
        SERIAL.fetch_add(1, Ordering::Relaxed)
    );
    let staging = staging_area.join(&unique);
    let result = write_folder(&staging, doc, images).and_then(|()| {
        swap_into_place(
            &staging,
            &documents.join(&doc.doc_id),
            &staging_area.join(format!("{unique}.old")),
        )
    });
    if result.is_err() {
        let _ = fs::remove_dir_all(&staging);
    }
    result
}

/// Why `dir` cannot be made in the scope `root`, said plainly when `.kts` is
/// a link whose target is gone (a disk not mounted), of which the system
/// says only "File exists".
fn cannot_create(root: &Path, dir: &Path, error: std::io::Error) -> anyhow::Error {
    let kts = root.join(".kts");
    match fs::read_link(&kts) {
        Ok(target) if !kts.exists() => anyhow::anyhow!(
            "{} is a link to {}, which is not there (a disk not mounted?)",
            kts.display(),
            target.display()
        ),
        _ => anyhow::Error::new(error).context(format!("cannot create {}", dir.display())),
    }
}

/// Removes what killed converters left in the staging area: the folders
/// named after a process that is gone (`<doc_id>-<pid>-<n>[.old]`).
fn remove_abandoned(staging_area: &Path) {
    let Ok(entries) = fs::read_dir(staging_area) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|name| name.split('-').nth(1))
            .and_then(|pid| pid.parse::<u32>().ok());
        if let Some(pid) = pid
            && pid != std::process::id()
            && !Path::new(&format!("/proc/{pid}")).exists()
        {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

fn write_folder(dir: &Path, doc: &DocRecord, images: &[Image]) -> anyhow::Result<()> {
    fs::create_dir_all(dir)?;
    let images_dir = dir.join("images");
    if !images.is_empty() {
        fs::create_dir_all(&images_dir)?;
    }
    for image in images {
        fs::write(images_dir.join(image.file_name()), &image.bytes)?;
        if let Some(description) = &image.description {
            fs::write(
                images_dir.join(crate::describe::description_file(image)),
                description,
            )?;
        }
    }
    fs::write(dir.join("content.md"), &doc.markdown)?;
    let mut stored = serde_json::to_value(doc)?;
    if let Some(object) = stored.as_object_mut() {
        object.remove("markdown");
        object.insert("converter".into(), CONVERTER_REVISION.into());
        object.insert(CONTENT_SHA256.into(), content_sha256(&doc.markdown).into());
    }
    fs::write(
        dir.join("metadata.json"),
        serde_json::to_vec_pretty(&stored)?,
    )?;
    Ok(())
}

fn swap_into_place(staging: &Path, target: &Path, old: &Path) -> anyhow::Result<()> {
    let had_previous = fs::rename(target, old).is_ok();
    let moved = fs::rename(staging, target);
    if had_previous {
        fs::remove_dir_all(old).with_context(|| format!("cannot remove {}", old.display()))?;
    }
    match moved {
        Ok(()) => Ok(()),
        // Another converter of the same scope stored it in between.
        Err(_) if same_document(staging, target) => fs::remove_dir_all(staging)
            .with_context(|| format!("cannot remove {}", staging.display())),
        Err(e) => {
            Err(e).with_context(|| format!("cannot move the document into {}", target.display()))
        }
    }
}

/// Whether two document folders hold the same conversion.
fn same_document(a: &Path, b: &Path) -> bool {
    ["content.md", "metadata.json"].iter().all(
        |file| matches!((fs::read(a.join(file)), fs::read(b.join(file))), (Ok(x), Ok(y)) if x == y),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document(markdown: &str) -> DocRecord {
        serde_json::from_value(serde_json::json!({
            "doc_id": "0123456789abcdef", "path": "a.md", "markdown": markdown
        }))
        .unwrap()
    }

    /// Where another converter moved its folder in between: `target` is
    /// there and `old` cannot take it (a folder that is not empty).
    fn race(dir: &Path, theirs: &DocRecord, ours: &DocRecord) -> anyhow::Result<()> {
        let (target, staging, old) = (dir.join("target"), dir.join("staging"), dir.join("old"));
        write_folder(&target, theirs, &[])?;
        write_folder(&old.join("busy"), theirs, &[])?;
        write_folder(&staging, ours, &[])?;
        swap_into_place(&staging, &target, &old)
    }

    #[test]
    fn a_kts_link_to_a_disk_not_mounted_is_named_as_such() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("unmounted/scope-kts");
        std::os::unix::fs::symlink(&target, root.path().join(".kts")).unwrap();
        let error = save(root.path(), &document("# A"), &[]).unwrap_err();
        assert_eq!(
            format!("{error:#}"),
            format!(
                "{} is a link to {}, which is not there (a disk not mounted?)",
                root.path().join(".kts").display(),
                target.display()
            )
        );
    }

    #[test]
    fn a_document_another_converter_stored_first_is_stored() {
        let dir = tempfile::tempdir().unwrap();
        race(dir.path(), &document("# Same"), &document("# Same")).unwrap();
        assert!(!dir.path().join("staging").exists());
        assert!(same_document(
            &dir.path().join("target"),
            &dir.path().join("old/busy")
        ));
    }

    #[test]
    fn another_conversion_in_the_way_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let error = race(dir.path(), &document("# Theirs"), &document("# Ours")).unwrap_err();
        assert!(format!("{error:#}").contains("cannot move the document into"));
    }
}
