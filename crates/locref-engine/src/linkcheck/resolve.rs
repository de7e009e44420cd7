//! URL resolution: an `href` as written on a page becomes the site path of an output and a fragment, the
//! way a browser would resolve it against the page's address, so the check can look it up in the route
//! table. Links to other hosts and to other schemes are not followed.

use std::borrow::Cow;

use crate::site::url_path;
use std::collections::BTreeSet;

/// Whether `#fragment` selects something on a page with `ids` (HTML's "indicated part of the document":
/// the empty fragment and `top` mean the top of the page; the id is tried as written, then decoded).
pub(super) fn fragment_resolves(fragment: &str, ids: &BTreeSet<String>) -> bool {
    fragment.is_empty()
        || ids.contains(fragment)
        || ids.contains(percent_decode(fragment).as_ref())
        || fragment.eq_ignore_ascii_case("top")
}

/// `%XX` escapes decoded (invalid escapes and non-UTF-8 results are kept as written).
fn percent_decode(text: &str) -> Cow<'_, str> {
    percent_encoding::percent_decode_str(text)
        .decode_utf8()
        .unwrap_or(Cow::Borrowed(text))
}

/// Resolves `href` on the page at `page` (a site path) to a site path and fragment, or `None` for a link
/// the check does not follow (another host, `mailto:`, `data:`, `javascript:`, an empty `href`).
pub fn resolve(page: &str, href: &str, base_url: &str) -> Option<(String, Option<String>)> {
    let href = href.trim_matches(|c: char| c.is_ascii_whitespace());
    let prefix = url_path(base_url);
    let under_base;
    let local = if let Some(rest) = href.strip_prefix(base_url)
        && (rest.is_empty() || rest.starts_with(['/', '?', '#']))
    {
        if rest.is_empty() { "/" } else { rest }
    } else if href.starts_with("//") || has_scheme(href) {
        return None;
    } else if let Some(rest) = href
        .starts_with('/')
        .then(|| strip_base_path(href, &prefix))
    {
        // A site-relative link names a path on the host: under a base path, the site starts there. One
        // outside it is resolved as written, and reported by `outside_base`.
        under_base = rest.unwrap_or_else(|| href.to_string());
        &under_base
    } else {
        href
    };
    if local.is_empty() {
        return None;
    }
    let (before, fragment) = match local.split_once('#') {
        Some((before, fragment)) => (before, Some(fragment.to_string())),
        None => (local, None),
    };
    let path = before.split_once('?').map_or(before, |(p, _)| p);
    let joined = if path.is_empty() {
        page.to_string()
    } else if path.starts_with('/') {
        path.to_string()
    } else {
        let dir = &page[..page.rfind('/').map_or(0, |i| i + 1)];
        format!("{dir}{path}")
    };
    let mut target = normalize(&percent_decode(&joined));
    if target.ends_with('/') {
        target.push_str("index.html");
    }
    Some((target, fragment))
}

/// `href` (site-relative) with the base URL's path taken off: `/locref/it/` -> `/it/` under `/locref`; `None`
/// when it does not start with that path.
fn strip_base_path(href: &str, prefix: &str) -> Option<String> {
    let rest = href.strip_prefix(prefix)?;
    if rest.is_empty() {
        Some("/".into())
    } else if rest.starts_with('/') {
        Some(rest.into())
    } else if rest.starts_with(['?', '#']) {
        Some(format!("/{rest}"))
    } else {
        None
    }
}

/// Whether `href` is site-relative (`/e-invoicing/`) but outside the base URL's path: on a site
/// published under `https://example.github.io/locref`, that link leaves the site.
pub fn outside_base(href: &str, base_url: &str) -> bool {
    let href = href.trim_matches(|c: char| c.is_ascii_whitespace());
    let prefix = url_path(base_url);
    !prefix.is_empty()
        && href.starts_with('/')
        && !href.starts_with("//")
        && strip_base_path(href, &prefix).is_none()
}

/// Whether `href` starts with a URL scheme (`https:`, `mailto:`, `data:`).
fn has_scheme(href: &str) -> bool {
    match href.split_once(':') {
        Some((scheme, _)) => {
            let mut chars = scheme.chars();
            chars.next().is_some_and(|c| c.is_ascii_alphabetic())
                && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        None => false,
    }
}

/// Removes `.` and `..` segments (never above the root); keeps a final `/`.
fn normalize(path: &str) -> String {
    let mut segments: Vec<&str> = Vec::new();
    let parts: Vec<&str> = path.split('/').skip(1).collect();
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        match *part {
            "." | "" if !last => {}
            ".." => {
                segments.pop();
                if last {
                    segments.push("");
                }
            }
            "." => segments.push(""),
            _ => segments.push(part),
        }
    }
    format!("/{}", segments.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linkcheck::test_support::BASE;

    fn target(page: &str, href: &str) -> Option<(String, Option<String>)> {
        resolve(page, href, BASE)
    }

    #[test]
    fn a_base_urls_path_has_no_trailing_slash() {
        assert_eq!(url_path("https://locref.example.org"), "");
        assert_eq!(url_path("https://locref.example.org/"), "");
        assert_eq!(url_path("https://example.github.io/locref"), "/locref");
        assert_eq!(url_path("https://example.github.io/locref/"), "/locref");
        assert_eq!(url_path("http://127.0.0.1:8000"), "");
    }

    #[test]
    fn resolves_site_relative_relative_and_base_url_links() {
        let page = "/fr/index.html";
        let t = |p: &str, f: Option<&str>| Some((p.to_string(), f.map(str::to_string)));
        assert_eq!(target(page, "/"), t("/index.html", None));
        assert_eq!(
            target(page, "/e-invoicing/#fr-odoo"),
            t("/e-invoicing/index.html", Some("fr-odoo"))
        );
        assert_eq!(target(page, "#saf-t"), t("/fr/index.html", Some("saf-t")));
        assert_eq!(target(page, "index.md"), t("/fr/index.md", None));
        assert_eq!(
            target(page, "../e-invoicing/?x=1"),
            t("/e-invoicing/index.html", None)
        );
        assert_eq!(target(page, "./"), t("/fr/index.html", None));
        assert_eq!(target(page, "../../../"), t("/index.html", None));
        assert_eq!(target(page, BASE), t("/index.html", None));
        assert_eq!(
            target(page, &format!("{BASE}/api/v1/countries/fr.json")),
            t("/api/v1/countries/fr.json", None)
        );
        assert_eq!(target(page, "/a%20b.html"), t("/a b.html", None));
        // Under a base path, site-relative links start with it; one that does not is outside the site.
        let base = "https://example.github.io/locref";
        let under = |href: &str| resolve(page, href, base);
        assert_eq!(
            under("/locref/e-invoicing/#fr-odoo"),
            t("/e-invoicing/index.html", Some("fr-odoo"))
        );
        assert_eq!(under("/locref"), t("/index.html", None));
        assert_eq!(under("/locref/"), t("/index.html", None));
        assert_eq!(under("/locref#x"), t("/index.html", Some("x")));
        assert_eq!(under("../it/"), t("/it/index.html", None));
        assert_eq!(
            under(&format!("{base}/api/v1/index.json")),
            t("/api/v1/index.json", None)
        );
        assert!(outside_base("/e-invoicing/", base));
        assert!(outside_base("/locrefx/", base));
        assert!(!outside_base("/locref/e-invoicing/", base));
        assert!(!outside_base("../x/", base));
        assert!(!outside_base("/e-invoicing/", BASE));
        for external in [
            "https://example.com/x",
            "https://locref.example.org.evil.com/",
            "//cdn.example.com/x.js",
            "mailto:a@b.c",
            "data:,",
            "javascript:void(0)",
            "",
        ] {
            assert_eq!(target(page, external), None, "{external}");
        }
    }
}
