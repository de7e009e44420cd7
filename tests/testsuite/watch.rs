//! `locref watch` end to end: the real binary on a tempdir copy of the shipped project, driven by edits on
//! disk (an editor's atomic save, a broken-then-fixed source), with bounded waits on its printed lines.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use crate::common::{atomic_save, copy_project, read};

/// Kills the child when the test ends, however it ends.
struct Watch {
    child: Child,
    lines: Receiver<String>,
    seen: Vec<String>,
    /// Lines received but not yet matched by an expectation.
    pending: Vec<String>,
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The rebuild part of a line `locref watch` prints, after its `HH:MM:SS` time (or "" for other lines).
fn rebuild_line(line: &str) -> &str {
    let (time, rest) = line.split_at(line.len().min(9));
    let is_time = time.len() == 9
        && time.bytes().enumerate().all(|(i, b)| match i {
            2 | 5 => b == b':',
            8 => b == b' ',
            _ => b.is_ascii_digit(),
        });
    if is_time { rest } else { "" }
}

impl Watch {
    fn start(root: &std::path::Path) -> Watch {
        Watch::start_with(root, &[])
    }

    fn start_with(root: &std::path::Path, env: &[(&str, &str)]) -> Watch {
        let mut child = Command::new(env!("CARGO_BIN_EXE_locref"))
            .args(["watch", "--out", "public"])
            .current_dir(root)
            .env("SOURCE_DATE_EPOCH", "1767225600")
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn locref watch");
        let (sender, lines) = channel();
        for stream in [
            Box::new(child.stdout.take().expect("stdout")) as Box<dyn std::io::Read + Send>,
            Box::new(child.stderr.take().expect("stderr")),
        ] {
            let sender = sender.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    if sender.send(line).is_err() {
                        break;
                    }
                }
            });
        }
        Watch {
            child,
            lines,
            seen: Vec::new(),
            pending: Vec::new(),
        }
    }

    /// Waits (at most 60 s) for a printed line satisfying `predicate`; returns it. stdout and stderr reach
    /// the channel through two threads, so their relative order is not fixed: a line is consumed only when
    /// an expectation matches it, and lines not yet matched stay available to later expectations.
    fn expect(&mut self, what: &str, predicate: impl Fn(&str) -> bool) -> String {
        if let Some(at) = self.pending.iter().position(|l| predicate(l)) {
            return self.pending.remove(at);
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if predicate(&line) {
                        return line;
                    }
                    self.pending.push(line);
                }
                Err(_) => break,
            }
        }
        panic!(
            "timed out waiting for {what}; output so far:\n{}",
            self.seen.join("\n")
        );
    }
}

#[test]
fn watch_rebuilds_on_atomic_saves_and_survives_a_broken_source() {
    let dir = copy_project();
    let root = dir.path();
    let mut watch = Watch::start(root);
    let first = watch.expect("the initial build", |l| l.contains("queries re-ran"));
    assert!(
        rebuild_line(&first).starts_with(&format!(
            "first build: {} outputs in ",
            crate::common::shipped_outputs()
        )),
        "a rebuild line starts with its time, then what the first build made: {first}"
    );
    assert!(
        first.contains(&format!(
            "queries re-ran; wrote {} files to ",
            crate::common::shipped_outputs()
        )),
        "{first}"
    );
    watch.expect("the watching line", |l| l.starts_with("watching "));
    let fr = root.join("public/api/v1/countries/fr.json");
    let good_fr = std::fs::read(&fr).expect("fr.json built");

    // An editor's atomic save of one fact text: one rebuild that names the input and its outputs.
    let facts = root.join("sources/tables/countries.csv");
    let original = read(root, "sources/tables/countries.csv");
    let edited = original.replacen(
        "fr,VAT / GST,TVA. Standard rate 20%",
        "fr,VAT / GST,TVA (edited). Standard rate 20%",
        1,
    );
    assert_ne!(edited, original);
    atomic_save(&facts, edited.as_bytes());
    let line = watch.expect("the rebuild after an atomic save", |l| {
        rebuild_line(l).starts_with("changed ")
    });
    assert!(
        line.contains("changed sources/tables/countries.csv;"),
        "{line}"
    );
    assert!(line.contains("/api/v1/countries/fr.json"), "{line}");
    assert!(line.contains("/api/v1/facts.json"), "{line}");
    assert!(
        line.contains("/fr/index.html") && line.contains("/fr/index.md"),
        "{line}"
    );
    assert!(line.ends_with(" ms"), "{line}");
    assert!(
        String::from_utf8(std::fs::read(&fr).unwrap())
            .unwrap()
            .contains("TVA (edited)")
    );

    // Break the matrix: the diagnostics are printed, the last good output stays, the watcher lives on.
    let matrix = root.join("sources/tables/matrix.csv");
    let good_matrix = read(root, "sources/tables/matrix.csv");
    let fr_before_break = std::fs::read(&fr).unwrap();
    std::fs::write(
        &matrix,
        good_matrix.replacen("de,sage-intacct,native,", "de,sage-intacct,bogus,", 1),
    )
    .unwrap();
    watch.expect("the diagnostic", |l| {
        l.contains("sources/tables/matrix.csv:") && l.contains("bogus")
    });
    let line = watch.expect("the failed rebuild's line", |l| {
        rebuild_line(l).starts_with("changed ")
    });
    assert!(
        line.contains("error(s), kept the last good output"),
        "{line}"
    );
    assert_eq!(
        std::fs::read(&fr).unwrap(),
        fr_before_break,
        "the last good output is kept"
    );

    // The fix (again an atomic save) recovers without a restart.
    atomic_save(&matrix, good_matrix.as_bytes());
    let line = watch.expect("the recovery", |l| rebuild_line(l).starts_with("changed "));
    assert!(
        line.contains("changed sources/tables/matrix.csv;"),
        "{line}"
    );
    assert!(
        line.ends_with("errors cleared, the output is current again"),
        "the fix says the errors are cleared: {line}"
    );

    // Restoring the fact text brings back the original bytes of fr.json (generated_at is pinned).
    atomic_save(&facts, original.as_bytes());
    let line = watch.expect("the rebuild after restoring", |l| {
        rebuild_line(l).starts_with("changed ")
    });
    assert!(line.contains("/api/v1/countries/fr.json"), "{line}");
    assert_eq!(std::fs::read(&fr).unwrap(), good_fr);
    assert!(
        watch.child.try_wait().expect("status").is_none(),
        "locref watch is still running"
    );
}

/// Waits until `locref watch` printed its watching line, so edits after it are seen.
fn started(root: &std::path::Path, env: &[(&str, &str)]) -> Watch {
    let mut watch = Watch::start_with(root, env);
    watch.expect("the initial build", |l| l.contains("queries re-ran"));
    watch.expect("the watching line", |l| l.starts_with("watching "));
    watch
}

/// An edit that changes France's VAT fact, so the rebuild writes France's files.
fn edit_france(root: &std::path::Path, marker: &str) {
    let facts = root.join("sources/tables/countries.csv");
    let text = read(root, "sources/tables/countries.csv").replacen(
        "fr,VAT / GST,TVA",
        &format!("fr,VAT / GST,TVA ({marker})"),
        1,
    );
    atomic_save(&facts, text.as_bytes());
}

#[test]
fn watch_recovers_when_the_sources_folder_is_deleted_and_restored() {
    let dir = copy_project();
    let root = dir.path();
    let mut watch = started(root, &[]);
    // A branch switch or a restore: the whole folder goes away, then comes back.
    let saved = root.join("saved-sources");
    crate::common::copy_dir(&root.join("sources"), &saved);
    std::fs::remove_dir_all(root.join("sources")).unwrap();
    let line = watch.expect("the failed rebuild", |l| {
        rebuild_line(l).contains("kept the last good output")
    });
    assert!(line.contains("error(s)"), "{line}");
    assert!(
        root.join("public/fr/index.html").is_file(),
        "the last good output stays"
    );
    std::fs::rename(&saved, root.join("sources")).unwrap();
    let line = watch.expect("the rebuild after the restore", |l| {
        rebuild_line(l).contains("errors cleared")
    });
    assert!(rebuild_line(&line).starts_with("changed "), "{line}");
    // Edits inside the restored folder are seen.
    edit_france(root, "after restore");
    watch.expect("the edit after the restore", |l| {
        rebuild_line(l).contains("/api/v1/countries/fr.json")
    });
    assert!(read(root, "public/api/v1/countries/fr.json").contains("TVA (after restore)"));
    assert!(watch.child.try_wait().unwrap().is_none(), "still running");
}

#[test]
fn watch_sees_a_file_replaced_by_a_folder() {
    let dir = copy_project();
    let root = dir.path();
    let mut watch = started(root, &[]);
    let news = root.join("sources/news.json");
    let original = std::fs::read(&news).unwrap();
    std::fs::remove_file(&news).unwrap();
    std::fs::create_dir(&news).unwrap();
    std::fs::write(news.join("stray.txt"), b"not a news file").unwrap();
    watch.expect("the missing news file", |l| {
        l.starts_with("sources/news.json:1:1: error: file is missing")
    });
    std::fs::remove_dir_all(&news).unwrap();
    std::fs::write(&news, &original).unwrap();
    watch.expect("the recovery", |l| {
        rebuild_line(l).contains("errors cleared")
    });
    assert!(watch.child.try_wait().unwrap().is_none(), "still running");
}

#[test]
fn a_rebuild_that_panics_is_an_internal_error_and_watch_goes_on() {
    let dir = copy_project();
    let root = dir.path();
    let fr = root.join("public/api/v1/countries/fr.json");
    // A bug, injected: any rebuild that reads a changed vat.csv panics.
    let mut watch = started(root, &[("LOCREF_PANIC_ON", "sources/tables/vat.csv")]);
    let good = std::fs::read(&fr).unwrap();
    let vat = root.join("sources/tables/vat.csv");
    let text = read(root, "sources/tables/vat.csv");
    atomic_save(
        &vat,
        text.replacen("fr,TVA", "fr,TVA (panic)", 1).as_bytes(),
    );
    let line = watch.expect("the internal error", |l| {
        rebuild_line(l).contains("internal error")
    });
    assert!(
        line.contains("injected panic on sources/tables/vat.csv"),
        "{line}"
    );
    assert!(line.contains("kept the last good output"), "{line}");
    assert_eq!(
        std::fs::read(&fr).unwrap(),
        good,
        "the last good output stays"
    );
    // Another edit builds again, with the pending vat.csv change too.
    edit_france(root, "after panic");
    let line = watch.expect("the next build", |l| {
        rebuild_line(l).contains("errors cleared")
    });
    assert!(line.contains("/api/v1/countries/fr.json"), "{line}");
    let published = read(root, "public/api/v1/countries/fr.json");
    assert!(published.contains("TVA (after panic)") && published.contains("TVA (panic)"));
    assert!(watch.child.try_wait().unwrap().is_none(), "still running");
}

#[test]
fn a_route_that_escapes_the_output_folder_is_refused_under_watch() {
    let scratch = tempfile::tempdir().unwrap();
    // The project two folders deep, so `../..` from its output folder stays inside the scratch folder.
    let root = scratch.path().join("a/b");
    crate::common::copy_dir(copy_project().path(), &root);
    let mut watch = started(&root, &[]);
    let routes = root.join("rules/routes.toml");
    let original = read(&root, "rules/routes.toml");
    let hostile =
        format!("{original}\n[[route]]\npath = \"/../../victim.txt\"\nrender = \"llms\"\n");
    atomic_save(&routes, hostile.as_bytes());
    let line = watch.expect("the refused route", |l| l.starts_with("rules/routes.toml:"));
    assert!(line.contains("`.` or `..` segment"), "{line}");
    watch.expect("the failed rebuild", |l| {
        rebuild_line(l).contains("kept the last good output")
    });
    // Removing the route again: nothing outside the output folder is written or deleted.
    std::fs::write(scratch.path().join("a/victim.txt"), b"keep me").unwrap();
    atomic_save(&routes, original.as_bytes());
    watch.expect("the recovery", |l| {
        rebuild_line(l).contains("errors cleared")
    });
    assert_eq!(
        std::fs::read(scratch.path().join("a/victim.txt")).unwrap(),
        b"keep me"
    );
    assert!(!scratch.path().join("victim.txt").exists());
}

/// Waits (at most 60 s) until the folder holds exactly `whole`; on time-out names the paths that differ.
fn wait_until_whole(
    what: &str,
    site: &std::path::Path,
    whole: &std::collections::BTreeMap<String, Vec<u8>>,
) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let now = crate::common::snapshot(site);
        if &now == whole {
            return;
        }
        if Instant::now() >= deadline {
            let differ: Vec<&String> = now
                .keys()
                .chain(whole.keys())
                .filter(|k| now.get(*k) != whole.get(*k))
                .take(10)
                .collect();
            panic!("timed out waiting until {what}; these paths differ: {differ:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Saves a fact edit and waits for its rebuild: watch handles batches in order, so once this line is
/// printed every change made before it (and the watching again that follows a repair) is done.
fn edit_france_and_wait(watch: &mut Watch, root: &std::path::Path, marker: &str) {
    edit_france(root, marker);
    // The edit's own line: a repair's line may name fr.json too, but starts with its cause.
    watch.expect("the fact edit's rebuild", |l| {
        rebuild_line(l).starts_with("changed sources/tables/countries.csv;")
    });
    // Lines printed before it (repairs of earlier changes) must not answer a later `expect`.
    watch.pending.clear();
    assert!(read(root, "public/api/v1/countries/fr.json").contains(&format!("TVA ({marker})")));
}

/// Edits one page by hand and waits for watch to put it back.
fn hand_edit_is_repaired(watch: &mut Watch, site: &std::path::Path) {
    let before = crate::common::snapshot(site);
    std::fs::write(site.join("fr/index.html"), "edited by hand").unwrap();
    watch.expect("the repair of one page", |l| {
        rebuild_line(l).contains("repaired /fr/index.html (changed outside locref)")
    });
    assert_eq!(crate::common::snapshot(site), before);
}

#[test]
fn watch_repairs_its_output_folder_when_it_is_removed_or_a_file_is_edited() {
    use crate::common::snapshot;
    let dir = copy_project();
    let root = dir.path();
    let mut watch = started(root, &[]);
    let site = root.join("public");
    let before = snapshot(&site);
    // `rm -rf public` while watch runs: its exit status is not the point (the repair may begin while
    // rm still walks the folder, and take two passes), the folder coming back whole is; and the folders
    // made again must be watched again (a new folder may get the inode of the one removed).
    let _ = Command::new("rm").arg("-rf").arg(&site).status();
    watch.expect("the repair", |l| {
        rebuild_line(l).starts_with("the output folder changed outside locref")
    });
    wait_until_whole("the folder is whole again", &site, &before);
    edit_france_and_wait(&mut watch, root, "after repair");
    hand_edit_is_repaired(&mut watch, &site);

    // A stale backup restored over the folder in place, as `cp -a backup/. public/` or rsync do: the
    // page that differs is repaired. (Removing the folder first and then `cp -a backup public` races
    // watch's own repair of the removal: when watch has made the folder again, cp copies the backup
    // *into* it as `public/backup/`, which is the user's file, not locref's to delete.)
    let whole = snapshot(&site);
    let backup = root.join("backup");
    let copied = Command::new("cp")
        .arg("-a")
        .arg(&site)
        .arg(&backup)
        .status();
    assert!(copied.unwrap().success());
    std::fs::write(backup.join("de/index.html"), "an older page").unwrap();
    let restored = Command::new("cp")
        .arg("-a")
        .arg(backup.join("."))
        .arg(&site)
        .status();
    assert!(restored.unwrap().success());
    wait_until_whole("the restored folder is repaired", &site, &whole);
    edit_france_and_wait(&mut watch, root, "after restore");
    hand_edit_is_repaired(&mut watch, &site);
    assert!(watch.child.try_wait().unwrap().is_none(), "still running");
}

/// A source edit and changes to the output folder in one burst (a `git checkout` in a project that
/// tracks its built folder): the rebuild writes what the edit changed and repairs the files changed
/// behind watch's back, in the same line.
#[test]
fn a_source_edit_and_output_changes_in_one_burst_are_both_handled() {
    let dir = copy_project();
    let root = dir.path();
    let mut watch = started(root, &[]);
    let site = root.join("public");
    let before = crate::common::snapshot(&site);
    let vat = root.join("sources/tables/vat.csv");
    let text = read(root, "sources/tables/vat.csv");
    // All three within a millisecond: one batch.
    atomic_save(
        &vat,
        text.replacen("fr,TVA", "fr,TVA (burst)", 1).as_bytes(),
    );
    std::fs::remove_file(site.join("it/index.html")).unwrap();
    std::fs::write(site.join("licence/index.md"), "defaced").unwrap();
    let line = watch.expect("the rebuild", |l| {
        rebuild_line(l).starts_with("changed sources/tables/vat.csv;")
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    let whole = |rel: &str| std::fs::read(site.join(rel)).ok().as_ref() == before.get(rel);
    while !(whole("it/index.html") && whole("licence/index.md")) {
        assert!(
            Instant::now() < deadline,
            "the deleted and the defaced output are still wrong 10 s after the burst; printed:\n{}",
            watch.seen.join("\n")
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(read(root, "public/api/v1/countries/fr.json").contains("TVA (burst)"));
    // Said, not silent: the rebuild's line, or the repair's right after it, names the files repaired.
    let said = |l: &str| l.contains("repaired") && l.contains("/it/index.html");
    if !said(&line) {
        watch.expect("the repair named", |l| said(rebuild_line(l)));
    }
    assert!(watch.child.try_wait().unwrap().is_none(), "still running");
}

/// How long a one-fact save takes to reach disk: from the atomic save until France's API file holds the
/// new text.
fn save_to_disk(root: &std::path::Path, marker: &str) -> Duration {
    let fr = root.join("public/api/v1/countries/fr.json");
    let saved = Instant::now();
    edit_france(root, marker);
    let wanted = format!("TVA ({marker})");
    loop {
        if std::fs::read_to_string(&fr).is_ok_and(|t| t.contains(&wanted)) {
            return saved.elapsed();
        }
        assert!(
            saved.elapsed() < Duration::from_secs(30),
            "{marker} never reached disk"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// A process reading the output folder in a loop (a static server, a sync tool) does not delay a
/// rebuild: the reads' access events never reach the batcher, whose quiet window they used to keep open
/// until its longest batch (1 s).
#[test]
fn a_reader_of_the_output_folder_does_not_delay_a_rebuild() {
    let dir = copy_project();
    let root = dir.path().to_path_buf();
    let mut watch = started(&root, &[]);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (stop, page) = (stop.clone(), root.join("public/de/index.html"));
        std::thread::spawn(move || {
            let mut reads = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = std::fs::read(&page);
                reads += 1;
            }
            reads
        })
    };
    let mut times = Vec::new();
    for i in 0..3 {
        times.push(save_to_disk(&root, &format!("read {i}")));
        watch.expect("the rebuild", |l| {
            rebuild_line(l).starts_with("changed sources/tables/countries.csv;")
        });
        std::thread::sleep(Duration::from_millis(200));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let reads = reader.join().unwrap();
    assert!(reads > 100, "the reader read {reads} times");
    times.sort();
    eprintln!("save to disk with a reader of the output folder: {times:?}");
    assert!(
        times[0] < Duration::from_millis(500),
        "a save reached disk after {times:?} with a reader polling the output folder"
    );
}

/// Unmounts a folder when the test ends (declared before the watch, so the watch is stopped first).
struct Unmount(std::path::PathBuf);

impl Drop for Unmount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// An output folder that is a mount point of its own (a tmpfs, a container's volume): its cache, and
/// so the spare files a session writes through, are on the parent's filesystem, where no file can be
/// exchanged or renamed into it. The first build and every edit still publish, staging beside the
/// targets on the folder's own filesystem. Needs root to mount a tmpfs; says so and passes otherwise.
#[test]
fn watch_publishes_into_an_output_folder_that_is_a_mount_point() {
    let dir = copy_project();
    let root = dir.path();
    let site = root.join("public");
    std::fs::create_dir(&site).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "tmpfs"])
        .arg(&site)
        .stderr(Stdio::null())
        .status();
    if !mounted.is_ok_and(|status| status.success()) {
        eprintln!("skipped: a tmpfs cannot be mounted here (it needs root)");
        return;
    }
    let _unmount = Unmount(site.clone());
    let mut watch = Watch::start(root);
    let first = watch.expect("the first build", |l| !rebuild_line(l).is_empty());
    assert!(
        rebuild_line(&first).starts_with("first build: "),
        "{first}\n{}",
        watch.seen.join("\n")
    );
    watch.expect("the watching line", |l| l.starts_with("watching "));
    assert!(site.join("fr/index.html").is_file());
    edit_france_and_wait(&mut watch, root, "on a mount point");
    edit_france_and_wait(&mut watch, root, "on a mount point again");
    hand_edit_is_repaired(&mut watch, &site);
}

/// The output folder replaced by a link to another folder while watch runs: its lock guards the folder
/// it claimed, not the link's target, so nothing is written there (another build may be writing it).
/// The replacement comes at the worst moment, driven by a fault point, not by timing: a rebuild has
/// checked the folder and staged every file, and waits just before putting them in place. Its files go
/// into the folder it checked (by a handle, not the path), none through the link; then watch says the
/// path leads elsewhere, and later edits write nothing there.
#[test]
fn watch_writes_nothing_through_an_output_folder_replaced_by_a_link() {
    let dir = copy_project();
    let root = dir.path();
    let signals = tempfile::tempdir().unwrap();
    let paused = signals.path().join("paused");
    let failpoint = format!("pause:put-in-place:{}", paused.display());
    let mut watch = Watch::start_with(root, &[("LOCREF_FAILPOINT", &failpoint)]);
    let wait_for_pause = |what: &str| {
        let deadline = std::time::Instant::now() + Duration::from_secs(120);
        while !paused.exists() {
            assert!(std::time::Instant::now() < deadline, "no pause at {what}");
            std::thread::sleep(Duration::from_millis(5));
        }
    };
    wait_for_pause("the initial build");
    std::fs::remove_file(&paused).unwrap();
    watch.expect("the initial build", |l| l.contains("queries re-ran"));
    watch.expect("the watching line", |l| l.starts_with("watching "));

    edit_france(root, "through a link");
    wait_for_pause("the edit's rebuild");
    let site = root.join("public");
    let elsewhere = root.join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::fs::rename(&site, root.join("public.old")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &site).unwrap();
    // From here on no publish is held (a thread lets every later pause go at once).
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let releaser = {
        let (paused, done) = (paused.clone(), done.clone());
        std::thread::spawn(move || {
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = std::fs::remove_file(&paused);
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let line = watch.expect("the edit's rebuild", |l| {
        rebuild_line(l).starts_with("changed sources/tables/countries.csv;")
    });
    assert!(!line.contains("error"), "{line}");
    assert!(
        read(root, "public.old/fr/index.html").contains("through a link"),
        "the rebuild's files went into the folder it checked"
    );
    let none_through_the_link = |watch: &Watch, when: &str| {
        assert_eq!(
            crate::common::snapshot(&elsewhere).len(),
            0,
            "nothing is written through the link ({when}); printed:\n{}",
            watch.seen.join("\n")
        );
    };
    none_through_the_link(&watch, "the paused rebuild");
    let said = watch.expect("the folder said to lead elsewhere", |l| {
        l.contains("is no longer the folder")
    });
    assert!(said.contains("elsewhere"), "{said}");
    edit_france(root, "after the link");
    let line = watch.expect("the next edit's rebuild", |l| {
        rebuild_line(l).starts_with("changed sources/tables/countries.csv;")
    });
    assert!(line.contains("is no longer the folder"), "{line}");
    std::thread::sleep(Duration::from_millis(300));
    none_through_the_link(&watch, "a later edit");
    // Another build may claim the folder the link leads to.
    let run = crate::common::locref(root, &["build", "--out", "elsewhere"], "1767225600");
    assert!(run.status.success(), "{}", crate::common::text(&run.stderr));
    assert!(watch.child.try_wait().unwrap().is_none(), "still running");
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    releaser.join().unwrap();
}

/// While the sources have errors nothing new is built, yet an output deleted or defaced behind watch's
/// back is written again at once, as the last good build made it (the line says which), and the build
/// that clears the errors finds the folder whole.
#[test]
fn an_output_changed_while_the_sources_have_errors_is_put_back_as_the_last_good_build_made_it() {
    let dir = copy_project();
    let root = dir.path();
    let mut watch = started(root, &[]);
    let site = root.join("public");
    let before = crate::common::snapshot(&site);
    let matrix = root.join("sources/tables/matrix.csv");
    let good = read(root, "sources/tables/matrix.csv");
    atomic_save(
        &matrix,
        good.replacen("de,sage-intacct,native,", "de,sage-intacct,bogus,", 1)
            .as_bytes(),
    );
    watch.expect("the failed rebuild", |l| {
        rebuild_line(l).contains("kept the last good output")
    });
    std::fs::remove_file(site.join("it/index.html")).unwrap();
    std::fs::write(site.join("licence/index.md"), "defaced").unwrap();
    let mut put_back = std::collections::BTreeSet::new();
    while put_back.len() < 2 {
        let line = watch.expect("a repair while the sources have errors", |l| {
            rebuild_line(l).starts_with("the output folder changed outside locref;")
        });
        assert!(line.contains("1 error(s)"), "{line}");
        assert!(!line.contains("not repaired"), "{line}");
        for path in ["/it/index.html", "/licence/index.md"] {
            if line.contains(path) {
                put_back.insert(path);
            }
        }
        assert!(line.contains("as the last good build made them"), "{line}");
    }
    wait_until_whole(
        "the folder is the last good build again while the errors remain",
        &site,
        &before,
    );
    atomic_save(&matrix, good.as_bytes());
    let line = watch.expect("the fix", |l| rebuild_line(l).contains("errors cleared"));
    assert!(
        !line.contains("repaired"),
        "nothing was left to repair: {line}"
    );
    assert_eq!(crate::common::snapshot(&site), before);
}

/// A process that keeps rewriting an output is not fought write for write: watch backs off, says so
/// once, and puts the file back once the process stops.
#[test]
fn watch_backs_off_from_a_process_that_keeps_changing_an_output() {
    let dir = copy_project();
    let root = dir.path();
    let mut watch = started(root, &[]);
    let site = root.join("public");
    let before = crate::common::snapshot(&site);
    let file = site.join("licence/index.md");
    let fought = Instant::now();
    let mut n = 0;
    while fought.elapsed() < Duration::from_secs(6) {
        let _ = std::fs::write(&file, format!("rewritten {n}"));
        n += 1;
        std::thread::sleep(Duration::from_millis(20));
    }
    // Every line printed meanwhile.
    while let Ok(line) = watch.lines.recv_timeout(Duration::from_millis(300)) {
        watch.seen.push(line);
    }
    let repairs = watch
        .seen
        .iter()
        .filter(|l| rebuild_line(l).starts_with("the output folder changed outside locref"))
        .count();
    let said = watch
        .seen
        .iter()
        .filter(|l| l.starts_with("watch: something keeps changing the output folder"))
        .count();
    assert_eq!(said, 1, "said once; printed:\n{}", watch.seen.join("\n"));
    assert!(
        repairs <= 30,
        "{repairs} repairs against {n} writes in 6 s; printed:\n{}",
        watch.seen.join("\n")
    );
    wait_until_whole("the file is put back after the writes stop", &site, &before);
}
