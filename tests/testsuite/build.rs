//! The build on the shipped sources and on small fixtures, through the real binary: every rule of the service's specification that can
//! be checked on files, OpenAPI schema validation of every API body, no-op rebuilds, reproducibility,
//! located diagnostics, and `--clean` safety.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::{Value, json};

use crate::common::{COUNTRY_CODES, ERP_IDS, locref, replace_once, text};

const EPOCH: &str = "1790000000"; // 2026-09-21T14:13:20Z

use crate::common::copy_project as scratch_project;
use locref::locref_site::SITE;

/// A scratch project already built once into `site/` (at build time [`EPOCH`]).
fn built_project() -> tempfile::TempDir {
    let project = scratch_project();
    let run = locref(project.path(), &["build", "--out", "site"], EPOCH);
    assert!(run.status.success(), "{}", text(&run.stderr));
    project
}

/// Every file under `dir`, as site path (`/api/v1/index.json`) -> bytes.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    crate::common::snapshot(dir)
        .into_iter()
        .map(|(path, bytes)| (format!("/{path}"), bytes))
        .collect()
}

/// One build of the shipped sources, shared by the read-only tests.
struct Shipped {
    _project: tempfile::TempDir,
    files: BTreeMap<String, Vec<u8>>,
}

fn shipped() -> &'static Shipped {
    static SHIPPED: OnceLock<Shipped> = OnceLock::new();
    SHIPPED.get_or_init(|| {
        let project = scratch_project();
        let out = project.path().join("public");
        let run = locref(project.path(), &["build", "--out", "public"], EPOCH);
        assert!(run.status.success(), "{}", text(&run.stderr));
        let files = tree(&out);
        Shipped {
            _project: project,
            files,
        }
    })
}

fn json_file(path: &str) -> Value {
    let bytes = shipped()
        .files
        .get(path)
        .unwrap_or_else(|| panic!("{path} was not built"));
    serde_json::from_slice(bytes).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The version of `rules/site.toml` (the last release's, set by `locref release`).
fn shipped_version() -> String {
    let site = crate::common::read(Path::new(env!("CARGO_MANIFEST_DIR")), "rules/site.toml");
    let value: toml::Value = toml::from_str(&site).unwrap();
    value["version"].as_str().unwrap().to_string()
}

const TOGGLES: [&str; 6] = [
    "e_invoicing_mandatory_b2b",
    "e_invoicing_b2b_in_force",
    "e_invoicing_mandatory_b2g",
    "real_time_reporting",
    "saft_required",
    "audit_file_on_request",
];

fn api_paths() -> Vec<&'static String> {
    shipped()
        .files
        .keys()
        .filter(|p| p.starts_with("/api/v1/"))
        .collect()
}

#[test]
fn every_spec_endpoint_exists_for_exactly_the_listed_ids() {
    let files = &shipped().files;
    let codes: BTreeSet<&str> = COUNTRY_CODES.split(' ').collect();
    assert_eq!(codes.len(), 61);
    let built: BTreeSet<String> = files
        .keys()
        .filter_map(|p| p.strip_prefix("/api/v1/countries/"))
        .map(|p| p.replace(".json", ""))
        .collect();
    assert_eq!(built, codes.iter().map(|c| c.to_string()).collect());
    let built: BTreeSet<String> = files
        .keys()
        .filter_map(|p| p.strip_prefix("/api/v1/erps/"))
        .map(|p| p.replace(".json", ""))
        .collect();
    assert_eq!(built, ERP_IDS.iter().map(|c| c.to_string()).collect());
    for path in [
        "/api/v1/index.json",
        "/api/v1/countries.json",
        "/api/v1/erps.json",
        "/api/v1/facts.json",
        "/api/v1/local-erps.json",
        "/api/v1/partner-flags.json",
        "/api/v1/partners.json",
        "/api/v1/news.json",
        "/api/v1/sponsors.json",
        "/api/v1/filters/e-invoicing-mandatory.json",
        "/api/v1/filters/e-invoicing-mandatory-b2b.json",
        "/api/v1/filters/e-invoicing-b2b-in-force.json",
        "/api/v1/filters/e-invoicing-mandatory-b2g.json",
        "/api/v1/filters/real-time-reporting.json",
        "/api/v1/filters/saft-required.json",
        "/api/v1/filters/toggles-unknown.json",
        "/api/openapi.json",
        "/data/datapackage.json",
        "/_headers",
    ] {
        assert!(files.contains_key(path), "{path} missing");
    }
    for stem in [
        "matrix",
        "reporting",
        "connectors",
        "countries",
        "local_erps",
        "local_partner_flags",
    ] {
        assert!(
            files.contains_key(&format!("/data/{stem}.json"))
                && files.contains_key(&format!("/data/{stem}.csv")),
            "{stem}"
        );
    }
}

#[test]
fn envelopes_have_meta_and_data_with_matching_counts() {
    for path in api_paths() {
        let body = json_file(path);
        let keys: Vec<&String> = body.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["meta", "data"], "{path}");
        let meta = &body["meta"];
        assert_eq!(meta["version"], shipped_version(), "{path}");
        assert_eq!(meta["generated_at"], "2026-09-21T14:13:20Z", "{path}");
        assert_eq!(meta["licence"]["name"], "CC BY-NC 4.0");
        assert!(
            meta["licence"]["commercial_licence"]
                .as_str()
                .unwrap()
                .starts_with('/')
        );
        for key in ["url", "commercial_contact", "attribution"] {
            assert!(
                !meta["licence"][key].as_str().unwrap().is_empty(),
                "{path} licence.{key}"
            );
        }
        let expected = match &body["data"] {
            Value::Array(items) => items.len() as u64,
            _ => 1,
        };
        assert_eq!(meta["count"], expected, "{path}");
        // A day's answers (`/api/v1/on/{date}.json`) are one object; the list of days is a list.
        let detail = ["/api/v1/countries/", "/api/v1/erps/", "/api/v1/releases/"]
            .iter()
            .any(|prefix| path.starts_with(prefix))
            || (path.starts_with("/api/v1/on/") && path != "/api/v1/on/index.json");
        assert_eq!(body["data"].is_object(), detail, "{path}: data shape");
    }
}

#[test]
fn index_lists_endpoints_with_coverage_docs_and_openapi() {
    let index = json_file("/api/v1/index.json");
    let meta = &index["meta"];
    assert_eq!(meta["docs"], "https://locref.example.org/api/");
    assert_eq!(
        meta["openapi"],
        "https://locref.example.org/api/openapi.json"
    );
    let countries = json_file("/api/v1/countries.json");
    for toggle in TOGGLES {
        let c = &meta["toggle_coverage"][toggle];
        let sum = c["true"].as_u64().unwrap()
            + c["false"].as_u64().unwrap()
            + c["null"].as_u64().unwrap();
        assert_eq!(sum, 61, "{toggle}");
        let trues = countries["data"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["toggles"][toggle] == true)
            .count() as u64;
        let nulls = countries["data"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["toggles"][toggle].is_null())
            .count() as u64;
        assert_eq!(
            (c["true"].as_u64().unwrap(), c["null"].as_u64().unwrap()),
            (trues, nulls),
            "{toggle}"
        );
    }
    let paths: Vec<&str> = index["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert!(
        paths.contains(&"/api/v1/countries/{code}.json")
            && paths.contains(&"/api/v1/erps/{id}.json")
    );
    for entry in index["data"].as_array().unwrap() {
        let path = entry["path"].as_str().unwrap();
        assert!(!entry["description"].as_str().unwrap().is_empty(), "{path}");
        if path.contains('{') {
            assert!(entry["count"].is_null(), "{path}");
            continue;
        }
        assert!(
            shipped().files.contains_key(path),
            "index lists {path}, which was not built"
        );
        if let Some(count) = entry["count"].as_u64() {
            let items = if path.ends_with(".csv") {
                csv::Reader::from_reader(shipped().files[path].as_slice())
                    .records()
                    .count()
            } else if path.ends_with(".ics") {
                String::from_utf8_lossy(&shipped().files[path])
                    .matches("BEGIN:VEVENT")
                    .count()
            } else if path.starts_with("/data/") {
                json_file(path).as_array().unwrap().len()
            } else {
                json_file(path)["data"].as_array().unwrap().len()
            };
            assert_eq!(items as u64, count, "{path}");
        }
    }
}

#[test]
fn country_details_agree_with_their_counts_and_the_list() {
    let list = json_file("/api/v1/countries.json");
    assert_eq!(list["data"].as_array().unwrap().len(), 61);
    let mut previous = String::new();
    for country in list["data"].as_array().unwrap() {
        let code = country["code"].as_str().unwrap();
        assert!(code > previous.as_str(), "countries sorted by code");
        previous = code.to_string();
        assert_eq!(country["api_url"], format!("/api/v1/countries/{code}.json"));
        assert_eq!(
            country["url"],
            format!("https://locref.example.org/{code}/")
        );
        let detail = json_file(&format!("/api/v1/countries/{code}.json"))["data"].clone();
        let counts = &detail["counts"];
        let facts = detail["facts"].as_array().unwrap();
        assert_eq!(counts["facts"], facts.len() as u64, "{code}");
        let verified = facts.iter().filter(|f| f["status"] == "verified").count() as u64;
        assert_eq!(counts["facts_verified"], verified, "{code}");
        let cells = facts
            .iter()
            .filter(|f| f["topic"] == "e_invoicing_erp_support")
            .count() as u64;
        assert_eq!(counts["erp_matrix_cells"], cells, "{code}");
        for key in ["local_erps", "partner_flags", "partners"] {
            assert_eq!(
                counts[key],
                detail[key].as_array().unwrap().len() as u64,
                "{code} {key}"
            );
        }
        // The list item is the detail without its arrays.
        let mut base = detail.as_object().unwrap().clone();
        for key in ["facts", "local_erps", "partner_flags", "partners"] {
            base.remove(key);
        }
        assert_eq!(Value::Object(base), *country, "{code}");
        for fact in facts {
            assert_eq!(fact["country"], code);
            let status = if fact["verification"] == "unverified" {
                "unverified"
            } else {
                "verified"
            };
            assert_eq!(fact["status"], status, "{}", fact["id"]);
            if fact["topic"] != "e_invoicing" {
                assert!(fact["mandatory"].is_null(), "{}", fact["id"]);
            }
        }
        if let Some(rate) = country["vat_reduced_rates"].as_array() {
            assert!(
                rate.iter().all(|r| r.as_f64().unwrap() > 0.0),
                "{code}: zero rate excluded"
            );
        }
    }
}

#[test]
fn fact_ids_are_unique_and_composed_from_country_topic_and_erp() {
    let facts = json_file("/api/v1/facts.json");
    let facts = facts["data"].as_array().unwrap();
    let mut ids = BTreeSet::new();
    for fact in facts {
        let id = fact["id"].as_str().unwrap();
        assert!(ids.insert(id), "duplicate fact id {id}");
        let country = fact["country"].as_str().unwrap();
        let topic = fact["topic"].as_str().unwrap().replace('_', "-");
        let prefix = format!("{country}-{topic}");
        assert!(id.starts_with(&prefix), "{id} does not start with {prefix}");
        match fact["erp"].as_str() {
            Some(erp) => assert_eq!(id, format!("{prefix}-{erp}")),
            None => assert!(
                id == prefix || id[prefix.len() + 1..].parse::<u32>().is_ok(),
                "{id}"
            ),
        }
    }
    // Every country fact of every detail is in facts.json, and nothing else is.
    let from_details: usize = COUNTRY_CODES
        .split(' ')
        .map(|c| {
            json_file(&format!("/api/v1/countries/{c}.json"))["data"]["facts"]
                .as_array()
                .unwrap()
                .len()
        })
        .sum();
    assert_eq!(from_details, facts.len());
}

/// Whether a filter admits a country (the specification's meaning of each filter).
type Admits = Box<dyn Fn(&Value) -> bool>;

fn is_true(country: &Value, toggle: &str) -> bool {
    country["toggles"][toggle] == true
}

#[test]
fn filters_list_exactly_the_countries_whose_toggles_match() {
    let countries = json_file("/api/v1/countries.json");
    let countries = countries["data"].as_array().unwrap();
    let cases: [(&str, Admits); 7] = [
        (
            "e-invoicing-mandatory",
            Box::new(|c| {
                is_true(c, "e_invoicing_mandatory_b2b") || is_true(c, "e_invoicing_mandatory_b2g")
            }),
        ),
        (
            "e-invoicing-mandatory-b2b",
            Box::new(|c| is_true(c, "e_invoicing_mandatory_b2b")),
        ),
        (
            "e-invoicing-b2b-in-force",
            Box::new(|c| is_true(c, "e_invoicing_b2b_in_force")),
        ),
        (
            "e-invoicing-mandatory-b2g",
            Box::new(|c| is_true(c, "e_invoicing_mandatory_b2g")),
        ),
        (
            "real-time-reporting",
            Box::new(|c| is_true(c, "real_time_reporting")),
        ),
        ("saft-required", Box::new(|c| is_true(c, "saft_required"))),
        (
            "toggles-unknown",
            Box::new(|c| TOGGLES.iter().any(|t| c["toggles"][*t].is_null())),
        ),
    ];
    for (slug, admits) in cases {
        let filter = json_file(&format!("/api/v1/filters/{slug}.json"));
        let listed: Vec<&str> = filter["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["code"].as_str().unwrap())
            .collect();
        let expected: Vec<&str> = countries
            .iter()
            .filter(|c| admits(c))
            .map(|c| c["code"].as_str().unwrap())
            .collect();
        assert_eq!(listed, expected, "{slug}");
        for item in filter["data"].as_array().unwrap() {
            let code = item["code"].as_str().unwrap();
            let country = countries.iter().find(|c| c["code"] == code).unwrap();
            assert_eq!(item["toggles"], country["toggles"]);
            assert_eq!(item["api_url"], format!("/api/v1/countries/{code}.json"));
            assert_eq!(
                (&item["name"], &item["region"]),
                (&country["name"], &country["region"])
            );
        }
    }
}

#[test]
fn toggles_on_the_reference_date_follow_the_fact_texts() {
    // Italy: B2B since 2019; Germany: receiving obligation since 2025-01-01 (in force); a mandate that
    // starts after 2026-10-16 is enacted but not in force.
    let it = json_file("/api/v1/countries/it.json");
    assert_eq!(it["data"]["toggles"]["e_invoicing_b2b_in_force"], true);
    assert_eq!(it["data"]["toggles"]["e_invoicing_mandatory_b2b"], true);
    let de = json_file("/api/v1/countries/de.json");
    assert_eq!(de["data"]["toggles"]["e_invoicing_b2b_in_force"], true);
    let countries = json_file("/api/v1/countries.json");
    for c in countries["data"].as_array().unwrap() {
        let t = &c["toggles"];
        if t["e_invoicing_b2b_in_force"] == true {
            assert_eq!(
                t["e_invoicing_mandatory_b2b"], true,
                "{}: in force implies a mandate",
                c["code"]
            );
        }
    }
}

#[test]
fn erp_details_have_support_facts_providers_and_counts() {
    let list = json_file("/api/v1/erps.json");
    let ids: Vec<&str> = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ERP_IDS);
    let partners = json_file("/api/v1/partners.json");
    for erp in list["data"].as_array().unwrap() {
        let id = erp["id"].as_str().unwrap();
        let detail = json_file(&format!("/api/v1/erps/{id}.json"))["data"].clone();
        let support = detail["e_invoicing_support"].as_array().unwrap();
        assert!(
            support
                .iter()
                .all(|f| f["topic"] == "e_invoicing_erp_support" && f["erp"] == id)
        );
        // Countries where support is established, counted from the ERP's own support facts: not the
        // cells recorded (every ERP has 61), never a roadmap, a no or an unknown, and never an answer
        // graded unverified (the one definition of "established").
        let established = support
            .iter()
            .filter(|f| {
                [
                    "native",
                    "native + access point",
                    "add-on",
                    "via provider",
                    "via provider (receiving only)",
                ]
                .contains(&f["value"].as_str().unwrap())
                    && f["verification"] != "unverified"
            })
            .map(|f| f["country"].as_str().unwrap())
            .collect::<std::collections::BTreeSet<_>>();
        assert_eq!(
            erp["counts"]["e_invoicing_countries"],
            established.len() as u64,
            "{id}"
        );
        assert!(
            established.len() < support.len(),
            "{id}: unknown cells are not counted"
        );
        assert_eq!(
            erp["counts"]["partner_flags"],
            detail["partner_flags"].as_array().unwrap().len() as u64
        );
        let partner_count = partners["data"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["erp"] == id)
            .count() as u64;
        assert_eq!(erp["counts"]["partners"], partner_count, "{id}");
        assert!(
            detail["other_facts"]
                .as_array()
                .unwrap()
                .iter()
                .all(|f| f["erp"] == id && f["topic"] != "e_invoicing_erp_support")
        );
        for provider in detail["providers"].as_array().unwrap() {
            for key in [
                "provider",
                "connector_type",
                "built_by",
                "direction",
                "verification",
            ] {
                assert!(provider[key].is_string(), "{id}: provider.{key}");
            }
        }
        let text = serde_json::to_string(&detail).unwrap().to_lowercase();
        assert!(
            !text.contains("\"price")
                && !text.contains("\"featured")
                && !text.contains("\"sponsored"),
            "{id}"
        );
    }
}

#[test]
fn partners_are_sorted_and_neutral_and_sponsors_are_separate() {
    let partners = json_file("/api/v1/partners.json");
    let keys: Vec<(String, String, String)> = partners["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["country"].as_str().unwrap().into(),
                p["erp"].as_str().unwrap().into(),
                p["name"].as_str().unwrap().to_lowercase(),
            )
        })
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
    for p in partners["data"].as_array().unwrap() {
        let members: BTreeSet<&str> = p.as_object().unwrap().keys().map(String::as_str).collect();
        assert!(
            members
                .iter()
                .all(|m| !m.contains("price") && *m != "featured" && *m != "sponsored"),
            "{members:?}"
        );
    }
    let sponsors = json_file("/api/v1/sponsors.json");
    assert_eq!(sponsors["meta"]["count"], 0);
    assert!(
        sponsors["meta"]["notice"]
            .as_str()
            .unwrap()
            .contains("not part of the verified dataset")
    );
    assert_eq!(sponsors["data"], json!([]));
}

/// The specification's columns of each flat file (`<erps>` = the ten ERP columns).
fn spec_columns(stem: &str) -> Vec<String> {
    let columns = match stem {
        "matrix" => {
            "topic,country_code,country,short_label,mandate,scope,deadlines,format,mandate_source,mandate_evidence,erp,support_type,vendors,notes,erp_source,evidence,status,last_verified"
        }
        "reporting" => {
            "topic,country_code,country,report_local,report_en,frequency,deadline,channel_format,source,source_checked,evidence,status,<erps>,erp_sources,notes"
        }
        "connectors" => {
            "provider,erp,countries_covered,countries_in_scope,connector_type,built_by,direction,source_urls,status,last_verified,notes"
        }
        "countries" => {
            "country_code,country,region,fact,value,source,evidence,status,last_verified"
        }
        "local_erps" => "country_code,name,segment,description,website,source,status,last_verified",
        "local_partner_flags" => "country_code,country,erp,flag,note,source,status,last_verified",
        _ => unreachable!(),
    };
    let ten: Vec<String> = ERP_IDS
        .iter()
        .filter(|e| **e != "sap-business-one")
        .map(|e| e.to_string())
        .collect();
    columns
        .split(',')
        .flat_map(|c| {
            if c == "<erps>" {
                ten.clone()
            } else {
                vec![c.to_string()]
            }
        })
        .collect()
}

/// The header and rows of a CSV file.
fn csv_records(bytes: &[u8]) -> (Vec<String>, Vec<Vec<String>>) {
    try_csv_records(bytes).unwrap()
}

fn try_csv_records(bytes: &[u8]) -> Result<(Vec<String>, Vec<Vec<String>>), String> {
    let mut reader = csv::Reader::from_reader(bytes);
    let header = reader
        .headers()
        .map_err(|e| e.to_string())?
        .iter()
        .map(str::to_string)
        .collect();
    let rows = reader
        .records()
        .map(|r| {
            Ok(r.map_err(|e| e.to_string())?
                .iter()
                .map(str::to_string)
                .collect())
        })
        .collect::<Result<_, String>>()?;
    Ok((header, rows))
}

#[test]
fn flat_files_have_the_spec_columns_and_the_same_records_in_csv_and_json() {
    for stem in [
        "matrix",
        "reporting",
        "connectors",
        "countries",
        "local_erps",
        "local_partner_flags",
    ] {
        let records = json_file(&format!("/data/{stem}.json"));
        let records = records.as_array().unwrap();
        let (header, rows) = csv_records(&shipped().files[&format!("/data/{stem}.csv")]);
        assert_eq!(header, spec_columns(stem), "{stem} columns");
        assert_eq!(rows.len(), records.len(), "{stem} row count");
        for (row, record) in rows.iter().zip(records) {
            let keys: Vec<&String> = record.as_object().unwrap().keys().collect();
            assert_eq!(
                keys,
                header.iter().collect::<Vec<_>>(),
                "{stem} record keys"
            );
            // An unknown value is an empty CSV cell and a JSON null, never an empty JSON string: loaders
            // then infer one type per column.
            let values: Vec<String> = header
                .iter()
                .map(|h| match &record[h] {
                    Value::Null => String::new(),
                    Value::String(text) => {
                        assert!(!text.is_empty(), "{stem}: {h} is \"\", not null");
                        text.clone()
                    }
                    other => panic!("{stem}: {h} is {other}"),
                })
                .collect();
            assert_eq!(&values, row, "{stem}");
            assert!(["verified", "unverified"].contains(&record["status"].as_str().unwrap()));
        }
    }
    let matrix = json_file("/data/matrix.json");
    assert_eq!(
        matrix.as_array().unwrap().len(),
        671,
        "61 countries x 11 ERPs"
    );
    assert!(
        matrix
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["last_verified"].is_null()),
        "unverified cells have no check date"
    );
    let licence = text(&shipped().files["/data/LICENSE.txt"]);
    assert!(licence.contains("CC BY 4.0") && licence.contains("Attribution: "));
}

#[test]
fn the_data_package_lists_every_file_with_the_spec_columns_and_the_registers() {
    let package = json_file("/data/datapackage.json");
    assert_eq!(package["licenses"][0]["title"], "CC BY 4.0");
    let resources = package["resources"].as_array().unwrap();
    let paths: Vec<&str> = resources
        .iter()
        .filter_map(|r| r["path"].as_str())
        .collect();
    // The SPEC's six tables, then the answers' own: the obligations' phases, the toggles and the regimes.
    let mut expected = Vec::new();
    for stem in [
        "matrix",
        "reporting",
        "connectors",
        "countries",
        "local_erps",
        "local_partner_flags",
        "obligations",
        "toggles",
        "regimes",
    ] {
        expected.push(format!("{stem}.csv"));
        expected.push(format!("{stem}.json"));
    }
    assert_eq!(paths, expected);
    for resource in resources.iter().filter(|r| r["path"].is_string()) {
        let path = resource["path"].as_str().unwrap();
        let stem = path.rsplit_once('.').unwrap().0;
        let fields: Vec<String> = resource["schema"]["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["name"].as_str().unwrap().to_string())
            .collect();
        if ["obligations", "toggles", "regimes"].contains(&stem) {
            // Not the SPEC's: their columns are the CSV's header.
            let (header, _) = csv_records(&shipped().files[&format!("/data/{stem}.csv")]);
            assert_eq!(fields, header, "{path}");
        } else {
            assert_eq!(fields, spec_columns(stem), "{path}");
        }
        let csv = path.ends_with(".csv");
        assert_eq!(resource["format"], if csv { "csv" } else { "json" });
        // Frictionless cannot check a JSON file's size or hash (it reads JSON through ijson, past the
        // stream it counts): declaring them fails its validation, so only the CSV files declare theirs.
        assert_eq!(
            resource["hash"].is_string() && resource["bytes"].is_u64(),
            csv,
            "{path}: a size and hash on CSV only"
        );
    }
    let key = |name: &str| {
        resources.iter().find(|r| r["name"] == name).unwrap()["schema"]["primaryKey"].clone()
    };
    assert_eq!(key("matrix"), json!(["country_code", "erp"]));
    assert_eq!(key("countries"), json!(["country_code", "fact"]));
    assert_eq!(
        key("reporting"),
        json!(["topic", "country_code", "report_en"])
    );
    assert_eq!(key("connectors"), json!(["provider", "erp"]));
    assert_eq!(key("obligations"), json!(["phase_id"]));
    assert_eq!(key("toggles"), json!(["country_code", "toggle"]));
    // A toggle names the phase that set it.
    let toggles = resources.iter().find(|r| r["name"] == "toggles").unwrap();
    assert!(
        toggles["schema"]["foreignKeys"]
            .as_array()
            .unwrap()
            .contains(&json!({"fields": ["phase_id"], "reference": {"resource": "obligations", "fields": ["phase_id"]}})),
        "{toggles}"
    );
    // The registers are inline: 61 countries and 11 ERPs, the targets of the foreign keys.
    let register = |name: &str| {
        resources.iter().find(|r| r["name"] == name).unwrap()["data"]
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(
        (register("country-register"), register("erp-register")),
        (61, 11)
    );
}

/// A published value as the data package reads it: `None` is a missing value (an empty CSV cell, a JSON
/// null).
type Row = BTreeMap<String, Option<String>>;

/// The rows of a data-package resource: its file (CSV or JSON) or its inline data.
fn resource_rows(files: &BTreeMap<String, Vec<u8>>, resource: &Value) -> Result<Vec<Row>, String> {
    // A JSON cell is of its column's type: a boolean a JSON boolean, an integer a JSON number, the rest
    // a string; any may be null. It is kept as the CSV writes it.
    let types: BTreeMap<&str, &str> = resource["schema"]["fields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| (f["name"].as_str().unwrap(), f["type"].as_str().unwrap()))
        .collect();
    let cell = |column: &str, v: &Value| match (types.get(column).copied(), v) {
        (_, Value::Null) => Ok(None),
        (Some("boolean"), Value::Bool(b)) => Ok(Some(b.to_string())),
        (Some("integer"), Value::Number(n)) if n.is_u64() || n.is_i64() => Ok(Some(n.to_string())),
        (Some("string" | "date") | None, Value::String(s)) => Ok(Some(s.clone())),
        (kind, other) => Err(format!("{column}: {other} is not a {kind:?} or null")),
    };
    let objects = |records: &Value| -> Result<Vec<Row>, String> {
        let records = records.as_array().ok_or("not an array")?;
        records
            .iter()
            .map(|r| {
                let r = r.as_object().ok_or("a record is not an object")?;
                r.iter()
                    .map(|(k, v)| Ok((k.clone(), cell(k, v)?)))
                    .collect()
            })
            .collect()
    };
    let Some(path) = resource["path"].as_str() else {
        return objects(&resource["data"]);
    };
    let bytes = files
        .get(&format!("/data/{path}"))
        .ok_or(format!("{path} is not published"))?;
    match resource["format"].as_str() {
        Some("csv") => {
            let (header, rows) = try_csv_records(bytes)?;
            Ok(rows
                .into_iter()
                .map(|row| {
                    header
                        .iter()
                        .cloned()
                        .zip(row.into_iter().map(|c| (!c.is_empty()).then_some(c)))
                        .collect()
                })
                .collect())
        }
        Some("json") => objects(&serde_json::from_slice(bytes).map_err(|e| e.to_string())?),
        other => Err(format!("{path}: format {other:?}")),
    }
}

/// What Frictionless would report about the data package against the published files: sizes and hashes,
/// columns, required and typed cells, closed sets and patterns, primary keys and foreign keys.
fn data_package_problems(files: &BTreeMap<String, Vec<u8>>) -> Vec<String> {
    use sha2::Digest;
    let package: Value = serde_json::from_slice(&files["/data/datapackage.json"]).unwrap();
    let resources = package["resources"].as_array().unwrap();
    let mut problems = Vec::new();
    let mut rows_of: BTreeMap<&str, Vec<Row>> = BTreeMap::new();
    for resource in resources {
        let name = resource["name"].as_str().unwrap();
        match resource_rows(files, resource) {
            Ok(rows) => {
                rows_of.insert(name, rows);
            }
            Err(problem) => problems.push(format!("{name}: {problem}")),
        }
    }
    let published: BTreeSet<String> = files
        .keys()
        .filter_map(|p| p.strip_prefix("/data/"))
        // The package, its notes, and the folder's page and its twin (/data/): not tables.
        .filter(|p| {
            ![
                "datapackage.json",
                "LICENSE.txt",
                "README.txt",
                "index.html",
                "index.md",
            ]
            .contains(p)
        })
        .map(str::to_string)
        .collect();
    let described: BTreeSet<String> = resources
        .iter()
        .filter_map(|r| r["path"].as_str().map(str::to_string))
        .collect();
    if published != described {
        problems.push(format!("files {published:?} but resources {described:?}"));
    }
    for resource in resources {
        let name = resource["name"].as_str().unwrap();
        if let (Some(path), Some(bytes)) = (resource["path"].as_str(), resource.get("bytes")) {
            let file = &files[&format!("/data/{path}")];
            if bytes != &json!(file.len()) {
                problems.push(format!(
                    "{name}: bytes {bytes}, the file has {}",
                    file.len()
                ));
            }
            let hex: String = sha2::Sha256::digest(file)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            let hash = format!("sha256:{hex}");
            if resource["hash"] != json!(hash) {
                problems.push(format!(
                    "{name}: hash {}, the file's is {hash}",
                    resource["hash"]
                ));
            }
        }
        let Some(rows) = rows_of.get(name) else {
            continue;
        };
        let schema = &resource["schema"];
        let fields = schema["fields"].as_array().unwrap();
        let names: Vec<&str> = fields.iter().map(|f| f["name"].as_str().unwrap()).collect();
        for (i, row) in rows.iter().enumerate() {
            let line = i + 1;
            let mut keys: Vec<&str> = row.keys().map(String::as_str).collect();
            let mut sorted_names = names.clone();
            keys.sort();
            sorted_names.sort();
            if keys != sorted_names {
                problems.push(format!("{name} row {line}: columns {keys:?}"));
                continue;
            }
            for field in fields {
                let column = field["name"].as_str().unwrap();
                let constraints = &field["constraints"];
                let Some(value) = &row[column] else {
                    if constraints["required"] == true {
                        problems.push(format!("{name} row {line}: {column} is required"));
                    }
                    continue;
                };
                if field["type"] == "date"
                    && jiff::civil::Date::strptime("%Y-%m-%d", value).is_err()
                {
                    problems.push(format!(
                        "{name} row {line}: {column} `{value}` is not a date"
                    ));
                }
                if field["type"] == "boolean" {
                    let spelled = |key: &str| {
                        field[key]
                            .as_array()
                            .is_some_and(|values| values.contains(&json!(value)))
                    };
                    if !spelled("trueValues") && !spelled("falseValues") {
                        problems.push(format!(
                            "{name} row {line}: {column} `{value}` is not a boolean"
                        ));
                    }
                }
                if field["type"] == "integer" {
                    match value.parse::<i64>() {
                        Ok(n)
                            if constraints["minimum"].as_i64().is_none_or(|min| n >= min)
                                && constraints["maximum"].as_i64().is_none_or(|max| n <= max) => {}
                        _ => problems.push(format!(
                            "{name} row {line}: {column} `{value}` is not an integer in range"
                        )),
                    }
                }
                if let Some(allowed) = constraints["enum"].as_array()
                    && !allowed.contains(&json!(value))
                {
                    problems.push(format!(
                        "{name} row {line}: {column} `{value}` is not allowed"
                    ));
                }
                if let Some(pattern) = constraints["pattern"].as_str()
                    && !regex::Regex::new(&format!("^(?:{pattern})$"))
                        .unwrap()
                        .is_match(value)
                {
                    problems.push(format!(
                        "{name} row {line}: {column} `{value}` breaks the pattern"
                    ));
                }
            }
        }
        let tuple = |row: &Row, columns: &[Value]| -> Vec<Option<String>> {
            columns
                .iter()
                .map(|c| row.get(c.as_str().unwrap()).cloned().flatten())
                .collect()
        };
        if let Some(key) = schema["primaryKey"].as_array() {
            let mut seen = BTreeSet::new();
            for (i, row) in rows.iter().enumerate() {
                if !seen.insert(tuple(row, key)) {
                    problems.push(format!(
                        "{name} row {}: primary key {:?} repeated",
                        i + 1,
                        tuple(row, key)
                    ));
                }
            }
        }
        for foreign in schema["foreignKeys"].as_array().into_iter().flatten() {
            let target = foreign["reference"]["resource"].as_str().unwrap();
            let Some(target_rows) = rows_of.get(target) else {
                problems.push(format!("{name}: foreign key to unknown resource {target}"));
                continue;
            };
            let targets: BTreeSet<Vec<Option<String>>> = target_rows
                .iter()
                .map(|r| tuple(r, foreign["reference"]["fields"].as_array().unwrap()))
                .collect();
            for (i, row) in rows.iter().enumerate() {
                let values = tuple(row, foreign["fields"].as_array().unwrap());
                // A key that is all missing refers to nothing (a null toggle has no phase), as Table
                // Schema and Frictionless read it.
                if values.iter().all(Option::is_none) {
                    continue;
                }
                if !targets.contains(&values) {
                    problems.push(format!("{name} row {}: {values:?} not in {target}", i + 1));
                }
            }
        }
    }
    problems
}

#[test]
fn the_data_package_holds_for_the_files_it_describes() {
    let files = &shipped().files;
    let package = json_file("/data/datapackage.json");
    for resource in package["resources"].as_array().unwrap() {
        for field in resource["schema"]["fields"].as_array().unwrap() {
            let description = field["description"].as_str().unwrap_or_default();
            assert!(
                !description.is_empty(),
                "{}: {} has no description",
                resource["name"],
                field["name"]
            );
        }
    }
    assert_eq!(data_package_problems(files), Vec::<String>::new());

    // And the check sees what Frictionless would: a changed byte, a repeated key, an unknown ERP, a value
    // outside its set.
    let mut broken = files.clone();
    let matrix = broken.get_mut("/data/matrix.csv").unwrap();
    let at = matrix.iter().rposition(u8::is_ascii_lowercase).unwrap();
    matrix[at] = matrix[at].to_ascii_uppercase();
    let (header, mut rows) = csv_records(&files["/data/local_partner_flags.csv"]);
    rows.push(rows[0].clone());
    rows[1][2] = "no-such-erp".into();
    rows[2][3] = "maybe".into();
    let mut writer = csv::WriterBuilder::new()
        .terminator(csv::Terminator::CRLF)
        .from_writer(Vec::new());
    writer.write_record(&header).unwrap();
    for row in &rows {
        writer.write_record(row).unwrap();
    }
    broken.insert(
        "/data/local_partner_flags.csv".into(),
        writer.into_inner().unwrap(),
    );
    let problems = data_package_problems(&broken).join("\n");
    for expected in [
        "matrix: hash",
        "local-partner-flags: bytes",
        "primary key",
        "not in erp-register",
        "flag `maybe` is not allowed",
    ] {
        assert!(problems.contains(expected), "{expected} in:\n{problems}");
    }
}

#[test]
fn a_reporting_row_named_twice_is_a_located_error() {
    let project = scratch_project();
    let path = project.path().join("sources/tables/reporting.csv");
    let text_before = std::fs::read_to_string(&path).unwrap();
    let first = text_before.lines().nth(1).unwrap();
    let lines = text_before.lines().count();
    std::fs::write(&path, format!("{text_before}{first}\n")).unwrap();
    let run = locref(project.path(), &["check"], EPOCH);
    assert_eq!(run.status.code(), Some(1));
    let stderr = text(&run.stderr);
    let report_en = first.split(',').nth(3).unwrap();
    let column = first.find(&format!(",{report_en},")).unwrap() + 2;
    assert!(
        stderr.contains(&format!(
            "sources/tables/reporting.csv:{}:{column}: error: duplicate reporting row",
            lines + 1
        )) && stderr.contains("(first on line 2)"),
        "{stderr}"
    );
}

#[test]
fn llms_full_names_what_is_not_established_once_instead_of_a_row_each() {
    let full = text(&shipped().files["/llms-full.txt"]);
    let twin = text(&shipped().files["/erp/sap-business-bydesign/index.md"]);
    // The twin itself keeps every row; llms-full.txt names the countries where SAP Business ByDesign's
    // support is unknown (and the row says nothing else) in one line.
    let section = |t: &str| {
        let start = t.find("## E-invoicing support by country").unwrap();
        t[start..start + t[start..].find("\n## ").unwrap()].to_string()
    };
    let rows = |t: &str| {
        section(t)
            .lines()
            .filter(|l| l.starts_with("| [") && !l.starts_with("| Country"))
            .count()
    };
    assert_eq!(rows(&twin), 61);
    // The ERP's page in llms-full.txt: the one whose `Source:` line is its twin.
    let page = &full[full
        .find("Source: https://locref.example.org/erp/sap-business-bydesign/index.md")
        .unwrap()..];
    let condensed = section(page);
    assert!(rows(page) < 61, "{condensed}");
    assert!(
        !condensed.contains("| unknown/unverified |  |  | unverified | not stated | none |"),
        "{condensed}"
    );
    assert!(
        condensed
            .contains("Not established (unknown/unverified) for: Albania, Andorra, Argentina,"),
        "{condensed}"
    );
    // Nowhere is a row left that says nothing but unknown; a row with a note stays.
    assert!(!full.contains("| unknown/unverified | unverified | none |"));
    assert!(!full.contains("| unknown/unverified |  |  | unverified | not stated | none |"));
    assert!(full.contains("| unknown/unverified |  | Looked at: "));
}

/// Big lists are spliced from cached per-country fragments; what is published must still be exactly the
/// pretty-printed JSON of its own value (two-space indent, one record after another, a final newline).
#[test]
fn every_json_output_is_canonical_pretty_json() {
    let mut checked = 0;
    for (path, bytes) in &shipped().files {
        // The search index is the pages' asset, not a published record: one compact item per line keeps
        // what every page's search box fetches small.
        if !path.ends_with(".json") || path == "/search-index.json" {
            continue;
        }
        let value: Value = serde_json::from_slice(bytes).unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut canonical = serde_json::to_vec_pretty(&value).unwrap();
        canonical.push(b'\n');
        assert!(
            *bytes == canonical,
            "{path} differs from its pretty-printed value"
        );
        checked += 1;
    }
    // The API bodies (index, 2 lists + 72 details, facts, 5 lists, 7 filters, toggles, calendar, regimes,
    // changes, releases and each release's change set), openapi.json, the nine flat JSON files and the
    // data package.
    // And each country's column of the comparison page (`/compare/{code}.json`), one per country of the
    // register.
    let countries = crate::common::read(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        "sources/registers/countries.csv",
    )
    .lines()
    .skip(1)
    .filter(|l| !l.is_empty())
    .count();
    // And the days answered (`/api/v1/on/index.json`) with each day's answers.
    let days = json_file("/api/v1/on/index.json")["data"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(
        checked,
        104 + countries + crate::common::shipped_releases().count + 1 + days
    );
}

#[test]
fn headers_file_gives_cors_and_media_types() {
    let headers = text(&shipped().files["/_headers"]);
    assert!(headers.starts_with("# Generated by locref"));
    assert!(headers.contains("/*\n  Access-Control-Allow-Origin: *\n"));
    assert!(
        headers.contains(
            "/api/v1/countries/*.json\n  Content-Type: application/json; charset=utf-8\n"
        )
    );
    assert!(headers.contains("/data/*.csv\n  Content-Type: text/csv; charset=utf-8\n"));
}

#[test]
fn every_url_in_the_api_is_http_or_https() {
    fn walk(value: &Value, key: &str, path: &str) {
        match value {
            Value::Object(map) => map.iter().for_each(|(k, v)| walk(v, k, path)),
            Value::Array(items) => items.iter().for_each(|v| walk(v, key, path)),
            Value::String(s)
                if (key.contains("url") || key == "website")
                    && !s.is_empty()
                    && !key.starts_with("api_")
                    && key != "commercial_licence" =>
            {
                assert!(
                    s.starts_with("https://") || s.starts_with("http://"),
                    "{path}: {key} = {s}"
                );
            }
            _ => {}
        }
    }
    for path in api_paths() {
        walk(&json_file(path), "", path);
    }
}

#[test]
fn openapi_describes_every_path_and_validates_every_body() {
    let doc = json_file("/api/openapi.json");
    assert_eq!(doc["openapi"], "3.1.0");
    assert_eq!(doc["info"]["version"], "1.0.0");
    let paths = doc["paths"].as_object().unwrap();
    let toggles = &doc["components"]["schemas"]["Toggles"]["properties"];
    assert!(
        toggles["e_invoicing_b2b_in_force"]["description"]
            .as_str()
            .unwrap()
            .contains("2026-10-16")
    );
    for template in ["/api/v1/countries/{code}.json", "/api/v1/erps/{id}.json"] {
        let get = &paths[template]["get"];
        assert!(get["responses"]["404"].is_object(), "{template} has a 404");
        assert_eq!(get["parameters"][0]["in"], "path");
    }
    assert_eq!(
        paths["/api/v1/countries/{code}.json"]["get"]["parameters"][0]["schema"]["enum"]
            .as_array()
            .unwrap()
            .len(),
        61
    );
    let index = json_file("/api/v1/index.json");
    for entry in index["data"].as_array().unwrap() {
        let path = entry["path"].as_str().unwrap();
        if path.starts_with("/api/") {
            assert!(paths.contains_key(path), "openapi lacks {path}");
        }
    }
    // Validate every emitted body against the schema openapi.json gives for its path.
    let mut checked = 0;
    for (path, bytes) in &shipped().files {
        if !path.ends_with(".json")
            || path == "/data/datapackage.json"
            || path == "/api/openapi.json"
            || path == "/search-index.json"
        {
            continue;
        }
        let template = [
            ("countries", "{code}"),
            ("erps", "{id}"),
            ("releases", "{version}"),
            ("on", "{date}"),
        ]
        .iter()
        .find_map(|(kind, placeholder)| {
            let prefix = format!("/api/v1/{kind}/");
            (path.starts_with(&prefix) && path != "/api/v1/on/index.json")
                .then(|| format!("{prefix}{placeholder}.json"))
        });
        // A country's column of the comparison page is described once, by its template.
        let template = template.or_else(|| {
            (path.starts_with("/compare/") && path.ends_with(".json"))
                .then(|| "/compare/{code}.json".to_string())
        });
        let key = template.unwrap_or_else(|| path.clone());
        let operation = &paths
            .get(&key)
            .unwrap_or_else(|| panic!("openapi lacks {key}"))["get"];
        let schema = &operation["responses"]["200"]["content"]["application/json"]["schema"];
        let mut wrapper = schema.as_object().unwrap().clone();
        wrapper.insert(
            "$schema".into(),
            json!("https://json-schema.org/draft/2020-12/schema"),
        );
        wrapper.insert("components".into(), doc["components"].clone());
        let validator = jsonschema::draft202012::new(&Value::Object(wrapper)).unwrap();
        let body: Value = serde_json::from_slice(bytes).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&body)
            .take(5)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{path}: {errors:#?}");
        checked += 1;
    }
    // And each country's column of the comparison page, one per country of the register.
    let columns = shipped()
        .files
        .keys()
        .filter(|p| p.starts_with("/compare/") && p.ends_with(".json"))
        .count();
    assert_eq!(
        columns,
        paths["/api/v1/countries/{code}.json"]["get"]["parameters"][0]["schema"]["enum"]
            .as_array()
            .unwrap()
            .len()
    );
    // And the list of days answered with each day's answers, one per value of `{date}`.
    let days = paths["/api/v1/on/{date}.json"]["get"]["parameters"][0]["schema"]["enum"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(
        checked,
        61 + 11 + 19 + 9 + 2 + columns + crate::common::shipped_releases().count + 1 + days,
        "every API body, flat JSON file, comparison column and day's answers was validated"
    );
    // And a body that breaks the contract is caught.
    let schema = &paths["/api/v1/countries.json"]["get"]["responses"]["200"]["content"]["application/json"]
        ["schema"];
    let mut wrapper = schema.as_object().unwrap().clone();
    wrapper.insert("components".into(), doc["components"].clone());
    let validator = jsonschema::draft202012::new(&Value::Object(wrapper)).unwrap();
    let mut bad = json_file("/api/v1/countries.json");
    bad["data"][0]["toggles"]["saft_required"] = json!("yes");
    assert!(!validator.is_valid(&bad));
}

#[test]
fn a_second_build_writes_nothing_and_clean_builds_are_reproducible() {
    let project = scratch_project();
    let first = locref(project.path(), &["build", "--out", "site"], EPOCH);
    assert!(first.status.success(), "{}", text(&first.stderr));
    let mtimes = |dir: &Path| -> Vec<std::time::SystemTime> {
        tree(dir)
            .keys()
            .map(|p| {
                std::fs::metadata(dir.join(&p[1..]))
                    .unwrap()
                    .modified()
                    .unwrap()
            })
            .collect()
    };
    let before = mtimes(&project.path().join("site"));
    // An hour later, the same day (a later day moves the calendar's windows, and rewrites its page).
    let second = locref(project.path(), &["build", "--out", "site"], "1790003600");
    let stdout = text(&second.stdout);
    assert!(
        stdout.contains(" 0 written, ") && stdout.contains(" 0 removed"),
        "{stdout}"
    );
    assert!(!stdout.contains("wrote "), "{stdout}");
    assert_eq!(mtimes(&project.path().join("site")), before);
    // generated_at of unchanged content stays that of the build that wrote it.
    let index: Value = serde_json::from_slice(
        &std::fs::read(project.path().join("site/api/v1/index.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(index["meta"]["generated_at"], "2026-09-21T14:13:20Z");

    let clean = locref(
        project.path(),
        &["build", "--out", "site", "--clean"],
        EPOCH,
    );
    assert!(clean.status.success(), "{}", text(&clean.stderr));
    assert_eq!(
        tree(&project.path().join("site")),
        shipped().files,
        "two clean builds with SOURCE_DATE_EPOCH are byte-identical"
    );
    // The manifest stays outside the published tree.
    assert!(
        project
            .path()
            .join(".locref-cache/site.manifest.json")
            .is_file()
    );
    assert!(
        !tree(&project.path().join("site"))
            .keys()
            .any(|p| p.contains("manifest"))
    );
}

#[test]
fn an_edit_rewrites_only_what_changed_and_restamps_only_that() {
    let project = built_project();
    let partners = project.path().join("sources/tables/partners.csv");
    let original = std::fs::read_to_string(&partners).unwrap();
    // Change one partner's summary text: the partner lists (JSON and page) and that country (its JSON,
    // its page and the pages' Markdown twins) change; nothing else.
    let mut reader = csv::Reader::from_reader(original.as_bytes());
    let record = reader.records().next().unwrap().unwrap();
    let (country, erp, summary) = (
        record[0].to_string(),
        record[1].to_string(),
        record[4].to_string(),
    );
    let edited = original.replacen(&summary, &format!("{summary} Edited."), 1);
    std::fs::write(&partners, edited).unwrap();
    // Later the same day: the calendar's windows stay where they were.
    let run = locref(project.path(), &["build", "--out", "site"], "1790003600");
    let stdout = text(&run.stdout);
    let written: BTreeSet<&str> = stdout
        .lines()
        .filter_map(|l| l.trim().strip_prefix("wrote"))
        .map(str::trim)
        .collect();
    let expected: BTreeSet<String> = [
        "/api/v1/partners.json".to_string(),
        "/partners/index.html".to_string(),
        "/partners/index.md".to_string(),
        // Every Markdown twin is part of llms-full.txt.
        "/llms-full.txt".to_string(),
        format!("/api/v1/countries/{country}.json"),
        format!("/{country}/index.html"),
        format!("/{country}/index.md"),
        // A release records every partner: the edit is a change not released yet, listed on
        // /changes/, in changes.json (and counted in the index), in the site's, the country's and the
        // partner's ERP's feeds and on that ERP's page (its History).
        "/api/v1/changes.json".to_string(),
        "/api/v1/index.json".to_string(),
        "/changes.xml".to_string(),
        "/changes/index.html".to_string(),
        "/changes/index.md".to_string(),
        format!("/{country}/changes.xml"),
        format!("/erp/{erp}/changes.xml"),
        format!("/erp/{erp}/index.html"),
        format!("/erp/{erp}/index.md"),
    ]
    .into();
    assert_eq!(
        written,
        expected.iter().map(String::as_str).collect(),
        "{stdout}"
    );
    let detail: Value = serde_json::from_slice(
        &std::fs::read(
            project
                .path()
                .join(format!("site/api/v1/countries/{country}.json")),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(detail["meta"]["generated_at"], "2026-09-21T15:13:20Z");
    let index: Value = serde_json::from_slice(
        &std::fs::read(project.path().join("site/api/v1/index.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(index["meta"]["generated_at"], "2026-09-21T15:13:20Z");
    // The sitemap dates pages by the data (the days answers were checked, the releases), which a
    // summary's wording does not change: it is not written again (the set above).
    // A page's footer says when its own content last changed, in the page and in its Markdown twin.
    let updated = |page: &str| footer_updated(&project.path().join("site"), page);
    for page in [
        format!("/{country}/"),
        "/partners/".to_string(),
        "/changes/".to_string(),
    ] {
        assert_eq!(updated(&page), ["2026-09-21T15:13:20Z"; 3], "{page}");
    }
    for page in ["/", "/api/"] {
        assert_eq!(updated(page), ["2026-09-21T14:13:20Z"; 3], "{page}");
    }
    // llms-full.txt carries the twins without their footers, so it shows no page's time as its own: its
    // heading says once when the file last changed (with this edit).
    let full = std::fs::read_to_string(project.path().join("site/llms-full.txt")).unwrap();
    assert!(!full.contains("This page was last updated"));
    assert_eq!(full.matches("This file was last updated").count(), 1);
    assert!(full.contains("This file was last updated 2026-09-21T15:13:20Z;"));
}

/// The "last updated" time in the footer of the page at `page` (a directory path) as the reader sees it:
/// the `<time>` element's `datetime` and text in `index.html`, and the time in `index.md`.
fn footer_updated(site: &Path, page: &str) -> [String; 3] {
    let read = |file: &str| std::fs::read_to_string(site.join(&page[1..]).join(file)).unwrap();
    let after = |text: &str, start: &str, end: char| {
        let at = text
            .find(start)
            .unwrap_or_else(|| panic!("{page}: no {start:?} in {text}"))
            + start.len();
        text[at..at + text[at..].find(end).unwrap()].to_string()
    };
    let html = read("index.html");
    let html_time = after(
        &html,
        "last updated <time class=\"updated\" datetime=\"",
        '<',
    );
    let (datetime, shown) = html_time.split_once("\">").unwrap();
    let markdown = after(&read("index.md"), "This page was last updated ", '\n');
    let markdown = markdown.strip_suffix('.').unwrap_or(&markdown);
    [
        datetime.to_string(),
        shown.to_string(),
        markdown.to_string(),
    ]
}

#[test]
fn a_bad_source_reports_every_located_error_and_writes_nothing() {
    let project = built_project();
    let before = tree(&project.path().join("site"));
    let matrix = project.path().join("sources/tables/matrix.csv");
    let text_before = std::fs::read_to_string(&matrix).unwrap();
    let mut lines: Vec<String> = text_before.lines().map(str::to_string).collect();
    lines[1] = lines[1].replacen("unknown/unverified", "maybe", 1);
    lines[2] = lines[2]
        .replacen(",ad,", ",zz,", 1)
        .replacen("ad,", "zz,", 1);
    std::fs::write(&matrix, lines.join("\n") + "\n").unwrap();
    let vat = project.path().join("sources/tables/vat.csv");
    let vat_text = std::fs::read_to_string(&vat).unwrap();
    let ad = vat_text.lines().find(|l| l.starts_with("ad,")).unwrap();
    let broken: Vec<&str> = ad.split(',').collect();
    let broken_ad = format!("{},{},high,{}", broken[0], broken[1], broken[3..].join(","));
    std::fs::write(&vat, vat_text.replacen(ad, &broken_ad, 1)).unwrap();
    let vat_line = vat_text.lines().position(|l| l.starts_with("ad,")).unwrap() + 1;
    let run = locref(project.path(), &["build", "--out", "site"], "1800000000");
    assert_eq!(run.status.code(), Some(1));
    let stderr = text(&run.stderr);
    let col = |line: &str, needle: &str| line.find(needle).unwrap() + 1;
    assert!(
        stderr.contains(&format!("sources/tables/matrix.csv:2:{}: error: support_type `maybe` is not in rules/vocabulary.toml", col(&lines[1], "maybe"))),
        "{stderr}"
    );
    assert!(
        stderr.contains("sources/tables/matrix.csv:3:1: error: unknown country code `zz`"),
        "{stderr}"
    );
    let rate_column = broken_ad.find("high").unwrap() + 1;
    assert!(
        stderr.contains(&format!(
            "sources/tables/vat.csv:{vat_line}:{rate_column}: error: `high` is not a percent rate"
        )),
        "{stderr}"
    );
    // `maybe` is also an answer without a source: its source, evidence and date are each reported.
    assert!(
        stderr.contains("error: matrix cell `maybe` needs the URL of the source that was read"),
        "{stderr}"
    );
    assert_eq!(
        stderr.lines().filter(|l| l.contains(": error: ")).count(),
        6,
        "all errors, each once: {stderr}"
    );
    assert!(stderr.contains("nothing was written"), "{stderr}");
    assert_eq!(
        tree(&project.path().join("site")),
        before,
        "the output stays at the last good build"
    );

    let check = locref(project.path(), &["check"], EPOCH);
    assert_eq!(check.status.code(), Some(1));
    assert_eq!(
        text(&check.stderr),
        stderr,
        "check reports the same diagnostics"
    );
}

#[test]
fn check_writes_nothing() {
    let project = scratch_project();
    let run = locref(project.path(), &["check"], EPOCH);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let entries: BTreeSet<String> = std::fs::read_dir(project.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        entries,
        BTreeSet::from(["rules".to_string(), "sources".to_string()])
    );
}

#[test]
fn clean_refuses_folders_locref_did_not_create() {
    let project = scratch_project();
    let foreign = project.path().join("mine");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("notes.txt"), "keep me").unwrap();
    let run = locref(
        project.path(),
        &["build", "--out", "mine", "--clean"],
        EPOCH,
    );
    assert_eq!(run.status.code(), Some(3));
    assert!(
        text(&run.stderr).contains("locref did not write (/notes.txt)"),
        "{}",
        text(&run.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(foreign.join("notes.txt")).unwrap(),
        "keep me"
    );
    for protected in [".", "sources", "rules/.."] {
        let run = locref(
            project.path(),
            &["build", "--out", protected, "--clean", "--force"],
            EPOCH,
        );
        assert_eq!(run.status.code(), Some(3), "{protected}");
        assert!(
            text(&run.stderr).contains("refusing to delete"),
            "{protected}: {}",
            text(&run.stderr)
        );
    }
    assert!(project.path().join("sources/tables/matrix.csv").is_file());
    // What no build can make again: a repository's own folder, a work tree, a tool's cache, locref's
    // cache. Refused even with --force, and left whole.
    let root = project.path();
    std::fs::create_dir_all(root.join(".git/objects")).unwrap();
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::create_dir_all(root.join("pages")).unwrap();
    std::fs::write(root.join("pages/.git"), "gitdir: ../.git/worktrees/pages\n").unwrap();
    std::fs::create_dir_all(root.join("target")).unwrap();
    std::fs::write(
        root.join("target/CACHEDIR.TAG"),
        "Signature: 8a477f597d28d172789f06886806bc55\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.join(".locref-cache")).unwrap();
    std::fs::write(root.join(".locref-cache/keep"), "x").unwrap();
    let kept = |root: &Path| {
        [
            ".git/HEAD",
            "pages/.git",
            "target/CACHEDIR.TAG",
            ".locref-cache/keep",
        ]
        .map(|p| root.join(p).is_file())
    };
    for protected in [".git", ".git/objects", "pages", "target", ".locref-cache"] {
        let run = locref(
            root,
            &["build", "--out", protected, "--clean", "--force"],
            EPOCH,
        );
        assert_eq!(
            run.status.code(),
            Some(3),
            "{protected}: {}",
            text(&run.stdout)
        );
        assert!(
            text(&run.stderr).contains("refusing to"),
            "{protected}: {}",
            text(&run.stderr)
        );
        assert_eq!(kept(root), [true; 4], "{protected}");
    }
    // A repository's own folder and locref's cache are never an output folder, even without --clean.
    for protected in [".git", ".locref-cache"] {
        let run = locref(root, &["build", "--out", protected], EPOCH);
        assert_eq!(run.status.code(), Some(3), "{protected}");
    }
    // A folder locref built can be cleaned; --force overrides foreign files.
    assert!(
        locref(project.path(), &["build", "--out", "site"], EPOCH)
            .status
            .success()
    );
    assert!(
        locref(
            project.path(),
            &["build", "--out", "site", "--clean"],
            EPOCH
        )
        .status
        .success()
    );
    assert!(
        locref(
            project.path(),
            &["build", "--out", "mine", "--clean", "--force"],
            EPOCH
        )
        .status
        .success()
    );
    assert!(!foreign.join("notes.txt").exists());
}

/// A session that writes `<root>/site` at a fixed time, and that folder.
fn site_session(root: &Path) -> (std::path::PathBuf, locref::session::Session) {
    let out = root.join("site");
    let session = locref::session::Session::load(root, &out, &SITE)
        .unwrap()
        // Later the same day as the build it follows (a later day would move the calendar's windows).
        .with_fixed_time("2026-09-21T20:00:00Z");
    (out, session)
}

#[cfg(feature = "streaming")] // spares are speed machinery
#[test]
fn rebuilds_keep_spare_files_outside_the_output_and_clean_removes_them() {
    let project = built_project();
    let root = project.path();
    let (out, mut session) = site_session(root);
    assert!(session.build().written().is_empty());
    let countries = root.join("sources/tables/countries.csv");
    let original = std::fs::read_to_string(&countries).unwrap();
    let edited = original.replacen(
        "fr,VAT / GST,TVA. Standard rate 20%",
        "fr,VAT / GST,TVA (spare check). Standard rate 20%",
        1,
    );
    for text in [&edited, &original] {
        std::fs::write(&countries, text).unwrap();
        let report = session.rebuild(std::slice::from_ref(&countries));
        assert!(
            report.written().contains(&"/api/v1/facts.json".to_string()),
            "{report}"
        );
    }
    // The output folder holds the outputs and nothing else: no temporary or spare file is published.
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(locref::outdir::manifest_path(&out)).unwrap())
            .unwrap();
    let published: BTreeSet<String> = manifest["files"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(tree(&out).into_keys().collect::<BTreeSet<_>>(), published);
    // The edit undone is published, stamped with the session's time; a session that writes to a folder
    // keeps no copy of the site in memory (the files are the site).
    let facts = text(&std::fs::read(out.join("api/v1/facts.json")).unwrap());
    assert!(!facts.contains("TVA (spare check)"));
    assert!(facts.contains("\"generated_at\": \"2026-09-21T20:00:00Z\""));
    assert!(session.site().is_empty());
    if cfg!(target_os = "linux") {
        // The spare of facts.json holds the version before the last write: the edited one.
        let spare = locref::outdir::spare_root(&out).join("api/v1/facts.json");
        assert!(text(&std::fs::read(&spare).unwrap()).contains("TVA (spare check)"));
    }
    // The session claims the folder while it lives (see the next test).
    drop(session);
    let run = locref(root, &["build", "--out", "site", "--clean"], EPOCH);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(!locref::outdir::spare_root(&out).exists());
    assert!(out.join("api/v1/facts.json").is_file());
}

/// Two locref processes writing one folder would replace and remove each other's files: a build into a
/// folder a watch session writes is refused, with a clear error, and changes nothing; once the session
/// ends, the same build runs.
#[test]
fn a_build_into_a_folder_another_locref_is_writing_is_refused_and_changes_nothing() {
    let project = built_project();
    let root = project.path();
    let (out, mut session) = site_session(root);
    session.build();
    let before = tree(&out);
    replace_once(
        root,
        "sources/tables/countries.csv",
        "fr,VAT / GST,TVA.",
        "fr,VAT / GST,TVA (locked).",
    );
    // The folder is one folder by its resolved path: a link to it, or a spelling through `..`, is the
    // same folder, locked the same.
    #[cfg(unix)]
    std::os::unix::fs::symlink(&out, root.join("alias")).unwrap();
    std::fs::create_dir_all(root.join("sub")).unwrap();
    for args in [
        &["build", "--out", "site"][..],
        &["build", "--out", "site", "--clean"],
        #[cfg(unix)]
        &["build", "--out", "alias"],
        &["build", "--out", "sub/../site"],
    ] {
        let run = locref(root, args, EPOCH);
        assert_eq!(run.status.code(), Some(3), "{args:?}");
        assert!(
            text(&run.stderr).contains("another locref (a build or a watch) is writing to"),
            "{}",
            text(&run.stderr)
        );
        assert!(tree(&out) == before, "{args:?} changed the folder");
    }
    drop(session);
    let run = locref(root, &["build", "--out", "site"], EPOCH);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(text(&std::fs::read(out.join("fr/index.md")).unwrap()).contains("TVA (locked)"));
}

#[cfg(target_os = "linux")]
#[cfg(feature = "streaming")] // spares are speed machinery
#[test]
fn a_session_makes_the_spares_of_its_outputs_after_the_first_build() {
    let project = built_project();
    let root = project.path();
    let (out, mut session) = site_session(root);
    let spares = locref::outdir::spare_root(&out);
    session.build();
    session.settle();
    // Every output has a spare of its own: a copy of it, under the same relative path, and nothing else
    // (no temporary file) is left in the spares' folder.
    let published = tree(&out);
    assert_eq!(published.len(), crate::common::shipped_outputs());
    assert_eq!(tree(&spares), published);
    for site_path in published.keys() {
        let path = site_path.trim_start_matches('/');
        assert_ne!(
            inode(&out.join(path)),
            inode(&spares.join(path)),
            "{path}: a spare is a file of its own"
        );
    }
    // The first edit writes through them: each written output's spare now holds its version before the
    // edit, and the output folder the new one.
    let countries = crate::common::replace_once(
        root,
        "sources/tables/countries.csv",
        "fr,VAT / GST,TVA. Standard rate 20%",
        "fr,VAT / GST,TVA (first edit). Standard rate 20%",
    );
    let report = session.rebuild(std::slice::from_ref(&countries));
    assert!(
        report.written().contains(&"/fr/index.html".to_string()),
        "{report}"
    );
    for site_path in report.written() {
        let path = site_path.trim_start_matches('/');
        assert_eq!(
            std::fs::read(spares.join(path)).unwrap(),
            published[site_path],
            "{path}"
        );
        assert_ne!(
            std::fs::read(out.join(path)).unwrap(),
            published[site_path],
            "{path}: the new version is in place"
        );
    }
    assert!(text(&std::fs::read(out.join("fr/index.md")).unwrap()).contains("TVA (first edit)"));
}

#[cfg(all(target_os = "linux", feature = "streaming"))]
fn inode(path: &std::path::Path) -> u64 {
    std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(path).unwrap())
}

#[test]
fn build_removes_outputs_that_no_longer_exist() {
    let project = built_project();
    let filters = project.path().join("rules/filters.toml");
    let text_before = std::fs::read_to_string(&filters).unwrap();
    let cut = text_before
        .find("[[filter]]\nslug = \"saft-required\"")
        .unwrap();
    let end = text_before[cut..].find("\n\n").unwrap() + cut + 2;
    std::fs::write(
        &filters,
        format!("{}{}", &text_before[..cut], &text_before[end..]),
    )
    .unwrap();
    let run = locref(project.path(), &["build", "--out", "site"], EPOCH);
    assert!(
        text(&run.stdout).contains("removed /api/v1/filters/saft-required.json"),
        "{}",
        text(&run.stdout)
    );
    assert!(
        !project
            .path()
            .join("site/api/v1/filters/saft-required.json")
            .exists()
    );
    let index: Value = serde_json::from_slice(
        &std::fs::read(project.path().join("site/api/v1/index.json")).unwrap(),
    )
    .unwrap();
    assert!(
        !serde_json::to_string(&index)
            .unwrap()
            .contains("saft-required")
    );
}

#[test]
fn outputs_are_never_written_into_the_project_or_its_inputs() {
    let project = scratch_project();
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let parent = project.path().parent().unwrap().display().to_string();
    for out in [
        "sources/site",
        "rules/x/y",
        ".",
        "sources/../rules/z",
        "sources",
        "rules",
        "..",
        parent.as_str(),
        "/",
        home.as_str(),
    ] {
        for command in ["build", "watch"] {
            let run = locref(project.path(), &[command, "--out", out], EPOCH);
            assert_eq!(run.status.code(), Some(3), "{command} --out {out}");
            assert!(
                text(&run.stderr).contains("refusing to write into"),
                "{command} --out {out}: {}",
                text(&run.stderr)
            );
        }
    }
    assert!(
        !project.path().join("sources/site").exists() && !project.path().join("rules/x").exists()
    );
    assert!(
        !project.path().join("api").exists(),
        "nothing was written into the project root"
    );
}

/// `--out` for a run of `locref build` whose writes fail past `limit` bytes per file: the file-size limit
/// of the process (and SIGXFSZ ignored, so the write fails with an error as on a full disk).
fn build_with_file_size_limit(project: &Path, out: &str, limit_kb: u32) -> Output {
    Command::new("bash")
        .args([
            "-c",
            &format!("trap '' XFSZ; ulimit -f {limit_kb}; exec \"$0\" build --out {out}",),
            env!("CARGO_BIN_EXE_locref"),
        ])
        .current_dir(project)
        .env("SOURCE_DATE_EPOCH", EPOCH)
        .output()
        .unwrap()
}

#[test]
fn a_write_that_fails_names_the_file_and_leaves_the_last_good_build() {
    let project = built_project();
    let root = project.path();
    let before = tree(&root.join("site"));
    let manifest = std::fs::read(locref::outdir::manifest_path(&root.join("site"))).unwrap();
    // An edit that rewrites facts.json (over 500 KB) among others; the disk "fills up" on it.
    crate::common::replace_once(
        root,
        "sources/tables/countries.csv",
        "fr,VAT / GST,TVA",
        "fr,VAT / GST,TVA (no room)",
    );
    let run = build_with_file_size_limit(root, "site", 500);
    assert_eq!(run.status.code(), Some(3), "{}", text(&run.stderr));
    let stderr = text(&run.stderr);
    assert!(
        stderr.contains("facts.json") && stderr.contains("File too large"),
        "the error names the file: {stderr}"
    );
    assert_eq!(
        tree(&root.join("site")),
        before,
        "the output stays at the last good build"
    );
    assert_eq!(
        std::fs::read(locref::outdir::manifest_path(&root.join("site"))).unwrap(),
        manifest
    );
    // The manifest and the folder's (empty) lock file.
    let cache = tree(&locref::outdir::cache_dir(&root.join("site")));
    assert_eq!(
        cache.keys().collect::<Vec<_>>(),
        ["/site.lock", "/site.manifest.json"],
        "no staged file is left behind"
    );
    // With room again, the next build publishes the edit.
    let run = locref(root, &["build", "--out", "site"], EPOCH);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert!(text(&tree(&root.join("site"))["/api/v1/facts.json"]).contains("TVA (no room)"));
}

#[test]
fn a_killed_build_is_repaired_by_the_next_one() {
    let project = built_project();
    let root = project.path();
    let site = root.join("site");
    let good = tree(&site);
    // What a build killed half way leaves: its journal, a file it had replaced, a file it had added,
    // and a temporary file of an earlier version inside the folder.
    let journal = locref::outdir::journal_path(&site);
    std::fs::write(&journal, br#"["/fr/index.html","/api/v1/new.json"]"#).unwrap();
    std::fs::write(site.join("fr/index.html"), b"half of a build").unwrap();
    std::fs::write(site.join("api/v1/new.json"), b"{}").unwrap();
    std::fs::write(site.join("api/v1/.facts.json.locref-tmp-4242"), b"").unwrap();
    let run = locref(root, &["build", "--out", "site"], EPOCH);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert_eq!(
        tree(&site),
        good,
        "the folder is exactly the good build again"
    );
    assert!(!journal.exists());
    // And --clean accepts the folder as locref's own.
    std::fs::write(site.join("api/v1/.x.json.locref-tmp-1"), b"").unwrap();
    let run = locref(root, &["build", "--out", "site", "--clean"], EPOCH);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert_eq!(tree(&site), good);
}

#[test]
fn a_one_off_build_keeps_no_copy_of_the_site_in_the_cache() {
    let project = built_project();
    let root = project.path();
    for marker in ["one", "two"] {
        crate::common::replace_once(
            root,
            "sources/tables/countries.csv",
            "fr,VAT / GST,TVA",
            &format!("fr,VAT / GST,TVA ({marker})"),
        );
        let run = locref(root, &["build", "--out", "site"], EPOCH);
        assert!(run.status.success(), "{}", text(&run.stderr));
    }
    // The manifest and the folder's (empty) lock file: no copy of the site.
    let cache = tree(&locref::outdir::cache_dir(&root.join("site")));
    assert_eq!(
        cache.keys().collect::<Vec<_>>(),
        ["/site.lock", "/site.manifest.json"]
    );
}

#[test]
fn a_huge_broken_table_gives_a_screenful_of_errors() {
    let project = scratch_project();
    let mut text_of = String::from(
        "country_code,name,segment,description,website,source,verification,last_verified\n",
    );
    for i in 0..100_000 {
        text_of.push_str(&format!(
            "qq,Name {i},ERP,x,not-a-url,https://www.vatupdate.com/,unverified,2026-11-27\n"
        ));
    }
    std::fs::write(
        project.path().join("sources/tables/local_erps.csv"),
        text_of,
    )
    .unwrap();
    let run = locref(project.path(), &["build", "--out", "site"], EPOCH);
    assert_eq!(run.status.code(), Some(1));
    let stderr = text(&run.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines.len(),
        52,
        "50 errors, the count of the rest, the total"
    );
    assert!(
        lines[50].starts_with("sources/tables/local_erps.csv:")
            && lines[50].contains("more error(s) in this file from here on are not shown"),
        "{}",
        lines[50]
    );
    assert_eq!(lines[51], "200000 error(s); nothing was written");
}

#[cfg(unix)]
#[test]
fn an_unreadable_source_is_named_in_the_error() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    use std::os::unix::process::CommandExt;
    let project = scratch_project();
    let root = project.path();
    let file = root.join("sources/tables/vat.csv");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o000)).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_locref"));
    command.arg("check").current_dir(root);
    // Root reads any file: run as `nobody` then, in a project it may enter, and a copy of the binary it
    // may execute (the build folder may sit in a directory only root can enter).
    if std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0) {
        std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o755)).unwrap();
        let binary = root.join("locref");
        std::fs::copy(env!("CARGO_BIN_EXE_locref"), &binary).unwrap();
        std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).unwrap();
        command = Command::new(&binary);
        command.arg("check").current_dir(root).uid(65534).gid(65534);
    }
    let run = command.output().unwrap();
    assert_eq!(run.status.code(), Some(3), "{}", text(&run.stderr));
    let stderr = text(&run.stderr);
    assert!(
        stderr.contains("sources/tables/vat.csv") && stderr.contains("Permission denied"),
        "{stderr}"
    );
}

#[test]
fn the_toggle_explanations_agree_with_the_toggles_and_name_their_phase() {
    let toggles = json_file("/api/v1/toggles.json");
    let countries = json_file("/api/v1/countries.json");
    let items = toggles["data"].as_array().unwrap();
    assert_eq!(items.len(), 61 * 6);
    let phases = text(
        &std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("sources/tables/obligations.csv"),
        )
        .unwrap(),
    );
    for item in items {
        let code = item["country"].as_str().unwrap();
        let toggle = item["toggle"].as_str().unwrap();
        let country = countries["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["code"] == code)
            .unwrap();
        assert_eq!(item["value"], country["toggles"][toggle], "{code} {toggle}");
        assert_eq!(item["reference_date"], "2026-10-16");
        if item["value"].is_null() {
            assert!(
                item["phase_id"].is_null() && item["why_null"].is_string(),
                "{item}"
            );
        } else {
            // The phase that set it is a row of the obligations table, with its obligation.
            let id = item["phase_id"].as_str().unwrap();
            let obligation = item["obligation"].as_str().unwrap();
            let phase = id.strip_prefix(&format!("{code}-{obligation}-")).unwrap();
            assert!(
                phases.contains(&format!("\n{code},{obligation},{phase},")),
                "{id}"
            );
            assert!(
                item["rule"].as_u64().is_some() && item["condition"].is_string(),
                "{item}"
            );
        }
    }
}

#[test]
fn the_calendar_lists_every_dated_phase_in_date_order_and_its_ics_parses() {
    let calendar = json_file("/api/v1/calendar.json");
    let entries = calendar["data"].as_array().unwrap();
    assert!(entries.len() > 100, "{} dated phases", entries.len());
    // In order of the first day of their dates.
    let first_day = |date: &str| match date.len() {
        4 => format!("{date}-01-01"),
        7 => format!("{date}-01"),
        _ => date.to_string(),
    };
    let days: Vec<String> = entries
        .iter()
        .map(|e| first_day(e["date"].as_str().unwrap()))
        .collect();
    assert!(days.windows(2).all(|w| w[0] <= w[1]), "calendar order");
    // Germany's three B2B phases, as recorded.
    for (phase, date, status) in [
        ("receive", "2025-01-01", "in-force"),
        ("issue-large", "2027-01-01", "enacted"),
        ("issue-all", "2028-01-01", "enacted"),
    ] {
        let id = format!("de-b2b-e-invoicing-{phase}");
        let entry = entries.iter().find(|e| e["id"] == id.as_str()).unwrap();
        assert_eq!(
            (entry["date"].as_str(), entry["status"].as_str()),
            (Some(date), Some(status))
        );
        assert_eq!(entry["fact_id"], "de-e-invoicing");
    }

    // The iCalendar file, read by an independent parser: one event per entry, with the phase's id as its
    // UID, all-day dates spanning the recorded day, month or year.
    let ics = &shipped().files["/calendar.ics"];
    let mut parser = ical::IcalParser::new(ics.as_slice());
    let parsed = parser
        .next()
        .expect("one calendar")
        .expect("a valid iCalendar file");
    assert!(parser.next().is_none());
    assert_eq!(parsed.events.len(), entries.len());
    // RFC 5545 allows one PRODID.
    let prodids = parsed
        .properties
        .iter()
        .filter(|p| p.name == "PRODID")
        .count();
    assert_eq!(prodids, 1, "one PRODID");
    let property =
        |event: &ical::parser::ical::component::IcalEvent, name: &str| -> (String, Vec<String>) {
            let p = event
                .properties
                .iter()
                .find(|p| p.name == name)
                .unwrap_or_else(|| panic!("{name}"));
            let params = p
                .params
                .iter()
                .flatten()
                .map(|(k, v)| format!("{k}={}", v.join(",")))
                .collect();
            (p.value.clone().unwrap_or_default(), params)
        };
    let mut uids = BTreeSet::new();
    for (event, entry) in parsed.events.iter().zip(entries) {
        let (uid, _) = property(event, "UID");
        assert_eq!(
            uid,
            format!("{}@locref.example.org", entry["id"].as_str().unwrap())
        );
        assert!(uids.insert(uid));
        let (start, params) = property(event, "DTSTART");
        assert_eq!(params, ["VALUE=DATE"]);
        let (end, _) = property(event, "DTEND");
        let date = entry["date"].as_str().unwrap();
        let compact = first_day(date).replace('-', "");
        assert_eq!(start, compact, "{date}");
        // A one-day event: a month or a year stays coarse, and its title says so.
        let next_day = {
            let day: jiff::civil::Date = first_day(date).parse().unwrap();
            day.tomorrow().unwrap().to_string().replace('-', "")
        };
        let expected_end = next_day;
        let (summary, _) = property(event, "SUMMARY");
        match date.len() {
            4 => assert!(summary.ends_with("(year only)"), "{summary}"),
            7 => assert!(summary.ends_with("(month only)"), "{summary}"),
            _ => assert!(!summary.contains(" only)"), "{summary}"),
        }
        assert_eq!(end, expected_end, "{date}");
        assert!(property(event, "DTSTAMP").0.ends_with("T000000Z"));
    }
}

#[test]
fn an_edited_phase_keeps_its_calendar_event_and_changes_its_text() {
    let project = built_project();
    let root = project.path();
    let ics = |root: &Path| text(&std::fs::read(root.join("site/calendar.ics")).unwrap());
    let before = ics(root);
    crate::common::replace_once(
        root,
        "sources/tables/obligations.csv",
        "de,b2b-e-invoicing,issue-large,enacted,2027-01-01,\"businesses with prior-year turnover",
        "de,b2b-e-invoicing,issue-large,enacted,2027-01-01,\"businesses with a prior-year turnover",
    );
    let run = locref(root, &["build", "--out", "site"], EPOCH);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let after = ics(root);
    let uids = |ics: &str| -> Vec<String> {
        ics.lines()
            .filter(|l| l.starts_with("UID:"))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(
        uids(&before),
        uids(&after),
        "the same events, updated in place"
    );
    assert_ne!(before, after);
    assert!(
        after
            .replace("\r\n ", "")
            .contains("businesses with a prior-year turnover")
    );
}

/// `--clean` happens only once the new build checked out: a build whose pages fail the link check
/// (found after every output was rendered and staged) leaves the last good build as it was, and stages
/// nothing that outlives it. A good `--clean` build then holds exactly its outputs.
#[test]
fn a_clean_build_that_fails_the_page_check_leaves_the_last_good_build() {
    let project = built_project();
    let root = project.path();
    let before = tree(&root.join("site"));
    let template = root.join("rules/templates/sponsors.html");
    let good = std::fs::read_to_string(&template).unwrap();
    // In the main block (the last one).
    let at = good.rfind("{% endblock %}").unwrap();
    let broken = format!("{}<a href=\"/nowhere/\">x</a>{}", &good[..at], &good[at..]);
    assert_ne!(broken, good);
    std::fs::write(&template, broken).unwrap();
    let run = locref(root, &["build", "--out", "site", "--clean"], EPOCH);
    assert_eq!(run.status.code(), Some(1), "{}", text(&run.stdout));
    assert!(
        text(&run.stderr).contains("broken link \"/nowhere/\""),
        "{}",
        text(&run.stderr)
    );
    assert!(text(&run.stderr).contains("nothing was written"));
    assert_eq!(tree(&root.join("site")), before, "the last good build");
    let staging = root.join(".locref-cache/site.staging");
    let staged = std::fs::read_dir(&staging).map_or(0, |d| d.count());
    assert_eq!(staged, 0, "nothing left staged in {}", staging.display());

    std::fs::write(&template, good).unwrap();
    std::fs::write(root.join("site/left-over.txt"), "from an earlier build").unwrap();
    let run = locref(
        root,
        &["build", "--out", "site", "--clean", "--force"],
        EPOCH,
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert_eq!(tree(&root.join("site")), before, "exactly the outputs");
}

/// The text of an HTML fragment, tags dropped and entities that the templates escape decoded.
fn plain(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&amp;", "&")
        .replace("&quot;", "\"")
        .replace("&#x27;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
}

/// How every page shows a toggle: "yes", "yes: <limit>", "no", "no (absence check)" or "unknown".
fn answer_text(value: &Value, limit: Option<&str>, absence: bool) -> String {
    match (value, limit) {
        (Value::Bool(true), Some(limit)) => format!("yes: {limit}"),
        (Value::Bool(true), None) => "yes".to_string(),
        (Value::Bool(false), _) if absence => "no (absence check)".to_string(),
        (Value::Bool(false), _) => "no".to_string(),
        _ => "unknown".to_string(),
    }
}

#[test]
fn toggles_agree_in_the_api_the_data_files_and_the_pages_and_absence_is_marked_in_each() {
    let derivations = json_file("/api/v1/toggles.json");
    let data = json_file("/data/toggles.json");
    let data_rows = data.as_array().unwrap();
    let csv = &shipped().files["/data/toggles.csv"];
    let (header, csv_rows) = csv_records(csv);
    let column = |name: &str| header.iter().position(|h| h == name).unwrap();
    let home = text(&shipped().files["/index.html"]);
    let (mut absences, mut limits) = (0, 0);
    let rows = derivations["data"].as_array().unwrap();
    assert_eq!(rows.len(), COUNTRY_CODES.split(' ').count() * TOGGLES.len());
    for d in rows {
        let (code, toggle) = (
            d["country"].as_str().unwrap(),
            d["toggle"].as_str().unwrap(),
        );
        let limit = d["limit"].as_str();
        let absence = d["rests_on_absence"] == true;
        absences += usize::from(absence);
        limits += usize::from(limit.is_some());
        // The API's country and toggles.json.
        let country = json_file(&format!("/api/v1/countries/{code}.json"));
        assert_eq!(
            country["data"]["toggles"][toggle], d["value"],
            "{code} {toggle}"
        );
        // data/toggles.json and .csv.
        let record = data_rows
            .iter()
            .find(|r| r["country_code"] == code && r["toggle"] == toggle)
            .unwrap_or_else(|| panic!("{code} {toggle} not in data/toggles.json"));
        // The same JSON value as the API's (a boolean or null), and in the CSV as Table Schema spells it.
        assert_eq!(record["value"], d["value"], "{code} {toggle}");
        let value_text = match &d["value"] {
            Value::Bool(b) => json!(b.to_string()),
            _ => Value::Null,
        };
        assert_eq!(record["limit"].as_str(), limit, "{code} {toggle}");
        assert_eq!(
            record["rests_on_absence"],
            json!(absence),
            "{code} {toggle}"
        );
        let csv_absence = csv_rows
            .iter()
            .find(|r| r[column("country_code")] == code && r[column("toggle")] == toggle)
            .map(|r| r[column("rests_on_absence")].clone());
        assert_eq!(
            csv_absence.as_deref(),
            Some(if absence { "true" } else { "false" })
        );
        assert_eq!(record["phase_id"], d["phase_id"], "{code} {toggle}");
        let row = csv_rows
            .iter()
            .find(|r| r[column("country_code")] == code && r[column("toggle")] == toggle)
            .unwrap();
        assert_eq!(
            row[column("value")],
            value_text.as_str().unwrap_or_default()
        );
        assert_eq!(row[column("limit")], limit.unwrap_or_default());
        // The country page's row of the toggle.
        let expected = answer_text(&d["value"], limit, absence);
        let page = text(&shipped().files[&format!("/{code}/index.html")]);
        let start = page
            .find(&format!("<tr id=\"toggle-{toggle}\">"))
            .unwrap_or_else(|| panic!("/{code}/ has no row for {toggle}"));
        let cell_start = start + page[start..].find("<td class=\"answer").unwrap();
        let cell = &page[cell_start..cell_start + page[cell_start..].find("</td>").unwrap()];
        let shown = plain(cell);
        assert!(
            shown.starts_with(&expected),
            "/{code}/ shows `{shown}` for {toggle}, the API says `{expected}`"
        );
        if absence {
            assert!(shown.starts_with("no (absence check)"));
        }
        let twin = text(&shipped().files[&format!("/{code}/index.md")]);
        assert!(
            twin.contains(&format!("| {expected} |")),
            "/{code}/index.md does not show `{expected}` for {toggle}"
        );
    }
    // The home page's table shows the same answers, row by row (a country per row, toggles in order).
    for code in COUNTRY_CODES.split(' ') {
        let start = home
            .find(&format!(
                "<tr data-c=\"{code}\"><th scope=\"row\"><a href=\"/{code}/\">"
            ))
            .unwrap_or_else(|| panic!("home has no row for {code}"));
        let row = &home[start..start + home[start..].find("</tr>").unwrap()];
        let cells: Vec<String> = row
            .split("<td class=\"")
            .skip(1) // the country's heading and its region
            .map(|cell| plain(&format!("<{cell}")).trim().to_string())
            .collect();
        for (i, toggle) in TOGGLES.iter().enumerate() {
            let d = rows
                .iter()
                .find(|d| d["country"] == code && d["toggle"] == *toggle)
                .unwrap();
            let expected = answer_text(
                &d["value"],
                d["limit"].as_str(),
                d["rests_on_absence"] == true,
            );
            assert_eq!(cells.get(i), Some(&expected), "home, {code} {toggle}");
        }
    }
    // The shipped data has both kinds of qualified answer, so this test shows them.
    assert!(
        absences > 0 && limits > 0,
        "{absences} absences, {limits} limits"
    );
}

#[test]
fn no_yes_or_no_contradicts_its_reason_or_its_limit() {
    // What a reason says when the answer it explains is narrower than a plain yes or no.
    let limiting = regex::Regex::new(
        r"(?i)\b(no general|not a general|limited to|only (for|in|to) (the )?[a-z -]*sectors?)\b",
    )
    .unwrap();
    let derivations = json_file("/api/v1/toggles.json");
    let obligations = json_file("/data/obligations.json");
    for d in derivations["data"].as_array().unwrap() {
        let who = format!("{} {}", d["country"], d["toggle"]);
        let Some(phase_id) = d["phase_id"].as_str() else {
            assert!(d["value"].is_null(), "{who}: a value without its phase");
            continue;
        };
        let phase = obligations
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["phase_id"] == phase_id)
            .unwrap_or_else(|| panic!("{who}: phase {phase_id} not in data/obligations.json"));
        let reason = format!(
            "{} {}",
            phase["scope"].as_str().unwrap_or_default(),
            phase["notes"].as_str().unwrap_or_default()
        );
        if d["value"] == true {
            if limiting.is_match(&reason) {
                assert!(
                    d["limit"].is_string(),
                    "{who}: yes, but its reason says `{reason}` and no limit is shown"
                );
            }
            assert_ne!(
                phase["legal_status"], "none",
                "{who}: yes from a `none` phase"
            );
        }
        if d["value"] == false {
            assert!(d["limit"].is_null(), "{who}: a limit on a no");
        }
        if d["rests_on_absence"] == true {
            assert_eq!(d["value"], false, "{who}");
            assert_eq!(phase["basis"], "absence", "{who}");
        }
    }
}

/// The build's strategy is behind one seam: the serial reference plan (one thread, route order,
/// everything kept) and the streaming plans (two threads, batches let go, lists and pages handed over
/// piece by piece) publish the same files, byte for byte.
/// The speed machinery is a feature: with it every profile streams, without it every profile takes
/// the serial plan (and the same publisher and memory calls compile either way).
#[test]
fn every_profile_streams_exactly_when_the_speed_machinery_is_compiled() {
    use locref::build::Profile;
    for profile in [Profile::OneOff, Profile::Session, Profile::InMemory] {
        assert_eq!(
            profile.plan(&SITE).is_serial(),
            !cfg!(feature = "streaming"),
            "{profile:?}"
        );
    }
}

#[test]
fn the_serial_plan_and_the_streaming_plans_publish_the_same_site() {
    use locref::build::{Plan, Profile};
    let dir = crate::common::copy_project();
    let serial = crate::common::built_with(dir.path(), "serial", Plan::serial(&SITE));
    let expected = locref::routes::outputs(
        &locref::workspace::Project::load(dir.path(), &locref::locref_site::SITE)
            .unwrap()
            .db,
    )
    .len();
    assert_eq!(serial.len(), expected, "every output of the route table");
    for (folder, plan) in [
        ("single", Profile::OneOff.plan(&SITE)),
        ("session", Profile::Session.plan(&SITE)),
        ("in-memory", Profile::InMemory.plan(&SITE)),
    ] {
        let streaming = crate::common::built_with(dir.path(), folder, plan);
        crate::common::assert_same_site(&serial, &streaming);
    }
}

/// A page the reader can follow from every footer must have something on it: while
/// `sources/sponsors.json` holds no sponsor, no page or Markdown twin links the sponsors page (which is
/// still built, saying there are none), nor does the search index list it; with a sponsor, the footer and
/// the home page link it again.
#[test]
fn the_sponsors_page_is_linked_only_while_there_is_a_sponsor() {
    let sponsors = json_file("/api/v1/sponsors.json");
    assert_eq!(sponsors["data"], json!([]), "the shipped sources sell none");
    let files = &shipped().files;
    assert!(files.contains_key("/sponsors/index.html"));
    let linking: Vec<&String> = files
        .iter()
        .filter(|(path, _)| path.ends_with(".html") || path.ends_with(".md"))
        // The sponsors page names itself (its twin, in its head): no other page links it.
        .filter(|(path, _)| !path.starts_with("/sponsors/"))
        .filter(|(_, bytes)| {
            let page = text(bytes);
            page.contains("href=\"/sponsors/") || page.contains("](/sponsors/")
        })
        .map(|(path, _)| path)
        .collect();
    assert!(
        linking.is_empty(),
        "pages linking the empty sponsors page: {linking:?}"
    );
    assert!(!text(&files["/search-index.json"]).contains("\"sponsors/\""));

    let project = scratch_project();
    std::fs::write(
        project.path().join("sources/sponsors.json"),
        r#"[{"id": "test-sponsor", "name": "A test sponsor"}]"#,
    )
    .unwrap();
    let run = locref(project.path(), &["build", "--out", "public"], EPOCH);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let with = tree(&project.path().join("public"));
    for page in ["/index.html", "/it/index.html", "/api/index.html"] {
        assert!(
            text(&with[page]).contains("<a href=\"/sponsors/\">Sponsors</a>"),
            "{page} does not link the sponsors page"
        );
    }
    assert!(text(&with["/index.md"]).contains("[Sponsors](/sponsors/index.md)"));
    assert!(text(&with["/search-index.json"]).contains("\"u\":\"sponsors/\""));
}

/// Frictionless reads JSON tables only with its `json` extra: the package says so where a validator
/// looks, in its description and in every JSON resource's.
#[test]
fn the_data_package_says_that_validating_its_json_needs_frictionless_json() {
    let package = json_file("/data/datapackage.json");
    let needs = "pip install 'frictionless[json]'";
    assert!(package["description"].as_str().unwrap().contains(needs));
    let json_resources: Vec<&Value> = package["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["format"] == "json")
        .collect();
    assert!(!json_resources.is_empty());
    for resource in json_resources {
        assert!(
            resource["description"].as_str().unwrap().contains(needs),
            "{}",
            resource["name"]
        );
    }
}
