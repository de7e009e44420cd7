//! A `locref serve` child on an ephemeral port, and a minimal HTTP/1.1 client for talking to it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A running `locref serve` on a copy of the shipped project; killed and reaped on drop.
pub struct Served {
    pub child: Child,
    pub address: String,
    pub project: tempfile::TempDir,
    pub lines: mpsc::Receiver<String>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `locref serve --port 0` on a copy of the shipped project and waits for its address.
pub fn serve() -> Served {
    let project = super::copy_project();
    let child = Command::new(env!("CARGO_BIN_EXE_locref"))
        .args(["serve", "--port", "0"])
        .current_dir(project.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, lines) = mpsc::channel();
    // From here on, Drop kills and reaps the child whatever happens.
    let mut served = Served {
        child,
        address: String::new(),
        project,
        lines,
    };
    let stdout = served.child.stdout.take().unwrap();
    let stderr = served.child.stderr.take().unwrap();
    for stream in [Box::new(stdout) as Box<dyn Read + Send>, Box::new(stderr)] {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let wait = deadline.saturating_duration_since(Instant::now());
        let line = served
            .lines
            .recv_timeout(wait)
            .expect("serve printed its address");
        if let Some(rest) = line.strip_prefix("serving http://") {
            served.address = rest.split('/').next().unwrap().to_string();
            return served;
        }
    }
}

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
        .filter_map(|l| l.split_once(": "))
        .map(|(n, v)| (n.to_string(), v.to_string()))
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

/// The `Threads:` and `VmRSS:` (KiB) of a process, from /proc.
pub fn threads_and_rss(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| -> u64 {
        let line = status.lines().find(|l| l.starts_with(name)).unwrap();
        line[name.len()..]
            .trim()
            .trim_end_matches(" kB")
            .parse()
            .unwrap()
    };
    (field("Threads:"), field("VmRSS:"))
}

pub fn get(address: &str, path: &str) -> Reply {
    request(
        address,
        &format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
    )
}
