//! The route table (`rules/routes.toml`) expanded over the registers: the one list of every output file.
//! The build, the dev server, `index.json`, `openapi.json` and `_headers` all read [`outputs`].

use std::collections::BTreeMap;

use crate::diagnostics::Diagnostic;
use crate::kinds::{ApiKind, FileKind, FlatTable};
use crate::model::{countries, erps};
use crate::parse::rules::{ROUTES, RouteRule, filter_rules, route_rules};

pub use crate::kinds::{Param, Renderer};
pub use crate::output::Output;
pub(crate) use crate::output::media_type;
pub use crate::site::DetailRoute;

/// The file stems of the flat data tables, in the SPEC's order (declared by [`FlatTable`]).
pub(crate) const STEMS: [&str; FlatTable::ALL.len()] = FlatTable::STEMS;

pub use crate::site::output_paths;

/// The values a placeholder expands to.
pub(crate) fn param_values(db: &dyn salsa::Database, param: Param) -> Vec<String> {
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
        Param::Release => crate::history::release_versions(db)
            .iter()
            .rev()
            .cloned()
            .collect(),
        Param::Year => crate::history::release_years(db).clone(),
        Param::Date => crate::derived::on_date::offered_days(db)
            .iter()
            .map(|o| o.day.to_string())
            .collect(),
    }
}

/// The routes that are well-formed (valid renderer and placeholder), with their renderer.
#[salsa::tracked(returns(ref))]
pub(crate) fn valid_routes(db: &dyn salsa::Database) -> Vec<(usize, RouteRule, Renderer)> {
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
    // Nothing a route names may reach outside the output folder, or fail to be written: checked with
    // each placeholder standing for a plain name (the values are checked in `check_routes`).
    let sample = Param::PLACEHOLDERS
        .into_iter()
        .fold(rule.path.clone(), |path, p| path.replace(p, "x"));
    if let Some(problem) = crate::outdir::site_path_problem(&sample) {
        return Some(problem.replace(&format!("`{sample}`"), &format!("`{}`", rule.path)));
    }
    let expected = renderer.param().placeholder();
    let found: Vec<&str> = Param::PLACEHOLDERS
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
    if renderer == Renderer::File(FileKind::Asset) && !is_asset_path(&rule.path) {
        return Some(format!(
            "an asset route serves a file of rules/assets/: its path is `/assets/<file name>`, not `{}`",
            rule.path
        ));
    }
    if renderer == Renderer::Api(ApiKind::Filter) && rule.description.is_some() {
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
pub(crate) fn asset_source(path: &str) -> String {
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
                kind: renderer.kind(),
                param: param.placeholder().map(|_| value),
                route: *i,
            });
        }
    }
    out
}

/// The detail routes of the route table (`{code}`, `{id}` and `{version}` placeholders), whose unknown
/// ids the dev server answers with a 404 that names what is unknown.
pub fn detail_routes(db: &dyn salsa::Database) -> Vec<DetailRoute> {
    valid_routes(db)
        .iter()
        .filter_map(|(_, rule, renderer)| {
            let (placeholder, what) = match renderer.param() {
                Param::Country => ("{code}", "country code"),
                Param::Erp => ("{id}", "ERP id"),
                Param::Release => ("{version}", "release version"),
                Param::Year => ("{year}", "release year"),
                Param::Date => ("{date}", "date"),
                Param::None | Param::Filter | Param::Stem => return None,
            };
            let (prefix, suffix) = rule.path.split_once(placeholder)?;
            Some(DetailRoute {
                prefix: prefix.into(),
                suffix: suffix.into(),
                what: what.into(),
                described: rule.openapi.is_some(),
            })
        })
        .collect()
}

/// Problems in the route table: unknown renderers, wrong placeholders, two routes making one file.
#[salsa::tracked(returns(ref))]
pub fn check_routes(db: &dyn salsa::Database) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    for rule in &route_rules(db).value {
        match Renderer::from_name(&rule.render) {
            None => {
                let known: Vec<String> = Renderer::all().map(Renderer::name).collect();
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
    // A value that makes a path no file can take (an ERP id `aux`, a version ending in `.`): the
    // output is left out of the site, and said here.
    for (i, rule, renderer) in valid_routes(db) {
        let Some(placeholder) = renderer.param().placeholder() else {
            continue;
        };
        for value in param_values(db, renderer.param()) {
            let path = rule.path.replace(placeholder, &value);
            if let Some(problem) = crate::outdir::site_path_problem(&path) {
                diagnostics.push(rules[*i].path_at.error(
                    ROUTES,
                    format!(
                        "with `{placeholder}` = `{}`, {problem}",
                        value.escape_debug()
                    ),
                ));
            }
        }
    }
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
    // Paths a file system cannot hold side by side: two that differ only in case (one file on macOS
    // and Windows), and a file whose path another output needs as a folder.
    let mut folded: BTreeMap<String, &Output> = BTreeMap::new();
    for output in outputs(db) {
        if let Some(other) = folded.insert(output.path.to_ascii_lowercase(), output)
            && other.path != output.path
        {
            diagnostics.push(rules[output.route].path_at.error(
                ROUTES,
                format!(
                    "`{}` and `{}` (the route on line {}) differ only in case: one file where case is not told apart",
                    output.path, other.path, rules[other.route].path_at.line
                ),
            ));
        }
    }
    let paths: BTreeMap<&str, &Output> = outputs(db).iter().map(|o| (o.path.as_str(), o)).collect();
    for output in outputs(db) {
        let folder = format!("{}/", output.path);
        if let Some((inner, by)) = paths
            .range(folder.as_str()..)
            .next()
            .filter(|(p, _)| p.starts_with(&folder))
        {
            diagnostics.push(rules[by.route].path_at.error(
                ROUTES,
                format!(
                    "`{inner}` needs `{}` as a folder, but the route on line {} makes it a file",
                    output.path, rules[output.route].path_at.line
                ),
            ));
        }
    }
    diagnostics
}
