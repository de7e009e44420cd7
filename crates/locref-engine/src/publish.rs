//! Emit: stamp `generated_at`, compare content hashes with the manifest, write changed files atomically,
//! remove stale ones.
//!
//! The manifest (path -> content hash, generated_at, the file's stamp as put in place) lives in
//! `.locref-cache/` beside the output folder, so it is never deployed. An output whose content hash is
//! unchanged keeps its file and its `generated_at`, as long as its file is the one locref put there: a
//! file whose stamp differs from the record is compared byte for byte and written again if it differs
//! (deleted, edited, restored from an old copy: "repaired"). A publish is all or nothing: a failure while
//! putting files in place puts the last build back ([`crate::transaction`]).

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io;
use std::path::{Path, PathBuf};

use crate::outdir::FileStamp;
use crate::outdir::manifest::{InputRecord, Manifest, ManifestEntry, load_manifest};
use crate::output::{GENERATED_AT_JSON, GENERATED_AT_MARK, Piece, Rendered};
use crate::transaction::{Lifetime, Replacer};

/// The number of outputs in `out` when a `locref build` of the project at `root` would write nothing
/// there: the manifest's record names exactly the input files under `root` with their content, the same
/// base URL and this locref, no build was interrupted there (no journal), and every output the manifest
/// lists is in place as it was written. `None` means build.
pub fn up_to_date(
    out: &Path,
    root: &Path,
    base_url: Option<&str>,
    build_date: &str,
) -> Option<usize> {
    if crate::outdir::journal_path(out).exists() {
        return None;
    }
    let manifest = crate::outdir::manifest::read_manifest(out)?;
    let record = manifest.inputs.as_ref()?;
    if record.base_url.as_deref() != base_url
        || record.build_date != build_date
        || record.locref != crate::workspace::locref_identity()
    {
        return None;
    }
    if !crate::workspace::same_inputs(root, &record.files)? {
        return None;
    }
    // A file deleted, replaced or edited since means build, which compares and repairs.
    outputs_in_place(out, &manifest).then_some(manifest.files.len())
}

/// Whether every output `manifest` lists is in `out` as it was put in place: one `stat` each, no content
/// read. A file deleted, replaced or edited since, or one whose stamp was never recorded, is not.
fn outputs_in_place(out: &Path, manifest: &Manifest) -> bool {
    manifest.files.iter().all(|(path, entry)| {
        entry.file.is_some()
            && crate::outdir::file_for(out, path)
                .is_some_and(|file| crate::outdir::stamp_of(&file) == entry.file)
    })
}

/// One output as published: its rendered bytes with the build time in place of each `generated_at`
/// placeholder. The rendered pieces are shared with the build, and the stamps
/// are applied as they are written (a vectored write) or served, so publishing a 1 MB output copies it
/// nowhere in user space.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamped {
    /// Site-relative path (`/api/v1/index.json`).
    pub path: String,
    rendered: Rendered,
    /// The placeholders in the rendered pieces, in order: the piece, where in it each starts, its
    /// length, and its stamp. A placeholder never spans two pieces: each piece is a whole rendering.
    marks: Vec<Mark>,
    /// Identifies the stamped bytes (the dev server's ETag): a hash of the content hash and the stamp.
    pub etag: String,
}

/// One cut of a stamped output (see [`Stamped::cuts`]).
enum Cut<'s> {
    /// A byte range of the rendered piece of that index.
    Piece(usize, std::ops::Range<usize>),
    /// What replaces a placeholder.
    Stamp(&'s str),
}

/// A placeholder of a rendered output and what replaces it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Mark {
    piece: usize,
    at: usize,
    len: usize,
    stamp: String,
}

/// The `generated_at` placeholders of the output at `path`, each filled with `generated_at`. A JSON
/// output carries the placeholder as serde_json escapes it ([`GENERATED_AT_JSON`]), and there a source
/// text's backslash is escaped too, so the form appears nowhere else. Any other output (a CSV cell, a
/// page, `llms-full.txt`) shows source texts as they are, so a text that spells the escaped form must be
/// published as written: those outputs carry the raw form ([`GENERATED_AT_MARK`]), whose NUL no source
/// can contain.
fn generated_at_marks(path: &str, rendered: &Rendered, generated_at: &str) -> Vec<Mark> {
    let json = path.ends_with(".json");
    let len = if json {
        GENERATED_AT_JSON.len()
    } else {
        GENERATED_AT_MARK.len()
    };
    let mut marks = Vec::new();
    for (i, piece) in rendered.pieces().iter().enumerate() {
        marks.extend(piece.generated_at_marks(json).iter().map(|&at| Mark {
            piece: i,
            at,
            len,
            stamp: generated_at.to_string(),
        }));
    }
    marks
}

impl Stamped {
    fn new(path: &str, rendered: &Rendered, content_hash: &str, generated_at: &str) -> Stamped {
        let marks = generated_at_marks(path, rendered, generated_at);
        Stamped {
            path: path.to_string(),
            rendered: rendered.clone(),
            marks,
            // The stamped bytes are a function of the content hash and the stamp: hash those, not 1 MB
            // again.
            etag: blake3::hash(format!("{content_hash}:{generated_at}").as_bytes()).to_hex()[..32]
                .to_string(),
        }
    }

    /// The published bytes as consecutive cuts: each rendered piece between placeholders (by its index
    /// and byte range), and the stamp of each placeholder. The one walk that [`Stamped::segments`] and
    /// [`Stamped::shared_segments`] take their slices from.
    fn cuts(&self) -> Vec<Cut<'_>> {
        let pieces = self.rendered.pieces();
        let mut cuts = Vec::with_capacity(pieces.len() + 2 * self.marks.len());
        let mut marks = self.marks.iter().peekable();
        for (i, piece) in pieces.iter().enumerate() {
            let mut last = 0;
            while let Some(mark) = marks.next_if(|mark| mark.piece == i) {
                cuts.push(Cut::Piece(i, last..mark.at));
                cuts.push(Cut::Stamp(&mark.stamp));
                last = mark.at + mark.len;
            }
            cuts.push(Cut::Piece(i, last..piece.bytes().len()));
        }
        cuts
    }

    /// The published bytes as consecutive slices (what a vectored write takes): the rendered pieces
    /// between placeholders, and the stamp of each placeholder.
    pub(crate) fn segments(&self) -> Vec<&[u8]> {
        let pieces = self.rendered.pieces();
        self.cuts()
            .into_iter()
            .map(|cut| match cut {
                Cut::Piece(i, range) => &pieces[i].bytes()[range],
                Cut::Stamp(stamp) => stamp.as_bytes(),
            })
            .collect()
    }

    /// The published bytes as [`Stamped::segments`] cuts them (leaving out empty ones), each sharing the
    /// build's buffers (the dev server holds an answer to a slow client this way, not as a copy).
    pub fn shared_segments(&self) -> Vec<bytes::Bytes> {
        let pieces = self.rendered.pieces();
        self.cuts()
            .into_iter()
            .map(|cut| match cut {
                Cut::Piece(i, range) => pieces[i].shared().slice(range),
                Cut::Stamp(stamp) => bytes::Bytes::from(stamp.to_string()),
            })
            .filter(|segment| !segment.is_empty())
            .collect()
    }

    /// The published bytes (borrowed from the build when the output is one piece with no placeholder).
    pub fn bytes(&self) -> Cow<'_, [u8]> {
        if self.marks.is_empty() {
            self.rendered.bytes()
        } else {
            Cow::Owned(self.segments().concat())
        }
    }
}

impl crate::transaction::Content for Stamped {
    fn segments(&self) -> Vec<&[u8]> {
        Stamped::segments(self)
    }
}

/// What one emit did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct EmitReport {
    pub written: Vec<String>,
    pub unchanged: usize,
    pub removed: Vec<String>,
    /// Written although their content did not change: their file was deleted, replaced or edited since
    /// locref put it in place (a subset of `written`).
    pub repaired: Vec<String>,
    /// Outputs of the last build that are gone from this one, left in the folder because their file
    /// changed since locref wrote it (it is no longer the file locref can vouch for); no longer listed
    /// in the manifest.
    pub kept: Vec<String>,
}

/// Publishes builds, to an output folder or (for the dev server) only in memory.
///
/// It keeps the manifest and the stamped outputs of the last build, so a rebuild stamps and writes only
/// the outputs whose content hash changed: its cost follows the size of the change, not of the site. A
/// publish is all or nothing: every changed file is staged first, and the output folder changes only
/// when all of them are (see [`crate::transaction`]).
pub struct Publisher {
    out: Option<PathBuf>,
    manifest: Manifest,
    site: BTreeMap<String, Stamped>,
    /// Whether this publisher has published a build: from then on the manifest is its own, so an output
    /// whose content hash the manifest has is in place (before, its file is looked for).
    published: bool,
    replacer: Option<Replacer>,
    /// Whether this publisher has swept the temporaries a killed build may have left in the folder.
    swept: bool,
    /// The record the manifest takes: a one-off build's inputs, or none for a session.
    inputs: Option<InputRecord>,
    /// `--clean`: the folder's files count for nothing, and after the publish it holds only its outputs.
    clean: bool,
    /// The output folder claimed for this publisher's life, from its first publish on, and where its
    /// path led then (see [`Publisher::not_the_locked_folder`]).
    lock: Option<(crate::outdir::FolderLock, PathBuf)>,
    /// The next publish compares every output's file with its record, as a first publish does: files
    /// were seen to change behind this publisher's back ([`Publisher::drifted`]).
    verify: bool,
}

/// A change one publish makes to the manifest.
enum ManifestChange {
    Set(String, ManifestEntry),
    Remove(String),
}

impl Publisher {
    /// A publisher for `out` (its manifest is read from disk by its first publish) that lives for
    /// `lifetime`, or an in-memory one for `None`.
    pub(crate) fn new(out: Option<&Path>, lifetime: Lifetime) -> Publisher {
        Publisher {
            // Read by the first publish, under the folder's lock (see `begin`).
            manifest: Manifest::default(),
            out: out.map(Path::to_path_buf),
            site: BTreeMap::new(),
            published: false,
            replacer: out.map(|out| Replacer::new(out, lifetime)),
            swept: false,
            inputs: None,
            clean: false,
            lock: None,
            verify: false,
        }
    }

    /// A publish as if into an empty folder (`--clean`): every output is written, and once all of them
    /// are staged and the build checked, the folder's files are deleted before they are put in place
    /// (see [`crate::transaction::Replacer::set_everything_aside`]).
    pub fn cleaning(mut self) -> Publisher {
        self.manifest = Manifest::default();
        self.clean = true;
        self
    }

    /// Records `inputs` in the manifest of the next publish (a one-off build).
    pub fn with_inputs(mut self, inputs: InputRecord) -> Publisher {
        self.inputs = Some(inputs);
        self
    }

    /// Waits until work the replacer started after a build is done (tests, benchmarks).
    pub fn settle(&mut self) {
        if let Some(replacer) = &mut self.replacer {
            replacer.wait_for_spares();
        }
    }

    /// Whether this publisher has published a build.
    pub fn has_published(&self) -> bool {
        self.published
    }

    /// The outputs whose file is no longer the one this publisher put in place (deleted, replaced,
    /// edited), by site path: one `stat` each.
    pub fn outputs_not_in_place(&self) -> Vec<String> {
        let Some(out) = &self.out else {
            return Vec::new();
        };
        if !self.published {
            return Vec::new();
        }
        let out = crate::outdir::resolved(out);
        self.manifest
            .files
            .iter()
            .filter(|(path, entry)| {
                entry.file.is_none()
                    || crate::outdir::file_for(&out, path)
                        .is_none_or(|file| crate::outdir::stamp_of(&file) != entry.file)
            })
            .map(|(path, _)| path.clone())
            .collect()
    }

    /// Why the output folder is no longer the folder this publisher locked, if it is not: its path
    /// now leads elsewhere (replaced by a symbolic link, or a link retargeted). Its lock guards the folder
    /// it claimed, not the new one, so nothing is written there: another locref may be writing it.
    pub fn not_the_locked_folder(&self) -> Option<String> {
        let (Some(out), Some((_, locked))) = (&self.out, &self.lock) else {
            return None;
        };
        let now = crate::outdir::resolved(out);
        (now != *locked).then(|| {
            format!(
                "the output folder {} is no longer the folder this locref locked ({}): it now leads to {}; nothing is written there (start locref again to write to it)",
                out.display(),
                locked.display(),
                now.display()
            )
        })
    }

    /// Whether any output's file is no longer the one this publisher put in place, every output
    /// checked by its stamp ([`outputs_in_place`]): for when events may have been missed, as while a
    /// folder removed and made again was not yet watched.
    pub fn drifted_anywhere(&self) -> bool {
        let Some(out) = &self.out else {
            return false;
        };
        if !self.published || self.not_the_locked_folder().is_some() {
            return false;
        }
        !outputs_in_place(&crate::outdir::resolved(out), &self.manifest)
    }

    /// Whether any of `paths` (inside the output folder, as a watcher reports them) is an output whose
    /// file is no longer the one this publisher put in place: deleted, replaced or edited behind its
    /// back. When so, the next publish should compare every output with its record and repair what
    /// differs ([`Publisher::verify_next`]). The folder itself gone counts too.
    pub fn drifted(&self, paths: &[PathBuf]) -> bool {
        let Some(out) = &self.out else {
            return false;
        };
        if !self.published || self.not_the_locked_folder().is_some() {
            return false;
        }
        let real = crate::outdir::resolved(out);
        paths.iter().any(|path| {
            if path == out || *path == real {
                return !out.is_dir();
            }
            let Ok(relative) = path.strip_prefix(&real).or_else(|_| path.strip_prefix(out)) else {
                return false;
            };
            let site_path = format!("/{}", relative.to_string_lossy().replace('\\', "/"));
            match self.manifest.files.get(&site_path) {
                Some(entry) => crate::outdir::stamp_of(path) != entry.file,
                // A folder of outputs removed or moved as a whole.
                None => {
                    let prefix = format!("{site_path}/");
                    !path.is_dir()
                        && self
                            .manifest
                            .files
                            .range(prefix.clone()..)
                            .next()
                            .is_some_and(|(p, _)| p.starts_with(&prefix))
                }
            }
        })
    }

    /// Makes the next publish compare every output's file with its record, and write again what
    /// differs.
    pub fn verify_next(&mut self) {
        self.verify = true;
    }

    /// The outputs of the last published build, by site path.
    pub fn site(&self) -> &BTreeMap<String, Stamped> {
        &self.site
    }

    /// Publishes `outputs`: stamps and writes what changed (or, on the first build, what is missing on
    /// disk), removes outputs that no longer exist, saves the manifest. On an error the output folder,
    /// the manifest and what this publisher serves stay those of the last good build.
    pub fn publish(
        &mut self,
        outputs: &[(String, &Rendered)],
        time: &str,
    ) -> io::Result<EmitReport> {
        let mut publish = self.begin(time)?;
        for (path, rendered) in outputs {
            publish.offer(path, rendered)?;
        }
        publish.finish()
    }

    /// Starts a publish whose outputs are given one at a time ([`Publish::offer`]), each staged as it
    /// comes, so the caller can drop an output's bytes once it is given: how a one-off build publishes
    /// a site larger than it keeps in memory. Nothing in the output folder changes before
    /// [`Publish::finish`]; a publish dropped unfinished changes nothing.
    pub fn begin(&mut self, time: &str) -> io::Result<Publish<'_>> {
        if let (Some(out), None) = (&self.out, &self.lock) {
            // No other locref may write the folder while this publisher may: claimed before anything in
            // it is touched, and the manifest read again, as another process may have published since.
            let lock = crate::outdir::lock_folder(out)?;
            self.lock = Some((lock, crate::outdir::resolved(out)));
            if !self.clean {
                self.manifest = load_manifest(out);
            }
        }
        if let Some(moved) = self.not_the_locked_folder() {
            return Err(io::Error::other(moved));
        }
        // From here on the publish writes through a handle on the folder just checked, not its path:
        // the path made to lead elsewhere meanwhile changes nothing of where the files go.
        if let Some(replacer) = &mut self.replacer {
            replacer.pin()?;
        }
        if let (Some(out), false) = (&self.out, self.swept) {
            crate::outdir::sweep_temporaries(out)?;
            self.swept = true;
        }
        Ok(Publish {
            publisher: self,
            time: time.to_string(),
            report: EmitReport::default(),
            changes: Vec::new(),
            stamped: Vec::new(),
            staged: Vec::new(),
            current: BTreeSet::new(),
            growing: HashMap::new(),
            restamped: Vec::new(),
            finished: false,
        })
    }

    /// Whether the file of `path` in the output folder holds exactly the bytes of `stamped`.
    fn file_holds(&self, path: &str, stamped: &Stamped) -> bool {
        let Some(file) = self
            .out
            .as_ref()
            .and_then(|out| crate::outdir::file_for(out, path))
        else {
            return false;
        };
        let segments = stamped.segments();
        let len: usize = segments.iter().map(|s| s.len()).sum();
        if std::fs::symlink_metadata(&file).map(|m| m.len()).ok() != Some(len as u64) {
            return false;
        }
        std::fs::read(&file).is_ok_and(|bytes| bytes == segments.concat())
    }

    /// Whether this publisher keeps the published outputs in memory ([`Publisher::site`]): the dev
    /// server's does (it serves them); one that writes to a folder does not (the files are the site).
    fn keeps_site(&self) -> bool {
        self.out.is_none()
    }
}

/// One publish in progress (see [`Publisher::begin`]).
pub struct Publish<'p> {
    publisher: &'p mut Publisher,
    time: String,
    report: EmitReport,
    changes: Vec<ManifestChange>,
    /// The outputs published this time, kept for [`Publisher::site`] when the publisher keeps it.
    stamped: Vec<Stamped>,
    /// The site paths staged for writing.
    staged: Vec<String>,
    /// Every output of this build.
    current: BTreeSet<String>,
    /// The outputs being staged piece by piece ([`Publish::grow`]: `llms-full.txt` across the whole
    /// build, a site-wide list while one batch renders), by site path, with their staged files.
    growing: HashMap<String, crate::transaction::GrowingFile>,
    /// Outputs found in place whose file's stamp changed (a `touch`, the same bytes restored): their new
    /// stamp, recorded by [`Publish::finish`].
    restamped: Vec<(String, FileStamp)>,
    finished: bool,
}

/// Where one output of a build stands against the last build ([`Publish::settle`]).
struct Settled {
    /// Its time: the last build's when its content is the same, else this build's.
    generated_at: String,
    /// Where its file stands.
    file: OnDisk,
}

/// Where the file of an output stands against its record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OnDisk {
    /// The same content, and the file as recorded (or trusted: this publisher put it there).
    InPlace,
    /// The same content; the file is present but not as recorded: its bytes decide (the stamp it has
    /// now).
    Differs(FileStamp),
    /// The same content, but the file is missing or not what was published: written again.
    Repair,
    /// The content changed (or is new): written.
    New,
}

impl Publish<'_> {
    /// Gives one output of the build: stamped and staged now if its content changed (or its file is
    /// missing).
    pub fn offer(&mut self, path: &str, rendered: &Rendered) -> io::Result<()> {
        let digest = crate::output::Digest {
            hash: rendered.hash,
            len: rendered.len(),
            error: None,
        };
        // Shares the bytes (an `Arc`): they outlive the query value the caller may evict.
        self.offer_digest(path, &digest, || rendered.clone())
    }

    /// Like [`Publish::offer`], from the output's digest: `rendered` is called for its bytes only when
    /// they must be written (the content changed, or the file is missing), so an output a rebuild did
    /// not change is never rendered again after its bytes were let go.
    pub fn offer_digest(
        &mut self,
        path: &str,
        digest: &crate::output::Digest,
        rendered: impl FnOnce() -> Rendered,
    ) -> io::Result<()> {
        self.current.insert(path.to_string());
        self.publish_one(path, digest.hash.to_hex().to_string(), rendered)
    }

    /// Publishes one output whose content hash is `hash`, asking for its bytes only when it is stamped.
    fn publish_one(
        &mut self,
        path: &str,
        hash: String,
        rendered: impl FnOnce() -> Rendered,
    ) -> io::Result<()> {
        let mut settled = self.settle(path, &hash);
        if settled.file == OnDisk::InPlace {
            self.account(path, hash, settled);
            return Ok(());
        }
        let stamped = Stamped::new(path, &rendered(), &hash, &settled.generated_at);
        if let OnDisk::Differs(now) = settled.file {
            // A `touch`, a restored backup, a copy with the same bytes: the file is right, only its
            // record is not.
            if self.publisher.file_holds(path, &stamped) {
                self.restamped.push((path.to_string(), now));
                settled.file = OnDisk::InPlace;
                self.account(path, hash, settled);
                return Ok(());
            }
            settled.file = OnDisk::Repair;
        }
        if let Some(replacer) = &mut self.publisher.replacer {
            replacer.stage(path, stamped.clone())?;
        }
        if self.publisher.keeps_site() {
            self.stamped.push(stamped);
        }
        self.account(path, hash, settled);
        Ok(())
    }

    /// Where an output whose content hash is `hash` stands against the last build (see [`Settled`]);
    /// records its time for the outputs that show other outputs' times.
    fn settle(&mut self, path: &str, hash: &str) -> Settled {
        let publisher = &*self.publisher;
        let entry = publisher.manifest.files.get(path);
        let same_content = entry.is_some_and(|e| e.hash == hash);
        let generated_at = match entry {
            Some(e) if same_content => e.generated_at.clone(),
            _ => self.time.clone(),
        };
        let file = match (entry, &publisher.out) {
            _ if !same_content => OnDisk::New,
            // Put in place by this publisher, and nothing seen to change since.
            _ if publisher.published && !publisher.verify => OnDisk::InPlace,
            // The dev server's publisher keeps the site in memory: nothing to compare with.
            (_, None) => OnDisk::New,
            // A first publish into a folder of an earlier run, or after a drift: one `stat`, and the
            // bytes only when that differs from the record.
            (entry, Some(out)) => {
                let recorded = entry.and_then(|e| e.file);
                match crate::outdir::file_for(out, path).and_then(|f| crate::outdir::stamp_of(&f)) {
                    None => OnDisk::Repair,
                    Some(now) if Some(now) == recorded => OnDisk::InPlace,
                    Some(now) => OnDisk::Differs(now),
                }
            }
        };
        Settled { generated_at, file }
    }

    /// Counts an output as unchanged (in place) or written (staged, to be put in place), and sets its
    /// manifest entry when its content changed.
    fn account(&mut self, path: &str, hash: String, settled: Settled) {
        if settled.file == OnDisk::InPlace {
            self.report.unchanged += 1;
            return;
        }
        self.report.written.push(path.to_string());
        if settled.file == OnDisk::Repair {
            self.report.repaired.push(path.to_string());
        }
        if self.publisher.replacer.is_some() {
            self.staged.push(path.to_string());
        }
        // Its file's stamp is recorded once it is in place.
        self.changes.push(ManifestChange::Set(
            path.to_string(),
            ManifestEntry {
                hash,
                generated_at: settled.generated_at,
                file: None,
            },
        ));
    }

    /// Stages the next `pieces` of the output at `path`, which a one-off build hands over piece by piece
    /// as it makes them (`llms-full.txt`), stamped with this build's time: the pieces are written and
    /// let go, never all held. [`Publish::grown`] ends it. Only for a publisher that writes to a folder
    /// (the dev server's keeps whole outputs).
    pub fn grow(&mut self, path: &str, pieces: &[Piece]) -> io::Result<()> {
        let Some(replacer) = &mut self.publisher.replacer else {
            return Err(io::Error::other(format!(
                "`{path}` was handed over piece by piece to a publisher that keeps the site in memory"
            )));
        };
        let file = match self.growing.entry(path.to_string()) {
            std::collections::hash_map::Entry::Occupied(growing) => growing.into_mut(),
            std::collections::hash_map::Entry::Vacant(new) => {
                new.insert(replacer.begin_growing(path)?)
            }
        };
        let rendered = Rendered::from_pieces(pieces.iter().cloned());
        let stamped = Stamped::new(path, &rendered, "", &self.time);
        file.append(&stamped.segments())
    }

    /// How many bytes of `path` are staged so far by [`Publish::grow`] (0 before its first piece).
    pub fn grown_len(&self, path: &str) -> u64 {
        self.growing.get(path).map_or(0, |file| file.len())
    }

    /// Takes back what [`Publish::grow`] staged of `path` after its first `len` bytes.
    pub fn take_back(&mut self, path: &str, len: u64) -> io::Result<()> {
        match self.growing.get_mut(path) {
            Some(file) => file.truncate(len),
            None => Ok(()),
        }
    }

    /// Ends the output staged piece by piece ([`Publish::grow`]), whose content hash is `hash`: kept
    /// to be put in place if its content changed (or its file is missing), else dropped.
    pub fn grown(&mut self, path: &str, hash: blake3::Hash) -> io::Result<()> {
        self.current.insert(path.to_string());
        let hash = hash.to_hex().to_string();
        let mut settled = self.settle(path, &hash);
        if let OnDisk::Differs(now) = settled.file {
            // Its pieces are let go, but the staged file holds them: a touched file is kept.
            let there = self
                .publisher
                .out
                .as_deref()
                .and_then(|out| crate::outdir::file_for(out, path));
            let same = match (self.growing.get_mut(path), there) {
                (Some(file), Some(there)) => file.same_bytes_as(&there),
                _ => false,
            };
            settled.file = match same {
                true => {
                    self.restamped.push((path.to_string(), now));
                    OnDisk::InPlace
                }
                false => OnDisk::Repair,
            };
        }
        if let (Some(file), Some(replacer)) =
            (self.growing.remove(path), &mut self.publisher.replacer)
        {
            replacer.end_growing(file, settled.file != OnDisk::InPlace)?;
        }
        self.account(path, hash, settled);
        Ok(())
    }

    /// Removes the outputs of the last build that are not in this one, puts every staged file in place and saves the manifest. On an error the output
    /// folder, the manifest and what the publisher serves stay those of the last good build.
    pub fn finish(mut self) -> io::Result<EmitReport> {
        let publisher = &mut *self.publisher;
        for (path, entry) in &publisher.manifest.files {
            if self.current.contains(path.as_str()) {
                continue;
            }
            // A stale output is removed only while it is the file locref put there: one edited or
            // replaced since (or named by a manifest locref did not write) is left alone.
            let ours = match &publisher.out {
                None => true,
                Some(out) => match crate::outdir::file_for(out, path) {
                    None => true,
                    Some(file) => {
                        publisher.manifest.journaled.contains(path)
                            || std::fs::symlink_metadata(&file).is_err()
                            || (entry.file.is_some()
                                && crate::outdir::stamp_of(&file) == entry.file)
                    }
                },
            };
            match ours {
                true => self.report.removed.push(path.clone()),
                false => self.report.kept.push(path.clone()),
            }
            self.changes.push(ManifestChange::Remove(path.clone()));
        }
        for (path, now) in std::mem::take(&mut self.restamped) {
            if let Some(entry) = publisher.manifest.files.get(&path) {
                let mut entry = entry.clone();
                entry.file = Some(now);
                self.changes.push(ManifestChange::Set(path, entry));
            }
        }
        // The manifest of this build, and how to go back to the last one if writing fails.
        let undo = apply(&mut publisher.manifest, std::mem::take(&mut self.changes));
        let last_inputs =
            std::mem::replace(&mut publisher.manifest.inputs, publisher.inputs.clone());
        let manifest_changed = !undo.is_empty() || last_inputs != publisher.manifest.inputs;
        if let (Some(out), Some(replacer)) = (&publisher.out, &mut publisher.replacer) {
            // Every file is written before anything of the last build goes.
            let result = replacer.finish_staging();
            // `--clean`: the last build's files are set aside now, when this one is whole and checked,
            // so its files are renamed into an empty folder, not over the old files (which on ext4
            // makes each rename start writing the new file out).
            let result = result.and_then(|()| match publisher.clean {
                true => replacer.set_everything_aside(),
                false => Ok(()),
            });
            crate::failpoint::pause_at("put-in-place");
            let result = result.and_then(|()| {
                put_in_place(
                    out,
                    replacer,
                    &self.staged,
                    &self.report.removed,
                    manifest_changed,
                    &mut publisher.manifest,
                )
            });
            if let Err(e) = result {
                apply(&mut publisher.manifest, undo);
                publisher.manifest.inputs = last_inputs;
                return Err(e);
            }
        }
        publisher.verify = false;
        publisher.manifest.journaled.clear();
        self.finished = true;
        for path in &self.report.removed {
            publisher.site.remove(path);
        }
        publisher.published = true;
        for stamped in std::mem::take(&mut self.stamped) {
            publisher.site.insert(stamped.path.clone(), stamped);
        }
        Ok(std::mem::take(&mut self.report))
    }
}

impl Drop for Publish<'_> {
    /// A publish that did not finish (an error, a failed check) leaves the output folder as it was.
    fn drop(&mut self) {
        if !self.finished
            && let Some(replacer) = &mut self.publisher.replacer
        {
            replacer.abandon();
        }
    }
}

/// Applies `changes` to `manifest`; returns the changes that undo them.
fn apply(manifest: &mut Manifest, changes: Vec<ManifestChange>) -> Vec<ManifestChange> {
    let mut undo = Vec::with_capacity(changes.len());
    for change in changes {
        let (path, previous) = match change {
            ManifestChange::Set(path, entry) => {
                let previous = manifest.files.insert(path.clone(), entry);
                (path, previous)
            }
            ManifestChange::Remove(path) => {
                let previous = manifest.files.remove(&path);
                (path, previous)
            }
        };
        undo.push(match previous {
            Some(entry) => ManifestChange::Set(path, entry),
            None => ManifestChange::Remove(path),
        });
    }
    undo.reverse();
    undo
}

/// The file side of a finished publish (every written file already staged): note the staged paths in
/// the journal, put them in place, set the stale ones aside, record the stamps of the files put in
/// place, save the manifest, then make it final and drop the journal. When any step fails, what was
/// done is undone: the folder is the last build's (or, if even that fails, the journal stays and the
/// next build repairs what differs).
fn put_in_place(
    out: &Path,
    replacer: &mut Replacer,
    staged: &[String],
    removed: &[String],
    manifest_changed: bool,
    manifest: &mut Manifest,
) -> io::Result<()> {
    let mut touched: Vec<&str> = staged.iter().map(String::as_str).collect();
    touched.extend(removed.iter().map(String::as_str));
    let manifest_file = crate::outdir::manifest_path(out);
    let write_manifest = manifest_changed || !manifest_file.is_file();
    if touched.is_empty() && !write_manifest {
        // Nothing to put in place; the replacer still learns that a build was published.
        return replacer.commit();
    }
    let journal = crate::outdir::journal_path(out);
    if !touched.is_empty() {
        let bytes = serde_json::to_vec(&touched).map_err(io::Error::other)?;
        replacer.write_private(&journal, &[&bytes])?;
    }
    let result = replacer.put_in_place().and_then(|()| {
        for path in removed {
            replacer.remove(path)?;
        }
        for path in staged {
            let stamp = replacer.stamp_of(path);
            if let Some(entry) = manifest.files.get_mut(path) {
                entry.file = stamp;
            }
        }
        let mut bytes = serde_json::to_vec_pretty(&*manifest).map_err(io::Error::other)?;
        bytes.push(b'\n');
        replacer.write_private(&manifest_file, &[&bytes])
    });
    match result {
        Ok(()) => replacer.confirm(),
        Err(e) => {
            return Err(match replacer.roll_back() {
                Ok(()) => {
                    // The folder is the last build's again, as its manifest says.
                    let _ = std::fs::remove_file(&journal);
                    e
                }
                Err(also) => io::Error::new(e.kind(), format!("{e}; {also}")),
            });
        }
    }
    if !touched.is_empty() {
        std::fs::remove_file(&journal).map_err(|e| crate::outdir::with_path(e, &journal))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn publishing_keeps_generated_at_of_unchanged_content_and_drops_stale_outputs() {
        let a = Rendered::new(br#"{"generated_at":"\u0000generated_at\u0000","x":1}"#.to_vec());
        let b = Rendered::new(br#"{"generated_at":"\u0000generated_at\u0000","x":2}"#.to_vec());
        let mut publisher = Publisher::new(None, Lifetime::Session);
        let first = publisher
            .publish(&[("/a.json".into(), &a)], "2026-01-01T00:00:00Z")
            .unwrap();
        assert_eq!(first.written, ["/a.json"]);
        assert_eq!(
            &*publisher.site()["/a.json"].bytes(),
            br#"{"generated_at":"2026-01-01T00:00:00Z","x":1}"#.as_slice()
        );
        let second = publisher
            .publish(&[("/a.json".into(), &a)], "2026-02-02T00:00:00Z")
            .unwrap();
        assert_eq!((second.written.len(), second.unchanged), (0, 1));
        let third = publisher
            .publish(&[("/a.json".into(), &b)], "2026-03-03T00:00:00Z")
            .unwrap();
        assert_eq!(third.written, ["/a.json"]);
        assert_eq!(
            &*publisher.site()["/a.json"].bytes(),
            br#"{"generated_at":"2026-03-03T00:00:00Z","x":2}"#.as_slice()
        );
        let fourth = publisher.publish(&[], "2026-04-04T00:00:00Z").unwrap();
        assert_eq!(fourth.removed, ["/a.json"]);
        assert!(publisher.site().is_empty());
    }

    #[test]
    fn the_shared_segments_are_the_published_bytes() {
        let rendered = Rendered::from_pieces([
            Piece::new(format!("<p>{GENERATED_AT_MARK}</p>")),
            Piece::new(GENERATED_AT_MARK),
            Piece::new("<p>end</p>"),
        ]);
        let stamped = Stamped::new("/x/index.html", &rendered, "hash", "2026-01-01T00:00:00Z");
        let segments = stamped.shared_segments();
        assert_eq!(segments.concat(), &*stamped.bytes());
        assert!(segments.iter().all(|s| !s.is_empty()), "{segments:?}");
        assert_eq!(
            segments.concat(),
            b"<p>2026-01-01T00:00:00Z</p>2026-01-01T00:00:00Z<p>end</p>"
        );
    }

    #[test]
    fn only_the_placeholder_of_the_output_format_is_stamped() {
        // A CSV cell (or a page) that spells the JSON form is a source text and is published as
        // written; the raw form in an XML feed is the build time.
        let csv = Rendered::new(b"id,note\nx,\\u0000generated_at\\u0000\n".to_vec());
        let feed = Rendered::new(b"<updated>\0generated_at\0</updated>".to_vec());
        let mut publisher = Publisher::new(None, Lifetime::Session);
        publisher
            .publish(
                &[("/data/x.csv".into(), &csv), ("/changes.xml".into(), &feed)],
                "2026-01-01T00:00:00Z",
            )
            .unwrap();
        assert_eq!(
            &*publisher.site()["/data/x.csv"].bytes(),
            br"id,note
x,\u0000generated_at\u0000
"
            .as_slice()
        );
        assert_eq!(
            &*publisher.site()["/changes.xml"].bytes(),
            b"<updated>2026-01-01T00:00:00Z</updated>".as_slice()
        );
    }
}
