//! The `/calendar/` page (its context; `/calendar.ics` is `render/calendar.rs`), and the day of the build
//! from which the pages that look ahead count.

use serde::Serialize;
use serde_json::Value as Json;

use super::context::{PageSpec, page};
use super::shared::{SiteContext, site_context, to_json};
use crate::api_types::CalendarEntry;
use crate::derived::obligations::calendar;
use crate::model::reference_date;
use crate::parse::tables::PartialDate;

/// The calendar page: one, rendered whole.
pub(crate) fn spec() -> PageSpec {
    page("calendar", |db, _| calendar_context(db))
}
/// The day of the build (`SOURCE_DATE_EPOCH`'s day when it is set), from which the pages that look ahead
/// (the calendar, the readiness board) count; the reference date when the day cannot be read.
pub(crate) fn build_day(db: &dyn salsa::Database) -> jiff::civil::Date {
    crate::db::BuildOptions::get(db)
        .build_date(db)
        .parse()
        .unwrap_or_else(|_| reference_date(db).parse().unwrap_or_default())
}

/// The `/calendar/` page: the dated phases of the next twelve months from the day of the build first, then
/// the later ones, then the past ones (newest first), each with its source and verification. The window
/// starts at the build's day, not the reference date: a reader looks ahead from today.
#[derive(Serialize)]
pub(super) struct CalendarContext<'a> {
    site: &'a SiteContext,
    /// A timeline that cannot be drawn is a build error (page_figures::figure_errors).
    timeline: Option<&'a String>,
    reference_date: String,
    today: String,
    horizon: String,
    next: Vec<&'a CalendarEntry>,
    later: Vec<&'a CalendarEntry>,
    past: Vec<&'a CalendarEntry>,
}

/// The `/calendar/` page's context (see [`CalendarContext`]).
pub(super) fn calendar_context(db: &dyn salsa::Database) -> Json {
    let reference: jiff::civil::Date = reference_date(db).parse().unwrap_or_default();
    let today = build_day(db);
    let horizon = today
        .checked_add(jiff::Span::new().years(1))
        .unwrap_or(today);
    let (mut next, mut later, mut past) = (Vec::new(), Vec::new(), Vec::new());
    for entry in calendar(db) {
        let Some(date) = PartialDate::parse(&entry.date) else {
            continue;
        };
        match (date.first_day(), date.last_day()) {
            (_, Some(last)) if last < today => past.push(entry),
            (Some(first), _) if first > horizon => later.push(entry),
            _ => next.push(entry),
        }
    }
    past.reverse();
    to_json(&CalendarContext {
        site: site_context(db),
        timeline: crate::render::page_figures::calendar_timeline(db)
            .as_ref()
            .ok(),
        reference_date: reference.to_string(),
        today: today.to_string(),
        horizon: horizon.to_string(),
        next,
        later,
        past,
    })
}
