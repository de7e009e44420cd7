//! What every page's context shares: the site's part of every page (header, footer), the toggles' labels
//! and a country's toggle values, the support types' styles, and [`to_json`], which hands a typed context
//! to the page pipeline.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value as Json;

use crate::api_types::{Fact, FactTopic, Toggles};
use crate::derived::toggles::ToggleMark;
use crate::model::{countries, countries_by_name};
use crate::output::GENERATED_AT_MARK;
use crate::parse::rules::{site_rules, toggle_rules};

/// A page's typed context as the JSON value the page pipeline takes ([`super::context::page_context`]
/// fingerprints it, then converts it once for the page and its twin).
pub(crate) fn to_json(context: &impl Serialize) -> Json {
    serde_json::to_value(context).expect("a page context serializes")
}

/// What every page shows of `rules/site.toml` (title, notice, licences in the footer).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct SiteContext {
    title: String,
    description: String,
    notice: String,
    reference_date: String,
    /// When the facts were checked, oldest and newest: what the footer says instead of one "as of" date.
    checked_oldest: Option<String>,
    checked_newest: Option<String>,
    api_licence: LicenceLink,
    data_licence: LicenceLink,
    /// The jump-to-country list of every page's header, by name.
    countries: Vec<CountryLink>,
    /// Whether `sources/sponsors.json` holds a sponsor: the footer and the home page link the sponsors
    /// page only then (the page itself is always built; without sponsors it says there are none).
    has_sponsors: bool,
    /// Stamped by the publisher with the time of the build that last changed the page. Pages and
    /// twins carry the raw placeholder: the publisher stamps only that form outside `.json` files.
    updated: &'static str,
}

/// A licence as the footer links it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct LicenceLink {
    name: String,
    url: String,
}

/// A country as a link names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct CountryLink {
    code: String,
    name: String,
}

/// What every page shows of `rules/site.toml` (title, notice, licences in the footer).
#[salsa::tracked(returns(ref))]
pub fn site_context(db: &dyn salsa::Database) -> SiteContext {
    let site = &site_rules(db).value;
    let checked = crate::model::check_date_span(db).as_ref();
    let licence = |name: &String, url: &String| LicenceLink {
        name: name.clone(),
        url: url.clone(),
    };
    SiteContext {
        title: site.title.clone(),
        description: site.description.clone(),
        notice: site.informational_notice.clone(),
        reference_date: site.reference_date.clone(),
        checked_oldest: checked.map(|(oldest, _)| oldest.clone()),
        checked_newest: checked.map(|(_, newest)| newest.clone()),
        api_licence: licence(&site.api_licence.name, &site.api_licence.url),
        data_licence: licence(&site.data_licence.name, &site.data_licence.url),
        countries: countries_by_name(db)
            .iter()
            .map(|c| CountryLink {
                code: c.code.clone(),
                name: c.name.clone(),
            })
            .collect(),
        has_sponsors: !crate::derived::lists::sponsor_items(db).is_empty(),
        updated: GENERATED_AT_MARK,
    }
}

/// A toggle's name, short label and description (reference date filled in): the heading of a toggle
/// column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct ToggleLabel {
    pub name: &'static str,
    pub label: String,
    pub description: String,
}

/// Each toggle's label, in the published order: the headings of toggle columns. A projection of
/// `rules/toggles.toml`, so a pattern edit stops here.
#[salsa::tracked(returns(ref))]
pub fn toggle_labels(db: &dyn salsa::Database) -> Vec<ToggleLabel> {
    let rules = &toggle_rules(db).value;
    let reference = &site_rules(db).value.reference_date;
    Toggles::NAMES
        .iter()
        .map(|name| {
            let rule = rules.iter().find(|r| r.name == *name);
            let label = rule
                .and_then(|r| r.label.clone())
                .unwrap_or_else(|| name.replace('_', " "));
            let description = rule.map_or(String::new(), |r| {
                r.description.replace("{reference_date}", reference)
            });
            ToggleLabel {
                name,
                label,
                description,
            }
        })
        .collect()
}

/// Country code -> name, from the register.
pub(crate) fn country_names(db: &dyn salsa::Database) -> BTreeMap<&str, &str> {
    countries(db)
        .iter()
        .map(|c| (c.code.as_str(), c.name.as_str()))
        .collect()
}

/// A country's value of one toggle: what the `toggle` macro shows (a yes with its limit, a no resting on
/// absence).
#[derive(Serialize)]
pub(crate) struct ToggleValue<'a> {
    name: &'static str,
    value: Option<bool>,
    limit: Option<&'a str>,
    absence: bool,
}

/// A country's toggles in the published order (the order of [`toggle_labels`]).
pub(crate) fn toggle_list(marks: &[ToggleMark]) -> Vec<ToggleValue<'_>> {
    Toggles::NAMES
        .iter()
        .zip(marks)
        .map(|(name, mark)| ToggleValue {
            name,
            value: mark.value,
            limit: mark.limit.as_deref(),
            absence: mark.absence,
        })
        .collect()
}

/// A country in a list with its toggles (the home page's rows, a filter's members).
#[derive(Serialize)]
pub(crate) struct CountryToggles<'a> {
    pub(crate) code: &'a str,
    pub(crate) name: &'a str,
    pub(crate) region: &'a str,
    pub(crate) toggles: Vec<ToggleValue<'a>>,
}

/// The topic pages of the reporting rows: the reporting table's `topic` is also the page's path and the
/// first part of each row's anchor (`/vat-reporting/#vat-reporting-it-1`).
pub(crate) fn reporting_page(topic: FactTopic) -> Option<&'static str> {
    match topic {
        FactTopic::VatReporting => Some("vat-reporting"),
        FactTopic::Saft => Some("saf-t"),
        _ => None,
    }
}

/// The anchor of a reporting fact (`it-vat-reporting-1` -> `vat-reporting-it-1`), the same on the country
/// page and on the topic page.
pub(crate) fn reporting_anchor(fact: &Fact) -> Option<String> {
    let page = reporting_page(fact.topic)?;
    let n = fact.id.rsplit('-').next()?;
    Some(format!("{page}-{}-{n}", fact.country))
}

/// A support type as the matrix shows it: a short label, a class for its colour, and what it means.
pub(crate) struct SupportStyle {
    pub(crate) value: &'static str,
    pub(crate) short: &'static str,
    /// A few words for the legend.
    pub(crate) brief: &'static str,
    pub(crate) class: &'static str,
    pub(crate) meaning: &'static str,
}

/// The support types of `rules/vocabulary.toml`, in the order of the legend.
pub(crate) const SUPPORT_STYLES: [SupportStyle; 8] = [
    SupportStyle {
        value: "native",
        brief: "built in",
        short: "Native",
        class: "s-native",
        meaning: "built into the product by its vendor",
    },
    SupportStyle {
        value: "native + access point",
        brief: "built in, with access point",
        short: "Native + AP",
        class: "s-native",
        meaning: "built in, with the product's own connection (access point) to the exchange network",
    },
    SupportStyle {
        value: "add-on",
        brief: "add-on or app",
        short: "Add-on",
        class: "s-addon",
        meaning: "through an add-on or localization app, from the vendor or a partner",
    },
    SupportStyle {
        value: "via provider",
        brief: "third-party provider",
        short: "Provider",
        class: "s-provider",
        meaning: "through a connector to a third-party e-invoicing provider",
    },
    SupportStyle {
        value: "via provider (receiving only)",
        brief: "provider, receiving only",
        short: "Provider, receiving",
        class: "s-provider",
        meaning: "through a provider, for receiving e-invoices only",
    },
    SupportStyle {
        value: "roadmap",
        brief: "announced, not counted",
        short: "Roadmap",
        class: "s-roadmap",
        meaning: "announced by the vendor, not shipped yet (not counted as support)",
    },
    SupportStyle {
        value: "not supported",
        brief: "not supported",
        short: "Not supported",
        class: "s-no",
        meaning: "the vendor states it is not supported",
    },
    SupportStyle {
        value: "unknown/unverified",
        brief: "not established",
        short: "–",
        class: "s-unknown",
        meaning: "not established: no source has been read for this cell",
    },
];

/// The short label and class of a support type (a type the legend does not know keeps its own words).
pub(crate) fn support_style(value: &str) -> (&str, &'static str) {
    SUPPORT_STYLES
        .iter()
        .find(|s| s.value == value)
        .map_or((value, "s-other"), |s| (s.short, s.class))
}

/// An ERP by id, with its name.
#[derive(Serialize)]
pub(crate) struct ErpNamed<'a> {
    pub(crate) id: &'a str,
    pub(crate) name: String,
}

/// One row of "Next changes" (the comparison page, a country page): a day, a country and what changes on
/// it (`derived::on_date`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct NextChangeRow {
    pub date: String,
    pub code: String,
    pub name: String,
    pub what: Vec<String>,
    /// The first phase that changes, the anchor of its row on the country page.
    pub phase_id: String,
}

/// The rows of "Next changes", in the order given.
pub(crate) fn next_change_rows(
    changes: &[crate::derived::on_date::NextChange],
) -> Vec<NextChangeRow> {
    changes
        .iter()
        .map(|n| NextChangeRow {
            date: n.day.to_string(),
            code: n.code.clone(),
            name: n.name.clone(),
            what: n.what.clone(),
            phase_id: n.phase_id.clone(),
        })
        .collect()
}
