//! The comparison page (`/compare/`): every country in one table (its e-invoicing model, formats,
//! platforms, signature, archiving, next dated phase and how many ERPs support it), and, for the two to
//! four countries a reader picks (`?c=it,pl`), the same answers side by side with each obligation's
//! phases and every ERP's support. The side-by-side cells are rendered here for every country; the
//! page's script (`/assets/compare.js`) only shows and orders the chosen ones.

use serde::Serialize;
use serde_json::Value as Json;

use super::country::{GlanceRow, REGIME_FIELDS, phase_in_words, regime_views};
use super::shared::*;
use super::{PageSpec, page};
use crate::derive::obligations::country_calendar;
use crate::derive::regimes::country_regime_records;
use crate::derive::support_established;
use crate::model::{CountryKey, countries_by_name, country_matrix, country_obligations, erps};
use crate::parse::rules::obligation_rules;
use crate::parse::tables::PhaseStatus;
use crate::resources::Verification;

/// The comparison page: the questions, obligations and ERPs its rows name, and every country's answers.
#[derive(Serialize)]
pub struct CompareContext<'a> {
    site: &'a SiteContext,
    reference_date: &'a str,
    /// The questions a regime answers ("E-invoicing model", …), in the order of each country's `glance`.
    questions: Vec<&'static str>,
    obligations: Vec<CompareObligation<'a>>,
    erps: Vec<CompareErp<'a>>,
    countries: Vec<CompareCountry<'a>>,
    /// The fewest and the most countries the side-by-side view shows.
    min: usize,
    max: usize,
}

/// An obligation, as a row of the side-by-side view names it.
#[derive(Serialize)]
struct CompareObligation<'a> {
    id: &'a str,
    label: &'a str,
}

/// An ERP, as a row of the side-by-side view names it.
#[derive(Serialize)]
struct CompareErp<'a> {
    id: &'a str,
    name: &'a str,
}

/// One country: its row of the table and its column of the side-by-side view.
#[derive(Serialize)]
struct CompareCountry<'a> {
    code: &'a str,
    name: &'a str,
    region: &'a str,
    /// The country page's "How invoices are handled": one row per question, in the order of `questions`.
    glance: Vec<GlanceRow<'a>>,
    /// The obligations no regime row records yet (unknown), as pages name them.
    unrecorded: Vec<String>,
    /// The first dated phase that starts after the reference date (or in a month or year holding it).
    next: Option<NextPhase>,
    /// Per obligation of `obligations`, in order: the country's phases of it (none: unknown).
    phases: Vec<Vec<ComparePhase<'a>>>,
    /// Per ERP of `erps`, in order: its support here.
    support: Vec<SupportCell<'a>>,
    /// How many ERPs have established support (native, native with an access point, an add-on or a
    /// provider; a roadmap is not).
    established: usize,
}

/// The next dated phase of a country, as the table shows it (the phase's row on the country page is
/// `#<id>`).
#[derive(Serialize)]
struct NextPhase {
    id: String,
    obligation: String,
    date: String,
    status: &'static str,
    verification: Verification,
    source_urls: Vec<String>,
    last_checked: Option<String>,
}

/// A phase of an obligation in the side-by-side view.
#[derive(Serialize)]
struct ComparePhase<'a> {
    id: String,
    phase: &'a str,
    words: String,
    limit: &'a str,
    absence: bool,
    source_urls: &'a [String],
    evidence: &'a str,
    verification: Verification,
    last_checked: &'a Option<String>,
}

/// An ERP's support in a country (a missing row of the matrix is unknown).
#[derive(Serialize)]
struct SupportCell<'a> {
    erp: &'a str,
    support: &'a str,
    short: &'a str,
    class: &'static str,
    known: bool,
    source_urls: &'a [String],
    evidence: &'a str,
    verification: Verification,
    last_checked: &'a Option<String>,
}

/// The comparison page's context (see [`CompareContext`]).
pub fn compare_context(db: &dyn salsa::Database) -> Json {
    let reference = crate::model::reference_date(db);
    let rules = obligation_rules(db);
    let erp_list = erps(db);
    let label_of = |id: &str| {
        rules
            .iter()
            .find(|o| o.id == id)
            .map_or_else(|| id.to_string(), |o| o.label.clone())
    };
    let countries: Vec<CompareCountry> = countries_by_name(db)
        .iter()
        .map(|c| {
            let key = CountryKey::new(db, c.code.clone());
            let phases_of = country_obligations(db, key);
            // The country's obligations in order, each with whether its only phases say there is none.
            let mut recorded: Vec<(String, bool)> = Vec::new();
            for p in phases_of {
                let none = p.status == PhaseStatus::None;
                match recorded.iter_mut().find(|(id, _)| *id == p.obligation) {
                    Some((_, only_none)) => *only_none &= none,
                    None => recorded.push((p.obligation.clone(), none)),
                }
            }
            let (_, glance, unrecorded) =
                regime_views(country_regime_records(db, key), &recorded, &label_of);
            let next = country_calendar(db, key)
                .iter()
                .find(|e| e.when != "past")
                .map(|e| NextPhase {
                    id: e.id.clone(),
                    obligation: e.obligation_label.clone(),
                    date: e.date.clone(),
                    status: PhaseStatus::parse(&e.status).map_or("unclear", |s| s.describe()),
                    verification: e.verification,
                    source_urls: e.source_urls.clone(),
                    last_checked: e.last_checked.clone(),
                });
            let phases = rules
                .iter()
                .map(|o| {
                    phases_of
                        .iter()
                        .filter(|p| p.obligation == o.id)
                        .map(|p| {
                            let from = p.applies_from.map(|d| d.to_string());
                            ComparePhase {
                                id: p.id(),
                                phase: &p.phase,
                                words: phase_in_words(
                                    p.status.as_str(),
                                    from.as_deref(),
                                    reference,
                                ),
                                limit: &p.limit,
                                absence: p.basis.is_some_and(|b| b.as_str() == "absence"),
                                source_urls: &p.source,
                                evidence: &p.evidence,
                                verification: p.verification,
                                last_checked: &p.last_verified,
                            }
                        })
                        .collect()
                })
                .collect();
            let matrix = country_matrix(db, key);
            let support: Vec<SupportCell> = erp_list
                .iter()
                .map(|e| {
                    let row = matrix.iter().find(|r| r.erp == e.id);
                    let support = row.map_or("unknown/unverified", |r| r.support_type.as_str());
                    let (short, class) = support_style(support);
                    SupportCell {
                        erp: &e.id,
                        support,
                        short,
                        class,
                        known: support != "unknown/unverified",
                        source_urls: row.map_or(&[], |r| r.erp_source.as_slice()),
                        evidence: row.map_or("unverified", |r| r.evidence.as_str()),
                        verification: row.map_or(Verification::Unverified, |r| r.verification),
                        last_checked: row.map_or(&None, |r| &r.last_verified),
                    }
                })
                .collect();
            CompareCountry {
                code: &c.code,
                name: &c.name,
                region: &c.region,
                glance,
                unrecorded,
                next,
                phases,
                established: support
                    .iter()
                    .filter(|s| support_established(s.support))
                    .count(),
                support,
            }
        })
        .collect();
    to_json(&CompareContext {
        site: site_context(db),
        reference_date: reference,
        questions: REGIME_FIELDS.iter().map(|(_, q)| *q).collect(),
        obligations: rules
            .iter()
            .map(|o| CompareObligation {
                id: &o.id,
                label: &o.label,
            })
            .collect(),
        erps: erp_list
            .iter()
            .map(|e| CompareErp {
                id: &e.id,
                name: &e.name,
            })
            .collect(),
        countries,
        min: 2,
        max: 4,
    })
}

/// How the comparison page is made.
pub(super) fn spec() -> PageSpec {
    page("compare", |db, _| compare_context(db))
}
