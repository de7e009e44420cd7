//! What the database keeps of a build, decided in one place.
//!
//! The queries whose values are a site's bulk, every output's bytes (the site's rendered outputs)
//! and the parts lists and long pages are spliced from, are declared with an eviction policy but no
//! capacity limit, so by default every value is kept: what the dev server needs (it serves the site from
//! memory). Salsa drops values beyond a capacity only when told ([`evict`]) or at a new revision; an
//! evicted value is verified later by its dependencies, as any memo is, and made again only if a query
//! asks for it. A page's context is never kept, only its fingerprint
//! (the site's page contexts): the context goes to the page and twin rendered from it in
//! the same batch, and the fingerprint is the early cutoff between data and templates.
//!
//! - A one-off build (`locref build`, `locref check`, the check of `locref release`) never renders
//!   anything twice, so the outputs and parts keep one value
//!   ([`crate::site::Site::keep_for_single_build`]): each output is
//!   handed over as soon as it is rendered and the batch evicted, so the build holds the parsed sources,
//!   the derived data and a few outputs, not the site (`build::Profile::OneOff`).
//! - A `watch` session writes each output to its folder and keeps only its digest (content hash): an
//!   edit streams as a one-off build does, comparing digests and staging the bytes of the outputs that
//!   changed, batch by batch, so it holds one batch of what it made, not every changed output
//!   ([`crate::site::Site::keep_for_session`]). It keeps the parts of the spliced lists and pages (`changes.json`'s and the
//!   `/changes/` page's per-country parts among them): an edit splices the parts it did not touch as
//!   they were, and parts let go would all be rendered again. It lets go of the History sections'
//!   contexts, which only a page's context reads.

use crate::db::Db;

/// Drops the values beyond each query's capacity now.
pub(crate) fn evict(db: &mut Db) {
    salsa::Database::trigger_lru_eviction(db);
}
