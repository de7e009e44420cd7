//! Parse: each input file on its own becomes typed records, or located diagnostics.
//!
//! A parser never looks at another file; cross-file checks (unknown country, duplicate id, vocabulary)
//! happen in [`crate::model`]. Each parser is a tracked query, so an edit re-parses only its own file.

pub mod csv_table;
pub mod json_sources;
pub mod rules;
pub mod tables;
pub(crate) mod text;

use bytestring::ByteString;

use crate::db::{SourceFile, lookup};
use crate::diagnostics::{Diagnostic, line_column};

/// The decoded text of a file, normalized: a UTF-8 byte-order mark is dropped and CRLF / CR line ends
/// become LF. Invalid UTF-8, control characters and empty files are errors located at their position.
/// A file with LF line ends (every file a build writes or the project ships) is not copied: its text
/// shares the bytes read from disk.
///
/// `no_eq`: new bytes are new text but for a byte-order mark or line ends, and comparing the new text
/// with the last (24 MB for the facts table at x100) cost more than what it could spare.
#[salsa::tracked(returns(ref), no_eq)]
pub fn decoded_text(db: &dyn salsa::Database, file: SourceFile) -> Result<ByteString, Diagnostic> {
    let path = file.path(db);
    let mut bytes = file.bytes(db).clone();
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        bytes = bytes.slice(3..);
    }
    // The common case: UTF-8 with LF line ends, nothing to normalize. (A CR is a control character:
    // when it is the first, the text is normalized below and checked again.)
    if let Some(control) = plain_text_control(&bytes)
        && !matches!(control, Some((_, '\r')))
    {
        // SAFETY: `plain_text_control` found every byte of `bytes` to be UTF-8.
        let text = unsafe { ByteString::from_bytes_unchecked(bytes) };
        return checked_text(path, text, control);
    }
    let text = match ByteString::try_from(bytes.clone()) {
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
    let text = if text.contains('\r') {
        ByteString::from(text.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        text
    };
    let control = first_control(&text);
    checked_text(path, text, control)
}

/// `text` (UTF-8, LF line ends), or the problem of its first control character or of its emptiness.
fn checked_text(
    path: &str,
    text: ByteString,
    control: Option<(usize, char)>,
) -> Result<ByteString, Diagnostic> {
    if let Some((offset, c)) = control {
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

/// `None` unless `bytes` are UTF-8, else their first control character
/// ([`first_control`]). A large file is checked in two halves on two threads (at x100 the facts table
/// is 24 MB, and this check was a tenth of an edit), cut after a line end, which no UTF-8 sequence
/// holds, so each half is UTF-8 exactly when the whole is.
fn plain_text_control(bytes: &[u8]) -> Option<Option<(usize, char)>> {
    plain_text_control_from(bytes, 1 << 20)
}

/// [`plain_text_control`], on two threads from `two_threads_from` bytes.
fn plain_text_control_from(bytes: &[u8], two_threads_from: usize) -> Option<Option<(usize, char)>> {
    let check = |part: &[u8]| simdutf8::basic::from_utf8(part).ok().map(first_control);
    let middle = (bytes.len() >= two_threads_from)
        .then(|| memchr::memchr(b'\n', &bytes[bytes.len() / 2..]))
        .flatten()
        .map(|at| bytes.len() / 2 + at + 1);
    let Some(middle) = middle else {
        return check(bytes);
    };
    let (first, second) = bytes.split_at(middle);
    let (first, second) = std::thread::scope(|scope| {
        let second = scope.spawn(|| check(second));
        (check(first), second.join().ok().flatten())
    });
    Some(first?.or(second?.map(|(at, c)| (middle + at, c))))
}

/// The first control character other than LF and tab (Unicode's Cc: U+0000-U+001F, U+007F-U+009F), and
/// its byte offset. The bytes are scanned a block at a time (C0 controls and DEL are single bytes; a C1
/// control starts with 0xC2), and only a block holding such a byte is decoded.
fn first_control(text: &str) -> Option<(usize, char)> {
    const BLOCK: usize = 64;
    let bytes = text.as_bytes();
    let suspect = |b: u8| (b < 0x20 && b != b'\n' && b != b'\t') | (b == 0x7F) | (b == 0xC2);
    for (i, block) in bytes.chunks(BLOCK).enumerate() {
        if !block.iter().fold(false, |any, &b| any | suspect(b)) {
            continue;
        }
        // Decode from the char boundary at or before the block to the end of the char that ends it.
        let mut start = i * BLOCK;
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        let end = (i + 1) * BLOCK;
        let found = text[start..]
            .char_indices()
            .take_while(|(at, _)| start + at < end)
            .find(|(_, c)| c.is_control() && *c != '\n' && *c != '\t');
        if let Some((at, c)) = found {
            return Some((start + at, c));
        }
    }
    None
}

/// The decoded text of the project file at `path`, or why it cannot be read.
pub(crate) fn source_text<'db>(
    db: &'db dyn salsa::Database,
    path: &str,
) -> Result<&'db str, Diagnostic> {
    shared_source_text(db, path).map(|text| &**text)
}

/// [`source_text`] as a shared string, of which a query can keep slices without copying them.
pub(crate) fn shared_source_text<'db>(
    db: &'db dyn salsa::Database,
    path: &str,
) -> Result<&'db ByteString, Diagnostic> {
    match lookup(db, path) {
        Some(file) => decoded_text(db, file).as_ref().map_err(Clone::clone),
        None => Err(Diagnostic::file(path, "file is missing")),
    }
}

/// Why a text value may not be published, if it starts like a spreadsheet formula (`=`, `+`, `-`, `@`, a
/// tab or a carriage return): a spreadsheet opening the published CSV would run it. Such values are
/// rejected where they are read (CSV cells and JSON strings alike), never rewritten on the way out, so the
/// CSV and JSON files always publish the same text.
pub(crate) fn formula_problem(text: &str) -> Option<String> {
    let first = text.chars().next()?;
    matches!(first, '=' | '+' | '-' | '@' | '\t' | '\r').then(|| {
        format!(
            "a value may not start with `{}`: a spreadsheet opening the published CSV would run it as a formula; reword it",
            first.escape_default()
        )
    })
}

/// Whether `value` is an absolute http(s) URL with a host and no whitespace.
pub fn is_http_url(value: &str) -> bool {
    url_problem(value).is_none()
}

/// Whether `value` reads as an `http(s)` URL by the looser rule of the releases recorded before URLs were
/// held to [`url_problem`]: a frozen snapshot keeps the URLs it published (some with credentials or a host
/// ending in a dot), and its history stays readable.
pub(crate) fn is_recorded_http_url(value: &str) -> bool {
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

/// Why `value` is not a well-formed `http(s)` URL of a host, if it is not: a reader's browser (and the Nu
/// HTML Checker) must be able to follow it as written.
pub fn url_problem(value: &str) -> Option<&'static str> {
    let Some(rest) = value
        .strip_prefix("https://")
        .or_else(|| value.strip_prefix("http://"))
    else {
        return Some("it does not start with `http://` or `https://`");
    };
    if value
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || c == '"' || c == '<' || c == '>')
    {
        return Some("it holds a space, a control character, a quote or an angle bracket");
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.contains('@') {
        return Some("it names a user or credentials before its host (`user@host`)");
    }
    let host = match authority.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => authority,
    };
    if host.is_empty() {
        return Some("it has no host");
    }
    if host.ends_with('.') {
        return Some("its host ends with a dot");
    }
    let label_ok = |label: &str| {
        !label.is_empty()
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label
                .chars()
                .all(|c| c.is_alphanumeric() || c == '-' || c == '_')
    };
    let bracketed_ip = host.starts_with('[') && host.ends_with(']');
    if !bracketed_ip && !host.split('.').all(label_ok) {
        return Some("its host is not a host name");
    }
    None
}

/// Whether `value` is an ISO calendar date `YYYY-MM-DD` that exists.
pub(crate) fn is_iso_date(value: &str) -> bool {
    value.len() == 10 && value.parse::<jiff::civil::Date>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::{first_control, plain_text_control_from, url_problem};

    #[test]
    fn a_source_url_is_a_well_formed_http_url_of_a_host() {
        for good in [
            "https://www.iras.gov.sg/who-we-are/",
            "http://example.org",
            "https://example.org:8443/a?b=c#d",
            "https://de.wikipedia.org/wiki/Umsatzsteuer_(Deutschland)",
            "https://xn--e1afmkfd.xn--p1ai/",
        ] {
            assert_eq!(url_problem(good), None, "{good}");
        }
        for bad in [
            "http://mailto:data_mgmt@iras.gov.sg/who-we-are/",
            "https://user:pass@example.org/",
            "https://issuu.com./abacusag/docs/x",
            "https://exa mple.org/",
            "https:///path",
            "ftp://example.org/",
            "javascript:alert(1)",
            "https://-bad.example/",
            "https://a..b/",
        ] {
            assert!(url_problem(bad).is_some(), "{bad}");
        }
    }
    use proptest::prelude::*;

    /// The definition the block scan must agree with: the first char that is a control but not LF or tab.
    fn first_control_by_chars(text: &str) -> Option<(usize, char)> {
        text.char_indices()
            .find(|(_, c)| c.is_control() && *c != '\n' && *c != '\t')
    }

    #[test]
    fn finds_c0_c1_and_del_at_any_position_and_nothing_else() {
        let filler = "é".repeat(40); // two bytes each: blocks of 64 bytes end inside and between chars
        for at in 0..140 {
            let prefix: String = filler
                .chars()
                .chain("abc".chars().cycle())
                .take(at)
                .collect();
            for control in [
                '\u{0}', '\u{1}', '\u{1F}', '\u{7F}', '\u{80}', '\u{85}', '\u{9F}',
            ] {
                let text = format!("{prefix}{control}\u{A0}tail");
                assert_eq!(
                    first_control(&text),
                    Some((prefix.len(), control)),
                    "{text:?}"
                );
            }
            // No-break space (0xC2 0xA0), tab and line feed are not controls.
            let text = format!("{prefix}\u{A0}\t\n\u{BF}x");
            assert_eq!(first_control(&text), None, "{text:?}");
        }
    }

    proptest! {
        #[test]
        fn agrees_with_a_scan_of_the_chars(text in "(\\PC|[\\x00-\\x1F\\x7F\\u{80}-\\u{A0}é€😀]){0,300}") {
            prop_assert_eq!(first_control(&text), first_control_by_chars(&text));
        }

        /// Checked whole or in two halves, any bytes: `None` unless UTF-8, else the first control.
        #[test]
        fn the_check_in_halves_agrees_with_the_definition(
            parts in proptest::collection::vec(
                prop_oneof![
                    "(\\PC|[\\x00-\\x1F\\x7F\\u{80}-\\u{A0}é€😀\n]){0,40}".prop_map(String::into_bytes),
                    proptest::collection::vec(any::<u8>(), 0..4),
                ],
                0..8,
            ),
            two_threads_from in 0usize..200,
        ) {
            let bytes = parts.concat();
            let expected = std::str::from_utf8(&bytes).ok().map(first_control_by_chars);
            prop_assert_eq!(plain_text_control_from(&bytes, two_threads_from), expected);
        }
    }
}
