//! The dev server: serves the last good build from memory over HTTP (tiny_http), with live reload.
//!
//! One thread owns the salsa database and rebuilds; it publishes each good build as an immutable
//! [`Snapshot`] swapped in whole, so a request never sees half of one build and half of another. Request
//! threads only read the current snapshot. Live reload is a Server-Sent Events stream written on the raw
//! connection (a tiny_http `Response` body is buffered and never flushed between events); the script that
//! listens to it is injected only into the HTML this server sends, never into built files.

use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use tiny_http::{Header, Method, Request, Response, Server, StatusCode};

use std::path::Path;

use crate::emit::Stamped;
use crate::resources::ApiError;
use crate::routes::{Param, media_type};
use crate::session::{Outcome, Session};
use crate::watch::print_report;

/// A detail route whose unknown ids answer with a JSON 404: `/api/v1/countries/` + id + `.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DetailRoute {
    pub prefix: String,
    pub suffix: String,
    /// What the id names, for the error message (`country code`).
    pub what: String,
}

/// An immutable build as served.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// Increases with every published build (good or failed).
    pub generation: u64,
    pub files: HashMap<String, Stamped>,
    pub detail_routes: Vec<DetailRoute>,
    /// Headers sent with every page, as `_headers` gives them to a static host (the CSP).
    pub page_headers: Vec<(String, String)>,
    /// The diagnostics of the last build when it failed (shown as an overlay); the files are then those of
    /// the last good build.
    pub error: Option<String>,
}

/// The state shared by the builder and the request threads.
#[derive(Default)]
pub struct Shared {
    snapshot: Mutex<Arc<Snapshot>>,
    changed: Condvar,
}

impl Shared {
    pub fn new() -> Arc<Shared> {
        Arc::new(Shared::default())
    }

    pub fn current(&self) -> Arc<Snapshot> {
        self.snapshot.lock().expect("snapshot lock").clone()
    }

    /// Publishes a good build (sharing the publisher's bytes, not copying them); open pages are told,
    /// and reload when their own page changed.
    pub fn publish<'a>(
        &self,
        site: impl IntoIterator<Item = &'a Stamped>,
        detail_routes: Vec<DetailRoute>,
        page_headers: Vec<(String, String)>,
    ) {
        let files = site
            .into_iter()
            .map(|f| (f.path.clone(), f.clone()))
            .collect();
        let mut current = self.snapshot.lock().expect("snapshot lock");
        let generation = current.generation + 1;
        *current = Arc::new(Snapshot {
            generation,
            files,
            detail_routes,
            page_headers,
            error: None,
        });
        self.changed.notify_all();
    }

    /// Publishes a failed build: the files stay those of the last good build; the error is shown.
    pub fn publish_error(&self, diagnostics: String) {
        let mut current = self.snapshot.lock().expect("snapshot lock");
        let previous = current.clone();
        *current = Arc::new(Snapshot {
            generation: previous.generation + 1,
            files: previous.files.clone(),
            detail_routes: previous.detail_routes.clone(),
            page_headers: previous.page_headers.clone(),
            error: Some(diagnostics),
        });
        self.changed.notify_all();
    }

    /// Blocks until a snapshot newer than `seen` is published or `timeout` passes.
    fn wait_newer(&self, seen: u64, timeout: Duration) -> Arc<Snapshot> {
        let guard = self.snapshot.lock().expect("snapshot lock");
        let (guard, _) = self
            .changed
            .wait_timeout_while(guard, timeout, |s| s.generation <= seen)
            .expect("snapshot lock");
        guard.clone()
    }
}

/// The path of the live-reload event stream.
pub const LIVE_RELOAD_PATH: &str = "/__livereload";

/// The live-reload script, served at [`RELOAD_SCRIPT_PATH`]: reloads the page when a build changed it,
/// and shows the diagnostics of a failed build as an overlay until it is fixed. A file, not inline, so the
/// pages keep working under the site's Content-Security-Policy.
const RELOAD_SCRIPT: &str = r#"// locref serve: live reload.
(() => {
  // The tag of this page in the last build; a build that changes it reloads the page.
  let page = null;
  let events = null;
  const overlay = (text) => {
    let o = document.getElementById("__locref_error");
    if (!text) { if (o) o.remove(); return; }
    if (!o) {
      o = document.createElement("pre");
      o.id = "__locref_error";
      o.style.cssText = "position:fixed;inset:0;margin:0;padding:2em;background:rgba(20,0,0,.92);color:#fff;" +
        "font:14px/1.5 monospace;white-space:pre-wrap;z-index:2147483647;overflow:auto";
      document.body.appendChild(o);
    }
    o.textContent = "locref: the last build failed; showing the last good build.\n\n" + text;
  };
  const connect = () => {
    events = new EventSource("/__livereload");
    events.addEventListener("build", (e) => {
      const d = JSON.parse(e.data);
      const mine = d.pages[location.pathname] ?? null;
      if (page !== null && mine !== page) { location.reload(); return; }
      page = mine;
      overlay(d.error);
    });
  };
  // A page left for another (or kept in the back/forward cache) closes its stream: a browser opens at
  // most six connections to a host, and streams of pages no longer shown would use them all up.
  addEventListener("pagehide", () => { if (events) { events.close(); events = null; } });
  addEventListener("pageshow", (e) => { if (e.persisted) connect(); });
  connect();
})();
"#;

/// Where the dev server serves [`RELOAD_SCRIPT`].
pub const RELOAD_SCRIPT_PATH: &str = "/__livereload.js";

/// What is injected before `</body>` of served HTML.
const RELOAD_TAG: &str = r#"<script src="/__livereload.js"></script>"#;

fn header(name: &str, value: &str) -> Header {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("valid header")
}

/// Why a request path is refused before any lookup (traversal, odd encodings).
fn unsafe_path(raw: &str) -> bool {
    let lower = raw.to_ascii_lowercase();
    !raw.starts_with('/')
        || raw.contains('\\')
        || raw.contains("//")
        || raw.contains('\0')
        || lower.contains("%00")
        || lower.contains("%5c")
        || lower.contains("%2f")
        || raw.split('/').any(|s| s == ".." || s == ".")
        || lower.contains("%2e")
}

/// Percent-decodes a path (only after [`unsafe_path`] passed); `None` if not valid UTF-8.
fn decode(path: &str) -> Option<String> {
    let decoded = percent_encoding::percent_decode_str(path)
        .decode_utf8()
        .ok()?;
    Some(decoded.into_owned())
}

fn inject_reload(bytes: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(bytes);
    match text.rfind("</body>") {
        Some(at) => format!("{}{RELOAD_TAG}{}", &text[..at], &text[at..]).into_bytes(),
        None => format!("{text}{RELOAD_TAG}").into_bytes(),
    }
}

fn json_error(status: u16, message: String) -> Response<io::Cursor<Vec<u8>>> {
    let body = ApiError {
        status,
        error: if status == 404 {
            "not_found".into()
        } else {
            "bad_request".into()
        },
        message,
    };
    let mut bytes = serde_json::to_vec_pretty(&body).expect("error body serializes");
    bytes.push(b'\n');
    Response::from_data(bytes)
        .with_status_code(StatusCode(status))
        .with_header(header("Content-Type", "application/json; charset=utf-8"))
}

/// Answers one request from `snapshot` (everything but the event stream).
pub fn respond_to(
    method: &Method,
    url: &str,
    if_none_match: Option<&str>,
    snapshot: &Snapshot,
) -> Response<io::Cursor<Vec<u8>>> {
    let response = answer(method, url, if_none_match, snapshot);
    response
        .with_header(header("Access-Control-Allow-Origin", "*"))
        .with_chunked_threshold(usize::MAX)
}

fn answer(
    method: &Method,
    url: &str,
    if_none_match: Option<&str>,
    snapshot: &Snapshot,
) -> Response<io::Cursor<Vec<u8>>> {
    if !matches!(method, Method::Get | Method::Head) {
        return Response::from_string("405 method not allowed: this server only reads\n")
            .with_status_code(StatusCode(405))
            .with_header(header("Allow", "GET, HEAD"));
    }
    let raw = url.split(['?', '#']).next().unwrap_or("");
    if unsafe_path(raw) {
        return Response::from_string("400 bad request: path not allowed\n")
            .with_status_code(StatusCode(400));
    }
    let Some(path) = decode(raw) else {
        return Response::from_string("400 bad request: path is not UTF-8\n")
            .with_status_code(StatusCode(400));
    };
    if path == RELOAD_SCRIPT_PATH {
        return Response::from_string(RELOAD_SCRIPT)
            .with_header(header("Content-Type", "text/javascript; charset=utf-8"))
            .with_header(header("Cache-Control", "no-cache"));
    }
    let key = if path.ends_with('/') {
        format!("{path}index.html")
    } else {
        path.clone()
    };
    let Some(file) = snapshot.files.get(&key) else {
        if snapshot.files.contains_key(&format!("{path}/index.html")) {
            // `/x` for a folder page: send the browser to `/x/` so relative links resolve.
            let location = header("Location", &format!("{path}/"));
            return Response::from_string("")
                .with_status_code(StatusCode(301))
                .with_header(location);
        }
        return not_found(&path, snapshot);
    };
    let etag = format!("\"{}\"", file.etag);
    let common = |r: Response<io::Cursor<Vec<u8>>>| {
        r.with_header(header("ETag", &etag))
            .with_header(header("Cache-Control", "no-cache"))
    };
    if if_none_match
        .is_some_and(|tags| tags.split(',').any(|t| t.trim() == etag || t.trim() == "*"))
    {
        return common(Response::from_data(Vec::new()).with_status_code(StatusCode(304)));
    }
    let response = if key.ends_with(".html") {
        with_page_headers(Response::from_data(inject_reload(&file.bytes())), snapshot)
    } else {
        Response::from_data(file.bytes().into_owned())
    };
    common(response.with_header(header("Content-Type", media_type(&key))))
}

fn not_found(path: &str, snapshot: &Snapshot) -> Response<io::Cursor<Vec<u8>>> {
    for route in &snapshot.detail_routes {
        if let Some(id) = path
            .strip_prefix(&route.prefix)
            .and_then(|rest| rest.strip_suffix(&route.suffix))
            && !id.contains('/')
        {
            return json_error(
                404,
                format!(
                    "unknown {} `{id}`: ids are lower case, as listed in /api/v1/index.json",
                    route.what
                ),
            );
        }
    }
    let page = snapshot.files.get("/404.html");
    let body = page.map_or_else(
        || b"404 not found\n".to_vec(),
        |p| inject_reload(&p.bytes()),
    );
    let media = if page.is_some() {
        "text/html; charset=utf-8"
    } else {
        "text/plain; charset=utf-8"
    };
    with_page_headers(Response::from_data(body), snapshot)
        .with_status_code(StatusCode(404))
        .with_header(header("Content-Type", media))
}

fn with_page_headers(
    mut response: Response<io::Cursor<Vec<u8>>>,
    snapshot: &Snapshot,
) -> Response<io::Cursor<Vec<u8>>> {
    for (name, value) in &snapshot.page_headers {
        response = response.with_header(header(name, value));
    }
    response
}

/// The `build` event: the generation, a tag per HTML page (so a tab reloads only when its page changed)
/// and the error of a failed build. A page's tag covers its own bytes and the assets every page loads
/// (`/assets/`), so an edit of the stylesheet reloads the open tabs too.
fn build_event(snapshot: &Snapshot) -> String {
    let mut assets: Vec<(&String, &str)> = snapshot
        .files
        .iter()
        .filter(|(path, _)| path.starts_with("/assets/"))
        .map(|(path, file)| (path, file.etag.as_str()))
        .collect();
    assets.sort();
    let assets = blake3::hash(format!("{assets:?}").as_bytes()).to_hex();
    let pages: serde_json::Map<String, serde_json::Value> = snapshot
        .files
        .iter()
        .filter(|(path, _)| path.ends_with(".html"))
        .flat_map(|(path, file)| {
            let tag = serde_json::Value::String(format!("{}-{}", file.etag, &assets[..16]));
            let folder = path
                .strip_suffix("index.html")
                .map(|dir| (dir.to_string(), tag.clone()));
            std::iter::once((path.clone(), tag)).chain(folder)
        })
        .collect();
    let data = serde_json::json!({"generation": snapshot.generation, "pages": pages, "error": snapshot.error});
    format!("event: build\ndata: {data}\n\n")
}

/// Streams `build` events on the raw connection until the client goes away.
fn serve_events(request: Request, shared: &Shared) -> io::Result<()> {
    let mut snapshot = shared.current();
    let mut writer = request.into_writer();
    writer.write_all(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n\
          Access-Control-Allow-Origin: *\r\nTransfer-Encoding: chunked\r\n\r\n",
    )?;
    let mut send = |message: String| -> io::Result<()> {
        write!(writer, "{:x}\r\n{message}\r\n", message.len())?;
        writer.flush()
    };
    send(format!("retry: 1000\n{}", build_event(&snapshot)))?;
    loop {
        let next = shared.wait_newer(snapshot.generation, Duration::from_secs(15));
        if next.generation == snapshot.generation {
            send(": keep-alive\n\n".into())?; // a closed client surfaces as a write error
        } else {
            snapshot = next;
            send(build_event(&snapshot))?;
        }
    }
}

/// A running dev server.
pub struct DevServer {
    pub server: Arc<Server>,
    pub address: String,
}

/// Binds `bind:port` (port 0 picks a free one) and serves `shared` with `workers` threads; event streams
/// get a thread each, which ends when the client disconnects.
pub fn start(bind: &str, port: u16, shared: Arc<Shared>, workers: usize) -> io::Result<DevServer> {
    let cannot_listen = |e: io::Error| {
        let hint = if e.kind() == io::ErrorKind::AddrInUse {
            format!("; try --port {}", port.saturating_add(1))
        } else {
            String::new()
        };
        io::Error::new(
            e.kind(),
            format!("cannot listen on {bind}:{port}: {e}{hint}"),
        )
    };
    let listener = std::net::TcpListener::bind((bind, port)).map_err(cannot_listen)?;
    // Without TCP_NODELAY, every response after the first on a kept-alive connection waits for the
    // browser's delayed ACK (40 ms on Linux) before its last segment leaves: tiny_http writes the head and
    // the body separately. Accepted connections inherit the option from the listener.
    socket2::SockRef::from(&listener)
        .set_tcp_nodelay(true)
        .map_err(cannot_listen)?;
    let server = Server::from_listener(listener, None)
        .map_err(|e| cannot_listen(io::Error::other(e.to_string())))?;
    let server = Arc::new(server);
    let address = server
        .server_addr()
        .to_ip()
        .map(|a| a.to_string())
        .unwrap_or_else(|| format!("{bind}:{port}"));
    for _ in 0..workers.max(1) {
        let (server, shared) = (server.clone(), shared.clone());
        std::thread::spawn(move || {
            while let Ok(request) = server.recv() {
                if request.url().split('?').next() == Some(LIVE_RELOAD_PATH)
                    && *request.method() == Method::Get
                {
                    let shared = shared.clone();
                    std::thread::spawn(move || {
                        let _ = serve_events(request, &shared);
                    });
                    continue;
                }
                let snapshot = shared.current();
                let if_none_match = request
                    .headers()
                    .iter()
                    .find(|h| h.field.equiv("If-None-Match"))
                    .map(|h| h.value.as_str().to_string());
                let response = respond_to(
                    request.method(),
                    request.url(),
                    if_none_match.as_deref(),
                    &snapshot,
                );
                let _ = request.respond(response);
            }
        });
    }
    Ok(DevServer { server, address })
}

/// The detail routes of the route table (`{code}` and `{id}` placeholders), whose unknown ids get a JSON 404.
pub fn detail_routes(db: &dyn salsa::Database) -> Vec<DetailRoute> {
    crate::routes::valid_routes(db)
        .iter()
        .filter_map(|(_, rule, renderer)| {
            let (placeholder, what) = match renderer.param() {
                Param::Country => ("{code}", "country code"),
                Param::Erp => ("{id}", "ERP id"),
                _ => return None,
            };
            let (prefix, suffix) = rule.path.split_once(placeholder)?;
            Some(DetailRoute {
                prefix: prefix.into(),
                suffix: suffix.into(),
                what: what.into(),
            })
        })
        .collect()
}

/// The headers every page is sent with (the site's Content-Security-Policy).
pub fn page_headers(db: &dyn salsa::Database) -> Vec<(String, String)> {
    let site = &crate::parse::rules::site_rules(db).value;
    site.content_security_policy
        .iter()
        .map(|csp| ("Content-Security-Policy".to_string(), csp.clone()))
        .collect()
}

/// Runs `locref serve`: binds the server, then watches the project and publishes every build from memory
/// (with the server's own address as base URL; nothing is written to disk).
pub fn run(root: &Path, bind: &str, port: u16) -> io::Result<()> {
    let root = root.canonicalize()?;
    let shared = Shared::new();
    let server = start(bind, port, shared.clone(), 4)?;
    let base = format!("http://{}", server.address);
    let mut announced = false;
    crate::watch::run_with(
        &root,
        |root| {
            let mut session = Session::in_memory(root)?;
            session.project.set_base_url(Some(base.clone()));
            Ok(session)
        },
        |session, report| {
            print_report(report);
            match &report.outcome {
                Outcome::Built(_) => {
                    let db = &session.project.db;
                    shared.publish(session.site().values(), detail_routes(db), page_headers(db))
                }
                Outcome::Invalid(diagnostics) => {
                    let text: Vec<String> = diagnostics.iter().map(ToString::to_string).collect();
                    shared.publish_error(text.join("\n"));
                }
                Outcome::IoError(message) | Outcome::Internal(message) => {
                    shared.publish_error(message.clone())
                }
                Outcome::Unchanged => {}
            }
            if !announced {
                announced = true;
                println!("serving {base}/ (live reload on)");
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traversal_and_odd_encodings_are_refused() {
        for raw in [
            "/../Cargo.toml",
            "/api/../../etc/passwd",
            "/%2e%2e/x",
            "/%2E%2e%2fx",
            "/a\\b",
            "//etc/passwd",
            "/a%00b",
            "/./x",
            "x",
        ] {
            assert!(unsafe_path(raw), "{raw}");
        }
        for raw in ["/", "/api/v1/index.json", "/it/", "/data/matrix.csv"] {
            assert!(!unsafe_path(raw), "{raw}");
        }
        assert_eq!(decode("/a%20b").as_deref(), Some("/a b"));
    }
}
