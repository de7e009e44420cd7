//! Render: one tracked query per output file, returning its bytes.
//!
//! The bytes carry a placeholder where `meta.generated_at` goes: the content hash covers everything but
//! the build time, and the emit step stamps the time of the build that last changed the content.

pub mod api;
pub mod assets;
pub mod calendar;
pub mod data;
pub mod escape;
pub mod figures;
pub mod headers;
pub mod history;
pub mod llms;
pub mod openapi;
pub mod page_figures;
pub mod pages;
pub mod parts;
pub mod search;

use std::sync::Arc;

use serde_json::{Value, json};

use crate::diagnostics::Diagnostic;
pub use crate::kinds::{ApiKind, FileKind, FlatTable, Format, PageKind, Renderer};
use crate::routes::Output;

/// How an output of a kind is rendered, from the output's placeholder value (and, for assets, its path).
/// Not memoized itself: [`output_file`] memoizes every output.
pub type RenderFn = fn(&dyn salsa::Database, &Output) -> Rendered;

/// How many records an output lists, for `index.json`.
pub type CountFn = fn(&dyn salsa::Database, &Output) -> Option<u64>;

/// Why a file cannot be rendered (a missing asset).
pub(crate) type CheckFn = fn(&dyn salsa::Database, &Output) -> Option<Diagnostic>;

/// A piece of an output's bytes, made once and shared, never copied, by every output made of it: most
/// outputs are one piece (a page, an API detail), a list spliced from per-country parts holds each part
/// as its own memoized query made it (`facts.json`, the flat files), `llms-full.txt` holds each twin's
/// condensed text. Its blake3 is computed when it is made, so an output made of pieces is hashed from
/// the hashes of its pieces: an edit that makes one part again hashes that part's bytes, not the list's.
#[derive(Debug, Clone)]
pub struct Piece {
    bytes: bytes::Bytes,
    hash: blake3::Hash,
    /// Where the piece holds a `generated_at` placeholder, found the first time an output is published
    /// with it and shared by every clone: a watch session publishes the same pieces edit after edit
    /// (each condensed twin of `llms-full.txt`, each country's part of a list), and scanning them all
    /// again was a tenth of an x100 edit.
    placeholders: std::sync::Arc<Placeholders>,
}

/// The positions of each form of the `generated_at` placeholder in a piece (see [`Piece`]).
#[derive(Debug, Default)]
struct Placeholders {
    json: std::sync::OnceLock<Box<[usize]>>,
    raw: std::sync::OnceLock<Box<[usize]>>,
}

/// Equal when the content hashes are (as [`Rendered`]).
impl PartialEq for Piece {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash
    }
}

impl Eq for Piece {}

impl Piece {
    /// A piece of `bytes` (a `Vec<u8>` or `String` is taken without a copy).
    pub fn new(bytes: impl Into<bytes::Bytes>) -> Piece {
        let bytes = bytes.into();
        let hash = blake3::hash(&bytes);
        Piece {
            bytes,
            hash,
            placeholders: Default::default(),
        }
    }

    /// Where the piece holds [`GENERATED_AT_JSON`] (`json`) or [`GENERATED_AT_MARK`]: found once per
    /// piece, then remembered.
    pub(crate) fn generated_at_marks(&self, json: bool) -> &[usize] {
        let (once, mark) = match json {
            true => (&self.placeholders.json, GENERATED_AT_JSON),
            false => (&self.placeholders.raw, GENERATED_AT_MARK),
        };
        // memchr's SIMD search: pieces reach tens of megabytes.
        once.get_or_init(|| memchr::memmem::find_iter(&self.bytes, mark.as_bytes()).collect())
    }

    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The piece's buffer itself, shared (a clone counts a reference; nothing is copied).
    pub fn shared(&self) -> bytes::Bytes {
        self.bytes.clone()
    }

    /// The piece as text: every renderer writes UTF-8 (see [`text_of`]).
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        text_of(&self.bytes)
    }

    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The first `len` bytes of the piece, shared with it (not copied).
    pub(crate) fn prefix(&self, len: usize) -> Piece {
        Piece::new(self.bytes.slice(..len))
    }
}

/// The content hash of an output made of pieces (see [`Rendered::hash`]), fed one piece at a time: what
/// a one-off build computes of an output it hands over piece by piece, never holding them all.
#[derive(Default, Clone)]
pub(crate) struct PieceHasher {
    pieces: usize,
    first: Option<blake3::Hash>,
    all: blake3::Hasher,
}

impl PieceHasher {
    /// The next piece (an empty one counts for nothing, as in [`Rendered::from_pieces`]).
    pub(crate) fn update(&mut self, piece: &Piece) {
        if piece.is_empty() {
            return;
        }
        self.pieces += 1;
        self.first.get_or_insert(piece.hash);
        self.all.update(piece.hash.as_bytes());
        self.all.update(&(piece.len() as u64).to_le_bytes());
    }

    pub(crate) fn finalize(&self) -> blake3::Hash {
        match (self.pieces, self.first) {
            (0, _) => blake3::hash(b""),
            (1, Some(hash)) => hash,
            _ => self.all.finalize(),
        }
    }
}

/// The bytes of one output, with [`GENERATED_AT_MARK`] where the build time goes, as one or more
/// [`Piece`]s.
#[derive(Debug, Clone, Eq)]
pub struct Rendered {
    pieces: Arc<[Piece]>,
    /// The content hash the manifest compares: the blake3 of the bytes for an output of one piece; for
    /// several, the blake3 of each piece's hash and length in order, which identifies the content as
    /// well without reading the pieces again.
    pub hash: blake3::Hash,
}

/// Equal when the content hashes are: salsa compares a re-rendered output with its last value to decide
/// whether anything downstream must run, and comparing a 1 MB output byte by byte costs more than the 32
/// bytes of a blake3 hash (which identifies the content).
impl PartialEq for Rendered {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash
    }
}

impl Rendered {
    /// An output of one piece.
    pub fn new(bytes: Vec<u8>) -> Self {
        Rendered::from_pieces([Piece::new(bytes)])
    }

    /// An output made of `pieces`, in order (empty pieces are left out).
    pub fn from_pieces(pieces: impl IntoIterator<Item = Piece>) -> Self {
        let pieces: Arc<[Piece]> = pieces.into_iter().filter(|p| !p.is_empty()).collect();
        let mut hasher = PieceHasher::default();
        pieces.iter().for_each(|piece| hasher.update(piece));
        Rendered {
            pieces,
            hash: hasher.finalize(),
        }
    }

    /// The pieces, in order; their concatenation is the output.
    pub fn pieces(&self) -> &[Piece] {
        &self.pieces
    }

    /// The number of bytes.
    pub fn len(&self) -> usize {
        self.pieces.iter().map(Piece::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    /// The text's lines, each with its `\n`, read across the pieces as they are: only a line that runs
    /// over the end of a piece is copied together (a twin made of parts is tens of megabytes). Every
    /// renderer of text writes UTF-8; a piece that is not (an asset) is read up to its first invalid byte.
    pub(crate) fn lines(&self) -> Lines<'_> {
        Lines {
            pieces: self.pieces.iter(),
            current: "",
        }
    }

    /// The bytes in one slice: borrowed for an output of one piece (every page), copied together for
    /// a list of pieces (which only tests and the dev server ask for whole).
    pub fn bytes(&self) -> std::borrow::Cow<'_, [u8]> {
        match &*self.pieces {
            [] => std::borrow::Cow::Borrowed(&[]),
            [one] => std::borrow::Cow::Borrowed(one.bytes()),
            several => {
                let mut all = Vec::with_capacity(self.len());
                for piece in several {
                    all.extend_from_slice(piece.bytes());
                }
                std::borrow::Cow::Owned(all)
            }
        }
    }
}

/// The lines of a [`Rendered`] (see [`Rendered::lines`]).
pub(crate) struct Lines<'a> {
    pieces: std::slice::Iter<'a, Piece>,
    /// What is left of the piece being read.
    current: &'a str,
}

impl<'a> Lines<'a> {
    fn next_piece(&mut self) -> Option<&'a str> {
        let bytes = self.pieces.next()?.bytes();
        Some(match std::str::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default(),
        })
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = std::borrow::Cow<'a, str>;

    fn next(&mut self) -> Option<Self::Item> {
        while self.current.is_empty() {
            self.current = self.next_piece()?;
        }
        let ends = |text: &str| memchr::memchr(b'\n', text.as_bytes()).map(|i| i + 1);
        if let Some(end) = ends(self.current) {
            let (line, rest) = self.current.split_at(end);
            self.current = rest;
            return Some(std::borrow::Cow::Borrowed(line));
        }
        // The line goes on in the next pieces.
        let mut line = std::mem::take(&mut self.current).to_string();
        while let Some(next) = self.next_piece() {
            match ends(next) {
                Some(end) => {
                    line.push_str(&next[..end]);
                    self.current = &next[end..];
                    break;
                }
                None => line.push_str(next),
            }
        }
        Some(std::borrow::Cow::Owned(line))
    }
}

/// The value given to `meta.generated_at` while rendering. Sources cannot contain control characters, so
/// its JSON form [`GENERATED_AT_JSON`] appears in an output only where the build time goes.
pub(crate) const GENERATED_AT_MARK: &str = "\u{0}generated_at\u{0}";
/// [`GENERATED_AT_MARK`] as serde_json writes it inside a JSON string.
pub(crate) const GENERATED_AT_JSON: &str = "\\u0000generated_at\\u0000";

/// Rendered bytes as text: every renderer writes UTF-8, so this borrows them (std's validation, with its
/// ASCII fast path, is several times faster on a large page than the lossy decoder, which is kept only
/// for bytes that are not UTF-8).
pub(crate) fn text_of(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// One output file as a query key.
#[salsa::interned(debug)]
pub(crate) struct OutputKey<'db> {
    #[returns(ref)]
    pub output: Output,
}

/// One output rendered: its bytes, or (a page with a broken template, a missing asset) the problem
/// that stopped it, which the build reports as a diagnostic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedFile {
    pub rendered: Rendered,
    pub error: Option<Diagnostic>,
}

impl RenderedFile {
    pub(crate) fn of(rendered: Rendered) -> Self {
        RenderedFile {
            rendered,
            error: None,
        }
    }

    pub(crate) fn failed(error: Diagnostic) -> Self {
        RenderedFile {
            rendered: Rendered::new(Vec::new()),
            error: Some(error),
        }
    }
}

/// The one memoized query per output file: only outputs whose inputs changed are rendered again.
///
/// Its values are the bytes of the site, so it is the query a build sheds memory by: declared with no
/// capacity limit (a session keeps every output), it is given one by a one-off build, which writes each
/// output and then evicts it (see [`crate::memory`]).
#[salsa::tracked(returns(ref), lru = 0)]
pub(crate) fn output_file<'db>(db: &'db dyn salsa::Database, key: OutputKey<'db>) -> RenderedFile {
    let output = key.output(db);
    match output.renderer {
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

/// What a rebuild compares of an output without its bytes: its content hash, and why it could not be
/// rendered. A small value kept for every output, so a session
/// can let [`output_file`]'s bytes go once they are written and still tell which outputs an edit
/// changed: an output whose inputs did not change is verified by its dependencies, and its bytes are
/// never asked for again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Digest {
    pub hash: blake3::Hash,
    /// The number of bytes.
    pub len: usize,
    pub error: Option<Diagnostic>,
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
    match output.renderer {
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

/// The value of an output's placeholder (`it`, `odoo`, `matrix`), or `""` for an output without one.
pub(crate) fn param_of(output: &Output) -> String {
    output.param.clone().unwrap_or_default()
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
                render: |db, _| data::datapackage(db),
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
                count: Some(|db, _| Some(crate::derive::obligations::calendar(db).len() as u64)),
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
            // Releases and changes, and the crawler files (history.rs).
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
                render: |db, _| history::sitemap(db),
                check: None,
                count: None,
                response: |_, _, _| {
                    let schema = json!({"type": "string", "description": "A sitemap (sitemaps.org protocol 0.9)."});
                    ("application/xml".into(), schema)
                },
            },
            FileKind::Robots => FileSpec {
                render: |db, _| history::robots(db),
                check: None,
                count: None,
                response: text_response,
            },
            // Subscriptions per country and per ERP (history.rs, calendar.rs).
            FileKind::CountryFeed | FileKind::ErpFeed => FileSpec {
                render: |db, output| match output.renderer {
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

/// What one output holds, for the documents that describe outputs one by one (`openapi.json`,
/// `llms.txt`): its route's description, or for a filter the filter's own description, or for a flat
/// file its table's description followed by the route's.
pub(crate) fn output_description(db: &dyn salsa::Database, output: &Output) -> String {
    let rules = &crate::parse::rules::route_rules(db).value;
    let rule_description = rules[output.route].description.clone().unwrap_or_default();
    let param = output.param.as_deref().unwrap_or_default();
    match output.renderer {
        Renderer::Api(ApiKind::Filter) => crate::parse::rules::filter_rules(db)
            .value
            .iter()
            .find(|f| f.slug == param)
            .map(|f| f.description.clone())
            .unwrap_or_default(),
        Renderer::File(FileKind::DataJson | FileKind::DataCsv) => {
            format!("{} {rule_description}", data::stem_description(param))
        }
        Renderer::Api(_) | Renderer::Page(..) | Renderer::File(_) => rule_description,
    }
}

/// Pretty JSON with a final newline: what every JSON output looks like.
pub(crate) fn json_bytes<T: serde::Serialize>(value: &T) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(value).expect("resources serialize");
    bytes.push(b'\n');
    bytes
}

/// Items of a JSON array, pretty-printed and indented by `indent` spaces, joined by `,\n`: a fragment of
/// a big list, cached per country, so that one edit re-serializes one country's items and not 1 MB.
/// [`splice_items`] assembles the fragments into the same bytes as [`json_bytes`] of the whole value.
pub(crate) fn json_items<T: serde::Serialize>(items: &[T], indent: usize) -> Piece {
    let pad = " ".repeat(indent);
    let mut out = String::new();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(",\n");
        }
        let text = serde_json::to_string_pretty(item).expect("resources serialize");
        // Strings in JSON never hold a raw line break, so every line start is a place to indent.
        for (j, line) in text.split('\n').enumerate() {
            if j > 0 {
                out.push('\n');
            }
            out.push_str(&pad);
            out.push_str(line);
        }
    }
    Piece::new(out)
}

/// `head` ([`json_bytes`] of a value whose last array is empty) with that array filled by `fragments`
/// (from [`json_items`], indented one level deeper than the array's line), as pieces: the fragments
/// are shared, not copied, so a list holds no second copy of what its parts' queries keep.
pub(crate) fn splice_items<'a>(
    head: &[u8],
    fragments: impl IntoIterator<Item = &'a Piece>,
) -> Rendered {
    let mut pieces = Vec::new();
    splice_items_into(head, fragments.into_iter().cloned(), &mut |piece| {
        pieces.push(piece)
    });
    Rendered::from_pieces(pieces)
}

/// The pieces of [`splice_items`], handed to `emit` as each fragment comes: what a one-off build writes
/// of a site-wide list without holding it ([`stream_list`]). The same pieces, so the same content hash.
pub(crate) fn splice_items_into(
    head: &[u8],
    fragments: impl IntoIterator<Item = Piece>,
    emit: &mut dyn FnMut(Piece),
) {
    let at = memchr::memmem::rfind(head, b"[]").expect("the head ends with an empty array");
    let line_start = head[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let indent = head[line_start..]
        .iter()
        .take_while(|&&b| b == b' ')
        .count();
    let mut started = false;
    for fragment in fragments.into_iter().filter(|f| !f.is_empty()) {
        let separator: &'static [u8] = match started {
            false => {
                emit(Piece::new(head[..=at].to_vec()));
                b"\n"
            }
            true => b",\n",
        };
        started = true;
        emit(Piece::new(separator));
        emit(fragment);
    }
    if !started {
        // An empty list is the head as it is: one piece.
        return emit(Piece::new(head.to_vec()));
    }
    let mut tail = vec![b'\n'];
    tail.extend(std::iter::repeat_n(b' ', indent));
    tail.extend_from_slice(&head[at + 1..]);
    emit(Piece::new(tail));
}

/// Hands the pieces of a site-wide list to `emit` as they are made, each part made for the occasion
/// rather than kept by its query (a one-off build makes each once): the same pieces as [`render`], so
/// the same bytes and content hash, but only one part is held at a time.
pub(crate) type ListStream = fn(&dyn salsa::Database, &Output, &mut dyn FnMut(Piece));

/// How a one-off build hands `output` over piece by piece instead of rendering it whole, or `None` for
/// an output it renders whole: the site-wide lists spliced from one part per country (at scale, tens
/// of megabytes each), which nothing else in the build reads.
pub(crate) fn stream_list(output: &Output) -> Option<ListStream> {
    match output.renderer {
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
                    format!("output_file({})", output.output(db).renderer.name())
                }
                "page_context" => {
                    let page = pages::PageContextKey::from_id(key.key_index());
                    format!("page_context({})", <&str>::from(page.kind(db)))
                }
                "page_part" => {
                    let part = parts::PartKey::from_id(key.key_index());
                    format!("page_part({})", <&str>::from(part.kind(db)))
                }
                _ => name.into_owned(),
            }
        })
        .collect();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    proptest::proptest! {
        /// Lines read across pieces are the lines of the text the pieces make, wherever the pieces
        /// are cut (mid-line, at a line end, into several pieces on one line).
        #[test]
        fn lines_across_pieces_are_the_lines_of_the_whole(
            text in "[ab\n]{0,40}",
            cuts in proptest::collection::vec(0usize..40, 0..6),
        ) {
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(text.len())).collect();
            cuts.push(0);
            cuts.push(text.len());
            cuts.sort();
            let pieces = cuts.windows(2).map(|w| Piece::new(text[w[0]..w[1]].to_string()));
            let rendered = Rendered::from_pieces(pieces);
            let lines: Vec<String> = rendered.lines().map(|l| l.into_owned()).collect();
            let expected: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
            proptest::prop_assert_eq!(lines, expected);
        }
    }

    #[test]
    fn a_pieces_placeholders_are_found_once_and_shared_by_its_clones() {
        let piece = Piece::new(format!(
            "a{GENERATED_AT_MARK}b{GENERATED_AT_JSON}c{GENERATED_AT_MARK}"
        ));
        let raw_at = 1 + GENERATED_AT_MARK.len() + 1 + GENERATED_AT_JSON.len() + 1;
        assert_eq!(piece.generated_at_marks(false), [1, raw_at]);
        assert_eq!(
            piece.generated_at_marks(true),
            [2 + GENERATED_AT_MARK.len()]
        );
        // A clone (a list holding the part) reads the same positions, not a second scan.
        let clone = piece.clone();
        assert!(std::ptr::eq(
            clone.generated_at_marks(false),
            piece.generated_at_marks(false)
        ));
    }

    #[test]
    fn spliced_fragments_are_the_bytes_of_the_whole_value() {
        let items = [
            json!({"id": "a", "nested": {"list": [1, 2], "empty": [], "none": {}}, "text": "two\nlines"}),
            json!({"id": "b", "urls": ["https://x.example/"]}),
            json!({"id": "c"}),
        ];
        let whole = json!({"meta": {"count": 3}, "data": items});
        let head = json!({"meta": {"count": 3}, "data": []});
        // Fragments of any split (an empty one included) give the bytes of the whole value.
        let fragments = [
            json_items(&items[..1], 4),
            Piece::new(""),
            json_items(&items[1..], 4),
        ];
        let spliced = splice_items(&json_bytes(&head), &fragments);
        assert_eq!(
            String::from_utf8(spliced.bytes().into_owned()).unwrap(),
            String::from_utf8(json_bytes(&whole)).unwrap()
        );
        // The fragments are shared, not copied.
        assert_eq!(
            spliced.pieces()[2].bytes().as_ptr(),
            fragments[0].bytes().as_ptr()
        );
        // A top-level array, and an empty list.
        let top = splice_items(&json_bytes(&json!([])), [&json_items(&items, 2)]);
        assert_eq!(top.bytes(), json_bytes(&json!(items)));
        assert_eq!(
            splice_items(&json_bytes(&head), [&Piece::new("")]).bytes(),
            json_bytes(&head)
        );
    }
}
