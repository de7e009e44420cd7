//! The one HTML escape table: what the pages' templates, the pages' Rust-made pieces and the figures'
//! and feeds' XML (`figures::xml`) write for `& < > " '`. A leaf: it imports nothing of the renderers.

/// Escapes `& < > " '`: enough for HTML text and for attribute values in double or single quotes.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    write_escaped_html(&mut out, text).expect("writing to a String cannot fail");
    out
}

/// What [`escape_html`] writes for one byte of text, if it is not the byte itself (the XML escape of the
/// figures and feeds writes the same entities).
pub fn html_escape_of(byte: u8) -> Option<&'static str> {
    match byte {
        b'&' => Some("&amp;"),
        b'<' => Some("&lt;"),
        b'>' => Some("&gt;"),
        b'"' => Some("&quot;"),
        b'\'' => Some("&#39;"),
        _ => None,
    }
}

/// Whether [`html_escape_of`] replaces `byte`, written as [`crate::bytescan::find_byte`] wants it.
#[inline]
pub fn is_html_special(b: u8) -> bool {
    (b == b'&') | (b == b'<') | (b == b'>') | (b == b'"') | (b == b'\'')
}

/// Writes `text` escaped as [`escape_html`] does, straight into `out`. The five characters are ASCII, so
/// the text is scanned as bytes and written in runs: a page's values are most of its bytes, and a
/// character at a time was a tenth of an x100 edit.
pub fn write_escaped_html(out: &mut impl std::fmt::Write, text: &str) -> std::fmt::Result {
    crate::bytescan::write_replacing(out, text, is_html_special, |rest| {
        html_escape_of(rest[0]).map(|with| (with, 1))
    })
}
