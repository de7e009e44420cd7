//! The Markdown side of the check: a twin's links, read by pulldown-cmark as CommonMark with tables (the
//! way a Markdown reader sees them, not by pattern), each located at its destination as written.

use super::resolve::resolve;
use super::{Link, PageLinks};
use crate::diagnostics::LineIndex;

/// The links of one Markdown twin (CommonMark with tables, by pulldown-cmark), each located at its
/// destination. A twin has no ids: a `#fragment` pointing into one is an error.
pub fn scan_markdown(path: &str, text: &str, base_url: &str) -> PageLinks {
    use pulldown_cmark::{Event, LinkType, Options, Parser, Tag};
    let lines = LineIndex::new(text);
    let mut result = PageLinks::default();
    for (event, range) in Parser::new_ext(text, Options::ENABLE_TABLES).into_offset_iter() {
        let (Event::Start(Tag::Link {
            dest_url,
            link_type,
            ..
        })
        | Event::Start(Tag::Image {
            dest_url,
            link_type,
            ..
        })) = event
        else {
            continue;
        };
        // `<name@example.org>` is an email autolink: its destination carries no `mailto:`.
        if link_type == LinkType::Email {
            continue;
        }
        let Some((target, fragment)) = resolve(path, &dest_url, base_url) else {
            continue;
        };
        // The destination as written comes after the link text: the last occurrence in the link's span.
        let offset = text[range.clone()]
            .rfind(&*dest_url)
            .map_or(range.start, |i| range.start + i);
        let (line, column) = lines.locate(offset);
        result.links.push(Link {
            href: dest_url.to_string(),
            target,
            fragment,
            outside_base: super::outside_base(&dest_url, base_url),
            line,
            column,
        });
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linkcheck::test_support::{BASE, link_summary};

    #[test]
    fn scans_markdown_links_at_their_destination() {
        let md = "# T\n\n| a | b |\n|---|---|\n| [France](/fr/index.md) | [source](https://example.com/) |\n\nSee [the matrix](../e-invoicing/#fr-odoo) and ![x](/i.png).\n";
        let page = scan_markdown("/fr/index.md", md, BASE);
        assert!(page.ids.is_empty() && page.errors.is_empty());
        let found = link_summary(&page);
        assert_eq!(
            found,
            [
                ("/fr/index.md", "/fr/index.md", None, 5, 12),
                (
                    "../e-invoicing/#fr-odoo",
                    "/e-invoicing/index.html",
                    Some("fr-odoo"),
                    7,
                    18
                ),
                ("/i.png", "/i.png", None, 7, 52),
            ]
        );
    }
}
