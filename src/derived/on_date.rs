//! What applies on any day from the reference date on: every toggle and the state of every obligation
//! phase, judged by the same date rule (`model::dates::meets`) and the same toggle rules as the toggles of
//! the reference date, so the answer on the reference date is the published one.
//!
//! A coarse date stands for its whole span: a phase enacted "from 2028" is not yet in force before
//! 2028-01-01, unknown from then (the month is not known), and in force once all of 2028 is on or before
//! the day (2028-12-31). The answers change only on the first and last days of enacted phases' dates, so
//! the days those fall on ([`change_days`]) split the future into spans of one answer each: the answer on
//! any day is the one of the latest such day on or before it.

use jiff::ToSpan;
use jiff::civil::Date;

use super::obligations::phase_words;
use super::toggles::toggles_on;
use crate::api_types::{CountryOnDate, PhaseOnDate, PhaseState, ToggleOnDate};
use crate::model::dates::{meets, reference_day};
use crate::model::{CountryKey, countries, country_info, country_obligations};
use crate::parse::rules::{PhaseCondition, obligation_rules, toggle_rules};
use crate::parse::tables::{ObligationRow, PhaseStatus};

/// How many quarters after the reference date the API answers for (three years).
pub const QUARTERS: usize = 12;

/// The state of a phase on a day, and that state in words with its date as precise as it is known.
pub fn phase_state(phase: &ObligationRow, day: Date) -> (PhaseState, String) {
    let from = phase.applies_from;
    match phase.status {
        PhaseStatus::InForce => (
            PhaseState::InForce,
            match from {
                Some(date) => format!("in force, from {date}"),
                None => "in force".into(),
            },
        ),
        PhaseStatus::Enacted => match from {
            None => (
                PhaseState::Unknown,
                "unknown: enacted, no date recorded".into(),
            ),
            Some(date) if meets(phase, PhaseCondition::Applies, day) => {
                (PhaseState::InForce, format!("in force, from {date}"))
            }
            Some(date) if meets(phase, PhaseCondition::AppliesLater, day) => {
                (PhaseState::NotYet, format!("not yet: from {date}"))
            }
            // A month or a year that holds the day.
            Some(date) => (
                PhaseState::Unknown,
                match date.precision() {
                    "year" => format!("unknown: from {date}, month not known"),
                    _ => format!("unknown: from {date}, day not known"),
                },
            ),
        },
        PhaseStatus::EnactedDatePending => (
            PhaseState::Unknown,
            "unknown: enacted, start date pending".into(),
        ),
        PhaseStatus::Planned => (
            PhaseState::Planned,
            match from {
                Some(date) => format!("planned from {date}, not enacted"),
                None => "planned, not enacted".into(),
            },
        ),
        PhaseStatus::None => (PhaseState::None, "no such obligation".into()),
        PhaseStatus::Unclear => (PhaseState::Unknown, "unknown: unclear".into()),
    }
}

/// One country's toggles and phases on a day.
pub fn country_on(db: &dyn salsa::Database, key: CountryKey<'_>, day: Date) -> CountryOnDate {
    let code = key.code(db).clone();
    let name = country_info(db, key)
        .as_ref()
        .map(|c| c.name.clone())
        .unwrap_or_default();
    let outcome = toggles_on(db, key, day, &day.to_string());
    let obligations = obligation_rules(db);
    let phases = country_obligations(db, key)
        .iter()
        .map(|p| {
            let (state, words) = phase_state(p, day);
            PhaseOnDate {
                id: p.id(),
                obligation: p.obligation.clone(),
                obligation_label: obligations
                    .iter()
                    .find(|o| o.id == p.obligation)
                    .map_or_else(|| p.obligation.clone(), |o| o.label.clone()),
                phase_label: phase_words(db, &p.country, &p.obligation, &p.phase),
                status: p.status.as_str().to_string(),
                applies_from: p.applies_from.map(|d| d.to_string()),
                state,
                words,
            }
        })
        .collect();
    CountryOnDate {
        code,
        name,
        toggles: outcome.toggles,
        reasons: outcome
            .explanations
            .iter()
            .map(|e| ToggleOnDate {
                toggle: e.name.to_string(),
                value: e.value,
                phase_id: e.phase.as_ref().map(ObligationRow::id),
                why_null: e.why_null.clone(),
            })
            .collect(),
        phases,
    }
}

/// The days after the reference date on which one of a country's answers changes: the first and the last
/// day of each enacted phase's date, in order.
#[salsa::tracked(returns(ref))]
pub fn change_days<'db>(db: &'db dyn salsa::Database, key: CountryKey<'db>) -> Vec<Date> {
    let reference = reference_day(db).unwrap_or_default();
    let mut days: Vec<Date> = country_obligations(db, key)
        .iter()
        .filter(|p| p.status == PhaseStatus::Enacted)
        .filter_map(|p| p.applies_from)
        .flat_map(|d| [d.first_day(), d.last_day()])
        .flatten()
        .filter(|d| *d > reference)
        .collect();
    days.sort();
    days.dedup();
    days
}

/// The first day of each of the [`QUARTERS`] quarters that start after `reference`.
pub fn quarter_starts(reference: Date) -> Vec<Date> {
    let mut year = reference.year();
    let mut month = (reference.month() - 1) / 3 * 3 + 1;
    let mut out = Vec::with_capacity(QUARTERS);
    while out.len() < QUARTERS {
        month += 3;
        if month > 12 {
            month -= 12;
            year += 1;
        }
        if let Ok(day) = Date::new(year, month, 1) {
            out.push(day);
        }
    }
    out
}

/// A day the API answers for, and why it is listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OfferedDay {
    pub day: Date,
    pub reference: bool,
    pub quarter_start: bool,
    pub changes: bool,
}

/// The days the API answers for, in order: the reference date, each quarter's first day for three years,
/// and every day on which some country's answer changes.
#[salsa::tracked(returns(ref))]
pub fn offered_days(db: &dyn salsa::Database) -> Vec<OfferedDay> {
    let reference = reference_day(db).unwrap_or_default();
    let quarters = quarter_starts(reference);
    let changing: std::collections::BTreeSet<Date> = countries(db)
        .iter()
        .flat_map(|c| change_days(db, CountryKey::new(db, c.code.clone())).clone())
        .collect();
    let mut days: std::collections::BTreeSet<Date> = changing.clone();
    days.insert(reference);
    days.extend(quarters.iter().copied());
    days.into_iter()
        .map(|day| OfferedDay {
            day,
            reference: day == reference,
            quarter_start: quarters.contains(&day),
            changes: changing.contains(&day),
        })
        .collect()
}

/// The latest day, on or before `day`, on which some answer changed: the answers of `day` hold from it
/// (the reference date when none changed).
pub fn same_since(db: &dyn salsa::Database, day: Date) -> Date {
    let reference = reference_day(db).unwrap_or_default();
    offered_days(db)
        .iter()
        .filter(|o| o.changes && o.day <= day)
        .map(|o| o.day)
        .next_back()
        .unwrap_or(reference)
}

/// One row of "Next changes": a day, a country, and what changes on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NextChange {
    pub day: Date,
    pub code: String,
    pub name: String,
    /// Each phase whose state changes, with its new state in words, then each toggle whose value
    /// changes (`B2B mandate in force: no → yes`).
    pub what: Vec<String>,
    /// The id of the first phase that changes, the anchor of its row on the country page.
    pub phase_id: String,
}

/// Every day after the reference date on which a country's answer changes, in date order (then by
/// country): what the comparison page shows to readers without scripts.
#[salsa::tracked(returns(ref))]
pub fn next_changes(db: &dyn salsa::Database) -> Vec<NextChange> {
    let mut rows: Vec<NextChange> = countries(db)
        .iter()
        .flat_map(|c| country_next_changes(db, CountryKey::new(db, c.code.clone())).clone())
        .collect();
    rows.sort_by(|a, b| (a.day, &a.name).cmp(&(b.day, &b.name)));
    rows
}

/// Every day after the reference date on which one country's answer changes, in date order: what its
/// page shows to readers without scripts.
#[salsa::tracked(returns(ref))]
pub fn country_next_changes<'db>(
    db: &'db dyn salsa::Database,
    key: CountryKey<'db>,
) -> Vec<NextChange> {
    let labels = &toggle_rules(db).value;
    let word = |v: Option<bool>| match v {
        Some(true) => "yes",
        Some(false) => "no",
        None => "unknown",
    };
    let Some(country) = country_info(db, key) else {
        return Vec::new();
    };
    let mut rows = Vec::new();
    {
        for day in change_days(db, key) {
            let before = country_on(db, key, day.checked_sub(1.day()).unwrap_or(*day));
            let after = country_on(db, key, *day);
            let mut what = Vec::new();
            let mut first = None;
            for (old, new) in before.phases.iter().zip(&after.phases) {
                if old.state != new.state {
                    first.get_or_insert_with(|| new.id.clone());
                    let label = match &new.phase_label {
                        Some(phase) => format!("{}, {phase}", new.obligation_label),
                        None => new.obligation_label.clone(),
                    };
                    what.push(format!("{label}: {}", new.words));
                }
            }
            for (old, new) in before.reasons.iter().zip(&after.reasons) {
                if old.value != new.value {
                    let label = labels
                        .iter()
                        .find(|t| t.name == new.toggle)
                        .and_then(|t| t.label.clone())
                        .unwrap_or_else(|| new.toggle.replace('_', " "));
                    what.push(format!(
                        "{label}: {} → {}",
                        word(old.value),
                        word(new.value)
                    ));
                }
            }
            rows.push(NextChange {
                day: *day,
                code: country.code.clone(),
                name: country.name.clone(),
                what,
                phase_id: first.unwrap_or_default(),
            });
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::derived::toggles::tests::phase;

    fn on(status: PhaseStatus, from: Option<&str>, day: &str) -> (PhaseState, String) {
        phase_state(&phase(status, from), day.parse().unwrap())
    }

    #[test]
    fn a_year_is_unknown_through_the_year_and_in_force_once_all_of_it_has_passed() {
        let e = PhaseStatus::Enacted;
        assert_eq!(on(e, Some("2028"), "2027-12-31").0, PhaseState::NotYet);
        assert_eq!(
            on(e, Some("2028"), "2028-01-01"),
            (
                PhaseState::Unknown,
                "unknown: from 2028, month not known".into()
            )
        );
        assert_eq!(on(e, Some("2028"), "2028-07-15").0, PhaseState::Unknown);
        assert_eq!(on(e, Some("2028"), "2028-12-30").0, PhaseState::Unknown);
        // Whatever day of 2028 it starts on, it has started by the last one.
        assert_eq!(on(e, Some("2028"), "2028-12-31").0, PhaseState::InForce);
        assert_eq!(
            on(e, Some("2028"), "2029-01-01"),
            (PhaseState::InForce, "in force, from 2028".into())
        );
    }

    #[test]
    fn a_month_is_unknown_through_the_month() {
        let e = PhaseStatus::Enacted;
        assert_eq!(
            on(e, Some("2028-11"), "2028-10-31"),
            (PhaseState::NotYet, "not yet: from 2028-11".into())
        );
        assert_eq!(
            on(e, Some("2028-11"), "2028-11-01"),
            (
                PhaseState::Unknown,
                "unknown: from 2028-11, day not known".into()
            )
        );
        assert_eq!(on(e, Some("2028-11"), "2028-11-29").0, PhaseState::Unknown);
        assert_eq!(on(e, Some("2028-11"), "2028-11-30").0, PhaseState::InForce);
        // February's last day in a leap year.
        assert_eq!(on(e, Some("2028-02"), "2028-02-28").0, PhaseState::Unknown);
        assert_eq!(on(e, Some("2028-02"), "2028-02-29").0, PhaseState::InForce);
    }

    #[test]
    fn a_day_applies_from_that_day() {
        let e = PhaseStatus::Enacted;
        assert_eq!(
            on(e, Some("2027-01-01"), "2026-12-31"),
            (PhaseState::NotYet, "not yet: from 2027-01-01".into())
        );
        assert_eq!(
            on(e, Some("2027-01-01"), "2027-01-01"),
            (PhaseState::InForce, "in force, from 2027-01-01".into())
        );
    }

    #[test]
    fn an_empty_date_stays_as_its_status_says() {
        assert_eq!(
            on(PhaseStatus::Enacted, None, "2030-01-01").0,
            PhaseState::Unknown
        );
        assert_eq!(
            on(PhaseStatus::EnactedDatePending, None, "2030-01-01"),
            (
                PhaseState::Unknown,
                "unknown: enacted, start date pending".into()
            )
        );
        assert_eq!(
            on(PhaseStatus::InForce, None, "2030-01-01"),
            (PhaseState::InForce, "in force".into())
        );
        assert_eq!(
            on(PhaseStatus::Unclear, None, "2030-01-01").0,
            PhaseState::Unknown
        );
        assert_eq!(
            on(PhaseStatus::None, None, "2030-01-01").0,
            PhaseState::None
        );
        // Planned is not enacted, whatever its date: never "in force".
        assert_eq!(
            on(PhaseStatus::Planned, Some("2027-01-01"), "2030-01-01"),
            (
                PhaseState::Planned,
                "planned from 2027-01-01, not enacted".into()
            )
        );
    }

    #[test]
    fn the_quarters_start_after_the_reference_date() {
        let days = |r: &str| -> Vec<String> {
            quarter_starts(r.parse().unwrap())
                .iter()
                .map(|d| d.to_string())
                .collect()
        };
        let q = days("2026-10-16");
        assert_eq!(q.len(), QUARTERS);
        assert_eq!(q[0], "2027-01-01");
        assert_eq!(q[QUARTERS - 1], "2029-10-01");
        // A reference date on a quarter's first day is not listed again as one.
        assert_eq!(days("2027-01-01")[0], "2027-04-01");
        assert_eq!(days("2026-03-31")[0], "2026-04-01");
    }
}
