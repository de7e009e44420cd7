//! The API documentation page (`/api/` and its twin), generated from the OpenAPI document (which is
//! generated from the route table and the resource types), so the docs cannot drift from what is served.
//!
//! The context lists every path with its summary, parameter values and response, and every schema with
//! its fields. The try-it control of the HTML page (`rules/assets/try-it.js`) works on the same list.

use serde::Serialize;
use serde_json::{Map, Value as Json};

use super::context::{PageSpec, page};
use super::shared::{SiteContext, site_context, to_json};
use crate::model::{base_url, countries, erps};
use crate::render::openapi::openapi_document;

/// The schema name a `$ref` points to (`#/components/schemas/Country` -> `Country`).
fn ref_name(schema: &Json) -> Option<&str> {
    schema
        .get("$ref")?
        .as_str()?
        .strip_prefix("#/components/schemas/")
}

/// A schema's type as a reader says it: `string or null`, `array of Fact`, `Toggles`, `one of: a, b`.
fn type_label(schema: &Json) -> String {
    if let Some(name) = ref_name(schema) {
        return name.to_string();
    }
    if let Some(values) = schema.get("enum").and_then(Json::as_array) {
        let values: Vec<String> = values
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
            .collect();
        return format!("one of: {}", values.join(", "));
    }
    if let Some(value) = schema.get("const") {
        return format!("always {value}");
    }
    for combinator in ["anyOf", "oneOf"] {
        if let Some(options) = schema.get(combinator).and_then(Json::as_array) {
            let labels: Vec<String> = options.iter().map(type_label).collect();
            return labels.join(" or ");
        }
    }
    let types: Vec<&str> = match schema.get("type") {
        Some(Json::String(t)) => vec![t.as_str()],
        Some(Json::Array(ts)) => ts.iter().filter_map(Json::as_str).collect(),
        _ => return "any".into(),
    };
    types
        .iter()
        .map(|t| match *t {
            "array" => match schema.get("items") {
                Some(items) => format!("array of {}", type_label(items)),
                None => "array".into(),
            },
            other => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" or ")
}

/// The schemas a type label mentions, so the page can link them.
fn referenced(schema: &Json, out: &mut Vec<String>) {
    match schema {
        Json::Object(map) => {
            if let Some(name) = ref_name(schema) {
                out.push(name.to_string());
            }
            map.values().for_each(|v| referenced(v, out));
        }
        Json::Array(items) => items.iter().for_each(|v| referenced(v, out)),
        _ => {}
    }
}

/// A field of a resource schema as the API docs page lists it.
#[derive(Serialize)]
struct Field<'a> {
    name: &'a str,
    #[serde(rename = "type")]
    kind: String,
    /// The schemas it refers to.
    links: Vec<String>,
    required: bool,
    description: &'a str,
}

/// One row per field of an object schema.
fn fields(schema: &Json) -> Vec<Field<'_>> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Json::as_array)
        .map(|r| r.iter().filter_map(Json::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Json::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, property)| {
            let mut links = Vec::new();
            referenced(property, &mut links);
            Field {
                name,
                kind: type_label(property),
                links,
                required: required.contains(&name.as_str()),
                description: property
                    .get("description")
                    .and_then(Json::as_str)
                    .unwrap_or(""),
            }
        })
        .collect()
}

/// A parameter value with the name of what it identifies (a country or an ERP).
fn value_label(db: &dyn salsa::Database, value: &str) -> String {
    let name = countries(db)
        .iter()
        .find(|c| c.code == value)
        .map(|c| c.name.clone())
        .or_else(|| {
            erps(db)
                .iter()
                .find(|e| e.id == value)
                .map(|e| e.name.clone())
        });
    match name {
        Some(name) => format!("{value} ({name})"),
        None => value.to_string(),
    }
}

/// What the API docs page shows: the base URL, every path of the OpenAPI document (with the allowed
/// values of its parameter), and the resource schemas with their fields. Values taken from the OpenAPI
/// document as they are there (a summary, a parameter's name) are its JSON values.
#[derive(Serialize)]
pub(super) struct ApiDocsContext<'a> {
    site: &'a SiteContext,
    base_url: &'a str,
    openapi_version: &'a Json,
    endpoints: Vec<Endpoint<'a>>,
    resources: Vec<Resource<'a>>,
}

/// A path of the OpenAPI document.
#[derive(Serialize)]
struct Endpoint<'a> {
    path: &'a str,
    summary: &'a Json,
    parameter: Option<Parameter<'a>>,
    media_type: String,
    response: String,
    links: Vec<String>,
    not_found: bool,
    try_it: bool,
}

/// A path's parameter, with its allowed values.
#[derive(Serialize)]
struct Parameter<'a> {
    name: &'a Json,
    placeholder: String,
    values: Vec<&'a str>,
    /// The try-it control names each value: `it (Italy)`, `odoo (Odoo)`.
    options: Vec<ParameterOption<'a>>,
    description: &'a Json,
}

#[derive(Serialize)]
struct ParameterOption<'a> {
    value: &'a str,
    label: String,
}

/// A resource schema and its fields.
#[derive(Serialize)]
struct Resource<'a> {
    name: &'a str,
    description: &'a str,
    #[serde(rename = "type")]
    kind: String,
    fields: Vec<Field<'a>>,
}

/// The API docs page's context (see [`ApiDocsContext`]).
pub(super) fn api_docs_context(db: &dyn salsa::Database) -> Json {
    let document = openapi_document(db);
    let schemas = document["components"]["schemas"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let empty = Map::new();
    let paths = document["paths"].as_object().unwrap_or(&empty);
    let endpoints: Vec<Endpoint> = paths
        .iter()
        .map(|(path, item)| {
            let get = &item["get"];
            let parameter = get["parameters"].get(0).map(|p| {
                let values: Vec<&str> = p["schema"]["enum"]
                    .as_array()
                    .map(|v| v.iter().filter_map(Json::as_str).collect())
                    .unwrap_or_default();
                let options: Vec<ParameterOption> = values
                    .iter()
                    .map(|v| ParameterOption {
                        value: v,
                        label: value_label(db, v),
                    })
                    .collect();
                Parameter {
                    name: &p["name"],
                    placeholder: format!("{{{}}}", p["name"].as_str().unwrap_or_default()),
                    values,
                    options,
                    description: &p["description"],
                }
            });
            let (media_type, schema) = get["responses"]["200"]["content"]
                .as_object()
                .and_then(|c| c.iter().next())
                .map(|(media, body)| (media.clone(), body["schema"].clone()))
                .unwrap_or_default();
            // An envelope's interesting part is its `data`; other bodies are described by their schema.
            let envelope = ref_name(&schema).and_then(|name| schemas.get(name));
            let data = envelope.and_then(|e| e["properties"].get("data"));
            let (response, links) = match data {
                Some(data) => {
                    let mut links = Vec::new();
                    referenced(data, &mut links);
                    (
                        format!("envelope {{meta, data}}, data: {}", type_label(data)),
                        links,
                    )
                }
                None => (
                    schema["description"]
                        .as_str()
                        .map_or_else(|| type_label(&schema), str::to_string),
                    Vec::new(),
                ),
            };
            let is_api = path.starts_with("/api/v1/");
            Endpoint {
                path,
                summary: &get["summary"],
                parameter,
                media_type,
                response,
                links,
                not_found: get["responses"].get("404").is_some(),
                try_it: is_api || path == "/api/openapi.json",
            }
        })
        .collect();
    // The resource schemas, without the envelope instances (they are described once, as Envelope).
    let resources: Vec<Resource> = schemas
        .iter()
        .filter(|(name, _)| !name.starts_with("Envelope_"))
        .map(|(name, schema)| Resource {
            name,
            description: schema["description"].as_str().unwrap_or(""),
            kind: if schema.get("properties").is_some() {
                "object".to_string()
            } else {
                type_label(schema)
            },
            fields: fields(schema),
        })
        .collect();
    to_json(&ApiDocsContext {
        site: site_context(db),
        base_url: base_url(db),
        openapi_version: &document["openapi"],
        endpoints,
        resources,
    })
}

/// How the API docs page is made.
pub(super) fn spec() -> PageSpec {
    page("api", |db, _| api_docs_context(db))
}
