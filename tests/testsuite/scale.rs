//! The larger datasets (x10, see `common::scale`) and what keeps a build of them cheap: `locref check`
//! passes on the x10 dataset, the generator is deterministic and keeps every shipped table, a `locref
//! build` with nothing changed since the last build into that folder writes nothing and stops early, and
//! any changed input, option or locref builds again. The random-edit property test also runs on the x10
//! dataset (ignored by a plain `cargo test`; `.ci/run` runs it).

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::scale::{Grown, grow, scaled_project};
use crate::common::{FIXED_TIME, copy_dir, copy_project, snapshot};
use locref::locref_site::SITE;
use locref::session::{Outcome, Session};
use proptest::prelude::*;

const EPOCH: &str = "1790000000";

fn locref(project: &Path, args: &[&str]) -> Output {
    crate::common::locref(project, args, EPOCH)
}

fn locref_with(binary: &Path, project: &Path, args: &[&str]) -> Output {
    crate::common::locref_binary(binary, project, args, EPOCH)
}

fn stdout(run: &Output) -> String {
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    String::from_utf8_lossy(&run.stdout).into_owned()
}

/// The counts of the closing line `built DIR: W written, U unchanged, R removed in T ms`.
fn built(run: &Output) -> (usize, usize, usize) {
    let text = stdout(run);
    let line = text.lines().last().unwrap_or_default();
    let number = |word: &str| -> usize {
        let before = line.split(&format!(" {word}")).next().unwrap();
        before.rsplit([' ', ',']).next().unwrap().parse().unwrap()
    };
    (number("written"), number("unchanged"), number("removed"))
}

#[test]
fn the_x10_dataset_passes_locref_check() {
    let project = scaled_project(10);
    let root = project.path();
    let out = stdout(&locref(root, &["check"]));
    assert!(
        out.starts_with(&format!(
            "ok: {} outputs, no errors",
            crate::common::shipped_outputs()
        )),
        "{out}"
    );
    // The news page lists every item: the x10 dataset is really there.
    let news: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root.join("sources/news.json")).unwrap()).unwrap();
    assert_eq!(news.as_array().unwrap().len(), 2000);
}

#[test]
fn the_generator_is_deterministic_grows_the_tables_and_keeps_every_other_file() {
    let a = copy_project();
    let b = copy_project();
    let grown = grow(a.path(), 10);
    grow(b.path(), 10);
    let (sources_a, sources_b) = (
        snapshot(&a.path().join("sources")),
        snapshot(&b.path().join("sources")),
    );
    assert!(sources_a == sources_b, "two generations differ");
    let labels = std::fs::read_to_string(a.path().join("rules/facts.toml"))
        .unwrap()
        .matches("[[fact]]")
        .count();
    assert_eq!(
        grown,
        Some(Grown {
            facts: 61 * labels,
            partners: 1500,
            local_erps: 1000,
            partner_flags: 671,
            news: 2000,
        })
    );
    // About the size of the Hugo site's data at x10 (4.7 MB), beside the release snapshots (which the
    // generator does not grow).
    let bytes: usize = sources_a
        .iter()
        .filter(|(path, _)| !path.starts_with("releases/"))
        .map(|(_, bytes)| bytes.len())
        .sum();
    assert!((4_000_000..5_500_000).contains(&bytes), "{bytes} bytes");
    // Every file the generator does not grow is the shipped one, whatever tables exist.
    let shipped = snapshot(&Path::new(env!("CARGO_MANIFEST_DIR")).join("sources"));
    let grown_files = [
        "tables/countries.csv",
        "tables/partners.csv",
        "tables/local_erps.csv",
        "tables/local_partner_flags.csv",
        "news.json",
    ];
    for (path, bytes) in &shipped {
        if !grown_files.contains(&path.as_str()) {
            assert!(sources_a.get(path) == Some(bytes), "{path} changed");
        }
    }
    assert_eq!(sources_a.len(), shipped.len());
    // x1 is the shipped sources.
    let one = scaled_project(1);
    assert!(snapshot(&one.path().join("sources")) == shipped);
}

/// A built copy of the shipped project (output folder `site`).
fn built_project() -> tempfile::TempDir {
    let project = copy_project();
    let first = locref(project.path(), &["build", "--out", "site"]);
    assert_eq!(built(&first), (crate::common::shipped_outputs(), 0, 0));
    project
}

#[test]
fn a_build_with_nothing_changed_writes_nothing() {
    let project = built_project();
    let root = project.path();
    let site = root.join("site");
    let before = snapshot(&site);
    let manifest = std::fs::read(locref::outdir::manifest_path(&site)).unwrap();
    // A touch and an identical save change nothing.
    let matrix = root.join("sources/tables/matrix.csv");
    std::fs::write(&matrix, std::fs::read(&matrix).unwrap()).unwrap();
    for _ in 0..2 {
        let run = locref(root, &["build", "--out", "site"]);
        assert_eq!(built(&run), (0, crate::common::shipped_outputs(), 0));
    }
    assert!(snapshot(&site) == before);
    assert_eq!(
        std::fs::read(locref::outdir::manifest_path(&site)).unwrap(),
        manifest
    );
}

fn manifest(root: &Path) -> Vec<u8> {
    std::fs::read(locref::outdir::manifest_path(&root.join("site"))).unwrap()
}

/// An edit, then a build: it builds (the manifest records the new inputs) and writes what changed, if
/// anything; the next build writes nothing and leaves the manifest alone.
fn assert_rebuilds(root: &Path, args: &[&str], edit: impl FnOnce(&Path), expect_written: bool) {
    let before = manifest(root);
    edit(root);
    let run = locref(root, args);
    let (written, _, _) = built(&run);
    assert_eq!(
        written > 0,
        expect_written,
        "{}",
        String::from_utf8_lossy(&run.stdout)
    );
    let after = manifest(root);
    assert_ne!(before, after, "the build recorded its inputs");
    let again = locref(root, args);
    assert_eq!(built(&again).0, 0);
    assert_eq!(manifest(root), after);
}

#[test]
fn any_changed_source_rule_or_template_builds_again() {
    let project = built_project();
    let root = project.path();
    let site = ["build", "--out", "site"];
    // A source.
    assert_rebuilds(
        root,
        &site,
        |root| {
            crate::common::replace_once(
                root,
                "sources/tables/countries.csv",
                "fr,VAT / GST,TVA",
                "fr,VAT / GST,TVA (edited)",
            );
        },
        true,
    );
    // A rule.
    assert_rebuilds(
        root,
        &site,
        |root| {
            crate::common::replace_once(
                root,
                "rules/site.toml",
                "title = \"",
                "title = \"Edited: ",
            );
        },
        true,
    );
    // A template.
    assert_rebuilds(
        root,
        &site,
        |root| {
            let path = root.join("rules/templates/base.md");
            let mut text = std::fs::read_to_string(&path).unwrap();
            text.push_str("\nEdited footer.\n");
            std::fs::write(path, text).unwrap();
        },
        true,
    );
    // A new file no query reads, then its removal: both render again, and write nothing.
    assert_rebuilds(
        root,
        &site,
        |root| std::fs::write(root.join("sources/NOTES.md"), "notes").unwrap(),
        false,
    );
    assert_rebuilds(
        root,
        &site,
        |root| std::fs::remove_file(root.join("sources/NOTES.md")).unwrap(),
        false,
    );
    // A deleted output is written again.
    std::fs::remove_file(root.join("site/fr/index.html")).unwrap();
    let run = locref(root, &site);
    assert_eq!(built(&run).0, 1);
    assert!(root.join("site/fr/index.html").is_file());
    // Another base URL renders again; back to the first, everything is rewritten once more.
    let other = [
        "build",
        "--out",
        "site",
        "--base-url",
        "https://other.example",
    ];
    let run = locref(root, &other);
    assert!(built(&run).0 > 0);
    assert_eq!(built(&locref(root, &other)).0, 0);
    assert!(built(&locref(root, &site)).0 > 0);
}

#[test]
fn another_locref_builds_again_and_an_interrupted_build_is_not_trusted() {
    let project = built_project();
    let root = project.path();
    // The same version, another executable file (a rebuilt binary): it renders (and writes nothing).
    let other: PathBuf = root.join("locref-copy");
    std::fs::copy(env!("CARGO_BIN_EXE_locref"), &other).unwrap();
    let before = manifest(root);
    let run = locref_with(&other, root, &["build", "--out", "site"]);
    assert_eq!(built(&run), (0, crate::common::shipped_outputs(), 0));
    assert_ne!(manifest(root), before, "the other locref recorded itself");
    let record = manifest(root);
    assert_eq!(
        built(&locref_with(&other, root, &["build", "--out", "site"])).0,
        0
    );
    assert_eq!(manifest(root), record);
    // The journal of a killed build: the next build repairs, whatever the record says.
    let site = root.join("site");
    let journal = locref::outdir::journal_path(&site);
    std::fs::write(&journal, br#"["/fr/index.html"]"#).unwrap();
    std::fs::write(site.join("fr/index.html"), b"half of a build").unwrap();
    let run = locref(root, &["build", "--out", "site"]);
    assert_eq!(built(&run).0, 1);
    assert!(!journal.exists());
    assert_ne!(
        std::fs::read(site.join("fr/index.html")).unwrap(),
        b"half of a build"
    );
}

#[test]
fn a_watch_session_in_the_folder_drops_the_record() {
    let project = built_project();
    let root = project.path();
    let site = root.join("site");
    // A session publishes into the folder (as `locref watch --out site` does) and edits are made and
    // undone there; the next one-off build cannot know the folder from its record and renders.
    // The build's own time (the same day: the calendar's windows stay where the one-off build put them).
    let mut session = Session::load(root, &site, &SITE)
        .unwrap()
        .with_fixed_time("2026-09-21T14:13:20Z");
    assert!(matches!(session.build().outcome, Outcome::Built(_)));
    drop(session);
    let manifest = std::fs::read_to_string(locref::outdir::manifest_path(&site)).unwrap();
    assert!(!manifest.contains("\"inputs\""), "{manifest}");
    let run = locref(root, &["build", "--out", "site"]);
    assert_eq!(built(&run).1, crate::common::shipped_outputs());
    let manifest = std::fs::read_to_string(locref::outdir::manifest_path(&site)).unwrap();
    assert!(manifest.contains("\"inputs\""));
}

/// A one-off build of the x10 dataset renders in several batches, letting each go before the next:
/// still nothing is made twice.
#[test]
#[ignore = "the x10 dataset: .ci/run runs it"]
fn a_one_off_build_of_the_x10_dataset_makes_everything_once() {
    crate::incremental::assert_one_off_build_makes_everything_once(x10_template());
}

/// At x10 the streaming plan renders in several batches, hands the long lists over piece by piece and
/// the pages made of parts part by part: still the same bytes as the serial reference plan.
#[test]
#[ignore = "the x10 dataset: .ci/run runs it"]
fn the_serial_plan_and_the_streaming_plan_publish_the_same_x10_site() {
    use locref::build::Plan;
    let dir = tempfile::tempdir().unwrap();
    for sub in ["sources", "rules"] {
        crate::common::copy_dir(&x10_template().join(sub), &dir.path().join(sub));
    }
    let serial = crate::common::built_with(dir.path(), "serial", Plan::serial(&SITE));
    let streaming = crate::common::built_with(
        dir.path(),
        "single",
        locref::build::Profile::OneOff.plan(&SITE),
    );
    crate::common::assert_same_site(&serial, &streaming);
}

/// A number of changes in the pages' words (`1 answer change`, `12 curation changes`).
fn changes_of(n: u64, substance: &str) -> String {
    format!("{n} {substance} change{}", if n == 1 { "" } else { "s" })
}

/// The changes of `/api/v1/changes.json` in `release` (`None`: not released yet), counted by country:
/// (answer, curation) changes.
fn changes_by_country(
    site: &Path,
    release: Option<&str>,
) -> std::collections::BTreeMap<String, (u64, u64)> {
    let text = std::fs::read(site.join("api/v1/changes.json")).unwrap();
    let changes: serde_json::Value = serde_json::from_slice(&text).unwrap();
    let mut counts = std::collections::BTreeMap::<String, (u64, u64)>::new();
    for change in changes["data"].as_array().unwrap() {
        if change["release"].as_str() != release {
            continue;
        }
        let count = counts
            .entry(change["country"].as_str().unwrap().to_string())
            .or_default();
        match change["substance"].as_str().unwrap() {
            "answer" => count.0 += 1,
            _ => count.1 += 1,
        }
    }
    counts
}

/// At x10 the changes not released yet (the whole growth) are more than a page lists: `/changes/`
/// counts each country's, and once they are released the release's page counts them by country; every
/// count is that of `/api/v1/changes.json`, and no page of the history reaches 300 KB.
#[test]
#[ignore = "the x10 dataset: .ci/run runs it"]
fn at_x10_a_change_set_too_large_for_a_page_is_counted_by_country() {
    use locref::render::history::PAGE_CHANGES;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for sub in ["sources", "rules"] {
        copy_dir(&x10_template().join(sub), &root.join(sub));
    }
    let site = root.join("public");
    stdout(&locref(root, &["build", "--out", "public"]));
    let unreleased = changes_by_country(&site, None);
    let total: u64 = unreleased.values().map(|(a, c)| a + c).sum();
    assert!(
        total > PAGE_CHANGES as u64,
        "the x10 growth is {total} changes, not more than a page lists"
    );
    let page = std::fs::read_to_string(site.join("changes/index.html")).unwrap();
    assert!(
        page.contains(&format!("More changes than a page lists ({PAGE_CHANGES})")),
        "/changes/ says why it counts"
    );
    let sections: Vec<&str> = page
        .split("<section class=\"changes-of\">")
        .skip(1)
        .collect();
    assert_eq!(sections.len(), unreleased.len(), "one section per country");
    for (code, (answers, curation)) in &unreleased {
        let link = format!("<a href=\"/{code}/#history\">");
        let section = sections.iter().find(|s| s.contains(&link)).unwrap();
        let said = format!(
            "{} and {}, listed in",
            changes_of(*answers, "answer"),
            changes_of(*curation, "curation")
        );
        assert!(section.contains(&said), "{code}: {section}");
    }

    let version = "2099.1.1-1";
    let run = crate::common::locref(root, &["release", version], "4070908800");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    stdout(&crate::common::locref(
        root,
        &["build", "--out", "public"],
        "4070908800",
    ));
    let released = changes_by_country(&site, Some(version));
    assert_eq!(released, unreleased, "the release released every change");
    let page = std::fs::read_to_string(site.join(format!("changes/{version}/index.html"))).unwrap();
    assert!(page.contains(&format!(
        "more than a page lists ({PAGE_CHANGES}), so they are counted by country here"
    )));
    for (code, (answers, curation)) in &released {
        let link = format!("<tr><th scope=\"row\"><a href=\"/{code}/#history\">");
        let at = page.find(&link).unwrap_or_else(|| panic!("{code}: no row"));
        let row = &page[at..at + page[at..].find("</tr>").unwrap()];
        let counts =
            format!("</a></th><td class=\"num\">{answers}</td><td class=\"num\">{curation}</td>");
        assert!(row.ends_with(&counts), "{code}: {row}");
    }
    for (path, bytes) in snapshot(&site.join("changes")) {
        let page = path.ends_with(".html") || path.ends_with(".md");
        assert!(
            !page || bytes.len() < 300_000,
            "/changes/{path} is {} bytes",
            bytes.len()
        );
    }
}

/// The x10 dataset's project, built once and copied for each case of the property test.
fn x10_template() -> &'static Path {
    static TEMPLATE: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    TEMPLATE.get_or_init(|| scaled_project(10)).path()
}

/// Text cells the property test edits in the grown tables: (table, column name).
const CELLS: [(&str, &str); 4] = [
    ("sources/tables/countries.csv", "value"),
    ("sources/tables/partners.csv", "summary"),
    ("sources/tables/local_erps.csv", "description"),
    ("sources/tables/local_partner_flags.csv", "note"),
];

#[derive(Debug, Clone)]
enum Edit {
    Cell { table: usize, row: usize, mark: u8 },
    AddPartner { row: usize, mark: u8 },
    DeleteLocalErp { row: usize },
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (0..CELLS.len(), any::<usize>(), any::<u8>()).prop_map(|(table, row, mark)| Edit::Cell {
            table,
            row,
            mark
        }),
        (any::<usize>(), any::<u8>()).prop_map(|(row, mark)| Edit::AddPartner { row, mark }),
        any::<usize>().prop_map(|row| Edit::DeleteLocalErp { row }),
    ]
}

/// Rewrites one table through the csv crate; returns its path.
fn edit_table(root: &Path, rel: &str, f: impl FnOnce(&[String], &mut Vec<Vec<String>>)) -> PathBuf {
    let path = root.join(rel);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_path(&path)
        .unwrap();
    let mut records: Vec<Vec<String>> = reader
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect();
    let mut rows = records.split_off(1);
    let header = records.remove(0);
    f(&header, &mut rows);
    let mut writer = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    writer.write_record(&header).unwrap();
    for row in &rows {
        writer.write_record(row).unwrap();
    }
    crate::common::atomic_save(&path, &writer.into_inner().unwrap());
    path
}

fn apply(root: &Path, edit: &Edit) -> PathBuf {
    match *edit {
        Edit::Cell { table, row, mark } => {
            let (rel, column) = CELLS[table];
            edit_table(root, rel, |header, rows| {
                let c = header.iter().position(|h| h == column).unwrap();
                let i = row % rows.len();
                rows[i][c] = format!("{} (rev {mark}, \"quoted\", comma)", rows[i][c]);
            })
        }
        Edit::AddPartner { row, mark } => {
            edit_table(root, "sources/tables/partners.csv", |header, rows| {
                let c = header.iter().position(|h| h == "name").unwrap();
                let i = row % rows.len();
                let mut copy = rows[i].clone();
                copy[c] = format!("Added {mark} {}", rows.len());
                rows.insert(i + 1, copy);
            })
        }
        Edit::DeleteLocalErp { row } => {
            edit_table(root, "sources/tables/local_erps.csv", |_, rows| {
                let i = row % rows.len();
                rows.remove(i);
            })
        }
    }
}

/// Cases of the x10 random-edit test (`PROPTEST_CASES`, default 4).
fn x10_cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(4)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: x10_cases(), max_shrink_iters: 4, ..ProptestConfig::default() })]

    /// After any sequence of edits of the x10 dataset's big tables (some batched into one rebuild), every
    /// output is byte-identical to a clean one-off build of the same files.
    #[test]
    #[ignore = "the x10 dataset: .ci/run runs it"]
    fn x10_incremental_rebuilds_equal_a_clean_build(
        steps in prop::collection::vec((edit(), any::<bool>()), 1..5)
    ) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for sub in ["sources", "rules"] {
            copy_dir(&x10_template().join(sub), &root.join(sub));
        }
        let mut session = Session::load(root, &root.join("public"), &SITE).unwrap().with_fixed_time(FIXED_TIME);
        prop_assert!(matches!(session.build().outcome, Outcome::Built(_)));
        let mut pending = Vec::new();
        for (edit, batch_with_next) in &steps {
            pending.push(apply(root, edit));
            if !batch_with_next {
                let report = session.rebuild(&std::mem::take(&mut pending));
                prop_assert!(matches!(report.outcome, Outcome::Built(_)), "{report}");
            }
        }
        if !pending.is_empty() {
            let report = session.rebuild(&pending);
            prop_assert!(matches!(report.outcome, Outcome::Built(_)), "{report}");
        }
        // The other path: a one-off `locref build --clean`, which keeps nothing between batches.
        let clean = crate::common::one_off_build(root, "clean");
        prop_assert!(clean.is_ok(), "{clean:?}");
        let (incremental, clean) = (snapshot(&root.join("public")), clean.unwrap_or_default());
        let differing: Vec<&String> = clean.keys().chain(incremental.keys())
            .filter(|k| clean.get(*k) != incremental.get(*k)).collect();
        prop_assert!(differing.is_empty(), "outputs differ from a clean build: {differing:?}");
    }
}
