//! The fast plan (the plan of every [`Profile`] when locref is built with its `streaming` feature, the
//! default): the outputs in render order
//! ([`render_order`]), in batches of a few megabytes ([`BATCH_BYTES`]) that both threads take from and
//! that are handed over and let go before the next, the site-wide lists and `llms-full.txt` handed over
//! piece by piece in a single build, and the pages made of parts part by part ([`parted`]). It decides
//! which thread renders what and how much is held; what it hands over is what [`super::serial`] hands
//! over, byte for byte.

use std::sync::Arc;

use super::{BuildError, Discard, Profile, Sink, checked, page_diagnostics};
use crate::db::Db;
use crate::diagnostics::Diagnostic;
use crate::linkcheck::is_checked;
use crate::output::{Output, OutputKey, Piece, Rendered};
use crate::second_thread::Helper;
use crate::site::{Growth, ListStream, Site};

mod parted;

/// Whether an output is a page or twin, or is made from them: the work of the thread that renders and
/// checks the pages.
fn reads_pages(site: &Site, output: &Output) -> bool {
    is_checked(&output.path) || (site.made_from_twins)(output)
}

/// A sink that also takes outputs piece by piece: what the streaming plan hands over besides whole
/// outputs.
pub(crate) trait StreamingSink: Sink {
    /// The next pieces of an output a one-off build hands over piece by piece, in order
    /// (`llms-full.txt` as the twins are rendered, a site-wide list as its parts are made): the sink
    /// stages them as they come. Two such outputs may be open at once.
    fn pieces(&mut self, output: &Output, pieces: &[Piece]) -> std::io::Result<()>;

    /// The end of such an output: the content hash of all its pieces.
    fn pieces_done(&mut self, output: &Output, hash: blake3::Hash) -> std::io::Result<()>;

    /// How much of such an output the sink has taken so far (its measure: only given back to
    /// [`StreamingSink::take_back`]).
    fn taken(&self, output: &Output) -> u64;

    /// Forgets what the sink took of such an output after `taken` ([`StreamingSink::taken`]).
    fn take_back(&mut self, output: &Output, taken: u64) -> std::io::Result<()>;
}

impl<F: FnMut(&str)> StreamingSink for Discard<F> {
    fn pieces(&mut self, _: &Output, _: &[Piece]) -> std::io::Result<()> {
        Ok(())
    }

    fn pieces_done(&mut self, output: &Output, _: blake3::Hash) -> std::io::Result<()> {
        (self.0)(&output.path);
        Ok(())
    }

    fn taken(&self, _: &Output) -> u64 {
        0
    }

    fn take_back(&mut self, _: &Output, _: u64) -> std::io::Result<()> {
        Ok(())
    }
}

/// The publisher stages such an output as its pieces come, and puts it in place with the rest.
impl StreamingSink for crate::publish::Publish<'_> {
    fn pieces(&mut self, output: &Output, pieces: &[Piece]) -> std::io::Result<()> {
        self.grow(&output.path, pieces)
    }

    fn pieces_done(&mut self, output: &Output, hash: blake3::Hash) -> std::io::Result<()> {
        self.grown(&output.path, hash)
    }

    fn taken(&self, output: &Output) -> u64 {
        self.grown_len(&output.path)
    }

    fn take_back(&mut self, output: &Output, taken: u64) -> std::io::Result<()> {
        crate::publish::Publish::take_back(self, &output.path, taken)
    }
}

/// The site's source checks on two threads: the helper does the site's warm-up ([`Site::warm_up`]:
/// its largest reads, from the end this thread reaches last) while this thread runs the checks; each
/// takes what the other made as it reaches it.
fn source_diagnostics_beside(site: &'static Site, db: &Db, helper: &mut Helper) -> Vec<Diagnostic> {
    let worker_db = db.clone();
    let theirs = move || (site.warm_up)(&worker_db);
    helper.run_beside(theirs, || (site.source_diagnostics)(db))
}

/// [`super::render_site`] with a session's [`Helper`] as the second thread.
pub fn render_site_with<'db>(
    site: &'static Site,
    db: &'db Db,
    helper: &mut Helper,
) -> Result<Vec<(String, &'db Rendered)>, Vec<Diagnostic>> {
    check_site_with(site, db, helper)?;
    Ok((site.outputs)(db)
        .iter()
        .map(|output| (output.path.clone(), (site.render)(db, output)))
        .collect())
}

/// Every diagnostic of the site, or none when every output rendered (what a session's rebuild runs
/// before it publishes): each output is rendered as far as its [`digest`], so a session can publish
/// from the digests and ask for the bytes of only the outputs that changed.
pub(super) fn check_site_with(
    site: &'static Site,
    db: &Db,
    helper: &mut Helper,
) -> Result<(), Vec<Diagnostic>> {
    let diagnostics = source_diagnostics_beside(site, db, helper);
    if !diagnostics.is_empty() {
        return Err(diagnostics);
    }
    let worker_db = db.clone();
    let worker = move || {
        let all = (site.outputs)(&worker_db);
        // First the outputs that read no page: the API, the data files, the headers, the assets.
        for output in all.iter().filter(|o| !reads_pages(site, o)) {
            (site.digest)(&worker_db, output);
        }
        // Then a share of the page work, which the other thread finds done: the Markdown twins' link
        // check, and the llms files made from the twins.
        for output in all
            .iter()
            .filter(|o| crate::linkcheck::is_markdown(&o.path))
        {
            let page = OutputKey::new(&worker_db, output.clone());
            crate::linkcheck::page_links(&worker_db, page);
            crate::linkcheck::broken_links(&worker_db, page);
        }
        for output in all.iter().filter(|o| (site.made_from_twins)(o)) {
            (site.digest)(&worker_db, output);
        }
    };
    let diagnostics = helper.run_beside(worker, || {
        let diagnostics = page_diagnostics(site, db);
        if diagnostics.is_empty() {
            // Meet the helper from the other end of its list: when it starts late, this thread does
            // its share instead of waiting.
            let all = (site.outputs)(db);
            for output in all.iter().rev().filter(|o| !is_checked(&o.path)) {
                (site.digest)(db, output);
            }
        }
        diagnostics
    });
    if !diagnostics.is_empty() {
        return Err(diagnostics);
    }
    Ok(())
}

/// The rendered bytes a session's batch aims at: both threads take the next output until the outputs
/// taken since the batch began reach it (by each output's size when it was last made, or as it is made
/// now), and the batch ends at the next output that does not belong with the one before (a page's twin
/// stays with its page: they share a context, made once). A small site is rendered in one batch, on two
/// threads throughout; a large one in batches of several megabytes, each handed over and let go before
/// the next.
const BATCH_BYTES: usize = 16 << 20;

/// The rendered bytes a one-off build's batch aims at: half a session's. A one-off build keeps nothing
/// for a later rebuild, so it lets go as often as is useful (at x100, 16 MB held about 19 MiB more at the
/// peak for the same time, BENCHMARKS.md); a session's larger batches let the values it keeps from one
/// build to the next (the last History context made, for one) live until an edit's pages are made again.
const ONE_OFF_BATCH_BYTES: usize = 8 << 20;

/// Whether a batch may end before `outputs[i]`: not inside a unit of the site's (a page and its twin,
/// [`Site::same_unit`]).
fn starts_unit(same_unit: fn(&Output, &Output) -> bool, outputs: &[Output], i: usize) -> bool {
    i == 0 || !same_unit(&outputs[i - 1], &outputs[i])
}

/// The size of each output when it was last rendered, by site path: what a session's rebuild counts
/// against [`BATCH_BYTES`] before an output is made (an edit that changes the site-wide lists renders
/// them in batches of their own instead of all at once).
#[derive(Debug, Default)]
pub(super) struct OutputSizes(std::collections::HashMap<String, usize>);

/// What both threads take of a list of work in one batch (a batch's outputs, a batch of a page's parts):
/// the next item (the batch starts where the last one ended), the bytes taken since the batch began, the
/// first item it may not take, and the bytes it aims at. An item whose size is known (a session's
/// output, from its last build) counts as it is taken, so where a session's batch ends does not depend
/// on which thread was quicker; one made for the first time counts once it is made.
struct Quota {
    taken: std::sync::Mutex<Taken>,
    end: usize,
    limit: usize,
}

struct Taken {
    next: usize,
    bytes: usize,
}

impl Quota {
    fn new(start: usize, end: usize, limit: usize) -> Quota {
        Quota {
            taken: std::sync::Mutex::new(Taken {
                next: start,
                bytes: 0,
            }),
            end,
            limit,
        }
    }

    fn taken(&self) -> std::sync::MutexGuard<'_, Taken> {
        // A thread that panicked while holding it left the counts consistent (two plain stores).
        self.taken
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The next item, counting its `known` size now; none when every item is taken, or when the batch
    /// is full and it `may_end` before the next.
    fn take(
        &self,
        may_end: impl FnOnce(usize) -> bool,
        known: impl FnOnce(usize) -> usize,
    ) -> Option<usize> {
        let mut taken = self.taken();
        let i = taken.next;
        if i >= self.end || (taken.bytes >= self.limit && may_end(i)) {
            return None;
        }
        taken.next = i + 1;
        taken.bytes += known(i);
        Some(i)
    }

    /// Counts the size of an item made for the first time.
    fn made(&self, size: usize) {
        self.taken().bytes += size;
    }

    /// Where the batch ended: the first item it did not take.
    fn end(&self) -> usize {
        self.taken().next.min(self.end)
    }
}

/// One batch of a streaming build (see [`BATCH_BYTES`]): the build's outputs in render order, what both
/// threads took of them ([`Quota`]: [`BATCH_BYTES`] or [`ONE_OFF_BATCH_BYTES`]), and each output's size
/// when it was last made.
struct Batch {
    outputs: Arc<[Output]>,
    same_unit: fn(&Output, &Output) -> bool,
    quota: Quota,
    sizes: Arc<std::collections::HashMap<String, usize>>,
}

impl Batch {
    fn new(
        outputs: Arc<[Output]>,
        same_unit: fn(&Output, &Output) -> bool,
        start: usize,
        sizes: Arc<std::collections::HashMap<String, usize>>,
        limit: usize,
    ) -> Batch {
        Batch {
            quota: Quota::new(start, outputs.len(), limit),
            outputs,
            same_unit,
            sizes,
        }
    }

    /// The batch ends before `end` at the latest.
    fn ending_before(mut self, end: usize) -> Batch {
        self.quota.end = end.min(self.outputs.len());
        self
    }

    /// The next output to render, or none when every output is taken or the batch is full at a unit
    /// boundary.
    fn take(&self) -> Option<usize> {
        self.quota.take(
            |i| starts_unit(self.same_unit, &self.outputs, i),
            |i| self.sizes.get(&self.outputs[i].path).copied().unwrap_or(0),
        )
    }

    /// Renders outputs of the batch until it ends (both threads run this).
    fn render(&self, site: &Site, db: &Db) {
        while let Some(i) = self.take() {
            let output = &self.outputs[i];
            render_with_parts(site, db, output);
            if !self.sizes.contains_key(&output.path) {
                self.quota.made((site.digest)(db, output).len);
            }
        }
    }

    /// Where the batch ended: the first output it did not take.
    fn end(&self) -> usize {
        self.quota.end()
    }
}

/// Renders one output (as far as its digest) and what other outputs read of it while its bytes are in
/// memory: a page's links and ids (the link check), a twin's title and condensed text (`llms.txt`,
/// `llms-full.txt`, the search index), a CSV file's size and SHA-256 (the data package). These are kept
/// (a one-off build keeps a condensed twin only until `llms-full.txt` has it); the bytes are evicted
/// after the batch.
fn render_with_parts(site: &Site, db: &Db, output: &Output) {
    // The digest too: what a watch session's later rebuilds compare without the bytes.
    (site.digest)(db, output);
    if is_checked(&output.path) {
        crate::linkcheck::page_links(db, OutputKey::new(db, output.clone()));
    }
    (site.remember_what_others_read)(db, output);
}

/// Hands each of `lists` to `sink` piece by piece as its parts are made (see
/// [`Site::list_stream`]): a part is written and let go before the next is made.
fn stream_lists(
    db: &Db,
    lists: &[(Output, ListStream)],
    sink: &mut impl StreamingSink,
) -> std::io::Result<()> {
    for (list, stream) in lists {
        let mut hasher = crate::output::PieceHasher::default();
        let mut written = Ok(());
        stream(db, list, &mut |piece| {
            hasher.update(&piece);
            if written.is_ok() {
                written = sink.pieces(list, std::slice::from_ref(&piece));
            }
        });
        written?;
        sink.pieces_done(list, hasher.finalize())?;
    }
    Ok(())
}

/// Hands the outputs of a batch just rendered to `sink` with their digests (each asked for its bytes
/// only if the sink needs them), then `llms-full.txt` the pieces that follow them; a render error is
/// kept instead, and nothing is handed over after the first.
fn hand_over(
    site: &Site,
    db: &Db,
    outputs: &[Output],
    sink: &mut impl StreamingSink,
    sizes: &mut OutputSizes,
    llms_full: &mut Option<Box<dyn Growth>>,
    render_errors: &mut Vec<Diagnostic>,
) -> Result<(), BuildError> {
    for output in outputs {
        let digest = (site.digest)(db, output);
        if let Some(error) = &digest.error {
            render_errors.push(error.clone());
        } else if render_errors.is_empty() {
            let bytes = sink
                .output(site, db, output, digest)
                .map_err(BuildError::Io)?;
            // An output whose bytes were not needed (unchanged) keeps its last size.
            if bytes > 0 {
                sizes.0.insert(output.path.clone(), bytes);
            }
        }
    }
    if let Some(growth) = llms_full
        && render_errors.is_empty()
    {
        grow(db, growth.as_mut(), outputs, sink).map_err(BuildError::Io)?;
    }
    Ok(())
}

/// Hands `llms-full.txt` its pieces that follow the outputs of a batch just rendered, and its end once
/// every twin is in.
fn grow(
    db: &Db,
    growth: &mut dyn Growth,
    batch: &[Output],
    sink: &mut impl StreamingSink,
) -> std::io::Result<()> {
    let pieces = growth.after(db, batch);
    if !pieces.is_empty() {
        sink.pieces(growth.output(), &pieces)?;
    }
    match growth.finish() {
        Some(hash) => sink.pieces_done(growth.output(), hash),
        None => Ok(()),
    }
}

/// Renders every output of the route table in batches (see [`BATCH_BYTES`], [`render_order`]) and hands
/// each to `sink` with its digest. In a one-off build ([`Profile::OneOff`]) `llms-full.txt` is handed
/// over piece by piece as the twins are rendered ([`Site::growth`]), the site-wide lists piece by piece
/// as their parts are made, never whole ([`Site::list_stream`]), and the pages made of parts part by part
/// between batches ([`parted`]). The pages are checked as they come
/// (their HTML, ids and links are kept, not their bytes), and the links resolved at the end. Nothing
/// is handed over after the first render error; the errors, or the pages' link problems, are returned
/// at the end: on any, the caller must discard what the sink received.
pub(super) fn run(
    site: &'static Site,
    db: &mut Db,
    profile: Profile,
    helper: &mut Helper,
    sizes: &mut OutputSizes,
    sink: &mut impl StreamingSink,
) -> Result<usize, BuildError> {
    let once = profile == Profile::OneOff;
    let diagnostics = source_diagnostics_beside(site, db, helper);
    if !diagnostics.is_empty() {
        return Err(BuildError::Invalid(diagnostics));
    }
    let mut ordered = (site.render_order)((site.outputs)(db), once);
    let mut llms_full = match once {
        true => (site.growth)(db),
        false => None,
    };
    if let Some(growth) = &llms_full {
        ordered.retain(|output| output != growth.output());
    }
    // A one-off build hands the site-wide lists over piece by piece, on this thread while the helper
    // renders the first batch (see `Site::list_stream`).
    let mut lists: Vec<(Output, ListStream)> = Vec::new();
    if once {
        ordered.retain(|output| match (site.list_stream)(output) {
            Some(stream) => {
                lists.push((output.clone(), stream));
                false
            }
            None => true,
        });
    }
    let made = ordered.len() + lists.len() + usize::from(llms_full.is_some());
    let ordered: Arc<[Output]> = ordered.into();
    let mut render_errors: Vec<Diagnostic> = Vec::new();
    let known = Arc::new(sizes.0.clone());
    let limit = match once {
        true => ONE_OFF_BATCH_BYTES,
        false => BATCH_BYTES,
    };
    // A one-off build hands each page made of parts over part by part, between batches (see
    // `parted::stream_parted`).
    let parted: Vec<bool> = ordered
        .iter()
        .map(|output| once && (site.is_made_of_parts)(output))
        .collect();
    let mut start = 0;
    while start < ordered.len() {
        if parted[start] {
            let output = &ordered[start];
            parted::stream_parted(
                site,
                db,
                helper,
                output,
                sink,
                &mut llms_full,
                &mut render_errors,
            )?;
            start += 1;
            if start == ordered.len() || starts_unit(site.same_unit, &ordered, start) {
                crate::memory::evict(db);
                (site.forget_made_contexts)(db);
            }
            continue;
        }
        let before_parted = (start..ordered.len())
            .find(|&i| parted[i])
            .unwrap_or(ordered.len());
        let batch = Arc::new(
            Batch::new(ordered.clone(), site.same_unit, start, known.clone(), limit)
                .ending_before(before_parted),
        );
        // The helper thread has its own handle on the database, dropped when its share is done, before
        // the eviction below.
        let (worker_db, theirs) = (db.clone(), batch.clone());
        let shared: &Db = db;
        let streaming = std::mem::take(&mut lists);
        let streamed = helper.run_beside(
            move || theirs.render(site, &worker_db),
            || {
                let streamed = stream_lists(shared, &streaming, sink);
                batch.render(site, shared);
                streamed
            },
        );
        streamed.map_err(BuildError::Io)?;
        let end = batch.end();
        hand_over(
            site,
            shared,
            &ordered[start..end],
            sink,
            sizes,
            &mut llms_full,
            &mut render_errors,
        )?;
        crate::memory::evict(db);
        (site.forget_made_contexts)(db);
        start = end;
    }
    // Lists left only when there was no batch to stream them beside.
    stream_lists(db, &lists, sink).map_err(BuildError::Io)?;
    if let Some(growth) = &mut llms_full
        && render_errors.is_empty()
    {
        grow(db, growth.as_mut(), &[], sink).map_err(BuildError::Io)?;
    }
    checked(site, db, render_errors, made)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::Kind;

    /// The kinds of this test's site: a page, its twin, an API file.
    const PAGE: Kind = Kind::new(0);
    const TWIN: Kind = Kind::new(1);
    const API: Kind = Kind::new(2);

    fn output(path: &str, kind: Kind, param: Option<&str>) -> Output {
        Output {
            path: path.to_string(),
            kind,
            param: param.map(str::to_string),
            route: 0,
        }
    }

    /// A page and its twin are one unit: a twin after the page of the same value.
    fn same_unit(before: &Output, output: &Output) -> bool {
        before.kind == PAGE && output.kind == TWIN && before.param == output.param
    }

    /// A site of four country pages with their twins, then three API files.
    fn site() -> Vec<Output> {
        let mut all = Vec::new();
        for code in ["ad", "de", "fr", "it"] {
            for (file, kind) in [("index.html", PAGE), ("index.md", TWIN)] {
                all.push(output(&format!("/{code}/{file}"), kind, Some(code)));
            }
        }
        for name in ["index", "facts", "changes"] {
            all.push(output(&format!("/api/v1/{name}.json"), API, None));
        }
        all
    }

    /// The batches one thread takes from `all`, each output counting `size` bytes.
    fn batches(all: &[Output], size: impl Fn(&str) -> usize) -> Vec<Vec<String>> {
        let all: Arc<[Output]> = all.into();
        let mut batches = Vec::new();
        let mut start = 0;
        while start < all.len() {
            let batch = Batch::new(
                all.clone(),
                same_unit,
                start,
                Default::default(),
                BATCH_BYTES,
            );
            while let Some(i) = batch.take() {
                batch.quota.made(size(&all[i].path));
            }
            let end = batch.end();
            batches.push(all[start..end].iter().map(|o| o.path.clone()).collect());
            start = end;
        }
        batches
    }

    /// A session knows each output's size from its last build: the batch counts it as the output is
    /// taken, so both threads taking outputs before either has made one end the batch where one thread
    /// making each in turn does.
    #[test]
    fn a_sessions_batch_ends_where_the_known_sizes_say_whoever_is_quicker() {
        let all: Arc<[Output]> = site().into();
        let sizes: std::collections::HashMap<String, usize> = all
            .iter()
            .map(|o| (o.path.clone(), BATCH_BYTES / 3))
            .collect();
        let batch = Batch::new(all.clone(), same_unit, 0, Arc::new(sizes), BATCH_BYTES);
        // Nothing is made while the outputs are taken (`made` is never called).
        let taken: Vec<usize> = std::iter::from_fn(|| batch.take()).collect();
        let one_by_one = &batches(&all, |_| BATCH_BYTES / 3)[0];
        assert_eq!(taken.len(), one_by_one.len());
        assert_eq!(batch.end(), 4);
    }

    #[test]
    fn a_batch_holds_about_batch_bytes_and_keeps_a_page_with_its_twin() {
        let all = site();
        // Outputs of a third of a batch each: the batch that reaches the limit on a page still takes
        // its twin.
        assert_eq!(
            batches(&all, |_| BATCH_BYTES / 3),
            [
                vec![
                    "/ad/index.html",
                    "/ad/index.md",
                    "/de/index.html",
                    "/de/index.md"
                ],
                vec![
                    "/fr/index.html",
                    "/fr/index.md",
                    "/it/index.html",
                    "/it/index.md"
                ],
                vec![
                    "/api/v1/index.json",
                    "/api/v1/facts.json",
                    "/api/v1/changes.json"
                ],
            ]
        );
        // Two site-wide lists of most of a batch each are made in batches of their own, whatever the
        // small outputs before them.
        let size = |path: &str| match path {
            "/api/v1/facts.json" => BATCH_BYTES - 1,
            "/api/v1/changes.json" => BATCH_BYTES,
            _ => 1000,
        };
        assert_eq!(
            batches(&all, size),
            [
                vec![
                    "/ad/index.html",
                    "/ad/index.md",
                    "/de/index.html",
                    "/de/index.md",
                    "/fr/index.html",
                    "/fr/index.md",
                    "/it/index.html",
                    "/it/index.md",
                    "/api/v1/index.json",
                    "/api/v1/facts.json",
                ],
                vec!["/api/v1/changes.json"],
            ]
        );
        // An output larger than a batch is a batch of its own (with its twin).
        let size = |path: &str| match path {
            "/ad/index.html" => 2 * BATCH_BYTES,
            _ => 1000,
        };
        assert_eq!(batches(&all, size)[0], ["/ad/index.html", "/ad/index.md"]);
    }
}
