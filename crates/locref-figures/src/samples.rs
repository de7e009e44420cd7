//! Writes sample figures from the project's own data to `target/figures-sample/`, with HTML pages that
//! load `rules/assets/site.css` the way the site will, so the figures can be looked at in a browser (for
//! example a headless screenshot at 1280 and 390 px wide).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::test_support::committed_shapes;
use super::timeline::tests::dense_events;
use super::{MapCountry, MapFigure, TimelineEvent, TimelineFigure, map, timeline};

const TOGGLES: [(&str, &str); 5] = [
    ("b2b-e-invoicing", "B2B e-invoicing"),
    ("b2g-e-invoicing", "B2G e-invoicing"),
    ("real-time-reporting", "Real-time reporting"),
    ("saf-t", "SAF-T"),
    ("audit-file", "Audit file"),
];

fn project() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read_csv(relative: &str) -> Vec<BTreeMap<String, String>> {
    let mut reader = csv::Reader::from_path(project().join(relative)).expect(relative);
    reader
        .deserialize()
        .map(|row| row.expect(relative))
        .collect()
}

fn country_names() -> BTreeMap<String, String> {
    read_csv("sources/registers/countries.csv")
        .into_iter()
        .map(|row| (row["code"].clone(), row["name"].clone()))
        .collect()
}

/// Each country's obligations as the map's values: in force is yes, none/enacted/planned is no, and a
/// country without a row (or with an unverified one) is unknown.
fn sample_map(names: &BTreeMap<String, String>) -> MapFigure {
    let rows = read_csv("sources/tables/obligations.csv");
    let countries = names
        .iter()
        .map(|(code, name)| MapCountry {
            code: code.clone(),
            name: name.clone(),
            url: format!("/countries/{code}/"),
            values: TOGGLES
                .iter()
                .map(|(obligation, _)| {
                    let row = rows.iter().find(|r| {
                        r["country_code"] == *code
                            && r["obligation"] == *obligation
                            && r["phase"] == "main"
                    })?;
                    if row["verification"] == "unverified" && row["status"] == "none" {
                        return None;
                    }
                    Some(row["status"] == "in-force")
                })
                .collect(),
            qualifiers: Vec::new(),
            classes: Vec::new(),
        })
        .collect();
    MapFigure {
        title: "Obligations by country".into(),
        description: "Countries coloured by the obligation chosen above the map.".into(),
        toggles: TOGGLES.iter().map(|(_, label)| label.to_string()).collect(),
        countries,
        textures: Vec::new(),
    }
}

fn sample_timeline(names: &BTreeMap<String, String>) -> TimelineFigure {
    let label_of: BTreeMap<&str, &str> = TOGGLES.into_iter().collect();
    let mut events: Vec<TimelineEvent> = read_csv("sources/tables/obligations.csv")
        .into_iter()
        .filter(|row| !row["applies_from"].is_empty())
        .map(|row| {
            let code = row["country_code"].clone();
            TimelineEvent {
                date: row["applies_from"].clone(),
                country_name: names.get(&code).cloned().unwrap_or_else(|| code.clone()),
                label: label_of
                    .get(row["obligation"].as_str())
                    .copied()
                    .unwrap_or("")
                    .to_string(),
                status: row["status"].replace('-', " "),
                url: format!("/countries/{code}/"),
                country_code: code,
            }
        })
        .collect();
    // Partial dates, as later sources will give them.
    for (date, code, label, status) in [
        (
            "2027-07",
            "ae",
            "B2B e-invoicing: businesses below AED 50 million",
            "enacted",
        ),
        ("2028", "es", "B2B e-invoicing: all businesses", "planned"),
    ] {
        events.push(TimelineEvent {
            date: date.into(),
            country_code: code.into(),
            country_name: names[code].clone(),
            label: label.into(),
            status: status.into(),
            url: format!("/countries/{code}/"),
        });
    }
    TimelineFigure {
        title: "Start dates of e-invoicing and reporting obligations".into(),
        description: "Past and upcoming start dates, by country.".into(),
        reference_date: "2026-10-16".into(),
        events,
    }
}

/// A page around a figure; the stylesheet by a relative path, so the page works from the file system
/// and from a server rooted at the project (which can send the site's Content-Security-Policy).
fn page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{title}</title><link rel=\"stylesheet\" href=\"../../rules/assets/site.css\"></head><body><main><h1>{title}</h1>{body}</main></body></html>\n"
    )
}

fn map_page(svg: &str, figure: &MapFigure) -> String {
    let mut body = String::new();
    for (i, label) in figure.toggles.iter().enumerate() {
        let checked = if i == 0 { " checked" } else { "" };
        body.push_str(&format!(
            "<input type=\"radio\" name=\"map-toggle\" id=\"map-t{i}\"{checked}> <label for=\"map-t{i}\">{label}</label>\n"
        ));
    }
    body.push_str(&format!(
        "<figure class=\"map\">{svg}<figcaption><ul class=\"map-legend\"><li class=\"legend-true\">yes</li><li class=\"legend-false\">no</li><li class=\"legend-unknown\">unknown</li></ul></figcaption></figure>"
    ));
    page("Obligations by country", &body)
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).expect(name);
}

#[test]
fn write_samples() {
    let dir = project().join("target/figures-sample");
    std::fs::create_dir_all(&dir).expect("target/figures-sample");
    let names = country_names();

    let map_figure = sample_map(&names);
    let svg = map(&committed_shapes(), &map_figure).expect("the sample map draws");
    write(&dir, "map.svg", &svg);
    write(&dir, "map.html", &map_page(&svg, &map_figure));
    for checked in 1..map_figure.toggles.len() {
        let moved = map_page(&svg, &map_figure)
            .replace(" checked>", ">")
            .replace(
                &format!("id=\"map-t{checked}\">"),
                &format!("id=\"map-t{checked}\" checked>"),
            );
        write(&dir, &format!("map-t{checked}.html"), &moved);
    }

    let timeline_figure = sample_timeline(&names);
    let svg = timeline(&timeline_figure).expect("the sample timeline draws");
    write(&dir, "timeline.svg", &svg);
    let body = format!("<figure class=\"timeline\">{svg}</figure>");
    write(&dir, "timeline.html", &page("Start dates", &body));

    let dense = TimelineFigure {
        events: dense_events(),
        ..timeline_figure.clone()
    };
    let svg = timeline(&dense).expect("the dense timeline draws");
    let body = format!("<figure class=\"timeline\">{svg}</figure>");
    write(
        &dir,
        "timeline-dense.html",
        &page("Start dates (150 events)", &body),
    );

    let empty = TimelineFigure {
        events: Vec::new(),
        ..timeline_figure
    };
    let svg = timeline(&empty).expect("the empty timeline draws");
    let body = format!("<figure class=\"timeline\">{svg}</figure>");
    write(
        &dir,
        "timeline-empty.html",
        &page("Start dates (none)", &body),
    );
}
