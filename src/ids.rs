//! The ids of published records that are made from names: one definition each, so the uniqueness check
//! of the sources and the published id can never disagree.

use crate::parse::tables::{LocalErpRow, PartnerRow};

/// The slug of a name, for ids (`Zucchetti S.p.A.` -> `zucchetti-s-p-a`).
pub fn slugify(name: &str) -> String {
    slug::slugify(name)
}

/// A local ERP's id: `<country>-<slug of its name>`.
pub(crate) fn local_erp_id(row: &LocalErpRow) -> String {
    format!("{}-{}", row.country, slugify(&row.name))
}

/// A partner's id: `<country>-<erp>-<slug of its name>`.
pub(crate) fn partner_id(row: &PartnerRow) -> String {
    format!("{}-{}-{}", row.country, row.erp, slugify(&row.name))
}
