//! `/llms.txt` and `/llms-full.txt` (the llms.txt convention): a Markdown index of the site for language
//! models, with absolute links to the Markdown twins of every page, the API and the data files; and the
//! full text of every twin in one file.
//!
//! Both are built from the route table: a new page or data file appears here without a list of its own.
//! `llms.txt` reads each twin's title through [`twin_title`], so a fact edit, which changes a twin's
//! body but not its title, does not rebuild the index.
//!
//! In `llms-full.txt` a table row that says only "unknown/unverified" (no vendor, note or source) is left
//! out, and the table is followed by one line naming what is not established: the matrix alone has
//! hundreds of such rows, which tell a reader nothing one line cannot. Each twin is carried without the
//! footer every page repeats (notice, reference date, licences, and the time *that page* last changed,
//! which the file could only show as its own); the file's heading says it once, with the file's time.

use crate::kinds::Format;
use crate::kinds::RendererOf;
#[cfg(feature = "streaming")]
use crate::kinds::{FileKind, Renderer};
use crate::model::base_url;
use crate::output::OutputKey;
#[cfg(feature = "streaming")]
use crate::output::PieceHasher;
use crate::output::{GENERATED_AT_MARK, Piece, Rendered};
use crate::parse::rules::{route_rules, site_rules};
use crate::routes::{Output, Param, outputs};
#[cfg(feature = "streaming")]
use crate::site::{Growth, GrowthShare};

/// Whether an output is a page's Markdown twin (`<page>/index.md`).
pub(crate) fn is_twin(output: &Output) -> bool {
    output.renderer().is_page() && output.path.ends_with("/index.md")
}

/// Whether `llms.txt` and `llms-full.txt` list a twin: every twin but those of the releases older than
/// the newest few, which their year's archive page lists (so neither file grows with the history).
pub(crate) fn is_listed_twin(db: &dyn salsa::Database, output: &Output) -> bool {
    is_twin(output) && !super::history::is_archived_release_page(db, output)
}

#[cfg(feature = "streaming")]
/// Computes what the llms files and the search index read of a twin (its title and condensed text)
/// while its bytes are in memory: a one-off build evicts them after writing (see
/// [`crate::build::Profile::OneOff`]).
pub(crate) fn remember_page(db: &dyn salsa::Database, page: &Output) {
    if is_twin(page) {
        let key = OutputKey::new(db, page.clone());
        twin_title(db, key);
        condensed_twin(db, key);
    }
}

/// The title of a Markdown twin: its first `# ` heading.
#[salsa::tracked(returns(ref))]
pub fn twin_title<'db>(db: &'db dyn salsa::Database, key: OutputKey<'db>) -> String {
    if let Some(title) = title_in_skeleton(db, key) {
        return title;
    }
    // Read line by line up to the heading: a twin can be tens of megabytes, in pieces.
    let title = crate::render::render(db, key.output(db))
        .lines()
        .find_map(|line| {
            line.strip_prefix("# ")
                .map(|title| title.trim().to_string())
        });
    title.unwrap_or_else(|| key.output(db).path.clone())
}

/// The title of a twin made of parts when its skeleton's head has it on a line of its own (always, in
/// the shipped templates): read there, since a one-off build never holds such a twin whole.
fn title_in_skeleton(db: &dyn salsa::Database, key: OutputKey<'_>) -> Option<String> {
    super::pages::parts::parts_spec(key.output(db))?;
    let head = &super::pages::parts::page_skeleton(db, key)
        .as_ref()
        .ok()?
        .head;
    // Whole lines only: the head's last line may go on in the first part.
    head.text()
        .split_inclusive('\n')
        .take_while(|line| line.ends_with('\n'))
        .find_map(|line| {
            line.strip_prefix("# ")
                .map(|title| title.trim().to_string())
        })
}

/// The sections of llms.txt in their order, and the one a twin is listed in (by what its route
/// expands over).
const SECTIONS: [&str; 5] = [
    "Pages",
    "Countries",
    "ERP products",
    "Country filters",
    "Releases",
];

fn section(param: Param) -> &'static str {
    match param {
        Param::Country => SECTIONS[1],
        Param::Erp => SECTIONS[2],
        Param::Filter => SECTIONS[3],
        Param::Release | Param::Year => SECTIONS[4],
        _ => SECTIONS[0],
    }
}

pub fn llms_txt(db: &dyn salsa::Database) -> Rendered {
    let site = &site_rules(db).value;
    let rules = &route_rules(db).value;
    let base = base_url(db);
    let mut text = format!(
        "# {title}\n\n> {description}\n\n{notice} Data version {version}; time-dependent facts are judged on \
         {reference_date}. Each fact carries its verification status and source. API data: {api} \
         (commercial use needs a separate licence: {base}/licence/); flat data files: {data}.\n\n\
         The pages below are Markdown twins of the HTML pages. [{base}/llms-full.txt]({base}/llms-full.txt) \
         holds all of them in one file.\n",
        title = site.title,
        description = site.description,
        notice = site.informational_notice,
        version = site.version,
        reference_date = site.reference_date,
        api = site.api_licence.name,
        data = site.data_licence.name,
    );
    // The twins, grouped by section in route-table order; a page without a parameter carries the
    // description of its HTML route.
    let mut sections: Vec<(&str, Vec<String>)> = Vec::new();
    // Countries as a reader looks for them: by name (the route table expands them by code).
    let mut twins: Vec<&Output> = outputs(db)
        .iter()
        .filter(|o| is_listed_twin(db, o))
        .collect();
    let by_name: std::collections::BTreeMap<&str, usize> = crate::model::countries_by_name(db)
        .iter()
        .enumerate()
        .map(|(i, c)| (c.code.as_str(), i))
        .collect();
    twins.sort_by_key(|o| match o.renderer().param() {
        Param::Country => by_name
            .get(o.param.as_deref().unwrap_or_default())
            .copied()
            .unwrap_or(usize::MAX),
        _ => 0,
    });
    for output in twins {
        let title = twin_title(db, OutputKey::new(db, output.clone()));
        let param = output.renderer().param();
        let html = output.path.replace("/index.md", "/index.html");
        let description = rules
            .iter()
            .find(|r| r.path == html && param == Param::None)
            .and_then(|r| r.description.as_deref());
        let mut line = format!("- [{title}]({base}{})", output.path);
        if let Some(description) = description {
            line.push_str(&format!(": {description}"));
        }
        let name = section(param);
        match sections.iter_mut().find(|(n, _)| *n == name) {
            Some((_, lines)) => lines.push(line),
            None => sections.push((name, vec![line])),
        }
    }
    sections.sort_by_key(|(name, _)| SECTIONS.iter().position(|s| s == name));
    for (name, lines) in &sections {
        text.push_str(&format!("\n## {name}\n\n{}\n", lines.join("\n")));
    }
    // The API and the data files: one line per route of the index; a route over the countries or ERPs
    // links its first output as an example, a route over the filters or tables lists each of them.
    let mut api = Vec::new();
    let mut data = Vec::new();
    for (i, rule) in rules.iter().enumerate() {
        if !rule.index {
            continue;
        }
        let mut lines = Vec::new();
        for output in outputs(db).iter().filter(|o| o.route == i) {
            let description = super::openapi::output_description(db, output);
            let line = match output.renderer().param() {
                Param::Country | Param::Erp | Param::Release | Param::Year | Param::Date => {
                    format!(
                        "- [{}]({base}{}): {description} Example: {}.",
                        rule.path,
                        output.path,
                        output.param.as_deref().unwrap_or_default()
                    )
                }
                Param::Filter | Param::Stem => {
                    format!("- [{}]({base}{}): {description}", output.path, output.path)
                }
                Param::None => format!("- [{}]({base}{}): {description}", rule.path, output.path),
            };
            lines.push(line);
            if matches!(
                output.renderer().param(),
                Param::Country | Param::Erp | Param::Release | Param::Year | Param::Date
            ) {
                break;
            }
        }
        if rule.path.starts_with("/data/") {
            data.extend(lines);
        } else {
            api.extend(lines);
        }
    }
    text.push_str(&format!("\n## API\n\n{}\n", api.join("\n")));
    text.push_str(&format!("\n## Data files\n\n{}\n", data.join("\n")));
    text.push_str(&format!(
        "\n## Optional\n\n- [Full content]({base}/llms-full.txt): every page above in one Markdown file\n"
    ));
    Rendered::new(text.into_bytes())
}

/// `llms-full.txt`: a heading, then each twin after a line naming its source, as pieces: each twin's
/// condensed text is shared with its query, not copied into the file. (A one-off build makes the same
/// pieces as the twins are rendered: [`LlmsFullGrowth`].)
pub fn llms_full_txt(db: &dyn salsa::Database) -> Rendered {
    let mut pieces = vec![llms_full_heading(db)];
    for twin in outputs(db).iter().filter(|o| is_listed_twin(db, o)) {
        pieces.extend(twin_pieces(db, twin));
    }
    Rendered::from_pieces(pieces)
}

/// A twin's pieces of `llms-full.txt`: the line naming its source, then its condensed text.
fn twin_pieces(db: &dyn salsa::Database, twin: &Output) -> Vec<Piece> {
    let mut pieces = vec![source_line(db, twin)];
    pieces.extend_from_slice(condensed_twin(db, OutputKey::new(db, twin.clone())));
    pieces
}

#[cfg(feature = "streaming")]
/// `llms-full.txt` as a one-off build makes it: its pieces (those of [`llms_full_txt`]) handed on in
/// the file's order as the twins are rendered, each twin's condensed text while it is still at hand, so
/// the pieces are never all held at once. The build renders the twins in this order; a twin rendered
/// before its turn would wait here.
pub(crate) struct LlmsFullGrowth {
    output: Output,
    /// The twins, in the file's order, and where each twin is in it.
    twins: Vec<Output>,
    position: std::collections::HashMap<String, usize>,
    /// The next twin to hand on, and the pieces of later twins already rendered.
    next: usize,
    waiting: std::collections::BTreeMap<usize, Vec<Piece>>,
    started: bool,
    finished: bool,
    hasher: PieceHasher,
}

#[cfg(feature = "streaming")]
impl LlmsFullGrowth {
    /// None when the route table publishes no `llms-full.txt`.
    pub(crate) fn new(db: &dyn salsa::Database) -> Option<LlmsFullGrowth> {
        let all = outputs(db);
        let output = all
            .iter()
            .find(|o| o.renderer() == Renderer::File(FileKind::LlmsFull))?
            .clone();
        let twins: Vec<Output> = all
            .iter()
            .filter(|o| is_listed_twin(db, o))
            .cloned()
            .collect();
        let position = twins
            .iter()
            .enumerate()
            .map(|(i, twin)| (twin.path.clone(), i))
            .collect();
        Some(LlmsFullGrowth {
            output,
            twins,
            position,
            next: 0,
            waiting: Default::default(),
            started: false,
            finished: false,
            hasher: Default::default(),
        })
    }

    /// Moves the twins waiting for their turn, from the next one on, to `pieces`.
    fn take_waiting(&mut self, pieces: &mut Vec<Piece>) {
        while let Some(twin) = self.waiting.remove(&self.next) {
            pieces.extend(twin);
            self.next += 1;
        }
    }
}

#[cfg(feature = "streaming")]
impl Growth for LlmsFullGrowth {
    fn output(&self) -> &Output {
        &self.output
    }

    /// The pieces that follow once `rendered` (outputs whose bytes are at hand) are made: the heading
    /// first, then each twin's pieces in turn.
    fn after(&mut self, db: &dyn salsa::Database, rendered: &[Output]) -> Vec<Piece> {
        let mut pieces = Vec::new();
        if !self.started {
            self.started = true;
            pieces.push(llms_full_heading(db));
        }
        for output in rendered {
            if let Some(&at) = self.position.get(&output.path) {
                self.waiting.insert(at, twin_pieces(db, output));
            }
        }
        self.take_waiting(&mut pieces);
        pieces.iter().for_each(|piece| self.hasher.update(piece));
        pieces
    }

    /// Starts handing on a twin made of parts as a one-off build makes them (`build::parted`),
    /// on trust that none of its parts has a row to condense: its source line, to follow what was
    /// handed on. None when it cannot be: the page is not a twin, the file has not started, another
    /// twin comes first, or the skeleton (`head`, `tail`) has such a row or cuts a line at the parts.
    fn begin_parted(
        &mut self,
        db: &dyn salsa::Database,
        twin: &Output,
        head: &Piece,
        tail: &Piece,
    ) -> Option<(GrowthShare, Piece)> {
        if !is_twin(twin) {
            return None;
        }
        let next = self.twins.get(self.next)?;
        if !self.started || next != twin || !skeleton_is_plain(head, tail) {
            return None;
        }
        let share = GrowthShare {
            before: self.hasher.clone(),
            held: None,
        };
        let line = source_line(db, twin);
        self.hasher.update(&line);
        Some((share, line))
    }

    /// The next piece of a twin being handed on: what can be handed on now (the piece before it; the
    /// last is held back, the twin's footer is cut from it).
    fn parted_piece(&mut self, share: &mut GrowthShare, piece: Piece) -> Option<Piece> {
        if piece.is_empty() {
            return None;
        }
        let ready = share.held.replace(piece);
        if let Some(ready) = &ready {
            self.hasher.update(ready);
        }
        ready
    }

    /// The end of a twin handed on: its last piece without the footer, then the twins that waited for
    /// it. The same pieces as [`twin_pieces`] and [`condensed_twin`] of a twin with nothing to condense.
    fn end_parted(&mut self, share: GrowthShare) -> Vec<Piece> {
        let mut pieces = without_footer(share.held.into_iter().collect());
        pieces.iter().for_each(|piece| self.hasher.update(piece));
        self.next += 1;
        let mut waiting = Vec::new();
        self.take_waiting(&mut waiting);
        waiting.iter().for_each(|piece| self.hasher.update(piece));
        pieces.extend(waiting);
        pieces
    }

    /// Takes back a twin being handed on (a part had a row to condense): the file is as before it, and
    /// the twin is to be handed on whole ([`Growth::after`]); the caller takes its pieces back
    /// from where they went.
    fn take_back_parted(&mut self, share: GrowthShare) {
        self.hasher = share.before;
    }

    /// The content hash, the first time it is asked after every twin was handed on.
    fn finish(&mut self) -> Option<blake3::Hash> {
        let done = self.started && self.next == self.twins.len() && !self.finished;
        self.finished |= done;
        done.then(|| self.hasher.finalize())
    }
}

/// The start of `llms-full.txt`: what the file is, then the footer the twins are carried without, once
/// (the `footer` macro of `macros.md`, which `base.md` ends every twin with), dated as the file.
fn llms_full_heading(db: &dyn salsa::Database) -> Piece {
    let site = &site_rules(db).value;
    let base = base_url(db);
    Piece::new(format!(
        "# {title}: full content\n\n> {description}\n\nEvery page of {base}/ as Markdown, in the order of \
         {base}/llms.txt, without the footer each page repeats, which follows once.\n\n{footer}",
        title = site.title,
        description = site.description,
        footer = footer_of_the_file(db),
    ))
}

/// The twins' footer dated as the whole file, or nothing when the templates define no `footer` macro (a
/// broken one breaks every twin, which the build reports).
fn footer_of_the_file(db: &dyn salsa::Database) -> String {
    const MACROS: &str = "macros.md";
    let set = super::pages::templates::TemplateSet::new(db, vec![MACROS.to_string()]);
    let Ok(env) = super::pages::templates::compiled_templates(db, set) else {
        return String::new();
    };
    let site = minijinja::Value::from_serialize(super::pages::shared::site_context(db));
    let args = [site, minijinja::Value::from(true)];
    let footer = super::pages::templates::call_macro(env, MACROS, "footer", &args, || {
        minijinja::Error::new(minijinja::ErrorKind::UnknownFunction, "no footer macro")
    });
    match footer {
        Ok(text) => {
            let mut text = super::pages::parts::with_base_path(db, text, Format::Markdown);
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text
        }
        Err(_) => String::new(),
    }
}

/// The line before a twin in `llms-full.txt`.
fn source_line(db: &dyn salsa::Database, twin: &Output) -> Piece {
    Piece::new(format!(
        "\n---\n\nSource: {}{}\n\n",
        base_url(db),
        twin.path
    ))
}

#[cfg(feature = "streaming")]
/// Limits [`condensed_twin`] to its most recent value (a one-off build, whose `llms-full.txt` takes
/// each condensed twin as the twin is rendered).
pub(crate) fn keep_last_condensed_twin_only(db: &mut dyn salsa::Database) {
    condensed_twin::set_lru_capacity(db, 1);
}

/// A twin as llms-full.txt carries it: its unknown-only rows condensed (cached per twin, so an edit
/// condenses one twin again). A twin with no such row is carried as it is: its own pieces, shared, not
/// a copy (most ERP twins, the news, the /changes/ twin).
#[salsa::tracked(returns(ref), lru = 0)]
pub fn condensed_twin<'db>(db: &'db dyn salsa::Database, key: OutputKey<'db>) -> Vec<Piece> {
    let rendered = crate::render::render(db, key.output(db));
    if parted_twin_has_no_unknown_only_row(db, key) {
        return without_footer(rendered.pieces().to_vec());
    }
    // Read from the twin's pieces, not a copy of them together.
    let lines: Vec<std::borrow::Cow<str>> = rendered.lines().collect();
    let lines: Vec<&str> = lines.iter().map(AsRef::as_ref).collect();
    without_footer(match condense_lines(&lines, rendered.len()) {
        Some(condensed) => vec![Piece::new(condensed)],
        None => rendered.pieces().to_vec(),
    })
}

/// A twin's pieces without its footer: from the last thematic break (`---` line) before the build-time
/// placeholder, or else from the start of the placeholder's paragraph, to the end. The footer is the base
/// template's, so it ends the last piece; a twin whose last piece shows no build time is kept whole.
fn without_footer(mut pieces: Vec<Piece>) -> Vec<Piece> {
    if let Some(last) = pieces.last_mut()
        && let Some(cut) = footer_start(last.bytes())
    {
        *last = last.prefix(cut);
    }
    pieces
}

/// Where the footer of a twin's text starts (see [`without_footer`]).
fn footer_start(text: &[u8]) -> Option<usize> {
    let mark = memchr::memmem::rfind(text, GENERATED_AT_MARK.as_bytes())?;
    let before = &text[..mark];
    let at = memchr::memmem::rfind(before, b"\n---\n")
        .or_else(|| memchr::memmem::rfind(before, b"\n\n"))?;
    // The kept text ends its last line, with no blank line after it.
    let mut cut = at + 1;
    while cut >= 2 && text[cut - 2] == b'\n' {
        cut -= 1;
    }
    Some(cut)
}

/// Whether a twin made of parts (the /changes/ twin) has no unknown-only row, read unit by unit: the
/// skeleton, then each part (memoized per part, so an edit reads one part again, not the 24 MB twin at
/// x100). The lines of the units are the twin's lines when the head and every part end at a line end;
/// otherwise (or for any other twin) false, and the twin is condensed whole.
fn parted_twin_has_no_unknown_only_row(db: &dyn salsa::Database, key: OutputKey<'_>) -> bool {
    let Some(parts) = super::pages::parts::parts_of(db, key.output(db)) else {
        return false;
    };
    let Ok(super::pages::parts::Skeleton {
        head,
        tail: Some(tail),
    }) = super::pages::parts::page_skeleton(db, key)
    else {
        return false;
    };
    skeleton_is_plain(head, tail) && parts.into_iter().all(|part| *part_is_plain(db, part))
}

/// Whether a twin's skeleton leaves its parts plain: its head ends at a line end, and neither head nor
/// tail has an unknown-only row.
fn skeleton_is_plain(head: &Piece, tail: &Piece) -> bool {
    ends_a_line(head.bytes())
        && !has_unknown_only_line(&head.text())
        && !has_unknown_only_line(&tail.text())
}

/// Whether any line of `text` says only "unknown/unverified" (a superset of the table rows condensing
/// leaves out: when none does, condensing changes nothing).
fn has_unknown_only_line(text: &str) -> bool {
    text.lines().any(is_unknown_only)
}

/// Whether a text is empty or ends at a line end.
fn ends_a_line(bytes: &[u8]) -> bool {
    bytes.last().is_none_or(|&b| b == b'\n')
}

/// Whether a part of the page `page` can go to `llms-full.txt` as it comes: the page is not a twin, or
/// the part is plain ([`part_is_plain`]).
#[cfg(feature = "streaming")]
pub(crate) fn part_goes_as_it_comes<'db>(
    db: &'db dyn salsa::Database,
    page: &Output,
    part: super::pages::parts::PartKey<'db>,
) -> bool {
    !is_twin(page) || *part_is_plain(db, part)
}

/// `llms-full.txt` as a one-off build grows it, when the route table publishes it.
#[cfg(feature = "streaming")]
pub(crate) fn growth(db: &dyn salsa::Database) -> Option<Box<dyn Growth>> {
    LlmsFullGrowth::new(db).map(|growth| Box::new(growth) as Box<dyn Growth>)
}

/// Whether one part of a twin ends at a line end and has no unknown-only row (see
/// [`parted_twin_has_no_unknown_only_row`]).
#[salsa::tracked]
pub(crate) fn part_is_plain<'db>(
    db: &'db dyn salsa::Database,
    part: super::pages::parts::PartKey<'db>,
) -> bool {
    match super::pages::parts::page_part(db, part) {
        Ok(piece) => ends_a_line(piece.bytes()) && !has_unknown_only_line(&piece.text()),
        Err(_) => false,
    }
}

/// The support value that says nothing is established.
const UNKNOWN: &str = "unknown/unverified";

/// The cells of a Markdown table row (`| a | b \| c |`), split on the pipes the `md` filter left unescaped.
fn cells(row: &str) -> Vec<&str> {
    let inner = row.trim();
    let inner = inner.strip_prefix('|').unwrap_or(inner);
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    let mut cells = Vec::new();
    let mut start = 0;
    let bytes = inner.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'|' && (i == 0 || bytes[i - 1] != b'\\') {
            cells.push(inner[start..i].trim());
            start = i + 1;
        }
    }
    cells.push(inner[start..].trim());
    cells
}

/// Whether a table row says only "unknown/unverified": besides its first cell (what it is about), every
/// cell is that value, empty, or a placeholder for a missing check date, source or verification.
fn is_unknown_only(row: &str) -> bool {
    // Most rows do not say it at all: no need to split them.
    if memchr::memmem::find(row.as_bytes(), UNKNOWN.as_bytes()).is_none() {
        return false;
    }
    let cells = cells(row);
    cells.len() > 1
        && cells[1..].contains(&UNKNOWN)
        && cells[1..]
            .iter()
            .all(|c| matches!(*c, "" | UNKNOWN | "unverified" | "not stated" | "none"))
}

/// What a row is about: its first cell, without the link around it (`[France](/fr/index.md)` -> `France`).
fn row_name(row: &str) -> String {
    let first = cells(row).first().copied().unwrap_or_default();
    match first
        .strip_prefix('[')
        .and_then(|rest| rest.split_once("]("))
    {
        Some((text, _)) => text.to_string(),
        None => first.to_string(),
    }
}

/// `markdown` with every table's unknown-only rows left out and named once, after the table (or in its
/// place when no row is left): "Not established (unknown/unverified) for: A, B."
pub fn condense_unknown_rows(markdown: &str) -> String {
    let lines: Vec<&str> = markdown.split_inclusive('\n').collect();
    condense_lines(&lines, markdown.len()).unwrap_or_else(|| markdown.to_string())
}

/// [`condense_unknown_rows`] of a text's lines (each with its `\n`), `len` bytes in all; `None` when no
/// table has a row to leave out (the text stays as it is).
fn condense_lines(lines: &[&str], len: usize) -> Option<String> {
    let mut out = String::with_capacity(len);
    let mut condensed = false;
    let mut i = 0;
    while i < lines.len() {
        let is_row = |line: &str| line.trim_start().starts_with('|');
        if !is_row(lines[i]) {
            out.push_str(lines[i]);
            i += 1;
            continue;
        }
        let end = (i..lines.len())
            .find(|&j| !is_row(lines[j]))
            .unwrap_or(lines.len());
        let table = &lines[i..end];
        i = end;
        // A table: a header row, its delimiter row, then the rows.
        let has_delimiter = table.get(1).is_some_and(|line| {
            line.trim()
                .chars()
                .all(|c| matches!(c, '|' | '-' | ':' | ' '))
        });
        if !has_delimiter {
            table.iter().for_each(|line| out.push_str(line));
            continue;
        }
        let (unknown, kept): (Vec<&str>, Vec<&str>) =
            table[2..].iter().partition(|row| is_unknown_only(row));
        if unknown.is_empty() {
            table.iter().for_each(|line| out.push_str(line));
            continue;
        }
        if !kept.is_empty() {
            out.push_str(table[0]);
            out.push_str(table[1]);
            kept.iter().for_each(|line| out.push_str(line));
            // A paragraph right under a table would be read as one more row.
            out.push('\n');
        }
        let names: Vec<String> = unknown.iter().map(|row| row_name(row)).collect();
        out.push_str(&format!(
            "Not established ({UNKNOWN}) for: {}.\n",
            names.join(", ")
        ));
        condensed = true;
    }
    condensed.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_twin_is_carried_without_its_footer_and_a_twin_without_a_build_time_whole() {
        let mark = crate::output::GENERATED_AT_MARK;
        let cut = |text: &str| {
            let pieces = vec![
                Piece::new(b"# Head\n".to_vec()),
                Piece::new(text.as_bytes().to_vec()),
            ];
            let kept = without_footer(pieces);
            assert_eq!(kept[0].bytes(), b"# Head\n", "only the last piece is cut");
            String::from_utf8(kept[1].bytes().to_vec()).unwrap()
        };
        // From the last thematic break before the build time (an earlier break is the page's own).
        let page =
            format!("Body.\n\n---\n\nMore.\n\n---\n\n> Notice.\n\nUpdated {mark}.\n\nLicences.\n");
        assert_eq!(cut(&page), "Body.\n\n---\n\nMore.\n");
        // No blank line before the break: the kept text still ends its line.
        assert_eq!(cut(&format!("Body.\n---\nUpdated {mark}.\n")), "Body.\n");
        // No break: the build time's paragraph and what follows.
        assert_eq!(
            cut(&format!("Body.\n\nUpdated {mark}.\n\nEnd.\n")),
            "Body.\n"
        );
        // No build time: nothing is the footer.
        assert_eq!(cut("Body.\n\n---\n\nEnd.\n"), "Body.\n\n---\n\nEnd.\n");
    }

    #[test]
    fn unknown_only_rows_are_named_once_after_their_table() {
        let twin = "## Andorra\n\n\
            | ERP | Support | Verification | Source |\n\
            |---|---|---|---|\n\
            | [SAP](/erp/sap/index.md) | unknown/unverified | unverified | none |\n\
            | [Odoo](/erp/odoo/index.md) | native | verified (official) | [source](https://x.example/) |\n\
            | [A \\| B](/erp/ab/index.md) | unknown/unverified | unverified | none |\n\
            | [Noted](/erp/n/index.md) | unknown/unverified | unverified | no page found |\n\
            \n## Albania\n\n\
            | ERP | Support | Verification | Source |\n\
            |---|---|---|---|\n\
            | [SAP](/erp/sap/index.md) | unknown/unverified | unverified | none |\n\
            \nText | with a pipe.\n";
        assert_eq!(
            condense_unknown_rows(twin),
            "## Andorra\n\n\
            | ERP | Support | Verification | Source |\n\
            |---|---|---|---|\n\
            | [Odoo](/erp/odoo/index.md) | native | verified (official) | [source](https://x.example/) |\n\
            | [Noted](/erp/n/index.md) | unknown/unverified | unverified | no page found |\n\
            \nNot established (unknown/unverified) for: SAP, A \\| B.\n\
            \n## Albania\n\n\
            Not established (unknown/unverified) for: SAP.\n\
            \nText | with a pipe.\n"
        );
        // A twin without such rows is unchanged.
        let plain = "# T\n\n| a | b |\n|---|---|\n| x | unknown |\n";
        assert_eq!(condense_unknown_rows(plain), plain);
    }
}
