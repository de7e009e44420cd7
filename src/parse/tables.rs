//! The source tables (`sources/registers/countries.csv`, `sources/tables/*.csv`) as typed rows.
//!
//! Checks that need only the file itself happen here: the header, required cells, dates, URLs, the SPEC's
//! fixed enums and the honesty rule that ties `verification` to its source and date. Checks against other
//! files (registers, rule vocabularies) happen in [`crate::model`], located through each row's [`Pos`].

use super::csv_table::{Header, Row, Runs, Table, read_run, read_table, split_runs};
use super::{is_http_url, is_iso_date, source_text};
use crate::diagnostics::{Checked, Diagnostic};

/// Where each cell of a row starts, so the model layer can locate cross-file errors.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pos {
    pub path: &'static str,
    pub line: u32,
    pub cells: Vec<(u32, u32)>,
}

impl Pos {
    /// A diagnostic pointing at cell `column_index` of this row.
    pub fn error(&self, column_index: usize, message: impl Into<String>) -> Diagnostic {
        let (line, column) = self
            .cells
            .get(column_index)
            .copied()
            .unwrap_or((self.line, 1));
        Diagnostic::new(self.path, line, column, message)
    }
}

pub use crate::resources::Verification;

/// A parsed row and where its cells stand in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located<T> {
    pub pos: Pos,
    pub row: T,
}

/// Typed access to the cells of one row; every accessor records a located diagnostic on bad input.
struct RowReader<'a> {
    path: &'static str,
    columns: &'a [&'a str],
    row: &'a Row,
    diagnostics: &'a mut Vec<Diagnostic>,
}

impl RowReader<'_> {
    fn pos(&self) -> Pos {
        Pos {
            path: self.path,
            line: self.row.line,
            cells: self.row.cells.iter().map(|c| (c.line, c.column)).collect(),
        }
    }

    fn error(&mut self, i: usize, message: String) {
        let cell = &self.row.cells[i];
        self.diagnostics
            .push(Diagnostic::new(self.path, cell.line, cell.column, message));
    }

    /// The cell's text, possibly empty.
    fn text(&self, i: usize) -> String {
        self.row.cells[i].text.clone()
    }

    fn required(&mut self, i: usize) -> String {
        let text = self.text(i);
        if text.is_empty() {
            let name = self.columns.get(i).copied().unwrap_or("?");
            self.error(i, format!("`{name}` must not be empty"));
        }
        text
    }

    fn optional(&self, i: usize) -> Option<String> {
        Some(self.text(i)).filter(|t| !t.is_empty())
    }

    fn one_of(&mut self, i: usize, allowed: &[&str]) -> String {
        let text = self.text(i);
        if !allowed.contains(&text.as_str()) {
            let name = self.columns.get(i).copied().unwrap_or("?");
            self.error(
                i,
                format!(
                    "`{name}` is `{text}`; expected one of: {}",
                    allowed.join(", ")
                ),
            );
        }
        text
    }

    fn date(&mut self, i: usize) -> Option<String> {
        let text = self.optional(i)?;
        if !is_iso_date(&text) {
            self.error(i, format!("`{text}` is not a date; expected YYYY-MM-DD"));
        }
        Some(text)
    }

    fn url(&mut self, i: usize) -> Option<String> {
        let text = self.optional(i)?;
        if !is_http_url(&text) {
            self.error(i, format!("`{text}` is not an http(s) URL"));
        }
        Some(text)
    }

    /// Space-separated URLs.
    fn urls(&mut self, i: usize) -> Vec<String> {
        let urls: Vec<String> = self
            .text(i)
            .split_whitespace()
            .map(str::to_string)
            .collect();
        for url in &urls {
            if !is_http_url(url) {
                self.error(i, format!("`{url}` is not an http(s) URL"));
            }
        }
        urls
    }

    fn verification(&mut self, i: usize) -> Verification {
        let text = self.one_of(i, &Verification::NAMES);
        Verification::parse(&text).unwrap_or(Verification::Unverified)
    }

    /// The honesty rule: a verified fact names its source and the date it was checked; an unverified one
    /// claims no check.
    fn check_honesty(
        &mut self,
        verification: (usize, Verification),
        sources: (usize, bool),
        evidence: usize,
        date: usize,
    ) {
        let (vi, verification) = verification;
        let evidence_text = self.text(evidence);
        let checked = self.optional(date);
        match verification {
            Verification::Official | Verification::Secondary => {
                if !sources.1 {
                    self.error(
                        sources.0,
                        format!(
                            "a `{}` fact needs the URL of the source that was read",
                            verification.as_str()
                        ),
                    );
                }
                if checked.is_none() {
                    self.error(
                        date,
                        format!(
                            "a `{}` fact needs the date it was checked",
                            verification.as_str()
                        ),
                    );
                }
                if evidence_text.is_empty() || evidence_text == "unverified" {
                    self.error(
                        evidence,
                        format!(
                            "a `{}` fact needs `evidence` saying how its source was read",
                            verification.as_str()
                        ),
                    );
                }
            }
            Verification::Unverified => {
                if checked.is_some() {
                    self.error(
                        date,
                        "an `unverified` fact has no check date; leave it empty".to_string(),
                    );
                }
                if !evidence_text.is_empty() && evidence_text != "unverified" {
                    self.error(vi, format!("evidence `{evidence_text}` says a source was read, so `verification` cannot be `unverified`"));
                }
            }
        }
    }
}

/// Reads a table and maps each well-formed row with `f`.
fn read_rows<T>(
    db: &dyn salsa::Database,
    path: &'static str,
    header: Header<'_>,
    columns: &[&str],
    f: impl FnMut(&mut RowReader<'_>) -> T,
) -> Checked<Vec<Located<T>>> {
    let text = match source_text(db, path) {
        Ok(text) => text,
        Err(diagnostic) => return Checked::new(Vec::new(), vec![diagnostic]),
    };
    let (table, diagnostics) = read_table(path, text, header);
    map_rows(path, columns, &table, diagnostics, f)
}

/// Maps each row of a parsed table with `f`, which adds its diagnostics to `diagnostics`.
fn map_rows<T>(
    path: &'static str,
    columns: &[&str],
    table: &Table,
    mut diagnostics: Vec<Diagnostic>,
    mut f: impl FnMut(&mut RowReader<'_>) -> T,
) -> Checked<Vec<Located<T>>> {
    let rows = table
        .rows
        .iter()
        .map(|row| {
            let mut reader = RowReader {
                path,
                columns,
                row,
                diagnostics: &mut diagnostics,
            };
            Located {
                pos: reader.pos(),
                row: f(&mut reader),
            }
        })
        .collect();
    Checked::new(rows, diagnostics)
}

/// Reads a table whose header is exactly `columns`.
fn read_exact<T>(
    db: &dyn salsa::Database,
    path: &'static str,
    columns: &[&str],
    f: impl FnMut(&mut RowReader<'_>) -> T,
) -> Checked<Vec<Located<T>>> {
    read_rows(db, path, Header::Exact(columns), columns, f)
}

pub const COUNTRY_REGISTER: &str = "sources/registers/countries.csv";
pub const COUNTRY_FACTS: &str = "sources/tables/countries.csv";
pub const VAT: &str = "sources/tables/vat.csv";
pub const MANDATES: &str = "sources/tables/mandates.csv";
pub const MATRIX: &str = "sources/tables/matrix.csv";
pub const REPORTING: &str = "sources/tables/reporting.csv";
pub const CONNECTORS: &str = "sources/tables/connectors.csv";
pub const LOCAL_ERPS: &str = "sources/tables/local_erps.csv";
pub const PARTNER_FLAGS: &str = "sources/tables/local_partner_flags.csv";
pub const PARTNERS: &str = "sources/tables/partners.csv";

// ---------------------------------------------------------------- registers/countries.csv

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CountryRegRow {
    pub code: String,
    pub name: String,
    pub region: String,
    pub eu_member: bool,
}

pub const COUNTRY_REGISTER_COLUMNS: &[&str] = &["code", "name", "region", "eu_member"];

#[salsa::tracked(returns(ref))]
pub fn country_register_rows(db: &dyn salsa::Database) -> Checked<Vec<Located<CountryRegRow>>> {
    read_exact(db, COUNTRY_REGISTER, COUNTRY_REGISTER_COLUMNS, |r| {
        let code = r.required(0);
        let is_alpha2 = code.len() == 2 && code.bytes().all(|b| b.is_ascii_lowercase());
        if !code.is_empty() && !is_alpha2 {
            r.error(
                0,
                format!("`{code}` is not a lower-case ISO 3166-1 alpha-2 code"),
            );
        }
        CountryRegRow {
            code,
            name: r.required(1),
            region: r.required(2),
            eu_member: r.one_of(3, &["yes", "no"]) == "yes",
        }
    })
}

// ---------------------------------------------------------------- tables/countries.csv

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CountryFactRow {
    pub country: String,
    pub fact: String,
    pub value: String,
    pub source: Vec<String>,
    pub evidence: String,
    pub verification: Verification,
    pub last_verified: Option<String>,
}

pub const COUNTRY_FACT_COLUMNS: &[&str] = &[
    "country_code",
    "fact",
    "value",
    "source",
    "evidence",
    "verification",
    "last_verified",
];

/// The facts table split into runs of rows by country code (see [`split_runs`]), with the problems of its
/// header. It re-runs on every edit of the file, but only finds record boundaries; the rows of each
/// country are parsed by [`country_fact_rows_of`], so an edit re-parses only the countries it touches.
#[salsa::tracked(returns(ref))]
pub fn country_fact_runs(db: &dyn salsa::Database) -> Checked<Runs> {
    let text = match source_text(db, COUNTRY_FACTS) {
        Ok(text) => text,
        Err(diagnostic) => return Checked::new(Runs::default(), vec![diagnostic]),
    };
    let runs = split_runs(text);
    // The header is checked once, here. Without one, the whole file is read to say why.
    let header_text = if runs.header_line.is_empty() {
        text
    } else {
        &runs.header_line
    };
    let (_, diagnostics) = read_table(
        COUNTRY_FACTS,
        header_text,
        Header::Exact(COUNTRY_FACT_COLUMNS),
    );
    Checked::new(runs, diagnostics)
}

/// A first cell of a table split into runs: a country code, or whatever a curator wrote there.
#[salsa::interned(debug)]
pub struct RunKey<'db> {
    #[returns(ref)]
    pub key: String,
}

/// The distinct first cells of the facts table, in file order.
#[salsa::tracked(returns(ref))]
pub fn country_fact_keys(db: &dyn salsa::Database) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for run in &country_fact_runs(db).value.runs {
        if !keys.contains(&run.key) {
            keys.push(run.key.clone());
        }
    }
    keys
}

/// The header line and the runs of one key: the early-cutoff point between the whole file and one
/// country's rows. It re-runs for every key on every edit (a scan and a copy of a few KB), and keeps its
/// revision unless that key's text or position changed.
#[salsa::tracked(returns(ref))]
pub fn country_fact_runs_of<'db>(
    db: &'db dyn salsa::Database,
    key: RunKey<'db>,
) -> (String, Vec<super::csv_table::Run>) {
    let runs = &country_fact_runs(db).value;
    let own = runs
        .runs
        .iter()
        .filter(|r| &r.key == key.key(db))
        .cloned()
        .collect();
    (runs.header_line.clone(), own)
}

/// The rows of the facts table whose first cell is `key`, parsed and checked on their own.
#[salsa::tracked(returns(ref))]
pub fn country_fact_rows_of<'db>(
    db: &'db dyn salsa::Database,
    key: RunKey<'db>,
) -> Checked<Vec<Located<CountryFactRow>>> {
    let (header_line, runs) = country_fact_runs_of(db, key);
    let mut all = Checked::new(Vec::new(), Vec::new());
    for run in runs {
        let (table, diagnostics) = read_run(COUNTRY_FACTS, header_line, run);
        let parsed = map_rows(
            COUNTRY_FACTS,
            COUNTRY_FACT_COLUMNS,
            &table,
            diagnostics,
            |r| {
                let source = r.urls(3);
                let verification = r.verification(5);
                r.check_honesty((5, verification), (3, !source.is_empty()), 4, 6);
                CountryFactRow {
                    country: r.required(0),
                    fact: r.required(1),
                    value: r.required(2),
                    source,
                    evidence: r.text(4),
                    verification,
                    last_verified: r.date(6),
                }
            },
        );
        all.value.extend(parsed.value);
        all.diagnostics.extend(parsed.diagnostics);
    }
    all
}

/// The rows of the facts table by key, in file order of the keys: for the checks and views that need
/// every row (each key's rows are still parsed and cached on their own).
pub fn country_fact_rows_by_key<'db>(
    db: &'db dyn salsa::Database,
) -> impl Iterator<Item = &'db Checked<Vec<Located<CountryFactRow>>>> + 'db {
    country_fact_keys(db)
        .iter()
        .map(move |key| country_fact_rows_of(db, RunKey::new(db, key.clone())))
}

// ---------------------------------------------------------------- tables/vat.csv

#[derive(Debug, Clone, PartialEq)]
pub struct VatRow {
    pub country: String,
    pub vat_name: Option<String>,
    pub standard_rate: Option<f64>,
    /// `None` = unknown; `Some(vec![])` = the country has no reduced rates.
    pub reduced_rates: Option<Vec<f64>>,
    pub registration_threshold: Option<String>,
    pub filing_frequency: Option<String>,
}

pub const VAT_COLUMNS: &[&str] = &[
    "country_code",
    "vat_name",
    "standard_rate",
    "reduced_rates",
    "registration_threshold",
    "filing_frequency",
];

fn percent(r: &mut RowReader<'_>, i: usize, text: &str) -> Option<f64> {
    match text.parse::<f64>() {
        Ok(rate) if (0.0..=100.0).contains(&rate) => Some(rate),
        _ => {
            r.error(
                i,
                format!("`{text}` is not a percent rate between 0 and 100"),
            );
            None
        }
    }
}

#[salsa::tracked(returns(ref))]
pub fn vat_rows(db: &dyn salsa::Database) -> Checked<Vec<Located<VatRow>>> {
    read_exact(db, VAT, VAT_COLUMNS, |r| {
        let standard_rate = r.optional(2).and_then(|t| percent(r, 2, &t));
        let reduced_rates = match r.text(3).as_str() {
            "" => None,
            "none" => Some(Vec::new()),
            text => {
                let rates: Vec<f64> = text
                    .split_whitespace()
                    .filter_map(|t| percent(r, 3, t))
                    .collect();
                if rates.contains(&0.0) {
                    r.error(
                        3,
                        "the zero rate is not a reduced rate; leave it out".to_string(),
                    );
                }
                Some(rates)
            }
        };
        VatRow {
            country: r.required(0),
            vat_name: r.optional(1),
            standard_rate,
            reduced_rates,
            registration_threshold: r.optional(4),
            filing_frequency: r.optional(5),
        }
    })
}

// ---------------------------------------------------------------- tables/mandates.csv

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MandateRow {
    pub country: String,
    pub short_label: String,
    pub mandate: String,
    pub scope: String,
    pub deadlines: String,
    pub format: String,
    pub mandate_source: Vec<String>,
    pub mandate_evidence: String,
}

pub const MANDATE_COLUMNS: &[&str] = &[
    "country_code",
    "short_label",
    "mandate",
    "scope",
    "deadlines",
    "format",
    "mandate_source",
    "mandate_evidence",
];

#[salsa::tracked(returns(ref))]
pub fn mandate_rows(db: &dyn salsa::Database) -> Checked<Vec<Located<MandateRow>>> {
    read_exact(db, MANDATES, MANDATE_COLUMNS, |r| MandateRow {
        country: r.required(0),
        short_label: r.text(1),
        mandate: r.text(2),
        scope: r.text(3),
        deadlines: r.text(4),
        format: r.text(5),
        mandate_source: r.urls(6),
        mandate_evidence: r.text(7),
    })
}

// ---------------------------------------------------------------- tables/matrix.csv

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatrixRow {
    pub country: String,
    pub erp: String,
    pub support_type: String,
    pub vendors: String,
    pub notes: String,
    pub erp_source: Vec<String>,
    pub evidence: String,
    pub verification: Verification,
    pub last_verified: Option<String>,
}

pub const MATRIX_COLUMNS: &[&str] = &[
    "country_code",
    "erp",
    "support_type",
    "vendors",
    "notes",
    "erp_source",
    "evidence",
    "verification",
    "last_verified",
];

#[salsa::tracked(returns(ref))]
pub fn matrix_rows(db: &dyn salsa::Database) -> Checked<Vec<Located<MatrixRow>>> {
    read_exact(db, MATRIX, MATRIX_COLUMNS, |r| {
        let erp_source = r.urls(5);
        let verification = r.verification(7);
        r.check_honesty((7, verification), (5, !erp_source.is_empty()), 6, 8);
        MatrixRow {
            country: r.required(0),
            erp: r.required(1),
            support_type: r.required(2),
            vendors: r.text(3),
            notes: r.text(4),
            erp_source,
            evidence: r.text(6),
            verification,
            last_verified: r.date(8),
        }
    })
}

// ---------------------------------------------------------------- tables/reporting.csv

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportingRow {
    pub topic: String,
    pub country: String,
    pub report_local: String,
    pub report_en: String,
    pub frequency: String,
    pub deadline: String,
    pub channel_format: String,
    pub source: Vec<String>,
    pub source_checked: Option<String>,
    pub evidence: String,
    pub verification: Verification,
    /// The ERP columns' values, in header order (names in [`ReportingTable::erp_columns`]).
    pub erp_support: Vec<String>,
    pub erp_sources: Vec<String>,
    pub notes: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ReportingTable {
    /// The ERP column names and where they stand in the header.
    pub erp_columns: Vec<(String, u32, u32)>,
    pub rows: Vec<Located<ReportingRow>>,
}

pub const REPORTING_FIRST_COLUMNS: &[&str] = &[
    "topic",
    "country_code",
    "report_local",
    "report_en",
    "frequency",
    "deadline",
    "channel_format",
    "source",
    "source_checked",
    "evidence",
    "verification",
];
pub const REPORTING_LAST_COLUMNS: &[&str] = &["erp_sources", "notes"];

#[salsa::tracked(returns(ref))]
pub fn reporting_table(db: &dyn salsa::Database) -> Checked<ReportingTable> {
    let text = match source_text(db, REPORTING) {
        Ok(text) => text,
        Err(diagnostic) => return Checked::new(ReportingTable::default(), vec![diagnostic]),
    };
    let header = Header::Around {
        first: REPORTING_FIRST_COLUMNS,
        last: REPORTING_LAST_COLUMNS,
    };
    let (table, mut diagnostics) = read_table(REPORTING, text, header);
    let first = REPORTING_FIRST_COLUMNS.len();
    let erp_count = table
        .header
        .len()
        .saturating_sub(first + REPORTING_LAST_COLUMNS.len());
    let erp_columns = table
        .header
        .iter()
        .skip(first)
        .take(erp_count)
        .map(|c| (c.text.clone(), c.line, c.column))
        .collect();
    let columns: Vec<&str> = table.header.iter().map(|c| c.text.as_str()).collect();
    let rows = table
        .rows
        .iter()
        .map(|row| {
            let r = &mut RowReader {
                path: REPORTING,
                columns: &columns,
                row,
                diagnostics: &mut diagnostics,
            };
            let source = r.urls(7);
            let verification = r.verification(10);
            r.check_honesty((10, verification), (7, !source.is_empty()), 9, 8);
            let erp_support = (first..first + erp_count)
                .map(|i| r.one_of(i, &["native", "add-on", "unknown"]))
                .collect();
            let pos = r.pos();
            let row = ReportingRow {
                topic: r.one_of(0, &["vat-reporting", "saf-t"]),
                country: r.required(1),
                report_local: r.text(2),
                report_en: r.required(3),
                frequency: r.text(4),
                deadline: r.text(5),
                channel_format: r.text(6),
                source,
                source_checked: r.date(8),
                evidence: r.text(9),
                verification,
                erp_support,
                erp_sources: r.urls(first + erp_count),
                notes: r.text(first + erp_count + 1),
            };
            Located { pos, row }
        })
        .collect();
    Checked::new(ReportingTable { erp_columns, rows }, diagnostics)
}

// ---------------------------------------------------------------- tables/connectors.csv

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectorRow {
    pub provider: String,
    pub erp: String,
    pub countries_covered: String,
    pub countries_in_scope: Vec<String>,
    pub connector_type: String,
    pub built_by: String,
    pub direction: String,
    pub source_urls: Vec<String>,
    pub verification: Verification,
    pub last_verified: Option<String>,
    pub notes: String,
}

pub const CONNECTOR_COLUMNS: &[&str] = &[
    "provider",
    "erp",
    "countries_covered",
    "countries_in_scope",
    "connector_type",
    "built_by",
    "direction",
    "source_urls",
    "verification",
    "last_verified",
    "notes",
];

#[salsa::tracked(returns(ref))]
pub fn connector_rows(db: &dyn salsa::Database) -> Checked<Vec<Located<ConnectorRow>>> {
    read_exact(db, CONNECTORS, CONNECTOR_COLUMNS, |r| {
        let source_urls = r.urls(7);
        let verification = r.verification(8);
        // This table has no `evidence` column: a verified route is one whose source_urls were read.
        if verification != Verification::Unverified && source_urls.is_empty() {
            r.error(
                7,
                "a verified connector route needs the URL of the source that was read".to_string(),
            );
        }
        let last_verified = r.date(9);
        if (verification == Verification::Unverified) == last_verified.is_some() {
            r.error(
                9,
                "`last_verified` is the date a verified route was checked; empty when unverified"
                    .to_string(),
            );
        }
        ConnectorRow {
            provider: r.required(0),
            erp: r.required(1),
            countries_covered: r.text(2),
            countries_in_scope: r.text(3).split_whitespace().map(str::to_string).collect(),
            connector_type: r.text(4),
            built_by: r.text(5),
            direction: r.text(6),
            source_urls,
            verification,
            last_verified,
            notes: r.text(10),
        }
    })
}

// ---------------------------------------------------------------- tables/local_erps.csv

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalErpRow {
    pub country: String,
    pub name: String,
    pub segment: String,
    pub description: String,
    pub website: Option<String>,
    pub source: Vec<String>,
    pub verification: Verification,
    pub last_verified: Option<String>,
}

pub const LOCAL_ERP_COLUMNS: &[&str] = &[
    "country_code",
    "name",
    "segment",
    "description",
    "website",
    "source",
    "verification",
    "last_verified",
];

#[salsa::tracked(returns(ref))]
pub fn local_erp_rows(db: &dyn salsa::Database) -> Checked<Vec<Located<LocalErpRow>>> {
    read_exact(db, LOCAL_ERPS, LOCAL_ERP_COLUMNS, |r| {
        let source = r.urls(5);
        let verification = r.verification(6);
        if verification != Verification::Unverified && source.is_empty() {
            r.error(
                5,
                "a verified listing needs the URL of the source that was read".to_string(),
            );
        }
        let last_verified = r.date(7);
        if (verification == Verification::Unverified) == last_verified.is_some() {
            r.error(
                7,
                "`last_verified` is the date a verified listing was checked; empty when unverified"
                    .to_string(),
            );
        }
        LocalErpRow {
            country: r.required(0),
            name: r.required(1),
            segment: r.text(2),
            description: r.text(3),
            website: r.url(4),
            source,
            verification,
            last_verified,
        }
    })
}

// ---------------------------------------------------------------- tables/local_partner_flags.csv

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartnerFlagRow {
    pub country: String,
    pub erp: String,
    pub flag: String,
    pub note: String,
    pub source: Vec<String>,
    pub verification: Verification,
    pub last_verified: Option<String>,
}

pub const PARTNER_FLAG_COLUMNS: &[&str] = &[
    "country_code",
    "erp",
    "flag",
    "note",
    "source",
    "verification",
    "last_verified",
];

#[salsa::tracked(returns(ref))]
pub fn partner_flag_rows(db: &dyn salsa::Database) -> Checked<Vec<Located<PartnerFlagRow>>> {
    read_exact(db, PARTNER_FLAGS, PARTNER_FLAG_COLUMNS, |r| {
        let source = r.urls(4);
        let verification = r.verification(5);
        if verification != Verification::Unverified && source.is_empty() {
            r.error(
                4,
                "a verified flag needs the URL of the source that was read".to_string(),
            );
        }
        let last_verified = r.date(6);
        if (verification == Verification::Unverified) == last_verified.is_some() {
            r.error(
                6,
                "`last_verified` is the date a verified flag was checked; empty when unverified"
                    .to_string(),
            );
        }
        PartnerFlagRow {
            country: r.required(0),
            erp: r.required(1),
            flag: r.required(2),
            note: r.text(3),
            source,
            verification,
            last_verified,
        }
    })
}

// ---------------------------------------------------------------- tables/partners.csv

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartnerRow {
    pub country: String,
    pub erp: String,
    pub name: String,
    pub partner_type: String,
    pub summary: String,
    pub source_urls: Vec<String>,
    pub source_kind: String,
    pub last_checked: Option<String>,
}

pub const PARTNER_COLUMNS: &[&str] = &[
    "country_code",
    "erp",
    "name",
    "partner_type",
    "summary",
    "source_urls",
    "source_kind",
    "last_checked",
];

#[salsa::tracked(returns(ref))]
pub fn partner_rows(db: &dyn salsa::Database) -> Checked<Vec<Located<PartnerRow>>> {
    read_exact(db, PARTNERS, PARTNER_COLUMNS, |r| PartnerRow {
        country: r.required(0),
        erp: r.required(1),
        name: r.required(2),
        partner_type: r.text(3),
        summary: r.text(4),
        source_urls: r.urls(5),
        source_kind: r.text(6),
        last_checked: r.date(7),
    })
}
