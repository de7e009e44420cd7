//! Writing staged files beside the build.
//!
//! Writing an output is a copy of its bytes into the page cache: at x100 a fact edit writes about 270 MB
//! (`llms-full.txt` alone 113 MB), which took the build's own thread about 45 ms of a 112 ms edit while
//! the outputs after it waited. A [`Writer`] takes those copies to a thread of its own, in the order they
//! come, so the build renders the next outputs meanwhile; a thread that would otherwise wait for the
//! writer writes the next file itself ([`Writer::drain`], before the files are put in place). A file is
//! written by one thread: two writing one file would take turns at its inode's lock.

use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// The bytes of a file to stage, owned, so that another thread can write them.
pub(crate) trait Content: Send + 'static {
    /// The file's bytes as consecutive slices.
    fn segments(&self) -> Vec<&[u8]>;
}

impl Content for Vec<u8> {
    fn segments(&self) -> Vec<&[u8]> {
        vec![self]
    }
}

/// One file to write: opened by the caller (so that opening fails where the caller can fall back).
struct Job {
    file: File,
    /// The output it stands for, named in errors (the staging file's name is the replacer's business).
    target: PathBuf,
    content: Box<dyn Content>,
    len: usize,
}

#[derive(Default)]
struct State {
    jobs: VecDeque<Job>,
    /// Bytes sent and not yet written.
    queued: usize,
    /// Jobs taken and not yet written.
    running: usize,
    stop: bool,
    failed: Vec<io::Error>,
}

struct Shared {
    state: Mutex<State>,
    /// Signalled when a job is sent, a job is written, or the writer is to stop.
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wait<'a>(&self, state: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        self.changed.wait(state).unwrap_or_else(|e| e.into_inner())
    }

    /// Writes the next job, if any, with the lock released meanwhile; false when there was none.
    fn write_next<'a>(&'a self, mut state: MutexGuard<'a, State>) -> (MutexGuard<'a, State>, bool) {
        let Some(mut job) = state.jobs.pop_front() else {
            return (state, false);
        };
        state.running += 1;
        drop(state);
        let result = write(&mut job);
        let mut state = self.lock();
        state.running -= 1;
        state.queued -= job.len;
        if let Err(e) = result {
            state.failed.push(super::with_path(e, &job.target));
        }
        self.changed.notify_all();
        (state, true)
    }
}

/// The writing thread and the files it has still to write.
pub(super) struct Writer {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Writer")
    }
}

impl Writer {
    /// Starts the writing thread (each [`Writer::send`] says how many bytes may wait for it).
    pub(super) fn start() -> io::Result<Writer> {
        let shared = Arc::new(Shared {
            state: Mutex::default(),
            changed: Condvar::new(),
        });
        let theirs = shared.clone();
        let thread = std::thread::Builder::new()
            .name("locref-writer".into())
            .spawn(move || {
                let mut state = theirs.lock();
                while !state.stop || !state.jobs.is_empty() {
                    let wrote;
                    (state, wrote) = theirs.write_next(state);
                    if !wrote {
                        state = theirs.wait(state);
                    }
                }
            })?;
        Ok(Writer {
            shared,
            thread: Some(thread),
        })
    }

    /// Writes `content` into `file` (opened for writing at its start; its old content is cut to the new
    /// length) beside the caller. While more than `queue_limit` bytes would wait to be written, the
    /// caller waits first (outputs let go once written are memory the build would not hold otherwise).
    pub(super) fn send(
        &mut self,
        file: File,
        target: PathBuf,
        content: impl Content,
        queue_limit: usize,
    ) {
        let len = content.segments().iter().map(|s| s.len()).sum();
        let mut state = self.shared.lock();
        while state.queued > 0 && state.queued + len > queue_limit {
            state = self.shared.wait(state);
        }
        state.jobs.push_back(Job {
            file,
            target,
            content: Box::new(content),
            len,
        });
        state.queued += len;
        self.shared.changed.notify_all();
    }

    /// Writes beside the writer until every file sent is written; returns the errors of those that were
    /// not (each names its output).
    pub(super) fn drain(&mut self) -> Vec<io::Error> {
        let mut state = self.shared.lock();
        loop {
            let wrote;
            (state, wrote) = self.shared.write_next(state);
            if wrote {
                continue;
            }
            if state.running == 0 {
                return std::mem::take(&mut state.failed);
            }
            state = self.shared.wait(state);
        }
    }
}

impl Drop for Writer {
    /// Lets the thread write what it was given, and waits for it.
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.changed.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn write(job: &mut Job) -> io::Result<()> {
    super::overwrite(&mut job.file, &job.content.segments())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opened(path: &std::path::Path, old: &[u8]) -> File {
        std::fs::write(path, old).unwrap();
        std::fs::OpenOptions::new().write(true).open(path).unwrap()
    }

    #[test]
    fn files_are_written_whole_and_cut_to_length_whoever_writes_them() {
        let dir = tempfile::tempdir().unwrap();
        // A limit of 10 bytes: each send after the first waits for the writer, and the last files are
        // left to `drain`, which writes beside it.
        let mut writer = Writer::start().unwrap();
        let mut expected = Vec::new();
        for i in 0..20u8 {
            let path = dir.path().join(format!("{i}.txt"));
            let content = vec![b'a' + i; 3 + usize::from(i)];
            let file = opened(&path, &[b'x'; 40]);
            writer.send(file, path.clone(), content.clone(), 10);
            expected.push((path, content));
        }
        assert!(writer.drain().is_empty());
        for (path, content) in expected {
            assert_eq!(std::fs::read(&path).unwrap(), content, "{}", path.display());
        }
    }

    #[test]
    fn a_write_that_fails_is_reported_with_its_output_at_the_drain() {
        let dir = tempfile::tempdir().unwrap();
        let mut writer = Writer::start().unwrap();
        let good = dir.path().join("good.txt");
        writer.send(
            opened(&good, b""),
            good.clone(),
            b"fine".to_vec(),
            usize::MAX,
        );
        // Opened for reading only: the write fails.
        let bad = dir.path().join("bad.txt");
        std::fs::write(&bad, b"old").unwrap();
        let target = dir.path().join("site/page.html");
        writer.send(
            File::open(&bad).unwrap(),
            target.clone(),
            b"new".to_vec(),
            usize::MAX,
        );
        let errors = writer.drain();
        assert_eq!(errors.len(), 1);
        assert!(
            errors[0]
                .to_string()
                .contains(&target.display().to_string()),
            "{}",
            errors[0]
        );
        assert_eq!(std::fs::read(&good).unwrap(), b"fine");
        assert_eq!(std::fs::read(&bad).unwrap(), b"old");
        // Reported once: a later drain starts clean.
        assert!(writer.drain().is_empty());
    }
}
