//! The published API resources, exactly as the service's specification defines them (summarized in the
//! README's "What is published").
//!
//! These types are both what the build serializes and what `openapi.json` describes (schemars derives the
//! component schemas from them), so the document cannot drift from the files.
//!
//! Required-ness follows the specification. schemars (in serialize mode) lists a field as required unless it has
//! `skip_serializing_if`; for fields the specification marks optional that the build nevertheless always emits,
//! [`spec_optional`] is a `skip_serializing_if` predicate that never skips.

use std::collections::BTreeMap;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;

pub mod sentence;

/// Marks a field as optional in the schema (the specification's "required: no") while always serializing it.
pub(crate) fn spec_optional<T>(_: &T) -> bool {
    false
}

/// Every API response: exactly `meta` and `data`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Envelope_{T}")]
pub(crate) struct Envelope<T> {
    pub meta: Meta,
    pub data: T,
}

/// Metadata of a response.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Meta {
    /// Data/API version string.
    pub version: String,
    /// Time of the build that last changed this response's content (UTC).
    #[schemars(extend("format" = "date-time"))]
    pub generated_at: String,
    pub licence: Licence,
    /// Number of items in `data`; 1 for detail endpoints.
    pub count: u64,
    /// Present on the sponsors response: the content is sponsored, not part of the verified dataset, and
    /// does not affect facts, toggles or listing order.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub notice: Option<String>,
    /// Absolute URL of the HTML docs (on the index response).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", extend("format" = "uri"))]
    pub docs: Option<String>,
    /// Absolute URL of the OpenAPI description (on the index response).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", extend("format" = "uri"))]
    pub openapi: Option<String>,
    /// On the index response: for each toggle, how many countries have it true, false and null.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "ToggleCoverage")]
    pub toggle_coverage: Option<ToggleCoverage>,
}

/// Licence of the API data.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Licence {
    pub name: String,
    pub url: String,
    /// Site-relative path of the commercial licence terms (`/licence/#commercial`, as the SPEC fixes it):
    /// a path under the site's base URL (the `servers` URL of openapi.json), not a reference to resolve against the response's URL: its URL is the base URL followed by this path, as OpenAPI joins a path to its server (on a site published at the root of its host the two agree).
    pub commercial_licence: String,
    /// Contact address for a commercial licence.
    pub commercial_contact: String,
    /// Attribution string to use when reusing the data.
    pub attribution: String,
}

/// Derived boolean toggles of a country; `null` means unknown and is never a guess.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Toggles {
    pub e_invoicing_mandatory_b2b: Option<bool>,
    pub e_invoicing_b2b_in_force: Option<bool>,
    pub e_invoicing_mandatory_b2g: Option<bool>,
    pub real_time_reporting: Option<bool>,
    pub saft_required: Option<bool>,
    pub audit_file_on_request: Option<bool>,
}

impl Toggles {
    /// The toggle names, in the published order.
    pub(crate) const NAMES: [&'static str; 6] = [
        "e_invoicing_mandatory_b2b",
        "e_invoicing_b2b_in_force",
        "e_invoicing_mandatory_b2g",
        "real_time_reporting",
        "saft_required",
        "audit_file_on_request",
    ];

    pub fn get(&self, name: &str) -> Option<bool> {
        self.values()
            .into_iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, v)| v)
    }

    pub fn values(&self) -> [(&'static str, Option<bool>); 6] {
        let t = self;
        let v = [
            t.e_invoicing_mandatory_b2b,
            t.e_invoicing_b2b_in_force,
            t.e_invoicing_mandatory_b2g,
            t.real_time_reporting,
            t.saft_required,
            t.audit_file_on_request,
        ];
        std::array::from_fn(|i| (Self::NAMES[i], v[i]))
    }

    pub fn set(&mut self, name: &str, value: Option<bool>) {
        let slot = match name {
            "e_invoicing_mandatory_b2b" => &mut self.e_invoicing_mandatory_b2b,
            "e_invoicing_b2b_in_force" => &mut self.e_invoicing_b2b_in_force,
            "e_invoicing_mandatory_b2g" => &mut self.e_invoicing_mandatory_b2g,
            "real_time_reporting" => &mut self.real_time_reporting,
            "saft_required" => &mut self.saft_required,
            "audit_file_on_request" => &mut self.audit_file_on_request,
            _ => return,
        };
        *slot = value;
    }
}

/// How many countries have a toggle true, false or null.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CoverageCounts {
    #[serde(rename = "true")]
    pub true_: u64,
    #[serde(rename = "false")]
    pub false_: u64,
    pub null: u64,
}

/// `meta.toggle_coverage`: one member per toggle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToggleCoverage {
    pub e_invoicing_mandatory_b2b: CoverageCounts,
    pub e_invoicing_b2b_in_force: CoverageCounts,
    pub e_invoicing_mandatory_b2g: CoverageCounts,
    pub real_time_reporting: CoverageCounts,
    pub saft_required: CoverageCounts,
    pub audit_file_on_request: CoverageCounts,
}

/// Counts of a country's records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CountryCounts {
    pub facts: u64,
    pub facts_verified: u64,
    pub erp_matrix_cells: u64,
    pub local_erps: u64,
    pub partners: u64,
    pub partner_flags: u64,
}

/// A country (list item; also the base of CountryDetail).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Country {
    /// Lower-case ISO 3166-1 alpha-2 code.
    pub code: String,
    pub name: String,
    pub region: String,
    /// Absolute URL of the HTML country page.
    #[schemars(extend("format" = "uri"))]
    pub url: String,
    /// Site-relative path of the country detail endpoint, `/api/v1/countries/<code>.json` (as the SPEC
    /// fixes it): a path under the site's base URL (the `servers` URL of openapi.json), not a reference to resolve against the response's URL: its URL is the base URL followed by this path, as OpenAPI joins a path to its server (on a site published at the root of its host the two agree).
    #[serde(skip_serializing_if = "spec_optional")]
    pub api_url: String,
    pub counts: CountryCounts,
    pub toggles: Toggles,
    /// Standard VAT/GST rate in percent; null if unknown.
    #[serde(skip_serializing_if = "spec_optional")]
    pub vat_standard_rate: Option<f64>,
    /// Reduced, super-reduced and parking rates in percent (zero rate excluded); null if unknown.
    #[serde(skip_serializing_if = "spec_optional")]
    pub vat_reduced_rates: Option<Vec<f64>>,
    /// Local name of the VAT/GST.
    #[serde(skip_serializing_if = "spec_optional")]
    pub vat_name: Option<String>,
    /// Free text for residents / non-residents.
    #[serde(skip_serializing_if = "spec_optional")]
    pub vat_registration_threshold: Option<String>,
    #[serde(skip_serializing_if = "spec_optional")]
    pub vat_filing_frequency: Option<String>,
}

/// A country with all its records.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CountryDetail {
    #[serde(flatten)]
    pub country: Country,
    pub facts: Vec<Fact>,
    pub local_erps: Vec<LocalErp>,
    pub partner_flags: Vec<PartnerFlag>,
    pub partners: Vec<Partner>,
}

/// Fact topic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FactTopic {
    Currency,
    EInvoicing,
    EInvoicingErpSupport,
    ErpLocalization,
    EuVida,
    FiscalYear,
    Language,
    Payroll,
    PeriodicReporting,
    Saft,
    StatutoryAccounts,
    TaxAuthority,
    Vat,
    VatReporting,
}

impl FactTopic {
    pub const ALL: [FactTopic; 14] = [
        FactTopic::Currency,
        FactTopic::EInvoicing,
        FactTopic::EInvoicingErpSupport,
        FactTopic::ErpLocalization,
        FactTopic::EuVida,
        FactTopic::FiscalYear,
        FactTopic::Language,
        FactTopic::Payroll,
        FactTopic::PeriodicReporting,
        FactTopic::Saft,
        FactTopic::StatutoryAccounts,
        FactTopic::TaxAuthority,
        FactTopic::Vat,
        FactTopic::VatReporting,
    ];

    /// The enum value (`e_invoicing`).
    pub fn name(self) -> &'static str {
        match self {
            FactTopic::Currency => "currency",
            FactTopic::EInvoicing => "e_invoicing",
            FactTopic::EInvoicingErpSupport => "e_invoicing_erp_support",
            FactTopic::ErpLocalization => "erp_localization",
            FactTopic::EuVida => "eu_vida",
            FactTopic::FiscalYear => "fiscal_year",
            FactTopic::Language => "language",
            FactTopic::Payroll => "payroll",
            FactTopic::PeriodicReporting => "periodic_reporting",
            FactTopic::Saft => "saft",
            FactTopic::StatutoryAccounts => "statutory_accounts",
            FactTopic::TaxAuthority => "tax_authority",
            FactTopic::Vat => "vat",
            FactTopic::VatReporting => "vat_reporting",
        }
    }

    pub(crate) fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The slug used in fact ids (`e-invoicing`).
    pub fn slug(self) -> String {
        self.name().replace('_', "-")
    }
}

/// Fact status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FactStatus {
    Verified,
    Unverified,
}

impl FactStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            FactStatus::Verified => "verified",
            FactStatus::Unverified => "unverified",
        }
    }
}

/// How a fact was checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verification {
    /// Checked on an official or vendor source as recorded.
    Official,
    /// Reputable secondary source.
    Secondary,
    /// No source confirmed.
    Unverified,
}

impl Verification {
    pub(crate) const NAMES: [&'static str; 3] = ["official", "secondary", "unverified"];

    pub fn as_str(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::NAMES
            .iter()
            .position(|n| *n == text)
            .map(|i| [Self::Official, Self::Secondary, Self::Unverified][i])
    }

    pub(crate) fn is_verified(self) -> bool {
        self != Verification::Unverified
    }

    /// The fact / flat-file `status`.
    pub fn status(self) -> FactStatus {
        if self.is_verified() {
            FactStatus::Verified
        } else {
            FactStatus::Unverified
        }
    }
}

/// One fact about a country (and, when ERP-specific, an ERP).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Fact {
    /// Country code, topic slug and (if ERP-specific) ERP id, joined with hyphens.
    pub id: String,
    pub country: String,
    /// ERP id when the fact is ERP-specific; null otherwise.
    #[serde(skip_serializing_if = "spec_optional")]
    pub erp: Option<String>,
    #[serde(skip_serializing_if = "spec_optional")]
    pub topic: FactTopic,
    #[serde(skip_serializing_if = "spec_optional")]
    pub label: String,
    pub value: std::sync::Arc<str>,
    #[serde(skip_serializing_if = "spec_optional")]
    pub status: FactStatus,
    /// Set for `e_invoicing` facts (B2B or B2G mandate); null elsewhere or when unclear.
    #[serde(skip_serializing_if = "spec_optional")]
    pub mandatory: Option<bool>,
    /// The first day the obligations this fact describes apply: the earliest date, given to the day, of
    /// their in-force or enacted phases (`/api/v1/calendar.json` lists every phase). Null when no phase
    /// gives a day.
    #[serde(skip_serializing_if = "spec_optional")]
    #[schemars(extend("format" = "date"))]
    pub effective_date: Option<String>,
    #[serde(skip_serializing_if = "spec_optional")]
    pub source_url: Option<String>,
    #[serde(skip_serializing_if = "spec_optional")]
    pub source_urls: Vec<String>,
    pub verification: Verification,
    #[serde(skip_serializing_if = "spec_optional")]
    #[schemars(extend("format" = "date"))]
    pub last_checked: Option<String>,
    /// Free-form per-fact attributes (strings). `evidence`: how the source was read. An e-invoicing
    /// support fact adds the country's mandate, its `vendors`, `notes` and, where one was read,
    /// `quote`. A reporting fact adds its row's texts, `erp_sources` and, per ERP column,
    /// `erp_support.<erp>`; each answered cell also its own `erp_verification.<erp>`,
    /// `erp_source_urls.<erp>`, `erp_evidence.<erp>`, `erp_last_checked.<erp>` and, where one was
    /// read, `erp_quote.<erp>`.
    #[serde(skip_serializing_if = "spec_optional")]
    pub details: BTreeMap<String, String>,
}

/// A local or regional ERP / accounting system.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct LocalErp {
    pub id: String,
    pub country: String,
    pub name: String,
    #[serde(skip_serializing_if = "spec_optional")]
    pub segment: String,
    #[serde(skip_serializing_if = "spec_optional")]
    pub description: std::sync::Arc<str>,
    #[serde(skip_serializing_if = "spec_optional")]
    pub website: String,
    #[serde(skip_serializing_if = "spec_optional")]
    pub source_url: Option<String>,
    #[serde(skip_serializing_if = "spec_optional")]
    pub verification: String,
    #[serde(skip_serializing_if = "spec_optional")]
    pub last_checked: Option<String>,
}

/// A country where a global ERP is localized through local partners or add-ons.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PartnerFlag {
    pub id: String,
    pub country: String,
    pub erp: String,
    pub flag: String,
    #[serde(skip_serializing_if = "spec_optional")]
    pub note: std::sync::Arc<str>,
    #[serde(skip_serializing_if = "spec_optional")]
    pub source_url: Option<String>,
    #[serde(skip_serializing_if = "spec_optional")]
    pub verification: String,
    #[serde(skip_serializing_if = "spec_optional")]
    pub last_checked: Option<String>,
}

/// A localization partner or app. No pricing, no featured or sponsored member.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Partner {
    pub id: String,
    pub name: String,
    pub erp: String,
    pub country: String,
    #[serde(skip_serializing_if = "spec_optional")]
    pub partner_type: String,
    #[serde(skip_serializing_if = "spec_optional")]
    pub summary: std::sync::Arc<str>,
    #[serde(skip_serializing_if = "spec_optional")]
    pub source_urls: Vec<String>,
    #[serde(skip_serializing_if = "spec_optional")]
    pub source_kind: String,
    #[serde(skip_serializing_if = "spec_optional")]
    pub last_checked: Option<String>,
}

/// Counts of an ERP's records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ErpCounts {
    /// The countries where this ERP's e-invoicing support is established: its matrix cell
    /// (`e_invoicing_support`) is `native`, `native + access point`, `add-on`, `via provider` or
    /// `via provider (receiving only)`. A cell that is `roadmap` (not yet shipped), `not supported` or
    /// `unknown/unverified` is not counted: the field counts support, not the cells recorded.
    pub e_invoicing_countries: u64,
    pub partner_flags: u64,
    pub partners: u64,
}

/// An ERP product (list item; also the base of ErpDetail).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Erp {
    pub id: String,
    pub name: String,
    pub vendor: Option<String>,
    #[serde(skip_serializing_if = "spec_optional")]
    pub category: Option<String>,
    /// Neutral description, stripped of pricing and commercial terms.
    #[serde(skip_serializing_if = "spec_optional")]
    pub profile: Option<String>,
    #[serde(skip_serializing_if = "spec_optional")]
    pub website: Option<String>,
    /// Absolute URL of the HTML ERP page.
    #[serde(skip_serializing_if = "spec_optional")]
    #[schemars(extend("format" = "uri"))]
    pub url: String,
    /// Site-relative path of the ERP detail endpoint, `/api/v1/erps/<id>.json` (as the SPEC fixes it):
    /// a path under the site's base URL (the `servers` URL of openapi.json), not a reference to resolve against the response's URL: its URL is the base URL followed by this path, as OpenAPI joins a path to its server (on a site published at the root of its host the two agree).
    #[serde(skip_serializing_if = "spec_optional")]
    pub api_url: String,
    #[serde(skip_serializing_if = "spec_optional")]
    pub counts: ErpCounts,
}

/// An e-invoicing provider's connector route for an ERP.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Provider {
    pub provider: String,
    pub connector_type: String,
    pub built_by: String,
    /// Send/receive scope.
    pub direction: String,
    pub countries_in_scope: Vec<String>,
    pub source_urls: Vec<String>,
    pub verification: String,
    #[schemars(extend("format" = "date"))]
    pub last_checked: Option<String>,
}

/// An ERP with its per-country records.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ErpDetail {
    #[serde(flatten)]
    pub erp: Erp,
    /// Per country, the ERP's e-invoicing support (topic `e_invoicing_erp_support`).
    pub e_invoicing_support: Vec<Fact>,
    /// Other ERP-specific facts (for example topic `erp_localization`).
    pub other_facts: Vec<Fact>,
    pub partner_flags: Vec<PartnerFlag>,
    pub providers: Vec<Provider>,
}

/// A vendor news item: title, date and link only.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NewsItem {
    pub id: String,
    pub title: std::sync::Arc<str>,
    #[schemars(extend("format" = "uri"))]
    pub url: String,
    #[serde(skip_serializing_if = "spec_optional")]
    #[schemars(extend("format" = "date"))]
    pub date: Option<String>,
    #[serde(skip_serializing_if = "spec_optional")]
    pub first_seen: Option<String>,
    #[serde(skip_serializing_if = "spec_optional")]
    pub erps: Vec<String>,
    #[serde(skip_serializing_if = "spec_optional")]
    pub source: Option<String>,
}

/// A paid placement; never part of the verified data.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Sponsor {
    pub id: String,
    #[serde(skip_serializing_if = "spec_optional")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "spec_optional")]
    pub scope: Option<String>,
    #[serde(skip_serializing_if = "spec_optional")]
    pub tagline: Option<String>,
    #[serde(skip_serializing_if = "spec_optional")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "spec_optional")]
    pub url: Option<String>,
    #[serde(skip_serializing_if = "spec_optional")]
    pub start: Option<String>,
    #[serde(skip_serializing_if = "spec_optional")]
    pub end: Option<String>,
    /// Always `true`.
    #[schemars(extend("const" = true))]
    pub sponsored: bool,
}

/// An entry of the index.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Endpoint {
    /// Site-relative path of the endpoint (as the SPEC fixes it): a path under the site's base URL (the `servers` URL of openapi.json), not a reference to resolve against the response's URL: its URL is the base URL followed by this path, as OpenAPI joins a path to its server (on a site published at the root of its host the two agree).
    pub path: String,
    pub description: String,
    /// Number of items; null for entries with no count.
    pub count: Option<u64>,
}

/// A country listed by a filter.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FilterItem {
    pub code: String,
    pub name: String,
    pub region: String,
    pub toggles: Toggles,
    /// Site-relative path of the country detail endpoint, `/api/v1/countries/<code>.json` (as the SPEC
    /// fixes it): a path under the site's base URL (the `servers` URL of openapi.json), not a reference to resolve against the response's URL: its URL is the base URL followed by this path, as OpenAPI joins a path to its server (on a site published at the root of its host the two agree).
    pub api_url: String,
}

/// How one toggle of one country got its value (`/api/v1/toggles.json`): the rule of
/// `rules/toggles.toml` and the phase of `tables/obligations.csv` that set it, or why it is null.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToggleDerivation {
    pub country: String,
    /// The toggle's name, as in `Toggles`.
    pub toggle: String,
    pub value: Option<bool>,
    /// The obligation the toggle reads (`b2b-e-invoicing`).
    pub obligation: String,
    /// The rule that set it, by its number in the toggle's rules (1-based); null when none did.
    pub rule: Option<u64>,
    /// The condition the phase met (`applies`, `enacted`, `planned`, ...); null when no rule set it.
    pub condition: Option<String>,
    /// What the condition means, in words.
    pub condition_text: Option<String>,
    /// The id of the phase that met it: `<country>-<obligation>-<phase>`.
    pub phase_id: Option<String>,
    /// The phase's status: `in-force`, `enacted`, `enacted-date-pending`, `planned`, `none`.
    pub status: Option<String>,
    /// The date the phase applies from, as precise as its source: `YYYY-MM-DD`, `YYYY-MM` or `YYYY`.
    pub applies_from: Option<String>,
    /// The date the phase is compared with.
    #[schemars(extend("format" = "date"))]
    pub reference_date: String,
    /// Who and what the phase covers.
    pub scope: Option<String>,
    /// `general`, or `sector` / `group` when the phase applies only to a sector or a group of taxpayers.
    pub coverage: Option<String>,
    /// On a true toggle set by a `sector` or `group` phase: what it is limited to, in the words pages show
    /// after "yes" ("electricity and natural-gas sectors only"). Null otherwise.
    pub limit: Option<String>,
    /// On a `none` phase: `stated` (a source says there is no such obligation) or `absence` (an absence
    /// check: the country is missing from a dated, comprehensive list, and a national page read names
    /// none). Null for other statuses.
    pub basis: Option<String>,
    /// Whether this false rests on an absence check rather than on a source that says so.
    pub rests_on_absence: bool,
    pub source_urls: Vec<String>,
    /// How the source was read: `fetched` or `search-extract` (`unverified`: no source was read).
    pub evidence: Option<String>,
    pub verification: Option<Verification>,
    #[schemars(extend("format" = "date"))]
    pub last_checked: Option<String>,
    /// Why the toggle is null, when it is.
    pub why_null: Option<String>,
    /// The words of the phase's first source that settle it, copied from what was read; null when the
    /// phase has none (it is then not graded `official` or `secondary`).
    pub quote: Option<String>,
}

/// One dated phase of an obligation (`/api/v1/calendar.json`, `/calendar.ics`).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CalendarEntry {
    /// The phase id, `<country>-<obligation>-<phase>`; stable, so a calendar sees an update, not a new
    /// event.
    pub id: String,
    pub country: String,
    pub country_name: String,
    /// The obligation (`b2b-e-invoicing`) and how pages name it.
    pub obligation: String,
    pub obligation_label: String,
    /// Who the phase covers, in words (`large taxpayers (2024 sales above PLN 200 million): issue`);
    /// null for the obligation's only or main phase.
    pub phase_label: Option<String>,
    /// The date the phase applies from, as precise as its source: `YYYY-MM-DD`, `YYYY-MM` or `YYYY`.
    pub date: String,
    /// `day`, `month` or `year`: a month or a year stands for its whole span.
    pub precision: String,
    /// `in-force`, `enacted` or `planned`.
    pub status: String,
    /// `past`, `upcoming` or `spans` (a month or year that holds the reference date), against the
    /// reference date.
    pub when: String,
    /// Who and what the phase covers.
    pub scope: String,
    pub source_urls: Vec<String>,
    pub verification: Verification,
    #[schemars(extend("format" = "date"))]
    pub last_checked: Option<String>,
    /// The id of the country fact whose text explains the obligation.
    pub fact_id: String,
    /// The words of the phase's first source that give it, copied from what was read; null when none.
    pub quote: Option<String>,
}

/// A value of one of the labelled sets of `rules/vocabulary.toml` (an e-invoicing model, a format, a
/// platform, a signature answer, an archive location): its id, what filters and the data files carry, and
/// its label, what pages show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Labelled {
    pub id: String,
    pub label: String,
}

/// How one obligation of one country works (`/api/v1/regimes.json`): the e-invoicing model, the formats,
/// the platforms, whether a signature or seal is required, and archiving. An unknown answer is `null`;
/// every answer given rests on the record's source, read on `last_checked`, with its grade.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Regime {
    /// `<country>-<obligation>`; the country page's row is `#regime-<id>`.
    pub id: String,
    pub country: String,
    pub country_name: String,
    /// The obligation (an `[[obligation]]` id of rules/toggles.toml: `b2b-e-invoicing`, …) and how pages
    /// name it.
    pub obligation: String,
    pub obligation_label: String,
    /// Where the obligation stands on the reference date, from its phases: `in-force`; else the status
    /// of its next phase (`enacted`, `enacted-date-pending`, `planned`); else `none` (a source says there
    /// is no such obligation) or `unclear`.
    pub obligation_status: String,
    /// The date the obligation has been in force since, or its next phase's date (`YYYY-MM-DD`,
    /// `YYYY-MM` or `YYYY`, as precise as its source); null without one.
    pub obligation_from: Option<String>,
    /// The same in words: "in force since 2019-01-01", "planned from 2028-11-01".
    pub obligation_standing: String,
    /// Whether the record describes how invoices are handled on the reference date (the obligation is
    /// in force, or there is none) rather than a way still to come.
    pub current: bool,
    /// The e-invoicing model: clearance, reporting, network, five corners or post-audit; null when
    /// unknown.
    pub model: Option<Labelled>,
    /// The e-invoice formats prescribed or accepted; null when unknown (never an empty array).
    pub formats: Option<Vec<Labelled>>,
    /// The platforms or channels invoices go through; null when unknown (never an empty array).
    pub platforms: Option<Vec<Labelled>>,
    /// Whether an electronic signature or seal is required; null when unknown.
    pub signature: Option<Labelled>,
    /// How many years invoices are kept; null when unknown.
    pub archive_years: Option<u8>,
    /// Where invoices may be stored; null when unknown.
    pub archive_location: Option<Labelled>,
    /// Whether every answer above is null: the record says only what was looked at (`notes`).
    pub unknown: bool,
    /// The sources the answers rest on (empty for an unknown record).
    pub source_urls: Vec<String>,
    /// How the source was read: `fetched` (the page itself), `search-extract` (a stored copy or search
    /// excerpt) or `unverified` (no source was read).
    pub evidence: String,
    pub verification: Verification,
    /// The date the source was read.
    #[schemars(extend("format" = "date"))]
    pub last_checked: Option<String>,
    /// What else the curator recorded; on an unknown record, what was looked at.
    pub notes: String,
    /// The words of the first source that settle the model, copied from what was read; null when none.
    pub quote: Option<String>,
    /// The URL of the country page's row.
    #[schemars(extend("format" = "uri"))]
    pub url: String,
}

// ---------------------------------------------------------------------------------------------------
// Releases and changes (`/api/v1/changes.json`, `/api/v1/releases.json`, `/api/v1/releases/{version}.json`):
// derived from the release snapshots of `sources/releases/` and the current sources (see `crate::history`).

/// What kind of change a [`Change`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// A toggle of the country changed value (true, false or null).
    ToggleFlipped,
    /// A fact or another answer that the earlier state did not have.
    Added,
    /// A fact or another answer that the later state no longer has.
    Removed,
    /// The fact's value text changed, or one field of another answer (`field`).
    ValueChanged,
    /// The verification went up (unverified < secondary < official).
    VerificationRaised,
    /// The verification went down.
    VerificationLowered,
    /// The fact's source URLs changed.
    SourceChanged,
    /// The fact's effective date changed.
    EffectiveDateChanged,
}

impl ChangeKind {
    pub const ALL: [ChangeKind; 8] = [
        ChangeKind::ToggleFlipped,
        ChangeKind::Added,
        ChangeKind::Removed,
        ChangeKind::ValueChanged,
        ChangeKind::VerificationRaised,
        ChangeKind::VerificationLowered,
        ChangeKind::SourceChanged,
        ChangeKind::EffectiveDateChanged,
    ];

    /// The enum value (`value_changed`).
    pub fn name(self) -> &'static str {
        match self {
            ChangeKind::ToggleFlipped => "toggle_flipped",
            ChangeKind::Added => "added",
            ChangeKind::Removed => "removed",
            ChangeKind::ValueChanged => "value_changed",
            ChangeKind::VerificationRaised => "verification_raised",
            ChangeKind::VerificationLowered => "verification_lowered",
            ChangeKind::SourceChanged => "source_changed",
            ChangeKind::EffectiveDateChanged => "effective_date_changed",
        }
    }

    /// `n` changes of this kind as the pages and the feed count them: `1 value changed`,
    /// `119 values changed`, `5 toggles flipped`.
    pub fn counted(self, n: u64) -> String {
        let (one, many, verb) = match self {
            ChangeKind::ToggleFlipped => ("toggle", "toggles", "flipped"),
            ChangeKind::Added => ("answer", "answers", "added"),
            ChangeKind::Removed => ("answer", "answers", "removed"),
            ChangeKind::ValueChanged => ("value", "values", "changed"),
            ChangeKind::VerificationRaised => ("verification", "verifications", "raised"),
            ChangeKind::VerificationLowered => ("verification", "verifications", "lowered"),
            ChangeKind::SourceChanged => ("source", "sources", "changed"),
            ChangeKind::EffectiveDateChanged => ("effective date", "effective dates", "changed"),
        };
        format!("{n} {} {verb}", if n == 1 { one } else { many })
    }

    /// How the pages and the feed say it (`value changed`).
    pub fn words(self) -> &'static str {
        match self {
            ChangeKind::ToggleFlipped => "toggle flipped",
            ChangeKind::Added => "added",
            ChangeKind::Removed => "removed",
            ChangeKind::ValueChanged => "value changed",
            ChangeKind::VerificationRaised => "verification raised",
            ChangeKind::VerificationLowered => "verification lowered",
            ChangeKind::SourceChanged => "source changed",
            ChangeKind::EffectiveDateChanged => "effective date changed",
        }
    }
}

impl ChangeKind {
    /// Whether a change of this kind changes an answer (a value, a status or date or scope in a fact's
    /// text, a toggle, a support type, a fact added or removed) or only the curation behind it (a source,
    /// a grade).
    pub fn substance(self) -> Substance {
        match self {
            ChangeKind::ToggleFlipped
            | ChangeKind::Added
            | ChangeKind::Removed
            | ChangeKind::ValueChanged
            | ChangeKind::EffectiveDateChanged => Substance::Answer,
            ChangeKind::VerificationRaised
            | ChangeKind::VerificationLowered
            | ChangeKind::SourceChanged => Substance::Curation,
        }
    }
}

/// What a change changes: an answer a reader reads, or only the curation behind it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Substance {
    /// An answer changed: a fact's value (a status, a date, a scope, a support type), its effective
    /// date, a toggle, a fact added or removed.
    Answer,
    /// Only the curation behind an answer changed: its sources or its grade (verification).
    Curation,
}

impl Substance {
    pub fn name(self) -> &'static str {
        match self {
            Substance::Answer => "answer",
            Substance::Curation => "curation",
        }
    }
}

/// A number of changes in words: `1 change`, `479 changes`.
pub fn changes_counted(n: usize) -> String {
    format!("{n} change{}", if n == 1 { "" } else { "s" })
}

/// The value a change starts from or arrives at: a text (a fact's value, a field of another answer as
/// the data files carry it, a verification, a date), a toggle's boolean, a list of source URLs, or the
/// fields of an answer other than a fact that was added or removed (field -> text, or null when
/// unknown).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum ChangeValue {
    // Shared with the fact it comes from, not copied.
    Text(std::sync::Arc<str>),
    Flag(bool),
    Urls(Vec<String>),
    Fields(serde_json::Map<String, serde_json::Value>),
}

/// One change of one published answer of a country (a fact, a toggle, or another recorded answer: an
/// obligation phase, a regime, …) between two states of the data: two consecutive releases, or the last
/// release and the current sources (not released yet).
// Serialized by hand (below), so that `sentence`, said from the other fields, is never kept. (A plain
// comment: the doc comment above is the schema's description.)
#[derive(Debug, Clone, PartialEq, Eq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Change {
    /// The release that published the change; null while it is not released.
    pub release: Option<String>,
    /// When that release was made (UTC); null while the change is not released.
    #[schemars(extend("format" = "date-time"))]
    pub released_at: Option<String>,
    pub country: String,
    /// The fact that changed; null for a toggle or another answer.
    pub fact_id: Option<String>,
    /// The kind of answer that changed when it is neither a fact nor a toggle: `phase`, `regime`,
    /// `vat`, `mandate`, `reporting-support`, `local-erp`, `partner` or `partner-flag`; null otherwise.
    pub answer: Option<String>,
    /// That answer's id (a phase's `<country>-<obligation>-<phase>`, …); null for a fact or a toggle.
    pub answer_id: Option<String>,
    /// The field of that answer whose value changed (its table's column: `status`, `model`, …); null
    /// for any other change.
    pub field: Option<String>,
    /// The ERP of an ERP-specific fact; null otherwise.
    pub erp: Option<String>,
    /// The toggle that flipped; null for a fact.
    pub toggle: Option<String>,
    /// The fact's or answer's label as the data recorded it, or the toggle's name.
    pub label: String,
    pub kind: ChangeKind,
    /// `answer` when the change changes an answer (a value, a date, a toggle, a fact added or removed),
    /// `curation` when it changes only what the answer rests on (its sources, its grade).
    pub substance: Substance,
    /// The change as a sentence a reader understands, with the country's name first (`Norway: B2B
    /// e-invoicing mandate: yes (was: unknown)`).
    pub sentence: SaidSentence,
    /// Before: null for an added fact or answer, an unknown toggle or field, or a date that was not
    /// recorded.
    pub old: Option<ChangeValue>,
    /// After: null for a removed fact or answer, an unknown toggle or field, or a date no longer
    /// recorded.
    pub new: Option<ChangeValue>,
    /// The names the sentence says: the country's, and what changed (the fact's label, the toggle's
    /// label where `label` holds its name, an answer's label and field), and the values in words
    /// where the data files carry an id. Shared by a country's changes.
    #[schemars(skip)]
    pub said: Said,
}

/// The names a change's sentence says (see [`Change::said`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Said {
    pub country: Arc<str>,
    /// What changed, when it is not the change's `label` (a toggle's label; an answer's label and the
    /// field that changed).
    pub label: Option<Arc<str>>,
    /// The values before and after in a reader's words, when they are not `old` and `new` as they
    /// are (an id of the vocabulary by its label; an answer added or removed as its fields).
    pub old: Option<Arc<str>>,
    pub new: Option<Arc<str>>,
}

/// The place of `sentence` among a change's fields: the text is said when the change is serialized
/// ([`Change::sentence`]), so the field holds nothing. Described as the string it is published as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SaidSentence;

impl JsonSchema for SaidSentence {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        String::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        String::json_schema(generator)
    }
}

impl Change {
    /// The change as a sentence a reader understands (see [`sentence`]).
    pub fn sentence(&self) -> String {
        let label = self.said.label.as_deref().unwrap_or(&self.label);
        let words = |said: &Option<Arc<str>>| said.clone().map(ChangeValue::Text);
        let (said_old, said_new) = (words(&self.said.old), words(&self.said.new));
        let old = if said_old.is_some() {
            &said_old
        } else {
            &self.old
        };
        let new = if said_new.is_some() {
            &said_new
        } else {
            &self.new
        };
        sentence::sentence(&self.said.country, self.kind, label, old, new)
    }
}

impl Serialize for Change {
    /// The fields in their order, `sentence` said from the others.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = serializer.serialize_struct("Change", 15)?;
        out.serialize_field("release", &self.release)?;
        out.serialize_field("released_at", &self.released_at)?;
        out.serialize_field("country", &self.country)?;
        out.serialize_field("fact_id", &self.fact_id)?;
        out.serialize_field("answer", &self.answer)?;
        out.serialize_field("answer_id", &self.answer_id)?;
        out.serialize_field("field", &self.field)?;
        out.serialize_field("erp", &self.erp)?;
        out.serialize_field("toggle", &self.toggle)?;
        out.serialize_field("label", &self.label)?;
        out.serialize_field("kind", &self.kind)?;
        out.serialize_field("substance", &self.substance)?;
        out.serialize_field("sentence", &self.sentence())?;
        out.serialize_field("old", &self.old)?;
        out.serialize_field("new", &self.new)?;
        out.end()
    }
}

/// How many changes of each kind a release made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChangeCounts {
    pub toggle_flipped: u64,
    pub added: u64,
    pub removed: u64,
    pub value_changed: u64,
    pub verification_raised: u64,
    pub verification_lowered: u64,
    pub source_changed: u64,
    pub effective_date_changed: u64,
}

impl std::ops::AddAssign for ChangeCounts {
    fn add_assign(&mut self, other: ChangeCounts) {
        for (kind, n) in other.by_kind() {
            *self.slot(kind) += n;
        }
    }
}

impl ChangeCounts {
    /// How many of the counted changes change an answer.
    pub fn answers(&self) -> u64 {
        self.by_kind()
            .into_iter()
            .filter(|(kind, _)| kind.substance() == Substance::Answer)
            .map(|(_, n)| n)
            .sum()
    }

    /// How many of the counted changes change only the curation behind an answer.
    pub fn curation(&self) -> u64 {
        self.total() - self.answers()
    }

    pub fn of(changes: &[Change]) -> ChangeCounts {
        let mut counts = ChangeCounts::default();
        for change in changes {
            *counts.slot(change.kind) += 1;
        }
        counts
    }

    fn slot(&mut self, kind: ChangeKind) -> &mut u64 {
        match kind {
            ChangeKind::ToggleFlipped => &mut self.toggle_flipped,
            ChangeKind::Added => &mut self.added,
            ChangeKind::Removed => &mut self.removed,
            ChangeKind::ValueChanged => &mut self.value_changed,
            ChangeKind::VerificationRaised => &mut self.verification_raised,
            ChangeKind::VerificationLowered => &mut self.verification_lowered,
            ChangeKind::SourceChanged => &mut self.source_changed,
            ChangeKind::EffectiveDateChanged => &mut self.effective_date_changed,
        }
    }

    /// How many changes in all.
    pub fn total(&self) -> u64 {
        self.by_kind().iter().map(|(_, n)| n).sum()
    }

    /// The kinds with their counts, in [`ChangeKind::ALL`] order.
    pub(crate) fn by_kind(&self) -> Vec<(ChangeKind, u64)> {
        let mut copy = *self;
        ChangeKind::ALL
            .iter()
            .map(|kind| (*kind, *copy.slot(*kind)))
            .collect()
    }
}

/// A release: a frozen snapshot of the published answers (`sources/releases/<version>.index` and its
/// records).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Release {
    /// The release version (`meta.version` of the API while it is the current release).
    pub version: String,
    /// When the release was made (UTC).
    #[schemars(extend("format" = "date-time"))]
    pub released_at: String,
    /// The release before it; null for the first.
    pub previous: Option<String>,
    /// The release note as recorded (may be empty).
    pub note: String,
    /// blake3 of the snapshot, as `sources/releases/releases.csv` records it.
    pub snapshot_blake3: String,
    /// The release's link in the chain of releases, as `sources/releases/releases.csv` records it: the
    /// blake3 of the previous release's `chain_blake3` and this release's version, time, snapshot hash and
    /// note. It stands for this release and every release before it: rewriting any of them changes it.
    pub chain_blake3: String,
    /// Facts and countries in the snapshot.
    pub facts: u64,
    pub countries: u64,
    /// Changes since the previous release; null for the first release (there is nothing to compare with).
    pub change_count: Option<u64>,
    /// The changes by kind; null for the first release.
    pub change_counts: Option<ChangeCounts>,
    /// How many of the changes change an answer (a value, a date, a toggle, a fact added or removed);
    /// null for the first release.
    pub answer_change_count: Option<u64>,
    /// How many change only the curation behind an answer (its sources, its grade); null for the first
    /// release.
    pub curation_change_count: Option<u64>,
    /// Absolute URL of the release's change set (`/api/v1/releases/<version>.json` under the base URL).
    #[schemars(extend("format" = "uri"))]
    pub api_url: String,
}

/// A release with its change set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReleaseDetail {
    #[serde(flatten)]
    pub release: Release,
    /// Every change since the previous release (empty for the first release).
    pub changes: Vec<Change>,
}

/// A day the API answers "what applies on this date" for (`/api/v1/on/index.json`): the reference date,
/// each quarter's first day for three years after it, and every later day on which an answer changes.
/// The answer on any day from the reference date on is the one of the latest listed day on or before it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OnDateEntry {
    #[schemars(extend("format" = "date"))]
    pub date: String,
    /// Absolute URL of that day's answers, `<base URL>/api/v1/on/<date>.json`.
    #[schemars(extend("format" = "uri"))]
    pub api_url: String,
    /// Whether it is the reference date: the day the toggles of every other output are judged on.
    pub reference: bool,
    /// Whether it is the first day of a quarter.
    pub quarter_start: bool,
    /// Whether some country's answer (a toggle or the state of a phase) changes on this day.
    pub changes: bool,
}

/// What applies on one day (`/api/v1/on/<date>.json`): every country's toggles and the state of each of its
/// obligation phases on that day, judged by the rules that judge the toggles on the reference date.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OnDate {
    /// The day the answers are for.
    #[schemars(extend("format" = "date"))]
    pub date: String,
    /// The reference date: what this site's other outputs are judged on. Days before it are not answered
    /// (the phases record when an obligation starts, not how it stood before).
    #[schemars(extend("format" = "date"))]
    pub reference_date: String,
    /// The first day these answers hold from: the latest day, on or before `date`, on which an answer
    /// changed (the reference date when none did).
    #[schemars(extend("format" = "date"))]
    pub same_since: String,
    pub countries: Vec<CountryOnDate>,
}

/// One country's answers on one day.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CountryOnDate {
    pub code: String,
    pub name: String,
    /// The toggles on that day (null: unknown, never a guess).
    pub toggles: Toggles,
    /// Why each toggle has its value on that day, in the toggles' published order.
    pub reasons: Vec<ToggleOnDate>,
    /// Every phase of the country's obligations, in the order of the country page.
    pub phases: Vec<PhaseOnDate>,
}

/// How one toggle got its value on one day.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToggleOnDate {
    pub toggle: String,
    pub value: Option<bool>,
    /// The phase that decided it (`<country>-<obligation>-<phase>`); null when no rule set it.
    pub phase_id: Option<String>,
    /// Why the toggle is null on that day, when it is.
    pub why_null: Option<String>,
}

/// The state of one obligation phase on one day.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PhaseOnDate {
    /// `<country>-<obligation>-<phase>`, the anchor of its row on the country page.
    pub id: String,
    pub obligation: String,
    pub obligation_label: String,
    /// Who the phase covers, in words; null for the obligation's only or main phase.
    pub phase_label: Option<String>,
    /// The phase's recorded status: `in-force`, `enacted`, `enacted-date-pending`, `planned`, `none` or
    /// `unclear`.
    pub status: String,
    /// The date it applies from, as precise as its source: `YYYY-MM-DD`, `YYYY-MM` or `YYYY`.
    pub applies_from: Option<String>,
    /// On that day: `in_force`; `not_yet` (enacted, from a later day); `unknown` (a month or a year that
    /// holds the day, no date set, or unclear); `planned` (not enacted: nothing says it applies); `none`
    /// (a source says there is no such obligation).
    pub state: PhaseState,
    /// The state in words, with the date as precise as it is known (`unknown: from 2028, month not
    /// known`).
    pub words: String,
}

/// The state of a phase on a day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PhaseState {
    InForce,
    NotYet,
    Unknown,
    Planned,
    None,
}

#[cfg(test)]
mod tests {
    use super::{ChangeKind, changes_counted};

    /// The pages, the feed and `locref release` count changes in words, singular for one.
    #[test]
    fn counts_of_changes_read_as_english() {
        assert_eq!(ChangeKind::ToggleFlipped.counted(1), "1 toggle flipped");
        assert_eq!(ChangeKind::ToggleFlipped.counted(5), "5 toggles flipped");
        assert_eq!(ChangeKind::Added.counted(2), "2 answers added");
        assert_eq!(
            ChangeKind::VerificationLowered.counted(1),
            "1 verification lowered"
        );
        assert_eq!(
            ChangeKind::EffectiveDateChanged.counted(59),
            "59 effective dates changed"
        );
        assert_eq!(changes_counted(1), "1 change");
        assert_eq!(changes_counted(0), "0 changes");
        assert_eq!(changes_counted(479), "479 changes");
    }
}
