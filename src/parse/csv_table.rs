//! A CSV reader that keeps the position of every cell, so any later check can point at
//! `file:line:column`. The csv crate does the parsing; this module adds the header contract and positions.

use bytestring::ByteString;

use super::formula_problem;
use crate::diagnostics::{Diagnostic, LineIndex, PARSER_LIMIT};

/// One cell: its trimmed text and where it starts in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    pub text: String,
    pub line: u32,
    pub column: u32,
}

/// One data record (header excluded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub line: u32,
    pub cells: Vec<Cell>,
}

/// What the header row must look like.
pub enum Header<'a> {
    /// Exactly these columns, in this order.
    Exact(&'a [&'a str]),
    /// These first columns, any number of named columns, then these last columns (the reporting table's
    /// ERP columns are checked against the rules in the model layer).
    Around {
        first: &'a [&'a str],
        last: &'a [&'a str],
    },
}

/// The header row and the data rows of a table.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Table {
    pub header: Vec<Cell>,
    pub rows: Vec<Row>,
}

/// Start offsets of the fields of the record that starts at `start` (quote-aware, LF line ends).
fn field_offsets(text: &str, start: usize) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut offsets = vec![start];
    let (mut i, mut in_quotes, mut at_field_start) = (start, false, true);
    while i < bytes.len() {
        let b = bytes[i];
        if in_quotes {
            if b == b'"' {
                if bytes.get(i + 1) == Some(&b'"') {
                    i += 2;
                    continue;
                }
                in_quotes = false;
            }
        } else if b == b'"' && at_field_start {
            in_quotes = true;
        } else if b == b',' {
            offsets.push(i + 1);
            at_field_start = true;
            i += 1;
            continue;
        } else if b == b'\n' {
            break;
        }
        at_field_start = false;
        i += 1;
    }
    offsets
}

/// Reads `text` (already normalized to LF) as a CSV table whose header must match `header`.
pub(crate) fn read_table(path: &str, text: &str, header: Header<'_>) -> (Table, Vec<Diagnostic>) {
    read_table_at(path, text, Some(header), 0)
}

/// Reads one run of a table (see [`split_runs`]): `text` is the header line followed by the run's
/// records, whose first line is line `first_line` of the file. The header is not reported again (the
/// whole table's reading does that), but with the wrong columns the run has no rows, as the whole table
/// would have none.
pub(crate) fn read_run(
    path: &str,
    header_line: &str,
    run: &Run,
    columns: &[&str],
) -> (Table, Vec<Diagnostic>) {
    let text = format!("{header_line}{}", run.text);
    // In `text` the run starts on the line after the header; in the file, on `first_line`.
    let header_lines = header_line.matches('\n').count() as u32;
    let (mut table, diagnostics) = read_table_at(
        path,
        &text,
        None,
        run.first_line.saturating_sub(header_lines + 1),
    );
    if !table
        .header
        .iter()
        .map(|c| c.text.as_str())
        .eq(columns.iter().copied())
    {
        table.rows.clear();
    }
    (table, diagnostics)
}

fn read_table_at(
    path: &str,
    text: &str,
    header: Option<Header<'_>>,
    line_offset: u32,
) -> (Table, Vec<Diagnostic>) {
    let index = LineIndex::new(text);
    // `line_offset` is added to every line: the text is a run of a larger file (see [`split_runs`]).
    // The cells of a row come in order: the cursor counts each row's columns in one pass.
    let mut cursor = index.cursor();
    let mut locate = |offset: usize| {
        let (line, column) = cursor.locate(offset);
        (line.saturating_add(line_offset), column)
    };
    let mut diagnostics = Vec::new();
    // The csv crate reads an unclosed quote to the end of the file as one field of the last record: that
    // record is not read, and the error is located at the quote that opens it.
    let unterminated = unterminated_quote(text);
    if let Some(open) = unterminated {
        let (line, column) = locate(open);
        diagnostics.push(Diagnostic::new(
            path,
            line,
            column,
            "unterminated quote: this `\"` opens a quoted cell that is never closed (a quote inside a quoted cell is written `\"\"`)",
        ));
    }
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    // Each row is checked as it is read and only a good one is kept: a huge file of bad rows costs the
    // errors shown (at most [`PARSER_LIMIT`]), not a copy of itself. The last record waits for the
    // next, as it is dropped when its quote is never closed.
    let mut rows = RowChecker::new(path, header);
    let mut waiting: Option<Row> = None;
    for result in reader.records() {
        match result {
            Ok(record) => {
                let start = record.position().map_or(0, |p| p.byte() as usize);
                let offsets = field_offsets(text, start);
                let cells = record
                    .iter()
                    .enumerate()
                    .map(|(i, field)| {
                        let (line, column) = locate(offsets.get(i).copied().unwrap_or(start));
                        Cell {
                            text: field.trim().to_string(),
                            line,
                            column,
                        }
                    })
                    .collect::<Vec<_>>();
                let (line, _) = locate(start);
                if let Some(row) = waiting.replace(Row { line, cells }) {
                    rows.take(row, &mut diagnostics);
                }
            }
            Err(error) => {
                let (line, column) = error
                    .position()
                    .map_or((1, 1), |p| locate(p.byte() as usize));
                return (
                    Table::default(),
                    vec![Diagnostic::new(
                        path,
                        line,
                        column,
                        format!("malformed CSV: {error}"),
                    )],
                );
            }
        }
    }
    if let Some(row) = waiting
        && unterminated.is_none()
    {
        rows.take(row, &mut diagnostics);
    }
    rows.finish(diagnostics)
}

/// The rows of a table as they are read: the first that is not blank is the header, each after it is
/// checked (its width, no formula) and kept only when good.
struct RowChecker<'a> {
    path: &'a str,
    expected: Option<Header<'a>>,
    header: Option<Vec<Cell>>,
    /// The header is not the expected one: rows are read by column name, so none can be read.
    wrong_columns: bool,
    rows: Vec<Row>,
    /// Errors beyond [`PARSER_LIMIT`]: how many, from which line.
    hidden: usize,
    hidden_from: u32,
}

impl<'a> RowChecker<'a> {
    fn new(path: &'a str, expected: Option<Header<'a>>) -> Self {
        RowChecker {
            path,
            expected,
            header: None,
            wrong_columns: false,
            rows: Vec::new(),
            hidden: 0,
            hidden_from: 0,
        }
    }

    fn take(&mut self, row: Row, diagnostics: &mut Vec<Diagnostic>) {
        // A line holding only separators or spaces is a blank line, not a record.
        if row.cells.iter().all(|c| c.text.is_empty()) {
            return;
        }
        let Some(header) = &self.header else {
            if let Some(expected) = &self.expected
                && !check_header(self.path, &row, expected, diagnostics)
            {
                self.wrong_columns = true;
            }
            self.header = Some(row.cells);
            return;
        };
        if self.wrong_columns {
            return;
        }
        let width = header.len();
        self.hide_beyond_limit(diagnostics, Some(row.line));
        for cell in &row.cells {
            if let Some(problem) = formula_problem(&cell.text) {
                diagnostics.push(Diagnostic::new(self.path, cell.line, cell.column, problem));
            }
        }
        if row.cells.len() != width {
            let count = format!(
                "row has {} cells, the header has {width} columns",
                row.cells.len()
            );
            // A stray quote pairs with the next quote, however many lines on, and the lines between
            // become one cell: the mistake is at the quote that opened it, not where the row ends.
            let diagnostic = match row.cells.iter().find(|c| c.text.contains('\n')) {
                Some(cell) => Diagnostic::new(
                    self.path,
                    cell.line,
                    cell.column,
                    format!(
                        "{count}: this `\"` opens a quoted cell that runs on to line {} (a quote inside a cell is written `\"\"`, and a cell that has one is quoted whole)",
                        cell.line + cell.text.matches('\n').count() as u32
                    ),
                ),
                None => {
                    let (line, column) = row
                        .cells
                        .last()
                        .map_or((row.line, 1), |c| (c.line, c.column));
                    Diagnostic::new(self.path, line, column, count)
                }
            };
            diagnostics.push(diagnostic);
            return;
        }
        // One text rule for every cell (see [`super::text`]): single-line and bounded.
        for cell in &row.cells {
            if let Some((at, problem)) = super::text::value_problem(&cell.text) {
                let line = cell.line + cell.text[..at].matches('\n').count() as u32;
                diagnostics.push(Diagnostic::new(self.path, line, cell.column, problem));
            }
        }
        self.rows.push(row);
    }

    /// A huge broken file must not become a huge list of errors held in memory: beyond the cap only how
    /// many more there are is kept, from the line where they start (`from`, or the first one cut).
    fn hide_beyond_limit(&mut self, diagnostics: &mut Vec<Diagnostic>, from: Option<u32>) {
        if diagnostics.len() <= PARSER_LIMIT {
            return;
        }
        if self.hidden == 0 {
            self.hidden_from = from.unwrap_or(diagnostics[PARSER_LIMIT].line);
        }
        self.hidden += diagnostics.len() - PARSER_LIMIT;
        diagnostics.truncate(PARSER_LIMIT);
    }

    fn finish(mut self, mut diagnostics: Vec<Diagnostic>) -> (Table, Vec<Diagnostic>) {
        let Some(header) = self.header.take() else {
            diagnostics.push(Diagnostic::file(self.path, "file has no header row"));
            return (Table::default(), diagnostics);
        };
        self.hide_beyond_limit(&mut diagnostics, None);
        if self.hidden > 0 {
            diagnostics.push(Diagnostic::more_in_file(
                self.path,
                self.hidden_from,
                self.hidden,
            ));
        }
        if self.wrong_columns {
            self.rows.clear();
        }
        (
            Table {
                header,
                rows: self.rows,
            },
            diagnostics,
        )
    }
}

/// Consecutive records of a table that share their first cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// The trimmed first cell of the run's records.
    pub key: String,
    /// The file line the run starts on (1-based).
    pub first_line: u32,
    /// The records, with their line ends (and any blank lines between them): a slice of the file's
    /// text, shared, not copied.
    pub text: ByteString,
}

/// Where a record starts: its byte offset, its line, and its first cell, trimmed.
type RecordStart = (usize, u32, String);

/// Where each record after the header starts, where the header ends, and whether every record could be
/// read: the csv crate's reading of `text`.
fn record_starts_by_csv(text: &str) -> (Vec<RecordStart>, Option<usize>, bool) {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut record = csv::ByteRecord::new();
    let mut starts: Vec<RecordStart> = Vec::new();
    let mut header_end = None;
    let mut complete = true;
    loop {
        match reader.read_byte_record(&mut record) {
            Ok(true) => {
                let position = record
                    .position()
                    .expect("records read from text have positions");
                let (byte, line) = (position.byte() as usize, position.line() as u32);
                if header_end.is_none() {
                    // Like `read_table`, the header is the first record that is not blank.
                    if record.iter().any(|cell| !cell.trim_ascii().is_empty()) {
                        header_end = Some(reader.position().byte() as usize);
                    }
                    continue;
                }
                let key = record.get(0).unwrap_or_default();
                let key = String::from_utf8_lossy(key).trim().to_string();
                starts.push((byte, line, key));
            }
            Ok(false) => break,
            Err(_) => {
                complete = false;
                break;
            }
        }
    }
    (starts, header_end, complete)
}

/// [`record_starts_by_csv`] for a table whose quoting is plain (every `"` opens a field, is doubled
/// inside one, or closes one before a `,` or line end; no first cell is quoted), found with memchr
/// instead of the csv state machine, about three times faster on the facts table (BENCHMARKS.md). `None` when the text
/// holds anything else, so that the csv crate decides what it means.
fn record_starts_plain(text: &str) -> Option<(Vec<RecordStart>, Option<usize>)> {
    let bytes = text.as_bytes();
    let mut starts: Vec<RecordStart> = Vec::new();
    let mut header_end = None;
    let (mut pos, mut line) = (0, 1u32);
    while pos < bytes.len() {
        // A record starts where the last one ended; the empty lines before it are skipped, as csv does.
        let (start, start_line) = (pos, line);
        while bytes.get(pos) == Some(&b'\n') {
            pos += 1;
            line += 1;
        }
        if pos == bytes.len() {
            break;
        }
        let first = pos;
        // The first cell ends at the first `,` or line end (a quote in it is not plain quoting).
        let first_end =
            memchr::memchr2(b',', b'\n', &bytes[first..]).map_or(bytes.len(), |i| first + i);
        let mut quoted = false;
        loop {
            let Some(i) = memchr::memchr2(b'"', b'\n', &bytes[pos..]).map(|i| pos + i) else {
                pos = bytes.len();
                break;
            };
            if bytes[i] == b'\n' {
                line += 1;
                pos = i + 1;
                break;
            }
            // A quote opens a field only right after a `,` (a quoted first cell is left to csv).
            if i == first || bytes[i - 1] != b',' {
                return None;
            }
            quoted = true;
            pos = quoted_field_end(bytes, i + 1, &mut line)?;
        }
        let record = &text[first..pos];
        if header_end.is_none() {
            // Like `read_table`, the header is the first record that is not blank.
            if quoted {
                return None;
            }
            if record
                .bytes()
                .any(|b| !b.is_ascii_whitespace() && b != b',')
            {
                header_end = Some(pos);
            }
            continue;
        }
        let key = text[first..first_end].trim().to_string();
        starts.push((start, start_line, key));
    }
    Some((starts, header_end))
}

/// The offset after the closing quote of a quoted field whose contents start at `from`, counting the
/// line ends inside it; `None` when the quote is not closed before a `,`, a line end or the end.
fn quoted_field_end(bytes: &[u8], from: usize, line: &mut u32) -> Option<usize> {
    let mut pos = from;
    loop {
        let close = memchr::memchr(b'"', &bytes[pos..])? + pos;
        *line += memchr::memchr_iter(b'\n', &bytes[pos..close]).count() as u32;
        match bytes.get(close + 1) {
            Some(b'"') => pos = close + 2,
            None | Some(b',' | b'\n') => return Some(close + 1),
            Some(_) => return None,
        }
    }
}

/// A table split into runs of consecutive records with the same first cell (a country code, in the
/// tables keyed by country), so that each run can be parsed on its own: an edit re-parses only the runs
/// whose text or position changed. It says where each run lies, not its text, so a query over the whole
/// file does not hold the file a second time; a query per key keeps its own runs' text, as slices of
/// the file's ([`RunSpan::run`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct RunSpans {
    /// The header record, with its line end.
    pub header_line: String,
    pub runs: Vec<RunSpan>,
}

/// Where one [`Run`] lies in its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RunSpan {
    pub key: String,
    pub first_line: u32,
    pub bytes: std::ops::Range<usize>,
}

impl RunSpan {
    /// The run, with its text from `text` (the file it was split from).
    pub(crate) fn run(&self, text: &ByteString) -> Run {
        Run {
            key: self.key.clone(),
            first_line: self.first_line,
            text: text.slice_ref(text.get(self.bytes.clone()).unwrap_or_default()),
        }
    }
}

/// Splits `text` (normalized to LF) into its header line and runs of records by first cell.
///
/// Only record boundaries are found here (with memchr when the quoting is plain, else by the csv crate);
/// cells, widths and positions are the business of [`read_run`]. Malformed CSV ends the splitting: the
/// rest of the file becomes one run, whose parse reports the error at its line.
pub(crate) fn split_runs(text: &str) -> RunSpans {
    let (starts, header_end, complete) = match record_starts_plain(text) {
        Some((starts, header_end)) => (starts, header_end, true),
        None => record_starts_by_csv(text),
    };
    let Some(header_end) = header_end else {
        return RunSpans::default();
    };
    let mut runs: Vec<RunSpan> = Vec::new();
    for (byte, line, key) in starts {
        // A record with an empty first cell stays with its run (it is blank or reported there).
        let same = runs.last().is_some_and(|r| key.is_empty() || r.key == key);
        if !same {
            runs.push(RunSpan {
                key,
                first_line: line,
                bytes: byte..byte,
            });
        }
    }
    let header_line = text[..header_end].to_string();
    // From the first record the reader could not read, everything belongs to the last run; when it could
    // read none after the header, that is a run of its own.
    if !complete && runs.is_empty() {
        runs.push(RunSpan {
            key: String::new(),
            first_line: header_line.matches('\n').count() as u32 + 1,
            bytes: header_end..header_end,
        });
    }
    // Each run ends where the next begins; the last at the end of the file.
    let ends: Vec<usize> = runs
        .iter()
        .skip(1)
        .map(|r| r.bytes.start)
        .chain([text.len()])
        .collect();
    for (run, end) in runs.iter_mut().zip(ends) {
        run.bytes.end = end;
    }
    RunSpans { header_line, runs }
}

/// Checks the header row against `expected`; false (with a located diagnostic) when it does not fit.
fn check_header(
    path: &str,
    header: &Row,
    expected: &Header<'_>,
    diagnostics: &mut Vec<Diagnostic>,
) -> bool {
    let names: Vec<&str> = header.cells.iter().map(|c| c.text.as_str()).collect();
    let fits = match expected {
        Header::Exact(columns) => names == *columns,
        Header::Around { first, last } => {
            names.len() >= first.len() + last.len()
                && names[..first.len()] == **first
                && names[names.len() - last.len()..] == **last
        }
    };
    if fits {
        return true;
    }
    let wanted = match expected {
        Header::Exact(columns) => columns.join(","),
        Header::Around { first, last } => {
            format!("{},<ERP columns>,{}", first.join(","), last.join(","))
        }
    };
    // Point at the first column that differs.
    let expected_at = |i: usize| -> Option<&str> {
        match expected {
            Header::Exact(columns) => columns.get(i).copied(),
            Header::Around { first, .. } => first.get(i).copied(),
        }
    };
    let cell = header
        .cells
        .iter()
        .enumerate()
        .find(|(i, c)| expected_at(*i).is_some_and(|e| e != c.text))
        .map(|(_, c)| c)
        .or(header.cells.last());
    let (line, column) = cell.map_or((1, 1), |c| (c.line, c.column));
    diagnostics.push(Diagnostic::new(
        path,
        line,
        column,
        format!(
            "unexpected header `{}`; expected `{wanted}`",
            names.join(",")
        ),
    ));
    false
}

/// The offset of a quote that opens a quoted cell never closed before the end of `text`, if any (the same
/// quoting rules as [`field_offsets`]: a quote opens a cell only at its start).
fn unterminated_quote(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let (mut i, mut at_field_start) = (0, true);
    while i < bytes.len() {
        match bytes[i] {
            b'"' if at_field_start => {
                // Skip to the quote that closes this cell (a doubled quote is one quote inside it).
                let mut j = i + 1;
                loop {
                    let Some(close) = memchr::memchr(b'"', &bytes[j..]).map(|k| j + k) else {
                        return Some(i);
                    };
                    if bytes.get(close + 1) == Some(&b'"') {
                        j = close + 2;
                    } else {
                        i = close + 1;
                        break;
                    }
                }
                at_field_start = false;
                continue;
            }
            b',' | b'\n' => at_field_start = true,
            _ => at_field_start = false,
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_located_through_quotes_and_multiline_fields() {
        let text = "a,b,c\n1,\"x, \"\"y\"\"\nz\",3\n\"é\",,  4\n";
        let (table, diagnostics) = read_table("t.csv", text, Header::Exact(&["a", "b", "c"]));
        // A line break inside a cell is read (and located), and is an error of the one text rule.
        let shown: Vec<String> = diagnostics.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "t.csv:2:3: error: a line break inside a value: names, labels, titles and cells are single-line text"
            ]
        );
        let row = &table.rows[0];
        assert_eq!(row.cells[1].text, "x, \"y\"\nz");
        assert_eq!((row.cells[1].line, row.cells[1].column), (2, 3));
        assert_eq!((row.cells[2].line, row.cells[2].column), (3, 4));
        let row = &table.rows[1];
        assert_eq!(
            (row.line, row.cells[2].column, row.cells[2].text.as_str()),
            (4, 6, "4")
        );
    }

    #[test]
    fn a_stray_quote_that_swallows_lines_is_reported_at_the_quote() {
        // The quote of line 2 pairs with the one on line 3: one cell runs over both lines.
        let text = "a,b,c\n1,\"2,3\n4,5\",6,7\n8,9,10\n";
        let (table, diagnostics) = read_table("t.csv", text, Header::Exact(&["a", "b", "c"]));
        let shown: Vec<String> = diagnostics.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "t.csv:2:3: error: row has 4 cells, the header has 3 columns: this `\"` opens a quoted cell that runs on to line 3 (a quote inside a cell is written `\"\"`, and a cell that has one is quoted whole)"
            ]
        );
        // The rows after it are read as they are.
        assert_eq!(table.rows.len(), 1);
    }

    #[test]
    fn wrong_header_and_short_rows_are_located() {
        let shown = |text: &str| -> Vec<String> {
            let (table, diagnostics) = read_table("t.csv", text, Header::Exact(&["a", "b", "c"]));
            assert!(diagnostics.is_empty() || table.rows.len() <= 1);
            diagnostics.iter().map(ToString::to_string).collect()
        };
        // With the wrong columns, the rows cannot be read by name: only the header is reported.
        assert_eq!(
            shown("a,x,c\n1,2\n"),
            ["t.csv:1:3: error: unexpected header `a,x,c`; expected `a,b,c`"]
        );
        assert_eq!(
            shown("a,b,c\n1,2\n"),
            ["t.csv:2:3: error: row has 2 cells, the header has 3 columns"]
        );
        // A spreadsheet export that lost a column in the header and in every row.
        assert_eq!(
            shown("a,c\n1,3\n"),
            ["t.csv:1:3: error: unexpected header `a,c`; expected `a,b,c`"]
        );
        assert_eq!(
            shown("a,b,c\n1,\"two\n3,4,5\n"),
            [
                "t.csv:2:3: error: unterminated quote: this `\"` opens a quoted cell that is never closed (a quote inside a quoted cell is written `\"\"`)"
            ]
        );
        assert_eq!(
            shown("a,b,c\n=1+1,@x,-y\n"),
            [
                "t.csv:2:1: error: a value may not start with `=`: a spreadsheet opening the published CSV would run it as a formula; reword it",
                "t.csv:2:6: error: a value may not start with `@`: a spreadsheet opening the published CSV would run it as a formula; reword it",
                "t.csv:2:9: error: a value may not start with `-`: a spreadsheet opening the published CSV would run it as a formula; reword it",
            ]
        );
    }
}

#[cfg(test)]
mod run_tests {
    use super::*;

    /// Parsing a table run by run gives the rows, positions and diagnostics of parsing it whole.
    /// A split with each run's text, as the per-key queries see it.
    struct Runs {
        header_line: String,
        runs: Vec<Run>,
    }

    fn assert_runs_agree(text: &str, columns: &[&str]) -> Runs {
        let (whole, whole_diagnostics) = read_table("t.csv", text, Header::Exact(columns));
        let spans = split_runs(text);
        let runs = Runs {
            runs: spans
                .runs
                .iter()
                .map(|span| span.run(&ByteString::from(text)))
                .collect(),
            header_line: spans.header_line,
        };
        let (mut rows, mut diagnostics) = (Vec::new(), Vec::new());
        if runs.header_line.is_empty() {
            diagnostics = whole_diagnostics.clone();
        } else {
            let (_, header_diagnostics) =
                read_table("t.csv", &runs.header_line, Header::Exact(columns));
            diagnostics.extend(header_diagnostics);
        }
        for run in &runs.runs {
            let (table, run_diagnostics) = read_run("t.csv", &runs.header_line, run, columns);
            rows.extend(table.rows);
            diagnostics.extend(run_diagnostics);
        }
        assert_eq!(rows, whole.rows, "{text:?}");
        assert_eq!(diagnostics, whole_diagnostics, "{text:?}");
        runs
    }

    #[test]
    fn a_runs_text_is_a_slice_of_the_files_text_not_a_copy() {
        let text = ByteString::from("k,v\nfr,1\nit,2\n");
        let spans = split_runs(&text);
        let file = text.as_bytes().as_ptr_range();
        for span in &spans.runs {
            let run = span.run(&text);
            assert!(!run.text.is_empty());
            assert!(
                file.contains(&run.text.as_bytes().as_ptr()),
                "{:?}",
                run.text
            );
        }
    }

    #[test]
    fn runs_group_consecutive_records_by_first_cell_and_keep_positions() {
        let text = "k,v\nfr,1\nfr,\"a\nb\"\n\nit,2\n,\nfr,3\n";
        let runs = assert_runs_agree(text, &["k", "v"]);
        let shown: Vec<(&str, u32, &str)> = runs
            .runs
            .iter()
            .map(|r| (r.key.as_str(), r.first_line, &*r.text))
            .collect();
        assert_eq!(
            shown,
            [
                ("fr", 2, "fr,1\nfr,\"a\nb\"\n"),
                ("it", 5, "\nit,2\n,\n"),
                ("fr", 8, "fr,3\n")
            ]
        );
        assert_eq!(runs.header_line, "k,v\n");
    }

    #[test]
    fn errors_in_runs_are_located_as_in_the_whole_file() {
        for text in [
            "k,v\nfr,1\nit,2,3\n",
            "k,v\nfr,1\nit,\"open\n",
            "k,x\nfr,1\n",
            "k,v\n\"broken,1\n",
            "",
            "k,v",
            "\n ,\nk,v\nfr,1\n",
        ] {
            assert_runs_agree(text, &["k", "v"]);
        }
    }

    #[test]
    fn the_shipped_facts_table_parses_the_same_by_runs() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/sources/tables/countries.csv");
        let text = std::fs::read_to_string(path).unwrap();
        let runs = assert_runs_agree(&text, crate::parse::tables::COUNTRY_FACT_COLUMNS);
        assert!(runs.runs.len() > 50, "{}", runs.runs.len());
        // Its quoting is plain, so it is split on the fast path, which agrees with the csv crate.
        let (starts, header_end) = record_starts_plain(&text).expect("plain quoting");
        assert_eq!((starts, header_end, true), record_starts_by_csv(&text));
    }

    #[test]
    fn the_fast_split_leaves_unusual_quoting_to_the_csv_crate() {
        for text in [
            "k,v\n\"fr\",1\n",  // a quoted first cell
            "k,v\nfr,a\"b\n",   // a quote inside an unquoted cell
            "k,v\nfr,\"a\"b\n", // text after a closing quote
            "k,v\nfr,\"open\n", // a quote never closed
            "\"k\",v\nfr,1\n",  // a quoted header
        ] {
            assert_eq!(record_starts_plain(text), None, "{text:?}");
            assert_runs_agree(text, &["k", "v"]);
        }
        let plain = "k,v\n\n ,\nfr,\"a,\"\"b\"\"\nc\"\n\nit,\"\"\n";
        let (starts, header_end) = record_starts_plain(plain).expect("plain quoting");
        assert_eq!((starts, header_end, true), record_starts_by_csv(plain));
    }

    proptest::proptest! {
        /// Wherever the fast split takes a text, it finds the records the csv crate finds.
        #[test]
        fn the_fast_split_agrees_with_the_csv_crate(text in "(fr|it| |,|\"|\n|a){0,60}") {
            if let Some((starts, header_end)) = record_starts_plain(&text) {
                proptest::prop_assert_eq!((starts, header_end, true), record_starts_by_csv(&text));
            }
        }
    }
}
