//! The shipped dataset is complete and honest: every country has the core facts, the matrix covers every
//! country and ERP, reporting rows carry all ten ERP values, URLs are http(s), ids are unique, and nothing
//! claims a check it does not cite.

use locref::locref_site::SITE;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A CSV file of the project as records (column name -> cell).
fn read_csv(rel: &str) -> Vec<BTreeMap<String, String>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let mut reader = csv::Reader::from_path(&path).unwrap();
    let headers = reader.headers().unwrap().clone();
    reader
        .records()
        .map(|r| {
            headers
                .iter()
                .map(str::to_string)
                .zip(r.unwrap().iter().map(str::to_string))
                .collect()
        })
        .collect()
}

fn table(name: &str) -> Vec<BTreeMap<String, String>> {
    read_csv(&format!("sources/tables/{name}"))
}

fn register() -> Vec<BTreeMap<String, String>> {
    read_csv("sources/registers/countries.csv")
}

fn erp_ids() -> Vec<String> {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("sources/registers/erps.json"),
    )
    .unwrap();
    let erps: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    erps.iter()
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn registers_hold_the_61_countries_and_11_erps() {
    let codes: Vec<String> = register().iter().map(|r| r["code"].clone()).collect();
    assert_eq!(
        codes,
        crate::common::COUNTRY_CODES.split(' ').collect::<Vec<_>>()
    );
    assert_eq!(
        register()
            .iter()
            .filter(|r| r["eu_member"] == "yes")
            .count(),
        27
    );
    assert_eq!(erp_ids(), crate::common::ERP_IDS);
}

#[test]
fn every_country_has_the_core_facts() {
    let facts = table("countries.csv");
    let core = [
        "Currency",
        "VAT / GST",
        "E-invoicing",
        "Periodic / real-time reporting",
        "Statutory accounts / chart of accounts",
        "Tax authority",
        "ERP localization: Business Central",
        "ERP localization: NetSuite",
        "ERP localization: Odoo",
    ];
    for country in register() {
        let code = &country["code"];
        let have: BTreeSet<&str> = facts
            .iter()
            .filter(|f| &f["country_code"] == code)
            .map(|f| f["fact"].as_str())
            .collect();
        for fact in core {
            assert!(have.contains(fact), "{code} lacks `{fact}`");
        }
        assert_eq!(
            have.contains("EU ViDA"),
            country["eu_member"] == "yes",
            "{code}: EU ViDA exactly for EU members"
        );
    }
    for name in ["vat.csv", "mandates.csv"] {
        let codes: Vec<String> = table(name)
            .iter()
            .map(|r| r["country_code"].clone())
            .collect();
        assert_eq!(codes.len(), 61, "{name}: one row per country");
        assert_eq!(codes.iter().collect::<BTreeSet<_>>().len(), 61, "{name}");
    }
}

#[test]
fn the_matrix_covers_every_country_and_erp_once() {
    let matrix = table("matrix.csv");
    assert_eq!(matrix.len(), 671);
    let cells: BTreeSet<(String, String)> = matrix
        .iter()
        .map(|r| (r["country_code"].clone(), r["erp"].clone()))
        .collect();
    assert_eq!(cells.len(), 671);
    for country in register() {
        for erp in erp_ids() {
            assert!(
                cells.contains(&(country["code"].clone(), erp.clone())),
                "{} x {erp}",
                country["code"]
            );
        }
    }
}

#[test]
fn reporting_rows_carry_ten_erp_values() {
    let rows = table("reporting.csv");
    assert!(!rows.is_empty());
    let ten: Vec<String> = erp_ids()
        .into_iter()
        .filter(|e| e != "sap-business-one")
        .collect();
    assert_eq!(ten.len(), 10);
    for row in &rows {
        for erp in &ten {
            assert!(
                ["native", "add-on", "unknown"].contains(&row[erp].as_str()),
                "{row:?} {erp}"
            );
        }
    }
}

#[test]
fn urls_are_http_and_every_answer_but_unknown_cites_a_read_source() {
    let url_columns = [
        "source",
        "mandate_source",
        "erp_source",
        "erp_sources",
        "source_urls",
        "website",
    ];
    for name in [
        "countries.csv",
        "mandates.csv",
        "matrix.csv",
        "reporting.csv",
        "reporting_support.csv",
        "connectors.csv",
        "local_erps.csv",
        "local_partner_flags.csv",
        "partners.csv",
        "obligations.csv",
    ] {
        for row in table(name) {
            for column in url_columns.iter().filter(|c| row.contains_key(**c)) {
                for url in row[*column].split_whitespace() {
                    assert!(
                        url.starts_with("https://") || url.starts_with("http://"),
                        "{name}: {column} = {url}"
                    );
                    assert!(!url.contains("example."), "{name}: placeholder URL {url}");
                }
            }
            // Every answer but unknown cites a source that was read and the day it was read, whatever its
            // grade; an unknown needs neither.
            let unknown = match name {
                "countries.csv" => row["value"].starts_with("unknown/unverified"),
                "matrix.csv" => row["support_type"] == "unknown/unverified",
                "obligations.csv" => row["status"] == "unclear",
                // The mandate summaries and partners carry no grade.
                "mandates.csv" | "partners.csv" => true,
                _ => false,
            };
            if row.contains_key("verification") && !unknown {
                let date = row
                    .get("last_verified")
                    .or(row.get("source_checked"))
                    .cloned()
                    .unwrap_or_default();
                assert!(
                    !date.is_empty(),
                    "{name}: an answer without a date: {row:?}"
                );
                let cited = ["source", "erp_source", "source_urls"]
                    .iter()
                    .any(|c| row.get(*c).is_some_and(|v| !v.is_empty()));
                assert!(cited, "{name}: an answer without a source: {row:?}");
            }
        }
    }
}

#[test]
fn no_two_records_share_an_id() {
    let mut partners = BTreeSet::new();
    for row in table("partners.csv") {
        assert!(
            partners.insert((
                row["country_code"].clone(),
                row["erp"].clone(),
                row["name"].to_lowercase()
            )),
            "{row:?}"
        );
    }
    let mut flags = BTreeSet::new();
    for row in table("local_partner_flags.csv") {
        assert!(
            flags.insert((row["country_code"].clone(), row["erp"].clone())),
            "{row:?}"
        );
    }
    let mut locals = BTreeSet::new();
    for row in table("local_erps.csv") {
        assert!(
            locals.insert((row["country_code"].clone(), row["name"].to_lowercase())),
            "{row:?}"
        );
    }
    let mut facts = BTreeSet::new();
    for row in table("countries.csv") {
        assert!(
            facts.insert((row["country_code"].clone(), row["fact"].clone())),
            "{row:?}"
        );
    }
    let news: Vec<serde_json::Value> = serde_json::from_str(
        &std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("sources/news.json"))
            .unwrap(),
    )
    .unwrap();
    let ids: BTreeSet<&str> = news.iter().map(|n| n["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), news.len());
    let sponsors = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("sources/sponsors.json"),
    )
    .unwrap();
    assert_eq!(sponsors.trim(), "[]", "no sponsors are sold");
}

#[test]
fn fewer_than_two_in_five_country_facts_are_unverified() {
    let facts = table("countries.csv");
    let unverified = facts
        .iter()
        .filter(|f| f["verification"] == "unverified")
        .count();
    assert!(
        unverified * 5 < facts.len() * 2,
        "{unverified} of {} country facts are unverified",
        facts.len()
    );
}

#[test]
fn every_country_records_every_obligation_and_an_unsettled_one_says_what_was_looked_at() {
    let phases = table("obligations.csv");
    for country in register() {
        let code = &country["code"];
        for obligation in [
            "b2b-e-invoicing",
            "b2g-e-invoicing",
            "real-time-reporting",
            "saf-t",
            "audit-file",
        ] {
            let own: Vec<_> = phases
                .iter()
                .filter(|p| &p["country_code"] == code && p["obligation"] == obligation)
                .collect();
            // A toggle is null only where a phase says the obligation is unclear, and why.
            assert!(!own.is_empty(), "{code}: no phase of {obligation}");
            for phase in own.iter().filter(|p| p["status"] == "unclear") {
                assert!(
                    phase["notes"].len() > 20,
                    "{code} {obligation}: an unclear phase says what was looked at"
                );
            }
        }
    }
}

#[test]
fn every_settled_matrix_cell_cites_the_vendor_source_it_rests_on() {
    for cell in table("matrix.csv") {
        if cell["support_type"] == "unknown/unverified" {
            continue;
        }
        let at = format!("{} {}", cell["country_code"], cell["erp"]);
        assert!(
            !cell["erp_source"].is_empty(),
            "{at}: {} without a source",
            cell["support_type"]
        );
        // A graded cell carries the sentence it rests on; without one it is unverified, never established.
        if cell["verification"] != "unverified" {
            assert!(
                !cell["quote"].is_empty(),
                "{at}: graded {} without its quote",
                cell["verification"]
            );
        }
    }
}

/// Every reporting ERP cell other than `unknown` rests on exactly one row of
/// `tables/reporting_support.csv` that names its source, and an `unknown` cell on none; a graded cell
/// carries the sentence it rests on. Cells are keyed as the evidence rows name them: topic, country,
/// `report_en`, ERP.
#[test]
fn every_reporting_erp_cell_but_unknown_has_its_own_evidence() {
    let erps: Vec<String> = erp_ids()
        .into_iter()
        .filter(|e| e != "sap-business-one")
        .collect();
    let mut evidence: BTreeMap<(String, String, String, String), BTreeMap<String, String>> =
        BTreeMap::new();
    for row in table("reporting_support.csv") {
        let key = (
            row["topic"].clone(),
            row["country_code"].clone(),
            row["report_en"].clone(),
            row["erp"].clone(),
        );
        assert!(
            evidence.insert(key.clone(), row).is_none(),
            "{key:?}: two evidence rows"
        );
    }
    let mut answered = 0;
    for row in table("reporting.csv") {
        for erp in &erps {
            let key = (
                row["topic"].clone(),
                row["country_code"].clone(),
                row["report_en"].clone(),
                erp.clone(),
            );
            match (row[erp.as_str()].as_str(), evidence.remove(&key)) {
                ("unknown", None) => {}
                ("unknown", Some(_)) => panic!("{key:?}: evidence for an unknown cell"),
                (value, None) => panic!("{key:?}: `{value}` without its evidence row"),
                (_, Some(e)) => {
                    answered += 1;
                    assert!(!e["source"].is_empty(), "{key:?}: no source");
                    if e["verification"] != "unverified" {
                        assert!(!e["quote"].is_empty(), "{key:?}: graded without a quote");
                    }
                }
            }
        }
    }
    assert!(
        evidence.is_empty(),
        "evidence rows of no reporting row: {evidence:?}"
    );
    assert!(answered > 0, "the shipped table has answered cells to hold");
}

/// The README's dataset section counts what its labels say: each figure is taken from a render of the
/// shipped sources, so a data change that moves a count fails here until the README says so.
#[test]
fn the_readme_dataset_section_counts_what_a_build_publishes() {
    use serde_json::Value;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let project = locref::workspace::Project::load(root, &locref::locref_site::SITE).unwrap();
    let site: BTreeMap<String, Vec<u8>> = locref::build::render_site(&SITE, &project.db)
        .unwrap()
        .iter()
        .map(|(path, r)| (path.clone(), r.bytes().to_vec()))
        .collect();
    let json = |path: &str| -> Value { serde_json::from_slice(&site[path]).unwrap() };
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let section = &readme[readme.find("## The dataset\n").unwrap()..];
    let section = &section[..section.find("### How a fact is verified").unwrap()];
    let row = |label: &str| -> String {
        section
            .lines()
            .find(|l| l.starts_with(&format!("| {label} |")))
            .unwrap_or_else(|| panic!("no README row {label}"))
            .to_string()
    };
    let count =
        |items: &[&Value], key: &str, value: &str| items.iter().filter(|i| i[key] == value).count();

    let facts = json("/api/v1/facts.json");
    let country_facts: Vec<&Value> = facts["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["erp"].is_null())
        .collect();
    let (official, secondary, unverified) = (
        count(&country_facts, "verification", "official"),
        count(&country_facts, "verification", "secondary"),
        count(&country_facts, "verification", "unverified"),
    );
    assert_eq!(
        row("country facts (`facts.json`, `erp` null)"),
        format!(
            "| country facts (`facts.json`, `erp` null) | {} | {} ({official} official, {secondary} secondary) | {unverified} ({:.1} %) |",
            country_facts.len(),
            official + secondary,
            100.0 * unverified as f64 / country_facts.len() as f64
        )
    );

    let matrix = json("/data/matrix.json");
    let cells: Vec<&Value> = matrix.as_array().unwrap().iter().collect();
    // The established cells by support type (they add up to the established count), then the answers
    // given without a quote (shown as unverified) and the unknowns.
    let established: Vec<&Value> = cells
        .iter()
        .copied()
        .filter(|c| c["status"] == "verified")
        .collect();
    let support = |t: &str| count(&established, "support_type", t);
    let unknown = count(&cells, "support_type", "unknown/unverified");
    assert_eq!(
        row("country × ERP matrix cells (`data/matrix.*`)"),
        format!(
            "| country × ERP matrix cells (`data/matrix.*`) | {} | {} ({} native, {} native + access point, {} add-on, {} via provider, {} roadmap) | {} answers without a quote, {unknown} `unknown/unverified` |",
            cells.len(),
            established.len(),
            support("native"),
            support("native + access point"),
            support("add-on"),
            support("via provider"),
            support("roadmap"),
            cells.len() - established.len() - unknown,
        )
    );
    for (label, path) in [
        (
            "reporting rows (`data/reporting.*`)",
            "/data/reporting.json",
        ),
        ("local ERPs (`data/local_erps.*`)", "/data/local_erps.json"),
    ] {
        let rows = json(path);
        let rows: Vec<&Value> = rows.as_array().unwrap().iter().collect();
        assert_eq!(
            row(label),
            format!(
                "| {label} | {} | {} | {} |",
                rows.len(),
                count(&rows, "status", "verified"),
                count(&rows, "status", "unverified")
            )
        );
    }
    // The reporting rows' ERP cells, each graded by its own evidence (the API's reporting facts say each
    // answered cell's grade in `details`).
    let mut cells: BTreeMap<&str, usize> = BTreeMap::new();
    for fact in facts["data"].as_array().unwrap() {
        if fact["topic"] != "vat_reporting" && fact["topic"] != "saft" {
            continue;
        }
        for (key, value) in fact["details"].as_object().unwrap() {
            if key.starts_with("erp_verification.") {
                *cells.entry(value.as_str().unwrap()).or_default() += 1;
            }
        }
    }
    let grade = |g: &str| cells.get(g).copied().unwrap_or(0);
    assert_eq!(
        row("reporting ERP cells (`tables/reporting_support.csv`)"),
        format!(
            "| reporting ERP cells (`tables/reporting_support.csv`) | {} | {} ({} official, {} secondary) | {} answers without a quote |",
            cells.values().sum::<usize>(),
            grade("official") + grade("secondary"),
            grade("official"),
            grade("secondary"),
            grade("unverified"),
        )
    );
    assert_eq!(
        cells.values().sum::<usize>(),
        table("reporting_support.csv").len(),
        "every evidence row is one answered cell"
    );
    // The listings counted in one sentence.
    let also = format!(
        "Also {} connector routes, {} partner flags, {} partners, {} news items and {} sponsors.",
        json("/data/connectors.json").as_array().unwrap().len(),
        json("/api/v1/partner-flags.json")["meta"]["count"],
        json("/api/v1/partners.json")["meta"]["count"],
        json("/api/v1/news.json")["meta"]["count"],
        match json("/api/v1/sponsors.json")["meta"]["count"]
            .as_u64()
            .unwrap()
        {
            0 => "no".to_string(),
            n => n.to_string(),
        }
    );
    assert!(section.contains(&also), "{also}");
    // The register and the quoted answers, counted from the sources.
    let quoted: usize = [
        "obligations.csv",
        "matrix.csv",
        "reporting_support.csv",
        "regimes.csv",
        "vat.csv",
    ]
    .iter()
    .map(|t| table(t).iter().filter(|r| !r["quote"].is_empty()).count())
    .sum();
    let register = read_csv("sources/registers/publishers.csv").len();
    let cited = format!(
        "the {register} rows of `sources/registers/publishers.csv`; {quoted} answers (phases, matrix cells, reporting ERP cells,\nregimes, VAT rows) carry the sentence"
    );
    assert!(section.contains(&cited), "{cited}");
    assert_eq!(
        row("dated obligation phases (`tables/obligations.csv`)"),
        format!(
            "| dated obligation phases (`tables/obligations.csv`) | {} rows | | |",
            table("obligations.csv").len()
        )
    );
    assert_eq!(
        row("calendar entries (`calendar.json`, `calendar.ics`)"),
        format!(
            "| calendar entries (`calendar.json`, `calendar.ics`) | {} | | |",
            json("/api/v1/calendar.json")["meta"]["count"]
        )
    );

    let index = json("/api/v1/index.json");
    for (toggle, counts) in index["meta"]["toggle_coverage"].as_object().unwrap() {
        assert_eq!(
            row(&format!("`{toggle}`")),
            format!(
                "| `{toggle}` | {} | {} | {} |",
                counts["true"], counts["false"], counts["null"]
            )
        );
    }

    let releases = json("/api/v1/releases.json");
    let releases = releases["data"].as_array().unwrap();
    let changes = json("/api/v1/changes.json")["meta"]["count"].clone();
    let with_commas = |n: u64| {
        let s = n.to_string();
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            if i > 0 && (s.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    };
    let release_line = format!(
        "Releases: {} (`{}` to `{}`, {} changes between them)",
        releases.len(),
        releases.last().unwrap()["version"].as_str().unwrap(),
        releases[0]["version"].as_str().unwrap(),
        with_commas(changes.as_u64().unwrap())
    );
    assert!(section.contains(&release_line), "{release_line}");
    assert!(section.contains(&format!(
        "(release `{}`)",
        releases[0]["version"].as_str().unwrap()
    )));
}

/// An ERP none of whose matrix cells is known says what was searched and found, on the matrix page and
/// its own page (and their twins), instead of a column of dashes; an ERP with a known cell does not; and
/// `check` refuses a whole unknown column that records no search, at the ERP's id in the register.
#[test]
fn a_whole_unknown_erp_column_says_what_was_searched() {
    use crate::common::{copy_project, locref, read, text};
    let register: serde_json::Value = serde_json::from_str(&read(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        "sources/registers/erps.json",
    ))
    .unwrap();
    let known: BTreeSet<String> = table("matrix.csv")
        .into_iter()
        .filter(|r| r["support_type"] != "unknown/unverified")
        .map(|r| r["erp"].clone())
        .collect();
    let dir = copy_project();
    let root = dir.path();
    let run = locref(root, &["build", "--out", "public"], "4070908800");
    assert!(run.status.success(), "{}", text(&run.stderr));
    let matrix = read(root, "public/e-invoicing/index.html");
    let escape = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
            .replace('\'', "&#39;")
    };
    let mut searched = 0;
    for erp in register.as_array().unwrap() {
        let id = erp["id"].as_str().unwrap();
        let page = read(root, &format!("public/erp/{id}/index.html"));
        let twin = read(root, &format!("public/erp/{id}/index.md"));
        let search = &erp["support_search"];
        if known.contains(id) {
            assert!(!matrix.contains(&format!("id=\"searched-{id}\"")), "{id}");
            assert!(!page.contains("id=\"what-was-searched\""), "{id}");
            continue;
        }
        searched += 1;
        let (on, found) = (
            search["searched_on"].as_str().unwrap(),
            search["found"].as_str().unwrap(),
        );
        assert!(matrix.contains(&format!("id=\"searched-{id}\"")), "{id}");
        assert!(
            matrix.contains(&format!("searched on {on} state nothing")),
            "{id}"
        );
        let note = &page[page.find("id=\"what-was-searched\"").expect(id)..];
        assert!(note.contains(&format!("Searched on {on}: ")), "{id}");
        assert!(note.contains(&escape(found)), "{id}");
        assert!(twin.contains(&format!("Searched on {on}: ")), "{id}");
    }
    assert!(
        searched > 0,
        "the shipped matrix has a whole unknown column to hold"
    );

    // Without its search record, `check` names the ERP where the register has it.
    let mut edited = register.clone();
    let id = edited
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find_map(|e| {
            e.as_object_mut()
                .unwrap()
                .remove("support_search")
                .map(|_| e["id"].as_str().unwrap().to_string())
        })
        .unwrap();
    let json = serde_json::to_string_pretty(&edited).unwrap();
    std::fs::write(root.join("sources/registers/erps.json"), &json).unwrap();
    let at = json.find(&format!("\"{id}\"")).unwrap();
    let line = json[..at].matches('\n').count() + 1;
    let column = at - json[..at].rfind('\n').map_or(0, |n| n + 1) + 1;
    let run = locref(root, &["check"], "4070908800");
    assert_eq!(run.status.code(), Some(1));
    let stderr = text(&run.stderr);
    assert!(
        stderr.contains(&format!(
            "sources/registers/erps.json:{line}:{column}: error: every matrix cell of `{id}` is unknown/unverified"
        )),
        "{stderr}"
    );
}

/// The site as a build of the shipped sources renders it (in memory): every output by its path.
fn rendered_site() -> BTreeMap<String, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let project = locref::workspace::Project::load(root, &locref::locref_site::SITE).unwrap();
    locref::build::render_site(&SITE, &project.db)
        .unwrap()
        .iter()
        .filter_map(|(path, r)| Some((path.clone(), String::from_utf8(r.bytes().to_vec()).ok()?)))
        .collect()
}

/// The text of a piece of HTML as a reader reads it: tags dropped, the usual entities decoded.
fn html_text(html: &str) -> String {
    let tags = regex::Regex::new(r"<[^>]*>").unwrap();
    tags.replace_all(html, " ")
        .replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
}

/// The dates of a text a reader reads as a day or a month (`2026-04-01`, `2027-07`); a year alone is
/// left out, as it is also a number in prose ("2024 gross sales").
fn dates_in(text: &str) -> Vec<String> {
    let date = regex::Regex::new(r"\b\d{4}-\d{2}(-\d{2})?\b").unwrap();
    date.find_iter(text)
        .map(|m| m.as_str().to_string())
        .collect()
}

/// The element that starts at `at` (`<tr …`, `<a …`), up to its end tag (these do not nest in the
/// pages).
fn element_at<'a>(html: &'a str, at: usize, name: &str) -> &'a str {
    let end = html[at..]
        .find(&format!("</{name}>"))
        .map_or(html.len(), |e| at + e);
    &html[at..end]
}

/// The text of a row's first cell of class `date` or `answer`, without its grade (a check date).
fn row_date_cell(row: &str) -> Option<String> {
    let at = row
        .find("<td class=\"date\"")
        .or_else(|| row.find("<td class=\"answer\""))?;
    let cell = element_at(row, at, "td");
    let cell = cell.split("<span class=\"grade\"").next().unwrap();
    Some(html_text(cell))
}

/// One answer, one date: wherever a page, the feeds or a calendar states the date of an obligation
/// phase (its row on the readiness board, an ERP's upcoming obligations, its country page and the other
/// phases it links, the calendar page, the home page's timeline, `calendar.ics` and each country's,
/// `calendar.json`), it states the date `tables/obligations.csv` records for it, and no other.
#[test]
fn every_place_that_dates_an_obligation_phase_gives_the_date_its_row_records() {
    let site = rendered_site();
    // Phase id -> its date as recorded (a day or a month: a year alone is not told from prose).
    let phases: BTreeMap<String, String> = table("obligations.csv")
        .iter()
        .filter(|r| r["applies_from"].len() >= 7)
        .map(|r| {
            (
                format!("{}-{}-{}", r["country_code"], r["obligation"], r["phase"]),
                r["applies_from"].clone(),
            )
        })
        .collect();
    assert!(!phases.is_empty());
    // Phase id -> (where, the dates stated there).
    let mut stated: BTreeMap<&str, Vec<(String, Vec<String>)>> = BTreeMap::new();
    let phase_ref = regex::Regex::new(r#"(id|href)="(/[a-z]{2}/)?#?([a-z0-9-]+)""#).unwrap();
    for (path, body) in site.iter().filter(|(p, _)| p.ends_with(".html")) {
        for m in phase_ref.captures_iter(body) {
            let id = m.get(3).unwrap().as_str();
            let Some((id, _)) = phases.get_key_value(id) else {
                continue;
            };
            let whole = m.get(0).unwrap();
            let tag_start = body[..whole.start()].rfind('<').unwrap();
            let tag = &body[tag_start..whole.start()];
            let text = if tag.starts_with("<tr") && &m[1] == "id" {
                // The phase's own row: its date cell.
                row_date_cell(element_at(body, tag_start, "tr"))
            } else if tag.starts_with("<a") && &m[1] == "href" {
                // A link to the phase: what the link says, or (the link heading a row, as on the
                // calendar) that row's date cell.
                let link = html_text(element_at(body, tag_start, "a"));
                let row_start = body[..tag_start].rfind("<tr");
                let heads_row = row_start.is_some_and(|r| {
                    let between = &body[r..tag_start];
                    !between.contains("</tr>")
                        && between.contains("<th scope=\"row\">")
                        && !between.contains("</th>")
                });
                if dates_in(&link).is_empty() && heads_row {
                    row_date_cell(element_at(body, row_start.unwrap(), "tr"))
                } else {
                    Some(link)
                }
            } else {
                None
            };
            if let Some(text) = text.filter(|t| !dates_in(t).is_empty()) {
                stated
                    .entry(id.as_str())
                    .or_default()
                    .push((path.clone(), dates_in(&text)));
            }
        }
    }
    // The calendars: each event's start, by its UID.
    let unfolded = |ics: &str| ics.replace("\r\n ", "").replace("\r\n", "\n");
    for (path, body) in site.iter().filter(|(p, _)| p.ends_with(".ics")) {
        for event in unfolded(body).split("BEGIN:VEVENT").skip(1) {
            let field = |name: &str| {
                event
                    .lines()
                    .find_map(|l| l.strip_prefix(name))
                    .map(str::to_string)
            };
            let uid = field("UID:").unwrap();
            let id = uid.split('@').next().unwrap();
            let Some((id, _)) = phases.get_key_value(id) else {
                continue;
            };
            let start = field("DTSTART;VALUE=DATE:")
                .or_else(|| field("DTSTART:"))
                .unwrap();
            let start = format!("{}-{}-{}", &start[..4], &start[4..6], &start[6..8]);
            stated
                .entry(id.as_str())
                .or_default()
                .push((format!("{path} DTSTART"), vec![start]));
            // The summary and the description say the same date, if any.
            for name in ["SUMMARY:", "DESCRIPTION:"] {
                let said = field(name).unwrap_or_default();
                let said = said.split("\\n").next().unwrap_or_default().to_string();
                if !dates_in(&said).is_empty() {
                    stated
                        .entry(id.as_str())
                        .or_default()
                        .push((format!("{path} {name}"), dates_in(&said)));
                }
            }
        }
    }
    let calendar: serde_json::Value = serde_json::from_str(&site["/api/v1/calendar.json"]).unwrap();
    for entry in calendar["data"].as_array().unwrap() {
        if let Some((id, _)) = phases.get_key_value(entry["id"].as_str().unwrap()) {
            stated.entry(id.as_str()).or_default().push((
                "/api/v1/calendar.json".into(),
                vec![entry["date"].as_str().unwrap().to_string()],
            ));
        }
    }
    let mut disagree = Vec::new();
    for (id, places) in &stated {
        let recorded = &phases[*id];
        for (place, dates) in places {
            // A month is shown as its month; a day as its day: either way the text the row records.
            // A month stands for its whole span: a day of it is no other date (an all-day event
            // starts on its first; a country's next changes list its first day, when the answer
            // becomes unknown, and its last, when it is in force).
            let day_of_month = |d: &String| {
                recorded.len() == 7 && d.len() == 10 && d.starts_with(recorded.as_str())
            };
            if dates.iter().any(|d| d != recorded && !day_of_month(d)) {
                disagree.push(format!("{id} ({recorded}): {place} says {dates:?}"));
            }
        }
    }
    assert!(disagree.is_empty(), "{}", disagree.join("\n"));
    // Every dated phase is dated somewhere (the calendars at least), and where a page dates it, on
    // more than one kind of place: the test reads the places it claims to.
    for id in phases.keys() {
        let places = stated.get(id.as_str()).map_or(&[][..], |p| p.as_slice());
        assert!(
            places.iter().any(|(p, _)| p == "/api/v1/calendar.json")
                && places.iter().any(|(p, _)| p.starts_with("/calendar.ics"))
                && places.iter().any(|(p, _)| p.ends_with("index.html")),
            "{id}: {places:?}"
        );
    }
    for page in [
        "/readiness/index.html",
        "/calendar/index.html",
        "/index.html",
    ] {
        assert!(
            stated.values().flatten().any(|(p, _)| p == page),
            "{page} dates no phase the test found"
        );
    }
}

/// The ids the data files carry where pages show words: obligation ids, phase ids and slugs, status ids,
/// ERP ids and the ids of the vocabulary's labelled sets, each of more than one word (a one-word id such
/// as `odoo` or `ubl` is also a word).
fn slugs() -> BTreeSet<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out: BTreeSet<String> = BTreeSet::new();
    for r in table("obligations.csv") {
        out.insert(r["obligation"].clone());
        out.insert(r["status"].clone());
        out.insert(format!(
            "{}-{}-{}",
            r["country_code"], r["obligation"], r["phase"]
        ));
    }
    out.extend(erp_ids());
    let vocabulary: toml::Table =
        toml::from_str(&std::fs::read_to_string(root.join("rules/vocabulary.toml")).unwrap())
            .unwrap();
    for set in [
        "einvoicing_models",
        "einvoicing_formats",
        "einvoicing_platforms",
        "signature_answers",
        "archive_locations",
    ] {
        // An id its label says as it is ("post-audit" of "Post-audit only …") is a word, not a slug.
        out.extend(
            vocabulary[set]
                .as_table()
                .unwrap()
                .iter()
                .filter(|(id, label)| !label.as_str().unwrap().to_lowercase().contains(id.as_str()))
                .map(|(id, _)| id.clone()),
        );
    }
    out.retain(|s| s.contains('-'));
    out
}

/// The first slug a reader's text says, with a few words around it.
fn slug_in(text: &str, slugs: &BTreeSet<String>) -> Option<String> {
    // URLs, anchors (`#saf-t-<code>-<n>`) and code (`b2b-e-invoicing`, written as code where a text
    // names an id) are addresses, not words.
    let urls = regex::Regex::new(r"(https?://|/|#)[^\s)\]]*|`[^`]*`").unwrap();
    let text = urls.replace_all(text, " ");
    let word = regex::Regex::new(r"[a-z0-9]+(-[a-z0-9]+)+").unwrap();
    // A file's name (`real-time-reporting.json`) is not a slug either.
    let file = |end: usize| {
        let rest = &text[end..];
        rest.starts_with('.') && rest[1..].starts_with(|c: char| c.is_ascii_lowercase())
    };
    word.find_iter(&text)
        .find(|w| slugs.contains(w.as_str()) && !file(w.end()))
        .map(|w| {
            let (start, end) = (w.start().saturating_sub(60), (w.end() + 60).min(text.len()));
            let (start, end) = (
                (0..=start)
                    .rev()
                    .find(|&i| text.is_char_boundary(i))
                    .unwrap(),
                (end..=text.len())
                    .find(|&i| text.is_char_boundary(i))
                    .unwrap(),
            );
            format!("`{}` in “{}”", w.as_str(), &text[start..end])
        })
}

/// No slug in any reader-facing text: the pages (their text, not their code samples or attributes),
/// the Markdown twins (not their link targets or code), the feeds' titles and contents, the calendars'
/// summaries, descriptions and categories, and the labels of the API (`label`, `*_label`, `sentence`).
#[test]
fn no_slug_reaches_a_page_a_twin_a_feed_a_calendar_or_an_api_label() {
    let site = rendered_site();
    let slugs = slugs();
    assert!(slugs.contains("b2b-e-invoicing") && slugs.contains("in-force"));
    let code = regex::Regex::new(
        r"(?s)<(script|style|code|pre|svg:style)\b.*?</(script|style|code|pre|svg:style)>",
    )
    .unwrap();
    let md_code = regex::Regex::new(r"(?s)```.*?```|`[^`]*`|\]\([^)]*\)").unwrap();
    let mut found = Vec::new();
    let mut read = 0;
    // The API's documentation lists the identifiers as the values a path or a field takes; llms.txt
    // and llms-full.txt are made of the twins (each read here) and that documentation.
    let documents_ids = |path: &str| path.starts_with("/api/index.") || path.starts_with("/llms");
    for (path, body) in site.iter().filter(|(p, _)| !documents_ids(p)) {
        let text = if path.ends_with(".html") || path.ends_with(".xml") {
            html_text(&code.replace_all(body, " "))
        } else if path.ends_with(".md") || path.ends_with(".txt") {
            md_code.replace_all(body, " ").into_owned()
        } else if path.ends_with(".ics") {
            body.replace("\r\n ", "")
                .lines()
                .filter(|l| {
                    ["SUMMARY:", "DESCRIPTION:", "CATEGORIES:"]
                        .iter()
                        .any(|f| l.starts_with(f))
                })
                .collect::<Vec<_>>()
                .join("\n")
        } else if path.ends_with(".json") && path.starts_with("/api/") {
            let value: serde_json::Value = serde_json::from_str(body).unwrap();
            let mut labels = Vec::new();
            collect_labels(&value, &mut labels);
            labels.join("\n")
        } else {
            continue;
        };
        read += 1;
        if let Some(slug) = slug_in(&text, &slugs) {
            found.push(format!("{path}: {slug}"));
        }
    }
    assert!(read > 100);
    assert!(
        found.is_empty(),
        "{} outputs:\n{}",
        found.len(),
        found.join("\n")
    );
}

/// The strings a reader reads in an API body: every `label`, `*_label` and `sentence` member.
fn collect_labels(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, v) in map {
                if (key == "label" || key.ends_with("_label") || key == "sentence")
                    && let Some(s) = v.as_str()
                {
                    out.push(s.to_string());
                }
                collect_labels(v, out);
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| collect_labels(v, out)),
        _ => {}
    }
}
