//! What can be rendered: every kind of output file, named as `rules/routes.toml` names it.
//!
//! A renderer is an API envelope, a page in one of its formats, or another file. Each kind is declared
//! once, as a variant of its enum, and described once, by the `spec` of its enum (in the module that
//! renders it: [`ApiKind::spec`] in `api.rs`, [`PageKind::spec`] in `pages.rs`, [`FileKind::spec`] in
//! `mod.rs`). Those are exhaustive matches: a new variant does not compile until it says what placeholder
//! its routes take and how it is rendered. The renderer names of the route table are derived from the
//! variant names (`ApiKind::LocalErps` is `api_local_erps`, `Page(Country, Markdown)` is
//! `page_country_md`), never kept in a second list.

use strum::{EnumIter, IntoEnumIterator, IntoStaticStr};

use super::Rendered;
use crate::routes::{Output, Param};

/// An API envelope (`{meta, data}`) under `/api/v1/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, EnumIter, IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum ApiKind {
    Index,
    Countries,
    Country,
    Erps,
    Erp,
    Facts,
    LocalErps,
    PartnerFlags,
    Partners,
    News,
    Sponsors,
    Filter,
    /// How each country's toggles got their values.
    Toggles,
    /// Every dated phase of every obligation.
    Calendar,
    // Releases and changes (src/render/history.rs).
    Changes,
    Releases,
    Release,
}

/// A page of the site: an HTML page and (for every kind but the 404 page) its Markdown twin, rendered
/// from the templates of `rules/templates/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, EnumIter, IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum PageKind {
    Home,
    EInvoicing,
    Country,
    Erps,
    Erp,
    VatReporting,
    Saft,
    Partners,
    LocalErps,
    News,
    Sponsors,
    Licence,
    Filters,
    Filter,
    Api,
    Calendar,
    /// `/search/`: the results of the search box, and an A–Z index of the site for readers without
    /// scripts.
    Search,
    NotFound,
    // Releases and changes (src/render/history.rs).
    Changes,
    Release,
}

/// The format of a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Format {
    Html,
    Markdown,
}

/// Every other file: documents describing the site, the flat data files, deploy and language-model
/// files, and the static assets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, EnumIter, IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum FileKind {
    Openapi,
    DataJson,
    DataCsv,
    Datapackage,
    DataLicence,
    Headers,
    /// A static file of `rules/assets/` (`/assets/site.css` is `rules/assets/site.css`).
    Asset,
    /// `/llms.txt`: the index of the site for language models.
    Llms,
    /// `/llms-full.txt`: every Markdown twin in one file.
    LlmsFull,
    /// `/calendar.ics`: the dated phases as an iCalendar file to subscribe to.
    Calendar,
    /// `/search-index.json`: what the search box of every page searches.
    SearchIndex,
    /// `/.nojekyll`: an empty file telling GitHub Pages to publish the files as they are (without it,
    /// Jekyll would drop `_headers` and turn each `index.md` twin into HTML over its page).
    Nojekyll,
    // Releases and changes, and the crawler files (src/render/history.rs).
    /// `/changes.xml`: an Atom feed of the changes.
    ChangesFeed,
    /// `/sitemap.xml`: every page, with the time its content last changed.
    Sitemap,
    /// `/robots.txt`: names the sitemap.
    Robots,
}

/// The renderer a route names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Renderer {
    Api(ApiKind),
    Page(PageKind, Format),
    File(FileKind),
}

/// How an output of a kind is rendered, from the output's placeholder value (and, for assets, its path).
/// Not memoized itself: [`super::output_file`] memoizes every output.
pub type RenderFn = fn(&dyn salsa::Database, &Output) -> Rendered;

/// How many records an output lists, for `index.json`.
pub type CountFn = fn(&dyn salsa::Database, &Output) -> Option<u64>;

impl Renderer {
    /// Every renderer, API envelopes first, then pages (each HTML page before its twin), then files.
    pub fn all() -> impl Iterator<Item = Renderer> {
        let api = ApiKind::iter().map(Renderer::Api);
        let pages = PageKind::iter().flat_map(|kind| {
            kind.formats()
                .iter()
                .map(move |format| Renderer::Page(kind, *format))
        });
        api.chain(pages).chain(FileKind::iter().map(Renderer::File))
    }

    /// The renderer's name in `rules/routes.toml` (`api_country`, `page_country_md`, `data_json`).
    pub fn name(self) -> String {
        match self {
            Renderer::Api(kind) => format!("api_{}", <&str>::from(kind)),
            Renderer::Page(kind, Format::Html) => format!("page_{}", <&str>::from(kind)),
            Renderer::Page(kind, Format::Markdown) => format!("page_{}_md", <&str>::from(kind)),
            Renderer::File(kind) => <&str>::from(kind).to_string(),
        }
    }

    /// The renderer named `name` in the route table, if any.
    pub(crate) fn from_name(name: &str) -> Option<Renderer> {
        Renderer::all().find(|r| r.name() == name)
    }

    /// The placeholder this renderer's routes must carry.
    pub fn param(self) -> Param {
        match self {
            Renderer::Api(kind) => kind.spec().param,
            Renderer::Page(kind, _) => kind.spec().param,
            Renderer::File(kind) => kind.spec().param,
        }
    }

    /// Whether the output is an HTML page or its Markdown twin (rendered from `rules/templates/`).
    pub(crate) fn is_page(self) -> bool {
        matches!(self, Renderer::Page(..))
    }

    /// Whether the output is an API envelope (JSON with `meta` and `data`).
    pub fn is_envelope(self) -> bool {
        matches!(self, Renderer::Api(_))
    }
}

impl PageKind {
    /// The formats a page of this kind is published in (the 404 page has no twin).
    pub(crate) fn formats(self) -> &'static [Format] {
        self.spec().formats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_derived_and_unique_and_read_back() {
        let names: Vec<String> = Renderer::all().map(Renderer::name).collect();
        let unique: std::collections::BTreeSet<&String> = names.iter().collect();
        assert_eq!(unique.len(), names.len());
        for renderer in Renderer::all() {
            assert_eq!(Renderer::from_name(&renderer.name()), Some(renderer));
        }
        assert_eq!(Renderer::Api(ApiKind::LocalErps).name(), "api_local_erps");
        assert_eq!(
            Renderer::Page(PageKind::EInvoicing, Format::Markdown).name(),
            "page_e_invoicing_md"
        );
        assert_eq!(Renderer::File(FileKind::LlmsFull).name(), "llms_full");
        assert_eq!(Renderer::from_name("page_not_found_md"), None);
    }
}
