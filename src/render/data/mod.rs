//! The flat data files under `/data/`: each source table validated, joined with the registers, sorted and
//! written with exactly the SPEC's columns, as JSON (an array of records, every value a string, or null
//! where the CSV cell is empty) and as CSV; plus a Frictionless `datapackage.json` and the licence text.
//!
//! The tables and their record types are declared in [`records`]; the queries here read each country's
//! records, serialize them into per-country parts and splice the files from the parts; [`package`]
//! describes the files.

mod package;
mod records;

pub use package::data_json_schema;
pub(crate) use package::{FileDigest, datapackage};

pub use crate::kinds::FlatTable;
pub use records::FlatRecords;
use records::{
    ConnectorRecord, CountryFactRecord, LocalErpRecord, MatrixRecord, ObligationRecord,
    PartnerFlagRecord, RegimeRecord, ReportingRecord, ToggleRecord,
};

use super::envelope::{json_bytes, splice_items, splice_items_into};
use crate::model::{
    CountryKey, countries, country_facts_of, country_info, country_local_erps, country_mandate,
    country_matrix, country_partner_flags, country_reporting, erp_rank, reporting_erps,
};
use crate::output::{Piece, Rendered};
use crate::parse::rules::site_rules;
use crate::parse::tables::{ConnectorRow, connector_rows};

/// A flat data table as a query key, by its file stem (`matrix`): the route table's `{stem}` value.
#[salsa::interned(debug)]
pub struct StemKey<'db> {
    #[returns(ref)]
    pub stem: String,
}

impl StemKey<'_> {
    /// The table the stem names (none for a stem no table has: its files are empty).
    pub fn table(self, db: &dyn salsa::Database) -> Option<FlatTable> {
        FlatTable::from_stem(self.stem(db))
    }
}

/// What a flat file holds, by its stem (empty for a stem no table has).
pub(crate) fn stem_description(stem: &str) -> &'static str {
    FlatTable::from_stem(stem).map_or("", FlatTable::description)
}

/// The columns of a flat table, read from its record type (the reporting table's ERP columns come from
/// the rules).
#[salsa::tracked(returns(ref))]
pub(crate) fn flat_columns<'db>(db: &'db dyn salsa::Database, key: StemKey<'db>) -> Vec<String> {
    key.table(db).map_or_else(Vec::new, |table| {
        table.prototype(reporting_erps(db)).columns()
    })
}

/// A part of a flat table: one country's rows (every table but `connectors` is sorted by country first),
/// or the whole `connectors` table (with an empty `country`). Each part is rendered on its own and the
/// files are spliced from the parts, so an edit of one country's row re-renders one part.
#[salsa::interned(debug)]
pub(crate) struct FlatPart<'db> {
    #[returns(copy)]
    pub table: FlatTable,
    #[returns(ref)]
    pub country: String,
}

/// The parts of a flat table, in file order.
fn flat_parts<'db>(db: &'db dyn salsa::Database, table: FlatTable) -> Vec<FlatPart<'db>> {
    if !table.per_country() {
        return vec![FlatPart::new(db, table, String::new())];
    }
    countries(db)
        .iter()
        .map(|c| FlatPart::new(db, table, c.code.clone()))
        .collect()
}

/// The number of rows of a flat table: a projection, so the index does not re-run when a row's text changes.
#[salsa::tracked(returns(copy))]
pub fn flat_row_count<'db>(db: &'db dyn salsa::Database, key: StemKey<'db>) -> usize {
    key.table(db).map_or(0, |table| {
        flat_parts(db, table)
            .into_iter()
            .map(|part| flat_rows(db, part).len())
            .sum()
    })
}

/// The records of one part of a flat table, read from the narrow per-country projections of the model.
#[salsa::tracked(returns(ref))]
pub fn flat_rows<'db>(db: &'db dyn salsa::Database, part: FlatPart<'db>) -> FlatRecords {
    let table = part.table(db);
    if table == FlatTable::Connectors {
        return FlatRecords::Connectors(connector_records(db));
    }
    let key = CountryKey::new(db, part.country(db).clone());
    let Some(country) = country_info(db, key) else {
        return table.no_records();
    };
    match table {
        FlatTable::Matrix => {
            let mandate = country_mandate(db, key).clone().unwrap_or_default();
            FlatRecords::Matrix(
                country_matrix(db, key)
                    .iter()
                    .map(|r| MatrixRecord::new(country, &mandate, r))
                    .collect(),
            )
        }
        // Rows of one topic keep their file order (their `n`); VAT reporting comes before SAF-T.
        FlatTable::Reporting => FlatRecords::Reporting(
            country_reporting(db, key)
                .iter()
                .map(|report| ReportingRecord::new(country, report))
                .collect(),
        ),
        // The key facts the rules publish in the flat file, in `rules/facts.toml` order.
        FlatTable::Countries => FlatRecords::Countries(
            country_facts_of(db, key)
                .iter()
                .filter(|f| f.label.flat_file)
                .map(|f| CountryFactRecord::new(country, &f.row))
                .collect(),
        ),
        FlatTable::LocalErps => FlatRecords::LocalErps(
            country_local_erps(db, key)
                .iter()
                .map(|r| LocalErpRecord::new(country, r))
                .collect(),
        ),
        FlatTable::LocalPartnerFlags => {
            let mut rows: Vec<_> = country_partner_flags(db, key).iter().collect();
            rows.sort_by_key(|r| erp_rank(db, &r.erp));
            FlatRecords::LocalPartnerFlags(
                rows.into_iter()
                    .map(|r| PartnerFlagRecord::new(country, r))
                    .collect(),
            )
        }
        FlatTable::Obligations => FlatRecords::Obligations(
            crate::model::country_obligations(db, key)
                .iter()
                .map(|r| ObligationRecord::new(country, r))
                .collect(),
        ),
        FlatTable::Toggles => FlatRecords::Toggles(
            crate::derived::obligations::country_toggle_derivations(db, key)
                .iter()
                .map(|d| ToggleRecord::new(country, d))
                .collect(),
        ),
        FlatTable::Regimes => FlatRecords::Regimes(
            crate::model::country_regimes(db, key)
                .iter()
                .map(|r| {
                    let standing =
                        crate::derived::regimes::obligation_standing(db, key, &r.obligation);
                    RegimeRecord::new(country, r, standing)
                })
                .collect(),
        ),
        FlatTable::Connectors => FlatRecords::Connectors(connector_records(db)),
    }
}

/// The connectors table, sorted by provider and ERP: small, and not keyed by country.
fn connector_records(db: &dyn salsa::Database) -> Vec<ConnectorRecord> {
    let mut rows: Vec<&ConnectorRow> = connector_rows(db).value.iter().map(|r| &*r.row).collect();
    rows.sort_by_key(|r| (r.provider.to_lowercase(), erp_rank(db, &r.erp)));
    rows.into_iter().map(ConnectorRecord::new).collect()
}

/// One part of a flat JSON file: its records as items of the top-level array.
#[salsa::tracked(returns(ref), lru = 0)]
pub fn flat_part_json<'db>(db: &'db dyn salsa::Database, part: FlatPart<'db>) -> Piece {
    flat_rows(db, part).json_items()
}

/// One part of a flat CSV file: its records, without the header row.
#[salsa::tracked(returns(ref), lru = 0)]
pub fn flat_part_csv<'db>(db: &'db dyn salsa::Database, part: FlatPart<'db>) -> Piece {
    Piece::new(flat_rows(db, part).csv(false))
}

#[cfg(feature = "streaming")]
/// Limits the parts of the flat files to their most recent value (a one-off build, see
/// [`crate::memory`]).
pub(crate) fn keep_last_parts_only(db: &mut dyn salsa::Database) {
    flat_part_json::set_lru_capacity(db, 1);
    flat_part_csv::set_lru_capacity(db, 1);
}

pub fn data_json<'db>(db: &'db dyn salsa::Database, key: StemKey<'db>) -> Rendered {
    let head = json_bytes(&Vec::<()>::new());
    let Some(table) = key.table(db) else {
        return Rendered::new(head);
    };
    let parts = flat_parts(db, table);
    splice_items(
        &head,
        parts.into_iter().map(|part| flat_part_json(db, part)),
    )
}

/// A flat JSON file piece by piece (see [`crate::render::stream_list`]): each part's fragment made,
/// handed on and let go.
pub(crate) fn stream_json(
    db: &dyn salsa::Database,
    output: &crate::routes::Output,
    emit: &mut dyn FnMut(Piece),
) {
    let head = json_bytes(&Vec::<()>::new());
    let Some(table) = StemKey::new(db, crate::render::rendered::param_of(output)).table(db) else {
        return emit(Piece::new(head));
    };
    let fragments = flat_parts(db, table)
        .into_iter()
        .map(|part| flat_rows(db, part).json_items());
    splice_items_into(&head, fragments, emit);
}

pub fn data_csv<'db>(db: &'db dyn salsa::Database, key: StemKey<'db>) -> Rendered {
    let Some(table) = key.table(db) else {
        return Rendered::new(Vec::new());
    };
    // The csv crate writes the header from a blank record; that record's own row is not published.
    let prototype = table.prototype(reporting_erps(db));
    let with_header = prototype.csv(true);
    let header_len = with_header.len() - prototype.csv(false).len();
    let mut header = with_header;
    header.truncate(header_len);
    // The parts are shared, not copied together.
    let parts = flat_parts(db, table)
        .into_iter()
        .map(|part| flat_part_csv(db, part).clone());
    Rendered::from_pieces(std::iter::once(Piece::new(header)).chain(parts))
}

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
    for table in FlatTable::ALL {
        text.push_str(&format!("- {}: {}\n", table.stem(), table.description()));
    }
    text.push_str(&format!(
        "\nThe versioned API under /api/v1/ is licensed separately ({}); see {} .\n{}\n",
        site.api_licence.name, site.api_licence.commercial_licence, site.informational_notice
    ));
    Rendered::new(text.into_bytes())
}

/// `/data/README.txt`: how the flat files are read: the two forms of each table, the column types the
/// data package declares, the dates as precise as their sources, and the one spelling of unknown.
pub fn data_readme(db: &dyn salsa::Database) -> Rendered {
    let site = &site_rules(db).value;
    let mut text = format!(
        "{title}: flat data files\n\n\
         Each table is published twice, with the same records in the same order: <table>.csv (RFC 4180,\n\
         UTF-8, a header row, CRLF line ends) and <table>.json (an array of objects, one per row, its\n\
         members the CSV's columns in the same order). datapackage.json describes every column as a\n\
         Frictionless Table Schema: its type, its allowed values, the primary and foreign keys.\n\n\
         Tables:\n",
        title = site.title,
    );
    for table in FlatTable::ALL {
        text.push_str(&format!("- {}: {}\n", table.stem(), table.description()));
    }
    text.push_str(
        "\nTypes (the same in both forms, as datapackage.json declares them):\n\
         - text: a CSV cell, a JSON string;\n\
         - date (last_verified, source_checked, reference_date): ISO 8601 YYYY-MM-DD;\n\
         - boolean (toggles: value, rests_on_absence): true or false in the CSV (the package's trueValues\n  \
         and falseValues), a JSON boolean;\n\
         - integer (regimes: archive_years): digits in the CSV, a JSON number.\n\n\
         Dates as precise as their source: obligations' applies_from is YYYY-MM-DD, YYYY-MM or YYYY, as the\n\
         source gives it, and applies_from_precision beside it says which (day, month or year). A month or a\n\
         year stands for its whole span, never for its first day; read the column as text, or as a date only\n\
         where the precision is day.\n\n\
         Unknown: a value that is not known, or not given, is an empty CSV cell and null in JSON, in every\n\
         column of every file; no file writes it as text (\"unknown\", \"n/a\", an empty string). Three\n\
         values are not unknowns but answers of their closed sets, as the specification of the service\n\
         names them: the matrix's support_type unknown/unverified and the reporting table's ERP columns'\n\
         unknown (no source that was read establishes how the ERP supports it), and the obligations'\n\
         legal_status unclear (the sources were read and do not settle the phase). The matrix's mandate\n\
         columns are the curator's text as recorded.\n",
    );
    text.push_str(&format!(
        "\nLicence: {} ({}); see LICENSE.txt.\n{}\n",
        site.data_licence.name, site.data_licence.url, site.informational_notice
    ));
    Rendered::new(text.into_bytes())
}
