//! The template engine of the pages: each template file read and syntax-checked by its own query
//! ([`template_text`]), the templates of a page compiled once per edit ([`compiled_templates`]), a page
//! rendered from its templates and context ([`render_page`]), and the base path put in its links
//! ([`prefix_site_links`]). HTML templates are auto-escaped (by their `.html` name, see [`html_formatter`]);
//! Markdown templates escape table cells with the `md` filter and link targets with `md_url`.

use minijinja::{AutoEscape, Environment, Error, State, Value};
use serde::Serialize;

use super::context::PageContext;
use crate::diagnostics::Diagnostic;
use crate::kinds::Format;
use crate::output::{Rendered, RenderedFile};
use crate::parse::source_text;
use crate::render::text::{md_cell, md_url, named_sources, plain_clauses, source_groups};
use locref_escape::escape::write_escaped_html;

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

/// Writes every value of an `.html` template escaped by [`locref_escape::escape::escape_html`], except values marked safe
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
    env.add_filter("source_groups", |urls: Value| {
        Value::from_serialize(source_groups(&urls))
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
