//! Pages made of parts: a page whose bulk is a long list of rows (the `/changes/` page's unreleased
//! changes, every fact at x100; the partners, local ERPs and news pages, 15,000, 10,000 and 20,000 rows
//! at x100) is rendered as its template without the rows (the skeleton) and one part per country (per
//! few hundred news items), each rendered on its own by a macro of `macros.html` / `macros.md`, then
//! spliced as shared [`Piece`]s, as `changes.json` splices its per-country fragments. An edit renders the
//! skeleton (short) and the edited country's part again, not the whole page, and the link check reads
//! the same parts (`linkcheck/parts.rs`). No query holds a whole list page's rows at once: a build
//! holds one part's context at a time, not the page's.
//!
//! ```text
//! page_context (counts, PARTS_MARK where the rows go) -> page_skeleton(page) -> (head, tail)
//! PartsSpec::value(country) -> page_part(page kind, format, country) -> the rows (macro output)
//! output = head, part, part, ..., tail
//! ```

use crate::kinds::RendererOf;
use minijinja::Value;

use super::context::{PARTS_MARK, PageContextKey, PartsSpec, context_of};
use super::templates::{
    TEMPLATES, TemplateSet, call_macro, compiled_templates, prefix_site_links, render_page,
    rendering_error, template_names,
};
use crate::diagnostics::Diagnostic;
use crate::kinds::{Format, PageKind, Renderer};
pub use crate::output::{OutputKey, PartKey, Skeleton};
use crate::output::{Piece, Rendered, RenderedFile, text_of};
use crate::routes::Output;

/// The page kind and format of a part's page.
pub(crate) fn page_of_part(db: &dyn salsa::Database, key: PartKey<'_>) -> (PageKind, Format) {
    match Renderer::of_kind(*key.page(db)) {
        Renderer::Page(kind, format) => (kind, format),
        other => unreachable!("a part belongs to a page, not to {}", other.name()),
    }
}

/// The skeleton of a page made of parts (memoized: the link check reads it too). Evicted like the outputs
/// in a one-off build (see [`crate::memory`]).
#[salsa::tracked(returns(ref), lru = 0)]
pub(crate) fn page_skeleton<'db>(
    db: &'db dyn salsa::Database,
    key: OutputKey<'db>,
) -> Result<Skeleton, Diagnostic> {
    let output = key.output(db);
    let crate::routes::Renderer::Page(kind, format) = output.renderer() else {
        return Ok(Skeleton {
            head: Piece::new(Vec::new()),
            tail: None,
        });
    };
    let page = render_page(
        db,
        &template_names(kind.spec().template, format),
        &context_of(
            db,
            PageContextKey::new(db, kind, output.param.clone().unwrap_or_default()),
        ),
        &output.path,
    );
    if let Some(error) = page.error {
        return Err(error);
    }
    let text = with_base_path(db, text_of(&page.rendered.bytes()).into_owned(), format);
    let mut marks = text.match_indices(PARTS_MARK).map(|(at, _)| at);
    let Some(at) = marks.next() else {
        return Ok(Skeleton {
            head: Piece::new(text),
            tail: None,
        });
    };
    if marks.next().is_some() {
        let name = template_names(kind.spec().template, format)[2].clone();
        return Err(Diagnostic::new(
            &format!("{TEMPLATES}/{name}"),
            1,
            1,
            "the page prints its parts (the rows rendered country by country) more than once; print them once".to_string(),
        ));
    }
    Ok(Skeleton {
        head: Piece::new(text[..at].to_string()),
        tail: Some(Piece::new(text[at + PARTS_MARK.len()..].to_string())),
    })
}

/// One part of a page: its spec's macro called with its value. Evicted like the outputs in a one-off
/// build; a session keeps every part, so an edit renders only the parts whose value changed.
#[salsa::tracked(returns(ref), lru = 0)]
pub(crate) fn page_part<'db>(
    db: &'db dyn salsa::Database,
    key: PartKey<'db>,
) -> Result<Piece, Diagnostic> {
    let (kind, format) = page_of_part(db, key);
    let spec = kind.spec();
    let Some(parts) = spec.parts else {
        return Ok(Piece::new(Vec::new()));
    };
    let names = template_names(spec.template, format);
    let env = match compiled_templates(db, TemplateSet::new(db, names.to_vec())) {
        Ok(env) => env,
        Err(diagnostic) => return Err(diagnostic.clone()),
    };
    let macros = &names[1];
    let value = Value::from_serialize((parts.value)(db, key.param(db)));
    let rendered = call_macro(env, macros, parts.macro_name, &[value], || {
        let page: &str = kind.into();
        minijinja::Error::new(
            minijinja::ErrorKind::UnknownFunction,
            format!(
                "the {page} page renders its parts with the macro `{}`, which {macros} does not define",
                parts.macro_name
            ),
        )
    });
    match rendered {
        Ok(text) => Ok(Piece::new(with_base_path(db, text, format))),
        Err(e) => Err(rendering_error(db, &e, macros)),
    }
}

/// The parts of a page of `kind` in `format`, in page order.
pub(crate) fn part_keys<'db>(
    db: &'db dyn salsa::Database,
    kind: PageKind,
    format: Format,
) -> Vec<PartKey<'db>> {
    kind.spec().parts.map_or_else(Vec::new, |parts| {
        (parts.params)(db)
            .iter()
            .map(|param| PartKey::new(db, Renderer::Page(kind, format).kind(), param.clone()))
            .collect()
    })
}

/// How many parts a page of `kind` has in each of its formats (none when it is not made of parts).
pub fn parts_per_format(db: &dyn salsa::Database, kind: PageKind) -> usize {
    kind.spec()
        .parts
        .map_or(0, |parts| (parts.params)(db).len())
}

/// A page made of parts: its skeleton's head, each part, its tail, as shared pieces.
pub(crate) fn render_parted(db: &dyn salsa::Database, output: &Output) -> RenderedFile {
    let crate::routes::Renderer::Page(kind, format) = output.renderer() else {
        return RenderedFile::of(Rendered::new(Vec::new()));
    };
    let skeleton = match page_skeleton(db, OutputKey::new(db, output.clone())) {
        Ok(skeleton) => skeleton,
        Err(error) => return RenderedFile::failed(error.clone()),
    };
    let Some(tail) = &skeleton.tail else {
        return RenderedFile::of(Rendered::from_pieces([skeleton.head.clone()]));
    };
    let mut pieces = vec![skeleton.head.clone()];
    for key in part_keys(db, kind, format) {
        match page_part(db, key) {
            Ok(piece) => pieces.push(piece.clone()),
            Err(error) => return RenderedFile::failed(error.clone()),
        }
    }
    pieces.push(tail.clone());
    RenderedFile::of(Rendered::from_pieces(pieces))
}

/// How the page at `output` is made of parts, when it is.
pub(crate) fn parts_spec(output: &Output) -> Option<PartsSpec> {
    match output.renderer() {
        crate::routes::Renderer::Page(kind, _) => kind.spec().parts,
        _ => None,
    }
}

/// The markup that encloses the parts of the page at `output` (`("", "")` for a page not made of parts).
pub(crate) fn part_enclosing(output: &Output) -> (&'static str, &'static str) {
    parts_spec(output).map_or(("", ""), |spec| spec.enclosing)
}

/// Whether the page at `output` is made of parts (a one-off build hands it over part by part, see
/// `build::parted`).
pub fn is_made_of_parts(output: &Output) -> bool {
    parts_spec(output).is_some()
}

/// Whether the page at `output` is made of parts and its template prints them (one that does not, the
/// `/changes/` page without unreleased changes, is its skeleton's head alone and rendered whole).
pub fn prints_its_parts(db: &dyn salsa::Database, output: &Output) -> bool {
    is_made_of_parts(output)
        && matches!(
            page_skeleton(db, OutputKey::new(db, output.clone())),
            Ok(Skeleton { tail: Some(_), .. })
        )
}

/// The parts of the page at `output` in page order, when it is made of parts (what the link check and
/// `llms-full.txt` read instead of the whole page).
pub(crate) fn parts_of<'db>(
    db: &'db dyn salsa::Database,
    output: &Output,
) -> Option<Vec<PartKey<'db>>> {
    let crate::routes::Renderer::Page(kind, format) = output.renderer() else {
        return None;
    };
    parts_spec(output).map(|_| part_keys(db, kind, format))
}

#[cfg(feature = "streaming")]
/// Limits the skeletons and parts to their most recent value (a one-off build, see [`crate::memory`]).
pub(crate) fn keep_last_parts_only(db: &mut dyn salsa::Database) {
    page_skeleton::set_lru_capacity(db, 1);
    page_part::set_lru_capacity(db, 1);
}

/// `text` with its site links under the base URL's path (see [`prefix_site_links`]).
pub(crate) fn with_base_path(db: &dyn salsa::Database, text: String, format: Format) -> String {
    let prefix = crate::model::base_path(db);
    if prefix.is_empty() {
        text
    } else {
        prefix_site_links(&text, prefix, format)
    }
}
