//! What locref can publish, declared once: every kind of output (named as `rules/routes.toml` names it),
//! the placeholder its routes take, the formats of a page, and the flat data tables.
//!
//! A renderer is an API envelope, a page in one of its formats, or another file. Each kind is declared
//! here as a variant of its enum with its placeholder ([`Renderer::param`]), below the route table that
//! expands them ([`crate::routes`]); how each is rendered is said once by the `spec` of its enum in the
//! module that renders it ([`ApiKind`]'s in `render/api.rs`, [`PageKind`]'s in `render/pages.rs`,
//! [`FileKind`]'s in `render/mod.rs`). Those are exhaustive matches, as are the ones here: a new variant
//! does not compile until it says what placeholder its routes take and how it is rendered. The renderer
//! names of the route table are derived from the variant names (`ApiKind::LocalErps` is
//! `api_local_erps`, `Page(Country, Markdown)` is `page_country_md`), never kept in a second list.

use std::sync::LazyLock;

use strum::{EnumIter, IntoEnumIterator, IntoStaticStr};

use crate::output::{Kind, Output};

/// What a route's placeholder expands over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Param {
    None,
    /// `{code}`: the countries.
    Country,
    /// `{id}`: the ERPs.
    Erp,
    /// `{filter}`: the filters.
    Filter,
    /// `{stem}`: the flat data tables.
    Stem,
    /// `{version}`: the releases of `sources/releases/`, newest first.
    Release,
    /// `{year}`: the years releases were made in, newest first (the archive pages of `/changes/`).
    Year,
    /// `{date}`: the days the API answers "what applies on this date" for (`derived::on_date`).
    Date,
}

impl Param {
    pub fn placeholder(self) -> Option<&'static str> {
        match self {
            Param::None => None,
            Param::Country => Some("{code}"),
            Param::Erp => Some("{id}"),
            Param::Filter => Some("{filter}"),
            Param::Stem => Some("{stem}"),
            Param::Release => Some("{version}"),
            Param::Year => Some("{year}"),
            Param::Date => Some("{date}"),
        }
    }

    /// Every placeholder a route path may carry.
    pub(crate) const PLACEHOLDERS: [&'static str; 7] = [
        "{code}",
        "{id}",
        "{filter}",
        "{stem}",
        "{version}",
        "{year}",
        "{date}",
    ];

    /// The parameter's name in OpenAPI (`code`).
    pub fn name(self) -> Option<&'static str> {
        self.placeholder().map(|p| p.trim_matches(['{', '}']))
    }
}

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
    /// How each obligation works: model, formats, platforms, signature, archiving.
    Regimes,
    // Releases and changes (src/render/history.rs).
    Changes,
    Releases,
    Release,
    /// The days the API answers "what applies on this date" for.
    OnDates,
    /// What applies on one of those days: every country's toggles and phases.
    OnDate,
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
    /// `/changes/archive/{year}/`: the releases of one year, and which countries and ERPs each changed.
    ReleaseYear,
    /// `/readiness/`: the obligation phases of the next 24 months with each ERP's support.
    Readiness,
    /// `/compare/`: every country's regime answers in one table, and two to four chosen side by side.
    Compare,
    /// `/data/`: the flat data files, their licence and package, how to load them, what the grades mean.
    Data,
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
    /// `/data/README.txt`: how the flat files are read (types, dates, unknowns).
    DataReadme,
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
    // Subscriptions per country and per ERP (src/render/history.rs, src/render/calendar.rs).
    /// `/{code}/changes.xml`: an Atom feed of one country's changes.
    CountryFeed,
    /// `/{code}/calendar.ics`: one country's dated phases as an iCalendar file.
    CountryCalendar,
    /// `/erp/{id}/changes.xml`: an Atom feed of the changes of the facts about one ERP.
    ErpFeed,
    /// `/compare/{code}.json`: one country's column of the comparison page's side-by-side view, fetched
    /// by its script for the chosen countries (src/render/pages/compare.rs).
    CompareColumn,
}

/// The renderer a route names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Renderer {
    Api(ApiKind),
    Page(PageKind, Format),
    File(FileKind),
}

impl ApiKind {
    /// The placeholder the routes of this kind carry.
    pub const fn param(self) -> Param {
        match self {
            ApiKind::Country => Param::Country,
            ApiKind::Erp => Param::Erp,
            ApiKind::Filter => Param::Filter,
            ApiKind::Release => Param::Release,
            ApiKind::OnDate => Param::Date,
            ApiKind::OnDates => Param::None,
            ApiKind::Index
            | ApiKind::Countries
            | ApiKind::Erps
            | ApiKind::Facts
            | ApiKind::LocalErps
            | ApiKind::PartnerFlags
            | ApiKind::Partners
            | ApiKind::News
            | ApiKind::Sponsors
            | ApiKind::Toggles
            | ApiKind::Calendar
            | ApiKind::Regimes
            | ApiKind::Changes
            | ApiKind::Releases => Param::None,
        }
    }
}

/// A page and its twin.
const BOTH: &[Format] = &[Format::Html, Format::Markdown];

impl PageKind {
    /// The placeholder the routes of this kind carry.
    pub const fn param(self) -> Param {
        match self {
            PageKind::Country => Param::Country,
            PageKind::Erp => Param::Erp,
            PageKind::Filter => Param::Filter,
            PageKind::Release => Param::Release,
            PageKind::ReleaseYear => Param::Year,
            PageKind::Home
            | PageKind::EInvoicing
            | PageKind::Erps
            | PageKind::VatReporting
            | PageKind::Saft
            | PageKind::Partners
            | PageKind::LocalErps
            | PageKind::News
            | PageKind::Sponsors
            | PageKind::Licence
            | PageKind::Filters
            | PageKind::Api
            | PageKind::Calendar
            | PageKind::Search
            | PageKind::NotFound
            | PageKind::Changes
            | PageKind::Readiness
            | PageKind::Data => Param::None,
            PageKind::Compare => Param::None,
        }
    }

    /// The formats a page of this kind is published in: the page and its Markdown twin, but the 404
    /// page has no twin.
    pub const fn formats(self) -> &'static [Format] {
        match self {
            PageKind::NotFound => &[Format::Html],
            _ => BOTH,
        }
    }
}

impl FileKind {
    /// The placeholder the routes of this kind carry.
    pub const fn param(self) -> Param {
        match self {
            FileKind::DataJson | FileKind::DataCsv => Param::Stem,
            FileKind::CountryFeed | FileKind::CountryCalendar | FileKind::CompareColumn => {
                Param::Country
            }
            FileKind::ErpFeed => Param::Erp,
            FileKind::Openapi
            | FileKind::Datapackage
            | FileKind::DataLicence
            | FileKind::DataReadme
            | FileKind::Headers
            | FileKind::Asset
            | FileKind::Llms
            | FileKind::LlmsFull
            | FileKind::Calendar
            | FileKind::SearchIndex
            | FileKind::Nojekyll
            | FileKind::ChangesFeed
            | FileKind::Sitemap
            | FileKind::Robots => Param::None,
        }
    }
}

/// Declares the flat tables: `Variant("stem") => "what it holds"`, in the SPEC's order. Their record
/// types are said in `render/data/records.rs`, by exhaustive matches over these variants.
macro_rules! flat_tables {
    ($($table:ident($stem:literal) => $description:literal,)*) => {
        /// A flat data table: published as `data/<stem>.json` and `data/<stem>.csv`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum FlatTable {
            $($table,)*
        }

        impl FlatTable {
            /// Every table, in the SPEC's order.
            pub const ALL: [FlatTable; [$(FlatTable::$table),*].len()] = [$(FlatTable::$table),*];

            /// The file stem (`local_erps`).
            pub const fn stem(self) -> &'static str {
                match self {
                    $(FlatTable::$table => $stem,)*
                }
            }

            /// What the table holds (datapackage.json, data/LICENSE.txt, llms.txt).
            pub const fn description(self) -> &'static str {
                match self {
                    $(FlatTable::$table => $description,)*
                }
            }
        }
    };
}

flat_tables! {
    Matrix("matrix") =>
        "E-invoicing, one record per country and ERP: the country's mandate and the ERP's support.",
    Reporting("reporting") =>
        "VAT and tax reporting and SAF-T requirements, with the support of ten ERPs.",
    Connectors("connectors") => "E-invoicing provider and ERP connector routes.",
    Countries("countries") => "One record per country fact.",
    LocalErps("local_erps") => "Local and regional ERP and accounting systems.",
    LocalPartnerFlags("local_partner_flags") =>
        "Country and global ERP flags: where localization is through local partners or add-ons.",
    Obligations("obligations") =>
        "One record per phase of an obligation (e-invoicing, real-time reporting, SAF-T, audit file): status, date, whom it covers and its source.",
    Toggles("toggles") =>
        "One record per country and toggle: the value on the reference date, the phase that set it and what it rests on.",
    Regimes("regimes") =>
        "One record per country and obligation: how it works (e-invoicing model, formats, platforms, signature, archiving), where a source that was read says; an unknown answer is empty.",
}

impl FlatTable {
    /// The file stems, in the SPEC's order: the values of the `{stem}` placeholder.
    pub const STEMS: [&'static str; FlatTable::ALL.len()] = {
        let mut stems = [""; FlatTable::ALL.len()];
        let mut i = 0;
        while i < stems.len() {
            stems[i] = FlatTable::ALL[i].stem();
            i += 1;
        }
        stems
    };

    /// The table a file stem names.
    pub fn from_stem(stem: &str) -> Option<FlatTable> {
        FlatTable::ALL.into_iter().find(|t| t.stem() == stem)
    }

    /// Whether the table is sorted by country first, so that its file is spliced from per-country parts
    /// (`connectors` is small and not keyed by country).
    pub fn per_country(self) -> bool {
        !matches!(self, FlatTable::Connectors)
    }
}

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
            Renderer::Api(kind) => kind.param(),
            Renderer::Page(kind, _) => kind.param(),
            Renderer::File(kind) => kind.param(),
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

    /// The engine's opaque number of this renderer ([`Kind`]): its place in [`Renderer::all`].
    pub fn kind(self) -> Kind {
        NUMBERS[&self]
    }

    /// The renderer the engine's `kind` numbers.
    pub fn of_kind(kind: Kind) -> Renderer {
        RENDERERS[kind.index()]
    }
}

/// Every renderer in [`Renderer::all`]'s order: [`Kind`] `i` is the `i`th.
static RENDERERS: LazyLock<Vec<Renderer>> = LazyLock::new(|| Renderer::all().collect());

/// Each renderer's [`Kind`].
static NUMBERS: LazyLock<std::collections::HashMap<Renderer, Kind>> = LazyLock::new(|| {
    RENDERERS
        .iter()
        .enumerate()
        .map(|(i, renderer)| {
            let index = u16::try_from(i).expect("fewer than 65,536 renderers");
            (*renderer, Kind::new(index))
        })
        .collect()
});

/// An output's renderer, read back from the engine's opaque [`Kind`].
pub trait RendererOf {
    fn renderer(&self) -> Renderer;
}

impl RendererOf for Output {
    fn renderer(&self) -> Renderer {
        Renderer::of_kind(self.kind)
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

    #[test]
    fn every_renderer_reads_back_from_its_kind() {
        for renderer in Renderer::all() {
            assert_eq!(Renderer::of_kind(renderer.kind()), renderer);
        }
    }
}
