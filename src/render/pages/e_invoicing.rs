//! The e-invoicing matrix page (`/e-invoicing/`): a row per country, a cell per ERP.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value as Json;

use super::context::{PageSpec, page};
use super::shared::*;
use crate::api_types::Verification;
use crate::derived::established;
use crate::derived::obligations::country_toggle_derivations;
use crate::model::{
    CountryKey, countries, countries_by_name, country_mandate, country_matrix, erps,
};

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
pub(super) struct EInvoicingContext<'a> {
    site: &'a SiteContext,
    erps: Vec<MatrixColumn<'a>>,
    rows: Vec<MatrixCountry<'a>>,
    legend: Vec<LegendEntry>,
    regions: Vec<&'a str>,
    mandate_statuses: Vec<MandateStatus>,
    /// The B2B e-invoicing models the matrix can be filtered by, with how many countries have each,
    /// and how many have none recorded.
    models: Vec<super::home::ModelCount<'a>>,
    models_unknown: usize,
    /// Cells established by [`crate::derived::established`]: the sum of the legend's established types.
    established_cells: usize,
    /// Cells with an answer recorded but graded `unverified`: shown, counted apart from every type.
    unverified_cells: usize,
    cells: usize,
    /// The ERPs none of whose cells is known, each with what was searched for it (instead of a column
    /// of dashes that says nothing).
    unknown_columns: Vec<UnknownColumn<'a>>,
    /// The cells whose source was quoted, in the grid's order (country by name, then ERP): the sentence
    /// each rests on, listed under the grid like footnotes, so the grid stays a grid at 390 px.
    quoted: Vec<QuotedCell<'a>>,
}

/// A cell of the grid with the sentence of its first source that settles it.
#[derive(Serialize)]
struct QuotedCell<'a> {
    country: &'a str,
    country_name: &'a str,
    erp: &'a str,
    erp_name: &'a str,
    support: &'a str,
    verification: &'a str,
    quote: &'a str,
    source_url: Option<&'a String>,
}

/// An ERP column whose every cell is unknown, and the search that found nothing.
#[derive(Serialize)]
struct UnknownColumn<'a> {
    id: &'a str,
    name: &'a str,
    search: &'a crate::parse::json_sources::SupportSearch,
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
    /// Its B2B e-invoicing model (`clearance`, …), `unknown` where none is recorded.
    model: &'a str,
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
pub(super) fn e_invoicing_context(db: &dyn salsa::Database) -> Json {
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
    let mut established_cells = 0;
    let mut unverified_cells = 0;
    let mut statuses: BTreeMap<&str, usize> = BTreeMap::new();
    let mut quoted: Vec<QuotedCell> = Vec::new();
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
                    let known = support != "unknown/unverified";
                    let verification = row.map_or(Verification::Unverified, |r| r.verification);
                    // The legend counts each cell once: a graded answer under its type, an unverified
                    // answer apart (shown, never counted as established), the rest as unknown.
                    if known && !verification.is_verified() {
                        unverified_cells += 1;
                    } else {
                        *used.entry(support.to_string()).or_default() += 1;
                    }
                    let is_established = established(support, verification);
                    established_cells += usize::from(is_established);
                    let (short, class) = support_style(support);
                    if let Some(r) = row.filter(|r| known && !r.quote.is_empty()) {
                        quoted.push(QuotedCell {
                            country: &c.code,
                            country_name: &c.name,
                            erp: &e.id,
                            erp_name: &e.name,
                            support,
                            verification: verification.as_str(),
                            quote: &r.quote,
                            source_url: r.erp_source.first(),
                        });
                    }
                    MatrixCell {
                        erp: &e.id,
                        erp_name: &e.name,
                        support,
                        short,
                        class,
                        known,
                        established: is_established,
                        verification: verification.as_str(),
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
                model: crate::render::page_figures::b2b_model(db, &c.code).unwrap_or("unknown"),
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
    let unknown_columns = erp_list
        .iter()
        .filter(|e| {
            rows.iter()
                .all(|r| r.cells.iter().all(|c| c.erp != e.id || !c.known))
        })
        .filter_map(|e| {
            Some(UnknownColumn {
                id: &e.id,
                name: &e.name,
                search: e.support_search.as_ref()?,
            })
        })
        .collect();
    let (models, models_unknown) = super::home::model_counts(db);
    to_json(&EInvoicingContext {
        site: site_context(db),
        erps: columns,
        rows,
        legend,
        regions,
        mandate_statuses,
        models,
        models_unknown,
        established_cells,
        unverified_cells,
        cells,
        unknown_columns,
        quoted,
    })
}

/// How the e-invoicing matrix page is made.
pub(super) fn spec() -> PageSpec {
    page("e-invoicing", |db, _| e_invoicing_context(db))
}
