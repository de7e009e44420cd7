//! Located diagnostics: every problem in a source or rule file is reported as `file:line:column: message`,
//! and a build reports all of them together.

use std::fmt;
use std::ops::Range;

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
            message: shown(message.into()),
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

/// The longest message a diagnostic prints: a message quotes what it is about, and a cell of a million
/// characters must not become a megabyte line (the longest message of locref's own, the list of
/// renderers, is about 1,100 characters).
pub const MAX_MESSAGE_CHARS: usize = 1500;

/// A message as a terminal and a browser overlay may show it: each control character written as a
/// visible escape (`\u{1B}`), so a value cannot move the cursor, colour the terminal or break the line,
/// and at most [`MAX_MESSAGE_CHARS`] characters, cut with an ellipsis.
fn shown(message: String) -> String {
    let plain = !message.chars().any(char::is_control);
    if plain && message.len() <= MAX_MESSAGE_CHARS {
        return message;
    }
    let mut out = String::new();
    for (i, c) in message.chars().enumerate() {
        if i == MAX_MESSAGE_CHARS {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.push_str(&format!("\\u{{{:X}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
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
pub(crate) const MAX_PER_FILE: usize = 50;

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

/// 1-based line and character column of byte `offset` in `text` (one lookup; see [`LineIndex`] for many).
pub fn line_column(text: &str, offset: usize) -> (u32, u32) {
    LineIndex::new(text).locate(offset)
}

/// Where each line of a text starts, so that byte offsets (what parsers and searches give) become the
/// `line:column` of a diagnostic without rescanning the text for each one. The crate's one way of
/// counting: lines end at `\n`; lines and columns are 1-based; a column counts characters, not bytes.
#[derive(Debug, Clone)]
pub struct LineIndex<'t> {
    text: &'t str,
    /// Byte offset of the start of each line: 0, then one past every `\n`.
    starts: Vec<usize>,
}

impl<'t> LineIndex<'t> {
    pub fn new(text: &'t str) -> Self {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        LineIndex { text, starts }
    }

    /// The line and column of byte `offset`. An offset inside a character is that character's; an offset
    /// at or past the end of the text is the end of the last line (so "unexpected end of file" has a
    /// place), and a line's `\n` is the column after its last character.
    pub fn locate(&self, offset: usize) -> (u32, u32) {
        let offset = floor_char_boundary(self.text, offset.min(self.text.len()));
        // `starts[0]` is 0, so at least one start is at or before `offset`.
        let index = self.starts.partition_point(|&start| start <= offset) - 1;
        let column = self.text[self.starts[index]..offset].chars().count() + 1;
        (saturating_u32(index + 1), saturating_u32(column))
    }

    /// A reader of positions that remembers the last one: offsets given in increasing order (the cells
    /// of a row, the spans of a file) cost what lies between them, not a count from the line's start
    /// each time, so a line a million cells wide is located in one pass.
    pub fn cursor(&self) -> LineCursor<'_, 't> {
        LineCursor {
            index: self,
            last: None,
        }
    }

    /// The text the index is of.
    pub fn text(&self) -> &'t str {
        self.text
    }

    /// The byte range of 1-based `line` without its `\n`; line 0 is read as the first line and a line
    /// past the last as the last (a parser's line count may not be this one's).
    pub(crate) fn line_range(&self, line: u32) -> Range<usize> {
        let index = (line.max(1) as usize - 1).min(self.starts.len() - 1);
        let end = self
            .starts
            .get(index + 1)
            .map_or(self.text.len(), |next| next - 1);
        self.starts[index]..end
    }
}

/// See [`LineIndex::cursor`].
pub struct LineCursor<'i, 't> {
    index: &'i LineIndex<'t>,
    /// The last offset located: its byte offset, line index (0-based) and column.
    last: Option<(usize, usize, usize)>,
}

impl LineCursor<'_, '_> {
    /// The line and column of byte `offset`, as [`LineIndex::locate`] gives them.
    pub fn locate(&mut self, offset: usize) -> (u32, u32) {
        let index = self.index;
        let text = index.text;
        let offset = floor_char_boundary(text, offset.min(text.len()));
        let line = match self.last {
            // Further along the same line: count only what lies between.
            Some((at, line, column))
                if offset >= at && index.starts.get(line + 1).is_none_or(|&next| offset < next) =>
            {
                let column = column + text[at..offset].chars().count();
                self.last = Some((offset, line, column));
                return (saturating_u32(line + 1), saturating_u32(column));
            }
            _ => index.starts.partition_point(|&start| start <= offset) - 1,
        };
        let column = text[index.starts[line]..offset].chars().count() + 1;
        self.last = Some((offset, line, column));
        (saturating_u32(line + 1), saturating_u32(column))
    }
}

fn saturating_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

#[cfg(test)]
mod shown_tests {
    use super::{Diagnostic, MAX_MESSAGE_CHARS};

    #[test]
    fn a_message_shows_control_characters_as_escapes_and_is_cut_short() {
        let d = Diagnostic::new("x", 1, 1, "`\u{1b}[31mred\nline` is bad");
        assert_eq!(d.message, "`\\u{1B}[31mred\\u{A}line` is bad");
        let long = "y".repeat(1_000_000);
        let d = Diagnostic::new("x", 1, 1, format!("`{long}` is bad"));
        assert_eq!(d.message.chars().count(), MAX_MESSAGE_CHARS + 1);
        assert!(d.message.ends_with('…'));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locates_offsets_in_characters_across_lines() {
        // "é" and "€" are 2 and 3 bytes: columns count them once.
        let text = "ab\né€x\n\nlast";
        let index = LineIndex::new(text);
        let at = |needle: &str| index.locate(text.find(needle).unwrap());
        assert_eq!(index.locate(0), (1, 1));
        assert_eq!(at("b"), (1, 2));
        assert_eq!(at("é"), (2, 1));
        assert_eq!(at("€"), (2, 2));
        assert_eq!(at("x"), (2, 3));
        assert_eq!(at("last"), (4, 1));
        // The empty third line.
        assert_eq!(index.locate(text.find("\n\n").unwrap() + 1), (3, 1));
    }

    #[test]
    fn line_ends_the_end_and_past_it() {
        let text = "ab\né€\n";
        let index = LineIndex::new(text);
        // A line's `\n` is just after its last character.
        assert_eq!(index.locate(2), (1, 3));
        assert_eq!(index.locate(text.rfind('\n').unwrap()), (2, 3));
        // The end of a text that ends with `\n` is the start of the (empty) line after it.
        assert_eq!(index.locate(text.len()), (3, 1));
        assert_eq!(index.locate(text.len() + 10), (3, 1));
        assert_eq!(index.locate(usize::MAX), (3, 1));
        let unterminated = LineIndex::new("ab\ncd");
        assert_eq!(unterminated.locate(5), (2, 3));
        assert_eq!(unterminated.locate(99), (2, 3));
        let empty = LineIndex::new("");
        assert_eq!((empty.locate(0), empty.locate(3)), ((1, 1), (1, 1)));
        assert_eq!(empty.line_range(1), 0..0);
    }

    #[test]
    fn an_offset_inside_a_character_is_that_character() {
        let text = "a€b";
        let index = LineIndex::new(text);
        for offset in 1..4 {
            assert_eq!(index.locate(offset), (1, 2), "offset {offset}");
        }
        assert_eq!(index.locate(4), (1, 3));
    }

    #[test]
    fn line_ranges_exclude_the_line_end_and_clamp_the_line() {
        let text = "ab\né€\n\nz";
        let index = LineIndex::new(text);
        let line = |n: u32| &text[index.line_range(n)];
        assert_eq!([line(1), line(2), line(3), line(4)], ["ab", "é€", "", "z"]);
        assert_eq!(line(0), "ab");
        assert_eq!(line(5), "z");
        assert_eq!(line(u32::MAX), "z");
        let trailing = "ab\n";
        assert_eq!(&trailing[LineIndex::new(trailing).line_range(2)], "");
    }

    #[test]
    fn line_column_is_one_lookup_in_the_index() {
        assert_eq!(line_column("a\nbé", 4), (2, 2));
        assert_eq!(line_column("a\nbé", 100), (2, 3));
    }

    proptest::proptest! {
        /// The index agrees with counting by hand, for every offset of any text of ASCII and multi-byte
        /// characters and line ends.
        #[test]
        fn locate_counts_lines_and_characters(text in "(a|é|€|🦀|\n|\r){0,40}", past in 0usize..4) {
            let index = LineIndex::new(&text);
            for offset in 0..=text.len() + past {
                let mut end = offset.min(text.len());
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                let before = &text[..end];
                let line = before.matches('\n').count() + 1;
                let column = before[before.rfind('\n').map_or(0, |i| i + 1)..].chars().count() + 1;
                proptest::prop_assert_eq!(index.locate(offset), (line as u32, column as u32), "offset {}", offset);
            }
        }

        /// The cursor gives what the index gives, whatever order the offsets come in (increasing ones
        /// cost only what lies between them).
        #[test]
        fn the_cursor_agrees_with_the_index(
            text in "(a|é|€|\n|,){0,60}",
            offsets in proptest::collection::vec(0usize..70, 0..30),
            sorted in proptest::bool::ANY,
        ) {
            let index = LineIndex::new(&text);
            let mut offsets = offsets;
            if sorted {
                offsets.sort();
            }
            let mut cursor = index.cursor();
            for offset in offsets {
                proptest::prop_assert_eq!(cursor.locate(offset), index.locate(offset), "offset {}", offset);
            }
        }
    }
}
