//! The flat tables and their published records.
//!
//! A table is declared once, in [`flat_tables!`]: its variant, its file stem, its record type and what it
//! holds. A record is a struct whose fields, in order, are the table's columns: the JSON keys, the CSV
//! cells and the CSV header are all serialized from it, so a column cannot be listed without a value.

use std::collections::BTreeSet;
use std::sync::{Mutex, PoisonError};

use serde::ser::{Serialize, SerializeStruct, Serializer};

use crate::model::{CountryInfo, NumberedReport};
use crate::parse::tables::{
    ConnectorRow, CountryFactRow, LocalErpRow, MandateRow, MatrixRow, PartnerFlagRow,
};

/// A text cell; empty when the value is not known.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Text(String);

impl Text {
    /// URLs, separated by single spaces.
    fn urls(urls: &[String]) -> Self {
        Text(urls.join(" "))
    }
}

impl From<&String> for Text {
    fn from(text: &String) -> Self {
        Text(text.clone())
    }
}

impl From<&str> for Text {
    fn from(text: &str) -> Self {
        Text(text.to_string())
    }
}

impl From<&Option<String>> for Text {
    fn from(text: &Option<String>) -> Self {
        Text(text.clone().unwrap_or_default())
    }
}

impl Serialize for Text {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

/// An ISO calendar date (`YYYY-MM-DD`), or no date: the check dates.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Date(Option<String>);

impl From<&Option<String>> for Date {
    fn from(date: &Option<String>) -> Self {
        Date(date.clone())
    }
}

impl Serialize for Date {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.0.as_deref().unwrap_or_default())
    }
}

/// Declares the flat tables: `Variant("stem", Record) => "what it holds"`, in the SPEC's order.
macro_rules! flat_tables {
    ($($table:ident($stem:literal, $record:ident) => $description:literal,)*) => {
        /// A flat data table: published as `data/<stem>.json` and `data/<stem>.csv`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum FlatTable {
            $($table,)*
        }

        impl FlatTable {
            /// Every table, in the SPEC's order.
            pub const ALL: [FlatTable; [$(FlatTable::$table),*].len()] = [$(FlatTable::$table),*];

            /// The file stem (`local_erps`).
            pub const fn stem(self) -> &'static str {
                match self {
                    $(FlatTable::$table => $stem,)*
                }
            }

            /// What the table holds (datapackage.json, data/LICENSE.txt, llms.txt).
            pub const fn description(self) -> &'static str {
                match self {
                    $(FlatTable::$table => $description,)*
                }
            }

            /// The records of one part of this table, before any is added.
            pub fn no_records(self) -> FlatRecords {
                match self {
                    $(FlatTable::$table => FlatRecords::$table(Vec::new()),)*
                }
            }

            /// One record with every cell blank: what the header and the columns are read from (a table
            /// with no row still has its header).
            pub fn prototype(self, reporting_erps: &[String]) -> FlatRecords {
                match self {
                    $(FlatTable::$table => FlatRecords::$table(vec![$record::prototype(reporting_erps)]),)*
                }
            }
        }

        /// The records of one part of a flat table, typed by their table.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum FlatRecords {
            $($table(Vec<$record>),)*
        }

        impl FlatRecords {
            pub fn len(&self) -> usize {
                match self {
                    $(FlatRecords::$table(records) => records.len(),)*
                }
            }

            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }

            /// The records as items of the file's top-level JSON array (see [`super::super::json_items`]).
            pub fn json_items(&self) -> String {
                match self {
                    $(FlatRecords::$table(records) => super::super::json_items(records, 2),)*
                }
            }

            /// The records as CSV rows; with `header`, the header row first.
            pub fn csv(&self, header: bool) -> Vec<u8> {
                match self {
                    $(FlatRecords::$table(records) => csv_rows(records, header),)*
                }
            }

            /// The column names of the first record, in order.
            pub fn columns(&self) -> Vec<String> {
                match self {
                    $(FlatRecords::$table(records) => records.first().map(column_names).unwrap_or_default(),)*
                }
            }
        }
    };
}

flat_tables! {
    Matrix("matrix", MatrixRecord) =>
        "E-invoicing, one record per country and ERP: the country's mandate and the ERP's support.",
    Reporting("reporting", ReportingRecord) =>
        "VAT and tax reporting and SAF-T requirements, with the support of ten ERPs.",
    Connectors("connectors", ConnectorRecord) => "E-invoicing provider and ERP connector routes.",
    Countries("countries", CountryFactRecord) => "One record per country fact.",
    LocalErps("local_erps", LocalErpRecord) => "Local and regional ERP and accounting systems.",
    LocalPartnerFlags("local_partner_flags", PartnerFlagRecord) =>
        "Country and global ERP flags: where localization is through local partners or add-ons.",
}

impl FlatTable {
    /// The file stems, in the SPEC's order.
    pub const STEMS: [&'static str; FlatTable::ALL.len()] = {
        let mut stems = [""; FlatTable::ALL.len()];
        let mut i = 0;
        while i < stems.len() {
            stems[i] = FlatTable::ALL[i].stem();
            i += 1;
        }
        stems
    };

    /// The table a file stem names.
    pub fn from_stem(stem: &str) -> Option<FlatTable> {
        FlatTable::ALL.into_iter().find(|t| t.stem() == stem)
    }

    /// Whether the table is sorted by country first, so that its file is spliced from per-country parts
    /// (`connectors` is small and not keyed by country).
    pub fn per_country(self) -> bool {
        self != FlatTable::Connectors
    }
}

/// A record type of a flat table.
trait FlatRecord: Serialize {
    /// A record with every cell blank (the reporting table's ERP columns named by the rules).
    fn prototype(reporting_erps: &[String]) -> Self;
}

/// CSV rows (CRLF, as RFC 4180 says) of `records`; with `header`, the csv crate writes the header row from
/// the first record's field names. A table without records gets its header from [`FlatTable::prototype`].
fn csv_rows<R: Serialize>(records: &[R], header: bool) -> Vec<u8> {
    let mut writer = csv::WriterBuilder::new()
        .terminator(csv::Terminator::CRLF)
        .has_headers(header)
        .from_writer(Vec::new());
    for record in records {
        // Records are structs of strings: the csv serializer accepts every one of them.
        writer
            .serialize(record)
            .expect("a record serializes as CSV");
    }
    writer.into_inner().expect("writing to memory cannot fail")
}

/// A record's field names, in order.
fn column_names<R: Serialize>(record: &R) -> Vec<String> {
    match serde_json::to_value(record) {
        Ok(serde_json::Value::Object(fields)) => fields.keys().cloned().collect(),
        _ => Vec::new(),
    }
}

/// `data/matrix.*`: one record per country and ERP.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct MatrixRecord {
    topic: Text,
    country_code: Text,
    country: Text,
    short_label: Text,
    mandate: Text,
    scope: Text,
    deadlines: Text,
    format: Text,
    mandate_source: Text,
    mandate_evidence: Text,
    erp: Text,
    support_type: Text,
    vendors: Text,
    notes: Text,
    erp_source: Text,
    evidence: Text,
    status: Text,
    last_verified: Date,
}

impl MatrixRecord {
    pub fn new(country: &CountryInfo, mandate: &MandateRow, r: &MatrixRow) -> Self {
        MatrixRecord {
            topic: "e-invoicing".into(),
            country_code: (&country.code).into(),
            country: (&country.name).into(),
            short_label: (&mandate.short_label).into(),
            mandate: (&mandate.mandate).into(),
            scope: (&mandate.scope).into(),
            deadlines: (&mandate.deadlines).into(),
            format: (&mandate.format).into(),
            mandate_source: Text::urls(&mandate.mandate_source),
            mandate_evidence: (&mandate.mandate_evidence).into(),
            erp: (&r.erp).into(),
            support_type: (&r.support_type).into(),
            vendors: (&r.vendors).into(),
            notes: (&r.notes).into(),
            erp_source: Text::urls(&r.erp_source),
            evidence: (&r.evidence).into(),
            status: r.verification.status().as_str().into(),
            last_verified: (&r.last_verified).into(),
        }
    }
}

impl FlatRecord for MatrixRecord {
    fn prototype(_: &[String]) -> Self {
        Self::default()
    }
}

/// `data/reporting.*`: one record per reporting requirement, with one column per ERP of
/// `rules/vocabulary.toml` `reporting_erps`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReportingRecord {
    topic: Text,
    country_code: Text,
    country: Text,
    report_local: Text,
    report_en: Text,
    frequency: Text,
    deadline: Text,
    channel_format: Text,
    source: Text,
    source_checked: Date,
    evidence: Text,
    status: Text,
    /// Each ERP column's name (an ERP id) and value (`native`, `add-on` or `unknown`), in column order.
    erp_support: Vec<(String, Text)>,
    erp_sources: Text,
    notes: Text,
}

impl ReportingRecord {
    /// `erp_columns` names the row's `erp_support` values; the checks hold them to `reporting_erps`.
    pub fn new(country: &CountryInfo, report: &NumberedReport) -> Self {
        let r = &report.row;
        ReportingRecord {
            topic: (&r.topic).into(),
            country_code: (&country.code).into(),
            country: (&country.name).into(),
            report_local: (&r.report_local).into(),
            report_en: (&r.report_en).into(),
            frequency: (&r.frequency).into(),
            deadline: (&r.deadline).into(),
            channel_format: (&r.channel_format).into(),
            source: Text::urls(&r.source),
            source_checked: (&r.source_checked).into(),
            evidence: (&r.evidence).into(),
            status: r.verification.status().as_str().into(),
            erp_support: report
                .erp_columns
                .iter()
                .cloned()
                .zip(r.erp_support.iter().map(Text::from))
                .collect(),
            erp_sources: Text::urls(&r.erp_sources),
            notes: (&r.notes).into(),
        }
    }
}

impl FlatRecord for ReportingRecord {
    fn prototype(reporting_erps: &[String]) -> Self {
        ReportingRecord {
            erp_support: reporting_erps
                .iter()
                .map(|erp| (erp.clone(), Text::default()))
                .collect(),
            ..Self::default()
        }
    }
}

/// Written by hand because the ERP columns are named by the rules: the fields in the order of the columns.
impl Serialize for ReportingRecord {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut record =
            serializer.serialize_struct("ReportingRecord", 14 + self.erp_support.len())?;
        record.serialize_field("topic", &self.topic)?;
        record.serialize_field("country_code", &self.country_code)?;
        record.serialize_field("country", &self.country)?;
        record.serialize_field("report_local", &self.report_local)?;
        record.serialize_field("report_en", &self.report_en)?;
        record.serialize_field("frequency", &self.frequency)?;
        record.serialize_field("deadline", &self.deadline)?;
        record.serialize_field("channel_format", &self.channel_format)?;
        record.serialize_field("source", &self.source)?;
        record.serialize_field("source_checked", &self.source_checked)?;
        record.serialize_field("evidence", &self.evidence)?;
        record.serialize_field("status", &self.status)?;
        for (erp, support) in &self.erp_support {
            record.serialize_field(static_name(erp), support)?;
        }
        record.serialize_field("erp_sources", &self.erp_sources)?;
        record.serialize_field("notes", &self.notes)?;
        record.end()
    }
}

/// `name` as the `&'static str` serde names a struct field with. The reporting table's ERP columns are
/// named by the rules, so each distinct name is leaked once and reused: a few short strings per process,
/// however often the rules are edited back and forth.
fn static_name(name: &str) -> &'static str {
    static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut names = NAMES.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(known) = names.get(name) {
        return known;
    }
    let leaked: &'static str = Box::leak(name.to_owned().into_boxed_str());
    names.insert(leaked);
    leaked
}

/// `data/connectors.*`: one record per provider and ERP.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ConnectorRecord {
    provider: Text,
    erp: Text,
    countries_covered: Text,
    countries_in_scope: Text,
    connector_type: Text,
    built_by: Text,
    direction: Text,
    source_urls: Text,
    status: Text,
    last_verified: Date,
    notes: Text,
}

impl ConnectorRecord {
    pub fn new(r: &ConnectorRow) -> Self {
        ConnectorRecord {
            provider: (&r.provider).into(),
            erp: (&r.erp).into(),
            countries_covered: (&r.countries_covered).into(),
            countries_in_scope: Text(r.countries_in_scope.join(" ")),
            connector_type: (&r.connector_type).into(),
            built_by: (&r.built_by).into(),
            direction: (&r.direction).into(),
            source_urls: Text::urls(&r.source_urls),
            status: r.verification.status().as_str().into(),
            last_verified: (&r.last_verified).into(),
            notes: (&r.notes).into(),
        }
    }
}

impl FlatRecord for ConnectorRecord {
    fn prototype(_: &[String]) -> Self {
        Self::default()
    }
}

/// `data/countries.*`: one record per country fact.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct CountryFactRecord {
    country_code: Text,
    country: Text,
    region: Text,
    fact: Text,
    value: Text,
    source: Text,
    evidence: Text,
    status: Text,
    last_verified: Date,
}

impl CountryFactRecord {
    pub fn new(country: &CountryInfo, r: &CountryFactRow) -> Self {
        CountryFactRecord {
            country_code: (&country.code).into(),
            country: (&country.name).into(),
            region: (&country.region).into(),
            fact: (&r.fact).into(),
            value: (&r.value).into(),
            source: Text::urls(&r.source),
            evidence: (&r.evidence).into(),
            status: r.verification.status().as_str().into(),
            last_verified: (&r.last_verified).into(),
        }
    }
}

impl FlatRecord for CountryFactRecord {
    fn prototype(_: &[String]) -> Self {
        Self::default()
    }
}

/// `data/local_erps.*`: one record per local ERP.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct LocalErpRecord {
    country_code: Text,
    name: Text,
    segment: Text,
    description: Text,
    website: Text,
    source: Text,
    status: Text,
    last_verified: Date,
}

impl LocalErpRecord {
    pub fn new(country: &CountryInfo, r: &LocalErpRow) -> Self {
        LocalErpRecord {
            country_code: (&country.code).into(),
            name: (&r.name).into(),
            segment: (&r.segment).into(),
            description: (&r.description).into(),
            website: (&r.website).into(),
            source: Text::urls(&r.source),
            status: r.verification.status().as_str().into(),
            last_verified: (&r.last_verified).into(),
        }
    }
}

impl FlatRecord for LocalErpRecord {
    fn prototype(_: &[String]) -> Self {
        Self::default()
    }
}

/// `data/local_partner_flags.*`: one record per country and ERP flagged.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct PartnerFlagRecord {
    country_code: Text,
    country: Text,
    erp: Text,
    flag: Text,
    note: Text,
    source: Text,
    status: Text,
    last_verified: Date,
}

impl PartnerFlagRecord {
    pub fn new(country: &CountryInfo, r: &PartnerFlagRow) -> Self {
        PartnerFlagRecord {
            country_code: (&country.code).into(),
            country: (&country.name).into(),
            erp: (&r.erp).into(),
            flag: (&r.flag).into(),
            note: (&r.note).into(),
            source: Text::urls(&r.source),
            status: r.verification.status().as_str().into(),
            last_verified: (&r.last_verified).into(),
        }
    }
}

impl FlatRecord for PartnerFlagRecord {
    fn prototype(_: &[String]) -> Self {
        Self::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stem_names_its_table() {
        for table in FlatTable::ALL {
            assert_eq!(FlatTable::from_stem(table.stem()), Some(table));
        }
        assert_eq!(FlatTable::from_stem("nonexistent"), None);
        assert_eq!(FlatTable::STEMS[4], "local_erps");
    }

    #[test]
    fn the_header_is_written_from_the_record_and_matches_its_cells() {
        let erps = ["erp-a".to_string(), "erp-b".to_string()];
        let prototype = FlatTable::Reporting.prototype(&erps);
        let columns = prototype.columns();
        assert_eq!(
            columns[10..16],
            [
                "evidence",
                "status",
                "erp-a",
                "erp-b",
                "erp_sources",
                "notes"
            ]
        );
        let csv = String::from_utf8(prototype.csv(true)).unwrap();
        let (header, row) = csv.split_once("\r\n").unwrap();
        assert_eq!(header, columns.join(","));
        assert_eq!(row, ",".repeat(columns.len() - 1) + "\r\n");
        for table in FlatTable::ALL {
            let prototype = table.prototype(&erps);
            assert_eq!(prototype.len(), 1);
            assert!(!prototype.columns().is_empty(), "{table:?}");
        }
    }
}
