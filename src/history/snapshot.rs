//! The snapshot of a release: the published answers of each country as they were released, frozen
//! (stored as one record a country, named by an index; see [`split_records`]).
//!
//! JSON Lines, one record per line, sorted by key, so that two snapshots compare line by line (`git diff
//! --no-index` of two records shows what changed). A country's line (key: its code) comes first, then its
//! facts (key: the fact id, which starts with the code and a hyphen), then its other answers (key: their
//! kind and id, after every fact of the country):
//!
//! ```text
//! {"country":"it","toggles":{"e_invoicing_mandatory_b2b":true,…,"audit_file_on_request":false},"answers":["local-erp",…,"vat"]}
//! {"id":"it-currency","erp":null,"label":"Currency","value":"Euro (EUR)","verification":"official","source_urls":["https://…"],"last_checked":"2026-10-01","effective_date":null}
//! {"answer":"phase","id":"it-b2b-e-invoicing-main","erp":null,"label":"B2B e-invoicing","fields":{"status":"in-force","applies_from":"2019-01-01",…},"verification":"official","source_urls":["https://…"],"last_checked":"2026-11-20"}
//! ```
//!
//! A fact line holds the fields of the API's `Fact` that a change is made of: `value`, `verification`,
//! `source_urls`, `last_checked` (the check date), `effective_date`, and `erp` and `label` to name it.
//! An answer line holds one answer of a kind of [`AnswerKind`] (a phase, a regime, …): its fields as the
//! data files publish them (`null` when unknown), its grade (`null` where its table has none), sources
//! and check date.
//!
//! The country's line says which kinds of answer its record carries (`answers`): a record written before
//! answers were recorded has no such list and carries none, only facts and toggles. A diff compares only
//! the kinds both of its records carry, so the first release that records a kind shows none of its
//! answers as added. Parsing never panics: every problem is a diagnostic at its line (and, where it can
//! be found, the column of the field).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::api_types::{Fact, Toggles, Verification};
use crate::derived::answers::{Answer, AnswerKind};
use crate::diagnostics::{Diagnostic, PARSER_LIMIT};
use crate::parse::{is_iso_date, is_recorded_http_url};

/// One published fact as a release records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotFact {
    pub id: String,
    pub erp: Option<String>,
    pub label: String,
    pub value: std::sync::Arc<str>,
    pub verification: Verification,
    pub source_urls: Vec<String>,
    pub last_checked: Option<String>,
    pub effective_date: Option<String>,
}

impl SnapshotFact {
    /// The recorded fields of a published fact (the API's `Fact`, as `derived` makes it).
    pub fn of(fact: &Fact) -> SnapshotFact {
        SnapshotFact {
            id: fact.id.clone(),
            erp: fact.erp.clone(),
            label: fact.label.clone(),
            value: fact.value.clone(),
            verification: fact.verification,
            source_urls: fact.source_urls.clone(),
            last_checked: fact.last_checked.clone(),
            effective_date: fact.effective_date.clone(),
        }
    }
}

/// One country as a release records it: its toggles (name -> value, in the published order; a toggle
/// the release did not know is absent), its facts, sorted by id, and its other answers, sorted by kind
/// and id, of the kinds it carries (`carries`: none in a record made before answers were recorded).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CountryState {
    pub toggles: Vec<(String, Option<bool>)>,
    pub facts: Vec<SnapshotFact>,
    /// The kinds of answer recorded, in name order: a kind not listed was not recorded (not "none").
    pub carries: Vec<AnswerKind>,
    pub answers: Vec<Answer>,
}

impl CountryState {
    /// A country's state from its published facts, toggles and other answers (every kind).
    pub fn new(facts: &[Fact], toggles: &Toggles, answers: &[Answer]) -> CountryState {
        let mut facts: Vec<SnapshotFact> = facts.iter().map(SnapshotFact::of).collect();
        facts.sort_by(|a, b| a.id.cmp(&b.id));
        let mut answers = answers.to_vec();
        answers.sort_by(|a, b| (a.kind, &a.id).cmp(&(b.kind, &b.id)));
        CountryState {
            toggles: toggles
                .values()
                .iter()
                .map(|(name, value)| (name.to_string(), *value))
                .collect(),
            facts,
            carries: AnswerKind::ALL.to_vec(),
            answers,
        }
    }

    /// Whether this state recorded the answers of `kind`.
    pub fn carries(&self, kind: AnswerKind) -> bool {
        self.carries.contains(&kind)
    }

    pub fn toggle(&self, name: &str) -> Option<Option<bool>> {
        self.toggles
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, value)| *value)
    }
}

/// A whole snapshot: country code -> state.
pub type Snapshot = BTreeMap<String, CountryState>;

/// The line of a country.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CountryLine {
    country: String,
    toggles: Map<String, Value>,
    /// The kinds of answer the record carries; absent in a record made before answers were recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    answers: Option<Vec<String>>,
}

/// The line of an answer other than a fact.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct AnswerLine {
    answer: String,
    id: String,
    erp: Option<String>,
    label: String,
    fields: Map<String, Value>,
    verification: Option<String>,
    source_urls: Vec<String>,
    last_checked: Option<String>,
}

/// The key an answer's line is sorted by: after its country's facts (`.` sorts after `-`), by kind,
/// then id (a space sorts before every character of a kind or an id, so `partner` comes before
/// `partner-flag`, as [`AnswerKind`] orders them).
fn answer_key(code: &str, kind: &str, id: &str) -> String {
    format!("{code}.{kind} {id}")
}

/// The line of a fact.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FactLine {
    id: String,
    erp: Option<String>,
    label: String,
    value: String,
    verification: String,
    source_urls: Vec<String>,
    last_checked: Option<String>,
    effective_date: Option<String>,
}

/// The text of a snapshot of `countries` (any order: the lines are sorted by key).
pub fn write<'a>(countries: impl IntoIterator<Item = (&'a str, &'a CountryState)>) -> String {
    let mut lines: Vec<(String, String)> = Vec::new();
    for (code, state) in countries {
        let toggles: Map<String, Value> = state
            .toggles
            .iter()
            .map(|(name, value)| (name.clone(), json_bool(*value)))
            .collect();
        let line = CountryLine {
            country: code.to_string(),
            toggles,
            answers: (!state.carries.is_empty())
                .then(|| state.carries.iter().map(|k| k.name().to_string()).collect()),
        };
        lines.push((code.to_string(), to_line(&line)));
        for answer in &state.answers {
            let line = AnswerLine {
                answer: answer.kind.name().to_string(),
                id: answer.id.clone(),
                erp: answer.erp.clone(),
                label: answer.label.clone(),
                fields: answer
                    .fields
                    .iter()
                    .map(|(name, value)| {
                        (
                            name.to_string(),
                            value.clone().map_or(Value::Null, Value::String),
                        )
                    })
                    .collect(),
                verification: answer.verification.map(|v| v.as_str().to_string()),
                source_urls: answer.source_urls.clone(),
                last_checked: answer.last_checked.clone(),
            };
            lines.push((
                answer_key(code, answer.kind.name(), &answer.id),
                to_line(&line),
            ));
        }
        for fact in &state.facts {
            let line = FactLine {
                id: fact.id.clone(),
                erp: fact.erp.clone(),
                label: fact.label.clone(),
                value: fact.value.to_string(),
                verification: fact.verification.as_str().to_string(),
                source_urls: fact.source_urls.clone(),
                last_checked: fact.last_checked.clone(),
                effective_date: fact.effective_date.clone(),
            };
            lines.push((fact.id.clone(), to_line(&line)));
        }
    }
    lines.sort();
    let mut text = String::new();
    for (_, line) in lines {
        text.push_str(&line);
        text.push('\n');
    }
    text
}

fn json_bool(value: Option<bool>) -> Value {
    value.map_or(Value::Null, Value::Bool)
}

fn to_line<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("snapshot lines serialize")
}

/// Collects a snapshot's problems, keeping at most [`PARSER_LIMIT`] and counting the rest.
struct Problems<'a> {
    path: &'a str,
    list: Vec<Diagnostic>,
    hidden: usize,
    hidden_from: u32,
}

impl Problems<'_> {
    fn push(&mut self, line: u32, column: u32, message: String) {
        if self.list.len() < PARSER_LIMIT {
            self.list
                .push(Diagnostic::new(self.path, line, column, message));
        } else {
            if self.hidden == 0 {
                self.hidden_from = line;
            }
            self.hidden += 1;
        }
    }

    fn finish(mut self) -> Vec<Diagnostic> {
        if self.hidden > 0 {
            self.list.push(Diagnostic::more_in_file(
                self.path,
                self.hidden_from,
                self.hidden,
            ));
        }
        self.list
    }
}

/// The 1-based character column of `"key":` in `line`, or 1.
fn column_of(line: &str, key: &str) -> u32 {
    line.find(&format!("\"{key}\":"))
        .map_or(1, |at| line[..at].chars().count() as u32 + 1)
}

/// Whether `text` holds a control character other than a line feed or a tab (a JSON escape can make one
/// that the file's own check does not see).
fn has_control(text: &str) -> bool {
    text.chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
}

fn is_country_code(code: &str) -> bool {
    code.len() == 2 && code.bytes().all(|b| b.is_ascii_lowercase())
}

fn is_slug(text: &str) -> bool {
    !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !text.starts_with('-')
        && !text.ends_with('-')
}

/// Parses the text of a snapshot (decoded: UTF-8, LF line ends). Returns what could be read and every
/// problem; a snapshot with problems is not used.
pub fn parse(path: &str, text: &str) -> (Snapshot, Vec<Diagnostic>) {
    let mut problems = Problems {
        path,
        list: Vec::new(),
        hidden: 0,
        hidden_from: 0,
    };
    let mut snapshot = Snapshot::new();
    // The key of the last line read and the country whose facts may follow.
    let mut last_key: Option<String> = None;
    let mut country: Option<String> = None;
    for (i, line) in text.split('\n').enumerate() {
        let n = i as u32 + 1;
        if line.is_empty() {
            continue;
        }
        let Some(record) = read_line(&mut problems, n, line) else {
            continue;
        };
        let key = match record {
            Line::Country(record) => {
                read_country(&mut problems, n, line, &record, &mut snapshot);
                country = Some(record.country.clone());
                record.country
            }
            Line::Fact(record) => {
                let state = country
                    .as_ref()
                    .filter(|c| record.id.starts_with(&format!("{c}-")))
                    .and_then(|c| snapshot.get_mut(c));
                match state {
                    Some(state) => {
                        if let Some(fact) = read_fact(&mut problems, n, line, &record) {
                            state.facts.push(fact);
                        }
                    }
                    None => problems.push(
                        n,
                        column_of(line, "id"),
                        format!(
                            "fact `{}` does not follow its country's line: a fact id starts with its country's code and a hyphen, after that country's `{{\"country\":…}}` line",
                            record.id
                        ),
                    ),
                }
                record.id
            }
            Line::Answer(record) => {
                let state = country
                    .as_ref()
                    .filter(|c| record.id.starts_with(&format!("{c}-")))
                    .and_then(|c| snapshot.get_mut(c).map(|state| (c.as_str(), state)));
                match state {
                    Some((code, state)) => {
                        let key = answer_key(code, &record.answer, &record.id);
                        if let Some(answer) = read_answer(&mut problems, n, line, &record, state) {
                            state.answers.push(answer);
                        }
                        key
                    }
                    None => {
                        problems.push(
                            n,
                            column_of(line, "id"),
                            format!(
                                "answer `{}` does not follow its country's line: an answer's id starts with its country's code and a hyphen, after that country's `{{\"country\":…}}` line and its facts",
                                record.id
                            ),
                        );
                        record.id
                    }
                }
            }
        };
        if let Some(last) = &last_key {
            if key == *last {
                problems.push(n, 1, format!("`{key}` is recorded twice"));
            } else if key < *last {
                problems.push(
                    n,
                    1,
                    format!("lines are sorted by key: `{key}` comes after `{last}`"),
                );
            }
        }
        last_key = Some(key);
    }
    (snapshot, problems.finish())
}

/// A snapshot line, read.
enum Line {
    Country(CountryLine),
    Fact(FactLine),
    Answer(AnswerLine),
}

/// Reads line `n`: a fact's line or a country's, or `None` with its problem recorded.
///
/// A well-formed line is read straight into its record (one pass: the snapshots of every release are
/// read by every build). Any other line is read as JSON first, so its problem is said exactly: not
/// JSON, not an object, or which field of which kind of line is wrong (an object with a `country` key
/// is a country's line).
fn read_line(problems: &mut Problems<'_>, n: u32, line: &str) -> Option<Line> {
    if let Ok(record) = serde_json::from_str::<FactLine>(line) {
        return Some(Line::Fact(record));
    }
    if let Ok(record) = serde_json::from_str::<CountryLine>(line) {
        return Some(Line::Country(record));
    }
    if let Ok(record) = serde_json::from_str::<AnswerLine>(line) {
        return Some(Line::Answer(record));
    }
    let value: Value = match serde_json::from_str(line) {
        Ok(value) => value,
        Err(e) => {
            let column = if e.line() == 1 { e.column().max(1) } else { 1 };
            // The position is the diagnostic's own; serde_json's message repeats it.
            let message = e.to_string();
            let message = message.split(" at line ").next().unwrap_or_default();
            problems.push(n, column as u32, format!("not a JSON record: {message}"));
            return None;
        }
    };
    let Some(object) = value.as_object() else {
        problems.push(n, 1, "a snapshot line is a JSON object".into());
        return None;
    };
    if object.contains_key("country") {
        match serde_json::from_value::<CountryLine>(value) {
            Ok(record) => Some(Line::Country(record)),
            Err(e) => {
                problems.push(n, 1, format!("a country's line: {e}"));
                None
            }
        }
    } else if object.contains_key("answer") {
        match serde_json::from_value::<AnswerLine>(value) {
            Ok(record) => Some(Line::Answer(record)),
            Err(e) => {
                problems.push(n, 1, format!("an answer's line: {e}"));
                None
            }
        }
    } else {
        match serde_json::from_value::<FactLine>(value) {
            Ok(record) => Some(Line::Fact(record)),
            Err(e) => {
                problems.push(n, 1, format!("a fact's line: {e}"));
                None
            }
        }
    }
}

fn read_country(
    problems: &mut Problems<'_>,
    n: u32,
    line: &str,
    record: &CountryLine,
    snapshot: &mut Snapshot,
) {
    if !is_country_code(&record.country) {
        problems.push(
            n,
            column_of(line, "country"),
            format!(
                "`{}` is not a country code (two lower-case letters)",
                record.country
            ),
        );
        return;
    }
    let mut toggles = Vec::new();
    for (name, value) in &record.toggles {
        let valid_name = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        let value = match value {
            Value::Bool(b) => Some(*b),
            Value::Null => None,
            _ => {
                problems.push(
                    n,
                    column_of(line, name),
                    format!("toggle `{name}` is true, false or null"),
                );
                continue;
            }
        };
        if !valid_name {
            problems.push(
                n,
                column_of(line, "toggles"),
                format!("`{name}` is not a toggle name"),
            );
            continue;
        }
        toggles.push((name.clone(), value));
    }
    let mut carries: Vec<AnswerKind> = Vec::new();
    for name in record.answers.iter().flatten() {
        match AnswerKind::parse(name) {
            Some(kind) if carries.last().is_some_and(|last| *last >= kind) => problems.push(
                n,
                column_of(line, "answers"),
                format!("the kinds of `answers` are in name order, each once: `{name}` comes after `{}`", carries.last().map_or("", |k| k.name())),
            ),
            Some(kind) => carries.push(kind),
            None => problems.push(
                n,
                column_of(line, "answers"),
                format!(
                    "`{name}` is not a kind of answer; expected one of: {}",
                    AnswerKind::names()
                ),
            ),
        }
    }
    snapshot.insert(
        record.country.clone(),
        CountryState {
            toggles,
            facts: Vec::new(),
            carries,
            answers: Vec::new(),
        },
    );
}

fn read_answer(
    problems: &mut Problems<'_>,
    n: u32,
    line: &str,
    record: &AnswerLine,
    state: &CountryState,
) -> Option<Answer> {
    let before = problems.list.len() + problems.hidden;
    let kind = AnswerKind::parse(&record.answer);
    match kind {
        None => problems.push(
            n,
            column_of(line, "answer"),
            format!(
                "`{}` is not a kind of answer; expected one of: {}",
                record.answer,
                AnswerKind::names()
            ),
        ),
        Some(kind) if !state.carries(kind) => problems.push(
            n,
            column_of(line, "answer"),
            format!(
                "an answer of kind `{}`, which its country's line does not list in `answers`",
                record.answer
            ),
        ),
        Some(_) => {}
    }
    if !is_slug(&record.id) {
        problems.push(
            n,
            column_of(line, "id"),
            format!(
                "`{}` is not an answer id (lower-case letters, digits and hyphens)",
                record.id
            ),
        );
    }
    if let Some(erp) = record.erp.as_deref().filter(|erp| !is_slug(erp)) {
        problems.push(
            n,
            column_of(line, "erp"),
            format!("`{erp}` is not an ERP id"),
        );
    }
    if has_control(&record.label) {
        problems.push(
            n,
            column_of(line, "label"),
            "`label` holds a control character".into(),
        );
    }
    let mut fields = Vec::new();
    for (name, value) in &record.fields {
        let known = kind.and_then(|kind| kind.field(name));
        let value = match value {
            Value::String(text) if has_control(text) => {
                problems.push(
                    n,
                    column_of(line, name),
                    format!("field `{name}` holds a control character"),
                );
                continue;
            }
            Value::String(text) => Some(text.clone()),
            Value::Null => None,
            _ => {
                problems.push(
                    n,
                    column_of(line, name),
                    format!("field `{name}` is a text or null"),
                );
                continue;
            }
        };
        match known {
            Some(field) => fields.push((field.name, value)),
            None if kind.is_some() => problems.push(
                n,
                column_of(line, "fields"),
                format!(
                    "`{name}` is not a field of a `{}` answer; expected one of: {}",
                    record.answer,
                    kind.map_or_else(String::new, |k| k
                        .fields()
                        .iter()
                        .map(|f| f.name)
                        .collect::<Vec<_>>()
                        .join(", "))
                ),
            ),
            None => {}
        }
    }
    let verification = match record.verification.as_deref() {
        None => None,
        Some(text) => {
            let parsed = Verification::parse(text);
            if parsed.is_none() {
                problems.push(
                    n,
                    column_of(line, "verification"),
                    format!(
                        "`verification` is `{text}`; expected one of: {}, or null",
                        Verification::NAMES.join(", ")
                    ),
                );
            }
            parsed
        }
    };
    for url in &record.source_urls {
        if !is_recorded_http_url(url) {
            problems.push(
                n,
                column_of(line, "source_urls"),
                format!("`{url}` is not an http(s) URL"),
            );
        }
    }
    if let Some(date) = record.last_checked.as_deref().filter(|d| !is_iso_date(d)) {
        problems.push(
            n,
            column_of(line, "last_checked"),
            format!("`last_checked` is `{date}`; expected a YYYY-MM-DD date or null"),
        );
    }
    if problems.list.len() + problems.hidden > before {
        return None;
    }
    Some(Answer {
        kind: kind?,
        id: record.id.clone(),
        erp: record.erp.clone(),
        label: record.label.clone(),
        fields,
        verification,
        source_urls: record.source_urls.clone(),
        last_checked: record.last_checked.clone(),
    })
}

fn read_fact(
    problems: &mut Problems<'_>,
    n: u32,
    line: &str,
    record: &FactLine,
) -> Option<SnapshotFact> {
    let before = problems.list.len() + problems.hidden;
    if !is_slug(&record.id) {
        problems.push(
            n,
            column_of(line, "id"),
            format!(
                "`{}` is not a fact id (lower-case letters, digits and hyphens)",
                record.id
            ),
        );
    }
    if let Some(erp) = record.erp.as_deref().filter(|erp| !is_slug(erp)) {
        problems.push(
            n,
            column_of(line, "erp"),
            format!("`{erp}` is not an ERP id"),
        );
    }
    let verification = Verification::parse(&record.verification);
    if verification.is_none() {
        problems.push(
            n,
            column_of(line, "verification"),
            format!(
                "`verification` is `{}`; expected one of: {}",
                record.verification,
                Verification::NAMES.join(", ")
            ),
        );
    }
    for url in &record.source_urls {
        if !is_recorded_http_url(url) {
            problems.push(
                n,
                column_of(line, "source_urls"),
                format!("`{url}` is not an http(s) URL"),
            );
        }
    }
    for (key, date) in [
        ("last_checked", &record.last_checked),
        ("effective_date", &record.effective_date),
    ] {
        if let Some(date) = date.as_deref().filter(|d| !is_iso_date(d)) {
            problems.push(
                n,
                column_of(line, key),
                format!("`{key}` is `{date}`; expected a YYYY-MM-DD date or null"),
            );
        }
    }
    for (key, text) in [("label", &record.label), ("value", &record.value)] {
        if has_control(text) {
            problems.push(
                n,
                column_of(line, key),
                format!("`{key}` holds a control character"),
            );
        }
    }
    if problems.list.len() + problems.hidden > before {
        return None;
    }
    Some(SnapshotFact {
        id: record.id.clone(),
        erp: record.erp.clone(),
        label: record.label.clone(),
        value: record.value.as_str().into(),
        verification: verification?,
        source_urls: record.source_urls.clone(),
        last_checked: record.last_checked.clone(),
        effective_date: record.effective_date.clone(),
    })
}

// ------------------------------------------------------------------------------ records and indexes

/// The records of a snapshot's text, one a country, in the text's order: each runs from its country's
/// line to the line before the next country's, so the records put end to end are the text again. For a
/// text that [`parse`] reads without a problem (lines sorted by key, each fact after its country's
/// line); `None` if a line before the first country's line is not a country's.
pub fn split_records(text: &str) -> Option<Vec<(String, &str)>> {
    let mut records: Vec<(String, usize)> = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if let Some(code) = country_of_line(line) {
            records.push((code, at));
        } else if records.is_empty() {
            return None;
        }
        at += line.len();
    }
    let ends: Vec<usize> = records
        .iter()
        .skip(1)
        .map(|(_, start)| *start)
        .chain([text.len()])
        .collect();
    Some(
        records
            .into_iter()
            .zip(ends)
            .map(|((code, start), end)| (code, &text[start..end]))
            .collect(),
    )
}

/// The country code of a country's line (`{"country":"it",…`), as [`write`] writes it.
fn country_of_line(line: &str) -> Option<String> {
    let rest = line.strip_prefix("{\"country\":\"")?;
    let code = rest.get(..2)?;
    (is_country_code(code) && rest[2..].starts_with('"')).then(|| code.to_string())
}

/// The blake3 (hex) that names a record: of its text.
pub fn record_name(record: &str) -> String {
    blake3::hash(record.as_bytes()).to_hex().to_string()
}

/// The text of a release's index: a line a country, `<code> <blake3 of its record>`, in code order.
pub fn write_index<'a>(records: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut text = String::new();
    for (code, record) in records {
        text.push_str(code);
        text.push(' ');
        text.push_str(&record_name(record));
        text.push('\n');
    }
    text
}

/// One line of a release's index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    pub code: String,
    /// The record's name: the blake3 (hex) of its text.
    pub record: String,
    pub line: u32,
}

/// Parses a release's index: its entries in the file's order, and every problem, located. The codes
/// must increase line by line (so the records put end to end are the snapshot, in key order).
pub fn parse_index(path: &str, text: &str) -> (Vec<IndexEntry>, Vec<Diagnostic>) {
    let mut problems = Problems {
        path,
        list: Vec::new(),
        hidden: 0,
        hidden_from: 0,
    };
    let mut entries: Vec<IndexEntry> = Vec::new();
    for (i, line) in text.split('\n').enumerate() {
        let n = i as u32 + 1;
        if line.is_empty() {
            continue;
        }
        let Some((code, name)) = line.split_once(' ') else {
            problems.push(
                n,
                1,
                "an index line is `<country code> <blake3 of its record>`".into(),
            );
            continue;
        };
        if !is_country_code(code) {
            problems.push(n, 1, format!("`{code}` is not a lower-case country code"));
            continue;
        }
        if !(name.len() == 64 && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))) {
            problems.push(
                n,
                4,
                format!("`{name}` is not the 64 hex digits of a record's blake3"),
            );
            continue;
        }
        if let Some(last) = entries.last()
            && code <= last.code.as_str()
        {
            problems.push(
                n,
                1,
                format!(
                    "countries are in code order, each once: `{code}` comes after `{}`",
                    last.code
                ),
            );
            continue;
        }
        entries.push(IndexEntry {
            code: code.to_string(),
            record: name.to_string(),
            line: n,
        });
    }
    (entries, problems.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn state() -> CountryState {
        CountryState {
            toggles: vec![
                ("e_invoicing_mandatory_b2b".into(), Some(true)),
                ("saft_required".into(), None),
            ],
            facts: vec![
                SnapshotFact {
                    id: "it-currency".into(),
                    erp: None,
                    label: "Currency".into(),
                    value: "Euro (EUR), \"quoted\", ünïcode\nsecond line".into(),
                    verification: Verification::Official,
                    source_urls: vec!["https://example.org/a".into()],
                    last_checked: Some("2026-10-01".into()),
                    effective_date: None,
                },
                SnapshotFact {
                    id: "it-e-invoicing-erp-support-odoo".into(),
                    erp: Some("odoo".into()),
                    label: "E-invoicing support: Odoo".into(),
                    value: "native".into(),
                    verification: Verification::Unverified,
                    source_urls: vec![],
                    last_checked: None,
                    effective_date: Some("2027-01-01".into()),
                },
            ],
            ..CountryState::default()
        }
    }

    /// A state as a release now records it: with answers of kinds that sort apart as names and as
    /// keys (`partner` before `partner-flag`).
    fn answered() -> CountryState {
        let answer =
            |kind: AnswerKind, id: &str, fields: Vec<(&'static str, Option<String>)>| Answer {
                kind,
                id: id.into(),
                erp: (kind != AnswerKind::Phase).then(|| "odoo".into()),
                label: format!("label of {id}"),
                fields,
                verification: (kind != AnswerKind::Partner).then_some(Verification::Secondary),
                source_urls: vec!["https://example.org/b".into()],
                last_checked: Some("2026-11-01".into()),
            };
        let mut state = state();
        state.carries = AnswerKind::ALL.to_vec();
        state.answers = vec![
            answer(
                AnswerKind::Partner,
                "it-odoo-acme",
                vec![
                    ("partner_type", Some("integrator".into())),
                    ("summary", None),
                ],
            ),
            answer(
                AnswerKind::PartnerFlag,
                "it-odoo",
                vec![
                    ("flag", Some("partner".into())),
                    ("note", Some("“quoted”\tnote".into())),
                ],
            ),
            answer(
                AnswerKind::Phase,
                "it-b2b-e-invoicing-main",
                vec![
                    ("status", Some("in-force".into())),
                    ("applies_from", Some("2019-01-01".into())),
                ],
            ),
        ];
        state
    }

    #[test]
    fn a_state_with_answers_reads_back_and_old_records_carry_none() {
        let it = answered();
        let text = write([("it", &it)]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 6, "{text}");
        assert!(
            lines[0].ends_with(r#","answers":["local-erp","mandate","partner","partner-flag","phase","regime","reporting-support","vat"]}"#),
            "{}",
            lines[0]
        );
        // Facts first, then the answers by kind and id.
        assert!(lines[2].starts_with(r#"{"id":"it-e-invoicing-erp-support-odoo""#));
        assert!(
            lines[3].starts_with(r#"{"answer":"partner","id":"it-odoo-acme","erp":"odoo""#),
            "{}",
            lines[3]
        );
        assert!(
            lines[3].contains(
                r#""fields":{"partner_type":"integrator","summary":null},"verification":null"#
            ),
            "{}",
            lines[3]
        );
        assert!(lines[4].starts_with(r#"{"answer":"partner-flag""#));
        assert!(lines[5].starts_with(r#"{"answer":"phase""#));
        let (snapshot, problems) = parse("s.jsonl", &text);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(snapshot["it"], it);
        assert_eq!(write(snapshot.iter().map(|(c, s)| (c.as_str(), s))), text);
        // A record of the form before answers: its country's line has no list, and it carries none.
        let old = write([("it", &state())]);
        assert!(!old.contains("answers"));
        let (snapshot, problems) = parse("s.jsonl", &old);
        assert!(problems.is_empty(), "{problems:?}");
        assert!(snapshot["it"].carries.is_empty());
        assert!(!snapshot["it"].carries(AnswerKind::Phase));
        assert!(answered().carries(AnswerKind::Phase));
        // Split into records and read back one by one.
        let records = split_records(&text).unwrap();
        assert_eq!(records.len(), 1);
        assert_eq!(records[0].1, text);
    }

    #[test]
    fn a_damaged_answer_line_is_located() {
        let text = write([("it", &answered())]);
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        let with = |at: usize, line: String| {
            let mut lines = lines.clone();
            lines[at] = line;
            format!("{}\n", lines.join("\n"))
        };
        let kind = with(
            5,
            lines[5].replace(r#""answer":"phase""#, r#""answer":"phases""#),
        );
        assert_eq!(
            messages(&kind),
            [
                "s.jsonl:6:2: error: `phases` is not a kind of answer; expected one of: local-erp, mandate, partner, partner-flag, phase, regime, reporting-support, vat"
            ]
        );
        let field = with(
            5,
            lines[5].replace(r#""status":"in-force""#, r#""stat":"in-force""#),
        );
        assert!(messages(&field)[0].contains("`stat` is not a field of a `phase` answer; expected one of: status, applies_from, scope, coverage, limit, basis"), "{:?}", messages(&field));
        let value = with(
            5,
            lines[5].replace(r#""status":"in-force""#, r#""status":3"#),
        );
        assert!(messages(&value)[0].contains("field `status` is a text or null"));
        let grade = with(
            3,
            lines[3].replace(r#""verification":null"#, r#""verification":"sure""#),
        );
        assert!(messages(&grade)[0].contains(
            "`verification` is `sure`; expected one of: official, secondary, unverified, or null"
        ));
        // A kind its country's line does not carry.
        let country = with(0, lines[0].replace(r#""phase","#, ""));
        assert!(
            messages(&country)[0].contains(
                "an answer of kind `phase`, which its country's line does not list in `answers`"
            ),
            "{:?}",
            messages(&country)
        );
        let listed = with(
            0,
            lines[0].replace(r#""mandate","#, r#""mandate","mandate","#),
        );
        assert!(messages(&listed)[0].contains(
            "the kinds of `answers` are in name order, each once: `mandate` comes after `mandate`"
        ));
        let orphan = format!("{}\n", lines[5].replace("it-b2b", "fr-b2b"));
        assert!(
            messages(&orphan)[0]
                .contains("answer `fr-b2b-e-invoicing-main` does not follow its country's line")
        );
        // Out of order: an answer before a fact.
        let swapped = format!("{}\n{}\n{}\n", lines[0], lines[3], lines[1]);
        assert!(messages(&swapped)[0].starts_with("s.jsonl:3:1: error: lines are sorted by key: `it-currency` comes after `it.partner it-odoo-acme`"), "{:?}", messages(&swapped));
        let unknown = with(5, lines[5].replace(r#""label""#, r#""name""#));
        assert!(
            messages(&unknown)[0].contains("an answer's line: unknown field `name`"),
            "{:?}",
            messages(&unknown)
        );
    }

    #[test]
    fn a_written_snapshot_reads_back_and_is_sorted_one_record_a_line() {
        let it = state();
        let mut fr = state();
        fr.facts.iter_mut().for_each(|f| {
            f.id = f.id.replacen("it-", "fr-", 1);
        });
        let text = write([("it", &it), ("fr", &fr)]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 6);
        assert!(lines[0].starts_with(
            r#"{"country":"fr","toggles":{"e_invoicing_mandatory_b2b":true,"saft_required":null}}"#
        ));
        assert!(lines[1].starts_with(r#"{"id":"fr-currency","erp":null,"label":"Currency","value":"Euro (EUR), \"quoted\", ünïcode\nsecond line","verification":"official""#), "{}", lines[1]);
        assert!(lines[3].starts_with(r#"{"country":"it""#));
        let (snapshot, problems) = parse("s.jsonl", &text);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(snapshot["it"], it);
        assert_eq!(snapshot["fr"], fr);
        assert_eq!(write(snapshot.iter().map(|(c, s)| (c.as_str(), s))), text);
    }

    #[test]
    fn a_snapshot_splits_into_records_that_put_it_back_and_an_index_that_reads_back() {
        let it = state();
        let mut fr = state();
        fr.facts.iter_mut().for_each(|f| {
            f.id = f.id.replacen("it-", "fr-", 1);
        });
        let text = write([("it", &it), ("fr", &fr)]);
        let records = split_records(&text).unwrap();
        let codes: Vec<&str> = records.iter().map(|(c, _)| c.as_str()).collect();
        assert_eq!(codes, ["fr", "it"]);
        assert_eq!(records.iter().map(|(_, r)| *r).collect::<String>(), text);
        for (code, record) in &records {
            let (one, problems) = parse("r.jsonl", record);
            assert!(problems.is_empty(), "{problems:?}");
            assert_eq!(one.keys().collect::<Vec<_>>(), [code]);
        }
        let index = write_index(records.iter().map(|(c, r)| (c.as_str(), *r)));
        let (entries, problems) = parse_index("i.index", &index);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(
            entries
                .iter()
                .map(|e| (e.code.as_str(), e.record.clone(), e.line))
                .collect::<Vec<_>>(),
            [
                ("fr", record_name(records[0].1), 1),
                ("it", record_name(records[1].1), 2)
            ]
        );
        assert_eq!(split_records("{\"id\":\"x\"}\n"), None);
        assert_eq!(split_records(""), Some(Vec::new()));
    }

    #[test]
    fn an_index_with_problems_is_reported_at_each_line() {
        let name = "a".repeat(64);
        let text = format!("it {name}\nfr {name}\nIT {name}\nde short\nno-space\nit {name}\n");
        let (entries, problems) = parse_index("i.index", &text);
        assert_eq!(entries.len(), 1);
        let problems: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(
            problems,
            [
                "i.index:2:1: error: countries are in code order, each once: `fr` comes after `it`",
                "i.index:3:1: error: `IT` is not a lower-case country code",
                "i.index:4:4: error: `short` is not the 64 hex digits of a record's blake3",
                "i.index:5:1: error: an index line is `<country code> <blake3 of its record>`",
                "i.index:6:1: error: countries are in code order, each once: `it` comes after `it`",
            ]
        );
    }

    fn messages(text: &str) -> Vec<String> {
        parse("s.jsonl", text)
            .1
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn a_damaged_snapshot_is_located() {
        let text = write([("it", &state())]);
        let lines: Vec<&str> = text.lines().collect();
        // Out of order, twice, a bad field, a fact without its country, not JSON.
        let swapped = format!("{}\n{}\n{}\n", lines[0], lines[2], lines[1]);
        assert_eq!(
            messages(&swapped),
            [
                "s.jsonl:3:1: error: lines are sorted by key: `it-currency` comes after `it-e-invoicing-erp-support-odoo`"
            ]
        );
        let twice = format!("{}\n{}\n{}\n", lines[0], lines[1], lines[1]);
        assert_eq!(
            messages(&twice),
            ["s.jsonl:3:1: error: `it-currency` is recorded twice"]
        );
        let bad = text.replace("\"official\"", "\"checked\"");
        assert_eq!(
            messages(&bad),
            [
                "s.jsonl:2:106: error: `verification` is `checked`; expected one of: official, secondary, unverified"
            ]
        );
        let orphan = format!("{}\n", lines[1]);
        assert_eq!(
            messages(&orphan),
            [
                "s.jsonl:1:2: error: fact `it-currency` does not follow its country's line: a fact id starts with its country's code and a hyphen, after that country's `{\"country\":…}` line"
            ]
        );
        let broken = format!("{}\n{{\"id\": \n", lines[0]);
        assert_eq!(
            messages(&broken),
            ["s.jsonl:2:7: error: not a JSON record: EOF while parsing a value"]
        );
        let unknown = text.replace("\"label\":\"Currency\"", "\"labels\":\"Currency\"");
        assert!(messages(&unknown)[0].contains("unknown field `labels`"));
        let date = text.replace("2027-01-01", "2027-02-30");
        assert!(messages(&date)[0].contains("`effective_date` is `2027-02-30`"));
    }

    proptest! {
        #[test]
        fn any_bytes_as_an_index_or_a_snapshot_to_split_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let text = String::from_utf8_lossy(&bytes);
            let _ = parse_index("i.index", &text);
            if let Some(records) = split_records(&text) {
                prop_assert_eq!(records.iter().map(|(_, r)| *r).collect::<String>(), text.as_ref());
            }
        }

        /// Any text at all: the parser returns, it never panics.
        #[test]
        fn any_bytes_parse_or_are_located(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
            let text = String::from_utf8_lossy(&bytes);
            let (_, problems) = parse("s.jsonl", &text);
            for p in problems {
                prop_assert!(p.line >= 1 && p.column >= 1);
            }
        }

        /// A real snapshot (with answers, or of the form before them) with one character replaced,
        /// inserted or deleted anywhere: never a panic, and the problems it has are located.
        #[test]
        fn a_damaged_real_snapshot_never_panics(at in any::<prop::sample::Index>(), c in any::<char>(), op in 0..3u8, answers in any::<bool>()) {
            let text = write([("it", &if answers { answered() } else { state() })]);
            let mut chars: Vec<char> = text.chars().collect();
            let i = at.index(chars.len());
            match op {
                0 => chars[i] = c,
                1 => chars.insert(i, c),
                _ => { chars.remove(i); }
            }
            let damaged: String = chars.into_iter().collect();
            for p in parse("s.jsonl", &damaged).1 {
                prop_assert!(p.line >= 1 && p.column >= 1);
            }
        }
    }
}
