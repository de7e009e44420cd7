//! One answer per question: the checks that hold two tables to the same answer where both state one.
//! A fact's clause against the phases is in [`super::checks::check_fact_clauses`]; the rest is here:
//!
//! - a regime describes an obligation that exists: where every phase of it says `none`, only the
//!   `post-audit` model (invoicing without a mandate) may be recorded; where every phase is `unclear`
//!   (not settled), the regime must be unknown too;
//! - a matrix cell of an established support type ([`super::support`]) whose note says its own answer is
//!   a preview or unconfirmed (rules/vocabulary.toml `hedges`) claims more than its note;
//! - an "ERP localization" fact may not be unknown where the matrix establishes that ERP's e-invoicing in
//!   the same country: the vendor page that settles the cell was read, so the fact says what it says.
//!
//! - every phase but a `main` one has a reader label in `rules/phases.toml`, and every label names a
//!   phase: no slug reaches a page, a feed, a calendar or the API's labels.
//!
//! Each is a located error: the build publishes nothing until the curator makes the two places agree.

use std::collections::BTreeMap;

use crate::diagnostics::Diagnostic;
use crate::model::support::established;
use crate::parse::rules::{PHASES, fact_labels, phase_labels, vocabulary};
use crate::parse::tables::{
    PhaseStatus, RunKey, country_fact_keys, country_fact_rows_of, matrix_rows, obligation_rows,
    regime_rows,
};

/// The model that describes invoicing where there is no mandate.
const NO_MANDATE_MODEL: &str = "post-audit";

/// The fact value with which an ERP-localization fact says it is not known.
const UNKNOWN_FACT: &str = "unknown";

#[salsa::tracked(returns(ref))]
pub(crate) fn check_agreement(db: &dyn salsa::Database) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    regimes_of_obligations(db, &mut diagnostics);
    hedged_cells(db, &mut diagnostics);
    localization_facts(db, &mut diagnostics);
    phase_labels_cover_phases(db, &mut diagnostics);
    diagnostics
}

/// A phase without a reader label, or a label of no phase.
fn phase_labels_cover_phases(db: &dyn salsa::Database, diagnostics: &mut Vec<Diagnostic>) {
    let labels = &phase_labels(db).value;
    let phases = &obligation_rows(db).value;
    for r in phases {
        let id = r.row.id();
        if r.row.phase != "main" && !labels.iter().any(|l| l.id == id) {
            diagnostics.push(r.pos.error(
                "phase",
                format!(
                    "the phase `{id}` has no reader label: add `\"{id}\" = \"…\"` (who it covers, in \
                     words) under `[labels]` of {PHASES}"
                ),
            ));
        }
    }
    for label in labels {
        if !phases
            .iter()
            .any(|r| r.row.id() == label.id && r.row.phase != "main")
        {
            diagnostics.push(label.at.error(
                PHASES,
                format!(
                    "`{}` is no phase of tables/obligations.csv (a phase named `main` needs no label)",
                    label.id
                ),
            ));
        }
    }
}

/// A regime of an obligation that does not exist, or whose existence is not settled.
fn regimes_of_obligations(db: &dyn salsa::Database, diagnostics: &mut Vec<Diagnostic>) {
    let mut statuses: BTreeMap<(&str, &str), Vec<PhaseStatus>> = BTreeMap::new();
    for r in &obligation_rows(db).value {
        statuses
            .entry((r.row.country.as_str(), r.row.obligation.as_str()))
            .or_default()
            .push(r.row.status);
    }
    for r in &regime_rows(db).value {
        let row = &r.row;
        if row.is_unknown() {
            continue;
        }
        // A regime of an obligation with no phase has its own error (check_regimes).
        let Some(phases) = statuses.get(&(row.country.as_str(), row.obligation.as_str())) else {
            continue;
        };
        if phases.iter().all(|s| *s == PhaseStatus::None) {
            if let Some(model) = row.model.as_deref().filter(|m| *m != NO_MANDATE_MODEL) {
                diagnostics.push(r.pos.error(
                    "model",
                    format!(
                        "the model `{model}` describes a mandate, but tables/obligations.csv says {} \
                         has no `{}` obligation (status `none`): only `{NO_MANDATE_MODEL}` (or unknown) \
                         describes invoicing without one",
                        row.country, row.obligation
                    ),
                ));
            }
        } else if phases.iter().all(|s| *s == PhaseStatus::Unclear) {
            diagnostics.push(r.pos.error(
                "model",
                format!(
                    "tables/obligations.csv has not settled whether {} has a `{}` obligation (every \
                     phase `unclear`): a regime of it cannot be settled either; leave its answers empty \
                     and say in `notes` what was looked at",
                    row.country, row.obligation
                ),
            ));
        }
    }
}

/// An established matrix cell whose note says its answer is a preview or unconfirmed.
fn hedged_cells(db: &dyn salsa::Database, diagnostics: &mut Vec<Diagnostic>) {
    let hedges = &vocabulary(db).value.hedges;
    for r in &matrix_rows(db).value {
        let row = &r.row;
        if !crate::model::support::support_established(&row.support_type) {
            continue;
        }
        let notes = row.notes.to_lowercase();
        if let Some(hedge) = hedges.iter().find(|h| notes.contains(&h.to_lowercase())) {
            diagnostics.push(r.pos.error(
                "support_type",
                format!(
                    "`{}` is an established support type, but the note says \"{hedge}\": a preview is \
                     `roadmap` and an unconfirmed scope `unknown/unverified` (rules/vocabulary.toml \
                     `hedges`)",
                    row.support_type
                ),
            ));
        }
    }
}

/// An unknown ERP-localization fact where the matrix establishes the same ERP in the same country.
fn localization_facts(db: &dyn salsa::Database, diagnostics: &mut Vec<Diagnostic>) {
    let labels = &fact_labels(db).value;
    let cells: BTreeMap<(&str, &str), &crate::parse::tables::Located<_>> = matrix_rows(db)
        .value
        .iter()
        .filter(|r| established(&r.row.support_type, r.row.verification))
        .map(|r| ((r.row.country.as_str(), r.row.erp.as_str()), r))
        .collect();
    for key in country_fact_keys(db) {
        for fact in &country_fact_rows_of(db, RunKey::new(db, key.clone())).value {
            let Some(erp) = labels
                .iter()
                .find(|l| l.label == fact.row.fact)
                .and_then(|l| l.erp.as_deref())
            else {
                continue;
            };
            if !fact
                .row
                .value
                .trim_start()
                .to_lowercase()
                .starts_with(UNKNOWN_FACT)
            {
                continue;
            }
            if let Some(cell) = cells.get(&(fact.row.country.as_str(), erp)) {
                diagnostics.push(fact.pos.error(
                    "value",
                    format!(
                        "unknown, but tables/matrix.csv line {} establishes {erp}'s e-invoicing in {} \
                         (`{}`, {}): the vendor page read for that cell says something of the \
                         localization; record it, or what the page leaves open",
                        cell.pos.line,
                        fact.row.country,
                        cell.row.support_type,
                        cell.row.verification.as_str()
                    ),
                ));
            }
        }
    }
}
