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
//! - a date at which `tables/mandates.csv` says the mandate starts ("from 2027-01-01", "since 2014") is
//!   the start of one of the country's phases (the same day, or a month or year that holds it), or is
//!   written in one of its phases' scope (a sub-scope's date the phase describes): the mandate row
//!   and the phases tell one timeline. A date whose clause says it is not an obligation's start (a
//!   pilot, a voluntary start, a tolerance: rules/vocabulary.toml `not_a_start`) is not held;
//! - likewise a start date a phase's own scope states is its `applies_from` (or holds it, or is held by
//!   it), or the start of another phase of its country: the scope never tells a date the date column
//!   lacks;
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
    PartialDate, PhaseStatus, RunKey, country_fact_keys, country_fact_rows_of, mandate_rows,
    matrix_rows, obligation_rows, regime_rows,
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
    mandate_dates(db, &mut diagnostics);
    phase_scope_dates(db, &mut diagnostics);
    diagnostics
}

/// The columns of a mandate row that state its timeline.
const MANDATE_DATED_COLUMNS: [&str; 3] = ["mandate", "scope", "deadlines"];

/// The start dates a text states: each `from` or `since` followed by `YYYY`, `YYYY-MM` or
/// `YYYY-MM-DD`, with the words of its clause before it (from the last `;` or the start), lowercased.
fn stated_starts(text: &str) -> Vec<(PartialDate, String)> {
    let mut out = Vec::new();
    let lower = text.to_lowercase();
    for word in ["from ", "since "] {
        let mut at = 0;
        while let Some(found) = lower[at..].find(word) {
            let start = at + found;
            at = start + word.len();
            // A whole word: "from" in "therefrom" is not one.
            if lower[..start]
                .chars()
                .next_back()
                .is_some_and(char::is_alphanumeric)
            {
                continue;
            }
            let rest = &lower[at..];
            let end = rest
                .find(|c: char| !(c.is_ascii_digit() || c == '-'))
                .unwrap_or(rest.len());
            let token = rest[..end].trim_end_matches('-');
            let Some(date) = PartialDate::parse(token) else {
                continue;
            };
            let clause_start = lower[..start].rfind(';').map_or(0, |i| i + 1);
            out.push((date, lower[clause_start..start].to_string()));
        }
    }
    out
}

/// Whether two dates name overlapping spans where one holds the other (2027 holds 2027-01-01).
fn one_holds_the_other(a: PartialDate, b: PartialDate) -> bool {
    let holds = |outer: PartialDate, inner: PartialDate| {
        outer.year == inner.year
            && (outer.month.is_none() || outer.month == inner.month)
            && (outer.day.is_none() || outer.day == inner.day)
    };
    holds(a, b) || holds(b, a)
}

/// A start date of the mandate row that no phase of its country starts at or describes.
fn mandate_dates(db: &dyn salsa::Database, diagnostics: &mut Vec<Diagnostic>) {
    let not_a_start = &vocabulary(db).value.not_a_start;
    let phases = &obligation_rows(db).value;
    for r in &mandate_rows(db).value {
        let row = &r.row;
        let own: Vec<&crate::parse::tables::ObligationRow> = phases
            .iter()
            .map(|p| &*p.row)
            .filter(|p| p.country == row.country)
            .collect();
        for (column, text) in
            MANDATE_DATED_COLUMNS
                .iter()
                .zip([&row.mandate, &row.scope, &row.deadlines])
        {
            for (date, clause) in stated_starts(text) {
                if not_a_start
                    .iter()
                    .any(|w| clause.contains(&w.to_lowercase()))
                {
                    continue;
                }
                let starts = own
                    .iter()
                    .any(|p| p.applies_from.is_some_and(|d| one_holds_the_other(d, date)));
                let said = date.to_string();
                let written = own.iter().any(|p| {
                    p.scope
                        .split(|c: char| !(c.is_ascii_digit() || c == '-'))
                        .any(|t| t.trim_matches('-') == said)
                });
                if starts || written {
                    continue;
                }
                let dated: Vec<String> = own
                    .iter()
                    .filter_map(|p| Some(format!("{} {}", p.id(), p.applies_from?)))
                    .collect();
                diagnostics.push(r.pos.error(
                    column,
                    format!(
                        "the mandate row says it starts {date}, but no phase of `{}` in \
                         tables/obligations.csv starts then or says that date in its scope ({}): make \
                         the two tell one timeline, or say in the clause that the date starts no \
                         obligation (rules/vocabulary.toml `not_a_start`)",
                        row.country,
                        if dated.is_empty() {
                            "none of its phases is dated".to_string()
                        } else {
                            format!("its dated phases: {}", dated.join(", "))
                        }
                    ),
                ));
            }
        }
    }
}

/// A start date a phase's scope states ("since 2022-07-01") that neither its own `applies_from` nor any
/// phase of its country starts at: the scope and the date column tell one timeline, as a mandate row and
/// the phases do ([`mandate_dates`]).
fn phase_scope_dates(db: &dyn salsa::Database, diagnostics: &mut Vec<Diagnostic>) {
    let not_a_start = &vocabulary(db).value.not_a_start;
    let phases = &obligation_rows(db).value;
    for r in phases {
        let row = &*r.row;
        for (date, clause) in stated_starts(&row.scope) {
            if not_a_start
                .iter()
                .any(|w| clause.contains(&w.to_lowercase()))
            {
                continue;
            }
            let started = |p: &crate::parse::tables::ObligationRow| {
                p.applies_from.is_some_and(|d| one_holds_the_other(d, date))
            };
            if started(row)
                || phases
                    .iter()
                    .any(|p| p.row.country == row.country && started(&p.row))
            {
                continue;
            }
            let own = match row.applies_from {
                Some(d) => format!("its `applies_from` is {d}"),
                None => "its `applies_from` is empty".to_string(),
            };
            diagnostics.push(r.pos.error(
                "scope",
                format!(
                    "the scope of `{}` says it starts {date}, but {own} and no phase of `{}` starts \
                     then: put the date the source gives in `applies_from`, or move a date that starts \
                     no obligation of this phase to `notes` (or say so in its clause: \
                     rules/vocabulary.toml `not_a_start`)",
                    row.id(),
                    row.country
                ),
            ));
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_start_is_a_from_or_since_date_with_its_clause() {
        let said = |text: &str| -> Vec<(String, String)> {
            stated_starts(text)
                .into_iter()
                .map(|(d, clause)| (d.to_string(), clause))
                .collect()
        };
        assert_eq!(
            said("B2G since 2019-07-01; pilot from 2026-07; general from 2027 (law)"),
            [
                ("2026-07".to_string(), " pilot ".to_string()),
                ("2027".to_string(), " general ".to_string()),
                ("2019-07-01".to_string(), "b2g ".to_string()),
            ]
        );
        // Not a date, not a whole word, or a day that does not exist: no start.
        assert!(said("from April 2029; therefrom 2027; from 2027-02-30").is_empty());
        assert!(one_holds_the_other(
            PartialDate::parse("2027").unwrap(),
            PartialDate::parse("2027-01-01").unwrap()
        ));
        assert!(!one_holds_the_other(
            PartialDate::parse("2027-02").unwrap(),
            PartialDate::parse("2027-01-01").unwrap()
        ));
    }
}
