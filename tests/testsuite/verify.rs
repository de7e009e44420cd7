//! `locref verify` through the real binary, against a fixture server on this machine (never the
//! network): each of its five outcomes, `--only` and `--since`, the report it writes, and `sources/` left
//! as it was.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;

use crate::common::{copy_project, locref, snapshot, text};

const EPOCH: &str = "1790000000";

/// One quoted phase per outcome: its phase slug, the path its first source has on the fixture server,
/// and what the report must say of it.
const CASES: [(&str, &str, &str); 5] = [
    ("found", "/page/found", "found"),
    ("changed", "/page/changed", "not-found"),
    ("gone", "/page/gone", "gone"),
    ("moved", "/page/moved", "moved"),
    ("down", "/page/down", "unreachable"),
];

const QUOTE: &str = "From 1 February 2026, large taxpayers must issue invoices through KSeF.";

/// Serves the fixture pages until the test ends: the page that still says the quote (in other markup,
/// entities and spacing), one that changed, one gone, one moved, one failing; no robots.txt. Returns its
/// address and a log of the paths asked for.
fn fixture_server() -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = format!("http://{}", listener.local_addr().unwrap());
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = log.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(64) {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
            loop {
                let mut header = String::new();
                if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
                    break;
                }
            }
            seen.lock().unwrap().push(path.clone());
            let (status, extra, body) = match path.as_str() {
                "/page/found" => (
                    "200 OK",
                    "",
                    "<html><body><p>From 1&nbsp;February 2026, large taxpayers <em>must</em>\n issue invoices through KSeF.</p></body></html>".to_string(),
                ),
                "/page/changed" => (
                    "200 OK",
                    "",
                    "<html><body><p>The date was moved to 2027.</p></body></html>".to_string(),
                ),
                "/page/moved" => ("301 Moved Permanently", "Location: /page/new\r\n", String::new()),
                "/page/down" => ("503 Service Unavailable", "", String::new()),
                _ => ("404 Not Found", "", "not here".to_string()),
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\n{extra}Content-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (address, log)
}

/// A project whose only quoted answers are the five fixture phases of Poland (plus one of Czechia, read
/// earlier, for `--only` and `--since`).
fn fixture_project() -> tempfile::TempDir {
    let project = copy_project();
    let root = project.path();
    let obligations = "sources/tables/obligations.csv";
    let header = std::fs::read_to_string(root.join(obligations))
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    let mut rows = vec![header];
    for (phase, path, _) in CASES {
        rows.push(format!(
            "pl,b2b-e-invoicing,{phase},in-force,2026-02-01,large taxpayers,general,,,https://www.gov.pl{path},search-extract,official,2026-12-01,,\"{QUOTE}\""
        ));
    }
    rows.push(format!(
        "cz,b2b-e-invoicing,main,in-force,2026-02-01,everyone,general,,,https://www.gov.pl/page/found,search-extract,official,2026-11-01,,\"{QUOTE}\""
    ));
    std::fs::write(root.join(obligations), rows.join("\n") + "\n").unwrap();
    // No other table carries a quote here.
    for table in [
        "sources/tables/matrix.csv",
        "sources/tables/reporting_support.csv",
        "sources/tables/regimes.csv",
        "sources/tables/vat.csv",
        "sources/tables/mandates.csv",
    ] {
        let text = std::fs::read_to_string(root.join(table)).unwrap();
        let header = text.lines().next().unwrap();
        std::fs::write(root.join(table), format!("{header}\n")).unwrap();
    }
    project
}

fn report(root: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(root.join("verify-report.json")).unwrap())
        .unwrap()
}

#[test]
fn verify_reports_each_outcome_per_answer_and_never_edits_the_sources() {
    let project = fixture_project();
    let root = project.path();
    let (server, log) = fixture_server();
    let sources_before = snapshot(&root.join("sources"));
    let run = locref(
        root,
        &[
            "verify",
            "--only",
            "pl",
            "--via",
            &server,
            "--pause-ms",
            "0",
            "--timeout",
            "5",
            "--report",
            "verify-report.json",
        ],
        EPOCH,
    );
    let stdout = text(&run.stdout);
    assert_eq!(
        run.status.code(),
        Some(1),
        "a quote not found fails: {stdout}{}",
        text(&run.stderr)
    );
    let report = report(root);
    let answers = report["answers"].as_array().unwrap();
    assert_eq!(
        answers.len(),
        CASES.len(),
        "--only pl leaves Czechia out: {report:#}"
    );
    for (phase, _, outcome) in CASES {
        let answer = answers
            .iter()
            .find(|a| a["answer"] == format!("phase pl-b2b-e-invoicing-{phase}"))
            .unwrap_or_else(|| panic!("no line for {phase}: {report:#}"));
        assert_eq!(answer["outcome"], outcome, "{answer:#}");
        assert!(
            answer["at"]
                .as_str()
                .unwrap()
                .starts_with("sources/tables/obligations.csv:"),
            "{answer:#}"
        );
    }
    for outcome in ["found", "not-found", "gone", "moved", "unreachable"] {
        assert_eq!(report["counts"][outcome], 1, "{report:#}");
    }
    let moved = answers.iter().find(|a| a["outcome"] == "moved").unwrap();
    assert!(
        moved["detail"].as_str().unwrap().contains("/page/new"),
        "{moved:#}"
    );
    // The human summary names every answer that is not found, at its row, and counts them all.
    assert!(stdout.contains("verified 5 quote(s) on 5 page(s): 1 quote found, 1 quote not found (the page changed), 1 page gone, 1 page moved, 1 page unreachable"), "{stdout}");
    assert_eq!(
        stdout
            .lines()
            .filter(|l| l.starts_with("sources/tables/obligations.csv:"))
            .count(),
        4,
        "{stdout}"
    );
    // Each page was asked for once, after the host's robots.txt.
    let asked = log.lock().unwrap().clone();
    assert_eq!(
        asked.first().map(String::as_str),
        Some("/robots.txt"),
        "{asked:?}"
    );
    for (_, path, _) in CASES {
        assert_eq!(asked.iter().filter(|p| *p == path).count(), 1, "{asked:?}");
    }
    // The page's text is kept; the sources are as they were.
    let kept = snapshot(&root.join(".locref-cache/verify"));
    assert!(
        kept.values().any(|t| String::from_utf8_lossy(t)
            .contains("large taxpayers must issue invoices through KSeF")),
        "{:?}",
        kept.keys()
    );
    assert!(
        snapshot(&root.join("sources")) == sources_before,
        "verify edits nothing under sources/"
    );
}

#[test]
fn since_selects_the_answers_read_on_or_after_a_day() {
    let project = fixture_project();
    let root = project.path();
    let (server, _) = fixture_server();
    let run = locref(
        root,
        &[
            "verify",
            "--since",
            "2026-11-01",
            "--via",
            &server,
            "--pause-ms",
            "0",
            "--report",
            "verify-report.json",
        ],
        EPOCH,
    );
    assert_eq!(run.status.code(), Some(1));
    assert_eq!(report(root)["answers"].as_array().unwrap().len(), 6);
    let run = locref(
        root,
        &[
            "verify",
            "--since",
            "2026-12-01",
            "--only",
            "cz",
            "--via",
            &server,
            "--report",
            "verify-report.json",
        ],
        EPOCH,
    );
    assert_eq!(
        run.status.code(),
        Some(0),
        "nothing selected, nothing failed: {}",
        text(&run.stdout)
    );
    assert_eq!(report(root)["answers"].as_array().unwrap().len(), 0);
    let run = locref(root, &["verify", "--since", "yesterday"], EPOCH);
    assert_eq!(run.status.code(), Some(2));
    assert!(text(&run.stderr).contains("--since takes a day, YYYY-MM-DD"));
}
