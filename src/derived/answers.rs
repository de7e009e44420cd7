//! The published answers a release records beside the facts and the toggles: each obligation phase,
//! regime, VAT row, e-invoicing mandate, ERP cell of a reporting row, local ERP, partner and partner
//! flag of a country, as the data files publish them (a value of a closed set by its id, as the
//! files carry it). The matrix cells and the reporting rows themselves are facts already
//! ([`super::facts`]), recorded as such.
//!
//! An answer is a few named fields (the columns of its table, each a text or unknown) with the grade,
//! sources and check date they rest on; a release records it as one line of its country's record
//! (`crate::history::snapshot`), and a diff compares it field by field. What a field is called in a
//! change's sentence, and how its value is said (a status, a vocabulary id by its label), is
//! [`AnswerKind::fields`].

use crate::api_types::Verification;
use crate::ids::{local_erp_id, partner_id};
use crate::model::{
    CountryKey, country_local_erps, country_mandate, country_obligations, country_partner_flags,
    country_partners, country_regimes, country_reporting, country_vat, erp_name,
};
use crate::parse::rules::obligation_rules;
use crate::parse::tables::rate_text;

use super::obligations::phase_words;

/// A kind of recorded answer. Its name is what a record carries; the order is the names' order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AnswerKind {
    LocalErp,
    Mandate,
    Partner,
    PartnerFlag,
    Phase,
    Regime,
    ReportingSupport,
    Vat,
}

/// How a field's recorded value is said to a reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// As recorded.
    AsIs,
    /// An id of a labelled set of `rules/vocabulary.toml`, said by its label.
    Label(&'static str),
    /// Space-separated ids of a labelled set, said by their labels.
    Labels(&'static str),
    /// A phase's status (`in-force`), said as pages say it ("in force").
    Status,
    /// What a `none` phase rests on (`absence`), said as pages say it.
    Basis,
}

/// One field of an answer kind: its name in the record (its table's column), the words a change's
/// sentence names it by (none for the one field that is the answer itself), and how its value is said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    pub words: &'static str,
    pub shown: Shown,
}

const fn field(name: &'static str, words: &'static str, shown: Shown) -> Field {
    Field { name, words, shown }
}

use Shown::{AsIs, Basis, Label, Labels, Status};

const PHASE_FIELDS: &[Field] = &[
    field("status", "status", Status),
    field("applies_from", "applies from", AsIs),
    field("scope", "scope", AsIs),
    field("coverage", "coverage", AsIs),
    field("limit", "limited to", AsIs),
    field("basis", "a “no” rests on", Basis),
];

const REGIME_FIELDS: &[Field] = &[
    field("model", "model", Label("einvoicing_models")),
    field("formats", "formats", Labels("einvoicing_formats")),
    field(
        "platforms",
        "platforms or channels",
        Labels("einvoicing_platforms"),
    ),
    field("signature", "signature or seal", Label("signature_answers")),
    field("archive_years", "years invoices are kept", AsIs),
    field(
        "archive_location",
        "where invoices are kept",
        Label("archive_locations"),
    ),
];

const VAT_FIELDS: &[Field] = &[
    field("vat_name", "name", AsIs),
    field("standard_rate", "standard rate (%)", AsIs),
    field("reduced_rates", "reduced rates (%)", AsIs),
    field("registration_threshold", "registration threshold", AsIs),
    field("filing_frequency", "filing frequency", AsIs),
];

const MANDATE_FIELDS: &[Field] = &[
    field("short_label", "short label", AsIs),
    field("mandate", "summary", AsIs),
    field("scope", "scope", AsIs),
    field("deadlines", "deadlines", AsIs),
    field("format", "format", AsIs),
];

const REPORTING_SUPPORT_FIELDS: &[Field] = &[field("support", "", AsIs)];

const LOCAL_ERP_FIELDS: &[Field] = &[
    field("segment", "segment", AsIs),
    field("description", "description", AsIs),
    field("website", "website", AsIs),
];

const PARTNER_FIELDS: &[Field] = &[
    field("partner_type", "type", AsIs),
    field("summary", "summary", AsIs),
];

const PARTNER_FLAG_FIELDS: &[Field] = &[field("flag", "", AsIs), field("note", "note", AsIs)];

impl AnswerKind {
    /// Every kind, in name order.
    pub const ALL: [AnswerKind; 8] = [
        AnswerKind::LocalErp,
        AnswerKind::Mandate,
        AnswerKind::Partner,
        AnswerKind::PartnerFlag,
        AnswerKind::Phase,
        AnswerKind::Regime,
        AnswerKind::ReportingSupport,
        AnswerKind::Vat,
    ];

    /// The name a record and `changes.json` carry (`phase`).
    pub fn name(self) -> &'static str {
        match self {
            AnswerKind::LocalErp => "local-erp",
            AnswerKind::Mandate => "mandate",
            AnswerKind::Partner => "partner",
            AnswerKind::PartnerFlag => "partner-flag",
            AnswerKind::Phase => "phase",
            AnswerKind::Regime => "regime",
            AnswerKind::ReportingSupport => "reporting-support",
            AnswerKind::Vat => "vat",
        }
    }

    pub fn parse(name: &str) -> Option<AnswerKind> {
        AnswerKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The names of every kind, for a message.
    pub fn names() -> String {
        AnswerKind::ALL.map(AnswerKind::name).join(", ")
    }

    /// The fields of this kind, in the order a record writes them.
    pub fn fields(self) -> &'static [Field] {
        match self {
            AnswerKind::Phase => PHASE_FIELDS,
            AnswerKind::Regime => REGIME_FIELDS,
            AnswerKind::Vat => VAT_FIELDS,
            AnswerKind::Mandate => MANDATE_FIELDS,
            AnswerKind::ReportingSupport => REPORTING_SUPPORT_FIELDS,
            AnswerKind::LocalErp => LOCAL_ERP_FIELDS,
            AnswerKind::Partner => PARTNER_FIELDS,
            AnswerKind::PartnerFlag => PARTNER_FLAG_FIELDS,
        }
    }

    /// The field of this kind named `name`.
    pub fn field(self, name: &str) -> Option<&'static Field> {
        self.fields().iter().find(|f| f.name == name)
    }
}

/// One published answer as a release records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub kind: AnswerKind,
    /// Its id, which starts with its country's code and a hyphen (a phase's id, a regime's, …).
    pub id: String,
    /// The ERP it is about, if any.
    pub erp: Option<String>,
    /// What a reader calls it ("B2B e-invoicing (large taxpayers: issue)"), as the data named it when
    /// recorded.
    pub label: String,
    /// Its fields, in [`AnswerKind::fields`] order: each a text, or `None` when unknown or empty.
    pub fields: Vec<(&'static str, Option<String>)>,
    /// The grade of what it rests on; `None` where its table grades nothing (a mandate, a partner).
    pub verification: Option<Verification>,
    pub source_urls: Vec<String>,
    pub last_checked: Option<String>,
}

impl Answer {
    /// The value of field `name`, if recorded and known.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, v)| v.as_deref())
    }
}

/// A text cell as a field: empty is unknown.
fn text(value: &str) -> Option<String> {
    (!value.is_empty()).then(|| value.to_string())
}

fn values<const N: usize>(
    kind: AnswerKind,
    values: [Option<String>; N],
) -> Vec<(&'static str, Option<String>)> {
    kind.fields().iter().map(|f| f.name).zip(values).collect()
}

/// Every recorded answer of one country (beside its facts and toggles), sorted by kind and id: what a
/// release made now records of it.
#[salsa::tracked(returns(ref))]
pub fn country_answers<'db>(db: &'db dyn salsa::Database, key: CountryKey<'db>) -> Vec<Answer> {
    let code = key.code(db);
    let obligations = obligation_rules(db);
    let obligation_label = |id: &str| {
        obligations
            .iter()
            .find(|o| o.id == id)
            .map_or_else(|| id.to_string(), |o| o.label.clone())
    };
    let mut answers = Vec::new();
    for row in country_obligations(db, key) {
        let obligation = obligation_label(&row.obligation);
        let label = match phase_words(db, code, &row.obligation, &row.phase) {
            Some(phase) => format!("{obligation} ({phase})"),
            None => obligation,
        };
        answers.push(Answer {
            kind: AnswerKind::Phase,
            id: format!("{code}-{}-{}", row.obligation, row.phase),
            erp: None,
            label,
            fields: values(
                AnswerKind::Phase,
                [
                    Some(row.status.as_str().to_string()),
                    row.applies_from.map(|d| d.to_string()),
                    text(&row.scope),
                    Some(row.coverage.as_str().to_string()),
                    text(&row.limit),
                    row.basis.map(|b| b.as_str().to_string()),
                ],
            ),
            verification: Some(row.verification),
            source_urls: row.source.clone(),
            last_checked: row.last_verified.clone(),
        });
    }
    for row in country_regimes(db, key) {
        answers.push(Answer {
            kind: AnswerKind::Regime,
            id: row.id(),
            erp: None,
            label: format!("{} regime", obligation_label(&row.obligation)),
            fields: values(
                AnswerKind::Regime,
                [
                    row.model.clone(),
                    row.formats.as_ref().map(|f| f.join(" ")),
                    row.platforms.as_ref().map(|p| p.join(" ")),
                    row.signature.clone(),
                    row.archive_years.map(|y| y.to_string()),
                    row.archive_location.clone(),
                ],
            ),
            verification: Some(row.verification),
            source_urls: row.source.clone(),
            last_checked: row.last_verified.clone(),
        });
    }
    if let Some(row) = country_vat(db, key) {
        let reduced = row.reduced_rates.as_ref().map(|rates| {
            if rates.is_empty() {
                "none".to_string()
            } else {
                rates
                    .iter()
                    .map(|r| rate_text(*r))
                    .collect::<Vec<_>>()
                    .join(" ")
            }
        });
        answers.push(Answer {
            kind: AnswerKind::Vat,
            id: format!("{code}-vat"),
            erp: None,
            label: "VAT / GST".to_string(),
            fields: values(
                AnswerKind::Vat,
                [
                    row.vat_name.clone(),
                    row.standard_rate.map(rate_text),
                    reduced,
                    row.registration_threshold.clone(),
                    row.filing_frequency.clone(),
                ],
            ),
            verification: Some(row.verification),
            source_urls: row.source.clone(),
            last_checked: row.last_verified.clone(),
        });
    }
    if let Some(row) = country_mandate(db, key) {
        answers.push(Answer {
            kind: AnswerKind::Mandate,
            id: format!("{code}-mandate"),
            erp: None,
            label: "E-invoicing mandate".to_string(),
            fields: values(
                AnswerKind::Mandate,
                [
                    text(&row.short_label),
                    text(&row.mandate),
                    text(&row.scope),
                    text(&row.deadlines),
                    text(&row.format),
                ],
            ),
            verification: None,
            source_urls: row.mandate_source.clone(),
            last_checked: None,
        });
    }
    for report in country_reporting(db, key) {
        let row = &report.row;
        let topic = super::facts::reporting_topic(&row.topic).slug();
        for cell in &report.cells {
            // Each cell rests on its own evidence; an unknown cell on nothing.
            let erp = &cell.erp;
            answers.push(Answer {
                kind: AnswerKind::ReportingSupport,
                id: format!("{code}-{topic}-{}-{erp}", report.n),
                erp: Some(erp.clone()),
                label: format!("{}: {} support", row.report_en, erp_name(db, erp)),
                fields: values(AnswerKind::ReportingSupport, [text(&cell.support)]),
                verification: Some(cell.verification()),
                source_urls: cell.source().to_vec(),
                last_checked: cell.last_verified().map(str::to_string),
            });
        }
    }
    for row in country_local_erps(db, key) {
        answers.push(Answer {
            kind: AnswerKind::LocalErp,
            id: local_erp_id(code, &row.name),
            erp: None,
            label: format!("local ERP {}", row.name),
            fields: values(
                AnswerKind::LocalErp,
                [
                    text(&row.segment),
                    text(&row.description),
                    row.website.clone(),
                ],
            ),
            verification: Some(row.verification),
            source_urls: row.source.clone(),
            last_checked: row.last_verified.clone(),
        });
    }
    for row in country_partners(db, key) {
        answers.push(Answer {
            kind: AnswerKind::Partner,
            id: partner_id(code, &row.erp, &row.name),
            erp: Some(row.erp.clone()),
            label: format!("{} partner {}", erp_name(db, &row.erp), row.name),
            fields: values(
                AnswerKind::Partner,
                [text(&row.partner_type), text(&row.summary)],
            ),
            verification: None,
            source_urls: row.source_urls.clone(),
            last_checked: row.last_checked.clone(),
        });
    }
    for row in country_partner_flags(db, key) {
        answers.push(Answer {
            kind: AnswerKind::PartnerFlag,
            id: format!("{code}-{}", row.erp),
            erp: Some(row.erp.clone()),
            label: format!("{} partner flag", erp_name(db, &row.erp)),
            fields: values(AnswerKind::PartnerFlag, [text(&row.flag), text(&row.note)]),
            verification: Some(row.verification),
            source_urls: row.source.clone(),
            last_checked: row.last_verified.clone(),
        });
    }
    answers.sort_by(|a, b| (a.kind, &a.id).cmp(&(b.kind, &b.id)));
    // Two rows of one id (a duplicate the checks report) are one answer.
    answers.dedup_by(|a, b| a.kind == b.kind && a.id == b.id);
    answers
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_in_name_order_and_read_back() {
        let names: Vec<&str> = AnswerKind::ALL.iter().map(|k| k.name()).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(names, sorted);
        for kind in AnswerKind::ALL {
            assert_eq!(AnswerKind::parse(kind.name()), Some(kind));
            assert!(!kind.fields().is_empty());
        }
        assert_eq!(AnswerKind::parse("fact"), None);
    }
}
