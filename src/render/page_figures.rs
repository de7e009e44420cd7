//! The figures as the pages show them: tracked queries that gather the data and call the plain renderers
//! of [`locref_figures`]. The home page shows the map of the countries coloured by their toggles and the
//! timeline of recent and coming e-invoicing mandate start dates; the calendar page shows the timeline of
//! every dated mandate phase.
//!
//! A figure that cannot be drawn (a country without a shape, a malformed shapes file) is a diagnostic of
//! the build ([`figure_errors`]), never a page without its figure.

use super::pages::shared::toggle_labels;
use crate::api_types::CalendarEntry;
use crate::derived::obligations::calendar;
use crate::derived::toggles::country_toggle_marks;
use crate::diagnostics::Diagnostic;
use crate::model::{CountryKey, countries_by_name, reference_date};
use crate::parse::source_text;
use locref_figures::{
    MapCountry, MapFigure, Shapes, Texture, TextureKind, TimelineEvent, TimelineFigure, map,
    timeline,
};

/// The committed country shapes (see `rules/geo/README.md`).
pub(crate) const SHAPES: &str = "rules/geo/countries.json";

/// The obligations whose start dates the timelines show: the e-invoicing mandates.
const MANDATES: [&str; 2] = ["b2b-e-invoicing", "b2g-e-invoicing"];

/// How many years before the reference year the home page's timeline reaches back (the calendar page
/// shows them all).
const HOME_YEARS_BACK: i16 = 1;

/// The shapes file, parsed and checked. Not comparable (it holds floats), so never backdated: the map
/// compares its own text instead.
#[salsa::tracked(returns(ref), no_eq)]
pub(crate) fn map_shapes(db: &dyn salsa::Database) -> Result<Shapes, Diagnostic> {
    let text = source_text(db, SHAPES)?;
    Shapes::parse(text).map_err(|e| Diagnostic::new(SHAPES, 1, 1, format!("map shapes: {e}")))
}

/// The home page's map: every country linked to its page and classed by its value for each toggle,
/// coloured by the toggle the reader picks (site.css).
#[salsa::tracked(returns(ref))]
pub fn home_map(db: &dyn salsa::Database) -> Result<String, Diagnostic> {
    let shapes = map_shapes(db).as_ref().map_err(Clone::clone)?;
    let labels: Vec<String> = toggle_labels(db).iter().map(|t| t.label.clone()).collect();
    let countries = countries_by_name(db)
        .iter()
        .map(|c| {
            let marks = country_toggle_marks(db, CountryKey::new(db, c.code.clone()));
            MapCountry {
                code: c.code.clone(),
                name: c.name.clone(),
                url: format!("/{}/", c.code),
                values: marks.iter().map(|m| m.value).collect(),
                qualifiers: marks
                    .iter()
                    .map(|m| {
                        m.limit
                            .clone()
                            .or_else(|| m.absence.then(|| "absence check".to_string()))
                    })
                    .collect(),
                classes: vec![format!(
                    "model-{}",
                    b2b_model(db, &c.code).unwrap_or("unknown")
                )],
            }
        })
        .collect();
    let figure = MapFigure {
        title: "Map of the countries by obligation".into(),
        description: "Each country is coloured by the obligation chosen before the map: dark blue where it \
                      applies (yes), dotted dark blue where it applies in part (yes, limited), ochre where it does not (no), hatched grey where it is not established \
                      (unknown). Small countries are marked by a circle."
            .into(),
        toggles: labels,
        countries,
        textures: MAP_TEXTURES
            .iter()
            .map(|(id, ground, kind)| Texture {
                id: (*id).to_string(),
                ground: (*ground).to_string(),
                marks: MAP_MARKS.to_string(),
                kind: *kind,
            })
            .collect(),
    };
    map(shapes, &figure).map_err(|e| Diagnostic::new(SHAPES, 1, 1, format!("the map: {e}")))
}

/// The textures of the home map beside the hatching of unknown, each a ground of site.css (`--map-yes`,
/// `--model-*`, the stylesheet's fallback fill, which tests/testsuite/contrast.rs holds to the same
/// colour) with light marks: a limited yes is dotted dark blue, apart from the plain yes; each B2B
/// e-invoicing model has marks of its own, so the models are told apart by pattern, not by hue alone.
const MAP_TEXTURES: [(&str, &str, TextureKind); 6] = [
    ("map-limited", "#0c3650", TextureKind::Dots),
    ("map-model-clearance", "#0c3650", TextureKind::Plain),
    (
        "map-model-reporting",
        "#1e6b52",
        TextureKind::HorizontalStripes,
    ),
    ("map-model-network", "#6a4a9c", TextureKind::Dots),
    ("map-model-five-corner", "#a3462a", TextureKind::Cross),
    (
        "map-model-post-audit",
        "#8a6d2f",
        TextureKind::VerticalStripes,
    ),
];

/// The light marks of every texture (the hatching's stripes too).
const MAP_MARKS: &str = "#e9ecef";

/// The obligation whose e-invoicing model the home map and the matrix show for a country.
pub(crate) const MODEL_OBLIGATION: &str = "b2b-e-invoicing";

/// A country's B2B e-invoicing model (`clearance`, …) as it applies on the reference date, where a source
/// that was read states it: a model of a B2B obligation still to come is not today's (the country page
/// and compare show it as still to come).
pub(crate) fn b2b_model<'db>(db: &'db dyn salsa::Database, code: &str) -> Option<&'db str> {
    crate::derived::regimes::country_regime_records(db, CountryKey::new(db, code.to_string()))
        .iter()
        .find(|r| r.obligation == MODEL_OBLIGATION && r.current)
        .and_then(|r| r.model.as_ref())
        .map(|m| m.id.as_str())
}

/// The dated mandate phases a timeline shows: on the home page from the year before the reference year
/// on, on the calendar page all of them.
fn mandate_entries(db: &dyn salsa::Database, recent_only: bool) -> Vec<&CalendarEntry> {
    let reference = reference_date(db);
    let from_year: i16 = reference
        .get(..4)
        .and_then(|y| y.parse::<i16>().ok())
        .map_or(i16::MIN, |y| y - HOME_YEARS_BACK);
    calendar(db)
        .iter()
        .filter(|e| MANDATES.contains(&e.obligation.as_str()))
        .filter(|e| {
            !recent_only
                || e.date
                    .get(..4)
                    .and_then(|y| y.parse::<i16>().ok())
                    .is_some_and(|y| y >= from_year)
        })
        .collect()
}

fn draw_timeline(
    db: &dyn salsa::Database,
    entries: &[&CalendarEntry],
    description: &str,
) -> Result<String, Diagnostic> {
    // Phases of one mandate that start together in one country are one event ("B2B e-invoicing, 2
    // phases"): the table beside the figure tells them apart by whom they cover.
    let mut events: Vec<(TimelineEvent, usize)> = Vec::new();
    for e in entries {
        let status = e.status.replace('-', " ");
        let same = events.iter_mut().find(|(t, _)| {
            t.country_code == e.country
                && t.date == e.date
                && t.status == status
                && t.label.starts_with(&e.obligation_label)
        });
        match same {
            Some((_, phases)) => *phases += 1,
            None => events.push((
                TimelineEvent {
                    date: e.date.clone(),
                    country_code: e.country.clone(),
                    country_name: e.country_name.clone(),
                    label: e.obligation_label.clone(),
                    status,
                    url: format!("/{}/#{}", e.country, e.id),
                },
                1,
            )),
        }
    }
    let events = events
        .into_iter()
        .map(|(mut event, phases)| {
            if phases > 1 {
                event.label = format!("{}, {phases} phases", event.label);
            }
            event
        })
        .collect();
    let figure = TimelineFigure {
        title: "Timeline of e-invoicing mandate start dates".into(),
        description: description.into(),
        reference_date: reference_date(db).clone(),
        events,
    };
    timeline(&figure).map_err(|e| {
        Diagnostic::new(
            "sources/tables/obligations.csv",
            1,
            1,
            format!("the timeline: {e}"),
        )
    })
}

/// A timeline's events as rows for its table (the text alternative) and the Markdown twin.
fn rows(entries: &[&CalendarEntry]) -> Vec<CalendarEntry> {
    entries.iter().map(|&e| e.clone()).collect()
}

/// The home page's timeline: the mandate start dates from the year before the reference year on.
#[salsa::tracked(returns(ref))]
pub fn home_timeline(db: &dyn salsa::Database) -> Result<(String, Vec<CalendarEntry>), Diagnostic> {
    let entries = mandate_entries(db, true);
    let svg = draw_timeline(
        db,
        &entries,
        "B2B and B2G e-invoicing mandates: when each phase starts, by country, from the year before the \
         reference date to the last recorded date.",
    )?;
    Ok((svg, rows(&entries)))
}

/// The calendar page's timeline: every dated mandate phase.
#[salsa::tracked(returns(ref))]
pub fn calendar_timeline(db: &dyn salsa::Database) -> Result<String, Diagnostic> {
    let entries = mandate_entries(db, false);
    draw_timeline(
        db,
        &entries,
        "B2B and B2G e-invoicing mandates: when each recorded phase starts, by country.",
    )
}

/// Why a figure cannot be drawn, reported by the build like any diagnostic.
pub(crate) fn figure_errors(db: &dyn salsa::Database) -> Vec<Diagnostic> {
    let mut errors: Vec<Diagnostic> = Vec::new();
    for error in [
        home_map(db).as_ref().err(),
        home_timeline(db).as_ref().err(),
        calendar_timeline(db).as_ref().err(),
    ]
    .into_iter()
    .flatten()
    {
        if !errors.contains(error) {
            errors.push(error.clone());
        }
    }
    errors
}
