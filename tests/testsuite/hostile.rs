//! The hostile corpus: one fixture per malformed input a curator (or an attacker) can produce, each run
//! through the real binary against a project that was built once. Every case must end with its recorded
//! exit code and diagnostics, leave the output folder byte-identical, and write nothing outside it.
//!
//! A case is a folder under `tests/hostile/`:
//! - `overlay/<project path>`: a file that replaces (or adds) that project file;
//! - `append/<project path>`: text appended to that project file;
//! - `replace/<project path>`: pairs of lines, the start of a row of that project file (`it,workday-financial-management,`)
//!   and the row that takes its place: one claim changed in place where appending would make a duplicate;
//! - `expected`: `exit: <code>` and what `locref build` printed on stderr (with the project folder
//!   written `<project>`, today's date `<today>`, and a line of appended text written `+n`, its line within the appended text, so
//!   the fixture holds however the shipped file grows). `UPDATE_EXPECT=1 cargo test hostile` records it anew; review the diff.

use std::path::Path;
use std::process::Command;

use crate::common::{copy_dir, copy_project, locref, snapshot, text};

const EPOCH: &str = "1790000000";

fn corpus() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile")
}

/// Applies a case's overlay and appended text to the project at `root`; returns, for each appended file,
/// its path and how many lines it had before.
fn apply(case: &Path, root: &Path) -> Vec<(String, usize)> {
    if case.join("overlay").is_dir() {
        copy_dir(&case.join("overlay"), root);
    }
    for (relative, bytes) in snapshot(&case.join("replace")) {
        let target = root.join(&relative);
        let mut text =
            std::fs::read_to_string(&target).expect("a replaced file exists in the project");
        let pairs = String::from_utf8(bytes).expect("a replacement is text");
        let lines: Vec<&str> = pairs.lines().collect();
        for pair in lines.chunks(2) {
            let [start, row] = pair else {
                panic!("{relative}: a replacement is a pair of lines");
            };
            let old = text
                .lines()
                .find(|line| line.starts_with(start))
                .unwrap_or_else(|| panic!("{relative}: no row starts with `{start}`"))
                .to_string();
            text = text.replacen(&old, row, 1);
        }
        std::fs::write(&target, text).unwrap();
    }
    let append = case.join("append");
    let mut appended = Vec::new();
    for (relative, bytes) in snapshot(&append) {
        let target = root.join(&relative);
        let mut text = std::fs::read(&target).expect("an appended file exists in the project");
        appended.push((relative, text.split(|b| *b == b'\n').count() - 1));
        text.extend_from_slice(&bytes);
        std::fs::write(&target, text).unwrap();
    }
    appended
}

/// `stderr` with each diagnostic line in an appended file written relative to the appended text.
fn relative_lines(stderr: &str, appended: &[(String, usize)]) -> String {
    stderr
        .lines()
        .map(|line| {
            for (path, before) in appended {
                let Some(rest) = line.strip_prefix(&format!("{path}:")) else {
                    continue;
                };
                let Some((number, tail)) = rest.split_once(':') else {
                    continue;
                };
                if let Ok(n) = number.parse::<usize>()
                    && n > *before
                {
                    return format!("{path}:+{}:{tail}\n", n - before);
                }
            }
            format!("{line}\n")
        })
        .collect()
}

/// A copy of the shipped project, built once into `out/site`.
fn built_copy() -> tempfile::TempDir {
    let built = copy_project();
    let first = locref(built.path(), &["build", "--out", "out/site"], EPOCH);
    assert!(first.status.success(), "{}", text(&first.stderr));
    built
}

#[test]
fn every_hostile_input_gets_its_located_diagnostic_and_the_output_stays_as_it_was() {
    let mut cases: Vec<_> = std::fs::read_dir(corpus())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    assert!(cases.len() >= 20, "the corpus has {} cases", cases.len());
    // One project built once; each case runs on a copy of it, output folder included.
    let built = built_copy();
    for case in cases {
        let name = case.file_name().unwrap().to_string_lossy().into_owned();
        let project = tempfile::tempdir().unwrap();
        // The project lives two folders below the scratch root, so that a path escaping the output
        // folder by `../..` lands in a folder this test watches.
        let root = project.path().join("a/b");
        copy_dir(built.path(), &root);
        let site = root.join("out/site");
        let before = snapshot(&site);
        let around_before = snapshot(project.path());
        let appended = apply(&case, &root);
        let run = Command::new(env!("CARGO_BIN_EXE_locref"))
            .args(["build", "--out", "out/site"])
            .current_dir(&root)
            .env("SOURCE_DATE_EPOCH", EPOCH)
            .output()
            .unwrap();
        // Today's date (a check date after it is refused) is written `<today>`, so the fixture holds
        // on any day.
        let today = jiff::Timestamp::now().strftime("%Y-%m-%d").to_string();
        let stderr = String::from_utf8_lossy(&run.stderr)
            .replace(&root.display().to_string(), "<project>")
            .replace(&format!("today ({today})"), "today (<today>)");
        let stderr = relative_lines(&stderr, &appended);
        let actual = format!("exit: {}\n{stderr}", run.status.code().unwrap_or(-1));
        expect_test::expect_file![case.join("expected")].assert_eq(&actual);
        if run.status.success() {
            // An accepted input (normalized): the output is what the shipped sources give.
            assert_eq!(
                snapshot(&site),
                before,
                "{name}: accepted input changed the output"
            );
        } else {
            assert_eq!(
                snapshot(&site),
                before,
                "{name}: a failed build wrote into the output"
            );
        }
        // Nothing appeared or changed outside the project's own input files and cache.
        let around_after = snapshot(project.path());
        for (path, bytes) in &around_after {
            let inside_inputs = path.starts_with("a/b/sources/") || path.starts_with("a/b/rules/");
            if !inside_inputs
                && !path.starts_with("a/b/.locref-cache/")
                && !path.starts_with("a/b/out/.locref-cache/")
            {
                assert_eq!(
                    around_before.get(path),
                    Some(bytes),
                    "{name}: {path} was written"
                );
            }
        }
    }
}

/// `build`'s shortcut (the inputs are those of the last build: nothing to do) reads no link either: a table
/// replaced by a link to a copy of the very same bytes is refused as `check` refuses it, not passed as
/// up to date.
#[cfg(unix)]
#[test]
fn a_link_to_the_same_bytes_is_refused_by_the_up_to_date_shortcut_too() {
    let built = built_copy();
    let root = built.path();
    let site = root.join("out/site");
    let before = snapshot(&site);
    let again = locref(root, &["build", "--out", "out/site"], EPOCH);
    let said = format!("{}{}", text(&again.stdout), text(&again.stderr));
    assert!(
        again.status.success() && said.contains(": 0 written,"),
        "the same inputs again take the shortcut: {said}"
    );
    let outside = tempfile::tempdir().unwrap();
    let copy = outside.path().join("partners.csv");
    std::fs::copy(root.join("sources/tables/partners.csv"), &copy).unwrap();
    std::fs::remove_file(root.join("sources/tables/partners.csv")).unwrap();
    std::os::unix::fs::symlink(&copy, root.join("sources/tables/partners.csv")).unwrap();
    let run = locref(root, &["build", "--out", "out/site"], EPOCH);
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("sources/tables/partners.csv:1:1: error: is a symbolic link"),
        "{stderr}"
    );
    assert_eq!(
        snapshot(&site),
        before,
        "a refused build changed the output"
    );
}

/// A symbolic link under `sources/` or `rules/` is never followed: a link to a file outside the project
/// (which a pull request can add) publishes nothing of it and echoes none of it, and links that make a
/// loop of folders end the walk at once. Each is a located error; the output stays as it was.
#[cfg(unix)]
#[test]
fn symbolic_links_in_the_inputs_are_refused_and_never_followed() {
    use std::os::unix::fs::symlink;
    let built = built_copy();
    let root = built.path();
    let site = root.join("out/site");
    let before = snapshot(&site);
    // Outside the project: a secret the build must not publish or echo.
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.csv");
    std::fs::write(&secret, "SECRET-LINE-1,x\nSECRET-LINE-2,y\n").unwrap();
    std::fs::remove_file(root.join("rules/assets/site.css")).unwrap();
    symlink(&secret, root.join("rules/assets/site.css")).unwrap();
    std::fs::remove_file(root.join("sources/tables/partners.csv")).unwrap();
    symlink(&secret, root.join("sources/tables/partners.csv")).unwrap();
    // A loop of folders: 2^n paths if followed.
    symlink(".", root.join("sources/a")).unwrap();
    symlink(".", root.join("sources/b")).unwrap();
    for command in [&["build", "--out", "out/site"][..], &["check"][..]] {
        let started = std::time::Instant::now();
        let run = locref(root, command, EPOCH);
        let stderr = text(&run.stderr);
        assert_eq!(run.status.code(), Some(1), "{command:?}: {stderr}");
        for link in [
            "rules/assets/site.css",
            "sources/a",
            "sources/b",
            "sources/tables/partners.csv",
        ] {
            assert!(
                stderr.contains(&format!("{link}:1:1: error: is a symbolic link")),
                "{command:?}: {link} not reported: {stderr}"
            );
        }
        assert!(
            !stderr.contains("SECRET"),
            "{command:?} echoed the linked file: {stderr}"
        );
        // Bounded: a walk that followed the loop would not end (the bound is generous, not a timing).
        assert!(started.elapsed() < std::time::Duration::from_secs(60));
    }
    assert_eq!(
        snapshot(&site),
        before,
        "a refused build changed the output"
    );
    assert!(
        !snapshot(&site)
            .values()
            .any(|bytes| bytes.windows(6).any(|w| w == b"SECRET")),
        "the linked file was published"
    );
}
