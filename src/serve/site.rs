//! What the dev server answers to one request, from one snapshot: as the deployed service does (media
//! types, CORS, weak ETags, JSON errors for the API), plus the live-reload script in served HTML.

use super::http::{Method, Request, Response, path_of};
use super::{LIVE_RELOAD_PATH, Snapshot};
use crate::emit::Stamped;
use crate::resources::ApiError;
use crate::routes::media_type;

/// Where the dev server serves [`RELOAD_SCRIPT`].
pub const RELOAD_SCRIPT_PATH: &str = "/__livereload.js";

/// The live-reload script: reloads the page when a build changed it, and shows the diagnostics of a
/// failed build as an overlay until it is fixed. A file, not inline, so the pages keep working under the
/// site's Content-Security-Policy.
const RELOAD_SCRIPT: &str = include_str!("livereload.js");

/// What is injected before `</body>` of served HTML.
const RELOAD_TAG: &str = r#"<script src="/__livereload.js"></script>"#;

/// Paths whose errors are JSON [`ApiError`] bodies, as the API and data files are read by programs.
fn machine_readable(path: &str) -> bool {
    path.starts_with("/api/") || path.starts_with("/data/")
}

/// An error answer: JSON for the API and data files (the path as far as it is known), text elsewhere.
pub fn error<'a>(status: u16, target: Option<&str>, message: &str) -> Response<'a> {
    if target.is_some_and(|t| machine_readable(path_of(t))) {
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
    } else {
        let text = format!("{status} {}: {message}\n", super::http::reason(status));
        Response::new(status, text.into_bytes()).header("Content-Type", "text/plain; charset=utf-8")
    }
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

fn inject_reload(bytes: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(bytes);
    match text.rfind("</body>") {
        Some(at) => format!("{}{RELOAD_TAG}{}", &text[..at], &text[at..]).into_bytes(),
        None => format!("{text}{RELOAD_TAG}").into_bytes(),
    }
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
pub(crate) fn respond<'s>(request: &Request, snapshot: &'s Snapshot) -> Response<'s> {
    let mut response = answer(request, snapshot);
    if request.method == Method::Head {
        response.omit_body = true;
    }
    // The body that follows the head is never read: the connection cannot carry another request.
    response.close |= request.has_body || !request.keep_alive;
    response
}

fn answer<'s>(request: &Request, snapshot: &'s Snapshot) -> Response<'s> {
    let target = Some(request.target.as_str());
    if request.method == Method::Other {
        return error(405, target, "this server only reads: GET or HEAD")
            .header("Allow", "GET, HEAD");
    }
    if request.has_body {
        return error(400, target, "a GET or HEAD request has no body");
    }
    let raw = request.path();
    if unsafe_path(raw) {
        return error(400, target, "path not allowed");
    }
    let Some(path) = decode(raw) else {
        return error(400, target, "the path is not UTF-8 text");
    };
    if path == RELOAD_SCRIPT_PATH {
        return Response::new(200, RELOAD_SCRIPT.as_bytes())
            .header("Content-Type", "text/javascript; charset=utf-8")
            .header("Cache-Control", "no-cache");
    }
    if path == LIVE_RELOAD_PATH {
        // Reached only by HEAD: the stream itself is GET's.
        return Response::new(200, &b""[..])
            .header("Content-Type", "text/event-stream")
            .header("Cache-Control", "no-store");
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
            return Response::new(301, &b""[..]).header("Location", format!("{raw}/"));
        }
        return match index(&format!("{path}/")) {
            // `/api/v1` answers as `/api/v1/`: with its index.json.
            Some(file) => serve_file(file, request, snapshot),
            None => not_found(&path, snapshot),
        };
    };
    serve_file(file, request, snapshot)
}

fn serve_file<'s>(file: &'s Stamped, request: &Request, snapshot: &Snapshot) -> Response<'s> {
    let etag = format!("\"{}\"", file.etag);
    let media = media_type(&file.path);
    let mut response = if file.path.ends_with(".html") {
        with_page_headers(Response::new(200, inject_reload(&file.bytes())), snapshot)
    } else {
        Response::new(200, file.bytes())
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

fn not_found<'s>(path: &str, snapshot: &'s Snapshot) -> Response<'s> {
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
            return error(404, Some(path), &message);
        }
    }
    if machine_readable(path) {
        let message =
            format!("no such path `{path}`: the endpoints are listed in /api/v1/index.json");
        return error(404, Some(path), &message);
    }
    match snapshot.files.get("/404.html") {
        Some(page) => with_page_headers(Response::new(404, inject_reload(&page.bytes())), snapshot)
            .header("Content-Type", "text/html; charset=utf-8"),
        None => error(404, None, "no such page"),
    }
}

fn with_page_headers<'s>(mut response: Response<'s>, snapshot: &Snapshot) -> Response<'s> {
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

    proptest! {
        /// Whatever a client sends, a parsed request gets an answer, with the CORS header.
        #[test]
        fn any_request_is_answered(target in "\\PC{0,40}", method in "(GET|HEAD|POST)", inm in "\\PC{0,20}") {
            let raw = format!("{method} {target} HTTP/1.1\r\nIf-None-Match: {inm}\r\n\r\n");
            if let Parsed::Complete(request) = parse(raw.as_bytes()) {
                let snapshot = Snapshot::default();
                let response = respond(&request, &snapshot);
                let head = String::from_utf8(response.head()).unwrap();
                prop_assert!(head.contains("\r\nAccess-Control-Allow-Origin: *\r\n"));
            }
        }
    }
}
