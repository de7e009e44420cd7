//! The map figure (an SVG `role="group"` named by its `<title>`, so the links inside stay reachable by
//! screen readers): every country of the site as one link wrapping its shape (and a marker circle where
//! it is too small to see), classed by its value for each toggle, so the stylesheet can colour the map
//! by whichever toggle the reader has checked (see the "Figures" section of `rules/assets/site.css`).

use std::collections::BTreeMap;
use std::fmt::{self, Write};

use super::shapes::{Shapes, View};
use super::xml::{escape, num};

/// How many toggles the stylesheet can switch between (`#map-t0` … `#map-t5`).
pub const MAX_TOGGLES: usize = 6;

/// One country on the map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapCountry {
    /// The site's code, as in the shapes file (`"fr"`).
    pub code: String,
    /// The name shown in its tooltip (`"France"`).
    pub name: String,
    /// Where its shape links to (the country's page).
    pub url: String,
    /// Its value for each toggle, in the order of [`MapFigure::toggles`]; `None` is unknown.
    pub values: Vec<Option<bool>>,
    /// What qualifies each value, in the same order: a yes's limit ("electricity and natural-gas sectors
    /// only") or a no's basis ("absence check"). Shown in the tooltip after the value, and classed
    /// `t{i}-qualified` so the stylesheet can tell such answers apart. Missing entries qualify nothing.
    pub qualifiers: Vec<Option<String>>,
    /// More classes the stylesheet colours by (`model-clearance`: its B2B e-invoicing model), each
    /// kept to ASCII letters, digits and `-`.
    pub classes: Vec<String>,
}

/// What the map shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapFigure {
    /// The figure's accessible name (`<title>`).
    pub title: String,
    /// Its accessible description (`<desc>`); the counts per toggle are appended to it.
    pub description: String,
    /// The toggle labels (at most [`MAX_TOGGLES`]); toggle `i` is switched by the radio input `#map-t{i}`.
    pub toggles: Vec<String>,
    pub countries: Vec<MapCountry>,
    /// More textures the stylesheet may fill countries with (`url(#map-limited)`), beside the hatching
    /// of unknown: a second cue beside hue, for readers who cannot tell the colours apart.
    pub textures: Vec<Texture>,
}

/// A fill pattern of the map: light marks on a ground colour, defined once as `<pattern id="{id}">`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Texture {
    /// The pattern's id, kept to ASCII letters, digits and `-`.
    pub id: String,
    /// Its ground and its marks, `#rrggbb`.
    pub ground: String,
    pub marks: String,
    pub kind: TextureKind,
}

/// The marks of a [`Texture`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextureKind {
    /// The ground alone.
    Plain,
    Dots,
    HorizontalStripes,
    VerticalStripes,
    Cross,
}

/// A texture's `<pattern>`, 5 by 5 units like the hatching.
fn texture_pattern(texture: &Texture) -> String {
    let keep = |text: &str, extra: char| -> String {
        text.chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == extra)
            .collect()
    };
    let (id, ground, marks) = (
        keep(&texture.id, '-'),
        keep(&texture.ground, '#'),
        keep(&texture.marks, '#'),
    );
    let shapes = match texture.kind {
        TextureKind::Plain => String::new(),
        TextureKind::Dots => format!(r#"<circle cx="2.5" cy="2.5" r="1.1" fill="{marks}"/>"#),
        TextureKind::HorizontalStripes => {
            format!(
                r#"<line x1="0" y1="2.5" x2="5" y2="2.5" stroke="{marks}" stroke-width="1.4"/>"#
            )
        }
        TextureKind::VerticalStripes => {
            format!(
                r#"<line x1="2.5" y1="0" x2="2.5" y2="5" stroke="{marks}" stroke-width="1.4"/>"#
            )
        }
        TextureKind::Cross => format!(
            r#"<line x1="0" y1="2.5" x2="5" y2="2.5" stroke="{marks}" stroke-width="1"/><line x1="2.5" y1="0" x2="2.5" y2="5" stroke="{marks}" stroke-width="1"/>"#
        ),
    };
    format!(
        r#"<pattern id="{id}" width="5" height="5" patternUnits="userSpaceOnUse"><rect width="5" height="5" fill="{ground}"/>{shapes}</pattern>"#
    )
}

/// Why a map cannot be drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MapError {
    TooManyToggles {
        count: usize,
    },
    /// The shapes file has no shape for this code.
    UnknownCountry {
        code: String,
    },
    DuplicateCountry {
        code: String,
    },
    /// A country's values do not match the toggles one for one.
    ValueCount {
        code: String,
        expected: usize,
        found: usize,
    },
}

impl fmt::Display for MapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MapError::TooManyToggles { count } => write!(
                f,
                "the map can switch between at most {MAX_TOGGLES} toggles, not {count}"
            ),
            MapError::UnknownCountry { code } => write!(
                f,
                "no shape for country `{code}` in rules/geo/countries.json (rules/geo/README.md says how to derive it)"
            ),
            MapError::DuplicateCountry { code } => write!(f, "country `{code}` is given twice"),
            MapError::ValueCount {
                code,
                expected,
                found,
            } => write!(
                f,
                "country `{code}` has {found} toggle values for {expected} toggles"
            ),
        }
    }
}

impl std::error::Error for MapError {}

/// Space above each panel for its heading, and between panels.
const HEADING: f64 = 36.0;
const PANEL_GAP: f64 = 14.0;
/// Radius of a microstate's marker, in panel units.
const MARKER_RADIUS: f64 = 9.0;

/// Fallback paints for a page without the stylesheet; the stylesheet's rules win over these attributes.
const SEA: &str = "#eef3f6";
const LAND: &str = "#e2e2dc";
const COUNTRY: &str = "#c9ced3";

/// The map as one `<svg>` element, or why it cannot be drawn.
pub fn map(shapes: &Shapes, figure: &MapFigure) -> Result<String, MapError> {
    if figure.toggles.len() > MAX_TOGGLES {
        return Err(MapError::TooManyToggles {
            count: figure.toggles.len(),
        });
    }
    let mut by_code: BTreeMap<&str, &MapCountry> = BTreeMap::new();
    for country in &figure.countries {
        if !shapes.countries.contains_key(&country.code) {
            return Err(MapError::UnknownCountry {
                code: country.code.clone(),
            });
        }
        if country.values.len() != figure.toggles.len() {
            return Err(MapError::ValueCount {
                code: country.code.clone(),
                expected: figure.toggles.len(),
                found: country.values.len(),
            });
        }
        if by_code.insert(&country.code, country).is_some() {
            return Err(MapError::DuplicateCountry {
                code: country.code.clone(),
            });
        }
    }

    let width = shapes.views.iter().map(|v| v.width).fold(0.0, f64::max);
    let tops = panel_tops(&shapes.views);
    let height = tops.last().copied().unwrap_or(0.0) - PANEL_GAP;

    let mut svg = String::new();
    let _ = write!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="fig-map" viewBox="0 0 {} {}" role="group" aria-labelledby="map-title" aria-describedby="map-desc" font-family="system-ui, sans-serif">"#,
        num(width),
        num(height)
    );
    let _ = write!(
        svg,
        r#"<title id="map-title">{}</title><desc id="map-desc">{}</desc>"#,
        escape(&figure.title),
        escape(&description(figure))
    );
    // The hatching of "unknown" (site.css fills unknown countries with it): a second cue beside
    // lightness, for readers who cannot tell the colours apart. Light stripes on a grey that stands out
    // from the sea and the land by 3:1, as the yes and no fills of site.css do.
    svg.push_str(concat!(
        r##"<defs><pattern id="map-hatch" width="5" height="5" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">"##,
        r##"<rect width="5" height="5" fill="#737b83"/><line x1="0" y1="0" x2="0" y2="5" stroke="#e9ecef" stroke-width="1.6"/>"##,
        r##"</pattern>"##
    ));
    for texture in &figure.textures {
        svg.push_str(&texture_pattern(texture));
    }
    svg.push_str("</defs>");
    for (index, view) in shapes.views.iter().enumerate() {
        draw_panel(&mut svg, shapes, figure, &by_code, index, view, tops[index]);
    }
    svg.push_str("</svg>");
    Ok(svg)
}

/// The y of each panel's heading, and one more entry for where a next panel would start.
fn panel_tops(views: &[View]) -> Vec<f64> {
    let mut tops = vec![0.0];
    for view in views {
        let last = tops.last().copied().unwrap_or(0.0);
        tops.push(last + HEADING + view.height + PANEL_GAP);
    }
    tops
}

fn draw_panel(
    svg: &mut String,
    shapes: &Shapes,
    figure: &MapFigure,
    by_code: &BTreeMap<&str, &MapCountry>,
    index: usize,
    view: &View,
    top: f64,
) {
    let _ = write!(
        svg,
        r##"<g class="panel panel-{}" transform="translate(0 {})"><text class="panel-title" x="2" y="26" font-size="24" fill="#3d4650">{}</text>"##,
        escape(&view.name),
        num(top),
        escape(&view.title)
    );
    let _ = write!(
        svg,
        r#"<g transform="translate(0 {})"><rect class="sea" width="{}" height="{}" fill="{SEA}"/>"#,
        num(HEADING),
        num(view.width),
        num(view.height)
    );
    let _ = write!(
        svg,
        r#"<path class="land" d="{}" fill="{LAND}"/>"#,
        view.land
    );

    // Countries linked in another panel, and countries the figure leaves out, are drawn here unlinked
    // (hidden from assistive technology, which meets each country once, at its link).
    svg.push_str(r#"<g aria-hidden="true">"#);
    for (code, shape) in &shapes.countries {
        let Some(path) = shape.paths.get(&index) else {
            continue;
        };
        match by_code.get(code.as_str()) {
            Some(country) if shape.view != index => {
                let _ = write!(
                    svg,
                    r##"<path class="{}" d="{path}" fill="{COUNTRY}" stroke="#fff" stroke-width="0.5"/>"##,
                    classes(country)
                );
            }
            Some(_) => {}
            None => {
                let _ = write!(svg, r#"<path class="land" d="{path}" fill="{LAND}"/>"#);
            }
        }
    }
    svg.push_str("</g>");

    for (other, outline) in shapes.views.iter().flat_map(|v| &v.outlines) {
        if *other == index {
            let _ = write!(
                svg,
                r##"<path class="inset-frame" d="{outline}" fill="none" stroke="#7d8a96" stroke-width="1" stroke-dasharray="4 3"/>"##
            );
        }
    }

    // Linked countries, markers last so no neighbour covers them.
    let linked: Vec<(&String, _)> = shapes
        .countries
        .iter()
        .filter(|(code, shape)| shape.view == index && by_code.contains_key(code.as_str()))
        .collect();
    let (markers, plain): (Vec<_>, Vec<_>) = linked.into_iter().partition(|(_, s)| s.marker);
    for (code, shape) in plain.into_iter().chain(markers) {
        let Some(country) = by_code.get(code.as_str()) else {
            continue;
        };
        let _ = write!(
            svg,
            r##"<a href="{}" class="{}" fill="{COUNTRY}"><title>{}</title>"##,
            escape(&country.url),
            classes(country),
            escape(&tooltip(country, &figure.toggles))
        );
        if let Some(path) = shape.paths.get(&index) {
            let _ = write!(
                svg,
                r##"<path class="shape" d="{path}" stroke="#fff" stroke-width="0.5"/>"##
            );
        }
        if shape.marker {
            let _ = write!(
                svg,
                r##"<circle class="marker" cx="{}" cy="{}" r="{}" stroke="#333d47" stroke-width="1.2"/>"##,
                num(shape.point.0),
                num(shape.point.1),
                num(MARKER_RADIUS)
            );
        }
        svg.push_str("</a>");
    }
    svg.push_str("</g></g>");
}

/// `country t0-true t1-unknown …`: what the stylesheet colours by.
fn classes(country: &MapCountry) -> String {
    let mut out = String::from("country");
    for (i, value) in country.values.iter().enumerate() {
        let _ = write!(out, " t{i}-{}", value_class(*value));
        if country.qualifiers.get(i).is_some_and(Option::is_some) {
            let _ = write!(out, " t{i}-qualified");
        }
    }
    for class in &country.classes {
        let class: String = class
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        if !class.is_empty() {
            let _ = write!(out, " {class}");
        }
    }
    out
}

fn value_class(value: Option<bool>) -> &'static str {
    match value {
        Some(true) => "true",
        Some(false) => "false",
        None => "unknown",
    }
}

fn value_word(value: Option<bool>) -> &'static str {
    match value {
        Some(true) => "yes",
        Some(false) => "no",
        None => "unknown",
    }
}

/// The country's name and its value for every toggle, one per line (a tooltip cannot know which toggle
/// is checked, so it shows all).
fn tooltip(country: &MapCountry, toggles: &[String]) -> String {
    let mut out = country.name.clone();
    for (i, (label, value)) in toggles.iter().zip(&country.values).enumerate() {
        let _ = write!(out, "\n{label}: {}", value_word(*value));
        match country.qualifiers.get(i).and_then(Option::as_deref) {
            Some(q) if *value == Some(true) => {
                let _ = write!(out, ": {q}");
            }
            Some(q) => {
                let _ = write!(out, " ({q})");
            }
            None => {}
        }
    }
    out
}

/// The caller's description, then how many countries have each value for each toggle.
fn description(figure: &MapFigure) -> String {
    let mut out = figure.description.trim_end().to_string();
    for (i, label) in figure.toggles.iter().enumerate() {
        let count = |wanted: Option<bool>| {
            figure
                .countries
                .iter()
                .filter(|c| c.values.get(i).copied().flatten() == wanted)
                .count()
        };
        if !out.is_empty() {
            out.push(' ');
        }
        let limited = figure
            .countries
            .iter()
            .filter(|c| {
                c.values.get(i).copied().flatten() == Some(true)
                    && c.qualifiers.get(i).is_some_and(Option::is_some)
            })
            .count();
        let _ = write!(out, "{label}: {} yes", count(Some(true)));
        if limited > 0 {
            let _ = write!(out, " ({limited} of them limited)");
        }
        let _ = write!(out, ", {} no, {} unknown.", count(Some(false)), count(None));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{
        TINY_SHAPES, assert_csp_safe, committed_shapes, parse_xml, title_of,
    };
    use proptest::prelude::*;

    fn toggles() -> Vec<String> {
        vec![
            "B2B mandate".into(),
            "Real-time reporting".into(),
            "SAF-T".into(),
        ]
    }

    /// Every committed country, with values that cycle through yes / no / unknown.
    fn all_countries(shapes: &Shapes) -> Vec<MapCountry> {
        let cycle = [Some(true), Some(false), None];
        shapes
            .codes()
            .enumerate()
            .map(|(i, code)| MapCountry {
                code: code.into(),
                name: format!("Country {}", code.to_uppercase()),
                url: format!("/countries/{code}/"),
                values: (0..3).map(|t| cycle[(i + t) % 3]).collect(),
                qualifiers: Vec::new(),
                classes: Vec::new(),
            })
            .collect()
    }

    fn figure(countries: Vec<MapCountry>) -> MapFigure {
        MapFigure {
            title: "E-invoicing and reporting by country".into(),
            description: "Countries coloured by the toggle chosen above the map.".into(),
            toggles: toggles(),
            countries,
            textures: Vec::new(),
        }
    }

    #[test]
    fn every_country_is_one_link_with_its_title_and_classes() {
        let shapes = committed_shapes();
        let countries = all_countries(&shapes);
        let svg = map(&shapes, &figure(countries.clone())).unwrap();
        let doc = parse_xml(&svg);
        assert_csp_safe(&doc);
        let root = doc.root_element();
        // A group, not an image: its links (one per country) stay reachable by screen readers.
        assert_eq!(root.attribute("role"), Some("group"));
        assert_eq!(root.attribute("aria-labelledby"), Some("map-title"));
        assert_eq!(root.attribute("aria-describedby"), Some("map-desc"));
        assert!(root.attribute("viewBox").is_some());
        let links: Vec<_> = doc.descendants().filter(|n| n.has_tag_name("a")).collect();
        assert_eq!(links.len(), countries.len());
        for country in &countries {
            let mine: Vec<_> = links
                .iter()
                .filter(|a| a.attribute("href") == Some(country.url.as_str()))
                .collect();
            assert_eq!(mine.len(), 1, "{}: one link", country.code);
            let link = mine[0];
            let title = title_of(*link).unwrap();
            assert!(title.starts_with(&country.name), "{title}");
            assert!(title.contains("\nB2B mandate: "), "{title}");
            let shown = link
                .children()
                .filter(|c| c.has_tag_name("path") || c.has_tag_name("circle"))
                .count();
            assert!(shown >= 1, "{}: a shape or a marker", country.code);
            let class = link.attribute("class").unwrap();
            for (i, value) in country.values.iter().enumerate() {
                let expected = format!("t{i}-{}", value_class(*value));
                assert!(
                    class.split(' ').any(|c| c == expected),
                    "{class} lacks {expected}"
                );
            }
            assert_eq!(class.split(' ').count(), 1 + toggles().len());
        }
        for code in ["ad", "li", "mc", "mt", "sg"] {
            let url = format!("/countries/{code}/");
            let link = links
                .iter()
                .find(|a| a.attribute("href") == Some(url.as_str()))
                .unwrap();
            assert!(
                link.children().any(|c| c.has_tag_name("circle")),
                "{code} has a marker"
            );
        }
        // The counts of the description follow the values.
        let desc = doc.descendants().find(|n| n.has_tag_name("desc")).unwrap();
        let yes = countries
            .iter()
            .filter(|c| c.values[0] == Some(true))
            .count();
        assert!(
            desc.text()
                .unwrap()
                .contains(&format!("B2B mandate: {yes} yes"))
        );
    }

    #[test]
    fn names_and_urls_stay_text() {
        let shapes = Shapes::parse(TINY_SHAPES).unwrap();
        let nasty = r#"<script>&"'</script>"#;
        let figure = MapFigure {
            title: nasty.into(),
            description: nasty.into(),
            toggles: vec![nasty.into()],
            countries: vec![MapCountry {
                code: "aa".into(),
                name: nasty.into(),
                url: format!("/x?a=1&b=\"{nasty}"),
                values: vec![Some(true)],
                qualifiers: vec![Some(nasty.into())],
                classes: vec![format!("model-x\" {nasty}")],
            }],
            textures: vec![Texture {
                id: format!("t\" {nasty}"),
                ground: format!("#123456\" {nasty}"),
                marks: nasty.into(),
                kind: TextureKind::Dots,
            }],
        };
        let svg = map(&shapes, &figure).unwrap();
        let doc = parse_xml(&svg);
        assert!(doc.descendants().all(|n| !n.has_tag_name("script")));
        let link = doc.descendants().find(|n| n.has_tag_name("a")).unwrap();
        assert_eq!(
            link.attribute("href"),
            Some(figure.countries[0].url.as_str())
        );
        assert_eq!(
            title_of(link).unwrap(),
            format!("{nasty}\n{nasty}: yes: {nasty}")
        );
        let title = doc.descendants().find(|n| n.has_tag_name("title")).unwrap();
        assert_eq!(title.text(), Some(nasty));
    }

    #[test]
    fn bad_input_is_an_error() {
        let shapes = Shapes::parse(TINY_SHAPES).unwrap();
        let country = |code: &str, values: Vec<Option<bool>>| MapCountry {
            code: code.into(),
            name: "X".into(),
            url: "/".into(),
            values,
            qualifiers: Vec::new(),
            classes: Vec::new(),
        };
        let mut f = figure(vec![country("zz", vec![None; 3])]);
        assert_eq!(
            map(&shapes, &f),
            Err(MapError::UnknownCountry { code: "zz".into() })
        );
        f.countries = vec![country("aa", vec![None; 2])];
        assert!(matches!(
            map(&shapes, &f),
            Err(MapError::ValueCount { found: 2, .. })
        ));
        f.countries = vec![country("aa", vec![None; 3]), country("aa", vec![None; 3])];
        assert!(matches!(
            map(&shapes, &f),
            Err(MapError::DuplicateCountry { .. })
        ));
        f.toggles = vec!["t".into(); MAX_TOGGLES + 1];
        assert!(matches!(
            map(&shapes, &f),
            Err(MapError::TooManyToggles { .. })
        ));
        assert!(
            MapError::UnknownCountry { code: "zz".into() }
                .to_string()
                .contains("zz")
        );
    }

    #[test]
    fn a_country_left_out_is_drawn_as_plain_land_and_linked_elsewhere_is_unlinked() {
        let shapes = Shapes::parse(TINY_SHAPES).unwrap();
        let only_bb = figure(vec![MapCountry {
            code: "bb".into(),
            name: "Bee".into(),
            url: "/bb/".into(),
            values: vec![None; 3],
            qualifiers: Vec::new(),
            classes: Vec::new(),
        }]);
        let svg = map(&shapes, &only_bb).unwrap();
        let doc = parse_xml(&svg);
        assert_eq!(doc.descendants().filter(|n| n.has_tag_name("a")).count(), 1);
        assert!(svg.contains(r#"<path class="land" d="M0 0l10 0 0 10z""#));

        let both = figure(all_countries(&shapes));
        let svg = map(&shapes, &both).unwrap();
        // `aa` is linked in the world panel and drawn unlinked, classed, in the Europe panel.
        assert!(
            svg.contains(r#"<path class="country t0-true t1-false t2-unknown" d="M0 0l1 0 0 1z""#),
            "{svg}"
        );
        assert!(svg.contains("inset-frame"));
    }

    proptest! {
        #[test]
        fn any_names_and_values_give_xml(
            name in any::<String>(),
            url in any::<String>(),
            values in proptest::collection::vec(proptest::option::of(any::<bool>()), 3),
        ) {
            let shapes = Shapes::parse(TINY_SHAPES).unwrap();
            let f = figure(vec![MapCountry { code: "aa".into(), name, url, values, qualifiers: Vec::new(), classes: Vec::new() }]);
            let svg = map(&shapes, &f).unwrap();
            prop_assert!(roxmltree::Document::parse(&svg).is_ok());
        }
    }
}
