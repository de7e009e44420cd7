//! The ids of published records that are made from names: one definition each, so the uniqueness check
//! of the sources and the published id can never disagree.

use crate::api_types::FactTopic;

/// The id of a country key fact: `<country>-<topic>` or `<country>-<topic>-<erp>`, the topic as its
/// slug (`e-invoicing`) when it is one of the API's topics, else its name with `-` for `_`.
pub(crate) fn key_fact_id(country: &str, topic: &str, erp: Option<&str>) -> String {
    let topic =
        FactTopic::from_name(topic).map_or_else(|| topic.replace('_', "-"), FactTopic::slug);
    match erp {
        Some(erp) => format!("{country}-{topic}-{erp}"),
        None => format!("{country}-{topic}"),
    }
}

/// The slug of a name, for ids (`Zucchetti S.p.A.` -> `zucchetti-s-p-a`).
pub fn slugify(name: &str) -> String {
    slug::slugify(name)
}

/// A local ERP's id: `<country>-<slug of its name>`.
pub(crate) fn local_erp_id(country: &str, name: &str) -> String {
    format!("{country}-{}", slugify(name))
}

/// A partner's id: `<country>-<erp>-<slug of its name>`.
pub(crate) fn partner_id(country: &str, erp: &str, name: &str) -> String {
    format!("{country}-{erp}-{}", slugify(name))
}
