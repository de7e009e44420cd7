//! The pages of the releases and their changes: `/changes/` (the unreleased changes, a part per
//! country, then the newest releases), each release's page `/changes/{version}/`, each year's archive
//! page `/changes/archive/{year}/` (its releases, and which countries and ERPs each changed), and the
//! History sections of the country and ERP pages (the newest releases in full, the older counted by
//! year). The API, the feed and the sitemap of the same changes are `render/history.rs`.

use serde::Serialize;
use serde_json::Value as Json;

use super::context::{PARTS_MARK, PageSpec, PartsSpec, page};
use super::shared::{SiteContext, site_context, to_json};
use crate::api_types::{Change, ChangeCounts, Substance};
use crate::history::{
    History, ReleaseKey, country_history, erp_history, last_release, release_changes, release_year,
    releases, unreleased_codes, unreleased_country_changes, unreleased_counts,
};
use crate::model::{CountryKey, ErpKey};
use crate::render::history::{
    HISTORY_RELEASES, PAGE_CHANGES, RECENT_RELEASES, archive_page_path, country_name, day,
    kinds_that_occur, newest_first, release_api_path, release_page_path, release_summary, shown,
    toggle_label,
};

#[cfg(feature = "streaming")]
/// Limits the History sections' contexts to their most recent value (every build: a page's context,
/// which reads one, keeps only its fingerprint, see [`super::context::page_context`]).
pub(crate) fn keep_last_contexts_only(db: &mut dyn salsa::Database) {
    country_history_context::set_lru_capacity(db, 1);
    erp_history_context::set_lru_capacity(db, 1);
}

/// One change for a template: the country and its name, what changed, and the values before and after as
/// text (source URLs too: a source a later release dropped is shown, never linked).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct ChangeRow {
    country: String,
    country_name: String,
    fact_id: Option<String>,
    toggle: Option<String>,
    label: String,
    kind: &'static str,
    words: &'static str,
    /// `answer` or `curation` (see [`crate::api_types::Substance`]).
    substance: &'static str,
    /// The change as a sentence (see [`Change::sentence`]).
    sentence: String,
    old: String,
    new: String,
}

fn change_row(change: &Change, country_name: String, toggle_label: Option<&str>) -> ChangeRow {
    ChangeRow {
        country: change.country.clone(),
        country_name,
        // An answer other than a fact is named by its id too.
        fact_id: change.fact_id.clone().or_else(|| change.answer_id.clone()),
        toggle: change.toggle.clone(),
        label: toggle_label.unwrap_or(&change.label).to_string(),
        kind: change.kind.name(),
        words: change.kind.words(),
        substance: change.substance.name(),
        sentence: change.sentence(),
        old: shown(&change.old, change.kind),
        new: shown(&change.new, change.kind),
    }
}

/// The rows of `changes`, by the name of their country as readers look it up (the United Arab Emirates
/// among the U's, not after Andorra as by its code `ae`), each country's changes in the order of the set.
fn change_rows(db: &dyn salsa::Database, changes: &[Change]) -> Vec<ChangeRow> {
    let mut rows: Vec<ChangeRow> = changes
        .iter()
        .map(|c| {
            let label = c.toggle.as_deref().and_then(|t| toggle_label(db, t));
            change_row(c, country_name(db, &c.country), label)
        })
        .collect();
    rows.sort_by(|a, b| a.country_name.cmp(&b.country_name));
    rows
}

/// A change set as the pages show it: the answer changes, each a sentence, then the curation changes
/// (sources and grades), which the pages count and keep one click away. A set larger than
/// [`PAGE_CHANGES`] is not listed: it is counted by country (`counted`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct SplitRows {
    answers: Vec<ChangeRow>,
    curation: Vec<ChangeRow>,
    counted: Option<CountedChanges>,
}

/// A change set too large to list on a page: its counts, by country, and where every change is listed
/// as data (`data`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct CountedChanges {
    answers: u64,
    curation: u64,
    limit: usize,
    data: String,
    by_country: Vec<CountryChanges>,
}

/// One country's share of a [`CountedChanges`], with its page's History section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct CountryChanges {
    country: String,
    country_name: String,
    page: String,
    answers: u64,
    curation: u64,
}

/// `changes` as a page shows them: listed, or counted by country when there are more than
/// [`PAGE_CHANGES`]; `data` is where every one of them is listed as data.
fn split_rows(db: &dyn salsa::Database, changes: &[Change], data: &str) -> SplitRows {
    if changes.len() > PAGE_CHANGES {
        return counted_rows(db, changes, data);
    }
    let (answers, curation) = change_rows(db, changes)
        .into_iter()
        .partition(|row| row.substance == Substance::Answer.name());
    SplitRows {
        answers,
        curation,
        counted: None,
    }
}

/// `changes` counted by country, not listed (see [`CountedChanges`]).
fn counted_rows(db: &dyn salsa::Database, changes: &[Change], data: &str) -> SplitRows {
    SplitRows {
        answers: Vec::new(),
        curation: Vec::new(),
        counted: Some(counted_changes(db, changes, data)),
    }
}

fn counted_changes(db: &dyn salsa::Database, changes: &[Change], data: &str) -> CountedChanges {
    let mut counts: std::collections::BTreeMap<&str, (u64, u64)> = Default::default();
    for change in changes {
        let (answers, curation) = counts.entry(&change.country).or_default();
        match change.kind.substance() {
            Substance::Answer => *answers += 1,
            Substance::Curation => *curation += 1,
        }
    }
    let mut by_country: Vec<CountryChanges> = counts
        .into_iter()
        .map(|(code, (answers, curation))| CountryChanges {
            country: code.to_string(),
            country_name: country_name(db, code),
            page: format!("/{code}/#history"),
            answers,
            curation,
        })
        .collect();
    by_country.sort_by(|a, b| a.country_name.cmp(&b.country_name));
    let total = ChangeCounts::of(changes);
    CountedChanges {
        answers: total.answers(),
        curation: total.curation(),
        limit: PAGE_CHANGES,
        data: data.to_string(),
        by_country,
    }
}

/// How many changes of one kind a change set holds, and that count in words (`5 toggles flipped`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct KindCount {
    count: u64,
    text: String,
}

/// The counts of a change set by kind, the kinds that occur.
fn kind_counts(changes: &[Change]) -> Vec<KindCount> {
    kind_counts_of(&ChangeCounts::of(changes))
}

/// [`kind_counts`] of counts made already.
fn kind_counts_of(counts: &ChangeCounts) -> Vec<KindCount> {
    kinds_that_occur(counts)
        .map(|(kind, n)| KindCount {
            count: n,
            text: kind.counted(n),
        })
        .collect()
}

/// One release as the `/changes/` page lists it: its time, note and counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct ReleaseListing {
    version: String,
    released_at: String,
    date: String,
    note: String,
    previous: Option<String>,
    previous_page: Option<String>,
    page: String,
    facts: u64,
    countries: u64,
    api_url: String,
    change_count: Option<u64>,
    /// How many of the changes change an answer, and how many only the curation behind one.
    answer_count: Option<u64>,
    curation_count: Option<u64>,
    counts: Vec<KindCount>,
}

/// One release as the `/changes/` page lists it (none for a version the register does not have).
#[salsa::tracked(returns(ref))]
pub fn release_listing_json<'db>(
    db: &'db dyn salsa::Database,
    key: ReleaseKey<'db>,
) -> Option<ReleaseListing> {
    let release = release_summary(db, key).as_ref()?;
    let changes = release_changes(db, key);
    Some(ReleaseListing {
        version: release.version.clone(),
        released_at: release.released_at.clone(),
        date: day(&release.released_at).to_string(),
        note: release.note.clone(),
        previous: release.previous.clone(),
        previous_page: release.previous.as_deref().map(release_page_path),
        page: release_page_path(&release.version),
        facts: release.facts,
        countries: release.countries,
        api_url: release_api_path(&release.version),
        change_count: release.change_count,
        answer_count: release.answer_change_count,
        curation_count: release.curation_change_count,
        counts: kind_counts(changes),
    })
}

/// A release's page `/changes/<version>/`: its listing and every change it made. Frozen: a new release
/// or an edit of the sources does not render it again.
#[derive(Serialize)]
pub(crate) struct ReleaseContext<'a> {
    site: &'a SiteContext,
    release: &'a ReleaseListing,
    changes: SplitRows,
}

/// A release page's context (see [`ReleaseContext`]).
pub(crate) fn release_context<'db>(db: &'db dyn salsa::Database, key: ReleaseKey<'db>) -> Json {
    let Some(listing) = release_listing_json(db, key) else {
        return Json::Null;
    };
    to_json(&ReleaseContext {
        site: site_context(db),
        release: listing,
        changes: split_rows(db, release_changes(db, key), &listing.api_url),
    })
}

/// The `/changes/` page: the unreleased changes, then every release (with a link to its page), newest
/// first. The unreleased changes are the page's parts (see [`PartsSpec`]): the context
/// holds their counts and the mark where the template prints their rows, and each country's rows are
/// rendered on their own from [`unreleased_rows`].
#[derive(Serialize)]
pub(crate) struct ChangesContext<'a> {
    site: &'a SiteContext,
    last_release: &'a Option<String>,
    unreleased: Unreleased,
    /// The newest [`RECENT_RELEASES`] releases; the others are on their year's archive page.
    releases: Vec<&'a ReleaseListing>,
    /// How many releases are older than those listed.
    older: u64,
    years: &'a [YearLink],
    /// The newest release's answer changes, shown on the page (its curation changes are on its page).
    latest: Option<&'a LatestRelease>,
    /// The countries a reader may follow: each one's feed and calendar.
    follow: &'a [FollowCountry],
}

/// The newest release's answer changes, as the `/changes/` page leads with them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct LatestRelease {
    version: String,
    page: String,
    date: String,
    answer_count: u64,
    curation_count: u64,
    /// Its answer changes, unless there are too many to list (`counted`; see [`PAGE_CHANGES`]).
    answers: Vec<ChangeRow>,
    counted: bool,
}

/// The newest release's answer changes (none when there is no release before it to compare with).
#[salsa::tracked(returns(ref))]
pub fn latest_release_rows(db: &dyn salsa::Database) -> Option<LatestRelease> {
    let key = newest_first(db).next()?;
    let listing = release_listing_json(db, key).as_ref()?;
    listing.previous.as_ref()?;
    let rows = split_rows(db, release_changes(db, key), &listing.api_url);
    Some(LatestRelease {
        version: listing.version.clone(),
        page: listing.page.clone(),
        date: listing.date.clone(),
        answer_count: listing.answer_count.unwrap_or_default(),
        curation_count: listing.curation_count.unwrap_or_default(),
        answers: rows.answers,
        counted: rows.counted.is_some(),
    })
}

/// A country a reader may follow on the `/changes/` page: its name, its feed and its calendar.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct FollowCountry {
    code: String,
    name: String,
    /// The other names the follow list's filter finds it by (its code in capitals, the aliases register's).
    aliases: Vec<String>,
    feed: String,
    calendar: String,
}

/// The countries of the follow section, by name.
#[salsa::tracked(returns(ref))]
pub fn follow_countries(db: &dyn salsa::Database) -> Vec<FollowCountry> {
    crate::model::countries_by_name(db)
        .iter()
        .map(|c| FollowCountry {
            feed: crate::render::history::country_feed_path(&c.code),
            calendar: crate::render::calendar::country_calendar_path(&c.code),
            aliases: crate::render::search::country_aliases(db, &c.code),
            code: c.code.clone(),
            name: c.name.clone(),
        })
        .collect()
}

/// The unreleased changes of the `/changes/` page: how many, of which kinds, and where their rows go.
#[derive(Serialize)]
struct Unreleased {
    count: u64,
    answer_count: u64,
    curation_count: u64,
    counts: Vec<KindCount>,
    /// Whether the changes are listed one by one, or each country's counted (more than `limit`).
    listed: bool,
    limit: usize,
    rows: &'static str,
}

/// The `/changes/` page's context (see [`ChangesContext`]).
pub(crate) fn changes_context(db: &dyn salsa::Database) -> Json {
    let counts = unreleased_counts(db);
    let releases: Vec<&ReleaseListing> = newest_first(db)
        .take(RECENT_RELEASES)
        .filter_map(|key| release_listing_json(db, key).as_ref())
        .collect();
    let years = release_year_links(db);
    to_json(&ChangesContext {
        site: site_context(db),
        last_release: last_release(db),
        unreleased: Unreleased {
            count: counts.total(),
            answer_count: counts.answers(),
            curation_count: counts.curation(),
            counts: kind_counts_of(counts),
            listed: *unreleased_listed_in_full(db),
            limit: PAGE_CHANGES,
            rows: PARTS_MARK,
        },
        older: years.iter().map(|y| y.releases).sum::<u64>() - releases.len() as u64,
        releases,
        years,
        latest: latest_release_rows(db).as_ref(),
        follow: follow_countries(db),
    })
}

/// One country's unreleased changes as the `/changes/` page shows them: its answer changes, then its
/// curation changes one click away.
#[derive(Serialize)]
struct UnreleasedPart {
    country: String,
    country_name: String,
    #[serde(flatten)]
    rows: SplitRows,
}

/// One country's unreleased changes as the `/changes/` page shows them: the value its part is rendered
/// from.
pub(crate) fn unreleased_rows(db: &dyn salsa::Database, code: &str) -> Json {
    let changes = unreleased_country_changes(db, CountryKey::new(db, code.to_string()));
    let rows = if *unreleased_listed_in_full(db) {
        split_rows(db, changes, CHANGES_DATA)
    } else {
        counted_rows(db, changes, CHANGES_DATA)
    };
    to_json(&UnreleasedPart {
        country: code.to_string(),
        country_name: country_name(db, code),
        rows,
    })
}

/// Where every change is listed as data, the unreleased ones first.
const CHANGES_DATA: &str = "/api/v1/changes.json";

/// Whether the `/changes/` page lists the changes not released yet one by one: when there are at most
/// [`PAGE_CHANGES`]; else each country's are counted, and listed on its page. Its own query, so an edit
/// re-renders the other countries' parts only when it crosses the limit.
#[salsa::tracked]
fn unreleased_listed_in_full(db: &dyn salsa::Database) -> bool {
    unreleased_counts(db).total() <= PAGE_CHANGES as u64
}

/// The parts of the `/changes/` page: the countries the unreleased changes are computed for, in order.
pub(crate) fn unreleased_parts(db: &dyn salsa::Database) -> &[String] {
    unreleased_codes(db)
}

/// A History section (a country's or an ERP's): its changes grouped by release, unreleased first. Which
/// release is the last is named only in the unreleased group, so a new release re-renders only the
/// sections whose changes it releases.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct HistoryContext {
    released: bool,
    /// The unreleased changes and those of the newest [`HISTORY_RELEASES`] releases that made any.
    groups: Vec<HistoryGroup>,
    /// The older releases that changed the subject, counted by year, newest first.
    older: Vec<OlderReleases>,
}

/// The releases of one year that changed a subject but are older than its History section shows: how
/// many, and the place on the year's archive page that lists them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct OlderReleases {
    year: String,
    releases: u64,
    page: String,
}

/// The changes of one release (or the unreleased ones) in a History section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct HistoryGroup {
    release: Option<String>,
    date: Option<String>,
    page: Option<String>,
    /// The last release, for the unreleased group only.
    since: Option<Option<String>>,
    changes: SplitRows,
}

/// See [`HistoryContext`]; `anchor` is the subject's place on an archive page (`country-it`).
fn history_context(db: &dyn salsa::Database, history: History, anchor: &str) -> HistoryContext {
    let shown = usize::from(!history.unreleased.is_empty()) + HISTORY_RELEASES;
    let mut groups = history.groups();
    let mut older: Vec<OlderReleases> = Vec::new();
    for group in groups.iter().skip(shown) {
        let year = release_year(group[0].released_at.as_deref().unwrap_or_default());
        match older.last_mut() {
            Some(last) if last.year == year => last.releases += 1,
            _ => older.push(OlderReleases {
                year: year.to_string(),
                releases: 1,
                page: format!("{}#{anchor}", archive_page_path(year)),
            }),
        }
    }
    groups.truncate(shown);
    let groups = groups
        .into_iter()
        .map(|group| {
            let release = &group[0].release;
            HistoryGroup {
                release: release.clone(),
                date: group[0].released_at.as_deref().map(|t| day(t).to_string()),
                page: release.as_deref().map(release_page_path),
                since: release.is_none().then(|| last_release(db).clone()),
                changes: split_rows(
                    db,
                    group,
                    &release
                        .as_deref()
                        .map_or(CHANGES_DATA.into(), release_api_path),
                ),
            }
        })
        .collect();
    HistoryContext {
        released: last_release(db).is_some(),
        groups,
        older,
    }
}

/// The History section of a country page.
#[salsa::tracked(returns(ref), lru = 0)]
pub fn country_history_context<'db>(
    db: &'db dyn salsa::Database,
    key: CountryKey<'db>,
) -> HistoryContext {
    history_context(db, country_history(db, key), &country_anchor(key.code(db)))
}

/// The History section of an ERP page.
#[salsa::tracked(returns(ref), lru = 0)]
pub fn erp_history_context<'db>(db: &'db dyn salsa::Database, key: ErpKey<'db>) -> HistoryContext {
    history_context(db, erp_history(db, key), &erp_anchor(key.id(db)))
}

/// Where a country's releases are on an archive page.
fn country_anchor(code: &str) -> String {
    format!("country-{code}")
}

/// Where an ERP's releases are on an archive page.
fn erp_anchor(id: &str) -> String {
    format!("erp-{id}")
}

/// A year of releases as `/changes/` and the archive pages link it: how many releases it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct YearLink {
    year: String,
    page: String,
    releases: u64,
}

/// The years of the releases, newest first, each with its count of releases.
#[salsa::tracked(returns(ref))]
pub fn release_year_links(db: &dyn salsa::Database) -> Vec<YearLink> {
    let mut years: Vec<YearLink> = Vec::new();
    for release in releases(db).iter().rev() {
        let year = release_year(&release.released_at);
        match years.iter_mut().find(|y| y.year == year) {
            Some(link) => link.releases += 1,
            None => years.push(YearLink {
                year: year.to_string(),
                page: archive_page_path(year),
                releases: 1,
            }),
        }
    }
    years.sort_by(|a, b| b.year.cmp(&a.year));
    years
}

/// A release as an archive page links it from a country or an ERP: how many of its changes concern it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct SubjectRelease {
    version: String,
    page: String,
    changes: u64,
}

/// The countries and the ERPs one release changed, each with its count of changes: frozen, like the
/// release's change set.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct ReleaseSubjects {
    countries: Vec<(String, u64)>,
    erps: Vec<(String, u64)>,
}

/// See [`ReleaseSubjects`].
#[salsa::tracked(returns(ref))]
pub fn release_subjects<'db>(
    db: &'db dyn salsa::Database,
    key: ReleaseKey<'db>,
) -> ReleaseSubjects {
    let mut subjects = ReleaseSubjects::default();
    for change in release_changes(db, key) {
        count_in(&mut subjects.countries, &change.country);
        if let Some(erp) = &change.erp {
            count_in(&mut subjects.erps, erp);
        }
    }
    subjects
}

fn count_in(counts: &mut Vec<(String, u64)>, name: &str) {
    match counts.iter_mut().find(|(n, _)| n == name) {
        Some((_, n)) => *n += 1,
        None => counts.push((name.to_string(), 1)),
    }
}

/// A country or an ERP on an archive page: the releases of the year that changed it, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct SubjectReleases {
    anchor: String,
    name: String,
    page: String,
    releases: Vec<SubjectRelease>,
}

/// The archive page of a year's releases, `/changes/archive/{year}/`.
#[derive(Serialize)]
pub(crate) struct ReleaseYearContext<'a> {
    site: &'a SiteContext,
    year: &'a str,
    releases: Vec<&'a ReleaseListing>,
    /// The archive pages of the years before and after, if any (not every year's count: a release then
    /// re-renders only its own year's page).
    newer: Option<&'a str>,
    older: Option<&'a str>,
    countries: Vec<SubjectReleases>,
    erps: Vec<SubjectReleases>,
}

/// An archive page's context (see [`ReleaseYearContext`]): frozen once its year has no newer release.
pub(crate) fn release_year_context(db: &dyn salsa::Database, year: &str) -> Json {
    let years = crate::history::release_years(db);
    let keys: Vec<ReleaseKey> = newest_first(db)
        .filter(|key| {
            crate::history::release_time(db, *key)
                .as_deref()
                .is_some_and(|t| release_year(t) == year)
        })
        .collect();
    let subjects = |of: fn(&ReleaseSubjects) -> &Vec<(String, u64)>| {
        let mut by_subject: Vec<(String, Vec<SubjectRelease>)> = Vec::new();
        for key in &keys {
            let version = key.version(db);
            for (name, changes) in of(release_subjects(db, *key)) {
                let release = SubjectRelease {
                    version: version.clone(),
                    page: release_page_path(version),
                    changes: *changes,
                };
                match by_subject.iter_mut().find(|(n, _)| n == name) {
                    Some((_, releases)) => releases.push(release),
                    None => by_subject.push((name.clone(), vec![release])),
                }
            }
        }
        by_subject
    };
    let mut countries: Vec<SubjectReleases> = subjects(|s| &s.countries)
        .into_iter()
        .map(|(code, releases)| SubjectReleases {
            anchor: country_anchor(&code),
            name: country_name(db, &code),
            page: format!("/{code}/"),
            releases,
        })
        .collect();
    countries.sort_by(|a, b| a.name.cmp(&b.name));
    let mut erps: Vec<SubjectReleases> = subjects(|s| &s.erps)
        .into_iter()
        .map(|(id, releases)| SubjectReleases {
            anchor: erp_anchor(&id),
            name: crate::model::erp_name(db, &id),
            page: format!("/erp/{id}/"),
            releases,
        })
        .collect();
    erps.sort_by(|a, b| a.name.cmp(&b.name));
    to_json(&ReleaseYearContext {
        site: site_context(db),
        year,
        releases: keys
            .iter()
            .filter_map(|key| release_listing_json(db, *key).as_ref())
            .collect(),
        newer: years
            .iter()
            .rev()
            .find(|y| y.as_str() > year)
            .map(String::as_str),
        older: years.iter().find(|y| y.as_str() < year).map(String::as_str),
        countries,
        erps,
    })
}

/// How a year's archive page is made: its key is the year.
pub(super) fn release_year_spec() -> PageSpec {
    page("release_year", release_year_context)
}

/// How the `/changes/` page is made: the unreleased changes, one part per country.
pub(super) fn changes_spec() -> PageSpec {
    PageSpec {
        parts: Some(PartsSpec::blocks(
            unreleased_parts,
            unreleased_rows,
            "changes_part",
        )),
        ..page("changes", |db, _| changes_context(db))
    }
}

/// How a release's page is made: its key is the release's version.
pub(super) fn release_spec() -> PageSpec {
    page("release", |db, version| {
        release_context(db, ReleaseKey::new(db, version.to_string()))
    })
}
