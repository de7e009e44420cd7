//! The outputs made from the releases and their changes (`crate::history`): `/api/v1/changes.json`,
//! `/api/v1/releases.json`, `/api/v1/releases/{version}.json`, the Atom feeds (`/changes.xml`, each
//! country's and each ERP's); and the ways the pages show a change, shared with the changes and release pages and the
//! History sections (`render/pages/changes.rs`).
//!
//! A release's change set is frozen: its JSON fragment, its feed entry and its page are cached per
//! release, so an edit of the sources re-renders only the unreleased part (and the short `/changes/` page
//! that lists it) and splices it with them.

use super::envelope::{json_bytes, json_items, list_head, meta, splice_items_into, spliced_list};
use super::pages::shared::toggle_labels;
use crate::api_types::{
    Change, ChangeCounts, ChangeKind, Envelope, Release, ReleaseDetail, Substance, changes_counted,
};
use crate::history::{
    ReleaseKey, last_release, previous_release, release_changes, release_versions, releases,
    snapshot_size, unreleased_codes, unreleased_country_changes, unreleased_counts,
};
use crate::kinds::RendererOf;
use crate::model::{CountryKey, base_url, countries};
use crate::output::{GENERATED_AT_MARK, Piece, Rendered};
use crate::parse::rules::site_rules;
use crate::routes::Output;
use locref_figures::xml::escape as escape_xml;

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
    let (countries, facts) = *snapshot_size(db, key);
    let previous = previous_release(db, key).clone();
    let changes = previous.as_ref().map(|_| release_changes(db, key));
    Some(Release {
        version: row.version.clone(),
        released_at: row.released_at.clone(),
        previous,
        note: row.note.clone(),
        snapshot_blake3: row.snapshot_blake3.clone(),
        chain_blake3: row.chain_blake3.clone(),
        facts,
        countries,
        change_count: changes.map(|c| c.len() as u64),
        change_counts: changes.map(|c| ChangeCounts::of(c)),
        answer_change_count: changes.map(|c| ChangeCounts::of(c).answers()),
        curation_change_count: changes.map(|c| ChangeCounts::of(c).curation()),
        // Absolute: it resolves wherever the site is published, a path under a host (`/locref/`) too.
        api_url: format!("{}{}", base_url(db), release_api_path(&row.version)),
    })
}

/// How many of the newest releases the pages and files that list releases show in full: `/changes/`
/// (its table), the feeds (`/changes.xml` and each country's and ERP's), `llms.txt`, `llms-full.txt` and
/// the search index. An older release is listed on the archive page of its year
/// (`/changes/archive/{year}/`), one link from `/changes/`, and keeps its own page. So none of them grows
/// with the history.
pub const RECENT_RELEASES: usize = 20;

/// How many of the releases that changed a country or an ERP its History section shows in full; the
/// older ones are counted by year, each year a link to its archive page.
pub const HISTORY_RELEASES: usize = 5;

/// How many changes a page lists one by one in a change set (a release's, the changes not released yet,
/// a History section's group); a larger set (a whole new set of countries at once) is counted by
/// country instead, with a link to where every change is as data. About 340 bytes a change: such a set
/// stays under 300 KB on its page. No shipped release comes near it.
pub const PAGE_CHANGES: usize = 600;

/// Site-relative path of the archive page of the releases of `year`.
pub(crate) fn archive_page_path(year: &str) -> String {
    format!("/changes/archive/{year}/")
}

/// The [`RECENT_RELEASES`] newest versions, newest first.
#[salsa::tracked(returns(ref))]
pub fn recent_releases(db: &dyn salsa::Database) -> Vec<String> {
    release_versions(db)
        .iter()
        .rev()
        .take(RECENT_RELEASES)
        .cloned()
        .collect()
}

/// Whether `output` is the page (or twin) of a release older than the [`RECENT_RELEASES`]: it is
/// published, but the files that list pages (`llms.txt`, `llms-full.txt`, the search index) leave it to
/// its year's archive page.
pub(crate) fn is_archived_release_page(db: &dyn salsa::Database, output: &Output) -> bool {
    output.renderer().param() == crate::routes::Param::Release
        && output.renderer().is_page()
        && output
            .param
            .as_ref()
            .is_some_and(|v| !recent_releases(db).contains(v))
}

/// The release keys, newest first.
pub(crate) fn newest_first(db: &dyn salsa::Database) -> impl Iterator<Item = ReleaseKey<'_>> {
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

#[cfg(feature = "streaming")]
/// Limits the parts of `changes.json` to their most recent value (a one-off build, see
/// [`crate::memory`]).
pub(crate) fn keep_last_parts_only(db: &mut dyn salsa::Database) {
    unreleased_country_changes_json::set_lru_capacity(db, 1);
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

/// `changes.json` piece by piece (see [`super::stream_list`]): each country's unreleased changes and
/// each release's made, handed on and let go. A one-off build writes the file once, so the releases'
/// fragments are not kept by [`release_changes_json`] as a session keeps them (at x10, with 150 more
/// releases, they were 14.5 MiB of the build's peak).
pub(crate) fn stream_changes(db: &dyn salsa::Database, _: &Output, emit: &mut dyn FnMut(Piece)) {
    let unreleased = unreleased_codes(db)
        .iter()
        .map(|code| unreleased_fragment(db, CountryKey::new(db, code.clone())).1);
    let released = newest_first(db).map(|key| json_items(release_changes(db, key), 4));
    // The count as `api_changes` sums it: the fragments' counts.
    let count = unreleased_codes(db)
        .iter()
        .map(|code| unreleased_country_changes(db, CountryKey::new(db, code.clone())).len())
        .chain(newest_first(db).map(|key| release_changes(db, key).len()))
        .sum();
    let head = list_head(db, count);
    splice_items_into(&head, unreleased.chain(released), emit);
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

pub(crate) use crate::api_types::sentence::shown;

/// The date part of a release time.
pub(crate) fn day(time: &str) -> &str {
    time.get(..10).unwrap_or(time)
}

/// Country code -> name (the code itself for a country the register no longer has).
pub(crate) fn country_name(db: &dyn salsa::Database, code: &str) -> String {
    countries(db)
        .iter()
        .find(|c| c.code == code)
        .map_or_else(|| code.to_string(), |c| c.name.clone())
}

/// Toggle name -> its label in `rules/toggles.toml`.
pub(crate) fn toggle_label<'db>(db: &'db dyn salsa::Database, name: &str) -> Option<&'db str> {
    toggle_labels(db)
        .iter()
        .find(|t| t.name == name)
        .map(|t| t.label.as_str())
}

/// The kinds of change that occur in `counts`, with their counts, in [`ChangeKind::ALL`] order.
pub(crate) fn kinds_that_occur(counts: &ChangeCounts) -> impl Iterator<Item = (ChangeKind, u64)> {
    counts.by_kind().into_iter().filter(|(_, n)| *n > 0)
}

/// Site-relative path of a release's page.
pub(crate) fn release_page_path(version: &str) -> String {
    format!("/changes/{version}/")
}

// -------------------------------------------------------------------------------------------- XML

/// How many changes one feed entry lists before it links to the rest.
const FEED_CHANGES: usize = 100;

/// The HTML content of a feed entry: the answer changes, each a sentence (the first [`FEED_CHANGES`],
/// then a link to the rest), and the curation changes (sources and grades) counted, one link away.
fn feed_content<'a>(
    counts: &ChangeCounts,
    changes: impl Iterator<Item = &'a Change>,
    more_at: &str,
) -> String {
    let (answers, curation) = (counts.answers() as usize, counts.curation() as usize);
    let mut html = format!(
        "<p>{}: {answers} answer {}, {curation} curation {} (sources and grades).</p>",
        changes_counted(counts.total() as usize),
        if answers == 1 { "change" } else { "changes" },
        if curation == 1 { "change" } else { "changes" },
    );
    if answers > 0 {
        html.push_str("<ul>");
        for change in changes
            .filter(|c| c.substance == Substance::Answer)
            .take(FEED_CHANGES)
        {
            html.push_str(&format!(
                "<li>{}</li>",
                locref_escape::escape::escape_html(&super::text::plain_clauses(&change.sentence()))
            ));
        }
        html.push_str("</ul>");
    }
    let more_at = locref_escape::escape::escape_html(more_at);
    if answers > FEED_CHANGES {
        html.push_str(&format!(
            "<p>… and {} more answer changes: <a href=\"{more_at}\">all changes</a>.</p>",
            answers - FEED_CHANGES,
        ));
    }
    if curation > 0 {
        html.push_str(&format!(
            "<p>The curation changes are listed with every change: <a href=\"{more_at}\">all changes</a>.</p>"
        ));
    }
    html
}

/// A release's note as the first paragraph of a feed entry's content (nothing for a release without
/// one).
fn note_html(note: &str) -> String {
    if note.is_empty() {
        String::new()
    } else {
        format!(
            "<p>Release note: {}</p>",
            locref_escape::escape::escape_html(note)
        )
    }
}

/// When a release is dated in the feeds (`published`, `updated`): its `released_at`, made distinct from
/// every other release's. The record keeps whole seconds, and two releases made within one second would
/// give two entries one `updated`, which feed readers take for one entry updated twice: the later one is
/// dated a millisecond later for each release before it in that second, which stays within the second the
/// record says (and keeps the releases' order). Every other release keeps its time as recorded.
#[salsa::tracked(returns(ref))]
pub(crate) fn feed_time<'db>(db: &'db dyn salsa::Database, key: ReleaseKey<'db>) -> String {
    let rows = releases(db);
    let Some(at) = rows.iter().position(|r| &r.version == key.version(db)) else {
        return String::new();
    };
    let time = &rows[at].released_at;
    let before = rows[..at].iter().filter(|r| &r.released_at == time).count();
    match time.strip_suffix('Z') {
        Some(seconds) if before > 0 => format!("{seconds}.{before:03}Z"),
        _ => time.clone(),
    }
}

/// A feed's own `updated`: the newest of its entries' (entries come newest first), so the feed says when
/// its content last changed, not when it was built; a feed with no entry, the first release's time (its
/// history starts there).
fn feed_updated(db: &dyn salsa::Database, newest_entry: Option<String>) -> String {
    newest_entry
        .or_else(|| {
            releases(db)
                .first()
                .map(|r| feed_time(db, ReleaseKey::new(db, r.version.clone())).clone())
        })
        .unwrap_or_else(|| GENERATED_AT_MARK.to_string())
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
    let api = release.api_url.clone();
    let changes = release_changes(db, key);
    let (title, content) = match &release.previous {
        Some(previous) => (
            format!(
                "Release {version}: {} since {previous}",
                changes_counted(changes.len())
            ),
            feed_content(&ChangeCounts::of(changes), changes.iter(), &page),
        ),
        None => (
            format!("Release {version}: the first release"),
            format!(
                "<p>The first release: {} facts of {} countries. Changes are listed from the next release on.</p>",
                release.facts, release.countries
            ),
        ),
    };
    // The note leads the content too: a reader that shows `<content>` and not `<summary>` reads it.
    let content = format!("{}{content}", note_html(&release.note));
    let mut entry = format!(
        "  <entry>\n    <title>{}</title>\n    <id>{}</id>\n    <link rel=\"alternate\" type=\"text/html\" href=\"{}\"/>\n    <link rel=\"related\" type=\"application/json\" href=\"{}\"/>\n    <published>{}</published>\n    <updated>{}</updated>\n",
        escape_xml(&title),
        escape_xml(&api),
        escape_xml(&page),
        escape_xml(&api),
        feed_time(db, key),
        feed_time(db, key),
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
    // The changes not released yet are dated by the build that last changed them (stamped by the
    // publisher): nothing else dates them.
    let now = GENERATED_AT_MARK;
    let counts = unreleased_counts(db);
    let updated = feed_updated(
        db,
        if counts.total() > 0 {
            Some(now.to_string())
        } else {
            newest_first(db)
                .next()
                .map(|key| feed_time(db, key).clone())
        },
    );
    let mut xml = format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">\n  <title>{}: changes</title>\n  <subtitle>{}</subtitle>\n  <id>{}</id>\n  <link rel=\"self\" type=\"application/atom+xml\" href=\"{}\"/>\n  <link rel=\"alternate\" type=\"text/html\" href=\"{}\"/>\n  <updated>{updated}</updated>\n  <author><name>{}</name></author>\n  <rights>{}</rights>\n",
        escape_xml(&site.title),
        escape_xml(&format!(
            "What changed in the published answers, release by release. {}",
            site.informational_notice
        )),
        escape_xml(&format!("{base}/changes/")),
        escape_xml(&format!("{base}/changes.xml")),
        escape_xml(&format!("{base}/changes/")),
        escape_xml(&site.title),
        escape_xml(&site.api_licence.attribution),
    );
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
                counts,
                crate::history::each_unreleased_change(db),
                &page
            )),
        ));
    }
    for key in newest_first(db).take(RECENT_RELEASES) {
        xml.push_str(release_feed_entry(db, key));
    }
    xml.push_str("</feed>\n");
    Rendered::new(xml.into_bytes())
}

// ------------------------------------------------------------------- per-country and per-ERP feeds

/// Site-relative path of a country's Atom feed.
pub(crate) fn country_feed_path(code: &str) -> String {
    format!("/{code}/changes.xml")
}

/// Site-relative path of an ERP's Atom feed.
pub(crate) fn erp_feed_path(id: &str) -> String {
    format!("/erp/{id}/changes.xml")
}

/// An Atom feed of one subject's history (a country's or an ERP's), newest first: one entry per release
/// that changed it, and one for its changes not released yet (dated by the build that last changed
/// them). Each entry leads with the answer changes as sentences and counts the curation changes.
fn history_feed(
    db: &dyn salsa::Database,
    title: &str,
    self_path: &str,
    page_path: &str,
    history: crate::history::History,
) -> Rendered {
    let site = &site_rules(db).value;
    let base = base_url(db);
    let now = GENERATED_AT_MARK;
    let page = format!("{base}{page_path}#history");
    // The unreleased changes (if any) and the newest releases that changed the subject; the older ones are
    // on the History section's archive links.
    let unreleased = usize::from(!history.unreleased.is_empty());
    let groups: Vec<_> = history
        .groups()
        .into_iter()
        .take(unreleased + RECENT_RELEASES)
        .collect();
    let time_of = |release: &Option<String>| match release {
        Some(version) => feed_time(db, ReleaseKey::new(db, version.clone())).clone(),
        None => now.to_string(),
    };
    let updated = feed_updated(db, groups.first().map(|group| time_of(&group[0].release)));
    let mut xml = format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">\n  <title>{}</title>\n  <subtitle>{}</subtitle>\n  <id>{}</id>\n  <link rel=\"self\" type=\"application/atom+xml\" href=\"{}\"/>\n  <link rel=\"alternate\" type=\"text/html\" href=\"{}\"/>\n  <updated>{updated}</updated>\n  <author><name>{}</name></author>\n  <rights>{}</rights>\n",
        escape_xml(&format!("{}: {title}: changes", site.title)),
        escape_xml(&format!(
            "What changed in the published answers about {title}, release by release: the answers first, the curation (sources and grades) counted. {}",
            site.informational_notice
        )),
        escape_xml(&format!("{base}{self_path}")),
        escape_xml(&format!("{base}{self_path}")),
        escape_xml(&page),
        escape_xml(&site.title),
        escape_xml(&site.api_licence.attribution),
    );
    for group in groups {
        let release = &group[0].release;
        let counts = ChangeCounts::of(group);
        let answers = counts.answers();
        let curation = counts.curation();
        let what = format!(
            "{answers} answer {}, {curation} curation {}",
            if answers == 1 { "change" } else { "changes" },
            if curation == 1 { "change" } else { "changes" },
        );
        let time = time_of(release);
        // Each release's entry leads with the release's note (what it changed for readers at large).
        let note = release
            .as_ref()
            .and_then(|version| releases(db).iter().find(|r| &r.version == version))
            .map(|r| note_html(&r.note))
            .unwrap_or_default();
        let (entry_title, id, link) = match release {
            Some(version) => (
                format!("Release {version}: {title}: {what}"),
                format!("{base}{self_path}#{version}"),
                format!("{base}{}", release_page_path(version)),
            ),
            None => (
                format!("Not released yet: {title}: {what}"),
                format!("{base}{self_path}#unreleased"),
                page.clone(),
            ),
        };
        xml.push_str(&format!(
            "  <entry>\n    <title>{}</title>\n    <id>{}</id>\n    <link rel=\"alternate\" type=\"text/html\" href=\"{}\"/>\n    <updated>{time}</updated>\n    <content type=\"html\">{}</content>\n  </entry>\n",
            escape_xml(&entry_title),
            escape_xml(&id),
            escape_xml(&link),
            escape_xml(&format!(
                "{note}{}",
                feed_content(&counts, group.iter(), &link)
            )),
        ));
    }
    xml.push_str("</feed>\n");
    Rendered::new(xml.into_bytes())
}

/// `/{code}/changes.xml`: one country's changes as an Atom feed.
pub(crate) fn country_feed(db: &dyn salsa::Database, code: &str) -> Rendered {
    let key = CountryKey::new(db, code.to_string());
    let name = crate::model::country_info(db, key)
        .as_ref()
        .map_or_else(|| code.to_string(), |c| c.name.clone());
    history_feed(
        db,
        &name,
        &country_feed_path(code),
        &format!("/{code}/"),
        crate::history::country_history(db, key),
    )
}

/// `/erp/{id}/changes.xml`: the changes of the facts about one ERP as an Atom feed.
pub(crate) fn erp_feed(db: &dyn salsa::Database, id: &str) -> Rendered {
    let key = crate::model::ErpKey::new(db, id.to_string());
    let name = crate::model::erp_name(db, id);
    history_feed(
        db,
        &name,
        &erp_feed_path(id),
        &format!("/erp/{id}/"),
        crate::history::erp_history(db, key),
    )
}
