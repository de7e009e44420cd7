//! The one rule every value read from the sources and rules obeys: a name, a label, a title, a cell is
//! single-line text of a bounded length. A line break or any other control character inside a value
//! (a quoted multi-line CSV cell, a TOML `"""` string, an escape) is a located error, so no value can
//! add a line, a property or an event to a file written line by line (`_headers`, an iCalendar file,
//! a CSV or Markdown table). The writers escape for their own formats as well.
//!
//! The check is made in the fewest places every value passes through: each cell of the CSV reader
//! ([`super::csv_table`]) and each string of a TOML rule file ([`super::rules`]); JSON strings cannot
//! hold a raw line break, and their escapes are refused by [`super::json_sources`].

use crate::diagnostics::{Diagnostic, line_column};

/// The longest value, in bytes (64 KiB): twice the longest fact of the x100 benchmark workload (about
/// 30 KB), so no real value meets it, and a runaway paste (10 MB once became 275 MB of output) is an
/// error at its cell instead of a site.
pub(crate) const MAX_VALUE_BYTES: usize = 64 * 1024;

/// What is wrong with `value` as a value: its first control character, with that character's byte
/// offset in `value`, or its length. `None` for good text.
pub(crate) fn value_problem(value: &str) -> Option<(usize, String)> {
    if let Some((at, c)) = value.char_indices().find(|(_, c)| c.is_control()) {
        let what = match c {
            '\n' | '\r' => "a line break".to_string(),
            '\t' => "a tab".to_string(),
            c => format!("control character U+{:04X}", c as u32),
        };
        return Some((
            at,
            format!("{what} inside a value: names, labels, titles and cells are single-line text"),
        ));
    }
    if value.len() > MAX_VALUE_BYTES {
        return Some((
            0,
            format!(
                "value of {} bytes: a value holds at most {MAX_VALUE_BYTES} bytes",
                value.len()
            ),
        ));
    }
    None
}

/// The first string (or key) of the TOML file `text` that breaks the rule, located at the string in
/// the file, without echoing the value. `None` when every string is good (or the file does not parse:
/// its parse error is reported instead).
pub(crate) fn toml_problem(path: &str, text: &str) -> Option<Diagnostic> {
    use toml::de::{DeTable, DeValue};
    type Found = (usize, String);
    fn in_value(value: &toml::Spanned<DeValue<'_>>) -> Option<Found> {
        match value.get_ref() {
            DeValue::String(s) => value_problem(s).map(|(_, m)| (value.span().start, m)),
            DeValue::Array(items) => items.iter().find_map(in_value),
            DeValue::Table(table) => in_table(table),
            _ => None,
        }
    }
    fn in_table(table: &DeTable<'_>) -> Option<Found> {
        table.iter().find_map(|(key, value)| {
            value_problem(key.get_ref())
                .map(|(_, m)| (key.span().start, m))
                .or_else(|| in_value(value))
        })
    }
    let table = DeTable::parse(text).ok()?;
    let (offset, message) = in_table(table.get_ref())?;
    let (line, column) = line_column(text, offset);
    Some(Diagnostic::new(path, line, column, message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_one_line_of_bounded_text() {
        assert_eq!(value_problem("Andorra"), None);
        assert_eq!(value_problem("Côte d’Ivoire, « B2B »"), None);
        let (at, message) = value_problem("Andorra\nBEGIN:VEVENT").unwrap();
        assert_eq!(at, 7);
        assert!(
            message.starts_with("a line break inside a value"),
            "{message}"
        );
        assert!(value_problem("a\rb").unwrap().1.starts_with("a line break"));
        assert!(value_problem("a\tb").unwrap().1.starts_with("a tab"));
        assert!(value_problem("a\u{1b}b").unwrap().1.contains("U+001B"));
        assert!(value_problem("a\u{85}b").unwrap().1.contains("U+0085"));
        assert_eq!(value_problem(&"x".repeat(MAX_VALUE_BYTES)), None);
        assert!(
            value_problem(&"x".repeat(MAX_VALUE_BYTES + 1))
                .unwrap()
                .1
                .contains("at most 65536 bytes")
        );
    }

    #[test]
    fn a_toml_string_with_a_line_break_is_located_at_the_string() {
        let text = "title = \"\"\"Site\nBEGIN:VEVENT\"\"\"\n";
        let d = toml_problem("rules/site.toml", text).unwrap();
        assert_eq!((d.line, d.column), (1, 9), "{d}");
        let text = "a = \"fine\"\n[t]\nlabel = \"x\\ny\"\n";
        let d = toml_problem("rules/x.toml", text).unwrap();
        assert_eq!((d.line, d.column), (3, 9), "{d}");
        assert!(toml_problem("rules/x.toml", "a = [\"b\", 1]\n").is_none());
    }
}
