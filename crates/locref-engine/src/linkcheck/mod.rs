//! The link check of `locref check` and `locref build`: every internal `href`/`src` of every HTML page
//! (and every link of its Markdown twin) resolves to an output of the route table, every `#fragment` to an
//! element of its target page, and every HTML page parses as HTML5 without an error.
//!
//! The check is a layer of salsa queries, so it costs what the edit changed:
//!
//! ```text
//! page_links(page)    parses one rendered page or twin once: its ids, internal links (located), HTML errors
//! page_ids(page)      the ids alone: the early-cutoff point for the pages linking into `page`
//! broken_links(page)  resolves one page's links against routes::output_paths and the targets' page_ids
//! problems()          the whole site: a loop over the pages (no query of its own)
//! ```
//!
//! An edit that changes one page's bytes re-parses that page only; when its ids did not change, no other
//! page's links are resolved again.
//!
//! The parsing is split along its jobs, each in a module of its own: `html` parses a page (html5ever,
//! fast then exact), `markdown` reads a twin's links (pulldown-cmark), `resolve` turns an `href` into a
//! site path. This module holds the queries that tie them to the route table.

mod html;
mod markdown;
mod parts;
mod resolve;

use std::collections::BTreeSet;

use crate::diagnostics::Diagnostic;
use crate::output::{Output, OutputKey};
use crate::site::{output_paths, site_of, url_path};

pub use html::{scan, scan_exact, scan_fragment};
pub use markdown::scan_markdown;
#[cfg(feature = "streaming")]
pub(crate) use parts::check_part;
use resolve::fragment_resolves;
pub use resolve::{outside_base, resolve};

/// An internal link of a page, resolved to a site path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The attribute value as written (`/e-invoicing/#fr-odoo`).
    pub href: String,
    /// The output it points at (`/e-invoicing/index.html`).
    pub target: String,
    /// The fragment, without `#`, when there is one.
    pub fragment: Option<String>,
    /// Site-relative but outside the base URL's path (`/it/` on a site published under `/locref`).
    pub outside_base: bool,
    /// Where the attribute value starts in the page (1-based; the column counts characters).
    pub line: u32,
    pub column: u32,
}

/// What the link check reads of one page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageLinks {
    /// Every `id` and every `<a name>` of the page: the fragments it can be linked to with.
    pub ids: BTreeSet<String>,
    /// The internal links, in document order (external ones are not checked).
    pub links: Vec<Link>,
    /// HTML5 parse errors and duplicate ids, located in the page.
    pub errors: Vec<Diagnostic>,
}

/// Parses one HTML page (once per change of its bytes). A page made of parts is parsed part by part
/// (see [`parts`]): its value holds the skeleton's links and the ids and errors of every part; the
/// parts' links are checked by [`parts::part_problems`].
#[salsa::tracked(returns(ref))]
pub fn page_links<'db>(db: &'db dyn salsa::Database, page: OutputKey<'db>) -> PageLinks {
    let output = page.output(db);
    if let Some(parted) = parts::Parted::of(db, page) {
        return parted.page_links(db);
    }
    let bytes = (site_of(db).render)(db, output).bytes();
    let text = crate::output::text_of(&bytes);
    if is_markdown(&output.path) {
        scan_markdown(&output.path, &text, base_url(db))
    } else {
        scan(&output.path, &text, base_url(db))
    }
}

/// The ids of one page (an early-cutoff point: a page edit that keeps its ids re-checks no other page).
#[salsa::tracked(returns(ref))]
pub fn page_ids<'db>(db: &'db dyn salsa::Database, page: OutputKey<'db>) -> BTreeSet<String> {
    page_links(db, page).ids.clone()
}

/// The URL the site is published at (the site's, or `--base-url`): what absolute links resolve under.
fn base_url(db: &dyn salsa::Database) -> &str {
    (site_of(db).base_url)(db)
}

/// Whether an output is an HTML page (parsed as HTML5; its ids are what `#fragment`s can point at).
pub(crate) fn is_html(path: &str) -> bool {
    path.ends_with(".html")
}

/// Whether an output is a Markdown twin (its links are checked too; it has no ids).
pub(crate) fn is_markdown(path: &str) -> bool {
    path.ends_with(".md")
}

/// The outputs whose links the check follows: HTML pages and their Markdown twins.
pub(crate) fn is_checked(path: &str) -> bool {
    is_html(path) || is_markdown(path)
}

/// The links of one page that do not resolve, each located at its attribute and saying what was expected.
#[salsa::tracked(returns(ref))]
pub fn broken_links<'db>(db: &'db dyn salsa::Database, page: OutputKey<'db>) -> Vec<Diagnostic> {
    let own = page.output(db);
    let parsed = page_links(db, page);
    let mut broken = diagnose_links(db, own, &parsed.links, || &parsed.ids);
    if let Some(parted) = parts::Parted::of(db, page) {
        broken.extend(parted.broken_links(db));
    }
    broken
}

/// The links of `links` (of the page `own`, whose ids `own_ids` gives) that do not resolve.
fn diagnose_links<'a>(
    db: &'a dyn salsa::Database,
    own: &Output,
    links: &[Link],
    own_ids: impl Fn() -> &'a BTreeSet<String>,
) -> Vec<Diagnostic> {
    let paths = output_paths(db);
    let mut broken = Vec::new();
    for link in links {
        let problem = match paths.get(&link.target) {
            _ if link.outside_base => Some(format!(
                "the site is published under {}/, and this link leaves it (a site-relative link starts with that path)",
                url_path(base_url(db))
            )),
            None => {
                let dir = format!("{}/index.html", link.target);
                if paths.contains_key(&dir) {
                    Some(format!(
                        "no output {}; the page is {} (link to {}/)",
                        link.target, dir, link.target
                    ))
                } else {
                    Some(format!("no output {} on the site", link.target))
                }
            }
            Some(target) => match &link.fragment {
                None => None,
                Some(fragment) if !is_html(&target.path) => Some(format!(
                    "#{fragment} points into {}, which is not an HTML page",
                    target.path
                )),
                Some(fragment) => {
                    let ids = if target == own {
                        own_ids()
                    } else {
                        page_ids(db, OutputKey::new(db, target.clone()))
                    };
                    (!fragment_resolves(fragment, ids))
                        .then(|| format!("no element with id \"{fragment}\" on {}", target.path))
                }
            },
        };
        if let Some(problem) = problem {
            broken.push(Diagnostic::new(
                &own.path,
                link.line,
                link.column,
                format!("broken link \"{}\": {problem}", link.href),
            ));
        }
    }
    broken
}

/// The link and HTML problems of every page and twin of the site: a loop over the per-page queries.
pub fn problems(db: &dyn salsa::Database) -> Vec<Diagnostic> {
    let mut all = Vec::new();
    for output in (site_of(db).outputs)(db)
        .iter()
        .filter(|o| is_checked(&o.path))
    {
        let page = OutputKey::new(db, output.clone());
        all.extend_from_slice(&page_links(db, page).errors);
        all.extend_from_slice(broken_links(db, page));
    }
    all
}

/// How many pages (HTML and Markdown twins) and internal links the check covers (`locref check` prints
/// it).
pub fn coverage(db: &dyn salsa::Database) -> (usize, usize) {
    let pages = (site_of(db).outputs)(db)
        .iter()
        .filter(|o| is_checked(&o.path));
    pages.fold((0, 0), |(pages, links), output| {
        let page = OutputKey::new(db, output.clone());
        let in_parts = parts::Parted::of(db, page).map_or(0, |parted| parted.link_count(db));
        (
            pages + 1,
            links + page_links(db, page).links.len() + in_parts,
        )
    })
}

#[cfg(test)]
mod test_support {
    use super::PageLinks;

    pub(crate) const BASE: &str = "https://locref.example.org";

    /// Each link as (href, target, fragment, line, column).
    pub(crate) fn link_summary(page: &PageLinks) -> Vec<(&str, &str, Option<&str>, u32, u32)> {
        page.links
            .iter()
            .map(|l| {
                let fragment = l.fragment.as_deref();
                (
                    l.href.as_str(),
                    l.target.as_str(),
                    fragment,
                    l.line,
                    l.column,
                )
            })
            .collect()
    }
}
