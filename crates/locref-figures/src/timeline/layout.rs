//! Where everything of the timeline goes, computed before any SVG is written (so tests can check the
//! boxes): a vertical axis of year bands, a mark per event at its date, and its label beside the axis,
//! pushed down (never over another label) and joined to its mark by a leader line.
//!
//! A year band is as tall as its labels need, and time runs evenly within a band: a busy year is taller
//! than a quiet one, so the axis is by year, not to one scale. Three or more empty years in a row (before
//! the reference year) fold into one short band.

use std::collections::BTreeMap;

use super::date::{Precision, When, year_fraction};
use super::{Status, TimelineError, TimelineFigure};
use crate::text;
use crate::xml::slug;

/// The figure's width in user units. Narrow on purpose: the SVG scales to the page, and at 390 px a
/// 400-unit figure keeps 13-unit text at about 12 px.
pub(crate) const WIDTH: f64 = 400.0;
pub(crate) const FONT: f64 = 13.0;
pub(crate) const SMALL_FONT: f64 = 11.0;
pub(crate) const LINE: f64 = 16.0;
/// From a label's top to its first baseline.
pub(crate) const ASCENT: f64 = 12.0;
/// From a label's top to the middle of its first line: level with the mark when there is room.
const ANCHOR: f64 = ASCENT - 4.0;
pub(crate) const YEAR_X: f64 = 44.0;
pub(crate) const AXIS_X: f64 = 56.0;
pub(crate) const LABEL_X: f64 = 80.0;
pub(crate) const LABEL_WIDTH: f64 = WIDTH - LABEL_X - 6.0;
/// Vertical space between two labels.
const GAP: f64 = 8.0;
/// Space inside a band above its first and below its last mark.
const BAND_PAD: f64 = 8.0;
const MIN_BAND: f64 = 34.0;
const FOLDED_BAND: f64 = 40.0;
/// Years drawn after the reference year even when nothing is dated there.
pub(crate) const YEARS_AFTER_REFERENCE: i16 = 3;
const LEGEND_ROW: f64 = 20.0;

/// A year band of the axis (or several empty years folded into one).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Band {
    pub first_year: i16,
    pub last_year: i16,
    pub top: f64,
    pub bottom: f64,
}

impl Band {
    pub(crate) fn folded(&self) -> bool {
        self.first_year != self.last_year
    }

    /// The y of a moment `fraction` (0..=1) through the band's year.
    fn y(&self, fraction: f64) -> f64 {
        self.top + BAND_PAD + fraction * (self.bottom - self.top - 2.0 * BAND_PAD)
    }
}

/// One run of text in a label line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Run {
    /// The country's name (bold).
    Name(String),
    /// Date and status (muted).
    Meta(String),
    Text(String),
    /// The reference date's own label.
    Reference(String),
}

/// A label: its box and its lines, top to bottom.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Label {
    pub x: f64,
    pub top: f64,
    pub width: f64,
    pub height: f64,
    pub lines: Vec<Vec<Run>>,
}

impl Label {
    pub(crate) fn bottom(&self) -> f64 {
        self.top + self.height
    }

    /// The y of a rule under the label: halfway across the gap to whatever is stacked below it, so the
    /// rule touches neither the label's text nor the next label.
    pub(crate) fn rule_y(&self) -> f64 {
        self.bottom() + GAP / 2.0
    }

    /// The y of the middle of its first line, where the leader line arrives.
    pub(crate) fn anchor_y(&self) -> f64 {
        self.top + ANCHOR
    }

    #[cfg(test)]
    pub(crate) fn overlaps(&self, other: &Label) -> bool {
        self.x < other.x + other.width
            && other.x < self.x + self.width
            && self.top < other.bottom()
            && other.top < self.bottom()
    }
}

/// Where an event's date is on the axis: a point (`y_start == y_end`) or a month's or year's span.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Mark {
    pub x: f64,
    pub y_start: f64,
    pub y_end: f64,
}

/// Events of one country that start on the same date with the same status, drawn as one mark and one
/// label: the country, date and status once, then a line (or more) per event.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PlacedGroup {
    /// Indices into the figure's events, in label order.
    pub events: Vec<usize>,
    /// For each line of the label, the position in `events` of the event it belongs to (the first
    /// event owns the heading line).
    pub line_owners: Vec<usize>,
    pub when: When,
    pub status: Status,
    /// After the reference date.
    pub upcoming: bool,
    pub mark: Mark,
    pub label: Label,
}

/// An entry of the key at the top.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LegendEntry {
    /// `None` is the bar of a month or year.
    pub status: Option<Status>,
    pub x: f64,
    pub y: f64,
    pub text: &'static str,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Layout {
    pub height: f64,
    pub legend: Vec<LegendEntry>,
    /// "No dated events." when there are none: its baseline.
    pub empty_note: Option<f64>,
    pub bands: Vec<Band>,
    /// In date order.
    pub groups: Vec<PlacedGroup>,
    pub reference_y: f64,
    pub reference_label: Label,
}

/// An item to stack in a band: a group of events or the reference date.
struct Item {
    /// The group's events and date; `None` for the reference date.
    group: Option<(Vec<usize>, When)>,
    fraction: f64,
    lines: Vec<Vec<Run>>,
    line_owners: Vec<usize>,
}

/// Lays out `figure`, or says which date is malformed.
pub(crate) fn layout(figure: &TimelineFigure) -> Result<Layout, TimelineError> {
    let reference = When::parse(&figure.reference_date)
        .filter(|w| w.precision == Precision::Day)
        .ok_or_else(|| TimelineError::BadReferenceDate {
            date: figure.reference_date.clone(),
        })?;
    let mut dated = Vec::with_capacity(figure.events.len());
    for (index, event) in figure.events.iter().enumerate() {
        let when = When::parse(&event.date).ok_or_else(|| TimelineError::BadDate {
            index,
            date: event.date.clone(),
        })?;
        dated.push((index, when));
    }
    // Date order; within a date, days before months before years (a span starts on its first day), then
    // by country and label so the order never depends on the input's.
    dated.sort_by(|(a, wa), (b, wb)| {
        let (ea, eb) = (&figure.events[*a], &figure.events[*b]);
        (wa.start, wa.precision, &ea.country_name, &ea.label, a).cmp(&(
            wb.start,
            wb.precision,
            &eb.country_name,
            &eb.label,
            b,
        ))
    });

    let (legend, legend_bottom) = legend(&dated, figure);
    let mut y = legend_bottom + 6.0;
    let empty_note = if dated.is_empty() {
        y += LINE;
        let baseline = y;
        y += 8.0;
        Some(baseline)
    } else {
        None
    };

    let reference_year = reference.year();
    let first_year = dated
        .iter()
        .map(|(_, w)| w.year())
        .fold(reference_year, i16::min);
    let last_year = dated.iter().map(|(_, w)| w.year()).fold(
        reference_year.saturating_add(YEARS_AFTER_REFERENCE),
        i16::max,
    );

    let mut by_year: BTreeMap<i16, Vec<Item>> = BTreeMap::new();
    for (events, when) in groups(figure, &dated) {
        let (lines, line_owners) = group_lines(figure, &events);
        by_year.entry(when.year()).or_default().push(Item {
            group: Some((events, when)),
            fraction: when.span_in_year().0,
            lines,
            line_owners,
        });
    }
    // The reference date goes after the events that start on or before it.
    let reference_fraction = year_fraction(reference.start);
    let reference_item = Item {
        group: None,
        line_owners: vec![0],
        fraction: reference_fraction,
        lines: vec![vec![Run::Reference(format!(
            "reference date {}",
            figure.reference_date
        ))]],
    };
    let ref_items = by_year.entry(reference_year).or_default();
    let at = ref_items
        .iter()
        .position(|item| {
            item.group
                .as_ref()
                .is_some_and(|(_, w)| w.start > reference.start)
        })
        .unwrap_or(ref_items.len());
    ref_items.insert(at, reference_item);

    let mut bands = Vec::new();
    let mut placed = Vec::new();
    let mut reference_y = y;
    let mut reference_label = None;
    let mut year = first_year;
    while year <= last_year {
        let Some(items) = by_year.remove(&year) else {
            // An empty year: fold it with the empty years after it, if there are enough of them before
            // the reference year.
            let mut end = year;
            while end < last_year && end + 1 < reference_year && !by_year.contains_key(&(end + 1)) {
                end += 1;
            }
            let folded = year < reference_year && end - year >= 2;
            let last = if folded { end } else { year };
            let height = if folded { FOLDED_BAND } else { MIN_BAND };
            bands.push(Band {
                first_year: year,
                last_year: last,
                top: y,
                bottom: y + height,
            });
            y += height;
            year = last + 1;
            continue;
        };
        let heights: Vec<f64> = items.iter().map(|i| i.lines.len() as f64 * LINE).collect();
        let needed = heights.iter().sum::<f64>() + GAP * (heights.len().saturating_sub(1)) as f64;
        let band = Band {
            first_year: year,
            last_year: year,
            top: y,
            bottom: y + (needed + 2.0 * BAND_PAD).max(MIN_BAND),
        };
        let tops = stack(&band, &items, &heights);
        for ((item, top), height) in items.into_iter().zip(tops).zip(heights) {
            let label = Label {
                x: LABEL_X,
                top,
                width: lines_width(&item.lines),
                height,
                lines: item.lines,
            };
            match item.group {
                None => {
                    reference_y = band.y(reference_fraction);
                    reference_label = Some(label);
                }
                Some((events, when)) => {
                    let (from, to) = when.span_in_year();
                    let status = Status::of(&figure.events[events[0]].status);
                    placed.push(PlacedGroup {
                        events,
                        line_owners: item.line_owners,
                        when,
                        status,
                        upcoming: when.start > reference.start,
                        mark: Mark {
                            x: AXIS_X,
                            y_start: band.y(from),
                            y_end: band.y(to),
                        },
                        label,
                    });
                }
            }
        }
        y = band.bottom;
        bands.push(band);
        year += 1;
    }
    spread_span_lanes(&mut placed);
    let reference_label = reference_label.unwrap_or(Label {
        x: LABEL_X,
        top: reference_y,
        width: 0.0,
        height: 0.0,
        lines: Vec::new(),
    });
    Ok(Layout {
        height: y + 10.0,
        legend,
        empty_note,
        bands,
        groups: placed,
        reference_y,
        reference_label,
    })
}

/// The tops of a band's labels: each as near its mark as it can be, none over another, all inside the
/// band (the band is tall enough for all of them).
fn stack(band: &Band, items: &[Item], heights: &[f64]) -> Vec<f64> {
    let mut tops = Vec::with_capacity(items.len());
    let mut floor = band.top + BAND_PAD / 2.0;
    for (item, height) in items.iter().zip(heights) {
        let ideal = band.y(item.fraction) - ANCHOR;
        let top = ideal.max(floor);
        floor = top + height + GAP;
        tops.push(top);
    }
    let mut ceiling = band.bottom - BAND_PAD / 2.0;
    for (top, height) in tops.iter_mut().zip(heights).rev() {
        if *top + height > ceiling {
            *top = ceiling - height;
        }
        ceiling = *top - GAP;
    }
    tops
}

/// Month and year spans that overlap in the same band are set side by side, so none hides another.
fn spread_span_lanes(events: &mut [PlacedGroup]) {
    const LANES: usize = 3;
    const LANE_STEP: f64 = 7.0;
    let mut lane_ends: Vec<f64> = Vec::new();
    for event in events.iter_mut() {
        if event.when.precision == Precision::Day {
            continue;
        }
        let lane = lane_ends
            .iter()
            .position(|end| *end < event.mark.y_start)
            .unwrap_or(lane_ends.len());
        if lane == lane_ends.len() {
            lane_ends.push(event.mark.y_end);
        } else {
            lane_ends[lane] = event.mark.y_end;
        }
        event.mark.x = AXIS_X + (lane % LANES) as f64 * LANE_STEP;
    }
}

/// The sorted events gathered into groups: same date as written, same country, same status. Events
/// without a label stay alone (their heading is all they show).
fn groups(figure: &TimelineFigure, dated: &[(usize, When)]) -> Vec<(Vec<usize>, When)> {
    let mut groups: Vec<(Vec<usize>, When)> = Vec::new();
    let mut open: BTreeMap<(&str, &str, String), usize> = BTreeMap::new();
    for (index, when) in dated {
        let event = &figure.events[*index];
        if event.label.trim().is_empty() {
            groups.push((vec![*index], *when));
            continue;
        }
        let key = (
            event.date.as_str(),
            event.country_code.as_str(),
            slug(&event.status),
        );
        match open.get(&key) {
            Some(&at) => groups[at].0.push(*index),
            None => {
                open.insert(key, groups.len());
                groups.push((vec![*index], *when));
            }
        }
    }
    groups
}

/// A group's label: the country in bold with the date and status, then each event's label, wrapped;
/// and for each line, the position of the event it belongs to.
fn group_lines(figure: &TimelineFigure, events: &[usize]) -> (Vec<Vec<Run>>, Vec<usize>) {
    let first = &figure.events[events[0]];
    let meta = format!("{} · {}", first.date, first.status.trim());
    let name = first.country_name.trim();
    let together = text::width(name, FONT, true) + text::width(&format!(" {meta}"), FONT, false);
    let mut lines = Vec::new();
    if together <= LABEL_WIDTH {
        lines.push(vec![Run::Name(name.into()), Run::Meta(format!(" {meta}"))]);
    } else {
        for line in text::wrap(name, LABEL_WIDTH, FONT, true) {
            lines.push(vec![Run::Name(line)]);
        }
        for line in text::wrap(&meta, LABEL_WIDTH, FONT, false) {
            lines.push(vec![Run::Meta(line)]);
        }
    }
    let mut owners = vec![0; lines.len()];
    for (position, index) in events.iter().enumerate() {
        let label = figure.events[*index].label.trim();
        if label.is_empty() {
            continue;
        }
        for line in text::wrap(label, LABEL_WIDTH, FONT, false) {
            lines.push(vec![Run::Text(line)]);
            owners.push(position);
        }
    }
    (lines, owners)
}

fn lines_width(lines: &[Vec<Run>]) -> f64 {
    lines
        .iter()
        .map(|line| {
            line.iter()
                .map(|run| match run {
                    Run::Name(t) | Run::Reference(t) => text::width(t, FONT, true),
                    Run::Meta(t) | Run::Text(t) => text::width(t, FONT, false),
                })
                .sum::<f64>()
        })
        .fold(0.0, f64::max)
}

/// The key: the statuses the marks distinguish, and the bar of a partial date when there is one; in
/// rows that wrap at the figure's width. Returns the entries and the y below them.
fn legend(dated: &[(usize, When)], figure: &TimelineFigure) -> (Vec<LegendEntry>, f64) {
    let mut wanted: Vec<(Option<Status>, &'static str)> = vec![
        (Some(Status::InForce), "in force"),
        (Some(Status::Enacted), "enacted"),
        (Some(Status::Planned), "planned"),
    ];
    if figure
        .events
        .iter()
        .any(|e| Status::of(&e.status) == Status::Other)
    {
        wanted.push((Some(Status::Other), "other"));
    }
    if dated.iter().any(|(_, w)| w.precision != Precision::Day) {
        wanted.push((None, "month or year only"));
    }
    let mut entries = Vec::new();
    let (mut x, mut y) = (6.0, LEGEND_ROW / 2.0 + 2.0);
    for (status, label) in wanted {
        let w = 16.0 + text::width(label, SMALL_FONT, false);
        if x + w > WIDTH - 4.0 && x > 6.0 {
            x = 6.0;
            y += LEGEND_ROW;
        }
        entries.push(LegendEntry {
            status,
            x,
            y,
            text: label,
        });
        x += w + 14.0;
    }
    (entries, y + LEGEND_ROW / 2.0)
}
