//! Parse: each input file on its own becomes typed records, or located diagnostics.
//!
//! A parser never looks at another file; cross-file checks (unknown country, duplicate id, vocabulary)
//! happen in [`crate::model`]. Each parser is a tracked query, so an edit re-parses only its own file.

pub mod csv_table;
pub mod json_sources;
pub mod rules;
pub mod tables;

use crate::db::{SourceFile, lookup};
use crate::diagnostics::{Diagnostic, line_column};

/// The decoded text of a file, normalized: a UTF-8 byte-order mark is dropped and CRLF / CR line ends
/// become LF. Invalid UTF-8, control characters and empty files are errors located at their position.
#[salsa::tracked(returns(ref))]
pub fn decoded_text(db: &dyn salsa::Database, file: SourceFile) -> Result<String, Diagnostic> {
    let path = file.path(db);
    let bytes = file.bytes(db);
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => {
            let valid = std::str::from_utf8(&bytes[..error.valid_up_to()]).unwrap_or_default();
            let (line, column) = line_column(valid, valid.len());
            return Err(Diagnostic::new(
                path,
                line,
                column,
                format!(
                    "invalid UTF-8 (byte 0x{:02X}): save the file as UTF-8",
                    bytes[error.valid_up_to()]
                ),
            ));
        }
    };
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    if let Some((offset, c)) = text
        .char_indices()
        .find(|(_, c)| c.is_control() && *c != '\n' && *c != '\t')
    {
        let (line, column) = line_column(&text, offset);
        return Err(Diagnostic::new(
            path,
            line,
            column,
            format!("control character U+{:04X} is not allowed", c as u32),
        ));
    }
    if text.trim().is_empty() {
        return Err(Diagnostic::file(path, "file is empty"));
    }
    Ok(text)
}

/// The decoded text of the project file at `path`, or why it cannot be read.
pub fn source_text<'db>(db: &'db dyn salsa::Database, path: &str) -> Result<&'db str, Diagnostic> {
    match lookup(db, path) {
        Some(file) => decoded_text(db, file).as_deref().map_err(Clone::clone),
        None => Err(Diagnostic::file(path, "file is missing")),
    }
}

/// Whether `value` is an absolute http(s) URL with a host and no whitespace.
pub fn is_http_url(value: &str) -> bool {
    let rest = value
        .strip_prefix("https://")
        .or_else(|| value.strip_prefix("http://"));
    match rest {
        Some(rest) => {
            let host = rest.split(['/', '?', '#']).next().unwrap_or("");
            !host.is_empty()
                && !value
                    .chars()
                    .any(|c| c.is_whitespace() || c == '"' || c == '<' || c == '>')
        }
        None => false,
    }
}

/// Whether `value` is an ISO calendar date `YYYY-MM-DD` that exists.
pub fn is_iso_date(value: &str) -> bool {
    value.len() == 10 && value.parse::<jiff::civil::Date>().is_ok()
}
