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
}

impl Diagnostic {
    pub fn new(path: &str, line: u32, column: u32, message: impl Into<String>) -> Self {
        Diagnostic {
            path: path.to_string(),
            line,
            column,
            message: message.into(),
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
