//! The flat data files under `/data/`: each source table validated, joined with the registers, sorted and
//! written with exactly the SPEC's columns, as JSON (an array of records, every value a string, the same
//! as its CSV cell) and as CSV; plus a Frictionless `datapackage.json` and the licence text.

use serde_json::{Map, Value, json};

use super::{Rendered, json_bytes};
use crate::model::{countries, erp_rank, reporting_erps};
use crate::parse::rules::{fact_labels, site_rules};
use crate::parse::tables::{
    connector_rows, country_fact_rows, local_erp_rows, mandate_rows, matrix_rows,
    partner_flag_rows, reporting_table,
};
use crate::routes::STEMS;

/// A flat data table as a query key (`matrix`).
#[salsa::interned(debug)]
pub struct StemKey<'db> {
    #[returns(ref)]
    pub stem: String,
}

/// A table ready to publish: column names and rows of cells.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FlatTable {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
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

/// The columns of a flat table: a projection, so the data package and the OpenAPI document do not re-run
/// when only a row changes.
#[salsa::tracked(returns(ref))]
pub fn flat_columns<'db>(db: &'db dyn salsa::Database, key: StemKey<'db>) -> Vec<String> {
    flat_table(db, key).columns.clone()
}

/// The number of rows of a flat table: a projection, so the index does not re-run when a row's text changes.
#[salsa::tracked(returns(copy))]
pub fn flat_row_count<'db>(db: &'db dyn salsa::Database, key: StemKey<'db>) -> usize {
    flat_table(db, key).rows.len()
}

#[salsa::tracked(returns(ref))]
pub fn flat_table<'db>(db: &'db dyn salsa::Database, key: StemKey<'db>) -> FlatTable {
    let stem = key.stem(db).as_str();
    let register = countries(db);
    let name_of = |code: &str| {
        register
            .iter()
            .find(|c| c.code == code)
            .map(|c| c.name.clone())
            .unwrap_or_default()
    };
    let region_of = |code: &str| {
        register
            .iter()
            .find(|c| c.code == code)
            .map(|c| c.region.clone())
            .unwrap_or_default()
    };
    let mut columns: Vec<String> = stem_columns(stem).iter().map(|c| c.to_string()).collect();
    let rows: Vec<Vec<String>> = match stem {
        "matrix" => {
            let mandates = &mandate_rows(db).value;
            let mut rows: Vec<_> = matrix_rows(db).value.iter().map(|r| &r.row).collect();
            rows.sort_by_key(|r| (r.country.clone(), erp_rank(db, &r.erp)));
            rows.into_iter()
                .map(|r| {
                    let m = mandates
                        .iter()
                        .find(|m| m.row.country == r.country)
                        .map(|m| m.row.clone())
                        .unwrap_or_default();
                    vec![
                        "e-invoicing".into(),
                        r.country.clone(),
                        name_of(&r.country),
                        m.short_label,
                        m.mandate,
                        m.scope,
                        m.deadlines,
                        m.format,
                        join(&m.mandate_source),
                        m.mandate_evidence,
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
        "reporting" => {
            let erps = reporting_erps(db);
            let at = columns
                .iter()
                .position(|c| c == "<erps>")
                .expect("reporting columns have <erps>");
            columns.splice(at..at + 1, erps.iter().cloned());
            let table = &reporting_table(db).value;
            let mut rows: Vec<_> = table.rows.iter().map(|r| &r.row).collect();
            // Stable: rows of one country and topic keep their file order (their `n`).
            rows.sort_by_key(|r| (r.country.clone(), r.topic != "vat-reporting"));
            rows.into_iter()
                .map(|r| {
                    let mut cells = vec![
                        r.topic.clone(),
                        r.country.clone(),
                        name_of(&r.country),
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
                .collect()
        }
        "connectors" => {
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
        "countries" => {
            let labels = &fact_labels(db).value;
            let mut rows: Vec<_> = country_fact_rows(db)
                .value
                .iter()
                .filter_map(|r| {
                    labels
                        .iter()
                        .position(|l| l.label == r.row.fact && l.flat_file)
                        .map(|rank| (rank, &r.row))
                })
                .collect();
            rows.sort_by_key(|(rank, r)| (r.country.clone(), *rank));
            rows.into_iter()
                .map(|(_, r)| {
                    vec![
                        r.country.clone(),
                        name_of(&r.country),
                        region_of(&r.country),
                        r.fact.clone(),
                        r.value.clone(),
                        join(&r.source),
                        r.evidence.clone(),
                        r.verification.status().as_str().into(),
                        date(&r.last_verified),
                    ]
                })
                .collect()
        }
        "local_erps" => {
            let mut rows: Vec<_> = local_erp_rows(db).value.iter().map(|r| &r.row).collect();
            rows.sort_by_key(|r| (r.country.clone(), r.name.to_lowercase()));
            rows.into_iter()
                .map(|r| {
                    vec![
                        r.country.clone(),
                        r.name.clone(),
                        r.segment.clone(),
                        r.description.clone(),
                        r.website.clone().unwrap_or_default(),
                        join(&r.source),
                        r.verification.status().as_str().into(),
                        date(&r.last_verified),
                    ]
                })
                .collect()
        }
        "local_partner_flags" => {
            let mut rows: Vec<_> = partner_flag_rows(db).value.iter().map(|r| &r.row).collect();
            rows.sort_by_key(|r| (r.country.clone(), erp_rank(db, &r.erp)));
            rows.into_iter()
                .map(|r| {
                    vec![
                        r.country.clone(),
                        name_of(&r.country),
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
    };
    FlatTable { columns, rows }
}

#[salsa::tracked(returns(ref))]
pub fn data_json<'db>(db: &'db dyn salsa::Database, key: StemKey<'db>) -> Rendered {
    let table = flat_table(db, key);
    let records: Vec<Map<String, Value>> = table
        .rows
        .iter()
        .map(|row| {
            table
                .columns
                .iter()
                .cloned()
                .zip(row.iter().map(|c| Value::String(c.clone())))
                .collect()
        })
        .collect();
    Rendered::new(json_bytes(&records))
}

#[salsa::tracked(returns(ref))]
pub fn data_csv<'db>(db: &'db dyn salsa::Database, key: StemKey<'db>) -> Rendered {
    let table = flat_table(db, key);
    let mut writer = csv::WriterBuilder::new()
        .terminator(csv::Terminator::CRLF)
        .from_writer(Vec::new());
    writer.write_record(&table.columns).expect("in-memory CSV");
    for row in &table.rows {
        writer.write_record(row).expect("in-memory CSV");
    }
    Rendered::new(writer.into_inner().expect("in-memory CSV"))
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
