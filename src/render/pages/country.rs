//! A country's page (`/<code>/`): its facts by section, its toggles explained, its phases, local ERPs,
//! partners and History.

use serde::Serialize;
use serde_json::Value as Json;

use super::changes::{HistoryContext, country_history_context};
use super::context::{PageSpec, page};
use super::lists::{LocalErpView, PartnerView};
use super::shared::*;
use super::topics::CellView;
use crate::api_types::{Country, Fact, FactTopic, Labelled, Regime, Verification};
use crate::derived::facts::reporting_fact_id;
use crate::derived::obligations::country_toggle_derivations;
use crate::model::{
    CountryKey, NumberedReport, country_local_erps, country_obligations, country_partners,
    country_reporting, erp_name,
};
use crate::parse::rules::obligation_rules;
use crate::parse::tables::{PartialDate, PhaseStatus};
use crate::render::api::country_detail;

/// "In force since 2026-09-01" and what the phase covers, as one sentence.
fn sentence(words: &str, scope: &str) -> String {
    let scope = scope.trim().trim_end_matches('.');
    if scope.is_empty() {
        format!("{words}.")
    } else {
        format!("{words}: {scope}.")
    }
}

/// A phase's status and date in words, judged against the reference date: "In force since 2026-09-01",
/// "Enacted; applies from 2027-09-01, after the reference date" (what pages say instead of the rule that
/// matched).
pub(super) fn phase_in_words(status: &str, from: Option<&str>, reference: &str) -> String {
    let date = from.and_then(PartialDate::parse);
    let reference: Option<jiff::civil::Date> = reference.parse().ok();
    // A month or a year holding the reference date is neither before nor after it.
    let started = match (date, reference) {
        (Some(d), Some(r)) => match (d.first_day(), d.last_day()) {
            (_, Some(last)) if last <= r => Some(true),
            (Some(first), _) if first > r => Some(false),
            _ => None,
        },
        _ => None,
    };
    let from = from.unwrap_or_default();
    match (PhaseStatus::parse(status), date.is_some(), started) {
        (Some(PhaseStatus::InForce), true, Some(false)) => format!("In force from {from}"),
        (Some(PhaseStatus::InForce), true, _) => format!("In force since {from}"),
        (Some(PhaseStatus::InForce), false, _) => "In force".into(),
        (Some(PhaseStatus::Enacted), true, Some(true)) => {
            format!("Enacted; applies since {from}")
        }
        (Some(PhaseStatus::Enacted), true, Some(false)) => {
            format!("Enacted; applies from {from}, after the reference date")
        }
        (Some(PhaseStatus::Enacted), true, None) => {
            format!("Enacted; applies from {from} (the source gives no exact day)")
        }
        (Some(PhaseStatus::Enacted), false, _) | (Some(PhaseStatus::EnactedDatePending), _, _) => {
            "Enacted, with no start date set yet".into()
        }
        (Some(PhaseStatus::Planned), true, _) => format!("Planned for {from}, not yet enacted"),
        (Some(PhaseStatus::Planned), false, _) => "Planned, not yet enacted".into(),
        (Some(PhaseStatus::None), _, _) => "No such obligation".into(),
        (Some(PhaseStatus::Unclear), _, _) | (None, _, _) => "Not clear from the source".into(),
    }
}

/// A fact as the pages show it: a reporting fact also says where its row is on its topic page.
#[derive(Serialize)]
struct FactView<'a> {
    #[serde(flatten)]
    fact: &'a Fact,
    #[serde(skip_serializing_if = "Option::is_none")]
    anchor: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    page: Option<&'static str>,
    /// A reporting fact's answered ERP cells, each with its grade, source and quote (none for the
    /// other facts).
    cells: Vec<CellView<'a>>,
}

fn fact_view(fact: &Fact) -> FactView<'_> {
    let anchor = reporting_anchor(fact);
    let page = anchor.as_ref().and(reporting_page(fact.topic));
    FactView {
        fact,
        anchor,
        page,
        cells: Vec::new(),
    }
}

/// A reporting fact as the country page shows it: with its row's answered ERP cells (`reports` are the
/// country's reporting rows, whose topic and number make the fact's id).
fn reporting_view<'a>(
    db: &dyn salsa::Database,
    fact: &'a Fact,
    reports: &'a [NumberedReport],
) -> FactView<'a> {
    let mut view = fact_view(fact);
    if let Some(report) = reports.iter().find(|r| reporting_fact_id(r) == fact.id) {
        view.cells = report
            .cells
            .iter()
            .filter(|c| c.answered())
            .map(|c| CellView::of(db, c))
            .collect();
    }
    view
}

/// A record with the name of the thing its `erp` (or `country`) names, as the page lists it.
#[derive(Serialize)]
struct WithErpName<'a, T> {
    #[serde(flatten)]
    item: &'a T,
    erp_name: String,
}

impl<'a, T> WithErpName<'a, T> {
    /// Each of `items` with the name of the ERP that `erp` reads from it.
    fn each(items: &'a [T], erp: impl Fn(&T) -> &str, name: impl Fn(&str) -> String) -> Vec<Self> {
        items
            .iter()
            .map(|item| WithErpName {
                item,
                erp_name: name(erp(item)),
            })
            .collect()
    }
}

/// One answer of a regime as pages show it: its label(s), or `None` when unknown.
#[derive(Serialize)]
struct RegimeAnswer {
    text: Option<String>,
}

/// How one obligation works, as a row of the country page's "How each obligation works".
#[derive(Serialize)]
pub(super) struct RegimeView<'a> {
    /// The row's anchor, `regime-<cc>-<obligation>`.
    anchor: String,
    obligation: &'a str,
    /// Where the obligation stands ("planned from 2028-11-01") and whether that is today's way.
    standing: &'a str,
    current: bool,
    unknown: bool,
    /// In the order of [`REGIME_FIELDS`].
    answers: Vec<RegimeAnswer>,
    notes: &'a str,
    source_urls: &'a [String],
    evidence: &'a str,
    verification: Verification,
    last_checked: &'a Option<String>,
    quote: &'a str,
}

/// One answer in the "at a glance" table: the answer, the obligations that have it on the same footing
/// (one grade, one way of reading, one check date), and the sources of their rows, each once. So a
/// country whose three obligations share a model says it once, naming the three.
#[derive(Serialize)]
pub(super) struct GlanceEntry<'a> {
    pub(super) text: String,
    /// Whether the obligations of this answer apply today (in force, or there is none); an answer of
    /// obligations still to come is listed apart, after today's.
    pub(super) current: bool,
    pub(super) obligations: Vec<GlanceObligation<'a>>,
    pub(super) source_urls: Vec<&'a String>,
    pub(super) evidence: &'a str,
    pub(super) verification: Verification,
    pub(super) last_checked: &'a Option<String>,
    /// For the model question: the sentences the answer's regimes rest on (a regime's quote settles its
    /// model), each with its first source; none for the other questions.
    pub(super) said: Vec<QuotedSource<'a>>,
}

/// A quote and the source it was read on.
#[derive(Serialize)]
pub(super) struct QuotedSource<'a> {
    pub(super) quote: &'a str,
    pub(super) source_url: &'a String,
}

/// An obligation an at-a-glance answer is of, and the anchor of its column below.
#[derive(Serialize)]
pub(super) struct GlanceObligation<'a> {
    pub(super) label: &'a str,
    pub(super) anchor: String,
    /// Where the obligation stands: "in force since 2019-01-01", "planned from 2028-11-01".
    pub(super) standing: &'a str,
}

/// One question of the "How invoices are handled" table, with the answers of every obligation that has
/// one; none: unknown, and `looked_at` says what was looked at.
#[derive(Serialize)]
pub(super) struct GlanceRow<'a> {
    pub(super) key: &'static str,
    question: &'static str,
    pub(super) entries: Vec<GlanceEntry<'a>>,
    /// Every entry's sources, each once: the cell that shows the entries together lists a page once.
    source_urls: Vec<&'a String>,
    pub(super) looked_at: String,
}

/// The questions a regime answers: the key of the at-a-glance row, and the question as pages ask it.
pub(super) const REGIME_FIELDS: [(&str, &str); 5] = [
    ("model", "E-invoicing model"),
    ("formats", "Formats"),
    ("platforms", "Platform or channel"),
    ("signature", "Signature or seal"),
    ("archiving", "Archiving"),
];

/// A regime's answers in the order of [`REGIME_FIELDS`], in words (`None`: unknown).
pub(crate) fn regime_answers(r: &Regime) -> [Option<String>; 5] {
    let labels = |values: &Option<Vec<Labelled>>| {
        values.as_ref().map(|v| {
            v.iter()
                .map(|l| l.label.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        })
    };
    let archiving = match (r.archive_years, &r.archive_location) {
        (None, None) => None,
        (Some(years), None) => Some(format!("{years} years; where: unknown")),
        (None, Some(place)) => Some(format!("{}; how long: unknown", place.label)),
        (Some(years), Some(place)) => Some(format!("{years} years; {}", place.label)),
    };
    [
        r.model.as_ref().map(|l| l.label.clone()),
        labels(&r.formats),
        labels(&r.platforms),
        r.signature.as_ref().map(|l| l.label.clone()),
        archiving,
    ]
}

/// The country's obligations in order, each with whether its only phases say there is none (what
/// [`regime_views`] takes as `obligations_recorded`).
pub(super) fn obligations_recorded(
    db: &dyn salsa::Database,
    key: CountryKey<'_>,
) -> Vec<(String, bool)> {
    let mut recorded: Vec<(String, bool)> = Vec::new();
    for p in country_obligations(db, key) {
        let none = p.status == PhaseStatus::None;
        match recorded.iter_mut().find(|(id, _)| *id == p.obligation) {
            Some((_, only_none)) => *only_none &= none,
            None => recorded.push((p.obligation.clone(), none)),
        }
    }
    recorded
}

/// The rows of "How each obligation works", the "at a glance" questions, and the obligations of the
/// country that no regime row records yet (but those whose only phase says there is none).
pub(super) fn regime_views<'a>(
    regimes: &'a [Regime],
    obligations_recorded: &[(String, bool)],
    label_of: &dyn Fn(&str) -> String,
) -> (Vec<RegimeView<'a>>, Vec<GlanceRow<'a>>, Vec<String>) {
    let rows: Vec<RegimeView> = regimes
        .iter()
        .map(|r| RegimeView {
            anchor: format!("regime-{}", r.id),
            obligation: &r.obligation_label,
            standing: &r.obligation_standing,
            current: r.current,
            unknown: r.unknown,
            answers: regime_answers(r)
                .into_iter()
                .map(|text| RegimeAnswer { text })
                .collect(),
            notes: &r.notes,
            source_urls: &r.source_urls,
            evidence: &r.evidence,
            verification: r.verification,
            last_checked: &r.last_checked,
            quote: r.quote.as_deref().unwrap_or_default(),
        })
        .collect();
    // What the rows that answer nothing say was looked at.
    let looked_at: Vec<String> = regimes
        .iter()
        .filter(|r| r.unknown && !r.notes.trim().is_empty())
        .map(|r| {
            format!(
                "{}: {}",
                r.obligation_label,
                r.notes.trim().trim_end_matches('.')
            )
        })
        .collect();
    let glance = REGIME_FIELDS
        .iter()
        .enumerate()
        .map(|(i, (key, question))| {
            let mut entries: Vec<GlanceEntry> = Vec::new();
            for r in regimes {
                let Some(text) = regime_answers(r)[i].clone() else {
                    continue;
                };
                let obligation = GlanceObligation {
                    label: &r.obligation_label,
                    anchor: format!("regime-{}", r.id),
                    standing: &r.obligation_standing,
                };
                let same = entries.iter().position(|e| {
                    e.text == text
                        && e.current == r.current
                        && e.verification == r.verification
                        && e.evidence == r.evidence
                        && *e.last_checked == r.last_checked
                });
                let entry = match same {
                    Some(at) => &mut entries[at],
                    None => {
                        entries.push(GlanceEntry {
                            text,
                            current: r.current,
                            obligations: Vec::new(),
                            source_urls: Vec::new(),
                            evidence: &r.evidence,
                            verification: r.verification,
                            last_checked: &r.last_checked,
                            said: Vec::new(),
                        });
                        entries.last_mut().expect("just pushed")
                    }
                };
                entry.obligations.push(obligation);
                if *key == "model"
                    && let (Some(quote), Some(source_url)) = (
                        r.quote.as_deref().filter(|q| !q.is_empty()),
                        r.source_urls.first(),
                    )
                    && !entry.said.iter().any(|s| s.quote == quote)
                {
                    entry.said.push(QuotedSource { quote, source_url });
                }
                for url in &r.source_urls {
                    if !entry.source_urls.contains(&url) {
                        entry.source_urls.push(url);
                    }
                }
            }
            // Today's answers first, then those still to come (a stable sort keeps the obligations' order).
            entries.sort_by_key(|e| !e.current);
            let mut source_urls: Vec<&String> = Vec::new();
            for url in entries.iter().flat_map(|e| &e.source_urls) {
                if !source_urls.contains(url) {
                    source_urls.push(url);
                }
            }
            GlanceRow {
                key,
                question,
                entries,
                source_urls,
                looked_at: if looked_at.is_empty() {
                    "No source that was read states it yet.".to_string()
                } else {
                    format!("Looked at for {}.", looked_at.join("; "))
                },
            }
        })
        .collect();
    let unrecorded = obligations_recorded
        .iter()
        .filter(|(id, only_none)| !only_none && !regimes.iter().any(|r| &r.obligation == id))
        .map(|(id, _)| label_of(id))
        .collect();
    (rows, glance, unrecorded)
}

/// One country page: its facts by section, toggles with the fact text that set them, local ERPs,
/// partner flags and partners.
#[derive(Serialize)]
pub(super) struct CountryContext<'a> {
    site: &'a SiteContext,
    country: &'a Country,
    toggles: Vec<ToggleExplained<'a>>,
    phases: Vec<PhaseView<'a>>,
    reference_date: &'a str,
    key_facts: Vec<FactView<'a>>,
    e_invoicing: Vec<FactView<'a>>,
    matrix: Vec<FactView<'a>>,
    vat_reporting: Vec<FactView<'a>>,
    saft: Vec<FactView<'a>>,
    local_erps: Vec<LocalErpView<'a>>,
    partner_flags: Vec<WithErpName<'a, crate::api_types::PartnerFlag>>,
    partners: Vec<PartnerView<'a>>,
    /// How each obligation works (tables/regimes.csv), and the same answers by question.
    regimes: Vec<RegimeView<'a>>,
    glance: Vec<GlanceRow<'a>>,
    /// The obligations (but those that do not exist) no regime row records yet, as pages name them.
    regimes_unrecorded: Vec<String>,
    /// The questions a regime answers, in the order of each regime's `answers`.
    regime_questions: Vec<&'static str>,
    /// Releases and changes (history.rs).
    history: &'a HistoryContext,
    /// The toggles' labels, the columns of the table of a chosen day (drawn by `/assets/on-date.js`).
    toggle_labels: &'a [ToggleLabel],
    /// Each later day on which this country's answer changes: what readers without scripts see.
    next_changes: Vec<NextChangeRow>,
}

/// A toggle of a country page with the rule, the phase and the sources that set it, in words.
#[derive(Serialize)]
struct ToggleExplained<'a> {
    limit: &'a Option<String>,
    absence: bool,
    evidence: &'a Option<String>,
    notes: String,
    name: &'a str,
    label: &'a str,
    description: &'a str,
    value: Option<bool>,
    rule: Option<u64>,
    condition: &'a Option<String>,
    phase_id: &'a Option<String>,
    status: Option<&'static str>,
    applies_from: &'a Option<String>,
    scope: &'a Option<String>,
    source_urls: &'a [String],
    verification: Option<Verification>,
    last_checked: &'a Option<String>,
    why_null: &'a Option<String>,
    why_status: Option<String>,
    why_scope: &'a str,
    /// The other phases of the deciding phase's obligation, so the "Why" cell tells the whole timeline
    /// (Poland's later groups, not only the first).
    other_phases: Vec<OtherPhase>,
    explanation: String,
}

/// Another phase of the obligation a toggle is decided by: its anchor and what it says in words.
#[derive(Serialize)]
struct OtherPhase {
    id: String,
    words: String,
}

/// A dated obligation phase of a country page.
#[derive(Serialize)]
struct PhaseView<'a> {
    id: String,
    obligation: &'a str,
    phase: &'a str,
    /// The phase's reader label (rules/phases.toml); none for the obligation's main phase.
    phase_label: Option<String>,
    status: &'static str,
    status_words: String,
    applies_from: Option<String>,
    scope: &'a str,
    coverage: &'static str,
    limit: &'a str,
    basis: Option<&'static str>,
    notes: &'a str,
    source_urls: &'a [String],
    evidence: &'a str,
    verification: Verification,
    last_checked: &'a Option<String>,
    quote: &'a str,
}

/// One country page's context (see [`CountryContext`]).
pub(crate) fn country_context<'db>(db: &'db dyn salsa::Database, key: CountryKey<'db>) -> Json {
    let Some(detail) = country_detail(db, key) else {
        return Json::Null;
    };
    let labels = toggle_labels(db);
    let reference = crate::model::reference_date(db);
    let phase_notes = |id: &Option<String>| {
        country_obligations(db, key)
            .iter()
            .find(|p| Some(p.id()) == *id)
            .map(|p| p.notes.trim().to_string())
            .unwrap_or_default()
    };
    let other_phases = |id: &Option<String>| -> Vec<OtherPhase> {
        let phases = country_obligations(db, key);
        let Some(decider) = phases.iter().find(|p| Some(p.id()) == *id) else {
            return Vec::new();
        };
        phases
            .iter()
            .filter(|p| p.obligation == decider.obligation && p.id() != decider.id())
            .map(|p| {
                let from = p.applies_from.map(|d| d.to_string());
                let status = phase_in_words(p.status.as_str(), from.as_deref(), reference);
                let words = match crate::derived::obligations::phase_words(
                    db,
                    &p.country,
                    &p.obligation,
                    &p.phase,
                ) {
                    Some(label) => format!("{label} ({})", lowercase_first(&status)),
                    None => status,
                };
                OtherPhase { id: p.id(), words }
            })
            .collect()
    };
    let toggles: Vec<ToggleExplained> = country_toggle_derivations(db, key)
        .iter()
        .zip(labels)
        .map(|(d, label)| ToggleExplained {
            limit: &d.limit,
            absence: d.rests_on_absence,
            evidence: &d.evidence,
            notes: phase_notes(&d.phase_id),
            name: &d.toggle,
            label: &label.label,
            description: &label.description,
            value: d.value,
            rule: d.rule,
            condition: &d.condition_text,
            phase_id: &d.phase_id,
            status: d
                .status
                .as_deref()
                .and_then(PhaseStatus::parse)
                .map(|s| s.describe()),
            applies_from: &d.applies_from,
            scope: &d.scope,
            source_urls: &d.source_urls,
            verification: d.verification,
            last_checked: &d.last_checked,
            why_null: &d.why_null,
            other_phases: other_phases(&d.phase_id),
            why_status: d
                .status
                .as_deref()
                .map(|status| phase_in_words(status, d.applies_from.as_deref(), reference)),
            why_scope: d
                .scope
                .as_deref()
                .map(|s| s.trim().trim_end_matches('.'))
                .unwrap_or_default(),
            explanation: match &d.status {
                Some(status) => sentence(
                    &phase_in_words(status, d.applies_from.as_deref(), reference),
                    d.scope.as_deref().unwrap_or_default(),
                ),
                None => d.why_null.clone().unwrap_or_default(),
            },
        })
        .collect();
    let obligations = obligation_rules(db);
    let phases: Vec<PhaseView> = country_obligations(db, key)
        .iter()
        .map(|p| {
            let label = obligations
                .iter()
                .find(|o| o.id == p.obligation)
                .map_or(p.obligation.as_str(), |o| o.label.as_str());
            let applies_from = p.applies_from.map(|d| d.to_string());
            PhaseView {
                id: p.id(),
                obligation: label,
                phase: &p.phase,
                phase_label: crate::derived::obligations::phase_words(
                    db,
                    &p.country,
                    &p.obligation,
                    &p.phase,
                ),
                status: p.status.describe(),
                status_words: phase_in_words(p.status.as_str(), applies_from.as_deref(), reference),
                applies_from,
                scope: &p.scope,
                coverage: p.coverage.as_str(),
                limit: &p.limit,
                basis: p.basis.map(|b| b.as_str()),
                notes: &p.notes,
                source_urls: &p.source,
                evidence: &p.evidence,
                verification: p.verification,
                last_checked: &p.last_verified,
                quote: &p.quote,
            }
        })
        .collect();
    let of = |pred: &dyn Fn(FactTopic) -> bool| -> Vec<FactView> {
        detail
            .facts
            .iter()
            .filter(|f| pred(f.topic))
            .map(fact_view)
            .collect()
    };
    let reports = country_reporting(db, key);
    let reporting = |topic: FactTopic| -> Vec<FactView> {
        detail
            .facts
            .iter()
            .filter(|f| f.topic == topic)
            .map(|f| reporting_view(db, f, reports))
            .collect()
    };
    let with_erp_name = |erp: &str| erp_name(db, erp);
    let recorded = obligations_recorded(db, key);
    let label_of = |id: &str| {
        obligations
            .iter()
            .find(|o| o.id == id)
            .map_or_else(|| id.to_string(), |o| o.label.clone())
    };
    let (regimes, glance, regimes_unrecorded) = regime_views(
        crate::derived::regimes::country_regime_records(db, key),
        &recorded,
        &label_of,
    );
    to_json(&CountryContext {
        regimes,
        glance,
        regimes_unrecorded,
        regime_questions: REGIME_FIELDS.iter().map(|(_, q)| *q).collect(),
        site: site_context(db),
        country: &detail.country,
        toggles,
        phases,
        reference_date: reference,
        toggle_labels: toggle_labels(db),
        next_changes: next_change_rows(crate::derived::on_date::country_next_changes(db, key)),
        key_facts: of(&|t| {
            !matches!(
                t,
                FactTopic::EInvoicing
                    | FactTopic::EInvoicingErpSupport
                    | FactTopic::VatReporting
                    | FactTopic::Saft
            )
        }),
        e_invoicing: of(&|t| t == FactTopic::EInvoicing),
        matrix: of(&|t| t == FactTopic::EInvoicingErpSupport),
        vat_reporting: reporting(FactTopic::VatReporting),
        saft: reporting(FactTopic::Saft),
        local_erps: country_local_erps(db, key)
            .iter()
            .map(|row| LocalErpView::of(db, row, None))
            .collect(),
        partner_flags: WithErpName::each(&detail.partner_flags, |p| &p.erp, with_erp_name),
        partners: country_partners(db, key)
            .iter()
            .map(|row| PartnerView::of(db, row, None))
            .collect(),
        history: country_history_context(db, key),
    })
}

/// How a country's page is made: its key is the country's code.
pub(super) fn spec() -> PageSpec {
    page("country", |db, code| {
        country_context(db, CountryKey::new(db, code.to_string()))
    })
}

/// `text` with its first letter in lower case ("In force since …" inside a sentence).
fn lowercase_first(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_lowercase().chain(chars).collect()
    })
}
