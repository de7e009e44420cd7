//! Cross-file checks: every reference to a country, an ERP or a vocabulary value is resolved against the
//! registers and rules, and ids are unique. Each check is its own query, so editing one table re-checks
//! only that table. Diagnostics point at the offending cell.

use std::collections::{BTreeMap, BTreeSet};

use super::{countries, erps};
use crate::diagnostics::Diagnostic;
use crate::ids::{local_erp_id, partner_id, slugify};
use crate::parse::json_sources::{
    ERP_REGISTER, NEWS, SPONSORS, locate_json_value, news_rows, sponsor_rows,
};
use crate::parse::rules::{
    FACTS, FILTERS, TOGGLES, VOCABULARY, fact_labels, filter_rules, toggle_rules, vocabulary,
};
use crate::parse::source_text;
use crate::parse::tables::{
    Pos, REPORTING, RunKey, connector_rows, country_fact_keys, country_fact_rows_of,
    country_register_rows, local_erp_rows, mandate_rows, matrix_rows, partner_flag_rows,
    partner_rows, reporting_table, vat_rows,
};
use crate::resources::{FactTopic, Toggles};

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
pub fn check_registers(db: &dyn salsa::Database) -> Vec<Diagnostic> {
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
pub fn check_country_facts(db: &dyn salsa::Database) -> Vec<Diagnostic> {
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
pub fn check_vat_and_mandates(db: &dyn salsa::Database) -> Vec<Diagnostic> {
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
    }
    c.diagnostics
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
            local_erp_id(&r.row),
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
        c.unique(&mut seen, partner_id(&r.row), &r.pos, "name", "partner id");
    }
    c.diagnostics
}

#[salsa::tracked(returns(ref))]
pub fn check_news_and_sponsors(db: &dyn salsa::Database) -> Vec<Diagnostic> {
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
        for topic in toggle
            .topics
            .iter()
            .filter(|t| FactTopic::from_name(t).is_none())
        {
            diagnostics.push(toggle.at.error(TOGGLES, format!("unknown topic `{topic}`")));
        }
    }
    if !toggles.is_empty() || source_text(db, TOGGLES).is_ok() {
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
