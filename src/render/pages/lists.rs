//! The pages made of parts: partners (`/partners/`), local ERPs (`/local-erps/`) and news (`/news/`). Each
//! context holds how many rows and the mark where they go; the rows are rendered a part at a time from
//! the row functions here (see [`crate::render::pages::parts`]).

use serde::Serialize;
use serde_json::Value as Json;

use super::context::{PARTS_MARK, PageSpec, PartsSpec, page};
use super::shared::*;
use crate::api_types::{LocalErp, NewsItem, Partner};
use crate::model::evidence::self_published;
use crate::model::{CountryKey, country_local_erps, country_partners, erp_name};
use crate::parse::tables::{LocalErpRow, PartnerRow, local_erp_rows, partner_rows, publisher_rows};
use crate::render::api::{local_erp, news_items, partner};

/// How many rows a page made of parts (partners, local ERPs, news) shows, and the mark where they go
/// (one part at a time, see [`crate::render::pages::parts`]).
#[derive(Serialize)]
pub(crate) struct PartedRows {
    pub count: usize,
    pub rows: &'static str,
}

impl PartedRows {
    /// `count` rows, printed where the template prints `rows`.
    pub(crate) fn of(count: usize) -> PartedRows {
        PartedRows {
            count,
            rows: PARTS_MARK,
        }
    }
}

/// The partners page: how many partners, and where their rows go.
#[derive(Serialize)]
pub(crate) struct PartnersContext<'a> {
    site: &'a SiteContext,
    partners: PartedRows,
}

/// The partners page: how many partners, and the mark where its rows go (one part per country, see
/// [`partners_page_rows`]; sorted by country, ERP and name, with the registers' names). Neutral: nothing
/// is featured and no pricing exists in the data.
pub(crate) fn partners_context(db: &dyn salsa::Database) -> Json {
    to_json(&PartnersContext {
        site: site_context(db),
        partners: PartedRows::of(partner_rows(db).value.len()),
    })
}

/// A partner as the partners page's rows show it.
#[derive(Serialize)]
pub(super) struct PartnerView<'a> {
    #[serde(flatten)]
    partner: Partner,
    country_name: Option<&'a str>,
    erp_name: String,
    /// Whether its only sources are the partner's own pages ([`self_published`]).
    self_published: bool,
}

impl<'a> PartnerView<'a> {
    /// A partner as pages list it (`country_name` where the list spans countries).
    pub(super) fn of(
        db: &dyn salsa::Database,
        row: &PartnerRow,
        country_name: Option<&'a str>,
    ) -> Self {
        PartnerView {
            partner: partner(row),
            country_name,
            erp_name: erp_name(db, &row.erp),
            self_published: self_published(
                &publisher_rows(db).value,
                &row.name,
                None,
                &row.source_urls,
            ),
        }
    }
}

/// One country's partners as the partners page's rows show them: the value its part is rendered from
/// (the page is made of one part per country, see [`crate::model::partner_codes`]).
pub(crate) fn partners_page_rows(db: &dyn salsa::Database, code: &str) -> Json {
    let names = country_names(db);
    let rows = country_partners(db, CountryKey::new(db, code.to_string()));
    let rows: Vec<PartnerView> = rows
        .iter()
        .map(|row| PartnerView::of(db, row, names.get(row.country.as_str()).copied()))
        .collect();
    to_json(&rows)
}

/// The local ERPs page: how many, and where their rows go.
#[derive(Serialize)]
pub(crate) struct LocalErpsContext<'a> {
    site: &'a SiteContext,
    local_erps: PartedRows,
}

/// The local ERPs page: how many, and the mark where its rows go (one part per country, see
/// [`local_erps_page_rows`]).
pub(crate) fn local_erps_context(db: &dyn salsa::Database) -> Json {
    to_json(&LocalErpsContext {
        site: site_context(db),
        local_erps: PartedRows::of(local_erp_rows(db).value.len()),
    })
}

/// A local ERP as the local ERPs page's rows show it.
#[derive(Serialize)]
pub(super) struct LocalErpView<'a> {
    #[serde(flatten)]
    local_erp: LocalErp,
    country_name: Option<&'a str>,
    /// Whether its only sources are the listed product's own pages ([`self_published`]): then its
    /// grade is at most `secondary`, and pages say so beside it.
    self_published: bool,
}

impl<'a> LocalErpView<'a> {
    /// A local ERP as pages list it (`country_name` where the list spans countries).
    pub(super) fn of(
        db: &dyn salsa::Database,
        row: &LocalErpRow,
        country_name: Option<&'a str>,
    ) -> Self {
        LocalErpView {
            local_erp: local_erp(row),
            country_name,
            self_published: self_published(
                &publisher_rows(db).value,
                &row.name,
                row.website.as_deref(),
                &row.source,
            ),
        }
    }
}

/// One country's local and regional ERPs as the local ERPs page's rows show them, sorted by name: the
/// value its part is rendered from (see [`crate::model::local_erp_codes`]).
pub(crate) fn local_erps_page_rows(db: &dyn salsa::Database, code: &str) -> Json {
    let names = country_names(db);
    let rows = country_local_erps(db, CountryKey::new(db, code.to_string()));
    let rows: Vec<LocalErpView> = rows
        .iter()
        .map(|row| LocalErpView::of(db, row, names.get(row.country.as_str()).copied()))
        .collect();
    to_json(&rows)
}

/// About how many news items one part of the news page holds: a part ends after an item whose id's
/// hash is a multiple of this (see [`news_part_starts`]).
const NEWS_PER_PART: u64 = 500;

/// The most news items one part holds, whatever their ids.
const NEWS_PART_MOST: usize = 2000;

/// The news page: how many items, and where their rows go.
#[derive(Serialize)]
pub(crate) struct NewsContext<'a> {
    site: &'a SiteContext,
    news: PartedRows,
}

/// The news page: how many items, and the mark where its rows go (the items newest first, as
/// `news.json`, in parts of about [`NEWS_PER_PART`], see [`news_page_rows`]).
pub(crate) fn news_context(db: &dyn salsa::Database) -> Json {
    to_json(&NewsContext {
        site: site_context(db),
        news: PartedRows::of(news_items(db).len()),
    })
}

/// Where each part of the news page begins: the id of its first item, and that item's place in the
/// list.
///
/// The items decide where a part ends, not their places: after an item whose id's hash (blake3) is a
/// multiple of [`NEWS_PER_PART`], or after [`NEWS_PART_MOST`] items. A new item goes to the top of the
/// list (the newest first); with parts cut every so many places, every part after it would shift by
/// one and be made again. Cut by the items, only the new item's part changes: the others keep their
/// items and their first ids, which are their keys.
#[salsa::tracked(returns(ref))]
fn news_part_starts(db: &dyn salsa::Database) -> Vec<(String, usize)> {
    let mut starts = Vec::new();
    let mut start = 0;
    for (i, item) in news_items(db).iter().enumerate() {
        if i == start {
            starts.push((item.id.clone(), i));
        }
        if ends_news_part(&item.id) || i + 1 - start >= NEWS_PART_MOST {
            start = i + 1;
        }
    }
    starts
}

/// Whether a part of the news page ends after the item `id` (see [`news_part_starts`]).
fn ends_news_part(id: &str) -> bool {
    let hash = blake3::hash(id.as_bytes());
    let mut first = [0; 8];
    first.copy_from_slice(&hash.as_bytes()[..8]);
    u64::from_le_bytes(first) % NEWS_PER_PART == 0
}

/// The news page's parts: the ids of their first items, in page order.
#[salsa::tracked(returns(ref))]
pub(crate) fn news_parts(db: &dyn salsa::Database) -> Vec<String> {
    news_part_starts(db)
        .iter()
        .map(|(first, _)| first.clone())
        .collect()
}

/// One part of the news page, named by its first item's id.
#[salsa::interned(debug)]
struct NewsPart<'db> {
    #[returns(ref)]
    first: String,
}

/// A news item as the news page's rows show it, with the names of the ERPs it is about.
#[derive(Serialize)]
struct NewsView<'a> {
    #[serde(flatten)]
    item: &'a NewsItem,
    erp_names: Vec<ErpNamed<'a>>,
}

/// The news items of the part that begins with the item `first`: titles, dates and links only (none
/// when no part begins there).
pub(crate) fn news_page_rows(db: &dyn salsa::Database, first: &str) -> Json {
    let items = news_part_items(db, NewsPart::new(db, first.to_string()));
    let items: Vec<NewsView> = items
        .iter()
        .map(|n| NewsView {
            item: n,
            erp_names: n
                .erps
                .iter()
                .map(|e| ErpNamed {
                    id: e,
                    name: erp_name(db, e),
                })
                .collect(),
        })
        .collect();
    to_json(&items)
}

/// The items of one part of the news page. Every part's items are taken again after any edit of the
/// news; a part whose items are the same keeps its revision, so the part is not rendered again.
/// Kept in a session (one value in a one-off build, see [`keep_last_news_part_only`]).
#[salsa::tracked(returns(ref), lru = 0)]
fn news_part_items<'db>(db: &'db dyn salsa::Database, part: NewsPart<'db>) -> Vec<NewsItem> {
    let starts = news_part_starts(db);
    let items = news_items(db);
    let Some(at) = starts.iter().position(|(first, _)| first == part.first(db)) else {
        return Vec::new();
    };
    let end = starts.get(at + 1).map_or(items.len(), |(_, next)| *next);
    items[starts[at].1..end].to_vec()
}

#[cfg(feature = "streaming")]
/// A one-off build renders each part of the news page once: it keeps one part's items at a time.
pub(crate) fn keep_last_news_part_only(db: &mut dyn salsa::Database) {
    news_part_items::set_lru_capacity(db, 1);
}

/// How the partners page is made: one part per country with partners (15,000 rows at x100).
pub(super) fn partners_spec() -> PageSpec {
    PageSpec {
        parts: Some(PartsSpec::table_rows(
            |db| crate::model::partner_codes(db),
            partners_page_rows,
            "partner_rows",
        )),
        ..page("partners", |db, _| partners_context(db))
    }
}

/// How the local ERPs page is made: one part per country with local ERPs (10,000 rows at x100).
pub(super) fn local_erps_spec() -> PageSpec {
    PageSpec {
        parts: Some(PartsSpec::table_rows(
            |db| crate::model::local_erp_codes(db),
            local_erps_page_rows,
            "local_erp_rows",
        )),
        ..page("local-erps", |db, _| local_erps_context(db))
    }
}

/// How the news page is made: parts of about 500 items, cut where the items say (20,000 items at
/// x100).
pub(super) fn news_spec() -> PageSpec {
    PageSpec {
        parts: Some(PartsSpec::table_rows(
            |db| news_parts(db),
            news_page_rows,
            "news_rows",
        )),
        ..page("news", |db, _| news_context(db))
    }
}
