//! What a page shows: its context, made by its kind's context function ([`PageSpec`]), kept as a
//! fingerprint ([`page_context`]) and handed to the page and its twin once ([`MadeContexts`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use minijinja::Value;
use serde_json::Value as Json;

use crate::kinds::PageKind;

/// What a page shows, from the page's placeholder value (made by the module of its page kind;
/// fingerprinted per page by [`page_context`]).
pub(crate) type ContextFn = fn(&dyn salsa::Database, &str) -> Json;

/// A page's kind and placeholder value, as a query key: the HTML page and its twin share one context.
#[salsa::interned(debug)]
pub(crate) struct PageContextKey<'db> {
    pub kind: PageKind,
    #[returns(ref)]
    pub param: String,
}

/// What one page shows (its HTML and its twin render from it), kept as a fingerprint: the early-cutoff
/// point between the data and the templates, so an edit that leaves a page's context as it was renders
/// nothing again. The context itself is made here and handed to the page and twin that render from it
/// ([`context_of`]) through [`MadeContexts`], not memoized: a watch session keeps 32 bytes a page
/// instead of every page's context (BENCHMARKS.md has what that saves).
#[salsa::tracked]
pub(crate) fn page_context<'db>(
    db: &'db dyn salsa::Database,
    key: PageContextKey<'db>,
) -> ContextFingerprint {
    let json = context_json(db, key);
    let fingerprint = ContextFingerprint::of(&json);
    // Converted before the table is locked: the other thread's pages take it too.
    let context = PageContext::of(&json);
    if let Some(mut made) = made_contexts(db) {
        made.insert(fingerprint, context);
    }
    fingerprint
}

/// The page's context as its kind's context function makes it.
fn context_json(db: &dyn salsa::Database, key: PageContextKey<'_>) -> Json {
    (key.kind(db).spec().context)(db, key.param(db))
}

/// The context of the page at `key` as its HTML or twin renders it: the one [`page_context`] made
/// when it ran, or, when it did not run in this build (the page renders again for another reason, a
/// template edit), made again here. Then the calling render also depends on the data the context
/// reads, so the next edit of that data renders the page again once, even if its context stays the
/// same (a missed cutoff, never a stale page).
pub(crate) fn context_of(db: &dyn salsa::Database, key: PageContextKey<'_>) -> PageContext {
    let fingerprint = page_context(db, key);
    let made = made_contexts(db).and_then(|made| made.get(fingerprint).cloned());
    made.unwrap_or_else(|| PageContext::of(&context_json(db, key)))
}

/// The contexts [`page_context`] made, by fingerprint, until the batch that renders their pages ends
/// ([`forget_made_contexts`]). A salsa input whose one value (the shared table) is never set again, so
/// reading it is a dependency no edit invalidates; keyed by content, so whichever build made an entry,
/// it is the context of any page with that fingerprint. Created by the streaming plans before they
/// render ([`share_made_contexts`]); without it (the serial plan) every render makes its page's context
/// itself. Why this one cache stands beside salsa: ARCHITECTURE.md, "The one cache beside salsa".
#[salsa::input(singleton)]
pub(crate) struct MadeContexts {
    #[returns(ref)]
    pub table: Arc<Mutex<HashMap<ContextFingerprint, PageContext>>>,
}

#[cfg(feature = "streaming")]
/// Makes the table of [`MadeContexts`] on `db` if it has none yet: a build calls this before it
/// renders, so each page's context is made once for the page and its twin.
pub(crate) fn share_made_contexts(db: &dyn salsa::Database) {
    if MadeContexts::try_get(db).is_none() {
        let _ = MadeContexts::new(db, Default::default());
    }
}

#[cfg(feature = "streaming")]
/// Lets go of the contexts made so far: their pages are rendered (see [`MadeContexts`]).
pub(crate) fn forget_made_contexts(db: &dyn salsa::Database) {
    if let Some(mut made) = made_contexts(db) {
        made.clear();
    }
}

/// The table of [`MadeContexts`], locked; `None` for a database made without it.
fn made_contexts(
    db: &dyn salsa::Database,
) -> Option<std::sync::MutexGuard<'_, HashMap<ContextFingerprint, PageContext>>> {
    MadeContexts::try_get(db).map(|made| made.table(db).lock().expect("made contexts poisoned"))
}

/// A page context's fingerprint: the blake3 of its JSON, value by value, each tagged with its kind and
/// length, so that two contexts have one fingerprint only if every value is the same. That is stricter
/// than the templates' `==`, which takes `1` and `1.0` (or `true` and `1`) as equal while each renders
/// differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ContextFingerprint(blake3::Hash);

impl ContextFingerprint {
    pub(crate) fn of(json: &Json) -> ContextFingerprint {
        fn feed(hasher: &mut blake3::Hasher, json: &Json) {
            let mut tagged = |tag: u8, bytes: &[u8]| {
                hasher.update(&[tag]);
                hasher.update(&(bytes.len() as u64).to_le_bytes());
                hasher.update(bytes);
            };
            match json {
                Json::Null => tagged(b'z', b""),
                Json::Bool(b) => tagged(b'b', &[u8::from(*b)]),
                // As serde_json writes it: 1 and 1.0 differ.
                Json::Number(n) => tagged(b'n', n.to_string().as_bytes()),
                Json::String(text) => tagged(b's', text.as_bytes()),
                Json::Array(items) => {
                    tagged(b'a', &(items.len() as u64).to_le_bytes());
                    for item in items {
                        feed(hasher, item);
                    }
                }
                Json::Object(map) => {
                    tagged(b'o', &(map.len() as u64).to_le_bytes());
                    for (key, value) in map {
                        hasher.update(&(key.len() as u64).to_le_bytes());
                        hasher.update(key.as_bytes());
                        feed(hasher, value);
                    }
                }
            }
        }
        let mut hasher = blake3::Hasher::new();
        feed(&mut hasher, json);
        ContextFingerprint(hasher.finalize())
    }
}

/// `json` as the template engine's value, as `Value::from_serialize` makes it, except that equal long
/// strings are one shared string: a page's context repeats texts (a country page shows each fact in its
/// section and again in its History, as the change's new value), and a watch session keeps every
/// page's context.
pub(crate) fn template_value<'j>(json: &'j Json, seen: &mut HashMap<&'j str, Value>) -> Value {
    /// Strings shorter than this are not looked up: most are labels, and the engine keeps strings of up
    /// to 22 bytes inline anyway.
    const SHARED_FROM: usize = 64;
    match json {
        Json::Null => Value::from(()),
        Json::Bool(b) => Value::from(*b),
        Json::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => Value::from(u),
            (None, Some(i), _) => Value::from(i),
            (None, None, f) => Value::from(f.unwrap_or(f64::NAN)),
        },
        Json::String(text) if text.len() >= SHARED_FROM => seen
            .entry(text.as_str())
            .or_insert_with(|| Value::from(text.as_str()))
            .clone(),
        Json::String(text) => Value::from(text.as_str()),
        Json::Array(items) => Value::from(
            items
                .iter()
                .map(|item| template_value(item, seen))
                .collect::<Vec<Value>>(),
        ),
        Json::Object(map) => map
            .iter()
            .map(|(key, value)| (Value::from(key.as_str()), template_value(value, seen)))
            .collect(),
    }
}

/// A page's context as the template engine's value, converted once from the JSON the context functions
/// make: the page and its twin render from this one value (the engine shares a value's maps, lists and
/// strings, so rendering copies none of it), and the JSON is let go as soon as it is converted.
#[derive(Debug, Clone)]
pub(crate) struct PageContext(pub Value);

impl PageContext {
    /// The context of `json` (see [`template_value`]).
    pub(crate) fn of(json: &Json) -> PageContext {
        PageContext(template_value(json, &mut HashMap::new()))
    }
}

/// How a page is made (see [`PageKind::spec`]).
pub(crate) struct PageSpec {
    /// Its template's name without extension: `country` is `country.html` and `country.md`.
    pub template: &'static str,
    pub context: ContextFn,
    /// Whether its bulk is rendered in parts (see [`super::parts`]).
    pub parts: Option<PartsSpec>,
}

/// A page rendered whole from `template` and the context `context` makes.
pub(crate) fn page(template: &'static str, context: ContextFn) -> PageSpec {
    PageSpec {
        template,
        context,
        parts: None,
    }
}

/// What a page's context puts where its template prints the parts: a value no source can hold
/// (sources cannot contain control characters) and that neither escape changes.
pub(crate) const PARTS_MARK: &str = "\u{0}parts\u{0}";

/// How a page kind is made of parts (see [`super::parts`]).
#[derive(Clone, Copy)]
pub(crate) struct PartsSpec {
    /// The parts' placeholder values, in page order.
    pub params: fn(&dyn salsa::Database) -> &[String],
    /// The value one part is rendered from.
    pub value: fn(&dyn salsa::Database, &str) -> Json,
    /// The macro of the page's `macros.html` / `macros.md` that renders one part from its value.
    pub macro_name: &'static str,
    /// The markup that opens and closes the element the parts stand in (`<table><tbody>`,
    /// `</tbody></table>`): the link check parses each part within it, as the content of a page's body.
    pub enclosing: (&'static str, &'static str),
}

impl PartsSpec {
    /// Parts that are rows of a table's body (every page made of parts so far): each rendered by
    /// `macro_name` from `value`, for each of `params`.
    pub(crate) const fn table_rows(
        params: fn(&dyn salsa::Database) -> &[String],
        value: fn(&dyn salsa::Database, &str) -> Json,
        macro_name: &'static str,
    ) -> PartsSpec {
        PartsSpec {
            params,
            value,
            macro_name,
            enclosing: ("<table><tbody>", "</tbody></table>"),
        }
    }

    /// Parts that are blocks of a page's body (a heading and a list each): each rendered by `macro_name`
    /// from `value`, for each of `params`.
    pub(crate) const fn blocks(
        params: fn(&dyn salsa::Database) -> &[String],
        value: fn(&dyn salsa::Database, &str) -> Json,
        macro_name: &'static str,
    ) -> PartsSpec {
        PartsSpec {
            params,
            value,
            macro_name,
            enclosing: ("<div>", "</div>"),
        }
    }
}
