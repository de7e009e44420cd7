//! Helpers shared by the integration tests: a tempdir copy of the shipped project, file edits, and a
//! running dev server.
#![allow(dead_code)]

pub mod http;
pub mod releases;
pub mod scale;
pub mod served;

use locref::locref_site::SITE;
use std::path::{Path, PathBuf};

/// The 61 country codes of the service, in the register's order.
pub const COUNTRY_CODES: &str = "ad ae al ar at au ba be bg br by ca ch cn cy cz de dk ee es fi fr gb ge gr hr hu ie il in is it jp li lt lu lv mc md me mk mt mx my nl no nz pl pt ro rs sa se sg si sk tr ua us xk za";

/// The 11 ERP ids of the service, in the register's order.
pub const ERP_IDS: [&str; 11] = [
    "sap-s4hana-cloud",
    "sap-business-bydesign",
    "sap-business-one",
    "oracle-netsuite",
    "oracle-fusion-cloud-erp",
    "microsoft-dynamics-365-finance",
    "microsoft-dynamics-365-business-central",
    "workday-financial-management",
    "sage-intacct",
    "infor-cloudsuite",
    "odoo",
];

/// How many releases the shipped project records (`sources/releases/releases.csv`), the last one's
/// version and its time: read from the record, so releasing the dataset changes no test.
pub struct ShippedReleases {
    pub count: usize,
    /// How many years the releases were made in (one archive page of `/changes/` each).
    pub years: usize,
    pub last: String,
    pub last_at: String,
}

pub fn shipped_releases() -> &'static ShippedReleases {
    static RELEASES: std::sync::OnceLock<ShippedReleases> = std::sync::OnceLock::new();
    RELEASES.get_or_init(|| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("sources/releases/releases.csv");
        let rows: Vec<csv::StringRecord> = csv::Reader::from_path(path)
            .expect("the release record")
            .records()
            .map(|r| r.expect("a release row"))
            .collect();
        let last = rows.last().expect("at least one release");
        let years: std::collections::BTreeSet<&str> = rows.iter().map(|r| &r[1][..4]).collect();
        ShippedReleases {
            count: rows.len(),
            years: years.len(),
            last: last[0].to_string(),
            last_at: last[1].to_string(),
        }
    })
}

/// The site paths of the shipped project's outputs, from its route table (`rules/routes.toml` expanded
/// over the registers), so that adding an output or a release changes no test.
fn shipped_route_table() -> &'static [String] {
    static PATHS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    PATHS.get_or_init(|| {
        let project = locref::workspace::Project::load(
            Path::new(env!("CARGO_MANIFEST_DIR")),
            &locref::locref_site::SITE,
        )
        .expect("the shipped project");
        locref::routes::outputs(&project.db)
            .iter()
            .map(|output| output.path.clone())
            .collect()
    })
}

/// How many files a build of the shipped project writes: one per output of the route table.
pub fn shipped_outputs() -> usize {
    shipped_route_table().len()
}

/// How many of them are HTML pages (each page but the 404 page also has a Markdown twin).
pub fn shipped_pages() -> usize {
    shipped_route_table()
        .iter()
        .filter(|path| path.ends_with(".html"))
        .count()
}

/// The build time every test build uses, so outputs compare byte for byte.
pub const FIXED_TIME: &str = "2026-01-01T00:00:00Z";

/// [`FIXED_TIME`] as `SOURCE_DATE_EPOCH`, for builds through the binary.
pub const FIXED_EPOCH: &str = "1767225600";

/// A clean one-off build of the project at `root` into `<root>/<folder>` through the binary
/// (`locref build --clean`, at [`FIXED_TIME`]): every output by its site-relative path, or the
/// diagnostics it printed.
pub fn one_off_build(
    root: &Path,
    folder: &str,
) -> Result<std::collections::BTreeMap<String, Vec<u8>>, Vec<String>> {
    let run = locref(root, &["build", "--out", folder, "--clean"], FIXED_EPOCH);
    let stderr = text(&run.stderr);
    match run.status.code() {
        Some(0) => Ok(snapshot(&root.join(folder))),
        // Every diagnostic on a line of its own, then the count.
        Some(1) => Err(stderr
            .lines()
            .filter(|line| !line.ends_with("nothing was written"))
            .map(str::to_string)
            .collect()),
        other => panic!("the build failed ({other:?}): {stderr}"),
    }
}

/// The site of the project at `root` as `plan` builds and publishes it into `<root>/<folder>` (at
/// [`FIXED_TIME`], through the library: the plans are not a flag of the binary), every output by its
/// site-relative path.
pub fn built_with(
    root: &Path,
    folder: &str,
    mut plan: locref::build::Plan,
) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut project =
        locref::workspace::Project::load(root, &locref::locref_site::SITE).expect("load");
    project.set_build_time(FIXED_TIME);
    let out = root.join(folder);
    let mut publisher = locref::build::Profile::OneOff.publisher(Some(&out));
    plan.publish(&mut project.db, &mut publisher, FIXED_TIME)
        .expect("written")
        .expect("no diagnostics");
    snapshot(&out)
}

/// Compares two builds of one site file by file, naming the first files that differ.
pub fn assert_same_site(
    serial: &std::collections::BTreeMap<String, Vec<u8>>,
    streaming: &std::collections::BTreeMap<String, Vec<u8>>,
) {
    let paths = |site: &std::collections::BTreeMap<String, Vec<u8>>| -> Vec<String> {
        site.keys().cloned().collect()
    };
    assert_eq!(
        paths(serial),
        paths(streaming),
        "the two plans publish other files"
    );
    let differ: Vec<&String> = serial
        .iter()
        .filter(|(path, bytes)| streaming.get(*path) != Some(bytes))
        .map(|(path, _)| path)
        .take(10)
        .collect();
    assert!(
        differ.is_empty(),
        "the two plans publish other bytes in {differ:?}"
    );
}

/// Copies the shipped `sources/` and `rules/` into a fresh temporary folder (the project root).
pub fn copy_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR"));
    for sub in ["sources", "rules"] {
        copy_dir(&shipped.join(sub), &dir.path().join(sub));
    }
    dir
}

/// Copies a folder and everything in it.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create dir");
    for entry in std::fs::read_dir(from).expect("read dir") {
        let path = entry.expect("entry").path();
        let target = to.join(path.file_name().expect("name"));
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            std::fs::copy(&path, &target).expect("copy");
        }
    }
}

/// Reads a project file as text.
pub fn read(root: &Path, rel: &str) -> String {
    std::fs::read_to_string(root.join(rel)).expect("read")
}

/// The rows of a register without quoted cells (`sources/registers/*.csv`), as (column, value) maps.
pub fn register_csv_rows(
    root: &Path,
    file: &str,
) -> Vec<std::collections::BTreeMap<String, String>> {
    let text = read(root, file);
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .filter(|l| !l.is_empty())
        .map(|line| {
            assert!(
                !line.contains('"'),
                "{file}: {line} is read without quotes here"
            );
            header
                .iter()
                .zip(line.split(','))
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

/// Replaces the one line of a project file that starts with `prefix` by `line` (plain write), so a
/// test sets a row whole whatever the curators have since written in it.
pub fn replace_line(root: &Path, rel: &str, prefix: &str, line: &str) {
    let text = read(root, rel);
    let hits = text.lines().filter(|l| l.starts_with(prefix)).count();
    assert_eq!(hits, 1, "one line of {rel} must start with {prefix:?}");
    let out: Vec<&str> = text
        .lines()
        .map(|l| if l.starts_with(prefix) { line } else { l })
        .collect();
    std::fs::write(root.join(rel), out.join("\n") + "\n").expect("write");
}

/// Replaces exactly one occurrence of `from` with `to` in a project file (plain write); returns its path.
pub fn replace_once(root: &Path, rel: &str, from: &str, to: &str) -> PathBuf {
    let text = read(root, rel);
    assert_eq!(
        text.matches(from).count(),
        1,
        "{from:?} must occur once in {rel}"
    );
    let path = root.join(rel);
    std::fs::write(&path, text.replacen(from, to, 1)).expect("write");
    path
}

/// Saves `bytes` the way editors do: write a temporary file beside it, then rename it over the original.
pub fn atomic_save(path: &Path, bytes: &[u8]) {
    let tmp = path.with_file_name(format!(
        ".{}.tmp",
        path.file_name().unwrap().to_str().unwrap()
    ));
    std::fs::write(&tmp, bytes).expect("write temp");
    std::fs::rename(&tmp, path).expect("rename");
}

/// Every file under `dir` (relative path -> bytes).
pub fn snapshot(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.insert(rel, std::fs::read(&p).expect("read output"));
            }
        }
    }
    out
}

/// The bytes of the manifest of `<root>/public`, if any.
pub fn manifest_bytes(root: &Path) -> Option<Vec<u8>> {
    std::fs::read(locref::outdir::manifest_path(&root.join("public"))).ok()
}

/// Runs the `locref` binary in `project` with `SOURCE_DATE_EPOCH` set to `epoch`, so its outputs carry a
/// known build time.
pub fn locref(project: &Path, args: &[&str], epoch: &str) -> std::process::Output {
    locref_binary(
        Path::new(env!("CARGO_BIN_EXE_locref")),
        project,
        args,
        epoch,
    )
}

/// The same with another executable (a copy of locref, to test what a changed binary does).
pub fn locref_binary(
    binary: &Path,
    project: &Path,
    args: &[&str],
    epoch: &str,
) -> std::process::Output {
    std::process::Command::new(binary)
        .args(args)
        .current_dir(project)
        .env("SOURCE_DATE_EPOCH", epoch)
        .output()
        .expect("run locref")
}

/// A process's output stream as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The text of release `version`'s snapshot in the project at `root`: its whole file
/// (`sources/releases/<version>.jsonl`, the form before records), or the records its index names, put
/// end to end (`sources/README.md`, "releases/"). `None` if the release has neither.
pub fn release_snapshot(root: &Path, version: &str) -> Option<String> {
    let releases = root.join("sources/releases");
    if let Ok(text) = std::fs::read_to_string(releases.join(format!("{version}.jsonl"))) {
        return Some(text);
    }
    let index = std::fs::read_to_string(releases.join(format!("{version}.index"))).ok()?;
    let mut text = String::new();
    for line in index.lines() {
        let (_, name) = line
            .split_once(' ')
            .expect("an index line is `<code> <record>`");
        text.push_str(&read(
            root,
            &format!("sources/releases/records/{name}.jsonl"),
        ));
    }
    Some(text)
}

/// Stores release `version` whole, as a project made before `locref migrate-releases` does: its records
/// put end to end in `<version>.jsonl`, its index removed (the records stay, named by no index).
pub fn store_whole(root: &Path, version: &str) {
    let text = release_snapshot(root, version).expect("the release's snapshot");
    let releases = root.join("sources/releases");
    std::fs::write(releases.join(format!("{version}.jsonl")), text).unwrap();
    std::fs::remove_file(releases.join(format!("{version}.index"))).unwrap();
}

/// How many cells of the shipped matrix give an answer (anything but `unknown/unverified`), graded or not:
/// the cells the matrix page links to their evidence.
pub fn answered_matrix_cells() -> usize {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("sources/tables/matrix.csv");
    let mut reader = csv::Reader::from_path(path).expect("the matrix");
    let header = reader.headers().expect("a header").clone();
    let support = header
        .iter()
        .position(|h| h == "support_type")
        .expect("support_type");
    reader
        .records()
        .map(|r| r.expect("a matrix row"))
        .filter(|r| r[support] != *"unknown/unverified")
        .count()
}

/// How many cells of the shipped matrix are established: an answer other than `unknown/unverified`
/// graded `official` or `secondary` (`sources/README.md`, the honesty rule), from `tables/matrix.csv`.
pub fn established_matrix_cells() -> usize {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("sources/tables/matrix.csv");
    let mut reader = csv::Reader::from_path(path).expect("the matrix");
    let header = reader.headers().expect("a header").clone();
    let column = |name: &str| header.iter().position(|h| h == name).expect(name);
    let (support, grade) = (column("support_type"), column("verification"));
    reader
        .records()
        .map(|r| r.expect("a matrix row"))
        .filter(|r| {
            !locref::derived::UNESTABLISHED_SUPPORT.contains(&&r[support])
                && matches!(&r[grade], "official" | "secondary")
        })
        .count()
}

/// The site of the project at `root` as a watch session's first build publishes it into
/// `<root>/public` (at [`FIXED_TIME`]), every output by its site-relative path.
pub fn session_built(root: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut session = locref::session::Session::load(root, &root.join("public"), &SITE)
        .expect("load")
        .with_fixed_time(FIXED_TIME);
    let report = session.build();
    assert!(
        matches!(report.outcome, locref::session::Outcome::Built(_)),
        "{report}"
    );
    snapshot(&root.join("public"))
}
