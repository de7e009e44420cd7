//! The news and the sponsors as the API and the pages list them: the rows of `sources/news.json` and
//! `sources/sponsors.json` in their published order.

use crate::api_types::{NewsItem, Sponsor};
use crate::parse::json_sources::{news_rows, sponsor_rows};

/// The news items, newest first; undated items last; ties by id (the API's and the news page's order).
#[salsa::tracked(returns(ref))]
pub(crate) fn news_items(db: &dyn salsa::Database) -> Vec<NewsItem> {
    let mut items: Vec<NewsItem> = news_rows(db)
        .value
        .iter()
        .map(|n| NewsItem {
            id: n.id.clone(),
            title: n.title.clone(),
            url: n.url.clone(),
            date: n.date.clone(),
            first_seen: n.first_seen.clone(),
            erps: n.erps.clone(),
            source: n.source.clone(),
        })
        .collect();
    items.sort_by(|a, b| b.date.cmp(&a.date).then_with(|| a.id.cmp(&b.id)));
    items
}

/// The sponsors, sorted by id; each marked `sponsored`.
pub(crate) fn sponsor_items(db: &dyn salsa::Database) -> Vec<Sponsor> {
    let mut items: Vec<Sponsor> = sponsor_rows(db)
        .value
        .iter()
        .map(|s| Sponsor {
            id: s.id.clone(),
            name: s.name.clone(),
            scope: s.scope.clone(),
            tagline: s.tagline.clone(),
            description: s.description.clone(),
            url: s.url.clone(),
            start: s.start.clone(),
            end: s.end.clone(),
            sponsored: true,
        })
        .collect();
    items.sort_by(|a, b| a.id.cmp(&b.id));
    items
}
