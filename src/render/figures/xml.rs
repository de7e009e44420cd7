//! Writing XML text safely (the SVG figures, the Atom feed, the sitemap): escaping, and numbers in the
//! short form the figures use.

use std::fmt::Write;

/// `value` as XML character data or attribute text: the five markup characters become entities, and
/// characters XML 1.0 forbids (most C0 controls) are dropped, so any input string stays text.
pub(crate) fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
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
}
