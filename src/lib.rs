//! locref builds the Localization Reference Data Service: a static site of JSON API envelopes, flat data
//! files and pages, from the curated files under `sources/` and the rules under `rules/`.
//!
//! The pipeline, one layer of salsa queries per module:
//!
//! ```text
//! workspace  files on disk -> salsa inputs (content-hashed)
//! parse      one file -> typed rows, or located diagnostics
//! model      registers, cross-file checks, per-country / per-ERP projections (early cutoff)
//! derived    facts, toggles, counts, filters
//! render     one query per output file -> bytes
//! linkcheck  every page parses as HTML5 and its internal links and anchors resolve
//! publish    manifest, generated_at, atomic writes (transaction: spares exchanged into place), stale removal
//! ```

#![warn(unreachable_pub)]

pub mod api_types;
pub mod cmd;
pub mod derived;
pub mod history;
pub mod ids;
pub mod kinds;
pub mod locref_site;
pub mod model;
pub mod parse;
pub mod render;
pub mod routes;

// The engine's modules, under the names the site has always used (`crate::db`, `crate::output`): the
// site reaches the engine through them, and the engine cannot name the site (Cargo holds it).
#[cfg(feature = "streaming")]
pub use locref_engine::second_thread;
pub use locref_engine::{
    allocator, build, db, diagnostics, failpoint, linkcheck, outdir, output, publish, serve,
    session, site, transaction, watch, workspace,
};
