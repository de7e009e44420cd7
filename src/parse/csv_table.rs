//! A CSV reader that keeps the position of every cell, so any later check can point at
//! `file:line:column`. The csv crate does the parsing; this module adds the header contract and positions.

use crate::diagnostics::Diagnostic;

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

/// Byte offsets of line starts, for turning offsets into line and column quickly.
struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    fn new(text: &'a str) -> Self {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        LineIndex { text, starts }
    }

    fn locate(&self, offset: usize) -> (u32, u32) {
        let line = self.starts.partition_point(|&start| start <= offset) - 1;
        let column = self.text[self.starts[line]..offset.min(self.text.len())]
            .chars()
            .count()
            + 1;
        (line as u32 + 1, column as u32)
    }
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
pub fn read_table(path: &str, text: &str, header: Header<'_>) -> (Table, Vec<Diagnostic>) {
    let index = LineIndex::new(text);
    let mut diagnostics = Vec::new();
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut records = Vec::new();
    for result in reader.records() {
        match result {
            Ok(record) => {
                let start = record.position().map_or(0, |p| p.byte() as usize);
                let offsets = field_offsets(text, start);
                let cells = record
                    .iter()
                    .enumerate()
                    .map(|(i, field)| {
                        let (line, column) = index.locate(offsets.get(i).copied().unwrap_or(start));
                        Cell {
                            text: field.trim().to_string(),
                            line,
                            column,
                        }
                    })
                    .collect::<Vec<_>>();
                let (line, _) = index.locate(start);
                records.push(Row { line, cells });
            }
            Err(error) => {
                let (line, column) = error
                    .position()
                    .map_or((1, 1), |p| index.locate(p.byte() as usize));
                diagnostics.push(Diagnostic::new(
                    path,
                    line,
                    column,
                    format!("malformed CSV: {error}"),
                ));
                return (Table::default(), diagnostics);
            }
        }
    }
    // A line holding only separators or spaces is a blank line, not a record.
    records.retain(|row| row.cells.iter().any(|c| !c.text.is_empty()));
    let mut records = records.into_iter();
    let Some(header_row) = records.next() else {
        diagnostics.push(Diagnostic::file(path, "file has no header row"));
        return (Table::default(), diagnostics);
    };
    check_header(path, &header_row, &header, &mut diagnostics);
    let width = header_row.cells.len();
    let mut rows = Vec::new();
    for row in records {
        if row.cells.len() != width {
            let last = row
                .cells
                .last()
                .map_or((row.line, 1), |c| (c.line, c.column));
            diagnostics.push(Diagnostic::new(
                path,
                last.0,
                last.1,
                format!(
                    "row has {} cells, the header has {width} columns",
                    row.cells.len()
                ),
            ));
            continue;
        }
        rows.push(row);
    }
    (
        Table {
            header: header_row.cells,
            rows,
        },
        diagnostics,
    )
}

fn check_header(
    path: &str,
    header: &Row,
    expected: &Header<'_>,
    diagnostics: &mut Vec<Diagnostic>,
) {
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
        return;
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_located_through_quotes_and_multiline_fields() {
        let text = "a,b,c\n1,\"x, \"\"y\"\"\nz\",3\n\"é\",,  4\n";
        let (table, diagnostics) = read_table("t.csv", text, Header::Exact(&["a", "b", "c"]));
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
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
    fn wrong_header_and_short_rows_are_located() {
        let (_, diagnostics) = read_table("t.csv", "a,x,c\n1,2\n", Header::Exact(&["a", "b", "c"]));
        let shown: Vec<String> = diagnostics.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "t.csv:1:3: error: unexpected header `a,x,c`; expected `a,b,c`",
                "t.csv:2:3: error: row has 2 cells, the header has 3 columns"
            ]
        );
    }
}
