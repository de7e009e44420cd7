//! The sponsors page (`/sponsors/`).

use serde::Serialize;
use serde_json::Value as Json;

use super::context::{PageSpec, page};
use super::shared::*;
use crate::api_types::Sponsor;
use crate::parse::rules::site_rules;
use crate::render::api::sponsor_items;

/// The sponsors page: the notice of `rules/site.toml` and the paid placements, if any.
#[derive(Serialize)]
pub(super) struct SponsorsContext<'a> {
    site: &'a SiteContext,
    notice: &'a str,
    sponsors: &'a [Sponsor],
}

/// The sponsors page's context (see [`SponsorsContext`]).
pub(super) fn sponsors_context(db: &dyn salsa::Database) -> Json {
    let sponsors = sponsor_items(db);
    to_json(&SponsorsContext {
        site: site_context(db),
        notice: &site_rules(db).value.sponsors.notice,
        sponsors: &sponsors,
    })
}

/// How the sponsors page is made.
pub(super) fn spec() -> PageSpec {
    page("sponsors", |db, _| sponsors_context(db))
}
