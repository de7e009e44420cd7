//! The output folder as locref's own: outputs changed behind its back are noticed and repaired, a
//! publish that fails half way puts back what it had put in place, and what the cache folder says is
//! not trusted further than locref can check it. Each through the real binary, the output tree compared
//! before and after.

use crate::common::{copy_project, locref, replace_once, snapshot, text};

const EPOCH: &str = "1790000000";

/// A copy of the shipped project built once into `out/site`, and that build's tree.
fn built() -> (
    tempfile::TempDir,
    std::collections::BTreeMap<String, Vec<u8>>,
) {
    let project = copy_project();
    let run = locref(project.path(), &["build", "--out", "out/site"], EPOCH);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let tree = snapshot(&project.path().join("out/site"));
    (project, tree)
}

/// The site paths a build printed as `repaired`.
fn repaired(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("repaired "))
        .map(|rest| rest.split(' ').next().unwrap_or("").to_string())
        .collect()
}

#[test]
fn a_build_repairs_outputs_deleted_edited_or_restored_from_an_old_copy_and_keeps_touched_ones() {
    let (project, tree) = built();
    let root = project.path();
    let site = root.join("out/site");
    // Deleted, edited by hand, an older version restored over it, and one touched (same bytes).
    std::fs::remove_file(site.join("fr/index.html")).unwrap();
    std::fs::write(site.join("index.html"), "<p>edited by hand</p>").unwrap();
    let json = site.join("api/v1/countries/de.json");
    let old = String::from_utf8(std::fs::read(&json).unwrap())
        .unwrap()
        .replacen("\"de\"", "\"DE\"", 1);
    std::fs::write(&json, old).unwrap();
    let touched = site.join("api/v1/index.json");
    let bytes = std::fs::read(&touched).unwrap();
    std::fs::write(&touched, &bytes).unwrap();

    let run = locref(root, &["build", "--out", "out/site"], EPOCH);
    let stdout = text(&run.stdout);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let mut seen = repaired(&stdout);
    seen.sort();
    assert_eq!(
        seen,
        ["/api/v1/countries/de.json", "/fr/index.html", "/index.html"],
        "{stdout}"
    );
    assert_eq!(snapshot(&site), tree, "the folder is the build's again");
    // The touched file was compared, found right, and kept: the next build stops at the first look.
    let again = locref(root, &["build", "--out", "out/site"], EPOCH);
    let closing = text(&again.stdout);
    assert!(
        closing.contains(&format!("0 written, {} unchanged, 0 removed", tree.len())),
        "{closing}"
    );
}

/// A touch of the whole folder (every file's times changed, no byte) is kept whole, the outputs assembled
/// piece by piece (`llms-full.txt`, the flat data files, the pages made of parts) too: each is compared
/// with what the build staged. One of them edited by hand is repaired.
#[test]
fn a_touch_of_every_output_writes_nothing_and_an_edited_output_made_of_pieces_is_repaired() {
    let (project, tree) = built();
    let root = project.path();
    let site = root.join("out/site");
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(60);
    for path in tree.keys() {
        let file = std::fs::File::options()
            .write(true)
            .open(site.join(path))
            .unwrap();
        file.set_modified(later).unwrap();
    }
    let run = locref(root, &["build", "--out", "out/site"], EPOCH);
    let stdout = text(&run.stdout);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert_eq!(repaired(&stdout), Vec::<String>::new(), "{stdout}");
    assert!(
        stdout.contains(&format!("0 written, {} unchanged, 0 removed", tree.len())),
        "{stdout}"
    );
    let llms = site.join("llms-full.txt");
    let mut edited = std::fs::read(&llms).unwrap();
    let last = edited.len() - 2;
    edited[last] ^= 0x20;
    std::fs::write(&llms, &edited).unwrap();
    let run = locref(root, &["build", "--out", "out/site"], EPOCH);
    let stdout = text(&run.stdout);
    assert_eq!(repaired(&stdout), ["/llms-full.txt"], "{stdout}");
    assert_eq!(snapshot(&site), tree, "the folder is the build's again");
}

/// Puts a folder of the user's, holding a file, where the build's `/fr/index.html` goes: no build can
/// put that page in place.
fn a_folder_where_a_page_goes(site: &std::path::Path) {
    std::fs::remove_file(site.join("fr/index.html")).unwrap();
    std::fs::create_dir_all(site.join("fr/index.html/inside")).unwrap();
    std::fs::write(site.join("fr/index.html/inside/keep.txt"), "mine").unwrap();
}

#[test]
fn a_publish_that_fails_half_way_puts_back_what_it_had_put_in_place() {
    let (project, _) = built();
    let root = project.path();
    let site = root.join("out/site");
    // France's fact changes its API files (put in place first) and its page, where a folder now
    // stands: that page cannot be put in place.
    a_folder_where_a_page_goes(&site);
    let before = snapshot(&site);
    let manifest = std::fs::read(locref::outdir::manifest_path(&site)).unwrap();
    replace_once(
        root,
        "sources/tables/countries.csv",
        "fr,VAT / GST,TVA",
        "fr,VAT / GST,TVA (changed)",
    );

    let run = locref(root, &["build", "--out", "out/site"], EPOCH);
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("fr/index.html is a folder where an output file goes"),
        "{stderr}"
    );
    assert_eq!(snapshot(&site), before, "the last good build, whole");
    assert_eq!(
        std::fs::read(locref::outdir::manifest_path(&site)).unwrap(),
        manifest
    );
    // Once the folder is moved away, the build goes through and writes the changed files.
    std::fs::remove_dir_all(site.join("fr/index.html")).unwrap();
    let run = locref(root, &["build", "--out", "out/site"], EPOCH);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(
        std::fs::read_to_string(site.join("api/v1/countries/fr.json"))
            .unwrap()
            .contains("TVA (changed)")
    );
}

#[test]
fn a_clean_build_that_fails_half_way_leaves_the_last_build() {
    let (project, _) = built();
    let root = project.path();
    let site = root.join("out/site");
    // `--clean` sets every file aside before putting the new ones in place; a folder in an output's
    // place stops it there, and everything set aside comes back.
    a_folder_where_a_page_goes(&site);
    let before = snapshot(&site);
    let run = locref(
        root,
        &["build", "--out", "out/site", "--clean", "--force"],
        EPOCH,
    );
    assert_eq!(run.status.code(), Some(3), "{}", text(&run.stderr));
    assert_eq!(snapshot(&site), before);
}

#[test]
fn a_stale_output_edited_by_hand_or_named_by_a_forged_manifest_is_left_in_place() {
    let (project, _) = built();
    let root = project.path();
    let site = root.join("out/site");
    let manifest_path = locref::outdir::manifest_path(&site);
    // A file of the user's, and a manifest entry someone added for it.
    std::fs::write(site.join("notes.txt"), "my notes").unwrap();
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
    manifest["files"]["/notes.txt"] = serde_json::json!({"hash": "00", "generated_at": "x"});
    std::fs::write(&manifest_path, serde_json::to_vec(&manifest).unwrap()).unwrap();
    let run = locref(root, &["build", "--out", "out/site"], EPOCH);
    let stdout = text(&run.stdout);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(stdout.contains("kept    /notes.txt"), "{stdout}");
    assert_eq!(std::fs::read(site.join("notes.txt")).unwrap(), b"my notes");
}

#[cfg(unix)]
#[test]
fn a_fifo_in_the_cache_folder_does_not_hang_a_build() {
    let (project, tree) = built();
    let root = project.path();
    let site = root.join("out/site");
    for path in [
        locref::outdir::manifest_path(&site),
        locref::outdir::journal_path(&site),
    ] {
        let _ = std::fs::remove_file(&path);
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(made.success());
    }
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_locref"))
        .args(["build", "--out", "out/site"])
        .current_dir(root)
        .env("SOURCE_DATE_EPOCH", EPOCH)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Generous: a build here takes about a second; a FIFO that is opened blocks forever.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("the build hung on a FIFO in the cache folder");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(status.success());
    assert_eq!(snapshot(&site), tree);
}

/// An output folder mounted apart (a bind mount: the same device, another mount) takes no rename from
/// the cache beside it: files are staged beside their targets there. Mounted read-only, the build says
/// so, not "Invalid cross-device link". Needs `mount --bind` (root with the capability); says skipped
/// when it cannot.
#[cfg(target_os = "linux")]
#[test]
fn an_output_folder_mounted_apart_is_built_and_a_read_only_one_is_said_so() {
    let project = copy_project();
    let root = project.path();
    let (real, site) = (root.join("real"), root.join("site"));
    std::fs::create_dir_all(&real).unwrap();
    std::fs::create_dir_all(&site).unwrap();
    let mount = |args: &[&str]| {
        std::process::Command::new("mount")
            .args(args)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !mount(&["--bind", real.to_str().unwrap(), site.to_str().unwrap()]) {
        eprintln!("skipped: mount --bind is not permitted here");
        return;
    }
    struct Unmount(std::path::PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(site.clone());
    let run = locref(root, &["build", "--out", "site"], EPOCH);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let built = snapshot(&real);
    assert_eq!(built, snapshot(&site));
    assert!(built.contains_key("index.html"));
    assert!(mount(&["-o", "remount,ro,bind", site.to_str().unwrap()]));
    replace_once(
        root,
        "sources/tables/countries.csv",
        "fr,VAT / GST,TVA",
        "fr,VAT / GST,TVA (changed)",
    );
    let run = locref(root, &["build", "--out", "site"], EPOCH);
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("Read-only file system"), "{stderr}");
    assert!(!stderr.contains("cross-device"), "{stderr}");
    assert_eq!(snapshot(&real), built);
}
