//! `/api/openapi.json`: OpenAPI 3.1. Paths come from the route table; schemas come from the Rust resource
//! types through schemars, so the document describes exactly what the build emits.

use crate::kinds::RendererOf;
use schemars::JsonSchema;
use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde_json::{Map, Value, json};

use super::envelope::json_bytes;
use crate::kinds::{ApiKind, FileKind};
use crate::model::{base_url, reference_date};
use crate::output::Rendered;
use crate::parse::rules::{OpenapiMode, route_rules, site_rules, toggle_rules};
use crate::routes::{Output, Param, Renderer, outputs, param_values};
use crate::serve::ApiError;

/// A schema generator whose `$ref`s point into `#/components/schemas/` (OpenAPI 3.1 = JSON Schema 2020-12).
pub fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .for_serialize()
        .with(|s| {
            s.definitions_path = "/components/schemas".into();
            s.meta_schema = None;
        })
        .into_generator()
}

/// The schema of `T` in `components.schemas`, as a reference.
pub(crate) fn schema_of<T: JsonSchema>(generator: &mut SchemaGenerator) -> Value {
    serde_json::to_value(generator.subschema_for::<T>()).expect("schema serializes")
}

/// The response body schema of an output (for `{stem}` routes, of that table), as its kind declares it.
fn response_schema(
    db: &dyn salsa::Database,
    generator: &mut SchemaGenerator,
    output: &Output,
) -> (String, Value) {
    match output.renderer() {
        Renderer::Api(kind) => ("application/json".into(), (kind.spec().schema)(generator)),
        Renderer::File(kind) => (kind.spec().response)(db, generator, output),
        // Pages and their twins: text of the media type their path names.
        Renderer::Page(..) => {
            let media = crate::routes::media_type(&output.path);
            let media = media.split(';').next().unwrap_or(media);
            (media.to_string(), json!({"type": "string"}))
        }
    }
}

/// The toggles' descriptions come from `rules/toggles.toml`, with the reference date filled in.
fn describe_toggles(db: &dyn salsa::Database, schemas: &mut Map<String, Value>) {
    let reference = reference_date(db);
    let Some(properties) = schemas
        .get_mut("Toggles")
        .and_then(|t| t.get_mut("properties"))
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    for rule in &toggle_rules(db).value {
        if let Some(property) = properties
            .get_mut(&rule.name)
            .and_then(Value::as_object_mut)
        {
            let text = rule.description.replace("{reference_date}", reference);
            property.insert(
                "description".into(),
                Value::String(format!("{text} null = unknown.")),
            );
        }
    }
}

pub fn openapi(db: &dyn salsa::Database) -> Rendered {
    Rendered::new(json_bytes(openapi_document(db)))
}

/// The OpenAPI document as a value: `/api/openapi.json`, and what the API docs page is generated from.
#[salsa::tracked(returns(ref))]
pub fn openapi_document(db: &dyn salsa::Database) -> Value {
    let site = &site_rules(db).value;
    let rules = &route_rules(db).value;
    let mut generator = generator();
    let mut paths = Map::new();
    let mut described_routes = std::collections::BTreeSet::new();
    let cors = json!({"Access-Control-Allow-Origin": {"description": "Always `*`.", "schema": {"type": "string", "const": "*"}}});
    // The dev server answers with the ApiError body; a static host (GitHub Pages, Netlify, Cloudflare
    // Pages) with a page of its own: the site's /404.html for an unknown path.
    let error = |description: &str, generator: &mut SchemaGenerator| {
        json!({
            "description": description,
            "headers": cors,
            "content": {
                "application/json": {"schema": schema_of::<ApiError>(generator)},
                "text/html": {"schema": {"type": "string", "description": "What a static host answers instead: its own error page (for a 404, the site's `/404.html` where the host serves it)."}},
            },
        })
    };
    // The errors every path can give, with the ApiError body (as the dev server sends them too).
    let mut method_not_allowed = error(
        "Not GET or HEAD: the service only reads. `Allow` lists the methods. `locref serve` answers \
         with the JSON error body; a static host with an error page of its own.",
        &mut generator,
    );
    method_not_allowed["headers"]["Allow"] =
        json!({"description": "`GET, HEAD`.", "schema": {"type": "string"}});
    let error_responses = json!({
        "BadRequest": error(
            "The request is not one the service reads: a malformed head, a body, or a path outside \
             the site. A request head over 16 KiB is answered 431 with the same body. `locref serve` \
             answers with the JSON error body; a static host with an error page of its own.",
            &mut generator,
        ),
        "NotFound": error(
            "No such path: any path under `/api/` that is not listed in `/api/v1/index.json`, or a \
             path parameter outside its listed values. `locref serve` answers with the JSON error body; \
             a static host answers with its own 404, the site's HTML page `/404.html` where the host \
             serves it (GitHub Pages, Netlify and Cloudflare Pages do).",
            &mut generator,
        ),
        "MethodNotAllowed": method_not_allowed,
    });
    for output in outputs(db) {
        let rule = &rules[output.route];
        let Some(mode) = rule.openapi else { continue };
        let param = output.renderer().param();
        let templated = mode == OpenapiMode::Template && param != Param::None;
        if templated && !described_routes.insert(output.route) {
            continue;
        }
        let path = if templated {
            rule.path.clone()
        } else {
            output.path.clone()
        };
        let description = output_description(db, output);
        let (media_type, schema) = response_schema(db, &mut generator, output);
        let mut responses = Map::new();
        responses.insert(
            "200".into(),
            json!({"description": "OK", "headers": cors, "content": {media_type: {"schema": schema}}}),
        );
        let mut operation = Map::new();
        let operation_id = path
            .trim_start_matches('/')
            .replace(['/', '.', '{', '}', '-'], "_");
        operation.insert("operationId".into(), Value::String(operation_id));
        operation.insert("summary".into(), Value::String(description.clone()));
        // No key, token or credential (SPEC, Authentication): said per operation, not left unsaid.
        operation.insert("security".into(), json!([]));
        if templated {
            let name = param.name().unwrap_or_default();
            let values = param_values(db, param);
            operation.insert(
                "parameters".into(),
                json!([{
                    "name": name,
                    "in": "path",
                    "required": true,
                    "description": format!("One of the {} listed values, lower case.", values.len()),
                    "schema": {"type": "string", "enum": values},
                }]),
            );
            responses.insert(
                "404".into(),
                json!({"$ref": "#/components/responses/NotFound", "description": format!("Unknown {name}.")}),
            );
        }
        responses.insert(
            "400".into(),
            json!({"$ref": "#/components/responses/BadRequest"}),
        );
        responses.insert(
            "405".into(),
            json!({"$ref": "#/components/responses/MethodNotAllowed"}),
        );
        operation.insert("responses".into(), Value::Object(responses));
        paths.insert(path, json!({"get": operation}));
    }
    let mut schemas = generator.take_definitions(true);
    describe_toggles(db, &mut schemas);
    let base = base_url(db);
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": site.title,
            "version": "1.0.0",
            "description": format!("{} {} Data version: {}.", site.description, site.informational_notice, site.version),
            "license": {"name": site.api_licence.name, "url": site.api_licence.url},
            "contact": {"email": site.api_licence.commercial_contact},
        },
        "servers": [{"url": base, "description": "The site's base URL. Every `path`, `api_url` and `commercial_licence` the API gives as site-relative (starting with `/`; the SPEC fixes that form) is a path under it: its URL is this URL followed by the path, as OpenAPI joins `paths` to a server. The link fields whose schema says `format: uri` are absolute URLs that carry it already."}],
        "security": [],
        "paths": paths,
        "components": {"schemas": schemas, "responses": error_responses},
    })
}

/// What one output holds, for the documents that describe outputs one by one (`openapi.json`,
/// `llms.txt`): its route's description, or for a filter the filter's own description, or for a flat
/// file its table's description followed by the route's.
pub(crate) fn output_description(db: &dyn salsa::Database, output: &Output) -> String {
    let rules = &crate::parse::rules::route_rules(db).value;
    let rule_description = rules[output.route].description.clone().unwrap_or_default();
    let param = output.param.as_deref().unwrap_or_default();
    match output.renderer() {
        Renderer::Api(ApiKind::Filter) => crate::parse::rules::filter_rules(db)
            .value
            .iter()
            .find(|f| f.slug == param)
            .map(|f| f.description.clone())
            .unwrap_or_default(),
        Renderer::File(FileKind::DataJson | FileKind::DataCsv) => {
            format!(
                "{} {rule_description}",
                super::data::stem_description(param)
            )
        }
        Renderer::Api(_) | Renderer::Page(..) | Renderer::File(_) => rule_description,
    }
}
