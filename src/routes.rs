//! The route table (`rules/routes.toml`) expanded over the registers: the one list of every output file.
//! The build, the dev server, `index.json`, `openapi.json` and `_headers` all read [`outputs`].

use std::collections::BTreeMap;

use crate::diagnostics::Diagnostic;
use crate::model::{countries, erps};
use crate::parse::rules::{ROUTES, RouteRule, filter_rules, route_rules};

/// What a route's placeholder expands over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Param {
    None,
    /// `{code}`: the countries.
    Country,
    /// `{id}`: the ERPs.
    Erp,
    /// `{filter}`: the filters.
    Filter,
    /// `{stem}`: the flat data tables.
    Stem,
}

impl Param {
    pub fn placeholder(self) -> Option<&'static str> {
        match self {
            Param::None => None,
            Param::Country => Some("{code}"),
            Param::Erp => Some("{id}"),
            Param::Filter => Some("{filter}"),
            Param::Stem => Some("{stem}"),
        }
    }

    /// The parameter's name in OpenAPI (`code`).
    pub fn name(self) -> Option<&'static str> {
        self.placeholder().map(|p| p.trim_matches(['{', '}']))
    }
}

/// The renderers a route can name; each is one or more salsa queries in `render/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Renderer {
    ApiIndex,
    ApiCountries,
    ApiCountry,
    ApiErps,
    ApiErp,
    ApiFacts,
    ApiLocalErps,
    ApiPartnerFlags,
    ApiPartners,
    ApiNews,
    ApiSponsors,
    ApiFilter,
    Openapi,
    DataJson,
    DataCsv,
    Datapackage,
    DataLicence,
    Headers,
    /// A static file of `rules/assets/` (`/assets/site.css` is `rules/assets/site.css`).
    Asset,
    PageHome,
    PageHomeMd,
    PageEInvoicing,
    PageEInvoicingMd,
    PageCountry,
    PageCountryMd,
    PageErps,
    PageErpsMd,
    PageErp,
    PageErpMd,
    PageVatReporting,
    PageVatReportingMd,
    PageSaft,
    PageSaftMd,
    PagePartners,
    PagePartnersMd,
    PageLocalErps,
    PageLocalErpsMd,
    PageNews,
    PageNewsMd,
    PageSponsors,
    PageSponsorsMd,
    PageLicence,
    PageLicenceMd,
    PageFilters,
    PageFiltersMd,
    PageFilter,
    PageFilterMd,
    PageApi,
    PageApiMd,
    PageNotFound,
    /// `/llms.txt`: the index of the site for language models.
    Llms,
    /// `/llms-full.txt`: every Markdown twin in one file.
    LlmsFull,
}

impl Renderer {
    const ALL: [(&'static str, Renderer, Param); 52] = [
        ("api_index", Renderer::ApiIndex, Param::None),
        ("api_countries", Renderer::ApiCountries, Param::None),
        ("api_country", Renderer::ApiCountry, Param::Country),
        ("api_erps", Renderer::ApiErps, Param::None),
        ("api_erp", Renderer::ApiErp, Param::Erp),
        ("api_facts", Renderer::ApiFacts, Param::None),
        ("api_local_erps", Renderer::ApiLocalErps, Param::None),
        ("api_partner_flags", Renderer::ApiPartnerFlags, Param::None),
        ("api_partners", Renderer::ApiPartners, Param::None),
        ("api_news", Renderer::ApiNews, Param::None),
        ("api_sponsors", Renderer::ApiSponsors, Param::None),
        ("api_filter", Renderer::ApiFilter, Param::Filter),
        ("openapi", Renderer::Openapi, Param::None),
        ("data_json", Renderer::DataJson, Param::Stem),
        ("data_csv", Renderer::DataCsv, Param::Stem),
        ("datapackage", Renderer::Datapackage, Param::None),
        ("data_licence", Renderer::DataLicence, Param::None),
        ("headers", Renderer::Headers, Param::None),
        ("asset", Renderer::Asset, Param::None),
        ("page_home", Renderer::PageHome, Param::None),
        ("page_home_md", Renderer::PageHomeMd, Param::None),
        ("page_e_invoicing", Renderer::PageEInvoicing, Param::None),
        (
            "page_e_invoicing_md",
            Renderer::PageEInvoicingMd,
            Param::None,
        ),
        ("page_country", Renderer::PageCountry, Param::Country),
        ("page_country_md", Renderer::PageCountryMd, Param::Country),
        ("page_erps", Renderer::PageErps, Param::None),
        ("page_erps_md", Renderer::PageErpsMd, Param::None),
        ("page_erp", Renderer::PageErp, Param::Erp),
        ("page_erp_md", Renderer::PageErpMd, Param::Erp),
        (
            "page_vat_reporting",
            Renderer::PageVatReporting,
            Param::None,
        ),
        (
            "page_vat_reporting_md",
            Renderer::PageVatReportingMd,
            Param::None,
        ),
        ("page_saft", Renderer::PageSaft, Param::None),
        ("page_saft_md", Renderer::PageSaftMd, Param::None),
        ("page_partners", Renderer::PagePartners, Param::None),
        ("page_partners_md", Renderer::PagePartnersMd, Param::None),
        ("page_local_erps", Renderer::PageLocalErps, Param::None),
        ("page_local_erps_md", Renderer::PageLocalErpsMd, Param::None),
        ("page_news", Renderer::PageNews, Param::None),
        ("page_news_md", Renderer::PageNewsMd, Param::None),
        ("page_sponsors", Renderer::PageSponsors, Param::None),
        ("page_sponsors_md", Renderer::PageSponsorsMd, Param::None),
        ("page_licence", Renderer::PageLicence, Param::None),
        ("page_licence_md", Renderer::PageLicenceMd, Param::None),
        ("page_filters", Renderer::PageFilters, Param::None),
        ("page_filters_md", Renderer::PageFiltersMd, Param::None),
        ("page_filter", Renderer::PageFilter, Param::Filter),
        ("page_filter_md", Renderer::PageFilterMd, Param::Filter),
        ("page_api", Renderer::PageApi, Param::None),
        ("page_api_md", Renderer::PageApiMd, Param::None),
        ("page_not_found", Renderer::PageNotFound, Param::None),
        ("llms", Renderer::Llms, Param::None),
        ("llms_full", Renderer::LlmsFull, Param::None),
    ];

    pub fn from_name(name: &str) -> Option<Renderer> {
        Self::ALL
            .iter()
            .find(|(n, _, _)| *n == name)
            .map(|(_, r, _)| *r)
    }

    /// The placeholder this renderer's routes must carry.
    pub fn param(self) -> Param {
        Self::ALL
            .iter()
            .find(|(_, r, _)| *r == self)
            .map_or(Param::None, |(_, _, p)| *p)
    }

    /// The renderer's name in `rules/routes.toml`.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, r, _)| *r == self)
            .map_or("", |(n, _, _)| *n)
    }

    /// Whether the output is an HTML page or its Markdown twin (rendered from `rules/templates/`).
    pub fn is_page(self) -> bool {
        self.name().starts_with("page_")
    }

    /// Whether the output is an API envelope (JSON with `meta` and `data`).
    pub fn is_envelope(self) -> bool {
        !self.is_page()
            && !matches!(
                self,
                Renderer::Openapi
                    | Renderer::DataJson
                    | Renderer::DataCsv
                    | Renderer::Datapackage
                    | Renderer::DataLicence
                    | Renderer::Headers
                    | Renderer::Asset
                    | Renderer::Llms
                    | Renderer::LlmsFull
            )
    }
}

/// The file stems of the flat data tables, in the SPEC's order (declared by [`FlatTable`]).
///
/// [`FlatTable`]: crate::render::data::FlatTable
pub const STEMS: [&str; 6] = crate::render::data::FlatTable::STEMS;

/// One output file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Output {
    /// Site-relative path (`/api/v1/countries/it.json`).
    pub path: String,
    pub renderer: Renderer,
    /// The value the route's placeholder took (`it`).
    pub param: Option<String>,
    /// Index of the route in `rules/routes.toml`.
    pub route: usize,
}

/// The values a placeholder expands to.
pub fn param_values(db: &dyn salsa::Database, param: Param) -> Vec<String> {
    match param {
        Param::None => vec![String::new()],
        Param::Country => countries(db).iter().map(|c| c.code.clone()).collect(),
        Param::Erp => erps(db).iter().map(|e| e.id.clone()).collect(),
        Param::Filter => filter_rules(db)
            .value
            .iter()
            .map(|f| f.slug.clone())
            .collect(),
        Param::Stem => STEMS.iter().map(|s| s.to_string()).collect(),
    }
}

/// The routes that are well-formed (valid renderer and placeholder), with their renderer.
#[salsa::tracked(returns(ref))]
pub fn valid_routes(db: &dyn salsa::Database) -> Vec<(usize, RouteRule, Renderer)> {
    route_rules(db)
        .value
        .iter()
        .enumerate()
        .filter_map(|(i, rule)| {
            let renderer = Renderer::from_name(&rule.render)?;
            route_problem(rule, renderer)
                .is_none()
                .then(|| (i, rule.clone(), renderer))
        })
        .collect()
}

fn route_problem(rule: &RouteRule, renderer: Renderer) -> Option<String> {
    // Nothing a route names may reach outside the output folder.
    if let Some(problem) = crate::outdir::site_path_problem(&rule.path) {
        return Some(problem);
    }
    let expected = renderer.param().placeholder();
    let found: Vec<&str> = ["{code}", "{id}", "{filter}", "{stem}"]
        .into_iter()
        .filter(|p| rule.path.contains(p))
        .collect();
    let ok = match expected {
        Some(p) => found == [p],
        None => found.is_empty(),
    };
    if !ok || rule.path.matches('{').count() != found.len() {
        return Some(match expected {
            Some(p) => format!(
                "renderer `{}` needs the placeholder `{p}` in its path (and no other)",
                rule.render
            ),
            None => format!(
                "renderer `{}` makes one file; its path takes no placeholder",
                rule.render
            ),
        });
    }
    if renderer == Renderer::Asset && !is_asset_path(&rule.path) {
        return Some(format!(
            "an asset route serves a file of rules/assets/: its path is `/assets/<file name>`, not `{}`",
            rule.path
        ));
    }
    if renderer == Renderer::ApiFilter && rule.description.is_some() {
        return Some("a {filter} route takes each filter's description from rules/filters.toml; remove `description`".into());
    }
    None
}

/// Whether `path` names one file directly under `/assets/` (so an asset route cannot reach outside
/// `rules/assets/`).
fn is_asset_path(path: &str) -> bool {
    path.strip_prefix("/assets/").is_some_and(|name| {
        !name.is_empty()
            && !name.starts_with('.')
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    })
}

/// The project file an asset route serves: `/assets/site.css` -> `rules/assets/site.css`.
pub fn asset_source(path: &str) -> String {
    format!("rules{path}")
}

/// Every output file, in route-table order.
#[salsa::tracked(returns(ref))]
pub fn outputs(db: &dyn salsa::Database) -> Vec<Output> {
    let mut out = Vec::new();
    for (i, rule, renderer) in valid_routes(db) {
        let param = renderer.param();
        for value in param_values(db, param) {
            let path = match param.placeholder() {
                Some(p) => rule.path.replace(p, &value),
                None => rule.path.clone(),
            };
            // A register value that would make the path leave the output folder makes no output (the
            // registers' own checks report it).
            if crate::outdir::site_path_problem(&path).is_some() {
                continue;
            }
            out.push(Output {
                path,
                renderer: *renderer,
                param: param.placeholder().map(|_| value),
                route: *i,
            });
        }
    }
    out
}

/// Problems in the route table: unknown renderers, wrong placeholders, two routes making one file.
#[salsa::tracked(returns(ref))]
pub fn check_routes(db: &dyn salsa::Database) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    for rule in &route_rules(db).value {
        match Renderer::from_name(&rule.render) {
            None => {
                let known: Vec<&str> = Renderer::ALL.iter().map(|(n, _, _)| *n).collect();
                diagnostics.push(rule.render_at.error(
                    ROUTES,
                    format!(
                        "unknown renderer `{}`; expected one of: {}",
                        rule.render,
                        known.join(", ")
                    ),
                ));
            }
            Some(renderer) => {
                if let Some(problem) = route_problem(rule, renderer) {
                    diagnostics.push(rule.path_at.error(ROUTES, problem));
                }
            }
        }
    }
    let rules = &route_rules(db).value;
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for output in outputs(db) {
        if let Some(first) = seen
            .insert(&output.path, output.route)
            .filter(|r| *r != output.route)
        {
            diagnostics.push(rules[output.route].path_at.error(
                ROUTES,
                format!(
                    "`{}` is also made by the route on line {}",
                    output.path, rules[first].path_at.line
                ),
            ));
        }
    }
    diagnostics
}

/// The media type of an output, from its extension (what the dev server and `_headers` send).
pub fn media_type(path: &str) -> &'static str {
    let name = path.rsplit('/').next().unwrap_or("");
    match name.rsplit_once('.').map(|(_, ext)| ext) {
        Some("json") => "application/json; charset=utf-8",
        Some("csv") => "text/csv; charset=utf-8",
        Some("md") => "text/markdown; charset=utf-8",
        Some("txt") => "text/plain; charset=utf-8",
        Some("html") => "text/html; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("svg") => "image/svg+xml",
        _ if name == "_headers" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}
