//! History: the releases recorded under `sources/releases/` and the changes between them.
//!
//! A release is a frozen snapshot of the published answers (facts, toggles, and the answers of
//! [`crate::derived::answers`]; [`snapshot`]), written by `locref
//! release` ([`release`]) and recorded in `sources/releases/releases.csv` with its version, its time, the
//! blake3 of its snapshot, its link in the chain of releases ([`chain_digest`]) and a note. Snapshots are
//! inputs like any source: the register and each snapshot are parsed and checked (a snapshot edited by
//! hand no longer has its recorded hash; a row rewritten with a recomputed hash breaks the chain), and the
//! build derives the change sets from them:
//!
//! ```text
//! releases.csv -> releases (valid, in version order) -> previous_release, release_time (per release)
//! <version>.index -> snapshot_index -> snapshot_record (per release and country)
//!   -> record_summary (per record: its country, fact count and problems; its facts are not kept)
//! <version>.jsonl (a release stored whole, before migration) -> snapshot_of
//! snapshot_country (not memoized: a record parsed again, or a whole snapshot's country borrowed)
//! release_country_changes (per release and country: the diff with the previous release's country)
//!   -> release_changes (per release)
//! country_facts + country_toggle_values + country_answers -> current_country_state (per country)
//!   -> unreleased_country_changes (the diff with the last release) -> unreleased_counts
//!   -> unreleased_erp_changes (per ERP)
//! release_country_changes -> released_country_history (per country) -> released_erp_history (per ERP)
//! country_history, erp_history: a History of the two parts, unreleased then released
//! ```
//!
//! So an edit of one fact re-runs that country's current state, its unreleased changes and its history
//! (and the lists built from them), never another country's; a new release adds its own diffs and leaves
//! every earlier release's alone. Facts, toggles and answers are read through the derive queries, never
//! derived again here.

pub mod diff;
pub mod snapshot;
pub mod version;

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use crate::api_types::Change;
use crate::db::{Workspace, lookup};
use crate::derived::answers::country_answers;
use crate::derived::facts::country_facts;
use crate::derived::toggles::country_toggle_values;
use crate::diagnostics::{Checked, Diagnostic};
use crate::model::{CountryKey, ErpKey, countries, country_info};
use crate::parse::csv_table::{Header, read_table};
use crate::parse::source_text;
use crate::parse::tables::{Located, Pos};
use diff::{Names, Published, diff_country};
use snapshot::{CountryState, IndexEntry, Snapshot};
use version::Version;

/// The folder of the releases.
pub(crate) const RELEASES_DIR: &str = "sources/releases";
/// The register of the releases, one row per release, oldest first.
pub const REGISTER: &str = "sources/releases/releases.csv";
pub(crate) const REGISTER_COLUMNS: &[&str] = &[
    "version",
    "released_at",
    "snapshot_blake3",
    "chain_blake3",
    "note",
];

/// The project path of a release's snapshot stored whole (the form before records; see
/// [`index_path`]).
pub(crate) fn snapshot_path(version: &str) -> String {
    format!("{RELEASES_DIR}/{version}.jsonl")
}

/// The project path of a release's index: a line a country, naming the record of its state.
pub(crate) fn index_path(version: &str) -> String {
    format!("{RELEASES_DIR}/{version}.index")
}

/// The folder of the records: each country's state as one or more releases recorded it, named by the
/// blake3 of its text, so a country that did not change between two releases is one file.
pub(crate) const RECORDS_DIR: &str = "sources/releases/records";

/// The project path of the record named `name`.
pub(crate) fn record_path(name: &str) -> String {
    format!("{RECORDS_DIR}/{name}.jsonl")
}

/// One row of the register.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReleaseRow {
    pub version: String,
    /// RFC 3339, UTC, to the second (`2026-11-23T17:09:56Z`).
    pub released_at: String,
    /// blake3 (hex) of the snapshot's text.
    pub snapshot_blake3: String,
    /// This release's link in the chain of releases: [`chain_digest`] of the row before it and this row.
    pub chain_blake3: String,
    pub note: String,
}

/// The chain value of a release: the blake3 (hex) of the `chain_blake3` of the release before it (nothing
/// for the first release) and this release's version, time, snapshot hash and note, each followed by a
/// line feed. So a release's chain stands for its own row and, through the row before it, for every
/// release before it: a snapshot edited after its release, with its hash recomputed in its row, no longer
/// follows from the chain the next release recorded.
pub(crate) fn chain_digest(
    previous_chain: Option<&str>,
    version: &str,
    released_at: &str,
    snapshot_blake3: &str,
    note: &str,
) -> String {
    let mut hasher = blake3::Hasher::new();
    for part in [
        previous_chain.unwrap_or(""),
        version,
        released_at,
        snapshot_blake3,
        note,
    ] {
        hasher.update(part.as_bytes());
        hasher.update(b"\n");
    }
    hasher.finalize().to_hex().to_string()
}

/// Whether `text` is a UTC time to the second as locref writes it (`2026-11-23T17:09:56Z`).
pub(crate) fn is_utc_time(text: &str) -> bool {
    text.len() == 20
        && text.ends_with('Z')
        && text
            .parse::<jiff::Timestamp>()
            .is_ok_and(|t| t.to_string() == text)
}

fn is_blake3_hex(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The register: its valid rows (in file order) and every problem. A row must have a well-formed
/// version greater than the row before it, a time not before the row before it, a blake3, and a
/// `chain_blake3` that follows from the row before it and its own cells ([`chain_digest`]). No register
/// means no release yet.
///
/// Each problem is reported where it is, once: a row's chain is checked only when the table reads
/// whole, the row has no other problem and the row before it is valid (a chain that does not follow
/// from a broken row says nothing more than that row's own problem).
#[salsa::tracked(returns(ref))]
pub fn release_register(db: &dyn salsa::Database) -> Checked<Vec<Located<ReleaseRow>>> {
    if lookup(db, REGISTER).is_none() {
        return Checked::new(Vec::new(), Vec::new());
    }
    let text = match source_text(db, REGISTER) {
        Ok(text) => text,
        Err(diagnostic) => return Checked::new(Vec::new(), vec![diagnostic]),
    };
    let (table, mut diagnostics) = read_table(REGISTER, text, Header::Exact(REGISTER_COLUMNS));
    let table_reads_whole = diagnostics.is_empty();
    let mut rows: Vec<Located<ReleaseRow>> = Vec::new();
    // The last valid row's version and time, and its line.
    let mut last: Option<(Version, String, u32)> = None;
    // The row just before (in the file): its recorded chain and line, when it was valid.
    let mut before_row: Option<(String, u32)> = None;
    let mut first_row = true;
    for row in &table.rows {
        let pos = Pos {
            path: REGISTER,
            line: row.line,
            columns: REGISTER_COLUMNS,
            cells: row.cells.iter().map(|c| (c.line, c.column)).collect(),
        };
        let cell = |i: usize| row.cells.get(i).map_or("", |c| c.text.as_str());
        let (version, released_at, hash, chain, note) =
            (cell(0), cell(1), cell(2), cell(3), cell(4));
        let before = diagnostics.len();
        let parsed = match Version::parse(version) {
            Ok(parsed) => Some(parsed),
            Err(problem) => {
                diagnostics.push(pos.error("version", problem));
                None
            }
        };
        if !is_utc_time(released_at) {
            diagnostics.push(pos.error(
                "released_at",
                format!("`released_at` is `{released_at}`; expected a UTC time such as 2026-11-23T17:09:56Z"),
            ));
        }
        for (column, value) in [("snapshot_blake3", hash), ("chain_blake3", chain)] {
            if !is_blake3_hex(value) {
                diagnostics.push(pos.error(
                    column,
                    format!(
                        "`{column}` is `{value}`; expected the 64 hex digits `locref release` wrote"
                    ),
                ));
            }
        }
        if let (Some(parsed), Some((previous, previous_time, line))) = (&parsed, &last) {
            match parsed.cmp_numbers(previous) {
                std::cmp::Ordering::Equal => diagnostics.push(pos.error(
                    "version",
                    format!(
                        "duplicate version `{version}`: line {line} records `{}`",
                        previous.text
                    ),
                )),
                std::cmp::Ordering::Less => diagnostics.push(pos.error(
                    "version",
                    format!(
                        "version `{version}` does not increase: the release before it (line {line}) is `{}`",
                        previous.text
                    ),
                )),
                std::cmp::Ordering::Greater => {}
            }
            if is_utc_time(released_at) && released_at < previous_time.as_str() {
                diagnostics.push(pos.error(
                    "released_at",
                    format!(
                        "released at {released_at}, before the release before it (line {line}, {previous_time})"
                    ),
                ));
            }
        }
        let follows = first_row || before_row.is_some();
        if table_reads_whole && diagnostics.len() == before && follows {
            let previous_chain = before_row.as_ref().map(|(chain, _)| chain.as_str());
            if chain_digest(previous_chain, version, released_at, hash, note) != chain {
                let message = match &before_row {
                    None => "`chain_blake3` does not follow from this row's cells: the first release was changed after it was made (its version, time, snapshot hash or note); restore releases.csv and the snapshots from version control".to_string(),
                    Some((_, line)) => format!(
                        "`chain_blake3` does not follow from line {line}'s chain and this row's cells: a release was changed after it was made (this row's version, time, snapshot hash or note, or line {line} rewritten with its snapshot hash and chain); restore releases.csv and the snapshots from version control"
                    ),
                };
                diagnostics.push(pos.error("chain_blake3", message));
            }
        }
        first_row = false;
        before_row = None;
        if diagnostics.len() == before
            && let Some(parsed) = parsed
        {
            last = Some((parsed, released_at.to_string(), row.line));
            before_row = Some((chain.to_string(), row.line));
            rows.push(Located {
                pos,
                row: std::sync::Arc::new(ReleaseRow {
                    version: version.to_string(),
                    released_at: released_at.to_string(),
                    snapshot_blake3: hash.to_string(),
                    chain_blake3: chain.to_string(),
                    note: note.to_string(),
                }),
            });
        }
    }
    Checked::new(rows, diagnostics)
}

/// Puts the register's diagnostics before those of the snapshots beside it, in a list otherwise sorted
/// by file: the register says which snapshots are releases and what each must hash to, so its problems
/// are the causes and come first.
pub(crate) fn register_first(sorted: &mut [Diagnostic]) {
    let prefix = format!("{RELEASES_DIR}/");
    let Some(start) = sorted.iter().position(|d| d.path.starts_with(&prefix)) else {
        return;
    };
    let len = sorted[start..]
        .iter()
        .take_while(|d| d.path.starts_with(&prefix))
        .count();
    // A stable sort: each file's diagnostics keep their order.
    sorted[start..start + len].sort_by_key(|d| d.path != REGISTER);
}

/// A release as a query key.
#[salsa::interned(debug)]
pub(crate) struct ReleaseKey<'db> {
    #[returns(ref)]
    pub version: String,
}

/// One country of one release as a query key.
#[salsa::interned(debug)]
pub(crate) struct ReleaseCountry<'db> {
    #[returns(ref)]
    pub version: String,
    #[returns(ref)]
    pub code: String,
}

/// The valid releases, oldest first (the register's order).
#[salsa::tracked(returns(ref))]
pub fn releases(db: &dyn salsa::Database) -> Vec<ReleaseRow> {
    release_register(db)
        .value
        .iter()
        .map(|r| ReleaseRow::clone(&r.row))
        .collect()
}

/// The release versions, oldest first: what the diffs chain along (a projection, so a note edited in the
/// register re-runs no diff).
#[salsa::tracked(returns(ref))]
pub fn release_versions(db: &dyn salsa::Database) -> Vec<String> {
    releases(db).iter().map(|r| r.version.clone()).collect()
}

/// The years releases were made in (the first four characters of their UTC times), newest first: the
/// archive pages of `/changes/`.
#[salsa::tracked(returns(ref))]
pub fn release_years(db: &dyn salsa::Database) -> Vec<String> {
    let mut years: Vec<String> = releases(db)
        .iter()
        .map(|r| release_year(&r.released_at).to_string())
        .collect();
    years.sort_unstable_by(|a, b| b.cmp(a));
    years.dedup();
    years
}

/// The year of a release's UTC time (`2026` of `2026-11-28T10:00:00Z`).
pub fn release_year(released_at: &str) -> &str {
    released_at.get(..4).unwrap_or(released_at)
}

/// The newest release, if any.
#[salsa::tracked(returns(ref))]
pub fn last_release(db: &dyn salsa::Database) -> Option<String> {
    release_versions(db).last().cloned()
}

/// The release before `key`, if any.
#[salsa::tracked(returns(ref))]
pub fn previous_release<'db>(db: &'db dyn salsa::Database, key: ReleaseKey<'db>) -> Option<String> {
    let versions = release_versions(db);
    let at = versions.iter().position(|v| v == key.version(db))?;
    at.checked_sub(1).map(|i| versions[i].clone())
}

/// When `key` was released.
#[salsa::tracked(returns(ref))]
pub fn release_time<'db>(db: &'db dyn salsa::Database, key: ReleaseKey<'db>) -> Option<String> {
    releases(db)
        .iter()
        .find(|r| &r.version == key.version(db))
        .map(|r| r.released_at.clone())
}

/// The files under `sources/releases/` (a projection of the file list).
#[salsa::tracked(returns(ref))]
pub fn release_files(db: &dyn salsa::Database) -> Vec<String> {
    let prefix = format!("{RELEASES_DIR}/");
    Workspace::get(db)
        .files(db)
        .keys()
        .filter(|p| p.starts_with(&prefix))
        .cloned()
        .collect()
}

/// A record as a query key: its name.
#[salsa::interned(debug)]
pub(crate) struct RecordKey<'db> {
    #[returns(ref)]
    pub name: String,
}

/// A release's index, parsed; `None` for a release stored whole (no index file).
#[salsa::tracked(returns(ref))]
pub fn snapshot_index<'db>(
    db: &'db dyn salsa::Database,
    key: ReleaseKey<'db>,
) -> Option<Checked<Vec<IndexEntry>>> {
    let path = index_path(key.version(db));
    lookup(db, &path)?;
    Some(match source_text(db, &path) {
        Ok(text) => {
            let (entries, diagnostics) = snapshot::parse_index(&path, text);
            Checked::new(entries, diagnostics)
        }
        Err(diagnostic) => Checked::new(Vec::new(), vec![diagnostic]),
    })
}

/// What the check and the release list need of one record: the country it holds and how many facts,
/// with its problems. Memoized per record, so a record is checked once however many releases name it;
/// its facts are not kept (see [`record_state`]).
#[salsa::tracked(returns(ref))]
pub fn record_summary<'db>(
    db: &'db dyn salsa::Database,
    key: RecordKey<'db>,
) -> Checked<Option<(String, usize)>> {
    let Checked { value, diagnostics } = record_state(db, key.name(db));
    Checked::new(
        value.map(|(code, state)| (code, state.facts.len())),
        diagnostics,
    )
}

/// One record, parsed and checked: named by the blake3 of its text, holding one country's line and its
/// facts. `None` (with no problem: the index that names it reports that) when the file is missing.
///
/// Not memoized: a record's facts are read by the diff of the release that wrote it, of the next
/// release that changed its country, and of the unreleased changes, each memoized itself. Kept, every
/// record a history ever wrote stayed in memory for the whole build (27.5 MiB of a 150 MB heap peak at
/// x10 with 150 more releases).
fn record_state(db: &dyn salsa::Database, name: &str) -> Checked<Option<(String, CountryState)>> {
    let path = record_path(name);
    if lookup(db, &path).is_none() {
        return Checked::new(None, Vec::new());
    }
    let text = match source_text(db, &path) {
        Ok(text) => text,
        Err(diagnostic) => return Checked::new(None, vec![diagnostic]),
    };
    let mut diagnostics = Vec::new();
    let digest = snapshot::record_name(text);
    if digest != name {
        diagnostics.push(Diagnostic::file(
            &path,
            format!(
                "this record was changed after it was written: its blake3 is {digest}, not its name; a record is frozen (restore it from version control)"
            ),
        ));
    }
    let (snapshot, problems) = snapshot::parse(&path, text);
    diagnostics.extend(problems);
    if diagnostics.is_empty() && snapshot.len() != 1 {
        diagnostics.push(Diagnostic::file(
            &path,
            format!(
                "a record holds one country's line and its facts; this one holds {} countries",
                snapshot.len()
            ),
        ));
    }
    let value = if diagnostics.is_empty() {
        snapshot.into_iter().next()
    } else {
        None
    };
    Checked::new(value, diagnostics)
}

/// The name of the record a release's index gives for country `key`; `None` for a release stored
/// whole or a country it did not record.
#[salsa::tracked(returns(ref))]
pub fn snapshot_record<'db>(
    db: &'db dyn salsa::Database,
    key: ReleaseCountry<'db>,
) -> Option<String> {
    let index = snapshot_index(db, ReleaseKey::new(db, key.version(db).clone())).as_ref()?;
    index
        .value
        .iter()
        .find(|e| e.code == *key.code(db))
        .map(|e| e.record.clone())
}

/// The snapshot of a release stored whole, parsed (only its own file is read). Empty for a release
/// stored as records (see [`snapshot_country`]).
#[salsa::tracked(returns(ref))]
pub fn snapshot_of<'db>(db: &'db dyn salsa::Database, key: ReleaseKey<'db>) -> Checked<Snapshot> {
    let path = snapshot_path(key.version(db));
    match source_text(db, &path) {
        Ok(text) => {
            let (snapshot, diagnostics) = snapshot::parse(&path, text);
            Checked::new(snapshot, diagnostics)
        }
        Err(diagnostic) => Checked::new(Snapshot::new(), vec![diagnostic]),
    }
}

/// blake3 (hex) of a snapshot's text, as `locref release` recorded it: of the whole file, or of the
/// records its index names put end to end (the same text). `None` if a file is missing.
#[salsa::tracked(returns(ref))]
pub fn snapshot_digest<'db>(db: &'db dyn salsa::Database, key: ReleaseKey<'db>) -> Option<String> {
    let Some(index) = snapshot_index(db, key) else {
        let text = source_text(db, &snapshot_path(key.version(db))).ok()?;
        return Some(blake3::hash(text.as_bytes()).to_hex().to_string());
    };
    // Put end to end first, then hashed in one call: fed a record (a few KB) at a time, blake3 compresses
    // each 64-byte block alone; given the whole text, it hashes many chunks at once with SIMD (about three
    // times faster, and a clean build hashes every release's whole text).
    let records: Vec<&str> = index
        .value
        .iter()
        .map(|entry| source_text(db, &record_path(&entry.record)).ok())
        .collect::<Option<_>>()?;
    Some(
        blake3::hash(records.concat().as_bytes())
            .to_hex()
            .to_string(),
    )
}

/// The countries a release recorded.
#[salsa::tracked(returns(ref))]
pub fn snapshot_codes<'db>(db: &'db dyn salsa::Database, key: ReleaseKey<'db>) -> Vec<String> {
    match snapshot_index(db, key) {
        Some(index) => index.value.iter().map(|e| e.code.clone()).collect(),
        None => snapshot_of(db, key).value.keys().cloned().collect(),
    }
}

/// How many countries and facts a release recorded.
#[salsa::tracked(returns(ref))]
pub fn snapshot_size<'db>(db: &'db dyn salsa::Database, key: ReleaseKey<'db>) -> (u64, u64) {
    let codes = snapshot_codes(db, key);
    let facts: usize = match snapshot_index(db, key) {
        // Counted from each record's summary: a release's size reads no record's facts.
        Some(index) => index
            .value
            .iter()
            .filter_map(|entry| {
                record_summary(db, RecordKey::new(db, entry.record.clone()))
                    .value
                    .as_ref()
                    .filter(|(code, _)| *code == entry.code)
                    .map(|(_, facts)| facts)
            })
            .sum(),
        None => snapshot_of(db, key)
            .value
            .values()
            .map(|state| state.facts.len())
            .sum(),
    };
    (codes.len() as u64, facts as u64)
}

/// One country as a release recorded it, for a diff: read from its record (parsed again, see
/// [`record_state`]) or borrowed from a snapshot stored whole.
pub(crate) fn snapshot_country<'db>(
    db: &'db dyn salsa::Database,
    key: ReleaseCountry<'db>,
) -> Option<Cow<'db, CountryState>> {
    let release = ReleaseKey::new(db, key.version(db).clone());
    if snapshot_index(db, release).is_some() {
        let name = snapshot_record(db, key).as_ref()?;
        return record_state(db, name)
            .value
            .filter(|(code, _)| code == key.code(db))
            .map(|(_, state)| Cow::Owned(state));
    }
    snapshot_of(db, release)
        .value
        .get(key.code(db))
        .map(Cow::Borrowed)
}

/// The costly part of [`check_releases`], each record checked and each release's text hashed, done from
/// the newest release back: a build's second thread runs this while the first runs the check from the
/// oldest, so the two meet in the middle (`build::streaming`). With 150 more releases, the check was
/// most of what made a build's wall time grow faster than its CPU time. Memoized (it returns nothing),
/// so a session's rebuild verifies it in one step, not each record and release again.
#[salsa::tracked]
pub fn check_releases_from_the_end(db: &dyn salsa::Database) {
    for row in release_register(db).value.iter().rev() {
        let key = ReleaseKey::new(db, row.row.version.clone());
        if let Some(index) = snapshot_index(db, key) {
            for entry in index.value.iter().rev() {
                record_summary(db, RecordKey::new(db, entry.record.clone()));
            }
        }
        snapshot_digest(db, key);
    }
}

/// The problems of the releases: files that are not recorded releases, recorded releases without their
/// snapshot, snapshots edited after their release (their blake3 is not the recorded one), and each
/// snapshot's own problems. (The register's problems are [`release_register`]'s.)
///
/// While the register has a problem, a snapshot it does not record is not reported: the register's
/// problem is the cause (a header or a row that does not read leaves every snapshot it names
/// unrecorded), and the snapshot is checked again once the register reads.
#[salsa::tracked(returns(ref))]
pub fn check_releases(db: &dyn salsa::Database) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    let checked = release_register(db);
    let register = &checked.value;
    let register_reads = checked.diagnostics.is_empty();
    let recorded: BTreeSet<String> = register
        .iter()
        .flat_map(|r| [snapshot_path(&r.row.version), index_path(&r.row.version)])
        .collect();
    // The records the indexes name, each checked once however many releases name it.
    let mut named: BTreeSet<&str> = BTreeSet::new();
    for row in register {
        if let Some(index) = snapshot_index(db, ReleaseKey::new(db, row.row.version.clone())) {
            named.extend(index.value.iter().map(|e| e.record.as_str()));
        }
    }
    let record_prefix = format!("{RECORDS_DIR}/");
    for path in release_files(db) {
        if path == REGISTER || recorded.contains(path) {
            continue;
        }
        // A record no index names is never read (a release made and taken back by hand leaves one);
        // anything else in the folder is not a record.
        if let Some(name) = path
            .strip_prefix(&record_prefix)
            .and_then(|p| p.strip_suffix(".jsonl"))
            && is_blake3_hex(name)
        {
            continue;
        }
        let stored = path.ends_with(".jsonl") || path.ends_with(".index");
        if !register_reads && stored {
            continue;
        }
        let message = if stored {
            format!(
                "`{path}` is not a recorded release: `locref release` records each snapshot it writes in {REGISTER}"
            )
        } else {
            format!(
                "{RELEASES_DIR}/ holds only releases.csv, the releases' indexes (<version>.index) and their records (records/), written by `locref release` (or snapshots stored whole, <version>.jsonl, before `locref migrate-releases`)"
            )
        };
        diagnostics.push(Diagnostic::file(path, message));
    }
    for name in &named {
        diagnostics.extend_from_slice(
            &record_summary(db, RecordKey::new(db, name.to_string())).diagnostics,
        );
    }
    for row in register {
        let version = &row.row.version;
        let whole = snapshot_path(version);
        let key = ReleaseKey::new(db, version.clone());
        let index = snapshot_index(db, key);
        let stored_at = match (lookup(db, &whole).is_some(), index) {
            (false, None) => {
                diagnostics.push(row.pos.error(
                    "version",
                    format!(
                        "the snapshot of release `{version}` ({}) is missing",
                        index_path(version)
                    ),
                ));
                continue;
            }
            (true, Some(_)) => {
                diagnostics.push(Diagnostic::file(
                    &whole,
                    format!(
                        "release `{version}` is stored twice, whole and as {}: keep the index (`locref migrate-releases` writes it and removes the whole snapshot)",
                        index_path(version)
                    ),
                ));
                continue;
            }
            (true, None) => {
                diagnostics.extend_from_slice(&snapshot_of(db, key).diagnostics);
                whole
            }
            (false, Some(index)) => {
                let path = index_path(version);
                let before = diagnostics.len();
                diagnostics.extend_from_slice(&index.diagnostics);
                // A record with problems has them reported at the record, once; they are the cause
                // of the snapshot's wrong hash, which is then not reported for each release naming it.
                let mut damaged = false;
                for entry in &index.value {
                    let record = record_path(&entry.record);
                    let state = record_summary(db, RecordKey::new(db, entry.record.clone()));
                    damaged |= !state.diagnostics.is_empty();
                    match &state.value {
                        _ if lookup(db, &record).is_none() => diagnostics.push(Diagnostic::new(
                            &path,
                            entry.line,
                            4,
                            format!("the record of `{}` ({record}) is missing", entry.code),
                        )),
                        Some((code, _)) if *code != entry.code => {
                            diagnostics.push(Diagnostic::new(
                                &path,
                                entry.line,
                                4,
                                format!("this record holds `{code}`, not `{}`", entry.code),
                            ))
                        }
                        _ => {}
                    }
                }
                if damaged || diagnostics.len() > before {
                    continue;
                }
                path
            }
        };
        if let Some(digest) = snapshot_digest(db, key)
            && *digest != row.row.snapshot_blake3
        {
            diagnostics.push(Diagnostic::file(
                &stored_at,
                format!(
                    "this snapshot was changed after its release: its blake3 is {digest}, {REGISTER}:{} records {}; a released snapshot is frozen (restore it from version control)",
                    row.pos.line, row.row.snapshot_blake3
                ),
            ));
        }
    }
    diagnostics
}

/// The changes of one country in one release: the diff of the release's country with the previous
/// release's. The first release has no changes (there is nothing to compare it with).
#[salsa::tracked(returns(ref))]
pub fn release_country_changes<'db>(
    db: &'db dyn salsa::Database,
    key: ReleaseCountry<'db>,
) -> Vec<Change> {
    let release = ReleaseKey::new(db, key.version(db).clone());
    let Some(previous) = previous_release(db, release) else {
        return Vec::new();
    };
    let before_key = ReleaseCountry::new(db, previous.clone(), key.code(db).clone());
    // One record named by both releases: nothing changed, and neither is read.
    if let (Some(before), Some(after)) = (snapshot_record(db, before_key), snapshot_record(db, key))
        && before == after
    {
        return Vec::new();
    }
    let before = snapshot_country(db, before_key);
    let after = snapshot_country(db, key);
    let published = Published {
        release: Some(key.version(db)),
        released_at: release_time(db, release).as_deref(),
    };
    let country = name_of(db, key.code(db));
    diff_country(
        key.code(db),
        &names(db, &country),
        before.as_deref(),
        after.as_deref(),
        published,
    )
}

/// Each toggle's label, as a change's sentence names it: (name, label), a projection of
/// `rules/toggles.toml`, so an edit of a rule's pattern stops here.
#[salsa::tracked(returns(ref))]
pub fn toggle_names(db: &dyn salsa::Database) -> Vec<(String, String)> {
    let rules = &crate::parse::rules::toggle_rules(db).value;
    crate::api_types::Toggles::NAMES
        .iter()
        .map(|name| {
            let label = rules
                .iter()
                .find(|r| r.name == *name)
                .and_then(|r| r.label.clone())
                .unwrap_or_else(|| name.replace('_', " "));
            (name.to_string(), label)
        })
        .collect()
}

/// The labels of the vocabulary's labelled sets ((set, id) -> label), by which a change's sentence says
/// an answer's value: a projection of `rules/vocabulary.toml`.
#[salsa::tracked(returns(ref))]
pub fn value_labels(db: &dyn salsa::Database) -> diff::Labels {
    let vocabulary = &crate::parse::rules::vocabulary(db).value;
    vocabulary
        .labelled_sets()
        .into_iter()
        .flat_map(|(set, labels)| {
            labels
                .0
                .iter()
                .map(move |l| ((set.to_string(), l.id.clone()), l.label.clone()))
        })
        .collect()
}

/// What a change's sentence names: the country (as [`name_of`] says it), the toggles and the values of
/// the vocabulary.
fn names<'a>(db: &'a dyn salsa::Database, country: &'a str) -> Names<'a> {
    Names {
        country,
        toggles: toggle_names(db),
        labels: value_labels(db),
    }
}

/// The country's name as a change's sentence says it: the register's, else its code (a country the
/// register no longer has).
fn name_of(db: &dyn salsa::Database, code: &str) -> String {
    country_info(db, CountryKey::new(db, code.to_string()))
        .as_ref()
        .map_or_else(|| code.to_string(), |c| c.name.clone())
}

/// Every change of one release, by country.
#[salsa::tracked(returns(ref))]
pub fn release_changes<'db>(db: &'db dyn salsa::Database, key: ReleaseKey<'db>) -> Vec<Change> {
    let Some(previous) = previous_release(db, key) else {
        return Vec::new();
    };
    let codes: BTreeSet<&String> = snapshot_codes(db, ReleaseKey::new(db, previous.clone()))
        .iter()
        .chain(snapshot_codes(db, key))
        .collect();
    codes
        .into_iter()
        .flat_map(|code| {
            release_country_changes(
                db,
                ReleaseCountry::new(db, key.version(db).clone(), code.clone()),
            )
            .iter()
            .cloned()
        })
        .collect()
}

/// One country as the current sources publish it (its facts, toggles and other answers, read through
/// the derive queries); `None` for a code the register does not have.
#[salsa::tracked(returns(ref))]
pub fn current_country_state<'db>(
    db: &'db dyn salsa::Database,
    key: CountryKey<'db>,
) -> Option<CountryState> {
    country_info(db, key).as_ref()?;
    Some(CountryState::new(
        country_facts(db, key),
        &country_toggle_values(db, key),
        country_answers(db, key),
    ))
}

/// The changes of one country since the last release (none before the first release).
#[salsa::tracked(returns(ref))]
pub fn unreleased_country_changes<'db>(
    db: &'db dyn salsa::Database,
    key: CountryKey<'db>,
) -> Vec<Change> {
    let Some(last) = last_release(db) else {
        return Vec::new();
    };
    let before = snapshot_country(
        db,
        ReleaseCountry::new(db, last.clone(), key.code(db).clone()),
    );
    let after = current_country_state(db, key);
    let country = name_of(db, key.code(db));
    diff_country(
        key.code(db),
        &names(db, &country),
        before.as_deref(),
        after.as_ref(),
        Published::UNRELEASED,
    )
}

/// The countries the unreleased changes are computed for: the register's and the last release's.
#[salsa::tracked(returns(ref))]
pub fn unreleased_codes(db: &dyn salsa::Database) -> Vec<String> {
    let mut codes: BTreeSet<String> = countries(db).iter().map(|c| c.code.clone()).collect();
    if let Some(last) = last_release(db) {
        codes.extend(
            snapshot_codes(db, ReleaseKey::new(db, last.clone()))
                .iter()
                .cloned(),
        );
    }
    codes.into_iter().collect()
}

/// How many changes of each kind since the last release, summed over the countries' change sets: what
/// the `/changes/` page, the feed and `changes.json`'s count say, without gathering every change in one
/// list (an edit re-counts one country's changes).
#[salsa::tracked(returns(ref))]
pub fn unreleased_counts(db: &dyn salsa::Database) -> crate::api_types::ChangeCounts {
    let mut counts = crate::api_types::ChangeCounts::default();
    for code in unreleased_codes(db) {
        counts += crate::api_types::ChangeCounts::of(unreleased_country_changes(
            db,
            CountryKey::new(db, code.clone()),
        ));
    }
    counts
}

/// The changes since the last release, country by country, without a copy.
pub fn each_unreleased_change(db: &dyn salsa::Database) -> impl Iterator<Item = &Change> {
    unreleased_codes(db)
        .iter()
        .flat_map(move |code| unreleased_country_changes(db, CountryKey::new(db, code.clone())))
}

/// A subject's history, newest first: its unreleased changes, then its changes in each release. The two
/// parts are separate queries so that an edit, which changes only the unreleased part, leaves the
/// released part (frozen, read only from `sources/releases/`, so of MEDIUM durability) verified at once:
/// one check, not one per release and country.
#[derive(Clone, Copy)]
pub struct History<'a> {
    pub unreleased: &'a [Change],
    pub released: &'a [Change],
}

impl<'a> History<'a> {
    /// The changes, one group per release, the unreleased changes (if any) first.
    pub fn groups(self) -> Vec<&'a [Change]> {
        let mut groups = Vec::new();
        if !self.unreleased.is_empty() {
            groups.push(self.unreleased);
        }
        groups.extend(self.released.chunk_by(|a, b| a.release == b.release));
        groups
    }
}

/// One country's history: its unreleased changes, then its changes in each release.
pub fn country_history<'db>(db: &'db dyn salsa::Database, key: CountryKey<'db>) -> History<'db> {
    History {
        unreleased: unreleased_country_changes(db, key),
        released: released_country_history(db, key),
    }
}

/// One country's changes in each release, newest release first.
#[salsa::tracked(returns(ref))]
pub fn released_country_history<'db>(
    db: &'db dyn salsa::Database,
    key: CountryKey<'db>,
) -> Vec<Change> {
    let mut changes = Vec::new();
    for version in release_versions(db).iter().rev() {
        let part = ReleaseCountry::new(db, version.clone(), key.code(db).clone());
        changes.extend(release_country_changes(db, part).iter().cloned());
    }
    changes
}

/// One ERP's history: the changes of the facts about it (its e-invoicing support and localization
/// facts) in every country of the register, the unreleased ones first, then the newest release first.
pub(crate) fn erp_history<'db>(db: &'db dyn salsa::Database, key: ErpKey<'db>) -> History<'db> {
    History {
        unreleased: unreleased_erp_changes(db, key),
        released: released_erp_history(db, key),
    }
}

/// The changes about one ERP since the last release, in register order of the countries.
#[salsa::tracked(returns(ref))]
pub(crate) fn unreleased_erp_changes<'db>(
    db: &'db dyn salsa::Database,
    key: ErpKey<'db>,
) -> Vec<Change> {
    let id = key.id(db);
    countries(db)
        .iter()
        .flat_map(|country| {
            unreleased_country_changes(db, CountryKey::new(db, country.code.clone()))
        })
        .filter(|change| change.erp.as_ref() == Some(id))
        .cloned()
        .collect()
}

/// The changes about one ERP in each release, newest release first, each release's in register order
/// of the countries.
#[salsa::tracked(returns(ref))]
pub(crate) fn released_erp_history<'db>(
    db: &'db dyn salsa::Database,
    key: ErpKey<'db>,
) -> Vec<Change> {
    let id = key.id(db);
    let rank: std::collections::HashMap<&str, usize> = release_versions(db)
        .iter()
        .enumerate()
        .map(|(at, version)| (version.as_str(), at))
        .collect();
    let mut by_release: BTreeMap<std::cmp::Reverse<usize>, Vec<Change>> = BTreeMap::new();
    for country in countries(db) {
        let history = released_country_history(db, CountryKey::new(db, country.code.clone()));
        for change in history.iter().filter(|c| c.erp.as_ref() == Some(id)) {
            let at = change
                .release
                .as_deref()
                .and_then(|v| rank.get(v).copied())
                .unwrap_or(0);
            by_release
                .entry(std::cmp::Reverse(at))
                .or_default()
                .push(change.clone());
        }
    }
    by_release.into_values().flatten().collect()
}

/// The snapshot a release made now would write: every country of the register as the current sources
/// publish it.
pub(crate) fn current_snapshot_text(db: &dyn salsa::Database) -> String {
    let states: Vec<(String, &CountryState)> = countries(db)
        .iter()
        .filter_map(|c| {
            current_country_state(db, CountryKey::new(db, c.code.clone()))
                .as_ref()
                .map(|s| (c.code.clone(), s))
        })
        .collect();
    snapshot::write(states.iter().map(|(c, s)| (c.as_str(), *s)))
}
