//! What the database keeps of a build, decided in one place.
//!
//! The queries whose values are a site's bulk (every output's bytes, see [`crate::render::output_file`])
//! are declared with an eviction policy but no capacity limit, so by default every value is kept: what a
//! session (`watch`, `serve`) needs, where an edit renders only the outputs it changes and finds every
//! other one in memory to compare and serve.
//!
//! A one-off build (`locref build`, `locref check`) never renders an output twice, so it gives those
//! queries a capacity ([`for_one_off_build`]), hands each output over as soon as it is rendered and
//! evicts in batches ([`evict`]): it holds the parsed sources, the derived data and a few outputs, not the
//! site ([`crate::build::build_streaming`]). Salsa drops values only when told or at a new revision; an
//! evicted value is verified later by its dependencies, as any memo is, and rendered again only if a
//! query asks for it.

use crate::db::Db;

/// Gives the bulky queries their one-off-build capacity (see the module documentation).
pub fn for_one_off_build(db: &mut Db) {
    crate::render::keep_last_output_only(db);
    crate::render::pages::keep_last_context_only(db);
}

/// Drops the values beyond each query's capacity now.
pub(crate) fn evict(db: &mut Db) {
    salsa::Database::trigger_lru_eviction(db);
}
