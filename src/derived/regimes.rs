//! How each obligation works (`tables/regimes.csv`), as the API publishes it: each answer with its id and
//! its label from `rules/vocabulary.toml`, unknown answers `null`, the record's source, grade, evidence
//! and check date. The pages, the twins, the data files and the search index read the same records.

use crate::api_types::{Labelled, Regime};
use crate::derived::obligations::{PhaseDate, country_phase_dates};
use crate::model::{CountryKey, base_url, country_info, country_regimes, reference_date};
use crate::parse::rules::{Labels, obligation_rules, vocabulary};
use crate::parse::tables::{PartialDate, PhaseStatus};

/// Where an obligation stands on the reference date, from its phases: what a regime of it says is
/// today's way of invoicing or a way still to come.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Standing {
    /// `InForce` when a phase applies on the reference date; else the status of the next phase to come
    /// (`Enacted` for a phase marked in force from a later date); else `None` when a source says there
    /// is no such obligation; else `Unclear`.
    pub status: PhaseStatus,
    /// The earliest date of the phases in force, or the date of the next phase; `None` without one.
    pub from: Option<PartialDate>,
}

impl Standing {
    /// Whether the regime describes how invoices are handled today: its obligation is in force, or a
    /// source says there is none (a post-audit country's way of invoicing is today's).
    pub(crate) fn current(self) -> bool {
        matches!(self.status, PhaseStatus::InForce | PhaseStatus::None)
    }

    /// How pages say it: "in force since 2019-01-01", "planned from 2028-11-01", "no such obligation".
    pub(crate) fn words(self) -> String {
        let date = self.from.map(|d| d.to_string());
        match (self.status, date) {
            (PhaseStatus::InForce, Some(d)) => format!("in force since {d}"),
            (PhaseStatus::Enacted | PhaseStatus::Planned, Some(d)) => {
                format!("{} from {d}", self.status.describe())
            }
            (status, _) => status.describe().to_string(),
        }
    }
}

/// Where `obligation` stands in a country on the reference date (see [`Standing`]): what its regime
/// record, in the API and in `data/regimes.*`, says beside it.
pub(crate) fn obligation_standing(
    db: &dyn salsa::Database,
    key: CountryKey<'_>,
    obligation: &str,
) -> Standing {
    standing(
        country_phase_dates(db, key),
        obligation,
        reference_date(db).parse().ok(),
    )
}

/// See [`Standing`].
fn standing(
    phases: &[PhaseDate],
    obligation: &str,
    reference: Option<jiff::civil::Date>,
) -> Standing {
    let of: Vec<&PhaseDate> = phases
        .iter()
        .filter(|p| p.obligation == obligation)
        .collect();
    let begun = |p: &PhaseDate| match (p.applies_from.and_then(|d| d.first_day()), reference) {
        (Some(first), Some(reference)) => first <= reference,
        _ => true,
    };
    if let Some(p) = of
        .iter()
        .filter(|p| p.status == PhaseStatus::InForce && begun(p))
        .min_by_key(|p| p.applies_from)
    {
        return Standing {
            status: PhaseStatus::InForce,
            from: p.applies_from,
        };
    }
    let coming = of
        .iter()
        .filter(|p| {
            matches!(
                p.status,
                PhaseStatus::InForce
                    | PhaseStatus::Enacted
                    | PhaseStatus::EnactedDatePending
                    | PhaseStatus::Planned
            )
        })
        .min_by_key(|p| (p.applies_from.is_none(), p.applies_from));
    if let Some(p) = coming {
        return Standing {
            status: if p.status == PhaseStatus::InForce {
                PhaseStatus::Enacted
            } else {
                p.status
            },
            from: p.applies_from,
        };
    }
    Standing {
        status: if of.iter().any(|p| p.status == PhaseStatus::None) {
            PhaseStatus::None
        } else {
            PhaseStatus::Unclear
        },
        from: None,
    }
}

/// The value `id` of `labels` with its label (the id itself where the set lacks it: the checks report
/// that, and a build with errors publishes nothing).
fn labelled(labels: &Labels, id: &str) -> Labelled {
    Labelled {
        id: id.to_string(),
        label: labels
            .get(id)
            .map_or_else(|| id.to_string(), |l| l.label.clone()),
    }
}

/// One country's regime records, in the order of its obligations.
#[salsa::tracked(returns(ref))]
pub fn country_regime_records<'db>(
    db: &'db dyn salsa::Database,
    key: CountryKey<'db>,
) -> Vec<Regime> {
    let Some(country) = country_info(db, key) else {
        return Vec::new();
    };
    let vocabulary = &vocabulary(db).value;
    let obligations = obligation_rules(db);
    let base = base_url(db);
    country_regimes(db, key)
        .iter()
        .map(|r| {
            let standing = obligation_standing(db, key, &r.obligation);
            let one =
                |labels: &Labels, id: &Option<String>| id.as_deref().map(|id| labelled(labels, id));
            let list = |labels: &Labels, ids: &Option<Vec<String>>| {
                ids.as_ref()
                    .map(|ids| ids.iter().map(|id| labelled(labels, id)).collect())
            };
            Regime {
                id: r.id(),
                country: country.code.clone(),
                country_name: country.name.clone(),
                obligation: r.obligation.clone(),
                obligation_label: obligations
                    .iter()
                    .find(|o| o.id == r.obligation)
                    .map_or_else(|| r.obligation.clone(), |o| o.label.clone()),
                obligation_status: standing.status.as_str().to_string(),
                obligation_from: standing.from.map(|d| d.to_string()),
                obligation_standing: standing.words(),
                current: standing.current(),
                model: one(&vocabulary.einvoicing_models, &r.model),
                formats: list(&vocabulary.einvoicing_formats, &r.formats),
                platforms: list(&vocabulary.einvoicing_platforms, &r.platforms),
                signature: one(&vocabulary.signature_answers, &r.signature),
                archive_years: r.archive_years,
                archive_location: one(&vocabulary.archive_locations, &r.archive_location),
                unknown: r.is_unknown(),
                source_urls: r.source.clone(),
                evidence: r.evidence.clone(),
                verification: r.verification,
                last_checked: r.last_verified.clone(),
                notes: r.notes.clone(),
                quote: Some(r.quote.clone()).filter(|q| !q.is_empty()),
                url: format!("{base}/{}/#regime-{}", country.code, r.id()),
            }
        })
        .collect()
}
