//! The render layer's own view of an output: the query key every output is memoized by, the types of
//! a kind's render, count and check functions, and an output's placeholder value. What the bytes of an
//! output are ([`crate::output::Piece`], [`Rendered`], [`crate::output::RenderedFile`]) is the engine's core, [`crate::output`].

use crate::diagnostics::Diagnostic;
use crate::output::Rendered;
use crate::routes::Output;

/// How an output of a kind is rendered, from the output's placeholder value (and, for assets, its path).
/// Not memoized itself: [`crate::render::output_file`] memoizes every output.
pub type RenderFn = fn(&dyn salsa::Database, &Output) -> Rendered;

/// How many records an output lists, for `index.json`.
pub type CountFn = fn(&dyn salsa::Database, &Output) -> Option<u64>;

/// Why a file cannot be rendered (a missing asset).
pub(crate) type CheckFn = fn(&dyn salsa::Database, &Output) -> Option<Diagnostic>;

/// The value of an output's placeholder (`it`, `odoo`, `matrix`), or `""` for an output without one.
pub(crate) fn param_of(output: &Output) -> String {
    output.param.clone().unwrap_or_default()
}
