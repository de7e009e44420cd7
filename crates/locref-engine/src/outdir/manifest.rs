//! The manifest of an output folder (`.locref-cache/<name>.manifest.json`): what locref put there, and
//! what the one-off build that last published it was made from. Read by the build that publishes
//! ([`crate::publish`]) and by `--clean`, which deletes only what a manifest names ([`super::output_refusal`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::FileStamp;
pub use super::manifest_path;

/// What the manifest remembers of one output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ManifestEntry {
    /// blake3 (hex) of the content before stamping.
    pub hash: String,
    /// The `generated_at` the file carries.
    pub generated_at: String,
    /// The file as locref last put it in place or found it matching; absent in a manifest of an
    /// earlier locref, whose files are then compared by content once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<FileStamp>,
}

/// The state of a published tree: one entry per file locref wrote there, and what the one-off build
/// that last published it was made from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Manifest {
    pub files: BTreeMap<String, ManifestEntry>,
    /// Absent after a build that failed half way or a session (`watch`) that published here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<InputRecord>,
    /// The paths a killed build's journal named: locref's own files, whatever they hold now.
    #[serde(skip)]
    pub journaled: BTreeSet<String>,
}

/// What a one-off build was made from: every input file's content hash, the base URL and the locref
/// that built. When a later `locref build` into the same folder finds the same record, the same files
/// in place and no journal, the build would write nothing, so it stops there ([`crate::publish::up_to_date`]). No query
/// result is kept: a build that finds any difference renders everything, as it always did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputRecord {
    /// The locref that built: its version and the identity of its executable file.
    pub locref: String,
    /// `--base-url`, when given.
    pub base_url: Option<String>,
    /// The day of the build: a build on a later day renders again (the calendar's windows move).
    #[serde(default)]
    pub build_date: String,
    /// blake3 (hex) of every input file as the build read it, by project-relative path.
    pub files: BTreeMap<String, String>,
}

/// The manifest of `out` as a build left it, if there is one and it reads (no journal applied).
pub(crate) fn read_manifest(out: &Path) -> Option<Manifest> {
    let bytes = super::read_cache_file(&manifest_path(out), CACHE_FILE_LIMIT)?;
    serde_json::from_slice(&bytes).ok()
}

/// The manifest of `out`, as the last build that finished left it. A build killed while replacing files
/// leaves its journal (the paths it was replacing): those entries are forgotten, so the next build
/// writes them again instead of trusting files that may not match.
pub(crate) fn load_manifest(out: &Path) -> Manifest {
    let mut manifest = read_manifest(out).unwrap_or_default();
    if let Some(journal) = load_journal(out) {
        for path in journal {
            // An unknown hash: rewritten if still an output, removed as stale if not.
            manifest.files.insert(
                path.clone(),
                ManifestEntry {
                    hash: String::new(),
                    generated_at: String::new(),
                    file: None,
                },
            );
            manifest.journaled.insert(path);
        }
    }
    manifest
}

/// The largest manifest or journal read (an x100 site's manifest is a few megabytes): anything larger,
/// or not a regular file, was not written by locref and is taken as absent.
const CACHE_FILE_LIMIT: u64 = 1 << 30;

fn load_journal(out: &Path) -> Option<Vec<String>> {
    let bytes = super::read_cache_file(&super::journal_path(out), CACHE_FILE_LIMIT)?;
    Some(serde_json::from_slice(&bytes).unwrap_or_default())
}
