//! Text measured without a font: a figure is laid out at build time, before any browser picks a font,
//! so widths are estimated per character on the generous side of common sans-serif faces. Layouts leave
//! room for the estimate to be off.

/// The estimated advance of `c` in ems.
fn advance(c: char) -> f64 {
    match c {
        'i' | 'j' | 'l' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' | '(' | ')' => 0.3,
        ' ' | 'f' | 't' | 'r' | 'I' | '-' | '/' => 0.38,
        'm' | 'w' | 'M' | 'W' | '@' | '%' => 0.88,
        '—' => 1.0,
        c if c.is_ascii_uppercase() => 0.7,
        c if c.is_ascii_digit() => 0.58,
        c if c.is_ascii() => 0.56,
        // Other scripts and symbols: as wide as a capital, to be safe.
        _ => 0.75,
    }
}

/// The estimated width of `text` at `font_size`, bold faces being about 7% wider.
pub(crate) fn width(text: &str, font_size: f64, bold: bool) -> f64 {
    let ems: f64 = text.chars().map(advance).sum();
    ems * font_size * if bold { 1.07 } else { 1.0 }
}

/// `text` broken into lines no wider than `max_width`, at spaces; a word too long for a line is cut.
/// Always at least one line.
pub(crate) fn wrap(text: &str, max_width: f64, font_size: f64, bold: bool) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let candidate = if line.is_empty() {
            word.to_string()
        } else {
            format!("{line} {word}")
        };
        if width(&candidate, font_size, bold) <= max_width {
            line = candidate;
            continue;
        }
        if !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        // The word alone: cut it where it overflows.
        for c in word.chars() {
            line.push(c);
            if width(&line, font_size, bold) > max_width && line.chars().count() > 1 {
                let last = line.pop().unwrap_or(c);
                lines.push(std::mem::take(&mut line));
                line.push(last);
            }
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_fit_their_width() {
        let text = "B2B e-invoicing: issue and receive, large companies first, then everyone else";
        let lines = wrap(text, 200.0, 13.0, false);
        assert!(lines.len() > 1);
        assert!(
            lines.iter().all(|l| width(l, 13.0, false) <= 200.0),
            "{lines:?}"
        );
        assert_eq!(lines.join(" "), text);
    }

    #[test]
    fn long_words_are_cut_and_empty_text_is_one_line() {
        let lines = wrap(&"x".repeat(80), 100.0, 13.0, true);
        assert!(lines.len() > 1);
        assert!(
            lines.iter().all(|l| width(l, 13.0, true) <= 100.0),
            "{lines:?}"
        );
        assert_eq!(wrap("", 100.0, 13.0, false), vec![String::new()]);
    }
}
