//! What the dev server answers to one request, from one snapshot: as the deployed service does (media
//! types, CORS, weak ETags, JSON errors for the API), plus the live-reload script in served HTML. The
//! server's own live-reload paths are no part of the site: they carry no CORS header, and the event
//! stream (which carries the diagnostics of a failed build) is only for pages of this server
//! ([`same_origin`]).

use bytes::Bytes;
use schemars::JsonSchema;
use serde::Serialize;

use super::http::{Method, Request, Response, path_of};
use super::{LIVE_RELOAD_PATH, Snapshot};
use crate::output::media_type;
use crate::publish::Stamped;

/// Where the dev server serves [`RELOAD_SCRIPT`].
pub const RELOAD_SCRIPT_PATH: &str = "/__livereload.js";

/// The live-reload script: reloads the page when a build changed it, and shows the diagnostics of a
/// failed build as an overlay until it is fixed. A file, not inline, so the pages keep working under the
/// site's Content-Security-Policy.
const RELOAD_SCRIPT: &str = include_str!("livereload.js");

/// What is injected before `</body>` of served HTML.
const RELOAD_TAG: &str = r#"<script src="/__livereload.js"></script>"#;

// openapi.json declares this type's schema as its error body, with the doc line below as its description.
/// The body of an error answer under `/api/` (the dev server; a static host gives its own 404).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApiError {
    /// The HTTP status: 404 for an unknown path or id; 400, 405, 408, 431 or 503 for a request the
    /// server does not answer.
    pub status: u16,
    /// The status as a word: `not_found`, `bad_request`, `method_not_allowed`, `request_timeout`,
    /// `request_header_fields_too_large`, `service_unavailable`.
    pub error: String,
    pub message: String,
}

/// Paths whose errors are JSON [`ApiError`] bodies, as the API and data files are read by programs.
fn machine_readable(path: &str) -> bool {
    path.starts_with("/api/") || path.starts_with("/data/")
}

/// An error answer: JSON for the API and data files (the path as far as it is known), text elsewhere.
pub(super) fn error(status: u16, target: Option<&str>, message: &str) -> Response {
    if target.is_some_and(|t| machine_readable(path_of(t))) {
        json_error(status, message)
    } else {
        let text = format!("{status} {}: {message}\n", super::http::reason(status));
        Response::new(status, text.into_bytes()).header("Content-Type", "text/plain; charset=utf-8")
    }
}

/// An error answer with the [`ApiError`] body openapi.json declares.
fn json_error(status: u16, message: &str) -> Response {
    let body = ApiError {
        status,
        error: super::http::reason(status)
            .to_ascii_lowercase()
            .replace(' ', "_"),
        message: message.to_string(),
    };
    let mut bytes = serde_json::to_vec_pretty(&body).expect("error body serializes");
    bytes.push(b'\n');
    Response::new(status, bytes).header("Content-Type", "application/json; charset=utf-8")
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

/// Percent-decodes a path (only after [`unsafe_path`] passed); `None` if not UTF-8 or it decodes to a
/// control character.
fn decode(path: &str) -> Option<String> {
    let decoded = percent_encoding::percent_decode_str(path)
        .decode_utf8()
        .ok()?;
    (!decoded.chars().any(char::is_control)).then(|| decoded.into_owned())
}

/// A served page's segments with [`RELOAD_TAG`] before the last `</body>` (at the end when there is
/// none): the build's buffers are cut around it, not copied.
fn inject_reload(mut segments: Vec<Bytes>) -> Vec<Bytes> {
    const END: &[u8] = b"</body>";
    let tag = Bytes::from_static(RELOAD_TAG.as_bytes());
    // From the last segment back, the first `</body>` found is the last in the page. One that spans two
    // segments is looked for at each boundary, before the segment to its left.
    let mut after: Vec<u8> = Vec::new();
    for i in (0..segments.len()).rev() {
        let segment = segments[i].clone();
        if !after.is_empty() {
            let left = segment.len().saturating_sub(END.len() - 1);
            let mut seam = segment[left..].to_vec();
            seam.extend_from_slice(&after);
            if let Some(at) = memchr::memmem::rfind(&seam, END)
                && left + at < segment.len()
            {
                // The end tag starts in this segment and runs into the next.
                let at = left + at;
                segments.splice(i..=i, [segment.slice(..at), tag, segment.slice(at..)]);
                return segments;
            }
        }
        if let Some(at) = memchr::memmem::rfind(&segment, END) {
            segments.splice(i..=i, [segment.slice(..at), tag, segment.slice(at..)]);
            return segments;
        }
        let mut next = segment[..segment.len().min(END.len() - 1)].to_vec();
        next.extend_from_slice(&after);
        next.truncate(END.len() - 1);
        after = next;
    }
    segments.push(tag);
    segments
}

/// The names the dev server answers for: `localhost`, `127.0.0.1`, `[::1]`, the address it is bound
/// to, and the name given with `--host`; each with no port or the server's own. A page of another
/// name that resolves to this machine (DNS rebinding: `evil.example` made to point at 127.0.0.1) sends
/// its own name as `Host` and `Origin`, so it is refused, and cannot read the site or the live-reload
/// stream's diagnostics of unpublished edits.
#[derive(Debug, Clone)]
pub(super) struct Hosts {
    names: Vec<String>,
    port: u16,
}

impl Hosts {
    /// The names of a server bound to `address`, with `extra` (`--host`, a name or `name:port`).
    pub(super) fn new(address: std::net::SocketAddr, extra: Option<&str>) -> Hosts {
        let bound = match address.ip() {
            std::net::IpAddr::V6(ip) => format!("[{ip}]"),
            ip => ip.to_string(),
        };
        let mut names: Vec<String> = ["localhost", "127.0.0.1", "[::1]"]
            .into_iter()
            .map(String::from)
            .collect();
        names.push(bound);
        if let Some(extra) = extra {
            let (name, _) = split_port(extra.trim());
            names.push(name.to_ascii_lowercase());
        }
        Hosts {
            names,
            port: address.port(),
        }
    }

    /// Whether `authority` (`name`, `name:port`, `[v6]:port`) is one of these names, on no port or
    /// the server's own.
    pub(super) fn allows(&self, authority: &str) -> bool {
        let (name, port) = split_port(authority.trim());
        let name = name.to_ascii_lowercase();
        let name = name.strip_suffix('.').unwrap_or(&name);
        self.names.iter().any(|n| n == name) && port.is_none_or(|p| p == self.port.to_string())
    }

    /// Whether a request may be answered: it names one of these hosts (a request without `Host` is not a
    /// browser's, which always sends one).
    pub(crate) fn allows_request(&self, request: &Request) -> bool {
        request.host.as_deref().is_none_or(|host| self.allows(host))
    }

    /// What a refused request is told.
    pub(crate) fn refusal(&self) -> String {
        format!(
            "this server answers only for {} (on port {}); start it with --host NAME to answer for another name",
            self.names.join(", "),
            self.port
        )
    }
}

/// `name:port` as its name and port (`[::1]:8000` keeps its brackets); the port is `None` when there is
/// none.
fn split_port(authority: &str) -> (&str, Option<&str>) {
    if authority.starts_with('[') {
        return match authority.find(']') {
            Some(end) => match authority[end + 1..].strip_prefix(':') {
                Some(port) => (&authority[..=end], Some(port)),
                None => (&authority[..=end], None),
            },
            None => (authority, None),
        };
    }
    match authority.rsplit_once(':') {
        Some((name, port)) => (name, Some(port)),
        None => (authority, None),
    }
}

/// Whether a request may read the server's own live-reload stream: it names no `Origin` (a request not
/// made by a page, or by a page of this server: a browser names none on a same-origin GET), or an origin
/// of this server, `http://` and one of its [`Hosts`]. A page of any other site is refused (its `Host`
/// is not looked at: a rebound name would pass), and could not read the answer anyway: it carries no
/// CORS header.
pub(crate) fn same_origin(request: &Request, hosts: &Hosts) -> bool {
    let Some(origin) = request.origin.as_deref() else {
        return true;
    };
    origin
        .get(.."http://".len())
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("http://"))
        && hosts.allows(&origin["http://".len()..])
}

/// Whether `If-None-Match` names `etag` (quoted): the weak comparison (`W/"x"` matches `"x"`), over a
/// list of tags or `*`.
pub(crate) fn none_match(if_none_match: &str, etag: &str) -> bool {
    if_none_match
        .split(',')
        .map(str::trim)
        .any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == etag)
}

/// Answers one request (everything but the event stream) from `snapshot`.
pub(crate) fn respond(request: &Request, snapshot: &Snapshot) -> Response {
    let mut response = answer(request, snapshot);
    if request.method == Method::Head {
        response.omit_body = true;
    }
    // The body that follows the head is never read: the connection cannot carry another request.
    response.close |= request.has_body || !request.keep_alive;
    response
}

fn answer(request: &Request, snapshot: &Snapshot) -> Response {
    let raw = request.path();
    // openapi.json declares the JSON error body for every path it describes (`/{code}/changes.xml` too),
    // whatever the request: those and the API's paths are answered with it, pages with text.
    let error = |status: u16, message: &str| {
        if machine_readable(raw) || documented(raw, snapshot) {
            json_error(status, message)
        } else {
            error(status, None, message)
        }
    };
    if request.method == Method::Other {
        return error(405, "this server only reads: GET or HEAD").header("Allow", "GET, HEAD");
    }
    if request.has_body {
        return error(400, "a GET or HEAD request has no body");
    }
    if unsafe_path(raw) {
        return error(400, "path not allowed");
    }
    let Some(path) = decode(raw) else {
        return error(400, "the path is not UTF-8 text");
    };
    if path == RELOAD_SCRIPT_PATH {
        let mut script = Response::new(200, RELOAD_SCRIPT.as_bytes())
            .header("Content-Type", "text/javascript; charset=utf-8")
            .header("Cache-Control", "no-cache");
        script.cors = false;
        return script;
    }
    if path == LIVE_RELOAD_PATH {
        // Reached only by HEAD: the stream itself is GET's.
        let mut head = Response::new(200, Bytes::new())
            .header("Content-Type", "text/event-stream")
            .header("Cache-Control", "no-store");
        head.cors = false;
        return head;
    }
    if snapshot.files.is_empty() {
        // Nothing was built yet: the server binds before the first build, so a browser (or a client)
        // opened at once is told to come back, not that the page does not exist.
        let message = match &snapshot.error {
            None => "the first build is still running; retry in a moment".to_string(),
            Some(diagnostics) => {
                format!(
                    "nothing is built yet: the sources have errors (fix them and retry)\n{diagnostics}"
                )
            }
        };
        return error(503, &message).header("Retry-After", "1");
    }
    let index = |folder: &str| {
        ["index.html", "index.json"]
            .iter()
            .map(|name| format!("{folder}{name}"))
            .find_map(|key| snapshot.files.get(&key))
    };
    let found = if path.ends_with('/') {
        index(&path)
    } else {
        snapshot.files.get(&path)
    };
    let Some(file) = found else {
        if snapshot.files.contains_key(&format!("{path}/index.html")) {
            // `/x` for a folder page: send the browser to `/x/` so relative links resolve.
            return Response::new(301, Bytes::new()).header("Location", format!("{raw}/"));
        }
        return match index(&format!("{path}/")) {
            // `/api/v1` answers as `/api/v1/`: with its index.json.
            Some(file) => serve_file(file, request, snapshot),
            None => not_found(&path, snapshot),
        };
    };
    serve_file(file, request, snapshot)
}

fn serve_file(file: &Stamped, request: &Request, snapshot: &Snapshot) -> Response {
    let etag = format!("\"{}\"", file.etag);
    let media = media_type(&file.path);
    let segments = file.shared_segments();
    let mut response = if file.path.ends_with(".html") {
        with_page_headers(
            Response::of_segments(200, inject_reload(segments)),
            snapshot,
        )
    } else {
        Response::of_segments(200, segments)
    };
    if request
        .if_none_match
        .as_deref()
        .is_some_and(|tags| none_match(tags, &etag))
    {
        // Content-Length stays that of the body a 200 would send (RFC 9110, 8.6); no body follows.
        response.status = 304;
        response.omit_body = true;
        response.headers.clear();
    } else {
        response = response.header("Content-Type", media);
    }
    response
        .header("ETag", etag)
        .header("Cache-Control", "no-cache")
}

/// Whether openapi.json describes `path`: the path of a described detail route (for any id).
fn documented(path: &str, snapshot: &Snapshot) -> bool {
    snapshot
        .detail_routes
        .iter()
        .filter(|route| route.described)
        .any(|route| {
            path.strip_prefix(&route.prefix)
                .and_then(|rest| rest.strip_suffix(&route.suffix))
                .is_some_and(|id| !id.is_empty() && !id.contains('/'))
        })
}

fn not_found(path: &str, snapshot: &Snapshot) -> Response {
    for route in &snapshot.detail_routes {
        if let Some(id) = path
            .strip_prefix(&route.prefix)
            .and_then(|rest| rest.strip_suffix(&route.suffix))
            && !id.contains('/')
        {
            let message = format!(
                "unknown {} `{id}`: ids are lower case, as listed in /api/v1/index.json",
                route.what
            );
            // A documented path (`/{code}/changes.xml` too) answers with the body openapi.json
            // declares; a page, with the site's 404 page.
            if route.described || machine_readable(path) {
                return json_error(404, &message);
            }
            continue;
        }
    }
    if machine_readable(path) {
        let message =
            format!("no such path `{path}`: the endpoints are listed in /api/v1/index.json");
        return error(404, Some(path), &message);
    }
    match snapshot.files.get("/404.html") {
        Some(page) => with_page_headers(
            Response::of_segments(404, inject_reload(page.shared_segments())),
            snapshot,
        )
        .header("Content-Type", "text/html; charset=utf-8"),
        None => error(404, None, "no such page"),
    }
}

fn with_page_headers(mut response: Response, snapshot: &Snapshot) -> Response {
    for (name, value) in &snapshot.page_headers {
        response = response.header(name.clone(), value.clone());
    }
    response
}

#[cfg(test)]
mod tests {
    use super::super::http::{Parsed, parse};
    use super::*;
    use proptest::prelude::*;

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
        assert_eq!(decode("/a%0d%0aSet-Cookie:%20x"), None);
    }

    #[test]
    fn if_none_match_compares_weakly_over_lists() {
        let etag = "\"abc\"";
        for header in [
            "\"abc\"",
            "W/\"abc\"",
            "\"x\", W/\"abc\"",
            "\"x\",\"abc\"",
            "*",
        ] {
            assert!(none_match(header, etag), "{header}");
        }
        for header in ["\"ab\"", "abc", "W/\"abcd\"", ""] {
            assert!(!none_match(header, etag), "{header}");
        }
    }

    fn get(path: &str) -> Request {
        match parse(format!("GET {path} HTTP/1.1\r\n\r\n").as_bytes()) {
            Parsed::Complete(request) => request,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn before_the_first_good_build_every_path_is_unavailable_not_missing() {
        let running = Snapshot::default();
        let failed = Snapshot {
            generation: 1,
            error: Some("sources/facts.csv:3: unknown country `zz`".to_string()),
            ..Snapshot::default()
        };
        for path in [
            "/",
            "/api/openapi.json",
            "/api/v1/countries/it.json",
            "/it/",
        ] {
            for (snapshot, says) in [
                (&running, "still running"),
                (&failed, "unknown country `zz`"),
            ] {
                let response = respond(&get(path), snapshot);
                assert_eq!(response.status, 503, "{path}");
                let body = String::from_utf8_lossy(&concat(&response.body)).into_owned();
                assert!(body.contains(says), "{path}: {body}");
                assert!(
                    response
                        .headers
                        .iter()
                        .any(|(name, value)| name == "Retry-After" && value == "1"),
                    "{path}: {:?}",
                    response.headers
                );
            }
        }
    }

    fn concat(segments: &[Bytes]) -> Vec<u8> {
        segments.concat()
    }

    #[test]
    fn the_reload_tag_goes_before_the_last_end_of_body_wherever_the_segments_are_cut() {
        let page = "<html><body>a</body><p></body>x</html>";
        let expected = page.replacen("</body>x", &format!("{RELOAD_TAG}</body>x"), 1);
        // Every way of cutting the page in three, empty segments included.
        for i in 0..=page.len() {
            for j in i..=page.len() {
                let segments = [&page[..i], &page[i..j], &page[j..]]
                    .map(|s| Bytes::copy_from_slice(s.as_bytes()))
                    .to_vec();
                let injected = concat(&inject_reload(segments));
                assert_eq!(String::from_utf8(injected).unwrap(), expected, "{i} {j}");
            }
        }
        let bare = concat(&inject_reload(vec![Bytes::from("<p>no end")]));
        assert_eq!(bare, format!("<p>no end{RELOAD_TAG}").as_bytes());
        assert_eq!(concat(&inject_reload(Vec::new())), RELOAD_TAG.as_bytes());
    }

    #[test]
    fn only_this_servers_pages_may_have_the_stream() {
        let request = |headers: &str| match parse(
            format!("GET /__livereload HTTP/1.1\r\n{headers}\r\n").as_bytes(),
        ) {
            Parsed::Complete(request) => request,
            other => panic!("{other:?}"),
        };
        let own = &Hosts::new("127.0.0.1:8000".parse().unwrap(), None);
        for allowed in [
            "",
            "Host: 127.0.0.1:8000\r\n",
            "Host: 127.0.0.1:8000\r\nOrigin: http://127.0.0.1:8000\r\n",
            "Origin: http://127.0.0.1:8000\r\n",
            "Host: localhost:8000\r\nOrigin: http://localhost:8000\r\n",
            "Host: LOCALHOST:8000\r\nOrigin: http://localhost:8000\r\n",
        ] {
            assert!(same_origin(&request(allowed), own), "{allowed:?}");
        }
        for refused in [
            "Host: 127.0.0.1:8000\r\nOrigin: http://evil.example\r\n",
            "Host: 127.0.0.1:8000\r\nOrigin: null\r\n",
            "Host: 127.0.0.1:8000\r\nOrigin: https://127.0.0.1:8000\r\n",
            "Host: 127.0.0.1:8000\r\nOrigin: http://127.0.0.1:8001\r\n",
            "Origin: http://127.0.0.1:8000\r\nOrigin: http://evil.example\r\n",
            // DNS rebinding: another name made to resolve to this machine sends itself as both.
            "Host: evil.example:8000\r\nOrigin: http://evil.example:8000\r\n",
        ] {
            assert!(!same_origin(&request(refused), own), "{refused:?}");
        }
        // The requests themselves: only this server's names are answered.
        for (host, answered) in [
            ("Host: 127.0.0.1:8000\r\n", true),
            ("Host: localhost\r\n", true),
            ("Host: localhost.:8000\r\n", true),
            ("Host: [::1]:8000\r\n", true),
            ("", true),
            ("Host: evil.example\r\n", false),
            ("Host: evil.example:8000\r\n", false),
            ("Host: localhost:9000\r\n", false),
            ("Host: localhost.evil.example:8000\r\n", false),
        ] {
            assert_eq!(own.allows_request(&request(host)), answered, "{host:?}");
        }
        let named = Hosts::new("0.0.0.0:8000".parse().unwrap(), Some("devbox.lan"));
        assert!(named.allows("devbox.lan:8000") && named.allows("DEVBOX.LAN"));
        assert!(!named.allows("evil.example:8000"));
    }

    proptest! {
        /// Whatever a client sends, a parsed request gets an answer, with the CORS header unless it is
        /// for the server's own live-reload paths.
        #[test]
        fn any_request_is_answered(target in "\\PC{0,40}", method in "(GET|HEAD|POST)", inm in "\\PC{0,20}") {
            let raw = format!("{method} {target} HTTP/1.1\r\nIf-None-Match: {inm}\r\n\r\n");
            if let Parsed::Complete(request) = parse(raw.as_bytes()) {
                let snapshot = Snapshot::default();
                let response = respond(&request, &snapshot);
                let head = String::from_utf8(response.head()).unwrap();
                let own_path = request.path() == LIVE_RELOAD_PATH || request.path() == RELOAD_SCRIPT_PATH;
                prop_assert_eq!(head.contains("\r\nAccess-Control-Allow-Origin: *\r\n"), !own_path || request.method == Method::Other);
            }
        }
    }
}
