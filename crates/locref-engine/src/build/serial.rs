//! The reference plan ([`super::Plan::serial`]): the sources checked, then every output of the route
//! table in route order, on this thread, rendered whole and handed to the sink; nothing is let go, so
//! it holds the whole site at the end. Nor does it share a page's context with its twin through the
//! table of made contexts (`render::pages::context::MadeContexts`): every render makes its context itself, as
//! pure queries would. Slower and larger than [`super::streaming`], and the measure of it: both hand
//! over the same outputs with the same bytes (`tests/testsuite/build.rs`).

use super::{BuildError, Sink, checked};
use crate::db::Db;
use crate::site::Site;

pub(super) fn run(site: &Site, db: &mut Db, sink: &mut impl Sink) -> Result<usize, BuildError> {
    let db: &Db = db;
    let diagnostics = (site.source_diagnostics)(db);
    if !diagnostics.is_empty() {
        return Err(BuildError::Invalid(diagnostics));
    }
    let mut render_errors = Vec::new();
    let all = (site.outputs)(db);
    for output in all {
        let digest = (site.digest)(db, output);
        if let Some(error) = &digest.error {
            render_errors.push(error.clone());
        } else if render_errors.is_empty() {
            sink.output(site, db, output, digest)
                .map_err(BuildError::Io)?;
        }
    }
    checked(site, db, render_errors, all.len())
}
