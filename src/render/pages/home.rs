//! The home page (`/`): every country's toggles, the map and the timeline.

use serde::Serialize;
use serde_json::Value as Json;

use super::context::{PageSpec, page};
use super::shared::*;
use crate::api_types::{CalendarEntry, Toggles};
use crate::derived::toggles::{ToggleMark, country_toggle_marks};
use crate::model::{CountryKey, countries_by_name, erps};
use crate::parse::rules::filter_rules;
use crate::render::page_figures::{home_map, home_timeline};
use crate::routes::STEMS;

/// How many countries have each value of one toggle: a yes limited to part of its scope (a sector, a
/// threshold) counted apart from the plain yes, as the map draws it apart.
#[derive(Serialize)]
struct ToggleCount {
    yes: usize,
    limited: usize,
    no: usize,
    unknown: usize,
}

/// How many countries have each value of each toggle, in the published order.
fn toggle_counts(rows: &[&[ToggleMark]]) -> Vec<ToggleCount> {
    (0..Toggles::NAMES.len())
        .map(|i| {
            let count = |wanted: Option<bool>| {
                rows.iter()
                    .filter(|t| t.get(i).map(|m| m.value) == Some(wanted))
                    .count()
            };
            let limited = rows
                .iter()
                .filter(|t| {
                    t.get(i)
                        .is_some_and(|m| m.value == Some(true) && m.limit.is_some())
                })
                .count();
            ToggleCount {
                yes: count(Some(true)) - limited,
                limited,
                no: count(Some(false)),
                unknown: count(None),
            }
        })
        .collect()
}

/// The home page: each country's name, region and toggle values (not its fact texts), by name; the map
/// and the timeline; the ERPs and filters it links to.
#[derive(Serialize)]
pub(super) struct HomeContext<'a> {
    site: &'a SiteContext,
    toggles: &'a [ToggleLabel],
    /// Each toggle with its definition and counts: the map's switch and its legends.
    map_toggles: Vec<MapToggle<'a>>,
    map: Option<&'a String>,
    /// The e-invoicing models the map can be coloured by (each country's B2B e-invoicing model), with
    /// how many countries have each, and how many have none recorded.
    map_models: Vec<ModelCount<'a>>,
    map_models_unknown: usize,
    timeline: Option<&'a str>,
    timeline_rows: &'a [CalendarEntry],
    countries: Vec<CountryToggles<'a>>,
    erps: Vec<ErpLink<'a>>,
    filters: Vec<FilterLink<'a>>,
    stems: &'static [&'static str],
}

/// A toggle as the map's switch and legends show it.
#[derive(Serialize)]
struct MapToggle<'a> {
    name: &'static str,
    label: &'a str,
    description: &'a str,
    index: usize,
    counts: ToggleCount,
}

/// An e-invoicing model with how many countries have it (the map's and the matrix's choice).
#[derive(Serialize)]
pub(crate) struct ModelCount<'a> {
    pub(crate) id: &'a str,
    pub(crate) label: &'a str,
    /// The label without its explanation in brackets (`Clearance`): what a filter's option shows.
    pub(crate) short: &'a str,
    pub(crate) count: usize,
}

/// Each e-invoicing model of the vocabulary with how many countries have it as their B2B e-invoicing
/// model, and how many countries have none recorded.
pub(crate) fn model_counts(db: &dyn salsa::Database) -> (Vec<ModelCount<'_>>, usize) {
    let models: Vec<Option<&str>> = countries_by_name(db)
        .iter()
        .map(|c| crate::render::page_figures::b2b_model(db, &c.code))
        .collect();
    let counts = crate::parse::rules::vocabulary(db)
        .value
        .einvoicing_models
        .0
        .iter()
        .map(|l| ModelCount {
            id: &l.id,
            label: &l.label,
            short: l
                .label
                .split(" (")
                .next()
                .unwrap_or(&l.label)
                .trim_end_matches(','),
            count: models.iter().filter(|m| **m == Some(l.id.as_str())).count(),
        })
        .collect();
    (counts, models.iter().filter(|m| m.is_none()).count())
}

/// An ERP as a link names it.
#[derive(Serialize)]
struct ErpLink<'a> {
    id: &'a str,
    name: &'a str,
}

/// A filter as a link names it.
#[derive(Serialize)]
struct FilterLink<'a> {
    slug: &'a str,
    description: &'a str,
}

/// The home page's context (see [`HomeContext`]).
pub(super) fn home_context(db: &dyn salsa::Database) -> Json {
    let values: Vec<(&crate::model::CountryInfo, &[ToggleMark])> = countries_by_name(db)
        .iter()
        .map(|c| {
            let key = CountryKey::new(db, c.code.clone());
            (c, country_toggle_marks(db, key).as_slice())
        })
        .collect();
    let rows: Vec<CountryToggles> = values
        .iter()
        .map(|(c, toggles)| CountryToggles {
            code: &c.code,
            name: &c.name,
            region: &c.region,
            toggles: toggle_list(toggles),
        })
        .collect();
    let counts = toggle_counts(&values.iter().map(|(_, t)| *t).collect::<Vec<_>>());
    let map_toggles: Vec<MapToggle> = toggle_labels(db)
        .iter()
        .zip(counts)
        .enumerate()
        .map(|(index, (label, counts))| MapToggle {
            name: label.name,
            label: &label.label,
            description: &label.description,
            index,
            counts,
        })
        .collect();
    let erps: Vec<ErpLink> = erps(db)
        .iter()
        .map(|e| ErpLink {
            id: &e.id,
            name: &e.name,
        })
        .collect();
    let filters: Vec<FilterLink> = filter_rules(db)
        .value
        .iter()
        .map(|f| FilterLink {
            slug: &f.slug,
            description: &f.description,
        })
        .collect();
    // A figure that cannot be drawn is a build error (page_figures::figure_errors); the page then only
    // needs to render without it.
    let (timeline, timeline_rows) = match home_timeline(db) {
        Ok((svg, rows)) => (Some(svg.as_str()), rows.as_slice()),
        Err(_) => (None, &[][..]),
    };
    let (map_models, map_models_unknown) = model_counts(db);
    to_json(&HomeContext {
        site: site_context(db),
        toggles: toggle_labels(db),
        map_toggles,
        map: home_map(db).as_ref().ok(),
        map_models,
        map_models_unknown,
        timeline,
        timeline_rows,
        countries: rows,
        erps,
        filters,
        stems: &STEMS,
    })
}

/// How the home page is made.
pub(super) fn spec() -> PageSpec {
    page("home", |db, _| home_context(db))
}
