//! The calendar of dated obligations: `/api/v1/calendar.json` (in `api.rs`), `/calendar.ics` (here) and
//! the `/calendar/` page (its context, here).
//!
//! `/calendar.ics` is an RFC 5545 calendar a calendar app can subscribe to: one all-day event per dated
//! phase, whose UID is the phase id at the site's host, so an edited phase updates its event instead of
//! adding one. A month or a year stays coarse: a one-day event on its first day whose title says "(month
//! only)" or "(year only)", never an event stretched over the whole month or year. Every
//! property is derived from the data (DTSTAMP is the date the phase was checked, else the reference
//! date), so the file changes only when a phase does.

use chrono::{NaiveDate, TimeZone, Utc};
use icalendar::{Calendar, Component, Event, EventLike, EventStatus};
use serde::Serialize;
use serde_json::Value as Json;

use super::Rendered;
use super::pages::shared::{SiteContext, site_context, to_json};
use crate::derive::obligations::{calendar, country_calendar};
use crate::model::{base_url, reference_date};
use crate::parse::rules::site_rules;
use crate::parse::tables::PartialDate;
use crate::resources::CalendarEntry;

fn naive(date: jiff::civil::Date) -> Option<NaiveDate> {
    NaiveDate::from_ymd_opt(date.year().into(), date.month() as u32, date.day() as u32)
}

/// The host of the site, for the events' UIDs (`locref.example.org`).
fn host(base: &str) -> &str {
    let rest = base.split_once("://").map_or(base, |(_, rest)| rest);
    rest.split(['/', '?', '#']).next().unwrap_or(rest)
}

fn event(entry: &CalendarEntry, base: &str, reference: &str) -> Option<Event> {
    let date = PartialDate::parse(&entry.date)?;
    let start = naive(date.first_day()?)?;
    // DTEND of an all-day event is the day after its last day. A month or a year stays coarse: a one-day
    // event on its first day whose title says so, never an event a month or a year long.
    let end = start.succ_opt()?;
    let coarse = match (date.month, date.day) {
        (_, Some(_)) => "",
        (Some(_), None) => " (month only)",
        (None, _) => " (year only)",
    };
    let checked = entry.last_checked.as_deref().unwrap_or(reference);
    let stamp = NaiveDate::parse_from_str(checked, "%Y-%m-%d")
        .ok()?
        .and_hms_opt(0, 0, 0)?;
    let precision = match entry.precision.as_str() {
        "day" => String::new(),
        other => format!(" (the source gives the {other}: {})", entry.date),
    };
    let status = entry.status.replace('-', " ");
    let mut description = format!(
        "{}: {status} from {}{precision}.",
        entry.obligation_label, entry.date
    );
    if !entry.scope.is_empty() {
        description.push_str(&format!("\n{}", entry.scope));
    }
    description.push_str(&format!("\nVerification: {:?}", entry.verification).to_lowercase());
    if let Some(checked) = &entry.last_checked {
        description.push_str(&format!(", checked {checked}"));
    }
    for url in &entry.source_urls {
        description.push_str(&format!("\nSource: {url}"));
    }
    description.push_str("\nInformational only; not tax or legal advice.");
    let phase = entry
        .id
        .rsplit_once(&format!("{}-", entry.obligation))
        .map(|(_, p)| p);
    let phase = phase
        .filter(|p| *p != "main")
        .map(|p| format!(" ({})", p.replace('-', " ")));
    let mut event = Event::new();
    event
        .uid(&format!("{}@{}", entry.id, host(base)))
        .timestamp(Utc.from_utc_datetime(&stamp))
        .summary(&format!(
            "{}: {}{} {status}{coarse}",
            entry.country_name,
            entry.obligation_label,
            phase.unwrap_or_default()
        ))
        .description(&description)
        .starts(start)
        .ends(end)
        .url(&format!("{base}/{}/#{}", entry.country, entry.id))
        .status(if entry.status == "planned" {
            EventStatus::Tentative
        } else {
            EventStatus::Confirmed
        })
        .add_property("TRANSP", "TRANSPARENT")
        .add_property("CATEGORIES", &entry.obligation_label);
    Some(event.done())
}

pub fn calendar_ics(db: &dyn salsa::Database) -> Rendered {
    let site = &site_rules(db).value;
    let name = format!("{}: obligation dates", site.title);
    let description = format!(
        "Start dates of e-invoicing, real-time reporting, SAF-T and audit-file obligations, as {} records them. {}",
        site.title, site.informational_notice
    );
    ics(db, &name, &description, calendar(db).iter())
}

/// Site-relative path of a country's calendar.
pub(crate) fn country_calendar_path(code: &str) -> String {
    format!("/{code}/calendar.ics")
}

/// `/{code}/calendar.ics`: one country's dated phases, as `/calendar.ics` has them.
pub(crate) fn country_calendar_ics(db: &dyn salsa::Database, code: &str) -> Rendered {
    let site = &site_rules(db).value;
    let country =
        crate::model::country_info(db, crate::model::CountryKey::new(db, code.to_string()))
            .as_ref()
            .map_or_else(|| code.to_string(), |c| c.name.clone());
    let name = format!("{}: {country}: obligation dates", site.title);
    let description = format!(
        "Start dates of {country}'s e-invoicing, real-time reporting, SAF-T and audit-file obligations, as {} records them. {}",
        site.title, site.informational_notice
    );
    // The country's own phases (in the same order as in `/calendar.ics`): an edit of another country's
    // phase does not render this file again.
    let key = crate::model::CountryKey::new(db, code.to_string());
    ics(db, &name, &description, country_calendar(db, key).iter())
}

/// How many dated phases a country's calendar holds.
pub(crate) fn country_calendar_count(db: &dyn salsa::Database, code: &str) -> usize {
    country_calendar(db, crate::model::CountryKey::new(db, code.to_string())).len()
}

/// A calendar of `entries`: one PRODID, one all-day event per phase (see the module documentation).
fn ics<'a>(
    db: &dyn salsa::Database,
    name: &str,
    description: &str,
    entries: impl Iterator<Item = &'a CalendarEntry>,
) -> Rendered {
    let base = base_url(db);
    let reference = reference_date(db);
    // `Calendar::new()` brings its own PRODID; RFC 5545 allows one, so the calendar starts empty and
    // names its own.
    let mut ics = Calendar::empty();
    ics.append_property(("VERSION", "2.0"));
    ics.append_property((
        "PRODID",
        "-//locref//Localization Reference Data Service//EN",
    ));
    ics.append_property(("CALSCALE", "GREGORIAN"));
    ics.name(name);
    ics.description(description);
    for entry in entries {
        if let Some(event) = event(entry, base, reference) {
            ics.push(event);
        }
    }
    Rendered::new(ics.done().to_string().into_bytes())
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
pub struct CalendarContext<'a> {
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
pub fn calendar_context(db: &dyn salsa::Database) -> Json {
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
        timeline: super::page_figures::calendar_timeline(db).as_ref().ok(),
        reference_date: reference.to_string(),
        today: today.to_string(),
        horizon: horizon.to_string(),
        next,
        later,
        past,
    })
}

#[cfg(test)]
mod tests {
    use super::host;

    #[test]
    fn the_uid_host_is_the_sites_host() {
        assert_eq!(host("https://locref.example.org"), "locref.example.org");
        assert_eq!(host("http://127.0.0.1:8000"), "127.0.0.1:8000");
        assert_eq!(
            host("https://example.github.io/locref"),
            "example.github.io"
        );
    }
}
