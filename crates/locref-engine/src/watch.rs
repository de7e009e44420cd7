//! `locref watch`: build, then rebuild on every change under `sources/` and `rules/`.
//!
//! The watcher (notify) watches the two input folders recursively, and the project root itself (not
//! recursively), and is installed before the initial scan, so no edit falls between the scan and the
//! watch. A batch of events closes after a short quiet window ([`Window`]), which widens when a burst
//! was split across two rebuilds and narrows again when the edits stop. An input folder that is deleted and made again (a branch switch, a restore) is
//! watched again as soon as the root reports it, and everything is re-read. The output folder is
//! watched too, once it exists, and watched again whenever a folder in it is made, removed or moved by
//! someone else (notify drops a removed folder's watches): a file there that is no longer the one locref put in place (deleted,
//! replaced, edited; the folder removed) makes the session compare every output with its record and
//! write again what differs ([`Session::outputs_changed`]); locref's own writes compare equal. Events are only hints: each rebuild re-reads the hinted paths and compares content hashes
//! ([`Session::rebuild`]), so an editor's atomic save (write a temporary file, rename it over the original,
//! reported as a `Create`), a touch, or a burst of events all come down to one rebuild of what changed.

use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use notify::{EventKind, RecursiveMode, Watcher as _};

use crate::session::{Outcome, RebuildReport, Session};
use crate::workspace::INPUT_DIRS;

/// The watcher of a project: the root (not recursively), each input folder that exists (recursively),
/// and the output folder (recursively) once it exists.
struct Watcher {
    root: PathBuf,
    inner: notify::RecommendedWatcher,
    /// Whether each of [`INPUT_DIRS`] is being watched.
    watching: [bool; INPUT_DIRS.len()],
    /// The output folder (resolved), and whether it is being watched.
    output: Option<(PathBuf, bool)>,
}

impl Watcher {
    fn new(root: &Path) -> io::Result<(Watcher, Receiver<Events>)> {
        let (sender, events) = channel();
        let mut inner = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            // A file opened, read or closed unwritten changed nothing: such an event never reaches
            // the batcher, whose quiet window a reader of the output folder (a static server, a
            // sync tool) would otherwise keep open until its longest batch.
            if let Ok(event) = &event
                && is_access(&event.kind)
            {
                return;
            }
            let _ = sender.send(event.map(|e| vec![e]).map_err(|e| vec![e]));
        })
        .map_err(io::Error::other)?;
        inner
            .watch(root, RecursiveMode::NonRecursive)
            .map_err(io::Error::other)?;
        let mut watcher = Watcher {
            root: root.to_path_buf(),
            inner,
            watching: [false; INPUT_DIRS.len()],
            output: None,
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
                if path.is_dir() && self.inner.unwatch(&path).is_ok() {
                    if let Err(e) = self.inner.watch(&path, RecursiveMode::Recursive) {
                        not_watching(&path, &e);
                        self.watching[i] = false;
                    }
                    continue;
                }
                self.watching[i] = false;
            }
            if path.is_dir() {
                match self.inner.watch(&path, RecursiveMode::Recursive) {
                    Ok(()) => {
                        self.watching[i] = true;
                        renewed = true;
                    }
                    Err(e) => not_watching(&path, &e),
                }
            }
        }
        renewed
    }

    /// Watches the output folder `out` once it exists (after a build made it), and again, recursively,
    /// when `again`: after a folder in it was removed or moved, or someone else's change was repaired.
    /// A folder removed and made again is not told apart by its device and inode (a new folder often
    /// gets the inode just freed), and notify drops the watches of a removed folder, so whatever was
    /// replaced is watched afresh.
    fn watch_output(&mut self, out: &Path, again: bool) {
        let real = crate::outdir::resolved(out);
        let watched = matches!(&self.output, Some((path, true)) if *path == real);
        if watched && !again {
            return;
        }
        if !real.is_dir() {
            self.output = Some((real, false));
            return;
        }
        let _ = self.inner.unwatch(&real);
        let now = match self.inner.watch(&real, RecursiveMode::Recursive) {
            Ok(()) => true,
            Err(e) => {
                eprintln!(
                    "watch: not watching the output folder {} ({e}): files changed there outside locref are repaired by the next build",
                    real.display()
                );
                false
            }
        };
        self.output = Some((real, now));
    }

    /// Whether `path` is the output folder or inside it.
    fn is_output(&self, path: &Path) -> bool {
        self.output
            .as_ref()
            .is_some_and(|(out, _)| path.starts_with(out))
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

/// Says that an input folder could not be watched (too many watches for the system's limit, a folder
/// that cannot be read): its edits are not seen until it is watched again.
fn not_watching(path: &Path, error: &notify::Error) {
    eprintln!(
        "watch: not watching {} ({error}): its edits are not seen until it is made again or locref restarted (on Linux, a full watch limit is raised with sysctl fs.inotify.max_user_watches)",
        path.display()
    );
}

/// What the watcher sends: events, or the errors it met.
pub(crate) type Events = Result<Vec<notify::Event>, Vec<notify::Error>>;

/// How long a batch waits for more events after the last one. An editor's atomic save (a temporary file
/// written, then renamed over the original) and a script's burst of writes come well within the
/// narrowest window; a burst slow enough to be split across two rebuilds widens it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Window {
    quiet: Duration,
    /// When the last batch closed and when its rebuild finished.
    last: Option<(Instant, Instant)>,
}

impl Window {
    /// The narrowest quiet window: what a save waits before its rebuild starts.
    pub(crate) const NARROWEST: Duration = Duration::from_millis(10);
    /// The widest, after bursts split again and again.
    pub(crate) const WIDEST: Duration = Duration::from_millis(200);
    /// A batch closes after this long even while events keep coming (a process writing without end).
    pub(crate) const LONGEST_BATCH: Duration = Duration::from_secs(1);

    pub(crate) fn new() -> Window {
        Window {
            quiet: Window::NARROWEST,
            last: None,
        }
    }

    /// The current quiet window.
    pub(crate) fn quiet(&self) -> Duration {
        self.quiet
    }

    /// A batch's first event arrived at `now`: when it came while the last batch was rebuilding or
    /// within one window of its end, the last batch was cut too early (a slow burst), so the window
    /// doubles; otherwise it halves back towards the narrowest.
    fn first_event(&mut self, now: Instant) {
        let split = self.last.is_some_and(|(closed, rebuilt)| {
            now.saturating_duration_since(rebuilt) <= self.quiet
                || now.saturating_duration_since(closed) <= self.quiet
        });
        self.quiet = if split {
            (self.quiet * 2).min(Window::WIDEST)
        } else {
            (self.quiet / 2).max(Window::NARROWEST)
        };
    }

    /// The batch's rebuild is done (it closed at `closed`).
    pub(crate) fn rebuilt(&mut self, closed: Instant) {
        self.last = Some((closed, Instant::now()));
    }
}

impl Default for Window {
    fn default() -> Self {
        Window::new()
    }
}

/// What the watcher asked for: re-read these paths, or rescan everything.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Batch {
    pub paths: BTreeSet<PathBuf>,
    pub rescan: bool,
    /// Paths inside the output folder (locref's own writes, or someone else's).
    pub outputs: BTreeSet<PathBuf>,
    /// Whether a folder there (or the output folder itself) was made, removed or moved: what was
    /// watched in it may be gone, so it is watched again.
    pub output_folders_changed: bool,
}

impl Batch {
    /// Adds what the watcher sent, keeping only the paths `keep` accepts (the input folders and what
    /// is in them: a file saved beside them in the project root is no edit).
    fn add(
        &mut self,
        result: Events,
        keep: &impl Fn(&Path) -> bool,
        is_output: &impl Fn(&Path) -> bool,
    ) {
        match result {
            Ok(events) => {
                for event in events {
                    if event.need_rescan() {
                        self.rescan = true;
                    }
                    if matches!(event.kind, EventKind::Access(_)) {
                        continue;
                    }
                    for path in &event.paths {
                        if keep(path) {
                            self.paths.insert(path.clone());
                        } else if is_output(path) {
                            self.outputs.insert(path.clone());
                            self.output_folders_changed |= changes_a_folder(&event.kind, path);
                        }
                    }
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

    /// Whether the batch holds no edit of the inputs.
    fn has_no_edit(&self) -> bool {
        self.paths.is_empty() && !self.rescan
    }

    fn is_empty(&self) -> bool {
        self.has_no_edit() && self.outputs.is_empty()
    }
}

/// Whether an event only tells of an access: a file opened, read, or closed without being written (a
/// close after writing is the end of a write, and keeps a batch open as the writes before it did).
fn is_access(kind: &EventKind) -> bool {
    use notify::event::{AccessKind, AccessMode};
    matches!(kind, EventKind::Access(access) if *access != AccessKind::Close(AccessMode::Write))
}

/// Whether an event made, removed or moved a folder (a moved one is seen by its path being a folder).
fn changes_a_folder(kind: &EventKind, path: &Path) -> bool {
    use notify::event::{CreateKind, ModifyKind, RemoveKind};
    match kind {
        EventKind::Create(CreateKind::Folder) => true,
        EventKind::Remove(RemoveKind::Folder | RemoveKind::Any | RemoveKind::Other) => true,
        EventKind::Modify(ModifyKind::Name(_)) => path.is_dir(),
        _ => false,
    }
}

/// Blocks for the first event of an input, then takes further events until the window's quiet time
/// passes without one (or the batch is [`Window::LONGEST_BATCH`] old); duplicate paths are merged.
/// Returns the batch and when it closed; `None` when the watcher is gone. A batch of output-folder paths
/// only (most often locref's own writes) is returned at once, and leaves the window as it was. With
/// `wake`, an empty batch is returned at that time if no event came before it.
pub(crate) fn next_batch(
    events: &Receiver<Events>,
    window: &mut Window,
    keep: impl Fn(&Path) -> bool,
    is_output: impl Fn(&Path) -> bool,
    wake: Option<Instant>,
) -> Option<(Batch, Instant)> {
    let mut batch = Batch::default();
    while batch.is_empty() {
        let result = match wake {
            None => events.recv().ok()?,
            Some(at) => match events.recv_timeout(at.saturating_duration_since(Instant::now())) {
                Ok(result) => result,
                Err(RecvTimeoutError::Timeout) => return Some((batch, Instant::now())),
                Err(RecvTimeoutError::Disconnected) => return None,
            },
        };
        batch.add(result, &keep, &is_output);
    }
    if batch.has_no_edit() {
        // What else came with it, without waiting.
        while let Ok(result) = events.try_recv() {
            batch.add(result, &keep, &is_output);
        }
        if batch.has_no_edit() {
            return Some((batch, Instant::now()));
        }
    }
    let started = Instant::now();
    window.first_event(started);
    loop {
        let left = Window::LONGEST_BATCH.saturating_sub(started.elapsed());
        if left.is_zero() {
            break;
        }
        match events.recv_timeout(window.quiet().min(left)) {
            Ok(result) => batch.add(result, &keep, &is_output),
            Err(RecvTimeoutError::Timeout) => break,
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    Some((batch, Instant::now()))
}

/// Prints a rebuild's line, stamped with the time of day, and its diagnostics when it found errors.
pub(crate) fn print_report(report: &RebuildReport) {
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
pub fn run(root: &Path, out: &Path, site: &'static crate::site::Site) -> io::Result<()> {
    let root = root.canonicalize()?;
    if let Some(reason) = crate::outdir::output_refusal(out, &root) {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, reason));
    }
    run_with(
        &root,
        |root| Session::load(root, out, site),
        |_, report| print_report(report),
    )
}

/// The loop `watch` and `serve` share: installs the watcher on `root`'s input folders (before the initial
/// scan, so no edit is missed), loads the session with `load`, builds, then rebuilds on every batch of
/// changes until the watcher fails. `after` sees every report, the first build's included.
pub(crate) fn run_with(
    root: &Path,
    load: impl FnOnce(&Path) -> io::Result<Session>,
    mut after: impl FnMut(&Session, &RebuildReport),
) -> io::Result<()> {
    let (mut watcher, events) = Watcher::new(root)?;
    let mut session = load(root)?;
    let first = session.build();
    after(&session, &first);
    let out = session.out.clone();
    if let Some(out) = &out {
        watcher.watch_output(out, false);
    }
    println!(
        "watching {} and {} for changes (Ctrl-C to stop)",
        root.join("sources").display(),
        root.join("rules").display()
    );
    let mut window = Window::new();
    // Whether the output folder was said to lead elsewhere now (said once, until it is back).
    let mut moved_said = false;
    let mut backoff = Backoff::default();
    let inputs: Vec<PathBuf> = INPUT_DIRS.iter().map(|dir| root.join(dir)).collect();
    let is_input = |path: &Path| inputs.iter().any(|dir| path.starts_with(dir));
    loop {
        let is_output = |path: &Path| watcher.is_output(path);
        let wake = backoff.paused_until;
        let Some((batch, closed)) = next_batch(&events, &mut window, is_input, is_output, wake)
        else {
            break;
        };
        match session.output_moved() {
            Some(moved) if !moved_said => {
                eprintln!("watch: {moved}");
                moved_said = true;
            }
            None => moved_said = false,
            _ => {}
        }
        if batch.has_no_edit() {
            let outputs: Vec<PathBuf> = batch.outputs.into_iter().collect();
            // While another process keeps changing outputs, repairs wait for the pause to end; then
            // the whole folder is compared once.
            let pause = backoff.paused(Instant::now());
            let over = matches!(pause, Pause::Over);
            let repaired = match pause {
                Pause::Paused => continue,
                Pause::Over => guarded_with(
                    &mut session,
                    |session| session.outputs_changed_anywhere(),
                    Some,
                ),
                Pause::None => guarded_with(
                    &mut session,
                    |session| session.outputs_changed(&outputs),
                    Some,
                ),
            };
            if let Some(report) = &repaired {
                backoff.repaired(Instant::now(), report.repaired());
            } else {
                backoff.quiet(Instant::now());
            }
            if let Some(out) = &out {
                // A repair means someone else changed the folder: what they replaced may have lost its
                // watch too.
                let again = batch.output_folders_changed || repaired.is_some() || over;
                keep_output_watched(&mut watcher, &mut session, out, again, repaired, &mut after);
            }
            continue;
        }
        let rescan = batch.rescan
            || (watcher.touches_an_input_folder(&batch) && {
                watcher.refresh();
                true
            });
        // Output-folder paths in the same batch (a checkout of a project that tracks its built folder
        // changes both at once): the rebuild compares every output with its record and repairs too.
        let outputs: Vec<PathBuf> = batch.outputs.into_iter().collect();
        let report = guarded(&mut session, |session| {
            let paths: Vec<PathBuf> = batch.paths.into_iter().collect();
            session.rebuild_batch((!rescan).then_some(&paths[..]), &outputs)
        });
        after(&session, &report);
        if let Some(out) = &out {
            let again = batch.output_folders_changed || !report.repaired().is_empty();
            keep_output_watched(&mut watcher, &mut session, out, again, None, &mut after);
        }
        window.rebuilt(closed);
    }
    drop(watcher);
    Err(io::Error::other("the file watcher stopped"))
}

/// How many repairs within [`Backoff::SPAN`] tell of a process that keeps changing outputs.
const REPAIRS_BEFORE_BACKOFF: usize = 5;

/// Whether repairs of the output folder wait (see [`Backoff`]).
enum Pause {
    /// No pause: repair now.
    None,
    /// A pause runs: nothing is repaired yet.
    Paused,
    /// The pause just ended: compare the whole folder.
    Over,
}

/// A process that keeps changing outputs (a second build tool, a sync fighting locref) is not fought
/// write for write: after [`REPAIRS_BEFORE_BACKOFF`] repairs within [`Backoff::SPAN`], repairs pause,
/// then the whole folder is compared; the pause doubles (up to [`Backoff::LONGEST`]) while it goes on,
/// and it is said once, not at every repair.
#[derive(Default)]
struct Backoff {
    recent: std::collections::VecDeque<Instant>,
    paused_until: Option<Instant>,
    pause: Duration,
    said: bool,
}

impl Backoff {
    const SPAN: Duration = Duration::from_secs(10);
    const FIRST: Duration = Duration::from_secs(2);
    const LONGEST: Duration = Duration::from_secs(60);

    fn paused(&mut self, now: Instant) -> Pause {
        match self.paused_until {
            Some(until) if now < until => Pause::Paused,
            Some(_) => {
                self.paused_until = None;
                Pause::Over
            }
            None => Pause::None,
        }
    }

    /// A repair was made at `now` (of `paths`).
    fn repaired(&mut self, now: Instant, paths: &[String]) {
        self.recent.push_back(now);
        while self
            .recent
            .front()
            .is_some_and(|at| now.duration_since(*at) > Backoff::SPAN)
        {
            self.recent.pop_front();
        }
        if self.recent.len() < REPAIRS_BEFORE_BACKOFF {
            return;
        }
        self.recent.clear();
        self.pause = match self.pause.is_zero() {
            true => Backoff::FIRST,
            false => (self.pause * 2).min(Backoff::LONGEST),
        };
        self.paused_until = Some(now + self.pause);
        if !self.said {
            self.said = true;
            let shown: Vec<&str> = paths.iter().take(3).map(String::as_str).collect();
            eprintln!(
                "watch: something keeps changing the output folder ({REPAIRS_BEFORE_BACKOFF} repairs within {} s, the last of {}): repairs now wait {} s at a time, up to {} s, while it goes on; the folder is compared whole after each wait",
                Backoff::SPAN.as_secs(),
                shown.join(", "),
                Backoff::FIRST.as_secs(),
                Backoff::LONGEST.as_secs()
            );
        }
    }

    /// The folder was found as published at `now`: once no repair was made for a whole span, the
    /// fight is over.
    fn quiet(&mut self, now: Instant) {
        while self
            .recent
            .front()
            .is_some_and(|at| now.duration_since(*at) > Backoff::SPAN)
        {
            self.recent.pop_front();
        }
        if self.paused_until.is_none() && self.recent.is_empty() {
            self.pause = Duration::ZERO;
            self.said = false;
        }
    }
}

/// How many times in a row the output folder is watched again and compared whole while someone keeps
/// changing it (a restore still copying): after that, its events alone bring the next repair.
const OUTPUT_REWATCHES: usize = 4;

/// Watches the output folder `out` (again, recursively, when `again`), then reports `repaired`. A
/// folder watched again is then compared whole with the last build, since what changed in it before
/// the watch took hold raised no event; what differs is repaired, and that folder watched again in
/// turn. Each report is given to `after` only once the folder is watched, so a change made after its
/// line is seen.
fn keep_output_watched(
    watcher: &mut Watcher,
    session: &mut Session,
    out: &Path,
    mut again: bool,
    mut repaired: Option<RebuildReport>,
    after: &mut impl FnMut(&Session, &RebuildReport),
) {
    for _ in 0..OUTPUT_REWATCHES {
        watcher.watch_output(out, again);
        if let Some(report) = repaired.take() {
            after(session, &report);
        }
        if !again {
            return;
        }
        repaired = guarded_with(session, |session| session.outputs_changed_anywhere(), Some);
        // A repair that could not build (the sources have errors) is said once, not tried again.
        again = repaired
            .as_ref()
            .is_some_and(|report| matches!(report.outcome, Outcome::Built(_)));
    }
    if let Some(report) = repaired {
        after(session, &report);
    }
}

/// Runs one rebuild; a panic in it (a bug in locref) becomes an internal-error report, and the session
/// keeps the last good build and goes on watching.
pub(crate) fn guarded(
    session: &mut Session,
    rebuild: impl FnOnce(&mut Session) -> RebuildReport,
) -> RebuildReport {
    guarded_with(session, rebuild, |report| report)
}

/// [`guarded`] for a step of any result: a panic becomes the internal-error report, given to
/// `panicked`.
fn guarded_with<R>(
    session: &mut Session,
    step: impl FnOnce(&mut Session) -> R,
    panicked: impl FnOnce(RebuildReport) -> R,
) -> R {
    let started = std::time::Instant::now();
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| step(&mut *session))) {
        Ok(result) => result,
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic without a message".into());
            panicked(session.after_panic(message, started))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quiet_window_widens_when_a_burst_was_split_and_narrows_at_an_editors_pace() {
        let mut window = Window::new();
        assert_eq!(window.quiet(), Window::NARROWEST);
        let start = Instant::now();
        window.first_event(start);
        window.rebuilt(start);
        // The next batch's first event came while the last rebuild ran: the burst had been cut.
        let rebuilt = window.last.unwrap().1;
        window.first_event(rebuilt);
        assert_eq!(window.quiet(), Window::NARROWEST * 2);
        for _ in 0..10 {
            window.rebuilt(Instant::now());
            window.first_event(window.last.unwrap().1);
        }
        assert_eq!(window.quiet(), Window::WIDEST);
        // Then edits seconds apart: back to the narrowest, halving each time.
        let mut now = window.last.unwrap().1;
        let mut seen = Vec::new();
        for _ in 0..6 {
            now += Duration::from_secs(3);
            window.first_event(now);
            window.last = Some((now, now));
            seen.push(window.quiet().as_millis());
        }
        assert_eq!(seen, [100, 50, 25, 12, 10, 10]);
    }

    #[test]
    fn paths_outside_the_input_folders_start_no_batch() {
        let (sender, events) = channel();
        let root = Path::new("/project");
        let event = |path: &str| {
            Ok(vec![
                notify::Event::new(EventKind::Create(notify::event::CreateKind::File))
                    .add_path(PathBuf::from(path)),
            ])
        };
        // An editor's temporary file in the project root, then the save into sources/.
        sender.send(event("/project/.edit.tmp")).unwrap();
        sender.send(event("/project/sources/news.json")).unwrap();
        drop(sender);
        let keep = |p: &Path| INPUT_DIRS.iter().any(|d| p.starts_with(root.join(d)));
        let no_output = |_: &Path| false;
        let (batch, _) = next_batch(&events, &mut Window::new(), keep, no_output, None).unwrap();
        assert_eq!(
            batch.paths.into_iter().collect::<Vec<_>>(),
            [PathBuf::from("/project/sources/news.json")]
        );
        assert!(next_batch(&events, &mut Window::new(), keep, no_output, None).is_none());
    }

    #[test]
    fn a_folder_made_removed_or_moved_in_the_output_is_watched_again_and_a_file_written_is_not() {
        use notify::event::{CreateKind, ModifyKind, RemoveKind, RenameMode};
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("public");
        std::fs::create_dir_all(out.join("fr")).unwrap();
        std::fs::write(out.join("fr/index.html"), "page").unwrap();
        let batch_of = |kind: EventKind, path: PathBuf| {
            let mut batch = Batch::default();
            let event = notify::Event::new(kind).add_path(path);
            batch.add(Ok(vec![event]), &|_: &Path| false, &|p: &Path| {
                p.starts_with(&out)
            });
            batch.output_folders_changed
        };
        let page = out.join("fr/index.html");
        // What locref's own writes look like: a file renamed or exchanged into place, a file made.
        let rename = EventKind::Modify(ModifyKind::Name(RenameMode::Any));
        assert!(!batch_of(rename, page.clone()));
        assert!(!batch_of(EventKind::Create(CreateKind::File), page.clone()));
        assert!(!batch_of(EventKind::Remove(RemoveKind::File), page));
        // Someone else's: the folder removed, a folder made, a folder moved into place.
        assert!(batch_of(EventKind::Remove(RemoveKind::Folder), out.clone()));
        assert!(batch_of(
            EventKind::Create(CreateKind::Folder),
            out.join("fr")
        ));
        assert!(batch_of(rename, out.join("fr")));
        // Outside the output folder nothing counts.
        assert!(!batch_of(
            EventKind::Remove(RemoveKind::Folder),
            dir.path().join("elsewhere")
        ));
    }
}
