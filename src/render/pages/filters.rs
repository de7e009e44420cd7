//! The filters index (`/filters/`) and a filter's page (`/filters/<slug>/`).

use serde::Serialize;
use serde_json::Value as Json;

use super::context::{PageSpec, page};
use super::shared::*;
use crate::derived::filters::{FilterKey, filter_members, filter_rule};
use crate::derived::toggles::country_toggle_marks;
use crate::model::CountryKey;
use crate::parse::rules::{FilterMatch, filter_rules};

fn filter_match_text(matches: FilterMatch) -> &'static str {
    match matches {
        FilterMatch::AnyTrue => "at least one of these is yes",
        FilterMatch::AllTrue => "each of these is yes",
        FilterMatch::AnyNull => "at least one of these is not established",
    }
}

/// A filter's definition for the pages: slug, description, the rule in words and the toggles it reads
/// (and on the filters index, how many countries it lists).
#[derive(Serialize)]
struct FilterView<'a> {
    slug: &'a str,
    description: &'a str,
    rule: &'static str,
    toggles: Vec<&'a ToggleLabel>,
    #[serde(skip_serializing_if = "Option::is_none")]
    count: Option<usize>,
}

/// See [`FilterView`].
fn filter_view<'a>(
    db: &'a dyn salsa::Database,
    filter: &'a crate::parse::rules::FilterRule,
) -> FilterView<'a> {
    let all = filter.toggles.iter().any(|t| t == "*");
    let toggles: Vec<&ToggleLabel> = toggle_labels(db)
        .iter()
        .filter(|l| all || filter.toggles.iter().any(|t| l.name == t.as_str()))
        .collect();
    FilterView {
        slug: &filter.slug,
        description: &filter.description,
        rule: filter_match_text(filter.matches),
        toggles,
        count: None,
    }
}

/// The filters index: each filter's definition and how many countries it lists.
#[derive(Serialize)]
pub(super) struct FiltersContext<'a> {
    site: &'a SiteContext,
    filters: Vec<FilterView<'a>>,
}

/// The filters index's context (see [`FiltersContext`]).
pub(super) fn filters_context(db: &dyn salsa::Database) -> Json {
    let filters: Vec<FilterView> = filter_rules(db)
        .value
        .iter()
        .map(|f| FilterView {
            count: Some(filter_members(db, FilterKey::new(db, f.slug.clone())).len()),
            ..filter_view(db, f)
        })
        .collect();
    to_json(&FiltersContext {
        site: site_context(db),
        filters,
    })
}

/// One filter page: its definition and its member countries with their toggles.
#[derive(Serialize)]
pub(super) struct FilterContext<'a> {
    site: &'a SiteContext,
    filter: FilterView<'a>,
    toggle_labels: &'a [ToggleLabel],
    members: Vec<CountryToggles<'a>>,
}

/// One filter page's context (see [`FilterContext`]).
pub(crate) fn filter_context<'db>(db: &'db dyn salsa::Database, key: FilterKey<'db>) -> Json {
    let Some(filter) = filter_rule(db, key) else {
        return Json::Null;
    };
    let mut members: Vec<_> = filter_members(db, key).iter().collect();
    members.sort_by_cached_key(|m| (crate::ids::slugify(&m.name), m.code.clone()));
    let members: Vec<CountryToggles> = members
        .iter()
        .map(|m| CountryToggles {
            code: &m.code,
            name: &m.name,
            region: &m.region,
            toggles: toggle_list(country_toggle_marks(
                db,
                CountryKey::new(db, m.code.clone()),
            )),
        })
        .collect();
    to_json(&FilterContext {
        site: site_context(db),
        filter: filter_view(db, filter),
        toggle_labels: toggle_labels(db),
        members,
    })
}

/// How the filters index is made.
pub(super) fn index_spec() -> PageSpec {
    page("filters", |db, _| filters_context(db))
}

/// How a filter's page is made: its key is the filter's slug.
pub(super) fn spec() -> PageSpec {
    page("filter", |db, slug| {
        filter_context(db, FilterKey::new(db, slug.to_string()))
    })
}
