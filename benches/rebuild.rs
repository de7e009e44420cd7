//! Rebuild latency of the per-rebuild step that `locref watch` runs (`Session::rebuild`): a full clean
//! build, a no-op rebuild (touch), and edit-to-files-written for the edits of
//! tests/testsuite/incremental.rs, on the shipped dataset (x1) and the grown x10 and x100 datasets
//! (tests/testsuite/common/scale.rs). The watch's quiet window (10 ms at an editor's pace) comes on top
//! of these figures in `locref watch`. The whole-process figures are measured with `bench/`
//! (BENCHMARKS.md, "How to reproduce").
//!
//! Run: `cargo bench --bench rebuild` (release). Prints the median, min and max of repeated runs.
//! `BENCH_SCALES=1,10` picks the datasets (default 1,10,100); `BENCH_RUNS=N` sets the repetition count
//! at x1 (x10 and x100 run fewer); `BENCH_ONLY=text` runs only the cases whose name contains `text` (for
//! profiling one case with `perf record`); `BENCH_WORKLOAD_OUT=DIR` writes the datasets' sources and
//! rules to `DIR/x<scale>` instead (and, with `BENCH_MORE_RELEASES=N`, to `DIR/x<scale>-r<N>` with N
//! more releases).

// The allocator of the `locref` binary, so the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use locref::build::render_site_with;
use locref::locref_site::SITE;
use locref::second_thread::Helper;
use locref::session::{Outcome, Session};

const TIME: &str = "2026-01-01T00:00:00Z";

/// The single-fact edit: France's VAT fact text in the facts table.
const FACTS_TABLE: &str = "sources/tables/countries.csv";
const VAT_FACT: &str = "fr,VAT / GST,TVA. Standard rate 20%";
const VAT_FACT_EDITED: &str = "fr,VAT / GST,TVA (x). Standard rate 20%";

/// The facts table's path, its shipped text and its text with the single-fact edit.
fn vat_fact_versions(root: &Path) -> (PathBuf, String, String) {
    let path = root.join(FACTS_TABLE);
    let shipped = std::fs::read_to_string(&path).unwrap();
    assert_eq!(shipped.matches(VAT_FACT).count(), 1);
    let edited = shipped.replacen(VAT_FACT, VAT_FACT_EDITED, 1);
    (path, shipped, edited)
}

/// The tests' project copier, so the benchmark runs on the same copy of the shipped sources.
#[path = "../tests/testsuite/common/mod.rs"]
mod common;

fn project(scale: u32) -> tempfile::TempDir {
    common::scale::scaled_project(scale)
}

/// The time between an edit and its rebuild (`BENCH_PAUSE_MS`, default 0: back to back). `locref watch`
/// rebuilds after at least 100 ms of debounce, with the process idle meanwhile.
fn pause() -> std::time::Duration {
    let ms = std::env::var("BENCH_PAUSE_MS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    std::time::Duration::from_millis(ms)
}

/// The dataset being measured (1, 10 or 100), named before each case.
static SCALE: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);

fn report(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let name = format!(
        "x{}: {name}",
        SCALE.load(std::sync::atomic::Ordering::Relaxed)
    );
    println!(
        "{name:<50} median {:>8.3} ms   min {:>8.3} ms   max {:>8.3} ms   (n = {})",
        ms(samples[samples.len() / 2]),
        ms(samples[0]),
        ms(samples[samples.len() - 1]),
        samples.len()
    );
}

/// Alternates one file between two contents (so every run is a real edit) and times the rebuild.
fn edit_bench(
    session: &mut Session,
    root: &Path,
    name: &str,
    rel: &str,
    from: &str,
    to: &str,
    runs: usize,
) {
    let path: PathBuf = root.join(rel);
    let a = std::fs::read_to_string(&path).unwrap();
    assert_eq!(a.matches(from).count(), 1, "{from}");
    let b = a.replacen(from, to, 1);
    let mut samples = Vec::new();
    let mut written = 0;
    let mut executed = 0;
    for i in 0..runs {
        std::fs::write(&path, if i % 2 == 0 { &b } else { &a }).unwrap();
        std::thread::sleep(pause());
        let started = Instant::now();
        let r = session.rebuild(std::slice::from_ref(&path));
        samples.push(started.elapsed());
        assert!(matches!(r.outcome, Outcome::Built(_)), "{r}");
        written = r.written().len();
        executed = r.executed.len();
    }
    report(
        &format!("{name} ({executed} queries, {written} files)"),
        samples,
    );
    std::fs::write(&path, &a).unwrap();
    session.rebuild(std::slice::from_ref(&path));
}

fn main() {
    locref::allocator::no_huge_pages();
    locref::allocator::keep_freed_memory();
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(21);
    let scales: Vec<u32> = std::env::var("BENCH_SCALES")
        .unwrap_or_else(|_| "1,10,100".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    // `BENCH_WORKLOAD_OUT=DIR`: write each dataset's sources and rules to `DIR/x<scale>` (for the
    // whole-process figures of `farm-bench`), and measure nothing.
    // With `BENCH_MORE_RELEASES=N`, also `DIR/x<scale>-r<N>`: the same dataset with N more releases
    // made by `locref release`, three facts revised in each (tests/testsuite/common/releases.rs).
    if let Some(out) = std::env::var_os("BENCH_WORKLOAD_OUT") {
        let more: usize = std::env::var("BENCH_MORE_RELEASES")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        for scale in scales {
            let dir = project(scale);
            let to = Path::new(&out).join(format!("x{scale}"));
            for sub in ["sources", "rules"] {
                common::copy_dir(&dir.path().join(sub), &to.join(sub));
            }
            println!("wrote {}", to.display());
            if more > 0 {
                let started = Instant::now();
                let added = common::releases::add_releases(dir.path(), more, 3);
                let to = Path::new(&out).join(format!("x{scale}-r{more}"));
                for sub in ["sources", "rules"] {
                    common::copy_dir(&dir.path().join(sub), &to.join(sub));
                }
                let mut sorted = added.clone();
                sorted.sort_unstable();
                println!(
                    "wrote {} ({more} more releases in {:.1} s; bytes added a release: median {}, max {}; sources/releases/ {} bytes)",
                    to.display(),
                    started.elapsed().as_secs_f64(),
                    sorted[sorted.len() / 2],
                    sorted[sorted.len() - 1],
                    common::releases::releases_bytes(dir.path())
                );
            }
        }
        return;
    }
    for scale in scales {
        // Fewer runs where each takes longer: the x100 fact edit writes over 100 MB.
        let runs = match scale {
            1 => runs,
            10 => runs.min(11),
            _ => runs.min(7),
        };
        bench_scale(scale, runs);
    }
}

fn bench_scale(scale: u32, runs: usize) {
    let only = std::env::var("BENCH_ONLY").unwrap_or_default();
    let wanted = |name: &str| name.contains(only.as_str());
    SCALE.store(scale, std::sync::atomic::Ordering::Relaxed);

    let dir = project(scale);
    let root = dir.path();
    let mut session = Session::load(root, &root.join("public"), &SITE)
        .unwrap()
        .with_fixed_time(TIME);
    session.build();
    // As a curator's first edit finds them: the session makes its spares right after the first build.
    session.settle();

    // No-op rebuild: a touch of the largest table (read + blake3 of its bytes; nothing runs or is written).
    let matrix = root.join("sources/tables/matrix.csv");
    let mut samples = Vec::new();
    let noop_runs = if wanted("no-op rebuild") { runs * 5 } else { 0 };
    for _ in 0..noop_runs {
        let f = std::fs::File::options().append(true).open(&matrix).unwrap();
        f.set_modified(std::time::SystemTime::now()).unwrap();
        drop(f);
        let started = Instant::now();
        let r = session.rebuild(std::slice::from_ref(&matrix));
        samples.push(started.elapsed());
        assert_eq!(r.outcome, Outcome::Unchanged);
    }
    if noop_runs > 0 {
        report("no-op rebuild (touch matrix.csv)", samples);
    }

    let edits: [(&str, &str, &str, &str); 6] = [
        ("one VAT fact text", FACTS_TABLE, VAT_FACT, VAT_FACT_EDITED),
        (
            "fact edit flipping a toggle",
            FACTS_TABLE,
            "no invoice-by-invoice submission to the ATO).",
            "no invoice-by-invoice submission to the ATO). SAF-T: required.",
        ),
        (
            "one matrix cell",
            "sources/tables/matrix.csv",
            "E-Invoicing for France as an Early Adopter feature",
            "E-Invoicing for France as an early-adopter feature",
        ),
        (
            "one partner",
            "sources/tables/partners.csv",
            "Publisher of the SprintIT Finvoice",
            "Publisher of SprintIT's Finvoice",
        ),
        (
            "one toggle rule",
            "rules/toggles.toml",
            r"'\bSAF-T: (required|on request)\b'",
            r"'\bSAF-T: required\b'",
        ),
        // No query reads the folder's README: a new revision in which salsa re-validates every output's
        // dependencies and nothing runs, the floor under every edit above.
        (
            "revalidation only",
            "sources/README.md",
            "# sources/: the curated data",
            "# sources/: the curated data (x)",
        ),
    ];
    for (name, rel, from, to) in edits.into_iter().filter(|e| wanted(e.0)) {
        edit_bench(&mut session, root, name, rel, from, to, runs);
    }

    if wanted("VAT fact: breakdown") {
        vat_breakdown(&mut session, root, runs);
    }
    if wanted("first edit of a session") {
        first_edit(root, runs.min(11));
    }
    if wanted("locref watch") {
        watch_latency(root, runs);
    }
    if wanted("locref build, nothing changed") {
        cli_noop(root, runs);
    }

    // Full clean build: load (read + hash every input), render everything, write every output. Last, so
    // the write-back of its files (about 5 MB a build) does not run during the edit measurements.
    let mut samples = Vec::new();
    let clean_runs = if wanted("full clean build") {
        runs.min(11)
    } else {
        0
    };
    for i in 0..clean_runs {
        let out = root.join(format!("clean{i}"));
        let started = Instant::now();
        let mut session = Session::load(root, &out, &SITE)
            .unwrap()
            .with_fixed_time(TIME);
        let r = session.build();
        samples.push(started.elapsed());
        assert!(r.written().len() > 300, "a clean build writes every output");
    }
    if clean_runs > 0 {
        report("full clean build (load + render + write all)", samples);
    }
}

/// `locref build` as a process, into a folder it built before from the same files: it finds the record
/// of the last build's inputs unchanged and writes nothing.
fn cli_noop(root: &Path, runs: usize) {
    let build = || {
        let started = Instant::now();
        let run = std::process::Command::new(env!("CARGO_BIN_EXE_locref"))
            .args(["build", "--out", "cli"])
            .current_dir(root)
            .output()
            .unwrap();
        assert!(run.status.success());
        (
            started.elapsed(),
            String::from_utf8_lossy(&run.stdout).into_owned(),
        )
    };
    build();
    let mut samples = Vec::new();
    for _ in 0..runs {
        let (elapsed, stdout) = build();
        assert!(stdout.contains(": 0 written, "), "{stdout}");
        samples.push(elapsed);
    }
    report("locref build, nothing changed (whole process)", samples);
}

/// Where the time of a single-fact edit goes: sync (read + hash), render (queries), emit (stamp + write).
fn vat_breakdown(session: &mut Session, root: &Path, runs: usize) {
    let (path, a, b) = vat_fact_versions(root);
    let (mut sync, mut render, mut write) = (Vec::new(), Vec::new(), Vec::new());
    // The publisher a watch session keeps: warm it with one publish, as the session's first build does.
    let mut publisher = locref::build::Profile::Session.publisher(Some(&root.join("public")));
    // And its second thread, kept between rebuilds.
    let mut helper = Helper::new();
    publisher
        .publish(
            &render_site_with(&SITE, &session.project.db, &mut helper).unwrap(),
            TIME,
        )
        .unwrap();
    locref::render::take_executed(&session.project.db);
    for i in 0..runs {
        std::fs::write(&path, if i % 2 == 0 { &b } else { &a }).unwrap();
        std::thread::sleep(pause());
        let t0 = Instant::now();
        session
            .project
            .sync_paths(std::slice::from_ref(&path))
            .unwrap();
        let t1 = Instant::now();
        let outputs = render_site_with(&SITE, &session.project.db, &mut helper).unwrap();
        let t2 = Instant::now();
        publisher.publish(&outputs, TIME).unwrap();
        let t3 = Instant::now();
        sync.push(t1 - t0);
        render.push(t2 - t1);
        write.push(t3 - t2);
        locref::render::take_executed(&session.project.db);
    }
    std::fs::write(&path, &a).unwrap();
    session.rebuild(std::slice::from_ref(&path));
    report("VAT fact: breakdown: sync_paths (read + blake3)", sync);
    report("VAT fact: breakdown: render_site (queries)", render);
    report(
        "VAT fact: breakdown: publish (stamp and write the changed outputs)",
        write,
    );
}

/// The single-fact edit as the first edit of a session, as a freshly started `locref watch` meets it: a
/// new session builds into a folder of its own and makes its spares, then the edit comes after the pause.
fn first_edit(root: &Path, runs: usize) {
    let (path, shipped, edited) = vat_fact_versions(root);
    let mut samples = Vec::new();
    let mut written = 0;
    for i in 0..runs {
        let mut session = Session::load(root, &root.join(format!("first{i}")), &SITE)
            .unwrap()
            .with_fixed_time(TIME);
        session.build();
        session.settle();
        std::fs::write(&path, &edited).unwrap();
        std::thread::sleep(pause());
        let started = Instant::now();
        let r = session.rebuild(std::slice::from_ref(&path));
        samples.push(started.elapsed());
        written = r.written().len();
        std::fs::write(&path, &shipped).unwrap();
    }
    report(
        &format!("one VAT fact text, first edit of a session ({written} files)"),
        samples,
    );
}

/// The single-fact edit through a running `locref watch` (release binary): from the write of the file to
/// the rebuild's line on stdout (printed after the files are written), so the debounce is included; and
/// the rebuild time the line itself reports (from the end of the debounce to the files written).
fn watch_latency(root: &Path, runs: usize) {
    use std::io::BufRead;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_locref"))
        .args(["watch", "--out", "watched"])
        .current_dir(root)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let (lines_tx, lines) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if lines_tx.send((Instant::now(), line)).is_err() {
                break;
            }
        }
    });
    let next = |what: &str| loop {
        let (at, line) = lines.recv_timeout(Duration::from_secs(30)).unwrap();
        if line.contains(what) {
            return (at, line);
        }
    };
    next("watching");
    // The session makes its outputs' spares after the first build (well under a second): let it.
    std::thread::sleep(Duration::from_secs(1));
    let (path, a, b) = vat_fact_versions(root);
    let (mut end_to_end, mut reported) = (Vec::new(), Vec::new());
    for i in 0..runs {
        // An editor's pace, not a burst: each edit is its own rebuild (`BENCH_PAUSE_MS` apart, at least
        // 300 ms).
        std::thread::sleep(pause().max(Duration::from_millis(300)));
        let started = Instant::now();
        std::fs::write(&path, if i % 2 == 0 { &b } else { &a }).unwrap();
        let (at, line) = next(&format!("changed {FACTS_TABLE}"));
        assert!(line.contains("/api/v1/facts.json"), "{line}");
        end_to_end.push(at - started);
        let ms: f64 = line
            .rsplit("; ")
            .next()
            .and_then(|t| t.strip_suffix(" ms"))
            .and_then(|t| t.parse().ok())
            .unwrap();
        reported.push(Duration::from_secs_f64(ms / 1000.0));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    std::fs::write(&path, &a).unwrap();
    report("locref watch: one VAT fact, edit to line", end_to_end);
    report("locref watch: one VAT fact, rebuild as printed", reported);
}
