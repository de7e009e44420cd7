//! Toggles: derived from the dated phases of `sources/tables/obligations.csv` by the rules of
//! `rules/toggles.toml`, against the reference date of `rules/site.toml`.
//!
//! Each toggle reads the phases of one obligation. Its rules are tried in order; the first rule that a
//! phase meets (phases in order: by obligation, then by date) sets the toggle, and the first such phase
//! that applies generally is the reason (or, when all are limited to a sector or a group, the last). A toggle no rule sets is null, and says why: no phase recorded, a phase marked unclear, or a
//! date too coarse to compare with the reference date. A toggle is never guessed.

use jiff::civil::Date;

use crate::api_types::{ToggleCoverage, Toggles};
use crate::model::dates::{meets, reference_day};
use crate::model::{CountryKey, country_obligations};
use crate::parse::rules::{ObligationRule, PhaseCondition, obligation_rules, toggle_rules};
use crate::parse::tables::{Basis, Coverage, ObligationRow, PhaseStatus};

/// How one toggle of one country got its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToggleExplanation {
    /// The toggle's name (`e_invoicing_mandatory_b2b`).
    pub name: &'static str,
    pub value: Option<bool>,
    /// The obligation the toggle reads (`b2b-e-invoicing`).
    pub obligation: String,
    /// The rule that set it: its number in the toggle's `rules` (1-based) and the condition the phase met.
    pub rule: Option<(usize, PhaseCondition)>,
    /// The phase that met it.
    pub phase: Option<ObligationRow>,
    /// Why the toggle is null, when it is.
    pub why_null: Option<String>,
}

/// The toggles of a country and how each got its value, in the toggles' published order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct ToggleOutcome {
    pub toggles: Toggles,
    pub explanations: Vec<ToggleExplanation>,
}

/// Why a toggle that no rule set is null, from the phases of its obligation. `on` says the day it is
/// judged on, in words (`the reference date 2026-10-16`).
fn why_null(
    obligation: Option<&ObligationRule>,
    phases: &[&ObligationRow],
    reference: Date,
    on: &str,
) -> String {
    let label = obligation.map_or("its obligation", |o| o.label.as_str());
    if phases.is_empty() {
        return format!("No phase of {label} is recorded for this country.");
    }
    if let Some(unclear) = phases.iter().find(|p| p.status == PhaseStatus::Unclear) {
        let notes = unclear.notes.trim();
        return if notes.is_empty() {
            format!("{label}: unclear.")
        } else {
            format!("{label}: unclear. {notes}")
        };
    }
    if let Some(coarse) = phases.iter().find(|p| {
        p.status == PhaseStatus::Enacted
            && !meets(p, PhaseCondition::Applies, reference)
            && !meets(p, PhaseCondition::AppliesLater, reference)
    }) {
        let date = coarse
            .applies_from
            .map(|d| d.to_string())
            .unwrap_or_default();
        return format!(
            "{label} applies from {date}, which does not say whether it applies on {on}."
        );
    }
    format!("No rule of this toggle matches the recorded phases of {label}.")
}

/// The toggles of a country on the reference date, and how each got its value.
#[salsa::tracked(returns(ref))]
pub fn country_toggles<'db>(db: &'db dyn salsa::Database, key: CountryKey<'db>) -> ToggleOutcome {
    let reference = reference_day(db).unwrap_or_default();
    toggles_on(
        db,
        key,
        reference,
        &format!("the reference date {reference}"),
    )
}

/// The toggles of a country judged on any day, by the same rules and phases as on the reference date
/// (what `country_toggles` publishes is this function on that date). `on` names the day in the reason
/// of a null.
pub(crate) fn toggles_on(
    db: &dyn salsa::Database,
    key: CountryKey<'_>,
    reference: Date,
    on: &str,
) -> ToggleOutcome {
    let phases = country_obligations(db, key);
    let obligations = obligation_rules(db);
    let rules = &toggle_rules(db).value;
    let mut outcome = ToggleOutcome::default();
    for name in Toggles::NAMES {
        let Some(toggle) = rules.iter().find(|t| t.name == name) else {
            // A toggle without rules is reported by the rule checks.
            continue;
        };
        let own: Vec<&ObligationRow> = phases
            .iter()
            .filter(|p| p.obligation == toggle.obligation)
            .map(|p| &**p)
            .collect();
        // The first rule some phase meets sets the toggle. Its reason is the first such phase that applies
        // generally; when every such phase is limited to a sector or a group, the last one (a rollout's
        // latest reach), so a "yes" never shows a narrower limit than what applies.
        let found = toggle.rules.iter().enumerate().find_map(|(i, rule)| {
            let meeting: Vec<(PhaseCondition, &ObligationRow)> = own
                .iter()
                .filter_map(|phase| {
                    rule.when
                        .iter()
                        .find(|c| meets(phase, **c, reference))
                        .map(|c| (*c, *phase))
                })
                .collect();
            let (condition, phase) = meeting
                .iter()
                .find(|(_, p)| p.coverage == Coverage::General)
                .or(meeting.last())?;
            Some((i + 1, *condition, rule.value, (*phase).clone()))
        });
        let explanation = match found {
            Some((n, condition, value, phase)) => {
                outcome.toggles.set(name, Some(value));
                ToggleExplanation {
                    name,
                    value: Some(value),
                    obligation: toggle.obligation.clone(),
                    rule: Some((n, condition)),
                    phase: Some(phase),
                    why_null: None,
                }
            }
            None => ToggleExplanation {
                name,
                value: None,
                obligation: toggle.obligation.clone(),
                rule: None,
                phase: None,
                why_null: Some(why_null(
                    obligations.iter().find(|o| o.id == toggle.obligation),
                    &own,
                    reference,
                    on,
                )),
            },
        };
        outcome.explanations.push(explanation);
    }
    outcome
}

/// Just the toggle values of a country: what lists and filters read, so a change of the phase that set a
/// toggle, with the same value, stops here.
#[salsa::tracked(returns(copy))]
pub fn country_toggle_values<'db>(db: &'db dyn salsa::Database, key: CountryKey<'db>) -> Toggles {
    country_toggles(db, key).toggles
}

/// What every page shows of one toggle beside its value: the limit of the phase that set a "yes" when it
/// applies only to a sector or a group, and whether a "no" rests on an absence check rather than on a
/// source that says so.
#[derive(Debug, Clone, PartialEq, Eq, Default, Hash)]
pub struct ToggleMark {
    pub value: Option<bool>,
    /// "electricity and natural-gas sectors only": set only on a yes.
    pub limit: Option<String>,
    /// A no whose phase rests on an absence check.
    pub absence: bool,
}

impl ToggleMark {
    pub(crate) fn of(explanation: &ToggleExplanation) -> ToggleMark {
        let phase = explanation.phase.as_ref();
        let limit = phase
            .filter(|p| explanation.value == Some(true) && p.coverage != Coverage::General)
            .map(|p| p.limit.clone());
        let absence = explanation.value == Some(false)
            && phase.is_some_and(|p| p.basis == Some(Basis::Absence));
        ToggleMark {
            value: explanation.value,
            limit,
            absence,
        }
    }
}

/// The toggles of a country as lists and the map show them (value, limit, absence), in the published
/// order: a change of a phase's text that leaves these alone stops here.
#[salsa::tracked(returns(ref))]
pub fn country_toggle_marks<'db>(
    db: &'db dyn salsa::Database,
    key: CountryKey<'db>,
) -> Vec<ToggleMark> {
    country_toggles(db, key)
        .explanations
        .iter()
        .map(ToggleMark::of)
        .collect()
}

/// For each toggle, how many countries have it true, false and null.
#[salsa::tracked(returns(ref))]
pub fn toggle_coverage(db: &dyn salsa::Database) -> ToggleCoverage {
    let mut coverage = ToggleCoverage::default();
    for country in crate::model::countries(db) {
        let key = CountryKey::new(db, country.code.clone());
        let toggles = country_toggle_values(db, key);
        for (name, value) in toggles.values() {
            let counts = match name {
                "e_invoicing_mandatory_b2b" => &mut coverage.e_invoicing_mandatory_b2b,
                "e_invoicing_b2b_in_force" => &mut coverage.e_invoicing_b2b_in_force,
                "e_invoicing_mandatory_b2g" => &mut coverage.e_invoicing_mandatory_b2g,
                "real_time_reporting" => &mut coverage.real_time_reporting,
                "saft_required" => &mut coverage.saft_required,
                _ => &mut coverage.audit_file_on_request,
            };
            match value {
                Some(true) => counts.true_ += 1,
                Some(false) => counts.false_ += 1,
                None => counts.null += 1,
            }
        }
    }
    coverage
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::parse::tables::{PartialDate, Verification};

    /// A phase of country `xx` with `status` and start `from`, every other field empty: the rows the
    /// date rules are tested with (here and in `on_date`).
    pub(in crate::derived) fn phase(status: PhaseStatus, from: Option<&str>) -> ObligationRow {
        ObligationRow {
            country: "xx".into(),
            obligation: "b2b-e-invoicing".into(),
            phase: "main".into(),
            status,
            applies_from: from.map(|d| PartialDate::parse(d).unwrap()),
            scope: String::new(),
            coverage: Default::default(),
            limit: String::new(),
            basis: None,
            source: Vec::new(),
            evidence: "unverified".into(),
            verification: Verification::Unverified,
            last_verified: None,
            notes: String::new(),
            quote: String::new(),
        }
    }

    #[test]
    fn a_phase_applies_when_all_of_its_date_is_on_or_before_the_reference_date() {
        let reference: Date = "2026-10-16".parse().unwrap();
        let applies =
            |status, from| meets(&phase(status, from), PhaseCondition::Applies, reference);
        let later = |status, from| {
            meets(
                &phase(status, from),
                PhaseCondition::AppliesLater,
                reference,
            )
        };
        assert!(applies(PhaseStatus::InForce, None));
        assert!(applies(PhaseStatus::Enacted, Some("2026-10-16")));
        assert!(applies(PhaseStatus::Enacted, Some("2026-09")));
        assert!(applies(PhaseStatus::Enacted, Some("2025")));
        assert!(!applies(PhaseStatus::Enacted, Some("2026-10-17")));
        // A month or a year that holds the reference date: neither applies nor applies later.
        assert!(!applies(PhaseStatus::Enacted, Some("2026-10")));
        assert!(!later(PhaseStatus::Enacted, Some("2026-10")));
        assert!(!applies(PhaseStatus::Enacted, Some("2026")));
        assert!(!later(PhaseStatus::Enacted, Some("2026")));
        assert!(later(PhaseStatus::Enacted, Some("2027")));
        assert!(!applies(PhaseStatus::Planned, Some("2020-01-01")));
        assert!(!applies(PhaseStatus::EnactedDatePending, None));
    }
}
