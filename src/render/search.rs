//! The search index (`/search-index.json`) that the search box of every page reads (the `/search/` page
//! lists it: `render/pages/search.rs`; the box searches it with MiniSearch, `rules/assets/minisearch.js`,
//! driven by `rules/assets/search.js`).
//!
//! The index is one small JSON document, fetched from the site itself (so the Content-Security-Policy
//! holds) the first time a reader uses the search box:
//!
//! ```json
//! {"version": 2, "items": [
//! {"k": "country", "t": "Italy", "u": "it/", "s": "Europe · IT", "a": ["IT", "Italia"]},
//! {"k": "erp", "t": "Odoo", "u": "erp/odoo/", "s": "Odoo · Modular open-source ERP"},
//! {"k": "page", "t": "Calendar of obligations", "u": "calendar/", "s": "…"},
//! {"k": "fact", "t": "Italy · VAT / GST", "u": "it/#it-vat", "s": "IVA. Standard rate 22%; …"}
//! ]}
//! ```
//!
//! `k` is the kind, `t` the title shown, `u` the page (and anchor) relative to the site's root (the script
//! resolves it against the root it is served from, so a site under a path works), `s` the text searched
//! beside the title, `a` (countries only) the other names the country is found by: its code and its
//! aliases of `sources/registers/country_aliases.csv`. One item per line, and the names (countries, ERPs,
//! pages) before the facts: the script reads the index as it arrives, line by line, so the names are
//! searchable before the facts have come. Facts that say only "unknown/unverified" are left out: they
//! answer nothing. The phases of each obligation are facts too (found by their scope: "reverse charge").
//!
//! Each page contributes its items through a query of its own ([`page_search_items`]: a country page its
//! country and its facts, an ERP page its product, any other page its title), so an edit of Italy's facts
//! re-serializes Italy's lines only.

use crate::kinds::RendererOf;
use serde_json::json;

use super::api::country_detail;
use super::llms::twin_title;
use crate::derived::regimes::country_regime_records;
use crate::kinds::{Format, PageKind, Renderer};
use crate::model::{CountryKey, ErpKey, countries_by_name, country_obligations, erp_info, erps};
use crate::output::OutputKey;
use crate::output::{Piece, Rendered};
use crate::parse::rules::{obligation_rules, route_rules};
use crate::parse::tables::country_alias_rows;
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

/// A country's item: [`item`] with the other names it is found by (`a`).
fn named_item(kind: &str, title: &str, url: &str, text: &str, aliases: &[String]) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    serde_json::to_string(&json!({ "k": kind, "t": title, "u": url, "s": text, "a": aliases }))
        .expect("strings serialize")
}

/// The other names a country is found by: its code in capitals, then its aliases in the register's
/// order.
pub(crate) fn country_aliases(db: &dyn salsa::Database, code: &str) -> Vec<String> {
    std::iter::once(code.to_uppercase())
        .chain(
            country_alias_rows(db)
                .value
                .iter()
                .filter(|r| r.row.code == code)
                .map(|r| r.row.alias.clone()),
        )
        .collect()
}

/// What the index searches of how an obligation works: the answers a source gave, by their labels.
fn regime_text(regime: &crate::api_types::Regime) -> String {
    let labels = |list: &Option<Vec<crate::api_types::Labelled>>| {
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

/// The index lines of one page, joined by `,\n` as the index lists them: two pieces of the index, shared
/// with it, the page's own item (its name) and its facts, which the index lists after every name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchItems {
    pub count: usize,
    pub names: usize,
    pub name_piece: Piece,
    pub fact_piece: Piece,
}

impl SearchItems {
    fn of(mut lines: Vec<String>) -> SearchItems {
        let count = lines.len();
        let facts = lines.split_off(count.min(1));
        SearchItems {
            count,
            names: lines.len(),
            name_piece: Piece::new(lines.join(",\n")),
            fact_piece: Piece::new(facts.join(",\n")),
        }
    }

    /// The items, one JSON object each (a line holds no raw line break: JSON escapes them).
    pub(crate) fn lines(&self) -> Vec<String> {
        [&self.name_piece, &self.fact_piece]
            .into_iter()
            .filter(|p| !p.text().is_empty())
            .flat_map(|p| {
                p.text()
                    .split(",\n")
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            })
            .collect()
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
    let Renderer::Page(kind, Format::Html) = output.renderer() else {
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
            let mut lines = vec![named_item(
                "country",
                &c.name,
                &url,
                &format!("{} · {}", c.region, c.code.to_uppercase()),
                &country_aliases(db, &c.code),
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
            // Each phase of an obligation, as its row on the page heads it, found by its scope.
            let labels = obligation_rules(db);
            for phase in country_obligations(db, key)
                .iter()
                .filter(|p| !p.scope.trim().is_empty())
            {
                let label = labels
                    .iter()
                    .find(|o| o.id == phase.obligation)
                    .map_or(phase.obligation.as_str(), |o| o.label.as_str());
                let heading = match crate::derived::obligations::phase_words(
                    db,
                    &phase.country,
                    &phase.obligation,
                    &phase.phase,
                ) {
                    Some(words) => format!("{label}: {words}"),
                    None => label.to_string(),
                };
                lines.push(item(
                    "fact",
                    &format!("{} · {heading}", c.name),
                    &format!("{url}#{}", phase.id()),
                    &phase.scope,
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
                    kind: Renderer::Page(kind, Format::Markdown).kind(),
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
        .filter(|o| matches!(o.renderer(), Renderer::Page(_, Format::Html)))
        .collect();
    let by_param = |kind: PageKind, value: &str| {
        html.iter()
            .find(|o| {
                o.renderer() == Renderer::Page(kind, Format::Html)
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
                    o.renderer(),
                    Renderer::Page(PageKind::Country | PageKind::Erp, _)
                ) && !super::history::is_archived_release_page(db, o)
            })
            .map(|o| (*o).clone()),
    );
    pages
}

/// `/search-index.json`: every page's items, one per line, every page's name before the facts; each
/// page's name and facts are pieces of their own.
pub fn search_index(db: &dyn salsa::Database) -> Rendered {
    let all: Vec<&SearchItems> = indexed_pages(db)
        .into_iter()
        .map(|page| page_search_items(db, OutputKey::new(db, page)))
        .collect();
    let mut pieces = vec![Piece::new("{\"version\":2,\"items\":[\n")];
    let names = all.iter().filter(|i| i.names > 0).map(|i| &i.name_piece);
    let facts = all
        .iter()
        .filter(|i| i.count > i.names)
        .map(|i| &i.fact_piece);
    for piece in names.chain(facts) {
        if pieces.len() > 1 {
            pieces.push(Piece::new(",\n"));
        }
        pieces.push(piece.clone());
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
