//! What the engine asks of the site it builds, handed to it in one value: a [`Site`], which the site
//! layers build (`locref::locref_site::SITE`) and `main` gives to every command. The build, a session,
//! the dev server and the memory policy read the site only through it, so adding a source table, a
//! check or a page kind changes the site's value, not the engine.
//!
//! Each field is a plain function over the database: the site's own queries stay memoized where they
//! are, and the engine calls them without knowing their names.

use crate::db::Db;
use crate::diagnostics::Diagnostic;
#[cfg(feature = "streaming")]
use crate::output::PieceHasher;
use crate::output::{Digest, Output, OutputKey, PartKey, Piece, Rendered, Skeleton};

/// Everything the engine must know about one site (see the module documentation).
pub struct Site {
    /// Every problem of the sources and rules, sorted by file and position and capped per file: the
    /// site's checks, all of them (a build stops here before it renders anything).
    pub source_diagnostics: fn(&Db) -> Vec<Diagnostic>,
    /// What the build's second thread reads while this one runs [`Site::source_diagnostics`]: the
    /// site's largest sources, from the end this thread reaches last (a query both reach runs once).
    pub warm_up: fn(&Db),
    /// Every output of the site, in the route table's order: the one list of files a build hands over.
    pub outputs: fn(&dyn salsa::Database) -> &[Output],
    /// An output's content hash, length and render problem (memoized by the site).
    pub digest: for<'db> fn(&'db dyn salsa::Database, &Output) -> &'db Digest,
    /// An output's bytes (memoized by the site).
    pub render: for<'db> fn(&'db dyn salsa::Database, &Output) -> &'db Rendered,
    /// The absolute URL the site is published at, without a trailing `/`: what the link check resolves
    /// absolute links under.
    pub base_url: fn(&dyn salsa::Database) -> &str,
    /// Whether an output is a page made of parts (cheap: what [`Site::parts_of`] answers `Some` for).
    pub is_made_of_parts: fn(&Output) -> bool,
    /// The parts of a page made of parts, in page order (`None` for any other output): the link check
    /// reads such a page part by part, and a one-off build hands it over part by part.
    pub parts_of: for<'db> fn(&'db dyn salsa::Database, &Output) -> Option<Vec<PartKey<'db>>>,
    /// The skeleton of a page made of parts (memoized by the site).
    pub skeleton:
        for<'db> fn(&'db dyn salsa::Database, OutputKey<'db>) -> &'db Result<Skeleton, Diagnostic>,
    /// One part of a page made of parts (memoized by the site).
    pub part: for<'db> fn(&'db dyn salsa::Database, PartKey<'db>) -> &'db Result<Piece, Diagnostic>,
    /// The markup that encloses the parts of an HTML page made of parts (`<tbody>`, `</tbody>`): the
    /// link check parses a part within it, so the parser is in the state it is in in the page.
    pub part_enclosing: fn(&Output) -> (&'static str, &'static str),
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
    /// The outputs of a build in the order the streaming plan renders them (`once`: a one-off build),
    /// which it hands over in batches: the outputs made from others after what they read.
    #[cfg(feature = "streaming")]
    pub render_order: fn(&[Output], once: bool) -> Vec<Output>,
    /// Whether two outputs, one after the other in render order, belong in the same batch (a page and
    /// its twin share what they are made from).
    #[cfg(feature = "streaming")]
    pub same_unit: fn(&Output, &Output) -> bool,
    /// Whether an output is made from the pages' Markdown twins (the pages' thread makes it).
    #[cfg(feature = "streaming")]
    pub made_from_twins: fn(&Output) -> bool,
    /// How a one-off build hands an output over piece by piece instead of rendering it whole (a long
    /// list made of one part per country, which nothing else reads), or `None`.
    #[cfg(feature = "streaming")]
    pub list_stream: fn(&Output) -> Option<ListStream>,
    /// The output a one-off build grows as the outputs it is made from are rendered (see [`Growth`]),
    /// or `None`.
    #[cfg(feature = "streaming")]
    pub growth: fn(&dyn salsa::Database) -> Option<Box<dyn Growth>>,
    /// Whether one part of a page made of parts can go to the [`Growth`] as it comes (what a one-off
    /// build asks of each part it hands over; `true` when the growth does not read the page).
    #[cfg(feature = "streaming")]
    pub part_is_plain: for<'db> fn(&'db dyn salsa::Database, &Output, PartKey<'db>) -> bool,
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

/// Makes an output piece by piece, calling the last argument with each piece in order: the same pieces
/// as rendering it whole, so the same bytes and content hash, but only one part held at a time.
pub type ListStream = fn(&dyn salsa::Database, &Output, &mut dyn FnMut(Piece));

/// An output a one-off build grows piece by piece as the outputs it is made from are rendered, in its
/// own order (the site's `llms-full.txt`, made of every twin's text), so that its pieces are never all
/// held at once. A page made of parts can go to it part by part as they are made, on trust that each
/// part is plain ([`Site::part_is_plain`]); the first that is not takes the page back, and the page
/// then goes to it whole once it is handed over.
#[cfg(feature = "streaming")]
pub trait Growth {
    /// The output grown.
    fn output(&self) -> &Output;
    /// The pieces that follow once `rendered` (outputs whose bytes are at hand) are made.
    fn after(&mut self, db: &dyn salsa::Database, rendered: &[Output]) -> Vec<Piece>;
    /// Starts taking the page made of parts `page` (its skeleton `head` and `tail`) as its parts come:
    /// the piece that follows what was handed on, or `None` when it cannot go part by part.
    fn begin_parted(
        &mut self,
        db: &dyn salsa::Database,
        page: &Output,
        head: &Piece,
        tail: &Piece,
    ) -> Option<(GrowthShare, Piece)>;
    /// The next piece of the page taken part by part: what can be handed on now.
    fn parted_piece(&mut self, share: &mut GrowthShare, piece: Piece) -> Option<Piece>;
    /// The end of the page taken part by part: the pieces that follow it.
    fn end_parted(&mut self, share: GrowthShare) -> Vec<Piece>;
    /// Takes the page taken part by part back: the output is as before it.
    fn take_back_parted(&mut self, share: GrowthShare);
    /// The content hash, the first time it is asked after every piece was handed on.
    fn finish(&mut self) -> Option<blake3::Hash>;
}

/// A page going to a [`Growth`] part by part: the grown output's hash before it (to go back to) and
/// the piece held back until the next comes.
#[cfg(feature = "streaming")]
pub struct GrowthShare {
    pub before: PieceHasher,
    pub held: Option<Piece>,
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

/// Every output of the site by its path: what a link must resolve to.
#[salsa::tracked(returns(ref))]
pub fn output_paths(db: &dyn salsa::Database) -> std::collections::BTreeMap<String, Output> {
    (site_of(db).outputs)(db)
        .iter()
        .map(|o| (o.path.clone(), o.clone()))
        .collect()
}

/// The path part of an absolute URL, without its trailing `/` (`""` for none).
pub fn url_path(url: &str) -> String {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    let path = after_scheme.find('/').map_or("", |i| &after_scheme[i..]);
    let path = path.split(['?', '#']).next().unwrap_or_default();
    path.trim_end_matches('/').to_string()
}

/// The site a database builds, as its input: how the engine's own queries (the link check) reach the
/// site's functions. Set once, when the project is loaded ([`crate::workspace::Project::load`]).
#[salsa::input(singleton)]
pub(crate) struct SiteInput {
    pub site: SiteRef,
}

/// A [`Site`] as a salsa input's value: the same site is the same value.
#[derive(Clone, Copy)]
pub(crate) struct SiteRef(pub &'static Site);

impl PartialEq for SiteRef {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

/// The site the database `db` builds.
pub(crate) fn site_of(db: &dyn salsa::Database) -> &'static Site {
    SiteInput::get(db).site(db).0
}
