//! Files of the input folders that nothing reads. A misspelt table (`sources/tables/vat.cvs`), a register
//! saved under another name or an asset no route serves would otherwise be ignored without a word, and
//! the curator's edit with it; each is an error at its file, naming what locref reads there.

use crate::db::Workspace;
use crate::diagnostics::Diagnostic;
use crate::parse::json_sources::{ERP_REGISTER, NEWS, SPONSORS};
use crate::parse::rules::{FACTS, FILTERS, PHASES, ROUTES, SITE, TOGGLES, VOCABULARY, route_rules};
use crate::parse::tables::{
    CONNECTORS, COUNTRY_ALIASES, COUNTRY_FACTS, COUNTRY_REGISTER, LOCAL_ERPS, MANDATES, MATRIX,
    OBLIGATIONS, PARTNER_FLAGS, PARTNERS, PUBLISHERS, REGIMES, REPORTING, REPORTING_SUPPORT, VAT,
};

/// The source files locref reads, outside `sources/releases/` (which the history checks itself).
const SOURCE_FILES: &[&str] = &[
    COUNTRY_REGISTER,
    COUNTRY_ALIASES,
    ERP_REGISTER,
    PUBLISHERS,
    COUNTRY_FACTS,
    VAT,
    MANDATES,
    MATRIX,
    REPORTING,
    REPORTING_SUPPORT,
    CONNECTORS,
    LOCAL_ERPS,
    PARTNER_FLAGS,
    PARTNERS,
    OBLIGATIONS,
    REGIMES,
    NEWS,
    SPONSORS,
];

/// The rule files of `rules/` itself.
const RULE_FILES: &[&str] = &[SITE, ROUTES, TOGGLES, FILTERS, FACTS, VOCABULARY, PHASES];

/// The route renderer that serves a file of `rules/assets/` as it is.
const ASSET_RENDERER: &str = "asset";

/// Every input file in `sources/` (but the releases and notes in Markdown), in `rules/` itself and in
/// `rules/assets/` that nothing reads, as an error at the file.
#[salsa::tracked(returns(ref))]
pub fn check_unread_files(db: &dyn salsa::Database) -> Vec<Diagnostic> {
    let served: Vec<String> = route_rules(db)
        .value
        .iter()
        .filter(|rule| rule.render == ASSET_RENDERER)
        .map(|rule| format!("rules{}", rule.path))
        .collect();
    let mut problems = Vec::new();
    for path in Workspace::get(db).files(db).keys() {
        let message = if let Some(rest) = path.strip_prefix("sources/") {
            let read = SOURCE_FILES.contains(&path.as_str())
                || rest.starts_with("releases/")
                || path.ends_with(".md");
            (!read).then(|| match meant(path) {
                Some(known) => format!(
                    "is not a file locref reads: did you mean {known}? (a misspelt name leaves the table it meant unread)"
                ),
                None => format!(
                    "is not a file locref reads: the sources are {} (and the releases under sources/releases/)",
                    SOURCE_FILES.join(", ")
                ),
            })
        } else if let Some(rest) = path.strip_prefix("rules/assets/") {
            (!served.contains(path)).then(|| {
                format!(
                    "is served by no route: add a route `path = \"/assets/{rest}\"` with `render = \"{ASSET_RENDERER}\"` to {ROUTES}, or remove the file"
                )
            })
        } else if path
            .strip_prefix("rules/")
            .is_some_and(|rest| !rest.contains('/'))
        {
            (!RULE_FILES.contains(&path.as_str()) && !path.ends_with(".md")).then(|| {
                format!(
                    "is not a file locref reads: the rules are {} (with rules/templates/, rules/assets/ and rules/geo/)",
                    RULE_FILES.join(", ")
                )
            })
        } else {
            None
        };
        problems.extend(message.map(|m| Diagnostic::file(path, m)));
    }
    problems
}

/// The source file `path` most likely meant: the one in the same folder with the same name before its
/// extension (`vat.cvs`, `vat.CSV`, `vat.csv.bak` for `vat.csv`).
fn meant(path: &str) -> Option<&'static str> {
    let stem = |p: &str| -> String {
        let (folder, name) = p.rsplit_once('/').unwrap_or(("", p));
        let name = name.split('.').next().unwrap_or(name);
        format!("{folder}/{}", name.to_ascii_lowercase())
    };
    let wanted = stem(path);
    SOURCE_FILES
        .iter()
        .copied()
        .find(|known| stem(known) == wanted)
}
