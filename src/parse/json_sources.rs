//! The JSON sources: the ERP register, news items and sponsor placements.
//!
//! serde_json locates syntax and shape errors; semantic errors (a bad URL, a bad date) are located at the
//! first occurrence of the offending value in the file.

use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::{formula_problem, is_http_url, is_iso_date, source_text};
use crate::diagnostics::{Checked, Diagnostic, line_column};

pub(crate) const ERP_REGISTER: &str = "sources/registers/erps.json";
pub(crate) const NEWS: &str = "sources/news.json";
pub(crate) const SPONSORS: &str = "sources/sponsors.json";

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ErpReg {
    pub id: String,
    pub name: String,
    pub vendor: Option<String>,
    #[serde(default)]
    pub category: Option<String>,
    #[serde(default)]
    pub profile: Option<String>,
    #[serde(default)]
    pub website: Option<String>,
    /// What was searched for the ERP's e-invoicing support, for an ERP whose every matrix cell is
    /// unknown: the pages say it instead of a column of empty cells.
    #[serde(default)]
    pub support_search: Option<SupportSearch>,
}

/// A search that found no source for an ERP's e-invoicing support in any country: when, where, and
/// what it found.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct SupportSearch {
    /// YYYY-MM-DD.
    pub searched_on: String,
    /// Where and for what (the stored vendor documentation, the EU factsheets, …).
    pub searched: String,
    /// What that search found.
    pub found: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NewsSource {
    pub id: String,
    /// Shared with the API value and the news page (see `CountryFactRow::value`).
    pub title: std::sync::Arc<str>,
    pub url: String,
    pub date: Option<String>,
    #[serde(default)]
    pub first_seen: Option<String>,
    #[serde(default)]
    pub erps: Vec<String>,
    #[serde(default)]
    pub source: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SponsorSource {
    pub id: String,
    pub name: Option<String>,
    #[serde(default)]
    pub scope: Option<String>,
    #[serde(default)]
    pub tagline: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub start: Option<String>,
    #[serde(default)]
    pub end: Option<String>,
}

/// Locates the first occurrence of `value` as a JSON string in `text` (1:1 when not found).
pub(crate) fn locate_json_value(
    path: &str,
    text: &str,
    value: &str,
    message: String,
) -> Diagnostic {
    let needle = serde_json::to_string(value).unwrap_or_default();
    let (line, column) = text
        .find(&needle)
        .map_or((1, 1), |offset| line_column(text, offset));
    Diagnostic::new(path, line, column, message)
}

/// Parses a JSON array file into records, or a located syntax/shape error; returns the file's text too,
/// for the checks that locate a value in it.
fn parse_array<'db, T: DeserializeOwned>(
    db: &'db dyn salsa::Database,
    path: &str,
) -> Result<(Vec<T>, &'db str), Diagnostic> {
    let text = source_text(db, path)?;
    match serde_json::from_str::<Vec<T>>(text) {
        Ok(items) => {
            if let Some(problem) = formula_string(path, text) {
                return Err(problem);
            }
            if let Some(problem) = control_string(path, text) {
                return Err(problem);
            }
            Ok((items, text))
        }
        Err(error) => Err(Diagnostic::new(
            path,
            // serde_json counts column 0 when the error is at a line's first character (right after
            // the newline); a diagnostic's line and column are 1-based.
            (error.line() as u32).max(1),
            (error.column() as u32).max(1),
            error.to_string(),
        )),
    }
}

/// The first string of a JSON file that starts like a spreadsheet formula (see [`formula_problem`]): the
/// same rule as for CSV cells, so a value means the same in every published format.
fn formula_string(path: &str, text: &str) -> Option<Diagnostic> {
    fn first(value: &serde_json::Value) -> Option<&str> {
        match value {
            serde_json::Value::String(s) => formula_problem(s).map(|_| s.as_str()),
            serde_json::Value::Array(items) => items.iter().find_map(first),
            serde_json::Value::Object(map) => map.values().find_map(first),
            _ => None,
        }
    }
    if !may_start_a_string_like_a_formula(text) {
        return None;
    }
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    let bad = first(&value)?;
    Some(locate_json_value(path, text, bad, formula_problem(bad)?))
}

/// The first string of a JSON file that holds a control character written as an escape (`\n`, `\u001b`):
/// the bytes of the file are checked for control characters, and this holds the decoded strings to the
/// same rule, so a title cannot break a line, spell a placeholder or colour a terminal.
fn control_string(path: &str, text: &str) -> Option<Diagnostic> {
    fn first(value: &serde_json::Value) -> Option<(&str, char)> {
        match value {
            serde_json::Value::String(s) => {
                s.chars().find(|c| c.is_control()).map(|c| (s.as_str(), c))
            }
            serde_json::Value::Array(items) => items.iter().find_map(first),
            serde_json::Value::Object(map) => map
                .iter()
                .find_map(|(k, v)| first_in_key(k).or_else(|| first(v))),
            _ => None,
        }
    }
    fn first_in_key(key: &str) -> Option<(&str, char)> {
        key.chars().find(|c| c.is_control()).map(|c| (key, c))
    }
    // Only an escape can put a control character in a string of a file whose bytes hold none.
    let bytes = text.as_bytes();
    let escaped = memchr::memchr_iter(b'\\', bytes).any(|at| {
        matches!(
            bytes.get(at + 1),
            Some(b'b' | b'f' | b'n' | b'r' | b't' | b'u')
        )
    });
    if !escaped {
        return None;
    }
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    let (bad, c) = first(&value)?;
    Some(locate_json_value(
        path,
        text,
        bad,
        format!(
            "control character U+{:04X}, written as an escape, is not allowed in a value",
            c as u32
        ),
    ))
}

/// Whether some string of a JSON text may start like a formula: a quote followed by `=`, `+`, `-`, `@`
/// or an escape (a tab or carriage return is always escaped in JSON, and any character may be written as
/// `\u…`). When no quote is, no string starts like one, and the file need not be parsed a second time
/// (the news file is megabytes at scale).
fn may_start_a_string_like_a_formula(text: &str) -> bool {
    let bytes = text.as_bytes();
    memchr::memchr_iter(b'"', bytes)
        .any(|at| matches!(bytes.get(at + 1), Some(b'=' | b'+' | b'-' | b'@' | b'\\')))
}

fn check_url(path: &str, text: &str, url: Option<&String>, diagnostics: &mut Vec<Diagnostic>) {
    if let Some(url) = url.filter(|u| !is_http_url(u)) {
        diagnostics.push(locate_json_value(
            path,
            text,
            url,
            format!("`{url}` is not an http(s) URL"),
        ));
    }
}

fn check_date(path: &str, text: &str, date: Option<&String>, diagnostics: &mut Vec<Diagnostic>) {
    if let Some(date) = date.filter(|d| !is_iso_date(d)) {
        diagnostics.push(locate_json_value(
            path,
            text,
            date,
            format!("`{date}` is not a date; expected YYYY-MM-DD"),
        ));
    }
}

fn check_slug(path: &str, text: &str, id: &str, diagnostics: &mut Vec<Diagnostic>) {
    let ok = !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !id.starts_with('-')
        && !id.ends_with('-');
    if !ok {
        diagnostics.push(locate_json_value(
            path,
            text,
            id,
            format!("id `{id}` must be a lower-case hyphenated slug"),
        ));
    }
}

#[salsa::tracked(returns(ref))]
pub(crate) fn erp_register_rows(db: &dyn salsa::Database) -> Checked<Vec<ErpReg>> {
    let (erps, text) = match parse_array::<ErpReg>(db, ERP_REGISTER) {
        Ok(parsed) => parsed,
        Err(diagnostic) => return Checked::new(Vec::new(), vec![diagnostic]),
    };
    let mut diagnostics = Vec::new();
    for erp in &erps {
        check_slug(ERP_REGISTER, text, &erp.id, &mut diagnostics);
        check_url(ERP_REGISTER, text, erp.website.as_ref(), &mut diagnostics);
        if let Some(search) = &erp.support_search {
            check_date(
                ERP_REGISTER,
                text,
                Some(&search.searched_on),
                &mut diagnostics,
            );
        }
    }
    Checked::new(erps, diagnostics)
}

#[salsa::tracked(returns(ref))]
pub(crate) fn news_rows(db: &dyn salsa::Database) -> Checked<Vec<NewsSource>> {
    let (items, text) = match parse_array::<NewsSource>(db, NEWS) {
        Ok(parsed) => parsed,
        Err(diagnostic) => return Checked::new(Vec::new(), vec![diagnostic]),
    };
    let mut diagnostics = Vec::new();
    for item in &items {
        check_slug(NEWS, text, &item.id, &mut diagnostics);
        check_url(NEWS, text, Some(&item.url), &mut diagnostics);
        check_date(NEWS, text, item.date.as_ref(), &mut diagnostics);
        if let Some(seen) = item
            .first_seen
            .as_ref()
            .filter(|s| s.parse::<jiff::Timestamp>().is_err())
        {
            diagnostics.push(locate_json_value(
                NEWS,
                text,
                seen,
                format!("`{seen}` is not an RFC 3339 timestamp"),
            ));
        }
    }
    Checked::new(items, diagnostics)
}

#[salsa::tracked(returns(ref))]
pub(crate) fn sponsor_rows(db: &dyn salsa::Database) -> Checked<Vec<SponsorSource>> {
    let (items, text) = match parse_array::<SponsorSource>(db, SPONSORS) {
        Ok(parsed) => parsed,
        Err(diagnostic) => return Checked::new(Vec::new(), vec![diagnostic]),
    };
    let mut diagnostics = Vec::new();
    for item in &items {
        check_slug(SPONSORS, text, &item.id, &mut diagnostics);
        check_url(SPONSORS, text, item.url.as_ref(), &mut diagnostics);
        check_date(SPONSORS, text, item.start.as_ref(), &mut diagnostics);
        check_date(SPONSORS, text, item.end.as_ref(), &mut diagnostics);
    }
    Checked::new(items, diagnostics)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Any JSON value whose strings (keys and values) often start with the characters a formula starts
    /// with, written with and without escapes.
    fn json_value() -> impl Strategy<Value = serde_json::Value> {
        let text = "[=+\\-@\t\r\"\\\\a é\u{1}]{0,4}";
        let leaf = prop_oneof![
            text.prop_map(serde_json::Value::from),
            any::<i32>().prop_map(serde_json::Value::from),
            Just(serde_json::Value::Null),
        ];
        leaf.prop_recursive(3, 24, 4, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
                prop::collection::btree_map(text, inner, 0..4)
                    .prop_map(|map| serde_json::Value::Object(map.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// The quick scan never skips a file the full check would reject: pretty or compact, with a
        /// character written as `\u…` or as itself.
        #[test]
        fn a_formula_string_is_never_skipped(value in json_value(), pretty: bool, escape_all: bool) {
            let mut text = match pretty {
                true => serde_json::to_string_pretty(&value).unwrap(),
                false => serde_json::to_string(&value).unwrap(),
            };
            if escape_all {
                // `=` may be written `\u003d`: still a formula once parsed.
                text = text.replace('=', "\\u003d");
            }
            let holds_one = {
                fn any_formula(value: &serde_json::Value) -> bool {
                    match value {
                        serde_json::Value::String(s) => formula_problem(s).is_some(),
                        serde_json::Value::Array(items) => items.iter().any(any_formula),
                        serde_json::Value::Object(map) => map.values().any(any_formula),
                        _ => false,
                    }
                }
                any_formula(&value)
            };
            prop_assert_eq!(formula_string("sources/news.json", &text).is_some(), holds_one);
            if holds_one {
                prop_assert!(may_start_a_string_like_a_formula(&text));
            }
        }
    }

    #[test]
    fn a_file_without_a_formula_start_is_scanned_once() {
        let text = r#"[{"id": "a", "title": "VAT-free: a 2-step plan", "n": -1}]"#;
        assert!(!may_start_a_string_like_a_formula(text));
        for start in ["=", "+", "-", "@", "\\t", "\\u003d"] {
            let text = format!(r#"[{{"id": "a", "title": "{start}SUM(A1)"}}]"#);
            assert!(may_start_a_string_like_a_formula(&text), "{text}");
            assert!(
                formula_string("sources/news.json", &text).is_some(),
                "{text}"
            );
        }
    }
}
