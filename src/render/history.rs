//! The outputs made from the releases and their changes (`crate::history`): `/api/v1/changes.json`,
//! `/api/v1/releases.json`, `/api/v1/releases/{version}.json`, the Atom feed `/changes.xml`, the
//! contexts of the `/changes/` page, of each release's page `/changes/{version}/` and of the History
//! sections of the country and ERP pages; and the crawler
//! files `/sitemap.xml` (every page, `lastmod` the time its content last changed) and `/robots.txt`.
//!
//! A release's change set is frozen: its JSON fragment, its feed entry and its page are cached per
//! release, so an edit of the sources re-renders only the unreleased part (and the short `/changes/` page
//! that lists it) and splices it with them.

use serde::Serialize;
use serde_json::Value as Json;

use super::api::{meta, spliced_list};
use super::figures::xml::escape as escape_xml;
use super::pages::shared::{SiteContext, site_context, to_json, toggle_labels};
use super::{GENERATED_AT_MARK, Piece, Rendered, json_bytes, json_items, stamp_of};
use crate::history::{
    ReleaseKey, country_history, erp_history, last_release, previous_release, release_changes,
    release_versions, releases, snapshot_of, unreleased_codes, unreleased_country_changes,
    unreleased_counts,
};
use crate::model::{CountryKey, ErpKey, base_url, countries};
use crate::parse::rules::site_rules;
use crate::resources::{
    Change, ChangeCounts, ChangeKind, ChangeValue, Envelope, Release, ReleaseDetail,
    changes_counted,
};
use crate::routes::{Output, outputs};

/// Site-relative path of a release's change set.
pub(crate) fn release_api_path(version: &str) -> String {
    format!("/api/v1/releases/{version}.json")
}

// ---------------------------------------------------------------------------------------------- API

/// A release as `releases.json` lists it.
#[salsa::tracked(returns(ref))]
pub fn release_summary<'db>(db: &'db dyn salsa::Database, key: ReleaseKey<'db>) -> Option<Release> {
    let row = releases(db)
        .iter()
        .find(|r| &r.version == key.version(db))?;
    let snapshot = &snapshot_of(db, key).value;
    let previous = previous_release(db, key).clone();
    let changes = previous.as_ref().map(|_| release_changes(db, key));
    Some(Release {
        version: row.version.clone(),
        released_at: row.released_at.clone(),
        previous,
        note: row.note.clone(),
        snapshot_blake3: row.snapshot_blake3.clone(),
        chain_blake3: row.chain_blake3.clone(),
        facts: snapshot.values().map(|s| s.facts.len() as u64).sum(),
        countries: snapshot.len() as u64,
        change_count: changes.map(|c| c.len() as u64),
        change_counts: changes.map(|c| ChangeCounts::of(c)),
        api_url: release_api_path(&row.version),
    })
}

/// The release keys, newest first.
fn newest_first(db: &dyn salsa::Database) -> impl Iterator<Item = ReleaseKey<'_>> {
    release_versions(db)
        .iter()
        .rev()
        .map(move |v| ReleaseKey::new(db, v.clone()))
}

/// One country's changes since the last release as a fragment of `changes.json` (and their count): an
/// edit serializes that country's changes again, not every unreleased change.
#[salsa::tracked(returns(ref), lru = 0)]
pub fn unreleased_country_changes_json<'db>(
    db: &'db dyn salsa::Database,
    key: CountryKey<'db>,
) -> (usize, Piece) {
    unreleased_fragment(db, key)
}

fn unreleased_fragment(db: &dyn salsa::Database, key: CountryKey<'_>) -> (usize, Piece) {
    let changes = unreleased_country_changes(db, key);
    (changes.len(), json_items(changes, 4))
}

/// One release's changes as a fragment of `changes.json`: frozen, so serialized once.
#[salsa::tracked(returns(ref))]
pub fn release_changes_json<'db>(
    db: &'db dyn salsa::Database,
    key: ReleaseKey<'db>,
) -> (usize, Piece) {
    let changes = release_changes(db, key);
    (changes.len(), json_items(changes, 4))
}

/// Limits the parts of `changes.json` to their most recent value (a one-off build, see
/// [`crate::memory`]).
pub(crate) fn keep_last_parts_only(db: &mut dyn salsa::Database) {
    unreleased_country_changes_json::set_lru_capacity(db, 1);
}

/// Limits the History sections' contexts to their most recent value (every build: a page's context,
/// which reads one, keeps only its fingerprint, see [`super::pages::page_context`]).
pub(crate) fn keep_last_contexts_only(db: &mut dyn salsa::Database) {
    country_history_context::set_lru_capacity(db, 1);
    erp_history_context::set_lru_capacity(db, 1);
}

/// `/api/v1/changes.json`: the unreleased changes, then each release's, newest first.
pub fn api_changes(db: &dyn salsa::Database) -> Rendered {
    let mut parts: Vec<&(usize, Piece)> = unreleased_codes(db)
        .iter()
        .map(|code| unreleased_country_changes_json(db, CountryKey::new(db, code.clone())))
        .collect();
    parts.extend(newest_first(db).map(|key| release_changes_json(db, key)));
    spliced_list(db, &parts)
}

/// `changes.json` piece by piece (see [`super::stream_list`]): each country's unreleased changes made,
/// handed on and let go; the releases' fragments are kept by their query, as in [`api_changes`].
pub(crate) fn stream_changes(db: &dyn salsa::Database, _: &Output, emit: &mut dyn FnMut(Piece)) {
    let unreleased = unreleased_codes(db)
        .iter()
        .map(|code| unreleased_fragment(db, CountryKey::new(db, code.clone())).1);
    let released = newest_first(db).map(|key| release_changes_json(db, key).1.clone());
    // The count as `api_changes` sums it: the fragments' counts.
    let count = unreleased_codes(db)
        .iter()
        .map(|code| unreleased_country_changes(db, CountryKey::new(db, code.clone())).len())
        .chain(newest_first(db).map(|key| release_changes_json(db, key).0))
        .sum();
    let head = super::api::list_head(db, count);
    super::splice_items_into(&head, unreleased.chain(released), emit);
}

/// How many changes `changes.json` lists.
pub fn change_count(db: &dyn salsa::Database) -> usize {
    unreleased_counts(db).total() as usize
        + newest_first(db)
            .map(|key| release_changes(db, key).len())
            .sum::<usize>()
}

/// `/api/v1/releases.json`: the releases, newest first.
pub fn api_releases(db: &dyn salsa::Database) -> Rendered {
    let data: Vec<Release> = newest_first(db)
        .filter_map(|key| release_summary(db, key).clone())
        .collect();
    Rendered::new(json_bytes(&Envelope {
        meta: meta(db, data.len()),
        data,
    }))
}

/// `/api/v1/releases/{version}.json`: one release and its change set.
pub(crate) fn api_release<'db>(db: &'db dyn salsa::Database, key: ReleaseKey<'db>) -> Rendered {
    let data = release_summary(db, key)
        .clone()
        .map(|release| ReleaseDetail {
            release,
            changes: release_changes(db, key).clone(),
        });
    Rendered::new(json_bytes(&Envelope {
        meta: meta(db, 1),
        data,
    }))
}

// ------------------------------------------------------------------------------- shown to people

/// A value of a change as the pages and the feed show it.
fn shown(value: &Option<ChangeValue>, kind: ChangeKind) -> String {
    match value {
        Some(ChangeValue::Text(text)) => text.to_string(),
        Some(ChangeValue::Flag(true)) => "yes".into(),
        Some(ChangeValue::Flag(false)) => "no".into(),
        Some(ChangeValue::Urls(urls)) if urls.is_empty() => "none".into(),
        // One URL a line (the pages keep line breaks in a change's values).
        Some(ChangeValue::Urls(urls)) => urls.join("\n"),
        None => match kind {
            ChangeKind::ToggleFlipped => "unknown".into(),
            ChangeKind::EffectiveDateChanged => "not recorded".into(),
            _ => String::new(),
        },
    }
}

/// The date part of a release time.
fn day(time: &str) -> &str {
    time.get(..10).unwrap_or(time)
}

/// One change for a template: the country and its name, what changed, and the values before and after as
/// text (source URLs too: a source a later release dropped is shown, never linked).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChangeRow {
    country: String,
    country_name: String,
    fact_id: Option<String>,
    toggle: Option<String>,
    label: String,
    kind: &'static str,
    words: &'static str,
    old: String,
    new: String,
}

fn change_row(change: &Change, country_name: String, toggle_label: Option<&str>) -> ChangeRow {
    ChangeRow {
        country: change.country.clone(),
        country_name,
        fact_id: change.fact_id.clone(),
        toggle: change.toggle.clone(),
        label: toggle_label.unwrap_or(&change.label).to_string(),
        kind: change.kind.name(),
        words: change.kind.words(),
        old: shown(&change.old, change.kind),
        new: shown(&change.new, change.kind),
    }
}

/// Country code -> name (the code itself for a country the register no longer has).
fn country_name(db: &dyn salsa::Database, code: &str) -> String {
    countries(db)
        .iter()
        .find(|c| c.code == code)
        .map_or_else(|| code.to_string(), |c| c.name.clone())
}

/// Toggle name -> its label in `rules/toggles.toml`.
fn toggle_label<'db>(db: &'db dyn salsa::Database, name: &str) -> Option<&'db str> {
    toggle_labels(db)
        .iter()
        .find(|t| t.name == name)
        .map(|t| t.label.as_str())
}

fn change_rows(db: &dyn salsa::Database, changes: &[Change]) -> Vec<ChangeRow> {
    changes
        .iter()
        .map(|c| {
            let label = c.toggle.as_deref().and_then(|t| toggle_label(db, t));
            change_row(c, country_name(db, &c.country), label)
        })
        .collect()
}

/// How many changes of one kind a change set holds, and that count in words (`5 toggles flipped`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KindCount {
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

/// The kinds of change that occur in `counts`, with their counts, in [`ChangeKind::ALL`] order.
fn kinds_that_occur(counts: &ChangeCounts) -> impl Iterator<Item = (ChangeKind, u64)> {
    counts.by_kind().into_iter().filter(|(_, n)| *n > 0)
}

/// Site-relative path of a release's page.
pub(crate) fn release_page_path(version: &str) -> String {
    format!("/changes/{version}/")
}

/// One release as the `/changes/` page lists it: its time, note and counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReleaseListing {
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
        api_url: release.api_url.clone(),
        change_count: release.change_count,
        counts: kind_counts(changes),
    })
}

/// A release's page `/changes/<version>/`: its listing and every change it made. Frozen: a new release
/// or an edit of the sources does not render it again.
#[derive(Serialize)]
pub struct ReleaseContext<'a> {
    site: &'a SiteContext,
    release: &'a ReleaseListing,
    changes: Vec<ChangeRow>,
}

/// A release page's context (see [`ReleaseContext`]).
pub(crate) fn release_context<'db>(db: &'db dyn salsa::Database, key: ReleaseKey<'db>) -> Json {
    let Some(listing) = release_listing_json(db, key) else {
        return Json::Null;
    };
    to_json(&ReleaseContext {
        site: site_context(db),
        release: listing,
        changes: change_rows(db, release_changes(db, key)),
    })
}

/// The `/changes/` page: the unreleased changes, then every release (with a link to its page), newest
/// first. The unreleased changes are the page's parts (see [`super::parts::PartsSpec`]): the context
/// holds their counts and the mark where the template prints their rows, and each country's rows are
/// rendered on their own from [`unreleased_rows`].
#[derive(Serialize)]
pub struct ChangesContext<'a> {
    site: &'a SiteContext,
    last_release: &'a Option<String>,
    unreleased: Unreleased,
    releases: Vec<&'a ReleaseListing>,
}

/// The unreleased changes of the `/changes/` page: how many, of which kinds, and where their rows go.
#[derive(Serialize)]
struct Unreleased {
    count: u64,
    counts: Vec<KindCount>,
    rows: &'static str,
}

/// The `/changes/` page's context (see [`ChangesContext`]).
pub fn changes_context(db: &dyn salsa::Database) -> Json {
    let counts = unreleased_counts(db);
    let releases: Vec<&ReleaseListing> = newest_first(db)
        .filter_map(|key| release_listing_json(db, key).as_ref())
        .collect();
    to_json(&ChangesContext {
        site: site_context(db),
        last_release: last_release(db),
        unreleased: Unreleased {
            count: counts.total(),
            counts: kind_counts_of(counts),
            rows: super::parts::PARTS_MARK,
        },
        releases,
    })
}

/// One country's unreleased changes as the `/changes/` page's rows show them: the value its part is
/// rendered from.
pub(crate) fn unreleased_rows(db: &dyn salsa::Database, code: &str) -> Json {
    let changes = unreleased_country_changes(db, CountryKey::new(db, code.to_string()));
    to_json(&change_rows(db, changes))
}

/// The parts of the `/changes/` page: the countries the unreleased changes are computed for, in order.
pub(crate) fn unreleased_parts(db: &dyn salsa::Database) -> &[String] {
    unreleased_codes(db)
}

/// A History section (a country's or an ERP's): its changes grouped by release, unreleased first. Which
/// release is the last is named only in the unreleased group, so a new release re-renders only the
/// sections whose changes it releases.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HistoryContext {
    released: bool,
    groups: Vec<HistoryGroup>,
}

/// The changes of one release (or the unreleased ones) in a History section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct HistoryGroup {
    release: Option<String>,
    date: Option<String>,
    page: Option<String>,
    /// The last release, for the unreleased group only.
    since: Option<Option<String>>,
    changes: Vec<ChangeRow>,
}

/// See [`HistoryContext`].
fn history_context(db: &dyn salsa::Database, changes: &[Change]) -> HistoryContext {
    let mut groups = Vec::new();
    let mut start = 0;
    while start < changes.len() {
        let release = &changes[start].release;
        let end = changes[start..]
            .iter()
            .position(|c| &c.release != release)
            .map_or(changes.len(), |n| start + n);
        let group = &changes[start..end];
        groups.push(HistoryGroup {
            release: release.clone(),
            date: group[0].released_at.as_deref().map(|t| day(t).to_string()),
            page: release.as_deref().map(release_page_path),
            since: release.is_none().then(|| last_release(db).clone()),
            changes: change_rows(db, group),
        });
        start = end;
    }
    HistoryContext {
        released: last_release(db).is_some(),
        groups,
    }
}

/// The History section of a country page.
#[salsa::tracked(returns(ref), lru = 0)]
pub fn country_history_context<'db>(
    db: &'db dyn salsa::Database,
    key: CountryKey<'db>,
) -> HistoryContext {
    history_context(db, country_history(db, key))
}

/// The History section of an ERP page.
#[salsa::tracked(returns(ref), lru = 0)]
pub fn erp_history_context<'db>(db: &'db dyn salsa::Database, key: ErpKey<'db>) -> HistoryContext {
    history_context(db, erp_history(db, key))
}

// -------------------------------------------------------------------------------------------- XML

/// How many changes one feed entry lists before it links to the rest.
const FEED_CHANGES: usize = 100;
/// How many releases the feed carries (the newest).
const FEED_RELEASES: usize = 50;

/// One change as a line of a feed entry (HTML, escaped).
fn feed_line(db: &dyn salsa::Database, change: &Change) -> String {
    let country = country_name(db, &change.country);
    let what = match (&change.fact_id, &change.toggle) {
        (Some(id), _) => format!("{} ({id})", change.label),
        (None, Some(toggle)) => {
            format!("toggle {}", toggle_label(db, toggle).unwrap_or(toggle))
        }
        (None, None) => change.label.clone(),
    };
    let old = shown(&change.old, change.kind);
    let new = shown(&change.new, change.kind);
    let text = match change.kind {
        ChangeKind::Added => format!("{country}: {what} added: “{new}”"),
        ChangeKind::Removed => format!("{country}: {what} removed (was “{old}”)"),
        kind => format!("{country}: {what}: {}: “{old}” → “{new}”", kind.words()),
    };
    format!("<li>{}</li>", crate::render::escape::escape_html(&text))
}

/// The HTML content of a feed entry: the counts by kind, then the changes (the first
/// [`FEED_CHANGES`], and a link to the rest).
fn feed_content<'a>(
    db: &dyn salsa::Database,
    counts: &ChangeCounts,
    changes: impl Iterator<Item = &'a Change>,
    more_at: &str,
) -> String {
    let total = counts.total() as usize;
    let words: Vec<String> = kinds_that_occur(counts)
        .map(|(kind, n)| kind.counted(n))
        .collect();
    let mut html = format!(
        "<p>{}: {}.</p><ul>",
        changes_counted(total),
        words.join(", ")
    );
    for change in changes.take(FEED_CHANGES) {
        html.push_str(&feed_line(db, change));
    }
    html.push_str("</ul>");
    if total > FEED_CHANGES {
        html.push_str(&format!(
            "<p>… and {} more: <a href=\"{}\">all changes</a>.</p>",
            total - FEED_CHANGES,
            crate::render::escape::escape_html(more_at)
        ));
    }
    html
}

/// One release's feed entry: frozen but for the site's address.
#[salsa::tracked(returns(ref))]
pub fn release_feed_entry<'db>(db: &'db dyn salsa::Database, key: ReleaseKey<'db>) -> String {
    let Some(release) = release_summary(db, key) else {
        return String::new();
    };
    let base = base_url(db);
    let version = &release.version;
    let page = format!("{base}{}", release_page_path(version));
    let api = format!("{base}{}", release.api_url);
    let changes = release_changes(db, key);
    let (title, content) = match &release.previous {
        Some(previous) => (
            format!(
                "Release {version}: {} since {previous}",
                changes_counted(changes.len())
            ),
            feed_content(db, &ChangeCounts::of(changes), changes.iter(), &api),
        ),
        None => (
            format!("Release {version}: the first release"),
            format!(
                "<p>The first release: {} facts of {} countries. Changes are listed from the next release on.</p>",
                release.facts, release.countries
            ),
        ),
    };
    let mut entry = format!(
        "  <entry>\n    <title>{}</title>\n    <id>{}</id>\n    <link rel=\"alternate\" type=\"text/html\" href=\"{}\"/>\n    <link rel=\"related\" type=\"application/json\" href=\"{}\"/>\n    <published>{}</published>\n    <updated>{}</updated>\n",
        escape_xml(&title),
        escape_xml(&api),
        escape_xml(&page),
        escape_xml(&api),
        release.released_at,
        release.released_at,
    );
    if !release.note.is_empty() {
        entry.push_str(&format!(
            "    <summary>{}</summary>\n",
            escape_xml(&release.note)
        ));
    }
    entry.push_str(&format!(
        "    <content type=\"html\">{}</content>\n  </entry>\n",
        escape_xml(&content)
    ));
    entry
}

/// `/changes.xml`: an Atom feed of the changes, newest first: the changes not released yet (dated by the
/// build that last changed them), then one entry per release (dated by the release).
pub fn changes_feed(db: &dyn salsa::Database) -> Rendered {
    let site = &site_rules(db).value;
    let base = base_url(db);
    // The time of the build that last changed this file's content, stamped by the emit step.
    let now = GENERATED_AT_MARK;
    let mut xml = format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">\n  <title>{}: changes</title>\n  <subtitle>{}</subtitle>\n  <id>{}</id>\n  <link rel=\"self\" type=\"application/atom+xml\" href=\"{}\"/>\n  <link rel=\"alternate\" type=\"text/html\" href=\"{}\"/>\n  <updated>{now}</updated>\n  <author><name>{}</name></author>\n  <rights>{}</rights>\n",
        escape_xml(&site.title),
        escape_xml(&format!(
            "What changed in the published facts and toggles, release by release. {}",
            site.informational_notice
        )),
        escape_xml(&format!("{base}/changes/")),
        escape_xml(&format!("{base}/changes.xml")),
        escape_xml(&format!("{base}/changes/")),
        escape_xml(&site.title),
        escape_xml(&site.api_licence.attribution),
    );
    let counts = unreleased_counts(db);
    if counts.total() > 0 {
        let since = last_release(db).clone().unwrap_or_default();
        let page = format!("{base}/changes/#unreleased");
        xml.push_str(&format!(
            "  <entry>\n    <title>{}</title>\n    <id>{}</id>\n    <link rel=\"alternate\" type=\"text/html\" href=\"{}\"/>\n    <updated>{now}</updated>\n    <content type=\"html\">{}</content>\n  </entry>\n",
            escape_xml(&format!(
                "Not released yet: {} since {since}",
                changes_counted(counts.total() as usize)
            )),
            escape_xml(&page),
            escape_xml(&page),
            escape_xml(&feed_content(
                db,
                counts,
                crate::history::each_unreleased_change(db),
                &format!("{base}/api/v1/changes.json")
            )),
        ));
    }
    for key in newest_first(db).take(FEED_RELEASES) {
        xml.push_str(release_feed_entry(db, key));
    }
    xml.push_str("</feed>\n");
    Rendered::new(xml.into_bytes())
}

// ---------------------------------------------------------------------------------- crawler files

/// `/sitemap.xml`: every HTML page (the 404 page aside), with `lastmod` the time its content last changed:
/// a placeholder per page that the emit step fills with that page's `generated_at`.
pub fn sitemap(db: &dyn salsa::Database) -> Rendered {
    let base = base_url(db);
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for output in outputs(db) {
        let crate::routes::Renderer::Page(kind, super::Format::Html) = output.renderer else {
            continue;
        };
        if kind == super::PageKind::NotFound {
            continue;
        }
        let location = output
            .path
            .strip_suffix("index.html")
            .unwrap_or(&output.path);
        xml.push_str(&format!(
            "  <url><loc>{}</loc><lastmod>{}</lastmod></url>\n",
            escape_xml(&format!("{base}{location}")),
            stamp_of(&output.path)
        ));
    }
    xml.push_str("</urlset>\n");
    Rendered::referring(xml.into_bytes())
}

/// `/robots.txt`: everything may be crawled; names the sitemap.
pub fn robots(db: &dyn salsa::Database) -> Rendered {
    let base = base_url(db);
    Rendered::new(format!("User-agent: *\nAllow: /\n\nSitemap: {base}/sitemap.xml\n").into_bytes())
}
