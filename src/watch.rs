//! `locref watch`: build, then rebuild on every change under `sources/` and `rules/`.
//!
//! The watcher (notify + notify-debouncer-full) watches the two input folders recursively, and the project
//! root itself (not recursively), and is installed before the initial scan, so no edit falls between the
//! scan and the watch. An input folder that is deleted and made again (a branch switch, a restore) is
//! watched again as soon as the root reports it, and everything is re-read. The output folder is never
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

/// The watcher of a project: the root (not recursively) and each input folder that exists (recursively).
struct Watcher {
    root: PathBuf,
    debouncer: notify_debouncer_full::Debouncer<
        notify::RecommendedWatcher,
        notify_debouncer_full::RecommendedCache,
    >,
    /// Whether each of [`INPUT_DIRS`] is being watched.
    watching: [bool; INPUT_DIRS.len()],
}

impl Watcher {
    fn new(root: &Path) -> io::Result<(Watcher, Receiver<DebounceEventResult>)> {
        let (sender, events) = channel();
        let mut debouncer = new_debouncer(DEBOUNCE, None, sender).map_err(io::Error::other)?;
        debouncer
            .watch(root, RecursiveMode::NonRecursive)
            .map_err(io::Error::other)?;
        let mut watcher = Watcher {
            root: root.to_path_buf(),
            debouncer,
            watching: [false; INPUT_DIRS.len()],
        };
        watcher.refresh();
        Ok((watcher, events))
    }

    /// Watches again each input folder that appeared (or was replaced) since the last look; true when
    /// any did, so that everything is re-read.
    fn refresh(&mut self) -> bool {
        let mut renewed = false;
        for (i, dir) in INPUT_DIRS.iter().enumerate() {
            let path = self.root.join(dir);
            if self.watching[i] {
                // A folder deleted and made again is a new folder: its old watch is gone with it.
                if path.is_dir() && self.debouncer.unwatch(&path).is_ok() {
                    let _ = self.debouncer.watch(&path, RecursiveMode::Recursive);
                    continue;
                }
                self.watching[i] = false;
            }
            if path.is_dir()
                && self
                    .debouncer
                    .watch(&path, RecursiveMode::Recursive)
                    .is_ok()
            {
                self.watching[i] = true;
                renewed = true;
            }
        }
        renewed
    }

    /// Whether a batch touched an input folder itself (created, deleted or moved as a whole).
    fn touches_an_input_folder(&self, batch: &Batch) -> bool {
        INPUT_DIRS
            .iter()
            .any(|dir| batch.paths.contains(&self.root.join(dir)))
            || self
                .watching
                .iter()
                .zip(INPUT_DIRS)
                .any(|(watching, dir)| *watching != self.root.join(dir).is_dir())
    }
}

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

/// Prints a rebuild's line, stamped with the time of day, and its diagnostics when it found errors.
pub fn print_report(report: &RebuildReport) {
    if let Outcome::Invalid(diagnostics) = &report.outcome {
        for diagnostic in diagnostics {
            eprintln!("{diagnostic}");
        }
    }
    println!("{} {report}", time_of_day());
}

/// The local time as `HH:MM:SS`, to tell the rebuild lines of a long session apart.
fn time_of_day() -> String {
    let now = jiff::Zoned::now();
    format!("{:02}:{:02}:{:02}", now.hour(), now.minute(), now.second())
}

/// Runs `locref watch` in `root` until the watcher fails. Errors in the sources never end it.
pub fn run(root: &Path, out: &Path) -> io::Result<()> {
    let root = root.canonicalize()?;
    if let Some(reason) = crate::outdir::output_refusal(out, &root) {
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
    let (mut watcher, events) = Watcher::new(root)?;
    let mut session = load(root)?;
    let first = session.build();
    after(&session, &first);
    println!(
        "watching {} and {} for changes (Ctrl-C to stop)",
        root.join("sources").display(),
        root.join("rules").display()
    );
    while let Some(batch) = next_batch(&events, QUIET) {
        let rescan = batch.rescan
            || (watcher.touches_an_input_folder(&batch) && {
                watcher.refresh();
                true
            });
        let report = guarded(&mut session, |session| {
            if rescan {
                session.rescan()
            } else {
                let paths: Vec<PathBuf> = batch.paths.into_iter().collect();
                session.rebuild(&paths)
            }
        });
        after(&session, &report);
    }
    drop(watcher);
    Err(io::Error::other("the file watcher stopped"))
}

/// Runs one rebuild; a panic in it (a bug in locref) becomes an internal-error report, and the session
/// keeps the last good build and goes on watching.
pub fn guarded(
    session: &mut Session,
    rebuild: impl FnOnce(&mut Session) -> RebuildReport,
) -> RebuildReport {
    let started = std::time::Instant::now();
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| rebuild(&mut *session))) {
        Ok(report) => report,
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic without a message".into());
            session.after_panic(message, started)
        }
    }
}
