//! HTML pages and their Markdown twins, rendered from the minijinja templates in `rules/templates/`.
//!
//! This module is the dispatch of the pages: [`PageKind::spec`] says, for each kind, the module that makes
//! it, and [`render_kind`] renders a page or twin from its spec. What every page is made with is beside it,
//! below the page kinds: the template engine ([`templates`]), the contexts and their fingerprints
//! ([`context`]), the pages made of parts ([`parts`]) and what every page shows ([`shared`]). Each kind of
//! page (or a small family of them) has a module of its own holding its typed context, its context
//! function and its spec: [`home`], [`e_invoicing`], [`country`], [`erp`], [`topics`] (VAT reporting and
//! SAF-T), [`lists`] (the pages made of parts), [`filters`], [`sponsors`], [`licence`], [`api_docs`],
//! [`search`], [`changes`] (the changes and release pages, the History sections), [`not_found`],
//! [`readiness`] (the readiness board and the ERP pages' upcoming obligations), [`compare`] (the
//! comparison page), [`calendar`] (the calendar page, beside `calendar.ics`), [`data`] (the data files'
//! page).
//!
//! Each page reads a narrow context (a typed value handed over as JSON), so a page and its twin render
//! again only when the data they show changed.

mod api_docs;
mod calendar;
pub(crate) mod changes;
pub(crate) mod compare;
pub(crate) mod context;
mod country;
mod data;
mod e_invoicing;
mod erp;
mod filters;
mod home;
mod licence;
pub(crate) mod lists;
mod not_found;
pub mod parts;
pub(crate) mod readiness;
mod search;
pub(crate) mod shared;
mod sponsors;
pub(crate) mod templates;
mod topics;

use crate::kinds::{Format, PageKind};
use crate::output::{Rendered, RenderedFile};
use crate::routes::Output;
use context::{PageContextKey, PageSpec, context_of};
use templates::{prefix_site_links, render_page, template_names};

impl PageKind {
    /// How pages of this kind are made: one declaration per kind, each in the module of its page.
    pub(crate) fn spec(self) -> PageSpec {
        match self {
            PageKind::Home => home::spec(),
            PageKind::EInvoicing => e_invoicing::spec(),
            PageKind::Country => country::spec(),
            PageKind::Erps => erp::index_spec(),
            PageKind::Erp => erp::spec(),
            PageKind::VatReporting => topics::vat_reporting_spec(),
            PageKind::Saft => topics::saft_spec(),
            PageKind::Partners => lists::partners_spec(),
            PageKind::LocalErps => lists::local_erps_spec(),
            PageKind::News => lists::news_spec(),
            PageKind::Sponsors => sponsors::spec(),
            PageKind::Licence => licence::spec(),
            PageKind::Filters => filters::index_spec(),
            PageKind::Filter => filters::spec(),
            PageKind::Api => api_docs::spec(),
            PageKind::Calendar => calendar::spec(),
            PageKind::Search => search::spec(),
            // The page a static host shows for an unknown path (no twin: `PageKind::formats`).
            PageKind::NotFound => not_found::spec(),
            PageKind::Changes => changes::changes_spec(),
            PageKind::Release => changes::release_spec(),
            PageKind::ReleaseYear => changes::release_year_spec(),
            PageKind::Readiness => readiness::spec(),
            PageKind::Compare => compare::spec(),
            PageKind::Data => data::spec(),
        }
    }
}

/// A page or twin, rendered from its context and templates (memoized as its output, see
/// [`crate::render::output_file`]).
pub(crate) fn render_kind(
    db: &dyn salsa::Database,
    kind: PageKind,
    format: Format,
    output: &Output,
) -> RenderedFile {
    let spec = kind.spec();
    if spec.parts.is_some() {
        return parts::render_parted(db, output);
    }
    let param = output.param.clone().unwrap_or_default();
    let context = context_of(db, PageContextKey::new(db, kind, param));
    let page = render_page(
        db,
        &template_names(spec.template, format),
        &context,
        &output.path,
    );
    let prefix = crate::model::base_path(db);
    if prefix.is_empty() || page.error.is_some() {
        return page;
    }
    let text = String::from_utf8_lossy(&page.rendered.bytes()).into_owned();
    RenderedFile {
        rendered: Rendered::new(prefix_site_links(&text, prefix, format).into_bytes()),
        error: None,
    }
}

#[cfg(test)]
mod tests {
    use super::context::{ContextFingerprint, template_value};
    use super::templates::prefix_site_links;
    use crate::kinds::Format;
    use crate::render::text::{md_cell, named_sources, plain_clauses, source_name};
    use locref_escape::escape::escape_html;
    use minijinja::Value;
    use serde_json::json;
    use std::collections::HashMap;

    #[test]
    fn a_context_is_the_value_the_engine_makes_of_its_json_with_long_texts_shared() {
        let long = "x".repeat(100);
        let json = json!({
            "n": [0, -3, 18446744073709551615u64, 1.5, null, true, "short"],
            "facts": [{"value": long}],
            "history": [{"new": long, "old": "y".repeat(100)}],
            "nested": {"b": {}, "a": []},
        });
        let value = template_value(&json, &mut HashMap::new());
        assert_eq!(
            format!("{value:?}"),
            format!("{:?}", Value::from_serialize(&json))
        );
        // One string, shared: the same allocation behind both.
        let first = |list: &str, field: &str| -> std::sync::Arc<str> {
            let item = value.get_attr(list).unwrap().get_item_by_index(0).unwrap();
            item.get_attr(field).unwrap().try_into().unwrap()
        };
        assert!(std::sync::Arc::ptr_eq(
            &first("facts", "value"),
            &first("history", "new")
        ));
        assert!(!std::sync::Arc::ptr_eq(
            &first("history", "old"),
            &first("history", "new")
        ));
    }

    #[test]
    fn page_contexts_have_one_fingerprint_only_when_every_value_is_the_same() {
        let page =
            json!({"title": "Italy", "count": 2, "rows": [{"a": 1.5, "b": null, "c": true}]});
        let fingerprint = ContextFingerprint::of;
        assert_eq!(fingerprint(&page), fingerprint(&page.clone()));
        // What the templates' `==` takes as equal, but which renders differently; and values that
        // would run together without their lengths.
        let pairs = [
            (json!({"n": 1}), json!({"n": 1.0})),
            (json!({"n": true}), json!({"n": 1})),
            (json!({"rows": [1, 2]}), json!({"rows": [1, 2, 3]})),
            (json!({"rows": [{"v": "x"}]}), json!({"rows": [{"v": "y"}]})),
            (json!({"v": null}), json!({"v": ""})),
            (json!({"v": 0.1}), json!({"v": 0.10000000000000002})),
            (json!({"v": "1"}), json!({"v": 1})),
            (json!({"v": ["ab", "c"]}), json!({"v": ["a", "bc"]})),
            (json!({"ab": "c"}), json!({"a": "bc"})),
            (json!({"v": [[], []]}), json!({"v": [[[]]]})),
        ];
        for (a, b) in pairs {
            assert_ne!(fingerprint(&a), fingerprint(&b), "{a} and {b}");
        }
    }

    #[test]
    fn sources_are_named_by_their_publisher() {
        assert_eq!(
            source_name("https://www.odoo.com/documentation/"),
            "odoo.com"
        );
        assert_eq!(
            source_name("https://learn.microsoft.com/en-us/x"),
            "learn.microsoft.com"
        );
        assert_eq!(
            source_name("https://github.com/MicrosoftDocs/dynamics365smb-docs/blob/main/x.md"),
            "github.com/MicrosoftDocs"
        );
        assert_eq!(source_name("https://Tax.gov.ae"), "tax.gov.ae");
        let named = named_sources(&Value::from(vec![
            "https://www.vatupdate.com/a",
            "https://vatupdate.com/b",
            "https://ecosio.com/",
        ]));
        let names: Vec<&str> = named.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["vatupdate.com", "vatupdate.com (2)", "ecosio.com"]);
        assert!(named_sources(&Value::from(())).is_empty());
    }

    #[test]
    fn clause_conventions_read_as_words() {
        assert_eq!(
            plain_clauses(
                "Monthly VAT return. Real-time reporting: yes (SdI). SAF-T: no. Audit file: no."
            ),
            "Monthly VAT return. Real-time reporting: required (SdI). SAF-T: not required. Standard audit file: not required."
        );
        assert_eq!(
            plain_clauses("B2B: enacted, date pending (x). B2G: mandatory from 2020-01-01."),
            "B2B e-invoicing: enacted, start date not yet set (x). B2G e-invoicing: mandatory from 2020-01-01."
        );
        assert_eq!(plain_clauses("SAF-T: nothing"), "SAF-T: nothing");
    }

    #[test]
    fn site_links_get_the_base_path_and_nothing_else_does() {
        let html = "<a href=\"/\">h</a><a href=\"/e-invoicing/#fr-odoo\">m</a><script src=\"/assets/x.js\" defer></script>\
                    <form action=\"/search/\"></form><a href=\"//cdn.example/x\">c</a><a href=\"https://x.example/\">x</a>\
                    <a href=\"index.md\">t</a><a href=\"#top\">#</a><p>href=\"/not-an-attribute\"</p>";
        assert_eq!(
            prefix_site_links(html, "/locref", Format::Html),
            "<a href=\"/locref/\">h</a><a href=\"/locref/e-invoicing/#fr-odoo\">m</a><script src=\"/locref/assets/x.js\" defer></script>\
             <form action=\"/locref/search/\"></form><a href=\"//cdn.example/x\">c</a><a href=\"https://x.example/\">x</a>\
             <a href=\"index.md\">t</a><a href=\"#top\">#</a><p>href=\"/not-an-attribute\"</p>"
        );
        let md = "[Italy](/it/index.md) | \\[x\\](/y) [API](/api/) [ext](https://x.example/)";
        assert_eq!(
            prefix_site_links(md, "/locref", Format::Markdown),
            "[Italy](/locref/it/index.md) | \\[x\\](/y) [API](/locref/api/) [ext](https://x.example/)"
        );
    }

    /// The escapes and clause rules as first written, a character or a rule at a time: what the faster
    /// versions above must still write, byte for byte.
    mod as_first_written {
        pub(super) fn escape_html(text: &str) -> String {
            let mut out = String::new();
            for c in text.chars() {
                match c {
                    '&' => out.push_str("&amp;"),
                    '<' => out.push_str("&lt;"),
                    '>' => out.push_str("&gt;"),
                    '"' => out.push_str("&quot;"),
                    '\'' => out.push_str("&#39;"),
                    _ => out.push(c),
                }
            }
            out
        }

        pub(super) fn md_cell(text: &str) -> String {
            let mut out = String::new();
            for c in text.replace("\r\n", "\n").chars() {
                match c {
                    '\\' | '|' | '<' | '[' | ']' => {
                        out.push('\\');
                        out.push(c);
                    }
                    '\n' | '\r' => out.push_str("<br>"),
                    _ => out.push(c),
                }
            }
            out
        }

        pub(super) fn plain_clauses(text: &str) -> String {
            let rules = [
                (r"\bB2B: ", "B2B e-invoicing: "),
                (r"\bB2G: ", "B2G e-invoicing: "),
                (
                    r"\b(e-invoicing: )enacted, date pending",
                    "${1}enacted, start date not yet set",
                ),
                (
                    r"\bReal-time reporting: no\b",
                    "Real-time reporting: not required",
                ),
                (
                    r"\bReal-time reporting: yes\b",
                    "Real-time reporting: required",
                ),
                (
                    r"\bReal-time reporting: from\b",
                    "Real-time reporting: required from",
                ),
                (r"\bSAF-T: no\b", "SAF-T: not required"),
                (r"\bSAF-T: from\b", "SAF-T: required from"),
                (r"\bAudit file: no\b", "Standard audit file: not required"),
                (
                    r"\bAudit file: on request\b",
                    "Standard audit file: required on request",
                ),
            ];
            let mut text = text.to_string();
            for (pattern, words) in rules {
                text = regex::Regex::new(pattern)
                    .expect("a valid pattern")
                    .replace_all(&text, words)
                    .into_owned();
            }
            text
        }
    }

    /// Texts made of the clauses' own words, so the rules meet each other (a clause right after another,
    /// inside a word, doubled) far more often than in arbitrary text.
    fn clause_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let pieces = prop::sample::select(vec![
            "B2B: ",
            "B2G: ",
            "B2B:",
            "e-invoicing: ",
            "enacted, date pending",
            "enacted",
            "Real-time reporting: ",
            "SAF-T: ",
            "Audit file: ",
            "no",
            "yes",
            "from",
            "on request",
            "not",
            "none",
            " ",
            ".",
            "x",
            "é",
            "(",
            "-",
            ",",
            "\r\n",
            "\n",
            "\r",
            "|",
            "<",
            "&",
            "\"",
            "'",
            "[",
            "]",
            "\\",
        ]);
        (prop::collection::vec(pieces, 0..24), "\\PC{0,6}")
            .prop_map(|(pieces, tail)| pieces.concat() + &tail)
    }

    proptest::proptest! {
        #[test]
        fn the_fast_escapes_write_what_a_character_at_a_time_wrote(
            text in proptest::prop_oneof![clause_text(), "\\PC{0,40}", ".{0,40}"]
        ) {
            proptest::prop_assert_eq!(escape_html(&text), as_first_written::escape_html(&text));
            proptest::prop_assert_eq!(md_cell(Value::from(text.as_str())), as_first_written::md_cell(&text));
        }

        #[test]
        fn one_pass_of_the_clause_pattern_writes_what_the_ten_rules_wrote(text in clause_text()) {
            proptest::prop_assert_eq!(plain_clauses(&text), as_first_written::plain_clauses(&text));
        }
    }
}
