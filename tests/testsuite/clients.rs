//! The site as the clients people use read it, published where a GitHub Pages project site is: under a
//! path of its host (`https://example.github.io/locref/`). A small static server serves a build under
//! that path (as a static host does: a folder's `index.html`, the site's `404.html` for anything else),
//! and the tests follow what a client follows: every link field of every JSON file, every link of
//! `llms.txt` and `llms-full.txt`.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::http::get;
use crate::common::{FIXED_EPOCH, snapshot, text};

/// Where the site is published: a path under its host.
const BASE: &str = "https://example.github.io/locref";
/// That path.
const PREFIX: &str = "/locref";

/// A clean build of the shipped project for `base`, into a temporary folder.
fn build_for(base: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("public");
    let project = Path::new(env!("CARGO_MANIFEST_DIR"));
    let run = crate::common::locref(
        project,
        &[
            "build",
            "--out",
            out.to_str().unwrap(),
            "--clean",
            "--base-url",
            base,
        ],
        FIXED_EPOCH,
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    (dir, out)
}

/// Serves the folder `root` under `prefix` as a static host does, until the test ends: `GET
/// <prefix>/<file>` answers the file, `<prefix>/<folder>/` its `index.html` (`<prefix>` alone too);
/// anything else is 404 with the site's `404.html`. Returns the address.
fn serve_static(root: PathBuf, prefix: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            // The rest of the head.
            loop {
                let mut header = String::new();
                if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
                    break;
                }
            }
            let target = line.split(' ').nth(1).unwrap_or("/");
            let path = target.split(['?', '#']).next().unwrap_or_default();
            let file = path
                .strip_prefix(prefix)
                .filter(|rest| rest.is_empty() || rest.starts_with('/'))
                .filter(|rest| !rest.split('/').any(|s| s == ".."))
                .map(|rest| {
                    let rest = rest.trim_start_matches('/');
                    if rest.is_empty() || rest.ends_with('/') {
                        root.join(rest).join("index.html")
                    } else {
                        root.join(rest)
                    }
                })
                .filter(|file| file.is_file());
            let (status, body) = match file {
                Some(file) => ("200 OK", std::fs::read(file).unwrap()),
                None => (
                    "404 Not Found",
                    std::fs::read(root.join("404.html")).unwrap_or_default(),
                ),
            };
            let head = format!(
                "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body);
        }
    });
    address
}

/// The site's files on the static server: the status of each URL under [`BASE`], fetched once.
struct Site {
    address: String,
    statuses: BTreeMap<String, u16>,
}

impl Site {
    /// The status a client gets for `url` (absolute), fragment aside; a URL on another host is not
    /// the site's and is not fetched (`None`).
    fn status(&mut self, url: &url::Url) -> Option<u16> {
        if url.host_str() != Some("example.github.io") {
            return None;
        }
        let path = url.path().to_string();
        if let Some(status) = self.statuses.get(&path) {
            return Some(*status);
        }
        let status = get(&self.address, &path).status;
        self.statuses.insert(path, status);
        Some(status)
    }
}

/// Whether a member holds one of the fields the SPEC gives as site-relative paths
/// (`/api/v1/countries/<code>.json`): the `api_url` of a country or a filter item (which have a
/// `code`) and of an ERP (which has a `vendor`), an index entry's `path` (with its `count`) and
/// `meta.licence.commercial_licence`. Such a path is under the base URL, joined to it as OpenAPI joins
/// a path to its server, as openapi.json says; every other link must resolve as RFC 3986 says.
fn spec_site_relative(key: &str, holder: &serde_json::Map<String, Value>) -> bool {
    match key {
        "api_url" => holder.contains_key("code") || holder.contains_key("vendor"),
        "path" => holder.contains_key("count") && holder.contains_key("description"),
        "commercial_licence" => holder.contains_key("commercial_contact"),
        _ => false,
    }
}

/// A link found in a JSON file: the member that holds it, whether it is one of the SPEC's
/// site-relative fields, and the link.
struct Link<'a> {
    key: String,
    spec_site_relative: bool,
    link: &'a str,
}

/// Every string of `value` that is a link: a URL (`http:` or `https:`), a path (`/…`), or in the data
/// package a resource's `path` (a file name).
fn links<'a>(value: &'a Value, datapackage: bool, out: &mut Vec<Link<'a>>) {
    match value {
        Value::Array(items) => items.iter().for_each(|v| links(v, datapackage, out)),
        Value::Object(members) => {
            for (key, member) in members {
                let Value::String(s) = member else {
                    links(member, datapackage, out);
                    continue;
                };
                let is_link = s.starts_with("http://")
                    || s.starts_with("https://")
                    || (s.starts_with('/') && !s.starts_with("//") && !s.contains(' '))
                    || (datapackage && key == "path");
                // A templated path of the index (`/api/v1/countries/{code}.json`) names no file.
                if is_link && !s.contains('{') {
                    out.push(Link {
                        key: key.clone(),
                        spec_site_relative: s.starts_with('/') && spec_site_relative(key, members),
                        link: s,
                    });
                }
            }
        }
        _ => {}
    }
}

/// A user of a GitHub Pages project site follows every link field of every JSON file the way the
/// OpenAPI document says it is written: an absolute URL as it is, a relative reference resolved against
/// the URL of the response that holds it (RFC 3986, as `fetch()` and every HTTP library resolve it),
/// and the SPEC's site-relative fields joined to the base URL. Each one is answered 200; in particular
/// each `api_url` of `countries.json` leads to that country.
#[test]
fn every_link_field_of_every_json_file_resolves_on_a_sub_path_site() {
    let (_dir, out) = build_for(BASE);
    let files = snapshot(&out);
    let mut site = Site {
        address: serve_static(out.clone(), PREFIX),
        statuses: BTreeMap::new(),
    };
    let base = url::Url::parse(&format!("{BASE}/")).unwrap();
    let openapi: Value = serde_json::from_slice(&files["api/openapi.json"]).unwrap();
    assert_eq!(
        openapi["servers"][0]["url"], BASE,
        "openapi.json names the base URL the site-relative fields are joined to"
    );
    let mut broken = Vec::new();
    let mut followed = 0;
    let mut joined_fields = BTreeSet::new();
    for (rel, bytes) in &files {
        if !rel.ends_with(".json") {
            continue;
        }
        let json: Value = serde_json::from_slice(bytes).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let response = base.join(rel).unwrap();
        let mut found = Vec::new();
        links(&json, rel.ends_with("datapackage.json"), &mut found);
        for Link {
            key,
            spec_site_relative,
            link,
        } in found
        {
            let target = if spec_site_relative {
                joined_fields.insert(key.clone());
                url::Url::parse(&format!("{BASE}{link}"))
            } else {
                response.join(link)
            };
            let Ok(target) = target else {
                // A source's address on another host that the URL standard refuses is not the site's.
                assert!(
                    !link.starts_with('/') && !link.contains("example.github.io"),
                    "{rel}: {link}"
                );
                continue;
            };
            if let Some(status) = site.status(&target) {
                followed += 1;
                if status != 200 {
                    broken.push(format!("{rel}: {key} = {link} -> {target}: {status}"));
                }
            }
        }
    }
    broken.dedup();
    assert!(
        broken.is_empty(),
        "{} links of the JSON files do not resolve under {BASE}/:\n{}",
        broken.len(),
        broken
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert_eq!(
        joined_fields,
        BTreeSet::from(["api_url", "path", "commercial_licence"].map(String::from)),
        "each of the SPEC's site-relative fields is met"
    );
    // Every country of countries.json, through its api_url, to its own detail.
    let countries: Value = serde_json::from_slice(&files["api/v1/countries.json"]).unwrap();
    let countries = countries["data"].as_array().unwrap();
    assert_eq!(
        countries.len(),
        crate::common::COUNTRY_CODES.split(' ').count()
    );
    for country in countries {
        let api_url = country["api_url"].as_str().unwrap();
        let target = url::Url::parse(&format!("{BASE}{api_url}")).unwrap();
        let reply = get(&site.address, target.path());
        assert_eq!(reply.status, 200, "{api_url}");
        let detail: Value = serde_json::from_slice(&reply.body).unwrap();
        assert_eq!(detail["data"]["code"], country["code"], "{api_url}");
        // And the page it names.
        let page = url::Url::parse(country["url"].as_str().unwrap()).unwrap();
        assert_eq!(site.status(&page), Some(200), "{page}");
    }
    assert!(followed > countries.len(), "{followed} links followed");
}

/// `llms.txt` and `llms-full.txt` are read by programs that resolve their links as a browser does:
/// every link to the site (Markdown `](…)` targets and bare URLs) is answered 200 under the path the
/// site is published at, none names a folder a static host has no page for (the bare `/api/v1/`).
#[test]
fn the_links_of_llms_txt_and_llms_full_txt_resolve_on_a_sub_path_site() {
    let (_dir, out) = build_for(BASE);
    let files = snapshot(&out);
    let mut site = Site {
        address: serve_static(out.clone(), PREFIX),
        statuses: BTreeMap::new(),
    };
    let base = url::Url::parse(&format!("{BASE}/")).unwrap();
    let mut broken = Vec::new();
    let mut followed = 0;
    for rel in ["llms.txt", "llms-full.txt"] {
        let body = text(&files[rel]);
        let response = base.join(rel).unwrap();
        let mut targets: Vec<&str> = body
            .match_indices("](")
            // `\](` is text: the Markdown escape of a bracket that data holds.
            .filter(|(at, _)| !body[..*at].ends_with('\\'))
            .filter_map(|(at, _)| {
                let rest = &body[at + 2..];
                rest.find(')').map(|end| &rest[..end])
            })
            .collect();
        // Bare URLs in the text.
        targets.extend(
            body.split(|c: char| c.is_whitespace() || c == '<' || c == '>' || c == '(' || c == ')')
                .filter(|w| w.starts_with("https://example.github.io/")),
        );
        for target in targets {
            let target = target.trim_end_matches(['.', ',', ';', ':']);
            let Ok(url) = response.join(target) else {
                continue;
            };
            if let Some(status) = site.status(&url) {
                followed += 1;
                if status != 200 {
                    broken.push(format!("{rel}: {target} -> {url}: {status}"));
                }
            }
        }
    }
    broken.sort();
    broken.dedup();
    assert!(
        broken.is_empty(),
        "{} links do not resolve:\n{}",
        broken.len(),
        broken.join("\n")
    );
    assert!(followed > 100, "{followed} links followed");
}
