//! `locref watch`: build, then rebuild on every change under `sources/` and `rules/`.
//!
//! The watcher (notify + notify-debouncer-full) watches the two input folders recursively and is installed
//! before the initial scan, so no edit falls between the scan and the watch. The output folder is never
//! watched. Events are only hints: each rebuild re-reads the hinted paths and compares content hashes
//! ([`Session::rebuild`]), so an editor's atomic save (write a temporary file, rename it over the original,
//! reported as a `Create`), a touch, or a burst of events all come down to one rebuild of what changed.

use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

use notify::{EventKind, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, new_debouncer};

use crate::session::{Outcome, RebuildReport, Session};
use crate::workspace::INPUT_DIRS;

/// How long the debouncer waits for an event to settle.
pub const DEBOUNCE: Duration = Duration::from_millis(50);
/// After the first batch, further batches are merged into the same rebuild until none arrives for this long.
pub const QUIET: Duration = Duration::from_millis(50);

/// What the watcher asked for: re-read these paths, or rescan everything.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Batch {
    pub paths: BTreeSet<PathBuf>,
    pub rescan: bool,
}

impl Batch {
    fn add(&mut self, result: DebounceEventResult) {
        match result {
            Ok(events) => {
                for event in events {
                    if event.need_rescan() {
                        self.rescan = true;
                    }
                    if matches!(event.kind, EventKind::Access(_)) {
                        continue;
                    }
                    self.paths.extend(event.paths.iter().cloned());
                }
            }
            Err(errors) => {
                for error in errors {
                    eprintln!("watch: {error}");
                }
                self.rescan = true;
            }
        }
    }

    fn is_empty(&self) -> bool {
        self.paths.is_empty() && !self.rescan
    }
}

/// Blocks for the first batch of events, then drains further batches until `quiet` passes without one;
/// duplicate paths are merged. `None` when the watcher is gone.
pub fn next_batch(events: &Receiver<DebounceEventResult>, quiet: Duration) -> Option<Batch> {
    let mut batch = Batch::default();
    loop {
        batch.add(events.recv().ok()?);
        loop {
            match events.recv_timeout(quiet) {
                Ok(result) => batch.add(result),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return Some(batch),
            }
        }
        if !batch.is_empty() {
            return Some(batch);
        }
    }
}

/// Prints a rebuild's line, and its diagnostics when it found errors.
pub fn print_report(report: &RebuildReport) {
    if let Outcome::Invalid(diagnostics) = &report.outcome {
        for diagnostic in diagnostics {
            eprintln!("{diagnostic}");
        }
    }
    println!("{report}");
}

/// Runs `locref watch` in `root` until the watcher fails. Errors in the sources never end it.
pub fn run(root: &Path, out: &Path) -> io::Result<()> {
    let root = root.canonicalize()?;
    if let Some(reason) = crate::emit::output_refusal(out, &root) {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, reason));
    }
    run_with(
        &root,
        |root| Session::load(root, out),
        |_, report| print_report(report),
    )
}

/// The loop `watch` and `serve` share: installs the watcher on `root`'s input folders (before the initial
/// scan, so no edit is missed), loads the session with `load`, builds, then rebuilds on every batch of
/// changes until the watcher fails. `after` sees every report, the first build's included.
pub fn run_with(
    root: &Path,
    load: impl FnOnce(&Path) -> io::Result<Session>,
    mut after: impl FnMut(&Session, &RebuildReport),
) -> io::Result<()> {
    let (sender, events) = channel();
    let mut debouncer = new_debouncer(DEBOUNCE, None, sender).map_err(io::Error::other)?;
    for dir in INPUT_DIRS {
        debouncer
            .watch(root.join(dir), RecursiveMode::Recursive)
            .map_err(io::Error::other)?;
    }
    let mut session = load(root)?;
    let first = session.build();
    after(&session, &first);
    println!(
        "watching {} and {} for changes (Ctrl-C to stop)",
        root.join("sources").display(),
        root.join("rules").display()
    );
    while let Some(batch) = next_batch(&events, QUIET) {
        let report = if batch.rescan {
            session.rescan()
        } else {
            let paths: Vec<PathBuf> = batch.paths.into_iter().collect();
            session.rebuild(&paths)
        };
        after(&session, &report);
    }
    drop(debouncer);
    Err(io::Error::other("the file watcher stopped"))
}
