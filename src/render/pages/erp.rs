//! The ERP index (`/erp/`) and an ERP's page (`/erp/<id>/`).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value as Json;

use super::changes::{HistoryContext, erp_history_context};
use super::context::{PageSpec, page};
use super::shared::*;
use crate::api_types::{Erp, Fact};
use crate::derived::{erp_summary, established};
use crate::model::{ErpKey, countries, countries_by_name, erps};
use crate::render::api::erp_detail;

/// The ERP index: each ERP's name, vendor, category, website and counts (not its per-country data).
#[derive(Serialize)]
pub(super) struct ErpsContext<'a> {
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
pub(super) fn erps_context(db: &dyn salsa::Database) -> Json {
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
    /// Graded answers by support type (established or not), each cell once.
    types: Vec<SupportCount>,
    /// The sum of `types`.
    graded: usize,
    established: usize,
    /// Answers recorded but graded `unverified`: shown, not counted in `types`.
    unverified: usize,
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
    // Each cell counts once: a graded answer under its type, an unverified one apart.
    let count = |value: &str| {
        rows.iter()
            .filter(|r| r.support_type == value && r.verification.is_verified())
            .count()
    };
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
        graded: types.iter().map(|t| t.count).sum(),
        types,
        established: rows
            .iter()
            .filter(|r| established(&r.support_type, r.verification))
            .count(),
        unverified: rows
            .iter()
            .filter(|r| r.support_type != "unknown/unverified" && !r.verification.is_verified())
            .count(),
        unknown: rows
            .iter()
            .filter(|r| r.support_type == "unknown/unverified")
            .count(),
        recorded: rows.len(),
    }
}

/// One ERP page: its profile, its e-invoicing support in every country of the register (a row per country,
/// "not recorded" where the matrix has none), its providers, partner flags and other facts.
#[derive(Serialize)]
pub(super) struct ErpContext<'a> {
    site: &'a SiteContext,
    erp: &'a Erp,
    support: SupportBreakdown,
    /// How many rows.
    countries: usize,
    rows: Vec<ErpCountryRow<'a>>,
    providers: Vec<ProviderView<'a>>,
    partner_flags: Vec<WithCountryName<'a, crate::api_types::PartnerFlag>>,
    other_facts: Vec<WithCountryName<'a, Fact>>,
    /// Releases and changes (history.rs).
    history: &'a HistoryContext,
    /// What was searched, when no country's support is known (see `SupportSearch`).
    support_search: Option<&'a crate::parse::json_sources::SupportSearch>,
    /// The obligation phases of the next 24 months with this ERP's support (readiness.rs).
    upcoming: super::readiness::Upcoming<'a>,
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
    /// The sentence of its first source that settles it, where one was read.
    quote: Option<&'a String>,
}

/// A record with the name of the country its `country` names.
#[derive(Serialize)]
struct WithCountryName<'a, T> {
    #[serde(flatten)]
    item: &'a T,
    country_name: &'a str,
}

impl<'a, T> WithCountryName<'a, T> {
    /// Each of `items` with the name of the country that `country` reads from it.
    fn each(
        items: &'a [T],
        country: impl Fn(&'a T) -> &'a str,
        name: impl Fn(&'a str) -> &'a str,
    ) -> Vec<Self> {
        items
            .iter()
            .map(|item| WithCountryName {
                item,
                country_name: name(country(item)),
            })
            .collect()
    }
}

/// A provider of an ERP page, with the names of the countries in its scope.
#[derive(Serialize)]
struct ProviderView<'a> {
    #[serde(flatten)]
    provider: &'a crate::api_types::Provider,
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
                    established: established(&f.value, f.verification),
                    vendors: f.details.get("vendors"),
                    notes: f.details.get("notes"),
                    verification: f.verification.as_str(),
                    last_checked: &f.last_checked,
                    source_urls: &f.source_urls,
                    quote: f.details.get("quote"),
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
    let support = support_breakdown(db, key);
    let support_search = crate::model::erp_info(db, key)
        .as_ref()
        .filter(|_| support.recorded > 0 && support.unknown == support.recorded)
        .and_then(|e| e.support_search.as_ref());
    to_json(&ErpContext {
        site: site_context(db),
        erp: &detail.erp,
        support,
        support_search,
        countries: rows.len(),
        rows,
        providers,
        partner_flags: WithCountryName::each(&detail.partner_flags, |p| &p.country, name_of),
        other_facts: WithCountryName::each(&detail.other_facts, |f| &f.country, name_of),
        history: erp_history_context(db, key),
        upcoming: super::readiness::erp_upcoming(db, key.id(db)),
    })
}

/// How the ERP index is made.
pub(super) fn index_spec() -> PageSpec {
    page("erps", |db, _| erps_context(db))
}

/// How an ERP's page is made: its key is the ERP's id.
pub(super) fn spec() -> PageSpec {
    page("erp", |db, id| {
        erp_context(db, ErpKey::new(db, id.to_string()))
    })
}
