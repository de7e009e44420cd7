//! How each obligation works (`tables/regimes.csv`), as the API publishes it: each answer with its id and
//! its label from `rules/vocabulary.toml`, unknown answers `null`, the record's source, grade, evidence
//! and check date. The pages, the twins, the data files and the search index read the same records.

use crate::model::{CountryKey, base_url, country_info, country_regimes};
use crate::parse::rules::{Labels, obligation_rules, vocabulary};
use crate::resources::{Labelled, Regime};

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
