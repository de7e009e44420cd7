//! The second thread of a build, kept for the life of a session.
//!
//! A rebuild in `locref watch` comes after an idle pause; the helper is created once and parked between
//! jobs, so a rebuild does not pay for a thread's creation. The threads go where the scheduler puts them:
//! keeping them on different cores by CPU affinity for the length of a job was measured against leaving
//! them to the scheduler and made no difference beyond noise (BENCHMARKS.md), so it was removed.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::JoinHandle;

type Job = Box<dyn FnOnce() + Send>;
type Panic = Box<dyn Any + Send>;

/// A parked thread that runs one job at a time beside the caller.
pub struct Helper {
    jobs: Option<Sender<Job>>,
    done: Receiver<Result<(), Panic>>,
    thread: Option<JoinHandle<()>>,
}

impl Default for Helper {
    fn default() -> Self {
        Self::new()
    }
}

impl Helper {
    pub fn new() -> Helper {
        let (jobs, inbox) = channel::<Job>();
        let (report, done) = channel();
        let thread = std::thread::Builder::new()
            .name("locref-helper".into())
            .spawn(move || {
                for job in inbox {
                    let result = catch_unwind(AssertUnwindSafe(job));
                    if report.send(result).is_err() {
                        break;
                    }
                }
            })
            .expect("spawn the helper thread");
        Helper {
            jobs: Some(jobs),
            done,
            thread: Some(thread),
        }
    }

    /// Runs `job` on the helper thread while `here` runs on this one, and returns `here`'s result once
    /// both are done. A panic in either is resumed here, after both have finished.
    pub(crate) fn run_beside<R>(
        &mut self,
        job: impl FnOnce() + Send + 'static,
        here: impl FnOnce() -> R,
    ) -> R {
        let sent = self
            .jobs
            .as_ref()
            .is_some_and(|jobs| jobs.send(Box::new(job)).is_ok());
        let result = catch_unwind(AssertUnwindSafe(here));
        let helper_result = if sent {
            self.done.recv().unwrap_or(Ok(()))
        } else {
            Ok(())
        };
        let value = result.unwrap_or_else(|panic| resume_unwind(panic));
        if let Err(panic) = helper_result {
            resume_unwind(panic);
        }
        value
    }
}

impl Drop for Helper {
    fn drop(&mut self) {
        // Closing the job channel ends the thread's loop.
        self.jobs = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[test]
    fn runs_jobs_beside_the_caller_one_after_another() {
        let mut helper = Helper::new();
        let log = Arc::new(Mutex::new(Vec::new()));
        for round in 0..3 {
            let theirs = log.clone();
            let here = helper.run_beside(
                move || theirs.lock().unwrap().push(("helper", round)),
                || round * 10,
            );
            assert_eq!(here, round * 10);
        }
        let mut seen = log.lock().unwrap().clone();
        seen.sort();
        assert_eq!(seen, [("helper", 0), ("helper", 1), ("helper", 2)]);
    }

    #[test]
    fn a_panic_on_the_helper_reaches_the_caller_and_the_helper_keeps_working() {
        let mut helper = Helper::new();
        let caught = catch_unwind(AssertUnwindSafe(|| {
            helper.run_beside(|| panic!("job failed"), || 1)
        }));
        let message = caught.expect_err("the helper's panic is resumed here");
        assert_eq!(message.downcast_ref::<&str>(), Some(&"job failed"));
        assert_eq!(helper.run_beside(|| {}, || 2), 2);
    }
}
