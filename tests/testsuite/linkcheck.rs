//! The link check (`locref check`, `locref build`, watch and serve): every internal `href`/`src` and
//! `#anchor` of every HTML page resolves, and every page is valid HTML5. Real files through the real
//! binary, and the rebuild step of `locref watch` for what re-runs after an edit.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Output;

use crate::common::{FIXED_TIME, atomic_save, copy_project, read, replace_once, snapshot};
use locref::locref_site::SITE;
use locref::session::{Outcome, Session};

const EPOCH: &str = "1790000000";

fn locref(project: &Path, args: &[&str]) -> Output {
    crate::common::locref(project, args, EPOCH)
}

fn stdout(run: &Output) -> String {
    String::from_utf8_lossy(&run.stdout).into_owned()
}

fn stderr(run: &Output) -> String {
    String::from_utf8_lossy(&run.stderr).into_owned()
}

/// The diagnostic lines of a failed run (without the closing count line).
fn diagnostics(run: &Output) -> Vec<String> {
    stderr(run)
        .lines()
        .filter(|l| l.contains(": error: "))
        .map(str::to_string)
        .collect()
}

/// A copy of the shipped project built once into `site/`, with the built files.
fn built() -> (tempfile::TempDir, BTreeMap<String, Vec<u8>>) {
    let dir = copy_project();
    let run = locref(dir.path(), &["build", "--out", "site"]);
    assert!(run.status.success(), "{}", stderr(&run));
    let files = snapshot(&dir.path().join("site"));
    (dir, files)
}

fn page<'a>(files: &'a BTreeMap<String, Vec<u8>>, rel: &str) -> &'a str {
    std::str::from_utf8(&files[rel]).expect("utf-8")
}

/// `line:column` (1-based, columns in characters) of the first `needle` in `text`, plus `skip` bytes.
fn position(text: &str, needle: &str, skip: usize) -> String {
    let offset = text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} in the page"))
        + skip;
    position_at(text, offset)
}

/// `line:column` (1-based, columns in characters) of the byte `offset` of `text`.
fn position_at(text: &str, offset: usize) -> String {
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before[before.rfind('\n').map_or(0, |i| i + 1)..]
        .chars()
        .count()
        + 1;
    format!("{line}:{column}")
}

#[test]
fn the_shipped_project_passes_check_and_build() {
    let dir = copy_project();
    let check = locref(dir.path(), &["check"]);
    assert!(check.status.success(), "{}", stderr(&check));
    let out = stdout(&check);
    assert!(
        out.starts_with("ok: ")
            && out.contains("pages and twins checked")
            && out.contains("internal links resolve"),
        "{out}"
    );
    assert!(!dir.path().join("public").exists(), "check writes nothing");
    let build = locref(dir.path(), &["build", "--out", "public"]);
    assert!(build.status.success(), "{}", stderr(&build));
}

/// The issue's test: a link to an anchor that no element has fails `locref check`, located at the href
/// in the published page; `locref build` then leaves the last good output exactly as it was.
#[test]
fn a_broken_anchor_fails_check_and_build_leaves_the_output_untouched() {
    let (dir, good) = built();
    let root = dir.path();
    let manifest =
        std::fs::read(locref::outdir::manifest_path(&root.join("site"))).expect("manifest");
    let link = "<a href=\"/e-invoicing/\">E-invoicing matrix</a><span>";
    let at = position(page(&good, "index.html"), link, "<a href=\"".len());
    replace_once(
        root,
        "rules/templates/home.html",
        link,
        "<a href=\"/e-invoicing/#zz-nothing\">E-invoicing matrix</a><span>",
    );

    let expected = [format!(
        "/index.html:{at}: error: broken link \"/e-invoicing/#zz-nothing\": no element with id \"zz-nothing\" on /e-invoicing/index.html"
    )];
    let check = locref(root, &["check"]);
    assert_eq!(check.status.code(), Some(1), "{}", stderr(&check));
    assert_eq!(diagnostics(&check), expected);
    assert!(stderr(&check).contains("1 error(s); nothing was written"));

    let build = locref(root, &["build", "--out", "site"]);
    assert_eq!(build.status.code(), Some(1), "{}", stderr(&build));
    assert_eq!(diagnostics(&build), expected);
    assert_eq!(
        snapshot(&root.join("site")),
        good,
        "the output folder is untouched"
    );
    assert_eq!(
        std::fs::read(locref::outdir::manifest_path(&root.join("site"))).expect("manifest"),
        manifest
    );
}

#[test]
fn a_link_to_a_missing_page_is_reported_on_every_page_that_has_it() {
    let (dir, good) = built();
    let root = dir.path();
    let markdown = "<a href=\"/{{ country.code }}/index.md\">Markdown</a>";
    replace_once(
        root,
        "rules/templates/country.html",
        markdown,
        &format!("{markdown} · <a href=\"/{{{{ country.code }}}}/data.json\">data</a>"),
    );
    replace_once(
        root,
        "rules/templates/404.html",
        "<a href=\"/e-invoicing/\">e-invoicing matrix",
        "<a href=\"/e-invoicing\">e-invoicing matrix",
    );
    let check = locref(root, &["check"]);
    assert_eq!(check.status.code(), Some(1), "{}", stderr(&check));
    let found = diagnostics(&check);
    assert_eq!(found.len(), 61 + 1, "{found:#?}");
    // Where the new link's href is in France's page as the edited template renders it.
    let fr_page = page(&good, "fr/index.html").replacen(
        "<a href=\"/fr/index.md\">Markdown</a>",
        "<a href=\"/fr/index.md\">Markdown</a> · <a href=\"/fr/data.json\">data</a>",
        1,
    );
    let fr = position(&fr_page, "/fr/data.json", 0);
    assert!(
        found.contains(&format!(
            "/fr/index.html:{fr}: error: broken link \"/fr/data.json\": no output /fr/data.json on the site"
        )),
        "{found:#?}"
    );
    let slashless = position(
        page(&good, "404.html"),
        "<a href=\"/e-invoicing/\">e-invoicing matrix",
        "<a href=\"".len(),
    );
    assert!(
        found.contains(&format!(
            "/404.html:{slashless}: error: broken link \"/e-invoicing\": no output /e-invoicing; the page is /e-invoicing/index.html (link to /e-invoicing/)"
        )),
        "{found:#?}"
    );
}

/// The /changes/ page and twin are checked part by part (each country's rows of unreleased changes on
/// their own, then the page without them); what is wrong in a part or after the parts is reported where
/// it is in the whole page, as a parse of the page would place it.
#[test]
fn problems_in_the_parts_of_the_changes_page_are_located_in_the_whole_page() {
    let dir = copy_project();
    let root = dir.path();
    // Two countries with a change since the last release: two parts with rows.
    for (from, to) in [
        (
            "fr,VAT / GST,TVA. Standard rate 20%",
            "fr,VAT / GST,TVA (taxe). Standard rate 20%",
        ),
        (
            "de,VAT / GST,Umsatzsteuer.",
            "de,VAT / GST,Umsatzsteuer (USt).",
        ),
    ] {
        replace_once(root, "sources/tables/countries.csv", from, to);
    }
    // A link in every row and one after the table, as the page and twin render them; first to a page
    // that exists (the build passes and shows where they are), then to one that does not (same length).
    let row_html = "<li>{{ c.sentence | plain }}";
    let row_md = "- {{ c.sentence | plain | md }}";
    let after_html = "<section id=\"releases\">";
    let after_md = "## Releases\n";
    let edit = |target: &str| {
        let html_link = format!("<a class=\"zz\" href=\"{target}\">x</a>");
        let md_link = format!("[zz]({target})");
        let from_to = [
            (
                "rules/templates/macros.html",
                row_html,
                format!("{row_html}{html_link}"),
            ),
            (
                "rules/templates/changes.html",
                after_html,
                format!("{after_html}{html_link}"),
            ),
            (
                "rules/templates/macros.md",
                row_md,
                format!("{row_md} {md_link}"),
            ),
            (
                "rules/templates/changes.md",
                after_md,
                format!("{after_md}{md_link}\n"),
            ),
        ];
        for (rel, from, to) in from_to {
            let text = read(root, rel);
            let edited = text.replace(from, &to);
            assert_ne!(text, edited, "{rel}");
            std::fs::write(root.join(rel), edited).expect("write");
        }
    };
    let originals: Vec<(String, String)> = [
        "rules/templates/macros.html",
        "rules/templates/changes.html",
        "rules/templates/macros.md",
        "rules/templates/changes.md",
    ]
    .iter()
    .map(|rel| (rel.to_string(), read(root, rel)))
    .collect();
    edit("/api/");
    let run = locref(root, &["build", "--out", "site"]);
    assert!(run.status.success(), "{}", stderr(&run));
    let files = snapshot(&root.join("site"));
    let mut expected = Vec::new();
    for (rel, needle) in [
        ("changes/index.html", "<a class=\"zz\" href=\""),
        ("changes/index.md", "[zz]("),
    ] {
        let text = page(&files, rel);
        let mut from = 0;
        while let Some(at) = text[from..].find(needle) {
            let offset = from + at;
            expected.push(format!(
                "/{rel}:{}: error: broken link \"/zzz/\": no output /zzz/index.html on the site",
                position_at(text, offset + needle.len())
            ));
            from = offset + needle.len();
        }
    }
    // Two sentences (the two answer changes) and the link after them, on the page and on its twin.
    assert_eq!(expected.len(), 6, "{expected:#?}");
    for (rel, text) in &originals {
        std::fs::write(root.join(rel), text).expect("write");
    }
    edit("/zzz/");
    let check = locref(root, &["check"]);
    assert_eq!(check.status.code(), Some(1), "{}", stderr(&check));
    let found: Vec<String> = diagnostics(&check)
        .into_iter()
        .filter(|d| d.starts_with("/changes/index."))
        .collect();
    // In the order of the diagnostics: by file, then line and column as numbers.
    expected.sort_by_key(|d| {
        let mut parts = d.splitn(4, ':');
        let file = parts.next().unwrap().to_string();
        let line: u32 = parts.next().unwrap().parse().unwrap();
        let column: u32 = parts.next().unwrap().parse().unwrap();
        (file, line, column)
    });
    assert_eq!(found, expected);
}

/// A Markdown twin's links are checked too, located at the link's destination.
#[test]
fn a_broken_link_in_a_markdown_twin() {
    let (dir, good) = built();
    let root = dir.path();
    replace_once(
        root,
        "rules/templates/country.md",
        "[HTML](/{{ country.code }}/)",
        "[HTML](/{{ country.code }}/#vat)",
    );
    let check = locref(root, &["check"]);
    assert_eq!(check.status.code(), Some(1), "{}", stderr(&check));
    let found = diagnostics(&check);
    assert_eq!(found.len(), 61, "{found:#?}");
    let at = position(page(&good, "fr/index.md"), "[HTML](/fr/)", "[HTML](".len());
    assert!(
        found.contains(&format!(
            "/fr/index.md:{at}: error: broken link \"/fr/#vat\": no element with id \"vat\" on /fr/index.html"
        )),
        "{found:#?}"
    );
}

/// `#anchor` alone points into the page itself; an absolute URL under the site's base URL is checked like
/// a site-relative one; links to other hosts, `mailto:` and protocol-relative URLs are not followed.
#[test]
fn same_page_anchors_base_url_links_and_external_links() {
    let dir = copy_project();
    let root = dir.path();
    let base = read(root, "rules/site.toml")
        .lines()
        .find_map(|l| l.strip_prefix("base_url = \""))
        .expect("base_url")
        .trim_end_matches('"')
        .to_string();
    replace_once(
        root,
        "rules/templates/404.html",
        "<h1>Page not found</h1>",
        &format!(
            "<h1 id=\"start\">Page not found</h1>\n<p><a href=\"#start\">top of this page</a>, <a href=\"#\">top</a>, \
             <a href=\"{base}/e-invoicing/#fr-odoo\">Odoo in France</a>, <a href=\"{base}\">home</a>, \
             <a href=\"{base}/fr/index.md\">twin</a>, <a href=\"https://example.com/#nothing\">elsewhere</a>, \
             <a href=\"mailto:someone@example.com\">mail</a>, <a href=\"//cdn.example.com/x.js\">cdn</a>.</p>"
        ),
    );
    let check = locref(root, &["check"]);
    assert!(check.status.success(), "{}", stderr(&check));

    replace_once(
        root,
        "rules/templates/404.html",
        "<a href=\"#start\">",
        "<a href=\"#nowhere\">",
    );
    replace_once(
        root,
        "rules/templates/404.html",
        "/e-invoicing/#fr-odoo\"",
        "/e-invoicing/#fr-nothing\"",
    );
    replace_once(
        root,
        "rules/templates/404.html",
        "/fr/index.md\"",
        "/fr/index.md#saf-t\"",
    );
    let check = locref(root, &["check"]);
    assert_eq!(check.status.code(), Some(1), "{}", stderr(&check));
    let found: Vec<String> = diagnostics(&check)
        .iter()
        .map(|d| d.split_once(": error: ").expect("located").1.to_string())
        .collect();
    assert_eq!(
        found,
        [
            "broken link \"#nowhere\": no element with id \"nowhere\" on /404.html".to_string(),
            format!(
                "broken link \"{base}/e-invoicing/#fr-nothing\": no element with id \"fr-nothing\" on /e-invoicing/index.html"
            ),
            format!(
                "broken link \"{base}/fr/index.md#saf-t\": #saf-t points into /fr/index.md, which is not an HTML page"
            ),
        ]
    );
    assert!(
        diagnostics(&check)
            .iter()
            .all(|d| d.starts_with("/404.html:")),
        "{}",
        stderr(&check)
    );
}

#[test]
fn html_errors_are_reported_where_they_are() {
    let (dir, good) = built();
    let root = dir.path();
    let not_found = page(&good, "404.html");
    // A stray end tag, an element left open (closed by </main> of base.html), and a duplicate id.
    let heading = "<h1>Page not found</h1>";
    let edited = not_found.replacen(heading, "<h1 id=\"main\">Page not found</h1></div>", 1);
    let stray = position(&edited, "</h1></div>", "</h1>".len());
    let main_end = position(not_found, "</main>", 0);
    replace_once(
        root,
        "rules/templates/404.html",
        heading,
        "<h1 id=\"main\">Page not found</h1></div>",
    );
    replace_once(
        root,
        "rules/templates/404.html",
        "<p>There is no page",
        "<div id=\"main\"><p>There is no page",
    );
    let check = locref(root, &["check"]);
    assert_eq!(check.status.code(), Some(1), "{}", stderr(&check));
    let found = diagnostics(&check);
    let h1_line: usize = stray.split(':').next().unwrap().parse().unwrap();
    let mut expected = vec![
        format!("/404.html:{stray}: error: invalid HTML: unexpected </div> (in body)"),
        format!(
            "/404.html:{}:1: error: duplicate id \"main\" (first on line {h1_line}); an id names one element",
            h1_line + 1
        ),
        format!(
            "/404.html:{main_end}: error: invalid HTML: Unexpected open element while closing </main>"
        ),
    ];
    expected.sort();
    assert_eq!(found, expected);
}

/// The check parses a valid page once on html5ever's fast path and re-parses exactly only when there is
/// something to report: on every shipped page and twin-free HTML output, the result is that of an exact
/// parse (ids, links with their positions, no errors).
#[test]
fn the_fast_parse_finds_what_the_exact_parse_finds_on_every_shipped_page() {
    let (_dir, files) = built();
    let base = "https://locref.example.org";
    let mut pages = 0;
    for (rel, bytes) in files.iter().filter(|(rel, _)| rel.ends_with(".html")) {
        let path = format!("/{rel}");
        let text = std::str::from_utf8(bytes).expect("utf-8");
        let fast = locref::linkcheck::scan(&path, text, base);
        assert_eq!(
            fast,
            locref::linkcheck::scan_exact(&path, text, base),
            "{path}"
        );
        assert!(fast.errors.is_empty(), "{path}: {:?}", fast.errors);
        pages += 1;
    }
    assert_eq!(
        pages,
        crate::common::shipped_pages(),
        "HTML pages of the shipped site"
    );
}

/// A noncharacter in a page's text (the sources refuse control characters, not these) is an error only
/// html5ever's exact mode reports; the check still reports it, located.
#[test]
fn a_noncharacter_in_a_page_is_reported() {
    let (dir, good) = built();
    let root = dir.path();
    let heading = "<h1>Page not found</h1>";
    let edited = page(&good, "404.html").replacen(heading, "<h1>Page not\u{FDD0} found</h1>", 1);
    let at = position(&edited, "\u{FDD0}", 0);
    let line = at.split(':').next().unwrap();
    replace_once(
        root,
        "rules/templates/404.html",
        heading,
        "<h1>Page not\u{FDD0} found</h1>",
    );
    let check = locref(root, &["check"]);
    assert_eq!(check.status.code(), Some(1), "{}", stderr(&check));
    assert_eq!(
        diagnostics(&check),
        [format!(
            "/404.html:{line}:1: error: invalid HTML: Bad character \u{FDD0}"
        )]
    );
}

/// A quote inside an unquoted attribute value is an error html5ever's fast path does not report (it
/// reads the value as one run); the check still reports it, located at its line, as an exact parse does.
#[test]
fn a_quote_in_an_unquoted_attribute_value_is_reported() {
    let (dir, good) = built();
    let root = dir.path();
    let heading = "<h1>Page not found</h1>";
    let odd = "<h1 title=not\"found>Page not found</h1>";
    let edited = page(&good, "404.html").replacen(heading, odd, 1);
    let at = position(&edited, odd, 0);
    let line = at.split(':').next().unwrap();
    replace_once(root, "rules/templates/404.html", heading, odd);
    let check = locref(root, &["check"]);
    assert_eq!(check.status.code(), Some(1), "{}", stderr(&check));
    assert_eq!(
        diagnostics(&check),
        [format!(
            "/404.html:{line}:1: error: invalid HTML: Bad character"
        )]
    );
}

/// The link-check queries among the queries a rebuild executed.
fn link_queries(executed: &[String]) -> Vec<&str> {
    executed
        .iter()
        .map(String::as_str)
        .filter(|n| {
            matches!(
                *n,
                "page_links" | "page_ids" | "broken_links" | "part_problems" | "output_paths"
            )
        })
        .collect()
}

fn session(root: &Path) -> Session {
    let mut session = Session::load(root, &root.join("public"), &SITE)
        .expect("load")
        .with_fixed_time(FIXED_TIME);
    let first = session.build();
    assert!(matches!(first.outcome, Outcome::Built(_)), "{first}");
    session
}

/// A one-fact edit re-parses the one page (and twin) whose bytes changed, and nothing resolves links again.
#[test]
fn a_fact_edit_reparses_only_the_changed_page() {
    let dir = copy_project();
    let root = dir.path();
    let mut session = session(root);
    let path = replace_once(
        root,
        "sources/tables/countries.csv",
        "fr,VAT / GST,TVA. Standard rate 20%",
        "fr,VAT / GST,TVA (taxe sur la valeur ajoutee). Standard rate 20%",
    );
    let report = session.rebuild(&[path]);
    assert!(matches!(report.outcome, Outcome::Built(_)), "{report}");
    assert!(report.written().contains(&"/fr/index.html".to_string()));
    // France's page and its Markdown twin, and the changes page and its twin (the edit is a change not
    // released yet, listed there and in France's History). The new History rows shift the footer's links
    // of France's page and twin, so their links are resolved again and their ids re-read (the changes
    // page links into France's History: unchanged); the changes page's new row links to France. It is
    // the first change not released: the changes page and twin now show their parts, one per country,
    // each checked once. The ids of France's page and of the changes page are read again (the changes
    // page's are unchanged, so no page linking to it is resolved again).
    let mut expected = vec!["broken_links"; 4];
    expected.extend(["page_ids"; 2]);
    expected.extend(["page_links"; 4]);
    expected.extend(std::iter::repeat_n("part_problems", 2 * 61));
    assert_eq!(link_queries(&report.executed), expected, "{report}");
}

/// Removing the anchors that another page links to is caught on the next rebuild, at the linking page;
/// putting them back recovers with the last good output unchanged.
#[test]
fn removing_linked_anchors_breaks_the_pages_that_link_to_them() {
    let dir = copy_project();
    let root = dir.path();
    let mut session = session(root);
    let before = snapshot(&root.join("public"));
    let matrix = page(&before, "e-invoicing/index.html");
    // The matrix's established cells and the ERP pages' country rows link to the country pages' ERP rows.
    let linking: Vec<String> = std::iter::once("/e-invoicing/index.html".to_string())
        .chain(
            crate::common::ERP_IDS
                .iter()
                .map(|id| format!("/erp/{id}/index.html")),
        )
        .collect();
    // Links to a country page's ERP row (a history link to `/changes/archive/…/#erp-…` is another).
    let to_country_row = regex::Regex::new(r#"href="/[a-z]{2}/#erp-"#).unwrap();
    let links_in: usize = linking
        .iter()
        .map(|p| to_country_row.find_iter(page(&before, &p[1..])).count())
        .sum();
    // The answered cells of the matrix (an unknown cell has no evidence to link; an unverified answer
    // links to its source), and a row per country on each ERP page.
    assert_eq!(
        links_in,
        crate::common::answered_matrix_cells() + crate::common::ERP_IDS.len() * 61
    );
    let original = read(root, "rules/templates/country.html");
    let path = replace_once(
        root,
        "rules/templates/country.html",
        "<tr id=\"erp-{{ f.erp }}\">",
        "<tr id=\"row-{{ f.erp }}\">",
    );
    let broken = session.rebuild(std::slice::from_ref(&path));
    let Outcome::Invalid(found) = &broken.outcome else {
        panic!("expected broken links: {broken}")
    };
    // Every broken link is counted: the first 50 of each page are shown, the rest counted in one line.
    let counted: usize = found.iter().map(|d| d.left_out.max(1)).sum();
    assert_eq!(counted, links_in, "{broken}");
    assert_eq!(
        found.iter().filter(|d| d.left_out > 0).count(),
        linking.len(),
        "each linking page has more than 50 broken links"
    );
    assert!(found.iter().all(|d| linking.contains(&d.path)));
    // Among the first shown: Argentina's Odoo cell, located at its link in the matrix page.
    let ar_odoo = position(matrix, "href=\"/ar/#erp-odoo\"", "href=\"".len());
    assert!(
        found.iter().any(|d| d.to_string()
            == format!("/e-invoicing/index.html:{ar_odoo}: error: broken link \"/ar/#erp-odoo\": no element with id \"erp-odoo\" on /ar/index.html")),
        "the diagnostic for /ar/#erp-odoo"
    );
    // The 61 changed pages are re-parsed; their ids changed, so the links of every page that links into
    // a country page with a fragment are resolved again: the matrix, 11 ERP pages, 7 filter pages, the
    // two reporting pages, the calendar, the readiness board (each phase links its row on its country's
    // page), the home page (its timeline), the comparison page and the pages of the releases after
    // that link into a country page, and each country page's own; and
    // those of each part of the partners and local ERPs pages (a country's rows each).
    let into_a_country = regex::Regex::new(r#"href="/[a-z]{2}/#"#).unwrap();
    let releases_with_changes = before
        .iter()
        .filter(|(path, bytes)| {
            path.starts_with("changes/2")
                && path.ends_with("/index.html")
                && into_a_country.is_match(&String::from_utf8_lossy(bytes))
        })
        .count();
    let countries_in = |table: &str| {
        let csv = read(root, &format!("sources/tables/{table}.csv"));
        let codes: std::collections::BTreeSet<String> = csv
            .lines()
            .skip(1)
            .filter_map(|line| line.split(',').next().map(str::to_string))
            .collect();
        codes.len()
    };
    let mut expected =
        vec!["broken_links"; 61 + 1 + 11 + 7 + 2 + 1 + 1 + 1 + 1 + releases_with_changes];
    expected.extend(["page_ids"; 61]);
    expected.extend(["page_links"; 61]);
    expected.extend(std::iter::repeat_n(
        "part_problems",
        countries_in("partners") + countries_in("local_erps"),
    ));
    assert_eq!(link_queries(&broken.executed), expected);
    assert_eq!(snapshot(&root.join("public")), before, "nothing written");

    atomic_save(&path, original.as_bytes());
    let fixed = session.rebuild(std::slice::from_ref(&path));
    assert!(matches!(fixed.outcome, Outcome::Built(_)), "{fixed}");
    assert!(fixed.written().is_empty(), "{fixed}");
    assert_eq!(snapshot(&root.join("public")), before);
}

/// A site published under a path (a GitHub Pages project site, `--base-url https://<user>.github.io/<repo>`)
/// links within that path: every site-relative `href`/`src`/`action` of every page and every link of
/// every twin carries it (the link check resolves them under it), and a link that leaves it is reported.
#[test]
fn a_site_under_a_base_path_links_within_it() {
    let dir = copy_project();
    let root = dir.path();
    let base = "https://example.github.io/locref";
    let run = locref(root, &["build", "--out", "site", "--base-url", base]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert!(
        !stderr(&run).contains("warning"),
        "a real base URL is no placeholder: {}",
        stderr(&run)
    );
    let files = snapshot(&root.join("site"));
    let attribute = regex::Regex::new(r#"\s(?:href|src|action)="([^"]*)""#).unwrap();
    let md_link = regex::Regex::new(r"[^\\]\]\(([^)]*)\)").unwrap();
    let mut checked = 0;
    for (path, bytes) in &files {
        let text = std::str::from_utf8(bytes).unwrap_or_default();
        let links: Vec<&str> = if path.ends_with(".html") {
            attribute
                .captures_iter(text)
                .map(|c| c.get(1).unwrap().as_str())
                .collect()
        } else if path.ends_with(".md") {
            md_link
                .captures_iter(text)
                .map(|c| c.get(1).unwrap().as_str())
                .collect()
        } else {
            continue;
        };
        for link in links {
            if link.starts_with('/') && !link.starts_with("//") {
                assert!(
                    link == "/locref" || link.starts_with("/locref/"),
                    "{path}: {link} leaves the site"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 5_000, "{checked} site-relative links");
    let home = page(&files, "index.html");
    assert!(home.contains("<link rel=\"stylesheet\" href=\"/locref/assets/site.css\">"));
    assert!(home.contains("<a href=\"/locref/e-invoicing/\">"));
    assert!(page(&files, "index.md").contains("](/locref/e-invoicing/index.md)"));
    // Absolute URLs carry the path too; the API's site-relative `api_url` fields stay as published.
    assert!(page(&files, "llms.txt").contains(&format!("- [Italy]({base}/it/index.md)")));
    let italy: serde_json::Value =
        serde_json::from_slice(&files["api/v1/countries/it.json"]).unwrap();
    assert_eq!(italy["data"]["url"], format!("{base}/it/"));
    assert_eq!(italy["data"]["api_url"], "/api/v1/countries/it.json");

    // A link written without the path is outside the site, and located.
    replace_once(
        root,
        "rules/templates/404.html",
        "<h1>Page not found</h1>",
        "<h1>Page not found</h1>\n<p><a href='/e-invoicing/'>x</a></p>",
    );
    let run = locref(root, &["build", "--out", "site", "--base-url", base]);
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    let found = diagnostics(&run);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0].starts_with("/404.html:")
            && found[0].ends_with("broken link \"/e-invoicing/\": the site is published under /locref/, and this link leaves it (a site-relative link starts with that path)"),
        "{found:#?}"
    );
}

#[test]
fn a_build_for_the_placeholder_base_url_warns() {
    let dir = copy_project();
    let run = locref(dir.path(), &["build", "--out", "site"]);
    assert!(run.status.success(), "{}", stderr(&run));
    let err = stderr(&run);
    assert!(
        err.contains("warning: the base URL is the placeholder https://locref.example.org")
            && err.contains("--base-url"),
        "{err}"
    );
    // Said last, after the closing line; and again by a build that finds nothing changed and stops early.
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(
        out.trim_end()
            .lines()
            .last()
            .unwrap()
            .starts_with("built site: "),
        "{out}"
    );
    let again = locref(dir.path(), &["build", "--out", "site"]);
    assert!(String::from_utf8_lossy(&again.stdout).contains(" 0 written, "));
    assert!(
        stderr(&again).contains("warning: the base URL is the placeholder"),
        "{}",
        stderr(&again)
    );
    // A real address: no warning.
    let real = locref(
        dir.path(),
        &[
            "build",
            "--out",
            "site",
            "--base-url",
            "https://user.github.io/locref",
        ],
    );
    assert!(
        real.status.success() && !stderr(&real).contains("warning"),
        "{}",
        stderr(&real)
    );
}
