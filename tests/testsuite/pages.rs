//! The HTML pages and their Markdown twins: every country page with its anchors
//! and fact verification, escaping of hostile data, the home page's forwarding script, the 404 page.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::common::{
    COUNTRY_CODES, ERP_IDS, FIXED_TIME, copy_project, replace_line, replace_once, snapshot,
};
use locref::locref_site::SITE;
use locref::session::{Outcome, Session};

fn build(root: &Path) -> BTreeMap<String, Vec<u8>> {
    crate::common::session_built(root)
}

fn text<'a>(files: &'a BTreeMap<String, Vec<u8>>, rel: &str) -> &'a str {
    std::str::from_utf8(files.get(rel).unwrap_or_else(|| panic!("{rel} is built"))).expect("utf-8")
}

fn codes(root: &Path) -> Vec<String> {
    crate::common::read(root, "sources/registers/countries.csv")
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
    // What a page loads through <link>; the canonical link only names the page's own address (absolute,
    // as search engines want it) and loads nothing.
    let canonical = attributes(html, "<link rel=\"canonical\"", "href");
    for href in attributes(html, "<link", "href") {
        assert!(
            same_origin(&href) || href.starts_with("data:") || canonical.contains(&href),
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
        text(&files, "assets/forward.js").contains("location.replace(\"e-invoicing/\" + m[0])"),
        "forwarding script"
    );
    // A reader with scripts on is never told what happens without them: the notices are in
    // <noscript> only.
    for (path, bytes) in files.iter().filter(|(p, _)| p.ends_with(".html")) {
        let html = String::from_utf8_lossy(bytes);
        let mut outside = html.to_string();
        while let (Some(start), Some(end)) =
            (outside.find("<noscript>"), outside.find("</noscript>"))
        {
            outside.replace_range(start..end + "</noscript>".len(), "");
        }
        let body = &outside[outside.find("<body").unwrap_or(0)..];
        assert!(
            !body.contains("JavaScript"),
            "{path}: a notice outside <noscript>"
        );
    }
    // A list of sources (a source cell, or each labelled list of one) names each page it rests on once,
    // and two pages of one publisher apart (`vatupdate.com`, `vatupdate.com (2)`).
    for (path, bytes) in files.iter().filter(|(p, _)| p.ends_with(".html")) {
        let html = String::from_utf8_lossy(bytes);
        for cell in html.split("<td class=\"src\">").skip(1) {
            let cell = &cell[..cell.find("</td>").unwrap()];
            for list in cell.split("<br>") {
                let mut names = BTreeSet::new();
                for link in list.split("<a href=\"").skip(1) {
                    let name = &link[link.find('>').unwrap() + 1..link.find("</a>").unwrap()];
                    assert!(names.insert(name), "{path}: {name} twice in {list}");
                }
            }
        }
    }
    // Every page loads the search box's script; only the home page the forwarding one.
    for (path, bytes) in files.iter().filter(|(p, _)| p.ends_with(".html")) {
        let html = String::from_utf8_lossy(bytes);
        assert!(
            html.contains("<script src=\"/assets/search.js\" defer></script>"),
            "{path}"
        );
        assert_eq!(
            html.contains("/assets/forward.js"),
            path == "index.html",
            "{path}"
        );
    }
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
            md.contains("| Fact | Value | Verification | How read | Checked | Source |"),
            "{code}"
        );
        // Every toggle has its row, which says what set it or why nothing did.
        assert_eq!(html.matches("<tr id=\"toggle-").count(), 6, "{code}");
    }
    // France: a verified fact shows its grade, how its source was read and its check date beside its
    // value, then its source link; toggles their reason.
    let fr = text(&files, "fr/index.html");
    assert!(
        fr.contains(
            "<span class=\"grade\"><span class=\"verified\">verified (secondary)</span>, <span class=\"evidence\">search excerpt or stored copy read</span>, <span class=\"date\">checked 2026-11-21</span></span></td>"
        ),
        "{fr}"
    );
    // A toggle links to the dated phase that set it, in the page's table of obligations.
    // In words, with the definition of each toggle shown beside it, not only in a tooltip.
    assert!(fr.contains(
        "<a href=\"#fr-b2b-e-invoicing-issue-large-mid\">In force since 2026-09-01</a>: large companies and intermediate-size companies (ETI) must issue e-invoices. Other phases: <a href=\"#fr-b2b-e-invoicing-receive\">all businesses, whatever their size: receive (in force since 2026-09-01)</a>; <a href=\"#fr-b2b-e-invoicing-issue-sme\">small and medium-sized enterprises and micro-enterprises: issue (enacted; applies from 2027-09-01, after the reference date)</a>.</td>"
    ));
    assert!(fr.contains("B2B e-invoicing mandate<span class=\"definition\">Domestic B2B e-invoicing mandate in force, or enacted with a date.</span>"));
    // The status and its grade side by side, so a phone shows both without scrolling the table.
    assert!(fr.contains(
        "<td class=\"answer\">Enacted; applies from 2027-09-01, after the reference date<span class=\"grade\">"
    ));
    assert!(fr.contains("<tr id=\"fr-b2b-e-invoicing-issue-large-mid\">"));
    // A "no" in a twin: its reason, its grade and how its source was read (Andorra's B2B: a source that
    // states there is none, quoted).
    let ad_md = text(&files, "ad/index.md");
    assert!(ad_md.contains(
        "| no | No such obligation: no B2B e-invoicing obligation; B2B e-invoices are allowed with the buyer's consent. | verified (secondary) | search excerpt or stored copy read |"
    ));
    assert!(
        ad_md.contains("The source says: “"),
        "the twin quotes the sentence an answer rests on"
    );
    // The fact texts' clause convention is said in words on the pages (the API keeps the text).
    for code in &codes {
        // A quote is the source's own words, verbatim: its "B2B: No" is the page's, not our jargon.
        let html = without_quotes(text(&files, &format!("{code}/index.html")));
        for jargon in [
            "SAF-T: no.",
            "Audit file: no.",
            "Real-time reporting: yes",
            "B2B: ",
        ] {
            assert!(!html.contains(jargon), "{code}: {jargon}");
        }
    }
    assert!(
        text(&files, "hu/index.html")
            .contains("SAF-T: not required. Standard audit file: required on request")
    );
    // Kosovo's toggles are all unknown.
    assert_eq!(
        text(&files, "xk/index.html")
            .matches("<td class=\"answer unknown\">unknown</td>")
            .count(),
        6
    );
}

#[test]
fn matrix_home_and_404_pages() {
    let dir = copy_project();
    let files = build(dir.path());
    let matrix = text(&files, "e-invoicing/index.html");
    // A grid: a row per country, by name, a column per ERP; every cell keeps its #<country>-<erp> anchor.
    assert_eq!(matrix.matches("<tr id=\"").count(), 61);
    assert_eq!(matrix.matches("<td id=\"").count(), 671);
    assert_eq!(
        matrix.matches("<th scope=\"col\" data-erp=\"").count(),
        ERP_IDS.len()
    );
    let rows: Vec<&str> = matrix
        .split("<tr id=\"")
        .skip(1)
        .map(|r| &r[..r.find('"').unwrap()])
        .collect();
    assert_eq!(rows[..4], ["al", "ad", "ar", "au"], "by name, not by code");
    // Each cell shows its support type as matrix.csv states it; an established one links its evidence
    // (the country page's row for that ERP), one that is not established says so.
    let table = crate::common::read(dir.path(), "sources/tables/matrix.csv");
    let mut reader = csv::Reader::from_reader(table.as_bytes());
    let mut known = 0;
    let mut unverified = 0;
    let mut graded: BTreeMap<String, usize> = BTreeMap::new();
    for record in reader.records() {
        let record = record.unwrap();
        let (code, erp, support) = (&record[0], &record[1], &record[2]);
        let start = matrix
            .find(&format!("<td id=\"{code}-{erp}\""))
            .unwrap_or_else(|| panic!("#{code}-{erp}"));
        let cell = &matrix[start..start + matrix[start..].find("</td>").unwrap()];
        if support == "unknown/unverified" {
            assert!(cell.contains("class=\"cell s-unknown\""), "{cell}");
            assert!(
                cell.contains("<span class=\"vh\">not established</span>"),
                "{cell}"
            );
            assert!(!cell.contains("<a "), "{cell}");
        } else {
            assert!(
                cell.contains(&format!("<a href=\"/{code}/#erp-{erp}\" title=\"")),
                "{cell}"
            );
            // A graded answer of an established type counts as established; an unverified one says
            // so and does not; a graded roadmap or "not supported" is shown, not established.
            if cell.contains(&format!(": {support}; verified (")) {
                graded
                    .entry(support.to_string())
                    .and_modify(|n| *n += 1)
                    .or_insert(1);
                if !locref::derived::UNESTABLISHED_SUPPORT.contains(&support) {
                    known += 1;
                }
            } else {
                unverified += 1;
                assert!(cell.contains(&format!(": {support}; unverified")), "{cell}");
            }
        }
    }
    assert_eq!(known, crate::common::established_matrix_cells());
    let cells = codes(dir.path()).len() * ERP_IDS.len();
    assert!(matrix.contains(&format!("{known} of {cells} cells are established")));
    // The legend counts each cell once: graded answers by type, unverified apart, the rest unknown; its
    // counts add up to every cell, and its established types to the lead's number.
    let legend = &matrix[matrix.find("<ul class=\"support-legend\"").unwrap()..];
    let legend = &legend[..legend.find("</ul>").unwrap()];
    let count_re = regex::Regex::new(r#"<span class="meta">(\d+)</span>"#).unwrap();
    let counts: Vec<usize> = count_re
        .captures_iter(legend)
        .map(|c| c[1].parse().unwrap())
        .collect();
    assert_eq!(counts.iter().sum::<usize>(), cells, "{legend}");
    assert!(
        legend.contains(&format!(
            "not counted <span class=\"meta\">{unverified}</span>"
        )),
        "{legend}"
    );
    // Each graded type's count is in the legend: the graded cells, the unverified and the unknown are
    // every cell.
    let unknown = cells - graded.values().sum::<usize>() - unverified;
    let mut want: Vec<usize> = graded
        .values()
        .copied()
        .chain([unverified, unknown])
        .filter(|n| *n > 0)
        .collect();
    let mut got = counts.clone();
    want.sort_unstable();
    got.sort_unstable();
    assert_eq!(got, want, "{legend}"); // Each row is headed by the country and its B2B mandate, from its derived toggles.
    // And carries its B2B e-invoicing model (the matrix's filter), as the API's regimes give it.
    let regimes: serde_json::Value = serde_json::from_slice(&files["api/v1/regimes.json"]).unwrap();
    let b2b_model = |code: &str| {
        regimes["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| {
                r["country"] == code && r["obligation"] == "b2b-e-invoicing" && r["current"] == true
            })
            .and_then(|r| r["model"]["id"].as_str())
            .unwrap_or("unknown")
    };
    assert!(matrix.contains(&format!("<tr id=\"it\" data-region=\"Europe\" data-mandate=\"in-force\" data-model=\"{}\"><th scope=\"row\"><a href=\"/it/#e-invoicing\">Italy</a> <span class=\"mandate m-in-force\">B2B mandate in force</span></th>", b2b_model("it"))));
    for code in codes(dir.path()) {
        assert!(
            matrix.contains(&format!("<tr id=\"{code}\" data-region=\"")) && {
                let row = &matrix[matrix.find(&format!("<tr id=\"{code}\" ")).unwrap()..];
                row[..row.find('>').unwrap()]
                    .contains(&format!(" data-model=\"{}\"", b2b_model(&code)))
            },
            "{code}: its model"
        );
    }
    assert!(matrix.contains("<a href=\"/xk/#e-invoicing\">Kosovo</a> <span class=\"mandate m-unknown\">B2B mandate not established</span>"));
    assert!(
        matrix.contains(
            "<span class=\"mandate m-enacted\">B2B mandate enacted from 2027-01-01</span>"
        )
    );
    // The legend names each support type in use; the filters come with the page, shown by its script.
    for chip in [
        "<span class=\"chip s-native\">Native</span> built in",
        "<span class=\"chip s-roadmap\">Roadmap</span> announced, not counted",
    ] {
        assert!(matrix.contains(chip), "{chip}");
    }
    assert!(matrix.contains("<form class=\"filters\" id=\"matrix-filters\" hidden>"));
    for id in ["f-region", "f-mandate", "f-erp", "f-known"] {
        assert!(
            matrix.contains(&format!("<label for=\"{id}\">")),
            "{id} has its label"
        );
    }
    assert!(matrix.contains("<script src=\"/assets/matrix.js\" defer></script>"));
    let matrix_md = text(&files, "e-invoicing/index.md");
    assert_eq!(
        matrix_md.lines().filter(|l| l.starts_with("| [")).count(),
        61
    );
    assert!(matrix_md.contains("| [Italy](/it/index.md) | B2B mandate in force |"));

    let home = text(&files, "index.html");
    assert!(home.contains("not tax or legal advice"));
    assert!(home.contains("/api/openapi.json") && home.contains("/api/v1/index.json"));
    // Each row keyed by its country's code (the date control repaints it).
    assert_eq!(
        regex::Regex::new(r#"<tr data-c="[a-z]{2}"><th scope="row">"#)
            .unwrap()
            .find_iter(home)
            .count(),
        61
    );
    let home_md = text(&files, "index.md");
    assert!(
        home_md.contains(
            "| [France](/fr/index.md) | Europe | yes | yes | yes | yes | unknown | yes |"
        )
    );
    let not_found = text(&files, "404.html");
    assert!(not_found.contains("<h1>Page not found</h1>"));
    // Pages are not API endpoints.
    let index = text(&files, "api/v1/index.json");
    assert!(!index.contains("index.html") && !index.contains("index.md"));
}

/// The Markdown table row of `md` that contains `needle`; asserts it has exactly `cells` cells (every
/// unescaped `|` is a separator).
fn md_row<'a>(md: &'a str, needle: &str, cells: usize) -> &'a str {
    let row = md
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("a row with {needle:?}"));
    let separators = row.replace("\\|", "").matches('|').count();
    assert_eq!(separators, cells + 1, "{row}");
    row
}

const HOSTILE: &str = "<script>alert(1)</script> | x";
const HOSTILE_HTML: &str = "&lt;script&gt;alert(1)&lt;/script&gt; | x";
const HOSTILE_MD: &str = "\\<script>alert(1)\\</script> \\| x";

#[test]
fn hostile_data_renders_as_text_and_keeps_markdown_tables_whole() {
    let dir = copy_project();
    let root = dir.path();
    replace_once(
        root,
        "sources/tables/partners.csv",
        "fi,odoo,SprintIT,module publisher,Publisher of the SprintIT",
        &format!("fi,odoo,{HOSTILE},module publisher,Publisher | of the SprintIT"),
    );
    replace_once(
        root,
        "sources/tables/local_erps.csv",
        "ar,Tango Gestión,",
        &format!("ar,{HOSTILE},"),
    );
    replace_once(
        root,
        "sources/news.json",
        "\"title\": \"Embedded Receivables",
        &format!("\"title\": \"{HOSTILE} Embedded Receivables"),
    );
    let files = build(root);
    for page in ["fi", "ar", "partners", "local-erps", "news"] {
        let html = text(&files, &format!("{page}/index.html"));
        assert!(!html.contains("<script>alert"), "{page}: escaped in HTML");
        assert!(html.contains(HOSTILE_HTML), "{page}: shown as text");
    }
    // Markdown: the value is one escaped cell; the row keeps its table's cell count.
    let row = md_row(text(&files, "fi/index.md"), "alert(1)", 5);
    assert!(
        row.starts_with(&format!("| {HOSTILE_MD} | Odoo |")),
        "{row}"
    );
    assert!(row.contains("Publisher \\| of the SprintIT"), "{row}");
    let row = md_row(text(&files, "partners/index.md"), "alert(1)", 8);
    assert!(row.contains(&format!("| {HOSTILE_MD} |")), "{row}");
    let row = md_row(text(&files, "ar/index.md"), "alert(1)", 5);
    assert!(row.starts_with(&format!("| {HOSTILE_MD} |")), "{row}");
    let row = md_row(text(&files, "local-erps/index.md"), "alert(1)", 8);
    assert!(row.contains(&format!("| {HOSTILE_MD} |")), "{row}");
    let row = md_row(text(&files, "news/index.md"), "alert(1)", 4);
    assert!(
        row.contains(&format!("[{HOSTILE_MD} Embedded Receivables")),
        "{row}"
    );
}

#[test]
fn link_and_image_syntax_in_data_stays_text_in_the_twins_and_llms_full() {
    let dir = copy_project();
    let root = dir.path();
    let hostile =
        "[click](javascript:alert(1)) ![pixel](https://evil.example/p.png) <https://evil.example/>";
    replace_once(
        root,
        "sources/tables/partners.csv",
        "Publisher of the SprintIT",
        &format!("{hostile} Publisher of the SprintIT"),
    );
    let files = build(root);
    for twin in ["fi/index.md", "partners/index.md", "llms-full.txt"] {
        let markdown = text(&files, twin);
        assert!(markdown.contains("alert(1)"), "{twin}: the text is kept");
        for event in pulldown_cmark::Parser::new(markdown) {
            if let pulldown_cmark::Event::Start(
                pulldown_cmark::Tag::Link { dest_url, .. }
                | pulldown_cmark::Tag::Image { dest_url, .. },
            ) = &event
            {
                assert!(
                    !dest_url.contains("javascript") && !dest_url.contains("evil.example"),
                    "{twin}: data became a link or an image: {dest_url}"
                );
            }
            if let pulldown_cmark::Event::Html(html) | pulldown_cmark::Event::InlineHtml(html) =
                &event
            {
                assert!(
                    !html.contains("evil.example"),
                    "{twin}: data became HTML: {html}"
                );
            }
        }
    }
}

#[test]
fn a_misspelled_template_variable_is_a_located_diagnostic() {
    let dir = copy_project();
    let root = dir.path();
    let template = crate::common::read(root, "rules/templates/erp.html");
    let line = template
        .lines()
        .position(|l| l.contains("<h1>{{ erp.name }}</h1>"))
        .unwrap()
        + 1;
    replace_once(
        root,
        "rules/templates/erp.html",
        "<h1>{{ erp.name }}</h1>",
        "<h1>{{ erp.nmae }}</h1>",
    );
    let mut session = Session::load(root, &root.join("public"), &SITE)
        .expect("load")
        .with_fixed_time(FIXED_TIME);
    let report = session.build();
    let Outcome::Invalid(diagnostics) = &report.outcome else {
        panic!("a misspelled variable must not render as empty text: {report}")
    };
    let shown: std::collections::BTreeSet<String> =
        diagnostics.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown.into_iter().collect::<Vec<_>>(),
        [format!(
            "rules/templates/erp.html:{line}:8: error: template error: undefined value: `erp.nmae`"
        )],
    );
}

/// The diagnostics of a build of `root` with a change not released yet (Germany's VAT fact), so the
/// /changes/ page has rows to render; the build must fail.
fn diagnostics_with_a_pending_change(root: &Path) -> Vec<String> {
    replace_once(
        root,
        "sources/tables/countries.csv",
        "de,VAT / GST,Umsatzsteuer.",
        "de,VAT / GST,Umsatzsteuer (USt).",
    );
    failed_build(root)
}

/// The /changes/ page renders its unreleased rows with the `changes_rows` macro of macros.html, one
/// country at a time: a macros.html without it is an error that says so, not an empty table.
#[test]
fn the_changes_page_without_its_rows_macro_is_a_diagnostic_that_names_it() {
    let dir = copy_project();
    let root = dir.path();
    let macros = crate::common::read(root, "rules/templates/macros.html");
    let renamed = macros.replace("changes_part", "change_part");
    assert_ne!(macros, renamed);
    std::fs::write(root.join("rules/templates/macros.html"), renamed).expect("write");
    assert_eq!(
        diagnostics_with_a_pending_change(root),
        [
            "rules/templates/macros.html:1:1: error: template error: unknown function: the changes page renders its parts with the macro `changes_part`, which macros.html does not define"
        ],
    );
}

/// A page prints its parts once: a template that prints them twice is told so (the rows of each
/// country would stand twice in the table).
#[test]
fn the_changes_page_printing_its_rows_twice_is_a_diagnostic() {
    let dir = copy_project();
    let root = dir.path();
    let table = "{{ unreleased.rows }}";
    replace_once(
        root,
        "rules/templates/changes.md",
        table,
        &format!("{table}\n\n{table}"),
    );
    assert_eq!(
        diagnostics_with_a_pending_change(root),
        [
            "rules/templates/changes.md:1:1: error: the page prints its parts (the rows rendered country by country) more than once; print them once"
        ],
    );
}

#[test]
fn a_broken_template_is_a_located_diagnostic() {
    let dir = copy_project();
    let root = dir.path();
    replace_once(
        root,
        "rules/templates/country.html",
        "<h2 id=\"toggles\">Obligations at a glance</h2>",
        "<h2 id=\"toggles\">{% if %}</h2>",
    );
    let mut session = Session::load(root, &root.join("public"), &SITE)
        .expect("load")
        .with_fixed_time(FIXED_TIME);
    let report = session.build();
    let Outcome::Invalid(diagnostics) = &report.outcome else {
        panic!("expected a template error: {report}")
    };
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert_eq!(diagnostics[0].path, "rules/templates/country.html");
    let template = crate::common::read(root, "rules/templates/country.html");
    let line = template
        .lines()
        .position(|l| l.contains("<h2 id=\"toggles\">{% if %}</h2>"))
        .unwrap()
        + 1;
    assert_eq!(diagnostics[0].line as usize, line);
    assert!(
        !root.join("public/fr/index.html").exists(),
        "nothing written"
    );
}

/// The diagnostics of a build of `root` that must fail.
fn failed_build(root: &Path) -> Vec<String> {
    let mut session = Session::load(root, &root.join("public"), &SITE)
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
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(
        messages[1].starts_with("rules/routes.toml") && messages[1].contains("`.` or `..` segment"),
        "{messages:?}"
    );
    // The stylesheet the route served is now served by none: said at the file.
    assert!(
        messages[0].starts_with("rules/assets/site.css:1:1: error: is served by no route"),
        "{messages:?}"
    );
}

/// Elements that have no end tag in HTML5.
const VOID: [&str; 6] = ["meta", "link", "br", "hr", "img", "input"];

/// A light HTML5 check of one page: the document shell, every non-void element closed in order, ids
/// unique, and every table semantic (column headers) and wrapped so it scrolls on a phone.
fn assert_well_formed(path: &str, html: &str) {
    assert!(
        html.starts_with("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">"),
        "{path}"
    );
    assert!(
        html.contains("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"),
        "{path}"
    );
    assert_eq!(html.matches("<h1>").count(), 1, "{path}: one h1");
    let tag = regex::Regex::new(r"<(/?)([a-z][a-z0-9]*)\b[^>]*>").unwrap();
    let mut open: Vec<&str> = Vec::new();
    for m in tag.captures_iter(html) {
        let name = m.get(2).unwrap().as_str();
        // Void elements, and SVG's self-closing elements (`<rect … />`, valid foreign content in HTML5).
        if VOID.contains(&name) || m[0].ends_with("/>") {
            continue;
        }
        if m[1].is_empty() {
            open.push(name);
        } else {
            let top = open.pop();
            assert_eq!(top, Some(name), "{path}: </{name}> closes {top:?}");
        }
    }
    assert!(open.is_empty(), "{path}: unclosed {open:?}");
    let id = regex::Regex::new(r#" id="([^"]*)""#).unwrap();
    let mut ids = std::collections::BTreeSet::new();
    for m in id.captures_iter(html) {
        assert!(
            ids.insert(m[1].to_string()),
            "{path}: duplicate id {}",
            &m[1]
        );
    }
    let tables = html.matches("<table>").count();
    let wrapped = regex::Regex::new(
        r#"<div class="table-wrap"([^>]*)>\n<table>\n<thead><tr><th scope="col">"#,
    )
    .unwrap();
    assert_eq!(
        wrapped.find_iter(html).count(),
        tables,
        "{path}: every table is wrapped and has column headers"
    );
    // A wrapper the keyboard can scroll is a named region: in the Tab order, with a label or the id of
    // what labels it on the page.
    for m in wrapped.captures_iter(html) {
        let attributes = &m[1];
        if attributes.is_empty() {
            continue;
        }
        assert!(
            attributes.starts_with(" role=\"region\" tabindex=\"0\" aria-label"),
            "{path}: a scrolling table's wrapper `{attributes}`"
        );
        if let Some(label) = attributes.split("aria-labelledby=\"").nth(1) {
            let label = &label[..label.find('"').unwrap()];
            assert!(
                ids.contains(label),
                "{path}: aria-labelledby=\"{label}\" names no id"
            );
        } else {
            assert!(
                !attributes.contains("aria-label=\"\""),
                "{path}: an empty aria-label"
            );
        }
    }
}

#[test]
fn every_html_page_is_well_formed_and_has_its_markdown_twin() {
    let dir = copy_project();
    let files = build(dir.path());
    let html: Vec<&String> = files.keys().filter(|k| k.ends_with(".html")).collect();
    let twins: Vec<&String> = files.keys().filter(|k| k.ends_with(".md")).collect();
    // The home page, the matrix, 61 countries, the ERP index and 11 ERPs, the two reporting pages,
    // partners, local ERPs, news, sponsors, licence, the filter index and 7 filters, the API docs, the
    // calendar, the readiness board, search, the changes, the releases and the archive page of each year
    // of releases, the comparison, the data files; and the 404 page.
    assert_eq!(
        html.len(),
        1 + 1
            + 61
            + 1
            + 11
            + 2
            + 5
            + 1
            + 7
            + 1 // the API docs
            + 1 // the calendar
            + 1 // the readiness board
            + 1 // search
            + 1 // the changes
            + crate::common::shipped_releases().count
            + crate::common::shipped_releases().years // the archive pages of the releases
            + 1 // the comparison
            + 1 // the data files
            + 1 // 404
    );
    for path in &html {
        let page = text(&files, path);
        assert_well_formed(path, page);
        assert!(page.contains("not tax or legal advice"), "{path}: notice");
        // The tables of country pages and the API docs, many with nothing to focus inside, scroll
        // sideways on a phone: each wrapper is a region the keyboard reaches (WCAG 2.1.1).
        let country = path.len() == "xx/index.html".len() && path.ends_with("/index.html");
        if country || *path == "api/index.html" {
            assert_eq!(
                page.matches("<div class=\"table-wrap\" role=\"region\" tabindex=\"0\" ")
                    .count(),
                page.matches("<div class=\"table-wrap\"").count(),
                "{path}: a table wrapper the keyboard cannot reach"
            );
        }
        if *path == "404.html" {
            continue;
        }
        let twin = path.replace("index.html", "index.md");
        let md = text(&files, &twin);
        assert!(md.starts_with("# "), "{twin}");
        assert!(md.contains("not tax or legal advice"), "{twin}: notice");
        assert!(
            !md.contains("<td") && !md.contains("<a "),
            "{twin}: Markdown, not HTML"
        );
        assert!(
            page.contains("<a href=\"index.md\">"),
            "{path}: links its twin"
        );
    }
    assert_eq!(
        twins.len(),
        html.len() - 1,
        "every page but 404.html has a twin"
    );
    for twin in twins {
        assert!(
            files.contains_key(&twin.replace("index.md", "index.html")),
            "{twin} twins a page"
        );
    }
}

#[test]
fn every_erp_page_has_a_row_per_country_and_its_sections() {
    let dir = copy_project();
    let files = build(dir.path());
    let index = text(&files, "erp/index.html");
    let index_md = text(&files, "erp/index.md");
    for erp in ERP_IDS {
        assert!(
            index.contains(&format!("<a href=\"/erp/{erp}/\">")),
            "{erp}"
        );
        assert!(
            index_md.contains(&format!("](/erp/{erp}/index.md) |")),
            "{erp}"
        );
        let html = text(&files, &format!("erp/{erp}/index.html"));
        let md = text(&files, &format!("erp/{erp}/index.md"));
        // The count the page and the ERP list show is the API's e_invoicing_countries.
        let api: serde_json::Value =
            serde_json::from_slice(&files[&format!("api/v1/erps/{erp}.json")]).unwrap();
        let count = &api["data"]["counts"]["e_invoicing_countries"];
        assert!(
            html.contains(&format!(
                "Support is established in <strong>{count}</strong> of 61 countries"
            )),
            "{erp}: {count}"
        );
        assert!(
            index.contains(&format!("<a href=\"/erp/{erp}/\">")) && {
                let row = &index[index.find(&format!("<tr id=\"{erp}\">")).unwrap()..];
                row[..row.find("</tr>").unwrap()]
                    .contains(&format!("<td class=\"num\">{count}</td>"))
            },
            "{erp}: the list shows {count}"
        );
        for code in COUNTRY_CODES.split(' ') {
            assert!(
                html.contains(&format!("<tr id=\"{code}\">")),
                "{erp}: #{code}"
            );
            assert!(
                md.contains(&format!("](/{code}/index.md) |")),
                "{erp}: {code}"
            );
        }
        for id in ["e-invoicing", "providers", "partner-flags", "other-facts"] {
            assert!(html.contains(&format!("id=\"{id}\"")), "{erp}: #{id}");
        }
        assert!(html.contains(&format!("<a href=\"/api/v1/erps/{erp}.json\">JSON</a>")));
    }
    // A verified cell: its support, verification, check date and source; linked from the country page.
    let intacct = text(&files, "erp/sage-intacct/index.html");
    let row = intacct
        .lines()
        .find(|l| l.starts_with("<tr id=\"de\">"))
        .unwrap();
    assert!(row.contains("<td class=\"ans\">native</td>"), "{row}");
    assert!(
        row.contains("<td class=\"verified\">verified (official)</td><td class=\"date\">"),
        "{row}"
    );
    assert!(row.contains("<a href=\"https://www.intacct.com/"), "{row}");
    assert!(
        text(&files, "de/index.html").contains("<a href=\"/erp/sage-intacct/#de\">"),
        "country page links the ERP row"
    );
    // An unverified cell says so; providers and partner flags come from their tables.
    assert!(
        intacct.contains("<tr id=\"ad\"><th scope=\"row\"><a href=\"/ad/#erp-sage-intacct\">Andorra</a></th><td class=\"ans unknown\">unknown/unverified</td>")
    );
    let fusion = text(&files, "erp/oracle-fusion-cloud-erp/index.html");
    assert!(fusion.contains("<tr><th scope=\"row\">Thomson Reuters</th>"));
    // Every partner flag of the source table is on its ERP's page, linked to its country.
    let flags = crate::common::read(dir.path(), "sources/tables/local_partner_flags.csv");
    for line in flags.lines().skip(1).filter(|l| !l.is_empty()) {
        let fields: Vec<&str> = line.split(',').collect();
        let (code, erp) = (fields[0], fields[1]);
        let html = text(&files, &format!("erp/{erp}/index.html"));
        assert!(
            html.contains(&format!("<a href=\"/{code}/#partner-flags\">")),
            "{erp}: flag of {code}"
        );
    }
}

#[test]
fn reporting_rows_have_their_anchors_on_the_topic_pages_and_the_country_pages() {
    let dir = copy_project();
    let root = dir.path();
    let files = build(root);
    let table = crate::common::read(root, "sources/tables/reporting.csv");
    let mut seen: BTreeMap<(String, String), usize> = BTreeMap::new();
    for line in table.lines().skip(1).filter(|l| !l.is_empty()) {
        let mut fields = line.split(',');
        let (topic, code) = (fields.next().unwrap(), fields.next().unwrap());
        let n = seen.entry((topic.into(), code.into())).or_default();
        *n += 1;
        let anchor = format!("{topic}-{code}-{n}");
        let page = text(&files, &format!("{topic}/index.html"));
        assert!(
            page.contains(&format!(
                "<tr id=\"{anchor}\"><th scope=\"row\"><a href=\"/{code}/#{anchor}\">"
            )),
            "{anchor} on /{topic}/"
        );
        let country = text(&files, &format!("{code}/index.html"));
        assert!(
            country.contains(&format!("<tr id=\"{anchor}\">"))
                && country.contains(&format!("<a href=\"/{topic}/#{anchor}\">all countries</a>")),
            "{anchor} on /{code}/"
        );
    }
    for topic in ["vat-reporting", "saf-t"] {
        let rows: usize = seen
            .iter()
            .filter(|((t, _), _)| t == topic)
            .map(|(_, n)| n)
            .sum();
        let page = text(&files, &format!("{topic}/index.html"));
        assert_eq!(page.matches("<tr id=\"").count(), rows, "{topic}");
        // An ERP has a column, headed by its name, when some row of the topic says how it supports the
        // report; an ERP unknown in every row has none and is named in the line above the table instead.
        let records: serde_json::Value =
            serde_json::from_slice(&files["data/reporting.json"]).unwrap();
        let mut folded = 0;
        for erp in ERP_IDS.iter().filter(|e| **e != "sap-business-one") {
            let said = records
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["topic"] == topic && r[*erp] != "unknown");
            let column = format!("<th scope=\"col\" class=\"erp-col\"><a href=\"/erp/{erp}/\">");
            assert_eq!(page.contains(&column), said, "{topic}: {erp} column");
            let named = page
                .split("No support is recorded yet in any row for ")
                .nth(1)
                .and_then(|rest| rest.split("no column here").next())
                .is_some_and(|line| line.contains(&format!("<a href=\"/erp/{erp}/\">")));
            assert_eq!(named, !said, "{topic}: {erp} named as having no column");
            folded += usize::from(!said);
        }
        assert!(
            folded > 0,
            "{topic}: the shipped data leaves some ERP unknown in every row"
        );
        let md = text(&files, &format!("{topic}/index.md"));
        assert_eq!(
            md.lines().filter(|l| l.starts_with("| [")).count(),
            rows,
            "{topic} twin"
        );
    }
    assert!(seen.contains_key(&("vat-reporting".into(), "it".into())));
    assert!(seen.contains_key(&("saf-t".into(), "pt".into())));
}

#[test]
fn licence_sponsors_news_partners_and_filters_pages() {
    let dir = copy_project();
    let root = dir.path();
    let files = build(root);
    let licence = text(&files, "licence/index.html");
    for id in ["api", "commercial", "data"] {
        assert!(licence.contains(&format!("<section id=\"{id}\">")), "#{id}");
    }
    assert!(licence.contains("CC BY-NC 4.0") && licence.contains("CC BY 4.0"));
    assert!(licence.contains(
        "<a href=\"mailto:licensing@locref.example.org\">licensing@locref.example.org</a>"
    ));
    assert!(licence.contains("<q>Localization Reference Data Service (locref), CC BY-NC 4.0</q>"));
    assert!(licence.contains("<q>Localization Reference Data Service (locref), CC BY 4.0</q>"));

    let notice = "Sponsored content: paid placements, not part of the verified dataset.";
    let sponsors = text(&files, "sponsors/index.html");
    assert!(sponsors.contains(&format!("<p class=\"sponsored\" id=\"notice\">{notice}")));
    assert!(sponsors.contains("<p>There are no sponsors at present.</p>"));
    assert!(text(&files, "sponsors/index.md").contains(&format!("> **{notice}")));

    // News: one row per item of the source, titles link to the vendor; a missing date says so.
    let items: Vec<serde_json::Value> =
        serde_json::from_str(&crate::common::read(root, "sources/news.json")).unwrap();
    let news = text(&files, "news/index.html");
    assert_eq!(news.matches("<tr id=\"").count(), items.len());
    assert!(news.contains("<td>date not stated</td>"));
    assert!(news.contains("<a href=\"https://learn.microsoft.com/en-us/dynamics365/release-plan/2026wave1/smb/dynamics365-business-central/enable-embedded-verifactu-mode-spain\">Enable embedded Verifactu mode in Spain</a>"));

    // Partners: one row per source row, in the API's order (country, ERP, name).
    let api: serde_json::Value =
        serde_json::from_slice(&files["api/v1/partners.json"]).expect("json");
    let ids: Vec<&str> = api["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    let partners = text(&files, "partners/index.html");
    let positions: Vec<usize> = ids
        .iter()
        .map(|id| partners.find(&format!("<tr id=\"{id}\">")).expect(id))
        .collect();
    assert!(
        positions.windows(2).all(|w| w[0] < w[1]),
        "sorted as the API"
    );
    assert_eq!(partners.matches("<tr id=\"").count(), ids.len());

    // Local ERPs: every source row.
    let local = crate::common::read(root, "sources/tables/local_erps.csv");
    assert_eq!(
        text(&files, "local-erps/index.html")
            .matches("<tr id=\"")
            .count(),
        local.lines().skip(1).filter(|l| !l.is_empty()).count()
    );

    // Filters: the index links every filter; each page lists exactly the API's members.
    let filters = text(&files, "filters/index.html");
    for (path, bytes) in files
        .iter()
        .filter(|(p, _)| p.starts_with("api/v1/filters/"))
    {
        let slug = path
            .trim_start_matches("api/v1/filters/")
            .trim_end_matches(".json");
        assert!(
            filters.contains(&format!("<a href=\"/filters/{slug}/\">")),
            "{slug}"
        );
        let api: serde_json::Value = serde_json::from_slice(bytes).expect("json");
        let page = text(&files, &format!("filters/{slug}/index.html"));
        let members = api["data"].as_array().unwrap();
        assert_eq!(page.matches("<tr id=\"").count(), members.len(), "{slug}");
        for m in members {
            let code = m["code"].as_str().unwrap();
            assert!(
                page.contains(&format!(
                    "<tr id=\"{code}\"><th scope=\"row\"><a href=\"/{code}/#toggles\">"
                )),
                "{slug}: {code}"
            );
        }
        assert!(
            page.contains("<th scope=\"col\">SAF-T required</th>"),
            "{slug}: labels"
        );
    }
}

#[test]
fn home_links_every_section_and_the_machine_readable_files() {
    let dir = copy_project();
    let files = build(dir.path());
    let home = text(&files, "index.html");
    for href in [
        "/e-invoicing/",
        "/vat-reporting/",
        "/saf-t/",
        "/erp/",
        "/partners/",
        "/local-erps/",
        "/filters/",
        "/news/",
        "/licence/",
        "/licence/#commercial",
        "/api/",
        "/api/v1/index.json",
        "/api/openapi.json",
        "/data/datapackage.json",
        "/data/matrix.csv",
        "/llms.txt",
        "/llms-full.txt",
        "/index.md",
    ] {
        assert!(home.contains(&format!("<a href=\"{href}\">")), "{href}");
    }
    // The sponsors page only while there is a sponsor (the shipped sources sell none).
    let sponsors: serde_json::Value =
        serde_json::from_slice(&files["api/v1/sponsors.json"]).unwrap();
    let has_sponsors = !sponsors["data"].as_array().unwrap().is_empty();
    assert_eq!(home.contains("<a href=\"/sponsors/\">"), has_sponsors);
    for erp in ERP_IDS {
        assert!(home.contains(&format!("<a href=\"/erp/{erp}/\">")), "{erp}");
    }
    // Toggle columns are headed by their labels from rules/toggles.toml, each defined in words under the
    // table.
    assert!(home.contains(
        "<th scope=\"col\" data-toggle=\"e_invoicing_mandatory_b2b\">B2B e-invoicing mandate</th>"
    ));
    assert!(home.contains("<dt>B2B e-invoicing mandate</dt><dd>Domestic B2B e-invoicing mandate in force, or enacted with a date.</dd>"));
    // The header of every page: the site's name back home, the search box, the sections.
    let odoo = text(&files, "erp/odoo/index.html");
    assert!(odoo.contains("<a class=\"brand\" href=\"/\">"));
    assert!(odoo.contains(
        "<form class=\"site-search\" role=\"search\" action=\"/search/\" method=\"get\">"
    ));
    assert!(odoo.contains("<nav aria-label=\"Sections\">"));
}

#[test]
fn a_sponsor_is_marked_as_paid_and_kept_off_every_other_page() {
    let dir = copy_project();
    let root = dir.path();
    std::fs::write(
        root.join("sources/sponsors.json"),
        r#"[{"id": "acme", "name": "Acme <b>Tax</b>", "tagline": "Compliance | made easy", "url": "https://acme-tax.net/"}]"#,
    )
    .expect("write");
    // A sponsor's site is held to the publishers register like every URL of the sources.
    let run = crate::common::locref(root, &["check"], crate::common::FIXED_EPOCH);
    assert_eq!(run.status.code(), Some(1));
    let stderr = crate::common::text(&run.stderr);
    assert!(
        stderr.contains("sources/sponsors.json:1:88: error: `acme-tax.net` is not in sources/registers/publishers.csv"),
        "{stderr}"
    );
    let mut register = crate::common::read(root, "sources/registers/publishers.csv");
    register.push_str("acme-tax.net,,Acme Tax,service-provider,\n");
    std::fs::write(root.join("sources/registers/publishers.csv"), register).unwrap();
    let files = build(root);
    let page = text(&files, "sponsors/index.html");
    assert!(page.contains("<p class=\"sponsored\" id=\"notice\">Sponsored content:"));
    assert!(page.contains(
        "<tr id=\"acme\"><th scope=\"row\"><a href=\"https://acme-tax.net/\" rel=\"sponsored\">Acme &lt;b&gt;Tax&lt;/b&gt;</a></th><td>Sponsored: Compliance | made easy</td>"
    ));
    let row = md_row(text(&files, "sponsors/index.md"), "Acme", 6);
    assert!(row.contains("Sponsored: Compliance \\| made easy"), "{row}");
    for (path, bytes) in &files {
        if (path.ends_with(".html") || path.ends_with(".md")) && !path.starts_with("sponsors/") {
            assert!(
                !String::from_utf8_lossy(bytes).contains("Acme"),
                "{path} shows a sponsor"
            );
        }
    }
}

/// The API docs page is generated from the OpenAPI document: every path, every resource schema, and a
/// try-it control offering exactly the API's paths.
#[test]
fn the_api_docs_page_documents_every_path_and_schema_of_the_openapi_document() {
    let dir = copy_project();
    let files = build(dir.path());
    let openapi: serde_json::Value =
        serde_json::from_str(text(&files, "api/openapi.json")).expect("openapi.json");
    let html = text(&files, "api/index.html");
    let md = text(&files, "api/index.md");
    let paths: Vec<&String> = openapi["paths"].as_object().unwrap().keys().collect();
    assert!(paths.len() > 20);
    for path in &paths {
        let id = path
            .trim_matches('/')
            .replace(['/', '.', '{', '}', '_'], "-")
            .replace("--", "-")
            .trim_matches('-')
            .to_string();
        assert!(
            html.contains(&format!("<tr id=\"{id}\"><th scope=\"row\"><code>")),
            "{path}: row #{id}"
        );
        assert!(md.contains(&format!("| `{path}` |")), "{path} in the twin");
    }
    // The try-it control offers the API paths (with the templated detail paths), and nothing else.
    let options: Vec<&str> = html
        .split("<option value=\"")
        .skip(1)
        .map(|o| &o[..o.find('"').unwrap()])
        .filter(|v| v.starts_with('/'))
        .collect();
    let api: Vec<&str> = paths
        .iter()
        .map(|p| p.as_str())
        .filter(|p| p.starts_with("/api/"))
        .collect();
    assert_eq!(options, api);
    assert!(html.contains("<option value=\"/api/v1/countries/{code}.json\" data-param=\"code\">"));
    assert!(html.contains("<option value=\"it\" selected>it (Italy)</option>"));
    assert!(html.contains("<script src=\"/assets/try-it.js\" defer></script>"));
    for (name, schema) in openapi["components"]["schemas"].as_object().unwrap() {
        if name.starts_with("Envelope_") {
            continue;
        }
        assert!(
            html.contains(&format!("<section id=\"schema-{name}\"")),
            "{name}"
        );
        assert!(md.contains(&format!("### {name}\n")), "{name} in the twin");
        for (field, _) in schema["properties"].as_object().into_iter().flatten() {
            assert!(
                html.contains(&format!("<tr><th scope=\"row\"><code>{field}</code></th>")),
                "{name}.{field}"
            );
        }
    }
    // Required-ness is the schema's: a Country's `code` is required, its `vat_name` is not.
    let country = &html[html.find("id=\"schema-Country\"").unwrap()..];
    let country = &country[..country.find("</section>").unwrap()];
    assert!(
        country.contains("<code>code</code></th><td>string</td><td>yes</td>"),
        "{country}"
    );
    assert!(
        country.contains("<code>vat_name</code></th><td>string or null</td><td>no</td>"),
        "{country}"
    );
}

/// llms.txt follows the llms.txt convention (title, summary, sections of links) and links every twin by
/// its absolute URL; llms-full.txt holds every twin.
#[test]
fn llms_txt_links_every_twin_and_llms_full_txt_holds_them() {
    let dir = copy_project();
    let files = build(dir.path());
    let llms = text(&files, "llms.txt");
    let full = text(&files, "llms-full.txt");
    let base = "https://locref.example.org";
    let mut lines = llms.lines();
    assert_eq!(lines.next(), Some("# Localization Reference Data Service"));
    assert_eq!(lines.next(), Some(""));
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("> Per-country reference data")
    );
    for section in [
        "## Pages",
        "## Countries",
        "## ERP products",
        "## Country filters",
        "## Releases",
        "## API",
        "## Data files",
        "## Optional",
    ] {
        assert!(llms.contains(&format!("\n{section}\n")), "{section}");
    }
    let twins: Vec<&String> = files.keys().filter(|k| k.ends_with("index.md")).collect();
    assert_eq!(
        twins.len(),
        crate::common::shipped_pages() - 1,
        "every page but the 404 page has a twin"
    );
    for twin in &twins {
        let title = text(&files, twin)
            .lines()
            .next()
            .unwrap()
            .trim_start_matches("# ");
        assert!(
            llms.contains(&format!("- [{title}]({base}/{twin})")),
            "{twin} ({title}) is not linked from llms.txt"
        );
        // Each twin as it is, but for its rows that say only "unknown/unverified" (named in one line),
        // and without the footer every page repeats (from its last thematic break), which the file's
        // heading says once.
        let (body, footer) = text(&files, twin).rsplit_once("\n---\n").unwrap();
        assert!(footer.contains("This page was last updated"), "{twin}");
        let carried = format!(
            "\nSource: {base}/{twin}\n\n{}",
            locref::render::llms::condense_unknown_rows(&format!("{}\n", body.trim_end()))
        );
        let at = full
            .find(&carried)
            .unwrap_or_else(|| panic!("{twin} in llms-full.txt"));
        let after = &full[at + carried.len()..];
        assert!(
            after.is_empty() || after.starts_with("\n---\n\nSource: "),
            "{twin} in llms-full.txt is followed by {:?}",
            &after[..after.len().min(200)]
        );
    }
    assert_eq!(full.matches("This page was last updated").count(), 0);
    assert_eq!(full.matches("This file was last updated").count(), 1);
    // The footer every twin ends with is in the heading once, dated as the file.
    let heading = full.split("\n---\n").next().unwrap();
    let home = text(&files, "index.md");
    let footer = &home[home.rfind("\n---\n\n").unwrap() + 6..];
    let (before_time, after_time) = footer.split_once("This page was last updated").unwrap();
    assert!(heading.contains(before_time), "{before_time}\n{heading}");
    let licences = &after_time[after_time.find("\n\n").unwrap()..];
    assert!(heading.ends_with(licences), "{licences}\n{heading}");
    for said_once in [
        "> The content is informational only and is not tax or legal advice.",
        "This file was last updated ",
        "(commercial use: [licence](/licence/index.md))",
    ] {
        assert!(heading.contains(said_once), "{said_once}: {heading}");
    }
    assert!(llms.contains(&format!("- [Italy]({base}/it/index.md)")));
    assert!(llms.contains(&format!("- [/api/openapi.json]({base}/api/openapi.json)")));
    assert!(llms.contains(&format!(
        "- [/data/countries.csv]({base}/data/countries.csv)"
    )));
    assert!(llms.contains(&format!("- [Full content]({base}/llms-full.txt)")));
    assert!(llms.contains("not tax or legal advice"));
}

/// A curator rewords the footer once (the `footer` macro of `macros.md`): every twin and the heading of
/// `llms-full.txt` say it, in a session's build and in a one-off build.
#[test]
fn the_footer_is_worded_once_for_the_twins_and_llms_full_txt() {
    let dir = copy_project();
    let root = dir.path();
    replace_once(
        root,
        "rules/templates/macros.md",
        "Data files: [",
        "Downloadable data files: [",
    );
    let session = build(root);
    let one_off = crate::common::one_off_build(root, "clean").expect("one-off build");
    for files in [&session, &one_off] {
        for twin in ["index.md", "it/index.md", "changes/index.md"] {
            assert!(
                text(files, twin).contains("Downloadable data files: ["),
                "{twin}"
            );
        }
        let full = text(files, "llms-full.txt");
        let heading = full.split("\n---\n").next().unwrap();
        assert!(heading.contains("Downloadable data files: ["), "{heading}");
        assert_eq!(full.matches("Downloadable data files: [").count(), 1);
    }
}

/// The ids of one page, for resolving a `#fragment`.
fn ids_of(html: &str) -> std::collections::BTreeSet<&str> {
    html.match_indices(" id=\"")
        .map(|(i, p)| {
            let rest = &html[i + p.len()..];
            &rest[..rest.find('"').unwrap()]
        })
        .collect()
}

#[test]
fn the_search_index_lists_countries_by_name_erps_pages_and_established_facts_that_resolve() {
    let dir = copy_project();
    let files = build(dir.path());
    let index: serde_json::Value =
        serde_json::from_slice(&files["search-index.json"]).expect("the index is JSON");
    assert_eq!(index["version"], 2);
    let items = index["items"].as_array().unwrap();
    let of = |kind: &str| -> Vec<&serde_json::Value> {
        items.iter().filter(|i| i["k"] == kind).collect()
    };
    // Every country once, by name (accents folded), then every ERP and every page but search and 404.
    let countries: Vec<&str> = of("country")
        .iter()
        .map(|i| i["t"].as_str().unwrap())
        .collect();
    let registered = COUNTRY_CODES.split_whitespace().count();
    assert_eq!(countries.len(), registered);
    let mut sorted = countries.clone();
    sorted.sort_by_key(|n| locref::ids::slugify(n));
    assert_eq!(countries, sorted, "countries by name");
    assert_eq!(of("erp").len(), ERP_IDS.len());
    let html_pages = files.keys().filter(|p| p.ends_with("index.html")).count();
    // The sponsors page says only that there are none while there are none: not listed then.
    let sponsors: serde_json::Value =
        serde_json::from_slice(&files["api/v1/sponsors.json"]).unwrap();
    let unlisted_sponsors = usize::from(sponsors["data"].as_array().unwrap().is_empty());
    assert_eq!(
        of("page").len(),
        html_pages - registered - ERP_IDS.len() - 1 - unlisted_sponsors,
        "every other page but /search/ (and /sponsors/ without a sponsor)"
    );
    // Each item's page exists and each anchor is an id on it; no fact says only that it is unknown.
    let facts = of("fact");
    assert!(facts.len() > 500, "{}", facts.len());
    for item in items {
        let url = item["u"].as_str().unwrap();
        assert!(!url.starts_with('/'), "{url}: relative to the site's root");
        let (page, anchor) = url.split_once('#').unwrap_or((url, ""));
        let html = text(&files, &format!("{page}index.html"));
        if !anchor.is_empty() {
            assert!(ids_of(html).contains(anchor), "{url}");
        }
        assert!(
            !item["s"]
                .as_str()
                .unwrap()
                .starts_with("unknown/unverified"),
            "{item}"
        );
    }
    // Fact texts are searchable in the words the pages use.
    assert!(facts.iter().any(|f| f["t"] == "Italy · VAT / GST"
        && f["u"] == "it/#it-vat"
        && f["s"].as_str().unwrap().contains("Standard rate 22%")));
    assert!(
        !files["search-index.json"]
            .windows(11)
            .any(|w| w == b"SAF-T: no. ")
    );
    // How each obligation works is found by its model, formats and platforms: every answered record of
    // the regimes, each format and platform by the label pages show, on an item that opens its row.
    let regimes: serde_json::Value = serde_json::from_slice(&files["api/v1/regimes.json"]).unwrap();
    let answered: Vec<&serde_json::Value> = regimes["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["unknown"] == false)
        .collect();
    assert!(!answered.is_empty());
    for regime in answered {
        let url = format!(
            "{}/#regime-{}",
            regime["country"].as_str().unwrap(),
            regime["id"].as_str().unwrap()
        );
        let item = facts
            .iter()
            .find(|f| f["u"] == url.as_str())
            .unwrap_or_else(|| panic!("{url}: no search item"));
        let searched = item["s"].as_str().unwrap();
        let labels = ["formats", "platforms"]
            .iter()
            .flat_map(|k| regime[*k].as_array().cloned().unwrap_or_default())
            .chain([regime["model"].clone(), regime["signature"].clone()])
            .filter(|v| !v.is_null())
            .map(|v| v["label"].as_str().unwrap().to_string())
            .collect::<Vec<_>>();
        for label in labels {
            assert!(
                searched.contains(&label),
                "{url}: {label:?} in {searched:?}"
            );
        }
    }
    // The search form is on every page, and /search/ lists every country A to Z for readers without scripts.
    for (path, bytes) in files.iter().filter(|(p, _)| p.ends_with(".html")) {
        let html = std::str::from_utf8(bytes).unwrap();
        assert!(
            html.contains(
                "<form class=\"site-search\" role=\"search\" action=\"/search/\" method=\"get\">"
            ),
            "{path}"
        );
    }
    let search = text(&files, "search/index.html");
    for code in codes(dir.path()) {
        assert!(
            search.contains(&format!("<li><a href=\"/{code}/\">")),
            "{code} in the A-Z index"
        );
    }
}

#[test]
fn every_page_has_its_own_description_and_the_header_jumps_to_any_country_by_name() {
    let dir = copy_project();
    let files = build(dir.path());
    let description = regex::Regex::new(r#"<meta name="description" content="([^"]+)">"#).unwrap();
    let mut seen: BTreeMap<String, &str> = BTreeMap::new();
    for (path, bytes) in files.iter().filter(|(p, _)| p.ends_with(".html")) {
        let html = std::str::from_utf8(bytes).unwrap();
        let found: Vec<_> = description.captures_iter(html).collect();
        assert_eq!(found.len(), 1, "{path}: one description");
        let text = found[0][1].to_string();
        assert!(text.len() >= 50, "{path}: {text}");
        if let Some(other) = seen.insert(text.clone(), path) {
            panic!("{path} and {other} share the description {text:?}");
        }
    }
    // The header's country list, by name, on every page.
    let home = text(&files, "index.html");
    let start = home
        .find("<details class=\"jump\">")
        .expect("the jump control");
    let panel = &home[start..start + home[start..].find("</details>").unwrap()];
    let names: Vec<&str> = panel
        .split("/\">")
        .skip(1)
        .map(|s| &s[..s.find('<').unwrap()])
        .collect();
    assert_eq!(names.len(), 61);
    let mut sorted = names.clone();
    sorted.sort_by_key(|n| locref::ids::slugify(n));
    assert_eq!(names, sorted);
    // A GitHub Pages site publishes the files as they are.
    assert_eq!(files.get(".nojekyll").map(Vec::len), Some(0));
}

#[test]
fn the_home_page_draws_the_map_and_the_timeline_with_their_data_as_tables() {
    let dir = copy_project();
    let files = build(dir.path());
    let home = text(&files, "index.html");
    // The map: every country a link to its page, coloured by the toggle the reader picks (one radio
    // per toggle, the first checked), with a legend per toggle whose counts add up to 61.
    let map = &home[home.find("<svg").unwrap()..home.find("</svg>").unwrap()];
    assert!(map.contains("class=\"fig-map\""));
    for code in codes(dir.path()) {
        assert!(
            map.contains(&format!("href=\"/{code}/\"")),
            "{code} on the map"
        );
    }
    let radios = home
        .matches("<input type=\"radio\" name=\"map-toggle\"")
        .count();
    // A radio per toggle, and one for the B2B e-invoicing model.
    let toggles = crate::common::read(dir.path(), "rules/toggles.toml")
        .lines()
        .filter(|l| l.trim() == "[[toggle]]")
        .count();
    assert_eq!(radios, toggles + 1);
    assert_eq!(
        home.matches("name=\"map-toggle\" id=\"map-model\" value=\"model\">")
            .count(),
        1
    );
    assert_eq!(
        home.matches(
            "name=\"map-toggle\" id=\"map-t0\" value=\"e_invoicing_mandatory_b2b\" checked>"
        )
        .count(),
        1
    );
    // A yes limited to part of its scope is counted apart, where there is one.
    // Each count in a span of its own (data-count), which the date control rewrites.
    let legend = regex::Regex::new(r#"yes: <span data-count="yes">(\d+)</span> countries</li>(?:<li class=.legend-limited.>yes, limited \(to part of its scope\): <span data-count="limited">(\d+)</span></li>)?<li class=.legend-false.>no: <span data-count="no">(\d+)</span></li><li class=.legend-unknown.>not established: <span data-count="unknown">(\d+)</span>"#).unwrap();
    let legends: Vec<_> = legend.captures_iter(home).collect();
    assert_eq!(legends.len(), toggles);
    for l in &legends {
        let sum: usize = (1..=4)
            .filter_map(|i| l.get(i))
            .map(|m| m.as_str().parse::<usize>().unwrap())
            .sum();
        assert_eq!(sum, 61);
    }
    assert!(
        legends.iter().any(|l| l.get(2).is_some()),
        "some toggle has a limited yes"
    );
    // The model's legend: a count per model of the vocabulary and one of the countries with none, which
    // together count every country once.
    let legend = &home[home
        .find("<div class=\"map-legend map-legend-model\">")
        .unwrap()..];
    let legend = &legend[..legend.find("</div>").unwrap()];
    let counts: Vec<usize> = regex::Regex::new(r": (\d+)</li>")
        .unwrap()
        .captures_iter(legend)
        .map(|c| c[1].parse().unwrap())
        .collect();
    assert_eq!(
        counts.iter().sum::<usize>(),
        codes(dir.path()).len(),
        "{legend}"
    );
    // The text alternative of the map is the countries table, linked from the figure.
    assert!(home.contains("The same data as a table: <a href=\"#countries\">"));
    // The timeline: one link per mandate event, its table beside it in the page and in the twin.
    let timeline_at = home.find("class=\"fig-timeline\"").expect("the timeline");
    let timeline = &home[timeline_at..timeline_at + home[timeline_at..].find("</svg>").unwrap()];
    assert!(timeline.matches("<a ").count() >= 10);
    let table_rows = home[timeline_at..]
        .split("<summary>These dates as a table</summary>")
        .nth(1)
        .unwrap()
        .split("</table>")
        .next()
        .unwrap()
        .matches("<tr><td class=\"date\">")
        .count();
    assert!(
        table_rows >= timeline.matches("<a ").count(),
        "{table_rows}"
    );
    let twin = text(&files, "index.md");
    let section = &twin[twin
        .find("## E-invoicing mandates: recent and coming start dates")
        .unwrap()..];
    assert_eq!(
        section.lines().filter(|l| l.starts_with("| 20")).count(),
        table_rows,
        "the twin's table holds the same dates"
    );
    // The calendar page draws every dated mandate phase.
    assert!(text(&files, "calendar/index.html").contains("class=\"fig-timeline\""));
}

/// A value as the HTML pages escape it.
fn html_escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// A value as a Markdown twin's table cell writes it.
fn md_escaped(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace('<', "\\<")
        .replace('[', "\\[")
        .replace(']', "\\]")
}

#[test]
fn a_regime_row_says_the_same_on_the_page_the_twin_the_api_and_the_data_files() {
    let dir = crate::common::copy_project();
    let root = dir.path();
    // The row rests on the source of Italy's B2B phase (a source that was read); its answers are the
    // first values of each set of the shipped vocabulary, whatever they are.
    let obligations = crate::common::read(root, "sources/tables/obligations.csv");
    let mut reader = csv::Reader::from_reader(obligations.as_bytes());
    let phase = reader
        .records()
        .map(|r| r.unwrap())
        .find(|r| &r[0] == "it" && &r[1] == "b2b-e-invoicing")
        .expect("Italy has a B2B phase");
    let vocabulary: toml::Table =
        toml::from_str(&crate::common::read(root, "rules/vocabulary.toml")).unwrap();
    let set = |name: &str| -> Vec<(String, String)> {
        vocabulary[name]
            .as_table()
            .unwrap()
            .iter()
            .map(|(id, label)| (id.clone(), label.as_str().unwrap().to_string()))
            .collect()
    };
    let (models, formats, platforms, signatures, places) = (
        set("einvoicing_models"),
        set("einvoicing_formats"),
        set("einvoicing_platforms"),
        set("signature_answers"),
        set("archive_locations"),
    );
    let two_formats: Vec<&(String, String)> = formats.iter().take(2).collect();
    let format_ids: Vec<&str> = two_formats.iter().map(|(id, _)| id.as_str()).collect();
    let regimes = crate::common::read(root, "sources/tables/regimes.csv");
    let header = regimes.lines().next().unwrap();
    let notes = "two national pages read; neither states the model";
    std::fs::write(
        root.join("sources/tables/regimes.csv"),
        format!(
            "{header}\nit,b2b-e-invoicing,{},{},{},{},10,{},{},{},{},{},,a sentence of the source\nit,b2g-e-invoicing,,,,,,,,,unverified,,{notes},\n",
            models[0].0,
            format_ids.join(" "),
            platforms[0].0,
            signatures[0].0,
            places[0].0,
            &phase[9],
            &phase[10],
            &phase[11],
            &phase[12],
        ),
    )
    .unwrap();
    let site = crate::common::one_off_build(root, "out").expect("the project builds");
    let text = |path: &str| String::from_utf8(site[path].clone()).unwrap();
    let sources: Vec<&str> = phase[9].split(' ').collect();
    let formats_in_words = two_formats
        .iter()
        .map(|(_, label)| label.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let archiving = format!("10 years; {}", places[0].1);

    // The API: ids and labels, the unknown record all null.
    let api: serde_json::Value = serde_json::from_str(&text("api/v1/regimes.json")).unwrap();
    let data = api["data"].as_array().unwrap();
    assert_eq!(api["meta"]["count"], data.len());
    let known = data
        .iter()
        .find(|r| r["id"] == "it-b2b-e-invoicing")
        .unwrap();
    assert_eq!(known["model"]["id"], models[0].0.as_str());
    assert_eq!(known["model"]["label"], models[0].1.as_str());
    let api_formats: Vec<(&str, &str)> = known["formats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["id"].as_str().unwrap(), f["label"].as_str().unwrap()))
        .collect();
    let expected: Vec<(&str, &str)> = two_formats
        .iter()
        .map(|(id, label)| (id.as_str(), label.as_str()))
        .collect();
    assert_eq!(api_formats, expected);
    assert_eq!(known["platforms"][0]["id"], platforms[0].0.as_str());
    assert_eq!(known["signature"]["label"], signatures[0].1.as_str());
    assert_eq!(known["archive_years"], 10);
    assert_eq!(known["archive_location"]["id"], places[0].0.as_str());
    assert_eq!(known["source_urls"], serde_json::json!(sources));
    assert_eq!(known["evidence"], &phase[10]);
    assert_eq!(known["verification"], &phase[11]);
    assert_eq!(known["last_checked"], &phase[12]);
    assert_eq!(known["unknown"], false);
    // Where its obligation stands on the reference date, from the phase: in force, today's way.
    assert_eq!(known["obligation_status"], "in-force");
    assert_eq!(known["obligation_from"], &phase[4]);
    assert_eq!(
        known["obligation_standing"],
        format!("in force since {}", &phase[4])
    );
    assert_eq!(known["current"], true);
    let unknown = data
        .iter()
        .find(|r| r["id"] == "it-b2g-e-invoicing")
        .unwrap();
    for field in [
        "model",
        "formats",
        "platforms",
        "signature",
        "archive_years",
        "archive_location",
    ] {
        assert!(unknown[field].is_null(), "{field}: {}", unknown[field]);
    }
    assert_eq!(unknown["unknown"], true);
    assert_eq!(unknown["notes"], notes);

    // The data files: the ids, the same record in JSON and CSV (an empty cell is null).
    let json: serde_json::Value = serde_json::from_str(&text("data/regimes.json")).unwrap();
    let json_row = json
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["country_code"] == "it" && r["obligation"] == "b2b-e-invoicing")
        .unwrap();
    assert_eq!(json_row["model"], models[0].0.as_str());
    assert_eq!(json_row["formats"], format_ids.join(" "));
    // A number, as the API has it.
    assert_eq!(json_row["archive_years"], 10);
    assert_eq!(json_row["source"], &phase[9]);
    let csv_text = text("data/regimes.csv");
    let mut csv_reader = csv::Reader::from_reader(csv_text.as_bytes());
    let columns: Vec<String> = csv_reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_string)
        .collect();
    let csv_rows: Vec<csv::StringRecord> = csv_reader.records().map(|r| r.unwrap()).collect();
    assert_eq!(csv_rows.len(), json.as_array().unwrap().len());
    for (record, row) in json.as_array().unwrap().iter().zip(&csv_rows) {
        for (column, cell) in columns.iter().zip(row.iter()) {
            let value = match &record[column] {
                serde_json::Value::Null => String::new(),
                serde_json::Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            assert_eq!(value, cell, "{column}");
        }
    }

    // The page: the obligation's column, and the at-a-glance answers with their obligation.
    let page = text("it/index.html");
    let table = &page[page.find("<table class=\"regimes\">").unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    assert!(table.contains("id=\"regime-it-b2b-e-invoicing\""));
    for answer in [
        &models[0].1,
        &formats_in_words,
        &platforms[0].1,
        &signatures[0].1,
        &archiving,
        &notes.to_string(),
    ] {
        assert!(table.contains(&html_escaped(answer)), "{answer} in {table}");
    }
    assert!(table.contains(&format!("checked {}", &phase[12])));
    let glance = &page[page.find("id=\"glance-model\"").unwrap()..];
    let glance = &glance[..glance.find("</tr>").unwrap()];
    assert!(
        glance.contains(&html_escaped(&models[0].1))
            && glance.contains("#regime-it-b2b-e-invoicing")
    );

    // The twin: one row per obligation, the unknown one unknown throughout.
    let twin = text("it/index.md");
    let section = &twin[twin.find("## How each obligation works").unwrap()..];
    let row = section
        .lines()
        .find(|l| {
            l.starts_with(&format!(
                "| B2B e-invoicing (in force since {}) | ",
                &phase[4]
            ))
        })
        .unwrap();
    let cells: Vec<&str> = row.split(" | ").collect();
    assert_eq!(
        cells[1..6],
        [
            md_escaped(&models[0].1),
            md_escaped(&formats_in_words),
            md_escaped(&platforms[0].1),
            md_escaped(&signatures[0].1),
            md_escaped(&archiving),
        ]
    );
    assert!(section.contains(&format!(
        "| B2G e-invoicing ({}) |{} unknown | not applicable | not applicable | none | {notes} |",
        unknown["obligation_standing"].as_str().unwrap(),
        " unknown |".repeat(5)
    )));
}

/// The first and last day a calendar date stands for (`2027`, `2027-09`, `2027-09-01`).
fn date_span(date: &str) -> (jiff::civil::Date, jiff::civil::Date) {
    let parts: Vec<i16> = date.split('-').map(|p| p.parse().unwrap()).collect();
    let day = |y: i16, m: i16, d: i16| jiff::civil::date(y, m as i8, d as i8);
    match parts[..] {
        [y] => (day(y, 1, 1), day(y, 12, 31)),
        [y, m] => (day(y, m, 1), day(y, m, 1).last_of_month()),
        [y, m, d] => (day(y, m, d), day(y, m, d)),
        _ => panic!("a calendar date: {date}"),
    }
}

/// Which group of the readiness board an answer falls in: the one definition of "established" (a
/// support type that establishes support, graded from a source that was read); an unverified answer is
/// unknown whatever it says.
fn readiness_group(support: Option<&str>, verification: &str) -> &'static str {
    match support {
        None | Some("unknown/unverified") | Some("unknown") => "unknown",
        Some(_) if verification == "unverified" => "unknown",
        Some("roadmap") => "roadmap",
        Some("not supported") => "none",
        Some(other) => {
            assert!(
                !locref::derived::UNESTABLISHED_SUPPORT.contains(&other),
                "{other}"
            );
            "established"
        }
    }
}

/// The SAF-T files of the shipped reporting table: country, the phases it is the file of (empty:
/// every phase), and each ERP column's answer with that cell's own grade (its row of
/// `tables/reporting_support.csv`; `unverified` where it has none).
struct SaftFile {
    country: String,
    phases: Vec<String>,
    support: BTreeMap<String, (String, String)>,
}

fn saft_files(root: &Path) -> Vec<SaftFile> {
    let mut grades: BTreeMap<(String, String, String), String> = BTreeMap::new();
    let mut evidence =
        csv::Reader::from_path(root.join("sources/tables/reporting_support.csv")).unwrap();
    for r in evidence.deserialize::<BTreeMap<String, String>>() {
        let r = r.unwrap();
        if r["topic"] == "saf-t" {
            grades.insert(
                (
                    r["country_code"].clone(),
                    r["report_en"].clone(),
                    r["erp"].clone(),
                ),
                r["verification"].clone(),
            );
        }
    }
    let mut reader = csv::Reader::from_path(root.join("sources/tables/reporting.csv")).unwrap();
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    let at = |name: &str| header.iter().position(|h| h == name).unwrap();
    let erps = &header[at("verification") + 1..at("notes")];
    reader
        .records()
        .map(Result::unwrap)
        .filter(|r| &r[at("topic")] == "saf-t")
        .map(|r| SaftFile {
            country: r[at("country_code")].to_string(),
            phases: r[at("phases")]
                .split_whitespace()
                .map(String::from)
                .collect(),
            support: erps
                .iter()
                .map(|e| {
                    let key = (
                        r[at("country_code")].to_string(),
                        r[at("report_en")].to_string(),
                        e.clone(),
                    );
                    let grade = grades
                        .get(&key)
                        .cloned()
                        .unwrap_or_else(|| "unverified".into());
                    (e.clone(), (r[at(e)].to_string(), grade))
                })
                .collect(),
        })
        .collect()
}

/// The readiness board lists exactly the calendar's phases that begin within 24 months of the build's day
/// or came into force in the 12 months before it, in calendar order. Each row reads the table of its own
/// obligation, walked here cell by cell: an e-invoicing phase every ERP's matrix cell, a SAF-T phase every
/// ERP's column of each SAF-T file of that phase, any other obligation no ERP at all (the row says no
/// table records it). The summary counts what it says and adds up; each ERP page's "Upcoming
/// obligations" lists the same phases with the same answers; the header and the home page link the board.
#[test]
fn the_readiness_board_shows_for_each_phase_the_support_for_its_own_obligation() {
    let dir = copy_project();
    let files = build(dir.path());
    let json = |rel: &str| -> serde_json::Value { serde_json::from_slice(&files[rel]).unwrap() };
    let today: jiff::civil::Date = FIXED_TIME[..10].parse().unwrap();
    let horizon = today.checked_add(jiff::Span::new().months(24)).unwrap();
    let since = today.checked_add(jiff::Span::new().months(-12)).unwrap();
    let calendar = json("api/v1/calendar.json");
    let expected: Vec<&serde_json::Value> = calendar["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            let (first, last) = date_span(e["date"].as_str().unwrap());
            last >= since && first <= horizon
        })
        .collect();
    assert!(
        expected.iter().any(|e| e["obligation"] == "saf-t")
            && expected
                .iter()
                .any(|e| e["obligation"] == "b2b-e-invoicing")
            && expected
                .iter()
                .any(|e| e["obligation"] == "real-time-reporting"),
        "the shipped calendar has phases of each kind in the window"
    );
    // Each ERP's support and grade in each country, from the matrix's data file (no cell: unknown).
    let matrix = json("data/matrix.json");
    let cells: BTreeMap<(&str, &str), (&str, &str)> = matrix
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let grade = match r["status"].as_str().unwrap() {
                "verified" => "verified",
                _ => "unverified",
            };
            (
                (
                    r["country_code"].as_str().unwrap(),
                    r["erp"].as_str().unwrap(),
                ),
                (r["support_type"].as_str().unwrap(), grade),
            )
        })
        .collect();
    let files_of = saft_files(dir.path());
    let erps: Vec<String> = json("api/v1/erps.json")["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    let html = text(&files, "readiness/index.html");
    let row_re = regex::Regex::new(
        r#"(?s)<tr id="([^"]+)" data-country="([^"]+)" data-from="([^"]+)">(.*?)</tr>"#,
    )
    .unwrap();
    let answer_re = regex::Regex::new(r#"data-erp="([^"]+)" data-support="([^"]+)""#).unwrap();
    let rows: Vec<(&str, &str, &str, &str)> = row_re
        .captures_iter(html)
        .map(|c| {
            let g = |i| c.get(i).unwrap().as_str();
            (g(1), g(2), g(3), g(4))
        })
        .collect();
    assert_eq!(
        rows.iter().map(|r| r.0).collect::<Vec<_>>(),
        expected
            .iter()
            .map(|e| e["id"].as_str().unwrap())
            .collect::<Vec<_>>(),
        "the board's rows are the phases of the window, in calendar order"
    );
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut board: BTreeMap<&str, Vec<(&str, Vec<&str>)>> = BTreeMap::new();
    let mut unrecorded = 0;
    for ((id, country, from, cells_html), entry) in rows.iter().zip(&expected) {
        let obligation = entry["obligation"].as_str().unwrap();
        let phase = id
            .strip_prefix(&format!("{country}-{obligation}-"))
            .unwrap();
        // What the row must show: per ERP, the groups of its answers, from the row's own table.
        let want: BTreeMap<&str, Vec<&str>> = match obligation {
            "b2b-e-invoicing" | "b2g-e-invoicing" => {
                assert_eq!(*from, "matrix", "{id}");
                erps.iter()
                    .map(|e| {
                        let cell = cells.get(&(*country, e.as_str()));
                        let group =
                            readiness_group(cell.map(|c| c.0), cell.map_or("unverified", |c| c.1));
                        (e.as_str(), vec![group])
                    })
                    .collect()
            }
            "saf-t" => {
                let of_phase: Vec<&SaftFile> = files_of
                    .iter()
                    .filter(|f| f.country == *country)
                    .filter(|f| f.phases.is_empty() || f.phases.iter().any(|p| p == phase))
                    .collect();
                if of_phase.is_empty() {
                    assert_eq!(*from, "none", "{id}: no SAF-T file of this phase");
                    BTreeMap::new()
                } else {
                    assert_eq!(*from, "saf-t", "{id}");
                    erps.iter()
                        .map(|e| {
                            let groups = of_phase
                                .iter()
                                .map(|f| {
                                    let cell = f.support.get(e);
                                    readiness_group(
                                        cell.map(|c| c.0.as_str()),
                                        cell.map_or("unverified", |c| c.1.as_str()),
                                    )
                                })
                                .collect();
                            (e.as_str(), groups)
                        })
                        .collect()
                }
            }
            _ => {
                assert_eq!(
                    *from, "none",
                    "{id}: no table records ERP support for {obligation}"
                );
                BTreeMap::new()
            }
        };
        let mut shown: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for c in answer_re.captures_iter(cells_html) {
            let (erp, group) = (c.get(1).unwrap().as_str(), c.get(2).unwrap().as_str());
            shown.entry(erp).or_default().push(group);
            *counts.entry(group).or_default() += 1;
        }
        // The board groups the answers by column, so compare each ERP's groups as a sorted list.
        let sorted = |m: &BTreeMap<&str, Vec<&str>>| -> BTreeMap<String, Vec<String>> {
            m.iter()
                .map(|(k, v)| {
                    let mut v: Vec<String> = v.iter().map(|s| s.to_string()).collect();
                    v.sort();
                    (k.to_string(), v)
                })
                .collect()
        };
        assert_eq!(
            sorted(&shown),
            sorted(&want),
            "{id}: every ERP's answer from its own table"
        );
        if want.is_empty() {
            unrecorded += 1;
            assert!(cells_html.contains("class=\"group not-recorded\""), "{id}");
        }
        for (erp, groups) in want {
            board.entry(erp).or_default().push((id, groups));
        }
        assert!(
            cells_html.contains(&format!("<a href=\"/{country}/#{id}\">")),
            "{id}: links the phase on its country page"
        );
    }
    // The summary counts what it says, and its counts add up to its total.
    let countries: std::collections::BTreeSet<&str> = rows.iter().map(|r| r.1).collect();
    let count = |key: &str| counts.get(key).copied().unwrap_or(0);
    let answers: usize = counts.values().sum();
    let summary = format!(
        "<strong>{}</strong> phases in {} countries; ERP support is recorded for {} of them and by no table for {unrecorded}. Of their {answers} phase–ERP answers: established {}, roadmap only {}, not supported {}, unknown {}.",
        rows.len(),
        countries.len(),
        rows.len() - unrecorded,
        count("established"),
        count("roadmap"),
        count("none"),
        count("unknown")
    );
    assert!(html.contains(&summary), "{summary}");
    // The twin has the same rows, each linking its country's twin.
    let md = text(&files, "readiness/index.md");
    for entry in &expected {
        let (date, country) = (
            entry["date"].as_str().unwrap(),
            entry["country"].as_str().unwrap(),
        );
        assert!(
            md.lines().any(|l| l.contains(&format!(" {date}"))
                && l.contains(&format!("](/{country}/index.md) |"))),
            "{}: a row of the twin",
            entry["id"]
        );
    }
    // Each ERP page lists the same phases with the same answers; the board and the pages link each other.
    let upcoming_re =
        regex::Regex::new(r#"(?s)<tr id="([^"]+)" data-from="[^"]+">(.*?)</tr>"#).unwrap();
    let group_re = regex::Regex::new(r#"data-support="([^"]+)""#).unwrap();
    for erp in &erps {
        let page = text(&files, &format!("erp/{erp}/index.html"));
        let section = &page[page.find("<section id=\"upcoming\">").expect(erp)..];
        let section = &section[..section.find("</section>").unwrap()];
        let listed: Vec<(&str, Vec<&str>)> = upcoming_re
            .captures_iter(section)
            .filter_map(|c| {
                let groups: Vec<&str> = group_re
                    .captures_iter(c.get(2).unwrap().as_str())
                    .map(|g| g.get(1).unwrap().as_str())
                    .collect();
                (!groups.is_empty()).then(|| (c.get(1).unwrap().as_str(), groups))
            })
            .collect();
        let mut on_board: Vec<(&str, Vec<&str>)> = board[erp.as_str()].clone();
        for (_, groups) in &mut on_board {
            groups.sort_unstable();
        }
        let mut listed_sorted = listed.clone();
        for (_, groups) in &mut listed_sorted {
            groups.sort_unstable();
        }
        assert_eq!(listed_sorted, on_board, "{erp}");
        assert!(section.contains("<a href=\"/readiness/\">"), "{erp}");
        let twin = text(&files, &format!("erp/{erp}/index.md"));
        assert!(twin.contains("## Upcoming obligations"), "{erp}");
    }
    for page in [
        "erp/index.html",
        "calendar/index.html",
        "index.html",
        "e-invoicing/index.html",
    ] {
        assert!(
            text(&files, page).contains("<a href=\"/readiness/\">"),
            "{page}"
        );
    }
}

/// The board says "in force since" only of a phase its source records as in force. A phase that began
/// before the build's day but is recorded as enacted (its source read before that day) "applies since"
/// its date, as the country page says it ("Enacted; applies since"); a phase after the build's day
/// "starts". One started in-force phase of the window is turned to enacted here, so each wording is shown.
#[test]
fn the_readiness_board_says_in_force_only_of_a_phase_recorded_in_force() {
    let dir = copy_project();
    let today: jiff::civil::Date = FIXED_TIME[..10].parse().unwrap();
    let since = today.checked_add(jiff::Span::new().months(-12)).unwrap();
    // A phase in force, of a day in the board's past year: it becomes enacted.
    let obligations = crate::common::read(dir.path(), "sources/tables/obligations.csv");
    let line = obligations
        .lines()
        .find(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            cells.len() > 4
                && cells[3] == "in-force"
                && cells[4].len() == 10
                && cells[4]
                    .parse::<jiff::civil::Date>()
                    .is_ok_and(|d| d >= since && d <= today)
        })
        .expect("a phase in force that began in the board's past year");
    let cells: Vec<&str> = line.split(',').collect();
    let (id, date) = (format!("{}-{}-{}", cells[0], cells[1], cells[2]), cells[4]);
    let prefix = format!("{},{},{},in-force,", cells[0], cells[1], cells[2]);
    let enacted = line.replacen(&prefix, &prefix.replace("in-force", "enacted"), 1);
    replace_line(
        dir.path(),
        "sources/tables/obligations.csv",
        &prefix,
        &enacted,
    );
    let files = build(dir.path());
    let calendar: serde_json::Value =
        serde_json::from_slice(&files["api/v1/calendar.json"]).unwrap();
    let entries: BTreeMap<&str, &serde_json::Value> = calendar["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["id"].as_str().unwrap(), e))
        .collect();
    let html = text(&files, "readiness/index.html");
    let row_re = regex::Regex::new(
        r#"<tr id="([^"]+)"[^>]*><td class="date" data-label="Date">([a-z ]+) ([0-9-]+)"#,
    )
    .unwrap();
    let mut words: BTreeMap<String, usize> = BTreeMap::new();
    for c in row_re.captures_iter(html) {
        let (row, said, day) = (&c[1], &c[2], &c[3]);
        let entry = entries[row];
        assert_eq!(day, entry["date"].as_str().unwrap(), "{row}");
        let want = match (date_span(day).0 <= today, entry["status"].as_str().unwrap()) {
            (false, _) => "starts",
            (true, "in-force") => "in force since",
            (true, _) => "applies since",
        };
        assert_eq!(said, want, "{row}: recorded {}", entry["status"]);
        *words.entry(said.to_string()).or_default() += 1;
    }
    assert_eq!(
        words.keys().map(String::as_str).collect::<Vec<_>>(),
        ["applies since", "in force since", "starts"],
        "each wording is on the board: {words:?}"
    );
    let edited = format!("<tr id=\"{id}\"");
    let at = html
        .find(&edited)
        .expect("the edited phase is on the board");
    let row = &html[at..at + html[at..].find("</tr>").unwrap()];
    assert!(row.contains(&format!("applies since {date}")), "{row}");
    assert!(
        row.contains("<span class=\"status\">(enacted)</span>"),
        "{row}"
    );
    let country = text(&files, &format!("{}/index.html", cells[0]));
    assert!(
        country.contains(&format!("Enacted; applies since {date}")),
        "the country page says it the same way"
    );
}

/// Every iCalendar file escapes its TEXT values and folds its lines at 75 octets, through the real
/// binary: a country name with a comma, a semicolon and a backslash stays one name (no second category,
/// no new property), and a long title of two- and three-byte characters is folded between characters,
/// no line longer than 75 octets (RFC 5545, 3.1), read back whole by an independent parser.
#[test]
fn calendars_escape_their_text_and_fold_lines_at_75_octets() {
    let dir = copy_project();
    let root = dir.path();
    let name = r"Germany, Federal Republic; DE \ BRD";
    replace_once(
        root,
        "sources/registers/countries.csv",
        "de,Germany,Europe,yes",
        &format!("de,\"{name}\",Europe,yes"),
    );
    let title = format!("Localization Reference Data Service {}", "é€".repeat(40));
    replace_once(
        root,
        "rules/site.toml",
        "title = \"Localization Reference Data Service\"",
        &format!("title = \"{title}\""),
    );
    let run = crate::common::locref(root, &["build", "--out", "public"], "1767225600");
    assert!(run.status.success(), "{}", crate::common::text(&run.stderr));
    let files = snapshot(&root.join("public"));
    let calendars: Vec<&String> = files.keys().filter(|p| p.ends_with(".ics")).collect();
    assert!(calendars.len() > 60, "{calendars:?}");
    for path in calendars {
        let ics = text(&files, path);
        assert!(ics.ends_with("END:VCALENDAR\r\n"), "{path}");
        for line in ics.split("\r\n") {
            assert!(
                line.len() <= 75,
                "{path}: a line of {} octets: {line:?}",
                line.len()
            );
            assert!(!line.contains('\n') && !line.contains('\r'), "{path}");
        }
        let mut parser = ical::IcalParser::new(ics.as_bytes());
        let parsed = parser.next().expect("a calendar").expect("valid iCalendar");
        assert!(parser.next().is_none(), "{path}: one calendar");
        let count = ics.matches("BEGIN:VEVENT").count();
        assert_eq!(parsed.events.len(), count, "{path}");
    }
    let de = text(&files, "de/calendar.ics").replace("\r\n ", "");
    let escaped = r"Germany\, Federal Republic\; DE \\ BRD";
    assert!(
        de.contains(&format!(
            "\r\nNAME:{title}: {escaped}: obligation dates\r\n"
        )),
        "{de}"
    );
    assert!(de.contains(&format!(
        "\r\nX-WR-CALNAME:{title}: {escaped}: obligation dates\r\n"
    )));
    let summaries: Vec<&str> = de.lines().filter(|l| l.starts_with("SUMMARY:")).collect();
    assert!(summaries.len() > 2, "{de}");
    for summary in summaries {
        assert!(
            summary.starts_with(&format!("SUMMARY:{escaped}: ")),
            "{summary}"
        );
    }
}

/// `html` without the text of its `<q>` elements (the sentences quoted from sources, verbatim).
fn without_quotes(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(start) = rest.find("<q>") {
        out.push_str(&rest[..start]);
        rest = rest[start..]
            .find("</q>")
            .map_or("", |end| &rest[start + end + 4..]);
    }
    out.push_str(rest);
    out
}

/// A heading's words: tags, Markdown links, escapes and emphasis left out, entities read, spaces
/// collapsed.
fn heading_words(text: &str) -> String {
    let tags = regex::Regex::new(r"<[^>]+>").unwrap();
    let links = regex::Regex::new(r"\[([^\]]*)\]\([^)]*\)").unwrap();
    let text = tags.replace_all(text, "");
    let text = links.replace_all(&text, "$1");
    let text = text
        .replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace(['\\', '*', '`'], "");
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every page says where it lives and where its twin is: `<link rel="canonical">` with its absolute
/// address (one address for a page also reachable as `index.html`, as its twin and, for `/compare/`,
/// with any `?c=`), and `<link rel="alternate" type="text/markdown">` to its twin; and the twin carries
/// every heading of its page, so a reader of the twin (or of llms-full.txt) misses no section.
#[test]
fn every_page_names_its_canonical_address_and_its_twin_which_has_every_heading() {
    let dir = copy_project();
    let files = build(dir.path());
    let site = crate::common::read(dir.path(), "rules/site.toml");
    let base = site
        .lines()
        .find_map(|l| l.strip_prefix("base_url = \""))
        .and_then(|l| l.strip_suffix('"'))
        .unwrap();
    let html_headings = regex::Regex::new(r"(?s)<h[1-6][^>]*>(.*?)</h[1-6]>").unwrap();
    let mut pages = 0;
    let mut missing = Vec::new();
    for path in files.keys().filter(|k| k.ends_with("index.html")) {
        let page = text(&files, path);
        let folder = path.strip_suffix("index.html").unwrap();
        let head = &page[..page.find("</head>").unwrap()];
        assert_eq!(
            attributes(head, "<link rel=\"canonical\"", "href"),
            [format!("{base}/{folder}")],
            "{path}"
        );
        assert_eq!(
            attributes(
                head,
                "<link rel=\"alternate\" type=\"text/markdown\"",
                "href"
            ),
            [format!("/{folder}index.md")],
            "{path}"
        );
        let twin = text(&files, &format!("{folder}index.md"));
        let twin_headings: BTreeSet<String> = twin
            .lines()
            .filter(|l| l.starts_with('#'))
            .filter_map(|l| l.trim_start_matches('#').strip_prefix(' '))
            .map(heading_words)
            .collect();
        for heading in html_headings.captures_iter(page) {
            let words = heading_words(&heading[1]);
            if !twin_headings.contains(&words) {
                missing.push(format!("{path}: {words:?}"));
            }
        }
        pages += 1;
    }
    assert_eq!(
        pages,
        crate::common::shipped_pages() - 1,
        "every page but 404.html"
    );
    assert!(
        missing.is_empty(),
        "headings missing from the twins:\n{}",
        missing.join("\n")
    );
    // The 404 page is at no address of its own and has no twin: it names neither.
    let not_found = text(&files, "404.html");
    assert!(!not_found.contains("rel=\"canonical\"") && !not_found.contains("text/markdown"));
}

/// The HTML escape of the page templates, for finding a value of the sources in a page.
fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// A reporting ERP cell is shown with its own grade, source and quote wherever it is shown: the topic
/// page (the quote one click away, under the cell), the country page and both twins, and the API's
/// reporting fact (`details`). A cell without a quote is `unverified` there, and the published
/// `erp_sources` of the row is the union of its cells' sources.
#[test]
fn a_reporting_cell_shows_its_own_grade_source_and_quote_on_the_pages_and_in_the_api() {
    let dir = copy_project();
    let root = dir.path();
    // A curator reads Odoo's Australian page and quotes it (the words here are the test's own).
    let quote = "Odoo's Australian localization prepares the BAS report";
    let url = "https://github.com/odoo/documentation/blob/048611b20a45a03555cd66176e59da378bef71f7/content/applications/finance/fiscal_localizations/australia.rst";
    let table = "sources/tables/reporting_support.csv";
    let row = "vat-reporting,au,Business Activity Statement (GST return),";
    replace_line(
        root,
        table,
        &format!("{row}odoo,"),
        &format!("{row}odoo,{url},search-extract,secondary,2026-11-23,\"{quote}\","),
    );
    // NetSuite's cell of the same row keeps its own source but loses its quote: unverified.
    let netsuite =
        "https://docs.oracle.com/en/cloud/saas/netsuite/ns-online-help/section_N1837720.html";
    replace_line(
        root,
        table,
        &format!("{row}oracle-netsuite,"),
        &format!("{row}oracle-netsuite,{netsuite},search-extract,unverified,2026-11-23,,"),
    );
    let files = build(root);
    let html_quote = escape_html(quote);

    // The API: the row's fact says each answered cell's grade, source, check date and quote.
    let facts: serde_json::Value = serde_json::from_slice(&files["api/v1/facts.json"]).unwrap();
    let fact = facts["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "au-vat-reporting-1")
        .expect("Australia's BAS");
    let details = &fact["details"];
    assert_eq!(details["erp_support.odoo"], "native");
    assert_eq!(details["erp_verification.odoo"], "secondary");
    assert_eq!(details["erp_quote.odoo"], quote);
    assert_eq!(details["erp_source_urls.odoo"], url);
    assert_eq!(details["erp_last_checked.odoo"], "2026-11-23");
    // NetSuite's cell of the same row has its own source and no quote: unverified.
    assert_eq!(details["erp_verification.oracle-netsuite"], "unverified");
    assert!(details.get("erp_quote.oracle-netsuite").is_none());
    assert_eq!(details["erp_source_urls.oracle-netsuite"], netsuite);
    // An unknown cell says only that it is unknown.
    assert_eq!(details["erp_support.sage-intacct"], "unknown");
    assert!(details.get("erp_verification.sage-intacct").is_none());
    // The data file's `erp_sources` is the union of the cells' sources, each once.
    let rows: serde_json::Value = serde_json::from_slice(&files["data/reporting.json"]).unwrap();
    let row = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["country_code"] == "au" && r["topic"] == "vat-reporting")
        .unwrap();
    let union = format!(
        "{} {url}",
        details["erp_source_urls.oracle-netsuite"].as_str().unwrap()
    );
    assert_eq!(row["erp_sources"], union.as_str());
    assert_eq!(details["erp_sources"], union.as_str());

    // The topic page: the cell, its grade, its source and, one click away, its sentence.
    let page = text(&files, "vat-reporting/index.html");
    let au = &page[page.find("<tr id=\"vat-reporting-au-1\">").unwrap()..];
    let au = &au[..au.find("</tr>").unwrap()];
    assert!(au.contains(&format!(
        "<td class=\"cell s-native\">native<span class=\"cell-grade\"><span class=\"verified\">secondary</span></span><span class=\"cell-src\"><a href=\"{url}\" aria-label=\"source of Odoo: github.com/odoo\">source</a></span><details class=\"said-more\"><summary>Quote</summary><span class=\"said\">The source says: <q>{html_quote}</q> (<a href=\"{url}\">github.com/odoo</a>)</span></details></td>"
    )), "{au}");
    assert!(
        au.contains(
            "native<span class=\"cell-grade\"><span class=\"unverified\">unverified</span>"
        ),
        "{au}"
    );
    // The country page and both twins.
    let country = text(&files, "au/index.html");
    assert!(country.contains(&format!(
        "<a href=\"/erp/odoo/\">Odoo</a>: native <span class=\"grade\"><span class=\"verified\">verified (secondary)</span>, <span class=\"evidence\">search excerpt or stored copy read</span>, <span class=\"date\">checked 2026-11-23</span></span>; <a href=\"{url}\">github.com/odoo</a><span class=\"said\">The source says: <q>{html_quote}</q>"
    )), "the country page shows the cell with its grade and quote");
    for twin in ["au/index.md", "vat-reporting/index.md"] {
        let md = text(&files, twin);
        assert!(
            md.contains(&format!(
                "native (verified (secondary), checked 2026-11-23; [github.com/odoo]({url})) The source says: “Odoo's Australian localization prepares the BAS report”"
            )),
            "{twin}"
        );
    }
}

/// Every quoted answer of the matrix is shown with its quote where the answer is shown: under the
/// e-invoicing matrix (a list like footnotes, each linking its cell) and in its twin, on the ERP's page
/// and twin, in the comparison page's columns (`/compare/{code}.json`), and on the readiness board and
/// its twin for the phases that read the matrix.
#[test]
fn quotes_are_shown_where_the_answers_are_shown() {
    let dir = copy_project();
    let files = build(dir.path());
    let json = |rel: &str| -> serde_json::Value { serde_json::from_slice(&files[rel]).unwrap() };
    let facts = json("api/v1/facts.json");
    let quoted: Vec<(&str, &str, &str)> = facts["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["topic"] == "e_invoicing_erp_support" && f["value"] != "unknown/unverified")
        .filter_map(|f| {
            Some((
                f["country"].as_str()?,
                f["erp"].as_str()?,
                f["details"].get("quote")?.as_str()?,
            ))
        })
        .collect();
    assert!(
        quoted.len() > 20,
        "the shipped matrix has quoted answers to hold"
    );
    let matrix = text(&files, "e-invoicing/index.html");
    let matrix_md = text(&files, "e-invoicing/index.md");
    assert_eq!(matrix.matches("<li id=\"said-").count(), quoted.len());
    assert_eq!(
        matrix_md
            .lines()
            .filter(|l| l.starts_with("- [") && l.contains(" The source says: “"))
            .count(),
        quoted.len()
    );
    assert!(matrix.contains(&format!(
        "<details class=\"quotes\"><summary>The {} quotes, by country</summary>",
        quoted.len()
    )));
    for (country, erp, quote) in &quoted {
        let quote = escape_html(quote);
        let item = &matrix[matrix
            .find(&format!(
                "<li id=\"said-{country}-{erp}\"><a href=\"#{country}-{erp}\">"
            ))
            .unwrap_or_else(|| panic!("{country} {erp}: listed under the matrix"))..];
        assert!(
            item[..item.find("</li>").unwrap()].contains(&format!("<q>{quote}</q>")),
            "{country} {erp}"
        );
        let erp_page = text(&files, &format!("erp/{erp}/index.html"));
        let row = &erp_page[erp_page.find(&format!("<tr id=\"{country}\">")).unwrap()..];
        assert!(
            row[..row.find("</tr>").unwrap()].contains(&format!("The source says: <q>{quote}</q>")),
            "{country} {erp}: on the ERP page"
        );
        let column = json(&format!("compare/{country}.json"));
        let cell = column["erps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["key"] == *erp)
            .unwrap();
        assert_eq!(
            cell["said"]["quote"].as_str(),
            Some(quoted_text(&quoted, country, erp)),
            "{country} {erp}: in the comparison's column"
        );
    }
    for erp in ERP_IDS {
        let twin = text(&files, &format!("erp/{erp}/index.md"));
        let page_quotes = quoted.iter().filter(|q| q.1 == erp).count();
        assert!(
            twin.matches(" The source says: “").count() >= page_quotes,
            "{erp}: the twin quotes each answer"
        );
    }
    // The readiness board: every quoted answer it shows from the matrix carries its quote, one click
    // away, on the board and in its twin.
    let board = text(&files, "readiness/index.html");
    let row_re = regex::Regex::new(
        r#"(?s)<tr id="([^"]+)" data-country="([^"]+)" data-from="matrix">(.*?)</tr>"#,
    )
    .unwrap();
    let mut shown = 0;
    for c in row_re.captures_iter(board) {
        let (country, cells) = (c.get(2).unwrap().as_str(), c.get(3).unwrap().as_str());
        for (_, erp, quote) in quoted.iter().filter(|q| q.0 == country) {
            let li = &cells[cells
                .find(&format!("<li data-erp=\"{erp}\""))
                .unwrap_or_else(|| panic!("{country} {erp}: on the board"))..];
            assert!(
                li[..li.find("</li>").unwrap()].contains(&format!(
                    "<details class=\"said-more\"><summary>Quote</summary><span class=\"said\">The source says: <q>{}</q>",
                    escape_html(quote)
                )),
                "{country} {erp}: the board shows the quote"
            );
            shown += 1;
        }
    }
    assert!(shown > 0, "the board shows quoted matrix answers");
    assert!(
        text(&files, "readiness/index.md")
            .matches(" The source says: “")
            .count()
            >= shown,
        "the board's twin quotes them too"
    );
}

fn quoted_text<'a>(quoted: &[(&str, &str, &'a str)], country: &str, erp: &str) -> &'a str {
    quoted
        .iter()
        .find(|q| q.0 == country && q.1 == erp)
        .map(|q| q.2)
        .unwrap()
}

/// A listing whose only sources are its own subject's pages says "self-published" beside its grade (a
/// local ERP) or its kind of source (a partner), on the country page, the list page and their twins;
/// one with an independent source does not.
#[test]
fn a_self_published_listing_says_so() {
    let dir = copy_project();
    let files = build(dir.path());
    // Abacus is sourced by abacus.ch only; bexio by a consultancy's page.
    let local = text(&files, "local-erps/index.html");
    let row = |page: &str, id: &str| -> String {
        let at = page
            .find(&format!("<tr id=\"{id}\">"))
            .unwrap_or_else(|| panic!("{id}"));
        page[at..at + page[at..].find("</tr>").unwrap()].to_string()
    };
    assert!(row(local, "ch-abacus").contains(
        "<td class=\"verified\">verified (secondary)<span class=\"self-published\">, self-published</span></td>"
    ));
    assert!(!row(local, "ch-bexio").contains("self-published"));
    let ch = text(&files, "ch/index.html");
    let abacus = &ch[ch.find(">Abacus</a></th>").unwrap()..];
    assert!(abacus[..abacus.find("</tr>").unwrap()].contains(", self-published</span>"));
    for twin in ["local-erps/index.md", "ch/index.md"] {
        let md = text(&files, twin);
        let line = md.lines().find(|l| l.contains("| Abacus |")).unwrap();
        assert!(
            line.contains("verified (secondary), self-published |"),
            "{twin}: {line}"
        );
        let line = md.lines().find(|l| l.contains("| bexio |")).unwrap();
        assert!(!line.contains("self-published"), "{twin}: {line}");
    }
    // A partner writing about itself on its own blog; one that Microsoft's page names is not.
    let partners = text(&files, "partners/index.html");
    assert!(
        row(partners, "sa-sap-business-one-business-line").contains(
            "<td>partner blog<span class=\"self-published\">, self-published</span></td>"
        )
    );
    assert!(
        !row(
            partners,
            "dk-microsoft-dynamics-365-business-central-continia-software"
        )
        .contains("self-published")
    );
    let sa = text(&files, "sa/index.md");
    let line = sa
        .lines()
        .find(|l| l.contains("| Business Line |"))
        .unwrap();
    assert!(line.ends_with(", self-published |"), "{line}");
    assert!(
        text(&files, "partners/index.md").lines().any(
            |l| l.contains("| Business Line |") && l.contains("partner blog, self-published |")
        )
    );
}

/// A toggle's "Why" cell tells its obligation's whole timeline: the phase that decides it, then every
/// other phase of the same obligation, each a link to its row (counted from tables/obligations.csv).
#[test]
fn the_why_cell_of_a_toggle_names_every_phase_of_its_obligation() {
    let dir = copy_project();
    let files = build(dir.path());
    let table = crate::common::read(dir.path(), "sources/tables/obligations.csv");
    let mut phases: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for record in csv::Reader::from_reader(table.as_bytes()).records() {
        let r = record.unwrap();
        let id = format!("{}-{}-{}", &r[0], &r[1], &r[2]);
        phases
            .entry(format!("{}-{}", &r[0], &r[1]))
            .or_default()
            .push(id);
    }
    let mut checked = 0;
    for code in codes(dir.path()) {
        let html = text(&files, &format!("{code}/index.html"));
        for row in html.split("<tr id=\"toggle-").skip(1) {
            let row = &row[..row.find("</tr>").unwrap()];
            let why = &row[row.find("<td class=\"text\">").unwrap()..];
            let why = &why[..why.find("</td>").unwrap()];
            let Some(start) = why.find("<a href=\"#") else {
                continue;
            };
            let decider = &why[start + "<a href=\"#".len()..];
            let decider = &decider[..decider.find('"').unwrap()];
            let obligation = phases
                .keys()
                .find(|o| phases[*o].iter().any(|p| p == decider))
                .unwrap_or_else(|| panic!("{code}: {decider} is no phase"));
            let linked: BTreeSet<&str> = why
                .split("<a href=\"#")
                .skip(1)
                .map(|a| &a[..a.find('"').unwrap()])
                .collect();
            let all: BTreeSet<&str> = phases[obligation].iter().map(String::as_str).collect();
            assert_eq!(linked, all, "{code}: {why}");
            checked += 1;
        }
    }
    assert!(checked > 0);
}

/// The data files' page (`/data/`): it lists every file the build writes under `/data/` (each a link, in
/// the page and its twin), states the licence of `rules/site.toml` with its attribution, and its loading
/// examples read files the build publishes, from the site's base URL; its grades section is the one the
/// grade legends link.
#[test]
fn the_data_page_lists_every_data_file_its_licence_and_examples_that_name_published_files() {
    let dir = copy_project();
    let root = dir.path();
    let files = build(root);
    let html = text(&files, "data/index.html");
    let md = text(&files, "data/index.md");
    let published: Vec<&str> = files
        .keys()
        .filter_map(|k| k.strip_prefix("data/"))
        .filter(|name| !name.starts_with("index."))
        .collect();
    assert!(
        published.len() > 3,
        "the build writes data files: {published:?}"
    );
    for name in &published {
        assert!(
            html.contains(&format!("href=\"/data/{name}\"")),
            "/data/ links {name}"
        );
        assert!(
            md.contains(&format!("](/data/{name})")),
            "/data/index.md links {name}"
        );
    }

    let site: toml::Value = toml::from_str(&crate::common::read(root, "rules/site.toml")).unwrap();
    let licence = &site["data_licence"];
    for key in ["name", "url", "attribution"] {
        let value = licence[key].as_str().unwrap();
        assert!(html.contains(value), "/data/ states the licence's {key}");
        assert!(
            md.contains(value),
            "/data/index.md states the licence's {key}"
        );
    }

    // Every file an example reads is published, and read from the base URL.
    let base = site["base_url"].as_str().unwrap().trim_end_matches('/');
    let mut read = BTreeSet::new();
    for (at, _) in html.match_indices(".csv") {
        let before = &html[..at];
        let start = before
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap()
            + 1;
        let stem = &before[start..];
        if html[..start].ends_with(&format!("{base}/data/")) || html[..start].ends_with("base + \"")
        {
            read.insert(format!("{stem}.csv"));
        }
    }
    assert!(
        html.contains(&format!("base = \"{base}/data/\"")),
        "the pandas example reads from the base URL"
    );
    assert!(read.len() >= 2, "the examples read files: {read:?}");
    for name in &read {
        assert!(
            published.contains(&name.as_str()),
            "an example reads {name}, which the build does not publish"
        );
    }

    assert!(html.contains("<section id=\"grades\">"));
    assert!(md.contains("## Grades"));
}

/// Every page that shows a grade (an element classed `verified` or `unverified`) says in one line what
/// the grades are, and links the data page's section that explains them; that section exists.
#[test]
fn every_page_that_shows_a_grade_has_the_grade_legend() {
    let dir = copy_project();
    let files = build(dir.path());
    let grades = regex::Regex::new(r#"class="[^"]*\b(un)?verified\b"#).unwrap();
    let mut showing = 0;
    let mut missing = Vec::new();
    for (path, bytes) in &files {
        if !path.ends_with(".html") || path == "data/index.html" {
            continue;
        }
        let html = std::str::from_utf8(bytes).unwrap();
        let main = &html[html.find("<main").unwrap_or(0)..];
        let without_legend = match main.find("<p class=\"grade-legend\">") {
            Some(at) => {
                let end = at + main[at..].find("</p>").unwrap();
                assert!(
                    main[at..end].contains("href=\"/data/#grades\""),
                    "{path}: the legend links /data/#grades"
                );
                format!("{}{}", &main[..at], &main[end..])
            }
            None => main.to_string(),
        };
        if grades.is_match(&without_legend) {
            showing += 1;
            if without_legend.len() == main.len() {
                missing.push(path.clone());
            }
        }
    }
    assert!(showing > 10, "pages that show grades: {showing}");
    assert!(
        missing.is_empty(),
        "pages that show grades without their legend:\n{}",
        missing.join("\n")
    );
    assert!(text(&files, "data/index.html").contains("<section id=\"grades\">"));
}

/// The Markdown twin of every page that shows the grade legend says it too, in the same words (its link
/// to the data page's twin).
#[test]
fn the_twin_of_every_page_with_the_grade_legend_has_it_in_the_same_words() {
    let dir = copy_project();
    let files = build(dir.path());
    let tags = regex::Regex::new(r"<[^>]+>").unwrap();
    let mut checked = 0;
    for (path, bytes) in &files {
        let Some(stem) = path.strip_suffix("index.html") else {
            continue;
        };
        let html = std::str::from_utf8(bytes).unwrap();
        let Some(at) = html.find("<p class=\"grade-legend\">") else {
            continue;
        };
        let legend = &html[at..at + html[at..].find("</p>").unwrap()];
        let words = tags.replace_all(legend, "").into_owned();
        let link = "What the grades mean";
        assert!(words.ends_with(link), "{path}: {words}");
        let expected = format!(
            "{}[{link}](/data/index.md)",
            words.strip_suffix(link).unwrap()
        );
        let twin = text(&files, &format!("{stem}index.md"));
        assert!(
            twin.lines().any(|l| l == expected),
            "{stem}index.md has no line {expected:?}"
        );
        checked += 1;
    }
    assert!(checked > 10, "pages with the legend: {checked}");
}

/// A cell that lists sources names each host once: a host's further pages follow it as numbers ("ec.europa.eu
/// (2, 3)"), each a link named by its host and number. Checked in every table cell of every page and twin
/// (in a cell of several answers, each answer's list);
/// the shipped data has cells with two pages of one host, so the grouping is seen.
#[test]
fn every_cell_names_each_source_host_once() {
    let dir = copy_project();
    let files = build(dir.path());
    // A source's name as the pages show it (`source_name`): a host, or github.com/<owner>; before the
    // grouping, a host's second page was "<host> (2)".
    let host =
        regex::Regex::new(r"^[a-z0-9-]+(\.[a-z0-9-]+)+(/[A-Za-z0-9_.-]+)?( \(\d+\))?$").unwrap();
    let number = regex::Regex::new(r" \(\d+\)$").unwrap();
    let html_link = regex::Regex::new(r"<a [^>]*>([^<]*)</a>").unwrap();
    let md_link = regex::Regex::new(r"\[([^\]]*)\]\(").unwrap();
    // The sentence an answer rests on names its source's host again after the quote: that is the quote's
    // attribution, not the cell's list of sources.
    let said = regex::Regex::new(r#"<span class="said">.*?</span>"#).unwrap();
    let mut grouped = 0;
    for (path, bytes) in &files {
        let (cells, link): (Vec<&str>, &regex::Regex) = if path.ends_with(".html") {
            let html = std::str::from_utf8(bytes).unwrap();
            (
                // A cell of several answers (each ERP's) lists each one's sources in its own item.
                html.split("<td")
                    .skip(1)
                    .map(|c| c.split("</td>").next().unwrap())
                    .flat_map(|c| c.split("<li"))
                    .collect(),
                &html_link,
            )
        } else if path.ends_with(".md") {
            let md = std::str::from_utf8(bytes).unwrap();
            (
                md.lines()
                    .filter(|l| l.starts_with('|'))
                    .flat_map(|l| l.split(" | "))
                    .flat_map(|c| c.split("; "))
                    .collect(),
                &md_link,
            )
        } else {
            continue;
        };
        for cell in cells {
            let cell = said.replace_all(cell, "");
            let cell = cell.as_ref();
            let hosts: Vec<String> = link
                .captures_iter(cell)
                .map(|c| c[1].to_string())
                .filter(|t| host.is_match(t))
                .map(|t| number.replace(&t, "").into_owned())
                .collect();
            let unique: BTreeSet<&String> = hosts.iter().collect();
            assert_eq!(
                unique.len(),
                hosts.len(),
                "{path}: a cell names a host twice: {cell}"
            );
            if cell.contains(", page 2\"") {
                grouped += 1;
            }
        }
    }
    assert!(grouped > 0, "no cell lists two pages of one host");
}

/// Without JavaScript the comparison page cannot read `?c=`: it says so where scripts do not run, and
/// links every country's row of its table (each row's id), so a reader without scripts reaches the
/// countries asked for in one step each.
#[test]
fn the_compare_page_says_what_works_without_scripts_and_links_every_row() {
    let dir = copy_project();
    let root = dir.path();
    let files = build(root);
    let html = text(&files, "compare/index.html");
    let start = html
        .find("<noscript>")
        .expect("the compare page has a note for readers without scripts");
    let note = &html[start..start + html[start..].find("</noscript>").unwrap()];
    assert!(note.contains("<code>?c=…</code>"), "{note}");
    let codes = codes(root);
    for code in &codes {
        assert!(
            note.contains(&format!("href=\"#{code}\"")),
            "the note links #{code}"
        );
        assert!(
            html.contains(&format!("<tr id=\"{code}\">")),
            "the table has the row #{code}"
        );
    }
}

/// The changes a release page lists are in the order of their countries' names, as the reader looks a
/// country up, not of their codes (the United Arab Emirates, `ae`, came right after Andorra).
#[test]
fn a_release_page_lists_its_changes_by_country_name() {
    let dir = copy_project();
    let files = build(dir.path());
    let mut checked = 0;
    for (path, bytes) in &files {
        if !(path.starts_with("changes/") && path.ends_with("/index.html")) {
            continue;
        }
        let html = std::str::from_utf8(bytes).unwrap();
        let Some(start) = html.find("<ul class=\"answers\">") else {
            continue;
        };
        let list = &html[start..start + html[start..].find("</ul>").unwrap()];
        let names: Vec<&str> = list
            .split("<li>")
            .skip(1)
            .filter_map(|item| item.split_once(": ").map(|(name, _)| name))
            .collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted, "{path}: changes by country name");
        if names.first() != names.last() {
            checked += 1;
        }
    }
    assert!(
        checked > 0,
        "a release page lists the changes of several countries"
    );
}
