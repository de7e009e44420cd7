//! `data/datapackage.json`, a Frictionless Tabular Data Package, and the JSON Schema of the flat JSON
//! records that openapi.json gives: both describe each column from its record type (see [`records`]).
//!
//! The package declares every file as a resource: each CSV with its size and SHA-256 (so the package
//! changes when, and only when, a file's bytes do), each JSON file with the same schema, and the two
//! registers inline, so that every `country_code` and `erp` is a foreign key Frictionless can resolve.
//!
//! [`records`]: super::records

use serde_json::{Map, Value, json};

use super::records::{MATRIX_TOPIC, ValueSet};
use super::{FlatTable, StemKey, flat_columns};
use crate::api_types::{FactStatus, Toggles};
use crate::model::{countries, erp_name, erps};
use crate::parse::rules::{fact_labels, obligation_rules, site_rules, vocabulary};
use crate::parse::tables::{
    Basis, Coverage, PhaseStatus, REPORTING_ERP_SUPPORT, REPORTING_TOPICS, Verification,
};

/// The inline resources the foreign keys refer to.
const COUNTRY_REGISTER: &str = "country-register";
const ERP_REGISTER: &str = "erp-register";

/// A column of a flat table, described.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Column {
    pub name: String,
    pub description: String,
    /// What its cells hold.
    pub kind: ColumnKind,
    /// The closed set the values come from, if any.
    pub values: Option<ValueSet>,
}

/// What a column's cells hold, read from its record field's JSON Schema type: every kind may be
/// unknown (an empty CSV cell, `null` in JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ColumnKind {
    Text,
    /// An ISO calendar date, `YYYY-MM-DD`.
    Date,
    /// `true` / `false` in the CSV, a JSON boolean.
    Boolean,
    /// A whole number.
    Integer,
}

impl ColumnKind {
    fn of(field: &Value) -> ColumnKind {
        let types: Vec<&str> = match field.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if types.contains(&"boolean") {
            ColumnKind::Boolean
        } else if types.contains(&"integer") {
            ColumnKind::Integer
        } else if field.get("format").and_then(Value::as_str) == Some("date") {
            ColumnKind::Date
        } else {
            ColumnKind::Text
        }
    }

    /// The Table Schema type.
    fn table_type(self) -> &'static str {
        match self {
            ColumnKind::Text => "string",
            ColumnKind::Date => "date",
            ColumnKind::Boolean => "boolean",
            ColumnKind::Integer => "integer",
        }
    }

    /// The JSON Schema type of a JSON file's cell (null when unknown).
    fn json_type(self) -> Value {
        let name = match self {
            ColumnKind::Text | ColumnKind::Date => "string",
            ColumnKind::Boolean => "boolean",
            ColumnKind::Integer => "integer",
        };
        json!([name, "null"])
    }
}

/// The spelling of a boolean in the CSV files: what `trueValues` and `falseValues` declare.
const CSV_TRUE: &str = "true";
const CSV_FALSE: &str = "false";

/// The columns of a table in file order, described by the record type's fields (the reporting table's
/// ERP columns, named by the rules, are described here).
pub(crate) fn table_columns(db: &dyn salsa::Database, table: FlatTable) -> Vec<Column> {
    let schema = table.record_schema();
    let fields = schema.get("properties").and_then(Value::as_object);
    flat_columns(db, StemKey::new(db, table.stem().to_string()))
        .iter()
        .map(|name| match fields.and_then(|f| f.get(name)) {
            Some(field) => Column {
                name: name.clone(),
                description: one_line(field.get("description").and_then(Value::as_str)),
                kind: ColumnKind::of(field),
                values: field
                    .get("x-values")
                    .and_then(|set| serde_json::from_value(set.clone()).ok()),
            },
            None => Column {
                name: name.clone(),
                description: format!(
                    "How {} supports the requirement: native, add-on or unknown.",
                    erp_name(db, name)
                ),
                kind: ColumnKind::Text,
                values: Some(ValueSet::ReportingErpSupport),
            },
        })
        .collect()
}

/// A doc comment as one line (schemars keeps the comment's line breaks).
fn one_line(text: Option<&str>) -> String {
    text.unwrap_or_default()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The values a set allows.
pub(crate) fn allowed_values(db: &dyn salsa::Database, set: ValueSet) -> Vec<String> {
    let vocabulary = &vocabulary(db).value;
    let strings = |values: &[&str]| values.iter().map(|v| v.to_string()).collect();
    match set {
        ValueSet::MatrixTopic => strings(&[MATRIX_TOPIC]),
        ValueSet::ReportingTopics => strings(REPORTING_TOPICS),
        ValueSet::Status => strings(&[
            FactStatus::Verified.as_str(),
            FactStatus::Unverified.as_str(),
        ]),
        ValueSet::Evidence => vocabulary.evidence.clone(),
        ValueSet::SupportTypes => vocabulary.support_types.clone(),
        ValueSet::PartnerFlags => vocabulary.partner_flags.clone(),
        ValueSet::FactLabels => fact_labels(db)
            .value
            .iter()
            .filter(|label| label.flat_file)
            .map(|label| label.label.clone())
            .collect(),
        ValueSet::ReportingErpSupport => strings(REPORTING_ERP_SUPPORT),
        ValueSet::TrackedCountryList => vocabulary.connector_tracked_countries.clone(),
        ValueSet::Obligations => obligation_rules(db).iter().map(|o| o.id.clone()).collect(),
        ValueSet::PhaseStatuses => strings(&PhaseStatus::NAMES),
        ValueSet::Coverages => strings(&Coverage::NAMES),
        ValueSet::Bases => strings(&Basis::NAMES),
        ValueSet::Verifications => strings(&Verification::NAMES),
        ValueSet::ToggleNames => strings(&Toggles::NAMES),
        ValueSet::DatePrecisions => strings(&["day", "month", "year"]),
        ValueSet::EinvoicingModels => vocabulary.einvoicing_models.ids(),
        ValueSet::EinvoicingFormatList => vocabulary.einvoicing_formats.ids(),
        ValueSet::EinvoicingPlatformList => vocabulary.einvoicing_platforms.ids(),
        ValueSet::SignatureAnswers => vocabulary.signature_answers.ids(),
        ValueSet::ArchiveLocations => vocabulary.archive_locations.ids(),
        ValueSet::YearCount => (YEAR_COUNT.0..=YEAR_COUNT.1)
            .map(|y| y.to_string())
            .collect(),
    }
}

/// The range of [`ValueSet::YearCount`].
const YEAR_COUNT: (u64, u64) = (1, 99);

/// The pattern of a space-separated list of `values` (implicitly anchored, as Table Schema and XML
/// Schema patterns are).
fn list_pattern(values: &[String]) -> String {
    let one: Vec<String> = values.iter().map(|v| regex::escape(v)).collect();
    let one = format!("({})", one.join("|"));
    format!("{one}( {one})*")
}

/// A column's Table Schema constraints: its closed set (an enum, or a pattern for a list), and
/// `required` for the primary key.
fn constraints(db: &dyn salsa::Database, column: &Column, key: &[&str]) -> Map<String, Value> {
    let mut constraints = Map::new();
    if key.contains(&column.name.as_str()) {
        constraints.insert("required".into(), json!(true));
    }
    match column.values {
        // A number's set is a range.
        Some(ValueSet::YearCount) => {
            constraints.insert("minimum".into(), json!(YEAR_COUNT.0));
            constraints.insert("maximum".into(), json!(YEAR_COUNT.1));
        }
        Some(set) if set.is_list() => {
            let pattern = list_pattern(&allowed_values(db, set));
            constraints.insert("pattern".into(), json!(pattern));
        }
        Some(set) => {
            constraints.insert("enum".into(), json!(allowed_values(db, set)));
        }
        None => {}
    }
    constraints
}

impl ValueSet {
    /// Whether a cell holds a space-separated list of the set's values (else one value).
    fn is_list(self) -> bool {
        matches!(
            self,
            ValueSet::TrackedCountryList
                | ValueSet::EinvoicingFormatList
                | ValueSet::EinvoicingPlatformList
        )
    }
}

/// The foreign keys of a table: `country_code` (with `country`, the name, where the table has it) and
/// `erp` refer to the registers; a toggle's `phase_id` to the obligations table.
fn foreign_keys(table: FlatTable, columns: &[Column]) -> Vec<Value> {
    let has = |name: &str| columns.iter().any(|c| c.name == name);
    let mut keys = Vec::new();
    if has("country_code") && has("country") {
        keys.push(json!({
            "fields": ["country_code", "country"],
            "reference": {"resource": COUNTRY_REGISTER, "fields": ["code", "name"]},
        }));
    } else if has("country_code") {
        keys.push(json!({
            "fields": ["country_code"],
            "reference": {"resource": COUNTRY_REGISTER, "fields": ["code"]},
        }));
    }
    if has("erp") {
        keys.push(json!({
            "fields": ["erp"],
            "reference": {"resource": ERP_REGISTER, "fields": ["id"]},
        }));
    }
    // A regime is of an obligation the country's phases record: records of the obligations table.
    if table == FlatTable::Regimes {
        keys.push(json!({
            "fields": ["country_code", "obligation"],
            "reference": {"resource": FlatTable::Obligations.stem(), "fields": ["country_code", "obligation"]},
        }));
    }
    // A toggle names the phase that set it: a record of the obligations table.
    if table == FlatTable::Toggles {
        keys.push(json!({
            "fields": ["phase_id"],
            "reference": {"resource": FlatTable::Obligations.stem(), "fields": ["phase_id"]},
        }));
    }
    keys
}

/// The Table Schema of a flat table (the CSV and the JSON file share it).
fn table_schema(db: &dyn salsa::Database, table: FlatTable) -> Value {
    let columns = table_columns(db, table);
    let key = table.primary_key();
    let fields: Vec<Value> = columns
        .iter()
        .map(|column| {
            let mut field = json!({
                "name": column.name,
                "type": column.kind.table_type(),
                "description": column.description,
            });
            if column.kind == ColumnKind::Boolean {
                field["trueValues"] = json!([CSV_TRUE]);
                field["falseValues"] = json!([CSV_FALSE]);
            }
            let constraints = constraints(db, column, key);
            if !constraints.is_empty() {
                field["constraints"] = Value::Object(constraints);
            }
            field
        })
        .collect();
    json!({
        "fields": fields,
        "missingValues": [""],
        "primaryKey": key,
        "foreignKeys": foreign_keys(table, &columns),
    })
}

/// How the size and hash of a published CSV file are read (see [`datapackage`]).
pub(crate) type CsvDigest = for<'db> fn(&'db dyn salsa::Database, StemKey<'db>) -> &'db FileDigest;

/// The size and SHA-256 of a published CSV file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileDigest {
    pub bytes: u64,
    /// `sha256:<hex>`, as Frictionless writes a hash.
    pub hash: String,
}

/// The registers, inline: what the foreign keys refer to.
fn register_resources(db: &dyn salsa::Database) -> [Value; 2] {
    let countries: Vec<Value> = countries(db)
        .iter()
        .map(|c| json!({"code": c.code, "name": c.name}))
        .collect();
    let erps: Vec<Value> = erps(db)
        .iter()
        .map(|e| json!({"id": e.id, "name": e.name}))
        .collect();
    [
        json!({
            "name": COUNTRY_REGISTER,
            "profile": "tabular-data-resource",
            "title": "Countries",
            "description": "The countries of the service: what every country_code (with its country name) refers to.",
            "data": countries,
            "schema": {
                "fields": [
                    {"name": "code", "type": "string", "description": "Lower-case ISO 3166-1 alpha-2 code of the country.", "constraints": {"required": true}},
                    {"name": "name", "type": "string", "description": "The country's name.", "constraints": {"required": true}},
                ],
                "primaryKey": ["code"],
            },
        }),
        json!({
            "name": ERP_REGISTER,
            "profile": "tabular-data-resource",
            "title": "ERP products",
            "description": "The ERP products of the service: what every erp refers to.",
            "data": erps,
            "schema": {
                "fields": [
                    {"name": "id", "type": "string", "description": "The ERP's id.", "constraints": {"required": true}},
                    {"name": "name", "type": "string", "description": "The product's name.", "constraints": {"required": true}},
                ],
                "primaryKey": ["id"],
            },
        }),
    ]
}

/// What a reader validating the package needs to know: Frictionless reads JSON tables only with its
/// `json` extra (so its JSON format's documentation: `pip install 'frictionless[json]'`).
const FRICTIONLESS_JSON: &str = "Validating the JSON resources with Frictionless needs its JSON extra: pip install 'frictionless[json]'.";

/// `datapackage.json`; `csv_digest` is the size and hash of a published CSV file (the dispatcher's
/// [`crate::render::published::csv_digest`], which reads the file as it is published).
pub(crate) fn datapackage(
    db: &dyn salsa::Database,
    csv_digest: CsvDigest,
) -> crate::output::Rendered {
    let site = &site_rules(db).value;
    let licence = &site.data_licence;
    let mut resources: Vec<Value> = Vec::new();
    for table in FlatTable::ALL {
        let stem = table.stem();
        let name = stem.replace('_', "-");
        let schema = table_schema(db, table);
        let digest = csv_digest(db, StemKey::new(db, stem.to_string()));
        resources.push(json!({
            "name": name,
            "path": format!("{stem}.csv"),
            "profile": "tabular-data-resource",
            "title": stem,
            "description": table.description(),
            "format": "csv",
            "mediatype": "text/csv",
            "encoding": "utf-8",
            "bytes": digest.bytes,
            "hash": digest.hash,
            "schema": schema,
        }));
        // Frictionless (5.21) reads a JSON file through ijson, which bypasses the byte stream it counts and
        // hashes: a JSON resource that declares its size or hash fails validation with "actual is None"
        // (measured). So none is declared; the file changes with its CSV, whose size and hash are.
        resources.push(json!({
            "name": format!("{name}-json"),
            "path": format!("{stem}.json"),
            "profile": "tabular-data-resource",
            "title": format!("{stem} (JSON)"),
            "description": format!("{} The records of {stem}.csv as a JSON array of objects; an unknown value is null. {FRICTIONLESS_JSON}", table.description()),
            "format": "json",
            "mediatype": "application/json",
            "encoding": "utf-8",
            "schema": schema,
        }));
    }
    resources.extend(register_resources(db));
    let package = json!({
        "profile": "tabular-data-package",
        "name": "locref",
        "title": site.title,
        "description": format!("{} {FRICTIONLESS_JSON}", site.description),
        "homepage": format!("{}/", crate::model::base_url(db)),
        "version": site.version,
        "licenses": [{"name": licence.name.replace(' ', "-"), "path": licence.url, "title": licence.name}],
        "sources": [{"title": licence.attribution}],
        "resources": resources,
    });
    crate::output::Rendered::new(crate::render::envelope::json_bytes(&package))
}

/// The JSON Schema of a flat JSON file (openapi.json): an array of records with exactly the columns, each
/// a string, boolean or integer as its column holds, or null, with its description, and its closed set
/// where it has one.
pub fn data_json_schema(db: &dyn salsa::Database, key: StemKey<'_>) -> Value {
    let columns = key
        .table(db)
        .map(|table| table_columns(db, table))
        .unwrap_or_default();
    let properties: Map<String, Value> = columns
        .iter()
        .map(|column| {
            let mut property =
                json!({"type": column.kind.json_type(), "description": column.description});
            if column.kind == ColumnKind::Date {
                property["format"] = json!("date");
            }
            match column.values {
                Some(ValueSet::YearCount) => {
                    property["minimum"] = json!(YEAR_COUNT.0);
                    property["maximum"] = json!(YEAR_COUNT.1);
                }
                Some(set) if set.is_list() => {
                    let pattern = list_pattern(&allowed_values(db, set));
                    property["pattern"] = json!(format!("^{pattern}$"));
                }
                Some(set) => {
                    let mut values: Vec<Value> = allowed_values(db, set)
                        .into_iter()
                        .map(Value::from)
                        .collect();
                    values.push(Value::Null);
                    property["enum"] = Value::Array(values);
                }
                None => {}
            }
            (column.name.clone(), property)
        })
        .collect();
    let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
    let record = json!({"type": "object", "properties": properties, "required": names, "additionalProperties": false});
    json!({"type": "array", "items": record})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_pattern_accepts_lists_of_the_values_only() {
        let pattern = list_pattern(&["at".to_string(), "be".to_string()]);
        let re = regex::Regex::new(&format!("^{pattern}$")).unwrap();
        for ok in ["at", "be", "at be", "be at be"] {
            assert!(re.is_match(ok), "{ok}");
        }
        for bad in ["", "de", "at  be", "at,be", " at", "atbe"] {
            assert!(!re.is_match(bad), "{bad}");
        }
    }
}
