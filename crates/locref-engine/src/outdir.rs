//! The output folder: where each output file goes, which folders locref may write into or delete, and
//! the cache folder beside it. Every write and removal of the emit step resolves its path here, so the
//! rules that keep locref inside its output folder are written once:
//!
//! - a site path is a plain relative path (no `..`, `.`, empty segment, `\`, drive or control character),
//!   whatever the route table or a manifest on disk says;
//! - nothing is written or removed through a symbolic link inside the output folder;
//! - the output folder is never `/`, the home folder, the project or a folder containing it, nor inside
//!   `sources/` or `rules/`; `--clean` deletes only a folder that holds nothing but what locref wrote.
//!
//! The cache folder (`<parent>/.locref-cache/`) holds what must not be deployed: the manifest, the
//! journal of a build being published, and the replacer's staging files.

use std::io;
use std::path::{Path, PathBuf};

pub mod manifest;
pub(crate) mod pinned;

/// The folders of a project whose files are inputs: never an output folder, never written.
pub const INPUT_DIRS: [&str; 2] = ["sources", "rules"];

/// The longest name of a file or folder of the site, in bytes: file systems take 255, and a file is
/// staged under its name with a prefix of up to 40 bytes.
pub(crate) const MAX_NAME: usize = 200;
/// The longest site path, in bytes (every file system and archive format takes it, with the output
/// folder's own path in front).
pub(crate) const MAX_PATH: usize = 1000;

/// Why `path` cannot name a file of the site, if it cannot: it must be `/` followed by segments that are
/// each a plain file or folder name, one that every file system stores as written and every reader
/// sees as written: URL-safe ASCII letters, digits and `-`, `_`, `.`, `~`; not `.` or `..`; not ending
/// in `.`; not a device name Windows reserves (`CON`, `aux.json`); at most [`MAX_NAME`] bytes a name
/// and [`MAX_PATH`] in all. A bidirectional override, a fullwidth dot or a control character is not
/// among them, so no route can spoof another or break where it is copied.
pub fn site_path_problem(path: &str) -> Option<String> {
    let Some(rest) = path.strip_prefix('/') else {
        return Some(format!("path `{}` must start with `/`", visible(path)));
    };
    if rest.is_empty() {
        return Some("path `/` names no file".into());
    }
    let plain = "an output path is `/` and plain names joined by `/`";
    if path.len() > MAX_PATH {
        return Some(format!(
            "path `{}...` is longer than {MAX_PATH} bytes: {plain}",
            visible(&path[..path.floor_char_boundary(60)])
        ));
    }
    for segment in rest.split('/') {
        let problem = match segment {
            "" => Some("an empty segment (`//` or a trailing `/`)".to_string()),
            "." | ".." => Some("a `.` or `..` segment".into()),
            _ if segment.contains('\\') => Some("a backslash".into()),
            _ if segment.contains(':') => Some("a `:` (a drive or stream name)".into()),
            _ if segment.chars().any(|c| c.is_control()) => Some("a control character".into()),
            _ if !segment
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '~')) =>
            {
                let c = segment
                    .chars()
                    .find(|c| !c.is_ascii_alphanumeric() && !matches!(c, '-' | '_' | '.' | '~'))
                    .unwrap_or(' ');
                Some(format!(
                    "the character {} (names are ASCII letters, digits and `-`, `_`, `.`, `~`)",
                    visible_char(c)
                ))
            }
            _ if segment.ends_with('.') => Some("a name ending in `.` (Windows drops it)".into()),
            _ if segment.len() > MAX_NAME => Some(format!("a name longer than {MAX_NAME} bytes")),
            _ if is_reserved_device_name(segment) => Some(format!(
                "the name `{segment}`, a device Windows reserves (CON, PRN, AUX, NUL, COM1-9, LPT1-9, with any extension)"
            )),
            _ => None,
        };
        if let Some(problem) = problem {
            return Some(format!("path `{}` has {problem}: {plain}", visible(path)));
        }
    }
    None
}

/// Whether `name` is, or starts with before its first `.`, a device name Windows reserves.
fn is_reserved_device_name(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or(name).to_ascii_uppercase();
    matches!(stem.as_str(), "CON" | "PRN" | "AUX" | "NUL")
        || ((stem.starts_with("COM") || stem.starts_with("LPT"))
            && stem.len() == 4
            && stem.as_bytes()[3].is_ascii_digit())
}

/// `text` with every character but printable ASCII written as an escape, so a message shows what a
/// path holds, not how a terminal draws it.
fn visible(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            ' '..='~' => c.to_string(),
            c => c.escape_unicode().to_string(),
        })
        .collect()
}

fn visible_char(c: char) -> String {
    match c {
        '!'..='~' => format!("`{c}`"),
        c => format!("{}", c.escape_unicode()),
    }
}

/// The file a site path is written to (`/api/v1/index.json` -> `<out>/api/v1/index.json`), or `None`
/// when the path could reach outside the output folder.
pub(crate) fn file_for(out: &Path, site_path: &str) -> Option<PathBuf> {
    if site_path_problem(site_path).is_some() {
        return None;
    }
    Some(out.join(site_path.trim_start_matches('/')))
}

/// What an output file looked like on disk when locref last put it in place or found it matching: a
/// later build compares this first (a `stat`), and reads the file only when it differs, so an output
/// deleted, replaced or edited behind locref's back is noticed and written again. The change time is
/// part of it because it cannot be set back by hand: an edit with its modification time restored is
/// noticed too.
///
/// Recorded in the manifest as `[len, modified, changed, inode]` (times in nanoseconds since the epoch).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(from = "(u64, i64, i64, u64)", into = "(u64, i64, i64, u64)")]
pub(crate) struct FileStamp {
    pub len: u64,
    pub modified: i64,
    pub changed: i64,
    pub inode: u64,
}

impl From<(u64, i64, i64, u64)> for FileStamp {
    fn from((len, modified, changed, inode): (u64, i64, i64, u64)) -> FileStamp {
        FileStamp {
            len,
            modified,
            changed,
            inode,
        }
    }
}

impl From<FileStamp> for (u64, i64, i64, u64) {
    fn from(stamp: FileStamp) -> Self {
        (stamp.len, stamp.modified, stamp.changed, stamp.inode)
    }
}

/// The [`FileStamp`] of the regular file at `path`; `None` when it is missing, a link or not a file.
pub(crate) fn stamp_of(path: &Path) -> Option<FileStamp> {
    stamp_of_metadata(&std::fs::symlink_metadata(path).ok()?)
}

/// The [`FileStamp`] of what `meta` describes (not followed through a link); `None` when it is not a
/// regular file.
pub(crate) fn stamp_of_metadata(meta: &std::fs::Metadata) -> Option<FileStamp> {
    if !meta.file_type().is_file() {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let time = |s: i64, ns: i64| s.saturating_mul(1_000_000_000).saturating_add(ns);
        Some(FileStamp {
            len: meta.len(),
            modified: time(meta.mtime(), meta.mtime_nsec()),
            changed: time(meta.ctime(), meta.ctime_nsec()),
            inode: meta.ino(),
        })
    }
    #[cfg(not(unix))]
    {
        let modified = meta
            .modified()
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?
            .as_nanos()
            .try_into()
            .unwrap_or(i64::MAX);
        Some(FileStamp {
            len: meta.len(),
            modified,
            changed: modified,
            inode: 0,
        })
    }
}

/// Reads a file of the cache folder (the manifest, the journal) if it is a regular file of at most
/// `limit` bytes: a FIFO or a device put there would block or never end, and is taken as absent.
pub(crate) fn read_cache_file(path: &Path, limit: u64) -> Option<Vec<u8>> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.file_type().is_file() || meta.len() > limit {
        return None;
    }
    let mut bytes = Vec::new();
    use std::io::Read;
    std::fs::File::open(path)
        .ok()?
        .take(limit)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(bytes)
}

/// An error unless every folder between `out` and `file` that exists is a real folder, not a symbolic
/// link (which would carry a write or a removal outside the output folder).
pub(crate) fn no_link_between(out: &Path, file: &Path) -> io::Result<()> {
    let Ok(relative) = file.strip_prefix(out) else {
        return Err(outside(file));
    };
    let mut at = out.to_path_buf();
    let parts: Vec<_> = relative.components().collect();
    for part in &parts[..parts.len().saturating_sub(1)] {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(io::Error::other(format!(
                    "refusing to write through the symbolic link {}",
                    at.display()
                )));
            }
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn outside(file: &Path) -> io::Error {
    io::Error::other(format!(
        "refusing to touch {}: it is outside the output folder",
        file.display()
    ))
}

/// The folder `out` names, by its resolved path: `alias` (a link to `public`) and `public` are one folder,
/// with one lock, one manifest and one set of spares. A folder not made yet is its parent's resolved
/// path and its name.
pub fn resolved(out: &Path) -> PathBuf {
    if let Ok(path) = out.canonicalize() {
        return path;
    }
    let parent = match out.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    match (parent.canonicalize(), out.file_name()) {
        (Ok(parent), Some(name)) => parent.join(name),
        _ => out.to_path_buf(),
    }
}

/// The cache folder of an output folder: `<parent>/.locref-cache/`, beside the folder `out` resolves to.
pub fn cache_dir(out: &Path) -> PathBuf {
    cache_dir_of(&resolved(out))
}

/// [`cache_dir`] of a folder already resolved.
fn cache_dir_of(real: &Path) -> PathBuf {
    real.parent()
        .unwrap_or(Path::new("."))
        .join(".locref-cache")
}

/// `<cache>/<name of out><suffix>`: the cache entries of one output folder (by its resolved path, resolved
/// once).
fn cache_entry(out: &Path, suffix: &str) -> PathBuf {
    let real = resolved(out);
    let name = real.file_name().and_then(|n| n.to_str()).unwrap_or("site");
    cache_dir_of(&real).join(format!("{name}{suffix}"))
}

/// The manifest of an output folder (site path -> content hash, generated_at).
pub fn manifest_path(out: &Path) -> PathBuf {
    cache_entry(out, ".manifest.json")
}

/// The journal of a build being published: the site paths it is about to replace or remove. It exists
/// only while files are being replaced, so when a build is killed half way, the next one knows which
/// files may not match the manifest.
pub fn journal_path(out: &Path) -> PathBuf {
    cache_entry(out, ".journal.json")
}

/// The lock of an output folder: held by the one locref process that writes it (see [`lock_folder`]).
pub fn lock_path(out: &Path) -> PathBuf {
    cache_entry(out, ".lock")
}

/// The lock of a project's `sources/`, held by `locref release` while it checks the project and writes
/// its release (see [`lock_sources`]): `<project>/.locref-cache/sources.lock`, beside the output folders'
/// entries. No build can take it for an output folder: `sources/` is never one ([`output_refusal`]).
pub fn sources_lock_path(project_root: &Path) -> PathBuf {
    lock_path(&project_root.join("sources"))
}

/// A folder claimed by this process: two locref processes writing one output folder (two builds, or a
/// build beside a watch) would replace and remove each other's files and manifest, and two releases
/// would each record a release over the other's. The kernel releases the claim when this is dropped or
/// the process ends, however it ends.
#[derive(Debug)]
pub struct FolderLock {
    _file: std::fs::File,
}

/// Claims the lock file at `path` for this process: `Ok(None)` when another process holds it. The file
/// is created if need be and never removed (removing it would let two processes hold two files of one
/// name).
fn claim(path: &Path) -> io::Result<Option<FolderLock>> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| with_path(e, dir))?;
    }
    // A FIFO or a device in its place would block the open or take the lock's writes: refused.
    if let Ok(meta) = std::fs::symlink_metadata(path)
        && !meta.file_type().is_file()
    {
        return Err(io::Error::other(format!(
            "{} is not a regular file: remove it, locref makes it again",
            path.display()
        )));
    }
    let file = std::fs::File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(|e| with_path(e, path))?;
    match file.try_lock() {
        Ok(()) => Ok(Some(FolderLock { _file: file })),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        // A filesystem without locks: go on as before, unguarded.
        Err(std::fs::TryLockError::Error(e)) if e.kind() == io::ErrorKind::Unsupported => {
            Ok(Some(FolderLock { _file: file }))
        }
        Err(std::fs::TryLockError::Error(e)) => Err(with_path(e, path)),
    }
}

/// Claims `out` for this process, or says which folder another locref is writing.
pub(crate) fn lock_folder(out: &Path) -> io::Result<FolderLock> {
    claim(&lock_path(out))?.ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::WouldBlock,
            format!(
                "another locref (a build or a watch) is writing to {}: wait for it to finish, or build into another folder",
                out.display()
            ),
        )
    })
}

/// Claims the project's `sources/` for a release: `Ok(None)` when another `locref release` holds it.
pub fn lock_sources(project_root: &Path) -> io::Result<Option<FolderLock>> {
    claim(&sources_lock_path(project_root))
}

/// Where the replacer keeps an output folder's spare files (a tree shaped like the output folder's).
pub fn spare_root(out: &Path) -> PathBuf {
    cache_entry(out, ".spare")
}

/// Where the replacer writes a file's new version before renaming it into place.
pub(crate) fn staging_dir(out: &Path) -> PathBuf {
    cache_entry(out, ".staging")
}

/// The marker of a temporary file written inside the output folder (only when the cache folder is on
/// another filesystem); [`sweep_temporaries`] removes any a killed build left behind.
pub(crate) const TEMPORARY_MARK: &str = ".locref-tmp-";

/// Whether a file name is one of the replacer's temporaries inside the output folder.
pub(crate) fn is_temporary(file_name: &str) -> bool {
    file_name.starts_with('.') && file_name.contains(TEMPORARY_MARK)
}

/// Removes what a killed build may have left: its temporary files inside `out` (whose site paths it
/// returns) and its staged files in the cache's staging folder. Called before a publish stages anything.
pub(crate) fn sweep_temporaries(out: &Path) -> io::Result<Vec<String>> {
    let staging = staging_dir(out);
    match std::fs::remove_dir_all(&staging) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(with_path(e, &staging)),
        _ => {}
    }
    let mut removed = Vec::new();
    for (path, temporary) in files_in(out)? {
        if temporary {
            std::fs::remove_file(&path).map_err(|e| with_path(e, &path))?;
            removed.push(site_path_of(out, &path));
        }
    }
    Ok(removed)
}

/// Every file under `out` (links not followed: a link is listed as the entry it is), each with whether
/// it is one of the replacer's temporaries; nothing when `out` does not exist.
pub(crate) fn files_in(out: &Path) -> io::Result<Vec<(PathBuf, bool)>> {
    let mut files = Vec::new();
    let mut stack = vec![out.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(with_path(e, &dir)),
        };
        for entry in entries {
            let entry = entry.map_err(|e| with_path(e, &dir))?;
            let path = entry.path();
            let kind = entry.file_type().map_err(|e| with_path(e, &path))?;
            if kind.is_dir() {
                stack.push(path);
            } else {
                let temporary = entry.file_name().to_str().is_some_and(is_temporary);
                files.push((path, temporary));
            }
        }
    }
    Ok(files)
}

fn site_path_of(out: &Path, file: &Path) -> String {
    file.strip_prefix(out)
        .map(|r| format!("/{}", r.to_string_lossy().replace('\\', "/")))
        .unwrap_or_default()
}

/// An I/O error that names the file it happened to.
pub(crate) fn with_path(error: io::Error, path: &Path) -> io::Error {
    io::Error::new(error.kind(), format!("{}: {error}", path.display()))
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

/// Why `out` (resolved) may never be an output folder, if so: `/`, the home folder, the project or a
/// folder containing it, or anything inside `sources/` or `rules/` (the outputs would become inputs).
fn protected(out: &Path, project_root: &Path) -> Option<&'static str> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .and_then(|h| h.canonicalize().ok());
    if out.parent().is_none() {
        Some("it is /")
    } else if home.as_deref() == Some(out) {
        Some("it is the home folder")
    } else if project_root.starts_with(out) {
        Some("it is the project or a folder containing it")
    } else if INPUT_DIRS
        .iter()
        .any(|dir| out.starts_with(project_root.join(dir)))
    {
        Some("it is inside sources/ or rules/")
    } else if out.components().any(|c| c.as_os_str() == ".git") {
        Some("it is a git repository's own folder, or inside one")
    } else if out.components().any(|c| c.as_os_str() == ".locref-cache") {
        Some("it is locref's cache folder, or inside one")
    } else {
        None
    }
}

/// Why `--clean` may not delete what `out` holds even with `--force`: a git work tree (a `.git` in it)
/// or a tool's cache (a `CACHEDIR.TAG` in it, as cargo's `target/` has) holds what no build can make
/// again.
fn holds_what_no_build_makes(out: &Path) -> Option<&'static str> {
    if out.join(".git").symlink_metadata().is_ok() {
        Some("it holds a .git (a repository's work tree)")
    } else if out.join("CACHEDIR.TAG").symlink_metadata().is_ok() {
        Some("it holds a CACHEDIR.TAG (a tool's cache, such as cargo's target/)")
    } else {
        None
    }
}

/// Why locref may not write its output into `out`, if it may not (see [`protected`]).
pub fn output_refusal(out: &Path, project_root: &Path) -> Option<String> {
    let resolved = match resolve(out) {
        Ok(resolved) => resolved,
        Err(e) => {
            return Some(format!(
                "cannot resolve the output folder {}: {e}",
                out.display()
            ));
        }
    };
    let root = project_root
        .canonicalize()
        .unwrap_or_else(|_| project_root.to_path_buf());
    protected(&resolved, &root)
        .map(|why| format!("refusing to write into {}: {why}", resolved.display()))
}

/// Why `--clean` may not delete `out`, if it may not.
///
/// Never a protected folder ([`protected`]). Without `--force`: a folder holding files locref did not
/// write (the manifest lists what it wrote; the temporaries of a killed build count as its own).
pub fn clean_refusal(out: &Path, project_root: &Path, force: bool) -> Option<String> {
    if !out.exists() {
        return None;
    }
    let Ok(resolved) = out.canonicalize() else {
        return Some(format!("cannot resolve {}", out.display()));
    };
    let root = project_root
        .canonicalize()
        .unwrap_or_else(|_| project_root.to_path_buf());
    if let Some(why) = protected(&resolved, &root).or_else(|| holds_what_no_build_makes(&resolved))
    {
        return Some(format!("refusing to delete {}: {why}", resolved.display()));
    }
    if force {
        return None;
    }
    let manifest = manifest::load_manifest(&resolved);
    let mut foreign = Vec::new();
    let mut stack = vec![resolved.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(path);
                continue;
            }
            let rel = site_path_of(&resolved, &path);
            let temporary = entry
                .file_name()
                .to_str()
                .is_some_and(|n| n.contains(TEMPORARY_MARK));
            if !manifest.files.contains_key(&rel) && !temporary {
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
        resolved.display(),
        foreign.len(),
        shown.join(", "),
        if foreign.len() > 5 { ", ..." } else { "" }
    ))
}

/// Removes the folders between `file` and `out` that became empty.
pub(crate) fn remove_empty_parents(out: &Path, file: &Path) {
    let mut dir = file.parent();
    while let Some(d) = dir.filter(|d| d.starts_with(out) && *d != out) {
        if std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn site_paths_that_could_leave_the_folder_are_refused() {
        for bad in [
            "/../../victim.txt",
            "/a/../b",
            "/./x",
            "//x",
            "/x/",
            "/",
            "x",
            "/a\\..\\b",
            "/C:/x",
            "/a/b\u{0}c",
            "/a/./b",
            "/..",
            "/CON",
            "/api/aux.json",
            "/lpt1.txt",
            "/x./y",
            "/trailing-space /y",
            "/a\u{202e}lmth.exe",
            "/a\u{ff0e}json",
            "/caf\u{e9}.html",
        ] {
            assert!(site_path_problem(bad).is_some(), "{bad:?}");
            assert_eq!(file_for(Path::new("/out"), bad), None, "{bad:?}");
        }
        for good in [
            "/index.html",
            "/api/v1/index.json",
            "/_headers",
            "/.nojekyll",
            "/a..b",
            "/console.html",
            "/com10.json",
            "/llms-full.txt",
        ] {
            assert_eq!(site_path_problem(good), None, "{good:?}");
        }
        let long = format!("/{}", "a".repeat(MAX_NAME + 1));
        assert!(site_path_problem(&long).is_some());
        assert!(site_path_problem(&format!("/{}", "a".repeat(MAX_NAME))).is_none());
        let deep = "/abcdefghi".repeat(MAX_PATH / 10 + 1);
        assert!(site_path_problem(&deep).is_some());
        assert_eq!(
            file_for(Path::new("/out"), "/api/x.json"),
            Some(PathBuf::from("/out/api/x.json"))
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_folder_inside_the_output_is_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir_all(&out).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, out.join("api")).unwrap();
        assert!(no_link_between(&out, &out.join("api/x.json")).is_err());
        assert!(no_link_between(&out, &out.join("fr/index.html")).is_ok());
        assert!(no_link_between(&out, &dir.path().join("victim")).is_err());
    }

    #[test]
    fn temporaries_left_inside_the_output_are_swept() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir_all(out.join("api")).unwrap();
        std::fs::write(out.join("api/.x.json.locref-tmp-12"), b"").unwrap();
        std::fs::write(out.join("api/x.json"), b"{}").unwrap();
        assert_eq!(
            sweep_temporaries(&out).unwrap(),
            ["/api/.x.json.locref-tmp-12"]
        );
        assert!(out.join("api/x.json").exists());
        assert!(!out.join("api/.x.json.locref-tmp-12").exists());
        // A killed build's staged files in the cache go too; the manifest stays.
        std::fs::create_dir_all(staging_dir(&out)).unwrap();
        std::fs::write(staging_dir(&out).join("7-99-x.json"), b"{}").unwrap();
        std::fs::write(manifest_path(&out), b"{}").unwrap();
        sweep_temporaries(&out).unwrap();
        assert!(!staging_dir(&out).exists());
        assert!(manifest_path(&out).exists());
    }
}
