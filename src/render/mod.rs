//! Render: one tracked query per output file, returning its bytes.
//!
//! The bytes carry a placeholder where `meta.generated_at` goes: the content hash covers everything but
//! the build time, and the publisher stamps the time of the build that last changed the content.

pub mod api;
pub mod assets;
pub mod calendar;
pub mod data;
pub mod envelope;
pub mod headers;
pub mod history;
pub mod llms;
pub mod openapi;
pub mod page_figures;
pub mod pages;
pub mod published;
pub mod rendered;
pub mod search;
pub mod sitemap;
pub mod text;

use crate::kinds::RendererOf;
use serde_json::{Value, json};

use crate::diagnostics::Diagnostic;
pub use crate::kinds::{ApiKind, FileKind, FlatTable, Format, PageKind, Renderer};
pub use crate::output::OutputKey;
pub use crate::output::{Digest, Piece, Rendered, RenderedFile};
use crate::routes::Output;
use envelope::json_bytes;
pub(crate) use rendered::{CheckFn, CountFn, RenderFn, param_of};

/// The one memoized query per output file: only outputs whose inputs changed are rendered again.
///
/// Its values are the bytes of the site, so it is the query a build sheds memory by: declared with no
/// capacity limit (a session keeps every output), it is given one by a one-off build, which writes each
/// output and then evicts it (see [`crate::memory`]).
#[salsa::tracked(returns(ref), lru = 0)]
pub(crate) fn output_file<'db>(db: &'db dyn salsa::Database, key: OutputKey<'db>) -> RenderedFile {
    let output = key.output(db);
    match output.renderer() {
        Renderer::Api(kind) => RenderedFile::of((kind.spec().render)(db, output)),
        Renderer::Page(kind, format) => pages::render_kind(db, kind, format, output),
        Renderer::File(kind) => {
            let spec = kind.spec();
            match spec.check.and_then(|check| check(db, output)) {
                Some(error) => RenderedFile::failed(error),
                None => RenderedFile::of((spec.render)(db, output)),
            }
        }
    }
}

#[salsa::tracked(returns(ref))]
pub(crate) fn output_digest<'db>(db: &'db dyn salsa::Database, key: OutputKey<'db>) -> Digest {
    let file = output_file(db, key);
    Digest {
        hash: file.rendered.hash,
        len: file.rendered.len(),
        error: file.error.clone(),
    }
}

/// The digest of one output (see [`Digest`]).
pub fn digest<'db>(db: &'db dyn salsa::Database, output: &Output) -> &'db Digest {
    output_digest(db, OutputKey::new(db, output.clone()))
}

#[cfg(feature = "streaming")]
/// Limits [`output_file`] to its most recent value: older outputs' bytes go at the next eviction (a
/// one-off build, which has written them).
pub(crate) fn keep_last_output_only(db: &mut dyn salsa::Database) {
    output_file::set_lru_capacity(db, 1);
}

/// The rendered output (bytes and any problem).
pub(crate) fn rendered_file<'db>(
    db: &'db dyn salsa::Database,
    output: &Output,
) -> &'db RenderedFile {
    output_file(db, OutputKey::new(db, output.clone()))
}

/// The bytes of one output (memoized: only outputs whose inputs changed are rendered again).
pub fn render<'db>(db: &'db dyn salsa::Database, output: &Output) -> &'db Rendered {
    &rendered_file(db, output).rendered
}

/// Problems found while rendering (a broken template, a missing asset): reported by the build like any
/// diagnostic. Only pages and assets can fail; every other output renders from validated data.
pub(crate) fn render_errors(db: &dyn salsa::Database) -> Vec<Diagnostic> {
    let mut errors: Vec<Diagnostic> = crate::routes::outputs(db)
        .iter()
        .filter(|output| can_fail(output))
        .filter_map(|output| digest(db, output).error.clone())
        .collect();
    errors.extend(page_figures::figure_errors(db));
    errors
}

/// Whether rendering an output can fail: a page (its templates) or a file with a check (an asset).
pub(crate) fn can_fail(output: &Output) -> bool {
    match output.renderer() {
        Renderer::Api(_) => false,
        Renderer::Page(..) => true,
        Renderer::File(kind) => kind.spec().check.is_some(),
    }
}

/// How a file that is neither an API envelope nor a page is made and described (see [`FileKind::spec`]).
pub(crate) struct FileSpec {
    pub render: RenderFn,
    /// Why it cannot be rendered, for the kinds that can fail.
    pub check: Option<CheckFn>,
    /// How many records it holds, for `index.json`; `None` for files that are not lists.
    pub count: Option<CountFn>,
    /// Its media type and the schema of its body, as `openapi.json` describes it.
    pub response:
        fn(&dyn salsa::Database, &mut schemars::SchemaGenerator, &Output) -> (String, Value),
}

/// The number of records of a flat data file.
fn flat_row_count(db: &dyn salsa::Database, output: &Output) -> Option<u64> {
    Some(data::flat_row_count(db, data::StemKey::new(db, param_of(output))) as u64)
}

/// A plain-text body of the media type its path names (pages, twins, assets, text files).
fn text_response(
    _: &dyn salsa::Database,
    _: &mut schemars::SchemaGenerator,
    output: &Output,
) -> (String, Value) {
    let media = crate::routes::media_type(&output.path);
    let media = media.split(';').next().unwrap_or(media);
    (media.to_string(), json!({"type": "string"}))
}

impl FileKind {
    /// How files of this kind are made: one declaration per kind.
    pub(crate) fn spec(self) -> FileSpec {
        match self {
            FileKind::Openapi => FileSpec {
                render: |db, _| openapi::openapi(db),
                check: None,
                count: None,
                response: |_, _, _| ("application/json".into(), openapi_document_schema()),
            },
            FileKind::DataJson => FileSpec {
                render: |db, output| data::data_json(db, data::StemKey::new(db, param_of(output))),
                check: None,
                count: Some(flat_row_count),
                response: |db, _, output| {
                    let key = data::StemKey::new(db, param_of(output));
                    ("application/json".into(), data::data_json_schema(db, key))
                },
            },
            FileKind::DataCsv => FileSpec {
                render: |db, output| data::data_csv(db, data::StemKey::new(db, param_of(output))),
                check: None,
                count: Some(flat_row_count),
                response: |_, _, _| {
                    let schema = json!({"type": "string", "description": "CSV (RFC 4180) with a header row."});
                    ("text/csv".into(), schema)
                },
            },
            FileKind::Datapackage => FileSpec {
                render: |db, _| data::datapackage(db, published::csv_digest),
                check: None,
                count: None,
                response: |_, _, _| ("application/json".into(), datapackage_schema()),
            },
            FileKind::DataLicence => FileSpec {
                render: |db, _| data::data_licence(db),
                check: None,
                count: None,
                response: |_, _, _| ("text/plain".into(), json!({"type": "string"})),
            },
            FileKind::DataReadme => FileSpec {
                render: |db, _| data::data_readme(db),
                check: None,
                count: None,
                response: |_, _, _| ("text/plain".into(), json!({"type": "string"})),
            },
            FileKind::Headers => FileSpec {
                render: |db, _| headers::headers(db),
                check: None,
                count: None,
                response: |_, _, _| ("text/plain".into(), json!({"type": "string"})),
            },
            FileKind::Asset => FileSpec {
                render: |db, output| {
                    assets::asset(db, assets::AssetKey::new(db, output.path.clone()))
                        .0
                        .clone()
                },
                check: Some(|db, output| {
                    assets::asset(db, assets::AssetKey::new(db, output.path.clone()))
                        .1
                        .clone()
                }),
                count: None,
                response: text_response,
            },
            FileKind::Llms => FileSpec {
                render: |db, _| llms::llms_txt(db),
                check: None,
                count: None,
                response: text_response,
            },
            FileKind::Calendar => FileSpec {
                render: |db, _| calendar::calendar_ics(db),
                check: None,
                count: Some(|db, _| Some(crate::derived::obligations::calendar(db).len() as u64)),
                response: |_, _, _| {
                    let schema = json!({"type": "string", "description": "An iCalendar (RFC 5545) file: one all-day event per dated phase."});
                    ("text/calendar".into(), schema)
                },
            },
            FileKind::SearchIndex => FileSpec {
                render: |db, _| search::search_index(db),
                check: None,
                count: Some(|db, _| Some(search::search_item_count(db) as u64)),
                response: |_, _, _| ("application/json".into(), search_index_schema()),
            },
            FileKind::Nojekyll => FileSpec {
                render: |db, _| nojekyll(db),
                check: None,
                count: None,
                response: |_, _, _| ("application/octet-stream".into(), json!({"type": "string"})),
            },
            FileKind::LlmsFull => FileSpec {
                render: |db, _| llms::llms_full_txt(db),
                check: None,
                count: None,
                response: text_response,
            },
            // Releases and changes (history.rs), and the crawler files (sitemap.rs).
            FileKind::ChangesFeed => FileSpec {
                render: |db, _| history::changes_feed(db),
                check: None,
                count: None,
                response: |_, _, _| {
                    let schema =
                        json!({"type": "string", "description": "An Atom 1.0 feed (RFC 4287)."});
                    ("application/xml".into(), schema)
                },
            },
            FileKind::Sitemap => FileSpec {
                render: |db, _| sitemap::sitemap(db),
                check: None,
                count: None,
                response: |_, _, _| {
                    let schema = json!({"type": "string", "description": "A sitemap (sitemaps.org protocol 0.9)."});
                    ("application/xml".into(), schema)
                },
            },
            FileKind::Robots => FileSpec {
                render: |db, _| sitemap::robots(db),
                check: None,
                count: None,
                response: text_response,
            },
            // Subscriptions per country and per ERP (history.rs, calendar.rs).
            FileKind::CountryFeed | FileKind::ErpFeed => FileSpec {
                render: |db, output| match output.renderer() {
                    Renderer::File(FileKind::ErpFeed) => history::erp_feed(db, &param_of(output)),
                    _ => history::country_feed(db, &param_of(output)),
                },
                check: None,
                count: None,
                response: |_, _, _| {
                    let schema =
                        json!({"type": "string", "description": "An Atom 1.0 feed (RFC 4287)."});
                    ("application/xml".into(), schema)
                },
            },
            FileKind::CountryCalendar => FileSpec {
                render: |db, output| calendar::country_calendar_ics(db, &param_of(output)),
                check: None,
                count: Some(|db, output| {
                    Some(calendar::country_calendar_count(db, &param_of(output)) as u64)
                }),
                response: |_, _, _| {
                    let schema = json!({"type": "string", "description": "An iCalendar (RFC 5545) file: one all-day event per dated phase of one country."});
                    ("text/calendar".into(), schema)
                },
            },
            FileKind::CompareColumn => FileSpec {
                render: |db, output| {
                    absolute_site_links(db, pages::compare::compare_column(db, &param_of(output)))
                },
                check: None,
                count: None,
                response: |_, _, _| ("application/json".into(), compare_column_schema()),
            },
        }
    }
}

/// A JSON file whose `href` members are written from the site's root (`/it/#x`), with each made an
/// absolute URL under the base URL: a client resolves a link against the URL of the file that holds it
/// (RFC 3986), and a path from the host's root would leave a site published under a path (`/locref/`).
/// `/assets/compare.js` takes an absolute link as it is.
fn absolute_site_links(db: &dyn salsa::Database, rendered: Rendered) -> Rendered {
    fn walk(value: &mut Value, base: &str) {
        match value {
            Value::Object(members) => {
                for (name, member) in members.iter_mut() {
                    match member {
                        Value::String(link) if name == "href" && link.starts_with('/') => {
                            *link = format!("{base}{link}");
                        }
                        _ => walk(member, base),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| walk(item, base)),
            _ => {}
        }
    }
    let Ok(mut value) = serde_json::from_slice::<Value>(&rendered.bytes()) else {
        return rendered;
    };
    walk(&mut value, crate::model::base_url(db));
    Rendered::new(json_bytes(&value))
}

/// A link of a file that is not the API's: an absolute URL, or a reference relative to the file.
fn link_schema(description: &str) -> Value {
    json!({"type": "string", "format": "uri-reference", "description": description})
}

/// The schema of `/api/openapi.json`: the members an OpenAPI 3.1 document has (the OpenAPI
/// specification's own schema holds the rest; openapi-spec-validator checks it in CI).
fn openapi_document_schema() -> Value {
    json!({
        "type": "object",
        "description": "An OpenAPI 3.1 document.",
        "required": ["openapi", "info", "servers", "paths", "components"],
        "properties": {
            "openapi": {"type": "string", "const": "3.1.0"},
            "info": {"type": "object", "required": ["title", "version"]},
            "servers": {"type": "array", "minItems": 1, "items": {"type": "object", "required": ["url"], "properties": {"url": {"type": "string", "format": "uri"}}}},
            "security": {"type": "array", "maxItems": 0},
            "paths": {"type": "object", "minProperties": 1, "additionalProperties": {"type": "object", "required": ["get"]}},
            "components": {"type": "object", "required": ["schemas", "responses"]},
        },
    })
}

/// The schema of `/data/datapackage.json`: the members of the Tabular Data Package it is (Frictionless
/// validates it whole in CI).
fn datapackage_schema() -> Value {
    let field = json!({
        "type": "object",
        "required": ["name", "type"],
        "properties": {
            "name": {"type": "string"},
            "type": {"enum": ["string", "date", "boolean", "integer", "number"]},
            "description": {"type": "string"},
            "trueValues": {"type": "array", "items": {"type": "string"}},
            "falseValues": {"type": "array", "items": {"type": "string"}},
            "constraints": {"type": "object"},
        },
    });
    json!({
        "type": "object",
        "description": "A Frictionless Tabular Data Package describing the flat data files: each file a resource with its Table Schema.",
        "required": ["profile", "name", "licenses", "resources"],
        "properties": {
            "profile": {"const": "tabular-data-package"},
            "name": {"type": "string"},
            "title": {"type": "string"},
            "version": {"type": "string"},
            "homepage": {"type": "string", "format": "uri"},
            "licenses": {"type": "array", "minItems": 1, "items": {"type": "object", "required": ["name", "path"]}},
            "resources": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "required": ["name", "profile", "schema"],
                    "properties": {
                        "name": {"type": "string", "pattern": "^[a-z0-9._-]+$"},
                        "profile": {"const": "tabular-data-resource"},
                        "path": link_schema("The file, relative to datapackage.json."),
                        "data": {"type": "array"},
                        "format": {"enum": ["csv", "json"]},
                        "bytes": {"type": "integer", "minimum": 0},
                        "hash": {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"},
                        "schema": {
                            "type": "object",
                            "required": ["fields"],
                            "properties": {"fields": {"type": "array", "minItems": 1, "items": field}},
                        },
                    },
                },
            },
        },
    })
}

/// The schema of `/search-index.json` (see [`search`]).
fn search_index_schema() -> Value {
    json!({
        "type": "object",
        "description": "The search index of the pages, what the search box of every page reads.",
        "required": ["version", "items"],
        "additionalProperties": false,
        "properties": {
            "version": {"type": "integer"},
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["k", "t", "u", "s"],
                    "additionalProperties": false,
                    "properties": {
                        "k": {"enum": ["country", "erp", "page", "fact"], "description": "The kind of item."},
                        "t": {"type": "string", "description": "The title shown."},
                        "u": link_schema("The page and anchor, relative to the site's root (where this file is)."),
                        "s": {"type": "string", "description": "The text searched beside the title."},
                        "a": {"type": "array", "items": {"type": "string"}, "description": "A country's other names it is found by: its code and its aliases (sources/registers/country_aliases.csv)."},
                    },
                },
            },
        },
    })
}

/// The schema of `/compare/{code}.json`, one country's column of the side-by-side view of `/compare/`.
fn compare_column_schema() -> Value {
    let link = json!({"type": "string", "format": "uri", "description": "Absolute URL of the page (and anchor) the cell links to."});
    let grade = json!({
        "type": ["object", "null"],
        "description": "The cell's grade as the pages say it; null where nothing is established.",
        "required": ["class", "text", "evidence", "checked"],
        "properties": {
            "class": {"type": "string"},
            "text": {"type": "string"},
            "evidence": {"type": ["string", "null"]},
            "checked": {"type": ["string", "null"]},
        },
    });
    let sources = json!({
        "type": "array",
        "items": {
            "type": "object",
            "required": ["url", "name"],
            "properties": {"url": {"type": "string", "format": "uri"}, "name": {"type": "string"}},
        },
    });
    json!({
        "type": "object",
        "description": "One country's column of the side-by-side view of /compare/ (what /assets/compare.js fetches for the chosen countries): its obligations' phases, the answers to how invoices are handled, and each ERP's support, each cell in words with its grade, sources and link, keyed by its row.",
        "required": ["code", "name", "href", "obligations", "questions", "erps"],
        "properties": {
            "code": {"type": "string"},
            "name": {"type": "string"},
            "href": link,
            "obligations": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["key", "phases"],
                    "properties": {
                        "key": {"type": "string"},
                        "phases": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "required": ["words", "href", "grade", "sources"],
                                "properties": {
                                    "phase": {"type": ["string", "null"]},
                                    "words": {"type": "string"},
                                    "href": link,
                                    "limit": {"type": ["string", "null"]},
                                    "absence": {"type": "boolean"},
                                    "grade": grade,
                                    "sources": sources,
                                },
                            },
                        },
                    },
                },
            },
            "questions": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["key", "answers"],
                    "properties": {
                        "key": {"type": "string"},
                        "answers": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "required": ["text", "obligations", "grade", "sources"],
                                "properties": {
                                    "text": {"type": "string"},
                                    "obligations": {
                                        "type": "array",
                                        "items": {
                                            "type": "object",
                                            "required": ["text", "href"],
                                            "properties": {"text": {"type": "string"}, "href": link},
                                        },
                                    },
                                    "grade": grade,
                                    "sources": sources,
                                },
                            },
                        },
                        "looked_at": {"type": ["string", "null"]},
                        "note": {"type": ["string", "null"]},
                    },
                },
            },
            "erps": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["key", "support", "class", "href", "grade", "sources"],
                    "properties": {
                        "key": {"type": "string"},
                        "support": {"type": "string"},
                        "class": {"type": "string"},
                        "href": link,
                        "grade": grade,
                        "sources": sources,
                    },
                },
            },
        },
    })
}

/// `/.nojekyll`: empty; its presence is the message.
fn nojekyll(_db: &dyn salsa::Database) -> Rendered {
    Rendered::new(Vec::new())
}

/// Hands the pieces of a site-wide list to `publish` as they are made, each part made for the occasion
/// rather than kept by its query (a one-off build makes each once): the same pieces as [`render`], so
/// the same bytes and content hash, but only one part is held at a time.
pub(crate) use crate::site::ListStream;

/// How a one-off build hands `output` over piece by piece instead of rendering it whole, or `None` for
/// an output it renders whole: the site-wide lists spliced from one part per country (at scale, tens
/// of megabytes each), which nothing else in the build reads.
pub(crate) fn stream_list(output: &Output) -> Option<ListStream> {
    match output.renderer() {
        Renderer::Api(ApiKind::Facts) => Some(api::stream_facts),
        Renderer::Api(ApiKind::Changes) => Some(history::stream_changes),
        Renderer::File(FileKind::DataJson) => Some(data::stream_json),
        Renderer::Api(_) | Renderer::Page(..) | Renderer::File(_) => None,
    }
}

/// Whether a one-off build hands `output` over piece by piece (see [`stream_list`]).
pub fn is_streamed_list(output: &Output) -> bool {
    stream_list(output).is_some()
}

/// Names of the tracked functions that executed since the last call, sorted, one entry per execution
/// (what `locref watch` reports and the incremental tests snapshot). An output's rendering is named by
/// its renderer (`output_file(api_facts)`, `output_file(page_country_md)`), a page's context and part
/// by their kind: which outputs were made again is what a reader wants to see.
pub fn take_executed(db: &crate::db::Db) -> Vec<String> {
    named_keys(db, db.take_executed_keys())
}

/// The memos found valid since the last call, named as [`take_executed`] names them (recorded once
/// [`crate::db::Db::record_validations`] was called).
pub fn take_validated(db: &crate::db::Db) -> Vec<String> {
    named_keys(db, db.take_validated_keys())
}

fn named_keys(db: &crate::db::Db, keys: Vec<salsa::DatabaseKeyIndex>) -> Vec<String> {
    use salsa::plumbing::FromId;
    let mut names: Vec<String> = keys
        .iter()
        .map(|key| {
            let name = salsa::Database::ingredient_debug_name(db, key.ingredient_index());
            match &*name {
                "output_file" => {
                    let output = OutputKey::from_id(key.key_index());
                    format!("output_file({})", output.output(db).renderer().name())
                }
                "page_context" => {
                    let page = pages::context::PageContextKey::from_id(key.key_index());
                    format!("page_context({})", <&str>::from(page.kind(db)))
                }
                "page_part" => {
                    let part = pages::parts::PartKey::from_id(key.key_index());
                    let (kind, _) = pages::parts::page_of_part(db, part);
                    format!("page_part({})", <&str>::from(kind))
                }
                _ => name.into_owned(),
            }
        })
        .collect();
    names.sort();
    names
}
