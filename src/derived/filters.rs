//! Filters: the countries whose toggles satisfy a filter of `rules/filters.toml`.

use crate::api_types::{FilterItem, Toggles};
use crate::derived::toggles::country_toggle_values;
use crate::model::{CountryKey, countries};
use crate::parse::rules::{FilterMatch, FilterRule, filter_rules};

/// A filter as a query key (its slug).
#[salsa::interned(debug)]
pub(crate) struct FilterKey<'db> {
    #[returns(ref)]
    pub slug: String,
}

/// Whether a country with `toggles` is listed by `filter`.
pub fn admits(filter: &FilterRule, toggles: &Toggles) -> bool {
    let names: Vec<&str> = if filter.toggles.iter().any(|t| t == "*") {
        Toggles::NAMES.to_vec()
    } else {
        filter.toggles.iter().map(String::as_str).collect()
    };
    let values = names.iter().map(|n| {
        toggles
            .values()
            .into_iter()
            .find(|(name, _)| name == n)
            .and_then(|(_, v)| v)
    });
    match filter.matches {
        FilterMatch::AnyTrue => values.into_iter().any(|v| v == Some(true)),
        FilterMatch::AllTrue => values.into_iter().all(|v| v == Some(true)),
        FilterMatch::AnyNull => values.into_iter().any(|v| v.is_none()),
    }
}

/// The definition of one filter.
#[salsa::tracked(returns(ref))]
pub(crate) fn filter_rule<'db>(
    db: &'db dyn salsa::Database,
    key: FilterKey<'db>,
) -> Option<FilterRule> {
    filter_rules(db)
        .value
        .iter()
        .find(|f| &f.slug == key.slug(db))
        .cloned()
        .map(|mut f| {
            f.at = Default::default();
            f.toggles_at = Default::default();
            f
        })
}

/// The countries a filter lists, sorted by code.
#[salsa::tracked(returns(ref))]
pub fn filter_members<'db>(db: &'db dyn salsa::Database, key: FilterKey<'db>) -> Vec<FilterItem> {
    let Some(filter) = filter_rule(db, key) else {
        return Vec::new();
    };
    countries(db)
        .iter()
        .filter_map(|country| {
            let toggles = country_toggle_values(db, CountryKey::new(db, country.code.clone()));
            admits(filter, &toggles).then(|| FilterItem {
                code: country.code.clone(),
                name: country.name.clone(),
                region: country.region.clone(),
                toggles,
                api_url: super::country_api_path(&country.code),
            })
        })
        .collect()
}
