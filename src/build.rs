//! One build: gather every diagnostic (sources, rules, templates, then the rendered pages' HTML and
//! links), and when there is none, render every output of the route table.
//!
//! Once the sources and rules are valid, the pages and the other outputs depend on them but not on each
//! other, so the build runs them on two threads, each with its own handle on the same database: this
//! one renders and checks the pages, the [`Helper`] thread renders the API and the data files, then
//! takes a share of the page work; when this thread is done with the pages it works through the
//! helper's list from the other end. A query both need runs once; the other thread waits for it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::db::Db;
use crate::diagnostics::Diagnostic;
use crate::helper::Helper;
use crate::linkcheck::is_checked;
use crate::model::checks;
use crate::parse::{json_sources, rules, tables};
use crate::render::{FileKind, PageKind};
use crate::render::{Rendered, digest, render};
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
    check_site_with(db, helper)?;
    Ok(outputs(db)
        .iter()
        .map(|output| (output.path.clone(), render(db, output)))
        .collect())
}

/// Every diagnostic of the site, or none when every output rendered (what a session's rebuild runs
/// before it publishes): each output is rendered as far as its [`digest`], so a session can publish
/// from the digests and ask for the bytes of only the outputs that changed.
pub fn check_site_with(db: &Db, helper: &mut Helper) -> Result<(), Vec<Diagnostic>> {
    let diagnostics = source_diagnostics(db);
    if !diagnostics.is_empty() {
        return Err(diagnostics);
    }
    let worker_db = db.clone();
    let worker = move || {
        let all = outputs(&worker_db);
        // First the outputs that read no page: the API, the data files, the headers, the assets.
        for output in all.iter().filter(|o| !reads_pages(o)) {
            digest(&worker_db, output);
        }
        // Then a share of the page work, which the other thread finds done: the Markdown twins' link
        // check, and the llms files made from the twins.
        for output in all
            .iter()
            .filter(|o| crate::linkcheck::is_markdown(&o.path))
        {
            let page = crate::render::OutputKey::new(&worker_db, output.clone());
            crate::linkcheck::page_links(&worker_db, page);
            crate::linkcheck::broken_links(&worker_db, page);
        }
        for output in all.iter().filter(|o| is_made_from_twins(o)) {
            digest(&worker_db, output);
        }
    };
    let diagnostics = helper.run_beside(worker, || {
        let diagnostics = page_diagnostics(db);
        if diagnostics.is_empty() {
            // Meet the helper from the other end of its list: when it starts late, this thread does
            // its share instead of waiting.
            let all = outputs(db);
            for output in all.iter().rev().filter(|o| !is_checked(&o.path)) {
                digest(db, output);
            }
        }
        diagnostics
    });
    if !diagnostics.is_empty() {
        return Err(diagnostics);
    }
    Ok(())
}

/// Why a one-off build stopped.
#[derive(Debug)]
pub enum BuildError {
    /// The sources, rules or rendered pages have errors.
    Invalid(Vec<Diagnostic>),
    /// Handing an output over (writing it) failed.
    Io(std::io::Error),
}

/// How many outputs a build renders in its first batch when it knows nothing of their sizes, before
/// it hands them over and evicts them; later batches hold about [`BATCH_BYTES`] of output, by the size
/// each output had when it was last made ([`OutputSizes`]), or by the bytes per output seen so far. A
/// small site is then rendered in one or two batches, on two threads throughout, as if nothing were
/// evicted; a large one in batches of tens of megabytes.
const FIRST_BATCH: usize = 16;

/// The rendered bytes a batch aims at (see [`FIRST_BATCH`]).
const BATCH_BYTES: usize = 32 << 20;

/// The outputs of a build in the order it renders them: the pages first, each page beside its
/// twin (they share a context, and a page's search entries read its twin's title), the search page after
/// the pages it lists, then every other output in route order.
fn render_order(all: &[Output]) -> Vec<Output> {
    let mut ordered: Vec<Output> = all.to_vec();
    // Stable: outputs that are not pages keep their route order.
    ordered.sort_by_key(|output| match output.renderer {
        // The search page lists every page's search entries: after the pages it reads.
        Renderer::Page(PageKind::Search, _) => (1, None),
        Renderer::Page(kind, format) => (0, Some((kind, output.param.clone(), format))),
        Renderer::Api(_) | Renderer::File(_) => (2, None),
    });
    ordered
}

/// The size of each output when it was last rendered, by site path: how a session's rebuild sizes its
/// batches before it knows which outputs an edit changed (an edit that changes the site-wide lists
/// renders them in batches of their own instead of all at once).
#[derive(Debug, Default)]
pub struct OutputSizes(std::collections::HashMap<String, usize>);

/// Where the batch from `start` ends: when the outputs' expected sizes reach [`BATCH_BYTES`] (an
/// output of unknown size counts as `average` bytes), never between a page and its twin.
fn batch_end(ordered: &[Output], start: usize, sizes: &OutputSizes, average: usize) -> usize {
    let page_of = |output: &Output| match output.renderer {
        Renderer::Page(kind, _) => Some((kind, output.param.clone())),
        Renderer::Api(_) | Renderer::File(_) => None,
    };
    let mut end = start;
    let mut expected = 0;
    while end < ordered.len() && (end == start || expected < BATCH_BYTES) {
        expected += sizes.0.get(&ordered[end].path).copied().unwrap_or(average);
        end += 1;
    }
    while end < ordered.len()
        && page_of(&ordered[end]).is_some()
        && page_of(&ordered[end]) == page_of(&ordered[end - 1])
    {
        end += 1;
    }
    end
}

/// Renders the outputs of `batch` that no other thread took yet, one at a time (both threads of a
/// batch pull from `next`, so a large output on one leaves the rest to the other).
fn render_shared(db: &dyn salsa::Database, batch: &[Output], next: &AtomicUsize) {
    loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(output) = batch.get(i) else {
            return;
        };
        render_with_parts(db, output);
    }
}

/// Renders one output (as far as its digest) and what other outputs read of it while its bytes are in
/// memory: a page's links and ids (the link check), a twin's title and condensed text (`llms.txt`,
/// `llms-full.txt`, the search index), a page's search entries. These are kept; the bytes are evicted
/// after the batch.
fn render_with_parts(db: &dyn salsa::Database, output: &Output) {
    // The digest too: what a watch session's later rebuilds compare without the bytes.
    digest(db, output);
    if is_checked(&output.path) {
        crate::linkcheck::page_links(db, crate::render::OutputKey::new(db, output.clone()));
    }
    if output.renderer.is_page() {
        crate::render::llms::remember_page(db, output);
    }
}

/// A one-off build (`locref build`, `locref check`): renders every output of the route table once, hands
/// its bytes to `sink` as soon as they are made (the build stages them for writing), and lets the
/// database forget them in batches, so the build holds the parsed sources and a few outputs rather than
/// the whole site (see [`crate::memory`]). The pages come first, so the outputs made from them (the
/// llms files, the search index) find what they read of each page without rendering it again. The
/// pages are checked as they come (their HTML, ids and links are kept, not their bytes), and the links
/// resolved at the end. On any diagnostic the caller must discard what `sink` received: nothing may be
/// published. Returns how many outputs were handed over.
pub fn build_streaming(
    db: &mut Db,
    mut sink: impl FnMut(&str, &Rendered) -> std::io::Result<()>,
) -> Result<usize, BuildError> {
    crate::memory::for_one_off_build(db);
    let sizes = &mut OutputSizes::default();
    stream_outputs(db, &mut Helper::new(), sizes, |db, output, _| {
        let rendered = render(db, output);
        sink(&output.path, rendered).map(|()| rendered.bytes.len())
    })
}

/// A streaming build published by `publisher` (every build of `watch` and of the dev server, and
/// `locref build`): each output is offered with its digest as it is rendered, and its bytes are asked
/// for and staged only when its content is not the published one, so a rebuild renders in batches what
/// an edit changed and holds one batch of it at a time. Everything is put in place only when the whole
/// site checked out. On diagnostics the publish is dropped unfinished, which leaves the output folder as
/// it was. The database's capacities are the caller's (see [`crate::memory`]).
pub fn publish_streaming(
    db: &mut Db,
    helper: &mut Helper,
    sizes: &mut OutputSizes,
    publisher: &mut crate::emit::Publisher,
    time: &str,
) -> std::io::Result<Result<crate::emit::EmitReport, Vec<Diagnostic>>> {
    let mut publish = publisher.begin(time)?;
    let streamed = stream_outputs(db, helper, sizes, |db, output, digest| {
        let mut taken = 0;
        publish.offer_digest(&output.path, digest, || {
            let rendered = render(db, output).clone();
            taken = rendered.bytes.len();
            rendered
        })?;
        Ok(taken)
    });
    match streamed {
        Ok(_) => publish.finish().map(Ok),
        Err(BuildError::Invalid(diagnostics)) => Ok(Err(diagnostics)),
        Err(BuildError::Io(e)) => Err(e),
    }
}

/// Renders every output of the route table in batches (see [`build_streaming`]) and offers each to
/// `sink` with its digest; the sink asks [`render`] for the bytes it needs (rendered in this batch, so
/// at hand) and returns how many it took, which sizes the next batch. Nothing is offered after the first
/// render error; the errors, or the pages' link problems, are returned at the end.
fn stream_outputs(
    db: &mut Db,
    helper: &mut Helper,
    sizes: &mut OutputSizes,
    mut sink: impl FnMut(&Db, &Output, &crate::render::Digest) -> std::io::Result<usize>,
) -> Result<usize, BuildError> {
    let diagnostics = source_diagnostics(db);
    if !diagnostics.is_empty() {
        return Err(BuildError::Invalid(diagnostics));
    }
    let ordered = render_order(outputs(db));
    let mut render_errors: Vec<Diagnostic> = Vec::new();
    // Bytes and outputs made so far, for the size of an output not made before.
    let (mut start, mut made, mut made_bytes) = (0, 0, 0);
    while start < ordered.len() {
        let average = match made {
            0 => BATCH_BYTES / FIRST_BATCH,
            _ => made_bytes / made,
        };
        let end = batch_end(&ordered, start, sizes, average);
        let batch: Arc<[Output]> = ordered[start..end].into();
        let next = Arc::new(AtomicUsize::new(0));
        // The helper thread has its own handle on the database, dropped when its share is done, before
        // the eviction below.
        let (worker_db, theirs, their_next) = (db.clone(), batch.clone(), next.clone());
        let shared: &Db = db;
        helper.run_beside(
            move || render_shared(&worker_db, &theirs, &their_next),
            || render_shared(shared, &batch, &next),
        );
        for output in batch.iter() {
            let digest = digest(shared, output);
            if let Some(error) = &digest.error {
                render_errors.push(error.clone());
            } else if render_errors.is_empty() {
                let taken = sink(shared, output, digest).map_err(BuildError::Io)?;
                // An output whose bytes were not needed (unchanged) keeps its last size.
                if taken > 0 {
                    sizes.0.insert(output.path.clone(), taken);
                    (made, made_bytes) = (made + 1, made_bytes + taken);
                }
            }
        }
        crate::memory::evict(db);
        start = end;
    }
    render_errors.extend(crate::render::page_figures::figure_errors(db));
    let mut diagnostics = if render_errors.is_empty() {
        crate::linkcheck::problems(db)
    } else {
        render_errors
    };
    if diagnostics.is_empty() {
        return Ok(ordered.len());
    }
    diagnostics.sort();
    diagnostics.dedup();
    Err(BuildError::Invalid(crate::diagnostics::cap_per_file(
        diagnostics,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::{ApiKind, Format};

    fn output(path: &str, renderer: Renderer, param: Option<&str>) -> Output {
        Output {
            path: path.to_string(),
            renderer,
            param: param.map(str::to_string),
            route: 0,
        }
    }

    /// A site of four country pages with their twins, then three API files.
    fn site() -> Vec<Output> {
        let mut all = Vec::new();
        for code in ["ad", "de", "fr", "it"] {
            for (file, format) in [("index.html", Format::Html), ("index.md", Format::Markdown)] {
                all.push(output(
                    &format!("/{code}/{file}"),
                    Renderer::Page(PageKind::Country, format),
                    Some(code),
                ));
            }
        }
        for name in ["index", "facts", "changes"] {
            all.push(output(
                &format!("/api/v1/{name}.json"),
                Renderer::Api(ApiKind::Index),
                None,
            ));
        }
        all
    }

    fn batches<'a>(all: &'a [Output], sizes: &OutputSizes, average: usize) -> Vec<Vec<&'a str>> {
        let mut batches = Vec::new();
        let mut start = 0;
        while start < all.len() {
            let end = batch_end(all, start, sizes, average);
            batches.push(all[start..end].iter().map(|o| o.path.as_str()).collect());
            start = end;
        }
        batches
    }

    #[test]
    fn a_batch_holds_about_batch_bytes_by_each_outputs_last_size_and_keeps_a_page_with_its_twin() {
        let all = site();
        // Nothing known: outputs of the average size, here a third of a batch each; the batch that
        // reaches the limit on a page still takes its twin.
        let none = OutputSizes::default();
        assert_eq!(
            batches(&all, &none, BATCH_BYTES / 3),
            [
                vec![
                    "/ad/index.html",
                    "/ad/index.md",
                    "/de/index.html",
                    "/de/index.md"
                ],
                vec![
                    "/fr/index.html",
                    "/fr/index.md",
                    "/it/index.html",
                    "/it/index.md"
                ],
                vec![
                    "/api/v1/index.json",
                    "/api/v1/facts.json",
                    "/api/v1/changes.json"
                ],
            ]
        );
        // A session's rebuild knows each output's last size: two site-wide lists of most of a batch
        // each are made in batches of their own, whatever the small outputs before them.
        let mut sizes = OutputSizes::default();
        for output in &all {
            sizes.0.insert(output.path.clone(), 1000);
        }
        sizes.0.insert("/api/v1/facts.json".into(), BATCH_BYTES - 1);
        sizes.0.insert("/api/v1/changes.json".into(), BATCH_BYTES);
        assert_eq!(
            batches(&all, &sizes, BATCH_BYTES / 3),
            [
                vec![
                    "/ad/index.html",
                    "/ad/index.md",
                    "/de/index.html",
                    "/de/index.md",
                    "/fr/index.html",
                    "/fr/index.md",
                    "/it/index.html",
                    "/it/index.md",
                    "/api/v1/index.json",
                    "/api/v1/facts.json",
                ],
                vec!["/api/v1/changes.json"],
            ]
        );
        // An output larger than a batch is a batch of its own.
        sizes.0.insert("/ad/index.html".into(), 2 * BATCH_BYTES);
        assert_eq!(
            batches(&all, &sizes, 0)[0],
            ["/ad/index.html", "/ad/index.md"]
        );
    }
}
