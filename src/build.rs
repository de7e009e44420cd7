//! One build: gather every diagnostic (sources, rules, templates, then the rendered pages' HTML and
//! links), and when there is none, render every output of the route table.

use crate::db::Db;
use crate::diagnostics::Diagnostic;
use crate::model::checks;
use crate::parse::{json_sources, rules, tables};
use crate::render::{Rendered, render};
use crate::routes::{check_routes, outputs};

/// Every problem in the sources and rules, sorted by file and position.
pub fn diagnostics(db: &Db) -> Vec<Diagnostic> {
    let mut all: Vec<Diagnostic> = Vec::new();
    all.extend_from_slice(&tables::country_register_rows(db).diagnostics);
    all.extend_from_slice(&json_sources::erp_register_rows(db).diagnostics);
    all.extend_from_slice(&tables::country_fact_rows(db).diagnostics);
    all.extend_from_slice(&tables::vat_rows(db).diagnostics);
    all.extend_from_slice(&tables::mandate_rows(db).diagnostics);
    all.extend_from_slice(&tables::matrix_rows(db).diagnostics);
    all.extend_from_slice(&tables::reporting_table(db).diagnostics);
    all.extend_from_slice(&tables::connector_rows(db).diagnostics);
    all.extend_from_slice(&tables::local_erp_rows(db).diagnostics);
    all.extend_from_slice(&tables::partner_flag_rows(db).diagnostics);
    all.extend_from_slice(&tables::partner_rows(db).diagnostics);
    all.extend_from_slice(&json_sources::news_rows(db).diagnostics);
    all.extend_from_slice(&json_sources::sponsor_rows(db).diagnostics);
    all.extend_from_slice(&rules::site_rules(db).diagnostics);
    all.extend_from_slice(&rules::route_rules(db).diagnostics);
    all.extend_from_slice(&rules::toggle_rules(db).diagnostics);
    all.extend_from_slice(&rules::filter_rules(db).diagnostics);
    all.extend_from_slice(&rules::fact_labels(db).diagnostics);
    all.extend_from_slice(&rules::vocabulary(db).diagnostics);
    all.extend_from_slice(checks::check_registers(db));
    all.extend_from_slice(checks::check_country_facts(db));
    all.extend_from_slice(checks::check_vat_and_mandates(db));
    all.extend_from_slice(checks::check_matrix(db));
    all.extend_from_slice(checks::check_reporting(db));
    all.extend_from_slice(checks::check_erp_tables(db));
    all.extend_from_slice(checks::check_news_and_sponsors(db));
    all.extend_from_slice(checks::check_rules(db));
    all.extend_from_slice(check_routes(db));
    if all.is_empty() {
        // Pages render only from valid data; a template problem is reported at its file and line.
        all.extend(crate::render::render_errors(db));
    }
    if all.is_empty() {
        // Links are checked on the rendered pages: every internal href and #anchor resolves.
        all.extend(crate::linkcheck::problems(db));
    }
    all.sort();
    all.dedup();
    all
}

/// Every output of the route table with its rendered bytes, or every diagnostic when there is any.
pub fn render_site(db: &Db) -> Result<Vec<(String, &Rendered)>, Vec<Diagnostic>> {
    let diagnostics = diagnostics(db);
    if !diagnostics.is_empty() {
        return Err(diagnostics);
    }
    Ok(outputs(db)
        .iter()
        .map(|output| (output.path.clone(), render(db, output)))
        .collect())
}
