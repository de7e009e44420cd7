//! The search index (`/search-index.json`) as the search box reads it: every country found by its code
//! and by the other names of `sources/registers/country_aliases.csv`, each name leading to a built page,
//! the names before the facts (the box reads the index as it arrives), each phase of an obligation found
//! by its scope; and the aliases register checked as the other registers are.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::Value;

use crate::common::copy_project;
use locref::build::diagnostics;
use locref::locref_site::SITE;
use locref::workspace::Project;

fn build(root: &Path) -> BTreeMap<String, Vec<u8>> {
    crate::common::session_built(root)
}

fn index(files: &BTreeMap<String, Vec<u8>>) -> Vec<Value> {
    let index: Value = serde_json::from_slice(&files["search-index.json"]).unwrap();
    assert_eq!(index["version"], 2);
    index["items"].as_array().unwrap().clone()
}

#[test]
fn every_country_is_found_by_its_code_and_aliases_and_each_leads_to_its_built_page() {
    let dir = copy_project();
    let files = build(dir.path());
    let items = index(&files);
    let register = crate::common::register_csv_rows(dir.path(), "sources/registers/countries.csv");
    let aliases =
        crate::common::register_csv_rows(dir.path(), "sources/registers/country_aliases.csv");
    assert!(!aliases.is_empty());
    let countries: BTreeMap<&str, &Value> = items
        .iter()
        .filter(|i| i["k"] == "country")
        .map(|i| (i["u"].as_str().unwrap(), i))
        .collect();
    assert_eq!(countries.len(), register.len());
    let mut named = BTreeSet::new();
    for row in &register {
        let code = row["code"].as_str();
        let item = countries
            .get(format!("{code}/").as_str())
            .unwrap_or_else(|| panic!("{code}: no country item"));
        assert_eq!(item["t"], row["name"].as_str());
        let names: Vec<&str> = item["a"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap())
            .collect();
        // Its code first, in capitals (`pl` and `PL` both find Poland: the search folds case), then its
        // aliases in the register's order.
        let expected: Vec<String> = std::iter::once(code.to_uppercase())
            .chain(
                aliases
                    .iter()
                    .filter(|a| a["code"] == code)
                    .map(|a| a["alias"].clone()),
            )
            .collect();
        assert_eq!(names, expected, "{code}");
        assert!(files.contains_key(&format!("{code}/index.html")), "{code}");
        named.extend(names.iter().map(|n| locref::ids::slugify(n)));
    }
    // No two countries share a name, an alias or a code, and every alias is on one item.
    let all_names: usize = countries
        .values()
        .map(|i| i["a"].as_array().unwrap().len())
        .sum();
    assert_eq!(named.len(), all_names);
    assert_eq!(all_names, register.len() + aliases.len());
    // The A–Z list of /search/ (what a reader without scripts reads) says each country's aliases beside it.
    let page = std::str::from_utf8(&files["search/index.html"]).unwrap();
    let page = &page[page.find("<h3 id=\"countries\">").expect("the A–Z list")..];
    for row in &register {
        let code = row["code"].as_str();
        let theirs: Vec<&str> = aliases
            .iter()
            .filter(|a| a["code"] == code)
            .map(|a| a["alias"].as_str())
            .collect();
        let start = page
            .find(&format!("<li><a href=\"/{code}/\">"))
            .unwrap_or_else(|| panic!("{code}: not in the A–Z list"));
        let entry = &page[start..start + page[start..].find("</li>").unwrap()];
        if theirs.is_empty() {
            assert!(!entry.contains(" · also "), "{entry}");
        } else {
            assert!(
                entry.contains(&format!(" · also {}</span>", theirs.join(", "))),
                "{entry}"
            );
        }
    }
    // Only countries carry other names.
    assert!(
        items
            .iter()
            .filter(|i| i["k"] != "country")
            .all(|i| i.get("a").is_none())
    );
}

#[test]
fn the_names_come_before_the_facts_and_every_phase_is_found_by_its_scope() {
    let dir = copy_project();
    let files = build(dir.path());
    let items = index(&files);
    let first_fact = items.iter().position(|i| i["k"] == "fact").unwrap();
    assert!(
        items[first_fact..].iter().all(|i| i["k"] == "fact"),
        "a name after the first fact"
    );
    // Each phase with a scope, as the calendar of the API lists them, opens its row on its country's page
    // and is found by the words of its scope.
    let obligations: Value =
        serde_json::from_slice(&files["api/v1/calendar.json"]).expect("calendar.json");
    let phases: Vec<&Value> = obligations["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["scope"].as_str().is_some_and(|s| !s.trim().is_empty()))
        .collect();
    assert!(!phases.is_empty());
    for phase in phases {
        let url = format!(
            "{}/#{}",
            phase["country"].as_str().unwrap(),
            phase["id"].as_str().unwrap()
        );
        let item = items
            .iter()
            .find(|i| i["u"] == url.as_str())
            .unwrap_or_else(|| panic!("{url}: no search item"));
        let scope = phase["scope"].as_str().unwrap();
        assert_eq!(
            item["s"].as_str().unwrap(),
            scope.split_whitespace().collect::<Vec<_>>().join(" "),
            "{url}"
        );
    }
}

/// Diagnostics after replacing `file` with `text`, as displayed.
fn diagnostics_with(file: &str, text: &str) -> Vec<String> {
    let dir = copy_project();
    std::fs::write(dir.path().join(file), text).unwrap();
    let project = Project::load(dir.path(), &locref::locref_site::SITE).unwrap();
    diagnostics(&SITE, &project.db)
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn an_alias_of_no_country_of_two_countries_or_of_an_unknown_kind_is_located() {
    let file = "sources/registers/country_aliases.csv";
    let found = diagnostics_with(
        file,
        "code,alias,kind\nzz,Nowhere,other name\nnl,Holland,other name\nde,Holland,other name\nit,Italy,other name\npl,Polska,nickname\n",
    );
    assert_eq!(
        found,
        [
            format!(
                "{file}:2:1: error: unknown country code `zz` (not in sources/registers/countries.csv)"
            ),
            format!(
                "{file}:4:4: error: `Holland` already names `nl`: a name shared by two countries finds neither first"
            ),
            format!("{file}:5:4: error: `Italy` is already `it`'s name, code or alias"),
            format!(
                "{file}:6:11: error: `kind` is `nickname`; expected one of: other name, former name, abbreviation, local name"
            ),
        ]
    );
}
