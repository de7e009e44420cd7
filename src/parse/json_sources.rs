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

/// Parses a JSON array file into records, or a located syntax/shape error.
fn parse_array<T: DeserializeOwned>(
    db: &dyn salsa::Database,
    path: &str,
) -> Result<(Vec<T>, String), Diagnostic> {
    let text = source_text(db, path)?;
    match serde_json::from_str::<Vec<T>>(text) {
        Ok(items) => {
            if let Some(problem) = formula_string(path, text) {
                return Err(problem);
            }
            Ok((items, text.to_string()))
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
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    let bad = first(&value)?;
    Some(locate_json_value(path, text, bad, formula_problem(bad)?))
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
        check_slug(ERP_REGISTER, &text, &erp.id, &mut diagnostics);
        check_url(ERP_REGISTER, &text, erp.website.as_ref(), &mut diagnostics);
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
        check_slug(NEWS, &text, &item.id, &mut diagnostics);
        check_url(NEWS, &text, Some(&item.url), &mut diagnostics);
        check_date(NEWS, &text, item.date.as_ref(), &mut diagnostics);
        if let Some(seen) = item
            .first_seen
            .as_ref()
            .filter(|s| s.parse::<jiff::Timestamp>().is_err())
        {
            diagnostics.push(locate_json_value(
                NEWS,
                &text,
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
        check_slug(SPONSORS, &text, &item.id, &mut diagnostics);
        check_url(SPONSORS, &text, item.url.as_ref(), &mut diagnostics);
        check_date(SPONSORS, &text, item.start.as_ref(), &mut diagnostics);
        check_date(SPONSORS, &text, item.end.as_ref(), &mut diagnostics);
    }
    Checked::new(items, diagnostics)
}
