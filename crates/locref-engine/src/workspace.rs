//! The project on disk as salsa inputs: every file under `sources/` and `rules/` becomes a
//! [`SourceFile`]; edits are detected by content, compared with the bytes the input holds, never by
//! modification time, so a touch or an editor's save of identical bytes changes nothing.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use salsa::{Durability, Setter};

use crate::db::{BuildOptions, Db, SourceFile, Workspace};

pub(crate) use crate::outdir::INPUT_DIRS;
use crate::outdir::manifest::InputRecord;

/// Names editors write transiently: never inputs.
pub(crate) fn is_noise(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.starts_with('.')
        || name.ends_with('~')
        || name.ends_with(".swp")
        || name.ends_with(".swx")
        || name.ends_with(".tmp")
        || name == "4913"
}

/// Rules and registers change rarely (HIGH), and the releases only when one is made (MEDIUM): salsa
/// skips re-validating a query that reads only inputs of a durability no edit since touched, so a fact
/// edit does not walk the diffs of every release and country.
fn durability(relative: &str) -> Durability {
    if relative.starts_with("rules/") || relative.starts_with("sources/registers/") {
        Durability::HIGH
    } else if relative.starts_with("sources/releases/") {
        Durability::MEDIUM
    } else {
        Durability::LOW
    }
}

/// The project's inputs at one moment: each file's input and bytes (shared, not copied), and the links.
/// A watch session keeps those of its last good build, so that while the sources have errors it can
/// still write again an output changed behind its back, as that build made it ([`Project::restore`]).
#[derive(Clone, Default)]
pub struct Inputs {
    files: BTreeMap<String, (SourceFile, bytes::Bytes)>,
    links: std::collections::BTreeSet<String>,
}

/// A project root and the salsa database holding its files.
pub struct Project {
    pub root: PathBuf,
    pub db: Db,
    files: BTreeMap<String, SourceFile>,
    /// The symbolic links under the input folders (see [`crate::db::link_diagnostics`]).
    links: std::collections::BTreeSet<String>,
}

impl Project {
    /// Reads every input file under `root`.
    pub fn load(root: &Path, site: &'static crate::site::Site) -> io::Result<Project> {
        let root = root.canonicalize()?;
        for dir in INPUT_DIRS {
            // The input folders themselves are the project's own, never links to elsewhere.
            if std::fs::symlink_metadata(root.join(dir)).is_ok_and(|m| m.file_type().is_symlink()) {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "{} is a symbolic link: locref reads only folders inside the project",
                        root.join(dir).display()
                    ),
                ));
            }
            if !root.join(dir).is_dir() {
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!(
                        "{} has no `{dir}/` folder: run locref in a project root",
                        root.display()
                    ),
                ));
            }
        }
        let db = Db::default();
        let _ = Workspace::builder(BTreeMap::new(), Default::default())
            .files_durability(Durability::HIGH)
            .new(&db);
        let day = day_of(&build_time());
        let _ = BuildOptions::new(&db, None, day.clone(), last_check_day(&day));
        let _ = crate::site::SiteInput::builder(crate::site::SiteRef(site))
            .site_durability(Durability::HIGH)
            .new(&db);
        let mut project = Project {
            root,
            db,
            files: BTreeMap::new(),
            links: Default::default(),
        };
        project.rescan()?;
        Ok(project)
    }

    /// Sets the day of the build from a `generated_at` time (a session's rebuild after midnight moves the
    /// calendar's windows); the same day changes nothing.
    pub fn set_build_time(&mut self, time: &str) {
        let options = BuildOptions::get(&self.db);
        let day = day_of(time);
        if options.build_date(&self.db) != &day {
            options
                .set_build_date(&mut self.db)
                .with_durability(Durability::HIGH)
                .to(day.clone());
        }
        let last = last_check_day(&day);
        if options.last_check_day(&self.db) != &last {
            options
                .set_last_check_day(&mut self.db)
                .with_durability(Durability::HIGH)
                .to(last);
        }
    }

    /// The day of the build the project was last set to (`YYYY-MM-DD`).
    pub fn build_date(&self) -> &str {
        BuildOptions::get(&self.db).build_date(&self.db)
    }

    /// Sets `--base-url` (or the dev server's address); `None` uses `rules/site.toml`.
    pub fn set_base_url(&mut self, url: Option<String>) {
        let options = BuildOptions::get(&self.db);
        if options.base_url_override(&self.db) != &url {
            options
                .set_base_url_override(&mut self.db)
                .with_durability(Durability::HIGH)
                .to(url);
        }
    }

    /// The inputs as they are now (see [`Inputs`]).
    pub fn inputs(&self) -> Inputs {
        Inputs {
            files: self
                .files
                .iter()
                .map(|(rel, &file)| (rel.clone(), (file, file.bytes(&self.db).clone())))
                .collect(),
            links: self.links.clone(),
        }
    }

    /// Sets every input back to `inputs` (files that appeared since are dropped, those gone come back),
    /// touching only what differs. The files on disk are not read: what the next edit changes is still
    /// found by comparing with the inputs, which are then again what they were.
    pub fn restore(&mut self, inputs: &Inputs) {
        let mut list_changed = false;
        for (rel, (file, bytes)) in &inputs.files {
            if self.files.get(rel) != Some(file) {
                self.files.insert(rel.clone(), *file);
                list_changed = true;
            }
            if file.bytes(&self.db) != bytes {
                file.set_bytes(&mut self.db)
                    .with_durability(durability(rel))
                    .to(bytes.clone());
            }
        }
        let before = self.files.len();
        self.files.retain(|rel, _| inputs.files.contains_key(rel));
        list_changed |= self.files.len() != before;
        if list_changed {
            self.publish_file_list();
        }
        self.set_links(inputs.links.clone());
    }

    /// Re-reads every input folder; returns the relative paths whose content changed, appeared or vanished.
    pub fn rescan(&mut self) -> io::Result<Vec<String>> {
        let (mut found, mut links) = (Vec::new(), Vec::new());
        for dir in INPUT_DIRS {
            walk(&self.root.join(dir), &mut found, &mut links)?;
        }
        let mut changed = self.set_links(links.iter().filter_map(|p| self.relative(p)).collect());
        let present: std::collections::BTreeSet<String> =
            found.iter().filter_map(|p| self.relative(p)).collect();
        let gone: Vec<String> = self
            .files
            .keys()
            .filter(|k| !present.contains(*k))
            .cloned()
            .collect();
        for path in found {
            if let Some(rel) = self.update(&path)? {
                changed.push(rel);
            }
        }
        for rel in gone {
            self.files.remove(&rel);
            changed.push(rel);
        }
        if !changed.is_empty() {
            self.publish_file_list();
        }
        Ok(changed)
    }

    /// Re-reads the given paths (a watcher's hints: files, folders or deleted paths); returns the relative
    /// paths whose content changed.
    pub fn sync_paths(&mut self, paths: &[PathBuf]) -> io::Result<Vec<String>> {
        let mut changed = Vec::new();
        let mut list_changed = false;
        for path in paths {
            // Links are never followed: a path is what it is, not what it points to. Read once.
            let kind = std::fs::symlink_metadata(path).map(|m| m.file_type()).ok();
            let is_link = kind.is_some_and(|k| k.is_symlink());
            let is_dir = kind.is_some_and(|k| k.is_dir());
            let is_file = kind.is_some_and(|k| k.is_file());
            // A folder's files and links, walked once.
            let (mut found, mut dir_links) = (Vec::new(), Vec::new());
            if is_dir {
                walk(path, &mut found, &mut dir_links)?;
            }
            if let Some(rel) = self.relative(path) {
                // What the path was before: a file that is now a folder or a link, or a folder that is
                // now a file or a link, is gone as what it was.
                let prefix = format!("{rel}/");
                let replaced: Vec<String> = self
                    .files
                    .keys()
                    .filter(|k| {
                        ((is_dir || is_link) && **k == rel)
                            || ((is_file || is_link) && k.starts_with(&prefix))
                    })
                    .cloned()
                    .collect();
                for key in replaced {
                    self.files.remove(&key);
                    changed.push(key);
                    list_changed = true;
                }
                // The links at or under this path, as they are now (a separate input: the file list
                // does not change with them).
                let mut now: std::collections::BTreeSet<String> = self
                    .links
                    .iter()
                    .filter(|l| **l != rel && !l.starts_with(&prefix))
                    .cloned()
                    .collect();
                if is_link {
                    now.insert(rel.clone());
                }
                now.extend(dir_links.iter().filter_map(|p| self.relative(p)));
                changed.extend(self.set_links(now));
            }
            if is_dir {
                for file in found {
                    let known = self
                        .relative(&file)
                        .is_some_and(|r| self.files.contains_key(&r));
                    if let Some(rel) = self.update(&file)? {
                        list_changed |= !known;
                        changed.push(rel);
                    }
                }
            } else if is_file {
                let known = self
                    .relative(path)
                    .is_some_and(|r| self.files.contains_key(&r));
                if let Some(rel) = self.update(path)? {
                    list_changed |= !known;
                    changed.push(rel);
                }
            } else if let Some(rel) = self.relative(path) {
                // Gone: the file, or a whole folder of files.
                let prefix = format!("{rel}/");
                let gone: Vec<String> = self
                    .files
                    .keys()
                    .filter(|k| **k == rel || k.starts_with(&prefix))
                    .cloned()
                    .collect();
                for key in gone {
                    self.files.remove(&key);
                    changed.push(key);
                    list_changed = true;
                }
            }
        }
        if list_changed {
            self.publish_file_list();
        }
        changed.sort();
        changed.dedup();
        Ok(changed)
    }

    /// The project-relative path of an input, or `None` for paths outside the input folders and noise.
    fn relative(&self, path: &Path) -> Option<String> {
        let rel = path.strip_prefix(&self.root).ok()?;
        let first = rel.components().next()?.as_os_str().to_str()?;
        if !INPUT_DIRS.contains(&first)
            || rel.components().any(|c| is_noise(Path::new(c.as_os_str())))
        {
            return None;
        }
        Some(rel.to_str()?.replace('\\', "/"))
    }

    /// Reads one file; sets its input only when its bytes changed. Returns its relative path if so.
    fn update(&mut self, path: &Path) -> io::Result<Option<String>> {
        let Some(rel) = self.relative(path) else {
            return Ok(None);
        };
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(crate::outdir::with_path(e, path)),
        };
        match self.files.get(&rel) {
            // Compared with what the input holds (it stops at the first difference; at x100 a hash of
            // the 24 MB facts table took longer than reading it).
            Some(file) if file.bytes(&self.db)[..] == bytes[..] => Ok(None),
            Some(&file) => {
                file.set_bytes(&mut self.db)
                    .with_durability(durability(&rel))
                    .to(bytes.into());
                Ok(Some(rel))
            }
            None => {
                // A file's path is its identity and never changes: at LOW (the default) it would make
                // every query that reads a file LOW too, and so re-validated edge by edge on every edit.
                let file = SourceFile::builder(rel.clone(), bytes.into())
                    .path_durability(Durability::HIGH)
                    .bytes_durability(durability(&rel))
                    .new(&self.db);
                self.files.insert(rel.clone(), file);
                Ok(Some(rel))
            }
        }
    }

    /// Records the links under the input folders; returns the paths whose being a link changed, which
    /// are changes like any edit.
    fn set_links(&mut self, links: std::collections::BTreeSet<String>) -> Vec<String> {
        if links == self.links {
            return Vec::new();
        }
        let moved: Vec<String> = links.symmetric_difference(&self.links).cloned().collect();
        self.links = links.clone();
        Workspace::get(&self.db)
            .set_links(&mut self.db)
            .with_durability(Durability::HIGH)
            .to(links);
        moved
    }

    fn publish_file_list(&mut self) {
        let list: BTreeMap<String, SourceFile> =
            self.files.iter().map(|(k, f)| (k.clone(), *f)).collect();
        Workspace::get(&self.db)
            .set_files(&mut self.db)
            .with_durability(Durability::HIGH)
            .to(list);
    }
}

/// The regular files under `dir`, in path order, into `out`; the symbolic links, never followed, into
/// `links`. The walk descends only into real folders, so it ends (no link can make it loop) and never
/// leaves the folder.
fn walk(dir: &Path, out: &mut Vec<PathBuf>, links: &mut Vec<PathBuf>) -> io::Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(crate::outdir::with_path(e, dir)),
    };
    let mut paths: Vec<PathBuf> = entries
        .map(|e| e.map(|e| e.path()))
        .collect::<io::Result<_>>()
        .map_err(|e| crate::outdir::with_path(e, dir))?;
    paths.sort();
    for path in paths {
        if is_noise(&path) {
            continue;
        }
        let kind = match std::fs::symlink_metadata(&path) {
            Ok(meta) => meta.file_type(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(crate::outdir::with_path(e, &path)),
        };
        if kind.is_symlink() {
            links.push(path);
        } else if kind.is_dir() {
            walk(&path, out, links)?;
        } else if kind.is_file() {
            out.push(path);
        }
    }
    Ok(())
}

/// The day (`YYYY-MM-DD`) of a `generated_at` time (`2026-11-27T10:00:00Z`).
/// The later of today (by the clock, in UTC) and `build_day`: see [`BuildOptions::last_check_day`].
fn last_check_day(build_day: &str) -> String {
    let today = day_of(&jiff::Timestamp::now().to_string());
    today.max(build_day.to_string())
}

pub fn day_of(time: &str) -> String {
    time.get(..10).unwrap_or(time).to_string()
}

/// The build time in `generated_at` form: `SOURCE_DATE_EPOCH` when set (reproducible builds), else now.
/// A malformed value is refused by [`source_date_epoch`] before any command runs.
pub fn build_time() -> String {
    let now = source_date_epoch().ok().flatten().unwrap_or_else(|| {
        jiff::Timestamp::from_second(jiff::Timestamp::now().as_second()).expect("now is in range")
    });
    now.to_string()
}

/// `SOURCE_DATE_EPOCH`, when set: a whole number of seconds since 1970-01-01 UTC, no later than the
/// year 9999. Anything else is an error that names the value, never a silent "now" (a typo would make
/// a build that should be reproducible differ from the last).
pub fn source_date_epoch() -> Result<Option<jiff::Timestamp>, String> {
    let Some(value) = std::env::var_os("SOURCE_DATE_EPOCH") else {
        return Ok(None);
    };
    let text = value.to_string_lossy();
    let refused = |why: &str| {
        format!(
            "SOURCE_DATE_EPOCH={:?} {why}: it must be a whole number of seconds since 1970-01-01 UTC (for example 1767225600), or unset",
            text
        )
    };
    let trimmed = text.trim();
    if trimmed.is_empty() || !trimmed.bytes().all(|b| b.is_ascii_digit()) {
        return Err(refused("is not a number of seconds"));
    }
    let seconds: i64 = trimmed.parse().map_err(|_| refused("is out of range"))?;
    let time = jiff::Timestamp::from_second(seconds).map_err(|_| refused("is out of range"))?;
    if time.to_zoned(jiff::tz::TimeZone::UTC).year() > 9999 {
        return Err(refused("is out of range"));
    }
    Ok(Some(time))
}

impl Project {
    /// The record of the inputs loaded here (the bytes the build read, not the files on disk now): what
    /// the manifest of a one-off build keeps, so the next build of the same inputs can stop at once.
    pub fn input_record(&self, base_url: Option<&str>) -> InputRecord {
        let project = self;
        let db = &project.db;
        let files = crate::db::Workspace::get(db)
            .files(db)
            .iter()
            .map(|(path, file)| {
                (
                    path.clone(),
                    blake3::hash(file.bytes(db)).to_hex().to_string(),
                )
            })
            .collect();
        InputRecord {
            locref: locref_identity(),
            base_url: base_url.map(str::to_string),
            build_date: project.build_date().to_string(),
            files,
        }
    }
}

/// The locref that is running: its version, and its executable's device, inode, size, modification and
/// change times, so a rebuilt or replaced binary (even of the same version) never takes another's record.
/// The change time cannot be set back by hand, so an executable written in place changes it too.
pub(crate) fn locref_identity() -> String {
    let version = env!("CARGO_PKG_VERSION");
    let file = std::env::current_exe().and_then(std::fs::metadata);
    #[cfg(unix)]
    let file = file.map(|m| {
        use std::os::unix::fs::MetadataExt;
        format!(
            "{}:{}:{}:{}.{}:{}.{}",
            m.dev(),
            m.ino(),
            m.size(),
            m.mtime(),
            m.mtime_nsec(),
            m.ctime(),
            m.ctime_nsec()
        )
    });
    #[cfg(not(unix))]
    let file = file.and_then(|m| {
        Ok(format!(
            "{}:{:?}",
            m.len(),
            m.modified()?.duration_since(std::time::UNIX_EPOCH)
        ))
    });
    match file {
        Ok(file) => format!("{version} {file}"),
        // Unknown: never equal to a record, so every build renders.
        Err(e) => format!(
            "{version} unknown executable ({e}) {:?}",
            std::time::Instant::now()
        ),
    }
}

/// Whether the input files under `root` (as the project loads them) are exactly `files`, each with the
/// same content hash: the input fingerprint a build compares before it renders anything. `None` on a
/// read error (the build reports it).
pub(crate) fn same_inputs(root: &Path, files: &BTreeMap<String, String>) -> Option<bool> {
    let mut seen = 0;
    for dir in INPUT_DIRS {
        if !same_inputs_under(root, &root.join(dir), files, &mut seen)? {
            return Some(false);
        }
    }
    Some(seen == files.len())
}

/// Whether every input file under `dir` (as the project loads them: noise skipped) is in `files` with the
/// same content; counts them into `seen`. A symbolic link is never the same input: the project refuses
/// links (see [`crate::db::link_diagnostics`]), so the build that follows reports it instead of a
/// shortcut reading through it. `None` on a read error (the build reports it).
fn same_inputs_under(
    root: &Path,
    dir: &Path,
    files: &BTreeMap<String, String>,
    seen: &mut usize,
) -> Option<bool> {
    for entry in std::fs::read_dir(dir).ok()? {
        let path = entry.ok()?.path();
        if is_noise(&path) {
            continue;
        }
        let kind = std::fs::symlink_metadata(&path).ok()?.file_type();
        if kind.is_symlink() {
            return Some(false);
        }
        if kind.is_dir() {
            if !same_inputs_under(root, &path, files, seen)? {
                return Some(false);
            }
        } else if kind.is_file() {
            let relative = path.strip_prefix(root).ok()?.to_str()?.replace('\\', "/");
            let Some(hash) = files.get(&relative) else {
                return Some(false);
            };
            // Hashed as it is read, through a small buffer: no copy of a big table is kept.
            let mut hasher = blake3::Hasher::new();
            hasher
                .update_reader(std::fs::File::open(&path).ok()?)
                .ok()?;
            if hasher.finalize().to_hex().as_str() != hash {
                return Some(false);
            }
            *seen += 1;
        }
    }
    Some(true)
}
