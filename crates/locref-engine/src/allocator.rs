//! Settings of the process allocator (mimalloc) and of the process's memory, shared by the `locref`
//! binary and the benchmarks.

use libmimalloc_sys::{mi_option_set, mi_option_t};

/// `mi_option_purge_delay`: its position in mimalloc's `mi_option_e` (`mimalloc.h`, v2 and v3).
const PURGE_DELAY: mi_option_t = 15;

/// How long mimalloc waits before it gives freed memory back in a one-off build, in milliseconds
/// (mimalloc v2's default).
pub const ONE_OFF_PURGE_DELAY_MS: i64 = 10;

/// Keeps the memory a rebuild frees in the process instead of returning it to the system: for a session
/// (`watch`, `serve`).
///
/// mimalloc gives freed pages back to the system once they have been unused for its purge delay (1 s in
/// mimalloc v3), which is about the pause between a curator's saves. The next rebuild would then take its
/// buffers (the big spliced lists) from fresh pages, each faulted in and zeroed by the kernel
/// (BENCHMARKS.md has the cost). A session's memory stays at its peak instead, which its first build
/// reaches.
pub fn keep_freed_memory() {
    set_purge_delay(-1);
}

/// Gives freed memory back to the system after [`ONE_OFF_PURGE_DELAY_MS`]: for a one-off build (`build`,
/// `check`, `release`).
///
/// A one-off build frees each batch of outputs once written and much of what it parsed and derived on
/// the way. Kept, that memory was a sixth of an x100 build's peak; given back, it costs about half a
/// second of system time (the kernel zeroing the pages faulted in again), mostly beside the other
/// thread's work: 1.03x the CPU time, 1.04x the wall time (BENCHMARKS.md: "Memory given back in one-off
/// builds").
pub fn return_freed_memory_soon() {
    set_purge_delay(ONE_OFF_PURGE_DELAY_MS);
}

/// Sets mimalloc's purge delay, unless the environment sets it (`MIMALLOC_PURGE_DELAY`, mimalloc's own
/// variable: what someone measuring another setting asks for wins).
fn set_purge_delay(milliseconds: i64) {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
        return;
    }
    // SAFETY: setting an option is a store into mimalloc's option table, valid at any time.
    unsafe { mi_option_set(PURGE_DELAY, milliseconds as _) }
}

/// Asks the kernel for small (4 KiB) pages only, for every command.
///
/// mimalloc marks its arenas for transparent huge pages, so the first touch of any of their 2 MiB
/// regions makes the kernel allocate and zero a whole huge page, whether or not the build ever uses
/// more than a few bytes of it. On this kind of virtual machine zeroing huge pages was most of a large
/// build's system time, and it also rounds the resident set up (BENCHMARKS.md has the figures). The
/// flag covers the mappings made before `main` too: the kernel checks it at each page fault.
pub fn no_huge_pages() {
    #[cfg(target_os = "linux")]
    {
        // Best effort: a kernel without the flag builds as before.
        let _ = rustix::thread::disable_transparent_huge_pages(true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use libmimalloc_sys::mi_option_get;

    /// mimalloc's purge delay in milliseconds (-1: never).
    fn purge_delay() -> i64 {
        // SAFETY: reading an option, valid at any time.
        unsafe { mi_option_get(PURGE_DELAY) as i64 }
    }

    #[test]
    fn the_purge_delay_is_the_option_set_for_sessions_and_single_builds() {
        // mimalloc's documented defaults (10 ms in v2, 1000 ms in v3) identify the option by its position:
        // a mimalloc whose options moved fails here rather than setting some other option.
        assert!(
            [10, 1000, -1].contains(&purge_delay()),
            "option {PURGE_DELAY} is not the purge delay: {}",
            purge_delay()
        );
        // The test process's environment may set mimalloc's own variable, which then wins.
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
            eprintln!("skipped: MIMALLOC_PURGE_DELAY is set in the environment");
            return;
        }
        keep_freed_memory();
        assert_eq!(purge_delay(), -1);
        return_freed_memory_soon();
        assert_eq!(purge_delay(), ONE_OFF_PURGE_DELAY_MS);
        keep_freed_memory();
        assert_eq!(purge_delay(), -1);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn huge_pages_are_refused_for_the_process() {
        no_huge_pages();
        assert!(rustix::thread::transparent_huge_pages_are_disabled().unwrap());
    }
}
