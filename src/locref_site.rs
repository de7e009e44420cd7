//! This site, for the engine: the one [`Site`] value `main` hands to every command. It names the site's
//! checks, outputs, renderers, warm-up and retention; the engine (`build`, `session`, `serve`, `memory`)
//! reads them only through it. A new source table joins [`source_diagnostics`] here, a new page kind the
//! route table and `render`: neither touches an engine file.

use crate::db::Db;
use crate::diagnostics::Diagnostic;
use crate::model::{checks, evidence};
use crate::parse::{json_sources, rules, tables};
use crate::routes::check_routes;
use crate::site::Site;

/// The site locref builds.
pub static SITE: Site = Site {
    source_diagnostics,
    warm_up,
    outputs: |db| crate::routes::outputs(db),
    digest: |db, output| crate::render::digest(db, output),
    render: |db, output| crate::render::render(db, output),
    #[cfg(feature = "streaming")]
    share_made_contexts: |db| crate::render::pages::context::share_made_contexts(db),
    #[cfg(feature = "streaming")]
    forget_made_contexts: |db| crate::render::pages::context::forget_made_contexts(db),
    #[cfg(feature = "streaming")]
    remember_what_others_read,
    render_errors: |db| crate::render::render_errors(db),
    figure_errors: |db| crate::render::page_figures::figure_errors(db),
    #[cfg(feature = "streaming")]
    keep_for_single_build,
    #[cfg(feature = "streaming")]
    keep_for_session,
    take_executed: crate::render::take_executed,
    page_headers,
    detail_routes: |db| crate::routes::detail_routes(db),
};

/// Every problem in the sources and rules, sorted by file and position: every check of every table
/// and rule file, the cross-file checks, the evidence, the route table and the releases.
fn source_diagnostics(db: &Db) -> Vec<Diagnostic> {
    let mut all: Vec<Diagnostic> = Vec::new();
    all.extend_from_slice(crate::db::link_diagnostics(db));
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
    all.extend_from_slice(&tables::reporting_support_rows(db).diagnostics);
    all.extend_from_slice(&tables::connector_rows(db).diagnostics);
    all.extend_from_slice(&tables::local_erp_rows(db).diagnostics);
    all.extend_from_slice(&tables::partner_flag_rows(db).diagnostics);
    all.extend_from_slice(&tables::partner_rows(db).diagnostics);
    all.extend_from_slice(&tables::obligation_rows(db).diagnostics);
    all.extend_from_slice(&tables::regime_rows(db).diagnostics);
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
    all.extend_from_slice(checks::check_regimes(db));
    all.extend_from_slice(checks::check_fact_clauses(db));
    all.extend_from_slice(checks::check_vat_rates(db));
    all.extend_from_slice(crate::model::agreement::check_agreement(db));
    all.extend_from_slice(&tables::publisher_rows(db).diagnostics);
    all.extend_from_slice(&tables::country_alias_rows(db).diagnostics);
    all.extend_from_slice(evidence::check_publishers(db));
    all.extend_from_slice(evidence::check_obligation_evidence(db));
    all.extend_from_slice(evidence::check_regime_and_vat_evidence(db));
    all.extend_from_slice(evidence::check_erp_evidence(db));
    all.extend_from_slice(evidence::check_fact_evidence(db));
    all.extend_from_slice(evidence::check_news_and_sponsor_evidence(db));
    all.extend_from_slice(check_routes(db));
    all.extend_from_slice(crate::model::unread::check_unread_files(db));
    // Releases and changes.
    all.extend_from_slice(&crate::history::release_register(db).diagnostics);
    all.extend_from_slice(crate::history::check_releases(db));
    all.sort();
    all.dedup();
    crate::history::register_first(&mut all);
    crate::diagnostics::cap_per_file(all)
}

/// The second thread's share of [`source_diagnostics`]: it reads the release snapshots (every
/// release's, the largest check at the shipped scale) and the news (the largest source read whole at
/// x100), then parses the facts table's countries from the last one on, while the other thread checks
/// the tables and rules from the first country on; each takes what the other made as it reaches it.
fn warm_up(db: &Db) {
    crate::history::check_releases_from_the_end(db);
    crate::history::check_releases(db);
    json_sources::news_rows(db);
    // The facts table is most of the sources at scale (24 of 44 MB at x100), parsed country by
    // country: the two threads meet in its middle. A country the other thread is parsing is waited
    // for, one it parsed is found done.
    tables::country_fact_rows_by_key(db).rev().for_each(drop);
}

/// What other outputs read of `output`, made while its bytes are in memory (the streaming plan calls
/// it after each output it renders): a page's twin title and condensed text (`llms.txt`,
/// `llms-full.txt`, the search index), a CSV file's size and SHA-256 (the data package).
#[cfg(feature = "streaming")]
fn remember_what_others_read(db: &Db, output: &crate::output::Output) {
    use crate::kinds::{FileKind, Renderer, RendererOf};
    match output.renderer() {
        Renderer::Page(..) => crate::render::llms::remember_page(db, output),
        Renderer::File(FileKind::DataCsv) => {
            let stem = crate::render::param_of(output);
            crate::render::published::csv_digest(db, crate::render::data::StemKey::new(db, stem));
        }
        Renderer::Api(_) | Renderer::File(_) => {}
    }
}

/// A one-off build's capacities (the policy is [`crate::memory`]'s): besides the outputs, the parts a list is
/// spliced from (a country's part of each flat CSV file, each part of the pages made of parts, which
/// are handed over part by part and let go a batch of parts at a time (`build::parted`), and their
/// skeletons; `facts.json`, `changes.json` and the flat JSON files are not even made of kept parts
/// there, see [`crate::render::stream_list`]) and each History section's context, which one output (or
/// one page and its twin) reads once.
#[cfg(feature = "streaming")]
fn keep_for_single_build(db: &mut Db) {
    crate::render::keep_last_output_only(db);
    // `llms-full.txt` takes each condensed twin as the twin is rendered (see `build::streaming`).
    crate::render::llms::keep_last_condensed_twin_only(db);
    crate::render::api::keep_last_part_only(db);
    crate::render::history::keep_last_parts_only(db);
    crate::render::pages::changes::keep_last_contexts_only(db);
    crate::render::data::keep_last_parts_only(db);
    crate::render::pages::parts::keep_last_parts_only(db);
    crate::render::pages::lists::keep_last_news_part_only(db);
}

/// A `watch` session's capacities (see [`crate::memory`]).
#[cfg(feature = "streaming")]
fn keep_for_session(db: &mut Db) {
    crate::render::keep_last_output_only(db);
    crate::render::pages::changes::keep_last_contexts_only(db);
}

/// The headers every page is sent with (the site's Content-Security-Policy).
fn page_headers(db: &Db) -> Vec<(String, String)> {
    let site = &crate::parse::rules::site_rules(db).value;
    site.content_security_policy
        .iter()
        .map(|csp| {
            let value = crate::render::headers::header_value(csp);
            ("Content-Security-Policy".to_string(), value)
        })
        .collect()
}
