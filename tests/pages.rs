//! The HTML pages and their Markdown twins (issue #4, first slice): every country page with its anchors
//! and fact verification, escaping of hostile data, the home page's forwarding script, the 404 page.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{ERP_IDS, FIXED_TIME, copy_project, replace_once, snapshot};
use locref::session::{Outcome, Session};

fn build(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut session = Session::load(root, &root.join("public"))
        .expect("load")
        .with_fixed_time(FIXED_TIME);
    let report = session.build();
    assert!(matches!(report.outcome, Outcome::Built(_)), "{report}");
    snapshot(&root.join("public"))
}

fn text<'a>(files: &'a BTreeMap<String, Vec<u8>>, rel: &str) -> &'a str {
    std::str::from_utf8(files.get(rel).unwrap_or_else(|| panic!("{rel} is built"))).expect("utf-8")
}

fn codes(root: &Path) -> Vec<String> {
    common::read(root, "sources/registers/countries.csv")
        .lines()
        .skip(1)
        .filter(|l| !l.is_empty())
        .map(|l| l.split(',').next().unwrap().to_string())
        .collect()
}

/// The attribute values of `name` (`src`, `href`) in double quotes, within tags starting with `tag`.
fn attributes<'a>(html: &'a str, tag: &str, name: &str) -> Vec<&'a str> {
    html.match_indices(tag)
        .flat_map(|(i, _)| {
            let element = &html[i..i + html[i..].find('>').unwrap()];
            let pattern = format!(" {name}=\"");
            element
                .match_indices(&pattern)
                .map(|(j, p)| {
                    let value = &element[j + p.len()..];
                    &value[..value.find('"').unwrap()]
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// What a strict `Content-Security-Policy: default-src 'self'; img-src 'self' data:` needs: no inline
/// style or script, no event-handler attributes, and every loaded resource from the site itself.
fn assert_strict_csp(path: &str, html: &str) {
    let lower = html.to_ascii_lowercase();
    assert!(!lower.contains("<style"), "{path}: inline <style>");
    assert!(!lower.contains(" style="), "{path}: style attribute");
    let handler = regex::Regex::new(r#"<[^>]*\son[a-z]+\s*="#).unwrap();
    assert!(!handler.is_match(&lower), "{path}: event-handler attribute");
    for (i, _) in lower.match_indices("<script") {
        let tag = &lower[i..i + lower[i..].find('>').unwrap()];
        assert!(tag.contains(" src=\""), "{path}: inline <script>: {tag}");
        assert!(
            lower[i..].starts_with(&format!("{tag}></script>")),
            "{path}: a script element with a src has no content"
        );
    }
    let same_origin = |v: &&str| v.starts_with('/') && !v.starts_with("//");
    for src in attributes(html, "<", "src") {
        assert!(same_origin(&src), "{path}: src {src}");
    }
    for href in attributes(html, "<link", "href") {
        assert!(
            same_origin(&href) || href.starts_with("data:"),
            "{path}: <link href={href}>"
        );
    }
}

#[test]
fn every_html_page_works_under_a_strict_csp() {
    let dir = copy_project();
    let files = build(dir.path());
    let pages: Vec<&String> = files.keys().filter(|k| k.ends_with(".html")).collect();
    assert!(pages.len() > 61, "{}", pages.len());
    for path in pages {
        assert_strict_csp(path, text(&files, path));
    }
    // The stylesheet and the home page's one script are files of their own.
    assert!(text(&files, "assets/site.css").contains(".table-wrap"));
    let home = text(&files, "index.html");
    assert!(home.contains("<script src=\"/assets/forward.js\" defer></script>"));
    assert!(
        text(&files, "assets/forward.js").contains("location.replace(\"/e-invoicing/\" + m[0])"),
        "forwarding script"
    );
    assert_eq!(
        text(&files, "e-invoicing/index.html")
            .matches("<script")
            .count(),
        0,
        "only the home page loads the forwarding script"
    );
}

#[test]
fn every_country_page_has_its_twin_anchors_and_verification() {
    let dir = copy_project();
    let root = dir.path();
    let files = build(root);
    let codes = codes(root);
    assert_eq!(codes.len(), 61);
    for code in &codes {
        let html = text(&files, &format!("{code}/index.html"));
        let md = text(&files, &format!("{code}/index.md"));
        assert!(
            html.starts_with("<!doctype html>\n<html lang=\"en\">"),
            "{code}"
        );
        assert!(html.contains("<meta name=\"viewport\""), "{code}");
        assert!(
            html.contains("<link rel=\"stylesheet\" href=\"/assets/site.css\">"),
            "{code}"
        );
        for id in ["e-invoicing", "vat-reporting", "saf-t"] {
            assert!(html.contains(&format!("id=\"{id}\"")), "{code}: #{id}");
        }
        for erp in ERP_IDS {
            assert!(
                html.contains(&format!("id=\"erp-{erp}\"")),
                "{code}: #erp-{erp}"
            );
        }
        assert!(
            html.contains("<th scope=\"col\">Verification</th>"),
            "{code}"
        );
        assert!(html.contains("<th scope=\"row\">"), "{code}");
        assert!(md.starts_with("# "), "{code}");
        assert!(
            md.contains("| Fact | Value | Verification | Checked | Source |"),
            "{code}"
        );
        // Every toggle row says what set it, or that nothing did.
        assert_eq!(
            html.matches("no fact text matched").count() + html.matches("</a>: “").count(),
            6,
            "{code}"
        );
    }
    // France: a verified fact shows its verification, check date and source link; toggles their reason.
    let fr = text(&files, "fr/index.html");
    assert!(fr.contains("<td>secondary</td><td>2026-11-21</td>"), "{fr}");
    assert!(fr.contains(
        "<a href=\"#fr-e-invoicing\">fr-e-invoicing</a>: “B2B: mandatory from 2026-09-01”"
    ));
    let fr_md = text(&files, "fr/index.md");
    assert!(fr_md.contains("| saft required | no | fr-periodic-reporting: \"SAF-T: no\" |"));
    // Andorra's toggles are all unknown.
    assert_eq!(
        text(&files, "ad/index.html")
            .matches("<td class=\"unknown\">unknown</td>")
            .count(),
        6
    );
}

#[test]
fn matrix_home_and_404_pages() {
    let dir = copy_project();
    let files = build(dir.path());
    let matrix = text(&files, "e-invoicing/index.html");
    assert_eq!(matrix.matches("<tr id=\"").count(), 671);
    assert!(matrix.contains("<tr id=\"fr-sage-intacct\">"));
    let matrix_md = text(&files, "e-invoicing/index.md");
    assert_eq!(
        matrix_md.lines().filter(|l| l.starts_with("| [")).count(),
        671
    );

    let home = text(&files, "index.html");
    assert!(home.contains("not tax or legal advice"));
    assert!(home.contains("/api/openapi.json") && home.contains("/api/v1/index.json"));
    assert_eq!(home.matches("<tr><th scope=\"row\">").count(), 61);
    let home_md = text(&files, "index.md");
    assert!(
        home_md.contains("| [France](/fr/index.md) | Europe | yes | yes | yes | yes | no | yes |")
    );
    let not_found = text(&files, "404.html");
    assert!(not_found.contains("<h1>Page not found</h1>"));
    // Pages are not API endpoints.
    let index = text(&files, "api/v1/index.json");
    assert!(!index.contains("index.html") && !index.contains("index.md"));
}

#[test]
fn hostile_data_renders_as_text_and_keeps_markdown_tables_whole() {
    let dir = copy_project();
    let root = dir.path();
    replace_once(
        root,
        "sources/tables/partners.csv",
        "fi,odoo,SprintIT,module publisher,Publisher of the SprintIT",
        "fi,odoo,<script>alert(1)</script>,module publisher,Publisher | of the SprintIT",
    );
    let files = build(root);
    let html = text(&files, "fi/index.html");
    assert!(
        !html.contains("<script>alert(1)</script>"),
        "escaped in HTML"
    );
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "shown as text"
    );
    let md = text(&files, "fi/index.md");
    let row = md
        .lines()
        .find(|l| l.contains("alert(1)"))
        .expect("the partner row");
    assert!(
        row.starts_with("| \\<script>alert(1)\\</script> | odoo |"),
        "{row}"
    );
    assert!(row.contains("Publisher \\| of the SprintIT"), "{row}");
    // The row has the table's four cells: unescaped pipes are exactly the five separators.
    let separators = row.replace("\\|", "").matches('|').count();
    assert_eq!(separators, 5, "{row}");
}

#[test]
fn a_broken_template_is_a_located_diagnostic() {
    let dir = copy_project();
    let root = dir.path();
    replace_once(
        root,
        "rules/templates/country.html",
        "<h2 id=\"toggles\">Toggles</h2>",
        "<h2 id=\"toggles\">{% if %}</h2>",
    );
    let mut session = Session::load(root, &root.join("public"))
        .expect("load")
        .with_fixed_time(FIXED_TIME);
    let report = session.build();
    let Outcome::Invalid(diagnostics) = &report.outcome else {
        panic!("expected a template error: {report}")
    };
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert_eq!(diagnostics[0].path, "rules/templates/country.html");
    assert_eq!(diagnostics[0].line, 6);
    assert!(
        !root.join("public/fr/index.html").exists(),
        "nothing written"
    );
}

/// The diagnostics of a build of `root` that must fail.
fn failed_build(root: &Path) -> Vec<String> {
    let mut session = Session::load(root, &root.join("public"))
        .expect("load")
        .with_fixed_time(FIXED_TIME);
    let report = session.build();
    let Outcome::Invalid(diagnostics) = &report.outcome else {
        panic!("expected errors: {report}")
    };
    diagnostics.iter().map(ToString::to_string).collect()
}

#[test]
fn a_missing_asset_is_a_diagnostic_and_an_asset_route_stays_in_rules_assets() {
    let dir = copy_project();
    let root = dir.path();
    std::fs::remove_file(root.join("rules/assets/forward.js")).expect("delete");
    let messages = failed_build(root);
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].starts_with("rules/assets/forward.js") && messages[0].contains("missing"),
        "{messages:?}"
    );

    let dir = copy_project();
    let root = dir.path();
    replace_once(
        root,
        "rules/routes.toml",
        "path = \"/assets/site.css\"",
        "path = \"/assets/../site.toml\"",
    );
    let messages = failed_build(root);
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].starts_with("rules/routes.toml") && messages[0].contains("/assets/<file name>"),
        "{messages:?}"
    );
}
