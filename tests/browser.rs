//! In headless Chromium, driven over WebDriver (plain HTTP + JSON to chromedriver): a page served by
//! `locref serve` reloads by itself after an edit that changes it and shows the new content, shows a failed
//! build's diagnostics in an overlay until the fix, and logs no console error. Skips with a printed reason when no browser is installed, unless
//! `LOCREF_REQUIRE_BROWSER=1` (set by `.ci/run`), in which case a missing browser fails the test.

mod common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use common::served::serve;

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// `None` (with the reason printed) when the browser is missing and not required.
fn browser_available() -> Option<()> {
    if Path::new(CHROMIUM).is_file() && Path::new(CHROMEDRIVER).is_file() {
        return Some(());
    }
    let reason = format!(
        "{CHROMIUM} or {CHROMEDRIVER} is not installed (Debian: apt-get install chromium chromium-driver)"
    );
    if std::env::var("LOCREF_REQUIRE_BROWSER").as_deref() == Ok("1") {
        panic!("LOCREF_REQUIRE_BROWSER=1 but {reason}");
    }
    eprintln!("skipping the browser test: {reason}");
    None
}

/// chromedriver on a free port; killed on drop.
struct Driver {
    child: Child,
    address: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Driver {
    fn start() -> Driver {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let driver = Driver {
            child,
            address: format!("127.0.0.1:{port}"),
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if TcpStream::connect(&driver.address).is_ok()
                && driver.call("GET", "/status", None)["value"]["ready"] == true
            {
                return driver;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("chromedriver did not become ready");
    }

    /// One WebDriver command: an HTTP request with an optional JSON body; returns the JSON reply.
    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let mut stream = TcpStream::connect(&self.address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.address,
            body.len()
        );
        stream.write_all(request.as_bytes()).unwrap();
        // chromedriver may keep the connection open: read the header block, then exactly the body.
        let mut reply = Vec::new();
        let mut buf = [0u8; 65536];
        let split = loop {
            if let Some(at) = reply.windows(4).position(|w| w == b"\r\n\r\n") {
                break at + 4;
            }
            let n = stream.read(&mut buf).unwrap();
            assert!(n > 0, "chromedriver closed the connection mid-reply");
            reply.extend_from_slice(&buf[..n]);
        };
        let head = String::from_utf8_lossy(&reply[..split]).to_lowercase();
        let length = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse::<usize>().ok());
        let payload = match length {
            Some(length) => {
                while reply.len() < split + length {
                    let n = stream.read(&mut buf).unwrap();
                    assert!(n > 0, "chromedriver closed the connection mid-body");
                    reply.extend_from_slice(&buf[..n]);
                }
                reply[split..split + length].to_vec()
            }
            None => {
                stream.read_to_end(&mut reply).unwrap();
                dechunk(&reply[split..])
            }
        };
        serde_json::from_slice(&payload).unwrap_or(Value::Null)
    }
}

fn dechunk(mut bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = bytes.windows(2).position(|w| w == b"\r\n") {
        let size =
            usize::from_str_radix(String::from_utf8_lossy(&bytes[..end]).trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        out.extend_from_slice(&bytes[end + 2..end + 2 + size]);
        bytes = &bytes[end + 2 + size + 2..];
    }
    out
}

#[test]
fn a_served_page_reloads_after_an_edit_shows_build_errors_and_logs_no_console_error() {
    if browser_available().is_none() {
        return;
    }
    let served = serve();
    let driver = Driver::start();
    let profile = tempfile::tempdir().unwrap();
    let capabilities = json!({"capabilities": {"alwaysMatch": {
        "browserName": "chrome",
        "goog:chromeOptions": {
            "binary": CHROMIUM,
            "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
                     "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     format!("--user-data-dir={}", profile.path().display())]
        },
        "goog:loggingPrefs": {"browser": "ALL"}
    }}});
    let session = driver.call("POST", "/session", Some(capabilities));
    let id = session["value"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("no session: {session}"))
        .to_string();
    let script = |code: &str| {
        driver.call(
            "POST",
            &format!("/session/{id}/execute/sync"),
            Some(json!({"script": code, "args": []})),
        )["value"]
            .clone()
    };

    driver.call(
        "POST",
        &format!("/session/{id}/url"),
        Some(json!({"url": format!("http://{}/it/", served.address)})),
    );
    assert_eq!(script("return document.documentElement.lang"), "en");
    assert!(
        script("return document.body.innerText")
            .as_str()
            .unwrap()
            .contains("Italy")
    );
    // Mark this page load; a reload clears the mark. Give the event stream a moment to connect.
    script("window.__locref_mark = 1; return true");
    std::thread::sleep(Duration::from_millis(500));

    let countries = served.project.path().join("sources/tables/countries.csv");
    let text = std::fs::read_to_string(&countries).unwrap();
    std::fs::write(
        &countries,
        text.replacen(
            "it,Currency,EUR (euro)",
            "it,Currency,EUR (euro; edited in the browser test)",
            1,
        ),
    )
    .unwrap();

    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let state = script(
            "return [window.__locref_mark === undefined, document.body.innerText.includes('edited in the browser test')]",
        );
        if state == json!([true, true]) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the page did not reload with the edit: {state}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    // A broken source shows its diagnostics over the page (which keeps the last good build); the fix
    // clears the overlay.
    let vat = served.project.path().join("sources/tables/vat.csv");
    let vat_text = std::fs::read_to_string(&vat).unwrap();
    std::fs::write(&vat, vat_text.replacen("country_code,", "country,", 1)).unwrap();
    let overlay =
        "const o = document.getElementById('__locref_error'); return o ? o.textContent : null";
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let shown = script(overlay);
        if shown
            .as_str()
            .is_some_and(|t| t.contains("sources/tables/vat.csv:1:1"))
        {
            break;
        }
        assert!(Instant::now() < deadline, "no error overlay: {shown}");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        script("return document.body.innerText")
            .as_str()
            .unwrap()
            .contains("edited in the browser test")
    );
    std::fs::write(&vat, vat_text).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !script(overlay).is_null() {
        assert!(
            Instant::now() < deadline,
            "the overlay did not clear after the fix"
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    let logs = driver.call(
        "POST",
        &format!("/session/{id}/se/log"),
        Some(json!({"type": "browser"})),
    );
    let errors: Vec<&Value> = logs["value"]
        .as_array()
        .map(|l| l.iter().filter(|e| e["level"] == "SEVERE").collect())
        .unwrap_or_default();
    assert!(errors.is_empty(), "console errors: {errors:#?}");
    driver.call("DELETE", &format!("/session/{id}"), None);
}
