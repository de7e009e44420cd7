//! Static SVG figures drawn at build time from data: a world map of the countries coloured by a toggle
//! ([`map()`]) and a timeline of dated obligations ([`timeline()`]).
//!
//! Both are plain functions from typed input to SVG text (no salsa: the page queries call them). The SVG
//! carries no `style` attribute and no script, so it holds under the site's Content-Security-Policy;
//! colours that depend on the reader's choice come from `rules/assets/site.css` (its "Figures" section).
//! Neither function panics: bad input is an error value.

#![warn(unreachable_pub)]

pub mod map;
pub mod shapes;
pub mod timeline;

mod text;
pub mod xml;

#[cfg(test)]
mod samples;
#[cfg(test)]
mod test_support;

pub use map::{MAX_TOGGLES, MapCountry, MapError, MapFigure, Texture, TextureKind, map};
pub use shapes::{Shapes, ShapesError};
pub use timeline::{TimelineError, TimelineEvent, TimelineFigure, timeline};
