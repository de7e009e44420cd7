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

impl Watch {
    fn start(root: &std::path::Path) -> Watch {
        let mut child = Command::new(env!("CARGO_BIN_EXE_locref"))
            .args(["watch", "--out", "public"])
            .current_dir(root)
            .env("SOURCE_DATE_EPOCH", "1767225600")
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
    assert!(first.contains("wrote 292 files"), "{first}");
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
        l.starts_with("changed ")
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
        good_matrix.replacen("fr,sage-intacct,native,", "fr,sage-intacct,bogus,", 1),
    )
    .unwrap();
    watch.expect("the diagnostic", |l| {
        l.contains("sources/tables/matrix.csv:") && l.contains("bogus")
    });
    let line = watch.expect("the failed rebuild's line", |l| l.starts_with("changed "));
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
    let line = watch.expect("the recovery", |l| l.starts_with("changed "));
    assert!(
        line.contains("changed sources/tables/matrix.csv;"),
        "{line}"
    );
    assert!(!line.contains("error"), "{line}");

    // Restoring the fact text brings back the original bytes of fr.json (generated_at is pinned).
    atomic_save(&facts, original.as_bytes());
    let line = watch.expect("the rebuild after restoring", |l| l.starts_with("changed "));
    assert!(line.contains("/api/v1/countries/fr.json"), "{line}");
    assert_eq!(std::fs::read(&fr).unwrap(), good_fr);
    assert!(
        watch.child.try_wait().expect("status").is_none(),
        "locref watch is still running"
    );
}
