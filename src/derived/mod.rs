//! Derive: facts, toggles (from the dated obligations, by the rules of `rules/toggles.toml`), the
//! calendar, counts and filter membership, per country and per ERP. Everything here is a narrow query over [`crate::model`] projections.

pub mod answers;
pub mod facts;
pub mod filters;
pub mod lists;
pub mod obligations;
pub mod on_date;
pub mod regimes;
pub mod toggles;

use crate::api_types::{Country, CountryCounts, Erp, ErpCounts};
use crate::model::{
    CountryKey, ErpKey, country_info, country_local_erps, country_matrix, country_partner_flags,
    country_partners, country_vat, erp_info, erp_matrix, erp_partner_count, erp_partner_flags,
};

/// Site-relative path of a country's detail endpoint.
pub(crate) fn country_api_path(code: &str) -> String {
    format!("/api/v1/countries/{code}.json")
}

/// Site-relative path of an ERP's detail endpoint.
pub(crate) fn erp_api_path(id: &str) -> String {
    format!("/api/v1/erps/{id}.json")
}

pub use crate::model::support::UNESTABLISHED_SUPPORT;
pub(crate) use crate::model::support::established;
#[cfg(test)]
pub(crate) use crate::model::support::{ESTABLISHED_SUPPORT, support_established};

/// The Country resource (list item) of one country: what `countries.json` and the filters show. It reads
/// the facts only through their counts, so a fact text edit that changes no count and no toggle stops here.
#[salsa::tracked(returns(ref))]
pub fn country_summary<'db>(db: &'db dyn salsa::Database, key: CountryKey<'db>) -> Option<Country> {
    let info = country_info(db, key).as_ref()?;
    let facts = facts::country_facts(db, key);
    let vat = country_vat(db, key).as_ref();
    let base = crate::model::base_url(db);
    Some(Country {
        code: info.code.clone(),
        name: info.name.clone(),
        region: info.region.clone(),
        url: format!("{base}/{}/", info.code),
        api_url: country_api_path(&info.code),
        counts: CountryCounts {
            facts: facts.len() as u64,
            facts_verified: facts
                .iter()
                .filter(|f| f.verification.is_verified())
                .count() as u64,
            erp_matrix_cells: country_matrix(db, key).len() as u64,
            local_erps: country_local_erps(db, key).len() as u64,
            partners: country_partners(db, key).len() as u64,
            partner_flags: country_partner_flags(db, key).len() as u64,
        },
        toggles: toggles::country_toggle_values(db, key),
        vat_standard_rate: vat.and_then(|v| v.standard_rate),
        vat_reduced_rates: vat.and_then(|v| v.reduced_rates.clone()),
        vat_name: vat.and_then(|v| v.vat_name.clone()),
        vat_registration_threshold: vat.and_then(|v| v.registration_threshold.clone()),
        vat_filing_frequency: vat.and_then(|v| v.filing_frequency.clone()),
    })
}

/// The ERP resource (list item) of one ERP.
#[salsa::tracked(returns(ref))]
pub fn erp_summary<'db>(db: &'db dyn salsa::Database, key: ErpKey<'db>) -> Option<Erp> {
    let info = erp_info(db, key).as_ref()?;
    let base = crate::model::base_url(db);
    Some(Erp {
        id: info.id.clone(),
        name: info.name.clone(),
        vendor: info.vendor.clone(),
        category: info.category.clone(),
        profile: info.profile.clone(),
        website: info.website.clone(),
        url: format!("{base}/erp/{}/", info.id),
        api_url: erp_api_path(&info.id),
        counts: ErpCounts {
            e_invoicing_countries: erp_matrix(db, key)
                .iter()
                .filter(|row| established(&row.support_type, row.verification))
                .count() as u64,
            partner_flags: erp_partner_flags(db, key).len() as u64,
            partners: erp_partner_count(db, key),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every support type of the shipped vocabulary is classified, so a new one cannot slip into (or out
    /// of) `counts.e_invoicing_countries` unnoticed.
    #[test]
    fn every_shipped_support_type_is_support_or_not() {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("rules/vocabulary.toml"),
        )
        .unwrap();
        let vocabulary: toml::Table = toml::from_str(&text).unwrap();
        let types: Vec<&str> = vocabulary["support_types"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        let mut classified: Vec<&str> = ESTABLISHED_SUPPORT
            .iter()
            .chain(&UNESTABLISHED_SUPPORT)
            .copied()
            .collect();
        classified.sort_unstable();
        let mut sorted = types.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, classified);
        assert!(support_established("add-on") && !support_established("roadmap"));
    }
}
