//! The graph's settings: documented defaults, the scope's config file
//! (`DIR/.kts/config.toml`, section `[graph]`), then command-line flags.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::extract::{EntityKind, Seed};
use crate::model::NodeKind;

/// Default of [`Settings::min_mentions`].
pub const MIN_MENTIONS: u64 = 2;
/// Default of [`Settings::depth`].
pub const DEPTH: usize = 2;
/// Default of [`Settings::edge_threshold`].
pub const EDGE_THRESHOLD: f64 = 0.15;

/// How the graph is built and walked.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// Entities mentioned fewer times in the scope are left out (seeds and defined terms never are).
    pub min_mentions: u64,
    /// Breadth-first search depth from the question's entities.
    pub depth: usize,
    /// Edges lighter than this are not followed (weights are in (0, 1]).
    pub edge_threshold: f64,
    /// Entities always extracted where their names occur (e.g. people).
    pub seeds: Vec<Seed>,
    /// Names of systems and tools, extracted as SYSTEM wherever they occur.
    pub taxonomy: Vec<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            min_mentions: MIN_MENTIONS,
            depth: DEPTH,
            edge_threshold: EDGE_THRESHOLD,
            seeds: Vec::new(),
            taxonomy: Vec::new(),
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ConfigFile {
    graph: Option<Settings>,
}

/// `DIR/.kts/config.toml`.
pub fn config_path(scope: &Path) -> PathBuf {
    kts_store::kts_dir(scope).join("config.toml")
}

impl Settings {
    /// The settings in a config file, defaults for what it leaves out; the
    /// defaults alone when `required` is false and the file does not exist.
    pub fn load(path: &Path, required: bool) -> anyhow::Result<Settings> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => {
                return Ok(Settings::default());
            }
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        let file: ConfigFile =
            toml::from_str(&text).with_context(|| format!("reading {}", path.display()))?;
        let settings = file.graph.unwrap_or_default();
        settings
            .check()
            .with_context(|| format!("in {}", path.display()))?;
        Ok(settings)
    }

    pub fn check(&self) -> anyhow::Result<()> {
        anyhow::ensure!(
            self.edge_threshold > 0.0 && self.edge_threshold <= 1.0,
            "edge_threshold must be in (0, 1], not {}",
            self.edge_threshold
        );
        anyhow::ensure!(self.min_mentions >= 1, "min_mentions must be at least 1");
        anyhow::ensure!(self.depth >= 1, "depth must be at least 1");
        Ok(())
    }

    /// A fingerprint of what extraction depends on: when it changes, every
    /// document is extracted again.
    pub fn extraction_fingerprint(&self) -> String {
        let mut hash = Sha256::new();
        hash.update(crate::EXTRACTION_VERSION.to_le_bytes());
        for seed in &self.seeds {
            hash.update(seed.kind.as_str().as_bytes());
            hash.update([0]);
            hash.update(seed.name.to_lowercase().as_bytes());
            hash.update([1]);
        }
        hash.update([2]);
        for name in &self.taxonomy {
            hash.update(name.to_lowercase().as_bytes());
            hash.update([1]);
        }
        hash.finalize()[..8]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// A fingerprint of the settings the built graph depends on: extraction's,
    /// and which entities are kept. A graph snapshot built with other ones is not used.
    pub fn graph_fingerprint(&self) -> String {
        format!("{}-{}", self.extraction_fingerprint(), self.min_mentions)
    }
}

/// A `--kind` flag's value (or a seed's kind), case-insensitive.
pub fn parse_kind(text: &str) -> Result<EntityKind, String> {
    EntityKind::parse(text).ok_or_else(|| {
        let kinds: Vec<&str> = EntityKind::ALL.iter().map(|k| k.as_str()).collect();
        format!("unknown kind {text:?}: one of {}", kinds.join(", "))
    })
}

/// An `entities --kind` value: an entity kind, or TOPIC (keyword topics).
pub fn parse_listed_kind(text: &str) -> Result<NodeKind, String> {
    if text.trim().eq_ignore_ascii_case(NodeKind::Topic.as_str()) {
        return Ok(NodeKind::Topic);
    }
    parse_kind(text)
        .map(NodeKind::Entity)
        .map_err(|why| format!("{why} or TOPIC"))
}

/// A `--seed KIND:NAME` flag's value.
pub fn parse_seed(text: &str) -> Result<Seed, String> {
    let (kind, name) = text
        .split_once(':')
        .ok_or_else(|| format!("{text:?} is not KIND:NAME (e.g. PERSON:Jane Doe)"))?;
    let kind = parse_kind(kind)?;
    let name = name.trim();
    if name.is_empty() {
        return Err(format!("{text:?} has no name"));
    }
    Ok(Seed {
        name: name.to_string(),
        kind,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_file_overrides_only_what_it_names() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "[graph]\nmin_mentions = 3\ntaxonomy = [\"Kubernetes\"]\n\
             [[graph.seeds]]\nname = \"Jane Doe\"\nkind = \"PERSON\"\n",
        )
        .unwrap();
        let settings = Settings::load(&path, true).unwrap();
        assert_eq!(settings.min_mentions, 3);
        assert_eq!(settings.depth, DEPTH);
        assert_eq!(settings.taxonomy, ["Kubernetes"]);
        assert_eq!(settings.seeds[0].kind, EntityKind::Person);
    }

    #[test]
    fn a_missing_file_is_the_defaults_unless_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        assert_eq!(Settings::load(&path, false).unwrap(), Settings::default());
        assert!(Settings::load(&path, true).is_err());
    }

    #[test]
    fn bad_settings_are_refused_with_the_file_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "[graph]\nedge_threshold = 2.0\n").unwrap();
        let message = format!("{:#}", Settings::load(&path, true).unwrap_err());
        assert!(
            message.contains("config.toml") && message.contains("edge_threshold"),
            "{message}"
        );
        std::fs::write(&path, "[graph]\nmin_mention = 2\n").unwrap();
        assert!(
            Settings::load(&path, true).is_err(),
            "misspelt keys are refused"
        );
    }

    #[test]
    fn seeds_parse_from_flags() {
        let seed = parse_seed("person: Jane Doe").unwrap();
        assert_eq!(
            (seed.kind, seed.name.as_str()),
            (EntityKind::Person, "Jane Doe")
        );
        assert!(parse_seed("Jane").is_err());
        assert!(parse_seed("WIZARD:Merlin").is_err());
    }

    #[test]
    fn the_fingerprint_follows_what_extraction_depends_on() {
        let base = Settings::default();
        let mut seeded = base.clone();
        seeded.seeds.push(parse_seed("PERSON:Jane Doe").unwrap());
        let mut deeper = base.clone();
        deeper.depth = 5;
        assert_ne!(
            base.extraction_fingerprint(),
            seeded.extraction_fingerprint()
        );
        assert_eq!(
            base.extraction_fingerprint(),
            deeper.extraction_fingerprint()
        );
    }
}
