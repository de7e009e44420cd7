//! The second thread of a build, kept for the life of a session.
//!
//! A rebuild in `locref watch` comes after an idle pause. Spawning a thread then is not enough to get a
//! second core: the scheduler may place the new thread on the core of the thread that created it, where
//! it waits for that thread's time slice, or later move both threads onto one core. On a kernel that packs
//! tasks onto few vCPUs that delay was the whole gain of the second thread (BENCHMARKS.md). So the helper
//! is created once and parked between jobs, and for the length of each job the two threads are kept on
//! different cores (Linux: CPU affinity, restored after the job). On one core, or where affinity cannot
//! be set, they run where the scheduler puts them. `LOCREF_HELPER_AFFINITY=off` leaves them to the
//! scheduler, so the benchmark can compare both.

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
    steering: steer::Steering,
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
        let (id_sender, id) = channel();
        let thread = std::thread::Builder::new()
            .name("locref-helper".into())
            .spawn(move || {
                let _ = id_sender.send(steer::current_thread());
                for job in inbox {
                    let result = catch_unwind(AssertUnwindSafe(job));
                    if report.send(result).is_err() {
                        break;
                    }
                }
            })
            .expect("spawn the helper thread");
        let helper_thread = id.recv().ok().flatten();
        let steer = std::env::var("LOCREF_HELPER_AFFINITY").map_or(true, |v| v != "off");
        let steering = steer::Steering::new(helper_thread.filter(|_| steer));
        Helper {
            jobs: Some(jobs),
            done,
            thread: Some(thread),
            steering,
        }
    }

    /// Runs `job` on the helper thread while `here` runs on this one, and returns `here`'s result once
    /// both are done. A panic in either is resumed here, after both have finished.
    pub fn run_beside<R>(
        &mut self,
        job: impl FnOnce() + Send + 'static,
        here: impl FnOnce() -> R,
    ) -> R {
        let _apart = self.steering.apart();
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

#[cfg(target_os = "linux")]
mod steer {
    use rustix::thread::{CpuSet, Pid, gettid, sched_getaffinity, sched_getcpu, sched_setaffinity};

    /// The helper thread's id, to set its affinity from the caller's thread.
    pub fn current_thread() -> Option<Pid> {
        Some(gettid())
    }

    /// Which cores the helper may use: those the process may use, minus the caller's at each job.
    pub struct Steering {
        helper: Option<Pid>,
        allowed: Option<CpuSet>,
    }

    impl Steering {
        pub fn new(helper: Option<Pid>) -> Steering {
            let allowed = helper.and_then(|h| sched_getaffinity(Some(h)).ok());
            Steering { helper, allowed }
        }

        /// Keeps the helper and this thread on different cores until the guard drops: the helper on
        /// the allowed cores other than this thread's, this thread on its own (when there is another
        /// core), so that waking the helper does not queue it behind this thread and neither thread is
        /// moved onto the other's core meanwhile.
        pub fn apart(&self) -> Apart {
            let (Some(helper), Some(allowed)) = (self.helper, &self.allowed) else {
                return Apart { restore: None };
            };
            let here = sched_getcpu();
            if allowed.count() < 2 || !allowed.is_set(here) {
                return Apart { restore: None };
            }
            let mut elsewhere = *allowed;
            elsewhere.unset(here);
            let mut only_here = CpuSet::new();
            only_here.set(here);
            // Best effort: where affinity cannot be set, the threads go where the scheduler puts them.
            let restore = sched_getaffinity(None).ok().filter(|_| {
                sched_setaffinity(Some(helper), &elsewhere).is_ok()
                    && sched_setaffinity(None, &only_here).is_ok()
            });
            Apart { restore }
        }
    }

    /// Gives this thread back the cores it was allowed before [`Steering::apart`].
    pub struct Apart {
        restore: Option<CpuSet>,
    }

    impl Drop for Apart {
        fn drop(&mut self) {
            if let Some(cores) = &self.restore {
                let _ = sched_setaffinity(None, cores);
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod steer {
    pub fn current_thread() -> Option<()> {
        None
    }

    pub struct Steering;

    impl Steering {
        pub fn new(_: Option<()>) -> Steering {
            Steering
        }

        pub fn apart(&self) {}
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

    #[cfg(target_os = "linux")]
    #[test]
    fn the_helper_is_steered_off_the_callers_core_and_the_caller_gets_its_cores_back() {
        use rustix::thread::{sched_getaffinity, sched_getcpu, sched_setaffinity};
        let allowed = sched_getaffinity(None).unwrap();
        let cores_of = |set: &rustix::thread::CpuSet| -> Vec<usize> {
            (0..1024).filter(|&cpu| set.is_set(cpu)).collect()
        };
        // Where there is one core, or affinity may not be set, the threads go where they are put.
        let steerable = allowed.count() >= 2 && sched_setaffinity(None, &allowed).is_ok();
        let mut helper = Helper::new();
        let seen = Arc::new(Mutex::new(Vec::new()));
        for _ in 0..5 {
            let theirs = seen.clone();
            let mine = helper.run_beside(
                move || theirs.lock().unwrap().push(sched_getcpu()),
                sched_getcpu,
            );
            let theirs = *seen.lock().unwrap().last().unwrap();
            if steerable {
                assert_ne!(theirs, mine, "the helper ran on the caller's core");
            }
            let now = sched_getaffinity(None).unwrap();
            assert_eq!(
                cores_of(&now),
                cores_of(&allowed),
                "the caller's cores are restored"
            );
        }
    }
}
