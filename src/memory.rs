//! What the database keeps of a build, decided in one place.
//!
//! The queries whose values are a site's bulk, every output's bytes ([`crate::render::output_file`])
//! and the parts lists and long pages are spliced from, are declared with an eviction policy but no
//! capacity limit, so by default every value is kept: what the dev server needs (it serves the site from
//! memory). Salsa drops values beyond a capacity only when told ([`evict`]) or at a new revision; an
//! evicted value is verified later by its dependencies, as any memo is, and made again only if a query
//! asks for it. A page's context is never kept, only its fingerprint
//! ([`crate::render::pages::context::page_context`]): the context goes to the page and twin rendered from it in
//! the same batch, and the fingerprint is the early cutoff between data and templates.
//!
//! - A one-off build (`locref build`, `locref check`, the check of `locref release`) never renders
//!   anything twice, so the outputs and parts keep one value ([`for_single_build`]): each output is
//!   handed over as soon as it is rendered and the batch evicted, so the build holds the parsed sources,
//!   the derived data and a few outputs, not the site (`build::Profile::OneOff`).
//! - A `watch` session writes each output to its folder and keeps only its digest (content hash): an
//!   edit streams as a one-off build does, comparing digests and staging the bytes of the outputs that
//!   changed, batch by batch, so it holds one batch of what it made, not every changed output
//!   ([`for_session`]). It keeps the parts of the spliced lists and pages (`changes.json`'s and the
//!   `/changes/` page's per-country parts among them): an edit splices the parts it did not touch as
//!   they were, and parts let go would all be rendered again. It lets go of the History sections'
//!   contexts, which only a page's context reads.

use crate::db::Db;

/// A one-off build's capacities (see the module documentation): besides the outputs, the parts a list is
/// spliced from (a country's part of each flat CSV file, each part of the pages made of parts, which
/// are handed over part by part and let go a batch of parts at a time (`build::parted`), and their
/// skeletons; `facts.json`, `changes.json` and the flat JSON files are not even made of kept parts
/// there, see [`crate::render::stream_list`]) and each History section's context, which one output (or
/// one page and its twin) reads once.
pub(crate) fn for_single_build(db: &mut Db) {
    crate::render::keep_last_output_only(db);
    // `llms-full.txt` takes each condensed twin as the twin is rendered (see `build::streaming`).
    crate::render::llms::keep_last_condensed_twin_only(db);
    crate::render::api::keep_last_part_only(db);
    crate::render::history::keep_last_parts_only(db);
    crate::render::pages::changes::keep_last_contexts_only(db);
    crate::render::data::keep_last_parts_only(db);
    crate::render::pages::parts::keep_last_parts_only(db);
    crate::render::pages::lists::keep_last_news_part_only(db);
}

/// A `watch` session's capacities (see the module documentation).
pub(crate) fn for_session(db: &mut Db) {
    crate::render::keep_last_output_only(db);
    crate::render::pages::changes::keep_last_contexts_only(db);
}

/// Drops the values beyond each query's capacity now.
pub(crate) fn evict(db: &mut Db) {
    salsa::Database::trigger_lru_eviction(db);
}
