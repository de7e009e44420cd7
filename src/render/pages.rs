//! HTML pages and their Markdown twins, rendered from the minijinja templates in `rules/templates/`.
//!
//! Each template file is read and syntax-checked by its own query ([`template_text`]), so an edit of
//! `country.html` re-runs only the pages that load it. Each page reads a narrow context query (a JSON
//! value), so a page and its twin render again only when the data they show changed. HTML templates are
//! auto-escaped (by their `.html` name, see [`html_formatter`]); Markdown templates escape table cells with
//! the `md` filter and link targets with `md_url`.

use minijinja::{AutoEscape, Environment, Error, State, Value};
use serde_json::{Value as Json, json};

use super::Rendered;
use super::api_docs::api_docs_context;
use super::contexts::*;
use crate::derive::filters::FilterKey;
use crate::diagnostics::Diagnostic;
use crate::model::{CountryKey, ErpKey};
use crate::parse::source_text;
use crate::routes::{Output, Renderer};

/// The folder of the page templates.
pub const TEMPLATES: &str = "rules/templates";

/// A template file name (`country.html`) as a query key.
#[salsa::interned(debug)]
pub struct TemplateKey<'db> {
    #[returns(ref)]
    pub name: String,
}

/// A rendered page, or the template problem that stopped it (reported by the build as a diagnostic).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub rendered: Rendered,
    pub error: Option<Diagnostic>,
}

impl Page {
    fn failed(error: Diagnostic) -> Self {
        Page {
            rendered: Rendered::new(Vec::new()),
            error: Some(error),
        }
    }
}

fn template_error(path: &str, error: &minijinja::Error) -> Diagnostic {
    let line = error.line().unwrap_or(1) as u32;
    let message = match error.detail() {
        Some(detail) => format!("template error: {}: {detail}", error.kind()),
        None => format!("template error: {}", error.kind()),
    };
    Diagnostic::new(path, line, 1, message)
}

/// Runs a call into the template engine, turning a panic of the engine into an error of the template.
///
/// The engine has inputs it panics on instead of reporting (minijinja 2.24 reaches an `unreachable!` in
/// its code generator for `{% import "x" as m % endblock %}`); a damaged template must be a diagnostic like
/// any other, never the end of `watch` or `serve`.
fn guarded<T>(call: impl FnOnce() -> Result<T, minijinja::Error>) -> Result<T, minijinja::Error> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(call)).unwrap_or_else(|_| {
        Err(minijinja::Error::new(
            minijinja::ErrorKind::SyntaxError,
            "the template engine failed on this template; look for a tag without its `%}` or with a stray `%`",
        ))
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
    guarded(|| env.add_template(key.name(db), text)).map_err(|e| template_error(&path, &e))?;
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

/// Escapes `& < > " '`: enough for HTML text and for attribute values in double or single quotes.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
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

/// Writes every value of an `.html` template escaped by [`escape_html`], except values marked safe
/// (macro output, already escaped).
fn html_formatter(out: &mut minijinja::Output, state: &State, value: &Value) -> Result<(), Error> {
    if state.auto_escape() != HTML || value.is_safe() {
        return minijinja::escape_formatter(out, state, value);
    }
    out.write_str(&escape_html(&value.to_string()))
        .map_err(Error::from)
}

/// Escapes a value for a Markdown table cell (and Markdown text): backslashes, `|`, `<` and the brackets
/// of link and image syntax are backslash-escaped (so data can never become a link, an image or raw
/// HTML in a twin or in `llms-full.txt`), line breaks become `<br>`.
pub fn md_cell(value: Value) -> String {
    if value.is_undefined() || value.is_none() {
        return String::new();
    }
    let text = value.to_string();
    let mut out = String::with_capacity(text.len());
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

/// Makes a URL safe as a Markdown link target inside a table: `(`, `)`, `|`, `\` and spaces are
/// percent-encoded (the same URL to a browser; source URLs are checked to be http(s) with no whitespace).
pub fn md_url(value: Value) -> String {
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

/// The templates of one kind of page (`["base.html", "macros.html", "country.html"]`, the page's own
/// last) as a query key.
#[salsa::interned(debug)]
pub struct TemplateSet<'db> {
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
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.set_auto_escape_callback(auto_escape);
    env.set_formatter(html_formatter);
    env.add_filter("md", md_cell);
    env.add_filter("md_url", md_url);
    env.add_filter("slug", |value: String| {
        crate::model::checks::slugify(&value)
    });
    for name in set.names(db) {
        let text = template_text(db, TemplateKey::new(db, name.clone())).clone()?;
        guarded(|| env.add_template_owned(name.clone(), text))
            .map_err(|e| template_error(&format!("{TEMPLATES}/{name}"), &e))?;
    }
    Ok(env)
}

/// Renders a page from `names` (the last is the page; the others are the templates it extends or
/// includes).
fn render_page(db: &dyn salsa::Database, names: &[String], context: &Json) -> Page {
    let set = TemplateSet::new(db, names.to_vec());
    let env = match compiled_templates(db, set) {
        Ok(env) => env,
        Err(diagnostic) => return Page::failed(diagnostic.clone()),
    };
    let main = names.last().map_or("", String::as_str);
    let rendered = env
        .get_template(main)
        .and_then(|t| guarded(|| t.render(Value::from_serialize(context))));
    match rendered {
        Ok(mut text) => {
            if !text.ends_with('\n') {
                text.push('\n');
            }
            Page {
                rendered: Rendered::new(text.into_bytes()),
                error: None,
            }
        }
        Err(e) => {
            let name = e.name().unwrap_or(main).to_string();
            Page::failed(template_error(&format!("{TEMPLATES}/{name}"), &e))
        }
    }
}

/// The templates of a page: the layout, the shared macros, then the page's own template (last).
fn html(name: &str) -> [String; 3] {
    [
        "base.html".into(),
        "macros.html".into(),
        format!("{name}.html"),
    ]
}

/// The templates of a Markdown twin (same order as [`html`]).
fn md(name: &str) -> [String; 3] {
    ["base.md".into(), "macros.md".into(), format!("{name}.md")]
}

/// An HTML page and its Markdown twin over one context without a key; each is a query of its own.
macro_rules! page_pair {
    ($html:ident, $md:ident, $template:literal, $context:path) => {
        #[salsa::tracked(returns(ref))]
        pub fn $html(db: &dyn salsa::Database) -> Page {
            render_page(db, &html($template), $context(db))
        }

        #[salsa::tracked(returns(ref))]
        pub fn $md(db: &dyn salsa::Database) -> Page {
            render_page(db, &md($template), $context(db))
        }
    };
}

page_pair!(page_home, page_home_md, "home", home_context);
page_pair!(
    page_e_invoicing,
    page_e_invoicing_md,
    "e-invoicing",
    e_invoicing_context
);
page_pair!(page_erps, page_erps_md, "erps", erps_context);
page_pair!(
    page_vat_reporting,
    page_vat_reporting_md,
    "reporting",
    vat_reporting_context
);
page_pair!(page_saft, page_saft_md, "reporting", saft_context);
page_pair!(
    page_partners,
    page_partners_md,
    "partners",
    partners_context
);
page_pair!(
    page_local_erps,
    page_local_erps_md,
    "local-erps",
    local_erps_context
);
page_pair!(page_news, page_news_md, "news", news_context);
page_pair!(
    page_sponsors,
    page_sponsors_md,
    "sponsors",
    sponsors_context
);
page_pair!(page_licence, page_licence_md, "licence", licence_context);
page_pair!(page_filters, page_filters_md, "filters", filters_context);
page_pair!(page_api, page_api_md, "api", api_docs_context);

/// An HTML page and its Markdown twin per register entry (a country, an ERP, a filter).
macro_rules! keyed_page_pair {
    ($html:ident, $md:ident, $template:literal, $key:ident, $context:path) => {
        #[salsa::tracked(returns(ref))]
        pub fn $html<'db>(db: &'db dyn salsa::Database, key: $key<'db>) -> Page {
            render_page(db, &html($template), $context(db, key))
        }

        #[salsa::tracked(returns(ref))]
        pub fn $md<'db>(db: &'db dyn salsa::Database, key: $key<'db>) -> Page {
            render_page(db, &md($template), $context(db, key))
        }
    };
}

keyed_page_pair!(
    page_country,
    page_country_md,
    "country",
    CountryKey,
    country_context
);
keyed_page_pair!(page_erp, page_erp_md, "erp", ErpKey, erp_context);
keyed_page_pair!(
    page_filter,
    page_filter_md,
    "filter",
    FilterKey,
    filter_context
);

#[salsa::tracked(returns(ref))]
pub fn page_not_found(db: &dyn salsa::Database) -> Page {
    let context = json!({ "site": site_context(db) });
    render_page(db, &html("404"), &context)
}

/// The page an output is, if it is one.
pub fn page<'db>(db: &'db dyn salsa::Database, output: &Output) -> Option<&'db Page> {
    let param = || output.param.clone().unwrap_or_default();
    let country = || CountryKey::new(db, param());
    let erp = || ErpKey::new(db, param());
    let filter = || FilterKey::new(db, param());
    Some(match output.renderer {
        Renderer::PageHome => page_home(db),
        Renderer::PageHomeMd => page_home_md(db),
        Renderer::PageEInvoicing => page_e_invoicing(db),
        Renderer::PageEInvoicingMd => page_e_invoicing_md(db),
        Renderer::PageCountry => page_country(db, country()),
        Renderer::PageCountryMd => page_country_md(db, country()),
        Renderer::PageErps => page_erps(db),
        Renderer::PageErpsMd => page_erps_md(db),
        Renderer::PageErp => page_erp(db, erp()),
        Renderer::PageErpMd => page_erp_md(db, erp()),
        Renderer::PageVatReporting => page_vat_reporting(db),
        Renderer::PageVatReportingMd => page_vat_reporting_md(db),
        Renderer::PageSaft => page_saft(db),
        Renderer::PageSaftMd => page_saft_md(db),
        Renderer::PagePartners => page_partners(db),
        Renderer::PagePartnersMd => page_partners_md(db),
        Renderer::PageLocalErps => page_local_erps(db),
        Renderer::PageLocalErpsMd => page_local_erps_md(db),
        Renderer::PageNews => page_news(db),
        Renderer::PageNewsMd => page_news_md(db),
        Renderer::PageSponsors => page_sponsors(db),
        Renderer::PageSponsorsMd => page_sponsors_md(db),
        Renderer::PageLicence => page_licence(db),
        Renderer::PageLicenceMd => page_licence_md(db),
        Renderer::PageFilters => page_filters(db),
        Renderer::PageFiltersMd => page_filters_md(db),
        Renderer::PageFilter => page_filter(db, filter()),
        Renderer::PageFilterMd => page_filter_md(db, filter()),
        Renderer::PageApi => page_api(db),
        Renderer::PageApiMd => page_api_md(db),
        Renderer::PageNotFound => page_not_found(db),
        _ => return None,
    })
}
