//! The obligation date rules: when a phase applies on the reference date. The source checks (a fact's
//! claim against its obligation's phases) and the toggles both read these, so they can never disagree.

use jiff::civil::Date;

use crate::parse::rules::PhaseCondition;
use crate::parse::tables::{ObligationRow, PhaseStatus};

/// Whether a phase meets a condition on the reference date.
pub fn meets(phase: &ObligationRow, condition: PhaseCondition, reference: Date) -> bool {
    let first = phase.applies_from.and_then(|d| d.first_day());
    let last = phase.applies_from.and_then(|d| d.last_day());
    match condition {
        PhaseCondition::Applies => match phase.status {
            PhaseStatus::InForce => true,
            // A month or a year applies on the reference date only when all of it is on or before it.
            PhaseStatus::Enacted => last.is_some_and(|last| last <= reference),
            _ => false,
        },
        PhaseCondition::AppliesLater => {
            phase.status == PhaseStatus::Enacted && first.is_some_and(|first| first > reference)
        }
        PhaseCondition::InForce => phase.status == PhaseStatus::InForce,
        PhaseCondition::Enacted => phase.status == PhaseStatus::Enacted,
        PhaseCondition::EnactedDatePending => phase.status == PhaseStatus::EnactedDatePending,
        PhaseCondition::Planned => phase.status == PhaseStatus::Planned,
        PhaseCondition::None => phase.status == PhaseStatus::None,
    }
}

/// The reference date as a date, or `None` when `rules/site.toml` gives none (its own error says why).
pub(crate) fn reference_day(db: &dyn salsa::Database) -> Option<Date> {
    super::reference_date(db).parse().ok()
}
