//! A page made of parts handed over part by part in a one-off build (the `/changes/` page and twin, 24
//! MB each at x100; the partners, local ERPs and news pages): its skeleton's head, then each part as the
//! two threads make them, a batch's worth ([`ONE_OFF_BATCH_BYTES`]) at a time, let go once handed over,
//! then its tail. The same pieces as the site renders the page whole ([`Site::render`]), so the same bytes and
//! content hash; the page is never held whole.
//!
//! What later outputs read of the page is kept as each part is made: the link check's value of each part
//! (its links, ids and shape, not its bytes) and, for a twin, whether the part has a row that
//! `llms-full.txt` condenses. A twin goes to `llms-full.txt` as it comes, on trust that no part has such
//! a row; the first that has one ends the trust: what the file took of the twin is taken back, and the
//! twin is condensed whole after it is handed over, as a session does (its parts made again).

use std::sync::Arc;

use super::{
    BuildError, ONE_OFF_BATCH_BYTES, OutputSizes, Quota, StreamingSink, grow, hand_over,
    render_with_parts,
};
use crate::db::Db;
use crate::diagnostics::Diagnostic;
use crate::output::{Output, OutputKey, PartKey, Piece, PieceHasher};
use crate::second_thread::Helper;
use crate::site::{Growth, GrowthShare, Site};

/// Hands the page at `output` (made of parts) to `sink` part by part (see the module documentation).
/// Like a batch's outputs: a render error is kept in `render_errors` instead, and nothing is handed
/// over after the first.
pub(super) fn stream_parted(
    site: &'static Site,
    db: &mut Db,
    helper: &mut Helper,
    output: &Output,
    sink: &mut impl StreamingSink,
    llms_full: &mut Option<Box<dyn Growth>>,
    render_errors: &mut Vec<Diagnostic>,
) -> Result<(), BuildError> {
    let Some(params) = (site.parts_of)(&*db, output).map(|parts| {
        let params: Arc<[String]> = parts.iter().map(|part| part.param(&*db).clone()).collect();
        params
    }) else {
        return Ok(());
    };
    let skeleton = match (site.skeleton)(&*db, OutputKey::new(&*db, output.clone())) {
        Ok(skeleton) => skeleton.clone(),
        Err(error) => {
            render_errors.push(error.clone());
            return Ok(());
        }
    };
    let Some(tail) = skeleton.tail else {
        // The template prints no parts: the page is its head, handed over as a batch's output is.
        render_with_parts(site, &*db, output);
        let sizes = &mut OutputSizes::default();
        return hand_over(
            site,
            db,
            std::slice::from_ref(output),
            sink,
            sizes,
            llms_full,
            render_errors,
        );
    };
    let io = BuildError::Io;
    let mut stream = PartedStream {
        output,
        hasher: PieceHasher::default(),
        handing: render_errors.is_empty(),
        share: None,
    };
    if stream.handing
        && let Some(growth) = llms_full.as_mut()
        && let Some((share, source_line)) = growth.begin_parted(&*db, output, &skeleton.head, &tail)
    {
        let before = sink.taken(growth.output());
        sink.pieces(growth.output(), &[source_line]).map_err(io)?;
        stream.share = Some((share, before));
    }
    stream
        .piece(&skeleton.head, true, sink, llms_full)
        .map_err(io)?;
    let mut start = 0;
    while start < params.len() {
        let work = Arc::new(PartWork {
            site,
            output: output.clone(),
            params: params.clone(),
            quota: Quota::new(start, params.len(), ONE_OFF_BATCH_BYTES),
        });
        let (worker_db, theirs) = (db.clone(), work.clone());
        helper.run_beside(move || theirs.make(&worker_db), || work.make(&*db));
        let end = work.end();
        for param in &params[start..end] {
            let part = PartKey::new(&*db, output.kind, param.clone());
            match (site.part)(&*db, part) {
                Ok(piece) => {
                    let plain = (site.part_is_plain)(&*db, output, part);
                    stream.piece(piece, plain, sink, llms_full).map_err(io)?;
                }
                Err(error) => {
                    // The page fails at its first part that does (as `render_parted`).
                    render_errors.push(error.clone());
                    return Ok(());
                }
            }
        }
        crate::memory::evict(db);
        start = end;
    }
    stream.piece(&tail, true, sink, llms_full).map_err(io)?;
    // The link check's value of the page, from its parts' (kept) while its skeleton is at hand.
    crate::linkcheck::page_links(&*db, OutputKey::new(&*db, output.clone()));
    if !stream.handing {
        return Ok(());
    }
    sink.pieces_done(output, stream.hasher.finalize())
        .map_err(io)?;
    let Some(growth) = llms_full else {
        return Ok(());
    };
    match stream.share {
        Some((share, _)) => {
            let pieces = growth.end_parted(share);
            sink.pieces(growth.output(), &pieces).map_err(io)?;
            grow(db, growth.as_mut(), &[], sink).map_err(io)
        }
        // Not a twin, or a twin condensed whole.
        None => grow(db, growth.as_mut(), std::slice::from_ref(output), sink).map_err(io),
    }
}

/// Where the pieces of a page handed over part by part go.
struct PartedStream<'a> {
    output: &'a Output,
    hasher: PieceHasher,
    /// Whether the pieces are handed over (no render error in the build so far).
    handing: bool,
    /// A twin's share of `llms-full.txt` while it goes there as it comes, with how much of the file
    /// the sink had taken before it.
    share: Option<(GrowthShare, u64)>,
}

impl PartedStream<'_> {
    /// The next piece of the page; `plain` says it has no row that `llms-full.txt` condenses.
    fn piece(
        &mut self,
        piece: &Piece,
        plain: bool,
        sink: &mut impl StreamingSink,
        llms_full: &mut Option<Box<dyn Growth>>,
    ) -> std::io::Result<()> {
        self.hasher.update(piece);
        if !self.handing {
            return Ok(());
        }
        sink.pieces(self.output, std::slice::from_ref(piece))?;
        let Some(growth) = llms_full.as_mut() else {
            return Ok(());
        };
        if !plain && let Some((share, before)) = self.share.take() {
            growth.take_back_parted(share);
            sink.take_back(growth.output(), before)?;
        }
        if let Some((share, _)) = &mut self.share
            && let Some(ready) = growth.parted_piece(share, piece.clone())
        {
            sink.pieces(growth.output(), &[ready])?;
        }
        Ok(())
    }
}

/// The parts of one page both threads make, from where the last batch of them ended until they reach
/// [`ONE_OFF_BATCH_BYTES`].
struct PartWork {
    site: &'static Site,
    output: Output,
    params: Arc<[String]>,
    quota: Quota,
}

impl PartWork {
    /// Makes parts until the batch is full (both threads run this): each part's bytes, its links for the
    /// link check and, for a twin, whether it has a row to condense.
    fn make(&self, db: &dyn salsa::Database) {
        let page = OutputKey::new(db, self.output.clone());
        // A batch of parts may end before any part; no part's size is known before it is made.
        while let Some(i) = self.quota.take(|_| true, |_| 0) {
            let part = PartKey::new(db, self.output.kind, self.params[i].clone());
            let size = (self.site.part)(db, part).as_ref().map_or(0, Piece::len);
            crate::linkcheck::check_part(db, page, part);
            (self.site.part_is_plain)(db, &self.output, part);
            self.quota.made(size);
        }
    }

    /// Where the batch of parts ended: the first part it did not make.
    fn end(&self) -> usize {
        self.quota.end()
    }
}
