//! The ERP readiness board (`/readiness/`) and the "Upcoming obligations" section of each ERP page: every
//! obligation phase that starts in the next 24 months, with each ERP's e-invoicing support in that country
//! as the matrix records it (established, roadmap only, not supported, unknown).
//!
//! The window starts at the day of the build, as the calendar page's does (`calendar::build_day`): a
//! reader looks ahead from today, and `SOURCE_DATE_EPOCH` pins that day for a reproducible build. A phase
//! is in the window when its date (a day, or a whole month or year as its source gives it) has not wholly
//! passed and begins no later than 24 months from the build's day.

use serde::Serialize;
use serde_json::Value as Json;

use super::shared::*;
use super::{PageSpec, page};
use crate::derive::obligations::calendar;
use crate::derive::support_established;
use crate::model::{CountryKey, country_matrix, erps};
use crate::parse::tables::{MatrixRow, PartialDate};
use crate::render::calendar::build_day;
use crate::resources::CalendarEntry;

/// How far ahead the board looks.
const MONTHS_AHEAD: i8 = 24;

/// The build's day and the last day of the board's window.
fn window(db: &dyn salsa::Database) -> (jiff::civil::Date, jiff::civil::Date) {
    let today = build_day(db);
    let horizon = today
        .checked_add(jiff::Span::new().months(MONTHS_AHEAD))
        .unwrap_or(today);
    (today, horizon)
}

/// The dated phases in the board's window, in calendar order.
fn upcoming(db: &dyn salsa::Database) -> Vec<&CalendarEntry> {
    let (today, horizon) = window(db);
    calendar(db)
        .iter()
        .filter(|entry| {
            let Some(date) = PartialDate::parse(&entry.date) else {
                return false;
            };
            match (date.first_day(), date.last_day()) {
                (Some(first), Some(last)) => last >= today && first <= horizon,
                _ => false,
            }
        })
        .collect()
}

/// Which of the board's four groups a support type falls in.
fn group_of(support: &str) -> &'static str {
    if support_established(support) {
        "established"
    } else if support == "roadmap" {
        "roadmap"
    } else if support == "not supported" {
        "none"
    } else {
        "unknown"
    }
}

/// The board's groups, in the order of its columns, with their headings.
const GROUPS: [(&str, &str); 4] = [
    ("established", "Established"),
    ("roadmap", "Roadmap only"),
    ("none", "Not supported"),
    ("unknown", "Unknown"),
];

/// One ERP's support in a phase's country, as the matrix records it.
#[derive(Serialize)]
struct ErpAnswer<'a> {
    erp: &'a str,
    erp_name: &'a str,
    /// `established`, `roadmap`, `none` or `unknown`.
    group: &'static str,
    /// The matrix's support type (`native`, `roadmap`, …; `unknown/unverified` where no row is
    /// recorded), its short label and class as the matrix shows them.
    support: &'a str,
    short: &'a str,
    class: &'static str,
    /// Whether the matrix has a row for this cell (an unrecorded cell is unknown).
    recorded: bool,
    verification: &'static str,
    last_checked: Option<&'a str>,
    source_urls: &'a [String],
}

/// One phase of the board.
#[derive(Serialize)]
struct PhaseRow<'a> {
    /// The phase id (`de-b2b-e-invoicing-issue-large`): the row's anchor, as on the country page.
    id: &'a str,
    country: &'a str,
    country_name: &'a str,
    obligation_label: &'a str,
    /// The phase's name in words (`issue large`), none for a phase named `main`.
    phase: Option<String>,
    scope: &'a str,
    status: String,
    date: &'a str,
    /// `month` or `year` when the source gives no day.
    coarse: Option<&'a str>,
}

/// A phase of the board with every ERP's answer, by group.
#[derive(Serialize)]
struct BoardRow<'a> {
    #[serde(flatten)]
    phase: PhaseRow<'a>,
    groups: Vec<Group<'a>>,
}

/// One group of a board row: its ERPs, in the register's order.
#[derive(Serialize)]
struct Group<'a> {
    key: &'static str,
    label: &'static str,
    answers: Vec<ErpAnswer<'a>>,
}

/// How many phase–ERP answers fall in one group, over the whole board.
#[derive(Serialize)]
struct GroupCount {
    key: &'static str,
    label: &'static str,
    count: usize,
}

/// The readiness board's context.
#[derive(Serialize)]
pub struct ReadinessContext<'a> {
    site: &'a SiteContext,
    today: String,
    horizon: String,
    months: i8,
    erps: usize,
    rows: Vec<BoardRow<'a>>,
    /// How many countries the rows are in.
    countries: usize,
    /// How many phase–ERP answers (rows × ERPs) fall in each group.
    counts: Vec<GroupCount>,
    answers: usize,
}

fn phase_row(entry: &CalendarEntry) -> PhaseRow<'_> {
    let phase = entry
        .id
        .rsplit_once(&format!("{}-", entry.obligation))
        .map(|(_, p)| p)
        .filter(|p| *p != "main")
        .map(|p| p.replace('-', " "));
    PhaseRow {
        id: &entry.id,
        country: &entry.country,
        country_name: &entry.country_name,
        obligation_label: &entry.obligation_label,
        phase,
        scope: &entry.scope,
        status: entry.status.replace('-', " "),
        date: &entry.date,
        coarse: match entry.precision.as_str() {
            "day" => None,
            other => Some(other),
        },
    }
}

/// One ERP's answer in a country, from the country's matrix rows.
fn answer<'a>(
    erp: &'a crate::parse::json_sources::ErpReg,
    rows: &'a [std::sync::Arc<MatrixRow>],
) -> ErpAnswer<'a> {
    answer_of(erp, rows.iter().find(|r| r.erp == erp.id))
}

/// One ERP's answer from its matrix row in a country, if the matrix has one.
fn answer_of<'a>(
    erp: &'a crate::parse::json_sources::ErpReg,
    row: Option<&'a std::sync::Arc<MatrixRow>>,
) -> ErpAnswer<'a> {
    let support = row.map_or("unknown/unverified", |r| r.support_type.as_str());
    let (short, class) = support_style(support);
    ErpAnswer {
        erp: &erp.id,
        erp_name: &erp.name,
        group: group_of(support),
        support,
        short,
        class,
        recorded: row.is_some(),
        verification: row.map_or("unverified", |r| r.verification.as_str()),
        last_checked: row.and_then(|r| r.last_verified.as_deref()),
        source_urls: row.map_or(&[][..], |r| &r.erp_source[..]),
    }
}

/// The readiness board's context (see [`ReadinessContext`]).
pub fn readiness_context(db: &dyn salsa::Database) -> Json {
    let (today, horizon) = window(db);
    let erp_list = erps(db);
    let entries = upcoming(db);
    let rows: Vec<BoardRow> = entries
        .iter()
        .map(|entry| {
            let matrix = country_matrix(db, CountryKey::new(db, entry.country.clone()));
            let answers: Vec<ErpAnswer> = erp_list.iter().map(|e| answer(e, matrix)).collect();
            let mut groups: Vec<Group> = GROUPS
                .iter()
                .map(|&(key, label)| Group {
                    key,
                    label,
                    answers: Vec::new(),
                })
                .collect();
            for a in answers {
                if let Some(g) = groups.iter_mut().find(|g| g.key == a.group) {
                    g.answers.push(a);
                }
            }
            BoardRow {
                phase: phase_row(entry),
                groups,
            }
        })
        .collect();
    let counts = GROUPS
        .iter()
        .enumerate()
        .map(|(i, &(key, label))| GroupCount {
            key,
            label,
            count: rows.iter().map(|r| r.groups[i].answers.len()).sum(),
        })
        .collect();
    let mut countries: Vec<&str> = entries.iter().map(|e| e.country.as_str()).collect();
    countries.sort_unstable();
    countries.dedup();
    to_json(&ReadinessContext {
        site: site_context(db),
        today: today.to_string(),
        horizon: horizon.to_string(),
        months: MONTHS_AHEAD,
        erps: erp_list.len(),
        answers: rows.len() * erp_list.len(),
        countries: countries.len(),
        rows,
        counts,
    })
}

/// A phase of an ERP page's "Upcoming obligations", with that ERP's answer.
#[derive(Serialize)]
pub(crate) struct UpcomingRow<'a> {
    #[serde(flatten)]
    phase: PhaseRow<'a>,
    answer: ErpAnswer<'a>,
}

/// An ERP page's "Upcoming obligations": the board's phases with that ERP's answer (empty for an ERP the
/// register does not hold).
#[derive(Serialize)]
pub(crate) struct Upcoming<'a> {
    today: String,
    horizon: String,
    months: i8,
    rows: Vec<UpcomingRow<'a>>,
}

/// See [`Upcoming`].
pub(crate) fn erp_upcoming<'db>(db: &'db dyn salsa::Database, erp: &str) -> Upcoming<'db> {
    let (today, horizon) = window(db);
    let register = erps(db).iter().find(|e| e.id == erp);
    // The ERP's own matrix rows: an edit of another ERP's cell does not make this page's context again.
    let matrix = crate::model::erp_matrix(db, crate::model::ErpKey::new(db, erp.to_string()));
    let rows = register
        .map(|erp| {
            upcoming(db)
                .into_iter()
                .map(|entry| UpcomingRow {
                    phase: phase_row(entry),
                    answer: answer_of(erp, matrix.iter().find(|r| r.country == entry.country)),
                })
                .collect()
        })
        .unwrap_or_default();
    Upcoming {
        today: today.to_string(),
        horizon: horizon.to_string(),
        months: MONTHS_AHEAD,
        rows,
    }
}

/// How the readiness board is made.
pub(super) fn spec() -> PageSpec {
    page("readiness", |db, _| readiness_context(db))
}

#[cfg(test)]
mod tests {
    use super::group_of;
    use crate::derive::{ESTABLISHED_SUPPORT, UNESTABLISHED_SUPPORT};

    #[test]
    fn every_support_type_falls_in_one_group() {
        for s in ESTABLISHED_SUPPORT {
            assert_eq!(group_of(s), "established");
        }
        assert_eq!(
            UNESTABLISHED_SUPPORT.map(group_of),
            ["roadmap", "none", "unknown"]
        );
    }
}
