//! Awkward input has a defined outcome: accepted and normalized (BOM, CRLF), or a diagnostic located at
//! file:line:column (non-UTF-8, empty files, duplicates, bad URLs, the honesty rule, bad rules).

use std::path::Path;

use crate::common::copy_project;

use locref::build::{diagnostics, render_site};
use locref::locref_site::SITE;
use locref::workspace::Project;

/// Diagnostics after replacing `file` with `bytes`, as displayed.
fn diagnostics_with(file: &str, bytes: &[u8]) -> Vec<String> {
    let dir = copy_project();
    std::fs::write(dir.path().join(file), bytes).unwrap();
    let project = Project::load(dir.path(), &locref::locref_site::SITE).unwrap();
    diagnostics(&SITE, &project.db)
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn shipped(file: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap()
}

#[test]
fn shipped_sources_have_no_diagnostics() {
    let project = Project::load(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        &locref::locref_site::SITE,
    )
    .unwrap();
    assert_eq!(diagnostics(&SITE, &project.db), []);
}

#[test]
fn a_bom_and_crlf_line_ends_are_normalized_to_the_same_output() {
    let dir = copy_project();
    let project = Project::load(dir.path(), &locref::locref_site::SITE).unwrap();
    let before: Vec<Vec<u8>> = render_site(&SITE, &project.db)
        .unwrap()
        .iter()
        .map(|(_, r)| r.bytes().to_vec())
        .collect();
    let path = dir.path().join("sources/tables/partners.csv");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("\u{feff}{}", text.replace('\n', "\r\n"))).unwrap();
    let project = Project::load(dir.path(), &locref::locref_site::SITE).unwrap();
    let after: Vec<Vec<u8>> = render_site(&SITE, &project.db)
        .unwrap()
        .iter()
        .map(|(_, r)| r.bytes().to_vec())
        .collect();
    assert!(before == after, "BOM and CRLF change nothing in the output");
}

#[test]
fn invalid_utf8_is_located_at_the_bad_byte() {
    let mut bytes = b"country_code,erp,name,partner_type,summary,source_urls,source_kind,last_checked\nit,odoo,Caf".to_vec();
    bytes.extend_from_slice(&[0xE9, b'\n']);
    assert_eq!(
        diagnostics_with("sources/tables/partners.csv", &bytes),
        [
            "sources/tables/partners.csv:2:12: error: invalid UTF-8 (byte 0xE9): save the file as UTF-8"
        ]
    );
}

#[test]
fn empty_and_missing_files_are_errors() {
    assert_eq!(
        diagnostics_with("sources/tables/partners.csv", b"\n  \n"),
        ["sources/tables/partners.csv:1:1: error: file is empty"]
    );
    let dir = copy_project();
    std::fs::remove_file(dir.path().join("sources/tables/local_erps.csv")).unwrap();
    let project = Project::load(dir.path(), &locref::locref_site::SITE).unwrap();
    let shown: Vec<String> = diagnostics(&SITE, &project.db)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        shown,
        ["sources/tables/local_erps.csv:1:1: error: file is missing"]
    );
}

#[test]
fn control_characters_are_rejected() {
    let text = shipped("sources/news.json");
    let at = text.find("\"title\": \"").unwrap() + 10;
    let broken = format!("{}\u{7}{}", &text[..at], &text[at..]);
    let shown = diagnostics_with("sources/news.json", broken.as_bytes());
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(
        shown[0].ends_with("error: control character U+0007 is not allowed"),
        "{shown:?}"
    );
}

#[test]
fn duplicates_unknown_ids_and_bad_urls_are_located() {
    let text = shipped("sources/tables/local_partner_flags.csv");
    let first = text.lines().nth(1).unwrap();
    let duplicated = format!("{text}{first}\n");
    let line = duplicated.lines().count();
    let shown = diagnostics_with(
        "sources/tables/local_partner_flags.csv",
        duplicated.as_bytes(),
    );
    let erp_column = first.find(',').unwrap() + 2;
    assert_eq!(
        shown,
        [format!(
            "sources/tables/local_partner_flags.csv:{line}:{erp_column}: error: duplicate partner flag id `{}` (first on line 2)",
            {
                let cells: Vec<&str> = first.split(',').collect();
                format!("{}-{}", cells[0], cells[1])
            }
        )]
    );

    let header =
        "country_code,name,segment,description,website,source,verification,last_verified\n";
    let shown = diagnostics_with(
        "sources/tables/local_erps.csv",
        format!("{header}it,Foo,SME,x,ftp://foo.example,,unverified,\n").as_bytes(),
    );
    assert_eq!(
        shown,
        [
            "sources/tables/local_erps.csv:2:14: error: `ftp://foo.example` is not an http(s) URL: it does not start with `http://` or `https://`",
            "sources/tables/local_erps.csv:2:32: error: listing `Foo` needs the URL of the source that was read; only a row that is not listed needs none",
            "sources/tables/local_erps.csv:2:44: error: listing `Foo` needs the date its source was read; only a row that is not listed needs none",
        ]
    );

    let shown = diagnostics_with(
        "sources/tables/local_erps.csv",
        format!("{header}qq,Foo,SME,x,,https://www.bmd.com/foo,secondary,2026-11-27\n").as_bytes(),
    );
    assert_eq!(
        shown,
        [
            "sources/tables/local_erps.csv:2:1: error: unknown country code `qq` (not in sources/registers/countries.csv)"
        ]
    );
}

#[test]
fn the_honesty_rule_is_enforced() {
    let header = "country_code,erp,flag,note,source,verification,last_verified\n";
    let shown = diagnostics_with(
        "sources/tables/local_partner_flags.csv",
        format!("{header}it,odoo,partner,,,secondary,\nfr,odoo,partner,,,unverified,2026-01-01\n")
            .as_bytes(),
    );
    // A flag is an answer: whatever its grade, it names its source and the day it was read.
    assert_eq!(
        shown,
        [
            "sources/tables/local_partner_flags.csv:2:18: error: flag `partner` needs the URL of the source that was read; only a row that is not listed needs none",
            "sources/tables/local_partner_flags.csv:2:29: error: flag `partner` needs the date its source was read; only a row that is not listed needs none",
            "sources/tables/local_partner_flags.csv:3:18: error: flag `partner` needs the URL of the source that was read; only a row that is not listed needs none",
        ]
    );
    // An unknown needs no source; any other answer does, a "no" included.
    let header_m = "country_code,erp,support_type,vendors,notes,erp_source,evidence,verification,last_verified,quote\n";
    let matrix = shipped("sources/tables/matrix.csv");
    let edited: String = matrix
        .lines()
        .skip(1)
        .map(|l| {
            if l.starts_with("it,workday-financial-management,unknown/unverified,") {
                "it,workday-financial-management,via provider,Pagero,,,unverified,unverified,,\n"
                    .to_string()
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    assert!(
        edited.contains("via provider,Pagero"),
        "Italy × Workday is unknown in the shipped matrix"
    );
    let line = matrix
        .lines()
        .position(|l| l.starts_with("it,workday-financial-management,"))
        .unwrap()
        + 1;
    let shown = diagnostics_with(
        "sources/tables/matrix.csv",
        format!("{header_m}{edited}").as_bytes(),
    );
    assert_eq!(shown.len(), 3, "{shown:?}");
    assert!(
        shown.iter().all(
            |d| d.starts_with(&format!("sources/tables/matrix.csv:{line}:"))
                && d.contains("matrix cell `via provider` needs")
        ),
        "{shown:?}"
    );
    // The facts table is parsed country by country: a row far down the file, in a later country's run,
    // is still located at its own line of the file: a value stripped of its source, evidence and date is
    // reported three times there.
    let text = shipped("sources/tables/countries.csv");
    let row = text
        .lines()
        .rev()
        .find(|l| l.contains(",search-extract,secondary,") && !l.contains('"'))
        .unwrap();
    let cells: Vec<&str> = row.split(',').collect();
    let unsourced = format!(
        "{},{},{},,unverified,unverified,",
        cells[0], cells[1], cells[2]
    );
    let line = text.lines().position(|l| l == row).unwrap() + 1;
    let shown = diagnostics_with(
        "sources/tables/countries.csv",
        text.replacen(row, &unsourced, 1).as_bytes(),
    );
    assert_eq!(shown.len(), 3, "{shown:?}");
    assert!(
        shown
            .iter()
            .all(|d| d.starts_with(&format!("sources/tables/countries.csv:{line}:"))),
        "{shown:?}"
    );
}

#[test]
fn bad_rules_are_located() {
    let toggles = shipped("rules/toggles.toml");
    let line_of =
        |text: &str, needle: &str| text.lines().position(|l| l.contains(needle)).unwrap() + 1;
    let broken = toggles.replacen("obligation = \"saf-t\"", "obligation = \"saft\"", 1);
    let shown = diagnostics_with("rules/toggles.toml", broken.as_bytes());
    assert_eq!(
        shown,
        [format!(
            "rules/toggles.toml:{}:14: error: unknown obligation `saft`; declare it as an [[obligation]]",
            line_of(&broken, "obligation = \"saft\"")
        )]
    );
    let broken = toggles.replacen(
        "{ when = \"applies\", value = true },",
        "{ when = \"apply\", value = true },",
        1,
    );
    let shown = diagnostics_with("rules/toggles.toml", broken.as_bytes());
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(
        shown[0].starts_with(&format!(
            "rules/toggles.toml:{}:",
            line_of(&broken, "\"apply\"")
        )),
        "{shown:?}"
    );

    let routes = shipped("rules/routes.toml");
    let shown = diagnostics_with(
        "rules/routes.toml",
        routes
            .replacen("render = \"api_news\"", "render = \"api_newz\"", 1)
            .as_bytes(),
    );
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(
        shown[0].contains("error: unknown renderer `api_newz`"),
        "{shown:?}"
    );

    let filters = shipped("rules/filters.toml");
    let shown = diagnostics_with(
        "rules/filters.toml",
        filters
            .replacen("[\"saft_required\"]", "[\"saft_requird\"]", 1)
            .as_bytes(),
    );
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(
        shown[0].contains("error: unknown toggle `saft_requird`"),
        "{shown:?}"
    );

    let shown = diagnostics_with("rules/site.toml", b"title = \"x\"\nbase_url = [\n");
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(shown[0].starts_with("rules/site.toml:"), "{shown:?}");
}

/// How one input file is damaged in the property test below.
#[derive(Debug, Clone)]
enum Damage {
    /// The file replaced by arbitrary bytes.
    Replace(Vec<u8>),
    /// Bytes inserted at a position (a fraction of the length).
    Insert(f64, Vec<u8>),
    /// A range removed (start and length as fractions of the length).
    Remove(f64, f64),
    /// The file cut at a position.
    Truncate(f64),
    /// The n-th comma-separated field removed from every line (a spreadsheet column deleted).
    DropColumn(usize),
    /// A line repeated.
    RepeatLine(f64),
    /// One byte overwritten by a byte that matters to the parsers.
    Poke(f64, u8),
}

fn damage() -> impl proptest::strategy::Strategy<Value = Damage> {
    use proptest::prelude::*;
    let fraction = 0.0..1.0f64;
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..300).prop_map(Damage::Replace),
        (fraction.clone(), prop::collection::vec(any::<u8>(), 1..40))
            .prop_map(|(at, b)| Damage::Insert(at, b)),
        (fraction.clone(), 0.0..0.3f64).prop_map(|(at, n)| Damage::Remove(at, n)),
        fraction.clone().prop_map(Damage::Truncate),
        (0usize..12).prop_map(Damage::DropColumn),
        fraction.clone().prop_map(Damage::RepeatLine),
        (
            fraction,
            prop::sample::select(b"\",\n\r\\{}[]=\0\xff\t#:'".to_vec())
        )
            .prop_map(|(at, b)| Damage::Poke(at, b)),
    ]
}

fn damaged(original: &[u8], damage: &Damage) -> Vec<u8> {
    let at = |f: f64| ((original.len() as f64) * f) as usize;
    let mut bytes = original.to_vec();
    match damage {
        Damage::Replace(b) => bytes = b.clone(),
        Damage::Insert(f, b) => {
            let i = at(*f);
            bytes.splice(i..i, b.iter().copied());
        }
        Damage::Remove(f, n) => {
            let i = at(*f);
            let end = (i + at(*n)).min(bytes.len());
            bytes.drain(i..end);
        }
        Damage::Truncate(f) => bytes.truncate(at(*f)),
        Damage::DropColumn(n) => {
            let text = String::from_utf8_lossy(original);
            bytes = text
                .lines()
                .map(|line| {
                    let mut fields: Vec<&str> = line.split(',').collect();
                    if *n < fields.len() {
                        fields.remove(*n);
                    }
                    fields.join(",") + "\n"
                })
                .collect::<String>()
                .into_bytes();
        }
        Damage::RepeatLine(f) => {
            let i = at(*f);
            let start = original[..i]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1);
            let end = original[i..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(original.len(), |p| i + p + 1);
            let line = original[start..end].to_vec();
            bytes.splice(end..end, line);
        }
        Damage::Poke(f, b) => {
            if let Some(byte) = bytes.get_mut(at(*f)) {
                *byte = *b;
            }
        }
    }
    bytes
}

/// Every input file of the project (sources, registers, rules, templates), relative to the root.
fn input_files(root: &Path) -> Vec<String> {
    let mut files: Vec<String> = crate::common::snapshot(root)
        .into_keys()
        .filter(|p| p.starts_with("sources/") || p.starts_with("rules/"))
        .collect();
    files.sort();
    files
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 96, max_shrink_iters: 64, ..Default::default() })]

    /// Whatever happens to any one input file (arbitrary bytes, a deleted column, a cut, a stray quote),
    /// the build answers with located diagnostics or a site: it never panics.
    #[test]
    fn no_damaged_input_makes_the_build_panic(file_pick in proptest::prelude::any::<proptest::sample::Index>(), damage in damage()) {
        thread_local! {
            static PROJECT: std::cell::RefCell<Option<(tempfile::TempDir, Project, Vec<String>)>> = const { std::cell::RefCell::new(None) };
        }
        PROJECT.with(|cell| {
            let mut cell = cell.borrow_mut();
            let (dir, project, files) = cell.get_or_insert_with(|| {
                let dir = copy_project();
                let project = Project::load(dir.path(), &locref::locref_site::SITE).unwrap();
                let files = input_files(dir.path());
                (dir, project, files)
            });
            let file = &files[file_pick.index(files.len())];
            let path = dir.path().join(file);
            let original = std::fs::read(&path).unwrap();
            /// Puts the file back even when the case fails, so the next case starts from the shipped files.
            struct Restore(std::path::PathBuf, Vec<u8>);
            impl Drop for Restore {
                fn drop(&mut self) {
                    let _ = std::fs::write(&self.0, &self.1);
                }
            }
            let _restore = Restore(path.clone(), original.clone());
            let bytes = damaged(&original, &damage);
            eprintln!("case: {file} damaged by {damage:?}: {:?}", String::from_utf8_lossy(&bytes));
            std::fs::write(&path, &bytes).unwrap();
            project.sync_paths(std::slice::from_ref(&path)).unwrap();
            let found = diagnostics(&SITE, &project.db);
            if found.is_empty() {
                render_site(&SITE, &project.db).expect("no diagnostics, so the site renders");
            } else {
                for d in &found {
                    assert!(d.line >= 1 && d.column >= 1, "{d}");
                    assert!(d.path.starts_with("sources/") || d.path.starts_with("rules/") || d.path.starts_with('/'), "{d}");
                }
            }
            drop(_restore);
            project.sync_paths(std::slice::from_ref(&path)).unwrap();
        });
    }
}

/// Diagnostics after appending `rows` to the shipped obligations table.
fn obligations_with(rows: &str) -> Vec<String> {
    let table = shipped("sources/tables/obligations.csv");
    diagnostics_with(
        "sources/tables/obligations.csv",
        format!("{table}{rows}").as_bytes(),
    )
}

#[test]
fn obligations_are_checked_with_located_errors() {
    let table = shipped("sources/tables/obligations.csv");
    let next = table.lines().count() + 1;
    let shown = obligations_with(
        "qq,saf-t,main,unclear,,,,,,,unverified,unverified,,nothing read settles it,\n",
    );
    assert_eq!(
        shown,
        [format!(
            "sources/tables/obligations.csv:{next}:1: error: unknown country code `qq` (not in sources/registers/countries.csv)"
        )]
    );
    let shown = obligations_with("ad,saf-t,x,enacted,2027-02-30,,,,,,unverified,unverified,,,\n");
    assert!(
        shown.contains(&format!("sources/tables/obligations.csv:{next}:20: error: `2027-02-30` is not a date: that month has no day 30")),
        "{shown:?}"
    );
    let shown = obligations_with("ad,saf-t,x,enacted,,,,,,,unverified,unverified,,,\n");
    assert!(
        shown.iter().any(
            |d| d.starts_with(&format!("sources/tables/obligations.csv:{next}:"))
                && d.contains("an `enacted` phase needs the date it applies from")
        ),
        "{shown:?}"
    );
    let shown = obligations_with("ad,saf-t,x,in-force,2030,,,,,,unverified,unverified,,,\n");
    assert!(
        shown
            .iter()
            .any(|d| d.contains("an `in-force` phase cannot apply from `2030`")),
        "{shown:?}"
    );
    // A second phase beside an `unclear` one contradicts it.
    let unclear = table
        .lines()
        .position(|l| l.starts_with("ad,saf-t,") && l.contains(",unclear,"))
        .map(|i| i + 1)
        .expect("Andorra's SAF-T is unclear in the shipped table");
    let shown = obligations_with("ad,saf-t,later,planned,2028,,,,,,unverified,unverified,,,\n");
    assert!(
        shown.contains(&format!("sources/tables/obligations.csv:{unclear}:15: error: contradictory phases: a `unclear` phase must be the only phase of `saf-t`, which has 2 here")),
        "{shown:?}"
    );
    // Two phases of one obligation from the same date for the same scope overlap.
    let shown = obligations_with(
        "de,saf-t,a,planned,2029,all companies,,,,,unverified,unverified,,,\nde,saf-t,b,planned,2029,all companies,,,,,unverified,unverified,,,\n",
    );
    assert!(
        shown.iter().any(|d| d
            .starts_with(&format!("sources/tables/obligations.csv:{}:", next + 1))
            && d.contains(
                "overlapping phases: `b` applies from the same date to the same scope as `a`"
            )),
        "{shown:?}"
    );
}

#[test]
fn a_fact_clause_that_contradicts_its_phases_is_reported_at_the_fact() {
    let text = shipped("sources/tables/countries.csv");
    let italy = text
        .lines()
        .position(|l| l.starts_with("it,E-invoicing,"))
        .unwrap()
        + 1;
    let edited = text.replacen(
        "B2B: mandatory from 2019-01-01",
        "B2B: mandatory from 2019-02-01",
        1,
    );
    let shown = diagnostics_with("sources/tables/countries.csv", edited.as_bytes());
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(
        shown[0].starts_with(&format!("sources/tables/countries.csv:{italy}:"))
            && shown[0].contains("the text says `B2B: mandatory from 2019-02-01`, but tables/obligations.csv records b2b-e-invoicing as: main in-force from 2019-01-01"),
        "{shown:?}"
    );
}

#[test]
fn a_vat_rate_in_a_fact_text_that_contradicts_vat_csv_is_reported_at_the_fact() {
    let text = shipped("sources/tables/countries.csv");
    let italy = text
        .lines()
        .position(|l| l.starts_with("it,VAT / GST,"))
        .unwrap()
        + 1;
    let edited = text.replacen(
        "IVA. Standard rate 22%; reduced rates 10% and 5%;",
        "IVA. Standard rate 23%; reduced rates 10% and 6%;",
        1,
    );
    let shown = diagnostics_with("sources/tables/countries.csv", edited.as_bytes());
    assert_eq!(shown.len(), 2, "{shown:?}");
    assert!(
        shown
            .iter()
            .all(|d| d.starts_with(&format!("sources/tables/countries.csv:{italy}:"))),
        "{shown:?}"
    );
    assert!(
        shown[0].ends_with(
            "error: the text says `Standard rate 23%`, but tables/vat.csv gives standard_rate 22"
        ) || shown[1].ends_with(
            "error: the text says `Standard rate 23%`, but tables/vat.csv gives standard_rate 22"
        ),
        "{shown:?}"
    );
    assert!(
        shown.iter().any(|d| d.ends_with(
            "error: the text says `reduced rates 10% and 6%`, but tables/vat.csv gives reduced_rates 10 5 4 (no 6%)"
        )),
        "{shown:?}"
    );
    // A rate the text leaves out is no contradiction; "no reduced rates" beside listed ones is.
    let edited = text.replacen(
        "IVA. Standard rate 22%; reduced rates 10% and 5%; super-reduced rate 4%.",
        "IVA. Standard rate 22%; no reduced rates.",
        1,
    );
    let shown = diagnostics_with("sources/tables/countries.csv", edited.as_bytes());
    assert_eq!(
        shown,
        [format!(
            "sources/tables/countries.csv:{italy}:{}: error: the text says there are no reduced rates, but tables/vat.csv gives reduced_rates 10 5 4",
            shown
                .first()
                .and_then(|d| d.split(':').nth(2))
                .unwrap_or_default()
        )]
    );
}

/// A row a million cells wide, and a table of nothing but bad rows: each is read once (the cells of a
/// row are located in one pass, a bad row is dropped as it is read), and what is shown stays short.
#[test]
fn a_row_a_million_cells_wide_and_a_table_of_bad_rows_get_short_located_errors() {
    let mut partners = shipped("sources/tables/partners.csv");
    let before = partners.lines().count();
    let columns = partners.lines().next().unwrap().split(',').count();
    partners.push('x');
    partners.push_str(&",y".repeat(1_000_000));
    partners.push('\n');
    let shown = diagnostics_with("sources/tables/partners.csv", partners.as_bytes());
    assert_eq!(
        shown,
        [format!(
            "sources/tables/partners.csv:{}:2000001: error: row has 1000001 cells, the header has {columns} columns",
            before + 1
        )]
    );
    let mut partners = shipped("sources/tables/partners.csv");
    // One cell more than the header: every row is bad.
    let bad = format!("{}\n", vec!["a"; columns + 1].join(","));
    partners.push_str(&bad.repeat(200_000));
    let shown = diagnostics_with("sources/tables/partners.csv", partners.as_bytes());
    // At most the parser's limit of errors is kept, and a count of the rest.
    assert!(shown.len() <= 1001, "{}", shown.len());
    assert!(
        shown
            .last()
            .is_some_and(|l| l.contains("more error(s) in this file from here on are not shown")),
        "{:?}",
        shown.last()
    );
}

/// A row of the shipped obligations table (the first of `country` and `obligation`), as cells.
fn obligation_row(country: &str, obligation: &str) -> Vec<String> {
    let text = shipped("sources/tables/obligations.csv");
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    reader
        .records()
        .map(|r| r.unwrap())
        .find(|r| &r[0] == country && &r[1] == obligation)
        .map(|r| r.iter().map(str::to_string).collect())
        .unwrap_or_else(|| panic!("the shipped obligations record {country} {obligation}"))
}

/// The diagnostics of the regimes table after the shipped header (and rows) plus `rows`, and the line the
/// first of them is on.
fn regimes_with(rows: &str) -> (Vec<String>, usize) {
    // The shipped table without its rows for Italy, which the rows given stand for.
    let table: String = shipped("sources/tables/regimes.csv")
        .lines()
        .filter(|l| !l.starts_with("it,"))
        .map(|l| format!("{l}\n"))
        .collect();
    let next = table.lines().count() + 1;
    let shown = diagnostics_with(
        "sources/tables/regimes.csv",
        format!("{table}{rows}").as_bytes(),
    );
    (shown, next)
}

#[test]
fn regimes_are_checked_against_the_vocabulary_the_obligations_and_the_honesty_rule() {
    // The source, evidence, grade and date of Italy's B2B phase: a source that was read.
    let phase = obligation_row("it", "b2b-e-invoicing");
    let read = format!("{},{},{},{}", phase[9], phase[10], phase[11], phase[12]);
    let vocabulary: toml::Table = toml::from_str(&shipped("rules/vocabulary.toml")).unwrap();
    let first = |set: &str| {
        vocabulary[set]
            .as_table()
            .and_then(|t| t.keys().next().cloned())
            .unwrap_or_else(|| panic!("[{set}] has a value"))
    };
    let (model, format) = (first("einvoicing_models"), first("einvoicing_formats"));
    let path = "sources/tables/regimes.csv";
    // A sourced row passes; so does an honest unknown that says what was looked at.
    let (shown, _) = regimes_with(&format!(
        "it,b2b-e-invoicing,{model},{format},,,10,,{read},,\"Italy applies a clearance model through the SdI in 2019.\"\nit,b2g-e-invoicing,,,,,,,,,unverified,,two pages read; neither says,\n"
    ));
    assert_eq!(shown, Vec::<String>::new());
    // Any answer without its source, how it was read and the date is refused at each of those cells; a
    // "no" (a signature that is not required) is an answer like any other.
    let not_required = "not-required";
    let (shown, next) = regimes_with(&format!(
        "it,b2b-e-invoicing,,,,{not_required},,,,unverified,unverified,,,\n"
    ));
    assert_eq!(shown.len(), 3, "{shown:?}");
    for (d, needs) in shown.iter().zip(["the URL", "`evidence`", "the date"]) {
        assert!(
            d.starts_with(&format!("{path}:{next}:"))
                && d.contains(&format!("regime `{not_required}` needs {needs}")),
            "{d}"
        );
    }
    // An unknown row without notes says nothing of what was looked at.
    let (shown, next) = regimes_with("it,b2b-e-invoicing,,,,,,,,,unverified,,,\n");
    assert_eq!(
        shown,
        [format!(
            "{path}:{next}:40: error: a row whose answers are all unknown says in `notes` what was looked at"
        )]
    );
    // A value outside its set, at its cell; an obligation the country's phases do not record; a
    // duplicate key.
    let (shown, next) = regimes_with(&format!(
        "it,b2b-e-invoicing,{model},{format} no-such-format,,,,,{read},,a sentence\nit,b2b-e-invoicing,,,,,,,,,unverified,,again,\n"
    ));
    let column = "it,b2b-e-invoicing,".len() + model.len() + 2;
    assert!(
        shown[0].starts_with(&format!(
            "{path}:{next}:{column}: error: `no-such-format` is not in rules/vocabulary.toml [einvoicing_formats]; expected one of: "
        )) && shown[0].contains(&format),
        "{shown:?}"
    );
    assert_eq!(
        shown[1],
        format!(
            "{path}:{}:4: error: duplicate regime row `it-b2b-e-invoicing` (first on line {next})",
            next + 1
        )
    );
    // An obligation the country's phases do not record: Italy's SAF-T rows taken out of the obligations
    // table, its regime row refers to nothing.
    let dir = copy_project();
    let obligations = shipped("sources/tables/obligations.csv");
    let kept: String = obligations
        .lines()
        .filter(|l| !l.starts_with("it,saf-t,"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(kept.len() + 1, obligations.len(), "Italy has SAF-T rows");
    std::fs::write(dir.path().join("sources/tables/obligations.csv"), kept).unwrap();
    let table = shipped("sources/tables/regimes.csv");
    let next = table.lines().count() + 1;
    std::fs::write(
        dir.path().join(path),
        format!("{table}it,saf-t,,,,,,,,,unverified,,looked at,\n"),
    )
    .unwrap();
    let project = Project::load(dir.path(), &locref::locref_site::SITE).unwrap();
    let shown: Vec<String> = diagnostics(&SITE, &project.db)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(
        shown[0].starts_with(&format!(
            "{path}:{next}:4: error: `it` has no phase of `saf-t` in sources/tables/obligations.csv; it records: "
        )),
        "{shown:?}"
    );
}

#[test]
fn the_labelled_sets_of_the_vocabulary_are_checked_where_they_stand() {
    let text = shipped("rules/vocabulary.toml");
    let edited = text.replacen(
        "[einvoicing_models]\n",
        "[einvoicing_models]\nBad_Id = \"\"\n",
        1,
    );
    let line = edited
        .lines()
        .position(|l| l.starts_with("Bad_Id"))
        .unwrap()
        + 1;
    let shown = diagnostics_with("rules/vocabulary.toml", edited.as_bytes());
    assert_eq!(
        shown,
        [
            format!(
                "rules/vocabulary.toml:{line}:1: error: einvoicing_models: `Bad_Id` needs a label, what pages show"
            ),
            format!(
                "rules/vocabulary.toml:{line}:1: error: einvoicing_models: id `Bad_Id` must be lower-case letters and digits (and `-`, `.`, `_` after the first)"
            ),
        ]
    );
}

/// One text rule for every value: a line break inside a name, a label, a title or a policy (a quoted
/// multi-line CSV cell, a TOML `"""` string) is a located error of `locref check` (exit 1, nothing
/// written), wherever the value comes from. Such a value once put a whole fake event into
/// `/ad/calendar.ics` and a rule into `_headers`.
#[test]
fn a_line_break_inside_a_name_label_title_or_policy_is_a_located_error() {
    let cases = [
        (
            "sources/registers/countries.csv",
            "ad,Andorra,Europe,no",
            "ad,\"Andorra\nEND:VEVENT\nBEGIN:VEVENT\nSUMMARY:pay at evil.example\",Europe,no",
            "sources/registers/countries.csv:2:4: error: a line break inside a value",
        ),
        (
            "rules/site.toml",
            "title = \"Localization Reference Data Service\"",
            "title = \"\"\"Localization\nBEGIN:VEVENT\"\"\"",
            "rules/site.toml:3:9: error: a line break inside a value",
        ),
        (
            "rules/toggles.toml",
            "label = \"B2B e-invoicing\"",
            "label = \"\"\"B2B\nEND:VEVENT\"\"\"",
            "rules/toggles.toml:27:9: error: a line break inside a value",
        ),
        (
            "rules/site.toml",
            "content_security_policy = \"default-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'\"",
            "content_security_policy = \"\"\"default-src 'self';\n/evil\n  X-Injected: 1\"\"\"",
            "rules/site.toml:16:27: error: a line break inside a value",
        ),
        (
            "rules/site.toml",
            "title = \"Localization Reference Data Service\"",
            "title = \"Localization\\u001bReference\"",
            "rules/site.toml:3:9: error: control character U+001B inside a value",
        ),
    ];
    for (file, from, to, expected) in cases {
        let dir = copy_project();
        let root = dir.path();
        crate::common::replace_once(root, file, from, to);
        let run = crate::common::locref(root, &["check"], "1767225600");
        let stderr = crate::common::text(&run.stderr);
        assert_eq!(run.status.code(), Some(1), "{file}: {stderr}");
        assert!(
            stderr.lines().any(|l| l.starts_with(expected)),
            "{file}: expected {expected:?} in:\n{stderr}"
        );
    }
}

/// A value is at most 64 KiB (twice the longest fact of the x100 benchmark): a runaway paste is an error
/// at its cell, not a site hundreds of megabytes larger.
#[test]
fn a_value_longer_than_64_kib_is_a_located_error() {
    let dir = copy_project();
    let root = dir.path();
    let long = "x".repeat(64 * 1024 + 1);
    crate::common::replace_once(
        root,
        "sources/registers/countries.csv",
        "ad,Andorra,Europe,no",
        &format!("ad,Andorra {long},Europe,no"),
    );
    let run = crate::common::locref(root, &["check"], "1767225600");
    let stderr = crate::common::text(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.lines().any(|l| l.starts_with(
            "sources/registers/countries.csv:2:4: error: value of 65545 bytes: a value holds at most 65536 bytes"
        )),
        "{stderr}"
    );
}

/// A malformed or out-of-range `SOURCE_DATE_EPOCH` is a usage error that names it (exit 2), never a
/// silent "now": a build meant to be reproducible would otherwise differ from the last.
#[test]
fn a_malformed_or_out_of_range_source_date_epoch_is_an_error() {
    let dir = copy_project();
    let root = dir.path();
    for bad in [
        "17672256OO",
        "-5",
        "1e9",
        " ",
        "99999999999999999",
        "253402300800",
    ] {
        let run = crate::common::locref(root, &["check"], bad);
        let stderr = crate::common::text(&run.stderr);
        assert_eq!(run.status.code(), Some(2), "{bad:?}: {stderr}");
        assert!(
            stderr.starts_with(&format!("error: SOURCE_DATE_EPOCH={bad:?} ")),
            "{bad:?}: {stderr}"
        );
    }
    let run = crate::common::locref(root, &["check"], "1767225600");
    assert!(run.status.success(), "{}", crate::common::text(&run.stderr));
}
