//! Facts: the API's Fact records, built from the country facts, the matrix (with the country's mandate)
//! and the reporting rows. Ids are `<country>-<topic slug>[-<erp>]`, and `<country>-<topic slug>-<n>` for
//! the n-th reporting row of a topic.

use std::collections::BTreeMap;

use super::obligations::{e_invoicing_deadlines, effective_date};
use crate::api_types::{Fact, FactTopic};
use crate::ids::key_fact_id;
use crate::model::{
    CountryKey, ErpKey, NumberedReport, country_facts_of, country_mandate, country_matrix,
    country_reporting, erp_country_facts, erp_matrix, erp_name,
};
use crate::parse::rules::{FactLabel, fact_labels};
use crate::parse::tables::{CountryFactRow, MandateRow, MatrixRow};

/// `mandatory` of an e-invoicing fact: true when a B2B or B2G mandate exists, false when both are known
/// absent, null otherwise.
fn mandate_flag(b2b: Option<bool>, b2g: Option<bool>) -> Option<bool> {
    match (b2b, b2g) {
        (Some(true), _) | (_, Some(true)) => Some(true),
        (Some(false), Some(false)) => Some(false),
        _ => None,
    }
}

fn key_fact(
    label: &FactLabel,
    row: &CountryFactRow,
    mandatory: Option<bool>,
    effective_date: Option<String>,
) -> Fact {
    Fact {
        id: key_fact_id(&row.country, &label.topic, label.erp.as_deref()),
        country: row.country.clone(),
        erp: label.erp.clone(),
        topic: FactTopic::from_name(&label.topic).unwrap_or(FactTopic::Currency),
        label: label.label.clone(),
        value: row.value.clone(),
        status: row.verification.status(),
        mandatory,
        effective_date,
        source_url: row.source.first().cloned(),
        source_urls: row.source.clone(),
        verification: row.verification,
        last_checked: row.last_verified.clone(),
        details: evidence_detail(&row.evidence),
    }
}

/// How a fact's source was read (`fetched`, `search-extract`; `unverified` when none was), in `details`:
/// the SPEC's Fact has a field for the grade but none for this, and every answer carries both.
fn evidence_detail(evidence: &str) -> BTreeMap<String, String> {
    let mut details = BTreeMap::new();
    if !evidence.is_empty() {
        details.insert("evidence".to_string(), evidence.to_string());
    }
    details
}

/// The e-invoicing support fact of one matrix cell, with the country's mandate in `details` (its
/// `deadlines` from the dated phases of the country's e-invoicing obligations).
pub(crate) fn support_fact(
    db: &dyn salsa::Database,
    row: &MatrixRow,
    mandate: Option<&MandateRow>,
    deadlines: &str,
) -> Fact {
    let erp_name = erp_name(db, &row.erp);
    let field = |f: fn(&MandateRow) -> &String| mandate.map(f).cloned().unwrap_or_default();
    let mut details = evidence_detail(&row.evidence);
    details.extend([
        ("mandate".to_string(), field(|m| &m.mandate)),
        ("scope".to_string(), field(|m| &m.scope)),
        ("deadlines".to_string(), deadlines.to_string()),
        ("format".to_string(), field(|m| &m.format)),
        ("vendors".to_string(), row.vendors.clone()),
        ("notes".to_string(), row.notes.clone()),
    ]);
    // The sentence the answer rests on, where one was read (an unknown cell has none).
    if !row.quote.is_empty() {
        details.insert("quote".to_string(), row.quote.clone());
    }
    Fact {
        id: format!(
            "{}-{}-{}",
            row.country,
            FactTopic::EInvoicingErpSupport.slug(),
            row.erp
        ),
        country: row.country.clone(),
        erp: Some(row.erp.clone()),
        topic: FactTopic::EInvoicingErpSupport,
        label: format!("E-invoicing support: {erp_name}"),
        value: row.support_type.as_str().into(),
        status: row.verification.status(),
        mandatory: None,
        effective_date: None,
        source_url: row.erp_source.first().cloned(),
        source_urls: row.erp_source.clone(),
        verification: row.verification,
        last_checked: row.last_verified.clone(),
        details,
    }
}

/// The topic of a reporting row (`vat-reporting` or `saf-t`).
pub(crate) fn reporting_topic(row_topic: &str) -> FactTopic {
    if row_topic == "saf-t" {
        FactTopic::Saft
    } else {
        FactTopic::VatReporting
    }
}

/// The id of a reporting row's fact: `<country>-<topic slug>-<n>`.
pub(crate) fn reporting_fact_id(report: &NumberedReport) -> String {
    format!(
        "{}-{}-{}",
        report.row.country,
        reporting_topic(&report.row.topic).slug(),
        report.n
    )
}

fn reporting_fact(report: &NumberedReport) -> Fact {
    let row = &report.row;
    let topic = reporting_topic(&row.topic);
    let mut value = row.report_en.clone();
    if !row.report_local.is_empty() && row.report_local != row.report_en {
        value.push_str(&format!(" ({})", row.report_local));
    }
    let parts: Vec<String> = [
        (!row.frequency.is_empty()).then(|| row.frequency.clone()),
        (!row.deadline.is_empty()).then(|| format!("deadline: {}", row.deadline)),
        (!row.channel_format.is_empty()).then(|| row.channel_format.clone()),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !parts.is_empty() {
        value.push_str(": ");
        value.push_str(&parts.join("; "));
    }
    let mut details = evidence_detail(&row.evidence);
    details.extend([
        ("report_local".to_string(), row.report_local.clone()),
        ("frequency".to_string(), row.frequency.clone()),
        ("deadline".to_string(), row.deadline.clone()),
        ("channel_format".to_string(), row.channel_format.clone()),
        ("notes".to_string(), row.notes.clone()),
        ("erp_sources".to_string(), report.erp_sources().join(" ")),
    ]);
    // Each ERP cell's value; an answered cell with its own source, how and when it was read, its grade
    // and, where one was read, the sentence it rests on.
    for cell in &report.cells {
        let erp = &cell.erp;
        details.insert(format!("erp_support.{erp}"), cell.support.clone());
        if !cell.answered() {
            continue;
        }
        details.insert(
            format!("erp_verification.{erp}"),
            cell.verification().as_str().to_string(),
        );
        details.insert(format!("erp_source_urls.{erp}"), cell.source().join(" "));
        details.insert(
            format!("erp_evidence.{erp}"),
            cell.evidence_read().to_string(),
        );
        if let Some(day) = cell.last_verified() {
            details.insert(format!("erp_last_checked.{erp}"), day.to_string());
        }
        if !cell.quote().is_empty() {
            details.insert(format!("erp_quote.{erp}"), cell.quote().to_string());
        }
    }
    Fact {
        id: reporting_fact_id(report),
        country: row.country.clone(),
        erp: None,
        topic,
        label: row.report_en.clone(),
        value: value.into(),
        status: row.verification.status(),
        mandatory: None,
        effective_date: None,
        source_url: row.source.first().cloned(),
        source_urls: row.source.clone(),
        verification: row.verification,
        last_checked: row.source_checked.clone(),
        details,
    }
}

/// Every fact of one country: key facts (in `rules/facts.toml` order), ERP e-invoicing support (in ERP
/// order), then VAT reporting and SAF-T rows.
#[salsa::tracked(returns(ref))]
pub fn country_facts<'db>(db: &'db dyn salsa::Database, key: CountryKey<'db>) -> Vec<Fact> {
    let toggles = super::toggles::country_toggle_values(db, key);
    let mandatory = mandate_flag(
        toggles.e_invoicing_mandatory_b2b,
        toggles.e_invoicing_mandatory_b2g,
    );
    let mandate = country_mandate(db, key).as_deref();
    let deadlines = e_invoicing_deadlines(db, key);
    let mut facts: Vec<Fact> = country_facts_of(db, key)
        .iter()
        .map(|f| {
            key_fact(
                &f.label,
                &f.row,
                (f.label.topic == "e_invoicing")
                    .then_some(mandatory)
                    .flatten(),
                effective_date(db, key, &f.label.label),
            )
        })
        .collect();
    facts.extend(
        country_matrix(db, key)
            .iter()
            .map(|row| support_fact(db, row, mandate, deadlines)),
    );
    facts.extend(country_reporting(db, key).iter().map(reporting_fact));
    facts
}

/// One ERP's e-invoicing support facts, sorted by country.
#[salsa::tracked(returns(ref))]
pub fn erp_support_facts<'db>(db: &'db dyn salsa::Database, key: ErpKey<'db>) -> Vec<Fact> {
    erp_matrix(db, key)
        .iter()
        .map(|row| {
            let country = CountryKey::new(db, row.country.clone());
            let deadlines = e_invoicing_deadlines(db, country);
            support_fact(db, row, country_mandate(db, country).as_deref(), deadlines)
        })
        .collect()
}

/// One ERP's other facts (the ERP-localization facts of the countries), sorted by country.
#[salsa::tracked(returns(ref))]
pub fn erp_other_facts<'db>(db: &'db dyn salsa::Database, key: ErpKey<'db>) -> Vec<Fact> {
    let labels = &fact_labels(db).value;
    erp_country_facts(db, key)
        .iter()
        .filter_map(|row| {
            let label = labels.iter().find(|l| l.label == row.fact)?;
            let country = CountryKey::new(db, row.country.clone());
            Some(key_fact(
                label,
                row,
                None,
                effective_date(db, country, &label.label),
            ))
        })
        .collect()
}
