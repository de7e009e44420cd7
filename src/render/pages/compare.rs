//! The comparison page (`/compare/`): every country in one table (its e-invoicing model, formats,
//! platforms, signature, archiving, next dated phase and how many ERPs support it), and, for the two to
//! four countries a reader picks (`?c=it,pl`), the same answers side by side with each obligation's
//! phases and every ERP's support. The page carries the table and the side-by-side view's rows; each
//! country's column of that view is its own small file, `/compare/{code}.json` ([`compare_column`]),
//! which the page's script (`/assets/compare.js`) fetches for the chosen countries only: the page does
//! not grow with the columns of every country.

use serde::Serialize;
use serde_json::Value as Json;

use super::context::{PageSpec, page};
use super::country::{GlanceRow, REGIME_FIELDS, phase_in_words, regime_views};
use super::shared::*;
use crate::api_types::Verification;
use crate::derived::established;
use crate::derived::obligations::country_calendar;
use crate::derived::regimes::country_regime_records;
use crate::model::{CountryKey, countries_by_name, country_matrix, country_obligations, erps};
use crate::parse::rules::obligation_rules;
use crate::parse::tables::PhaseStatus;
use crate::render::text::{NamedSource, named_source_list};

/// The comparison page: the questions, obligations and ERPs its rows name, and every country's answers.
#[derive(Serialize)]
pub(crate) struct CompareContext<'a> {
    site: &'a SiteContext,
    reference_date: &'a str,
    /// The questions a regime answers ("E-invoicing model", …), in the order of each country's `glance`.
    questions: Vec<&'static str>,
    /// The keys of `questions` (`model`, …), as the rows of `/compare/{code}.json` name them.
    question_keys: Vec<&'static str>,
    obligations: Vec<CompareObligation<'a>>,
    erps: Vec<CompareErp<'a>>,
    countries: Vec<CompareCountry<'a>>,
    /// The fewest and the most countries the side-by-side view shows.
    min: usize,
    max: usize,
    /// The toggles' labels, the columns of the table of a chosen day (drawn by `/assets/on-date.js`).
    toggles: &'a [ToggleLabel],
    /// Every later day on which an answer changes: the table readers without scripts see.
    next_changes: Vec<NextChangeRow>,
}

/// An obligation, as a row of the side-by-side view names it.
#[derive(Serialize)]
struct CompareObligation<'a> {
    id: &'a str,
    label: &'a str,
}

/// An ERP, as a row of the side-by-side view names it.
#[derive(Serialize)]
struct CompareErp<'a> {
    id: &'a str,
    name: &'a str,
}

/// One country: its row of the table.
#[derive(Serialize)]
struct CompareCountry<'a> {
    code: &'a str,
    name: &'a str,
    region: &'a str,
    /// The other names the chooser's filter finds it by (its code in capitals, the aliases register's).
    aliases: Vec<String>,
    /// The country page's "How invoices are handled": one row per question, in the order of `questions`.
    glance: Vec<GlanceRow<'a>>,
    /// The first dated phase that starts after the reference date (or in a month or year holding it).
    next: Option<NextPhase>,
    /// How many ERPs have established support (native, native with an access point, an add-on or a
    /// provider; a roadmap is not).
    established: usize,
}

/// The next dated phase of a country, as the table shows it (the phase's row on the country page is
/// `#<id>`).
#[derive(Serialize)]
struct NextPhase {
    id: String,
    obligation: String,
    date: String,
    status: &'static str,
    verification: Verification,
    source_urls: Vec<String>,
    last_checked: Option<String>,
}

/// An ERP's support in a country (a missing row of the matrix is unknown).
struct SupportCell<'a> {
    erp: &'a str,
    support: &'a str,
    class: &'static str,
    known: bool,
    source_urls: &'a [String],
    evidence: &'a str,
    verification: Verification,
    last_checked: &'a Option<String>,
    quote: &'a str,
}

/// `/compare/{code}.json`: one country's column of the side-by-side view, as the page's script shows it:
/// each cell already in words and links, keyed by its row (an obligation's id, a question's key, an ERP's
/// id) so that columns fetched one by one line up with the page's rows.
#[derive(Serialize)]
struct CompareColumn<'a> {
    code: &'a str,
    name: &'a str,
    /// The country page.
    href: String,
    /// Per obligation of the rules, in order: the country's phases of it (none: unknown).
    obligations: Vec<ObligationCell<'a>>,
    /// Per question of "How invoices are handled", in order: the answers (none: unknown).
    questions: Vec<QuestionCell>,
    /// Per ERP, in order: its support here.
    erps: Vec<ErpCell<'a>>,
}

/// A country's phases of one obligation.
#[derive(Serialize)]
struct ObligationCell<'a> {
    key: &'a str,
    phases: Vec<PhaseCell<'a>>,
}

/// A phase in words: its name (none for the obligation's main phase), its status and date judged
/// against the reference date, linking its row on the country page.
#[derive(Serialize)]
struct PhaseCell<'a> {
    /// The phase's reader label (rules/phases.toml); none for the obligation's main phase.
    phase: Option<String>,
    words: String,
    href: String,
    /// What the phase is limited to ("" when it is not).
    limit: &'a str,
    /// Whether its "no" rests on an absence check.
    absence: bool,
    grade: Grade,
    sources: Vec<NamedSource>,
    /// The sentence of its first source that settles it, where one was read.
    said: Option<Said>,
}

/// The sentence an answer rests on, and its source: what pages show as "The source says: …".
#[derive(Serialize)]
struct Said {
    quote: String,
    source: Option<NamedSource>,
}

impl Said {
    /// `quote` with the first of `urls`, none for an empty quote.
    fn of(quote: &str, urls: &[impl AsRef<str>]) -> Option<Said> {
        (!quote.is_empty()).then(|| Said {
            quote: quote.to_string(),
            source: named_source_list(&urls[..urls.len().min(1)]).pop(),
        })
    }
}

/// A country's answers to one question; none: unknown, `looked_at` saying what was looked at.
#[derive(Serialize)]
struct QuestionCell {
    key: &'static str,
    answers: Vec<AnswerCell>,
    looked_at: String,
    /// The obligations no regime row records yet, said once, in the first question's cell.
    note: Option<String>,
}

/// An answer, the obligations it is of (each linking its row on the country page), its grade and
/// sources.
#[derive(Serialize)]
struct AnswerCell {
    text: String,
    /// Whether its obligations apply today; an answer still to come says so.
    current: bool,
    obligations: Vec<Link>,
    grade: Grade,
    sources: Vec<NamedSource>,
    /// The sentences its regimes rest on (a regime's quote settles its model), each with its source.
    said: Vec<Said>,
}

/// A link: its text and its address from the site's root.
#[derive(Serialize)]
struct Link {
    text: String,
    href: String,
}

/// An ERP's support in the country, linking the ERP page's row of it; the grade and sources of a known
/// one.
#[derive(Serialize)]
struct ErpCell<'a> {
    key: &'a str,
    support: &'a str,
    /// The style of the support (`s-native`, …), as the page's other tables colour it.
    class: &'static str,
    href: String,
    grade: Option<Grade>,
    sources: Vec<NamedSource>,
    said: Option<Said>,
}

/// A grade as pages say it (the `grade` macro of `macros.html`): the standing of the source, how it
/// was read, when it was checked.
#[derive(Serialize)]
struct Grade {
    /// `verified` or `unverified`.
    class: &'static str,
    /// `verified (official)`, `verified (secondary)` or `unverified`.
    text: String,
    /// How the source was read, in words (`page read`, `search excerpt or stored copy read`); none when unverified.
    evidence: Option<&'static str>,
    checked: Option<String>,
}

impl Grade {
    fn new(verification: Verification, evidence: &str, checked: &Option<String>) -> Grade {
        let verified = verification != Verification::Unverified;
        Grade {
            class: if verified { "verified" } else { "unverified" },
            text: if verified {
                format!("verified ({})", verification.as_str())
            } else {
                "unverified".to_string()
            },
            evidence: match evidence {
                "" | "unverified" => None,
                "fetched" => Some("page read"),
                "search-extract" => Some("search excerpt or stored copy read"),
                _ => Some("no source read"),
            },
            checked: checked.clone(),
        }
    }
}

/// How an obligation's id reads on the pages: its label in the rules, or the id itself.
fn label_of(rules: &[crate::parse::rules::ObligationRule], id: &str) -> String {
    rules
        .iter()
        .find(|o| o.id == id)
        .map_or_else(|| id.to_string(), |o| o.label.clone())
}

/// A country's "How invoices are handled" rows and the obligations no regime row records yet.
fn country_glance<'db>(
    db: &'db dyn salsa::Database,
    key: CountryKey<'db>,
    rules: &[crate::parse::rules::ObligationRule],
) -> (Vec<GlanceRow<'db>>, Vec<String>) {
    let recorded = super::country::obligations_recorded(db, key);
    let (_, glance, unrecorded) =
        regime_views(country_regime_records(db, key), &recorded, &|id: &str| {
            label_of(rules, id)
        });
    (glance, unrecorded)
}

/// Every ERP's support in a country, in the order of the ERPs.
fn support_cells<'db>(db: &'db dyn salsa::Database, key: CountryKey<'db>) -> Vec<SupportCell<'db>> {
    let matrix = country_matrix(db, key);
    erps(db)
        .iter()
        .map(|e| {
            let row = matrix.iter().find(|r| r.erp == e.id);
            let support = row.map_or("unknown/unverified", |r| r.support_type.as_str());
            let (_, class) = support_style(support);
            SupportCell {
                erp: &e.id,
                support,
                class,
                known: support != "unknown/unverified",
                source_urls: row.map_or(&[], |r| r.erp_source.as_slice()),
                evidence: row.map_or("unverified", |r| r.evidence.as_str()),
                verification: row.map_or(Verification::Unverified, |r| r.verification),
                last_checked: row.map_or(&None, |r| &r.last_verified),
                quote: row.map_or("", |r| r.quote.as_str()),
            }
        })
        .collect()
}

/// `/compare/{code}.json` (see [`CompareColumn`]).
pub(crate) fn compare_column(db: &dyn salsa::Database, code: &str) -> crate::output::Rendered {
    let reference = crate::model::reference_date(db);
    let rules = obligation_rules(db);
    let key = CountryKey::new(db, code.to_string());
    let name = crate::model::country_info(db, key)
        .as_ref()
        .map_or_else(|| code.to_string(), |c| c.name.clone());
    let (glance, unrecorded) = country_glance(db, key, rules);
    let phases_of = country_obligations(db, key);
    let obligations = rules
        .iter()
        .map(|o| ObligationCell {
            key: &o.id,
            phases: phases_of
                .iter()
                .filter(|p| p.obligation == o.id)
                .map(|p| {
                    let from = p.applies_from.map(|d| d.to_string());
                    PhaseCell {
                        phase: crate::derived::obligations::phase_words(
                            db,
                            code,
                            &p.obligation,
                            &p.phase,
                        ),
                        words: phase_in_words(p.status.as_str(), from.as_deref(), reference),
                        href: format!("/{code}/#{}", p.id()),
                        limit: &p.limit,
                        absence: p.basis.is_some_and(|b| b.as_str() == "absence"),
                        grade: Grade::new(p.verification, &p.evidence, &p.last_verified),
                        sources: named_source_list(&p.source),
                        said: Said::of(&p.quote, &p.source),
                    }
                })
                .collect(),
        })
        .collect();
    let questions = glance
        .into_iter()
        .enumerate()
        .map(|(i, g)| QuestionCell {
            key: g.key,
            answers: g
                .entries
                .into_iter()
                .map(|e| AnswerCell {
                    text: e.text,
                    current: e.current,
                    obligations: e
                        .obligations
                        .into_iter()
                        .map(|o| Link {
                            text: format!("{}: {}", o.label, o.standing),
                            href: format!("/{code}/#{}", o.anchor),
                        })
                        .collect(),
                    grade: Grade::new(e.verification, e.evidence, e.last_checked),
                    sources: named_source_list(&e.source_urls),
                    said: e
                        .said
                        .iter()
                        .filter_map(|q| Said::of(q.quote, std::slice::from_ref(q.source_url)))
                        .collect(),
                })
                .collect(),
            looked_at: g.looked_at,
            note: (i == 0 && !unrecorded.is_empty())
                .then(|| format!("Not recorded yet (unknown): {}.", unrecorded.join(", "))),
        })
        .collect();
    let erps = support_cells(db, key)
        .into_iter()
        .map(|s| ErpCell {
            key: s.erp,
            support: s.support,
            class: s.class,
            href: format!("/erp/{}/#{code}", s.erp),
            grade: s
                .known
                .then(|| Grade::new(s.verification, s.evidence, s.last_checked)),
            sources: if s.known {
                named_source_list(s.source_urls)
            } else {
                Vec::new()
            },
            said: if s.known {
                Said::of(s.quote, s.source_urls)
            } else {
                None
            },
        })
        .collect();
    crate::output::Rendered::new(crate::render::envelope::json_bytes(&CompareColumn {
        code,
        name: &name,
        href: format!("/{code}/"),
        obligations,
        questions,
        erps,
    }))
}

/// The comparison page's context (see [`CompareContext`]).
pub(crate) fn compare_context(db: &dyn salsa::Database) -> Json {
    let reference = crate::model::reference_date(db);
    let rules = obligation_rules(db);
    let erp_list = erps(db);
    let countries: Vec<CompareCountry> = countries_by_name(db)
        .iter()
        .map(|c| {
            let key = CountryKey::new(db, c.code.clone());
            let (glance, _) = country_glance(db, key, rules);
            let next = country_calendar(db, key)
                .iter()
                .find(|e| e.when != "past")
                .map(|e| NextPhase {
                    id: e.id.clone(),
                    obligation: e.obligation_label.clone(),
                    date: e.date.clone(),
                    status: PhaseStatus::parse(&e.status).map_or("unclear", |s| s.describe()),
                    verification: e.verification,
                    source_urls: e.source_urls.clone(),
                    last_checked: e.last_checked.clone(),
                });
            CompareCountry {
                code: &c.code,
                name: &c.name,
                region: &c.region,
                aliases: crate::render::search::country_aliases(db, &c.code),
                glance,
                next,
                established: support_cells(db, key)
                    .iter()
                    .filter(|s| established(s.support, s.verification))
                    .count(),
            }
        })
        .collect();
    to_json(&CompareContext {
        site: site_context(db),
        reference_date: reference,
        questions: REGIME_FIELDS.iter().map(|(_, q)| *q).collect(),
        question_keys: REGIME_FIELDS.iter().map(|(k, _)| *k).collect(),
        obligations: rules
            .iter()
            .map(|o| CompareObligation {
                id: &o.id,
                label: &o.label,
            })
            .collect(),
        erps: erp_list
            .iter()
            .map(|e| CompareErp {
                id: &e.id,
                name: &e.name,
            })
            .collect(),
        countries,
        min: 2,
        max: 4,
        toggles: toggle_labels(db),
        next_changes: next_change_rows(crate::derived::on_date::next_changes(db)),
    })
}

/// How the comparison page is made.
pub(super) fn spec() -> PageSpec {
    page("compare", |db, _| compare_context(db))
}
