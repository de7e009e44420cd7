//! Contrast that a page checker cannot measure: the matrix's "–" (text drawn in a colour of the
//! stylesheet) and the home page's map (an SVG whose fills come from the stylesheet and whose hatching and
//! borders come from the figure code). The colours are read from `rules/assets/*.css` and from the map as
//! `crates/locref-figures/src/map.rs` draws it on the built home page, never copied here; the ratios are WCAG 2.1's
//! (relative luminance of sRGB), and each is printed with what it is held to.
//!
//! Held to: text 4.5:1 against its background (1.4.3); each fill of the map (yes, no, the hatching's
//! ground for "not established") 3:1 against the sea, the land and the white borders between countries
//! it sits on, the hatching's stripes 3:1 against their ground, yes 3:1 against no, the small countries'
//! circles 3:1 against the sea and the land, the legend's swatches 3:1 against the page, and every
//! control's border 3:1 against the page and its own ground (1.4.11).

use std::collections::BTreeMap;
use std::path::Path;

/// An sRGB colour from `#rgb` or `#rrggbb`; anything else is a failure that names it, so a colour written
/// some other way is never skipped.
fn hex(value: &str) -> [u8; 3] {
    let digits = value
        .trim()
        .strip_prefix('#')
        .unwrap_or_else(|| panic!("`{value}` is not a #rgb or #rrggbb colour"));
    let expanded: String = match digits.len() {
        3 => digits.chars().flat_map(|c| [c, c]).collect(),
        6 => digits.to_string(),
        _ => panic!("`{value}` is not a #rgb or #rrggbb colour"),
    };
    let byte = |i: usize| u8::from_str_radix(&expanded[i..i + 2], 16).expect("hex digits");
    [byte(0), byte(2), byte(4)]
}

/// WCAG 2.1's relative luminance.
fn luminance(colour: [u8; 3]) -> f64 {
    let channel = |c: u8| {
        let c = f64::from(c) / 255.0;
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * channel(colour[0]) + 0.7152 * channel(colour[1]) + 0.0722 * channel(colour[2])
}

/// WCAG 2.1's contrast ratio, from 1 to 21.
fn ratio(a: &str, b: &str) -> f64 {
    let (la, lb) = (luminance(hex(a)), luminance(hex(b)));
    (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
}

#[test]
fn ratio_is_wcags() {
    assert!((ratio("#000", "#fff") - 21.0).abs() < 1e-9);
    assert!((ratio("#777", "#777") - 1.0).abs() < 1e-9);
    // WCAG's own example pair: #767676 on white is 4.54:1.
    assert!((ratio("#767676", "#ffffff") - 4.54).abs() < 0.01);
}

/// The rules of a stylesheet: each selector of a rule's list (inside `@media` blocks too) with the rule's
/// declarations, and the custom properties of `:root`.
struct Stylesheet {
    rules: Vec<(String, BTreeMap<String, String>)>,
    root: BTreeMap<String, String>,
}

impl Stylesheet {
    fn parse(css: &str) -> Stylesheet {
        let mut text = String::new();
        let mut rest = css;
        while let Some(start) = rest.find("/*") {
            text.push_str(&rest[..start]);
            let end = rest[start..].find("*/").expect("a closed comment");
            rest = &rest[start + end + 2..];
        }
        text.push_str(rest);
        let mut rules = Vec::new();
        collect_rules(&text, &mut rules);
        let root = rules
            .iter()
            .filter(|(selector, _)| selector == ":root")
            .flat_map(|(_, d)| d.clone())
            .collect();
        Stylesheet { rules, root }
    }

    /// Every value the stylesheet gives `property` on an element matched by `selector` (written as in
    /// the stylesheet), with `var(--x)` replaced by `:root`'s value.
    fn values(&self, selector: &str, property: &str) -> Vec<String> {
        self.rules
            .iter()
            .filter(|(s, _)| s == selector)
            .filter_map(|(_, d)| d.get(property))
            .map(|v| self.resolve(v))
            .collect()
    }

    /// The one value of `property` for `selector`; fails if there is none or several that differ.
    fn value(&self, selector: &str, property: &str) -> String {
        let mut values = self.values(selector, property);
        values.dedup();
        assert_eq!(
            values.len(),
            1,
            "site.css: `{selector} {{ {property} }}` has the values {values:?}"
        );
        values.remove(0)
    }

    fn resolve(&self, value: &str) -> String {
        let mut out = value.to_string();
        while let Some(start) = out.find("var(") {
            let end = start + out[start..].find(')').expect("var( closed");
            let name = out[start + 4..end].split(',').next().unwrap().trim();
            let replacement = self
                .root
                .get(name)
                .unwrap_or_else(|| panic!("site.css: {name} is not set on :root"))
                .clone();
            out.replace_range(start..=end, &replacement);
        }
        out
    }
}

/// Splits `css` into rules (`selectors { declarations }`), descending into at-rule blocks.
fn collect_rules(css: &str, out: &mut Vec<(String, BTreeMap<String, String>)>) {
    let mut rest = css;
    while let Some(open) = rest.find('{') {
        let prelude = rest[..open].trim();
        // The matching close brace.
        let mut depth = 0;
        let mut close = open;
        for (i, c) in rest[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = open + i;
                        break;
                    }
                }
                _ => {}
            }
        }
        let body = &rest[open + 1..close];
        if prelude.starts_with('@') {
            collect_rules(body, out);
        } else {
            let declarations: BTreeMap<String, String> = body
                .split(';')
                .filter_map(|d| d.split_once(':'))
                .map(|(p, v)| (p.trim().to_string(), v.trim().to_string()))
                .collect();
            for selector in prelude.split(',') {
                let selector = selector.split_whitespace().collect::<Vec<_>>().join(" ");
                out.push((selector, declarations.clone()));
            }
        }
        rest = &rest[close + 1..];
    }
}

/// The stylesheets of `rules/assets/`, as one.
fn stylesheet() -> Stylesheet {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules/assets");
    let mut css = String::new();
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "css"))
        .collect();
    names.sort();
    assert!(!names.is_empty(), "no stylesheet in {}", dir.display());
    for path in names {
        css.push_str(&std::fs::read_to_string(path).unwrap());
        css.push('\n');
    }
    Stylesheet::parse(&css)
}

/// The home page of the shipped project as the library renders it.
fn home_page() -> String {
    let project = locref::workspace::Project::load(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        &locref::locref_site::SITE,
    )
    .expect("the shipped project");
    let db = &project.db;
    let output = locref::routes::outputs(db)
        .iter()
        .find(|o| o.path == "/index.html")
        .expect("the home page is routed")
        .clone();
    String::from_utf8(locref::render::render(db, &output).bytes().to_vec()).expect("utf-8")
}

/// The value of attribute `name` of the first element that starts with `start` (`<rect class="sea"`).
fn attribute(html: &str, start: &str, name: &str) -> String {
    let at = html
        .find(start)
        .unwrap_or_else(|| panic!("the map has no `{start}`"));
    let element = &html[at..at + html[at..].find('>').unwrap()];
    let pattern = format!(" {name}=\"");
    let value = &element[element
        .find(&pattern)
        .unwrap_or_else(|| panic!("`{element}` has no {name}"))
        + pattern.len()..];
    value[..value.find('"').unwrap()].to_string()
}

/// A checked pair: what it is, its two colours, the ratio it needs.
struct Pair {
    what: String,
    front: String,
    back: String,
    needed: f64,
}

fn pair(what: impl Into<String>, front: &str, back: &str, needed: f64) -> Pair {
    Pair {
        what: what.into(),
        front: front.to_string(),
        back: back.to_string(),
        needed,
    }
}

/// Prints every pair with its ratio, then fails naming those below what they need.
fn assert_pairs(pairs: &[Pair]) {
    let mut failing = Vec::new();
    for p in pairs {
        let r = ratio(&p.front, &p.back);
        let line = format!(
            "{:>6.2}:1 (needs {}:1)  {}: {} on {}",
            r, p.needed, p.what, p.front, p.back
        );
        println!("{line}");
        if r < p.needed {
            failing.push(line);
        }
    }
    assert!(
        failing.is_empty(),
        "below the contrast WCAG 2.1 AA asks for:\n{}",
        failing.join("\n")
    );
}

#[test]
fn the_matrixs_dash_for_not_established_is_text_of_4_5_to_1() {
    let css = stylesheet();
    let page = css.value("body", "background");
    // The cell draws no background of its own: the dash sits on the page's.
    for selector in [".s-unknown", "table.matrix td"] {
        assert!(
            css.values(selector, "background").is_empty()
                && css.values(selector, "background-color").is_empty(),
            "{selector} now has a background: hold the dash to it"
        );
    }
    let dash = css.value(".s-unknown", "color");
    assert_pairs(&[pair("the matrix's \"–\" (.s-unknown)", &dash, &page, 4.5)]);
}

/// The home page's map: its `<svg>` element up to its closing tag.
fn map_svg(home: &str) -> &str {
    let start = home.find("<svg").expect("the home page has its map");
    &home[start..start + home[start..].find("</svg>").unwrap()]
}

#[test]
fn the_maps_fills_borders_and_legend_stand_out_by_3_to_1_from_what_they_sit_on() {
    let css = stylesheet();
    let home = home_page();
    let svg = map_svg(&home);

    let sea = css.value(".fig-map .sea", "fill");
    let land = css.value(".fig-map .land", "fill");
    let border = css.value(".fig-map .country .shape", "stroke");
    let circle = css.value(".fig-map .marker", "stroke");
    // Without the stylesheet the map falls back to the figure code's own paints: the same ones.
    assert_eq!(attribute(svg, "<rect class=\"sea\"", "fill"), sea);
    assert_eq!(attribute(svg, "<path class=\"land\"", "fill"), land);
    assert_eq!(attribute(svg, "<path class=\"shape\"", "stroke"), border);
    assert_eq!(attribute(svg, "<circle class=\"marker\"", "stroke"), circle);

    // The fill of every toggle's yes, no and unknown (the radio switch picks the toggle): the stylesheet
    // colours as many toggles as the map has switches.
    let selector = |i: usize, value: &str| format!(".map-box:has(#map-t{i}:checked) .t{i}-{value}");
    let toggles = (0..)
        .take_while(|i| !css.values(&selector(*i, "true"), "fill").is_empty())
        .count();
    assert!(toggles >= 1, "site.css colours no toggle of the map");
    assert!(
        home.contains(&format!("id=\"map-t{}\"", toggles - 1)) && svg.contains(" t0-true"),
        "the map and its switch are on the home page"
    );
    let fill = |i: usize, value: &str| css.value(&selector(i, value), "fill");
    let yes = fill(0, "true");
    let no = fill(0, "false");
    let unknown = fill(0, "unknown");
    for i in 1..toggles {
        assert_eq!(
            [fill(i, "true"), fill(i, "false"), fill(i, "unknown")],
            [yes.clone(), no.clone(), unknown.clone()],
            "toggle {i} is coloured like toggle 0"
        );
    }
    // Unknown is the figure's hatching: its ground, with the stylesheet's fallback the same colour.
    let (pattern, fallback) = unknown.split_once(' ').unwrap_or_else(|| {
        panic!("unknown is filled with `{unknown}`, not the hatching and a fallback")
    });
    assert_eq!(pattern, "url(#map-hatch)");
    assert!(
        svg.contains("<pattern id=\"map-hatch\""),
        "the map defines its hatching"
    );
    let hatch = &svg[svg.find("<pattern id=\"map-hatch\"").unwrap()..];
    let ground = attribute(hatch, "<rect", "fill");
    let stripes = attribute(hatch, "<line", "stroke");
    assert_eq!(
        fallback, ground,
        "the fallback fill of unknown is the hatching's ground"
    );

    // The legend's swatches are the map's colours, on the page.
    let page = css.value("body", "background");
    assert_eq!(css.value(".legend-true::before", "background"), yes);
    assert_eq!(css.value(".legend-false::before", "background"), no);
    let legend_hatch = css.value(".legend-unknown::before", "background");
    assert!(
        legend_hatch.contains(&ground) && legend_hatch.contains(&stripes),
        "the legend's hatching `{legend_hatch}` is not the map's ({ground}, {stripes})"
    );
    let swatch_border = css
        .value(".legend-true::before", "border")
        .rsplit(' ')
        .next()
        .unwrap()
        .to_string();

    let mut pairs = Vec::new();
    for (name, colour) in [
        ("yes", &yes),
        ("no", &no),
        ("not established (hatching's ground)", &ground),
    ] {
        pairs.push(pair(
            format!("map: {name} against the sea"),
            colour,
            &sea,
            3.0,
        ));
        pairs.push(pair(
            format!("map: {name} against the land"),
            colour,
            &land,
            3.0,
        ));
        pairs.push(pair(
            format!("map: {name} against the borders between countries"),
            colour,
            &border,
            3.0,
        ));
        pairs.push(pair(
            format!("legend: {name} swatch against the page"),
            colour,
            &page,
            3.0,
        ));
    }
    pairs.push(pair("map: yes against no", &yes, &no, 3.0));
    pairs.push(pair(
        "map: the hatching's stripes against its ground",
        &stripes,
        &ground,
        3.0,
    ));
    pairs.push(pair(
        "map: small countries' circles against the sea",
        &circle,
        &sea,
        3.0,
    ));
    pairs.push(pair(
        "map: small countries' circles against the land",
        &circle,
        &land,
        3.0,
    ));
    pairs.push(pair(
        "legend: swatch borders against the page",
        &swatch_border,
        &page,
        3.0,
    ));
    assert_pairs(&pairs);
}

/// Whether a selector, as the stylesheet writes it, styles a control: its last part is an `input`, a
/// `button`, a `select` or a `textarea` (with a class, an attribute or a state), or the label the map's
/// switch draws in place of its hidden radio input (`.choice label`).
fn styles_a_control(selector: &str) -> bool {
    let last = selector.rsplit(' ').next().unwrap_or_default();
    let element = last.split(['.', '[', ':', '#']).next().unwrap_or_default();
    matches!(element, "input" | "button" | "select" | "textarea")
        || selector.ends_with(".choice label")
}

/// The colour of a `border` (or `border-color`) value, when it draws one.
fn border_colour(value: &str) -> Option<String> {
    if value == "0" || value.starts_with("0 ") || value.contains("none") {
        return None;
    }
    value
        .split_whitespace()
        .find(|w| w.starts_with('#'))
        .map(str::to_string)
}

/// WCAG 1.4.11: the border that shows where a control is (the search box, its button, the filters, the
/// map's switch, the try-it controls, the compare page's buttons) stands out by 3:1 from the page and
/// from the control's own ground. Every control rule of the stylesheet that draws a border is checked,
/// found by its selector, so a new control is held to it too.
#[test]
fn every_controls_border_stands_out_by_3_to_1_from_the_page_and_its_ground() {
    let css = stylesheet();
    let page = css.value("body", "background");
    let mut pairs = Vec::new();
    for (selector, declarations) in &css.rules {
        if !styles_a_control(selector) {
            continue;
        }
        for property in ["border", "border-color"] {
            let Some(value) = declarations.get(property) else {
                continue;
            };
            let Some(colour) = border_colour(&css.resolve(value)) else {
                continue;
            };
            pairs.push(pair(
                format!("control: `{selector}` border against the page"),
                &colour,
                &page,
                3.0,
            ));
            // The control's own ground, where the selector's rules set one; a filled control whose
            // border is its ground is shown by the fill, held to the page above.
            let grounds = ["background", "background-color"]
                .iter()
                .flat_map(|p| css.values(selector, p))
                .filter(|g| g.starts_with('#') && *g != colour)
                .collect::<Vec<_>>();
            for ground in grounds {
                pairs.push(pair(
                    format!("control: `{selector}` border against its ground"),
                    &colour,
                    &ground,
                    3.0,
                ));
            }
        }
    }
    assert!(
        pairs.len() >= 5,
        "site.css: found too few control borders to check ({}): is the selector test still right?",
        pairs.len()
    );
    assert_pairs(&pairs);
}

/// The map's textures (`<pattern>`s of the built home page other than the hatching: a limited yes, each
/// B2B e-invoicing model): each ground 3:1 against the sea, the land and the borders, its marks 3:1
/// against its ground, and the stylesheet's fallback colour of each fill that names it the same as its
/// ground. The models' hues need not differ by 3:1 from each other: their textures tell them apart, and
/// no two models share one.
#[test]
fn the_maps_textures_stand_out_and_each_model_has_its_own() {
    let css = stylesheet();
    let home = home_page();
    let svg = map_svg(&home);
    let sea = css.value(".fig-map .sea", "fill");
    let land = css.value(".fig-map .land", "fill");
    let border = css.value(".fig-map .country .shape", "stroke");

    // Every fill of the stylesheet that names a pattern: the pattern's id and the fallback colour.
    let mut named: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for (selector, declarations) in &css.rules {
        if let Some(fill) = declarations.get("fill") {
            let fill = css.resolve(fill);
            if let Some(rest) = fill.strip_prefix("url(#") {
                let (id, fallback) = rest.split_once(')').unwrap();
                named
                    .entry(id.to_string())
                    .or_default()
                    .push((selector.clone(), fallback.trim().to_string()));
            }
        }
    }
    let mut pairs = Vec::new();
    let mut model_marks = BTreeMap::new();
    let mut rest = svg;
    while let Some(at) = rest.find("<pattern id=\"") {
        let pattern = &rest[at..at + rest[at..].find("</pattern>").unwrap()];
        rest = &rest[at + pattern.len()..];
        let id = attribute(pattern, "<pattern", "id");
        if id == "map-hatch" {
            continue; // held by the test above
        }
        let ground = attribute(pattern, "<rect", "fill");
        let fills = named
            .get(&id)
            .unwrap_or_else(|| panic!("site.css fills nothing with #{id}"));
        for (selector, fallback) in fills {
            assert_eq!(
                fallback, &ground,
                "`{selector}`: the fallback of #{id} is its ground"
            );
        }
        for (name, back) in [("sea", &sea), ("land", &land), ("borders", &border)] {
            pairs.push(pair(
                format!("map: #{id}'s ground against the {name}"),
                &ground,
                back,
                3.0,
            ));
        }
        let marks = ["<circle", "<line"].iter().find_map(|tag| {
            pattern.contains(tag).then(|| {
                let paint = if *tag == "<circle" { "fill" } else { "stroke" };
                (tag.to_string(), attribute(pattern, tag, paint))
            })
        });
        if let Some((_, colour)) = &marks {
            pairs.push(pair(
                format!("map: #{id}'s marks against its ground"),
                colour,
                &ground,
                3.0,
            ));
        }
        if id.starts_with("map-model-") {
            // The marks' shape: how many lines and circles, and which way the lines run.
            let shape = format!(
                "{} circles, lines {:?}",
                pattern.matches("<circle").count(),
                pattern
                    .match_indices("<line")
                    .map(|(i, _)| {
                        let line = &pattern[i..];
                        (attribute(line, "<line", "x1") == attribute(line, "<line", "x2")) as u8
                    })
                    .collect::<Vec<_>>()
            );
            model_marks.insert(id.clone(), shape);
        }
    }
    assert!(
        model_marks.len() >= 3,
        "the models' textures: {model_marks:?}"
    );
    let distinct: std::collections::BTreeSet<_> = model_marks.values().collect();
    assert_eq!(
        distinct.len(),
        model_marks.len(),
        "each model has marks of its own: {model_marks:?}"
    );
    assert!(
        named.contains_key("map-limited"),
        "a limited yes has its texture"
    );
    assert_pairs(&pairs);
}

/// The grade's colour ("verified (…)") is text of 4.5:1 on the page and on a highlighted row, and not
/// the colour of a yes or a no, so a grade is never read as an answer.
#[test]
fn the_grades_colour_is_text_of_4_5_to_1_apart_from_yes_and_no() {
    let css = stylesheet();
    let page = css.value("body", "background");
    let highlight = css.value(":target", "background");
    let verified = css.value(".verified", "color");
    let yes = css.value(".yes", "color");
    let no = css.value(".no", "color");
    assert_ne!(verified, yes, "a grade is coloured like a yes");
    assert_ne!(verified, no, "a grade is coloured like a no");
    assert_pairs(&[
        pair("grade (.verified) on the page", &verified, &page, 4.5),
        pair(
            "grade (.verified) on a highlighted row",
            &verified,
            &highlight,
            4.5,
        ),
    ]);
}
