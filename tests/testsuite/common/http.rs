//! The one HTTP/1.1 client of the tests: raw requests to `locref serve` (whose answers the tests inspect
//! byte by byte) and JSON requests to chromedriver.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// A parsed HTTP response.
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

pub fn request(address: &str, raw: &str) -> Reply {
    request_bytes(address, raw.as_bytes())
}

/// Sends `raw` on a new connection and reads until the server closes it.
pub fn request_bytes(address: &str, raw: &[u8]) -> Reply {
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    stream.write_all(raw).unwrap();
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).unwrap();
    parse_reply(&bytes)
}

/// A reply read to the end of the connection.
pub fn parse_reply(bytes: &[u8]) -> Reply {
    let split = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a header block");
    let head = String::from_utf8_lossy(&bytes[..split]).into_owned();
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        // The space after the colon is optional (chromedriver writes none).
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.to_string(), v.trim().to_string()))
        .collect();
    Reply {
        status,
        headers,
        body: bytes[split + 4..].to_vec(),
    }
}

/// Reads one reply from a kept-alive connection: its head, then `Content-Length` bytes (none for a
/// reply to HEAD).
pub fn read_reply(reader: &mut impl BufRead, head: bool) -> Reply {
    let mut text = String::new();
    loop {
        let mut line = String::new();
        assert!(reader.read_line(&mut line).unwrap() > 0, "a whole head");
        if line == "\r\n" {
            break;
        }
        text.push_str(&line);
    }
    let mut reply = parse_reply(format!("{text}\r\n").as_bytes());
    let length: usize = reply
        .header("Content-Length")
        .expect("Content-Length")
        .parse()
        .unwrap();
    if !head && reply.status != 304 {
        reply.body = vec![0; length];
        reader.read_exact(&mut reply.body).unwrap();
    }
    reply
}

/// One request with an optional body on a new connection; the reply is read by its `Content-Length` or
/// its chunks, so a server that keeps the connection open (chromedriver) is fine.
pub fn send(address: &str, method: &str, path: &str, json_body: Option<&str>) -> Reply {
    let body = json_body.unwrap_or_default();
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut reader = BufReader::new(stream);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        assert!(reader.read_line(&mut line).unwrap() > 0, "a whole head");
        if line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    let mut reply = parse_reply(format!("{head}\r\n").as_bytes());
    if let Some(length) = reply.header("Content-Length") {
        reply.body = vec![0; length.parse().unwrap()];
        reader.read_exact(&mut reply.body).unwrap();
    } else if reply
        .header("Transfer-Encoding")
        .is_some_and(|t| t.eq_ignore_ascii_case("chunked"))
    {
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).unwrap();
            let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk).unwrap();
            if size == 0 {
                break;
            }
            reply.body.extend_from_slice(&chunk[..size]);
        }
    } else {
        reader.read_to_end(&mut reply.body).unwrap();
    }
    reply
}

pub fn get(address: &str, path: &str) -> Reply {
    request(
        address,
        &format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"),
    )
}
