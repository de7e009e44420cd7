//! The ERP readiness board (`/readiness/`) and the "Upcoming obligations" section of each ERP page: every
//! obligation phase that starts in the next 24 months or came into force in the last 12, with each ERP's
//! support for that phase's own obligation, from the table that records it:
//!
//! - an e-invoicing phase (B2B, B2G): the ERP's e-invoicing cell of the matrix in that country;
//! - a SAF-T phase: the ERP's column of the reporting table's SAF-T row that is the file of that phase
//!   (`phases`; a row naming none is the file of every phase of its country), as `/saf-t/` shows it;
//! - any other obligation (real-time reporting, e-reporting, audit files): no table records ERP support
//!   for it, and the board says so instead of showing another obligation's answers.
//!
//! Each answer is grouped by the one definition of "established" ([`crate::derived::established`]): an
//! unverified answer is an open question and falls under "unknown", shown with its grade.
//!
//! The window is the build's day, as the calendar page's (`calendar::build_day`): a reader looks ahead
//! from today, and `SOURCE_DATE_EPOCH` pins that day for a reproducible build. A phase is in the window
//! when its date (a day, or a whole month or year as its source gives it) begins no later than 24 months
//! from the build's day and ends no earlier than 12 months before it.

use serde::Serialize;
use serde_json::Value as Json;

use super::calendar::build_day;
use super::context::{PageSpec, page};
use super::shared::*;
use crate::api_types::{CalendarEntry, Verification};
use crate::derived::established;
use crate::derived::obligations::calendar;
use crate::model::{
    CountryKey, NumberedReport, ReportCell, country_matrix, country_reporting, erps,
};
use crate::parse::json_sources::ErpReg;
use crate::parse::tables::{MatrixRow, PartialDate, PhaseStatus};

/// How far ahead the board looks.
const MONTHS_AHEAD: i8 = 24;
/// How long a phase already in force stays on the board: a reader asking "is this ERP ready?" asks it
/// of the mandate that has just started too.
const MONTHS_BACK: i8 = 12;

/// The board's window: the build's day, its first day (12 months back) and its last (24 months ahead).
struct Window {
    today: jiff::civil::Date,
    since: jiff::civil::Date,
    horizon: jiff::civil::Date,
}

fn window(db: &dyn salsa::Database) -> Window {
    let today = build_day(db);
    let shifted = |months: i8| {
        today
            .checked_add(jiff::Span::new().months(months))
            .unwrap_or(today)
    };
    Window {
        today,
        since: shifted(-MONTHS_BACK),
        horizon: shifted(MONTHS_AHEAD),
    }
}

/// The dated phases in the board's window, in calendar order.
fn upcoming(db: &dyn salsa::Database) -> Vec<&CalendarEntry> {
    let w = window(db);
    calendar(db)
        .iter()
        .filter(|entry| {
            let Some(date) = PartialDate::parse(&entry.date) else {
                return false;
            };
            match (date.first_day(), date.last_day()) {
                (Some(first), Some(last)) => last >= w.since && first <= w.horizon,
                _ => false,
            }
        })
        .collect()
}

/// Where the ERP support of one phase is recorded: the table of the phase's own obligation.
enum SupportTable<'a> {
    /// An e-invoicing phase: the country's matrix cells.
    Matrix,
    /// A SAF-T phase: the country's SAF-T files of the reporting table that are files of this phase.
    Saft(Vec<&'a NumberedReport>),
    /// No table records ERP support for this obligation (or this country's file of it).
    NotRecorded(String),
}

impl SupportTable<'_> {
    fn key(&self) -> &'static str {
        match self {
            SupportTable::Matrix => "matrix",
            SupportTable::Saft(_) => "saf-t",
            SupportTable::NotRecorded(_) => "none",
        }
    }
}

/// The phase's name as its id gives it (`issue-large` of `pl-b2b-e-invoicing-issue-large`).
fn phase_name(entry: &CalendarEntry) -> &str {
    entry
        .id
        .strip_prefix(&format!("{}-{}-", entry.country, entry.obligation))
        .unwrap_or("main")
}

/// Which table answers for `entry`'s obligation (see the module's documentation).
fn support_table<'db>(db: &'db dyn salsa::Database, entry: &CalendarEntry) -> SupportTable<'db> {
    match entry.obligation.as_str() {
        "b2b-e-invoicing" | "b2g-e-invoicing" => SupportTable::Matrix,
        "saf-t" => {
            let phase = phase_name(entry);
            let files: Vec<&NumberedReport> =
                country_reporting(db, CountryKey::new(db, entry.country.clone()))
                    .iter()
                    .filter(|r| r.row.topic == "saf-t")
                    .filter(|r| r.row.phases.is_empty() || r.row.phases.iter().any(|p| p == phase))
                    .collect();
            if files.is_empty() {
                SupportTable::NotRecorded(format!(
                    "The reporting table has no SAF-T file of {} for this phase: no ERP's support for it \
                     has been recorded.",
                    entry.country_name
                ))
            } else {
                SupportTable::Saft(files)
            }
        }
        _ => SupportTable::NotRecorded(format!(
            "No table records ERP support for {} (the e-invoicing matrix and the SAF-T files answer \
             other questions).",
            entry.obligation_label.to_lowercase()
        )),
    }
}

/// Which of the board's four groups an answer falls in: established by [`established`]; an
/// unverified answer is an open question, whatever it says.
fn group_of(support: &str, verification: Verification) -> &'static str {
    if established(support, verification) {
        "established"
    } else if !verification.is_verified() {
        "unknown"
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

/// One ERP's answer for a phase, from the table of the phase's obligation.
#[derive(Serialize)]
struct ErpAnswer<'a> {
    erp: &'a str,
    erp_name: &'a str,
    /// `established`, `roadmap`, `none` or `unknown`.
    group: &'static str,
    /// The answer as its table records it (`native`, `roadmap`, …; `unknown/unverified` where no row is
    /// recorded), its short label and class as the matrix shows them.
    support: &'a str,
    short: &'a str,
    class: &'static str,
    /// Whether the table holds an answer other than unknown for this cell.
    answered: bool,
    /// For a SAF-T phase with several files, the file this answer is for.
    report: Option<&'a str>,
    verification: &'static str,
    last_checked: Option<&'a str>,
    source_urls: Vec<&'a str>,
    /// The sentence of its first source that settles the answer, where one was read.
    quote: Option<&'a str>,
}

/// One phase of the board.
#[derive(Serialize)]
struct PhaseRow<'a> {
    /// The phase id (`de-b2b-e-invoicing-issue-large`): the row's anchor, as on the country page.
    id: &'a str,
    country: &'a str,
    country_name: &'a str,
    obligation_label: &'a str,
    /// The phase's reader label (rules/phases.toml), none for a phase named `main`.
    phase: Option<String>,
    scope: &'a str,
    status: String,
    date: &'a str,
    /// `month` or `year` when the source gives no day.
    coarse: Option<&'a str>,
    /// The words before the date: "in force since" a phase its source records as in force that began on or
    /// before the build's day, "applies since" one that began but that its source records only as enacted
    /// or planned (the board says what the data does, as the country page's "Enacted; applies since"),
    /// "starts" one that begins after it.
    when: &'static str,
    /// `matrix`, `saf-t` or `none`: the table the answers come from.
    support_from: &'static str,
    /// Where `support_from` is `none`: what was looked at, in words.
    not_recorded: Option<String>,
}

/// A phase of the board with every ERP's answer, by group.
#[derive(Serialize)]
struct BoardRow<'a> {
    #[serde(flatten)]
    phase: PhaseRow<'a>,
    /// Empty where no table records ERP support for the phase.
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

/// A value of one of the board's filters.
#[derive(Serialize)]
struct Choice<'a> {
    id: &'a str,
    name: &'a str,
}

/// The readiness board's context.
#[derive(Serialize)]
pub(crate) struct ReadinessContext<'a> {
    site: &'a SiteContext,
    today: String,
    since: String,
    horizon: String,
    months: i8,
    months_back: i8,
    erps: usize,
    rows: Vec<BoardRow<'a>>,
    /// How many countries the rows are in.
    countries: usize,
    /// How many rows have their ERP support recorded in a table, and how many not.
    recorded_rows: usize,
    unrecorded_rows: usize,
    /// How many phase–ERP answers fall in each group, in the order of the board's columns (whose
    /// headings they give); they add up to `answers`.
    counts: Vec<GroupCount>,
    answers: usize,
    /// The filters' values: the ERPs of the register, the countries of the rows (by name).
    erp_choices: Vec<Choice<'a>>,
    country_choices: Vec<Choice<'a>>,
}

fn phase_row<'a>(
    entry: &'a CalendarEntry,
    table: &SupportTable,
    today: jiff::civil::Date,
) -> PhaseRow<'a> {
    let phase = entry.phase_label.clone();
    let started = PartialDate::parse(&entry.date)
        .and_then(|d| d.first_day())
        .is_some_and(|first| first <= today);
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
        when: match (started, PhaseStatus::parse(&entry.status)) {
            (false, _) => "starts",
            (true, Some(PhaseStatus::InForce)) => "in force since",
            (true, _) => "applies since",
        },
        support_from: table.key(),
        not_recorded: match table {
            SupportTable::NotRecorded(why) => Some(why.clone()),
            _ => None,
        },
    }
}

/// One ERP's answer from its matrix row in a country, if the matrix has one.
fn matrix_answer<'a>(erp: &'a ErpReg, row: Option<&'a std::sync::Arc<MatrixRow>>) -> ErpAnswer<'a> {
    let support = row.map_or("unknown/unverified", |r| r.support_type.as_str());
    let verification = row.map_or(Verification::Unverified, |r| r.verification);
    let (short, class) = support_style(support);
    ErpAnswer {
        erp: &erp.id,
        erp_name: &erp.name,
        group: group_of(support, verification),
        support,
        short,
        class,
        answered: support != "unknown/unverified",
        report: None,
        verification: verification.as_str(),
        last_checked: row.and_then(|r| r.last_verified.as_deref()),
        source_urls: row.map_or_else(Vec::new, |r| {
            r.erp_source.iter().map(String::as_str).collect()
        }),
        quote: row.map(|r| r.quote.as_str()).filter(|q| !q.is_empty()),
    }
}

/// One ERP's answer from a SAF-T file of the reporting table: its cell of the row, with the cell's own
/// grade, sources and quote (`tables/reporting_support.csv`), as `/saf-t/` shows it.
fn saft_answer<'a>(erp: &'a ErpReg, file: &'a NumberedReport, several: bool) -> ErpAnswer<'a> {
    let cell = file.cells.iter().find(|c| c.erp == erp.id);
    let support = cell.map_or("unknown", |c| c.support.as_str());
    let answered = cell.is_some_and(ReportCell::answered);
    let verification = cell.map_or(Verification::Unverified, ReportCell::verification);
    let (short, class) = support_style(if answered {
        support
    } else {
        "unknown/unverified"
    });
    ErpAnswer {
        erp: &erp.id,
        erp_name: &erp.name,
        group: group_of(support, verification),
        support,
        short,
        class,
        answered,
        report: several.then_some(file.row.report_en.as_str()),
        verification: verification.as_str(),
        last_checked: cell.and_then(ReportCell::last_verified),
        source_urls: cell.map_or_else(Vec::new, |c| {
            c.source().iter().map(String::as_str).collect()
        }),
        quote: cell.map(ReportCell::quote).filter(|q| !q.is_empty()),
    }
}

/// Every answer of one ERP for a phase: one from the matrix, one per SAF-T file, none where unrecorded.
fn erp_answers<'a>(
    erp: &'a ErpReg,
    table: &SupportTable<'a>,
    matrix_row: impl FnOnce() -> Option<&'a std::sync::Arc<MatrixRow>>,
) -> Vec<ErpAnswer<'a>> {
    match table {
        SupportTable::Matrix => vec![matrix_answer(erp, matrix_row())],
        SupportTable::Saft(files) => files
            .iter()
            .map(|f| saft_answer(erp, f, files.len() > 1))
            .collect(),
        SupportTable::NotRecorded(_) => Vec::new(),
    }
}

/// The readiness board's context (see [`ReadinessContext`]).
pub(crate) fn readiness_context(db: &dyn salsa::Database) -> Json {
    let w = window(db);
    let erp_list = erps(db);
    let entries = upcoming(db);
    let rows: Vec<BoardRow> = entries
        .iter()
        .map(|entry| {
            let table = support_table(db, entry);
            let matrix = country_matrix(db, CountryKey::new(db, entry.country.clone()));
            let groups = if matches!(table, SupportTable::NotRecorded(_)) {
                Vec::new()
            } else {
                let mut groups: Vec<Group> = GROUPS
                    .iter()
                    .map(|&(key, label)| Group {
                        key,
                        label,
                        answers: Vec::new(),
                    })
                    .collect();
                for erp in erp_list {
                    for a in erp_answers(erp, &table, || matrix.iter().find(|r| r.erp == erp.id)) {
                        if let Some(g) = groups.iter_mut().find(|g| g.key == a.group) {
                            g.answers.push(a);
                        }
                    }
                }
                groups
            };
            BoardRow {
                phase: phase_row(entry, &table, w.today),
                groups,
            }
        })
        .collect();
    let counts: Vec<GroupCount> = GROUPS
        .iter()
        .enumerate()
        .map(|(i, &(key, label))| GroupCount {
            key,
            label,
            count: rows
                .iter()
                .filter_map(|r| r.groups.get(i))
                .map(|g| g.answers.len())
                .sum(),
        })
        .collect();
    let mut countries: Vec<(&str, &str)> = entries
        .iter()
        .map(|e| (e.country_name.as_str(), e.country.as_str()))
        .collect();
    countries.sort_unstable();
    countries.dedup();
    let recorded_rows = rows.iter().filter(|r| !r.groups.is_empty()).count();
    to_json(&ReadinessContext {
        site: site_context(db),
        today: w.today.to_string(),
        since: w.since.to_string(),
        horizon: w.horizon.to_string(),
        months: MONTHS_AHEAD,
        months_back: MONTHS_BACK,
        erps: erp_list.len(),
        answers: counts.iter().map(|c| c.count).sum(),
        countries: countries.len(),
        recorded_rows,
        unrecorded_rows: rows.len() - recorded_rows,
        erp_choices: erp_list
            .iter()
            .map(|e| Choice {
                id: &e.id,
                name: &e.name,
            })
            .collect(),
        country_choices: countries
            .iter()
            .map(|&(name, id)| Choice { id, name })
            .collect(),
        rows,
        counts,
    })
}

/// A phase of an ERP page's "Upcoming obligations", with that ERP's answers.
#[derive(Serialize)]
pub(crate) struct UpcomingRow<'a> {
    #[serde(flatten)]
    phase: PhaseRow<'a>,
    /// Empty where no table records ERP support for the phase (`phase.not_recorded` says why).
    answers: Vec<ErpAnswer<'a>>,
}

/// An ERP page's "Upcoming obligations": the board's phases with that ERP's answers (empty for an ERP
/// the register does not hold).
#[derive(Serialize)]
pub(crate) struct Upcoming<'a> {
    today: String,
    since: String,
    horizon: String,
    months: i8,
    months_back: i8,
    rows: Vec<UpcomingRow<'a>>,
}

/// See [`Upcoming`].
pub(crate) fn erp_upcoming<'db>(db: &'db dyn salsa::Database, erp: &str) -> Upcoming<'db> {
    let w = window(db);
    let register = erps(db).iter().find(|e| e.id == erp);
    // The ERP's own matrix rows: an edit of another ERP's cell does not make this page's context again.
    let matrix = crate::model::erp_matrix(db, crate::model::ErpKey::new(db, erp.to_string()));
    let rows = register
        .map(|erp| {
            upcoming(db)
                .into_iter()
                .map(|entry| {
                    let table = support_table(db, entry);
                    UpcomingRow {
                        answers: erp_answers(erp, &table, || {
                            matrix.iter().find(|r| r.country == entry.country)
                        }),
                        phase: phase_row(entry, &table, w.today),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    Upcoming {
        today: w.today.to_string(),
        since: w.since.to_string(),
        horizon: w.horizon.to_string(),
        months: MONTHS_AHEAD,
        months_back: MONTHS_BACK,
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
    use crate::api_types::Verification;
    use crate::derived::{ESTABLISHED_SUPPORT, UNESTABLISHED_SUPPORT};

    #[test]
    fn every_graded_support_type_falls_in_one_group_and_an_unverified_answer_in_unknown() {
        for graded in [Verification::Official, Verification::Secondary] {
            for s in ESTABLISHED_SUPPORT {
                assert_eq!(group_of(s, graded), "established");
            }
            assert_eq!(
                UNESTABLISHED_SUPPORT.map(|s| group_of(s, graded)),
                ["roadmap", "none", "unknown"]
            );
        }
        for s in ESTABLISHED_SUPPORT.iter().chain(&UNESTABLISHED_SUPPORT) {
            assert_eq!(group_of(s, Verification::Unverified), "unknown");
        }
    }
}
