//! The comparison page (`/compare/`): its table of every country holds a row for each country of the
//! register, and each row says what the API says (`/api/v1/regimes.json`, `/api/v1/calendar.json`,
//! `/data/matrix.json`); each country's side-by-side column is its own file, `/compare/{code}.json`,
//! saying what the same files say, keyed by the page's rows; the page stays small; the country pages link
//! to it with their code; the twin holds the same table.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

/// A value as the HTML pages escape it.
fn html_escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// The cells (`<td …>…</td>`) of a table row's HTML, in order.
fn cells(row: &str) -> Vec<&str> {
    row.split("<td")
        .skip(1)
        .map(|c| &c[..c.find("</td>").expect("a closed cell")])
        .collect()
}

/// What a country's regime records say to each question (model, formats, platforms, signature,
/// archiving), in words, each with its record's grade.
fn answers_of<'a>(records: &[&'a Value]) -> [Vec<(String, &'a str)>; 5] {
    [
        records
            .iter()
            .filter_map(|r| Some((r["model"]["label"].as_str()?.to_string(), r)))
            .map(|(t, r)| (t, r["verification"].as_str().unwrap()))
            .collect(),
        records
            .iter()
            .flat_map(|r| {
                r["formats"].as_array().into_iter().flatten().map(|f| {
                    (
                        f["label"].as_str().unwrap().to_string(),
                        r["verification"].as_str().unwrap(),
                    )
                })
            })
            .collect(),
        records
            .iter()
            .flat_map(|r| {
                r["platforms"].as_array().into_iter().flatten().map(|p| {
                    (
                        p["label"].as_str().unwrap().to_string(),
                        r["verification"].as_str().unwrap(),
                    )
                })
            })
            .collect(),
        records
            .iter()
            .filter_map(|r| Some((r["signature"]["label"].as_str()?.to_string(), r)))
            .map(|(t, r)| (t, r["verification"].as_str().unwrap()))
            .collect(),
        records
            .iter()
            .filter_map(|r| {
                let years = r["archive_years"].as_u64().map(|y| format!("{y} years"));
                let place = r["archive_location"]["label"].as_str().map(str::to_string);
                Some((years.or(place)?, r["verification"].as_str().unwrap()))
            })
            .collect(),
    ]
}

#[test]
fn the_compare_table_has_every_country_and_says_what_the_api_says() {
    let dir = crate::common::copy_project();
    let root = dir.path();
    let site = crate::common::one_off_build(root, "out").expect("the project builds");
    let text = |path: &str| String::from_utf8(site[path].clone()).unwrap();
    let json = |path: &str| -> Value { serde_json::from_str(&text(path)).unwrap() };
    let page = text("compare/index.html");

    // One row per country of the register, each linking its page.
    let register = crate::common::read(root, "sources/registers/countries.csv");
    let mut reader = csv::Reader::from_reader(register.as_bytes());
    let codes: BTreeSet<String> = reader
        .records()
        .map(|r| r.unwrap()[0].to_string())
        .collect();
    let table = &page[page.find("<table class=\"compare\">").unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    let rows: BTreeMap<String, &str> = table
        .split("<tr id=\"")
        .skip(1)
        .map(|r| {
            let code = &r[..r.find('"').unwrap()];
            (code.to_string(), &r[..r.find("</tr>").unwrap()])
        })
        .collect();
    assert_eq!(rows.keys().cloned().collect::<BTreeSet<_>>(), codes);
    for (code, row) in &rows {
        assert!(row.contains(&format!("<a href=\"/{code}/\">")), "{code}");
    }

    // Each answer of the API is in its country's cell with its grade; a question no record answers is
    // "unknown".
    let regimes = json("api/v1/regimes.json");
    let mut by_country: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
    for r in regimes["data"].as_array().unwrap() {
        by_country
            .entry(r["country"].as_str().unwrap())
            .or_default()
            .push(r);
    }
    assert!(!by_country.is_empty());
    let mut answers_checked = 0;
    let mut unknown_checked = 0;
    for (code, records) in &by_country {
        let row_cells = cells(rows[*code]);
        let said = answers_of(records);
        for (i, answers) in said.iter().enumerate() {
            let cell = row_cells[i];
            if answers.is_empty() {
                assert!(cell.contains(">unknown</a>"), "{code} question {i}: {cell}");
                unknown_checked += 1;
            }
            for (answer, grade) in answers {
                assert!(
                    cell.contains(&html_escaped(answer)),
                    "{code} question {i}: {answer} in {cell}"
                );
                assert!(cell.contains(&format!(">{grade}</span>")), "{code}: {cell}");
                answers_checked += 1;
            }
        }
    }
    assert!(answers_checked > by_country.len() && unknown_checked > 0);

    // The next dated obligation: the country's first phase of the calendar that is not past.
    let calendar = json("api/v1/calendar.json");
    let reference = {
        let site_toml: toml::Table =
            toml::from_str(&crate::common::read(root, "rules/site.toml")).unwrap();
        site_toml["reference_date"].as_str().unwrap().to_string()
    };
    let mut with_next = 0;
    for (code, row) in &rows {
        let next = calendar["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["country"] == code.as_str() && e["when"] != "past");
        let cell = cells(row)[5];
        match next {
            Some(e) => {
                with_next += 1;
                assert!(
                    cell.contains(&format!(
                        "<a href=\"/{code}/#{}\">{}</a>: {}",
                        e["id"].as_str().unwrap(),
                        e["date"].as_str().unwrap(),
                        html_escaped(e["obligation_label"].as_str().unwrap())
                    )),
                    "{code}: {cell}"
                );
            }
            None => assert!(
                cell.contains(&format!("none recorded after {reference}")),
                "{code}: {cell}"
            ),
        }
    }
    assert!(with_next > 0 && with_next < rows.len(), "{with_next}");

    // How many ERPs have established support: the country's graded cells of the matrix that are not
    // one of the types that establish nothing (the one definition of "established").
    let matrix = json("data/matrix.json");
    let erps = json("api/v1/erps.json")["data"].as_array().unwrap().len();
    for (code, row) in &rows {
        let established = matrix
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["country_code"] == code.as_str())
            .filter(|m| {
                !locref::derived::UNESTABLISHED_SUPPORT
                    .contains(&m["support_type"].as_str().unwrap())
                    && m["status"] == "verified"
            })
            .count();
        assert!(
            cells(row)[6].contains(&format!(">{established} of {erps}</a>")),
            "{code}: {}",
            cells(row)[6]
        );
    }

    // Without scripts, the choice and the side-by-side view stay hidden: the table is the page.
    assert!(page.contains("<form id=\"compare-form\" class=\"compare-pick\" action=\"/compare/\" method=\"get\" hidden>"));
    assert!(
        page.contains(
            "<section id=\"side\" class=\"side\" aria-labelledby=\"side-heading\" hidden>"
        )
    );
    assert!(page.contains("<script src=\"/assets/compare.js\" defer></script>"));

    // The page carries the table and the side-by-side view's rows, not a country's columns: those are
    // its own file, fetched by the script for the chosen countries; so the page stays under the size
    // every page is held to.
    let side = &page[page.find("<section id=\"side\"").unwrap()..];
    let side = &side[..side.find("</section>").unwrap()];
    assert!(!side.contains("<td") && !side.contains("data-c="), "{side}");
    assert!(
        page.len() < 300 * 1024,
        "the compare page is {} bytes",
        page.len()
    );
    // The rows of each side-by-side table, by their keys, in order: what each country's file keys its
    // cells by.
    let row_keys = |rows: &str| -> Vec<String> {
        let table = &side[side.find(&format!("data-rows=\"{rows}\"")).unwrap()..];
        let table = &table[..table.find("</table>").unwrap()];
        table
            .split("<tr data-key=\"")
            .skip(1)
            .map(|r| r[..r.find('"').unwrap()].to_string())
            .collect()
    };
    let keys_of = |cells: &Value| -> Vec<String> {
        cells
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["key"].as_str().unwrap().to_string())
            .collect()
    };
    let erp_ids: Vec<String> = json("api/v1/erps.json")["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(row_keys("erps"), erp_ids);
    let grade_text = |verification: &str| match verification {
        "unverified" => "unverified".to_string(),
        v => format!("verified ({v})"),
    };
    let mut phases_checked = 0;
    let mut support_checked = 0;
    // A column's links are absolute, under the base URL: they resolve against the column's own URL
    // wherever the site is published (and compare.js takes them as they are).
    let base = json("api/v1/index.json")["meta"]["docs"]
        .as_str()
        .unwrap()
        .strip_suffix("/api/")
        .unwrap()
        .to_string();
    for code in &codes {
        let column = json(&format!("compare/{code}.json"));
        assert_eq!(column["code"], code.as_str());
        assert_eq!(column["href"], format!("{base}/{code}/"));
        for rows in ["obligations", "questions", "erps"] {
            assert_eq!(keys_of(&column[rows]), row_keys(rows), "{code} {rows}");
        }

        // Each dated phase of the calendar is in its obligation's cell, in words with its date, linking
        // its row on the country page, with its grade.
        for e in calendar["data"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["country"] == code.as_str())
        {
            let cell = column["obligations"]
                .as_array()
                .unwrap()
                .iter()
                .find(|o| o["key"] == e["obligation"])
                .unwrap_or_else(|| panic!("{code}: {e}"));
            let href = format!("{base}/{code}/#{}", e["id"].as_str().unwrap());
            let phase = cell["phases"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["href"] == href.as_str())
                .unwrap_or_else(|| panic!("{code}: {href} in {cell}"));
            assert!(
                phase["words"]
                    .as_str()
                    .unwrap()
                    .contains(e["date"].as_str().unwrap()),
                "{code}: {phase}"
            );
            assert_eq!(
                phase["grade"]["text"],
                grade_text(e["verification"].as_str().unwrap()).as_str()
            );
            let sources: Vec<&Value> = phase["sources"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| &s["url"])
                .collect();
            assert_eq!(
                sources,
                e["source_urls"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .collect::<Vec<_>>()
            );
            phases_checked += 1;
        }

        // Each ERP's support is the matrix's, with a grade and its source when it is known.
        for m in matrix
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["country_code"] == code.as_str())
        {
            let cell = column["erps"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["key"] == m["erp"])
                .unwrap_or_else(|| panic!("{code}: {m}"));
            assert_eq!(cell["support"], m["support_type"], "{code}: {cell}");
            assert_eq!(
                cell["href"],
                format!("{base}/erp/{}/#{code}", m["erp"].as_str().unwrap())
            );
            if m["support_type"] == "unknown/unverified" {
                assert!(cell["grade"].is_null(), "{code}: {cell}");
            } else {
                assert_eq!(cell["grade"]["class"], m["status"], "{code}: {cell}");
                let source = m["erp_source"].as_str().unwrap_or_default();
                let urls = cell["sources"].as_array().unwrap();
                assert_eq!(urls.is_empty(), source.is_empty(), "{code}: {cell}");
                for url in urls {
                    assert!(
                        source.contains(url["url"].as_str().unwrap()),
                        "{code}: {cell}"
                    );
                }
                support_checked += 1;
            }
        }
    }
    assert!(phases_checked > codes.len() && support_checked > 0);

    // Each answer of the API is in its country's column with its grade; a question no record answers
    // has none, and says what was looked at.
    let mut column_answers = 0;
    for (code, records) in &by_country {
        let column = json(&format!("compare/{code}.json"));
        let questions = column["questions"].as_array().unwrap();
        for (i, answers) in answers_of(records).iter().enumerate() {
            let cell = &questions[i]["answers"];
            if answers.is_empty() {
                assert_eq!(cell, &Value::Array(Vec::new()), "{code} question {i}");
                assert!(!questions[i]["looked_at"].as_str().unwrap().is_empty());
            }
            for (answer, grade) in answers {
                let said = cell.as_array().unwrap().iter().find(|a| {
                    a["text"].as_str().unwrap().contains(answer.as_str())
                        && a["grade"]["text"] == grade_text(grade).as_str()
                });
                assert!(said.is_some(), "{code} question {i}: {answer} in {cell}");
                column_answers += 1;
            }
        }
    }
    assert_eq!(column_answers, answers_checked);

    // Each country page links the comparison with its own code chosen; so does its twin.
    for code in &codes {
        let link = format!("/compare/?c={code}");
        assert!(text(&format!("{code}/index.html")).contains(&format!("href=\"{link}\"")));
        assert!(text(&format!("{code}/index.md")).contains(&format!("]({link})")));
    }

    // The twin: the same table, a row per country.
    let twin = text("compare/index.md");
    let twin = &twin[twin
        .find("## Every country")
        .expect("the twin's table of every country")..];
    for code in &codes {
        assert_eq!(
            twin.matches(&format!("](/{code}/index.md) |")).count(),
            1,
            "{code}"
        );
    }
}
