//! The incremental contract (README, Architecture): minimality and correctness of rebuilds.
//!
//! Every test runs edits through the same code path as `locref watch`: a tempdir copy of the shipped
//! `sources/` and `rules/`, one [`Session`] (load, build, emit), then edits on disk and
//! [`Session::rebuild`] with the edited paths as the watcher's hints. The build time is fixed, so the
//! assertions do not depend on `SOURCE_DATE_EPOCH` or the clock.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use locref::kinds::RendererOf;

use crate::common::{FIXED_TIME, atomic_save, copy_project, read, replace_once, snapshot};
use expect_test::expect;
use locref::locref_site::SITE;
use locref::session::{Outcome, RebuildReport, Session};
use proptest::prelude::*;

fn session(root: &Path) -> Session {
    let mut session = Session::load(root, &root.join("public"), &SITE)
        .expect("load")
        .with_fixed_time(FIXED_TIME);
    let first = session.build();
    assert!(
        matches!(first.outcome, Outcome::Built(_)),
        "first build: {first}"
    );
    // Every output of the route table is written (the shipped project's, unless a test released more).
    assert_eq!(
        first.written().len(),
        locref::routes::outputs(&session.project.db).len(),
        "the first build writes every output"
    );
    session
}

/// The executed queries of a rebuild as the snapshots show them: one line per query name with its
/// count, sorted by name.
fn executed_lines(executed: &[String]) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for name in executed {
        *counts.entry(name.as_str()).or_default() += 1;
    }
    counts
        .iter()
        .map(|(name, n)| format!("{name} × {n}\n"))
        .collect()
}

/// The output files (relative to the output folder) whose bytes differ between two snapshots.
fn differing(
    before: &BTreeMap<String, Vec<u8>>,
    after: &BTreeMap<String, Vec<u8>>,
) -> BTreeSet<String> {
    let keys: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    keys.into_iter()
        .filter(|k| before.get(*k) != after.get(*k))
        .cloned()
        .collect()
}

/// The outputs an edit must write, one site path per line: a snapshot, or a list the test computes (the
/// 61 country pages).
trait Written {
    fn check(&self, actual: &str);
}

impl Written for expect_test::Expect {
    fn check(&self, actual: &str) {
        self.assert_eq(actual);
    }
}

impl Written for String {
    fn check(&self, actual: &str) {
        let mut expected: Vec<&str> = self.lines().collect();
        expected.sort();
        assert_eq!(
            actual.lines().collect::<Vec<_>>(),
            expected,
            "outputs written"
        );
    }
}

/// Applies one edit to a fresh copy, rebuilds, and checks the executed queries, the reported written
/// outputs and the files that actually changed on disk against the snapshots (`UPDATE_EXPECT=1` records
/// them anew: review the diff, every query named there re-ran).
fn assert_edit(
    rel: &str,
    from: &str,
    to: &str,
    executed: expect_test::Expect,
    written: impl Written,
) -> RebuildReport {
    assert_edits(&[(rel, from, to)], executed, written)
}

/// [`assert_edit`] for edits of several files saved together (one rebuild).
fn assert_edits(
    edits: &[(&str, &str, &str)],
    executed: expect_test::Expect,
    written: impl Written,
) -> RebuildReport {
    let dir = copy_project();
    let root = dir.path();
    let mut session = session(root);
    let before = snapshot(&root.join("public"));
    let paths: Vec<PathBuf> = edits
        .iter()
        .map(|(rel, from, to)| replace_once(root, rel, from, to))
        .collect();
    let report = session.rebuild(&paths);
    let mut changed: Vec<&str> = edits.iter().map(|(rel, _, _)| *rel).collect();
    changed.sort();
    assert_eq!(report.changed_inputs, changed, "{report}");
    assert!(matches!(report.outcome, Outcome::Built(_)), "{report}");
    executed.assert_eq(&executed_lines(&report.executed));
    let mut reported: Vec<&str> = report.written().iter().map(String::as_str).collect();
    reported.sort();
    written.check(
        &reported
            .iter()
            .map(|p| format!("{p}\n"))
            .collect::<String>(),
    );
    let on_disk = differing(&before, &snapshot(&root.join("public")));
    let reported_files: BTreeSet<String> = reported
        .iter()
        .map(|p| p.trim_start_matches('/').to_string())
        .collect();
    assert_eq!(
        on_disk, reported_files,
        "the files changed on disk are those reported"
    );
    report
}

#[test]
fn one_vat_fact_text_rewrites_that_country_and_the_lists_showing_it() {
    assert_edit(
        "sources/tables/countries.csv",
        "fr,VAT / GST,TVA. Standard rate 20%",
        "fr,VAT / GST,TVA (taxe sur la valeur ajoutee). Standard rate 20%",
        // The table is split into runs by country (record boundaries only); every country's run is
        // looked up again, and only France's changed, so only France's rows are parsed and checked.
        // France's ERP-localization facts are picked out again; they are unchanged, so no ERP's list
        // of them re-runs.
        // facts.json and the flat files are spliced from per-country parts: one part re-renders. The
        // changed CSV is hashed again, so datapackage.json, which declares its hash, is rewritten.
        // France's page and its twin show the fact text; no other country's page re-runs.
        // llms-full.txt holds every twin (the changed ones condensed again); llms.txt reads only their
        // titles, unchanged.
        // The edit is a change not released yet: France's unreleased diff and History re-run (each ERP's
        // unreleased changes re-check it, unchanged; no release is read), and the change list, its count in the index, the feed and the
        // changes page and twin are rewritten.
        // The link check re-parses France's page and twin and the changes page and twin. France's new
        // History rows move its footer's links, so its links are resolved again and its ids re-read (for
        // the changes page, which links into France's History); the changes page's new row links to France.
        expect![[r#"
            broken_links × 4
            check_agreement × 1
            check_country_facts_of × 1
            check_date_span × 1
            check_fact_clauses_of × 1
            check_fact_evidence × 1
            check_vat_rates_of × 1
            condensed_twin × 2
            country_day × 1
            country_detail × 1
            country_erp_fact_rows × 1
            country_fact_keys × 1
            country_fact_rows_of × 1
            country_fact_runs × 1
            country_fact_runs_of × 61
            country_facts × 1
            country_facts_json × 1
            country_facts_of × 1
            country_history_context × 1
            country_summary × 1
            csv_digest × 1
            current_country_state × 1
            decoded_text × 1
            endpoints × 1
            flat_part_csv × 1
            flat_part_json × 1
            flat_row_count × 1
            flat_rows × 1
            output_digest × 15
            output_file(api_changes) × 1
            output_file(api_country) × 1
            output_file(api_facts) × 1
            output_file(api_index) × 1
            output_file(changes_feed) × 1
            output_file(country_feed) × 1
            output_file(data_csv) × 1
            output_file(data_json) × 1
            output_file(datapackage) × 1
            output_file(llms_full) × 1
            output_file(page_changes) × 1
            output_file(page_changes_md) × 1
            output_file(page_country) × 1
            output_file(page_country_md) × 1
            output_file(search_index) × 1
            page_context(changes) × 1
            page_context(country) × 1
            page_ids × 2
            page_layout × 2
            page_links × 4
            page_part(changes) × 122
            page_search_items × 1
            page_skeleton × 2
            part_is_plain × 61
            part_links × 122
            part_problems × 122
            twin_title × 2
            unreleased_country_changes × 1
            unreleased_country_changes_json × 1
            unreleased_counts × 1
            unreleased_erp_changes × 11
            unreleased_listed_in_full × 1
        "#]],
        expect![[r#"
            /api/v1/changes.json
            /api/v1/countries/fr.json
            /api/v1/facts.json
            /api/v1/index.json
            /changes.xml
            /changes/index.html
            /changes/index.md
            /data/countries.csv
            /data/countries.json
            /data/datapackage.json
            /fr/changes.xml
            /fr/index.html
            /fr/index.md
            /llms-full.txt
            /search-index.json
        "#]],
    );
}

/// An edit's verification does not walk the history: the releases are frozen inputs (of MEDIUM
/// durability, a file's path HIGH), and each country's released history is one query, so after a fact
/// edit salsa checks no memo kept per release and country but the last release's snapshot of each. (Before, it checked each of them, three
/// queries deep: 29,463 checks with 160 releases, a quarter of an edit's time.)
#[test]
fn a_fact_edit_checks_no_memo_per_release_and_country() {
    let dir = copy_project();
    let root = dir.path();
    let mut session = session(root);
    let db = &session.project.db;
    assert!(
        locref::history::release_versions(db).len() >= 2,
        "the shipped history has releases to diff"
    );
    db.record_validations();
    let path = replace_once(
        root,
        "sources/tables/countries.csv",
        "fr,VAT / GST,TVA. Standard rate 20%",
        "fr,VAT / GST,TVA (checked). Standard rate 20%",
    );
    let report = session.rebuild(&[path]);
    assert!(matches!(report.outcome, Outcome::Built(_)), "{report}");
    let validated = locref::render::take_validated(&session.project.db);
    // The check did record: the other countries' pages were found valid.
    assert!(
        validated
            .iter()
            .any(|name| name == "output_file(page_country)"),
        "validations were recorded"
    );
    let count = |query: &str| validated.iter().filter(|name| *name == query).count();
    for query in ["release_country_changes", "record_summary"] {
        assert_eq!(count(query), 0, "an edit checked {query}");
    }
    // The unreleased diffs compare each country with the last release: its record of each country is
    // checked, no other release's.
    let countries = locref::history::unreleased_codes(&session.project.db).len();
    assert!(
        (1..=countries).contains(&count("snapshot_record")),
        "an edit checked {} snapshot_record memos, not at most the last release's {countries}",
        count("snapshot_record")
    );
}

#[test]
fn with_changes_pending_an_edit_renders_and_checks_one_part_of_the_changes_page() {
    // France's fact is changed since the last release; then Germany's. The /changes/ page and twin are
    // made of one part per country (its rows of unreleased changes): the second edit renders Germany's
    // two parts and the short skeleton again, parses those two parts, and splices the rest as they were.
    let dir = copy_project();
    let root = dir.path();
    let mut session = session(root);
    let mut edit = |from: &str, to: &str| {
        let path = replace_once(root, "sources/tables/countries.csv", from, to);
        let report = session.rebuild(&[path]);
        assert!(matches!(report.outcome, Outcome::Built(_)), "{report}");
        report
    };
    edit(
        "fr,VAT / GST,TVA. Standard rate 20%",
        "fr,VAT / GST,TVA (taxe sur la valeur ajoutee). Standard rate 20%",
    );
    let before = snapshot(&root.join("public"));
    let report = edit(
        "de,VAT / GST,Umsatzsteuer.",
        "de,VAT / GST,Umsatzsteuer (USt).",
    );
    let executed = executed_lines(&report.executed);
    let of_the_page: String = executed
        .lines()
        .filter(|line| {
            [
                "page_part(changes) ",
                "part_links ",
                "part_problems ",
                "part_is_plain ",
                "condensed_twin ",
                "page_skeleton ",
                "page_layout ",
                "page_links ",
                "output_file(page_changes",
                "page_context(changes)",
            ]
            .iter()
            .any(|name| line.starts_with(name))
        })
        .map(|line| format!("{line}\n"))
        .collect();
    // page_links: Germany's page and twin, and the changes page and twin (their skeleton's links and
    // every part's ids and errors, read from the parts' memoized scans). condensed_twin: Germany's twin
    // and the changes twin, which llms-full.txt carries as it is (its parts shared, not condensed
    // again): only Germany's part is read again for rows to condense.
    expect![[r#"
        condensed_twin × 2
        output_file(page_changes) × 1
        output_file(page_changes_md) × 1
        page_context(changes) × 1
        page_layout × 2
        page_links × 4
        page_part(changes) × 2
        page_skeleton × 2
        part_is_plain × 1
        part_links × 2
        part_problems × 2
    "#]]
    .assert_eq(&of_the_page);
    let after = snapshot(&root.join("public"));
    let page = String::from_utf8(after["changes/index.html"].clone()).unwrap();
    assert!(
        page.contains("Umsatzsteuer (USt)."),
        "Germany's new row is on the page"
    );
    assert!(
        page.contains("TVA (taxe sur la valeur ajoutee)"),
        "France's row is still on it"
    );
    assert!(
        page.contains("2 changes since release"),
        "the count covers both"
    );
    let changed = differing(&before, &after);
    assert!(changed.contains("changes/index.html") && changed.contains("changes/index.md"));
    // llms-full.txt carries the changes twin as condensing it would: as it is, but for its footer.
    let twin = String::from_utf8(after["changes/index.md"].clone()).unwrap();
    let full = String::from_utf8(after["llms-full.txt"].clone()).unwrap();
    assert_eq!(locref::render::llms::condense_unknown_rows(&twin), twin);
    let (body, _footer) = twin.rsplit_once("\n---\n").unwrap();
    assert!(full.contains(&format!(
        "/changes/index.md\n\n{}\n\n---\n",
        body.trim_end()
    )));
}

#[test]
fn a_news_item_added_at_the_top_renders_only_its_part_of_the_news_page() {
    // 3,000 items: about six parts. A new item goes to the top of the page (the newest first); the
    // parts are cut where the items say, not every so many places, so the parts after the new item's
    // keep their items and are not rendered again.
    let dir = copy_project();
    let root = dir.path();
    let news_path = root.join("sources/news.json");
    // Each links a page of a registered host, as every news link must.
    let item = |id: &str, title: &str, date: &str| {
        serde_json::json!({
            "id": id, "title": title, "url": format!("https://learn.microsoft.com/news/{id}"), "date": date,
            "first_seen": null, "erps": ["odoo"], "source": "Synthetic news source",
        })
    };
    let mut news: Vec<serde_json::Value> = (0..3000)
        .map(|i| {
            let date = format!("2025-{:02}-{:02}", 1 + i % 12, 1 + i % 28);
            item(&format!("n{i:05}"), &format!("Synthetic item {i}"), &date)
        })
        .collect();
    std::fs::write(&news_path, serde_json::to_vec_pretty(&news).unwrap()).unwrap();
    let mut session = session(root);
    let before = snapshot(&root.join("public"));
    news.insert(0, item("added-today", "A new item on top", "2026-11-27"));
    atomic_save(&news_path, &serde_json::to_vec_pretty(&news).unwrap());
    let report = session.rebuild(std::slice::from_ref(&news_path));
    assert!(matches!(report.outcome, Outcome::Built(_)), "{report}");
    let parts: String = executed_lines(&report.executed)
        .lines()
        .filter(|line| line.starts_with("page_part(news)") || line.starts_with("part_links "))
        .map(|line| format!("{line}\n"))
        .collect();
    // The new item's part, as a page and as a twin; with parts cut every 500 places, all fourteen
    // (3,001 items, seven parts of 500).
    expect![[r#"
        page_part(news) × 2
        part_links × 2
    "#]]
    .assert_eq(&parts);
    let after = snapshot(&root.join("public"));
    let page = String::from_utf8(after["news/index.html"].clone()).unwrap();
    let new_row = page
        .find("A new item on top")
        .expect("the new item is on the page");
    assert!(
        new_row < page.find("Synthetic item 0<").unwrap(),
        "and above the others"
    );
    let changed = differing(&before, &after);
    assert!(changed.contains("news/index.html") && changed.contains("news/index.md"));
    let clean = clean_build(root).expect("a clean build of the same files");
    assert!(
        differing(&after, &clean).is_empty(),
        "the session's outputs are a clean build's"
    );
}

#[test]
fn a_fact_edit_that_flips_a_toggle_rewrites_the_lists_and_only_the_filters_whose_members_changed() {
    // Australia's SAF-T: the phase "none" becomes "in-force", and the fact's clause says so too (a clause
    // that contradicts the phases is an error). Australia was in no filter; it joins saft-required.
    assert_edits(
        &[
            (
                "sources/tables/obligations.csv",
                "au,saf-t,main,none,,,,,absence,",
                "au,saf-t,main,in-force,,,,,,",
            ),
            (
                "sources/tables/countries.csv",
                "no invoice-by-invoice submission to the ATO).",
                "no invoice-by-invoice submission to the ATO). SAF-T: required.",
            ),
        ],
        // Every filter re-checks its members (they read the toggles); only saft-required is rendered again.
        // Australia's page shows the fact and the toggle; the home page's table shows the toggle.
        // Australia joins the saft-required filter page; the filter index shows its new count.
        // The four changed pages and twins are re-parsed. Australia's toggle now links to the fact that
        // set it, so its page's links are resolved again; its ids (which the matrix page links into)
        // are re-read, unchanged, so the matrix page's links are not. The other links are unchanged.
        // The filter page and the filter index (and their twins) are re-parsed too: the filter page's new
        // member row and the index's moved links are resolved again.
        // llms-full.txt holds every twin; llms.txt reads only their titles, unchanged.
        // The comparison page shows Australia's SAF-T phase side by side (its twin, which does not, is made
        // again and is unchanged).
        // The edit (a fact text and a toggle) is a change not released yet: Australia's unreleased diff and
        // History re-run (each ERP's unreleased changes re-check it, unchanged), and the change list, its count in the
        // index, the feed and the changes page and twin are rewritten; the changes page's new rows link
        // into Australia's History.
        expect![[r#"
            broken_links × 6
            change_days × 1
            check_agreement × 1
            check_country_facts_of × 1
            check_date_span × 1
            check_fact_clauses_of × 1
            check_fact_evidence × 1
            check_obligation_evidence × 1
            check_obligations × 1
            check_regimes × 1
            check_vat_rates_of × 1
            condensed_twin × 6
            country_answers × 1
            country_calendar × 1
            country_day × 1
            country_detail × 1
            country_erp_fact_rows × 1
            country_fact_keys × 1
            country_fact_rows_of × 1
            country_fact_runs × 1
            country_fact_runs_of × 61
            country_facts × 1
            country_facts_json × 1
            country_facts_of × 1
            country_history_context × 1
            country_obligations × 61
            country_phase_dates × 1
            country_regime_records × 1
            country_summary × 1
            country_toggle_derivations × 1
            country_toggle_marks × 1
            country_toggle_values × 1
            country_toggles × 1
            csv_digest × 3
            current_country_state × 1
            decoded_text × 2
            e_invoicing_deadlines × 1
            endpoints × 1
            filter_members × 7
            flat_part_csv × 3
            flat_part_json × 3
            flat_row_count × 3
            flat_rows × 4
            home_map × 1
            obligation_rows × 1
            output_digest × 52
            output_file(api_changes) × 1
            output_file(api_countries) × 1
            output_file(api_country) × 1
            output_file(api_facts) × 1
            output_file(api_filter) × 2
            output_file(api_index) × 1
            output_file(api_on_date) × 19
            output_file(api_toggles) × 1
            output_file(changes_feed) × 1
            output_file(compare_column) × 1
            output_file(country_calendar) × 1
            output_file(country_feed) × 1
            output_file(data_csv) × 3
            output_file(data_json) × 3
            output_file(datapackage) × 1
            output_file(llms_full) × 1
            output_file(page_changes) × 1
            output_file(page_changes_md) × 1
            output_file(page_country) × 1
            output_file(page_country_md) × 1
            output_file(page_filter) × 2
            output_file(page_filter_md) × 2
            output_file(page_filters) × 1
            output_file(page_filters_md) × 1
            output_file(page_home) × 1
            output_file(page_home_md) × 1
            output_file(search_index) × 1
            page_context(changes) × 1
            page_context(compare) × 1
            page_context(country) × 1
            page_context(e_invoicing) × 1
            page_context(filter) × 2
            page_context(filters) × 1
            page_context(home) × 1
            page_ids × 2
            page_layout × 2
            page_links × 12
            page_part(changes) × 122
            page_search_items × 1
            page_skeleton × 2
            part_is_plain × 61
            part_links × 122
            part_problems × 122
            toggle_coverage × 1
            twin_title × 6
            unreleased_country_changes × 1
            unreleased_country_changes_json × 1
            unreleased_counts × 1
            unreleased_erp_changes × 11
            unreleased_listed_in_full × 1
        "#]],
        expect![[r#"
            /api/v1/changes.json
            /api/v1/countries.json
            /api/v1/countries/au.json
            /api/v1/facts.json
            /api/v1/filters/saft-required.json
            /api/v1/filters/toggles-unknown.json
            /api/v1/index.json
            /api/v1/on/2026-10-16.json
            /api/v1/on/2027-01-01.json
            /api/v1/on/2027-04-01.json
            /api/v1/on/2027-07-01.json
            /api/v1/on/2027-09-01.json
            /api/v1/on/2027-10-01.json
            /api/v1/on/2028-01-01.json
            /api/v1/on/2028-01-31.json
            /api/v1/on/2028-04-01.json
            /api/v1/on/2028-07-01.json
            /api/v1/on/2028-10-01.json
            /api/v1/on/2028-12-31.json
            /api/v1/on/2029-01-01.json
            /api/v1/on/2029-04-01.json
            /api/v1/on/2029-07-01.json
            /api/v1/on/2029-10-01.json
            /api/v1/on/2030-01-01.json
            /api/v1/on/2030-01-31.json
            /api/v1/on/2030-07-01.json
            /api/v1/toggles.json
            /au/changes.xml
            /au/index.html
            /au/index.md
            /changes.xml
            /changes/index.html
            /changes/index.md
            /compare/au.json
            /data/countries.csv
            /data/countries.json
            /data/datapackage.json
            /data/obligations.csv
            /data/obligations.json
            /data/toggles.csv
            /data/toggles.json
            /filters/index.html
            /filters/index.md
            /filters/saft-required/index.html
            /filters/saft-required/index.md
            /filters/toggles-unknown/index.html
            /filters/toggles-unknown/index.md
            /index.html
            /index.md
            /llms-full.txt
            /search-index.json
        "#]],
    );
}

/// An ERP-localization fact is shown on its country's page and on its ERP's page: only those two (and the
/// lists that show fact texts) change, and no other ERP's list of these facts re-runs.
#[test]
fn an_erp_localization_fact_rewrites_that_country_and_that_erp() {
    assert_edit(
        "sources/tables/countries.csv",
        "Odoo ships the France localization (l10n_fr_account) with",
        "Odoo ships the France localization (l10n_fr_account), with",
        // France's ERP-localization facts changed: every ERP picks its own out of them again; only
        // Odoo's list changed, so only Odoo's outputs re-render.
        // France's and Odoo's pages and twins are re-parsed.
        // The edit is a change not released yet: France's unreleased diff and History re-run (each ERP's
        // unreleased changes re-check it: Odoo's gain it), and the change list, its count in the index, the feed and
        // the changes page and twin are rewritten. The new History rows move the footer's links of France's
        // and Odoo's pages and twins: their links are resolved again and their ids re-read.
        expect![[r#"
            broken_links × 6
            check_agreement × 1
            check_country_facts_of × 1
            check_date_span × 1
            check_fact_clauses_of × 1
            check_fact_evidence × 1
            check_vat_rates_of × 1
            condensed_twin × 3
            country_day × 1
            country_detail × 1
            country_erp_fact_rows × 1
            country_fact_keys × 1
            country_fact_rows_of × 1
            country_fact_runs × 1
            country_fact_runs_of × 61
            country_facts × 1
            country_facts_json × 1
            country_facts_of × 1
            country_history_context × 1
            country_summary × 1
            csv_digest × 1
            current_country_state × 1
            decoded_text × 1
            endpoints × 1
            erp_country_facts × 11
            erp_detail × 1
            erp_history_context × 1
            erp_other_facts × 1
            flat_part_csv × 1
            flat_part_json × 1
            flat_row_count × 1
            flat_rows × 1
            output_digest × 20
            output_file(api_changes) × 1
            output_file(api_country) × 1
            output_file(api_erp) × 1
            output_file(api_facts) × 1
            output_file(api_index) × 1
            output_file(changes_feed) × 1
            output_file(country_feed) × 1
            output_file(data_csv) × 1
            output_file(data_json) × 1
            output_file(datapackage) × 1
            output_file(erp_feed) × 1
            output_file(llms_full) × 1
            output_file(page_changes) × 1
            output_file(page_changes_md) × 1
            output_file(page_country) × 1
            output_file(page_country_md) × 1
            output_file(page_erp) × 1
            output_file(page_erp_md) × 1
            output_file(search_index) × 1
            output_file(sitemap) × 1
            page_context(changes) × 1
            page_context(country) × 1
            page_context(erp) × 1
            page_ids × 3
            page_layout × 2
            page_links × 6
            page_part(changes) × 122
            page_search_items × 1
            page_skeleton × 2
            part_is_plain × 61
            part_links × 122
            part_problems × 122
            twin_title × 3
            unreleased_country_changes × 1
            unreleased_country_changes_json × 1
            unreleased_counts × 1
            unreleased_erp_changes × 11
            unreleased_listed_in_full × 1
        "#]],
        expect![[r#"
            /api/v1/changes.json
            /api/v1/countries/fr.json
            /api/v1/erps/odoo.json
            /api/v1/facts.json
            /api/v1/index.json
            /changes.xml
            /changes/index.html
            /changes/index.md
            /data/countries.csv
            /data/countries.json
            /data/datapackage.json
            /erp/odoo/changes.xml
            /erp/odoo/index.html
            /erp/odoo/index.md
            /fr/changes.xml
            /fr/index.html
            /fr/index.md
            /llms-full.txt
            /search-index.json
        "#]],
    );
}

/// One phase's scope: Germany's page shows it, and the calendar lists it (JSON, iCalendar, the page);
/// the phase starts within 24 months of the build's day, so the readiness board and every ERP page's
/// "Upcoming obligations" show it too, and the search index finds the phase by its scope (Germany's items
/// only re-run); no toggle, fact or other country re-runs beyond what reads Germany's phases.
#[test]
fn one_phase_scope_rewrites_that_country_and_the_calendar() {
    assert_edit(
        "sources/tables/obligations.csv",
        "de,b2b-e-invoicing,issue-large,enacted,2027-01-01,\"businesses with prior-year turnover",
        "de,b2b-e-invoicing,issue-large,enacted,2027-01-01,\"businesses with a prior-year turnover",
        expect![[r#"
            broken_links × 5
            calendar × 1
            calendar_timeline × 1
            change_days × 1
            check_agreement × 1
            check_date_span × 1
            check_fact_clauses_of × 1
            check_obligation_evidence × 1
            check_obligations × 1
            check_regimes × 1
            condensed_twin × 16
            country_answers × 1
            country_calendar × 1
            country_history_context × 1
            country_next_changes × 1
            country_obligations × 61
            country_phase_dates × 1
            country_toggles × 1
            csv_digest × 1
            current_country_state × 1
            decoded_text × 1
            endpoints × 1
            erp_history_context × 10
            flat_part_csv × 1
            flat_part_json × 1
            flat_row_count × 1
            flat_rows × 1
            home_timeline × 1
            obligation_rows × 1
            output_digest × 64
            output_file(api_calendar) × 1
            output_file(api_changes) × 1
            output_file(api_index) × 1
            output_file(api_on_date) × 19
            output_file(calendar) × 1
            output_file(changes_feed) × 1
            output_file(compare_column) × 1
            output_file(country_calendar) × 1
            output_file(country_feed) × 1
            output_file(data_csv) × 1
            output_file(data_json) × 1
            output_file(datapackage) × 1
            output_file(llms_full) × 1
            output_file(page_calendar) × 1
            output_file(page_calendar_md) × 1
            output_file(page_changes) × 1
            output_file(page_changes_md) × 1
            output_file(page_country) × 1
            output_file(page_country_md) × 1
            output_file(page_erp) × 11
            output_file(page_erp_md) × 11
            output_file(page_home) × 1
            output_file(page_home_md) × 1
            output_file(page_readiness) × 1
            output_file(page_readiness_md) × 1
            output_file(search_index) × 1
            page_context(calendar) × 1
            page_context(changes) × 1
            page_context(compare) × 1
            page_context(country) × 1
            page_context(erp) × 11
            page_context(home) × 1
            page_context(readiness) × 1
            page_ids × 2
            page_layout × 2
            page_links × 32
            page_part(changes) × 122
            page_search_items × 1
            page_skeleton × 2
            part_is_plain × 61
            part_links × 122
            part_problems × 122
            twin_title × 16
            unreleased_country_changes × 1
            unreleased_country_changes_json × 1
            unreleased_counts × 1
            unreleased_erp_changes × 11
            unreleased_listed_in_full × 1
        "#]],
        expect![[r#"
            /api/v1/calendar.json
            /api/v1/changes.json
            /api/v1/index.json
            /calendar.ics
            /calendar/index.html
            /calendar/index.md
            /changes.xml
            /changes/index.html
            /changes/index.md
            /data/datapackage.json
            /data/obligations.csv
            /data/obligations.json
            /de/calendar.ics
            /de/changes.xml
            /de/index.html
            /de/index.md
            /erp/infor-cloudsuite/index.html
            /erp/infor-cloudsuite/index.md
            /erp/microsoft-dynamics-365-business-central/index.html
            /erp/microsoft-dynamics-365-business-central/index.md
            /erp/microsoft-dynamics-365-finance/index.html
            /erp/microsoft-dynamics-365-finance/index.md
            /erp/odoo/index.html
            /erp/odoo/index.md
            /erp/oracle-fusion-cloud-erp/index.html
            /erp/oracle-fusion-cloud-erp/index.md
            /erp/oracle-netsuite/index.html
            /erp/oracle-netsuite/index.md
            /erp/sage-intacct/index.html
            /erp/sage-intacct/index.md
            /erp/sap-business-bydesign/index.html
            /erp/sap-business-bydesign/index.md
            /erp/sap-business-one/index.html
            /erp/sap-business-one/index.md
            /erp/sap-s4hana-cloud/index.html
            /erp/sap-s4hana-cloud/index.md
            /erp/workday-financial-management/index.html
            /erp/workday-financial-management/index.md
            /index.html
            /index.md
            /llms-full.txt
            /readiness/index.html
            /readiness/index.md
            /search-index.json
        "#]],
    );
}

/// One phase's date: also the deadlines of Germany's ERP support facts (in the API and on the ERP pages),
/// and the readiness board and the ERP pages' upcoming obligations, which show the phase.
#[test]
fn one_phase_date_rewrites_that_country_its_erp_support_facts_and_the_calendar() {
    assert_edit(
        "sources/tables/obligations.csv",
        // Made coarser, not moved: the mandate row's "issue from 2027-01-01" still falls in the phase.
        "de,b2b-e-invoicing,issue-large,enacted,2027-01-01,",
        "de,b2b-e-invoicing,issue-large,enacted,2027-01,",
        expect![[r#"
            broken_links × 231
            calendar × 1
            calendar_timeline × 1
            change_days × 1
            check_agreement × 1
            check_date_span × 1
            check_fact_clauses_of × 1
            check_obligation_evidence × 1
            check_obligations × 1
            check_regimes × 1
            check_routes × 1
            condensed_twin × 18
            country_answers × 1
            country_calendar × 1
            country_day × 1
            country_detail × 1
            country_facts × 1
            country_facts_json × 1
            country_history_context × 1
            country_next_changes × 1
            country_obligations × 61
            country_phase_dates × 1
            country_regime_records × 1
            country_summary × 1
            country_toggles × 1
            csv_digest × 1
            current_country_state × 1
            decoded_text × 1
            e_invoicing_deadlines × 1
            endpoints × 1
            erp_detail × 11
            erp_history_context × 10
            erp_support_facts × 11
            flat_part_csv × 1
            flat_part_json × 1
            flat_row_count × 1
            flat_rows × 2
            home_timeline × 1
            next_changes × 1
            obligation_rows × 1
            offered_days × 1
            openapi_document × 1
            output_digest × 86
            output_file(api_calendar) × 1
            output_file(api_changes) × 1
            output_file(api_country) × 1
            output_file(api_erp) × 11
            output_file(api_facts) × 1
            output_file(api_index) × 1
            output_file(api_on_date) × 20
            output_file(api_on_dates) × 1
            output_file(calendar) × 1
            output_file(changes_feed) × 1
            output_file(compare_column) × 1
            output_file(country_calendar) × 1
            output_file(country_feed) × 1
            output_file(data_csv) × 1
            output_file(data_json) × 1
            output_file(datapackage) × 1
            output_file(llms) × 1
            output_file(llms_full) × 1
            output_file(openapi) × 1
            output_file(page_api) × 1
            output_file(page_api_md) × 1
            output_file(page_calendar) × 1
            output_file(page_calendar_md) × 1
            output_file(page_changes) × 1
            output_file(page_changes_md) × 1
            output_file(page_compare) × 1
            output_file(page_compare_md) × 1
            output_file(page_country) × 1
            output_file(page_country_md) × 1
            output_file(page_erp) × 11
            output_file(page_erp_md) × 11
            output_file(page_home) × 1
            output_file(page_home_md) × 1
            output_file(page_readiness) × 1
            output_file(page_readiness_md) × 1
            output_file(search_index) × 1
            output_file(sitemap) × 1
            output_paths × 1
            outputs × 1
            page_context(api) × 1
            page_context(calendar) × 1
            page_context(changes) × 1
            page_context(compare) × 1
            page_context(country) × 1
            page_context(data) × 1
            page_context(erp) × 11
            page_context(home) × 1
            page_context(readiness) × 1
            page_context(search) × 1
            page_ids × 13
            page_layout × 2
            page_links × 36
            page_part(changes) × 122
            page_search_items × 42
            page_skeleton × 2
            part_is_plain × 61
            part_links × 122
            part_problems × 210
            published_csv × 9
            twin_title × 18
            unreleased_country_changes × 1
            unreleased_country_changes_json × 1
            unreleased_counts × 1
            unreleased_erp_changes × 11
            unreleased_listed_in_full × 1
        "#]],
        expect![[r#"
            /api/index.html
            /api/index.md
            /api/openapi.json
            /api/v1/calendar.json
            /api/v1/changes.json
            /api/v1/countries/de.json
            /api/v1/erps/infor-cloudsuite.json
            /api/v1/erps/microsoft-dynamics-365-business-central.json
            /api/v1/erps/microsoft-dynamics-365-finance.json
            /api/v1/erps/odoo.json
            /api/v1/erps/oracle-fusion-cloud-erp.json
            /api/v1/erps/oracle-netsuite.json
            /api/v1/erps/sage-intacct.json
            /api/v1/erps/sap-business-bydesign.json
            /api/v1/erps/sap-business-one.json
            /api/v1/erps/sap-s4hana-cloud.json
            /api/v1/erps/workday-financial-management.json
            /api/v1/facts.json
            /api/v1/index.json
            /api/v1/on/2026-10-16.json
            /api/v1/on/2027-01-01.json
            /api/v1/on/2027-01-31.json
            /api/v1/on/2027-04-01.json
            /api/v1/on/2027-07-01.json
            /api/v1/on/2027-09-01.json
            /api/v1/on/2027-10-01.json
            /api/v1/on/2028-01-01.json
            /api/v1/on/2028-01-31.json
            /api/v1/on/2028-04-01.json
            /api/v1/on/2028-07-01.json
            /api/v1/on/2028-10-01.json
            /api/v1/on/2028-12-31.json
            /api/v1/on/2029-01-01.json
            /api/v1/on/2029-04-01.json
            /api/v1/on/2029-07-01.json
            /api/v1/on/2029-10-01.json
            /api/v1/on/2030-01-01.json
            /api/v1/on/2030-01-31.json
            /api/v1/on/2030-07-01.json
            /api/v1/on/index.json
            /calendar.ics
            /calendar/index.html
            /calendar/index.md
            /changes.xml
            /changes/index.html
            /changes/index.md
            /compare/de.json
            /compare/index.html
            /compare/index.md
            /data/datapackage.json
            /data/obligations.csv
            /data/obligations.json
            /de/calendar.ics
            /de/changes.xml
            /de/index.html
            /de/index.md
            /erp/infor-cloudsuite/index.html
            /erp/infor-cloudsuite/index.md
            /erp/microsoft-dynamics-365-business-central/index.html
            /erp/microsoft-dynamics-365-business-central/index.md
            /erp/microsoft-dynamics-365-finance/index.html
            /erp/microsoft-dynamics-365-finance/index.md
            /erp/odoo/index.html
            /erp/odoo/index.md
            /erp/oracle-fusion-cloud-erp/index.html
            /erp/oracle-fusion-cloud-erp/index.md
            /erp/oracle-netsuite/index.html
            /erp/oracle-netsuite/index.md
            /erp/sage-intacct/index.html
            /erp/sage-intacct/index.md
            /erp/sap-business-bydesign/index.html
            /erp/sap-business-bydesign/index.md
            /erp/sap-business-one/index.html
            /erp/sap-business-one/index.md
            /erp/sap-s4hana-cloud/index.html
            /erp/sap-s4hana-cloud/index.md
            /erp/workday-financial-management/index.html
            /erp/workday-financial-management/index.md
            /index.html
            /index.md
            /llms-full.txt
            /readiness/index.html
            /readiness/index.md
        "#]],
    );
}

#[test]
fn one_matrix_cell_rewrites_that_country_that_erp_and_the_matrix_files() {
    assert_edit(
        "sources/tables/matrix.csv",
        "E-Invoicing for Germany as an Early Adopter feature",
        "E-Invoicing for Germany as an early-adopter feature",
        // facts.json lists the ERP e-invoicing support facts, this cell among them.
        // facts.json and the flat files are spliced from per-country parts: one part re-renders.
        // Germany's page shows the cell's notes; the matrix page does not (its data is re-checked, unchanged).
        // Sage Intacct's page shows the cell's notes; no other ERP page re-runs, and the ERP index
        // (names and counts) is re-checked through erp_summary, unchanged.
        // Germany's page, Sage Intacct's page and their twins are re-parsed; their links and ids are unchanged.
        // llms-full.txt holds every twin; llms.txt reads only their titles, unchanged.
        // The cell's notes are not part of a release (a release records value, verification, sources and
        // dates): France's recorded state is re-checked, unchanged, so no history re-runs.
        expect![[r#"
            check_agreement × 1
            check_date_span × 1
            check_erp_evidence × 1
            check_matrix × 1
            condensed_twin × 2
            country_day × 1
            country_detail × 1
            country_facts × 1
            country_facts_json × 1
            country_history_context × 1
            country_matrix × 61
            country_summary × 1
            csv_digest × 1
            current_country_state × 1
            decoded_text × 1
            erp_detail × 1
            erp_history_context × 1
            erp_matrix × 11
            erp_summary × 1
            erp_support_facts × 1
            flat_part_csv × 1
            flat_part_json × 1
            flat_row_count × 1
            flat_rows × 1
            matrix_rows × 1
            output_digest × 13
            output_file(api_country) × 1
            output_file(api_erp) × 1
            output_file(api_facts) × 1
            output_file(compare_column) × 1
            output_file(data_csv) × 1
            output_file(data_json) × 1
            output_file(datapackage) × 1
            output_file(llms_full) × 1
            output_file(page_country) × 1
            output_file(page_country_md) × 1
            output_file(page_erp) × 1
            output_file(page_erp_md) × 1
            output_file(sitemap) × 1
            page_context(compare) × 1
            page_context(country) × 1
            page_context(e_invoicing) × 1
            page_context(erp) × 1
            page_context(erps) × 1
            page_context(readiness) × 1
            page_links × 4
            page_search_items × 1
            twin_title × 2
        "#]],
        expect![[r#"
            /api/v1/countries/de.json
            /api/v1/erps/sage-intacct.json
            /api/v1/facts.json
            /data/datapackage.json
            /data/matrix.csv
            /data/matrix.json
            /de/index.html
            /de/index.md
            /erp/sage-intacct/index.html
            /erp/sage-intacct/index.md
            /llms-full.txt
        "#]],
    );
}

#[test]
fn one_partner_rewrites_its_country_and_the_partner_list() {
    assert_edit(
        "sources/tables/partners.csv",
        "Publisher of the SprintIT Finvoice",
        "Publisher of SprintIT's Finvoice",
        // The index shows the partner count, read from the rows: re-checked, unchanged.
        // The partners page reads the partner rows.
        // Finland's page, the partners page and their twins are re-parsed; their links and ids are unchanged.
        // llms-full.txt holds every twin; llms.txt reads only their titles, unchanged.
        expect![[r#"
            broken_links × 6
            check_erp_evidence × 1
            check_erp_tables × 1
            condensed_twin × 4
            country_answers × 1
            country_detail × 1
            country_history_context × 1
            country_partners × 61
            country_summary × 1
            current_country_state × 1
            decoded_text × 1
            endpoints × 1
            erp_history_context × 1
            erp_partner_count × 11
            output_digest × 16
            output_file(api_changes) × 1
            output_file(api_country) × 1
            output_file(api_index) × 1
            output_file(api_partners) × 1
            output_file(changes_feed) × 1
            output_file(country_feed) × 1
            output_file(erp_feed) × 1
            output_file(llms_full) × 1
            output_file(page_changes) × 1
            output_file(page_changes_md) × 1
            output_file(page_country) × 1
            output_file(page_country_md) × 1
            output_file(page_erp) × 1
            output_file(page_erp_md) × 1
            output_file(page_partners) × 1
            output_file(page_partners_md) × 1
            page_context(changes) × 1
            page_context(country) × 1
            page_context(erp) × 1
            page_context(partners) × 1
            page_ids × 3
            page_layout × 2
            page_links × 6
            page_part(changes) × 122
            page_part(partners) × 2
            page_search_items × 1
            page_skeleton × 2
            part_is_plain × 62
            part_links × 124
            part_problems × 122
            partner_codes × 1
            partner_rows × 1
            twin_title × 3
            unreleased_country_changes × 1
            unreleased_country_changes_json × 1
            unreleased_counts × 1
            unreleased_erp_changes × 11
            unreleased_listed_in_full × 1
        "#]],
        expect![[r#"
            /api/v1/changes.json
            /api/v1/countries/fi.json
            /api/v1/index.json
            /api/v1/partners.json
            /changes.xml
            /changes/index.html
            /changes/index.md
            /erp/odoo/changes.xml
            /erp/odoo/index.html
            /erp/odoo/index.md
            /fi/changes.xml
            /fi/index.html
            /fi/index.md
            /llms-full.txt
            /partners/index.html
            /partners/index.md
        "#]],
    );
}

#[test]
fn one_toggle_rule_rewrites_only_the_countries_whose_toggle_changed() {
    // A B2G mandate enacted with its start date pending no longer counts: Bosnia and Herzegovina's
    // e_invoicing_mandatory_b2g becomes null (unknown).
    assert_edit(
        "rules/toggles.toml",
        r#"{ when = ["applies", "enacted", "enacted_date_pending"], value = true },"#,
        r#"{ when = ["applies", "enacted"], value = true },"#,
        // openapi.json carries the toggles' descriptions: the document is re-checked, unchanged, so
        // neither openapi.json nor the API docs page re-renders.
        // The toggles' labels are re-read from the edited file: unchanged, so no page re-runs for them.
        // The four filter pages whose members or members' toggles changed, and the index (new counts).
        // The ten changed pages and twins are re-parsed. The four country pages lost a toggle's link to
        // its fact: their links are resolved again and their ids re-read (unchanged, so the matrix page
        // that links into them is not re-checked).
        // llms-full.txt holds every twin; llms.txt reads only their titles, unchanged.
        // The five countries' toggle flips are changes not released yet: their unreleased diffs and History
        // re-run, and the change list, the index's count, the feed and the changes page are rewritten.
        expect![[r#"
            broken_links × 9
            check_rules × 1
            condensed_twin × 7
            country_day × 1
            country_detail × 1
            country_facts × 1
            country_facts_json × 1
            country_history_context × 1
            country_next_changes × 61
            country_summary × 1
            country_toggle_derivations × 1
            country_toggle_marks × 1
            country_toggle_values × 1
            country_toggles × 61
            csv_digest × 1
            current_country_state × 1
            decoded_text × 1
            endpoints × 1
            filter_members × 7
            flat_part_csv × 1
            flat_part_json × 1
            flat_row_count × 1
            flat_rows × 1
            home_map × 1
            obligation_rules × 1
            openapi_document × 1
            output_digest × 48
            output_file(api_changes) × 1
            output_file(api_countries) × 1
            output_file(api_country) × 1
            output_file(api_facts) × 1
            output_file(api_filter) × 3
            output_file(api_index) × 1
            output_file(api_on_date) × 19
            output_file(api_toggles) × 1
            output_file(changes_feed) × 1
            output_file(country_feed) × 1
            output_file(data_csv) × 1
            output_file(data_json) × 1
            output_file(datapackage) × 1
            output_file(llms_full) × 1
            output_file(page_changes) × 1
            output_file(page_changes_md) × 1
            output_file(page_country) × 1
            output_file(page_country_md) × 1
            output_file(page_filter) × 3
            output_file(page_filter_md) × 3
            output_file(page_filters) × 1
            output_file(page_filters_md) × 1
            output_file(page_home) × 1
            output_file(page_home_md) × 1
            page_context(changes) × 1
            page_context(country) × 1
            page_context(e_invoicing) × 1
            page_context(filter) × 3
            page_context(filters) × 1
            page_context(home) × 1
            page_ids × 2
            page_layout × 2
            page_links × 14
            page_part(changes) × 122
            page_search_items × 1
            page_skeleton × 2
            part_is_plain × 61
            part_links × 122
            part_problems × 122
            toggle_coverage × 1
            toggle_file × 1
            toggle_labels × 1
            toggle_names × 1
            toggle_rules × 1
            twin_title × 7
            unreleased_country_changes × 1
            unreleased_country_changes_json × 1
            unreleased_counts × 1
            unreleased_erp_changes × 11
            unreleased_listed_in_full × 1
        "#]],
        expect![[r#"
            /api/v1/changes.json
            /api/v1/countries.json
            /api/v1/countries/ba.json
            /api/v1/facts.json
            /api/v1/filters/e-invoicing-mandatory-b2g.json
            /api/v1/filters/e-invoicing-mandatory.json
            /api/v1/filters/toggles-unknown.json
            /api/v1/index.json
            /api/v1/on/2026-10-16.json
            /api/v1/on/2027-01-01.json
            /api/v1/on/2027-04-01.json
            /api/v1/on/2027-07-01.json
            /api/v1/on/2027-09-01.json
            /api/v1/on/2027-10-01.json
            /api/v1/on/2028-01-01.json
            /api/v1/on/2028-01-31.json
            /api/v1/on/2028-04-01.json
            /api/v1/on/2028-07-01.json
            /api/v1/on/2028-10-01.json
            /api/v1/on/2028-12-31.json
            /api/v1/on/2029-01-01.json
            /api/v1/on/2029-04-01.json
            /api/v1/on/2029-07-01.json
            /api/v1/on/2029-10-01.json
            /api/v1/on/2030-01-01.json
            /api/v1/on/2030-01-31.json
            /api/v1/on/2030-07-01.json
            /api/v1/toggles.json
            /ba/changes.xml
            /ba/index.html
            /ba/index.md
            /changes.xml
            /changes/index.html
            /changes/index.md
            /data/datapackage.json
            /data/toggles.csv
            /data/toggles.json
            /filters/e-invoicing-mandatory-b2g/index.html
            /filters/e-invoicing-mandatory-b2g/index.md
            /filters/e-invoicing-mandatory/index.html
            /filters/e-invoicing-mandatory/index.md
            /filters/index.html
            /filters/index.md
            /filters/toggles-unknown/index.html
            /filters/toggles-unknown/index.md
            /index.html
            /index.md
            /llms-full.txt
        "#]],
    );
}

/// A heading of `country.html` and the same heading edited: the country template's edit in these tests.
const GLANCE: &str = "<h2 id=\"toggles\">Obligations at a glance</h2>";
const GLANCE_DERIVED: &str = "<h2 id=\"toggles\">Obligations at a glance (derived)</h2>";

/// The issue's "one page template": `country.html` is read by the 61 country pages only; their Markdown
/// twins, the other pages and every JSON output are untouched.
#[test]
fn one_page_template_rerenders_only_the_country_pages() {
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR"));
    let pages: Vec<String> = read(shipped, "sources/registers/countries.csv")
        .lines()
        .skip(1)
        .filter(|l| !l.is_empty())
        .map(|l| format!("/{}/index.html", l.split(',').next().unwrap()))
        .collect();
    let pages: Vec<&str> = pages.iter().map(String::as_str).collect();
    assert_eq!(pages.len(), 61);
    assert_edit(
        "rules/templates/country.html",
        GLANCE,
        GLANCE_DERIVED,
        // The country page's templates are compiled once, for the 61 pages.
        // A page's context is not kept (only its fingerprint, which did not change), so each page
        // makes its context again as it renders: the History section's context among it (only the
        // last one made is kept, which the pages' render order, by size, does not reach first).
        // The link check re-parses the 61 changed pages; their links and ids are unchanged.
        expect![[r#"
            compiled_templates × 1
            country_history_context × 60
            decoded_text × 1
            output_digest × 61
            output_file(page_country) × 61
            page_links × 61
            template_text × 1
        "#]],
        pages.iter().map(|p| format!("{p}\n")).collect::<String>(),
    );
}

/// A VAT reporting row: its country's page and the VAT reporting page show it; the SAF-T page re-checks its
/// rows (the same per-country projection holds both topics) and stays as it is.
#[test]
fn one_reporting_row_rewrites_its_country_and_its_topic_page_only() {
    assert_edit(
        "sources/tables/reporting.csv",
        "Dichiarazione IVA annuale,Annual VAT return,Annual,30 April of the following year",
        "Dichiarazione IVA annuale,Annual VAT return,Annual,30 April of the following year (edited)",
        // Every country's reporting projection re-runs (a cheap filter); only Italy's changes.
        // The Country resource reads the facts through their counts: re-checked, unchanged.
        // Italy's projection also holds its SAF-T rows: the SAF-T page's data is re-checked, unchanged.
        // Italy's page and the VAT reporting page (and their twins) are re-parsed.
        // llms-full.txt holds every twin; llms.txt reads only their titles, unchanged.
        // The edit is a change not released yet: Italy's unreleased diff and History re-run (each ERP's
        // unreleased changes re-check it, unchanged; no release is read), and the change list, its count in the index, the feed and the
        // changes page and twin are rewritten. Italy's new History rows move its footer's links: its links
        // are resolved again, as the changes page's new row's.
        expect![[r#"
            broken_links × 4
            check_date_span × 1
            check_erp_evidence × 1
            check_reporting × 1
            condensed_twin × 3
            country_answers × 1
            country_day × 1
            country_detail × 1
            country_facts × 1
            country_facts_json × 1
            country_history_context × 1
            country_reporting × 61
            country_summary × 1
            csv_digest × 1
            current_country_state × 1
            decoded_text × 1
            endpoints × 1
            flat_part_csv × 1
            flat_part_json × 1
            flat_row_count × 1
            flat_rows × 1
            output_digest × 17
            output_file(api_changes) × 1
            output_file(api_country) × 1
            output_file(api_facts) × 1
            output_file(api_index) × 1
            output_file(changes_feed) × 1
            output_file(country_feed) × 1
            output_file(data_csv) × 1
            output_file(data_json) × 1
            output_file(datapackage) × 1
            output_file(llms_full) × 1
            output_file(page_changes) × 1
            output_file(page_changes_md) × 1
            output_file(page_country) × 1
            output_file(page_country_md) × 1
            output_file(page_vat_reporting) × 1
            output_file(page_vat_reporting_md) × 1
            output_file(search_index) × 1
            page_context(changes) × 1
            page_context(country) × 1
            page_context(saft) × 1
            page_context(vat_reporting) × 1
            page_ids × 2
            page_layout × 2
            page_links × 6
            page_part(changes) × 122
            page_search_items × 1
            page_skeleton × 2
            part_is_plain × 61
            part_links × 122
            part_problems × 122
            reporting_table × 1
            twin_title × 3
            unreleased_country_changes × 1
            unreleased_country_changes_json × 1
            unreleased_counts × 1
            unreleased_erp_changes × 11
            unreleased_listed_in_full × 1
        "#]],
        expect![[r#"
            /api/v1/changes.json
            /api/v1/countries/it.json
            /api/v1/facts.json
            /api/v1/index.json
            /changes.xml
            /changes/index.html
            /changes/index.md
            /data/datapackage.json
            /data/reporting.csv
            /data/reporting.json
            /it/changes.xml
            /it/index.html
            /it/index.md
            /llms-full.txt
            /search-index.json
            /vat-reporting/index.html
            /vat-reporting/index.md
        "#]],
    );
}

/// After a template edit every country page makes its context itself (the fingerprint did not change,
/// so none was handed over); the next data edit must still render exactly the pages whose context changed,
/// with the new data, and the site must equal a clean build. Then a second data edit, back to the first
/// text, restores the bytes of the first build.
#[test]
fn a_data_edit_after_a_template_edit_renders_the_changed_pages_only() {
    let dir = copy_project();
    let root = dir.path();
    let mut session = session(root);
    let first = snapshot(&root.join("public"));
    let template = replace_once(root, "rules/templates/country.html", GLANCE, GLANCE_DERIVED);
    let report = session.rebuild(&[template]);
    assert!(matches!(report.outcome, Outcome::Built(_)), "{report}");
    let partners = read(root, "sources/tables/partners.csv");
    let mut rows = csv::Reader::from_reader(partners.as_bytes());
    let record = rows.records().next().unwrap().unwrap();
    let (country, summary) = (record[0].to_string(), record[4].to_string());
    let edited = format!("{summary} Edited after the template.");
    let path = replace_once(root, "sources/tables/partners.csv", &summary, &edited);
    let report = session.rebuild(std::slice::from_ref(&path));
    assert!(matches!(report.outcome, Outcome::Built(_)), "{report}");
    let country_pages: Vec<&String> = report
        .executed
        .iter()
        .filter(|e| e.starts_with("output_file(page_country"))
        .collect();
    assert_eq!(
        country_pages,
        ["output_file(page_country)", "output_file(page_country_md)"],
        "only {country}'s page and twin render again"
    );
    let page = String::from_utf8(
        std::fs::read(root.join(format!("public/{country}/index.html"))).unwrap(),
    )
    .unwrap();
    assert!(page.contains("Edited after the template."));
    assert!(page.contains("Obligations at a glance (derived)"));
    let clean = clean_build(root).expect("a clean build");
    let diff = differing(&snapshot(&root.join("public")), &clean);
    assert!(
        diff.is_empty(),
        "outputs differ from a clean build: {diff:?}"
    );
    // Both edits undone: every output is as the first build wrote it.
    replace_once(root, "sources/tables/partners.csv", &edited, &summary);
    let template = replace_once(root, "rules/templates/country.html", GLANCE_DERIVED, GLANCE);
    let report = session.rebuild(&[path, template]);
    assert!(matches!(report.outcome, Outcome::Built(_)), "{report}");
    let diff = differing(&snapshot(&root.join("public")), &first);
    assert!(
        diff.is_empty(),
        "outputs differ from the first build: {diff:?}"
    );
}

/// The ERP page template is read by the eleven ERP pages only.
#[test]
fn the_erp_page_template_rerenders_only_the_erp_pages() {
    let pages: Vec<String> = crate::common::ERP_IDS
        .iter()
        .map(|id| format!("/erp/{id}/index.html"))
        .collect();
    let pages: Vec<&str> = pages.iter().map(String::as_str).collect();
    assert_edit(
        "rules/templates/erp.html",
        "<h2>E-invoicing providers</h2>",
        "<h2>E-invoicing providers and connectors</h2>",
        // Each page makes its context again as it renders (see the country template's test).
        // The eleven changed pages are re-parsed; their links are unchanged.
        expect![[r#"
            compiled_templates × 1
            decoded_text × 1
            erp_history_context × 10
            output_digest × 11
            output_file(page_erp) × 11
            page_links × 11
            template_text × 1
        "#]],
        pages.iter().map(|p| format!("{p}\n")).collect::<String>(),
    );
}

/// The stylesheet is a file of its own: editing it re-runs its one query and rewrites it alone (the pages
/// link to it and do not change).
#[test]
fn the_stylesheet_rewrites_only_itself() {
    assert_edit(
        "rules/assets/site.css",
        "thead th { background: var(--soft); font-weight: 600; }",
        "thead th { background: #eee; font-weight: 600; }",
        expect![[r#"
            asset × 1
            decoded_text × 1
            output_digest × 1
            output_file(asset) × 1
        "#]],
        expect![[r#"
            /assets/site.css
        "#]],
    );
}

/// A release (what `locref release` writes: a new snapshot, its row in `releases.csv` and the version in
/// `site.toml`) diffs its own release only: no earlier release's snapshot is read again, and no earlier
/// release's diff, change set, page rows or feed entry is made again.
#[test]
fn a_new_release_diffs_only_itself() {
    let dir = copy_project();
    let root = dir.path();
    // Whatever the shipped sources hold that is not released yet is released first, so that the release
    // below holds exactly the one change this test makes.
    locref::cmd::release::release(
        root,
        "2099.1.1-0",
        "baseline",
        "2098-12-31T23:00:00Z",
        locref::cmd::release::NoChange::Allowed,
    )
    .expect("baseline release");
    let mut session = session(root);
    // A change to release: Australia's SAF-T becomes required (a fact text and a toggle).
    let facts = replace_once(
        root,
        "sources/tables/countries.csv",
        "no invoice-by-invoice submission to the ATO).",
        "no invoice-by-invoice submission to the ATO). SAF-T: required.",
    );
    let phase = replace_once(
        root,
        "sources/tables/obligations.csv",
        "au,saf-t,main,none,,,,,absence,",
        "au,saf-t,main,in-force,,,,,,",
    );
    let edited = session.rebuild(&[facts, phase]);
    assert!(matches!(edited.outcome, Outcome::Built(_)), "{edited}");
    let before = snapshot(&root.join("public"));
    let released = locref::cmd::release::release(
        root,
        "2099.1.1-1",
        "Australia: SAF-T required",
        "2099-01-01T00:00:00Z",
        locref::cmd::release::NoChange::Refused,
    )
    .expect("release");
    // The toggle, the fact's clause, and the phase's status and basis (the baseline recorded every
    // answer, so the phase is compared too).
    assert_eq!(released.changes, Some(4));
    // One new record: Australia's (every other country's is the last release's).
    assert_eq!(released.new_records.len(), 1, "{released:?}");
    let au_record = released.new_records[0].0.clone();
    let report = session.rebuild(&[
        root.join(&au_record),
        root.join("sources/releases/2099.1.1-1.index"),
        root.join("sources/releases/releases.csv"),
        root.join("rules/site.toml"),
    ]);
    assert_eq!(
        report.changed_inputs,
        [
            "rules/site.toml",
            "sources/releases/2099.1.1-1.index",
            au_record.as_str(),
            "sources/releases/releases.csv",
        ]
    );
    assert!(matches!(report.outcome, Outcome::Built(_)), "{report}");
    // The new snapshot is parsed and checked, and split by country; its 61 per-country diffs run (one
    // change set, one JSON fragment, one feed entry, one page and its twin), and of the 8 earlier
    // releases only the projections of the register re-run (their place in the chain, their times and
    // summaries: unchanged). The unreleased diffs of the 61 countries run against the new release (now
    // all empty). Every History is re-checked, and every country's and ERP's page context made again (a
    // History section's context is not kept, so one made again is not known to be unchanged until the
    // page's context is fingerprinted); only Australia's changed (its changes moved from "not released
    // yet" to the release), so only Australia's page and twin are rendered again.
    // `meta.version` changed: every API envelope is rendered again (an earlier release's change set is
    // re-serialized from its cached value, not diffed again), and so are the documents that name the
    // version (openapi.json, whose {version} parameter gains a value, the API docs page, llms.txt, the
    // data package). New outputs: every page's links are resolved again against the list of outputs,
    // and the sitemap lists the new page. The release opens a new year (2099): its archive page is new,
    // and the 2098 page gains its link to it; the 2026 page's context is made again but is the same, so
    // that page is not rendered again. The data page's context reads the list of outputs, which gains
    // the release's: it is made again, the same, and the page is not rendered again.
    expect![[r#"
        base_url × 1
        broken_links × 239
        check_releases × 1
        check_releases_from_the_end × 1
        check_routes × 1
        check_unread_files × 1
        condensed_twin × 7
        country_day × 1
        country_history_context × 61
        decoded_text × 4
        endpoints × 1
        erp_history_context × 11
        feed_time × 19
        file × 681
        last_release × 1
        latest_release_rows × 1
        meta_base × 1
        openapi_document × 1
        output_digest × 290
        output_file(api_calendar) × 1
        output_file(api_changes) × 1
        output_file(api_countries) × 1
        output_file(api_country) × 61
        output_file(api_erp) × 11
        output_file(api_erps) × 1
        output_file(api_facts) × 1
        output_file(api_filter) × 7
        output_file(api_index) × 1
        output_file(api_local_erps) × 1
        output_file(api_news) × 1
        output_file(api_on_date) × 19
        output_file(api_on_dates) × 1
        output_file(api_partner_flags) × 1
        output_file(api_partners) × 1
        output_file(api_regimes) × 1
        output_file(api_release) × 19
        output_file(api_releases) × 1
        output_file(api_sponsors) × 1
        output_file(api_toggles) × 1
        output_file(calendar) × 1
        output_file(changes_feed) × 1
        output_file(country_calendar) × 61
        output_file(country_feed) × 61
        output_file(data_licence) × 1
        output_file(data_readme) × 1
        output_file(datapackage) × 1
        output_file(erp_feed) × 11
        output_file(headers) × 1
        output_file(llms) × 1
        output_file(llms_full) × 1
        output_file(openapi) × 1
        output_file(page_api) × 1
        output_file(page_api_md) × 1
        output_file(page_changes) × 1
        output_file(page_changes_md) × 1
        output_file(page_country) × 1
        output_file(page_country_md) × 1
        output_file(page_release) × 1
        output_file(page_release_md) × 1
        output_file(page_release_year) × 2
        output_file(page_release_year_md) × 2
        output_file(page_search) × 1
        output_file(page_search_md) × 1
        output_file(search_index) × 1
        output_file(sitemap) × 1
        output_paths × 1
        outputs × 1
        page_context(api) × 1
        page_context(changes) × 1
        page_context(country) × 61
        page_context(data) × 1
        page_context(erp) × 10
        page_context(licence) × 1
        page_context(release) × 1
        page_context(release_year) × 3
        page_context(search) × 1
        page_context(sponsors) × 1
        page_ids × 2
        page_layout × 2
        page_links × 14
        page_search_items × 45
        page_skeleton × 2
        part_problems × 88
        previous_release × 19
        published_csv × 9
        recent_releases × 1
        record_summary × 1
        reference_date × 1
        release_changes × 1
        release_changes_json × 1
        release_country_changes × 61
        release_feed_entry × 1
        release_files × 1
        release_listing_json × 1
        release_register × 1
        release_subjects × 1
        release_summary × 19
        release_time × 19
        release_versions × 1
        release_year_links × 1
        release_years × 1
        released_country_history × 61
        released_erp_history × 11
        releases × 1
        site_context × 1
        site_day × 1
        site_rules × 1
        snapshot_codes × 1
        snapshot_digest × 1
        snapshot_index × 1
        snapshot_record × 61
        snapshot_size × 1
        toggle_labels × 1
        twin_title × 7
        unreleased_codes × 1
        unreleased_country_changes × 61
        unreleased_country_changes_json × 1
        unreleased_counts × 1
        unreleased_erp_changes × 11
        unreleased_listed_in_full × 1
    "#]]
    .assert_eq(&executed_lines(&report.executed));
    let written: BTreeSet<&str> = report.written().iter().map(String::as_str).collect();
    let envelopes: BTreeSet<String> = before
        .keys()
        .filter(|p| p.starts_with("api/v1/"))
        .map(|p| format!("/{p}"))
        .chain(["/api/v1/releases/2099.1.1-1.json".to_string()])
        .collect();
    assert!(
        envelopes.iter().all(|p| written.contains(p.as_str())),
        "every envelope carries the new version"
    );
    let others: String = written
        .iter()
        .filter(|p| !p.starts_with("/api/v1/"))
        .map(|p| format!("{p}\n"))
        .collect();
    expect![[r#"
        /api/index.html
        /api/index.md
        /api/openapi.json
        /au/changes.xml
        /au/index.html
        /au/index.md
        /changes.xml
        /changes/2099.1.1-1/index.html
        /changes/2099.1.1-1/index.md
        /changes/archive/2098/index.html
        /changes/archive/2098/index.md
        /changes/archive/2099/index.html
        /changes/archive/2099/index.md
        /changes/index.html
        /changes/index.md
        /data/datapackage.json
        /llms-full.txt
        /llms.txt
        /search-index.json
        /search/index.html
        /search/index.md
        /sitemap.xml
    "#]]
    .assert_eq(&others);
    let changes: serde_json::Value =
        serde_json::from_str(&read(root, "public/api/v1/releases/2099.1.1-1.json")).unwrap();
    assert_eq!(changes["data"]["previous"], "2099.1.1-0");
    assert_eq!(changes["data"]["change_count"], 4);
    let kinds: Vec<(&str, Option<&str>)> = changes["data"]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["kind"].as_str().unwrap(), c["field"].as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("toggle_flipped", None),
            ("value_changed", None),
            ("value_changed", Some("status")),
            ("value_changed", Some("basis"))
        ]
    );
    let unreleased: serde_json::Value =
        serde_json::from_str(&read(root, "public/api/v1/changes.json")).unwrap();
    assert_eq!(unreleased["data"][0]["release"], "2099.1.1-1");
}

/// A touch and an editor's atomic save of identical bytes: nothing re-runs, nothing is written.
#[test]
fn touch_and_identical_atomic_save_change_nothing() {
    let dir = copy_project();
    let root = dir.path();
    let mut session = session(root);
    let before = snapshot(&root.join("public"));
    let manifest = crate::common::manifest_bytes(root);

    let matrix = root.join("sources/tables/matrix.csv");
    let file = std::fs::File::options()
        .append(true)
        .open(&matrix)
        .expect("open");
    file.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(60))
        .expect("touch");
    drop(file);
    let touched = session.rebuild(std::slice::from_ref(&matrix));
    assert_eq!(touched.outcome, Outcome::Unchanged, "{touched}");
    assert!(
        touched.changed_inputs.is_empty() && touched.executed.is_empty(),
        "{touched}"
    );

    let rules = root.join("rules/toggles.toml");
    atomic_save(&rules, read(root, "rules/toggles.toml").as_bytes());
    // The watcher reports the rename's target and, at most, the temporary name (noise, ignored).
    let saved = session.rebuild(&[rules.clone(), rules.with_file_name(".toggles.toml.tmp")]);
    assert_eq!(saved.outcome, Outcome::Unchanged, "{saved}");
    assert!(saved.executed.is_empty(), "{saved}");

    // A whole-folder hint (a watcher overflow) and a rescan find nothing either.
    let folder = session.rebuild(&[root.join("sources")]);
    assert_eq!(folder.outcome, Outcome::Unchanged, "{folder}");
    let rescan = session.rescan();
    assert_eq!(rescan.outcome, Outcome::Unchanged, "{rescan}");

    assert!(differing(&before, &snapshot(&root.join("public"))).is_empty());
    assert_eq!(
        crate::common::manifest_bytes(root),
        manifest,
        "the manifest is not rewritten"
    );
}

/// An invalid source writes nothing and keeps the last good output; the fix recovers.
#[test]
fn a_broken_source_keeps_the_last_good_output_and_the_fix_recovers() {
    let dir = copy_project();
    let root = dir.path();
    let mut session = session(root);
    let before = snapshot(&root.join("public"));
    let original = read(root, "sources/tables/matrix.csv");

    let path = replace_once(
        root,
        "sources/tables/matrix.csv",
        "de,sage-intacct,native,",
        "de,sage-intacct,bogus,",
    );
    let broken = session.rebuild(std::slice::from_ref(&path));
    let Outcome::Invalid(diagnostics) = &broken.outcome else {
        panic!("expected errors: {broken}")
    };
    assert!(
        diagnostics
            .iter()
            .any(|d| d.path == "sources/tables/matrix.csv" && d.message.contains("bogus")),
        "{diagnostics:?}"
    );
    assert!(
        differing(&before, &snapshot(&root.join("public"))).is_empty(),
        "nothing written while broken"
    );

    // Touching the broken file again runs no query, reports the errors again and writes nothing.
    let touched = session.rebuild(std::slice::from_ref(&path));
    assert_eq!(touched.outcome, broken.outcome);
    assert!(
        touched.changed_inputs.is_empty() && touched.executed.is_empty(),
        "{touched}"
    );

    atomic_save(&path, original.as_bytes());
    let fixed = session.rebuild(std::slice::from_ref(&path));
    assert!(matches!(fixed.outcome, Outcome::Built(_)), "{fixed}");
    assert!(
        fixed.written().is_empty(),
        "the same bytes as before the break: {fixed}"
    );
    assert!(differing(&before, &snapshot(&root.join("public"))).is_empty());
}

/// Deleting a file and creating it again go through the file list: the deletion is an error, the
/// re-creation recovers; an editor's swap file is never an input.
#[test]
fn deleting_and_recreating_a_file() {
    let dir = copy_project();
    let root = dir.path();
    let mut session = session(root);
    let before = snapshot(&root.join("public"));
    let partners = root.join("sources/tables/partners.csv");
    let bytes = std::fs::read(&partners).expect("read");

    let swap = root.join("sources/tables/.partners.csv.swp");
    std::fs::write(&swap, b"junk").expect("swap file");
    assert_eq!(
        session.rebuild(std::slice::from_ref(&swap)).outcome,
        Outcome::Unchanged
    );

    std::fs::remove_file(&partners).expect("delete");
    let deleted = session.rebuild(std::slice::from_ref(&partners));
    assert_eq!(deleted.changed_inputs, ["sources/tables/partners.csv"]);
    assert!(matches!(deleted.outcome, Outcome::Invalid(_)), "{deleted}");

    std::fs::write(&partners, &bytes).expect("recreate");
    let created = session.rebuild(std::slice::from_ref(&partners));
    assert!(matches!(created.outcome, Outcome::Built(_)), "{created}");
    assert!(created.written().is_empty(), "{created}");
    assert!(differing(&before, &snapshot(&root.join("public"))).is_empty());
}

// ---------------------------------------------------------------------------------------------------
// Correctness: random edit sequences, then byte-for-byte comparison with a clean build.

/// Free-text columns that any text may go into: (file, column index).
const TEXT_CELLS: [(&str, usize); 7] = [
    ("sources/tables/countries.csv", 2),
    ("sources/tables/matrix.csv", 4),
    ("sources/tables/partners.csv", 4),
    ("sources/tables/local_erps.csv", 3),
    ("sources/tables/vat.csv", 5),
    ("sources/tables/connectors.csv", 10),
    ("sources/tables/obligations.csv", 5),
];

/// Tables where a row may be added (a copy under a new name: column 1 for local ERPs, 2 for partners)
/// or deleted without breaking a cross-file rule.
const ROW_TABLES: [(&str, usize); 2] = [
    ("sources/tables/local_erps.csv", 1),
    ("sources/tables/partners.csv", 2),
];

/// Files that an edit can break (and a later edit fix).
const BREAKABLE: [&str; 7] = [
    "sources/tables/matrix.csv",
    "sources/tables/obligations.csv",
    "rules/toggles.toml",
    "sources/registers/erps.json",
    "sources/tables/vat.csv",
    // A release's index edited by hand, and the register of the releases.
    "sources/releases/2026.11.23-7.index",
    "sources/releases/releases.csv",
];

#[derive(Debug, Clone)]
enum Edit {
    /// Appends a marker to one free-text cell.
    Cell {
        table: usize,
        row: usize,
        mark: u8,
    },
    /// Flips one country's SAF-T between "none" and "in-force", in its phase and in its fact's clause
    /// (a toggle, so lists and filters change); with `clause: false`, only the phase, which makes the
    /// clause contradict it (an error).
    FlipSaft {
        row: usize,
        clause: bool,
    },
    /// Adds a planned phase to one obligation of one country (or, beside a `none` or `unclear` phase, a
    /// contradiction).
    AddPhase {
        row: usize,
        mark: u8,
    },
    AddRow {
        table: usize,
        row: usize,
        mark: u8,
    },
    DeleteRow {
        table: usize,
        row: usize,
    },
    /// Breaks a file, rebuilds (expecting errors), then restores it.
    BreakThenFix {
        file: usize,
    },
    /// `locref release` of the current sources: a new snapshot, its row, the version in `site.toml`.
    Release,
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        3 => (0..TEXT_CELLS.len(), any::<usize>(), any::<u8>())
            .prop_map(|(table, row, mark)| Edit::Cell { table, row, mark }),
        2 => (any::<usize>(), prop::bool::weighted(0.8))
            .prop_map(|(row, clause)| Edit::FlipSaft { row, clause }),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(row, mark)| Edit::AddPhase { row, mark }),
        1 => (0..ROW_TABLES.len(), any::<usize>(), any::<u8>())
            .prop_map(|(table, row, mark)| Edit::AddRow { table, row, mark }),
        1 => (0..ROW_TABLES.len(), any::<usize>()).prop_map(|(table, row)| Edit::DeleteRow { table, row }),
        1 => (0..BREAKABLE.len()).prop_map(|file| Edit::BreakThenFix { file }),
        1 => Just(Edit::Release),
    ]
}

fn parse_line(line: &str) -> Vec<String> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(line.as_bytes());
    reader
        .records()
        .next()
        .expect("a record")
        .expect("valid csv")
        .iter()
        .map(str::to_string)
        .collect()
}

fn write_line(fields: &[String]) -> String {
    let mut writer = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    writer.write_record(fields).expect("write");
    String::from_utf8(writer.into_inner().expect("flush"))
        .expect("utf-8")
        .trim_end_matches('\n')
        .to_string()
}

/// Rewrites the data lines (after the header) of a CSV file with `f`; saves atomically or in place.
fn edit_rows(root: &Path, rel: &str, atomic: bool, f: impl FnOnce(&mut Vec<String>)) -> PathBuf {
    let text = read(root, rel);
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut rows = lines.split_off(1);
    f(&mut rows);
    lines.extend(rows);
    let mut out = lines.join("\n");
    out.push('\n');
    let path = root.join(rel);
    if atomic {
        atomic_save(&path, out.as_bytes())
    } else {
        std::fs::write(&path, out).expect("write")
    }
    path
}

/// Applies `edit` on disk; returns the paths a watcher would report. `BreakThenFix` also rebuilds the
/// broken state through `session`.
fn apply(session: &mut Session, root: &Path, edit: &Edit, atomic: bool) -> Vec<PathBuf> {
    match *edit {
        Edit::Cell { table, row, mark } => {
            let (rel, column) = TEXT_CELLS[table];
            vec![edit_rows(root, rel, atomic, |rows| {
                let i = row % rows.len();
                let mut fields = parse_line(&rows[i]);
                fields[column] = format!("{} (rev {mark}, \"quoted\", comma)", fields[column]);
                rows[i] = write_line(&fields);
            })]
        }
        Edit::FlipSaft { row, clause } => {
            // The countries whose SAF-T is one phase, "none" or "in-force", and whose fact says so.
            let facts = read(root, "sources/tables/countries.csv");
            let phases = read(root, "sources/tables/obligations.csv");
            let flippable: Vec<(String, bool)> = phases
                .lines()
                .filter_map(|line| {
                    let fields = parse_line(line);
                    let code = fields[0].clone();
                    let one = phases.matches(&format!("\n{code},saf-t,")).count() == 1;
                    let none = fields[1] == "saf-t" && fields[3] == "none";
                    let in_force = fields[1] == "saf-t" && fields[3] == "in-force";
                    let fact = facts.lines().find(|l| {
                        l.starts_with(&format!("{code},Periodic / real-time reporting,"))
                    })?;
                    let says = if none {
                        "SAF-T: no."
                    } else {
                        "SAF-T: required."
                    };
                    (one && (none || in_force) && fact.contains(says)).then_some((code, none))
                })
                .collect();
            let (code, none) = flippable[row % flippable.len()].clone();
            let (from, to) = if none {
                ("none", "in-force")
            } else {
                ("in-force", "none")
            };
            let mut paths = vec![edit_rows(
                root,
                "sources/tables/obligations.csv",
                atomic,
                |rows| {
                    let prefix = format!("{code},saf-t,main,{from},");
                    let i = rows.iter().position(|r| r.starts_with(&prefix)).unwrap();
                    rows[i] = rows[i].replacen(&prefix, &format!("{code},saf-t,main,{to},"), 1);
                },
            )];
            if clause {
                paths.push(edit_rows(
                    root,
                    "sources/tables/countries.csv",
                    atomic,
                    |rows| {
                        let prefix = format!("{code},Periodic / real-time reporting,");
                        let i = rows.iter().position(|r| r.starts_with(&prefix)).unwrap();
                        rows[i] = if none {
                            rows[i].replacen("SAF-T: no.", "SAF-T: required.", 1)
                        } else {
                            rows[i].replacen("SAF-T: required.", "SAF-T: no.", 1)
                        };
                    },
                ));
            }
            paths
        }
        Edit::AddPhase { row, mark } => vec![edit_rows(
            root,
            "sources/tables/obligations.csv",
            atomic,
            |rows| {
                let i = row % rows.len();
                let mut fields = parse_line(&rows[i]);
                fields[2] = format!("added-{mark}");
                fields[3] = "planned".into();
                fields[4] = "2031".into();
                fields[5] = format!("added phase {mark}");
                rows.insert(i + 1, write_line(&fields));
            },
        )],
        Edit::AddRow { table, row, mark } => {
            let (rel, name_column) = ROW_TABLES[table];
            vec![edit_rows(root, rel, atomic, |rows| {
                if rows.is_empty() {
                    return;
                }
                let i = row % rows.len();
                let mut fields = parse_line(&rows[i]);
                fields[name_column] = format!("Added {mark} {}", rows.len());
                rows.insert(i + 1, write_line(&fields));
            })]
        }
        Edit::DeleteRow { table, row } => {
            let (rel, _) = ROW_TABLES[table];
            vec![edit_rows(root, rel, atomic, |rows| {
                if rows.len() > 1 {
                    rows.remove(row % rows.len());
                }
            })]
        }
        Edit::BreakThenFix { file } => {
            let rel = BREAKABLE[file];
            let path = root.join(rel);
            let good = std::fs::read(&path).expect("read");
            let mut bad = good.clone();
            bad.extend_from_slice(b"\n\"unterminated, [ {{ = broken\n");
            if atomic {
                atomic_save(&path, &bad)
            } else {
                std::fs::write(&path, &bad).expect("write")
            }
            let broken = session.rebuild(std::slice::from_ref(&path));
            assert!(
                matches!(broken.outcome, Outcome::Invalid(_)),
                "breaking {rel} must be an error: {broken}"
            );
            std::fs::write(&path, &good).expect("fix");
            vec![path]
        }
        Edit::Release => {
            // The next version and a time after the last release's.
            let register = read(root, "sources/releases/releases.csv");
            let last = register.lines().last().expect("a release");
            let version = last.split(',').next().expect("a version");
            let (stem, n) = version.rsplit_once('-').expect("YYYY.MM.DD-N");
            let next = format!("{stem}-{}", n.parse::<u32>().expect("N") + 1);
            let last_at: jiff::Timestamp = last
                .split(',')
                .nth(1)
                .and_then(|t| t.parse().ok())
                .expect("a release time");
            let time = (last_at + jiff::SignedDuration::from_mins(1)).to_string();
            // A step with no edit since the last release records none: allowed, with its note.
            let released = locref::cmd::release::release(
                root,
                &next,
                "random edit",
                &time,
                locref::cmd::release::NoChange::Allowed,
            );
            match released {
                Ok(released) => released
                    .new_records
                    .iter()
                    .map(|(record, _)| root.join(record))
                    .chain([
                        root.join(&released.snapshot),
                        root.join("sources/releases/releases.csv"),
                        root.join("rules/site.toml"),
                    ])
                    .collect(),
                // The sources do not check clean (a pending break batched with this step): nothing was
                // written.
                Err(locref::cmd::release::ReleaseError::Invalid(_)) => Vec::new(),
                Err(e) => panic!("release {next}: {e:?}"),
            }
        }
    }
}

/// A change made to the output folder behind the session's back, in the same batch as the edits (a
/// `git checkout` in a project that tracks its built folder): an output deleted or defaced, or the
/// folder of one removed whole. The index picks among the files the folder holds then.
#[derive(Debug, Clone)]
enum OutputChange {
    Delete(prop::sample::Index),
    Deface(prop::sample::Index),
    RemoveFolder(prop::sample::Index),
}

fn output_change() -> impl Strategy<Value = OutputChange> {
    prop_oneof![
        any::<prop::sample::Index>().prop_map(OutputChange::Delete),
        any::<prop::sample::Index>().prop_map(OutputChange::Deface),
        any::<prop::sample::Index>().prop_map(OutputChange::RemoveFolder),
    ]
}

/// Makes `change` in the output folder of `root`; returns the path a watcher reports.
fn apply_to_output(root: &Path, change: &OutputChange) -> PathBuf {
    let site = root.join("public");
    let files: Vec<String> = snapshot(&site).into_keys().collect();
    let (OutputChange::Delete(index)
    | OutputChange::Deface(index)
    | OutputChange::RemoveFolder(index)) = change;
    let file = site.join(index.get(&files));
    match change {
        OutputChange::Delete(_) => {
            std::fs::remove_file(&file).unwrap();
            file
        }
        OutputChange::Deface(_) => {
            std::fs::write(&file, b"defaced").unwrap();
            file
        }
        OutputChange::RemoveFolder(_) => {
            let folder = file.parent().unwrap().to_path_buf();
            if folder == site {
                std::fs::remove_file(&file).unwrap();
                return file;
            }
            std::fs::remove_dir_all(&folder).unwrap();
            folder
        }
    }
}

/// A fresh project loaded from the same files: its build, or its diagnostics.
/// A clean build of the same files by the other path: a one-off `locref build --clean`, which keeps
/// nothing between outputs (parts evicted, `llms-full.txt` made as the twins come).
fn clean_build(root: &Path) -> Result<BTreeMap<String, Vec<u8>>, Vec<String>> {
    crate::common::one_off_build(root, "clean")
}

fn diagnostics_of(report: &RebuildReport) -> Option<Vec<String>> {
    match &report.outcome {
        Outcome::Invalid(d) => Some(d.iter().map(ToString::to_string).collect()),
        Outcome::IoError(e) => panic!("i/o error: {e}"),
        _ => None,
    }
}

/// Cases of the random-edit test: a few for a developer's `cargo test`; `LOCREF_RANDOM_EDIT_CASES` (or
/// `PROPTEST_CASES`) raises it (`.ci/run` sets 256).
fn random_edit_cases() -> u32 {
    ["LOCREF_RANDOM_EDIT_CASES", "PROPTEST_CASES"]
        .into_iter()
        .find_map(|name| std::env::var(name).ok()?.parse().ok())
        .unwrap_or(24)
}

/// The project and the watch session the random-edit cases share: each case starts from the shipped
/// files (put back, then one incremental rebuild), so a case costs its edits and the clean build it is
/// compared with, not a first build of its own; and the session lives through every case, as a
/// curator's does through a day of edits.
struct Warm {
    dir: tempfile::TempDir,
    session: Session,
    /// Every file under `sources/` and `rules/` as shipped, by project-relative path.
    shipped: BTreeMap<String, Vec<u8>>,
}

thread_local! {
    static WARM: std::cell::RefCell<Option<Warm>> = const { std::cell::RefCell::new(None) };
}

/// The input files of the project at `root`, by project-relative path.
fn inputs(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    for dir in ["sources", "rules"] {
        for (path, bytes) in snapshot(&root.join(dir)) {
            files.insert(format!("{dir}/{path}"), bytes);
        }
    }
    files
}

/// Runs `case` on the shared session, after putting the shipped files back.
fn with_warm_session<R>(case: impl FnOnce(&Path, &mut Session) -> R) -> R {
    WARM.with(|warm| {
        let mut warm = warm.borrow_mut();
        let warm = warm.get_or_insert_with(|| {
            let dir = copy_project();
            let session = session(dir.path());
            let shipped = inputs(dir.path());
            Warm {
                dir,
                session,
                shipped,
            }
        });
        let root = warm.dir.path().to_path_buf();
        let mut changed = Vec::new();
        for (path, bytes) in inputs(&root) {
            if warm.shipped.get(&path) != Some(&bytes) {
                let file = root.join(&path);
                match warm.shipped.get(&path) {
                    Some(shipped) => std::fs::write(&file, shipped).unwrap(),
                    None => std::fs::remove_file(&file).unwrap(),
                }
                changed.push(file);
            }
        }
        for (path, bytes) in &warm.shipped {
            let file = root.join(path);
            if !file.exists() {
                std::fs::create_dir_all(file.parent().unwrap()).unwrap();
                std::fs::write(&file, bytes).unwrap();
                changed.push(file);
            }
        }
        if !changed.is_empty() {
            let back = warm.session.rebuild(&changed);
            assert!(
                matches!(back.outcome, Outcome::Built(_)),
                "back to the shipped files: {back}"
            );
        }
        case(&root, &mut warm.session)
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: random_edit_cases(), max_shrink_iters: 32, ..ProptestConfig::default() })]

    /// After any sequence of edits (some batched into one rebuild, some saved atomically), some of them
    /// batched with outputs deleted or defaced behind the session's back, every output is byte-identical
    /// to a clean build of the same files; when the last files have errors, the output folder is the
    /// last good build, whatever was done to it meanwhile.
    #[test]
    fn incremental_rebuilds_equal_a_clean_build(
        steps in prop::collection::vec(
            (edit(), any::<bool>(), any::<bool>(), prop::option::weighted(0.3, output_change())),
            1..7,
        )
    ) {
        with_warm_session(|root, session| {
            let site = root.join("public");
            let mut last_good = snapshot(&site);
            let mut pending: Vec<PathBuf> = Vec::new();
            let mut outputs: Vec<PathBuf> = Vec::new();
            let mut last_diagnostics: Option<Vec<String>> = None;
            let mut rebuild = |session: &mut Session, pending: &[PathBuf], outputs: &[PathBuf]| {
                let report = session.rebuild_batch(Some(pending), outputs);
                let diagnostics = diagnostics_of(&report);
                if diagnostics.is_none() {
                    last_good = snapshot(&site);
                }
                diagnostics
            };
            for (edit, atomic, batch_with_next, output) in &steps {
                pending.extend(apply(session, root, edit, *atomic));
                outputs.extend(output.iter().map(|change| apply_to_output(root, change)));
                if !batch_with_next {
                    last_diagnostics = rebuild(session, &std::mem::take(&mut pending), &std::mem::take(&mut outputs));
                }
            }
            if !pending.is_empty() || !outputs.is_empty() {
                last_diagnostics = rebuild(session, &pending, &outputs);
            }
            let incremental = snapshot(&site);
            match clean_build(root) {
                Ok(clean) => {
                    prop_assert!(last_diagnostics.is_none(), "clean build ok, session had errors: {last_diagnostics:?}");
                    let diff = differing(&incremental, &clean);
                    prop_assert!(diff.is_empty(), "outputs differ from a clean build: {diff:?}");
                }
                Err(clean_diagnostics) => {
                    prop_assert_eq!(last_diagnostics, Some(clean_diagnostics));
                    let diff = differing(&incremental, &last_good);
                    prop_assert!(diff.is_empty(), "outputs differ from the last good build: {diff:?}");
                }
            }
            Ok(())
        })?;
    }
}

/// A one-off build (`locref build`, `locref check`) evicts each output's bytes and each page's context
/// once written, and the parts a list is spliced from once the list has them, to hold less than the site:
/// this must never cost a second rendering.
#[test]
fn a_one_off_build_renders_each_output_and_each_page_context_once() {
    let dir = copy_project();
    assert_one_off_build_makes_everything_once(dir.path());
}

/// A one-off build hands a twin made of parts to `llms-full.txt` as its parts come; when a later part
/// holds a row the file condenses, the file takes back what it took of the twin and condenses the twin
/// whole: the same bytes as a session's build, which condenses it whole from the start.
#[test]
fn a_twin_made_of_parts_with_a_row_to_condense_is_condensed_in_a_one_off_build_too() {
    let dir = copy_project();
    let root = dir.path();
    // A row that says only "unknown/unverified", in the fourth of the partners page's five parts (dk,
    // fi, it, ro, sa): three parts are in the file when it shows.
    replace_once(
        root,
        "rules/templates/macros.md",
        "{% macro partner_rows(partners) %}\n",
        "{% macro partner_rows(partners) %}\n{% if partners[0].country == \"ro\" %}| Placeholder | unknown/unverified |\n{% endif %}",
    );
    let _session = session(root);
    let in_session = snapshot(&root.join("public"));
    let clean = clean_build(root).expect("a clean build");
    let llms = String::from_utf8(clean["llms-full.txt"].clone()).unwrap();
    assert!(
        llms.contains("Not established (unknown/unverified) for: Placeholder."),
        "the row is condensed"
    );
    assert!(!llms.contains("| Placeholder |"));
    assert_eq!(
        llms.matches("/partners/index.md\n").count(),
        1,
        "the twin once"
    );
    let twin = String::from_utf8(clean["partners/index.md"].clone()).unwrap();
    assert!(
        twin.contains("| Placeholder | unknown/unverified |"),
        "the twin has the row"
    );
    let diff = differing(&in_session, &clean);
    assert!(
        diff.is_empty(),
        "one-off and session builds differ: {diff:?}"
    );
}

/// Every output is rendered exactly once (`llms-full.txt` never whole: it is made piece by piece as the
/// twins come), every page context (shared by a page and its twin) made once, what the site-wide outputs
/// read of each page (its links, a twin's title and condensed text, a page's search items) read once,
/// and each part of a spliced list (a country's part of each CSV file; each History section; each CSV
/// file's digest) made once; `facts.json`, `changes.json` and the flat JSON files are handed over piece
/// by piece as `llms-full.txt` is. The shipped site is one batch; the
/// x10 dataset's is several (`scale::`).
pub(crate) fn assert_one_off_build_makes_everything_once(root: &Path) {
    let mut project =
        locref::workspace::Project::load(root, &locref::locref_site::SITE).expect("load");
    let mut handed_over: Vec<String> = Vec::new();
    let built = locref::build::Profile::OneOff
        .plan(&SITE)
        .check(&mut project.db, |path| {
            handed_over.push(path.to_string());
        });
    let db = &project.db;
    let outputs = locref::routes::outputs(db);
    assert!(matches!(built, Ok(n) if n == outputs.len()), "{built:?}");
    let mut paths: Vec<&str> = outputs.iter().map(|o| o.path.as_str()).collect();
    paths.sort();
    handed_over.sort();
    assert_eq!(handed_over, paths, "every output handed over once");

    let executed = locref::render::take_executed(db);
    let count = |name: &str| executed.iter().filter(|e| *e == name).count();
    use locref::render::pages::parts::is_made_of_parts;
    // No twin made of parts has a row that `llms-full.txt` condenses here (such a twin is made whole
    // for it once: `a_twin_made_of_parts_with_a_row_to_condense_is_condensed_in_a_one_off_build_too`).
    for output in outputs
        .iter()
        .filter(|o| is_made_of_parts(o) && o.path.ends_with("/index.md"))
    {
        let text =
            String::from_utf8_lossy(&locref::render::render(db, output).bytes()).into_owned();
        assert_eq!(
            locref::render::llms::condense_unknown_rows(&text),
            text,
            "{} has a row to condense",
            output.path
        );
    }
    let mut renderers: BTreeMap<String, usize> = BTreeMap::new();
    let mut pages: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for output in outputs {
        // `llms-full.txt`, the site-wide lists and the pages that print their parts are handed over
        // piece by piece, never made whole.
        let whole = !locref::render::is_streamed_list(output)
            && !locref::render::pages::parts::prints_its_parts(db, output);
        *renderers.entry(output.renderer().name()).or_default() += usize::from(whole);
        if let locref::render::Renderer::Page(kind, _) = output.renderer() {
            let kind: &str = kind.into();
            pages
                .entry(kind.to_string())
                .or_default()
                .insert(output.param.clone().unwrap_or_default());
        }
    }
    for (renderer, n) in &renderers {
        let expected = if renderer == "llms_full" { 0 } else { *n };
        assert_eq!(
            count(&format!("output_file({renderer})")),
            expected,
            "{renderer}"
        );
    }
    for (kind, params) in &pages {
        assert_eq!(
            count(&format!("page_context({kind})")),
            params.len(),
            "page_context({kind})"
        );
    }
    let with_suffix = |suffix: &str| outputs.iter().filter(|o| o.path.ends_with(suffix)).count();
    assert_eq!(
        count("page_links"),
        with_suffix(".html") + with_suffix(".md")
    );
    assert_eq!(count("twin_title"), with_suffix("/index.md"));
    let parted_twins = outputs
        .iter()
        .filter(|o| o.path.ends_with("/index.md"))
        .filter(|o| locref::render::pages::parts::prints_its_parts(db, o))
        .count();
    assert!(parted_twins >= 3, "the partners, local ERPs and news twins");
    assert_eq!(
        count("condensed_twin"),
        with_suffix("/index.md") - parted_twins
    );
    assert_eq!(count("page_search_items"), with_suffix(".html"));
    // The parts of the spliced lists and sections, each made once; the parts of the lists handed over
    // piece by piece (`facts.json`, `changes.json`, the flat JSON files) are made for the occasion,
    // not by the queries a session keeps them in.
    let countries = pages["country"].len();
    assert!(renderers["api_facts"] == 0 && renderers["api_changes"] == 0);
    assert_eq!(count("country_facts_json"), 0);
    assert_eq!(count("country_history_context"), countries);
    assert_eq!(count("erp_history_context"), pages["erp"].len());
    assert_eq!(count("unreleased_country_changes_json"), 0);
    let csv_files = with_suffix(".csv");
    assert_eq!(count("csv_digest"), csv_files);
    // Every flat table but `connectors` has a part per country.
    assert_eq!(count("flat_part_csv"), (csv_files - 1) * countries + 1);
    assert_eq!(count("flat_part_json"), 0);
    // The pages made of parts, each part rendered once and parsed once: the /changes/ page and twin
    // (one part per country when there are unreleased changes, none otherwise), the partners and local
    // ERPs pages (one per country with any) and the news page (a few hundred items each).
    use locref::render::PageKind;
    let per_format = |kind| locref::render::pages::parts::parts_per_format(db, kind);
    let changes = count("page_part(changes)");
    assert!(
        changes == 0 || changes == 2 * locref::history::unreleased_codes(db).len(),
        "{changes} parts of the changes page"
    );
    // The first column of partners.csv is the country code.
    let partners_csv = std::fs::read_to_string(root.join("sources/tables/partners.csv")).unwrap();
    let partner_countries: BTreeSet<&str> = partners_csv
        .lines()
        .skip(1)
        .filter_map(|line| line.split(',').next())
        .collect();
    assert!(!partner_countries.is_empty());
    assert_eq!(per_format(PageKind::Partners), partner_countries.len());
    for (kind, name) in [
        (PageKind::Partners, "partners"),
        (PageKind::LocalErps, "local_erps"),
        (PageKind::News, "news"),
    ] {
        assert!(per_format(kind) > 0, "{name}");
        assert_eq!(
            count(&format!("page_part({name})")),
            2 * per_format(kind),
            "{name}"
        );
    }
    let parts = executed
        .iter()
        .filter(|e| e.starts_with("page_part("))
        .count();
    assert_eq!(count("part_links"), parts);
}
