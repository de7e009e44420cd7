use proptest::prelude::*;

use super::date::{When, year_fraction};
use super::layout::{Band, LABEL_WIDTH, Layout, WIDTH, layout};
use super::*;
use crate::test_support::{assert_csp_safe, parse_xml, title_of};

fn event(date: &str, code: &str, label: &str, status: &str) -> TimelineEvent {
    TimelineEvent {
        date: date.into(),
        country_code: code.into(),
        country_name: format!("Country {}", code.to_uppercase()),
        label: label.into(),
        status: status.into(),
        url: format!("/countries/{code}/#{date}"),
    }
}

fn figure(events: Vec<TimelineEvent>) -> TimelineFigure {
    TimelineFigure {
        title: "E-invoicing start dates".into(),
        description: "Start dates of e-invoicing and reporting obligations.".into(),
        reference_date: "2026-10-16".into(),
        events,
    }
}

/// ~150 events crowded on a few dates, with long labels and names, partial dates and every status.
pub(crate) fn dense_events() -> Vec<TimelineEvent> {
    let statuses = ["in force", "enacted", "planned", "consultation"];
    let labels = [
        "B2B e-invoicing: issue, large companies",
        "B2G e-invoicing: receive",
        "Real-time reporting of invoice data to the tax authority, all VAT-registered businesses, phase two",
        "SAF-T",
    ];
    (0..150)
        .map(|i| {
            let date = match i % 10 {
                0..=3 => "2027-01-01".to_string(),
                4 => format!("{}-07", 2020 + i % 9),
                5 => format!("{}", 2024 + i % 5),
                6 => "2026-10-16".to_string(),
                _ => format!("{}-{:02}-{:02}", 2014 + i % 15, 1 + i % 12, 1 + i % 28),
            };
            let mut e = event(
                &date,
                &format!("c{}", i % 10),
                labels[i % 4],
                statuses[i % 4],
            );
            if i % 7 == 0 {
                e.country_name = "Bosnia and Herzegovina (Federation and Republika Srpska)".into();
            }
            e
        })
        .collect()
}

fn labels(layout: &Layout) -> Vec<&super::layout::Label> {
    layout
        .groups
        .iter()
        .map(|g| &g.label)
        .chain([&layout.reference_label])
        .collect()
}

fn assert_no_overlap(layout: &Layout) {
    let all = labels(layout);
    for (i, a) in all.iter().enumerate() {
        assert!(
            a.x >= 0.0 && a.x + a.width <= WIDTH,
            "label {i} leaves the figure: {a:?}"
        );
        assert!(a.width <= LABEL_WIDTH + 0.01, "label {i} too wide: {a:?}");
        assert!(
            a.top >= 0.0 && a.bottom() <= layout.height,
            "label {i} leaves the figure: {a:?}"
        );
        for (j, b) in all.iter().enumerate().skip(i + 1) {
            assert!(!a.overlaps(b), "labels {i} and {j} overlap:\n{a:?}\n{b:?}");
        }
    }
}

fn band_of(layout: &Layout, year: i16) -> &Band {
    layout
        .bands
        .iter()
        .find(|b| b.first_year <= year && year <= b.last_year)
        .unwrap_or_else(|| panic!("no band for {year}"))
}

#[test]
fn every_event_is_one_link_with_its_title() {
    let events = vec![
        event(
            "2026-09-01",
            "fr",
            "B2B e-invoicing: receive, all companies",
            "in force",
        ),
        event("2027-01", "be", "B2B e-invoicing", "enacted"),
        event("2028", "pl", "KSeF, small taxpayers", "planned"),
    ];
    let svg = timeline(&figure(events.clone())).unwrap();
    let doc = parse_xml(&svg);
    assert_csp_safe(&doc);
    let root = doc.root_element();
    // A group, not an image: its links (one per event) stay reachable by screen readers.
    assert_eq!(root.attribute("role"), Some("group"));
    assert_eq!(root.attribute("aria-labelledby"), Some("timeline-title"));
    assert_eq!(root.attribute("aria-describedby"), Some("timeline-desc"));
    assert!(root.attribute("viewBox").unwrap().starts_with("0 0 400 "));
    let links: Vec<_> = doc.descendants().filter(|n| n.has_tag_name("a")).collect();
    assert_eq!(links.len(), 3);
    for e in &events {
        let link = links
            .iter()
            .find(|a| a.attribute("href") == Some(e.url.as_str()))
            .unwrap();
        let title = title_of(*link).unwrap();
        assert!(
            title.contains(&e.country_name) && title.contains(&e.label),
            "{title}"
        );
        assert!(
            title.contains(&e.status) && title.contains(&e.date),
            "{title}"
        );
    }
    let text: String = doc
        .descendants()
        .filter(|n| n.is_text())
        .map(|n| n.text().unwrap_or_default())
        .collect();
    assert!(text.contains("reference date 2026-10-16"), "{text}");
    let desc = doc.descendants().find(|n| n.has_tag_name("desc")).unwrap();
    assert!(
        desc.text()
            .unwrap()
            .contains("1 on or before the reference date 2026-10-16, 2 after")
    );
    let classes: Vec<_> = links
        .iter()
        .map(|a| a.attribute("class").unwrap())
        .collect();
    assert_eq!(
        classes,
        [
            "event status-in-force day past",
            "event status-enacted month upcoming",
            "event status-planned year upcoming"
        ]
    );
}

#[test]
fn text_stays_text() {
    let nasty = r#"<b>&"'</b>"#;
    let mut e = event("2025", "xx", nasty, nasty);
    e.country_name = nasty.into();
    e.url = format!("/a?b=1&c={nasty}");
    let mut f = figure(vec![e.clone()]);
    f.title = nasty.into();
    let svg = timeline(&f).unwrap();
    let doc = parse_xml(&svg);
    assert!(doc.descendants().all(|n| !n.has_tag_name("b")));
    let link = doc.descendants().find(|n| n.has_tag_name("a")).unwrap();
    assert_eq!(link.attribute("href"), Some(e.url.as_str()));
    assert!(
        title_of(link)
            .unwrap()
            .starts_with(&format!("{nasty}: {nasty} — {nasty}"))
    );
    let title = doc.descendants().find(|n| n.has_tag_name("title")).unwrap();
    assert_eq!(title.text(), Some(nasty));
}

#[test]
fn partial_dates_cover_their_month_or_year() {
    let f = figure(vec![
        event("2027-03", "aa", "month", "enacted"),
        event("2027-03-15", "bb", "day in that month", "enacted"),
        event("2028", "cc", "year", "planned"),
    ]);
    let layout = layout(&f).unwrap();
    let find = |code: &str| {
        layout
            .groups
            .iter()
            .find(|g| f.events[g.events[0]].country_code == code)
            .unwrap()
    };
    let inner = |band: &Band| (band.top + 8.0, band.bottom - 8.0);

    let (top, bottom) = inner(band_of(&layout, 2027));
    let at = |date: jiff::civil::Date| top + year_fraction(date) * (bottom - top);
    let month = &find("aa").mark;
    assert!((month.y_start - at(jiff::civil::date(2027, 3, 1))).abs() < 1e-6);
    assert!((month.y_end - at(jiff::civil::date(2027, 4, 1))).abs() < 1e-6);
    let day = &find("bb").mark;
    assert_eq!(day.y_start, day.y_end);
    assert!(month.y_start < day.y_start && day.y_start < month.y_end);

    let year = &find("cc").mark;
    let (top, bottom) = inner(band_of(&layout, 2028));
    assert_eq!((year.y_start, year.y_end), (top, bottom));
    assert_eq!(When::parse("2028").unwrap(), find("cc").when);
}

#[test]
fn dense_input_keeps_labels_apart() {
    let f = figure(dense_events());
    let layout = layout(&f).unwrap();
    let grouped: usize = layout.groups.iter().map(|g| g.events.len()).sum();
    assert_eq!(grouped, 150);
    assert_no_overlap(&layout);
    // Each label stays in its year's band, so it is read beside its year.
    for e in &layout.groups {
        let band = band_of(&layout, e.when.year());
        assert!(
            e.label.top >= band.top && e.label.bottom() <= band.bottom,
            "{e:?} {band:?}"
        );
    }
    // Date order, and the reference date between the past and the upcoming.
    let ys: Vec<f64> = layout.groups.iter().map(|e| e.label.top).collect();
    assert!(ys.windows(2).all(|w| w[0] < w[1]));
    for e in &layout.groups {
        let after = e.label.top > layout.reference_label.top;
        assert_eq!(after, e.upcoming, "{e:?}");
    }
    let svg = timeline(&f).unwrap();
    assert_eq!(
        parse_xml(&svg)
            .descendants()
            .filter(|n| n.has_tag_name("a"))
            .count(),
        150
    );
}

/// The reference date's dashed rule runs in the gap under its label, clear of every label's box: level
/// with the label's text, it ran through the label's end whenever the browser's font was wider than the
/// estimate.
#[test]
fn the_reference_rule_runs_through_no_label() {
    for events in [
        dense_events(),
        vec![event("2026-10-01", "gr", "B2B e-invoicing", "in force")],
        vec![
            event("2026-09-01", "fr", "B2B e-invoicing", "in force"),
            event("2027-01-01", "hr", "B2B e-invoicing", "enacted"),
        ],
    ] {
        let f = figure(events);
        let layout = layout(&f).unwrap();
        let svg = timeline(&f).unwrap();
        let doc = parse_xml(&svg);
        let rule = doc
            .descendants()
            .find(|n| n.attribute("class") == Some("reference-rule"))
            .expect("a reference rule");
        let y: f64 = rule.attribute("y1").unwrap().parse().unwrap();
        assert_eq!(rule.attribute("y2"), rule.attribute("y1"));
        let x1: f64 = rule.attribute("x1").unwrap().parse().unwrap();
        let x2: f64 = rule.attribute("x2").unwrap().parse().unwrap();
        let reference = &layout.reference_label;
        assert!(y > reference.bottom(), "{y} {reference:?}");
        for label in labels(&layout) {
            let beside = label.x < x2 && x1 < label.x + label.width;
            assert!(
                !(beside && label.top <= y && y <= label.bottom()),
                "the rule at y {y} runs through {label:?}"
            );
        }
    }
}

#[test]
fn no_event_and_one_event() {
    let empty = figure(Vec::new());
    let laid = layout(&empty).unwrap();
    let years: Vec<(i16, i16)> = laid
        .bands
        .iter()
        .map(|b| (b.first_year, b.last_year))
        .collect();
    assert_eq!(
        years,
        [(2026, 2026), (2027, 2027), (2028, 2028), (2029, 2029)]
    );
    let svg = timeline(&empty).unwrap();
    assert!(svg.contains("No dated events."));
    parse_xml(&svg);

    let one = figure(vec![event(
        "2019-01-01",
        "it",
        "B2B e-invoicing",
        "in force",
    )]);
    let laid = layout(&one).unwrap();
    assert_no_overlap(&laid);
    let years: Vec<(i16, i16)> = laid
        .bands
        .iter()
        .map(|b| (b.first_year, b.last_year))
        .collect();
    // 2020-2025 are empty and fold into one band.
    assert_eq!(years[0], (2019, 2019));
    assert_eq!(years[1], (2020, 2025));
    assert_eq!(years.last(), Some(&(2029, 2029)));
    parse_xml(&timeline(&one).unwrap());
}

#[test]
fn bad_dates_are_errors() {
    let f = figure(vec![
        event("2026-01-01", "aa", "", "in force"),
        event("2026-02-30", "bb", "", "in force"),
    ]);
    assert_eq!(
        timeline(&f),
        Err(TimelineError::BadDate {
            index: 1,
            date: "2026-02-30".into()
        })
    );
    let mut f = figure(Vec::new());
    f.reference_date = "2026-10".into();
    assert!(matches!(
        timeline(&f),
        Err(TimelineError::BadReferenceDate { .. })
    ));
}

fn any_date() -> impl Strategy<Value = String> {
    prop_oneof![
        (1990i32..2040, 1u32..13, 1u32..29).prop_map(|(y, m, d)| format!("{y}-{m:02}-{d:02}")),
        (1990i32..2040, 1u32..13).prop_map(|(y, m)| format!("{y}-{m:02}")),
        (1990i32..2040).prop_map(|y| y.to_string()),
        ".{0,12}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn any_events_never_panic_and_never_overlap(
        events in proptest::collection::vec(
            (any_date(), "[a-z]{2}", ".{0,30}", ".{0,90}", "(in force|enacted|planned|.{0,10})", ".{0,20}"),
            0..40,
        ),
        reference in any_date(),
    ) {
        let events = events
            .into_iter()
            .map(|(date, country_code, country_name, label, status, url)| TimelineEvent {
                date, country_code, country_name, label, status, url,
            })
            .collect();
        let f = TimelineFigure { reference_date: reference, ..figure(events) };
        if let Ok(layout) = layout(&f) {
            assert_no_overlap(&layout);
            let svg = timeline(&f).unwrap();
            prop_assert!(roxmltree::Document::parse(&svg).is_ok());
        }
    }
}

#[test]
fn one_country_one_date_one_status_share_a_label() {
    let f = figure(vec![
        event("2026-02-01", "pl", "B2B e-invoicing", "in force"),
        event("2026-02-01", "pl", "B2G e-invoicing", "in force"),
        event("2026-02-01", "pl", "Real-time reporting", "enacted"),
        event("2026-02-01", "pl", "", "in force"),
    ]);
    let laid = layout(&f).unwrap();
    let sizes: Vec<usize> = laid.groups.iter().map(|g| g.events.len()).collect();
    assert_eq!(sizes.iter().sum::<usize>(), 4);
    assert_eq!(sizes.iter().filter(|n| **n == 2).count(), 1, "{sizes:?}");
    let svg = timeline(&f).unwrap();
    let doc = parse_xml(&svg);
    let links: Vec<_> = doc.descendants().filter(|n| n.has_tag_name("a")).collect();
    assert_eq!(links.len(), 4);
    // Each link shows its own label (and not its neighbour's); the heading appears once per group.
    let shown = |link: &roxmltree::Node| -> String {
        link.descendants()
            .filter(|n| n.is_text() && n.ancestors().any(|a| a.has_tag_name("text")))
            .map(|n| n.text().unwrap_or_default())
            .collect()
    };
    for (label, other) in [("B2B e-invoicing", "B2G"), ("B2G e-invoicing", "B2B")] {
        let link = links
            .iter()
            .find(|a| title_of(**a).unwrap().contains(label))
            .unwrap();
        assert!(
            shown(link).contains(label) && !shown(link).contains(other),
            "{}",
            shown(link)
        );
    }
    let headings = svg.matches(">Country PL</tspan>").count();
    assert_eq!(headings, 3, "one heading per group");
}
