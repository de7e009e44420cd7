//! What applies on a day (`/api/v1/on/`, the date control and "Next changes" of `/compare/`): the
//! answers of the reference date are the published toggles; every listed day has its file, and each
//! phase's state in it is what `sources/tables/obligations.csv` says on that day (read here on its own,
//! a month or a year standing for its whole span); between two listed days nothing changes; and the
//! table readers without scripts see lists each later day an enacted phase starts, in the page and its
//! twin.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use jiff::civil::Date;
use serde_json::Value;

use crate::common::copy_project;

fn build(root: &Path) -> BTreeMap<String, Vec<u8>> {
    crate::common::session_built(root)
}

fn json(files: &BTreeMap<String, Vec<u8>>, rel: &str) -> Value {
    serde_json::from_slice(files.get(rel).unwrap_or_else(|| panic!("{rel} is built")))
        .unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn text<'a>(files: &'a BTreeMap<String, Vec<u8>>, rel: &str) -> &'a str {
    std::str::from_utf8(files.get(rel).unwrap_or_else(|| panic!("{rel} is built"))).unwrap()
}

/// The reference date of `rules/site.toml`.
pub(crate) fn reference_date(root: &Path) -> Date {
    let site: toml::Value = toml::from_str(&crate::common::read(root, "rules/site.toml")).unwrap();
    site["reference_date"].as_str().unwrap().parse().unwrap()
}

/// One row of `sources/tables/obligations.csv`: its phase id, status and date.
pub(crate) struct Phase {
    pub id: String,
    pub country: String,
    pub status: String,
    pub applies_from: String,
}

pub(crate) fn phases(root: &Path) -> Vec<Phase> {
    let table = crate::common::read(root, "sources/tables/obligations.csv");
    let mut reader = csv::Reader::from_reader(table.as_bytes());
    let headers = reader.headers().unwrap().clone();
    let at = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (country, obligation, phase, status, from) = (
        at("country_code"),
        at("obligation"),
        at("phase"),
        at("status"),
        at("applies_from"),
    );
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            Phase {
                id: format!("{}-{}-{}", &r[country], &r[obligation], &r[phase]),
                country: r[country].to_string(),
                status: r[status].to_string(),
                applies_from: r[from].to_string(),
            }
        })
        .collect()
}

/// The first and the last day a date of the table stands for (`2028` is all of 2028).
fn span(date: &str) -> (Date, Date) {
    let parts: Vec<i16> = date.split('-').map(|p| p.parse().unwrap()).collect();
    match parts.as_slice() {
        [y] => (Date::new(*y, 1, 1).unwrap(), Date::new(*y, 12, 31).unwrap()),
        [y, m] => {
            let first = Date::new(*y, *m as i8, 1).unwrap();
            (first, first.last_of_month())
        }
        [y, m, d] => {
            let day = Date::new(*y, *m as i8, *d as i8).unwrap();
            (day, day)
        }
        _ => panic!("a date of the table: {date}"),
    }
}

/// What a phase's state is on a day, read from its row: an enacted phase is in force once all of its
/// date is on or before the day, not yet while all of it is after, unknown in between.
pub(crate) fn expected_state(phase: &Phase, day: Date) -> &'static str {
    match phase.status.as_str() {
        "in-force" => "in_force",
        "enacted" if phase.applies_from.is_empty() => "unknown",
        "enacted" => {
            let (first, last) = span(&phase.applies_from);
            if last <= day {
                "in_force"
            } else if first > day {
                "not_yet"
            } else {
                "unknown"
            }
        }
        "planned" => "planned",
        "none" => "none",
        _ => "unknown",
    }
}

#[test]
fn the_answers_of_the_reference_date_are_the_published_toggles() {
    let dir = copy_project();
    let files = build(dir.path());
    let reference = reference_date(dir.path());
    let index = json(&files, "api/v1/on/index.json");
    let listed: Vec<&Value> = index["data"].as_array().unwrap().iter().collect();
    let first = listed.first().expect("the reference date is listed");
    assert_eq!(first["date"], reference.to_string());
    assert_eq!(first["reference"], true);
    let on = json(&files, &format!("api/v1/on/{reference}.json"));
    let countries = json(&files, "api/v1/countries.json");
    let by_code: BTreeMap<&str, &Value> = on["data"]["countries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["code"].as_str().unwrap(), c))
        .collect();
    let published = countries["data"].as_array().unwrap();
    assert_eq!(by_code.len(), published.len(), "every country is answered");
    for country in published {
        let code = country["code"].as_str().unwrap();
        assert_eq!(
            by_code[code]["toggles"], country["toggles"],
            "{code}: the toggles on {reference} are the published ones"
        );
    }
    // And each toggle rests on the phase /api/v1/toggles.json names.
    let derivations = json(&files, "api/v1/toggles.json");
    for d in derivations["data"].as_array().unwrap() {
        let code = d["country"].as_str().unwrap();
        let reason = by_code[code]["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["toggle"] == d["toggle"])
            .unwrap_or_else(|| panic!("{code}: a reason for {}", d["toggle"]));
        assert_eq!(reason["value"], d["value"], "{code} {}", d["toggle"]);
        assert_eq!(reason["phase_id"], d["phase_id"], "{code} {}", d["toggle"]);
        assert_eq!(reason["why_null"], d["why_null"], "{code} {}", d["toggle"]);
    }
}

#[test]
fn every_listed_day_has_its_file_and_each_phase_is_as_its_row_says_on_that_day() {
    let dir = copy_project();
    let files = build(dir.path());
    let reference = reference_date(dir.path());
    let rows = phases(dir.path());
    let index = json(&files, "api/v1/on/index.json");
    let listed = index["data"].as_array().unwrap();
    assert_eq!(index["meta"]["count"], listed.len());
    // Listed in /api/v1/index.json, with the count of days.
    let endpoints = json(&files, "api/v1/index.json");
    let entry = |path: &str| {
        endpoints["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["path"] == path)
            .unwrap_or_else(|| panic!("{path} is listed in index.json"))
            .clone()
    };
    assert_eq!(entry("/api/v1/on/index.json")["count"], listed.len());
    entry("/api/v1/on/{date}.json");

    // The days: the reference date, twelve quarter starts after it, and every later day an enacted
    // phase's date begins or ends on; each written, and nothing else written beside them.
    let days: Vec<Date> = listed
        .iter()
        .map(|e| e["date"].as_str().unwrap().parse().unwrap())
        .collect();
    assert!(days.windows(2).all(|w| w[0] < w[1]), "in order, each once");
    let quarters: Vec<Date> = listed
        .iter()
        .zip(&days)
        .filter(|(e, _)| e["quarter_start"] == true)
        .map(|(_, d)| *d)
        .collect();
    assert_eq!(quarters.len(), 12, "three years of quarters");
    assert!(
        quarters[0] > reference
            && quarters[0] <= reference.saturating_add(jiff::Span::new().months(3))
    );
    for (a, b) in quarters.iter().zip(quarters.iter().skip(1)) {
        assert_eq!(a.day(), 1);
        assert_eq!((a.month() - 1) % 3, 0);
        assert_eq!(a.saturating_add(jiff::Span::new().months(3)), *b);
    }
    let mut changing: BTreeSet<Date> = BTreeSet::new();
    for p in rows
        .iter()
        .filter(|p| p.status == "enacted" && !p.applies_from.is_empty())
    {
        let (first, last) = span(&p.applies_from);
        changing.extend([first, last].into_iter().filter(|d| *d > reference));
    }
    let flagged: BTreeSet<Date> = listed
        .iter()
        .zip(&days)
        .filter(|(e, _)| e["changes"] == true)
        .map(|(_, d)| *d)
        .collect();
    assert_eq!(flagged, changing, "the days an answer changes on");
    let expected_days: BTreeSet<Date> = changing
        .iter()
        .chain(&quarters)
        .chain([&reference])
        .copied()
        .collect();
    assert_eq!(days.iter().copied().collect::<BTreeSet<_>>(), expected_days);
    let written: BTreeSet<String> = files
        .keys()
        .filter_map(|k| k.strip_prefix("api/v1/on/"))
        .filter(|k| *k != "index.json")
        .map(str::to_string)
        .collect();
    let named: BTreeSet<String> = days.iter().map(|d| format!("{d}.json")).collect();
    assert_eq!(written, named, "one file per listed day");

    // Each day's file: every phase of the table in the state its row gives on that day; between two
    // listed days of which the later changes nothing, the same answers.
    let mut previous: Option<Value> = None;
    for (entry, day) in listed.iter().zip(&days) {
        let path = format!("api/v1/on/{day}.json");
        assert!(
            entry["api_url"]
                .as_str()
                .unwrap()
                .ends_with(&format!("/{path}")),
            "{}",
            entry["api_url"]
        );
        let path = path.as_str();
        let on = json(&files, path);
        assert_eq!(on["meta"]["count"], 1, "{path}");
        assert_eq!(on["data"]["date"], day.to_string(), "{path}");
        assert_eq!(on["data"]["reference_date"], reference.to_string());
        let since: Date = on["data"]["same_since"].as_str().unwrap().parse().unwrap();
        assert_eq!(
            since,
            flagged
                .range(..=*day)
                .next_back()
                .copied()
                .unwrap_or(reference),
            "{path}: the day its answers hold from"
        );
        let states: BTreeMap<&str, &str> = on["data"]["countries"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|c| c["phases"].as_array().unwrap())
            .map(|p| (p["id"].as_str().unwrap(), p["state"].as_str().unwrap()))
            .collect();
        assert_eq!(states.len(), rows.len(), "{path}: every phase of the table");
        for row in &rows {
            assert_eq!(
                states.get(row.id.as_str()).copied(),
                Some(expected_state(row, *day)),
                "{path}: {} ({} {})",
                row.id,
                row.status,
                row.applies_from
            );
        }
        // A coarse date reads as one: unknown, with what is not known.
        for p in on["data"]["countries"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|c| c["phases"].as_array().unwrap())
            .filter(|p| p["state"] == "unknown" && p["status"] == "enacted")
        {
            let words = p["words"].as_str().unwrap();
            assert!(
                words.starts_with("unknown: from ") && words.ends_with(" not known"),
                "{path}: {words}"
            );
        }
        if entry["changes"] == false
            && let Some(previous) = &previous
        {
            assert_eq!(
                on["data"]["countries"], previous["data"]["countries"],
                "{path}: nothing changes on a day not flagged"
            );
        }
        previous = Some(on);
    }
}

#[test]
fn next_changes_lists_each_later_day_an_enacted_phase_starts_in_the_page_and_its_twin() {
    let dir = copy_project();
    let files = build(dir.path());
    let reference = reference_date(dir.path());
    // Each (day, country) an enacted phase's date begins or ends on after the reference date.
    let mut expected: BTreeSet<(String, String)> = BTreeSet::new();
    for p in phases(dir.path())
        .iter()
        .filter(|p| p.status == "enacted" && !p.applies_from.is_empty())
    {
        let (first, last) = span(&p.applies_from);
        for day in [first, last].into_iter().filter(|d| *d > reference) {
            expected.insert((day.to_string(), p.country.clone()));
        }
    }
    assert!(!expected.is_empty(), "the shipped phases have later dates");
    let html = text(&files, "compare/index.html");
    let table = &html[html
        .find("<h3 id=\"next-changes\">")
        .expect("the Next changes heading")..];
    let table = &table[..table.find("</tbody>").unwrap()];
    let row = regex::Regex::new(
        r#"<tr><td>(\d{4}-\d{2}-\d{2})</td><td><a href="/([a-z]{2})/#([a-z0-9-]+)">"#,
    )
    .unwrap();
    let mut shown = BTreeSet::new();
    for m in row.captures_iter(table) {
        assert!(
            m[3].starts_with(&format!("{}-", &m[2])),
            "a row links to a phase of its country: {}",
            &m[0]
        );
        assert!(
            shown.insert((m[1].to_string(), m[2].to_string())),
            "once: {}",
            &m[0]
        );
    }
    assert_eq!(shown, expected, "the page's Next changes");
    let md = text(&files, "compare/index.md");
    let section = &md[md
        .find("### Next changes")
        .expect("the twin's Next changes")..];
    let md_row =
        regex::Regex::new(r"\n\| (\d{4}-\d{2}-\d{2}) \| \[[^\]]+\]\(/([a-z]{2})/index\.md\) \|")
            .unwrap();
    let twin: BTreeSet<(String, String)> = md_row
        .captures_iter(section)
        .map(|m| (m[1].to_string(), m[2].to_string()))
        .collect();
    assert_eq!(twin, expected, "the twin's Next changes");
    // Each country page lists its own, in date order, each linking to the row of a phase that changes;
    // a country with none says so.
    let page_row =
        regex::Regex::new(r##"<tr><td><a href="#([a-z0-9-]+)">(\d{4}-\d{2}-\d{2})</a></td>"##)
            .unwrap();
    for code in files
        .keys()
        .filter(|k| k.len() == "xx/index.html".len() && k.ends_with("/index.html"))
        .map(|k| &k[..2])
    {
        let page = text(&files, &format!("{code}/index.html"));
        let own = &page[page
            .find("<h4 id=\"next-changes\">")
            .unwrap_or_else(|| panic!("{code}: Next changes"))..];
        let own = &own[..own.find("<h2").unwrap()];
        let days: Vec<String> = page_row
            .captures_iter(own)
            .map(|m| {
                assert!(m[1].starts_with(&format!("{code}-")), "{code}: {}", &m[0]);
                m[2].to_string()
            })
            .collect();
        let want: Vec<String> = expected
            .iter()
            .filter(|(_, c)| c == code)
            .map(|(d, _)| d.clone())
            .collect();
        assert_eq!(days, want, "{code}: its Next changes");
        if want.is_empty() {
            assert!(own.contains("No change recorded after"), "{code}");
        }
        let twin = text(&files, &format!("{code}/index.md"));
        let twin = &twin[twin
            .find("#### Next changes")
            .unwrap_or_else(|| panic!("{code}: the twin's Next changes"))..];
        let twin = &twin[..twin.find("\n## ").unwrap()];
        let twin_days: Vec<&str> = twin
            .lines()
            .filter_map(|l| l.strip_prefix("| "))
            .filter_map(|l| l.get(..10))
            .filter(|d| d.as_bytes()[0].is_ascii_digit())
            .collect();
        assert_eq!(twin_days, want, "{code}: its twin's Next changes");
    }
    // The date control is in the page for scripts to show, labelled, and its script is a site file.
    assert!(html.contains("<label for=\"on-day\">"));
    assert!(html.contains("<input type=\"date\" id=\"on-day\" name=\"on\""));
    assert!(html.contains("<script src=\"/assets/on-date.js\" defer></script>"));
    assert!(files.contains_key("assets/on-date.js"));
}
