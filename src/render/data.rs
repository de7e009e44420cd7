//! The flat data files under `/data/`: each source table validated, joined with the registers, sorted and
//! written with exactly the SPEC's columns, as JSON (an array of records, every value a string, the same
//! as its CSV cell) and as CSV; plus a Frictionless `datapackage.json` and the licence text.

use serde_json::{Map, Value, json};

use super::{Rendered, json_bytes, json_items, splice_items};
use crate::model::{
    CountryKey, countries, country_facts_of, country_info, country_local_erps, country_mandate,
    country_matrix, country_partner_flags, country_reporting, erp_rank, reporting_erps,
};
use crate::parse::rules::site_rules;
use crate::parse::tables::connector_rows;
use crate::routes::STEMS;

/// A flat data table as a query key (`matrix`).
#[salsa::interned(debug)]
pub struct StemKey<'db> {
    #[returns(ref)]
    pub stem: String,
}

/// The columns of each flat file, in the SPEC's order (the reporting table's ERP columns come from the
/// rules and stand in place of `<erps>`).
pub fn stem_columns(stem: &str) -> &'static [&'static str] {
    match stem {
        "matrix" => &[
            "topic",
            "country_code",
            "country",
            "short_label",
            "mandate",
            "scope",
            "deadlines",
            "format",
            "mandate_source",
            "mandate_evidence",
            "erp",
            "support_type",
            "vendors",
            "notes",
            "erp_source",
            "evidence",
            "status",
            "last_verified",
        ],
        "reporting" => &[
            "topic",
            "country_code",
            "country",
            "report_local",
            "report_en",
            "frequency",
            "deadline",
            "channel_format",
            "source",
            "source_checked",
            "evidence",
            "status",
            "<erps>",
            "erp_sources",
            "notes",
        ],
        "connectors" => &[
            "provider",
            "erp",
            "countries_covered",
            "countries_in_scope",
            "connector_type",
            "built_by",
            "direction",
            "source_urls",
            "status",
            "last_verified",
            "notes",
        ],
        "countries" => &[
            "country_code",
            "country",
            "region",
            "fact",
            "value",
            "source",
            "evidence",
            "status",
            "last_verified",
        ],
        "local_erps" => &[
            "country_code",
            "name",
            "segment",
            "description",
            "website",
            "source",
            "status",
            "last_verified",
        ],
        "local_partner_flags" => &[
            "country_code",
            "country",
            "erp",
            "flag",
            "note",
            "source",
            "status",
            "last_verified",
        ],
        _ => &[],
    }
}

/// What each flat file holds (datapackage.json, data/LICENSE.txt).
pub fn stem_description(stem: &str) -> &'static str {
    match stem {
        "matrix" => {
            "E-invoicing, one record per country and ERP: the country's mandate and the ERP's support."
        }
        "reporting" => {
            "VAT and tax reporting and SAF-T requirements, with the support of ten ERPs."
        }
        "connectors" => "E-invoicing provider and ERP connector routes.",
        "countries" => "One record per country fact.",
        "local_erps" => "Local and regional ERP and accounting systems.",
        "local_partner_flags" => {
            "Country and global ERP flags: where localization is through local partners or add-ons."
        }
        _ => "",
    }
}

fn join(urls: &[String]) -> String {
    urls.join(" ")
}

fn date(d: &Option<String>) -> String {
    d.clone().unwrap_or_default()
}

/// The columns of a flat table (the reporting table's ERP columns come from the rules).
#[salsa::tracked(returns(ref))]
pub fn flat_columns<'db>(db: &'db dyn salsa::Database, key: StemKey<'db>) -> Vec<String> {
    let mut columns: Vec<String> = Vec::new();
    for column in stem_columns(key.stem(db)) {
        if *column == "<erps>" {
            columns.extend(reporting_erps(db).iter().cloned());
        } else {
            columns.push(column.to_string());
        }
    }
    columns
}

/// A part of a flat table: one country's rows (every table but `connectors` is sorted by country first),
/// or the whole `connectors` table (with an empty `country`). Each part is rendered on its own and the
/// files are spliced from the parts, so an edit of one country's row re-renders one part.
#[salsa::interned(debug)]
pub struct FlatPart<'db> {
    #[returns(ref)]
    pub stem: String,
    #[returns(ref)]
    pub country: String,
}

/// The parts of a flat table, in file order.
fn flat_parts<'db>(db: &'db dyn salsa::Database, stem: &str) -> Vec<FlatPart<'db>> {
    if stem == "connectors" {
        return vec![FlatPart::new(db, stem.to_string(), String::new())];
    }
    countries(db)
        .iter()
        .map(|c| FlatPart::new(db, stem.to_string(), c.code.clone()))
        .collect()
}

/// The number of rows of a flat table: a projection, so the index does not re-run when a row's text changes.
#[salsa::tracked(returns(copy))]
pub fn flat_row_count<'db>(db: &'db dyn salsa::Database, key: StemKey<'db>) -> usize {
    flat_parts(db, key.stem(db))
        .into_iter()
        .map(|part| flat_rows(db, part).len())
        .sum()
}

/// The cells of one part of a flat table, in the order of [`flat_columns`], read from the narrow
/// per-country projections of the model.
#[salsa::tracked(returns(ref))]
pub fn flat_rows<'db>(db: &'db dyn salsa::Database, part: FlatPart<'db>) -> Vec<Vec<String>> {
    if part.stem(db) == "connectors" {
        return connector_flat_rows(db);
    }
    let key = CountryKey::new(db, part.country(db).clone());
    let Some(country) = country_info(db, key) else {
        return Vec::new();
    };
    let code = &country.code;
    match part.stem(db).as_str() {
        "matrix" => {
            let mandate = country_mandate(db, key).clone().unwrap_or_default();
            country_matrix(db, key)
                .iter()
                .map(|r| {
                    vec![
                        "e-invoicing".into(),
                        code.clone(),
                        country.name.clone(),
                        mandate.short_label.clone(),
                        mandate.mandate.clone(),
                        mandate.scope.clone(),
                        mandate.deadlines.clone(),
                        mandate.format.clone(),
                        join(&mandate.mandate_source),
                        mandate.mandate_evidence.clone(),
                        r.erp.clone(),
                        r.support_type.clone(),
                        r.vendors.clone(),
                        r.notes.clone(),
                        join(&r.erp_source),
                        r.evidence.clone(),
                        r.verification.status().as_str().into(),
                        date(&r.last_verified),
                    ]
                })
                .collect()
        }
        // Rows of one topic keep their file order (their `n`); VAT reporting comes before SAF-T.
        "reporting" => country_reporting(db, key)
            .iter()
            .map(|report| {
                let r = &report.row;
                let mut cells = vec![
                    r.topic.clone(),
                    code.clone(),
                    country.name.clone(),
                    r.report_local.clone(),
                    r.report_en.clone(),
                    r.frequency.clone(),
                    r.deadline.clone(),
                    r.channel_format.clone(),
                    join(&r.source),
                    date(&r.source_checked),
                    r.evidence.clone(),
                    r.verification.status().as_str().into(),
                ];
                cells.extend(r.erp_support.iter().cloned());
                cells.extend([join(&r.erp_sources), r.notes.clone()]);
                cells
            })
            .collect(),
        // The key facts the rules publish in the flat file, in `rules/facts.toml` order.
        "countries" => country_facts_of(db, key)
            .iter()
            .filter(|f| f.label.flat_file)
            .map(|f| {
                let r = &f.row;
                vec![
                    code.clone(),
                    country.name.clone(),
                    country.region.clone(),
                    r.fact.clone(),
                    r.value.clone(),
                    join(&r.source),
                    r.evidence.clone(),
                    r.verification.status().as_str().into(),
                    date(&r.last_verified),
                ]
            })
            .collect(),
        "local_erps" => country_local_erps(db, key)
            .iter()
            .map(|r| {
                vec![
                    code.clone(),
                    r.name.clone(),
                    r.segment.clone(),
                    r.description.clone(),
                    r.website.clone().unwrap_or_default(),
                    join(&r.source),
                    r.verification.status().as_str().into(),
                    date(&r.last_verified),
                ]
            })
            .collect(),
        "local_partner_flags" => {
            let mut rows: Vec<_> = country_partner_flags(db, key).iter().collect();
            rows.sort_by_key(|r| erp_rank(db, &r.erp));
            rows.into_iter()
                .map(|r| {
                    vec![
                        code.clone(),
                        country.name.clone(),
                        r.erp.clone(),
                        r.flag.clone(),
                        r.note.clone(),
                        join(&r.source),
                        r.verification.status().as_str().into(),
                        date(&r.last_verified),
                    ]
                })
                .collect()
        }
        _ => Vec::new(),
    }
}

/// The connectors table, sorted by provider and ERP: small, and not keyed by country.
fn connector_flat_rows(db: &dyn salsa::Database) -> Vec<Vec<String>> {
    let mut rows: Vec<_> = connector_rows(db).value.iter().map(|r| &r.row).collect();
    rows.sort_by_key(|r| (r.provider.to_lowercase(), erp_rank(db, &r.erp)));
    rows.into_iter()
        .map(|r| {
            vec![
                r.provider.clone(),
                r.erp.clone(),
                r.countries_covered.clone(),
                r.countries_in_scope.join(" "),
                r.connector_type.clone(),
                r.built_by.clone(),
                r.direction.clone(),
                join(&r.source_urls),
                r.verification.status().as_str().into(),
                date(&r.last_verified),
                r.notes.clone(),
            ]
        })
        .collect()
}

/// One part of a flat JSON file: its records, each value a string (the same as its CSV cell).
#[salsa::tracked(returns(ref))]
pub fn flat_part_json<'db>(db: &'db dyn salsa::Database, part: FlatPart<'db>) -> String {
    let columns = flat_columns(db, StemKey::new(db, part.stem(db).clone()));
    let records: Vec<Map<String, Value>> = flat_rows(db, part)
        .iter()
        .map(|row| {
            columns
                .iter()
                .cloned()
                .zip(row.iter().map(|c| Value::String(c.clone())))
                .collect()
        })
        .collect();
    // The records are the items of the top-level array.
    json_items(&records, 2)
}

/// One part of a flat CSV file: its records, without the header row.
#[salsa::tracked(returns(ref))]
pub fn flat_part_csv<'db>(db: &'db dyn salsa::Database, part: FlatPart<'db>) -> String {
    let mut writer = csv_writer();
    for row in flat_rows(db, part) {
        writer.write_record(row).expect("in-memory CSV");
    }
    String::from_utf8(writer.into_inner().expect("in-memory CSV")).expect("cells are UTF-8")
}

fn csv_writer() -> csv::Writer<Vec<u8>> {
    csv::WriterBuilder::new()
        .terminator(csv::Terminator::CRLF)
        .from_writer(Vec::new())
}

#[salsa::tracked(returns(ref))]
pub fn data_json<'db>(db: &'db dyn salsa::Database, key: StemKey<'db>) -> Rendered {
    let parts = flat_parts(db, key.stem(db));
    let head = json_bytes(&Vec::<()>::new());
    Rendered::new(splice_items(
        &head,
        parts
            .into_iter()
            .map(|part| flat_part_json(db, part).as_str()),
    ))
}

#[salsa::tracked(returns(ref))]
pub fn data_csv<'db>(db: &'db dyn salsa::Database, key: StemKey<'db>) -> Rendered {
    let mut writer = csv_writer();
    writer
        .write_record(flat_columns(db, key))
        .expect("in-memory CSV");
    let mut bytes = writer.into_inner().expect("in-memory CSV");
    let parts: Vec<&str> = flat_parts(db, key.stem(db))
        .iter()
        .map(|part| flat_part_csv(db, *part).as_str())
        .collect();
    bytes.reserve(parts.iter().map(|part| part.len()).sum());
    for part in parts {
        bytes.extend_from_slice(part.as_bytes());
    }
    Rendered::new(bytes)
}

/// The Frictionless type of a flat-file column: the check dates are dates, everything else text (an empty
/// cell is a missing value).
fn field_type(column: &str) -> &'static str {
    match column {
        "last_verified" | "source_checked" => "date",
        _ => "string",
    }
}

#[salsa::tracked(returns(ref))]
pub fn datapackage(db: &dyn salsa::Database) -> Rendered {
    let site = &site_rules(db).value;
    let licence = &site.data_licence;
    let resources: Vec<Value> = STEMS
        .iter()
        .map(|stem| {
            let columns = flat_columns(db, StemKey::new(db, stem.to_string()));
            let fields: Vec<Value> = columns
                .iter()
                .map(|c| json!({"name": c, "type": field_type(c)}))
                .collect();
            json!({
                "name": stem.replace('_', "-"),
                "path": format!("{stem}.csv"),
                "profile": "tabular-data-resource",
                "title": stem,
                "description": stem_description(stem),
                "format": "csv",
                "mediatype": "text/csv",
                "encoding": "utf-8",
                "schema": {"fields": fields, "missingValues": [""]},
            })
        })
        .collect();
    let package = json!({
        "profile": "tabular-data-package",
        "name": "locref",
        "title": site.title,
        "description": site.description,
        "homepage": format!("{}/", crate::model::base_url(db)),
        "version": site.version,
        "licenses": [{"name": licence.name.replace(' ', "-"), "path": licence.url, "title": licence.name}],
        "sources": [{"title": licence.attribution}],
        "resources": resources,
    });
    Rendered::new(json_bytes(&package))
}

#[salsa::tracked(returns(ref))]
pub fn data_licence(db: &dyn salsa::Database) -> Rendered {
    let site = &site_rules(db).value;
    let licence = &site.data_licence;
    let mut text = format!(
        "{title}: flat data files\n\nThe files in this folder are licensed under {name} ({url}).\n\nAttribution: {attribution}\n\n",
        title = site.title,
        name = licence.name,
        url = licence.url,
        attribution = licence.attribution,
    );
    text.push_str("Files (each as .json and .csv, with the same records):\n");
    for stem in STEMS {
        text.push_str(&format!("- {stem}: {}\n", stem_description(stem)));
    }
    text.push_str(&format!(
        "\nThe versioned API under /api/v1/ is licensed separately ({}); see {} .\n{}\n",
        site.api_licence.name, site.api_licence.commercial_licence, site.informational_notice
    ));
    Rendered::new(text.into_bytes())
}
