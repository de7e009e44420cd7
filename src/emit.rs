//! Emit: stamp `generated_at`, compare content hashes with the manifest, write changed files atomically,
//! remove stale ones.
//!
//! The manifest (path -> content hash, generated_at) lives in `.locref-cache/` beside the output folder, so
//! it is never deployed. An output whose content hash is unchanged keeps its file and its `generated_at`.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::render::{GENERATED_AT_JSON, Rendered};
use crate::replace::{Parts, Replacer, SparePreparation};

/// What the manifest remembers of one output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestEntry {
    /// blake3 (hex) of the content before stamping.
    pub hash: String,
    /// The `generated_at` the file carries.
    pub generated_at: String,
}

/// The state of a published tree: one entry per file locref wrote there.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub files: BTreeMap<String, ManifestEntry>,
}

/// One output as published: its rendered bytes with the build time in place of each `generated_at`
/// placeholder. The rendered bytes are shared with the build, and the stamp is applied as they are
/// written (a vectored write) or served, so publishing a 1 MB output copies it nowhere in user space.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamped {
    /// Site-relative path (`/api/v1/index.json`).
    pub path: String,
    rendered: Arc<Vec<u8>>,
    /// Where the placeholders start in `rendered`.
    marks: Vec<usize>,
    generated_at: String,
    /// Identifies the stamped bytes (the dev server's ETag): a hash of the content hash and the stamp.
    pub etag: String,
}

impl Stamped {
    fn new(path: &str, rendered: &Rendered, generated_at: &str) -> Stamped {
        let hash = rendered.hash.to_hex();
        Stamped {
            path: path.to_string(),
            rendered: rendered.bytes.clone(),
            // memchr's SIMD search: outputs reach 1 MB.
            marks: memchr::memmem::find_iter(&rendered.bytes, GENERATED_AT_JSON.as_bytes())
                .collect(),
            generated_at: generated_at.to_string(),
            // The stamped bytes are a function of the content hash and the stamp: hash those, not 1 MB
            // again.
            etag: blake3::hash(format!("{hash}:{generated_at}").as_bytes()).to_hex()[..32]
                .to_string(),
        }
    }

    /// The published bytes as consecutive slices (what a vectored write takes): the rendered bytes
    /// between placeholders, and the build time for each placeholder.
    pub fn segments(&self) -> Vec<&[u8]> {
        let mut segments = Vec::with_capacity(2 * self.marks.len() + 1);
        let mut last = 0;
        for &at in &self.marks {
            segments.push(&self.rendered[last..at]);
            segments.push(self.generated_at.as_bytes());
            last = at + GENERATED_AT_JSON.len();
        }
        segments.push(&self.rendered[last..]);
        segments
    }

    /// The published bytes (borrowed from the build when the output has no placeholder).
    pub fn bytes(&self) -> Cow<'_, [u8]> {
        if self.marks.is_empty() {
            Cow::Borrowed(self.rendered.as_slice())
        } else {
            Cow::Owned(self.segments().concat())
        }
    }
}

impl Parts for Stamped {
    fn parts(&self) -> Vec<&[u8]> {
        self.segments()
    }
}

/// The build time in `generated_at` form: `SOURCE_DATE_EPOCH` when set (reproducible builds), else now.
pub fn build_time() -> String {
    let now = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<i64>().ok())
        .and_then(|s| jiff::Timestamp::from_second(s).ok())
        .unwrap_or_else(|| {
            jiff::Timestamp::from_second(jiff::Timestamp::now().as_second())
                .expect("now is in range")
        });
    now.to_string()
}

/// Where the manifest of an output folder lives: `<parent>/.locref-cache/<name>.manifest.json`.
pub fn manifest_path(out: &Path) -> PathBuf {
    let name = out.file_name().and_then(|n| n.to_str()).unwrap_or("site");
    out.parent()
        .unwrap_or(Path::new("."))
        .join(".locref-cache")
        .join(format!("{name}.manifest.json"))
}

pub fn load_manifest(out: &Path) -> Manifest {
    std::fs::read(manifest_path(out))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Where the spares of an output folder's files live (see [`crate::replace`]):
/// `<parent>/.locref-cache/<name>.spare/`, a tree shaped like the output folder's.
pub fn spare_root(out: &Path) -> PathBuf {
    let name = out.file_name().and_then(|n| n.to_str()).unwrap_or("site");
    out.parent()
        .unwrap_or(Path::new("."))
        .join(".locref-cache")
        .join(format!("{name}.spare"))
}

/// The spare of the manifest itself, beside it.
fn manifest_spare(out: &Path) -> PathBuf {
    let mut path = manifest_path(out).into_os_string();
    path.push(".spare");
    PathBuf::from(path)
}

/// The file an output path is written to (`/x/` -> `x/index.html`).
pub fn file_for(out: &Path, site_path: &str) -> PathBuf {
    let rel = site_path.trim_start_matches('/');
    if rel.is_empty() || rel.ends_with('/') {
        out.join(rel).join("index.html")
    } else {
        out.join(rel)
    }
}

/// What one emit did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct EmitReport {
    pub written: Vec<String>,
    pub unchanged: usize,
    pub removed: Vec<String>,
}

/// Publishes builds, to an output folder or (for the dev server) only in memory.
///
/// It keeps the manifest and the stamped outputs of the last build, so a rebuild stamps and writes only
/// the outputs whose content hash changed: its cost follows the size of the change, not of the site.
pub struct Publisher {
    out: Option<PathBuf>,
    manifest: Manifest,
    site: BTreeMap<String, Stamped>,
    /// Writes changed files through reusable spares where the filesystem allows it.
    replacer: Replacer,
    /// The making of the published outputs' spares, once started ([`Publisher::prepare_spares`]).
    preparation: Option<SparePreparation>,
    spares_started: bool,
}

impl Publisher {
    /// A publisher for `out` (its manifest is read from disk), or an in-memory one for `None`.
    pub fn new(out: Option<&Path>) -> Publisher {
        let manifest = out.map(load_manifest).unwrap_or_default();
        Publisher {
            out: out.map(Path::to_path_buf),
            manifest,
            site: BTreeMap::new(),
            replacer: Replacer::default(),
            preparation: None,
            spares_started: false,
        }
    }

    /// Starts making, on a thread of their own, the spares that the published outputs do not have yet, so
    /// that a session's first edit of an output finds its spare (see [`SparePreparation`]). Once per
    /// publisher; nothing in memory, or where writes do not go through spares.
    pub fn prepare_spares(&mut self) {
        let Some(out) = self.out.as_ref().filter(|_| !self.spares_started) else {
            return;
        };
        self.spares_started = true;
        let root = spare_root(out);
        if !self.replacer.uses_spares()
            || std::fs::create_dir_all(&root).is_err()
            || !same_filesystem(out, &root)
        {
            return;
        }
        let spares = self
            .site
            .values()
            .map(|s| (file_for(&root, &s.path), s.clone()));
        self.preparation = Some(SparePreparation::start(spares.collect()));
    }

    /// Waits until the spares [`Publisher::prepare_spares`] started are made.
    pub fn wait_for_spares(&mut self) {
        if let Some(preparation) = self.preparation.take() {
            preparation.wait();
        }
    }

    /// The outputs of the last published build, by site path.
    pub fn site(&self) -> &BTreeMap<String, Stamped> {
        &self.site
    }

    /// Publishes `outputs`: stamps and writes what changed (or, on the first build, what is missing on
    /// disk), removes outputs that no longer exist, saves the manifest.
    pub fn publish(
        &mut self,
        outputs: &[(String, &Rendered)],
        time: &str,
    ) -> io::Result<EmitReport> {
        let mut report = EmitReport::default();
        let mut manifest_changed = false;
        for (path, rendered) in outputs {
            let hash = rendered.hash.to_hex().to_string();
            let entry = self.manifest.files.get(path);
            let same_content = entry.is_some_and(|e| e.hash == hash);
            let known = self.site.contains_key(path);
            if same_content && known {
                report.unchanged += 1;
                continue;
            }
            let generated_at = match entry {
                Some(e) if same_content => e.generated_at.clone(),
                _ => time.to_string(),
            };
            let stamped = Stamped::new(path, rendered, &generated_at);
            let target = self.out.as_ref().map(|out| file_for(out, path));
            // A first build in a folder of an earlier run keeps files whose content is current.
            let on_disk = same_content && target.as_ref().is_some_and(|t| t.is_file());
            if let (Some(out), Some(target)) = (&self.out, target.filter(|_| !on_disk)) {
                // Only a file published before has a version to exchange with a spare.
                let spare = entry.map(|_| file_for(&spare_root(out), path));
                self.replacer
                    .replace(&target, spare.as_deref(), &stamped.segments())?;
            }
            if on_disk {
                report.unchanged += 1;
            } else {
                report.written.push(path.clone());
            }
            if !same_content {
                self.manifest
                    .files
                    .insert(path.clone(), ManifestEntry { hash, generated_at });
                manifest_changed = true;
            }
            self.site.insert(path.clone(), stamped);
        }
        let current: BTreeSet<&str> = outputs.iter().map(|(p, _)| p.as_str()).collect();
        let stale: Vec<String> = self
            .manifest
            .files
            .keys()
            .filter(|p| !current.contains(p.as_str()))
            .cloned()
            .collect();
        for path in stale {
            self.manifest.files.remove(&path);
            self.site.remove(&path);
            manifest_changed = true;
            if let Some(out) = &self.out {
                let target = file_for(out, &path);
                match std::fs::remove_file(&target) {
                    Ok(()) => remove_empty_parents(out, &target),
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => return Err(e),
                }
                let spares = spare_root(out);
                let spare = file_for(&spares, &path);
                if std::fs::remove_file(&spare).is_ok() {
                    remove_empty_parents(&spares, &spare);
                }
            }
            report.removed.push(path);
        }
        if let Some(out) = &self.out
            && (manifest_changed || !manifest_path(out).is_file())
        {
            let mut bytes = serde_json::to_vec_pretty(&self.manifest).map_err(io::Error::other)?;
            bytes.push(b'\n');
            self.replacer
                .replace(&manifest_path(out), Some(&manifest_spare(out)), &[&bytes])?;
        }
        Ok(report)
    }
}

/// Publishes `outputs` into `out` once (what `locref build` does).
pub fn emit(out: &Path, outputs: &[(String, &Rendered)], time: &str) -> io::Result<EmitReport> {
    Publisher::new(Some(out)).publish(outputs, time)
}

/// Whether two existing folders are on one filesystem (where a spare can be exchanged with an output).
#[cfg(unix)]
fn same_filesystem(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_filesystem(_: &Path, _: &Path) -> bool {
    false
}

fn remove_empty_parents(out: &Path, file: &Path) {
    let mut dir = file.parent();
    while let Some(d) = dir.filter(|d| d.starts_with(out) && *d != out) {
        if std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
}

/// `path` made absolute with symlinks resolved, even when it does not exist yet: the nearest existing
/// ancestor is canonicalized and the rest appended.
pub fn resolve(path: &Path) -> io::Result<PathBuf> {
    let absolute = std::path::absolute(path)?;
    let mut existing = absolute.as_path();
    let mut rest = Vec::new();
    while !existing.exists() {
        rest.push(
            existing
                .file_name()
                .map(|n| n.to_os_string())
                .unwrap_or_default(),
        );
        existing = existing.parent().unwrap_or(Path::new("/"));
    }
    let mut resolved = existing.canonicalize()?;
    for part in rest.iter().rev() {
        match part.to_str() {
            Some("..") => {
                resolved.pop();
            }
            Some(".") | Some("") => {}
            _ => resolved.push(part),
        }
    }
    Ok(resolved)
}

/// Why locref may not write its output into `out`, if it may not: the project root itself, or anything
/// inside `sources/` or `rules/` (the outputs would become inputs).
pub fn output_refusal(out: &Path, project_root: &Path) -> Option<String> {
    let out = match resolve(out) {
        Ok(out) => out,
        Err(e) => {
            return Some(format!(
                "cannot resolve the output folder {}: {e}",
                out.display()
            ));
        }
    };
    let inside_inputs = crate::workspace::INPUT_DIRS
        .iter()
        .any(|dir| out.starts_with(project_root.join(dir)));
    (inside_inputs || out == project_root).then(|| {
        format!(
            "refusing to write into {}: it is the project or inside sources/ or rules/",
            out.display()
        )
    })
}

/// Why `--clean` may not delete `out`, if it may not.
///
/// Never: `/`, the home folder, the project root or a folder containing it, `sources/`, `rules/` or
/// anything inside them. Without `--force`: a folder holding files locref did not write.
pub fn clean_refusal(out: &Path, project_root: &Path, force: bool) -> Option<String> {
    if !out.exists() {
        return None;
    }
    let Ok(out) = out.canonicalize() else {
        return Some(format!("cannot resolve {}", out.display()));
    };
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .and_then(|h| h.canonicalize().ok());
    let protected = out.parent().is_none()
        || home.as_deref() == Some(out.as_path())
        || project_root.starts_with(&out)
        || crate::workspace::INPUT_DIRS
            .iter()
            .any(|d| out.starts_with(project_root.join(d)));
    if protected {
        return Some(format!(
            "refusing to delete {}: it is /, home, the project or its sources/rules",
            out.display()
        ));
    }
    if force {
        return None;
    }
    let manifest = load_manifest(&out);
    let mut foreign = Vec::new();
    let mut stack = vec![out.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = path
                .strip_prefix(&out)
                .map(|r| format!("/{}", r.to_string_lossy().replace('\\', "/")))
                .unwrap_or_default();
            let known = manifest.files.contains_key(&rel)
                || rel
                    .strip_suffix("index.html")
                    .is_some_and(|dir| manifest.files.contains_key(dir));
            if !known {
                foreign.push(rel);
            }
        }
    }
    if foreign.is_empty() {
        return None;
    }
    foreign.sort();
    let shown: Vec<&str> = foreign.iter().take(5).map(String::as_str).collect();
    Some(format!(
        "refusing to clean {}: it holds {} file(s) locref did not write ({}{}); use --force to delete it anyway",
        out.display(),
        foreign.len(),
        shown.join(", "),
        if foreign.len() > 5 { ", ..." } else { "" }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn publishing_keeps_generated_at_of_unchanged_content_and_drops_stale_outputs() {
        let a = Rendered::new(br#"{"generated_at":"\u0000generated_at\u0000","x":1}"#.to_vec());
        let b = Rendered::new(br#"{"generated_at":"\u0000generated_at\u0000","x":2}"#.to_vec());
        let mut publisher = Publisher::new(None);
        let first = publisher
            .publish(&[("/a.json".into(), &a)], "2026-01-01T00:00:00Z")
            .unwrap();
        assert_eq!(first.written, ["/a.json"]);
        assert_eq!(
            &*publisher.site()["/a.json"].bytes(),
            br#"{"generated_at":"2026-01-01T00:00:00Z","x":1}"#.as_slice()
        );
        let second = publisher
            .publish(&[("/a.json".into(), &a)], "2026-02-02T00:00:00Z")
            .unwrap();
        assert_eq!((second.written.len(), second.unchanged), (0, 1));
        let third = publisher
            .publish(&[("/a.json".into(), &b)], "2026-03-03T00:00:00Z")
            .unwrap();
        assert_eq!(third.written, ["/a.json"]);
        assert_eq!(
            &*publisher.site()["/a.json"].bytes(),
            br#"{"generated_at":"2026-03-03T00:00:00Z","x":2}"#.as_slice()
        );
        let fourth = publisher.publish(&[], "2026-04-04T00:00:00Z").unwrap();
        assert_eq!(fourth.removed, ["/a.json"]);
        assert!(publisher.site().is_empty());
    }
}
