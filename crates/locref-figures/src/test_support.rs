//! What the figure tests share: the committed shapes, a small hand-written shapes file, and XML parsing.

use super::Shapes;

/// The committed shapes file, parsed (the tests check it too).
pub(crate) fn committed_shapes() -> Shapes {
    Shapes::parse(include_str!("../../../rules/geo/countries.json"))
        .expect("committed shapes parse")
}

/// Two views and two countries: `aa` has a shape, `bb` is a microstate with only a marker.
pub(crate) const TINY_SHAPES: &str = r#"{
  "source": "test",
  "views": {
    "world": {"title": "World", "width": 100, "height": 50, "land": "M0 40l100 0 0 10-100 0z"},
    "europe": {"title": "Europe", "width": 100, "height": 80, "land": "", "outline_in": {"world": "M1 1l2 0 0 2z"}}
  },
  "countries": {
    "aa": {"view": "world", "paths": {"world": "M0 0l10 0 0 10z", "europe": "M0 0l1 0 0 1z"}, "point": [5, 5], "marker": false},
    "bb": {"view": "europe", "paths": {}, "point": [50, 40], "marker": true}
  }
}"#;

/// Parses `svg` as XML, or fails the test with the parser's message and the text.
pub(crate) fn parse_xml(svg: &str) -> roxmltree::Document<'_> {
    roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("not XML: {e}\n{svg}"))
}

/// The text of an element's `<title>` child, if it has one.
pub(crate) fn title_of(node: roxmltree::Node) -> Option<String> {
    node.children()
        .find(|c| c.has_tag_name("title"))
        .map(|t| t.text().unwrap_or_default().to_string())
}

/// Fails unless the figure holds under the site's Content-Security-Policy: no `style` attribute or
/// element, no script, no event handler, nothing loaded from elsewhere.
pub(crate) fn assert_csp_safe(doc: &roxmltree::Document) {
    for node in doc.descendants().filter(|n| n.is_element()) {
        let tag = node.tag_name().name();
        assert!(
            !["style", "script", "image", "foreignObject", "use"].contains(&tag),
            "<{tag}>"
        );
        for attribute in node.attributes() {
            let name = attribute.name();
            assert!(
                name != "style" && !name.starts_with("on"),
                "{name} on <{tag}>"
            );
            if name == "fill" || name == "stroke" {
                let value = attribute.value();
                assert!(
                    !value.contains("url(") || value.starts_with("url(#"),
                    "{value}"
                );
            }
        }
    }
}
