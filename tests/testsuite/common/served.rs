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
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    stream.write_all(raw.as_bytes()).unwrap();
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).unwrap();
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

pub fn get(address: &str, path: &str) -> Reply {
    request(
        address,
        &format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
    )
}
