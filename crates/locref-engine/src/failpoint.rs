//! Fault points for the tests that drive locref through its binary: a named step where the process ends
//! as if killed, or waits while the test changes the world around it. Set by `LOCREF_FAILPOINT`, read once
//! per step; unset, each step costs one look at the environment.
//!
//! - `write:N` / `write:end`: `release` and `migrate-releases` end (exit status 137) right after their
//!   N-th write, or after their last check, before the journal is removed ([`exit_at`]).
//! - `pause:<step>:<file>`: the process makes `<file>` and waits until it is removed, then goes on
//!   ([`pause_at`]). Steps: `put-in-place` (a publish, every file staged, before any is put in place).

use std::path::PathBuf;
use std::time::Duration;

fn setting() -> Option<String> {
    std::env::var("LOCREF_FAILPOINT").ok()
}

/// Ends the process as if killed when `LOCREF_FAILPOINT` is `write:<step>`.
pub fn exit_at(step: &str) {
    if setting().is_some_and(|f| f.strip_prefix("write:") == Some(step)) {
        std::process::exit(137);
    }
}

/// Waits at `step` when `LOCREF_FAILPOINT` is `pause:<step>:<file>`: `<file>` is made, and the process
/// goes on once it is removed (or after a minute, so a test that dies never leaves it waiting for good).
pub fn pause_at(step: &str) {
    let Some(file) = setting().and_then(|f| {
        let rest = f
            .strip_prefix("pause:")?
            .strip_prefix(step)?
            .strip_prefix(':')?;
        Some(PathBuf::from(rest))
    }) else {
        return;
    };
    if std::fs::write(&file, step).is_err() {
        return;
    }
    for _ in 0..6000 {
        if !file.exists() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
