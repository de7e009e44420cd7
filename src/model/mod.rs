//! Model: the registers (countries, ERPs) and the narrow per-country and per-ERP projections of the wide
//! source tables.
//!
//! The projections are the early-cutoff points of the pipeline: an edit to Italy's matrix rows re-runs
//! every `country_matrix` projection (each is a cheap filter), but only Italy's returns a new value, so
//! nothing downstream of France re-runs. Cross-file checks live in [`checks`].

pub(crate) mod agreement;
pub mod checks;
pub mod dates;
pub(crate) mod evidence;
pub mod support;
pub(crate) mod unread;

use std::sync::Arc;

use crate::parse::json_sources::{ErpReg, erp_register_rows};
use crate::parse::rules::{FactLabel, fact_labels, site_rules, vocabulary};
use crate::parse::tables::RegimeRow;
use crate::parse::tables::{
    ConnectorRow, CountryFactRow, LocalErpRow, Located, MandateRow, MatrixRow, ObligationRow,
    PartnerFlagRow, PartnerRow, ReportingRow, ReportingSupportRow, RunKey, VatRow, Verification,
    connector_rows, country_fact_keys, country_fact_rows_of, country_register_rows, local_erp_rows,
    mandate_rows, matrix_rows, obligation_rows, partner_flag_rows, partner_rows, regime_rows,
    reporting_support_rows, reporting_table, vat_rows,
};

/// The rows of a parsed table that `keep` selects, without their positions: what a projection returns,
/// so a row moving to another line changes nothing downstream.
fn rows_where<T>(rows: &[Located<T>], keep: impl Fn(&T) -> bool) -> Vec<Arc<T>> {
    rows.iter()
        .filter(|r| keep(&r.row))
        .map(|r| r.row.clone())
        .collect()
}

/// The distinct values of one column of `rows` (a country code), in order.
fn distinct<T>(rows: &[Located<T>], column: impl Fn(&T) -> &str) -> Vec<String> {
    let values: std::collections::BTreeSet<&str> = rows.iter().map(|r| column(&r.row)).collect();
    values.into_iter().map(str::to_string).collect()
}

/// Orders names case-insensitively, then exactly (so the order is total and stable).
pub(crate) fn by_name(a: &str, b: &str) -> std::cmp::Ordering {
    a.to_lowercase().cmp(&b.to_lowercase()).then(a.cmp(b))
}

/// A country as a query key.
#[salsa::interned(debug)]
pub struct CountryKey<'db> {
    #[returns(ref)]
    pub code: String,
}

/// An ERP as a query key.
#[salsa::interned(debug)]
pub(crate) struct ErpKey<'db> {
    #[returns(ref)]
    pub id: String,
}

/// A country of the register.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CountryInfo {
    pub code: String,
    pub name: String,
    pub region: String,
    pub eu_member: bool,
}

/// The countries of the register, sorted by code (duplicates are reported by the checks and dropped).
#[salsa::tracked(returns(ref))]
pub fn countries(db: &dyn salsa::Database) -> Vec<CountryInfo> {
    let mut list: Vec<CountryInfo> = country_register_rows(db)
        .value
        .iter()
        .map(|r| CountryInfo {
            code: r.row.code.clone(),
            name: r.row.name.clone(),
            region: r.row.region.clone(),
            eu_member: r.row.eu_member,
        })
        .collect();
    list.sort_by(|a, b| a.code.cmp(&b.code));
    list.dedup_by(|a, b| a.code == b.code);
    list
}

/// The countries of the register in the order a reader looks for them: by name, accents folded
/// (`Türkiye` among the T's), then by code.
#[salsa::tracked(returns(ref))]
pub(crate) fn countries_by_name(db: &dyn salsa::Database) -> Vec<CountryInfo> {
    let mut list = countries(db).clone();
    list.sort_by_cached_key(|c| (crate::ids::slugify(&c.name), c.code.clone()));
    list
}

/// One country of the register (a projection, so a page of France does not depend on Italy's name).
#[salsa::tracked(returns(ref))]
pub(crate) fn country_info<'db>(
    db: &'db dyn salsa::Database,
    key: CountryKey<'db>,
) -> Option<CountryInfo> {
    countries(db)
        .iter()
        .find(|c| &c.code == key.code(db))
        .cloned()
}

/// The ERPs of the register, in register order (which is their order everywhere).
#[salsa::tracked(returns(ref))]
pub fn erps(db: &dyn salsa::Database) -> Vec<ErpReg> {
    let mut seen = std::collections::BTreeSet::new();
    erp_register_rows(db)
        .value
        .iter()
        .filter(|e| seen.insert(e.id.clone()))
        .cloned()
        .collect()
}

/// One ERP of the register.
#[salsa::tracked(returns(ref))]
pub(crate) fn erp_info<'db>(db: &'db dyn salsa::Database, key: ErpKey<'db>) -> Option<ErpReg> {
    erps(db).iter().find(|e| &e.id == key.id(db)).cloned()
}

/// The product name of an ERP, or its id when the register does not know it.
pub(crate) fn erp_name(db: &dyn salsa::Database, id: &str) -> String {
    erp_info(db, ErpKey::new(db, id.to_string()))
        .as_ref()
        .map_or_else(|| id.to_string(), |e| e.name.clone())
}

/// Position of an ERP in the register, for sorting.
pub fn erp_rank(db: &dyn salsa::Database, id: &str) -> usize {
    erps(db)
        .iter()
        .position(|e| e.id == id)
        .unwrap_or(usize::MAX)
}

/// Site settings that many outputs read, projected so an edit to another part of `site.toml` does not
/// re-run them.
#[salsa::tracked(returns(ref))]
pub fn reference_date(db: &dyn salsa::Database) -> String {
    site_rules(db).value.reference_date.clone()
}

/// The base URL of the site: `--base-url` / the dev server's address, or `site.toml`'s.
#[salsa::tracked(returns(ref))]
pub fn base_url(db: &dyn salsa::Database) -> String {
    match crate::db::BuildOptions::get(db).base_url_override(db) {
        Some(url) => url.trim_end_matches('/').to_string(),
        None => site_rules(db).value.base_url.clone(),
    }
}

/// The path of the base URL, without a trailing `/`: `/locref` for `https://example.github.io/locref`
/// (a GitHub Pages project site), `""` for a site at the root of its host. Pages prefix their
/// site-relative links with it.
#[salsa::tracked(returns(ref))]
pub(crate) fn base_path(db: &dyn salsa::Database) -> String {
    crate::site::url_path(base_url(db))
}

/// Whether a URL's host is reserved for examples (RFC 2606: `example.org` and the like, `.test`,
/// `.invalid`): the placeholder base URL of `rules/site.toml`, not an address to publish at.
pub fn is_placeholder_url(url: &str) -> bool {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let host = after_scheme
        .split(['/', '?', '#', ':'])
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    let host = host.trim_end_matches('.');
    ["example", "example.com", "example.net", "example.org"]
        .iter()
        .any(|reserved| host == *reserved || host.ends_with(&format!(".{reserved}")))
        || host.ends_with(".test")
        || host.ends_with(".invalid")
}

/// A country fact row joined with its vocabulary entry from `rules/facts.toml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CountryFact {
    pub label: FactLabel,
    pub row: Arc<CountryFactRow>,
}

/// The key facts of one country, in the order of `rules/facts.toml` (rows with unknown labels are left
/// to the checks).
#[salsa::tracked(returns(ref))]
pub fn country_facts_of<'db>(
    db: &'db dyn salsa::Database,
    key: CountryKey<'db>,
) -> Vec<CountryFact> {
    let labels = &fact_labels(db).value;
    // Only this country's run of the facts table: other countries' edits do not reach here.
    let rows = country_fact_rows_of(db, RunKey::new(db, key.code(db).clone()));
    let mut facts: Vec<(usize, CountryFact)> = rows
        .value
        .iter()
        .filter_map(|r| {
            let rank = labels.iter().position(|l| l.label == r.row.fact)?;
            let mut label = labels[rank].clone();
            label.at = Default::default();
            Some((
                rank,
                CountryFact {
                    label,
                    row: r.row.clone(),
                },
            ))
        })
        .collect();
    facts.sort_by_key(|(rank, _)| *rank);
    facts.dedup_by_key(|(rank, _)| *rank);
    facts.into_iter().map(|(_, f)| f).collect()
}

/// The VAT row of one country.
#[salsa::tracked(returns(ref))]
pub(crate) fn country_vat<'db>(
    db: &'db dyn salsa::Database,
    key: CountryKey<'db>,
) -> Option<Arc<VatRow>> {
    vat_rows(db)
        .value
        .iter()
        .find(|r| &r.row.country == key.code(db))
        .map(|r| r.row.clone())
}

/// The e-invoicing mandate row of one country.
#[salsa::tracked(returns(ref))]
pub(crate) fn country_mandate<'db>(
    db: &'db dyn salsa::Database,
    key: CountryKey<'db>,
) -> Option<Arc<MandateRow>> {
    mandate_rows(db)
        .value
        .iter()
        .find(|r| &r.row.country == key.code(db))
        .map(|r| r.row.clone())
}

/// The phases of one country's obligations, in the order of `rules/toggles.toml`'s obligations, then by
/// the date they apply from (undated phases last), then by phase name.
#[salsa::tracked(returns(ref))]
pub fn country_obligations<'db>(
    db: &'db dyn salsa::Database,
    key: CountryKey<'db>,
) -> Vec<Arc<ObligationRow>> {
    let order = crate::parse::rules::obligation_rules(db);
    let rank = |id: &str| order.iter().position(|o| o.id == id).unwrap_or(usize::MAX);
    let mut rows: Vec<Arc<ObligationRow>> =
        rows_where(&obligation_rows(db).value, |r| &r.country == key.code(db));
    rows.sort_by(|a, b| {
        (
            rank(&a.obligation),
            a.applies_from.is_none(),
            a.applies_from,
            &a.phase,
        )
            .cmp(&(
                rank(&b.obligation),
                b.applies_from.is_none(),
                b.applies_from,
                &b.phase,
            ))
    });
    rows
}

/// The regime rows of one country (how each obligation works), in the order of `rules/toggles.toml`'s
/// obligations (duplicates are reported by the checks and dropped).
#[salsa::tracked(returns(ref))]
pub fn country_regimes<'db>(
    db: &'db dyn salsa::Database,
    key: CountryKey<'db>,
) -> Vec<Arc<RegimeRow>> {
    let order = crate::parse::rules::obligation_rules(db);
    let rank = |id: &str| order.iter().position(|o| o.id == id).unwrap_or(usize::MAX);
    let mut rows: Vec<Arc<RegimeRow>> =
        rows_where(&regime_rows(db).value, |r| &r.country == key.code(db));
    rows.sort_by(|a, b| {
        (rank(&a.obligation), &a.obligation).cmp(&(rank(&b.obligation), &b.obligation))
    });
    rows.dedup_by(|a, b| a.obligation == b.obligation);
    rows
}

/// The matrix rows of one country, in ERP order.
#[salsa::tracked(returns(ref))]
pub fn country_matrix<'db>(
    db: &'db dyn salsa::Database,
    key: CountryKey<'db>,
) -> Vec<Arc<MatrixRow>> {
    let mut rows: Vec<Arc<MatrixRow>> =
        rows_where(&matrix_rows(db).value, |r| &r.country == key.code(db));
    rows.sort_by_key(|r| erp_rank(db, &r.erp));
    rows.dedup_by(|a, b| a.erp == b.erp);
    rows
}

/// The matrix rows of one ERP, sorted by country.
#[salsa::tracked(returns(ref))]
pub fn erp_matrix<'db>(db: &'db dyn salsa::Database, key: ErpKey<'db>) -> Vec<Arc<MatrixRow>> {
    let mut rows: Vec<Arc<MatrixRow>> =
        rows_where(&matrix_rows(db).value, |r| &r.erp == key.id(db));
    rows.sort_by(|a, b| a.country.cmp(&b.country));
    rows.dedup_by(|a, b| a.country == b.country);
    rows
}

/// A reporting row with its number among the country's rows of the same topic (1-based, file order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumberedReport {
    pub n: usize,
    pub row: Arc<ReportingRow>,
    /// Its ERP cells, in the reporting table's column order.
    pub cells: Vec<ReportCell>,
}

impl NumberedReport {
    /// The sources of its ERP cells, each once, in column order: what `data/reporting.*` publishes as the
    /// row's `erp_sources`.
    pub fn erp_sources(&self) -> Vec<&str> {
        let mut urls: Vec<&str> = Vec::new();
        for url in self.cells.iter().flat_map(|c| c.source()) {
            if !urls.contains(&url.as_str()) {
                urls.push(url);
            }
        }
        urls
    }
}

/// One ERP cell of a reporting row: its value (`native`, `add-on` or `unknown`) and, for a value other
/// than `unknown`, the row of `tables/reporting_support.csv` it rests on (its source, grade and quote).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportCell {
    pub erp: String,
    pub support: String,
    pub evidence: Option<Arc<ReportingSupportRow>>,
}

impl ReportCell {
    /// Whether the cell states an answer (anything but `unknown`).
    pub fn answered(&self) -> bool {
        self.support != "unknown"
    }

    /// The evidence of an answered cell (an unknown cell has none, whatever a stray row says).
    fn read(&self) -> Option<&ReportingSupportRow> {
        self.evidence.as_deref().filter(|_| self.answered())
    }

    /// The cell's grade: its evidence's; `unverified` for an unknown cell.
    pub fn verification(&self) -> Verification {
        self.read()
            .map_or(Verification::Unverified, |e| e.verification)
    }

    /// The sources its answer rests on, the quoted one first (none for an unknown cell).
    pub fn source(&self) -> &[String] {
        self.read().map_or(&[], |e| e.source.as_slice())
    }

    /// The sentence of its first source that settles it (empty when none was quoted).
    pub fn quote(&self) -> &str {
        self.read().map_or("", |e| e.quote.as_str())
    }

    /// How its source was read (`fetched`, `search-extract`; empty for an unknown cell).
    pub fn evidence_read(&self) -> &str {
        self.read().map_or("", |e| e.evidence.as_str())
    }

    /// The day its source was read.
    pub fn last_verified(&self) -> Option<&str> {
        self.read().and_then(|e| e.last_verified.as_deref())
    }

    /// Whether the cell establishes the ERP's support, by the one definition
    /// ([`support::established`]): an unverified cell is shown, never counted.
    pub fn established(&self) -> bool {
        support::established(&self.support, self.verification())
    }
}

/// The reporting rows of one country: vat-reporting first, then saf-t, each numbered in file order,
/// each ERP cell with the evidence row that names it.
#[salsa::tracked(returns(ref))]
pub fn country_reporting<'db>(
    db: &'db dyn salsa::Database,
    key: CountryKey<'db>,
) -> Vec<NumberedReport> {
    let table = &reporting_table(db).value;
    let code = key.code(db);
    let evidence = rows_where(&reporting_support_rows(db).value, |r| &r.country == code);
    let mut out = Vec::new();
    for topic in ["vat-reporting", "saf-t"] {
        let rows = table
            .rows
            .iter()
            .filter(|r| &r.row.country == code && r.row.topic == topic);
        out.extend(rows.enumerate().map(|(i, r)| {
            let cells = table
                .erp_columns
                .iter()
                .zip(&r.row.erp_support)
                .map(|((erp, _, _), support)| ReportCell {
                    erp: erp.clone(),
                    support: support.clone(),
                    evidence: evidence
                        .iter()
                        .find(|e| {
                            e.topic == r.row.topic
                                && e.report_en == r.row.report_en
                                && &e.erp == erp
                        })
                        .cloned(),
                })
                .collect();
            NumberedReport {
                n: i + 1,
                row: r.row.clone(),
                cells,
            }
        }));
    }
    out
}

/// The countries with local ERPs, in code order: the parts of the local ERPs page, one country's
/// ([`country_local_erps`]) each.
#[salsa::tracked(returns(ref))]
pub(crate) fn local_erp_codes(db: &dyn salsa::Database) -> Vec<String> {
    distinct(&local_erp_rows(db).value, |row| &row.country)
}

/// Local ERPs of one country, sorted by name.
#[salsa::tracked(returns(ref))]
pub(crate) fn country_local_erps<'db>(
    db: &'db dyn salsa::Database,
    key: CountryKey<'db>,
) -> Vec<Arc<LocalErpRow>> {
    let mut rows: Vec<Arc<LocalErpRow>> =
        rows_where(&local_erp_rows(db).value, |r| &r.country == key.code(db));
    rows.sort_by(|a, b| by_name(&a.name, &b.name));
    rows
}

/// Partner flags of one country, sorted by ERP id.
#[salsa::tracked(returns(ref))]
pub(crate) fn country_partner_flags<'db>(
    db: &'db dyn salsa::Database,
    key: CountryKey<'db>,
) -> Vec<Arc<PartnerFlagRow>> {
    let mut rows: Vec<Arc<PartnerFlagRow>> =
        rows_where(&partner_flag_rows(db).value, |r| &r.country == key.code(db));
    rows.sort_by(|a, b| a.erp.cmp(&b.erp));
    rows
}

/// Partner flags of one ERP, sorted by country.
#[salsa::tracked(returns(ref))]
pub(crate) fn erp_partner_flags<'db>(
    db: &'db dyn salsa::Database,
    key: ErpKey<'db>,
) -> Vec<Arc<PartnerFlagRow>> {
    let mut rows: Vec<Arc<PartnerFlagRow>> =
        rows_where(&partner_flag_rows(db).value, |r| &r.erp == key.id(db));
    rows.sort_by(|a, b| a.country.cmp(&b.country));
    rows
}

/// Sort order of partners: country, ERP, name (case-insensitive, then exact).
pub(crate) fn partner_order(a: &PartnerRow, b: &PartnerRow) -> std::cmp::Ordering {
    (&a.country, &a.erp)
        .cmp(&(&b.country, &b.erp))
        .then_with(|| by_name(&a.name, &b.name))
}

/// The countries with partners, in code order: the parts of the partners page, whose rows are sorted by
/// country first ([`partner_order`]), so one country's partners ([`country_partners`]) are one part.
#[salsa::tracked(returns(ref))]
pub(crate) fn partner_codes(db: &dyn salsa::Database) -> Vec<String> {
    distinct(&partner_rows(db).value, |row| &row.country)
}

/// Partners of one country, sorted by ERP and name.
#[salsa::tracked(returns(ref))]
pub fn country_partners<'db>(
    db: &'db dyn salsa::Database,
    key: CountryKey<'db>,
) -> Vec<Arc<PartnerRow>> {
    let mut rows: Vec<Arc<PartnerRow>> =
        rows_where(&partner_rows(db).value, |r| &r.country == key.code(db));
    rows.sort_by(|a, b| partner_order(a, b));
    rows
}

/// How many partners one ERP has.
#[salsa::tracked(returns(copy))]
pub fn erp_partner_count<'db>(db: &'db dyn salsa::Database, key: ErpKey<'db>) -> u64 {
    partner_rows(db)
        .value
        .iter()
        .filter(|r| &r.row.erp == key.id(db))
        .count() as u64
}

/// Connector routes of one ERP, sorted by provider.
#[salsa::tracked(returns(ref))]
pub(crate) fn erp_connectors<'db>(
    db: &'db dyn salsa::Database,
    key: ErpKey<'db>,
) -> Vec<Arc<ConnectorRow>> {
    let mut rows: Vec<Arc<ConnectorRow>> =
        rows_where(&connector_rows(db).value, |r| &r.erp == key.id(db));
    rows.sort_by(|a, b| by_name(&a.provider, &b.provider));
    rows
}

/// One country's ERP-localization facts (the rows whose label names an ERP), in file order: the narrow
/// value [`erp_country_facts`] reads, so an edit of another of that country's facts re-runs no ERP's list.
#[salsa::tracked(returns(ref))]
pub fn country_erp_fact_rows<'db>(
    db: &'db dyn salsa::Database,
    key: RunKey<'db>,
) -> Vec<Arc<CountryFactRow>> {
    let labels = &fact_labels(db).value;
    rows_where(&country_fact_rows_of(db, key).value, |r| {
        labels.iter().any(|l| l.label == r.fact && l.erp.is_some())
    })
}

/// The ERP-specific country facts about one ERP (the ERP-localization facts), sorted by country.
#[salsa::tracked(returns(ref))]
pub fn erp_country_facts<'db>(
    db: &'db dyn salsa::Database,
    key: ErpKey<'db>,
) -> Vec<Arc<CountryFactRow>> {
    let labels = &fact_labels(db).value;
    let erp = key.id(db).as_str();
    let mut rows: Vec<Arc<CountryFactRow>> = country_fact_keys(db)
        .iter()
        .flat_map(|k| country_erp_fact_rows(db, RunKey::new(db, k.clone())))
        .filter(|r| {
            labels
                .iter()
                .any(|l| l.label == r.fact && l.erp.as_deref() == Some(erp))
        })
        .cloned()
        .collect();
    rows.sort_by(|a, b| a.country.cmp(&b.country));
    rows.dedup_by(|a, b| a.country == b.country);
    rows
}

/// The ERPs whose column the reporting table carries, in order (from `rules/vocabulary.toml`).
#[salsa::tracked(returns(ref))]
pub(crate) fn reporting_erps(db: &dyn salsa::Database) -> Vec<String> {
    vocabulary(db).value.reporting_erps.clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders() {
        assert!(is_placeholder_url("https://locref.example.org"));
        assert!(is_placeholder_url("https://example.com/x"));
        assert!(is_placeholder_url("http://site.test:8080/"));
        assert!(!is_placeholder_url("https://example.github.io/locref"));
        assert!(!is_placeholder_url("https://locref.org"));
        assert!(!is_placeholder_url("http://127.0.0.1:8000"));
    }
}

/// The oldest and the newest check date of every published answer (facts, matrix cells, reporting rows
/// and their ERP cells, phases, regimes, local ERPs, partner flags, connector routes): what every page's
/// footer says of when the facts were checked. A projection, so an edit that moves neither end re-renders no page.
#[salsa::tracked(returns(ref))]
pub fn check_date_span(db: &dyn salsa::Database) -> Option<(String, String)> {
    let mut dates: Vec<&str> = Vec::new();
    for country in countries(db) {
        let key = CountryKey::new(db, country.code.clone());
        dates.extend(
            country_facts_of(db, key)
                .iter()
                .filter_map(|f| f.row.last_verified.as_deref()),
        );
        dates.extend(
            country_matrix(db, key)
                .iter()
                .filter_map(|r| r.last_verified.as_deref()),
        );
        for report in country_reporting(db, key) {
            dates.extend(report.row.source_checked.as_deref());
            dates.extend(report.cells.iter().filter_map(ReportCell::last_verified));
        }
        dates.extend(
            country_obligations(db, key)
                .iter()
                .filter_map(|r| r.last_verified.as_deref()),
        );
        dates.extend(
            country_regimes(db, key)
                .iter()
                .filter_map(|r| r.last_verified.as_deref()),
        );
        dates.extend(
            country_local_erps(db, key)
                .iter()
                .filter_map(|r| r.last_verified.as_deref()),
        );
        dates.extend(
            country_partner_flags(db, key)
                .iter()
                .filter_map(|r| r.last_verified.as_deref()),
        );
    }
    dates.extend(
        crate::parse::tables::connector_rows(db)
            .value
            .iter()
            .filter_map(|r| r.row.last_verified.as_deref()),
    );
    let oldest = dates.iter().min()?;
    let newest = dates.iter().max()?;
    Some((oldest.to_string(), newest.to_string()))
}
