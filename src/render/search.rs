//! The search index (`/search-index.json`) that the search box of every page reads (the `/search/` page
//! lists it: `render/pages/search.rs`).
//!
//! The index is one small JSON document, fetched from the site itself (so the Content-Security-Policy
//! holds) the first time a reader uses the search box:
//!
//! ```json
//! {"version": 1, "items": [
//! {"k": "country", "t": "Italy", "u": "it/", "s": "Europe · IT"},
//! {"k": "erp", "t": "Odoo", "u": "erp/odoo/", "s": "Odoo · Modular open-source ERP"},
//! {"k": "page", "t": "Calendar of obligations", "u": "calendar/", "s": "…"},
//! {"k": "fact", "t": "Italy · VAT / GST", "u": "it/#it-vat", "s": "IVA. Standard rate 22%; …"}
//! ]}
//! ```
//!
//! `k` is the kind, `t` the title shown, `u` the page (and anchor) relative to the site's root (the script
//! resolves it against the root it is served from, so a site under a path works), `s` the text searched
//! beside the title. One item per line. Facts that say only "unknown/unverified" are left out: they answer
//! nothing.
//!
//! Each page contributes its items through a query of its own ([`page_search_items`]: a country page its
//! country and its facts, an ERP page its product, any other page its title), so an edit of Italy's facts
//! re-serializes Italy's lines only.

use serde_json::json;

use super::api::country_detail;
use super::llms::twin_title;
use super::rendered::{OutputKey, Piece, Rendered};
use crate::derive::regimes::country_regime_records;
use crate::kinds::{Format, PageKind, Renderer};
use crate::model::{CountryKey, ErpKey, countries_by_name, erp_info, erps};
use crate::parse::rules::route_rules;
use crate::routes::{Output, outputs};

/// The index's path, as `rules/routes.toml` routes it.
pub(crate) const INDEX: &str = "/search-index.json";

/// A page's URL relative to the site's root: `/it/index.html` -> `it/`.
fn relative(path: &str) -> String {
    path.trim_start_matches('/')
        .trim_end_matches("index.html")
        .to_string()
}

fn item(kind: &str, title: &str, url: &str, text: &str) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    serde_json::to_string(&json!({ "k": kind, "t": title, "u": url, "s": text }))
        .expect("strings serialize")
}

/// What the index searches of how an obligation works: the answers a source gave, by their labels.
fn regime_text(regime: &crate::resources::Regime) -> String {
    let labels = |list: &Option<Vec<crate::resources::Labelled>>| {
        list.as_ref().map(|l| {
            l.iter()
                .map(|v| v.label.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        })
    };
    let parts = [
        regime
            .model
            .as_ref()
            .map(|m| format!("E-invoicing model: {}.", m.label)),
        labels(&regime.formats).map(|f| format!("Formats: {f}.")),
        labels(&regime.platforms).map(|p| format!("Platforms: {p}.")),
        regime
            .signature
            .as_ref()
            .map(|s| format!("Signature or seal: {}.", s.label)),
    ];
    parts.into_iter().flatten().collect::<Vec<_>>().join(" ")
}

/// Whether a fact says nothing but that it is not known.
fn says_only_unknown(value: &str) -> bool {
    value.trim().starts_with("unknown/unverified")
}

/// The index lines of one page, joined by `,\n` as the index lists them: a piece of the index, shared
/// with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchItems {
    pub count: usize,
    pub piece: Piece,
}

impl SearchItems {
    fn of(lines: Vec<String>) -> SearchItems {
        SearchItems {
            count: lines.len(),
            piece: Piece::new(lines.join(",\n")),
        }
    }

    /// The items, one JSON object each (a line holds no raw line break: JSON escapes them).
    pub(crate) fn lines(&self) -> Vec<String> {
        match self.count {
            0 => Vec::new(),
            _ => self.piece.text().split(",\n").map(str::to_string).collect(),
        }
    }
}

/// The index lines one HTML page contributes (none for the 404 and search pages, nor for the sponsors
/// page while there is no sponsor).
#[salsa::tracked(returns(ref), lru = 0)]
pub fn page_search_items<'db>(db: &'db dyn salsa::Database, key: OutputKey<'db>) -> SearchItems {
    SearchItems::of(search_lines(db, key))
}

fn search_lines(db: &dyn salsa::Database, key: OutputKey<'_>) -> Vec<String> {
    let output = key.output(db);
    let Renderer::Page(kind, Format::Html) = output.renderer else {
        return Vec::new();
    };
    let param = output.param.as_deref().unwrap_or_default();
    match kind {
        PageKind::NotFound | PageKind::Search => Vec::new(),
        // The sponsors page says only that there are none while there are none: nothing to find there.
        PageKind::Sponsors if super::api::sponsor_items(db).is_empty() => Vec::new(),
        PageKind::Country => {
            let Some(detail) = country_detail(db, CountryKey::new(db, param.to_string())) else {
                return Vec::new();
            };
            let c = &detail.country;
            let url = relative(&output.path);
            let mut lines = vec![item(
                "country",
                &c.name,
                &url,
                &format!("{} · {}", c.region, c.code.to_uppercase()),
            )];
            for fact in detail.facts.iter().filter(|f| !says_only_unknown(&f.value)) {
                let what = match &fact.erp {
                    // An ERP's support cell reads best as "Odoo: native".
                    Some(_) if fact.label.starts_with("E-invoicing support: ") => {
                        fact.label
                            .trim_start_matches("E-invoicing support: ")
                            .to_string()
                            + " e-invoicing support"
                    }
                    _ => fact.label.clone(),
                };
                let anchor = match fact.erp.as_deref() {
                    Some(erp) if fact.label.starts_with("E-invoicing support: ") => {
                        format!("erp-{erp}")
                    }
                    _ => super::pages::shared::reporting_anchor(fact)
                        .unwrap_or_else(|| fact.id.clone()),
                };
                lines.push(item(
                    "fact",
                    &format!("{} · {what}", c.name),
                    &format!("{url}#{anchor}"),
                    &super::text::plain_clauses(&fact.value),
                ));
            }
            // How each obligation works, where a source says: found by its model, formats and platforms
            // ("clearance", "FatturaPA", "KSeF").
            let key = CountryKey::new(db, param.to_string());
            for regime in country_regime_records(db, key)
                .iter()
                .filter(|r| !r.unknown)
            {
                lines.push(item(
                    "fact",
                    &format!("{} · How {} works", c.name, regime.obligation_label),
                    &format!("{url}#regime-{}", regime.id),
                    &regime_text(regime),
                ));
            }
            lines
        }
        PageKind::Erp => {
            let Some(erp) = erp_info(db, ErpKey::new(db, param.to_string())) else {
                return Vec::new();
            };
            let text = [erp.vendor.as_deref(), erp.category.as_deref()]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" · ");
            vec![item("erp", &erp.name, &relative(&output.path), &text)]
        }
        _ => {
            // The twin as the route table has it (its own route), so its title is read from the
            // twin the build renders, not from a second rendering under another key.
            let twin_path = output.path.replace("/index.html", "/index.md");
            let twin = crate::routes::output_paths(db)
                .get(&twin_path)
                .cloned()
                .unwrap_or_else(|| Output {
                    path: twin_path,
                    renderer: Renderer::Page(kind, Format::Markdown),
                    param: output.param.clone(),
                    route: output.route,
                });
            let title = twin_title(db, OutputKey::new(db, twin));
            let description = route_rules(db)
                .value
                .get(output.route)
                .and_then(|r| r.description.clone())
                .unwrap_or_default();
            vec![item("page", title, &relative(&output.path), &description)]
        }
    }
}

/// The HTML pages in the order their items are listed: countries and ERPs by name first (what people
/// look for most), then the other pages in route order.
pub(crate) fn indexed_pages(db: &dyn salsa::Database) -> Vec<Output> {
    let html: Vec<&Output> = outputs(db)
        .iter()
        .filter(|o| matches!(o.renderer, Renderer::Page(_, Format::Html)))
        .collect();
    let by_param = |kind: PageKind, value: &str| {
        html.iter()
            .find(|o| {
                o.renderer == Renderer::Page(kind, Format::Html)
                    && o.param.as_deref() == Some(value)
            })
            .map(|o| (*o).clone())
    };
    let mut pages: Vec<Output> = countries_by_name(db)
        .iter()
        .filter_map(|c| by_param(PageKind::Country, &c.code))
        .collect();
    let mut erp_names: Vec<(String, String)> = erps(db)
        .iter()
        .map(|e| (crate::ids::slugify(&e.name), e.id.clone()))
        .collect();
    erp_names.sort();
    pages.extend(
        erp_names
            .iter()
            .filter_map(|(_, id)| by_param(PageKind::Erp, id)),
    );
    pages.extend(
        html.iter()
            .filter(|o| {
                !matches!(
                    o.renderer,
                    Renderer::Page(PageKind::Country | PageKind::Erp, _)
                ) && !super::history::is_archived_release_page(db, o)
            })
            .map(|o| (*o).clone()),
    );
    pages
}

/// `/search-index.json`: every page's items, one per line; each page's lines are a piece of their own.
pub fn search_index(db: &dyn salsa::Database) -> Rendered {
    let mut pieces = vec![Piece::new("{\"version\":1,\"items\":[\n")];
    for page in indexed_pages(db) {
        let items = page_search_items(db, OutputKey::new(db, page));
        if items.count == 0 {
            continue;
        }
        if pieces.len() > 1 {
            pieces.push(Piece::new(",\n"));
        }
        pieces.push(items.piece.clone());
    }
    pieces.push(Piece::new("\n]}\n"));
    Rendered::from_pieces(pieces)
}

/// How many items the index holds.
pub(crate) fn search_item_count(db: &dyn salsa::Database) -> usize {
    indexed_pages(db)
        .into_iter()
        .map(|page| page_search_items(db, OutputKey::new(db, page)).count)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_are_one_line_each_and_anchors_are_the_pages() {
        let line = item(
            "fact",
            "Italy · VAT",
            "it/#it-vat",
            "IVA.\nStandard  rate \"22%\"",
        );
        assert_eq!(
            line,
            r#"{"k":"fact","t":"Italy · VAT","u":"it/#it-vat","s":"IVA. Standard rate \"22%\""}"#
        );
        assert_eq!(relative("/it/index.html"), "it/");
        assert_eq!(relative("/index.html"), "");
        assert!(says_only_unknown("unknown/unverified: whether …"));
    }
}
