//! What a command builds for, chosen once: the one value that decides the build's plan, how the
//! publisher writes and what the process's memory keeps, so no mismatched pair of them can be made.

use std::path::Path;

use super::Plan;
use crate::publish::Publisher;
use crate::transaction::Lifetime;

/// What a command builds for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// One build, then the process ends (`build`, `check`, `release`'s check): nothing is kept for a
    /// later rebuild, the long outputs are streamed, freed memory goes back to the system soon.
    OneOff,
    /// A watch session's rebuilds into a folder: each output's digest and the parts an edit splices
    /// are kept, the written bytes let go; a session's memory stays at its peak.
    Session,
    /// The dev server's rebuilds, published in memory: a session that also keeps every output's
    /// bytes, to serve them.
    InMemory,
}

impl Profile {
    /// The plan a build of `site` in this profile takes ([`Plan`]). Without the `streaming` feature it
    /// is the serial plan, whatever the profile.
    pub fn plan(self, site: &'static crate::site::Site) -> Plan {
        Plan::of(self, site)
    }

    /// The publisher of this profile's builds: into `out`, or only in memory when `out` is `None`.
    pub fn publisher(self, out: Option<&Path>) -> Publisher {
        Publisher::new(out, self.lifetime())
    }

    /// How the file transaction of this profile's publisher lives: a session keeps spare files ready
    /// (with the speed machinery), a one-off build does not.
    pub(crate) fn lifetime(self) -> Lifetime {
        match self {
            Profile::OneOff => Lifetime::OneOff,
            Profile::Session | Profile::InMemory => Lifetime::Session,
        }
    }

    /// Sets the process's memory for this profile (mimalloc's purge delay, [`crate::allocator`]):
    /// a session keeps what a rebuild frees for the next, a one-off build gives it back.
    pub fn set_up_memory(self) {
        match self {
            Profile::OneOff => crate::allocator::return_freed_memory_soon(),
            Profile::Session | Profile::InMemory => crate::allocator::keep_freed_memory(),
        }
    }
}
