//! Writing XML text safely (the SVG figures, the Atom feed, the sitemap): escaping, and numbers in the
//! short form the figures use.

use std::fmt::Write;

/// `value` as XML character data or attribute text: the five markup characters become entities, and
/// characters XML 1.0 forbids (most C0 controls) are dropped, so any input string stays text.
pub fn escape(value: &str) -> String {
    use locref_escape::escape::{html_escape_of, is_html_special};
    let mut out = String::with_capacity(value.len());
    // Read as UTF-8 bytes and copied in runs: what is replaced or dropped is ASCII, or U+FFFE / U+FFFF
    // (`EF BF BE` / `EF BF BF`), so every run is whole characters.
    let may_change = |b: u8| is_html_special(b) | (b < 0x20) | (b == 0xEF);
    let replacement = |rest: &[u8]| match rest[0] {
        b'\t' | b'\n' | b'\r' => None,
        0x00..=0x1F => Some(("", 1)),
        0xEF if rest[1] == 0xBF && matches!(rest[2], 0xBE | 0xBF) => Some(("", 3)),
        byte => html_escape_of(byte).map(|with| (with, 1)),
    };
    locref_escape::bytescan::write_replacing(&mut out, value, may_change, replacement)
        .expect("writing to a String cannot fail");
    out
}

/// A coordinate with at most one decimal ("12", "12.5"), which is all the precision a figure needs.
pub fn num(value: f64) -> String {
    let tenths = (value * 10.0).round();
    if !tenths.is_finite() {
        return "0".into();
    }
    let mut out = String::new();
    if tenths % 10.0 == 0.0 {
        let _ = write!(out, "{}", tenths / 10.0);
    } else {
        let _ = write!(out, "{:.1}", tenths / 10.0);
    }
    if out == "-0" { "0".into() } else { out }
}

/// A class-name fragment from free text ("in force" -> "in-force"): lower-case ASCII letters and digits,
/// other runs as one hyphen.
pub fn slug(value: &str) -> String {
    let mut out = String::new();
    for c in value.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    while out.ends_with('-') {
        out.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_keeps_markup_characters_as_text() {
        assert_eq!(
            escape(r#"<a & "b" 'c'>"#),
            "&lt;a &amp; &quot;b&quot; &#39;c&#39;&gt;"
        );
        assert_eq!(escape("a\u{0}b\u{1b}c\nd"), "abc\nd");
    }

    #[test]
    fn numbers_are_short() {
        assert_eq!(num(12.0), "12");
        assert_eq!(num(12.04), "12");
        assert_eq!(num(12.25), "12.3");
        assert_eq!(num(-0.01), "0");
        assert_eq!(num(f64::NAN), "0");
    }

    #[test]
    fn slugs() {
        assert_eq!(slug("In force"), "in-force");
        assert_eq!(slug(" -planned!! "), "planned");
        assert_eq!(slug("<&>"), "");
    }

    proptest::proptest! {
        /// The escape reads bytes in runs and writes what a character at a time wrote.
        #[test]
        fn the_escape_by_runs_writes_what_a_character_at_a_time_wrote(
            chars in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::char::any(),
                    proptest::sample::select(vec![
                        '\0', '\u{1}', '\t', '\n', '\r', '\u{1F}', ' ', '&', '<', '>', '"', '\'', 'é',
                        '\u{FFFD}', '\u{FFFE}', '\u{FFFF}', '\u{1FFFE}', '\u{10FFFF}',
                    ]),
                ],
                0..16,
            )
        ) {
            let text: String = chars.into_iter().collect();
            let mut by_character = String::new();
            for c in text.chars() {
                match c {
                    '&' => by_character.push_str("&amp;"),
                    '<' => by_character.push_str("&lt;"),
                    '>' => by_character.push_str("&gt;"),
                    '"' => by_character.push_str("&quot;"),
                    '\'' => by_character.push_str("&#39;"),
                    '\t' | '\n' | '\r' => by_character.push(c),
                    c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
                    c => by_character.push(c),
                }
            }
            proptest::prop_assert_eq!(escape(&text), by_character);
        }
    }
}
