//! The text rules the pages and the feeds share: the Markdown escapes of a table cell and a link target,
//! the names of sources, and the fact texts' clause convention said in words ([`plain_clauses`]).
//! A leaf of `render`: it imports no other file of it.

use minijinja::Value;
use serde::Serialize;

/// Escapes a value for a Markdown table cell (and Markdown text): backslashes, `|`, `<` and the brackets
/// of link and image syntax are backslash-escaped (so data can never become a link, an image or raw
/// HTML in a twin or in `llms-full.txt`), line breaks become `<br>`.
pub(crate) fn md_cell(value: Value) -> String {
    if value.is_undefined() || value.is_none() {
        return String::new();
    }
    let text = value.to_string();
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    let escaped = |b: u8| {
        (b == b'\\')
            | (b == b'|')
            | (b == b'<')
            | (b == b'[')
            | (b == b']')
            | (b == b'\n')
            | (b == b'\r')
    };
    locref_escape::bytescan::write_replacing(&mut out, &text, escaped, |rest| match rest {
        // `\r\n` is one line break: its `\r` is dropped and its `\n` makes the `<br>`.
        [b'\r', b'\n', ..] => Some(("", 1)),
        _ => md_escape_of(rest[0]).map(|with| (with, 1)),
    })
    .expect("writing to a String cannot fail");
    out
}

/// What [`md_cell`] writes for one byte of a cell, if it is not the byte itself.
fn md_escape_of(byte: u8) -> Option<&'static str> {
    match byte {
        b'\\' => Some("\\\\"),
        b'|' => Some("\\|"),
        b'<' => Some("\\<"),
        b'[' => Some("\\["),
        b']' => Some("\\]"),
        b'\n' | b'\r' => Some("<br>"),
        _ => None,
    }
}

/// Makes a URL safe as a Markdown link target inside a table: `(`, `)`, `|`, `\` and spaces are
/// percent-encoded (the same URL to a browser; source URLs are checked to be http(s) with no whitespace).
pub(crate) fn md_url(value: Value) -> String {
    let mut out = String::new();
    for c in value.to_string().chars() {
        match c {
            '(' => out.push_str("%28"),
            ')' => out.push_str("%29"),
            '|' => out.push_str("%7C"),
            '\\' => out.push_str("%5C"),
            ' ' => out.push_str("%20"),
            '<' => out.push_str("%3C"),
            '>' => out.push_str("%3E"),
            _ => out.push(c),
        }
    }
    out
}

/// Who published a source, as a link names it: its host without `www.` (`learn.microsoft.com`), and for
/// GitHub the owner too (`github.com/MicrosoftDocs`); the path when the URL has no host.
pub(crate) fn source_name(url: &str) -> String {
    let Some((_, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let mut parts = rest.split(['/', '?', '#']);
    let host = parts.next().unwrap_or_default().to_ascii_lowercase();
    let host = host.strip_prefix("www.").unwrap_or(&host).to_string();
    match (host.as_str(), parts.next()) {
        ("github.com", Some(owner)) if !owner.is_empty() => format!("github.com/{owner}"),
        _ => host,
    }
}

/// A source URL and the name its link shows.
#[derive(Serialize)]
pub(crate) struct NamedSource {
    pub(crate) url: String,
    pub(crate) name: String,
}

/// A list of source URLs, named by [`source_name`]; two sources of one publisher are told apart by a
/// number (`vatupdate.com`, `vatupdate.com (2)`).
pub(crate) fn named_sources(urls: &Value) -> Vec<NamedSource> {
    let urls: Vec<String> = match urls.try_iter() {
        Ok(items) => items
            .filter(|v| !v.is_none() && !v.is_undefined())
            .map(|v| v.to_string())
            .collect(),
        Err(_) if urls.is_none() || urls.is_undefined() => Vec::new(),
        Err(_) => vec![urls.to_string()],
    };
    named_source_list(&urls)
}

/// [`named_sources`] of a list of URLs (what `/compare/{code}.json` says of each cell).
pub(crate) fn named_source_list(urls: &[impl AsRef<str>]) -> Vec<NamedSource> {
    let urls: Vec<&str> = urls.iter().map(AsRef::as_ref).collect();
    let names: Vec<String> = urls.iter().map(|u| source_name(u)).collect();
    urls.iter()
        .zip(&names)
        .enumerate()
        .map(|(i, (url, name))| {
            let before = names[..i].iter().filter(|n| *n == name).count();
            let name = if before == 0 {
                name.clone()
            } else {
                format!("{name} ({})", before + 1)
            };
            NamedSource {
                url: url.to_string(),
                name,
            }
        })
        .collect()
}

/// The sources of one cell grouped by their publisher's name, in the order each first comes: a cell
/// names each host once (`ec.europa.eu`, then its further pages as `2`, `3`), so a reader sees who
/// published its sources, and every page stays a link.
#[derive(Serialize)]
pub(crate) struct SourceGroup {
    /// The host's name, the text of the link to its first page.
    pub(crate) name: String,
    pub(crate) url: String,
    /// The host's further pages, each named by its number among them (`2`, `3`).
    pub(crate) more: Vec<NamedSource>,
}

/// [`named_sources`], one group per host (see [`SourceGroup`]).
pub(crate) fn source_groups(urls: &Value) -> Vec<SourceGroup> {
    let mut groups: Vec<SourceGroup> = Vec::new();
    for source in named_sources(urls) {
        let host = source_name(&source.url);
        match groups.iter_mut().find(|g| g.name == host) {
            Some(group) => {
                let number = group.more.len() + 2;
                group.more.push(NamedSource {
                    url: source.url,
                    name: number.to_string(),
                });
            }
            None => groups.push(SourceGroup {
                name: host,
                url: source.url,
                more: Vec::new(),
            }),
        }
    }
    groups
}

/// The fact texts' clause convention (`SAF-T: no.`, `Real-time reporting: yes (…)`), written for curators
/// and the consistency check, said in words on the pages. The data and the API keep the text as it is.
///
/// The rules, in words (each clause at a word boundary): `B2B: ` and `B2G: ` name their e-invoicing;
/// `e-invoicing: enacted, date pending` says the start date is not yet set (also right after a `B2B: `
/// it named); `Real-time reporting:`, `SAF-T:` and `Audit file:` followed by `no`, `yes`, `from` or `on
/// request` say what is required. One pass of one pattern: a page's change table runs this on every old
/// and new value, and ten passes were a tenth of an x100 edit. Public: the pages and the feeds show a
/// change's sentence through it, and the tests hold them to that.
pub fn plain_clauses(text: &str) -> String {
    static CLAUSE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(concat!(
            r"\b(?:",
            r"(?<scope>B2[BG]): (?<pending>enacted, date pending)?",
            r"|(?<einvoicing>e-invoicing: )enacted, date pending",
            r"|(?<clause>Real-time reporting|SAF-T|Audit file): (?<answer>no|yes|from|on request)\b",
            r")"
        ))
        .expect("a valid pattern")
    });
    CLAUSE
        .replace_all(text, |found: &regex::Captures| {
            const NOT_YET_SET: &str = "enacted, start date not yet set";
            if let Some(scope) = found.name("scope") {
                let pending = if found.name("pending").is_some() {
                    NOT_YET_SET
                } else {
                    ""
                };
                return format!("{} e-invoicing: {pending}", scope.as_str());
            }
            if found.name("einvoicing").is_some() {
                return format!("e-invoicing: {NOT_YET_SET}");
            }
            let answer = found.name("answer").map_or("", |m| m.as_str());
            let said = match (&found["clause"], answer) {
                ("Real-time reporting", "no") => "Real-time reporting: not required",
                ("Real-time reporting", "yes") => "Real-time reporting: required",
                ("Real-time reporting", "from") => "Real-time reporting: required from",
                ("SAF-T", "no") => "SAF-T: not required",
                ("SAF-T", "from") => "SAF-T: required from",
                ("Audit file", "no") => "Standard audit file: not required",
                ("Audit file", "on request") => "Standard audit file: required on request",
                // A clause with an answer it has no words for stays as written.
                _ => return found[0].to_string(),
            };
            said.to_string()
        })
        .into_owned()
}
