//! `locref release VERSION`: after a clean check, record the published answers (facts, toggles, and the
//! other answers of `crate::derived::answers`) as a frozen snapshot (`sources/releases/<version>.index`,
//! naming each country's record under `sources/releases/records/`, of which it writes the ones no
//! earlier release wrote), add its row to `sources/releases/releases.csv` (version, time, blake3 of the
//! snapshot, its link in the chain of releases, note) and set `version` in `rules/site.toml`. A release
//! with no change since the last one is refused unless asked for (`--no-change`, with a note).
//! `locref release --undo` ([`undo`]) takes the last release back while its files are as it wrote them.
//!
//! One release at a time: a release holds the lock of the project's `sources/`
//! (`.locref-cache/sources.lock`) from before its check to its last write, and a second one is refused
//! while it does. It writes nothing unless the whole site checks clean and the version is new and
//! greater than every recorded one; it never writes over a file of an earlier release (a snapshot is
//! created, never replaced). Each file is written whole or not at all (a temporary file renamed or linked
//! into place). After writing it checks the project again; if that check or a write fails, it takes back
//! what it wrote, and only that: a file is restored (or the snapshot removed) only while it still holds
//! what this release wrote, so a change someone else made since is never undone.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::diagnostics::Diagnostic;
use crate::history::version::Version;
use crate::history::{
    REGISTER, REGISTER_COLUMNS, RELEASES_DIR, chain_digest, index_path, is_utc_time, record_path,
    releases, snapshot, snapshot_path,
};
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
    /// The answers other than facts and toggles it recorded.
    pub answers: usize,
    /// Changes since the previous release (`None` for the first release).
    pub changes: Option<usize>,
    /// The snapshot's index (project-relative) and the size in bytes of the snapshot it stands for.
    pub snapshot: String,
    pub snapshot_bytes: usize,
    /// The records this release wrote (project-relative) and their sizes: the countries whose state no
    /// earlier release recorded.
    pub new_records: Vec<(String, usize)>,
}

/// Why nothing was released.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReleaseError {
    /// The project does not check clean (the diagnostics of `locref check`).
    Invalid(Vec<Diagnostic>),
    /// The version or note is malformed.
    Usage(String),
    /// The version is taken or does not increase, the time is not after the last release, or the snapshot
    /// file exists.
    Refused(String),
    /// Another `locref release` is making a release of this project.
    Busy(String),
    Io(String),
    /// A write or the check after writing failed, and some of what was written could not be taken back
    /// (someone else changed it since, or restoring it failed): the message says what and why. Every
    /// other error means nothing was written.
    Unfinished(String),
}

/// The whole check of a build (rendering every output, holding no more of the site than a build).
fn check(db: &mut crate::db::Db) -> Result<(), ReleaseError> {
    match crate::build::Profile::OneOff
        .plan(&crate::locref_site::SITE)
        .check(db, |_| ())
    {
        Ok(_) => Ok(()),
        Err(crate::build::BuildError::Invalid(diagnostics)) => {
            Err(ReleaseError::Invalid(diagnostics))
        }
        Err(crate::build::BuildError::Io(e)) => Err(ReleaseError::Io(e.to_string())),
    }
}

/// The lock of the project's `sources/` (refused while another release or migration holds it), then
/// the project loaded and checked clean: what a release and a migration start from.
fn locked_and_checked(root: &Path) -> Result<(impl Sized, Project), ReleaseError> {
    let lock = match crate::outdir::lock_sources(root) {
        Ok(Some(lock)) => lock,
        Ok(None) => {
            return Err(ReleaseError::Busy(format!(
                "another locref release is making a release of this project (it holds {}): wait for it to finish, then check that the version is still the one to release",
                crate::outdir::sources_lock_path(root).display()
            )));
        }
        Err(e) => return Err(ReleaseError::Io(e.to_string())),
    };
    if let Some(interrupted) = interrupted(root) {
        return Err(ReleaseError::Refused(interrupted));
    }
    let mut project = Project::load(root, &crate::locref_site::SITE)
        .map_err(|e| ReleaseError::Io(e.to_string()))?;
    check(&mut project.db)?;
    Ok((lock, project))
}

/// Whether a release that records no change since the last one is made ([`release`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoChange {
    /// Refused: a release is made to publish a change.
    Refused,
    /// Made (`--no-change`): it needs a note saying why (a release that records more of each answer, or
    /// new check dates, changes nothing a reader sees).
    Allowed,
}

/// Records a release of the project at `root`, dated `released_at` (UTC, `2026-11-23T17:09:56Z`). A
/// release with no change since the last one is refused unless `no_change` allows it.
pub fn release(
    root: &Path,
    version: &str,
    note: &str,
    released_at: &str,
    no_change: NoChange,
) -> Result<Released, ReleaseError> {
    let parsed = Version::parse(version).map_err(ReleaseError::Usage)?;
    // As the register reads it back (its cells are trimmed): the chain is made of what is read.
    let note = note.trim();
    if no_change == NoChange::Allowed && note.is_empty() {
        return Err(ReleaseError::Usage(
            "--no-change needs a --note saying why a release that changes no answer is made".into(),
        ));
    }
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
    let (_lock, project) = locked_and_checked(root)?;
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
        // Two releases in one second would share their date in the API and the feeds.
        if released_at <= last.released_at.as_str() {
            return Err(ReleaseError::Refused(format!(
                "the release time {released_at} is not after the last release ({} at {}): releases are dated to the second, one a second at most",
                last.version, last.released_at
            )));
        }
    }
    let index_rel = index_path(version);
    for taken in [snapshot_path(version), index_rel.clone()] {
        if root.join(&taken).exists() {
            return Err(ReleaseError::Refused(format!(
                "{taken} exists; a release never writes over a snapshot"
            )));
        }
    }
    let text = crate::history::current_snapshot_text(db);
    let digest = blake3::hash(text.as_bytes()).to_hex().to_string();
    let stored = Stored::of(&text)?;
    let chain = chain_digest(
        previous.map(|p| p.chain_blake3.as_str()),
        version,
        released_at,
        &digest,
        note,
    );
    let count = |start: &str| text.lines().filter(|l| l.starts_with(start)).count();
    let (countries, facts, answers) = (
        count("{\"country\""),
        count("{\"id\""),
        count("{\"answer\""),
    );
    let changes = previous.map(|_| crate::history::unreleased_counts(db).total() as usize);
    if let (Some(last), Some(0), NoChange::Refused) = (previous, changes, no_change) {
        let same = digest == last.snapshot_blake3;
        return Err(ReleaseError::Refused(format!(
            "no change since {}: {}; to make a release that changes no answer anyway, give --no-change with a --note saying why",
            last.version,
            if same {
                "the release would record what it recorded"
            } else {
                "the release would record only what is not a change (check dates, or kinds of answer the last release did not record)"
            }
        )));
    }
    let previous = previous.map(|p| p.version.clone());

    let register_file = root.join(REGISTER);
    let site_file = root.join(SITE);
    let old_register = read_optional(&register_file)?;
    let old_site = std::fs::read(&site_file).map_err(|e| io_error(&site_file, e))?;
    let new_register = with_row(
        old_register.as_deref(),
        &[version, released_at, &digest, &chain, note],
    )?;
    let old_site_text = std::str::from_utf8(&old_site)
        .map_err(|_| ReleaseError::Io(format!("{SITE} is not UTF-8")))?;
    let new_site = with_version(old_site_text, version)?;

    // Every file this release writes goes through the journal, which can take back exactly that.
    let new_records = stored.new_records(root);
    let mut journal = Journal::on_disk(root, &format!("release {version}"));
    let written = stored
        .write(root, version, &mut journal)
        .and_then(|()| {
            journal.replace(
                &register_file,
                old_register.as_deref(),
                new_register.as_bytes(),
            )
        })
        .and_then(|()| journal.replace(&site_file, Some(&old_site), new_site.as_bytes()));
    // The project with its new release must check clean (the snapshot reads back, its hash matches, the
    // chain follows, the version increases): otherwise nothing of it stays.
    let checked = written.and_then(|()| {
        let mut after = Project::load(root, &crate::locref_site::SITE)
            .map_err(|e| ReleaseError::Io(e.to_string()))?;
        check(&mut after.db)
    });
    if let Err(e) = checked {
        return Err(journal.undo(root, e));
    }
    journal.close();
    Ok(Released {
        version: version.to_string(),
        released_at: released_at.to_string(),
        previous,
        countries,
        facts,
        answers,
        changes,
        snapshot: index_rel,
        snapshot_bytes: text.len(),
        new_records,
    })
}

/// A snapshot as the releases store it: an index naming each country's record, and the records (the
/// format is described in `sources/README.md`, "releases/").
struct Stored<'t> {
    index: String,
    records: Vec<(String, &'t str)>,
}

impl<'t> Stored<'t> {
    /// The index and records of a snapshot's text (as [`crate::history::snapshot::write`] writes it).
    fn of(text: &'t str) -> Result<Stored<'t>, ReleaseError> {
        let records = snapshot::split_records(text).ok_or_else(|| {
            ReleaseError::Io("the snapshot does not start with a country's line".into())
        })?;
        let index = snapshot::write_index(records.iter().map(|(code, r)| (code.as_str(), *r)));
        Ok(Stored {
            index,
            records: records
                .into_iter()
                .map(|(_, record)| (snapshot::record_name(record), record))
                .collect(),
        })
    }

    /// The records no earlier release wrote (a record is named by its text, so one that exists holds
    /// the same text).
    fn new_records(&self, root: &Path) -> Vec<(String, usize)> {
        self.records
            .iter()
            .filter(|(name, _)| !root.join(record_path(name)).exists())
            .map(|(name, record)| (record_path(name), record.len()))
            .collect()
    }

    /// Writes the records that do not exist yet, then the index of release `version`, through `journal`.
    fn write(&self, root: &Path, version: &str, journal: &mut Journal) -> Result<(), ReleaseError> {
        for (name, record) in &self.records {
            let path = root.join(record_path(name));
            match std::fs::read(&path) {
                // With CRLF line ends (a Windows checkout) it reads as the same text, as `check` reads it.
                Ok(bytes) if lf_text(&bytes) == record.as_bytes() => continue,
                Ok(_) => {
                    return Err(ReleaseError::Refused(format!(
                        "{} does not hold the text its name is the blake3 of: restore it from version control",
                        record_path(name)
                    )));
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    journal.create(&path, record.as_bytes())?;
                }
                Err(e) => return Err(io_error(&path, e)),
            }
        }
        journal.create(&root.join(index_path(version)), self.index.as_bytes())
    }
}

/// What `locref migrate-releases` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migrated {
    /// The releases whose whole snapshot was replaced by an index and records, oldest first.
    pub releases: Vec<String>,
    /// Bytes of the whole snapshots removed, and of the indexes and new records written.
    pub bytes_before: u64,
    pub bytes_after: u64,
}

/// Stores every release of the project at `root` that is stored whole (`<version>.jsonl`) as an index
/// and records, and removes the whole snapshot. Each snapshot must have its recorded blake3, and the
/// records put end to end must be its text again (so the recorded hash and chain stay true and every
/// change derived from it is the same). Like a release: under the lock of `sources/`, only after a
/// clean check, checked again after writing, and taken back whole on any failure.
pub fn migrate_releases(root: &Path) -> Result<Migrated, ReleaseError> {
    let (_lock, project) = locked_and_checked(root)?;
    let mut journal = Journal::on_disk(root, "migrate-releases");
    let mut migrated = Migrated {
        releases: Vec::new(),
        bytes_before: 0,
        bytes_after: 0,
    };
    let result = (|| {
        for row in releases(&project.db) {
            let whole = root.join(snapshot_path(&row.version));
            let Some(bytes) = read_optional(&whole)? else {
                continue;
            };
            let text = lf_text(&bytes);
            let text = std::str::from_utf8(&text)
                .map_err(|_| ReleaseError::Io(format!("{} is not UTF-8", whole.display())))?;
            let stored = Stored::of(text)?;
            let joined: String = stored.records.iter().map(|(_, r)| *r).collect();
            if blake3::hash(joined.as_bytes()).to_hex().as_str() != row.snapshot_blake3 {
                return Err(ReleaseError::Refused(format!(
                    "the records of {} would not put back its recorded text",
                    snapshot_path(&row.version)
                )));
            }
            migrated.bytes_after += stored.index.len() as u64
                + stored
                    .new_records(root)
                    .iter()
                    .map(|(_, len)| *len as u64)
                    .sum::<u64>();
            migrated.bytes_before += bytes.len() as u64;
            stored.write(root, &row.version, &mut journal)?;
            journal.remove(&whole, &bytes)?;
            migrated.releases.push(row.version.clone());
        }
        let mut after = Project::load(root, &crate::locref_site::SITE)
            .map_err(|e| ReleaseError::Io(e.to_string()))?;
        check(&mut after.db)
    })();
    match result {
        Ok(()) => {
            journal.close();
            Ok(migrated)
        }
        Err(e) => Err(journal.undo(root, e)),
    }
}

/// What `locref release --undo` took back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undone {
    /// The release taken back, and the one that is now the last.
    pub version: String,
    pub previous: String,
    /// The files removed (its snapshot, then the records no other release names) and replaced (the
    /// register and `rules/site.toml`), project-relative.
    pub removed: Vec<String>,
    pub replaced: Vec<String>,
}

/// Takes back the last release of the project at `root` (`locref release --undo`): removes its snapshot
/// (its index, or the snapshot stored whole) and the records no other release names, its row of the
/// register, and sets `version` in `rules/site.toml` back to the release before it, so the sources are
/// as they were before it was made (the edits made since stay). Like a release: under the lock of
/// `sources/`, only after a clean check, every write journaled (a kill half way is taken back by
/// `locref recover`), checked again after and taken back whole on any failure.
///
/// Refused, writing nothing, when there is no release, when the release is the first (what
/// `site.toml` held before it is not recorded), when `site.toml` no longer names it (changed since),
/// or when its register row is not as `locref release` writes it.
pub fn undo(root: &Path) -> Result<Undone, ReleaseError> {
    let (_lock, project) = locked_and_checked(root)?;
    let db = &project.db;
    let rows = releases(db);
    let Some(last) = rows.last() else {
        return Err(ReleaseError::Refused(format!(
            "there is no release to take back ({REGISTER} records none)"
        )));
    };
    let version = last.version.clone();
    let Some(previous) = rows.len().checked_sub(2).map(|at| rows[at].clone()) else {
        return Err(ReleaseError::Refused(format!(
            "release `{version}` is the first release: the version {SITE} held before it is not recorded, so locref cannot put it back (remove {RELEASES_DIR}/ and set the version by hand, or restore them from version control)"
        )));
    };
    let site_file = root.join(SITE);
    let old_site = std::fs::read(&site_file).map_err(|e| io_error(&site_file, e))?;
    let old_site_text = std::str::from_utf8(&old_site)
        .map_err(|_| ReleaseError::Io(format!("{SITE} is not UTF-8")))?;
    let site_version = &crate::parse::rules::site_rules(db).value.version;
    if *site_version != version {
        return Err(ReleaseError::Refused(format!(
            "{SITE} names version `{site_version}`, not the last release `{version}`: it was changed since that release, so the release is not taken back (set it back to `{version}` first if that change is to go)"
        )));
    }
    let new_site = with_version(old_site_text, &previous.version)?;
    // The register before the release: without its last row, exactly as the release appended it.
    let register_file = root.join(REGISTER);
    let old_register = std::fs::read(&register_file).map_err(|e| io_error(&register_file, e))?;
    let row = csv_row(&[
        &last.version,
        &last.released_at,
        &last.snapshot_blake3,
        &last.chain_blake3,
        &last.note,
    ])?;
    let Some(new_register) = old_register.strip_suffix(row.as_bytes()) else {
        return Err(ReleaseError::Refused(format!(
            "the last row of {REGISTER} is not written as `locref release` writes it (edited by hand, or another line end): take the release back by hand"
        )));
    };
    // The snapshot of the release, and the records no other release names.
    let key = crate::history::ReleaseKey::new(db, version.clone());
    let snapshot_file = match crate::history::snapshot_index(db, key) {
        Some(_) => index_path(&version),
        None => snapshot_path(&version),
    };
    let named_elsewhere: std::collections::BTreeSet<&str> = rows[..rows.len() - 1]
        .iter()
        .filter_map(|r| {
            crate::history::snapshot_index(
                db,
                crate::history::ReleaseKey::new(db, r.version.clone()),
            )
            .as_ref()
        })
        .flat_map(|index| index.value.iter().map(|e| e.record.as_str()))
        .collect();
    let mut records: Vec<String> = crate::history::snapshot_index(db, key)
        .as_ref()
        .map(|index| {
            index
                .value
                .iter()
                .filter(|e| !named_elsewhere.contains(e.record.as_str()))
                .map(|e| record_path(&e.record))
                .collect()
        })
        .unwrap_or_default();
    records.sort();
    records.dedup();

    let mut journal = Journal::on_disk(root, "release --undo");
    let mut removed = Vec::new();
    let result = (|| {
        journal.replace(&register_file, Some(&old_register), new_register)?;
        journal.replace(&site_file, Some(&old_site), new_site.as_bytes())?;
        for rel in std::iter::once(&snapshot_file).chain(&records) {
            let path = root.join(rel);
            let bytes = std::fs::read(&path).map_err(|e| io_error(&path, e))?;
            journal.remove(&path, &bytes)?;
            removed.push(rel.clone());
        }
        let mut after = Project::load(root, &crate::locref_site::SITE)
            .map_err(|e| ReleaseError::Io(e.to_string()))?;
        check(&mut after.db)
    })();
    match result {
        Ok(()) => {
            journal.close();
            Ok(Undone {
                version,
                previous: previous.version,
                removed,
                replaced: vec![REGISTER.to_string(), SITE.to_string()],
            })
        }
        Err(e) => Err(journal.undo(root, e)),
    }
}

/// What `locref recover` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovered {
    /// The command that was interrupted (`release 2026.12.02-1`), or `None` when there was none.
    pub command: Option<String>,
    /// The files put back as they were before it (project-relative).
    pub restored: Vec<String>,
}

/// Takes back what an interrupted release or migration wrote, from its journal (see [`Journal`]),
/// newest first: a file that holds what the command wrote gets back what it held before (or is removed,
/// if the command created it; or made again, if it removed it). A file that holds neither is someone
/// else's change since, and is left as it is: the error names it, and the journal stays.
pub fn recover(root: &Path) -> Result<Recovered, ReleaseError> {
    let lock = match crate::outdir::lock_sources(root) {
        Ok(Some(lock)) => lock,
        Ok(None) => {
            return Err(ReleaseError::Busy(
                "another locref release is making a release of this project: it is not interrupted"
                    .into(),
            ));
        }
        Err(e) => return Err(ReleaseError::Io(e.to_string())),
    };
    let path = journal_path(root);
    let Some(bytes) = read_optional(&path)? else {
        return Ok(Recovered {
            command: None,
            restored: Vec::new(),
        });
    };
    let journal: JournalFile = serde_json::from_slice(&bytes)
        .map_err(|e| ReleaseError::Io(format!("{} cannot be read: {e}", path.display())))?;
    let mut restored = Vec::new();
    let mut left = Vec::new();
    for planned in journal.writes.iter().rev() {
        let file = root.join(&planned.path);
        let now = read_optional(&file)?;
        let now_hash = now
            .as_deref()
            .map(|bytes| blake3::hash(bytes).to_hex().to_string());
        let before = planned.before.as_deref().map(str::as_bytes);
        if now.as_deref() == before {
            continue;
        }
        if now_hash != planned.written {
            left.push(planned.path.clone());
            continue;
        }
        match before {
            Some(bytes) => replace(&file, bytes)?,
            None => std::fs::remove_file(&file).map_err(|e| io_error(&file, e))?,
        }
        restored.push(planned.path.clone());
    }
    if !left.is_empty() {
        return Err(ReleaseError::Unfinished(format!(
            "`locref {}` was interrupted, and these files changed since it wrote them, so they are left as they are: {} (the journal {} stays)",
            journal.command,
            left.join(", "),
            path.display()
        )));
    }
    std::fs::remove_file(&path).map_err(|e| io_error(&path, e))?;
    drop(lock);
    Ok(Recovered {
        command: Some(journal.command),
        restored,
    })
}

/// A file a release wrote: what it held before (`None`: it did not exist) and the blake3 of what the
/// release wrote in its place.
#[derive(Debug)]
struct Wrote {
    path: PathBuf,
    before: Option<Vec<u8>>,
    /// The blake3 of what the release wrote; `None`: it removed the file.
    written: Option<blake3::Hash>,
}

/// The files a release has written so far, oldest first: what [`Journal::undo`] takes back.
///
/// A journal of a command ([`Journal::on_disk`]) is also kept on disk, in `.locref-cache/sources.journal`:
/// each write is added to it (what the file held before, the blake3 of what goes in its place) before
/// the write is made, and the file is removed once the command is done, or taken back. A command killed
/// half way leaves it, and `locref recover` takes back what it names ([`recover`]); until then every
/// command that reads the sources refuses, naming that command.
#[derive(Debug, Default)]
struct Journal {
    wrote: Vec<Wrote>,
    /// The project root, the command, and the writes planned so far, when kept on disk.
    disk: Option<(PathBuf, String, Vec<Planned>)>,
}

/// One write as the journal on disk names it: the project-relative path, what the file held before
/// (`None`: no file), and the blake3 of what is written in its place (`None`: the file is removed).
#[derive(Debug, Clone, serde::Serialize, Deserialize)]
struct Planned {
    path: String,
    before: Option<String>,
    written: Option<String>,
}

/// The journal file on disk (see [`Journal`]).
#[derive(Debug, serde::Serialize, Deserialize)]
struct JournalFile {
    command: String,
    writes: Vec<Planned>,
}

/// Where a project's journal is kept: beside the lock of its `sources/`.
pub fn journal_path(root: &Path) -> PathBuf {
    crate::outdir::sources_lock_path(root).with_extension("journal")
}

/// Why the project's sources cannot be read as they are: a release or migration was killed half way
/// and left its journal. The message names the one command that takes it back.
pub fn interrupted(root: &Path) -> Option<String> {
    let path = journal_path(root);
    let text = std::fs::read_to_string(&path).ok()?;
    let command = serde_json::from_str::<JournalFile>(&text)
        .map(|j| j.command)
        .unwrap_or_else(|_| "release".into());
    Some(format!(
        "`locref {command}` was interrupted half way (its journal {} remains): run `locref recover` to take back what it wrote, then run it again",
        path.display()
    ))
}

impl Journal {
    /// A journal kept on disk for `command` (see [`Journal`]).
    fn on_disk(root: &Path, command: &str) -> Journal {
        Journal {
            wrote: Vec::new(),
            disk: Some((root.to_path_buf(), command.to_string(), Vec::new())),
        }
    }

    /// Adds the write of `path` to the journal on disk before it is made.
    fn plan(
        &mut self,
        path: &Path,
        before: Option<&[u8]>,
        written: Option<&[u8]>,
    ) -> Result<(), ReleaseError> {
        let Some((root, command, planned)) = &mut self.disk else {
            return Ok(());
        };
        let text = |bytes: &[u8]| {
            String::from_utf8(bytes.to_vec())
                .map_err(|_| ReleaseError::Io(format!("{} is not UTF-8", path.display())))
        };
        planned.push(Planned {
            path: path
                .strip_prefix(&*root)
                .unwrap_or(path)
                .to_string_lossy()
                .into_owned(),
            before: before.map(text).transpose()?,
            written: written.map(|bytes| blake3::hash(bytes).to_hex().to_string()),
        });
        let file = JournalFile {
            command: command.clone(),
            writes: planned.clone(),
        };
        let journal = journal_path(root);
        if let Some(dir) = journal.parent() {
            std::fs::create_dir_all(dir).map_err(|e| io_error(dir, e))?;
        }
        let json = serde_json::to_vec(&file).map_err(|e| ReleaseError::Io(e.to_string()))?;
        replace(&journal, &json)
    }

    /// A write was made: the test's kill may come now.
    fn made(&self) {
        let count = self
            .disk
            .as_ref()
            .map_or(0, |(_, _, planned)| planned.len());
        crate::failpoint::exit_at(&count.to_string());
    }

    /// The command is done (or taken back whole): its journal on disk goes.
    fn close(&self) {
        if let Some((root, _, _)) = &self.disk {
            crate::failpoint::exit_at("end");
            let _ = std::fs::remove_file(journal_path(root));
        }
    }

    /// Creates `path` with `bytes`, never over a file ([`create_new`]).
    fn create(&mut self, path: &Path, bytes: &[u8]) -> Result<(), ReleaseError> {
        self.plan(path, None, Some(bytes))?;
        create_new(path, bytes)?;
        self.made();
        self.wrote.push(Wrote {
            path: path.to_path_buf(),
            before: None,
            written: Some(blake3::hash(bytes)),
        });
        Ok(())
    }

    /// Removes `path`, which must still hold `before`.
    fn remove(&mut self, path: &Path, before: &[u8]) -> Result<(), ReleaseError> {
        if read_optional(path)?.as_deref() != Some(before) {
            return Err(ReleaseError::Io(format!(
                "{} changed while the release was being made",
                path.display()
            )));
        }
        self.plan(path, Some(before), None)?;
        std::fs::remove_file(path).map_err(|e| io_error(path, e))?;
        self.made();
        self.wrote.push(Wrote {
            path: path.to_path_buf(),
            before: Some(before.to_vec()),
            written: None,
        });
        Ok(())
    }

    /// Replaces `path`, which must still hold `before` (what the release read and wrote its new text
    /// from; `None`: no file), with `bytes` in one step.
    fn replace(
        &mut self,
        path: &Path,
        before: Option<&[u8]>,
        bytes: &[u8],
    ) -> Result<(), ReleaseError> {
        if read_optional(path)?.as_deref() != before {
            return Err(ReleaseError::Io(format!(
                "{} changed while the release was being made",
                path.display()
            )));
        }
        self.plan(path, before, Some(bytes))?;
        replace(path, bytes)?;
        self.made();
        self.wrote.push(Wrote {
            path: path.to_path_buf(),
            before: before.map(<[u8]>::to_vec),
            written: Some(blake3::hash(bytes)),
        });
        Ok(())
    }

    /// Takes back what was written, newest first, after `cause`: a file that still holds what this
    /// release wrote gets back what it held before (or is removed, if this release created it). A file
    /// that holds anything else was changed by someone else since, and is left as it is: the error then
    /// says so ([`ReleaseError::Unfinished`]); otherwise it is `cause`, and nothing was written.
    fn undo(self, root: &Path, cause: ReleaseError) -> ReleaseError {
        let disk = self.disk.is_some();
        let error = self.undo_writes(root, cause);
        // Taken back whole: nothing is left for `locref recover`.
        if disk && !matches!(error, ReleaseError::Unfinished(_)) {
            let _ = std::fs::remove_file(journal_path(root));
        }
        error
    }

    fn undo_writes(self, root: &Path, cause: ReleaseError) -> ReleaseError {
        let mut left = Vec::new();
        for wrote in self.wrote.into_iter().rev() {
            let name = wrote
                .path
                .strip_prefix(root)
                .unwrap_or(&wrote.path)
                .display()
                .to_string();
            let now = match std::fs::read(&wrote.path) {
                Ok(bytes) => Some(bytes),
                Err(e) if e.kind() == io::ErrorKind::NotFound => None,
                Err(e) => {
                    left.push(format!("{name} (it could not be read back: {e})"));
                    continue;
                }
            };
            if now.as_deref().map(blake3::hash) != wrote.written {
                left.push(format!(
                    "{name} (changed by someone else since this release wrote it)"
                ));
                continue;
            }
            let restored = match &wrote.before {
                Some(bytes) => replace(&wrote.path, bytes),
                None => std::fs::remove_file(&wrote.path).map_err(|e| io_error(&wrote.path, e)),
            };
            if let Err(e) = restored {
                left.push(format!(
                    "{name} (it could not be restored: {})",
                    message(&e)
                ));
            }
        }
        if left.is_empty() {
            return cause;
        }
        let cause = match &cause {
            ReleaseError::Invalid(diagnostics) => format!(
                "the project did not check clean with the release written ({} error(s); the first: {})",
                diagnostics.len(),
                diagnostics
                    .first()
                    .map(ToString::to_string)
                    .unwrap_or_default()
            ),
            other => message(other),
        };
        ReleaseError::Unfinished(format!(
            "{cause}; what the release wrote was taken back but for: {}",
            left.join(", ")
        ))
    }
}

/// The text of an error that carries one.
fn message(error: &ReleaseError) -> String {
    match error {
        ReleaseError::Invalid(diagnostics) => format!("{} error(s)", diagnostics.len()),
        ReleaseError::Usage(m)
        | ReleaseError::Refused(m)
        | ReleaseError::Busy(m)
        | ReleaseError::Io(m)
        | ReleaseError::Unfinished(m) => m.clone(),
    }
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

/// `bytes` as `check` reads them: CRLF and CR line ends as LF (a file checked out on Windows).
fn lf_text(bytes: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if !bytes.contains(&b'\r') {
        return std::borrow::Cow::Borrowed(bytes);
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\r' if bytes.get(i + 1) == Some(&b'\n') => {}
            b'\r' => out.push(b'\n'),
            b => out.push(b),
        }
        i += 1;
    }
    std::borrow::Cow::Owned(out)
}

/// The temporary name beside `path` (a dot file: never an input). One name, not one per process: only
/// the release that holds the lock of `sources/` writes it, and a killed release's is written over by
/// the next.
fn temporary(path: &Path) -> PathBuf {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    path.with_file_name(format!(".{name}.locref-release.tmp"))
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
    text.push_str(&csv_row(cells)?);
    Ok(text)
}

/// One row of the register as [`with_row`] writes it (its line end included).
fn csv_row(cells: &[&str]) -> Result<String, ReleaseError> {
    let mut writer = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    writer
        .write_record(cells)
        .map_err(|e| ReleaseError::Io(e.to_string()))?;
    let row = writer
        .into_inner()
        .map_err(|e| ReleaseError::Io(e.to_string()))?;
    Ok(String::from_utf8_lossy(&row).into_owned())
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
            &[
                "1",
                "2026-11-23T00:00:00Z",
                "ab",
                "ef",
                "a note, \"quoted\"",
            ],
        )
        .unwrap();
        assert_eq!(
            first,
            "version,released_at,snapshot_blake3,chain_blake3,note\n1,2026-11-23T00:00:00Z,ab,ef,\"a note, \"\"quoted\"\"\"\n"
        );
        let second = with_row(
            Some(first.trim_end().as_bytes()),
            &["2", "t", "cd", "gh", ""],
        )
        .unwrap();
        assert!(second.ends_with("\"\n2,t,cd,gh,\n"), "{second}");
    }

    /// Files a journal wrote: a snapshot it created, and a register and a site file it replaced.
    fn written(dir: &Path) -> Journal {
        let mut journal = Journal::default();
        std::fs::write(dir.join("register"), "old register").unwrap();
        std::fs::write(dir.join("site"), "old site").unwrap();
        journal.create(&dir.join("snapshot"), b"snapshot").unwrap();
        journal
            .replace(
                &dir.join("register"),
                Some(b"old register"),
                b"new register",
            )
            .unwrap();
        journal
            .replace(&dir.join("site"), Some(b"old site"), b"new site")
            .unwrap();
        journal
    }

    fn cause() -> ReleaseError {
        ReleaseError::Io("rules/site.toml: no space left".into())
    }

    #[test]
    fn undo_takes_back_what_was_written() {
        let dir = tempfile::tempdir().unwrap();
        let journal = written(dir.path());
        assert_eq!(journal.undo(dir.path(), cause()), cause());
        assert!(!dir.path().join("snapshot").exists());
        assert_eq!(
            std::fs::read(dir.path().join("register")).unwrap(),
            b"old register"
        );
        assert_eq!(std::fs::read(dir.path().join("site")).unwrap(), b"old site");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 2, "no temporary file is left: {left:?}");
    }

    #[test]
    fn undo_leaves_alone_what_someone_else_changed_since() {
        let dir = tempfile::tempdir().unwrap();
        let journal = written(dir.path());
        // Another writer replaced the snapshot and edited the register after the release wrote them.
        std::fs::write(dir.path().join("snapshot"), "theirs").unwrap();
        std::fs::write(dir.path().join("register"), "their register").unwrap();
        let error = journal.undo(dir.path(), cause());
        let ReleaseError::Unfinished(message) = error else {
            panic!("{error:?}");
        };
        assert_eq!(
            message,
            "rules/site.toml: no space left; what the release wrote was taken back but for: register (changed by someone else since this release wrote it), snapshot (changed by someone else since this release wrote it)"
        );
        assert_eq!(
            std::fs::read(dir.path().join("snapshot")).unwrap(),
            b"theirs"
        );
        assert_eq!(
            std::fs::read(dir.path().join("register")).unwrap(),
            b"their register"
        );
        // What still held the release's bytes was taken back.
        assert_eq!(std::fs::read(dir.path().join("site")).unwrap(), b"old site");
    }

    #[test]
    fn a_file_changed_before_it_is_replaced_is_not_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("register");
        std::fs::write(&path, "changed").unwrap();
        let mut journal = Journal::default();
        assert!(journal.replace(&path, Some(b"read"), b"new").is_err());
        assert!(journal.wrote.is_empty());
        assert_eq!(std::fs::read(&path).unwrap(), b"changed");
    }

    #[test]
    fn the_chain_stands_for_every_cell_and_the_row_before() {
        let first = chain_digest(None, "1", "2026-11-23T00:00:00Z", "ab", "note");
        assert_eq!(
            first,
            chain_digest(None, "1", "2026-11-23T00:00:00Z", "ab", "note")
        );
        assert_eq!(
            first,
            blake3::hash(b"\n1\n2026-11-23T00:00:00Z\nab\nnote\n")
                .to_hex()
                .to_string()
        );
        for other in [
            chain_digest(None, "2", "2026-11-23T00:00:00Z", "ab", "note"),
            chain_digest(None, "1", "2026-11-23T00:00:01Z", "ab", "note"),
            chain_digest(None, "1", "2026-11-23T00:00:00Z", "ac", "note"),
            chain_digest(None, "1", "2026-11-23T00:00:00Z", "ab", "notes"),
            chain_digest(Some(&first), "1", "2026-11-23T00:00:00Z", "ab", "note"),
        ] {
            assert_ne!(first, other);
        }
    }
}
