//! The output folder held by a handle for the length of a publish, so every file the publish puts in
//! place, sets aside or removes lands in the folder that was checked and locked, whatever its path is
//! made to lead to meanwhile: replaced by a symbolic link, renamed away, swapped with another folder.
//! A check of the path when the publish begins cannot promise that (the path may change right after it);
//! a handle can. On Linux each name inside the folder is reached from the handle one folder at a time,
//! never following a link ([`PinnedFolder::at`]); elsewhere paths are used, checked for links first.
//!
//! The places a publish names are [`At`]s: a name inside the pinned folder, or a path of the cache folder
//! (which is beside the output folder, not in it), so one rename can go from either to either.

use std::fs::{File, Metadata};
use std::io;
use std::path::{Component, Path, PathBuf};

use super::with_path;

/// The output folder, held for one publish (see the module documentation).
#[derive(Debug)]
pub(crate) struct PinnedFolder {
    /// Where it was when pinned, for messages.
    path: PathBuf,
    #[cfg(target_os = "linux")]
    fd: std::os::fd::OwnedFd,
}

/// A place a publish reads or changes: inside the pinned folder, or in the cache.
#[derive(Debug)]
pub(crate) struct At {
    /// The place as messages name it.
    shown: PathBuf,
    #[cfg(target_os = "linux")]
    dir: Option<std::os::fd::OwnedFd>,
    /// Its name in `dir` (a path of the cache when `dir` is `None`).
    #[cfg(target_os = "linux")]
    name: PathBuf,
}

impl At {
    /// A path of the cache folder (never inside the output folder).
    pub(crate) fn cache(path: &Path) -> At {
        At {
            shown: path.to_path_buf(),
            #[cfg(target_os = "linux")]
            dir: None,
            #[cfg(target_os = "linux")]
            name: path.to_path_buf(),
        }
    }

    /// The place as messages name it.
    pub(crate) fn shown(&self) -> &Path {
        &self.shown
    }
}

/// The site-relative path of a name inside the folder, refused when it could leave it.
fn plain(rel: &Path) -> io::Result<()> {
    if rel.components().all(|c| matches!(c, Component::Normal(_))) && rel.file_name().is_some() {
        Ok(())
    } else {
        Err(super::outside(rel))
    }
}

#[cfg(target_os = "linux")]
mod imp {
    use std::os::fd::{AsFd, BorrowedFd};

    use rustix::fs::{AtFlags, CWD, Mode, OFlags, RenameFlags};
    use rustix::io::Errno;

    use super::*;

    /// How a folder on the way is opened: never through a link.
    const FOLDER: OFlags = OFlags::RDONLY
        .union(OFlags::DIRECTORY)
        .union(OFlags::NOFOLLOW)
        .union(OFlags::CLOEXEC);

    impl PinnedFolder {
        /// Pins the folder at `real` (a resolved path), made when missing; a link there is refused.
        pub(crate) fn open(real: &Path) -> io::Result<PinnedFolder> {
            std::fs::create_dir_all(real).map_err(|e| with_path(e, real))?;
            let fd = rustix::fs::open(real, FOLDER, Mode::empty())
                .map_err(|e| refused(e, CWD, real, real))?;
            Ok(PinnedFolder {
                path: real.to_path_buf(),
                fd,
            })
        }

        /// The place `rel` (a relative path) names inside the folder, reached one folder at a time from
        /// the handle without following a link; the folders on the way are made when `make`.
        pub(crate) fn at(&self, rel: &Path, make: bool) -> io::Result<At> {
            plain(rel)?;
            let shown = self.path.join(rel);
            let mut dir = rustix::io::dup(&self.fd).map_err(|e| with_path(e.into(), &self.path))?;
            let mut walked = self.path.clone();
            for part in rel.parent().into_iter().flat_map(Path::components) {
                walked.push(part);
                dir = loop {
                    match rustix::fs::openat(&dir, part.as_os_str(), FOLDER, Mode::empty()) {
                        Ok(next) => break next,
                        Err(Errno::NOENT) if make => {
                            match rustix::fs::mkdirat(&dir, part.as_os_str(), Mode::from(0o777)) {
                                Ok(()) | Err(Errno::EXIST) => {}
                                Err(e) => return Err(with_path(e.into(), &walked)),
                            }
                        }
                        Err(e) => {
                            return Err(refused(e, dir.as_fd(), part.as_os_str(), &walked));
                        }
                    }
                };
            }
            let name = PathBuf::from(rel.file_name().unwrap_or_default());
            Ok(At {
                shown,
                dir: Some(dir),
                name,
            })
        }
    }

    /// The error of opening `name` in `dir` as a folder: said plainly when it is a link.
    fn refused(
        e: Errno,
        dir: BorrowedFd<'_>,
        name: impl rustix::path::Arg,
        shown: &Path,
    ) -> io::Error {
        let link = matches!(e, Errno::LOOP | Errno::NOTDIR)
            && rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).is_ok_and(|st| {
                rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Symlink
            });
        if link {
            io::Error::other(format!(
                "refusing to write through the symbolic link {}",
                shown.display()
            ))
        } else {
            with_path(e.into(), shown)
        }
    }

    impl At {
        fn dir(&self) -> BorrowedFd<'_> {
            self.dir.as_ref().map_or(CWD, AsFd::as_fd)
        }
    }

    /// What is at `at` (a link is not followed); `None` when nothing is.
    pub(crate) fn metadata(at: &At) -> io::Result<Option<Metadata>> {
        let how = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        match rustix::fs::openat(at.dir(), &at.name, how, Mode::empty()) {
            Ok(fd) => File::from(fd)
                .metadata()
                .map(Some)
                .map_err(|e| with_path(e, &at.shown)),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(with_path(e.into(), &at.shown)),
        }
    }

    /// Moves `from` to `to`, replacing a file there.
    pub(crate) fn rename(from: &At, to: &At) -> io::Result<()> {
        rustix::fs::renameat(from.dir(), &from.name, to.dir(), &to.name)
            .map_err(|e| with_path(e.into(), &to.shown))
    }

    /// Exchanges `from` with `to` (true), or moves it there when nothing is at `to` (false).
    pub(crate) fn exchange(from: &At, to: &At) -> io::Result<bool> {
        match rustix::fs::renameat_with(
            from.dir(),
            &from.name,
            to.dir(),
            &to.name,
            RenameFlags::EXCHANGE,
        ) {
            Ok(()) => Ok(true),
            Err(Errno::NOENT) => rename(from, to).map(|()| false),
            // Unwrapped: the caller tells a filesystem that cannot exchange by the error's code.
            Err(e) => Err(e.into()),
        }
    }

    /// Makes `to` a second name of the file at `from`.
    pub(crate) fn hard_link(from: &At, to: &At) -> io::Result<()> {
        rustix::fs::linkat(from.dir(), &from.name, to.dir(), &to.name, AtFlags::empty())
            .map_err(|e| with_path(e.into(), &from.shown))
    }

    /// Removes the file at `at`.
    pub(crate) fn remove_file(at: &At) -> io::Result<()> {
        rustix::fs::unlinkat(at.dir(), &at.name, AtFlags::empty())
            .map_err(|e| with_path(e.into(), &at.shown))
    }

    /// Removes the folder at `at` if it is empty.
    pub(crate) fn remove_empty_folder(at: &At) -> io::Result<()> {
        rustix::fs::unlinkat(at.dir(), &at.name, AtFlags::REMOVEDIR)
            .map_err(|e| with_path(e.into(), &at.shown))
    }

    /// Creates (or empties) the file at `at` for writing; a link there is not followed.
    pub(crate) fn create_file(at: &At) -> io::Result<File> {
        let how =
            OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        rustix::fs::openat(at.dir(), &at.name, how, Mode::from(0o666))
            .map(File::from)
            .map_err(|e| with_path(e.into(), &at.shown))
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::*;

    impl PinnedFolder {
        /// Pins the folder at `real`, made when missing (by its path: see the module documentation).
        pub(crate) fn open(real: &Path) -> io::Result<PinnedFolder> {
            std::fs::create_dir_all(real).map_err(|e| with_path(e, real))?;
            Ok(PinnedFolder {
                path: real.to_path_buf(),
            })
        }

        /// The place `rel` names inside the folder, refused when a link is on the way; the folders on
        /// the way are made when `make`.
        pub(crate) fn at(&self, rel: &Path, make: bool) -> io::Result<At> {
            plain(rel)?;
            let shown = self.path.join(rel);
            super::super::no_link_between(&self.path, &shown)?;
            if let (true, Some(dir)) = (make, shown.parent()) {
                std::fs::create_dir_all(dir).map_err(|e| with_path(e, dir))?;
            }
            Ok(At { shown })
        }
    }

    pub(crate) fn metadata(at: &At) -> io::Result<Option<Metadata>> {
        match std::fs::symlink_metadata(&at.shown) {
            Ok(meta) => Ok(Some(meta)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(with_path(e, &at.shown)),
        }
    }

    pub(crate) fn rename(from: &At, to: &At) -> io::Result<()> {
        std::fs::rename(&from.shown, &to.shown).map_err(|e| with_path(e, &to.shown))
    }

    pub(crate) fn exchange(_: &At, _: &At) -> io::Result<bool> {
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }

    pub(crate) fn hard_link(from: &At, to: &At) -> io::Result<()> {
        std::fs::hard_link(&from.shown, &to.shown).map_err(|e| with_path(e, &from.shown))
    }

    pub(crate) fn remove_file(at: &At) -> io::Result<()> {
        std::fs::remove_file(&at.shown).map_err(|e| with_path(e, &at.shown))
    }

    pub(crate) fn remove_empty_folder(at: &At) -> io::Result<()> {
        std::fs::remove_dir(&at.shown).map_err(|e| with_path(e, &at.shown))
    }

    pub(crate) fn create_file(at: &At) -> io::Result<File> {
        File::create(&at.shown).map_err(|e| with_path(e, &at.shown))
    }
}

pub(crate) use imp::{
    create_file, exchange, hard_link, metadata, remove_empty_folder, remove_file, rename,
};

impl PinnedFolder {
    /// Where the folder was when pinned.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The [`super::FileStamp`] of the regular file `rel` names; `None` when it is missing, a link or
    /// not a file.
    pub(crate) fn stamp(&self, rel: &Path) -> Option<super::FileStamp> {
        let meta = metadata(&self.at(rel, false).ok()?).ok()??;
        super::stamp_of_metadata(&meta)
    }

    /// Removes the folders above `rel` that became empty, up to (not including) the folder itself.
    pub(crate) fn remove_empty_parents(&self, rel: &Path) {
        let mut dir = rel.parent();
        while let Some(d) = dir.filter(|d| !d.as_os_str().is_empty()) {
            let removed = self
                .at(d, false)
                .and_then(|at| remove_empty_folder(&at))
                .is_ok();
            if !removed {
                break;
            }
            dir = d.parent();
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_pinned_folder_is_written_even_when_its_path_is_made_a_link() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("public");
        let elsewhere = tmp.path().join("elsewhere");
        std::fs::create_dir_all(&elsewhere).unwrap();
        let pinned = PinnedFolder::open(&out).unwrap();
        std::fs::rename(&out, tmp.path().join("public.old")).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &out).unwrap();
        let staged = tmp.path().join("staged");
        std::fs::write(&staged, "new").unwrap();
        rename(
            &At::cache(&staged),
            &pinned.at(Path::new("fr/index.html"), true).unwrap(),
        )
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("public.old/fr/index.html")).unwrap(),
            "new"
        );
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
        assert!(pinned.stamp(Path::new("fr/index.html")).is_some());
    }

    #[test]
    fn a_link_inside_the_pinned_folder_is_never_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("public");
        let elsewhere = tmp.path().join("elsewhere");
        std::fs::create_dir_all(&elsewhere).unwrap();
        let pinned = PinnedFolder::open(&out).unwrap();
        std::os::unix::fs::symlink(&elsewhere, out.join("fr")).unwrap();
        let error = pinned
            .at(Path::new("fr/index.html"), true)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("refusing to write through the symbolic link"),
            "{error}"
        );
        assert!(pinned.at(Path::new("../x"), true).is_err());
        // The folder itself a link: refused when pinned.
        let link = tmp.path().join("alias");
        std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
        assert!(
            PinnedFolder::open(&link)
                .unwrap_err()
                .to_string()
                .contains("symbolic link")
        );
    }
}
