//! What the dated phases of `sources/tables/obligations.csv` give beside the toggles: how each toggle got
//! its value (`/api/v1/toggles.json`), the calendar of dated phases, and the `effective_date` of the facts
//! whose text explains an obligation. Per country, so an edit of one phase re-runs that country's share.

use jiff::civil::Date;

use super::toggles::country_toggles;
use crate::api_types::{CalendarEntry, ToggleDerivation};
use crate::ids::key_fact_id;
use crate::model::dates::reference_day;
use crate::model::{CountryKey, countries, country_info, country_obligations, reference_date};
use crate::parse::rules::{ObligationRule, fact_labels, obligation_rules};
use crate::parse::tables::{ObligationRow, PartialDate, PhaseStatus};

/// How each toggle of a country got its value, in the toggles' published order.
#[salsa::tracked(returns(ref))]
pub fn country_toggle_derivations<'db>(
    db: &'db dyn salsa::Database,
    key: CountryKey<'db>,
) -> Vec<ToggleDerivation> {
    let reference = reference_date(db);
    country_toggles(db, key)
        .explanations
        .iter()
        .map(|e| {
            let phase = e.phase.as_ref();
            let mark = crate::derived::toggles::ToggleMark::of(e);
            ToggleDerivation {
                country: key.code(db).clone(),
                toggle: e.name.to_string(),
                value: e.value,
                obligation: e.obligation.clone(),
                rule: e.rule.map(|(n, _)| n as u64),
                condition: e.rule.map(|(_, c)| condition_name(c).to_string()),
                condition_text: e.rule.map(|(_, c)| c.describe().to_string()),
                phase_id: phase.map(ObligationRow::id),
                status: phase.map(|p| p.status.as_str().to_string()),
                applies_from: phase.and_then(|p| p.applies_from).map(|d| d.to_string()),
                reference_date: reference.clone(),
                scope: phase.map(|p| p.scope.clone()).filter(|s| !s.is_empty()),
                coverage: phase.map(|p| p.coverage.as_str().to_string()),
                limit: mark.limit,
                basis: phase.and_then(|p| p.basis).map(|b| b.as_str().to_string()),
                rests_on_absence: mark.absence,
                source_urls: phase.map(|p| p.source.clone()).unwrap_or_default(),
                evidence: phase.map(|p| p.evidence.clone()).filter(|e| !e.is_empty()),
                verification: phase.map(|p| p.verification),
                last_checked: phase.and_then(|p| p.last_verified.clone()),
                why_null: e.why_null.clone(),
                quote: phase.map(|p| p.quote.clone()).filter(|q| !q.is_empty()),
            }
        })
        .collect()
}

/// The name of a condition in `rules/toggles.toml`.
fn condition_name(condition: crate::parse::rules::PhaseCondition) -> &'static str {
    use crate::parse::rules::PhaseCondition as C;
    match condition {
        C::Applies => "applies",
        C::AppliesLater => "applies_later",
        C::InForce => "in_force",
        C::Enacted => "enacted",
        C::EnactedDatePending => "enacted_date_pending",
        C::Planned => "planned",
        C::None => "none",
    }
}

/// Where a date stands against the reference date: `past`, `upcoming`, or `spans` for a month or a year
/// that holds it.
pub fn when(date: PartialDate, reference: Date) -> &'static str {
    match (date.first_day(), date.last_day()) {
        (_, Some(last)) if last <= reference => "past",
        (Some(first), _) if first > reference => "upcoming",
        _ => "spans",
    }
}

fn precision(date: PartialDate) -> &'static str {
    date.precision()
}

/// The id of the fact whose text explains an obligation in a country.
fn explaining_fact_id(
    db: &dyn salsa::Database,
    country: &str,
    obligation: &ObligationRule,
) -> String {
    fact_labels(db)
        .value
        .iter()
        .find(|l| l.label == obligation.fact)
        .map(|label| key_fact_id(country, &label.topic, label.erp.as_deref()))
        .unwrap_or_default()
}

/// How readers are told a phase apart from the obligation's others: its label of `rules/phases.toml`;
/// none for a phase named `main` (it is the obligation itself). A phase without a label is a located
/// error of `check`; until it has one, its name stands in, without its hyphens.
pub(crate) fn phase_words(
    db: &dyn salsa::Database,
    country: &str,
    obligation: &str,
    phase: &str,
) -> Option<String> {
    (phase != "main").then(|| {
        crate::parse::rules::phase_label(db, &format!("{country}-{obligation}-{phase}"))
            .map_or_else(|| phase.replace('-', " "), str::to_string)
    })
}

/// The dated phases of one country (in force, enacted or planned), in date order.
#[salsa::tracked(returns(ref))]
pub fn country_calendar<'db>(
    db: &'db dyn salsa::Database,
    key: CountryKey<'db>,
) -> Vec<CalendarEntry> {
    let Some(country) = country_info(db, key) else {
        return Vec::new();
    };
    let reference = reference_day(db).unwrap_or_default();
    let obligations = obligation_rules(db);
    let mut entries: Vec<CalendarEntry> = country_obligations(db, key)
        .iter()
        .filter(|p| {
            matches!(
                p.status,
                PhaseStatus::InForce | PhaseStatus::Enacted | PhaseStatus::Planned
            )
        })
        .filter_map(|p| {
            let date = p.applies_from?;
            let obligation = obligations.iter().find(|o| o.id == p.obligation)?;
            Some(CalendarEntry {
                id: p.id(),
                country: country.code.clone(),
                country_name: country.name.clone(),
                obligation: p.obligation.clone(),
                obligation_label: obligation.label.clone(),
                phase_label: phase_words(db, &p.country, &p.obligation, &p.phase),
                date: date.to_string(),
                precision: precision(date).to_string(),
                status: p.status.as_str().to_string(),
                when: when(date, reference).to_string(),
                scope: p.scope.clone(),
                source_urls: p.source.clone(),
                verification: p.verification,
                last_checked: p.last_verified.clone(),
                fact_id: explaining_fact_id(db, &country.code, obligation),
                quote: Some(p.quote.clone()).filter(|q| !q.is_empty()),
            })
        })
        .collect();
    entries.sort_by(|a, b| calendar_order(a).cmp(&calendar_order(b)));
    entries
}

/// Calendar order: by the first day of the date, then the coarser date first, then country, obligation
/// and phase.
fn calendar_order(e: &CalendarEntry) -> (Option<Date>, usize, &str, &str, &str) {
    let date = PartialDate::parse(&e.date);
    (
        date.and_then(PartialDate::first_day),
        match e.precision.as_str() {
            "year" => 0,
            "month" => 1,
            _ => 2,
        },
        &e.country,
        &e.obligation,
        &e.id,
    )
}

/// Every dated phase of every country, in calendar order.
#[salsa::tracked(returns(ref))]
pub fn calendar(db: &dyn salsa::Database) -> Vec<CalendarEntry> {
    let mut all: Vec<CalendarEntry> = countries(db)
        .iter()
        .flat_map(|c| {
            country_calendar(db, CountryKey::new(db, c.code.clone()))
                .iter()
                .cloned()
        })
        .collect();
    all.sort_by(|a, b| calendar_order(a).cmp(&calendar_order(b)));
    all
}

/// What facts read of a country's phases: their obligation, phase, status and date, without the texts,
/// so an edit of a phase's scope or notes stops here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PhaseDate {
    pub obligation: String,
    pub phase: String,
    pub status: PhaseStatus,
    pub applies_from: Option<PartialDate>,
}

#[salsa::tracked(returns(ref))]
pub fn country_phase_dates<'db>(
    db: &'db dyn salsa::Database,
    key: CountryKey<'db>,
) -> Vec<PhaseDate> {
    country_obligations(db, key)
        .iter()
        .map(|p| PhaseDate {
            obligation: p.obligation.clone(),
            phase: p.phase.clone(),
            status: p.status,
            applies_from: p.applies_from,
        })
        .collect()
}

/// The `effective_date` of a country fact: the earliest date, given to the day, of the in-force or enacted
/// phases of the obligations the fact explains; `None` when no such phase gives a day (or the fact explains
/// no obligation, in which case no phase is read).
pub fn effective_date(
    db: &dyn salsa::Database,
    key: CountryKey<'_>,
    fact_label: &str,
) -> Option<String> {
    let obligations: Vec<&str> = obligation_rules(db)
        .iter()
        .filter(|o| o.fact == fact_label)
        .map(|o| o.id.as_str())
        .collect();
    if obligations.is_empty() {
        return None;
    }
    country_phase_dates(db, key)
        .iter()
        .filter(|p| obligations.contains(&p.obligation.as_str()))
        .filter(|p| matches!(p.status, PhaseStatus::InForce | PhaseStatus::Enacted))
        .filter_map(|p| p.applies_from.filter(|d| d.is_day()))
        .min()
        .map(|d| d.to_string())
}

/// The deadlines of a country's e-invoicing obligations, from their phases, for the `deadlines` detail of
/// the ERP support facts: `B2B e-invoicing, receive: from 2025-01-01 (in force); …`.
#[salsa::tracked(returns(ref))]
pub fn e_invoicing_deadlines<'db>(db: &'db dyn salsa::Database, key: CountryKey<'db>) -> String {
    // The obligations explained by the country's e-invoicing fact (topic `e_invoicing`).
    let labels = &fact_labels(db).value;
    let obligations = obligation_rules(db);
    let e_invoicing: Vec<&ObligationRule> = obligations
        .iter()
        .filter(|o| {
            labels
                .iter()
                .any(|l| l.label == o.fact && l.topic == "e_invoicing")
        })
        .collect();
    country_phase_dates(db, key)
        .iter()
        .filter_map(|p| {
            let obligation = e_invoicing.iter().find(|o| o.id == p.obligation)?;
            let date = p.applies_from?;
            let phase = phase_words(db, key.code(db), &p.obligation, &p.phase)
                .map(|label| format!(", {label}"))
                .unwrap_or_default();
            Some(format!(
                "{}{phase}: from {date} ({})",
                obligation.label,
                p.status.describe()
            ))
        })
        .collect::<Vec<_>>()
        .join("; ")
}
