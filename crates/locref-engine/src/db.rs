//! The salsa database: one input per file under `sources/` and `rules/`, plus the build options.
//!
//! Every derived value in the pipeline is a tracked function over these inputs, so salsa knows exactly
//! which outputs an edit can affect. The database also records which queries executed, which the
//! incremental tests and `locref watch` report.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use salsa::{DatabaseKeyIndex, EventKind};

/// One file of the project, relative to the project root (`sources/tables/matrix.csv`).
///
/// The text is kept as raw bytes: decoding (UTF-8, BOM, line ends) is itself a query, so a file that is
/// not valid UTF-8 is a located diagnostic rather than a load failure.
#[salsa::input(debug)]
pub struct SourceFile {
    #[returns(ref)]
    pub path: String,
    /// Shared: the decoded text of a file that needs no normalizing is these bytes (see
    /// the site's `parse::decoded_text`).
    #[returns(ref)]
    pub bytes: bytes::Bytes,
}

/// The set of files in the project, keyed by relative path. Changes only when a file is created or
/// deleted; edits go through [`SourceFile`]'s setter.
#[salsa::input(singleton)]
pub struct Workspace {
    #[returns(ref)]
    pub files: BTreeMap<String, SourceFile>,
    /// The symbolic links found under the input folders, by project-relative path: never followed,
    /// never read, each a located error ([`link_diagnostics`]).
    #[returns(ref)]
    pub links: std::collections::BTreeSet<String>,
}

/// Every symbolic link under `sources/` and `rules/` is an error at its path: locref reads only regular
/// files inside the project, so a link cannot publish what it points to (a file outside the project, a
/// loop of folders) and no diagnostic echoes its content.
#[salsa::tracked(returns(ref))]
pub fn link_diagnostics(db: &dyn salsa::Database) -> Vec<crate::diagnostics::Diagnostic> {
    Workspace::get(db)
        .links(db)
        .iter()
        .map(|path| {
            crate::diagnostics::Diagnostic::file(
                path,
                "is a symbolic link: locref reads only regular files and folders inside the project, never what a link points to; replace it with the file itself",
            )
        })
        .collect()
}

/// Options that change the output without being part of the sources.
#[salsa::input(singleton)]
pub struct BuildOptions {
    /// Replaces `base_url` of `rules/site.toml` (`--base-url`, or the dev server's own address).
    #[returns(ref)]
    pub base_url_override: Option<String>,
    /// The day of the build (`YYYY-MM-DD`, from `SOURCE_DATE_EPOCH` when set): where the calendar's
    /// windows start. Only the pages that show a window read it.
    #[returns(ref)]
    pub build_date: String,
    /// The last day a source can have been read on: today by the clock, or the build's day when
    /// `SOURCE_DATE_EPOCH` pins a later one. `SOURCE_DATE_EPOCH` pins what a build writes, not what day it
    /// is, so a reproducible build pinned in the past still accepts a source read yesterday, and a check
    /// date after today is refused whatever the pin.
    #[returns(ref)]
    pub last_check_day: String,
}

/// A file path as a query key: [`file`] looks a path up in the workspace.
#[salsa::interned(debug)]
pub struct FilePath<'db> {
    #[returns(ref)]
    pub path: String,
}

/// The input for `path`, or `None` when the file does not exist.
///
/// This narrow lookup is the early-cutoff point between the file list and the parsers: creating or
/// deleting an unrelated file re-runs this lookup, which returns the same handle, so no parser re-runs.
#[salsa::tracked(returns(copy))]
pub fn file<'db>(db: &'db dyn salsa::Database, path: FilePath<'db>) -> Option<SourceFile> {
    Workspace::get(db).files(db).get(path.path(db)).copied()
}

/// Looks up a project file by its relative path.
pub fn lookup(db: &dyn salsa::Database, path: &str) -> Option<SourceFile> {
    file(db, FilePath::new(db, path.to_string()))
}

/// The database of a build, a watch session or the dev server.
#[salsa::db]
#[derive(Clone)]
pub struct Db {
    storage: salsa::Storage<Self>,
    executed: Arc<Mutex<Vec<DatabaseKeyIndex>>>,
    validated: Arc<ValidationLog>,
}

/// The memos salsa found still valid (without re-running them), recorded only once asked for: what an
/// edit's verification walked, which the incremental tests hold (an edit must not walk the history).
#[derive(Default)]
struct ValidationLog {
    on: std::sync::atomic::AtomicBool,
    keys: Mutex<Vec<DatabaseKeyIndex>>,
}

#[salsa::db]
impl salsa::Database for Db {}

impl Default for Db {
    fn default() -> Self {
        let executed: Arc<Mutex<Vec<DatabaseKeyIndex>>> = Arc::default();
        let log = executed.clone();
        let validated: Arc<ValidationLog> = Arc::default();
        let validations = validated.clone();
        let storage = salsa::Storage::new(Some(Box::new(move |event: salsa::Event| {
            match event.kind {
                EventKind::WillExecute { database_key } => log
                    .lock()
                    .expect("execution log poisoned")
                    .push(database_key),
                EventKind::DidValidateMemoizedValue { database_key }
                    if validations.on.load(std::sync::atomic::Ordering::Relaxed) =>
                {
                    validations
                        .keys
                        .lock()
                        .expect("validation log poisoned")
                        .push(database_key)
                }
                _ => {}
            }
        })));
        Db {
            storage,
            executed,
            validated,
        }
    }
}

impl Db {
    /// The queries that executed since the last call, in order, one entry per execution. Named for
    /// readers by `take_executed` of the render layer, which knows the keys of the outputs.
    pub fn take_executed_keys(&self) -> Vec<DatabaseKeyIndex> {
        std::mem::take(&mut *self.executed.lock().expect("execution log poisoned"))
    }

    /// Starts recording the memos found valid without re-running (off by default: a log entry per memo
    /// an edit checks).
    pub fn record_validations(&self) {
        self.validated
            .on
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// The memos found valid since the last call (see [`Db::record_validations`]).
    pub fn take_validated_keys(&self) -> Vec<DatabaseKeyIndex> {
        std::mem::take(&mut *self.validated.keys.lock().expect("validation log poisoned"))
    }
}
