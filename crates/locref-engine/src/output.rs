//! The engine's core: what an output is and what a build hands over of it. An [`Output`] (its path in
//! the site, its opaque [`Kind`], its placeholder's value), its bytes as [`Piece`]s making a [`Rendered`]
//! output, the [`RenderedFile`] (bytes or the problem that stopped it), the [`Digest`] a rebuild
//! compares, and the `generated_at` placeholder the publisher stamps. The renderers of a site make these;
//! the build, the publisher and the link check read them, and none of them knows how they were made.

use std::sync::Arc;

use crate::diagnostics::Diagnostic;

/// What renders an output, opaque to the engine: the site numbers its renderers and reads an output's
/// own back from this number, so the engine carries it without knowing what kinds of output there are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Kind(u16);

impl Kind {
    /// The kind the site numbers `index`.
    pub const fn new(index: u16) -> Kind {
        Kind(index)
    }

    /// The site's number of this kind.
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

/// One output file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Output {
    /// Site-relative path (`/api/v1/countries/it.json`).
    pub path: String,
    /// Its renderer, as the site numbers it.
    pub kind: Kind,
    /// The value the route's placeholder took (`it`).
    pub param: Option<String>,
    /// Index of the route in `rules/routes.toml`.
    pub route: usize,
}

/// One output file as a query key: what the site's output queries and the link check are memoized by.
#[salsa::interned(debug)]
pub struct OutputKey<'db> {
    #[returns(ref)]
    pub output: Output,
}

/// One part of a page made of parts (a page whose bulk is a long list of rows, rendered as a skeleton
/// and one part per country), as a query key: the page's kind and the part's value (`it`). The site
/// says which pages are made of parts and makes each part ([`crate::site::Site::part`]); the link check
/// and the streaming plan read them part by part.
#[salsa::interned(debug)]
pub struct PartKey<'db> {
    pub page: Kind,
    #[returns(ref)]
    pub param: String,
}

/// A page made of parts without them: its template's output split where the parts go into what comes
/// before them and what comes after (`None` when the template does not print them: the page then shows
/// no parts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skeleton {
    pub head: Piece,
    pub tail: Option<Piece>,
}

/// The media type of an output, from its extension (what the dev server and `_headers` send).
pub fn media_type(path: &str) -> &'static str {
    let name = path.rsplit('/').next().unwrap_or("");
    match name.rsplit_once('.').map(|(_, ext)| ext) {
        Some("json") => "application/json; charset=utf-8",
        Some("csv") => "text/csv; charset=utf-8",
        Some("md") => "text/markdown; charset=utf-8",
        Some("txt") => "text/plain; charset=utf-8",
        Some("html") => "text/html; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("ics") => "text/calendar; charset=utf-8",
        // The Atom feed and the sitemap (a feed reader takes the Atom feed as XML).
        Some("xml") => "application/xml; charset=utf-8",
        _ if name == "_headers" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// A piece of an output's bytes, made once and shared, never copied, by every output made of it: most
/// outputs are one piece (a page, an API detail), a list spliced from per-country parts holds each part
/// as its own memoized query made it (`facts.json`, the flat files), `llms-full.txt` holds each twin's
/// condensed text. Its blake3 is computed when it is made, so an output made of pieces is hashed from
/// the hashes of its pieces: an edit that makes one part again hashes that part's bytes, not the list's.
#[derive(Debug, Clone)]
pub struct Piece {
    bytes: bytes::Bytes,
    hash: blake3::Hash,
    /// Where the piece holds a `generated_at` placeholder, found the first time an output is published
    /// with it and shared by every clone: a watch session publishes the same pieces edit after edit
    /// (each condensed twin of `llms-full.txt`, each country's part of a list), and scanning them all
    /// again was a tenth of an x100 edit.
    placeholders: std::sync::Arc<Placeholders>,
}

/// The positions of each form of the `generated_at` placeholder in a piece (see [`Piece`]).
#[derive(Debug, Default)]
struct Placeholders {
    json: std::sync::OnceLock<Box<[usize]>>,
    raw: std::sync::OnceLock<Box<[usize]>>,
}

/// Equal when the content hashes are (as [`Rendered`]).
impl PartialEq for Piece {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash
    }
}

impl Eq for Piece {}

impl Piece {
    /// A piece of `bytes` (a `Vec<u8>` or `String` is taken without a copy).
    pub fn new(bytes: impl Into<bytes::Bytes>) -> Piece {
        let bytes = bytes.into();
        let hash = blake3::hash(&bytes);
        Piece {
            bytes,
            hash,
            placeholders: Default::default(),
        }
    }

    /// Where the piece holds [`GENERATED_AT_JSON`] (`json`) or [`GENERATED_AT_MARK`]: found once per
    /// piece, then remembered.
    pub(crate) fn generated_at_marks(&self, json: bool) -> &[usize] {
        let (once, mark) = match json {
            true => (&self.placeholders.json, GENERATED_AT_JSON),
            false => (&self.placeholders.raw, GENERATED_AT_MARK),
        };
        // memchr's SIMD search: pieces reach tens of megabytes.
        once.get_or_init(|| memchr::memmem::find_iter(&self.bytes, mark.as_bytes()).collect())
    }

    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The piece's buffer itself, shared (a clone counts a reference; nothing is copied).
    pub fn shared(&self) -> bytes::Bytes {
        self.bytes.clone()
    }

    /// The piece as text: every renderer writes UTF-8 (see [`text_of`]).
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        text_of(&self.bytes)
    }

    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The first `len` bytes of the piece, shared with it (not copied).
    pub fn prefix(&self, len: usize) -> Piece {
        Piece::new(self.bytes.slice(..len))
    }
}

/// The content hash of an output made of pieces (see [`Rendered::hash`]), fed one piece at a time: what
/// a one-off build computes of an output it hands over piece by piece, never holding them all.
#[derive(Default, Clone)]
pub struct PieceHasher {
    pieces: usize,
    first: Option<blake3::Hash>,
    all: blake3::Hasher,
}

impl PieceHasher {
    /// The next piece (an empty one counts for nothing, as in [`Rendered::from_pieces`]).
    pub fn update(&mut self, piece: &Piece) {
        if piece.is_empty() {
            return;
        }
        self.pieces += 1;
        self.first.get_or_insert(piece.hash);
        self.all.update(piece.hash.as_bytes());
        self.all.update(&(piece.len() as u64).to_le_bytes());
    }

    pub fn finalize(&self) -> blake3::Hash {
        match (self.pieces, self.first) {
            (0, _) => blake3::hash(b""),
            (1, Some(hash)) => hash,
            _ => self.all.finalize(),
        }
    }
}

/// The bytes of one output, with [`GENERATED_AT_MARK`] where the build time goes, as one or more
/// [`Piece`]s.
#[derive(Debug, Clone, Eq)]
pub struct Rendered {
    pieces: Arc<[Piece]>,
    /// The content hash the manifest compares: the blake3 of the bytes for an output of one piece; for
    /// several, the blake3 of each piece's hash and length in order, which identifies the content as
    /// well without reading the pieces again.
    pub hash: blake3::Hash,
}

/// Equal when the content hashes are: salsa compares a re-rendered output with its last value to decide
/// whether anything downstream must run, and comparing a 1 MB output byte by byte costs more than the 32
/// bytes of a blake3 hash (which identifies the content).
impl PartialEq for Rendered {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash
    }
}

impl Rendered {
    /// An output of one piece.
    pub fn new(bytes: Vec<u8>) -> Self {
        Rendered::from_pieces([Piece::new(bytes)])
    }

    /// An output made of `pieces`, in order (empty pieces are left out).
    pub fn from_pieces(pieces: impl IntoIterator<Item = Piece>) -> Self {
        let pieces: Arc<[Piece]> = pieces.into_iter().filter(|p| !p.is_empty()).collect();
        let mut hasher = PieceHasher::default();
        pieces.iter().for_each(|piece| hasher.update(piece));
        Rendered {
            pieces,
            hash: hasher.finalize(),
        }
    }

    /// The pieces, in order; their concatenation is the output.
    pub fn pieces(&self) -> &[Piece] {
        &self.pieces
    }

    /// The number of bytes.
    pub fn len(&self) -> usize {
        self.pieces.iter().map(Piece::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    /// The text's lines, each with its `\n`, read across the pieces as they are: only a line that runs
    /// over the end of a piece is copied together (a twin made of parts is tens of megabytes). Every
    /// renderer of text writes UTF-8; a piece that is not (an asset) is read up to its first invalid byte.
    pub fn lines(&self) -> Lines<'_> {
        Lines {
            pieces: self.pieces.iter(),
            current: "",
        }
    }

    /// The bytes in one slice: borrowed for an output of one piece (every page), copied together for
    /// a list of pieces (which only tests and the dev server ask for whole).
    pub fn bytes(&self) -> std::borrow::Cow<'_, [u8]> {
        match &*self.pieces {
            [] => std::borrow::Cow::Borrowed(&[]),
            [one] => std::borrow::Cow::Borrowed(one.bytes()),
            several => {
                let mut all = Vec::with_capacity(self.len());
                for piece in several {
                    all.extend_from_slice(piece.bytes());
                }
                std::borrow::Cow::Owned(all)
            }
        }
    }
}

/// The lines of a [`Rendered`] (see [`Rendered::lines`]).
pub struct Lines<'a> {
    pieces: std::slice::Iter<'a, Piece>,
    /// What is left of the piece being read.
    current: &'a str,
}

impl<'a> Lines<'a> {
    fn next_piece(&mut self) -> Option<&'a str> {
        let bytes = self.pieces.next()?.bytes();
        Some(match std::str::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default(),
        })
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = std::borrow::Cow<'a, str>;

    fn next(&mut self) -> Option<Self::Item> {
        while self.current.is_empty() {
            self.current = self.next_piece()?;
        }
        let ends = |text: &str| memchr::memchr(b'\n', text.as_bytes()).map(|i| i + 1);
        if let Some(end) = ends(self.current) {
            let (line, rest) = self.current.split_at(end);
            self.current = rest;
            return Some(std::borrow::Cow::Borrowed(line));
        }
        // The line goes on in the next pieces.
        let mut line = std::mem::take(&mut self.current).to_string();
        while let Some(next) = self.next_piece() {
            match ends(next) {
                Some(end) => {
                    line.push_str(&next[..end]);
                    self.current = &next[end..];
                    break;
                }
                None => line.push_str(next),
            }
        }
        Some(std::borrow::Cow::Owned(line))
    }
}

/// The value given to `meta.generated_at` while rendering. Sources cannot contain control characters, so
/// its JSON form [`GENERATED_AT_JSON`] appears in an output only where the build time goes.
pub const GENERATED_AT_MARK: &str = "\u{0}generated_at\u{0}";
/// [`GENERATED_AT_MARK`] as serde_json writes it inside a JSON string.
pub(crate) const GENERATED_AT_JSON: &str = "\\u0000generated_at\\u0000";

/// Rendered bytes as text: every renderer writes UTF-8, so this borrows them (std's validation, with its
/// ASCII fast path, is several times faster on a large page than the lossy decoder, which is kept only
/// for bytes that are not UTF-8).
pub fn text_of(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// One output rendered: its bytes, or (a page with a broken template, a missing asset) the problem
/// that stopped it, which the build reports as a diagnostic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedFile {
    pub rendered: Rendered,
    pub error: Option<Diagnostic>,
}

impl RenderedFile {
    pub fn of(rendered: Rendered) -> Self {
        RenderedFile {
            rendered,
            error: None,
        }
    }

    pub fn failed(error: Diagnostic) -> Self {
        RenderedFile {
            rendered: Rendered::new(Vec::new()),
            error: Some(error),
        }
    }
}

/// What a rebuild compares of an output without its bytes: its content hash, and why it could not be
/// rendered. A small value kept for every output, so a session
/// can let an output's rendered bytes go once they are written and still tell which outputs an edit
/// changed: an output whose inputs did not change is verified by its dependencies, and its bytes are
/// never asked for again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Digest {
    pub hash: blake3::Hash,
    /// The number of bytes.
    pub len: usize,
    pub error: Option<Diagnostic>,
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Lines read across pieces are the lines of the text the pieces make, wherever the pieces
        /// are cut (mid-line, at a line end, into several pieces on one line).
        #[test]
        fn lines_across_pieces_are_the_lines_of_the_whole(
            text in "[ab\n]{0,40}",
            cuts in proptest::collection::vec(0usize..40, 0..6),
        ) {
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(text.len())).collect();
            cuts.push(0);
            cuts.push(text.len());
            cuts.sort();
            let pieces = cuts.windows(2).map(|w| Piece::new(text[w[0]..w[1]].to_string()));
            let rendered = Rendered::from_pieces(pieces);
            let lines: Vec<String> = rendered.lines().map(|l| l.into_owned()).collect();
            let expected: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
            proptest::prop_assert_eq!(lines, expected);
        }
    }

    #[test]
    fn a_pieces_placeholders_are_found_once_and_shared_by_its_clones() {
        let piece = Piece::new(format!(
            "a{GENERATED_AT_MARK}b{GENERATED_AT_JSON}c{GENERATED_AT_MARK}"
        ));
        let raw_at = 1 + GENERATED_AT_MARK.len() + 1 + GENERATED_AT_JSON.len() + 1;
        assert_eq!(piece.generated_at_marks(false), [1, raw_at]);
        assert_eq!(
            piece.generated_at_marks(true),
            [2 + GENERATED_AT_MARK.len()]
        );
        // A clone (a list holding the part) reads the same positions, not a second scan.
        let clone = piece.clone();
        assert!(std::ptr::eq(
            clone.generated_at_marks(false),
            piece.generated_at_marks(false)
        ));
    }
}
