//! The data files' page (`/data/`): what the folder holds, its licence, the data package, how to load the
//! files in pandas and DuckDB, and what the grades mean (the legend of every page that shows grades links
//! here).

use crate::kinds::RendererOf;
use serde::Serialize;
use serde_json::Value as Json;

use super::context::{PageSpec, page};
use super::shared::*;
use crate::kinds::{FileKind, Renderer};
use crate::model::base_url;
use crate::parse::rules::{DataLicence, site_rules};
use crate::render::data::stem_description;
use crate::render::openapi::output_description;
use crate::routes::outputs;

/// One flat table and its two files, as the route table publishes them.
#[derive(Serialize)]
struct TableFiles {
    stem: String,
    description: &'static str,
    csv: Option<String>,
    json: Option<String>,
}

/// Another file of the folder (the data package, the notes, the licence), with its route's description.
#[derive(Serialize)]
struct FolderFile {
    path: String,
    name: String,
    description: String,
}

/// The data page: every file the build publishes under `/data/`, the licence and the base URL the
/// loading examples read from.
#[derive(Serialize)]
pub(super) struct DataContext<'a> {
    site: &'a SiteContext,
    licence: &'a DataLicence,
    api_licence: &'a str,
    /// The site's base URL, without a trailing `/`: the examples read the published files from it.
    base_url: &'a str,
    tables: Vec<TableFiles>,
    files: Vec<FolderFile>,
    /// The data package's path, when the route table publishes one.
    package: Option<String>,
}

/// The data page's context, read from the route table and `rules/site.toml`.
pub(super) fn data_context(db: &dyn salsa::Database) -> Json {
    let site = &site_rules(db).value;
    let mut tables: Vec<TableFiles> = Vec::new();
    let mut files = Vec::new();
    let mut package = None;
    for output in outputs(db) {
        let Renderer::File(kind) = output.renderer() else {
            continue;
        };
        let Some(name) = output.path.strip_prefix("/data/") else {
            continue;
        };
        match (kind, &output.param) {
            (FileKind::DataCsv | FileKind::DataJson, Some(stem)) => {
                let at = match tables.iter().position(|t| &t.stem == stem) {
                    Some(at) => at,
                    None => {
                        tables.push(TableFiles {
                            stem: stem.clone(),
                            description: stem_description(stem),
                            csv: None,
                            json: None,
                        });
                        tables.len() - 1
                    }
                };
                let slot = if kind == FileKind::DataCsv {
                    &mut tables[at].csv
                } else {
                    &mut tables[at].json
                };
                *slot = Some(output.path.clone());
            }
            _ => {
                if kind == FileKind::Datapackage {
                    package = Some(output.path.clone());
                }
                files.push(FolderFile {
                    path: output.path.clone(),
                    name: name.to_string(),
                    description: output_description(db, output),
                });
            }
        }
    }
    to_json(&DataContext {
        site: site_context(db),
        licence: &site.data_licence,
        api_licence: &site.api_licence.name,
        base_url: base_url(db),
        tables,
        files,
        package,
    })
}

/// How the data page is made.
pub(super) fn spec() -> PageSpec {
    page("data", |db, _| data_context(db))
}
