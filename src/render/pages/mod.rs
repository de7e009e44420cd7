//! HTML pages and their Markdown twins, rendered from the minijinja templates in `rules/templates/`.
//!
//! This module is the shared core: the template environment, [`render_kind`], [`PageSpec`] and the
//! context's fingerprint. Each kind of page (or a small family of them) has a module of its own holding
//! its typed context, its context function and its spec: [`home`], [`e_invoicing`], [`country`], [`erp`],
//! [`topics`] (VAT reporting and SAF-T), [`lists`] (the pages made of parts), [`filters`], [`sponsors`],
//! [`licence`], [`api_docs`], [`search`], [`changes`] (the changes and release pages, the History
//! sections), [`not_found`], [`readiness`] (the readiness board and the ERP pages' upcoming
//! obligations), [`compare`] (the comparison page); what every page shows is in [`shared`]. The calendar
//! page's context is in `render/calendar.rs`, beside `calendar.ics`.
//!
//! Each template file is read and syntax-checked by its own query ([`template_text`]), so an edit of
//! `country.html` re-runs only the pages that load it. Each page reads a narrow context (a typed value
//! handed over as JSON), so a page and its twin render again only when the data they show changed. HTML
//! templates are auto-escaped (by their `.html` name, see [`html_formatter`]); Markdown templates escape
//! table cells with the `md` filter and link targets with `md_url`.

mod api_docs;
pub(crate) mod changes;
pub(crate) mod compare;
mod country;
mod e_invoicing;
mod erp;
mod filters;
mod home;
mod licence;
pub(crate) mod lists;
mod not_found;
pub(crate) mod readiness;
mod search;
pub(crate) mod shared;
mod sponsors;
mod topics;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use minijinja::{AutoEscape, Environment, Error, State, Value};
use serde::Serialize;
use serde_json::Value as Json;

use super::escape::write_escaped_html;
use super::{Format, PageKind};
use super::{Rendered, RenderedFile};
use crate::diagnostics::Diagnostic;
use crate::parse::source_text;
use crate::routes::Output;

/// The folder of the page templates.
pub(crate) const TEMPLATES: &str = "rules/templates";

/// A template file name (`country.html`) as a query key.
#[salsa::interned(debug)]
pub(crate) struct TemplateKey<'db> {
    #[returns(ref)]
    pub name: String,
}

/// A template error located in its template: at the expression it names when the engine gives its span
/// (an undefined value, a failed filter), else at the start of its line.
fn template_error(path: &str, error: &minijinja::Error, source: Option<&str>) -> Diagnostic {
    let mut message = match error.detail() {
        Some(detail) => format!("template error: {}: {detail}", error.kind()),
        None => format!("template error: {}", error.kind()),
    };
    let span = error
        .range()
        .zip(source)
        .and_then(|(range, text)| Some((text.get(range.clone())?, range.start, text)));
    if let Some((expression, start, text)) = span {
        if error.detail().is_none() && !expression.trim().is_empty() {
            message.push_str(&format!(": `{}`", expression.trim()));
        }
        let (line, column) = crate::diagnostics::line_column(text, start);
        return Diagnostic::new(path, line, column, message);
    }
    Diagnostic::new(path, error.line().unwrap_or(1) as u32, 1, message)
}

/// Runs a call into the template engine, turning a panic of the engine into an error of the template.
///
/// The engine has inputs it panics on instead of reporting (minijinja 2.24 reaches an `unreachable!` in
/// its code generator for `{% import "x" as m % endblock %}`); a damaged template must be a diagnostic like
/// any other, never the end of `watch` or `serve`.
pub(crate) fn guarded<T>(
    call: impl FnOnce() -> Result<T, minijinja::Error>,
) -> Result<T, minijinja::Error> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(call)).unwrap_or_else(|_| {
        Err(minijinja::Error::new(
            minijinja::ErrorKind::SyntaxError,
            "the template engine failed on this template; look for a tag without its `%}` or with a stray `%`",
        ))
    })
}

/// Calls the macro `name` of the template `template` (a `macros.*` file) with `args`, or fails with
/// `missing()` when the template does not define it (guarded as [`guarded`]).
pub(crate) fn call_macro(
    env: &Environment<'static>,
    template: &str,
    name: &str,
    args: &[minijinja::Value],
    missing: impl FnOnce() -> minijinja::Error,
) -> Result<String, minijinja::Error> {
    let template = env.get_template(template)?;
    guarded(|| {
        let captured = template.render_captured(())?;
        if captured.state().lookup(name).is_none() {
            return Err(missing());
        }
        captured.state().call_macro(name, args)
    })
}

/// The text of one template, checked for syntax.
#[salsa::tracked(returns(ref))]
pub fn template_text<'db>(
    db: &'db dyn salsa::Database,
    key: TemplateKey<'db>,
) -> Result<String, Diagnostic> {
    let path = format!("{TEMPLATES}/{}", key.name(db));
    let text = source_text(db, &path)?;
    let mut env = Environment::new();
    guarded(|| env.add_template(key.name(db), text))
        .map_err(|e| template_error(&path, &e, Some(text)))?;
    Ok(text.to_string())
}

/// The auto-escape of `.html` templates. minijinja's own HTML escape also writes `/` as `&#x2f;`, which
/// makes every `href` unreadable; this one escapes what HTML needs, inside text and quoted attributes alike.
const HTML: AutoEscape = AutoEscape::Custom("html");

fn auto_escape(name: &str) -> AutoEscape {
    if name.ends_with(".html") {
        HTML
    } else {
        AutoEscape::None
    }
}

/// Writes every value of an `.html` template escaped by [`super::escape::escape_html`], except values marked safe
/// (macro output, already escaped). A string value is escaped from where it is, not from a copy.
fn html_formatter(out: &mut minijinja::Output, state: &State, value: &Value) -> Result<(), Error> {
    if state.auto_escape() != HTML || value.is_safe() {
        return minijinja::escape_formatter(out, state, value);
    }
    match value.as_str() {
        Some(text) => write_escaped_html(out, text),
        None => write_escaped_html(out, &value.to_string()),
    }
    .map_err(Error::from)
}

/// Escapes a value for a Markdown table cell (and Markdown text): backslashes, `|`, `<` and the brackets
/// of link and image syntax are backslash-escaped (so data can never become a link, an image or raw
/// HTML in a twin or in `llms-full.txt`), line breaks become `<br>`.
pub(crate) fn md_cell(value: Value) -> String {
    if value.is_undefined() || value.is_none() {
        return String::new();
    }
    let text = value.to_string();
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    let escaped = |b: u8| {
        (b == b'\\')
            | (b == b'|')
            | (b == b'<')
            | (b == b'[')
            | (b == b']')
            | (b == b'\n')
            | (b == b'\r')
    };
    crate::bytescan::write_replacing(&mut out, &text, escaped, |rest| match rest {
        // `\r\n` is one line break: its `\r` is dropped and its `\n` makes the `<br>`.
        [b'\r', b'\n', ..] => Some(("", 1)),
        _ => md_escape_of(rest[0]).map(|with| (with, 1)),
    })
    .expect("writing to a String cannot fail");
    out
}

/// What [`md_cell`] writes for one byte of a cell, if it is not the byte itself.
fn md_escape_of(byte: u8) -> Option<&'static str> {
    match byte {
        b'\\' => Some("\\\\"),
        b'|' => Some("\\|"),
        b'<' => Some("\\<"),
        b'[' => Some("\\["),
        b']' => Some("\\]"),
        b'\n' | b'\r' => Some("<br>"),
        _ => None,
    }
}

/// Makes a URL safe as a Markdown link target inside a table: `(`, `)`, `|`, `\` and spaces are
/// percent-encoded (the same URL to a browser; source URLs are checked to be http(s) with no whitespace).
pub(crate) fn md_url(value: Value) -> String {
    let mut out = String::new();
    for c in value.to_string().chars() {
        match c {
            '(' => out.push_str("%28"),
            ')' => out.push_str("%29"),
            '|' => out.push_str("%7C"),
            '\\' => out.push_str("%5C"),
            ' ' => out.push_str("%20"),
            '<' => out.push_str("%3C"),
            '>' => out.push_str("%3E"),
            _ => out.push(c),
        }
    }
    out
}

/// Who published a source, as a link names it: its host without `www.` (`learn.microsoft.com`), and for
/// GitHub the owner too (`github.com/MicrosoftDocs`); the path when the URL has no host.
pub(crate) fn source_name(url: &str) -> String {
    let Some((_, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let mut parts = rest.split(['/', '?', '#']);
    let host = parts.next().unwrap_or_default().to_ascii_lowercase();
    let host = host.strip_prefix("www.").unwrap_or(&host).to_string();
    match (host.as_str(), parts.next()) {
        ("github.com", Some(owner)) if !owner.is_empty() => format!("github.com/{owner}"),
        _ => host,
    }
}

/// A source URL and the name its link shows.
#[derive(Serialize)]
struct NamedSource {
    url: String,
    name: String,
}

/// A list of source URLs, named by [`source_name`]; two sources of one publisher are told apart by a
/// number (`vatupdate.com`, `vatupdate.com (2)`).
fn named_sources(urls: &Value) -> Vec<NamedSource> {
    let urls: Vec<String> = match urls.try_iter() {
        Ok(items) => items
            .filter(|v| !v.is_none() && !v.is_undefined())
            .map(|v| v.to_string())
            .collect(),
        Err(_) if urls.is_none() || urls.is_undefined() => Vec::new(),
        Err(_) => vec![urls.to_string()],
    };
    named_source_list(&urls)
}

/// [`named_sources`] of a list of URLs (what `/compare/{code}.json` says of each cell).
fn named_source_list(urls: &[impl AsRef<str>]) -> Vec<NamedSource> {
    let urls: Vec<&str> = urls.iter().map(AsRef::as_ref).collect();
    let names: Vec<String> = urls.iter().map(|u| source_name(u)).collect();
    urls.iter()
        .zip(&names)
        .enumerate()
        .map(|(i, (url, name))| {
            let before = names[..i].iter().filter(|n| *n == name).count();
            let name = if before == 0 {
                name.clone()
            } else {
                format!("{name} ({})", before + 1)
            };
            NamedSource {
                url: url.to_string(),
                name,
            }
        })
        .collect()
}

/// The fact texts' clause convention (`SAF-T: no.`, `Real-time reporting: yes (…)`), written for curators
/// and the consistency check, said in words on the pages. The data and the API keep the text as it is.
///
/// The rules, in words (each clause at a word boundary): `B2B: ` and `B2G: ` name their e-invoicing;
/// `e-invoicing: enacted, date pending` says the start date is not yet set (also right after a `B2B: `
/// it named); `Real-time reporting:`, `SAF-T:` and `Audit file:` followed by `no`, `yes`, `from` or `on
/// request` say what is required. One pass of one pattern: a page's change table runs this on every old
/// and new value, and ten passes were a tenth of an x100 edit. Public: the pages and the feeds show a
/// change's sentence through it, and the tests hold them to that.
pub fn plain_clauses(text: &str) -> String {
    static CLAUSE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(concat!(
            r"\b(?:",
            r"(?<scope>B2[BG]): (?<pending>enacted, date pending)?",
            r"|(?<einvoicing>e-invoicing: )enacted, date pending",
            r"|(?<clause>Real-time reporting|SAF-T|Audit file): (?<answer>no|yes|from|on request)\b",
            r")"
        ))
        .expect("a valid pattern")
    });
    CLAUSE
        .replace_all(text, |found: &regex::Captures| {
            const NOT_YET_SET: &str = "enacted, start date not yet set";
            if let Some(scope) = found.name("scope") {
                let pending = if found.name("pending").is_some() {
                    NOT_YET_SET
                } else {
                    ""
                };
                return format!("{} e-invoicing: {pending}", scope.as_str());
            }
            if found.name("einvoicing").is_some() {
                return format!("e-invoicing: {NOT_YET_SET}");
            }
            let answer = found.name("answer").map_or("", |m| m.as_str());
            let said = match (&found["clause"], answer) {
                ("Real-time reporting", "no") => "Real-time reporting: not required",
                ("Real-time reporting", "yes") => "Real-time reporting: required",
                ("Real-time reporting", "from") => "Real-time reporting: required from",
                ("SAF-T", "no") => "SAF-T: not required",
                ("SAF-T", "from") => "SAF-T: required from",
                ("Audit file", "no") => "Standard audit file: not required",
                ("Audit file", "on request") => "Standard audit file: required on request",
                // A clause with an answer it has no words for stays as written.
                _ => return found[0].to_string(),
            };
            said.to_string()
        })
        .into_owned()
}

/// The templates of one kind of page (`["base.html", "macros.html", "country.html"]`, the page's own
/// last) as a query key.
#[salsa::interned(debug)]
pub(crate) struct TemplateSet<'db> {
    #[returns(ref)]
    pub names: Vec<String>,
}

/// The templates of one kind of page, compiled once per edit of one of them (not once per page: the 61
/// country pages share one compiled set). Compiled templates are not comparable, so this query is never
/// backdated; the pages compare their own bytes instead.
#[salsa::tracked(returns(ref), no_eq)]
pub fn compiled_templates<'db>(
    db: &'db dyn salsa::Database,
    set: TemplateSet<'db>,
) -> Result<Environment<'static>, Diagnostic> {
    let mut env = Environment::new();
    // A misspelled variable is an error located in its template, not empty text on a page.
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    // Every render has a budget of work: a template that loops without end, or branches without bound,
    // is a located error instead of a build (or a watch rebuild) that never returns.
    env.set_fuel(Some(template_fuel()));
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.set_auto_escape_callback(auto_escape);
    env.set_formatter(html_formatter);
    env.add_filter("md", md_cell);
    env.add_filter("md_url", md_url);
    env.add_filter("slug", |value: String| crate::ids::slugify(&value));
    env.add_filter("sources", |urls: Value| {
        Value::from_serialize(named_sources(&urls))
    });
    env.add_filter("plain", |value: String| plain_clauses(&value));
    for name in set.names(db) {
        let text = template_text(db, TemplateKey::new(db, name.clone())).clone()?;
        guarded(|| env.add_template_owned(name.clone(), text.clone()))
            .map_err(|e| template_error(&format!("{TEMPLATES}/{name}"), &e, Some(&text)))?;
    }
    Ok(env)
}

/// The work one render may do, in minijinja's instructions. The shipped site's largest render needs
/// between 20,000 and 30,000 (measured: `locref check` fails at 20,000 and passes at 30,000), so this
/// leaves room for pages thousands of times larger while a runaway loop stops within seconds;
/// `LOCREF_TEMPLATE_FUEL` overrides it (measurements).
pub(crate) fn template_fuel() -> u64 {
    std::env::var("LOCREF_TEMPLATE_FUEL")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(TEMPLATE_FUEL)
}

/// See [`template_fuel`].
const TEMPLATE_FUEL: u64 = 200_000_000;

/// Where a page is, for its head: its canonical URL (absolute, with the base URL: the one address of a
/// page also reachable as its twin, and `/compare/` with any `?c=`) and its Markdown twin. `None` for the
/// 404 page, which is at no address of its own and has no twin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct ThisPage {
    canonical: String,
    /// Site-relative (the base path is added with the page's other links).
    twin: String,
}

impl ThisPage {
    pub(crate) fn of(db: &dyn salsa::Database, path: &str) -> Option<ThisPage> {
        let folder = path.strip_suffix("index.html")?;
        Some(ThisPage {
            canonical: format!("{}{folder}", crate::model::base_url(db)),
            twin: format!("{folder}index.md"),
        })
    }
}

/// Renders a page from `names` (the last is the page; the others are the templates it extends or
/// includes); the page at `path` is `this_page` to its templates (see [`ThisPage`]).
pub(crate) fn render_page(
    db: &dyn salsa::Database,
    names: &[String],
    context: &PageContext,
    path: &str,
) -> RenderedFile {
    let set = TemplateSet::new(db, names.to_vec());
    let env = match compiled_templates(db, set) {
        Ok(env) => env,
        Err(diagnostic) => return RenderedFile::failed(diagnostic.clone()),
    };
    let main = names.last().map_or("", String::as_str);
    let mut out = CappedBuffer::default();
    let context = minijinja::context! {
        this_page => Value::from_serialize(ThisPage::of(db, path)),
        ..context.0.clone()
    };
    let rendered = env
        .get_template(main)
        .and_then(|t| guarded(|| t.render_captured_to(context, &mut out).map(drop)));
    match rendered {
        Ok(()) => {
            let mut bytes = out.bytes;
            if !bytes.ends_with(b"\n") {
                bytes.push(b'\n');
            }
            RenderedFile {
                rendered: Rendered::new(bytes),
                error: None,
            }
        }
        Err(_) if out.over => RenderedFile::failed(Diagnostic::file(
            &format!("{TEMPLATES}/{main}"),
            format!(
                "template error: the page would be larger than {} MiB; a template that writes this much is a loop gone wrong",
                MAX_RENDER_BYTES >> 20
            ),
        )),
        Err(e) => RenderedFile::failed(rendering_error(db, &e, main)),
    }
}

/// The most one render may write: far above any page the site makes (its largest pages are a few
/// hundred KB), far below what would exhaust memory. A template that writes more is a located error, and
/// the bytes written so far are dropped.
pub(crate) const MAX_RENDER_BYTES: usize = 64 << 20;

/// A render's output, refusing to grow past [`MAX_RENDER_BYTES`].
#[derive(Default)]
struct CappedBuffer {
    bytes: Vec<u8>,
    /// Whether a write was refused.
    over: bool,
}

impl std::io::Write for CappedBuffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.bytes.len() + buf.len() > MAX_RENDER_BYTES {
            self.over = true;
            self.bytes = Vec::new();
            return Err(std::io::Error::other(format!(
                "the page would be larger than {} MiB",
                MAX_RENDER_BYTES >> 20
            )));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// An error of the engine while rendering, located in the template it names (else in `rendered`, the
/// template that was being rendered).
pub(crate) fn rendering_error(
    db: &dyn salsa::Database,
    error: &minijinja::Error,
    rendered: &str,
) -> Diagnostic {
    let name = error.name().unwrap_or(rendered).to_string();
    let source = template_text(db, TemplateKey::new(db, name.clone()))
        .as_ref()
        .ok();
    template_error(
        &format!("{TEMPLATES}/{name}"),
        error,
        source.map(String::as_str),
    )
}

/// The templates of a page: the layout, the shared macros, then the page's own template (last).
pub(crate) fn template_names(template: &str, format: Format) -> [String; 3] {
    let ext = match format {
        Format::Html => "html",
        Format::Markdown => "md",
    };
    [
        format!("base.{ext}"),
        format!("macros.{ext}"),
        format!("{template}.{ext}"),
    ]
}

/// What a page shows, from the page's placeholder value (made by the module of its page kind;
/// fingerprinted per page by [`page_context`]).
pub(crate) type ContextFn = fn(&dyn salsa::Database, &str) -> Json;

/// A page's kind and placeholder value, as a query key: the HTML page and its twin share one context.
#[salsa::interned(debug)]
pub(crate) struct PageContextKey<'db> {
    pub kind: PageKind,
    #[returns(ref)]
    pub param: String,
}

/// What one page shows (its HTML and its twin render from it), kept as a fingerprint: the early-cutoff
/// point between the data and the templates, so an edit that leaves a page's context as it was renders
/// nothing again. The context itself is made here and handed to the page and twin that render from it
/// ([`context_of`]) through [`MadeContexts`], not memoized: a watch session keeps 32 bytes a page
/// instead of every page's context (BENCHMARKS.md has what that saves).
#[salsa::tracked]
pub(crate) fn page_context<'db>(
    db: &'db dyn salsa::Database,
    key: PageContextKey<'db>,
) -> ContextFingerprint {
    let json = context_json(db, key);
    let fingerprint = ContextFingerprint::of(&json);
    // Converted before the table is locked: the other thread's pages take it too.
    let context = PageContext::of(&json);
    if let Some(mut made) = made_contexts(db) {
        made.insert(fingerprint, context);
    }
    fingerprint
}

/// The page's context as its kind's context function makes it.
fn context_json(db: &dyn salsa::Database, key: PageContextKey<'_>) -> Json {
    (key.kind(db).spec().context)(db, key.param(db))
}

/// The context of the page at `key` as its HTML or twin renders it: the one [`page_context`] made
/// when it ran, or, when it did not run in this build (the page renders again for another reason, a
/// template edit), made again here. Then the calling render also depends on the data the context
/// reads, so the next edit of that data renders the page again once, even if its context stays the
/// same (a missed cutoff, never a stale page).
pub(crate) fn context_of(db: &dyn salsa::Database, key: PageContextKey<'_>) -> PageContext {
    let fingerprint = page_context(db, key);
    let made = made_contexts(db).and_then(|made| made.get(fingerprint).cloned());
    made.unwrap_or_else(|| PageContext::of(&context_json(db, key)))
}

/// The contexts [`page_context`] made, by fingerprint, until the batch that renders their pages ends
/// ([`forget_made_contexts`]). A salsa input whose one value (the shared table) is never set again, so
/// reading it is a dependency no edit invalidates; keyed by content, so whichever build made an entry,
/// it is the context of any page with that fingerprint. Created by the streaming plans before they
/// render ([`share_made_contexts`]); without it (the serial plan) every render makes its page's context
/// itself. Why this one cache stands beside salsa: ARCHITECTURE.md, "The one cache beside salsa".
#[salsa::input(singleton)]
pub(crate) struct MadeContexts {
    #[returns(ref)]
    pub table: Arc<Mutex<HashMap<ContextFingerprint, PageContext>>>,
}

/// Makes the table of [`MadeContexts`] on `db` if it has none yet: a build calls this before it
/// renders, so each page's context is made once for the page and its twin.
pub(crate) fn share_made_contexts(db: &dyn salsa::Database) {
    if MadeContexts::try_get(db).is_none() {
        let _ = MadeContexts::new(db, Default::default());
    }
}

/// Lets go of the contexts made so far: their pages are rendered (see [`MadeContexts`]).
pub(crate) fn forget_made_contexts(db: &dyn salsa::Database) {
    if let Some(mut made) = made_contexts(db) {
        made.clear();
    }
}

/// The table of [`MadeContexts`], locked; `None` for a database made without it.
fn made_contexts(
    db: &dyn salsa::Database,
) -> Option<std::sync::MutexGuard<'_, HashMap<ContextFingerprint, PageContext>>> {
    MadeContexts::try_get(db).map(|made| made.table(db).lock().expect("made contexts poisoned"))
}

/// A page context's fingerprint: the blake3 of its JSON, value by value, each tagged with its kind and
/// length, so that two contexts have one fingerprint only if every value is the same. That is stricter
/// than the templates' `==`, which takes `1` and `1.0` (or `true` and `1`) as equal while each renders
/// differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ContextFingerprint(blake3::Hash);

impl ContextFingerprint {
    pub(crate) fn of(json: &Json) -> ContextFingerprint {
        fn feed(hasher: &mut blake3::Hasher, json: &Json) {
            let mut tagged = |tag: u8, bytes: &[u8]| {
                hasher.update(&[tag]);
                hasher.update(&(bytes.len() as u64).to_le_bytes());
                hasher.update(bytes);
            };
            match json {
                Json::Null => tagged(b'z', b""),
                Json::Bool(b) => tagged(b'b', &[u8::from(*b)]),
                // As serde_json writes it: 1 and 1.0 differ.
                Json::Number(n) => tagged(b'n', n.to_string().as_bytes()),
                Json::String(text) => tagged(b's', text.as_bytes()),
                Json::Array(items) => {
                    tagged(b'a', &(items.len() as u64).to_le_bytes());
                    for item in items {
                        feed(hasher, item);
                    }
                }
                Json::Object(map) => {
                    tagged(b'o', &(map.len() as u64).to_le_bytes());
                    for (key, value) in map {
                        hasher.update(&(key.len() as u64).to_le_bytes());
                        hasher.update(key.as_bytes());
                        feed(hasher, value);
                    }
                }
            }
        }
        let mut hasher = blake3::Hasher::new();
        feed(&mut hasher, json);
        ContextFingerprint(hasher.finalize())
    }
}

/// `json` as the template engine's value, as `Value::from_serialize` makes it, except that equal long
/// strings are one shared string: a page's context repeats texts (a country page shows each fact in its
/// section and again in its History, as the change's new value), and a watch session keeps every
/// page's context.
fn template_value<'j>(json: &'j Json, seen: &mut HashMap<&'j str, Value>) -> Value {
    /// Strings shorter than this are not looked up: most are labels, and the engine keeps strings of up
    /// to 22 bytes inline anyway.
    const SHARED_FROM: usize = 64;
    match json {
        Json::Null => Value::from(()),
        Json::Bool(b) => Value::from(*b),
        Json::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => Value::from(u),
            (None, Some(i), _) => Value::from(i),
            (None, None, f) => Value::from(f.unwrap_or(f64::NAN)),
        },
        Json::String(text) if text.len() >= SHARED_FROM => seen
            .entry(text.as_str())
            .or_insert_with(|| Value::from(text.as_str()))
            .clone(),
        Json::String(text) => Value::from(text.as_str()),
        Json::Array(items) => Value::from(
            items
                .iter()
                .map(|item| template_value(item, seen))
                .collect::<Vec<Value>>(),
        ),
        Json::Object(map) => map
            .iter()
            .map(|(key, value)| (Value::from(key.as_str()), template_value(value, seen)))
            .collect(),
    }
}

/// A page's context as the template engine's value, converted once from the JSON the context functions
/// make: the page and its twin render from this one value (the engine shares a value's maps, lists and
/// strings, so rendering copies none of it), and the JSON is let go as soon as it is converted.
#[derive(Debug, Clone)]
pub(crate) struct PageContext(pub Value);

impl PageContext {
    /// The context of `json` (see [`template_value`]).
    fn of(json: &Json) -> PageContext {
        PageContext(template_value(json, &mut HashMap::new()))
    }
}

/// How a page is made (see [`PageKind::spec`]).
pub(crate) struct PageSpec {
    /// Its template's name without extension: `country` is `country.html` and `country.md`.
    pub template: &'static str,
    pub context: ContextFn,
    /// Whether its bulk is rendered in parts (see [`super::parts`]).
    pub parts: Option<super::parts::PartsSpec>,
}

/// A page rendered whole from `template` and the context `context` makes.
pub(crate) fn page(template: &'static str, context: ContextFn) -> PageSpec {
    PageSpec {
        template,
        context,
        parts: None,
    }
}

impl PageKind {
    /// How pages of this kind are made: one declaration per kind, each in the module of its page.
    pub(crate) fn spec(self) -> PageSpec {
        match self {
            PageKind::Home => home::spec(),
            PageKind::EInvoicing => e_invoicing::spec(),
            PageKind::Country => country::spec(),
            PageKind::Erps => erp::index_spec(),
            PageKind::Erp => erp::spec(),
            PageKind::VatReporting => topics::vat_reporting_spec(),
            PageKind::Saft => topics::saft_spec(),
            PageKind::Partners => lists::partners_spec(),
            PageKind::LocalErps => lists::local_erps_spec(),
            PageKind::News => lists::news_spec(),
            PageKind::Sponsors => sponsors::spec(),
            PageKind::Licence => licence::spec(),
            PageKind::Filters => filters::index_spec(),
            PageKind::Filter => filters::spec(),
            PageKind::Api => api_docs::spec(),
            PageKind::Calendar => page("calendar", |db, _| super::calendar::calendar_context(db)),
            PageKind::Search => search::spec(),
            // The page a static host shows for an unknown path (no twin: `PageKind::formats`).
            PageKind::NotFound => not_found::spec(),
            PageKind::Changes => changes::changes_spec(),
            PageKind::Release => changes::release_spec(),
            PageKind::ReleaseYear => changes::release_year_spec(),
            PageKind::Readiness => readiness::spec(),
            PageKind::Compare => compare::spec(),
        }
    }
}

/// A page or twin, rendered from its context and templates (memoized as its output, see
/// [`super::output_file`]).
pub(crate) fn render_kind(
    db: &dyn salsa::Database,
    kind: PageKind,
    format: Format,
    output: &Output,
) -> RenderedFile {
    let spec = kind.spec();
    if spec.parts.is_some() {
        return super::parts::render_parted(db, output);
    }
    let param = output.param.clone().unwrap_or_default();
    let context = context_of(db, PageContextKey::new(db, kind, param));
    let page = render_page(
        db,
        &template_names(spec.template, format),
        &context,
        &output.path,
    );
    let prefix = crate::model::base_path(db);
    if prefix.is_empty() || page.error.is_some() {
        return page;
    }
    let text = String::from_utf8_lossy(&page.rendered.bytes()).into_owned();
    RenderedFile {
        rendered: Rendered::new(prefix_site_links(&text, prefix, format).into_bytes()),
        error: None,
    }
}

/// Prefixes every site-relative link of a page with the base URL's path (`/e-invoicing/` becomes
/// `/locref/e-invoicing/`), so a site published under a path (a GitHub Pages project site) links
/// within itself. Templates write links from the site's root; this is the one place that knows where the
/// root is.
///
/// In HTML, the values of `href`, `src` and `action` that start with one `/`; in Markdown, link targets
/// `](/…)`. Data cannot forge either: the HTML escape writes `"` as `&quot;`, and the Markdown escape
/// writes `]` as `\]`, which is skipped here.
pub(crate) fn prefix_site_links(text: &str, prefix: &str, format: Format) -> String {
    let patterns: &[&str] = match format {
        Format::Html => &[" href=\"/", " src=\"/", " action=\"/", "\nhref=\"/"],
        Format::Markdown => &["](/"],
    };
    let mut out = String::with_capacity(text.len() + 4096);
    let mut rest = text;
    loop {
        let next = patterns
            .iter()
            .filter_map(|p| rest.find(p).map(|i| (i, p.len())))
            .min();
        let Some((at, len)) = next else {
            out.push_str(rest);
            return out;
        };
        let end = at + len;
        out.push_str(&rest[..end - 1]);
        let escaped = format == Format::Markdown && rest[..at].ends_with('\\');
        // `//host/…` is another site.
        if !escaped && !rest[end..].starts_with('/') {
            out.push_str(prefix);
        }
        out.push('/');
        rest = &rest[end..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::escape::escape_html;
    use serde_json::json;

    #[test]
    fn a_context_is_the_value_the_engine_makes_of_its_json_with_long_texts_shared() {
        let long = "x".repeat(100);
        let json = json!({
            "n": [0, -3, 18446744073709551615u64, 1.5, null, true, "short"],
            "facts": [{"value": long}],
            "history": [{"new": long, "old": "y".repeat(100)}],
            "nested": {"b": {}, "a": []},
        });
        let value = template_value(&json, &mut HashMap::new());
        assert_eq!(
            format!("{value:?}"),
            format!("{:?}", Value::from_serialize(&json))
        );
        // One string, shared: the same allocation behind both.
        let first = |list: &str, field: &str| -> std::sync::Arc<str> {
            let item = value.get_attr(list).unwrap().get_item_by_index(0).unwrap();
            item.get_attr(field).unwrap().try_into().unwrap()
        };
        assert!(std::sync::Arc::ptr_eq(
            &first("facts", "value"),
            &first("history", "new")
        ));
        assert!(!std::sync::Arc::ptr_eq(
            &first("history", "old"),
            &first("history", "new")
        ));
    }

    #[test]
    fn page_contexts_have_one_fingerprint_only_when_every_value_is_the_same() {
        let page =
            json!({"title": "Italy", "count": 2, "rows": [{"a": 1.5, "b": null, "c": true}]});
        let fingerprint = ContextFingerprint::of;
        assert_eq!(fingerprint(&page), fingerprint(&page.clone()));
        // What the templates' `==` takes as equal, but which renders differently; and values that
        // would run together without their lengths.
        let pairs = [
            (json!({"n": 1}), json!({"n": 1.0})),
            (json!({"n": true}), json!({"n": 1})),
            (json!({"rows": [1, 2]}), json!({"rows": [1, 2, 3]})),
            (json!({"rows": [{"v": "x"}]}), json!({"rows": [{"v": "y"}]})),
            (json!({"v": null}), json!({"v": ""})),
            (json!({"v": 0.1}), json!({"v": 0.10000000000000002})),
            (json!({"v": "1"}), json!({"v": 1})),
            (json!({"v": ["ab", "c"]}), json!({"v": ["a", "bc"]})),
            (json!({"ab": "c"}), json!({"a": "bc"})),
            (json!({"v": [[], []]}), json!({"v": [[[]]]})),
        ];
        for (a, b) in pairs {
            assert_ne!(fingerprint(&a), fingerprint(&b), "{a} and {b}");
        }
    }

    #[test]
    fn sources_are_named_by_their_publisher() {
        assert_eq!(
            source_name("https://www.odoo.com/documentation/"),
            "odoo.com"
        );
        assert_eq!(
            source_name("https://learn.microsoft.com/en-us/x"),
            "learn.microsoft.com"
        );
        assert_eq!(
            source_name("https://github.com/MicrosoftDocs/dynamics365smb-docs/blob/main/x.md"),
            "github.com/MicrosoftDocs"
        );
        assert_eq!(source_name("https://Tax.gov.ae"), "tax.gov.ae");
        let named = named_sources(&Value::from(vec![
            "https://www.vatupdate.com/a",
            "https://vatupdate.com/b",
            "https://ecosio.com/",
        ]));
        let names: Vec<&str> = named.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["vatupdate.com", "vatupdate.com (2)", "ecosio.com"]);
        assert!(named_sources(&Value::from(())).is_empty());
    }

    #[test]
    fn clause_conventions_read_as_words() {
        assert_eq!(
            plain_clauses(
                "Monthly VAT return. Real-time reporting: yes (SdI). SAF-T: no. Audit file: no."
            ),
            "Monthly VAT return. Real-time reporting: required (SdI). SAF-T: not required. Standard audit file: not required."
        );
        assert_eq!(
            plain_clauses("B2B: enacted, date pending (x). B2G: mandatory from 2020-01-01."),
            "B2B e-invoicing: enacted, start date not yet set (x). B2G e-invoicing: mandatory from 2020-01-01."
        );
        assert_eq!(plain_clauses("SAF-T: nothing"), "SAF-T: nothing");
    }

    #[test]
    fn site_links_get_the_base_path_and_nothing_else_does() {
        let html = "<a href=\"/\">h</a><a href=\"/e-invoicing/#fr-odoo\">m</a><script src=\"/assets/x.js\" defer></script>\
                    <form action=\"/search/\"></form><a href=\"//cdn.example/x\">c</a><a href=\"https://x.example/\">x</a>\
                    <a href=\"index.md\">t</a><a href=\"#top\">#</a><p>href=\"/not-an-attribute\"</p>";
        assert_eq!(
            prefix_site_links(html, "/locref", Format::Html),
            "<a href=\"/locref/\">h</a><a href=\"/locref/e-invoicing/#fr-odoo\">m</a><script src=\"/locref/assets/x.js\" defer></script>\
             <form action=\"/locref/search/\"></form><a href=\"//cdn.example/x\">c</a><a href=\"https://x.example/\">x</a>\
             <a href=\"index.md\">t</a><a href=\"#top\">#</a><p>href=\"/not-an-attribute\"</p>"
        );
        let md = "[Italy](/it/index.md) | \\[x\\](/y) [API](/api/) [ext](https://x.example/)";
        assert_eq!(
            prefix_site_links(md, "/locref", Format::Markdown),
            "[Italy](/locref/it/index.md) | \\[x\\](/y) [API](/locref/api/) [ext](https://x.example/)"
        );
    }

    /// The escapes and clause rules as first written, a character or a rule at a time: what the faster
    /// versions above must still write, byte for byte.
    mod as_first_written {
        pub fn escape_html(text: &str) -> String {
            let mut out = String::new();
            for c in text.chars() {
                match c {
                    '&' => out.push_str("&amp;"),
                    '<' => out.push_str("&lt;"),
                    '>' => out.push_str("&gt;"),
                    '"' => out.push_str("&quot;"),
                    '\'' => out.push_str("&#39;"),
                    _ => out.push(c),
                }
            }
            out
        }

        pub fn md_cell(text: &str) -> String {
            let mut out = String::new();
            for c in text.replace("\r\n", "\n").chars() {
                match c {
                    '\\' | '|' | '<' | '[' | ']' => {
                        out.push('\\');
                        out.push(c);
                    }
                    '\n' | '\r' => out.push_str("<br>"),
                    _ => out.push(c),
                }
            }
            out
        }

        pub fn plain_clauses(text: &str) -> String {
            let rules = [
                (r"\bB2B: ", "B2B e-invoicing: "),
                (r"\bB2G: ", "B2G e-invoicing: "),
                (
                    r"\b(e-invoicing: )enacted, date pending",
                    "${1}enacted, start date not yet set",
                ),
                (
                    r"\bReal-time reporting: no\b",
                    "Real-time reporting: not required",
                ),
                (
                    r"\bReal-time reporting: yes\b",
                    "Real-time reporting: required",
                ),
                (
                    r"\bReal-time reporting: from\b",
                    "Real-time reporting: required from",
                ),
                (r"\bSAF-T: no\b", "SAF-T: not required"),
                (r"\bSAF-T: from\b", "SAF-T: required from"),
                (r"\bAudit file: no\b", "Standard audit file: not required"),
                (
                    r"\bAudit file: on request\b",
                    "Standard audit file: required on request",
                ),
            ];
            let mut text = text.to_string();
            for (pattern, words) in rules {
                text = regex::Regex::new(pattern)
                    .expect("a valid pattern")
                    .replace_all(&text, words)
                    .into_owned();
            }
            text
        }
    }

    /// Texts made of the clauses' own words, so the rules meet each other (a clause right after another,
    /// inside a word, doubled) far more often than in arbitrary text.
    fn clause_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let pieces = prop::sample::select(vec![
            "B2B: ",
            "B2G: ",
            "B2B:",
            "e-invoicing: ",
            "enacted, date pending",
            "enacted",
            "Real-time reporting: ",
            "SAF-T: ",
            "Audit file: ",
            "no",
            "yes",
            "from",
            "on request",
            "not",
            "none",
            " ",
            ".",
            "x",
            "é",
            "(",
            "-",
            ",",
            "\r\n",
            "\n",
            "\r",
            "|",
            "<",
            "&",
            "\"",
            "'",
            "[",
            "]",
            "\\",
        ]);
        (prop::collection::vec(pieces, 0..24), "\\PC{0,6}")
            .prop_map(|(pieces, tail)| pieces.concat() + &tail)
    }

    proptest::proptest! {
        #[test]
        fn the_fast_escapes_write_what_a_character_at_a_time_wrote(
            text in proptest::prop_oneof![clause_text(), "\\PC{0,40}", ".{0,40}"]
        ) {
            proptest::prop_assert_eq!(escape_html(&text), as_first_written::escape_html(&text));
            proptest::prop_assert_eq!(md_cell(Value::from(text.as_str())), as_first_written::md_cell(&text));
        }

        #[test]
        fn one_pass_of_the_clause_pattern_writes_what_the_ten_rules_wrote(text in clause_text()) {
            proptest::prop_assert_eq!(plain_clauses(&text), as_first_written::plain_clauses(&text));
        }
    }
}
