//! HTTP/1.1 framing: a request head parsed by httparse from a buffer of at most [`MAX_HEAD`] bytes, and
//! responses that always carry `Content-Length` and `Access-Control-Allow-Origin: *`.

use std::borrow::Cow;

/// The largest request head read (request line and headers); a longer one is answered 431 and never
/// buffered further.
pub(crate) const MAX_HEAD: usize = 16 * 1024;
/// More header lines than this is answered 431 too (httparse needs a fixed array).
const MAX_HEADERS: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    Get,
    Head,
    Other,
}

/// What the server needs of a request head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Request {
    pub method: Method,
    /// The request target as sent (`/api/v1/index.json?x=1`).
    pub target: String,
    /// Every `If-None-Match` line, joined with `, `.
    pub if_none_match: Option<String>,
    /// HTTP/1.1 unless `Connection: close`; HTTP/1.0 only with `Connection: keep-alive`.
    pub keep_alive: bool,
    /// A body follows the head (`Content-Length` above 0, or `Transfer-Encoding`). The server never reads
    /// one, so such a connection is closed after its answer.
    pub has_body: bool,
    /// The length of the head in the buffer.
    pub len: usize,
}

impl Request {
    /// The path part of the target (no query or fragment).
    pub fn path(&self) -> &str {
        path_of(&self.target)
    }
}

/// The path part of a request target.
pub(crate) fn path_of(target: &str) -> &str {
    target.split(['?', '#']).next().unwrap_or("")
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Parsed {
    Complete(Request),
    /// Not a whole head yet, and still under [`MAX_HEAD`].
    Partial,
    /// 431: the head is longer than [`MAX_HEAD`], or has too many lines.
    TooLarge,
    /// 400: not HTTP/1.x.
    Invalid(&'static str),
}

/// Parses the request head at the start of `buf`.
pub fn parse(buf: &[u8]) -> Parsed {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    let len = match request.parse(buf) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) if buf.len() >= MAX_HEAD => return Parsed::TooLarge,
        Ok(httparse::Status::Partial) => return Parsed::Partial,
        Err(httparse::Error::TooManyHeaders) => return Parsed::TooLarge,
        Err(httparse::Error::Version) => return Parsed::Invalid("not an HTTP/1.x request line"),
        Err(_) => return Parsed::Invalid("malformed request head"),
    };
    if len > MAX_HEAD {
        return Parsed::TooLarge;
    }
    let (Some(method), Some(target), Some(version)) =
        (request.method, request.path, request.version)
    else {
        return Parsed::Invalid("malformed request line");
    };
    let mut if_none_match: Option<String> = None;
    let mut connection = (false, false); // (close, keep-alive)
    let mut content_length: Option<u64> = None;
    let mut chunked = false;
    for header in request.headers.iter() {
        let value = String::from_utf8_lossy(header.value);
        let name = header.name;
        if name.eq_ignore_ascii_case("If-None-Match") {
            if_none_match = Some(match if_none_match {
                Some(seen) => format!("{seen}, {value}"),
                None => value.into_owned(),
            });
        } else if name.eq_ignore_ascii_case("Connection") {
            for token in value.split(',').map(str::trim) {
                connection.0 |= token.eq_ignore_ascii_case("close");
                connection.1 |= token.eq_ignore_ascii_case("keep-alive");
            }
        } else if name.eq_ignore_ascii_case("Content-Length") {
            // Two lengths, or one that is not plain digits (`+0`, `-1`, `0x1`, `1 1`), make the body's end
            // unknowable (request smuggling): RFC 9110 allows only 1*DIGIT (httparse has taken the
            // spaces around it off).
            match (content_length, content_length_of(header.value)) {
                (None, Some(n)) => content_length = Some(n),
                _ => return Parsed::Invalid("invalid Content-Length"),
            }
        } else if name.eq_ignore_ascii_case("Transfer-Encoding") {
            chunked = true;
        }
    }
    let method = match method {
        "GET" => Method::Get,
        "HEAD" => Method::Head,
        _ => Method::Other,
    };
    Parsed::Complete(Request {
        method,
        target: target.to_string(),
        if_none_match,
        keep_alive: if version == 1 {
            !connection.0
        } else {
            connection.1 && !connection.0
        },
        has_body: chunked || content_length.is_some_and(|n| n > 0),
        len,
    })
}

/// A `Content-Length` value: digits only, and within a `u64`.
fn content_length_of(value: &[u8]) -> Option<u64> {
    if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(value).ok()?.parse().ok()
}

/// The target of a request head that could not be parsed whole (too long, or still arriving), to choose
/// the form of the error: the second word of its first line, as far as it goes.
pub(crate) fn partial_target(buf: &[u8]) -> Option<&str> {
    let line = buf.split(|b| *b == b'\r' || *b == b'\n').next()?;
    let target = line.split(|b| *b == b' ').nth(1)?;
    std::str::from_utf8(target).ok()
}

/// A response; its body is borrowed from the snapshot being served where it can be.
#[derive(Debug)]
pub(crate) struct Response<'a> {
    pub status: u16,
    pub headers: Vec<(Cow<'static, str>, String)>,
    pub body: Cow<'a, [u8]>,
    /// HEAD and 304: `Content-Length` is the body's, but the body is not sent.
    pub omit_body: bool,
    /// `Connection: close` is sent and the connection closed after this response.
    pub close: bool,
}

impl<'a> Response<'a> {
    pub fn new(status: u16, body: impl Into<Cow<'a, [u8]>>) -> Response<'a> {
        Response {
            status,
            headers: Vec::new(),
            body: body.into(),
            omit_body: false,
            close: false,
        }
    }

    pub fn header(mut self, name: impl Into<Cow<'static, str>>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The body as sent (nothing for HEAD and 304).
    pub(crate) fn sent_body(&self) -> &[u8] {
        if self.omit_body { &[] } else { &self.body }
    }

    /// The head and the body as sent, in one piece.
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = self.head();
        bytes.extend_from_slice(self.sent_body());
        bytes
    }

    /// The status line and headers.
    pub fn head(&self) -> Vec<u8> {
        let mut head = format!(
            "HTTP/1.1 {} {}\r\nContent-Length: {}\r\nAccess-Control-Allow-Origin: *\r\n",
            self.status,
            reason(self.status),
            self.body.len()
        );
        for (name, value) in &self.headers {
            // A value from the site's rules or the request never splits the head.
            if !value.bytes().any(|b| b < b' ' && b != b'\t') {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
        }
        if self.close {
            head.push_str("Connection: close\r\n");
        }
        head.push_str("\r\n");
        head.into_bytes()
    }
}

pub fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        301 => "Moved Permanently",
        304 => "Not Modified",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        431 => "Request Header Fields Too Large",
        503 => "Service Unavailable",
        _ => "Unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn complete(raw: &str) -> Request {
        match parse(raw.as_bytes()) {
            Parsed::Complete(request) => request,
            other => panic!("{raw:?}: {other:?}"),
        }
    }

    #[test]
    fn heads_parse_into_what_the_server_needs() {
        let r = complete(
            "GET /a?b HTTP/1.1\r\nHost: x\r\nIf-None-Match: \"1\"\r\nif-none-match: W/\"2\"\r\n\r\nrest",
        );
        assert_eq!(
            (r.method, r.path(), r.if_none_match.as_deref()),
            (Method::Get, "/a", Some("\"1\", W/\"2\""))
        );
        assert!(r.keep_alive && !r.has_body);
        assert_eq!(r.len, "GET /a?b HTTP/1.1\r\nHost: x\r\nIf-None-Match: \"1\"\r\nif-none-match: W/\"2\"\r\n\r\n".len());
        assert!(!complete("GET / HTTP/1.1\r\nConnection: close\r\n\r\n").keep_alive);
        assert!(!complete("GET / HTTP/1.0\r\n\r\n").keep_alive);
        assert!(complete("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").keep_alive);
        assert!(complete("GET / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc").has_body);
        assert!(complete("GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n").has_body);
        assert!(!complete("POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n").has_body);
        // The spaces around a value are no part of it (RFC 9110, 5.5); leading zeros are digits.
        assert!(!complete("GET / HTTP/1.1\r\nContent-Length:\t 00 \r\n\r\n").has_body);
        assert_eq!(complete("BREW / HTTP/1.1\r\n\r\n").method, Method::Other);
    }

    #[test]
    fn bad_heads_are_invalid_or_too_large() {
        for raw in [
            "GET /\r\n\r\n",
            "\x00\x01garbage\r\n\r\n",
            "GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n",
            "GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            "GET / HTTP/1.1\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n",
            "GET / HTTP/1.1\r\nContent-Length: +0\r\n\r\n",
            "GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
            "GET / HTTP/1.1\r\nContent-Length: 0x1\r\n\r\n",
            "GET / HTTP/1.1\r\nContent-Length: 1 1\r\n\r\n",
            "GET / HTTP/1.1\r\nContent-Length: 0, 0\r\n\r\n",
            "GET / HTTP/1.1\r\nContent-Length:\r\n\r\n",
            "GET / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n",
        ] {
            assert!(
                matches!(parse(raw.as_bytes()), Parsed::Invalid(_)),
                "{raw:?}"
            );
        }
        assert_eq!(parse(b"GET / HTTP/1.1\r\nHost: x\r\n"), Parsed::Partial);
        let long = format!("GET / HTTP/1.1\r\nX: {}", "a".repeat(MAX_HEAD));
        assert_eq!(parse(&long.as_bytes()[..MAX_HEAD]), Parsed::TooLarge);
        let many = format!(
            "GET / HTTP/1.1\r\n{}\r\n",
            "X: y\r\n".repeat(MAX_HEADERS + 1)
        );
        assert_eq!(parse(many.as_bytes()), Parsed::TooLarge);
        assert_eq!(
            partial_target(b"GET /api/v1/x HTTP/1.1\r\nX: "),
            Some("/api/v1/x")
        );
        assert_eq!(partial_target(b"GET /api/v"), Some("/api/v"));
        assert_eq!(partial_target(b"GET"), None);
    }

    #[test]
    fn a_response_head_always_has_length_and_cors_and_never_a_split_line() {
        let response = Response::new(404, &b"gone"[..])
            .header("Location", "/a\r\nSet-Cookie: x")
            .header("Allow", "GET, HEAD");
        let head = String::from_utf8(response.head()).unwrap();
        assert_eq!(
            head,
            "HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\nAccess-Control-Allow-Origin: *\r\nAllow: GET, HEAD\r\n\r\n"
        );
    }

    proptest! {
        #[test]
        fn any_bytes_parse_without_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            match parse(&bytes) {
                Parsed::Complete(request) => prop_assert!(request.len <= bytes.len()),
                Parsed::Partial => prop_assert!(bytes.len() < MAX_HEAD),
                Parsed::TooLarge | Parsed::Invalid(_) => {}
            }
            let _ = partial_target(&bytes);
        }

        #[test]
        fn request_like_bytes_parse_without_panic(
            method in "[A-Z]{1,7}",
            target in "[ -~]{0,40}",
            headers in proptest::collection::vec(("[!-9;-~]{1,12}", "[ -~\t]{0,20}"), 0..8),
            tail in proptest::collection::vec(any::<u8>(), 0..16),
        ) {
            let mut raw = format!("{method} {target} HTTP/1.1\r\n").into_bytes();
            for (name, value) in headers {
                raw.extend(format!("{name}: {value}\r\n").bytes());
            }
            raw.extend(b"\r\n");
            raw.extend(tail);
            if let Parsed::Complete(request) = parse(&raw) {
                prop_assert!(request.len <= raw.len());
            }
        }
    }
}
