//! The rule files under `rules/` (TOML): site identity, route table, toggle rules, filters, the fact
//! vocabulary and the closed value sets. Each is a salsa input like any source, so editing a rule rebuilds
//! exactly what depends on it.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::{is_http_url, is_iso_date, source_text};
use crate::diagnostics::{Checked, Diagnostic, LineIndex, line_column};

pub const SITE: &str = "rules/site.toml";
pub(crate) const ROUTES: &str = "rules/routes.toml";
pub const TOGGLES: &str = "rules/toggles.toml";
pub(crate) const FILTERS: &str = "rules/filters.toml";
pub(crate) const FACTS: &str = "rules/facts.toml";
pub(crate) const VOCABULARY: &str = "rules/vocabulary.toml";
pub(crate) const PHASES: &str = "rules/phases.toml";

/// A position in a rule file, for diagnostics found after parsing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct At {
    pub line: u32,
    pub column: u32,
}

impl At {
    pub fn error(self, path: &str, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(path, self.line, self.column, message)
    }
}

/// Where `spanned` starts in the text `lines` indexes (one index a file, however many spans: a route
/// table of 100,000 routes is not scanned 100,000 times).
fn at<T>(lines: &LineIndex, spanned: &Spanned<T>) -> At {
    let (line, column) = lines.locate(spanned.span().start);
    At { line, column }
}

fn parse_toml<T: DeserializeOwned + Default>(
    db: &dyn salsa::Database,
    path: &str,
) -> (T, String, Vec<Diagnostic>) {
    let text = match source_text(db, path) {
        Ok(text) => text,
        Err(diagnostic) => return (T::default(), String::new(), vec![diagnostic]),
    };
    match toml::from_str::<T>(text) {
        Ok(value) => {
            let diagnostics = super::text::toml_problem(path, text).into_iter().collect();
            (value, text.to_string(), diagnostics)
        }
        Err(error) => {
            let (line, column) = error
                .span()
                .map_or((1, 1), |span| line_column(text, span.start));
            let message = error.message().to_string();
            (
                T::default(),
                text.to_string(),
                vec![Diagnostic::new(path, line, column, message)],
            )
        }
    }
}

// ---------------------------------------------------------------- site.toml

/// The API's licence (serialized as the licence page shows it).
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ApiLicence {
    pub name: String,
    pub url: String,
    pub commercial_licence: String,
    pub commercial_contact: String,
    pub attribution: String,
}

/// The data files' licence (serialized as the licence page shows it).
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DataLicence {
    pub name: String,
    pub url: String,
    pub attribution: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SponsorRules {
    pub notice: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SiteRules {
    pub title: String,
    pub description: String,
    pub base_url: String,
    pub version: String,
    pub reference_date: String,
    pub informational_notice: String,
    /// Sent with every page (`_headers`, and by the dev server): the pages need nothing from elsewhere.
    #[serde(default)]
    pub content_security_policy: Option<String>,
    pub api_licence: ApiLicence,
    pub data_licence: DataLicence,
    pub sponsors: SponsorRules,
}

#[salsa::tracked(returns(ref))]
pub fn site_rules(db: &dyn salsa::Database) -> Checked<SiteRules> {
    let (site, text, mut diagnostics) = parse_toml::<SiteRules>(db, SITE);
    if diagnostics.is_empty() {
        let locate = |key: &str| {
            let offset = text.find(&format!("{key} =")).unwrap_or(0);
            let (line, column) = line_column(&text, offset);
            At { line, column }
        };
        for (key, url) in [
            ("base_url", &site.base_url),
            ("url", &site.api_licence.url),
            ("url", &site.data_licence.url),
        ] {
            if !is_http_url(url) {
                diagnostics.push(locate(key).error(SITE, format!("`{url}` is not an http(s) URL")));
            }
        }
        if site.base_url.ends_with('/') {
            diagnostics.push(locate("base_url").error(SITE, "`base_url` must not end with `/`"));
        }
        if !is_iso_date(&site.reference_date) {
            diagnostics.push(
                locate("reference_date").error(SITE, "`reference_date` must be a YYYY-MM-DD date"),
            );
        }
        if !site.api_licence.commercial_licence.starts_with('/') {
            diagnostics.push(
                locate("commercial_licence")
                    .error(SITE, "`commercial_licence` must be a site-relative path"),
            );
        }
    }
    Checked::new(site, diagnostics)
}

// ---------------------------------------------------------------- routes.toml

/// How a route appears in openapi.json.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum OpenapiMode {
    /// One path; a placeholder stays a path parameter.
    Template,
    /// Every expanded path on its own.
    Expand,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRoute {
    path: Spanned<String>,
    render: Spanned<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    index: bool,
    #[serde(default)]
    openapi: Option<OpenapiMode>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawRoutes {
    #[serde(default)]
    route: Vec<RawRoute>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RouteRule {
    pub path: String,
    pub render: String,
    pub description: Option<String>,
    pub index: bool,
    pub openapi: Option<OpenapiMode>,
    pub path_at: At,
    pub render_at: At,
}

#[salsa::tracked(returns(ref))]
pub(crate) fn route_rules(db: &dyn salsa::Database) -> Checked<Vec<RouteRule>> {
    let (raw, text, diagnostics) = parse_toml::<RawRoutes>(db, ROUTES);
    let lines = LineIndex::new(&text);
    let routes = raw
        .route
        .into_iter()
        .map(|r| RouteRule {
            path_at: at(&lines, &r.path),
            render_at: at(&lines, &r.render),
            path: r.path.into_inner(),
            render: r.render.into_inner(),
            description: r.description,
            index: r.index,
            openapi: r.openapi,
        })
        .collect();
    Checked::new(routes, diagnostics)
}

// ---------------------------------------------------------------- toggles.toml

/// A condition a phase of an obligation (a row of `sources/tables/obligations.csv`) can meet, against
/// the reference date of `rules/site.toml`. The status conditions are the phase's recorded status; the
/// date conditions compare its `applies_from` with the reference date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PhaseCondition {
    /// The phase applies on the reference date: `in-force`, or `enacted` from a date (a whole day, month
    /// or year) on or before it.
    Applies,
    /// The phase is `enacted` from a date that begins after the reference date.
    AppliesLater,
    /// Status `in-force`.
    InForce,
    /// Status `enacted` (with a date).
    Enacted,
    /// Status `enacted-date-pending`.
    EnactedDatePending,
    /// Status `planned`.
    Planned,
    /// Status `none`.
    None,
}

impl PhaseCondition {
    /// How the pages say what a phase met, after its status (`enacted from 2027-01-01: applies only
    /// after the reference date`).
    pub(crate) fn describe(self) -> &'static str {
        match self {
            PhaseCondition::Applies => "applies on the reference date",
            PhaseCondition::AppliesLater => "applies only after the reference date",
            PhaseCondition::InForce => "in force",
            PhaseCondition::Enacted => "enacted with a date",
            PhaseCondition::EnactedDatePending => "enacted, start date pending",
            PhaseCondition::Planned => "not enacted",
            PhaseCondition::None => "no such obligation",
        }
    }
}

/// One or several conditions (`when = "applies"` or `when = ["planned", "none"]`).
#[derive(Deserialize)]
#[serde(untagged)]
enum RawConditions {
    One(PhaseCondition),
    Many(Vec<PhaseCondition>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawToggleRule {
    when: Spanned<RawConditions>,
    value: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawToggle {
    name: Spanned<String>,
    #[serde(default)]
    label: Option<String>,
    description: String,
    obligation: Spanned<String>,
    rules: Vec<RawToggleRule>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawObligation {
    id: Spanned<String>,
    label: String,
    fact: Spanned<String>,
    clause: String,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawToggles {
    #[serde(default)]
    obligation: Vec<RawObligation>,
    #[serde(default)]
    toggle: Vec<RawToggle>,
}

/// An obligation the obligations table records: how pages name it, and the country fact whose prose
/// explains it with a clause (`B2B: mandatory from …` in the `E-invoicing` fact).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ObligationRule {
    pub id: String,
    pub label: String,
    pub fact: String,
    pub clause: String,
    pub at: At,
    pub fact_at: At,
}

/// One rule of a toggle: when any phase of the toggle's obligation meets one of `when`, the toggle is
/// `value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToggleMatch {
    pub when: Vec<PhaseCondition>,
    pub value: bool,
    pub at: At,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToggleRule {
    pub name: String,
    /// The short heading pages show (`B2B mandate`); the name with spaces when absent.
    pub label: Option<String>,
    pub description: String,
    pub obligation: String,
    pub obligation_at: At,
    pub rules: Vec<ToggleMatch>,
    pub at: At,
}

/// The obligations and the toggle rules of `rules/toggles.toml`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct ToggleRules {
    pub obligations: Vec<ObligationRule>,
    pub toggles: Vec<ToggleRule>,
}

#[salsa::tracked(returns(ref))]
pub fn toggle_file(db: &dyn salsa::Database) -> Checked<ToggleRules> {
    let (raw, text, diagnostics) = parse_toml::<RawToggles>(db, TOGGLES);
    let lines = LineIndex::new(&text);
    let obligations = raw
        .obligation
        .into_iter()
        .map(|o| ObligationRule {
            at: at(&lines, &o.id),
            fact_at: at(&lines, &o.fact),
            id: o.id.into_inner(),
            label: o.label,
            fact: o.fact.into_inner(),
            clause: o.clause,
        })
        .collect();
    let toggles = raw
        .toggle
        .into_iter()
        .map(|toggle| ToggleRule {
            at: at(&lines, &toggle.name),
            obligation_at: at(&lines, &toggle.obligation),
            name: toggle.name.into_inner(),
            label: toggle.label,
            description: toggle.description,
            obligation: toggle.obligation.into_inner(),
            rules: toggle
                .rules
                .into_iter()
                .map(|rule| ToggleMatch {
                    at: at(&lines, &rule.when),
                    when: match rule.when.into_inner() {
                        RawConditions::One(c) => vec![c],
                        RawConditions::Many(cs) => cs,
                    },
                    value: rule.value,
                })
                .collect(),
        })
        .collect();
    Checked::new(
        ToggleRules {
            obligations,
            toggles,
        },
        diagnostics,
    )
}

/// The toggle rules (a projection: filters and pages that read only these do not re-run when an
/// obligation's label changes).
#[salsa::tracked(returns(ref))]
pub fn toggle_rules(db: &dyn salsa::Database) -> Checked<Vec<ToggleRule>> {
    let file = toggle_file(db);
    Checked::new(file.value.toggles.clone(), file.diagnostics.clone())
}

/// The obligations the toggles read.
#[salsa::tracked(returns(ref))]
pub fn obligation_rules(db: &dyn salsa::Database) -> Vec<ObligationRule> {
    toggle_file(db).value.obligations.clone()
}

// ---------------------------------------------------------------- filters.toml

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FilterMatch {
    AnyTrue,
    AllTrue,
    AnyNull,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFilter {
    slug: Spanned<String>,
    description: String,
    #[serde(rename = "match")]
    matches: FilterMatch,
    toggles: Spanned<Vec<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawFilters {
    #[serde(default)]
    filter: Vec<RawFilter>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterRule {
    pub slug: String,
    pub description: String,
    pub matches: FilterMatch,
    pub toggles: Vec<String>,
    pub at: At,
    pub toggles_at: At,
}

#[salsa::tracked(returns(ref))]
pub(crate) fn filter_rules(db: &dyn salsa::Database) -> Checked<Vec<FilterRule>> {
    let (raw, text, diagnostics) = parse_toml::<RawFilters>(db, FILTERS);
    let lines = LineIndex::new(&text);
    let filters = raw
        .filter
        .into_iter()
        .map(|f| FilterRule {
            at: at(&lines, &f.slug),
            toggles_at: at(&lines, &f.toggles),
            slug: f.slug.into_inner(),
            description: f.description,
            matches: f.matches,
            toggles: f.toggles.into_inner(),
        })
        .collect();
    Checked::new(filters, diagnostics)
}

// ---------------------------------------------------------------- facts.toml

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFactLabel {
    label: Spanned<String>,
    topic: String,
    #[serde(default)]
    erp: Option<String>,
    #[serde(default = "yes")]
    flat_file: bool,
}

fn yes() -> bool {
    true
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawFacts {
    #[serde(default)]
    fact: Vec<RawFactLabel>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FactLabel {
    pub label: String,
    pub topic: String,
    pub erp: Option<String>,
    pub flat_file: bool,
    pub at: At,
}

#[salsa::tracked(returns(ref))]
pub(crate) fn fact_labels(db: &dyn salsa::Database) -> Checked<Vec<FactLabel>> {
    let (raw, text, diagnostics) = parse_toml::<RawFacts>(db, FACTS);
    let lines = LineIndex::new(&text);
    let labels = raw
        .fact
        .into_iter()
        .map(|f| FactLabel {
            at: at(&lines, &f.label),
            label: f.label.into_inner(),
            topic: f.topic,
            erp: f.erp,
            flat_file: f.flat_file,
        })
        .collect();
    Checked::new(labels, diagnostics)
}

// ---------------------------------------------------------------- phases.toml

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPhases {
    #[serde(default)]
    labels: std::collections::BTreeMap<String, Spanned<String>>,
}

/// A reader label of one obligation phase (`rules/phases.toml`): how pages, feeds, calendars and the API
/// name it instead of its slug.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhaseLabel {
    /// The phase id, `<country>-<obligation>-<phase>`.
    pub id: String,
    pub label: String,
    pub at: At,
}

/// The reader labels of the phases, in key order; a missing file is no label (the check says which
/// phases need one).
#[salsa::tracked(returns(ref))]
pub fn phase_labels(db: &dyn salsa::Database) -> Checked<Vec<PhaseLabel>> {
    if source_text(db, PHASES).is_err() {
        return Checked::new(Vec::new(), Vec::new());
    }
    let (raw, text, diagnostics) = parse_toml::<RawPhases>(db, PHASES);
    let lines = LineIndex::new(&text);
    let labels = raw
        .labels
        .into_iter()
        .map(|(id, label)| PhaseLabel {
            id,
            at: at(&lines, &label),
            label: label.into_inner(),
        })
        .collect();
    Checked::new(labels, diagnostics)
}

/// The reader label of the phase `id`, if `rules/phases.toml` gives one.
pub fn phase_label<'db>(db: &'db dyn salsa::Database, id: &str) -> Option<&'db str> {
    phase_labels(db)
        .value
        .iter()
        .find(|l| l.id == id)
        .map(|l| l.label.as_str())
}

// ---------------------------------------------------------------- vocabulary.toml

#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Vocabulary {
    pub support_types: Vec<String>,
    pub partner_flags: Vec<String>,
    pub reporting_erps: Vec<String>,
    pub evidence: Vec<String>,
    pub connector_tracked_countries: Vec<String>,
    /// `tables/regimes.csv` `model`.
    pub einvoicing_models: Labels,
    /// `tables/regimes.csv` `signature`.
    pub signature_answers: Labels,
    /// `tables/regimes.csv` `archive_location`.
    pub archive_locations: Labels,
    /// `tables/regimes.csv` `formats` (a list).
    pub einvoicing_formats: Labels,
    /// `tables/regimes.csv` `platforms` (a list).
    pub einvoicing_platforms: Labels,
    /// The names a source uses for each ERP of the register: a matrix cell's quote names one of them.
    #[serde(default)]
    pub erp_products: std::collections::BTreeMap<String, Vec<String>>,
    /// The words with which a fact's clause for an obligation says nothing applies (see
    /// `rules/vocabulary.toml`).
    #[serde(default)]
    pub denials: Vec<String>,
    /// The words with which a matrix cell's note says its own answer is not established.
    #[serde(default)]
    pub hedges: Vec<String>,
    /// The words with which a clause of `tables/mandates.csv` says its date starts no obligation.
    #[serde(default)]
    pub not_a_start: Vec<String>,
}

/// One value of a labelled set: its id (what the tables and the data carry), the label pages show, and
/// where the id stands in `rules/vocabulary.toml`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Label {
    pub id: String,
    pub label: String,
    pub at: At,
}

/// A labelled set of `rules/vocabulary.toml`: a table of `id = "label"`, in file order (the order pages
/// and the data package list them in; [`vocabulary`] sorts the ids by where they stand).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Labels(pub Vec<Label>);

impl Labels {
    /// The value `id` names, if the set has it.
    pub fn get(&self, id: &str) -> Option<&Label> {
        self.0.iter().find(|l| l.id == id)
    }

    /// The ids, in order.
    pub fn ids(&self) -> Vec<String> {
        self.0.iter().map(|l| l.id.clone()).collect()
    }
}

impl<'de> Deserialize<'de> for Labels {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Labels;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a table of id = \"label\"")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Labels, A::Error> {
                let mut labels = Vec::new();
                while let Some((id, label)) = map.next_entry::<String, String>()? {
                    labels.push(Label {
                        id,
                        label,
                        at: At::default(),
                    });
                }
                Ok(Labels(labels))
            }
        }
        deserializer.deserialize_map(Visitor)
    }
}

/// The labelled sets of the vocabulary, by their table names.
impl Vocabulary {
    pub(crate) fn labelled_sets(&self) -> [(&'static str, &Labels); 5] {
        [
            ("einvoicing_models", &self.einvoicing_models),
            ("signature_answers", &self.signature_answers),
            ("archive_locations", &self.archive_locations),
            ("einvoicing_formats", &self.einvoicing_formats),
            ("einvoicing_platforms", &self.einvoicing_platforms),
        ]
    }

    fn labelled_sets_mut(&mut self) -> [(&'static str, &mut Labels); 5] {
        [
            ("einvoicing_models", &mut self.einvoicing_models),
            ("signature_answers", &mut self.signature_answers),
            ("archive_locations", &mut self.archive_locations),
            ("einvoicing_formats", &mut self.einvoicing_formats),
            ("einvoicing_platforms", &mut self.einvoicing_platforms),
        ]
    }
}

/// Where the key `id` of the table `[section]` starts in `text` (the section's header when the key is
/// written in a way this does not find, as a quoted key; 1:1 without the header).
fn key_at(text: &str, section: &str, id: &str) -> At {
    let header = format!("[{section}]");
    let Some(start) = text
        .match_indices(&header)
        .map(|(at, _)| at)
        .find(|&at| at == 0 || text.as_bytes()[at - 1] == b'\n')
    else {
        return At { line: 1, column: 1 };
    };
    let mut lines = text[start..].split_inclusive('\n');
    let mut offset = start + lines.next().map_or(0, str::len);
    for line in lines {
        offset += line.len();
        let trimmed = line.trim_start();
        if trimmed.starts_with('[') {
            break;
        }
        if let Some(rest) = trimmed.strip_prefix(id)
            && rest.trim_start().starts_with('=')
        {
            let at = offset - line.len() + (line.len() - trimmed.len());
            let (line, column) = line_column(text, at);
            return At { line, column };
        }
    }
    let (line, column) = line_column(text, start);
    At { line, column }
}

#[salsa::tracked(returns(ref))]
pub fn vocabulary(db: &dyn salsa::Database) -> Checked<Vocabulary> {
    let (mut vocabulary, text, diagnostics) = parse_toml::<Vocabulary>(db, VOCABULARY);
    for (section, labels) in vocabulary.labelled_sets_mut() {
        for label in &mut labels.0 {
            label.at = key_at(&text, section, &label.id);
        }
        // The TOML reader hands a table over sorted by key: put the set back in file order.
        labels.0.sort_by_key(|l| (l.at.line, l.at.column));
    }
    Checked::new(vocabulary, diagnostics)
}
