//! What the engine asks of the site it builds, handed to it in one value: a [`Site`], which the site
//! layers build ([`crate::locref_site::SITE`]) and `main` gives to every command. The build, a session,
//! the dev server and the memory policy read the site only through it, so adding a source table, a
//! check or a page kind changes the site's value, not the engine.
//!
//! Each field is a plain function over the database: the site's own queries stay memoized where they
//! are, and the engine calls them without knowing their names.

use crate::db::Db;
use crate::diagnostics::Diagnostic;
use crate::output::{Digest, Output, Rendered};

/// Everything the engine must know about one site (see the module documentation).
pub struct Site {
    /// Every problem of the sources and rules, sorted by file and position and capped per file: the
    /// site's checks, all of them (a build stops here before it renders anything).
    pub source_diagnostics: fn(&Db) -> Vec<Diagnostic>,
    /// What the build's second thread reads while this one runs [`Site::source_diagnostics`]: the
    /// site's largest sources, from the end this thread reaches last (a query both reach runs once).
    pub warm_up: fn(&Db),
    /// Every output of the site, in the route table's order: the one list of files a build hands over.
    pub outputs: fn(&Db) -> &[Output],
    /// An output's content hash, length and render problem (memoized by the site).
    pub digest: for<'db> fn(&'db Db, &Output) -> &'db Digest,
    /// An output's bytes (memoized by the site).
    pub render: for<'db> fn(&'db Db, &Output) -> &'db Rendered,
    /// Lets a page and its twin share the context made for the first (the site's table of made
    /// contexts, emptied after each batch): the streaming plan turns it on; the serial plan, the
    /// reference, runs without it.
    #[cfg(feature = "streaming")]
    pub share_made_contexts: fn(&Db),
    /// Forgets the contexts the table of made contexts holds: after each batch of the streaming plan.
    #[cfg(feature = "streaming")]
    pub forget_made_contexts: fn(&Db),
    /// What other outputs read of an output, made while its bytes are in memory, so that they are not
    /// rendered again once the batch let them go (a twin's title and condensed text, a CSV file's
    /// SHA-256): the streaming plan calls it after each output it renders.
    #[cfg(feature = "streaming")]
    pub remember_what_others_read: fn(&Db, &Output),
    /// The problems found while rendering (a broken template, a missing asset), which come before the
    /// check of the pages.
    pub render_errors: fn(&Db) -> Vec<Diagnostic>,
    /// The problems of the pages' figures, read once a build rendered the pages.
    pub figure_errors: fn(&Db) -> Vec<Diagnostic>,
    /// What the database keeps of the site's bulk (rendered outputs, the parts of lists) in a one-off
    /// build, which renders nothing twice: the capacities of the site's queries.
    #[cfg(feature = "streaming")]
    pub keep_for_single_build: fn(&mut Db),
    /// The same for a `watch` session, which keeps what an edit splices again.
    #[cfg(feature = "streaming")]
    pub keep_for_session: fn(&mut Db),
    /// The queries that ran since the last call, named for a reader (`output_file(page_country)`):
    /// what `watch` reports and the incremental tests snapshot.
    pub take_executed: fn(&Db) -> Vec<String>,
    /// The headers the dev server sends with every page (the site's Content-Security-Policy).
    pub page_headers: fn(&Db) -> Vec<(String, String)>,
    /// The routes whose last segment is an id, so that the dev server can say which id is unknown.
    pub detail_routes: fn(&Db) -> Vec<DetailRoute>,
}

/// A route of the site whose path holds an id (`/api/v1/countries/{code}.json`): what the dev server
/// answers an unknown id of with a 404 that names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DetailRoute {
    pub prefix: String,
    pub suffix: String,
    /// What the id names, for the error message (`country code`).
    pub what: String,
    /// Whether openapi.json describes the route: its unknown ids are answered with the JSON error body
    /// the document declares (`/{code}/changes.xml` too); a page's, with the site's 404 page.
    pub described: bool,
}
