//! The one definition of "established" support that every check, count, legend, filter and board uses.

use crate::api_types::Verification;

/// The support types of `matrix.csv` that establish an ERP's e-invoicing support in a country: the
/// product does it today, natively, with an add-on or through a provider (receiving only included).
/// `roadmap` is a promise, `not supported` a no, `unknown/unverified` not known: none of them is support.
/// A support type added to `rules/vocabulary.toml` counts only once it is listed here.
pub(crate) const ESTABLISHED_SUPPORT: [&str; 5] = [
    "native",
    "native + access point",
    "add-on",
    "via provider",
    "via provider (receiving only)",
];

/// The support types that do not establish support (the rest of the shipped vocabulary).
pub const UNESTABLISHED_SUPPORT: [&str; 3] = ["roadmap", "not supported", "unknown/unverified"];

/// Whether a support type is one that establishes support (see [`ESTABLISHED_SUPPORT`]); an answer
/// also needs its grade for that: see [`established`].
pub(crate) fn support_established(support_type: &str) -> bool {
    ESTABLISHED_SUPPORT.contains(&support_type)
}

/// The one definition of "established" that every count, legend, filter and board of the site uses: an
/// answer of a support type that establishes support (see [`ESTABLISHED_SUPPORT`]) graded from a source
/// that was read and quoted (`official` or `secondary`). An `unverified` answer is shown with its grade,
/// never counted as established.
pub(crate) fn established(support_type: &str, verification: Verification) -> bool {
    support_established(support_type) && verification.is_verified()
}
