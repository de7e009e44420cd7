//! Replacing the files of an output folder so that a reader always sees a whole build: every new version
//! is first *staged* outside the published tree, and only when every file of the build is staged are they
//! *committed* into place, each by one atomic rename. A build that fails while staging (a full disk, an
//! unreadable folder) leaves the output folder exactly as it was; a killed build leaves no temporary file
//! in it (the staging files live in the cache folder beside it, see [`crate::outdir`]).
//!
//! How a file is staged is this module's own business, chosen by the [`Lifetime`] of the replacer:
//!
//! - **One-off** (`locref build`): a new file in the staging folder, renamed over the target. Nothing is
//!   kept afterwards, so a one-off build leaves no copy of the site in the cache.
//! - **Session** (`locref watch`): on Linux, one *spare* file per output in the cache, overwritten in place
//!   and exchanged with the target (`renameat2(RENAME_EXCHANGE)`); the spare then holds the previous
//!   version, ready for the next write. A fresh file costs its creation and the allocation of its blocks
//!   and cached pages, which was most of a single-fact rebuild's write time (BENCHMARKS.md); a spare has
//!   them already. After a session's first commit the spares of every published file are made ahead, as
//!   copies, on a thread of their own, so even the first edit of an output finds its spare.
//!
//! Either way a file is written beside the build, on a thread of its own ([`writer`]): the build goes on
//! rendering while the bytes are copied, and every file is written before any is put in place.
//!
//! A spare is only ever written through when no other name links to it, so a hard-linked copy of an
//! earlier output (`cp -al`, rsync `--link-dest`) is never changed. Filesystems without the exchange
//! (or a cache on another filesystem) fall back to staged files and renames.

use std::fs::File;
use std::io::{self, IoSlice, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use crate::outdir::pinned::{self, At, PinnedFolder};
use crate::outdir::{self, TEMPORARY_MARK, with_path};

mod writer;
pub(crate) use writer::Content;
use writer::Writer;

/// How an error says that a failed publish could not put the last build back whole.
pub(crate) const NOT_PUT_BACK: &str = "could not put back";

/// How long a replacer lives, which decides how it stages files (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifetime {
    /// One build, then the process ends.
    OneOff,
    /// Many rebuilds of one output folder, a human edit apart.
    Session,
}

/// How many bytes of a whole site's outputs may wait to be written: a few of a one-off build's batches
/// ([`crate::build::ONE_OFF_BATCH_BYTES`]), whose outputs are let go once written.
const WHOLE_SITE_QUEUE_BYTES: usize = 24 << 20;

/// How a staged file reaches its target (a path relative to the output folder).
#[derive(Debug)]
enum Staged {
    /// The spare holds the new version: exchange it with the target.
    Spare { spare: PathBuf, target: PathBuf },
    /// A new file holds the new version: rename it over the target.
    File { file: Staging, target: PathBuf },
}

/// Where a staging file is: in the cache's staging folder, or (when the cache is on another filesystem)
/// beside its target inside the output folder, under a temporary name reached through the pinned folder.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Staging {
    /// Its path, for messages and for reading it back.
    path: PathBuf,
    /// Its path relative to the output folder, when it is inside it.
    beside: Option<PathBuf>,
}

/// Stages and commits the files of one output folder (see the module documentation).
#[derive(Debug)]
pub(crate) struct Replacer {
    out: PathBuf,
    lifetime: Lifetime,
    /// Whether spares are used: a session on a filesystem that can exchange. Cleared for good the first
    /// time the filesystem refuses an exchange, or when the cache is on another filesystem.
    spares: bool,
    /// Whether the staging folder is on the output folder's filesystem (else files are staged beside
    /// their targets, under a name [`outdir::sweep_temporaries`] removes).
    staging_beside_out: Option<bool>,
    staged: Vec<Staged>,
    /// Numbers the staged files of this process.
    next_stage: u64,
    preparation: Option<SparePreparation>,
    /// The thread that writes what [`Replacer::stage`] stages; started by its first job.
    writer: Option<Writer>,
    /// Whether anything was committed yet.
    committed: bool,
    /// Whether files are put in place by exchanging them with the last version (Linux), which then
    /// stays where the new one was until [`Replacer::confirm`]. Cleared for good the first time the
    /// filesystem refuses.
    exchanges: bool,
    /// How to undo what was put in place or set aside since the last confirm, oldest first.
    undo: Vec<Undo>,
    /// `--clean` set the whole folder aside ([`Replacer::set_everything_aside`]).
    cleaning: bool,
    /// The output folder as the current publish found it: every change goes through it
    /// ([`Replacer::pin`]).
    pinned: Option<Arc<PinnedFolder>>,
}

/// How to undo one change to the output folder (see [`Replacer::roll_back`]). Targets are relative to
/// the output folder.
#[derive(Debug)]
enum Undo {
    /// A file was put where there was none: removed.
    Created { target: PathBuf },
    /// A file was replaced; `aside` holds the last version, which goes back. `keep_aside`: `aside` is
    /// the file's spare (the last version is the next write's spare), else it is deleted on confirm.
    Replaced {
        target: PathBuf,
        aside: Staging,
        keep_aside: bool,
    },
    /// A file was set aside (a stale output, or `--clean`): moved back. `site_path` names its spare.
    Removed {
        target: PathBuf,
        aside: Staging,
        site_path: String,
    },
}

impl Replacer {
    pub(crate) fn new(out: &Path, lifetime: Lifetime) -> Replacer {
        Replacer {
            out: out.to_path_buf(),
            lifetime,
            // Spare files are speed machinery: without the `streaming` feature a session writes as a
            // one-off build does.
            spares: lifetime == Lifetime::Session
                && cfg!(target_os = "linux")
                && cfg!(feature = "streaming"),
            staging_beside_out: None,
            staged: Vec::new(),
            next_stage: 0,
            preparation: None,
            writer: None,
            committed: false,
            exchanges: cfg!(target_os = "linux"),
            undo: Vec::new(),
            cleaning: false,
            pinned: None,
        }
    }

    /// Holds the output folder as it is now, by a handle, for the publish that begins: whatever its
    /// path is made to lead to meanwhile (a link, another folder), every file the publish puts in
    /// place, sets aside or puts back goes into this folder, the one that was checked and locked.
    /// A folder not made yet is made and pinned by the publish's first write (a build that fails its
    /// checks makes none), and refused then if a link has taken its place.
    pub(crate) fn pin(&mut self) -> io::Result<()> {
        let real = outdir::resolved(&self.out);
        self.pinned = match std::fs::symlink_metadata(&real) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            _ => Some(Arc::new(PinnedFolder::open(&real)?)),
        };
        Ok(())
    }

    /// The pinned output folder; pinned (and made) now if the publish found none.
    fn folder(&mut self) -> io::Result<Arc<PinnedFolder>> {
        if let Some(folder) = &self.pinned {
            return Ok(folder.clone());
        }
        let folder = Arc::new(PinnedFolder::open(&outdir::resolved(&self.out))?);
        self.pinned = Some(folder.clone());
        Ok(folder)
    }

    /// The [`outdir::FileStamp`] of the published file of `site_path`, read through the pinned folder.
    pub(crate) fn stamp_of(&mut self, site_path: &str) -> Option<outdir::FileStamp> {
        if outdir::site_path_problem(site_path).is_some() {
            return None;
        }
        self.folder()
            .ok()?
            .stamp(Path::new(site_path.trim_start_matches('/')))
    }

    /// The file `site_path` publishes to, relative to the output folder; refused when it is not a path
    /// inside the folder or a link on the way leads out of it (said now, before anything is staged; the
    /// pinned folder refuses such a link again at the write).
    fn target_of(&self, site_path: &str) -> io::Result<PathBuf> {
        let target = outdir::file_for(&self.out, site_path).ok_or_else(|| {
            io::Error::other(format!(
                "refusing to write `{site_path}`: not a path inside the output folder"
            ))
        })?;
        outdir::no_link_between(&self.out, &target)?;
        Ok(PathBuf::from(site_path.trim_start_matches('/')))
    }

    /// Where a staging file is, for a rename or a removal.
    fn place(&mut self, staging: &Staging, make: bool) -> io::Result<At> {
        match &staging.beside {
            None => Ok(At::cache(&staging.path)),
            Some(rel) => self.folder()?.at(rel, make),
        }
    }

    fn spare_of(&self, site_path: &str) -> PathBuf {
        outdir::spare_root(&self.out).join(site_path.trim_start_matches('/'))
    }

    /// Stages the new content of `site_path`, where it waits for [`Replacer::commit`]; the output folder
    /// does not change yet. The bytes are written beside the caller, which goes on meanwhile (see
    /// [`writer`]); [`Replacer::finish_staging`] waits for them and reports what failed.
    pub(crate) fn stage(&mut self, site_path: &str, content: impl Content) -> io::Result<()> {
        let target = self.target_of(site_path)?;
        let shown = self.out.join(&target);
        // A spare is exchanged with its target, which only works on one filesystem: an output folder
        // that is a mount point of its own (a tmpfs, a container's volume) has its cache on its
        // parent's, and stages its files beside their targets instead.
        if self.spares && !self.cache_beside_out()? {
            self.spares = false;
        }
        if self.spares {
            let spare = self.spare_of(site_path);
            match exchange::open_spare(&spare) {
                Ok(file) => {
                    self.staged.push(Staged::Spare { spare, target });
                    return self.send(file, shown, content);
                }
                Err(e) => {
                    // The cache cannot hold spares: stage files from now on. Any other error is the
                    // build's.
                    self.spares = false;
                    let _ = std::fs::remove_file(&spare);
                    if !is_filesystem_refusal(&e) {
                        return Err(with_path(e, &shown));
                    }
                }
            }
        }
        let (_, file) = self.create_staged_file(&target)?;
        self.send(file, shown, content)
    }

    /// Creates a staging file for `target` and records it as staged (so an abandoned build removes it).
    fn create_staged_file(&mut self, target: &Path) -> io::Result<(Staging, File)> {
        let staging = self.staging_file(target)?;
        let file = pinned::create_file(&self.place(&staging, true)?)
            .map_err(|e| with_path(e, &self.out.join(target)))?;
        self.staged.push(Staged::File {
            file: staging.clone(),
            target: target.to_path_buf(),
        });
        Ok((staging, file))
    }

    /// Hands `content` to the writing thread (started by the first file), to be written into `file`.
    fn send(&mut self, file: File, target: PathBuf, content: impl Content) -> io::Result<()> {
        let limit = self.queue_limit();
        if self.writer.is_none() {
            self.writer = Some(Writer::start()?);
        }
        if let Some(writer) = &mut self.writer {
            writer.send(file, target, content, limit);
        }
        Ok(())
    }

    /// How many bytes may wait to be written. A one-off build and a session's first build write the
    /// whole site, each output let go once written: a few batches. After that a session's edit writes a
    /// few outputs, the largest (`llms-full.txt`) made of pieces the session keeps anyway, and waiting
    /// for the writer would only hold up the outputs after it.
    fn queue_limit(&self) -> usize {
        match (self.lifetime, self.committed) {
            (Lifetime::Session, true) => usize::MAX,
            _ => WHOLE_SITE_QUEUE_BYTES,
        }
    }

    /// Waits until every staged file is written (writing too meanwhile); the first write that failed is
    /// the error.
    pub(crate) fn finish_staging(&mut self) -> io::Result<()> {
        match &mut self.writer {
            Some(writer) => writer.drain().into_iter().next().map_or(Ok(()), Err),
            None => Ok(()),
        }
    }

    /// Starts staging the new content of `site_path` a part at a time ([`GrowingFile::append`]), for an
    /// output a one-off build hands over piece by piece; [`Replacer::end_growing`] says whether it is
    /// kept. Until then it counts as staged, so an abandoned build removes it too.
    pub(crate) fn begin_growing(&mut self, site_path: &str) -> io::Result<GrowingFile> {
        let target = self.target_of(site_path)?;
        let (staging, file) = self.create_staged_file(&target)?;
        Ok(GrowingFile {
            file,
            staging,
            target: self.out.join(target),
            len: 0,
        })
    }

    /// Ends a file staged a part at a time: kept to be put in place by [`Replacer::commit`], or removed
    /// (its content is the published one).
    pub(crate) fn end_growing(&mut self, growing: GrowingFile, keep: bool) -> io::Result<()> {
        let GrowingFile {
            file,
            staging,
            target,
            ..
        } = growing;
        drop(file);
        if !keep {
            self.staged
                .retain(|staged| !matches!(staged, Staged::File { file, .. } if *file == staging));
            pinned::remove_file(&self.place(&staging, false)?)
                .map_err(|e| with_path(e, &target))?;
        }
        Ok(())
    }

    /// A new staging file for `target` (relative to the output folder): in the cache's staging folder
    /// when it shares the output folder's filesystem, else beside the target under a temporary name (its
    /// folder is made when the file is created or moved there).
    fn staging_file(&mut self, target: &Path) -> io::Result<Staging> {
        self.next_stage += 1;
        let n = self.next_stage;
        let name = target.file_name().and_then(|n| n.to_str()).unwrap_or("out");
        Ok(if self.cache_beside_out()? {
            let staging = outdir::staging_dir(&self.out);
            Staging {
                path: staging.join(format!("{n}-{}-{name}", std::process::id())),
                beside: None,
            }
        } else {
            let beside =
                target.with_file_name(format!(".{name}{TEMPORARY_MARK}{}-{n}", std::process::id()));
            Staging {
                path: self.out.join(&beside),
                beside: Some(beside),
            }
        })
    }

    /// Whether the cache folder (its staging folder and spares) is on the output folder's filesystem
    /// and a file made there can be renamed into the output folder: asked once.
    fn cache_beside_out(&mut self) -> io::Result<bool> {
        if let Some(known) = self.staging_beside_out {
            return Ok(known);
        }
        let staging = outdir::staging_dir(&self.out);
        std::fs::create_dir_all(&self.out).map_err(|e| with_path(e, &self.out))?;
        let ok = std::fs::create_dir_all(&staging).is_ok()
            && same_filesystem(&self.out, &staging)
            && renames_into(&staging, &self.out)?;
        self.staging_beside_out = Some(ok);
        Ok(ok)
    }

    /// Puts every staged file into place, each with one atomic rename or exchange, and keeps what undoes
    /// it until [`Replacer::confirm`] or [`Replacer::roll_back`]. When one cannot be put in place (a
    /// read-only folder, a name the filesystem refuses, a file where a folder must go), those already in
    /// place are put back and the error returned: the output folder is the last build's again.
    pub(crate) fn put_in_place(&mut self) -> io::Result<()> {
        self.finish_staging()?;
        let mut staged = std::mem::take(&mut self.staged).into_iter();
        while let Some(next) = staged.next() {
            if let Err(e) = self.put_one(&next) {
                // The one that failed and those after it are still staged: an abandon removes them.
                self.staged.push(next);
                self.staged.extend(staged);
                return Err(self.rolled_back(e));
            }
        }
        Ok(())
    }

    /// Puts one staged file in place, noting how to undo it.
    fn put_one(&mut self, staged: &Staged) -> io::Result<()> {
        let (from, target, spare) = match staged {
            Staged::Spare { spare, target } => (At::cache(spare), target, true),
            Staged::File { file, target } => (self.place(file, false)?, target, false),
        };
        let to = self.folder()?.at(target, true)?;
        // Only a file is replaced: a folder or a link in an output's place is not locref's to move.
        let existing = pinned::metadata(&to)?;
        match &existing {
            Some(meta) if !meta.file_type().is_file() => {
                return Err(io::Error::other(format!(
                    "{} is a {} where an output file goes: move it away, then build again",
                    to.shown().display(),
                    if meta.is_dir() {
                        "folder"
                    } else {
                        "link or special file"
                    }
                )));
            }
            _ => {}
        }
        // The last version goes where the new one was (an exchange), so it can be put back; without
        // exchanges, a hard link keeps it.
        if self.exchanges {
            match pinned::exchange(&from, &to) {
                Ok(true) => {
                    let aside = match staged {
                        Staged::Spare { spare, .. } => Staging {
                            path: spare.clone(),
                            beside: None,
                        },
                        Staged::File { file, .. } => file.clone(),
                    };
                    self.undo.push(Undo::Replaced {
                        target: target.clone(),
                        aside,
                        keep_aside: spare,
                    });
                    return Ok(());
                }
                Ok(false) => {
                    self.undo.push(Undo::Created {
                        target: target.clone(),
                    });
                    return Ok(());
                }
                Err(e) if is_filesystem_refusal(&e) => self.exchanges = false,
                Err(e) => return Err(with_path(e, to.shown())),
            }
        }
        if spare {
            // A spare is only ever exchanged: without exchanges it is a staged file like any other.
            self.spares = false;
        }
        if existing.is_some() {
            let backup = self.staging_file(target)?;
            pinned::hard_link(&to, &self.place(&backup, true)?)?;
            self.undo.push(Undo::Replaced {
                target: target.clone(),
                aside: backup,
                keep_aside: false,
            });
            if let Err(e) = pinned::rename(&from, &to) {
                // Nothing was replaced: only the backup goes.
                if let Some(Undo::Replaced { aside, .. }) = self.undo.pop() {
                    let _ = self.remove_staging(&aside);
                }
                return Err(e);
            }
        } else {
            pinned::rename(&from, &to)?;
            self.undo.push(Undo::Created {
                target: target.clone(),
            });
        }
        Ok(())
    }

    /// Removes a staging file (best effort: its name is this module's, and a sweep finds any left).
    fn remove_staging(&mut self, staging: &Staging) -> io::Result<()> {
        pinned::remove_file(&self.place(staging, false)?)
    }

    /// Moves the published file of `site_path` aside (a file already gone is fine): it is deleted by
    /// [`Replacer::confirm`], or put back by [`Replacer::roll_back`].
    pub(crate) fn remove(&mut self, site_path: &str) -> io::Result<()> {
        if outdir::site_path_problem(site_path).is_some() {
            // A manifest entry that is not a path inside the folder names nothing to remove.
            return Ok(());
        }
        let target = PathBuf::from(site_path.trim_start_matches('/'));
        let at = match self.folder()?.at(&target, false) {
            Ok(at) => at,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        if pinned::metadata(&at)?.is_none() {
            return Ok(());
        }
        self.set_aside(target, site_path)
    }

    /// Moves `target` (relative to the output folder) to a staging file, noting how to put it back
    /// (`site_path` names its spare, if any, which [`Replacer::confirm`] removes with it).
    fn set_aside(&mut self, target: PathBuf, site_path: &str) -> io::Result<()> {
        let aside = self.staging_file(&target)?;
        let from = self.folder()?.at(&target, false)?;
        pinned::rename(&from, &self.place(&aside, true)?)
            .map_err(|e| with_path(e, from.shown()))?;
        self.undo.push(Undo::Removed {
            target,
            aside,
            site_path: site_path.to_string(),
        });
        Ok(())
    }

    /// `--clean`: moves every file of the output folder aside (but the replacer's own temporaries), so
    /// the build's files go into an empty folder; [`Replacer::confirm`] deletes them, with the folders
    /// left empty and the spares of a session that published there, and [`Replacer::roll_back`] puts
    /// them back. Called once the build is staged and checked, just before [`Replacer::put_in_place`].
    pub(crate) fn set_everything_aside(&mut self) -> io::Result<()> {
        let folder = self.folder()?;
        let files: Vec<PathBuf> = outdir::files_in(folder.path())?
            .into_iter()
            .filter(|(_, temporary)| !temporary)
            .filter_map(|(path, _)| Some(path.strip_prefix(folder.path()).ok()?.to_path_buf()))
            .collect();
        for target in files {
            if let Err(e) = self.set_aside(target, "") {
                return Err(self.rolled_back(e));
            }
        }
        self.cleaning = true;
        Ok(())
    }

    /// Makes what was put in place final: the last versions set aside are deleted, with the folders
    /// left empty and their spares. After a session's first confirm, starts making the spares of the
    /// published files.
    pub(crate) fn confirm(&mut self) {
        for undo in std::mem::take(&mut self.undo) {
            match undo {
                Undo::Created { .. } => {}
                Undo::Replaced {
                    aside, keep_aside, ..
                } => {
                    if !keep_aside {
                        let _ = self.remove_staging(&aside);
                    }
                }
                Undo::Removed {
                    target,
                    aside,
                    site_path,
                } => {
                    let _ = self.remove_staging(&aside);
                    if let Ok(folder) = self.folder() {
                        folder.remove_empty_parents(&target);
                    }
                    let spares = outdir::spare_root(&self.out);
                    if !site_path.is_empty() {
                        let spare = spares.join(site_path.trim_start_matches('/'));
                        if std::fs::remove_file(&spare).is_ok() {
                            outdir::remove_empty_parents(&spares, &spare);
                        }
                    }
                }
            }
        }
        if std::mem::take(&mut self.cleaning) {
            let _ = std::fs::remove_dir_all(outdir::spare_root(&self.out));
        }
        self.committed = true;
        if self.lifetime == Lifetime::Session && self.spares && self.preparation.is_none() {
            self.preparation = Some(SparePreparation::start(
                self.out.clone(),
                outdir::spare_root(&self.out),
            ));
        }
    }

    /// Puts back what was put in place or set aside since the last confirm, newest first: the output
    /// folder is the last build's again. The error names what could not be put back.
    pub(crate) fn roll_back(&mut self) -> io::Result<()> {
        self.cleaning = false;
        let mut failed = Vec::new();
        while let Some(undo) = self.undo.pop() {
            let result = self.folder().and_then(|folder| match &undo {
                Undo::Created { target } => {
                    match folder
                        .at(target, false)
                        .and_then(|at| pinned::remove_file(&at))
                    {
                        Ok(()) => {
                            folder.remove_empty_parents(target);
                            Ok(())
                        }
                        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                        Err(e) => Err(e),
                    }
                }
                Undo::Replaced { target, aside, .. } | Undo::Removed { target, aside, .. } => {
                    let to = folder.at(target, true)?;
                    pinned::rename(&self.place(aside, false)?, &to)
                }
            });
            if let Err(e) = result {
                failed.push(e.to_string());
            }
        }
        match failed.first() {
            None => Ok(()),
            Some(first) => Err(io::Error::other(format!(
                "{NOT_PUT_BACK} {} file(s) of the last build ({first}); the next build writes them again",
                failed.len()
            ))),
        }
    }

    /// `error`, after rolling back; says so when the roll back failed too.
    fn rolled_back(&mut self, error: io::Error) -> io::Error {
        match self.roll_back() {
            Ok(()) => error,
            Err(also) => io::Error::new(error.kind(), format!("{error}; {also}")),
        }
    }

    /// [`Replacer::put_in_place`] and [`Replacer::confirm`] at once (nothing else must succeed first).
    pub(crate) fn commit(&mut self) -> io::Result<()> {
        self.put_in_place()?;
        self.confirm();
        Ok(())
    }

    /// Drops what was staged (after a failure): the output folder stays as it was.
    pub(crate) fn abandon(&mut self) {
        // What the writer was given is written first, so no staging file appears after this.
        let _ = self.finish_staging();
        for staged in std::mem::take(&mut self.staged) {
            if let Staged::File { file, .. } = staged {
                let _ = self.remove_staging(&file);
            }
        }
    }

    /// Replaces a file of the cache folder (the manifest, the journal) atomically.
    pub(crate) fn write_private(&mut self, path: &Path, parts: &[&[u8]]) -> io::Result<()> {
        if self.spares {
            let mut spare = path.as_os_str().to_owned();
            spare.push(".spare");
            let spare = PathBuf::from(spare);
            if exchange::write_spare(&spare, parts).is_ok()
                && exchange::swap_in(&spare, path).is_ok()
            {
                return Ok(());
            }
        }
        write_atomic(path, parts).map_err(|e| with_path(e, path))
    }

    /// Waits until the spares a session's first commit started making are made (tests, benchmarks).
    pub(crate) fn wait_for_spares(&mut self) {
        if let Some(preparation) = self.preparation.take() {
            preparation.wait();
        }
    }
}

/// A file being staged a part at a time (see [`Replacer::begin_growing`]).
#[derive(Debug)]
pub(crate) struct GrowingFile {
    file: File,
    staging: Staging,
    /// The output file it will replace (named in errors: the staging file's name is this module's).
    target: PathBuf,
    /// The bytes written so far.
    len: u64,
}

impl GrowingFile {
    /// Writes the concatenation of `parts` after what was written before.
    pub(crate) fn append(&mut self, parts: &[&[u8]]) -> io::Result<()> {
        write_parts(&mut self.file, parts).map_err(|e| with_path(e, &self.target))?;
        self.len += parts.iter().map(|part| part.len() as u64).sum::<u64>();
        Ok(())
    }

    /// The bytes written so far.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// Whether the file at `other` holds exactly the bytes staged so far, read a block at a time (an
    /// output assembled piece by piece is not held in memory to compare): how a file only touched since
    /// it was put in place is told from one edited.
    pub(crate) fn same_bytes_as(&mut self, other: &Path) -> bool {
        use std::io::Read;
        if std::fs::symlink_metadata(other).map(|m| m.len()).ok() != Some(self.len) {
            return false;
        }
        let (Ok(mut staged), Ok(mut there)) = (File::open(&self.staging.path), File::open(other))
        else {
            return false;
        };
        let (mut a, mut b) = (vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]);
        loop {
            let Ok(n) = staged.read(&mut a) else {
                return false;
            };
            if n == 0 {
                // The other file may have grown since its length was read.
                return there.read(&mut b[..1]).is_ok_and(|m| m == 0);
            }
            if there.read_exact(&mut b[..n]).is_err() || a[..n] != b[..n] {
                return false;
            }
        }
    }

    /// Takes back what was written after the first `len` bytes: the next part goes there.
    pub(crate) fn truncate(&mut self, len: u64) -> io::Result<()> {
        use std::io::Seek;
        let len = len.min(self.len);
        self.file
            .set_len(len)
            .and_then(|()| self.file.seek(io::SeekFrom::Start(len)).map(drop))
            .map_err(|e| with_path(e, &self.target))?;
        self.len = len;
        Ok(())
    }
}

/// Whether `e` says the filesystem cannot do what spares need (exchange, a cache on another device),
/// so renames must do.
fn is_filesystem_refusal(e: &io::Error) -> bool {
    exchange::unsupported(e)
}

/// Writes the concatenation of `parts` to `path` through a temporary file beside it and a rename, so
/// readers never see half a file. For files outside the published tree (the cache).
pub(crate) fn write_atomic(path: &Path, parts: &[&[u8]]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("out");
    let tmp = dir.join(format!(".{name}{TEMPORARY_MARK}{}", std::process::id()));
    write_new(&tmp, parts)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// Creates `path` (replacing a leftover of the same name) with the concatenation of `parts`.
fn write_new(path: &Path, parts: &[&[u8]]) -> io::Result<()> {
    write_parts(&mut File::create(path)?, parts)
}

/// Writes the concatenation of `parts` over a file opened at its start, then cuts it to that length: a
/// spare overwritten in place keeps its blocks and cached pages, where truncating first would free them
/// and allocate them again.
fn overwrite(file: &mut File, parts: &[&[u8]]) -> io::Result<()> {
    write_parts(file, parts)?;
    file.set_len(parts.iter().map(|part| part.len() as u64).sum())
}

/// Writes the concatenation of `parts` with vectored writes (no copy into one buffer first).
fn write_parts(file: &mut File, parts: &[&[u8]]) -> io::Result<()> {
    // Empty parts are left out: a write of nothing but empty slices writes 0 bytes, which is not a
    // failure here (an empty file such as /.nojekyll is an output too).
    let mut slices: Vec<IoSlice> = parts
        .iter()
        .filter(|part| !part.is_empty())
        .map(|part| IoSlice::new(part))
        .collect();
    let mut rest = &mut slices[..];
    while !rest.is_empty() {
        match file.write_vectored(rest) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(written) => IoSlice::advance_slices(&mut rest, written),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Whether a file staged in `staging` can be renamed into `out`: a probe file, made, moved and removed
/// before anything is staged. A folder mounted apart (a bind mount; the same device, another mount)
/// cannot take renames from outside it, so files are staged beside their targets there; a folder
/// nothing can be written into is said so now, not as the rename error of the first file.
fn renames_into(staging: &Path, out: &Path) -> io::Result<bool> {
    let name = format!("probe-{}", std::process::id());
    let from = staging.join(&name);
    let to = out.join(format!(".{name}{TEMPORARY_MARK}0"));
    if File::create(&from).is_err() {
        return Ok(false);
    }
    let moved = std::fs::rename(&from, &to);
    let _ = std::fs::remove_file(&from);
    match moved {
        Ok(()) => {
            let _ = std::fs::remove_file(&to);
            Ok(true)
        }
        Err(e) if e.kind() == io::ErrorKind::CrossesDevices => Ok(false),
        Err(e) => Err(io::Error::new(
            e.kind(),
            format!("cannot write into the output folder {}: {e}", out.display()),
        )),
    }
}

/// Whether two existing folders are on one filesystem (where a file can be renamed from one to the other).
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

/// Makes the missing spares of a session's output folder on a thread of its own, right after its first
/// commit, so that the first edit of an output finds its spare ready: each spare is a copy of its
/// published file, written under a temporary name and renamed into place only if no spare appeared
/// meanwhile, so a write that needs the spare first makes its own and this thread never writes into a
/// spare that a write may use.
#[derive(Debug)]
struct SparePreparation {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl SparePreparation {
    fn start(out: PathBuf, spares: PathBuf) -> SparePreparation {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::Builder::new()
            .name("locref-spares".into())
            .spawn(move || {
                if !same_filesystem(&out, spares.parent().unwrap_or(&spares)) {
                    return;
                }
                let mut stack = vec![out.clone()];
                while let Some(dir) = stack.pop() {
                    for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                        if stopped.load(Ordering::Relaxed) {
                            return;
                        }
                        let path = entry.path();
                        match entry.file_type() {
                            Ok(t) if t.is_dir() => stack.push(path),
                            Ok(t) if t.is_file() => {
                                let Ok(relative) = path.strip_prefix(&out) else {
                                    continue;
                                };
                                // Best effort: a spare that cannot be made now is made by its first write.
                                let _ = exchange::prepare(&path, &spares.join(relative));
                            }
                            _ => {}
                        }
                    }
                }
            })
            .ok();
        SparePreparation { stop, thread }
    }

    fn wait(mut self) {
        self.join();
    }

    fn join(&mut self) {
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for SparePreparation {
    /// Stops after the spare being made, and waits for it.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.join();
    }
}

#[cfg(target_os = "linux")]
mod exchange {
    use std::fs::File;
    use std::io;
    use std::os::unix::fs::MetadataExt;
    use std::path::Path;

    use rustix::fs::{CWD, Mode, OFlags, RenameFlags};

    /// Overwrites the spare (creating it when missing) with the concatenation of `parts`.
    pub(crate) fn write_spare(spare: &Path, parts: &[&[u8]]) -> io::Result<()> {
        super::overwrite(&mut open_spare(spare)?, parts)
    }

    /// Exchanges `from` with `target` (true), or moves it there when the target does not exist yet
    /// (false).
    pub(crate) fn swap_in(from: &Path, target: &Path) -> io::Result<bool> {
        match rustix::fs::renameat_with(CWD, from, CWD, target, RenameFlags::EXCHANGE) {
            Ok(()) => Ok(true),
            Err(rustix::io::Errno::NOENT) => std::fs::rename(from, target).map(|()| false),
            Err(e) => Err(e.into()),
        }
    }

    /// Opens the spare for overwriting, creating it (and its folder) when missing. Anything that is not a
    /// plain file of its own (a symlink, a folder, a file with other hard links) is replaced by a new
    /// empty file rather than written through.
    pub(crate) fn open_spare(spare: &Path) -> io::Result<File> {
        let flags = OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        // The session's preparation of spares may put a spare in place between the open that finds none
        // and the creation: then the spare is opened again, once.
        let mut raced = false;
        loop {
            match rustix::fs::openat(CWD, spare, flags, Mode::empty()) {
                Ok(fd) => {
                    let file = File::from(fd);
                    let meta = file.metadata()?;
                    if meta.is_file() && meta.nlink() == 1 {
                        return Ok(file);
                    }
                    drop(file);
                    std::fs::remove_file(spare)?;
                }
                Err(rustix::io::Errno::NOENT) => {
                    if let Some(dir) = spare.parent() {
                        std::fs::create_dir_all(dir)?;
                    }
                }
                // A symlink (ELOOP with NOFOLLOW) or a folder: not ours to write through.
                Err(rustix::io::Errno::ISDIR) => std::fs::remove_dir_all(spare)?,
                Err(_) => std::fs::remove_file(spare)?,
            }
            match std::fs::File::create_new(spare) {
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && !raced => raced = true,
                created => return created,
            }
        }
    }

    /// Makes the spare `spare` as a copy of `published`, unless it exists: copied under a temporary name,
    /// then renamed into place without replacing anything.
    pub(crate) fn prepare(published: &Path, spare: &Path) -> io::Result<()> {
        if spare.symlink_metadata().is_ok() {
            return Ok(());
        }
        if let Some(dir) = spare.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut name = spare.as_os_str().to_owned();
        name.push(".locref-prep");
        let temporary = std::path::PathBuf::from(name);
        std::fs::copy(published, &temporary)?;
        match rustix::fs::renameat_with(CWD, &temporary, CWD, spare, RenameFlags::NOREPLACE) {
            Ok(()) => Ok(()),
            Err(e) => {
                let _ = std::fs::remove_file(&temporary);
                match e {
                    rustix::io::Errno::EXIST => Ok(()),
                    e => Err(e.into()),
                }
            }
        }
    }

    /// Whether `e` says the filesystem cannot exchange these two paths, so renames must do.
    pub(crate) fn unsupported(e: &io::Error) -> bool {
        matches!(
            rustix::io::Errno::from_io_error(e),
            Some(
                rustix::io::Errno::INVAL
                    | rustix::io::Errno::XDEV
                    | rustix::io::Errno::NOSYS
                    | rustix::io::Errno::OPNOTSUPP
            )
        )
    }
}

#[cfg(not(target_os = "linux"))]
mod exchange {
    use std::io;
    use std::path::Path;

    pub(crate) fn write_spare(_: &Path, _: &[&[u8]]) -> io::Result<()> {
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }

    pub(crate) fn swap_in(_: &Path, _: &Path) -> io::Result<bool> {
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }

    pub(crate) fn open_spare(_: &Path) -> io::Result<std::fs::File> {
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }

    pub(crate) fn prepare(_: &Path, _: &Path) -> io::Result<()> {
        Ok(())
    }

    pub(crate) fn unsupported(_: &io::Error) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files_under(dir: &Path) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                let p = entry.path();
                if p.is_dir() {
                    stack.push(p);
                } else {
                    out.push(p.strip_prefix(dir).unwrap().to_string_lossy().into_owned());
                }
            }
        }
        out.sort();
        out
    }

    fn publish(replacer: &mut Replacer, files: &[(&str, &[u8])]) {
        for (path, bytes) in files {
            replacer.stage(path, bytes.to_vec()).unwrap();
        }
        replacer.commit().unwrap();
    }

    #[test]
    fn a_single_build_stages_outside_the_folder_and_keeps_no_copy() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("site");
        let mut replacer = Replacer::new(&out, Lifetime::OneOff);
        replacer
            .stage("/a/x.json", b"new version".to_vec())
            .unwrap();
        // Staged, not published: the output folder holds nothing yet.
        assert!(files_under(&out).is_empty());
        replacer.commit().unwrap();
        assert_eq!(std::fs::read(out.join("a/x.json")).unwrap(), b"new version");
        publish(&mut replacer, &[("/a/x.json", b"third")]);
        assert_eq!(files_under(&out), ["a/x.json"]);
        assert!(files_under(&outdir::cache_dir(&out)).is_empty());
    }

    #[test]
    fn a_growing_file_takes_back_its_last_parts_and_goes_on_from_there() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("site");
        let mut replacer = Replacer::new(&out, Lifetime::OneOff);
        let mut file = replacer.begin_growing("/llms-full.txt").unwrap();
        file.append(&[b"head\n", b"kept\n"]).unwrap();
        let mark = file.len();
        assert_eq!(mark, 10);
        file.append(&[b"taken ", b"back\n"]).unwrap();
        file.truncate(mark).unwrap();
        assert_eq!(file.len(), mark);
        file.append(&[b"instead\n"]).unwrap();
        // Beyond what was written: nothing to take back.
        file.truncate(1000).unwrap();
        assert_eq!(file.len(), 18);
        replacer.end_growing(file, true).unwrap();
        replacer.commit().unwrap();
        assert_eq!(
            std::fs::read(out.join("llms-full.txt")).unwrap(),
            b"head\nkept\ninstead\n"
        );
    }

    #[test]
    fn an_abandoned_stage_leaves_the_folder_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("site");
        let mut replacer = Replacer::new(&out, Lifetime::OneOff);
        publish(&mut replacer, &[("/x.json", b"old")]);
        replacer.stage("/x.json", b"new".to_vec()).unwrap();
        replacer.stage("/y.json", b"new".to_vec()).unwrap();
        replacer.abandon();
        assert_eq!(files_under(&out), ["x.json"]);
        assert_eq!(std::fs::read(out.join("x.json")).unwrap(), b"old");
        assert!(files_under(&outdir::cache_dir(&out)).is_empty());
    }

    #[test]
    fn paths_outside_the_folder_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("site");
        let mut replacer = Replacer::new(&out, Lifetime::Session);
        for bad in ["/../victim.txt", "/a/../../victim.txt", "//x"] {
            assert!(replacer.stage(bad, b"x".to_vec()).is_err(), "{bad}");
            replacer.remove(bad).unwrap();
        }
        assert!(!dir.path().join("victim.txt").exists());
    }

    #[cfg(target_os = "linux")]
    #[cfg(feature = "streaming")] // spares are speed machinery
    #[test]
    fn a_session_exchanges_through_spares_and_makes_them_ahead() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("site");
        let mut replacer = Replacer::new(&out, Lifetime::Session);
        publish(
            &mut replacer,
            &[("/a/x.json", b"first"), ("/b.html", b"page")],
        );
        replacer.wait_for_spares();
        let spares = outdir::spare_root(&out);
        // After the first commit every published file has a spare, a copy in a file of its own.
        assert_eq!(files_under(&spares), ["a/x.json", "b.html"]);
        assert_eq!(std::fs::read(spares.join("a/x.json")).unwrap(), b"first");
        let spare_inode = std::fs::metadata(spares.join("a/x.json")).unwrap().ino();
        publish(&mut replacer, &[("/a/x.json", b"second")]);
        assert_eq!(std::fs::read(out.join("a/x.json")).unwrap(), b"second");
        // The write went through the prepared spare, which now holds the previous version.
        assert_eq!(
            std::fs::metadata(out.join("a/x.json")).unwrap().ino(),
            spare_inode
        );
        assert_eq!(std::fs::read(spares.join("a/x.json")).unwrap(), b"first");
        assert_eq!(files_under(&out), ["a/x.json", "b.html"]);
    }

    #[cfg(target_os = "linux")]
    #[cfg(feature = "streaming")] // spares are speed machinery
    #[test]
    fn a_hard_linked_or_symlinked_spare_is_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("site");
        let mut replacer = Replacer::new(&out, Lifetime::Session);
        publish(&mut replacer, &[("/index.html", b"one")]);
        replacer.wait_for_spares();
        publish(&mut replacer, &[("/index.html", b"two")]);
        // A snapshot of the output folder made with hard links, then more exchanges: the spare is the
        // snapshot's file and must not be overwritten.
        let snapshot = dir.path().join("snapshot.html");
        std::fs::hard_link(out.join("index.html"), &snapshot).unwrap();
        publish(&mut replacer, &[("/index.html", b"three")]);
        publish(&mut replacer, &[("/index.html", b"four")]);
        assert_eq!(std::fs::read(&snapshot).unwrap(), b"two");
        assert_eq!(std::fs::read(out.join("index.html")).unwrap(), b"four");
        // A symlink in the spare's place is replaced, not followed.
        let victim = dir.path().join("victim.txt");
        std::fs::write(&victim, b"keep me").unwrap();
        let spare = outdir::spare_root(&out).join("index.html");
        std::fs::remove_file(&spare).unwrap();
        std::os::unix::fs::symlink(&victim, &spare).unwrap();
        publish(&mut replacer, &[("/index.html", b"five")]);
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep me");
        assert_eq!(std::fs::read(out.join("index.html")).unwrap(), b"five");
    }

    #[test]
    fn removal_takes_the_file_its_spare_and_empty_folders() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("site");
        let mut replacer = Replacer::new(&out, Lifetime::Session);
        publish(&mut replacer, &[("/a/b/x.json", b"1"), ("/y.json", b"2")]);
        replacer.wait_for_spares();
        replacer.remove("/a/b/x.json").unwrap();
        replacer.remove("/never-written.json").unwrap();
        // Moved out of the folder at once; its emptied folders and its spare go when the publish is
        // confirmed (until then a roll back puts it back).
        assert_eq!(files_under(&out), ["y.json"]);
        replacer.confirm();
        assert!(!out.join("a").exists());
        assert!(!outdir::spare_root(&out).join("a/b/x.json").exists());
    }

    #[test]
    fn a_roll_back_puts_back_what_was_put_in_place_or_set_aside() {
        for lifetime in [Lifetime::OneOff, Lifetime::Session] {
            let dir = tempfile::tempdir().unwrap();
            let out = dir.path().join("site");
            let mut replacer = Replacer::new(&out, lifetime);
            publish(
                &mut replacer,
                &[("/a/x.json", b"old x"), ("/gone.json", b"old")],
            );
            replacer.wait_for_spares();
            let before = files_under(&out);
            replacer.stage("/a/x.json", b"new x".to_vec()).unwrap();
            replacer.stage("/new/y.json", b"new y".to_vec()).unwrap();
            replacer.put_in_place().unwrap();
            replacer.remove("/gone.json").unwrap();
            assert_eq!(std::fs::read(out.join("a/x.json")).unwrap(), b"new x");
            replacer.roll_back().unwrap();
            assert_eq!(files_under(&out), before, "{lifetime:?}");
            assert_eq!(std::fs::read(out.join("a/x.json")).unwrap(), b"old x");
            assert_eq!(std::fs::read(out.join("gone.json")).unwrap(), b"old");
            assert!(!out.join("new").exists());
            // And a later publish goes through as usual.
            publish(&mut replacer, &[("/a/x.json", b"newer")]);
            assert_eq!(std::fs::read(out.join("a/x.json")).unwrap(), b"newer");
        }
    }
}
