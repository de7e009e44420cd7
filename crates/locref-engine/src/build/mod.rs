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
//! - the streaming plan (`streaming`, compiled with the `streaming` feature, the default): two threads,
//!   batches of a few megabytes let go once handed over, the long lists and `llms-full.txt` streamed
//!   piece by piece, the pages made of parts handed over part by part. Its mode is the command's
//!   [`Profile`] (one build then dropped, a watch session's rebuilds, the dev server's), which also
//!   decides what memory keeps (`crate::memory`).
//!
//! A command gets its plan from its [`Profile`] ([`Profile::plan`]); without the `streaming` feature
//! that is the serial plan for every profile, and locref builds the same bytes, slower
//! (`cargo test --no-default-features`, run by CI).
//!
//! With the feature, once the sources and rules are valid, the pages and the other outputs depend on them but not on each
//! other, so the checks of the streaming plan share two threads,
//! each with its own handle on the same database: this one checks the pages, the helper thread
//! renders the API and the data files, then takes a share of the page work. A query both need runs
//! once; the other thread waits for it.

use crate::db::Db;
use crate::diagnostics::Diagnostic;
use crate::output::{Digest, Output, Rendered};
use crate::site::Site;

mod profile;
mod serial;
#[cfg(feature = "streaming")]
mod streaming;

pub use profile::Profile;

/// Every problem in the sources and rules, then (when there is none) in the rendered pages, sorted by
/// file and position.
pub fn diagnostics(site: &Site, db: &Db) -> Vec<Diagnostic> {
    let mut all = (site.source_diagnostics)(db);
    if all.is_empty() {
        all = page_diagnostics(site, db);
    }
    all
}

/// The problems of the rendered pages, from valid sources: template errors at their file and line, then
/// (when the pages render) HTML errors and internal links or anchors that do not resolve.
fn page_diagnostics(site: &Site, db: &Db) -> Vec<Diagnostic> {
    let mut all = (site.render_errors)(db);
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
pub fn render_site<'db>(
    site: &Site,
    db: &'db Db,
) -> Result<Vec<(String, &'db Rendered)>, Vec<Diagnostic>> {
    let diagnostics = diagnostics(site, db);
    if !diagnostics.is_empty() {
        return Err(diagnostics);
    }
    Ok((site.outputs)(db)
        .iter()
        .map(|output| (output.path.clone(), (site.render)(db, output)))
        .collect())
}

#[cfg(feature = "streaming")]
pub use streaming::render_site_with;

/// Why a build stopped.
#[derive(Debug)]
pub enum BuildError {
    /// The sources, rules or rendered pages have errors.
    Invalid(Vec<Diagnostic>),
    /// Handing an output over (writing it) failed.
    Io(std::io::Error),
}

/// Where a build hands its outputs, in render order: all the serial plan needs. The streaming plan
/// asks more of its sink (`streaming::StreamingSink`: outputs handed over piece by piece).
pub(crate) trait Sink {
    /// One output just rendered, with its digest: the sink asks [`render`] for its bytes only if it
    /// needs them (in a streaming build they are at hand until the batch is evicted) and returns how
    /// many bytes it took (0 when it did not ask).
    fn output(
        &mut self,
        site: &Site,
        db: &Db,
        output: &Output,
        digest: &Digest,
    ) -> std::io::Result<usize>;
}

#[cfg(not(feature = "streaming"))]
use Sink as PlanSink;
/// The sink a plan needs: with the speed machinery, one that also takes outputs piece by piece.
#[cfg(feature = "streaming")]
use streaming::StreamingSink as PlanSink;

/// The sink that keeps nothing (`locref check`, the check of `locref release`): it only
/// tells `handed_over` the path of each output it was given.
struct Discard<F: FnMut(&str)>(F);

impl<F: FnMut(&str)> Sink for Discard<F> {
    fn output(&mut self, _: &Site, _: &Db, output: &Output, _: &Digest) -> std::io::Result<usize> {
        (self.0)(&output.path);
        Ok(0)
    }
}

/// Publishes each output as the build hands it over: its bytes are asked for and staged only when its
/// content is not the published one.
impl Sink for crate::publish::Publish<'_> {
    fn output(
        &mut self,
        site: &Site,
        db: &Db,
        output: &Output,
        digest: &Digest,
    ) -> std::io::Result<usize> {
        let mut taken = 0;
        self.offer_digest(&output.path, digest, || {
            let rendered = (site.render)(db, output).clone();
            taken = rendered.len();
            rendered
        })?;
        Ok(taken)
    }
}

/// The end of every plan: the pages' figure errors, then (when nothing failed to render) the link check
/// of every page, which reads what rendering the pages kept; `made` outputs when all is well.
fn checked(
    site: &Site,
    db: &Db,
    mut render_errors: Vec<Diagnostic>,
    made: usize,
) -> Result<usize, BuildError> {
    render_errors.extend((site.figure_errors)(db));
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
/// A command gets its plan from its [`Profile`]; [`Plan::serial`] is the reference the tests hold the
/// others to.
pub struct Plan {
    site: &'static Site,
    strategy: Strategy,
}

enum Strategy {
    Serial,
    #[cfg(feature = "streaming")]
    Streaming {
        profile: Profile,
        helper: crate::second_thread::Helper,
        sizes: streaming::OutputSizes,
    },
}

impl Plan {
    /// The reference plan: one thread, route order, everything kept (see [`serial`]).
    pub fn serial(site: &'static Site) -> Plan {
        Plan {
            site,
            strategy: Strategy::Serial,
        }
    }

    /// The site this plan builds.
    pub fn site(&self) -> &'static Site {
        self.site
    }

    /// Whether this is the serial reference plan.
    pub fn is_serial(&self) -> bool {
        matches!(self.strategy, Strategy::Serial)
    }

    /// The plan of a profile (see [`Profile::plan`]): the streaming plan in its mode, or the serial
    /// plan when locref is built without the speed machinery.
    fn of(profile: Profile, site: &'static Site) -> Plan {
        #[cfg(feature = "streaming")]
        return Plan {
            site,
            strategy: Strategy::Streaming {
                profile,
                helper: crate::second_thread::Helper::new(),
                sizes: streaming::OutputSizes::default(),
            },
        };
        #[cfg(not(feature = "streaming"))]
        {
            let _ = profile;
            Plan::serial(site)
        }
    }

    /// Checks the sources, renders every output and hands each to `sink`; on diagnostics the caller
    /// must discard what the sink received. Returns how many outputs were made. What the database
    /// keeps afterwards is the profile's ([`crate::memory`]).
    fn run(&mut self, db: &mut Db, sink: &mut impl PlanSink) -> Result<usize, BuildError> {
        let site = self.site;
        match &mut self.strategy {
            // Without the table of made contexts: each render makes its page's context itself, so
            // the serial plan's bytes are those of pure queries, and the byte-for-byte comparison
            // with the streaming plans holds that the table changes no byte.
            Strategy::Serial => serial::run(site, db, sink),
            #[cfg(feature = "streaming")]
            Strategy::Streaming {
                profile,
                helper,
                sizes,
            } => {
                (site.share_made_contexts)(db);
                // What the database keeps of the site's bulk queries (`crate::memory`: salsa keeps
                // every value unless told, which is what the dev server serves from).
                match profile {
                    Profile::OneOff => (site.keep_for_single_build)(db),
                    Profile::Session => (site.keep_for_session)(db),
                    Profile::InMemory => {}
                }
                let result = streaming::run(site, db, *profile, helper, sizes, sink);
                crate::memory::evict(db);
                result
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
        publisher: &mut crate::publish::Publisher,
        time: &str,
    ) -> std::io::Result<Result<crate::publish::EmitReport, Vec<Diagnostic>>> {
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
