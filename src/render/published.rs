//! What an output states about other outputs as they are published: `datapackage.json` gives the size and
//! hash of each CSV file. Read through the dispatcher's query ([`crate::render::render`]), so it ranks with
//! the dispatch; `data/package.rs` is handed [`csv_digest`] and imports nothing above it.

use crate::kinds::RendererOf;
use sha2::{Digest, Sha256};

use super::data::{FileDigest, StemKey, data_csv};
/// The route table's output for a CSV file, if it publishes it: an early-cutoff point, so a change of the
/// route table that leaves this output as it was does not hash the file again.
#[salsa::tracked(returns(ref))]
fn published_csv<'db>(
    db: &'db dyn salsa::Database,
    key: StemKey<'db>,
) -> Option<crate::routes::Output> {
    crate::routes::outputs(db)
        .iter()
        .find(|o| {
            o.renderer() == crate::kinds::Renderer::File(crate::kinds::FileKind::DataCsv)
                && o.param.as_deref() == Some(key.stem(db).as_str())
        })
        .cloned()
}

/// The digest of one CSV file: its own query, so the package is rebuilt only when a file's bytes change.
#[salsa::tracked(returns(ref))]
pub fn csv_digest<'db>(db: &'db dyn salsa::Database, key: StemKey<'db>) -> FileDigest {
    let made;
    let rendered = match published_csv(db, key) {
        Some(output) => super::render(db, output),
        None => {
            made = data_csv(db, key);
            &made
        }
    };
    // Hashed piece by piece: a CSV spliced from per-country parts is never copied together.
    let mut sha = Sha256::new();
    for piece in rendered.pieces() {
        sha.update(piece.bytes());
    }
    let hex: String = sha.finalize().iter().map(|b| format!("{b:02x}")).collect();
    FileDigest {
        bytes: rendered.len() as u64,
        hash: format!("sha256:{hex}"),
    }
}
