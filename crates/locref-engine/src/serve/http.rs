//! HTTP/1.1 framing: a request head parsed by httparse from a buffer of at most [`MAX_HEAD`] bytes,
//! responses that always carry `Content-Length` (and `Access-Control-Allow-Origin: *`, but for the
//! server's own live-reload paths), and an answer on its way out ([`Outgoing`]), written as far as the
//! socket takes it, never waiting for the client.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::io::{self, IoSlice, Write};

use bytes::Bytes;

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
    /// The `Origin` a browser names a page's request with (every such line, joined with `, `, which then
    /// names no origin).
    pub origin: Option<String>,
    /// The `Host` the request was sent to (every such line, joined with `, `).
    pub host: Option<String>,
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
    pub(super) fn path(&self) -> &str {
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
pub(super) fn parse(buf: &[u8]) -> Parsed {
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
    let mut origin: Option<String> = None;
    let mut host: Option<String> = None;
    let mut connection = (false, false); // (close, keep-alive)
    let mut content_length: Option<u64> = None;
    let mut chunked = false;
    for header in request.headers.iter() {
        let value = String::from_utf8_lossy(header.value);
        let name = header.name;
        let join = |seen: Option<String>| match seen {
            Some(seen) => format!("{seen}, {value}"),
            None => value.to_string(),
        };
        if name.eq_ignore_ascii_case("If-None-Match") {
            if_none_match = Some(join(if_none_match));
        } else if name.eq_ignore_ascii_case("Origin") {
            origin = Some(join(origin));
        } else if name.eq_ignore_ascii_case("Host") {
            host = Some(join(host));
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
        origin,
        host,
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

/// A response; its body is shared with the snapshot being served (the build's own buffers), never
/// copied, so an answer waiting for a slow client costs no memory of its own.
#[derive(Debug)]
pub(crate) struct Response {
    pub status: u16,
    pub headers: Vec<(Cow<'static, str>, String)>,
    /// The body, in segments sent one after the other.
    pub body: Vec<Bytes>,
    /// HEAD and 304: `Content-Length` is the body's, but the body is not sent.
    pub omit_body: bool,
    /// `Connection: close` is sent and the connection closed after this response.
    pub close: bool,
    /// `Access-Control-Allow-Origin: *` is sent: on everything but the server's own live-reload paths,
    /// which no other site's page may read.
    pub cors: bool,
}

impl Response {
    pub(super) fn new(status: u16, body: impl Into<Bytes>) -> Response {
        Response::of_segments(status, vec![body.into()])
    }

    pub(super) fn of_segments(status: u16, body: Vec<Bytes>) -> Response {
        Response {
            status,
            headers: Vec::new(),
            body,
            omit_body: false,
            close: false,
            cors: true,
        }
    }

    pub(super) fn header(
        mut self,
        name: impl Into<Cow<'static, str>>,
        value: impl Into<String>,
    ) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The length of the body (what `Content-Length` says, sent or not).
    pub(super) fn body_len(&self) -> usize {
        self.body.iter().map(Bytes::len).sum()
    }

    /// The head and the body as sent, in one piece (for the small answers of the connections thread).
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = self.head();
        if !self.omit_body {
            for segment in &self.body {
                bytes.extend_from_slice(segment);
            }
        }
        bytes
    }

    /// The head and the body as sent, to be written as the socket takes them.
    pub(crate) fn into_outgoing(self) -> Outgoing {
        let mut parts = VecDeque::with_capacity(self.body.len() + 1);
        parts.push_back(Bytes::from(self.head()));
        if !self.omit_body {
            parts.extend(self.body.into_iter().filter(|s| !s.is_empty()));
        }
        Outgoing { parts }
    }

    /// The status line and headers.
    pub(super) fn head(&self) -> Vec<u8> {
        let mut head = format!(
            "HTTP/1.1 {} {}\r\nContent-Length: {}\r\n",
            self.status,
            reason(self.status),
            self.body_len()
        );
        if self.cors {
            head.push_str("Access-Control-Allow-Origin: *\r\n");
        }
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

/// An answer on its way out: what is left of its head and body.
#[derive(Debug, Default)]
pub(crate) struct Outgoing {
    parts: VecDeque<Bytes>,
}

/// How far writing an [`Outgoing`] went.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Sent {
    /// All of it is out.
    All,
    /// The socket takes no more for now; whether it took some this time.
    Blocked { progressed: bool },
}

impl Outgoing {
    /// Writes as much as `socket` (non-blocking) takes now, several segments a call.
    pub(super) fn write_to(&mut self, socket: &mut impl Write) -> io::Result<Sent> {
        let mut progressed = false;
        while !self.parts.is_empty() {
            let slices: Vec<IoSlice> = self
                .parts
                .iter()
                .take(64)
                .map(|p| IoSlice::new(p))
                .collect();
            match socket.write_vectored(&slices) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(mut n) => {
                    progressed = true;
                    while n > 0 {
                        let front = self.parts.front_mut().expect("written bytes were queued");
                        if n < front.len() {
                            *front = front.slice(n..);
                            n = 0;
                        } else {
                            n -= front.len();
                            self.parts.pop_front();
                        }
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    return Ok(Sent::Blocked { progressed });
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(Sent::All)
    }
}

pub(super) fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        301 => "Moved Permanently",
        304 => "Not Modified",
        400 => "Bad Request",
        403 => "Forbidden",
        421 => "Misdirected Request",
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
        let r = complete("GET / HTTP/1.1\r\nHost: 127.0.0.1:8000\r\nOrigin: http://a\r\n\r\n");
        assert_eq!(
            (r.host.as_deref(), r.origin.as_deref()),
            (Some("127.0.0.1:8000"), Some("http://a"))
        );
        let two = complete("GET / HTTP/1.1\r\nOrigin: http://a\r\nOrigin: http://b\r\n\r\n");
        assert_eq!(two.origin.as_deref(), Some("http://a, http://b"));
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
        let mut response = Response::of_segments(404, vec![Bytes::from("go"), Bytes::from("ne")])
            .header("Location", "/a\r\nSet-Cookie: x")
            .header("Allow", "GET, HEAD");
        let head = String::from_utf8(response.head()).unwrap();
        assert_eq!(
            head,
            "HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\nAccess-Control-Allow-Origin: *\r\nAllow: GET, HEAD\r\n\r\n"
        );
        assert!(response.to_bytes().ends_with(b"\r\n\r\ngone"));
        // The live-reload paths' answers go without CORS.
        response.cors = false;
        let head = String::from_utf8(response.head()).unwrap();
        assert!(!head.contains("Access-Control"), "{head}");
    }

    /// A socket that takes at most `per_call` bytes a call, `calls` calls, then would block.
    struct Slow {
        taken: Vec<u8>,
        per_call: usize,
        calls: usize,
    }

    impl Write for Slow {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            if self.calls == 0 {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            self.calls -= 1;
            let n = bytes.len().min(self.per_call);
            self.taken.extend_from_slice(&bytes[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn an_answer_goes_out_as_far_as_the_socket_takes_it_and_goes_on_from_there() {
        let body: Vec<Bytes> = ["abc", "", "defgh", "ij"].map(Bytes::from).to_vec();
        let response = Response::of_segments(200, body);
        let whole = response.to_bytes();
        let mut out = response.into_outgoing();
        let mut socket = Slow {
            taken: Vec::new(),
            per_call: 7,
            calls: 0,
        };
        assert_eq!(
            out.write_to(&mut socket).unwrap(),
            Sent::Blocked { progressed: false }
        );
        socket.calls = 3;
        assert_eq!(
            out.write_to(&mut socket).unwrap(),
            Sent::Blocked { progressed: true }
        );
        assert_eq!(socket.taken, whole[..21]);
        socket.calls = usize::MAX;
        assert_eq!(out.write_to(&mut socket).unwrap(), Sent::All);
        assert_eq!(socket.taken, whole);
        // HEAD: the head only.
        let mut head = Response::new(200, Bytes::from("body"));
        head.omit_body = true;
        let expected = head.head();
        let mut socket = Slow {
            taken: Vec::new(),
            per_call: 1000,
            calls: 1,
        };
        assert_eq!(
            head.into_outgoing().write_to(&mut socket).unwrap(),
            Sent::All
        );
        assert_eq!(socket.taken, expected);
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
