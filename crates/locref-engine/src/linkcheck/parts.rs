//! The check of a page made of parts ([`crate::site::Site::parts_of`]): its skeleton (the page without its parts)
//! is parsed as a page, and each part on its own, within the markup that encloses it in the page (a
//! Markdown part as Markdown), so an edit that renders one part again parses that part, not the page.
//!
//! ```text
//! part_links(page, part)     one part parsed once per change of its bytes: ids, links, errors, its shape
//! page_layout(page)          the shape of the skeleton's head and the parts in order
//! page_links(page)           the skeleton's links; the ids and errors of the skeleton and of every part
//! part_problems(page, part)  one part's broken links, located in the part
//! broken_links(page)         the skeleton's and every part's, located in the page
//! ```
//!
//! Positions: a part's problems are located in the part, then placed in the page by the shapes (lines,
//! and characters after the last line end) of the skeleton's head and of the parts before it; the
//! skeleton's own problems after the parts are moved past them. Only what is reported is placed.

use super::{
    Link, PageLinks, base_url, diagnose_links, is_markdown, page_ids, scan, scan_fragment,
    scan_markdown,
};
use crate::diagnostics::Diagnostic;
use crate::output::{OutputKey, PartKey, Skeleton};
use crate::site::site_of;

/// One part of one page, as a query key.
#[salsa::interned(debug)]
pub(crate) struct PagePart<'db> {
    pub page: OutputKey<'db>,
    pub part: PartKey<'db>,
}

/// How much text a unit spans: the line ends in it and the characters after the last one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Shape {
    line_ends: u32,
    trailing_chars: u32,
}

impl Shape {
    fn of(text: &str) -> Shape {
        let line_ends = memchr::memchr_iter(b'\n', text.as_bytes()).count() as u32;
        let last_line = text.rfind('\n').map_or(text, |at| &text[at + 1..]);
        Shape {
            line_ends,
            trailing_chars: last_line.chars().count() as u32,
        }
    }
}

/// Where a unit starts in the page (line and column, 1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Cursor {
    line: u32,
    column: u32,
}

impl Cursor {
    const START: Cursor = Cursor { line: 1, column: 1 };

    /// Where the next unit starts, after a unit of `shape` that starts here.
    fn after(self, shape: Shape) -> Cursor {
        match shape.line_ends {
            0 => Cursor {
                line: self.line,
                column: self.column + shape.trailing_chars,
            },
            n => Cursor {
                line: self.line + n,
                column: shape.trailing_chars + 1,
            },
        }
    }

    /// A position of a unit that starts here, in the page.
    fn place(self, line: u32, column: u32) -> (u32, u32) {
        match line {
            1 => (self.line, self.column + column - 1),
            _ => (self.line + line - 1, column),
        }
    }
}

/// What the check reads of one part.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PartLinks {
    /// Located in the part.
    pub links: PageLinks,
    pub shape: Shape,
}

/// Parses one part of a page (once per change of its bytes).
#[salsa::tracked(returns(ref))]
pub(crate) fn part_links<'db>(db: &'db dyn salsa::Database, key: PagePart<'db>) -> PartLinks {
    let page = key.page(db).output(db);
    let Ok(piece) = (site_of(db).part)(db, *key.part(db)) else {
        // A part that failed to render is reported as a template error; there is nothing to check.
        return PartLinks::default();
    };
    let text = piece.text();
    let links = if is_markdown(&page.path) {
        scan_markdown(&page.path, &text, base_url(db))
    } else {
        // Within the markup that encloses it in the page, so the parser is in the state it is in there.
        let (open, close) = (site_of(db).part_enclosing)(page);
        let mut links = scan_fragment(
            &page.path,
            &format!("{open}{text}{close}"),
            base_url(db),
            "body",
        );
        let opening = open.chars().count() as u32;
        let on_first_line = |line: u32, column: &mut u32| {
            if line == 1 {
                *column = column.saturating_sub(opening).max(1);
            }
        };
        for link in &mut links.links {
            on_first_line(link.line, &mut link.column);
        }
        for error in &mut links.errors {
            on_first_line(error.line, &mut error.column);
        }
        links
    };
    PartLinks {
        links,
        shape: Shape::of(&text),
    }
}

#[cfg(feature = "streaming")]
/// Parses one part of `page` for the check (what a one-off build does as it makes each part of a page
/// it hands over part by part, so the check does not need the part's bytes later).
pub(crate) fn check_part<'db>(
    db: &'db dyn salsa::Database,
    page: OutputKey<'db>,
    part: PartKey<'db>,
) {
    part_links(db, PagePart::new(db, page, part));
}

/// One part's broken links, located in the part.
#[salsa::tracked(returns(ref))]
pub(crate) fn part_problems<'db>(
    db: &'db dyn salsa::Database,
    key: PagePart<'db>,
) -> Vec<Diagnostic> {
    let page = *key.page(db);
    let links: &[Link] = &part_links(db, key).links.links;
    diagnose_links(db, page.output(db), links, || page_ids(db, page))
}

/// Where the parts of a page made of parts stand: the shape of the skeleton's head, and the parts in
/// order. Memoized, so the check of the parts' links (after a one-off build has let the skeleton go)
/// does not render the skeleton again.
#[derive(Debug, Clone, PartialEq, Eq, salsa::SalsaValue)]
pub(crate) struct Layout<'db> {
    head: Shape,
    parts: Vec<PagePart<'db>>,
}

/// The layout of the page at `page` when it is made of parts and its skeleton has a place for them.
#[salsa::tracked(returns(ref))]
pub(crate) fn page_layout<'db>(
    db: &'db dyn salsa::Database,
    page: OutputKey<'db>,
) -> Option<Layout<'db>> {
    let site = site_of(db);
    let keys = (site.parts_of)(db, page.output(db))?;
    let skeleton = (site.skeleton)(db, page).as_ref().ok()?;
    skeleton.tail.as_ref()?;
    Some(Layout {
        head: Shape::of(&skeleton.head.text()),
        parts: keys
            .into_iter()
            .map(|part| PagePart::new(db, page, part))
            .collect(),
    })
}

/// A page made of parts, with what the check needs of it.
pub(crate) struct Parted<'db> {
    page: OutputKey<'db>,
    layout: &'db Layout<'db>,
}

impl<'db> Parted<'db> {
    /// The page at `page` when it is made of parts and its skeleton rendered with a place for them.
    pub(crate) fn of(db: &'db dyn salsa::Database, page: OutputKey<'db>) -> Option<Parted<'db>> {
        // Only the page kinds made of parts have a layout to ask for.
        if !(site_of(db).is_made_of_parts)(page.output(db)) {
            return None;
        }
        let layout = page_layout(db, page).as_ref()?;
        Some(Parted { page, layout })
    }

    /// Where each part starts in the page, and where the skeleton's tail starts.
    fn cursors(&self, db: &dyn salsa::Database) -> (Vec<Cursor>, Cursor) {
        let mut at = Cursor::START.after(self.layout.head);
        let mut starts = Vec::with_capacity(self.layout.parts.len());
        for part in &self.layout.parts {
            starts.push(at);
            at = at.after(part_links(db, *part).shape);
        }
        (starts, at)
    }

    /// The page's [`PageLinks`]: the skeleton's ids, links and errors (those after the parts moved past
    /// them), every part's ids and errors, and an id that two units both hold.
    pub(crate) fn page_links(&self, db: &dyn salsa::Database) -> PageLinks {
        let path = &self.page.output(db).path;
        let Ok(Skeleton {
            head,
            tail: Some(tail),
        }) = (site_of(db).skeleton)(db, self.page)
        else {
            return PageLinks::default();
        };
        let skeleton = format!("{}{}", head.text(), tail.text());
        let mut links = if is_markdown(path) {
            scan_markdown(path, &skeleton, base_url(db))
        } else {
            scan(path, &skeleton, base_url(db))
        };
        let junction = Cursor::START.after(self.layout.head);
        let (starts, end) = self.cursors(db);
        // The skeleton's positions after the junction move past the parts.
        let past_parts = |line: u32, column: u32| {
            let at = Cursor { line, column };
            if at < junction {
                (line, column)
            } else if line == junction.line {
                (end.line, end.column + column - junction.column)
            } else {
                (line - junction.line + end.line, column)
            }
        };
        for link in &mut links.links {
            (link.line, link.column) = past_parts(link.line, link.column);
        }
        for error in &mut links.errors {
            (error.line, error.column) = past_parts(error.line, error.column);
        }
        for (part, start) in self.layout.parts.iter().zip(starts) {
            let part = &part_links(db, *part).links;
            for error in &part.errors {
                links.errors.push(placed(error, start));
            }
            for id in &part.ids {
                if !links.ids.insert(id.clone()) && !is_markdown(path) {
                    links.errors.push(Diagnostic::new(
                        path,
                        start.line,
                        start.column,
                        format!("duplicate id \"{id}\" (in this part of the page and before it); an id names one element"),
                    ));
                }
            }
        }
        links
    }

    /// Every part's broken links, located in the page.
    pub(crate) fn broken_links(&self, db: &dyn salsa::Database) -> Vec<Diagnostic> {
        let problems: Vec<(usize, &Vec<Diagnostic>)> = self
            .layout
            .parts
            .iter()
            .map(|part| part_problems(db, *part))
            .enumerate()
            .filter(|(_, problems)| !problems.is_empty())
            .collect();
        if problems.is_empty() {
            return Vec::new();
        }
        let (starts, _) = self.cursors(db);
        problems
            .into_iter()
            .flat_map(|(n, problems)| {
                let start = starts[n];
                problems.iter().map(move |p| placed(p, start))
            })
            .collect()
    }

    /// How many internal links the parts hold.
    pub(crate) fn link_count(&self, db: &dyn salsa::Database) -> usize {
        self.layout
            .parts
            .iter()
            .map(|part| part_links(db, *part).links.links.len())
            .sum()
    }
}

/// A diagnostic located in a part that starts at `start`, located in the page.
fn placed(diagnostic: &Diagnostic, start: Cursor) -> Diagnostic {
    let (line, column) = start.place(diagnostic.line, diagnostic.column);
    Diagnostic {
        line,
        column,
        ..diagnostic.clone()
    }
}
