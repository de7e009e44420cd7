//! Toggles: each is set by the first rule of `rules/toggles.toml` whose pattern matches the recorded fact
//! text of the country, and stays null (unknown) when none matches.

use std::collections::BTreeMap;

use crate::model::{CountryKey, country_facts_of, reference_date};
use crate::parse::rules::{DateCondition, ToggleRule, toggle_rules};
use crate::resources::{ToggleCoverage, Toggles};

/// Why a toggle has its value: the fact whose text matched, and the matched text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToggleReason {
    pub fact_id: String,
    pub matched: String,
}

/// The toggles of a country and, for each set toggle, the fact text that set it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToggleOutcome {
    pub toggles: Toggles,
    pub reasons: BTreeMap<&'static str, ToggleReason>,
}

/// The compiled rules, compiled once per edit of `rules/toggles.toml`.
pub struct CompiledToggle {
    pub name: String,
    pub topics: Vec<String>,
    pub rules: Vec<(regex::Regex, bool, Option<DateCondition>)>,
}

/// The toggle rules, compiled once per edit of `rules/toggles.toml` (regexes are not comparable, so this
/// query is never backdated; its readers compare their own results instead).
#[salsa::tracked(returns(ref), no_eq)]
pub fn compiled_toggles(db: &dyn salsa::Database) -> Vec<CompiledToggle> {
    toggle_rules(db).value.iter().map(compile).collect()
}

fn compile(rule: &ToggleRule) -> CompiledToggle {
    CompiledToggle {
        name: rule.name.clone(),
        topics: rule.topics.clone(),
        // Invalid patterns are reported by the parser; here they simply never match.
        rules: rule
            .rules
            .iter()
            .filter_map(|m| {
                regex::Regex::new(&m.pattern)
                    .ok()
                    .map(|re| (re, m.value, m.date))
            })
            .collect(),
    }
}

/// Evaluates one toggle against `(fact id, topic, text)` triples.
pub fn evaluate(
    toggle: &CompiledToggle,
    facts: &[(String, &str, &str)],
    reference: &str,
) -> Option<(bool, ToggleReason)> {
    for (regex, value, date) in &toggle.rules {
        for (fact_id, topic, text) in facts {
            if !toggle.topics.iter().any(|t| t == topic) {
                continue;
            }
            let Some(captures) = regex.captures(text) else {
                continue;
            };
            if let Some(condition) = date {
                // ISO dates compare correctly as strings.
                let Some(date) = captures.name("date").map(|m| m.as_str()) else {
                    continue;
                };
                let fits = match condition {
                    DateCondition::OnOrBeforeReference => date <= reference,
                    DateCondition::AfterReference => date > reference,
                };
                if !fits {
                    continue;
                }
            }
            let matched = captures.get(0).map_or("", |m| m.as_str()).to_string();
            return Some((
                *value,
                ToggleReason {
                    fact_id: fact_id.clone(),
                    matched,
                },
            ));
        }
    }
    None
}

#[salsa::tracked(returns(ref))]
pub fn country_toggles<'db>(db: &'db dyn salsa::Database, key: CountryKey<'db>) -> ToggleOutcome {
    let facts: Vec<(String, &str, &str)> = country_facts_of(db, key)
        .iter()
        .map(|f| {
            (
                super::facts::key_fact_id(key.code(db), &f.label),
                f.label.topic.as_str(),
                f.row.value.as_str(),
            )
        })
        .collect();
    let reference = reference_date(db);
    let mut outcome = ToggleOutcome::default();
    for toggle in compiled_toggles(db) {
        let Some(name) = Toggles::NAMES.iter().find(|n| **n == toggle.name) else {
            continue;
        };
        if let Some((value, reason)) = evaluate(toggle, &facts, reference) {
            outcome.toggles.set(name, Some(value));
            outcome.reasons.insert(name, reason);
        }
    }
    outcome
}

/// Just the toggle values of a country: what lists and filters read, so a change of the fact text that
/// set a toggle, with the same value, stops here.
#[salsa::tracked(returns(copy))]
pub fn country_toggle_values<'db>(db: &'db dyn salsa::Database, key: CountryKey<'db>) -> Toggles {
    country_toggles(db, key).toggles
}

/// For each toggle, how many countries have it true, false and null.
#[salsa::tracked(returns(ref))]
pub fn toggle_coverage(db: &dyn salsa::Database) -> ToggleCoverage {
    let mut coverage = ToggleCoverage::default();
    for country in crate::model::countries(db) {
        let key = CountryKey::new(db, country.code.clone());
        let toggles = country_toggle_values(db, key);
        for (name, value) in toggles.values() {
            let counts = match name {
                "e_invoicing_mandatory_b2b" => &mut coverage.e_invoicing_mandatory_b2b,
                "e_invoicing_b2b_in_force" => &mut coverage.e_invoicing_b2b_in_force,
                "e_invoicing_mandatory_b2g" => &mut coverage.e_invoicing_mandatory_b2g,
                "real_time_reporting" => &mut coverage.real_time_reporting,
                "saft_required" => &mut coverage.saft_required,
                _ => &mut coverage.audit_file_on_request,
            };
            match value {
                Some(true) => counts.true_ += 1,
                Some(false) => counts.false_ += 1,
                None => counts.null += 1,
            }
        }
    }
    coverage
}
