//! The integration tests, in one binary (one link of the crate and its dependencies, not one per file).
//!
//! Each module tests one side of locref as a user meets it: `build` and `diagnostics` the command line
//! and its errors, `history` the releases and the changes published from them, `incremental` what a
//! rebuild re-runs and rewrites, `watch` and `serve` the long-running commands, `pages` and
//! `linkcheck` the published pages, `compare` the comparison page, `on_date` what applies on a day, `search` the search index and the
//! aliases it finds countries by, `contrast` the colours of the matrix
//! and the map, `dataset` the shipped data, `clients` the site as other programs read it (published
//! under a path of its host), `layers` the import order of `src/` that ARCHITECTURE.md states,
//! `absences` what its modules do not know (ARCHITECTURE.md, "What is absent"), and `browser` the site
//! in headless Chromium (ignored by a plain `cargo test`; `.ci/run` runs it with `--ignored`).

mod common;

mod absences;
mod browser;
mod build;
mod clients;
mod compare;
mod contrast;
mod dataset;
mod diagnostics;
mod history;
mod hostile;
mod incremental;
mod layers;
mod linkcheck;
mod on_date;
mod output_folder;
mod pages;
mod scale;
mod search;
mod serve;
mod verify;
mod watch;
