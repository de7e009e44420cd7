//! One long-lived build session: a [`Project`] (the salsa database of the input files) and the output
//! folder it publishes to. [`Session::rebuild`] is the per-rebuild step that `locref watch`, the
//! incremental tests, the benchmarks and the dev server share:
//!
//! ```text
//! watcher hints (paths) -> sync_paths (content hashes) -> diagnostics, or render -> emit -> RebuildReport
//! ```
//!
//! A rebuild whose inputs did not change in content (a touch, an editor saving identical bytes) runs no
//! query and writes nothing. A rebuild that finds errors writes nothing either: the output folder keeps
//! the last good build until the sources are fixed.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::build::{Plan, Profile};
use crate::diagnostics::Diagnostic;
use crate::publish::{EmitReport, Publisher, Stamped};
use crate::site::Site;
use crate::workspace::Project;
use crate::workspace::build_time;

/// What one rebuild did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// No input changed in content: nothing ran, nothing was written.
    Unchanged,
    /// The sources or rules have errors: nothing was written, the last good output stays on disk.
    Invalid(Vec<Diagnostic>),
    /// The site was rendered and emitted.
    Built(EmitReport),
    /// Reading an input or writing an output failed; the next rebuild retries.
    IoError(String),
    /// The rebuild panicked (a bug in locref): nothing was written, the last good output stays.
    Internal(String),
}

/// The report of one rebuild: the one line `locref watch` prints, in structured form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RebuildReport {
    /// Project-relative paths of the inputs whose content changed, appeared or vanished.
    pub changed_inputs: Vec<String>,
    /// Sorted names of the tracked functions that executed (one entry per execution).
    pub executed: Vec<String>,
    pub outcome: Outcome,
    pub elapsed: Duration,
    /// Whether this build succeeded after failed ones: the errors a curator saw are cleared.
    pub recovered: bool,
    /// Whether this is the session's first build.
    pub first: bool,
    /// Where the build was published: `None` for the dev server's memory, else the output folder.
    pub published_to: Option<PathBuf>,
    /// Outputs changed outside locref that this rebuild could not write again although the sources
    /// have errors (site paths): the build that clears the errors repairs them.
    pub not_repaired: Vec<String>,
    /// Outputs changed outside locref that this rebuild wrote again as the last good build made them,
    /// the sources having errors (site paths).
    pub put_back: Vec<String>,
}

impl RebuildReport {
    /// Site paths of the outputs written by this rebuild (empty unless it built).
    pub fn written(&self) -> &[String] {
        match &self.outcome {
            Outcome::Built(report) => &report.written,
            _ => &[],
        }
    }

    /// Site paths of the outputs this rebuild wrote again because they had changed outside locref.
    pub fn repaired(&self) -> &[String] {
        match &self.outcome {
            Outcome::Built(report) => &report.repaired,
            _ => &[],
        }
    }
}

/// How many written or removed files a rebuild line names before it gives a count instead: enough for a
/// single-fact edit (its API detail, the lists showing it, the flat files and the data package that
/// hashes them, the page and its twin, and the change it makes: the change list, the index's count of
/// it, the feed and the changes page).
const SHOWN_FILES: usize = 16;

/// Lists `names` in full when there are at most `max`, else gives a count.
fn names_or_count(names: &[String], max: usize, noun: &str) -> String {
    match names.len() {
        0 => format!("no {noun}s"),
        n if n <= max => names.join(", "),
        n => format!("{n} {noun}s"),
    }
}

impl fmt::Display for RebuildReport {
    /// One line, for example
    /// `changed sources/tables/vat.csv; 14 queries re-ran; wrote /api/v1/countries/fr.json; 2.1 ms`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.elapsed.as_secs_f64() * 1000.0;
        let inputs = names_or_count(&self.changed_inputs, 3, "input");
        match &self.outcome {
            Outcome::Unchanged => write!(
                f,
                "unchanged: no input changed in content; 0 queries re-ran; wrote nothing; {ms:.1} ms"
            ),
            Outcome::Invalid(diagnostics) => {
                let errors = diagnostics.iter().map(|d| d.left_out.max(1)).sum::<usize>();
                let outside = !self.not_repaired.is_empty() || !self.put_back.is_empty();
                let cause = match self.changed_inputs.is_empty() && outside {
                    true => "the output folder changed outside locref".to_string(),
                    false => format!("changed {inputs}"),
                };
                write!(
                    f,
                    "{cause}; {} queries re-ran; {errors} error(s), ",
                    self.executed.len()
                )?;
                if !self.put_back.is_empty() {
                    write!(
                        f,
                        "put back {} as the last good build made them (changed outside locref), ",
                        names_or_count(&self.put_back, SHOWN_FILES, "file")
                    )?;
                }
                match self.not_repaired.is_empty() {
                    true => write!(f, "kept the last good output")?,
                    false => write!(
                        f,
                        "not repaired while the sources have errors: {} (changed outside locref; the build that clears the errors writes them again), kept the rest of the last good output",
                        names_or_count(&self.not_repaired, SHOWN_FILES, "file")
                    )?,
                }
                write!(f, "; {ms:.1} ms")
            }
            Outcome::Built(report) if self.first => {
                // What the session now serves or has on disk, and what that took. The queries keep
                // the wording of every other line ("re-ran"), which scripts read.
                let outputs = report.written.len() + report.unchanged;
                let queries = self.executed.len();
                match &self.published_to {
                    None => write!(
                        f,
                        "first build: {outputs} outputs in {ms:.1} ms, served from memory; {queries} queries re-ran"
                    ),
                    Some(out) => {
                        write!(
                            f,
                            "first build: {outputs} outputs in {ms:.1} ms; {queries} queries re-ran; wrote {} files to {}",
                            report.written.len(),
                            out.display()
                        )?;
                        if report.unchanged > 0 {
                            write!(f, " ({} were up to date)", report.unchanged)?;
                        }
                        Ok(())
                    }
                }
            }
            Outcome::Built(report) => {
                let mut wrote = match &self.published_to {
                    None if report.written.is_empty() => "served as it was".to_string(),
                    None => format!(
                        "updated {} in memory",
                        names_or_count(&report.written, SHOWN_FILES, "output")
                    ),
                    Some(_) if report.written.is_empty() => "wrote nothing".to_string(),
                    Some(_) => format!(
                        "wrote {}",
                        names_or_count(&report.written, SHOWN_FILES, "file")
                    ),
                };
                // What else the build did to the folder, each said only when it happened.
                for (files, done, why) in [
                    (&report.removed, "removed", ""),
                    (&report.repaired, "repaired", " (changed outside locref)"),
                    (
                        &report.kept,
                        "left",
                        " in place (no longer outputs, changed outside locref)",
                    ),
                ] {
                    if !files.is_empty() {
                        let named = names_or_count(files, SHOWN_FILES, "file");
                        wrote.push_str(&format!(", {done} {named}{why}"));
                    }
                }
                // A build no edit started: a repair of the output folder, or a rebuild after errors.
                let cause = match self.changed_inputs.is_empty() {
                    true if !report.repaired.is_empty() => {
                        "the output folder changed outside locref".to_string()
                    }
                    true => "built".to_string(),
                    false => format!("changed {inputs}"),
                };
                write!(
                    f,
                    "{cause}; {} queries re-ran; {wrote}; {ms:.1} ms",
                    self.executed.len()
                )?;
                if self.recovered {
                    write!(f, "; errors cleared, the output is current again")?;
                }
                Ok(())
            }
            // A publish that failed put back what it had put in place, unless even that failed (then
            // the error says so, and the next build repairs the folder).
            Outcome::IoError(e) if e.contains(crate::transaction::NOT_PUT_BACK) => {
                write!(f, "changed {inputs}; i/o error: {e}; {ms:.1} ms")
            }
            Outcome::IoError(e) => write!(
                f,
                "changed {inputs}; i/o error: {e}; kept the last good output; {ms:.1} ms"
            ),
            Outcome::Internal(message) => write!(
                f,
                "changed {inputs}; internal error (a bug in locref; please report it): {message}; kept the last good output; {ms:.1} ms"
            ),
        }
    }
}

/// Fault injection for the tests of `watch` and `serve`: with `LOCREF_PANIC_ON=<input path>` in the
/// environment, a rebuild whose changed inputs include that path panics, as a bug in a query would.
fn injected_panic(changed: &[String]) {
    if let Some(path) = std::env::var_os("LOCREF_PANIC_ON")
        && changed.iter().any(|c| path == c.as_str())
    {
        panic!("injected panic on {}", path.to_string_lossy());
    }
}

/// A project and where it publishes: an output folder, or only memory (the dev server).
pub struct Session {
    pub project: Project,
    /// The output folder; `None` publishes only in memory.
    pub out: Option<PathBuf>,
    publisher: Publisher,
    /// The `generated_at` of every build; `None` takes [`build_time`] (now, or `SOURCE_DATE_EPOCH`).
    pub fixed_time: Option<String>,
    /// Whether the output folder is behind the inputs (the last rebuild failed), so the next rebuild must
    /// render and emit even if no input changed.
    stale: bool,
    /// How every build of the session is made (its second thread, parked between rebuilds, and each
    /// output's size when last made, which sizes its batches).
    plan: Plan,
    /// Whether the last rebuild failed (its errors were shown and are not cleared yet).
    failed: bool,
    /// Whether files of the output folder were seen to change behind the session's back and are not
    /// repaired yet: the next rebuild compares every output with its record even if no input changed.
    repair_pending: bool,
    /// Whether the session has built (or tried to) yet: the first build reports what the session
    /// now serves, the later ones what changed.
    ran_once: bool,
    /// The inputs and time of the last good build of a session that writes to a folder: while the
    /// sources have errors, an output changed behind the session's back is written again from them.
    /// Holds a second copy of the files edited since, only until the next good build.
    last_good: Option<(crate::workspace::Inputs, String)>,
}

impl Session {
    /// Loads every input file under `root`. Nothing is built yet: call [`Session::build`].
    pub fn load(root: &Path, out: &Path, site: &'static Site) -> io::Result<Session> {
        Session::with_profile(root, Some(out), Profile::Session, site)
    }

    /// Like [`Session::load`], but publishing only in memory: nothing is written to disk.
    pub fn in_memory(root: &Path, site: &'static Site) -> io::Result<Session> {
        Session::with_profile(root, None, Profile::InMemory, site)
    }

    /// A session of `profile` publishing to `out` (in memory when `None`), nothing built yet.
    fn with_profile(
        root: &Path,
        out: Option<&Path>,
        profile: Profile,
        site: &'static Site,
    ) -> io::Result<Session> {
        Ok(Session {
            project: Project::load(root, site)?,
            out: out.map(Path::to_path_buf),
            publisher: profile.publisher(out),
            fixed_time: None,
            stale: true,
            plan: profile.plan(site),
            failed: false,
            repair_pending: false,
            ran_once: false,
            last_good: None,
        })
    }

    /// The outputs of the last good build, as published, by site path.
    pub fn site(&self) -> &std::collections::BTreeMap<String, Stamped> {
        self.publisher.site()
    }

    /// Why the output folder is no longer the folder the session locked, if it is not (its path replaced
    /// by a link to another folder): the session then writes nothing there.
    pub fn output_moved(&self) -> Option<String> {
        self.publisher.not_the_locked_folder()
    }

    /// Waits until the work the output folder's writer started after a build is done (tests, benchmarks).
    pub fn settle(&mut self) {
        self.publisher.settle();
    }

    /// Pins `generated_at` (tests, benchmarks, reproducible builds).
    pub fn with_fixed_time(mut self, time: impl Into<String>) -> Session {
        self.fixed_time = Some(time.into());
        self
    }

    /// Builds everything currently loaded and emits it (the first build of a session).
    pub fn build(&mut self) -> RebuildReport {
        let started = Instant::now();
        self.run(Vec::new(), started)
    }

    /// The per-rebuild step: re-reads `paths` (a watcher's hints: changed, created or deleted files or
    /// folders), and when any input changed in content, renders and emits.
    pub fn rebuild(&mut self, paths: &[PathBuf]) -> RebuildReport {
        let started = Instant::now();
        match self.project.sync_paths(paths) {
            Ok(changed) => self.finish(changed, started),
            Err(e) => self.io_failure(Vec::new(), started, format!("reading inputs: {e}")),
        }
    }

    /// One batch of a watcher: re-reads `paths` (every input folder when `None`, after an overflow or
    /// an input folder made again), and when the watcher also saw `outputs` change inside the output
    /// folder and any of them is no longer the file the session put there, compares every output with
    /// its record as well: one rebuild writes what the edit changed and repairs what was changed
    /// behind the session's back, even when no input changed in content.
    pub fn rebuild_batch(
        &mut self,
        paths: Option<&[PathBuf]>,
        outputs: &[PathBuf],
    ) -> RebuildReport {
        if !outputs.is_empty() && self.publisher.drifted(outputs) {
            self.publisher.verify_next();
            self.repair_pending = true;
        }
        match paths {
            Some(paths) => self.rebuild(paths),
            None => self.rescan(),
        }
    }

    /// What the watcher saw change inside the output folder (`paths`): when an output's file is no
    /// longer the one the session put there (deleted, replaced, edited; the folder removed), every
    /// output is compared with its record and what differs is written again. `None` when nothing
    /// differs (the watcher reporting the session's own writes).
    pub fn outputs_changed(&mut self, paths: &[PathBuf]) -> Option<RebuildReport> {
        if !self.publisher.drifted(paths) {
            return None;
        }
        self.repair_outputs()
    }

    /// Like [`Session::outputs_changed`], every output checked (by its file's stamp): after the output
    /// folder was watched again, what changed there before the watch took hold raised no event.
    pub fn outputs_changed_anywhere(&mut self) -> Option<RebuildReport> {
        if !self.publisher.drifted_anywhere() {
            return None;
        }
        self.repair_outputs()
    }

    /// Compares every output with its record and writes again what differs.
    fn repair_outputs(&mut self) -> Option<RebuildReport> {
        let started = Instant::now();
        self.publisher.verify_next();
        self.repair_pending = true;
        Some(self.run(Vec::new(), started))
    }

    /// Like [`Session::rebuild`], but re-reads every input folder (after a watcher overflow or error).
    pub fn rescan(&mut self) -> RebuildReport {
        let started = Instant::now();
        match self.project.rescan() {
            Ok(changed) => self.finish(changed, started),
            Err(e) => self.io_failure(Vec::new(), started, format!("rescanning inputs: {e}")),
        }
    }

    fn finish(&mut self, changed: Vec<String>, started: Instant) -> RebuildReport {
        injected_panic(&changed);
        if changed.is_empty() && !self.stale && !self.repair_pending {
            return RebuildReport {
                changed_inputs: changed,
                executed: Vec::new(),
                outcome: Outcome::Unchanged,
                elapsed: started.elapsed(),
                recovered: false,
                first: false,
                published_to: self.out.clone(),
                not_repaired: Vec::new(),
                put_back: Vec::new(),
            };
        }
        self.run(changed, started)
    }

    /// The report of a rebuild that panicked (see [`crate::watch::guarded`]): the output stays at the last
    /// good build, and the next rebuild renders and emits again.
    pub(crate) fn after_panic(&mut self, message: String, started: Instant) -> RebuildReport {
        self.stale = true;
        self.failed = true;
        RebuildReport {
            changed_inputs: Vec::new(),
            executed: (self.plan.site().take_executed)(&self.project.db),
            outcome: Outcome::Internal(message),
            elapsed: started.elapsed(),
            recovered: false,
            first: false,
            published_to: self.out.clone(),
            not_repaired: Vec::new(),
            put_back: Vec::new(),
        }
    }

    fn io_failure(
        &mut self,
        changed: Vec<String>,
        started: Instant,
        message: String,
    ) -> RebuildReport {
        self.stale = true;
        self.failed = true;
        let executed = (self.plan.site().take_executed)(&self.project.db);
        RebuildReport {
            changed_inputs: changed,
            executed,
            outcome: Outcome::IoError(message),
            elapsed: started.elapsed(),
            recovered: false,
            first: false,
            published_to: self.out.clone(),
            not_repaired: Vec::new(),
            put_back: Vec::new(),
        }
    }

    fn run(&mut self, changed: Vec<String>, started: Instant) -> RebuildReport {
        let mut report = self.run_once(changed, started);
        // A failed build writes nothing of its own: what was changed behind the session's back is
        // written again as the last good build made it, and what cannot be is named.
        if matches!(report.outcome, Outcome::Invalid(_)) && self.repair_pending {
            if let Some(put_back) = self.put_back_last_good() {
                report.put_back = put_back;
                report
                    .executed
                    .extend((self.plan.site().take_executed)(&self.project.db));
                report.executed.sort();
            }
            report.not_repaired = self.publisher.outputs_not_in_place();
            report.elapsed = started.elapsed();
        }
        report
    }

    /// Publishes the last good build again over an output folder changed behind the session's back
    /// while the sources have errors: the inputs are set back to that build's for the publish, then to
    /// what they are now. Only the outputs that differ from their record are written (the others are
    /// that build's already). `None` when there is no such build or it could not be published again.
    fn put_back_last_good(&mut self) -> Option<Vec<String>> {
        let (good, time) = self.last_good.clone()?;
        let now = self.project.inputs();
        self.project.restore(&good);
        self.project.set_build_time(&time);
        self.publisher.verify_next();
        let result = self
            .plan
            .publish(&mut self.project.db, &mut self.publisher, &time);
        self.project.restore(&now);
        match result {
            Ok(Ok(report)) => {
                self.repair_pending = false;
                Some(report.repaired)
            }
            // The last good inputs no longer build (the day moved past a check date) or the folder
            // cannot be written: the files stay named as not repaired.
            Ok(Err(_)) | Err(_) => None,
        }
    }

    fn run_once(&mut self, changed: Vec<String>, started: Instant) -> RebuildReport {
        let time = self.fixed_time.clone().unwrap_or_else(build_time);
        self.project.set_build_time(&time);
        // Every build streams: the outputs are rendered in batches, each offered to the publisher with
        // its digest, which asks for the bytes of only those whose content is not the published one, and
        // evicted after the batch (a session that writes to a folder never holds the whole site).
        let result = self
            .plan
            .publish(&mut self.project.db, &mut self.publisher, &time);
        let outcome = match result {
            Ok(Ok(report)) => {
                self.stale = false;
                self.repair_pending = false;
                Outcome::Built(report)
            }
            Ok(Err(diagnostics)) => {
                self.stale = true;
                Outcome::Invalid(diagnostics)
            }
            Err(e) => {
                self.stale = true;
                let out = self.out.as_deref().unwrap_or(Path::new("memory"));
                Outcome::IoError(format!("writing {}: {e}", out.display()))
            }
        };
        let executed = (self.plan.site().take_executed)(&self.project.db);
        let built = matches!(outcome, Outcome::Built(_));
        if built && self.out.is_some() {
            self.last_good = Some((self.project.inputs(), time.clone()));
        }
        let recovered = built && self.failed;
        self.failed = !built;
        let first = built && !self.ran_once;
        self.ran_once = true;
        RebuildReport {
            changed_inputs: changed,
            executed,
            outcome,
            elapsed: started.elapsed(),
            recovered,
            first,
            published_to: self.out.clone(),
            not_repaired: Vec::new(),
            put_back: Vec::new(),
        }
    }
}
