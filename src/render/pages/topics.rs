//! The reporting topic pages: `/vat-reporting/` and `/saf-t/`, one row per reporting row of every country.

use serde::Serialize;
use serde_json::Value as Json;

use super::context::{PageSpec, page};
use super::shared::*;
use crate::model::{
    CountryKey, ReportCell, countries_by_name, country_reporting, erp_name, reporting_erps,
};

/// A reporting topic page (`vat-reporting`, `saf-t`): one row per reporting row of every country (by
/// country name), with the ERP columns that say something in at least one row. A column that is
/// "unknown" in every row is folded into one line naming those ERPs, so the table fits a desktop screen.
#[derive(Serialize)]
pub(super) struct ReportingContext<'a> {
    site: &'a SiteContext,
    topic: &'a str,
    columns: Vec<ErpNamed<'a>>,
    folded: Vec<ErpNamed<'a>>,
    rows: Vec<ReportingView<'a>>,
}

/// A reporting row of a topic page.
#[derive(Serialize)]
struct ReportingView<'a> {
    anchor: String,
    country: &'a str,
    country_name: &'a str,
    report_en: &'a str,
    report_local: Option<&'a String>,
    frequency: &'a str,
    deadline: &'a str,
    channel_format: &'a str,
    source_urls: &'a [String],
    last_checked: &'a Option<String>,
    verification: &'static str,
    /// The shown columns' cells, each with its own grade, source and quote.
    cells: Vec<CellView<'a>>,
    notes: &'a str,
}

/// One ERP cell of a reporting row as pages show it: its value, and for an answered cell its grade, how
/// and when its source was read, the source and the sentence it rests on.
#[derive(Serialize)]
pub(super) struct CellView<'a> {
    pub(super) erp: &'a str,
    pub(super) erp_name: String,
    pub(super) support: &'a str,
    pub(super) answered: bool,
    pub(super) verification: &'static str,
    pub(super) evidence: &'a str,
    pub(super) last_checked: Option<&'a str>,
    pub(super) source_urls: &'a [String],
    pub(super) quote: &'a str,
}

impl<'a> CellView<'a> {
    pub(super) fn of(db: &dyn salsa::Database, cell: &'a ReportCell) -> Self {
        CellView {
            erp: &cell.erp,
            erp_name: erp_name(db, &cell.erp),
            support: &cell.support,
            answered: cell.answered(),
            verification: cell.verification().as_str(),
            evidence: cell.evidence_read(),
            last_checked: cell.last_verified(),
            source_urls: cell.source(),
            quote: cell.quote(),
        }
    }
}

/// A reporting topic page's context (see [`ReportingContext`]).
fn reporting_context(db: &dyn salsa::Database, topic: &str) -> Json {
    let ids = reporting_erps(db);
    let mut reports = Vec::new();
    for c in countries_by_name(db) {
        let key = CountryKey::new(db, c.code.clone());
        for report in country_reporting(db, key)
            .iter()
            .filter(|r| r.row.topic == topic)
        {
            reports.push((c, report));
        }
    }
    let shown: Vec<usize> = (0..ids.len())
        .filter(|i| {
            reports
                .iter()
                .any(|(_, r)| r.cells.get(*i).is_some_and(ReportCell::answered))
        })
        .collect();
    let columns: Vec<ErpNamed> = shown
        .iter()
        .map(|i| ErpNamed {
            id: &ids[*i],
            name: erp_name(db, &ids[*i]),
        })
        .collect();
    let folded: Vec<ErpNamed> = (0..ids.len())
        .filter(|i| !shown.contains(i))
        .map(|i| ErpNamed {
            id: &ids[i],
            name: erp_name(db, &ids[i]),
        })
        .collect();
    let rows: Vec<ReportingView> = reports
        .iter()
        .map(|(c, report)| {
            let r = &report.row;
            ReportingView {
                anchor: format!("{topic}-{}-{}", c.code, report.n),
                country: &c.code,
                country_name: &c.name,
                report_en: &r.report_en,
                report_local: (r.report_local != r.report_en).then_some(&r.report_local),
                frequency: &r.frequency,
                deadline: &r.deadline,
                channel_format: &r.channel_format,
                source_urls: &r.source,
                last_checked: &r.source_checked,
                verification: r.verification.as_str(),
                cells: shown
                    .iter()
                    .filter_map(|i| report.cells.get(*i).map(|c| CellView::of(db, c)))
                    .collect(),
                notes: &r.notes,
            }
        })
        .collect();
    to_json(&ReportingContext {
        site: site_context(db),
        topic,
        columns,
        folded,
        rows,
    })
}

/// `/vat-reporting/`: the VAT reporting rows of every country.
pub(super) fn vat_reporting_context(db: &dyn salsa::Database) -> Json {
    reporting_context(db, "vat-reporting")
}

/// `/saf-t/`: the SAF-T rows of every country.
pub(super) fn saft_context(db: &dyn salsa::Database) -> Json {
    reporting_context(db, "saf-t")
}

/// How the VAT reporting page is made.
pub(super) fn vat_reporting_spec() -> PageSpec {
    page("reporting", |db, _| vat_reporting_context(db))
}

/// How the SAF-T page is made.
pub(super) fn saft_spec() -> PageSpec {
    page("reporting", |db, _| saft_context(db))
}
