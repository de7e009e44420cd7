//! The licence page (`/licence/`).

use serde::Serialize;
use serde_json::Value as Json;

use super::context::{PageSpec, page};
use super::shared::*;
use crate::parse::rules::{ApiLicence, DataLicence, site_rules};

/// The licence page: both licences, their attribution strings and the commercial path.
#[derive(Serialize)]
pub(super) struct LicenceContext<'a> {
    site: &'a SiteContext,
    api: &'a ApiLicence,
    data: &'a DataLicence,
}

/// The licence page's context, read from `rules/site.toml` only.
pub(super) fn licence_context(db: &dyn salsa::Database) -> Json {
    let site = &site_rules(db).value;
    to_json(&LicenceContext {
        site: site_context(db),
        api: &site.api_licence,
        data: &site.data_licence,
    })
}

/// How the licence page is made.
pub(super) fn spec() -> PageSpec {
    page("licence", |db, _| licence_context(db))
}
