//! The changes of one country between two recorded states: its toggles, then its facts by id, each fact's
//! changes in [`ChangeKind`] order, then its other answers by kind and id, each answer's changes field
//! by field. Only what the two states hold is compared: a change is never inferred, a toggle one of the
//! states did not record is not compared, and neither is a kind of answer one of them does not carry
//! (a record made before that kind was recorded), nor a field one of them does not have.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::snapshot::{CountryState, SnapshotFact};
use crate::api_types::{Change, ChangeKind, ChangeValue, Said, SaidSentence, Verification};
use crate::derived::answers::{Answer, AnswerKind, Field, Shown};
use crate::parse::tables::PhaseStatus;

/// The labels of the vocabulary's labelled sets: (set, id) -> label.
pub(crate) type Labels = BTreeMap<(String, String), String>;

/// The names a change's sentence says: the country's, each toggle's label (name, label), and the labels
/// an answer's value is said by.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Names<'a> {
    pub country: &'a str,
    pub toggles: &'a [(String, String)],
    pub labels: &'a Labels,
}

impl Names<'_> {
    fn toggle<'t>(&'t self, name: &'t str) -> &'t str {
        self.toggles
            .iter()
            .find(|(n, _)| n == name)
            .map_or(name, |(_, label)| label.as_str())
    }

    fn label(&self, set: &str, id: &str) -> String {
        self.labels
            .get(&(set.to_string(), id.to_string()))
            .cloned()
            .unwrap_or_else(|| id.to_string())
    }

    /// A field's recorded value as a reader reads it: a status or a vocabulary id by its words.
    pub(crate) fn said(&self, field: &Field, value: &str) -> String {
        match field.shown {
            Shown::AsIs => value.to_string(),
            Shown::Label(set) => self.label(set, value),
            Shown::Labels(set) => value
                .split(' ')
                .filter(|id| !id.is_empty())
                .map(|id| self.label(set, id))
                .collect::<Vec<_>>()
                .join(", "),
            Shown::Status => {
                PhaseStatus::parse(value).map_or_else(|| value.to_string(), |s| s.describe().into())
            }
            Shown::Basis => match value {
                "stated" => "stated by a source".into(),
                "absence" => "an absence check".into(),
                other => other.into(),
            },
        }
    }

    /// An answer's fields in words (`status: in force; applies from: 2027-01-01`), the unknown left out:
    /// what a sentence quotes of an answer added or removed.
    fn summary(&self, answer: &Answer) -> String {
        answer
            .fields
            .iter()
            .filter_map(|(name, value)| {
                let value = value.as_deref()?;
                let field = answer.kind.field(name)?;
                let said = self.said(field, value);
                Some(if field.words.is_empty() {
                    said
                } else {
                    format!("{}: {said}", field.words)
                })
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// Where the later state was published: a release (version, time), or nowhere yet.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Published<'a> {
    pub release: Option<&'a str>,
    pub released_at: Option<&'a str>,
}

impl Published<'_> {
    pub(crate) const UNRELEASED: Published<'static> = Published {
        release: None,
        released_at: None,
    };
}

fn rank(verification: Verification) -> u8 {
    match verification {
        Verification::Unverified => 0,
        Verification::Secondary => 1,
        Verification::Official => 2,
    }
}

fn text(value: &str) -> Option<ChangeValue> {
    Some(ChangeValue::Text(value.into()))
}

/// A fact's value, shared rather than copied.
fn value(value: &std::sync::Arc<str>) -> Option<ChangeValue> {
    Some(ChangeValue::Text(value.clone()))
}

fn date(value: &Option<String>) -> Option<ChangeValue> {
    value.as_deref().and_then(text)
}

/// The changes of country `code` from `old` to `new` (either may be absent: a country that one of the
/// states does not have; its facts are added or removed, its toggles not compared).
pub(crate) fn diff_country(
    code: &str,
    names: &Names<'_>,
    old: Option<&CountryState>,
    new: Option<&CountryState>,
    published: Published<'_>,
) -> Vec<Change> {
    let country: std::sync::Arc<str> = names.country.into();
    let change = |fact: Option<&SnapshotFact>,
                  toggle: Option<&str>,
                  kind: ChangeKind,
                  old: Option<ChangeValue>,
                  new: Option<ChangeValue>| Change {
        sentence: SaidSentence,
        said: Said {
            country: country.clone(),
            label: toggle.map(|name| names.toggle(name).into()),
            old: None,
            new: None,
        },
        substance: kind.substance(),
        release: published.release.map(str::to_string),
        released_at: published.released_at.map(str::to_string),
        country: code.to_string(),
        fact_id: fact.map(|f| f.id.clone()),
        answer: None,
        answer_id: None,
        field: None,
        erp: fact.and_then(|f| f.erp.clone()),
        toggle: toggle.map(str::to_string),
        label: fact.map_or_else(
            || toggle.unwrap_or_default().to_string(),
            |f| f.label.clone(),
        ),
        kind,
        old,
        new,
    };
    let mut changes = Vec::new();
    if let (Some(old), Some(new)) = (old, new) {
        for (name, after) in &new.toggles {
            if let Some(before) = old.toggle(name)
                && before != *after
            {
                changes.push(change(
                    None,
                    Some(name),
                    ChangeKind::ToggleFlipped,
                    before.map(ChangeValue::Flag),
                    after.map(ChangeValue::Flag),
                ));
            }
        }
    }
    let (before, after) = (by_id(old), by_id(new));
    let ids: std::collections::BTreeSet<&str> =
        before.keys().chain(after.keys()).copied().collect();
    for id in ids {
        match (before.get(id), after.get(id)) {
            (None, Some(f)) => changes.push(change(
                Some(f),
                None,
                ChangeKind::Added,
                None,
                value(&f.value),
            )),
            (Some(f), None) => changes.push(change(
                Some(f),
                None,
                ChangeKind::Removed,
                value(&f.value),
                None,
            )),
            (Some(a), Some(b)) => {
                if a.value != b.value {
                    changes.push(change(
                        Some(b),
                        None,
                        ChangeKind::ValueChanged,
                        value(&a.value),
                        value(&b.value),
                    ));
                }
                if a.verification != b.verification {
                    let kind = if rank(b.verification) > rank(a.verification) {
                        ChangeKind::VerificationRaised
                    } else {
                        ChangeKind::VerificationLowered
                    };
                    changes.push(change(
                        Some(b),
                        None,
                        kind,
                        text(a.verification.as_str()),
                        text(b.verification.as_str()),
                    ));
                }
                if a.source_urls != b.source_urls {
                    changes.push(change(
                        Some(b),
                        None,
                        ChangeKind::SourceChanged,
                        Some(ChangeValue::Urls(a.source_urls.clone())),
                        Some(ChangeValue::Urls(b.source_urls.clone())),
                    ));
                }
                if a.effective_date != b.effective_date {
                    changes.push(change(
                        Some(b),
                        None,
                        ChangeKind::EffectiveDateChanged,
                        date(&a.effective_date),
                        date(&b.effective_date),
                    ));
                }
            }
            (None, None) => {}
        }
    }
    diff_answers(code, names, &country, old, new, published, &mut changes);
    changes
}

/// The changes of the answers other than facts, of the kinds both states carry (or the one state that
/// has the country, when the other does not), by kind and id.
fn diff_answers(
    code: &str,
    names: &Names<'_>,
    country: &Arc<str>,
    old: Option<&CountryState>,
    new: Option<&CountryState>,
    published: Published<'_>,
    changes: &mut Vec<Change>,
) {
    let compared = |kind: AnswerKind| match (old, new) {
        (Some(a), Some(b)) => a.carries(kind) && b.carries(kind),
        (Some(a), None) => a.carries(kind),
        (None, Some(b)) => b.carries(kind),
        (None, None) => false,
    };
    fn by_key(
        state: Option<&CountryState>,
        compared: impl Fn(AnswerKind) -> bool,
    ) -> BTreeMap<(AnswerKind, &str), &Answer> {
        state
            .map(|s| {
                s.answers
                    .iter()
                    .filter(|a| compared(a.kind))
                    .map(|a| ((a.kind, a.id.as_str()), a))
                    .collect()
            })
            .unwrap_or_default()
    }
    let (before, after) = (by_key(old, compared), by_key(new, compared));
    let keys: std::collections::BTreeSet<(AnswerKind, &str)> =
        before.keys().chain(after.keys()).copied().collect();
    let change = |answer: &Answer,
                  field: Option<&Field>,
                  kind: ChangeKind,
                  old: (Option<ChangeValue>, Option<String>),
                  new: (Option<ChangeValue>, Option<String>)| Change {
        sentence: SaidSentence,
        said: Said {
            country: country.clone(),
            label: field.map(|f| {
                if f.words.is_empty() {
                    answer.label.as_str().into()
                } else {
                    format!("{}: {}", answer.label, f.words).into()
                }
            }),
            old: old.1.map(Into::into),
            new: new.1.map(Into::into),
        },
        substance: kind.substance(),
        release: published.release.map(str::to_string),
        released_at: published.released_at.map(str::to_string),
        country: code.to_string(),
        fact_id: None,
        answer: Some(answer.kind.name().to_string()),
        answer_id: Some(answer.id.clone()),
        field: field.map(|f| f.name.to_string()),
        erp: answer.erp.clone(),
        toggle: None,
        label: answer.label.clone(),
        kind,
        old: old.0,
        new: new.0,
    };
    let fields = |answer: &Answer| {
        Some(ChangeValue::Fields(
            answer
                .fields
                .iter()
                .map(|(name, value)| {
                    (
                        name.to_string(),
                        value
                            .clone()
                            .map_or(serde_json::Value::Null, serde_json::Value::String),
                    )
                })
                .collect(),
        ))
    };
    for key in keys {
        match (before.get(&key), after.get(&key)) {
            (None, Some(a)) => changes.push(change(
                a,
                None,
                ChangeKind::Added,
                (None, None),
                (fields(a), Some(names.summary(a))),
            )),
            (Some(a), None) => changes.push(change(
                a,
                None,
                ChangeKind::Removed,
                (fields(a), Some(names.summary(a))),
                (None, None),
            )),
            (Some(a), Some(b)) => {
                for (name, value) in &b.fields {
                    // A field the earlier record did not have is not compared.
                    let Some((_, was)) = a.fields.iter().find(|(n, _)| n == name) else {
                        continue;
                    };
                    let Some(field) = b.kind.field(name) else {
                        continue;
                    };
                    if was == value {
                        continue;
                    }
                    let said = |v: &Option<String>| v.as_deref().map(|v| names.said(field, v));
                    let text =
                        |v: &Option<String>| v.as_deref().map(|v| ChangeValue::Text(v.into()));
                    changes.push(change(
                        b,
                        Some(field),
                        ChangeKind::ValueChanged,
                        (text(was), said(was)),
                        (text(value), said(value)),
                    ));
                }
                if let (Some(x), Some(y)) = (a.verification, b.verification)
                    && x != y
                {
                    let kind = if rank(y) > rank(x) {
                        ChangeKind::VerificationRaised
                    } else {
                        ChangeKind::VerificationLowered
                    };
                    changes.push(change(
                        b,
                        None,
                        kind,
                        (text(x.as_str()), None),
                        (text(y.as_str()), None),
                    ));
                }
                if a.source_urls != b.source_urls {
                    changes.push(change(
                        b,
                        None,
                        ChangeKind::SourceChanged,
                        (Some(ChangeValue::Urls(a.source_urls.clone())), None),
                        (Some(ChangeValue::Urls(b.source_urls.clone())), None),
                    ));
                }
            }
            (None, None) => {}
        }
    }
}

fn by_id(state: Option<&CountryState>) -> BTreeMap<&str, &SnapshotFact> {
    state
        .map(|s| s.facts.iter().map(|f| (f.id.as_str(), f)).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api_types::sentence::{changed_sentences, sentences};

    fn fact(id: &str, value: &str, verification: Verification) -> SnapshotFact {
        SnapshotFact {
            id: id.into(),
            erp: None,
            label: format!("label of {id}"),
            value: value.into(),
            verification,
            source_urls: vec!["https://example.org/".into()],
            last_checked: None,
            effective_date: None,
        }
    }

    #[test]
    fn a_value_change_says_the_sentences_that_changed() {
        let (gone, came) = changed_sentences(
            "B2B: planned. B2G: mandatory, in force.",
            "B2B: mandatory from 2027-01-01. B2G: mandatory, in force.",
        );
        assert_eq!(gone, ["B2B: planned."]);
        assert_eq!(came, ["B2B: mandatory from 2027-01-01."]);
        let (gone, came) = changed_sentences("One. Two", "One. Two. Three.");
        assert_eq!((gone, came), (vec!["Two"], vec!["Two.", "Three."]));
        assert_eq!(sentences("A. B; c. "), ["A.", "B; c."]);
        assert_eq!(
            sentences("Decisions Nos. 243 and 244. B2G: none."),
            ["Decisions Nos. 243 and 244.", "B2G: none."]
        );
    }

    #[test]
    fn every_kind_of_change_and_nothing_else() {
        let old = CountryState {
            toggles: vec![
                ("a".into(), Some(false)),
                ("b".into(), None),
                ("gone".into(), Some(true)),
            ],
            facts: vec![
                fact("it-1", "one", Verification::Unverified),
                fact("it-2", "two", Verification::Official),
                fact("it-3", "three", Verification::Secondary),
            ],
            ..CountryState::default()
        };
        let mut new = old.clone();
        new.toggles = vec![
            ("a".into(), Some(true)),
            ("b".into(), None),
            ("new".into(), Some(true)),
        ];
        new.facts[0].value = "uno".into();
        new.facts[0].verification = Verification::Secondary;
        new.facts[0].last_checked = Some("2026-11-01".into());
        new.facts[1].verification = Verification::Unverified;
        new.facts[1].source_urls.clear();
        new.facts[1].effective_date = Some("2027-01-01".into());
        new.facts.remove(2);
        new.facts
            .push(fact("it-4", "four", Verification::Unverified));
        let published = Published {
            release: Some("2"),
            released_at: Some("2026-11-23T00:00:00Z"),
        };
        let toggles = [("a".to_string(), "Toggle A".to_string())];
        let labels = Labels::new();
        let names = Names {
            country: "Italy",
            toggles: &toggles,
            labels: &labels,
        };
        let changes = diff_country("it", &names, Some(&old), Some(&new), published);
        let summary: Vec<(Option<&str>, Option<&str>, &str)> = changes
            .iter()
            .map(|c| (c.fact_id.as_deref(), c.toggle.as_deref(), c.kind.name()))
            .collect();
        // A toggle one state does not record is not compared; a re-check date alone is no change.
        assert_eq!(
            summary,
            [
                (None, Some("a"), "toggle_flipped"),
                (Some("it-1"), None, "value_changed"),
                (Some("it-1"), None, "verification_raised"),
                (Some("it-2"), None, "verification_lowered"),
                (Some("it-2"), None, "source_changed"),
                (Some("it-2"), None, "effective_date_changed"),
                (Some("it-3"), None, "removed"),
                (Some("it-4"), None, "added"),
            ]
        );
        assert_eq!(changes[0].old, Some(ChangeValue::Flag(false)));
        assert_eq!(changes[5].old, None);
        assert_eq!(changes[5].new, Some(ChangeValue::Text("2027-01-01".into())));
        assert!(changes.iter().all(|c| c.release.as_deref() == Some("2")));
        let sentences: Vec<String> = changes.iter().map(Change::sentence).collect();
        assert_eq!(
            sentences,
            [
                "Italy: Toggle A: yes (was: no)",
                "Italy: label of it-1: now “uno” (was: “one”)",
                "Italy: label of it-1: grade raised from unverified to secondary",
                "Italy: label of it-2: grade lowered from official to unverified",
                "Italy: label of it-2: sources changed (no source now, was 1 source)",
                "Italy: label of it-2: effective from 2027-01-01 (was: not recorded)",
                "Italy: label of it-3 removed (was: “three”)",
                "Italy: label of it-4 added: “four”",
            ]
        );
        let substances: Vec<&str> = changes.iter().map(|c| c.substance.name()).collect();
        assert_eq!(
            substances,
            [
                "answer", "answer", "curation", "curation", "curation", "answer", "answer",
                "answer"
            ]
        );
        assert!(diff_country("it", &names, Some(&old), Some(&old), published).is_empty());
        // A country new in the later state: its facts are added, its toggles not compared.
        let added = diff_country("it", &names, None, Some(&new), Published::UNRELEASED);
        assert_eq!(added.len(), 3);
        assert!(
            added
                .iter()
                .all(|c| c.kind == ChangeKind::Added && c.release.is_none())
        );
    }

    fn answer(kind: AnswerKind, id: &str, fields: &[(&'static str, Option<&str>)]) -> Answer {
        Answer {
            kind,
            id: id.into(),
            erp: (kind == AnswerKind::PartnerFlag).then(|| "odoo".into()),
            label: format!("label of {id}"),
            fields: fields
                .iter()
                .map(|(n, v)| (*n, v.map(str::to_string)))
                .collect(),
            verification: Some(Verification::Secondary),
            source_urls: vec!["https://example.org/".into()],
            last_checked: None,
        }
    }

    #[test]
    fn answers_change_field_by_field_and_only_kinds_both_states_carry_are_compared() {
        let old = CountryState {
            carries: AnswerKind::ALL.to_vec(),
            answers: vec![
                answer(
                    AnswerKind::Phase,
                    "it-b2b-e-invoicing-main",
                    &[
                        ("status", Some("planned")),
                        ("applies_from", None),
                        ("limit", Some("x")),
                    ],
                ),
                answer(
                    AnswerKind::Regime,
                    "it-b2b-e-invoicing",
                    &[("model", Some("post-audit")), ("formats", Some("ubl cii"))],
                ),
                answer(
                    AnswerKind::PartnerFlag,
                    "it-odoo",
                    &[("flag", Some("partner"))],
                ),
            ],
            ..CountryState::default()
        };
        let mut new = old.clone();
        new.answers[0].fields = vec![
            ("status", Some("in-force".into())),
            ("applies_from", Some("2027-01-01".into())),
            ("limit", None),
        ];
        new.answers[0].last_checked = Some("2026-12-01".into());
        new.answers[1].fields = vec![
            ("model", Some("clearance".into())),
            ("formats", Some("ubl peppol-bis-3".into())),
        ];
        new.answers[1].verification = Some(Verification::Official);
        new.answers.remove(2);
        new.answers.push(answer(
            AnswerKind::Vat,
            "it-vat",
            &[("standard_rate", Some("22")), ("reduced_rates", None)],
        ));
        let labels: Labels = [
            (("einvoicing_models", "clearance"), "Clearance"),
            (("einvoicing_models", "post-audit"), "Post-audit only"),
            (("einvoicing_formats", "ubl"), "UBL"),
            (("einvoicing_formats", "cii"), "CII"),
        ]
        .into_iter()
        .map(|((set, id), label)| ((set.to_string(), id.to_string()), label.to_string()))
        .collect();
        let names = Names {
            country: "Italy",
            toggles: &[],
            labels: &labels,
        };
        let changes = diff_country("it", &names, Some(&old), Some(&new), Published::UNRELEASED);
        type Summary<'c> = (Option<&'c str>, Option<&'c str>, Option<&'c str>, &'c str);
        let summary: Vec<Summary> = changes
            .iter()
            .map(|c| {
                assert!(c.fact_id.is_none() && c.toggle.is_none());
                (
                    c.answer.as_deref(),
                    c.answer_id.as_deref(),
                    c.field.as_deref(),
                    c.kind.name(),
                )
            })
            .collect();
        // A check date alone is no change.
        assert_eq!(
            summary,
            [
                (Some("partner-flag"), Some("it-odoo"), None, "removed"),
                (
                    Some("phase"),
                    Some("it-b2b-e-invoicing-main"),
                    Some("status"),
                    "value_changed"
                ),
                (
                    Some("phase"),
                    Some("it-b2b-e-invoicing-main"),
                    Some("applies_from"),
                    "value_changed"
                ),
                (
                    Some("phase"),
                    Some("it-b2b-e-invoicing-main"),
                    Some("limit"),
                    "value_changed"
                ),
                (
                    Some("regime"),
                    Some("it-b2b-e-invoicing"),
                    Some("model"),
                    "value_changed"
                ),
                (
                    Some("regime"),
                    Some("it-b2b-e-invoicing"),
                    Some("formats"),
                    "value_changed"
                ),
                (
                    Some("regime"),
                    Some("it-b2b-e-invoicing"),
                    None,
                    "verification_raised"
                ),
                (Some("vat"), Some("it-vat"), None, "added"),
            ]
        );
        // The API carries the values as the data files do; the sentence says them in words.
        assert_eq!(changes[1].old, Some(ChangeValue::Text("planned".into())));
        assert_eq!(changes[2].old, None);
        assert_eq!(changes[4].new, Some(ChangeValue::Text("clearance".into())));
        assert_eq!(changes[0].erp.as_deref(), Some("odoo"));
        let sentences: Vec<String> = changes.iter().map(Change::sentence).collect();
        assert_eq!(
            sentences,
            [
                "Italy: label of it-odoo removed (was: “partner”)",
                "Italy: label of it-b2b-e-invoicing-main: status: now “in force” (was: “planned”)",
                "Italy: label of it-b2b-e-invoicing-main: applies from: now “2027-01-01” (was: none given)",
                "Italy: label of it-b2b-e-invoicing-main: limited to: none given now (was: “x”)",
                "Italy: label of it-b2b-e-invoicing: model: now “Clearance” (was: “Post-audit only”)",
                "Italy: label of it-b2b-e-invoicing: formats: now “UBL, peppol-bis-3” (was: “UBL, CII”)",
                "Italy: label of it-b2b-e-invoicing: grade raised from secondary to official",
                "Italy: label of it-vat added: “standard rate (%): 22”",
            ]
        );
        let json = serde_json::to_value(&changes[7]).unwrap();
        assert_eq!(
            json["new"],
            serde_json::json!({"standard_rate": "22", "reduced_rates": null})
        );
        assert_eq!(json["answer"], "vat");
        // A state that does not carry answers (a record made before they were recorded): none of them
        // is compared, either way.
        let mut before_answers = old.clone();
        before_answers.carries.clear();
        before_answers.answers.clear();
        assert!(
            diff_country(
                "it",
                &names,
                Some(&before_answers),
                Some(&new),
                Published::UNRELEASED
            )
            .is_empty()
        );
        assert!(
            diff_country(
                "it",
                &names,
                Some(&new),
                Some(&before_answers),
                Published::UNRELEASED
            )
            .is_empty()
        );
        // Only the kinds both carry: a later record that also carries VAT rows compared with one that
        // carries only phases shows no VAT row added.
        let mut phases_only = old.clone();
        phases_only.carries = vec![AnswerKind::Phase];
        phases_only.answers.retain(|a| a.kind == AnswerKind::Phase);
        let partial = diff_country(
            "it",
            &names,
            Some(&phases_only),
            Some(&new),
            Published::UNRELEASED,
        );
        let kinds: Vec<Option<&str>> = partial.iter().map(|c| c.answer.as_deref()).collect();
        assert_eq!(kinds, [Some("phase"); 3]);
        // A country new in the later state: its answers are added.
        let added = diff_country("it", &names, None, Some(&new), Published::UNRELEASED);
        assert_eq!(added.len(), 3);
        assert!(added.iter().all(|c| c.kind == ChangeKind::Added));
    }
}
