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

#![warn(unreachable_pub)]

pub mod cmd;
pub mod derive;
pub mod history;
pub mod ids;
pub mod kinds;
pub mod locref_site;
pub mod model;
pub mod parse;
pub mod render;
pub mod resources;
pub mod routes;

// The engine's modules, under the names the site has always used (`crate::db`, `crate::output`): the
// site reaches the engine through them, and the engine cannot name the site (Cargo holds it).
#[cfg(feature = "streaming")]
pub use locref_engine::helper;
pub use locref_engine::{
    allocator, build, db, diagnostics, emit, failpoint, linkcheck, outdir, output, replace, serve,
    session, site, watch, workspace,
};
