//! Static files of `rules/assets/` (the stylesheet, small scripts), served as they are. Each is its own
//! query over its own file, so editing the stylesheet re-runs this query and nothing else.

use crate::diagnostics::Diagnostic;
use crate::output::Rendered;
use crate::parse::source_text;
use crate::routes::asset_source;

/// An asset's output path (`/assets/site.css`) as a query key.
#[salsa::interned(debug)]
pub(crate) struct AssetKey<'db> {
    #[returns(ref)]
    pub path: String,
}

/// The bytes of an asset (its decoded text: UTF-8, LF line ends), or why its file cannot be read.
#[salsa::tracked(returns(ref))]
pub fn asset<'db>(
    db: &'db dyn salsa::Database,
    key: AssetKey<'db>,
) -> (Rendered, Option<Diagnostic>) {
    match source_text(db, &asset_source(key.path(db))) {
        Ok(text) => (Rendered::new(text.as_bytes().to_vec()), None),
        Err(diagnostic) => (Rendered::new(Vec::new()), Some(diagnostic)),
    }
}
