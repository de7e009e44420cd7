//! A change as a sentence a reader understands (`Norway: B2B e-invoicing mandate: yes (was: unknown)`).
//!
//! The sentence is said from the change's own fields when the change is serialized or shown, never
//! kept beside them: it repeats the values (a fact added is its whole text), which the change already
//! shares with the fact it comes from.

use super::{ChangeKind, ChangeValue};

/// A value of a change as a reader reads it: a text as it is, a toggle as yes / no, source URLs one a
/// line; an absent value in the words its kind calls for (an unknown toggle, a date not recorded).
pub fn shown(value: &Option<ChangeValue>, kind: ChangeKind) -> String {
    match value {
        Some(ChangeValue::Text(text)) => text.to_string(),
        Some(ChangeValue::Flag(true)) => "yes".into(),
        Some(ChangeValue::Flag(false)) => "no".into(),
        Some(ChangeValue::Urls(urls)) if urls.is_empty() => "none".into(),
        Some(ChangeValue::Urls(urls)) => urls.join("\n"),
        Some(ChangeValue::Fields(fields)) => fields
            .iter()
            .filter_map(|(name, value)| Some(format!("{name}: {}", value.as_str()?)))
            .collect::<Vec<_>>()
            .join("; "),
        None => match kind {
            ChangeKind::ToggleFlipped => "unknown".into(),
            ChangeKind::EffectiveDateChanged => "not recorded".into(),
            _ => String::new(),
        },
    }
}

fn url_count(value: &Option<ChangeValue>) -> usize {
    match value {
        Some(ChangeValue::Urls(urls)) => urls.len(),
        _ => 0,
    }
}

/// What a source count says: `no source`, `1 source`, `3 sources`.
fn sources_counted(n: usize) -> String {
    match n {
        0 => "no source".into(),
        1 => "1 source".into(),
        n => format!("{n} sources"),
    }
}

/// The sentences of a text, as they are written: split after a full stop followed by a space and a
/// capital letter (so "Nos. 243" or "e.g. a" stays inside its sentence).
pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (at, _) in text.match_indices(". ") {
        let next = text[at + 2..].chars().next();
        if at < start || !next.is_some_and(char::is_uppercase) {
            continue;
        }
        out.push(text[start..=at].trim());
        start = at + 2;
    }
    if start < text.len() {
        out.push(text[start..].trim());
    }
    out.retain(|s| !s.is_empty());
    out
}

/// What a value change changed, sentence by sentence: the sentences of `old` that `new` no longer has,
/// and those of `new` that `old` did not have, each in its text's order. So a reader reads the clause
/// that changed ("B2B: enacted from 2027-01-01 …"), not the whole text twice.
pub fn changed_sentences<'t>(old: &'t str, new: &'t str) -> (Vec<&'t str>, Vec<&'t str>) {
    let (before, after) = (sentences(old), sentences(new));
    let gone = before
        .iter()
        .filter(|s| !after.contains(s))
        .copied()
        .collect();
    let came = after
        .iter()
        .filter(|s| !before.contains(s))
        .copied()
        .collect();
    (gone, came)
}

/// The changed sentences of `whole`, in order: two that stand side by side in it are joined by a space,
/// two that other (unchanged) sentences separate by " … ", so a reader never takes them for one passage.
fn joined(parts: &[&str], whole: &str) -> String {
    let mut out = String::new();
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            let together = format!("{} {part}", parts[i - 1]);
            out.push_str(if whole.contains(&together) {
                " "
            } else {
                " … "
            });
        }
        out.push_str(part);
    }
    out
}

/// Texts longer than this many characters are shown by the words that changed.
const LONG_TEXT: usize = 100;

/// Words of unchanged text kept on each side of the words that changed.
const CONTEXT_WORDS: usize = 3;

/// Two versions of a text as words, with how many words they share at the start and, after those, at
/// the end.
struct Words<'t> {
    old: Vec<&'t str>,
    new: Vec<&'t str>,
    prefix: usize,
    suffix: usize,
}

impl<'t> Words<'t> {
    fn of(before: &'t str, after: &'t str) -> Words<'t> {
        let (old, new): (Vec<&str>, Vec<&str>) = (
            before.split_whitespace().collect(),
            after.split_whitespace().collect(),
        );
        let prefix = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
        let shortest = old.len().min(new.len());
        let suffix = old
            .iter()
            .rev()
            .zip(new.iter().rev())
            .take(shortest - prefix)
            .take_while(|(a, b)| a == b)
            .count();
        Words {
            old,
            new,
            prefix,
            suffix,
        }
    }
}

/// Two long versions of a text, each cut to the words that changed and a few words around them, with
/// " … " where text was cut ("… mandate enacted, from 2027-01-01 …" for "… mandate planned …"), so a
/// reader sees the few words a long sentence changed, not the sentence twice. Short texts, and texts
/// that share no first or last word, are returned whole.
pub fn collapsed(before: &str, after: &str) -> (String, String) {
    let whole = || (before.to_string(), after.to_string());
    if before.chars().count() <= LONG_TEXT && after.chars().count() <= LONG_TEXT {
        return whole();
    }
    let Words {
        old,
        new,
        prefix,
        suffix,
    } = Words::of(before, after);
    if prefix + suffix == 0 {
        return whole();
    }
    let cut = |words: &[&str]| {
        let start = prefix.saturating_sub(CONTEXT_WORDS);
        let end = (words.len() - suffix + CONTEXT_WORDS).min(words.len());
        let mut out = String::new();
        if start > 0 {
            out.push_str("… ");
        }
        out.push_str(&words[start..end].join(" "));
        if end < words.len() {
            out.push_str(" …");
        }
        out
    };
    (cut(&old), cut(&new))
}

/// What a long text's change did to its words, when it only took words out or only put words in:
/// the words removed or added, with " … " on the side where the text goes on ("… bar baz" for
/// "foo bar baz" become "foo"). `None` for short texts (shown whole) and for words replaced by others.
pub fn only_removed_or_added(before: &str, after: &str) -> Option<(Edit, String)> {
    if before.chars().count() <= LONG_TEXT && after.chars().count() <= LONG_TEXT {
        return None;
    }
    let Words {
        old,
        new,
        prefix,
        suffix,
    } = Words::of(before, after);
    let (edit, longer) = match (prefix + suffix == new.len(), prefix + suffix == old.len()) {
        (true, false) => (Edit::Removed, &old),
        (false, true) => (Edit::Added, &new),
        _ => return None,
    };
    let mut out = String::new();
    if prefix > 0 {
        out.push_str("… ");
    }
    out.push_str(&longer[prefix..longer.len() - suffix].join(" "));
    if suffix > 0 {
        out.push_str(" …");
    }
    Some((edit, out))
}

/// Whether a text's change only took words out or only put words in.
#[derive(Debug, PartialEq, Eq)]
pub enum Edit {
    Removed,
    Added,
}

/// The sentence of a change: the country, what changed (a fact's label, a toggle's), the answer now and
/// what it was.
pub(crate) fn sentence(
    country: &str,
    kind: ChangeKind,
    label: &str,
    old: &Option<ChangeValue>,
    new: &Option<ChangeValue>,
) -> String {
    let (before, after) = (shown(old, kind), shown(new, kind));
    match kind {
        ChangeKind::ToggleFlipped => format!("{country}: {label}: {after} (was: {before})"),
        ChangeKind::Added => format!("{country}: {label} added: “{after}”"),
        ChangeKind::Removed => format!("{country}: {label} removed (was: “{before}”)"),
        // An answer's field that was unknown or empty on one side (a fact's value is always a text).
        ChangeKind::ValueChanged if old.is_none() => {
            format!("{country}: {label}: now “{after}” (was: none given)")
        }
        ChangeKind::ValueChanged if new.is_none() => {
            format!("{country}: {label}: none given now (was: “{before}”)")
        }
        ChangeKind::ValueChanged => {
            let (gone, came) = changed_sentences(&before, &after);
            match (gone.is_empty(), came.is_empty()) {
                (false, false) => {
                    let (gone, came) = (joined(&gone, &before), joined(&came, &after));
                    // Words only cut (or only added) read as the other one-sided changes do.
                    match only_removed_or_added(&gone, &came) {
                        Some((Edit::Removed, words)) => {
                            format!("{country}: {label}: no longer says “{words}”")
                        }
                        Some((Edit::Added, words)) => format!("{country}: {label}: adds “{words}”"),
                        None => {
                            let (was, now) = collapsed(&gone, &came);
                            format!("{country}: {label}: now “{now}” (was: “{was}”)")
                        }
                    }
                }
                (true, false) => format!("{country}: {label}: adds “{}”", joined(&came, &after)),
                (false, true) => format!(
                    "{country}: {label}: no longer says “{}”",
                    joined(&gone, &before)
                ),
                (true, true) => {
                    let (was, now) = collapsed(&before, &after);
                    format!("{country}: {label}: reworded: “{now}” (was: “{was}”)")
                }
            }
        }
        ChangeKind::EffectiveDateChanged => match new {
            Some(_) => format!("{country}: {label}: effective from {after} (was: {before})"),
            None => format!("{country}: {label}: effective date not recorded (was: {before})"),
        },
        ChangeKind::VerificationRaised => {
            format!("{country}: {label}: grade raised from {before} to {after}")
        }
        ChangeKind::VerificationLowered => {
            format!("{country}: {label}: grade lowered from {before} to {after}")
        }
        ChangeKind::SourceChanged => format!(
            "{country}: {label}: sources changed ({} now, was {})",
            sources_counted(url_count(new)),
            sources_counted(url_count(old))
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::{Edit, collapsed, joined, only_removed_or_added, sentence};
    use crate::api_types::{ChangeKind, ChangeValue};

    #[test]
    fn a_long_text_is_shown_by_the_words_that_changed() {
        let before = "B2B e-invoicing mandate planned for all VAT-registered businesses established \
                      in Norway, issue and receive through the Peppol network";
        let after = "B2B e-invoicing mandate enacted, from 2027-01-01, for all VAT-registered \
                     businesses established in Norway, issue and receive through the Peppol network";
        assert_eq!(
            collapsed(before, after),
            (
                "B2B e-invoicing mandate planned for all VAT-registered …".to_string(),
                "B2B e-invoicing mandate enacted, from 2027-01-01, for all VAT-registered …"
                    .to_string()
            )
        );
        // A change in the middle keeps a few words on each side, and says where text was cut.
        let (was, now) = collapsed(&format!("{before} today"), &format!("{after} today"));
        assert!(
            now.starts_with("B2B") && now.ends_with("VAT-registered …"),
            "{now}"
        );
        assert!(was.ends_with("…"), "{was}");
        // Short texts, and texts with nothing in common at either end, stay whole.
        assert_eq!(collapsed("yes", "no"), ("yes".into(), "no".into()));
        let a = "x ".repeat(60);
        let b = "y ".repeat(60);
        assert_eq!(collapsed(&a, &b), (a.clone(), b.clone()));
    }

    #[test]
    fn words_only_cut_from_a_long_text_read_as_no_longer_says() {
        let before = "B2B e-invoicing mandate enacted for all VAT-registered businesses established \
                      in Norway, issue and receive through the Peppol network or a certified provider";
        let after = "B2B e-invoicing mandate enacted for all VAT-registered businesses established \
                     in Norway, issue and receive through the Peppol network";
        assert_eq!(
            only_removed_or_added(before, after),
            Some((Edit::Removed, "… or a certified provider".to_string()))
        );
        assert_eq!(
            only_removed_or_added(after, before),
            Some((Edit::Added, "… or a certified provider".to_string()))
        );
        let text = |s: &str| Some(ChangeValue::Text(s.into()));
        assert_eq!(
            sentence(
                "Norway",
                ChangeKind::ValueChanged,
                "E-invoicing",
                &text(before),
                &text(after)
            ),
            "Norway: E-invoicing: no longer says “… or a certified provider”"
        );
        assert_eq!(
            sentence(
                "Norway",
                ChangeKind::ValueChanged,
                "E-invoicing",
                &text(after),
                &text(before)
            ),
            "Norway: E-invoicing: adds “… or a certified provider”"
        );
        // Words replaced by others, and short texts, keep "now … (was …)".
        assert_eq!(
            only_removed_or_added(before, &before.replace("Peppol", "PEPPOL")),
            None
        );
        assert_eq!(only_removed_or_added("yes, partly", "yes"), None);
    }

    #[test]
    fn changed_sentences_apart_in_the_text_are_joined_by_an_ellipsis() {
        let whole = "One. Two. Three. Four.";
        assert_eq!(joined(&["One.", "Two."], whole), "One. Two.");
        assert_eq!(joined(&["One.", "Three."], whole), "One. … Three.");
        assert_eq!(
            joined(&["Two.", "Three.", "Four."], whole),
            "Two. Three. Four."
        );
    }
}
