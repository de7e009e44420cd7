//! locref builds the Localization Reference Data Service: a static site of JSON API envelopes, flat data
//! files and pages, from the curated files under `sources/` and the rules under `rules/`.
//!
//! The pipeline, one layer of salsa queries per module:
//!
//! ```text
//! workspace  files on disk -> salsa inputs (content-hashed)
//! parse      one file -> typed rows, or located diagnostics
//! model      registers, cross-file checks, per-country / per-ERP projections (early cutoff)
//! derive     facts, toggles, counts, filters
//! render     one query per output file -> bytes
//! linkcheck  every page parses as HTML5 and its internal links and anchors resolve
//! emit       manifest, generated_at, atomic writes (replace: spares exchanged into place), stale removal
//! ```

pub mod allocator;
pub mod build;
pub mod cmd;
pub mod db;
pub mod derive;
pub mod diagnostics;
pub mod emit;
pub mod failpoint;
#[cfg(feature = "streaming")]
pub mod helper;
pub mod history;
pub mod ids;
pub mod kinds;
pub mod linkcheck;
pub mod locref_site;
#[cfg(feature = "streaming")]
pub(crate) mod memory;
pub mod model;
pub mod outdir;
pub mod output;
pub mod parse;
pub mod render;
pub mod replace;
pub mod resources;
pub mod routes;
pub mod serve;
pub mod session;
pub mod site;
pub mod watch;
pub mod workspace;
