//! The link check of `locref check` and `locref build`: every internal `href`/`src` of every HTML page
//! (and every link of its Markdown twin) resolves to an output of the route table, every `#fragment` to an
//! element of its target page, and every HTML page parses as HTML5 without an error.
//!
//! Pages are parsed by html5ever (the WHATWG parser of Servo and `scraper`) through a sink that keeps no
//! tree: the tree builder decides the parse errors from its own state, and the sink records what the check
//! needs (ids, link attributes, the line of each token and error).
//!
//! The check is a layer of salsa queries, so it costs what the edit changed:
//!
//! ```text
//! page_links(page)    parses one rendered page or twin once: its ids, internal links (located), HTML errors
//! page_ids(page)      the ids alone: the early-cutoff point for the pages linking into `page`
//! output_paths()      the route table's outputs by site path
//! broken_links(page)  resolves one page's links against output_paths and the targets' page_ids
//! problems()          the whole site: a loop over the pages (no query of its own)
//! ```
//!
//! An edit that changes one page's bytes re-parses that page only; when its ids did not change, no other
//! page's links are resolved again.

use std::borrow::Cow;
use std::cell::{Cell, Ref, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use html5ever::interface::{ElementFlags, NodeOrText, QuirksMode, TreeSink};
use html5ever::tendril::{StrTendril, TendrilSink};
use html5ever::tokenizer::TokenizerOpts;
use html5ever::tree_builder::TreeBuilderOpts;
use regex::Regex;

use html5ever::{Attribute, ParseOpts, QualName, local_name, ns, parse_document};

use crate::diagnostics::Diagnostic;
use crate::model::base_url;
use crate::render::render;
use crate::routes::{Output, outputs};

/// One output file as a query key.
#[salsa::interned(debug)]
pub struct PageKey<'db> {
    #[returns(ref)]
    pub output: Output,
}

/// An internal link of a page, resolved to a site path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The attribute value as written (`/e-invoicing/#fr-odoo`).
    pub href: String,
    /// The output it points at (`/e-invoicing/index.html`).
    pub target: String,
    /// The fragment, without `#`, when there is one.
    pub fragment: Option<String>,
    /// Where the attribute value starts in the page (1-based; the column counts characters).
    pub line: u32,
    pub column: u32,
}

/// What the link check reads of one page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageLinks {
    /// Every `id` and every `<a name>` of the page: the fragments it can be linked to with.
    pub ids: BTreeSet<String>,
    /// The internal links, in document order (external ones are not checked).
    pub links: Vec<Link>,
    /// HTML5 parse errors and duplicate ids, located in the page.
    pub errors: Vec<Diagnostic>,
}

/// Parses one HTML page (once per change of its bytes).
#[salsa::tracked(returns(ref))]
pub fn page_links<'db>(db: &'db dyn salsa::Database, page: PageKey<'db>) -> PageLinks {
    let output = page.output(db);
    let bytes = &render(db, output).bytes;
    let text = String::from_utf8_lossy(bytes);
    if is_markdown(&output.path) {
        scan_markdown(&output.path, &text, base_url(db))
    } else {
        scan(&output.path, &text, base_url(db))
    }
}

/// The ids of one page (an early-cutoff point: a page edit that keeps its ids re-checks no other page).
#[salsa::tracked(returns(ref))]
pub fn page_ids<'db>(db: &'db dyn salsa::Database, page: PageKey<'db>) -> BTreeSet<String> {
    page_links(db, page).ids.clone()
}

/// Every output by site path.
#[salsa::tracked(returns(ref))]
pub fn output_paths(db: &dyn salsa::Database) -> BTreeMap<String, Output> {
    outputs(db)
        .iter()
        .map(|o| (o.path.clone(), o.clone()))
        .collect()
}

/// Whether an output is an HTML page (parsed as HTML5; its ids are what `#fragment`s can point at).
pub fn is_html(path: &str) -> bool {
    path.ends_with(".html")
}

/// Whether an output is a Markdown twin (its links are checked too; it has no ids).
pub fn is_markdown(path: &str) -> bool {
    path.ends_with(".md")
}

/// The outputs whose links the check follows: HTML pages and their Markdown twins.
pub fn is_checked(path: &str) -> bool {
    is_html(path) || is_markdown(path)
}

/// The links of one page that do not resolve, each located at its attribute and saying what was expected.
#[salsa::tracked(returns(ref))]
pub fn broken_links<'db>(db: &'db dyn salsa::Database, page: PageKey<'db>) -> Vec<Diagnostic> {
    let own = page.output(db);
    let parsed = page_links(db, page);
    let paths = output_paths(db);
    let mut broken = Vec::new();
    for link in &parsed.links {
        let problem = match paths.get(&link.target) {
            None => {
                let dir = format!("{}/index.html", link.target);
                if paths.contains_key(&dir) {
                    Some(format!(
                        "no output {}; the page is {} (link to {}/)",
                        link.target, dir, link.target
                    ))
                } else {
                    Some(format!("no output {} on the site", link.target))
                }
            }
            Some(target) => match &link.fragment {
                None => None,
                Some(fragment) if !is_html(&target.path) => Some(format!(
                    "#{fragment} points into {}, which is not an HTML page",
                    target.path
                )),
                Some(fragment) => {
                    let ids = if target == own {
                        &parsed.ids
                    } else {
                        page_ids(db, PageKey::new(db, target.clone()))
                    };
                    (!fragment_resolves(fragment, ids))
                        .then(|| format!("no element with id \"{fragment}\" on {}", target.path))
                }
            },
        };
        if let Some(problem) = problem {
            broken.push(Diagnostic::new(
                &own.path,
                link.line,
                link.column,
                format!("broken link \"{}\": {problem}", link.href),
            ));
        }
    }
    broken
}

/// The link and HTML problems of every page and twin of the site: a loop over the per-page queries.
pub fn problems(db: &dyn salsa::Database) -> Vec<Diagnostic> {
    let mut all = Vec::new();
    for output in outputs(db).iter().filter(|o| is_checked(&o.path)) {
        let page = PageKey::new(db, output.clone());
        all.extend_from_slice(&page_links(db, page).errors);
        all.extend_from_slice(broken_links(db, page));
    }
    all
}

/// How many pages (HTML and Markdown twins) and internal links the check covers (`locref check` prints
/// it).
pub fn coverage(db: &dyn salsa::Database) -> (usize, usize) {
    let pages = outputs(db).iter().filter(|o| is_checked(&o.path));
    pages.fold((0, 0), |(pages, links), output| {
        let page = PageKey::new(db, output.clone());
        (pages + 1, links + page_links(db, page).links.len())
    })
}

/// Whether `#fragment` selects something on a page with `ids` (HTML's "indicated part of the document":
/// the empty fragment and `top` mean the top of the page; the id is tried as written, then decoded).
fn fragment_resolves(fragment: &str, ids: &BTreeSet<String>) -> bool {
    fragment.is_empty()
        || ids.contains(fragment)
        || ids.contains(percent_decode(fragment).as_ref())
        || fragment.eq_ignore_ascii_case("top")
}

/// `%XX` escapes decoded (invalid escapes and non-UTF-8 results are kept as written).
fn percent_decode(text: &str) -> Cow<'_, str> {
    percent_encoding::percent_decode_str(text)
        .decode_utf8()
        .unwrap_or(Cow::Borrowed(text))
}

/// Resolves `href` on the page at `page` (a site path) to a site path and fragment, or `None` for a link
/// the check does not follow (another host, `mailto:`, `data:`, `javascript:`, an empty `href`).
pub fn resolve(page: &str, href: &str, base_url: &str) -> Option<(String, Option<String>)> {
    let href = href.trim_matches(|c: char| c.is_ascii_whitespace());
    let local = if let Some(rest) = href.strip_prefix(base_url)
        && (rest.is_empty() || rest.starts_with(['/', '?', '#']))
    {
        if rest.is_empty() { "/" } else { rest }
    } else if href.starts_with("//") || has_scheme(href) {
        return None;
    } else {
        href
    };
    if local.is_empty() {
        return None;
    }
    let (before, fragment) = match local.split_once('#') {
        Some((before, fragment)) => (before, Some(fragment.to_string())),
        None => (local, None),
    };
    let path = before.split_once('?').map_or(before, |(p, _)| p);
    let joined = if path.is_empty() {
        page.to_string()
    } else if path.starts_with('/') {
        path.to_string()
    } else {
        let dir = &page[..page.rfind('/').map_or(0, |i| i + 1)];
        format!("{dir}{path}")
    };
    let mut target = normalize(&percent_decode(&joined));
    if target.ends_with('/') {
        target.push_str("index.html");
    }
    Some((target, fragment))
}

/// Whether `href` starts with a URL scheme (`https:`, `mailto:`, `data:`).
fn has_scheme(href: &str) -> bool {
    match href.split_once(':') {
        Some((scheme, _)) => {
            let mut chars = scheme.chars();
            chars.next().is_some_and(|c| c.is_ascii_alphabetic())
                && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        None => false,
    }
}

/// Removes `.` and `..` segments (never above the root); keeps a final `/`.
fn normalize(path: &str) -> String {
    let mut segments: Vec<&str> = Vec::new();
    let parts: Vec<&str> = path.split('/').skip(1).collect();
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        match *part {
            "." | "" if !last => {}
            ".." => {
                segments.pop();
                if last {
                    segments.push("");
                }
            }
            "." => segments.push(""),
            _ => segments.push(part),
        }
    }
    format!("/{}", segments.join("/"))
}

/// The attributes that name another resource, per element: `<a href>`, `<link href>`, `<script src>`,
/// `<img src>`.
fn link_attribute(name: &QualName) -> Option<&'static str> {
    if name.ns != ns!(html) {
        return None;
    }
    match name.local {
        local_name!("a") | local_name!("link") | local_name!("area") => Some("href"),
        local_name!("script") | local_name!("img") | local_name!("iframe") => Some("src"),
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

/// Byte offsets of the starts of the lines of `text`.
struct Lines<'t> {
    text: &'t str,
    starts: Vec<usize>,
}

impl<'t> Lines<'t> {
    fn new(text: &'t str) -> Self {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        Lines { text, starts }
    }

    /// The byte range of 1-based `line` (without its line end).
    fn range(&self, line: u32) -> (usize, usize) {
        let i = (line.max(1) as usize - 1).min(self.starts.len() - 1);
        let end = self
            .starts
            .get(i + 1)
            .map_or(self.text.len(), |next| next - 1);
        (self.starts[i], end)
    }

    /// 1-based line and character column of byte `offset`.
    fn position(&self, offset: usize) -> (u32, u32) {
        let i = self.starts.partition_point(|&s| s <= offset) - 1;
        let column = self.text[self.starts[i]..offset].chars().count() + 1;
        (i as u32 + 1, column as u32)
    }
}

/// Where the value of the `attr` attribute (`href`, `src`) whose tag ends on `line` starts, searching
/// forward from `from` (the previous link's offset: attributes come in source order). Falls back to the
/// start of the line when the attribute is not found as written.
fn locate_attribute(lines: &Lines, from: usize, line: u32, attr: &str, value: &str) -> usize {
    let (line_start, line_end) = lines.range(line);
    let from = from.min(line_end);
    let window = &lines.text[from..line_end];
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
/// The first parse takes html5ever's fast path (runs of text are consumed by SIMD, not character by
/// character), which reports the same errors as an exact parse except the "Bad character" of a control
/// character or noncharacter, and words its messages generically. A page with an error or such a
/// character is parsed again exactly, so the messages and errors are those of [`scan_exact`]; a valid
/// page (every page of a good build) is parsed once, about twice as fast.
pub fn scan(path: &str, text: &str, base_url: &str) -> PageLinks {
    let fast = parse_html(text, false);
    if fast.errors.borrow().is_empty() && !has_bad_character(text) {
        return collect(path, text, base_url, fast);
    }
    scan_exact(path, text, base_url)
}

/// [`scan`] with html5ever's exact errors throughout (the reference the fast path is tested against).
pub fn scan_exact(path: &str, text: &str, base_url: &str) -> PageLinks {
    collect(path, text, base_url, parse_html(text, true))
}

/// Runs html5ever over `text`, recording elements, lines and parse errors.
fn parse_html(text: &str, exact_errors: bool) -> Recorder {
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
    parse_document(Recorder::new(), opts).one(text)
}

/// Whether `text` holds a character html5ever reports only in exact mode ("Bad character": C0 and C1
/// controls other than whitespace and NUL, and noncharacters).
fn has_bad_character(text: &str) -> bool {
    text.chars().any(|c| {
        let n = c as u32;
        matches!(n, 0x01..=0x08 | 0x0B | 0x0E..=0x1F | 0x7F..=0x9F | 0xFDD0..=0xFDEF)
            || (n & 0xFFFE) == 0xFFFE
    })
}

/// A page's ids, located links and errors from the parser's record.
fn collect(path: &str, text: &str, base_url: &str, recorder: Recorder) -> PageLinks {
    let lines = Lines::new(text);
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
        let (line, column) = lines.position(offset);
        result.links.push(Link {
            href: attr.value.to_string(),
            target,
            fragment,
            line,
            column,
        });
    }
    for (line, message) in recorder.errors.into_inner() {
        let message = readable(&message);
        let column = named_tag(&message)
            .and_then(|tag| {
                let (start, end) = lines.range(line);
                lines.text[start..end]
                    .find(&tag)
                    .map(|i| lines.position(start + i).1)
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

/// The links of one Markdown twin (CommonMark with tables, by pulldown-cmark), each located at its
/// destination. A twin has no ids: a `#fragment` pointing into one is an error.
pub fn scan_markdown(path: &str, text: &str, base_url: &str) -> PageLinks {
    use pulldown_cmark::{Event, LinkType, Options, Parser, Tag};
    let lines = Lines::new(text);
    let mut result = PageLinks::default();
    for (event, range) in Parser::new_ext(text, Options::ENABLE_TABLES).into_offset_iter() {
        let (Event::Start(Tag::Link {
            dest_url,
            link_type,
            ..
        })
        | Event::Start(Tag::Image {
            dest_url,
            link_type,
            ..
        })) = event
        else {
            continue;
        };
        // `<name@example.org>` is an email autolink: its destination carries no `mailto:`.
        if link_type == LinkType::Email {
            continue;
        }
        let Some((target, fragment)) = resolve(path, &dest_url, base_url) else {
            continue;
        };
        // The destination as written comes after the link text: the last occurrence in the link's span.
        let offset = text[range.clone()]
            .rfind(&*dest_url)
            .map_or(range.start, |i| range.start + i);
        let (line, column) = lines.position(offset);
        result.links.push(Link {
            href: dest_url.to_string(),
            target,
            fragment,
            line,
            column,
        });
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "https://locref.example.org";

    fn target(page: &str, href: &str) -> Option<(String, Option<String>)> {
        resolve(page, href, BASE)
    }

    #[test]
    fn resolves_site_relative_relative_and_base_url_links() {
        let page = "/fr/index.html";
        let t = |p: &str, f: Option<&str>| Some((p.to_string(), f.map(str::to_string)));
        assert_eq!(target(page, "/"), t("/index.html", None));
        assert_eq!(
            target(page, "/e-invoicing/#fr-odoo"),
            t("/e-invoicing/index.html", Some("fr-odoo"))
        );
        assert_eq!(target(page, "#saf-t"), t("/fr/index.html", Some("saf-t")));
        assert_eq!(target(page, "index.md"), t("/fr/index.md", None));
        assert_eq!(
            target(page, "../e-invoicing/?x=1"),
            t("/e-invoicing/index.html", None)
        );
        assert_eq!(target(page, "./"), t("/fr/index.html", None));
        assert_eq!(target(page, "../../../"), t("/index.html", None));
        assert_eq!(target(page, BASE), t("/index.html", None));
        assert_eq!(
            target(page, &format!("{BASE}/api/v1/countries/fr.json")),
            t("/api/v1/countries/fr.json", None)
        );
        assert_eq!(target(page, "/a%20b.html"), t("/a b.html", None));
        for external in [
            "https://example.com/x",
            "https://locref.example.org.evil.com/",
            "//cdn.example.com/x.js",
            "mailto:a@b.c",
            "data:,",
            "javascript:void(0)",
            "",
        ] {
            assert_eq!(target(page, external), None, "{external}");
        }
    }

    /// Each link as (href, target, fragment, line, column).
    fn link_summary(page: &PageLinks) -> Vec<(&str, &str, Option<&str>, u32, u32)> {
        page.links
            .iter()
            .map(|l| {
                let fragment = l.fragment.as_deref();
                (
                    l.href.as_str(),
                    l.target.as_str(),
                    fragment,
                    l.line,
                    l.column,
                )
            })
            .collect()
    }

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
    fn scans_markdown_links_at_their_destination() {
        let md = "# T\n\n| a | b |\n|---|---|\n| [France](/fr/index.md) | [source](https://example.com/) |\n\nSee [the matrix](../e-invoicing/#fr-odoo) and ![x](/i.png).\n";
        let page = scan_markdown("/fr/index.md", md, BASE);
        assert!(page.ids.is_empty() && page.errors.is_empty());
        let found = link_summary(&page);
        assert_eq!(
            found,
            [
                ("/fr/index.md", "/fr/index.md", None, 5, 12),
                (
                    "../e-invoicing/#fr-odoo",
                    "/e-invoicing/index.html",
                    Some("fr-odoo"),
                    7,
                    18
                ),
                ("/i.png", "/i.png", None, 7, 52),
            ]
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
}
