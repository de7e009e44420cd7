//! `locref verify`: every quote rechecked against the page it was copied from.
//!
//! Each answer that carries a quote (a phase, a matrix cell, a reporting cell, a regime, a VAT row, a
//! mandate text) names the page the quote was read on: the first URL of its sources. `verify` fetches
//! each such page once, politely (one request at a time, so never two at once to a host; a pause between
//! two requests to the same host; a user agent that names locref; a timeout; robots.txt obeyed), keeps a
//! text snapshot of it under `.locref-cache/verify/`, and says per answer what became of its sentence:
//! found, not found (the page changed), gone (4xx), moved (a redirect) or unreachable. It never edits
//! `sources/`: the curator decides what a changed page means for the answer.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::parse::tables::{
    Located, Pos, mandate_rows, matrix_rows, obligation_rows, regime_rows, reporting_support_rows,
    vat_rows,
};
use crate::workspace::Project;

/// What became of one answer's quote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// The page answered and its text holds the quote.
    Found,
    /// The page answered, but its text no longer holds the quote: the page changed.
    NotFound,
    /// The page answered 4xx: it is gone (or never was at that address).
    Gone,
    /// The page answered with a redirect: it moved (the report names where to).
    Moved,
    /// No answer: the host could not be reached, timed out, answered 5xx, or robots.txt forbids it.
    Unreachable,
}

impl Outcome {
    pub const ALL: [Outcome; 5] = [
        Outcome::Found,
        Outcome::NotFound,
        Outcome::Gone,
        Outcome::Moved,
        Outcome::Unreachable,
    ];

    pub fn words(self) -> &'static str {
        match self {
            Outcome::Found => "quote found",
            Outcome::NotFound => "quote not found (the page changed)",
            Outcome::Gone => "page gone",
            Outcome::Moved => "page moved",
            Outcome::Unreachable => "page unreachable",
        }
    }
}

/// One answer's line of the report.
#[derive(Debug, Clone, Serialize)]
pub struct Checked {
    /// `file:line` of the answer's row.
    pub at: String,
    /// `phase`, `matrix cell`, `regime`, `VAT row` or `mandate`, and its key.
    pub answer: String,
    pub country: String,
    pub url: String,
    pub quote: String,
    /// The day the source was last read, as the row records it.
    pub last_checked: Option<String>,
    pub outcome: Outcome,
    /// What the server said: the status, where a redirect points, or why no answer came.
    pub detail: String,
}

/// The whole report: what `--report` writes as JSON.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub checked_at: String,
    pub pages_fetched: usize,
    pub counts: BTreeMap<Outcome, usize>,
    pub answers: Vec<Checked>,
}

/// Which answers to recheck, and how to reach the pages.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Only this country's answers (`pl`).
    pub only: Option<String>,
    /// Only answers whose source was read on this day or later (`YYYY-MM-DD`): what was curated since.
    pub since: Option<String>,
    /// Send every request to this server (`http://127.0.0.1:8080`) with the page's path and query, instead
    /// of to the page's host: for a mirror of the pages, and for the tests' fixture server.
    pub via: Option<String>,
    /// The pause between two requests to one host.
    pub pause: Duration,
    /// How long one request may take.
    pub timeout: Duration,
}

/// An answer with a quote, as the tables hold it.
struct Quoted {
    at: String,
    answer: String,
    country: String,
    url: String,
    quote: String,
    last_checked: Option<String>,
}

fn quoted<T>(
    rows: &[Located<T>],
    what: &str,
    parts: impl Fn(&T) -> (String, &str, &[String], &str, Option<&str>),
) -> Vec<Quoted> {
    rows.iter()
        .filter_map(|r| {
            let (key, country, urls, quote, checked) = parts(&r.row);
            let url = urls.first()?;
            (!quote.is_empty()).then(|| Quoted {
                at: at(&r.pos),
                answer: format!("{what} {key}"),
                country: country.to_string(),
                url: url.clone(),
                quote: quote.to_string(),
                last_checked: checked.map(str::to_string),
            })
        })
        .collect()
}

fn at(pos: &Pos) -> String {
    format!("{}:{}", pos.path, pos.line)
}

/// Every answer of the project that carries a quote, in table order.
fn answers(project: &Project) -> Vec<Quoted> {
    let db = &project.db;
    let mut all = Vec::new();
    all.extend(quoted(&obligation_rows(db).value, "phase", |r| {
        (
            r.id(),
            &r.country,
            &r.source,
            &r.quote,
            r.last_verified.as_deref(),
        )
    }));
    all.extend(quoted(&matrix_rows(db).value, "matrix cell", |r| {
        (
            format!("{}-{}", r.country, r.erp),
            &r.country,
            &r.erp_source,
            &r.quote,
            r.last_verified.as_deref(),
        )
    }));
    all.extend(quoted(
        &reporting_support_rows(db).value,
        "reporting cell",
        |r| {
            (
                format!("{}-{} ({}) {}", r.topic, r.country, r.report_en, r.erp),
                &r.country,
                &r.source,
                &r.quote,
                r.last_verified.as_deref(),
            )
        },
    ));
    all.extend(quoted(&regime_rows(db).value, "regime", |r| {
        (
            r.id(),
            &r.country,
            &r.source,
            &r.quote,
            r.last_verified.as_deref(),
        )
    }));
    all.extend(quoted(&vat_rows(db).value, "VAT row", |r| {
        (
            r.country.clone(),
            &r.country,
            &r.source,
            &r.quote,
            r.last_verified.as_deref(),
        )
    }));
    all.extend(quoted(&mandate_rows(db).value, "mandate", |r| {
        (
            r.country.clone(),
            &r.country,
            &r.mandate_source,
            &r.mandate_quote,
            None,
        )
    }));
    all
}

/// The text of a page as a reader sees it: tags and scripts dropped, entities decoded, spaces collapsed,
/// typographic quotes and dashes made plain, so a quote copied from a rendered page is found in its HTML.
pub fn page_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len() / 2);
    let mut rest = html;
    while let Some(open) = rest.find('<') {
        out.push_str(&rest[..open]);
        out.push(' ');
        let after = &rest[open..];
        let starts = |tag: &str| {
            after
                .get(..tag.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(tag))
        };
        // The text of a script or a style is not the page's.
        let skip_to = if starts("<script") {
            "</script"
        } else if starts("<style") {
            "</style"
        } else if starts("<!--") {
            "-->"
        } else {
            ">"
        };
        // Found without lower-casing the rest of the page for each tag (which made a page quadratic).
        rest = match find_ignoring_case(after, skip_to) {
            Some(end) => {
                let end = end + skip_to.len();
                let tail = &after[end..];
                match (skip_to != ">").then(|| tail.find('>')).flatten() {
                    Some(close) => &tail[close + 1..],
                    None => tail,
                }
            }
            None => "",
        };
    }
    out.push_str(rest);
    normalize(&decode_entities(&out))
}

/// Where `needle` (ASCII) first occurs in `haystack`, ASCII case ignored.
fn find_ignoring_case(haystack: &str, needle: &str) -> Option<usize> {
    let needle = needle.as_bytes();
    haystack
        .as_bytes()
        .windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
}

/// Collapses whitespace and makes typographic characters plain, for comparing a quote with a page.
pub fn normalize(text: &str) -> String {
    let mapped: String = text
        .chars()
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' | '\u{201a}' | '\u{2032}' => '\'',
            '\u{201c}' | '\u{201d}' | '\u{201e}' | '\u{00ab}' | '\u{00bb}' | '\u{2033}' => '"',
            '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' => '-',
            '\u{00a0}' | '\u{202f}' | '\u{2009}' => ' ',
            c => c,
        })
        .collect();
    mapped.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn decode_entities(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let after = &rest[amp..];
        let end = after.find(';').filter(|e| *e <= 10);
        let decoded = end.and_then(|end| {
            let name = &after[1..end];
            let c = match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                "nbsp" => Some(' '),
                "rsquo" | "lsquo" => Some('\''),
                "rdquo" | "ldquo" => Some('"'),
                "ndash" | "mdash" => Some('-'),
                "hellip" => Some('…'),
                _ => name
                    .strip_prefix("#x")
                    .or_else(|| name.strip_prefix("#X"))
                    .and_then(|h| u32::from_str_radix(h, 16).ok())
                    .or_else(|| name.strip_prefix('#').and_then(|d| d.parse().ok()))
                    .and_then(char::from_u32),
            }?;
            Some((c, end + 1))
        });
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &after[len..];
            }
            None => {
                out.push('&');
                rest = &after[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Whether a page's text holds a quote: each of its excerpts (separated by `…`) in order, compared
/// without regard to case, spacing or typographic marks.
pub fn holds(page: &str, quote: &str) -> bool {
    let page = normalize(page).to_lowercase();
    let mut from = 0;
    for excerpt in quote.split(['…']) {
        let excerpt =
            normalize(excerpt.trim_matches(|c: char| c == '.' || c.is_whitespace())).to_lowercase();
        if excerpt.is_empty() {
            continue;
        }
        match page[from..].find(&excerpt) {
            Some(i) => from += i + excerpt.len(),
            None => return false,
        }
    }
    true
}

/// What fetching one page gave.
enum Fetched {
    Page(String),
    Status(u16),
    Redirect(u16, String),
    Failed(String),
}

/// The client: one request at a time, a pause per host, robots.txt per host.
struct Client {
    agent: ureq::Agent,
    via: Option<String>,
    pause: Duration,
    last_request: BTreeMap<String, Instant>,
    robots: BTreeMap<String, Option<texting_robots::Robot>>,
}

const USER_AGENT: &str = concat!(
    "locref-verify/",
    env!("CARGO_PKG_VERSION"),
    " (rechecks the quotes of a reference dataset; one request at a time)"
);
/// The robots.txt token locref answers to.
const ROBOT_NAME: &str = "locref-verify";
/// The most of a page that is read (a page larger than this is read up to it).
const PAGE_LIMIT: u64 = 8 * 1024 * 1024;

impl Client {
    fn new(options: &Options) -> Self {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(options.timeout))
            .user_agent(USER_AGENT)
            .max_redirects(0)
            .http_status_as_error(false)
            .build()
            .into();
        Client {
            agent,
            via: options.via.clone(),
            pause: options.pause,
            last_request: BTreeMap::new(),
            robots: BTreeMap::new(),
        }
    }

    /// Where a request for `url` goes: the URL itself, or the same path and query on `--via`'s server.
    fn target(&self, url: &str) -> String {
        match &self.via {
            Some(via) => {
                let rest = url.split_once("://").map_or(url, |(_, r)| r);
                let path = rest.find('/').map_or("/", |i| &rest[i..]);
                format!("{}{path}", via.trim_end_matches('/'))
            }
            None => url.to_string(),
        }
    }

    fn host(url: &str) -> String {
        crate::model::evidence::host_and_path(url)
            .map(|(h, _)| h)
            .unwrap_or_default()
    }

    fn get(&mut self, url: &str) -> Fetched {
        let host = Self::host(url);
        if let Some(last) = self.last_request.get(&host) {
            let waited = last.elapsed();
            if waited < self.pause {
                std::thread::sleep(self.pause - waited);
            }
        }
        self.last_request.insert(host, Instant::now());
        let target = self.target(url);
        match self.agent.get(&target).call() {
            Ok(mut response) => {
                let status = response.status().as_u16();
                if (300..400).contains(&status) {
                    let location = response
                        .headers()
                        .get("location")
                        .and_then(|l| l.to_str().ok())
                        .unwrap_or("")
                        .to_string();
                    return Fetched::Redirect(status, location);
                }
                if status != 200 {
                    return Fetched::Status(status);
                }
                match response
                    .body_mut()
                    .with_config()
                    .limit(PAGE_LIMIT)
                    .lossy_utf8(true)
                    .read_to_string()
                {
                    Ok(text) => Fetched::Page(text),
                    Err(e) => Fetched::Failed(format!("reading the page: {e}")),
                }
            }
            Err(e) => Fetched::Failed(e.to_string()),
        }
    }

    /// Whether robots.txt of `url`'s host lets locref read it (a robots.txt that cannot be read allows).
    fn allowed(&mut self, url: &str) -> bool {
        let host = Self::host(url);
        if !self.robots.contains_key(&host) {
            let scheme = url.split_once("://").map_or("https", |(s, _)| s);
            let robots_url = format!("{scheme}://{host}/robots.txt");
            let robot = match self.get(&robots_url) {
                Fetched::Page(text) => texting_robots::Robot::new(ROBOT_NAME, text.as_bytes()).ok(),
                _ => None,
            };
            self.robots.insert(host.clone(), robot);
        }
        match self.robots.get(&host) {
            Some(Some(robot)) => robot.allowed(url),
            _ => true,
        }
    }
}

/// The folder of the page snapshots: `.locref-cache/verify/` of the project.
pub fn snapshot_dir(root: &Path) -> PathBuf {
    root.join(".locref-cache").join("verify")
}

/// Rechecks every quote the options select. Writes only under `.locref-cache/verify/` (the text of each
/// page fetched), never under `sources/`.
pub fn verify(project: &Project, options: &Options, now: &str) -> std::io::Result<Report> {
    let selected: Vec<Quoted> = answers(project)
        .into_iter()
        .filter(|a| options.only.as_deref().is_none_or(|c| a.country == c))
        .filter(|a| {
            options
                .since
                .as_deref()
                .is_none_or(|since| a.last_checked.as_deref().is_some_and(|d| d >= since))
        })
        .collect();
    let dir = snapshot_dir(&project.root);
    std::fs::create_dir_all(&dir)?;
    let mut client = Client::new(options);
    let mut pages: BTreeMap<String, (Outcome, String, Option<String>)> = BTreeMap::new();
    let mut answers = Vec::new();
    for a in selected {
        if !pages.contains_key(&a.url) {
            let fetched = if client.allowed(&a.url) {
                client.get(&a.url)
            } else {
                Fetched::Failed("robots.txt does not allow locref to read this page".into())
            };
            let entry = match fetched {
                Fetched::Page(html) => {
                    let text = page_text(&html);
                    let name = blake3::hash(a.url.as_bytes()).to_hex();
                    std::fs::write(
                        dir.join(format!("{}.txt", &name[..16])),
                        format!("{}\n\n{text}\n", a.url),
                    )?;
                    (Outcome::Found, "200".to_string(), Some(text))
                }
                Fetched::Status(status) if (400..500).contains(&status) => {
                    (Outcome::Gone, format!("HTTP {status}"), None)
                }
                Fetched::Status(status) => (Outcome::Unreachable, format!("HTTP {status}"), None),
                Fetched::Redirect(status, location) => {
                    (Outcome::Moved, format!("HTTP {status} to {location}"), None)
                }
                Fetched::Failed(why) => (Outcome::Unreachable, why, None),
            };
            pages.insert(a.url.clone(), entry);
        }
        let (page_outcome, detail, text) = &pages[&a.url];
        let outcome = match (page_outcome, text) {
            (Outcome::Found, Some(text)) if holds(text, &a.quote) => Outcome::Found,
            (Outcome::Found, _) => Outcome::NotFound,
            (other, _) => *other,
        };
        answers.push(Checked {
            at: a.at,
            answer: a.answer,
            country: a.country,
            url: a.url,
            quote: a.quote,
            last_checked: a.last_checked,
            outcome,
            detail: detail.clone(),
        });
    }
    let mut counts: BTreeMap<Outcome, usize> = Outcome::ALL.iter().map(|o| (*o, 0)).collect();
    for a in &answers {
        *counts.entry(a.outcome).or_default() += 1;
    }
    Ok(Report {
        checked_at: now.to_string(),
        pages_fetched: pages.len(),
        counts,
        answers,
    })
}

#[cfg(test)]
mod tests {
    use super::{holds, page_text};

    #[test]
    fn a_quote_is_found_in_a_page_whatever_its_markup_spacing_and_marks() {
        let html = "<html><head><style>p{}</style><script>var a='<p>';</script></head><body><p>From 1&nbsp;February 2026,\n large taxpayers <b>must</b> issue e&#8209;invoices in KSeF.</p><p>Other text.</p></body></html>";
        let text = page_text(html);
        assert!(!text.contains("var a"), "{text}");
        assert!(holds(
            &text,
            "From 1 February 2026, large taxpayers must issue e-invoices in KSeF."
        ));
        assert!(holds(&text, "From 1 February 2026 … Other text."));
        assert!(
            !holds(&text, "Other text. … From 1 February 2026"),
            "excerpts in order"
        );
        assert!(!holds(&text, "From 1 February 2027"));
    }

    proptest::proptest! {
        #[test]
        fn any_bytes_are_read_as_text_without_a_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512)) {
            let html = String::from_utf8_lossy(&bytes);
            let text = page_text(&html);
            let _ = holds(&text, &html);
        }
    }
}
