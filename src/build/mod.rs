//! One build: gather every diagnostic (sources, rules, templates, then the rendered pages' HTML and
//! links), and when there is none, hand every output of the route table to a sink (the publisher that
//! writes the output folder, or nothing for `locref check`).
//!
//! What is built is the same whatever the plan: the outputs of the route table, each rendered (or its
//! digest), handed to a [`Sink`]. How it is built is the [`Plan`]'s alone, behind this one seam:
//!
//! - [`Plan::serial`] ([`serial`]): one thread, route order, each output rendered whole and handed over,
//!   nothing let go. The reference: short enough to read at once, and what the fast plan must match
//!   byte for byte (`tests/testsuite/build.rs`).
//! - [`Plan::single_build`] and [`Plan::session`] ([`streaming`]): two threads, batches of a few
//!   megabytes let go once handed over, the long lists and `llms-full.txt` streamed piece by piece, the
//!   pages made of parts handed over part by part. Its mode (one build then dropped, or a watch
//!   session's rebuilds) is a value of the plan, with what memory keeps for it ([`crate::memory`]).
//!
//! Deleting the streaming plan leaves a working, slower locref (the serial plan for every build).
//!
//! Once the sources and rules are valid, the pages and the other outputs depend on them but not on each
//! other, so the checks below ([`check_site_with`], [`source_diagnostics_beside`]) share two threads,
//! each with its own handle on the same database: this one checks the pages, the [`Helper`] thread
//! renders the API and the data files, then takes a share of the page work. A query both need runs
//! once; the other thread waits for it.

use crate::db::Db;
use crate::diagnostics::Diagnostic;
use crate::helper::Helper;
use crate::linkcheck::is_checked;
use crate::model::{checks, evidence};
use crate::parse::{json_sources, rules, tables};
use crate::render::FileKind;
use crate::render::{Piece, Rendered, render};
use crate::routes::{Output, Renderer, check_routes, outputs};

mod serial;
mod streaming;

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

/// Every output of the route table with its rendered bytes, or every diagnostic when there is any: the
/// whole site in memory, checked on this thread (what the tests compare; [`render_site_with`] checks
/// on two).
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

pub use streaming::render_site_with;

/// Why a build stopped.
#[derive(Debug)]
pub enum BuildError {
    /// The sources, rules or rendered pages have errors.
    Invalid(Vec<Diagnostic>),
    /// Handing an output over (writing it) failed.
    Io(std::io::Error),
}

/// Where a streaming build hands its outputs, in render order.
pub(crate) trait Sink {
    /// One output of the batch just rendered, with its digest: the sink asks [`render`] for its bytes
    /// only if it needs them (they are at hand until the batch is evicted) and returns how many bytes it
    /// took (0 when it did not ask).
    fn output(
        &mut self,
        db: &Db,
        output: &Output,
        digest: &crate::render::Digest,
    ) -> std::io::Result<usize>;

    /// The next pieces of an output a one-off build hands over piece by piece, in order
    /// (`llms-full.txt` as the twins are rendered, a site-wide list as its parts are made): the sink
    /// stages them as they come. Two such outputs may be open at once.
    fn pieces(&mut self, output: &Output, pieces: &[Piece]) -> std::io::Result<()>;

    /// The end of such an output: the content hash of all its pieces.
    fn pieces_done(&mut self, output: &Output, hash: blake3::Hash) -> std::io::Result<()>;

    /// How much of such an output the sink has taken so far (its measure: only given back to
    /// [`Sink::take_back`]).
    fn taken(&self, output: &Output) -> u64;

    /// Forgets what the sink took of such an output after `taken` ([`Sink::taken`]).
    fn take_back(&mut self, output: &Output, taken: u64) -> std::io::Result<()>;
}

/// The sink that keeps nothing (`locref check`, the check of `locref release`): it only
/// tells `handed_over` the path of each output it was given.
struct Discard<F: FnMut(&str)>(F);

impl<F: FnMut(&str)> Sink for Discard<F> {
    fn output(
        &mut self,
        _: &Db,
        output: &Output,
        _: &crate::render::Digest,
    ) -> std::io::Result<usize> {
        (self.0)(&output.path);
        Ok(0)
    }

    fn pieces(&mut self, _: &Output, _: &[Piece]) -> std::io::Result<()> {
        Ok(())
    }

    fn pieces_done(&mut self, output: &Output, _: blake3::Hash) -> std::io::Result<()> {
        (self.0)(&output.path);
        Ok(())
    }

    fn taken(&self, _: &Output) -> u64 {
        0
    }

    fn take_back(&mut self, _: &Output, _: u64) -> std::io::Result<()> {
        Ok(())
    }
}

/// Publishes each output as the build hands it over (see [`publish_streaming`]).
impl Sink for crate::emit::Publish<'_> {
    fn output(
        &mut self,
        db: &Db,
        output: &Output,
        digest: &crate::render::Digest,
    ) -> std::io::Result<usize> {
        let mut taken = 0;
        self.offer_digest(&output.path, digest, || {
            let rendered = render(db, output).clone();
            taken = rendered.len();
            rendered
        })?;
        Ok(taken)
    }

    fn pieces(&mut self, output: &Output, pieces: &[Piece]) -> std::io::Result<()> {
        self.grow(&output.path, pieces)
    }

    fn pieces_done(&mut self, output: &Output, hash: blake3::Hash) -> std::io::Result<()> {
        self.grown(&output.path, hash)
    }

    fn taken(&self, output: &Output) -> u64 {
        self.grown_len(&output.path)
    }

    fn take_back(&mut self, output: &Output, taken: u64) -> std::io::Result<()> {
        crate::emit::Publish::take_back(self, &output.path, taken)
    }
}

/// The end of every plan: the pages' figure errors, then (when nothing failed to render) the link check
/// of every page, which reads what rendering the pages kept; `made` outputs when all is well.
fn checked(db: &Db, mut render_errors: Vec<Diagnostic>, made: usize) -> Result<usize, BuildError> {
    render_errors.extend(crate::render::page_figures::figure_errors(db));
    let mut diagnostics = if render_errors.is_empty() {
        crate::linkcheck::problems(db)
    } else {
        render_errors
    };
    if diagnostics.is_empty() {
        return Ok(made);
    }
    diagnostics.sort();
    diagnostics.dedup();
    Err(BuildError::Invalid(crate::diagnostics::cap_per_file(
        diagnostics,
    )))
}

/// How a build renders the site and hands it over (see the module documentation): the strategy and
/// the state it keeps from one build to the next (a session's second thread and its outputs' sizes).
pub struct Plan(Strategy);

enum Strategy {
    Serial,
    Streaming {
        mode: Mode,
        helper: Helper,
        sizes: streaming::OutputSizes,
    },
}

/// What the database a streaming plan builds with serves: one build and then dropped, or every
/// rebuild of a watch session (or the dev server). It decides what memory keeps
/// ([`crate::memory`]) and how the long outputs are handed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// One build, then dropped: keeps nothing for a later rebuild, streams the long outputs.
    Once,
    /// A session's rebuilds: keeps each output's digest and the parts an edit splices; with
    /// `keeps_site`, every output's bytes too (the dev server serves the site from memory).
    Session { keeps_site: bool },
}

impl Plan {
    /// The reference plan: one thread, route order, everything kept (see [`serial`]).
    pub fn serial() -> Plan {
        Plan(Strategy::Serial)
    }

    /// The plan of `locref build`, `locref check` and `release`'s check: one build on two threads, with
    /// a database dropped after it (see [`streaming`]).
    pub fn single_build() -> Plan {
        Plan::streaming(Mode::Once)
    }

    /// The plan of a watch session's builds: two threads kept from one rebuild to the next, batches
    /// sized by each output's last size, each output's bytes let go once written (see [`streaming`]).
    pub fn session() -> Plan {
        Plan::streaming(Mode::Session { keeps_site: false })
    }

    /// The plan of the dev server's builds: a session's, keeping every output's bytes to serve them.
    pub fn session_in_memory() -> Plan {
        Plan::streaming(Mode::Session { keeps_site: true })
    }

    fn streaming(mode: Mode) -> Plan {
        Plan(Strategy::Streaming {
            mode,
            helper: Helper::new(),
            sizes: streaming::OutputSizes::default(),
        })
    }

    /// Checks the sources, renders every output and hands each to `sink`; on diagnostics the caller
    /// must discard what the sink received. Returns how many outputs were made.
    fn run(&mut self, db: &mut Db, sink: &mut impl Sink) -> Result<usize, BuildError> {
        match &mut self.0 {
            // Without the table of made contexts: each render makes its page's context itself, so
            // the serial plan's bytes are those of pure queries, and the byte-for-byte comparison
            // with the streaming plans holds that the table changes no byte.
            Strategy::Serial => serial::run(db, sink),
            Strategy::Streaming {
                mode,
                helper,
                sizes,
            } => {
                crate::render::pages::context::share_made_contexts(db);
                match mode {
                    Mode::Once => crate::memory::for_single_build(db),
                    Mode::Session { keeps_site: false } => crate::memory::for_session(db),
                    // Salsa keeps every value by default.
                    Mode::Session { keeps_site: true } => {}
                }
                streaming::run(db, *mode, helper, sizes, sink)
            }
        }
    }

    /// A build published by `publisher` (`locref build`, and every build of `watch` and of the dev
    /// server): each output is offered with its digest as it is rendered, and its bytes are asked for
    /// and staged only when its content is not the published one. Everything is put in place only when
    /// the whole site checked out; on diagnostics the publish is dropped unfinished, which leaves the
    /// output folder as it was.
    pub fn publish(
        &mut self,
        db: &mut Db,
        publisher: &mut crate::emit::Publisher,
        time: &str,
    ) -> std::io::Result<Result<crate::emit::EmitReport, Vec<Diagnostic>>> {
        let mut publish = publisher.begin(time)?;
        match self.run(db, &mut publish) {
            Ok(_) => publish.finish().map(Ok),
            Err(BuildError::Invalid(diagnostics)) => Ok(Err(diagnostics)),
            Err(BuildError::Io(e)) => Err(e),
        }
    }

    /// A build that writes nothing (`locref check`, the check of `locref release`): renders and checks
    /// every output, tells `handed_over` the path of each as it is done. Returns how many outputs were
    /// made.
    pub fn check(
        &mut self,
        db: &mut Db,
        handed_over: impl FnMut(&str),
    ) -> Result<usize, BuildError> {
        self.run(db, &mut Discard(handed_over))
    }
}
