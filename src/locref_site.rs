//! This site, for the engine: the one [`Site`] value `main` hands to every command. It names the site's
//! checks, outputs, renderers, warm-up and retention; the engine (`build`, `session`, `serve`, `memory`)
//! reads them only through it. A new source table joins [`source_diagnostics`] here, a new page kind the
//! route table and `render`: neither touches an engine file.

use crate::db::Db;
use crate::diagnostics::Diagnostic;
#[cfg(feature = "streaming")]
use crate::kinds::{FileKind, PageKind, Renderer, RendererOf};
use crate::model::{checks, evidence};
#[cfg(feature = "streaming")]
use crate::output::Output;
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
    base_url: |db| crate::model::base_url(db),
    is_made_of_parts: crate::render::pages::parts::is_made_of_parts,
    parts_of: crate::render::pages::parts::parts_of,
    skeleton: |db, page| crate::render::pages::parts::page_skeleton(db, page),
    part: |db, part| crate::render::pages::parts::page_part(db, part),
    part_enclosing: crate::render::pages::parts::part_enclosing,
    #[cfg(feature = "streaming")]
    share_made_contexts: |db| crate::render::pages::context::share_made_contexts(db),
    #[cfg(feature = "streaming")]
    forget_made_contexts: |db| crate::render::pages::context::forget_made_contexts(db),
    #[cfg(feature = "streaming")]
    remember_what_others_read,
    render_errors: |db| crate::render::render_errors(db),
    figure_errors: |db| crate::render::page_figures::figure_errors(db),
    #[cfg(feature = "streaming")]
    render_order,
    #[cfg(feature = "streaming")]
    same_unit,
    #[cfg(feature = "streaming")]
    made_from_twins,
    #[cfg(feature = "streaming")]
    list_stream: crate::render::stream_list,
    #[cfg(feature = "streaming")]
    growth: crate::render::llms::growth,
    #[cfg(feature = "streaming")]
    part_is_plain: crate::render::llms::part_goes_as_it_comes,
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

/// The outputs of a build in the order it renders them: the pages in route order (the order of
/// `llms-full.txt`, which a one-off build writes as the twins come), each page beside its twin (they
/// share a context), and the search page after the pages it lists (by their twins' titles); then the
/// outputs made from the pages (the search index, the llms files), which find what they read of each
/// page without rendering it again. The outputs that read no page (the API's envelopes, the data files,
/// the assets), in route order, come:
///
/// - in a one-off build, first, made while the build holds least (before the pages' links and search
///   lines are gathered);
/// - in a session, the API's first and the data files and assets last. An edit's API lists are
///   spliced from the parts the session keeps, made in a few milliseconds, so the writing thread starts
///   on them (`facts.json` and `changes.json`, 25 MB each at x100) while the pages are made; the data
///   files come after `llms-full.txt` (113 MB), so that the data package's SHA-256 of a changed CSV
///   runs while it is written (BENCHMARKS.md).
#[cfg(feature = "streaming")]
fn render_order(all: &[Output], once: bool) -> Vec<Output> {
    let mut first = std::collections::HashMap::new();
    for (i, output) in all.iter().enumerate() {
        if let Renderer::Page(kind, _) = output.renderer() {
            first.entry((kind, output.param.as_deref())).or_insert(i);
        }
    }
    let mut ordered: Vec<(usize, &Output)> = all.iter().enumerate().collect();
    // Stable: outputs that are not pages keep their route order.
    ordered.sort_by_key(|(i, output)| match output.renderer() {
        _ if is_made_from_pages(output) => (3, 0, None),
        Renderer::File(_) if !once => (4, 0, None),
        Renderer::Api(_) | Renderer::File(_) => (0, 0, None),
        Renderer::Page(PageKind::Search, format) => (2, *i, Some(format)),
        Renderer::Page(kind, format) => (1, first[&(kind, output.param.as_deref())], Some(format)),
    });
    ordered
        .into_iter()
        .map(|(_, output)| output.clone())
        .collect()
}

/// Whether an output reads what the pages rendered: the llms files (the twins), the search index (the
/// twins' titles).
#[cfg(feature = "streaming")]
fn is_made_from_pages(output: &Output) -> bool {
    made_from_twins(output) || output.renderer() == Renderer::File(FileKind::SearchIndex)
}

/// Whether an output is made from the Markdown twins (`llms.txt`, `llms-full.txt`).
#[cfg(feature = "streaming")]
fn made_from_twins(output: &Output) -> bool {
    matches!(
        output.renderer(),
        Renderer::File(FileKind::Llms | FileKind::LlmsFull)
    )
}

/// A page and its twin, one after the other, are one unit of the streaming plan: they share a context,
/// made once.
#[cfg(feature = "streaming")]
fn same_unit(before: &Output, output: &Output) -> bool {
    let page = |output: &Output| match output.renderer() {
        Renderer::Page(kind, _) => Some((kind, output.param.clone())),
        Renderer::Api(_) | Renderer::File(_) => None,
    };
    page(output).is_some() && page(output) == page(before)
}

#[cfg(all(test, feature = "streaming"))]
mod tests {
    use super::*;
    use crate::kinds::{ApiKind, Format, PageKind};

    fn output(path: &str, renderer: Renderer, param: Option<&str>) -> Output {
        Output {
            path: path.to_string(),
            kind: renderer.kind(),
            param: param.map(str::to_string),
            route: 0,
        }
    }

    #[test]
    fn pages_beside_their_twins_then_what_reads_them_and_the_outputs_without_pages_around_them() {
        let page = |path: &str, kind: PageKind, param: Option<&str>, format: Format| {
            output(path, Renderer::Page(kind, format), param)
        };
        // Route order: every country page, then every twin; the search page's routes come first here.
        let all = vec![
            page("/search/index.html", PageKind::Search, None, Format::Html),
            page("/search/index.md", PageKind::Search, None, Format::Markdown),
            output("/api/v1/index.json", Renderer::Api(ApiKind::Index), None),
            page(
                "/ad/index.html",
                PageKind::Country,
                Some("ad"),
                Format::Html,
            ),
            page(
                "/de/index.html",
                PageKind::Country,
                Some("de"),
                Format::Html,
            ),
            page(
                "/ad/index.md",
                PageKind::Country,
                Some("ad"),
                Format::Markdown,
            ),
            page(
                "/de/index.md",
                PageKind::Country,
                Some("de"),
                Format::Markdown,
            ),
            page("/index.html", PageKind::Home, None, Format::Html),
            page("/index.md", PageKind::Home, None, Format::Markdown),
            output("/llms.txt", Renderer::File(FileKind::Llms), None),
            output(
                "/search-index.json",
                Renderer::File(FileKind::SearchIndex),
                None,
            ),
            output("/api/v1/facts.json", Renderer::Api(ApiKind::Facts), None),
            output(
                "/data/countries.csv",
                Renderer::File(FileKind::DataCsv),
                Some("countries"),
            ),
        ];
        let order = |one_off: bool| -> Vec<String> {
            render_order(&all, one_off)
                .into_iter()
                .map(|o| o.path)
                .collect()
        };
        let pages_and_what_reads_them = [
            "/ad/index.html",
            "/ad/index.md",
            "/de/index.html",
            "/de/index.md",
            "/index.html",
            "/index.md",
            "/search/index.html",
            "/search/index.md",
            "/llms.txt",
            "/search-index.json",
        ];
        let api = ["/api/v1/index.json", "/api/v1/facts.json"];
        let files = ["/data/countries.csv"];
        assert_eq!(
            order(true),
            [&api[..], &files, &pages_and_what_reads_them].concat()
        );
        // A session makes the API's outputs first and the files that read no page last.
        assert_eq!(
            order(false),
            [&api[..], &pages_and_what_reads_them, &files].concat()
        );
    }
}
