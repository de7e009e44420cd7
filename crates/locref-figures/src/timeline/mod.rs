//! The timeline figure: dated obligations on a vertical axis of years, the reference date marked, each
//! event a link with a mark at its date (a bar over the month or year when only that is known) and a
//! label beside the axis. Vertical so it stays readable on a phone: it grows in length, not width.

mod date;
mod layout;

use std::fmt::{self, Write};

use self::date::Precision;
use self::layout::{
    ASCENT, AXIS_X, FONT, LABEL_X, LINE, Label, Layout, Run, SMALL_FONT, WIDTH, YEAR_X,
};
use super::xml::{escape, num, slug};

/// One dated event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimelineEvent {
    /// `YYYY-MM-DD`, or `YYYY-MM` / `YYYY` when only the month or year is known.
    pub date: String,
    pub country_code: String,
    pub country_name: String,
    /// What starts: `"B2B e-invoicing: issue, large companies"`.
    pub label: String,
    /// `"in force"`, `"enacted"`, `"planned"` (drawn distinctly); any other text is drawn as "other".
    pub status: String,
    /// Where the event links to.
    pub url: String,
}

/// What the timeline shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimelineFigure {
    /// The figure's accessible name (`<title>`).
    pub title: String,
    /// Its accessible description (`<desc>`); a count of the events before and after the reference
    /// date is appended.
    pub description: String,
    /// `YYYY-MM-DD`: marked on the axis; events after it are upcoming.
    pub reference_date: String,
    /// In any order: the figure sorts them by date.
    pub events: Vec<TimelineEvent>,
}

/// Why a timeline cannot be drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimelineError {
    /// Event `index` has a date that is not `YYYY-MM-DD`, `YYYY-MM` or `YYYY`.
    BadDate {
        index: usize,
        date: String,
    },
    BadReferenceDate {
        date: String,
    },
}

impl fmt::Display for TimelineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimelineError::BadDate { index, date } => write!(
                f,
                "timeline event {index}: date `{date}` is not YYYY-MM-DD, YYYY-MM or YYYY"
            ),
            TimelineError::BadReferenceDate { date } => {
                write!(f, "timeline reference date `{date}` is not YYYY-MM-DD")
            }
        }
    }
}

impl std::error::Error for TimelineError {}

/// How an event's mark is drawn: filled dark, filled light, hollow; lightness tells them apart without
/// colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    InForce,
    Enacted,
    Planned,
    Other,
}

impl Status {
    /// Reads a status text loosely ("in force", "In-force", "in_force" are one).
    pub(crate) fn of(text: &str) -> Status {
        match slug(text).as_str() {
            "in-force" => Status::InForce,
            "enacted" => Status::Enacted,
            "planned" => Status::Planned,
            _ => Status::Other,
        }
    }

    /// (fill, stroke) of the mark.
    fn paint(self) -> (&'static str, &'static str) {
        match self {
            Status::InForce => (INK, INK),
            Status::Enacted => ("#8db4ca", INK),
            Status::Planned => ("#ffffff", INK),
            Status::Other => ("#ffffff", "#8a939b"),
        }
    }

    fn class(self) -> &'static str {
        match self {
            Status::InForce => "status-in-force",
            Status::Enacted => "status-enacted",
            Status::Planned => "status-planned",
            Status::Other => "status-other",
        }
    }
}

const INK: &str = "#1f5673";
const TEXT: &str = "#1a1a1a";
const MUTED: &str = "#55606b";
const ACCENT: &str = "#a4451f";
const RULE: &str = "#9aa5b1";
const BAND: &str = "#f3f5f7";

/// The timeline as one `<svg>` element, or which date is malformed.
pub fn timeline(figure: &TimelineFigure) -> Result<String, TimelineError> {
    let layout = layout::layout(figure)?;
    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="fig-timeline" viewBox="0 0 {w} {h}" role="group" aria-labelledby="timeline-title" aria-describedby="timeline-desc" font-family="system-ui, sans-serif" font-size="{font}">"#,
        w = num(WIDTH),
        h = num(layout.height),
        font = num(FONT),
    );
    let _ = write!(
        svg,
        r#"<title id="timeline-title">{}</title><desc id="timeline-desc">{}</desc>"#,
        escape(&figure.title),
        escape(&description(figure, &layout))
    );
    draw_legend(&mut svg, &layout);
    if let Some(baseline) = layout.empty_note {
        let _ = write!(
            svg,
            r#"<text class="empty" x="{}" y="{}" fill="{MUTED}">No dated events.</text>"#,
            num(LABEL_X),
            num(baseline)
        );
    }
    draw_years(&mut svg, &layout);
    draw_reference(&mut svg, &layout);
    for group in &layout.groups {
        draw_group(&mut svg, figure, group);
    }
    svg.push_str("</svg>");
    Ok(svg)
}

fn draw_legend(svg: &mut String, layout: &Layout) {
    let _ = write!(
        svg,
        r#"<g class="legend" font-size="{}" fill="{MUTED}">"#,
        num(SMALL_FONT)
    );
    for entry in &layout.legend {
        let (cx, cy) = (entry.x + 5.0, entry.y);
        match entry.status {
            Some(status) => {
                let (fill, stroke) = status.paint();
                let _ = write!(
                    svg,
                    r#"<circle cx="{}" cy="{}" r="4.5" fill="{fill}" stroke="{stroke}" stroke-width="1.5"/>"#,
                    num(cx),
                    num(cy)
                );
            }
            None => {
                let _ = write!(
                    svg,
                    r#"<rect x="{}" y="{}" width="7" height="14" rx="3.5" fill="{INK}"/>"#,
                    num(cx - 3.5),
                    num(cy - 7.0)
                );
            }
        }
        let _ = write!(
            svg,
            r#"<text x="{}" y="{}">{}</text>"#,
            num(entry.x + 16.0),
            num(entry.y + 4.0),
            escape(entry.text)
        );
    }
    svg.push_str("</g>");
}

/// The year bands (alternately shaded), their years in the margin, and the axis: solid through years,
/// dashed through folded runs of empty years.
fn draw_years(svg: &mut String, layout: &Layout) {
    svg.push_str(r#"<g class="years">"#);
    for (i, band) in layout.bands.iter().enumerate() {
        if i % 2 == 0 {
            let _ = write!(
                svg,
                r#"<rect x="0" y="{}" width="{}" height="{}" fill="{BAND}"/>"#,
                num(band.top),
                num(WIDTH),
                num(band.bottom - band.top)
            );
        }
        if band.folded() {
            let _ = write!(
                svg,
                r#"<text x="{x}" y="{}" text-anchor="end" font-size="{}" fill="{MUTED}">{}–<tspan x="{x}" dy="13">{}</tspan></text>"#,
                num(band.top + 16.0),
                num(SMALL_FONT),
                band.first_year,
                band.last_year,
                x = num(YEAR_X),
            );
        } else {
            let _ = write!(
                svg,
                r#"<text x="{}" y="{}" text-anchor="end" font-weight="600" fill="{TEXT}">{}</text>"#,
                num(YEAR_X),
                num(band.top + 18.0),
                band.first_year
            );
        }
        let dash = if band.folded() {
            r#" stroke-dasharray="2 4""#
        } else {
            ""
        };
        let _ = write!(
            svg,
            r#"<line class="axis" x1="{x}" y1="{}" x2="{x}" y2="{}" stroke="{RULE}" stroke-width="2"{dash}/>"#,
            num(band.top),
            num(band.bottom),
            x = num(AXIS_X)
        );
    }
    svg.push_str("</g>");
}

/// The reference date: a tick across the axis, its label among the event labels, and a dashed rule
/// under the label, across to the edge, between the past and the upcoming events. The rule runs in the
/// gap below the label (labels are a `GAP` apart), not level with its text: a label's width is only
/// estimated (the browser picks the font), and a rule started after the estimated end ran through the
/// label's last characters in a wide bold face.
fn draw_reference(svg: &mut String, layout: &Layout) {
    let label = &layout.reference_label;
    let _ = write!(
        svg,
        r#"<g class="reference" stroke="{ACCENT}" fill="none"><line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke-width="2.5"/>"#,
        num(AXIS_X - 9.0),
        num(AXIS_X + 9.0),
        y = num(layout.reference_y)
    );
    leader(svg, AXIS_X + 9.0, layout.reference_y, label);
    if !label.lines.is_empty() {
        let _ = write!(
            svg,
            r#"<line class="reference-rule" x1="{}" y1="{y}" x2="{}" y2="{y}" stroke-width="1" stroke-dasharray="4 3"/>"#,
            num(label.x),
            num(WIDTH - 4.0),
            y = num(label.rule_y())
        );
    }
    svg.push_str("</g>");
    draw_label(svg, label);
}

/// A group: one link per event. The first link holds the mark, the leader and the heading line; each
/// holds its own label lines and tooltip.
fn draw_group(svg: &mut String, figure: &TimelineFigure, group: &layout::PlacedGroup) {
    let precision = match group.when.precision {
        Precision::Day => "day",
        Precision::Month => "month",
        Precision::Year => "year",
    };
    for (position, index) in group.events.iter().enumerate() {
        let Some(event) = figure.events.get(*index) else {
            continue;
        };
        let _ = write!(
            svg,
            r#"<a href="{}" class="event {} {precision} {}"><title>{}</title>"#,
            escape(&event.url),
            group.status.class(),
            if group.upcoming { "upcoming" } else { "past" },
            escape(&tooltip(event, group.when.precision))
        );
        if position == 0 {
            draw_mark(svg, group);
        }
        draw_label_lines(svg, &group.label, |line| {
            group.line_owners.get(line) == Some(&position)
        });
        svg.push_str("</a>");
    }
}

/// The group's mark on the axis (a dot for a day, a bar over a month or year) and its leader line.
fn draw_mark(svg: &mut String, group: &layout::PlacedGroup) {
    let mark = &group.mark;
    let day = group.when.precision == Precision::Day;
    let (right_of_mark, mark_y) = if day {
        (mark.x + 5.0, mark.y_start)
    } else {
        (
            mark.x + 3.5,
            (mark.y_start + 6.0).min((mark.y_start + mark.y_end) / 2.0),
        )
    };
    let _ = write!(svg, r#"<g fill="none" stroke="{RULE}">"#);
    leader(svg, right_of_mark, mark_y, &group.label);
    svg.push_str("</g>");
    let (fill, stroke) = group.status.paint();
    if day {
        let _ = write!(
            svg,
            r#"<circle class="mark" cx="{}" cy="{}" r="5" fill="{fill}" stroke="{stroke}" stroke-width="1.6"/>"#,
            num(mark.x),
            num(mark.y_start)
        );
    } else {
        let _ = write!(
            svg,
            r#"<rect class="mark" x="{}" y="{}" width="7" height="{}" rx="3.5" fill="{fill}" stroke="{stroke}" stroke-width="1.4"/>"#,
            num(mark.x - 3.5),
            num(mark.y_start),
            num((mark.y_end - mark.y_start).max(7.0))
        );
    }
}

/// A thin line from a mark (at `x`, `y`) to the middle of its label's first line; straight when the
/// label sits level with the mark.
fn leader(svg: &mut String, x: f64, y: f64, label: &Label) {
    let to_y = label.anchor_y();
    let end = label.x - 4.0;
    if (to_y - y).abs() < 0.5 {
        let _ = write!(svg, r#"<path d="M{} {}H{}"/>"#, num(x), num(y), num(end));
    } else {
        let bend = (x + 6.0).min(end);
        let _ = write!(
            svg,
            r#"<path d="M{} {y}H{}L{} {}H{}"/>"#,
            num(x),
            num(bend),
            num((end - 4.0).max(bend)),
            num(to_y),
            num(end),
            y = num(y)
        );
    }
}

fn draw_label(svg: &mut String, label: &Label) {
    draw_label_lines(svg, label, |_| true);
}

/// The lines of `label` that `wanted` picks (by line number), each at its own place in the label.
fn draw_label_lines(svg: &mut String, label: &Label, wanted: impl Fn(usize) -> bool) {
    if !(0..label.lines.len()).any(&wanted) {
        return;
    }
    svg.push_str("<text>");
    for (i, line) in label.lines.iter().enumerate() {
        if !wanted(i) {
            continue;
        }
        let baseline = label.top + ASCENT + i as f64 * LINE;
        for (j, run) in line.iter().enumerate() {
            let position = if j == 0 {
                format!(r#" x="{}" y="{}""#, num(label.x), num(baseline))
            } else {
                String::new()
            };
            let (text, paint) = match run {
                Run::Name(t) => (t, format!(r#" font-weight="600" fill="{TEXT}""#)),
                Run::Meta(t) => (t, format!(r#" fill="{MUTED}""#)),
                Run::Text(t) => (t, format!(r#" fill="{TEXT}""#)),
                Run::Reference(t) => (t, format!(r#" font-weight="600" fill="{ACCENT}""#)),
            };
            let _ = write!(
                svg,
                "<tspan{position}{paint}>{}</tspan>",
                escape(&leading_space_kept(text))
            );
        }
    }
    svg.push_str("</text>");
}

/// A run's leading space as a no-break space: SVG drops ordinary leading spaces of a tspan.
fn leading_space_kept(text: &str) -> String {
    match text.strip_prefix(' ') {
        Some(rest) => format!("\u{a0}{rest}"),
        None => text.to_string(),
    }
}

/// The event in words: country, what starts, status and date (saying when only the month or year is
/// known).
fn tooltip(event: &TimelineEvent, precision: Precision) -> String {
    let known = match precision {
        Precision::Day => "",
        Precision::Month => " (month known, not the day)",
        Precision::Year => " (year known, not the month)",
    };
    let label = event.label.trim();
    let what = if label.is_empty() {
        String::new()
    } else {
        format!(": {label}")
    };
    format!(
        "{}{what} — {}, {}{known}",
        event.country_name.trim(),
        event.status.trim(),
        event.date
    )
}

fn description(figure: &TimelineFigure, layout: &Layout) -> String {
    let mut out = figure.description.trim_end().to_string();
    if !out.is_empty() {
        out.push(' ');
    }
    let count = |upcoming: bool| {
        layout
            .groups
            .iter()
            .filter(|g| g.upcoming == upcoming)
            .map(|g| g.events.len())
            .sum::<usize>()
    };
    let (past, upcoming) = (count(false), count(true));
    match (layout.groups.first(), layout.groups.last()) {
        (Some(first), Some(last)) => {
            let _ = write!(
                out,
                "{} dated events from {} to {}: {past} on or before the reference date {}, {upcoming} after it.",
                figure.events.len(),
                first.when.year(),
                last.when.year(),
                figure.reference_date
            );
        }
        _ => out.push_str("No dated events."),
    }
    out
}

#[cfg(test)]
pub(super) mod tests;
