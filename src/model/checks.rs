//! Cross-file checks: every reference to a country, an ERP or a vocabulary value is resolved against the
//! registers and rules, and ids are unique. Each check is its own query, so editing one table re-checks
//! only that table. Diagnostics point at the offending cell.

use std::collections::{BTreeMap, BTreeSet};

use super::{countries, erps};
use crate::api_types::{FactTopic, Toggles};
use crate::diagnostics::Diagnostic;
use crate::ids::{local_erp_id, partner_id, slugify};
use crate::parse::json_sources::{
    ERP_REGISTER, NEWS, SPONSORS, locate_json_value, news_rows, sponsor_rows,
};
use crate::parse::rules::{
    FACTS, FILTERS, TOGGLES, VOCABULARY, fact_labels, filter_rules, obligation_rules, toggle_file,
    toggle_rules, vocabulary,
};
use crate::parse::source_text;
use crate::parse::tables::{
    Located, ObligationRow, PhaseStatus, Pos, REPORTING, REPORTING_FIRST_COLUMNS,
    ReportingSupportRow, RunKey, connector_rows, country_fact_keys, country_fact_rows_of,
    country_register_rows, local_erp_rows, mandate_rows, matrix_rows, obligation_rows,
    partner_flag_rows, partner_rows, rate_text, regime_rows, reporting_support_rows,
    reporting_table, vat_rows,
};

/// The country codes of the register, or `None` when the register could not be read at all: its own
/// error says why, and a check of every reference against an empty register would only bury it.
fn known_countries(db: &dyn salsa::Database) -> Option<BTreeSet<&str>> {
    let codes: BTreeSet<&str> = countries(db).iter().map(|c| c.code.as_str()).collect();
    (!codes.is_empty()).then_some(codes)
}

/// The ERP ids of the register, or `None` when it could not be read at all (see [`known_countries`]).
fn known_erps(db: &dyn salsa::Database) -> Option<BTreeSet<&str>> {
    let ids: BTreeSet<&str> = erps(db).iter().map(|e| e.id.as_str()).collect();
    (!ids.is_empty()).then_some(ids)
}

/// Shared state of one check: known codes and ids, and the diagnostics found.
struct Checker<'a> {
    countries: Option<BTreeSet<&'a str>>,
    erps: Option<BTreeSet<&'a str>>,
    diagnostics: Vec<Diagnostic>,
}

impl<'a> Checker<'a> {
    fn new(db: &'a dyn salsa::Database) -> Self {
        Checker {
            countries: known_countries(db),
            erps: known_erps(db),
            diagnostics: Vec::new(),
        }
    }

    fn country(&mut self, pos: &Pos, column: &str, code: &str) {
        if !code.is_empty() && self.countries.as_ref().is_some_and(|c| !c.contains(code)) {
            self.diagnostics.push(pos.error(
                column,
                format!("unknown country code `{code}` (not in sources/registers/countries.csv)"),
            ));
        }
    }

    fn erp(&mut self, pos: &Pos, column: &str, id: &str) {
        if !id.is_empty() && self.erps.as_ref().is_some_and(|e| !e.contains(id)) {
            self.diagnostics.push(pos.error(
                column,
                format!("unknown ERP id `{id}` (not in sources/registers/erps.json)"),
            ));
        }
    }

    fn one_of(&mut self, pos: &Pos, column: &str, what: &str, value: &str, allowed: &[String]) {
        if !allowed.iter().any(|a| a == value) {
            self.diagnostics.push(pos.error(
                column,
                format!(
                    "{what} `{value}` is not in rules/vocabulary.toml; expected one of: {}",
                    allowed.join(", ")
                ),
            ));
        }
    }

    /// Reports `key` when an earlier row already used it.
    fn unique(
        &mut self,
        seen: &mut BTreeMap<String, u32>,
        key: String,
        pos: &Pos,
        column: &str,
        what: &str,
    ) {
        if let Some(first) = seen.get(&key) {
            self.diagnostics.push(pos.error(
                column,
                format!("duplicate {what} `{key}` (first on line {first})"),
            ));
        } else {
            seen.insert(key, pos.line);
        }
    }
}

#[salsa::tracked(returns(ref))]
pub(crate) fn check_registers(db: &dyn salsa::Database) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    let mut seen = BTreeMap::new();
    for r in &country_register_rows(db).value {
        if let Some(first) = seen.insert(r.row.code.clone(), r.pos.line) {
            diagnostics.push(r.pos.error(
                "code",
                format!(
                    "duplicate country code `{}` (first on line {first})",
                    r.row.code
                ),
            ));
        }
    }
    if let Ok(text) = source_text(db, ERP_REGISTER) {
        let mut ids = BTreeSet::new();
        for erp in &crate::parse::json_sources::erp_register_rows(db).value {
            if !ids.insert(erp.id.as_str()) {
                diagnostics.push(locate_json_value(
                    ERP_REGISTER,
                    text,
                    &erp.id,
                    format!("duplicate ERP id `{}`", erp.id),
                ));
            }
        }
    }
    diagnostics
}

/// The facts table's checks, key by key: every check concerns one country's rows (its code, its labels,
/// one fact per label), so an edit re-checks only the countries whose rows changed.
#[salsa::tracked(returns(ref))]
pub(crate) fn check_country_facts(db: &dyn salsa::Database) -> Vec<Diagnostic> {
    country_fact_keys(db)
        .iter()
        .flat_map(|key| check_country_facts_of(db, RunKey::new(db, key.clone())))
        .cloned()
        .collect()
}

#[salsa::tracked(returns(ref))]
pub fn check_country_facts_of<'db>(
    db: &'db dyn salsa::Database,
    key: RunKey<'db>,
) -> Vec<Diagnostic> {
    let mut c = Checker::new(db);
    let labels = &fact_labels(db).value;
    let evidence = &vocabulary(db).value.evidence;
    let mut seen = BTreeMap::new();
    for r in &country_fact_rows_of(db, key).value {
        c.country(&r.pos, "country_code", &r.row.country);
        if !labels.iter().any(|l| l.label == r.row.fact) {
            let known: Vec<&str> = labels.iter().map(|l| l.label.as_str()).collect();
            c.diagnostics.push(r.pos.error(
                "fact",
                format!(
                    "unknown fact `{}` (rules/facts.toml has: {})",
                    r.row.fact,
                    known.join("; ")
                ),
            ));
        }
        if !r.row.evidence.is_empty() {
            c.one_of(&r.pos, "evidence", "evidence", &r.row.evidence, evidence);
        }
        c.unique(
            &mut seen,
            format!("{} / {}", r.row.country, r.row.fact),
            &r.pos,
            "fact",
            "fact",
        );
    }
    c.diagnostics
}

#[salsa::tracked(returns(ref))]
pub(crate) fn check_vat_and_mandates(db: &dyn salsa::Database) -> Vec<Diagnostic> {
    let mut c = Checker::new(db);
    let mut seen = BTreeMap::new();
    for r in &vat_rows(db).value {
        c.country(&r.pos, "country_code", &r.row.country);
        c.unique(
            &mut seen,
            r.row.country.clone(),
            &r.pos,
            "country_code",
            "VAT row for country",
        );
    }
    let evidence = &vocabulary(db).value.evidence;
    let mut seen = BTreeMap::new();
    for r in &mandate_rows(db).value {
        c.country(&r.pos, "country_code", &r.row.country);
        c.unique(
            &mut seen,
            r.row.country.clone(),
            &r.pos,
            "country_code",
            "mandate row for country",
        );
        if !r.row.mandate_evidence.is_empty() {
            c.one_of(
                &r.pos,
                "mandate_evidence",
                "evidence",
                &r.row.mandate_evidence,
                evidence,
            );
        }
    }
    c.diagnostics
}

/// The support type of a cell no source settles.
const UNKNOWN_SUPPORT: &str = "unknown/unverified";

#[salsa::tracked(returns(ref))]
pub fn check_matrix(db: &dyn salsa::Database) -> Vec<Diagnostic> {
    let mut c = Checker::new(db);
    let vocabulary = &vocabulary(db).value;
    let mut seen = BTreeMap::new();
    for r in &matrix_rows(db).value {
        c.country(&r.pos, "country_code", &r.row.country);
        c.erp(&r.pos, "erp", &r.row.erp);
        c.one_of(
            &r.pos,
            "support_type",
            "support_type",
            &r.row.support_type,
            &vocabulary.support_types,
        );
        if !r.row.evidence.is_empty() {
            c.one_of(
                &r.pos,
                "evidence",
                "evidence",
                &r.row.evidence,
                &vocabulary.evidence,
            );
        }
        c.unique(
            &mut seen,
            format!("{}-{}", r.row.country, r.row.erp),
            &r.pos,
            "erp",
            "matrix cell",
        );
    }
    // An ERP whose every cell is unknown says what was searched (the pages show it instead of a column
    // of empty cells): the data-honesty rule for a whole column.
    if let Ok(text) = source_text(db, ERP_REGISTER) {
        for erp in erps(db) {
            let mut cells = matrix_rows(db)
                .value
                .iter()
                .filter(|r| r.row.erp == erp.id)
                .peekable();
            let has_cells = cells.peek().is_some();
            let all_unknown = cells.all(|r| r.row.support_type == UNKNOWN_SUPPORT);
            if has_cells && all_unknown && erp.support_search.is_none() {
                c.diagnostics.push(locate_json_value(
                    ERP_REGISTER,
                    text,
                    &erp.id,
                    format!(
                        "every matrix cell of `{}` is {UNKNOWN_SUPPORT}: record what was searched in \
                         its `support_search` (`searched_on`, `searched`, `found`)",
                        erp.id
                    ),
                ));
            }
        }
    }
    c.diagnostics
}

#[salsa::tracked(returns(ref))]
pub fn check_reporting(db: &dyn salsa::Database) -> Vec<Diagnostic> {
    let mut c = Checker::new(db);
    let vocabulary = &vocabulary(db).value;
    let table = &reporting_table(db).value;
    let columns: Vec<&str> = table
        .erp_columns
        .iter()
        .map(|(name, _, _)| name.as_str())
        .collect();
    if !table.rows.is_empty() || !columns.is_empty() {
        let expected: Vec<&str> = vocabulary
            .reporting_erps
            .iter()
            .map(String::as_str)
            .collect();
        if columns != expected {
            let (line, column) = table
                .erp_columns
                .first()
                .map_or((1, 1), |(_, l, c)| (*l, *c));
            c.diagnostics.push(Diagnostic::new(
                REPORTING,
                line,
                column,
                format!(
                    "the ERP columns are `{}`; rules/vocabulary.toml `reporting_erps` says `{}`",
                    columns.join(","),
                    expected.join(",")
                ),
            ));
        }
    }
    // A report named twice for one country and topic is a duplicate: the data package's primary key.
    let mut seen = BTreeMap::new();
    for r in &table.rows {
        c.country(&r.pos, "country_code", &r.row.country);
        if !r.row.evidence.is_empty() {
            c.one_of(
                &r.pos,
                "evidence",
                "evidence",
                &r.row.evidence,
                &vocabulary.evidence,
            );
        }
        c.unique(
            &mut seen,
            format!("{} / {} / {}", r.row.topic, r.row.country, r.row.report_en),
            &r.pos,
            "report_en",
            "reporting row",
        );
        // A SAF-T row names phases of its own country's `saf-t` obligation, which must exist.
        if !r.row.phases.is_empty() {
            let phases = crate::model::country_obligations(
                db,
                crate::model::CountryKey::new(db, r.row.country.clone()),
            );
            for phase in &r.row.phases {
                if !phases
                    .iter()
                    .any(|p| p.obligation == "saf-t" && &p.phase == phase)
                {
                    c.diagnostics.push(r.pos.error(
                        "phases",
                        format!(
                            "`{phase}` is not a phase of {}'s `saf-t` obligation in \
                             tables/obligations.csv",
                            r.row.country
                        ),
                    ));
                }
            }
        }
    }
    check_reporting_cells(&mut c, table, &reporting_support_rows(db).value, &columns);
    c.diagnostics
}

/// The ERP cells of the reporting table and their evidence (`tables/reporting_support.csv`): every cell
/// other than `unknown` has exactly one evidence row, each evidence row names a row and an ERP column of
/// the table, and an `unknown` cell has none (it rests on nothing, so it cannot cite anything).
fn check_reporting_cells(
    c: &mut Checker<'_>,
    table: &crate::parse::tables::ReportingTable,
    support: &[Located<ReportingSupportRow>],
    columns: &[&str],
) {
    let key = |topic: &str, country: &str, report: &str| format!("{topic} / {country} / {report}");
    let mut seen = BTreeMap::new();
    let mut backed: BTreeSet<(String, &str)> = BTreeSet::new();
    for e in support {
        let row = &e.row;
        c.country(&e.pos, "country_code", &row.country);
        let row_key = key(&row.topic, &row.country, &row.report_en);
        c.unique(
            &mut seen,
            format!("{row_key} / {}", row.erp),
            &e.pos,
            "erp",
            "reporting cell evidence",
        );
        let column = columns.iter().position(|c| *c == row.erp);
        if column.is_none() && !row.erp.is_empty() {
            c.diagnostics.push(e.pos.error(
                "erp",
                format!(
                    "`{}` is not an ERP column of tables/reporting.csv (rules/vocabulary.toml `reporting_erps`: {})",
                    row.erp,
                    columns.join(", ")
                ),
            ));
        }
        let Some(target) = table.rows.iter().find(|r| {
            r.row.topic == row.topic
                && r.row.country == row.country
                && r.row.report_en == row.report_en
        }) else {
            if !row.report_en.is_empty() {
                c.diagnostics.push(e.pos.error(
                    "report_en",
                    format!(
                        "no row `{row_key}` in tables/reporting.csv: an evidence row names its reporting row by `topic`, `country_code` and `report_en` as written there"
                    ),
                ));
            }
            continue;
        };
        let Some(i) = column else { continue };
        match target.row.erp_support.get(i).map(String::as_str) {
            Some("unknown") => c.diagnostics.push(e.pos.error(
                "erp",
                format!(
                    "the `{}` cell of tables/reporting.csv line {} is `unknown`: an unknown cell rests on nothing, so it has no evidence row; give the cell its value, or remove this row",
                    row.erp, target.pos.line
                ),
            )),
            Some(_) => {
                backed.insert((row_key, columns[i]));
            }
            None => {}
        }
    }
    for r in &table.rows {
        let row_key = key(&r.row.topic, &r.row.country, &r.row.report_en);
        for (i, (erp, value)) in columns.iter().zip(&r.row.erp_support).enumerate() {
            if value != "unknown" && !backed.contains(&(row_key.clone(), *erp)) {
                c.diagnostics.push(r.pos.error_at(
                    REPORTING_FIRST_COLUMNS.len() + i,
                    format!(
                        "the ERP cell `{value}` ({erp}) needs the source that was read: its row in tables/reporting_support.csv (this row's `topic`, `country_code` and `report_en`, and `erp`), with how and when it was read, its grade and quote; only `unknown` needs none"
                    ),
                ));
            }
        }
    }
}

#[salsa::tracked(returns(ref))]
pub fn check_erp_tables(db: &dyn salsa::Database) -> Vec<Diagnostic> {
    let mut c = Checker::new(db);
    let vocabulary = &vocabulary(db).value;
    let mut seen = BTreeMap::new();
    for r in &connector_rows(db).value {
        c.erp(&r.pos, "erp", &r.row.erp);
        for code in &r.row.countries_in_scope {
            if !vocabulary.connector_tracked_countries.contains(code) {
                c.diagnostics.push(r.pos.error(
                    "countries_in_scope",
                    format!("`{code}` is not a tracked country (rules/vocabulary.toml connector_tracked_countries)"),
                ));
            }
        }
        c.unique(
            &mut seen,
            format!("{} / {}", r.row.provider, r.row.erp),
            &r.pos,
            "provider",
            "connector route",
        );
    }
    let mut seen = BTreeMap::new();
    for r in &local_erp_rows(db).value {
        c.country(&r.pos, "country_code", &r.row.country);
        c.unique(
            &mut seen,
            local_erp_id(&r.row.country, &r.row.name),
            &r.pos,
            "name",
            "local ERP id",
        );
    }
    let mut seen = BTreeMap::new();
    for r in &partner_flag_rows(db).value {
        c.country(&r.pos, "country_code", &r.row.country);
        c.erp(&r.pos, "erp", &r.row.erp);
        c.one_of(
            &r.pos,
            "flag",
            "flag",
            &r.row.flag,
            &vocabulary.partner_flags,
        );
        c.unique(
            &mut seen,
            format!("{}-{}", r.row.country, r.row.erp),
            &r.pos,
            "erp",
            "partner flag id",
        );
    }
    let mut seen = BTreeMap::new();
    for r in &partner_rows(db).value {
        c.country(&r.pos, "country_code", &r.row.country);
        c.erp(&r.pos, "erp", &r.row.erp);
        c.unique(
            &mut seen,
            partner_id(&r.row.country, &r.row.erp, &r.row.name),
            &r.pos,
            "name",
            "partner id",
        );
    }
    c.diagnostics
}

#[salsa::tracked(returns(ref))]
pub(crate) fn check_news_and_sponsors(db: &dyn salsa::Database) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    let known = known_erps(db);
    if let Ok(text) = source_text(db, NEWS) {
        let mut ids = BTreeSet::new();
        for item in &news_rows(db).value {
            if !ids.insert(item.id.as_str()) {
                diagnostics.push(locate_json_value(
                    NEWS,
                    text,
                    &item.id,
                    format!("duplicate news id `{}`", item.id),
                ));
            }
            for erp in item
                .erps
                .iter()
                .filter(|e| known.as_ref().is_some_and(|k| !k.contains(e.as_str())))
            {
                diagnostics.push(locate_json_value(
                    NEWS,
                    text,
                    erp,
                    format!("unknown ERP id `{erp}`"),
                ));
            }
        }
    }
    if let Ok(text) = source_text(db, SPONSORS) {
        let mut ids = BTreeSet::new();
        for item in &sponsor_rows(db).value {
            if !ids.insert(item.id.as_str()) {
                diagnostics.push(locate_json_value(
                    SPONSORS,
                    text,
                    &item.id,
                    format!("duplicate sponsor id `{}`", item.id),
                ));
            }
        }
    }
    diagnostics
}

/// The rule files against each other and the registers.
#[salsa::tracked(returns(ref))]
pub fn check_rules(db: &dyn salsa::Database) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    let known_erps = known_erps(db);
    let unknown_erp = |id: &str| known_erps.as_ref().is_some_and(|k| !k.contains(id));

    let mut labels = BTreeSet::new();
    let mut fact_ids = BTreeSet::new();
    for fact in &fact_labels(db).value {
        if !labels.insert(fact.label.as_str()) {
            diagnostics.push(
                fact.at
                    .error(FACTS, format!("duplicate fact label `{}`", fact.label)),
            );
        }
        if FactTopic::from_name(&fact.topic).is_none() {
            let topics: Vec<&str> = FactTopic::ALL.iter().map(|t| t.name()).collect();
            diagnostics.push(fact.at.error(
                FACTS,
                format!(
                    "unknown topic `{}`; expected one of: {}",
                    fact.topic,
                    topics.join(", ")
                ),
            ));
        }
        if let Some(erp) = fact.erp.as_deref().filter(|e| unknown_erp(e)) {
            diagnostics.push(fact.at.error(FACTS, format!("unknown ERP id `{erp}`")));
        }
        if !fact_ids.insert((fact.topic.as_str(), fact.erp.as_deref())) {
            diagnostics.push(fact.at.error(
                FACTS,
                format!("two labels give the same fact id (topic `{}`)", fact.topic),
            ));
        }
    }

    let toggles = &toggle_rules(db).value;
    let obligations = obligation_rules(db);
    let mut ids = BTreeSet::new();
    for obligation in obligations {
        if !ids.insert(obligation.id.as_str()) {
            diagnostics.push(obligation.at.error(
                TOGGLES,
                format!("obligation `{}` is declared twice", obligation.id),
            ));
        }
        if !labels.contains(obligation.fact.as_str()) {
            diagnostics.push(obligation.fact_at.error(
                TOGGLES,
                format!(
                    "unknown fact `{}` (rules/facts.toml has no such label)",
                    obligation.fact
                ),
            ));
        }
    }
    let mut names = BTreeSet::new();
    for toggle in toggles {
        if !Toggles::NAMES.contains(&toggle.name.as_str()) {
            diagnostics.push(toggle.at.error(
                TOGGLES,
                format!(
                    "unknown toggle `{}`; the toggles are: {}",
                    toggle.name,
                    Toggles::NAMES.join(", ")
                ),
            ));
        }
        if !names.insert(toggle.name.as_str()) {
            diagnostics.push(toggle.at.error(
                TOGGLES,
                format!("toggle `{}` is defined twice", toggle.name),
            ));
        }
        if !ids.contains(toggle.obligation.as_str()) {
            diagnostics.push(toggle.obligation_at.error(
                TOGGLES,
                format!(
                    "unknown obligation `{}`; declare it as an [[obligation]]",
                    toggle.obligation
                ),
            ));
        }
        for rule in toggle.rules.iter().filter(|r| r.when.is_empty()) {
            diagnostics.push(rule.at.error(TOGGLES, "`when` names no condition"));
        }
    }
    if toggle_file(db).diagnostics.is_empty() && source_text(db, TOGGLES).is_ok() {
        for missing in Toggles::NAMES.iter().filter(|n| !names.contains(*n)) {
            diagnostics.push(Diagnostic::file(
                TOGGLES,
                format!("toggle `{missing}` has no rules (give it a [[toggle]] entry)"),
            ));
        }
    }

    let mut slugs = BTreeSet::new();
    for filter in &filter_rules(db).value {
        if slugify(&filter.slug) != filter.slug {
            diagnostics.push(filter.at.error(
                FILTERS,
                format!(
                    "filter slug `{}` must be lower-case words joined by hyphens",
                    filter.slug
                ),
            ));
        }
        if !slugs.insert(filter.slug.as_str()) {
            diagnostics.push(
                filter
                    .at
                    .error(FILTERS, format!("duplicate filter slug `{}`", filter.slug)),
            );
        }
        for name in filter
            .toggles
            .iter()
            .filter(|n| *n != "*" && !Toggles::NAMES.contains(&n.as_str()))
        {
            diagnostics.push(
                filter
                    .toggles_at
                    .error(FILTERS, format!("unknown toggle `{name}`")),
            );
        }
        if filter.toggles.is_empty() {
            diagnostics.push(
                filter
                    .toggles_at
                    .error(FILTERS, "a filter needs at least one toggle"),
            );
        }
    }

    let vocabulary = &vocabulary(db).value;
    let known_countries = known_countries(db);
    // The labelled sets: an id is one word a list can hold and a spreadsheet cannot run;
    // its label is what a reader sees, so it says something (TOML refuses an id declared twice).
    for (set, labels) in vocabulary.labelled_sets() {
        for label in &labels.0 {
            let word = label.id.bytes().enumerate().all(|(i, b)| {
                b.is_ascii_lowercase()
                    || b.is_ascii_digit()
                    || (i > 0 && matches!(b, b'-' | b'.' | b'_'))
            });
            if label.id.is_empty() || !word {
                diagnostics.push(label.at.error(
                    VOCABULARY,
                    format!(
                        "{set}: id `{}` must be lower-case letters and digits (and `-`, `.`, `_` after the first)",
                        label.id
                    ),
                ));
            }
            if label.label.trim().is_empty() {
                diagnostics.push(label.at.error(
                    VOCABULARY,
                    format!("{set}: `{}` needs a label, what pages show", label.id),
                ));
            }
        }
    }
    for erp in vocabulary.reporting_erps.iter().filter(|e| unknown_erp(e)) {
        diagnostics.push(Diagnostic::file(
            VOCABULARY,
            format!("reporting_erps: unknown ERP id `{erp}`"),
        ));
    }
    for code in vocabulary.connector_tracked_countries.iter().filter(|c| {
        known_countries
            .as_ref()
            .is_some_and(|k| !k.contains(c.as_str()))
    }) {
        diagnostics.push(Diagnostic::file(
            VOCABULARY,
            format!("connector_tracked_countries: unknown country `{code}`"),
        ));
    }
    diagnostics
}

/// The obligations table: known countries and obligations, unique phases, a date where the status needs
/// one (and none where it cannot have one), an in-force date not after the reference date, `none` and
/// `unclear` alone, no two phases of one obligation from the same date for the same scope, and notes on
/// what was looked at for an unclear obligation.
#[salsa::tracked(returns(ref))]
pub fn check_obligations(db: &dyn salsa::Database) -> Vec<Diagnostic> {
    let mut c = Checker::new(db);
    let vocabulary = &vocabulary(db).value;
    let known: BTreeSet<&str> = obligation_rules(db).iter().map(|o| o.id.as_str()).collect();
    let reference = super::dates::reference_day(db);
    let rows = &obligation_rows(db).value;
    let mut seen = BTreeMap::new();
    for r in rows {
        let row = &r.row;
        c.country(&r.pos, "country_code", &row.country);
        if !row.evidence.is_empty() {
            c.one_of(
                &r.pos,
                "evidence",
                "evidence",
                &row.evidence,
                &vocabulary.evidence,
            );
        }
        // With no obligation declared (rules/toggles.toml unreadable), its own error says why.
        if !known.is_empty()
            && !row.obligation.is_empty()
            && !known.contains(row.obligation.as_str())
        {
            let list: Vec<&str> = known.iter().copied().collect();
            c.diagnostics.push(r.pos.error(
                "obligation",
                format!(
                    "unknown obligation `{}`; rules/toggles.toml declares: {}",
                    row.obligation,
                    list.join(", ")
                ),
            ));
        }
        c.unique(&mut seen, row.id(), &r.pos, "phase", "phase");
        match (row.status, row.applies_from) {
            (PhaseStatus::InForce, Some(date))
                if reference.is_some_and(|reference| date.first_day().is_some_and(|first| first > reference)) =>
            {
                c.diagnostics.push(r.pos.error(
                    "applies_from",
                    format!("an `in-force` phase cannot apply from `{date}`, after the reference date {}: it is `enacted`", reference.unwrap_or_default()),
                ))
            }
            _ => {}
        }
        if row.status == PhaseStatus::Unclear && row.notes.trim().is_empty() {
            c.diagnostics.push(r.pos.error(
                "notes",
                "an `unclear` phase says in `notes` what was looked at and why it stays unclear",
            ));
        }
    }
    // Phases of one country's obligation against each other.
    let mut groups: BTreeMap<(&str, &str), Vec<&crate::parse::tables::Located<ObligationRow>>> =
        BTreeMap::new();
    for r in rows {
        groups
            .entry((r.row.country.as_str(), r.row.obligation.as_str()))
            .or_default()
            .push(r);
    }
    for ((_, obligation), phases) in groups {
        if phases.len() > 1
            && let Some(alone) = phases
                .iter()
                .find(|p| matches!(p.row.status, PhaseStatus::None | PhaseStatus::Unclear))
        {
            c.diagnostics.push(alone.pos.error(
                "status",
                format!(
                    "contradictory phases: a `{}` phase must be the only phase of `{obligation}`, which has {} here",
                    alone.row.status.as_str(),
                    phases.len()
                ),
            ));
        }
        for (i, a) in phases.iter().enumerate() {
            for b in &phases[..i] {
                if a.row.applies_from.is_some()
                    && a.row.applies_from == b.row.applies_from
                    && a.row.scope.trim() == b.row.scope.trim()
                {
                    c.diagnostics.push(a.pos.error(
                        "phase",
                        format!(
                            "overlapping phases: `{}` applies from the same date to the same scope as `{}` (line {})",
                            a.row.phase, b.row.phase, b.pos.line
                        ),
                    ));
                }
            }
        }
    }
    c.diagnostics
}

/// The regimes table: known countries, an obligation the country's phases record, one row per country
/// and obligation, and every answer an id of its set in `rules/vocabulary.toml`.
#[salsa::tracked(returns(ref))]
pub fn check_regimes(db: &dyn salsa::Database) -> Vec<Diagnostic> {
    let mut c = Checker::new(db);
    let vocabulary = &vocabulary(db).value;
    let recorded: BTreeSet<(&str, &str)> = obligation_rows(db)
        .value
        .iter()
        .map(|r| (r.row.country.as_str(), r.row.obligation.as_str()))
        .collect();
    let mut seen = BTreeMap::new();
    for r in &regime_rows(db).value {
        let row = &r.row;
        c.country(&r.pos, "country_code", &row.country);
        if !row.evidence.is_empty() {
            c.one_of(
                &r.pos,
                "evidence",
                "evidence",
                &row.evidence,
                &vocabulary.evidence,
            );
        }
        // Only for a known country: an unknown code has its own error, and no phase.
        let known_country = c
            .countries
            .as_ref()
            .is_some_and(|k| k.contains(row.country.as_str()));
        if known_country
            && !row.obligation.is_empty()
            && !recorded.contains(&(row.country.as_str(), row.obligation.as_str()))
        {
            let has: Vec<&str> = recorded
                .iter()
                .filter(|(country, _)| *country == row.country)
                .map(|(_, obligation)| *obligation)
                .collect();
            c.diagnostics.push(r.pos.error(
                "obligation",
                format!(
                    "`{}` has no phase of `{}` in sources/tables/obligations.csv; it records: {}",
                    row.country,
                    row.obligation,
                    if has.is_empty() {
                        "none".to_string()
                    } else {
                        has.join(", ")
                    }
                ),
            ));
        }
        c.unique(&mut seen, row.id(), &r.pos, "obligation", "regime row");
        let answers = [
            (
                "model",
                "einvoicing_models",
                &vocabulary.einvoicing_models,
                row.model.as_slice(),
            ),
            (
                "formats",
                "einvoicing_formats",
                &vocabulary.einvoicing_formats,
                row.formats.as_deref().unwrap_or_default(),
            ),
            (
                "platforms",
                "einvoicing_platforms",
                &vocabulary.einvoicing_platforms,
                row.platforms.as_deref().unwrap_or_default(),
            ),
            (
                "signature",
                "signature_answers",
                &vocabulary.signature_answers,
                row.signature.as_slice(),
            ),
            (
                "archive_location",
                "archive_locations",
                &vocabulary.archive_locations,
                row.archive_location.as_slice(),
            ),
        ];
        for (column, set, labels, ids) in answers {
            let mut listed = BTreeSet::new();
            for id in ids {
                if labels.get(id).is_none() {
                    let known = labels.ids();
                    c.diagnostics.push(r.pos.error(
                        column,
                        format!(
                            "`{id}` is not in rules/vocabulary.toml [{set}]; expected one of: {}",
                            if known.is_empty() {
                                "(the set is empty)".to_string()
                            } else {
                                known.join(", ")
                            }
                        ),
                    ));
                } else if !listed.insert(id.as_str()) {
                    c.diagnostics.push(
                        r.pos
                            .error(column, format!("`{id}` is listed twice in `{column}`")),
                    );
                }
            }
        }
    }
    c.diagnostics
}

/// What a fact's clause for an obligation says (`B2B: mandatory from 2025-01-01`).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Claim {
    /// `mandatory from D`, `from D`: a phase in force or enacted from that day.
    From(String),
    /// `mandatory, in force`, `yes`, `required`, `on request`: a phase applies on the reference date.
    InForce,
    /// `enacted, date pending`.
    DatePending,
    /// `planned`.
    Planned,
    /// `no mandate`: nothing in force or enacted.
    NoMandate,
    /// `no`: nothing applies on the reference date.
    No,
}

/// The claim of `clause` in a fact text, if the text has the clause in one of the recorded forms or
/// begins it with one of `denials` (rules/vocabulary.toml: "not mandatory", "voluntary", …), which say
/// nothing applies.
fn claim(text: &str, clause: &str, denials: &[String]) -> Option<(Claim, String)> {
    let start = text
        .match_indices(&format!("{clause}: "))
        .find_map(|(at, _)| {
            let boundary = text[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric());
            boundary.then_some(at)
        })?;
    let rest = &text[start + clause.len() + 2..];
    let date_after = |prefix: &str| -> Option<String> {
        let date = rest.strip_prefix(prefix)?.get(..10)?;
        crate::parse::is_iso_date(date).then(|| date.to_string())
    };
    let word_is = |word: &str| {
        rest.strip_prefix(word)
            .is_some_and(|after| after.chars().next().is_none_or(|c| !c.is_alphanumeric()))
    };
    let found = if let Some(date) = date_after("mandatory from ").or_else(|| date_after("from ")) {
        Claim::From(date)
    } else if word_is("mandatory, in force")
        || word_is("yes")
        || word_is("required")
        || word_is("on request")
    {
        Claim::InForce
    } else if word_is("enacted, date pending") {
        Claim::DatePending
    } else if word_is("planned") {
        Claim::Planned
    } else if word_is("no mandate") {
        Claim::NoMandate
    } else if word_is("no") || denials.iter().any(|d| word_is(d)) {
        Claim::No
    } else {
        return None;
    };
    let shown: String = rest
        .chars()
        .take_while(|c| *c != '(' && *c != '.' && *c != ';')
        .collect();
    Some((found, format!("{clause}: {}", shown.trim())))
}

/// Whether the phases of an obligation bear a claim out.
fn borne_out(claim: &Claim, phases: &[&ObligationRow], reference: jiff::civil::Date) -> bool {
    use super::dates::meets;
    use crate::parse::rules::PhaseCondition as C;
    let any = |f: &dyn Fn(&ObligationRow) -> bool| phases.iter().any(|p| f(p));
    let enacted_or_in_force =
        |p: &ObligationRow| matches!(p.status, PhaseStatus::InForce | PhaseStatus::Enacted);
    match claim {
        Claim::From(date) => any(&|p| {
            enacted_or_in_force(p) && p.applies_from.is_some_and(|d| d.to_string() == *date)
        }),
        Claim::InForce => any(&|p| meets(p, C::Applies, reference)),
        Claim::DatePending => {
            any(&|p| p.status == PhaseStatus::EnactedDatePending) && !any(&enacted_or_in_force)
        }
        Claim::Planned => any(&|p| p.status == PhaseStatus::Planned) && !any(&enacted_or_in_force),
        Claim::NoMandate => {
            !any(&|p| enacted_or_in_force(p) || p.status == PhaseStatus::EnactedDatePending)
        }
        Claim::No => !any(&|p| meets(p, C::Applies, reference)),
    }
}

/// The country facts whose clause contradicts the structured phases of its obligation (the prose stays,
/// for people to read; it must say what the phases say). One query per country.
#[salsa::tracked(returns(ref))]
pub(crate) fn check_fact_clauses(db: &dyn salsa::Database) -> Vec<Diagnostic> {
    countries(db)
        .iter()
        .flat_map(|c| check_fact_clauses_of(db, crate::model::CountryKey::new(db, c.code.clone())))
        .cloned()
        .collect()
}

#[salsa::tracked(returns(ref))]
pub fn check_fact_clauses_of<'db>(
    db: &'db dyn salsa::Database,
    key: crate::model::CountryKey<'db>,
) -> Vec<Diagnostic> {
    let phases = crate::model::country_obligations(db, key);
    let Some(reference) = super::dates::reference_day(db) else {
        return Vec::new();
    };
    let denials = &vocabulary(db).value.denials;
    let mut diagnostics = Vec::new();
    for fact in &country_fact_rows_of(db, RunKey::new(db, key.code(db).clone())).value {
        for obligation in obligation_rules(db)
            .iter()
            .filter(|o| o.fact == fact.row.fact)
        {
            let own: Vec<&ObligationRow> = phases
                .iter()
                .filter(|p| p.obligation == obligation.id)
                .map(|p| &**p)
                .collect();
            let Some((claim, shown)) = claim(&fact.row.value, &obligation.clause, denials) else {
                continue;
            };
            if own.is_empty() || own.iter().any(|p| p.status == PhaseStatus::Unclear) {
                continue;
            }
            if !borne_out(&claim, &own, reference) {
                let recorded: Vec<String> = own
                    .iter()
                    .map(|p| match p.applies_from {
                        Some(date) => format!("{} {} from {date}", p.phase, p.status.as_str()),
                        None => format!("{} {}", p.phase, p.status.as_str()),
                    })
                    .collect();
                diagnostics.push(fact.pos.error(
                    "value",
                    format!(
                        "the text says `{shown}`, but tables/obligations.csv records {} as: {}",
                        obligation.id,
                        recorded.join("; ")
                    ),
                ));
            }
        }
    }
    diagnostics
}

/// The VAT rates a VAT fact's text states: its standard rate (`standard rate 22%`, `general rate 21%`,
/// `single rate 10%`), its reduced and super-reduced rates (`reduced rates 10% and 5%`, `super-reduced
/// rate 4%`), and whether it says there is none (`no reduced rates`).
#[derive(Debug, Default, PartialEq)]
struct StatedRates {
    standard: Option<(f64, String)>,
    reduced: Vec<(f64, String)>,
    no_reduced: bool,
}

fn stated_rates(text: &str) -> StatedRates {
    static STANDARD: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"(?i)\b(?:standard|general|single)(?: VAT| GST)? rate(?: is| of)? (\d+(?:\.\d+)?) ?%",
        )
        .expect("a valid pattern")
    });
    static REDUCED: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"(?i)\b(?:super-)?reduced rates? ((?:\d+(?:\.\d+)? ?%(?:,? and |, | or )?)+)",
        )
        .expect("a valid pattern")
    });
    static NUMBER: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(\d+(?:\.\d+)?) ?%").expect("a valid pattern")
    });
    let mut stated = StatedRates::default();
    if let Some(m) = STANDARD.captures(text) {
        stated.standard = m[1].parse().ok().map(|rate| (rate, m[0].to_string()));
    }
    for m in REDUCED.captures_iter(text) {
        for n in NUMBER.captures_iter(&m[1]) {
            if let Ok(rate) = n[1].parse() {
                stated.reduced.push((rate, m[0].trim_end().to_string()));
            }
        }
    }
    stated.no_reduced = text.to_ascii_lowercase().contains("no reduced rate");
    stated
}

fn same_rate(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// The VAT facts whose text states a rate that `tables/vat.csv` contradicts (a standard rate other than
/// its `standard_rate`, a reduced rate missing from its `reduced_rates`, "no reduced rates" beside listed
/// ones). A rate the text leaves out is no contradiction. One query per country.
#[salsa::tracked(returns(ref))]
pub(crate) fn check_vat_rates(db: &dyn salsa::Database) -> Vec<Diagnostic> {
    countries(db)
        .iter()
        .flat_map(|c| check_vat_rates_of(db, crate::model::CountryKey::new(db, c.code.clone())))
        .cloned()
        .collect()
}

#[salsa::tracked(returns(ref))]
pub fn check_vat_rates_of<'db>(
    db: &'db dyn salsa::Database,
    key: crate::model::CountryKey<'db>,
) -> Vec<Diagnostic> {
    let Some(vat) = crate::model::country_vat(db, key) else {
        return Vec::new();
    };
    let vat_labels: BTreeSet<&str> = fact_labels(db)
        .value
        .iter()
        .filter(|l| l.topic == "vat")
        .map(|l| l.label.as_str())
        .collect();
    let mut diagnostics = Vec::new();
    for fact in &country_fact_rows_of(db, RunKey::new(db, key.code(db).clone())).value {
        if !vat_labels.contains(fact.row.fact.as_str()) {
            continue;
        }
        let stated = stated_rates(&fact.row.value);
        if let (Some((rate, said)), Some(standard)) = (&stated.standard, vat.standard_rate)
            && !same_rate(*rate, standard)
        {
            diagnostics.push(fact.pos.error(
                "value",
                format!(
                    "the text says `{said}`, but tables/vat.csv gives standard_rate {}",
                    rate_text(standard)
                ),
            ));
        }
        if let Some(reduced) = &vat.reduced_rates {
            let listed = || {
                if reduced.is_empty() {
                    "none".to_string()
                } else {
                    reduced
                        .iter()
                        .map(|r| rate_text(*r))
                        .collect::<Vec<_>>()
                        .join(" ")
                }
            };
            for (rate, said) in &stated.reduced {
                if !reduced.iter().any(|r| same_rate(*r, *rate)) {
                    diagnostics.push(fact.pos.error(
                        "value",
                        format!(
                            "the text says `{said}`, but tables/vat.csv gives reduced_rates {} (no {}%)",
                            listed(),
                            rate_text(*rate)
                        ),
                    ));
                }
            }
            if stated.no_reduced && !reduced.is_empty() {
                diagnostics.push(fact.pos.error(
                    "value",
                    format!(
                        "the text says there are no reduced rates, but tables/vat.csv gives reduced_rates {}",
                        listed()
                    ),
                ));
            }
        }
    }
    diagnostics
}

#[cfg(test)]
mod vat_rate_tests {
    use super::stated_rates;

    #[test]
    fn rates_are_read_as_the_texts_state_them() {
        let fr = stated_rates(
            "TVA. Standard rate 20%; reduced rates 10% and 5.5%; super-reduced rate 2.1%.",
        );
        assert_eq!(fr.standard.as_ref().map(|s| s.0), Some(20.0));
        let reduced: Vec<f64> = fr.reduced.iter().map(|r| r.0).collect();
        assert_eq!(reduced, [10.0, 5.5, 2.1]);
        assert_eq!(fr.reduced[0].1, "reduced rates 10% and 5.5%");
        let au = stated_rates("GST. Single rate 10%; no reduced rates (GST-free supplies exist).");
        assert_eq!(au.standard.map(|s| s.0), Some(10.0));
        assert!(au.no_reduced && au.reduced.is_empty());
        let ar = stated_rates("IVA. General rate 21%; reduced rate 10.5%; increased rate 27%.");
        assert_eq!(ar.standard.map(|s| s.0), Some(21.0));
        assert_eq!(ar.reduced.iter().map(|r| r.0).collect::<Vec<_>>(), [10.5]);
        assert_eq!(
            stated_rates("The United States has no VAT."),
            Default::default()
        );
    }
}

#[cfg(test)]
mod clause_tests {
    use super::{Claim, claim};

    #[test]
    fn clauses_are_read_in_their_recorded_forms() {
        let text = "B2B: mandatory from 2026-09-01 (all). B2G: mandatory, in force (Chorus Pro).";
        assert_eq!(
            claim(text, "B2B", &[]).unwrap().0,
            Claim::From("2026-09-01".into())
        );
        assert_eq!(claim(text, "B2G", &[]).unwrap().0, Claim::InForce);
        let text =
            "VAT return. Real-time reporting: no (planned). SAF-T: on request. Audit file: no.";
        assert_eq!(
            claim(text, "Real-time reporting", &[]).unwrap().0,
            Claim::No
        );
        assert_eq!(claim(text, "SAF-T", &[]).unwrap().0, Claim::InForce);
        assert_eq!(claim(text, "Audit file", &[]).unwrap().0, Claim::No);
        assert_eq!(
            claim("B2B: enacted, date pending (x)", "B2B", &[])
                .unwrap()
                .0,
            Claim::DatePending
        );
        assert_eq!(
            claim("B2B: no mandate", "B2B", &[]).unwrap().0,
            Claim::NoMandate
        );
        assert_eq!(claim("XB2B: planned", "B2B", &[]), None);
        assert_eq!(claim("B2B: maybe", "B2B", &[]), None);
        // The denials of rules/vocabulary.toml, in any of their words, say nothing applies.
        let denials = ["not mandatory".to_string(), "voluntary".to_string()];
        assert_eq!(
            claim("B2B: not mandatory (B2G only).", "B2B", &denials)
                .unwrap()
                .0,
            Claim::No
        );
        assert_eq!(
            claim("B2B: voluntary.", "B2B", &denials).unwrap().0,
            Claim::No
        );
        assert_eq!(claim("B2B: voluntaryish", "B2B", &denials), None);
    }
}
