//! Atomic replacement of an output file: a reader that opens the path sees the old file or the new one,
//! never a mix.
//!
//! The portable way is a new temporary file and a `rename` over the target ([`write_atomic`]). It costs a
//! new inode and fresh page-cache pages on every write, and freeing the replaced inode: for the 1 MB
//! `facts.json` that is most of a rebuild's write time. So on Linux a [`Replacer`] keeps one *spare* file
//! per output, outside the output folder, and writes a new version by overwriting the spare in place and
//! exchanging it with the target (`renameat2(RENAME_EXCHANGE)`). The exchange is as atomic as a rename,
//! and the spare then holds the previous version, ready to be overwritten by the next write. Filesystems
//! without the exchange (or a spare folder on another filesystem) fall back to the rename.
//!
//! A spare is only ever overwritten when no other name links to it, so a hard-linked copy of an earlier
//! output (`cp -al`, rsync `--link-dest`) is never changed. A process that holds the old file open across
//! two rebuilds, though, would see it change under it: spares are for the output folder of a session,
//! where rebuilds are a human edit apart and the dev server serves from memory.

use std::fs::File;
use std::io::{self, IoSlice, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

/// Writes the concatenation of `parts` to `path` through a temporary file and a rename, so readers never
/// see half a file.
pub fn write_atomic(path: &Path, parts: &[&[u8]]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("out");
    let tmp = dir.join(format!(".{name}.locref-tmp-{}", std::process::id()));
    write_parts(&mut File::create(&tmp)?, parts)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// Writes the concatenation of `parts` with vectored writes (no copy into one buffer first).
fn write_parts(file: &mut File, parts: &[&[u8]]) -> io::Result<()> {
    let mut slices: Vec<IoSlice> = parts.iter().map(|part| IoSlice::new(part)).collect();
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

/// Replaces files atomically, through spares where the platform and filesystem allow it.
#[derive(Debug)]
pub struct Replacer {
    /// Whether to try the spare exchange; cleared for good the first time the filesystem refuses it.
    exchange: bool,
}

impl Default for Replacer {
    fn default() -> Self {
        Replacer {
            exchange: cfg!(target_os = "linux"),
        }
    }
}

impl Replacer {
    /// Whether writes go through spares (false where the platform or filesystem cannot exchange).
    pub fn uses_spares(&self) -> bool {
        self.exchange
    }

    /// Replaces `target` with the concatenation of `parts`, using (and creating, if needed) the spare
    /// file `spare`, which must not be inside a folder that is published. Without a spare (a file written
    /// for the first time, which has no earlier version to exchange), a temporary file and a rename.
    pub fn replace(
        &mut self,
        target: &Path,
        spare: Option<&Path>,
        parts: &[&[u8]],
    ) -> io::Result<()> {
        if let Some(spare) = spare.filter(|_| self.exchange) {
            match exchange::replace(target, spare, parts) {
                Ok(()) => return Ok(()),
                Err(e) if exchange::unsupported(&e) => {
                    self.exchange = false;
                    let _ = std::fs::remove_file(spare);
                }
                Err(e) => return Err(e),
            }
        }
        write_atomic(target, parts)
    }
}

/// Something that can be written as consecutive slices (a stamped output).
pub trait Parts: Send + 'static {
    fn parts(&self) -> Vec<&[u8]>;
}

/// Makes the missing spares of a session's outputs on a thread of its own, right after its first build,
/// so that the first edit of an output finds its spare ready.
///
/// A write through a spare is cheap because the spare already has blocks and cached pages of about the
/// right size; a new spare costs its creation and the allocation of both (the first edit of France's
/// facts took 4 - 7 ms to publish instead of about 1 ms, BENCHMARKS.md). So each spare is made as a
/// copy of its output. It is written under a temporary name and renamed into place only if no spare
/// appeared meanwhile, so a write that needs the spare first makes its own, and this thread never
/// writes into a spare that a write may use.
#[derive(Debug)]
pub struct SparePreparation {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl SparePreparation {
    /// Starts making the spares in `spares` that do not exist yet, each with the given content.
    pub fn start<P: Parts>(spares: Vec<(PathBuf, P)>) -> SparePreparation {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::Builder::new()
            .name("locref-spares".into())
            .spawn(move || {
                for (spare, content) in spares {
                    if stopped.load(Ordering::Relaxed) {
                        break;
                    }
                    // Best effort: a spare that cannot be made now is made by its first write.
                    let _ = exchange::prepare(&spare, &content.parts());
                }
            })
            .ok();
        SparePreparation { stop, thread }
    }

    /// Waits until every spare is made.
    pub fn wait(mut self) {
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

    /// Overwrites the spare with the concatenation of `parts`, then exchanges it with `target` (or moves
    /// it there when the target does not exist yet).
    pub fn replace(target: &Path, spare: &Path, parts: &[&[u8]]) -> io::Result<()> {
        let mut file = open_spare(spare)?;
        // Overwriting in place and cutting to length reuses the spare's blocks and cached pages, where
        // truncating first would free them and allocate them again.
        super::write_parts(&mut file, parts)?;
        file.set_len(parts.iter().map(|part| part.len() as u64).sum())?;
        drop(file);
        match rustix::fs::renameat_with(CWD, spare, CWD, target, RenameFlags::EXCHANGE) {
            Ok(()) => Ok(()),
            Err(rustix::io::Errno::NOENT) => {
                if let Some(dir) = target.parent() {
                    std::fs::create_dir_all(dir)?;
                }
                std::fs::rename(spare, target)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Opens the spare for overwriting, creating it (and its folder) when missing. Anything that is not a
    /// plain file of its own (a symlink, a folder, a file with other hard links) is replaced by a new
    /// empty file rather than written through.
    fn open_spare(spare: &Path) -> io::Result<File> {
        let flags = OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        // The session's preparation of spares ([`super::SparePreparation`]) may put a spare in place
        // between the open that finds none and the creation: then the spare is opened again, once.
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
                Err(_) => std::fs::remove_file(spare)?,
            }
            match std::fs::File::create_new(spare) {
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && !raced => raced = true,
                created => return created,
            }
        }
    }

    /// Makes the spare `spare` with the content `parts`, unless it exists: written under a temporary
    /// name, then renamed into place without replacing anything.
    pub fn prepare(spare: &Path, parts: &[&[u8]]) -> io::Result<()> {
        if spare.symlink_metadata().is_ok() {
            return Ok(());
        }
        if let Some(dir) = spare.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut name = spare.as_os_str().to_owned();
        name.push(".locref-prep");
        let temporary = std::path::PathBuf::from(name);
        super::write_parts(&mut File::create(&temporary)?, parts)?;
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
    pub fn unsupported(e: &io::Error) -> bool {
        matches!(
            rustix::io::Errno::from_io_error(e),
            Some(rustix::io::Errno::INVAL | rustix::io::Errno::XDEV | rustix::io::Errno::NOSYS)
                | Some(rustix::io::Errno::OPNOTSUPP)
        )
    }
}

#[cfg(not(target_os = "linux"))]
mod exchange {
    use std::io;
    use std::path::Path;

    pub fn replace(_: &Path, _: &Path, _: &[&[u8]]) -> io::Result<()> {
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }

    pub fn unsupported(_: &io::Error) -> bool {
        true
    }

    pub fn prepare(_: &Path, _: &[&[u8]]) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One whole-file write of `bytes` to `target` through `spare`.
    fn write_through(replacer: &mut Replacer, target: &Path, spare: &Path, bytes: &[u8]) {
        replacer.replace(target, Some(spare), &[bytes]).unwrap();
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn an_exchange_leaves_the_new_bytes_at_the_target_and_the_old_ones_in_the_spare() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out/a/facts.json");
        let spare = dir.path().join("cache/a/facts.json");
        let mut replacer = Replacer::default();
        // First write: no target yet, so the spare moves into place.
        write_through(&mut replacer, &target, &spare, b"first version");
        assert_eq!(std::fs::read(&target).unwrap(), b"first version");
        assert!(!spare.exists());
        // Second: a new spare, exchanged; the spare now holds the first version.
        write_through(&mut replacer, &target, &spare, b"second");
        assert_eq!(std::fs::read(&target).unwrap(), b"second");
        assert_eq!(std::fs::read(&spare).unwrap(), b"first version");
        let first_inode = std::fs::metadata(&spare).unwrap().ino();
        // Third: the spare is overwritten in place (shorter content is cut to length) and exchanged; the
        // parts are written in order.
        replacer
            .replace(&target, Some(&spare), &[b"3".as_slice(), b"", b"rd"])
            .unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"3rd");
        assert_eq!(std::fs::metadata(&target).unwrap().ino(), first_inode);
        assert_eq!(std::fs::read(&spare).unwrap(), b"second");
        assert!(replacer.uses_spares());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_hard_linked_or_symlinked_spare_is_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out/index.html");
        let spare = dir.path().join("cache/index.html");
        let mut replacer = Replacer::default();
        write_through(&mut replacer, &target, &spare, b"one");
        write_through(&mut replacer, &target, &spare, b"two");
        // A snapshot of the output folder made with hard links, then one more exchange: the spare is
        // the snapshot's file and must not be overwritten.
        let snapshot = dir.path().join("snapshot.html");
        std::fs::hard_link(&target, &snapshot).unwrap();
        write_through(&mut replacer, &target, &spare, b"three");
        write_through(&mut replacer, &target, &spare, b"four");
        assert_eq!(std::fs::read(&snapshot).unwrap(), b"two");
        assert_eq!(std::fs::read(&target).unwrap(), b"four");
        // A symlink in the spare's place is replaced, not followed.
        let victim = dir.path().join("victim.txt");
        std::fs::write(&victim, b"keep me").unwrap();
        std::fs::remove_file(&spare).unwrap();
        std::os::unix::fs::symlink(&victim, &spare).unwrap();
        write_through(&mut replacer, &target, &spare, b"five");
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep me");
        assert_eq!(std::fs::read(&target).unwrap(), b"five");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_spare_on_another_filesystem_falls_back_to_renames() {
        use std::os::unix::fs::MetadataExt;
        // /dev/shm is a tmpfs, so a spare there cannot be exchanged with a file in the temporary folder.
        let Ok(other) = tempfile::tempdir_in("/dev/shm") else {
            eprintln!("no /dev/shm here; nothing to test");
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        if std::fs::metadata(other.path()).unwrap().dev()
            == std::fs::metadata(dir.path()).unwrap().dev()
        {
            eprintln!("/dev/shm and the temporary folder share a filesystem here; nothing to test");
            return;
        }
        let target = dir.path().join("out/facts.json");
        let spare = other.path().join("facts.json");
        let mut replacer = Replacer::default();
        write_through(&mut replacer, &target, &spare, b"one");
        write_through(&mut replacer, &target, &spare, b"two");
        assert_eq!(std::fs::read(&target).unwrap(), b"two");
        assert!(
            !replacer.uses_spares(),
            "the cross-device exchange must switch to renames"
        );
        assert!(
            !spare.exists(),
            "the spare of the failed exchange is removed"
        );
        write_through(&mut replacer, &target, &spare, b"three");
        assert_eq!(std::fs::read(&target).unwrap(), b"three");
        assert!(!spare.exists());
    }

    impl Parts for Vec<u8> {
        fn parts(&self) -> Vec<&[u8]> {
            vec![self.as_slice()]
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn prepared_spares_are_copies_made_once_and_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out/a/facts.json");
        let spare = dir.path().join("cache/a/facts.json");
        let kept = dir.path().join("cache/b.html");
        std::fs::create_dir_all(dir.path().join("out/a")).unwrap();
        std::fs::write(&target, b"published").unwrap();
        // A spare that exists already (a write made it) is left as it is.
        std::fs::create_dir_all(dir.path().join("cache")).unwrap();
        std::fs::write(&kept, b"previous version").unwrap();
        SparePreparation::start(vec![
            (spare.clone(), b"published".to_vec()),
            (kept.clone(), b"not this".to_vec()),
        ])
        .wait();
        assert_eq!(std::fs::read(&spare).unwrap(), b"published");
        assert_eq!(std::fs::read(&kept).unwrap(), b"previous version");
        let mut names: Vec<_> = std::fs::read_dir(dir.path().join("cache/a"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        assert_eq!(names, ["facts.json"], "no temporary file is left behind");
        // The next write goes through the prepared spare.
        let mut replacer = Replacer::default();
        write_through(&mut replacer, &target, &spare, b"edited");
        assert_eq!(std::fs::read(&target).unwrap(), b"edited");
        assert_eq!(std::fs::read(&spare).unwrap(), b"published");
        assert!(replacer.uses_spares());
    }

    #[test]
    fn a_first_write_without_a_spare_creates_none() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out/x.csv");
        let mut replacer = Replacer::default();
        replacer.replace(&target, None, &[b"a".as_slice()]).unwrap();
        replacer
            .replace(&target, None, &[b"b".as_slice(), b"-", b"c"])
            .unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"b-c");
        let names: Vec<_> = std::fs::read_dir(dir.path().join("out"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["x.csv"], "no temporary file is left behind");
    }
}
