//! The changes of one country between two recorded states: its toggles, then its facts by id, each fact's
//! changes in [`ChangeKind`] order. Only what the two states hold is compared: a change is never
//! inferred, and a toggle one of the states did not record is not compared.

use std::collections::BTreeMap;

use super::snapshot::{CountryState, SnapshotFact};
use crate::resources::{Change, ChangeKind, ChangeValue, Said, SaidSentence, Verification};

/// The names a change's sentence says: the country's, and each toggle's label (name, label).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Names<'a> {
    pub country: &'a str,
    pub toggles: &'a [(String, String)],
}

impl Names<'_> {
    fn toggle<'t>(&'t self, name: &'t str) -> &'t str {
        self.toggles
            .iter()
            .find(|(n, _)| n == name)
            .map_or(name, |(_, label)| label.as_str())
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
            toggle: toggle.map(|name| names.toggle(name).into()),
        },
        substance: kind.substance(),
        release: published.release.map(str::to_string),
        released_at: published.released_at.map(str::to_string),
        country: code.to_string(),
        fact_id: fact.map(|f| f.id.clone()),
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
    changes
}

fn by_id(state: Option<&CountryState>) -> BTreeMap<&str, &SnapshotFact> {
    state
        .map(|s| s.facts.iter().map(|f| (f.id.as_str(), f)).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::sentence::{changed_sentences, sentences};

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
        let names = Names {
            country: "Italy",
            toggles: &toggles,
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
}
