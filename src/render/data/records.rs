//! The flat tables and their published records.
//!
//! A table is declared once, in [`flat_tables!`]: its variant, its file stem, its record type and what it
//! holds. A record is a struct whose fields, in order, are the table's columns: the JSON keys, the CSV
//! cells and the CSV header are all serialized from it, so a column cannot be listed without a value.
//! The same struct describes its columns to datapackage.json and openapi.json: each field's doc comment
//! is the column's description, its type says text, date, boolean or integer, `x-values` names the closed set its values
//! come from ([`ValueSet`]), and [`FlatRecord::PRIMARY_KEY`] names the columns that identify a record.

use std::collections::BTreeSet;
use std::sync::{Mutex, PoisonError};

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::Deserialize;
use std::sync::Arc;

use serde::ser::{Serialize, SerializeStruct, Serializer};

use crate::api_types::ToggleDerivation;
use crate::kinds::FlatTable;
use crate::model::{CountryInfo, NumberedReport};
use crate::parse::tables::{
    ConnectorRow, CountryFactRow, LocalErpRow, MandateRow, MatrixRow, ObligationRow,
    PartnerFlagRow, RegimeRow,
};

/// A text cell; empty when the value is not known: an empty CSV cell, and `null` in JSON (so a JSON
/// column holds strings and nulls, never an empty string that a loader would read as a value).
/// A fact's value is shared with the parsed row, not copied (see `CountryFactRow::value`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Text(Arc<str>);

impl Text {
    /// URLs, separated by single spaces.
    fn urls(urls: &[String]) -> Self {
        Text(urls.join(" ").into())
    }
}

impl From<&String> for Text {
    fn from(text: &String) -> Self {
        Text(text.as_str().into())
    }
}

impl From<&str> for Text {
    fn from(text: &str) -> Self {
        Text(text.into())
    }
}

impl From<&Arc<str>> for Text {
    fn from(text: &Arc<str>) -> Self {
        Text(text.clone())
    }
}

impl From<&Option<String>> for Text {
    fn from(text: &Option<String>) -> Self {
        Text(text.as_deref().unwrap_or_default().into())
    }
}

impl Serialize for Text {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // The csv crate writes `None` as an empty cell.
        match &*self.0 {
            "" => serializer.serialize_none(),
            text => serializer.serialize_str(text),
        }
    }
}

impl JsonSchema for Text {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Text".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": ["string", "null"]})
    }
}

/// An ISO calendar date (`YYYY-MM-DD`), or no date (an empty CSV cell, `null` in JSON): the check dates.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Date(Option<String>);

impl From<&Option<String>> for Date {
    fn from(date: &Option<String>) -> Self {
        Date(date.clone())
    }
}

impl Serialize for Date {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl JsonSchema for Date {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Date".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": ["string", "null"], "format": "date"})
    }
}

/// A yes-or-no cell: `true` or `false` in the CSV, a JSON boolean; none when not established (an empty
/// CSV cell, `null` in JSON), as the API writes it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Flag(Option<bool>);

impl Serialize for Flag {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // The csv crate writes a bool as `true` / `false`, and `None` as an empty cell.
        self.0.serialize(serializer)
    }
}

impl JsonSchema for Flag {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Flag".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": ["boolean", "null"]})
    }
}

/// A whole number: digits in the CSV, a JSON number; none when not known (an empty CSV cell, `null`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Count(Option<u64>);

impl Serialize for Count {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl JsonSchema for Count {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Count".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": ["integer", "null"]})
    }
}

/// The closed set a column's values come from, named by a field's `x-values` (`support_types`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ValueSet {
    /// `e-invoicing`, the matrix's one topic.
    MatrixTopic,
    /// `vat-reporting`, `saf-t`.
    ReportingTopics,
    /// `verified`, `unverified`.
    Status,
    /// rules/vocabulary.toml `evidence`.
    Evidence,
    /// rules/vocabulary.toml `support_types`.
    SupportTypes,
    /// rules/vocabulary.toml `partner_flags`.
    PartnerFlags,
    /// The labels of rules/facts.toml published in the flat file.
    FactLabels,
    /// `native`, `add-on`, `unknown`: the reporting table's ERP columns.
    ReportingErpSupport,
    /// Space-separated codes of rules/vocabulary.toml `connector_tracked_countries`.
    TrackedCountryList,
    /// The `[[obligation]]` ids of rules/toggles.toml.
    Obligations,
    /// A phase's legal statuses.
    PhaseStatuses,
    /// `general`, `sector`, `group`.
    Coverages,
    /// `stated`, `absence`.
    Bases,
    /// `official`, `secondary`, `unverified`.
    Verifications,
    /// The toggles' names.
    ToggleNames,
    /// `day`, `month`, `year`: how precise a date is.
    DatePrecisions,
    /// rules/vocabulary.toml `[einvoicing_models]` ids.
    EinvoicingModels,
    /// Space-separated ids of rules/vocabulary.toml `[einvoicing_formats]`.
    EinvoicingFormatList,
    /// Space-separated ids of rules/vocabulary.toml `[einvoicing_platforms]`.
    EinvoicingPlatformList,
    /// rules/vocabulary.toml `[signature_answers]` ids.
    SignatureAnswers,
    /// rules/vocabulary.toml `[archive_locations]` ids.
    ArchiveLocations,
    /// A whole number of years from 1 to 99 (a range, not a list: the column is an integer).
    YearCount,
}

/// The matrix's `topic`.
pub(crate) const MATRIX_TOPIC: &str = "e-invoicing";

/// Says the record type of each flat table (declared in [`crate::kinds::FlatTable`]):
/// `Variant(Record),`; the matches below are exhaustive, so a table declared there without its record
/// type here does not compile.
macro_rules! flat_records {
    ($($table:ident($record:ident),)*) => {
        impl FlatTable {
            /// The records of one part of this table, before any is added.
            pub(crate) fn no_records(self) -> FlatRecords {
                match self {
                    $(FlatTable::$table => FlatRecords::$table(Vec::new()),)*
                }
            }

            /// The columns that identify a record, in column order.
            pub(crate) fn primary_key(self) -> &'static [&'static str] {
                match self {
                    $(FlatTable::$table => <$record as FlatRecord>::PRIMARY_KEY,)*
                }
            }

            /// The JSON Schema of the record type: each column's description, type and value set (the
            /// reporting table's ERP columns, named by the rules, are not in it).
            pub(crate) fn record_schema(self) -> Schema {
                match self {
                    $(FlatTable::$table => schemars::schema_for!($record),)*
                }
            }

            /// One record with every cell blank: what the header and the columns are read from (a table
            /// with no row still has its header).
            pub(crate) fn prototype(self, reporting_erps: &[String]) -> FlatRecords {
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

            /// The records as items of the file's top-level JSON array (see [`crate::render::envelope::json_items`]).
            pub(crate) fn json_items(&self) -> crate::output::Piece {
                match self {
                    $(FlatRecords::$table(records) => crate::render::envelope::json_items(records, 2),)*
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

flat_records! {
    Matrix(MatrixRecord),
    Reporting(ReportingRecord),
    Connectors(ConnectorRecord),
    Countries(CountryFactRecord),
    LocalErps(LocalErpRecord),
    LocalPartnerFlags(PartnerFlagRecord),
    Obligations(ObligationRecord),
    Toggles(ToggleRecord),
    Regimes(RegimeRecord),
}

/// A record type of a flat table.
pub(crate) trait FlatRecord: Serialize + JsonSchema {
    /// The columns whose values together identify a record (the checks reject a duplicate).
    const PRIMARY_KEY: &'static [&'static str];

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
        // Records are structs of strings, booleans and numbers: the csv serializer accepts each of them.
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
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, JsonSchema)]
pub struct MatrixRecord {
    /// Always `e-invoicing`.
    #[schemars(extend("x-values" = "matrix_topic"))]
    topic: Text,
    /// Lower-case ISO 3166-1 alpha-2 code of the country.
    country_code: Text,
    /// The country's name, as in the country register.
    country: Text,
    /// A short label of the country's e-invoicing mandate.
    short_label: Text,
    /// The country's e-invoicing mandate.
    mandate: Text,
    /// Who and which transactions the mandate covers.
    scope: Text,
    /// The mandate's dates and deadlines.
    deadlines: Text,
    /// The e-invoice format or platform the mandate prescribes.
    format: Text,
    /// Space-separated URLs of the sources backing the mandate columns.
    mandate_source: Text,
    /// How the mandate's source was read: `fetched` (the page itself), `search-extract` (a stored copy or search
    /// excerpt of it) or `unverified` (no source was read); none when not recorded.
    #[schemars(extend("x-values" = "evidence"))]
    mandate_evidence: Text,
    /// ERP id (an id of the ERP register).
    erp: Text,
    /// How the ERP supports the country's e-invoicing; `unknown/unverified` where it is not established.
    #[schemars(extend("x-values" = "support_types"))]
    support_type: Text,
    /// Add-ons, networks or providers named by the source.
    vendors: Text,
    /// Notes on the ERP's support.
    notes: Text,
    /// Space-separated URLs of the sources backing the ERP's support.
    erp_source: Text,
    /// How the ERP support's source was read: `fetched` (the page itself), `search-extract` (a stored copy or search
    /// excerpt of it) or `unverified` (no source was read); none when not recorded.
    #[schemars(extend("x-values" = "evidence"))]
    evidence: Text,
    /// `verified` when the source was read and checked on the check date, else `unverified`.
    #[schemars(extend("x-values" = "status"))]
    status: Text,
    /// The date the source was checked (ISO 8601); none when unverified.
    last_verified: Date,
}

impl MatrixRecord {
    pub fn new(country: &CountryInfo, mandate: &MandateRow, r: &MatrixRow) -> Self {
        MatrixRecord {
            topic: MATRIX_TOPIC.into(),
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
    const PRIMARY_KEY: &'static [&'static str] = &["country_code", "erp"];

    fn prototype(_: &[String]) -> Self {
        Self::default()
    }
}

/// `data/reporting.*`: one record per reporting requirement, with one column per ERP of
/// `rules/vocabulary.toml` `reporting_erps`.
#[derive(Debug, Clone, Default, PartialEq, Eq, JsonSchema)]
pub struct ReportingRecord {
    /// `vat-reporting` (VAT and tax reporting) or `saf-t` (a SAF-T file).
    #[schemars(extend("x-values" = "reporting_topics"))]
    topic: Text,
    /// Lower-case ISO 3166-1 alpha-2 code of the country.
    country_code: Text,
    /// The country's name, as in the country register.
    country: Text,
    /// The report's local name.
    report_local: Text,
    /// The report's name in English.
    report_en: Text,
    /// How often the report is filed.
    frequency: Text,
    /// When the report is due.
    deadline: Text,
    /// How the report is filed: channel and format.
    channel_format: Text,
    /// Space-separated URLs of the official sources.
    source: Text,
    /// The date the source was checked (ISO 8601); none when unverified.
    source_checked: Date,
    /// How the source was read: `fetched` (the page itself), `search-extract` (a stored copy or search
    /// excerpt of it) or `unverified` (no source was read); none when not recorded.
    #[schemars(extend("x-values" = "evidence"))]
    evidence: Text,
    /// `verified` when the source was read and checked on the check date, else `unverified`.
    #[schemars(extend("x-values" = "status"))]
    status: Text,
    /// Each ERP column's name (an ERP id) and value (`native`, `add-on` or `unknown`), in column order.
    #[schemars(skip)]
    erp_support: Vec<(String, Text)>,
    /// Space-separated URLs of the pages backing the ERP columns: every source of the row's ERP cells,
    /// each once, in column order (each cell's own source, grade and quote are in the API's reporting
    /// facts, `details`).
    erp_sources: Text,
    /// Notes on the requirement.
    notes: Text,
}

impl ReportingRecord {
    /// The row's cells are named by the table's ERP columns; the checks hold them to `reporting_erps`.
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
                .cells
                .iter()
                .map(|c| (c.erp.clone(), Text::from(&c.support)))
                .collect(),
            erp_sources: Text::from(report.erp_sources().join(" ").as_str()),
            notes: (&r.notes).into(),
        }
    }
}

impl FlatRecord for ReportingRecord {
    const PRIMARY_KEY: &'static [&'static str] = &["topic", "country_code", "report_en"];

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
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, JsonSchema)]
pub struct ConnectorRecord {
    /// The e-invoicing provider.
    provider: Text,
    /// ERP id (an id of the ERP register).
    erp: Text,
    /// The countries covered, as the source states them.
    countries_covered: Text,
    /// Space-separated lower-case codes of the tracked countries the source lists.
    #[schemars(extend("x-values" = "tracked_country_list"))]
    countries_in_scope: Text,
    /// The kind of connector (for example vendor-branded, certified connector, partner-built).
    connector_type: Text,
    /// Who built the connector.
    built_by: Text,
    /// The send/receive scope.
    direction: Text,
    /// Space-separated URLs of the sources.
    source_urls: Text,
    /// `verified` when the source was read and checked on the check date, else `unverified`.
    #[schemars(extend("x-values" = "status"))]
    status: Text,
    /// The date the source was checked (ISO 8601); none when unverified.
    last_verified: Date,
    /// Notes on the route.
    notes: Text,
}

impl ConnectorRecord {
    pub fn new(r: &ConnectorRow) -> Self {
        ConnectorRecord {
            provider: (&r.provider).into(),
            erp: (&r.erp).into(),
            countries_covered: (&r.countries_covered).into(),
            countries_in_scope: Text(r.countries_in_scope.join(" ").into()),
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
    const PRIMARY_KEY: &'static [&'static str] = &["provider", "erp"];

    fn prototype(_: &[String]) -> Self {
        Self::default()
    }
}

/// `data/countries.*`: one record per country fact.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, JsonSchema)]
pub struct CountryFactRecord {
    /// Lower-case ISO 3166-1 alpha-2 code of the country.
    country_code: Text,
    /// The country's name, as in the country register.
    country: Text,
    /// The country's region.
    region: Text,
    /// What the fact is about: one of the labels of rules/facts.toml published in this file.
    #[schemars(extend("x-values" = "fact_labels"))]
    fact: Text,
    /// The fact.
    value: Text,
    /// Space-separated URLs of the sources.
    source: Text,
    /// How the source was read: `fetched` (the page itself), `search-extract` (a stored copy or search
    /// excerpt of it) or `unverified` (no source was read); none when not recorded.
    #[schemars(extend("x-values" = "evidence"))]
    evidence: Text,
    /// `verified` when the source was read and checked on the check date, else `unverified`.
    #[schemars(extend("x-values" = "status"))]
    status: Text,
    /// The date the source was checked (ISO 8601); none when unverified.
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
    const PRIMARY_KEY: &'static [&'static str] = &["country_code", "fact"];

    fn prototype(_: &[String]) -> Self {
        Self::default()
    }
}

/// `data/local_erps.*`: one record per local ERP.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, JsonSchema)]
pub struct LocalErpRecord {
    /// Lower-case ISO 3166-1 alpha-2 code of the country.
    country_code: Text,
    /// The product's name.
    name: Text,
    /// The market segment it serves.
    segment: Text,
    /// A neutral description (no market share, no pricing).
    description: Text,
    /// The product's official website.
    website: Text,
    /// Space-separated URLs of the sources.
    source: Text,
    /// `verified` when the source was read and checked on the check date, else `unverified`.
    #[schemars(extend("x-values" = "status"))]
    status: Text,
    /// The date the source was checked (ISO 8601); none when unverified.
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
    const PRIMARY_KEY: &'static [&'static str] = &["country_code", "name"];

    fn prototype(_: &[String]) -> Self {
        Self::default()
    }
}

/// `data/local_partner_flags.*`: one record per country and ERP flagged.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, JsonSchema)]
pub struct PartnerFlagRecord {
    /// Lower-case ISO 3166-1 alpha-2 code of the country.
    country_code: Text,
    /// The country's name, as in the country register.
    country: Text,
    /// ERP id (an id of the ERP register).
    erp: Text,
    /// How the ERP is localized in the country.
    #[schemars(extend("x-values" = "partner_flags"))]
    flag: Text,
    /// Notes on the flag.
    note: Text,
    /// Space-separated URLs of the sources (vendor country lists).
    source: Text,
    /// `verified` when the source was read and checked on the check date, else `unverified`.
    #[schemars(extend("x-values" = "status"))]
    status: Text,
    /// The date the source was checked (ISO 8601); none when unverified.
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
    const PRIMARY_KEY: &'static [&'static str] = &["country_code", "erp"];

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
    fn every_column_is_described_and_every_key_and_value_set_is_known() {
        for table in FlatTable::ALL {
            let columns = table.prototype(&["erp-a".to_string()]).columns();
            for column in table.primary_key() {
                assert!(
                    columns.contains(&column.to_string()),
                    "{table:?} key {column}"
                );
            }
            let schema = table.record_schema();
            let fields = schema.get("properties").unwrap().as_object().unwrap();
            for column in columns.iter().filter(|c| *c != "erp-a") {
                let field = &fields[column];
                assert!(field["description"].is_string(), "{table:?} {column}");
                if let Some(set) = field.get("x-values") {
                    let parsed = serde_json::from_value::<ValueSet>(set.clone());
                    assert!(parsed.is_ok(), "{table:?} {column}: {set}");
                }
            }
        }
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

/// `data/obligations.*`: one record per phase of an obligation, with whom it covers and its provenance.
/// Not one of the SPEC's six tables: an addition, so its columns are ours to choose.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, JsonSchema)]
pub struct ObligationRecord {
    /// The phase's id, `<country>-<obligation>-<phase>`: stable (calendars use it as the event's UID).
    phase_id: Text,
    /// Lower-case ISO 3166-1 alpha-2 code of the country.
    country_code: Text,
    /// The country's name, as in the country register.
    country: Text,
    /// The obligation: an `[[obligation]]` id of rules/toggles.toml.
    #[schemars(extend("x-values" = "obligations"))]
    obligation: Text,
    /// The phase's slug, unique per country and obligation (`main` for a single phase).
    phase: Text,
    /// The phase's legal status as read: `in-force`, `enacted`, `enacted-date-pending`, `planned`, `none`
    /// (there is no such obligation) or `unclear` (looked at, not settled: the only unknown).
    #[schemars(extend("x-values" = "phase_statuses"))]
    legal_status: Text,
    /// The date the phase applies from, as precise as its source: `YYYY-MM-DD`, `YYYY-MM` or `YYYY` (a month
    /// or a year stands for its whole span, never for its first day); none when not given.
    applies_from: Text,
    /// How precise `applies_from` is: `day` (`YYYY-MM-DD`), `month` (`YYYY-MM`) or `year` (`YYYY`); none
    /// when there is no date.
    #[schemars(extend("x-values" = "date_precisions"))]
    applies_from_precision: Text,
    /// Who and what the phase covers, in plain words.
    scope: Text,
    /// `general`, or `sector` / `group` when the phase applies only to a sector or a group of taxpayers.
    #[schemars(extend("x-values" = "coverages"))]
    coverage: Text,
    /// What a `sector` or `group` phase is limited to, as pages show it after "yes"; none when general.
    limit: Text,
    /// What a `none` phase rests on: `stated` (a source says there is no such obligation) or `absence` (an
    /// absence check: missing from a dated, comprehensive list, and a national page read names none).
    #[schemars(extend("x-values" = "bases"))]
    basis: Text,
    /// Space-separated URLs of the sources that were read.
    source: Text,
    /// How the source was read: `fetched` (the page itself), `search-extract` (a stored copy or search
    /// excerpt of it) or `unverified` (no source was read).
    #[schemars(extend("x-values" = "evidence"))]
    evidence: Text,
    /// The grade: `official` (an official or vendor page), `secondary` (a reputable secondary page) or
    /// `unverified` (a weak source, or none on an unknown).
    #[schemars(extend("x-values" = "verifications"))]
    verification: Text,
    /// The date the source was read (ISO 8601); none when no source was read.
    last_verified: Date,
    /// What else the curator recorded: for an unclear phase what was looked at, for an absence check which
    /// list and page.
    notes: Text,
    /// The words of the first source that settle the phase, copied from what was read; none when no
    /// sentence was read (the phase is then not graded `official` or `secondary`).
    quote: Text,
}

impl ObligationRecord {
    pub fn new(country: &CountryInfo, r: &ObligationRow) -> Self {
        ObligationRecord {
            phase_id: Text(r.id().into()),
            country_code: (&country.code).into(),
            country: (&country.name).into(),
            obligation: (&r.obligation).into(),
            phase: (&r.phase).into(),
            legal_status: r.status.as_str().into(),
            applies_from: Text(
                r.applies_from
                    .map(|d| d.to_string())
                    .unwrap_or_default()
                    .into(),
            ),
            applies_from_precision: r.applies_from.map_or("", |d| d.precision()).into(),
            scope: (&r.scope).into(),
            coverage: r.coverage.as_str().into(),
            limit: (&r.limit).into(),
            basis: r.basis.map_or("", |b| b.as_str()).into(),
            source: Text::urls(&r.source),
            evidence: (&r.evidence).into(),
            verification: r.verification.as_str().into(),
            last_verified: (&r.last_verified).into(),
            notes: (&r.notes).into(),
            quote: (&r.quote).into(),
        }
    }
}

impl FlatRecord for ObligationRecord {
    const PRIMARY_KEY: &'static [&'static str] = &["phase_id"];

    fn prototype(_: &[String]) -> Self {
        Self::default()
    }
}

/// `data/toggles.*`: one record per country and toggle: its value on the reference date, the phase that
/// set it and what that phase rests on. Not one of the SPEC's six tables.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, JsonSchema)]
pub struct ToggleRecord {
    /// Lower-case ISO 3166-1 alpha-2 code of the country.
    country_code: Text,
    /// The country's name, as in the country register.
    country: Text,
    /// The toggle's name, as in the API's `toggles`.
    #[schemars(extend("x-values" = "toggle_names"))]
    toggle: Text,
    /// `true` or `false`; none when not established (null in the API).
    value: Flag,
    /// On a `true` set by a `sector` or `group` phase: what it is limited to; none otherwise.
    limit: Text,
    /// `true` when a `false` rests on an absence check rather than on a source that says so; else
    /// `false`.
    rests_on_absence: Flag,
    /// The id of the phase that set the value (a `phase_id` of obligations); none when the value is null.
    phase_id: Text,
    /// The date the phases are judged against (rules/site.toml's reference date).
    reference_date: Date,
    /// Why the value is null, when it is.
    why_null: Text,
    /// Space-separated URLs of the sources of the phase that set it.
    source: Text,
    /// How that source was read: `fetched`, `search-extract` or `unverified`.
    #[schemars(extend("x-values" = "evidence"))]
    evidence: Text,
    /// The grade of that phase: `official`, `secondary` or `unverified`.
    #[schemars(extend("x-values" = "verifications"))]
    verification: Text,
    /// The date that source was read (ISO 8601).
    last_verified: Date,
}

impl ToggleRecord {
    pub(crate) fn new(country: &CountryInfo, d: &ToggleDerivation) -> Self {
        ToggleRecord {
            country_code: (&country.code).into(),
            country: (&country.name).into(),
            toggle: (&d.toggle).into(),
            value: Flag(d.value),
            limit: (&d.limit).into(),
            rests_on_absence: Flag(Some(d.rests_on_absence)),
            phase_id: (&d.phase_id).into(),
            reference_date: Date(Some(d.reference_date.clone())),
            why_null: (&d.why_null).into(),
            source: Text::urls(&d.source_urls),
            evidence: (&d.evidence).into(),
            verification: d.verification.map_or("", |v| v.as_str()).into(),
            last_verified: (&d.last_checked).into(),
        }
    }
}

impl FlatRecord for ToggleRecord {
    const PRIMARY_KEY: &'static [&'static str] = &["country_code", "toggle"];

    fn prototype(_: &[String]) -> Self {
        Self::default()
    }
}

/// `data/regimes.*`: one record per country and obligation: how it works, each answer an id of its set
/// in rules/vocabulary.toml (the API gives the labels), an unknown answer empty. Not one of the SPEC's six
/// tables.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, JsonSchema)]
pub struct RegimeRecord {
    /// Lower-case ISO 3166-1 alpha-2 code of the country.
    country_code: Text,
    /// The country's name, as in the country register.
    country: Text,
    /// The obligation: an `[[obligation]]` id of rules/toggles.toml that the country's phases record.
    #[schemars(extend("x-values" = "obligations"))]
    obligation: Text,
    /// The e-invoicing model: an id of rules/vocabulary.toml `[einvoicing_models]` (clearance, reporting,
    /// network, five corners, post-audit); none when unknown.
    #[schemars(extend("x-values" = "einvoicing_models"))]
    model: Text,
    /// The e-invoice formats prescribed or accepted: space-separated ids of `[einvoicing_formats]`; none
    /// when unknown.
    #[schemars(extend("x-values" = "einvoicing_format_list"))]
    formats: Text,
    /// The platforms or channels invoices go through: space-separated ids of `[einvoicing_platforms]`; none
    /// when unknown.
    #[schemars(extend("x-values" = "einvoicing_platform_list"))]
    platforms: Text,
    /// Whether an electronic signature or seal is required: an id of `[signature_answers]`; none when
    /// unknown.
    #[schemars(extend("x-values" = "signature_answers"))]
    signature: Text,
    /// How many years invoices are kept (1 to 99); none when unknown.
    #[schemars(extend("x-values" = "year_count"))]
    archive_years: Count,
    /// Where invoices may be stored: an id of `[archive_locations]`; none when unknown.
    #[schemars(extend("x-values" = "archive_locations"))]
    archive_location: Text,
    /// Space-separated URLs of the sources that were read; none on a record whose answers are all unknown.
    source: Text,
    /// How the source was read: `fetched` (the page itself), `search-extract` (a stored copy or search
    /// excerpt of it) or `unverified` (no source was read).
    #[schemars(extend("x-values" = "evidence"))]
    evidence: Text,
    /// The grade: `official`, `secondary` or `unverified`.
    #[schemars(extend("x-values" = "verifications"))]
    verification: Text,
    /// The date the source was read (ISO 8601); none when no source was read.
    last_verified: Date,
    /// What else the curator recorded; on a record whose answers are all unknown, what was looked at.
    notes: Text,
    /// The words of the first source that settle the model, copied from what was read; none when no
    /// sentence was read.
    quote: Text,
    /// Where the obligation stands on the reference date, from its phases: `in-force`; else the status
    /// of its next phase (`enacted`, `enacted-date-pending`, `planned`); else `none` or `unclear`. A
    /// record of an obligation not yet in force describes a way of invoicing still to come.
    #[schemars(extend("x-values" = "phase_statuses"))]
    obligation_status: Text,
    /// The date the obligation has been in force since, or its next phase's date, as precise as its
    /// source (`YYYY-MM-DD`, `YYYY-MM` or `YYYY`); none without one.
    obligation_from: Text,
}

impl RegimeRecord {
    pub fn new(
        country: &CountryInfo,
        r: &RegimeRow,
        standing: crate::derived::regimes::Standing,
    ) -> Self {
        let list =
            |ids: &Option<Vec<String>>| Text(ids.as_deref().unwrap_or_default().join(" ").into());
        RegimeRecord {
            country_code: (&country.code).into(),
            country: (&country.name).into(),
            obligation: (&r.obligation).into(),
            model: (&r.model).into(),
            formats: list(&r.formats),
            platforms: list(&r.platforms),
            signature: (&r.signature).into(),
            archive_years: Count(r.archive_years.map(u64::from)),
            archive_location: (&r.archive_location).into(),
            source: Text::urls(&r.source),
            evidence: (&r.evidence).into(),
            verification: r.verification.as_str().into(),
            last_verified: (&r.last_verified).into(),
            notes: (&r.notes).into(),
            quote: (&r.quote).into(),
            obligation_status: standing.status.as_str().into(),
            obligation_from: Text(
                standing
                    .from
                    .map(|d| d.to_string())
                    .unwrap_or_default()
                    .into(),
            ),
        }
    }
}

impl FlatRecord for RegimeRecord {
    const PRIMARY_KEY: &'static [&'static str] = &["country_code", "obligation"];

    fn prototype(_: &[String]) -> Self {
        Self::default()
    }
}
