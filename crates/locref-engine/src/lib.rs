//! locref's engine: what builds a site, knowing it only through the [`site::Site`] value the site
//! crate hands it. A project's files are salsa inputs ([`workspace`], [`db`]); a build runs the site's
//! checks, then renders every output through a [`build::Plan`] (serial, or streaming) and checks every
//! page ([`linkcheck`]); the publisher ([`publish`]) compares with the last build and puts the changed
//! files in place through a file transaction ([`transaction`]) in the output folder ([`outdir`]). A
//! [`session`] rebuilds after an edit, [`watch`] drives it from the file system and [`serve`] from
//! memory.
//!
//! ```text
//! site       the Site value: the site's checks, outputs, renderers, parts, retention (fn pointers)
//! workspace  files on disk -> salsa inputs (content-hashed), the Site as an input
//! build      every diagnostic, then every output through a Plan to a sink
//! linkcheck  every page parses as HTML5 and its internal links and anchors resolve
//! publish    manifest, generated_at, atomic writes (transaction: spares exchanged into place), stale removal
//! session    one rebuild after an edit; watch and serve run sessions
//! ```

#![warn(unreachable_pub)]

pub mod allocator;
pub mod build;
pub mod db;
pub mod diagnostics;
pub mod failpoint;
pub mod linkcheck;
#[cfg(feature = "streaming")]
pub(crate) mod memory;
pub mod outdir;
pub mod output;
pub mod publish;
#[cfg(feature = "streaming")]
pub mod second_thread;
pub mod serve;
pub mod session;
pub mod site;
pub mod transaction;
pub mod watch;
pub mod workspace;
