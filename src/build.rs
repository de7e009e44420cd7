//! One build: gather every diagnostic (sources, rules, templates, then the rendered pages' HTML and
//! links), and when there is none, render every output of the route table.
//!
//! Once the sources and rules are valid, the pages and the other outputs depend on them but not on each
//! other, so the build runs them on two threads, each with its own handle on the same database: this
//! one renders and checks the pages, the [`Helper`] thread renders the API and the data files, then
//! takes a share of the page work; when this thread is done with the pages it works through the
//! helper's list from the other end. A query both need runs once; the other thread waits for it.

use crate::db::Db;
use crate::diagnostics::Diagnostic;
use crate::helper::Helper;
use crate::linkcheck::is_checked;
use crate::model::checks;
use crate::parse::{json_sources, rules, tables};
use crate::render::FileKind;
use crate::render::{Rendered, render};
use crate::routes::{Output, Renderer, check_routes, outputs};

/// Whether an output is made from the Markdown twins (`llms.txt`, `llms-full.txt`).
fn is_made_from_twins(output: &Output) -> bool {
    matches!(
        output.renderer,
        Renderer::File(FileKind::Llms | FileKind::LlmsFull)
    )
}

/// Whether an output is a page or twin, or is made from them: the work of the thread that renders and
/// checks the pages.
fn reads_pages(output: &Output) -> bool {
    is_checked(&output.path) || is_made_from_twins(output)
}

/// Every problem in the sources and rules, then (when there is none) in the rendered pages, sorted by
/// file and position.
pub fn diagnostics(db: &Db) -> Vec<Diagnostic> {
    let mut all = source_diagnostics(db);
    if all.is_empty() {
        all = page_diagnostics(db);
    }
    all
}

/// Every problem in the sources and rules, sorted by file and position.
fn source_diagnostics(db: &Db) -> Vec<Diagnostic> {
    let mut all: Vec<Diagnostic> = Vec::new();
    all.extend_from_slice(&tables::country_register_rows(db).diagnostics);
    all.extend_from_slice(&json_sources::erp_register_rows(db).diagnostics);
    all.extend_from_slice(&tables::country_fact_runs(db).diagnostics);
    for rows in tables::country_fact_rows_by_key(db) {
        all.extend_from_slice(&rows.diagnostics);
    }
    all.extend_from_slice(&tables::vat_rows(db).diagnostics);
    all.extend_from_slice(&tables::mandate_rows(db).diagnostics);
    all.extend_from_slice(&tables::matrix_rows(db).diagnostics);
    all.extend_from_slice(&tables::reporting_table(db).diagnostics);
    all.extend_from_slice(&tables::connector_rows(db).diagnostics);
    all.extend_from_slice(&tables::local_erp_rows(db).diagnostics);
    all.extend_from_slice(&tables::partner_flag_rows(db).diagnostics);
    all.extend_from_slice(&tables::partner_rows(db).diagnostics);
    all.extend_from_slice(&tables::obligation_rows(db).diagnostics);
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
    all.extend_from_slice(checks::check_obligations(db));
    all.extend_from_slice(checks::check_fact_clauses(db));
    all.extend_from_slice(checks::check_vat_rates(db));
    all.extend_from_slice(check_routes(db));
    // Releases and changes.
    all.extend_from_slice(&crate::history::release_register(db).diagnostics);
    all.extend_from_slice(crate::history::check_releases(db));
    all.sort();
    all.dedup();
    crate::diagnostics::cap_per_file(all)
}

/// The problems of the rendered pages, from valid sources: template errors at their file and line, then
/// (when the pages render) HTML errors and internal links or anchors that do not resolve.
fn page_diagnostics(db: &Db) -> Vec<Diagnostic> {
    let mut all = crate::render::render_errors(db);
    if all.is_empty() {
        all = crate::linkcheck::problems(db);
    }
    all.sort();
    all.dedup();
    crate::diagnostics::cap_per_file(all)
}

/// Every output of the route table with its rendered bytes, or every diagnostic when there is any (a
/// one-off build: the second thread lives for this call only).
pub fn render_site(db: &Db) -> Result<Vec<(String, &Rendered)>, Vec<Diagnostic>> {
    render_site_with(db, &mut Helper::new())
}

/// [`render_site`] with a session's [`Helper`] as the second thread.
pub fn render_site_with<'db>(
    db: &'db Db,
    helper: &mut Helper,
) -> Result<Vec<(String, &'db Rendered)>, Vec<Diagnostic>> {
    let diagnostics = source_diagnostics(db);
    if !diagnostics.is_empty() {
        return Err(diagnostics);
    }
    let worker_db = db.clone();
    let worker = move || {
        let all = outputs(&worker_db);
        // First the outputs that read no page: the API, the data files, the headers, the assets.
        for output in all.iter().filter(|o| !reads_pages(o)) {
            render(&worker_db, output);
        }
        // Then a share of the page work, which the other thread finds done: the Markdown twins' link
        // check, and the llms files made from the twins.
        for output in all
            .iter()
            .filter(|o| crate::linkcheck::is_markdown(&o.path))
        {
            let page = crate::linkcheck::PageKey::new(&worker_db, output.clone());
            crate::linkcheck::page_links(&worker_db, page);
            crate::linkcheck::broken_links(&worker_db, page);
        }
        for output in all.iter().filter(|o| is_made_from_twins(o)) {
            render(&worker_db, output);
        }
    };
    let diagnostics = helper.run_beside(worker, || {
        let diagnostics = page_diagnostics(db);
        if diagnostics.is_empty() {
            // Meet the helper from the other end of its list: when it starts late, this thread does
            // its share instead of waiting.
            let all = outputs(db);
            for output in all.iter().rev().filter(|o| !is_checked(&o.path)) {
                render(db, output);
            }
        }
        diagnostics
    });
    if !diagnostics.is_empty() {
        return Err(diagnostics);
    }
    Ok(outputs(db)
        .iter()
        .map(|output| (output.path.clone(), render(db, output)))
        .collect())
}
