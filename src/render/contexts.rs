//! What each page shows: one context function per page kind (called with the page's key), building a
//! typed context (`#[derive(Serialize)]`: its fields are what the HTML template and its Markdown twin may
//! read) and handing it to the page pipeline as JSON ([`to_json`]).
//!
//! Each context reads the narrowest projections it can, so an edit re-renders a page only when data the
//! page shows changed: an ERP page reads that ERP's detail, never another ERP's matrix rows; the partners
//! page reads the partner rows and the registers' names; a topic page reads the per-country reporting rows.
//! Values are passed as the sources hold them; templates show a missing value as "not stated" or
//! "unknown", never a guess.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value as Json;

use super::api::{country_detail, erp_detail, local_erp, news_items, partner, sponsor_items};
use super::history::{HistoryContext, country_history_context, erp_history_context};
use super::page_figures::{home_map, home_timeline};
use crate::derive::filters::{FilterKey, filter_members, filter_rule};
use crate::derive::obligations::country_toggle_derivations;
use crate::derive::toggles::{ToggleMark, country_toggle_marks};
use crate::derive::{erp_summary, support_established};
use crate::model::{
    CountryKey, ErpKey, countries, countries_by_name, country_local_erps, country_mandate,
    country_matrix, country_obligations, country_partners, country_reporting, erp_name, erps,
    reporting_erps,
};
use crate::parse::rules::{
    ApiLicence, DataLicence, FilterMatch, filter_rules, obligation_rules, site_rules, toggle_rules,
};
use crate::parse::tables::{PartialDate, PhaseStatus, local_erp_rows, partner_rows};
use crate::render::GENERATED_AT_MARK;
use crate::resources::{
    CalendarEntry, Country, Erp, Fact, FactTopic, LocalErp, NewsItem, Partner, Sponsor, Toggles,
    Verification,
};
use crate::routes::STEMS;

/// A page's typed context as the JSON value the page pipeline takes ([`super::pages::page_context`]
/// fingerprints it, then converts it once for the page and its twin).
pub(crate) fn to_json(context: &impl Serialize) -> Json {
    serde_json::to_value(context).expect("a page context serializes")
}

/// What every page shows of `rules/site.toml` (title, notice, licences in the footer).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SiteContext {
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
    /// Stamped by the emit step with the time of the build that last changed the page. Pages and
    /// twins carry the raw placeholder: the emit step stamps only that form outside `.json` files.
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
        updated: GENERATED_AT_MARK,
    }
}

/// A toggle's name, short label and description (reference date filled in): the heading of a toggle
/// column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToggleLabel {
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
fn country_names(db: &dyn salsa::Database) -> BTreeMap<&str, &str> {
    countries(db)
        .iter()
        .map(|c| (c.code.as_str(), c.name.as_str()))
        .collect()
}

/// A country's value of one toggle: what the `toggle` macro shows (a yes with its limit, a no resting on
/// absence).
#[derive(Serialize)]
struct ToggleValue<'a> {
    name: &'static str,
    value: Option<bool>,
    limit: Option<&'a str>,
    absence: bool,
}

/// A country's toggles in the published order (the order of [`toggle_labels`]).
fn toggle_list(marks: &[ToggleMark]) -> Vec<ToggleValue<'_>> {
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
struct CountryToggles<'a> {
    code: &'a str,
    name: &'a str,
    region: &'a str,
    toggles: Vec<ToggleValue<'a>>,
}

/// The topic pages of the reporting rows: the reporting table's `topic` is also the page's path and the
/// first part of each row's anchor (`/vat-reporting/#vat-reporting-it-1`).
fn reporting_page(topic: FactTopic) -> Option<&'static str> {
    match topic {
        FactTopic::VatReporting => Some("vat-reporting"),
        FactTopic::Saft => Some("saf-t"),
        _ => None,
    }
}

/// The anchor of a reporting fact (`it-vat-reporting-1` -> `vat-reporting-it-1`), the same on the country
/// page and on the topic page.
pub(super) fn reporting_anchor(fact: &Fact) -> Option<String> {
    let page = reporting_page(fact.topic)?;
    let n = fact.id.rsplit('-').next()?;
    Some(format!("{page}-{}-{n}", fact.country))
}

/// How many countries have each value of one toggle.
#[derive(Serialize)]
struct ToggleCount {
    yes: usize,
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
            ToggleCount {
                yes: count(Some(true)),
                no: count(Some(false)),
                unknown: count(None),
            }
        })
        .collect()
}

/// The home page: each country's name, region and toggle values (not its fact texts), by name; the map
/// and the timeline; the ERPs and filters it links to.
#[derive(Serialize)]
pub struct HomeContext<'a> {
    site: &'a SiteContext,
    toggles: &'a [ToggleLabel],
    /// Each toggle with its definition and counts: the map's switch and its legends.
    map_toggles: Vec<MapToggle<'a>>,
    map: Option<&'a String>,
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
pub fn home_context(db: &dyn salsa::Database) -> Json {
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
    to_json(&HomeContext {
        site: site_context(db),
        toggles: toggle_labels(db),
        map_toggles,
        map: home_map(db).as_ref().ok(),
        timeline,
        timeline_rows,
        countries: rows,
        erps,
        filters,
        stems: &STEMS,
    })
}

/// A support type as the matrix shows it: a short label, a class for its colour, and what it means.
struct SupportStyle {
    value: &'static str,
    short: &'static str,
    /// A few words for the legend.
    brief: &'static str,
    class: &'static str,
    meaning: &'static str,
}

/// The support types of `rules/vocabulary.toml`, in the order of the legend.
const SUPPORT_STYLES: [SupportStyle; 8] = [
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
fn support_style(value: &str) -> (&str, &'static str) {
    SUPPORT_STYLES
        .iter()
        .find(|s| s.value == value)
        .map_or((value, "s-other"), |s| (s.short, s.class))
}

/// An ERP's name as a narrow column heading shows it: the vendor on its own line (none for a product
/// named like its vendor), then the product.
#[derive(Serialize)]
struct ErpHeading<'a> {
    vendor: Option<&'a str>,
    product: &'a str,
}

/// An ERP's name split for a narrow column heading: the vendor on its own line, then the product
/// (`SAP` / `S/4HANA Cloud`); a product named like its vendor (`Odoo`) is one line.
fn erp_heading<'a>(name: &'a str, vendor: Option<&'a str>) -> ErpHeading<'a> {
    let product = vendor
        .and_then(|v| name.strip_prefix(v))
        .and_then(|rest| rest.strip_prefix(' '))
        .filter(|rest| !rest.is_empty());
    match (vendor, product) {
        (Some(vendor), Some(product)) => ErpHeading {
            vendor: Some(vendor),
            product,
        },
        _ => ErpHeading {
            vendor: None,
            product: name,
        },
    }
}

/// A country's B2B mandate as the matrix's filter and badge read it: `in-force`, `enacted` (with a later
/// start), `planned`, `none` or `unknown`, from its derived toggles.
fn b2b_mandate(db: &dyn salsa::Database, key: CountryKey<'_>) -> (&'static str, String) {
    let derivations = country_toggle_derivations(db, key);
    let find = |name: &str| derivations.iter().find(|d| d.toggle == name);
    let mandatory = find("e_invoicing_mandatory_b2b");
    let in_force = find("e_invoicing_b2b_in_force").and_then(|d| d.value);
    let from = mandatory
        .and_then(|d| d.applies_from.as_deref())
        .map(|d| format!(" from {d}"))
        .unwrap_or_default();
    // A mandate limited to a sector or a group says so ("B2B mandate in force: electricity and
    // natural-gas sectors only"); a "no" that rests on an absence check says that too.
    let limit = mandatory
        .and_then(|d| d.limit.as_deref())
        .map(|l| format!(": {l}"))
        .unwrap_or_default();
    let absence = if mandatory.is_some_and(|d| d.rests_on_absence) {
        " (absence check)"
    } else {
        ""
    };
    match (mandatory.and_then(|d| d.value), in_force) {
        (_, Some(true)) => ("in-force", format!("B2B mandate in force{limit}")),
        (Some(true), _) => ("enacted", format!("B2B mandate enacted{from}{limit}")),
        (Some(false), _) if mandatory.and_then(|d| d.status.as_deref()) == Some("planned") => {
            ("planned", "B2B mandate planned".into())
        }
        (Some(false), _) => ("none", format!("No B2B mandate{absence}")),
        (None, _) => ("unknown", "B2B mandate not established".into()),
    }
}

/// The B2B mandate statuses the matrix can be filtered by, in the order of its filter.
const MANDATE_STATUSES: [(&str, &str); 5] = [
    ("in-force", "In force"),
    ("enacted", "Enacted, starts later"),
    ("planned", "Planned"),
    ("none", "No mandate"),
    ("unknown", "Not established"),
];

/// The e-invoicing matrix page: a row per country (by name) with its B2B mandate, a cell per ERP with its
/// support type, verification and source, the legend and the filters' values.
#[derive(Serialize)]
pub struct EInvoicingContext<'a> {
    site: &'a SiteContext,
    erps: Vec<MatrixColumn<'a>>,
    rows: Vec<MatrixCountry<'a>>,
    legend: Vec<LegendEntry>,
    regions: Vec<&'a str>,
    mandate_statuses: Vec<MandateStatus>,
    known_cells: usize,
    cells: usize,
}

/// An ERP column of the matrix.
#[derive(Serialize)]
struct MatrixColumn<'a> {
    id: &'a str,
    name: &'a str,
    heading: ErpHeading<'a>,
}

/// A country's row of the matrix.
#[derive(Serialize)]
struct MatrixCountry<'a> {
    code: &'a str,
    name: &'a str,
    region: &'a str,
    b2b: B2bMandate,
    /// The country's mandate as its mandates row states it ("unknown" is a value there too).
    mandate: Option<MandateText<'a>>,
    cells: Vec<MatrixCell<'a>>,
    /// How many of its cells are known.
    known: usize,
}

/// A country's B2B mandate as the matrix's filter and badge read it (see [`b2b_mandate`]).
#[derive(Serialize)]
struct B2bMandate {
    status: &'static str,
    label: String,
}

/// A country's mandates row, as the matrix shows it.
#[derive(Serialize)]
struct MandateText<'a> {
    short_label: &'a str,
    mandate: &'a str,
    deadlines: &'a str,
}

/// One cell of the matrix: an ERP's support in a country.
#[derive(Serialize)]
struct MatrixCell<'a> {
    erp: &'a str,
    erp_name: &'a str,
    support: &'a str,
    short: &'a str,
    class: &'static str,
    known: bool,
    established: bool,
    verification: &'a str,
    last_checked: Option<&'a str>,
    source_url: Option<&'a String>,
}

/// A support type in the matrix's legend, with how many cells have it.
#[derive(Serialize)]
struct LegendEntry {
    value: &'static str,
    short: &'static str,
    brief: &'static str,
    class: &'static str,
    meaning: &'static str,
    count: usize,
}

/// A B2B mandate status in the matrix's filter, with how many countries have it.
#[derive(Serialize)]
struct MandateStatus {
    key: &'static str,
    label: &'static str,
    count: usize,
}

/// The e-invoicing matrix page's context (see [`EInvoicingContext`]).
pub fn e_invoicing_context(db: &dyn salsa::Database) -> Json {
    let erp_list = erps(db);
    let columns: Vec<MatrixColumn> = erp_list
        .iter()
        .map(|e| MatrixColumn {
            id: &e.id,
            name: &e.name,
            heading: erp_heading(&e.name, e.vendor.as_deref()),
        })
        .collect();
    let mut used: BTreeMap<String, usize> = BTreeMap::new();
    let mut known_cells = 0;
    let mut statuses: BTreeMap<&str, usize> = BTreeMap::new();
    let rows: Vec<MatrixCountry> = countries_by_name(db)
        .iter()
        .map(|c| {
            let key = CountryKey::new(db, c.code.clone());
            let matrix = country_matrix(db, key);
            let cells: Vec<MatrixCell> = erp_list
                .iter()
                .map(|e| {
                    let row = matrix.iter().find(|r| r.erp == e.id);
                    let support = row.map_or("unknown/unverified", |r| r.support_type.as_str());
                    *used.entry(support.to_string()).or_default() += 1;
                    let known = support != "unknown/unverified";
                    known_cells += usize::from(known);
                    let (short, class) = support_style(support);
                    MatrixCell {
                        erp: &e.id,
                        erp_name: &e.name,
                        support,
                        short,
                        class,
                        known,
                        established: support_established(support),
                        verification: row.map_or("unverified", |r| r.verification.as_str()),
                        last_checked: row.and_then(|r| r.last_verified.as_deref()),
                        source_url: row.and_then(|r| r.erp_source.first()),
                    }
                })
                .collect();
            let (status, label) = b2b_mandate(db, key);
            *statuses.entry(status).or_default() += 1;
            let mandate = country_mandate(db, key).as_ref().map(|m| MandateText {
                short_label: &m.short_label,
                mandate: &m.mandate,
                deadlines: &m.deadlines,
            });
            MatrixCountry {
                code: &c.code,
                name: &c.name,
                region: &c.region,
                b2b: B2bMandate { status, label },
                mandate,
                known: cells.iter().filter(|c| c.known).count(),
                cells,
            }
        })
        .collect();
    let legend: Vec<LegendEntry> = SUPPORT_STYLES
        .iter()
        .map(|s| LegendEntry {
            value: s.value,
            short: s.short,
            brief: s.brief,
            class: s.class,
            meaning: s.meaning,
            count: used.get(s.value).copied().unwrap_or(0),
        })
        .collect();
    let mut regions: Vec<&str> = countries(db).iter().map(|c| c.region.as_str()).collect();
    regions.sort_unstable();
    regions.dedup();
    let mandate_statuses: Vec<MandateStatus> = MANDATE_STATUSES
        .iter()
        .map(|&(key, label)| MandateStatus {
            key,
            label,
            count: statuses.get(key).copied().unwrap_or(0),
        })
        .collect();
    let cells = rows.len() * erp_list.len();
    to_json(&EInvoicingContext {
        site: site_context(db),
        erps: columns,
        rows,
        legend,
        regions,
        mandate_statuses,
        known_cells,
        cells,
    })
}

/// "In force since 2026-09-01" and what the phase covers, as one sentence.
fn sentence(words: &str, scope: &str) -> String {
    let scope = scope.trim().trim_end_matches('.');
    if scope.is_empty() {
        format!("{words}.")
    } else {
        format!("{words}: {scope}.")
    }
}

/// A phase's status and date in words, judged against the reference date: "In force since 2026-09-01",
/// "Enacted; applies from 2027-09-01, after the reference date" (what pages say instead of the rule that
/// matched).
fn phase_in_words(status: &str, from: Option<&str>, reference: &str) -> String {
    let date = from.and_then(PartialDate::parse);
    let reference: Option<jiff::civil::Date> = reference.parse().ok();
    // A month or a year holding the reference date is neither before nor after it.
    let started = match (date, reference) {
        (Some(d), Some(r)) => match (d.first_day(), d.last_day()) {
            (_, Some(last)) if last <= r => Some(true),
            (Some(first), _) if first > r => Some(false),
            _ => None,
        },
        _ => None,
    };
    let from = from.unwrap_or_default();
    match (PhaseStatus::parse(status), date.is_some(), started) {
        (Some(PhaseStatus::InForce), true, Some(false)) => format!("In force from {from}"),
        (Some(PhaseStatus::InForce), true, _) => format!("In force since {from}"),
        (Some(PhaseStatus::InForce), false, _) => "In force".into(),
        (Some(PhaseStatus::Enacted), true, Some(true)) => {
            format!("Enacted; applies since {from}")
        }
        (Some(PhaseStatus::Enacted), true, Some(false)) => {
            format!("Enacted; applies from {from}, after the reference date")
        }
        (Some(PhaseStatus::Enacted), true, None) => {
            format!("Enacted; applies from {from} (the source gives no exact day)")
        }
        (Some(PhaseStatus::Enacted), false, _) | (Some(PhaseStatus::EnactedDatePending), _, _) => {
            "Enacted, with no start date set yet".into()
        }
        (Some(PhaseStatus::Planned), true, _) => format!("Planned for {from}, not yet enacted"),
        (Some(PhaseStatus::Planned), false, _) => "Planned, not yet enacted".into(),
        (Some(PhaseStatus::None), _, _) => "No such obligation".into(),
        (Some(PhaseStatus::Unclear), _, _) | (None, _, _) => "Not clear from the source".into(),
    }
}

/// A fact as the pages show it: a reporting fact also says where its row is on its topic page.
#[derive(Serialize)]
struct FactView<'a> {
    #[serde(flatten)]
    fact: &'a Fact,
    #[serde(skip_serializing_if = "Option::is_none")]
    anchor: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    page: Option<&'static str>,
}

fn fact_view(fact: &Fact) -> FactView<'_> {
    let anchor = reporting_anchor(fact);
    let page = anchor.as_ref().and(reporting_page(fact.topic));
    FactView { fact, anchor, page }
}

/// A record with the name of the thing its `erp` (or `country`) names, as the page lists it.
#[derive(Serialize)]
struct WithErpName<'a, T> {
    #[serde(flatten)]
    item: &'a T,
    erp_name: String,
}

/// One country page: its facts by section, toggles with the fact text that set them, local ERPs,
/// partner flags and partners.
#[derive(Serialize)]
pub struct CountryContext<'a> {
    site: &'a SiteContext,
    country: &'a Country,
    toggles: Vec<ToggleExplained<'a>>,
    phases: Vec<PhaseView<'a>>,
    reference_date: &'a str,
    key_facts: Vec<FactView<'a>>,
    e_invoicing: Vec<FactView<'a>>,
    matrix: Vec<FactView<'a>>,
    vat_reporting: Vec<FactView<'a>>,
    saft: Vec<FactView<'a>>,
    local_erps: &'a [LocalErp],
    partner_flags: Vec<WithErpName<'a, crate::resources::PartnerFlag>>,
    partners: Vec<WithErpName<'a, Partner>>,
    /// Releases and changes (history.rs).
    history: &'a HistoryContext,
}

/// A toggle of a country page with the rule, the phase and the sources that set it, in words.
#[derive(Serialize)]
struct ToggleExplained<'a> {
    limit: &'a Option<String>,
    absence: bool,
    evidence: &'a Option<String>,
    notes: String,
    name: &'a str,
    label: &'a str,
    description: &'a str,
    value: Option<bool>,
    rule: Option<u64>,
    condition: &'a Option<String>,
    phase_id: &'a Option<String>,
    status: Option<&'static str>,
    applies_from: &'a Option<String>,
    scope: &'a Option<String>,
    source_urls: &'a [String],
    verification: Option<Verification>,
    last_checked: &'a Option<String>,
    why_null: &'a Option<String>,
    why_status: Option<String>,
    why_scope: &'a str,
    explanation: String,
}

/// A dated obligation phase of a country page.
#[derive(Serialize)]
struct PhaseView<'a> {
    id: String,
    obligation: &'a str,
    phase: &'a str,
    status: &'static str,
    status_words: String,
    applies_from: Option<String>,
    scope: &'a str,
    coverage: &'static str,
    limit: &'a str,
    basis: Option<&'static str>,
    notes: &'a str,
    source_urls: &'a [String],
    evidence: &'a str,
    verification: Verification,
    last_checked: &'a Option<String>,
}

/// One country page's context (see [`CountryContext`]).
pub(crate) fn country_context<'db>(db: &'db dyn salsa::Database, key: CountryKey<'db>) -> Json {
    let Some(detail) = country_detail(db, key) else {
        return Json::Null;
    };
    let labels = toggle_labels(db);
    let reference = crate::model::reference_date(db);
    let phase_notes = |id: &Option<String>| {
        country_obligations(db, key)
            .iter()
            .find(|p| Some(p.id()) == *id)
            .map(|p| p.notes.trim().to_string())
            .unwrap_or_default()
    };
    let toggles: Vec<ToggleExplained> = country_toggle_derivations(db, key)
        .iter()
        .zip(labels)
        .map(|(d, label)| ToggleExplained {
            limit: &d.limit,
            absence: d.rests_on_absence,
            evidence: &d.evidence,
            notes: phase_notes(&d.phase_id),
            name: &d.toggle,
            label: &label.label,
            description: &label.description,
            value: d.value,
            rule: d.rule,
            condition: &d.condition_text,
            phase_id: &d.phase_id,
            status: d
                .status
                .as_deref()
                .and_then(PhaseStatus::parse)
                .map(|s| s.describe()),
            applies_from: &d.applies_from,
            scope: &d.scope,
            source_urls: &d.source_urls,
            verification: d.verification,
            last_checked: &d.last_checked,
            why_null: &d.why_null,
            why_status: d
                .status
                .as_deref()
                .map(|status| phase_in_words(status, d.applies_from.as_deref(), reference)),
            why_scope: d
                .scope
                .as_deref()
                .map(|s| s.trim().trim_end_matches('.'))
                .unwrap_or_default(),
            explanation: match &d.status {
                Some(status) => sentence(
                    &phase_in_words(status, d.applies_from.as_deref(), reference),
                    d.scope.as_deref().unwrap_or_default(),
                ),
                None => d.why_null.clone().unwrap_or_default(),
            },
        })
        .collect();
    let obligations = obligation_rules(db);
    let phases: Vec<PhaseView> = country_obligations(db, key)
        .iter()
        .map(|p| {
            let label = obligations
                .iter()
                .find(|o| o.id == p.obligation)
                .map_or(p.obligation.as_str(), |o| o.label.as_str());
            let applies_from = p.applies_from.map(|d| d.to_string());
            PhaseView {
                id: p.id(),
                obligation: label,
                phase: &p.phase,
                status: p.status.describe(),
                status_words: phase_in_words(p.status.as_str(), applies_from.as_deref(), reference),
                applies_from,
                scope: &p.scope,
                coverage: p.coverage.as_str(),
                limit: &p.limit,
                basis: p.basis.map(|b| b.as_str()),
                notes: &p.notes,
                source_urls: &p.source,
                evidence: &p.evidence,
                verification: p.verification,
                last_checked: &p.last_verified,
            }
        })
        .collect();
    let of = |pred: &dyn Fn(FactTopic) -> bool| -> Vec<FactView> {
        detail
            .facts
            .iter()
            .filter(|f| pred(f.topic))
            .map(fact_view)
            .collect()
    };
    let with_erp_name = |erp: &str| erp_name(db, erp);
    to_json(&CountryContext {
        site: site_context(db),
        country: &detail.country,
        toggles,
        phases,
        reference_date: reference,
        key_facts: of(&|t| {
            !matches!(
                t,
                FactTopic::EInvoicing
                    | FactTopic::EInvoicingErpSupport
                    | FactTopic::VatReporting
                    | FactTopic::Saft
            )
        }),
        e_invoicing: of(&|t| t == FactTopic::EInvoicing),
        matrix: of(&|t| t == FactTopic::EInvoicingErpSupport),
        vat_reporting: of(&|t| t == FactTopic::VatReporting),
        saft: of(&|t| t == FactTopic::Saft),
        local_erps: &detail.local_erps,
        partner_flags: detail
            .partner_flags
            .iter()
            .map(|p| WithErpName {
                item: p,
                erp_name: with_erp_name(&p.erp),
            })
            .collect(),
        partners: detail
            .partners
            .iter()
            .map(|p| WithErpName {
                item: p,
                erp_name: with_erp_name(&p.erp),
            })
            .collect(),
        history: country_history_context(db, key),
    })
}

/// The ERP index: each ERP's name, vendor, category, website and counts (not its per-country data).
#[derive(Serialize)]
pub struct ErpsContext<'a> {
    site: &'a SiteContext,
    erps: Vec<ErpRow<'a>>,
    countries: usize,
}

/// An ERP of the index, with how its matrix cells divide among the support types.
#[derive(Serialize)]
struct ErpRow<'a> {
    #[serde(flatten)]
    summary: &'a Erp,
    support: SupportBreakdown,
}

/// The ERP index's context (see [`ErpsContext`]).
pub fn erps_context(db: &dyn salsa::Database) -> Json {
    let rows: Vec<ErpRow> = erps(db)
        .iter()
        .filter_map(|e| {
            let key = ErpKey::new(db, e.id.clone());
            let summary = erp_summary(db, key).as_ref()?;
            Some(ErpRow {
                summary,
                support: support_breakdown(db, key),
            })
        })
        .collect();
    to_json(&ErpsContext {
        site: site_context(db),
        erps: rows,
        countries: countries(db).len(),
    })
}

/// How an ERP's matrix cells divide among the support types: the types it has, in the legend's order,
/// with the count of established support and of cells not established.
#[derive(Serialize)]
struct SupportBreakdown {
    types: Vec<SupportCount>,
    established: usize,
    unknown: usize,
    recorded: usize,
}

/// How many of an ERP's cells have one support type.
#[derive(Serialize)]
struct SupportCount {
    value: &'static str,
    class: &'static str,
    count: usize,
}

/// See [`SupportBreakdown`].
fn support_breakdown(db: &dyn salsa::Database, key: ErpKey<'_>) -> SupportBreakdown {
    let rows = crate::model::erp_matrix(db, key);
    let count = |value: &str| rows.iter().filter(|r| r.support_type == value).count();
    let types: Vec<SupportCount> = SUPPORT_STYLES
        .iter()
        .filter(|s| s.value != "unknown/unverified")
        .map(|s| (s, count(s.value)))
        .filter(|(_, n)| *n > 0)
        .map(|(s, n)| SupportCount {
            value: s.value,
            class: s.class,
            count: n,
        })
        .collect();
    SupportBreakdown {
        types,
        established: rows
            .iter()
            .filter(|r| support_established(&r.support_type))
            .count(),
        unknown: count("unknown/unverified"),
        recorded: rows.len(),
    }
}

/// One ERP page: its profile, its e-invoicing support in every country of the register (a row per country,
/// "not recorded" where the matrix has none), its providers, partner flags and other facts.
#[derive(Serialize)]
pub struct ErpContext<'a> {
    site: &'a SiteContext,
    erp: &'a Erp,
    support: SupportBreakdown,
    /// How many rows.
    countries: usize,
    rows: Vec<ErpCountryRow<'a>>,
    providers: Vec<ProviderView<'a>>,
    partner_flags: Vec<WithCountryName<'a, crate::resources::PartnerFlag>>,
    other_facts: Vec<WithCountryName<'a, Fact>>,
    /// Releases and changes (history.rs).
    history: &'a HistoryContext,
}

/// A country's row of an ERP page: only what the page shows (the mandate text in a fact's `details`
/// belongs to the country pages); a country the matrix has no row for has no support and nothing else.
#[derive(Serialize)]
struct ErpCountryRow<'a> {
    code: &'a str,
    name: &'a str,
    region: &'a str,
    support: Option<&'a str>,
    #[serde(flatten)]
    recorded: Option<ErpSupport<'a>>,
}

/// What the matrix records of an ERP's support in a country.
#[derive(Serialize)]
struct ErpSupport<'a> {
    class: &'static str,
    established: bool,
    vendors: Option<&'a String>,
    notes: Option<&'a String>,
    verification: &'static str,
    last_checked: &'a Option<String>,
    source_urls: &'a [String],
}

/// A record with the name of the country its `country` names.
#[derive(Serialize)]
struct WithCountryName<'a, T> {
    #[serde(flatten)]
    item: &'a T,
    country_name: &'a str,
}

/// A provider of an ERP page, with the names of the countries in its scope.
#[derive(Serialize)]
struct ProviderView<'a> {
    #[serde(flatten)]
    provider: &'a crate::resources::Provider,
    countries: Vec<CountryName<'a>>,
}

/// A country code and its name (the code where the register has no such country).
#[derive(Serialize)]
struct CountryName<'a> {
    code: &'a str,
    name: &'a str,
}

/// One ERP page's context (see [`ErpContext`]).
pub(crate) fn erp_context<'db>(db: &'db dyn salsa::Database, key: ErpKey<'db>) -> Json {
    let Some(detail) = erp_detail(db, key) else {
        return Json::Null;
    };
    let names = country_names(db);
    let name_of = |code: &'db str| names.get(code).copied().unwrap_or(code);
    let support: BTreeMap<&str, &Fact> = detail
        .e_invoicing_support
        .iter()
        .map(|f| (f.country.as_str(), f))
        .collect();
    let rows: Vec<ErpCountryRow> = countries_by_name(db)
        .iter()
        .map(|c| {
            let fact = support.get(c.code.as_str());
            ErpCountryRow {
                code: &c.code,
                name: &c.name,
                region: &c.region,
                support: fact.map(|f| &*f.value),
                recorded: fact.map(|f| ErpSupport {
                    class: support_style(&f.value).1,
                    established: support_established(&f.value),
                    vendors: f.details.get("vendors"),
                    notes: f.details.get("notes"),
                    verification: f.verification.as_str(),
                    last_checked: &f.last_checked,
                    source_urls: &f.source_urls,
                }),
            }
        })
        .collect();
    let providers: Vec<ProviderView> = detail
        .providers
        .iter()
        .map(|p| ProviderView {
            provider: p,
            countries: p
                .countries_in_scope
                .iter()
                .map(|c| CountryName {
                    code: c,
                    name: name_of(c),
                })
                .collect(),
        })
        .collect();
    to_json(&ErpContext {
        site: site_context(db),
        erp: &detail.erp,
        support: support_breakdown(db, key),
        countries: rows.len(),
        rows,
        providers,
        partner_flags: detail
            .partner_flags
            .iter()
            .map(|p| WithCountryName {
                item: p,
                country_name: name_of(&p.country),
            })
            .collect(),
        other_facts: detail
            .other_facts
            .iter()
            .map(|f| WithCountryName {
                item: f,
                country_name: name_of(&f.country),
            })
            .collect(),
        history: erp_history_context(db, key),
    })
}

/// A reporting topic page (`vat-reporting`, `saf-t`): one row per reporting row of every country (by
/// country name), with the ERP columns that say something in at least one row. A column that is
/// "unknown" in every row is folded into one line naming those ERPs, so the table fits a desktop screen.
#[derive(Serialize)]
pub struct ReportingContext<'a> {
    site: &'a SiteContext,
    topic: &'a str,
    columns: Vec<ErpNamed<'a>>,
    folded: Vec<ErpNamed<'a>>,
    rows: Vec<ReportingView<'a>>,
}

/// An ERP by id, with its name.
#[derive(Serialize)]
struct ErpNamed<'a> {
    id: &'a str,
    name: String,
}

/// A reporting row of a topic page.
#[derive(Serialize)]
struct ReportingView<'a> {
    anchor: String,
    country: &'a str,
    country_name: &'a str,
    report_en: &'a str,
    report_local: Option<&'a String>,
    frequency: &'a str,
    deadline: &'a str,
    channel_format: &'a str,
    source_urls: &'a [String],
    last_checked: &'a Option<String>,
    verification: &'static str,
    /// The shown columns' values.
    erp_support: Vec<String>,
    erp_sources: &'a [String],
    notes: &'a str,
}

/// A reporting topic page's context (see [`ReportingContext`]).
fn reporting_context(db: &dyn salsa::Database, topic: &str) -> Json {
    let ids = reporting_erps(db);
    let mut reports = Vec::new();
    for c in countries_by_name(db) {
        let key = CountryKey::new(db, c.code.clone());
        for report in country_reporting(db, key)
            .iter()
            .filter(|r| r.row.topic == topic)
        {
            reports.push((c, report));
        }
    }
    let shown: Vec<usize> = (0..ids.len())
        .filter(|i| {
            reports
                .iter()
                .any(|(_, r)| r.row.erp_support.get(*i).is_some_and(|v| v != "unknown"))
        })
        .collect();
    let columns: Vec<ErpNamed> = shown
        .iter()
        .map(|i| ErpNamed {
            id: &ids[*i],
            name: erp_name(db, &ids[*i]),
        })
        .collect();
    let folded: Vec<ErpNamed> = (0..ids.len())
        .filter(|i| !shown.contains(i))
        .map(|i| ErpNamed {
            id: &ids[i],
            name: erp_name(db, &ids[i]),
        })
        .collect();
    let rows: Vec<ReportingView> = reports
        .iter()
        .map(|(c, report)| {
            let r = &report.row;
            ReportingView {
                anchor: format!("{topic}-{}-{}", c.code, report.n),
                country: &c.code,
                country_name: &c.name,
                report_en: &r.report_en,
                report_local: (r.report_local != r.report_en).then_some(&r.report_local),
                frequency: &r.frequency,
                deadline: &r.deadline,
                channel_format: &r.channel_format,
                source_urls: &r.source,
                last_checked: &r.source_checked,
                verification: r.verification.as_str(),
                erp_support: shown
                    .iter()
                    .map(|i| {
                        r.erp_support
                            .get(*i)
                            .cloned()
                            .unwrap_or_else(|| "unknown".into())
                    })
                    .collect(),
                erp_sources: &r.erp_sources,
                notes: &r.notes,
            }
        })
        .collect();
    to_json(&ReportingContext {
        site: site_context(db),
        topic,
        columns,
        folded,
        rows,
    })
}

/// `/vat-reporting/`: the VAT reporting rows of every country.
pub fn vat_reporting_context(db: &dyn salsa::Database) -> Json {
    reporting_context(db, "vat-reporting")
}

/// `/saf-t/`: the SAF-T rows of every country.
pub fn saft_context(db: &dyn salsa::Database) -> Json {
    reporting_context(db, "saf-t")
}

/// How many rows a page made of parts (partners, local ERPs, news) shows, and the mark where they go
/// (one part at a time, see [`super::parts`]).
#[derive(Serialize)]
pub struct PartedRows {
    pub count: usize,
    pub rows: &'static str,
}

impl PartedRows {
    /// `count` rows, printed where the template prints `rows`.
    pub fn of(count: usize) -> PartedRows {
        PartedRows {
            count,
            rows: super::parts::PARTS_MARK,
        }
    }
}

/// The partners page: how many partners, and where their rows go.
#[derive(Serialize)]
pub struct PartnersContext<'a> {
    site: &'a SiteContext,
    partners: PartedRows,
}

/// The partners page: how many partners, and the mark where its rows go (one part per country, see
/// [`partners_page_rows`]; sorted by country, ERP and name, with the registers' names). Neutral: nothing
/// is featured and no pricing exists in the data.
pub fn partners_context(db: &dyn salsa::Database) -> Json {
    to_json(&PartnersContext {
        site: site_context(db),
        partners: PartedRows::of(partner_rows(db).value.len()),
    })
}

/// A partner as the partners page's rows show it.
#[derive(Serialize)]
struct PartnerView<'a> {
    #[serde(flatten)]
    partner: Partner,
    country_name: Option<&'a str>,
    erp_name: String,
}

/// One country's partners as the partners page's rows show them: the value its part is rendered from
/// (the page is made of one part per country, see [`crate::model::partner_codes`]).
pub(crate) fn partners_page_rows(db: &dyn salsa::Database, code: &str) -> Json {
    let names = country_names(db);
    let rows = country_partners(db, CountryKey::new(db, code.to_string()));
    let rows: Vec<PartnerView> = rows
        .iter()
        .map(|row| PartnerView {
            partner: partner(row),
            country_name: names.get(row.country.as_str()).copied(),
            erp_name: erp_name(db, &row.erp),
        })
        .collect();
    to_json(&rows)
}

/// The local ERPs page: how many, and where their rows go.
#[derive(Serialize)]
pub struct LocalErpsContext<'a> {
    site: &'a SiteContext,
    local_erps: PartedRows,
}

/// The local ERPs page: how many, and the mark where its rows go (one part per country, see
/// [`local_erps_page_rows`]).
pub(crate) fn local_erps_context(db: &dyn salsa::Database) -> Json {
    to_json(&LocalErpsContext {
        site: site_context(db),
        local_erps: PartedRows::of(local_erp_rows(db).value.len()),
    })
}

/// A local ERP as the local ERPs page's rows show it.
#[derive(Serialize)]
struct LocalErpView<'a> {
    #[serde(flatten)]
    local_erp: LocalErp,
    country_name: Option<&'a str>,
}

/// One country's local and regional ERPs as the local ERPs page's rows show them, sorted by name: the
/// value its part is rendered from (see [`crate::model::local_erp_codes`]).
pub(crate) fn local_erps_page_rows(db: &dyn salsa::Database, code: &str) -> Json {
    let names = country_names(db);
    let rows = country_local_erps(db, CountryKey::new(db, code.to_string()));
    let rows: Vec<LocalErpView> = rows
        .iter()
        .map(|row| LocalErpView {
            local_erp: local_erp(row),
            country_name: names.get(row.country.as_str()).copied(),
        })
        .collect();
    to_json(&rows)
}

/// About how many news items one part of the news page holds: a part ends after an item whose id's
/// hash is a multiple of this (see [`news_part_starts`]).
const NEWS_PER_PART: u64 = 500;

/// The most news items one part holds, whatever their ids.
const NEWS_PART_MOST: usize = 2000;

/// The news page: how many items, and where their rows go.
#[derive(Serialize)]
pub struct NewsContext<'a> {
    site: &'a SiteContext,
    news: PartedRows,
}

/// The news page: how many items, and the mark where its rows go (the items newest first, as
/// `news.json`, in parts of about [`NEWS_PER_PART`], see [`news_page_rows`]).
pub(crate) fn news_context(db: &dyn salsa::Database) -> Json {
    to_json(&NewsContext {
        site: site_context(db),
        news: PartedRows::of(news_items(db).len()),
    })
}

/// Where each part of the news page begins: the id of its first item, and that item's place in the
/// list.
///
/// The items decide where a part ends, not their places: after an item whose id's hash (blake3) is a
/// multiple of [`NEWS_PER_PART`], or after [`NEWS_PART_MOST`] items. A new item goes to the top of the
/// list (the newest first); with parts cut every so many places, every part after it would shift by
/// one and be made again. Cut by the items, only the new item's part changes: the others keep their
/// items and their first ids, which are their keys.
#[salsa::tracked(returns(ref))]
fn news_part_starts(db: &dyn salsa::Database) -> Vec<(String, usize)> {
    let mut starts = Vec::new();
    let mut start = 0;
    for (i, item) in news_items(db).iter().enumerate() {
        if i == start {
            starts.push((item.id.clone(), i));
        }
        if ends_news_part(&item.id) || i + 1 - start >= NEWS_PART_MOST {
            start = i + 1;
        }
    }
    starts
}

/// Whether a part of the news page ends after the item `id` (see [`news_part_starts`]).
fn ends_news_part(id: &str) -> bool {
    let hash = blake3::hash(id.as_bytes());
    let mut first = [0; 8];
    first.copy_from_slice(&hash.as_bytes()[..8]);
    u64::from_le_bytes(first) % NEWS_PER_PART == 0
}

/// The news page's parts: the ids of their first items, in page order.
#[salsa::tracked(returns(ref))]
pub(crate) fn news_parts(db: &dyn salsa::Database) -> Vec<String> {
    news_part_starts(db)
        .iter()
        .map(|(first, _)| first.clone())
        .collect()
}

/// One part of the news page, named by its first item's id.
#[salsa::interned(debug)]
struct NewsPart<'db> {
    #[returns(ref)]
    first: String,
}

/// A news item as the news page's rows show it, with the names of the ERPs it is about.
#[derive(Serialize)]
struct NewsView<'a> {
    #[serde(flatten)]
    item: &'a NewsItem,
    erp_names: Vec<ErpNamed<'a>>,
}

/// The news items of the part that begins with the item `first`: titles, dates and links only (none
/// when no part begins there).
pub(crate) fn news_page_rows(db: &dyn salsa::Database, first: &str) -> Json {
    let items = news_part_items(db, NewsPart::new(db, first.to_string()));
    let items: Vec<NewsView> = items
        .iter()
        .map(|n| NewsView {
            item: n,
            erp_names: n
                .erps
                .iter()
                .map(|e| ErpNamed {
                    id: e,
                    name: erp_name(db, e),
                })
                .collect(),
        })
        .collect();
    to_json(&items)
}

/// The items of one part of the news page. Every part's items are taken again after any edit of the
/// news; a part whose items are the same keeps its revision, so the part is not rendered again.
/// Kept in a session (one value in a one-off build, see [`keep_last_news_part_only`]).
#[salsa::tracked(returns(ref), lru = 0)]
fn news_part_items<'db>(db: &'db dyn salsa::Database, part: NewsPart<'db>) -> Vec<NewsItem> {
    let starts = news_part_starts(db);
    let items = news_items(db);
    let Some(at) = starts.iter().position(|(first, _)| first == part.first(db)) else {
        return Vec::new();
    };
    let end = starts.get(at + 1).map_or(items.len(), |(_, next)| *next);
    items[starts[at].1..end].to_vec()
}

/// A one-off build renders each part of the news page once: it keeps one part's items at a time.
pub(crate) fn keep_last_news_part_only(db: &mut dyn salsa::Database) {
    news_part_items::set_lru_capacity(db, 1);
}

/// The sponsors page: the notice of `rules/site.toml` and the paid placements, if any.
#[derive(Serialize)]
pub struct SponsorsContext<'a> {
    site: &'a SiteContext,
    notice: &'a str,
    sponsors: &'a [Sponsor],
}

/// The sponsors page's context (see [`SponsorsContext`]).
pub fn sponsors_context(db: &dyn salsa::Database) -> Json {
    let sponsors = sponsor_items(db);
    to_json(&SponsorsContext {
        site: site_context(db),
        notice: &site_rules(db).value.sponsors.notice,
        sponsors: &sponsors,
    })
}

/// The licence page: both licences, their attribution strings and the commercial path.
#[derive(Serialize)]
pub struct LicenceContext<'a> {
    site: &'a SiteContext,
    api: &'a ApiLicence,
    data: &'a DataLicence,
}

/// The licence page's context, read from `rules/site.toml` only.
pub fn licence_context(db: &dyn salsa::Database) -> Json {
    let site = &site_rules(db).value;
    to_json(&LicenceContext {
        site: site_context(db),
        api: &site.api_licence,
        data: &site.data_licence,
    })
}

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
pub struct FiltersContext<'a> {
    site: &'a SiteContext,
    filters: Vec<FilterView<'a>>,
}

/// The filters index's context (see [`FiltersContext`]).
pub fn filters_context(db: &dyn salsa::Database) -> Json {
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
pub struct FilterContext<'a> {
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
