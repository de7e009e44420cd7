//! Releases and changes as a user meets them: `locref release` through the real binary (what it writes,
//! and that it writes nothing when it refuses), the located errors of a release edited by hand, and the
//! published history: every change backed by the snapshots, every date by the record, the Atom feed read
//! by a feed parser, the sitemap and robots.txt, the changes page and the History sections.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use serde_json::{Value, json};

use crate::common::{copy_project, locref, read, replace_once, snapshot, text};

/// 2099-01-01T00:00:00Z: after the last shipped release.
const AFTER: &str = "4070908800";
/// 2098-12-31T23:59:00Z: a minute before `AFTER`, for a release that a test's own release follows
/// (releases are dated to the second, one a second at most).
const A_MINUTE_BEFORE_AFTER: &str = "4070908740";
/// 2026-09-21T14:13:20Z: before it.
const BEFORE: &str = "1790000000";

/// The last shipped release's version and time.
fn last() -> &'static str {
    &crate::common::shipped_releases().last
}
fn last_at() -> &'static str {
    &crate::common::shipped_releases().last_at
}

/// Every input file of a project (sources/ and rules/), for "nothing was written".
fn inputs(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut all = snapshot(&root.join("sources"));
    all.extend(
        snapshot(&root.join("rules"))
            .into_iter()
            .map(|(k, v)| (format!("rules/{k}"), v)),
    );
    all
}

/// Australia's reporting fact as shipped: what [`edit_australia`] adds its SAF-T clause to.
const AU_REPORTING_FACT: &str = "Business Activity Statement (BAS) quarterly where GST turnover is under AUD 20 million (monthly by choice), monthly where it is AUD 20 million or more, and annually for voluntary registrants with GST turnover under AUD 75,000 (AUD 150,000 for non-profits). Real-time reporting: no (GST is reported through the periodic BAS; no invoice-by-invoice submission to the ATO).";

/// The change that makes the releases below: Australia's SAF-T becomes required (its phase, and its
/// fact's clause, which must agree with the phase).
fn edit_australia(root: &Path) {
    replace_once(
        root,
        "sources/tables/countries.csv",
        "no invoice-by-invoice submission to the ATO).",
        "no invoice-by-invoice submission to the ATO). SAF-T: required.",
    );
    replace_once(
        root,
        "sources/tables/obligations.csv",
        "au,saf-t,main,none,,,,,absence,",
        "au,saf-t,main,in-force,,,,,,",
    );
}

#[test]
fn a_release_writes_its_snapshot_its_row_and_the_version_and_rewrites_no_earlier_release() {
    let dir = copy_project();
    let root = dir.path();
    // The first release that records every answer: the one below then records Australia's only.
    release_every_answer(root);
    let last = "2099.1.1-0";
    edit_australia(root);
    let before = inputs(root);
    let run = locref(
        root,
        &[
            "release",
            "2099.1.1-1",
            "--note",
            "Australia: SAF-T required, checked",
        ],
        AFTER,
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    let stdout = text(&run.stdout);
    let snapshot = crate::common::release_snapshot(root, "2099.1.1-1").unwrap();
    let lines = |start: &str| snapshot.lines().filter(|l| l.starts_with(start)).count();
    // The toggle, the fact's clause, and the phase's status and basis.
    assert!(
        stdout.contains(&format!(
            "released 2099.1.1-1 at 2099-01-01T00:00:00Z: {} facts and {} other answers of 61 countries; 4 changes since {last}",
            lines("{\"id\""),
            lines("{\"answer\""),
        )),
        "{stdout}"
    );
    let after = inputs(root);
    // Exactly four files: the new index, the record of the one country that changed (Australia's),
    // the register and the site's version. Every other country's record is the last release's.
    let changed: Vec<&String> = after
        .keys()
        .filter(|k| before.get(*k) != after.get(*k))
        .collect();
    let index = read(root, "sources/releases/2099.1.1-1.index");
    let last_index = read(root, &format!("sources/releases/{last}.index"));
    let differs: Vec<(&str, &str)> = index
        .lines()
        .zip(last_index.lines())
        .filter(|(new, old)| new != old)
        .map(|(new, _)| new.split_once(' ').unwrap())
        .collect();
    assert_eq!(index.lines().count(), last_index.lines().count());
    assert_eq!(differs.len(), 1, "{differs:?}");
    assert_eq!(differs[0].0, "au");
    let au_record = format!("releases/records/{}.jsonl", differs[0].1);
    assert_eq!(
        changed,
        [
            "releases/2099.1.1-1.index",
            au_record.as_str(),
            "releases/releases.csv",
            "rules/site.toml"
        ]
    );
    assert!(
        stdout.contains(&format!("wrote   sources/{au_record} (")),
        "{stdout}"
    );
    assert!(read(root, "rules/site.toml").contains("\nversion = \"2099.1.1-1\"\n"));
    // A record is named by the blake3 of its text.
    let record = read(root, &format!("sources/{au_record}"));
    assert_eq!(
        blake3::hash(record.as_bytes()).to_hex().as_str(),
        differs[0].1
    );
    assert!(record.starts_with("{\"country\":\"au\","));
    let register = read(root, "sources/releases/releases.csv");
    let row = register.lines().last().unwrap();
    let digest = blake3::hash(snapshot.as_bytes()).to_hex().to_string();
    let chain = chain(
        Some(register_rows(root)[crate::common::shipped_releases().count][3].as_str()),
        &[
            "2099.1.1-1",
            "2099-01-01T00:00:00Z",
            &digest,
            "Australia: SAF-T required, checked",
        ],
    );
    assert_eq!(
        row,
        format!(
            "2099.1.1-1,2099-01-01T00:00:00Z,{digest},{chain},\"Australia: SAF-T required, checked\""
        )
    );
    // One record a line, sorted by key (a country's answers after its facts, by kind and id);
    // Australia's line records the flipped toggle.
    let keys: Vec<String> = snapshot
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            match (v.get("country"), v.get("answer"), v.get("id")) {
                (Some(code), _, _) => code.as_str().unwrap().to_string(),
                (_, Some(kind), Some(id)) => {
                    let id = id.as_str().unwrap();
                    format!("{}.{} {id}", &id[..2], kind.as_str().unwrap())
                }
                (_, _, id) => id.unwrap().as_str().unwrap().to_string(),
            }
        })
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(keys, sorted);
    assert!(snapshot.contains("\"au-periodic-reporting\""));
    assert!(
        snapshot
            .lines()
            .any(|l| l.starts_with("{\"country\":\"au\",") && l.contains("\"saft_required\":true"))
    );

    // The build publishes it; nothing is left unreleased.
    let build = locref(root, &["build", "--out", "public"], AFTER);
    assert!(build.status.success(), "{}", text(&build.stderr));
    let changes: Value = serde_json::from_str(&read(root, "public/api/v1/changes.json")).unwrap();
    let first: Vec<(&str, &str)> = changes["data"]
        .as_array()
        .unwrap()
        .iter()
        .take(2)
        .map(|c| (c["release"].as_str().unwrap(), c["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        first,
        [
            ("2099.1.1-1", "toggle_flipped"),
            ("2099.1.1-1", "value_changed")
        ]
    );
    let detail: Value =
        serde_json::from_str(&read(root, "public/api/v1/releases/2099.1.1-1.json")).unwrap();
    assert_eq!(detail["meta"]["version"], "2099.1.1-1");
    assert_eq!(detail["data"]["previous"], last);
    assert_eq!(detail["data"]["note"], "Australia: SAF-T required, checked");

    // The same version again, and a version that does not increase: refused, nothing written.
    let again = inputs(root);
    for version in ["2099.1.1-1", "2099.1.1.1", "2026.11.27-0"] {
        let run = locref(root, &["release", version], AFTER);
        assert_eq!(run.status.code(), Some(1), "{version}");
        assert!(
            text(&run.stderr).contains("nothing was written"),
            "{version}"
        );
        assert_eq!(inputs(root), again, "{version}: nothing written");
    }
}

#[test]
fn a_release_after_a_failed_check_writes_nothing() {
    let dir = copy_project();
    let root = dir.path();
    replace_once(
        root,
        "sources/tables/matrix.csv",
        "de,sage-intacct,native,",
        "de,sage-intacct,bogus,",
    );
    let before = inputs(root);
    let run = locref(root, &["release", "2099.1.1-1"], AFTER);
    assert_eq!(run.status.code(), Some(1));
    let stderr = text(&run.stderr);
    assert!(
        stderr.contains("sources/tables/matrix.csv:") && stderr.contains("bogus"),
        "{stderr}"
    );
    assert!(stderr.contains("nothing was written"), "{stderr}");
    assert_eq!(inputs(root), before);
}

#[test]
fn a_duplicate_non_increasing_malformed_or_backdated_release_is_refused_and_writes_nothing() {
    let dir = copy_project();
    let root = dir.path();
    edit_australia(root);
    let before = inputs(root);
    // The last release spelt with a dot before its sequence number is the same version.
    let dotted = last().replacen('-', ".", 1);
    for (version, epoch, code, says) in [
        (
            last(),
            AFTER,
            1,
            format!("release `{}` is already recorded", last()),
        ),
        (
            &dotted,
            AFTER,
            1,
            format!("release `{}` is already recorded", last()),
        ),
        (
            "2026.11.22-1",
            AFTER,
            1,
            format!(
                "version `2026.11.22-1` does not increase: the last release is `{}`",
                last()
            ),
        ),
        ("2026.11", AFTER, 1, "does not increase".into()),
        (
            "2099.1.1-1",
            BEFORE,
            1,
            format!(
                "the release time 2026-09-21T14:13:20Z is not after the last release ({} at {})",
                last(),
                last_at()
            ),
        ),
        ("v2026", AFTER, 2, "`v2026` is not a release version".into()),
        ("2026..1", AFTER, 2, "is not a release version".into()),
        ("../../x", AFTER, 2, "is not a release version".into()),
    ] {
        let says = says.as_str();
        let run = locref(root, &["release", version], epoch);
        let stderr = text(&run.stderr);
        assert_eq!(run.status.code(), Some(code), "{version}: {stderr}");
        assert!(stderr.contains(says), "{version}: {stderr}");
        assert!(
            stderr.contains("nothing was written"),
            "{version}: {stderr}"
        );
        assert_eq!(inputs(root), before, "{version}: nothing written");
    }
    // A note that a spreadsheet would run as a formula is refused too.
    let run = locref(
        root,
        &["release", "2099.1.1-1", "--note", "=HYPERLINK()"],
        AFTER,
    );
    assert_eq!(run.status.code(), Some(2), "{}", text(&run.stderr));
    assert_eq!(inputs(root), before);
}

/// Two releases in one second would share their `released_at` (the API's and the feeds' date of each):
/// a release in the very second of the last one is refused, and one a second later is taken.
#[test]
fn a_release_in_the_same_second_as_the_last_is_refused() {
    let dir = copy_project();
    let root = dir.path();
    edit_australia(root);
    let before = inputs(root);
    let last_second: jiff::Timestamp = last_at().parse().unwrap();
    let same = last_second.as_second().to_string();
    let run = locref(root, &["release", "2099.1.1-1", "--note", "x"], &same);
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "the release time {} is not after the last release ({} at {})",
            last_at(),
            last(),
            last_at()
        )),
        "{stderr}"
    );
    assert_eq!(inputs(root), before, "nothing written");
    let next = (last_second.as_second() + 1).to_string();
    let run = locref(root, &["release", "2099.1.1-1", "--note", "x"], &next);
    assert!(run.status.success(), "{}", text(&run.stderr));
}

/// A file left where the next snapshot goes is never written over: it is not a recorded release, so the
/// check fails and the release stops before writing.
#[test]
fn a_release_never_writes_over_a_snapshot() {
    let dir = copy_project();
    let root = dir.path();
    for (stray, text_of) in [
        ("sources/releases/2099.1.1-1.index", "ad 0000\n"),
        (
            "sources/releases/2099.1.1-1.jsonl",
            "{\"country\":\"ad\",\"toggles\":{}}\n",
        ),
    ] {
        std::fs::write(root.join(stray), text_of).unwrap();
        let before = inputs(root);
        let run = locref(root, &["release", "2099.1.1-1"], AFTER);
        assert_eq!(run.status.code(), Some(1));
        assert!(
            text(&run.stderr).contains(&format!(
                "{stray}:1:1: error: `{stray}` is not a recorded release"
            )),
            "{}",
            text(&run.stderr)
        );
        assert_eq!(inputs(root), before);
        std::fs::remove_file(root.join(stray)).unwrap();
    }
}

/// The rows of a project's register, each as its cells (the header left out).
fn register_rows(root: &Path) -> Vec<Vec<String>> {
    csv::Reader::from_reader(read(root, "sources/releases/releases.csv").as_bytes())
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect()
}

/// A release's `chain_blake3` as `sources/README.md` defines it: the blake3 of the previous release's
/// chain (nothing for the first) and the release's version, time, snapshot hash and note, each followed
/// by a line feed.
fn chain(previous: Option<&str>, cells: &[&str; 4]) -> String {
    let mut text = format!("{}\n", previous.unwrap_or(""));
    for cell in cells {
        text.push_str(cell);
        text.push('\n');
    }
    blake3::hash(text.as_bytes()).to_hex().to_string()
}

/// `locref check` on a project whose releases were edited by hand: every problem at its file and line.
fn check_errors(root: &Path) -> Vec<String> {
    let run = locref(root, &["check"], AFTER);
    assert_eq!(run.status.code(), Some(1), "{}", text(&run.stdout));
    text(&run.stderr)
        .lines()
        .filter(|l| l.contains(": error: "))
        .map(str::to_string)
        .collect()
}

#[test]
fn a_release_edited_by_hand_is_a_located_error() {
    // A value edited in a snapshot: its hash is no longer the recorded one.
    let dir = copy_project();
    let root = dir.path();
    // A release stored whole, as before `locref migrate-releases` (the records: the test below).
    crate::common::store_whole(root, "2026.11.23-3");
    let path = "sources/releases/2026.11.23-3.jsonl";
    let original = read(root, path);
    std::fs::write(
        root.join(path),
        original.replacen(
            "\"verification\":\"official\"",
            "\"verification\":\"secondary\"",
            1,
        ),
    )
    .unwrap();
    let errors = check_errors(root);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(
        errors[0].starts_with("sources/releases/2026.11.23-3.jsonl:1:1: error: this snapshot was changed after its release: its blake3 is "),
        "{errors:#?}"
    );
    assert!(
        errors[0].contains("sources/releases/releases.csv:5 records 47d923c6"),
        "{errors:#?}"
    );

    // A snapshot damaged so that it no longer reads: located at its line, and the hash too.
    std::fs::write(
        root.join(path),
        original.replacen("{\"id\":\"ad-currency\"", "{\"id\":\"ad-currency\",", 1),
    )
    .unwrap();
    let errors = check_errors(root);
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("sources/releases/2026.11.23-3.jsonl:2:")
                && e.contains("not a JSON record")),
        "{errors:#?}"
    );
    std::fs::write(root.join(path), &original).unwrap();

    // The register: a duplicate version, a version that does not increase, a release dated before the
    // one above it, a malformed hash; a recorded release without its snapshot.
    let register = read(root, "sources/releases/releases.csv");
    let rows: Vec<&str> = register.lines().collect();
    let mut edited: Vec<String> = rows.iter().map(|r| r.to_string()).collect();
    edited[3] = rows[3].replacen("2026.11.23-2", "2026.11.23-1", 1);
    edited[6] = rows[6].replacen("2026.11.23-5", "2026.11.23-0", 1);
    edited[7] = rows[7].replacen("2026-11-23T17:09:48Z", "2026-11-22T17:09:48Z", 1);
    edited[8] = rows[8].replacen(",e216d262", ",E216D262", 1);
    std::fs::write(
        root.join("sources/releases/releases.csv"),
        edited.join("\n") + "\n",
    )
    .unwrap();
    let errors = check_errors(root);
    for expected in [
        "sources/releases/releases.csv:4:1: error: duplicate version `2026.11.23-1`: line 3 records `2026.11.23-1`",
        "sources/releases/releases.csv:7:1: error: version `2026.11.23-0` does not increase: the release before it (line 6) is `2026.11.23-4`",
        "sources/releases/releases.csv:8:14: error: released at 2026-11-22T17:09:48Z, before the release before it (line 6, 2026-11-23T17:09:41Z)",
        "sources/releases/releases.csv:9:35: error: `snapshot_blake3` is `E216D262",
    ] {
        assert!(
            errors.iter().any(|e| e.starts_with(expected)),
            "{expected}\nnot in {errors:#?}"
        );
    }
    // The snapshots of the versions no longer recorded are not reported while the register has a
    // problem: that problem is their cause.
    assert!(
        errors
            .iter()
            .all(|e| e.starts_with("sources/releases/releases.csv:")),
        "{errors:#?}"
    );
    std::fs::write(root.join("sources/releases/releases.csv"), &register).unwrap();
    std::fs::remove_file(root.join("sources/releases/2026.11.23-7.index")).unwrap();
    let errors = check_errors(root);
    assert_eq!(
        errors,
        [
            "sources/releases/releases.csv:9:1: error: the snapshot of release `2026.11.23-7` (sources/releases/2026.11.23-7.index) is missing"
        ]
    );
}

/// Every file of a project (sources/, rules/ and anything else in it, such as a built `public/`) but the
/// locks and manifests of `.locref-cache/`: what a release that writes nothing must leave byte for byte.
fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    snapshot(root)
        .into_iter()
        .filter(|(path, _)| !path.starts_with(".locref-cache/"))
        .collect()
}

/// The two versions the concurrent releases below ask for, both after the last shipped release.
const FIRST: &str = "2099.12.1-1";
const SECOND: &str = "2099.12.1-2";

/// Two `locref release` started at once, round after round on a fresh copy of the project: one release
/// at a time. Each round ends with every recorded release's snapshot in place with its recorded hash
/// (no release recorded without its snapshot, no snapshot without its row), the site's version that of
/// the last release, no temporary file left, and a project that checks clean. Each release either
/// recorded its version, or was refused (another release was running, or the other version was already
/// recorded after it) and wrote nothing.
#[test]
fn two_releases_at_once_record_one_at_a_time() {
    let shipped = crate::common::shipped_releases().count;
    let mut outcomes = BTreeMap::new();
    for round in 0..10 {
        let dir = copy_project();
        let root = dir.path();
        let before = tree(root);
        let start = |version: &str| {
            Command::new(env!("CARGO_BIN_EXE_locref"))
                // The shipped sources are the last release: a release of them changes no answer.
                .args(["release", version, "--no-change", "--note", "at once"])
                .current_dir(root)
                .env("SOURCE_DATE_EPOCH", AFTER)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("start locref release")
        };
        let (first, second) = (start(FIRST), start(SECOND));
        let runs = [
            (FIRST, first.wait_with_output().unwrap()),
            (SECOND, second.wait_with_output().unwrap()),
        ];
        let mut released = Vec::new();
        for (version, run) in &runs {
            let stderr = text(&run.stderr);
            match run.status.code() {
                Some(0) => released.push(*version),
                Some(3) => assert!(
                    stderr.contains("another locref release is making a release of this project")
                        && stderr.ends_with("nothing was written\n"),
                    "round {round}, {version}: {stderr}"
                ),
                // The second version was recorded first: the first no longer increases.
                Some(1) => assert!(
                    *version == FIRST
                        && stderr.contains(&format!(
                            "version `{FIRST}` does not increase: the last release is `{SECOND}`"
                        )),
                    "round {round}, {version}: {stderr}"
                ),
                other => panic!("round {round}, {version}: exit {other:?}: {stderr}"),
            }
            *outcomes
                .entry((*version, run.status.code()))
                .or_insert(0usize) += 1;
        }
        assert!(!released.is_empty(), "round {round}: neither released");

        // The register records exactly the releases that succeeded, in order, each with its snapshot.
        let rows = register_rows(root);
        let recorded: Vec<&str> = rows[shipped..].iter().map(|r| r[0].as_str()).collect();
        assert_eq!(recorded, released, "round {round}");
        for row in &rows[shipped..] {
            let snapshot = crate::common::release_snapshot(root, &row[0])
                .unwrap_or_else(|| panic!("round {round}: the snapshot of {} is missing", row[0]));
            assert_eq!(
                blake3::hash(snapshot.as_bytes()).to_hex().as_str(),
                row[2],
                "round {round}"
            );
        }
        let last = rows.last().unwrap()[0].clone();
        assert!(
            read(root, "rules/site.toml").contains(&format!("\nversion = \"{last}\"\n")),
            "round {round}: the site's version is not {last}"
        );
        // Nothing but the releases' own files changed: no stray snapshot, no temporary file.
        let after = tree(root);
        let mut changed: Vec<String> = after
            .keys()
            .filter(|k| before.get(*k) != after.get(*k))
            .cloned()
            .collect();
        changed.extend(before.keys().filter(|k| !after.contains_key(*k)).cloned());
        // No country changed between the releases: the first to be made wrote a record of each country
        // (the shipped records do not carry every answer), each new and named by the releases'
        // indexes, and the second none.
        let indexes: String = released
            .iter()
            .map(|v| read(root, &format!("sources/releases/{v}.index")))
            .collect();
        changed.retain(|path| {
            let Some(name) = path
                .strip_prefix("sources/releases/records/")
                .and_then(|p| p.strip_suffix(".jsonl"))
            else {
                return true;
            };
            assert!(
                !before.contains_key(path),
                "round {round}: {path} written over"
            );
            assert!(
                indexes.contains(name),
                "round {round}: {path} named by no index"
            );
            false
        });
        let mut expected: Vec<String> = released
            .iter()
            .map(|v| format!("sources/releases/{v}.index"))
            .chain([
                "rules/site.toml".into(),
                "sources/releases/releases.csv".into(),
            ])
            .collect();
        expected.sort();
        changed.sort();
        assert_eq!(changed, expected, "round {round}");
        let check = locref(root, &["check"], AFTER);
        assert!(
            check.status.success(),
            "round {round}: {}",
            text(&check.stderr)
        );
    }
    eprintln!("two releases at once, (version, exit) -> rounds: {outcomes:?}");
}

/// A release started while another holds the lock of `sources/` is refused at once (exit 3, as a build
/// into a folder another locref is writing) and leaves the project as it was.
#[test]
fn a_release_while_another_runs_is_refused_and_writes_nothing() {
    let dir = copy_project();
    let root = dir.path();
    edit_australia(root);
    let lock_path = locref::outdir::sources_lock_path(root);
    std::fs::create_dir_all(lock_path.parent().unwrap()).unwrap();
    let held = std::fs::File::create(&lock_path).unwrap();
    held.try_lock().expect("the test holds the lock");
    let before = tree(root);
    let run = locref(root, &["release", "2099.1.1-1"], AFTER);
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(3), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "error: another locref release is making a release of this project (it holds {}): wait for it to finish, then check that the version is still the one to release; nothing was written\n",
            lock_path.display()
        )
    );
    assert_eq!(tree(root), before);
    // Once it is let go, the release goes ahead.
    drop(held);
    let run = locref(root, &["release", "2099.1.1-1"], AFTER);
    assert!(run.status.success(), "{}", text(&run.stderr));
}

/// A release whose project no longer checks clean once the release is written (here a template that
/// fails on the new release's page, which did not exist when the release began) takes back everything
/// it wrote: the tree is byte for byte what it was.
#[test]
fn a_release_that_fails_its_check_after_writing_leaves_the_tree_as_it_was() {
    let dir = copy_project();
    let root = dir.path();
    edit_australia(root);
    replace_once(
        root,
        "rules/templates/release.html",
        "<h1>Release {{ release.version }}</h1>",
        "<h1>Release {{ release.version }}</h1>{% if release.version == \"2099.1.1-1\" %}{{ no_such_value }}{% endif %}",
    );
    let check = locref(root, &["check"], AFTER);
    assert!(check.status.success(), "{}", text(&check.stderr));
    let before = tree(root);
    let run = locref(root, &["release", "2099.1.1-1"], AFTER);
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with("rules/templates/release.html:") && stderr.contains("no_such_value"),
        "{stderr}"
    );
    assert!(stderr.ends_with("nothing was written\n"), "{stderr}");
    assert_eq!(tree(root), before);
}

/// A release that cannot write `rules/site.toml` (something else sits where its temporary file goes),
/// or the register, after writing the files before it, takes them back: the tree is byte for byte what
/// it was.
#[test]
fn a_release_that_cannot_write_a_file_takes_back_what_it_wrote() {
    for (obstructed, written_before) in [
        (
            "rules/.site.toml.locref-release.tmp",
            "the snapshot and the register",
        ),
        (
            "sources/releases/.releases.csv.locref-release.tmp",
            "the snapshot",
        ),
    ] {
        let dir = copy_project();
        let root = dir.path();
        edit_australia(root);
        // A folder where the temporary file goes: creating it fails, even for root.
        std::fs::create_dir(root.join(obstructed)).unwrap();
        let before = tree(root);
        let run = locref(root, &["release", "2099.1.1-1"], AFTER);
        let stderr = text(&run.stderr);
        assert_eq!(run.status.code(), Some(3), "{obstructed}: {stderr}");
        assert!(
            stderr.starts_with(&format!("error: ./{obstructed}: "))
                && stderr.ends_with("; nothing was written\n"),
            "{obstructed}: {stderr}"
        );
        assert_eq!(
            tree(root),
            before,
            "{obstructed}: {written_before} taken back"
        );
        // With the way clear, the same release is made.
        std::fs::remove_dir(root.join(obstructed)).unwrap();
        let run = locref(root, &["release", "2099.1.1-1"], AFTER);
        assert!(run.status.success(), "{}", text(&run.stderr));
    }
}

/// A register that does not read says so first, and only that: the snapshots it no longer records
/// follow from it and are not reported as problems of their own. A real problem of a snapshot that is
/// recorded still is, after the register's.
#[test]
fn a_bad_register_is_reported_before_what_follows_from_it() {
    let dir = copy_project();
    let root = dir.path();
    let register = read(root, "sources/releases/releases.csv");
    let path = root.join("sources/releases/releases.csv");

    // An unknown column: no row can be read, so no snapshot is recorded.
    let (header, rows) = register.split_once('\n').unwrap();
    std::fs::write(&path, format!("{header},extra\n{rows}")).unwrap();
    assert_eq!(
        check_errors(root),
        [
            "sources/releases/releases.csv:1:55: error: unexpected header `version,released_at,snapshot_blake3,chain_blake3,note,extra`; expected `version,released_at,snapshot_blake3,chain_blake3,note`"
        ]
    );

    // A malformed version in one row, and a snapshot of another release edited by hand.
    std::fs::write(
        &path,
        register.replacen("2026.11.23-2,", "2026.11.23-2x,", 1),
    )
    .unwrap();
    crate::common::store_whole(root, "2026.11.23-7");
    let snapshot = "sources/releases/2026.11.23-7.jsonl";
    let original = read(root, snapshot);
    std::fs::write(
        root.join(snapshot),
        original.replacen(
            "\"verification\":\"official\"",
            "\"verification\":\"secondary\"",
            1,
        ),
    )
    .unwrap();
    let errors = check_errors(root);
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert_eq!(
        errors[0],
        "sources/releases/releases.csv:4:1: error: `2026.11.23-2x` is not a release version; expected numbers separated by `.` or `-`, for example `2026.11.23-1`"
    );
    assert!(
        errors[1].starts_with(
            "sources/releases/2026.11.23-7.jsonl:1:1: error: this snapshot was changed after its release"
        ),
        "{errors:#?}"
    );
}

/// A snapshot edited after its release with its hash recomputed in its row (history rewritten) breaks
/// the chain of releases: at its own row, and, when that row's chain is recomputed too, at the next
/// row. Each is one error, located at the row.
#[test]
fn a_snapshot_rewritten_with_its_hash_breaks_the_chain() {
    let dir = copy_project();
    let root = dir.path();
    let version = "2026.11.23-3";
    crate::common::store_whole(root, version);
    let path = format!("sources/releases/{version}.jsonl");
    let edited = read(root, &path).replacen(
        "\"verification\":\"official\"",
        "\"verification\":\"secondary\"",
        1,
    );
    std::fs::write(root.join(&path), &edited).unwrap();
    let rows = register_rows(root);
    let at = rows.iter().position(|r| r[0] == version).unwrap();
    let (old_hash, old_chain) = (rows[at][2].clone(), rows[at][3].clone());
    let new_hash = blake3::hash(edited.as_bytes()).to_hex().to_string();
    replace_once(root, "sources/releases/releases.csv", &old_hash, &new_hash);
    // Line 5 is the row of 2026.11.23-3 (the header is line 1); its chain is its fourth cell.
    assert_eq!(at + 2, 5);
    assert_eq!(
        check_errors(root),
        [
            "sources/releases/releases.csv:5:100: error: `chain_blake3` does not follow from line 4's chain and this row's cells: a release was changed after it was made (this row's version, time, snapshot hash or note, or line 4 rewritten with its snapshot hash and chain); restore releases.csv and the snapshots from version control"
        ]
    );

    // The row's chain recomputed too: the next release followed the old one.
    let r = &rows[at];
    let new_chain = chain(
        Some(rows[at - 1][3].as_str()),
        &[&r[0], &r[1], &new_hash, &r[4]],
    );
    replace_once(
        root,
        "sources/releases/releases.csv",
        &old_chain,
        &new_chain,
    );
    assert_eq!(
        check_errors(root),
        [
            "sources/releases/releases.csv:6:100: error: `chain_blake3` does not follow from line 5's chain and this row's cells: a release was changed after it was made (this row's version, time, snapshot hash or note, or line 5 rewritten with its snapshot hash and chain); restore releases.csv and the snapshots from version control"
        ]
    );
    // The chain published for every later release is not the one published before the rewrite.
    assert_ne!(new_chain, old_chain);
}

/// The versions of the shipped releases, oldest first.
fn shipped_versions(root: &Path) -> Vec<String> {
    register_rows(root)
        .into_iter()
        .map(|r| r[0].clone())
        .collect()
}

/// A project whose releases are all stored whole (as before records) builds the same bytes as the
/// shipped one; `locref migrate-releases` stores them as indexes and records again, byte for byte the
/// shipped files, keeping every recorded hash; the build after it is the same; and a second run has
/// nothing to do.
#[test]
fn migrating_whole_snapshots_to_records_keeps_every_byte_published_and_every_hash() {
    let dir = copy_project();
    let root = dir.path();
    let shipped_releases = snapshot(&root.join("sources/releases"));
    let run = locref(root, &["build", "--out", "public"], AFTER);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let published = snapshot(&root.join("public"));
    let versions = shipped_versions(root);
    for version in &versions {
        crate::common::store_whole(root, version);
    }
    assert!(
        !root
            .join(format!("sources/releases/{}.index", versions[0]))
            .exists()
    );
    let run = locref(root, &["build", "--out", "public"], AFTER);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(
        snapshot(&root.join("public")) == published,
        "whole snapshots build other bytes"
    );

    let run = locref(root, &["migrate-releases"], AFTER);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(
        text(&run.stdout).starts_with(&format!("migrated {} release(s) (", versions.len())),
        "{}",
        text(&run.stdout)
    );
    assert!(snapshot(&root.join("sources/releases")) == shipped_releases);
    let run = locref(root, &["build", "--out", "public"], AFTER);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(
        snapshot(&root.join("public")) == published,
        "the migrated releases build other bytes"
    );

    let before = inputs(root);
    let run = locref(root, &["migrate-releases"], AFTER);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(
        text(&run.stdout).contains("nothing was written"),
        "{}",
        text(&run.stdout)
    );
    assert_eq!(inputs(root), before);
}

/// A migration refuses a snapshot that no longer has its recorded hash, and writes nothing.
#[test]
fn a_migration_of_an_edited_snapshot_is_refused_and_writes_nothing() {
    let dir = copy_project();
    let root = dir.path();
    let version = &shipped_versions(root)[2];
    crate::common::store_whole(root, version);
    let path = format!("sources/releases/{version}.jsonl");
    let edited = read(root, &path).replacen(
        "\"verification\":\"official\"",
        "\"verification\":\"secondary\"",
        1,
    );
    std::fs::write(root.join(&path), edited).unwrap();
    let before = inputs(root);
    let run = locref(root, &["migrate-releases"], AFTER);
    assert_eq!(run.status.code(), Some(1));
    assert!(
        text(&run.stderr).contains(&format!(
            "{path}:1:1: error: this snapshot was changed after its release"
        )),
        "{}",
        text(&run.stderr)
    );
    assert_eq!(inputs(root), before);
}

/// The records and indexes edited by hand: each problem once, where it is.
#[test]
fn a_record_or_an_index_edited_by_hand_is_a_located_error() {
    let dir = copy_project();
    let root = dir.path();
    let version = "2026.11.23-3";
    let index_path = format!("sources/releases/{version}.index");
    let index = read(root, &index_path);
    let (code, name) = index.lines().nth(1).unwrap().split_once(' ').unwrap();
    let record_path = format!("sources/releases/records/{name}.jsonl");
    let record = read(root, &record_path);

    // A record edited: reported once at the record (however many releases name it), not as each
    // release's wrong hash.
    std::fs::write(
        root.join(&record_path),
        record.replacen("\"label\":\"", "\"label\":\"Edited ", 1),
    )
    .unwrap();
    let errors = check_errors(root);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(
        errors[0].starts_with(&format!(
            "{record_path}:1:1: error: this record was changed after it was written: its blake3 is "
        )),
        "{errors:#?}"
    );
    // A record that no longer reads: at its line.
    std::fs::write(
        root.join(&record_path),
        record.replacen("{\"id\":", "{\"id\"", 1),
    )
    .unwrap();
    let errors = check_errors(root);
    assert!(
        errors.iter().any(|e| e.starts_with(&format!("{record_path}:2:")) && e.contains("not a JSON record")),
        "{errors:#?}"
    );
    // A record missing: at the index line that names it.
    std::fs::remove_file(root.join(&record_path)).unwrap();
    let errors = check_errors(root);
    assert!(
        errors.contains(&format!(
            "{index_path}:2:4: error: the record of `{code}` ({record_path}) is missing"
        )),
        "{errors:#?}"
    );
    std::fs::write(root.join(&record_path), &record).unwrap();

    // An index line edited: at its line; the release's hash is not also reported.
    std::fs::write(
        root.join(&index_path),
        index.replacen(&format!("{code} "), "ZZ ", 1),
    )
    .unwrap();
    assert_eq!(
        check_errors(root),
        [format!(
            "{index_path}:2:1: error: `ZZ` is not a lower-case country code"
        )]
    );
    // An index naming another country's record.
    let third = index.lines().nth(2).unwrap().split_once(' ').unwrap().1;
    std::fs::write(root.join(&index_path), index.replacen(name, third, 1)).unwrap();
    let errors = check_errors(root);
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with(&format!("{index_path}:2:4: error: this record holds `"))),
        "{errors:#?}"
    );
    std::fs::write(root.join(&index_path), &index).unwrap();

    // A release stored both ways.
    std::fs::write(
        root.join(format!("sources/releases/{version}.jsonl")),
        crate::common::release_snapshot(root, version).unwrap(),
    )
    .unwrap();
    assert_eq!(
        check_errors(root),
        [format!(
            "sources/releases/{version}.jsonl:1:1: error: release `{version}` is stored twice, whole and as {index_path}: keep the index (`locref migrate-releases` writes it and removes the whole snapshot)"
        )]
    );
}

/// A release of a few changed answers costs the repository what changed: its index and the records of
/// the countries whose answers changed (at most 50 KB, against about 480 KB for a whole snapshot), and
/// every release stays verifiable from its recorded hash (each release checks clean after writing).
#[test]
fn a_small_release_adds_a_few_kilobytes_to_the_repository() {
    let dir = copy_project();
    let root = dir.path();
    // Whatever the shipped sources hold that is not released yet is released first, with every answer.
    // (2097-01-01T00:00:00Z: before the releases `add_releases` makes.)
    let run = locref(
        root,
        &[
            "release",
            "2097.1.1-1",
            "--no-change",
            "--note",
            "every answer",
        ],
        "4039372800",
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    let added = crate::common::releases::add_releases(root, 3, 3);
    assert_eq!(added.len(), 3);
    // Three countries' records at most (about 20 KB each, every answer of the country) and the index.
    for (n, bytes) in added.iter().enumerate() {
        assert!(*bytes <= 100_000, "release {}: {bytes} bytes", n + 1);
        let version = format!("2098.1.1-{}", n + 1);
        let index = read(root, &format!("sources/releases/{version}.index"));
        assert!(*bytes >= index.len() as u64);
    }
    for row in register_rows(root) {
        let text = crate::common::release_snapshot(root, &row[0]).unwrap();
        assert_eq!(blake3::hash(text.as_bytes()).to_hex().as_str(), row[2]);
    }
}

// ------------------------------------------------------------------------------ the published history

struct Shipped {
    _project: tempfile::TempDir,
    root: std::path::PathBuf,
}

/// One build of the shipped sources (at [`AFTER`]), shared by the read-only tests.
fn shipped() -> &'static Shipped {
    static SHIPPED: OnceLock<Shipped> = OnceLock::new();
    SHIPPED.get_or_init(|| {
        let project = copy_project();
        let root = project.path().to_path_buf();
        let run = locref(&root, &["build", "--out", "public"], AFTER);
        assert!(run.status.success(), "{}", text(&run.stderr));
        Shipped {
            _project: project,
            root,
        }
    })
}

fn published(path: &str) -> String {
    read(&shipped().root, &format!("public{path}"))
}

fn json(path: &str) -> Value {
    serde_json::from_str(&published(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A recorded country as the test reads it: its toggles, its facts by id, the kinds of answer its
/// record carries (none in a record made before answers were recorded) and those answers by (kind, id).
#[derive(Default)]
struct RecordedCountry {
    toggles: serde_json::Map<String, Value>,
    facts: BTreeMap<String, Value>,
    carries: BTreeSet<String>,
    answers: BTreeMap<(String, String), Value>,
}

/// A snapshot as the test reads it: country -> what it recorded.
type Recorded = BTreeMap<String, RecordedCountry>;

fn recorded(version: &str) -> Recorded {
    let text =
        crate::common::release_snapshot(Path::new(env!("CARGO_MANIFEST_DIR")), version).unwrap();
    let mut out = Recorded::new();
    let mut current = String::new();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        if let Some(code) = v["country"].as_str().filter(|_| v.get("toggles").is_some()) {
            current = code.to_string();
            let carries = v["answers"].as_array().map_or_else(BTreeSet::new, |kinds| {
                kinds
                    .iter()
                    .map(|k| k.as_str().unwrap().to_string())
                    .collect()
            });
            out.insert(
                current.clone(),
                RecordedCountry {
                    toggles: v["toggles"].as_object().unwrap().clone(),
                    carries,
                    ..Default::default()
                },
            );
        } else if let Some(kind) = v["answer"].as_str() {
            // An answer line follows its country's line and facts.
            let key = (kind.to_string(), v["id"].as_str().unwrap().to_string());
            out.get_mut(&current).unwrap().answers.insert(key, v);
        } else {
            let id = v["id"].as_str().unwrap();
            let code = id.split('-').next().unwrap();
            out.get_mut(code).unwrap().facts.insert(id.to_string(), v);
        }
    }
    out
}

/// A JSON value as text with every object's keys sorted, so two values compare by content.
fn canonical(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let sorted: BTreeMap<&String, String> =
                map.iter().map(|(k, v)| (k, canonical(v))).collect();
            let members: Vec<String> = sorted
                .iter()
                .map(|(k, v)| format!("{}:{v}", Value::String((*k).clone())))
                .collect();
            format!("{{{}}}", members.join(","))
        }
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(canonical).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}

/// One change as the model and the change set both name it: (country, what changed, kind, old, new).
/// What changed is a toggle's name, a fact's id, or an answer's `<kind> <id>` with the field that
/// changed (`phase pl-b2b-e-invoicing-main status`).
type Predicted = (String, String, String, String, String);

/// The changes between two snapshots, worked out here on their own, for the facts, the toggles and the
/// other answers (of the kinds both records carry, field by field).
fn expected_changes(old: &Recorded, new: &Recorded) -> BTreeSet<Predicted> {
    let mut out = BTreeSet::new();
    let codes: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    for code in codes {
        let (a, b) = (old.get(code), new.get(code));
        if let (Some(a), Some(b)) = (a, b) {
            for (name, value) in &b.toggles {
                if let Some(before) = a.toggles.get(name).filter(|v| *v != value) {
                    out.insert((
                        code.clone(),
                        name.clone(),
                        "toggle_flipped".into(),
                        canonical(before),
                        canonical(value),
                    ));
                }
            }
        }
        let mut push = |what: String, kind: &str, old: &Value, new: &Value| {
            out.insert((
                code.clone(),
                what,
                kind.into(),
                canonical(old),
                canonical(new),
            ));
        };
        // A fact's or an answer's grade and sources (a grade is compared only where both record one).
        fn graded(
            push: &mut impl FnMut(String, &str, &Value, &Value),
            what: &str,
            x: &Value,
            y: &Value,
        ) {
            let rank = |v: &Value| {
                ["unverified", "secondary", "official"]
                    .iter()
                    .position(|r| v == r)
            };
            let (gx, gy) = (&x["verification"], &y["verification"]);
            if gx != gy && !gx.is_null() && !gy.is_null() {
                let kind = if rank(gy) > rank(gx) {
                    "verification_raised"
                } else {
                    "verification_lowered"
                };
                push(what.into(), kind, gx, gy);
            }
            if x["source_urls"] != y["source_urls"] {
                push(
                    what.into(),
                    "source_changed",
                    &x["source_urls"],
                    &y["source_urls"],
                );
            }
        }
        let empty = RecordedCountry::default();
        let (ra, rb) = (a.unwrap_or(&empty), b.unwrap_or(&empty));
        let ids: BTreeSet<&String> = ra.facts.keys().chain(rb.facts.keys()).collect();
        for id in ids {
            match (ra.facts.get(id), rb.facts.get(id)) {
                (None, Some(f)) => push(id.clone(), "added", &Value::Null, &f["value"]),
                (Some(f), None) => push(id.clone(), "removed", &f["value"], &Value::Null),
                (Some(x), Some(y)) => {
                    if x["value"] != y["value"] {
                        push(id.clone(), "value_changed", &x["value"], &y["value"]);
                    }
                    graded(&mut push, id, x, y);
                    if x["effective_date"] != y["effective_date"] {
                        push(
                            id.clone(),
                            "effective_date_changed",
                            &x["effective_date"],
                            &y["effective_date"],
                        );
                    }
                }
                (None, None) => {}
            }
        }
        // The other answers: only the kinds both records carry (or the one record that has the country).
        let compared = |kind: &str| match (a, b) {
            (Some(a), Some(b)) => a.carries.contains(kind) && b.carries.contains(kind),
            (Some(one), None) | (None, Some(one)) => one.carries.contains(kind),
            (None, None) => false,
        };
        let keys: BTreeSet<&(String, String)> = ra
            .answers
            .keys()
            .chain(rb.answers.keys())
            .filter(|(kind, _)| compared(kind))
            .collect();
        for key in keys {
            let what = |field: &str| {
                format!("{} {} {field}", key.0, key.1)
                    .trim_end()
                    .to_string()
            };
            match (ra.answers.get(key), rb.answers.get(key)) {
                (None, Some(x)) => push(what(""), "added", &Value::Null, &x["fields"]),
                (Some(x), None) => push(what(""), "removed", &x["fields"], &Value::Null),
                (Some(x), Some(y)) => {
                    for (field, value) in y["fields"].as_object().unwrap() {
                        // A field the earlier record did not have is not compared.
                        if let Some(was) = x["fields"].get(field).filter(|was| *was != value) {
                            push(what(field), "value_changed", was, value);
                        }
                    }
                    graded(&mut push, &what(""), x, y);
                }
                (None, None) => {}
            }
        }
    }
    out
}

/// Never a change the snapshots do not show, never one they show left out, never a date the record
/// does not give.
#[test]
fn every_published_change_is_in_the_snapshots_and_every_date_in_the_record() {
    let register = read(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        "sources/releases/releases.csv",
    );
    let rows: Vec<Vec<String>> = csv::Reader::from_reader(register.as_bytes())
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect();
    assert_eq!(rows.len(), crate::common::shipped_releases().count);
    let releases = json("/api/v1/releases.json");
    let listed: Vec<&str> = releases["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["version"].as_str().unwrap())
        .collect();
    let newest_first: Vec<&str> = rows.iter().rev().map(|r| r[0].as_str()).collect();
    assert_eq!(listed, newest_first);
    let all = json("/api/v1/changes.json");
    let mut total = 0;
    let mut answer_changes_modelled = 0;
    for (i, row) in rows.iter().enumerate() {
        let detail = json(&format!("/api/v1/releases/{}.json", row[0]));
        let data = &detail["data"];
        assert_eq!(data["released_at"], row[1].as_str(), "{}", row[0]);
        assert_eq!(data["snapshot_blake3"], row[2].as_str());
        assert_eq!(data["chain_blake3"], row[3].as_str());
        assert_eq!(data["note"], row[4].as_str());
        let changes = data["changes"].as_array().unwrap();
        if i == 0 {
            assert!(
                data["previous"].is_null() && data["change_count"].is_null() && changes.is_empty()
            );
            continue;
        }
        assert_eq!(data["previous"], rows[i - 1][0].as_str());
        assert_eq!(data["change_count"], changes.len());
        let got: BTreeSet<Predicted> = changes
            .iter()
            .map(|c| {
                assert_eq!(c["release"], row[0].as_str());
                assert_eq!(c["released_at"], row[1].as_str());
                let what = match c["answer"].as_str() {
                    Some(kind) => format!(
                        "{kind} {} {}",
                        c["answer_id"].as_str().unwrap(),
                        c["field"].as_str().unwrap_or("")
                    )
                    .trim_end()
                    .to_string(),
                    None => c["fact_id"]
                        .as_str()
                        .or(c["toggle"].as_str())
                        .unwrap()
                        .to_string(),
                };
                (
                    c["country"].as_str().unwrap().to_string(),
                    what,
                    c["kind"].as_str().unwrap().to_string(),
                    canonical(&c["old"]),
                    canonical(&c["new"]),
                )
            })
            .collect();
        assert_eq!(got.len(), changes.len(), "{}: no change twice", row[0]);
        let predicted = expected_changes(&recorded(&rows[i - 1][0]), &recorded(&row[0]));
        assert_eq!(
            got.difference(&predicted).collect::<Vec<_>>(),
            Vec::<&Predicted>::new(),
            "{}: published but not in the snapshots",
            row[0]
        );
        assert_eq!(
            predicted.difference(&got).collect::<Vec<_>>(),
            Vec::<&Predicted>::new(),
            "{}: in the snapshots but not published",
            row[0]
        );
        answer_changes_modelled += got.iter().filter(|c| c.1.contains(' ')).count();
        // changes.json holds the same change set, in the same order.
        let in_all: Vec<&Value> = all["data"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["release"] == row[0].as_str())
            .collect();
        assert_eq!(in_all, changes.iter().collect::<Vec<_>>());
        total += changes.len();
    }
    // The model is held on the answers too, not only on facts and toggles: the shipped releases
    // changed some answers other than facts.
    assert!(answer_changes_modelled > 0);
    // The shipped sources are the last release: nothing is unreleased.
    assert_eq!(all["meta"]["count"], total);
    assert!(
        all["data"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| !c["release"].is_null())
    );
    // A seeded release is dated by the commit its note names (when the history is at hand).
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for row in &rows {
        let Some(commit) = row[3]
            .rsplit_once("(commit ")
            .and_then(|(_, c)| c.strip_suffix(')'))
        else {
            continue;
        };
        let Ok(git) = Command::new("git")
            .args(["show", "-s", "--format=%ct", commit])
            .current_dir(root)
            .output()
        else {
            continue;
        };
        if !git.status.success() {
            continue;
        }
        let seconds: i64 = text(&git.stdout).trim().parse().unwrap();
        let time = jiff::Timestamp::from_second(seconds).unwrap().to_string();
        assert_eq!(time, row[1], "{} is dated by commit {commit}", row[0]);
    }
}

#[test]
fn the_feed_is_atom_that_a_feed_parser_reads_newest_first() {
    let xml = published("/changes.xml");
    let feed = feed_rs::parser::parse(xml.as_bytes()).expect("a feed parser reads it");
    assert_eq!(feed.feed_type, feed_rs::model::FeedType::Atom);
    assert_eq!(feed.id, "https://locref.example.org/changes/");
    assert_eq!(
        feed.title.as_ref().unwrap().content,
        "Localization Reference Data Service: changes"
    );
    assert!(
        feed.links.iter().any(|l| l.rel.as_deref() == Some("self")
            && l.href == "https://locref.example.org/changes.xml")
    );
    let releases = json("/api/v1/releases.json");
    let releases = releases["data"].as_array().unwrap();
    assert_eq!(feed.entries.len(), releases.len());
    // The feed's time is when its content last changed, its newest entry's (nothing is unreleased: the
    // newest release's), not the build's.
    let newest: jiff::Timestamp = releases[0]["released_at"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(feed.updated.unwrap().timestamp(), newest.as_second());
    assert_ne!(feed.updated.unwrap().timestamp().to_string(), AFTER);
    // Each entry has a time of its own, newest first, though two releases were recorded in one second.
    let times: Vec<_> = feed.entries.iter().map(|e| e.updated.unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] > w[1]), "{times:?}");
    for (entry, release) in feed.entries.iter().zip(releases) {
        let version = release["version"].as_str().unwrap();
        assert_eq!(
            entry.id,
            format!("https://locref.example.org/api/v1/releases/{version}.json")
        );
        let when: jiff::Timestamp = release["released_at"].as_str().unwrap().parse().unwrap();
        assert_eq!(entry.updated.unwrap().timestamp(), when.as_second());
        assert_eq!(entry.published.unwrap().timestamp(), when.as_second());
        let title = &entry.title.as_ref().unwrap().content;
        assert!(title.starts_with(&format!("Release {version}")), "{title}");
        assert!(
            entry
                .links
                .iter()
                .any(|l| l.href == format!("https://locref.example.org/changes/{version}/"))
        );
        let body = entry.content.as_ref().unwrap().body.as_deref().unwrap();
        match release["change_count"].as_u64() {
            None => assert!(body.contains("The first release")),
            Some(n) => {
                let counted = format!("{n} change{}", if n == 1 { "" } else { "s" });
                assert!(title.contains(&format!("{counted} since")), "{title}");
                // The answer changes as sentences; the curation changes counted, not listed.
                let answers = release["answer_change_count"].as_u64().unwrap();
                assert_eq!(
                    body.matches("<li>").count(),
                    (answers as usize).min(100),
                    "{version}"
                );
            }
        }
    }
    // Release 2026.11.23-2 lowered NetSuite US's verification.
    let entry = feed
        .entries
        .iter()
        .find(|e| e.id.ends_with("/2026.11.23-2.json"))
        .unwrap();
    let body = entry.content.as_ref().unwrap().body.as_deref().unwrap();
    assert!(
        body.contains("<p>1 change: 0 answer changes, 1 curation change (sources and grades).</p>"),
        "{body}"
    );
    assert!(!body.contains("<li>"), "{body}");
}

/// An edit not released yet is the feed's first entry, dated by the build that made it.
#[test]
fn a_change_not_released_yet_leads_the_feed_the_page_and_the_history() {
    let dir = copy_project();
    let root = dir.path();
    edit_australia(root);
    let run = locref(root, &["build", "--out", "public"], AFTER);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let xml = read(root, "public/changes.xml");
    let feed = feed_rs::parser::parse(xml.as_bytes()).unwrap();
    let first = &feed.entries[0];
    assert_eq!(first.id, "https://locref.example.org/changes/#unreleased");
    assert_eq!(
        first.title.as_ref().unwrap().content,
        format!("Not released yet: 4 changes since {}", last())
    );
    assert_eq!(first.updated.unwrap().timestamp().to_string(), AFTER);
    assert_eq!(
        feed.entries.len(),
        crate::common::shipped_releases().count + 1,
        "the unreleased changes, then each release"
    );
    let changes: Value = serde_json::from_str(&read(root, "public/api/v1/changes.json")).unwrap();
    let unreleased: Vec<&Value> = changes["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["release"].is_null())
        .collect();
    assert_eq!(
        unreleased,
        [
            &json!({"release": null, "released_at": null, "country": "au", "fact_id": null, "answer": null, "answer_id": null, "field": null, "erp": null, "toggle": "saft_required", "label": "saft_required", "kind": "toggle_flipped",
                "substance": "answer", "sentence": "Australia: SAF-T required: yes (was: no)", "old": false, "new": true}),
            &json!({"release": null, "released_at": null, "country": "au", "fact_id": "au-periodic-reporting", "answer": null, "answer_id": null, "field": null, "erp": null, "toggle": null, "label": "Periodic / real-time reporting", "kind": "value_changed",
                "substance": "answer", "sentence": "Australia: Periodic / real-time reporting: adds “SAF-T: required.”",
                "old": AU_REPORTING_FACT,
                "new": format!("{AU_REPORTING_FACT} SAF-T: required.")}),
            // The phase the toggle reads, field by field.
            &json!({"release": null, "released_at": null, "country": "au", "fact_id": null, "answer": "phase", "answer_id": "au-saf-t-main", "field": "status", "erp": null, "toggle": null, "label": "SAF-T", "kind": "value_changed",
                "substance": "answer", "sentence": "Australia: SAF-T: status: now “in force” (was: “no such obligation”)", "old": "none", "new": "in-force"}),
            &json!({"release": null, "released_at": null, "country": "au", "fact_id": null, "answer": "phase", "answer_id": "au-saf-t-main", "field": "basis", "erp": null, "toggle": null, "label": "SAF-T", "kind": "value_changed",
                "substance": "answer", "sentence": "Australia: SAF-T: a “no” rests on: none given now (was: “an absence check”)", "old": "absence", "new": null}),
        ]
    );
    let page = read(root, "public/changes/index.html");
    let section = &page[page.find("<section id=\"unreleased\">").unwrap()..];
    let section = &section[..section.find("</section>").unwrap()];
    assert!(
        section.contains(&format!(
            "4 changes since release {}: 1 toggle flipped, 3 values changed. 4 answer changes, 0 curation changes.",
            last()
        )),
        "{section}"
    );
    assert!(section.contains("<h3><a href=\"/au/#history\">Australia</a></h3>\n<ul class=\"answers\">\n<li>Australia: SAF-T required: yes (was: no)</li>\n<li>Australia: Periodic / real-time reporting: adds “SAF-T: required.”</li>"), "{section}");
    let au = read(root, "public/au/index.html");
    let history = &au[au.find("<section id=\"history\">").unwrap()..];
    assert!(
        history.contains(&format!(
            "<h3>Not released yet (since release {})</h3>",
            last()
        )),
        "{history}"
    );
    let twin = read(root, "public/au/index.md");
    assert!(
        twin.contains(&format!("### Not released yet (since release {})", last())),
        "{twin}"
    );
    assert!(
        twin.contains("- Australia: SAF-T required: yes (was: no)\n"),
        "{twin}"
    );
}

/// Every feed and calendar is found from the pages it belongs to (autodiscovery in the head): the site's
/// feed and calendar from the home page, the calendar from the calendar page, the feed from the changes
/// pages; each country's and ERP's from its page (held in the tests of those). Each is also in the
/// header's reach: a "Changes" link on every page.
#[test]
fn the_site_feed_and_calendar_are_discoverable_from_their_pages() {
    let feed = "<link rel=\"alternate\" type=\"application/atom+xml\" title=\"Changes\" href=\"/changes.xml\">";
    let calendar = "<link rel=\"alternate\" type=\"text/calendar\" title=\"Obligation dates\" href=\"/calendar.ics\">";
    for (page, links) in [
        ("/index.html", &[feed, calendar][..]),
        ("/calendar/index.html", &[calendar][..]),
        ("/changes/index.html", &[feed][..]),
    ] {
        let html = published(page);
        let head = &html[..html.find("</head>").unwrap()];
        for link in links {
            assert!(head.contains(link), "{page} lacks {link}");
        }
    }
    for page in snapshot(&shipped().root.join("public"))
        .keys()
        .filter(|p| p.ends_with("index.html"))
    {
        let html = published(&format!("/{page}"));
        let header = &html[html.find("<header").unwrap()..html.find("</header>").unwrap()];
        assert!(
            header.contains("<a href=\"/changes/\">Changes</a>"),
            "{page}"
        );
    }
}

#[test]
fn the_changes_page_and_the_history_sections_show_every_release() {
    // The shipped releases are fewer than `/changes/` lists in full (the test of a long history holds
    // the window).
    assert!(crate::common::shipped_releases().count <= locref::render::history::RECENT_RELEASES);
    let page = published("/changes/index.html");
    assert!(page.contains("<link rel=\"alternate\" type=\"application/atom+xml\" title=\"Changes\" href=\"/changes.xml\">"));
    assert!(page.contains(&format!("<p>No change since release {}.</p>", last())));
    let releases = json("/api/v1/releases.json");
    let mut at = 0;
    for release in releases["data"].as_array().unwrap() {
        // Listed newest first, each row linking to the release's page, which lists its changes.
        let version = release["version"].as_str().unwrap();
        let id = format!(
            "<tr id=\"release-{version}\"><th scope=\"row\" class=\"version\"><a href=\"/changes/{version}/\">{version}</a></th>"
        );
        let found = page.find(&id).unwrap_or_else(|| panic!("{id}"));
        assert!(found > at, "newest first: {version}");
        at = found;
        // The row counts the release's changes, and its counts by kind add up to that number.
        let row = &page[found..found + page[found..].find("</tr>").unwrap()];
        if let Some(n) = release["change_count"].as_u64().filter(|n| *n > 0) {
            let counted = format!(
                "<td data-label=\"Changes\">{n} change{}: ",
                if n == 1 { "" } else { "s" }
            );
            let at = row
                .find(&counted)
                .unwrap_or_else(|| panic!("{counted} in {row}"));
            let by_kind = &row[at + counted.len()..];
            let by_kind = &by_kind[..by_kind.find("</td>").unwrap()];
            let sum: u64 = by_kind
                .split(", ")
                .map(|part| part.split(' ').next().unwrap().parse::<u64>().unwrap())
                .sum();
            assert_eq!(sum, n, "{row}");
        }
        let own = published(&format!("/changes/{version}/index.html"));
        assert!(own.contains(&format!("<h1>Release {version}</h1>")));
        // Every change is on its page: the answers as sentences, the curation changes as rows.
        let rows = own.matches("<td class=\"change\">").count() / 2;
        let sentences = own.matches("<li>").count()
            - published("/changes/2026.11.21-1/index.html")
                .matches("<li>")
                .count();
        match release["change_count"].as_u64() {
            None => assert!(own.contains("The first release") && rows == 0),
            Some(n) => assert_eq!((rows + sentences) as u64, n, "{version}"),
        }
        let twin = published(&format!("/changes/{version}/index.md"));
        assert!(twin.starts_with(&format!("# Release {version}\n")));
    }
    let twin = published("/changes/index.md");
    assert!(twin.starts_with("# Changes\n"));
    assert!(twin.contains(
        "| [2026.11.21-1](/changes/2026.11.21-1/index.md) | 2026-11-21 | none | the first release |"
    ));
    let two = published("/changes/2026.11.23-2/index.html");
    assert!(two.contains("<p>1 change since release <a href=\"/changes/2026.11.23-1/\">2026.11.23-1</a>: 1 verification lowered.</p>"));
    // The United States' History: NetSuite's support lowered to secondary in 2026.11.23-2, also on
    // NetSuite's page: in full while it is among the newest releases that changed them, else counted
    // and linked to where the archive page lists it.
    for (path, anchor, row) in [
        (
            "/us/index.html",
            "country-us",
            "<th scope=\"row\">E-invoicing support: Oracle NetSuite <code>us-e-invoicing-erp-support-oracle-netsuite</code></th><td>verification lowered</td><td class=\"change\">official</td><td class=\"change\">secondary</td>",
        ),
        (
            "/erp/oracle-netsuite/index.html",
            "erp-oracle-netsuite",
            "<td><a href=\"/us/#history\">United States</a></td><th scope=\"row\">E-invoicing support: Oracle NetSuite <code>us-e-invoicing-erp-support-oracle-netsuite</code></th><td>verification lowered</td>",
        ),
    ] {
        let page = published(path);
        let history = &page[page.find("<section id=\"history\">").unwrap()..];
        let heading =
            "<h3>Release <a href=\"/changes/2026.11.23-2/\">2026.11.23-2</a> (2026-11-23)</h3>";
        let shown = history.matches("<h3>Release ").count();
        assert!(shown <= locref::render::history::HISTORY_RELEASES, "{path}");
        match history.find(heading) {
            Some(release) => assert!(history[release..].contains(row), "{path}"),
            None => {
                assert_eq!(shown, locref::render::history::HISTORY_RELEASES, "{path}");
                let link = format!("<a href=\"/changes/archive/2026/#{anchor}\">");
                assert!(history.contains(&link), "{path}: {link}");
                let archive = published("/changes/archive/2026/index.html");
                let item = line_with_id(&archive, anchor).unwrap();
                assert!(
                    item.contains("<a href=\"/changes/2026.11.23-2/\">2026.11.23-2</a>"),
                    "{item}"
                );
            }
        }
    }
    // Moldova's dropped source is shown as text, never linked.
    let md = published("/md/index.html");
    let history = &md[md.find("<section id=\"history\">").unwrap()..];
    assert!(history.contains("https://224320.siukjm.asia/en/news/2019/06/05/19004305"));
    assert!(!history.contains("href=\"https://224320.siukjm.asia"));
}

#[test]
fn the_sitemap_lists_every_page_with_its_time_and_robots_txt_names_it() {
    let xml = published("/sitemap.xml");
    let doc = roxmltree::Document::parse(&xml).expect("well-formed XML");
    let root = doc.root_element();
    const NS: &str = "http://www.sitemaps.org/schemas/sitemap/0.9";
    assert_eq!(
        (root.tag_name().namespace(), root.tag_name().name()),
        (Some(NS), "urlset")
    );
    let mut locations = BTreeSet::new();
    let mut lastmods = BTreeMap::new();
    for url in root.children().filter(|n| n.is_element()) {
        assert_eq!(
            (url.tag_name().namespace(), url.tag_name().name()),
            (Some(NS), "url")
        );
        let children: Vec<&str> = url
            .children()
            .filter(|n| n.is_element())
            .map(|n| n.tag_name().name())
            .collect();
        // The protocol's elements, in its order: loc, then lastmod (left out for a page that shows
        // nothing dated: an ERP page whose every answer is unknown and unreleased).
        assert!(
            children == ["loc", "lastmod"] || children == ["loc"],
            "{children:?}"
        );
        let loc = url
            .children()
            .find(|n| n.has_tag_name((NS, "loc")))
            .unwrap()
            .text()
            .unwrap();
        let lastmod = url
            .children()
            .find(|n| n.has_tag_name((NS, "lastmod")))
            .map(|n| n.text().unwrap());
        assert!(
            loc.starts_with("https://locref.example.org/") && loc.len() < 2048,
            "{loc}"
        );
        // A W3C date: the day the page's content last changed as the data dates it.
        if let Some(lastmod) = lastmod {
            lastmods.insert(
                loc.to_string(),
                lastmod.parse::<jiff::civil::Date>().unwrap().to_string(),
            );
        } else {
            assert!(loc.contains("/erp/"), "{loc} has no date");
        }
        assert!(locations.insert(loc.to_string()), "{loc} twice");
    }
    let pages: BTreeSet<String> = snapshot(&shipped().root.join("public"))
        .keys()
        .filter(|p| p.ends_with("index.html"))
        .map(|p| {
            format!(
                "https://locref.example.org/{}",
                p.trim_end_matches("index.html")
            )
        })
        .collect();
    assert_eq!(locations, pages, "every page but the 404 page");
    assert_eq!(locations.len(), crate::common::shipped_pages() - 1);
    // A country's page: the newest of its released changes and its answers' check days, as the API
    // publishes them; a release's page: its day; the pages of the whole dataset: the newest of all.
    let day = |time: &str| time[..10].to_string();
    let changes = json("/api/v1/changes.json");
    let mut newest = BTreeMap::<String, String>::new();
    for change in changes["data"].as_array().unwrap() {
        if let Some(at) = change["released_at"].as_str() {
            let entry = newest
                .entry(change["country"].as_str().unwrap().to_string())
                .or_default();
            *entry = (*entry).clone().max(day(at));
        }
    }
    let mut site = json("/api/v1/releases.json")["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| day(r["released_at"].as_str().unwrap()))
        .max()
        .unwrap();
    for country in json("/api/v1/countries.json")["data"].as_array().unwrap() {
        let code = country["code"].as_str().unwrap();
        let detail = json(&format!("/api/v1/countries/{code}.json"));
        let checked = detail["data"]["facts"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|f| f["last_checked"].as_str().map(str::to_string));
        let expected = checked.chain(newest.get(code).cloned()).max().unwrap();
        assert_eq!(
            lastmods[&format!("https://locref.example.org/{code}/")],
            expected,
            "{code}"
        );
        site = site.max(expected);
    }
    assert_eq!(lastmods["https://locref.example.org/"], site);
    assert_eq!(lastmods["https://locref.example.org/changes/"], site);
    assert_eq!(
        lastmods[&format!("https://locref.example.org/changes/{}/", last())],
        day(last_at())
    );
    assert_eq!(
        published("/robots.txt"),
        "User-agent: *\nAllow: /\n\nSitemap: https://locref.example.org/sitemap.xml\n"
    );
}

#[test]
fn the_new_outputs_are_listed_in_the_index_openapi_and_llms_txt() {
    let index = json("/api/v1/index.json");
    let entries: BTreeMap<&str, &Value> = index["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["path"].as_str().unwrap(), e))
        .collect();
    let changes = json("/api/v1/changes.json");
    assert_eq!(
        entries["/api/v1/changes.json"]["count"],
        changes["meta"]["count"]
    );
    assert_eq!(
        entries["/api/v1/releases.json"]["count"],
        crate::common::shipped_releases().count
    );
    for path in [
        "/api/v1/releases/{version}.json",
        "/changes.xml",
        "/sitemap.xml",
        "/robots.txt",
    ] {
        assert!(entries[path]["count"].is_null(), "{path}");
    }
    let openapi = json("/api/openapi.json");
    let paths = &openapi["paths"];
    let release = &paths["/api/v1/releases/{version}.json"]["get"];
    assert_eq!(release["parameters"][0]["name"], "version");
    assert_eq!(release["parameters"][0]["schema"]["enum"][0], last());
    assert!(release["responses"]["404"].is_object());
    for (path, media) in [
        ("/changes.xml", "application/xml"),
        ("/sitemap.xml", "application/xml"),
        ("/robots.txt", "text/plain"),
        ("/api/v1/changes.json", "application/json"),
        ("/api/v1/releases.json", "application/json"),
    ] {
        assert!(
            paths[path]["get"]["responses"]["200"]["content"][media].is_object(),
            "{path}"
        );
    }
    let llms = published("/llms.txt");
    for line in [
        "- [Changes](https://locref.example.org/changes/index.md): What changed in the published answers: the changes not released yet, the newest release's answer changes, the newest releases, and a link to each year's archive of releases.".to_string(),
        // The newest release first.
        format!("\n## Releases\n\n- [Release {0}](https://locref.example.org/changes/{0}/index.md)\n", last()),
        "- [/api/v1/changes.json](https://locref.example.org/api/v1/changes.json): ".to_string(),
        format!("- [/api/v1/releases/{{version}}.json](https://locref.example.org/api/v1/releases/{}.json): ", last()),
        "- [/changes.xml](https://locref.example.org/changes.xml): ".to_string(),
        "- [/sitemap.xml](https://locref.example.org/sitemap.xml): ".to_string(),
        "- [/robots.txt](https://locref.example.org/robots.txt): ".to_string(),
    ] {
        assert!(llms.contains(&line), "{line}\nnot in\n{llms}");
    }
    // The dev server and static hosts answer an unknown release like an unknown country.
    let headers = published("/_headers");
    assert!(
        headers
            .contains("/api/v1/releases/*.json\n  Content-Type: application/json; charset=utf-8\n")
    );
    assert!(headers.contains("/changes.xml\n  Content-Type: application/xml; charset=utf-8\n"));
}

/// A project without releases publishes an empty history; its first release starts one (with no change
/// set: there is nothing earlier to compare with).
#[test]
fn a_project_without_releases_has_an_empty_history_until_its_first_release() {
    let dir = copy_project();
    let root = dir.path();
    std::fs::remove_dir_all(root.join("sources/releases")).unwrap();
    let build = locref(root, &["build", "--out", "public"], AFTER);
    assert!(build.status.success(), "{}", text(&build.stderr));
    let changes: Value = serde_json::from_str(&read(root, "public/api/v1/changes.json")).unwrap();
    assert_eq!(changes["data"], json!([]));
    let releases: Value = serde_json::from_str(&read(root, "public/api/v1/releases.json")).unwrap();
    assert_eq!(releases["data"], json!([]));
    let feed = feed_rs::parser::parse(read(root, "public/changes.xml").as_bytes()).unwrap();
    assert!(feed.entries.is_empty());
    assert!(read(root, "public/changes/index.html").contains("No release is recorded yet"));
    assert!(read(root, "public/fr/index.html").contains("<p>No release is recorded yet."));

    let run = locref(root, &["release", "1"], AFTER);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let stdout = text(&run.stdout);
    assert!(
        stdout.contains("released 1 at 2099-01-01T00:00:00Z: ")
            && stdout.contains(" other answers of 61 countries; the first release"),
        "{stdout}"
    );
    assert_eq!(
        read(root, "sources/releases/releases.csv").lines().next(),
        Some("version,released_at,snapshot_blake3,chain_blake3,note")
    );
    let build = locref(root, &["build", "--out", "public"], AFTER);
    assert!(build.status.success(), "{}", text(&build.stderr));
    let detail: Value = serde_json::from_str(&read(root, "public/api/v1/releases/1.json")).unwrap();
    assert_eq!(detail["data"]["previous"], Value::Null);
    assert_eq!(detail["data"]["change_count"], Value::Null);
    assert_eq!(detail["data"]["changes"], json!([]));
    let feed = feed_rs::parser::parse(read(root, "public/changes.xml").as_bytes()).unwrap();
    assert_eq!(feed.entries.len(), 1);
    assert_eq!(
        feed.entries[0].title.as_ref().unwrap().content,
        "Release 1: the first release"
    );
}

// ------------------------------------------------------------------ changes for readers, subscriptions

/// A change's sentence as the pages and the feeds show it: the fact texts' clauses in words.
fn shown(sentence: &Value) -> String {
    locref::render::text::plain_clauses(sentence.as_str().unwrap())
}

/// Text as the pages' HTML escape writes it.
fn escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// A change's value as its sentence says it (what `old` and `new` hold, in words).
fn said(value: &Value, kind: &str) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Bool(true) => "yes".into(),
        Value::Bool(false) => "no".into(),
        Value::Null if kind == "toggle_flipped" => "unknown".into(),
        Value::Null => "not recorded".into(),
        other => other.to_string(),
    }
}

/// A field's recorded value as a reader reads it: a phase's status in words, a vocabulary id by its
/// label in `rules/vocabulary.toml` (several, space-separated, joined by ", "), anything else as it is.
fn in_words(field: &str, value: &str) -> String {
    let status = [
        ("in-force", "in force"),
        ("enacted", "enacted"),
        ("enacted-date-pending", "enacted, start date pending"),
        ("planned", "planned"),
        ("none", "no such obligation"),
        ("unclear", "unclear"),
    ];
    if field == "status" {
        return status
            .iter()
            .find(|(id, _)| *id == value)
            .map_or(value.to_string(), |(_, words)| words.to_string());
    }
    let set = match field {
        "model" => "einvoicing_models",
        "formats" => "einvoicing_formats",
        "platforms" => "einvoicing_platforms",
        "signature" => "signature_answers",
        "archive_location" => "archive_locations",
        _ => return value.to_string(),
    };
    let vocabulary: toml::Table = toml::from_str(&read(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        "rules/vocabulary.toml",
    ))
    .unwrap();
    value
        .split(' ')
        .map(|id| {
            vocabulary[set]
                .get(id)
                .and_then(|l| l.as_str())
                .unwrap_or(id)
                .to_string()
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The quoted texts of a sentence (between “ and ”).
fn quoted(sentence: &str) -> Vec<&str> {
    sentence
        .split('“')
        .skip(1)
        .map(|part| part.split_once('”').map_or(part, |(q, _)| q))
        .collect()
}

/// Every change says whether it changes an answer or only its curation, and its sentence says that
/// change: its country, what changed, the answer now and what it was, each read from the change itself.
/// The pages, the History sections and the feeds lead with exactly those sentences.
#[test]
fn every_sentence_says_the_change_it_describes_and_answers_lead_the_pages() {
    let countries = json("/api/v1/countries.json");
    let names: BTreeMap<&str, &str> = countries["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["code"].as_str().unwrap(), c["name"].as_str().unwrap()))
        .collect();
    let all = json("/api/v1/changes.json");
    let changes = all["data"].as_array().unwrap();
    let mut kinds_seen = BTreeSet::new();
    for c in changes {
        let kind = c["kind"].as_str().unwrap();
        kinds_seen.insert(kind);
        let sentence = c["sentence"].as_str().unwrap();
        let answer = matches!(
            kind,
            "toggle_flipped" | "added" | "removed" | "value_changed" | "effective_date_changed"
        );
        assert_eq!(
            c["substance"],
            if answer { "answer" } else { "curation" },
            "{c}"
        );
        let country = names[c["country"].as_str().unwrap()];
        let rest = sentence
            .strip_prefix(&format!("{country}: "))
            .unwrap_or_else(|| panic!("{sentence} names {country} first"));
        let (old, new) = (said(&c["old"], kind), said(&c["new"], kind));
        // An answer's field that holds an id (a status, a model) is said by its words.
        let (old, new) = match c["field"].as_str() {
            Some(field) if kind == "value_changed" => {
                (in_words(field, &old), in_words(field, &new))
            }
            _ => (old, new),
        };
        if c["toggle"].is_null() {
            let label = c["label"].as_str().unwrap();
            assert!(rest.starts_with(label), "{sentence} names {label}");
        }
        match kind {
            "toggle_flipped" => assert!(
                rest.ends_with(&format!(": {new} (was: {old})")),
                "{sentence}"
            ),
            // An answer added (a phase, a regime, …) is said by its fields: its free text as written.
            "added" if c["answer"].is_string() => {
                assert!(rest.contains(" added: “"), "{sentence}");
                for field in ["scope", "applies_from"] {
                    if let Some(value) = c["new"][field].as_str() {
                        assert!(rest.contains(value), "{sentence} says its {field}");
                    }
                }
            }
            "removed" if c["answer"].is_string() => {
                assert!(rest.contains(" removed (was: “"), "{sentence}");
                for field in ["scope", "applies_from"] {
                    if let Some(value) = c["old"][field].as_str() {
                        assert!(rest.contains(value), "{sentence} says its {field}");
                    }
                }
            }
            "added" => assert!(rest.ends_with(&format!(" added: “{new}”")), "{sentence}"),
            "removed" => assert!(
                rest.ends_with(&format!(" removed (was: “{old}”)")),
                "{sentence}"
            ),
            "effective_date_changed" => assert!(
                rest.ends_with(&format!("(was: {old})"))
                    && (c["new"].is_null() || rest.contains(&format!("effective from {new} "))),
                "{sentence}"
            ),
            "verification_raised" | "verification_lowered" => {
                let verb = kind.trim_start_matches("verification_");
                assert!(
                    rest.ends_with(&format!(": grade {verb} from {old} to {new}")),
                    "{sentence}"
                );
            }
            "source_changed" => assert!(rest.contains(": sources changed ("), "{sentence}"),
            "value_changed" => {
                // Only the sentences that changed, each as the value writes it: what it says now is in
                // the new value and not the old one, what it said is in the old value.
                // Changed sentences that unchanged ones separate are joined by " … ": each passage
                // is the value's own words.
                let parts = quoted(rest);
                assert!(!parts.is_empty(), "{sentence}");
                // A long text is cut to the words that changed, "… " and " …" where it was cut.
                let passages = |part: &str| {
                    part.trim_start_matches("… ")
                        .trim_end_matches(" …")
                        .split(" … ")
                        .map(str::to_string)
                        .collect::<Vec<_>>()
                };
                let all_in =
                    |part: &str, value: &str| passages(part).iter().all(|p| value.contains(p));
                let none_in =
                    |part: &str, value: &str| passages(part).iter().all(|p| !value.contains(p));
                if rest.ends_with("(was: none given)") {
                    // An answer's field that was empty: what it says now, whole.
                    assert_eq!(parts.len(), 1, "{sentence}");
                    assert_eq!(parts[0], new, "{sentence}");
                } else if rest.ends_with(": none given now") || rest.contains(": none given now (")
                {
                    assert!(all_in(parts[0], &old), "{sentence}");
                } else if rest.contains(": now “") {
                    // What it says now is the new value's words (a text cut short at its end may
                    // also be words of the old one), and differs from what it said.
                    assert_eq!(parts.len(), 2, "{sentence}");
                    assert!(all_in(parts[0], &new) && parts[0] != parts[1], "{sentence}");
                    assert!(all_in(parts[1], &old), "{sentence}");
                } else if rest.contains(": adds “") {
                    assert!(
                        all_in(parts[0], &new) && none_in(parts[0], &old),
                        "{sentence}"
                    );
                } else if rest.contains(": no longer says “") {
                    assert!(
                        all_in(parts[0], &old) && none_in(parts[0], &new),
                        "{sentence}"
                    );
                } else {
                    assert_eq!(parts, [new.as_str(), old.as_str()], "{sentence}");
                }
            }
            other => panic!("a kind of change this test does not know: {other}"),
        }
    }
    assert!(kinds_seen.contains("value_changed") && kinds_seen.contains("toggle_flipped"));

    // Each release's page: its answer changes first, each as its sentence, in the change set's order; its
    // curation changes counted and folded into one <details>.
    let releases = json("/api/v1/releases.json");
    for release in releases["data"].as_array().unwrap() {
        let version = release["version"].as_str().unwrap();
        let Some(total) = release["change_count"].as_u64() else {
            continue;
        };
        let set: Vec<&Value> = changes.iter().filter(|c| c["release"] == version).collect();
        let answers: Vec<String> = set
            .iter()
            .filter(|c| c["substance"] == "answer")
            .map(|c| format!("<li>{}</li>", escaped(&shown(&c["sentence"]))))
            .collect();
        assert_eq!(release["answer_change_count"], answers.len());
        assert_eq!(
            release["curation_change_count"].as_u64().unwrap() + answers.len() as u64,
            total
        );
        // Every answer's sentence is on the release's page (in the order of country names there:
        // `pages::a_release_page_lists_its_changes_by_country_name`).
        let page = published(&format!("/changes/{version}/index.html"));
        let mut at = 0;
        for li in &answers {
            let found = page.find(li.as_str()).unwrap_or_else(|| panic!("{li}"));
            at = at.max(found + li.len());
        }
        let curation = total as usize - answers.len();
        if curation > 0 {
            let details = page
                .find("<details class=\"curation\">")
                .expect("curation folded");
            assert!(details > at, "{version}: the answers come first");
            assert!(page[details..].contains(&format!("<summary>{curation} curation change")));
        } else {
            assert!(!page.contains("<details class=\"curation\">"));
        }
    }
    // The /changes/ page leads with the newest release's answer changes.
    let newest = releases["data"][0]["version"].as_str().unwrap();
    let page = published("/changes/index.html");
    let latest = &page[page.find("<section id=\"latest\">").unwrap()..];
    let latest = &latest[..latest.find("</section>").unwrap()];
    let sentences: Vec<String> = changes
        .iter()
        .filter(|c| c["release"] == newest && c["substance"] == "answer")
        .map(|c| format!("<li>{}</li>", escaped(&shown(&c["sentence"]))))
        .collect();
    assert_eq!(latest.matches("<li>").count(), sentences.len());
    for li in &sentences {
        assert!(latest.contains(li.as_str()), "{li}");
    }
    // Norway's History: its answer changes as sentences, above its curation changes, for the newest
    // releases that changed Norway (the section shows HISTORY_RELEASES of them in full).
    let no = published("/no/index.html");
    let history = &no[no.find("<section id=\"history\">").unwrap()..];
    let mut shown_releases: Vec<&str> = Vec::new();
    for release in releases["data"].as_array().unwrap() {
        let version = release["version"].as_str().unwrap();
        if changes
            .iter()
            .any(|c| c["country"] == "no" && c["release"] == version)
        {
            shown_releases.push(version);
        }
    }
    shown_releases.truncate(locref::render::history::HISTORY_RELEASES);
    for c in changes.iter().filter(|c| {
        c["country"] == "no"
            && (c["release"].is_null()
                || shown_releases.contains(&c["release"].as_str().unwrap_or_default()))
    }) {
        let sentence = escaped(&shown(&c["sentence"]));
        if c["substance"] == "answer" {
            assert!(
                history.contains(&format!("<li>{sentence}</li>")),
                "{sentence}"
            );
        } else {
            assert!(
                !history.contains(&format!("<li>{sentence}</li>")),
                "{sentence}"
            );
        }
    }
}

/// The changes of one release, grouped by release as the history feeds group them.
fn grouped<'a>(changes: impl Iterator<Item = &'a Value>) -> Vec<(String, Vec<&'a Value>)> {
    let mut out: Vec<(String, Vec<&Value>)> = Vec::new();
    for c in changes {
        let release = c["release"].as_str().unwrap_or("unreleased").to_string();
        match out.last_mut() {
            Some((r, list)) if *r == release => list.push(c),
            _ => out.push((release, vec![c])),
        }
    }
    out
}

/// Checks one subscription feed: Atom that a feed parser reads, one entry per release that changed its
/// subject, each listing exactly the subject's answer sentences of that release.
fn assert_history_feed(path: &str, title: &str, changes: &[&Value]) {
    let xml = published(path);
    let feed = feed_rs::parser::parse(xml.as_bytes()).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert_eq!(feed.feed_type, feed_rs::model::FeedType::Atom, "{path}");
    assert_eq!(feed.id, format!("https://locref.example.org{path}"));
    assert_eq!(
        feed.title.as_ref().unwrap().content,
        format!("Localization Reference Data Service: {title}: changes")
    );
    let groups = grouped(changes.iter().copied());
    assert_eq!(feed.entries.len(), groups.len(), "{path}");
    for (entry, (release, set)) in feed.entries.iter().zip(&groups) {
        assert_eq!(
            entry.id,
            format!("https://locref.example.org{path}#{release}")
        );
        let body = entry.content.as_ref().unwrap().body.as_deref().unwrap();
        let answers: Vec<String> = set
            .iter()
            .filter(|c| c["substance"] == "answer")
            .take(100)
            .map(|c| format!("<li>{}</li>", escaped(&shown(&c["sentence"]))))
            .collect();
        assert_eq!(
            body.matches("<li>").count(),
            answers.len(),
            "{path} {release}"
        );
        for li in &answers {
            assert!(body.contains(li.as_str()), "{path}: {li}");
        }
    }
}

/// A feed per country and per ERP, a calendar per country: linked from their pages, listed in index.json
/// and openapi.json; the feeds read by a feed parser, the calendars by an iCalendar parser, each event
/// the one `/calendar.ics` has for the same phase (same UID, same lines).
#[test]
fn every_country_and_erp_has_its_feed_and_every_country_its_calendar() {
    let all = json("/api/v1/changes.json");
    let changes = all["data"].as_array().unwrap();
    let countries = json("/api/v1/countries.json");
    let calendar = published("/calendar.ics");
    let global = ical::IcalParser::new(calendar.as_bytes())
        .next()
        .unwrap()
        .unwrap();
    let event_lines = |event: &ical::parser::ical::component::IcalEvent| -> Vec<String> {
        event
            .properties
            .iter()
            .map(|p| format!("{}:{:?}:{:?}", p.name, p.params, p.value))
            .collect()
    };
    let uid = |event: &ical::parser::ical::component::IcalEvent| -> String {
        let p = event.properties.iter().find(|p| p.name == "UID").unwrap();
        p.value.clone().unwrap()
    };
    let mut events_seen = 0;
    for country in countries["data"].as_array().unwrap() {
        let code = country["code"].as_str().unwrap();
        let name = country["name"].as_str().unwrap();
        let mine: Vec<&Value> = changes.iter().filter(|c| c["country"] == code).collect();
        assert_history_feed(&format!("/{code}/changes.xml"), name, &mine);
        // The calendar: one PRODID, and the events of /calendar.ics whose page is this country's.
        let path = format!("/{code}/calendar.ics");
        let ics = published(&path);
        assert_eq!(ics.matches("\nPRODID:").count(), 1, "{path}");
        let mut parser = ical::IcalParser::new(ics.as_bytes());
        let parsed = parser
            .next()
            .expect("one calendar")
            .expect("valid iCalendar");
        assert!(parser.next().is_none());
        let expected: Vec<Vec<String>> = global
            .events
            .iter()
            .filter(|e| {
                e.properties.iter().any(|p| {
                    p.name == "URL"
                        && p.value.as_deref().is_some_and(|u| {
                            u.starts_with(&format!("https://locref.example.org/{code}/#"))
                        })
                })
            })
            .map(event_lines)
            .collect();
        let got: Vec<Vec<String>> = parsed.events.iter().map(event_lines).collect();
        events_seen += expected.len();
        if expected.is_empty() {
            // No phase of the country has a date: one event says so (a calendar holds a component),
            // linking the country page.
            assert_eq!(got.len(), 1, "{path}");
            let property = |name: &str| {
                parsed.events[0]
                    .properties
                    .iter()
                    .find(|p| p.name == name)
                    .and_then(|p| p.value.clone())
                    .unwrap_or_default()
            };
            assert_eq!(
                property("SUMMARY"),
                format!("{name}: no dated obligation recorded").replace(',', "\\,"),
                "{path}"
            );
            assert_eq!(
                property("URL"),
                format!("https://locref.example.org/{code}/")
            );
        } else {
            assert_eq!(got, expected, "{path}");
        }
        for event in &parsed.events {
            assert!(uid(event).ends_with("@locref.example.org"));
        }
        // Linked from the country's page: in its head and visibly.
        let page = published(&format!("/{code}/index.html"));
        assert!(page.contains(&format!(
            "<link rel=\"alternate\" type=\"application/atom+xml\" title=\"{}: changes\" href=\"/{code}/changes.xml\">",
            escaped(name)
        )));
        assert!(page.contains(&format!(
            "<link rel=\"alternate\" type=\"text/calendar\" title=\"{}: obligation dates\" href=\"/{code}/calendar.ics\">",
            escaped(name)
        )));
        assert!(page.contains(&format!("<a href=\"/{code}/changes.xml\">")));
        assert!(page.contains(&format!("<a href=\"/{code}/calendar.ics\">")));
    }
    assert_eq!(
        events_seen,
        global.events.len(),
        "every phase in one country's calendar"
    );
    let erps = json("/api/v1/erps.json");
    for erp in erps["data"].as_array().unwrap() {
        let id = erp["id"].as_str().unwrap();
        let name = erp["name"].as_str().unwrap();
        // The ERP's feed holds the changes of the facts about it, newest release first.
        let mut mine: Vec<&Value> = changes.iter().filter(|c| c["erp"] == id).collect();
        let order: Vec<&str> =
            changes
                .iter()
                .filter_map(|c| c["release"].as_str())
                .fold(Vec::new(), |mut v, r| {
                    if v.last() != Some(&r) {
                        v.push(r)
                    }
                    v
                });
        mine.sort_by_key(|c| order.iter().position(|r| c["release"] == *r));
        assert_history_feed(&format!("/erp/{id}/changes.xml"), name, &mine);
        let page = published(&format!("/erp/{id}/index.html"));
        assert!(page.contains(&format!(
            "<link rel=\"alternate\" type=\"application/atom+xml\" title=\"{}: changes\" href=\"/erp/{id}/changes.xml\">",
            escaped(name)
        )));
        assert!(page.contains(&format!("<a href=\"/erp/{id}/changes.xml\">")));
    }
    // Listed in index.json and described in openapi.json.
    let index = json("/api/v1/index.json");
    let listed: BTreeSet<&str> = index["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    let openapi = json("/api/openapi.json");
    for (path, media) in [
        ("/{code}/changes.xml", "application/xml"),
        ("/{code}/calendar.ics", "text/calendar"),
        ("/erp/{id}/changes.xml", "application/xml"),
    ] {
        assert!(listed.contains(path), "{path} in index.json");
        assert!(
            openapi["paths"][path]["get"]["responses"]["200"]["content"][media].is_object(),
            "{path} in openapi.json"
        );
    }
    // The follow section lists every country's feed and calendar, without a script.
    let page = published("/changes/index.html");
    let follow = &page[page.find("<section id=\"follow\">").unwrap()..];
    let follow = &follow[..follow.find("</section>").unwrap()];
    for country in countries["data"].as_array().unwrap() {
        let code = country["code"].as_str().unwrap();
        assert!(
            follow.contains(&format!("<a href=\"/{code}/changes.xml\"")),
            "{code}"
        );
        assert!(
            follow.contains(&format!("<a href=\"/{code}/calendar.ics\"")),
            "{code}"
        );
    }
}

// ------------------------------------------------------------------------------------ a long history

/// The values of `attribute="<prefix>…"` in `html`, in order (`id="release-…"` gives the release rows).
fn attribute_values(html: &str, attribute: &str, prefix: &str) -> Vec<String> {
    let opening = format!("{attribute}=\"{prefix}");
    html.match_indices(&opening)
        .map(|(at, _)| {
            let rest = &html[at + opening.len()..];
            rest[..rest.find('"').unwrap()].to_string()
        })
        .collect()
}

/// The part of `html` from the element with `id` to the end of its line (an archive page's list item,
/// a release row).
fn line_with_id<'a>(html: &'a str, id: &str) -> Option<&'a str> {
    let at = html.find(&format!("id=\"{id}\""))?;
    Some(html[at..].lines().next().unwrap())
}

/// More releases than `/changes/` lists in full, over three years: `/changes/` lists the newest
/// [`RECENT_RELEASES`] and links each year's archive page, which lists every release of its year and,
/// for each country and ERP, the releases that changed it; the feeds carry the newest releases only;
/// `llms.txt`, `llms-full.txt` and the search index leave the older release pages to the archive pages;
/// a country's History section shows its newest [`HISTORY_RELEASES`] releases in full and counts the
/// older by year, each count a link to where the archive page lists them. Every release keeps its page.
#[test]
fn a_long_history_keeps_the_newest_releases_in_full_and_every_older_one_a_link_away() {
    use locref::render::history::{HISTORY_RELEASES, RECENT_RELEASES};
    let dir = copy_project();
    let root = dir.path();
    // 2097-01-01: whatever the shipped sources hold unreleased (and every answer recorded); then 2098;
    // then 2099 (no change).
    let run = locref(
        root,
        &[
            "release",
            "2097.1.1-1",
            "--no-change",
            "--note",
            "every answer",
        ],
        "4039372800",
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    crate::common::releases::add_releases(root, RECENT_RELEASES + 2, 3);
    let run = locref(
        root,
        &[
            "release",
            "2099.1.1-1",
            "--no-change",
            "--note",
            "nothing new",
        ],
        AFTER,
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    let run = locref(root, &["build", "--out", "public"], AFTER);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let page = |path: &str| read(root, &format!("public{path}"));

    // The register, newest first: (version, year).
    let register: Vec<(String, String)> = register_rows(root)
        .into_iter()
        .rev()
        .map(|row| (row[0].clone(), row[1][..4].to_string()))
        .collect();
    let versions: Vec<&str> = register.iter().map(|(v, _)| v.as_str()).collect();
    assert!(versions.len() > RECENT_RELEASES);
    let recent = &versions[..RECENT_RELEASES];
    let mut years: Vec<&str> = register.iter().map(|(_, y)| y.as_str()).collect();
    years.dedup();
    assert!(years.len() >= 3, "{years:?}");

    // /changes/: the newest releases, then a link to each year's archive with its count.
    let changes = page("/changes/index.html");
    assert_eq!(attribute_values(&changes, "id", "release-"), recent);
    let older = versions.len() - RECENT_RELEASES;
    assert!(changes.contains(&format!(
        "{older} older releases are listed on the archive pages"
    )));
    for year in &years {
        let count = register.iter().filter(|(_, y)| y == year).count();
        let plural = if count == 1 { "release" } else { "releases" };
        assert!(
            changes.contains(&format!(
                "<a href=\"/changes/archive/{year}/\">{year}</a> ({count} {plural})"
            )),
            "{year}"
        );
        // Its archive page: every release of the year, newest first.
        let archive = page(&format!("/changes/archive/{year}/index.html"));
        let of_year: Vec<&str> = register
            .iter()
            .filter(|(_, y)| y == year)
            .map(|(v, _)| v.as_str())
            .collect();
        assert_eq!(attribute_values(&archive, "id", "release-"), of_year);
        assert!(
            page(&format!("/changes/archive/{year}/index.md"))
                .contains(&format!("# Releases of {year}"))
        );
    }
    for version in &versions {
        assert!(
            root.join(format!("public/changes/{version}/index.html"))
                .is_file()
        );
    }

    // The feed: the newest releases only.
    let feed = feed_rs::parser::parse(page("/changes.xml").as_bytes()).unwrap();
    let titles: Vec<String> = feed
        .entries
        .iter()
        .map(|e| e.title.as_ref().unwrap().content.clone())
        .collect();
    assert_eq!(titles.len(), RECENT_RELEASES, "{titles:?}");
    for (title, version) in titles.iter().zip(recent) {
        assert!(title.starts_with(&format!("Release {version}:")), "{title}");
    }

    // llms.txt, llms-full.txt and the search index list the recent release pages and the archives only.
    let llms = page("/llms.txt");
    let full = page("/llms-full.txt");
    let search = page("/search-index.json");
    for version in &versions {
        let listed = recent.contains(version);
        assert_eq!(
            llms.contains(&format!("/changes/{version}/index.md)")),
            listed,
            "{version}"
        );
        assert_eq!(
            full.contains(&format!("# Release {version}\n")),
            listed,
            "{version}"
        );
        assert_eq!(
            search.contains(&format!("\"u\":\"changes/{version}/\"")),
            listed,
            "{version}"
        );
    }
    for year in &years {
        assert!(
            llms.contains(&format!("/changes/archive/{year}/index.md)")),
            "{year}"
        );
    }

    // The country that most releases changed: its History section and its feed.
    let all: Value = serde_json::from_str(&page("/api/v1/changes.json")).unwrap();
    let mut changed_by: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for change in all["data"].as_array().unwrap() {
        let (Some(release), Some(country)) =
            (change["release"].as_str(), change["country"].as_str())
        else {
            continue;
        };
        let releases = changed_by.entry(country.to_string()).or_default();
        if !releases.iter().any(|r| r == release) {
            releases.push(release.to_string());
        }
    }
    let (code, releases) = changed_by.iter().max_by_key(|(_, r)| r.len()).unwrap();
    assert!(releases.len() > HISTORY_RELEASES, "{code}: {releases:?}");
    let country_page = page(&format!("/{code}/index.html"));
    let history = &country_page[country_page.find("<section id=\"history\">").unwrap()..];
    let history = &history[..history.find("</section>").unwrap()];
    let shown: Vec<String> = attribute_values(history, "href", "/changes/")
        .into_iter()
        .filter(|v| versions.iter().any(|x| format!("{x}/") == *v))
        .map(|v| v.trim_end_matches('/').to_string())
        .collect();
    let mut shown_once = shown.clone();
    shown_once.dedup();
    assert_eq!(shown_once, releases[..HISTORY_RELEASES], "{code}");
    for year in &years {
        let of_year: Vec<&String> = releases[HISTORY_RELEASES..]
            .iter()
            .filter(|v| register.iter().any(|(x, y)| x == *v && y == year))
            .collect();
        let link = format!("/changes/archive/{year}/#country-{code}");
        if of_year.is_empty() {
            assert!(!history.contains(&link), "{code} {year}");
            continue;
        }
        let plural = if of_year.len() == 1 {
            "release"
        } else {
            "releases"
        };
        assert!(
            history.contains(&format!(
                "<a href=\"{link}\">{} {plural} of {year}</a>",
                of_year.len()
            )),
            "{code} {year}: {history}"
        );
        // Where the link lands: the releases of that year that changed the country, all of them.
        let archive = page(&format!("/changes/archive/{year}/index.html"));
        let item = line_with_id(&archive, &format!("country-{code}")).unwrap();
        let listed: Vec<String> = attribute_values(item, "href", "/changes/")
            .into_iter()
            .map(|v| v.trim_end_matches('/').to_string())
            .collect();
        let every: Vec<&String> = releases
            .iter()
            .filter(|v| register.iter().any(|(x, y)| x == *v && y == year))
            .collect();
        assert_eq!(listed.iter().collect::<Vec<_>>(), every, "{code} {year}");
    }
    let feed = feed_rs::parser::parse(page(&format!("/{code}/changes.xml")).as_bytes()).unwrap();
    assert_eq!(
        feed.entries.len(),
        releases.len().min(RECENT_RELEASES),
        "{code}"
    );
}

/// Runs `locref` with `LOCREF_FAILPOINT` set: the process ends as if killed at that step.
fn killed_at(root: &Path, args: &[&str], step: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_locref"))
        .args(args)
        .current_dir(root)
        .env("SOURCE_DATE_EPOCH", AFTER)
        .env("LOCREF_FAILPOINT", step)
        .output()
        .expect("run locref")
}

/// After a kill: every command that reads the sources refuses, naming `locref recover`; `recover` puts
/// the sources and rules back byte for byte; then the command can be run again.
fn recovered_after_kill(
    root: &Path,
    before: &BTreeMap<String, Vec<u8>>,
    again: &[&str],
    step: &str,
) {
    for args in [&["check"][..], again] {
        let run = locref(root, args, AFTER);
        let stderr = text(&run.stderr);
        assert_eq!(run.status.code(), Some(1), "{step} {args:?}: {stderr}");
        assert!(
            stderr.contains("was interrupted half way") && stderr.contains("run `locref recover`"),
            "{step} {args:?}: {stderr}"
        );
    }
    let run = locref(root, &["recover"], AFTER);
    assert!(run.status.success(), "{step}: {}", text(&run.stderr));
    assert!(
        text(&run.stdout).contains("took back what the interrupted `locref "),
        "{step}: {}",
        text(&run.stdout)
    );
    assert!(
        inputs(root) == *before,
        "{step}: recover puts every file back"
    );
    let run = locref(root, again, AFTER);
    assert!(run.status.success(), "{step}: {}", text(&run.stderr));
    let run = locref(root, &["check"], AFTER);
    assert!(run.status.success(), "{step}: {}", text(&run.stderr));
}

/// `locref release` killed after any of its writes (a record, the index, the register, the version in
/// `rules/site.toml`) or after its last check: before, the project did not build and the release was
/// refused with no word of what to do, or (killed before `site.toml`) the old version was published
/// silently and the release could not be made again. Its journal names the one command that takes it
/// back, and the release can then be made.
#[test]
fn a_release_killed_at_any_write_is_taken_back_by_recover_and_made_again() {
    let mut steps = 0;
    for step in ["1", "2", "3", "4", "end"] {
        let dir = copy_project();
        let root = dir.path();
        edit_australia(root);
        let before = inputs(root);
        let args = [
            "release",
            "2099.1.1-1",
            "--note",
            "Australia: SAF-T required",
        ];
        let run = killed_at(root, &args, &format!("write:{step}"));
        if run.status.success() {
            // Fewer writes than this step: the release ran through.
            break;
        }
        assert_eq!(
            run.status.code(),
            Some(137),
            "{step}: {}",
            text(&run.stderr)
        );
        steps += 1;
        recovered_after_kill(root, &before, &args, step);
    }
    assert!(
        steps >= 4,
        "a release makes at least four writes ({steps} killed)"
    );
}

/// `locref migrate-releases` killed half way is taken back the same way (before, its error said to run
/// `migrate-releases`, which refused).
#[test]
fn a_migration_killed_half_way_is_taken_back_by_recover_and_made_again() {
    for step in ["2", "5", "end"] {
        let dir = copy_project();
        let root = dir.path();
        for version in shipped_versions(root) {
            crate::common::store_whole(root, &version);
        }
        let before = inputs(root);
        let run = killed_at(root, &["migrate-releases"], &format!("write:{step}"));
        assert_eq!(
            run.status.code(),
            Some(137),
            "{step}: {}",
            text(&run.stderr)
        );
        recovered_after_kill(root, &before, &["migrate-releases"], step);
    }
}

/// Release files with CRLF line ends (a Windows checkout) read as `check` reads them: a release and a
/// migration accept them. Before, both refused, saying to restore the records from version control.
#[test]
fn release_files_with_crlf_line_ends_are_accepted_by_release_and_migrate_releases() {
    let dir = copy_project();
    let root = dir.path();
    let versions = shipped_versions(root);
    crate::common::store_whole(root, &versions[0]);
    let releases = root.join("sources/releases");
    let mut stack = vec![releases.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let lf = std::fs::read_to_string(&path).unwrap();
                std::fs::write(&path, lf.replace('\n', "\r\n")).unwrap();
            }
        }
    }
    let run = locref(root, &["check"], AFTER);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let run = locref(root, &["migrate-releases"], AFTER);
    assert!(run.status.success(), "{}", text(&run.stderr));
    edit_australia(root);
    let run = locref(root, &["release", "2099.1.1-1"], AFTER);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let run = locref(root, &["check"], AFTER);
    assert!(run.status.success(), "{}", text(&run.stderr));
}

// ------------------------------------------------------------------------ every answer has a history

/// 2099-01-02T00:00:00Z: after [`AFTER`], for a second release.
const LATER: &str = "4070995200";

/// The first release that records every answer (the shipped releases record facts and toggles only):
/// it changes none, so it is made with `--no-change` and a note.
fn release_every_answer(root: &Path) {
    let run = locref(
        root,
        &[
            "release",
            "2099.1.1-0",
            "--no-change",
            "--note",
            "The history now records every answer",
        ],
        A_MINUTE_BEFORE_AFTER,
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(
        text(&run.stdout).contains(&format!(
            "no change since {}: this release changes no answer (--no-change)",
            last()
        )),
        "{}",
        text(&run.stdout)
    );
}

/// One edited row: its table, its country, the id of the fact or answer it publishes, and the field
/// that changed (`None` for a fact's value).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Edited {
    table: &'static str,
    country: String,
    id: String,
    field: Option<&'static str>,
}

/// Reads a table of `sources/tables/`: its header and rows.
fn table(root: &Path, name: &str) -> (csv::StringRecord, Vec<csv::StringRecord>) {
    let mut reader = csv::Reader::from_path(root.join("sources/tables").join(name))
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let header = reader.headers().unwrap().clone();
    let rows = reader.records().map(|r| r.unwrap()).collect();
    (header, rows)
}

/// Edits the cell `column` of the first row of table `name` that `pick` accepts (`pick` returns the new
/// value), writes the table back, and returns the row as it was.
fn edit_first(
    root: &Path,
    name: &str,
    column: &str,
    pick: impl Fn(&csv::StringRecord, &str) -> Option<String>,
) -> csv::StringRecord {
    let (header, mut rows) = table(root, name);
    let at = header
        .iter()
        .position(|h| h == column)
        .unwrap_or_else(|| panic!("{name}: no column {column}"));
    let (n, value) = rows
        .iter()
        .enumerate()
        .find_map(|(n, row)| pick(row, &row[at]).map(|v| (n, v)))
        .unwrap_or_else(|| panic!("{name}: no row to edit"));
    let old = rows[n].clone();
    let mut cells: Vec<String> = old.iter().map(str::to_string).collect();
    cells[at] = value;
    rows[n] = csv::StringRecord::from(cells);
    let mut writer = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_path(root.join("sources/tables").join(name))
        .unwrap();
    writer.write_record(&header).unwrap();
    for row in &rows {
        writer.write_record(row).unwrap();
    }
    writer.flush().unwrap();
    old
}

/// Edits one row of each table a country's answers come from, each so that it changes one answer a
/// reader reads and the project still checks clean, and says which answer each edit changes.
fn edit_one_row_of_each_table(root: &Path) -> Vec<Edited> {
    let edited = |s: &str| Some(format!("{s} (edited)"));
    let mut out = Vec::new();
    let row = edit_first(root, "countries.csv", "value", |r, v| {
        (r[1] == *"Currency").then(|| edited(v)).flatten()
    });
    out.push(Edited {
        table: "countries.csv",
        country: row[0].to_string(),
        id: format!("{}-currency", &row[0]),
        field: None,
    });
    let row = edit_first(root, "obligations.csv", "scope", |r, v| {
        (r[3] == *"in-force" && !v.is_empty())
            .then(|| edited(v))
            .flatten()
    });
    out.push(Edited {
        table: "obligations.csv",
        country: row[0].to_string(),
        id: format!("{}-{}-{}", &row[0], &row[1], &row[2]),
        field: Some("scope"),
    });
    let row = edit_first(root, "regimes.csv", "archive_years", |_, v| {
        v.parse::<u8>().ok().map(|y| (y % 98 + 1).to_string())
    });
    out.push(Edited {
        table: "regimes.csv",
        country: row[0].to_string(),
        id: format!("{}-{}", &row[0], &row[1]),
        field: Some("archive_years"),
    });
    let row = edit_first(root, "vat.csv", "registration_threshold", |_, v| {
        (!v.is_empty()).then(|| edited(v)).flatten()
    });
    out.push(Edited {
        table: "vat.csv",
        country: row[0].to_string(),
        id: format!("{}-vat", &row[0]),
        field: Some("registration_threshold"),
    });
    let row = edit_first(root, "mandates.csv", "scope", |_, v| {
        (!v.is_empty()).then(|| edited(v)).flatten()
    });
    out.push(Edited {
        table: "mandates.csv",
        country: row[0].to_string(),
        id: format!("{}-mandate", &row[0]),
        field: Some("scope"),
    });
    let row = edit_first(root, "matrix.csv", "support_type", |_, v| {
        (v == "native").then(|| "native + access point".to_string())
    });
    out.push(Edited {
        table: "matrix.csv",
        country: row[0].to_string(),
        id: format!("{}-e-invoicing-erp-support-{}", &row[0], &row[1]),
        field: None,
    });
    // A reporting row's ERP cell: the first `native` cell of the table, made `add-on`.
    let (header, rows) = table(root, "reporting.csv");
    let erps: Vec<(usize, &str)> = crate::common::ERP_IDS
        .iter()
        .filter_map(|erp| Some((header.iter().position(|h| h == *erp)?, *erp)))
        .collect();
    let (row, erp) = rows
        .iter()
        .find_map(|r| {
            erps.iter()
                .find(|(at, _)| &r[*at] == "native")
                .map(|(_, erp)| (r.clone(), *erp))
        })
        .expect("a native reporting cell");
    edit_first(root, "reporting.csv", erp, |r, _| {
        (*r == row).then(|| "add-on".into())
    });
    // The row's number among its country's rows of its topic, in file order.
    let n = rows
        .iter()
        .filter(|r| r[0] == row[0] && r[1] == row[1])
        .position(|r| *r == row)
        .unwrap()
        + 1;
    let topic = if &row[0] == "saf-t" {
        "saft"
    } else {
        "vat-reporting"
    };
    out.push(Edited {
        table: "reporting.csv",
        country: row[1].to_string(),
        id: format!("{}-{topic}-{n}-{erp}", &row[1]),
        field: Some("support"),
    });
    let row = edit_first(root, "local_erps.csv", "segment", |_, v| edited(v));
    out.push(Edited {
        table: "local_erps.csv",
        country: row[0].to_string(),
        id: format!("{}-{}", &row[0], locref::ids::slugify(&row[1])),
        field: Some("segment"),
    });
    let row = edit_first(root, "local_partner_flags.csv", "note", |_, v| edited(v));
    out.push(Edited {
        table: "local_partner_flags.csv",
        country: row[0].to_string(),
        id: format!("{}-{}", &row[0], &row[1]),
        field: Some("note"),
    });
    let row = edit_first(root, "partners.csv", "summary", |_, v| edited(v));
    out.push(Edited {
        table: "partners.csv",
        country: row[0].to_string(),
        id: format!("{}-{}-{}", &row[0], &row[1], locref::ids::slugify(&row[2])),
        field: Some("summary"),
    });
    out
}

/// A curator's edit of one row of each table, released: each is one change, said as a sentence on
/// `/changes/` (the newest release's answers), on the release's page, in the country's feed (and the
/// ERP's, for an answer about an ERP) and in the country's History section, before and after its
/// release; each feed entry of the release leads with its note.
#[test]
fn one_row_of_each_table_edited_and_released_is_a_sentence_on_every_page_and_feed_that_shows_its_history()
 {
    let dir = copy_project();
    let root = dir.path();
    release_every_answer(root);
    let edits = edit_one_row_of_each_table(root);
    let tables: BTreeSet<&str> = edits.iter().map(|e| e.table).collect();
    assert_eq!(tables.len(), edits.len(), "one edit a table");

    // Before the release: the changes not released yet.
    let build = locref(root, &["build", "--out", "public"], LATER);
    assert!(build.status.success(), "{}", text(&build.stderr));
    let changes: Value = serde_json::from_str(&read(root, "public/api/v1/changes.json")).unwrap();
    let unreleased: Vec<&Value> = changes["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["release"].is_null())
        .collect();
    assert_changes_are_the_edits(&unreleased, &edits);
    for change in &unreleased {
        let sentence = escaped(&shown(&change["sentence"]));
        let code = change["country"].as_str().unwrap();
        let page = read(root, "public/changes/index.html");
        let section = &page[page.find("<section id=\"unreleased\">").unwrap()..];
        assert!(
            section.contains(&sentence),
            "/changes/ #unreleased: {sentence}"
        );
        let history = read(root, &format!("public/{code}/index.html"));
        let history = &history[history.find("<section id=\"history\">").unwrap()..];
        assert!(history.contains(&sentence), "/{code}/ #history: {sentence}");
        let xml = read(root, &format!("public/{code}/changes.xml"));
        let feed = feed_rs::parser::parse(xml.as_bytes()).unwrap();
        let entry = &feed.entries[0];
        assert!(
            entry.id.ends_with("#unreleased"),
            "/{code}/changes.xml: {}",
            entry.id
        );
        let body = entry.content.as_ref().unwrap().body.as_deref().unwrap();
        assert!(
            body.contains(&format!("<li>{sentence}</li>")),
            "/{code}/changes.xml: {sentence}"
        );
    }

    // Released, with a note.
    let note = "One row of each table edited";
    let run = locref(root, &["release", "2099.1.1-1", "--note", note], LATER);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(
        text(&run.stdout).contains(&format!("; {} changes since 2099.1.1-0;", edits.len())),
        "{}",
        text(&run.stdout)
    );
    let build = locref(root, &["build", "--out", "public"], LATER);
    assert!(build.status.success(), "{}", text(&build.stderr));
    let detail: Value =
        serde_json::from_str(&read(root, "public/api/v1/releases/2099.1.1-1.json")).unwrap();
    let released: Vec<&Value> = detail["data"]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .collect();
    assert_changes_are_the_edits(&released, &edits);
    let changes_page = read(root, "public/changes/index.html");
    let latest = &changes_page[changes_page.find("<section id=\"latest\">").unwrap()..];
    let latest = &latest[..latest.find("</section>").unwrap()];
    let release_page = read(root, "public/changes/2099.1.1-1/index.html");
    for change in &released {
        let sentence = escaped(&shown(&change["sentence"]));
        let code = change["country"].as_str().unwrap();
        assert!(
            latest.contains(&format!("<li>{sentence}</li>")),
            "/changes/ #latest: {sentence}"
        );
        assert!(
            release_page.contains(&sentence),
            "/changes/2099.1.1-1/: {sentence}"
        );
        let page = read(root, &format!("public/{code}/index.html"));
        let history = &page[page.find("<section id=\"history\">").unwrap()..];
        assert!(history.contains(&sentence), "/{code}/ #history: {sentence}");
        let twin = read(root, &format!("public/{code}/index.md"));
        assert!(
            twin.contains(&shown(&change["sentence"])),
            "/{code}/index.md: {sentence}"
        );
        let mut feeds = vec![format!("/{code}/changes.xml")];
        if let Some(erp) = change["erp"].as_str() {
            feeds.push(format!("/erp/{erp}/changes.xml"));
        }
        for path in feeds {
            let xml = read(root, &format!("public{path}"));
            let feed = feed_rs::parser::parse(xml.as_bytes()).unwrap();
            let entry = feed
                .entries
                .iter()
                .find(|e| e.id.ends_with("#2099.1.1-1"))
                .unwrap_or_else(|| panic!("{path}: no entry of the release"));
            let body = entry.content.as_ref().unwrap().body.as_deref().unwrap();
            assert!(
                body.contains(&format!("<li>{sentence}</li>")),
                "{path}: {sentence}"
            );
            assert!(
                body.starts_with(&format!("<p>Release note: {note}</p>")),
                "{path}: {body}"
            );
        }
    }
    // The site's feed: the release's entry leads with its note too, in its content.
    let feed = feed_rs::parser::parse(read(root, "public/changes.xml").as_bytes()).unwrap();
    for entry in &feed.entries {
        let body = entry.content.as_ref().unwrap().body.as_deref().unwrap();
        let Some(version) = entry.id.rsplit('/').next().unwrap().strip_suffix(".json") else {
            continue;
        };
        let recorded = register_rows(root)
            .into_iter()
            .find(|r| r[0] == version)
            .unwrap_or_else(|| panic!("{}", entry.id));
        if !recorded[4].is_empty() {
            assert!(
                body.starts_with(&format!("<p>Release note: {}</p>", escaped(&recorded[4]))),
                "{}: {body}",
                entry.id
            );
        }
    }
}

/// The changes of a change set are exactly the edits: one a table, each of the answer the edited row
/// publishes, an answer change with its sentence naming the country.
fn assert_changes_are_the_edits(changes: &[&Value], edits: &[Edited]) {
    let mut got: Vec<Edited> = changes
        .iter()
        .map(|c| {
            assert_eq!(c["kind"], "value_changed", "{c}");
            assert_eq!(c["substance"], "answer", "{c}");
            let id = c["fact_id"].as_str().or(c["answer_id"].as_str()).unwrap();
            let edit = edits
                .iter()
                .find(|e| e.id == id)
                .unwrap_or_else(|| panic!("a change no edit made: {c}"));
            assert_eq!(c["field"].as_str(), edit.field, "{c}");
            assert_eq!(c["answer"].is_null(), c["fact_id"].is_string(), "{c}");
            edit.clone()
        })
        .collect();
    got.sort();
    let mut expected = edits.to_vec();
    expected.sort();
    assert_eq!(got, expected);
}

/// A release with no change since the last one is refused (nothing written) unless `--no-change` comes
/// with a note; the first release that records every answer changes none, and every release recorded
/// before it still checks against its hash.
#[test]
fn a_release_with_no_change_needs_no_change_and_a_note_and_old_releases_still_verify() {
    let dir = copy_project();
    let root = dir.path();
    let before = inputs(root);
    let records_before = crate::common::snapshot(&root.join("sources/releases/records"));
    let run = locref(root, &["release", "2099.1.1-0"], AFTER);
    assert_eq!(run.status.code(), Some(1), "{}", text(&run.stderr));
    assert!(
        text(&run.stderr).contains(&format!("error: no change since {}: ", last()))
            && text(&run.stderr).contains("give --no-change with a --note saying why"),
        "{}",
        text(&run.stderr)
    );
    assert_eq!(inputs(root), before, "nothing written");
    let run = locref(root, &["release", "2099.1.1-0", "--no-change"], AFTER);
    assert_eq!(run.status.code(), Some(2), "{}", text(&run.stderr));
    assert!(text(&run.stderr).contains("--no-change needs a --note"));
    assert_eq!(inputs(root), before, "nothing written");
    release_every_answer(root);
    // Every record of the earlier releases is as it was; every country has a new record, which carries
    // every kind of answer.
    let records = crate::common::snapshot(&root.join("sources/releases/records"));
    for (name, bytes) in &records_before {
        assert_eq!(records.get(name), Some(bytes), "{name} kept as it was");
    }
    let snapshot = crate::common::release_snapshot(root, "2099.1.1-0").unwrap();
    let countries = snapshot
        .lines()
        .filter(|l| l.starts_with("{\"country\""))
        .count();
    // A record is named by the hash of its text: a country whose answers the last release recorded
    // whole keeps that release's record, every other gets a new one.
    let named: BTreeSet<String> = read(root, "sources/releases/2099.1.1-0.index")
        .lines()
        .map(|l| format!("{}.jsonl", l.split_once(' ').unwrap().1))
        .collect();
    assert_eq!(named.len(), countries);
    let new_records = named
        .iter()
        .filter(|n| !records_before.contains_key(*n))
        .count();
    assert_eq!(records.len(), records_before.len() + new_records);
    assert!(
        snapshot
            .lines()
            .filter(|l| l.starts_with("{\"country\""))
            .all(|l| l.contains(",\"answers\":[\"local-erp\",")),
        "every country's line lists the kinds it carries"
    );
    // The phases recorded are the rows of the table.
    let phases = snapshot
        .lines()
        .filter(|l| l.starts_with("{\"answer\":\"phase\""))
        .count();
    assert_eq!(phases, table(root, "obligations.csv").1.len());
    // Every release, old and new, checks against its recorded hash and chain.
    let run = locref(root, &["check"], AFTER);
    assert!(run.status.success(), "{}", text(&run.stderr));
    for row in register_rows(root) {
        let text = crate::common::release_snapshot(root, &row[0]).unwrap();
        assert_eq!(
            blake3::hash(text.as_bytes()).to_hex().as_str(),
            row[2],
            "{}",
            row[0]
        );
    }
    // The release recorded no change: none is published for it.
    let build = locref(root, &["build", "--out", "public"], AFTER);
    assert!(build.status.success(), "{}", text(&build.stderr));
    let detail: Value =
        serde_json::from_str(&read(root, "public/api/v1/releases/2099.1.1-0.json")).unwrap();
    assert_eq!(detail["data"]["change_count"], 0);
    // Released again with nothing changed since: refused again.
    let again = inputs(root);
    let run = locref(root, &["release", "2099.1.1-1"], LATER);
    assert_eq!(run.status.code(), Some(1));
    assert!(text(&run.stderr).contains("the release would record what it recorded"));
    assert_eq!(inputs(root), again);
}

/// `locref release --undo` takes back the last release: the sources are byte for byte as before it
/// (the edits it released stay); refused, writing nothing, when the release's files changed since or
/// it is the first release; a kill half way is taken back by `locref recover`.
#[test]
fn release_undo_takes_back_the_last_release_and_leaves_the_sources_as_before_it() {
    let dir = copy_project();
    let root = dir.path();
    edit_australia(root);
    let before = inputs(root);
    let args = [
        "release",
        "2099.1.1-1",
        "--note",
        "Australia: SAF-T required",
    ];
    let run = locref(root, &args, AFTER);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let released = inputs(root);
    assert_ne!(released, before);
    let run = locref(root, &["release", "--undo"], AFTER);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let stdout = text(&run.stdout);
    assert!(
        stdout.contains(&format!(
            "took back release 2099.1.1-1: {} is the last release again",
            last()
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains("  removed sources/releases/2099.1.1-1.index\n"),
        "{stdout}"
    );
    assert!(
        inputs(root) == before,
        "the sources are as before the release"
    );

    // Released again, then the version set by hand: the release is not taken back.
    let run = locref(root, &args, AFTER);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let site = read(root, "rules/site.toml");
    std::fs::write(
        root.join("rules/site.toml"),
        site.replace("version = \"2099.1.1-1\"", "version = \"2099.1.1-9\""),
    )
    .unwrap();
    let edited = inputs(root);
    let run = locref(root, &["release", "--undo"], AFTER);
    assert_eq!(run.status.code(), Some(1), "{}", text(&run.stderr));
    assert!(
        text(&run.stderr).contains("names version `2099.1.1-9`, not the last release `2099.1.1-1`"),
        "{}",
        text(&run.stderr)
    );
    assert_eq!(inputs(root), edited, "nothing written");
    std::fs::write(root.join("rules/site.toml"), &site).unwrap();

    // Killed after any of its writes: `recover` puts the release back, and the undo can be made again.
    let mut steps = 0;
    for step in ["1", "2", "3", "end"] {
        let released = inputs(root);
        let run = killed_at(root, &["release", "--undo"], &format!("write:{step}"));
        if run.status.success() {
            break;
        }
        assert_eq!(
            run.status.code(),
            Some(137),
            "{step}: {}",
            text(&run.stderr)
        );
        steps += 1;
        recovered_after_kill(root, &released, &["release", "--undo"], step);
        // Made again by `recovered_after_kill`: release it once more for the next step.
        assert!(inputs(root) == before, "{step}");
        let run = locref(root, &args, AFTER);
        assert!(run.status.success(), "{}", text(&run.stderr));
    }
    assert!(
        steps >= 3,
        "an undo makes at least three writes ({steps} killed)"
    );

    // The first release of a project: what site.toml held before it is not recorded.
    std::fs::remove_dir_all(root.join("sources/releases")).unwrap();
    let run = locref(root, &["release", "1"], AFTER);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let first = inputs(root);
    let run = locref(root, &["release", "--undo"], AFTER);
    assert_eq!(run.status.code(), Some(1));
    assert!(
        text(&run.stderr).contains("release `1` is the first release"),
        "{}",
        text(&run.stderr)
    );
    assert_eq!(inputs(root), first, "nothing written");
    // No release at all, and a usage error: refused.
    let run = locref(root, &["release", "--undo", "2"], AFTER);
    assert_eq!(run.status.code(), Some(2));
}
