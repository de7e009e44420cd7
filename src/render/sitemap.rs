//! The crawler files: `/sitemap.xml` (every page, `lastmod` the day its content last changed as the data
//! dates it) and `/robots.txt`, which names it.

use crate::history::releases;
use crate::kinds::RendererOf;
use crate::kinds::{Format, PageKind};
use crate::model::{CountryKey, base_url, countries};
use crate::output::Rendered;
use crate::routes::outputs;
use locref_figures::xml::escape as escape_xml;
/// `/sitemap.xml`: every HTML page (the 404 page aside), with `lastmod` the day its content last
/// changed as the data dates it ([`content_day`]), not the time of a build: a clean build in CI would
/// otherwise date every page the day it ran.
pub fn sitemap(db: &dyn salsa::Database) -> Rendered {
    let base = base_url(db);
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for output in outputs(db) {
        let crate::routes::Renderer::Page(kind, Format::Html) = output.renderer() else {
            continue;
        };
        if kind == PageKind::NotFound {
            continue;
        }
        let location = output
            .path
            .strip_suffix("index.html")
            .unwrap_or(&output.path);
        xml.push_str(&format!(
            "  <url><loc>{}</loc>",
            escape_xml(&format!("{base}{location}"))
        ));
        if let Some(day) = content_day(db, kind, output.param.as_deref()) {
            xml.push_str(&format!("<lastmod>{day}</lastmod>"));
        }
        xml.push_str("</url>\n");
    }
    xml.push_str("</urlset>\n");
    Rendered::new(xml.into_bytes())
}

/// The day a page's content last changed, as the data dates it: the newest of the releases that changed
/// what it shows and the days its answers were checked. A country's page: that country's; an ERP's page:
/// that ERP's; a release's page: the release's; a year of releases: its newest; every other page shows
/// the whole dataset: the newest of all. `None` when nothing it shows is dated.
fn content_day(db: &dyn salsa::Database, kind: PageKind, param: Option<&str>) -> Option<String> {
    let day = |time: &str| time.get(..10).unwrap_or(time).to_string();
    match (kind, param) {
        (PageKind::Country, Some(code)) => {
            country_day(db, CountryKey::new(db, code.to_string())).clone()
        }
        (PageKind::Erp, Some(id)) => {
            let key = crate::model::ErpKey::new(db, id.to_string());
            let released = crate::history::released_erp_history(db, key)
                .iter()
                .filter_map(|c| c.released_at.as_deref())
                .map(day);
            let checked = crate::derived::facts::erp_support_facts(db, key)
                .iter()
                .chain(crate::derived::facts::erp_other_facts(db, key))
                .filter_map(|f| f.last_checked.clone());
            released.chain(checked).max()
        }
        (PageKind::Release, Some(version)) => releases(db)
            .iter()
            .find(|r| r.version == version)
            .map(|r| day(&r.released_at)),
        (PageKind::ReleaseYear, Some(year)) => releases(db)
            .iter()
            .filter(|r| crate::history::release_year(&r.released_at) == year)
            .map(|r| day(&r.released_at))
            .max(),
        _ => site_day(db).clone(),
    }
}

/// The day one country's content last changed (see [`content_day`]).
#[salsa::tracked(returns(ref))]
fn country_day<'db>(db: &'db dyn salsa::Database, key: CountryKey<'db>) -> Option<String> {
    let released = crate::history::released_country_history(db, key)
        .iter()
        .filter_map(|c| c.released_at.as_deref())
        .map(|time| time.get(..10).unwrap_or(time).to_string());
    let checked = crate::derived::facts::country_facts(db, key)
        .iter()
        .filter_map(|f| f.last_checked.clone());
    released.chain(checked).max()
}

/// The day the dataset last changed: its newest release, or the newest day any country's answers were
/// checked (see [`content_day`]).
#[salsa::tracked(returns(ref))]
fn site_day(db: &dyn salsa::Database) -> Option<String> {
    let newest_release = releases(db)
        .iter()
        .map(|r| {
            r.released_at
                .get(..10)
                .unwrap_or(&r.released_at)
                .to_string()
        })
        .max();
    countries(db)
        .iter()
        .filter_map(|c| country_day(db, CountryKey::new(db, c.code.clone())).clone())
        .chain(newest_release)
        .max()
}

/// `/robots.txt`: everything may be crawled; names the sitemap.
pub fn robots(db: &dyn salsa::Database) -> Rendered {
    let base = base_url(db);
    Rendered::new(format!("User-agent: *\nAllow: /\n\nSitemap: {base}/sitemap.xml\n").into_bytes())
}
