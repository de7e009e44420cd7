//! The source tables (`sources/registers/countries.csv`, `sources/tables/*.csv`) as typed rows.
//!
//! Checks that need only the file itself happen here: the header, required cells, dates, URLs, the specification's
//! fixed enums and the honesty rule that ties `verification` to its source and date. Checks against other
//! files (registers, rule vocabularies) happen in [`crate::model`], located through each row's [`Pos`].

use super::csv_table::{Cell, Header, Row, RunSpans, Table, read_run, read_table, split_runs};
use super::{is_iso_date, shared_source_text, source_text, url_problem};
use crate::diagnostics::{Checked, Diagnostic};
use bytestring::ByteString;

/// Where each cell of a row starts, so the model layer can locate cross-file errors by column name.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Pos {
    pub path: &'static str,
    pub line: u32,
    /// The table's columns, in header order (the ERP columns of the reporting table are not named here:
    /// only the columns before them, which is where cross-file checks point).
    pub columns: &'static [&'static str],
    pub cells: Vec<(u32, u32)>,
}

impl Pos {
    /// A diagnostic pointing at the row's `index`-th cell (0-based, in header order; at the row's start
    /// if it has none): for the columns a `Pos` does not name, such as the reporting table's ERP columns.
    pub(crate) fn error_at(&self, index: usize, message: impl Into<String>) -> Diagnostic {
        let (line, column) = self.cells.get(index).copied().unwrap_or((self.line, 1));
        Diagnostic::new(self.path, line, column, message)
    }

    /// A diagnostic pointing at the cell of `column` in this row (at the row's start if it has none).
    pub(crate) fn error(&self, column: &str, message: impl Into<String>) -> Diagnostic {
        let (line, column) = self
            .columns
            .iter()
            .position(|c| *c == column)
            .and_then(|i| self.cells.get(i).copied())
            .unwrap_or((self.line, 1));
        Diagnostic::new(self.path, line, column, message)
    }
}

pub use crate::api_types::Verification;

/// A parsed row and where its cells stand in the file. The row is shared: the projections that select
/// rows (a country's partner flags, an ERP's) hold the parsed rows themselves, not copies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Located<T> {
    pub pos: Pos,
    pub row: std::sync::Arc<T>,
}

/// Typed access to the cells of one row by column name; every accessor records a located diagnostic on
/// bad input. Rows reach a reader only when their table's header is valid, so every column of the table
/// has a cell. A name the header lacks is the reader's bug, not the data's: a debug build stops on it
/// (every test that reads the table finds a misspelt column), a release build reads an empty cell.
struct RowReader<'a> {
    path: &'static str,
    /// The header's column names, in file order.
    header: &'a [&'a str],
    /// The columns a [`Pos`] names (see [`Pos::columns`]).
    named: &'static [&'static str],
    row: &'a Row,
    diagnostics: &'a mut Vec<Diagnostic>,
}

impl RowReader<'_> {
    fn pos(&self) -> Pos {
        Pos {
            path: self.path,
            line: self.row.line,
            columns: self.named,
            cells: self.row.cells.iter().map(|c| (c.line, c.column)).collect(),
        }
    }

    fn cell(&self, column: &str) -> Option<&Cell> {
        let i = self.header.iter().position(|c| *c == column);
        debug_assert!(
            i.is_some(),
            "{}: the reader names `{column}`, which is not a column of the table ({})",
            self.path,
            self.header.join(", ")
        );
        self.row.cells.get(i?)
    }

    fn error(&mut self, column: &str, message: String) {
        let (line, col) = self
            .cell(column)
            .map_or((self.row.line, 1), |c| (c.line, c.column));
        self.diagnostics
            .push(Diagnostic::new(self.path, line, col, message));
    }

    /// The cell's text, possibly empty.
    fn text(&self, column: &str) -> String {
        self.cell(column)
            .map(|c| c.text.clone())
            .unwrap_or_default()
    }

    fn required(&mut self, column: &str) -> String {
        let text = self.text(column);
        if text.is_empty() {
            self.error(column, format!("`{column}` must not be empty"));
        }
        text
    }

    fn optional(&self, column: &str) -> Option<String> {
        Some(self.text(column)).filter(|t| !t.is_empty())
    }

    fn one_of(&mut self, column: &str, allowed: &[&str]) -> String {
        let text = self.text(column);
        if !allowed.contains(&text.as_str()) {
            self.error(
                column,
                format!(
                    "`{column}` is `{text}`; expected one of: {}",
                    allowed.join(", ")
                ),
            );
        }
        text
    }

    fn date(&mut self, column: &str) -> Option<String> {
        let text = self.optional(column)?;
        if let Some(problem) = date_problem(&text) {
            self.error(column, problem);
        }
        Some(text)
    }

    fn url(&mut self, column: &str) -> Option<String> {
        let text = self.optional(column)?;
        if let Some(problem) = url_problem(&text) {
            self.error(column, format!("`{text}` is not an http(s) URL: {problem}"));
        }
        Some(text)
    }

    /// Space-separated URLs.
    fn urls(&mut self, column: &str) -> Vec<String> {
        let urls: Vec<String> = self
            .text(column)
            .split_whitespace()
            .map(str::to_string)
            .collect();
        for url in &urls {
            if let Some(problem) = url_problem(url) {
                self.error(column, format!("`{url}` is not an http(s) URL: {problem}"));
            }
        }
        urls
    }

    fn verification(&mut self, column: &str) -> Verification {
        let text = self.one_of(column, &Verification::NAMES);
        Verification::parse(&text).unwrap_or(Verification::Unverified)
    }

    /// The honesty rule, the same for every table. A row that publishes an answer (anything but the
    /// table's unknown: `answer` is `Some(text)`) names the source that was read, the day it was checked
    /// and, where the table records it, how the source was read, whatever its grade: an `unverified` grade
    /// with a source says the source is weak, never that no source is needed. A row whose answer is unknown
    /// (`answer` is `None`) needs nothing, but a verified grade still names what was read. `what` names the
    /// row in the messages (`fact`, `listing`).
    fn check_honesty(&mut self, what: &str, honesty: Honesty, answer: Option<&str>) {
        let verification = self.verification(honesty.verification);
        let has_source = !self.text(honesty.sources).is_empty();
        let checked = self.optional(honesty.checked).is_some();
        let evidence = honesty.evidence.map(|column| (column, self.text(column)));
        let read = |(_, text): &(&str, String)| text == "fetched" || text == "search-extract";
        // Who needs the source, and what the message adds: "the matrix cell `via provider` … only
        // `unknown/unverified` needs none" for an answer (cut short, it says which claim lacks its source);
        // "an `official` matrix cell" for an unknown that claims a verified grade.
        let (name, tail) = match answer {
            Some(answer) => (
                format!("{what} `{}`", excerpt(answer)),
                format!("; only {} needs none", honesty.unknown),
            ),
            None if verification == Verification::Unverified => return,
            None => {
                let grade = match verification {
                    Verification::Official => "an `official`",
                    _ => "a `secondary`",
                };
                (format!("{grade} {what}"), String::new())
            }
        };
        if !has_source {
            self.error(
                honesty.sources,
                format!("{name} needs the URL of the source that was read{tail}"),
            );
        }
        if !checked {
            self.error(
                honesty.checked,
                format!("{name} needs the date its source was read{tail}"),
            );
        }
        if let Some((column, _)) = evidence.as_ref().filter(|e| !read(e)) {
            self.error(
                column,
                format!("{name} needs `evidence` saying how its source was read (`fetched` or `search-extract`)"),
            );
        }
    }
}

/// The longest quote a cell may hold: a sentence or two (about 300 characters, with room for a second
/// excerpt of the same page after ` … `).
pub(crate) const QUOTE_MAX_CHARS: usize = 400;

impl RowReader<'_> {
    /// The `quote` of a row: the words of its first source that settle its answer, copied from what was
    /// read. A graded answer (`official` or `secondary`) needs one: without the sentence it rests on, an
    /// answer is at most `unverified`. `what` names the row in the message; `answered` says whether the
    /// row states an answer (an unknown needs no quote).
    fn quote(&mut self, what: &str, answered: bool) -> String {
        let quote = self.text("quote");
        let grade = Verification::parse(&self.text("verification"));
        if answered
            && quote.trim().is_empty()
            && let Some(grade @ (Verification::Official | Verification::Secondary)) = grade
        {
            self.error(
                "quote",
                format!(
                    "a `{}` {what} needs `quote`: the words of its first source that settle it, copied from what was read; without them it is `unverified` (or unknown)",
                    grade.as_str()
                ),
            );
        }
        let chars = quote.chars().count();
        if chars > QUOTE_MAX_CHARS {
            self.error(
                "quote",
                format!("a quote is a sentence or two (at most {QUOTE_MAX_CHARS} characters; this one has {chars}): cut it to the words that settle the answer, with ` … ` between two excerpts"),
            );
        }
        if quote != quote.trim() {
            self.error(
                "quote",
                "a quote has no leading or trailing spaces".to_string(),
            );
        }
        quote
    }
}

/// Words that state an answer: an unknown answer's text says what was looked at and found, never one of
/// these (a coarse rule, by design: it catches a claim smuggled into an unknown, not every wording).
const CLAIM_WORDS: [&str; 6] = [
    "mandatory",
    "in force",
    "native",
    "certified",
    "supported since",
    "required since",
];

impl RowReader<'_> {
    /// Refuses a claim in the text of an unknown answer (`column`), naming the word that makes it one.
    fn claim_in_unknown(&mut self, column: &str, what: &str) {
        let text = self.text(column).to_lowercase();
        let word = CLAIM_WORDS
            .iter()
            .find(|w| {
                text.match_indices(*w).any(|(i, _)| {
                    let before = text[..i].chars().next_back();
                    let after = text[i + w.len()..].chars().next();
                    !before.is_some_and(char::is_alphanumeric)
                        && !after.is_some_and(char::is_alphanumeric)
                })
            })
            .or_else(|| {
                // "since 2023": a date a claim starts from.
                text.match_indices("since ")
                    .any(|(i, _)| {
                        let year = &text[i + 6..];
                        year.len() >= 4 && year[..4].bytes().all(|b| b.is_ascii_digit())
                    })
                    .then_some(&"since <year>")
            });
        if let Some(word) = word {
            self.error(
                column,
                format!("{what} states no answer: its text says what was looked at and found, not `{word}`; settle the answer with its source and quote, or leave the claim out"),
            );
        }
    }
}

/// At most 40 characters of an answer, for a message (cut on a character boundary).
fn excerpt(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(40) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// The columns of a table that carry the honesty rule (see [`RowReader::check_honesty`]).
struct Honesty {
    verification: &'static str,
    sources: &'static str,
    /// `None` for the tables without an `evidence` column.
    evidence: Option<&'static str>,
    checked: &'static str,
    /// The table's unknown answer, as the messages name it (the one answer that needs no source).
    unknown: &'static str,
}

/// The honesty columns of the tables with `source`, `evidence`, `verification` and `last_verified`.
const FACT_HONESTY: Honesty = Honesty {
    verification: "verification",
    sources: "source",
    evidence: Some("evidence"),
    checked: "last_verified",
    unknown: "a value starting `unknown/unverified`",
};

/// The honesty columns of the listings without an `evidence` column (a listing is never unknown).
const SOURCE_HONESTY: Honesty = Honesty {
    verification: "verification",
    sources: "source",
    evidence: None,
    checked: "last_verified",
    unknown: "a row that is not listed",
};

/// Why `text` is not an ISO calendar date, if it is not: what is wrong with it, in the curator's words.
pub fn date_problem(text: &str) -> Option<String> {
    if is_iso_date(text) {
        return None;
    }
    let parts: Vec<&str> = text.split('-').collect();
    let numeric = |p: &str, n: usize| p.len() == n && p.bytes().all(|b| b.is_ascii_digit());
    Some(match parts.as_slice() {
        [y, m, d] if numeric(y, 4) && numeric(m, 2) && numeric(d, 2) => {
            let month: u32 = m.parse().unwrap_or(0);
            if !(1..=12).contains(&month) {
                format!("`{text}` is not a date: there is no month {month}")
            } else {
                format!("`{text}` is not a date: that month has no day {d}")
            }
        }
        [d, m, y] if numeric(d, 2) && numeric(m, 2) && numeric(y, 4) => {
            format!("`{text}` is not a date: write it year first, `{y}-{m}-{d}`")
        }
        _ if text.contains('/') || text.contains('.') => {
            format!("`{text}` is not a date: write it as YYYY-MM-DD with hyphens")
        }
        _ => format!("`{text}` is not a date; expected YYYY-MM-DD"),
    })
}

/// Reads a table and maps each row with `f` (no rows when the header is wrong: the cells of a table
/// whose columns are not the expected ones cannot be read by name).
fn read_rows<T>(
    db: &dyn salsa::Database,
    path: &'static str,
    header: Header<'_>,
    columns: &'static [&'static str],
    f: impl FnMut(&mut RowReader<'_>) -> T,
) -> Checked<Vec<Located<T>>> {
    let text = match source_text(db, path) {
        Ok(text) => text,
        Err(diagnostic) => return Checked::new(Vec::new(), vec![diagnostic]),
    };
    let (table, diagnostics) = read_table(path, text, header);
    map_rows(path, columns, &table, diagnostics, f)
}

/// Maps each row of a parsed table with `f`, which adds its diagnostics to `diagnostics`.
fn map_rows<T>(
    path: &'static str,
    named: &'static [&'static str],
    table: &Table,
    mut diagnostics: Vec<Diagnostic>,
    mut f: impl FnMut(&mut RowReader<'_>) -> T,
) -> Checked<Vec<Located<T>>> {
    let header: Vec<&str> = table.header.iter().map(|c| c.text.as_str()).collect();
    let rows = table
        .rows
        .iter()
        .map(|row| {
            let mut reader = RowReader {
                path,
                header: &header,
                named,
                row,
                diagnostics: &mut diagnostics,
            };
            Located {
                pos: reader.pos(),
                row: std::sync::Arc::new(f(&mut reader)),
            }
        })
        .collect();
    Checked::new(rows, diagnostics)
}

/// Reads a table whose header is exactly `columns`.
fn read_exact<T>(
    db: &dyn salsa::Database,
    path: &'static str,
    columns: &'static [&'static str],
    f: impl FnMut(&mut RowReader<'_>) -> T,
) -> Checked<Vec<Located<T>>> {
    read_rows(db, path, Header::Exact(columns), columns, f)
}

/// The unknown answer of a matrix cell, and how a fact's value starts when it is unknown: the one answer
/// that needs no source.
pub const UNKNOWN: &str = "unknown/unverified";

pub(crate) const COUNTRY_REGISTER: &str = "sources/registers/countries.csv";
pub(crate) const COUNTRY_FACTS: &str = "sources/tables/countries.csv";
pub const VAT: &str = "sources/tables/vat.csv";
pub(crate) const MANDATES: &str = "sources/tables/mandates.csv";
pub(crate) const MATRIX: &str = "sources/tables/matrix.csv";
pub(crate) const REPORTING: &str = "sources/tables/reporting.csv";
pub(crate) const CONNECTORS: &str = "sources/tables/connectors.csv";
pub(crate) const LOCAL_ERPS: &str = "sources/tables/local_erps.csv";
pub(crate) const PARTNER_FLAGS: &str = "sources/tables/local_partner_flags.csv";
pub(crate) const PARTNERS: &str = "sources/tables/partners.csv";

/// Declares one source table's row once: the struct, each field beside the CSV column it is read from
/// (with its doc comment and type), and the table's columns in file order, which its header must match.
/// A column cannot be added to the list and not to the row, or put in another place in one of them. The
/// reader that fills the row (the closure given to [`read_exact`]) names its cells by those columns; a
/// name the list lacks is a bug [`RowReader::cell`] stops in every debug build that reads the table.
///
/// The second form is for a table whose header has columns named by the data between two fixed runs
/// (the reporting table's ERP columns): the field between holds their values.
macro_rules! source_table {
    (
        $(#[$meta:meta])*
        $vis:vis struct $row:ident, columns $columns:ident {
            $(
                $(#[$field_meta:meta])*
                $field_vis:vis $field:ident : $ty:ty => $column:literal
            ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis struct $row {
            $( $(#[$field_meta])* $field_vis $field: $ty, )+
        }

        #[doc = concat!("The columns of [`", stringify!($row), "`]'s table, in file order.")]
        pub(crate) const $columns: &[&str] = &[$($column),+];
    };
    (
        $(#[$meta:meta])*
        $vis:vis struct $row:ident, columns $first:ident {
            $(
                $(#[$first_meta:meta])*
                $first_vis:vis $first_field:ident : $first_ty:ty => $first_column:literal
            ),+ $(,)?
        }
        $(#[$between_meta:meta])*
        $between_vis:vis $between:ident : $between_ty:ty,
        columns $last:ident {
            $(
                $(#[$last_meta:meta])*
                $last_vis:vis $last_field:ident : $last_ty:ty => $last_column:literal
            ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis struct $row {
            $( $(#[$first_meta])* $first_vis $first_field: $first_ty, )+
            $(#[$between_meta])* $between_vis $between: $between_ty,
            $( $(#[$last_meta])* $last_vis $last_field: $last_ty, )+
        }

        #[doc = concat!("The columns of [`", stringify!($row), "`]'s table before those the data names.")]
        pub(crate) const $first: &[&str] = &[$($first_column),+];
        #[doc = concat!("The columns of [`", stringify!($row), "`]'s table after those the data names.")]
        pub(crate) const $last: &[&str] = &[$($last_column),+];
    };
}

// ---------------------------------------------------------------- registers/countries.csv

source_table! {
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub(crate) struct CountryRegRow, columns COUNTRY_REGISTER_COLUMNS {
        pub code: String => "code",
        pub name: String => "name",
        pub region: String => "region",
        pub eu_member: bool => "eu_member",
    }
}

#[salsa::tracked(returns(ref))]
pub(crate) fn country_register_rows(
    db: &dyn salsa::Database,
) -> Checked<Vec<Located<CountryRegRow>>> {
    read_exact(db, COUNTRY_REGISTER, COUNTRY_REGISTER_COLUMNS, |r| {
        let code = r.required("code");
        let is_alpha2 = code.len() == 2 && code.bytes().all(|b| b.is_ascii_lowercase());
        if !code.is_empty() && !is_alpha2 {
            r.error(
                "code",
                format!("`{code}` is not a lower-case ISO 3166-1 alpha-2 code"),
            );
        }
        CountryRegRow {
            code,
            name: r.required("name"),
            region: r.required("region"),
            eu_member: r.one_of("eu_member", &["yes", "no"]) == "yes",
        }
    })
}

// ---------------------------------------------------------------- registers/country_aliases.csv

source_table! {
    /// Another name a reader may search a country by: an English name beside the register's (`Holland`,
    /// `Czech Republic`), a former name (`Turkey`), an abbreviation (`UK`, `USA`) or the country's own name
    /// in its language (`Polska`). Names only, never facts: the search box finds the country by them.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub(crate) struct CountryAliasRow, columns COUNTRY_ALIAS_COLUMNS {
        pub code: String => "code",
        pub alias: String => "alias",
        pub kind: String => "kind",
    }
}

pub(crate) const COUNTRY_ALIASES: &str = "sources/registers/country_aliases.csv";
/// What an alias is.
pub(crate) const ALIAS_KINDS: &[&str] =
    &["other name", "former name", "abbreviation", "local name"];

/// The aliases, each of a country of the register, none a country's own name or code, none given to two
/// countries (a name that finds two countries would find neither first).
#[salsa::tracked(returns(ref))]
pub(crate) fn country_alias_rows(
    db: &dyn salsa::Database,
) -> Checked<Vec<Located<CountryAliasRow>>> {
    let register = &country_register_rows(db).value;
    let mut taken: std::collections::HashMap<String, String> = register
        .iter()
        .flat_map(|r| {
            [
                (crate::ids::slugify(&r.row.name), r.row.code.clone()),
                (r.row.code.clone(), r.row.code.clone()),
            ]
        })
        .collect();
    read_exact(db, COUNTRY_ALIASES, COUNTRY_ALIAS_COLUMNS, |r| {
        let code = r.required("code");
        if !code.is_empty() && !register.iter().any(|c| c.row.code == code) {
            r.error(
                "code",
                format!("unknown country code `{code}` (not in {COUNTRY_REGISTER})"),
            );
        }
        let alias = r.required("alias");
        let key = crate::ids::slugify(&alias);
        if !alias.is_empty() {
            match taken.get(&key) {
                Some(other) if *other == code => r.error(
                    "alias",
                    format!("`{alias}` is already `{code}`'s name, code or alias"),
                ),
                Some(other) => r.error(
                    "alias",
                    format!("`{alias}` already names `{other}`: a name shared by two countries finds neither first"),
                ),
                None => {
                    taken.insert(key, code.clone());
                }
            }
        }
        CountryAliasRow {
            code,
            alias,
            kind: r.one_of("kind", ALIAS_KINDS),
        }
    })
}

// ---------------------------------------------------------------- registers/publishers.csv

source_table! {
    /// Who publishes the pages cited from one host (or from one folder of a shared host, such as one owner's
    /// repositories on `github.com`), and what kind of publisher it is: the evidence rule
    /// ([`crate::model::evidence`]) reads the kind to decide which grade a source can give.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub(crate) struct PublisherRow, columns PUBLISHER_COLUMNS {
        /// Lower case, without `www.` (a citation of `www.host` is a citation of `host`).
        pub host: String => "host",
        /// Empty for the whole host; else a path that starts and ends with `/` (`/MicrosoftDocs/`).
        pub path_prefix: String => "path_prefix",
        pub publisher: String => "publisher",
        pub kind: PublisherKind => "kind",
        /// For an ERP vendor: the ERP ids of the register it is the vendor of.
        pub erps: Vec<String> => "erps",
    }
}

/// The kinds of publisher, each settling some kinds of answer (see [`crate::model::evidence`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum PublisherKind {
    /// A government, ministry or tax authority.
    Government,
    /// The European Commission or another EU body.
    EuBody,
    /// OpenPeppol, CEN, OASIS, UN/CEFACT, ISO, Unicode (CLDR).
    StandardsBody,
    /// The vendor of an ERP product (of the register, or a local one).
    ErpVendor,
    /// An e-invoicing service provider, access point or tax-technology firm.
    ServiceProvider,
    /// A consultancy, law or accounting firm.
    Consultancy,
    News,
    /// Blogs, forums, community documentation, app stores, document-sharing sites.
    Community,
}

impl PublisherKind {
    pub(crate) const NAMES: [&'static str; 8] = [
        "government",
        "eu-body",
        "standards-body",
        "erp-vendor",
        "service-provider",
        "consultancy",
        "news",
        "community",
    ];
    const ALL: [PublisherKind; 8] = [
        PublisherKind::Government,
        PublisherKind::EuBody,
        PublisherKind::StandardsBody,
        PublisherKind::ErpVendor,
        PublisherKind::ServiceProvider,
        PublisherKind::Consultancy,
        PublisherKind::News,
        PublisherKind::Community,
    ];

    pub(crate) fn parse(text: &str) -> Option<PublisherKind> {
        let i = Self::NAMES.iter().position(|n| *n == text)?;
        Some(Self::ALL[i])
    }

    pub(crate) fn as_str(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

pub(crate) const PUBLISHERS: &str = "sources/registers/publishers.csv";

#[salsa::tracked(returns(ref))]
pub(crate) fn publisher_rows(db: &dyn salsa::Database) -> Checked<Vec<Located<PublisherRow>>> {
    read_exact(db, PUBLISHERS, PUBLISHER_COLUMNS, |r| {
        let host = r.required("host");
        let host_ok = host.split('.').count() >= 2
            && host
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.');
        if !host.is_empty() && !host_ok {
            r.error(
                "host",
                format!("`{host}` is not a host name in lower case (`example-vendor.com`)"),
            );
        }
        if let Some(bare) = host.strip_prefix("www.") {
            r.error(
                "host",
                format!("write `{bare}` without `www.`: a citation of `www.` matches it"),
            );
        }
        let path_prefix = r.text("path_prefix");
        if !path_prefix.is_empty() && (!path_prefix.starts_with('/') || !path_prefix.ends_with('/'))
        {
            r.error(
                "path_prefix",
                format!("`{path_prefix}` is a path that starts and ends with `/` (`/MicrosoftDocs/`), or empty"),
            );
        }
        let kind_text = r.one_of("kind", &PublisherKind::NAMES);
        let kind = PublisherKind::parse(&kind_text).unwrap_or(PublisherKind::Community);
        let erps: Vec<String> = r
            .text("erps")
            .split_whitespace()
            .map(str::to_string)
            .collect();
        if !erps.is_empty() && kind != PublisherKind::ErpVendor {
            r.error(
                "erps",
                format!(
                    "only an `erp-vendor` names the ERPs it makes; this publisher is `{kind_text}`"
                ),
            );
        }
        PublisherRow {
            host,
            path_prefix,
            publisher: r.required("publisher"),
            kind,
            erps,
        }
    })
}

// ---------------------------------------------------------------- tables/countries.csv

source_table! {
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct CountryFactRow, columns COUNTRY_FACT_COLUMNS {
        pub country: String => "country_code",
        pub fact: String => "fact",
        /// Shared, not copied, by every layer that shows it (the derived fact, the API detail, the history):
        /// padded with notes, the facts' texts are most of a large dataset.
        pub value: std::sync::Arc<str> => "value",
        pub source: Vec<String> => "source",
        pub evidence: String => "evidence",
        pub verification: Verification => "verification",
        pub last_verified: Option<String> => "last_verified",
    }
}

/// The facts table split into runs of rows by country code (see [`split_runs`]), with the problems of its
/// header. It re-runs on every edit of the file, but only finds record boundaries; the rows of each
/// country are parsed by [`country_fact_rows_of`], so an edit re-parses only the countries it touches.
#[salsa::tracked(returns(ref))]
pub fn country_fact_runs(db: &dyn salsa::Database) -> Checked<RunSpans> {
    let text = match source_text(db, COUNTRY_FACTS) {
        Ok(text) => text,
        Err(diagnostic) => return Checked::new(RunSpans::default(), vec![diagnostic]),
    };
    let runs = split_runs(text);
    // The header is checked once, here. Without one, the whole file is read to say why.
    let header_text = if runs.header_line.is_empty() {
        text
    } else {
        &runs.header_line
    };
    let (_, diagnostics) = read_table(
        COUNTRY_FACTS,
        header_text,
        Header::Exact(COUNTRY_FACT_COLUMNS),
    );
    Checked::new(runs, diagnostics)
}

/// A first cell of a table split into runs: a country code, or whatever a curator wrote there.
#[salsa::interned(debug)]
pub(crate) struct RunKey<'db> {
    #[returns(ref)]
    pub key: String,
}

/// The distinct first cells of the facts table, in file order.
#[salsa::tracked(returns(ref))]
pub fn country_fact_keys(db: &dyn salsa::Database) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for run in &country_fact_runs(db).value.runs {
        if !keys.contains(&run.key) {
            keys.push(run.key.clone());
        }
    }
    keys
}

/// The header line and the runs of one key: the early-cutoff point between the whole file and one
/// country's rows. It re-runs for every key on every edit (a scan and a copy of a few KB), and keeps its
/// revision unless that key's text or position changed.
#[salsa::tracked(returns(ref))]
pub fn country_fact_runs_of<'db>(
    db: &'db dyn salsa::Database,
    key: RunKey<'db>,
) -> (String, Vec<super::csv_table::Run>) {
    let runs = &country_fact_runs(db).value;
    // The whole-file query keeps only where the runs are; the text is the decoded file's (read here,
    // where it was split from, so the spans fit it).
    let empty = ByteString::new();
    let text = shared_source_text(db, COUNTRY_FACTS).unwrap_or(&empty);
    let own = runs
        .runs
        .iter()
        .filter(|r| &r.key == key.key(db))
        .map(|span| span.run(text))
        .collect();
    (runs.header_line.clone(), own)
}

/// The rows of the facts table whose first cell is `key`, parsed and checked on their own.
#[salsa::tracked(returns(ref))]
pub fn country_fact_rows_of<'db>(
    db: &'db dyn salsa::Database,
    key: RunKey<'db>,
) -> Checked<Vec<Located<CountryFactRow>>> {
    let (header_line, runs) = country_fact_runs_of(db, key);
    let mut all = Checked::new(Vec::new(), Vec::new());
    for run in runs {
        let (table, diagnostics) = read_run(COUNTRY_FACTS, header_line, run, COUNTRY_FACT_COLUMNS);
        let parsed = map_rows(
            COUNTRY_FACTS,
            COUNTRY_FACT_COLUMNS,
            &table,
            diagnostics,
            |r| {
                let value = r.text("value");
                let answer = (!value.trim_start().starts_with(UNKNOWN)).then_some(value.as_str());
                r.check_honesty("fact", FACT_HONESTY, answer);
                if answer.is_none() {
                    r.claim_in_unknown("value", "an unknown fact");
                }
                CountryFactRow {
                    country: r.required("country_code"),
                    fact: r.required("fact"),
                    value: r.required("value").into(),
                    source: r.urls("source"),
                    evidence: r.text("evidence"),
                    verification: r.verification("verification"),
                    last_verified: r.date("last_verified"),
                }
            },
        );
        all.value.extend(parsed.value);
        all.diagnostics.extend(parsed.diagnostics);
    }
    all
}

/// The rows of the facts table by key, in file order of the keys: for the checks and views that need
/// every row (each key's rows are still parsed and cached on their own).
pub(crate) fn country_fact_rows_by_key<'db>(
    db: &'db dyn salsa::Database,
) -> impl DoubleEndedIterator<Item = &'db Checked<Vec<Located<CountryFactRow>>>> + 'db {
    country_fact_keys(db)
        .iter()
        .map(move |key| country_fact_rows_of(db, RunKey::new(db, key.clone())))
}

// ---------------------------------------------------------------- tables/vat.csv

source_table! {
    #[derive(Debug, Clone, PartialEq)]
    pub(crate) struct VatRow, columns VAT_COLUMNS {
        pub country: String => "country_code",
        pub vat_name: Option<String> => "vat_name",
        pub standard_rate: Option<f64> => "standard_rate",
        /// `None` = unknown; `Some(vec![])` = the country has no reduced rates.
        pub reduced_rates: Option<Vec<f64>> => "reduced_rates",
        pub registration_threshold: Option<String> => "registration_threshold",
        pub filing_frequency: Option<String> => "filing_frequency",
        /// What the rates rest on: the honesty rule of every table, and the quote that gives the rate.
        pub source: Vec<String> => "source",
        pub evidence: String => "evidence",
        pub verification: Verification => "verification",
        pub last_verified: Option<String> => "last_verified",
        pub quote: String => "quote",
    }
}

/// A rate as the data writes it (`21`, `5.5`): as a VAT quote must contain it, and as the fact checks name
/// it.
pub(crate) fn rate_text(rate: f64) -> String {
    format!("{rate}")
}

fn percent(r: &mut RowReader<'_>, column: &str, text: &str) -> Option<f64> {
    match text.parse::<f64>() {
        Ok(rate) if (0.0..=100.0).contains(&rate) => Some(rate),
        _ => {
            r.error(
                column,
                format!("`{text}` is not a percent rate between 0 and 100"),
            );
            None
        }
    }
}

#[salsa::tracked(returns(ref))]
pub(crate) fn vat_rows(db: &dyn salsa::Database) -> Checked<Vec<Located<VatRow>>> {
    read_exact(db, VAT, VAT_COLUMNS, |r| {
        let standard_rate = r
            .optional("standard_rate")
            .and_then(|t| percent(r, "standard_rate", &t));
        let reduced_rates = match r.text("reduced_rates").as_str() {
            "" => None,
            "none" => Some(Vec::new()),
            text => {
                let rates: Vec<f64> = text
                    .split_whitespace()
                    .filter_map(|t| percent(r, "reduced_rates", t))
                    .collect();
                if rates.contains(&0.0) {
                    r.error(
                        "reduced_rates",
                        "the zero rate is not a reduced rate; leave it out".to_string(),
                    );
                }
                Some(rates)
            }
        };
        let answer = standard_rate.map(rate_text);
        r.check_honesty(
            "VAT rate",
            Honesty {
                unknown: "an empty `standard_rate`",
                ..FACT_HONESTY
            },
            answer.as_deref(),
        );
        let quote = r.quote("VAT row", answer.is_some());
        if let Some(rate) = &answer
            && !quote.is_empty()
            && !quote.contains(rate.as_str())
            && !quote.contains(&rate.replace('.', ","))
        {
            r.error(
                "quote",
                format!("the quote of a VAT row contains its standard rate, {rate}: quote the sentence that gives it"),
            );
        }
        VatRow {
            source: r.urls("source"),
            evidence: r.text("evidence"),
            verification: r.verification("verification"),
            last_verified: r.date("last_verified"),
            quote,
            country: r.required("country_code"),
            vat_name: r.optional("vat_name"),
            standard_rate,
            reduced_rates,
            registration_threshold: r.optional("registration_threshold"),
            filing_frequency: r.optional("filing_frequency"),
        }
    })
}

// ---------------------------------------------------------------- tables/mandates.csv

source_table! {
    #[derive(Debug, Clone, PartialEq, Eq, Default)]
    pub struct MandateRow, columns MANDATE_COLUMNS {
        pub country: String => "country_code",
        pub short_label: String => "short_label",
        pub mandate: String => "mandate",
        pub scope: String => "scope",
        pub deadlines: String => "deadlines",
        pub format: String => "format",
        pub mandate_source: Vec<String> => "mandate_source",
        pub mandate_evidence: String => "mandate_evidence",
        /// The words of its first source that state the mandate (empty: the text is not graded `verified`).
        pub mandate_quote: String => "mandate_quote",
    }
}

#[salsa::tracked(returns(ref))]
pub(crate) fn mandate_rows(db: &dyn salsa::Database) -> Checked<Vec<Located<MandateRow>>> {
    read_exact(db, MANDATES, MANDATE_COLUMNS, |r| {
        // The mandate text is shown on every e-invoicing row of its country: it names its source.
        if !r.text("mandate").is_empty() && r.text("mandate_source").trim().is_empty() {
            r.error(
                "mandate_source",
                "a mandate text needs the URL of the source that was read (`mandate_source`); without one, leave the row's texts empty".to_string(),
            );
        }
        MandateRow {
            country: r.required("country_code"),
            short_label: r.text("short_label"),
            mandate: r.text("mandate"),
            scope: r.text("scope"),
            deadlines: r.text("deadlines"),
            format: r.text("format"),
            mandate_source: r.urls("mandate_source"),
            mandate_evidence: r.text("mandate_evidence"),
            mandate_quote: r.text("mandate_quote"),
        }
    })
}

// ---------------------------------------------------------------- tables/matrix.csv

source_table! {
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct MatrixRow, columns MATRIX_COLUMNS {
        pub country: String => "country_code",
        pub erp: String => "erp",
        pub support_type: String => "support_type",
        pub vendors: String => "vendors",
        pub notes: String => "notes",
        pub erp_source: Vec<String> => "erp_source",
        pub evidence: String => "evidence",
        pub verification: Verification => "verification",
        pub last_verified: Option<String> => "last_verified",
        /// The words of its first source that settle it (see [`ObligationRow::quote`]).
        pub quote: String => "quote",
    }
}

#[salsa::tracked(returns(ref))]
pub fn matrix_rows(db: &dyn salsa::Database) -> Checked<Vec<Located<MatrixRow>>> {
    read_exact(db, MATRIX, MATRIX_COLUMNS, |r| {
        let support = r.text("support_type");
        let answer = (support != UNKNOWN).then_some(support.as_str());
        r.check_honesty(
            "matrix cell",
            Honesty {
                verification: "verification",
                sources: "erp_source",
                evidence: Some("evidence"),
                checked: "last_verified",
                unknown: "`unknown/unverified`",
            },
            answer,
        );
        let quote = r.quote("matrix cell", answer.is_some());
        if answer.is_none() {
            r.claim_in_unknown("notes", "an `unknown/unverified` cell");
        }
        MatrixRow {
            country: r.required("country_code"),
            erp: r.required("erp"),
            support_type: r.required("support_type"),
            vendors: r.text("vendors"),
            notes: r.text("notes"),
            erp_source: r.urls("erp_source"),
            evidence: r.text("evidence"),
            verification: r.verification("verification"),
            last_verified: r.date("last_verified"),
            quote,
        }
    })
}

// ---------------------------------------------------------------- tables/reporting.csv

source_table! {
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct ReportingRow, columns REPORTING_FIRST_COLUMNS {
        pub topic: String => "topic",
        pub country: String => "country_code",
        pub report_local: String => "report_local",
        pub report_en: String => "report_en",
        pub frequency: String => "frequency",
        pub deadline: String => "deadline",
        pub channel_format: String => "channel_format",
        pub source: Vec<String> => "source",
        pub source_checked: Option<String> => "source_checked",
        pub evidence: String => "evidence",
        pub verification: Verification => "verification",
    }
    /// The ERP columns' values, in header order (names in [`ReportingTable::erp_columns`]). Each value
    /// other than `unknown` rests on its own row of `tables/reporting_support.csv`
    /// ([`ReportingSupportRow`]), checked in [`crate::model::checks`].
    pub erp_support: Vec<String>,
    columns REPORTING_LAST_COLUMNS {
        pub notes: String => "notes",
        /// For a SAF-T row, the phases of the country's `saf-t` obligation (obligations.csv) the row is the
        /// file of; empty where it is the file of every phase. Views that show an ERP's support for a phase
        /// read the rows of that phase, not another file of the same country.
        pub phases: Vec<String> => "phases",
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct ReportingTable {
    /// The ERP column names and where they stand in the header.
    pub erp_columns: Vec<(String, u32, u32)>,
    pub rows: Vec<Located<ReportingRow>>,
}

/// The values of `topic`.
pub(crate) const REPORTING_TOPICS: &[&str] = &["vat-reporting", "saf-t"];
/// The values of an ERP column.
pub(crate) const REPORTING_ERP_SUPPORT: &[&str] = &["native", "add-on", "unknown"];

#[salsa::tracked(returns(ref))]
pub fn reporting_table(db: &dyn salsa::Database) -> Checked<ReportingTable> {
    let text = match source_text(db, REPORTING) {
        Ok(text) => text,
        Err(diagnostic) => return Checked::new(ReportingTable::default(), vec![diagnostic]),
    };
    let header = Header::Around {
        first: REPORTING_FIRST_COLUMNS,
        last: REPORTING_LAST_COLUMNS,
    };
    let (table, mut diagnostics) = read_table(REPORTING, text, header);
    let first = REPORTING_FIRST_COLUMNS.len();
    let erp_count = table
        .header
        .len()
        .saturating_sub(first + REPORTING_LAST_COLUMNS.len());
    let erp_columns = table
        .header
        .iter()
        .skip(first)
        .take(erp_count)
        .map(|c| (c.text.clone(), c.line, c.column))
        .collect();
    let header: Vec<&str> = table.header.iter().map(|c| c.text.as_str()).collect();
    let erp_names = &header[first.min(header.len())..(first + erp_count).min(header.len())];
    let rows = table
        .rows
        .iter()
        .map(|row| {
            let r = &mut RowReader {
                path: REPORTING,
                header: &header,
                named: REPORTING_FIRST_COLUMNS,
                row,
                diagnostics: &mut diagnostics,
            };
            let report = r.text("report_en");
            r.check_honesty(
                "reporting row",
                Honesty {
                    verification: "verification",
                    sources: "source",
                    evidence: Some("evidence"),
                    checked: "source_checked",
                    unknown: "a row that is not listed",
                },
                Some(&report),
            );
            let erp_support: Vec<String> = erp_names
                .iter()
                .map(|erp| r.one_of(erp, REPORTING_ERP_SUPPORT))
                .collect();
            let pos = r.pos();
            let row = ReportingRow {
                topic: r.one_of("topic", REPORTING_TOPICS),
                country: r.required("country_code"),
                report_local: r.text("report_local"),
                report_en: r.required("report_en"),
                frequency: r.text("frequency"),
                deadline: r.text("deadline"),
                channel_format: r.text("channel_format"),
                source: r.urls("source"),
                source_checked: r.date("source_checked"),
                evidence: r.text("evidence"),
                verification: r.verification("verification"),
                erp_support,
                notes: r.text("notes"),
                phases: r
                    .text("phases")
                    .split_whitespace()
                    .map(str::to_string)
                    .collect(),
            };
            if row.topic != "saf-t" && !row.phases.is_empty() {
                r.error(
                    "phases",
                    "only a `saf-t` row names the obligation phases it is the file of".to_string(),
                );
            }
            Located {
                pos,
                row: std::sync::Arc::new(row),
            }
        })
        .collect();
    Checked::new(ReportingTable { erp_columns, rows }, diagnostics)
}

// ---------------------------------------------------------------- tables/reporting_support.csv

source_table! {
    /// The evidence of one ERP cell of the reporting table: the cell of `erp` in the reporting row
    /// `topic` / `country` / `report_en` (its key, as the row names it), the source its value rests on, how
    /// and when it was read, its grade and the sentence of that source that settles it. Every cell other than
    /// `unknown` has exactly one such row, and an `unknown` cell none (checked in [`crate::model::checks`]).
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct ReportingSupportRow, columns REPORTING_SUPPORT_COLUMNS {
        pub topic: String => "topic",
        pub country: String => "country_code",
        pub report_en: String => "report_en",
        pub erp: String => "erp",
        pub source: Vec<String> => "source",
        pub evidence: String => "evidence",
        pub verification: Verification => "verification",
        pub last_verified: Option<String> => "last_verified",
        /// The words of its first source that settle the cell (see [`ObligationRow::quote`]); a cell
        /// without one is at most `unverified`.
        pub quote: String => "quote",
        pub notes: String => "notes",
    }
}

pub(crate) const REPORTING_SUPPORT: &str = "sources/tables/reporting_support.csv";

#[salsa::tracked(returns(ref))]
pub fn reporting_support_rows(
    db: &dyn salsa::Database,
) -> Checked<Vec<Located<ReportingSupportRow>>> {
    read_exact(db, REPORTING_SUPPORT, REPORTING_SUPPORT_COLUMNS, |r| {
        let erp = r.text("erp");
        // A row here backs a cell's answer: it names what was read, how and when, whatever its grade.
        r.check_honesty(
            "reporting cell",
            Honesty {
                unknown: "an `unknown` cell, which has no row here",
                ..FACT_HONESTY
            },
            Some(&erp),
        );
        let quote = r.quote("reporting cell", true);
        ReportingSupportRow {
            topic: r.one_of("topic", REPORTING_TOPICS),
            country: r.required("country_code"),
            report_en: r.required("report_en"),
            erp: r.required("erp"),
            source: r.urls("source"),
            evidence: r.text("evidence"),
            verification: r.verification("verification"),
            last_verified: r.date("last_verified"),
            quote,
            notes: r.text("notes"),
        }
    })
}

// ---------------------------------------------------------------- tables/connectors.csv

source_table! {
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct ConnectorRow, columns CONNECTOR_COLUMNS {
        pub provider: String => "provider",
        pub erp: String => "erp",
        pub countries_covered: String => "countries_covered",
        pub countries_in_scope: Vec<String> => "countries_in_scope",
        pub connector_type: String => "connector_type",
        pub built_by: String => "built_by",
        pub direction: String => "direction",
        pub source_urls: Vec<String> => "source_urls",
        pub verification: Verification => "verification",
        pub last_verified: Option<String> => "last_verified",
        pub notes: String => "notes",
    }
}

#[salsa::tracked(returns(ref))]
pub(crate) fn connector_rows(db: &dyn salsa::Database) -> Checked<Vec<Located<ConnectorRow>>> {
    read_exact(db, CONNECTORS, CONNECTOR_COLUMNS, |r| {
        let provider = r.text("provider");
        r.check_honesty(
            "connector route",
            Honesty {
                verification: "verification",
                sources: "source_urls",
                evidence: None,
                checked: "last_verified",
                unknown: "a route that is not listed",
            },
            Some(&provider),
        );
        ConnectorRow {
            provider: r.required("provider"),
            erp: r.required("erp"),
            countries_covered: r.text("countries_covered"),
            countries_in_scope: r
                .text("countries_in_scope")
                .split_whitespace()
                .map(str::to_string)
                .collect(),
            connector_type: r.text("connector_type"),
            built_by: r.text("built_by"),
            direction: r.text("direction"),
            source_urls: r.urls("source_urls"),
            verification: r.verification("verification"),
            last_verified: r.date("last_verified"),
            notes: r.text("notes"),
        }
    })
}

// ---------------------------------------------------------------- tables/local_erps.csv

source_table! {
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct LocalErpRow, columns LOCAL_ERP_COLUMNS {
        pub country: String => "country_code",
        pub name: String => "name",
        pub segment: String => "segment",
        /// Shared with the API value and the flat file's record (see [`CountryFactRow::value`]).
        pub description: std::sync::Arc<str> => "description",
        pub website: Option<String> => "website",
        pub source: Vec<String> => "source",
        pub verification: Verification => "verification",
        pub last_verified: Option<String> => "last_verified",
    }
}

#[salsa::tracked(returns(ref))]
pub(crate) fn local_erp_rows(db: &dyn salsa::Database) -> Checked<Vec<Located<LocalErpRow>>> {
    read_exact(db, LOCAL_ERPS, LOCAL_ERP_COLUMNS, |r| {
        let name = r.text("name");
        r.check_honesty("listing", SOURCE_HONESTY, Some(&name));
        LocalErpRow {
            country: r.required("country_code"),
            name: r.required("name"),
            segment: r.text("segment"),
            description: r.text("description").into(),
            website: r.url("website"),
            source: r.urls("source"),
            verification: r.verification("verification"),
            last_verified: r.date("last_verified"),
        }
    })
}

// ---------------------------------------------------------------- tables/local_partner_flags.csv

source_table! {
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct PartnerFlagRow, columns PARTNER_FLAG_COLUMNS {
        pub country: String => "country_code",
        pub erp: String => "erp",
        pub flag: String => "flag",
        /// Shared with the API values and the flat file's record (see [`CountryFactRow::value`]).
        pub note: std::sync::Arc<str> => "note",
        pub source: Vec<String> => "source",
        pub verification: Verification => "verification",
        pub last_verified: Option<String> => "last_verified",
    }
}

#[salsa::tracked(returns(ref))]
pub(crate) fn partner_flag_rows(db: &dyn salsa::Database) -> Checked<Vec<Located<PartnerFlagRow>>> {
    read_exact(db, PARTNER_FLAGS, PARTNER_FLAG_COLUMNS, |r| {
        let flag = r.text("flag");
        r.check_honesty("flag", SOURCE_HONESTY, Some(&flag));
        PartnerFlagRow {
            country: r.required("country_code"),
            erp: r.required("erp"),
            flag: r.required("flag"),
            note: r.text("note").into(),
            source: r.urls("source"),
            verification: r.verification("verification"),
            last_verified: r.date("last_verified"),
        }
    })
}

// ---------------------------------------------------------------- tables/partners.csv

source_table! {
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct PartnerRow, columns PARTNER_COLUMNS {
        pub country: String => "country_code",
        pub erp: String => "erp",
        pub name: String => "name",
        pub partner_type: String => "partner_type",
        /// Shared with the API value and the flat file's record (see [`CountryFactRow::value`]).
        pub summary: std::sync::Arc<str> => "summary",
        pub source_urls: Vec<String> => "source_urls",
        pub source_kind: String => "source_kind",
        pub last_checked: Option<String> => "last_checked",
    }
}

#[salsa::tracked(returns(ref))]
pub fn partner_rows(db: &dyn salsa::Database) -> Checked<Vec<Located<PartnerRow>>> {
    read_exact(db, PARTNERS, PARTNER_COLUMNS, |r| {
        // A partner is a claim about a named firm: it names the page it rests on, like every answer.
        if r.text("source_urls").trim().is_empty() {
            r.error(
                "source_urls",
                "a partner needs the URL of the source that was read; a partner no source names is not listed".to_string(),
            );
        }
        if r.optional("last_checked").is_none() {
            r.error(
                "last_checked",
                "a partner needs the date its source was read".to_string(),
            );
        }
        PartnerRow {
            country: r.required("country_code"),
            erp: r.required("erp"),
            name: r.required("name"),
            partner_type: r.text("partner_type"),
            summary: r.text("summary").into(),
            source_urls: r.urls("source_urls"),
            source_kind: r.text("source_kind"),
            last_checked: r.date("last_checked"),
        }
    })
}

// ---------------------------------------------------------------- tables/obligations.csv

/// The legal status of a phase of an obligation, as its source gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PhaseStatus {
    /// Applies now (at least in part).
    InForce,
    /// Set in law or binding regulation with a start date.
    Enacted,
    /// Set in law; the start waits for a further act.
    EnactedDatePending,
    /// Announced, proposed or in draft; not enacted.
    Planned,
    /// A source says there is no such obligation.
    None,
    /// Looked at, not settled.
    Unclear,
}

impl PhaseStatus {
    pub(crate) const NAMES: [&str; 6] = [
        "in-force",
        "enacted",
        "enacted-date-pending",
        "planned",
        "none",
        "unclear",
    ];

    pub fn parse(text: &str) -> Option<PhaseStatus> {
        Some(match text {
            "in-force" => PhaseStatus::InForce,
            "enacted" => PhaseStatus::Enacted,
            "enacted-date-pending" => PhaseStatus::EnactedDatePending,
            "planned" => PhaseStatus::Planned,
            "none" => PhaseStatus::None,
            "unclear" => PhaseStatus::Unclear,
            _ => return Option::None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            PhaseStatus::InForce => "in-force",
            PhaseStatus::Enacted => "enacted",
            PhaseStatus::EnactedDatePending => "enacted-date-pending",
            PhaseStatus::Planned => "planned",
            PhaseStatus::None => "none",
            PhaseStatus::Unclear => "unclear",
        }
    }

    /// How pages say it.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            PhaseStatus::InForce => "in force",
            PhaseStatus::Enacted => "enacted",
            PhaseStatus::EnactedDatePending => "enacted, start date pending",
            PhaseStatus::Planned => "planned",
            PhaseStatus::None => "no such obligation",
            PhaseStatus::Unclear => "unclear",
        }
    }
}

/// A date as precise as its source gives it: a day, a month or a year. A month or a year stands for its
/// whole span, never for its first day: a phase "from 2027" may start on any day of 2027.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PartialDate {
    pub year: i16,
    pub month: Option<i8>,
    pub day: Option<i8>,
}

impl PartialDate {
    /// `YYYY-MM-DD`, `YYYY-MM` or `YYYY`; `None` for anything else (or a day that does not exist).
    pub fn parse(text: &str) -> Option<PartialDate> {
        let digits = |p: &str, n: usize| p.len() == n && p.bytes().all(|b| b.is_ascii_digit());
        let parts: Vec<&str> = text.split('-').collect();
        let date = match parts.as_slice() {
            [y] if digits(y, 4) => PartialDate {
                year: y.parse().ok()?,
                month: Option::None,
                day: Option::None,
            },
            [y, m] if digits(y, 4) && digits(m, 2) => PartialDate {
                year: y.parse().ok()?,
                month: Some(m.parse().ok()?),
                day: Option::None,
            },
            [y, m, d] if digits(y, 4) && digits(m, 2) && digits(d, 2) => PartialDate {
                year: y.parse().ok()?,
                month: Some(m.parse().ok()?),
                day: Some(d.parse().ok()?),
            },
            _ => return Option::None,
        };
        // The span's ends must be real days.
        date.first_day()?;
        date.last_day()?;
        Some(date)
    }

    /// The first day of the span.
    pub fn first_day(self) -> Option<jiff::civil::Date> {
        jiff::civil::Date::new(self.year, self.month.unwrap_or(1), self.day.unwrap_or(1)).ok()
    }

    /// The last day of the span.
    pub(crate) fn last_day(self) -> Option<jiff::civil::Date> {
        match (self.month, self.day) {
            (Some(m), Some(d)) => jiff::civil::Date::new(self.year, m, d).ok(),
            (Some(m), Option::None) => Some(
                jiff::civil::Date::new(self.year, m, 1)
                    .ok()?
                    .last_of_month(),
            ),
            _ => jiff::civil::Date::new(self.year, 12, 31).ok(),
        }
    }

    /// How precise the date is, as the calendar and the flat files say it: `day`, `month` or `year`.
    pub fn precision(self) -> &'static str {
        match (self.month, self.day) {
            (Some(_), Some(_)) => "day",
            (Some(_), Option::None) => "month",
            _ => "year",
        }
    }

    /// Whether the date is a single day.
    pub(crate) fn is_day(self) -> bool {
        self.day.is_some()
    }
}

impl std::fmt::Display for PartialDate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:04}", self.year)?;
        if let Some(m) = self.month {
            write!(f, "-{m:02}")?;
        }
        if let Some(d) = self.day {
            write!(f, "-{d:02}")?;
        }
        Ok(())
    }
}

source_table! {
    /// One phase of one obligation of one country.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct ObligationRow, columns OBLIGATION_COLUMNS {
        pub country: String => "country_code",
        pub obligation: String => "obligation",
        pub phase: String => "phase",
        pub status: PhaseStatus => "status",
        pub applies_from: Option<PartialDate> => "applies_from",
        pub scope: String => "scope",
        /// Whether the phase applies generally or only to a sector or a group; `limit` says which, in the few
        /// words a reader sees beside the toggle it sets ("yes: electricity and natural-gas sectors only").
        pub coverage: Coverage => "coverage",
        pub limit: String => "limit",
        /// What a `none` phase rests on: a source that says so, or an absence check. `None` for other statuses.
        pub basis: Option<Basis> => "basis",
        pub source: Vec<String> => "source",
        pub evidence: String => "evidence",
        pub verification: Verification => "verification",
        pub last_verified: Option<String> => "last_verified",
        pub notes: String => "notes",
        /// The words of its first source that settle it (empty when it has none: then it is not graded).
        pub quote: String => "quote",
    }
}

/// Whom a phase applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Coverage {
    /// Everyone the obligation concerns (possibly phased in by size, each phase's scope says how).
    #[default]
    General,
    /// One or more sectors only (Hungary's electricity and natural-gas traders).
    Sector,
    /// A group only (new voluntary registrants, contractors of one ministry).
    Group,
}

impl Coverage {
    pub(crate) const NAMES: [&str; 3] = ["general", "sector", "group"];

    pub fn parse(text: &str) -> Option<Coverage> {
        Some(match text {
            "general" => Coverage::General,
            "sector" => Coverage::Sector,
            "group" => Coverage::Group,
            _ => return Option::None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Coverage::General => "general",
            Coverage::Sector => "sector",
            Coverage::Group => "group",
        }
    }
}

/// What a `none` phase (a "no") rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Basis {
    /// A source that was read says there is no such obligation.
    Stated,
    /// An absence check: the country is missing from a dated, comprehensive list, and a national page
    /// that was read names no such obligation.
    Absence,
}

impl Basis {
    pub(crate) const NAMES: [&str; 2] = ["stated", "absence"];

    pub fn parse(text: &str) -> Option<Basis> {
        Some(match text {
            "stated" => Basis::Stated,
            "absence" => Basis::Absence,
            _ => return Option::None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Basis::Stated => "stated",
            Basis::Absence => "absence",
        }
    }
}

impl ObligationRow {
    /// The phase id: `<country>-<obligation>-<phase>` (stable: calendars use it as the event's UID).
    pub fn id(&self) -> String {
        format!("{}-{}-{}", self.country, self.obligation, self.phase)
    }
}

pub(crate) const OBLIGATIONS: &str = "sources/tables/obligations.csv";

#[salsa::tracked(returns(ref))]
pub fn obligation_rows(db: &dyn salsa::Database) -> Checked<Vec<Located<ObligationRow>>> {
    read_exact(db, OBLIGATIONS, OBLIGATION_COLUMNS, |r| {
        let status = r.text("status");
        let answer = (status != "unclear").then_some(status.as_str());
        r.check_honesty(
            "phase",
            Honesty {
                unknown: "`unclear`",
                ..FACT_HONESTY
            },
            answer,
        );
        let phase = r.required("phase");
        let is_slug = phase
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if !phase.is_empty() && !is_slug {
            r.error(
                "phase",
                format!("phase `{phase}` must be lower-case letters, digits and hyphens"),
            );
        }
        let status_text = r.one_of("status", &PhaseStatus::NAMES);
        let status = PhaseStatus::parse(&status_text).unwrap_or(PhaseStatus::Unclear);
        let has_date = !r.text("applies_from").is_empty();
        match status {
            PhaseStatus::Enacted if !has_date => r.error(
                "applies_from",
                "an `enacted` phase needs the date it applies from (`enacted-date-pending` when the law leaves it to a later act)".to_string(),
            ),
            PhaseStatus::EnactedDatePending | PhaseStatus::None | PhaseStatus::Unclear
                if has_date =>
            {
                r.error(
                    "applies_from",
                    format!("a `{status_text}` phase has no date it applies from; leave `applies_from` empty"),
                )
            }
            _ => {}
        }
        let applies_from = r.optional("applies_from").and_then(|text| {
            let date = PartialDate::parse(&text);
            if date.is_none() {
                let problem = date_problem(&text)
                    .filter(|_| text.len() == 10)
                    .unwrap_or_else(|| {
                        format!("`{text}` is not a date; expected YYYY-MM-DD, or YYYY-MM or YYYY when that is all the source gives")
                    });
                r.error("applies_from", problem);
            }
            date
        });
        let coverage_text = r.text("coverage");
        let coverage = if coverage_text.is_empty() {
            Coverage::General
        } else {
            let text = r.one_of("coverage", &Coverage::NAMES);
            Coverage::parse(&text).unwrap_or(Coverage::General)
        };
        let limit = r.text("limit");
        match (coverage, limit.is_empty()) {
            (Coverage::General, false) => r.error(
                "limit",
                format!("a phase that applies generally has no `limit`; set `coverage` to `sector` or `group` if it is limited to `{limit}`"),
            ),
            (Coverage::Sector | Coverage::Group, true) => r.error(
                "limit",
                format!("a `{}` phase needs its `limit`, the few words a reader sees after its yes (`electricity and natural-gas sectors only`)", coverage.as_str()),
            ),
            _ => {}
        }
        let basis_text = r.text("basis");
        let basis = match status {
            PhaseStatus::None => {
                let basis = Basis::parse(&basis_text);
                if basis.is_none() {
                    r.error(
                        "basis",
                        format!("a `none` phase says in `basis` what its \"no\" rests on: `stated` (a source says so) or `absence` (an absence check), not `{basis_text}`"),
                    );
                }
                basis
            }
            _ => {
                if !basis_text.is_empty() {
                    r.error(
                        "basis",
                        format!("`basis` says what a `none` phase rests on; a `{status_text}` phase leaves it empty"),
                    );
                }
                Option::None
            }
        };
        let source = r.urls("source");
        let notes = r.text("notes");
        let quote = r.quote("phase", status != PhaseStatus::Unclear);
        // A phase's quote gives its year: the date is the answer a reader acts on.
        if let Some(date) = applies_from
            && !quote.is_empty()
            && !quote.contains(&format!("{:04}", date.year))
        {
            r.error(
                "quote",
                format!("the quote of a phase from {date} contains its year, {:04}: quote the sentence that gives the date", date.year),
            );
        }
        if basis == Some(Basis::Stated) && quote.trim().is_empty() {
            r.error(
                "quote",
                "a `stated` no rests on a source that says so: `quote` holds its sentence; without one the answer is an absence check (`absence`) or `unclear`".to_string(),
            );
        }
        if basis == Some(Basis::Absence) {
            if source.len() < 2 {
                r.error(
                    "source",
                    "an absence check names two sources: the dated, comprehensive list the country is missing from, and the national page that was read".to_string(),
                );
            }
            if notes.is_empty() {
                r.error(
                    "notes",
                    "an absence check says so in `notes`: which list the country is missing from (and its date) and which national page was read".to_string(),
                );
            }
        }
        ObligationRow {
            country: r.required("country_code"),
            obligation: r.required("obligation"),
            phase,
            status,
            applies_from,
            scope: r.text("scope"),
            coverage,
            limit,
            basis,
            source,
            evidence: r.text("evidence"),
            verification: r.verification("verification"),
            last_verified: r.date("last_verified"),
            notes,
            quote,
        }
    })
}

// ---------------------------------------------------------------- tables/regimes.csv

source_table! {
    /// How one obligation of one country works: the e-invoicing model, the formats, the platforms, whether a
    /// signature is required and how invoices are archived. Each answer is an id of its set in
    /// `rules/vocabulary.toml` (checked in [`crate::model::checks`]), or unknown (`None`, an empty cell).
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct RegimeRow, columns REGIME_COLUMNS {
        pub country: String => "country_code",
        pub obligation: String => "obligation",
        pub model: Option<String> => "model",
        /// `None` when unknown (an empty cell); never an empty list.
        pub formats: Option<Vec<String>> => "formats",
        pub platforms: Option<Vec<String>> => "platforms",
        pub signature: Option<String> => "signature",
        /// How many years invoices are kept (1 to 99).
        pub archive_years: Option<u8> => "archive_years",
        pub archive_location: Option<String> => "archive_location",
        pub source: Vec<String> => "source",
        pub evidence: String => "evidence",
        pub verification: Verification => "verification",
        pub last_verified: Option<String> => "last_verified",
        pub notes: String => "notes",
        /// The words of its first source that settle its model (see [`ObligationRow::quote`]).
        pub quote: String => "quote",
    }
}

impl RegimeRow {
    /// `<country>-<obligation>`: the record's id, and its row's anchor on the country page
    /// (`#regime-<id>`).
    pub fn id(&self) -> String {
        format!("{}-{}", self.country, self.obligation)
    }

    /// Whether every answer is unknown (the row then records only what was looked at, in `notes`).
    pub fn is_unknown(&self) -> bool {
        self.model.is_none()
            && self.formats.is_none()
            && self.platforms.is_none()
            && self.signature.is_none()
            && self.archive_years.is_none()
            && self.archive_location.is_none()
    }
}

pub(crate) const REGIMES: &str = "sources/tables/regimes.csv";

/// The answer columns of `tables/regimes.csv`: a row that leaves all of them empty is an honest unknown.
pub(crate) const REGIME_ANSWERS: [&str; 6] = [
    "model",
    "formats",
    "platforms",
    "signature",
    "archive_years",
    "archive_location",
];

#[salsa::tracked(returns(ref))]
pub fn regime_rows(db: &dyn salsa::Database) -> Checked<Vec<Located<RegimeRow>>> {
    read_exact(db, REGIMES, REGIME_COLUMNS, read_regime)
}

/// One row of the regimes table, with the checks that need only the row.
fn read_regime(r: &mut RowReader<'_>) -> RegimeRow {
    {
        // The answer as the honesty rule's messages quote it: the answers given, in column order.
        let given: Vec<String> = REGIME_ANSWERS
            .iter()
            .map(|column| r.text(column))
            .filter(|text| !text.is_empty())
            .collect();
        let answer = given.join("; ");
        r.check_honesty(
            "regime",
            Honesty {
                unknown: "a row whose six answers are all empty",
                ..FACT_HONESTY
            },
            (!given.is_empty()).then_some(answer.as_str()),
        );
        let list = |r: &mut RowReader<'_>, column: &str| {
            let ids: Vec<String> = r
                .text(column)
                .split_whitespace()
                .map(str::to_string)
                .collect();
            let text = r.text(column);
            if !ids.is_empty() && ids.join(" ") != text {
                r.error(
                    column,
                    format!("`{column}` is ids separated by single spaces, not `{text}`"),
                );
            }
            Some(ids).filter(|ids| !ids.is_empty())
        };
        let one = |r: &mut RowReader<'_>, column: &str| {
            let text = r.optional(column)?;
            if text.split_whitespace().count() != 1 {
                r.error(
                    column,
                    format!("`{column}` is one id of its set, not `{text}`"),
                );
            }
            Some(text)
        };
        let model = one(r, "model");
        let formats = list(r, "formats");
        let platforms = list(r, "platforms");
        let signature = one(r, "signature");
        let archive_years = r.optional("archive_years").and_then(|text| {
            let years = text
                .parse::<u8>()
                .ok()
                .filter(|y| (1..=99).contains(y) && !text.starts_with('0'));
            if years.is_none() {
                r.error(
                    "archive_years",
                    format!(
                        "`archive_years` is a whole number of years from 1 to 99, not `{text}`"
                    ),
                );
            }
            years
        });
        let archive_location = one(r, "archive_location");
        let notes = r.text("notes");
        let quote = r.quote("regime", !given.is_empty());
        if given.is_empty() && notes.trim().is_empty() {
            r.error(
                "notes",
                "a row whose answers are all unknown says in `notes` what was looked at"
                    .to_string(),
            );
        }
        RegimeRow {
            country: r.required("country_code"),
            obligation: r.required("obligation"),
            model,
            formats,
            platforms,
            signature,
            archive_years,
            archive_location,
            source: r.urls("source"),
            evidence: r.text("evidence"),
            verification: r.verification("verification"),
            last_verified: r.date("last_verified"),
            notes,
            quote,
        }
    }
}

#[cfg(test)]
mod regime_tests {
    use super::{Header, REGIME_COLUMNS, REGIMES, map_rows, read_regime, read_table};
    use proptest::prelude::*;

    /// The rows and the diagnostics of a regimes table of `body` (rows after the header).
    fn read(body: &str) -> (Vec<super::RegimeRow>, Vec<String>) {
        let text = format!("{}\n{body}", REGIME_COLUMNS.join(","));
        let (table, diagnostics) = read_table(REGIMES, &text, Header::Exact(REGIME_COLUMNS));
        let read = map_rows(REGIMES, REGIME_COLUMNS, &table, diagnostics, read_regime);
        (
            read.value.iter().map(|r| (*r.row).clone()).collect(),
            read.diagnostics.iter().map(ToString::to_string).collect(),
        )
    }

    const SOURCE: &str = "https://tax.example.org/e-invoicing,fetched,official,2026-11-28";

    #[test]
    fn answers_are_read_as_ids_and_unknowns_as_none() {
        let (rows, errors) = read(&format!(
            "it,b2b-e-invoicing,clearance,a b,c,required,10,in-country,{SOURCE},,the platform clears each invoice\nit,saf-t,,,,,,,,,unverified,,looked at two pages,\n"
        ));
        assert_eq!(errors, Vec::<String>::new());
        assert_eq!(
            rows[0].formats.as_deref(),
            Some(&["a".to_string(), "b".to_string()][..])
        );
        assert_eq!(rows[0].archive_years, Some(10));
        assert!(!rows[0].is_unknown());
        assert!(rows[1].is_unknown() && rows[1].formats.is_none());
        assert_eq!(rows[1].id(), "it-saf-t");
    }

    proptest! {
        /// Whatever the cells hold, a row is read without a panic; a cell that is not what its column
        /// takes is reported at its own line and column, and an honest row of well-formed cells passes.
        #[test]
        fn any_cells_are_read_or_located(cells in prop::collection::vec(any::<String>(), 14), years in 0u16..200) {
            let quoted: Vec<String> = cells.iter().map(|c| format!("\"{}\"", c.replace('"', "\"\""))).collect();
            let (_, errors) = read(&format!("{}\n", quoted.join(",")));
            for error in &errors {
                prop_assert!(error.starts_with(&format!("{REGIMES}:")), "{}", error);
            }
            let (rows, errors) = read(&format!("fr,b2b-e-invoicing,network,,,,{years},,{SOURCE},,a quoted sentence\n"));
            let good = (1..=99).contains(&years);
            prop_assert_eq!(errors.is_empty(), good, "{:?}", errors);
            prop_assert_eq!(rows[0].archive_years.map(u16::from), Some(years).filter(|_| good));
            if !good {
                prop_assert!(errors[0].starts_with(&format!("{REGIMES}:2:31: error: `archive_years`")), "{:?}", errors);
            }
        }
    }
}

#[cfg(test)]
mod partial_date_tests {
    use super::PartialDate;

    #[test]
    fn a_month_or_a_year_stands_for_its_whole_span() {
        let d = |t| PartialDate::parse(t).unwrap();
        assert_eq!(d("2027").first_day().unwrap().to_string(), "2027-01-01");
        assert_eq!(d("2027").last_day().unwrap().to_string(), "2027-12-31");
        assert_eq!(d("2028-02").last_day().unwrap().to_string(), "2028-02-29");
        assert_eq!(
            d("2026-09-01").last_day().unwrap().to_string(),
            "2026-09-01"
        );
        assert_eq!(d("2026-09").to_string(), "2026-09");
        for bad in [
            "2026-13",
            "2026-02-30",
            "26",
            "2026-1-01",
            "2026/09",
            "",
            "2026-09-01-01",
        ] {
            assert_eq!(PartialDate::parse(bad), None, "{bad}");
        }
    }
}

#[cfg(test)]
mod url_tests {
    use super::{Header, map_rows, read_table};
    use proptest::prelude::*;

    const PATH: &str = "sources/tables/t.csv";
    const COLUMNS: &[&str] = &["name", "website", "source"];

    /// The diagnostics of a one-row table whose `website` cell holds one URL and whose `source` cell holds
    /// URLs separated by spaces, read by the readers every source table uses (`url` and `urls`).
    fn check(website: &str, source: &str) -> Vec<String> {
        let text = format!("name,website,source\nx,\"{website}\",\"{source}\"\n");
        let (table, diagnostics) = read_table(PATH, &text, Header::Exact(COLUMNS));
        let read = map_rows(PATH, COLUMNS, &table, diagnostics, |r| {
            (r.url("website"), r.urls("source"))
        });
        read.diagnostics.iter().map(ToString::to_string).collect()
    }

    /// A reader that names a column its table lacks (a misspelling in the code, where the table's columns
    /// are declared once by `source_table!`) is stopped in a debug build, not read as an empty cell.
    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "the reader names `webiste`, which is not a column of the table")]
    fn a_reader_naming_a_column_the_table_lacks_stops_a_debug_build() {
        let (table, diagnostics) =
            read_table(PATH, "name,website,source\nx,,\n", Header::Exact(COLUMNS));
        map_rows(PATH, COLUMNS, &table, diagnostics, |r| r.text("webiste"));
    }

    /// A well-formed `http(s)` URL of a host: scheme, host names of letters and digits, a path.
    fn good_url() -> impl Strategy<Value = (String, String, String)> {
        (
            prop_oneof![Just("http"), Just("https")],
            prop::collection::vec("[a-z][a-z0-9]{0,7}", 2..4).prop_map(|l| l.join(".")),
            prop::collection::vec("[A-Za-z0-9_-]{0,8}", 0..3)
                .prop_map(|p| p.iter().map(|s| format!("/{s}")).collect::<String>()),
        )
            .prop_map(|(scheme, host, path)| (scheme.to_string(), host, path))
    }

    proptest! {
        /// A source URL that a browser could not follow as written (credentials or a `mailto:` before the
        /// host, a space, a host ending in a dot) is refused at its cell, naming the URL; the same URL
        /// well formed passes. The `mailto:` case is the one the Singapore row once held.
        #[test]
        fn a_malformed_source_url_is_refused_at_its_cell((scheme, host, path) in good_url(), defect in 0..4usize) {
            let good = format!("{scheme}://{host}{path}");
            prop_assert_eq!(check(&good, &format!("{good} {good}")), Vec::<String>::new());
            let (bad, why) = match defect {
                0 => (format!("{scheme}://user:secret@{host}{path}"), "credentials"),
                1 => (format!("{scheme}://mailto:data@{host}{path}"), "credentials"),
                2 => (format!("{scheme}://{host}.{path}"), "ends with a dot"),
                _ => (format!("{scheme}://{host}{path} x"), "space"),
            };
            // In the one-URL column the cell starts at column 3 (after `x,`).
            let errors = check(&bad, &good);
            prop_assert_eq!(errors.len(), 1, "{:?}", errors);
            let at = format!("{PATH}:2:3: error: `{bad}` is not an http(s) URL: ");
            prop_assert!(errors[0].starts_with(&at) && errors[0].contains(why), "{}", errors[0]);
            // In the list column a URL with a space is two words; one of them is refused there too.
            let errors = check(&good, &format!("{good} {bad}"));
            prop_assert_eq!(errors.len(), 1, "{:?}", errors);
            let column = 3 + good.len() + 3;
            prop_assert!(errors[0].starts_with(&format!("{PATH}:2:{column}: error: `")), "{}", errors[0]);
        }
    }
}
