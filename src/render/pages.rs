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
use super::api::country_detail;
use crate::derive::toggles::{country_toggle_values, country_toggles};
use crate::diagnostics::Diagnostic;
use crate::model::{CountryKey, countries, country_matrix, erp_name};
use crate::parse::rules::site_rules;
use crate::parse::source_text;
use crate::resources::{FactTopic, Toggles};
use crate::routes::{Output, Renderer, STEMS};

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

/// The text of one template, checked for syntax.
#[salsa::tracked(returns(ref))]
pub fn template_text<'db>(
    db: &'db dyn salsa::Database,
    key: TemplateKey<'db>,
) -> Result<String, Diagnostic> {
    let path = format!("{TEMPLATES}/{}", key.name(db));
    let text = source_text(db, &path)?;
    let mut env = Environment::new();
    env.add_template(key.name(db), text)
        .map_err(|e| template_error(&path, &e))?;
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

/// Escapes a value for a Markdown table cell (and Markdown text): backslashes, `|` and `<` are
/// backslash-escaped, line breaks become `<br>`.
pub fn md_cell(value: Value) -> String {
    if value.is_undefined() || value.is_none() {
        return String::new();
    }
    let text = value.to_string();
    let mut out = String::with_capacity(text.len());
    for c in text.replace("\r\n", "\n").chars() {
        match c {
            '\\' | '|' | '<' => {
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

/// Renders `names` (the last is the page; the others are the templates it extends or includes).
fn render_page(db: &dyn salsa::Database, names: &[&str], context: &Json) -> Page {
    let mut env = Environment::new();
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env.set_auto_escape_callback(auto_escape);
    env.set_formatter(html_formatter);
    env.add_filter("md", md_cell);
    env.add_filter("md_url", md_url);
    for name in names {
        match template_text(db, TemplateKey::new(db, name.to_string())) {
            Ok(text) => {
                if let Err(e) = env.add_template_owned(name.to_string(), text.clone()) {
                    return Page::failed(template_error(&format!("{TEMPLATES}/{name}"), &e));
                }
            }
            Err(diagnostic) => return Page::failed(diagnostic.clone()),
        }
    }
    let main = names.last().copied().unwrap_or_default();
    let rendered = env
        .get_template(main)
        .and_then(|t| t.render(Value::from_serialize(context)));
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

/// What every page shows of `rules/site.toml`.
#[salsa::tracked(returns(ref))]
pub fn site_context(db: &dyn salsa::Database) -> Json {
    let site = &site_rules(db).value;
    json!({
        "title": site.title,
        "description": site.description,
        "notice": site.informational_notice,
        "reference_date": site.reference_date,
        "api_licence": { "name": site.api_licence.name, "url": site.api_licence.url },
        "data_licence": { "name": site.data_licence.name, "url": site.data_licence.url },
    })
}

fn toggle_list(toggles: &Toggles) -> Vec<Json> {
    toggles
        .values()
        .iter()
        .map(|(name, value)| json!({ "name": name, "value": value }))
        .collect()
}

/// The home page's data: each country's name, region and toggle values (not its fact texts).
#[salsa::tracked(returns(ref))]
pub fn home_context(db: &dyn salsa::Database) -> Json {
    let rows: Vec<Json> = countries(db)
        .iter()
        .map(|c| {
            let key = CountryKey::new(db, c.code.clone());
            json!({
                "code": c.code,
                "name": c.name,
                "region": c.region,
                "toggles": toggle_list(&country_toggle_values(db, key)),
            })
        })
        .collect();
    json!({
        "site": site_context(db),
        "toggle_names": Toggles::NAMES,
        "countries": rows,
        "stems": STEMS,
    })
}

/// The e-invoicing matrix page's data: every cell's support type, verification and source.
#[salsa::tracked(returns(ref))]
pub fn e_invoicing_context(db: &dyn salsa::Database) -> Json {
    let mut rows = Vec::new();
    for c in countries(db) {
        let key = CountryKey::new(db, c.code.clone());
        for row in country_matrix(db, key) {
            rows.push(json!({
                "country": c.code,
                "country_name": c.name,
                "erp": row.erp,
                "erp_name": erp_name(db, &row.erp),
                "support": row.support_type,
                "verification": row.verification.as_str(),
                "source_url": row.erp_source.first(),
            }));
        }
    }
    json!({ "site": site_context(db), "rows": rows })
}

/// One country page's data: its facts by section, toggles with the fact text that set them, local ERPs,
/// partner flags and partners.
#[salsa::tracked(returns(ref))]
pub fn country_context<'db>(db: &'db dyn salsa::Database, key: CountryKey<'db>) -> Json {
    let Some(detail) = country_detail(db, key) else {
        return Json::Null;
    };
    let outcome = country_toggles(db, key);
    let toggles: Vec<Json> = outcome
        .toggles
        .values()
        .iter()
        .map(|(name, value)| {
            let reason = outcome.reasons.get(name);
            json!({
                "name": name,
                "value": value,
                "fact_id": reason.map(|r| r.fact_id.as_str()),
                "matched": reason.map(|r| r.matched.as_str()),
            })
        })
        .collect();
    let of = |pred: &dyn Fn(FactTopic) -> bool| -> Vec<Json> {
        detail
            .facts
            .iter()
            .filter(|f| pred(f.topic))
            .map(|f| serde_json::to_value(f).expect("facts serialize"))
            .collect()
    };
    json!({
        "site": site_context(db),
        "country": detail.country,
        "toggles": toggles,
        "key_facts": of(&|t| !matches!(t, FactTopic::EInvoicing | FactTopic::EInvoicingErpSupport | FactTopic::VatReporting | FactTopic::Saft)),
        "e_invoicing": of(&|t| t == FactTopic::EInvoicing),
        "matrix": of(&|t| t == FactTopic::EInvoicingErpSupport),
        "vat_reporting": of(&|t| t == FactTopic::VatReporting),
        "saft": of(&|t| t == FactTopic::Saft),
        "local_erps": detail.local_erps,
        "partner_flags": detail.partner_flags,
        "partners": detail.partners,
    })
}

#[salsa::tracked(returns(ref))]
pub fn page_home(db: &dyn salsa::Database) -> Page {
    render_page(db, &["base.html", "home.html"], home_context(db))
}

#[salsa::tracked(returns(ref))]
pub fn page_home_md(db: &dyn salsa::Database) -> Page {
    render_page(db, &["home.md"], home_context(db))
}

#[salsa::tracked(returns(ref))]
pub fn page_e_invoicing(db: &dyn salsa::Database) -> Page {
    render_page(
        db,
        &["base.html", "e-invoicing.html"],
        e_invoicing_context(db),
    )
}

#[salsa::tracked(returns(ref))]
pub fn page_e_invoicing_md(db: &dyn salsa::Database) -> Page {
    render_page(db, &["e-invoicing.md"], e_invoicing_context(db))
}

#[salsa::tracked(returns(ref))]
pub fn page_country<'db>(db: &'db dyn salsa::Database, key: CountryKey<'db>) -> Page {
    render_page(db, &["base.html", "country.html"], country_context(db, key))
}

#[salsa::tracked(returns(ref))]
pub fn page_country_md<'db>(db: &'db dyn salsa::Database, key: CountryKey<'db>) -> Page {
    render_page(db, &["country.md"], country_context(db, key))
}

#[salsa::tracked(returns(ref))]
pub fn page_not_found(db: &dyn salsa::Database) -> Page {
    let context = json!({ "site": site_context(db) });
    render_page(db, &["base.html", "404.html"], &context)
}

/// The page an output is, if it is one.
pub fn page<'db>(db: &'db dyn salsa::Database, output: &Output) -> Option<&'db Page> {
    let country = || CountryKey::new(db, output.param.clone().unwrap_or_default());
    Some(match output.renderer {
        Renderer::PageHome => page_home(db),
        Renderer::PageHomeMd => page_home_md(db),
        Renderer::PageEInvoicing => page_e_invoicing(db),
        Renderer::PageEInvoicingMd => page_e_invoicing_md(db),
        Renderer::PageCountry => page_country(db, country()),
        Renderer::PageCountryMd => page_country_md(db, country()),
        Renderer::PageNotFound => page_not_found(db),
        _ => return None,
    })
}
