//! The search page (`/search/`): the index as an A–Z list (what a reader without scripts browses
//! instead), the results of a query being drawn there by `/assets/search.js`. The index itself is made in
//! `render/search.rs`.

use crate::kinds::RendererOf;
use serde::Serialize;
use serde_json::Value as Json;

use super::context::{PageSpec, page};
use super::shared::{SiteContext, site_context, to_json};
use crate::kinds::{PageKind, Renderer};
use crate::model::{countries_by_name, erps};
use crate::output::OutputKey;
use crate::render::search::{INDEX, country_aliases, indexed_pages, page_search_items};

/// The `/search/` page: the index as an A–Z list (what a reader without scripts browses instead), the
/// results of a query being drawn there by `/assets/search.js`.
#[derive(Serialize)]
pub(super) struct SearchContext<'a> {
    site: &'a SiteContext,
    letters: Vec<Letter<'a>>,
    erps: Vec<SearchErp<'a>>,
    pages: Vec<SearchPage>,
    index: &'static str,
}

/// The countries whose names begin with one letter.
#[derive(Serialize)]
struct Letter<'a> {
    letter: String,
    countries: Vec<SearchCountry<'a>>,
}

#[derive(Serialize)]
struct SearchCountry<'a> {
    code: &'a str,
    name: &'a str,
    region: &'a str,
    /// Its other names (`sources/registers/country_aliases.csv`), which the list says beside it, so a
    /// reader without scripts finds "Holland" on the page too.
    aliases: Vec<String>,
}

#[derive(Serialize)]
struct SearchErp<'a> {
    id: &'a str,
    name: &'a str,
    vendor: &'a Option<String>,
}

/// A page of the index (not a country's or an ERP's) as the list shows it.
#[derive(Serialize)]
struct SearchPage {
    title: String,
    path: String,
    description: String,
}

/// A line of the index, as [`item`] writes it.
#[derive(serde::Deserialize)]
struct IndexLine {
    t: String,
    u: String,
    s: String,
}

/// The `/search/` page's context (see [`SearchContext`]).
pub(super) fn search_context(db: &dyn salsa::Database) -> Json {
    let mut letters: Vec<Letter> = Vec::new();
    for c in countries_by_name(db) {
        let letter = crate::ids::slugify(&c.name)
            .chars()
            .next()
            .unwrap_or('#')
            .to_ascii_uppercase()
            .to_string();
        let entry = SearchCountry {
            code: &c.code,
            name: &c.name,
            region: &c.region,
            aliases: country_aliases(db, &c.code).into_iter().skip(1).collect(),
        };
        match letters.last_mut() {
            Some(l) if l.letter == letter => l.countries.push(entry),
            _ => letters.push(Letter {
                letter,
                countries: vec![entry],
            }),
        }
    }
    let mut erp_list: Vec<SearchErp> = erps(db)
        .iter()
        .map(|e| SearchErp {
            id: &e.id,
            name: &e.name,
            vendor: &e.vendor,
        })
        .collect();
    erp_list.sort_by_key(|e| crate::ids::slugify(e.name));
    let pages: Vec<SearchPage> = indexed_pages(db)
        .into_iter()
        .filter(|o| {
            !matches!(
                o.renderer(),
                Renderer::Page(PageKind::Country | PageKind::Erp, _)
            )
        })
        .flat_map(|o| page_search_items(db, OutputKey::new(db, o)).lines())
        .filter_map(|line| serde_json::from_str::<IndexLine>(&line).ok())
        .map(|i| SearchPage {
            title: i.t,
            path: format!("/{}", i.u),
            description: i.s,
        })
        .collect();
    to_json(&SearchContext {
        site: site_context(db),
        letters,
        erps: erp_list,
        pages,
        index: INDEX,
    })
}

/// How the search page is made.
pub(super) fn spec() -> PageSpec {
    page("search", |db, _| search_context(db))
}
