//! The `locref` command line.

use locref::locref_site::SITE;
use std::mem::ManuallyDrop;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand};

use locref::build::{BuildError, Profile};
use locref::diagnostics::Diagnostic;
use locref::outdir::{clean_refusal, output_refusal};
use locref::publish::{EmitReport, up_to_date};
use locref::workspace::build_time;
use locref::workspace::{Project, day_of};

// A rebuild allocates and frees many small values (parsed rows, page strings, salsa's memos of the last
// revision): mimalloc is faster at that than the system allocator (figures in BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Exit codes: 0 success, 1 invalid sources or rules, 2 usage, 3 I/O failure.
const EXIT_INVALID: u8 = 1;
const EXIT_IO: u8 = 3;
/// A mistake in how locref was called (clap exits with 2 for its own).
const EXIT_USAGE: u8 = 2;

#[derive(Parser)]
#[command(
    name = "locref",
    version,
    about = "Builds the Localization Reference Data Service from sources/ and rules/."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build the site once into the output folder.
    Build {
        /// Output folder.
        #[arg(long, default_value = "public")]
        out: PathBuf,
        /// Start from nothing: delete the output folder first (only a folder locref wrote).
        #[arg(long)]
        clean: bool,
        /// With --clean: delete the output folder even if it holds files locref did not write.
        #[arg(long, requires = "clean")]
        force: bool,
        /// Publish under this base URL instead of rules/site.toml's.
        #[arg(long)]
        base_url: Option<String>,
    },
    /// Parse, validate, derive and render everything, and check every page's HTML and internal links
    /// (and its Markdown twin's); write nothing. Exits 1 on any error.
    Check,
    /// Watch and serve the site from memory with live reload (built files on disk are not touched).
    Serve {
        /// Address to listen on (127.0.0.1: this machine only).
        #[arg(long, default_value = "127.0.0.1")]
        bind: String,
        /// Port to listen on (0 picks a free one).
        #[arg(long, default_value_t = 8000)]
        port: u16,
        /// A name the server answers for besides localhost, 127.0.0.1 and the bound address (a request
        /// for any other Host is refused: a rebound DNS name cannot read the site).
        #[arg(long)]
        host: Option<String>,
    },
    /// Build, then rebuild on every change under sources/ and rules/ (errors never stop it).
    Watch {
        /// Output folder (never watched).
        #[arg(long, default_value = "public")]
        out: PathBuf,
    },
    /// After a clean check, record the published answers (facts, toggles, phases, regimes, VAT rows,
    /// mandates, reporting ERP cells, local ERPs, partners and partner flags) as release VERSION: a
    /// frozen snapshot (sources/releases/VERSION.index, naming each country's record in
    /// sources/releases/records/, of which it writes those no release wrote), its row in
    /// sources/releases/releases.csv, and `version` in rules/site.toml. Dated now, or by
    /// SOURCE_DATE_EPOCH when set. A release with no change since the last is refused without
    /// --no-change. One release at a time (a second is refused while one runs). Writes nothing on any
    /// error, or takes back what it wrote. `--undo` takes back the last release instead.
    Release {
        /// The new version: numbers separated by `.` or `-` (2026.11.23-1), greater than every release.
        #[arg(required_unless_present = "undo")]
        version: Option<String>,
        /// The note a reader sees: one line saying what changed for readers ("Norway: B2B mandate
        /// enacted from 2027-01-01"), recorded in releases.csv and shown on /changes/, the release's page,
        /// the API and the feeds.
        #[arg(long, default_value = "")]
        note: String,
        /// Make the release even though no answer changed since the last one (it needs --note saying
        /// why: a release that records more of each answer, or only new check dates).
        #[arg(long)]
        no_change: bool,
        /// Take back the last release (its snapshot, the records only it names, its row in releases.csv)
        /// and set rules/site.toml's version back to the release before it, while its files are as it
        /// wrote them; the edits made since stay.
        #[arg(long, conflicts_with_all = ["version", "note", "no_change"])]
        undo: bool,
    },
    /// Store every release snapshot kept whole (sources/releases/VERSION.jsonl, the form before
    /// records) as an index and records, after checking that they put back the recorded text: each
    /// release keeps its hash and chain, and the history derived from it stays the same.
    MigrateReleases,
    /// Recheck every quote against the page it was copied from: fetch each cited page once (one request
    /// at a time, a pause between two requests to one host, robots.txt obeyed), keep its text under
    /// .locref-cache/verify/, and report per answer: quote found, quote not found (the page changed),
    /// page gone (4xx), moved (redirect) or unreachable. Never edits sources/. Exit 0 when every quote
    /// was found, 1 when one was not.
    Verify {
        /// Only this country's answers (a country code: `pl`).
        #[arg(long)]
        only: Option<String>,
        /// Only answers whose source was read on this day or later (YYYY-MM-DD).
        #[arg(long)]
        since: Option<String>,
        /// Where to write the machine-readable report (JSON).
        #[arg(long, default_value = ".locref-cache/verify/report.json")]
        report: PathBuf,
        /// Send every request to this server, with the page's path and query (a mirror of the pages).
        #[arg(long)]
        via: Option<String>,
        /// Pause between two requests to the same host, in milliseconds.
        #[arg(long, default_value_t = 2000)]
        pause_ms: u64,
        /// How long one request may take, in seconds.
        #[arg(long, default_value_t = 30)]
        timeout: u64,
    },
    /// Take back what a release or migrate-releases killed half way wrote (from its journal in
    /// .locref-cache/), so the project is as it was before it; then run that command again.
    Recover,
}

fn print_diagnostics(diagnostics: &[Diagnostic]) {
    for diagnostic in diagnostics {
        eprintln!("{diagnostic}");
    }
    // A line that counts errors left out stands for that many.
    let count: usize = diagnostics.iter().map(|d| d.left_out.max(1)).sum();
    eprintln!("{count} error(s); nothing was written");
}

fn load(root: &Path) -> Result<Project, ExitCode> {
    Project::load(root, &SITE).map_err(|e| {
        eprintln!("error: {e}");
        ExitCode::from(EXIT_IO)
    })
}

/// The project of a command that ends the process when it returns (`build`, `check`): its database is
/// not freed piece by piece, the exit gives its memory back whole. Freeing it was the last 10 - 35 ms
/// of a build on one thread, after the closing line (BENCHMARKS.md).
fn left_to_the_exit(project: Project) -> ManuallyDrop<Project> {
    ManuallyDrop::new(project)
}

fn build(
    profile: Profile,
    out: &Path,
    clean: bool,
    force: bool,
    base_url: Option<String>,
) -> ExitCode {
    let started = Instant::now();
    if let Some(url) = &base_url
        && !locref::parse::is_http_url(url)
    {
        eprintln!("error: --base-url `{url}` is not an http(s) URL");
        return ExitCode::from(2);
    }
    let time = build_time();
    // Nothing changed since the last build into this folder (that day): it would write nothing, so stop
    // here.
    if !clean
        && let Ok(root) = Path::new(".").canonicalize()
        && output_refusal(out, &root).is_none()
        && let Some(unchanged) = up_to_date(out, &root, base_url.as_deref(), &day_of(&time))
    {
        print_built(out, &EmitReport::default(), unchanged, started);
        let effective = base_url.clone().or_else(|| site_base_url(&root));
        if let Some(effective) = effective {
            warn_placeholder(&effective);
        }
        return ExitCode::SUCCESS;
    }
    let mut project = match load(Path::new(".")) {
        Ok(project) => left_to_the_exit(project),
        Err(code) => return code,
    };
    project.set_base_url(base_url.clone());
    project.set_build_time(&time);
    // Both refusals before anything is rendered; --clean itself happens last (see Publisher::cleaning),
    // so a build that fails leaves the last good one in place.
    if clean && let Some(reason) = clean_refusal(out, &project.root, force) {
        eprintln!("error: {reason}");
        return ExitCode::from(EXIT_IO);
    }
    if let Some(reason) = output_refusal(out, &project.root) {
        eprintln!("error: {reason}");
        return ExitCode::from(EXIT_IO);
    }
    let inputs = project.input_record(base_url.as_deref());
    let mut publisher = profile.publisher(Some(out)).with_inputs(inputs);
    if clean {
        publisher = publisher.cleaning();
    }
    // Each output is staged as it is rendered, and put in place only when the whole site checked out.
    let published = match profile
        .plan(&SITE)
        .publish(&mut project.db, &mut publisher, &time)
    {
        Ok(Err(diagnostics)) => {
            print_diagnostics(&diagnostics);
            return ExitCode::from(EXIT_INVALID);
        }
        Ok(Ok(report)) => Ok(report),
        Err(e) => Err(e),
    };
    match published {
        Ok(report) => {
            const SHOWN: usize = 20;
            for path in report.written.iter().take(SHOWN) {
                println!("  wrote   {path}");
            }
            if report.written.len() > SHOWN {
                println!("  ... and {} more", report.written.len() - SHOWN);
            }
            for path in &report.removed {
                println!("  removed {path}");
            }
            for path in &report.repaired {
                println!("  repaired {path} (its file changed outside locref)");
            }
            for path in &report.kept {
                println!(
                    "  kept    {path} (no longer an output; its file changed outside locref, so it was left in place)"
                );
            }
            print_built(out, &report, report.unchanged, started);
            warn_placeholder(locref::model::base_url(&project.db));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: writing {}: {e}", out.display());
            ExitCode::from(EXIT_IO)
        }
    }
}

/// Said after the closing line, where it is seen: the site is built, but for no address it can be
/// published at.
fn warn_placeholder(effective: &str) {
    if locref::model::is_placeholder_url(effective) {
        eprintln!(
            "warning: the base URL is the placeholder {effective}: the absolute links of llms.txt, calendar.ics \
             and the API's `url` fields point there. Build for the real address with --base-url (a GitHub \
             Pages project site: --base-url https://<user>.github.io/<repository>)"
        );
    }
}

/// `rules/site.toml`'s `base_url`, read on its own for a build that stops early (nothing changed), so it
/// warns about the placeholder as a full build does.
fn site_base_url(root: &Path) -> Option<String> {
    let text = std::fs::read_to_string(root.join("rules/site.toml")).ok()?;
    let value: toml::Table = toml::from_str(&text).ok()?;
    value.get("base_url")?.as_str().map(str::to_string)
}

/// The closing line of a build.
fn print_built(out: &Path, report: &EmitReport, unchanged: usize, started: Instant) {
    println!(
        "built {}: {} written, {} unchanged, {} removed in {:.1} ms",
        out.display(),
        report.written.len(),
        unchanged,
        report.removed.len(),
        started.elapsed().as_secs_f64() * 1000.0
    );
}

fn check(profile: Profile) -> ExitCode {
    let mut project = match load(Path::new(".")) {
        Ok(project) => left_to_the_exit(project),
        Err(code) => return code,
    };
    // Rendered and checked as a build does, holding no more of the site; nothing is written.
    match profile.plan(&SITE).check(&mut project.db, |_| ()) {
        Ok(outputs) => {
            let (pages, links) = locref::linkcheck::coverage(&project.db);
            println!(
                "ok: {outputs} outputs, no errors; {pages} pages and twins checked, {links} internal links resolve"
            );
            ExitCode::SUCCESS
        }
        Err(BuildError::Invalid(diagnostics)) => {
            print_diagnostics(&diagnostics);
            ExitCode::from(EXIT_INVALID)
        }
        Err(BuildError::Io(e)) => {
            eprintln!("error: {e}");
            ExitCode::from(EXIT_IO)
        }
    }
}

/// What `release` and `migrate-releases` print and exit with when they wrote nothing (or could not take
/// everything back).
fn release_failed(error: locref::cmd::release::ReleaseError) -> ExitCode {
    use locref::cmd::release::ReleaseError;
    match error {
        ReleaseError::Invalid(diagnostics) => {
            print_diagnostics(&diagnostics);
            ExitCode::from(EXIT_INVALID)
        }
        ReleaseError::Usage(message) => {
            eprintln!("error: {message}; nothing was written");
            ExitCode::from(2)
        }
        ReleaseError::Refused(message) => {
            eprintln!("error: {message}; nothing was written");
            ExitCode::from(EXIT_INVALID)
        }
        ReleaseError::Busy(message) | ReleaseError::Io(message) => {
            eprintln!("error: {message}; nothing was written");
            ExitCode::from(EXIT_IO)
        }
        ReleaseError::Unfinished(message) => {
            eprintln!("error: {message}");
            ExitCode::from(EXIT_IO)
        }
    }
}

fn recover() -> ExitCode {
    match locref::cmd::release::recover(Path::new(".")) {
        Ok(done) => {
            match done.command {
                None => println!("no release or migration was interrupted; nothing was written"),
                Some(command) => {
                    for path in &done.restored {
                        println!("  put back {path}");
                    }
                    println!(
                        "took back what the interrupted `locref {command}` wrote ({} file(s)); run it again",
                        done.restored.len()
                    );
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => release_failed(e),
    }
}

fn migrate_releases() -> ExitCode {
    use locref::cmd::release::migrate_releases;
    match migrate_releases(Path::new(".")) {
        Ok(done) if done.releases.is_empty() => {
            println!(
                "every release is stored as an index and records already; nothing was written"
            );
            ExitCode::SUCCESS
        }
        Ok(done) => {
            println!(
                "migrated {} release(s) ({}): {} bytes of whole snapshots are now {} bytes of indexes and records",
                done.releases.len(),
                done.releases.join(", "),
                done.bytes_before,
                done.bytes_after
            );
            ExitCode::SUCCESS
        }
        Err(e) => release_failed(e),
    }
}

fn undo_release() -> ExitCode {
    match locref::cmd::release::undo(Path::new(".")) {
        Ok(done) => {
            for path in &done.removed {
                println!("  removed {path}");
            }
            for path in &done.replaced {
                println!("  put back {path}");
            }
            println!(
                "took back release {}: {} is the last release again (and the version in {})",
                done.version,
                done.previous,
                locref::parse::rules::SITE
            );
            ExitCode::SUCCESS
        }
        Err(e) => release_failed(e),
    }
}

fn release(version: &str, note: &str, no_change: bool) -> ExitCode {
    use locref::cmd::release::{NoChange, release};
    let started = Instant::now();
    let no_change = if no_change {
        NoChange::Allowed
    } else {
        NoChange::Refused
    };
    match release(Path::new("."), version, note, &build_time(), no_change) {
        Ok(done) => {
            let changes = match (&done.previous, done.changes) {
                (Some(previous), Some(0)) => format!(
                    "no change since {previous}: this release changes no answer (--no-change)"
                ),
                (Some(previous), Some(n)) => {
                    format!("{} since {previous}", locref::api_types::changes_counted(n))
                }
                _ => "the first release".to_string(),
            };
            for (record, bytes) in &done.new_records {
                println!("  wrote   {record} ({bytes} bytes)");
            }
            println!(
                "  wrote   {} (a snapshot of {} bytes, {} new record(s))\n  wrote   {}\n  wrote   {}",
                done.snapshot,
                done.snapshot_bytes,
                done.new_records.len(),
                locref::history::REGISTER,
                locref::parse::rules::SITE
            );
            println!(
                "released {} at {}: {} facts and {} other answers of {} countries; {changes}; in {:.1} ms",
                done.version,
                done.released_at,
                done.facts,
                done.answers,
                done.countries,
                started.elapsed().as_secs_f64() * 1000.0
            );
            ExitCode::SUCCESS
        }
        Err(e) => release_failed(e),
    }
}

fn verify(options: locref::cmd::verify::Options, report_path: &Path) -> ExitCode {
    use locref::cmd::verify::{Outcome, verify};
    if let Some(since) = &options.since
        && locref::parse::tables::date_problem(since).is_some()
    {
        eprintln!("error: --since takes a day, YYYY-MM-DD, not `{since}`");
        return ExitCode::from(2);
    }
    let project = match load(Path::new(".")) {
        Ok(project) => project,
        Err(code) => return code,
    };
    let report = match verify(&project, &options, &build_time()) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(EXIT_IO);
        }
    };
    let json = serde_json::to_string_pretty(&report).expect("a report serializes");
    if let Some(parent) = report_path.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    if let Err(e) = std::fs::write(report_path, json + "\n") {
        eprintln!("error: writing {}: {e}", report_path.display());
        return ExitCode::from(EXIT_IO);
    }
    for answer in report
        .answers
        .iter()
        .filter(|a| a.outcome != Outcome::Found)
    {
        println!(
            "{}: {}: {} ({}): {}",
            answer.at,
            answer.answer,
            answer.outcome.words(),
            answer.detail,
            answer.url
        );
    }
    let counts: Vec<String> = Outcome::ALL
        .iter()
        .map(|o| format!("{} {}", report.counts[o], o.words()))
        .collect();
    println!(
        "verified {} quote(s) on {} page(s): {}; report in {}",
        report.answers.len(),
        report.pages_fetched,
        counts.join(", "),
        report_path.display()
    );
    if report.counts[&Outcome::Found] == report.answers.len() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_INVALID)
    }
}

/// Exit code of a long-running command: it only returns on an I/O failure (bind, watcher).
fn exit_with(result: std::io::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(EXIT_IO)
        }
    }
}

/// What a command builds for, chosen here once: it sets the process's memory, and a one-off command's
/// plan and publisher come from it. `watch` and `serve` build through a session of the same profile
/// (`Session::load`, `Session::in_memory`).
fn profile_of(command: &Command) -> Profile {
    match command {
        Command::Watch { .. } => Profile::Session,
        Command::Serve { .. } => Profile::InMemory,
        Command::Build { .. }
        | Command::Check
        | Command::Release { .. }
        | Command::MigrateReleases
        | Command::Verify { .. }
        | Command::Recover => Profile::OneOff,
    }
}

fn main() -> ExitCode {
    locref::allocator::no_huge_pages();
    let command = Cli::parse().command;
    // A malformed SOURCE_DATE_EPOCH is a mistake to say, not a reason to date the build now.
    if let Err(problem) = locref::workspace::source_date_epoch() {
        eprintln!("error: {problem}");
        return ExitCode::from(EXIT_USAGE);
    }
    let profile = profile_of(&command);
    profile.set_up_memory();
    // A release killed half way left sources that must not be built or released from as they are.
    if !matches!(command, Command::Recover)
        && let Some(interrupted) = locref::cmd::release::interrupted(Path::new("."))
    {
        eprintln!("error: {interrupted}");
        return ExitCode::from(EXIT_INVALID);
    }
    match command {
        Command::Build {
            out,
            clean,
            force,
            base_url,
        } => build(profile, &out, clean, force, base_url),
        Command::Check => check(profile),
        Command::Watch { out } => exit_with(locref::watch::run(Path::new("."), &out, &SITE)),
        Command::Serve { bind, port, host } => exit_with(locref::serve::run(
            Path::new("."),
            &bind,
            port,
            host.as_deref(),
            &SITE,
        )),
        Command::Release { undo: true, .. } => undo_release(),
        Command::Release {
            version,
            note,
            no_change,
            ..
        } => release(version.as_deref().unwrap_or_default(), &note, no_change),
        Command::MigrateReleases => migrate_releases(),
        Command::Recover => recover(),
        Command::Verify {
            only,
            since,
            report,
            via,
            pause_ms,
            timeout,
        } => verify(
            locref::cmd::verify::Options {
                only,
                since,
                via,
                pause: std::time::Duration::from_millis(pause_ms),
                timeout: std::time::Duration::from_secs(timeout),
            },
            &report,
        ),
    }
}
