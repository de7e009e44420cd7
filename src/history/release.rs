//! `locref release VERSION`: after a clean check, record the published facts and toggles as a frozen
//! snapshot (`sources/releases/<version>.jsonl`), add its row to `sources/releases/releases.csv` (version,
//! time, blake3 of the snapshot, note) and set `version` in `rules/site.toml`.
//!
//! One release at a time: a release holds the lock of the project's `sources/`
//! (`.locref-cache/sources.lock`) from before its check to its last write, and a second one is refused
//! while it does. It writes nothing unless the whole site checks clean and the version is new and
//! greater than every recorded one; it never writes over a file of an earlier release (a snapshot is
//! created, never replaced). After writing it checks the project again and puts every file back if that
//! check fails.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::version::Version;
use super::{REGISTER, REGISTER_COLUMNS, is_utc_time, releases, snapshot_path};
use crate::diagnostics::Diagnostic;
use crate::parse::rules::SITE;
use crate::workspace::Project;

/// What a release wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Released {
    pub version: String,
    pub released_at: String,
    pub previous: Option<String>,
    pub countries: usize,
    pub facts: usize,
    /// Changes since the previous release (`None` for the first release).
    pub changes: Option<usize>,
    /// The snapshot (project-relative) and its size in bytes.
    pub snapshot: String,
    pub snapshot_bytes: usize,
}

/// Why nothing was released.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReleaseError {
    /// The project does not check clean (the diagnostics of `locref check`).
    Invalid(Vec<Diagnostic>),
    /// The version or note is malformed.
    Usage(String),
    /// The version is taken or does not increase, the time is before the last release, or the snapshot
    /// file exists.
    Refused(String),
    /// Another `locref release` is making a release of this project.
    Busy(String),
    Io(String),
}

/// The whole check of a build (rendering every output, holding no more of the site than a build).
fn check(db: &mut crate::db::Db) -> Result<(), ReleaseError> {
    match crate::build::build_streaming(db, |_| ()) {
        Ok(_) => Ok(()),
        Err(crate::build::BuildError::Invalid(diagnostics)) => {
            Err(ReleaseError::Invalid(diagnostics))
        }
        Err(crate::build::BuildError::Io(e)) => Err(ReleaseError::Io(e.to_string())),
    }
}

/// Records a release of the project at `root`, dated `released_at` (UTC, `2026-11-23T17:09:56Z`).
pub fn release(
    root: &Path,
    version: &str,
    note: &str,
    released_at: &str,
) -> Result<Released, ReleaseError> {
    let parsed = Version::parse(version).map_err(ReleaseError::Usage)?;
    if let Some(problem) = crate::parse::formula_problem(note) {
        return Err(ReleaseError::Usage(format!("--note: {problem}")));
    }
    if note.chars().any(char::is_control) {
        return Err(ReleaseError::Usage(
            "--note is one line of text without control characters".into(),
        ));
    }
    if !is_utc_time(released_at) {
        return Err(ReleaseError::Usage(format!(
            "the release time `{released_at}` is not a UTC time such as 2026-11-23T17:09:56Z"
        )));
    }
    // Held to the end of this function: the check below and the writes after it see no other release's.
    let _lock = match crate::outdir::lock_sources(root) {
        Ok(Some(lock)) => lock,
        Ok(None) => {
            return Err(ReleaseError::Busy(format!(
                "another locref release is making a release of this project (it holds {}): wait for it to finish, then check that the version is still the one to release",
                crate::outdir::sources_lock_path(root).display()
            )));
        }
        Err(e) => return Err(ReleaseError::Io(e.to_string())),
    };
    let mut project = Project::load(root).map_err(|e| ReleaseError::Io(e.to_string()))?;
    check(&mut project.db)?;
    let db = &project.db;
    let recorded = releases(db);
    for row in recorded {
        // Recorded versions are valid: the check passed.
        let Ok(other) = Version::parse(&row.version) else {
            continue;
        };
        if parsed.cmp_numbers(&other) == std::cmp::Ordering::Equal {
            return Err(ReleaseError::Refused(format!(
                "release `{}` is already recorded in {REGISTER}; a release is never made twice",
                row.version
            )));
        }
    }
    let previous = recorded.last();
    if let Some(last) = previous {
        if let Ok(last_version) = Version::parse(&last.version)
            && parsed.cmp_numbers(&last_version) != std::cmp::Ordering::Greater
        {
            return Err(ReleaseError::Refused(format!(
                "version `{version}` does not increase: the last release is `{}`",
                last.version
            )));
        }
        if released_at < last.released_at.as_str() {
            return Err(ReleaseError::Refused(format!(
                "the release time {released_at} is before the last release ({} at {})",
                last.version, last.released_at
            )));
        }
    }
    let snapshot_rel = snapshot_path(version);
    let snapshot_file = root.join(&snapshot_rel);
    if snapshot_file.exists() {
        return Err(ReleaseError::Refused(format!(
            "{snapshot_rel} exists; a release never writes over a snapshot"
        )));
    }
    let text = super::current_snapshot_text(db);
    let digest = blake3::hash(text.as_bytes()).to_hex().to_string();
    let countries = text
        .lines()
        .filter(|l| l.starts_with("{\"country\""))
        .count();
    let facts = text.lines().count() - countries;
    let changes = previous.map(|_| super::unreleased_counts(db).total() as usize);
    let previous = previous.map(|p| p.version.clone());

    // The files as they are, to put back if anything fails.
    let register_file = root.join(REGISTER);
    let site_file = root.join(SITE);
    let old_register = read_optional(&register_file)?;
    let old_site = std::fs::read_to_string(&site_file).map_err(|e| io_error(&site_file, e))?;
    let new_register = with_row(
        old_register.as_deref(),
        &[version, released_at, &digest, note],
    )?;
    let new_site = with_version(&old_site, version)?;

    let undo = |created: bool| {
        if created {
            let _ = std::fs::remove_file(&snapshot_file);
        }
        match &old_register {
            Some(bytes) => {
                let _ = replace(&register_file, bytes);
            }
            None => {
                let _ = std::fs::remove_file(&register_file);
            }
        }
        let _ = replace(&site_file, old_site.as_bytes());
    };
    create_new(&snapshot_file, text.as_bytes())?;
    let written = replace(&register_file, new_register.as_bytes())
        .and_then(|()| replace(&site_file, new_site.as_bytes()));
    if let Err(e) = written {
        undo(true);
        return Err(e);
    }
    // The project with its new release must check clean (the snapshot reads back, its hash matches, the
    // version increases): otherwise nothing of it stays.
    let after = Project::load(root).map_err(|e| ReleaseError::Io(e.to_string()));
    let check = after.and_then(|mut p| check(&mut p.db));
    if let Err(e) = check {
        undo(true);
        return Err(e);
    }
    Ok(Released {
        version: version.to_string(),
        released_at: released_at.to_string(),
        previous,
        countries,
        facts,
        changes,
        snapshot: snapshot_rel,
        snapshot_bytes: text.len(),
    })
}

fn io_error(path: &Path, e: io::Error) -> ReleaseError {
    ReleaseError::Io(format!("{}: {e}", path.display()))
}

fn read_optional(path: &Path) -> Result<Option<Vec<u8>>, ReleaseError> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_error(path, e)),
    }
}

/// A temporary name beside `path` (a dot file: never an input).
fn temporary(path: &Path) -> PathBuf {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    path.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

fn write_temporary(path: &Path, bytes: &[u8]) -> Result<PathBuf, ReleaseError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io_error(dir, e))?;
    }
    let tmp = temporary(path);
    let result = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(io_error(&tmp, e));
    }
    Ok(tmp)
}

/// Creates `path` with `bytes`, whole or not at all, and never over an existing file: a complete
/// temporary file is linked to its name (which fails if the name exists); where the file system has no
/// hard links, the file is created exclusively and written.
fn create_new(path: &Path, bytes: &[u8]) -> Result<(), ReleaseError> {
    let exists = || {
        ReleaseError::Refused(format!(
            "{} exists; a release never writes over a snapshot",
            path.display()
        ))
    };
    let tmp = write_temporary(path, bytes)?;
    let linked = std::fs::hard_link(&tmp, path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(exists()),
        Err(_) => {
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .map_err(|e| {
                    if e.kind() == io::ErrorKind::AlreadyExists {
                        exists()
                    } else {
                        io_error(path, e)
                    }
                })?;
            let written = file.write_all(bytes).and_then(|()| file.sync_all());
            written.map_err(|e| {
                let _ = std::fs::remove_file(path);
                io_error(path, e)
            })
        }
    }
}

/// Replaces `path` with `bytes` in one step (a temporary file renamed over it).
fn replace(path: &Path, bytes: &[u8]) -> Result<(), ReleaseError> {
    let tmp = write_temporary(path, bytes)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io_error(path, e)
    })
}

/// The register with one more row (and its header, when there was no register).
fn with_row(old: Option<&[u8]>, cells: &[&str]) -> Result<String, ReleaseError> {
    let mut text = match old {
        Some(bytes) => String::from_utf8(bytes.to_vec())
            .map_err(|_| ReleaseError::Io(format!("{REGISTER} is not UTF-8")))?,
        None => format!("{}\n", REGISTER_COLUMNS.join(",")),
    };
    if !text.ends_with('\n') {
        text.push('\n');
    }
    let mut writer = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    writer
        .write_record(cells)
        .map_err(|e| ReleaseError::Io(e.to_string()))?;
    let row = writer
        .into_inner()
        .map_err(|e| ReleaseError::Io(e.to_string()))?;
    text.push_str(&String::from_utf8_lossy(&row));
    Ok(text)
}

/// `rules/site.toml` with `version` set (only the value's text changes: comments and layout stay).
fn with_version(site: &str, version: &str) -> Result<String, ReleaseError> {
    #[derive(Deserialize)]
    struct VersionOnly {
        version: toml::Spanned<String>,
    }
    let parsed: VersionOnly =
        toml::from_str(site).map_err(|e| ReleaseError::Io(format!("{SITE}: {}", e.message())))?;
    let span = parsed.version.span();
    // A version is digits, dots and hyphens: a plain TOML string.
    Ok(format!(
        "{}\"{version}\"{}",
        &site[..span.start],
        &site[span.end..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_site_version_is_set_in_place() {
        let site = "# comment\ntitle = \"x\"\nversion = \"2026.10\" # bumped by locref release\n[api]\nversion = \"1\"\n";
        assert_eq!(
            with_version(site, "2026.11.23-1").unwrap(),
            "# comment\ntitle = \"x\"\nversion = \"2026.11.23-1\" # bumped by locref release\n[api]\nversion = \"1\"\n"
        );
    }

    #[test]
    fn a_row_is_appended_with_csv_quoting() {
        let first = with_row(
            None,
            &["1", "2026-11-23T00:00:00Z", "ab", "a note, \"quoted\""],
        )
        .unwrap();
        assert_eq!(
            first,
            "version,released_at,snapshot_blake3,note\n1,2026-11-23T00:00:00Z,ab,\"a note, \"\"quoted\"\"\"\n"
        );
        let second = with_row(Some(first.trim_end().as_bytes()), &["2", "t", "cd", ""]).unwrap();
        assert!(second.ends_with("\"\n2,t,cd,\n"), "{second}");
    }
}
