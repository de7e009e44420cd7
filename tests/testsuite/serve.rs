//! `locref serve` over real HTTP on an ephemeral port: every output answers, the SPEC's 404s, HEAD, 405,
//! 304, media types, CORS, path traversal, live reload of an edit, a broken source keeping the last good
//! build, and concurrent requests during rebuilds.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::common::served::{get, request, serve};

/// Waits until `f` holds, polling.
fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if f() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("timed out waiting for {what}");
}

#[test]
fn every_output_answers_with_its_media_type_and_cors() {
    let served = serve();
    let index = get(&served.address, "/api/v1/index.json");
    assert_eq!(index.status, 200);
    let index: serde_json::Value = serde_json::from_slice(&index.body).unwrap();
    // Absolute URLs point at the server itself.
    assert_eq!(
        index["meta"]["docs"],
        format!("http://{}/api/", served.address)
    );
    let mut paths: Vec<String> = index["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap().to_string())
        .collect();
    paths.retain(|p| !p.contains('{'));
    paths.extend(
        [
            "/api/v1/countries/it.json",
            "/api/v1/erps/odoo.json",
            "/_headers",
            "/data/LICENSE.txt",
        ]
        .map(String::from),
    );
    for path in &paths {
        let reply = get(&served.address, path);
        assert_eq!(reply.status, 200, "{path}");
        assert_eq!(
            reply.header("Access-Control-Allow-Origin"),
            Some("*"),
            "{path}"
        );
        let expected = if path.ends_with(".json") {
            "application/json; charset=utf-8"
        } else if path.ends_with(".csv") {
            "text/csv; charset=utf-8"
        } else {
            "text/plain; charset=utf-8"
        };
        assert_eq!(reply.header("Content-Type"), Some(expected), "{path}");
        assert_eq!(
            reply
                .header("Content-Length")
                .map(|l| l.parse::<usize>().unwrap()),
            Some(reply.body.len()),
            "{path}"
        );
    }
    // Built files on disk are not touched by serve.
    assert!(!served.project.path().join("public").exists());
}

#[test]
fn unknown_ids_get_a_json_404_and_other_paths_the_404_page() {
    let served = serve();
    for path in [
        "/api/v1/countries/xx.json",
        "/api/v1/countries/IT.json",
        "/api/v1/erps/sap.json",
        "/api/v1/erps/ODOO.json",
    ] {
        let reply = get(&served.address, path);
        assert_eq!(reply.status, 404, "{path}");
        assert_eq!(
            reply.header("Content-Type"),
            Some("application/json; charset=utf-8"),
            "{path}"
        );
        assert_eq!(reply.header("Access-Control-Allow-Origin"), Some("*"));
        let body: serde_json::Value = serde_json::from_slice(&reply.body).unwrap();
        assert_eq!(body["status"], 404);
        assert_eq!(body["error"], "not_found");
    }
    let reply = get(&served.address, "/no/such/page/");
    assert_eq!(reply.status, 404);
    assert_eq!(reply.header("Access-Control-Allow-Origin"), Some("*"));
    assert_eq!(
        reply.header("Content-Type"),
        Some("text/html; charset=utf-8")
    );
    let page = String::from_utf8_lossy(&reply.body);
    assert!(page.contains("<h1>Page not found</h1>"), "{page}");
    assert!(
        page.contains("/__livereload"),
        "the served 404 page gets the reload script"
    );
}

#[test]
fn head_405_and_conditional_requests() {
    let served = serve();
    let head = request(
        &served.address,
        "HEAD /api/v1/countries.json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    );
    let full = get(&served.address, "/api/v1/countries.json");
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    assert_eq!(head.header("Content-Length"), full.header("Content-Length"));
    for method in ["POST", "PUT", "DELETE", "OPTIONS"] {
        let reply = request(
            &served.address,
            &format!(
                "{method} /api/v1/countries.json HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            ),
        );
        assert_eq!(reply.status, 405, "{method}");
        assert_eq!(reply.header("Allow"), Some("GET, HEAD"), "{method}");
    }
    let etag = full.header("ETag").unwrap().to_string();
    let cached = request(
        &served.address,
        &format!(
            "GET /api/v1/countries.json HTTP/1.1\r\nHost: x\r\nIf-None-Match: {etag}\r\nConnection: close\r\n\r\n"
        ),
    );
    assert_eq!(cached.status, 304);
    assert!(cached.body.is_empty());
    let stale = request(
        &served.address,
        "GET /api/v1/countries.json HTTP/1.1\r\nHost: x\r\nIf-None-Match: \"old\"\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(stale.status, 200);
}

#[test]
fn no_path_reaches_outside_the_site() {
    let served = serve();
    for path in [
        "/../Cargo.toml",
        "/../../etc/passwd",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/%2E%2E%2Fsources%2Fnews.json",
        "/api/..%2f..%2fCargo.toml",
        "/..\\sources\\news.json",
        "//etc/passwd",
        "/api/v1/%00.json",
        "/sources/news.json",
        "/rules/site.toml",
    ] {
        let reply = get(&served.address, path);
        assert!(
            reply.status == 400 || reply.status == 404,
            "{path}: {}",
            reply.status
        );
        assert!(
            !reply.text().contains("root:")
                && !reply.text().contains("[package]")
                && !reply.text().contains("base_url"),
            "{path}"
        );
    }
}

/// Reads from an event stream until `needle` appears.
fn read_until(stream: &mut TcpStream, seen: &mut String, needle: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(20);
    stream
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    while Instant::now() < deadline {
        let mut buf = [0u8; 65536];
        if let Ok(n) = stream.read(&mut buf) {
            if n == 0 {
                return false;
            }
            seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
        if seen.contains(needle) {
            return true;
        }
    }
    false
}

#[test]
fn an_edit_reaches_a_connected_client_and_a_broken_source_keeps_the_last_good_build() {
    let served = serve();
    let mut events = TcpStream::connect(&served.address).unwrap();
    events
        .write_all(b"GET /__livereload HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n")
        .unwrap();
    let mut seen = String::new();
    assert!(
        read_until(&mut events, &mut seen, "\"generation\":1"),
        "first event: {seen}"
    );
    assert!(seen.contains("Content-Type: text/event-stream"));

    // Edit a partner's summary: the event arrives and the new content is served.
    let partners = served.project.path().join("sources/tables/partners.csv");
    let text = std::fs::read_to_string(&partners).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let summary = reader.records().next().unwrap().unwrap()[4].to_string();
    std::fs::write(&partners, text.replacen(&summary, "Edited summary.", 1)).unwrap();
    assert!(
        read_until(&mut events, &mut seen, "\"generation\":2"),
        "rebuild event: {seen}"
    );
    assert!(
        get(&served.address, "/api/v1/partners.json")
            .text()
            .contains("Edited summary.")
    );

    // Break a source: the error is reported, the last good content is still served.
    let vat = served.project.path().join("sources/tables/vat.csv");
    let vat_text = std::fs::read_to_string(&vat).unwrap();
    std::fs::write(&vat, vat_text.replacen("country_code,", "country,", 1)).unwrap();
    assert!(
        read_until(&mut events, &mut seen, "\"generation\":3"),
        "error event: {seen}"
    );
    assert!(seen.contains("sources/tables/vat.csv:1:1"), "{seen}");
    eventually("the error printed on the terminal", || {
        served
            .lines
            .try_iter()
            .any(|l| l.contains("sources/tables/vat.csv:1:1"))
    });
    let reply = get(&served.address, "/api/v1/partners.json");
    assert_eq!(reply.status, 200);
    assert!(reply.text().contains("Edited summary."));

    // Fix it: recovery without a restart.
    std::fs::write(&vat, vat_text).unwrap();
    assert!(
        read_until(&mut events, &mut seen, "\"generation\":4"),
        "recovery event: {seen}"
    );
    assert!(
        seen.rsplit("generation\":4")
            .next()
            .unwrap()
            .contains("\"error\":null"),
        "{seen}"
    );
}

#[test]
fn concurrent_requests_during_rebuilds_all_succeed_with_whole_snapshots() {
    let served = serve();
    let countries = served.project.path().join("sources/tables/countries.csv");
    let original = std::fs::read_to_string(&countries).unwrap();
    let address = served.address.clone();
    let clients: Vec<_> = (0..8)
        .map(|_| {
            let address = address.clone();
            std::thread::spawn(move || {
                for _ in 0..25 {
                    let reply = get(&address, "/api/v1/countries/it.json");
                    assert_eq!(reply.status, 200);
                    let body: serde_json::Value =
                        serde_json::from_slice(&reply.body).expect("a whole JSON document");
                    assert_eq!(body["meta"]["count"], 1);
                }
            })
        })
        .collect();
    for i in 0..5 {
        std::fs::write(
            &countries,
            original.replacen(
                "it,Currency,EUR (euro)",
                &format!("it,Currency,EUR (euro, edit {i})"),
                1,
            ),
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(60));
    }
    for client in clients {
        client.join().expect("200 requests succeeded");
    }
}

#[test]
fn pages_and_twins_are_served_with_the_reload_script_only_in_served_html() {
    let served = serve();
    let page = get(&served.address, "/it/");
    assert_eq!(page.status, 200);
    assert_eq!(
        page.header("Content-Type"),
        Some("text/html; charset=utf-8")
    );
    // The reload script is a file, so the page keeps to the site's Content-Security-Policy, which the
    // server sends with every page as `_headers` gives it to a static host.
    assert!(
        page.text()
            .contains(r#"<script src="/__livereload.js"></script></body>"#),
        "served HTML loads the reload script"
    );
    let csp = page.header("Content-Security-Policy").expect("a CSP");
    assert!(csp.starts_with("default-src 'self'"), "{csp}");
    let headers_file = get(&served.address, "/_headers").text();
    assert!(
        headers_file.contains(&format!("  Content-Security-Policy: {csp}\n")),
        "{headers_file}"
    );
    let script = get(&served.address, "/__livereload.js");
    assert_eq!(
        (script.status, script.header("Content-Type")),
        (200, Some("text/javascript; charset=utf-8"))
    );
    assert!(script.text().contains("new EventSource(\"/__livereload\")"));
    let json = get(&served.address, "/api/v1/countries/it.json");
    assert_eq!(json.header("Content-Security-Policy"), None, "pages only");
    let twin = get(&served.address, "/it/index.md");
    assert_eq!(
        twin.header("Content-Type"),
        Some("text/markdown; charset=utf-8")
    );
    assert!(
        !twin.text().contains("__livereload"),
        "only HTML gets the script"
    );
    // A folder without its slash is sent to the slash form, so relative links resolve.
    let bare = get(&served.address, "/it");
    assert_eq!((bare.status, bare.header("Location")), (301, Some("/it/")));

    // The built files never contain it.
    let out = served.project.path().join("built");
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_locref"))
        .args(["build", "--out", "built"])
        .current_dir(served.project.path())
        .output()
        .unwrap();
    assert!(run.status.success());
    let html = std::fs::read_to_string(out.join("it/index.html")).unwrap();
    assert!(html.contains("Italy") && !html.contains("__livereload"));
}

#[test]
fn a_taken_port_is_a_clear_error() {
    let served = serve();
    let port = served.address.rsplit(':').next().unwrap();
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_locref"))
        .args(["serve", "--port", port])
        .current_dir(served.project.path())
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains(&format!("cannot listen on 127.0.0.1:{port}"))
            && stderr.contains("try --port"),
        "{stderr}"
    );
}
