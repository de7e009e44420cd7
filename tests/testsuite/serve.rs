//! `locref serve` over real HTTP on an ephemeral port: every output answers, the specified 404s, HEAD, 405,
//! 304, media types, CORS, path traversal, live reload of an edit, a broken source keeping the last good
//! build, and concurrent requests during rebuilds; and hostile clients: hundreds of event streams, huge
//! and malformed request heads, none of which costs the server threads or memory; hundreds of idle and
//! slow sockets and clients that never read, none of which keeps another client waiting; and pages of
//! other sites, which cannot read the live-reload stream.
//!
//! Timings are asserted only as bounds far from what the server does (a request answered within 2 s
//! where it takes milliseconds; a timer that fires neither before it is due nor 5 s after).

use std::io::{BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use locref::serve::{HEAD_TIMEOUT, MAX_CONNECTIONS, MAX_STREAMS, WRITE_TIMEOUT};

use crate::common::http::{Reply, get, parse_reply, read_reply, request, request_bytes};
use crate::common::served::{serve, serve_with, threads_and_rss};

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
            "/api/v1/releases/2026.11.23-7.json",
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
        } else if path.ends_with(".ics") {
            "text/calendar; charset=utf-8"
        } else if path.ends_with(".xml") {
            "application/xml; charset=utf-8"
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
        "/api/v1/releases/2099.1.json",
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

/// Every 404 the OpenAPI document declares is answered as it declares it: for each of its paths that
/// takes a parameter, a value outside the parameter's listed values is answered 404 with the JSON error
/// body (`/{code}/changes.xml` and `/compare/{code}.json` too, not only the paths under `/api/`), and
/// the body validates against the schema the document gives for that response. A page's unknown id
/// gets the site's 404 page.
#[test]
fn every_documented_404_is_the_json_error_the_openapi_declares() {
    let served = serve();
    let document: serde_json::Value =
        serde_json::from_slice(&get(&served.address, "/api/openapi.json").body).unwrap();
    let mut checked = 0;
    for (path, item) in document["paths"].as_object().unwrap() {
        let operation = &item["get"];
        let Some(not_found) = operation["responses"].get("404") else {
            continue;
        };
        let reference = not_found["$ref"].as_str().unwrap();
        let name = reference.rsplit('/').next().unwrap();
        let declared = &document["components"]["responses"][name]["content"]["application/json"];
        let mut schema = declared["schema"].clone();
        schema["components"] = document["components"].clone();
        let validator = jsonschema::draft202012::new(&schema).unwrap();
        let parameter = &operation["parameters"][0];
        let listed = parameter["schema"]["enum"].as_array().unwrap();
        let unknown = "xx-unknown";
        assert!(!listed.iter().any(|v| v == unknown));
        let concrete = path.replace(
            &format!("{{{}}}", parameter["name"].as_str().unwrap()),
            unknown,
        );
        let reply = get(&served.address, &concrete);
        assert_eq!(reply.status, 404, "{concrete}");
        assert_eq!(
            reply.header("Content-Type"),
            Some("application/json; charset=utf-8"),
            "{concrete}: {}",
            reply.text()
        );
        let body: serde_json::Value = serde_json::from_slice(&reply.body).unwrap();
        assert!(validator.is_valid(&body), "{concrete}: {body}");
        assert_eq!(body["status"], 404, "{concrete}");
        checked += 1;
    }
    // Every templated route of the route table that openapi.json describes.
    let project = locref::workspace::Project::load(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")),
        &locref::locref_site::SITE,
    )
    .unwrap();
    let templated = locref::routes::detail_routes(&project.db)
        .into_iter()
        .filter(|route| route.described)
        .count();
    assert!(templated >= 4, "{templated}");
    assert_eq!(checked, templated);
    // A page's unknown id: the site's 404 page.
    for page in ["/xx-unknown/", "/xx-unknown/index.html", "/erp/xx-unknown/"] {
        let reply = get(&served.address, page);
        assert_eq!(reply.status, 404, "{page}");
        assert_eq!(
            reply.header("Content-Type"),
            Some("text/html; charset=utf-8"),
            "{page}"
        );
    }
}

#[test]
fn head_405_and_conditional_requests() {
    let served = serve();
    let head = request(
        &served.address,
        "HEAD /api/v1/countries.json HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    let full = get(&served.address, "/api/v1/countries.json");
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    assert_eq!(head.header("Content-Length"), full.header("Content-Length"));
    for method in ["POST", "PUT", "DELETE", "OPTIONS"] {
        let reply = request(
            &served.address,
            &format!(
                "{method} /api/v1/countries.json HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            ),
        );
        assert_eq!(reply.status, 405, "{method}");
        assert_eq!(reply.header("Allow"), Some("GET, HEAD"), "{method}");
    }
    let etag = full.header("ETag").unwrap().to_string();
    let cached = request(
        &served.address,
        &format!(
            "GET /api/v1/countries.json HTTP/1.1\r\nHost: localhost\r\nIf-None-Match: {etag}\r\nConnection: close\r\n\r\n"
        ),
    );
    assert_eq!(cached.status, 304);
    assert!(cached.body.is_empty());
    let stale = request(
        &served.address,
        "GET /api/v1/countries.json HTTP/1.1\r\nHost: localhost\r\nIf-None-Match: \"old\"\r\nConnection: close\r\n\r\n",
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
    // The first build says what is served, and that nothing went to disk.
    let first = format!(
        "first build: {} outputs in ",
        crate::common::shipped_outputs()
    );
    assert!(
        served
            .startup
            .iter()
            .any(|l| l.contains(&first) && l.contains(" ms, served from memory; ")),
        "{:?}",
        served.startup
    );
    let mut events = TcpStream::connect(&served.address).unwrap();
    events
        .write_all(
            b"GET /__livereload HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n",
        )
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
    // Its line says the outputs were updated in memory, not written.
    eventually("the rebuild line", || {
        served.lines.try_iter().any(|l| {
            l.contains("changed sources/tables/partners.csv; ")
                && l.contains(" in memory; ")
                && !l.contains("wrote")
        })
    });

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

/// Opens an event stream and reads its status (and the head, for a refusal).
fn open_stream(address: &str) -> (TcpStream, Reply) {
    open_stream_with(
        address,
        "GET /__livereload HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n",
    )
}

/// Sends `raw` on a new connection and reads the head of the answer (with what came with it), never
/// waiting for the end of a stream.
fn open_stream_with(address: &str, raw: &str) -> (TcpStream, Reply) {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.write_all(raw.as_bytes()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).unwrap();
        assert!(n > 0, "a head: {}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buf[..n]);
    }
    let reply = parse_reply(&seen);
    (stream, reply)
}

/// Whether the server has closed `stream`: what it sent is read and dropped, without waiting.
fn closed_by_server(stream: &mut TcpStream) -> bool {
    stream.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 65536];
    let closed = loop {
        match stream.read(&mut buf) {
            Ok(0) => break true,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break false,
            Err(_) => break true,
        }
    };
    stream.set_nonblocking(false).unwrap();
    closed
}

#[test]
fn hundreds_of_live_reload_clients_share_one_thread_and_the_newest_hold_the_places() {
    let served = serve();
    let pid = served.child.id();
    let (threads_before, rss_before) = threads_and_rss(pid);

    let mut clients: Vec<(TcpStream, Reply)> =
        (0..300).map(|_| open_stream(&served.address)).collect();
    let (threads_during, rss_during) = threads_and_rss(pid);
    // Nobody is refused: a newcomer takes the place of the oldest stream (a browser tab reconnects).
    for (_, reply) in &clients {
        assert_eq!(reply.status, 200);
        assert_eq!(reply.header("Access-Control-Allow-Origin"), None);
    }
    // One thread writes every stream: none is added per client.
    assert!(
        threads_during <= threads_before + 1,
        "threads: {threads_before} before, {threads_during} with 300 clients"
    );
    // At most MAX_STREAMS stay open: the newest.
    eventually("the oldest streams to be closed", || {
        clients
            .iter_mut()
            .take(300 - MAX_STREAMS)
            .all(|(stream, _)| closed_by_server(stream))
    });
    for (stream, _) in &mut clients[300 - MAX_STREAMS..] {
        assert!(!closed_by_server(stream), "the newest streams stay open");
    }
    drop(clients);

    // The places come back once the clients are gone: a new crowd gets every stream again, the first
    // event included, and none of the old ones is left to be closed for them.
    let mut again: Vec<TcpStream> = Vec::new();
    for i in 0..MAX_STREAMS {
        let (mut stream, reply) = open_stream(&served.address);
        assert_eq!(reply.status, 200);
        if i == 0 {
            let mut seen = reply.text();
            assert!(read_until(&mut stream, &mut seen, "retry: 1000"), "{seen}");
            assert!(seen.contains("event: build"), "{seen}");
        }
        again.push(stream);
    }
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        again.iter_mut().all(|stream| !closed_by_server(stream)),
        "the old streams' places came back"
    );
    drop(again);
    let (threads_after, rss_after) = threads_and_rss(pid);
    assert!(
        threads_after <= threads_before + 1,
        "threads: {threads_before} before, {threads_after} after"
    );
    // Before the server was bounded, 1,000 clients cost 3.4 GB, kept after they left.
    for rss in [rss_during, rss_after] {
        assert!(
            rss < rss_before + 64 * 1024,
            "VmRSS {rss_before} KiB before, {rss} KiB with or after the clients"
        );
    }
}

/// Sends a head with one header of `size` bytes (stopping when the server closes), and reads the reply
/// meanwhile.
fn huge_header(address: &str, target: &str, size: usize) -> Reply {
    let stream = TcpStream::connect(address).unwrap();
    let mut writer = stream.try_clone().unwrap();
    let head = format!("GET {target} HTTP/1.1\r\nHost: localhost\r\nX-Big: ");
    let sender = std::thread::spawn(move || {
        let chunk = vec![b'a'; 1 << 20];
        let mut sent = 0;
        if writer.write_all(head.as_bytes()).is_err() {
            return sent;
        }
        while sent < size {
            if writer.write_all(&chunk).is_err() {
                break;
            }
            sent += chunk.len();
        }
        sent
    });
    let mut reader = stream;
    reader
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut bytes = Vec::new();
    let _ = reader.read_to_end(&mut bytes);
    let sent = sender.join().unwrap();
    assert!(
        sent < size,
        "the server stopped reading: {sent} of {size} bytes sent"
    );
    parse_reply(&bytes)
}

#[test]
fn a_huge_request_head_gets_431_and_is_never_buffered() {
    let served = serve();
    let pid = served.child.id();
    let (_, rss_before) = threads_and_rss(pid);
    let size = 300 << 20;
    let reply = huge_header(&served.address, "/api/v1/index.json", size);
    assert_eq!(reply.status, 431);
    assert_eq!(reply.header("Access-Control-Allow-Origin"), Some("*"));
    assert_eq!(reply.header("Connection"), Some("close"));
    assert_eq!(
        reply.header("Content-Type"),
        Some("application/json; charset=utf-8")
    );
    let body: serde_json::Value = serde_json::from_slice(&reply.body).unwrap();
    assert_eq!(body["status"], 431);
    let (_, rss_after) = threads_and_rss(pid);
    assert!(
        rss_after < rss_before + 32 * 1024,
        "VmRSS {rss_before} KiB before a {size}-byte header, {rss_after} KiB after"
    );

    // Outside the API the error is text; too many header lines is 431 too.
    let page = huge_header(&served.address, "/", 64 << 20);
    assert_eq!(
        (page.status, page.header("Content-Type")),
        (431, Some("text/plain; charset=utf-8"))
    );
    let many = format!(
        "GET / HTTP/1.1\r\nHost: localhost\r\n{}\r\n",
        "X-A: b\r\n".repeat(200)
    );
    let reply = request(&served.address, &many);
    assert_eq!(reply.status, 431);
    assert_eq!(reply.header("Access-Control-Allow-Origin"), Some("*"));

    // The server still answers.
    assert_eq!(get(&served.address, "/api/v1/index.json").status, 200);
}

#[test]
fn malformed_requests_are_answered_400_or_closed_never_held() {
    let served = serve();
    for raw in [
        &b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03garbage\r\n\r\n"[..],
        b"\x00\x00\x00\x00\r\n\r\n",
        b"GET /\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\r\nhello",
        b"GET / HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: localhost\r\nContent-Length: many\r\n\r\n",
        b"GET / HTTP/1.1\r\nBad Header\r\n\r\n",
        b"GET /a%0d%0aSet-Cookie:%20x HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    ] {
        let what = String::from_utf8_lossy(raw).into_owned();
        let reply = request_bytes(&served.address, raw);
        assert_eq!(reply.status, 400, "{what:?}");
        assert_eq!(
            reply.header("Access-Control-Allow-Origin"),
            Some("*"),
            "{what:?}"
        );
        assert!(reply.header("Set-Cookie").is_none(), "{what:?}");
    }
    // Under the API the body is JSON, as every API error.
    let reply = request(
        &served.address,
        "GET /api/v1/index.json HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\n{}",
    );
    assert_eq!(
        (reply.status, reply.header("Content-Type")),
        (400, Some("application/json; charset=utf-8"))
    );
    assert_eq!(reply.header("Connection"), Some("close"));
    // A head that never finishes: answered 408 and closed after the read timeout, not held.
    let mut stream = TcpStream::connect(&served.address).unwrap();
    stream
        .write_all(b"GET /it/ HTTP/1.1\r\nHost: localhost\r\n")
        .unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut bytes = Vec::new();
    stream
        .read_to_end(&mut bytes)
        .expect("the server closes it");
    let reply = parse_reply(&bytes);
    assert_eq!(reply.status, 408);
    assert_eq!(reply.header("Access-Control-Allow-Origin"), Some("*"));
}

#[test]
fn a_kept_alive_connection_serves_pipelined_and_later_requests() {
    let served = serve();
    let stream = TcpStream::connect(&served.address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    writer
        .write_all(
            b"GET /api/v1/countries.json HTTP/1.1\r\nHost: localhost\r\n\r\n\
              HEAD /api/v1/countries.json HTTP/1.1\r\nHost: localhost\r\n\r\n\
              GET /api/v1/erps.json HTTP/1.1\r\nHost: localhost\r\n\r\n",
        )
        .unwrap();
    let full = read_reply(&mut reader, false);
    let head = read_reply(&mut reader, true);
    let erps = read_reply(&mut reader, false);
    assert_eq!((full.status, head.status, erps.status), (200, 200, 200));
    assert_eq!(head.header("Content-Length"), full.header("Content-Length"));
    assert_eq!(head.header("ETag"), full.header("ETag"));
    serde_json::from_slice::<serde_json::Value>(&full.body).expect("a whole body");
    serde_json::from_slice::<serde_json::Value>(&erps.body).expect("a whole body");
    // The connection waited for its next request without a worker, and is still served.
    for _ in 0..3 {
        std::thread::sleep(Duration::from_millis(200));
        writer
            .write_all(b"GET /it/ HTTP/1.1\r\nHost: localhost\r\n\r\n")
            .unwrap();
        let page = read_reply(&mut reader, false);
        assert_eq!(page.status, 200);
        assert!(page.text().contains("</html>"));
    }
    writer
        .write_all(
            b"GET /api/v1/index.json HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
        )
        .unwrap();
    let last = read_reply(&mut reader, false);
    assert_eq!(
        (last.status, last.header("Connection")),
        (200, Some("close"))
    );
    let mut rest = Vec::new();
    reader.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty(), "closed after the answer");
}

#[test]
fn weak_and_listed_etags_give_304_and_every_answer_carries_cors() {
    let served = serve();
    let full = get(&served.address, "/api/v1/countries.json");
    let etag = full.header("ETag").unwrap().to_string();
    for if_none_match in [
        etag.clone(),
        format!("W/{etag}"),
        format!("\"old\", W/{etag}"),
        format!("\"old\",{etag}"),
        "*".to_string(),
    ] {
        let reply = request(
            &served.address,
            &format!(
                "GET /api/v1/countries.json HTTP/1.1\r\nHost: localhost\r\nIf-None-Match: {if_none_match}\r\nConnection: close\r\n\r\n"
            ),
        );
        assert_eq!(reply.status, 304, "{if_none_match}");
        assert!(reply.body.is_empty());
        assert_eq!(reply.header("ETag"), Some(etag.as_str()));
        assert_eq!(reply.header("Access-Control-Allow-Origin"), Some("*"));
    }
    let stale = request(
        &served.address,
        "GET /api/v1/countries.json HTTP/1.1\r\nHost: localhost\r\nIf-None-Match: W/\"old\", \"older\"\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(stale.status, 200);
    // CORS on every kind of answer, the errors included.
    let answers = [
        get(&served.address, "/it"),
        get(&served.address, "/no/such/page/"),
        get(&served.address, "/api/v1/countries/xx.json"),
        get(&served.address, "/../x"),
        request(
            &served.address,
            "DELETE / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
        ),
    ];
    let statuses: Vec<u16> = answers.iter().map(|r| r.status).collect();
    assert_eq!(statuses, [301, 404, 404, 400, 405]);
    for reply in &answers {
        assert_eq!(
            reply.header("Access-Control-Allow-Origin"),
            Some("*"),
            "{}",
            reply.status
        );
    }
}

#[test]
fn the_api_answers_as_the_deployed_service_with_json_errors_and_a_root() {
    let served = serve();
    let index = get(&served.address, "/api/v1/index.json");
    for root in ["/api/v1/", "/api/v1"] {
        let reply = get(&served.address, root);
        assert_eq!(reply.status, 200, "{root}");
        assert_eq!(
            reply.header("Content-Type"),
            Some("application/json; charset=utf-8")
        );
        assert_eq!(reply.body, index.body, "{root} is the index");
    }
    let openapi: serde_json::Value =
        serde_json::from_slice(&get(&served.address, "/api/openapi.json").body).unwrap();
    // The bodies are what openapi.json says an error is.
    let mut schema = openapi["components"]["schemas"]["ApiError"].clone();
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema".into();
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    let errors = [
        (get(&served.address, "/api/nothing"), 404, "not_found"),
        (
            get(&served.address, "/api/v1/nothing.json"),
            404,
            "not_found",
        ),
        (get(&served.address, "/api/v2/"), 404, "not_found"),
        (
            get(&served.address, "/api/v1/countries/xx.json"),
            404,
            "not_found",
        ),
        (
            get(&served.address, "/api/%2e%2e/Cargo.toml"),
            400,
            "bad_request",
        ),
        (
            request(
                &served.address,
                "POST /api/v1/index.json HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            ),
            405,
            "method_not_allowed",
        ),
    ];
    for (reply, status, error) in &errors {
        assert_eq!(reply.status, *status, "{}", reply.text());
        assert_eq!(
            reply.header("Content-Type"),
            Some("application/json; charset=utf-8"),
            "{status}"
        );
        let body: serde_json::Value = serde_json::from_slice(&reply.body).unwrap();
        assert_eq!(
            (&body["status"], &body["error"]),
            (&(*status).into(), &(*error).into())
        );
        assert!(validator.is_valid(&body), "{body}");
    }
    // Every documented path refers to the shared error responses, whose body is ApiError.
    for (path, item) in openapi["paths"].as_object().unwrap() {
        let responses = &item["get"]["responses"];
        assert_eq!(
            responses["400"]["$ref"], "#/components/responses/BadRequest",
            "{path}"
        );
        assert_eq!(
            responses["405"]["$ref"], "#/components/responses/MethodNotAllowed",
            "{path}"
        );
    }
    for name in ["BadRequest", "NotFound", "MethodNotAllowed"] {
        assert_eq!(
            openapi["components"]["responses"][name]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/ApiError",
            "{name}"
        );
    }
    // Outside the API and the data files, a 405 stays text.
    let page = request(
        &served.address,
        "PUT /it/ HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(
        (
            page.status,
            page.header("Content-Type"),
            page.header("Allow")
        ),
        (405, Some("text/plain; charset=utf-8"), Some("GET, HEAD"))
    );
}

/// A kept-alive connection that has had one answer (so the server holds it, waiting for the next).
fn kept_alive(address: &str) -> TcpStream {
    let stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    (&stream)
        .write_all(b"HEAD / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    assert_eq!(read_reply(&mut BufReader::new(&stream), true).status, 200);
    stream
}

#[test]
fn a_connection_beyond_the_cap_takes_the_place_of_the_longest_idle_one() {
    let served = serve();
    let (threads_before, _) = threads_and_rss(served.child.id());
    // Every place taken, by kept-alive connections waiting for their next request. The first waits
    // longest: the others come after the server has surely had it back from its worker (a client has
    // its answer a moment before that).
    let mut held = vec![kept_alive(&served.address)];
    std::thread::sleep(Duration::from_millis(500));
    held.extend((1..MAX_CONNECTIONS).map(|_| kept_alive(&served.address)));
    let (threads_during, _) = threads_and_rss(served.child.id());
    assert!(
        threads_during <= threads_before + 1,
        "threads: {threads_before} before, {threads_during} with {MAX_CONNECTIONS} connections"
    );
    // One more is served, not refused; the connection idle longest gave its place up (its client
    // would open another), and the others are still served.
    let reply = get(&served.address, "/api/v1/index.json");
    assert_eq!(reply.status, 200);
    let mut closed = Vec::new();
    eventually("a held connection to be closed", || {
        closed = (0..held.len())
            .filter(|i| closed_by_server(&mut held[*i]))
            .collect();
        !closed.is_empty()
    });
    assert_eq!(closed, [0], "the connections closed");
    let last = held.last().unwrap();
    (&*last)
        .write_all(b"GET /api/v1/index.json HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    let again = read_reply(&mut BufReader::new(last), false);
    assert_eq!((again.status, again.body), (200, reply.body));
}

#[test]
fn a_rebuild_that_panics_is_shown_as_an_internal_error_and_the_server_goes_on() {
    // A bug, injected: any rebuild that reads a changed vat.csv panics.
    let served = serve_with(&[("LOCREF_PANIC_ON", "sources/tables/vat.csv")]);
    let mut events = TcpStream::connect(&served.address).unwrap();
    events
        .write_all(
            b"GET /__livereload HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n",
        )
        .unwrap();
    let mut seen = String::new();
    assert!(
        read_until(&mut events, &mut seen, "\"generation\":1"),
        "{seen}"
    );
    let before = get(&served.address, "/api/v1/countries/fr.json").text();
    let vat = served.project.path().join("sources/tables/vat.csv");
    let text = std::fs::read_to_string(&vat).unwrap();
    std::fs::write(&vat, text.replacen("fr,TVA", "fr,TVA (panic)", 1)).unwrap();
    assert!(
        read_until(&mut events, &mut seen, "\"generation\":2"),
        "{seen}"
    );
    // The overlay gets the internal error; the last good build is still served.
    assert!(
        seen.contains("injected panic on sources/tables/vat.csv"),
        "{seen}"
    );
    assert_eq!(
        get(&served.address, "/api/v1/countries/fr.json").text(),
        before
    );
    // The next edit builds again, with both changes.
    let partners = served.project.path().join("sources/tables/partners.csv");
    let partners_text = std::fs::read_to_string(&partners).unwrap();
    std::fs::write(
        &partners,
        partners_text.replacen("module publisher", "module publisher (edited)", 1),
    )
    .unwrap();
    assert!(
        read_until(&mut events, &mut seen, "\"generation\":3"),
        "{seen}"
    );
    assert!(
        get(&served.address, "/api/v1/countries/fr.json")
            .text()
            .contains("TVA (panic)")
    );
}

/// A client that asks for `path` `times` over on one connection (enough to fill any socket buffer) and
/// never reads an answer.
fn never_reading(address: &str, path: &str, times: usize) -> TcpStream {
    let mut stream = TcpStream::connect(address).unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n");
    stream.write_all(request.repeat(times).as_bytes()).unwrap();
    stream
}

/// The large answer the tests ask never-reading clients for, its size, and how often to ask for it to
/// have more than 16 MB on its way (more than the kernel buffers of a connection hold).
fn large_file(address: &str) -> (&'static str, usize, usize) {
    let path = "/api/v1/changes.json";
    let size = get(address, path).body.len();
    assert!(size > 100_000, "{path} is {size} bytes");
    (path, size, (16 << 20) / size + 1)
}

#[test]
fn a_request_is_answered_while_hundreds_of_idle_and_slow_sockets_and_clients_that_never_read_are_open()
 {
    let served = serve();
    let address = served.address.as_str();
    // Twice as many clients that never read their large answers as the server has workers.
    let (large, _, times) = large_file(address);
    let never_read: Vec<TcpStream> = (0..8)
        .map(|_| never_reading(address, large, times))
        .collect();
    // Past the cap, sockets that send nothing and sockets that send the start of a head and no more.
    let idle: Vec<TcpStream> = (0..600)
        .map(|_| TcpStream::connect(address).unwrap())
        .collect();
    let slow: Vec<TcpStream> = (0..600)
        .map(|_| {
            let mut stream = TcpStream::connect(address).unwrap();
            stream
                .write_all(b"GET /it/ HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
                .unwrap();
            stream
        })
        .collect();
    // Before, 90 % of such requests got a 503, and the others waited 10 s for a worker.
    for path in [
        "/api/v1/index.json",
        "/it/",
        "/api/v1/countries/fr.json",
        "/",
    ]
    .repeat(5)
    {
        let started = Instant::now();
        let reply = get(address, path);
        let took = started.elapsed();
        assert_eq!(reply.status, 200, "{path}: {}", reply.text());
        assert!(took < Duration::from_secs(2), "{path} took {took:?}");
    }
    drop((never_read, idle, slow));
}

#[test]
fn a_dribbled_head_gets_408_at_its_timeout_and_a_client_that_takes_nothing_is_dropped_at_its_timeout()
 {
    let served = serve();
    let address = served.address.clone();
    let (large, size, times) = large_file(&address);
    let started = Instant::now();
    let mut never_read = never_reading(&address, large, times);

    // A head sent a byte every 200 ms: bytes keep coming, but the head is never whole, so its timer
    // (from its first byte) is not put off by them.
    let stream = TcpStream::connect(&address).unwrap();
    let mut writer = stream.try_clone().unwrap();
    let first_byte = Instant::now();
    writer
        .write_all(b"GET /api/v1/index.json HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
        .unwrap();
    let dribble = std::thread::spawn(move || {
        while writer.write_all(b"a").is_ok() {
            std::thread::sleep(Duration::from_millis(200));
        }
    });
    let mut reader = stream;
    reader
        .set_read_timeout(Some(HEAD_TIMEOUT + Duration::from_secs(20)))
        .unwrap();
    let mut bytes = Vec::new();
    reader.read_to_end(&mut bytes).expect("the server ends it");
    let took = first_byte.elapsed();
    let reply = parse_reply(&bytes);
    assert_eq!(reply.status, 408, "{}", reply.text());
    assert_eq!(
        reply.header("Content-Type"),
        Some("application/json; charset=utf-8")
    );
    assert!(
        took >= HEAD_TIMEOUT && took < HEAD_TIMEOUT + Duration::from_secs(5),
        "answered 408 after {took:?}"
    );
    drop(reader);
    dribble.join().unwrap();

    // The client that never read has taken nothing for longer than the write timeout: it was
    // dropped, so reading now gets what the kernel held, then the end, not every answer.
    let wake = started + WRITE_TIMEOUT + Duration::from_secs(3);
    std::thread::sleep(wake.saturating_duration_since(Instant::now()));
    never_read
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut received = Vec::new();
    let end = never_read.read_to_end(&mut received);
    assert!(
        !matches!(&end, Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)),
        "the connection is still open: {end:?} after {} bytes",
        received.len()
    );
    assert!(
        received.len() < size * times,
        "{} of {} bytes: every answer was sent",
        received.len(),
        size * times
    );
    // The server goes on.
    assert_eq!(get(&address, "/api/v1/index.json").status, 200);
}

#[test]
fn live_reload_streams_that_never_read_cannot_keep_a_page_from_its_reload() {
    let served = serve();
    // More streams than there are places, by clients that never read a byte.
    let mut never_read: Vec<TcpStream> = (0..MAX_STREAMS + 36)
        .map(|_| {
            let mut stream = TcpStream::connect(&served.address).unwrap();
            stream
                .write_all(
                    b"GET /__livereload HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n",
                )
                .unwrap();
            stream
        })
        .collect();
    // Each of them had its stream (its first event waits in its socket).
    eventually("every stream to be sent its first event", || {
        never_read.iter().all(|stream| {
            let mut byte = [0u8; 1];
            stream.set_nonblocking(true).unwrap();
            let sent = stream.peek(&mut byte).is_ok();
            stream.set_nonblocking(false).unwrap();
            sent
        })
    });
    // A page opened now gets its stream at once, and its reload after an edit.
    let started = Instant::now();
    let (mut tab, reply) = open_stream(&served.address);
    assert_eq!(reply.status, 200);
    let mut seen = reply.text();
    assert!(
        read_until(&mut tab, &mut seen, "\"generation\":1"),
        "{seen}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "first event after {:?}",
        started.elapsed()
    );
    let partners = served.project.path().join("sources/tables/partners.csv");
    let text = std::fs::read_to_string(&partners).unwrap();
    std::fs::write(
        &partners,
        text.replacen("module publisher", "module publisher (edited)", 1),
    )
    .unwrap();
    assert!(
        read_until(&mut tab, &mut seen, "\"generation\":2"),
        "{seen}"
    );
    // The places of the oldest were taken: MAX_STREAMS are open, the page's among them.
    eventually("the oldest streams to be closed", || {
        never_read
            .iter_mut()
            .map(closed_by_server)
            .filter(|closed| !closed)
            .count()
            == MAX_STREAMS - 1
    });
}

#[test]
fn live_reload_is_for_this_servers_own_pages_and_site_files_keep_cors() {
    let served = serve();
    let address = served.address.as_str();
    let stream_request =
        |origin: &str| format!("GET /__livereload HTTP/1.1\r\nHost: {address}\r\n{origin}\r\n");
    // A page of another site is refused, and could not read the refusal either.
    for origin in ["http://evil.example", "null", "https://attacker.test:8443"] {
        let (_, reply) =
            open_stream_with(address, &stream_request(&format!("Origin: {origin}\r\n")));
        assert_eq!(reply.status, 403, "{origin}");
        assert_eq!(
            reply.header("Access-Control-Allow-Origin"),
            None,
            "{origin}"
        );
        assert_eq!(reply.header("Connection"), Some("close"), "{origin}");
    }
    // The server's own pages get the stream, whether the browser names their origin or not; the
    // stream carries no CORS header.
    for origin in [format!("Origin: http://{address}\r\n"), String::new()] {
        let (mut stream, reply) = open_stream_with(address, &stream_request(&origin));
        assert_eq!(reply.status, 200, "{origin}");
        assert_eq!(
            reply.header("Access-Control-Allow-Origin"),
            None,
            "{origin}"
        );
        let mut seen = reply.text();
        assert!(
            read_until(&mut stream, &mut seen, "event: build"),
            "{origin}: {seen}"
        );
    }
    // Nor do the script and HEAD of the stream; every file of the site does, as the SPEC says.
    let script = get(address, "/__livereload.js");
    let head = request(
        address,
        "HEAD /__livereload HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    for reply in [&script, &head] {
        assert_eq!(reply.status, 200);
        assert_eq!(reply.header("Access-Control-Allow-Origin"), None);
    }
    let api = request(
        address,
        "GET /api/v1/index.json HTTP/1.1\r\nHost: localhost\r\nOrigin: http://evil.example\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(
        (api.status, api.header("Access-Control-Allow-Origin")),
        (200, Some("*"))
    );
}

#[test]
fn a_content_length_of_anything_but_digits_is_400() {
    let served = serve();
    let ask = |length: &str| {
        request(
            &served.address,
            &format!(
                "GET /api/v1/index.json HTTP/1.1\r\nHost: localhost\r\n{length}Connection: close\r\n\r\n"
            ),
        )
    };
    for length in [
        "Content-Length: +0\r\n",
        "Content-Length: -0\r\n",
        "Content-Length: -1\r\n",
        "Content-Length: 0x0\r\n",
        "Content-Length: 0 0\r\n",
        "Content-Length: 0,0\r\n",
        "Content-Length: 0.0\r\n",
        "Content-Length: \r\n",
        "Content-Length: 0\r\nContent-Length: 1\r\n",
        "Content-Length: 0\r\nContent-Length: 0\r\n",
    ] {
        let reply = ask(length);
        assert_eq!(reply.status, 400, "{length:?}");
        let body: serde_json::Value = serde_json::from_slice(&reply.body).unwrap();
        assert_eq!(body["error"], "bad_request", "{length:?}");
    }
    // Digits, with the spaces HTTP allows around them, are a length.
    for length in ["Content-Length: 0\r\n", "Content-Length:\t00 \r\n"] {
        assert_eq!(ask(length).status, 200, "{length:?}");
    }
}

/// DNS rebinding: a page of another name made to resolve to this machine (`evil.example` pointed at
/// 127.0.0.1) sends its own name as `Host` and `Origin`. The server answers only the names it listens
/// on (localhost, 127.0.0.1, its bound address, and `--host` when given), so such a page reads neither
/// the site nor the live-reload stream's diagnostics of unpublished edits.
#[test]
fn only_the_servers_own_host_names_are_answered() {
    let served = crate::common::served::serve_with_args(&[], &["--host", "devbox.lan"]);
    let address = served.address.as_str();
    let port = address.rsplit_once(':').unwrap().1;
    let ask = |host: &str, path: &str, origin: &str| {
        request(
            address,
            &format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n{origin}Connection: close\r\n\r\n"),
        )
    };
    for host in [
        format!("evil.example:{port}"),
        "evil.example".to_string(),
        format!("localhost.evil.example:{port}"),
    ] {
        for path in ["/", "/api/v1/countries.json", "/__livereload"] {
            let reply = ask(&host, path, &format!("Origin: http://{host}\r\n"));
            assert_eq!(reply.status, 421, "{host} {path}");
            assert!(
                !reply.text().contains("Localization Reference"),
                "{host} {path}"
            );
        }
    }
    for host in [
        address.to_string(),
        format!("localhost:{port}"),
        format!("devbox.lan:{port}"),
        "localhost".to_string(),
    ] {
        let reply = ask(&host, "/api/v1/countries.json", "");
        assert_eq!(reply.status, 200, "{host}");
    }
    // The live-reload stream checks Origin against the same names, not against the Host it was sent.
    let (_, reply) = open_stream_with(
        address,
        &format!(
            "GET /__livereload HTTP/1.1\r\nHost: localhost:{port}\r\nOrigin: http://evil.example:{port}\r\n\r\n"
        ),
    );
    assert_eq!(reply.status, 403);
    let (_, reply) = open_stream_with(
        address,
        &format!(
            "GET /__livereload HTTP/1.1\r\nHost: devbox.lan:{port}\r\nOrigin: http://devbox.lan:{port}\r\n\r\n"
        ),
    );
    assert_eq!(reply.status, 200);
}
