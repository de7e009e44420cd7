//! The HTML side of the check. A page is parsed by html5ever (the WHATWG parser of Servo and `scraper`),
//! so its errors are those a browser's parser meets, decided by the tree builder from its own state; the
//! sink keeps no tree, only what the check needs (ids, link attributes, the line of each element and
//! error). A page is parsed on html5ever's fast path first and exactly only when there is something to
//! report: a valid page costs one quick parse, an invalid one gets html5ever's exact messages, made
//! readable and located at the tag they name.

use std::borrow::Cow;
use std::cell::{Cell, Ref, RefCell};
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::OnceLock;

use html5ever::interface::{ElementFlags, NodeOrText, QuirksMode, TreeSink};
use html5ever::tendril::{StrTendril, TendrilSink};
use html5ever::tokenizer::TokenizerOpts;
use html5ever::tree_builder::TreeBuilderOpts;
use regex::Regex;

use html5ever::{Attribute, ParseOpts, QualName, local_name, ns, parse_document, parse_fragment};

use super::resolve::resolve;
use super::{Link, PageLinks};
use crate::diagnostics::{Diagnostic, LineIndex};
use crate::output::GENERATED_AT_MARK;

/// The attributes that name another resource, per element: `<a href>`, `<link href>`, `<script src>`,
/// `<img src>`.
fn link_attribute(name: &QualName) -> Option<&'static str> {
    // An inline SVG's links (the map's countries, the timeline's events) are links too.
    if name.ns == ns!(svg) && name.local == local_name!("a") {
        return Some("href");
    }
    if name.ns != ns!(html) {
        return None;
    }
    match name.local {
        local_name!("a") | local_name!("link") | local_name!("area") => Some("href"),
        local_name!("script") | local_name!("img") | local_name!("iframe") => Some("src"),
        local_name!("form") => Some("action"),
        _ => None,
    }
}

/// One element as the parser created it (in source order), with the line of its start tag's end.
struct Created {
    line: u32,
    name: QualName,
    attrs: Vec<Attribute>,
}

/// A [`TreeSink`] that keeps no tree: only element names (the tree builder asks for them), the elements
/// created with their lines, and the parse errors with theirs.
struct Recorder {
    line: Cell<u64>,
    names: RefCell<Vec<QualName>>,
    created: RefCell<Vec<Created>>,
    errors: RefCell<Vec<(u32, Cow<'static, str>)>>,
}

impl Recorder {
    fn new() -> Self {
        Recorder {
            line: Cell::new(1),
            // Handle 0 is the document.
            names: RefCell::new(vec![QualName::new(None, ns!(), local_name!(""))]),
            created: RefCell::new(Vec::new()),
            errors: RefCell::new(Vec::new()),
        }
    }

    fn new_handle(&self, name: QualName) -> usize {
        let mut names = self.names.borrow_mut();
        names.push(name);
        names.len() - 1
    }
}

impl TreeSink for Recorder {
    type Handle = usize;
    type Output = Self;
    type ElemName<'a> = Ref<'a, QualName>;

    fn finish(self) -> Self {
        self
    }

    fn parse_error(&self, msg: Cow<'static, str>) {
        self.errors.borrow_mut().push((self.line.get() as u32, msg));
    }

    fn set_current_line(&self, line: u64) {
        self.line.set(line);
    }

    fn get_document(&self) -> usize {
        0
    }

    fn elem_name<'a>(&'a self, target: &'a usize) -> Ref<'a, QualName> {
        Ref::map(self.names.borrow(), |names| &names[*target])
    }

    fn create_element(&self, name: QualName, attrs: Vec<Attribute>, _: ElementFlags) -> usize {
        self.created.borrow_mut().push(Created {
            line: self.line.get() as u32,
            name: name.clone(),
            attrs,
        });
        self.new_handle(name)
    }

    fn create_comment(&self, _: StrTendril) -> usize {
        self.new_handle(QualName::new(None, ns!(), local_name!("")))
    }

    fn create_pi(&self, _: StrTendril, _: StrTendril) -> usize {
        self.new_handle(QualName::new(None, ns!(), local_name!("")))
    }

    fn append(&self, _: &usize, _: NodeOrText<usize>) {}

    fn append_based_on_parent_node(&self, _: &usize, _: &usize, _: NodeOrText<usize>) {}

    fn append_doctype_to_document(&self, _: StrTendril, _: StrTendril, _: StrTendril) {}

    fn get_template_contents(&self, _: &usize) -> usize {
        self.new_handle(QualName::new(None, ns!(), local_name!("")))
    }

    fn same_node(&self, x: &usize, y: &usize) -> bool {
        x == y
    }

    fn set_quirks_mode(&self, _: QuirksMode) {}

    fn append_before_sibling(&self, _: &usize, _: NodeOrText<usize>) {}

    fn add_attrs_if_missing(&self, _: &usize, _: Vec<Attribute>) {}

    fn remove_from_parent(&self, _: &usize) {}

    fn reparent_children(&self, _: &usize, _: &usize) {}
}

/// Where the value of the `attr` attribute (`href`, `src`) whose tag ends on `line` starts, searching
/// forward from `from` (the previous link's offset: attributes come in source order). Falls back to the
/// start of the line when the attribute is not found as written.
fn locate_attribute(lines: &LineIndex, from: usize, line: u32, attr: &str, value: &str) -> usize {
    let Range {
        start: line_start,
        end: line_end,
    } = lines.line_range(line);
    let from = from.min(line_end);
    let window = &lines.text()[from..line_end];
    let bytes = window.as_bytes();
    let mut first = None;
    let mut at = 0;
    while let Some(i) = memchr::memmem::find(&bytes[at..], attr.as_bytes()).map(|i| i + at) {
        at = i + 1;
        let preceded = i > 0 && bytes[i - 1].is_ascii_whitespace();
        let mut j = i + attr.len();
        if !preceded || bytes.get(j) != Some(&b'=') {
            continue;
        }
        j += 1;
        if matches!(bytes.get(j), Some(b'"' | b'\'')) {
            j += 1;
        }
        if window[j..].starts_with(value) {
            return from + j;
        }
        first.get_or_insert(from + j);
    }
    first.unwrap_or(line_start)
}

/// Makes html5ever's exact error messages readable: they print its tokens as Rust values
/// (`Tag { kind: EndTag, name: Atom('div' type=inline), .. } in insertion mode InBody` -> `</div> in body`).
fn readable(message: &str) -> String {
    static PATTERNS: OnceLock<[(Regex, &str); 6]> = OnceLock::new();
    let patterns = PATTERNS.get_or_init(|| {
        let re = |p: &str| Regex::new(p).expect("valid pattern");
        [
            (
                re(r"(?:Tag\()?Tag \{ kind: StartTag, name: Atom\(\\?'([^'\\]*)\\?'[^)]*\)[^}]*\}\)?"),
                "<$1>",
            ),
            (
                re(r"(?:Tag\()?Tag \{ kind: EndTag, name: Atom\(\\?'([^'\\]*)\\?'[^)]*\)[^}]*\}\)?"),
                "</$1>",
            ),
            (
                re(r"while closing Atom\(\\?'([^'\\]*)\\?'[^)]*\)"),
                "while closing </$1>",
            ),
            (re(r"Atom\(\\?'([^'\\]*)\\?'[^)]*\)"), "<$1>"),
            (re(r"\{http://www\.w3\.org/1999/xhtml\}:([\w-]+)"), "<$1>"),
            (
                re(r#"Characters\(\w+, Tendril<UTF8>\([^:]*: \\?"(.*?)\\?"\)\)"#),
                "text \"$1\"",
            ),
        ]
    });
    let mut out = message.to_string();
    for (pattern, replacement) in patterns {
        out = pattern.replace_all(&out, *replacement).into_owned();
    }
    if let Some((before, mode)) = out.split_once(" in insertion mode ") {
        let mut words = String::new();
        for c in mode.chars() {
            if c.is_ascii_uppercase() && !words.is_empty() {
                words.push(' ');
            }
            words.push(c.to_ascii_lowercase());
        }
        out = format!("{before} ({words})");
    }
    out.replacen("Unexpected token ", "unexpected ", 1)
}

/// The tag text (`</div`) an error message names, to point its column at the tag.
fn named_tag(message: &str) -> Option<String> {
    let start = message.find('<')?;
    let end = message[start..].find('>')? + start;
    Some(message[start..end].to_string())
}

/// Parses one page: its ids, its internal links with their positions, and its HTML errors.
///
/// The first parse takes html5ever's fast path (runs of characters are consumed whole, text by SIMD, not
/// character by character), which reports the same errors as an exact parse except two it has no look
/// for (a control character or noncharacter, and an odd character in an unquoted attribute value, see
/// `fast_parse_may_miss_errors`), and words its messages generically. A page with an error, or that may
/// hold one of those two, is parsed again exactly, so the messages and errors are those of
/// [`scan_exact`]; a valid page (every page of a good build) is parsed once, about twice as fast.
pub fn scan(path: &str, text: &str, base_url: &str) -> PageLinks {
    scan_in(path, text, base_url, None)
}

/// [`scan`] of a fragment of a page: `text` parsed as the content of an HTML element named `element`
/// (a page made of parts checks each part so, see `super::parts`).
pub fn scan_fragment(path: &str, text: &str, base_url: &str, element: &str) -> PageLinks {
    scan_in(path, text, base_url, Some(element))
}

/// [`scan`] of a page, or of a fragment in the element `context`.
fn scan_in(path: &str, text: &str, base_url: &str, context: Option<&str>) -> PageLinks {
    let text = &*with_placeholders_as_text(text);
    let fast = parse_html(text, false, context);
    if fast.errors.borrow().is_empty() && !fast_parse_may_miss_errors(text, &fast) {
        return collect(path, text, base_url, fast);
    }
    collect(path, text, base_url, parse_html(text, true, context))
}

/// `text` with each build-time placeholder ([`GENERATED_AT_MARK`]) read as ordinary text of the same
/// length, so that lines and columns stay those of the page. The check reads a page before the emit
/// step stamps it, and html5ever rejects the placeholder's NULs; a NUL anywhere else is still an error.
fn with_placeholders_as_text(text: &str) -> Cow<'_, str> {
    if memchr::memchr(0, text.as_bytes()).is_none() {
        return Cow::Borrowed(text);
    }
    const AS_TEXT: &str = "_generated_at_";
    const { assert!(AS_TEXT.len() == GENERATED_AT_MARK.len()) };
    Cow::Owned(text.replace(GENERATED_AT_MARK, AS_TEXT))
}

/// [`scan`] with html5ever's exact errors throughout (the reference the fast path is tested against).
pub fn scan_exact(path: &str, text: &str, base_url: &str) -> PageLinks {
    collect(path, text, base_url, parse_html(text, true, None))
}

/// Runs html5ever over `text` (a document, or the content of an element named `context`), recording
/// elements, lines and parse errors.
fn parse_html(text: &str, exact_errors: bool, context: Option<&str>) -> Recorder {
    let opts = ParseOpts {
        tokenizer: TokenizerOpts {
            exact_errors,
            ..TokenizerOpts::default()
        },
        tree_builder: TreeBuilderOpts {
            exact_errors,
            ..TreeBuilderOpts::default()
        },
    };
    match context {
        None => parse_document(Recorder::new(), opts).one(text),
        Some(element) => {
            let name = QualName::new(None, ns!(html), html5ever::LocalName::from(element));
            parse_fragment(Recorder::new(), opts, name, Vec::new(), false).one(text)
        }
    }
}

/// Whether the fast parse of `text` may have missed an error: it does not report a bad character, nor an
/// odd character in an unquoted attribute value (it takes runs of characters whole, without a look at
/// each one).
fn fast_parse_may_miss_errors(text: &str, fast: &Recorder) -> bool {
    has_bad_character(text) || may_have_odd_unquoted_value(text, fast)
}

/// Whether `text` holds a character html5ever reports only in exact mode ("Bad character": C0 and C1
/// controls other than whitespace and NUL, and noncharacters).
///
/// Read as UTF-8 bytes, not decoded (a page is read whole, and decoding it a character at a time was
/// most of the check's time on the large pages): the C0 controls and DEL are single bytes, the C1
/// controls are `C2 80`–`C2 9F`, U+FDD0–U+FDEF are `EF B7 90`–`EF B7 AF`, and a code point ending in
/// FFFE or FFFF is `EF BF BE`/`BF`, or four bytes with the second's low four bits set and `BF BE`/`BF`.
fn has_bad_character(text: &str) -> bool {
    let bytes = text.as_bytes();
    // A wider net than the bad bytes (whitespace, NUL and any lead byte from EF up), which `is_one`
    // then sorts out: comparisons the byte scan can vectorize.
    let may_begin_one = |b: u8| (b < 0x20) | (b == 0x7F) | (b == 0xC2) | (b >= 0xEF);
    // Valid UTF-8: a lead byte is followed by its continuation bytes, so the indexing stays in bounds.
    let is_one = |at: usize| match bytes[at] {
        0x00 | b'\t' | b'\n' | b'\x0C' | b'\r' => false,
        0xC2 => matches!(bytes[at + 1], 0x80..=0x9F),
        0xEF => matches!(
            (bytes[at + 1], bytes[at + 2]),
            (0xB7, 0x90..=0xAF) | (0xBF, 0xBE | 0xBF)
        ),
        0xF0..=0xF4 => {
            bytes[at + 1] & 0x0F == 0x0F
                && bytes[at + 2] == 0xBF
                && matches!(bytes[at + 3], 0xBE | 0xBF)
        }
        _ => true,
    };
    let mut from = 0;
    while let Some(found) = locref_escape::bytescan::find_byte(&bytes[from..], may_begin_one) {
        if is_one(from + found) {
            return true;
        }
        from += found + 1;
    }
    false
}

/// Whether a byte may not appear in an unquoted attribute value (HTML's "unexpected character in
/// unquoted attribute value").
fn is_odd_in_unquoted_value(byte: u8) -> bool {
    matches!(byte, b'"' | b'\'' | b'<' | b'=' | b'`')
}

/// Whether the page may hold an unquoted attribute value with `"`, `'`, `<`, `=` or a backtick in it
/// (`href=a"b`): an error html5ever's fast path misses, as it takes such a value as one run.
///
/// The text is searched for what could be one: after the first `=` of a word (an attribute's name
/// follows whitespace, so a later `=` of the same word is inside a value) and any whitespace, the word up
/// to whitespace or `>`, unless it opens with a quote. An `=` inside a quoted value looks like that too
/// (`content="width=device-width, initial-scale=1"` holds `initial-scale=1"`), so a candidate counts only
/// when a value the fast parse recorded begins as it does, up to its first `&` (where a character
/// reference may begin); every start tag's attributes are recorded, unless the tree builder drops the
/// tag, itself an error. A false alarm costs an exact parse; a miss would pass an invalid page.
fn may_have_odd_unquoted_value(text: &str, recorder: &Recorder) -> bool {
    let created = recorder.created.borrow();
    let mut odd_values: Vec<&[u8]> = created
        .iter()
        .flat_map(|element| &element.attrs)
        .map(|attr| str::as_bytes(&attr.value))
        .filter(|value| value.iter().copied().any(is_odd_in_unquoted_value))
        .collect();
    if odd_values.is_empty() {
        return false;
    }
    // Sorted, the values beginning with a given prefix start at the first value not below it.
    odd_values.sort_unstable();
    let begins_a_value = |prefix: &[u8]| {
        let first = odd_values.partition_point(|value| *value < prefix);
        odd_values
            .get(first)
            .is_some_and(|value| value.starts_with(prefix))
    };
    let is_space = |b: &u8| matches!(b, b'\t' | b'\n' | b'\x0C' | b'\r' | b' ');
    let ends_word = |b: &u8| is_space(b) || *b == b'>';
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(equals) = memchr::memchr(b'=', &bytes[from..]).map(|i| from + i) {
        let after = &bytes[equals + 1..];
        let value = &after[after.iter().take_while(|b| is_space(b)).count()..];
        let value = &value[..value.iter().position(ends_word).unwrap_or(value.len())];
        let quoted = matches!(value.first(), Some(b'"' | b'\''));
        if !quoted && value.iter().copied().any(is_odd_in_unquoted_value) {
            let literal = &value[..memchr::memchr(b'&', value).unwrap_or(value.len())];
            if begins_a_value(literal) {
                return true;
            }
        }
        // The next `=` that can start a value is in a later word.
        from = equals + 1 + after.iter().position(ends_word).unwrap_or(after.len());
    }
    false
}

/// A page's ids, located links and errors from the parser's record.
fn collect(path: &str, text: &str, base_url: &str, recorder: Recorder) -> PageLinks {
    let lines = LineIndex::new(text);
    let mut result = PageLinks::default();
    let mut first_line: BTreeMap<String, u32> = BTreeMap::new();
    let mut cursor = 0;
    for element in recorder.created.into_inner() {
        for attr in &element.attrs {
            let is_id = attr.name.local == local_name!("id")
                || (attr.name.local == local_name!("name")
                    && element.name.local == local_name!("a"));
            if is_id && !attr.value.is_empty() {
                let id = attr.value.to_string();
                if attr.name.local == local_name!("id") {
                    if let Some(first) = first_line.get(&id) {
                        result.errors.push(Diagnostic::new(
                            path,
                            element.line,
                            1,
                            format!("duplicate id \"{id}\" (first on line {first}); an id names one element"),
                        ));
                    } else {
                        first_line.insert(id.clone(), element.line);
                    }
                }
                result.ids.insert(id);
            }
        }
        let Some(attr_name) = link_attribute(&element.name) else {
            continue;
        };
        let Some(attr) = element
            .attrs
            .iter()
            .find(|a| a.name.ns == ns!() && &*a.name.local == attr_name)
        else {
            continue;
        };
        let offset = locate_attribute(&lines, cursor, element.line, attr_name, &attr.value);
        cursor = offset.max(cursor);
        let Some((target, fragment)) = resolve(path, &attr.value, base_url) else {
            continue;
        };
        let (line, column) = lines.locate(offset);
        result.links.push(Link {
            href: attr.value.to_string(),
            target,
            fragment,
            outside_base: super::outside_base(&attr.value, base_url),
            line,
            column,
        });
    }
    for (line, message) in recorder.errors.into_inner() {
        let message = readable(&message);
        let column = named_tag(&message)
            .and_then(|tag| {
                let line_range = lines.line_range(line);
                text[line_range.clone()]
                    .find(&tag)
                    .map(|i| lines.locate(line_range.start + i).1)
            })
            .unwrap_or(1);
        result.errors.push(Diagnostic::new(
            path,
            line,
            column,
            format!("invalid HTML: {message}"),
        ));
    }
    result
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::linkcheck::test_support::{BASE, link_summary};

    const PATH: &str = "/p/index.html";

    #[test]
    fn scans_ids_links_positions_and_errors() {
        let html = "<!doctype html>\n<html lang=\"en\"><head><title>t</title>\n<link rel=\"icon\" href=\"data:,\"></head>\n<body><p id=\"a\">x <a href=\"#a\">1</a> <a name=\"b\" href=\"/x/#c\">2</a></p>\n<img src=\"/i.png\" alt=\"\"><a href=\"https://example.com/\">e</a>\n</div></body></html>\n";
        let page = scan("/p/index.html", html, BASE);
        assert_eq!(page.ids, BTreeSet::from(["a".to_string(), "b".to_string()]));
        let found = link_summary(&page);
        assert_eq!(
            found,
            [
                ("#a", "/p/index.html", Some("a"), 4, 28),
                ("/x/#c", "/x/index.html", Some("c"), 4, 56),
                ("/i.png", "/i.png", None, 5, 11),
            ]
        );
        assert_eq!(page.errors.len(), 1, "{:?}", page.errors);
        let error = &page.errors[0];
        assert_eq!((error.line, error.column), (6, 1), "{error}");
        assert!(error.message.contains("</div>"), "{error}");
    }

    #[test]
    fn the_build_time_placeholder_is_text_and_any_other_nul_an_error() {
        let page = |time: &str| {
            format!(
                "<!doctype html><html><head><title>x</title></head><body><p>Updated \
                 <time datetime=\"{time}\">{time}</time></p>\n<p><span>x</p></body></html>"
            )
        };
        let located = |html: &str| -> Vec<String> {
            scan("/x.html", html, BASE)
                .errors
                .iter()
                .map(ToString::to_string)
                .collect()
        };
        // The same error at the same place whether or not the page holds placeholders.
        let expected = located(&page("2026-01-01T00:00:00Z"));
        assert_eq!(expected.len(), 1, "{expected:?}");
        assert!(expected[0].starts_with("/x.html:2:"), "{expected:?}");
        assert_eq!(located(&page(GENERATED_AT_MARK)), expected);
        let stray = located(&page("\u{0}"));
        assert!(
            stray.len() > 1 && stray.iter().any(|e| e.starts_with("/x.html:1:")),
            "{stray:?}"
        );
    }

    #[test]
    fn reports_duplicate_ids_and_unclosed_elements() {
        let html = "<!doctype html><html><head><title>x</title></head><body><main><span>x</main></body></html>";
        let errors = scan("/x.html", html, BASE).errors;
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(
            errors[0].to_string(),
            "/x.html:1:70: error: invalid HTML: Unexpected open element while closing </main>"
        );
        let html =
            "<!doctype html><html><head><title>x</title></head><body><main><div>x</body></html>";
        let errors = scan("/x.html", html, BASE).errors;
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(
            errors[0]
                .message
                .ends_with("Unexpected open tag <main> at end of body"),
            "{errors:?}"
        );

        let html = "<!doctype html>\n<html lang=\"en\"><head><title>t</title></head>\n<body><p id=\"a\">x</p><p id=\"a\">y</p>\n<div><span>z</div></body></html>\n";
        let page = scan("/p.html", html, BASE);
        let messages: Vec<String> = page.errors.iter().map(ToString::to_string).collect();
        assert!(
            messages.iter().any(|m| m.contains("duplicate id \"a\"")),
            "{messages:?}"
        );
        assert!(
            messages.iter().any(|m| m.starts_with("/p.html:4:")),
            "{messages:?}"
        );
    }

    #[test]
    fn parse_errors_read_as_html() {
        let html = "<!doctype html><html><head><title>x</title></head><body><p></div><span a=1 a=2>x</p><table><tr><td>z</td><p>q</table>&foo;</body></html>";
        let messages: Vec<String> = scan("/p.html", html, BASE)
            .errors
            .iter()
            .map(|e| e.message.clone())
            .collect();
        assert_eq!(
            messages,
            [
                "invalid HTML: unexpected </div> (in body)",
                "invalid HTML: Duplicate attribute",
                "invalid HTML: Unexpected open element while closing </p>",
                "invalid HTML: unexpected <p> (in row)",
                "invalid HTML: Unexpected characters text \"q\" in table",
                "invalid HTML: Invalid character reference &foo;",
            ]
        );
    }

    /// Found by the differential test below: html5ever's fast path reads an unquoted attribute value as
    /// one run of characters, so a `"`, `'`, `<`, `=` or backtick in it went unreported and the page
    /// passed; the exact parse reports it.
    #[test]
    fn an_odd_character_in_an_unquoted_value_is_reported() {
        for tag in [
            "<ul href=a\"b title=top>",
            "<ul src=<p>",
            "<p title=a'b>",
            "<p title=a=b>",
            "<p title=a`b>",
            "<p title=\n  =a>",
            "<p title=a&amp;\"b>",
        ] {
            let html = format!(
                "<!doctype html>\n<html lang=\"en\"><head><title>t</title></head>\n<body>{tag}x</p></body></html>\n"
            );
            let page = scan(PATH, &html, BASE);
            assert_eq!(page, scan_exact(PATH, &html, BASE), "{tag}");
            assert!(
                page.errors
                    .iter()
                    .any(|e| e.message == "invalid HTML: Bad character"),
                "{tag}: {:?}",
                page.errors
            );
        }
    }

    /// The look for such values must not send a usual page to the exact parse: an `=` inside a quoted
    /// value is followed by what looks like an unquoted value with a quote (`initial-scale=1"`).
    #[test]
    fn quoted_values_with_equals_signs_keep_the_fast_path() {
        let html = "<!doctype html>\n<html lang=\"en\"><head><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>t</title></head>\n<body><p class=a id=b>x = \"y\", a=b` and <a href=\"https://e.org/?l=en&amp;t=ho\">s</a> <a href='/x/?p=1'>t</a></p><script>if (a === b) {}</script></body></html>\n";
        let fast = parse_html(html, false, None);
        assert!(fast.errors.borrow().is_empty());
        assert!(!fast_parse_may_miss_errors(html, &fast));
        assert_eq!(scan(PATH, html, BASE), scan_exact(PATH, html, BASE));
    }

    /// Generated HTML-like documents for the differential test of the fast path: a valid page, into which
    /// up to three defects are spliced at random places (in text, in a tag, in an attribute value, in a
    /// comment or a script). A defect may make the page invalid, or not: the cases that matter are the
    /// pages the fast parse finds clean.
    mod generated {
        use proptest::prelude::*;
        use proptest::sample::{Index, select, subsequence};

        /// Text as a template writes it: words, line ends, quotes, `=`, escaped characters, non-ASCII.
        fn text() -> impl Strategy<Value = String> {
            let piece = select(vec![
                "x",
                "word ",
                " ",
                "\n",
                "\n  ",
                "é",
                "€🦀",
                "a=b",
                "\"q\"",
                "'",
                "&amp;",
                "&lt;b&gt;",
                "&#233;",
                "&nbsp;",
                ">",
                "`",
            ]);
            prop::collection::vec(piece, 0..5).prop_map(|pieces| pieces.concat())
        }

        /// An element's attributes, each name at most once: ids (few values, so ids repeat across
        /// elements), link attributes and others, double-quoted, single-quoted, unquoted or bare.
        fn attributes() -> impl Strategy<Value = String> {
            let names = vec!["id", "href", "src", "name", "class", "title", "data-x"];
            let value = select(vec![
                "a",
                "b",
                "top",
                "#a",
                "#b",
                "/x/",
                "x.html#a",
                "../y/#top",
                "/p/index.html",
                "é",
                "https://e.org/",
                "mailto:a@b.c",
                "",
            ]);
            let attribute = (value, 0..6u8, select(vec![" ", " ", " ", "\n", "\t"]));
            subsequence(names, 0..4).prop_flat_map(move |names| {
                prop::collection::vec(attribute.clone(), names.len()).prop_map(move |values| {
                    let mut out = String::new();
                    for (name, (value, quoting, separator)) in names.iter().zip(values) {
                        out += &match quoting {
                            // An unquoted value must be one word, not empty.
                            3 | 4 if !value.is_empty() => format!("{separator}{name}={value}"),
                            5 => format!("{separator}{name}"),
                            2 => format!("{separator}{name}='{value}'"),
                            _ => format!("{separator}{name}=\"{value}\""),
                        };
                    }
                    out
                })
            })
        }

        /// Inline content: text, and elements that hold only inline content.
        fn phrasing() -> impl Strategy<Value = String> {
            let leaf = prop_oneof![
                4 => text(),
                1 => attributes().prop_map(|a| format!("<img{a}>")),
                1 => Just("<br>".to_string()),
                1 => Just("<!-- note -->".to_string()),
            ];
            leaf.prop_recursive(3, 16, 3, |inner| {
                (
                    select(vec!["span", "b", "i", "em", "code", "a", "a"]),
                    attributes(),
                    prop::collection::vec(inner, 0..3),
                )
                    .prop_map(|(tag, attributes, content)| {
                        // An `a` inside an `a` is itself an error: keep links apart.
                        let content = if tag == "a" {
                            content
                                .concat()
                                .replace("<a", "<span")
                                .replace("</a>", "</span>")
                        } else {
                            content.concat()
                        };
                        format!("<{tag}{attributes}>{content}</{tag}>")
                    })
            })
        }

        /// Block content: paragraphs, lists, tables and sections of blocks.
        fn flow() -> impl Strategy<Value = String> {
            let leaf = prop_oneof![
                2 => phrasing().prop_map(|p| format!("<p>{p}</p>")),
                1 => phrasing(),
                1 => Just("<script>if (a < b && c) { x = \"</p>\"; }</script>".to_string()),
                1 => Just("<textarea>a <b> &amp; c</textarea>".to_string()),
            ];
            leaf.prop_recursive(3, 12, 3, |inner| {
                let children = prop::collection::vec(inner, 0..3);
                prop_oneof![
                    (
                        select(vec!["div", "main", "section"]),
                        attributes(),
                        children.clone()
                    )
                        .prop_map(|(tag, a, c)| format!("<{tag}{a}>\n{}</{tag}>", c.concat())),
                    (attributes(), children.clone()).prop_map(|(a, c)| format!(
                        "<ul{a}><li>{}</li></ul>",
                        c.join("</li>\n<li>")
                    )),
                    (attributes(), children).prop_map(|(a, c)| format!(
                        "<table{a}><tbody><tr><td>{}</td></tr></tbody></table>",
                        c.join("</td><td>")
                    )),
                ]
            })
        }

        /// What is spliced into a page: stray and misnested tags, unclosed elements, bad characters and
        /// noncharacters, character references (unknown, unterminated, out of range), comments good and
        /// bad, attributes (repeated, unquoted with a quote, `=`, `<` or backtick inside, quoted with the
        /// quote inside), lone quotes and `=`, line ends.
        fn defect() -> impl Strategy<Value = &'static str> {
            select(vec![
                // Tags.
                "<p>",
                "</p>",
                "</div>",
                "<div>",
                "<b>",
                "</b>",
                "<i>",
                "</span>",
                "<td>",
                "<tr>",
                "</table>",
                "<table>",
                "<li>",
                "<a href=\"#a\">",
                "</a>",
                "<img src=/x>",
                "</br>",
                "<br/>",
                "<div/>",
                "<h1>",
                "<select>",
                "<svg>",
                "</P>",
                "< p>",
                "</ div>",
                "</>",
                "<",
                "<3",
                "<!doctype html>",
                "<html>",
                "</body>",
                "<body id=b>",
                "<title>",
                "<script>",
                // Characters and references.
                "&",
                "&foo;",
                "&amp",
                "&lt",
                "&#0;",
                "&#x110000;",
                "&#65",
                "&notit;",
                "\0",
                "\u{1}",
                "\u{7F}",
                "\u{85}",
                "\u{C}",
                "\u{B}",
                "\u{FDD0}",
                "\u{FFFE}",
                "\u{1FFFF}",
                "\r",
                "\r\n",
                "\n",
                "é",
                "`",
                // Comments and other markup.
                "<!-- c -->",
                "<!---->",
                "<!-->",
                "<!--->",
                "<!-- a -- b -->",
                "<!-- x --!>",
                "<!--",
                "-->",
                "<?pi?>",
                "<![CDATA[x]]>",
                "<!x>",
                // Attributes and their pieces.
                " id=a",
                " id=\"b\"",
                " href=\"/x/#a\"",
                " href=a\"b",
                " href=/x'y",
                " x=a=b",
                " x=a<b",
                " x=a`b",
                " x=a&amp;\"b",
                " x==a",
                " x=<a",
                " x=`a",
                " x",
                " =x",
                "\"",
                "'",
                "=",
                " x=\"a",
                " /",
                " href=#a\n",
            ])
        }

        /// A document: a usual start, block content, a usual end, with 0 to 3 defects spliced in.
        pub(super) fn document() -> impl Strategy<Value = String> {
            let start = select(vec![
                "<!doctype html>\n<html lang=\"en\"><head><title>t</title></head>\n<body>",
                "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>x</title></head><body>\n",
                "<!doctype html><title>t</title>",
                "<!doctype html>\r\n<html><head><title>t</title><link rel=icon href=/i.png></head><body>",
            ]);
            let end = select(vec!["</body></html>\n", "</body></html>", "", "\n</html>"]);
            let defects = prop_oneof![
                4 => Just(0..1usize),
                4 => Just(1..2usize),
                2 => Just(2..4usize),
            ]
            .prop_flat_map(|count| prop::collection::vec((any::<Index>(), defect()), count));
            (start, prop::collection::vec(flow(), 0..4), end, defects).prop_map(
                |(start, content, end, defects)| {
                    let mut page = format!("{start}{}{end}", content.concat());
                    for (at, defect) in defects {
                        let mut at = at.index(page.len() + 1);
                        while !page.is_char_boundary(at) {
                            at -= 1;
                        }
                        page.insert_str(at, defect);
                    }
                    page
                },
            )
        }
    }

    /// The build's contract for the fast path ([`scan`]): when the fast parse has nothing to report (no
    /// error, and none it may have missed), the exact parse finds no error either, and the page's ids,
    /// links and diagnostics are those of the exact parse. Checked on generated documents, many of them
    /// invalid; a share of them must be clean on the fast path, or the test would prove nothing.
    #[test]
    fn the_fast_path_agrees_with_the_exact_parse_on_generated_html() {
        use proptest::test_runner::{Config, TestCaseError, TestRunner};
        let mut runner = TestRunner::new(Config {
            max_shrink_iters: 4096,
            failure_persistence: None,
            ..Config::default()
        });
        let (cases, clean) = (Cell::new(0u32), Cell::new(0u32));
        let result = runner.run(&generated::document(), |document| {
            let fast = parse_html(&document, false, None);
            let exact = parse_html(&document, true, None);
            let fast_is_clean =
                fast.errors.borrow().is_empty() && !fast_parse_may_miss_errors(&document, &fast);
            if fast_is_clean && !exact.errors.borrow().is_empty() {
                return Err(TestCaseError::fail(format!(
                    "the fast parse found no problem, the exact parse found {:?}",
                    exact.errors.borrow()
                )));
            }
            cases.set(cases.get() + 1);
            clean.set(clean.get() + u32::from(fast_is_clean));
            let exact = collect(PATH, &document, BASE, exact);
            proptest::prop_assert_eq!(scan(PATH, &document, BASE), exact);
            Ok(())
        });
        if let Err(failure) = result {
            panic!("{failure}");
        }
        // A generator whose documents all fail the fast parse would leave the contract untested.
        assert!(
            clean.get() * 5 >= cases.get(),
            "only {} of {} generated documents were clean on the fast path",
            clean.get(),
            cases.get()
        );
    }

    proptest::proptest! {
        /// The byte-level search for a bad character finds what decoding each character found, on texts
        /// of ordinary characters with the bad ones and their neighbours mixed in.
        #[test]
        fn bad_characters_are_found_in_the_bytes_as_they_were_among_the_characters(
            chars in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::char::any(),
                    proptest::sample::select(vec![
                        '\0', '\u{1}', '\u{8}', '\t', '\n', '\u{B}', '\u{C}', '\r', '\u{E}', '\u{1F}', ' ',
                        'a', '\u{7E}', '\u{7F}', '\u{80}', '\u{9F}', '\u{A0}', 'é', '\u{FDCF}', '\u{FDD0}',
                        '\u{FDEF}', '\u{FDF0}', '\u{FFFD}', '\u{FFFE}', '\u{FFFF}', '\u{1FFFD}',
                        '\u{1FFFE}', '\u{1FFFF}', '\u{2FFEF}', '\u{10FFFE}', '\u{10FFFF}', '\u{10FFFD}',
                    ]),
                ],
                0..12,
            )
        ) {
            let text: String = chars.into_iter().collect();
            let by_character = text.chars().any(|c| {
                let n = c as u32;
                matches!(n, 0x01..=0x08 | 0x0B | 0x0E..=0x1F | 0x7F..=0x9F | 0xFDD0..=0xFDEF)
                    || (n & 0xFFFE) == 0xFFFE
            });
            proptest::prop_assert_eq!(has_bad_character(&text), by_character, "{:?}", text);
        }
    }
}
