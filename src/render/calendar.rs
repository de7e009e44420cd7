//! The calendar of dated obligations: `/api/v1/calendar.json` (in `api.rs`), `/calendar.ics` and each
//! country's calendar (here); the `/calendar/` page is `pages/calendar.rs`.
//!
//! `/calendar.ics` is an RFC 5545 calendar a calendar app can subscribe to: one all-day event per dated
//! phase, whose UID is the phase id at the site's host, so an edited phase updates its event instead of
//! adding one. A month or a year stays coarse: a one-day event on its first day whose title says "(month
//! only)" or "(year only)", never an event stretched over the whole month or year. Every
//! property is derived from the data (DTSTAMP is the date the phase was checked, else the reference
//! date), so the file changes only when a phase does.

use crate::api_types::CalendarEntry;
use crate::derived::obligations::{calendar, country_calendar};
use crate::model::{base_url, reference_date};
use crate::output::Rendered;
use crate::parse::rules::site_rules;
use crate::parse::tables::PartialDate;

/// One iCalendar file, written line by line (RFC 5545): every TEXT value escaped ([`escape_text`]),
/// every content line folded at 75 octets ([`fold`]), CRLF line ends. A value can therefore never end
/// its line, and so never add a property or an event, whatever it holds.
#[derive(Default)]
struct Ics(String);

impl Ics {
    /// A content line whose value is written as it is (a date, a URI, a keyword made here).
    fn raw(&mut self, name: &str, value: &str) {
        fold(&mut self.0, &format!("{name}:{value}"));
    }

    /// A content line whose value is TEXT, escaped.
    fn text(&mut self, name: &str, value: &str) {
        self.raw(name, &escape_text(value));
    }
}

/// A TEXT value as RFC 5545 (3.3.11) writes it: a backslash, a semicolon and a comma escaped with a
/// backslash, a line break as `\n`; any other control character (none passes `check`) is left out, so
/// a value that slipped past the check still cannot add structure.
fn escape_text(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push_str("\\\\"),
            ';' => out.push_str("\\;"),
            ',' => out.push_str("\\,"),
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' | '\r' => out.push_str("\\n"),
            '\t' => out.push('\t'),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Appends `line` to `out` folded as RFC 5545 (3.1) asks: no line longer than 75 octets without its
/// CRLF, each continuation starting with one space (counted in its 75), never splitting a UTF-8
/// character.
fn fold(out: &mut String, line: &str) {
    const OCTETS: usize = 75;
    let mut rest = line;
    let mut limit = OCTETS;
    loop {
        if rest.len() <= limit {
            out.push_str(rest);
            out.push_str("\r\n");
            return;
        }
        let mut cut = limit;
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        out.push_str(&rest[..cut]);
        out.push_str("\r\n ");
        rest = &rest[cut..];
        // A continuation line's leading space is one of its octets.
        limit = OCTETS - 1;
    }
}

/// A day as an iCalendar DATE (`20270101`).
fn ics_date(date: jiff::civil::Date) -> String {
    format!("{:04}{:02}{:02}", date.year(), date.month(), date.day())
}

/// The host of the site, for the events' UIDs (`locref.example.org`).
fn host(base: &str) -> &str {
    let rest = base.split_once("://").map_or(base, |(_, rest)| rest);
    rest.split(['/', '?', '#']).next().unwrap_or(rest)
}

/// One all-day event of `entry`, its properties in the order of their names.
fn event(ics: &mut Ics, entry: &CalendarEntry, base: &str, reference: &str) -> Option<()> {
    let date = PartialDate::parse(&entry.date)?;
    let start = date.first_day()?;
    // DTEND of an all-day event is the day after its last day. A month or a year stays coarse: a one-day
    // event on its first day whose title says so, never an event a month or a year long.
    let end = start.tomorrow().ok()?;
    let coarse = match (date.month, date.day) {
        (_, Some(_)) => "",
        (Some(_), None) => " (month only)",
        (None, _) => " (year only)",
    };
    let checked = entry.last_checked.as_deref().unwrap_or(reference);
    let stamp: jiff::civil::Date = checked.parse().ok()?;
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
    let phase = entry.phase_label.as_ref().map(|p| format!(" ({p})"));
    ics.raw("BEGIN", "VEVENT");
    // One category: its commas are escaped, so it is never read as a list.
    ics.text("CATEGORIES", &entry.obligation_label);
    ics.text("DESCRIPTION", &description);
    ics.raw("DTEND;VALUE=DATE", &ics_date(end));
    ics.raw("DTSTAMP", &format!("{}T000000Z", ics_date(stamp)));
    ics.raw("DTSTART;VALUE=DATE", &ics_date(start));
    let confirmed = if entry.status == "planned" {
        "TENTATIVE"
    } else {
        "CONFIRMED"
    };
    ics.raw("STATUS", confirmed);
    ics.text(
        "SUMMARY",
        &format!(
            "{}: {}{} {status}{coarse}",
            entry.country_name,
            entry.obligation_label,
            phase.unwrap_or_default()
        ),
    );
    ics.raw("TRANSP", "TRANSPARENT");
    ics.text("UID", &format!("{}@{}", entry.id, host(base)));
    ics.raw(
        "URL",
        &escape_uri(&format!("{base}/{}/#{}", entry.country, entry.id)),
    );
    ics.raw("END", "VEVENT");
    Some(())
}

/// A URI value: written as it is (RFC 5545 does not escape a URI), but without the characters no URI
/// holds that would end its line.
fn escape_uri(uri: &str) -> String {
    uri.chars().filter(|c| !c.is_control()).collect()
}

pub fn calendar_ics(db: &dyn salsa::Database) -> Rendered {
    let site = &site_rules(db).value;
    let name = format!("{}: obligation dates", site.title);
    let description = format!(
        "Start dates of e-invoicing, real-time reporting, SAF-T and audit file obligations, as {} records them. {}",
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
        "Start dates of {country}'s e-invoicing, real-time reporting, SAF-T and audit file obligations, as {} records them. {}",
        site.title, site.informational_notice
    );
    // The country's own phases (in the same order as in `/calendar.ics`): an edit of another country's
    // phase does not render this file again.
    let key = crate::model::CountryKey::new(db, code.to_string());
    let entries = country_calendar(db, key);
    let mut rendered = ics(db, &name, &description, entries.iter());
    if entries.is_empty() {
        rendered = with_no_dated_phase(db, rendered, code, &country);
    }
    rendered
}

/// A country's calendar when none of its phases has a date: RFC 5545 asks a calendar for at least one
/// component, and an empty one says nothing to its subscriber. It holds one all-day event on the day
/// the country's obligations were last checked (the reference date if none was), saying that none has
/// a date it applies from as of that check, and linking the country page; when a phase gets a date,
/// that phase's event takes its place.
fn with_no_dated_phase(
    db: &dyn salsa::Database,
    rendered: Rendered,
    code: &str,
    country: &str,
) -> Rendered {
    let base = base_url(db);
    let key = crate::model::CountryKey::new(db, code.to_string());
    let checked = crate::model::country_obligations(db, key)
        .iter()
        .filter_map(|r| r.last_verified.clone())
        .max();
    let day = checked
        .clone()
        .unwrap_or_else(|| reference_date(db).clone());
    let Ok(start) = day.parse::<jiff::civil::Date>() else {
        return rendered;
    };
    let Ok(end) = start.tomorrow() else {
        return rendered;
    };
    let said = match &checked {
        Some(day) => format!("as of the check of {day}"),
        None => format!("on the reference date {day}"),
    };
    let mut event = Ics::default();
    event.raw("BEGIN", "VEVENT");
    event.text("CATEGORIES", "Obligations");
    event.text(
        "DESCRIPTION",
        &format!(
            "None of {country}'s recorded e-invoicing, real-time reporting, SAF-T and audit file \
             obligations has a date it applies from, {said}: the country page says what is known of \
             each. When one gets a date, its event replaces this one.\nInformational only; not tax or \
             legal advice."
        ),
    );
    event.raw("DTEND;VALUE=DATE", &ics_date(end));
    event.raw("DTSTAMP", &format!("{}T000000Z", ics_date(start)));
    event.raw("DTSTART;VALUE=DATE", &ics_date(start));
    event.text(
        "SUMMARY",
        &format!("{country}: no dated obligation recorded"),
    );
    event.raw("TRANSP", "TRANSPARENT");
    event.text("UID", &format!("{code}-no-dated-obligation@{}", host(base)));
    event.raw("URL", &escape_uri(&format!("{base}/{code}/")));
    event.raw("END", "VEVENT");
    let text = String::from_utf8_lossy(&rendered.bytes()).into_owned();
    let Some(at) = text.rfind("END:VCALENDAR\r\n") else {
        return rendered;
    };
    Rendered::new(format!("{}{}{}", &text[..at], event.0, &text[at..]).into_bytes())
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
    let mut ics = Ics::default();
    ics.raw("BEGIN", "VCALENDAR");
    ics.raw("VERSION", "2.0");
    ics.raw(
        "PRODID",
        "-//locref//Localization Reference Data Service//EN",
    );
    ics.raw("CALSCALE", "GREGORIAN");
    // NAME (RFC 7986) and X-WR-CALNAME (what most clients read), DESCRIPTION and X-WR-CALDESC: TEXT.
    ics.text("NAME", name);
    ics.text("X-WR-CALNAME", name);
    ics.text("DESCRIPTION", description);
    ics.text("X-WR-CALDESC", description);
    for entry in entries {
        event(&mut ics, entry, base, reference);
    }
    ics.raw("END", "VCALENDAR");
    Rendered::new(ics.0.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::{escape_text, fold, host};

    #[test]
    fn a_text_value_cannot_end_its_line() {
        assert_eq!(
            escape_text("Andorra\nEND:VEVENT\r\nBEGIN:VEVENT;a,b\\c\u{7}"),
            "Andorra\\nEND:VEVENT\\nBEGIN:VEVENT\\;a\\,b\\\\c"
        );
    }

    #[test]
    fn lines_are_folded_at_75_octets_between_characters() {
        for line in [
            "x".repeat(75),
            "x".repeat(76),
            "SUMMARY:".to_string() + &"é".repeat(100),
            "D:".to_string() + &"€".repeat(80) + "a",
            "x".repeat(300),
        ] {
            let mut out = String::new();
            fold(&mut out, &line);
            assert!(out.ends_with("\r\n"));
            let physical: Vec<&str> = out.trim_end_matches("\r\n").split("\r\n").collect();
            for (i, part) in physical.iter().enumerate() {
                assert!(part.len() <= 75, "{} octets: {part:?}", part.len());
                assert_eq!(i > 0, part.starts_with(' '), "{part:?}");
            }
            // Unfolding gives the line back.
            assert_eq!(out.trim_end_matches("\r\n").replace("\r\n ", ""), line);
        }
        let mut out = String::new();
        fold(&mut out, &"x".repeat(75));
        assert_eq!(out.len(), 77, "a line of 75 octets is not folded");
    }

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
