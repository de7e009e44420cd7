//! The country shapes of the map (`rules/geo/countries.json`, derived once by `rules/geo/derive.mjs`),
//! parsed and checked: every path is plain SVG path data, every point lies in its view, every country
//! can be seen where it is linked.

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde_json::{Map, Value};

/// The parsed shapes file. Build it with [`Shapes::parse`]; [`super::map`] draws from it.
#[derive(Debug, Clone, PartialEq)]
pub struct Shapes {
    pub(super) source: String,
    /// The panels of the map, in the order they are drawn (top to bottom).
    pub(super) views: Vec<View>,
    pub(super) countries: BTreeMap<String, CountryShape>,
}

/// One panel: a projection of part of the world into a `width` x `height` box.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct View {
    pub name: String,
    pub title: String,
    pub width: f64,
    pub height: f64,
    /// Land outside the site's countries, drawn as one light background path.
    pub land: String,
    /// This panel's frame drawn in another panel (view index, path): where the Europe inset sits on the
    /// world map.
    pub outlines: Vec<(usize, String)>,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct CountryShape {
    /// The view (index) the country is linked in; in the others it is drawn unlinked.
    pub view: usize,
    /// Path data per view index, for the views the country can be seen in.
    pub paths: BTreeMap<usize, String>,
    /// A point inside the country in its linked view, for the marker.
    pub point: (f64, f64),
    /// Too small to see in its view: drawn with a marker circle at `point`.
    pub marker: bool,
}

/// Why a shapes file cannot be used: where (a line and column, or the JSON path of the bad value) and
/// what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapesError {
    pub location: String,
    pub message: String,
}

impl fmt::Display for ShapesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

impl std::error::Error for ShapesError {}

fn error(location: impl Into<String>, message: impl Into<String>) -> ShapesError {
    ShapesError {
        location: location.into(),
        message: message.into(),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    source: String,
    views: Map<String, Value>,
    countries: Map<String, Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawView {
    title: String,
    width: f64,
    height: f64,
    land: String,
    #[serde(default)]
    outline_in: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCountry {
    view: String,
    paths: BTreeMap<String, String>,
    point: (f64, f64),
    marker: bool,
}

/// The largest panel side accepted: far beyond any real map, small enough that no number misbehaves.
const MAX_SIDE: f64 = 100_000.0;

impl Shapes {
    /// Parses and checks the text of a shapes file.
    pub fn parse(text: &str) -> Result<Shapes, ShapesError> {
        let raw: RawFile = serde_json::from_str(text).map_err(|e| {
            error(
                format!("line {}, column {}", e.line(), e.column()),
                e.to_string(),
            )
        })?;
        let views = parse_views(&raw.views)?;
        let mut countries = BTreeMap::new();
        for (code, value) in &raw.countries {
            let location = format!("countries.{code}");
            if !is_country_code(code) {
                return Err(error(location, "a country code is two lower-case letters"));
            }
            let country = parse_country(&location, value, &views)?;
            countries.insert(code.clone(), country);
        }
        if views.is_empty() {
            return Err(error("views", "no view"));
        }
        Ok(Shapes {
            source: raw.source,
            views,
            countries,
        })
    }

    /// The codes of the countries the file has shapes for, in order.
    pub fn codes(&self) -> impl Iterator<Item = &str> {
        self.countries.keys().map(String::as_str)
    }

    /// Where the shapes come from (for an attribution line).
    pub fn source(&self) -> &str {
        &self.source
    }
}

fn is_country_code(code: &str) -> bool {
    code.len() == 2 && code.bytes().all(|b| b.is_ascii_lowercase())
}

fn from_value<T: for<'de> Deserialize<'de>>(
    location: &str,
    value: &Value,
) -> Result<T, ShapesError> {
    T::deserialize(value).map_err(|e| error(location, e.to_string()))
}

fn parse_views(raw: &Map<String, Value>) -> Result<Vec<View>, ShapesError> {
    let names: Vec<&String> = raw.keys().collect();
    let mut views = Vec::new();
    for (name, value) in raw {
        let location = format!("views.{name}");
        let view: RawView = from_value(&location, value)?;
        for (side, length) in [("width", view.width), ("height", view.height)] {
            if !(length > 0.0 && length <= MAX_SIDE) {
                return Err(error(
                    format!("{location}.{side}"),
                    format!("must be a number above 0 and at most {MAX_SIDE}"),
                ));
            }
        }
        check_path(&format!("{location}.land"), &view.land)?;
        let mut outlines = Vec::new();
        for (other, path) in &view.outline_in {
            let at = format!("{location}.outline_in.{other}");
            let index = names
                .iter()
                .position(|n| *n == other)
                .ok_or_else(|| error(&at, format!("no view named `{other}`")))?;
            check_path(&at, path)?;
            outlines.push((index, path.clone()));
        }
        views.push(View {
            name: name.clone(),
            title: view.title,
            width: view.width,
            height: view.height,
            land: view.land,
            outlines,
        });
    }
    Ok(views)
}

fn parse_country(
    location: &str,
    value: &Value,
    views: &[View],
) -> Result<CountryShape, ShapesError> {
    let raw: RawCountry = from_value(location, value)?;
    let view_index = |name: &str, at: &str| {
        views
            .iter()
            .position(|v| v.name == name)
            .ok_or_else(|| error(at, format!("no view named `{name}`")))
    };
    let view = view_index(&raw.view, &format!("{location}.view"))?;
    let mut paths = BTreeMap::new();
    for (name, path) in &raw.paths {
        let at = format!("{location}.paths.{name}");
        let index = view_index(name, &at)?;
        check_path(&at, path)?;
        if !path.is_empty() {
            paths.insert(index, path.clone());
        }
    }
    let (x, y) = raw.point;
    let linked = &views[view];
    if !(x >= 0.0 && x <= linked.width && y >= 0.0 && y <= linked.height) {
        return Err(error(
            format!("{location}.point"),
            format!(
                "({x}, {y}) lies outside its view `{}` (0..{} x 0..{})",
                linked.name, linked.width, linked.height
            ),
        ));
    }
    if !raw.marker && !paths.contains_key(&view) {
        return Err(error(
            location,
            format!(
                "has neither a path nor a marker in its view `{}`",
                linked.name
            ),
        ));
    }
    Ok(CountryShape {
        view,
        paths,
        point: (x, y),
        marker: raw.marker,
    })
}

/// Accepts only what path data of straight lines needs (move, line, close commands and numbers), so a
/// path can go into a `d` attribute as it is and can carry nothing else.
fn check_path(location: &str, path: &str) -> Result<(), ShapesError> {
    if let Some((at, c)) = path
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || " ,.-MmLlHhVvZz".contains(*c)))
    {
        return Err(error(
            location,
            format!("unexpected character {c:?} at byte {at} of the path data"),
        ));
    }
    if !path.is_empty() && !path.starts_with(['M', 'm']) {
        return Err(error(location, "path data must start with a move (M)"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{TINY_SHAPES, committed_shapes};
    use proptest::prelude::*;

    #[test]
    fn the_committed_file_has_the_sites_61_countries() {
        let shapes = committed_shapes();
        let codes: Vec<&str> = shapes.codes().collect();
        assert_eq!(codes.len(), 61, "{codes:?}");
        for code in ["ad", "li", "mc", "mt", "sg", "xk", "us", "za"] {
            assert!(codes.contains(&code), "{code}");
        }
        for code in ["ad", "li", "mc", "mt", "sg"] {
            assert!(shapes.countries[code].marker, "{code} gets a marker");
        }
        assert!(!shapes.countries["fr"].marker);
    }

    #[test]
    fn a_small_file_parses() {
        let shapes = Shapes::parse(TINY_SHAPES).unwrap();
        assert_eq!(shapes.views.len(), 2);
        assert_eq!(shapes.views[1].outlines, vec![(0, "M1 1l2 0 0 2z".into())]);
        assert_eq!(shapes.countries["aa"].paths.len(), 2);
    }

    fn parse_error(text: &str) -> ShapesError {
        Shapes::parse(text).expect_err("a bad file is an error")
    }

    #[test]
    fn bad_files_are_located_errors() {
        let e = parse_error("{\n  \"source\": \"x\",\n  \"views\": [}");
        assert!(e.location.starts_with("line 3, column"), "{e}");

        let bad_path = TINY_SHAPES.replace("M0 0l10 0 0 10z", "M0 0l10 0 0 10z\\\"/><script>");
        let e = parse_error(&bad_path);
        assert_eq!(e.location, "countries.aa.paths.world", "{e}");
        assert!(e.message.contains("unexpected character"), "{e}");

        let e = parse_error(&TINY_SHAPES.replace("\"view\": \"world\"", "\"view\": \"moon\""));
        assert_eq!(e.location, "countries.aa.view", "{e}");

        let e = parse_error(&TINY_SHAPES.replace("[5, 5]", "[500, 5]"));
        assert_eq!(e.location, "countries.aa.point", "{e}");

        let e = parse_error(&TINY_SHAPES.replace("\"width\": 100", "\"width\": -1"));
        assert_eq!(e.location, "views.world.width", "{e}");

        let e = parse_error(&TINY_SHAPES.replace("\"aa\"", "\"AAA\""));
        assert_eq!(e.location, "countries.AAA", "{e}");

        let e = parse_error(&TINY_SHAPES.replace("\"marker\": false", "\"marker\": \"no\""));
        assert_eq!(e.location, "countries.aa", "{e}");
        assert!(e.message.contains("invalid type"), "{e}");

        let no_shape = TINY_SHAPES.replace(
            "\"world\": \"M0 0l10 0 0 10z\", \"europe\": \"M0 0l1 0 0 1z\"",
            "\"europe\": \"M0 0l1 0 0 1z\"",
        );
        let e = parse_error(&no_shape);
        assert!(e.message.contains("neither a path nor a marker"), "{e}");
    }

    proptest! {
        #[test]
        fn arbitrary_text_never_panics(text in ".{0,400}") {
            let _ = Shapes::parse(&text);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let _ = Shapes::parse(&String::from_utf8_lossy(&bytes));
        }

        #[test]
        fn edits_of_a_good_file_never_panic(at in 0usize..2000, insert in "[\\[\\]{}\",:0-9a-zMlz.-]{0,6}", cut in 0usize..8) {
            let text = TINY_SHAPES;
            let at = at % text.len();
            if text.is_char_boundary(at) {
                let end = (at + cut).min(text.len());
                if text.is_char_boundary(end) {
                    let edited = format!("{}{}{}", &text[..at], insert, &text[end..]);
                    let _ = Shapes::parse(&edited);
                }
            }
        }
    }
}
