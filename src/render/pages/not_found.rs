//! The page a static host shows for an unknown path (`/404.html`, no twin).

use serde::Serialize;
use serde_json::Value as Json;

use super::context::{PageSpec, page};
use super::shared::{SiteContext, site_context, to_json};

/// The 404 page shows only what every page shows.
#[derive(Serialize)]
pub(super) struct NotFoundContext<'a> {
    site: &'a SiteContext,
}

/// The 404 page's context (see [`NotFoundContext`]).
pub(crate) fn not_found_context(db: &dyn salsa::Database) -> Json {
    to_json(&NotFoundContext {
        site: site_context(db),
    })
}

/// How the 404 page is made.
pub(super) fn spec() -> PageSpec {
    page("404", |db, _| not_found_context(db))
}
