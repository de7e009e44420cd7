//! Render: one tracked query per output file, returning its bytes.
//!
//! The bytes carry a placeholder where `meta.generated_at` goes: the content hash covers everything but
//! the build time, and the emit step stamps the time of the build that last changed the content.

pub mod api;
pub mod assets;
pub mod contexts;
pub mod data;
pub mod headers;
pub mod openapi;
pub mod pages;

use crate::derive::filters::FilterKey;
use crate::model::{CountryKey, ErpKey};
use crate::routes::{Output, Renderer};

/// The bytes of one output, with [`GENERATED_AT_MARK`] where the build time goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub bytes: Vec<u8>,
    /// blake3 of `bytes`: the content hash the manifest compares.
    pub hash: blake3::Hash,
}

impl Rendered {
    pub fn new(bytes: Vec<u8>) -> Self {
        let hash = blake3::hash(&bytes);
        Rendered { bytes, hash }
    }
}

/// The value given to `meta.generated_at` while rendering. Sources cannot contain control characters, so
/// its JSON form [`GENERATED_AT_JSON`] appears in an output only where the build time goes.
pub const GENERATED_AT_MARK: &str = "\u{0}generated_at\u{0}";
/// [`GENERATED_AT_MARK`] as serde_json writes it inside a JSON string.
pub const GENERATED_AT_JSON: &str = "\\u0000generated_at\\u0000";

/// The bytes of one output (memoized: only outputs whose inputs changed are rendered again).
pub fn render<'db>(db: &'db dyn salsa::Database, output: &Output) -> &'db Rendered {
    let param = || output.param.clone().unwrap_or_default();
    match output.renderer {
        Renderer::ApiIndex => api::api_index(db),
        Renderer::ApiCountries => api::api_countries(db),
        Renderer::ApiCountry => api::api_country(db, CountryKey::new(db, param())),
        Renderer::ApiErps => api::api_erps(db),
        Renderer::ApiErp => api::api_erp(db, ErpKey::new(db, param())),
        Renderer::ApiFacts => api::api_facts(db),
        Renderer::ApiLocalErps => api::api_local_erps(db),
        Renderer::ApiPartnerFlags => api::api_partner_flags(db),
        Renderer::ApiPartners => api::api_partners(db),
        Renderer::ApiNews => api::api_news(db),
        Renderer::ApiSponsors => api::api_sponsors(db),
        Renderer::ApiFilter => api::api_filter(db, FilterKey::new(db, param())),
        Renderer::Openapi => openapi::openapi(db),
        Renderer::DataJson => data::data_json(db, data::StemKey::new(db, param())),
        Renderer::DataCsv => data::data_csv(db, data::StemKey::new(db, param())),
        Renderer::Datapackage => data::datapackage(db),
        Renderer::DataLicence => data::data_licence(db),
        Renderer::Headers => headers::headers(db),
        Renderer::Asset => &assets::asset(db, assets::AssetKey::new(db, output.path.clone())).0,
        _ => match pages::page(db, output) {
            Some(page) => &page.rendered,
            None => unreachable!("every renderer is dispatched"),
        },
    }
}

/// Problems found while rendering (a broken template, a missing asset): reported by the build like any
/// diagnostic. Only pages and assets can fail; every other output renders from validated data.
pub fn render_errors(db: &dyn salsa::Database) -> Vec<crate::diagnostics::Diagnostic> {
    crate::routes::outputs(db)
        .iter()
        .filter_map(|output| match output.renderer {
            Renderer::Asset => assets::asset(db, assets::AssetKey::new(db, output.path.clone()))
                .1
                .clone(),
            _ => pages::page(db, output)?.error.clone(),
        })
        .collect()
}

/// Pretty JSON with a final newline: what every JSON output looks like.
pub fn json_bytes<T: serde::Serialize>(value: &T) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(value).expect("resources serialize");
    bytes.push(b'\n');
    bytes
}
