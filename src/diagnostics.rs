//! Located diagnostics: every problem in a source or rule file is reported as `file:line:column: message`,
//! and a build reports all of them together.

use std::fmt;

/// One problem found in an input file. Lines and columns are 1-based; column counts characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Diagnostic {
    pub path: String,
    pub line: u32,
    pub column: u32,
    pub message: String,
    /// For the count of a file's problems left out ([`Diagnostic::more_in_file`]): how many.
    pub left_out: usize,
}

impl Diagnostic {
    pub fn new(path: &str, line: u32, column: u32, message: impl Into<String>) -> Self {
        Diagnostic {
            path: path.to_string(),
            line,
            column,
            message: message.into(),
            left_out: 0,
        }
    }

    /// The count of a file's problems beyond [`MAX_PER_FILE`], located where they start.
    pub fn more_in_file(path: &str, line: u32, count: usize) -> Self {
        Diagnostic {
            left_out: count,
            ..Diagnostic::new(
                path,
                line,
                1,
                format!("{count} more error(s) in this file from here on are not shown"),
            )
        }
    }

    /// A problem with the file as a whole (missing, empty), located at its start.
    pub fn file(path: &str, message: impl Into<String>) -> Self {
        Diagnostic::new(path, 1, 1, message)
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: error: {}",
            self.path, self.line, self.column, self.message
        )
    }
}

/// How many problems of one file a build reports; the rest are counted in one last line, so a huge broken
/// file (a spreadsheet export gone wrong) gives a screenful of errors, not hundreds of megabytes.
pub const MAX_PER_FILE: usize = 50;

/// How many problems of one file a parser keeps in memory before it only counts them.
pub const PARSER_LIMIT: usize = 1000;

/// Keeps the first [`MAX_PER_FILE`] diagnostics of each file of `sorted` (sorted by file), and counts the
/// rest in one diagnostic at the first one left out. A parser may keep more than that (up to
/// [`PARSER_LIMIT`]) and count the rest itself; its count is added in.
pub fn cap_per_file(sorted: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = Vec::new();
    // The file being read, how many of its diagnostics were kept, and its first one left out with the
    // count of those left out.
    let mut file = String::new();
    let mut kept = 0;
    let mut left_out: Option<(Diagnostic, usize)> = None;
    for diagnostic in sorted {
        if diagnostic.path != file {
            out.extend(
                left_out
                    .take()
                    .map(|(d, n)| Diagnostic::more_in_file(&d.path, d.line, n)),
            );
            file.clone_from(&diagnostic.path);
            kept = 0;
        }
        if kept < MAX_PER_FILE {
            kept += 1;
            out.push(diagnostic);
        } else {
            // A count made earlier (by a parser that stopped keeping errors) adds its own count.
            let count = diagnostic.left_out.max(1);
            match &mut left_out {
                Some((_, n)) => *n += count,
                None => left_out = Some((diagnostic, count)),
            }
        }
    }
    out.extend(left_out.map(|(d, n)| Diagnostic::more_in_file(&d.path, d.line, n)));
    out
}

/// A parsed value together with the problems found while producing it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked<T> {
    pub value: T,
    pub diagnostics: Vec<Diagnostic>,
}

impl<T> Checked<T> {
    pub fn new(value: T, diagnostics: Vec<Diagnostic>) -> Self {
        Checked { value, diagnostics }
    }
}

/// 1-based line and character column of byte `offset` in `text`.
pub fn line_column(text: &str, offset: usize) -> (u32, u32) {
    let offset = offset.min(text.len());
    let before = &text[..floor_char_boundary(text, offset)];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line as u32, column as u32)
}

fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}
